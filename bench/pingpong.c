/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pingpong.c - `mdcom-bench pingpong`: round-trip latency between two pinned
 * processes for every (transport, payload size) cell, the cost of single API
 * calls, and the performance targets computed from this run's numbers.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "api.h"
#include "mdcom/mdcom.h"
#include "transport.h"

#define PP_MAX_SIZES 32
#define PP_MAX_TR 16
#define PP_MIN_SIZE 4u
#define PP_MAX_SIZE (64u * 1024u * 1024u)

static const char pp_default_sizes[] = "64,256,1K,4K,16K,64K,256K,1M";
/* The transports this tuning run compares (the others: --transports, or the
 * `latency` subcommand). */
static const char pp_default_transports[] =
    "raw-spin,raw-futex,mdcom-copy-poll,mdcom-zc-poll,mdcom-copy-block,mdcom-zc-block";

typedef struct pp_opts {
    uint32_t sizes[PP_MAX_SIZES];
    int n_sizes;
    uint32_t max_size;
    uint64_t iters;     /* 0: per-size default                       */
    uint64_t warmup;    /* UINT64_MAX: default                       */
    double cell_time;   /* seconds; < 0: default                     */
    double timeout_s;
    unsigned rounds;    /* 0: default                                */
    int quick, no_api, strict;
    uint64_t api_calls; /* 0: default                                */
    const char *json;
    const bench_transport *tr[PP_MAX_TR];
    unsigned n_tr;
} pp_opts;

typedef struct pp_cell {
    int run;
    uint64_t samples; /* wanted */
    uint64_t warmup;  /* wanted */
    bench_rt_result r;
} pp_cell;

typedef struct pp_target {
    const char *num_t; /* transport of the numerator              */
    uint32_t num_size;
    const char *den_t; /* transport of the denominator            */
    uint32_t den_size;
    double limit;      /* MET when ratio <= limit                 */
    const char *what;
} pp_target;

static const pp_target pp_targets[] = {
    {"mdcom-copy-poll", 64, "raw-spin", 64, 1.5, "poll round trip vs bare spin"},
    {"mdcom-zc-poll", 64, "raw-spin", 64, 1.5, "poll round trip vs bare spin"},
    {"mdcom-copy-block", 64, "raw-futex", 64, 1.15, "blocking round trip vs bare futex"},
    {"mdcom-zc-block", 64, "raw-futex", 64, 1.15, "blocking round trip vs bare futex"},
    {"mdcom-zc-poll", 1u << 20, "mdcom-zc-poll", 64, 1.5, "zero-copy flat in size"},
    {"mdcom-zc-block", 1u << 20, "mdcom-zc-block", 64, 1.5, "zero-copy flat in size"},
};
#define PP_N_TARGETS (sizeof(pp_targets) / sizeof(pp_targets[0]))

enum { T_MET, T_MISSED, T_SKIPPED };
typedef struct pp_target_res {
    int state;
    double ratio, num, den;
} pp_target_res;

static pp_cell pp_cells[PP_MAX_TR][PP_MAX_SIZES];

/* ------------------------------------------------------------------ */

