/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * doorbell_mux.c - one QEMU UART doorbell shared by many Linux processes
 * (doorbell_mux.h).
 */
#define _GNU_SOURCE
#include "doorbell_mux.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "unix_addr.h"

#define MUX_MAX_CLIENTS 32
#define MUX_RETRY_MS 5 /* connect attempts to QEMU's socket */

struct mdcom_doorbell_mux {
    pthread_t thr;
    int stop_pipe[2];
    int lfd, up;                  /* listening socket; QEMU (-1: none) */
    int cl[MUX_MAX_CLIENTS], ncl; /* clients */
    int up_state;                 /* 0 not yet, 1 connected, -1 closed */
    int pending;                  /* a client rang before QEMU was there */
    int64_t up_deadline;
    struct sockaddr_un listen_addr, up_addr;
    pthread_mutex_t st_lock;
    mdcom_doorbell_mux_stats st;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n)
        vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

static void count(mdcom_doorbell_mux *m, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&m->st_lock);
    *field += n;
    pthread_mutex_unlock(&m->st_lock);
}

static void set_up_state(mdcom_doorbell_mux *m, int s)
{
    m->up_state = s;
    pthread_mutex_lock(&m->st_lock);
    m->st.upstream = s;
    pthread_mutex_unlock(&m->st_lock);
}

static void try_connect_up(mdcom_doorbell_mux *m)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return;
    if (connect(fd, (struct sockaddr *)&m->up_addr, sizeof(m->up_addr)) != 0) {
        close(fd);
        if (mono_ns() > m->up_deadline)
            set_up_state(m, -1); /* QEMU never came */
        return;
    }
    m->up = fd;
    set_up_state(m, 1);
}

/* one byte to QEMU, unless one is still unread there */
static void ring_up(mdcom_doorbell_mux *m)
{
    uint8_t b = 1;
    int queued = 0;
    if (m->up_state != 1) {
        m->pending = 1;
        return;
    }
    if (ioctl(m->up, SIOCOUTQ, &queued) == 0 && queued > 0) {
        count(m, &m->st.coalesced, 1);
        return;
    }
    if (send(m->up, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) == 1)
        count(m, &m->st.to_fw, 1);
    else
        count(m, &m->st.coalesced, 1); /* a full buffer holds a pending wake-up */
}

static void drop_client(mdcom_doorbell_mux *m, int i)
{
    close(m->cl[i]);
    m->cl[i] = m->cl[--m->ncl];
}

static void close_all(mdcom_doorbell_mux *m)
{
    while (m->ncl)
        drop_client(m, m->ncl - 1);
}

static void *mux_main(void *arg)
{
    mdcom_doorbell_mux *m = arg;
    for (;;) {
        struct pollfd p[3 + MUX_MAX_CLIENTS];
        int n = 0, i, base, r;
        if (m->up_state == 0) {
            try_connect_up(m);
            if (m->up_state == 1 && m->pending) {
                m->pending = 0;
                ring_up(m);
            }
        }
        p[n++] = (struct pollfd){m->stop_pipe[0], POLLIN, 0};
        p[n++] = (struct pollfd){m->lfd, POLLIN, 0};
        p[n++] = (struct pollfd){m->up_state == 1 ? m->up : -1, POLLIN, 0};
        base = n;
        for (i = 0; i < m->ncl; i++)
            p[n++] = (struct pollfd){m->cl[i], POLLIN, 0};
        r = poll(p, (nfds_t)n, m->up_state == 0 ? MUX_RETRY_MS : -1);
        if (r < 0 && errno != EINTR)
            break;
        if (r <= 0)
            continue;
        if (p[0].revents)
            break;
        if (p[1].revents & POLLIN) {
            int c = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c >= 0) {
                if (m->up_state < 0 || m->ncl == MUX_MAX_CLIENTS)
                    close(c); /* the firmware is gone (or no room): EOF at once */
                else {
                    m->cl[m->ncl++] = c;
                    count(m, &m->st.clients, 1);
                }
            }
        }
        if (m->up_state == 1 && p[2].revents) {
            char buf[64];
            ssize_t k = recv(m->up, buf, sizeof(buf), MSG_DONTWAIT);
            if (k > 0) {
                count(m, &m->st.from_fw, (uint64_t)k);
                for (i = 0; i < m->ncl; i++) /* a full client buffer already holds a wake-up */
                    (void)send(m->cl[i], buf, (size_t)k, MSG_DONTWAIT | MSG_NOSIGNAL);
            } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(m->up);
                m->up = -1;
                set_up_state(m, -1);
                close_all(m); /* the clients see the firmware gone */
            }
        }
        /* clients: from the last, as drop_client moves the last one down */
        for (i = n - 1; i >= base; i--) {
            int ci = i - base;
            if (ci >= m->ncl || !p[i].revents)
                continue;
            char buf[64];
            ssize_t k = recv(m->cl[ci], buf, sizeof(buf), MSG_DONTWAIT);
            if (k > 0)
                ring_up(m); /* any number of rings is one wake-up */
            else if (k == 0 || (errno != EAGAIN && errno != EINTR))
                drop_client(m, ci);
        }
    }
    return NULL;
}

