/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * suite.c - `mdcom-bench suite`: a pass over every scenario that writes
 * bench-results/<timestamp>/ with each scenario's text, JSON and CSV, then
 * runs tools/bench-report.py to merge them into results.json, results.csv,
 * report.md and the plots (PNG + SVG, matplotlib).
 *
 * Each scenario runs in a child process (its own state and signal handling)
 * whose standard output goes through a pipe to the terminal and to
 * <scenario>.txt. The exit status is the worst of the scenarios' (an
 * integrity error anywhere makes it 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/mdcom.h"
#include "transport.h"

#ifndef MDCOM_BENCH_REPORT_SCRIPT
#define MDCOM_BENCH_REPORT_SCRIPT "tools/bench-report.py"
#endif
#ifndef MDCOM_BENCH_PY_SCRIPT /* bench/py_bench.py, bindings/python, libmdcom.so */
#define MDCOM_BENCH_PY_SCRIPT "bench/py_bench.py"
#define MDCOM_BENCH_PY_PATH "bindings/python"
#define MDCOM_BENCH_LIB "libmdcom.so"
#endif

extern const bench_cmd bench_cmd_latency;
extern const bench_cmd bench_cmd_blocks;
extern const bench_cmd bench_cmd_throughput;
extern const bench_cmd bench_cmd_api;
extern const bench_cmd bench_cmd_thread_metric;
extern const bench_cmd bench_cmd_reap;

#define SU_MAX_ARGS 32
#define SU_END ((const char *)NULL) /* ends the arguments of su_add */

