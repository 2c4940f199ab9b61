/*
 * api.c - mean cost of mdcom_fifoch_alloc/get/enqueue/dequeue/free, and the
 * `api` subcommand.
 *
 * One process, one region: domain "a" (master) is sender and receiver of FIFO
 * channel "api" (block_count 1024, queue_depth 1024, block_size 64). A batch
 * is 1024 calls of one API in a row, timed as a whole (two clock reads per
 * 1024 calls): alloc x1024, get x1024, enqueue x1024, dequeue x1024,
 * free x1024. Every call's return value is checked; after each batch the
 * dequeued ids and lengths are checked against the enqueued ones (FIFO order).
 * This is the uncontended, cache-hot cost of a call: the lower bound of what
 * a message pays for each step.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "mdcom/mdcom.h"

static const char *const api_names[BENCH_API_N] = {"alloc", "get", "enqueue", "dequeue", "free"};

static int api_fail(const char *call, uint32_t i, int rc)
{
    char what[96];
    snprintf(what, sizeof(what), "api: %s (call %u of a batch)", call, i);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

int bench_api_run(uint64_t min_calls, bench_api_result res[BENCH_API_N], unsigned *integrity)
{
    enum { B = BENCH_API_BATCH };
    char region[32], errbuf[200] = "";
    bench_unique_name(region, sizeof(region), "mdb-api");
    mdcom_domain_cfg dom = {.name = "a", .id = 0, .role = MDCOM_ROLE_MASTER};
    mdcom_channel_cfg ch = {.name = "api",
                            .type = MDCOM_CHAN_FIFO,
                            .block_size = 64,
                            .block_count = B,
                            .queue_depth = 0,
                            .senders = 1u,
                            .receivers = 1u};
    mdcom_config cfg = {.region_name = region,
                        .mode = 0600,
                        .group = -1,
                        .domains = &dom,
                        .n_domains = 1,
                        .channels = &ch,
                        .n_channels = 1};
    mdcom_init_opts o;
    memset(&o, 0, sizeof(o));
    o.errbuf = errbuf;
    o.errbuf_len = sizeof(errbuf);

    memset(res, 0, sizeof(bench_api_result) * BENCH_API_N);
    for (int a = 0; a < BENCH_API_N; a++)
        res[a].api = api_names[a];

    uint64_t nb = (min_calls + B - 1) / B;
    if (nb == 0)
        nb = 1;
    uint64_t *bt = calloc(nb * BENCH_API_N, sizeof(*bt)); /* batch times, [api][batch] */
    uint32_t *ids = malloc(B * sizeof(*ids));
    uint32_t *ids2 = malloc(B * sizeof(*ids2));
    uint32_t *lens = malloc(B * sizeof(*lens));
    void **ptrs = malloc(B * sizeof(*ptrs));
    if (!bt || !ids || !ids2 || !lens || !ptrs) {
        free(bt), free(ids), free(ids2), free(lens), free(ptrs);
        bench_err("api: out of memory");
        return -ENOMEM;
    }

    mdcom_t *m = NULL;
    mdcom_fifoch_t *f = NULL;
    int rc = mdcom_init(&m, &cfg, 0, &o);
    if (rc != 0) {
        bench_err_mdcom("api: mdcom_init", rc);
        if (errbuf[0])
            bench_err("  %s", errbuf);
        goto out_free;
    }
    rc = mdcom_fifoch_open(m, "api", &f);
    if (rc != 0) {
        bench_err_mdcom("api: mdcom_fifoch_open", rc);
        goto out_term;
    }

    /* batch -1 is an untimed warm-up */
    for (int64_t b = -1; b < (int64_t)nb; b++) {
        uint64_t t[BENCH_API_N + 1];
        uint32_t sz = 0;
        t[0] = bench_now_ns();
        for (uint32_t i = 0; i < B; i++)
            if ((rc = mdcom_fifoch_alloc(f, &ids[i])) != 0) {
                rc = api_fail("mdcom_fifoch_alloc", i, rc);
                goto out_term;
            }
        t[1] = bench_now_ns();
        for (uint32_t i = 0; i < B; i++)
            if ((rc = mdcom_fifoch_get(f, ids[i], &ptrs[i], &sz)) != 0) {
                rc = api_fail("mdcom_fifoch_get", i, rc);
                goto out_term;
            }
        t[2] = bench_now_ns();
        for (uint32_t i = 0; i < B; i++)
            if ((rc = mdcom_fifoch_enqueue(f, ids[i], 8)) != 0) {
                rc = api_fail("mdcom_fifoch_enqueue", i, rc);
                goto out_term;
            }
        t[3] = bench_now_ns();
        for (uint32_t i = 0; i < B; i++)
            if ((rc = mdcom_fifoch_dequeue(f, &ids2[i], &lens[i])) != 0) {
                rc = api_fail("mdcom_fifoch_dequeue", i, rc);
                goto out_term;
            }
        t[4] = bench_now_ns();
        for (uint32_t i = 0; i < B; i++)
            if ((rc = mdcom_fifoch_free(f, ids2[i])) != 0) {
                rc = api_fail("mdcom_fifoch_free", i, rc);
                goto out_term;
            }
        t[5] = bench_now_ns();

        /* integrity: FIFO order, lengths, distinct blocks with addresses */
        for (uint32_t i = 0; i < B; i++) {
            if (ids2[i] != ids[i] || lens[i] != 8 || !ptrs[i] || sz < 64) {
                bench_err("api: dequeue %u returned id %u len %u, enqueued id %u len 8", i, ids2[i],
                          lens[i], ids[i]);
                (*integrity)++;
                rc = -EBADMSG;
                goto out_term;
            }
        }
        if (b >= 0)
            for (int a = 0; a < BENCH_API_N; a++)
                bt[(uint64_t)a * nb + (uint64_t)b] = t[a + 1] - t[a];
    }
    rc = 0;
    for (int a = 0; a < BENCH_API_N; a++) {
        uint64_t *v = &bt[(uint64_t)a * nb];
        uint64_t sum = 0;
        for (uint64_t b = 0; b < nb; b++)
            sum += v[b];
        bench_stats st;
        bench_stats_compute(v, nb, &st);
        res[a].calls = nb * B;
        res[a].mean_ns = (double)sum / (double)(nb * B);
        res[a].best_ns = (double)st.min / B;
        res[a].p50_ns = (double)st.p50 / B;
    }

