/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roundtrip.c - the loops over the message interface, written once:
 * two-process sessions (setup, fork, pin, attach, one function per side,
 * detach, bounded reap, teardown) and the round trip of a (transport, size)
 * cell (A stamps seq, sends, receives the reply and checks it; B answers
 * with the same bytes until a 4-byte STOP; peek/release transports are read
 * in place). Method: docs/benchmarks.md, "Method common to all scenarios".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport.h"

/* Exit codes of side B. */
#define SES_EXIT_OK 0
#define SES_EXIT_MISMATCH 10
#define SES_EXIT_ERROR 11
#define SES_EXIT_TIMEOUT 12

uint32_t bench_tr_max_size(const bench_transport *t)
{
    uint32_t m = t->max_size ? t->max_size : UINT32_MAX;
    uint32_t v = t->msg && t->msg->max_msg ? t->msg->max_msg(t->variant) : UINT32_MAX;
    return v < m ? v : m;
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

int bench_reap(pid_t pid, int64_t timeout_ns, const char *tname)
{
    uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ns;
    int status = 0;
    for (;;) { /* timeout_ns < 0 (bench_child): no limit */
        pid_t w = waitpid(pid, &status, timeout_ns < 0 ? 0 : WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            bench_err("%s: waitpid: %s", tname, strerror(errno));
            return -1;
        }
        if (timeout_ns >= 0 && bench_now_ns() > deadline) {
            bench_err("%s: peer process %ld did not exit, killing it", tname, (long)pid);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return -1;
        }
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL); /* 1 ms; a signal: look again */
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (timeout_ns < 0)
        return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (WIFSIGNALED(status))
        bench_err("%s: peer process died of signal %d", tname, WTERMSIG(status));
    return -1;
}

int bench_child(int (*fn)(void *), void *arg, FILE *tee, char **out, size_t *len,
                int64_t timeout_ns, const char *name)
{
    int pfd[2];
    char tmp[4096];
    if (pipe(pfd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        /* exit, not _exit: the child's own atexit handlers must run (the
         * iceoryx transport stops the RouDi daemon it started there) */
        exit(fn(arg));
    }
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        bench_err("%s: fork: %s", name, strerror(errno));
        return -1;
    }
    FILE *mem = out ? open_memstream(out, len) : NULL; /* NUL-terminated */
    for (ssize_t n; (n = read(pfd[0], tmp, sizeof(tmp))) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (tee) {
            fwrite(tmp, 1, (size_t)n, tee);
            fflush(tee);
        }
        if (mem)
            fwrite(tmp, 1, (size_t)n, mem);
    }
    close(pfd[0]);
    if (mem && fclose(mem) == 0 && *len == 0) { /* the child wrote nothing: NULL */
        free(*out);
        *out = NULL;
    }
    return bench_reap(pid, timeout_ns, name);
}

/* ---- sessions ------------------------------------------------------------------ */

/* Pin, attach, run the side's function, detach: its result. */
static int ses_side(const bench_msg_job *j, void *ctx, int side)
{
    int cpu = side == BENCH_SIDE_A ? j->cpu_a : j->cpu_b;
    int rc = bench_pin_self(cpu);
    if (rc != 0)
        bench_err("%s: cannot pin side %c to cpu %d: %s", j->t->name, 'A' + side, cpu,
                  strerror(-rc));
    rc = j->t->msg->attach(ctx, side);
    if (rc != 0) {
        bench_err("%s: attach (side %c) failed", j->t->name, 'A' + side);
        return rc;
    }
    rc = (side == BENCH_SIDE_A ? j->fn_a : j->fn_b)(j->t->msg, ctx, side, j->arg);
    j->t->msg->detach(ctx, side);
    return rc;
}

/* A wait of side `side` ran past the job's timeout: counted, the first described. */
static void ses_timeout(const bench_msg_job *j, char side)
{
    if (!j->to->n++)
        snprintf(j->to->why, sizeof(j->to->why), "side %c waited longer than the %.3g s timeout",
                 side, (double)j->p.timeout_ns / 1e9);
}

int bench_msg_session(const bench_msg_job *j, unsigned *integrity, unsigned *failures)
{
    const bench_msg_ops *ops = j->t->msg;
    const char *name = j->t->name;
    unsigned i0 = *integrity, f0 = *failures, t0 = j->to ? j->to->n : 0;
    bench_msg_params p = j->p;
    p.tname = name;
    p.variant = j->t->variant;
    if (!p.name[0])
        bench_unique_name(p.name, sizeof(p.name), "mdb");
    void *ctx = NULL;
    int rc = ops->setup(&ctx, &p);
    if (rc == -EMSGSIZE || rc == -EDQUOT)
        return BENCH_SESSION_NA; /* printed by the transport */
    if (rc != 0) {
        bench_err("%s: setup failed: %s", name, strerror(rc < 0 ? -rc : EPROTO));
        (*failures)++;
        return -1;
    }
    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid == 0) {
        /* side B serves until side A says stop (a Ctrl-C reaches the whole
         * process group; the parent handles it); every wait of side B has a
         * timeout, so it cannot outlive a dead parent for long */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        rc = ses_side(j, ctx, BENCH_SIDE_B);
        /* _exit: no atexit handlers, no stdio flush of inherited buffers, and
         * nothing of the parent's state (an inherited attachment) touched */
        _exit(rc == 0                   ? SES_EXIT_OK
              : rc == BENCH_RT_MISMATCH ? SES_EXIT_MISMATCH
              : rc == -ETIMEDOUT        ? SES_EXIT_TIMEOUT
                                        : SES_EXIT_ERROR);
    }
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    if (pid < 0) {
        bench_err("%s: fork: %s", name, strerror(errno));
        (*failures)++;
    } else {
        rc = ses_side(j, ctx, BENCH_SIDE_A);
        *integrity += rc == BENCH_RT_MISMATCH;
        if (rc == -ETIMEDOUT && j->to)
            ses_timeout(j, 'A');
        else
            *failures += rc != 0 && rc != BENCH_RT_MISMATCH;
        int code = bench_reap(pid, p.timeout_ns + 1000000000LL, name);
        if (code == SES_EXIT_MISMATCH) {
            bench_err("%s: side B saw an integrity error", name);
            (*integrity)++;
        } else if (code == SES_EXIT_TIMEOUT && j->to) {
            ses_timeout(j, 'B');
        } else if (code != SES_EXIT_OK) {
            bench_err("%s: side B failed (exit %d)", name, code);
            (*failures)++;
        }
    }
    ops->teardown(ctx);
    signal(SIGPIPE, old_pipe);
    return *integrity == i0 && *failures == f0 && (!j->to || j->to->n == t0) ? 0 : -1;
}