static void pp_usage(FILE *out)
{
    fprintf(out,
            "usage: mdcom-bench pingpong [--sizes LIST] [--iters N] [--quick] [--json FILE]\n"
            "                            [--transports LIST] [--warmup N] [--cell-time S]\n"
            "                            [--rounds R] [--timeout S] [--no-api] [--api-calls N]\n"
            "                            [--strict]\n"
            "\n"
            "Round-trip latency between two processes pinned to two CPUs, for every\n"
            "transport and payload size, then the mean cost of single API calls and\n"
            "the targets (MET/MISSED) computed from this run.\n"
            "\n"
            "  --sizes LIST       payload sizes, e.g. 64,4K,1M (default %s;\n"
            "                     %u B .. %u MiB)\n"
            "  --iters N          samples per cell (default: 100k up to 4 KiB, then 50k,\n"
            "                     20k, 5k, 2k for <= 16K, 64K, 256K, larger); an explicit\n"
            "                     N is taken as is unless --cell-time is given too\n"
            "  --warmup N         untimed round trips first (default: iters/10, 32..5000)\n"
            "  --cell-time S      stop sampling a cell after S seconds (default 1,\n"
            "                     --quick 0.1; 0 = no limit)\n"
            "  --rounds R         split every cell into R chunks, run round-robin over the\n"
            "                     transports of a size, so that slow drifts of the machine\n"
            "                     hit all of them alike (default 5, --quick 2)\n"
            "  --quick            CI smoke run: 2000/200 samples per cell, a few seconds\n"
            "  --transports LIST  comma separated (default: %s)\n"
            "  --timeout S        a wait longer than this is an error (default 5)\n"
            "  --no-api           skip the api section\n"
            "  --api-calls N      calls per API in the api section (default %u, --quick %u)\n"
            "  --json FILE        also write all results as JSON ('-' = stdout; the\n"
            "                     text report then goes to stderr)\n"
            "  --strict           exit %d when a target is missed (default: report only)\n"
            "\n"
            "Transports:\n",
            pp_default_sizes, PP_MIN_SIZE, PP_MAX_SIZE >> 20, pp_default_transports, BENCH_API_CALLS_DEFAULT,
            BENCH_API_CALLS_QUICK, BENCH_EXIT_MISSED);
    for (unsigned i = 0; i < bench_n_transports; i++)
        fprintf(out, "  %-18s %s\n", bench_transports[i]->name, bench_transports[i]->desc);
    fprintf(out,
            "\n"
            "Exit status: 0 ok, %d integrity or API error, %d usage, %d target missed\n"
            "(--strict). See docs/benchmarks.md.\n",
            BENCH_EXIT_ERROR, BENCH_EXIT_USAGE, BENCH_EXIT_MISSED);
}

static uint64_t pp_default_samples(uint32_t size, int quick)
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
    return 2000u;
}

