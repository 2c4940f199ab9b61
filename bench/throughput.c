/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * throughput.c - `mdcom-bench throughput`: channels x packet size x bytes per
 * channel, ping-pong and (time-based) streaming, one sender thread per channel
 * on side A and one receiver thread per channel on side B, every packet
 * checked (payload.h), loss counted from the final ack. Aggregate = all
 * payload bytes / wall time, never a sum of per-channel rates.
 * Method: docs/benchmarks.md, `throughput`.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "payload.h"
#include "transport.h"

#define TP_MAX_CH 4
#define TP_MAX_SZ 16
#define TP_MAX_TOT 8
#define TP_MAX_TR 24
#define TP_END 0x21444e45u /* "END!" */
#define TP_ACK 0x214b4341u /* "ACK!" */

enum { TP_PINGPONG, TP_STREAM, TP_NMODES };
static const char *const tp_mode_name[] = {"pingpong", "stream"};

typedef struct tp_opts {
    uint32_t chans[TP_MAX_CH];
    int n_chans;
    uint32_t sizes[TP_MAX_SZ];
    int n_sizes;
    uint64_t totals[TP_MAX_TOT];
    int n_totals;
    int modes[TP_NMODES];
    uint32_t window;
    double cell_time, timeout_s, stream_time;
    int quick, crc;
    const char *chans_s, *sizes_s, *totals_s, *mode_s, *trs_s;
    uint32_t inject_corrupt, inject_loss; /* self-test of the checks */
    const char *json, *csv;
    const bench_transport *tr[TP_MAX_TR];
    unsigned n_tr;
} tp_opts;

typedef struct tp_cell {
    int run, na, ok, capped;
    unsigned integrity, failures;
    /* waits past the timeout (bench_timeouts.n) in the attempt kept; the
     * attempts made (2: retried after a timeout); the load average when the
     * kept attempt started; why it timed out, or why the first attempt did */
    unsigned timeouts, attempts;
    double load;
    char why[320];
    uint64_t loss, corrupt;
    uint64_t msgs, bytes;
    double wall_s, agg_bps, msgs_ps, ch_min_bps, ch_max_bps;
} tp_cell;

/* A cell's key: its mode, channel count, total and size index, transport. */
typedef struct tp_key {
    int m, ci, bi, si;
    unsigned t;
} tp_key;

static tp_cell tp_cells[TP_NMODES][TP_MAX_CH][TP_MAX_TOT][TP_MAX_SZ][TP_MAX_TR];
#define TP_CELL(k) (&tp_cells[(k).m][(k).ci][(k).bi][(k).si][(k).t])

/* Published (ADI SC598 RPMsg, 1 channel, 1e6 bytes): bytes/s by packet size. */
static const struct {
    uint32_t size;
    double bps;
} tp_published[] = {{1, 14521},   {2, 28828},     {16, 228350},
                    {64, 824475}, {256, 2290975}, {496, 5358093}};
#define TP_NPUB (sizeof(tp_published) / sizeof(tp_published[0]))

static const bench_opt tp_opts_tab[] = {
    BOPT(tp_opts, chans_s, "channels", BO_STR, 0, 0, "LIST",
         "channel counts (default 1,8,32; --quick 1,8; at most 32:\n"
         "each is a pair of one-way channels)"),
    BOPT(tp_opts, sizes_s, "sizes", BO_STR, 0, 0, "LIST",
         "packet sizes (default 1,16,64,256,496,4K,64K;\n--quick 64,496,4K)"),
    BOPT(tp_opts, totals_s, "totals", BO_STR, 0, 0, "LIST",
         "bytes per channel, decimal (default 1M, --quick 100k;\n"
         "the published ADI SC598 RPMsg figures used 100,10K,100K,1M,10M)"),
    BOPT(tp_opts, mode_s, "mode", BO_STR, 0, 0, "M", "pingpong, stream or both (default both)"),
    BOPT(tp_opts, window, "window", BO_U32, 1, 4096, "N",
         "stream: packets in flight per channel (default 64)"),
    BOPT(tp_opts, stream_time, "stream-time", BO_DBL, 0, 3600, "S",
         "stream: count messages for S s after S/4 s of warm-up\n"
         "(default 0.3, --quick 0.1; 0: move --totals)"),
    BENCH_COMMON_OPTS(tp_opts),
    BOPT(tp_opts, crc, "crc", BO_FLAG, 1, 0, NULL, "the receiver also recomputes each CRC32C"),
    BOPT(tp_opts, inject_corrupt, "inject-corruption", BO_U32, 1, 1e9, "N",
         "self-test: damage every Nth packet (the run must fail)"),
    BOPT(tp_opts, inject_loss, "inject-loss", BO_U32, 1, 1e9, "N",
         "self-test: skip every Nth packet (the run must fail)"),
    {0},
};

