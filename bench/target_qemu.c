/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_qemu.c - the firmware targets under QEMU (launcher and scenarios: harness/qemu-m4):
 *   --target qemu-m4 <latency|blocks|api|all>: Linux <-> the mdcom firmware on a
 *     Cortex-M4 (mps2-an386), the region in a file both sides map;
 *   --target qemu-an521: the two Cortex-M33 of mps2-an521, round trips under
 *     multi-threaded TCG and instructions per API call next to the M4's.
 * The link (QEMU, the doorbell, the firmware's commands) is tr_qemu.c's: its transports are
 * cells of the one transport interface (transport.h), their samples the driver's statistics and
 * their rows bench_row's (JSON and CSV alike). Method and equal work: docs/benchmarks.md,
 * "Linux <-> Cortex-M4 under QEMU".
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "bench.h"
#include "mdcom/mdcom.h"
#include "tr_qemu.h"

#ifndef MDCOM_BENCH_QEMU_M4
int bench_target_qemu_m4(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    bench_err("this mdcom-bench was built without the qemu-m4 target (it needs the Linux port "
              "and python3 >= 3.11 for harness/qemu-m4)");
    return BENCH_EXIT_SKIPPED;
}
#else /* MDCOM_BENCH_QEMU_M4 */

/* MDCOM_BENCH_M4_FW (the host build's fw-m4/), MDCOM_BENCH_M4_FW_PRESET (the
 * cortex-m4-qemu preset's image) and MDCOM_BENCH_FRT_APICOST / MDCOM_BENCH_TX_APICOST (the
 * host build's fw-freertos/ and fw-threadx/ API-cost images), MDCOM_BENCH_FRT_RESP /
 * MDCOM_BENCH_TX_RESP (their responder images) come from bench/CMakeLists.txt. */
#define QM_APICOST_NAME "mdcom-fw-apicost.elf"
#define QM_TARGET_INSTR 40.0   /* goal: <= 40 instructions per zero-copy API call */
#define QM_TARGET_COPY16 150.0 /* goal: send / recv of 16 bytes <= 150 instructions */
#define QM_MIX 4               /* slices per transport in the size tables */

typedef struct qm_ctx {
    /* options */
    const char *opt_fw, *opt_apicost, *opt_frt_apicost, *opt_tx_apicost, *opt_frt_resp,
        *opt_tx_resp, *json, *csv_path, *sub;
    int quick, doorbell, strict;
    uint64_t count; /* 0: default per scenario */
    /* state */
    char fw[BENCH_QEMU_PATH], fw_apicost[BENCH_QEMU_PATH];
    bench_json *j; /* NULL without --json (the bench_json_* calls do nothing) */
    FILE *csv;     /* NULL without --csv */
    char csv_scen[48];
    int mixed; /* 1 while the rows go to an array of several kinds (latency) */
    unsigned integrity, failures, missed;
    int broken;    /* a link error: the rest of this link's scenarios are skipped */
    bench_qemu *q; /* the link of the latency and block cells */
} qm_ctx;

static const bench_opt qm_tab[] = {
    BOPT(qm_ctx, sub, "blocks|latency|api|all", BO_ARG, 0, 0, NULL,
         "latency: round trips (12-byte message; MDCOM FIFO and RPMsg at\n"
         "equal work, polling and doorbell = UART interrupt + WFI on the M4;\n"
         "raw spin echo; MDCOM FIFO to the responder in a FreeRTOS task and a\n"
         "ThreadX thread, the doorbell waking the blocked task), Linux ->\n"
         "firmware one-way (time stamps on both sides,\n"
         "and round trip / 2; 16..496 B), one-way stream per message\n"
         "blocks: the block table of the published STM32MP1 figures,\n"
         "512..32768 B, block-ack transactions\n"
         "api: instructions per API call on the M4 (mdcom-fw-apicost.elf\n"
         "under -icount shift=0) next to the MDCOM paper's table 4; the same calls\n"
         "in a FreeRTOS task and a ThreadX thread (bare metal / FreeRTOS /\n"
         "ThreadX, one run each); code sizes, the ports' included"),
    BOPT(qm_ctx, opt_fw, "fw", BO_STR, 0, 0, "PATH",
         "firmware responder image (mdcom-fw-resp.elf); default $MDCOM_M4_FW,\n"
         "else the host build's fw-m4/ or the cortex-m4-qemu preset's"),
    BOPT(qm_ctx, opt_apicost, "fw-apicost", BO_STR, 0, 0, "PATH",
         "API-cost image (default: " QM_APICOST_NAME " next to --fw)"),
    BOPT(qm_ctx, opt_frt_apicost, "fw-freertos-apicost", BO_STR, 0, 0, "PATH",
         "FreeRTOS API-cost image (default: the host build's\n"
         "fw-freertos/.../mdcom-fw-freertos-apicost.elf; missing: n/a)"),
    BOPT(qm_ctx, opt_tx_apicost, "fw-threadx-apicost", BO_STR, 0, 0, "PATH",
         "ThreadX API-cost image (default: the host build's\n"
         "fw-threadx/.../mdcom-fw-threadx-apicost.elf; missing: n/a)"),
    BOPT(qm_ctx, opt_frt_resp, "fw-freertos-resp", BO_STR, 0, 0, "PATH",
         "latency: the responder in a FreeRTOS task (default: the host\n"
         "build's fw-freertos/.../mdcom-fw-freertos-resp.elf; missing: n/a)"),
    BOPT(qm_ctx, opt_tx_resp, "fw-threadx-resp", BO_STR, 0, 0, "PATH",
         "latency: the responder in a ThreadX thread (default: the host\n"
         "build's fw-threadx/.../mdcom-fw-threadx-resp.elf; missing: n/a)"),
    BOPT(qm_ctx, quick, "quick", BO_FLAG, 1, 0, NULL,
         "fewer repetitions (a smoke run, a few seconds)"),
    BOPT(qm_ctx, count, "count", BO_U64, 1, 1e7, "N",
         "round trips per latency row / transactions per block cell"),
    BOPT(qm_ctx, doorbell, "doorbell", BO_FLAG, 1, 0, NULL,
         "blocks: doorbell mode instead of polling"),
    BOPT(qm_ctx, strict, "strict", BO_FLAG, 1, 0, NULL,
         "api: exit 3 when a call's mean is above 40 instructions (send/recv of 16 B: 150)"),
    BOPT(qm_ctx, json, "json", BO_STR, 0, 0, "FILE",
         "also write the results as JSON ('-' = stdout, text to stderr)"),
    BOPT(qm_ctx, csv_path, "csv", BO_STR, 0, 0, "FILE",
         "also write the result rows as CSV (the columns of every\n"
         "scenario; scenario = \"qemu-m4 <kind>\"; '-' = stdout,\n"
         "text to stderr)"),
    {0},
};

static const bench_cmd qm_cmd = {
    .name = "--target qemu-m4 <blocks|latency|api|all>",
    .opts = qm_tab,
    .about = "Linux <-> Cortex-M4: the mdcom firmware runs under QEMU (mps2-an386) as the\n"
             "master; this process attaches as the remote domain \"linux\" of\n"
             "firmware/qemu-m4/qemu_m4.toml (launcher and scenarios: harness/qemu-m4).\n",
    .more = "QEMU: $MDCOM_QEMU or qemu-system-arm; files in $MDCOM_QEMU_SHM or /dev/shm.\n"
            "Build the firmware: scripts/deps.sh --cross && cmake --preset cortex-m4-qemu &&\n"
            "cmake --build --preset cortex-m4-qemu (or a host build with tests and\n"
            "arm-none-eabi-gcc: it cross-builds fw-m4/).\n"
            "Exit status: 0 ok, 1 integrity or API error, 2 usage, 3 target missed (--strict),\n"
            "77 skipped (qemu-system-arm or a firmware image missing).\n"
            "The M4 is emulated (TCG): times are this host's, instruction counts are exact.\n"};

/* --fw, $MDCOM_M4_FW, then the build locations. 0 or BENCH_EXIT_SKIPPED. */
static int qm_find_fw(qm_ctx *c)
{
    const char *env = getenv("MDCOM_M4_FW");
    const char *fw = c->opt_fw                                     ? c->opt_fw
                     : env && *env                                 ? env
                     : bench_qemu_exists(MDCOM_BENCH_M4_FW)        ? MDCOM_BENCH_M4_FW
                     : bench_qemu_exists(MDCOM_BENCH_M4_FW_PRESET) ? MDCOM_BENCH_M4_FW_PRESET
                                                                   : NULL;
    if (!fw) {
        bench_err("qemu-m4: no firmware image: give --fw PATH/mdcom-fw-resp.elf or $MDCOM_M4_FW; "
                  "looked in %s and %s. Build it with: scripts/deps.sh --cross && cmake --preset "
                  "cortex-m4-qemu && cmake --build --preset cortex-m4-qemu",
                  MDCOM_BENCH_M4_FW, MDCOM_BENCH_M4_FW_PRESET);
        return BENCH_EXIT_SKIPPED;
    }
    if (snprintf(c->fw, sizeof(c->fw), "%s", fw) >= (int)sizeof(c->fw)) {
        bench_err("qemu-m4: firmware path too long: %s", fw);
        return BENCH_EXIT_USAGE;
    }
    if (c->opt_apicost)
        snprintf(c->fw_apicost, sizeof(c->fw_apicost), "%s", c->opt_apicost);
    else
        bench_qemu_beside(c->fw_apicost, sizeof(c->fw_apicost), c->fw, QM_APICOST_NAME);
    return 0;
}

static int qm_need(const char *what, const char *path)
{
    if (bench_qemu_exists(path))
        return 0;
    bench_err("qemu-m4: %s %s: %s", what, path, strerror(errno ? errno : ENOENT));
    return BENCH_EXIT_SKIPPED;
}

/* r > 0: bad replies (integrity); r < 0: API / link error (the link is considered
 * broken: later scenarios on it are skipped). */
static int qm_check(qm_ctx *c, const char *what, int r)
{
    if (r > 0) {
        bench_err("qemu-m4: %s: %d bad replies", what, r);
        c->integrity += (unsigned)r;
    } else if (r < 0) {
        char w[96];
        snprintf(w, sizeof(w), "qemu-m4: %s", what);
        bench_err_mdcom(w, r);
        c->failures++;
        c->broken = 1;
    }
    return r;
}

static double qm_ratio(const bench_stats *a, const bench_stats *b)
{
    return (double)a->p50 / (double)(b->p50 ? b->p50 : 1);
}

/* " v" with prec decimals in a field of width w (suffix sfx inside it), or " na" when !ok */
static void qm_cell(int ok, int w, int prec, double v, const char *sfx, const char *na)
{
    if (ok)
        printf(" %*.*f%s", w - (int)strlen(sfx), prec, v, sfx);
    else
        printf(" %*s", w, na);
}

/* QEMU with fw up and this process attached, the boot handshake answered: 0, else the exit
 * status (BENCH_EXIT_SKIPPED when QEMU or the image is missing). */
static int qm_link_up(qm_ctx *c, bench_qemu **q, const char *fw)
{
    double t0 = (double)bench_now_ns();
    char err[640];
    int r = bench_qemu_up(q, fw, -1, err, sizeof(err));
    if (r) {
        bench_err("qemu-m4: %s", err);
        if (r == -ENOENT)
            return BENCH_EXIT_SKIPPED;
        c->failures++;
        return BENCH_EXIT_ERROR;
    }
    printf("QEMU mps2-an386 up, firmware %s READY and attached in %.1f ms (region %s)\n", fw,
           ((double)bench_now_ns() - t0) / 1e6, bench_qemu_region(*q));
    if (qm_check(c, "boot handshake (ping)", bench_qemu_ping(*q))) {
        bench_qemu_down(*q);
        *q = NULL;
        return BENCH_EXIT_ERROR;
    }
    return 0;
}

/* ---- cells of the link's transports --------------------------------------------------------- */

/* A cell: its key and its result (the driver's: statistics of the samples, ok, n/a). */
typedef struct qm_row {
    bench_link_cell k;
    bench_rt_result r;
} qm_row;

static qm_row qm_key(const bench_transport *t, uint32_t bytes, int doorbell)
{
    return (qm_row){.k = {.t = t, .bytes = bytes, .doorbell = doorbell}};
}

static const char *qm_mode(int doorbell) { return doorbell ? "doorbell" : "poll"; }

/* n operations of row, their samples appended to buf[*np...]. 0, or what qm_check counted
 * (-ENOENT: the OpenAMP firmware is missing, the cell says n/a). */
static int qm_go(qm_ctx *c, qm_row *row, uint32_t n, uint64_t *buf, size_t *np)
{
    const bench_transport *t = row->k.t;
    char what[80];
    int r;
    if (c->broken)
        return -ESHUTDOWN;
    if (t == &bench_qemu_fifo_blk32k || t == &bench_qemu_fifo_blk512 || t == &bench_qemu_rpmsg_blk)
        snprintf(what, sizeof(what), "block-ack %s, %u B", t->name, row->k.bytes);
    else
        snprintf(what, sizeof(what), "%s echo, %s, %u B", t->name, qm_mode(row->k.doorbell),
                 row->k.bytes);
    bench_progress("%s x %u", what, n);
    r = bench_link_run(c->q, &row->k, n, buf, np);
    bench_progress_end();
    if (t == &bench_qemu_openamp && r == -ENOENT) {
        row->r.na = 1;
        return r;
    }
    return qm_check(c, what, r);
}

/* n operations of each of rows[0..nr) (nr <= 3) in `mix` alternating slices of n / mix (the
 * first row rotating), so that a change of the host's load falls on all alike; sets r.ok and
 * r.st. */
static void qm_run(qm_ctx *c, qm_row *rows, unsigned nr, uint32_t n, unsigned mix)
{
    uint64_t *buf[3];
    size_t nb[3] = {0, 0, 0};
    unsigned t, sl;
    for (t = 0; t < nr; t++) {
        rows[t].r = (bench_rt_result){0};
        buf[t] = malloc((n ? n : 1) * sizeof(uint64_t));
        rows[t].r.ok = buf[t] != NULL;
    }
    for (sl = 0; sl < mix; sl++)
        for (t = 0; t < nr; t++) {
            unsigned u = (t + sl) % nr;
            if (rows[u].r.ok)
                rows[u].r.ok = qm_go(c, &rows[u], n / mix, buf[u], &nb[u]) == 0;
        }
    for (t = 0; t < nr; t++) {
        if (rows[t].r.ok)
            bench_stats_compute(buf[t], nb[t], &rows[t].r.st);
        free(buf[t]);
    }
}

/* The rows' writer (bench_row: a JSON object of the open array and CSV lines), the CSV key's
 * scenario "qemu-m4 <kind>", the JSON member "kind" in an array of several kinds (c->mixed);
 * doorbell < 0: no mode. */
static bench_row qm_row_begin(qm_ctx *c, const char *kind, const char *transport, int doorbell,
                              uint64_t bytes)
{
    snprintf(c->csv_scen, sizeof(c->csv_scen), "qemu-m4 %s", kind);
    bench_row w = {.j = c->j,
                   .csv = c->csv,
                   .k = {.scenario = c->csv_scen,
                         .transport = transport,
                         .mode = doorbell < 0 ? NULL : qm_mode(doorbell),
                         .size = bytes}};
    bench_json_obj_begin(w.j, NULL);
    if (c->mixed)
        bench_json_str(w.j, "kind", kind);
    return w;
}

/* A cell measured: kind, transport, mode, bytes, its statistics "round_trip" (ns); extra
 * members before the statistics (firmware: the RTOS responder's). */
static void qm_row_out(qm_ctx *c, const qm_row *row, const char *kind, const char *firmware)
{
    if (!row->r.ok)
        return;
    bench_row w = qm_row_begin(c, kind, row->k.t->name, row->k.doorbell, row->k.bytes);
    w.k.n = row->r.st.n;
    if (firmware)
        bench_json_str(w.j, "firmware", firmware);
    bench_json_str(w.j, "transport", row->k.t->name);
    bench_json_str(w.j, "mode", qm_mode(row->k.doorbell));
    bench_row_num(&w, "bytes", NULL, row->k.bytes, NULL);
    bench_row_stats(&w, "round_trip", &row->r.st);
    bench_json_obj_end(w.j);
}

/* ---- latency -------------------------------------------------------------------------------- */

/* One-way Linux -> firmware with time stamps on both sides: the firmware stamps each
 * message's arrival with its SysTick clock. Without -icount QEMU's virtual clock (SysTick's
 * source) is this host's CLOCK_MONOTONIC minus a constant, so the two sides read one clock up
 * to an offset theta, bounded from causality over all samples of the run; each one-way time
 * is tf - t0 - theta, +- the bound. Equal work, but the reply is the 16-byte stamp. */
static void qm_oneway(qm_ctx *c, uint32_t n)
{
    static const uint32_t sizes[] = {16, 64, 256, 496};
    /* MDCOM FIFO, RPMsg of each size, then the raw spin echo */
    enum { NS = sizeof(sizes) / sizeof(sizes[0]), NK = 2 * NS + 1 };
    const bench_transport *tr[NK];
    uint32_t bytes[NK];
    double p50[NK], back[NK], hw = 0;
    unsigned k, all = 0;
    int r = -ESHUTDOWN;
    for (k = 0; k < NK; k++) {
        tr[k] = k == 2 * NS ? &bench_qemu_raw : k % 2 ? &bench_qemu_rpmsg : &bench_qemu_fifo;
        bytes[k] = sizes[k / 2 % NS];
    }
    if (!c->broken) { /* -ERANGE: no error of the link, the clocks are not one */
        r = bench_qemu_stamped(c->q, NK, tr, bytes, n, p50, back, &hw, &all);
        if (r != -ERANGE)
            qm_check(c, "one-way with time stamps", r);
    }
    printf("\n== Linux -> firmware one-way, time stamps on both sides, polling (us, p50) ==\n");
    if (r || c->broken) {
        printf("  ERROR (%s)\n",
               r == -ERANGE ? "no common clock: the two sides' clocks disagree" : "see above");
        return;
    }
    printf("(one clock: QEMU's virtual clock = CLOCK_MONOTONIC - offset without -icount;\n"
           " offset bounded by causality over %u samples: each figure +- %.3f us)\n",
           all, hw);
    printf("%8s %12s %12s %12s %14s %12s\n", "bytes", "raw spin", "MDCOM FIFO", "RPMsg",
           "RPMsg / MDCOM", "MDCOM / raw");
    for (k = 0; k < NS; k++) {
        printf("%8u %12.3f %12.3f %12.3f %13.2fx %11.2fx\n", sizes[k], p50[2 * NS], p50[2 * k],
               p50[2 * k + 1], p50[2 * k + 1] / p50[2 * k], p50[2 * k] / p50[2 * NS]);
        bench_row w = qm_row_begin(c, "one_way_stamped", NULL, 0, sizes[k]);
        bench_row_num(&w, "bytes", NULL, sizes[k], NULL);
        w.k.transport = bench_qemu_raw.name;
        bench_row_num(&w, "raw_us", "one_way_p50", p50[2 * NS], "us");
        w.k.transport = bench_qemu_fifo.name;
        bench_row_num(&w, "mdcom_fifo_us", "one_way_p50", p50[2 * k], "us");
        w.k.transport = bench_qemu_rpmsg.name;
        bench_row_num(&w, "rpmsg_us", "one_way_p50", p50[2 * k + 1], "us");
        w.k.transport = NULL;
        bench_row_num(&w, "bound_us", "bound", hw, "us");
        bench_json_obj_end(w.j);
    }
    printf("the way back (firmware's work + its 16-byte stamp reply to Linux), p50 us:\n");
    for (k = 0; k < NS; k++)
        printf("%8u %12.3f %12.3f %12.3f\n", sizes[k], back[2 * NS], back[2 * k], back[2 * k + 1]);
}

/* OpenAMP's RPMsg as the firmware: mdcom-fw-openamp.elf beside the firmware (n/a without) */
static void qm_oa_begin(qm_ctx *c, int icount_shift)
{
    char path[BENCH_QEMU_PATH], why[BENCH_QEMU_PATH + 600];
    bench_qemu_beside(path, sizeof(path), c->fw, "mdcom-fw-openamp.elf");
    if (bench_qemu_oa_begin(c->q, path, icount_shift, why, sizeof(why)) != 0)
        printf("(OpenAMP RPMsg rows: n/a, %s)\n", why);
}

/* MDCOM FIFO, RPMsg and OpenAMP's RPMsg at 16..496 B in one mode, n round trips each, side
 * by side per size: p50 (polling: / 2, the one-way) and the ratios to MDCOM FIFO. */
static void qm_size_table(qm_ctx *c, int doorbell, uint32_t n, const char *kind)
{
    static const uint32_t sizes[] = {16, 64, 256, 496}; /* 496: RPMsg's largest payload */
    const bench_transport *const tr[3] = {&bench_qemu_fifo, &bench_qemu_rpmsg, &bench_qemu_openamp};
    double div = doorbell ? 1e3 : 2e3; /* us; polling: the one-way */
    qm_row rt[3];
    printf("%8s %12s %12s %14s %14s %16s\n", "bytes", "MDCOM FIFO", "RPMsg", "RPMsg / MDCOM",
           "OpenAMP RPMsg", "OpenAMP / MDCOM");
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        for (unsigned t = 0; t < 3; t++)
            rt[t] = qm_key(tr[t], sizes[k], doorbell);
        qm_run(c, rt, 3, n, QM_MIX);
        for (unsigned t = 0; t < 3; t++)
            qm_row_out(c, &rt[t], kind, NULL);
        if (!rt[0].r.ok || !rt[1].r.ok) {
            printf("%8u  ERROR (see above)\n", sizes[k]);
            continue;
        }
        printf("%8u %12.2f %12.2f %13.2fx", sizes[k], rt[0].r.st.p50 / div, rt[1].r.st.p50 / div,
               qm_ratio(&rt[1].r.st, &rt[0].r.st));
        qm_cell(rt[2].r.ok, 14, 2, rt[2].r.st.p50 / div, "", "n/a");
        if (rt[2].r.ok)
            printf(" %15.2fx", qm_ratio(&rt[2].r.st, &rt[0].r.st));
        printf("\n");
    }
}

