/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread_metric.c - `mdcom-bench thread-metric`: Thread-Metric style scores
 * (iterations per reporting period) across two domains: message processing
 * on every transport, synchronization on an SMEM lock (solo and contended;
 * baseline a process-shared pthread mutex), published scores for scale.
 * Method: docs/benchmarks.md, `thread-metric`.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mdcfg.h"
#include "mdcom/mdcom.h"
#include "transport.h"

#define TM_MAX_TR 24
#define TM_MAX_PERIODS 64
#define TM_PUB_MSG 4689994.0
#define TM_PUB_SYNC 7183628.0
#define TM_PUB(r) (!strcmp((r)->test, "message") ? TM_PUB_MSG : TM_PUB_SYNC)

typedef struct tm_opts {
    double period;
    uint32_t periods;
    double timeout_s;
    int quick, no_msg, no_sync;
    const char *json, *csv, *trs_s;
    const bench_transport *tr[TM_MAX_TR];
    unsigned n_tr;
} tm_opts;

typedef struct tm_res {
    const char *test, *name;
    int ok;
    unsigned integrity, failures;
    unsigned n;
    uint64_t score[TM_MAX_PERIODS];
    double seconds[TM_MAX_PERIODS];
    uint64_t peer; /* synchronization: the peer's iterations in all periods */
} tm_res;

#define TM_MAX_RES (TM_MAX_TR + 8)
static tm_res tm_res_v[TM_MAX_RES];
static unsigned tm_n_res;

static const bench_opt tm_opts_tab[] = {
    BOPT(tm_opts, period, "period", BO_DBL, 1e-3, 3600, "S",
         "reporting period (default 30 s as Thread-Metric; --quick 0.5)"),
    BOPT(tm_opts, periods, "periods", BO_U32, 1, TM_MAX_PERIODS, "N",
         "reporting periods per test (default 1)"),
    BOPT(tm_opts, trs_s, "transports", BO_STR, 0, 0, "LIST",
         "message processing transports (default\nmdcom-zc-poll,mdcom-copy-poll,mdcom-zc-block,"
         "mdcom-copy-block,\nraw-spin,raw-futex,pipe,unix-seqpacket,mq; 'all')"),
    BOPT(tm_opts, no_msg, "no-message", BO_FLAG, 1, 0, NULL, "skip the message processing test"),
    BOPT(tm_opts, no_sync, "no-sync", BO_FLAG, 1, 0, NULL, "skip the synchronization test"),
    BENCH_TIMEOUT_OPT(tm_opts),
    BENCH_OUT_OPTS(tm_opts),
    {0},
};

/* 1000 iterations of warm-up, then iterations in batches of 64 until each
 * reporting period ends: r's scores. *total: all iterations. 0 or the first
 * error. Always inlined: each test's iteration is a direct call. */
__attribute__((always_inline)) static inline int
tm_periods(const tm_opts *o, tm_res *r, int (*iter)(void *), void *arg, uint64_t *total)
{
    int rc = 0;
    for (*total = 0; *total < 1000 && rc == 0; ++*total)
        rc = iter(arg);
    for (unsigned per = 0; per < o->periods && rc == 0 && !bench_interrupted; per++) {
        uint64_t t0 = bench_now_ns(), end = t0 + (uint64_t)(o->period * 1e9), n = 0, now = t0;
        while (rc == 0) {
            for (unsigned k = 0; k < 64 && rc == 0; k++, n++)
                rc = iter(arg);
            now = bench_now_ns();
            if (now >= end || bench_interrupted)
                break;
        }
        *total += n;
        if (rc == 0) {
            r->score[per] = n;
            r->seconds[per] = (double)(now - t0) / 1e9;
            r->n = per + 1;
        }
    }
    return rc;
}

/* ---- message processing ----------------------------------------------------------- */

typedef struct tm_msg_arg {
    bench_rt_side s; /* first: side B's argument */
    const tm_opts *o;
    tm_res *r;
    const bench_msg_ops *ops; /* side A's, for tm_msg_iter */
    void *ctx;
    int side;
} tm_msg_arg;

static int tm_msg_iter(void *arg)
{
    tm_msg_arg *a = arg;
    return bench_rt_one(a->ops, a->ctx, a->side, &a->s);
}

