/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * blocks.c - `mdcom-bench blocks`: the block-transfer protocol of the
 * published STM32MP1 figures (/dev/ttyRPMSG0 and a netlink module): a
 * 16-byte header, then n sub-blocks; the receiver checks every byte and
 * answers the byte count. Time per transaction and KB/s, on every message
 * transport. Method: docs/benchmarks.md, `blocks`.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "payload.h"
#include "transport.h"

#define BK_MAX_B 16
#define BK_MAX_N 8
#define BK_MAX_TR 24
#define BK_PREAMBLE 0x4b42444du /* "MDBK" */
#define BK_STOP 0x504f5453u     /* "STOP" */

typedef struct bk_opts {
    uint32_t blocks[BK_MAX_B];
    int n_blocks;
    uint32_t counts[BK_MAX_N];
    int n_counts;
    uint64_t iters;
    double cell_time, timeout_s;
    int quick;
    const char *json, *csv, *blocks_s, *counts_s, *trs_s;
    const bench_transport *tr[BK_MAX_TR];
    unsigned n_tr;
} bk_opts;

typedef struct bk_cell {
    int run, na, ok;
    unsigned integrity, failures;
    unsigned timeouts, attempts; /* as in throughput: bench_retry */
    double load;
    char why[320];
    bench_stats st;
} bk_cell;

static bk_cell bk_cells[BK_MAX_TR][BK_MAX_B][BK_MAX_N];

/* Published numbers: STM32MP1, Linux user space -> Cortex-M4 through
 * OpenAMP's /dev/ttyRPMSG0 and through a netlink kernel module; ms per
 * transaction. The source names are the report's (bench/bench-report.py). */
#define BK_TTY "STM32MP1 /dev/ttyRPMSG (OpenAMP TTY), published"
#define BK_NETLINK "STM32MP1 netlink kernel module, published"
static const struct {
    const char *what;
    uint32_t block, n;
    double ms;
} bk_published[] = {
    {BK_TTY, 512, 1, 11.97},       {BK_TTY, 512, 2, 18.77},        {BK_TTY, 512, 4, 31.02},
    {BK_TTY, 512, 8, 56.25},       {BK_TTY, 1024, 1, 15.32},       {BK_TTY, 1024, 2, 24.82},
    {BK_TTY, 1024, 4, 43.83},      {BK_TTY, 2048, 1, 21.74},       {BK_TTY, 2048, 2, 37.63},
    {BK_TTY, 4096, 1, 37.64},      {BK_NETLINK, 512, 1, 21.38},    {BK_NETLINK, 1024, 1, 27.19},
    {BK_NETLINK, 2048, 1, 27.43},  {BK_NETLINK, 4096, 1, 31.33},   {BK_NETLINK, 8192, 1, 55.59},
    {BK_NETLINK, 16384, 1, 88.09}, {BK_NETLINK, 32768, 1, 162.54},
};
#define BK_N_PUB (sizeof(bk_published) / sizeof(bk_published[0]))

static const bench_opt bk_opts_tab[] = {
    BOPT(bk_opts, blocks_s, "blocks", BO_STR, 0, 0, "LIST",
         "sub-block sizes (default 512,1K,2K,4K,8K,16K,32K,64K,256K,1M;\n--quick 512,4K,32K)"),
    BOPT(bk_opts, counts_s, "counts", BO_STR, 0, 0, "LIST",
         "sub-blocks per transaction (default 1,2,4,8; --quick 1,8)"),
    BOPT(bk_opts, iters, "iters", BO_U64, 1, 1e7, "N",
         "transactions per cell (default 2000, --quick 50) after\n10 untimed ones"),
    BENCH_COMMON_OPTS(bk_opts),
    {0},
};

/* o: the defaults, then the options */
static int bk_parse(int argc, char **argv, bk_opts *o)
{
    int rc = bench_opts_parse("blocks", bk_opts_tab, o, argc, argv);
    if (rc != 0)
        return rc;
    const char *blocks = o->blocks_s, *counts = o->counts_s;
    if (!blocks)
        blocks = o->quick ? "512,4K,32K" : "512,1K,2K,4K,8K,16K,32K,64K,256K,1M";
    if (!counts)
        counts = o->quick ? "1,8" : "1,2,4,8";
    o->n_blocks = bench_parse_size_list(blocks, o->blocks, BK_MAX_B, 16, 16u << 20, NULL);
    if (o->n_blocks < 0)
        return -1;
    o->n_counts = bench_parse_size_list(counts, o->counts, BK_MAX_N, 1, 1024, "block count");
    if (o->n_counts < 0 ||
        bench_parse_transports(o->trs_s, o->tr, &o->n_tr, BK_MAX_TR, 1, "blocks") != 0)
        return -1;
    if (!o->iters)
        o->iters = o->quick ? 50 : 2000;
    if (o->cell_time < 0)
        o->cell_time = o->quick ? 0.05 : 0.3;
    return 0;
}