/* The MDCOM FIFO echo of the round-trip table (12-byte message, polling and doorbell, n and nd
 * round trips in QM_MIX slices each) to the responder in an RTOS task: mdcom-fw-<kernel>-resp,
 * one QEMU of its own after the other, next to the bare-metal rows bm_poll and bm_db of this
 * run. In the doorbell rows the task blocks in the port's doorbell wait and the UART doorbell
 * interrupt wakes it. */
static void qm_rtos_latency(qm_ctx *c, const qm_row *bm_poll, const qm_row *bm_db, uint32_t n,
                            uint32_t nd)
{
    static const char *const kname[2] = {"FreeRTOS", "ThreadX"};
    static const char *const jname[2] = {"freertos", "threadx"};
    const char *img[2] = {c->opt_frt_resp ? c->opt_frt_resp : MDCOM_BENCH_FRT_RESP,
                          c->opt_tx_resp ? c->opt_tx_resp : MDCOM_BENCH_TX_RESP};
    qm_row rt[2][2];
    int up[2] = {0, 0};
    char why[2][BENCH_QEMU_PATH + 48];
    bench_qemu *main_q = c->q;
    for (int k = 0; k < 2; k++) {
        char err[640];
        int r, broken = c->broken;
        rt[k][0] = qm_key(&bench_qemu_fifo, 12, 0);
        rt[k][1] = qm_key(&bench_qemu_fifo, 12, 1);
        if (!bench_qemu_exists(img[k])) {
            snprintf(why[k], sizeof(why[k]), "n/a: no %s", img[k]);
            continue;
        }
        if ((r = bench_qemu_up(&c->q, img[k], -1, err, sizeof(err))) != 0) {
            bench_err("qemu-m4: %s: %s", img[k], err);
            snprintf(why[k], sizeof(why[k]), "ERROR (see above)");
            c->failures++;
            c->q = main_q;
            continue;
        }
        c->broken = 0; /* this link's own */
        if (qm_check(c, kname[k], bench_qemu_ping(c->q)) == 0) {
            qm_run(c, rt[k], 1, n, QM_MIX);
            qm_run(c, rt[k] + 1, 1, nd, QM_MIX);
            up[k] = 1;
        } else {
            snprintf(why[k], sizeof(why[k]), "ERROR (see above)");
        }
        bench_qemu_down(c->q);
        c->q = main_q;
        c->broken = broken;
    }
    printf("\n== round trip Linux -> RTOS task echo -> Linux, MDCOM FIFO, 12-byte message (us),\n"
           "   next to the bare-metal rows above ==\n");
    printf("%-11s %-9s %7s %9s %9s %9s %9s %9s %9s\n", "firmware", "mode", "n", "min", "p50",
           "mean", "p99", "sd", "p50 / bm");
    for (int k = -1; k < 2; k++) {
        for (int m = 0; m < 2; m++) {
            const qm_row *r = k < 0 ? (m ? bm_db : bm_poll) : &rt[k][m];
            const qm_row *b = m ? bm_db : bm_poll;
            const bench_stats *st = &r->r.st;
            const char *who = k < 0 ? "bare metal" : kname[k];
            if (k >= 0 && !up[k]) {
                printf("%-11s %-9s  %s\n", who, qm_mode(r->k.doorbell), why[k]);
                continue;
            }
            if (!r->r.ok) {
                printf("%-11s %-9s  ERROR (see above)\n", who, qm_mode(r->k.doorbell));
                continue;
            }
            printf("%-11s %-9s %7zu %9.2f %9.2f %9.2f %9.2f %9.2f", who, qm_mode(r->k.doorbell),
                   st->n, st->min / 1e3, st->p50 / 1e3, st->mean / 1e3, st->p99 / 1e3,
                   st->stddev / 1e3);
            if (k >= 0 && b->r.ok)
                printf(" %8.2fx", qm_ratio(st, &b->r.st));
            printf("\n");
            if (k >= 0)
                qm_row_out(c, r, "round_trip_rtos", jname[k]);
        }
    }
    printf("(mdcom-fw-<kernel>-resp: mdcom-fw-resp's responder in a task of its kernel, through\n"
           " its port; doorbell: the task blocked in the receive, woken by the UART doorbell\n"
           " interrupt through the port, 1 ms untimed before each request as above. Each\n"
           " image in a QEMU of its own, after the bare-metal rows, not interleaved with them)\n");
}