/* o: the defaults, then the options */
static int tp_parse(int argc, char **argv, tp_opts *o)
{
    int rc = bench_opts_parse("throughput", tp_opts_tab, o, argc, argv);
    if (rc != 0)
        return rc;
    const char *mode = o->mode_s ? o->mode_s : "both";
    o->modes[TP_PINGPONG] = strcmp(mode, "stream") != 0;
    o->modes[TP_STREAM] = strcmp(mode, "pingpong") != 0;
    if (o->modes[TP_PINGPONG] && o->modes[TP_STREAM] && strcmp(mode, "both") != 0) {
        bench_err("throughput: bad --mode '%s' (pingpong, stream, both)", mode);
        return -1;
    }
    o->n_chans = bench_parse_size_list(o->chans_s ? o->chans_s
                                       : o->quick ? "1,8"
                                                  : "1,8,32",
                                       o->chans, TP_MAX_CH, 1, BENCH_MAX_CHAN, "--channels entry");
    if (o->n_chans < 0)
        return -1;
    const char *sizes = o->quick ? "64,496,4K" : "1,16,64,256,496,4K,64K";
    o->n_sizes = bench_parse_size_list(o->sizes_s ? o->sizes_s : sizes, o->sizes, TP_MAX_SZ, 1,
                                       16u << 20, NULL);
    if (o->n_sizes < 0)
        return -1;
    /* totals are decimal byte counts (10K = 10000) */
    char tmp[256], *save = NULL;
    snprintf(tmp, sizeof(tmp), "%s", o->totals_s ? o->totals_s : o->quick ? "100k" : "1M");
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (bench_parse_count(tok, &v) != 0 || v == 0 || v > (1ull << 40) ||
            o->n_totals == TP_MAX_TOT) {
            bench_err("throughput: bad --totals entry '%s' (bytes, 1..2^40, at most %d)", tok,
                      TP_MAX_TOT);
            return -1;
        }
        o->totals[o->n_totals++] = v;
    }
    if (bench_parse_transports(o->trs_s, o->tr, &o->n_tr, TP_MAX_TR, 2, "throughput") != 0)
        return -1;
    if (o->cell_time < 0)
        o->cell_time = o->quick ? 0.2 : 1.0;
    if (o->stream_time < 0)
        o->stream_time = o->quick ? 0.1 : 0.3;
    return 0;
}

/* Totals a mode runs: one time-based stream cell, else each of --totals. */
static int tp_ntot(const tp_opts *o, int m)
{
    return m == TP_STREAM && o->stream_time > 0 ? 1 : o->n_totals;
}

/* Bytes per channel of a cell, 0 for a time-based one. */
static uint64_t tp_total(const tp_opts *o, int m, int bi)
{
    return m == TP_STREAM && o->stream_time > 0 ? 0 : o->totals[bi];
}

/* ---- one cell ----------------------------------------------------------------------- */

typedef struct tp_chres {
    uint64_t sent, bytes, t_end;      /* A */
    uint64_t w_sent, w_bytes, t_warm; /* A: counts at the end of the warm-up */
    uint64_t received, loss, corrupt; /* B (and A for echoes) */
} tp_chres;

typedef struct tp_shared {
    uint32_t size, nch, window, mode, crc, ctl_len;
    uint32_t inject_corrupt, inject_loss;
    uint32_t inject_one;                      /* damage this seq of channel 0 (0: none)      */
    uint64_t stall_ns;                        /* channel 0's side B sleeps this long, then
                                  reports a timeout (MDCOM_BENCH_INJECT)      */
    uint64_t per_ch_msgs, budget_ns, warm_ns; /* warm_ns > 0: a time-based cell */
    _Atomic uint32_t b_ready, go;
    uint64_t t0;
    tp_chres ch[BENCH_MAX_CHAN];
} tp_shared;

/* The thread of one channel on one side; buf holds at least 16 bytes (acks
 * and the end message). */
typedef struct tp_thr {
    const bench_msg_ops *ops;
    void *ctx;
    int side, rc;
    uint32_t ch, cap;
    tp_shared *sh;
    bench_pattern pat;
    unsigned char *buf;
} tp_thr;

/* Receive an ack (12 bytes: TP_ACK, count, final) into ack. 0, or the
 * receive's error, or BENCH_RT_MISMATCH for anything else (printed). */
static int tp_ack(const tp_thr *a, uint32_t ack[3])
{
    int n = bench_recv(a->ops, a->ctx, a->side, a->ch, a->buf, a->cap);
    if (n < 0)
        return n;
    if (n == 12)
        memcpy(ack, a->buf, 12);
    if (n != 12 || ack[0] != TP_ACK) {
        bench_err("throughput: channel %u: expected an ack, got %d bytes", a->ch, n);
        return BENCH_RT_MISMATCH;
    }
    return 0;
}

