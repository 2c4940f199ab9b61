/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json.c - a minimal streaming JSON writer (objects, arrays, scalars).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "bench.h"

void bench_json_init(bench_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
}

static void indent(bench_json *j)
{
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Separator, indentation and key of the next member; 0 for a NULL writer
 * (writes to it are no-ops: bench_row's CSV pass). */
static int member(bench_json *j, const char *key)
{
    if (!j)
        return 0;
    if (j->depth > 0) {
        if (j->count[j->depth] > 0)
            fputc(',', j->f);
        fputc('\n', j->f);
        j->count[j->depth]++;
        indent(j);
    }
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
    return 1;
}

static void json_open(bench_json *j, const char *key, char c)
{
    if (!member(j, key))
        return;
    fputc(c, j->f);
    if (j->depth + 1 < BENCH_JSON_DEPTH) {
        j->depth++;
        j->count[j->depth] = 0;
    }
}

static void json_close(bench_json *j, char c)
{
    if (!j)
        return;
    int had = j->count[j->depth] > 0;
    if (j->depth > 0)
        j->depth--;
    if (had) {
        fputc('\n', j->f);
        indent(j);
    }
    fputc(c, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void bench_json_obj_begin(bench_json *j, const char *key) { json_open(j, key, '{'); }
void bench_json_obj_end(bench_json *j) { json_close(j, '}'); }
void bench_json_arr_begin(bench_json *j, const char *key) { json_open(j, key, '['); }
void bench_json_arr_end(bench_json *j) { json_close(j, ']'); }

/* One scalar member: fmt's text, or null when fmt is NULL. */
static void scalar(bench_json *j, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (member(j, key))
        vfprintf(j->f, fmt ? fmt : "null", ap);
    va_end(ap);
}

void bench_json_str(bench_json *j, const char *key, const char *val)
{
    if (!val)
        scalar(j, key, NULL);
    else if (member(j, key))
        put_string(j->f, val);
}

void bench_json_u64(bench_json *j, const char *k, uint64_t v) { scalar(j, k, "%" PRIu64, v); }
void bench_json_i64(bench_json *j, const char *k, int64_t v) { scalar(j, k, "%" PRId64, v); }
void bench_json_dbl(bench_json *j, const char *k, double v)
{
    scalar(j, k, isfinite(v) ? "%.6g" : NULL, v);
}
void bench_json_bool(bench_json *j, const char *k, int v) { scalar(j, k, v ? "true" : "false"); }

void bench_json_stats(bench_json *j, const char *key, const bench_stats *s)
{
    bench_json_obj_begin(j, key);
    bench_json_u64(j, "n", s->n);
    bench_json_u64(j, "min_ns", s->min);
    bench_json_u64(j, "p50_ns", s->p50);
    bench_json_u64(j, "p90_ns", s->p90);
    bench_json_u64(j, "p99_ns", s->p99);
    bench_json_u64(j, "p999_ns", s->p999);
    bench_json_u64(j, "max_ns", s->max);
    bench_json_dbl(j, "mean_ns", s->mean);
    bench_json_dbl(j, "stddev_ns", s->stddev);
    bench_json_obj_end(j);
}