static void qm_latency(qm_ctx *c)
{
    static const uint32_t st_sizes[] = {64, 512, 4096, 32768};
    static const unsigned order[5] = {0, 3, 1, 4, 2}; /* the rows of rt as printed */
    uint32_t n = c->count ? (uint32_t)c->count : (c->quick ? 2000u : 20000u);
    uint32_t nd = n / 10 ? n / 10 : 1; /* doorbell: each round trip sleeps on both sides */
    uint32_t now = c->quick ? 500u : 5000u, nst = c->quick ? 1000u : 10000u;
    /* MDCOM FIFO, RPMsg and the raw spin echo polling, then MDCOM FIFO and RPMsg with the
     * doorbell. Each mode's rows alternate in slices (the first row measured right after boot
     * would also pay for the emulator's warm-up). */
    qm_row rt[5] = {qm_key(&bench_qemu_fifo, 12, 0), qm_key(&bench_qemu_rpmsg, 12, 0),
                    qm_key(&bench_qemu_raw, 4, 0), qm_key(&bench_qemu_fifo, 12, 1),
                    qm_key(&bench_qemu_rpmsg, 12, 1)};
    bench_json_arr_begin(c->j, "latency");
    c->mixed = 1;
    qm_run(c, rt, 3, n, QM_MIX);
    qm_run(c, rt + 3, 2, nd, QM_MIX);
    printf("\n== round trip Linux -> firmware echo -> Linux, 12-byte message (us) ==\n");
    printf("%-12s %-9s %7s %9s %9s %9s %9s %9s\n", "transport", "mode", "n", "min", "p50", "mean",
           "p99", "sd");
    for (unsigned k = 0; k < 5; k++) {
        const qm_row *r = &rt[order[k]];
        const bench_stats *s = &r->r.st;
        if (r->r.ok)
            printf("%-12s %-9s %7zu %9.2f %9.2f %9.2f %9.2f %9.2f\n", r->k.t->name,
                   qm_mode(r->k.doorbell), s->n, s->min / 1e3, s->p50 / 1e3, s->mean / 1e3,
                   s->p99 / 1e3, s->stddev / 1e3);
        else
            printf("%-12s %-9s  ERROR (see above)\n", r->k.t->name, qm_mode(r->k.doorbell));
        qm_row_out(c, r, "round_trip", NULL); /* when measured */
    }
    if (rt[0].r.ok && rt[3].r.ok)
        printf("doorbell / polling (MDCOM, p50): %.1fx\n", qm_ratio(&rt[3].r.st, &rt[0].r.st));
    if (rt[0].r.ok && rt[2].r.ok)
        printf("MDCOM FIFO / raw spin echo (polling, p50): %.2fx\n",
               qm_ratio(&rt[0].r.st, &rt[2].r.st));
    printf("(equal work: the firmware copies each message once into its reply and checks\n"
           " nothing on both transports; this side checks seq + CRC of every reply after\n"
           " taking its time. raw spin: one 4-byte word each way, no library)\n");
    qm_rtos_latency(c, &rt[0], &rt[3], n, nd);
    qm_oneway(c, now);

    printf("\n== Linux -> firmware one-way = round trip / 2, polling, equal work (us, p50) ==\n");
    qm_oa_begin(c, -1);
    qm_size_table(c, 0, now, "one_way_rt");
    printf("(MDCOM paper, i.MX7 Linux -> RTOS: MDCOM about 3.6x faster than RPMsg; here the M4\n"
           " side is emulated by QEMU on this host and the path is assumed symmetric)\n");
    printf("\n== round trip with the doorbell (UART IRQ + WFI on the M4, Linux asleep in the\n"
           "   UART socket), equal work (us, p50) ==\n");
    qm_size_table(c, 1, nd, "round_trip_doorbell");
    printf("(OpenAMP RPMsg: mdcom-fw-openamp.elf, OpenAMP's own RPMsg remote built from\n"
           " ../shared/third_party, in its own QEMU with the same doorbell, idle in WFI while\n"
           " the other rows run; this side mdcom's RPMsg host. Same messages, one copy)\n");
    bench_qemu_oa_end(c->q);

    printf("\n== Linux -> firmware one-way stream (n messages, one ack at the end), polling ==\n");
    printf("%8s %7s %14s %10s\n", "bytes", "n", "us/message", "MB/s");
    for (unsigned k = 0; k < sizeof(st_sizes) / sizeof(st_sizes[0]) && !c->broken; k++) {
        double ns = 0;
        char what[48];
        snprintf(what, sizeof(what), "sink stream, %u B", st_sizes[k]);
        if (qm_check(c, what, bench_qemu_sink(c->q, nst, st_sizes[k], &ns))) {
            printf("%8u  ERROR (see above)\n", st_sizes[k]);
            continue;
        }
        printf("%8u %7u %14.3f %10.1f\n", st_sizes[k], nst, ns / nst / 1e3,
               (double)nst * st_sizes[k] / (ns / 1e3));
        bench_row w = qm_row_begin(c, "stream", bench_qemu_fifo.name, 0, st_sizes[k]);
        w.k.n = nst;
        bench_json_str(w.j, "transport", bench_qemu_fifo.name);
        bench_json_str(w.j, "mode", "poll");
        bench_row_num(&w, "bytes", NULL, st_sizes[k], NULL);
        bench_row_num(&w, "n", NULL, nst, NULL);
        bench_row_num(&w, "ns_per_message", "ns_per_message", ns / nst, "ns");
        bench_json_obj_end(w.j);
    }
    c->mixed = 0;
    bench_json_arr_end(c->j);
}

