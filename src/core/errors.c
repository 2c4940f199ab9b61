/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errors.c - a message for each error code the API returns.
 *
 * One table: codes[k] names the k-th message of the packed text (messages
 * separated by NULs); a packed table instead of a switch keeps the
 * freestanding core small (a switch over sparse errno values compiles to a
 * compare chain and one pointer per message).
 */
#include <errno.h>

#include "internal.h"

#define MDCOM_ERRORS(X)                                                                            \
    X(EINVAL, "EINVAL: invalid argument or config")                                                \
    X(ENOENT, "ENOENT: no such channel or region")                                                 \
    X(EPERM, "EPERM: not allowed for this domain")                                                 \
    X(EACCES, "EACCES: region permission denied")                                                  \
    X(ENOSPC, "ENOSPC: out of space (region, shm, instances)")                                     \
    X(ETIMEDOUT, "ETIMEDOUT: timed out")                                                           \
    X(EAGAIN, "EAGAIN: queue empty or full")                                                       \
    X(ENOBUFS, "ENOBUFS: no free block")                                                           \
    X(EBUSY, "EBUSY: lock held by another process")                                                \
    X(EDEADLK, "EDEADLK: lock already held by us")                                                 \
    X(EALREADY, "EALREADY: block not held by us")                                                  \
    X(EMSGSIZE, "EMSGSIZE: message too large")                                                     \
    X(EPROTO, "EPROTO: peer violated the protocol")                                                \
    X(EBADMSG, "EBADMSG: corrupt message or header")                                               \
    X(EPROTONOSUPPORT, "EPROTONOSUPPORT: other wire version")                                      \
    X(ESTALE, "ESTALE: layout differs from config")                                                \
    X(MDCOM_ESHUTDOWN, "ESHUTDOWN: region terminated")                                             \
    X(ECONNRESET, "ECONNRESET: region re-formatted")                                               \
    X(MDCOM_EUSERS, "EUSERS: no free process slot")                                                \
    X(EADDRINUSE, "EADDRINUSE: a live master serves it")                                           \
    X(EINTR, "EINTR: interrupted by a signal")                                                     \
    X(ENOSYS, "ENOSYS: not supported by the port")                                                 \
    X(ENOTCONN, "ENOTCONN: reaped: missed heartbeat")

#define MDCOM_ERR_CODE(code, text) (uint16_t)(code),
#define MDCOM_ERR_TEXT(code, text) text "\0"
#define MDCOM_ERR_FITS(code, text)                                                                 \
    _Static_assert((code) > 0 && (code) < 65536, #code " fits the table");

MDCOM_ERRORS(MDCOM_ERR_FITS)

static const uint16_t codes[] = {MDCOM_ERRORS(MDCOM_ERR_CODE) 0};
static const char texts[] = "success\0" MDCOM_ERRORS(MDCOM_ERR_TEXT) "unknown error";

const char *mdcom_strerror(int err)
{
    unsigned e = err < 0 ? 0u - (unsigned)err : (unsigned)err;
    const char *s = texts;
    unsigned k = 0;
    if (e != 0) { /* text k + 1 is codes[k]'s; past the last code: "unknown error" */
        while (codes[k] && codes[k] != e)
            k++;
        k++;
    }
    while (k--) /* skip k texts */
        while (*s++)
            ;
    return s;
}
