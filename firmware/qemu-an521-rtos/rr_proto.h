/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rr_proto.h - the messages of the an521 RTOS <-> RTOS test (an521_rtos.toml),
 * shared by the FreeRTOS image (CPU0), the ThreadX image (CPU1) and the
 * Linux side (tests/qemu/test_qemu_an521_rtos.cpp):
 *
 *   data      fw_echo_hdr {seq, len, crc} + len payload bytes (4..48, from
 *             seq), each byte a function of (seq, the sender's tag, index);
 *             crc = CRC-32 of the payload. A receiver checks that seq is the
 *             next one expected, that len is seq's, and the CRC.
 *   stop      seq RR_STOP: the sender is done; its payload is an rr_report
 *             (what it received, its SMEM lock rounds)
 *   answer    to a stop: an rr_report of the answering side
 *
 * The SMEM "state" words: [0] the counter (lock held), [1] the mark of the
 * holder, checked before it releases.
 */
#ifndef RR_PROTO_H
#define RR_PROTO_H

#include <stdint.h>
#include <string.h>

#include "mdcom_fw/proto.h" /* fw_echo_hdr, fw_crc32 */

#define RR_STOP 0xffffffffu
#define RR_MSG_MAX 64u       /* = the FIFOs' block size */
#define RR_PING_COUNT 2000u  /* CPU0 -> CPU1 -> CPU0 round trips under load */
#define RR_RTT_COUNT 1000u   /* and timed ones after */
#define RR_LINUX_COUNT 300u  /* Linux -> CPU0 -> Linux round trips */
#define RR_LOCK_ROUNDS 2000u /* SMEM lock rounds per side */
#define RR_TAG_CPU0 0x41u    /* 'A' */
#define RR_TAG_CPU1 0x42u    /* 'B' */
#define RR_TAG_LINUX 0x4cu   /* 'L' */

typedef struct rr_report {
    uint32_t received; /* data messages accepted (in order, good CRC) */
    uint32_t bad;      /* data messages out of order, of a wrong length or CRC */
    uint32_t lock_rounds;
    uint32_t lock_bad; /* rounds that found the counter or the mark disturbed */
    uint32_t woken;    /* the port's sleeps ended by a ring or the doorbell interrupt */
    uint32_t irqs;     /* MHU0 interrupts taken by this core (0 on Linux) */
} rr_report;

static inline uint32_t rr_len(uint32_t seq) { return 4u + (seq * 7u) % 45u; }

/* Message seq of the sender tag into buf (RR_MSG_MAX bytes); its length. */
static inline uint32_t rr_build(uint8_t *buf, uint32_t seq, uint32_t tag)
{
    fw_echo_hdr h;
    uint32_t i, n = rr_len(seq);
    uint8_t *p = buf + sizeof(h);
    for (i = 0; i < n; i++)
        p[i] = (uint8_t)(seq * 31u + tag * 17u + i);
    h.seq = seq;
    h.len = n;
    h.crc = fw_crc32(p, n);
    memcpy(buf, &h, sizeof(h));
    return (uint32_t)sizeof(h) + n;
}

/* The stop message with the sender's report. */
static inline uint32_t rr_build_stop(uint8_t *buf, const rr_report *r)
{
    fw_echo_hdr h;
    h.seq = RR_STOP;
    h.len = (uint32_t)sizeof(*r);
    h.crc = fw_crc32(r, sizeof(*r));
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), r, sizeof(*r));
    return (uint32_t)(sizeof(h) + sizeof(*r));
}

/* Check a received message of n bytes: 0 = data message seq `want` of tag,
 * 1 = a stop with a good report (copied to *stop), -1 = bad. */
static inline int rr_check(const uint8_t *buf, int n, uint32_t want, uint32_t tag, rr_report *stop)
{
    fw_echo_hdr h;
    uint8_t ref[RR_MSG_MAX];
    if (n < (int)sizeof(h))
        return -1;
    memcpy(&h, buf, sizeof(h));
    if (h.seq == RR_STOP) {
        if (n != (int)(sizeof(h) + sizeof(*stop)) || h.len != sizeof(*stop) ||
            fw_crc32(buf + sizeof(h), h.len) != h.crc)
            return -1;
        memcpy(stop, buf + sizeof(h), sizeof(*stop));
        return 1;
    }
    if (h.seq != want || (uint32_t)n != rr_build(ref, want, tag) ||
        memcmp(ref, buf, (size_t)n) != 0)
        return -1;
    return fw_crc32(buf + sizeof(h), h.len) == h.crc ? 0 : -1;
}

/* One SMEM round on the locked area w: increment the counter, with the
 * holder's mark checked across it; 1 if another holder disturbed it. */
static inline int rr_lock_round(volatile uint32_t *w, uint32_t mark)
{
    uint32_t c = w[0];
    int k;
    w[1] = mark;
    for (k = 0; k < 16; k++)
        __asm__ __volatile__("" ::: "memory");
    if (w[0] != c || w[1] != mark)
        return 1;
    w[0] = c + 1u;
    return 0;
}

#endif /* RR_PROTO_H */