/* ---- blocks --------------------------------------------------------------------------------- */

static void qm_blocks(qm_ctx *c)
{
    static const char *const jcol[3] = {"mdcom_fifo_32k", "mdcom_fifo_512", "rpmsg_496"};
    const bench_transport *const tr[3] = {&bench_qemu_fifo_blk32k, &bench_qemu_fifo_blk512,
                                          &bench_qemu_rpmsg_blk};
    uint32_t reps = c->count ? (uint32_t)c->count : (c->quick ? 20u : 200u);
    bench_json_arr_begin(c->j, "blocks");
    printf("\n== block table (STM32MP1 /dev/ttyRPMSG0 and netlink module, published): 8-byte "
           "header + N bytes, answered with the byte count; %s, %u transactions per cell ==\n",
           c->doorbell ? "doorbell" : "polling", reps);
    printf("time per transaction p50 (us) and KiB/s at p50:\n");
    printf("%8s %16s %16s %16s %11s %11s %8s\n", "bytes", tr[0]->name, tr[1]->name, tr[2]->name,
           "KiB/s 32K", "KiB/s RPMsg", "RPMsg/32K");
    for (uint32_t b = 512; b <= 32768; b *= 2) {
        qm_row rt[3];
        int k;
        for (k = 0; k < 3; k++) {
            rt[k] = qm_key(tr[k], b, c->doorbell);
            qm_run(c, &rt[k], 1, reps, 1);
        }
        printf("%8u", b);
        for (k = 0; k < 3; k++)
            qm_cell(rt[k].r.ok, 16, 2, rt[k].r.st.p50 / 1e3, "", "ERROR");
        for (k = 0; k < 3; k += 2)
            qm_cell(rt[k].r.ok, 11, 0, b / 1024.0 / (rt[k].r.st.p50 / 1e9), "", "-");
        qm_cell(rt[0].r.ok && rt[2].r.ok, 8, 2, qm_ratio(&rt[2].r.st, &rt[0].r.st), "x", "-");
        printf("\n");
        bench_row w = qm_row_begin(c, "blocks", NULL, c->doorbell, b);
        bench_json_u64(w.j, "bytes", b);
        bench_json_str(w.j, "mode", qm_mode(c->doorbell));
        for (k = 0; k < 3; k++)
            if (rt[k].r.ok) {
                w.k.transport = tr[k]->name;
                w.k.n = rt[k].r.st.n;
                bench_row_stats(&w, jcol[k], &rt[k].r.st);
            }
        bench_json_obj_end(w.j);
    }
    printf("(equal work: on both transports the firmware parses the header, counts the bytes\n"
           " without copying them and answers the 4-byte count)\n");
    printf("(published, STM32MP1 Linux -> M4 over OpenAMP: see `mdcom-bench blocks`, "
           "STM32MP1 /dev/ttyRPMSG0 and netlink module)\n");
    bench_json_arr_end(c->j);
}

