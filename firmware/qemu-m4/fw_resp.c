/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_resp.c - mdcom-fw-resp: the master domain of qemu_m4.toml on a
 * Cortex-M4, serving the Linux side's benchmark and test scenarios
 * (fw_proto.h). Boots, formats the region, prints "READY", then runs one
 * service per command received on "ctl".
 */
#include <errno.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "fw_proto.h"
#include "mdcom/mdcom.h"
#include "mdcom/rpmsg.h"
#include "mdcom_m4_cfg.h"

static mdcom_t *g_m;
static mdcom_fifoch_t *g_ctl, *g_rsp, *g_ein, *g_eout, *g_bulk, *g_ack, *g_tm;
static mdcom_smemch_t *g_state, *g_tmsync, *g_rpmsg_area;

#define MS(x) ((int64_t)(x) * 1000000)

static void die(const char *what, int r)
{
    mdcom_bm_puts("fw: ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(mdcom_strerror(r));
    mdcom_bm_puts("\n");
    mdcom_bm_exit(2);
}

/* Wait for a block on ch in the service's mode: spin (POLL) or sleep in WFI
 * until the doorbell (DOORBELL). 0, -ETIMEDOUT after FW_IDLE_MS, or an
 * error of wait. */
static int wait_rx(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, uint32_t *len)
{
    uint64_t end = 0;
    for (;;) {
        int r = mdcom_fifoch_dequeue(ch, id, len);
        if (r != -EAGAIN)
            return r;
        if (mode == FW_MODE_DOORBELL) {
            r = mdcom_fifoch_wait(ch, MDCOM_EV_RX, MS(FW_IDLE_MS));
            if (r < 0)
                return r;
        } else {
            uint64_t now = mdcom_bm_now_ns();
            if (!end)
                end = now + (uint64_t)MS(FW_IDLE_MS);
            else if (now >= end)
                return -ETIMEDOUT;
        }
    }
}

/* A free block on ch (waiting for the receiver to free one). */
static int alloc_tx(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id)
{
    uint64_t end = 0;
    for (;;) {
        int r = mdcom_fifoch_alloc(ch, id);
        if (r != -ENOBUFS)
            return r;
        if (mode == FW_MODE_DOORBELL) {
            r = mdcom_fifoch_wait(ch, MDCOM_EV_TX, MS(FW_IDLE_MS));
            if (r < 0)
                return r;
        } else {
            uint64_t now = mdcom_bm_now_ns();
            if (!end)
                end = now + (uint64_t)MS(FW_IDLE_MS);
            else if (now >= end)
                return -ETIMEDOUT;
        }
    }
}

static void set_mode(uint32_t mode)
{
    /* doorbell mode: sleep at once (the point is to measure the doorbell);
     * poll mode never reaches the core's wait */
    uint32_t spin = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    mdcom_fifoch_t *chs[] = {g_ein, g_eout, g_bulk, g_ack};
    unsigned i;
    for (i = 0; i < sizeof(chs) / sizeof(chs[0]); i++)
        mdcom_fifoch_set_spin(chs[i], spin);
}

static int svc_echo(const fw_cmd *c, fw_rsp *o)
{
    uint32_t expect = 0;
    while (o->count < c->count) {
        uint32_t in, out, len;
        void *pi, *po;
        int r = wait_rx(g_ein, c->mode, &in, &len);
        if (r)
            return r;
        mdcom_fifoch_get(g_ein, in, &pi, 0);
        if (c->arg & 1u) { /* check what arrived */
            const fw_echo_hdr *h = (const fw_echo_hdr *)pi;
            if (len < sizeof(*h) || h->len != len - sizeof(*h) || h->seq != expect ||
                fw_crc32(h + 1, h->len) != h->crc)
                o->value++;
            expect = h->seq + 1;
        }
        r = alloc_tx(g_eout, c->mode, &out);
        if (r) {
            mdcom_fifoch_free(g_ein, in);
            return r;
        }
        mdcom_fifoch_get(g_eout, out, &po, 0);
        memcpy(po, pi, len);
        mdcom_fifoch_free(g_ein, in);
        mdcom_fifoch_notify(g_ein); /* a sender may wait for a free block */
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

static int send_ack(uint32_t mode, uint32_t v)
{
    uint32_t id;
    void *p;
    int r = alloc_tx(g_ack, mode, &id);
    if (r)
        return r;
    mdcom_fifoch_get(g_ack, id, &p, 0);
    memcpy(p, &v, sizeof(v));
    r = mdcom_fifoch_enqueue(g_ack, id, sizeof(v));
    if (r) {
        mdcom_fifoch_free(g_ack, id);
        return r;
    }
    return mdcom_fifoch_notify(g_ack);
}

/* The seeds' protocol: header {preamble, length}, then length bytes in any
 * number of messages; answer the byte count when all arrived. */
static int svc_blockack(const fw_cmd *c, fw_rsp *o)
{
    uint32_t want = 0, got = 0, in_tx = 0;
    while (o->count < c->count) {
        uint32_t id, len, off = 0;
        void *p;
        int r = wait_rx(g_bulk, c->mode, &id, &len);
        if (r)
            return r;
        mdcom_fifoch_get(g_bulk, id, &p, 0);
        if (!in_tx) {
            fw_ba_hdr h;
            if (len < sizeof(h)) {
                o->value++;
                mdcom_fifoch_free(g_bulk, id);
                continue;
            }
            memcpy(&h, p, sizeof(h));
            if (h.preamble != FW_BA_PREAMBLE) {
                o->value++;
                mdcom_fifoch_free(g_bulk, id);
                continue;
            }
            want = h.length;
            got = 0;
            in_tx = 1;
            off = sizeof(h);
        }
        got += len - off;
        o->value2 += len;
        mdcom_fifoch_free(g_bulk, id);
        mdcom_fifoch_notify(g_bulk);
        if (got >= want) {
            in_tx = 0;
            r = send_ack(c->mode, got);
            if (r)
                return r;
            o->count++;
        }
    }
    return 0;
}

static int svc_sink(const fw_cmd *c, fw_rsp *o)
{
    while (o->count < c->count) {
        uint32_t id, len, first = 0;
        void *p;
        int r = wait_rx(g_bulk, c->mode, &id, &len);
        if (r)
            return r;
        mdcom_fifoch_get(g_bulk, id, &p, 0);
        if (len >= 4)
            memcpy(&first, p, 4);
        o->value += len;
        o->value2 += first;
        mdcom_fifoch_free(g_bulk, id);
        mdcom_fifoch_notify(g_bulk);
        o->count++;
    }
    return (c->arg & 1u) ? send_ack(c->mode, o->value) : 0;
}

static int svc_smem(const fw_cmd *c, fw_rsp *o)
{
    volatile uint32_t *area;
    void *p;
    mdcom_smemch_get(g_state, &p, 0);
    area = (volatile uint32_t *)p;
    while (o->count < c->count) {
        uint32_t v;
        int r = c->mode == FW_MODE_DOORBELL ? mdcom_smemch_lock(g_state, MS(FW_IDLE_MS))
                                            : mdcom_smemch_trylock(g_state);
        if (r == -EBUSY)
            continue;
        if (r)
            return r;
        v = area[0];
        area[1] = 0x4d34u; /* "M4" holds it */
        area[0] = v + 1;
        if (area[0] != v + 1 || area[1] != 0x4d34u)
            o->value++; /* someone wrote while we held the lock */
        r = mdcom_smemch_unlock(g_state);
        if (r)
            return r;
        o->count++;
    }
    return 0;
}

static int svc_tm_msg(const fw_cmd *c, fw_rsp *o)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(c->arg);
    uint32_t msg[4] = {1, 2, 3, 4}, back[4];
    while (mdcom_bm_now_ns() < end) {
        uint32_t k;
        for (k = 0; k < 64; k++) {
            int r = mdcom_fifoch_send(g_tm, msg, sizeof(msg), MDCOM_POLL);
            if (r)
                return r;
            r = mdcom_fifoch_recv(g_tm, back, sizeof(back), MDCOM_POLL);
            if (r != (int)sizeof(back))
                return r < 0 ? r : -EBADMSG;
            if (back[0] != msg[0])
                o->value++;
            msg[0]++;
        }
        o->count += 64;
    }
    return 0;
}

static int svc_tm_sync(const fw_cmd *c, fw_rsp *o)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(c->arg);
    while (mdcom_bm_now_ns() < end) {
        uint32_t k;
        for (k = 0; k < 64; k++) {
            int r = mdcom_smemch_trylock(g_tmsync);
            if (r)
                return r;
            r = mdcom_smemch_unlock(g_tmsync);
            if (r)
                return r;
        }
        o->count += 64;
    }
    return 0;
}

/* RPMsg echo: remote (device) role over the "rpmsg" SMEM area. */
static uint64_t g_rp_state[2048] __attribute__((aligned(16)));
static fw_rsp *g_rp_out;

static struct {
    uint32_t ba, in_tx, want, got;
} g_rpba;

/* arg 0: echo each message; arg 1: the block-ack protocol over RPMsg
 * (header + bytes in 496-byte messages, the byte count as the answer). */
static int rp_echo_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    int r;
    (void)priv;
    if (g_rpba.ba) {
        uint32_t off = 0;
        if (!g_rpba.in_tx) {
            fw_ba_hdr h;
            if (len < sizeof(h)) {
                g_rp_out->value++;
                return -EBADMSG;
            }
            memcpy(&h, data, sizeof(h));
            if (h.preamble != FW_BA_PREAMBLE) {
                g_rp_out->value++;
                return -EBADMSG;
            }
            g_rpba.in_tx = 1;
            g_rpba.want = h.length;
            g_rpba.got = 0;
            off = sizeof(h);
        }
        g_rpba.got += (uint32_t)len - off;
        if (g_rpba.got < g_rpba.want)
            return 0;
        g_rpba.in_tx = 0;
        r = mdcom_rpmsg_sendto(ept, &g_rpba.got, sizeof(g_rpba.got), src, MS(FW_IDLE_MS));
    } else {
        r = mdcom_rpmsg_sendto(ept, data, len, src, MS(FW_IDLE_MS));
    }
    if (r == 0)
        g_rp_out->count++;
    else
        g_rp_out->value++;
    return r;
}