static int pp_parse(int argc, char **argv, pp_opts *o)
{
    static const struct option lo[] = {{"sizes", required_argument, 0, 's'},
                                       {"iters", required_argument, 0, 'n'},
                                       {"warmup", required_argument, 0, 'w'},
                                       {"cell-time", required_argument, 0, 'c'},
                                       {"quick", no_argument, 0, 'q'},
                                       {"transports", required_argument, 0, 't'},
                                       {"timeout", required_argument, 0, 'T'},
                                       {"rounds", required_argument, 0, 'r'},
                                       {"no-api", no_argument, 0, 'A'},
                                       {"api-calls", required_argument, 0, 'a'},
                                       {"json", required_argument, 0, 'j'},
                                       {"strict", no_argument, 0, 'S'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    memset(o, 0, sizeof(*o));
    o->warmup = UINT64_MAX;
    o->cell_time = -1.0;
    o->timeout_s = 5.0;
    const char *sizes = pp_default_sizes, *trs = pp_default_transports;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 's': sizes = optarg; break;
        case 'n':
            if (bench_parse_count(optarg, &o->iters) != 0 || o->iters == 0 || o->iters > 100000000u) {
                bench_err("pingpong: bad --iters '%s' (1..100M)", optarg);
                return -1;
            }
            break;
        case 'w':
            if (bench_parse_count(optarg, &o->warmup) != 0 || o->warmup > 100000000u) {
                bench_err("pingpong: bad --warmup '%s'", optarg);
                return -1;
            }
            break;
        case 'c':
            if (bench_parse_double(optarg, &o->cell_time) != 0 || o->cell_time < 0) {
                bench_err("pingpong: bad --cell-time '%s'", optarg);
                return -1;
            }
            break;
        case 'T':
            if (bench_parse_double(optarg, &o->timeout_s) != 0 || o->timeout_s <= 0 ||
                o->timeout_s > 3600) {
                bench_err("pingpong: bad --timeout '%s'", optarg);
                return -1;
            }
            break;
        case 'r': {
            uint64_t v;
            if (bench_parse_count(optarg, &v) != 0 || v == 0 || v > 100) {
                bench_err("pingpong: bad --rounds '%s' (1..100)", optarg);
                return -1;
            }
            o->rounds = (unsigned)v;
            break;
        }
        case 'q': o->quick = 1; break;
        case 't': trs = optarg; break;
        case 'A': o->no_api = 1; break;
        case 'a':
            if (bench_parse_count(optarg, &o->api_calls) != 0 || o->api_calls == 0) {
                bench_err("pingpong: bad --api-calls '%s'", optarg);
                return -1;
            }
            break;
        case 'j': o->json = optarg; break;
        case 'S': o->strict = 1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind < argc) {
        bench_err("pingpong: unexpected argument '%s'", argv[optind]);
        return -1;
    }
    o->n_sizes = bench_parse_size_list(sizes, o->sizes, PP_MAX_SIZES, PP_MIN_SIZE, PP_MAX_SIZE);
    if (o->n_sizes < 0)
        return -1;
    for (int i = 0; i < o->n_sizes; i++)
        if (o->sizes[i] > o->max_size)
            o->max_size = o->sizes[i];
    if (trs) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "%s", trs);
        char *save = NULL;
        for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            const bench_transport *t = bench_transport_find(tok);
            if (!t) {
                bench_err("pingpong: unknown transport '%s' (see --help)", tok);
                return -1;
            }
            if (o->n_tr < PP_MAX_TR)
                o->tr[o->n_tr++] = t;
        }
        if (o->n_tr == 0) {
            bench_err("pingpong: empty --transports");
            return -1;
        }
    } else {
        for (unsigned i = 0; i < bench_n_transports && i < PP_MAX_TR; i++)
            o->tr[o->n_tr++] = bench_transports[i];
    }
    if (o->cell_time < 0)
        o->cell_time = o->iters ? 0.0 : o->quick ? 0.1 : 1.0;
    if (!o->rounds)
        o->rounds = o->quick ? 2 : 5;
    return 0;
}

/* ------------------------------------------------------------------ */

static int pp_tr_index(const pp_opts *o, const char *name)
{
    for (unsigned i = 0; i < o->n_tr; i++)
        if (strcmp(o->tr[i]->name, name) == 0)
            return (int)i;
    return -1;
}

static int pp_size_index(const pp_opts *o, uint32_t size)
{
    for (int i = 0; i < o->n_sizes; i++)
        if (o->sizes[i] == size)
            return i;
    return -1;
}

/* Cell of (transport name, size) with a valid p50, or NULL. */
static const pp_cell *pp_cell_ok(const pp_opts *o, const char *name, uint32_t size)
{
    int t = pp_tr_index(o, name), s = pp_size_index(o, size);
    if (t < 0 || s < 0)
        return NULL;
    const pp_cell *c = &pp_cells[t][s];
    if (!c->run || !c->r.ok || c->r.st.n == 0)
        return NULL;
    return c;
}

/* p50 ratio of cell (t, s) to its baseline at the same size; NaN if none. */
static double pp_ratio(const pp_opts *o, unsigned t, int s)
{
    const bench_transport *tr = o->tr[t];
    const pp_cell *c = &pp_cells[t][s];
    if (!tr->baseline || !c->run || !c->r.ok || c->r.st.n == 0)
        return NAN;
    const pp_cell *b = pp_cell_ok(o, tr->baseline, o->sizes[s]);
    if (!b || b->r.st.p50 == 0)
        return NAN;
    return (double)c->r.st.p50 / (double)b->r.st.p50;
}

static void pp_eval_target(const pp_opts *o, const pp_target *t, pp_target_res *r)
{
    memset(r, 0, sizeof(*r));
    r->ratio = r->num = r->den = NAN;
    const pp_cell *n = pp_cell_ok(o, t->num_t, t->num_size);
    const pp_cell *d = pp_cell_ok(o, t->den_t, t->den_size);
    if (!n || !d || d->r.st.p50 == 0) {
        r->state = T_SKIPPED;
        return;
    }
    r->num = (double)n->r.st.p50;
    r->den = (double)d->r.st.p50;
    r->ratio = r->num / r->den;
    r->state = r->ratio <= t->limit ? T_MET : T_MISSED;
}

