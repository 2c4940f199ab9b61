/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_cpu1.c - mdcom-fw-an521-cpu1: the remote domain "cpu1" of an521.toml on
 * CPU1 of the SSE-200. CPU0 releases this core from CPUWAIT after it has
 * formatted the region; this image attaches, then serves one command of
 * fw_proto.h at a time received on "ctl" and answers on "rsp":
 *
 *   PING      value = boot token, value2 = MHU doorbells taken on this core
 *   ECHO      count messages echo_in -> echo_out (arg bit 0: check seq + CRC)
 *   BLOCKACK  count transactions on bulk, the byte count acked on ack
 *   SMEM      count lock / check / increment / unlock rounds on "state",
 *             at the same time as CPU0 (arg 1: no lock, the negative
 *             control); value = holds disturbed, value2 = -EBUSY retries
 *   EXIT      answers, then sleeps forever (CPU0 ends QEMU)
 */
#include <errno.h>
#include <string.h>

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "fw_proto.h"
#include "mdcom/mdcom.h"
#include "mdcom_an521_cfg.h"
#include "smem_round.h"

#define MS(x) ((int64_t)(x) * 1000000)

static mdcom_t *g_m;
static mdcom_fifoch_t *g_ctl, *g_rsp, *g_ein, *g_eout, *g_bulk, *g_ack;
static mdcom_smemch_t *g_state;

static void die(const char *what, int r)
{
    mdcom_bm_puts("cpu1: ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(mdcom_strerror(r));
    mdcom_bm_puts("\n");
    for (;;)
        mdcom_bm_wfi();
}

static int64_t tmo(uint32_t mode) { (void)mode; return MS(FW_IDLE_MS); }

static int rx(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, uint32_t *len)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(FW_IDLE_MS);
    uint32_t spins = 0; /* the clock is MMIO (SysTick): read it seldom */
    for (;;) {
        int r = mdcom_fifoch_dequeue(ch, id, len);
        if (r != -EAGAIN)
            return r;
        if (mode == FW_MODE_DOORBELL) {
            r = mdcom_fifoch_wait(ch, MDCOM_EV_RX, tmo(mode));
            if (r < 0)
                return r;
        } else if ((++spins & 1023u) == 0 && mdcom_bm_now_ns() >= end) {
            return -ETIMEDOUT;
        }
    }
}

static int tx_alloc(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(FW_IDLE_MS);
    uint32_t spins = 0; /* the clock is MMIO (SysTick): read it seldom */
    for (;;) {
        int r = mdcom_fifoch_alloc(ch, id);
        if (r != -ENOBUFS)
            return r;
        if (mode == FW_MODE_DOORBELL) {
            r = mdcom_fifoch_wait(ch, MDCOM_EV_TX, tmo(mode));
            if (r < 0)
                return r;
        } else if ((++spins & 1023u) == 0 && mdcom_bm_now_ns() >= end) {
            return -ETIMEDOUT;
        }
    }
}

static int svc_echo(const fw_cmd *c, fw_rsp *o)
{
    uint32_t expect = 0;
    while (o->count < c->count) {
        uint32_t in, out, len;
        void *pi, *po;
        int r = rx(g_ein, c->mode, &in, &len);
        if (r)
            return r;
        mdcom_fifoch_get(g_ein, in, &pi, 0);
        if (c->arg & 1u) {
            const fw_echo_hdr *h = (const fw_echo_hdr *)pi;
            if (len < sizeof(*h) || h->len != len - sizeof(*h) || h->seq != expect ||
                fw_crc32(h + 1, h->len) != h->crc)
                o->value++;
            expect = h->seq + 1;
        }
        r = tx_alloc(g_eout, c->mode, &out);
        if (r) {
            mdcom_fifoch_free(g_ein, in);
            return r;
        }
        mdcom_fifoch_get(g_eout, out, &po, 0);
        memcpy(po, pi, len);
        mdcom_fifoch_free(g_ein, in);
        mdcom_fifoch_notify(g_ein); /* CPU0 may wait for a free block */
        r = mdcom_fifoch_enqueue(g_eout, out, len);
        if (r) {
            mdcom_fifoch_free(g_eout, out);
            return r;
        }
        mdcom_fifoch_notify(g_eout);
        o->count++;
    }
    return 0;
}

