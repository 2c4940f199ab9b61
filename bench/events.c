/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.c - `mdcom-bench events`: waiting through a pollable fd and a wait
 * set (include/mdcom/events.h) against the futex path and a raw futex, 64 B
 * blocking round trips; 32 channels served by one thread with a wait set
 * against 32 threads. Method and targets: docs/benchmarks.md, `events`.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "mdcom/events.h"
#include "mdcfg.h"

#define NCH 32u
#define MSG 64u
#define STOP 0xffffffffu

enum { M_RAW, M_FUTEX, M_SPIN, M_WS, M_FD, N_MODES };
static const char *const mode_name[N_MODES] = {"raw-futex", "futex", "futex+spin", "waitset",
                                               "fd-epoll"};

struct shared {
    _Atomic uint32_t word; /* raw futex: 1 = ping's turn done, 2 = pong's */
    _Atomic uint32_t stop; /* throughput: end */
    _Atomic uint32_t ready;
};

/* channel 2i: requests A -> B ("f<i>"), 2i + 1: replies B -> A ("r<i>") */
static bench_mdcfg g_mc;
static struct shared *g_sh;

static void fx_wait(_Atomic uint32_t *w, uint32_t v)
{
    while (atomic_load_explicit(w, memory_order_acquire) == v)
        syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, v, NULL, NULL, 0);
}

static void fx_set(_Atomic uint32_t *w, uint32_t v)
{
    atomic_store_explicit(w, v, memory_order_release);
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Receive one message on ch in mode md (fd: epoll on fd). */
static int rx(int md, mdcom_fifoch_t *ch, mdcom_waitset_t *ws, int ep, int fd, uint32_t *seq)
{
    uint8_t buf[MSG];
    int r;
    if (md == M_FUTEX || md == M_SPIN) {
        r = mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_FOREVER);
    } else {
        for (;;) {
            r = mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL);
            if (r != -ETIMEDOUT)
                break;
            if (md == M_WS) {
                mdcom_event ev;
                r = mdcom_waitset_wait(ws, &ev, 1, MDCOM_FOREVER);
                if (r < 0)
                    return r;
            } else {
                struct epoll_event e;
                (void)mdcom_fd_clear(fd); /* drained: re-arm before sleeping */
                r = mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL);
                if (r != -ETIMEDOUT)
                    break;
                if (epoll_wait(ep, &e, 1, -1) < 0 && errno != EINTR)
                    return -errno;
            }
        }
    }
    if (r < 4)
        return r < 0 ? r : -EBADMSG;
    memcpy(seq, buf, 4);
    return 0;
}

static int tx(mdcom_fifoch_t *ch, uint32_t seq)
{
    uint8_t buf[MSG];
    memset(buf, 0, sizeof buf);
    memcpy(buf, &seq, 4);
    return mdcom_fifoch_send(ch, buf, MSG, MDCOM_FOREVER);
}

struct side {
    mdcom_t *m;
    mdcom_fifoch_t *in, *out;
    mdcom_waitset_t *ws;
    int ep, fd;
};

static int side_mode(struct side *s, int md)
{
    uint32_t spin = md == M_SPIN ? 0 : MDCOM_NO_SPIN;
    mdcom_fifoch_set_spin(s->in, spin ? spin : 20000);
    mdcom_fifoch_set_spin(s->out, spin ? spin : 20000);
    s->ws = NULL;
    s->ep = s->fd = -1;
    if (md == M_WS) {
        if (mdcom_waitset_create(s->m, &s->ws) || mdcom_waitset_add_fifo(s->ws, s->in, MDCOM_EV_RX, 0))
            return -1;
        mdcom_waitset_set_spin(s->ws, MDCOM_NO_SPIN); /* blocking, as the futex row */
    } else if (md == M_FD) {
        struct epoll_event e = {.events = EPOLLIN};
        s->fd = mdcom_fifoch_fd(s->in, MDCOM_EV_RX);
        s->ep = epoll_create1(EPOLL_CLOEXEC);
        if (s->fd < 0 || s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->fd, &e))
            return -1;
    }
    return 0;
}

/* The throughput runs use every CPU, on both sides. */
static void unpin(void)
{
    cpu_set_t all;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&all);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, &all);
    sched_setaffinity(0, sizeof all, &all);
}

static void side_done(struct side *s)
{
    mdcom_fifoch_set_spin(s->in, 20000);
    mdcom_fifoch_set_spin(s->out, 20000);
    if (s->ws)
        mdcom_waitset_destroy(s->ws);
    if (s->fd >= 0)
        mdcom_fd_close(s->fd);
    if (s->ep >= 0)
        close(s->ep);
}

