/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * latency.c - `mdcom-bench latency` (and its preset `pingpong`): round-trip
 * and one-way latency of every transport, 1 B .. 16 MiB, percentiles, 1-us
 * CDF points, ratios to the baselines and to mdcom, targets.
 * Method: docs/benchmarks.md, `latency`.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "transport.h"

#define LT_MAX_SIZES 32
#define LT_MAX_TR 24
#define LT_MAX_SIZE (16u * 1024u * 1024u)

/* CDF points: these percentiles of the samples (the report's 64 B CDF) */
static const double lt_cdf_p[] = {0.1, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90,
                                  95, 98, 99, 99.5, 99.9, 99.95, 99.99, 100};
#define LT_NCDF (sizeof(lt_cdf_p) / sizeof(lt_cdf_p[0]))

/* ns at lt_cdf_p (all 0 without samples) */
typedef struct lt_cdf {
    uint64_t ns[LT_NCDF];
} lt_cdf;

typedef struct lt_cell {
    int run, na; /* na: size outside what the transport takes */
    uint64_t samples;
    bench_rt_result k[2]; /* [0] round trips, [1] one way */
    lt_cdf h[2];
} lt_cell;

typedef struct lt_opts {
    uint32_t sizes[LT_MAX_SIZES];
    int n_sizes;
    uint64_t iters;
    double cell_time, timeout_s;
    uint32_t rounds;
    const char *sizes_s, *trs_s;
    int quick, no_oneway, strict, api;
    uint64_t api_calls;
    const char *cmd; /* "latency", or "pingpong" (the preset) */
    const char *json, *csv;
    const bench_transport *tr[LT_MAX_TR];
    unsigned n_tr;
} lt_opts;

static lt_cell lt_cells[LT_MAX_TR][LT_MAX_SIZES];


/* The preset that makes `pingpong` (see lt_pingpong_main). */
#define PINGPONG_SIZES "64,256,1K,4K,16K,64K,256K,1M"
#define PINGPONG_TRS "raw-spin,raw-futex,mdcom-copy-poll,mdcom-zc-poll,mdcom-copy-block,mdcom-zc-block"
#define PINGPONG_PRESET_TEXT                                                                       \
    "--sizes " PINGPONG_SIZES " --no-oneway --api\n  --transports " PINGPONG_TRS

static const bench_opt lt_opts_tab[] = {
    BOPT(lt_opts, sizes_s, "sizes", BO_STR, 0, 0, "LIST",
         "payload sizes (default 1 B .. 16 MiB in log2 steps;\n--quick 1,64,1K,4K,64K,1M)"),
    BENCH_COMMON_OPTS(lt_opts),
    BOPT(lt_opts, iters, "iters", BO_U64, 1, 1e8, "N",
         "samples per cell (default 100k up to 4 KiB, 50k, 20k,\n5k, 2k, then 500 above 1 MiB; "
         "--quick 2000 / 200)"),
    BOPT(lt_opts, rounds, "rounds", BO_U32, 1, 100, "R",
         "chunks per cell, round-robin over transports (default 3,\n--quick 1)"),
    BOPT(lt_opts, no_oneway, "no-oneway", BO_FLAG, 1, 0, NULL, "round trips only"),
    BOPT(lt_opts, api, "api", BO_FLAG, 1, 0, NULL,
         "also time single API calls in one process (targets:\n<= 50 ns per call)"),
    BOPT(lt_opts, api, "no-api", BO_FLAG, 0, 0, NULL, "not"),
    BOPT(lt_opts, api_calls, "api-calls", BO_U64, 1, 1e9, "N",
         "calls per API (default 1M, --quick 64k)"),
    BOPT(lt_opts, strict, "strict", BO_FLAG, 1, 0, NULL, "exit 3 when a target is missed"),
    {0},
};

/* Samples per cell: one default for every entry point (latency, pingpong,
 * suite), so that a cell measures the same way wherever it runs. */
