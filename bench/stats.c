/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.c - summary statistics of latency samples.
 *
 * Percentiles use the nearest-rank method: the p-th percentile of n sorted
 * samples is sample number ceil(p/100 * n) (1-based). It is always a value that
 * was actually measured, and p100 is the maximum.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

uint64_t bench_percentile(const uint64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    double rank = ceil(p / 100.0 * (double)n);
    size_t r = rank < 1.0 ? 1 : (size_t)rank;
    if (r > n)
        r = n;
    return sorted[r - 1];
}

void bench_stats_compute(uint64_t *samples, size_t n, bench_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->n = n;
    if (n == 0) {
        out->mean = out->stddev = NAN;
        return;
    }
    qsort(samples, n, sizeof(*samples), cmp_u64);
    out->min = samples[0];
    out->max = samples[n - 1];
    out->p50 = bench_percentile(samples, n, 50.0);
    out->p90 = bench_percentile(samples, n, 90.0);
    out->p99 = bench_percentile(samples, n, 99.0);
    out->p999 = bench_percentile(samples, n, 99.9);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)samples[i];
    double mean = sum / (double)n;
    double sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)samples[i] - mean;
        sq += d * d;
    }
    out->mean = mean;
    out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0.0;
}
