/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_rpmsg.c - round trips through the RPMsg transport (src/rpmsg): the ping
 * side is the host (virtio driver), the pong side the remote (virtio device),
 * over an anonymous MAP_SHARED area created before fork.
 *
 *   geometry: 16 buffers per direction of align16(min(max_size, 65520) + 16)
 *             bytes, vrings aligned to 4096 (RPMsg cannot carry more than
 *             65520 bytes in one message: larger cells fail with -EMSGSIZE)
 *   handshake: the remote announces "bench" (name service), the host waits
 *             for it and binds an endpoint to it; the remote learns the host's
 *             address from the first ping.
 *   ping: mdcom_rpmsg_send (payload copied into a TX buffer), then dispatch
 *         until the reply's callback checked its stamps in the RX buffer.
 *   pong: the endpoint callback checks seq and stamps and answers from inside
 *         the callback with mdcom_rpmsg_send (RX buffer copied into a TX buffer).
 *   So one copy per direction, like the raw baselines.
 *
 *   rpmsg-poll:  dispatch with mdcom_rpmsg_poll(MDCOM_POLL) in a loop with a
 *                pause; never sleeps.                       baseline raw-spin
 *   rpmsg-block: spin disabled (MDCOM_NO_SPIN); mdcom_rpmsg_poll(timeout)
 *                sleeps on the doorbell whenever nothing is pending.
 *                                                           baseline raw-futex
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mdcom/rpmsg.h"
#include "transport.h"

#define TRP_NUM_BUFS 16u
#define TRP_MAX_PAYLOAD (MDCOM_RPMSG_MAX_BUF_SIZE - MDCOM_RPMSG_HDR_SIZE)

struct trp_ctx {
    const char *tname;
    int block;
    uint32_t size;
    int64_t timeout_ns;
    mdcom_rpmsg_opts opts;
    void *area;
    size_t area_size;
    void *state; /* private to each process after fork */
    size_t state_size;
    mdcom_rpmsg_t *r;
    mdcom_rpmsg_ept_t *ept;
    unsigned char *priv; /* ping side's payload */
    /* dispatch results */
    uint32_t last;      /* pong: last seq; ping: seq expected */
    int got;            /* a message arrived */
    int stop;           /* pong: BENCH_SEQ_STOP arrived */
    int bad;            /* integrity error seen */
    int err;            /* API error inside a callback */
};

static int trp_fail(struct trp_ctx *c, const char *side, const char *call, int rc)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s (%u B): %s", c->tname, side, c->size, call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

