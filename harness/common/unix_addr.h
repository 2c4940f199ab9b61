/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unix_addr.h - the address of a UNIX-domain stream socket at a path, for the
 * harnesses that talk to QEMU's character devices and to each other (the UART
 * doorbell, its multiplexer, vhost-rpmsg). Header only.
 */
#ifndef MDCOM_HARNESS_UNIX_ADDR_H
#define MDCOM_HARNESS_UNIX_ADDR_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

/* *a = AF_UNIX at path (NUL-terminated in sun_path). 0, or -ENAMETOOLONG when
 * path does not fit (sun_path is 108 bytes on Linux), -EINVAL for NULL. */
static inline int mdcom_unix_addr(struct sockaddr_un *a, const char *path)
{
    size_t n;
    if (!a || !path)
        return -EINVAL;
    n = strlen(path);
    if (n >= sizeof(a->sun_path))
        return -ENAMETOOLONG;
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path, path, n + 1);
    return 0;
}

#endif