/* Side A of a channel: send, in stream mode read the acks. Its result. */
static int tp_send_loop(tp_thr *a)
{
    tp_shared *sh = a->sh;
    tp_chres *r = &sh->ch[a->ch];
    uint32_t ack[3];
    /* acquire: t0 was written before go */
    while (!atomic_load_explicit(&sh->go, memory_order_acquire))
        bench_relax();
    uint64_t deadline = sh->t0 + sh->budget_ns, warm = sh->t0 + sh->warm_ns, acked = 0, seq;
    int rc = 0;
    for (seq = 1; seq <= sh->per_ch_msgs; seq++) {
        if ((seq & 15u) == 0 && sh->budget_ns) {
            uint64_t now = bench_now_ns();
            if (now > deadline) {
                /* time-based: the measured span ends here (and starts at 0
                 * when the warm-up's end was not seen: a starved cell) */
                if (sh->warm_ns)
                    r->t_end = now - sh->t0;
                break;
            }
            if (sh->warm_ns && !r->t_warm && now >= warm) {
                r->w_sent = seq - 1;
                r->w_bytes = r->bytes;
                r->t_warm = now - sh->t0;
            }
        }
        while (sh->mode == TP_STREAM && seq - 1 - acked >= sh->window) {
            if ((rc = tp_ack(a, ack)) != 0)
                goto out;
            if (ack[1] <= acked || ack[1] > seq - 1) {
                bench_err("throughput: channel %u: ack count %u, sent %llu", a->ch, ack[1],
                          (unsigned long long)(seq - 1));
                rc = BENCH_RT_MISMATCH;
                goto out;
            }
            acked = ack[1];
        }
        const unsigned char *m = bench_pattern_msg(&a->pat, (uint32_t)seq);
        if (sh->inject_loss && seq % sh->inject_loss == 0 && sh->mode == TP_STREAM) {
            r->bytes += sh->size; /* counted as sent, never sent */
            continue;
        }
        if ((sh->inject_corrupt && seq % sh->inject_corrupt == 0) ||
            (a->ch == 0 && seq == sh->inject_one)) {
            memcpy(a->buf, m, sh->size);
            a->buf[sh->size - 1] ^= 0x40; /* the last byte: body, or seq for tiny packets */
            m = a->buf;
        }
        if ((rc = a->ops->send(a->ctx, a->side, a->ch, m, sh->size)) != 0)
            goto out;
        r->bytes += sh->size;
        if (sh->mode == TP_PINGPONG) {
            int n = bench_recv(a->ops, a->ctx, a->side, a->ch, a->buf, a->cap);
            if (n < 0) {
                rc = n;
                goto out;
            }
            int e = bench_pattern_check(&a->pat, a->buf, (uint32_t)n, (uint32_t)seq, (int)sh->crc);
            if (e == BENCH_PAT_SEQ || e == BENCH_PAT_LEN)
                r->loss++;
            else if (e != BENCH_PAT_OK)
                r->corrupt++;
        }
    }
    r->sent = seq - 1;
    /* end: our count; the final ack (after any others) carries what B received */
    rc =
        a->ops->send(a->ctx, a->side, a->ch, (uint32_t[4]){TP_END, (uint32_t)r->sent}, sh->ctl_len);
    while (rc == 0 && (rc = tp_ack(a, ack)) == 0 && !ack[2])
        continue;
    if (rc == 0 && ack[1] != (uint32_t)r->sent) {
        bench_err("throughput: channel %u: sent %llu, peer received %u", a->ch,
                  (unsigned long long)r->sent, ack[1]);
        r->loss += r->sent > ack[1] ? r->sent - ack[1] : ack[1] - r->sent;
    }
out:
    if (!r->t_end)
        r->t_end = bench_now_ns() - sh->t0;
    return rc;
}

/* Side B of a channel: receive and check, answer or acknowledge. Its result. */
static int tp_recv_loop(tp_thr *a)
{
    tp_shared *sh = a->sh;
    tp_chres *r = &sh->ch[a->ch];
    uint32_t k = sh->window / 2 ? sh->window / 2 : 1;
    uint32_t expect = 1;
    if (a->ch == 0 && sh->stall_ns) { /* a starved peer, as on a busy machine */
        nanosleep(&(struct timespec){.tv_sec = (time_t)(sh->stall_ns / 1000000000u),
                                     .tv_nsec = (long)(sh->stall_ns % 1000000000u)},
                  NULL);
        return -ETIMEDOUT;
    }
    for (;;) {
        int rc = 0, n = bench_recv(a->ops, a->ctx, a->side, a->ch, a->buf, a->cap);
        if (n < 0)
            return n;
        if ((uint32_t)n == sh->ctl_len) {
            if (bench_head(a->buf) == TP_END)
                return a->ops->send(a->ctx, a->side, a->ch,
                                    (uint32_t[3]){TP_ACK, (uint32_t)r->received, 1}, 12);
            bench_err("throughput: channel %u: unexpected %d-byte message", a->ch, n);
            return BENCH_RT_MISMATCH;
        }
        int e = bench_pattern_check(&a->pat, a->buf, (uint32_t)n, expect, (int)sh->crc);
        if (e == BENCH_PAT_SEQ || e == BENCH_PAT_LEN) {
            r->loss++;
            if (n >= 4) /* resynchronise on the seq it carries */
                expect = bench_head(a->buf);
        } else if (e != BENCH_PAT_OK) {
            r->corrupt++;
        }
        expect++;
        r->received++;
        /* stream: ack the last seq seen, not the count (a lost packet must
         * not shrink the sender's window for good) */
        if (sh->mode == TP_PINGPONG)
            rc = a->ops->send(a->ctx, a->side, a->ch, a->buf, (uint32_t)n);
        else if (r->received % k == 0)
            rc = a->ops->send(a->ctx, a->side, a->ch, (uint32_t[3]){TP_ACK, expect - 1, 0}, 12);
        if (rc != 0)
            return rc;
    }
}