/* ---- api ------------------------------------------------------------------------------------ */

static void qm_sizes(qm_ctx *c)
{
    /* targets (text bytes, 0 none): the core within 10 % of its size before crash recovery
     * (14,732 B), the remote-only profile (what a firmware that is not the master links) within
     * 6 KiB. The firmware build takes its layout computed on the build host
     * (MDCOM_RUNTIME_LAYOUT=OFF); the run-time layout code is the next row. */
    static const struct {
        const char *what, *rel;
        unsigned long target;
    } items[] = {{"core (libmdcom_core.a)", "libmdcom_core.a", 16205},
                 {"core, remote-only profile", "libmdcom_core_remote.a", 6144},
                 {"run-time layout (layout.c; not linked)", "libmdcom_core_layout.a", 0},
                 {"RPMsg transport (libmdcom_rpmsg.a)", "libmdcom_rpmsg.a", 0},
                 {"mdcom-fw-resp.elf", "firmware/qemu-m4/mdcom-fw-resp.elf", 0},
                 {"mdcom-fw-apicost.elf", "firmware/qemu-m4/mdcom-fw-apicost.elf", 0}};
    char path[BENCH_QEMU_PATH + 32], cmd[BENCH_QEMU_PATH + 96], line[512];
    size_t len = strlen(c->fw);
    int up = 0;
    /* <fwbuild>/firmware/qemu-m4/mdcom-fw-resp.elf -> <fwbuild>/libmdcom_core.a */
    while (len > 0 && up < 3)
        up += c->fw[--len] == '/';
    if (up < 3 || !len) {
        printf("\n== arm-none-eabi-size (firmware build not found, -Os) ==\n");
        return;
    }
    printf("\n== arm-none-eabi-size (%.*s, -Os) ==\n", (int)len, c->fw);
    printf("%-36s %8s %8s %8s\n", "", "text", "data", "bss");
    bench_json_arr_begin(c->j, "sizes");
    for (unsigned k = 0; k < sizeof(items) / sizeof(items[0]); k++) {
        unsigned long t, d, b;
        int ok = 0;
        FILE *p = NULL;
        snprintf(path, sizeof(path), "%.*s/%s", (int)len, c->fw, items[k].rel);
        snprintf(cmd, sizeof(cmd), "arm-none-eabi-size -t '%s' 2>/dev/null", path);
        if (bench_qemu_exists(path) && !strchr(path, '\'') && (p = popen(cmd, "r")) != NULL) {
            while (fgets(line, sizeof(line), p)) /* the last numeric line: the totals */
                ok |= sscanf(line, "%lu %lu %lu", &t, &d, &b) == 3;
            pclose(p);
        }
        if (!ok) {
            printf("%-36s %8s\n", items[k].what, "n/a");
            continue;
        }
        printf("%-36s %8lu %8lu %8lu", items[k].what, t, d, b);
        if (items[k].target)
            printf("  (target <= %lu text: %s)", items[k].target,
                   t <= items[k].target ? "met" : "MISSED");
        printf("\n");
        if (items[k].target && t > items[k].target && c->strict)
            c->missed++;
        bench_row w = qm_row_begin(c, "sizes", items[k].rel, -1, 0);
        bench_json_str(w.j, "item", items[k].rel);
        bench_row_num(&w, "text", "text", (double)t, "B");
        bench_row_num(&w, "data", "data", (double)d, "B");
        bench_row_num(&w, "bss", "bss", (double)b, "B");
        bench_json_obj_end(w.j);
    }
    bench_json_arr_end(c->j);
}

/* Instructions of the firmware's work per echoed message (FW_ARG_COST under -icount shift=0:
 * from the receive call that returned the message to its reply published), MDCOM FIFO and
 * RPMsg, the same work (one copy, no check). A QEMU instance of its own (-icount). */
static void qm_echo_cost(qm_ctx *c)
{
    static const uint32_t sizes[] = {16, 496};
    uint32_t n = c->quick ? 200u : 2000u;
    bench_qemu *main_q = c->q;
    char err[640];
    if (bench_qemu_up(&c->q, c->fw, 0, err, sizeof(err)) != 0) {
        bench_err("qemu-m4: echo cost: %s", err);
        c->failures++;
        c->q = main_q;
        return;
    }
    printf("\n== firmware instructions per echoed message (-icount shift=0; receive call that\n"
           "   returned it .. reply published; one copy, no check on both transports) ==\n");
    qm_oa_begin(c, 0);
    printf("%8s %12s %12s %14s %14s %16s\n", "bytes", "MDCOM FIFO", "RPMsg", "RPMsg / MDCOM",
           "OpenAMP RPMsg", "OpenAMP / MDCOM");
    bench_json_arr_begin(c->j, "echo_cost");
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        double f = -1, rp = -1, oa = -1;
        int r;
        if (qm_check(c, "echo cost, MDCOM FIFO",
                     bench_qemu_cost(c->q, &bench_qemu_fifo, n, sizes[k], &f)))
            f = -1;
        if (qm_check(c, "echo cost, RPMsg",
                     bench_qemu_cost(c->q, &bench_qemu_rpmsg, n, sizes[k], &rp)))
            rp = -1;
        r = bench_qemu_cost(c->q, &bench_qemu_openamp, n, sizes[k], &oa);
        if (r != -ENOENT && qm_check(c, "echo cost, OpenAMP", r))
            oa = -1;
        printf("%8u %12.0f %12.0f %13.2fx %14.0f %15.2fx\n", sizes[k], f, rp, f > 0 ? rp / f : 0,
               oa, f > 0 && oa > 0 ? oa / f : 0);
        bench_row w = qm_row_begin(c, "echo_cost", NULL, 0, sizes[k]);
        bench_json_str(w.j, "call", "echo_per_message");
        bench_row_num(&w, "bytes", NULL, sizes[k], NULL);
        w.k.transport = bench_qemu_fifo.name;
        bench_row_num(&w, "mdcom_fifo_instr", "instructions", f, "instr");
        w.k.transport = bench_qemu_rpmsg.name;
        bench_row_num(&w, "rpmsg_instr", "instructions", rp, "instr");
        w.k.transport = bench_qemu_openamp.name;
        bench_row_num(&w, "openamp_instr", "instructions", oa, "instr");
        bench_json_obj_end(w.j);
    }
    bench_json_arr_end(c->j);
    printf("(OpenAMP RPMsg: mdcom-fw-openamp.elf under -icount shift=0, its poll call that\n"
           " echoed the message, as the RPMsg column's span)\n");
    bench_qemu_down(c->q); /* and its OpenAMP instance */
    c->q = main_q;
}


/* ---- api over the RTOS ports ---------------------------------------------------------------- */

#define QM_NPORT 3 /* bare metal, FreeRTOS, ThreadX */
static const char *const qm_port_name[QM_NPORT] = {"bare metal", "FreeRTOS", "ThreadX"};
static const char *const qm_port_key[QM_NPORT] = {"baremetal", "freertos", "threadx"};

/* The API-cost image of port k (0: the bare-metal one of this run). */
static const char *qm_port_apicost(const qm_ctx *c, int k)
{
    if (k == 1)
        return c->opt_frt_apicost ? c->opt_frt_apicost : MDCOM_BENCH_FRT_APICOST;
    if (k == 2)
        return c->opt_tx_apicost ? c->opt_tx_apicost : MDCOM_BENCH_TX_APICOST;
    return c->fw_apicost;
}

/* The firmware build tree of an image <tree>/firmware/<dir>/<image>.elf: its length in
 * path, 0 when path is not that deep. */
static size_t qm_fw_tree(const char *path)
{
    size_t len = strlen(path);
    int up = 0;
    while (len > 0 && up < 3)
        up += path[--len] == '/';
    return up == 3 ? len : 0;
}

/* arm-none-eabi-size -t of the files rel[0..n) under tree (length tlen): the total text bytes
 * in *text; 0, or -1 when a file is missing or the tool failed. */
