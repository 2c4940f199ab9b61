/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * api.c - the cost of single API calls, one process, batches of 1024 calls of
 * one API timed as a whole, every return value and the FIFO order checked;
 * instructions per call from callgrind. `latency --api` and the `api`
 * subcommand. Method: docs/benchmarks.md, `api`.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "mdcom/mdcom.h"
#include "transport.h"

/* in the order of the BENCH_API_ enum; NaN: not in the paper */
static const bench_api_paper api_calls[BENCH_API_NX] = {
    {"alloc", "mdcom_fifoch_alloc", 1800, 1778, 61},
    {"get", "mdcom_fifoch_get", 600, 618, 48},
    {"enqueue", "mdcom_fifoch_enqueue", 1800, 1806, 68},
    {"dequeue", "mdcom_fifoch_dequeue", 1900, 1823, 77},
    {"free", "mdcom_fifoch_free", 700, 669, 28},
    {"notify", "mdcom_fifoch_notify", 1000, 928, 29},
    {"wait-poll", "mdcom_fifoch_wait", NAN, NAN, NAN},
    {"send-64B", "mdcom_fifoch_send", NAN, NAN, NAN},
    {"recv-64B", "mdcom_fifoch_recv", NAN, NAN, NAN},
    {"smem-trylock+unlock", "mdcom_smemch_trylock+mdcom_smemch_unlock", NAN, NAN, NAN}};

const bench_api_paper *bench_api_paper_of(const char *call)
{
    for (int a = 0; a < BENCH_API_NX; a++)
        if (strcmp(api_calls[a].call, call) == 0 && !isnan(api_calls[a].mode))
            return &api_calls[a];
    return NULL;
}

/* Set by the callgrind child run that counts the zero-copy calls: send/recv
 * call alloc, enqueue, ... themselves and would add to their counts. */
static int api_skip_copy;

