/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom-qemu - run firmware under QEMU (mps2-an386) with a file-backed mdcom
 * region and run a Linux-side command against it.
 *
 *   mdcom-qemu --firmware FW.elf [--region NAME] [--doorbell | --doorbell-mux] [--icount N]
 *              [--console FILE|-] [--ready-timeout SEC] [--timeout SEC]
 *              [-- COMMAND ARGS...]
 *
 * With COMMAND: start QEMU, wait for READY, run COMMAND with
 *   MDCOM_SHM_DIR      directory holding the region file (the Linux port's)
 *   MDCOM_QEMU_REGION  the region file
 *   MDCOM_QEMU_SOCKET  the doorbell socket (with --doorbell: one client;
 *                      --doorbell-mux: any number of processes, doorbell_mux.h)
 *   MDCOM_QEMU_PID     QEMU's pid
 * then stop QEMU and exit with COMMAND's status (124 on --timeout).
 * Without COMMAND: wait for the firmware to exit (semihosting) and exit with
 * its status; the console goes to stdout.
 * Every exit path, signals included, stops QEMU and removes the files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qemu_m4.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: mdcom-qemu --firmware FW.elf [--region NAME] [--doorbell | --doorbell-mux]\n"
            "                  [--icount N]\n"
            "                  [--console FILE|-] [--ready-timeout SEC] [--timeout SEC]\n"
            "                  [-- COMMAND ARGS...]\n");
    exit(2);
}

static pid_t g_child;
static void fwd(int sig)
{
    if (g_child > 0)
        kill(g_child, sig);
}

int main(int argc, char **argv)
{
    mdcom_qemu_opts o;
    mdcom_qemu q;
    char err[512];
    double ready_s = 30, timeout_s = 120;
    int i, r, cmd = -1, status = 0;
    memset(&o, 0, sizeof(o));
    o.region_name = "mdcom-m4";
    o.icount_shift = -1;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            cmd = i + 1;
            break;
        } else if (!strcmp(a, "--firmware") && i + 1 < argc) {
            o.firmware = argv[++i];
        } else if (!strcmp(a, "--region") && i + 1 < argc) {
            o.region_name = argv[++i];
        } else if (!strcmp(a, "--doorbell")) {
            o.doorbell = 1;
        } else if (!strcmp(a, "--doorbell-mux")) {
            o.doorbell = MDCOM_QEMU_DOORBELL_MUX;
        } else if (!strcmp(a, "--icount") && i + 1 < argc) {
            o.icount_shift = atoi(argv[++i]);
        } else if (!strcmp(a, "--console") && i + 1 < argc) {
            o.console = argv[++i];
        } else if (!strcmp(a, "--ready-timeout") && i + 1 < argc) {
            ready_s = atof(argv[++i]);
        } else if (!strcmp(a, "--timeout") && i + 1 < argc) {
            timeout_s = atof(argv[++i]);
        } else {
            usage();
        }
    }
    if (!o.firmware || (cmd >= 0 && cmd >= argc))
        usage();
    if (cmd < 0 && !o.console)
        o.console = "-";
    o.ready_timeout_ns = cmd < 0 ? -1 : (int64_t)(ready_s * 1e9);
    mdcom_qemu_cleanup_on_signals();
    r = mdcom_qemu_start(&q, &o, err, sizeof(err));
    if (r) {
        fprintf(stderr, "mdcom-qemu: %s\n", err);
        return r == -ENOENT ? 77 : 1;
    }
    if (cmd < 0) {
        r = mdcom_qemu_wait_exit(&q, (int64_t)(timeout_s * 1e9));
        status = r ? 124 : q.exit_status;
        if (r)
            fprintf(stderr, "mdcom-qemu: firmware still running after %.0f s\n", timeout_s);
        mdcom_qemu_stop(&q);
        return status;
    }
    setenv("MDCOM_SHM_DIR", q.dir, 1);
    setenv("MDCOM_QEMU_REGION", q.region_path, 1);
    if (q.socket_path[0])
        setenv("MDCOM_QEMU_SOCKET", q.socket_path, 1);
    {
        char pid[32];
        snprintf(pid, sizeof(pid), "%ld", (long)q.pid);
        setenv("MDCOM_QEMU_PID", pid, 1);
    }
    g_child = fork();
    if (g_child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the command ends with us */
        execvp(argv[cmd], &argv[cmd]);
        fprintf(stderr, "mdcom-qemu: cannot run %s: %s\n", argv[cmd], strerror(errno));
        _exit(127);
    }
    if (g_child < 0) {
        fprintf(stderr, "mdcom-qemu: fork: %s\n", strerror(errno));
        mdcom_qemu_stop(&q);
        return 1;
    }
    signal(SIGINT, fwd); /* the command ends first, then we clean up */
    {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            int st;
            pid_t w = waitpid(g_child, &st, WNOHANG);
            if (w == g_child) {
                status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >
                timeout_s) {
                fprintf(stderr, "mdcom-qemu: %s timed out after %.0f s\n", argv[cmd], timeout_s);
                kill(g_child, SIGKILL);
                waitpid(g_child, NULL, 0);
                status = 124;
                break;
            }
            usleep(2000);
        }
    }
    if (status != 0) {
        char tail[1024];
        mdcom_qemu_console_tail(&q, tail, sizeof(tail));
        fprintf(stderr, "mdcom-qemu: firmware console: %s\n", tail);
    }
    mdcom_qemu_stop(&q);
    return status;
}
