/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * m4_scen.c - Linux-side scenarios against the QEMU firmware (m4_scen.h).
 */
#define _GNU_SOURCE
#include "m4_scen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/rpmsg.h"
#include "mdcom_fw/oa_layout.h"
#include "mdcom_m4_cfg.h"

#define REPLY_NS 5000000000ll /* per reply */

double m4_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void m4_times_add(m4_times *t, double v)
{
    if (t && t->n < t->cap)
        t->v[t->n++] = v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double m4_times_pct(m4_times *t, double pct)
{
    uint32_t i;
    if (!t->n)
        return 0;
    qsort(t->v, t->n, sizeof(double), cmp_d);
    i = (uint32_t)(pct / 100.0 * (t->n - 1) + 0.5);
    return t->v[i];
}

double m4_times_mean(const m4_times *t)
{
    double s = 0;
    uint32_t i;
    for (i = 0; i < t->n; i++)
        s += t->v[i];
    return t->n ? s / t->n : 0;
}

int m4_link_attach(m4_link *l, int64_t timeout_ns)
{
    mdcom_init_opts o;
    int r;
    memset(&o, 0, sizeof(o));
    o.attach_timeout_ns = timeout_ns;
    o.errbuf = l->err;
    o.errbuf_len = sizeof(l->err);
    setenv("MDCOM_SHM_DIR", l->q.dir, 1);
    if (!l->db && l->q.socket_path[0]) {
        r = mdcom_doorbell_uart_open(&l->db, l->q.socket_path, 5000000000ll);
        if (r) {
            snprintf(l->err, sizeof(l->err), "doorbell %s: %s", l->q.socket_path,
                     mdcom_strerror(r));
            return r;
        }
    }
    o.platform = mdcom_doorbell_uart_platform(l->db);
    r = mdcom_init(&l->m, &mdcom_m4_config, MDCOM_M4_DOM_LINUX, &o);
    if (r)
        return r;
    if ((r = mdcom_fifoch_at(l->m, MDCOM_M4_CH_CTL, &l->ctl)) ||
        (r = mdcom_fifoch_at(l->m, MDCOM_M4_CH_RSP, &l->rsp)) ||
        (r = mdcom_fifoch_at(l->m, MDCOM_M4_CH_ECHO_IN, &l->ein)) ||
        (r = mdcom_fifoch_at(l->m, MDCOM_M4_CH_ECHO_OUT, &l->eout)) ||
        (r = mdcom_fifoch_at(l->m, MDCOM_M4_CH_BULK, &l->bulk)) ||
        (r = mdcom_fifoch_at(l->m, MDCOM_M4_CH_ACK, &l->ack)) ||
        (r = mdcom_smemch_at(l->m, MDCOM_M4_CH_STATE, &l->state)) ||
        (r = mdcom_smemch_at(l->m, MDCOM_M4_CH_RPMSG, &l->rpmsg)) ||
        (r = mdcom_smemch_at(l->m, MDCOM_M4_CH_RAW, &l->raw))) {
        snprintf(l->err, sizeof(l->err), "open channels: %s", mdcom_strerror(r));
        mdcom_term(l->m);
        l->m = NULL;
        return r;
    }
    return 0;
}

void m4_link_detach(m4_link *l)
{
    if (l->m)
        mdcom_term(l->m);
    l->m = NULL;
}

int m4_link_start(m4_link *l, const char *fw) { return m4_link_start_icount(l, fw, -1); }

int m4_link_start_icount(m4_link *l, const char *fw, int shift)
{
    mdcom_qemu_opts o;
    int r;
    memset(l, 0, sizeof(*l));
    memset(&o, 0, sizeof(o));
    o.firmware = fw;
    o.region_name = mdcom_m4_config.region_name;
    o.doorbell = 1;
    o.icount_shift = shift;
    r = mdcom_qemu_start(&l->q, &o, l->err, sizeof(l->err));
    if (r)
        return r;
    r = m4_link_attach(l, 5000000000ll);
    if (r)
        m4_link_stop(l);
    return r;
}

void m4_link_stop(m4_link *l)
{
    m4_link_detach(l);
    mdcom_doorbell_uart_close(l->db);
    l->db = NULL;
    mdcom_qemu_stop(&l->q);
}

static void set_mode(m4_link *l, uint32_t mode)
{
    uint32_t s = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    mdcom_fifoch_set_spin(l->eout, s);
    mdcom_fifoch_set_spin(l->ein, s);
    mdcom_fifoch_set_spin(l->bulk, s);
    mdcom_fifoch_set_spin(l->ack, s);
    mdcom_fifoch_set_spin(l->rsp, s);
}

/* Before a timed doorbell request: the link's doorbell_gap_ns (m4_scen.h), untimed. */
static void doorbell_gap(uint32_t mode, int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    if (mode == FW_MODE_DOORBELL && ns > 0)
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
}

/* A block: a message (rx: dequeue, -EAGAIN while none) or a free one
 * (alloc, -ENOBUFS while none). Poll: spin, reading the clock once every
 * 1024 tries (it is part of every timed round trip: the raw echo's spin
 * reads it as rarely), and then asking the channel whether the link was
 * shut down; doorbell: sleep in wait. */
static int take(mdcom_fifoch_t *ch, uint32_t mode, int rx, uint32_t *id, uint32_t *len, int64_t tmo)
{
    double end = 0;
    uint32_t tries = 0;
    for (;;) {
        int r = rx ? mdcom_fifoch_dequeue(ch, id, len) : mdcom_fifoch_alloc(ch, id);
        double now;
        if (r != (rx ? -EAGAIN : -ENOBUFS))
            return r;
        if (mode != FW_MODE_DOORBELL && (++tries & 1023u) != 0)
            continue;
        now = m4_now_ns();
        if (end == 0)
            end = now + (double)tmo;
        else if (now >= end)
            return -ETIMEDOUT;
        r = mdcom_fifoch_wait(ch, rx ? MDCOM_EV_RX : MDCOM_EV_TX,
                              mode == FW_MODE_DOORBELL ? (int64_t)(end - now) : MDCOM_POLL);
        if (r < 0 && r != -ETIMEDOUT)
            return r;
    }
}

static int rx_wait(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, uint32_t *len, int64_t tmo)
{
    return take(ch, mode, 1, id, len, tmo);
}

static int tx_alloc(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, int64_t tmo)
{
    return take(ch, mode, 0, id, NULL, tmo);
}

/* A free block of ch to write: its id and address. */
static int tx_block(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, void **p)
{
    int r = tx_alloc(ch, mode, id, REPLY_NS);
    if (r == 0)
        mdcom_fifoch_get(ch, *id, p, NULL);
    return r;
}

/* Queue block id (len bytes written) and wake a receiver. */
static int tx_queue(mdcom_fifoch_t *ch, uint32_t id, uint32_t len)
{
    int r = mdcom_fifoch_enqueue(ch, id, len);
    if (r == 0)
        mdcom_fifoch_notify(ch);
    return r;
}

/* The next message of ch: its id, length and address. */
static int rx_block(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, uint32_t *len, void **p)
{
    int r = rx_wait(ch, mode, id, len, REPLY_NS);
    if (r == 0)
        mdcom_fifoch_get(ch, *id, p, NULL);
    return r;
}

/* A message read: its block back to the pool, a waiting sender woken. */
static void rx_done(mdcom_fifoch_t *ch, uint32_t id)
{
    mdcom_fifoch_free(ch, id);
    mdcom_fifoch_notify(ch);
}

int m4_cmd(m4_link *l, uint32_t op, uint32_t mode, uint32_t count, uint32_t arg)
{
    fw_cmd c = {op, mode, count, arg};
    set_mode(l, mode);
    return mdcom_fifoch_send(l->ctl, &c, sizeof(c), REPLY_NS);
}

int m4_result(m4_link *l, fw_rsp *out, int64_t timeout_ns)
{
    int r = mdcom_fifoch_recv(l->rsp, out, sizeof(*out), timeout_ns);
    if (r < 0)
        return r;
    if (r != (int)sizeof(*out))
        return -EBADMSG;
    l->last = *out;
    return 0;
}

/* Fill buf with message i: fw_echo_hdr + plen bytes, CRC in the header. */
static uint32_t echo_fill(uint8_t *buf, uint32_t i, uint32_t plen)
{
    fw_echo_hdr *h = (fw_echo_hdr *)buf;
    uint32_t k;
    for (k = 0; k < plen; k++)
        buf[sizeof(*h) + k] = (uint8_t)(i * 7u + k);
    h->seq = i;
    h->len = plen;
    h->crc = fw_crc32(buf + sizeof(*h), plen);
    return (uint32_t)sizeof(*h) + plen;
}

/* The reply to message i (sent: len bytes) is what arg asks for: the echo
 * (seq, length and CRC checked), or a fw_stamp (seq and length checked; its
 * time stamp goes to ow with t0 / t3). 0 good, 1 bad. */
static int echo_reply_bad(const void *p, uint32_t rlen, uint32_t i, uint32_t len, uint32_t arg,
                          double t0, double t3, m4_ow *ow)
{
    if (arg & FW_ARG_STAMP) {
        fw_stamp st;
        double tf;
        if (rlen != sizeof(st))
            return 1;
        memcpy(&st, p, sizeof(st));
        tf = (double)(((uint64_t)st.fw_ns_hi << 32) | st.fw_ns_lo);
        if (ow) {
            m4_times_add(&ow->a, tf - t0);
            m4_times_add(&ow->b, tf - t3);
        }
        return st.seq != i || st.len != len;
    } else {
        fw_echo_hdr e;
        if (rlen != len || rlen < sizeof(e))
            return 1;
        memcpy(&e, p, sizeof(e));
        return e.seq != i || e.len != len - sizeof(e) ||
               fw_crc32((const uint8_t *)p + sizeof(e), e.len) != e.crc;
    }
}

int m4_echo_arg(m4_link *l, uint32_t n, uint32_t mode, int payload, uint32_t arg, m4_times *t,
                m4_ow *ow, uint32_t *fw_bad)
{
    uint8_t buf[512];
    uint32_t i, bad = 0;
    fw_rsp res;
    int r = m4_cmd(l, FW_OP_ECHO, mode, n, arg);
    if (r)
        return r;
    for (i = 0; i < n; i++) {
        uint32_t plen =
            payload >= 0 ? (uint32_t)payload : (i * 37u) % (512u - sizeof(fw_echo_hdr) + 1u);
        uint32_t id, len, mlen = echo_fill(buf, i, plen);
        void *p;
        double t0, t3;
        doorbell_gap(mode, l->doorbell_gap_ns);
        t0 = m4_now_ns();
        if ((r = tx_block(l->ein, mode, &id, &p)) != 0)
            return r;
        memcpy(p, buf, mlen);
        if ((r = tx_queue(l->ein, id, mlen)) != 0 ||
            (r = rx_block(l->eout, mode, &id, &len, &p)) != 0)
            return r;
        t3 = m4_now_ns(); /* the reply is in hand; its check is not timed */
        bad += (uint32_t)echo_reply_bad(p, len, i, mlen, arg, t0, t3, ow);
        rx_done(l->eout, id);
        m4_times_add(t, t3 - t0);
    }
    if ((r = m4_result(l, &res, REPLY_NS)) != 0)
        return r;
    if (fw_bad)
        *fw_bad = res.value;
    if (res.status)
        return res.status;
    return (int)bad + (res.count != n);
}

int m4_echo(m4_link *l, uint32_t n, uint32_t mode, int payload, m4_times *t, uint32_t *fw_bad)
{
    return m4_echo_arg(l, n, mode, payload, FW_ARG_CHECK, t, NULL, fw_bad);
}

int m4_raw_echo(m4_link *l, uint32_t n, uint32_t arg, m4_times *t, m4_ow *ow)
{
    uint32_t *w, i, bad = 0;
    void *p;
    fw_rsp res;
    int r;
    if (!l->raw)
        return -ENOSYS;
    mdcom_smemch_get(l->raw, &p, NULL);
    w = p;
    __atomic_store_n(&w[FW_RAW_PING], 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&w[FW_RAW_PONG], 0u, __ATOMIC_RELAXED);
    if ((r = m4_cmd(l, FW_OP_RAW_ECHO, FW_MODE_POLL, n, arg)) != 0)
        return r;
    for (i = 1; i <= n; i++) {
        double t0 = m4_now_ns(), t3, end = t0 + (double)REPLY_NS;
        uint32_t spins = 0;
        /* release: pairs with the firmware's acquire of the ping */
        __atomic_store_n(&w[FW_RAW_PING], i, __ATOMIC_RELEASE);
        /* acquire: the stamp words written before the pong are seen */
        while (__atomic_load_n(&w[FW_RAW_PONG], __ATOMIC_ACQUIRE) != i)
            if ((++spins & 4095u) == 0 && m4_now_ns() > end)
                return -ETIMEDOUT;
        t3 = m4_now_ns();
        m4_times_add(t, t3 - t0);
        if ((arg & FW_ARG_STAMP) && ow) {
            double tf =
                (double)(((uint64_t)__atomic_load_n(&w[FW_RAW_NS_HI], __ATOMIC_RELAXED) << 32) |
                         __atomic_load_n(&w[FW_RAW_NS_LO], __ATOMIC_RELAXED));
            m4_times_add(&ow->a, tf - t0);
            m4_times_add(&ow->b, tf - t3);
        }
    }
    if ((r = m4_result(l, &res, REPLY_NS)) != 0)
        return r;
    if (res.status)
        return res.status;
    return (int)bad + (res.count != n);
}

int m4_ow_offset(const m4_ow *ow, double *theta, double *halfwidth)
{
    double hi = 0, lo = 0;
    uint32_t i;
    if (!ow->a.n || !ow->b.n)
        return -ENODATA;
    for (i = 0; i < ow->a.n; i++)
        if (i == 0 || ow->a.v[i] < hi)
            hi = ow->a.v[i];
    for (i = 0; i < ow->b.n; i++)
        if (i == 0 || ow->b.v[i] > lo)
            lo = ow->b.v[i];
    /* a stamp tf is the arrival rounded down by < q: theta < min(a) + q, and
     * each one-way time lies in [a - theta, a - theta + q): centre it */
    hi += FW_STAMP_RES_NS;
    *theta = (hi + lo) / 2 - FW_STAMP_RES_NS / 2.0;
    *halfwidth = (hi - lo) / 2 + FW_STAMP_RES_NS / 2.0;
    return lo <= hi ? 0 : -ERANGE;
}

/* Fill the next chunk (cap bytes at b) of a block-ack message of total
 * bytes filled with v: the first chunk starts with the fw_ba_hdr. Advances
 * *sent and clears *first; returns the chunk's length. */
static uint32_t ba_fill(uint8_t *b, uint32_t cap, uint32_t total, uint32_t *sent, uint32_t *first,
                        uint8_t v)
{
    uint32_t off = 0, room;
    if (*first) {
        fw_ba_hdr h = {FW_BA_PREAMBLE, total};
        memcpy(b, &h, sizeof(h));
        off = sizeof(h);
        *first = 0;
    }
    room = cap - off;
    if (room > total - *sent)
        room = total - *sent;
    memset(b + off, v, room);
    *sent += room;
    return off + room;
}

int m4_blockack(m4_link *l, uint32_t n, uint32_t bytes, uint32_t chunk, uint32_t mode, m4_times *t)
{
    uint32_t i, bad = 0;
    fw_rsp res;
    int r = m4_cmd(l, FW_OP_BLOCKACK, mode, n, 0);
    if (r)
        return r;
    for (i = 0; i < n; i++) {
        uint32_t sent = 0, id, len, first = 1, ackv = 0;
        double t0;
        void *p;
        doorbell_gap(mode, l->doorbell_gap_ns);
        t0 = m4_now_ns();
        while (first || sent < bytes) {
            uint32_t clen;
            if ((r = tx_block(l->bulk, mode, &id, &p)) != 0)
                return r;
            clen = ba_fill(p, chunk, bytes, &sent, &first, (uint8_t)i);
            if ((r = tx_queue(l->bulk, id, clen)) != 0)
                return r;
        }
        if ((r = rx_block(l->ack, mode, &id, &len, &p)) != 0)
            return r;
        if (len == 4)
            memcpy(&ackv, p, 4);
        if (len != 4 || ackv != bytes)
            bad++;
        rx_done(l->ack, id);
        m4_times_add(t, m4_now_ns() - t0);
    }
    if ((r = m4_result(l, &res, REPLY_NS)) != 0)
        return r;
    if (res.status)
        return res.status;
    return (int)(bad + res.value + (res.count != n));
}

int m4_sink(m4_link *l, uint32_t n, uint32_t bytes, uint32_t mode, double *ns_total)
{
    uint32_t i, id, len, ackv = 0;
    uint64_t sum = 0;
    fw_rsp res;
    void *p;
    double t0;
    int r = m4_cmd(l, FW_OP_SINK, mode, n, 1);
    if (r)
        return r;
    t0 = m4_now_ns();
    for (i = 0; i < n; i++) {
        if ((r = tx_block(l->bulk, mode, &id, &p)) != 0)
            return r;
        memset(p, (int)(i & 0xff), bytes); /* the sender writes the whole message */
        memcpy(p, &i, 4);
        sum += i;
        if ((r = tx_queue(l->bulk, id, bytes)) != 0)
            return r;
    }
    if ((r = rx_block(l->ack, mode, &id, &len, &p)) != 0)
        return r;
    *ns_total = m4_now_ns() - t0;
    memcpy(&ackv, p, 4);
    mdcom_fifoch_free(l->ack, id);
    if ((r = m4_result(l, &res, REPLY_NS)) != 0)
        return r;
    if (res.status)
        return res.status;
    return (ackv == (uint64_t)n * bytes && res.value2 == (uint32_t)sum && res.count == n)
               ? 0
               : -EBADMSG;
}

int m4_smem(m4_link *l, uint32_t n, uint32_t mode)
{
    volatile uint32_t *area;
    void *p;
    uint32_t i, errs = 0, start;
    fw_rsp res;
    int r;
    mdcom_smemch_get(l->state, &p, NULL);
    area = p;
    if ((r = mdcom_smemch_lock(l->state, REPLY_NS)) != 0)
        return r;
    start = area[0];
    mdcom_smemch_unlock(l->state);
    if ((r = m4_cmd(l, FW_OP_SMEM, mode, n, 0)) != 0)
        return r;
    /* The firmware takes the lock n times first, then Linux does. Not at
     * the same time: QEMU runs this one-vCPU machine without CF_PARALLEL,
     * so the firmware's STREX is a non-atomic load/compare/store against
     * this process, and a lock contended across the boundary can be lost
     * or doubled by the emulator (docs/reliability.md, "Closed ... formerly known gap 5": an386 only).
     * Contention between Linux processes is tested in tests/mp. */
    if ((r = m4_result(l, &res, REPLY_NS * 4)) != 0)
        return r;
    if (res.status)
        return res.status;
    for (i = 0; i < n; i++) {
        if (mode == FW_MODE_DOORBELL)
            r = mdcom_smemch_lock(l->state, REPLY_NS);
        else
            while ((r = mdcom_smemch_trylock(l->state)) == -EBUSY)
                ;
        if (r)
            return r;
        errs += (uint32_t)fw_smem_bump(area, 0x4c58u); /* "LX" holds it */
        if ((r = mdcom_smemch_unlock(l->state)) != 0)
            return r;
    }
    if ((r = mdcom_smemch_lock(l->state, REPLY_NS)) != 0)
        return r;
    if (area[0] != start + 2 * n)
        errs++;
    mdcom_smemch_unlock(l->state);
    return (int)(errs + res.value);
}

/* ---- RPMsg echo: Linux = host (driver) role ---- */
typedef struct rp_ctx {
    uint32_t got, bad, expect_len, seq, ba, arg;
    double t0, t3; /* the current message's send and reply times */
    m4_ow *ow;
} rp_ctx;

/* The reply is checked here, after its time is taken: the same checks as
 * the FIFO echo's (echo_reply_bad), not timed either. */
static int rp_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    rp_ctx *c = priv;
    uint32_t v = 0;
    (void)ept;
    (void)src;
    c->t3 = m4_now_ns();
    if (c->ba) {
        if (len >= 4)
            memcpy(&v, data, 4);
        if (len != 4 || v != c->expect_len)
            c->bad++;
    } else if (echo_reply_bad(data, (uint32_t)len, c->seq, c->expect_len, c->arg, c->t0, c->t3,
                              c->ow)) {
        c->bad++;
    }
    c->got++;
    return 0;
}

