/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_fw/proto.h - the command protocol between a driver (Linux programs,
 * or CPU0 of the an521) and the firmware responder (firmware/common: the
 * images mdcom-fw-resp and mdcom-fw-an521-cpu1), over the channels of
 * qemu_m4.toml / an521.toml. Shared by the firmware and the Linux side (not
 * installed). All fields little-endian u32.
 *
 *   Linux: send fw_cmd on "ctl"  ->  firmware runs the service  ->  Linux
 *   receives fw_rsp on "rsp" when the service ends (count reached, or no
 *   traffic for FW_IDLE_MS). A service runs in one mode: FW_MODE_POLL (the
 *   firmware spins with MDCOM_POLL) or FW_MODE_DOORBELL (it sleeps in WFI
 *   until Linux rings the UART doorbell).
 *
 *   ECHO      count messages on echo_in, each echoed verbatim on echo_out
 *             (one copy). A message is fw_echo_hdr + payload. arg bits:
 *             FW_ARG_CHECK the firmware also checks the sequence and the
 *             CRC (rsp.value = bad messages; tests), FW_ARG_STAMP it answers
 *             each message with a fw_stamp (its clock when the message
 *             arrived) instead of the echo (one-way timing). Without
 *             either the firmware reads nothing but the length.
 *             FW_ARG_COST: rsp.value2 = the firmware's clock summed over
 *             each message's work, from the receive call that returned it
 *             to the reply published (clock-read overhead subtracted):
 *             instructions under QEMU -icount shift=0.
 *   BLOCKACK  count transactions on bulk: a stream of fw_ba_hdr{preamble,
 *             length} followed by length bytes, cut into messages of any
 *             size; when all length bytes arrived the firmware sends the
 *             byte count (u32) on ack (the seeds' protocol).
 *   SINK      count messages on bulk, dequeued and freed; rsp.value = bytes,
 *             rsp.value2 = sum of the first u32 of each message.
 *             With arg = 1 an ack (u32 bytes) is sent after the last one.
 *   SMEM      count times: lock "state", counter += 1 (and check that no
 *             one else changed it while we hold it), unlock.
 *             rsp.value = errors seen.
 *   TM_MSG    arg ms: firmware-local loop send 16 B / recv 16 B on "tm";
 *             rsp.count = iterations (Thread-Metric message processing).
 *   TM_SYNC   arg ms: trylock/unlock on "tm_sync"; rsp.count = iterations.
 *   RPMSG_ECHO count messages echoed on the RPMsg endpoint "mdcom-echo"
 *             (firmware: remote role over the "rpmsg" SMEM area), with the
 *             same arg bits and the same work as ECHO (one copy: the send);
 *             FW_ARG_BLOCKACK: the block-ack protocol instead of the echo.
 *   RAW_ECHO  count rounds of the raw spin echo on the "raw" SMEM area (no
 *             library call per round): the driver writes a new sequence to
 *             word 0, the firmware copies it to word 1 (FW_ARG_STAMP: its
 *             clock at arrival to words 2..3 first). The link's own limit.
 *   RELAY     count messages, each copied verbatim from echo_in to echo_out
 *             or from fwd_in to fwd_out (both pairs served in turns, poll
 *             mode; a pair whose output is full waits without holding the
 *             other up); -ENOSYS without fwd_in/fwd_out. The standing
 *             service of the remote responder (mdcom-fw-remote).
 *   PING      answers at once; rsp.value = boot token, value2 = doorbells.
 *   The images' own ops (not the library's):
 *   RESET     answers, then resets the core (SYSRESETREQ).
 *   EXIT      answers, then ends QEMU with exit status arg (semihosting;
 *             the an521's CPU1 sleeps instead: CPU0 ends QEMU).
 *   HANG      answers, takes a block of rsp, then spins without calling
 *             mdcom: a hung firmware, to be counted dead by its heartbeat.
 */
#ifndef MDCOM_FW_PROTO_H
#define MDCOM_FW_PROTO_H

#include <stdint.h>

#include "mdcom/mdcom.h" /* errno.h, MDCOM_ESHUTDOWN / MDCOM_EUSERS */

enum fw_op {
    FW_OP_PING = 1,
    FW_OP_ECHO = 2,
    FW_OP_BLOCKACK = 3,
    FW_OP_SINK = 4,
    FW_OP_SMEM = 5,
    FW_OP_TM_MSG = 6,
    FW_OP_TM_SYNC = 7,
    FW_OP_RPMSG_ECHO = 8,
    FW_OP_RESET = 9,
    FW_OP_EXIT = 10,
    FW_OP_HANG = 11,
    FW_OP_RAW_ECHO = 12,
    FW_OP_RELAY = 13
};

/* fw_cmd.arg bits of ECHO and RPMSG_ECHO (see above) */
#define FW_ARG_CHECK 1u
#define FW_ARG_STAMP 2u
#define FW_ARG_BLOCKACK 4u
#define FW_ARG_COST 8u /* rsp.value2 = clock ns of the firmware's per-message work, summed */

/* The firmware's heartbeat promise (mdcom_init_opts.heartbeat_ms): its pid
 * cannot be probed from Linux, so a hung core is seen by this. */
#define FW_HEARTBEAT_MS 1000u

enum fw_mode { FW_MODE_POLL = 0, FW_MODE_DOORBELL = 1 };

#define FW_IDLE_MS 10000u          /* a service ends after 10 s without traffic */
#define FW_BA_PREAMBLE 0xA55A5AA5u /* block-ack transaction header */
#define FW_RPMSG_SERVICE "mdcom-echo"
#define FW_RPMSG_NUM_BUFS 16u
#define FW_RPMSG_BUF_SIZE 512u
#define FW_RPMSG_ALIGN 64u

typedef struct fw_cmd {
    uint32_t op, mode, count, arg;
} fw_cmd;

typedef struct fw_rsp {
    uint32_t op;
    int32_t status; /* 0 or a negative errno */
    uint32_t count; /* messages / transactions / iterations done */
    uint32_t value, value2;
    uint32_t elapsed_us; /* firmware SysTick time of the service */
} fw_rsp;

typedef struct fw_echo_hdr {
    uint32_t seq, len, crc; /* len: payload bytes after the header; crc: CRC-32 of them */
} fw_echo_hdr;

/* the answer to a message under FW_ARG_STAMP (and RAW_ECHO's words 1..3):
 * fw_ns = the firmware's clock (ns since its boot) when the message arrived */
typedef struct fw_stamp {
    uint32_t seq, len, fw_ns_lo, fw_ns_hi;
} fw_stamp;

/* resolution of fw_stamp's clock (mps2-an386: FPGAIO counter, 25 MHz): a
 * stamp is the arrival time rounded down by less than this */
#define FW_STAMP_RES_NS 40u

/* words of the "raw" SMEM area (RAW_ECHO) */
enum { FW_RAW_PING = 0, FW_RAW_PONG = 1, FW_RAW_NS_LO = 2, FW_RAW_NS_HI = 3 };

typedef struct fw_ba_hdr {
    uint32_t preamble, length;
} fw_ba_hdr;

/* fw_rsp.status carries errors as Linux (asm-generic) errno numbers whatever
 * the firmware's C library (newlib numbers differ: ETIMEDOUT is 116 there).
 * The firmware converts with fw_errno_to_wire(); unknown errors become
 * -FW_EPROTO. */
enum {
    FW_EPERM = 1,
    FW_ENOENT = 2,
    FW_EINTR = 4,
    FW_EAGAIN = 11,
    FW_ENOMEM = 12,
    FW_EACCES = 13,
    FW_EBUSY = 16,
    FW_EINVAL = 22,
    FW_ENOSPC = 28,
    FW_EDEADLK = 35,
    FW_ENOSYS = 38,
    FW_EPROTO = 71,
    FW_EBADMSG = 74,
    FW_EOVERFLOW = 75,
    FW_EUSERS = 87,
    FW_EMSGSIZE = 90,
    FW_EPROTONOSUPPORT = 93,
    FW_EADDRINUSE = 98,
    FW_ECONNRESET = 104,
    FW_ENOBUFS = 105,
    FW_ENOTCONN = 107,
    FW_ESHUTDOWN = 108,
    FW_ETIMEDOUT = 110,
    FW_EALREADY = 114,
    FW_ESTALE = 116
};

static inline int32_t fw_errno_to_wire(int e)
{
    switch (e < 0 ? -e : e) {
    case 0:
        return 0;
    case EPERM:
        return -FW_EPERM;
    case ENOENT:
        return -FW_ENOENT;
    case EINTR:
        return -FW_EINTR;
    case EAGAIN:
        return -FW_EAGAIN;
    case ENOMEM:
        return -FW_ENOMEM;
    case EACCES:
        return -FW_EACCES;
    case EBUSY:
        return -FW_EBUSY;
    case EINVAL:
        return -FW_EINVAL;
    case ENOSPC:
        return -FW_ENOSPC;
    case EDEADLK:
        return -FW_EDEADLK;
    case ENOSYS:
        return -FW_ENOSYS;
    case EBADMSG:
        return -FW_EBADMSG;
    case EOVERFLOW:
        return -FW_EOVERFLOW;
    case MDCOM_EUSERS:
        return -FW_EUSERS;
    case EMSGSIZE:
        return -FW_EMSGSIZE;
    case EPROTONOSUPPORT:
        return -FW_EPROTONOSUPPORT;
    case EADDRINUSE:
        return -FW_EADDRINUSE;
    case ECONNRESET:
        return -FW_ECONNRESET;
    case ENOBUFS:
        return -FW_ENOBUFS;
    case ENOTCONN:
        return -FW_ENOTCONN;
    case MDCOM_ESHUTDOWN:
        return -FW_ESHUTDOWN;
    case ETIMEDOUT:
        return -FW_ETIMEDOUT;
    case EALREADY:
        return -FW_EALREADY;
    case ESTALE:
        return -FW_ESTALE;
    default:
        return -FW_EPROTO;
    }
}

/* SMEM's work under the lock "state", the same on both sides: counter
 * (word 0) += 1 with word 1 = who (the holder's mark), then check that no
 * one else wrote either while we hold it. 1 when someone did. */
static inline int fw_smem_bump(volatile uint32_t *area, uint32_t who)
{
    uint32_t v = area[0];
    area[1] = who;
    area[0] = v + 1;
    return area[0] != v + 1 || area[1] != who;
}

/* CRC-32 (IEEE 802.3, reflected, bitwise: small, no table). */
static inline uint32_t fw_crc32(const void *p, uint32_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    uint32_t c = 0xffffffffu;
    while (n--) {
        int k;
        c ^= *b++;
        for (k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

#endif /* MDCOM_FW_PROTO_H */
