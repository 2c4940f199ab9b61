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

#define MDCOM_ERRORS(X)                                                                         \
    X(EINVAL, "EINVAL: invalid argument or configuration")                                      \
    X(ENOENT, "ENOENT: no such channel or region")                                              \
    X(EPERM, "EPERM: not allowed for this domain or process")                            \
    X(EACCES, "EACCES: permission denied on the region")                                        \
    X(ENOSPC, "ENOSPC: out of space (region, shm or instances)")                          \
    X(ETIMEDOUT, "ETIMEDOUT: timed out")                                                        \
    X(EAGAIN, "EAGAIN: queue empty or full")                                        \
    X(ENOBUFS, "ENOBUFS: no free block")                                            \
    X(EBUSY, "EBUSY: lock held by another process")                                             \
    X(EDEADLK, "EDEADLK: lock already held by this process")                                    \
    X(EALREADY, "EALREADY: block not held by this process")                                     \
    X(EMSGSIZE, "EMSGSIZE: message larger than block or buffer")                            \
    X(EPROTO, "EPROTO: protocol violated by a peer (corrupt index or state)")              \
    X(EBADMSG, "EBADMSG: corrupt message or region header")                                   \
    X(EPROTONOSUPPORT, "EPROTONOSUPPORT: other wire version")                      \
    X(ESTALE, "ESTALE: region layout differs from this config")                        \
    X(ESHUTDOWN, "ESHUTDOWN: master terminated the region")                                 \
    X(ECONNRESET, "ECONNRESET: master re-formatted the region")                             \
    X(EUSERS, "EUSERS: all process slots in use")                             \
    X(EADDRINUSE, "EADDRINUSE: a live master serves this region")                       \
    X(EINTR, "EINTR: interrupted by a signal")                                                  \
    X(ENOSYS, "ENOSYS: not supported by this port")                                    \
    X(ENOTCONN, "ENOTCONN: reaped as dead (missed heartbeat)")

#define MDCOM_ERR_CODE(code, text) (uint16_t)(code),
#define MDCOM_ERR_TEXT(code, text) text "\0"
#define MDCOM_ERR_FITS(code, text) _Static_assert((code) > 0 && (code) < 65536, #code " fits the table");

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