typedef struct su_step {
    const char *name;
    const bench_cmd *cmd; /* NULL: args is a program to run (args[0] its path) */
    const char *args[SU_MAX_ARGS];
    int n;
    int rc;
    double seconds;
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

static int su_child(void *arg)
{
    su_step *s = arg;
    signal(SIGINT, SIG_DFL);
    s->args[s->n] = NULL;
    if (s->cmd)
        return s->cmd->main(s->n, (char **)s->args);
    execvp(s->args[0], (char **)s->args);
    fprintf(stderr, "mdcom-bench suite: cannot run %s\n", s->args[0]);
    _exit(BENCH_EXIT_ERROR);
}

/* Run step s in a child; its stdout to ours and to path (s->rc, s->seconds). */
static int su_run(su_step *s, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    uint64_t t0 = bench_now_ns();
    s->rc = bench_child(su_child, s, stdout, &text, &len, -1, s->name);
    s->seconds = (double)(bench_now_ns() - t0) / 1e9;
    FILE *txt = fopen(path, "w");
    if (txt) {
        fwrite(text ? text : "", 1, len, txt);
        fclose(txt);
    }
    free(text);
    return s->rc < 0 ? -1 : 0;
}

static int su_mkdirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -errno;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

typedef struct su_opts {
    const char *outdir, *script, *period;
    int quick, no_report;
} su_opts;

static const bench_opt su_opts_tab[] = {
    BOPT(su_opts, outdir, "out", BO_STR, 0, 0, "DIR",
         "parent directory of the results (default bench-results)"),
    BOPT(su_opts, quick, "quick", BO_FLAG, 1, 0, NULL, "every scenario in its --quick form (CI smoke run)"),
    BOPT(su_opts, period, "period", BO_STR, 0, 0, "S",
         "thread-metric reporting period (default 2 s; --quick 0.2)"),
    BOPT(su_opts, no_report, "no-report", BO_FLAG, 1, 0, NULL, "do not run the report script"),
    BOPT(su_opts, script, "report-script", BO_STR, 0, 0, "PATH",
         "default " MDCOM_BENCH_REPORT_SCRIPT),
    {0},
};

static int su_main(int argc, char **argv)
{
    su_opts o = {.outdir = "bench-results", .script = MDCOM_BENCH_REPORT_SCRIPT};
    int prc =
        bench_parsed(bench_opts_parse("suite", su_opts_tab, &o, argc, argv), &bench_cmd_suite);
    if (prc >= 0)
        return prc;
    const char *outdir = o.outdir, *script = o.script, *period = o.period;
    int quick = o.quick, no_report = o.no_report;
    if (!period)
        period = quick ? "0.2" : "2";

    char stamp[32], dir[1024];
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tmv);
    snprintf(dir, sizeof(dir), "%s/%s", outdir, stamp);
    for (int k = 1; access(dir, F_OK) == 0 && k < 100; k++)
        snprintf(dir, sizeof(dir), "%s/%s-%d", outdir, stamp, k);
    int rc = su_mkdirs(dir);
    if (rc != 0) {
        bench_err("suite: cannot create %s: %s", dir, strerror(-rc));
        return BENCH_EXIT_USAGE;
    }
    bench_host h;
    bench_host_detect(&h);
    printf("mdcom-bench suite: results in %s/\n", dir);
    fflush(stdout);

    enum { S_LAT, S_BLK, S_TP, S_API, S_TM, S_REAP, S_PY, S_N };
    static su_step st[S_N];
    static char jpath[S_N][1100], cpath[S_N][1100];
    memset(st, 0, sizeof(st));
    st[S_LAT].cmd = &bench_cmd_latency;
    st[S_BLK].cmd = &bench_cmd_blocks;
    st[S_TP].cmd = &bench_cmd_throughput;
    st[S_API].cmd = &bench_cmd_api;
    st[S_TM].cmd = &bench_cmd_thread_metric;
    st[S_REAP].cmd = &bench_cmd_reap;
    for (int i = 0; i < S_PY; i++) {
        st[i].name = st[i].cmd->name;
        snprintf(jpath[i], sizeof(jpath[i]), "%s/%s.json", dir, st[i].cmd->name);
        snprintf(cpath[i], sizeof(cpath[i]), "%s/%s.csv", dir, st[i].cmd->name);
        su_add(&st[i], st[i].cmd->name, "--json", jpath[i], "--csv", cpath[i], SU_END);
        if (quick && i != S_API)
            su_add(&st[i], "--quick", SU_END);
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
     * measured in latency only, keeping the suite within its time */
    static char msg_trs[512];
    msg_trs[0] = 0;
    for (unsigned i = 0; i < bench_n_transports; i++) {
        const bench_transport *t = bench_transports[i];
        if (!bench_tr_carries(t) || t->hidden || strcmp(t->name, "iceoryx") == 0)
            continue;
        if (msg_trs[0])
            strncat(msg_trs, ",", sizeof(msg_trs) - strlen(msg_trs) - 1);
        strncat(msg_trs, t->name, sizeof(msg_trs) - strlen(msg_trs) - 1);
    }
    su_add(&st[S_BLK], "--transports", msg_trs, SU_END);
    /* throughput also streams through the peer programs (one channel) */
    static char tp_trs[600];
    snprintf(tp_trs, sizeof(tp_trs), "%s", msg_trs);
    for (unsigned i = 0; i < bench_n_transports; i++)
        if (bench_transports[i]->ext) {
            strncat(tp_trs, ",", sizeof(tp_trs) - strlen(tp_trs) - 1);
            strncat(tp_trs, bench_transports[i]->name, sizeof(tp_trs) - strlen(tp_trs) - 1);
        }
    su_add(&st[S_TP], "--transports", tp_trs, SU_END);
    su_add(&st[S_TM], "--period", period, "--transports",
           "mdcom-zc-poll,mdcom-copy-poll,mdcom-zc-block,raw-spin,raw-futex,pipe,mq", SU_END);

    /* the Python package against PyPI's iceoryx2 (bench/py_bench.py) */
    st[S_PY].name = "python";
    snprintf(jpath[S_PY], sizeof(jpath[S_PY]), "%s/python.json", dir);
    /* the python3 on PATH: the one scripts/deps.sh installed PyPI's iceoryx2 for */
    su_add(&st[S_PY], "python3", MDCOM_BENCH_PY_SCRIPT, "--json", jpath[S_PY], SU_END);
    if (quick)
        su_add(&st[S_PY], "--quick", SU_END);
    int have_py = access(MDCOM_BENCH_PY_SCRIPT, R_OK) == 0 && access(MDCOM_BENCH_LIB, R_OK) == 0;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* a sanitized libmdcom.so cannot be loaded into an uninstrumented python */
    const int sanitized = 1;
#else
    const int sanitized = 0;
#endif
    if (have_py) {
        setenv("MDCOM_LIB", MDCOM_BENCH_LIB, 1);
        setenv("PYTHONPATH", MDCOM_BENCH_PY_PATH, 1);
    }

    int worst = 0;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < S_N; i++) {
        char path[1100];
        snprintf(path, sizeof(path), "%s/%s.txt", dir, st[i].name);
        printf("\n######## %s ########\n", st[i].name);
        if (i == S_PY && !have_py) {
            printf("skipped: %s or %s not found (shared library build)\n", MDCOM_BENCH_PY_SCRIPT,
                   MDCOM_BENCH_LIB);
            st[i].rc = -1;
            continue;
        }
        if (i == S_PY && sanitized) {
            printf("skipped: a sanitizer build (its libmdcom.so needs the sanitizer's runtime "
                   "first in the process)\n");
            st[i].rc = -1;
            continue;
        }
        for (int a = 0; a < st[i].n; a++)
            printf("%s%s", a ? " " : st[i].cmd ? "$ mdcom-bench " : "$ ", st[i].args[a]);
        printf("\n");
        fflush(stdout);
        if (su_run(&st[i], path) != 0) {
            bench_err("suite: cannot run %s", st[i].name);
            st[i].rc = BENCH_EXIT_ERROR;
        }
        if (st[i].rc == BENCH_EXIT_INTERRUPTED || st[i].rc >= 128) {
            bench_err("suite: interrupted");
            return BENCH_EXIT_INTERRUPTED;
        }
        if (st[i].rc != 0 && st[i].rc != BENCH_EXIT_MISSED)
            worst = BENCH_EXIT_ERROR;
    }
    double total = (double)(bench_now_ns() - t0) / 1e9;

    /* suite.json: what ran, how long, how it ended */
    char spath[1100];
    snprintf(spath, sizeof(spath), "%s/suite.json", dir);
    FILE *sf = fopen(spath, "w");
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
            char cmd[1024] = "";
            if (st[i].cmd)
                snprintf(cmd, sizeof(cmd), "mdcom-bench");
            for (int a = 0; a < st[i].n; a++) {
                strncat(cmd, cmd[0] ? " " : "", sizeof(cmd) - strlen(cmd) - 1);
                strncat(cmd, st[i].args[a], sizeof(cmd) - strlen(cmd) - 1);
            }
            bench_json_obj_begin(&j, NULL);
            bench_json_str(&j, "scenario", st[i].name);
            bench_json_str(&j, "command", cmd);
            bench_json_i64(&j, "exit", st[i].rc);
            bench_json_dbl(&j, "seconds", st[i].seconds);
            bench_json_obj_end(&j);
        }
        bench_json_arr_end(&j);
        bench_json_dbl(&j, "seconds", total);
        bench_json_obj_end(&j);
        fclose(sf);
    }
    printf("\n######## summary ########\n");
    for (int i = 0; i < S_N; i++)
        printf("%-14s exit %d  %6.1f s%s\n", st[i].name, st[i].rc, st[i].seconds,
               st[i].rc == BENCH_EXIT_ERROR ? "  <- integrity or API error (see its output)" : "");
    printf("total %.1f s\n", total);
    fflush(stdout);

    if (!no_report) {
        if (access(script, R_OK) != 0) {
            bench_err("suite: report script %s not found: no report.md/plots (use --report-script)",
                      script);
            worst = worst ? worst : BENCH_EXIT_ERROR;
        } else {
            char cmd[2400];
            /* Debian's interpreter first: python3-matplotlib is installed
             * for it, whatever python3 comes first on PATH */
            const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
            snprintf(cmd, sizeof(cmd), "%s '%s' '%s'", py, script, dir);
            int s = system(cmd);
            if (s != 0) {
                bench_err("suite: %s failed (exit %d)", script, WIFEXITED(s) ? WEXITSTATUS(s) : -1);
                worst = worst ? worst : BENCH_EXIT_ERROR;
            } else {
                printf("report: %s/report.md\n", dir);
            }
        }
    }
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
          .more = "Exit status: 0 ok, 1 an integrity or API error in any scenario (the report\n"
                  "is still written), 2 usage.\n");
