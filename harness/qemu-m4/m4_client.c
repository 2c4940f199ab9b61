/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom-m4-client - Linux <-> Cortex-M4 (QEMU) demo and measurements.
 *
 *   mdcom-m4-client --fw mdcom-fw-resp.elf [demo|bench] [--quick]
 *
 * Starts QEMU with the firmware (harness/qemu-m4 launcher), attaches as the
 * remote domain "linux" of qemu_m4.toml and runs:
 *   demo   boot handshake, checked echo (polling and doorbell), block-ack,
 *          SMEM lock, RPMsg echo; prints what it did
 *   bench  round trips (polling, doorbell), the seeds' block table
 *          (512..32768 B) for MDCOM FIFO and RPMsg (496-byte messages),
 *          Linux->firmware one-way stream, Thread-Metric loops
 * Exit status 0 when every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "m4_scen.h"

static int g_fail;

static void check(const char *what, int r)
{
    if (r != 0) {
        printf("  %-40s FAILED (%d: %s)\n", what, r, r < 0 ? mdcom_strerror(r) : "bad replies");
        g_fail++;
    } else {
        printf("  %-40s ok\n", what);
    }
}

static m4_times mk(uint32_t cap)
{
    m4_times t = {calloc(cap, sizeof(double)), 0, cap};
    return t;
}

static void rt(m4_link *l, const char *name, uint32_t n, uint32_t mode, int payload)
{
    m4_times t = mk(n);
    int r = m4_echo(l, n, mode, payload, &t, NULL);
    if (r)
        check(name, r);
    else
        printf("  %-34s n=%-6u p50 %8.2f us  mean %8.2f us  p99 %8.2f us\n", name, n,
               m4_times_pct(&t, 50) / 1e3, m4_times_mean(&t) / 1e3, m4_times_pct(&t, 99) / 1e3);
    free(t.v);
}

static double rp_block(m4_link *l, uint32_t bytes, uint32_t reps, uint32_t mode)
{
    m4_times t = mk(reps);
    double v;
    int r = m4_rpmsg_blockack(l, reps, bytes, mode, &t);
    if (r)
        check("rpmsg block-ack", r);
    v = r ? -1 : m4_times_pct(&t, 50);
    free(t.v);
    return v;
}

