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
#include <getopt.h>
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
    uint64_t loss, corrupt;
    uint64_t msgs, bytes;
    double wall_s, agg_bps, msgs_ps, ch_min_bps, ch_max_bps;
} tp_cell;

static tp_cell tp_cells[TP_NMODES][TP_MAX_CH][TP_MAX_TOT][TP_MAX_SZ][TP_MAX_TR];

/* Seed 002 (ADI SC598 RPMsg, 1 channel, 1e6 bytes): bytes/s by packet size. */
static const struct {
    uint32_t size;
    double bps;
} tp_published[] = {{1, 14521}, {2, 28828}, {16, 228350}, {64, 824475}, {256, 2290975}, {496, 5358093}};

static const bench_opt tp_opts_tab[] = {
    BOPT(tp_opts, chans_s, "channels", BO_STR, 0, 0, "LIST",
         "channel counts (default 1,8,32; --quick 1,8; at most 32:\neach is a pair of one-way channels)"),
    BOPT(tp_opts, sizes_s, "sizes", BO_STR, 0, 0, "LIST",
         "packet sizes (default 1,16,64,256,496,4K,64K;\n--quick 64,496,4K)"),
    BOPT(tp_opts, totals_s, "totals", BO_STR, 0, 0, "LIST",
         "bytes per channel, decimal (default 1M, --quick 100k;\nthe seed used 100,10K,100K,1M,10M)"),
    BOPT(tp_opts, mode_s, "mode", BO_STR, 0, 0, "M", "pingpong, stream or both (default both)"),
    BOPT(tp_opts, window, "window", BO_U32, 1, 4096, "N",
         "stream: packets in flight per channel (default 64)"),
    BOPT(tp_opts, stream_time, "stream-time", BO_DBL, 0, 3600, "S",
         "stream: count messages for S s after S/4 s of warm-up\n(default 0.3, --quick 0.1; 0: move --totals)"),
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
    o->modes[TP_PINGPONG] = o->modes[TP_STREAM] = 1;
    if (o->mode_s && !strcmp(o->mode_s, "pingpong"))
        o->modes[TP_STREAM] = 0;
    else if (o->mode_s && !strcmp(o->mode_s, "stream"))
        o->modes[TP_PINGPONG] = 0;
    else if (o->mode_s && strcmp(o->mode_s, "both") != 0) {
        bench_err("throughput: bad --mode '%s' (pingpong, stream, both)", o->mode_s);
        return -1;
    }
    const char *chans = o->chans_s, *sizes = o->sizes_s, *totals = o->totals_s, *trs = o->trs_s;
    o->n_chans = bench_parse_size_list(chans ? chans : o->quick ? "1,8" : "1,8,32", o->chans,
                                       TP_MAX_CH, 1, BENCH_MAX_CHAN,
                                       "--channels entry");
    if (o->n_chans < 0)
        return -1;
    o->n_sizes = bench_parse_size_list(sizes ? sizes : o->quick ? "64,496,4K" : "1,16,64,256,496,4K,64K",
                                       o->sizes, TP_MAX_SZ, 1, 16u << 20, NULL);
    if (o->n_sizes < 0)
        return -1;
    /* totals are decimal byte counts (100, 10K = 10000 as in the seed) */
    {
        char tmp[256];
        snprintf(tmp, sizeof(tmp), "%s", totals ? totals : o->quick ? "100k" : "1M");
        char *save = NULL;
        o->n_totals = 0;
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
    }
    if (bench_parse_transports(trs, o->tr, &o->n_tr, TP_MAX_TR, 2, "throughput") != 0)
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
    uint64_t sent, bytes, t_end;     /* A */
    uint64_t w_sent, w_bytes, t_warm; /* A: counts at the end of the warm-up */
    uint64_t received, loss, corrupt; /* B (and A for echoes) */
    int rc_a, rc_b;
} tp_chres;

