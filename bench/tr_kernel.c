/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_kernel.c - the kernel IPC baselines as message transports: pipe, Unix
 * domain socket (stream, seqpacket) and POSIX message queue. Byte streams
 * frame each message with a 4-byte length; each process closes the other
 * side's descriptors at attach, so a dead peer shows as EOF / EPIPE.
 * Method: docs/benchmarks.md, "Transports".
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

enum { K_PIPE = BENCH_K_PIPE, K_STREAM = BENCH_K_STREAM, K_SEQPACKET = BENCH_K_SEQPACKET, K_MQ = BENCH_K_MQ };
static const char *const k_names[] = {"pipe", "unix-stream", "unix-seqpacket", "mq"};

#define K_RBUF (64u * 1024u)

struct kep {
    int rx, tx;               /* descriptors this side uses          */
    unsigned char *rbuf;      /* byte streams: read buffer           */
    uint32_t roff, rlen;
};

struct kctx {
    int kind;
    uint32_t n, max;
    int64_t timeout_ns;
    int fd[BENCH_MAX_CHAN][4]; /* pipe: A->B r,w, B->A r,w; socket: [0] A, [1] B;
                                  mq: [0] A->B, [1] B->A                 */
    struct kep ep[2][BENCH_MAX_CHAN];
};

static int k_fail(const struct kctx *c, const char *what, int err)
{
    bench_err("%s: %s: %s", k_names[c->kind], what, strerror(err));
    return -err;
}

/* After a failed call: 0 to retry it (EINTR), else the error printed (a
 * socket timeout, EAGAIN, as -ETIMEDOUT). */
static int k_errno(const struct kctx *c, const char *what)
{
    if (errno == EINTR)
        return 0;
    return k_fail(c, what, errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno);
}

static void k_close(int *fd, int kind)
{
    if (*fd >= 0) {
        if (kind == K_MQ)
            mq_close((mqd_t)*fd);
        else
            close(*fd);
        *fd = -1;
    }
}

/* Largest message a unix seqpacket socket takes here: its send buffer, raised
 * as far as this process may, minus the kernel's overhead. */
static uint32_t seqpacket_limit;

static int sock_bufs(int fd, uint32_t max)
{
    int want = (int)(max + 65536u > 0x3fffffffu ? 0x3fffffff : max + 65536u);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)) != 0 &&
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want)) != 0)
        return -errno;
    int got = 0;
    socklen_t l = sizeof(got);
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &l) != 0)
        return -errno;
    return got;
}

static uint32_t seqpacket_max(void)
{
    if (seqpacket_limit)
        return seqpacket_limit;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
        return 0;
    int got = sock_bufs(sv[0], 64u * 1024u * 1024u);
    close(sv[0]);
    close(sv[1]);
    /* unix datagram-style sockets refuse len > sndbuf - 32 (EMSGSIZE); and
     * a message is one linear socket buffer, which the kernel fails to
     * allocate (ENOBUFS) above 4 MiB (the largest page block) */
    seqpacket_limit = got > 4096 ? (uint32_t)got - 4096u : 1;
    if (seqpacket_limit > 4u * 1024u * 1024u)
        seqpacket_limit = 4u * 1024u * 1024u;
    return seqpacket_limit;
}

/* A number in /proc/sys/fs/mqueue/<name>, or dflt. */
static long mq_limit(const char *name, long dflt)
{
    char path[64];
    long v = dflt;
    snprintf(path, sizeof(path), "/proc/sys/fs/mqueue/%s", name);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%ld", &v) != 1)
        v = dflt;
    if (f)
        fclose(f);
    return v;
}

static uint32_t mq_max(void)
{
    return (uint32_t)mq_limit("msgsize_max", 8192);
}