/* Dispatch until the callback counted `want` replies, or the clock passes
 * end (read once every 1024 empty polls, as take() does). */
static int rp_reply(mdcom_rpmsg_t *rp, rp_ctx *c, uint32_t want, uint32_t mode, double end)
{
    uint32_t tries = 0;
    while (c->got < want) {
        int p = mdcom_rpmsg_poll(rp, mode == FW_MODE_DOORBELL ? REPLY_NS : MDCOM_POLL);
        if (p < 0)
            return p;
        if ((mode == FW_MODE_DOORBELL || (++tries & 1023u) == 0) && m4_now_ns() > end)
            return -ETIMEDOUT;
    }
    return 0;
}

/* ba = 0: n echoes of payload-byte messages (fw_echo_hdr + payload - 12
 * bytes, arg: FW_ARG_*); ba = 1: n block-ack transactions of payload bytes
 * in messages of at most the RPMsg payload size. */
static int rpmsg_run(m4_link *l, uint32_t n, uint32_t mode, uint32_t payload, m4_times *t, int ba,
                     uint32_t arg, m4_ow *ow)
{
    mdcom_rpmsg_opts o;
    mdcom_rpmsg_t *rp;
    mdcom_rpmsg_ept_t *ept;
    void *area, *state;
    uint32_t size, addr, i;
    size_t ss;
    rp_ctx c = {0, 0, payload, 0, (uint32_t)ba, arg, 0, 0, ow};
    uint8_t buf[512];
    fw_rsp res;
    int r;
    memset(&o, 0, sizeof(o));
    o.role = MDCOM_RPMSG_HOST;
    o.geometry.num_bufs = FW_RPMSG_NUM_BUFS;
    o.geometry.buf_size = FW_RPMSG_BUF_SIZE;
    o.geometry.vring_align = FW_RPMSG_ALIGN;
    o.platform = mdcom_doorbell_uart_platform(l->db);
    o.spin_ns = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    ss = mdcom_rpmsg_state_size(&o);
    state = aligned_alloc(16, (ss + 15) & ~(size_t)15);
    if (!state)
        return -ENOMEM;
    mdcom_smemch_get(l->rpmsg, &area, &size);
    r = mdcom_rpmsg_init(&rp, state, ss, area, size, &o);
    if (r)
        goto out_free;
    if (!ba && payload < sizeof(fw_echo_hdr))
        return -EINVAL;
    if ((r = m4_cmd(l, FW_OP_RPMSG_ECHO, mode, n, ba ? FW_ARG_BLOCKACK : arg)) != 0)
        goto out_term;
    if ((r = mdcom_rpmsg_wait_service(rp, FW_RPMSG_SERVICE, &addr, REPLY_NS)) != 0)
        goto out_term;
    if ((r = mdcom_rpmsg_ept_create(rp, &ept, NULL, MDCOM_RPMSG_ADDR_ANY, addr, rp_cb, &c,
                                    REPLY_NS)) != 0)
        goto out_term;
    for (i = 0; i < n && r == 0; i++) {
        double t0, end;
        uint32_t want = c.got + 1, mlen = ba ? 0 : echo_fill(buf, i, payload - sizeof(fw_echo_hdr));
        c.seq = i;
        doorbell_gap(mode, l->doorbell_gap_ns);
        c.t0 = t0 = m4_now_ns();
        end = t0 + (double)REPLY_NS;
        if (ba) {
            uint32_t sent = 0, max = mdcom_rpmsg_max_payload(rp), first = 1;
            while (r == 0 && (first || sent < payload)) {
                uint32_t clen = ba_fill(buf, max, payload, &sent, &first, (uint8_t)i);
                r = mdcom_rpmsg_send(ept, buf, clen, REPLY_NS);
            }
        } else {
            r = mdcom_rpmsg_send(ept, buf, mlen, REPLY_NS);
        }
        if (r == 0)
            r = rp_reply(rp, &c, want, mode, end);
        if (r == 0)
            m4_times_add(t, c.t3 - t0);
    }
out_term:
    mdcom_rpmsg_term(rp); /* the firmware's waits end (-ESHUTDOWN) */
    if (r == 0 || r == -ETIMEDOUT) {
        int r2 = m4_result(l, &res, REPLY_NS * 3);
        if (r == 0)
            r = r2 ? r2 : res.status;
    }
out_free:
    free(state);
    return r ? r : (int)c.bad;
}