/* A channel's thread: its buffer and pattern, then its side's loop. */
static void *tp_thread(void *arg)
{
    tp_thr *a = arg;
    a->cap = a->sh->size > 16 ? a->sh->size : 16;
    a->buf = malloc(a->cap);
    a->rc = -ENOMEM;
    if (a->buf && bench_pattern_init(&a->pat, a->sh->size, a->ch) == 0) {
        a->rc = a->side == BENCH_SIDE_A ? tp_send_loop(a) : tp_recv_loop(a);
        bench_pattern_free(&a->pat);
    }
    free(a->buf);
    return NULL;
}

/* Either side: one thread per channel. The first error, else a mismatch, else 0. */
static int tp_run_threads(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    tp_shared *sh = arg;
    pthread_t th[BENCH_MAX_CHAN];
    tp_thr ta[BENCH_MAX_CHAN];
    uint32_t started;
    int rc = 0;
    for (started = 0; started < sh->nch; started++) {
        ta[started] = (tp_thr){.ops = ops, .ctx = ctx, .side = side, .ch = started, .sh = sh};
        if (pthread_create(&th[started], NULL, tp_thread, &ta[started]) != 0) {
            bench_err("throughput: pthread_create failed");
            rc = -EAGAIN;
            break;
        }
    }
    if (side == BENCH_SIDE_B) {
        /* release: our threads exist (they wait in recv) */
        atomic_store_explicit(&sh->b_ready, 1, memory_order_release);
    } else {
        uint64_t dl = bench_now_ns() + 10000000000ull;
        /* acquire: pairs with B's release */
        while (!atomic_load_explicit(&sh->b_ready, memory_order_acquire) && bench_now_ns() < dl)
            sched_yield();
        sh->t0 = bench_now_ns();
        /* release: t0 before go */
        atomic_store_explicit(&sh->go, 1, memory_order_release);
    }
    for (uint32_t i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        if (ta[i].rc != 0 && (rc == 0 || rc == BENCH_RT_MISMATCH))
            rc = ta[i].rc;
    }
    return rc;
}

/* A peer program's cell: one-channel streams only. */
static void tp_cell_ext(const tp_opts *o, const bench_host *h, tp_key k, tp_cell *c)
{
    bench_ext_stream_res x;
    uint32_t size = o->sizes[k.si];
    /* time-based: as many messages as fit in stream_time (the peer has no warm-up) */
    uint64_t want = o->stream_time > 0 ? 0xffff0000u : (o->totals[k.bi] + size - 1) / size;
    double budget = o->stream_time > 0 ? o->stream_time : o->cell_time;
    if (k.m != TP_STREAM || o->chans[k.ci] != 1 || size < bench_tr_min_size(o->tr[k.t]) ||
        bench_ext_stream(o->tr[k.t], size, want, o->window, (uint64_t)(budget * 1e9),
                         h->cpus.cpu[0], h->cpus.cpu[1], &x) == BENCH_SESSION_NA) {
        c->na = 1;
        return;
    }
    *c = (tp_cell){.run = 1,
                   .attempts = 1,
                   .load = c->load,
                   .msgs = x.msgs,
                   .bytes = x.bytes,
                   .loss = x.lost,
                   .corrupt = x.corrupt,
                   .capped = o->stream_time <= 0 && x.msgs < want,
                   .wall_s = (double)x.wall_ns / 1e9};
    c->agg_bps = x.wall_ns ? (double)x.bytes / c->wall_s : NAN;
    c->msgs_ps = x.wall_ns ? (double)x.msgs / c->wall_s : NAN;
    c->ch_min_bps = c->ch_max_bps = c->agg_bps;
    c->ok = x.wall_ns && !x.lost && !x.corrupt;
    if (!c->ok)
        c->failures++;
}

/* One attempt at cell k, every wait bounded by timeout_s; inj: the cell's
 * injected fault (0, 'c'orrupt, 's'tall). */