static uint64_t bench_default_samples(uint32_t size, int quick)
{
    if (quick)
        return size <= 4096u ? 2000u : 200u;
    if (size <= 4096u)
        return 100000u;
    if (size <= 16384u)
        return 50000u;
    if (size <= 65536u)
        return 20000u;
    if (size <= 262144u)
        return 5000u;
    if (size <= 1048576u)
        return 2000u;
    return 500u;
}

/* o: the defaults, then the options */
static int lt_parse(int argc, char **argv, lt_opts *o)
{
    const char *cmd = o->cmd;
    int rc = bench_opts_parse(cmd, lt_opts_tab, o, argc, argv);
    if (rc != 0)
        return rc;
    const char *sizes = o->sizes_s, *trs = o->trs_s;
    if (sizes) {
        o->n_sizes = bench_parse_size_list(sizes, o->sizes, LT_MAX_SIZES, 1, LT_MAX_SIZE, NULL);
        if (o->n_sizes < 0)
            return -1;
    } else if (o->quick) {
        o->n_sizes = bench_parse_size_list("1,64,1K,4K,64K,1M", o->sizes, LT_MAX_SIZES, 1,
                                           LT_MAX_SIZE, NULL);
    } else {
        o->n_sizes = bench_log2_sizes(o->sizes, LT_MAX_SIZES, 1, LT_MAX_SIZE);
    }
    if (bench_parse_transports(trs, o->tr, &o->n_tr, LT_MAX_TR, 0, cmd) != 0)
        return -1;
    if (o->cell_time < 0)
        o->cell_time = o->iters ? 0.0 : o->quick ? 0.05 : 0.5;
    if (!o->rounds)
        o->rounds = o->quick ? 1 : 3;
    return 0;
}

/* ------------------------------------------------------------------ */

static int lt_is_mdcom_fifo(const bench_transport *t)
{
    return strncmp(t->name, "mdcom-copy-", 11) == 0 || strncmp(t->name, "mdcom-zc-", 9) == 0;
}

/* peers: everything that is neither a raw baseline nor mdcom */
static int lt_is_peer(const bench_transport *t)
{
    return strncmp(t->name, "raw-", 4) != 0 && strncmp(t->name, "mdcom-", 6) != 0;
}

/* p50 of a clean cell, or 0 */
static uint64_t lt_p50(int t, int s, int oneway)
{
    if (t < 0)
        return 0;
    const lt_cell *c = &lt_cells[t][s];
    return c->run && !c->na && c->k[oneway].ok && c->k[oneway].st.n ? c->k[oneway].st.p50 : 0;
}

static double lt_ratio(uint64_t a, uint64_t b) { return a && b ? (double)a / (double)b : NAN; }

static void lt_cdf_make(lt_cdf *h, const uint64_t *sorted, size_t n)
{
    for (size_t i = 0; i < LT_NCDF && n; i++)
        h->ns[i] = bench_percentile(sorted, n, lt_cdf_p[i]);
}

/* ---- one way ------------------------------------------------------------------------ */

/* One way (docs/benchmarks.md): the round-trip loop with side B stamping
 * each arrival into shared memory and answering with a 4-byte ack. */