static int trp_setup(void **out, const bench_rt_params *p, const char *tname, int block)
{
    struct trp_ctx *c;
    mdcom_rpmsg_layout lay;
    uint32_t payload = p->max_size < TRP_MAX_PAYLOAD ? p->max_size : TRP_MAX_PAYLOAD;
    int rc;
    if (p->size > TRP_MAX_PAYLOAD) {
        bench_err("%s: %u B does not fit one RPMsg message (at most %u B)", tname, p->size,
                  TRP_MAX_PAYLOAD);
        return -EMSGSIZE;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->tname = tname;
    c->block = block;
    c->size = p->size;
    c->timeout_ns = p->timeout_ns;
    c->opts.geometry.num_bufs = TRP_NUM_BUFS;
    c->opts.geometry.buf_size = (payload + MDCOM_RPMSG_HDR_SIZE + 15u) & ~15u;
    if (c->opts.geometry.buf_size < MDCOM_RPMSG_MIN_BUF_SIZE)
        c->opts.geometry.buf_size = MDCOM_RPMSG_MIN_BUF_SIZE;
    c->opts.geometry.vring_align = MDCOM_RPMSG_DEFAULT_ALIGN;
    c->opts.max_endpoints = 2;
    c->opts.max_services = 2;
    c->opts.spin_ns = block ? MDCOM_NO_SPIN : 0;
    c->opts.attach_timeout_ns = p->timeout_ns;
    rc = mdcom_rpmsg_layout_compute(&c->opts.geometry, &lay);
    if (rc) {
        rc = trp_fail(c, "setup", "mdcom_rpmsg_layout_compute", rc);
        free(c);
        return rc;
    }
    c->area_size = lay.size;
    c->area = mmap(NULL, c->area_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    c->priv = malloc(p->size);
    c->opts.role = MDCOM_RPMSG_HOST;
    c->state_size = mdcom_rpmsg_state_size(&c->opts);
    c->state = aligned_alloc(64, (c->state_size + 63) & ~(size_t)63);
    if (c->area == MAP_FAILED || !c->priv || !c->state) {
        bench_err("%s: out of memory (%zu B area)", tname, c->area_size);
        if (c->area != MAP_FAILED)
            munmap(c->area, c->area_size);
        free(c->priv);
        free(c->state);
        free(c);
        return -ENOMEM;
    }
    memset(c->priv, 0x5a, p->size);
    *out = c;
    return 0;
}

static int trp_poll_setup(void **out, const bench_rt_params *p)
{
    return trp_setup(out, p, "rpmsg-poll", 0);
}
static int trp_block_setup(void **out, const bench_rt_params *p)
{
    return trp_setup(out, p, "rpmsg-block", 1);
}

/* Dispatch until cb sets c->got (or c->stop). */
static int trp_dispatch(struct trp_ctx *c, const char *side)
{
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    unsigned spins = 0;
    c->got = 0;
    while (!c->got && !c->stop) {
        int rc = mdcom_rpmsg_poll(c->r, c->block ? c->timeout_ns : MDCOM_POLL);
        if (rc < 0)
            return trp_fail(c, side, "mdcom_rpmsg_poll", rc);
        if (c->err)
            return trp_fail(c, side, "mdcom_rpmsg_send (in callback)", c->err);
        if (rc > 0)
            continue;
        if (c->block) {
            if (bench_now_ns() >= deadline)
                return trp_fail(c, side, "mdcom_rpmsg_poll", -ETIMEDOUT);
        } else {
            bench_relax();
            if ((++spins & 1023u) == 0 && bench_now_ns() >= deadline)
                return trp_fail(c, side, "mdcom_rpmsg_poll", -ETIMEDOUT);
        }
    }
    return 0;
}

static int trp_pong_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    struct trp_ctx *c = priv;
    uint32_t seq = len >= 4 ? bench_head(data) : 0;
    int rc;
    (void)src;
    c->got = 1;
    if (seq == BENCH_SEQ_STOP) {
        c->stop = 1;
        return 0;
    }
    if (len != c->size || seq != c->last + 1) {
        bench_err("%s pong: got seq %u (%zu B), expected %u (%u B)", c->tname, seq, len,
                  c->last + 1, c->size);
        c->bad = 1;
        c->stop = 1;
        return -EBADMSG;
    }
    if (!bench_stamp_ok(data, c->size, seq)) {
        bench_err("%s pong: payload of seq %u carries head %u, tail %u", c->tname, seq,
                  bench_head(data), c->size >= 8 ? bench_tail(data, c->size) : 0);
        c->bad = 1;
    }
    c->last = seq;
    rc = mdcom_rpmsg_send(ept, data, len, c->timeout_ns);
    if (rc)
        c->err = rc;
    return rc;
}

static int trp_pong(void *ctx)
{
    struct trp_ctx *c = ctx;
    int rc;
    c->opts.role = MDCOM_RPMSG_REMOTE;
    c->r = NULL; /* the parent's instance pointer is not ours */
    rc = mdcom_rpmsg_init(&c->r, c->state, c->state_size, c->area, c->area_size, &c->opts);
    if (rc)
        return trp_fail(c, "pong", "mdcom_rpmsg_init", rc);
    rc = mdcom_rpmsg_ept_create(c->r, &c->ept, "bench", MDCOM_RPMSG_ADDR_ANY,
                                MDCOM_RPMSG_ADDR_ANY, trp_pong_cb, c, c->timeout_ns);
    if (rc)
        return trp_fail(c, "pong", "mdcom_rpmsg_ept_create", rc);
    while (!c->stop) {
        rc = trp_dispatch(c, "pong");
        if (rc)
            break;
    }
    mdcom_rpmsg_term(c->r);
    if (rc)
        return rc;
    return c->bad ? BENCH_RT_MISMATCH : 0;
}

static int trp_ping_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    struct trp_ctx *c = priv;
    (void)ept;
    (void)src;
    c->got = 1;
    if (len != c->size || !bench_stamp_ok(data, c->size, c->last)) {
        bench_err("%s ping: reply of %zu B carries head %u, expected seq %u (%u B)", c->tname, len,
                  len >= 4 ? bench_head(data) : 0, c->last, c->size);
        c->bad = 1;
    }
    return 0;
}

