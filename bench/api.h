/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.h - cost of single API calls (api.c), used by `latency --api` (the
 * first BENCH_API_N) and by the `api` subcommand (all).
 */
#ifndef MDCOM_BENCH_API_H
#define MDCOM_BENCH_API_H

#include <stdint.h>

#include "bench.h"

enum {
    BENCH_API_ALLOC,
    BENCH_API_GET,
    BENCH_API_ENQUEUE,
    BENCH_API_DEQUEUE,
    BENCH_API_FREE,
    BENCH_API_N, /* the zero-copy message path above; latency --api reports these */
    BENCH_API_NOTIFY = BENCH_API_N,
    BENCH_API_WAIT_POLL,
    BENCH_API_SEND64,
    BENCH_API_RECV64,
    BENCH_API_SMEM_PAIR,
    BENCH_API_NX
};

#define BENCH_API_BATCH 1024u    /* calls per timed batch = block_count */
#define BENCH_API_TARGET_NS 50.0 /* target: mean ns per call */
#define BENCH_API_CALLS_DEFAULT 1048576u
#define BENCH_API_CALLS_QUICK 65536u

/* ns per call of one API, from batches of BENCH_API_BATCH calls */
typedef struct bench_api_result {
    uint64_t calls;   /* timed calls                                    */
    double mean_ns;   /* total time / calls                             */
    double best_ns;   /* fastest batch                                  */
    double p50_ns;    /* median batch                                   */
    double mode_ns;   /* most frequent batch average (0.1 ns bins)      */
    double stddev_ns; /* of the batch averages                          */
    double instr;     /* instructions per call (callgrind), NaN if none */
} bench_api_result;

/* Time at least min_calls calls of each API on a single-process region (one
 * master domain that both sends and receives) into res[0 .. BENCH_API_NX).
 * 0, or < 0 after printing the failing call; an integrity error (wrong id or
 * length dequeued) counts in *integrity. */
int bench_api_run(uint64_t min_calls, bench_api_result res[BENCH_API_NX], unsigned *integrity);

/* Print the table of r[0 .. n) with the paper's figures; the targets of the
 * first BENCH_API_N into tg: their count. */
unsigned bench_api_report(FILE *out, const bench_api_result *r, int n, bench_target *tg);

/* A call ("alloc", ...), the library function(s) timed and the paper's table
 * 4 (i.MX7 Cortex-M4, RTOS side) in ns. bench_api_paper_of: the call's, or
 * NULL where the paper has none; `api` and `--target qemu-m4 api` print it. */
typedef struct bench_api_paper {
    const char *call;
    const char *fn;
    double mode, mean, sd;
} bench_api_paper;
const bench_api_paper *bench_api_paper_of(const char *call);

#endif /* MDCOM_BENCH_API_H */