static int api_fail(const char *call, uint32_t i, int rc)
{
    char what[96];
    snprintf(what, sizeof(what), "api: %s (call %u of a batch)", call, i);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

/* n calls (i = 0..n-1) of API a, an expression that is 0 on success, timed
 * as a whole into d[a]; a failure ends the run (rc, goto out). */
#define API_BATCH(a, n, call)                                                                      \
    do {                                                                                           \
        uint64_t t0_ = bench_now_ns();                                                             \
        for (uint32_t i = 0; i < (n); i++)                                                         \
            if ((rc = (call)) != 0) {                                                              \
                rc = rc == -EBADMSG ? rc : api_fail(api_calls[a].fn, i, rc);                       \
                goto out;                                                                          \
            }                                                                                      \
        d[a] = bench_now_ns() - t0_;                                                               \
    } while (0)

/* mdcom_fifoch_wait's result: 0 when it says EV_RX. */
static int api_rx(int r) { return r > 0 && (r & MDCOM_EV_RX) ? 0 : r < 0 ? r : -EPROTO; }

static int api_send(mdcom_fifoch_t *f, unsigned char *msg, uint32_t i)
{
    memcpy(msg, &i, 4);
    return mdcom_fifoch_send(f, msg, 64, MDCOM_POLL);
}

/* Receive message i: 0, -EBADMSG (another message: an integrity error,
 * printed) or the error. */
static int api_recv(mdcom_fifoch_t *f, uint32_t i, unsigned *integrity)
{
    unsigned char m[64];
    int rc = mdcom_fifoch_recv(f, m, sizeof(m), MDCOM_POLL);
    if (rc == 64 && bench_head(m) != i) {
        bench_err("api: recv %u returned message %u", i, bench_head(m));
        (*integrity)++;
        return -EBADMSG;
    }
    return rc == 64 ? 0 : rc < 0 ? rc : -EPROTO;
}

static int api_lock(mdcom_smemch_t *sm)
{
    int rc = mdcom_smemch_trylock(sm);
    return rc ? rc : mdcom_smemch_unlock(sm);
}

int bench_api_run(uint64_t min_calls, bench_api_result res[BENCH_API_NX], unsigned *integrity)
{
    enum { B = BENCH_API_BATCH };
    static uint32_t ids[B], ids2[B], lens[B];
    static void *ptrs[B];
    char region[32], errbuf[200] = "";
    bench_unique_name(region, sizeof(region), "mdb-api");
    mdcom_domain_cfg dom = {.name = "a", .id = 0, .role = MDCOM_ROLE_MASTER};
    mdcom_channel_cfg chs[2] = {{.name = "api",
                                 .type = MDCOM_CHAN_FIFO,
                                 .block_size = 64,
                                 .block_count = B,
                                 .senders = 1u,
                                 .receivers = 1u},
                                {.name = "apis", .type = MDCOM_CHAN_SMEM, .size = 64, .users = 1u}};
    mdcom_config cfg = {.region_name = region,
                        .mode = 0600,
                        .group = -1,
                        .domains = &dom,
                        .n_domains = 1,
                        .channels = chs,
                        .n_channels = 2};
    mdcom_init_opts o = {.errbuf = errbuf, .errbuf_len = sizeof(errbuf)};

    uint64_t nb = min_calls ? (min_calls + B - 1) / B : 1;
    uint64_t *bt = calloc(nb * BENCH_API_NX, sizeof(*bt)); /* batch times, [api][batch] */
    if (!bt) {
        bench_err("api: out of memory");
        return -ENOMEM;
    }

    mdcom_t *m = NULL;
    mdcom_fifoch_t *f = NULL;
    mdcom_smemch_t *sm = NULL;
    unsigned char msg[64];
    memset(msg, 0xa5, sizeof(msg));
    int rc = mdcom_init(&m, &cfg, 0, &o);
    if (rc != 0) {
        bench_err_mdcom("api: mdcom_init", rc);
        if (errbuf[0])
            bench_err("  %s", errbuf);
        goto out;
    }
    rc = mdcom_fifoch_open(m, "api", &f);
    if (rc == 0)
        rc = mdcom_smemch_open(m, "apis", &sm);
    if (rc != 0) {
        bench_err_mdcom(f ? "api: mdcom_smemch_open" : "api: mdcom_fifoch_open", rc);
        goto out;
    }

    /* batch -1 is an untimed warm-up; the batches run in the order of a
     * message's life: alloc, get, enqueue, wait-poll (blocks queued: the
     * check a polling receiver makes), dequeue, free, then the others */
    for (int64_t b = -1; b < (int64_t)nb; b++) {
        uint64_t d[BENCH_API_NX];
        uint32_t sz = 0, nc = api_skip_copy ? 0 : B;
        API_BATCH(BENCH_API_ALLOC, B, mdcom_fifoch_alloc(f, &ids[i]));
        API_BATCH(BENCH_API_GET, B, mdcom_fifoch_get(f, ids[i], &ptrs[i], &sz));
        API_BATCH(BENCH_API_ENQUEUE, B, mdcom_fifoch_enqueue(f, ids[i], 8));
        API_BATCH(BENCH_API_WAIT_POLL, B, api_rx(mdcom_fifoch_wait(f, MDCOM_EV_RX, MDCOM_POLL)));
        API_BATCH(BENCH_API_DEQUEUE, B, mdcom_fifoch_dequeue(f, &ids2[i], &lens[i]));
        API_BATCH(BENCH_API_FREE, B, mdcom_fifoch_free(f, ids2[i]));
        API_BATCH(BENCH_API_NOTIFY, B, mdcom_fifoch_notify(f));
        API_BATCH(BENCH_API_SEND64, nc, api_send(f, msg, i));
        API_BATCH(BENCH_API_RECV64, nc, api_recv(f, i, integrity));
        API_BATCH(BENCH_API_SMEM_PAIR, B, api_lock(sm));

        /* integrity: FIFO order, lengths, distinct blocks with addresses */
        for (uint32_t i = 0; i < B; i++)
            if (ids2[i] != ids[i] || lens[i] != 8 || !ptrs[i] || sz < 64) {
                bench_err("api: dequeue %u returned id %u len %u, enqueued id %u len 8", i, ids2[i],
                          lens[i], ids[i]);
                (*integrity)++;
                rc = -EBADMSG;
                goto out;
            }
        for (int a = 0; a < BENCH_API_NX && b >= 0; a++)
            bt[(uint64_t)a * nb + (uint64_t)b] = d[a];
    }
    for (int a = 0; a < BENCH_API_NX; a++) {
        uint64_t *v = &bt[(uint64_t)a * nb];
        bench_stats st;
        bench_stats_compute(v, nb, &st);
        res[a] = (bench_api_result){.calls = nb * B,
                                    .mean_ns = st.mean / B,
                                    .best_ns = (double)st.min / B,
                                    .p50_ns = (double)st.p50 / B,
                                    .stddev_ns = st.stddev / B,
                                    .instr = NAN};
        /* mode: the most frequent batch average, in 0.1 ns bins (v is sorted) */
        uint64_t best_bin = 0, best_cnt = 0;
        for (uint64_t i = 0; i < nb;) {
            uint64_t bin = v[i] * 10u / B, j = i;
            while (j < nb && v[j] * 10u / B == bin)
                j++;
            if (j - i > best_cnt) {
                best_cnt = j - i;
                best_bin = bin;
            }
            i = j;
        }
        res[a].mode_ns = (double)best_bin / 10.0 + 0.05;
    }

out:
    if (m) {
        int trc = mdcom_term(m);
        if (trc != 0) {
            bench_err_mdcom("api: mdcom_term", trc);
            if (rc == 0)
                rc = trc;
        }
    }
    free(bt);
    return rc;
}

/* ---- instruction counts (callgrind) ------------------------------------------- */

/* Inclusive instruction count of function fn in callgrind_annotate output:
 * the leading number ("1,234 (...)  file:fn [obj]") of fn's line. */
static double api_ir_of(const char *annot, const char *fn)
{
    size_t fl = strlen(fn);
    for (const char *l = annot; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *p = strstr(l, fn), *nl = strchr(l, '\n');
        if (!p || (nl && p > nl) || (p > l && p[-1] != ':' && p[-1] != ' ') ||
            (p[fl] && !strchr(" '[\n", p[fl])))
            continue;
        double v = 0;
        int digits = 0;
        for (const char *q = l;
             q < p && (*q == ',' || (*q == ' ' && !digits) || isdigit((unsigned char)*q)); q++)
            if (isdigit((unsigned char)*q)) {
                v = v * 10 + (*q - '0');
                digits++;
            }
        return digits ? v : NAN;
    }
    return NAN;
}

static int api_sh(void *cmd)
{
    execl("/bin/sh", "sh", "-c", (const char *)cmd, (char *)NULL);
    _exit(127);
}

/* Fill res[].instr with instructions per call from callgrind_annotate
 * --inclusive output of two runs of this program under callgrind, `calls`
 * calls each: first without the copy API (send/recv call alloc, enqueue, ...
 * and would add to their counts), then with it. 0, or -1 (valgrind missing,
 * or a run failed: res unchanged). */
static int api_callgrind(bench_api_result *res, uint64_t calls)
{
    char exe[512], out[64], cmd[1400], *text[2] = {NULL, NULL};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    snprintf(out, sizeof(out), "/tmp/mdcom-bench-cg-%ld.out", (long)getpid());
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof(cmd),
                 "command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null "
                 "2>&1 && valgrind --tool=callgrind --callgrind-out-file=%s '%s' api --calls %llu "
                 "--no-instr --quiet%s >/dev/null 2>&1 && callgrind_annotate --inclusive=yes "
                 "--threshold=100 %s 2>/dev/null",
                 out, exe, (unsigned long long)calls, k ? "" : " --skip-copy", out);
        size_t len = 0;
        int st = bench_child(api_sh, cmd, NULL, &text[k], &len, -1, "callgrind");
        unlink(out);
        if (st != 0 || len == 0) {
            free(text[0]);
            free(text[1]);
            return -1;
        }
    }
    /* calls made under callgrind: the warm-up batch + the timed ones */
    uint64_t made = ((calls + BENCH_API_BATCH - 1) / BENCH_API_BATCH + 1) * BENCH_API_BATCH;
    for (int a = 0; a < BENCH_API_NX; a++) {
        const char *t = text[a == BENCH_API_SEND64 || a == BENCH_API_RECV64];
        double v = a != BENCH_API_SMEM_PAIR
                       ? api_ir_of(t, api_calls[a].fn)
                       : api_ir_of(t, "mdcom_smemch_trylock") + api_ir_of(t, "mdcom_smemch_unlock");
        res[a].instr = v / (double)made;
    }
    free(text[0]);
    free(text[1]);
    return 0;
}

