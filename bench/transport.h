/*
 * transport.h - round-trip transports and the two-process runner.
 *
 * A transport moves one message from the measuring process ("ping" side) to a
 * peer process ("pong" side) and one back. The runner (roundtrip.c) creates the
 * transport's shared state, forks, pins both processes, lets the peer serve and
 * times each round trip on the ping side.
 *
 * Protocol every transport implements:
 *   - ping(ctx, seq) sends a message carrying seq (1, 2, 3, ... strictly
 *     increasing by one) and returns when the peer's reply carrying the same
 *     seq has arrived and been checked.
 *   - the pong side checks that each message carries the previous seq + 1 and
 *     replies with it; a message carrying BENCH_SEQ_STOP ends it (no reply).
 *   - a message of `size` bytes carries seq in its first 4 bytes, and (copying
 *     transports, size >= 8) also in its last 4 bytes; both sides check them.
 *
 * Return values of ping/pong: 0 ok, BENCH_RT_MISMATCH when a message arrived
 * but carried the wrong seq/length/payload (an integrity error), or a negative
 * errno / mdcom error code (the transport printed what failed).
 *
 * Adding a transport: one file defining `const bench_transport bench_tr_<x>`
 * and a line in the table of transports.c.
 */
#ifndef MDCOM_BENCH_TRANSPORT_H
#define MDCOM_BENCH_TRANSPORT_H

#include <stdint.h>

#include "bench.h"

#define BENCH_SEQ_STOP 0xffffffffu
#define BENCH_RT_MISMATCH 1

/* How a transport waits. Ratios are computed against the baseline of the
 * same class. */
enum bench_wait_class { BENCH_WAIT_POLL = 1, BENCH_WAIT_BLOCK = 2 };

typedef struct bench_rt_params {
    uint32_t size;      /* payload bytes of this cell (>= 4)              */
    uint32_t max_size;  /* largest payload of the run: buffer / block size */
    int64_t timeout_ns; /* a single wait longer than this is an error      */
    char name[32];      /* unique name for named resources (regions)      */
} bench_rt_params;

typedef struct bench_transport {
    const char *name;     /* "raw-spin"                                     */
    const char *desc;     /* one line for --help                            */
    int wait_class;       /* enum bench_wait_class                          */
    const char *baseline; /* transport whose p50 this one is compared to;
                             NULL when it is a baseline itself             */

    /* Parent, before fork: create the state both sides share. *ctx is
     * inherited by the child. 0 or < 0 (printed). */
    int (*setup)(void **ctx, const bench_rt_params *p);
    /* Child, after fork: attach, answer every ping until BENCH_SEQ_STOP,
     * detach. 0, BENCH_RT_MISMATCH or < 0. */
    int (*pong)(void *ctx);
    /* Parent, after fork: attach the measuring side. 0 or < 0. */
    int (*ping_open)(void *ctx);
    /* Parent: one timed round trip. 0, BENCH_RT_MISMATCH or < 0. */
    int (*ping)(void *ctx, uint32_t seq);
    /* Parent: send BENCH_SEQ_STOP (best effort; may be called after errors
     * and without ping_open having succeeded). */
    void (*stop)(void *ctx);
    /* Parent, after the child exited: release everything, free ctx. */
    void (*teardown)(void *ctx);
} bench_transport;

/* All transports, in report order. */
extern const bench_transport *const bench_transports[];
extern const unsigned bench_n_transports;
const bench_transport *bench_transport_find(const char *name);

/* ------------------------------------------------------------------ */
/* Runner                                                                */
/* ------------------------------------------------------------------ */
typedef struct bench_rt_opts {
    uint32_t size, max_size;
    uint64_t samples;    /* round trips to record                         */
    uint64_t warmup;     /* round trips before recording (not recorded)   */
    uint64_t budget_ns;  /* stop recording after this long; 0 = no limit;
                            warm-up stops after a quarter of it          */
    int64_t timeout_ns;  /* per wait; also bounds the peer's exit        */
    int cpu_ping, cpu_pong; /* -1 = not pinned                           */
} bench_rt_opts;

typedef struct bench_rt_result {
    bench_stats st;        /* of the recorded round trips                */
    uint64_t warmup_done;
    int budget_hit;        /* recording stopped by budget_ns             */
    int ok;                /* 1: no error on either side                 */
    unsigned integrity;    /* integrity errors (mismatches), both sides  */
    unsigned failures;     /* API / system errors, both sides            */
    double seconds;        /* wall time of the whole cell                */
} bench_rt_result;

/* Run one chunk of a cell in a fresh process pair and fresh transport state:
 * up to o->samples round trips appended to buf[*n...] (buf has room for
 * o->samples more). Adds to r's counters (warmup_done, budget_hit,
 * integrity, failures, seconds); does not touch r->st or r->ok.
 * Returns 0 when the chunk was clean, -1 otherwise (messages printed). */
int bench_rt_chunk(const bench_transport *t, const bench_rt_opts *o, uint64_t *buf, size_t *n,
                   bench_rt_result *r);

/* Run one cell as a single chunk and summarise it in r->st. Returns 0 when
 * the cell is clean (r->ok), -1 otherwise (messages printed). */
int bench_rt_run(const bench_transport *t, const bench_rt_opts *o, bench_rt_result *r);

/* Payload stamping helpers for copying transports. */
static inline void bench_stamp(unsigned char *p, uint32_t size, uint32_t seq)
{
    __builtin_memcpy(p, &seq, 4);
    if (size >= 8)
        __builtin_memcpy(p + size - 4, &seq, 4);
}
static inline uint32_t bench_head(const void *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}
static inline uint32_t bench_tail(const unsigned char *p, uint32_t size)
{
    uint32_t v;
    __builtin_memcpy(&v, p + size - 4, 4);
    return v;
}
/* 1 when head (and tail for size >= 8) carry seq. */
static inline int bench_stamp_ok(const unsigned char *p, uint32_t size, uint32_t seq)
{
    uint32_t h, t = seq;
    __builtin_memcpy(&h, p, 4);
    if (size >= 8)
        __builtin_memcpy(&t, p + size - 4, 4);
    return h == seq && t == seq;
}

#endif /* MDCOM_BENCH_TRANSPORT_H */
