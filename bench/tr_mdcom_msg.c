/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_mdcom_msg.c - the message interface of the mdcom FIFO transports (copy
 * API): what `blocks`, `throughput`, one-way latency and `thread-metric` use
 * for mdcom-copy-poll and mdcom-copy-block. (Their round trips are the ones of
 * tr_mdcom.c.)
 *
 * One region per session (mdcfg.h): per bench channel a FIFO "f<c>" A -> B
 * and "r<c>" B -> A, block_size = the largest message, block_count = the
 * depth asked for (>= 2).
 *   send: mdcom_fifoch_send (alloc, copy, enqueue, notify)
 *   recv: mdcom_fifoch_recv (dequeue, copy, free, notify)
 * poll: MDCOM_POLL calls in a loop with a pause (yielding every 64 pauses when
 * several threads share the CPUs); block: MDCOM_NO_SPIN and the timeout.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdcfg.h"
#include "mdcom/mdcom.h"
#include "transport.h"

struct mdm_ctx {
    bench_mdcfg mc;
    int block, yield;
    uint32_t n, max;
    int64_t timeout_ns;
    char errbuf[200];
    mdcom_t *master, *remote;
    mdcom_fifoch_t *tx[BENCH_MAX_CHAN], *rx[BENCH_MAX_CHAN];
};

static int mdm_fail(const struct mdm_ctx *c, const char *call, int rc)
{
    char what[96];
    snprintf(what, sizeof(what), "mdcom-copy-%s: %s", c->block ? "block" : "poll", call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

static int mdm_setup(void **out, const bench_msg_params *p, int block)
{
    struct mdm_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->block = block;
    c->yield = p->threads > 1;
    c->n = p->n_chan;
    c->max = p->max_size ? p->max_size : 1;
    c->timeout_ns = p->timeout_ns;
    bench_mdcfg_fill(&c->mc, p->name, c->n, MDCOM_CHAN_FIFO, c->max, p->depth < 2 ? 2 : p->depth);
    mdcom_init_opts o;
    memset(&o, 0, sizeof(o));
    o.errbuf = c->errbuf;
    o.errbuf_len = sizeof(c->errbuf);
    int rc = mdcom_init(&c->master, &c->mc.cfg, 0, &o);
    if (rc != 0) {
        mdm_fail(c, "mdcom_init", rc);
        if (c->errbuf[0])
            bench_err("  %s", c->errbuf);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int mdm_setup_poll(void **o, const bench_msg_params *p) { return mdm_setup(o, p, 0); }
static int mdm_setup_block(void **o, const bench_msg_params *p) { return mdm_setup(o, p, 1); }

static int mdm_attach(void *ctx, int side)
{
    struct mdm_ctx *c = ctx;
    mdcom_t *m = c->master;
    if (side == BENCH_SIDE_B) {
        mdcom_init_opts o;
        memset(&o, 0, sizeof(o));
        o.attach_timeout_ns = c->timeout_ns;
        o.errbuf = c->errbuf;
        o.errbuf_len = sizeof(c->errbuf);
        int rc = mdcom_init(&c->remote, &c->mc.cfg, 1, &o);
        if (rc != 0) {
            if (c->errbuf[0])
                bench_err("  %s", c->errbuf);
            return mdm_fail(c, "mdcom_init(remote)", rc);
        }
        m = c->remote;
    }
    for (uint32_t i = 0; i < c->n; i++) {
        const char *txn = c->mc.names[2 * i + (side == BENCH_SIDE_A ? 0 : 1)];
        const char *rxn = c->mc.names[2 * i + (side == BENCH_SIDE_A ? 1 : 0)];
        int rc = mdcom_fifoch_open(m, txn, &c->tx[i]);
        if (rc == 0)
            rc = mdcom_fifoch_open(m, rxn, &c->rx[i]);
        if (rc != 0)
            return mdm_fail(c, "mdcom_fifoch_open", rc);
        if (c->block) {
            mdcom_fifoch_set_spin(c->tx[i], MDCOM_NO_SPIN);
            mdcom_fifoch_set_spin(c->rx[i], MDCOM_NO_SPIN);
        }
    }
    return 0;
}

static void mdm_detach(void *ctx, int side)
{
    struct mdm_ctx *c = ctx;
    if (side == BENCH_SIDE_B && c->remote) {
        int rc = mdcom_term(c->remote);
        if (rc != 0)
            mdm_fail(c, "mdcom_term(remote)", rc);
        c->remote = NULL;
    }
}

static void mdm_teardown(void *ctx)
{
    struct mdm_ctx *c = ctx;
    int rc = mdcom_term(c->master);
    if (rc != 0)
        mdm_fail(c, "mdcom_term(master)", rc);
    free(c);
}

static int mdm_not_yet(int rc) { return rc == -EAGAIN || rc == -ETIMEDOUT || rc == -ENOBUFS; }

static int mdm_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    int rc;
    if (c->block) {
        do
            rc = mdcom_fifoch_send(c->tx[ch], buf, len, c->timeout_ns);
        while (rc == -EINTR);
    } else {
        uint64_t deadline = 0;
        for (unsigned spins = 1;; spins++) {
            rc = mdcom_fifoch_send(c->tx[ch], buf, len, MDCOM_POLL);
            if (!mdm_not_yet(rc))
                break;
            bench_relax();
            if (c->yield && (spins & 63u) == 0)
                sched_yield();
            if ((spins & 255u) == 0) {
                uint64_t now = bench_now_ns();
                if (!deadline)
                    deadline = now + (uint64_t)c->timeout_ns;
                else if (now > deadline)
                    break;
            }
        }
    }
    return rc == 0 ? 0 : mdm_fail(c, "mdcom_fifoch_send", rc);
}

static int mdm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    int rc;
    if (c->block) {
        do
            rc = mdcom_fifoch_recv(c->rx[ch], buf, cap, c->timeout_ns);
        while (rc == -EINTR);
    } else {
        uint64_t deadline = 0;
        for (unsigned spins = 1;; spins++) {
            rc = mdcom_fifoch_recv(c->rx[ch], buf, cap, MDCOM_POLL);
            if (!mdm_not_yet(rc))
                break;
            bench_relax();
            if (c->yield && (spins & 63u) == 0)
                sched_yield();
            if ((spins & 255u) == 0) {
                uint64_t now = bench_now_ns();
                if (!deadline)
                    deadline = now + (uint64_t)c->timeout_ns;
                else if (now > deadline)
                    break;
            }
        }
    }
    return rc >= 0 ? rc : mdm_fail(c, "mdcom_fifoch_recv", rc);
}

const bench_msg_ops bench_msg_mdcom_copy_poll = {.setup = mdm_setup_poll,
                                                 .attach = mdm_attach,
                                                 .send = mdm_send,
                                                 .recv = mdm_recv,
                                                 .detach = mdm_detach,
                                                 .teardown = mdm_teardown};
const bench_msg_ops bench_msg_mdcom_copy_block = {.setup = mdm_setup_block,
                                                  .attach = mdm_attach,
                                                  .send = mdm_send,
                                                  .recv = mdm_recv,
                                                  .detach = mdm_detach,
                                                  .teardown = mdm_teardown};
