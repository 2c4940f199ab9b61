/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.c - `mdcom-bench events`: waiting through a pollable fd and a wait
 * set (include/mdcom/events.h) against the futex path and a raw futex, 64 B
 * blocking round trips; 32 channels served by one thread with a wait set
 * against 32 threads. Method and targets: docs/benchmarks.md, `events`.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mdcfg.h"
#include "mdcom/events.h"
#include "transport.h"

#define NCH 32u
#define MSG 64u

/* The round trips' wait paths and the transports that measure them; the
 * names of the two 32-channel servers follow. */
enum { M_RAW, M_FUTEX, M_SPIN, M_WS, M_FD, N_MODES };
static const char *const mode_name[N_MODES + 2] = {
    "raw-futex", "futex", "futex+spin", "waitset", "fd-epoll", "32-threads", "waitset-1"};
static const char *const mode_tr[N_MODES] = {"raw-futex", "mdcom-copy-block", "mdcom-copy-adaptive",
                                             "mdcom-copy-waitset", "mdcom-copy-fd"};

/* The 32-channel run: this process's attachment and its channel pairs, the
 * config, and the flags both processes share. */
static mdcom_t *g_m;
static mdcom_fifoch_t *g_q[NCH], *g_a[NCH]; /* requests B -> A (the r channels), answers */
static bench_mdcfg g_mc;
static struct {
    _Atomic uint32_t stop;  /* the clients end their loops */
    _Atomic uint32_t ready; /* odd: the servers are up; even: the clients are done */
} * g_sh;
static _Atomic uint64_t g_count; /* round trips the server threads answered */

static void open_pairs(void)
{
    for (uint32_t i = 0; i < NCH; i++) {
        mdcom_fifoch_at(g_m, 2 * i + 1, &g_q[i]);
        mdcom_fifoch_at(g_m, 2 * i, &g_a[i]);
    }
}

/* Receive one message on ch: its seq. */
static int rx(mdcom_fifoch_t *ch, uint32_t *seq, int64_t timeout)
{
    uint8_t buf[MSG];
    int r = mdcom_fifoch_recv(ch, buf, sizeof buf, timeout);
    if (r < 4)
        return r < 0 ? r : -EBADMSG;
    memcpy(seq, buf, 4);
    return 0;
}

