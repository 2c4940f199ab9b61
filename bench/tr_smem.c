/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_smem.c - mdcom SMEM channels as a message transport: a one-slot mailbox
 * per direction, kept in the channel's shared area and guarded by its lock.
 *
 * Per bench channel two SMEM channels (mdcfg.h) "f<c>" (A -> B) and "r<c>"
 * (B -> A), each of 64 + max_size bytes:
 *
 *   +0   u32 full   0 = empty, 1 = a message is there (C11 atomic)
 *   +4   u32 len    its length
 *   +64  payload    max_size bytes
 *
 *   send: wait until full == 0; mdcom_smemch_lock; write payload and len;
 *         full = 1; mdcom_smemch_unlock
 *   recv: wait until full == 1; mdcom_smemch_lock; copy len bytes out;
 *         full = 0; mdcom_smemch_unlock
 * The wait reads `full` with an atomic acquire load without the lock (a peek),
 * so that a waiting side does not take the lock away from the side that has
 * work; the lock is then taken once per message and side, and everything the
 * side reads or writes in the area is done holding it. Polling only (the
 * model gives SMEM channels no event); yields every 64 pauses when several
 * threads share the CPUs. Baseline: raw-spin.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdcfg.h"
#include "mdcom/mdcom.h"
#include "transport.h"

#define SM_HDR 64u
#define SM_NAME "mdcom-smem-poll"

struct sm_ctx {
    bench_mdreg reg;
    int yield;
    uint32_t n, max;
    int64_t timeout_ns;
    mdcom_smemch_t *tx[BENCH_MAX_CHAN], *rx[BENCH_MAX_CHAN];
    unsigned char *txa[BENCH_MAX_CHAN], *rxa[BENCH_MAX_CHAN];
};

static int sm_fail(const char *call, int rc)
{
    char what[96];
    snprintf(what, sizeof(what), SM_NAME ": %s", call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

static int sm_setup(void **out, const bench_msg_params *p)
{
    struct sm_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->yield = p->threads > 1;
    c->n = p->n_chan;
    c->max = p->max_size;
    c->timeout_ns = p->timeout_ns;
    if (p->max_size > UINT32_MAX - SM_HDR) {
        free(c);
        return -EMSGSIZE;
    }
    bench_mdcfg_fill(&c->reg.mc, p->name, c->n, MDCOM_CHAN_SMEM, SM_HDR + p->max_size, 0);
    int rc = bench_mdreg_attach(&c->reg, BENCH_SIDE_A, 0, SM_NAME);
    if (rc != 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int sm_attach(void *ctx, int side)
{
    struct sm_ctx *c = ctx;
    if (side == BENCH_SIDE_B && bench_mdreg_attach(&c->reg, side, c->timeout_ns, SM_NAME) != 0)
        return -ENOTCONN;
    mdcom_t *m = bench_mdreg_of(&c->reg, side);
    for (uint32_t i = 0; i < c->n; i++) {
        const char *txn = c->reg.mc.names[2 * i + (side == BENCH_SIDE_A ? 0 : 1)];
        const char *rxn = c->reg.mc.names[2 * i + (side == BENCH_SIDE_A ? 1 : 0)];
        void *p;
        uint32_t size;
        int rc = mdcom_smemch_open(m, txn, &c->tx[i]);
        if (rc == 0)
            rc = mdcom_smemch_open(m, rxn, &c->rx[i]);
        if (rc != 0)
            return sm_fail("mdcom_smemch_open", rc);
        rc = mdcom_smemch_get(c->tx[i], &p, &size);
        if (rc != 0 || size < SM_HDR + c->max)
            return sm_fail("mdcom_smemch_get", rc ? rc : -EPROTO);
        c->txa[i] = p;
        rc = mdcom_smemch_get(c->rx[i], &p, &size);
        if (rc != 0 || size < SM_HDR + c->max)
            return sm_fail("mdcom_smemch_get", rc ? rc : -EPROTO);
        c->rxa[i] = p;
    }
    return 0;
}

static void sm_detach(void *ctx, int side)
{
    struct sm_ctx *c = ctx;
    if (side == BENCH_SIDE_B)
        bench_mdreg_detach(&c->reg, side, SM_NAME);
}

static void sm_teardown(void *ctx)
{
    struct sm_ctx *c = ctx;
    bench_mdreg_detach(&c->reg, BENCH_SIDE_A, SM_NAME);
    free(c);
}

static _Atomic uint32_t *sm_full(unsigned char *area) { return (_Atomic uint32_t *)(void *)area; }

/* Peek until the area's `full` word is v. 0 or -ETIMEDOUT. */
static int sm_peek(struct sm_ctx *c, unsigned char *area, uint32_t v)
{
    /* acquire: pairs with the peer's release store of `full` */
    if (atomic_load_explicit(sm_full(area), memory_order_acquire) == v)
        return 0;
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    for (unsigned spins = 1;; spins++) {
        bench_relax();
        if (c->yield && (spins & 63u) == 0)
            sched_yield();
        /* acquire: as above */
        if (atomic_load_explicit(sm_full(area), memory_order_acquire) == v)
            return 0;
        if ((spins & 1023u) == 0 && bench_now_ns() > deadline)
            return -ETIMEDOUT;
    }
}

static int sm_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct sm_ctx *c = ctx;
    (void)side;
    unsigned char *a = c->txa[ch];
    if (sm_peek(c, a, 0) != 0)
        return sm_fail("send: slot not emptied", -ETIMEDOUT);
    int rc = mdcom_smemch_lock(c->tx[ch], c->timeout_ns);
    if (rc != 0)
        return sm_fail("mdcom_smemch_lock", rc);
    memcpy(a + SM_HDR, buf, len);
    memcpy(a + 4, &len, 4);
    /* release: payload and length before `full` (the unlock orders them too,
     * for a peer that takes the lock; this is for the peer's peek) */
    atomic_store_explicit(sm_full(a), 1u, memory_order_release);
    rc = mdcom_smemch_unlock(c->tx[ch]);
    return rc == 0 ? 0 : sm_fail("mdcom_smemch_unlock", rc);
}

static int sm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct sm_ctx *c = ctx;
    (void)side;
    unsigned char *a = c->rxa[ch];
    if (sm_peek(c, a, 1) != 0)
        return sm_fail("recv: nothing arrived", -ETIMEDOUT);
    int rc = mdcom_smemch_lock(c->rx[ch], c->timeout_ns);
    if (rc != 0)
        return sm_fail("mdcom_smemch_lock", rc);
    uint32_t len;
    memcpy(&len, a + 4, 4); /* read once, then checked */
    int ret;
    if (len > cap || len > c->max) {
        bench_err("mdcom-smem-poll: message length %u above %u", len, c->max);
        ret = -EBADMSG;
    } else {
        memcpy(buf, a + SM_HDR, len);
        ret = (int)len;
    }
    /* relaxed: the unlock below is the release that publishes it */
    atomic_store_explicit(sm_full(a), 0u, memory_order_relaxed);
    rc = mdcom_smemch_unlock(c->rx[ch]);
    if (rc != 0)
        return sm_fail("mdcom_smemch_unlock", rc);
    return ret;
}

const bench_msg_ops bench_ops_smem = BENCH_MSG_OPS(sm, .recv = sm_recv);