static int svc_rpmsg(const fw_cmd *c, fw_rsp *o)
{
    mdcom_rpmsg_t *rp;
    mdcom_rpmsg_ept_t *ept;
    void *area;
    uint32_t size;
    mdcom_rpmsg_opts ro;
    int r;
    memset(&ro, 0, sizeof(ro));
    ro.role = MDCOM_RPMSG_REMOTE;
    ro.geometry.num_bufs = FW_RPMSG_NUM_BUFS;
    ro.geometry.buf_size = FW_RPMSG_BUF_SIZE;
    ro.geometry.vring_align = FW_RPMSG_ALIGN;
    ro.spin_ns = c->mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    ro.attach_timeout_ns = MS(FW_IDLE_MS);
    mdcom_smemch_get(g_rpmsg_area, &area, &size);
    r = mdcom_rpmsg_init(&rp, g_rp_state, sizeof(g_rp_state), area, size, &ro);
    if (r)
        return r;
    g_rp_out = o;
    g_rpba.ba = c->arg & 1u;
    g_rpba.in_tx = 0;
    r = mdcom_rpmsg_ept_create(rp, &ept, FW_RPMSG_SERVICE, MDCOM_RPMSG_ADDR_ANY,
                               MDCOM_RPMSG_ADDR_ANY, rp_echo_cb, 0, MS(FW_IDLE_MS));
    while (r == 0 && o->count < c->count) {
        r = mdcom_rpmsg_poll(rp, c->mode == FW_MODE_DOORBELL ? MS(FW_IDLE_MS) : MDCOM_POLL);
        if (r > 0)
            r = 0;
        /* poll mode: MDCOM_POLL returns 0 when nothing is pending; keep going
         * (the host ends the instance when done: -ESHUTDOWN) */
    }
    mdcom_rpmsg_term(rp);
    return r == -ESHUTDOWN ? 0 : r;
}