static int qm_text_total(const char *tree, size_t tlen, const char *const *rel, int n,
                         unsigned long *text)
{
    char cmd[8 * (BENCH_QEMU_PATH + 64)], line[512];
    size_t at = (size_t)snprintf(cmd, sizeof(cmd), "arm-none-eabi-size -t");
    unsigned long t, d, b;
    int ok = 0;
    FILE *p;
    for (int i = 0; i < n; i++) {
        char path[BENCH_QEMU_PATH + 96];
        snprintf(path, sizeof(path), "%.*s/%s", (int)tlen, tree, rel[i]);
        if (!bench_qemu_exists(path) || strchr(path, '\'') || at + strlen(path) + 4 >= sizeof(cmd))
            return -1;
        at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, " '%s'", path);
    }
    snprintf(cmd + at, sizeof(cmd) - at, " 2>/dev/null");
    if ((p = popen(cmd, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof(line), p)) /* the last numeric line: the totals */
        if (sscanf(line, "%lu %lu %lu", &t, &d, &b) == 3) {
            *text = t;
            ok = 1;
        }
    pclose(p);
    return ok ? 0 : -1;
}

/* Text bytes of each port's code in its firmware build tree (the tree of its API-cost image):
 * the port's own source, the port library's objects, the runtime, the kernel, the image. */
static void qm_port_sizes(qm_ctx *c)
{
    static const char *const port_src[QM_NPORT] = {
        "CMakeFiles/mdcom_port_obj.dir/ports/baremetal/port_baremetal.c.obj",
        "CMakeFiles/mdcom_port_obj.dir/ports/freertos/port_freertos.c.obj",
        "CMakeFiles/mdcom_port_obj.dir/ports/threadx/port_threadx.c.obj"};
    static const char *const kernel[QM_NPORT] = {NULL, "freertos_kernel/libfreertos_kernel.a",
                                                 "threadx/libthreadx.a"};
    enum { ROWS = 5 };
    static const char *const what[ROWS] = {
        "port_<port>.c.obj (the port's source)", "port library (+ board_hooks.c, port_default.c)",
        "runtime (libmdcom_bm_runtime.a)", "kernel library", "API-cost image (.elf)"};
    /* the rows in CSV (a field without commas) */
    static const char *const csv_what[ROWS] = {"port source", "port library", "runtime",
                                               "kernel library", "API-cost image"};
    unsigned long t[ROWS][QM_NPORT];
    int ok[ROWS][QM_NPORT];
    memset(ok, 0, sizeof(ok));
    for (int k = 0; k < QM_NPORT; k++) {
        const char *img = qm_port_apicost(c, k);
        size_t tl = qm_fw_tree(img);
        const char *lib[3] = {port_src[k],
                              "CMakeFiles/mdcom_port_obj.dir/ports/baremetal/board_hooks.c.obj",
                              "CMakeFiles/mdcom_port_obj.dir/port_default.c.obj"};
        const char *rt = "libmdcom_bm_runtime.a", *elf = img + (tl ? tl + 1 : 0);
        if (!tl || !bench_qemu_exists(img))
            continue;
        ok[0][k] = qm_text_total(img, tl, lib, 1, &t[0][k]) == 0;
        ok[1][k] = qm_text_total(img, tl, lib, 3, &t[1][k]) == 0;
        ok[2][k] = qm_text_total(img, tl, &rt, 1, &t[2][k]) == 0;
        ok[3][k] = kernel[k] && qm_text_total(img, tl, &kernel[k], 1, &t[3][k]) == 0;
        ok[4][k] = qm_text_total(img, tl, &elf, 1, &t[4][k]) == 0;
    }
    printf("\n== code size of each port (arm-none-eabi-size, text bytes, -Os; the firmware build\n"
           "   tree of each API-cost image) ==\n");
    printf("%-48s %11s %11s %11s\n", "", qm_port_name[0], qm_port_name[1], qm_port_name[2]);
    bench_json_arr_begin(c->j, "port_sizes");
    for (int r = 0; r < ROWS; r++) {
        printf("%-48s", what[r]);
        for (int k = 0; k < QM_NPORT; k++) {
            if (ok[r][k])
                printf(" %11lu", t[r][k]);
            else
                printf(" %11s", r == 3 && k == 0 ? "-" : "n/a");
        }
        printf("\n");
        bench_row w = qm_row_begin(c, "port_sizes", NULL, -1, 0);
        bench_json_str(w.j, "item", what[r]);
        for (int k = 0; k < QM_NPORT; k++)
            if (ok[r][k]) {
                char metric[64];
                snprintf(metric, sizeof(metric), "%s text", qm_port_key[k]);
                w.k.transport = csv_what[r];
                bench_row_num(&w, qm_port_key[k], metric, (double)t[r][k], "B");
            }
        bench_json_obj_end(w.j);
    }
    bench_json_arr_end(c->j);
    printf("(the port library is what each build links as its port: the port's source, the\n"
           " board hooks of ports/baremetal and the default-platform stub; the runtime is\n"
           " ports/baremetal's startup, board and Cortex-M code with the port's clock and\n"
           " doorbell glue: bm_runtime.c, tx_runtime.c)\n");
}

/* The rows of the bare-metal run (bm, nbm) next to the same calls in a FreeRTOS task and a
 * ThreadX thread: each RTOS image in a QEMU of its own under -icount shift=0, in this run. */
static void qm_api_ports(qm_ctx *c, const bench_qemu_api_row *bm, int nbm)
{
    static bench_qemu_api_row rows[QM_NPORT][BENCH_QEMU_API_MAX];
    char banner[QM_NPORT][160];
    int n[QM_NPORT] = {nbm, 0, 0};
    memcpy(rows[0], bm, (size_t)nbm * sizeof(*bm));
    for (int k = 1; k < QM_NPORT; k++) {
        const char *img = qm_port_apicost(c, k);
        char *log = NULL;
        int st;
        banner[k][0] = 0;
        if (!bench_qemu_exists(img)) {
            snprintf(banner[k], sizeof(banner[k]), "%s: n/a, no %s", qm_port_name[k], img);
            continue;
        }
        bench_progress("api: %s under -icount shift=0", img);
        n[k] = bench_qemu_apicost(NULL, NULL, img, 120, rows[k], &log, &st);
        bench_progress_end();
        if (n[k] <= 0) {
            bench_err("qemu-m4: api: %s: exit status %d, no measurements; console:\n%s", img, st,
                      log ? log : "");
            snprintf(banner[k], sizeof(banner[k]), "%s: ERROR (see above)", qm_port_name[k]);
            c->failures++;
            n[k] = 0;
        } else if (log && strchr(log, '\n')) {
            snprintf(banner[k], sizeof(banner[k]), "%.*s", (int)(strchr(log, '\n') - log), log);
        }
        free(log);
    }
    printf("\n== instructions per API call on each port: bare metal / FreeRTOS task / ThreadX\n"
           "   thread (mode of 13 cycles of 40 samples, -icount shift=0, the same harness and\n"
           "   counter, interrupts masked in a sample; this run) ==\n");
    for (int k = 1; k < QM_NPORT; k++)
        printf("%s\n", banner[k]);
    printf("%-14s %11s %11s %11s %13s %13s\n", "call", qm_port_name[0], qm_port_name[1],
           qm_port_name[2], "FreeRTOS - bm", "ThreadX - bm");
    bench_json_arr_begin(c->j, "api_ports");
    for (int i = 0; i < nbm; i++) {
        const bench_qemu_api_row *r[QM_NPORT] = {&rows[0][i], NULL, NULL};
        if (strncmp(bm[i].call, "floor_", 6) == 0) /* not mdcom: measured on bare metal only */
            continue;
        for (int k = 1; k < QM_NPORT; k++)
            for (int j = 0; j < n[k]; j++)
                if (!strcmp(rows[k][j].call, bm[i].call))
                    r[k] = &rows[k][j];
        printf("%-14s", bm[i].call);
        for (int k = 0; k < QM_NPORT; k++)
            qm_cell(r[k] != NULL, 11, 0, r[k] ? r[k]->mode : 0, "", "n/a");
        for (int k = 1; k < QM_NPORT; k++) {
            char d[16] = "-";
            if (r[k])
                snprintf(d, sizeof(d), "%+ld", (long)r[k]->mode - (long)r[0]->mode);
            printf(" %13s", d);
        }
        printf("\n");
        bench_row w = qm_row_begin(c, "api_ports", bm[i].call, -1, 0);
        bench_json_str(w.j, "call", bm[i].call);
        for (int k = 0; k < QM_NPORT; k++) {
            char key[32], metric[32];
            if (!r[k])
                continue;
            snprintf(key, sizeof(key), "%s_mode_instr", qm_port_key[k]);
            snprintf(metric, sizeof(metric), "%s mode", qm_port_key[k]);
            bench_row_num(&w, key, metric, r[k]->mode, "instr");
            snprintf(key, sizeof(key), "%s_mean_instr", qm_port_key[k]);
            snprintf(metric, sizeof(metric), "%s mean", qm_port_key[k]);
            bench_row_num(&w, key, metric, r[k]->mean, "instr");
            snprintf(key, sizeof(key), "%s_stddev_instr", qm_port_key[k]);
            snprintf(metric, sizeof(metric), "%s stddev", qm_port_key[k]);
            bench_row_num(&w, key, metric, r[k]->sd, "instr");
        }
        bench_json_obj_end(w.j);
    }
    bench_json_arr_end(c->j);
    printf("(port_ring: the platform's doorbell ring, what notify calls when a peer sleeps on the\n"
           " channel, an uncontended notify rings nothing; an RTOS port also wakes its local\n"
           " waiters, none here. port_now_ns: the platform's clock. The RTOS images: one task at\n"
           " a high priority, the scheduler and the 1 kHz tick running; the tick pended during a\n"
           " sample is taken after it)\n");
}