int mdcom_doorbell_mux_start(mdcom_doorbell_mux **out, const char *listen_path,
                             const char *upstream_path, int64_t connect_timeout_ns, char *err,
                             size_t errlen)
{
    mdcom_doorbell_mux *m;
    int e;
    if (!out)
        return fail(err, errlen, -EINVAL, "doorbell mux: bad socket paths");
    m = calloc(1, sizeof(*m));
    if (!m)
        return fail(err, errlen, -ENOMEM, "doorbell mux: out of memory");
    if (mdcom_unix_addr(&m->listen_addr, listen_path) != 0 ||
        mdcom_unix_addr(&m->up_addr, upstream_path) != 0) {
        free(m);
        return fail(err, errlen, -EINVAL, "doorbell mux: bad socket paths");
    }
    m->up = -1;
    m->up_deadline = mono_ns() + (connect_timeout_ns > 0 ? connect_timeout_ns : 60000000000ll);
    pthread_mutex_init(&m->st_lock, NULL);
    if (pipe2(m->stop_pipe, O_CLOEXEC) != 0) {
        e = errno;
        free(m);
        return fail(err, errlen, -e, "doorbell mux: pipe: %s", strerror(e));
    }
    m->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    {
        mode_t old = umask(077); /* the socket file 0600 */
        e = m->lfd < 0 ||
            bind(m->lfd, (struct sockaddr *)&m->listen_addr, sizeof(m->listen_addr)) != 0 ||
            listen(m->lfd, 16) != 0;
        umask(old);
    }
    if (e || (errno = pthread_create(&m->thr, NULL, mux_main, m)) != 0) {
        e = errno;
        if (m->lfd >= 0)
            close(m->lfd);
        unlink(listen_path);
        close(m->stop_pipe[0]);
        close(m->stop_pipe[1]);
        free(m);
        return fail(err, errlen, -e, "doorbell mux: %s: %s", listen_path, strerror(e));
    }
    *out = m;
    return 0;
}

void mdcom_doorbell_mux_stop(mdcom_doorbell_mux *m)
{
    if (!m)
        return;
    if (write(m->stop_pipe[1], "x", 1) != 1) {
        /* the pipe is ours and empty: cannot fail; join regardless */
    }
    pthread_join(m->thr, NULL);
    close_all(m);
    if (m->up >= 0)
        close(m->up);
    close(m->lfd);
    unlink(m->listen_addr.sun_path);
    close(m->stop_pipe[0]);
    close(m->stop_pipe[1]);
    pthread_mutex_destroy(&m->st_lock);
    free(m);
}

void mdcom_doorbell_mux_get_stats(mdcom_doorbell_mux *m, mdcom_doorbell_mux_stats *out)
{
    pthread_mutex_lock(&m->st_lock);
    *out = m->st;
    pthread_mutex_unlock(&m->st_lock);
}
