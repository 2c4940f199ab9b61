/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * roundtrip.c - run one chunk of a (transport, size) cell between two
 * processes (a cell is one or more chunks: latency.c's rounds).
 *
 *   parent                         child (fork)
 *   setup()  (shared state)
 *   fork ---------------------->   pin to cpu_pong
 *   pin to cpu_ping                pong(): serve until BENCH_SEQ_STOP
 *   ping_open()
 *   warm-up round trips
 *   timed round trips: t0 = now; ping(seq); t1 = now; sample = t1 - t0
 *   stop() ------------------->    returns, _exit(status)
 *   waitpid (bounded, then SIGKILL)
 *   teardown()
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

/* Exit codes of the pong process. */
#define PONG_EXIT_OK 0
#define PONG_EXIT_MISMATCH 10
#define PONG_EXIT_ERROR 11

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000u, .tv_nsec = (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Wait for the child at most timeout_ns, then kill it. Returns its exit code,
 * or -1 when it had to be killed or died of a signal. */
int bench_reap(pid_t pid, int64_t timeout_ns, const char *tname)
{
    uint64_t deadline = bench_now_ns() + (uint64_t)timeout_ns;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            bench_err("%s: waitpid: %s", tname, strerror(errno));
            return -1;
        }
        if (bench_now_ns() > deadline) {
            bench_err("%s: pong process %ld did not exit, killing it", tname, (long)pid);
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return -1;
        }
        sleep_ms(1);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        bench_err("%s: pong process died of signal %d", tname, WTERMSIG(status));
    return -1;
}

int bench_rt_chunk(const bench_transport *t, const bench_rt_opts *o, uint64_t *samples, size_t *np,
                   bench_rt_result *r)
{
    if (t->ext)
        return bench_ext_chunk(t, o, samples, np, r);
    uint64_t cell_t0 = bench_now_ns();
    unsigned integrity0 = r->integrity, failures0 = r->failures;

    bench_rt_params p;
    memset(&p, 0, sizeof(p));
    p.size = o->size;
    p.max_size = o->max_size;
    p.timeout_ns = o->timeout_ns;
    bench_unique_name(p.name, sizeof(p.name), "mdb");

    void *ctx = NULL;
    int rc = t->setup(&ctx, &p);
    if (rc == -EMSGSIZE) { /* this size is beyond the transport: n/a */
        r->na = 1;
        return -1;
    }
    if (rc != 0) {
        r->failures++;
        return -1;
    }

    fflush(NULL); /* nothing buffered may be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        bench_err("%s: fork: %s", t->name, strerror(errno));
        r->failures++;
        t->teardown(ctx);
        return -1;
    }
    if (pid == 0) {
        /* the peer serves until the ping side says stop (a Ctrl-C reaches
         * the whole process group; the parent handles it); every wait of the
         * peer has a timeout, so it cannot outlive a dead parent for long */
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        int prc = bench_pin_self(o->cpu_pong);
        if (prc != 0)
            bench_err("%s: cannot pin pong process to cpu %d: %s", t->name, o->cpu_pong,
                      strerror(-prc));
        rc = t->pong(ctx);
        /* _exit: no atexit handlers, no stdio flush of inherited buffers, and
         * nothing of the parent's state (e.g. an inherited mdcom attachment)
         * is touched. */
        _exit(rc == 0 ? PONG_EXIT_OK : rc == BENCH_RT_MISMATCH ? PONG_EXIT_MISMATCH : PONG_EXIT_ERROR);
    }

    int prc = bench_pin_self(o->cpu_ping);
    if (prc != 0)
        bench_err("%s: cannot pin ping process to cpu %d: %s", t->name, o->cpu_ping, strerror(-prc));

    size_t n = *np, n_end = *np + o->samples;
    uint32_t seq = 0;
    rc = t->ping_open(ctx);
    if (rc == 0) {
        /* warm-up: page faults, caches, branch predictors, futex hash, and at
         * least two passes over a pool of blocks; a quarter of the budget */
        uint64_t w0 = bench_now_ns();
        uint64_t wbudget = o->budget_ns / 4;
        for (uint64_t i = 0; i < o->warmup; i++) {
            rc = t->ping(ctx, ++seq);
            if (rc != 0)
                break;
            r->warmup_done++;
            if (bench_interrupted)
                break;
            if (wbudget && i >= 32 && bench_now_ns() - w0 > wbudget)
                break;
        }
    }
    if (rc == 0) {
        uint64_t m0 = bench_now_ns();
        while (n < n_end) {
            uint64_t t0 = bench_now_ns();
            rc = t->ping(ctx, ++seq);
            uint64_t t1 = bench_now_ns();
            if (rc != 0)
                break;
            samples[n++] = t1 - t0;
            if (bench_interrupted)
                break;
            if (o->budget_ns && t1 - m0 > o->budget_ns) {
                r->budget_hit |= n < n_end;
                break;
            }
        }
    }
    if (rc == BENCH_RT_MISMATCH) {
        bench_err("%s %u B: integrity error at seq %u", t->name, o->size, seq);
        r->integrity++;
    } else if (rc != 0) {
        bench_err("%s %u B: round trip %u failed", t->name, o->size, seq);
        r->failures++;
    }

    t->stop(ctx);
    int code = bench_reap(pid, o->timeout_ns + 1000000000LL, t->name);
    if (code == PONG_EXIT_MISMATCH) {
        bench_err("%s %u B: pong side saw an integrity error", t->name, o->size);
        r->integrity++;
    } else if (code < 0) {
        bench_err("%s %u B: pong side did not finish", t->name, o->size);
        r->failures++;
    } else if (code != PONG_EXIT_OK) {
        bench_err("%s %u B: pong side failed (exit %d)", t->name, o->size, code);
        r->failures++;
    }
    t->teardown(ctx);

    *np = n;
    r->seconds += (double)(bench_now_ns() - cell_t0) / 1e9;
    return r->integrity == integrity0 && r->failures == failures0 ? 0 : -1;
}