static void open_all(void)
{
    int r;
    if ((r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_CTL, &g_ctl)) || (r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_RSP, &g_rsp)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_ECHO_IN, &g_ein)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_ECHO_OUT, &g_eout)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_BULK, &g_bulk)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_ACK, &g_ack)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_M4_CH_TM, &g_tm)) ||
        (r = mdcom_smemch_at(g_m, MDCOM_M4_CH_STATE, &g_state)) ||
        (r = mdcom_smemch_at(g_m, MDCOM_M4_CH_TM_SYNC, &g_tmsync)) ||
        (r = mdcom_smemch_at(g_m, MDCOM_M4_CH_RPMSG, &g_rpmsg_area)))
        die("open channels", r);
}

int main(void)
{
    char err[128];
    mdcom_init_opts o;
    int r;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.heartbeat_ms = FW_HEARTBEAT_MS; /* waits and mdcom calls beat */
    mdcom_bm_puts("mdcom-fw-resp on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(", boot ");
    mdcom_bm_put_u32(mdcom_bm_boot_token());
    mdcom_bm_puts("\n");
    r = mdcom_init(&g_m, &mdcom_m4_config, MDCOM_M4_DOM_M4, &o);
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
        int action = 0;
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
            out.value2 = mdcom_bm_doorbell_count();
            break;
        case FW_OP_ECHO: out.status = svc_echo(&c, &out); break;
        case FW_OP_BLOCKACK: out.status = svc_blockack(&c, &out); break;
        case FW_OP_SINK: out.status = svc_sink(&c, &out); break;
        case FW_OP_SMEM: out.status = svc_smem(&c, &out); break;
        case FW_OP_TM_MSG: out.status = svc_tm_msg(&c, &out); break;
        case FW_OP_TM_SYNC: out.status = svc_tm_sync(&c, &out); break;
        case FW_OP_RPMSG_ECHO: out.status = svc_rpmsg(&c, &out); break;
        case FW_OP_RESET: action = 1; break;
        case FW_OP_EXIT: action = 2; break;
        case FW_OP_HANG: action = 3; break;
        default: out.status = -EINVAL; break;
        }
        out.elapsed_us = (uint32_t)((mdcom_bm_now_ns() - t0) / 1000u);
        if (out.status) {
            mdcom_bm_puts("fw: op ");
            mdcom_bm_put_u32(c.op);
            mdcom_bm_puts(" after ");
            mdcom_bm_put_u32(out.count);
            mdcom_bm_puts(": ");
            mdcom_bm_puts(mdcom_strerror(out.status));
            mdcom_bm_puts("\n");
            out.status = fw_errno_to_wire(out.status);
        }
        set_mode(FW_MODE_POLL);
        r = mdcom_fifoch_send(g_rsp, &out, sizeof(out), MS(5000));
        if (r)
            mdcom_bm_puts("fw: rsp lost\n");
        if (action == 1) {
            /* let the host read the response first (up to 1 s): after the
             * reset the region is re-formatted and an unread response would
             * be gone (the host's recv says -ECONNRESET) */
            uint64_t until = mdcom_bm_now_ns() + MS(1000);
            mdcom_fifo_state st;
            while (r == 0 && mdcom_sense_fifoch(g_rsp, &st) == 0 && st.queued != 0 &&
                   mdcom_bm_now_ns() < until)
                ;
            mdcom_bm_puts("fw: reset\n");
            mdcom_bm_reset();
        }
        if (action == 3) {
            uint32_t id;
            (void)mdcom_fifoch_alloc(g_rsp, &id); /* held when we hang */
            mdcom_bm_puts("fw: hang\n");
            for (;;)
                ; /* no mdcom call, no heartbeat */
        }
        if (action == 2) {
            mdcom_term(g_m);
            mdcom_bm_exit((int)c.arg);
        }
    }
}
