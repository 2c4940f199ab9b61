/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_qemu_an521.c - `mdcom-bench --target qemu-an521 [--runs N]
 * [--fw-dir DIR] [--m4-apicost PATH]`: the two Cortex-M33 of QEMU
 * mps2-an521 (firmware/qemu-an521).
 *
 *   round trips  N runs (default 2) of the dual-core images under
 *                multi-threaded TCG (-smp 2): CPU0 times 5000 round trips of
 *                a 16-byte message to CPU1 and back, both cores polling
 *                (rtt_poll) and both sleeping in WFI until the MHU interrupt
 *                (rtt_mhu); the mean (SysTick of CPU0, virtual time = host
 *                time without -icount), and the time and -EBUSY count of
 *                the two cores' 2 x 100000 lock rounds (lock2). Every run
 *                also runs the correctness checks; a FAIL fails the bench.
 *   api          instructions per API call on the M33 (mdcom-fw-an521-apicost
 *                under -icount shift=0), next to the M4 (mdcom-fw-apicost on
 *                mps2-an386) when its image is found.
 * Exit: 0, 1 (a run failed), 2 (usage), 77 (qemu-system-arm or the images
 * missing).
 */
#include "target_qemu_an521.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "target_qemu.h"

#ifndef MDCOM_BENCH_QEMU_AN521

int bench_target_qemu_an521(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    bench_err("this mdcom-bench was built without the qemu-an521 target (needs tools/qemu-m4)");
    return BENCH_EXIT_SKIPPED;
}

#else

#include "qemu_m4.h"

#ifndef MDCOM_BENCH_AN521_FW_DIR
#define MDCOM_BENCH_AN521_FW_DIR "fw-an521/firmware/qemu-an521"
#endif
#ifndef MDCOM_BENCH_M4_APICOST
#define MDCOM_BENCH_M4_APICOST "fw-m4/firmware/qemu-m4/mdcom-fw-apicost.elf"
#endif
#define AN_PATH 512
#define AN_MAX_ROWS 32

/* Run one image set; returns the console text (malloc) or NULL. */
static char *an_run(const char *fw0, const char *fw1, int icount, int *status)
{
    mdcom_qemu q;
    mdcom_qemu_opts o;
    char err[256], loader[AN_PATH + 40], log1[AN_PATH + 16];
    const char *extra[8];
    char *log;
    int r, n = 0;
    memset(&o, 0, sizeof(o));
    o.firmware = fw0;
    o.region_name = "mdcom-an521";
    o.machine = "mps2-an521";
    o.icount_shift = icount;
    o.ready_timeout_ns = -1;
    r = mdcom_qemu_prepare(&q, &o, err, sizeof(err));
    if (r) {
        bench_err("qemu-an521: %s", err);
        return NULL;
    }
    extra[n++] = "-smp";
    extra[n++] = "2";
    if (fw1) {
        snprintf(loader, sizeof(loader), "loader,file=%s,cpu-num=1", fw1);
        snprintf(log1, sizeof(log1), "file:%s/cpu1.log", q.dir);
        extra[n++] = "-device";
        extra[n++] = loader;
        extra[n++] = "-serial";
        extra[n++] = log1;
    }
    extra[n] = NULL;
    o.extra = extra;
    r = mdcom_qemu_launch(&q, &o, err, sizeof(err));
    if (r) {
        bench_err("qemu-an521: %s", err);
        mdcom_qemu_stop(&q);
        return NULL;
    }
    r = mdcom_qemu_wait_exit(&q, 300 * 1000000000ll);
    *status = r ? -1 : q.exit_status;
    log = bench_read_file(q.console_path);
    snprintf(log1, sizeof(log1), "%s/cpu1.log", q.dir);
    unlink(log1);
    mdcom_qemu_stop(&q);
    return log;
}

static long an_field(const char *log, const char *result, const char *key)
{
    char pat[64], k[64];
    const char *l, *p, *eol;
    snprintf(pat, sizeof(pat), "RESULT %s ", result);
    l = strstr(log, pat);
    if (!l)
        return -1;
    eol = strchr(l, '\n');
    snprintf(k, sizeof(k), " %s=", key);
    p = strstr(l, k);
    if (!p || (eol && p > eol))
        return -1;
    return strtol(p + strlen(k), NULL, 10);
}

typedef struct an_row {
    char call[32];
    double mean;
} an_row;

static int an_apicost(const char *log, an_row *rows, int max)
{
    int n = 0;
    const char *l = log;
    while (l && *l && n < max) {
        unsigned mode;
        double mean;
        if (sscanf(l, "apicost %31s mode %u mean %lf", rows[n].call, &mode, &mean) == 3) {
            rows[n].mean = mean;
            n++;
        }
        l = strchr(l, '\n');
        if (l)
            l++;
    }
    return n;
}

static int an_exists(const char *p) { return p && access(p, R_OK) == 0; }

