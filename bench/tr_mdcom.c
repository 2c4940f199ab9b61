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
enum { TX, RX };

/* A bench channel, as this process's side uses it: the mdcom channel it
 * sends on [TX] and the one it receives from [RX]. */
struct mdm_chan {
    mdcom_fifoch_t *f[2];
    /* zero copy: the block allocated for the next message and the received
     * block not yet released, or UINT32_MAX */
    uint32_t next_id, held;
    mdcom_smemch_t *s[2]; /* SMEM: the channels and their areas */
    unsigned char *area[2];
    mdcom_waitset_t *ws; /* MDM_WAITSET, MDM_FD: the waiter on f[RX] */
    int fd, ep;
};

struct mdm_ctx {
    bench_mdreg reg;
    const char *tname;
    int wait, block, yield, smem;
    uint32_t n, max;
    int64_t timeout_ns;
    struct mdm_chan ch[BENCH_MAX_CHAN];
};

#define SM_HDR 64u /* SMEM mailbox: u32 full, u32 len, then the payload at 64 */

static int mdm_fail(const struct mdm_ctx *c, const char *call, int rc)
{
    char what[96];
    snprintf(what, sizeof(what), "%s: %s%s", c->tname, call,
             rc == MDCOM_FILTERED ? " (filtered)" : "");
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

/* FIFO (the variant: how it waits) or, smem, SMEM channels */
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
    bench_mdcfg_fill(&c->reg.mc, p->name, c->n, smem ? MDCOM_CHAN_SMEM : MDCOM_CHAN_FIFO,
                     smem ? SM_HDR + p->max_size : c->max,
                     smem           ? 0
                     : p->depth < 2 ? 2
                                    : p->depth);
    int rc = bench_mdreg_attach(&c->reg, BENCH_SIDE_A, 0, c->tname);
    if (rc != 0)
        free(c);
    else
        *out = c;
    return rc;
}

static int mdm_setup(void **out, const bench_msg_params *p) { return mdm_setup_as(out, p, 0); }
static int sm_setup(void **out, const bench_msg_params *p) { return mdm_setup_as(out, p, 1); }

static int mdm_attach(void *ctx, int side)
{
    struct mdm_ctx *c = ctx;
    if (side == BENCH_SIDE_B && bench_mdreg_attach(&c->reg, side, c->timeout_ns, c->tname) != 0)
        return -ENOTCONN;
    mdcom_t *m = bench_mdreg_of(&c->reg, side);
    for (uint32_t i = 0; i < c->n; i++) {
        struct mdm_chan *h = &c->ch[i];
        h->next_id = h->held = UINT32_MAX;
        h->fd = h->ep = -1;
        for (int k = TX; k <= RX; k++) {
            /* side A sends on "f<i>" and receives from "r<i>", side B the reverse */
            const char *name = c->reg.mc.names[2 * i + (side ^ k)];
            uint32_t size = 0;
            void *a = NULL;
            int rc = c->smem ? mdcom_smemch_open(m, name, &h->s[k])
                             : mdcom_fifoch_open(m, name, &h->f[k]);
            if (rc == 0 && c->smem)
                rc = mdcom_smemch_get(h->s[k], &a, &size);
            if (rc != 0 || (c->smem && size < SM_HDR + c->max))
                return mdm_fail(c, c->smem ? "mdcom_smemch_open/get" : "mdcom_fifoch_open",
                                rc ? rc : -EPROTO);
            h->area[k] = a;
            if (!c->smem && c->wait != MDM_POLL && c->wait != MDM_ADAPTIVE)
                mdcom_fifoch_set_spin(h->f[k], MDCOM_NO_SPIN);
        }
        int rc;
        struct epoll_event e = {.events = EPOLLIN};
        if (c->wait == MDM_WAITSET &&
            ((rc = mdcom_waitset_create(m, &h->ws)) != 0 ||
             (rc = mdcom_waitset_add_fifo(h->ws, h->f[RX], MDCOM_EV_RX, NULL)) != 0 ||
             (rc = mdcom_waitset_set_spin(h->ws, MDCOM_NO_SPIN)) != 0))
            return mdm_fail(c, "mdcom_waitset_create/add_fifo", rc);
        if (c->wait == MDM_FD && ((h->fd = mdcom_fifoch_fd(h->f[RX], MDCOM_EV_RX)) < 0 ||
                                  (h->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
                                  epoll_ctl(h->ep, EPOLL_CTL_ADD, h->fd, &e) != 0))
            return mdm_fail(c, "mdcom_fifoch_fd/epoll", h->fd < 0 ? h->fd : -EIO);
    }
    return 0;
}

static void mdm_detach(void *ctx, int side)
{
    struct mdm_ctx *c = ctx;
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->ch[i].ws)
            mdcom_waitset_destroy(c->ch[i].ws);
        if (c->ch[i].fd >= 0)
            mdcom_fd_close(c->ch[i].fd);
        if (c->ch[i].ep >= 0)
            close(c->ch[i].ep);
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
    return (spins & 255u) != 0 || bench_left_ns(deadline, c->timeout_ns) >= 0;
}