int m4_rpmsg_echo_arg(m4_link *l, uint32_t n, uint32_t mode, uint32_t bytes, uint32_t arg,
                      m4_times *t, m4_ow *ow)
{
    return rpmsg_run(l, n, mode, bytes, t, 0, arg, ow);
}

int m4_rpmsg_echo(m4_link *l, uint32_t n, uint32_t mode, uint32_t bytes, m4_times *t)
{
    return rpmsg_run(l, n, mode, bytes, t, 0, FW_ARG_CHECK, NULL);
}

int m4_rpmsg_blockack(m4_link *l, uint32_t n, uint32_t bytes, uint32_t mode, m4_times *t)
{
    return rpmsg_run(l, n, mode, bytes, t, 1, 0, NULL);
}

/* ---- OpenAMP's RPMsg as the firmware (mdcom-fw-openamp) ---- */

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* The resource table of mdcom_fw/oa_layout.h: one rpmsg vdev (F_NS), two
 * vrings at their device addresses. */
static void oa_write_table(uint8_t *mem)
{
    uint8_t *v = mem + FW_OA_RSC + FW_OA_VDEV;
    uint32_t i;
    memset(mem + FW_OA_RSC, 0, FW_OA_RSC_SIZE);
    wr32(mem + FW_OA_RSC + 4, 1);           /* num */
    wr32(mem + FW_OA_RSC + 16, FW_OA_VDEV); /* offset[0] */
    wr32(v + 0, MDCOM_RSC_VDEV);
    wr32(v + 4, MDCOM_VIRTIO_ID_RPMSG);
    wr32(v + 8, 2);  /* notify id of the vdev */
    wr32(v + 12, 1); /* dfeatures: VIRTIO_RPMSG_F_NS */
    v[25] = 2;       /* num_of_vrings */
    for (i = 0; i < 2; i++) {
        uint8_t *r = v + 28 + 20 * i;
        wr32(r + 0, FW_OA_DA + (i ? FW_OA_VRING1 : FW_OA_VRING0));
        wr32(r + 4, FW_OA_ALIGN);
        wr32(r + 8, FW_OA_NUM);
        wr32(r + 12, i); /* notify id */
    }
    wr32(mem + FW_OA_RSC, 1); /* ver, last */
}