int bench_target_qemu_an521(int argc, char **argv)
{
    const char *dir = getenv("MDCOM_AN521_FW_DIR"), *m4api = MDCOM_BENCH_M4_APICOST;
    char fw0[AN_PATH], fw1[AN_PATH], fwapi[AN_PATH];
    int runs = 2, failures = 0;
    if (!dir || !*dir)
        dir = MDCOM_BENCH_AN521_FW_DIR;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--fw-dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--m4-apicost") == 0 && i + 1 < argc) {
            m4api = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: mdcom-bench --target qemu-an521 [--runs N] [--fw-dir DIR] "
                   "[--m4-apicost PATH]\n"
                   "  M33 <-> M33 round trips (polling, MHU interrupt) on QEMU mps2-an521 and\n"
                   "  instructions per API call on the M33 (-icount), next to the M4.\n"
                   "  DIR holds mdcom-fw-an521-{cpu0,cpu1,apicost}.elf (default %s,\n"
                   "  or $MDCOM_AN521_FW_DIR).\n",
                   MDCOM_BENCH_AN521_FW_DIR);
            return BENCH_EXIT_OK;
        } else {
            bench_err("qemu-an521: unknown argument '%s' (--help)", argv[i]);
            return BENCH_EXIT_USAGE;
        }
    }
    if (runs < 1 || runs > 100) {
        bench_err("qemu-an521: --runs 1..100");
        return BENCH_EXIT_USAGE;
    }
    snprintf(fw0, sizeof(fw0), "%s/mdcom-fw-an521-cpu0.elf", dir);
    snprintf(fw1, sizeof(fw1), "%s/mdcom-fw-an521-cpu1.elf", dir);
    snprintf(fwapi, sizeof(fwapi), "%s/mdcom-fw-an521-apicost.elf", dir);
    if (!mdcom_qemu_available() || !an_exists(fw0) || !an_exists(fw1)) {
        bench_err("qemu-an521: needs qemu-system-arm and %s, %s (cmake --preset cortex-m33-an521 "
                  "&& cmake --build --preset cortex-m33-an521, then --fw-dir)",
                  fw0, fw1);
        return BENCH_EXIT_SKIPPED;
    }

    printf("== Cortex-M33 <-> Cortex-M33 round trips, 16-byte message (QEMU mps2-an521, "
           "-smp 2, multi-threaded TCG) ==\n");
    printf("%-4s %-12s %12s %14s %14s\n", "run", "doorbell", "ns/rt mean", "lock2 us",
           "lock2 busy");
    for (int k = 0; k < runs; k++) {
        int st = -1;
        char *log = an_run(fw0, fw1, -1, &st);
        if (!log || st != 0 || !strstr(log, "DONE PASS")) {
            bench_err("qemu-an521: run %d failed (exit %d)%s%s", k + 1, st, log ? "; console:\n" : "",
                      log ? log : "");
            failures++;
            free(log);
            continue;
        }
        for (int m = 0; m < 4; m++) { /* MDCOM FIFO, then RPMsg between the cores */
            static const char *const rs[4] = {"rtt_poll", "rtt_mhu", "rpmsg_rtt_poll",
                                             "rpmsg_rtt_mhu"};
            const char *res = rs[m];
            printf("%-4d %-12s %12ld %14ld %14ld\n", k + 1,
                   m == 0 ? "polling" : m == 1 ? "MHU irq+WFI" : m == 2 ? "RPMsg poll" : "RPMsg MHU",
                   an_field(log, res, "ns_per_rt"), an_field(log, "smem_lock", "us"),
                   an_field(log, "smem_lock", "busy_cpu0") + an_field(log, "smem_lock", "busy_cpu1"));
        }
        free(log);
    }

    if (an_exists(fwapi)) {
        an_row m33[AN_MAX_ROWS], m4[AN_MAX_ROWS];
        int n33 = 0, n4 = 0, st = -1;
        char *log = an_run(fwapi, NULL, 0, &st);
        if (log && st == 0)
            n33 = an_apicost(log, m33, AN_MAX_ROWS);
        free(log);
        if (an_exists(m4api)) {
            mdcom_qemu q;
            mdcom_qemu_opts o;
            char err[256];
            memset(&o, 0, sizeof(o));
            o.firmware = m4api;
            o.region_name = "mdcom-m4";
            o.icount_shift = 0;
            o.ready_timeout_ns = -1;
            if (mdcom_qemu_start(&q, &o, err, sizeof(err)) == 0) {
                if (mdcom_qemu_wait_exit(&q, 120 * 1000000000ll) == 0 && q.exit_status == 0 &&
                    (log = bench_read_file(q.console_path)) != NULL) {
                    n4 = an_apicost(log, m4, AN_MAX_ROWS);
                    free(log);
                }
                mdcom_qemu_stop(&q);
            }
        }
        if (n33 <= 0) {
            bench_err("qemu-an521: api: no measurements from %s", fwapi);
            failures++;
        } else {
            printf("\n== instructions per API call, -icount shift=0, mean of 650 samples, "
                   "overhead subtracted ==\n");
            printf("%-14s %10s %10s\n", "call", "M33", n4 > 0 ? "M4" : "M4 (n/a)");
            for (int i = 0; i < n33; i++) {
                double v4 = -1;
                for (int j = 0; j < n4; j++)
                    if (strcmp(m4[j].call, m33[i].call) == 0)
                        v4 = m4[j].mean;
                if (v4 >= 0)
                    printf("%-14s %10.1f %10.1f\n", m33[i].call, m33[i].mean, v4);
                else
                    printf("%-14s %10.1f %10s\n", m33[i].call, m33[i].mean, "-");
            }
        }
    } else {
        printf("\n(no %s: API costs skipped)\n", fwapi);
    }
    return failures ? BENCH_EXIT_ERROR : BENCH_EXIT_OK;
}

#endif