bench_msg_job bench_job(const bench_transport *t, int cpu_a, int cpu_b, uint32_t n_chan,
                        uint32_t max_size, uint32_t depth, double timeout_s, bench_side_fn fn_a,
                        bench_side_fn fn_b, void *arg)
{
    bench_msg_params p = {.n_chan = n_chan,
                          .max_size = max_size,
                          .depth = depth,
                          .threads = n_chan,
                          .timeout_ns = (int64_t)(timeout_s * 1e9)};
    return (bench_msg_job){
        .t = t, .p = p, .cpu_a = cpu_a, .cpu_b = cpu_b, .fn_a = fn_a, .fn_b = fn_b, .arg = arg};
}

int bench_recv(const bench_msg_ops *ops, void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    if (ops->recv)
        return ops->recv(ctx, side, ch, buf, cap);
    const void *m = NULL;
    int n = ops->peek(ctx, side, ch, &m);
    if (n < 0)
        return n;
    if ((uint32_t)n > cap)
        n = -EMSGSIZE;
    else
        memcpy(buf, m, (size_t)n);
    ops->release(ctx, side, ch);
    return n;
}

/* ---- round trips ----------------------------------------------------------------- */

/* The next message on channel 0: in place (peek) or copied into buf
 * (always copied for one way: the receive returning is its end). */
static int rt_get(const bench_msg_ops *ops, void *ctx, int side, const bench_rt_side *a,
                  const unsigned char **msg)
{
    if (ops->peek && !a->t1)
        return ops->peek(ctx, side, 0, (const void **)msg);
    *msg = a->buf;
    return bench_recv(ops, ctx, side, 0, a->buf, a->size < 4 ? 4 : a->size);
}

static void rt_done(const bench_msg_ops *ops, void *ctx, int side, const bench_rt_side *a)
{
    if (ops->release && !a->t1)
        ops->release(ctx, side, 0);
}

/* 1 when the n bytes at m are a message of a->size bytes carrying seq */
static int rt_ok(const bench_msg_ops *ops, const bench_rt_side *a, const unsigned char *m, int n,
                 uint32_t seq)
{
    return (uint32_t)n == a->size &&
           (ops->header_only ? bench_head(m) == seq : bench_check_any(m, a->size, seq));
}

int bench_rt_serve(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    bench_rt_side *a = arg;
    int rc = 0;
    for (uint32_t seq = 1;; seq++) {
        const unsigned char *m;
        int n = rt_get(ops, ctx, side, a, &m);
        uint64_t t1 = bench_now_ns();
        if (n < 0)
            return n;
        if (n == 4 && bench_head(m) == BENCH_SEQ_STOP) {
            rt_done(ops, ctx, side, a);
            return 0; /* data never carries this seq */
        }
        if (!rt_ok(ops, a, m, n, seq)) {
            bench_err("round trip, side B: message %u: length %d (expected %u) or stamps wrong",
                      seq, n, a->size);
            rc = BENCH_RT_MISMATCH;
        } else if (a->t1) { /* one way: the arrival time, then a 4-byte ack */
            a->t1[seq - 1] = t1;
            rc = ops->send(ctx, side, 0, &seq, 4);
        } else {
            rc = ops->send(ctx, side, 0, m, (uint32_t)n); /* the answer first, then the release */
        }
        rt_done(ops, ctx, side, a);
        if (rc != 0)
            return rc;
    }
}

