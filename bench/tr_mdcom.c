/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_mdcom.c - the libmdcom transports: FIFO channels (copy: send/recv; zero
 * copy: send/peek/release, the sender's next block allocated ahead) and SMEM
 * channels as a one-slot mailbox; poll never sleeps, block disables the spin.
 * One region per session (mdcfg.h). Method: docs/benchmarks.md, "Transports".
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "mdcfg.h"
#include "mdcom/events.h"
#include "mdcom/mdcom.h"
#include "transport.h"

/* How the copy transports wait (the variant): polling, blocking calls with
 * the spin off or the library's adaptive spin, or (`events`) polled receives
 * that sleep in a wait set or in epoll on the channel's fd. */
enum { MDM_POLL, MDM_BLOCK, MDM_ADAPTIVE, MDM_WAITSET, MDM_FD };

struct mdm_ctx {
    bench_mdreg reg;
    const char *tname;
    int wait, block, yield;
    uint32_t n, max;
    int64_t timeout_ns;
    mdcom_fifoch_t *tx[BENCH_MAX_CHAN], *rx[BENCH_MAX_CHAN];
    /* zero copy, per channel: the block allocated for the next message and
     * the received block not yet released, or UINT32_MAX */
    uint32_t next_id[BENCH_MAX_CHAN], held[BENCH_MAX_CHAN];
    /* SMEM: the channels and their areas */
    int smem;
    mdcom_smemch_t *stx[BENCH_MAX_CHAN], *srx[BENCH_MAX_CHAN];
    unsigned char *txa[BENCH_MAX_CHAN], *rxa[BENCH_MAX_CHAN];
    /* MDM_WAITSET, MDM_FD: this side's waiter on each receive channel */
    mdcom_waitset_t *ws[BENCH_MAX_CHAN];
    int fd[BENCH_MAX_CHAN], ep[BENCH_MAX_CHAN];
};

#define SM_HDR 64u /* SMEM mailbox: u32 full, u32 len, then the payload at 64 */

static int mdm_fail(const struct mdm_ctx *c, const char *call, int rc)
{
    char what[96];
    snprintf(what, sizeof(what), "%s: %s", c->tname, call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

/* FIFO (variant: 1 = blocking calls) or, smem, SMEM channels */
static int mdm_setup_as(void **out, const bench_msg_params *p, int smem)
{
    struct mdm_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->smem = smem;
    c->tname = p->tname;
    c->wait = p->variant;
    c->block = p->variant == MDM_BLOCK || p->variant == MDM_ADAPTIVE;
    c->yield = p->threads > 1;
    c->n = p->n_chan;
    c->max = p->max_size ? p->max_size : 1;
    c->timeout_ns = p->timeout_ns;
    memset(c->next_id, 0xff, sizeof(c->next_id));
    memset(c->held, 0xff, sizeof(c->held));
    if (smem)
        bench_mdcfg_fill(&c->reg.mc, p->name, c->n, MDCOM_CHAN_SMEM, SM_HDR + p->max_size, 0);
    else
        bench_mdcfg_fill(&c->reg.mc, p->name, c->n, MDCOM_CHAN_FIFO, c->max, p->depth < 2 ? 2 : p->depth);
    int rc = bench_mdreg_attach(&c->reg, BENCH_SIDE_A, 0, c->tname);
    if (rc != 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int mdm_setup(void **out, const bench_msg_params *p)
{
    return mdm_setup_as(out, p, 0);
}

static int sm_setup(void **out, const bench_msg_params *p)
{
    return p->max_size > UINT32_MAX - SM_HDR ? -EMSGSIZE : mdm_setup_as(out, p, 1);
}

static int mdm_attach(void *ctx, int side)
{
    struct mdm_ctx *c = ctx;
    if (side == BENCH_SIDE_B && bench_mdreg_attach(&c->reg, side, c->timeout_ns, c->tname) != 0)
        return -ENOTCONN;
    mdcom_t *m = bench_mdreg_of(&c->reg, side);
    for (uint32_t i = 0; i < c->n; i++) {
        const char *txn = c->reg.mc.names[2 * i + (side == BENCH_SIDE_A ? 0 : 1)];
        const char *rxn = c->reg.mc.names[2 * i + (side == BENCH_SIDE_A ? 1 : 0)];
        if (c->smem) {
            uint32_t s1 = 0, s2 = 0;
            void *p1, *p2;
            int rc = mdcom_smemch_open(m, txn, &c->stx[i]);
            if (rc == 0)
                rc = mdcom_smemch_open(m, rxn, &c->srx[i]);
            if (rc == 0)
                rc = mdcom_smemch_get(c->stx[i], &p1, &s1);
            if (rc == 0)
                rc = mdcom_smemch_get(c->srx[i], &p2, &s2);
            if (rc != 0 || s1 < SM_HDR + c->max || s2 < SM_HDR + c->max)
                return mdm_fail(c, "mdcom_smemch_open/get", rc ? rc : -EPROTO);
            c->txa[i] = p1;
            c->rxa[i] = p2;
            continue;
        }
        int rc = mdcom_fifoch_open(m, txn, &c->tx[i]);
        if (rc == 0)
            rc = mdcom_fifoch_open(m, rxn, &c->rx[i]);
        if (rc != 0)
            return mdm_fail(c, "mdcom_fifoch_open", rc);
        if (c->wait != MDM_POLL && c->wait != MDM_ADAPTIVE) {
            mdcom_fifoch_set_spin(c->tx[i], MDCOM_NO_SPIN);
            mdcom_fifoch_set_spin(c->rx[i], MDCOM_NO_SPIN);
        }
        c->fd[i] = c->ep[i] = -1;
        struct epoll_event e = {.events = EPOLLIN};
        if (c->wait == MDM_WAITSET &&
            ((rc = mdcom_waitset_create(m, &c->ws[i])) != 0 ||
             (rc = mdcom_waitset_add_fifo(c->ws[i], c->rx[i], MDCOM_EV_RX, NULL)) != 0 ||
             (rc = mdcom_waitset_set_spin(c->ws[i], MDCOM_NO_SPIN)) != 0))
            return mdm_fail(c, "mdcom_waitset_create/add_fifo", rc);
        if (c->wait == MDM_FD &&
            ((c->fd[i] = mdcom_fifoch_fd(c->rx[i], MDCOM_EV_RX)) < 0 ||
             (c->ep[i] = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
             epoll_ctl(c->ep[i], EPOLL_CTL_ADD, c->fd[i], &e) != 0))
            return mdm_fail(c, "mdcom_fifoch_fd/epoll", c->fd[i] < 0 ? c->fd[i] : -EIO);
    }
    return 0;
}

static void mdm_detach(void *ctx, int side)
{
    struct mdm_ctx *c = ctx;
    for (uint32_t i = 0; i < c->n && !c->smem; i++) {
        if (c->ws[i])
            mdcom_waitset_destroy(c->ws[i]);
        if (c->fd[i] >= 0)
            mdcom_fd_close(c->fd[i]);
        if (c->ep[i] >= 0)
            close(c->ep[i]);
        c->ws[i] = NULL;
        c->fd[i] = c->ep[i] = -1;
    }
    if (side == BENCH_SIDE_B)
        bench_mdreg_detach(&c->reg, side, c->tname);
}

static void mdm_teardown(void *ctx)
{
    struct mdm_ctx *c = ctx;
    bench_mdreg_detach(&c->reg, BENCH_SIDE_A, c->tname);
    free(c);
}

/* "Not yet" answers of a non-blocking call. */
static int mdm_not_yet(int rc) { return rc == -EAGAIN || rc == -ETIMEDOUT || rc == -ENOBUFS; }

/* Polling: one pause between tries; the clock is read only every 256 tries
 * (the first read starts the timeout). 1 to try again, 0 when timed out. */
static int mdm_spin(const struct mdm_ctx *c, unsigned spins, uint64_t *deadline)
{
    bench_relax();
    if (c->yield && (spins & 63u) == 0)
        sched_yield();
    if ((spins & 255u) == 0) {
        uint64_t now = bench_now_ns();
        if (!*deadline)
            *deadline = now + (uint64_t)c->timeout_ns;
        else if (now > *deadline)
            return 0;
    }
    return 1;
}

/* MDM_WAITSET, MDM_FD: sleep until channel ch may have a message. 0 or < 0. */
static int mdm_sleep_rx(struct mdm_ctx *c, uint32_t ch)
{
    mdcom_event ev;
    struct epoll_event e;
    if (c->wait == MDM_WAITSET) {
        int r = mdcom_waitset_wait(c->ws[ch], &ev, 1, c->timeout_ns);
        return r == -EINTR || r > 0 ? 0 : r;
    }
    int r = mdcom_fd_clear(c->fd[ch]); /* drained: re-arm, unless an event holds */
    if (r != 0)
        return r < 0 ? r : 0;
    r = epoll_wait(c->ep[ch], &e, 1, (int)(c->timeout_ns / 1000000));
    return r > 0 || (r < 0 && errno == EINTR) ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

/* One send (buf, len) or receive (into buf of cap len) on channel ch: a
 * blocking call with the timeout (again after EINTR), MDCOM_POLL calls with
 * a pause between them, or (receiving, MDM_WAITSET/MDM_FD) MDCOM_POLL calls
 * with a sleep between them. The call's result. */
static int mdm_xfer(struct mdm_ctx *c, uint32_t ch, void *buf, uint32_t len, int send)
{
    uint64_t deadline = 0;
    int sleeps = !send && c->wait >= MDM_WAITSET, block = c->block || (send && c->wait);
    for (unsigned spins = 1;; spins++) {
        int64_t t = block ? c->timeout_ns : MDCOM_POLL;
        int rc = send ? mdcom_fifoch_send(c->tx[ch], buf, len, t)
                      : mdcom_fifoch_recv(c->rx[ch], buf, len, t);
        if (sleeps && mdm_not_yet(rc) && (rc = mdm_sleep_rx(c, ch)) == 0)
            continue;
        if (block || sleeps ? rc != -EINTR : !mdm_not_yet(rc) || !mdm_spin(c, spins, &deadline))
            return rc;
    }
}

static int mdm_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    int rc = mdm_xfer(c, ch, (void *)buf, len, 1);
    return rc == 0 ? 0 : mdm_fail(c, rc == MDCOM_FILTERED ? "mdcom_fifoch_send (filtered)"
                                                          : "mdcom_fifoch_send", rc);
}

static int mdm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    int rc = mdm_xfer(c, ch, buf, cap, 0);
    return rc >= 0 ? rc : mdm_fail(c, "mdcom_fifoch_recv", rc);
}

const bench_msg_ops bench_ops_mdcom_copy = BENCH_MSG_OPS(mdm, .recv = mdm_recv);


/* ---- zero copy: round trips (the header travels, the payload stays) --------------- */

/* send: the block allocated ahead (else alloc now, waiting for one), get,
 * write the 4-byte header from buf, enqueue(len), notify, then alloc the
 * block of the next message while the peer works. */
static int zc_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    mdcom_fifoch_t *tx = c->tx[ch];
    uint32_t id = c->next_id[ch];
    int rc = 0;
    uint64_t deadline = 0;
    c->next_id[ch] = UINT32_MAX;
    for (unsigned spins = 1; id == UINT32_MAX; spins++) {
        rc = mdcom_fifoch_alloc(tx, &id);
        if (rc != -ENOBUFS)
            break;
        /* the pool never runs dry in a ping-pong; handle it anyway */
        if (c->block) {
            rc = mdcom_fifoch_wait(tx, MDCOM_EV_TX, c->timeout_ns);
            if (rc < 0 && rc != -EINTR)
                return mdm_fail(c, "mdcom_fifoch_wait(EV_TX)", rc);
        } else if (!mdm_spin(c, spins, &deadline)) {
            return mdm_fail(c, "mdcom_fifoch_alloc", rc);
        }
    }
    if (rc != 0)
        return mdm_fail(c, "mdcom_fifoch_alloc", rc);
    void *ptr;
    uint32_t bsize;
    rc = mdcom_fifoch_get(tx, id, &ptr, &bsize);
    if (rc != 0)
        return mdm_fail(c, "mdcom_fifoch_get", rc);
    if (bsize < len || len < 4) {
        bench_err("%s: block %u has %u bytes, message %u", c->tname, id, bsize, len);
        return -EMSGSIZE;
    }
    memcpy(ptr, buf, 4);
    rc = mdcom_fifoch_enqueue(tx, id, len);
    if (rc != 0)
        return mdm_fail(c, rc == MDCOM_FILTERED ? "mdcom_fifoch_enqueue (filtered)"
                                                : "mdcom_fifoch_enqueue", rc);
    rc = mdcom_fifoch_notify(tx);
    if (rc != 0)
        return mdm_fail(c, "mdcom_fifoch_notify", rc);
    /* -ENOBUFS: the loop above waits for one next time */
    if (mdcom_fifoch_alloc(tx, &c->next_id[ch]) != 0)
        c->next_id[ch] = UINT32_MAX;
    return 0;
}

/* dequeue (waiting) + get: the block in place, until zc_release. */
static int zc_peek(void *ctx, int side, uint32_t ch, const void **msg)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    mdcom_fifoch_t *rx = c->rx[ch];
    uint32_t id, len;
    int rc;
    uint64_t deadline = 0;
    for (unsigned spins = 1;; spins++) {
        rc = mdcom_fifoch_dequeue(rx, &id, &len);
        if (rc != -EAGAIN)
            break;
        if (c->block) {
            if (!deadline)
                deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
            int64_t left = (int64_t)(deadline - bench_now_ns());
            rc = left <= 0 ? -ETIMEDOUT : mdcom_fifoch_wait(rx, MDCOM_EV_RX, left);
            if (rc < 0 && rc != -EINTR)
                return mdm_fail(c, "mdcom_fifoch_wait(EV_RX)", rc);
        } else if (!mdm_spin(c, spins, &deadline)) {
            return mdm_fail(c, "mdcom_fifoch_dequeue (polling)", -ETIMEDOUT);
        }
    }
    if (rc != 0)
        return mdm_fail(c, "mdcom_fifoch_dequeue", rc);
    void *ptr;
    uint32_t bsize;
    c->held[ch] = id;
    rc = mdcom_fifoch_get(rx, id, &ptr, &bsize);
    if (rc != 0)
        return mdm_fail(c, "mdcom_fifoch_get", rc);
    if (len < 4 || len > bsize) {
        bench_err("%s: block %u carries %u bytes (block size %u)", c->tname, id, len, bsize);
        return -EBADMSG;
    }
    *msg = ptr;
    return (int)len;
}

/* free the received block + notify (wakes senders waiting for a block; with
 * nobody waiting it is a fence and a load) */
static void zc_release(void *ctx, int side, uint32_t ch)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    if (c->held[ch] == UINT32_MAX)
        return;
    int rc = mdcom_fifoch_free(c->rx[ch], c->held[ch]);
    c->held[ch] = UINT32_MAX;
    if (rc != 0)
        mdm_fail(c, "mdcom_fifoch_free", rc);
    else if ((rc = mdcom_fifoch_notify(c->rx[ch])) != 0)
        mdm_fail(c, "mdcom_fifoch_notify", rc);
}

const bench_msg_ops bench_ops_mdcom_zc = {.setup = mdm_setup, .attach = mdm_attach, .send = zc_send,
                                     .peek = zc_peek, .release = zc_release,
                                     .detach = mdm_detach, .teardown = mdm_teardown,
                                     .header_only = 1, .round_trips_only = 1};

/* ---- SMEM channels as a one-slot mailbox --------------------------------------
 * Per bench channel two SMEM channels "f<c>" (A -> B) and "r<c>" (B -> A) of
 * SM_HDR + max_size bytes: +0 u32 full (0 empty, 1 a message; C11 atomic),
 * +4 u32 len, +SM_HDR the payload.
 *   send: wait until full == 0; lock; write payload and len; full = 1; unlock
 *   recv: wait until full == 1; lock; copy len bytes out; full = 0; unlock
 * The wait reads `full` with an acquire load without the lock (a peek), so
 * that a waiting side does not take the lock away from the side that has
 * work; everything else in the area is read or written holding the lock.
 * Polling only (SMEM channels have no event); yields every 64 pauses when
 * several threads share the CPUs. */

static _Atomic uint32_t *sm_full(unsigned char *area) { return (_Atomic uint32_t *)(void *)area; }

/* Peek until the area's `full` word is v. 0 or -ETIMEDOUT. */
static int sm_peek(struct mdm_ctx *c, unsigned char *area, uint32_t v)
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
    struct mdm_ctx *c = ctx;
    (void)side;
    unsigned char *a = c->txa[ch];
    if (sm_peek(c, a, 0) != 0)
        return mdm_fail(c, "send: slot not emptied", -ETIMEDOUT);
    int rc = mdcom_smemch_lock(c->stx[ch], c->timeout_ns);
    if (rc != 0)
        return mdm_fail(c, "mdcom_smemch_lock", rc);
    memcpy(a + SM_HDR, buf, len);
    memcpy(a + 4, &len, 4);
    /* release: payload and length before `full` (the unlock orders them too,
     * for a peer that takes the lock; this is for the peer's peek) */
    atomic_store_explicit(sm_full(a), 1u, memory_order_release);
    rc = mdcom_smemch_unlock(c->stx[ch]);
    return rc == 0 ? 0 : mdm_fail(c, "mdcom_smemch_unlock", rc);
}

static int sm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct mdm_ctx *c = ctx;
    (void)side;
    unsigned char *a = c->rxa[ch];
    if (sm_peek(c, a, 1) != 0)
        return mdm_fail(c, "recv: nothing arrived", -ETIMEDOUT);
    int rc = mdcom_smemch_lock(c->srx[ch], c->timeout_ns);
    if (rc != 0)
        return mdm_fail(c, "mdcom_smemch_lock", rc);
    uint32_t len;
    memcpy(&len, a + 4, 4); /* read once, then checked */
    int ret;
    if (len > cap || len > c->max) {
        bench_err("%s: message length %u above %u", c->tname, len, c->max);
        ret = -EBADMSG;
    } else {
        memcpy(buf, a + SM_HDR, len);
        ret = (int)len;
    }
    /* relaxed: the unlock below is the release that publishes it */
    atomic_store_explicit(sm_full(a), 0u, memory_order_relaxed);
    rc = mdcom_smemch_unlock(c->srx[ch]);
    if (rc != 0)
        return mdm_fail(c, "mdcom_smemch_unlock", rc);
    return ret;
}

const bench_msg_ops bench_ops_smem = {.setup = sm_setup, .attach = mdm_attach, .send = sm_send,
                                      .recv = sm_recv, .detach = mdm_detach,
                                      .teardown = mdm_teardown};