static const char *pp_state_name(int st)
{
    return st == T_MET ? "MET" : st == T_MISSED ? "MISSED" : "SKIPPED";
}

/* ------------------------------------------------------------------ */

static void pp_cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, len, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

static void pp_print_table(FILE *out, const pp_opts *o, int s)
{
    char b[8][24];
    fprintf(out, "\n== %s ==\n", bench_fmt_size(b[0], sizeof(b[0]), o->sizes[s]));
    fprintf(out, "%-17s %8s %9s %9s %9s %9s %9s %9s  %s\n", "transport", "n", "min", "p50", "p90",
            "p99", "p99.9", "max", "p50 vs baseline");
    for (unsigned t = 0; t < o->n_tr; t++) {
        const pp_cell *c = &pp_cells[t][s];
        if (!c->run)
            continue;
        const bench_stats *st = &c->r.st;
        if (!c->r.ok || st->n == 0) {
            fprintf(out, "%-17s %8zu  ERROR: %u integrity, %u other (messages above)\n",
                    o->tr[t]->name, st->n, c->r.integrity, c->r.failures);
            continue;
        }
        char ratio[48];
        double r = pp_ratio(o, t, s);
        if (!o->tr[t]->baseline)
            snprintf(ratio, sizeof(ratio), "(baseline)");
        else if (isnan(r))
            snprintf(ratio, sizeof(ratio), "- (%s not measured)", o->tr[t]->baseline);
        else
            snprintf(ratio, sizeof(ratio), "%.2fx %s", r, o->tr[t]->baseline);
        fprintf(out, "%-17s %8zu %9s %9s %9s %9s %9s %9s  %s\n", o->tr[t]->name, st->n,
                bench_fmt_ns(b[1], sizeof(b[1]), (double)st->min),
                bench_fmt_ns(b[2], sizeof(b[2]), (double)st->p50),
                bench_fmt_ns(b[3], sizeof(b[3]), (double)st->p90),
                bench_fmt_ns(b[4], sizeof(b[4]), (double)st->p99),
                bench_fmt_ns(b[5], sizeof(b[5]), (double)st->p999),
                bench_fmt_ns(b[6], sizeof(b[6]), (double)st->max), ratio);
    }
    fflush(out);
}

/* Measure every transport at size index s: each cell in o->rounds chunks,
 * round-robin over the transports, samples merged per cell. 0, or -1 when out
 * of memory. */
