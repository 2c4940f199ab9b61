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

#define K_RBUF (64u * 1024u) /* byte streams: the read buffer */

/* One side's ends of a channel. Setup makes both sides' (side d sends on the
 * direction d: A -> B is 0, B -> A 1); attach closes the other side's, in each
 * process (mq: none, the queues are shared). */
struct kep {
    int rx, tx;          /* a socket: the same descriptor; mq: the queues */
    unsigned char *rbuf; /* byte streams: [roff, rlen) not read yet */
    uint32_t roff, rlen;
};

struct kctx {
    const char *tname;
    int kind; /* the variant: BENCH_K_* */
    uint32_t n;
    int64_t timeout_ns;
    struct kep ep[2][BENCH_MAX_CHAN];
};

static int k_fail(const struct kctx *c, const char *what, int err)
{
    bench_err("%s: %s: %s", c->tname, what, strerror(err));
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

/* Close what e owns: its sending end (a socket: its end; mq: the queue it
 * sends on) and, pipes, its reading end. */
static void k_close(int kind, struct kep *e)
{
    if (e->tx >= 0 && kind == BENCH_K_MQ)
        mq_close((mqd_t)e->tx);
    else if (e->tx >= 0)
        close(e->tx);
    if (e->rx >= 0 && kind == BENCH_K_PIPE)
        close(e->rx);
    e->tx = e->rx = -1;
}

/* Raise the send buffer of fd to hold max bytes: its size, or -errno. */
static int sock_bufs(int fd, uint32_t max)
{
    int want = (int)(max + 65536u > 0x3fffffffu ? 0x3fffffff : max + 65536u), got = 0;
    socklen_t l = sizeof(got);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)) != 0 &&
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want)) != 0)
        return -errno;
    return getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &l) != 0 ? -errno : got;
}

/* Largest message a unix seqpacket socket takes here: its send buffer, raised
 * as far as this process may, minus the kernel's overhead. */