static void tp_cell_once(const tp_opts *o, const bench_host *h, tp_key k, double timeout_s, int inj)
{
    tp_cell *c = TP_CELL(k);
    uint32_t size = o->sizes[k.si], nch = o->chans[k.ci];
    *c = (tp_cell){.run = 1, .attempts = 1, .load = bench_loadavg()};
    if (o->tr[k.t]->ext) {
        tp_cell_ext(o, h, k, c);
        return;
    }
    c->na = (size > 16 ? size : 16) > bench_tr_max_size(o->tr[k.t]);
    tp_shared *sh = c->na ? NULL : bench_shared_alloc(sizeof(tp_shared));
    if (!sh) {
        c->failures += !c->na; /* n/a, or out of memory */
        return;
    }
    *sh = (tp_shared){.size = size,
                      .nch = nch,
                      .window = k.m == TP_STREAM ? o->window : 1,
                      .mode = (uint32_t)k.m,
                      .crc = (uint32_t)o->crc,
                      .inject_corrupt = o->inject_corrupt,
                      .inject_loss = o->inject_loss,
                      .inject_one = inj == 'c' ? 3 : 0,
                      .stall_ns = inj == 's' ? (uint64_t)(timeout_s * 1.2e9) : 0,
                      .ctl_len = size == 12 ? 16 : 12, /* never a packet's size */
                      .per_ch_msgs = (o->totals[k.bi] + size - 1) / size,
                      .budget_ns = (uint64_t)(o->cell_time * 1e9)};
    if (!tp_total(o, k.m, k.bi)) { /* time-based */
        sh->per_ch_msgs = UINT64_MAX;
        sh->warm_ns = (uint64_t)(o->stream_time * 0.25e9);
        sh->budget_ns = sh->warm_ns + (uint64_t)(o->stream_time * 1e9);
    }
    bench_msg_job j = bench_job(o->tr[k.t], h->cpus.cpu[0], h->cpus.cpu[1], nch,
                                size > 16 ? size : 16, k.m == TP_STREAM ? o->window + 2 : 8,
                                timeout_s, tp_run_threads, tp_run_threads, sh);
    bench_timeouts to = {0};
    j.to = &to;
    int src = bench_msg_session(&j, &c->integrity, &c->failures);
    c->timeouts = to.n;
    snprintf(c->why, sizeof(c->why), "%s", to.why);
    c->ok = src == 0;
    if (src == BENCH_SESSION_NA) {
        c->na = 1;
        bench_shared_free(sh, sizeof(tp_shared));
        return;
    }
    /* the measured span: from the earliest end of a warm-up (0 without) to the last end */
    uint64_t wall = 0, start = UINT64_MAX;
    c->ch_min_bps = INFINITY;
    for (uint32_t i = 0; i < nch; i++) {
        tp_chres *r = &sh->ch[i];
        uint64_t span = r->t_end > r->t_warm ? r->t_end - r->t_warm : 0;
        double bps = span ? (double)(r->bytes - r->w_bytes) / ((double)span / 1e9) : 0;
        c->msgs += r->sent - r->w_sent;
        c->bytes += r->bytes - r->w_bytes;
        c->loss += r->loss;
        c->corrupt += r->corrupt;
        c->capped |= !sh->warm_ns && r->sent < sh->per_ch_msgs;
        wall = r->t_end > wall ? r->t_end : wall;
        start = r->t_warm < start ? r->t_warm : start;
        c->ch_min_bps = fmin(c->ch_min_bps, bps);
        c->ch_max_bps = fmax(c->ch_max_bps, bps);
    }
    bench_shared_free(sh, sizeof(tp_shared));
    wall = wall > start ? wall - start : 0;
    c->wall_s = (double)wall / 1e9;
    c->agg_bps = wall ? (double)c->bytes / c->wall_s : NAN;
    c->msgs_ps = wall ? (double)c->msgs / c->wall_s : NAN;
    if (c->loss || c->corrupt) {
        bench_err("throughput %s %u ch %u B %s: %llu lost, %llu corrupted", o->tr[k.t]->name, nch,
                  size, tp_mode_name[k.m], (unsigned long long)c->loss,
                  (unsigned long long)c->corrupt);
        c->ok = 0;
        if (!c->integrity)
            c->integrity++;
    }
}

/* What tp_attempt runs: a cell, its injected fault. */
typedef struct tp_try {
    const tp_opts *o;
    const bench_host *h;
    tp_key k;
    int inj;
} tp_try;

static void tp_attempt(void *arg, double timeout_s, bench_try *t)
{
    const tp_try *a = arg;
    const tp_cell *c = TP_CELL(a->k);
    tp_cell_once(a->o, a->h, a->k, timeout_s, a->inj);
    *t = (bench_try){
        .timeouts = c->timeouts, .load = c->load, .worse = c->na || c->integrity || c->failures};
    snprintf(t->why, sizeof(t->why), "%.100s", c->why);
}

/* Cell k, retried once after a timeout (bench_retry): TIMEOUT only when
 * the second attempt timed out as well. */
static void tp_cell_run(const tp_opts *o, const bench_host *h, tp_key k)
{
    tp_cell *c = TP_CELL(k);
    const char *name = o->tr[k.t]->name;
    tp_try a = {.o = o,
                .h = h,
                .k = k,
                .inj = bench_inject("corrupt", name, o->sizes[k.si]) ? 'c'
                       : bench_inject("stall", name, o->sizes[k.si]) ? 's'
                                                                     : 0};
    char label[96], why[sizeof(c->why)];
    snprintf(label, sizeof(label), "throughput %s %u ch %u B %s", name, o->chans[k.ci],
             o->sizes[k.si], tp_mode_name[k.m]);
    int attempts = bench_retry(tp_attempt, &a, o->timeout_s, label, why, sizeof(why));
    c->attempts = (unsigned)attempts;
    snprintf(c->why, sizeof(c->why), "%s", why);
}