unsigned bench_api_report(FILE *out, const bench_api_result *r, int n, bench_target *tg)
{
    fprintf(out, "\n%llu calls of each API in batches of %u; ns per call\n",
            (unsigned long long)r[0].calls, BENCH_API_BATCH);
    fprintf(out, "%-20s %8s %8s %8s %9s %9s %8s  %s\n", "api", "mode", "mean", "stddev",
            "p50-batch", "best", "instr", "paper M4 mode/mean/sd");
    for (int a = 0; a < n; a++) {
        const bench_api_paper *c = &api_calls[a];
        char instr[16] = "-", paper[32] = "-";
        if (!isnan(r[a].instr))
            snprintf(instr, sizeof(instr), "%.0f", r[a].instr);
        if (!isnan(c->mode))
            snprintf(paper, sizeof(paper), "%.0f/%.0f/%.0f", c->mode, c->mean, c->sd);
        fprintf(out, "%-20s %8.1f %8.1f %8.2f %9.1f %9.1f %8s  %s\n", c->call, r[a].mode_ns,
                r[a].mean_ns, r[a].stddev_ns, r[a].p50_ns, r[a].best_ns, instr, paper);
    }
    for (int a = 0; a < BENCH_API_N; a++) {
        bench_target *t = bench_target_new(&tg[a], BENCH_API_TARGET_NS, "ns",
                                           "api %s mean ns per call", api_calls[a].call);
        bench_target_eval(t, r[a].mean_ns, 0);
        snprintf(t->detail, sizeof(t->detail), "%.1f ns, %llu calls", r[a].mean_ns,
                 (unsigned long long)r[a].calls);
    }
    return BENCH_API_N;
}