static void k_timeouts(int fd, int64_t ns)
{
    struct timeval tv = {.tv_sec = (time_t)(ns / 1000000000), .tv_usec = (long)(ns % 1000000000) / 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void k_teardown(void *ctx);
static uint32_t k_max(int kind);

/* variant: K_PIPE, K_STREAM, K_SEQPACKET or K_MQ */
static int k_setup(void **out, const bench_msg_params *p)
{
    int kind = p->variant, e = 0;
    struct kctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->kind = kind;
    c->n = p->n_chan;
    c->max = p->max_size;
    c->timeout_ns = p->timeout_ns;
    for (uint32_t i = 0; i < BENCH_MAX_CHAN; i++)
        for (int k = 0; k < 4; k++)
            c->fd[i][k] = -1;
    *out = c;
    if ((kind == K_SEQPACKET || kind == K_MQ) && p->max_size > k_max(kind)) {
        bench_err("%s: message of %u bytes above this machine's limit %u", k_names[kind],
                  p->max_size, k_max(kind));
        e = -EMSGSIZE;
        goto fail;
    }
    for (uint32_t i = 0; i < c->n; i++) {
        int *fd = c->fd[i];
        if (kind == K_PIPE) {
            if (pipe2(fd, O_CLOEXEC) != 0 || pipe2(fd + 2, O_CLOEXEC) != 0) {
                e = k_fail(c, "pipe2", errno);
                goto fail;
            }
            /* writers do not block: a full pipe is waited for with poll */
            fcntl(fd[1], F_SETFL, O_NONBLOCK);
            fcntl(fd[3], F_SETFL, O_NONBLOCK);
        } else if (kind == K_STREAM || kind == K_SEQPACKET) {
            int type = kind == K_STREAM ? SOCK_STREAM : SOCK_SEQPACKET;
            if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fd) != 0) {
                e = k_fail(c, "socketpair", errno);
                goto fail;
            }
            for (int k = 0; k < 2; k++) {
                k_timeouts(fd[k], p->timeout_ns);
                if (kind == K_SEQPACKET && sock_bufs(fd[k], p->max_size) < 0) {
                    e = k_fail(c, "SO_SNDBUF", errno);
                    goto fail;
                }
            }
        } else {
            long mm = mq_limit("msg_max", 10);
            struct mq_attr a;
            memset(&a, 0, sizeof(a));
            a.mq_maxmsg = p->depth < 1 ? 1 : p->depth > (uint32_t)mm ? mm : (long)p->depth;
            a.mq_msgsize = p->max_size ? p->max_size : 1;
            /* all queues of the user share RLIMIT_MSGQUEUE (819200 B by
             * default): shorten the queues so that ours fit in half of it */
            struct rlimit rl;
            if (getrlimit(RLIMIT_MSGQUEUE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
                long per_q = (long)(rl.rlim_cur / 2 / (2u * c->n));
                long fit = per_q / (a.mq_msgsize + 128);
                if (fit < 1) {
                    bench_err("mq: %u queues of %ld-byte messages exceed RLIMIT_MSGQUEUE (%llu B)",
                              2u * c->n, a.mq_msgsize, (unsigned long long)rl.rlim_cur);
                    e = -EDQUOT;
                    goto fail;
                }
                if (a.mq_maxmsg > fit)
                    a.mq_maxmsg = fit;
            }
            for (int k = 0; k < 2; k++) {
                char name[64];
                snprintf(name, sizeof(name), "/%s-%u%c", p->name, i, k ? 'r' : 'f');
                mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, &a);
                if (q == (mqd_t)-1) {
                    int e0 = errno;
                    e = k_fail(c, "mq_open", e0);
                    /* a limit of this machine (queue count / bytes): n/a */
                    e = e0 == EMFILE || e0 == ENOMEM || e0 == ENOSPC ? -EDQUOT : e;
                    goto fail;
                }
                mq_unlink(name); /* nothing left behind, whatever happens next */
                fd[k] = (int)q;
            }
        }
    }
    return 0;
fail:
    k_teardown(c);
    *out = NULL;
    return e;
}