typedef struct tp_shared {
    uint32_t size, nch, window, mode, crc, ctl_len;
    uint32_t inject_corrupt, inject_loss;
    uint64_t per_ch_msgs, budget_ns, warm_ns; /* warm_ns > 0: a time-based cell */
    _Atomic uint32_t b_ready;
    _Atomic uint32_t go;
    uint64_t t0;
    tp_chres ch[BENCH_MAX_CHAN];
} tp_shared;

typedef struct tp_thr {
    const bench_msg_ops *ops;
    void *ctx;
    int side;
    uint32_t ch;
    tp_shared *sh;
} tp_thr;

/* A thread's buffer (at least 16 bytes: acks and the end message) and its
 * channel's pattern. 0 or -ENOMEM. */
static int tp_thr_begin(const tp_thr *a, bench_pattern *pat, unsigned char **buf, uint32_t *cap)
{
    *cap = a->sh->size > 16 ? a->sh->size : 16;
    *buf = malloc(*cap);
    if (*buf && bench_pattern_init(pat, a->sh->size, a->ch) == 0)
        return 0;
    free(*buf);
    return -ENOMEM;
}

/* Receive an ack (12 bytes: TP_ACK, count, final) into ack. 0, or the
 * receive's error, or BENCH_RT_MISMATCH for anything else (printed). */
static int tp_ack(const tp_thr *a, unsigned char *rbuf, uint32_t cap, uint32_t ack[3])
{
    int n = bench_recv(a->ops, a->ctx, a->side, a->ch, rbuf, cap);
    if (n < 0)
        return n;
    if (n == 12)
        memcpy(ack, rbuf, 12);
    if (n != 12 || ack[0] != TP_ACK) {
        bench_err("throughput: channel %u: expected an ack, got %d bytes", a->ch, n);
        return BENCH_RT_MISMATCH;
    }
    return 0;
}

/* Side A of a channel: send, in stream mode read the acks. Its result. */
static int tp_send_loop(tp_thr *a, bench_pattern *pat, unsigned char *rbuf, uint32_t cap)
{
    tp_shared *sh = a->sh;
    tp_chres *r = &sh->ch[a->ch];
    /* acquire: t0 was written before go */
    while (!atomic_load_explicit(&sh->go, memory_order_acquire))
        bench_relax();
    uint64_t deadline = sh->t0 + sh->budget_ns, warm = sh->t0 + sh->warm_ns, acked = 0;
    int rc = 0;
    uint64_t seq;
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
        if (sh->mode == TP_STREAM) {
            while (seq - 1 - acked >= sh->window) {
                uint32_t ack[3];
                if ((rc = tp_ack(a, rbuf, cap, ack)) != 0)
                    goto out;
                if (ack[1] <= acked || ack[1] > seq - 1) {
                    bench_err("throughput: channel %u: ack count %u, sent %llu", a->ch, ack[1],
                              (unsigned long long)(seq - 1));
                    rc = BENCH_RT_MISMATCH;
                    goto out;
                }
                acked = ack[1];
            }
        }
        const unsigned char *m = bench_pattern_msg(pat, (uint32_t)seq);
        if (sh->inject_loss && seq % sh->inject_loss == 0 && sh->mode == TP_STREAM) {
            r->bytes += sh->size; /* counted as sent, never sent */
            continue;
        }
        if (sh->inject_corrupt && seq % sh->inject_corrupt == 0) {
            memcpy(rbuf, m, sh->size);
            rbuf[sh->size - 1] ^= 0x40; /* the last byte: body, or seq for tiny packets */
            m = rbuf;
        }
        rc = a->ops->send(a->ctx, a->side, a->ch, m, sh->size);
        if (rc != 0)
            goto out;
        r->bytes += sh->size;
        if (sh->mode == TP_PINGPONG) {
            int n = bench_recv(a->ops, a->ctx, a->side, a->ch, rbuf, cap);
            if (n < 0) {
                rc = n;
                goto out;
            }
            int e = bench_pattern_check(pat, rbuf, (uint32_t)n, (uint32_t)seq, (int)sh->crc);
            if (e == BENCH_PAT_SEQ || e == BENCH_PAT_LEN)
                r->loss++;
            else if (e != BENCH_PAT_OK)
                r->corrupt++;
        }
    }
    r->sent = seq - 1;
    /* end: our count; the final ack carries what B received */
    {
        uint32_t end[4] = {TP_END, (uint32_t)r->sent, 0, 0};
        rc = a->ops->send(a->ctx, a->side, a->ch, end, sh->ctl_len);
        if (rc != 0)
            goto out;
        for (;;) {
            uint32_t ack[3];
            if ((rc = tp_ack(a, rbuf, cap, ack)) != 0)
                goto out;
            if (ack[2]) { /* final */
                if (ack[1] != (uint32_t)r->sent) {
                    bench_err("throughput: channel %u: sent %llu, peer received %u", a->ch,
                              (unsigned long long)r->sent, ack[1]);
                    r->loss += r->sent > ack[1] ? r->sent - ack[1] : ack[1] - r->sent;
                }
                break;
            }
        }
    }
    if (!r->t_end)
        r->t_end = bench_now_ns() - sh->t0;