int bench_rt_one(const bench_msg_ops *ops, void *ctx, int side, bench_rt_side *a)
{
    uint32_t seq = ++a->seq;
    const unsigned char *m;
    bench_stamp_any(a->buf, a->size, seq);
    int rc = ops->send(ctx, side, 0, a->buf, a->size);
    if (rc != 0)
        return rc;
    int n = rt_get(ops, ctx, side, a, &m);
    if (n < 0)
        return n;
    if (a->t1 ? n != 4 || bench_head(m) != seq : !rt_ok(ops, a, m, n, seq)) {
        bench_err("round trip: reply to %u: length %d (expected %u) or stamps wrong", seq, n,
                  a->size);
        rc = BENCH_RT_MISMATCH;
    }
    rt_done(ops, ctx, side, a);
    return rc;
}

int bench_rt_stop(const bench_msg_ops *ops, void *ctx, int side, bench_rt_side *a)
{
    uint32_t stop = BENCH_SEQ_STOP;
    memcpy(a->buf, &stop, 4);
    return ops->send(ctx, side, 0, a->buf, 4);
}

int bench_rt_side_init(bench_rt_side *a, uint32_t size)
{
    uint32_t cap = size < 4 ? 4 : size;
    *a = (bench_rt_side){.size = size, .buf = malloc(cap)};
    if (a->buf)
        memset(a->buf, 0x5a, cap);
    return a->buf ? 0 : -ENOMEM;
}

typedef struct rt_arg {
    bench_rt_side s; /* first: side B's argument */
    const bench_rt_opts *o;
    uint64_t *samples;
    size_t n, n_end;
    bench_rt_result *r;
} rt_arg;

static int rt_side_a(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    rt_arg *a = arg;
    const bench_rt_opts *o = a->o;
    int rc = 0;
    /* warm-up: page faults, caches, branch predictors, futex hash, and at
     * least two passes over a pool of blocks; a quarter of the budget */
    uint64_t w0 = bench_now_ns(), wbudget = o->budget_ns / 4;
    for (uint64_t i = 0; i < o->warmup && rc == 0 && !bench_interrupted; i++) {
        rc = bench_rt_one(ops, ctx, side, &a->s);
        a->r->warmup_done += rc == 0;
        if (wbudget && i >= 32 && bench_now_ns() - w0 > wbudget)
            break;
    }
    uint64_t m0 = bench_now_ns();
    while (rc == 0 && a->n < a->n_end && !bench_interrupted) {
        uint64_t t0 = bench_now_ns();
        rc = bench_rt_one(ops, ctx, side, &a->s);
        uint64_t t1 = bench_now_ns();
        if (rc != 0)
            break;
        a->samples[a->n++] = o->t1 ? t0 : t1 - t0;
        if (o->budget_ns && t1 - m0 > o->budget_ns)
            break;
    }
    if (rc != 0)
        bench_err("round trip %u failed", a->s.seq);
    /* STOP, also after an error: side B then ends without waiting for its
     * timeout (best effort) */
    int src = bench_rt_stop(ops, ctx, side, &a->s);
    return rc ? rc : src;
}

int bench_rt_chunk(const bench_transport *t, const bench_rt_opts *o, uint64_t *samples, size_t *np,
                   bench_rt_result *r)
{
    r->load = bench_loadavg();
    if (t->ext)
        return bench_ext_chunk(t, o, samples, np, r);
    rt_arg a = {.o = o, .samples = samples, .n = *np, .n_end = *np + o->samples, .r = r};
    if (bench_rt_side_init(&a.s, o->size) != 0) {
        r->failures++;
        return -1;
    }
    a.s.t1 = o->t1;
    bench_msg_job j = bench_job(t, o->cpu_ping, o->cpu_pong, 1, o->max_size < 4 ? 4 : o->max_size,
                                8, (double)o->timeout_ns / 1e9, rt_side_a, bench_rt_serve, &a);
    bench_timeouts to = {0};
    j.to = &to;
    int rc = bench_msg_session(&j, &r->integrity, &r->failures);
    r->timeouts += to.n;
    if (to.n)
        snprintf(r->why, sizeof(r->why), "%s", to.why);
    r->na |= rc == BENCH_SESSION_NA;
    if (rc != 0 && rc != BENCH_SESSION_NA)
        bench_err("%s %u B: round trips failed", t->name, o->size);
    free(a.s.buf);
    *np = a.n;
    return rc == 0 ? 0 : -1;
}