/* ---- throughput: 32 client threads (child) ---- */
struct cl {
    mdcom_t *m;
    uint32_t i;
    int err;
};

static void *client(void *p)
{
    struct cl *c = p;
    mdcom_fifoch_t *q, *a;
    uint32_t seq = 0, got;
    mdcom_fifoch_at(c->m, 2 * c->i + 1, &q); /* requests go B -> A (the r channels) */
    mdcom_fifoch_at(c->m, 2 * c->i, &a);
    while (!atomic_load_explicit(&g_sh->stop, memory_order_relaxed)) {
        if (tx(q, ++seq) || rx(M_SPIN, a, NULL, -1, -1, &got) || got != seq) {
            bench_err("client %u: round trip %u failed", c->i, seq);
            c->err = 1;
            break;
        }
    }
    tx(q, STOP);
    return NULL;
}

static int child(int iters)
{
    struct side s = {0};
    mdcom_init_opts o = {.attach_timeout_ns = 10000000000ll};
    if (mdcom_init(&s.m, &g_mc.cfg, 1, &o))
        return 1;
    mdcom_fifoch_at(s.m, 0, &s.in);
    mdcom_fifoch_at(s.m, 1, &s.out);
    for (int md = 0; md < N_MODES; md++) {
        uint32_t seq;
        if (md == M_RAW) {
            for (uint32_t k = 0; k < (uint32_t)iters; k++) {
                fx_wait(&g_sh->word, 2 * k); /* ping sets 2k + 1 */
                fx_set(&g_sh->word, 2 * k + 2);
            }
            continue;
        }
        if (side_mode(&s, md))
            return 1;
        atomic_fetch_add(&g_sh->ready, 1);
        for (;;) {
            if (rx(md, s.in, s.ws, s.ep, s.fd, &seq))
                return 1;
            if (seq == STOP)
                break;
            if (tx(s.out, seq))
                return 1;
        }
        side_done(&s);
    }
    /* throughput clients */
    unpin();
    {
        pthread_t th[NCH];
        struct cl c[NCH];
        for (int round = 0; round < 2; round++) {
            while (atomic_load(&g_sh->ready) < (uint32_t)(N_MODES - 1 + 2 * round + 1))
                usleep(1000);
            for (uint32_t i = 0; i < NCH; i++) {
                c[i] = (struct cl){s.m, i, 0};
                pthread_create(&th[i], NULL, client, &c[i]);
            }
            for (uint32_t i = 0; i < NCH; i++) {
                pthread_join(th[i], NULL);
                if (c[i].err)
                    return 1;
            }
            atomic_fetch_add(&g_sh->ready, 1);
        }
    }
    mdcom_term(s.m);
    return 0;
}

/* ---- throughput servers (parent) ---- */
struct srv {
    mdcom_t *m;
    uint32_t i;
    _Atomic uint64_t *count;
};

static void *server1(void *p)
{
    struct srv *v = p;
    mdcom_fifoch_t *q, *a;
    uint32_t seq;
    mdcom_fifoch_at(v->m, 2 * v->i + 1, &q);
    mdcom_fifoch_at(v->m, 2 * v->i, &a);
    for (;;) {
        if (rx(M_SPIN, q, NULL, -1, -1, &seq) || seq == STOP)
            break;
        if (tx(a, seq))
            break;
        atomic_fetch_add_explicit(v->count, 1, memory_order_relaxed);
    }
    return NULL;
}

