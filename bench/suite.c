/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * suite.c - `mdcom-bench suite`: every scenario, each in a child process
 * whose stdout goes to the terminal and to <scenario>.txt, with its JSON and
 * CSV, in bench-results/<timestamp>/; then tools/bench-report.py merges them
 * into results.json, results.csv, report.md and plots. The exit status is the
 * worst of the scenarios'. bench/CMakeLists.txt defines the MDCOM_BENCH_*
 * paths (report script, bench/py_bench.py, bindings/python, libmdcom.so).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define SU_MAX_ARGS 32
#define SU_END ((const char *)NULL) /* ends the arguments of su_add */
/* a sanitized libmdcom.so cannot be loaded into an uninstrumented python */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SU_SANITIZED 1
#else
#define SU_SANITIZED 0
#endif

typedef struct su_step {
    const char *name;
    const bench_cmd *cmd; /* NULL: args is a program to run (args[0] its path) */
    const char *args[SU_MAX_ARGS];
    int n;
    int rc;
    double seconds, load0; /* how long; the load average at its start */
    bench_tally *tally;    /* MAP_SHARED: what the scenario's run ended with */
    char json[1100], csv[1100]; /* its --json and --csv */
} su_step;

/* Append the arguments (up to a NULL) to s's command. */
static void su_add(su_step *s, ...)
{
    va_list ap;
    va_start(ap, s);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL;)
        if (s->n < SU_MAX_ARGS - 1)
            s->args[s->n++] = a;
    va_end(ap);
}

/* Append sep and s (s alone to an empty buf) to the list in buf. */
static void su_list_add(char *buf, size_t len, const char *sep, const char *s)
{
    if (buf[0])
        strncat(buf, sep, len - strlen(buf) - 1);
    strncat(buf, s, len - strlen(buf) - 1);
}

/* s's command line, as printed and in suite.json. */
static const char *su_cmdline(const su_step *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s", s->cmd ? "mdcom-bench" : "");
    for (int a = 0; a < s->n; a++)
        su_list_add(buf, len, " ", s->args[a]);
    return buf;
}

static int su_child(void *arg)
{
    su_step *s = arg;
    signal(SIGINT, SIG_DFL);
    s->args[s->n] = NULL;
    bench_tally_out = s->tally;
    if (s->cmd)
        return s->cmd->main(s->n, (char **)s->args);
    execvp(s->args[0], (char **)s->args);
    fprintf(stderr, "mdcom-bench suite: cannot run %s\n", s->args[0]);
    _exit(BENCH_EXIT_ERROR);
}

/* mkdir -p path: 0 or -errno. */
static int su_mkdirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -errno;
        if (c == '\0')
            return 0;
        *p = c;
    }
}

typedef struct su_opts {
    const char *outdir, *script, *period, *only, *timeout;
    int quick, no_report;
} su_opts;

static const bench_opt su_opts_tab[] = {
    BOPT(su_opts, outdir, "out", BO_STR, 0, 0, "DIR",
         "parent directory of the results (default bench-results)"),
    BOPT(su_opts, quick, "quick", BO_FLAG, 1, 0, NULL,
         "every scenario in its --quick form (CI smoke run)"),
    BOPT(su_opts, period, "period", BO_STR, 0, 0, "S",
         "thread-metric reporting period (default 2 s; --quick 0.2)"),
    BOPT(su_opts, only, "scenarios", BO_STR, 0, 0, "LIST",
         "only these steps (latency, blocks, throughput, api,\n"
         "thread-metric, reap, python; default all)"),
    BOPT(su_opts, timeout, "timeout", BO_STR, 0, 0, "S",
         "latency, blocks, throughput: a wait longer than S s\n"
         "times out (default theirs, 5; a cell that times out\n"
         "is retried once with twice S)"),
    BOPT(su_opts, no_report, "no-report", BO_FLAG, 1, 0, NULL, "do not run the report script"),
    BOPT(su_opts, script, "report-script", BO_STR, 0, 0, "PATH",
         "default " MDCOM_BENCH_REPORT_SCRIPT),
    {0},
};

/* 1 when step name is in the comma separated list (NULL: every step). */
static int su_chosen(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return list == NULL;
}