/* ---- `mdcom-bench api` -------------------------------------------------- */

typedef struct api_opts {
    uint64_t calls;
    int quick, strict, no_instr, quiet, skip_copy;
    const char *json, *csv;
} api_opts;

static const bench_opt api_opts_tab[] = {
    BOPT(api_opts, calls, "calls", BO_U64, 1, 1e9, "N",
         "at least N calls of each API (default 1M, --quick 64k)"),
    BOPT(api_opts, no_instr, "no-instr", BO_FLAG, 1, 0, NULL, "skip the callgrind run"),
    BOPT(api_opts, quiet, "quiet", BO_FLAG, 1, 0, NULL, "no text (the callgrind child run)"),
    BOPT(api_opts, skip_copy, "skip-copy", BO_FLAG, 1, 0, NULL, "skip the copy API rows"),
    BENCH_OUT_OPTS(api_opts),
    BOPT(api_opts, strict, "strict", BO_FLAG, 1, 0, NULL, "exit 3 when a target is missed"),
    {0},
};

static void api_rows(bench_row *w, void *arg)
{
    const bench_api_result *r = arg;
    for (int a = 0; a < BENCH_API_NX; a++) {
        const bench_api_paper *c = &api_calls[a];
        w->k = (bench_csv_key){.scenario = "api", .transport = c->call, .n = r[a].calls};
        bench_json_obj_begin(w->j, NULL);
        bench_json_str(w->j, "api", c->call);
        bench_json_str(w->j, "function", c->fn);
        bench_json_u64(w->j, "calls", r[a].calls);
        bench_row_num(w, "mean_ns", "mean", r[a].mean_ns, "ns");
        bench_row_num(w, "mode_ns", "mode", r[a].mode_ns, "ns");
        bench_row_num(w, "stddev_ns", "stddev", r[a].stddev_ns, "ns");
        bench_json_dbl(w->j, "p50_batch_ns", r[a].p50_ns);
        bench_json_dbl(w->j, "best_batch_ns", r[a].best_ns);
        bench_row_num(w, "instructions", "instructions", r[a].instr, "instr");
        bench_json_dbl(w->j, "paper_mode_ns", c->mode);
        bench_json_dbl(w->j, "paper_mean_ns", c->mean);
        bench_json_dbl(w->j, "paper_stddev_ns", c->sd);
        if (a < BENCH_API_N) {
            bench_json_dbl(w->j, "target_ns", BENCH_API_TARGET_NS);
            bench_json_bool(w->j, "met", r[a].mean_ns <= BENCH_API_TARGET_NS);
        }
        bench_json_obj_end(w->j);
    }
}

