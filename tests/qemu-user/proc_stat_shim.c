/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_stat_shim.c - linked (with -Wl,--wrap=open) into the test binaries of
 * the cross presets, which run under qemu-user, and only there.
 *
 * qemu-user answers the guest's reads of /proc/self/stat and of
 * /proc/<own pid>/stat itself, with a start time of its own (per emulated
 * thread, and not the kernel's) and a state of '0'. The Linux port takes a
 * process' start time as the token that tells a live process from a reused
 * pid; with the emulated file every thread would see its own token and
 * other processes the kernel's, so live processes would count as dead and be
 * reaped. Opening the same file as /proc/./<pid>/stat reaches the kernel's
 * file, which qemu does not intercept: every process then sees the same,
 * real, token, as on hardware. The port's code is unchanged. (open64: what
 * open() is with _FILE_OFFSET_BITS=64 on 32-bit targets.)
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);

/* path, or /proc/./<pid>/... in buf for /proc/<pid>/... */
static const char *kernel_path(const char *path, char *buf, size_t cap)
{
    if (strncmp(path, "/proc/", 6) == 0 && path[6] >= '0' && path[6] <= '9' &&
        strlen(path) + 3 < cap) {
        snprintf(buf, cap, "/proc/./%s", path + 6);
        return buf;
    }
    return path;
}

/* __wrap_open and __wrap_open64: the real call on kernel_path(path), with
 * the mode argument that open() has only with O_CREAT */
#define MDCOM_WRAP_OPEN(wrap, real)                                                                \
    int wrap(const char *path, int flags, ...)                                                     \
    {                                                                                              \
        char buf[96];                                                                              \
        mode_t mode = 0;                                                                           \
        if (flags & O_CREAT) {                                                                     \
            va_list ap;                                                                            \
            va_start(ap, flags);                                                                   \
            mode = (mode_t)va_arg(ap, int);                                                        \
            va_end(ap);                                                                            \
        }                                                                                          \
        return real(kernel_path(path, buf, sizeof(buf)), flags, mode);                             \
    }

MDCOM_WRAP_OPEN(__wrap_open, __real_open)
MDCOM_WRAP_OPEN(__wrap_open64, __real_open64)
