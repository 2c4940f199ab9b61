/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errors.c - a message for each error code the API returns.
 */
#include <errno.h>

#include "internal.h"

const char *mdcom_strerror(int err)
{
    switch (err < 0 ? -err : err) {
    case 0: return "success";
    case EINVAL: return "EINVAL: invalid argument or configuration";
    case ENOENT: return "ENOENT: no such channel or region";
    case EPERM: return "EPERM: this domain/process is not allowed to do that";
    case EACCES: return "EACCES: permission denied on the region";
    case ENOSPC: return "ENOSPC: no space (region, shm directory or instances)";
    case ETIMEDOUT: return "ETIMEDOUT: timed out";
    case EAGAIN: return "EAGAIN: nothing to dequeue / queue full";
    case ENOBUFS: return "ENOBUFS: no free block in the pool";
    case EBUSY: return "EBUSY: lock held by another process";
    case EDEADLK: return "EDEADLK: lock already held by this process";
    case EALREADY: return "EALREADY: block not held by this process";
    case EMSGSIZE: return "EMSGSIZE: message larger than the block or buffer";
    case EPROTO: return "EPROTO: the peer violated the protocol (corrupted index or state)";
    case EBADMSG: return "EBADMSG: corrupted message or region header";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT: region has another wire version";
    case ESTALE: return "ESTALE: region layout does not match this configuration";
    case ESHUTDOWN: return "ESHUTDOWN: the master terminated the region";
    case ECONNRESET: return "ECONNRESET: the master re-formatted the region";
    case EUSERS: return "EUSERS: all process slots of the region are in use";
    case EADDRINUSE: return "EADDRINUSE: a live master already serves this region";
    case EINTR: return "EINTR: interrupted by a signal";
    case ENOSYS: return "ENOSYS: not supported by this platform port";
    case ENOTCONN: return "ENOTCONN: taken for dead (missed heartbeat) and reaped";
    default: return "unknown error";
    }
}