static uint32_t seqpacket_max(void)
{
    static uint32_t limit;
    int sv[2];
    if (limit || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
        return limit;
    int got = sock_bufs(sv[0], 64u * 1024u * 1024u);
    close(sv[0]);
    close(sv[1]);
    /* unix datagram-style sockets refuse len > sndbuf - 32 (EMSGSIZE); and
     * a message is one linear socket buffer, which the kernel fails to
     * allocate (ENOBUFS) above 4 MiB (the largest page block) */
    limit = got > 4096 ? (uint32_t)got - 4096u : 1;
    if (limit > 4u * 1024u * 1024u)
        limit = 4u * 1024u * 1024u;
    return limit;
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

static uint32_t k_max(int kind)
{
    if (kind == BENCH_K_SEQPACKET)
        return seqpacket_max();
    return kind == BENCH_K_MQ ? (uint32_t)mq_limit("msgsize_max", 8192) : UINT32_MAX;
}

static void k_teardown(void *ctx)
{
    struct kctx *c = ctx;
    for (uint32_t i = 0; i < BENCH_MAX_CHAN; i++)
        for (int s = 0; s < 2; s++) {
            k_close(c->kind, &c->ep[s][i]);
            free(c->ep[s][i].rbuf);
        }
    free(c);
}

/* The ends of channel i; a: the queues' attributes (mq). 0 or < 0. */
static int k_open(struct kctx *c, const bench_msg_params *p, uint32_t i, struct mq_attr *a)
{
    struct timeval tv = {.tv_sec = (time_t)(p->timeout_ns / 1000000000),
                         .tv_usec = (long)(p->timeout_ns % 1000000000) / 1000};
    for (int d = 0; d < 2; d++) {
        struct kep *s = &c->ep[d][i], *r = &c->ep[d ^ 1][i];
        int fd[2];
        if (c->kind == BENCH_K_PIPE) {
            if (pipe2(fd, O_CLOEXEC) != 0)
                return k_fail(c, "pipe2", errno);
            r->rx = fd[0];
            s->tx = fd[1];
            /* writers do not block: a full pipe is waited for with poll */
            fcntl(s->tx, F_SETFL, O_NONBLOCK);
            continue;
        }
        if (c->kind == BENCH_K_MQ) {
            char name[64];
            snprintf(name, sizeof(name), "/%s-%u%c", p->name, i, d ? 'r' : 'f');
            mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600, a);
            if (q == (mqd_t)-1) {
                int e = errno, rc = k_fail(c, "mq_open", e);
                /* a limit of this machine (queue count / bytes): n/a */
                return e == EMFILE || e == ENOMEM || e == ENOSPC ? -EDQUOT : rc;
            }
            mq_unlink(name); /* nothing left behind, whatever happens next */
            s->tx = r->rx = (int)q;
            continue;
        }
        int seqpacket = c->kind == BENCH_K_SEQPACKET;
        if (d == 0) {
            int type = seqpacket ? SOCK_SEQPACKET : SOCK_STREAM;
            if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fd) != 0)
                return k_fail(c, "socketpair", errno);
            s->tx = s->rx = fd[0];
            r->tx = r->rx = fd[1];
        }
        setsockopt(s->tx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        setsockopt(s->tx, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (seqpacket && sock_bufs(s->tx, p->max_size) < 0)
            return k_fail(c, "SO_SNDBUF", errno);
    }
    return 0;
}

static int k_setup(void **out, const bench_msg_params *p)
{
    struct kctx *c = calloc(1, sizeof(*c));
    struct mq_attr a = {.mq_msgsize = p->max_size ? p->max_size : 1};
    struct rlimit rl;
    int e = 0;
    if (!c)
        return -ENOMEM;
    c->tname = p->tname;
    c->kind = p->variant;
    c->n = p->n_chan;
    c->timeout_ns = p->timeout_ns;
    for (uint32_t i = 0; i < BENCH_MAX_CHAN; i++)
        c->ep[0][i].tx = c->ep[0][i].rx = c->ep[1][i].tx = c->ep[1][i].rx = -1;
    if (c->kind == BENCH_K_MQ) {
        long mm = mq_limit("msg_max", 10);
        a.mq_maxmsg = p->depth < 1 ? 1 : p->depth > (uint32_t)mm ? mm : (long)p->depth;
        /* all queues of the user share RLIMIT_MSGQUEUE (819200 B by
         * default): shorten the queues so that ours fit in half of it */
        if (getrlimit(RLIMIT_MSGQUEUE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
            long fit = (long)(rl.rlim_cur / 2 / (2u * c->n)) / (a.mq_msgsize + 128);
            if (fit < 1) {
                bench_err("mq: %u queues of %ld-byte messages exceed RLIMIT_MSGQUEUE (%llu B)",
                          2u * c->n, a.mq_msgsize, (unsigned long long)rl.rlim_cur);
                e = -EDQUOT;
            }
            if (a.mq_maxmsg > fit)
                a.mq_maxmsg = fit;
        }
    }
    for (uint32_t i = 0; e == 0 && i < c->n; i++)
        e = k_open(c, p, i, &a);
    if (e != 0)
        k_teardown(c);
    else
        *out = c;
    return e;
}

static int k_attach(void *ctx, int side)
{
    struct kctx *c = ctx;
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->kind != BENCH_K_MQ)
            k_close(c->kind, &c->ep[side ^ 1][i]);
        if (c->kind == BENCH_K_PIPE || c->kind == BENCH_K_STREAM) {
            c->ep[side][i].rbuf = malloc(K_RBUF);
            if (!c->ep[side][i].rbuf)
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

/* poll one descriptor until *deadline (0: set to now + the timeout); 0 ready
 * (or an error the next call reports), else < 0 (printed as `what`) */
static int k_poll(const struct kctx *c, int fd, short ev, uint64_t *deadline, const char *what)
{
    for (int64_t left; (left = bench_left_ns(deadline, c->timeout_ns)) > 0;) {
        struct pollfd pf = {.fd = fd, .events = ev, .revents = 0};
        int r = poll(&pf, 1, (int)((left + 999999) / 1000000));
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return k_fail(c, what, errno);
    }
    return k_fail(c, what, ETIMEDOUT);
}

/* mq: one message sent (0) or received (its length) within the timeout, or < 0 */
static int k_mq(const struct kctx *c, int q, void *buf, uint32_t len, int tx)
{
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = ts.tv_nsec + c->timeout_ns;
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        ssize_t n = tx ? mq_timedsend((mqd_t)q, buf, len, 0, &ts)
                       : mq_timedreceive((mqd_t)q, buf, len, NULL, &ts);
        if (n >= 0)
            return (int)n;
        if (errno != EINTR)
            return k_fail(c, tx ? "mq_timedsend" : "mq_timedreceive", errno);
    }
}

/* seqpacket: one message sent (0) or received (its length), or < 0 */
static int k_packet(const struct kctx *c, int fd, void *buf, uint32_t len, int tx)
{
    for (;;) {
        struct iovec v = {.iov_base = buf, .iov_len = len};
        struct msghdr mh = {.msg_iov = &v, .msg_iovlen = 1};
        ssize_t n = tx ? send(fd, buf, len, MSG_NOSIGNAL) : recvmsg(fd, &mh, 0);
        if (n > 0 && (mh.msg_flags & MSG_TRUNC))
            return k_fail(c, "recvmsg (message larger than the buffer)", EMSGSIZE);
        if (n >= 0 && tx)
            return n == (ssize_t)len ? 0 : k_fail(c, "send (short)", EPROTO);
        if (n > 0)
            return (int)n;
        if (n == 0)
            return k_fail(c, "recvmsg", EPIPE);
        int r = k_errno(c, tx ? "send" : "recvmsg");
        if (r != 0)
            return r;
    }
}

static int k_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct kctx *c = ctx;
    struct kep *e = &c->ep[side][ch];
    void *p = (void *)(uintptr_t)buf;
    if (c->kind == BENCH_K_MQ)
        return k_mq(c, e->tx, p, len, 1);
    if (c->kind == BENCH_K_SEQPACKET)
        return k_packet(c, e->tx, p, len, 1);
    /* byte streams: length + payload in one writev, continued when short */
    uint32_t hdr = len;
    uint64_t deadline = 0;
    for (size_t done = 0; done < 4u + len;) {
        /* h bytes of the header left, then the payload from off */
        size_t h = done < 4 ? 4 - done : 0, off = done + h - 4;
        struct iovec v[2] = {{(char *)&hdr + 4 - h, h}, {(char *)p + off, len - off}};
        struct msghdr mh = {.msg_iov = h ? v : v + 1, .msg_iovlen = h ? 2 : 1};
        ssize_t n = c->kind == BENCH_K_STREAM ? sendmsg(e->tx, &mh, MSG_NOSIGNAL)
                                              : writev(e->tx, mh.msg_iov, (int)mh.msg_iovlen);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            return k_fail(c, "write", n < 0 ? errno : EPIPE);
        if (c->kind == BENCH_K_STREAM)
            return k_fail(c, "sendmsg", ETIMEDOUT);
        int r = k_poll(c, e->tx, POLLOUT, &deadline, "write (waiting for room)");
        if (r != 0)
            return r;
    }
    return 0;
}

/* one read into p (up to len): > 0 bytes, or < 0 */
static int k_read(const struct kctx *c, struct kep *e, void *p, size_t len, uint64_t *deadline)
{
    for (;;) {
        int r = c->kind == BENCH_K_PIPE ? k_poll(c, e->rx, POLLIN, deadline, "read (waiting)") : 0;
        if (r != 0)
            return r;
        ssize_t n = read(e->rx, p, len);
        if (n > 0)
            return (int)n;
        if (n == 0)
            return k_fail(c, "read", EPIPE); /* the peer is gone */
        if ((r = k_errno(c, "read")) != 0)
            return r;
    }
}

static int k_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct kctx *c = ctx;
    struct kep *e = &c->ep[side][ch];
    if (c->kind == BENCH_K_MQ)
        return k_mq(c, e->rx, buf, cap, 0);
    if (c->kind == BENCH_K_SEQPACKET)
        return k_packet(c, e->rx, buf, cap, 0);
    uint64_t deadline = 0;
    /* the length */
    while (e->rlen - e->roff < 4) {
        memmove(e->rbuf, e->rbuf + e->roff, e->rlen - e->roff);
        e->rlen -= e->roff;
        e->roff = 0;
        int n = k_read(c, e, e->rbuf + e->rlen, K_RBUF - e->rlen, &deadline);
        if (n < 0)
            return n;
        e->rlen += (uint32_t)n;
    }
    uint32_t len;
    memcpy(&len, e->rbuf + e->roff, 4);
    e->roff += 4;
    if (len > cap) {
        bench_err("%s: framed length %u exceeds the buffer (%u)", c->tname, len, cap);
        return -EBADMSG;
    }
    /* the payload: what the buffer holds, then read in place */
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

const bench_msg_ops bench_ops_kernel = BENCH_MSG_OPS(k, .recv = k_recv, .max_msg = k_max);
