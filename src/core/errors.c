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
    X(EPERM, "EPERM: this domain/process is not allowed to do that")                            \
    X(EACCES, "EACCES: permission denied on the region")                                        \
    X(ENOSPC, "ENOSPC: no space (region, shm directory or instances)")                          \
    X(ETIMEDOUT, "ETIMEDOUT: timed out")                                                        \
    X(EAGAIN, "EAGAIN: nothing to dequeue / queue full")                                        \
    X(ENOBUFS, "ENOBUFS: no free block in the pool")                                            \
    X(EBUSY, "EBUSY: lock held by another process")                                             \
    X(EDEADLK, "EDEADLK: lock already held by this process")                                    \
    X(EALREADY, "EALREADY: block not held by this process")                                     \
    X(EMSGSIZE, "EMSGSIZE: message larger than the block or buffer")                            \
    X(EPROTO, "EPROTO: the peer violated the protocol (corrupted index or state)")              \
    X(EBADMSG, "EBADMSG: corrupted message or region header")                                   \
    X(EPROTONOSUPPORT, "EPROTONOSUPPORT: region has another wire version")                      \
    X(ESTALE, "ESTALE: region layout does not match this configuration")                        \
    X(ESHUTDOWN, "ESHUTDOWN: the master terminated the region")                                 \
    X(ECONNRESET, "ECONNRESET: the master re-formatted the region")                             \
    X(EUSERS, "EUSERS: all process slots of the region are in use")                             \
    X(EADDRINUSE, "EADDRINUSE: a live master already serves this region")                       \
    X(EINTR, "EINTR: interrupted by a signal")                                                  \
    X(ENOSYS, "ENOSYS: not supported by this platform port")                                    \
    X(ENOTCONN, "ENOTCONN: taken for dead (missed heartbeat) and reaped")

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