/* MDM_WAITSET, MDM_FD: sleep until channel ch may have a message. 0 or < 0. */
static int mdm_sleep_rx(struct mdm_ctx *c, uint32_t ch)
{
    mdcom_event ev;
    struct epoll_event e;
    if (c->wait == MDM_WAITSET) {
        int r = mdcom_waitset_wait(c->ch[ch].ws, &ev, 1, c->timeout_ns);
        return r == -EINTR || r > 0 ? 0 : r;
    }
    int r = mdcom_fd_clear(c->ch[ch].fd); /* drained: re-arm, unless an event holds */
    if (r != 0)
        return r < 0 ? r : 0;
    r = epoll_wait(c->ch[ch].ep, &e, 1, (int)(c->timeout_ns / 1000000));
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
        int rc = send ? mdcom_fifoch_send(c->ch[ch].f[TX], buf, len, t)
                      : mdcom_fifoch_recv(c->ch[ch].f[RX], buf, len, t);
        if (sleeps && mdm_not_yet(rc) && (rc = mdm_sleep_rx(c, ch)) == 0)
            continue;
        if (block || sleeps ? rc != -EINTR : !mdm_not_yet(rc) || !mdm_spin(c, spins, &deadline))
            return rc;
    }
}

static int mdm_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    int rc = mdm_xfer(ctx, ch, (void *)buf, len, 1);
    (void)side;
    return rc == 0 ? 0 : mdm_fail(ctx, "mdcom_fifoch_send", rc);
}

static int mdm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    int rc = mdm_xfer(ctx, ch, buf, cap, 0);
    (void)side;
    return rc >= 0 ? rc : mdm_fail(ctx, "mdcom_fifoch_recv", rc);
}

const bench_msg_ops bench_ops_mdcom_copy = BENCH_MSG_OPS(mdm, .recv = mdm_recv);

/* ---- zero copy: round trips (the header travels, the payload stays) --------------- */

/* The pool is empty (ev MDCOM_EV_TX) or nothing arrived (MDCOM_EV_RX) on f:
 * wait for ev (blocking; the timeout counts from the first wait) or pause
 * (polling; timed out: `what` failed). 0 to try again, or < 0 (printed). */
static int zc_wait(struct mdm_ctx *c, mdcom_fifoch_t *f, uint32_t ev, unsigned spins,
                   uint64_t *deadline, const char *what)
{
    if (!c->block)
        return mdm_spin(c, spins, deadline) ? 0 : mdm_fail(c, what, -ETIMEDOUT);
    int64_t left = bench_left_ns(deadline, c->timeout_ns);
    int rc = left <= 0 ? -ETIMEDOUT : mdcom_fifoch_wait(f, ev, left);
    if (rc < 0 && rc != -EINTR)
        return mdm_fail(
            c, ev == MDCOM_EV_TX ? "mdcom_fifoch_wait(EV_TX)" : "mdcom_fifoch_wait(EV_RX)", rc);
    return 0;
}

/* send: the block allocated ahead (else alloc now, waiting for one), get,
 * write the 4-byte header from buf, enqueue(len), notify, then alloc the
 * block of the next message while the peer works. */
static int zc_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct mdm_ctx *c = ctx;
    struct mdm_chan *h = &c->ch[ch];
    uint32_t id = h->next_id, bsize;
    uint64_t deadline = 0;
    void *ptr;
    int rc = 0;
    (void)side;
    h->next_id = UINT32_MAX;
    /* the pool never runs dry in a ping-pong; handle it anyway */
    for (unsigned spins = 1; id == UINT32_MAX; spins++) {
        rc = mdcom_fifoch_alloc(h->f[TX], &id);
        if (rc != -ENOBUFS)
            break;
        if ((rc = zc_wait(c, h->f[TX], MDCOM_EV_TX, spins, &deadline, "mdcom_fifoch_alloc")) != 0)
            return rc;
    }
    if (rc != 0 || (rc = mdcom_fifoch_get(h->f[TX], id, &ptr, &bsize)) != 0)
        return mdm_fail(c, "mdcom_fifoch_alloc/get", rc);
    if (bsize < len || len < 4) {
        bench_err("%s: block %u has %u bytes, message %u", c->tname, id, bsize, len);
        return -EMSGSIZE;
    }
    memcpy(ptr, buf, 4);
    if ((rc = mdcom_fifoch_enqueue(h->f[TX], id, len)) != 0)
        return mdm_fail(c, "mdcom_fifoch_enqueue", rc);
    if ((rc = mdcom_fifoch_notify(h->f[TX])) != 0)
        return mdm_fail(c, "mdcom_fifoch_notify", rc);
    /* -ENOBUFS: the loop above waits for one next time */
    if (mdcom_fifoch_alloc(h->f[TX], &h->next_id) != 0)
        h->next_id = UINT32_MAX;
    return 0;
}

