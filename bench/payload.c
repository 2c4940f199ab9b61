/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * payload.c - CRC32C and checkable message patterns (see payload.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "payload.h"

static uint32_t crc_table[256];

/* at start-up: no thread can see a half-built table */
__attribute__((constructor)) static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1u ? (c >> 1) ^ 0x82f63b78u : c >> 1; /* reflected Castagnoli */
        crc_table[i] = c;
    }
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p,
                                                         size_t n)
{
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

uint32_t bench_crc32c(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    crc = ~crc;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return ~crc_hw(crc, b, n);
#endif
    for (size_t i = 0; i < n; i++)
        crc = crc_table[(crc ^ b[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

void bench_fill_random(void *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    unsigned char *b = buf;
    size_t i = 0;
    while (i < n) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        uint64_t v = x * 0x2545f4914f6cdd1dull;
        size_t k = n - i < 8 ? n - i : 8;
        memcpy(b + i, &v, k);
        i += k;
    }
}

int bench_pattern_init(bench_pattern *p, uint32_t size, uint32_t ch)
{
    memset(p, 0, sizeof(*p));
    p->size = size;
    for (unsigned k = 0; k < BENCH_PAT_K; k++) {
        p->tmpl[k] = malloc(size ? size : 1);
        if (!p->tmpl[k]) {
            bench_pattern_free(p);
            return -ENOMEM;
        }
        bench_fill_random(p->tmpl[k], size, ((uint64_t)ch << 8) | k);
        if (size >= 8) {
            p->crc[k] = bench_crc32c(0, p->tmpl[k] + 8, size - 8);
            memcpy(p->tmpl[k] + 4, &p->crc[k], 4);
        }
    }
    return 0;
}

void bench_pattern_free(bench_pattern *p)
{
    for (unsigned k = 0; k < BENCH_PAT_K; k++) {
        free(p->tmpl[k]);
        p->tmpl[k] = NULL;
    }
}

const unsigned char *bench_pattern_msg(bench_pattern *p, uint32_t seq)
{
    unsigned char *m = p->tmpl[seq % BENCH_PAT_K];
    uint32_t n = p->size < 4 ? p->size : 4;
    for (uint32_t i = 0; i < n; i++)
        m[i] = (unsigned char)(seq >> (8 * i));
    return m;
}

int bench_pattern_check(const bench_pattern *p, const void *msg, uint32_t len, uint32_t seq,
                        int recompute_crc)
{
    const unsigned char *m = msg;
    if (len != p->size)
        return BENCH_PAT_LEN;
    uint32_t n = len < 4 ? len : 4;
    for (uint32_t i = 0; i < n; i++)
        if (m[i] != (unsigned char)(seq >> (8 * i)))
            return BENCH_PAT_SEQ;
    const unsigned char *t = p->tmpl[seq % BENCH_PAT_K];
    if (len >= 8) {
        uint32_t c;
        memcpy(&c, m + 4, 4);
        if (c != p->crc[seq % BENCH_PAT_K])
            return BENCH_PAT_CRC;
        if (recompute_crc && bench_crc32c(0, m + 8, len - 8) != c)
            return BENCH_PAT_CRC;
    }
    if (len > 4 && memcmp(m + 4, t + 4, len - 4) != 0)
        return BENCH_PAT_BODY;
    return BENCH_PAT_OK;
}