static void lt_oneway(const lt_opts *o, const bench_host *h, int t, int s, uint64_t samples,
                      uint64_t warm)
{
    lt_cell *c = &lt_cells[t][s];
    size_t t1len = (warm + samples) * sizeof(uint64_t);
    uint64_t *t0 = malloc(samples * sizeof(uint64_t)), *t1 = bench_shared_alloc(t1len);
    bench_rt_result *r = &c->k[1];
    size_t n = 0;
    if (!t0 || !t1) {
        bench_err("%s: out of memory for one-way samples", o->cmd);
        r->failures++;
    } else {
        bench_rt_opts ro = {.size = o->sizes[s], .max_size = o->sizes[s], .samples = samples,
                            .warmup = warm, .budget_ns = (uint64_t)(o->cell_time * 1e9),
                            .timeout_ns = (int64_t)(o->timeout_s * 1e9),
                            .cpu_ping = h->cpus.cpu[0], .cpu_pong = h->cpus.cpu[1], .t1 = t1};
        r->ok = bench_rt_chunk(o->tr[t], &ro, t0, &n, r) == 0;
        c->na |= r->na;
        for (size_t k = 0; k < n; k++) { /* sample k has seq warmup_done + k + 1 */
            uint64_t a = t1[r->warmup_done + k];
            t0[k] = a > t0[k] ? a - t0[k] : 0;
        }
        bench_stats_compute(t0, n, &r->st);
        lt_cdf_make(&c->h[1], t0, n);
    }
    free(t0);
    bench_shared_free(t1, t1len);
}

/* Untimed round trips before a cell's samples: samples / 10 within 32..5000. */
static uint64_t lt_warmup(uint64_t samples)
{
    uint64_t w = samples / 10;
    return w < 32 ? 32 : w > 5000 ? 5000 : w;
}

/* ---- one size ---------------------------------------------------------------------- */

static int lt_measure_size(const lt_opts *o, const bench_host *h, int s)
{
    uint64_t *buf[LT_MAX_TR] = {0};
    size_t nbuf[LT_MAX_TR] = {0};
    int failed[LT_MAX_TR] = {0};
    uint64_t cell_budget = (uint64_t)(o->cell_time * 1e9);
    uint32_t size = o->sizes[s];
    char b1[24];
    int rc = 0;
    for (unsigned t = 0; t < o->n_tr; t++) {
        lt_cell *c = &lt_cells[t][s];
        memset(c, 0, sizeof(*c));
        c->run = 1;
        c->na = size < bench_tr_min_size(o->tr[t]) || size > bench_tr_max_size(o->tr[t]);
        c->samples = o->iters ? o->iters : bench_default_samples(size, o->quick);
        if (c->na)
            continue;
        buf[t] = malloc(c->samples * sizeof(uint64_t));
        if (!buf[t]) {
            bench_err("%s: out of memory for %llu samples", o->cmd, (unsigned long long)c->samples);
            rc = -1;
            goto out;
        }
    }
    for (unsigned r = 0; r < o->rounds; r++) {
        for (unsigned t = 0; t < o->n_tr; t++) {
            lt_cell *c = &lt_cells[t][s];
            if (c->na || failed[t] || nbuf[t] >= c->samples)
                continue;
            bench_progress("latency %s: round trip %s, round %u/%u",
                           bench_fmt_size(b1, sizeof(b1), size), o->tr[t]->name, r + 1, o->rounds);
            uint64_t left = c->samples - nbuf[t];
            uint64_t chunk = (left + (o->rounds - r) - 1) / (o->rounds - r);
            uint64_t warm = lt_warmup(c->samples);
            warm /= o->rounds;
            bench_rt_opts ro = {.size = size,
                                .max_size = size,
                                .samples = chunk,
                                .warmup = warm < 32 ? 32 : warm,
                                .budget_ns = cell_budget / o->rounds,
                                .timeout_ns = (int64_t)(o->timeout_s * 1e9),
                                .cpu_ping = h->cpus.cpu[0],
                                .cpu_pong = h->cpus.cpu[1]};
            if (bench_rt_chunk(o->tr[t], &ro, buf[t], &nbuf[t], &c->k[0]) != 0)
                failed[t] = 1;
            if (bench_interrupted)
                goto out;
        }
    }
    for (unsigned t = 0; t < o->n_tr; t++) {
        lt_cell *c = &lt_cells[t][s];
        bench_rt_result *r = &c->k[0];
        c->na |= r->na;
        if (c->na)
            continue;
        bench_stats_compute(buf[t], nbuf[t], &r->st);
        r->ok = !failed[t] && r->integrity == 0 && r->failures == 0;
        lt_cdf_make(&c->h[0], buf[t], nbuf[t]);
    }
    if (!o->no_oneway) {
        for (unsigned t = 0; t < o->n_tr; t++) {
            lt_cell *c = &lt_cells[t][s];
            if (c->na || !bench_tr_carries(o->tr[t]))
                continue;
            bench_progress("latency %s: one way %s", bench_fmt_size(b1, sizeof(b1), size),
                           o->tr[t]->name);
            uint64_t warm = lt_warmup(c->samples);
            lt_oneway(o, h, (int)t, s, c->samples, warm);
            if (bench_interrupted)
                goto out;
        }
    }
out:
    bench_progress_end();
    for (unsigned t = 0; t < o->n_tr; t++)
        free(buf[t]);
    return rc;
}