static int pp_measure_size(const pp_opts *o, const bench_cpus *cpus, int s)
{
    uint64_t *buf[PP_MAX_TR] = {0};
    size_t nbuf[PP_MAX_TR] = {0};
    int failed[PP_MAX_TR] = {0};
    uint64_t cell_budget = (uint64_t)(o->cell_time * 1e9);
    int rc = 0;
    for (unsigned t = 0; t < o->n_tr; t++) {
        pp_cell *c = &pp_cells[t][s];
        memset(c, 0, sizeof(*c));
        c->run = 1;
        c->samples = o->iters ? o->iters : pp_default_samples(o->sizes[s], o->quick);
        c->warmup = o->warmup;
        if (c->warmup == UINT64_MAX) {
            c->warmup = c->samples / 10;
            if (c->warmup < 32)
                c->warmup = 32;
            if (c->warmup > 5000)
                c->warmup = 5000;
        }
        buf[t] = malloc(c->samples * sizeof(uint64_t));
        if (!buf[t]) {
            bench_err("pingpong: out of memory for %llu samples", (unsigned long long)c->samples);
            rc = -1;
            goto out;
        }
    }
    for (unsigned r = 0; r < o->rounds; r++) {
        for (unsigned t = 0; t < o->n_tr; t++) {
            pp_cell *c = &pp_cells[t][s];
            if (failed[t] || nbuf[t] >= c->samples)
                continue;
            uint64_t left = c->samples - nbuf[t];
            uint64_t chunk = (left + (o->rounds - r) - 1) / (o->rounds - r);
            uint64_t warm = c->warmup / o->rounds;
            bench_rt_opts ro = {.size = o->sizes[s],
                                .max_size = o->max_size,
                                .samples = chunk,
                                .warmup = warm < 32 ? 32 : warm,
                                .budget_ns = cell_budget / o->rounds,
                                .timeout_ns = (int64_t)(o->timeout_s * 1e9),
                                .cpu_ping = cpus->cpu[0],
                                .cpu_pong = cpus->cpu[1]};
            if (bench_rt_chunk(o->tr[t], &ro, buf[t], &nbuf[t], &c->r) != 0)
                failed[t] = 1;
            if (bench_interrupted)
                goto out;
        }
    }
    for (unsigned t = 0; t < o->n_tr; t++) {
        pp_cell *c = &pp_cells[t][s];
        bench_stats_compute(buf[t], nbuf[t], &c->r.st);
        c->r.ok = !failed[t] && c->r.integrity == 0 && c->r.failures == 0;
    }
out:
    for (unsigned t = 0; t < o->n_tr; t++)
        free(buf[t]);
    return rc;
}