static int trp_ping_open(void *ctx)
{
    struct trp_ctx *c = ctx;
    uint32_t addr = 0;
    int rc;
    c->opts.role = MDCOM_RPMSG_HOST;
    rc = mdcom_rpmsg_init(&c->r, c->state, c->state_size, c->area, c->area_size, &c->opts);
    if (rc)
        return trp_fail(c, "ping", "mdcom_rpmsg_init", rc);
    rc = mdcom_rpmsg_wait_service(c->r, "bench", &addr, c->timeout_ns);
    if (rc)
        return trp_fail(c, "ping", "mdcom_rpmsg_wait_service", rc);
    rc = mdcom_rpmsg_ept_create(c->r, &c->ept, "bench", MDCOM_RPMSG_ADDR_ANY, addr, trp_ping_cb,
                                c, c->timeout_ns);
    if (rc)
        return trp_fail(c, "ping", "mdcom_rpmsg_ept_create", rc);
    return 0;
}

static int trp_ping(void *ctx, uint32_t seq)
{
    struct trp_ctx *c = ctx;
    int rc;
    bench_stamp(c->priv, c->size, seq);
    c->last = seq;
    c->bad = 0;
    rc = mdcom_rpmsg_send(c->ept, c->priv, c->size, c->timeout_ns);
    if (rc)
        return trp_fail(c, "ping", "mdcom_rpmsg_send", rc);
    rc = trp_dispatch(c, "ping");
    if (rc)
        return rc;
    return c->bad ? BENCH_RT_MISMATCH : 0;
}

static void trp_stop(void *ctx)
{
    struct trp_ctx *c = ctx;
    uint32_t v = BENCH_SEQ_STOP;
    if (c->ept)
        (void)mdcom_rpmsg_send(c->ept, &v, sizeof(v), c->timeout_ns);
}

static void trp_teardown(void *ctx)
{
    struct trp_ctx *c = ctx;
    if (c->r)
        mdcom_rpmsg_term(c->r);
    munmap(c->area, c->area_size);
    free(c->priv);
    free(c->state);
    free(c);
}

const bench_transport bench_tr_rpmsg_poll = {
    .name = "rpmsg-poll",
    .desc = "RPMsg over virtio vrings (host <-> remote), polled dispatch, one copy each way",
    .wait_class = BENCH_WAIT_POLL,
    .baseline = "raw-spin",
    .setup = trp_poll_setup,
    .pong = trp_pong,
    .ping_open = trp_ping_open,
    .ping = trp_ping,
    .stop = trp_stop,
    .teardown = trp_teardown,
};

const bench_transport bench_tr_rpmsg_block = {
    .name = "rpmsg-block",
    .desc = "RPMsg over virtio vrings, sleeping on the doorbell, one copy each way",
    .wait_class = BENCH_WAIT_BLOCK,
    .baseline = "raw-futex",
    .setup = trp_block_setup,
    .pong = trp_pong,
    .ping_open = trp_ping_open,
    .ping = trp_ping,
    .stop = trp_stop,
    .teardown = trp_teardown,
};