/* ---- output ---------------------------------------------------------------------------- */

/* One result row: a cell's round trips or one-way times, with what the
 * text, the JSON object and the CSV rows all show. */
typedef struct lt_rowv {
    const bench_transport *tr;
    const lt_cell *c;
    const bench_rt_result *k; /* c->k[ow] */
    const bench_stats *st;    /* &k->st */
    int s, ow;
    double r_base, r_mdcom; /* p50 ratios */
} lt_rowv;

static lt_rowv lt_rowv_of(const lt_opts *o, unsigned t, int s, int ow)
{
    const lt_cell *c = &lt_cells[t][s];
    const bench_transport *tr = o->tr[t];
    lt_rowv r = {.tr = tr, .c = c, .k = &c->k[ow], .st = &c->k[ow].st, .s = s, .ow = ow};
    int b = bench_tr_index(o->tr, o->n_tr, tr->baseline);
    int m = bench_tr_index(o->tr, o->n_tr, bench_mdcom_ref(tr));
    r.r_base = tr->baseline ? lt_ratio(r.st->p50, lt_p50(b, s, ow)) : NAN;
    r.r_mdcom = lt_ratio(r.st->p50, lt_p50(m, s, ow));
    return r;
}

/* fn(o, row, out) for every row that ran, in report order. */
static void lt_each(const lt_opts *o, void (*fn)(const lt_opts *, const lt_rowv *, void *), void *out)
{
    for (int s = 0; s < o->n_sizes; s++)
        for (unsigned t = 0; t < o->n_tr; t++)
            for (int ow = 0; ow < 2; ow++) {
                const bench_transport *tr = o->tr[t];
                if (!lt_cells[t][s].run || (ow && (o->no_oneway || !bench_tr_carries(tr))))
                    continue;
                lt_rowv r = lt_rowv_of(o, t, s, ow);
                fn(o, &r, out);
            }
}

static void lt_row(FILE *out, const lt_opts *o, const lt_rowv *r)
{
    const bench_transport *tr = r->tr;
    const bench_stats *st = r->st;
    char b[8][24];
    if (r->c->na) {
        if (o->sizes[r->s] > bench_tr_max_size(tr) && bench_tr_max_size(tr) != UINT32_MAX)
            fprintf(out, "%-17s %8s  n/a (this transport takes at most %u B here)\n", tr->name, "-",
                    bench_tr_max_size(tr));
        else if (o->sizes[r->s] < bench_tr_min_size(tr))
            fprintf(out, "%-17s %8s  n/a (payload below %u B)\n", tr->name, "-",
                    bench_tr_min_size(tr));
        else
            fprintf(out, "%-17s %8s  n/a (size or limit not supported here, see above)\n",
                    tr->name, "-");
        return;
    }
    if (!r->k->ok || st->n == 0) {
        fprintf(out, "%-17s %8zu  ERROR: %u integrity, %u other (messages above)\n", tr->name,
                st->n, r->k->integrity, r->k->failures);
        return;
    }
    char rb[40], rm[40];
    bench_fmt_ratios(rb, sizeof(rb), rm, sizeof(rm), tr, r->r_base, r->r_mdcom);
    fprintf(out, "%-17s %8zu %9s %9s %9s %9s %9s %9s  %-22s %s\n", tr->name, st->n,
            bench_fmt_ns(b[1], sizeof(b[1]), (double)st->min),
            bench_fmt_ns(b[2], sizeof(b[2]), (double)st->p50),
            bench_fmt_ns(b[3], sizeof(b[3]), (double)st->p90),
            bench_fmt_ns(b[4], sizeof(b[4]), (double)st->p99),
            bench_fmt_ns(b[5], sizeof(b[5]), (double)st->p999),
            bench_fmt_ns(b[6], sizeof(b[6]), (double)st->max), rb, rm);
}

