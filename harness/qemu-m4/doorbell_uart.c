/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * doorbell_uart.c - the Linux side of a UART doorbell to a core under QEMU
 * (doorbell_uart.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "doorbell_uart.h"
#include "unix_addr.h"

#include "mdcom/mdcom.h"

#define RECHECK_NS 10000000ll  /* re-check the word while connected: 10 ms */
#define DEAD_POLL_NS 1000000ll /* once the peer is gone: poll every 1 ms */

struct mdcom_uart_doorbell {
    int fd;
    _Atomic int connected;
    _Atomic uint64_t rx, tx, coalesced;
    mdcom_platform plat;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void drain(mdcom_uart_doorbell *db)
{
    char buf[64];
    for (;;) {
        ssize_t n = recv(db->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n > 0) {
            atomic_fetch_add_explicit(&db->rx, (uint64_t)n, memory_order_relaxed);
            if ((size_t)n < sizeof(buf))
                return; /* all there was (one syscall per wake-up, not two) */
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            atomic_store_explicit(&db->connected, 0, memory_order_relaxed); /* EOF/error */
        if (n < 0 && errno == EINTR)
            continue;
        return;
    }
}

static int uart_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    mdcom_uart_doorbell *db = ctx;
    int64_t end = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
    for (;;) {
        struct timespec ts;
        struct pollfd p = {db->fd, POLLIN, 0};
        int64_t now, slice;
        int r;
        /* acquire: the caller re-checks its condition after we return */
        if (atomic_load_explicit(word, memory_order_acquire) != expected)
            return 0;
        now = now_ns();
        if (now >= end)
            return -ETIMEDOUT;
        slice =
            atomic_load_explicit(&db->connected, memory_order_relaxed) ? RECHECK_NS : DEAD_POLL_NS;
        if (end - now < slice)
            slice = end - now;
        ts.tv_sec = (time_t)(slice / 1000000000ll);
        ts.tv_nsec = (long)(slice % 1000000000ll);
        if (!atomic_load_explicit(&db->connected, memory_order_relaxed)) {
            if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
                return -EINTR;
            continue;
        }
        r = ppoll(&p, 1, &ts, NULL);
        if (r < 0) {
            if (errno == EINTR)
                return -EINTR;
            return -errno;
        }
        if (r > 0) {
            drain(db);
            if (p.revents & (POLLHUP | POLLERR))
                atomic_store_explicit(&db->connected, 0, memory_order_relaxed);
            return 0; /* woken (maybe spuriously): the caller re-checks */
        }
    }
}

static void uart_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    mdcom_uart_doorbell *db = ctx;
    uint8_t b = (uint8_t)chan;
    int queued = 0;
    (void)word;
    if (!atomic_load_explicit(&db->connected, memory_order_relaxed))
        return;
    /* A byte QEMU has not read yet is a wake-up still to come, after what
     * the caller published: ring no more. (QEMU takes one byte per main
     * loop turn and firmware interrupt; extra bytes queue behind it and wake
     * the firmware for nothing, and a queue of them delays a later ring.) */
    if (ioctl(db->fd, SIOCOUTQ, &queued) == 0 && queued > 0) {
        atomic_fetch_add_explicit(&db->coalesced, 1, memory_order_relaxed);
        return;
    }
    /* never blocks: a full socket buffer already holds a pending wake-up */
    if (send(db->fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
        atomic_fetch_add_explicit(&db->tx, 1, memory_order_relaxed);
    else if (errno == EPIPE || errno == ECONNRESET)
        atomic_store_explicit(&db->connected, 0, memory_order_relaxed);
}

static int uart_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    mdcom_uart_doorbell *db =
        (mdcom_uart_doorbell *)((char *)ctx - offsetof(mdcom_uart_doorbell, plat));
    if (MDCOM_PID_IS_FOREIGN(pid)) /* a firmware process: alive while the link is */
        return atomic_load_explicit(&db->connected, memory_order_relaxed) ? 1 : 0;
    return mdcom_platform_linux()->proc_alive(NULL, pid, token);
}

/* The Linux port's hooks take ctx NULL; ours need the doorbell. */
static int lx_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                          int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    (void)ctx;
    return mdcom_platform_linux()->region_open(NULL, name, size, flags, mode, group, timeout_ns,
                                               out);
}

static void lx_region_close(void *ctx, mdcom_region_map *map, int remove)
{
    (void)ctx;
    mdcom_platform_linux()->region_close(NULL, map, remove);
}

static uint64_t lx_now(void *ctx)
{
    (void)ctx;
    return mdcom_platform_linux()->now_ns(NULL);
}

static void lx_relax(void *ctx)
{
    (void)ctx;
    mdcom_platform_linux()->relax(NULL);
}

static int lx_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    (void)ctx;
    return mdcom_platform_linux()->proc_self(NULL, pid, token);
}