/* dequeue (waiting) + get: the block in place, until zc_release. */
static int zc_peek(void *ctx, int side, uint32_t ch, const void **msg)
{
    struct mdm_ctx *c = ctx;
    struct mdm_chan *h = &c->ch[ch];
    uint32_t id, len, bsize;
    uint64_t deadline = 0;
    void *ptr;
    int rc;
    (void)side;
    for (unsigned spins = 1;; spins++) {
        rc = mdcom_fifoch_dequeue(h->f[RX], &id, &len);
        if (rc != -EAGAIN)
            break;
        if ((rc = zc_wait(c, h->f[RX], MDCOM_EV_RX, spins, &deadline, "mdcom_fifoch_dequeue")) != 0)
            return rc;
    }
    if (rc != 0)
        return mdm_fail(c, "mdcom_fifoch_dequeue", rc);
    h->held = id;
    if ((rc = mdcom_fifoch_get(h->f[RX], id, &ptr, &bsize)) != 0)
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
    struct mdm_chan *h = &c->ch[ch];
    int rc;
    (void)side;
    if (h->held == UINT32_MAX)
        return;
    rc = mdcom_fifoch_free(h->f[RX], h->held);
    h->held = UINT32_MAX;
    if (rc != 0)
        mdm_fail(c, "mdcom_fifoch_free", rc);
    else if ((rc = mdcom_fifoch_notify(h->f[RX])) != 0)
        mdm_fail(c, "mdcom_fifoch_notify", rc);
}

const bench_msg_ops bench_ops_mdcom_zc = {.setup = mdm_setup,
                                          .attach = mdm_attach,
                                          .send = zc_send,
                                          .peek = zc_peek,
                                          .release = zc_release,
                                          .detach = mdm_detach,
                                          .teardown = mdm_teardown,
                                          .header_only = 1,
                                          .round_trips_only = 1};

/* ---- SMEM channels as a one-slot mailbox --------------------------------------
 * Per bench channel two SMEM channels of SM_HDR + max_size bytes: +0 u32 full
 * (0 empty, 1 a message; C11 atomic), +4 u32 len, +SM_HDR the payload.
 *   send: wait until full == 0; lock; write payload and len; full = 1; unlock
 *   recv: wait until full == 1; lock; copy len bytes out; full = 0; unlock
 * The wait peeks at `full` (an acquire load) without the lock, so that a
 * waiting side does not take the lock away from the side that has work.
 * Polling only (SMEM channels have no event). */

static _Atomic uint32_t *sm_full(unsigned char *area) { return (_Atomic uint32_t *)(void *)area; }

/* Peek until `full` of area k of channel ch is v, then lock it. 0 or < 0. */
static int sm_lock(struct mdm_ctx *c, uint32_t ch, int k, uint32_t v)
{
    unsigned char *a = c->ch[ch].area[k];
    uint64_t deadline = 0;
    /* acquire: pairs with the peer's release store of `full` */
    for (unsigned spins = 0; atomic_load_explicit(sm_full(a), memory_order_acquire) != v;) {
        if ((spins & 1023u) == 0 && bench_left_ns(&deadline, c->timeout_ns) < 0)
            return mdm_fail(c, v ? "recv: nothing arrived" : "send: slot not emptied", -ETIMEDOUT);
        spins++;
        bench_relax();
        if (c->yield && (spins & 63u) == 0)
            sched_yield();
    }
    int rc = mdcom_smemch_lock(c->ch[ch].s[k], c->timeout_ns);
    return rc == 0 ? 0 : mdm_fail(c, "mdcom_smemch_lock", rc);
}

static int sm_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct mdm_ctx *c = ctx;
    unsigned char *a = c->ch[ch].area[TX];
    int rc = sm_lock(c, ch, TX, 0);
    (void)side;
    if (rc != 0)
        return rc;
    memcpy(a + SM_HDR, buf, len);
    memcpy(a + 4, &len, 4);
    /* release: payload and length before `full` (the unlock orders them too,
     * for a peer that takes the lock; this is for the peer's peek) */
    atomic_store_explicit(sm_full(a), 1u, memory_order_release);
    rc = mdcom_smemch_unlock(c->ch[ch].s[TX]);
    return rc == 0 ? 0 : mdm_fail(c, "mdcom_smemch_unlock", rc);
}

static int sm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct mdm_ctx *c = ctx;
    unsigned char *a = c->ch[ch].area[RX];
    uint32_t len;
    int rc = sm_lock(c, ch, RX, 1), ret;
    (void)side;
    if (rc != 0)
        return rc;
    memcpy(&len, a + 4, 4); /* read once, then checked */
    ret = len > cap || len > c->max ? -EBADMSG : (int)len;
    if (ret < 0)
        bench_err("%s: message length %u above %u", c->tname, len, c->max);
    else
        memcpy(buf, a + SM_HDR, len);
    /* relaxed: the unlock below is the release that publishes it */
    atomic_store_explicit(sm_full(a), 0u, memory_order_relaxed);
    rc = mdcom_smemch_unlock(c->ch[ch].s[RX]);
    return rc == 0 ? ret : mdm_fail(c, "mdcom_smemch_unlock", rc);
}

const bench_msg_ops bench_ops_smem = {.setup = sm_setup,
                                      .attach = mdm_attach,
                                      .send = sm_send,
                                      .recv = sm_recv,
                                      .detach = mdm_detach,
                                      .teardown = mdm_teardown};