int main(int argc, char **argv)
{
    const char *fw = NULL, *what = "demo";
    int quick = 0, i, r;
    m4_link l;
    fw_rsp res;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fw") && i + 1 < argc)
            fw = argv[++i];
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (argv[i][0] != '-')
            what = argv[i];
        else {
            fprintf(stderr, "usage: mdcom-m4-client --fw FW.elf [demo|bench] [--quick]\n");
            return 2;
        }
    }
    if (!fw)
        fw = getenv("MDCOM_M4_FW");
    if (!fw) {
        fprintf(stderr, "mdcom-m4-client: --fw FW.elf (or MDCOM_M4_FW) is required\n");
        return 2;
    }
    mdcom_qemu_cleanup_on_signals();
    {
        double t0 = m4_now_ns();
        r = m4_link_start(&l, fw);
        if (r) {
            fprintf(stderr, "mdcom-m4-client: %s (%s)\n", l.err, mdcom_strerror(r));
            return r == -ENOENT ? 77 : 1;
        }
        printf("QEMU mps2-an386 up, firmware READY and attached in %.1f ms (region %s)\n",
               (m4_now_ns() - t0) / 1e6, l.q.region_path);
    }
    r = m4_cmd(&l, FW_OP_PING, FW_MODE_POLL, 0, 0);
    if (!r)
        r = m4_result(&l, &res, 5000000000ll);
    check("boot handshake (ping)", r);
    printf("  firmware processes alive: %d\n", mdcom_sense_process(l.m, 0));

    if (!strcmp(what, "demo")) {
        uint32_t n = quick ? 1000 : 10000, fwbad = 0;
        check("echo, polling, seq+CRC",
              m4_echo(&l, n, FW_MODE_POLL, -1, NULL, &fwbad) | (int)fwbad);
        check("echo, doorbell, seq+CRC",
              m4_echo(&l, n / 10, FW_MODE_DOORBELL, -1, NULL, &fwbad) | (int)fwbad);
        check("block-ack 512..32768 B", m4_blockack(&l, 7, 32768, 32768, FW_MODE_POLL, NULL));
        check("SMEM lock, both sides increment", m4_smem(&l, n, FW_MODE_POLL));
        check("RPMsg echo (Linux host, M4 remote)", m4_rpmsg_echo(&l, 100, FW_MODE_POLL, 64, NULL));
        check("RPMsg block-ack 32768 B", m4_rpmsg_blockack(&l, 3, 32768, FW_MODE_POLL, NULL));
    } else {
        uint32_t n = quick ? 2000 : 20000, b;
        printf("round trips (Linux -> firmware echo -> Linux), 12-byte message:\n");
        rt(&l, "MDCOM FIFO, polling", n, FW_MODE_POLL, 0);
        rt(&l, "MDCOM FIFO, doorbell (UART IRQ+WFI)", n / 10, FW_MODE_DOORBELL, 0);
        {
            m4_times t = mk(n);
            r = m4_rpmsg_echo(&l, n, FW_MODE_POLL, 12, &t);
            if (r)
                check("rpmsg rt", r);
            else
                printf("  %-34s n=%-6u p50 %8.2f us  mean %8.2f us\n", "RPMsg, polling", n,
                       m4_times_pct(&t, 50) / 1e3, m4_times_mean(&t) / 1e3);
            free(t.v);
        }
        printf("block table (seeds 000/001: header + N bytes, answer = byte count), p50 per "
               "transaction, polling:\n");
        printf("  %8s %14s %14s %14s %10s\n", "bytes", "FIFO 32K blk", "FIFO 512 blk",
               "RPMsg 496 B", "MB/s FIFO");
        for (b = 512; b <= 32768; b *= 2) {
            uint32_t reps = quick ? 20 : 200;
            m4_times t1 = mk(reps), t2 = mk(reps);
            double rp;
            int r1 = m4_blockack(&l, reps, b, 32768, FW_MODE_POLL, &t1);
            int r2 = m4_blockack(&l, reps, b, 512, FW_MODE_POLL, &t2);
            rp = rp_block(&l, b, reps, FW_MODE_POLL);
            if (r1 || r2)
                check("block-ack", r1 ? r1 : r2);
            printf("  %8u %11.2f us %11.2f us %11.2f us %10.1f\n", b, m4_times_pct(&t1, 50) / 1e3,
                   m4_times_pct(&t2, 50) / 1e3, rp / 1e3, b / (m4_times_pct(&t1, 50) / 1e3));
            free(t1.v);
            free(t2.v);
        }
        printf("Linux -> firmware one-way (stream of messages, one ack at the end):\n");
        {
            static const uint32_t sizes[] = {64, 512, 4096, 32768};
            unsigned k;
            for (k = 0; k < 4; k++) {
                double ns = 0;
                uint32_t cnt = quick ? 1000 : 10000;
                r = m4_sink(&l, cnt, sizes[k], FW_MODE_POLL, &ns);
                if (r)
                    check("sink", r);
                else
                    printf("  %6u B: %8.3f us per message, %8.1f MB/s\n", sizes[k], ns / cnt / 1e3,
                           (double)cnt * sizes[k] / (ns / 1e3));
            }
        }
        printf("Thread-Metric loops on the M4 (QEMU TCG, not a real 80 MHz part), 1 s each:\n");
        if (!m4_cmd(&l, FW_OP_TM_MSG, FW_MODE_POLL, 0, 1000) && !m4_result(&l, &res, 5000000000ll))
            printf("  message processing (send+recv 16 B): %u per s\n", res.count);
        if (!m4_cmd(&l, FW_OP_TM_SYNC, FW_MODE_POLL, 0, 1000) && !m4_result(&l, &res, 5000000000ll))
            printf("  synchronization (trylock+unlock):     %u per s\n", res.count);
    }
    m4_link_stop(&l);
    printf("%s\n", g_fail ? "FAILED" : "all checks passed");
    return g_fail ? 1 : 0;
}