/* ---- one cell ------------------------------------------------------------------- */

typedef struct bk_shared {
    uint32_t block, n, length, crc; /* block >= 16 (--blocks): it holds a header */
    uint64_t warm, iters, budget_ns;
    unsigned char *data; /* the template; A stamps seq into its own copy */
    uint64_t *samples;   /* side A's (the parent's) times */
    size_t n_samples;
} bk_shared;

static int bk_side_a(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    bk_shared *sh = arg;
    unsigned char *rbuf = malloc(sh->block);
    int rc = rbuf ? 0 : -ENOMEM;
    uint64_t m0 = 0;
    for (uint64_t i = 0; rc == 0 && i < sh->warm + sh->iters; i++) {
        uint32_t seq = (uint32_t)i + 1;
        uint32_t hdr[4] = {BK_PREAMBLE, sh->length, sh->crc, seq};
        for (uint32_t k = 0; k < sh->n; k++)
            memcpy(sh->data + (size_t)k * sh->block, &seq, 4);
        if (i == sh->warm)
            m0 = bench_now_ns();
        uint64_t t0 = bench_now_ns();
        rc = ops->send(ctx, side, 0, hdr, sizeof(hdr));
        for (uint32_t k = 0; rc == 0 && k < sh->n; k++)
            rc = ops->send(ctx, side, 0, sh->data + (size_t)k * sh->block, sh->block);
        if (rc != 0)
            break;
        int got = bench_recv(ops, ctx, side, 0, rbuf, sh->block);
        uint64_t t1 = bench_now_ns();
        if (got < 0) {
            rc = got;
            break;
        }
        uint32_t ans[2] = {0, 0};
        if (got == 8)
            memcpy(ans, rbuf, 8);
        if (got != 8 || ans[0] != sh->length || ans[1] != seq) {
            bench_err("blocks: answer to transaction %u: %d bytes, count %u (expected %u), seq %u",
                      seq, got, ans[0], sh->length, ans[1]);
            rc = BENCH_RT_MISMATCH;
        } else if (i >= sh->warm) {
            sh->samples[sh->n_samples++] = t1 - t0;
            if (bench_interrupted || (sh->budget_ns && t1 - m0 > sh->budget_ns))
                break;
        }
    }
    if (rc == 0) {
        uint32_t hdr[4] = {BK_STOP, 0, 0, 0};
        rc = ops->send(ctx, side, 0, hdr, sizeof(hdr));
    }
    free(rbuf);
    return rc;
}

static int bk_side_b(const bench_msg_ops *ops, void *ctx, int side, void *arg)
{
    const bk_shared *sh = arg;
    /* sub-blocks land at their offset; the slack keeps the room >= the
     * largest message for the last one (message queues want that) */
    unsigned char *rx = malloc((size_t)sh->length + sh->block);
    int rc = rx ? 0 : -ENOMEM;
    for (uint32_t expect = 1; rc == 0; expect++) {
        uint32_t hdr[4] = {0, 0, 0, 0};
        int n = bench_recv(ops, ctx, side, 0, rx, sh->block);
        if (n == 16)
            memcpy(hdr, rx, 16);
        if (n < 0 || (n == 16 && hdr[0] == BK_STOP)) {
            rc = n < 0 ? n : 0;
            break;
        }
        if (n != 16 || hdr[0] != BK_PREAMBLE || hdr[1] != sh->length || hdr[2] != sh->crc ||
            hdr[3] != expect) {
            bench_err("blocks: transaction %u: bad header (%d bytes, preamble %08x, length %u, "
                      "seq %u)",
                      expect, n, hdr[0], hdr[1], hdr[3]);
            rc = BENCH_RT_MISMATCH;
            break;
        }
        uint32_t got = 0;
        while (got < sh->length &&
               (n = bench_recv(ops, ctx, side, 0, rx + got, sh->length + sh->block - got)) >= 0)
            got += (uint32_t)n;
        if (n < 0) {
            rc = n;
            break;
        }
        int bad = got != sh->length;
        for (uint32_t k = 0; !bad && k < sh->n; k++) {
            const unsigned char *b = rx + (size_t)k * sh->block;
            bad = bench_head(b) != expect ||
                  memcmp(b + 4, sh->data + (size_t)k * sh->block + 4, sh->block - 4) != 0;
        }
        if (bad) {
            bench_err("blocks: transaction %u: %u bytes arrived (expected %u) or data differ",
                      expect, got, sh->length);
            rc = BENCH_RT_MISMATCH;
            break;
        }
        uint32_t ans[2] = {got, expect};
        rc = ops->send(ctx, side, 0, ans, 8);
    }
    free(rx);
    return rc;
}

