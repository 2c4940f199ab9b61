/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem.c - the only C library functions the core uses: memcpy, memset,
 * memcmp. Word-at-a-time when both pointers are word aligned (block copies
 * of the benchmark are), bytes otherwise. Built with
 * -fno-tree-loop-distribute-patterns so GCC does not turn the loops back
 * into calls to themselves.
 */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

void *memcpy(void *d, const void *s, size_t n)
{
    uint8_t *dd = (uint8_t *)d;
    const uint8_t *ss = (const uint8_t *)s;
    if ((((uintptr_t)dd | (uintptr_t)ss) & 3u) == 0) {
        uint32_t *dw = (uint32_t *)(void *)dd;
        const uint32_t *sw = (const uint32_t *)(const void *)ss;
        uint32_t *end = dw + (n >> 4) * 4u; /* whole 16-byte chunks, then words */
        while (dw != end) {
            uint32_t a = sw[0], b = sw[1], c = sw[2], e = sw[3];
            dw[0] = a;
            dw[1] = b;
            dw[2] = c;
            dw[3] = e;
            dw += 4;
            sw += 4;
        }
        end = dw + ((n >> 2) & 3u);
        while (dw != end)
            *dw++ = *sw++;
        n &= 3u;
        dd = (uint8_t *)dw;
        ss = (const uint8_t *)sw;
    }
    while (n--)
        *dd++ = *ss++;
    return d;
}

void *memmove(void *d, const void *s, size_t n)
{
    uint8_t *dd = (uint8_t *)d;
    const uint8_t *ss = (const uint8_t *)s;
    if (dd <= ss || dd >= ss + n)
        return memcpy(d, s, n);
    while (n--)
        dd[n] = ss[n];
    return d;
}

void *memset(void *d, int c, size_t n)
{
    uint8_t *dd = (uint8_t *)d;
    if (((uintptr_t)dd & 3u) == 0) {
        uint32_t w = (uint8_t)c * 0x01010101u;
        uint32_t *dw = (uint32_t *)(void *)dd;
        for (; n >= 4; n -= 4)
            *dw++ = w;
        dd = (uint8_t *)dw;
    }
    while (n--)
        *dd++ = (uint8_t)c;
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    size_t i = 0;
    while (i < n && x[i] == y[i])
        i++;
    return i < n ? x[i] - y[i] : 0;
}
