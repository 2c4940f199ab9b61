/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * msg.c - bounded strings and error messages without libc: the message
 * builder every core file reports through (mdcom_err), and the string
 * helpers the configuration checks share.
 */
#include "layout.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* small freestanding helpers                                         */
/* ---------------------------------------------------------------- */

size_t mdcom_strnlen(const char *s, size_t max)
{
    size_t n = 0;
    if (!s)
        return 0;
    while (n < max && s[n])
        n++;
    return n;
}

int mdcom_streq(const char *a, const char *b, size_t max)
{
    size_t i;
    for (i = 0; i < max; i++) {
        if (a[i] != b[i])
            return 0;
        if (!a[i])
            return 1;
    }
    return 1;
}

void mdcom_err_str(mdcom_err *e, const char *s)
{
    if (!e || !e->buf || e->cap == 0 || !s)
        return;
    while (*s && e->pos + 1 < e->cap)
        e->buf[e->pos++] = *s++;
    e->buf[e->pos] = '\0';
}

static void mdcom_err_u32(mdcom_err *e, uint32_t v)
{
    char tmp[11];
    int i = 10;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v && i > 0);
    mdcom_err_str(e, &tmp[i]);
}

void mdcom_err_fmt(mdcom_err *e, const char *fmt, ...)
{
    char one[2] = {0, 0};
    va_list ap;
    va_start(ap, fmt);
    for (; *fmt; fmt++) {
        if (fmt[0] == '%' && fmt[1] == 's') {
            /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start(ap) is above (clang 14) */
            mdcom_err_str(e, va_arg(ap, const char *));
            fmt++;
        } else if (fmt[0] == '%' && fmt[1] == 'u') {
            /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start(ap) is above (clang 14) */
            mdcom_err_u32(e, va_arg(ap, uint32_t));
            fmt++;
        } else {
            one[0] = *fmt;
            mdcom_err_str(e, one);
        }
    }
    va_end(ap);
}

int mdcom_err_set(mdcom_err *e, int code, const char *region, const char *msg)
{
    if (e && e->buf && e->cap) {
        e->pos = 0;
        e->buf[0] = '\0';
        if (region)
            mdcom_err_fmt(e, "region '%s': ", region);
        mdcom_err_str(e, msg);
    }
    return code;
}

/* The k-th string of a packed table ("a\0b\0c"). */
const char *mdcom_nth_str(const char *packed, uint32_t k)
{
    while (k--)
        while (*packed++)
            ;
    return packed;
}
