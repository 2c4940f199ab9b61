/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * suite.c - `mdcom-bench suite`: runs bench/bench-suite.py, the suite's driver
 * (one mdcom-bench per scenario, their output to bench-results/<timestamp>/,
 * then bench/bench-report.py), with this executable and its build's
 * libmdcom.so. Every option goes to the script (`mdcom-bench suite --help`).
 * bench/CMakeLists.txt defines MDCOM_BENCH_SUITE_SCRIPT and MDCOM_BENCH_LIB.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define SU_MAX_ARGS 64

static const bench_opt su_tab[] = {{0}}; /* the script's own: --help */

static int su_main(int argc, char **argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    const char *args[SU_MAX_ARGS + 8];
    int k = 0;
    if (n <= 0 || argc > SU_MAX_ARGS) {
        bench_err("suite: %s",
                  n <= 0 ? "cannot find this executable (/proc/self/exe)" : "too many arguments");
        return BENCH_EXIT_USAGE;
    }
    self[n] = '\0';
    args[k++] = "python3";
    args[k++] = MDCOM_BENCH_SUITE_SCRIPT;
    args[k++] = "--bench";
    args[k++] = self;
    if (MDCOM_BENCH_LIB[0]) {
        args[k++] = "--lib";
        args[k++] = MDCOM_BENCH_LIB;
    }
    for (int i = 1; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    fflush(stdout);
    execvp(args[0], (char **)args);
    bench_err("suite: cannot run python3 %s (python3 >= 3.11 on PATH)", MDCOM_BENCH_SUITE_SCRIPT);
    return BENCH_EXIT_ERROR;
}

BENCH_CMD(suite, "suite",
          "all scenarios, quickly; writes bench-results/<time>/ with report and plots", su_main,
          .opts = su_tab,
          .about = "Runs bench/bench-suite.py (every option is its own; --help lists them):\n"
                   "latency, blocks, throughput, api, thread-metric, reap and the Python\n"
                   "package's benchmark, each its own mdcom-bench (or python3) process, then\n"
                   "bench/bench-report.py: DIR/<timestamp>/ with <step>.txt, .json, .csv,\n"
                   "report.md, results.json, results.csv and plots/ (needs python3-matplotlib).\n");