/* What bk_attempt runs: the cell (t, bi, ni). */
typedef struct bk_try {
    const bk_opts *o;
    const bench_host *h;
    unsigned t;
    int bi, ni;
} bk_try;

/* One attempt at a cell, every wait bounded by timeout_s. */
static void bk_attempt(void *arg, double timeout_s, bench_try *tr)
{
    const bk_try *a = arg;
    const bk_opts *o = a->o;
    unsigned t = a->t;
    int bi = a->bi, ni = a->ni;
    bk_cell *c = &bk_cells[t][bi][ni];
    uint32_t block = o->blocks[bi], n = o->counts[ni];
    uint64_t length = (uint64_t)block * n;
    *c = (bk_cell){.run = 1, .attempts = 1, .load = bench_loadavg()};
    *tr = (bench_try){.load = c->load};
    c->na = block > bench_tr_max_size(o->tr[t]) || length > 64u * 1024u * 1024u;
    if (c->na) {
        tr->worse = 1;
        return;
    }
    /* sh is read-only in the child: a copy is enough */
    bk_shared sh = {.block = block,
                    .n = n,
                    .length = (uint32_t)length,
                    .data = malloc(length),
                    .warm = 10,
                    .iters = o->iters,
                    .budget_ns = (uint64_t)(o->cell_time * 1e9),
                    .samples = malloc(o->iters * sizeof(uint64_t))};
    if (!sh.data || !sh.samples) {
        c->failures++;
    } else {
        bench_fill_random(sh.data, length, block * 131u + n);
        sh.crc = bench_crc32c(0, sh.data, length);
        bench_msg_job j = bench_job(o->tr[t], a->h->cpus.cpu[0], a->h->cpus.cpu[1], 1, block,
                                    n + 2 > 8 ? n + 2 : 8, timeout_s, bk_side_a, bk_side_b, &sh);
        bench_timeouts to = {0};
        j.to = &to;
        int src = bench_msg_session(&j, &c->integrity, &c->failures);
        c->timeouts = tr->timeouts = to.n;
        snprintf(tr->why, sizeof(tr->why), "%s", to.why);
        c->ok = src == 0;
        c->na = src == BENCH_SESSION_NA;
        bench_stats_compute(sh.samples, sh.n_samples, &c->st);
    }
    tr->worse = c->na || c->integrity || c->failures;
    free(sh.samples);
    free(sh.data);
}

/* Cell (t, bi, ni), retried once after a timeout (bench_retry). */
static void bk_cell_run(const bk_opts *o, const bench_host *h, unsigned t, int bi, int ni)
{
    bk_cell *c = &bk_cells[t][bi][ni];
    bk_try a = {.o = o, .h = h, .t = t, .bi = bi, .ni = ni};
    char label[96], why[sizeof(c->why)];
    snprintf(label, sizeof(label), "blocks %s %u B x %u", o->tr[t]->name, o->blocks[bi],
             o->counts[ni]);
    int attempts = bench_retry(bk_attempt, &a, o->timeout_s, label, why, sizeof(why));
    c->attempts = (unsigned)attempts;
    snprintf(c->why, sizeof(c->why), "%s", why);
}

static const char *bk_status(const bk_cell *c)
{
    return bench_cell_status(c->na, c->integrity, c->failures, c->timeouts);
}

/* ---- output -------------------------------------------------------------------------- */

static double bk_kbs(const bk_cell *c, uint32_t length)
{
    if (!c->run || c->na || !c->ok || !c->st.n || !c->st.p50)
        return NAN;
    return (double)length / 1024.0 / ((double)c->st.p50 / 1e9);
}