/* Side A: warm-up, then round trips counted per period. */
static int tm_msg_a(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    tm_msg_arg *a = arg;
    uint64_t total;
    a->ops = ops;
    a->ctx = ctx;
    a->side = side;
    int rc = tm_periods(a->o, a->r, tm_msg_iter, a, &total);
    int src = bench_rt_stop(ops, ctx, side, &a->s);
    return rc ? rc : src;
}

static void tm_message(const tm_opts *o, const bench_host *h, const bench_transport *t, tm_res *r)
{
    r->test = "message";
    r->name = t->name;
    tm_msg_arg a = {.o = o, .r = r};
    if (!t->msg || bench_rt_side_init(&a.s, 16) != 0) { /* a peer program runs its own cells */
        r->failures++;
        return;
    }
    bench_msg_job j = bench_job(t, h->cpus.cpu[0], h->cpus.cpu[1], 1, 16, 8, o->timeout_s, tm_msg_a,
                                bench_rt_serve, &a);
    bench_msg_session(&j, &r->integrity, &r->failures);
    free(a.s.buf);
}

/* ---- synchronization ---------------------------------------------------------------- */

typedef struct tm_sync_shared {
    _Atomic uint32_t stop, b_ready;
    uint64_t b_iters;
    int b_err;
    pthread_mutex_t mtx;
    uint64_t mtx_counter;
} tm_sync_shared;

/* The locked loop of one side. kind 0: mdcom SMEM, 1: pthread mutex. */
typedef struct tm_lock {
    int kind;
    mdcom_smemch_t *ch;
    uint64_t *counter;
    tm_sync_shared *sh;
    int64_t timeout_ns;
} tm_lock;

static inline int tm_iter(void *arg)
{
    tm_lock *l = arg;
    if (l->kind == 0) {
        int rc = mdcom_smemch_lock(l->ch, l->timeout_ns);
        if (rc != 0)
            return rc;
        (*l->counter)++;
        return mdcom_smemch_unlock(l->ch);
    }
    int rc = pthread_mutex_lock(&l->sh->mtx);
    if (rc != 0)
        return -rc;
    (*l->counter)++;
    return -pthread_mutex_unlock(&l->sh->mtx);
}

/* kind 0: the counter in domain m's SMEM channel "f0"; 1: the one next to
 * the mutex. 0 or the mdcom error. */
static int tm_lock_open(tm_lock *l, int kind, tm_sync_shared *sh, int64_t tmo, mdcom_t *m)
{
    void *p = &sh->mtx_counter;
    *l = (tm_lock){.kind = kind, .sh = sh, .timeout_ns = tmo};
    int rc = kind == 0 ? mdcom_smemch_open(m, "f0", &l->ch) : 0;
    if (rc == 0 && kind == 0)
        rc = mdcom_smemch_get(l->ch, &p, NULL);
    l->counter = p;
    return rc;
}