out_term:
    if (m) {
        int trc = mdcom_term(m);
        if (trc != 0) {
            bench_err_mdcom("api: mdcom_term", trc);
            if (rc == 0)
                rc = trc;
        }
    }
out_free:
    free(bt), free(ids), free(ids2), free(lens), free(ptrs);
    return rc;
}

/* ---- `mdcom-bench api` -------------------------------------------------- */

static void api_usage(FILE *out)
{
    fprintf(out,
            "usage: mdcom-bench api [--calls N] [--quick] [--json FILE] [--strict]\n"
            "\n"
            "Mean cost of one call of each zero-copy FIFO API (alloc, get, enqueue,\n"
            "dequeue, free) in a single process, timed in batches of %u calls on a\n"
            "channel with %u blocks. Target: <= %.0f ns per call.\n"
            "\n"
            "  --calls N    at least N calls of each API (default %u; k/M suffixes)\n"
            "  --quick      %u calls each\n"
            "  --json FILE  also write the results as JSON ('-' = stdout, text to stderr)\n"
            "  --strict     exit %d when a target is missed\n",
            BENCH_API_BATCH, BENCH_API_BATCH, BENCH_API_TARGET_NS, BENCH_API_CALLS_DEFAULT,
            BENCH_API_CALLS_QUICK, BENCH_EXIT_MISSED);
}

static int api_main(int argc, char **argv)
{
    static const struct option lo[] = {{"calls", required_argument, 0, 'c'},
                                       {"quick", no_argument, 0, 'q'},
                                       {"json", required_argument, 0, 'j'},
                                       {"strict", no_argument, 0, 's'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    uint64_t calls = 0;
    int quick = 0, strict = 0;
    const char *json = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (bench_parse_count(optarg, &calls) != 0 || calls == 0) {
                bench_err("api: bad --calls '%s'", optarg);
                return BENCH_EXIT_USAGE;
            }
            break;
        case 'q': quick = 1; break;
        case 'j': json = optarg; break;
        case 's': strict = 1; break;
        case 'h': api_usage(stdout); return BENCH_EXIT_OK;
        default: fprintf(stderr, "try 'mdcom-bench api --help'\n"); return BENCH_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        bench_err("api: unexpected argument '%s'", argv[optind]);
        return BENCH_EXIT_USAGE;
    }
    if (!calls)
        calls = quick ? BENCH_API_CALLS_QUICK : BENCH_API_CALLS_DEFAULT;
    FILE *out = json && strcmp(json, "-") == 0 ? stderr : stdout;

    bench_api_result r[BENCH_API_N];
    unsigned integrity = 0;
    int rc = bench_api_run(calls, r, &integrity);
    if (rc != 0)
        return BENCH_EXIT_ERROR;
    int missed = 0;
    fprintf(out, "api: mean ns per call, %llu calls each, batches of %u\n",
            (unsigned long long)r[0].calls, BENCH_API_BATCH);
    fprintf(out, "  %-8s %10s %10s %10s  %s\n", "api", "mean", "p50-batch", "best-batch", "target");
    for (int a = 0; a < BENCH_API_N; a++) {
        int met = r[a].mean_ns <= BENCH_API_TARGET_NS;
        missed += !met;
        fprintf(out, "  %-8s %7.1f ns %7.1f ns %7.1f ns  <= %.0f ns %s\n", r[a].api, r[a].mean_ns,
                r[a].p50_ns, r[a].best_ns, BENCH_API_TARGET_NS, met ? "MET" : "MISSED");
    }
    if (json) {
        FILE *f = strcmp(json, "-") == 0 ? stdout : fopen(json, "w");
        if (!f) {
            bench_err("api: cannot write %s: %s", json, strerror(errno));
            return BENCH_EXIT_ERROR;
        }
        bench_json j;
        bench_json_init(&j, f);
        bench_json_obj_begin(&j, NULL);
        bench_json_str(&j, "benchmark", "api");
        bench_json_arr_begin(&j, "api");
        for (int a = 0; a < BENCH_API_N; a++) {
            bench_json_obj_begin(&j, NULL);
            bench_json_str(&j, "api", r[a].api);
            bench_json_u64(&j, "calls", r[a].calls);
            bench_json_dbl(&j, "mean_ns", r[a].mean_ns);
            bench_json_dbl(&j, "p50_batch_ns", r[a].p50_ns);
            bench_json_dbl(&j, "best_batch_ns", r[a].best_ns);
            bench_json_dbl(&j, "target_ns", BENCH_API_TARGET_NS);
            bench_json_bool(&j, "met", r[a].mean_ns <= BENCH_API_TARGET_NS);
            bench_json_obj_end(&j);
        }
        bench_json_arr_end(&j);
        bench_json_obj_end(&j);
        if (f != stdout)
            fclose(f);
    }
    return strict && missed ? BENCH_EXIT_MISSED : BENCH_EXIT_OK;
}

const bench_cmd bench_cmd_api = {
    .name = "api",
    .summary = "mean cost of alloc/get/enqueue/dequeue/free (single process)",
    .main = api_main,
    .usage = api_usage,
};