static void lt_print_size(FILE *out, const lt_opts *o, int s)
{
    char b[24];
    for (int oneway = 0; oneway < 2; oneway++) {
        if (oneway && o->no_oneway)
            continue;
        fprintf(out, "\n== %s %s ==\n", bench_fmt_size(b, sizeof(b), o->sizes[s]),
                oneway ? "one way" : "round trip");
        fprintf(out, "%-17s %8s %9s %9s %9s %9s %9s %9s  %-22s %s\n", "transport", "n", "min",
                "p50", "p90", "p99", "p99.9", "max", "p50 vs baseline", "p50 vs mdcom-copy");
        for (unsigned t = 0; t < o->n_tr; t++) {
            if (oneway && !bench_tr_carries(o->tr[t]))
                continue;
            lt_rowv r = lt_rowv_of(o, t, s, oneway);
            lt_row(out, o, &r);
        }
    }
    fflush(out);
}

/* ---- targets ------------------------------------------------------------------------ */

#define LT_MAX_TARGETS 48

/* Target: mdcom transport m (m < 0: the best mdcom FIFO variant of each
 * size) has a lower p50 than peer p at every size both carry. */
static void lt_faster_everywhere(const lt_opts *o, bench_target *t, int p, int m)
{
    char b1[24];
    bench_target_new(t, 1.0, NULL, "%s p50 < %s p50, every size",
                     m < 0 ? "mdcom FIFO (best)" : o->tr[m]->name, o->tr[p]->name);
    unsigned cmp = 0, faster = 0;
    double worst = NAN;
    uint32_t worst_size = 0;
    for (int s = 0; s < o->n_sizes; s++) {
        uint64_t pp = lt_p50(p, s, 0), best = m < 0 ? 0 : lt_p50(m, s, 0);
        for (unsigned k = 0; k < o->n_tr && m < 0; k++) {
            uint64_t v = lt_is_mdcom_fifo(o->tr[k]) ? lt_p50((int)k, s, 0) : 0;
            if (v && (!best || v < best))
                best = v;
        }
        if (!pp || !best)
            continue;
        cmp++;
        double r = (double)best / (double)pp;
        faster += r < 1.0;
        if (isnan(worst) || r > worst) {
            worst = r;
            worst_size = o->sizes[s];
        }
    }
    t->value = worst;
    t->state = !cmp ? BT_SKIPPED : faster == cmp ? BT_MET : BT_MISSED;
    if (cmp)
        snprintf(t->detail, sizeof(t->detail), "faster at %u of %u sizes; worst %.3fx at %s",
                 faster, cmp, worst, bench_fmt_size(b1, sizeof(b1), worst_size));
}

