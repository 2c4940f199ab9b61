/*
 * api.h - cost of single zero-copy API calls (api.c), used by `pingpong`
 * (its "api" section) and by the `api` subcommand.
 */
#ifndef MDCOM_BENCH_API_H
#define MDCOM_BENCH_API_H

#include <stdint.h>

#include "bench.h"

enum { BENCH_API_ALLOC, BENCH_API_GET, BENCH_API_ENQUEUE, BENCH_API_DEQUEUE, BENCH_API_FREE, BENCH_API_N };

#define BENCH_API_BATCH 1024u         /* calls per timed batch = block_count */
#define BENCH_API_TARGET_NS 50.0      /* target: mean ns per call           */
#define BENCH_API_CALLS_DEFAULT 1048576u
#define BENCH_API_CALLS_QUICK 65536u

typedef struct bench_api_result {
    const char *api;   /* "alloc", ...                                  */
    uint64_t calls;    /* timed calls                                   */
    double mean_ns;    /* total time / calls                            */
    double best_ns;    /* fastest batch / BENCH_API_BATCH               */
    double p50_ns;     /* median batch / BENCH_API_BATCH                */
} bench_api_result;

/* Time at least min_calls calls of each API, in batches of BENCH_API_BATCH,
 * on a single-process region (one master domain that both sends and
 * receives). Returns 0, or < 0 after printing the failing call; an integrity
 * error (wrong id/len dequeued) counts in *integrity. */
int bench_api_run(uint64_t min_calls, bench_api_result res[BENCH_API_N], unsigned *integrity);

#endif /* MDCOM_BENCH_API_H */