/* A step's summary line: exit, time, load, and what its exit means. */
static void su_summary_line(const su_step *s)
{
    const bench_tally *t = s->tally;
    printf("%-14s exit %d  %6.1f s", s->name, s->rc, s->seconds);
    if (s->rc < 0) {
        printf("  (skipped)\n");
        return;
    }
    printf("  load %.2f", s->load0);
    if (t->load_end >= 0) /* a scenario's; the python step does not say */
        printf("..%.2f", t->load_end);
    if (t->timeouts)
        printf("  %u of %u cells TIMEOUT (busy machine; see the report)", t->timeouts, t->cells);
    if (t->integrity)
        printf("  <- INTEGRITY ERROR: %u (a message lost, damaged or repeated: see its output)",
               t->integrity);
    else if (t->failures || (s->rc != 0 && s->rc != BENCH_EXIT_MISSED && s->rc != BENCH_EXIT_TIMEOUT))
        printf("  <- API ERROR: a call failed (see its output)");
    printf("\n");
}

static int su_main(int argc, char **argv)
{
    su_opts o = {.outdir = "bench-results", .script = MDCOM_BENCH_REPORT_SCRIPT};
    int prc =
        bench_parsed(bench_opts_parse("suite", su_opts_tab, &o, argc, argv), &bench_cmd_suite);
    if (prc >= 0)
        return prc;
    int quick = o.quick;
    char stamp[32], dir[1024];
    time_t now = time(NULL);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
    snprintf(dir, sizeof(dir), "%s/%s", o.outdir, stamp);
    for (int k = 1; access(dir, F_OK) == 0 && k < 100; k++)
        snprintf(dir, sizeof(dir), "%s/%s-%d", o.outdir, stamp, k);
    int rc = su_mkdirs(dir);
    if (rc != 0) {
        bench_err("suite: cannot create %s: %s", dir, strerror(-rc));
        return BENCH_EXIT_USAGE;
    }
    bench_host h;
    bench_host_detect(&h);
    printf("mdcom-bench suite: results in %s/\n", dir);
    fflush(stdout);

    /* the scenarios, then the Python package against PyPI's iceoryx2 with
     * the python3 on PATH (the one scripts/deps.sh installed iceoryx2 for) */
    enum { S_LAT, S_BLK, S_TP, S_API, S_TM, S_REAP, S_PY, S_N };
    static const bench_cmd *const cmds[S_N] = {&bench_cmd_latency,       &bench_cmd_blocks,
                                               &bench_cmd_throughput,    &bench_cmd_api,
                                               &bench_cmd_thread_metric, &bench_cmd_reap};
    su_step st[S_N] = {0};
    for (int i = 0; i < S_N; i++) {
        su_step *s = &st[i];
        s->cmd = cmds[i];
        s->name = s->cmd ? s->cmd->name : "python";
        snprintf(s->json, sizeof(s->json), "%s/%s.json", dir, s->name);
        snprintf(s->csv, sizeof(s->csv), "%s/%s.csv", dir, s->name);
        if (s->cmd)
            su_add(s, s->name, "--json", s->json, "--csv", s->csv, SU_END);
        else
            su_add(s, "python3", MDCOM_BENCH_PY_SCRIPT, "--json", s->json, SU_END);
        if (quick && i != S_API)
            su_add(s, "--quick", SU_END);
        if (o.timeout && (i == S_LAT || i == S_BLK || i == S_TP))
            su_add(s, "--timeout", o.timeout, SU_END);
        s->tally = bench_shared_alloc(sizeof(bench_tally));
        if (!s->tally) {
            bench_err("suite: out of memory");
            return BENCH_EXIT_ERROR;
        }
        *s->tally = (bench_tally){.load_end = -1};
    }
    /* Only the cells to run are chosen here (sizes, transports, channel
     * counts); how a cell is measured (samples, warm-up, rounds, time budget,
     * bytes per channel) is each scenario's default, as when run alone. */
    su_add(&st[S_LAT], "--sizes", quick ? "1,64,4K,64K,1M" : "1,64,1K,4K,64K,1M,16M", SU_END);
    if (!quick) {
        su_add(&st[S_BLK], "--blocks", "512,1K,2K,4K,8K,16K,32K,256K", "--counts", "1,8", SU_END);
        su_add(&st[S_TP], "--sizes", "16,64,496,4K", SU_END);
    } else {
        su_add(&st[S_API], "--calls", "64k", "--no-instr", SU_END);
        su_add(&st[S_TP], "--channels", "1,8,32", "--sizes", "64,4K", SU_END);
    }
    /* blocks and throughput: every message transport but iceoryx (a peer
     * whose per-cell set-up waits for its daemon's discovery loop): it is
     * measured in latency only, keeping the suite within its time;
     * throughput also streams through the peer programs (one channel) */
    char msg_trs[512] = "", ext_trs[88] = "", tp_trs[600];
    for (unsigned i = 0; i < bench_n_transports; i++) {
        const bench_transport *t = bench_transports[i];
        if (bench_tr_carries(t) && !t->hidden && strcmp(t->name, "iceoryx") != 0)
            su_list_add(msg_trs, sizeof(msg_trs), ",", t->name);
        else if (t->ext)
            su_list_add(ext_trs, sizeof(ext_trs), ",", t->name);
    }
    snprintf(tp_trs, sizeof(tp_trs), "%s%s%s", msg_trs, ext_trs[0] ? "," : "", ext_trs);
    su_add(&st[S_BLK], "--transports", msg_trs, SU_END);
    su_add(&st[S_TP], "--transports", tp_trs, SU_END);
    su_add(&st[S_TM], "--period", o.period ? o.period : quick ? "0.2" : "2", "--transports",
           "mdcom-zc-poll,mdcom-copy-poll,mdcom-zc-block,raw-spin,raw-futex,pipe,mq", SU_END);
    int have_py = access(MDCOM_BENCH_PY_SCRIPT, R_OK) == 0 && access(MDCOM_BENCH_LIB, R_OK) == 0;
    if (have_py) {
        setenv("MDCOM_LIB", MDCOM_BENCH_LIB, 1);
        setenv("PYTHONPATH", MDCOM_BENCH_PY_PATH, 1);
    }

    int worst = 0;
    unsigned cells = 0, timeouts = 0;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < S_N; i++) {
        su_step *s = &st[i];
        char path[1100], cmd[4096], *text = NULL;
        size_t len = 0;
        printf("\n######## %s ########\n", s->name);
        if (!su_chosen(o.only, s->name)) {
            printf("skipped: not in --scenarios %s\n", o.only);
            s->rc = -1;
            continue;
        }
        if (i == S_PY && (!have_py || SU_SANITIZED)) {
            if (!have_py)
                printf("skipped: %s or %s not found (shared library build)\n",
                       MDCOM_BENCH_PY_SCRIPT, MDCOM_BENCH_LIB);
            else
                printf("skipped: a sanitizer build (its libmdcom.so needs the sanitizer's "
                       "runtime first in the process)\n");
            s->rc = -1;
            continue;
        }
        printf("$ %s\n", su_cmdline(s, cmd, sizeof(cmd)));
        fflush(stdout);
        uint64_t t1 = bench_now_ns();
        s->load0 = bench_loadavg();
        s->rc = bench_child(su_child, s, stdout, &text, &len, -1, s->name);
        s->seconds = (double)(bench_now_ns() - t1) / 1e9;
        snprintf(path, sizeof(path), "%s/%s.txt", dir, s->name);
        FILE *txt = fopen(path, "w");
        if (txt) {
            fwrite(text ? text : "", 1, len, txt);
            fclose(txt);
        }
        free(text);
        if (s->rc < 0) {
            bench_err("suite: cannot run %s", s->name);
            s->rc = BENCH_EXIT_ERROR;
        }
        if (s->rc == BENCH_EXIT_INTERRUPTED || s->rc >= 128) {
            bench_err("suite: interrupted");
            return BENCH_EXIT_INTERRUPTED;
        }
        /* timeouts: counted over all the steps below; a missed target:
         * never a failure */
        if (s->rc != 0 && s->rc != BENCH_EXIT_MISSED && s->rc != BENCH_EXIT_TIMEOUT)
            worst = BENCH_EXIT_ERROR;
        cells += s->tally->cells;
        timeouts += s->tally->timeouts;
    }
    double total = (double)(bench_now_ns() - t0) / 1e9;
    int too_many = bench_timeouts_too_many(cells, timeouts);
    if (too_many && !worst)
        worst = BENCH_EXIT_TIMEOUT;

    /* suite.json: what ran, how long, how it ended */
    char path[1100];
    snprintf(path, sizeof(path), "%s/suite.json", dir);
    FILE *sf = fopen(path, "w");
    if (sf) {
        bench_json j;
        bench_json_init(&j, sf);
        bench_json_obj_begin(&j, NULL);
        bench_json_str(&j, "benchmark", "suite");
        bench_json_str(&j, "timestamp", stamp);
        bench_json_bool(&j, "quick", quick);
        bench_host_json(&j, "host", &h);
        bench_json_arr_begin(&j, "steps");
        for (int i = 0; i < S_N; i++) {
            char cmd[4096];
            bench_json_obj_begin(&j, NULL);
            bench_json_str(&j, "scenario", st[i].name);
            bench_json_str(&j, "command", su_cmdline(&st[i], cmd, sizeof(cmd)));
            bench_json_i64(&j, "exit", st[i].rc);
            bench_json_dbl(&j, "seconds", st[i].seconds);
            bench_json_dbl(&j, "loadavg_start_1m", st[i].rc < 0 ? NAN : st[i].load0);
            bench_json_dbl(&j, "loadavg_end_1m", st[i].tally->load_end);
            bench_json_u64(&j, "cells", st[i].tally->cells);
            bench_json_u64(&j, "timeouts", st[i].tally->timeouts);
            bench_json_u64(&j, "integrity_errors", st[i].tally->integrity);
            bench_json_u64(&j, "failures", st[i].tally->failures);
            bench_json_obj_end(&j);
        }
        bench_json_arr_end(&j);
        bench_json_u64(&j, "cells", cells);
        bench_json_u64(&j, "timeouts", timeouts);
        bench_json_u64(&j, "timeout_limit_pct", BENCH_TIMEOUT_PCT);
        bench_json_i64(&j, "exit", worst);
        bench_json_dbl(&j, "seconds", total);
        bench_json_obj_end(&j);
        fclose(sf);
    }
    printf("\n######## summary ########\n");
    for (int i = 0; i < S_N; i++)
        su_summary_line(&st[i]);
    printf("total %.1f s; %u of %u cells timed out (after a retry)%s\n", total, timeouts, cells,
           too_many ? ": more than 5 %, the machine was too busy to measure: exit 4"
           : timeouts ? ": within the 5 % allowed, not a failure" : "");
    fflush(stdout);
    if (o.no_report)
        return worst;
    if (access(o.script, R_OK) != 0) {
        bench_err("suite: report script %s not found: no report.md/plots (use --report-script)",
                  o.script);
        return BENCH_EXIT_ERROR;
    }
    /* Debian's interpreter first: python3-matplotlib is installed for it,
     * whatever python3 comes first on PATH */
    char cmd[2400];
    snprintf(cmd, sizeof(cmd), "%s '%s' '%s'",
             access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3", o.script, dir);
    int s = system(cmd);
    if (s != 0) {
        bench_err("suite: %s failed (exit %d)", o.script, WIFEXITED(s) ? WEXITSTATUS(s) : -1);
        return BENCH_EXIT_ERROR;
    }
    printf("report: %s/report.md\n", dir);
    return worst;
}

BENCH_CMD(suite, "suite",
          "all scenarios, quickly; writes bench-results/<time>/ with report and plots",
          su_main, .opts = su_opts_tab,
          .about = "A pass over all scenarios (latency, blocks, throughput, api, thread-metric,\n"
                   "reap, python), a few minutes on a 2-cpu machine (--quick: under a minute).\n"
                   "Writes DIR/<timestamp>/: per scenario <name>.txt, .json, .csv; then\n"
                   "tools/bench-report.py makes report.md, results.json, results.csv and plots/\n"
                   "(PNG + SVG; needs python3-matplotlib).\n",
          .more = "Exit status: 0 ok (also with a few cells that timed out on a busy machine:\n"
                  "TIMEOUT in the report), 1 an integrity or API error in any scenario (the\n"
                  "report is still written), 4 more than 5 % of the cells timed out, 2 usage.\n");