/* ---- output ---------------------------------------------------------------------- */

static const char *tp_status(const tp_cell *c)
{
    return bench_cell_status(c->na, c->integrity + (c->loss || c->corrupt), c->failures,
                             c->timeouts);
}

/* The cell at k of the transport called name when it ran clean, else NULL. */
static const tp_cell *tp_find(const tp_opts *o, tp_key k, const char *name)
{
    int t = bench_tr_index(o->tr, o->n_tr, name);
    if (t < 0 || k.ci < 0 || k.si < 0)
        return NULL;
    k.t = (unsigned)t;
    const tp_cell *c = TP_CELL(k);
    return c->run && !c->na && c->ok ? c : NULL;
}

static double tp_ratio(const tp_opts *o, tp_key k, const char *ref)
{
    const tp_cell *c = TP_CELL(k), *r = tp_find(o, k, ref);
    return r && c->ok && !c->na && r->agg_bps > 0 ? c->agg_bps / r->agg_bps : NAN;
}

/* "-" when not finite, else in B, kB, MB or GB per second */
static const char *tp_fmt_rate(char *b, size_t len, double bps)
{
    static const char *const fmt[] = {"%.0f B/s", "%.1f kB/s", "%.1f MB/s", "%.2f GB/s"};
    double div = 1;
    int u = 0;
    for (; u < 3 && bps >= div * 1e3; u++)
        div *= 1e3;
    snprintf(b, len, isfinite(bps) ? fmt[u] : "-", bps / div);
    return b;
}

/* The table of one mode, channel count and total (k.m, k.ci, k.bi). */
static void tp_print(FILE *out, const tp_opts *o, tp_key k)
{
    uint32_t nch = o->chans[k.ci];
    fprintf(out, "\n== %s, %u channel%s, ", tp_mode_name[k.m], nch, nch == 1 ? "" : "s");
    if (tp_total(o, k.m, k.bi))
        fprintf(out, "%llu bytes per channel ==\n", (unsigned long long)o->totals[k.bi]);
    else
        fprintf(out, "%.2f s per cell after %.2f s of warm-up ==\n", o->stream_time,
                o->stream_time / 4);
    fprintf(out, "%-17s %7s %11s %12s %11s %23s %5s %5s  %-16s %s\n", "transport", "packet", "msgs",
            "aggregate", "msgs/s", "per channel min..max", "loss", "corr", "vs baseline",
            "vs mdcom-copy");
    for (k.si = 0; k.si < o->n_sizes; k.si++) {
        char sz[32], b1[32], b2[32], b3[32], per[72], rb[32], rm[16];
        bench_fmt_size(sz, sizeof(sz), o->sizes[k.si]);
        for (k.t = 0; k.t < o->n_tr; k.t++) {
            const tp_cell *c = TP_CELL(k);
            const bench_transport *tr = o->tr[k.t];
            if (!c->run)
                continue;
            fprintf(out, "%-17s %7s ", tr->name, sz);
            if (c->na && o->sizes[k.si] > bench_tr_max_size(tr) && !tr->ext) {
                fprintf(out, " n/a (packets above %u B)\n", bench_tr_max_size(tr));
            } else if (c->na) {
                fprintf(out, " n/a (%s)\n",
                        tr->ext ? "one-channel streams of >= 4 B only, or not built"
                                : "this channel count or a limit of this machine");
            } else if (!c->ok && !c->loss && !c->corrupt) {
                if (c->integrity || c->failures)
                    fprintf(out, " %s: %u integrity, %u other (the messages above say what)\n",
                            tp_status(c), c->integrity, c->failures);
                else
                    fprintf(out, " TIMEOUT: %s\n", c->why);
            } else {
                bench_fmt_ratios(rb, sizeof(rb), rm, sizeof(rm), tr, tp_ratio(o, k, tr->baseline),
                                 tp_ratio(o, k, bench_mdcom_ref(tr)));
                snprintf(per, sizeof(per), "%s..%s", tp_fmt_rate(b1, sizeof(b1), c->ch_min_bps),
                         tp_fmt_rate(b2, sizeof(b2), c->ch_max_bps));
                fprintf(out, "%10llu%s %12s %11.0f %23s %5llu %5llu  %-16s %s%s\n",
                        (unsigned long long)c->msgs, c->capped ? "*" : " ",
                        tp_fmt_rate(b3, sizeof(b3), c->agg_bps), c->msgs_ps, per,
                        (unsigned long long)c->loss, (unsigned long long)c->corrupt, rb, rm,
                        c->ok ? "" : "  <- INTEGRITY ERROR");
            }
        }
        for (unsigned p = 0; p < TP_NPUB && k.m == TP_PINGPONG && nch == 1; p++)
            if (tp_published[p].size == o->sizes[k.si])
                fprintf(out, "%-17s %7s %11s %12s  (published: ADI SC598 RPMsg)\n", "", sz, "",
                        tp_fmt_rate(b1, sizeof(b1), tp_published[p].bps));
    }
    if (tp_total(o, k.m, k.bi))
        fprintf(out, "(* = stopped by --cell-time; rates use the bytes actually moved)\n");
    fflush(out);
}

