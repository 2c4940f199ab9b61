/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * msgrt.c - the message interface put to work: round trips for transports
 * that only implement bench_msg_ops, and two-process sessions (fork, pin,
 * attach, run one function per side, reap) for the message scenarios.
 *
 * Round trip over messages (bench_msgrt_*):
 *   ping: stamp seq into the first min(4, size) bytes (and the last 4 for
 *         size >= 8), send, receive the reply, check length and stamps.
 *   pong: receive; a 4-byte message carrying BENCH_SEQ_STOP ends it;
 *         otherwise check length == size and stamps == last + 1, send it back.
 * Sizes below 4 carry the low bytes of seq, so a lost or repeated message is
 * still seen (modulo 2^(8 size)).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport.h"

uint32_t bench_tr_max_size(const bench_transport *t)
{
    uint32_t m = t->max_size ? t->max_size : UINT32_MAX;
    if (t->msg && t->msg->max_msg) {
        uint32_t v = t->msg->max_msg();
        if (v < m)
            m = v;
    }
    return m;
}

void *bench_shared_alloc(size_t len)
{
    void *p = mmap(NULL, len ? len : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void bench_shared_free(void *p, size_t len)
{
    if (p)
        munmap(p, len ? len : 1);
}

/* ---- round trips ------------------------------------------------------------ */

struct mrt {
    const bench_msg_ops *ops;
    void *in;
    uint32_t size, cap;
    int attached;
    unsigned char *buf;
};

int bench_msgrt_setup(void **out, const bench_rt_params *p, const bench_msg_ops *ops)
{
    struct mrt *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->ops = ops;
    c->size = p->size;
    c->cap = p->max_size < 4 ? 4 : p->max_size;
    c->buf = malloc(c->cap);
    if (!c->buf) {
        free(c);
        return -ENOMEM;
    }
    memset(c->buf, 0x5a, c->cap);
    bench_msg_params mp;
    memset(&mp, 0, sizeof(mp));
    mp.n_chan = 1;
    mp.max_size = c->cap;
    mp.depth = 8;
    mp.threads = 1;
    mp.timeout_ns = p->timeout_ns;
    snprintf(mp.name, sizeof(mp.name), "%s", p->name);
    int rc = ops->setup(&c->in, &mp);
    if (rc != 0) {
        free(c->buf);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int bench_msgrt_pong(void *ctx)
{
    struct mrt *c = ctx;
    int rc = c->ops->attach(c->in, BENCH_SIDE_B);
    if (rc != 0)
        return rc;
    uint32_t last = 0;
    for (;;) {
        int n = c->ops->recv(c->in, BENCH_SIDE_B, 0, c->buf, c->cap);
        if (n < 0) {
            rc = n;
            break;
        }
        if (n == 4 && bench_head(c->buf) == BENCH_SEQ_STOP)
            break; /* data never carries this seq */
        if ((uint32_t)n != c->size || !bench_check_any(c->buf, c->size, last + 1)) {
            bench_err("pong: message %u: length %d (expected %u) or stamps wrong", last + 1, n,
                      c->size);
            rc = BENCH_RT_MISMATCH;
            break;
        }
        last++;
        rc = c->ops->send(c->in, BENCH_SIDE_B, 0, c->buf, (uint32_t)n);
        if (rc != 0)
            break;
    }
    c->ops->detach(c->in, BENCH_SIDE_B);
    return rc;
}

int bench_msgrt_ping_open(void *ctx)
{
    struct mrt *c = ctx;
    int rc = c->ops->attach(c->in, BENCH_SIDE_A);
    c->attached = rc == 0;
    return rc;
}

int bench_msgrt_ping(void *ctx, uint32_t seq)
{
    struct mrt *c = ctx;
    bench_stamp_any(c->buf, c->size, seq);
    int rc = c->ops->send(c->in, BENCH_SIDE_A, 0, c->buf, c->size);
    if (rc != 0)
        return rc;
    int n = c->ops->recv(c->in, BENCH_SIDE_A, 0, c->buf, c->cap);
    if (n < 0)
        return n;
    if ((uint32_t)n != c->size || !bench_check_any(c->buf, c->size, seq)) {
        bench_err("ping: reply to %u: length %d (expected %u) or stamps wrong", seq, n, c->size);
        return BENCH_RT_MISMATCH;
    }
    return 0;
}

void bench_msgrt_stop(void *ctx)
{
    struct mrt *c = ctx;
    if (!c->attached)
        return; /* the peer times out or sees the end of its channel */
    uint32_t stop = BENCH_SEQ_STOP;
    memcpy(c->buf, &stop, 4);
    c->ops->send(c->in, BENCH_SIDE_A, 0, c->buf, 4);
}

void bench_msgrt_teardown(void *ctx)
{
    struct mrt *c = ctx;
    if (c->attached)
        c->ops->detach(c->in, BENCH_SIDE_A);
    c->ops->teardown(c->in);
    free(c->buf);
    free(c);
}

/* ---- sessions ------------------------------------------------------------------ */

#define SES_EXIT_OK 0
#define SES_EXIT_MISMATCH 10
#define SES_EXIT_ERROR 11

int bench_msg_session(const bench_msg_job *j, unsigned *integrity, unsigned *failures)
{
    const bench_msg_ops *ops = j->t->msg;
    unsigned i0 = *integrity, f0 = *failures;
    if (!ops) {
        bench_err("%s: no message interface", j->t->name);
        (*failures)++;
        return -1;
    }
    bench_msg_params p = j->p;
    if (!p.name[0])
        bench_unique_name(p.name, sizeof(p.name), "mdb");
    void *ctx = NULL;
    int rc = ops->setup(&ctx, &p);
    if (rc == -EMSGSIZE || rc == -EDQUOT)
        return BENCH_SESSION_NA; /* printed by the transport */
    if (rc != 0) {
        bench_err("%s: setup failed: %s", j->t->name, strerror(rc < 0 ? -rc : EPROTO));
        (*failures)++;
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        bench_err("%s: fork: %s", j->t->name, strerror(errno));
        (*failures)++;
        ops->teardown(ctx);
        return -1;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        int prc = bench_pin_self(j->cpu_b);
        if (prc != 0)
            bench_err("%s: cannot pin side B to cpu %d: %s", j->t->name, j->cpu_b, strerror(-prc));
        rc = ops->attach(ctx, BENCH_SIDE_B);
        if (rc == 0) {
            rc = j->fn_b(ops, ctx, BENCH_SIDE_B, j->arg);
            ops->detach(ctx, BENCH_SIDE_B);
        }
        _exit(rc == 0 ? SES_EXIT_OK : rc == BENCH_RT_MISMATCH ? SES_EXIT_MISMATCH : SES_EXIT_ERROR);
    }
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    int prc = bench_pin_self(j->cpu_a);
    if (prc != 0)
        bench_err("%s: cannot pin side A to cpu %d: %s", j->t->name, j->cpu_a, strerror(-prc));
    rc = ops->attach(ctx, BENCH_SIDE_A);
    if (rc == 0) {
        rc = j->fn_a(ops, ctx, BENCH_SIDE_A, j->arg);
        ops->detach(ctx, BENCH_SIDE_A);
    } else {
        bench_err("%s: attach (side A) failed", j->t->name);
    }
    if (rc == BENCH_RT_MISMATCH)
        (*integrity)++;
    else if (rc != 0)
        (*failures)++;
    int code = bench_reap(pid, p.timeout_ns + 1000000000LL, j->t->name);
    if (code == SES_EXIT_MISMATCH) {
        bench_err("%s: side B saw an integrity error", j->t->name);
        (*integrity)++;
    } else if (code != SES_EXIT_OK) {
        bench_err("%s: side B failed (exit %d)", j->t->name, code);
        (*failures)++;
    }
    ops->teardown(ctx);
    signal(SIGPIPE, old_pipe);
    return *integrity == i0 && *failures == f0 ? 0 : -1;
}