out:
    if (rc != 0 && !r->t_end)
        r->t_end = bench_now_ns() - sh->t0;
    return rc;
}

/* Side B of a channel: receive and check, answer or acknowledge. Its result. */
static int tp_recv_loop(tp_thr *a, bench_pattern *pat, unsigned char *buf, uint32_t cap)
{
    tp_shared *sh = a->sh;
    tp_chres *r = &sh->ch[a->ch];
    uint32_t k = sh->window / 2 ? sh->window / 2 : 1;
    uint32_t expect = 1;
    int rc = 0;
    for (;;) {
        int n = bench_recv(a->ops, a->ctx, a->side, a->ch, buf, cap);
        if (n < 0) {
            rc = n;
            break;
        }
        if ((uint32_t)n == sh->ctl_len && sh->ctl_len != sh->size) {
            uint32_t end[2];
            memcpy(end, buf, 8);
            if (end[0] != TP_END) {
                bench_err("throughput: channel %u: unexpected %d-byte message", a->ch, n);
                rc = BENCH_RT_MISMATCH;
                break;
            }
            uint32_t ack[3] = {TP_ACK, (uint32_t)r->received, 1};
            rc = a->ops->send(a->ctx, a->side, a->ch, ack, 12);
            break;
        }
        int e = bench_pattern_check(pat, buf, (uint32_t)n, expect, (int)sh->crc);
        if (e == BENCH_PAT_SEQ || e == BENCH_PAT_LEN) {
            r->loss++;
            if (n >= 4) /* resynchronise on the seq it carries */
                expect = bench_head(buf);
        } else if (e != BENCH_PAT_OK) {
            r->corrupt++;
        }
        expect++;
        r->received++;
        if (sh->mode == TP_PINGPONG) {
            rc = a->ops->send(a->ctx, a->side, a->ch, buf, (uint32_t)n);
        } else if (r->received % k == 0) {
            /* the last seq seen, not the count: a lost packet must not
             * shrink the sender's window for good */
            uint32_t ack[3] = {TP_ACK, expect - 1, 0};
            rc = a->ops->send(a->ctx, a->side, a->ch, ack, 12);
        }
        if (rc != 0)
            break;
    }
    return rc;
}

/* A channel's thread: its buffer and pattern, then its side's loop. */
static void *tp_thread(void *arg)
{
    tp_thr *a = arg;
    tp_chres *r = &a->sh->ch[a->ch];
    bench_pattern pat;
    uint32_t cap;
    unsigned char *buf;
    int rc = tp_thr_begin(a, &pat, &buf, &cap);
    if (rc == 0) {
        rc = a->side == BENCH_SIDE_A ? tp_send_loop(a, &pat, buf, cap)
                                     : tp_recv_loop(a, &pat, buf, cap);
        bench_pattern_free(&pat);
        free(buf);
    }
    *(a->side == BENCH_SIDE_A ? &r->rc_a : &r->rc_b) = rc;
    return NULL;
}