/* Target: p50 of transport a at size sa over p50 of b at sb (sizes in bytes). */
static bench_target *lt_ratio_target(const lt_opts *o, bench_target *t, const char *a, uint32_t sa,
                                     const char *b, uint32_t sb, double limit, int at_least)
{
    char b1[24], b2[24], n1[24], n2[24];
    int ia = bench_idx_u32(o->sizes, o->n_sizes, sa);
    int ib = bench_idx_u32(o->sizes, o->n_sizes, sb);
    uint64_t va = ia < 0 ? 0 : lt_p50(bench_tr_index(o->tr, o->n_tr, a), ia, 0);
    uint64_t vb = ib < 0 ? 0 : lt_p50(bench_tr_index(o->tr, o->n_tr, b), ib, 0);
    bench_target_new(t, limit, NULL, "%s p50 %s / %s p50 %s", a, bench_fmt_size(n1, sizeof(n1), sa),
                     b, bench_fmt_size(n2, sizeof(n2), sb));
    bench_target_eval(t, lt_ratio(va, vb), at_least);
    if (!isnan(t->value))
        snprintf(t->detail, sizeof(t->detail), "%s / %s%s", bench_fmt_ns(b1, sizeof(b1), (double)va),
                 bench_fmt_ns(b2, sizeof(b2), (double)vb), at_least ? " (target >= 10x)" : "");
    return t;
}

static unsigned lt_targets(const lt_opts *o, bench_target *tg)
{
    unsigned n = 0;
    static const struct {
        const char *num, *den;
        double limit;
    } ratio64[] = {{"mdcom-copy-poll", "raw-spin", 1.5},
                   {"mdcom-zc-poll", "raw-spin", 1.5},
                   {"mdcom-copy-block", "raw-futex", 1.15},
                   {"mdcom-zc-block", "raw-futex", 1.15}};
    for (unsigned i = 0; i < sizeof(ratio64) / sizeof(ratio64[0]); i++)
        lt_ratio_target(o, &tg[n++], ratio64[i].num, 64, ratio64[i].den, 64, ratio64[i].limit, 0);
    /* zero copy: the round trip does not grow with the payload */
    static const char *const zc[] = {"mdcom-zc-poll", "mdcom-zc-block"};
    for (unsigned i = 0; i < 2; i++)
        if (bench_tr_index(o->tr, o->n_tr, zc[i]) >= 0)
            lt_ratio_target(o, &tg[n++], zc[i], 1u << 20, zc[i], 64, 1.5, 0);
    /* mdcom faster than every peer at every size: the best FIFO variant (cb < 0),
     * and mdcom-copy-block against each blocking peer (same wait class, same
     * copy semantics) */
    int cb = bench_tr_index(o->tr, o->n_tr, "mdcom-copy-block");
    for (int pass = 0; pass < 2; pass++)
        for (unsigned p = 0; p < o->n_tr && n < LT_MAX_TARGETS - 1; p++) {
            if (!lt_is_peer(o->tr[p]) ||
                (pass && (cb < 0 || o->tr[p]->wait_class != BENCH_WAIT_BLOCK)))
                continue;
            lt_faster_everywhere(o, &tg[n++], (int)p, pass ? cb : -1);
        }
    /* mdcom FIFO >= 10x the RPMsg transport */
    for (unsigned p = 0; p < o->n_tr && n < LT_MAX_TARGETS; p++)
        if (strstr(o->tr[p]->name, "rpmsg"))
            lt_ratio_target(o, &tg[n++], o->tr[p]->name, 64, bench_mdcom_ref(o->tr[p]), 64, 10.0, 1);
    return n;
}

/* The cost of single API calls (api.c, the zero-copy path), one target each. */
static unsigned lt_api(FILE *out, const lt_opts *o, bench_target *tg, unsigned *integrity,
                       unsigned *failures)
{
    bench_api_result api[BENCH_API_NX];
    uint64_t calls = o->api_calls ? o->api_calls
                                  : o->quick ? BENCH_API_CALLS_QUICK : BENCH_API_CALLS_DEFAULT;
    unsigned integ = 0;
    int rc = bench_api_run(calls, api, &integ);
    *integrity += integ;
    if (rc != 0) {
        *failures += !integ;
        fprintf(out, "\n== api: ERROR (messages above)\n");
        return 0;
    }
    fprintf(out, "\n== api: mean cost of one call (single process) ==");
    return bench_api_report(out, api, BENCH_API_N, tg);
}

