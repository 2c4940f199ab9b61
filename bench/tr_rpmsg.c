/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_rpmsg.c - round trips through mdcom's RPMsg transport (src/rpmsg): side
 * A is the host (virtio driver), side B the remote, over an anonymous shared
 * area made before fork; the remote announces "bench", the host binds to it.
 * The endpoint callback holds its RX buffer; the round trip answers from it.
 * Payloads up to 65520 B, one channel. Method: docs/benchmarks.md, "Transports".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdcom/rpmsg.h"
#include "transport.h"

#define TRP_NUM_BUFS 16u

struct trp_ctx {
    const char *tname;
    int block;
    int64_t timeout_ns;
    mdcom_rpmsg_opts opts;
    void *area;
    size_t area_size;
    void *state; /* private to each process after fork */
    size_t state_size;
    mdcom_rpmsg_t *r;
    mdcom_rpmsg_ept_t *ept;
    void *msg; /* the held RX buffer, or NULL */
    size_t len;
};

static int trp_fail(struct trp_ctx *c, const char *call, int rc)
{
    char what[160];
    snprintf(what, sizeof(what), "%s: %s", c->tname, call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

static void trp_teardown(void *ctx)
{
    struct trp_ctx *c = ctx;
    if (c->r)
        mdcom_rpmsg_term(c->r);
    bench_shared_free(c->area, c->area_size);
    free(c->state);
    free(c);
}

/* variant: 1 = sleep on the doorbell */
static int trp_setup(void **out, const bench_msg_params *p)
{
    mdcom_rpmsg_layout lay;
    if (p->n_chan != 1)
        return -EDQUOT; /* one endpoint pair */
    struct trp_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->tname = p->tname;
    c->block = p->variant;
    c->timeout_ns = p->timeout_ns;
    c->opts.role = MDCOM_RPMSG_HOST;
    c->opts.geometry.num_bufs = TRP_NUM_BUFS;
    c->opts.geometry.buf_size = (p->max_size + MDCOM_RPMSG_HDR_SIZE + 15u) & ~15u;
    if (c->opts.geometry.buf_size < MDCOM_RPMSG_MIN_BUF_SIZE)
        c->opts.geometry.buf_size = MDCOM_RPMSG_MIN_BUF_SIZE;
    c->opts.geometry.vring_align = MDCOM_RPMSG_DEFAULT_ALIGN;
    c->opts.max_endpoints = 2;
    c->opts.max_services = 2;
    c->opts.spin_ns = c->block ? MDCOM_NO_SPIN : 0;
    c->opts.attach_timeout_ns = p->timeout_ns;
    int rc = mdcom_rpmsg_layout_compute(&c->opts.geometry, &lay);
    if (rc) {
        rc = trp_fail(c, "mdcom_rpmsg_layout_compute", rc);
    } else {
        c->area_size = lay.size;
        c->area = bench_shared_alloc(c->area_size);
        c->state_size = mdcom_rpmsg_state_size(&c->opts);
        c->state = aligned_alloc(64, (c->state_size + 63) & ~(size_t)63);
        if (!c->area || !c->state) {
            bench_err("%s: out of memory (%zu B area)", c->tname, c->area_size);
            rc = -ENOMEM;
        }
    }
    if (rc)
        trp_teardown(c);
    else
        *out = c;
    return rc;
}

/* The endpoint callback: keep the message where it is. */
static int trp_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    struct trp_ctx *c = priv;
    (void)src;
    if (c->msg) {
        bench_err("%s: a second message before the first was released", c->tname);
        return -EBADMSG;
    }
    int rc = mdcom_rpmsg_hold_rx_buffer(ept, data);
    if (rc)
        return trp_fail(c, "mdcom_rpmsg_hold_rx_buffer", rc);
    c->msg = data;
    c->len = len;
    return 0;
}

static int trp_attach(void *ctx, int side)
{
    struct trp_ctx *c = ctx;
    uint32_t addr = MDCOM_RPMSG_ADDR_ANY;
    int rc;
    c->opts.role = side == BENCH_SIDE_A ? MDCOM_RPMSG_HOST : MDCOM_RPMSG_REMOTE;
    c->r = NULL; /* after fork: each side its own instance */
    rc = mdcom_rpmsg_init(&c->r, c->state, c->state_size, c->area, c->area_size, &c->opts);
    if (rc)
        return trp_fail(c, "mdcom_rpmsg_init", rc);
    if (side == BENCH_SIDE_A)
        rc = mdcom_rpmsg_wait_service(c->r, "bench", &addr, c->timeout_ns);
    if (rc)
        return trp_fail(c, "mdcom_rpmsg_wait_service", rc);
    rc = mdcom_rpmsg_ept_create(c->r, &c->ept, "bench", MDCOM_RPMSG_ADDR_ANY, addr, trp_cb, c,
                                c->timeout_ns);
    return rc ? trp_fail(c, "mdcom_rpmsg_ept_create", rc) : 0;
}

/* The remote ends at once; the host at teardown, once the remote has exited:
 * a host that ends first shuts the region down under a remote that has not
 * dispatched the last message yet (-ESHUTDOWN). */
static void trp_detach(void *ctx, int side)
{
    struct trp_ctx *c = ctx;
    if (side == BENCH_SIDE_A || !c->r)
        return;
    mdcom_rpmsg_term(c->r);
    c->r = NULL;
}

static int trp_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct trp_ctx *c = ctx;
    (void)side;
    (void)ch;
    int rc = mdcom_rpmsg_send(c->ept, buf, len, c->timeout_ns);
    return rc ? trp_fail(c, "mdcom_rpmsg_send", rc) : 0;
}

/* Dispatch until the callback holds a message. */
static int trp_peek(void *ctx, int side, uint32_t ch, const void **msg)
{
    struct trp_ctx *c = ctx;
    (void)side;
    (void)ch;
    uint64_t deadline = 0;
    for (unsigned spins = 1; !c->msg; spins++) {
        int rc = mdcom_rpmsg_poll(c->r, c->block ? c->timeout_ns : MDCOM_POLL);
        if (rc < 0)
            return trp_fail(c, "mdcom_rpmsg_poll", rc);
        if (rc > 0 || c->msg)
            continue;
        if ((c->block || (spins & 1023u) == 0) && bench_left_ns(&deadline, c->timeout_ns) <= 0)
            return trp_fail(c, "mdcom_rpmsg_poll", -ETIMEDOUT);
        if (!c->block)
            bench_relax();
    }
    *msg = c->msg;
    return (int)c->len;
}

static void trp_release(void *ctx, int side, uint32_t ch)
{
    struct trp_ctx *c = ctx;
    (void)side;
    (void)ch;
    int rc = c->msg ? mdcom_rpmsg_release_rx_buffer(c->ept, c->msg) : 0;
    c->msg = NULL;
    if (rc)
        trp_fail(c, "mdcom_rpmsg_release_rx_buffer", rc);
}

const bench_msg_ops bench_ops_rpmsg =
    BENCH_MSG_OPS(trp, .peek = trp_peek, .release = trp_release, .round_trips_only = 1);