/* Either side: one thread per channel. */
static int tp_run_threads(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    tp_shared *sh = arg;
    pthread_t th[BENCH_MAX_CHAN];
    tp_thr ta[BENCH_MAX_CHAN];
    uint32_t started = 0;
    int rc = 0;
    for (uint32_t i = 0; i < sh->nch; i++) {
        ta[i] = (tp_thr){.ops = ops, .ctx = ctx, .side = side, .ch = i, .sh = sh};
        if (pthread_create(&th[i], NULL, tp_thread, &ta[i]) != 0) {
            bench_err("throughput: pthread_create failed");
            rc = -EAGAIN;
            break;
        }
        started++;
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
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (rc)
        return rc;
    int mism = 0;
    for (uint32_t i = 0; i < sh->nch; i++) {
        int r = side == BENCH_SIDE_A ? sh->ch[i].rc_a : sh->ch[i].rc_b;
        if (r == BENCH_RT_MISMATCH)
            mism = 1;
        else if (r != 0)
            return r;
    }
    return mism ? BENCH_RT_MISMATCH : 0;
}

static void tp_cell_ext(const tp_opts *o, const bench_host *h, int m, uint32_t nch, int bi,
                        uint32_t size, unsigned t, tp_cell *c)
{
    bench_ext_stream_res x;
    /* time-based: as many messages as fit in stream_time (the peer has no warm-up) */
    uint64_t want = o->stream_time > 0 ? 0xffff0000u : (o->totals[bi] + size - 1) / size;
    double budget = o->stream_time > 0 ? o->stream_time : o->cell_time;
    if (m != TP_STREAM || nch != 1 || size < bench_tr_min_size(o->tr[t]) ||
        bench_ext_stream(o->tr[t], size, want, o->window, (uint64_t)(budget * 1e9),
                         h->cpus.cpu[0], h->cpus.cpu[1], &x) == BENCH_SESSION_NA) {
        c->na = 1;
        return;
    }
    c->msgs = x.msgs;
    c->bytes = x.bytes;
    c->loss = x.lost;
    c->corrupt = x.corrupt;
    c->capped = o->stream_time <= 0 && x.msgs < want;
    c->wall_s = (double)x.wall_ns / 1e9;
    c->agg_bps = x.wall_ns ? (double)x.bytes / c->wall_s : NAN;
    c->msgs_ps = x.wall_ns ? (double)x.msgs / c->wall_s : NAN;
    c->ch_min_bps = c->ch_max_bps = c->agg_bps;
    c->ok = x.wall_ns && !x.lost && !x.corrupt;
    if (!c->ok)
        c->failures++;
}

static void tp_cell_run(const tp_opts *o, const bench_host *h, int m, int ci, int bi, int si,
                        unsigned t)
{
    tp_cell *c = &tp_cells[m][ci][bi][si][t];
    memset(c, 0, sizeof(*c));
    c->run = 1;
    uint32_t size = o->sizes[si], nch = o->chans[ci];
    if (o->tr[t]->ext) { /* a peer program: one-channel streams only */
        tp_cell_ext(o, h, m, nch, bi, size, t, c);
        return;
    }
    if ((size > 16 ? size : 16) > bench_tr_max_size(o->tr[t])) {
        c->na = 1;
        return;
    }
    tp_shared *sh = bench_shared_alloc(sizeof(tp_shared));
    if (!sh) {
        c->failures++;
        return;
    }
    sh->size = size;
    sh->nch = nch;
    sh->window = m == TP_STREAM ? o->window : 1;
    sh->mode = (uint32_t)m;
    sh->crc = (uint32_t)o->crc;
    sh->inject_corrupt = o->inject_corrupt;
    sh->inject_loss = o->inject_loss;
    sh->ctl_len = size == 12 ? 16 : 12;
    sh->per_ch_msgs = (o->totals[bi] + size - 1) / size;
    sh->budget_ns = (uint64_t)(o->cell_time * 1e9);
    if (m == TP_STREAM && o->stream_time > 0) {
        sh->per_ch_msgs = UINT64_MAX;
        sh->warm_ns = (uint64_t)(o->stream_time * 0.25e9);
        sh->budget_ns = sh->warm_ns + (uint64_t)(o->stream_time * 1e9);
    }
    bench_msg_job j = bench_job(o->tr[t], h->cpus.cpu[0], h->cpus.cpu[1], nch, size > 16 ? size : 16,
                                m == TP_STREAM ? o->window + 2 : 8, o->timeout_s, tp_run_threads,
                                tp_run_threads, sh);
    int src = bench_msg_session(&j, &c->integrity, &c->failures);
    c->ok = src == 0;
    if (src == BENCH_SESSION_NA) {
        c->na = 1;
        bench_shared_free(sh, sizeof(tp_shared));
        return;
    }
    /* the measured span: from the earliest end of a warm-up (0 without) to the last end */
    uint64_t wall = 0, start = UINT64_MAX;
    c->ch_min_bps = INFINITY;
    c->ch_max_bps = 0;
    for (uint32_t i = 0; i < nch; i++) {
        tp_chres *r = &sh->ch[i];
        c->msgs += r->sent - r->w_sent;
        c->bytes += r->bytes - r->w_bytes;
        c->loss += r->loss;
        c->corrupt += r->corrupt;
        if (!sh->warm_ns && r->sent < sh->per_ch_msgs)
            c->capped = 1;
        if (r->t_end > wall)
            wall = r->t_end;
        if (r->t_warm < start)
            start = r->t_warm;
        uint64_t span = r->t_end > r->t_warm ? r->t_end - r->t_warm : 0;
        double bps = span ? (double)(r->bytes - r->w_bytes) / ((double)span / 1e9) : 0;
        if (bps < c->ch_min_bps)
            c->ch_min_bps = bps;
        if (bps > c->ch_max_bps)
            c->ch_max_bps = bps;
    }
    wall = wall > start ? wall - start : 0;
    c->wall_s = (double)wall / 1e9;
    c->agg_bps = wall ? (double)c->bytes / c->wall_s : NAN;
    c->msgs_ps = wall ? (double)c->msgs / c->wall_s : NAN;
    if (c->loss || c->corrupt) {
        bench_err("throughput %s %u ch %u B %s: %llu lost, %llu corrupted", o->tr[t]->name, nch, size,
                  tp_mode_name[m], (unsigned long long)c->loss, (unsigned long long)c->corrupt);
        c->ok = 0;
        if (!c->integrity)
            c->integrity++;
    }
    bench_shared_free(sh, sizeof(tp_shared));
}

/* ---- output ---------------------------------------------------------------------- */

static const tp_cell *tp_find(const tp_opts *o, int m, int ci, int bi, int si, const char *name)
{
    int t = bench_tr_index(o->tr, o->n_tr, name);
    const tp_cell *c = t < 0 ? NULL : &tp_cells[m][ci][bi][si][t];
    return c && c->run && !c->na && c->ok ? c : NULL;
}

static double tp_ratio(const tp_opts *o, int m, int ci, int bi, int si, unsigned t, const char *ref)
{
    const tp_cell *c = &tp_cells[m][ci][bi][si][t];
    const tp_cell *r = ref ? tp_find(o, m, ci, bi, si, ref) : NULL;
    if (!r || !c->ok || c->na || !(r->agg_bps > 0))
        return NAN;
    return c->agg_bps / r->agg_bps;
}

static const char *tp_fmt_rate(char *b, size_t len, double bps)
{
    if (!isfinite(bps))
        snprintf(b, len, "-");
    else if (bps >= 1e9)
        snprintf(b, len, "%.2f GB/s", bps / 1e9);
    else if (bps >= 1e6)
        snprintf(b, len, "%.1f MB/s", bps / 1e6);
    else if (bps >= 1e3)
        snprintf(b, len, "%.1f kB/s", bps / 1e3);
    else
        snprintf(b, len, "%.0f B/s", bps);
    return b;
}

static void tp_print(FILE *out, const tp_opts *o, int m, int ci, int bi)
{
    char b[6][32];
    fprintf(out, "\n== %s, %u channel%s, ", tp_mode_name[m], o->chans[ci], o->chans[ci] == 1 ? "" : "s");
    if (tp_total(o, m, bi))
        fprintf(out, "%llu bytes per channel ==\n", (unsigned long long)o->totals[bi]);
    else
        fprintf(out, "%.2f s per cell after %.2f s of warm-up ==\n", o->stream_time, o->stream_time / 4);
    fprintf(out, "%-17s %7s %11s %12s %11s %23s %5s %5s  %-16s %s\n", "transport", "packet",
            "msgs", "aggregate", "msgs/s", "per channel min..max", "loss", "corr", "vs baseline",
            "vs mdcom-copy");
    for (int si = 0; si < o->n_sizes; si++) {
        for (unsigned t = 0; t < o->n_tr; t++) {
            const tp_cell *c = &tp_cells[m][ci][bi][si][t];
            const bench_transport *tr = o->tr[t];
            bench_fmt_size(b[0], sizeof(b[0]), o->sizes[si]);
            if (!c->run)
                continue;
            if (c->na) {
                if (o->sizes[si] > bench_tr_max_size(tr) && !tr->ext)
                    fprintf(out, "%-17s %7s  n/a (packets above %u B)\n", tr->name, b[0],
                            bench_tr_max_size(tr));
                else
                    fprintf(out, "%-17s %7s  n/a (%s)\n", tr->name, b[0],
                            tr->ext ? "one-channel streams of >= 4 B only, or not built"
                                    : "this channel count or a limit of this machine");
                continue;
            }
            if (!c->ok && !c->loss && !c->corrupt) {
                fprintf(out, "%-17s %7s  ERROR: %u integrity, %u other\n", tr->name, b[0],
                        c->integrity, c->failures);
                continue;
            }
            char rb[32], rm[16], per[48];
            bench_fmt_ratios(rb, sizeof(rb), rm, sizeof(rm), tr,
                             tp_ratio(o, m, ci, bi, si, t, tr->baseline),
                             tp_ratio(o, m, ci, bi, si, t, bench_mdcom_ref(tr)));
            snprintf(per, sizeof(per), "%s..%s", tp_fmt_rate(b[1], sizeof(b[1]), c->ch_min_bps),
                     tp_fmt_rate(b[2], sizeof(b[2]), c->ch_max_bps));
            fprintf(out, "%-17s %7s %10llu%s %12s %11.0f %23s %5llu %5llu  %-16s %s\n", tr->name, b[0],
                    (unsigned long long)c->msgs, c->capped ? "*" : " ",
                    tp_fmt_rate(b[3], sizeof(b[3]), c->agg_bps), c->msgs_ps, per,
                    (unsigned long long)c->loss, (unsigned long long)c->corrupt, rb, rm);
        }
        if (m == TP_PINGPONG && o->chans[ci] == 1)
            for (unsigned k = 0; k < sizeof(tp_published) / sizeof(tp_published[0]); k++)
                if (tp_published[k].size == o->sizes[si])
                    fprintf(out, "%-17s %7s %11s %12s  (published: ADI SC598 RPMsg, seed 002)\n",
                            "", b[0], "", tp_fmt_rate(b[4], sizeof(b[4]), tp_published[k].bps));
    }
    if (tp_total(o, m, bi))
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
    const tp_cell *c = c1 >= 0 && s64 >= 0 ? tp_find(o, TP_STREAM, c1, bi, s64, mt) : NULL;
    bench_target *t = bench_target_new(&tg[n++], 20e6, "msgs/s", "%s stream 1 ch 64 B: msgs/s >= 20 M", mt);
    bench_target_eval(t, c ? c->msgs_ps : NAN, 1);
    snprintf(t->detail, sizeof(t->detail), "%.2f M msgs/s", t->value / 1e6);
    c = c1 >= 0 && s4k >= 0 ? tp_find(o, TP_STREAM, c1, bi, s4k, mt) : NULL;
    t = bench_target_new(&tg[n++], 10e9, "B/s", "%s stream 1 ch 4 KiB: bytes/s >= 10 GB/s", mt);
    bench_target_eval(t, c ? c->agg_bps : NAN, 1);
    snprintf(t->detail, sizeof(t->detail), "%.2f GB/s", t->value / 1e9);
    /* 32-channel aggregate >= 0.9x the 1-channel aggregate, per mdcom transport and mode */
    for (unsigned k = 0; k < o->n_tr && n < 30; k++)
        for (int m = 0; m < TP_NMODES && strncmp(o->tr[k]->name, "mdcom-", 6) == 0; m++) {
            if (!o->modes[m])
                continue;
            t = bench_target_new(&tg[n++], 0.9, NULL, "%s %s 64 B: 32-ch / 1-ch aggregate >= 0.9",
                                 o->tr[k]->name, tp_mode_name[m]);
            int bm = tp_ntot(o, m) - 1;
            const tp_cell *a = c32 >= 0 && s64 >= 0 ? tp_find(o, m, c32, bm, s64, o->tr[k]->name) : NULL;
            const tp_cell *b = c1 >= 0 && s64 >= 0 ? tp_find(o, m, c1, bm, s64, o->tr[k]->name) : NULL;
            bench_target_eval(t, a && b && b->agg_bps > 0 ? a->agg_bps / b->agg_bps : NAN, 1);
            char x[32], y[32];
            if (!isnan(t->value))
                snprintf(t->detail, sizeof(t->detail), "%s / %s", tp_fmt_rate(x, sizeof(x), a->agg_bps),
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

/* A cell's key: its mode, channel count, total and size index, transport. */
typedef struct tp_key {
    int m, ci, bi, si;
    unsigned t;
} tp_key;

/* fn(o, key, cell, out) for every cell that ran, in report order. */
static void tp_each(const tp_opts *o, void (*fn)(const tp_opts *, tp_key, const tp_cell *, void *),
                    void *out)
{
    for (int m = 0; m < TP_NMODES; m++)
        for (int ci = 0; ci < o->n_chans; ci++)
            for (int bi = 0; bi < tp_ntot(o, m); bi++)
                for (int si = 0; si < o->n_sizes; si++)
                    for (unsigned t = 0; t < o->n_tr; t++)
                        if (tp_cells[m][ci][bi][si][t].run)
                            fn(o, (tp_key){m, ci, bi, si, t}, &tp_cells[m][ci][bi][si][t], out);
}

static void tp_row(const tp_opts *o, tp_key key, const tp_cell *c, void *out)
{
    bench_row *w = out;
    int m = key.m, ci = key.ci, bi = key.bi, si = key.si;
    unsigned t = key.t;
    if (!w->j && c->na)
        return;
    w->k = (bench_csv_key){.scenario = "throughput", .transport = o->tr[t]->name,
                           .mode = tp_mode_name[m], .size = o->sizes[si], .channels = o->chans[ci],
                           .n = c->msgs, .total = tp_total(o, m, bi)};
    bench_json_obj_begin(w->j, NULL);
    bench_json_str(w->j, "transport", o->tr[t]->name);
    bench_json_str(w->j, "mode", tp_mode_name[m]);
    bench_json_u64(w->j, "channels", o->chans[ci]);
    bench_json_u64(w->j, "size", o->sizes[si]);
    bench_json_u64(w->j, "total_per_channel", tp_total(o, m, bi));
    bench_json_bool(w->j, "na", c->na);
    bench_json_bool(w->j, "ok", c->ok);
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
    bench_json_dbl(w->j, "ratio_to_baseline", tp_ratio(o, m, ci, bi, si, t, o->tr[t]->baseline));
    bench_json_dbl(w->j, "ratio_to_mdcom", tp_ratio(o, m, ci, bi, si, t, bench_mdcom_ref(o->tr[t])));
    bench_json_obj_end(w->j);
}

static void tp_rows(bench_row *w, void *arg)
{
    tp_each(arg, tp_row, w);
}

static void tp_json(bench_json *j, void *arg)
{
    (void)arg;
    bench_json_arr_begin(j, "published");
    for (unsigned k = 0; k < sizeof(tp_published) / sizeof(tp_published[0]); k++) {
        bench_json_obj_begin(j, NULL);
        bench_json_str(j, "source", "seed 002 ADI SC598 RPMsg, 1 channel, 1e6 bytes");
        bench_json_u64(j, "size", tp_published[k].size);
        bench_json_dbl(j, "bytes_per_s", tp_published[k].bps);
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
    bench_run r = {.cmd = "throughput", .json = o.json, .csv = o.csv, .quick = o.quick,
                   .json_config = tp_json_config,
                   .rows = tp_rows, .json_body = tp_json, .arg = &o};
    if (bench_run_begin(&r))
        return BENCH_EXIT_USAGE;
    FILE *out = r.out;
    fprintf(out, "cells: sender threads on cpu A, receiver threads on cpu B, one per channel;\n"
                 "       stream window %u, %.2f s per stream cell; ping-pong at most %.2f s\n"
                 "       per cell; every packet checked\n",
            o.window, o.stream_time, o.cell_time);
    char b1[24];
    bench_progress_plan((uint64_t)(o.modes[0] * o.n_totals + o.modes[1] * tp_ntot(&o, TP_STREAM)) *
                        (unsigned)o.n_chans * (unsigned)o.n_sizes * o.n_tr);
    for (int m = 0; m < TP_NMODES && !bench_interrupted; m++) {
        if (!o.modes[m])
            continue;
        for (int ci = 0; ci < o.n_chans && !bench_interrupted; ci++)
            for (int bi = 0; bi < tp_ntot(&o, m) && !bench_interrupted; bi++) {
                for (int si = 0; si < o.n_sizes && !bench_interrupted; si++)
                    for (unsigned t = 0; t < o.n_tr && !bench_interrupted; t++) {
                        bench_progress("throughput %s %u ch %s: %s", tp_mode_name[m], o.chans[ci],
                                       bench_fmt_size(b1, sizeof(b1), o.sizes[si]), o.tr[t]->name);
                        tp_cell_run(&o, &r.h, m, ci, bi, si, t);
                        r.integrity += tp_cells[m][ci][bi][si][t].integrity;
                        r.failures += tp_cells[m][ci][bi][si][t].failures;
                    }
                bench_progress_end();
                tp_print(out, &o, m, ci, bi);
            }
    }
    bench_target tg[32];
    return bench_run_end(&r, 0, tg, tp_targets(&o, tg), 0);
}

BENCH_CMD(throughput, "throughput",
          "1/8/32 channels x packet size, ping-pong and streaming, checked",
          tp_main, .opts = tp_opts_tab, .tail = 3,
          .about = "Channels x packet size x bytes per channel. One sender thread per channel\n"
                   "(cpu A) and one receiver thread per channel (cpu B). Every packet is checked\n"
                   "(seq + CRC32C + bytes); loss and corruption must be 0. Aggregate = total\n"
                   "bytes / wall time. --cell-time: default 1 s, --quick 0.2.\n");