static int api_main(int argc, char **argv)
{
    api_opts o = {0};
    int prc = bench_parsed(bench_opts_parse("api", api_opts_tab, &o, argc, argv), &bench_cmd_api);
    if (prc >= 0)
        return prc;
    api_skip_copy = o.skip_copy;
    if (!o.calls)
        o.calls = o.quick ? BENCH_API_CALLS_QUICK : BENCH_API_CALLS_DEFAULT;
    static bench_api_result r[BENCH_API_NX];
    bench_run rn = BENCH_RUN("api", o, .rows = api_rows, .rows_key = "api", .arg = r);
    if (bench_run_begin(&rn))
        return BENCH_EXIT_USAGE;
    if (o.quiet && !(rn.out = fopen("/dev/null", "w")))
        return BENCH_EXIT_ERROR;
    bench_target tg[BENCH_API_N];
    unsigned ntg = 0;
    int rc = bench_api_run(o.calls, r, &rn.integrity);
    if (rc != 0) { /* printed; no table */
        rn.failures += !rn.integrity;
        rn.rows = NULL;
    } else {
        int have_instr = 0;
        if (!o.no_instr) {
            bench_progress("api: callgrind run for instruction counts");
            have_instr = api_callgrind(r, 10u * BENCH_API_BATCH) == 0;
            bench_progress_end();
        }
        ntg = bench_api_report(rn.out, r, BENCH_API_NX, tg);
        if (!o.no_instr && !have_instr)
            fprintf(rn.out, "(instr: valgrind/callgrind not available; install valgrind)\n");
        else if (have_instr)
            fprintf(rn.out, "(instr: callgrind, inclusive instructions per call of the "
                            "library function)\n");
    }
    rc = bench_run_end(&rn, rc ? BENCH_EXIT_ERROR : 0, tg, ntg, o.strict);
    if (o.quiet)
        fclose(rn.out);
    return rc;
}

BENCH_CMD(api, "api", "cost of each API call: mode/mean/stddev ns, instructions (callgrind)",
          api_main, .opts = api_opts_tab,
          .about = "Cost of one call of each API in a single process, timed in batches of 1024\n"
                   "calls: alloc, get, enqueue, dequeue, free (zero-copy path), notify (nobody\n"
                   "waiting), wait-poll (a block is queued), send/recv of 64 B (copy API) and an\n"
                   "SMEM trylock+unlock pair. Mean = total time / calls; mode and standard\n"
                   "deviation are those of the batch averages (one call is shorter than the\n"
                   "clock's resolution). Instructions per call from a callgrind run of this\n"
                   "program (valgrind) when available: deterministic, unlike times.\n"
                   "Target: <= 50 ns per call (alloc .. free).\n");