static unsigned tp_targets(const tp_opts *o, bench_target *tg)
{
    unsigned n = 0;
    int c1 = bench_idx_u32(o->chans, o->n_chans, 1), c32 = bench_idx_u32(o->chans, o->n_chans, 32);
    int s64 = bench_idx_u32(o->sizes, o->n_sizes, 64);
    int s4k = bench_idx_u32(o->sizes, o->n_sizes, 4096);
    int bi = tp_ntot(o, TP_STREAM) - 1; /* the largest total */
    const char *mt = "mdcom-copy-poll";
    /* streaming 64 B >= 20 M msgs/s, 4 KiB >= 10 GB/s */
    const tp_cell *c = tp_find(o, (tp_key){TP_STREAM, c1, bi, s64, 0}, mt);
    bench_target *t =
        bench_target_new(&tg[n++], 20e6, "msgs/s", "%s stream 1 ch 64 B: msgs/s >= 20 M", mt);
    bench_target_eval(t, c ? c->msgs_ps : NAN, 1);
    snprintf(t->detail, sizeof(t->detail), "%.2f M msgs/s", t->value / 1e6);
    c = tp_find(o, (tp_key){TP_STREAM, c1, bi, s4k, 0}, mt);
    t = bench_target_new(&tg[n++], 10e9, "B/s", "%s stream 1 ch 4 KiB: bytes/s >= 10 GB/s", mt);
    bench_target_eval(t, c ? c->agg_bps : NAN, 1);
    snprintf(t->detail, sizeof(t->detail), "%.2f GB/s", t->value / 1e9);
    /* 32-channel aggregate >= 0.9x the 1-channel aggregate, per mdcom transport and mode */
    for (unsigned k = 0; k < o->n_tr && n < 30; k++)
        for (int m = 0; m < TP_NMODES; m++) {
            const char *name = o->tr[k]->name;
            if (!o->modes[m] || strncmp(name, "mdcom-", 6) != 0)
                continue;
            t = bench_target_new(&tg[n++], 0.9, NULL, "%s %s 64 B: 32-ch / 1-ch aggregate >= 0.9",
                                 name, tp_mode_name[m]);
            const tp_cell *a = tp_find(o, (tp_key){m, c32, tp_ntot(o, m) - 1, s64, 0}, name);
            const tp_cell *b = tp_find(o, (tp_key){m, c1, tp_ntot(o, m) - 1, s64, 0}, name);
            bench_target_eval(t, a && b && b->agg_bps > 0 ? a->agg_bps / b->agg_bps : NAN, 1);
            char x[32], y[32];
            if (!isnan(t->value))
                snprintf(t->detail, sizeof(t->detail), "%s / %s",
                         tp_fmt_rate(x, sizeof(x), a->agg_bps),
                         tp_fmt_rate(y, sizeof(y), b->agg_bps));
        }
    return n;
}

static void tp_json_config(bench_json *j, void *arg)
{
    const tp_opts *o = arg;
    bench_json_u64(j, "window", o->window);
    bench_json_dbl(j, "cell_time_s", o->cell_time);
    bench_json_dbl(j, "stream_time_s", o->stream_time);
    bench_json_bool(j, "crc_recomputed", o->crc);
}

/* The row of a cell that ran (CSV: one that was measured). */
static void tp_row(bench_row *w, const tp_opts *o, tp_key k)
{
    const tp_cell *c = TP_CELL(k);
    const bench_transport *tr = o->tr[k.t];
    if (!c->run || (!w->j && c->na))
        return;
    w->k = (bench_csv_key){.scenario = "throughput",
                           .transport = tr->name,
                           .mode = tp_mode_name[k.m],
                           .size = o->sizes[k.si],
                           .channels = o->chans[k.ci],
                           .n = c->msgs,
                           .total = tp_total(o, k.m, k.bi)};
    bench_json_obj_begin(w->j, NULL);
    bench_json_str(w->j, "transport", tr->name);
    bench_json_str(w->j, "mode", tp_mode_name[k.m]);
    bench_json_u64(w->j, "channels", o->chans[k.ci]);
    bench_json_u64(w->j, "size", o->sizes[k.si]);
    bench_json_u64(w->j, "total_per_channel", tp_total(o, k.m, k.bi));
    bench_json_bool(w->j, "na", c->na);
    bench_json_bool(w->j, "ok", c->ok);
    bench_json_str(w->j, "status", tp_status(c));
    bench_json_u64(w->j, "timeouts", c->timeouts);
    bench_json_u64(w->j, "attempts", c->attempts);
    bench_json_dbl(w->j, "loadavg_1m", c->load);
    bench_json_str(w->j, "why", c->why);
    bench_json_bool(w->j, "capped", c->capped);
    bench_json_u64(w->j, "msgs", c->msgs);
    bench_json_u64(w->j, "bytes", c->bytes);
    bench_json_dbl(w->j, "wall_s", c->wall_s);
    bench_row_num(w, "aggregate_bytes_per_s", "aggregate", c->agg_bps, "B/s");
    bench_row_num(w, "msgs_per_s", "msgs_per_s", c->msgs_ps, "1/s");
    bench_row_num(w, "channel_min_bytes_per_s", "channel_min", c->ch_min_bps, "B/s");
    bench_row_num(w, "channel_max_bytes_per_s", NULL, c->ch_max_bps, NULL);
    bench_row_num(w, "loss", "loss", (double)c->loss, "msgs");
    bench_row_num(w, "corrupt", "corrupt", (double)c->corrupt, "msgs");
    bench_json_u64(w->j, "integrity_errors", c->integrity);
    bench_json_u64(w->j, "failures", c->failures);
    bench_json_dbl(w->j, "ratio_to_baseline", tp_ratio(o, k, tr->baseline));
    bench_json_dbl(w->j, "ratio_to_mdcom", tp_ratio(o, k, bench_mdcom_ref(tr)));
    bench_json_str(w->j, "mdcom_ref", bench_mdcom_ref(tr));
    bench_json_obj_end(w->j);
}

