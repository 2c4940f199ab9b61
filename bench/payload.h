/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * payload.h - payloads that the receiver can check completely: CRC32C and the
 * message patterns of `throughput` and `blocks` (payload.c).
 *
 * A throughput message of `size` bytes on channel ch with sequence number seq:
 *   size >= 8:  [0..3] seq (LE)  [4..7] CRC32C of bytes 8..size-1  [8..] body
 *   size 5..7:  [0..3] seq       [4..] body
 *   size 1..4:  the low `size` bytes of seq
 * The body is one of BENCH_PAT_K pseudo-random templates (chosen by seq), made
 * from (ch, seq % K) before the run, so the sender stamps 4 bytes and the
 * copy API sends the template as is. The receiver checks the length, the seq
 * (the next one of its channel: a lost, repeated or reordered message fails),
 * the CRC field and every body byte against the template (memcmp: exact, and
 * cheaper than recomputing the CRC, which --crc does in addition).
 */
#ifndef MDCOM_BENCH_PAYLOAD_H
#define MDCOM_BENCH_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_PAT_K 8u

/* CRC32C (Castagnoli), hardware instruction when the CPU has one. */
uint32_t bench_crc32c(uint32_t crc, const void *p, size_t n);

typedef struct bench_pattern {
    uint32_t size;
    unsigned char *tmpl[BENCH_PAT_K];
    uint32_t crc[BENCH_PAT_K];
} bench_pattern;

/* 0 or -ENOMEM. */
int bench_pattern_init(bench_pattern *p, uint32_t size, uint32_t ch);
void bench_pattern_free(bench_pattern *p);
/* The message for seq (the template with seq stamped in). Valid until the
 * next call with a seq of the same template (seq % K). */
const unsigned char *bench_pattern_msg(bench_pattern *p, uint32_t seq);

enum { BENCH_PAT_OK = 0, BENCH_PAT_LEN, BENCH_PAT_SEQ, BENCH_PAT_CRC, BENCH_PAT_BODY };
/* Check a received message; recompute_crc also recomputes the CRC32C. */
int bench_pattern_check(const bench_pattern *p, const void *msg, uint32_t len, uint32_t seq,
                        int recompute_crc);

/* Fill buf with the pseudo-random bytes of seed (xorshift64*). */
void bench_fill_random(void *buf, size_t n, uint64_t seed);

#endif /* MDCOM_BENCH_PAYLOAD_H */