static int tx(mdcom_fifoch_t *ch, uint32_t seq)
{
    uint8_t buf[MSG] = {0};
    memcpy(buf, &seq, 4);
    return mdcom_fifoch_send(ch, buf, MSG, MDCOM_FOREVER);
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

/* A client thread (child): round trips on pair i until told to stop;
 * non-NULL when one failed. */
static void *client(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg, seq = 0, got;
    void *err = NULL;
    while (!atomic_load_explicit(&g_sh->stop, memory_order_relaxed)) {
        if (tx(g_q[i], ++seq) || rx(g_a[i], &got, MDCOM_FOREVER) || got != seq) {
            bench_err("client %u: round trip %u failed", i, seq);
            err = (void *)1;
            break;
        }
    }
    tx(g_q[i], BENCH_SEQ_STOP);
    return err;
}

/* The client process: 32 client threads, once per server kind. */
static int child(void)
{
    mdcom_init_opts o = {.attach_timeout_ns = 10000000000ll};
    pthread_t th[NCH];
    if (mdcom_init(&g_m, &g_mc.cfg, 1, &o))
        return 1;
    open_pairs();
    unpin();
    for (uint32_t round = 0; round < 2; round++) {
        while (atomic_load(&g_sh->ready) < 2 * round + 1) /* the servers are up */
            usleep(1000);
        for (uintptr_t i = 0; i < NCH; i++)
            pthread_create(&th[i], NULL, client, (void *)i);
        for (uint32_t i = 0; i < NCH; i++) {
            void *err;
            pthread_join(th[i], &err);
            if (err)
                return 1;
        }
        atomic_fetch_add(&g_sh->ready, 1);
    }
    mdcom_term(g_m);
    return 0;
}

/* A server thread (parent): answers pair i until its client's STOP. */
static void *server1(void *arg)
{
    uint32_t i = (uint32_t)(uintptr_t)arg, seq;
    while (rx(g_q[i], &seq, MDCOM_FOREVER) == 0 && seq != BENCH_SEQ_STOP && tx(g_a[i], seq) == 0)
        atomic_fetch_add_explicit(&g_count, 1, memory_order_relaxed);
    return NULL;
}

/* Serve the clients with 32 threads or with one thread and a wait set
 * (use_ws) for secs: round trips / s. */
static double run_tp(int use_ws, double secs)
{
    pthread_t th[NCH];
    mdcom_waitset_t *ws = NULL;
    atomic_store(&g_sh->stop, 0);
    atomic_store(&g_count, 0);
    if (use_ws)
        mdcom_waitset_create(g_m, &ws);
    for (uintptr_t i = 0; i < NCH; i++) {
        if (!use_ws)
            pthread_create(&th[i], NULL, server1, (void *)i);
        else
            mdcom_waitset_add_fifo(ws, g_q[i], MDCOM_EV_RX, (void *)i);
    }
    atomic_fetch_add(&g_sh->ready, 1); /* clients go */
    uint64_t t0 = bench_now_ns(), end = t0 + (uint64_t)(secs * 1e9), t1 = t0, n1 = 0;
    if (!use_ws) {
        while (bench_now_ns() < end)
            usleep(5000);
        n1 = atomic_load(&g_count);
        t1 = bench_now_ns();
        atomic_store(&g_sh->stop, 1);
        for (uint32_t i = 0; i < NCH; i++)
            pthread_join(th[i], NULL);
    } else {
        uint64_t served = 0;
        mdcom_event ev[NCH];
        for (uint32_t stopped = 0; stopped < NCH;) {
            int r = mdcom_waitset_wait(ws, ev, NCH, 1000000000ll);
            if (r < 0)
                break;
            for (int k = 0; k < r; k++) {
                uint32_t i = (uint32_t)(uintptr_t)ev[k].user, seq;
                while (rx(g_q[i], &seq, MDCOM_POLL) == 0) {
                    if (seq == BENCH_SEQ_STOP) {
                        stopped++;
                        break;
                    }
                    tx(g_a[i], seq);
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
    return (double)n1 / ((double)(t1 - t0) / 1e9);
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
        w->k = (bench_csv_key){.scenario = "events",
                               .transport = mode_name[md],
                               .size = MSG,
                               .mode = md < N_MODES ? "rtt" : "throughput"};
        bench_json_obj_begin(w->j, NULL);
        bench_json_str(w->j, "path", mode_name[md]);
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
    int st = 0;
    int prc =
        bench_parsed(bench_opts_parse("events", ev_opts_tab, &eo, argc, argv), &bench_cmd_events);
    if (prc >= 0)
        return prc;
    uint64_t iters = eo.iters ? eo.iters : eo.quick ? 2000 : 20000;
    double secs = eo.secs ? eo.secs : eo.quick ? 0.2 : 1.0;
    bench_run rn = BENCH_RUN("events", eo, .rows = ev_rows, .arg = &eo);
    uint64_t *lat = calloc(iters, sizeof *lat);
    if (!lat || bench_run_begin(&rn)) {
        free(lat);
        return lat ? BENCH_EXIT_USAGE : BENCH_EXIT_ERROR;
    }
    /* the round trips: the shared loop over each wait path's transport */
    fprintf(rn.out, "64 B blocking round trip, %llu samples\n", (unsigned long long)iters);
    for (int md = 0; md < N_MODES && !bench_interrupted; md++) {
        bench_rt_opts ro = {.size = MSG,
                            .max_size = MSG,
                            .samples = iters,
                            .warmup = iters / 10,
                            .timeout_ns = 5000000000ll,
                            .cpu_ping = rn.h.cpus.cpu[0],
                            .cpu_pong = rn.h.cpus.cpu[1]};
        bench_rt_result r = {0};
        size_t n = 0;
        bench_stats ls;
        bench_progress("events: %s round trips", mode_name[md]);
        bench_rt_chunk(bench_transport_find(mode_tr[md]), &ro, lat, &n, &r);
        bench_progress_end();
        rn.integrity += r.integrity;
        rn.failures += r.failures + r.timeouts; /* no retry here: one run of each path */
        bench_stats_compute(lat, n, &ls);
        eo.p50[md] = (double)ls.p50 / 1000.0;
        eo.p99[md] = (double)ls.p99 / 1000.0;
    }
    free(lat);
    /* 32 channels: this process serves, a child runs the clients */
    char region[32];
    bench_unique_name(region, sizeof(region), "mdevb");
    bench_mdcfg_fill(&g_mc, region, NCH, MDCOM_CHAN_FIFO, MSG, 4);
    g_sh = bench_shared_alloc(sizeof *g_sh);
    if (!g_sh || mdcom_init(&g_m, &g_mc.cfg, 0, NULL) != 0) {
        bench_err("events: no region for the 32-channel run");
        return bench_run_end(&rn, BENCH_EXIT_ERROR, NULL, 0, 0);
    }
    open_pairs();
    signal(SIGINT, SIG_DFL); /* the 32-channel loops do not poll bench_interrupted */
    signal(SIGTERM, SIG_DFL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(child());
    if (pid > 0) {
        unpin();
        eo.tp[0] = run_tp(0, secs);
        eo.tp[1] = run_tp(1, secs);
        waitpid(pid, &st, 0);
    }
    mdcom_term(g_m);
    fprintf(rn.out, "%-12s %10s %10s %12s\n", "path", "p50 us", "p99 us", "p50/futex");
    for (int md = 0; md < N_MODES; md++)
        fprintf(rn.out, "%-12s %10.2f %10.2f %12.2f\n", mode_name[md], eo.p50[md], eo.p99[md],
                eo.p50[md] / eo.p50[M_FUTEX]);
    fprintf(rn.out,
            "32 channels, blocking round trips/s: 32 threads %.0f, 1 thread + wait set %.0f\n",
            eo.tp[0], eo.tp[1]);
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        bench_err("peer process failed");
        rn.failures++;
    }
    bench_target tg[2];
    bench_target_new(&tg[0], 1.3, NULL, "fd-epoll p50 / futex p50");
    bench_target_eval(&tg[0], eo.p50[M_FD] / eo.p50[M_FUTEX], 0);
    snprintf(tg[0].detail, sizeof(tg[0].detail), "%.2f us / %.2f us", eo.p50[M_FD],
             eo.p50[M_FUTEX]);
    bench_target_new(&tg[1], 0.8, NULL, "32 channels: wait set / 32 threads round trips/s");
    bench_target_eval(&tg[1], eo.tp[1] / eo.tp[0], 1);
    snprintf(tg[1].detail, sizeof(tg[1].detail), "%.0f / %.0f", eo.tp[1], eo.tp[0]);
    return bench_run_end(&rn, 0, tg, 2, 0);
}

BENCH_CMD(events, "events", "pollable fd and wait set vs futex path", events_main,
          .opts = ev_opts_tab,
          .about = "64 B blocking round trip through a pollable fd (epoll), a wait set, the\n"
                   "futex path and a raw futex; 32 channels served by one thread with a wait\n"
                   "set vs 32 threads. Ratios against the futex path / 32 threads.\n");
