/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_qemu.c - the QEMU link (tr_qemu.h): the mdcom firmware on a Cortex-M4
 * under QEMU, driven through harness/qemu-m4's launcher and scenarios
 * (library mdcom_m4_scen); its transports as link ops of the one transport
 * interface. Without that library (no Linux port or python3) the transports
 * exist and every link says -ENOENT.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "tr_qemu.h"

/* What a link transport's variant selects: the firmware command it runs. */
enum { QV_FIFO, QV_RPMSG, QV_OA, QV_RAW, QV_BLK32K, QV_BLK512, QV_RPMSG_BLK };

static int qemu_run(void *link, const bench_link_cell *c, uint32_t n, uint64_t *samples,
                    size_t *np);
static const bench_link_ops qemu_ops = {.run = qemu_run};

/* The names are the labels of the tables and of the JSON rows' "transport". The
 * echoes' ratios refer to the raw spin echo. */
#define QT(var, nm, v, base, d)                                                                    \
    const bench_transport var = {.name = nm,                                                       \
                                 .desc = d,                                                        \
                                 .wait_class = BENCH_WAIT_POLL,                                    \
                                 .baseline = base,                                                 \
                                 .variant = v,                                                     \
                                 .link = &qemu_ops}
QT(bench_qemu_fifo, "MDCOM FIFO", QV_FIFO, "raw spin",
   "mdcom FIFO channel echo to the firmware (copy in, copy out)");
QT(bench_qemu_rpmsg, "RPMsg", QV_RPMSG, "raw spin",
   "mdcom's RPMsg over the firmware's vrings, the same messages");
QT(bench_qemu_openamp, "OpenAMP RPMsg", QV_OA, "raw spin",
   "OpenAMP's own RPMsg remote as the firmware (mdcom-fw-openamp.elf)");
QT(bench_qemu_raw, "raw spin", QV_RAW, NULL, "baseline: one word each way in SMEM, polling");
QT(bench_qemu_fifo_blk32k, "FIFO 32K block", QV_BLK32K, NULL,
   "block-ack over the FIFO channel, messages of up to 32 KiB");
QT(bench_qemu_fifo_blk512, "FIFO 512 B msgs", QV_BLK512, NULL,
   "block-ack over the FIFO channel, messages of up to 512 B");
QT(bench_qemu_rpmsg_blk, "RPMsg 496 B", QV_RPMSG_BLK, NULL,
   "block-ack over RPMsg, 496-byte messages");

int bench_qemu_exists(const char *p) { return p && *p && access(p, R_OK) == 0; }

void bench_qemu_beside(char *path, size_t len, const char *fw, const char *name)
{
    const char *slash = strrchr(fw, '/');
    snprintf(path, len, "%.*s%s", slash ? (int)(slash - fw + 1) : 0, fw, name);
}

#ifndef MDCOM_BENCH_QEMU_M4
static int qemu_run(void *link, const bench_link_cell *c, uint32_t n, uint64_t *samples, size_t *np)
{
    (void)link, (void)c, (void)n, (void)samples, (void)np;
    return -ENOENT;
}
#else /* the launcher and scenarios of harness/qemu-m4 */

#include "m4_scen.h"

struct bench_qemu {
    m4_link l;
    m4_oa oa;
    int oa_up; /* 1: oa runs (the OpenAMP cells have a firmware) */
};

#define QM_MODE(doorbell) ((doorbell) ? FW_MODE_DOORBELL : FW_MODE_POLL)

int bench_qemu_up(bench_qemu **qp, const char *fw, int icount_shift, char *err, size_t len)
{
    bench_qemu *q = calloc(1, sizeof(*q));
    int r;
    *qp = NULL;
    if (!q) {
        snprintf(err, len, "out of memory");
        return -ENOMEM;
    }
    r = icount_shift >= 0 ? m4_link_start_icount(&q->l, fw, icount_shift)
                          : m4_link_start(&q->l, fw);
    if (r) {
        snprintf(err, len, "%s (%s)", q->l.err, mdcom_strerror(r));
        free(q);
        return r;
    }
    q->l.doorbell_gap_ns = M4_DOORBELL_GAP_NS; /* doorbell cells: the wake-up, every time */
    *qp = q;
    return 0;
}

int bench_qemu_ping(bench_qemu *q)
{
    fw_rsp res;
    int r = m4_cmd(&q->l, FW_OP_PING, FW_MODE_POLL, 0, 0);
    return r ? r : m4_result(&q->l, &res, 5000000000ll);
}