/* The CDF points as "hist" (the report's distribution plots read it). */
static void lt_json_cdf(bench_json *j, const lt_cdf *h)
{
    bench_json_obj_begin(j, "hist");
    bench_json_arr_begin(j, "cdf_pct");
    for (size_t i = 0; i < LT_NCDF; i++)
        bench_json_dbl(j, NULL, lt_cdf_p[i]);
    bench_json_arr_end(j);
    bench_json_arr_begin(j, "cdf_ns");
    for (size_t i = 0; i < LT_NCDF; i++)
        bench_json_u64(j, NULL, h->ns[i]);
    bench_json_arr_end(j);
    bench_json_obj_end(j);
}

static void lt_json_config(bench_json *j, void *arg)
{
    const lt_opts *o = arg;
    bench_json_arr_begin(j, "sizes");
    for (int s = 0; s < o->n_sizes; s++)
        bench_json_u64(j, NULL, o->sizes[s]);
    bench_json_arr_end(j);
    bench_json_u64(j, "iters", o->iters);
    bench_json_dbl(j, "cell_time_s", o->cell_time);
    bench_json_u64(j, "rounds", o->rounds);
    bench_json_dbl(j, "timeout_s", o->timeout_s);
}

static void lt_out_row(const lt_opts *o, const lt_rowv *r, void *out)
{
    bench_row *w = out;
    const bench_stats *st = r->st;
    if (!w->j && (r->c->na || !r->k->ok))
        return;
    w->k = (bench_csv_key){.scenario = "latency", .transport = r->tr->name,
                           .mode = r->ow ? "oneway" : "rtt", .size = o->sizes[r->s], .n = st->n};
    bench_json_obj_begin(w->j, NULL);
    bench_json_str(w->j, "transport", r->tr->name);
    bench_json_str(w->j, "kind", r->ow ? "oneway" : "rtt");
    bench_json_str(w->j, "wait", r->tr->wait_class == BENCH_WAIT_POLL ? "poll" : "block");
    bench_json_u64(w->j, "size", o->sizes[r->s]);
    bench_json_bool(w->j, "na", r->c->na);
    if (!r->c->na) {
        bench_json_bool(w->j, "ok", r->k->ok);
        bench_json_u64(w->j, "integrity_errors", r->k->integrity);
        bench_json_u64(w->j, "failures", r->k->failures);
        bench_json_stats(w->j, "stats", st);
        bench_json_str(w->j, "baseline", r->tr->baseline);
        bench_json_str(w->j, "mdcom_ref", bench_mdcom_ref(r->tr));
        static const char *const name[] = {"min", "p50", "p90", "p99", "p99.9", "max"};
        const uint64_t v[] = {st->min, st->p50, st->p90, st->p99, st->p999, st->max};
        for (unsigned i = 0; i < 6; i++)
            bench_row_num(w, NULL, name[i], (double)v[i], "ns");
        bench_row_num(w, NULL, "mean", st->mean, "ns");
        bench_row_num(w, NULL, "stddev", st->stddev, "ns");
        bench_row_num(w, "p50_ratio_to_baseline", r->tr->baseline ? "p50_ratio_to_baseline" : NULL,
                      r->r_base, "x");
        bench_row_num(w, "p50_ratio_to_mdcom", "p50_ratio_to_mdcom", r->r_mdcom, "x");
        lt_json_cdf(w->j, &r->c->h[r->ow]);
    }
    bench_json_obj_end(w->j);
}

static void lt_rows(bench_row *w, void *arg)
{
    lt_each(arg, lt_out_row, w);
}