static int qm_api(qm_ctx *c)
{
    bench_qemu_api_row rows[BENCH_QEMU_API_MAX];
    int n, status;
    double t0 = (double)bench_now_ns();
    bench_progress("api: %s under -icount shift=0", c->fw_apicost);
    char *log;
    n = bench_qemu_apicost(NULL, NULL, c->fw_apicost, 120, rows, &log, &status);
    bench_progress_end();
    if (n <= 0) {
        bench_err("qemu-m4: api: exit status %d, no measurements; console:\n%s", status,
                  log ? log : "");
        free(log);
        c->failures++;
        return BENCH_EXIT_ERROR;
    }
    printf("\n== instructions per API call on the Cortex-M4 (%s, %.1f s) ==\n", c->fw_apicost,
           ((double)bench_now_ns() - t0) / 1e9);
    if (strncmp(log, "mdcom-fw-apicost", 16) == 0 && strchr(log, '\n'))
        printf("%.*s\n", (int)(strchr(log, '\n') - log), log);
    free(log);
    printf("one call per sample, %u samples, measurement overhead subtracted; uncontended, "
           "from the master (M4) side\n",
           rows[0].n);
    printf("%-14s %6s %8s %7s %6s %6s %6s   %-22s %s\n", "call", "mode", "mean", "sd", "min", "max",
           "floor", "paper ns mode/mean/sd", "target");
    bench_json_arr_begin(c->j, "api");
    int floors = 0;
    for (int i = 0; i < n; i++) {
        const bench_qemu_api_row *a = &rows[i], *f = NULL;
        if (strncmp(a->call, "floor_", 6) == 0) { /* the floor's rows: a column of their own */
            floors++;
            continue;
        }
        for (int k = 0; k < n; k++)
            if (strncmp(rows[k].call, "floor_", 6) == 0 && !strcmp(rows[k].call + 6, a->call))
                f = &rows[k];
        const bench_api_paper *pp = bench_api_paper_of(a->call);
        /* send16/recv16 copy 16 bytes and call several of the others */
        int copy16 = !strcmp(a->call, "send16") || !strcmp(a->call, "recv16");
        double limit = copy16 ? QM_TARGET_COPY16 : QM_TARGET_INSTR;
        char paper[32] = "-", tg[24] = "", fl[12] = "-";
        if (f)
            snprintf(fl, sizeof(fl), "%u", f->mode);
        if (pp)
            snprintf(paper, sizeof(paper), "%.0f/%.0f/%.0f", pp->mode, pp->mean, pp->sd);
        if (strcmp(a->call, "empty") != 0) {
            snprintf(tg, sizeof(tg), "<=%.0f %s", limit, a->mean <= limit ? "met" : "MISSED");
            if (a->mean > limit && c->strict)
                c->missed++;
        }
        printf("%-14s %6u %8.1f %7.1f %6u %6u %6s   %-22s %s\n", a->call, a->mode, a->mean, a->sd,
               a->min, a->max, fl, paper, tg);
        bench_row w = qm_row_begin(c, "api", a->call, -1, 0);
        w.k.n = a->n;
        bench_json_str(w.j, "call", a->call);
        bench_row_num(&w, "mode_instr", "mode", a->mode, "instr");
        bench_row_num(&w, "mean_instr", "mean", a->mean, "instr");
        bench_row_num(&w, "stddev_instr", "stddev", a->sd, "instr");
        bench_row_num(&w, "min_instr", "min", a->min, "instr");
        bench_row_num(&w, "max_instr", "max", a->max, "instr");
        bench_row_num(&w, "n", NULL, a->n, NULL);
        if (f)
            bench_row_num(&w, "floor_instructions", "floor", f->mode, "instr");
        bench_json_obj_end(w.j);
    }
    bench_json_arr_end(c->j);
    printf("(\"empty\" = the two counter reads, already subtracted; the paper's column is ns on\n"
           " an i.MX7 M4 under an RTOS, mdcom's is instructions: compare shapes, not units)\n");
    if (floors)
        printf("(floor: the mode of a minimal single-producer/single-consumer pool + ring with\n"
               " the same checks and no recovery, firmware/qemu-m4/lean_floor.c, same harness)\n");
    qm_api_ports(c, rows, n);
    qm_sizes(c);
    qm_port_sizes(c);
    qm_echo_cost(c);
    return 0;
}

/* ---- entry ---------------------------------------------------------------------------------- */

int bench_target_qemu_m4(int argc, char **argv)
{
    static qm_ctx c; /* paths: keep them off the stack */
    bench_json j;
    FILE *jf = NULL;
    int rc;
    memset(&c, 0, sizeof(c));
    int prc = bench_parsed(bench_opts_parse("qemu-m4", qm_tab, &c, argc, argv), &qm_cmd);
    if (prc >= 0)
        return prc;
    const char *sub = c.sub ? c.sub : "";
    int do_lat = !strcmp(sub, "latency") || !strcmp(sub, "all");
    int do_blk = !strcmp(sub, "blocks") || !strcmp(sub, "all");
    int do_api = !strcmp(sub, "api") || !strcmp(sub, "all");
    if (!do_lat && !do_blk && !do_api) {
        bench_err("qemu-m4: which measurement? '%s' (blocks, latency, api, all)", sub);
        return BENCH_EXIT_USAGE;
    }
    if ((rc = qm_find_fw(&c)) != 0)
        return rc;
    if (!bench_qemu_available()) {
        bench_err("qemu-m4: qemu-system-arm not found (install it: scripts/deps.sh --cross; or "
                  "set $MDCOM_QEMU)");
        return BENCH_EXIT_SKIPPED;
    }
    if ((do_lat || do_blk) && (rc = qm_need("firmware image", c.fw)) != 0)
        return rc;
    if (do_api && (rc = qm_need("API-cost firmware image", c.fw_apicost)) != 0)
        return rc;
    /* '-': the JSON or the CSV on stdout, and the text then on stderr (as in every scenario) */
    int json_out = c.json && !strcmp(c.json, "-"), csv_out = c.csv_path && !strcmp(c.csv_path, "-");
    FILE *data = NULL;
    if (json_out && csv_out) {
        bench_err("qemu-m4: --json - and --csv -: only one of them on stdout");
        return BENCH_EXIT_USAGE;
    }
    if (json_out || csv_out) {
        int fd = dup(1);
        fflush(stdout);
        if (fd < 0 || !(data = fdopen(fd, "w")) || dup2(2, 1) < 0) {
            bench_err("qemu-m4: stdout: %s", strerror(errno));
            return BENCH_EXIT_USAGE;
        }
    }
    /* the header, the host and the end line of every scenario; the JSON and CSV here are
     * written as the measurements go (QEMU runs for minutes: a crash keeps what was measured) */
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "--target qemu-m4 %s", sub);
    bench_run rn = {.cmd = cmd, .quick = c.quick, .no_pin = 1};
    if ((rc = bench_run_begin(&rn)) != 0)
        return rc;
    if (c.json) {
        if (!(jf = json_out ? data : bench_open_out(c.json, "qemu-m4")))
            return BENCH_EXIT_USAGE;
        bench_json_init(&j, jf);
        c.j = &j;
        bench_json_obj_begin(c.j, NULL);
        bench_json_str(c.j, "benchmark", "qemu-m4");
        bench_host_json(c.j, "host", &rn.h);
        bench_json_str(c.j, "subcommand", sub);
        bench_json_bool(c.j, "quick", c.quick);
        bench_json_str(c.j, "firmware", c.fw);
    }
    if (c.csv_path) {
        if (!(c.csv = csv_out ? data : bench_open_out(c.csv_path, "qemu-m4"))) {
            bench_close_out(jf, c.json, &c.failures);
            return BENCH_EXIT_USAGE;
        }
        bench_csv_header(c.csv);
    }
    /* QEMU is stopped and its files removed on SIGINT/SIGTERM/SIGHUP/SIGQUIT and exit() */
    bench_qemu_cleanup_on_signals();
    printf("M4 side: QEMU mps2-an386 (Cortex-M4, TCG emulation on this host); Linux side: this "
           "process\n");
    if ((do_lat || do_blk) && (rc = qm_link_up(&c, &c.q, c.fw)) == 0) {
        if (do_lat)
            qm_latency(&c);
        if (do_blk)
            qm_blocks(&c);
        bench_qemu_down(c.q);
        c.q = NULL;
    }
    if (do_api && (rc == 0 || rc == BENCH_EXIT_ERROR)) {
        int r2 = qm_api(&c);
        if (rc == 0)
            rc = r2;
    }
    if (c.j) {
        bench_json_u64(c.j, "integrity_errors", c.integrity);
        bench_json_u64(c.j, "other_errors", c.failures);
        bench_json_obj_end(c.j);
        fputc('\n', jf);
        bench_close_out(jf, c.json, &c.failures);
    }
    bench_close_out(c.csv, c.csv_path, &c.failures);
    printf("\n");
    rn.integrity = c.integrity;
    rn.failures = c.failures;
    rc = bench_run_end(&rn, rc, NULL, 0, 0);
    return rc == 0 && c.missed ? BENCH_EXIT_MISSED : rc;
}

