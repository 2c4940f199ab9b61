/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * util.c - CPU pinning, messages, argument parsing and formatting.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "mdcom/mdcom.h"

int bench_pin_self(int cpu)
{
    if (cpu < 0)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set) != 0 ? -errno : 0;
}

void bench_err(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    /* one write so that messages of the two processes do not interleave */
    fprintf(stderr, "mdcom-bench: %s\n", buf);
}

void bench_err_mdcom(const char *what, int rc)
{
    const char *s = mdcom_strerror(rc);
    bench_err("%s: %s (%d)", what, s ? s : "?", rc);
}

/* A decimal number with an optional k/m (and, for byte sizes, g) multiplier
 * of unit, unit^2, unit^3. Byte sizes also accept "Ki"/"KiB"/"KB"-style tails. */
static int parse_scaled(const char *s, uint64_t unit, int bytes, uint64_t *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K') {
        mul = unit;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        mul = unit * unit;
        end++;
    } else if (bytes && (*end == 'g' || *end == 'G')) {
        mul = unit * unit * unit;
        end++;
    }
    if (bytes && mul != 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (bytes && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0' || v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

int bench_parse_size(const char *s, uint64_t *out) { return parse_scaled(s, 1024u, 1, out); }

int bench_parse_size_list(const char *s, uint32_t *out, int max, uint32_t lo, uint32_t hi,
                          const char *what)
{
    int sz = !what; /* byte sizes, or counts of `what` */
    if (sz)
        what = "size";
    char tmp[512];
    if (!s || strlen(s) >= sizeof(tmp)) {
        bench_err("%s list too long", what);
        return -1;
    }
    strcpy(tmp, s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (bench_parse_size(tok, &v) != 0) {
            bench_err("bad %s '%s' (examples: %s)", what, tok, sz ? "64, 4K, 1M" : "1, 8, 32");
            return -1;
        }
        if (v < lo || v > hi) {
            bench_err("%s '%s' out of range %u..%u%s", what, tok, lo, hi, sz ? " bytes" : "");
            return -1;
        }
        if (n == max) {
            bench_err("at most %d entries in the %s list", max, what);
            return -1;
        }
        out[n++] = (uint32_t)v;
    }
    if (n == 0) {
        bench_err("empty %s list", what);
        return -1;
    }
    return n;
}

int bench_parse_count(const char *s, uint64_t *out) { return parse_scaled(s, 1000u, 0, out); }

const char *bench_fmt_size(char *buf, size_t len, uint64_t bytes)
{
    if (bytes >= 1024u * 1024u && bytes % (1024u * 1024u) == 0)
        snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
    else if (bytes >= 1024u && bytes % 1024u == 0)
        snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
    else
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    return buf;
}

const char *bench_fmt_ns(char *buf, size_t len, double ns)
{
    /* three significant digits, unit chosen per value: the unit of the
     * value's thousands, 0-2 decimals by its magnitude in that unit */
    static const char *const unit[] = {"ns", "us", "ms", "s"};
    if (!isfinite(ns) || ns < 0) {
        snprintf(buf, len, "-");
        return buf;
    }
    unsigned u = 0;
    double v = ns;
    while (u < 3 && v >= 1000.0) {
        v /= 1000.0;
        u++;
    }
    int decimals = u == 0 ? 0 : u == 3 || v < 10.0 ? 2 : v < 100.0 ? 1 : 0;
    snprintf(buf, len, "%.*f %s", decimals, v, unit[u]);
    return buf;
}

void bench_unique_name(char *buf, size_t len, const char *prefix)
{
    static unsigned counter;
    snprintf(buf, len, "%s-%ld-%u", prefix, (long)getpid(), counter++);
}

char *bench_read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *b = malloc(cap);
    for (size_t k; b && (k = fread(b + n, 1, cap - 1 - n, f)) > 0;) {
        n += k;
        if (n == cap - 1) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    if (b)
        b[n] = '\0';
    fclose(f);
    return b;
}

int bench_idx_u32(const uint32_t *a, int n, uint32_t v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return i;
    return -1;
}