static int svc_blockack(const fw_cmd *c, fw_rsp *o)
{
    while (o->count < c->count) {
        uint32_t want = 0, got = 0, hdr = 0;
        while (!hdr || got < want) {
            uint32_t id, len, off = 0;
            void *p;
            int r = rx(g_bulk, c->mode, &id, &len);
            if (r)
                return r;
            mdcom_fifoch_get(g_bulk, id, &p, 0);
            if (!hdr) {
                fw_ba_hdr h;
                if (len < sizeof(h)) {
                    mdcom_fifoch_free(g_bulk, id);
                    return -EBADMSG;
                }
                memcpy(&h, p, sizeof(h));
                if (h.preamble != FW_BA_PREAMBLE) {
                    mdcom_fifoch_free(g_bulk, id);
                    return -EBADMSG;
                }
                want = h.length;
                hdr = 1;
                off = sizeof(h);
            }
            got += len - off;
            mdcom_fifoch_free(g_bulk, id);
            mdcom_fifoch_notify(g_bulk);
        }
        if (got != want)
            o->value++;
        {
            uint32_t id;
            void *p;
            int r = tx_alloc(g_ack, c->mode, &id);
            if (r)
                return r;
            mdcom_fifoch_get(g_ack, id, &p, 0);
            memcpy(p, &got, sizeof(got));
            r = mdcom_fifoch_enqueue(g_ack, id, sizeof(got));
            if (r)
                return r;
            mdcom_fifoch_notify(g_ack);
        }
        o->count++;
    }
    return 0;
}

static int svc_smem(const fw_cmd *c, fw_rsp *o)
{
    void *p;
    mdcom_smemch_get(g_state, &p, 0);
    return smem_rounds(g_state, (volatile uint32_t *)p, c->count, c->arg, SMEM_MARK_CPU1, &o->count,
                       &o->value, &o->value2);
}

static void open_all(void)
{
    int r;
    if ((r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_CTL, &g_ctl)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_RSP, &g_rsp)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_ECHO_IN, &g_ein)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_ECHO_OUT, &g_eout)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_BULK, &g_bulk)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_ACK, &g_ack)) ||
        (r = mdcom_smemch_at(g_m, MDCOM_AN521_CH_STATE, &g_state)))
        die("open channels", r);
}

static void set_mode(uint32_t mode)
{
    uint32_t spin = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    mdcom_fifoch_t *chs[] = {g_ein, g_eout, g_bulk, g_ack};
    unsigned i;
    for (i = 0; i < sizeof(chs) / sizeof(chs[0]); i++)
        mdcom_fifoch_set_spin(chs[i], spin);
}

int main(void)
{
    char err[128];
    mdcom_init_opts o;
    int r;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.attach_timeout_ns = MS(10000);
    o.heartbeat_ms = FW_HEARTBEAT_MS;
    mdcom_bm_puts("mdcom-fw-an521-cpu1 on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(" cpu ");
    mdcom_bm_put_u32(mdcom_an521_cpu());
    mdcom_bm_puts("\n");
    r = mdcom_init(&g_m, &mdcom_an521_config, MDCOM_AN521_DOM_CPU1, &o);
    if (r) {
        mdcom_bm_puts(err);
        mdcom_bm_puts("\n");
        die("mdcom_init", r);
    }
    open_all();
    mdcom_bm_puts("READY\n");
    for (;;) {
        fw_cmd c;
        fw_rsp out;
        uint64_t t0;
        r = mdcom_fifoch_recv(g_ctl, &c, sizeof(c), MDCOM_FOREVER);
        if (r != (int)sizeof(c)) {
            if (r < 0 && r != -EMSGSIZE)
                die("ctl", r);
            continue;
        }
        memset(&out, 0, sizeof(out));
        out.op = c.op;
        set_mode(c.mode);
        t0 = mdcom_bm_now_ns();
        switch (c.op) {
        case FW_OP_PING:
            out.value = mdcom_bm_boot_token();
            out.value2 = mdcom_an521_mhu_irqs(0);
            break;
        case FW_OP_ECHO: out.status = svc_echo(&c, &out); break;
        case FW_OP_BLOCKACK: out.status = svc_blockack(&c, &out); break;
        case FW_OP_SMEM: out.status = svc_smem(&c, &out); break;
        case FW_OP_EXIT: break;
        default: out.status = -FW_ENOSYS; break;
        }
        if (out.status)
            out.status = fw_errno_to_wire(out.status);
        out.elapsed_us = (uint32_t)((mdcom_bm_now_ns() - t0) / 1000u);
        r = mdcom_fifoch_send(g_rsp, &out, sizeof(out), MS(FW_IDLE_MS));
        if (r)
            die("rsp", r);
        if (c.op == FW_OP_EXIT) {
            mdcom_bm_puts("cpu1: exit\n");
            (void)mdcom_bm_irq_save();
            for (;;)
                mdcom_bm_wfi();
        }
    }
}