const char *bench_qemu_region(const bench_qemu *q) { return q->l.q.region_path; }

void bench_qemu_down(bench_qemu *q)
{
    if (!q)
        return;
    bench_qemu_oa_end(q);
    m4_link_stop(&q->l);
    free(q);
}

int bench_qemu_oa_begin(bench_qemu *q, const char *path, int icount_shift, char *why, size_t len)
{
    int r;
    q->oa_up = 0;
    if (access(path, R_OK) != 0) {
        snprintf(why, len, "no %s", path);
        return -ENOENT;
    }
    if ((r = m4_oa_start_icount(&q->oa, path, icount_shift)) != 0) {
        snprintf(why, len, "%s: %s", q->oa.err, mdcom_strerror(r));
        return r;
    }
    q->oa.doorbell_gap_ns = M4_DOORBELL_GAP_NS;
    q->oa_up = 1;
    return 0;
}

void bench_qemu_oa_end(bench_qemu *q)
{
    if (q->oa_up)
        m4_oa_stop(&q->oa);
    q->oa_up = 0;
}

/* The firmware's command of transport variant v: n operations with its work arg (0: one copy,
 * FW_ARG_STAMP, FW_ARG_COST), times to t, one-way samples to ow (either may be NULL). */
static int qemu_op(bench_qemu *q, int v, uint32_t mode, uint32_t bytes, uint32_t n, uint32_t arg,
                   m4_times *t, m4_ow *ow)
{
    m4_link *l = &q->l;
    switch (v) {
    case QV_OA:
        return q->oa_up ? m4_oa_echo(&q->oa, n, mode, bytes, t) : -ENOENT;
    case QV_RAW:
        return m4_raw_echo(l, n, arg, t, ow);
    case QV_RPMSG:
        return m4_rpmsg_echo_arg(l, n, mode, bytes, arg, t, ow);
    case QV_FIFO:
        return m4_echo_arg(l, n, mode, (int)(bytes - sizeof(fw_echo_hdr)), arg, t, ow, NULL);
    case QV_RPMSG_BLK:
        return m4_rpmsg_blockack(l, n, bytes, mode, t);
    default:
        return m4_blockack(l, n, bytes, v == QV_BLK32K ? 32768u : 512u, mode, t);
    }
}

static int qemu_run(void *link, const bench_link_cell *c, uint32_t n, uint64_t *samples, size_t *np)
{
    m4_times t = {calloc(n ? n : 1, sizeof(double)), 0, n};
    int r;
    if (!t.v)
        return -ENOMEM;
    r = qemu_op(link, c->t->variant, QM_MODE(c->doorbell), c->bytes, n, 0, &t, NULL);
    for (uint32_t i = 0; i < t.n && i < n; i++)
        samples[(*np)++] = (uint64_t)llround(t.v[i]);
    free(t.v);
    return r;
}

static m4_times qm_times(uint32_t cap)
{
    m4_times t = {calloc(cap ? cap : 1, sizeof(double)), 0, 0};
    t.cap = t.v ? cap : 0;
    return t;
}

int bench_qemu_stamped(bench_qemu *q, unsigned nk, const bench_transport *const *tr,
                       const uint32_t *bytes, uint32_t n, double *p50_us, double *back_us,
                       double *bound_us, unsigned *samples)
{
    /* all samples in one pool (a and b in pairs), run k's from ks[k]: the offset is bounded
     * over all of them */
    m4_ow all = {qm_times(nk * n), qm_times(nk * n)};
    uint32_t *ks = calloc(nk + 1, sizeof(*ks));
    double theta = 0, hw = 0;
    int r = all.a.v && all.b.v && ks ? 0 : -ENOMEM;
    for (unsigned k = 0; k < nk && r == 0; k++) {
        bench_progress("one-way with time stamps %u/%u", k + 1, nk);
        r = qemu_op(q, tr[k]->variant, FW_MODE_POLL, bytes[k], n, FW_ARG_STAMP, NULL, &all);
        bench_progress_end();
        ks[k + 1] = all.a.n;
    }
    if (r == 0)
        r = m4_ow_offset(&all, &theta, &hw);
    for (unsigned k = 0; k < nk && r == 0; k++) {
        m4_times a = {all.a.v + ks[k], ks[k + 1] - ks[k], 0};
        m4_times b = {all.b.v + ks[k], ks[k + 1] - ks[k], 0};
        p50_us[k] = (m4_times_pct(&a, 50) - theta) / 1e3;
        /* the way back: firmware's work on the message + its reply to here */
        back_us[k] = (theta - m4_times_pct(&b, 50)) / 1e3;
    }
    *bound_us = hw / 1e3;
    *samples = all.a.n;
    free(all.a.v);
    free(all.b.v);
    free(ks);
    return r;
}

