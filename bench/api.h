/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.h - cost of single API calls (api.c), used by `latency --api` (its "api"
 * section: the first BENCH_API_N) and by the `api` subcommand (all).
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
    BENCH_API_N, /* the zero-copy message path; latency --api reports these */
    BENCH_API_NOTIFY = BENCH_API_N,
    BENCH_API_WAIT_POLL,
    BENCH_API_SEND64,
    BENCH_API_RECV64,
    BENCH_API_SMEM_PAIR,
    BENCH_API_NX
};

#define BENCH_API_BATCH 1024u         /* calls per timed batch = block_count */
#define BENCH_API_TARGET_NS 50.0      /* target: mean ns per call           */
#define BENCH_API_CALLS_DEFAULT 1048576u
#define BENCH_API_CALLS_QUICK 65536u

typedef struct bench_api_result {
    const char *api;   /* "alloc", ...                                  */
    const char *fn;    /* the library function(s) timed                 */
    uint64_t calls;    /* timed calls                                   */
    double mean_ns;    /* total time / calls                            */
    double best_ns;    /* fastest batch / BENCH_API_BATCH               */
    double p50_ns;     /* median batch / BENCH_API_BATCH                */
    double mode_ns;    /* most frequent batch average (0.1 ns bins)     */
    double stddev_ns;  /* standard deviation of the batch averages      */
    double instr;      /* instructions per call (callgrind), NaN if none */
} bench_api_result;

/* Time at least min_calls calls of each API, in batches of BENCH_API_BATCH,
 * on a single-process region (one master domain that both sends and
 * receives). Fills res[0 .. BENCH_API_NX). Returns 0, or < 0 after printing
 * the failing call; an integrity error (wrong id/len dequeued) counts in
 * *integrity. */
int bench_api_run(uint64_t min_calls, bench_api_result res[BENCH_API_NX], unsigned *integrity);

/* Print the table of r[0 .. n) with the paper's figures; the targets of the
 * first BENCH_API_N into tg: their count. */
unsigned bench_api_report(FILE *out, const bench_api_result *r, int n, bench_target *tg);

/* The paper's table 4 (seed 003: i.MX7 Cortex-M4, RTOS side) for call
 * ("alloc", "free", "get", "notify", "enqueue", "dequeue"): ns, or NULL.
 * `api` and `--target qemu-m4 api` print it beside their own figures. */
typedef struct bench_api_paper {
    const char *call;
    double mode, mean, sd;
} bench_api_paper;
const bench_api_paper *bench_api_paper_of(const char *call);

#endif /* MDCOM_BENCH_API_H */