static int k_attach(void *ctx, int side)
{
    struct kctx *c = ctx;
    for (uint32_t i = 0; i < c->n; i++) {
        int *fd = c->fd[i];
        struct kep *e = &c->ep[side][i];
        memset(e, 0, sizeof(*e));
        switch (c->kind) {
        case K_PIPE:
            e->tx = side == BENCH_SIDE_A ? fd[1] : fd[3];
            e->rx = side == BENCH_SIDE_A ? fd[2] : fd[0];
            /* the other side's ends, in this process */
            k_close(side == BENCH_SIDE_A ? &fd[0] : &fd[2], c->kind);
            k_close(side == BENCH_SIDE_A ? &fd[3] : &fd[1], c->kind);
            break;
        case K_STREAM:
        case K_SEQPACKET:
            e->tx = e->rx = fd[side];
            k_close(&fd[side ^ 1], c->kind);
            break;
        default:
            e->tx = side == BENCH_SIDE_A ? fd[0] : fd[1];
            e->rx = side == BENCH_SIDE_A ? fd[1] : fd[0];
            break;
        }
        if (c->kind == K_PIPE || c->kind == K_STREAM) {
            e->rbuf = malloc(K_RBUF);
            if (!e->rbuf)
                return -ENOMEM;
        }
    }
    return 0;
}

static void k_detach(void *ctx, int side)
{
    struct kctx *c = ctx;
    for (uint32_t i = 0; i < c->n; i++) {
        free(c->ep[side][i].rbuf);
        c->ep[side][i].rbuf = NULL;
    }
}

static void k_teardown(void *ctx)
{
    struct kctx *c = ctx;
    for (uint32_t i = 0; i < BENCH_MAX_CHAN; i++)
        for (int k = 0; k < 4; k++)
            k_close(&c->fd[i][k], c->kind);
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < BENCH_MAX_CHAN; i++)
            free(c->ep[s][i].rbuf);
    free(c);
}

/* poll one descriptor; 0 ready, -ETIMEDOUT, -errno */
static int k_poll(int fd, short ev, uint64_t deadline)
{
    for (;;) {
        uint64_t now = bench_now_ns();
        if (now >= deadline)
            return -ETIMEDOUT;
        uint64_t left_ms = (deadline - now + 999999u) / 1000000u;
        struct pollfd pf = {.fd = fd, .events = ev, .revents = 0};
        int r = poll(&pf, 1, left_ms > 1000000 ? 1000000 : (int)left_ms);
        if (r > 0)
            return 0; /* readable, writable, or an error the next call reports */
        if (r < 0 && errno != EINTR)
            return -errno;
    }
}

static struct timespec k_abs(int64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(ns / 1000000000);
    ts.tv_nsec += (long)(ns % 1000000000);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* ---- send --------------------------------------------------------------------- */

static int k_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct kctx *c = ctx;
    struct kep *e = &c->ep[side][ch];
    if (c->kind == K_MQ) {
        for (;;) {
            struct timespec ts = k_abs(c->timeout_ns);
            if (mq_timedsend((mqd_t)e->tx, buf, len, 0, &ts) == 0)
                return 0;
            if (errno != EINTR)
                return k_fail(c, "mq_timedsend", errno);
        }
    }
    if (c->kind == K_SEQPACKET) {
        for (;;) {
            ssize_t n = send(e->tx, buf, len, MSG_NOSIGNAL);
            if (n == (ssize_t)len)
                return 0;
            if (n >= 0)
                return k_fail(c, "send (short)", EPROTO);
            int r = k_errno(c, "send");
            if (r != 0)
                return r;
        }
    }
    /* byte streams: length + payload in one writev, continued when short */
    uint32_t hdr = len;
    struct iovec iov[2] = {{.iov_base = &hdr, .iov_len = 4},
                           {.iov_base = (void *)(uintptr_t)buf, .iov_len = len}};
    size_t total = 4u + len, done = 0;
    uint64_t deadline = 0;
    while (done < total) {
        struct iovec v[2];
        int nv = 0;
        if (done < 4) {
            v[nv].iov_base = (char *)iov[0].iov_base + done;
            v[nv++].iov_len = 4 - done;
            v[nv++] = iov[1];
        } else {
            v[nv].iov_base = (char *)iov[1].iov_base + (done - 4);
            v[nv++].iov_len = total - done;
        }
        ssize_t n = c->kind == K_STREAM ? sendmsg(e->tx,
                                                  &(struct msghdr){.msg_iov = v, .msg_iovlen = (size_t)nv},
                                                  MSG_NOSIGNAL)
                                        : writev(e->tx, v, nv);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (c->kind == K_STREAM)
                return k_fail(c, "sendmsg", ETIMEDOUT);
            if (!deadline)
                deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
            int r = k_poll(e->tx, POLLOUT, deadline);
            if (r != 0)
                return k_fail(c, "write (waiting for room)", -r);
            continue;
        }
        return k_fail(c, "write", n < 0 ? errno : EPIPE);
    }
    return 0;
}