static double run_tp(mdcom_t *m, int use_ws, double secs)
{
    _Atomic uint64_t count = 0;
    uint64_t t0, t1, n0, n1;
    pthread_t th[NCH];
    struct srv v[NCH];
    mdcom_waitset_t *ws = NULL;
    mdcom_fifoch_t *q[NCH], *a[NCH];
    uint32_t stopped = 0;
    atomic_store(&g_sh->stop, 0);
    if (!use_ws) {
        for (uint32_t i = 0; i < NCH; i++) {
            v[i] = (struct srv){m, i, &count};
            pthread_create(&th[i], NULL, server1, &v[i]);
        }
    } else {
        mdcom_waitset_create(m, &ws);
        for (uint32_t i = 0; i < NCH; i++) {
            mdcom_fifoch_at(m, 2 * i + 1, &q[i]);
            mdcom_fifoch_at(m, 2 * i, &a[i]);
            mdcom_waitset_add_fifo(ws, q[i], MDCOM_EV_RX, (void *)(uintptr_t)i);
        }
    }
    atomic_fetch_add(&g_sh->ready, 1); /* clients go */
    t0 = bench_now_ns();
    n0 = 0;
    t1 = t0;
    n1 = 0;
    if (!use_ws) {
        uint64_t end = t0 + (uint64_t)(secs * 1e9);
        while (bench_now_ns() < end)
            usleep(5000);
        n1 = atomic_load(&count);
        t1 = bench_now_ns();
        atomic_store(&g_sh->stop, 1);
        for (uint32_t i = 0; i < NCH; i++)
            pthread_join(th[i], NULL);
    } else {
        uint64_t end = t0 + (uint64_t)(secs * 1e9), served = 0;
        mdcom_event ev[NCH];
        while (stopped < NCH) {
            int r = mdcom_waitset_wait(ws, ev, NCH, 1000000000ll);
            if (r < 0)
                break;
            for (int k = 0; k < r; k++) {
                uint32_t i = (uint32_t)(uintptr_t)ev[k].user, seq;
                uint8_t buf[MSG];
                int n;
                while ((n = mdcom_fifoch_recv(q[i], buf, MSG, MDCOM_POLL)) >= 4) {
                    memcpy(&seq, buf, 4);
                    if (seq == STOP) {
                        stopped++;
                        break;
                    }
                    tx(a[i], seq);
                    served++;
                }
            }
            if (!n1 && bench_now_ns() >= end) {
                n1 = served;
                t1 = bench_now_ns();
                atomic_store(&g_sh->stop, 1);
            }
        }
        mdcom_waitset_destroy(ws);
    }
    while (atomic_load(&g_sh->ready) % 2 == 1) /* the client process finished the round */
        usleep(1000);
    return (double)(n1 - n0) / ((double)(t1 - t0) / 1e9);
}

typedef struct ev_opts {
    uint32_t iters;
    double secs;
    int quick;
    const char *json, *csv;
    double p50[N_MODES], p99[N_MODES], tp[2]; /* results, us and round trips / s */
} ev_opts;

static const bench_opt ev_opts_tab[] = {
    BOPT(ev_opts, iters, "iters", BO_U32, 1, 1e8, "N",
         "round trips per wait mode (default 20000, --quick 2000)"),
    BOPT(ev_opts, secs, "seconds", BO_DBL, 1e-3, 3600, "S",
         "32-channel streaming time (default 1, --quick 0.2)"),
    BENCH_OUT_OPTS(ev_opts),
    {0},
};

static void ev_rows(bench_row *w, void *arg)
{
    const ev_opts *o = arg;
    for (int md = 0; md < N_MODES + 2; md++) {
        const char *name = md < N_MODES ? mode_name[md] : md == N_MODES ? "32-threads" : "waitset-1";
        w->k = (bench_csv_key){.scenario = "events", .transport = name, .size = MSG,
                               .mode = md < N_MODES ? "rtt" : "throughput"};
        bench_json_obj_begin(w->j, NULL);
        bench_json_str(w->j, "path", name);
        if (md < N_MODES) {
            bench_row_num(w, "p50_us", "p50", o->p50[md], "us");
            bench_row_num(w, "p99_us", "p99", o->p99[md], "us");
        } else {
            bench_row_num(w, "round_trips_per_s", "round_trips_per_s", o->tp[md - N_MODES], "1/s");
        }
        bench_json_obj_end(w->j);
    }
}