/* p50 of cell (t, bi, ni) over that of transport ref in the same cell, or NaN */
static double bk_ratio(const bk_opts *o, unsigned t, int bi, int ni, const char *ref)
{
    int r = bench_tr_index(o->tr, o->n_tr, ref);
    if (r < 0)
        return NAN;
    const bk_cell *a = &bk_cells[t][bi][ni], *b = &bk_cells[r][bi][ni];
    if (!a->ok || !b->ok || !a->st.n || !b->st.n || !b->st.p50)
        return NAN;
    return (double)a->st.p50 / (double)b->st.p50;
}

static void bk_print(FILE *out, const bk_opts *o, int bi, int ni)
{
    char b1[24], b2[24], b3[24];
    uint32_t block = o->blocks[bi], n = o->counts[ni];
    fprintf(out, "\n== block %s x %u = %s per transaction ==\n",
            bench_fmt_size(b1, sizeof(b1), block), n,
            bench_fmt_size(b2, sizeof(b2), (uint64_t)block * n));
    fprintf(out, "%-17s %7s %10s %10s %10s %12s  %-20s %s\n", "transport", "n", "min", "p50",
            "mean", "KB/s (p50)", "p50 vs baseline", "p50 vs mdcom-copy");
    for (unsigned t = 0; t < o->n_tr; t++) {
        const bk_cell *c = &bk_cells[t][bi][ni];
        const bench_transport *tr = o->tr[t];
        char rb[32], rm[16];
        bench_fmt_ratios(rb, sizeof(rb), rm, sizeof(rm), tr, bk_ratio(o, t, bi, ni, tr->baseline),
                         bk_ratio(o, t, bi, ni, bench_mdcom_ref(tr)));
        if (c->na)
            fprintf(out, "%-17s %7s  n/a (blocks above %u B)\n", tr->name, "-",
                    bench_tr_max_size(tr));
        else if ((!c->ok || !c->st.n) && !c->integrity && !c->failures && c->timeouts)
            fprintf(out, "%-17s %7zu  TIMEOUT: %s\n", tr->name, c->st.n, c->why);
        else if (!c->ok || !c->st.n)
            fprintf(out, "%-17s %7zu  %s: %u integrity, %u other\n", tr->name, c->st.n,
                    c->integrity ? "INTEGRITY" : "ERROR", c->integrity, c->failures);
        else
            fprintf(out, "%-17s %7zu %10s %10s %10s %12.0f  %-20s %s\n", tr->name, c->st.n,
                    bench_fmt_ns(b1, sizeof(b1), (double)c->st.min),
                    bench_fmt_ns(b2, sizeof(b2), (double)c->st.p50),
                    bench_fmt_ns(b3, sizeof(b3), c->st.mean), bk_kbs(c, block * n), rb, rm);
    }
    for (unsigned k = 0; k < BK_N_PUB; k++)
        if (bk_published[k].block == block && bk_published[k].n == n)
            fprintf(out, "%-17s %7s %10s %10.2f ms %9s %12.0f  (published, STM32MP1 A7 -> M4)\n",
                    "", "", "", bk_published[k].ms, "",
                    (double)block * n / 1024.0 / (bk_published[k].ms / 1e3));
    fflush(out);
}

static void bk_json_config(bench_json *j, void *arg)
{
    const bk_opts *o = arg;
    bench_json_u64(j, "iters", o->iters);
    bench_json_dbl(j, "cell_time_s", o->cell_time);
}