static void pp_write_json(FILE *f, const pp_opts *o, const bench_cpus *cpus, double timer_ns,
                          const char *cpu_model, const struct utsname *un, int api_done,
                          const bench_api_result *api, const pp_target_res *tres,
                          unsigned integrity, unsigned failures, double total_s)
{
    bench_json j;
    bench_json_init(&j, f);
    bench_json_obj_begin(&j, NULL);
    bench_json_str(&j, "benchmark", "pingpong");
    bench_json_u64(&j, "mdcom_version_major", MDCOM_VERSION_MAJOR);
    bench_json_u64(&j, "mdcom_version_minor", MDCOM_VERSION_MINOR);

    bench_json_obj_begin(&j, "host");
    bench_json_str(&j, "cpu_model", cpu_model);
    bench_json_str(&j, "kernel", un->release);
    bench_json_str(&j, "machine", un->machine);
    bench_json_i64(&j, "cpus_online", cpus->n_online);
    bench_json_i64(&j, "cpus_allowed", cpus->n_allowed);
    bench_json_bool(&j, "pinned", cpus->pinned);
    bench_json_i64(&j, "ping_cpu", cpus->cpu[0]);
    bench_json_i64(&j, "pong_cpu", cpus->cpu[1]);
    bench_json_dbl(&j, "timer_overhead_ns", timer_ns);
    bench_json_obj_end(&j);

    bench_json_obj_begin(&j, "config");
    bench_json_bool(&j, "quick", o->quick);
    bench_json_arr_begin(&j, "sizes");
    for (int s = 0; s < o->n_sizes; s++)
        bench_json_u64(&j, NULL, o->sizes[s]);
    bench_json_arr_end(&j);
    bench_json_u64(&j, "iters", o->iters);
    bench_json_dbl(&j, "cell_time_s", o->cell_time);
    bench_json_dbl(&j, "timeout_s", o->timeout_s);
    bench_json_u64(&j, "rounds", o->rounds);
    bench_json_u64(&j, "block_size", o->max_size);
    bench_json_u64(&j, "block_count", 8);
    bench_json_obj_end(&j);

    bench_json_arr_begin(&j, "results");
    for (int s = 0; s < o->n_sizes; s++)
        for (unsigned t = 0; t < o->n_tr; t++) {
            const pp_cell *c = &pp_cells[t][s];
            if (!c->run)
                continue;
            bench_json_obj_begin(&j, NULL);
            bench_json_str(&j, "transport", o->tr[t]->name);
            bench_json_str(&j, "wait", o->tr[t]->wait_class == BENCH_WAIT_POLL ? "poll" : "block");
            bench_json_u64(&j, "size", o->sizes[s]);
            bench_json_bool(&j, "ok", c->r.ok);
            bench_json_u64(&j, "integrity_errors", c->r.integrity);
            bench_json_u64(&j, "failures", c->r.failures);
            bench_json_u64(&j, "samples_wanted", c->samples);
            bench_json_u64(&j, "warmup", c->r.warmup_done);
            bench_json_bool(&j, "budget_hit", c->r.budget_hit);
            bench_json_dbl(&j, "seconds", c->r.seconds);
            bench_json_stats(&j, "rtt", &c->r.st);
            bench_json_str(&j, "baseline", o->tr[t]->baseline);
            bench_json_dbl(&j, "p50_ratio_to_baseline", pp_ratio(o, t, s));
            bench_json_obj_end(&j);
        }
    bench_json_arr_end(&j);

    if (api_done) {
        bench_json_arr_begin(&j, "api");
        for (int a = 0; a < BENCH_API_N; a++) {
            bench_json_obj_begin(&j, NULL);
            bench_json_str(&j, "api", api[a].api);
            bench_json_u64(&j, "calls", api[a].calls);
            bench_json_dbl(&j, "mean_ns", api[a].mean_ns);
            bench_json_dbl(&j, "p50_batch_ns", api[a].p50_ns);
            bench_json_dbl(&j, "best_batch_ns", api[a].best_ns);
            bench_json_obj_end(&j);
        }
        bench_json_arr_end(&j);
    } else {
        bench_json_null(&j, "api");
    }

    bench_json_arr_begin(&j, "targets");
    for (unsigned i = 0; i < PP_N_TARGETS; i++) {
        const pp_target *t = &pp_targets[i];
        char name[128];
        snprintf(name, sizeof(name), "%s p50 %u B / %s p50 %u B", t->num_t, t->num_size, t->den_t,
                 t->den_size);
        bench_json_obj_begin(&j, NULL);
        bench_json_str(&j, "name", name);
        bench_json_str(&j, "what", t->what);
        bench_json_dbl(&j, "value", tres[i].ratio);
        bench_json_dbl(&j, "numerator_ns", tres[i].num);
        bench_json_dbl(&j, "denominator_ns", tres[i].den);
        bench_json_dbl(&j, "limit", t->limit);
        bench_json_str(&j, "state", pp_state_name(tres[i].state));
        bench_json_obj_end(&j);
    }
    if (api_done)
        for (int a = 0; a < BENCH_API_N; a++) {
            char name[64];
            snprintf(name, sizeof(name), "api %s mean ns per call", api[a].api);
            bench_json_obj_begin(&j, NULL);
            bench_json_str(&j, "name", name);
            bench_json_str(&j, "what", "single call cost");
            bench_json_dbl(&j, "value", api[a].mean_ns);
            bench_json_dbl(&j, "limit", BENCH_API_TARGET_NS);
            bench_json_str(&j, "state", api[a].mean_ns <= BENCH_API_TARGET_NS ? "MET" : "MISSED");
            bench_json_obj_end(&j);
        }
    bench_json_arr_end(&j);

    bench_json_u64(&j, "integrity_errors", integrity);
    bench_json_u64(&j, "failures", failures);
    bench_json_dbl(&j, "seconds", total_s);
    bench_json_obj_end(&j);
}