static int events_main(int argc, char **argv)
{
    ev_opts eo = {0};
    uint64_t *lat;
    double *p50 = eo.p50, *p99 = eo.p99, *tp = eo.tp;
    struct side s = {0};
    pid_t pid;
    int st;
    int prc = bench_parsed(bench_opts_parse("events", ev_opts_tab, &eo, argc, argv),
                           &bench_cmd_events);
    if (prc >= 0)
        return prc;
    int iters = (int)(eo.iters ? eo.iters : eo.quick ? 2000 : 20000);
    double secs = eo.secs ? eo.secs : eo.quick ? 0.2 : 1.0;
    bench_run rn = {.cmd = "events", .json = eo.json, .csv = eo.csv, .quick = eo.quick,
                    .rows = ev_rows, .arg = &eo};
    if (bench_run_begin(&rn))
        return BENCH_EXIT_USAGE;
    signal(SIGINT, SIG_DFL); /* the loops do not poll bench_interrupted */
    signal(SIGTERM, SIG_DFL);
    char region[32];
    bench_unique_name(region, sizeof(region), "mdevb");
    bench_mdcfg_fill(&g_mc, region, NCH, MDCOM_CHAN_FIFO, MSG, 4);
    g_sh = mmap(NULL, sizeof *g_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    lat = calloc((size_t)iters, sizeof *lat);
    if (g_sh == MAP_FAILED || !lat)
        return BENCH_EXIT_ERROR;
    pid = fork();
    if (pid == 0) {
        bench_pin_self(rn.h.cpus.cpu[1]);
        _exit(child(iters));
    }
    {
        mdcom_init_opts o = {.attach_timeout_ns = 0};
        int r = mdcom_init(&s.m, &g_mc.cfg, 0, &o);
        if (r) {
            bench_err_mdcom("mdcom_init", r);
            kill(pid, SIGKILL);
            return BENCH_EXIT_ERROR;
        }
    }
    mdcom_fifoch_at(s.m, 1, &s.in);
    mdcom_fifoch_at(s.m, 0, &s.out);
    fprintf(rn.out, "64 B blocking round trip, %d iterations\n", iters);
    for (int md = 0; md < N_MODES; md++) {
        uint32_t seq;
        if (md == M_RAW) {
            for (uint32_t k = 0; k < (uint32_t)iters; k++) {
                uint64_t t = bench_now_ns();
                fx_set(&g_sh->word, 2 * k + 1);
                fx_wait(&g_sh->word, 2 * k + 1); /* pong sets 2k + 2 */
                lat[k] = bench_now_ns() - t;
            }
        } else {
            if (side_mode(&s, md))
                return BENCH_EXIT_ERROR;
            while (atomic_load(&g_sh->ready) < (uint32_t)md)
                usleep(1000);
            for (int k = 0; k < iters; k++) {
                uint64_t t = bench_now_ns();
                if (tx(s.out, (uint32_t)k + 1) || rx(md, s.in, s.ws, s.ep, s.fd, &seq) ||
                    seq != (uint32_t)k + 1) {
                    bench_err("%s: round trip %d failed", mode_name[md], k);
                    kill(pid, SIGKILL);
                    return BENCH_EXIT_ERROR;
                }
                lat[k] = bench_now_ns() - t;
            }
            tx(s.out, STOP);
            side_done(&s);
        }
        bench_stats ls;
        bench_stats_compute(lat, (size_t)iters, &ls);
        p50[md] = (double)ls.p50 / 1000.0;
        p99[md] = (double)ls.p99 / 1000.0;
    }
    unpin();
    tp[0] = run_tp(s.m, 0, secs);
    tp[1] = run_tp(s.m, 1, secs);
    waitpid(pid, &st, 0);
    mdcom_term(s.m);
    fprintf(rn.out, "%-12s %10s %10s %12s\n", "path", "p50 us", "p99 us", "p50/futex");
    for (int md = 0; md < N_MODES; md++)
        fprintf(rn.out, "%-12s %10.2f %10.2f %12.2f\n", mode_name[md], p50[md], p99[md],
                p50[md] / p50[M_FUTEX]);
    fprintf(rn.out, "32 channels, blocking round trips/s: 32 threads %.0f, 1 thread + wait set %.0f\n",
            tp[0], tp[1]);
    free(lat);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        bench_err("peer process failed");
        rn.failures++;
    }
    bench_target tg[2];
    bench_target_new(&tg[0], 1.3, NULL, "fd-epoll p50 / futex p50");
    bench_target_eval(&tg[0], p50[M_FD] / p50[M_FUTEX], 0);
    bench_target_new(&tg[1], 0.8, NULL, "32 channels: wait set / 32 threads round trips/s");
    bench_target_eval(&tg[1], tp[1] / tp[0], 1);
    snprintf(tg[0].detail, sizeof(tg[0].detail), "%.2f us / %.2f us", p50[M_FD], p50[M_FUTEX]);
    snprintf(tg[1].detail, sizeof(tg[1].detail), "%.0f / %.0f", tp[1], tp[0]);
    return bench_run_end(&rn, 0, tg, 2, 0);
}


BENCH_CMD(events, "events", "pollable fd and wait set vs futex path", events_main,
          .opts = ev_opts_tab,
          .about = "64 B blocking round trip through a pollable fd (epoll), a wait set, the\n"
                   "futex path and a raw futex; 32 channels served by one thread with a wait\n"
                   "set vs 32 threads. Ratios against the futex path / 32 threads.\n");