int bench_qemu_sink(bench_qemu *q, uint32_t n, uint32_t bytes, double *ns)
{
    return m4_sink(&q->l, n, bytes, FW_MODE_POLL, ns);
}

int bench_qemu_cost(bench_qemu *q, const bench_transport *t, uint32_t n, uint32_t bytes,
                    double *instr)
{
    int r;
    *instr = -1;
    if (t->variant == QV_OA)
        return q->oa_up ? m4_oa_cost(&q->oa, n, bytes, instr) : -ENOENT;
    if (t->variant != QV_FIFO && t->variant != QV_RPMSG)
        return -EINVAL;
    r = qemu_op(q, t->variant, FW_MODE_POLL, bytes, n, FW_ARG_COST, NULL, NULL);
    if (r == 0 && q->l.last.count)
        *instr = (double)q->l.last.value2 / q->l.last.count;
    return r;
}

#endif /* MDCOM_BENCH_QEMU_M4 */

#if defined(MDCOM_BENCH_QEMU_M4) || defined(MDCOM_BENCH_QEMU_AN521)
#include "qemu_m4.h"
#ifdef MDCOM_BENCH_QEMU_M4
#include "mdcom_m4_cfg.h"
#define QM_M4_REGION mdcom_m4_config.region_name
#else
#define QM_M4_REGION "mdcom-m4"
#endif

int bench_qemu_available(void) { return mdcom_qemu_available(); }

void bench_qemu_cleanup_on_signals(void) { mdcom_qemu_cleanup_on_signals(); }

char *bench_qemu_console(const char *machine, const char *region, const char *fw0, const char *fw1,
                         int icount, int timeout_s, int *status)
{
    mdcom_qemu q;
    mdcom_qemu_opts o = {.firmware = fw0,
                         .region_name = region ? region : QM_M4_REGION,
                         .machine = machine,
                         .icount_shift = icount,
                         .ready_timeout_ns = -1};
    char err[256], loader[BENCH_QEMU_PATH + 40], log1[BENCH_QEMU_PATH + 16];
    const char *extra[] = {"-smp", "2", "-device", loader, "-serial", log1, NULL};
    int r = mdcom_qemu_prepare(&q, &o, err, sizeof(err));
    *status = -1;
    if (!r) {
        snprintf(loader, sizeof(loader), "loader,file=%s,cpu-num=1", fw1 ? fw1 : "");
        snprintf(log1, sizeof(log1), "file:%s/cpu1.log", q.dir);
    }
    if (!fw1)
        extra[2] = NULL;
    o.extra = machine ? extra : extra + 2;
    if (r || (r = mdcom_qemu_launch(&q, &o, err, sizeof(err))) != 0) {
        bench_err("%s: %s", fw0, err);
        mdcom_qemu_stop(&q);
        return NULL;
    }
    if (mdcom_qemu_wait_exit(&q, timeout_s * 1000000000ll) == 0)
        *status = q.exit_status;
    else
        bench_err("%s still running after %d s", fw0, timeout_s);
    char *log = bench_read_file(q.console_path);
    unlink(log1 + 5); /* without "file:" */
    mdcom_qemu_stop(&q);
    return log;
}

int bench_qemu_apicost(const char *machine, const char *region, const char *fw, int timeout_s,
                       bench_qemu_api_row *rows, char **log, int *status)
{
    /* -icount shift=0: 1 ns of virtual time per instruction, so SysTick counts instructions;
     * the image measures, prints and exits by itself */
    char *text = bench_qemu_console(machine, region, fw, NULL, 0, timeout_s, status);
    int n = 0;
    for (const char *l = *status ? NULL : text; l && *l;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        bench_qemu_api_row *r = &rows[n];
        if (strncmp(l, "apicost: ", 9) == 0) {
            n = -1;
            break;
        }
        if (n < BENCH_QEMU_API_MAX &&
            sscanf(l, "apicost %31s mode %u mean %lf sd %lf min %u max %u n %u", r->call, &r->mode,
                   &r->mean, &r->sd, &r->min, &r->max, &r->n) == 7)
            n++;
    }
    if (log)
        *log = text;
    else
        free(text);
    return n;
}

#else
int bench_qemu_available(void) { return 0; }

void bench_qemu_cleanup_on_signals(void) {}
#endif