static int lt_main(int argc, char **argv)
{
    lt_opts o = {.cmd = argv[0], .cell_time = -1, .timeout_s = 5};
    int prc = bench_parsed(lt_parse(argc, argv, &o),
                           strcmp(o.cmd, "pingpong") ? &bench_cmd_latency : &bench_cmd_pingpong);
    if (prc >= 0)
        return prc;
    memset(lt_cells, 0, sizeof(lt_cells));
    bench_run r = {.cmd = o.cmd, .json = o.json, .csv = o.csv, .quick = o.quick,
                   .json_config = lt_json_config,
                   .rows = lt_rows, .arg = &o};
    if (bench_run_begin(&r))
        return BENCH_EXIT_USAGE;
    FILE *out = r.out;
    fprintf(out, "cells: %d sizes x %u transports; up to %.2f s of samples per cell in %u round%s;\n"
                 "       round trip = SIZE bytes there and back; one way = send to the peer's\n"
                 "       receive returning (message-interface transports)\n",
            o.n_sizes, o.n_tr, o.cell_time, o.rounds, o.rounds == 1 ? "" : "s");
    fflush(out);
    unsigned n_ow = 0;
    for (unsigned t = 0; t < o.n_tr; t++)
        n_ow += bench_tr_carries(o.tr[t]);
    bench_progress_plan((uint64_t)o.n_sizes *
                        (o.n_tr * o.rounds + (o.no_oneway ? 0 : n_ow)));
    int rc = 0;
    for (int s = 0; s < o.n_sizes; s++) {
        if (lt_measure_size(&o, &r.h, s) != 0) {
            rc = BENCH_EXIT_ERROR;
            break;
        }
        if (bench_interrupted) {
            bench_err("%s: interrupted", o.cmd);
            rc = BENCH_EXIT_INTERRUPTED;
            break;
        }
        for (unsigned t = 0; t < o.n_tr; t++) {
            for (int ow = 0; ow < 2; ow++) {
                r.integrity += lt_cells[t][s].k[ow].integrity;
                r.failures += lt_cells[t][s].k[ow].failures;
            }
        }
        lt_print_size(out, &o, s);
    }
    bench_target tg[LT_MAX_TARGETS + BENCH_API_N];
    unsigned ntg = rc ? 0 : lt_targets(&o, tg);
    if (o.api && !rc) /* single calls, one process: their cost against the target */
        ntg += lt_api(out, &o, tg + ntg, &r.integrity, &r.failures);
    return bench_run_end(&r, rc, tg, ntg, o.strict);
}

/* `pingpong`: the preset in front of the user's options (getopt: the last
 * value of an option wins), then latency's own code. */
static int lt_pingpong_main(int argc, char **argv)
{
    static char *preset[] = {"pingpong",     "--sizes", PINGPONG_SIZES, "--transports",
                             PINGPONG_TRS, "--no-oneway", "--api"};
    enum { NP = sizeof(preset) / sizeof(preset[0]) };
    char **v = calloc((size_t)argc + NP + 1, sizeof(*v));
    if (!v)
        return BENCH_EXIT_ERROR;
    memcpy(v, preset, sizeof(preset));
    for (int i = 1; i < argc; i++)
        v[NP + i - 1] = argv[i];
    int rc = lt_main(argc - 1 + NP, v);
    free(v);
    return rc;
}

#define LT_ABOUT                                                                                   \
    "Round-trip (and one-way) latency between two processes pinned to two CPUs,\n"                \
    "for every transport and payload size: min/p50/p90/p99/p99.9/max after\n"                     \
    "warm-up, CDF points, the ratio to the raw baseline and to mdcom.\n"
#define LT_MORE                                                                                    \
    "`mdcom-bench pingpong` is latency with the preset\n  " PINGPONG_PRESET_TEXT "\n"              \
    "(later options override it): the same cells, the same code, the same figures.\n"

BENCH_CMD(pingpong, "pingpong",
          "preset of latency: 64 B .. 1 MiB round trips of mdcom and the baselines, api, targets",
          lt_pingpong_main, .about = LT_ABOUT, .opts = lt_opts_tab, .more = LT_MORE, .tail = 1);

BENCH_CMD(latency, "latency",
          "round-trip and one-way latency, 1 B .. 16 MiB, every transport, CDF",
          lt_main, .about = LT_ABOUT, .opts = lt_opts_tab, .more = LT_MORE, .tail = 1);