/* ---- receive -------------------------------------------------------------------- */

/* one read into p (up to len): > 0 bytes, or < 0 */
static int k_read(struct kctx *c, struct kep *e, void *p, size_t len, uint64_t *deadline)
{
    for (;;) {
        if (c->kind == K_PIPE) {
            if (!*deadline)
                *deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
            int r = k_poll(e->rx, POLLIN, *deadline);
            if (r != 0)
                return k_fail(c, "read (waiting)", -r);
        }
        ssize_t n = read(e->rx, p, len);
        if (n > 0)
            return (int)n;
        if (n == 0)
            return k_fail(c, "read", EPIPE); /* the peer is gone */
        int r = k_errno(c, "read");
        if (r != 0)
            return r;
    }
}

static int k_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct kctx *c = ctx;
    struct kep *e = &c->ep[side][ch];
    if (c->kind == K_MQ) {
        for (;;) {
            struct timespec ts = k_abs(c->timeout_ns);
            ssize_t n = mq_timedreceive((mqd_t)e->rx, buf, cap, NULL, &ts);
            if (n >= 0)
                return (int)n;
            if (errno != EINTR)
                return k_fail(c, "mq_timedreceive", errno);
        }
    }
    if (c->kind == K_SEQPACKET) {
        for (;;) {
            struct iovec v = {.iov_base = buf, .iov_len = cap};
            struct msghdr mh = {.msg_iov = &v, .msg_iovlen = 1};
            ssize_t n = recvmsg(e->rx, &mh, 0);
            if (n > 0 && (mh.msg_flags & MSG_TRUNC))
                return k_fail(c, "recvmsg (message larger than the buffer)", EMSGSIZE);
            if (n > 0)
                return (int)n;
            if (n == 0)
                return k_fail(c, "recvmsg", EPIPE);
            int r = k_errno(c, "recvmsg");
            if (r != 0)
                return r;
        }
    }
    uint64_t deadline = 0;
    /* the length */
    while (e->rlen - e->roff < 4) {
        if (e->roff) {
            memmove(e->rbuf, e->rbuf + e->roff, e->rlen - e->roff);
            e->rlen -= e->roff;
            e->roff = 0;
        }
        int n = k_read(c, e, e->rbuf + e->rlen, K_RBUF - e->rlen, &deadline);
        if (n < 0)
            return n;
        e->rlen += (uint32_t)n;
    }
    uint32_t len;
    memcpy(&len, e->rbuf + e->roff, 4);
    e->roff += 4;
    if (len > cap) {
        bench_err("%s: framed length %u exceeds the buffer (%u)", k_names[c->kind], len, cap);
        return -EBADMSG;
    }
    uint32_t have = e->rlen - e->roff, take = have < len ? have : len;
    memcpy(buf, e->rbuf + e->roff, take);
    e->roff += take;
    if (e->roff == e->rlen)
        e->roff = e->rlen = 0;
    while (take < len) {
        int n = k_read(c, e, (unsigned char *)buf + take, len - take, &deadline);
        if (n < 0)
            return n;
        take += (uint32_t)n;
    }
    return (int)len;
}

static uint32_t k_max(int kind)
{
    return kind == K_SEQPACKET ? seqpacket_max() : kind == K_MQ ? mq_max() : UINT32_MAX;
}

const bench_msg_ops bench_ops_kernel = BENCH_MSG_OPS(k, .recv = k_recv, .max_msg = k_max);
