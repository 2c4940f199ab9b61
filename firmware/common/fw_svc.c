/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_svc.c - the firmware responder library (mdcom_fw/svc.h): the services
 * of mdcom_fw/proto.h, shared by every QEMU firmware image.
 *
 * Equal work across transports: the MDCOM FIFO echo and the RPMsg echo do
 * the same on this side - one copy of the message into the reply (FIFO:
 * memcpy into the out block; RPMsg: the send's copy into a TX buffer), and
 * the same checks (none, or seq + CRC under FW_ARG_CHECK, the same code).
 */
#include <errno.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom/rpmsg.h"
#include "mdcom_fw/svc.h"

#define MS FW_MS

/* The clock of FW_ARG_STAMP. mdcom_bm_now_ns() counts SysTick periods in an
 * interrupt, and QEMU folds periods it could not deliver on time (the host
 * busy) into one: that clock falls behind by whole periods. A free-running
 * counter that QEMU computes from its virtual clock at each read does not
 * (the board's: FW_STAMP_COUNTER, ticks of FW_STAMP_NS_PER_TICK ns,
 * extended to 64 bits here: read at least once a wrap, ~171 s at 25 MHz). */
#ifdef FW_STAMP_COUNTER
static uint64_t stamp_ns(void)
{
    static uint32_t last, hi;
    uint32_t v = MDCOM_BM_REG(FW_STAMP_COUNTER);
    if (v < last)
        hi++;
    last = v;
    return (((uint64_t)hi << 32) | v) * FW_STAMP_NS_PER_TICK;
}
#else
#define stamp_ns mdcom_bm_now_ns
#endif

static void open_fifo(fw_svc *s, const char *name, mdcom_fifoch_t **ch, int required)
{
    int r = mdcom_fifoch_open(s->m, name, ch);
    if (r) {
        *ch = 0;
        if (required || r != -ENOENT)
            fw_die(s->who, name, r);
    }
}

static void open_smem(fw_svc *s, const char *name, mdcom_smemch_t **ch)
{
    int r = mdcom_smemch_open(s->m, name, ch);
    if (r) {
        *ch = 0;
        if (r != -ENOENT)
            fw_die(s->who, name, r);
    }
}

/* the block table of ch (see fw_svc.ein_blk) */
static void blk_table(mdcom_fifoch_t *ch, void **tab)
{
    uint32_t id;
    for (id = 0; id < FW_BLK_MAX; id++)
        if (mdcom_fifoch_get(ch, id, &tab[id], 0) != 0)
            tab[id] = 0;
}

/* the address of block id of ch, from its table when there */
static void *blk(mdcom_fifoch_t *ch, void *const *tab, uint32_t id)
{
    void *p = 0;
    if (id < FW_BLK_MAX && tab[id])
        return tab[id];
    mdcom_fifoch_get(ch, id, &p, 0);
    return p;
}

void fw_open(fw_svc *s)
{
    open_fifo(s, "ctl", &s->ctl, 1);
    open_fifo(s, "rsp", &s->rsp, 1);
    open_fifo(s, "echo_in", &s->ein, 1);
    open_fifo(s, "echo_out", &s->eout, 1);
    open_fifo(s, "bulk", &s->bulk, 1);
    open_fifo(s, "ack", &s->ack, 1);
    open_fifo(s, "tm", &s->tm, 0);
    open_fifo(s, "fwd_in", &s->fin, 0);
    open_fifo(s, "fwd_out", &s->fout, 0);
    open_smem(s, "state", &s->state);
    open_smem(s, "tm_sync", &s->tmsync);
    open_smem(s, "rpmsg", &s->rpmsg);
    open_smem(s, "raw", &s->raw);
    blk_table(s->ein, s->ein_blk);
    blk_table(s->eout, s->eout_blk);
}

void fw_start(fw_svc *s, const char *who, const char *banner, const mdcom_layout_table *layout,
              uint32_t domain, int64_t attach_timeout_ns,
              int (*op)(fw_svc *s, const fw_cmd *c, fw_rsp *o))
{
    memset(s, 0, sizeof(*s));
    s->who = who;
    s->op = op;
    s->m = fw_boot(who, banner, layout, domain, attach_timeout_ns);
    fw_open(s);
    mdcom_bm_puts("READY\n");
}

/* Poll-mode timeout without a clock read on the fast path: the clock is
 * MMIO (SysTick), read once every 1024 empty polls. 1 when FW_IDLE_MS
 * passed since the first of those reads. */
static int idle_over(uint32_t *spins, uint64_t *end)
{
    uint64_t now;
    if ((++*spins & 1023u) != 0)
        return 0;
    now = mdcom_bm_now_ns();
    if (!*end)
        *end = now + (uint64_t)MS(FW_IDLE_MS);
    return now >= *end;
}

/* rx: a message (dequeue, -EAGAIN while empty); else a free block
 * (alloc, -ENOBUFS while none) */
static int fw_take(mdcom_fifoch_t *ch, uint32_t mode, int rx, uint32_t *id, uint32_t *len)
{
    uint64_t end = 0;
    uint32_t spins = 0;
    for (;;) {
        int r = rx ? mdcom_fifoch_dequeue(ch, id, len) : mdcom_fifoch_alloc(ch, id);
        if (r != (rx ? -EAGAIN : -ENOBUFS))
            return r;
        if (mode == FW_MODE_DOORBELL) {
            r = mdcom_fifoch_wait(ch, rx ? MDCOM_EV_RX : MDCOM_EV_TX, MS(FW_IDLE_MS));
            if (r < 0)
                return r;
        } else if (idle_over(&spins, &end)) {
            return -ETIMEDOUT;
        }
    }
}

int fw_rx(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, uint32_t *len)
{
    return fw_take(ch, mode, 1, id, len);
}

int fw_tx_alloc(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id)
{
    return fw_take(ch, mode, 0, id, 0);
}

void fw_set_mode(fw_svc *s, uint32_t mode)
{
    /* doorbell mode: sleep at once (the point is to measure the doorbell);
     * poll mode never reaches the core's wait */
    uint32_t spin = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    mdcom_fifoch_t *chs[] = {s->ein, s->eout, s->bulk, s->ack};
    unsigned i;
    for (i = 0; i < sizeof(chs) / sizeof(chs[0]); i++)
        mdcom_fifoch_set_spin(chs[i], spin);
}

/* ---- the echo's per-message work, the same for MDCOM FIFO and RPMsg ---- */

/* FW_ARG_CHECK: 1 when the message is not fw_echo_hdr + payload with the
 * expected seq and the header's CRC. */
static int echo_bad(const void *p, uint32_t len, uint32_t *expect)
{
    fw_echo_hdr h;
    int bad;
    if (len < sizeof(h))
        return 1;
    memcpy(&h, p, sizeof(h));
    bad = h.len != len - sizeof(h) || h.seq != *expect ||
          fw_crc32((const uint8_t *)p + sizeof(h), h.len) != h.crc;
    *expect = h.seq + 1;
    return bad;
}

/* The reply to a message: the message itself, or (FW_ARG_STAMP) a fw_stamp
 * with the arrival time t_rx. Bytes written to dst. */
static uint32_t echo_reply(void *dst, const void *src, uint32_t len, uint32_t arg, uint64_t t_rx)
{
    if (arg & FW_ARG_STAMP) {
        fw_stamp st = {0, len, (uint32_t)t_rx, (uint32_t)(t_rx >> 32)};
        if (len >= 4)
            memcpy(&st.seq, src, 4);
        memcpy(dst, &st, sizeof(st));
        return sizeof(st);
    }
    memcpy(dst, src, len);
    return len;
}

/* FW_ARG_COST: the clock cost of one pair of reads, subtracted from each
 * measured span (the mean of 64 back-to-back pairs). */
static uint64_t clock_pair_ns(void)
{
    uint64_t sum = 0;
    uint32_t k;
    for (k = 0; k < 64; k++) {
        uint64_t a = stamp_ns();
        sum += stamp_ns() - a;
    }
    return sum / 64u;
}

/* (stamp_ns: SysTick's period count can step back by a period under
 * -icount, when the counter reloaded before QEMU raised its interrupt) */
static void cost_add(fw_rsp *o, uint64_t t_a, uint64_t pair)
{
    uint64_t d = stamp_ns() - t_a;
    o->value2 += (uint32_t)(d > pair ? d - pair : 0);
}

/* fw_rx for FW_ARG_COST: *t_a = the clock before the dequeue that returned
 * the message (poll mode only) */
static int rx_timed(mdcom_fifoch_t *ch, uint32_t *id, uint32_t *len, uint64_t *t_a)
{
    uint64_t end = 0;
    uint32_t spins = 0;
    for (;;) {
        int r;
        *t_a = stamp_ns();
        r = mdcom_fifoch_dequeue(ch, id, len);
        if (r != -EAGAIN)
            return r;
        if (idle_over(&spins, &end))
            return -ETIMEDOUT;
    }
}

static int svc_echo(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    uint32_t expect = 0;
    uint64_t pair = (c->arg & FW_ARG_COST) ? clock_pair_ns() : 0, t_a = 0;
    while (o->count < c->count) {
        uint32_t in, out, len, n;
        uint64_t t_rx = 0;
        void *pi, *po;
        int r = (c->arg & FW_ARG_COST) && c->mode == FW_MODE_POLL
                    ? rx_timed(s->ein, &in, &len, &t_a)
                    : fw_rx(s->ein, c->mode, &in, &len);
        if (r)
            return r;
        if (c->arg & FW_ARG_STAMP)
            t_rx = stamp_ns();
        pi = blk(s->ein, s->ein_blk, in);
        if ((c->arg & FW_ARG_CHECK) && echo_bad(pi, len, &expect))
            o->value++;
        r = fw_tx_alloc(s->eout, c->mode, &out);
        if (r) {
            mdcom_fifoch_free(s->ein, in);
            return r;
        }
        po = blk(s->eout, s->eout_blk, out);
        n = echo_reply(po, pi, len, c->arg, t_rx);
        /* the reply first, then the request's block back (the order of the
         * RPMsg echo, whose receive buffer returns after the callback) */
        r = mdcom_fifoch_enqueue(s->eout, out, n);
        if (r) {
            mdcom_fifoch_free(s->eout, out);
            mdcom_fifoch_free(s->ein, in);
            return r;
        }
        mdcom_fifoch_notify(s->eout);
        mdcom_fifoch_free(s->ein, in);
        mdcom_fifoch_notify(s->ein); /* a sender may wait for a free block */
        if (c->arg & FW_ARG_COST)
            cost_add(o, t_a, pair);
        o->count++;
    }
    return 0;
}

/* ---- relay: two echo pairs, neither holding the other up ---- */

/* One pair of the relay: the output block taken ahead (UINT32_MAX: none
 * yet), so that a message is dequeued only when it can be echoed at once. */
typedef struct relay_pair {
    mdcom_fifoch_t *in, *out;
    uint32_t held;
} relay_pair;

/* 1 when a message was copied, 0 when there was none or no free output
 * block, else the error. */
static int relay_step(relay_pair *p)
{
    uint32_t in, len;
    void *pi, *po;
    int r;
    if (p->held == UINT32_MAX) {
        r = mdcom_fifoch_alloc(p->out, &p->held);
        if (r) {
            p->held = UINT32_MAX;
            return r == -ENOBUFS ? 0 : r;
        }
    }
    r = mdcom_fifoch_dequeue(p->in, &in, &len);
    if (r)
        return r == -EAGAIN ? 0 : r;
    pi = po = 0;
    mdcom_fifoch_get(p->in, in, &pi, 0);
    mdcom_fifoch_get(p->out, p->held, &po, 0);
    if (pi && po)
        memcpy(po, pi, len);
    /* the copy first, then the request's block back (as the echo) */
    r = mdcom_fifoch_enqueue(p->out, p->held, len);
    if (r)
        mdcom_fifoch_free(p->out, p->held);
    p->held = UINT32_MAX;
    mdcom_fifoch_notify(p->out);
    mdcom_fifoch_free(p->in, in);
    mdcom_fifoch_notify(p->in);
    return r ? r : 1;
}

static int svc_relay(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    relay_pair p[2] = {{s->ein, s->eout, UINT32_MAX}, {s->fin, s->fout, UINT32_MAX}};
    uint64_t end = 0;
    uint32_t spins = 0, k;
    int r = 0;
    if (!s->fin || !s->fout)
        return -ENOSYS;
    while (r >= 0 && o->count < c->count) {
        int moved = 0;
        for (k = 0; k < 2 && r >= 0; k++) {
            r = relay_step(&p[k]);
            if (r > 0) {
                o->count++;
                moved = 1;
            }
        }
        if (moved) {
            end = 0;
            spins = 0;
        } else if (r >= 0 && (spins & 1023u) == 1023u && (r = mdcom_heartbeat(s->m)) < 0) {
            /* idle: an empty dequeue neither beats nor says that the region
             * was terminated (what is queued can still be drained), so the
             * region's own check, once every 1024 empty polls, keeps the
             * heartbeat promise and sees the end */
        } else if (r >= 0 && idle_over(&spins, &end)) {
            r = -ETIMEDOUT;
        }
    }
    for (k = 0; k < 2; k++)
        if (p[k].held != UINT32_MAX)
            mdcom_fifoch_free(p[k].out, p[k].held);
    return r < 0 ? r : 0;
}

static int send_ack(fw_svc *s, uint32_t mode, uint32_t v)
{
    uint32_t id;
    void *p;
    int r = fw_tx_alloc(s->ack, mode, &id);
    if (r)
        return r;
    mdcom_fifoch_get(s->ack, id, &p, 0);
    memcpy(p, &v, sizeof(v));
    r = mdcom_fifoch_enqueue(s->ack, id, sizeof(v));
    if (r) {
        mdcom_fifoch_free(s->ack, id);
        return r;
    }
    return mdcom_fifoch_notify(s->ack);
}

/* Block-ack state: a transaction is a fw_ba_hdr, then length bytes in any
 * number of messages. The same for the FIFO and the RPMsg service. */
typedef struct ba_state {
    uint32_t in_tx, want, got;
} ba_state;

/* Feed one message: -EBADMSG when a transaction should start but the
 * message is no header; 1 when the transaction is complete (b->got bytes),
 * else 0. */
static int ba_feed(ba_state *b, const void *p, uint32_t len)
{
    uint32_t off = 0;
    if (!b->in_tx) {
        fw_ba_hdr h;
        if (len < sizeof(h))
            return -EBADMSG;
        memcpy(&h, p, sizeof(h));
        if (h.preamble != FW_BA_PREAMBLE)
            return -EBADMSG;
        b->in_tx = 1;
        b->want = h.length;
        b->got = 0;
        off = sizeof(h);
    }
    b->got += len - off;
    if (b->got < b->want)
        return 0;
    b->in_tx = 0;
    return 1;
}

static int svc_blockack(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    ba_state b = {0, 0, 0};
    while (o->count < c->count) {
        uint32_t id, len;
        void *p;
        int r = fw_rx(s->bulk, c->mode, &id, &len);
        if (r)
            return r;
        mdcom_fifoch_get(s->bulk, id, &p, 0);
        r = ba_feed(&b, p, len);
        o->value2 += len;
        mdcom_fifoch_free(s->bulk, id);
        mdcom_fifoch_notify(s->bulk);
        if (r < 0)
            o->value++;
        if (r == 1) {
            r = send_ack(s, c->mode, b.got);
            if (r)
                return r;
            o->count++;
        }
    }
    return 0;
}

static int svc_sink(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    while (o->count < c->count) {
        uint32_t id, len, first = 0;
        void *p;
        int r = fw_rx(s->bulk, c->mode, &id, &len);
        if (r)
            return r;
        mdcom_fifoch_get(s->bulk, id, &p, 0);
        if (len >= 4)
            memcpy(&first, p, 4);
        o->value += len;
        o->value2 += first;
        mdcom_fifoch_free(s->bulk, id);
        mdcom_fifoch_notify(s->bulk);
        o->count++;
    }
    return (c->arg & 1u) ? send_ack(s, c->mode, o->value) : 0;
}

static int svc_smem(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    volatile uint32_t *area;
    void *p;
    if (!s->state)
        return -ENOSYS;
    mdcom_smemch_get(s->state, &p, 0);
    area = (volatile uint32_t *)p;
    while (o->count < c->count) {
        int r = c->mode == FW_MODE_DOORBELL ? mdcom_smemch_lock(s->state, MS(FW_IDLE_MS))
                                            : mdcom_smemch_trylock(s->state);
        if (r == -EBUSY)
            continue;
        if (r)
            return r;
        if (fw_smem_bump(area, 0x4d34u)) /* "M4" holds it */
            o->value++;
        r = mdcom_smemch_unlock(s->state);
        if (r)
            return r;
        o->count++;
    }
    return 0;
}

static int svc_tm_msg(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(c->arg);
    uint32_t msg[4] = {1, 2, 3, 4}, back[4];
    if (!s->tm)
        return -ENOSYS;
    while (mdcom_bm_now_ns() < end) {
        uint32_t k;
        for (k = 0; k < 64; k++) {
            int r = mdcom_fifoch_send(s->tm, msg, sizeof(msg), MDCOM_POLL);
            if (r)
                return r;
            r = mdcom_fifoch_recv(s->tm, back, sizeof(back), MDCOM_POLL);
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

static int svc_tm_sync(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(c->arg);
    if (!s->tmsync)
        return -ENOSYS;
    while (mdcom_bm_now_ns() < end) {
        uint32_t k;
        for (k = 0; k < 64; k++) {
            int r = mdcom_smemch_trylock(s->tmsync);
            if (r)
                return r;
            r = mdcom_smemch_unlock(s->tmsync);
            if (r)
                return r;
        }
        o->count += 64;
    }
    return 0;
}

/* ---- RPMsg echo: remote (device) role over the "rpmsg" SMEM area ---- */

static uint64_t g_rp_state[2048] __attribute__((aligned(16)));

typedef struct rp_ctx {
    fw_rsp *out;
    uint32_t arg, expect;
    ba_state ba;
    uint8_t reply[FW_RPMSG_BUF_SIZE];
} rp_ctx;

static rp_ctx g_rp;

static int rp_echo_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    rp_ctx *x = priv;
    uint64_t t_rx = (x->arg & FW_ARG_STAMP) ? stamp_ns() : 0;
    int r;
    if (x->arg & FW_ARG_BLOCKACK) {
        r = ba_feed(&x->ba, data, (uint32_t)len);
        if (r <= 0) {
            if (r < 0)
                x->out->value++;
            return r;
        }
        r = mdcom_rpmsg_sendto(ept, &x->ba.got, sizeof(x->ba.got), src, MS(FW_IDLE_MS));
    } else {
        if ((x->arg & FW_ARG_CHECK) && echo_bad(data, (uint32_t)len, &x->expect))
            x->out->value++;
        if (x->arg & FW_ARG_STAMP) {
            uint32_t n = echo_reply(x->reply, data, (uint32_t)len, x->arg, t_rx);
            r = mdcom_rpmsg_sendto(ept, x->reply, n, src, MS(FW_IDLE_MS));
        } else { /* the echo: the send's copy is the one copy */
            r = mdcom_rpmsg_sendto(ept, data, len, src, MS(FW_IDLE_MS));
        }
    }
    if (r == 0)
        x->out->count++;
    else
        x->out->value++;
    return r;
}

static int svc_rpmsg(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    mdcom_rpmsg_t *rp;
    mdcom_rpmsg_ept_t *ept;
    void *area;
    uint32_t size;
    mdcom_rpmsg_opts ro;
    uint64_t pair;
    int r;
    if (!s->rpmsg)
        return -ENOSYS;
    memset(&ro, 0, sizeof(ro));
    ro.role = MDCOM_RPMSG_REMOTE;
    ro.geometry.num_bufs = FW_RPMSG_NUM_BUFS;
    ro.geometry.buf_size = FW_RPMSG_BUF_SIZE;
    ro.geometry.vring_align = FW_RPMSG_ALIGN;
    ro.spin_ns = c->mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    ro.attach_timeout_ns = MS(FW_IDLE_MS);
    mdcom_smemch_get(s->rpmsg, &area, &size);
    r = mdcom_rpmsg_init(&rp, g_rp_state, sizeof(g_rp_state), area, size, &ro);
    if (r)
        return r;
    memset(&g_rp.ba, 0, sizeof(g_rp.ba));
    g_rp.out = o;
    g_rp.arg = c->arg;
    g_rp.expect = 0;
    r = mdcom_rpmsg_ept_create(rp, &ept, FW_RPMSG_SERVICE, MDCOM_RPMSG_ADDR_ANY,
                               MDCOM_RPMSG_ADDR_ANY, rp_echo_cb, &g_rp, MS(FW_IDLE_MS));
    pair = (c->arg & FW_ARG_COST) ? clock_pair_ns() : 0;
    for (uint32_t polls = 0; r == 0 && o->count < c->count; polls++) {
        uint64_t t_a = (c->arg & FW_ARG_COST) ? stamp_ns() : 0;
        /* RPMsg calls are no mdcom calls: keep the heartbeat promise here
         * (a run can last over FW_HEARTBEAT_MS when the host is loaded) */
        if ((polls & 63u) == 0)
            (void)mdcom_heartbeat(s->m);
        r = mdcom_rpmsg_poll(rp, c->mode == FW_MODE_DOORBELL ? MS(FW_IDLE_MS) : MDCOM_POLL);
        if (r > 0 && (c->arg & FW_ARG_COST)) /* a message (and its reply) in this poll */
            cost_add(o, t_a, pair);
        if (r > 0)
            r = 0;
        /* poll mode: MDCOM_POLL returns 0 when nothing is pending; keep going
         * (the host ends the instance when done: -ESHUTDOWN) */
    }
    mdcom_rpmsg_term(rp);
    return r == -MDCOM_ESHUTDOWN ? 0 : r;
}

/* ---- raw spin echo: one word each way, no library call per round ---- */

static int svc_raw(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    uint32_t *w, last = 0, spins = 0, seen = 0;
    uint64_t end = 0;
    void *p;
    if (!s->raw)
        return -ENOSYS;
    mdcom_smemch_get(s->raw, &p, 0);
    w = (uint32_t *)p;
    while (o->count < c->count) {
        /* acquire: what the driver wrote before the ping is seen after it */
        uint32_t v = __atomic_load_n(&w[FW_RAW_PING], __ATOMIC_ACQUIRE);
        if (v == last) {
            if (idle_over(&spins, &end)) {
                if (seen == o->count)
                    return -ETIMEDOUT;
                seen = o->count; /* progress: another FW_IDLE_MS */
                end = 0;
            }
            continue;
        }
        if (c->arg & FW_ARG_STAMP) {
            uint64_t t = stamp_ns();
            __atomic_store_n(&w[FW_RAW_NS_LO], (uint32_t)t, __ATOMIC_RELAXED);
            __atomic_store_n(&w[FW_RAW_NS_HI], (uint32_t)(t >> 32), __ATOMIC_RELAXED);
        }
        /* release: the stamp is published with the pong */
        __atomic_store_n(&w[FW_RAW_PONG], v, __ATOMIC_RELEASE);
        last = v;
        o->count++;
    }
    return 0;
}

void fw_serve(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    if (s->op && s->op(s, c, o))
        return;
    switch (c->op) {
    case FW_OP_PING:
        o->value = mdcom_bm_boot_token();
        o->value2 = mdcom_bm_doorbell_count();
        break;
    case FW_OP_ECHO:
        o->status = svc_echo(s, c, o);
        break;
    case FW_OP_BLOCKACK:
        o->status = svc_blockack(s, c, o);
        break;
    case FW_OP_SINK:
        o->status = svc_sink(s, c, o);
        break;
    case FW_OP_SMEM:
        o->status = svc_smem(s, c, o);
        break;
    case FW_OP_TM_MSG:
        o->status = svc_tm_msg(s, c, o);
        break;
    case FW_OP_TM_SYNC:
        o->status = svc_tm_sync(s, c, o);
        break;
    case FW_OP_RPMSG_ECHO:
        o->status = svc_rpmsg(s, c, o);
        break;
    case FW_OP_RAW_ECHO:
        o->status = svc_raw(s, c, o);
        break;
    case FW_OP_RELAY:
        o->status = svc_relay(s, c, o);
        break;
    default:
        o->status = -ENOSYS;
        break;
    }
}

int fw_next(fw_svc *s, fw_cmd *c, fw_rsp *o)
{
    uint64_t t0;
    int r;
    for (;;) {
        r = mdcom_fifoch_recv(s->ctl, c, sizeof(*c), MDCOM_FOREVER);
        if (r == (int)sizeof(*c))
            break;
        if (r < 0 && r != -EMSGSIZE)
            fw_die(s->who, "ctl", r);
    }
    memset(o, 0, sizeof(*o));
    o->op = c->op;
    fw_set_mode(s, c->mode);
    t0 = mdcom_bm_now_ns();
    fw_serve(s, c, o);
    o->elapsed_us = (uint32_t)((mdcom_bm_now_ns() - t0) / 1000u);
    if (o->status) {
        mdcom_bm_puts(s->who);
        mdcom_bm_puts(": op ");
        mdcom_bm_put_u32(c->op);
        mdcom_bm_puts(" after ");
        mdcom_bm_put_u32(o->count);
        mdcom_bm_puts(": ");
        mdcom_bm_puts(mdcom_strerror(o->status));
        mdcom_bm_puts("\n");
        o->status = fw_errno_to_wire(o->status);
    }
    fw_set_mode(s, FW_MODE_POLL);
    r = mdcom_fifoch_send(s->rsp, o, sizeof(*o), MS(FW_IDLE_MS));
    if (r)
        mdcom_bm_puts("fw: rsp lost\n");
    return r;
}

int fw_resp_op(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    (void)s;
    (void)o;
    return c->op == FW_OP_RESET || c->op == FW_OP_EXIT || c->op == FW_OP_HANG;
}

void fw_resp_run(fw_svc *s)
{
    for (;;) {
        fw_cmd c;
        fw_rsp out;
        int r = fw_next(s, &c, &out);
        if (c.op == FW_OP_RESET) {
            /* let the host read the response first (up to 1 s): after the
             * reset the region is re-formatted and an unread response would
             * be gone (the host's recv says -ECONNRESET) */
            uint64_t until = mdcom_bm_now_ns() + MS(1000);
            mdcom_fifo_state st;
            while (r == 0 && mdcom_sense_fifoch(s->rsp, &st) == 0 && st.queued != 0 &&
                   mdcom_bm_now_ns() < until)
                ;
            mdcom_bm_puts("fw: reset\n");
            mdcom_bm_reset();
        }
        if (c.op == FW_OP_HANG) {
            uint32_t id;
            (void)mdcom_fifoch_alloc(s->rsp, &id); /* held when we hang */
            mdcom_bm_puts("fw: hang\n");
            for (;;)
                ; /* no mdcom call, no heartbeat */
        }
        if (c.op == FW_OP_EXIT) {
            mdcom_term(s->m);
            mdcom_bm_exit((int)c.arg);
        }
    }
}

/* the codes with which a call says the region ended (see fw_remote_run) */
static int region_ended(int r)
{
    return r == -MDCOM_ESHUTDOWN || r == -ECONNRESET || r == -ENOTCONN;
}

void fw_remote_run(fw_svc *s, const char *who, const char *banner, const mdcom_layout_table *layout,
                   uint32_t domain, const fw_cmd *c)
{
    uint64_t pause = MS(1);
    int last = 0;
    memset(s, 0, sizeof(*s));
    s->who = who;
    fw_banner(banner);
    for (;;) {
        char err[128];
        fw_rsp o;
        int r = fw_try_attach(&s->m, layout, domain, MS(100), FW_HEARTBEAT_MS, err, sizeof(err));
        if (r) {
            /* not formatted yet (or being formatted): a bounded backoff; a
             * new kind of failure is said once */
            uint64_t until = mdcom_bm_now_ns() + pause;
            if (r != last && r != -ETIMEDOUT) {
                mdcom_bm_puts(who);
                mdcom_bm_puts(": attach: ");
                mdcom_bm_puts(err);
                mdcom_bm_puts("\n");
            }
            last = r;
            while (mdcom_bm_now_ns() < until)
                ;
            if (pause < MS(50))
                pause *= 2;
            continue;
        }
        pause = MS(1);
        last = 0;
        fw_open(s);
        mdcom_bm_puts("ATTACHED\n");
        do {
            memset(&o, 0, sizeof(o));
            fw_set_mode(s, c->mode);
            fw_serve(s, c, &o);
            /* an idle spell ends the service; the region's own check then
             * tells an idle region from one that ended */
            if (o.status == 0 || o.status == -ETIMEDOUT)
                o.status = mdcom_heartbeat(s->m);
        } while (!region_ended(o.status) && (o.status == 0 || o.status == -ETIMEDOUT));
        mdcom_bm_puts(who);
        mdcom_bm_puts(": service ended (");
        mdcom_bm_puts(mdcom_strerror(o.status));
        mdcom_bm_puts("): attaching again\n");
        mdcom_term(s->m);
        s->m = 0;
    }
}