static void oa_notify(void *ctx, uint32_t vq)
{
    m4_oa *o = ctx;
    mdcom_doorbell d = mdcom_doorbell_uart(o->db);
    (void)vq;
    d.ring(d.ctx, NULL, 0);
}

/* The image bumps no word: the wait ends on a doorbell byte (or the
 * doorbell's re-check slice). */
static int oa_wait(void *ctx, int64_t timeout_ns)
{
    m4_oa *o = ctx;
    mdcom_doorbell d = mdcom_doorbell_uart(o->db);
    mdcom_aword never = 0;
    return d.wait(d.ctx, &never, 0, timeout_ns);
}

int m4_oa_start(m4_oa *o, const char *fw) { return m4_oa_start_icount(o, fw, -1); }

int m4_oa_start_icount(m4_oa *o, const char *fw, int shift)
{
    mdcom_qemu_opts qo;
    mdcom_rpmsg_opts ro;
    mdcom_rsc_vdev *vdev;
    uint32_t addr;
    size_t ss;
    int r, fd;
    memset(o, 0, sizeof(*o));
    memset(&qo, 0, sizeof(qo));
    qo.firmware = fw;
    qo.region_name = "oa";
    qo.doorbell = 1;
    qo.icount_shift = shift;
    if ((r = mdcom_qemu_prepare(&o->q, &qo, o->err, sizeof(o->err))) != 0)
        return r;
    fd = open(o->q.region_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        r = -errno;
        goto fail;
    }
    o->mem = mmap(NULL, MDCOM_QEMU_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (o->mem == MAP_FAILED) {
        o->mem = NULL;
        r = -errno;
        goto fail;
    }
    oa_write_table(o->mem);
    /* the image sleeps until a run asks it to poll */
    ((volatile uint32_t *)(o->mem + FW_OA_CTL))[FW_OA_MODE] = 1;
    /* no mdcom region to wait for: the host side below waits for the
     * image's name service announcement */
    if ((r = mdcom_qemu_launch(&o->q, &qo, o->err, sizeof(o->err))) != 0)
        goto fail;
    if ((r = mdcom_doorbell_uart_open(&o->db, o->q.socket_path, 5000000000ll)) != 0) {
        snprintf(o->err, sizeof(o->err), "doorbell: %s", mdcom_strerror(r));
        goto fail;
    }
    if ((r = mdcom_rsc_find_rpmsg(o->mem + FW_OA_RSC, FW_OA_RSC_SIZE, &vdev)) != 0 ||
        (r = mdcom_rpmsg_bind_from_rsc(&o->bind, vdev, o->mem, FW_OA_DA, FW_OA_SIZE,
                                       FW_OA_DA + FW_OA_POOL, FW_OA_BUF)) != 0) {
        snprintf(o->err, sizeof(o->err), "resource table: %s", mdcom_strerror(r));
        goto fail;
    }
    o->bind.notify = oa_notify;
    o->bind.wait = oa_wait;
    o->bind.ctx = o;
    memset(&ro, 0, sizeof(ro));
    ro.role = MDCOM_RPMSG_HOST;
    ro.spin_ns = MDCOM_NO_SPIN; /* doorbell mode sleeps at once; poll mode never waits */
    ro.attach_timeout_ns = REPLY_NS;
    ss = mdcom_rpmsg_state_size_bound(FW_OA_NUM, &ro);
    o->state = aligned_alloc(64, (ss + 63) & ~(size_t)63);
    o->cb = calloc(1, sizeof(rp_ctx));
    if (!o->state || !o->cb) {
        r = -ENOMEM;
        goto fail;
    }
    if ((r = mdcom_rpmsg_init_bound(&o->r, o->state, ss, &o->bind, &ro)) != 0 ||
        (r = mdcom_rpmsg_wait_service(o->r, FW_OA_SERVICE, &addr, REPLY_NS)) != 0 ||
        (r = mdcom_rpmsg_ept_create(o->r, &o->ept, NULL, MDCOM_RPMSG_ADDR_ANY, addr, rp_cb, o->cb,
                                    REPLY_NS)) != 0) {
        snprintf(o->err, sizeof(o->err), "RPMsg host against OpenAMP: %s", mdcom_strerror(r));
        goto fail;
    }
    return 0;
fail:
    m4_oa_stop(o);
    return r;
}

int m4_oa_echo(m4_oa *o, uint32_t n, uint32_t mode, uint32_t bytes, m4_times *t)
{
    volatile uint32_t *ctl = (volatile uint32_t *)(o->mem + FW_OA_CTL);
    rp_ctx *c = o->cb;
    uint8_t buf[512];
    uint32_t i, echoed0 = ctl[FW_OA_ECHOED], errors0 = ctl[FW_OA_ERRORS];
    int r = 0;
    if (!o->ept || bytes < sizeof(fw_echo_hdr) || bytes > sizeof(buf))
        return -EINVAL;
    memset(c, 0, sizeof(*c));
    c->expect_len = bytes;
    /* release: nothing to publish with it; the image reads it each turn */
    __atomic_store_n(&ctl[FW_OA_MODE], mode == FW_MODE_DOORBELL ? 1u : 0u, __ATOMIC_RELEASE);
    for (i = 0; i < n && r == 0; i++) {
        uint32_t want = c->got + 1, mlen = echo_fill(buf, i, bytes - sizeof(fw_echo_hdr));
        double t0, end;
        c->seq = i;
        doorbell_gap(mode, o->doorbell_gap_ns);
        c->t0 = t0 = m4_now_ns();
        end = t0 + (double)REPLY_NS;
        r = mdcom_rpmsg_send(o->ept, buf, mlen, REPLY_NS);
        if (r == 0)
            r = rp_reply(o->r, c, want, mode, end);
        if (r == 0)
            m4_times_add(t, c->t3 - t0);
    }
    /* between runs the image sleeps (it must not spin while other images
     * are measured) */
    __atomic_store_n(&ctl[FW_OA_MODE], 1u, __ATOMIC_RELEASE);
    if (r)
        return r;
    /* the image's own count: every message echoed (it counts after its send
     * returned: give the last one time), no failed send */
    for (i = 0; i < 1000 && ctl[FW_OA_ECHOED] - echoed0 != n; i++)
        usleep(1000);
    return (int)c->bad + (ctl[FW_OA_ECHOED] - echoed0 != n) + (ctl[FW_OA_ERRORS] != errors0);
}

int m4_oa_cost(m4_oa *o, uint32_t n, uint32_t bytes, double *instr)
{
    volatile uint32_t *ctl;
    int r;
    if (!o->mem)
        return -EINVAL;
    ctl = (volatile uint32_t *)(o->mem + FW_OA_CTL);
    ctl[FW_OA_COST] = 0;
    ctl[FW_OA_COST_N] = 0;
    /* release: the zeroed sums are seen before the image starts adding */
    __atomic_store_n(&ctl[FW_OA_COSTING], 1u, __ATOMIC_RELEASE);
    r = m4_oa_echo(o, n, FW_MODE_POLL, bytes, NULL);
    __atomic_store_n(&ctl[FW_OA_COSTING], 0u, __ATOMIC_RELEASE);
    if (r == 0)
        *instr = ctl[FW_OA_COST_N] ? (double)ctl[FW_OA_COST] / ctl[FW_OA_COST_N] : -1;
    return r;
}

void m4_oa_stop(m4_oa *o)
{
    if (o->r)
        mdcom_rpmsg_term(o->r);
    o->r = NULL;
    o->ept = NULL;
    free(o->state);
    free(o->cb);
    o->state = o->cb = NULL;
    mdcom_doorbell_uart_close(o->db);
    o->db = NULL;
    if (o->mem)
        munmap(o->mem, MDCOM_QEMU_REGION_SIZE);
    o->mem = NULL;
    mdcom_qemu_stop(&o->q);
}