static void tm_sync(const tm_opts *o, const bench_host *h, int kind, int contended, tm_res *r)
{
    r->test = contended ? "sync-contended" : "sync-solo";
    r->name = kind == 0 ? "mdcom-smem" : "pthread-mutex";
    int64_t tmo = (int64_t)(o->timeout_s * 1e9);
    static bench_mdreg reg; /* the config outlives the attachments */
    char region[32];
    bench_unique_name(region, sizeof(region), "mdb-tms");
    bench_mdcfg_fill(&reg.mc, region, 1, MDCOM_CHAN_SMEM, 64, 0);
    reg.master = reg.remote = NULL;
    tm_sync_shared *sh = bench_shared_alloc(sizeof(*sh));
    pid_t pid = -1;
    if (sh && (kind == 1 || bench_mdreg_attach(&reg, BENCH_SIDE_A, 0, "thread-metric") == 0)) {
        pthread_mutexattr_t ma;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutex_init(&sh->mtx, &ma);
        pthread_mutexattr_destroy(&ma);
        fflush(NULL);
        pid = fork();
    }
    if (pid < 0) {
        r->failures++;
        bench_mdreg_detach(&reg, BENCH_SIDE_A, "thread-metric");
        bench_shared_free(sh, sizeof(*sh));
        return;
    }
    tm_lock l;
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        bench_pin_self(h->cpus.cpu[1]);
        int rc =
            kind == 0 ? bench_mdreg_attach(&reg, BENCH_SIDE_B, tmo, "thread-metric (side B)") : 0;
        if (rc == 0)
            rc = tm_lock_open(&l, kind, sh, tmo, reg.remote);
        /* release: attached (A may start) */
        atomic_store_explicit(&sh->b_ready, 1, memory_order_release);
        uint64_t n = 0;
        /* acquire: A's stop comes after everything it wants us to do */
        while (rc == 0 && !atomic_load_explicit(&sh->stop, memory_order_acquire)) {
            for (unsigned k = 0; contended && k < 64 && rc == 0; k++, n++)
                rc = tm_iter(&l);
            if (!contended)
                nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        sh->b_iters = n;
        sh->b_err = rc;
        bench_mdreg_detach(&reg, BENCH_SIDE_B, "thread-metric (side B)");
        _exit(rc == 0 ? 0 : 11);
    }
    bench_pin_self(h->cpus.cpu[0]);
    int rc = tm_lock_open(&l, kind, sh, tmo, reg.master);
    uint64_t dl = bench_now_ns() + (uint64_t)tmo, total_a = 0;
    /* acquire: B attached */
    while (rc == 0 && !atomic_load_explicit(&sh->b_ready, memory_order_acquire)) {
        if (bench_now_ns() > dl)
            rc = -ETIMEDOUT;
        sched_yield();
    }
    if (rc == 0)
        rc = tm_periods(o, r, tm_iter, &l, &total_a);
    /* release: B stops */
    atomic_store_explicit(&sh->stop, 1, memory_order_release);
    int code = bench_reap(pid, tmo + 1000000000LL, r->name);
    if (rc != 0) {
        if (kind == 0)
            bench_err_mdcom("thread-metric: smem lock loop", rc);
        r->failures++;
    }
    if (code != 0) {
        bench_err("thread-metric: %s peer failed (exit %d, error %d)", r->name, code, sh->b_err);
        r->failures++;
    }
    if (r->n)
        r->peer = sh->b_iters;
    uint64_t c = 0; /* the counter (the peer has exited) */
    if (rc == 0 && code == 0 && (kind == 1 || mdcom_smemch_lock(l.ch, tmo) == 0)) {
        c = *l.counter;
        if (kind == 0)
            mdcom_smemch_unlock(l.ch);
    }
    if (rc == 0 && code == 0 && c != total_a + sh->b_iters) {
        bench_err("thread-metric: %s: counter %llu, but %llu + %llu increments: mutual exclusion "
                  "violated",
                  r->name, (unsigned long long)c, (unsigned long long)total_a,
                  (unsigned long long)sh->b_iters);
        r->integrity++;
    }
    bench_mdreg_detach(&reg, BENCH_SIDE_A, "thread-metric");
    pthread_mutex_destroy(&sh->mtx);
    bench_shared_free(sh, sizeof(*sh));
}

/* ---- output ------------------------------------------------------------------------ */

static double tm_mean(const tm_res *r)
{
    double s = 0, t = 0;
    for (unsigned i = 0; i < r->n; i++) {
        s += (double)r->score[i];
        t += r->seconds[i];
    }
    return t > 0 ? s / t : 0; /* per second */
}

static void tm_print(FILE *out, const tm_res *r)
{
    fprintf(out, "%-16s %-17s", r->test, r->name);
    if (!r->ok) {
        fprintf(out, " ERROR: %u integrity, %u other\n", r->integrity, r->failures);
        return;
    }
    double ps = tm_mean(r);
    for (unsigned i = 0; i < r->n && i < 4; i++)
        fprintf(out, " %12llu", (unsigned long long)r->score[i]);
    if (r->n > 4)
        fprintf(out, " ...");
    fprintf(out, " %12.0f %13.0f %9.1fx", ps, ps * 30.0, ps * 30.0 / TM_PUB(r));
    if (!strcmp(r->test, "sync-contended"))
        fprintf(out, "  (peer: %llu in all periods)", (unsigned long long)r->peer);
    fputc('\n', out);
}

static void tm_json_config(bench_json *j, void *arg)
{
    const tm_opts *o = arg;
    bench_json_dbl(j, "period_s", o->period);
    bench_json_u64(j, "periods", o->periods);
}