int mdcom_doorbell_uart_open(mdcom_uart_doorbell **out, const char *path, int64_t timeout_ns)
{
    struct sockaddr_un a;
    mdcom_uart_doorbell *db;
    int64_t end;
    if (!out || !path)
        return -EINVAL;
    *out = NULL;
    if (mdcom_unix_addr(&a, path) != 0)
        return -EINVAL;
    end = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
    db = calloc(1, sizeof(*db));
    if (!db)
        return -ENOMEM;
    for (;;) {
        int e;
        db->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (db->fd < 0) {
            e = -errno;
            free(db);
            return e;
        }
        if (connect(db->fd, (struct sockaddr *)&a, sizeof(a)) == 0)
            break;
        e = errno;
        close(db->fd);
        if (e != ENOENT && e != ECONNREFUSED && e != EAGAIN) {
            free(db);
            return -e;
        }
        if (now_ns() >= end) {
            free(db);
            return -ETIMEDOUT;
        }
        {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    atomic_store(&db->connected, 1);
    db->plat = *mdcom_platform_linux();
    db->plat.name = "linux+uart-doorbell";
    db->plat.ctx = &db->plat;
    db->plat.region_open = lx_region_open;
    db->plat.region_close = lx_region_close;
    db->plat.now_ns = lx_now;
    db->plat.relax = lx_relax;
    db->plat.proc_self = lx_proc_self;
    db->plat.proc_alive = uart_proc_alive;
    db->plat.doorbell = mdcom_doorbell_uart(db);
    *out = db;
    return 0;
}

void mdcom_doorbell_uart_close(mdcom_uart_doorbell *db)
{
    if (!db)
        return;
    close(db->fd);
    free(db);
}

mdcom_doorbell mdcom_doorbell_uart(mdcom_uart_doorbell *db)
{
    mdcom_doorbell d = {uart_wait, uart_ring, db};
    return d;
}

const mdcom_platform *mdcom_doorbell_uart_platform(mdcom_uart_doorbell *db)
{
    return db ? &db->plat : NULL;
}

int mdcom_doorbell_uart_connected(const mdcom_uart_doorbell *db)
{
    return db &&
           atomic_load_explicit(&((mdcom_uart_doorbell *)db)->connected, memory_order_relaxed);
}

uint64_t mdcom_doorbell_uart_rx(const mdcom_uart_doorbell *db)
{
    return db ? atomic_load_explicit(&((mdcom_uart_doorbell *)db)->rx, memory_order_relaxed) : 0;
}

uint64_t mdcom_doorbell_uart_tx(const mdcom_uart_doorbell *db)
{
    return db ? atomic_load_explicit(&((mdcom_uart_doorbell *)db)->tx, memory_order_relaxed) : 0;
}

uint64_t mdcom_doorbell_uart_coalesced(const mdcom_uart_doorbell *db)
{
    return db ? atomic_load_explicit(&((mdcom_uart_doorbell *)db)->coalesced, memory_order_relaxed)
              : 0;
}