static void bk_row(bench_row *w, const bk_opts *o, unsigned t, int bi, int ni)
{
    const bk_cell *c = &bk_cells[t][bi][ni];
    const bench_transport *tr = o->tr[t];
    uint32_t len = o->blocks[bi] * o->counts[ni];
    if (!c->run || (!w->j && (c->na || !c->ok)))
        return;
    w->k = (bench_csv_key){.scenario = "blocks",
                           .transport = tr->name,
                           .size = o->blocks[bi],
                           .n = o->counts[ni],
                           .total = len};
    bench_json_obj_begin(w->j, NULL);
    bench_json_str(w->j, "transport", tr->name);
    bench_json_u64(w->j, "block", o->blocks[bi]);
    bench_json_u64(w->j, "count", o->counts[ni]);
    bench_json_u64(w->j, "length", len);
    bench_json_bool(w->j, "na", c->na);
    bench_json_bool(w->j, "ok", c->ok);
    bench_json_str(w->j, "status", bk_status(c));
    bench_json_u64(w->j, "timeouts", c->timeouts);
    bench_json_u64(w->j, "attempts", c->attempts);
    bench_json_dbl(w->j, "loadavg_1m", c->load);
    bench_json_str(w->j, "why", c->why);
    bench_json_u64(w->j, "integrity_errors", c->integrity);
    bench_json_u64(w->j, "failures", c->failures);
    bench_json_stats(w->j, "time", &c->st);
    bench_row_num(w, NULL, "min", (double)c->st.min, "ns");
    bench_row_num(w, NULL, "p50", (double)c->st.p50, "ns");
    bench_row_num(w, NULL, "mean", c->st.mean, "ns");
    bench_row_num(w, "kib_per_s", "kib_per_s", bk_kbs(c, len), "KiB/s");
    bench_json_dbl(w->j, "p50_ratio_to_baseline", bk_ratio(o, t, bi, ni, tr->baseline));
    bench_json_dbl(w->j, "p50_ratio_to_mdcom", bk_ratio(o, t, bi, ni, bench_mdcom_ref(tr)));
    bench_json_obj_end(w->j);
}

static void bk_rows(bench_row *w, void *arg)
{
    const bk_opts *o = arg;
    for (int bi = 0; bi < o->n_blocks; bi++)
        for (int ni = 0; ni < o->n_counts; ni++)
            for (unsigned t = 0; t < o->n_tr; t++)
                bk_row(w, o, t, bi, ni);
}

static void bk_json(bench_json *j, void *arg)
{
    (void)arg;
    bench_json_arr_begin(j, "published");
    for (unsigned k = 0; k < BK_N_PUB; k++) {
        bench_json_obj_begin(j, NULL);
        bench_json_str(j, "source", bk_published[k].what);
        bench_json_u64(j, "block", bk_published[k].block);
        bench_json_u64(j, "count", bk_published[k].n);
        bench_json_dbl(j, "ms", bk_published[k].ms);
        bench_json_obj_end(j);
    }
    bench_json_arr_end(j);
}

static int bk_main(int argc, char **argv)
{
    bk_opts o = {.cell_time = -1, .timeout_s = 5};
    int prc = bench_parsed(bk_parse(argc, argv, &o), &bench_cmd_blocks);
    if (prc >= 0)
        return prc;
    memset(bk_cells, 0, sizeof(bk_cells));
    bench_run r = BENCH_RUN("blocks", o, .json_config = bk_json_config, .rows = bk_rows,
                            .json_body = bk_json, .arg = &o);
    if (bench_run_begin(&r))
        return BENCH_EXIT_USAGE;
    fprintf(r.out,
            "cells: transaction = 16-byte header + n sub-blocks, answered with the byte count;\n"
            "       up to %llu transactions (after 10 untimed) or %.2f s per cell\n",
            (unsigned long long)o.iters, o.cell_time);
    char b1[24];
    bench_progress_plan((uint64_t)o.n_blocks * (unsigned)o.n_counts * o.n_tr);
    for (int bi = 0; bi < o.n_blocks && !bench_interrupted; bi++)
        for (int ni = 0; ni < o.n_counts && !bench_interrupted; ni++) {
            for (unsigned t = 0; t < o.n_tr && !bench_interrupted; t++) {
                bench_progress("blocks %s x %u: %s", bench_fmt_size(b1, sizeof(b1), o.blocks[bi]),
                               o.counts[ni], o.tr[t]->name);
                bk_cell_run(&o, &r.h, t, bi, ni);
                const bk_cell *c = &bk_cells[t][bi][ni];
                r.integrity += c->integrity;
                r.failures += c->failures;
                r.cells += !c->na;
                r.timeouts += !strcmp(bk_status(c), "TIMEOUT");
            }
            bench_progress_end();
            bk_print(r.out, &o, bi, ni);
        }
    fprintf(r.out, "\n");
    return bench_run_end(&r, 0, NULL, 0, 0);
}

BENCH_CMD(blocks, "blocks",
          "STM32MP1 tty / netlink figures: header + n sub-blocks, byte-count answer; ms and KB/s",
          bk_main, .opts = bk_opts_tab, .tail = 2,
          .about = "A transaction = header (preamble + length) + n sub-blocks of BLOCK bytes; the\n"
                   "receiver answers with the byte count once all arrived and were checked. Time\n"
                   "per transaction and KB/s (KB = 1024 B), per transport. --cell-time: default\n"
                   "0.3 s, --quick 0.05.\n");