static void tm_rows(bench_row *w, void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < tm_n_res; i++) {
        const tm_res *r = &tm_res_v[i];
        if (!w->j && !r->ok)
            continue;
        w->k = (bench_csv_key){
            .scenario = "thread-metric", .transport = r->name, .mode = r->test, .n = r->n};
        bench_json_obj_begin(w->j, NULL);
        bench_json_str(w->j, "test", r->test);
        bench_json_str(w->j, "transport", r->name);
        bench_json_bool(w->j, "ok", r->ok);
        bench_json_u64(w->j, "integrity_errors", r->integrity);
        bench_json_u64(w->j, "failures", r->failures);
        bench_json_arr_begin(w->j, "scores");
        for (unsigned p = 0; p < r->n; p++) {
            bench_json_u64(w->j, NULL, r->score[p]);
            bench_row_num(w, NULL, "score_per_period", (double)r->score[p], "iterations");
        }
        bench_json_arr_end(w->j);
        bench_row_num(w, "per_second", "per_second", tm_mean(r), "1/s");
        bench_json_dbl(w->j, "per_30s", tm_mean(r) * 30.0);
        bench_json_dbl(w->j, "published_per_30s", TM_PUB(r));
        if (r->n)
            bench_json_u64(w->j, "peer_iterations", r->peer);
        bench_json_obj_end(w->j);
    }
}

static int tm_main(int argc, char **argv)
{
    tm_opts o = {.period = -1,
                 .periods = 1,
                 .timeout_s = 5,
                 .trs_s = "mdcom-zc-poll,mdcom-copy-poll,mdcom-zc-block,mdcom-copy-block,raw-spin,"
                          "raw-futex,pipe,unix-seqpacket,mq"};
    int prc = bench_opts_parse("thread-metric", tm_opts_tab, &o, argc, argv);
    if (prc == 0 && o.no_msg && o.no_sync) {
        bench_err("thread-metric: --no-message and --no-sync leave nothing to run");
        prc = -1;
    }
    if (prc == 0 && bench_parse_transports(o.trs_s, o.tr, &o.n_tr, TM_MAX_TR, 0, "thread-metric"))
        prc = -1;
    if ((prc = bench_parsed(prc, &bench_cmd_thread_metric)) >= 0)
        return prc;
    if (o.period < 0)
        o.period = o.quick ? 0.5 : 30.0;
    bench_run rn =
        BENCH_RUN("thread-metric", o, .json_config = tm_json_config, .rows = tm_rows, .arg = &o);
    if (bench_run_begin(&rn))
        return BENCH_EXIT_USAGE;
    FILE *out = rn.out;
    fprintf(out, "reporting period %.2f s x %u; score = iterations per period\n\n", o.period,
            o.periods);
    fprintf(out, "%-16s %-17s %12s %12s %13s %10s\n", "test", "transport", "period 1", "per second",
            "per 30 s", "vs FreeRTOS");
    tm_n_res = 0;
    /* the message test per transport, then synchronization s: kind s & 1, contended s >> 1 */
    for (unsigned i = 0; i < o.n_tr + 4 && !bench_interrupted; i++) {
        int s = (int)i - (int)o.n_tr;
        if (s < 0 ? o.no_msg : o.no_sync)
            continue;
        tm_res *r = &tm_res_v[tm_n_res++];
        memset(r, 0, sizeof(*r));
        if (s < 0) {
            bench_progress("thread-metric message: %s (%.1f s)", o.tr[i]->name,
                           o.period * o.periods);
            tm_message(&o, &rn.h, o.tr[i], r);
        } else {
            bench_progress("thread-metric sync: %s %s", s & 1 ? "pthread" : "smem",
                           s >> 1 ? "contended" : "solo");
            tm_sync(&o, &rn.h, s & 1, s >> 1, r);
        }
        bench_progress_end();
        r->ok = !r->integrity && !r->failures && r->n == o.periods;
        tm_print(out, r);
        rn.integrity += r->integrity;
        rn.failures += r->failures;
    }
    fprintf(out,
            "\npublished (FreeRTOS 10.3.1, STM32L432 @ 80 MHz, per 30 s): message processing "
            "%.0f, synchronization %.0f\n",
            TM_PUB_MSG, TM_PUB_SYNC);
    return bench_run_end(&rn, 0, NULL, 0, 0);
}

BENCH_CMD(thread_metric, "thread-metric",
          "Thread-Metric style: message-processing and synchronization scores per period", tm_main,
          .opts = tm_opts_tab,
          .about = "Thread-Metric: iterations per reporting period across two domains.\n"
                   "  message processing  16-byte message to the peer and back, words checked\n"
                   "  synchronization     SMEM lock/unlock, solo and contended by both domains\n",
          .more = "Published for scale (FreeRTOS 10.3.1, STM32L432 @ 80 MHz, per 30 s):\n"
                  "  message processing 4689994, synchronization 7183628\n");