/* The rows in report order. */
static void tp_rows(bench_row *w, void *arg)
{
    const tp_opts *o = arg;
    tp_key k;
    for (k.m = 0; k.m < TP_NMODES; k.m++)
        for (k.ci = 0; k.ci < o->n_chans; k.ci++)
            for (k.bi = 0; k.bi < tp_ntot(o, k.m); k.bi++)
                for (k.si = 0; k.si < o->n_sizes; k.si++)
                    for (k.t = 0; k.t < o->n_tr; k.t++)
                        tp_row(w, o, k);
}

static void tp_json(bench_json *j, void *arg)
{
    (void)arg;
    bench_json_arr_begin(j, "published");
    for (unsigned p = 0; p < TP_NPUB; p++) {
        bench_json_obj_begin(j, NULL);
        bench_json_str(j, "source", "ADI SC598 RPMsg, published, 1 channel, 1e6 bytes");
        bench_json_u64(j, "size", tp_published[p].size);
        bench_json_dbl(j, "bytes_per_s", tp_published[p].bps);
        bench_json_obj_end(j);
    }
    bench_json_arr_end(j);
}

static int tp_main(int argc, char **argv)
{
    tp_opts o = {.cell_time = -1, .timeout_s = 5, .stream_time = -1, .window = 64};
    int prc = bench_parsed(tp_parse(argc, argv, &o), &bench_cmd_throughput);
    if (prc >= 0)
        return prc;
    memset(tp_cells, 0, sizeof(tp_cells));
    bench_run r = BENCH_RUN("throughput", o, .json_config = tp_json_config, .rows = tp_rows,
                            .json_body = tp_json, .arg = &o);
    if (bench_run_begin(&r))
        return BENCH_EXIT_USAGE;
    fprintf(r.out,
            "cells: sender threads on cpu A, receiver threads on cpu B, one per channel;\n"
            "       stream window %u, %.2f s per stream cell; ping-pong at most %.2f s\n"
            "       per cell; every packet checked\n",
            o.window, o.stream_time, o.cell_time);
    bench_progress_plan((uint64_t)(o.modes[0] * o.n_totals + o.modes[1] * tp_ntot(&o, TP_STREAM)) *
                        (unsigned)o.n_chans * (unsigned)o.n_sizes * o.n_tr);
    tp_key k;
    for (k.m = 0; k.m < TP_NMODES && !bench_interrupted; k.m++)
        for (k.ci = 0; k.ci < o.n_chans && o.modes[k.m] && !bench_interrupted; k.ci++)
            for (k.bi = 0; k.bi < tp_ntot(&o, k.m) && !bench_interrupted; k.bi++) {
                for (k.si = 0; k.si < o.n_sizes && !bench_interrupted; k.si++)
                    for (k.t = 0; k.t < o.n_tr && !bench_interrupted; k.t++) {
                        char sz[24];
                        bench_progress("throughput %s %u ch %s: %s", tp_mode_name[k.m],
                                       o.chans[k.ci], bench_fmt_size(sz, sizeof(sz), o.sizes[k.si]),
                                       o.tr[k.t]->name);
                        tp_cell_run(&o, &r.h, k);
                        const tp_cell *c = TP_CELL(k);
                        r.integrity += c->integrity;
                        r.failures += c->failures;
                        r.cells += !c->na;
                        r.timeouts += !strcmp(tp_status(c), "TIMEOUT");
                    }
                bench_progress_end();
                tp_print(r.out, &o, k);
            }
    bench_target tg[32];
    return bench_run_end(&r, 0, tg, tp_targets(&o, tg), 0);
}

BENCH_CMD(throughput, "throughput",
          "1/8/32 channels x packet size, ping-pong and streaming, checked", tp_main,
          .opts = tp_opts_tab, .tail = 3,
          .about = "Channels x packet size x bytes per channel. One sender thread per channel\n"
                   "(cpu A) and one receiver thread per channel (cpu B). Every packet is checked\n"
                   "(seq + CRC32C + bytes); loss and corruption must be 0. Aggregate = total\n"
                   "bytes / wall time. --cell-time: default 1 s, --quick 0.2.\n");
