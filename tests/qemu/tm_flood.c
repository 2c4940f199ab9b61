/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_flood.c - the Linux side of scripts/thread-metric --interference: runs
 * under harness/qemu-m4's mdcom-qemu next to a Thread-Metric traffic image
 * (firmware/thread-metric, tm_traffic.h) until QEMU ends.
 *
 *   tm_flood          attach as domain "linux" of tm_traffic.toml through
 *                     the UART doorbell and send TM_TRAFFIC_MSG-byte
 *                     messages on "flood" as fast as the channel takes them
 *                     (polled: while the firmware's 16 blocks are all in
 *                     flight, the send is retried at once)
 *   tm_flood --idle   attach nothing, send nothing: wait (the baseline run)
 *
 *   env MDCOM_SHM_DIR, MDCOM_QEMU_SOCKET, MDCOM_QEMU_PID (mdcom-qemu's)
 *
 * Prints "FLOOD sent=<n> full=<n> errors=<n> run_s=<s> ..." and exits 0 once QEMU has
 * exited (the image ends after its last report), 2 when it cannot attach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "doorbell_uart.h"
#include "mdcom/mdcom.h"
#include "mdcom_tm_cfg.h"
#include "tm_traffic.h"

#define MS(x) ((int64_t)(x)*1000000ll)

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* QEMU still runs: its /proc entry exists and is not a zombie (mdcom-qemu
 * reaps it only when we are done). */
static int qemu_alive(const char *pid)
{
    char path[64], buf[256], *p;
    FILE *f;
    size_t n;
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1u, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* "pid (comm) S ..." */
    return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

int main(int argc, char **argv)
{
    const char *sock = getenv("MDCOM_QEMU_SOCKET"), *pid = getenv("MDCOM_QEMU_PID");
    mdcom_uart_doorbell *db = NULL;
    mdcom_fifoch_t *ch;
    mdcom_init_opts o;
    mdcom_t *m;
    char err[200] = "";
    uint32_t msg[TM_TRAFFIC_MSG / 4u];
    unsigned long long sent = 0, full = 0, errors = 0;
    double t0;
    int idle = argc == 2 && !strcmp(argv[1], "--idle"), r;
    if ((argc != 1 && !idle) || !pid || (!idle && !sock)) {
        fprintf(
            stderr,
            "usage: MDCOM_SHM_DIR=.. MDCOM_QEMU_SOCKET=.. MDCOM_QEMU_PID=.. tm_flood [--idle]\n");
        return 2;
    }
    t0 = mono_s();
    if (idle) {
        while (qemu_alive(pid))
            usleep(10000);
        printf("FLOOD idle run_s=%.1f\n", mono_s() - t0);
        return 0;
    }
    r = mdcom_doorbell_uart_open(&db, sock, MS(10000));
    if (r) {
        printf("FLOOD doorbell_open %s\n", mdcom_strerror(r));
        return 2;
    }
    memset(&o, 0, sizeof(o));
    o.platform = mdcom_doorbell_uart_platform(db);
    o.attach_timeout_ns = MS(30000);
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    r = mdcom_init(&m, &mdcom_tm_config, MDCOM_TM_DOM_LINUX, &o);
    if (!r)
        r = mdcom_fifoch_open(m, TM_TRAFFIC_CHANNEL, &ch);
    if (r) {
        printf("FLOOD attach %s: %s\n", mdcom_strerror(r), err);
        mdcom_doorbell_uart_close(db);
        return 2;
    }
    memset(msg, 0xa5, sizeof(msg));
    msg[1] = TM_TRAFFIC_MAGIC;
    /* polled: a full channel is retried at once, never waited on. A
     * blocked sender would be woken by the firmware's free, which rings
     * only when it sees the sender's waiter count; the guest's
     * LDREX/STREX is not atomic against our host atomics there (see
     * below; docs/reliability.md), a lost count leaves the sender to its 50-ms
     * re-check slices, and the flood would be the slices' rate. That is
     * under -icount: single-threaded TCG, which the multi-threaded
     * translation that makes STREX atomic (harness/qemu-m4/qemu_m4.c)
     * excludes */
    for (;;) {
        msg[0] = (uint32_t)sent;
        r = mdcom_fifoch_send(ch, msg, sizeof(msg), MDCOM_POLL);
        if (r == 0)
            sent++;
        else if (r == -ETIMEDOUT || r == -EAGAIN || r == -ENOBUFS)
            full++; /* no free block (MDCOM_POLL's timeout) */
        else
            errors++;
        if (((sent + full + errors) & 4095u) == 0 && !qemu_alive(pid))
            break;
    }
    printf("FLOOD sent=%llu full=%llu errors=%llu run_s=%.1f doorbell_rx=%llu doorbell_tx=%llu\n",
           sent, full, errors, mono_s() - t0, (unsigned long long)mdcom_doorbell_uart_rx(db),
           (unsigned long long)mdcom_doorbell_uart_tx(db));
    fflush(stdout);
    mdcom_term(m);
    mdcom_doorbell_uart_close(db);
    return 0;
}
