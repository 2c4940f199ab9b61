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

/* LSD radix sort on 16-bit digits: sorting 1e5..1e6 samples is part of every
 * cell, and this is several times faster than qsort with a comparator. Digits
 * above the largest sample are skipped. */
static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void sort_u64(uint64_t *a, size_t n)
{
    if (n < 2)
        return;
    uint64_t maxv = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] > maxv)
            maxv = a[i];
    uint64_t *tmp = malloc(n * sizeof(*tmp));
    size_t *cnt = malloc(65536u * sizeof(*cnt));
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        qsort(a, n, sizeof(*a), cmp_u64);
        return;
    }
    uint64_t *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (maxv >> shift) != 0; shift += 16) {
        memset(cnt, 0, 65536u * sizeof(*cnt));
        for (size_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & 0xffffu]++;
        size_t sum = 0;
        for (size_t d = 0; d < 65536u; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xffffu]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof(*a));
    free(tmp);
    free(cnt);
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
    sort_u64(samples, n);
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
