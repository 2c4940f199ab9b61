/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * latency.c - `mdcom-bench latency` (and its preset `pingpong`): round-trip
 * and one-way latency of every transport, 1 B .. 16 MiB, percentiles, CDF
 * points, ratios to the baselines and to mdcom, targets.
 * Method: docs/benchmarks.md, `latency`.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "transport.h"

#define LT_MAX_SIZES 32
#define LT_MAX_TR 24
#define LT_MAX_SIZE (16u * 1024u * 1024u)
#define LT_MAX_TARGETS 48

/* CDF points: these percentiles of the samples (the report's 64 B CDF) */
static const double lt_cdf_p[] = {0.1, 1,  5,  10, 20, 30,   40,   50,    60,    70,
                                  80,  90, 95, 98, 99, 99.5, 99.9, 99.95, 99.99, 100};
#define LT_NCDF (sizeof(lt_cdf_p) / sizeof(lt_cdf_p[0]))

typedef struct lt_cell {
    int run, na; /* na: size outside what the transport takes */
    uint64_t samples;
    bench_rt_result k[2];     /* [0] round trips, [1] one way */
    uint64_t cdf[2][LT_NCDF]; /* ns at lt_cdf_p (all 0 without samples) */
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

/* The preset that makes `pingpong`: parsed before the user's options. */
#define PINGPONG_SIZES "64,256,1K,4K,16K,64K,256K,1M"
#define PINGPONG_TRS                                                                               \
    "raw-spin,raw-futex,mdcom-copy-poll,mdcom-zc-poll,mdcom-copy-block,mdcom-zc-block"
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
static uint64_t lt_default_samples(uint32_t size, int quick)
{
    static const uint32_t upto[] = {4096, 16384, 65536, 262144, 1048576, UINT32_MAX};
    static const uint64_t n[] = {100000, 50000, 20000, 5000, 2000, 500};
    if (quick)
        return size <= 4096u ? 2000u : 200u;
    unsigned i = 0;
    while (size > upto[i])
        i++;
    return n[i];
}

/* o: the defaults, the preset of `pingpong`, then the options (the last
 * value of an option wins) */
static int lt_parse(int argc, char **argv, lt_opts *o)
{
    static char *preset[] = {"pingpong",   "--sizes",     PINGPONG_SIZES, "--transports",
                             PINGPONG_TRS, "--no-oneway", "--api"};
    int rc = 0;
    if (strcmp(o->cmd, "pingpong") == 0)
        rc = bench_opts_parse(o->cmd, lt_opts_tab, o, sizeof(preset) / sizeof(*preset), preset);
    if (rc == 0)
        rc = bench_opts_parse(o->cmd, lt_opts_tab, o, argc, argv);
    if (rc != 0)
        return rc;
    const char *sizes = o->sizes_s ? o->sizes_s : o->quick ? "1,64,1K,4K,64K,1M" : NULL;
    o->n_sizes = sizes ? bench_parse_size_list(sizes, o->sizes, LT_MAX_SIZES, 1, LT_MAX_SIZE, NULL)
                       : bench_log2_sizes(o->sizes, LT_MAX_SIZES, 1, LT_MAX_SIZE);
    if (o->n_sizes < 0 ||
        bench_parse_transports(o->trs_s, o->tr, &o->n_tr, LT_MAX_TR, 0, o->cmd) != 0)
        return -1;
    if (o->cell_time < 0)
        o->cell_time = o->iters ? 0.0 : o->quick ? 0.05 : 0.5;
    if (!o->rounds)
        o->rounds = o->quick ? 1 : 3;
    if (!o->api_calls)
        o->api_calls = o->quick ? BENCH_API_CALLS_QUICK : BENCH_API_CALLS_DEFAULT;
    return 0;
}

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

/* p50 of cell (t, s) over that of transport ref (NULL: none) at size s, or NaN */
static double lt_vs(const lt_opts *o, unsigned t, int s, int ow, const char *ref)
{
    int r = bench_tr_index(o->tr, o->n_tr, ref);
    return lt_ratio(lt_cells[t][s].k[ow].st.p50, lt_p50(r, s, ow));
}

/* Statistics and CDF points of the samples (sorted here) */
static void lt_summarise(lt_cell *c, int ow, uint64_t *v, size_t n)
{
    bench_stats_compute(v, n, &c->k[ow].st);
    for (size_t i = 0; i < LT_NCDF && n; i++)
        c->cdf[ow][i] = bench_percentile(v, n, lt_cdf_p[i]);
}

/* Untimed round trips before a cell's samples: samples / 10 within 32..5000. */
static uint64_t lt_warmup(uint64_t samples)
{
    uint64_t w = samples / 10;
    return w < 32 ? 32 : w > 5000 ? 5000 : w;
}

/* ---- measuring ------------------------------------------------------------------------ */

/* What lt_chunk_try runs: one chunk of a cell into buf[*n...], r its
 * result; n0 and r0 what they were before it (a retry starts from there). */
typedef struct lt_chunk {
    const bench_transport *t;
    bench_rt_opts ro;
    uint64_t *buf;
    size_t *n, n0;
    bench_rt_result *r, r0;
    int failed;
} lt_chunk;

static void lt_chunk_try(void *arg, double timeout_s, bench_try *t)
{
    lt_chunk *a = arg;
    *a->n = a->n0;
    *a->r = a->r0;
    a->ro.timeout_ns = (int64_t)(timeout_s * 1e9);
    a->failed = bench_rt_chunk(a->t, &a->ro, a->buf, a->n, a->r) != 0;
    *t = (bench_try){.timeouts = a->r->timeouts - a->r0.timeouts,
                     .load = a->r->load,
                     .worse = a->r->na || a->r->integrity != a->r0.integrity ||
                              a->r->failures != a->r0.failures};
    snprintf(t->why, sizeof(t->why), "%.100s", a->r->why);
}

/* bench_rt_chunk, retried once after a timeout (bench_retry); label names
 * the cell. 0 when the chunk kept was clean, else -1. */
static int lt_chunk_run(const bench_transport *t, const bench_rt_opts *ro, uint64_t *buf, size_t *n,
                        bench_rt_result *r, const char *label)
{
    lt_chunk a = {.t = t, .ro = *ro, .buf = buf, .n = n, .n0 = *n, .r = r, .r0 = *r};
    char why[sizeof(r->why)];
    bench_retry(lt_chunk_try, &a, (double)ro->timeout_ns / 1e9, label, why, sizeof(why));
    snprintf(r->why, sizeof(r->why), "%s", why);
    return a.failed ? -1 : 0;
}

/* One way (docs/benchmarks.md): the round-trip loop with side B stamping
 * each arrival into shared memory and answering with a 4-byte ack. */
static void lt_oneway(const lt_opts *o, bench_rt_opts ro, unsigned t, lt_cell *c)
{
    size_t t1len = (ro.warmup + ro.samples) * sizeof(uint64_t);
    size_t n = 0;
    uint64_t *t0 = malloc(ro.samples * sizeof(uint64_t)), *t1 = bench_shared_alloc(t1len);
    bench_rt_result *r = &c->k[1];
    ro.t1 = t1;
    if (!t0 || !t1) {
        bench_err("%s: out of memory for one-way samples", o->cmd);
        r->failures++;
    } else {
        char label[96];
        snprintf(label, sizeof(label), "latency %s %u B one way", o->tr[t]->name, ro.size);
        r->ok = lt_chunk_run(o->tr[t], &ro, t0, &n, r, label) == 0;
        c->na |= r->na;
        for (size_t k = 0; k < n; k++) { /* sample k has seq warmup_done + k + 1 */
            uint64_t a = t1[r->warmup_done + k];
            t0[k] = a > t0[k] ? a - t0[k] : 0;
        }
        lt_summarise(c, 1, t0, n);
    }
    free(t0);
    bench_shared_free(t1, t1len);
}

/* The cells of size s: round trips in o->rounds chunks, round-robin over the
 * transports, then one way. */
static int lt_measure_size(const lt_opts *o, const bench_host *h, int s)
{
    uint64_t *buf[LT_MAX_TR] = {0};
    size_t nbuf[LT_MAX_TR] = {0};
    int failed[LT_MAX_TR] = {0};
    int rc = 0;
    uint64_t cell_budget = (uint64_t)(o->cell_time * 1e9);
    uint32_t size = o->sizes[s];
    char b1[24];
    const char *sz = bench_fmt_size(b1, sizeof(b1), size);
    bench_rt_opts ro = {.size = size,
                        .max_size = size,
                        .timeout_ns = (int64_t)(o->timeout_s * 1e9),
                        .cpu_ping = h->cpus.cpu[0],
                        .cpu_pong = h->cpus.cpu[1]};
    for (unsigned t = 0; t < o->n_tr; t++) {
        lt_cell *c = &lt_cells[t][s];
        *c = (lt_cell){.run = 1};
        c->samples = o->iters ? o->iters : lt_default_samples(size, o->quick);
        c->na = size < bench_tr_min_size(o->tr[t]) || size > bench_tr_max_size(o->tr[t]);
        if (!c->na && !(buf[t] = malloc(c->samples * sizeof(uint64_t)))) {
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
            bench_progress("latency %s: round trip %s, round %u/%u", sz, o->tr[t]->name, r + 1,
                           o->rounds);
            uint64_t warm = lt_warmup(c->samples) / o->rounds;
            ro.samples = (c->samples - nbuf[t] + (o->rounds - r) - 1) / (o->rounds - r);
            ro.warmup = warm < 32 ? 32 : warm;
            ro.budget_ns = cell_budget / o->rounds;
            char label[96];
            snprintf(label, sizeof(label), "latency %s %s round trip", o->tr[t]->name, sz);
            failed[t] = lt_chunk_run(o->tr[t], &ro, buf[t], &nbuf[t], &c->k[0], label) != 0;
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
        lt_summarise(c, 0, buf[t], nbuf[t]);
        r->ok = !failed[t] && r->integrity == 0 && r->failures == 0;
    }
    for (unsigned t = 0; t < o->n_tr && !o->no_oneway && !bench_interrupted; t++) {
        lt_cell *c = &lt_cells[t][s];
        if (c->na || !bench_tr_carries(o->tr[t]))
            continue;
        bench_progress("latency %s: one way %s", sz, o->tr[t]->name);
        ro.samples = c->samples;
        ro.warmup = lt_warmup(c->samples);
        ro.budget_ns = cell_budget;
        lt_oneway(o, ro, t, c);
    }
out:
    bench_progress_end();
    for (unsigned t = 0; t < o->n_tr; t++)
        free(buf[t]);
    return rc;
}

/* ---- output ---------------------------------------------------------------------------- */

static const char *lt_status(const lt_cell *c, int ow)
{
    const bench_rt_result *k = &c->k[ow];
    return bench_cell_status(c->na, k->integrity, k->failures, k->timeouts);
}

/* The row of transport t in the table of size s, round trip or one way (ow) */
static void lt_row(FILE *out, const lt_opts *o, unsigned t, int s, int ow)
{
    const bench_transport *tr = o->tr[t];
    const lt_cell *c = &lt_cells[t][s];
    const bench_stats *st = &c->k[ow].st;
    uint32_t size = o->sizes[s], max = bench_tr_max_size(tr), min = bench_tr_min_size(tr);
    if (c->na && size > max && max != UINT32_MAX)
        fprintf(out, "%-17s %8s  n/a (this transport takes at most %u B here)\n", tr->name, "-",
                max);
    else if (c->na && size < min)
        fprintf(out, "%-17s %8s  n/a (payload below %u B)\n", tr->name, "-", min);
    else if (c->na)
        fprintf(out, "%-17s %8s  n/a (size or limit not supported here, see above)\n", tr->name,
                "-");
    else if ((!c->k[ow].ok || st->n == 0) && !strcmp(lt_status(c, ow), "TIMEOUT"))
        fprintf(out, "%-17s %8zu  TIMEOUT: %s\n", tr->name, st->n, c->k[ow].why);
    else if (!c->k[ow].ok || st->n == 0)
        fprintf(out, "%-17s %8zu  %s: %u integrity, %u other (messages above)\n", tr->name, st->n,
                lt_status(c, ow), c->k[ow].integrity, c->k[ow].failures);
    if (c->na || !c->k[ow].ok || st->n == 0)
        return;
    const uint64_t v[6] = {st->min, st->p50, st->p90, st->p99, st->p999, st->max};
    char b[6][24], rb[40], rm[40];
    for (int i = 0; i < 6; i++)
        bench_fmt_ns(b[i], sizeof(b[i]), (double)v[i]);
    bench_fmt_ratios(rb, sizeof(rb), rm, sizeof(rm), tr, lt_vs(o, t, s, ow, tr->baseline),
                     lt_vs(o, t, s, ow, bench_mdcom_ref(tr)));
    fprintf(out, "%-17s %8zu %9s %9s %9s %9s %9s %9s  %-22s %s\n", tr->name, st->n, b[0], b[1],
            b[2], b[3], b[4], b[5], rb, rm);
}

static void lt_print_size(FILE *out, const lt_opts *o, int s)
{
    char b[24];
    for (int ow = 0; ow < (o->no_oneway ? 1 : 2); ow++) {
        fprintf(out, "\n== %s %s ==\n", bench_fmt_size(b, sizeof(b), o->sizes[s]),
                ow ? "one way" : "round trip");
        fprintf(out, "%-17s %8s %9s %9s %9s %9s %9s %9s  %-22s %s\n", "transport", "n", "min",
                "p50", "p90", "p99", "p99.9", "max", "p50 vs baseline", "p50 vs mdcom-copy");
        for (unsigned t = 0; t < o->n_tr; t++)
            if (!ow || bench_tr_carries(o->tr[t]))
                lt_row(out, o, t, s, ow);
    }
    fflush(out);
}

/* ---- targets ------------------------------------------------------------------------ */

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
static void lt_ratio_target(const lt_opts *o, bench_target *t, const char *a, uint32_t sa,
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
        snprintf(t->detail, sizeof(t->detail), "%s / %s%s",
                 bench_fmt_ns(b1, sizeof(b1), (double)va), bench_fmt_ns(b2, sizeof(b2), (double)vb),
                 at_least ? " (target >= 10x)" : "");
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
            lt_ratio_target(o, &tg[n++], o->tr[p]->name, 64, bench_mdcom_ref(o->tr[p]), 64, 10.0,
                            1);
    return n;
}

/* ---- JSON and CSV ------------------------------------------------------------------- */

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

/* A cell's round trips or one-way times (ow): a JSON object, CSV rows when clean */
static void lt_out_row(bench_row *w, const lt_opts *o, unsigned t, int s, int ow)
{
    const bench_transport *tr = o->tr[t];
    const lt_cell *c = &lt_cells[t][s];
    const bench_rt_result *k = &c->k[ow];
    const bench_stats *st = &k->st;
    if (!w->j && (c->na || !k->ok))
        return;
    w->k = (bench_csv_key){.scenario = "latency",
                           .transport = tr->name,
                           .mode = ow ? "oneway" : "rtt",
                           .size = o->sizes[s],
                           .n = st->n};
    bench_json_obj_begin(w->j, NULL);
    bench_json_str(w->j, "transport", tr->name);
    bench_json_str(w->j, "kind", ow ? "oneway" : "rtt");
    bench_json_str(w->j, "wait", tr->wait_class == BENCH_WAIT_POLL ? "poll" : "block");
    bench_json_u64(w->j, "size", o->sizes[s]);
    bench_json_bool(w->j, "na", c->na);
    if (!c->na) {
        bench_json_bool(w->j, "ok", k->ok);
        bench_json_str(w->j, "status", lt_status(c, ow));
        bench_json_u64(w->j, "timeouts", k->timeouts);
        bench_json_dbl(w->j, "loadavg_1m", k->load);
        bench_json_str(w->j, "why", k->why);
        bench_json_u64(w->j, "integrity_errors", k->integrity);
        bench_json_u64(w->j, "failures", k->failures);
        bench_row_stats(w, "stats", st);
        bench_json_str(w->j, "baseline", tr->baseline);
        bench_json_str(w->j, "mdcom_ref", bench_mdcom_ref(tr));
        bench_row_num(w, "p50_ratio_to_baseline", tr->baseline ? "p50_ratio_to_baseline" : NULL,
                      lt_vs(o, t, s, ow, tr->baseline), "x");
        bench_row_num(w, "p50_ratio_to_mdcom", "p50_ratio_to_mdcom",
                      lt_vs(o, t, s, ow, bench_mdcom_ref(tr)), "x");
        /* the CDF points as "hist" (the report's distribution plots read it) */
        bench_json_obj_begin(w->j, "hist");
        bench_json_arr_begin(w->j, "cdf_pct");
        for (size_t i = 0; i < LT_NCDF; i++)
            bench_json_dbl(w->j, NULL, lt_cdf_p[i]);
        bench_json_arr_end(w->j);
        bench_json_arr_begin(w->j, "cdf_ns");
        for (size_t i = 0; i < LT_NCDF; i++)
            bench_json_u64(w->j, NULL, c->cdf[ow][i]);
        bench_json_arr_end(w->j);
        bench_json_obj_end(w->j);
    }
    bench_json_obj_end(w->j);
}

/* Every cell that ran, in report order */
static void lt_rows(bench_row *w, void *arg)
{
    const lt_opts *o = arg;
    for (int s = 0; s < o->n_sizes; s++)
        for (unsigned t = 0; t < o->n_tr; t++)
            for (int ow = 0; ow < 2; ow++)
                if (lt_cells[t][s].run && (!ow || (!o->no_oneway && bench_tr_carries(o->tr[t]))))
                    lt_out_row(w, o, t, s, ow);
}

static int lt_main(int argc, char **argv)
{
    lt_opts o = {.cmd = argv[0], .cell_time = -1, .timeout_s = 5};
    int prc = bench_parsed(lt_parse(argc, argv, &o),
                           strcmp(o.cmd, "pingpong") ? &bench_cmd_latency : &bench_cmd_pingpong);
    if (prc >= 0)
        return prc;
    memset(lt_cells, 0, sizeof(lt_cells));
    bench_run r = BENCH_RUN(o.cmd, o, .json_config = lt_json_config, .rows = lt_rows, .arg = &o);
    if (bench_run_begin(&r))
        return BENCH_EXIT_USAGE;
    FILE *out = r.out;
    fprintf(out,
            "cells: %d sizes x %u transports; up to %.2f s of samples per cell in %u round%s;\n"
            "       round trip = SIZE bytes there and back; one way = send to the peer's\n"
            "       receive returning (message-interface transports)\n",
            o.n_sizes, o.n_tr, o.cell_time, o.rounds, o.rounds == 1 ? "" : "s");
    fflush(out);
    unsigned n_ow = 0;
    for (unsigned t = 0; t < o.n_tr; t++)
        n_ow += bench_tr_carries(o.tr[t]);
    bench_progress_plan((uint64_t)o.n_sizes * (o.n_tr * o.rounds + (o.no_oneway ? 0 : n_ow)));
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
        for (unsigned t = 0; t < o.n_tr; t++)
            for (int ow = 0; ow < 2; ow++) {
                const lt_cell *c = &lt_cells[t][s];
                r.integrity += c->k[ow].integrity;
                r.failures += c->k[ow].failures;
                r.cells += c->run && !c->na && (!ow || (!o.no_oneway && bench_tr_carries(o.tr[t])));
                r.timeouts += c->run && !c->na && !strcmp(lt_status(c, ow), "TIMEOUT");
            }
        lt_print_size(out, &o, s);
    }
    bench_target tg[LT_MAX_TARGETS + BENCH_API_N];
    unsigned ntg = rc ? 0 : lt_targets(&o, tg);
    if (o.api && !rc) { /* single calls, one process (api.c, the zero-copy path) */
        bench_api_result api[BENCH_API_NX];
        unsigned integ = 0;
        if (bench_api_run(o.api_calls, api, &integ) != 0) {
            r.failures += !integ;
            fprintf(out, "\n== api: ERROR (messages above)\n");
        } else {
            fprintf(out, "\n== api: mean cost of one call (single process) ==");
            ntg += bench_api_report(out, api, BENCH_API_N, tg + ntg);
        }
        r.integrity += integ;
    }
    return bench_run_end(&r, rc, tg, ntg, o.strict);
}

#define LT_ABOUT                                                                                   \
    "Round-trip (and one-way) latency between two processes pinned to two CPUs,\n"                 \
    "for every transport and payload size: min/p50/p90/p99/p99.9/max after\n"                      \
    "warm-up, CDF points, the ratio to the raw baseline and to mdcom.\n"
#define LT_MORE                                                                                    \
    "`mdcom-bench pingpong` is latency with the preset\n  " PINGPONG_PRESET_TEXT "\n"              \
    "(later options override it): the same cells, the same code, the same figures.\n"

BENCH_CMD(pingpong, "pingpong",
          "preset of latency: 64 B .. 1 MiB round trips of mdcom and the baselines, api, targets",
          lt_main, .about = LT_ABOUT, .opts = lt_opts_tab, .more = LT_MORE, .tail = 1);

BENCH_CMD(latency, "latency", "round-trip and one-way latency, 1 B .. 16 MiB, every transport, CDF",
          lt_main, .about = LT_ABOUT, .opts = lt_opts_tab, .more = LT_MORE, .tail = 1);