static int pp_main(int argc, char **argv)
{
    pp_opts o;
    int prc = pp_parse(argc, argv, &o);
    if (prc == 1) {
        pp_usage(stdout);
        return BENCH_EXIT_OK;
    }
    if (prc != 0) {
        fprintf(stderr, "try 'mdcom-bench pingpong --help'\n");
        return BENCH_EXIT_USAGE;
    }
    int json_stdout = o.json && strcmp(o.json, "-") == 0;
    FILE *out = json_stdout ? stderr : stdout;
    FILE *jf = NULL;
    if (o.json && !json_stdout) {
        jf = fopen(o.json, "w"); /* fail early, before minutes of measuring */
        if (!jf) {
            bench_err("pingpong: cannot write %s: %s", o.json, strerror(errno));
            return BENCH_EXIT_USAGE;
        }
    }
    uint64_t run_t0 = bench_now_ns();
    memset(pp_cells, 0, sizeof(pp_cells));
    bench_catch_signals();

    bench_cpus cpus;
    bench_cpus_detect(&cpus);
    double timer_ns = bench_timer_overhead_ns();
    char cpu_model[128];
    pp_cpu_model(cpu_model, sizeof(cpu_model));
    struct utsname un;
    if (uname(&un) != 0)
        memset(&un, 0, sizeof(un));

    char b1[24], b2[24];
    fprintf(out, "mdcom-bench pingpong (libmdcom %d.%d, wire %u)%s\n", MDCOM_VERSION_MAJOR,
            MDCOM_VERSION_MINOR, MDCOM_WIRE_VERSION, o.quick ? " --quick" : "");
    fprintf(out, "host: %s, %s %s, %d cpus online, %d allowed\n", cpu_model, un.sysname, un.release,
            cpus.n_online, cpus.n_allowed);
    if (cpus.pinned)
        fprintf(out, "pinned: yes (ping process on cpu %d, pong process on cpu %d)\n", cpus.cpu[0],
                cpus.cpu[1]);
    else
        fprintf(out, "pinned: NO (fewer than 2 cpus allowed: both processes share the cpu, "
                     "round trips include scheduling)\n");
    fprintf(out, "timer: clock_gettime(CLOCK_MONOTONIC), %.0f ns per read (one read per sample "
                 "is included in every number)\n",
            timer_ns);
    fprintf(out, "cells: round trip = message of SIZE bytes there and back; ");
    if (o.iters)
        fprintf(out, "%llu samples", (unsigned long long)o.iters);
    else
        fprintf(out, "%llu samples (<= 4 KiB) .. %llu (> %s)",
                (unsigned long long)pp_default_samples(64, o.quick),
                (unsigned long long)pp_default_samples(PP_MAX_SIZE, o.quick),
                o.quick ? "4 KiB" : "256 KiB");
    if (o.cell_time > 0)
        fprintf(out, ", at most %.2f s each", o.cell_time);
    fprintf(out, ",\n       in %u round%s round-robin over the transports, after warm-up; mdcom "
                 "block_size %s, block_count 8\n",
            o.rounds, o.rounds == 1 ? "" : "s", bench_fmt_size(b2, sizeof(b2), o.max_size));
    fflush(out);

    if (cpus.pinned) {
        int rc = bench_pin_self(cpus.cpu[0]);
        if (rc != 0)
            bench_err("pingpong: cannot pin to cpu %d: %s", cpus.cpu[0], strerror(-rc));
    }

    unsigned integrity = 0, failures = 0;
    for (int s = 0; s < o.n_sizes; s++) {
        int mrc = pp_measure_size(&o, &cpus, s);
        if (mrc != 0 || bench_interrupted) {
            if (bench_interrupted)
                bench_err("pingpong: interrupted");
            if (jf)
                fclose(jf);
            return mrc != 0 ? BENCH_EXIT_ERROR : BENCH_EXIT_INTERRUPTED;
        }
        for (unsigned t = 0; t < o.n_tr; t++) {
            integrity += pp_cells[t][s].r.integrity;
            failures += pp_cells[t][s].r.failures;
        }
        pp_print_table(out, &o, s);
    }

    /* api section */
    bench_api_result api[BENCH_API_NX];
    int api_done = 0;
    if (!o.no_api) {
        uint64_t calls = o.api_calls ? o.api_calls
                                     : o.quick ? BENCH_API_CALLS_QUICK : BENCH_API_CALLS_DEFAULT;
        unsigned integ = 0;
        int rc = bench_api_run(calls, api, &integ);
        integrity += integ;
        fprintf(out, "\n== api: mean cost of one call (single process, batches of %u) ==\n",
                BENCH_API_BATCH);
        if (rc != 0) {
            if (!integ)
                failures++;
            fprintf(out, "ERROR (messages above)\n");
        } else {
            api_done = 1;
            fprintf(out, "%-9s %10s %10s %11s %11s\n", "api", "calls", "mean", "p50-batch",
                    "best-batch");
            for (int a = 0; a < BENCH_API_N; a++)
                fprintf(out, "%-9s %10llu %7.1f ns %8.1f ns %8.1f ns\n", api[a].api,
                        (unsigned long long)api[a].calls, api[a].mean_ns, api[a].p50_ns,
                        api[a].best_ns);
        }
    }

    /* targets */
    pp_target_res tres[PP_N_TARGETS];
    unsigned met = 0, missed = 0, skipped = 0;
    fprintf(out, "\n== targets (computed from this run) ==\n");
    for (unsigned i = 0; i < PP_N_TARGETS; i++) {
        const pp_target *t = &pp_targets[i];
        pp_eval_target(&o, t, &tres[i]);
        char lhs[96];
        snprintf(lhs, sizeof(lhs), "%s p50 %s / %s p50 %s", t->num_t,
                 bench_fmt_size(b1, sizeof(b1), t->num_size), t->den_t,
                 bench_fmt_size(b2, sizeof(b2), t->den_size));
        if (tres[i].state == T_SKIPPED) {
            fprintf(out, "%-7s  %-58s   not measured   (target <= %.2fx)\n", "SKIPPED", lhs,
                    t->limit);
            skipped++;
            continue;
        }
        char n1[24], n2[24];
        fprintf(out, "%-7s  %-58s = %5.2fx (%s / %s; target <= %.2fx)\n",
                pp_state_name(tres[i].state), lhs, tres[i].ratio,
                bench_fmt_ns(n1, sizeof(n1), tres[i].num), bench_fmt_ns(n2, sizeof(n2), tres[i].den),
                t->limit);
        if (tres[i].state == T_MET)
            met++;
        else
            missed++;
    }
    if (api_done) {
        for (int a = 0; a < BENCH_API_N; a++) {
            int ok = api[a].mean_ns <= BENCH_API_TARGET_NS;
            char lhs[64];
            snprintf(lhs, sizeof(lhs), "api %s: mean per call", api[a].api);
            fprintf(out, "%-7s  %-58s = %5.1f ns (target <= %.0f ns)\n", ok ? "MET" : "MISSED", lhs,
                    api[a].mean_ns, BENCH_API_TARGET_NS);
            if (ok)
                met++;
            else
                missed++;
        }
    } else {
        fprintf(out, "%-7s  %-58s   not measured   (target <= %.0f ns)\n", "SKIPPED",
                "api alloc/get/enqueue/dequeue/free: mean per call", BENCH_API_TARGET_NS);
        skipped++;
    }
    double total_s = (double)(bench_now_ns() - run_t0) / 1e9;
    fprintf(out, "\ntargets: %u met, %u missed, %u skipped\n", met, missed, skipped);
    fprintf(out, "errors: %u integrity, %u other; %.1f s total\n", integrity, failures, total_s);
    fflush(out);

    if (o.json) {
        FILE *f = json_stdout ? stdout : jf;
        pp_write_json(f, &o, &cpus, timer_ns, cpu_model, &un, api_done, api, tres, integrity,
                      failures, total_s);
        if (f == stdout) {
            fflush(f);
        } else if (fclose(f) != 0) {
            bench_err("pingpong: writing %s: %s", o.json, strerror(errno));
            failures++;
        }
    }
    if (integrity || failures)
        return BENCH_EXIT_ERROR;
    return o.strict && missed ? BENCH_EXIT_MISSED : BENCH_EXIT_OK;
}

const bench_cmd bench_cmd_pingpong = {
    .name = "pingpong",
    .summary = "round-trip latency between two pinned processes, api cost, targets",
    .main = pp_main,
    .usage = pp_usage,
};