#endif /* MDCOM_BENCH_QEMU_M4 */

#ifndef MDCOM_BENCH_QEMU_AN521
int bench_target_qemu_an521(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    bench_err("this mdcom-bench was built without the qemu-an521 target (needs harness/qemu-m4)");
    return BENCH_EXIT_SKIPPED;
}
#else
/* MDCOM_BENCH_AN521_FW_DIR (the host build's fw-an521/) and MDCOM_BENCH_M4_APICOST (its
 * fw-m4/ API-cost image) come from bench/CMakeLists.txt. */

/* The value of " key=" on the line "RESULT <result> ...", or -1. */
static long an_field(const char *log, const char *result, const char *key)
{
    char pat[64], k[64];
    snprintf(pat, sizeof(pat), "RESULT %s ", result);
    const char *l = strstr(log, pat), *eol = l ? strchr(l, '\n') : NULL, *p;
    snprintf(k, sizeof(k), " %s=", key);
    if (!l || !(p = strstr(l, k)) || (eol && p > eol))
        return -1;
    return strtol(p + strlen(k), NULL, 10);
}

typedef struct an_opts {
    uint32_t runs;
    const char *dir, *m4api;
} an_opts;

static const bench_opt an_tab[] = {
    BOPT(an_opts, runs, "runs", BO_U32, 1, 100, "N", "runs of the dual-core images (default 2)"),
    BOPT(an_opts, dir, "fw-dir", BO_STR, 0, 0, "DIR",
         "holds mdcom-fw-an521-{cpu0,cpu1,apicost}.elf (default: the\n"
         "host build's fw-an521/, or $MDCOM_AN521_FW_DIR)"),
    BOPT(an_opts, m4api, "m4-apicost", BO_STR, 0, 0, "PATH",
         "the M4's API-cost image, for comparison"),
    {0},
};

static const bench_cmd an_cmd = {
    .name = "--target qemu-an521",
    .opts = an_tab,
    .about = "M33 <-> M33 round trips (polling, MHU interrupt) on QEMU mps2-an521 and\n"
             "instructions per API call on the M33 (-icount), next to the M4.\n"};

static int an521_measure(const an_opts *po)
{
    an_opts o = *po;
    /* MDCOM FIFO, then RPMsg between the cores */
    static const char *const rs[4] = {"rtt_poll", "rtt_mhu", "rpmsg_rtt_poll", "rpmsg_rtt_mhu"};
    static const char *const rn[4] = {"polling", "MHU irq+WFI", "RPMsg poll", "RPMsg MHU"};
    char fw0[BENCH_QEMU_PATH], fw1[BENCH_QEMU_PATH], fwapi[BENCH_QEMU_PATH];
    bench_qemu_api_row m33[BENCH_QEMU_API_MAX], m4[BENCH_QEMU_API_MAX];
    int failures = 0, st, n33 = 0, n4 = 0;
    snprintf(fw0, sizeof(fw0), "%s/mdcom-fw-an521-cpu0.elf", o.dir);
    snprintf(fw1, sizeof(fw1), "%s/mdcom-fw-an521-cpu1.elf", o.dir);
    snprintf(fwapi, sizeof(fwapi), "%s/mdcom-fw-an521-apicost.elf", o.dir);
    if (!bench_qemu_available() || !bench_qemu_exists(fw0) || !bench_qemu_exists(fw1)) {
        bench_err("qemu-an521: needs qemu-system-arm and %s, %s (cmake --preset cortex-m33-an521 "
                  "&& cmake --build --preset cortex-m33-an521, then --fw-dir)",
                  fw0, fw1);
        return BENCH_EXIT_SKIPPED;
    }
    printf("== Cortex-M33 <-> Cortex-M33 round trips, 16-byte message (QEMU mps2-an521, "
           "-smp 2, multi-threaded TCG) ==\n");
    printf("%-4s %-12s %12s %14s %14s\n", "run", "doorbell", "ns/rt mean", "lock2 us",
           "lock2 busy");
    for (uint32_t k = 0; k < o.runs; k++) {
        char *log = bench_qemu_console("mps2-an521", "mdcom-an521", fw0, fw1, -1, 300, &st);
        if (!log || st != 0 || !strstr(log, "DONE PASS")) {
            bench_err("qemu-an521: run %u failed (exit %d)%s%s", k + 1, st,
                      log ? "; console:\n" : "", log ? log : "");
            failures++;
            free(log);
            continue;
        }
        long us = an_field(log, "smem_lock", "us");
        long busy =
            an_field(log, "smem_lock", "busy_cpu0") + an_field(log, "smem_lock", "busy_cpu1");
        for (int m = 0; m < 4; m++)
            printf("%-4u %-12s %12ld %14ld %14ld\n", k + 1, rn[m],
                   an_field(log, rs[m], "ns_per_rt"), us, busy);
        free(log);
    }
    if (!bench_qemu_exists(fwapi)) {
        printf("\n(no %s: API costs skipped)\n", fwapi);
        return failures ? BENCH_EXIT_ERROR : BENCH_EXIT_OK;
    }
    n33 = bench_qemu_apicost("mps2-an521", "mdcom-an521", fwapi, 300, m33, NULL, &st);
    if (bench_qemu_exists(o.m4api))
        n4 = bench_qemu_apicost(NULL, "mdcom-m4", o.m4api, 120, m4, NULL, &st);
    if (n33 <= 0) {
        bench_err("qemu-an521: api: no measurements from %s", fwapi);
        return BENCH_EXIT_ERROR;
    }
    printf("\n== instructions per API call (-icount shift=0): mode (mean) of 13 cycles, the "
           "empty measurement subtracted ==\n");
    printf("%-14s %16s %16s\n", "call", "M33", n4 > 0 ? "M4" : "M4 (n/a)");
    for (int i = 0; i < n33; i++) {
        char v33[32], v4[32] = "-";
        for (int j = 0; j < n4; j++)
            if (strcmp(m4[j].call, m33[i].call) == 0)
                snprintf(v4, sizeof(v4), "%u (%.1f)", m4[j].mode, m4[j].mean);
        snprintf(v33, sizeof(v33), "%u (%.1f)", m33[i].mode, m33[i].mean);
        printf("%-14s %16s %16s\n", m33[i].call, v33, v4);
    }
    return failures ? BENCH_EXIT_ERROR : BENCH_EXIT_OK;
}

int bench_target_qemu_an521(int argc, char **argv)
{
    const char *env = getenv("MDCOM_AN521_FW_DIR");
    an_opts o = {2, env && *env ? env : MDCOM_BENCH_AN521_FW_DIR, MDCOM_BENCH_M4_APICOST};
    int prc = bench_parsed(bench_opts_parse("qemu-an521", an_tab, &o, argc, argv), &an_cmd);
    if (prc >= 0)
        return prc;
    /* the header and the end line of every scenario; not pinned: QEMU would inherit it */
    bench_run run = {.cmd = "--target qemu-an521", .no_pin = 1};
    int rc = bench_run_begin(&run);
    if (rc)
        return rc;
    rc = an521_measure(&o);
    if (rc == BENCH_EXIT_ERROR) { /* counted, so the end line says so */
        run.failures++;
        rc = 0;
    }
    printf("\n");
    return bench_run_end(&run, rc, NULL, 0, 0);
}
#endif
