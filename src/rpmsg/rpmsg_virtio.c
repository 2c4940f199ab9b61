/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_virtio.c - the host/remote buffer flows of RPMsg over the virtqueues
 * of virtqueue.c: notification and waiting, the receive path (dispatch to
 * the name service and the endpoints), the transmit path.
 *
 *   host (virtio driver)                       remote (virtio device)
 *   send: free TX head (or reclaim from        send: take a host RX buffer from
 *         vring 1 used) -> write -> add to           vring 0 avail -> write ->
 *         vring 1 avail -> publish -> kick           vring 0 used -> publish -> kick
 *   recv: vring 0 used -> dispatch ->          recv: vring 1 avail -> dispatch ->
 *         re-post in vring 0 avail                   return in vring 1 used
 *
 * Everything read from the area (indices, heads, descriptors, headers) is
 * read once into locals and validated; a violation is counted in r->st and
 * returned as -EPROTO / -EBADMSG.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "rpmsg_internal.h"

#define RP_SPIN_MIN_NS 500u
#define RP_SLEEP_SLICE_NS 100000000ull /* re-check the peer's status every 100 ms */

/* ------------------------------------------------------------------ */
/* buffers and counters                                                 */
/* ------------------------------------------------------------------ */

/* Buffer index of a device address: inside the pool, at the start of a
 * buffer, within [lo, hi). 0 or -1. */
static int rp_addr_to_buf(const struct mdcom_rpmsg *r, uint64_t addr, uint32_t lo, uint32_t hi,
                          uint32_t *b)
{
    uint64_t off;
    uint32_t o, i;
    if (addr < r->addr_base)
        return -1;
    off = addr - r->addr_base;
    if (off >= r->lay.pool_size)
        return -1;
    o = (uint32_t)off;
    if (o % r->bsize != 0)
        return -1;
    i = o / r->bsize;
    if (i < lo || i >= hi)
        return -1;
    *b = i;
    return 0;
}

static void rp_cache_clean(const struct mdcom_rpmsg *r, const void *p, size_t len)
{
    if (r->plat->cache_clean)
        r->plat->cache_clean(r->plat->ctx, p, len);
}

static void rp_cache_invalidate(const struct mdcom_rpmsg *r, const void *p, size_t len)
{
    if (r->plat->cache_invalidate)
        r->plat->cache_invalidate(r->plat->ctx, p, len);
}

static void rp_count_vq(struct mdcom_rpmsg *r, enum mdcom_vq_bad bad)
{
    if (bad == MDCOM_VQ_BAD_IDX_JUMP)
        r->st.bad_idx++;
    else if (bad == MDCOM_VQ_BAD_HEAD)
        r->st.bad_head++;
}

/* ------------------------------------------------------------------ */
/* notification and waiting                                              */
/* ------------------------------------------------------------------ */

/* Ask the peer not to notify us (on) or to notify us again (off), on both
 * rings we receive on. */
void mdcom_rp_suppress(struct mdcom_rpmsg *r, int on)
{
    if (r->role == MDCOM_RPMSG_HOST) {
        mdcom_vq_drv_suppress(&r->rxq, on);
        mdcom_vq_drv_suppress(&r->txq, on);
    } else {
        mdcom_vq_dev_suppress(&r->rxq, on);
        mdcom_vq_dev_suppress(&r->txq, on);
    }
}

/* Notify the peer about vring idx unconditionally. */
void mdcom_rp_notify(struct mdcom_rpmsg *r, uint32_t idx)
{
    if (r->bound) {
        r->bind.notify(r->bind.ctx, idx);
    } else {
        atomic_fetch_add_explicit(r->peer_notify, 1, memory_order_relaxed);
        r->plat->doorbell.ring(r->plat->doorbell.ctx, r->peer_notify, UINT32_MAX);
    }
}

/* After publishing an index of vq: notify the peer unless it suppressed
 * notifications on that ring. */
static void rp_kick(struct mdcom_rpmsg *r, struct mdcom_vq *vq)
{
    uint32_t idx = ((vq == &r->rxq) == (r->role == MDCOM_RPMSG_HOST)) ? 0u : 1u;
    int want;
    /* fence: the ring index we just published must be visible before we read
     * the peer's suppression flag (pairs with the fence in rp_wait) */
    atomic_thread_fence(memory_order_seq_cst);
    want = r->role == MDCOM_RPMSG_HOST ? mdcom_vq_drv_peer_wants_notify(vq)
                                       : mdcom_vq_dev_peer_wants_interrupt(vq);
    if (want)
        mdcom_rp_notify(r, idx);
}

/* The virtio device status as the host published it. */
static uint32_t rp_status(const struct mdcom_rpmsg *r)
{
    if (!r->bound)
        return atomic_load_explicit(&r->ctl->status, memory_order_relaxed);
    if (!r->bind.status)
        return MDCOM_RP_ST_DRIVER_OK;
    return atomic_load_explicit((_Atomic uint8_t *)(void *)r->bind.status, memory_order_relaxed);
}

static int rp_status_live(uint32_t st)
{
    return (st & MDCOM_RP_ST_DRIVER_OK) != 0 && (st & MDCOM_RP_ST_FAILED) == 0;
}

/* Remote: the host ended (status reset / FAILED) or re-formatted the area. */
static int rp_peer_check(const struct mdcom_rpmsg *r)
{
    if (r->role != MDCOM_RPMSG_REMOTE)
        return 0;
    if (!rp_status_live(rp_status(r)))
        return -MDCOM_ESHUTDOWN;
    if (!r->bound && mdcom_rd32(&r->ctl->generation) != r->generation)
        return -MDCOM_ESHUTDOWN;
    return 0;
}

typedef int (*rp_cond_fn)(const struct mdcom_rpmsg *r);

static int rp_rx_pending(const struct mdcom_rpmsg *r)
{
    return r->role == MDCOM_RPMSG_HOST ? mdcom_vq_drv_has_used(&r->rxq)
                                       : mdcom_vq_dev_has_avail(&r->rxq);
}

static int rp_tx_possible(const struct mdcom_rpmsg *r)
{
    if (r->nstack)
        return 1;
    return r->role == MDCOM_RPMSG_HOST ? mdcom_vq_drv_has_used(&r->txq)
                                       : mdcom_vq_dev_has_avail(&r->txq);
}

static int rp_tx_or_rx(const struct mdcom_rpmsg *r)
{
    return rp_tx_possible(r) || (r->depth < MDCOM_RP_MAX_DEPTH && rp_rx_pending(r));
}

/* Wait until cond holds or deadline. 0 (cond holds), -ETIMEDOUT, -ESHUTDOWN,
 * -EINTR. Adaptive spin, then the doorbell in slices. */
static int rp_wait(struct mdcom_rpmsg *r, rp_cond_fn cond, uint64_t deadline)
{
    uint64_t now;
    int rc;
    if (cond(r))
        return 0;
    if ((rc = rp_peer_check(r)) != 0)
        return rc;
    now = rp_now(r);
    if (now >= deadline)
        return -ETIMEDOUT;
    if (r->spin_max != MDCOM_NO_SPIN && r->spin_cur != 0) {
        uint64_t end = now + r->spin_cur;
        uint32_t n = 0;
        if (end > deadline)
            end = deadline;
        for (;;) {
            rp_relax(r);
            if (cond(r)) {
                /* spinning paid off: spin longer next time */
                r->spin_cur =
                    (uint64_t)r->spin_cur * 2 > r->spin_max ? r->spin_max : r->spin_cur * 2;
                return 0;
            }
            if ((++n & 31u) == 0 && rp_now(r) >= end)
                break;
        }
        if (r->spin_cur / 2 >= RP_SPIN_MIN_NS)
            r->spin_cur /= 2;
    }
    for (;;) {
        uint32_t snap = 0;
        int64_t slice;
        int wr = 0;
        if ((rc = rp_peer_check(r)) != 0)
            return rc;
        /* acquire: a kick that changed the word before our snapshot was
         * preceded by its publication, which cond() below then sees */
        if (!r->bound)
            snap = atomic_load_explicit(r->my_notify, memory_order_acquire);
        mdcom_rp_suppress(r, 0);
        /* fence: ask for notifications before the final check (pairs with
         * the fence in rp_kick) */
        atomic_thread_fence(memory_order_seq_cst);
        if (cond(r)) {
            mdcom_rp_suppress(r, 1);
            return 0;
        }
        now = rp_now(r);
        if (now >= deadline) {
            mdcom_rp_suppress(r, 1);
            return -ETIMEDOUT;
        }
        slice = (deadline - now) > RP_SLEEP_SLICE_NS ? (int64_t)RP_SLEEP_SLICE_NS
                                                     : (int64_t)(deadline - now);
        if (!r->bound)
            wr = r->plat->doorbell.wait(r->plat->doorbell.ctx, r->my_notify, snap, slice);
        else if (r->bind.wait)
            wr = r->bind.wait(r->bind.ctx, slice);
        else
            rp_relax(r);
        mdcom_rp_suppress(r, 1);
        if (wr == -EINTR)
            return -EINTR;
        if (cond(r))
            return 0;
    }
}

/* ------------------------------------------------------------------ */
/* receive path                                                          */
/* ------------------------------------------------------------------ */

/* Give an RX buffer back to the peer (made visible by mdcom_rp_flush_rx). */
void mdcom_rp_return_rx(struct mdcom_rpmsg *r, uint32_t b)
{
    r->bstate[b] = MDCOM_RP_B_PEER;
    if (r->role == MDCOM_RPMSG_HOST)
        mdcom_vq_drv_add(&r->rxq, (uint16_t)b, rp_buf_addr(r, b), r->bsize, MDCOM_VQ_DESC_F_WRITE);
    else
        /* used.len: virtio 1.x counts bytes the device wrote (none here: the
         * buffer is device-readable) and Linux ignores it, but OpenAMP's host
         * takes it as the size of the reclaimed TX buffer; OpenAMP's own
         * device returns the descriptor's length, and so do we */
        mdcom_vq_dev_put_used(&r->rxq, r->bhead[b], r->blen[b]);
    r->rx_dirty = 1;
}

void mdcom_rp_flush_rx(struct mdcom_rpmsg *r)
{
    if (!r->rx_dirty)
        return;
    r->rx_dirty = 0;
    if (r->role == MDCOM_RPMSG_HOST)
        mdcom_vq_drv_publish(&r->rxq);
    else
        mdcom_vq_dev_publish(&r->rxq);
    rp_kick(r, &r->rxq);
}

/* Dispatch buffer b holding len valid bytes (len in [16, bsize]); returns the
 * buffer unless the callback held it. 1 or -EBADMSG. */
static int rp_deliver(struct mdcom_rpmsg *r, uint32_t b, uint32_t len)
{
    uint8_t *buf = rp_buf(r, b);
    uint32_t src, dst, plen;
    int rc = 1;
    rp_cache_invalidate(r, buf, len);
    src = mdcom_rd32(buf + MDCOM_RP_HDR_SRC);
    dst = mdcom_rd32(buf + MDCOM_RP_HDR_DST);
    plen = mdcom_rd16(buf + MDCOM_RP_HDR_LEN);
    if (plen > len - MDCOM_RPMSG_HDR_SIZE) {
        r->st.bad_len++;
        mdcom_rp_return_rx(r, b);
        return -EBADMSG;
    }
    r->bstate[b] = MDCOM_RP_B_RX_CB;
    if (dst == MDCOM_RPMSG_NS_ADDR && r->ns_on) {
        rc = mdcom_rp_ns_rx(r, buf + MDCOM_RPMSG_HDR_SIZE, plen);
    } else {
        struct mdcom_rpmsg_ept *e = mdcom_rp_find_ept(r, dst);
        if (!e) {
            r->st.unknown_dst++; /* dropped, as Linux ("no recipient") and OpenAMP do */
        } else {
            if (e->dst == MDCOM_RPMSG_ADDR_ANY && src != MDCOM_RPMSG_ADDR_ANY)
                e->dst = src; /* learn the peer's address (OpenAMP) */
            r->st.rx_msgs++;
            if (e->cb && e->cb(e, buf + MDCOM_RPMSG_HDR_SIZE, plen, src, e->priv) < 0)
                r->st.cb_errors++;
        }
    }
    if (r->bstate[b] == MDCOM_RP_B_RX_CB)
        mdcom_rp_return_rx(r, b);
    return rc;
}

/* One received message: 1 dispatched, 0 none, < 0 violation (counted). */
static int rp_rx_one(struct mdcom_rpmsg *r)
{
    enum mdcom_vq_bad bad;
    uint16_t head;
    uint32_t len, b;
    int rc;
    if (r->role == MDCOM_RPMSG_HOST) {
        rc = mdcom_vq_drv_get_used(&r->rxq, &head, &len, &bad);
        if (rc <= 0) {
            rp_count_vq(r, bad);
            return rc;
        }
        b = head; /* RX descriptor i always carries buffer i */
        if (len < MDCOM_RPMSG_HDR_SIZE || len > r->bsize) {
            r->st.bad_len++;
            mdcom_rp_return_rx(r, b);
            return -EBADMSG;
        }
        return rp_deliver(r, b, len);
    } else {
        uint64_t addr;
        uint16_t flags;
        rc = mdcom_vq_dev_get_avail(&r->rxq, &head, &addr, &len, &flags, &bad);
        if (rc <= 0) {
            rp_count_vq(r, bad);
            return rc;
        }
        /* VRING_DESC_F_WRITE is tolerated: RPMsg-Lite's master marks its TX
         * buffers device-writable; the flag only allows the device to write,
         * and address and length are checked below all the same */
        if (flags & (MDCOM_VQ_DESC_F_NEXT | MDCOM_VQ_DESC_F_INDIRECT)) {
            r->st.bad_desc++;
            mdcom_vq_dev_put_used(&r->rxq, head, 0);
            r->rx_dirty = 1;
            return -EPROTO;
        }
        if (rp_addr_to_buf(r, addr, r->n, 2 * r->n, &b) != 0 || r->bstate[b] != MDCOM_RP_B_PEER) {
            r->st.bad_addr++;
            mdcom_vq_dev_put_used(&r->rxq, head, 0);
            r->rx_dirty = 1;
            return -EPROTO;
        }
        if (len < MDCOM_RPMSG_HDR_SIZE || len > r->bsize) {
            r->st.bad_len++;
            mdcom_vq_dev_put_used(&r->rxq, head, 0);
            r->rx_dirty = 1;
            return -EBADMSG;
        }
        r->bhead[b] = head;
        r->blen[b] = len;
        return rp_deliver(r, b, len);
    }
}

/* Dispatch what is pending (at most one ring's worth, so a flooding peer
 * cannot keep us here). Count (>= 0) or the first violation. */
static int rp_drain(struct mdcom_rpmsg *r)
{
    uint32_t n = 0;
    int rc = 0;
    r->depth++;
    while (n < r->n && (rc = rp_rx_one(r)) > 0)
        n++;
    r->depth--;
    mdcom_rp_flush_rx(r);
    return rc < 0 ? rc : (int)n;
}

int mdcom_rpmsg_poll(mdcom_rpmsg_t *r, int64_t timeout_ns)
{
    int rc;
    if (!rp_ok(r))
        return -EINVAL;
    if (r->depth >= MDCOM_RP_MAX_DEPTH)
        return -EDEADLK;
    rc = rp_drain(r);
    if (rc != 0)
        return rc;
    rc = rp_peer_check(r);
    if (rc != 0 || timeout_ns == 0)
        return rc;
    rc = rp_wait(r, rp_rx_pending, rp_deadline(r, timeout_ns));
    if (rc == -ETIMEDOUT)
        return 0;
    if (rc != 0)
        return rc;
    return rp_drain(r);
}

/* ------------------------------------------------------------------ */
/* transmit path                                                         */
/* ------------------------------------------------------------------ */

/* Take a TX buffer without waiting: 1 and *b, 0 none, < 0 violation. */
static int rp_try_tx(struct mdcom_rpmsg *r, uint32_t *b)
{
    enum mdcom_vq_bad bad;
    uint16_t head;
    uint32_t len, i;
    int rc;
    if (r->role == MDCOM_RPMSG_HOST) {
        if (r->nstack == 0) {
            /* reclaim what the remote consumed (Linux does it the same way:
             * unused buffers first, then the used ring) */
            while ((rc = mdcom_vq_drv_get_used(&r->txq, &head, &len, &bad)) > 0) {
                r->bstate[r->n + head] = MDCOM_RP_B_FREE;
                r->stack[r->nstack++] = head;
            }
            if (rc < 0) {
                rp_count_vq(r, bad);
                if (r->nstack == 0)
                    return rc;
            }
            if (r->nstack == 0)
                return 0;
        }
        *b = r->n + r->stack[--r->nstack];
        r->bstate[*b] = MDCOM_RP_B_TX_APP;
        return 1;
    } else {
        uint64_t addr;
        uint16_t flags;
        if (r->nstack) {
            *b = r->stack[--r->nstack];
            r->bstate[*b] = MDCOM_RP_B_TX_APP;
            return 1;
        }
        rc = mdcom_vq_dev_get_avail(&r->txq, &head, &addr, &len, &flags, &bad);
        if (rc <= 0) {
            rp_count_vq(r, bad);
            return rc;
        }
        rc = 0;
        if ((flags & (MDCOM_VQ_DESC_F_NEXT | MDCOM_VQ_DESC_F_INDIRECT)) ||
            !(flags & MDCOM_VQ_DESC_F_WRITE)) {
            r->st.bad_desc++;
            rc = -EPROTO;
        } else if (rp_addr_to_buf(r, addr, 0, r->n, &i) != 0 || r->bstate[i] != MDCOM_RP_B_PEER) {
            r->st.bad_addr++;
            rc = -EPROTO;
        } else if (len != r->bsize) {
            r->st.bad_len++;
            rc = -EBADMSG;
        }
        if (rc) {
            /* hand the bad descriptor back untouched (0 bytes written) */
            mdcom_vq_dev_put_used(&r->txq, head, 0);
            mdcom_vq_dev_publish(&r->txq);
            return rc;
        }
        r->bhead[i] = head;
        r->bstate[i] = MDCOM_RP_B_TX_APP;
        *b = i;
        return 1;
    }
}

/* Take a TX buffer, waiting up to timeout_ns and draining RX meanwhile. */
int mdcom_rp_get_tx(struct mdcom_rpmsg *r, uint32_t *b, int64_t timeout_ns)
{
    uint64_t deadline = 0;
    int rc, drained = 0;
    for (;;) {
        rc = rp_try_tx(r, b);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        if ((rc = rp_peer_check(r)) != 0)
            return rc;
        if (timeout_ns != 0 && deadline == 0)
            deadline = rp_deadline(r, timeout_ns);
        /* no deadlock: while we wait for the peer to consume, consume its
         * messages, which may be what it waits for (a poll drains once) */
        if (r->depth < MDCOM_RP_MAX_DEPTH && rp_rx_pending(r) && !(timeout_ns == 0 && drained)) {
            rc = rp_drain(r);
            drained = 1;
            if (rc == -EPROTO)
                return rc; /* the RX ring is corrupted: do not spin on it */
            /* a peer flooding us with messages must not hold us past the
             * deadline */
            if (timeout_ns > 0 && rp_now(r) >= deadline) {
                rc = rp_try_tx(r, b);
                return rc > 0 ? 0 : rc < 0 ? rc : -ETIMEDOUT;
            }
            continue;
        }
        if (timeout_ns == 0)
            return -ETIMEDOUT;
        rc = rp_wait(r, rp_tx_or_rx, deadline);
        if (rc != 0)
            return rc;
        /* rp_wait said "a buffer (or a message) is there" and the next try
         * may still find none (a hostile peer's ring words): that ends at
         * the deadline too, not in another round */
        if (timeout_ns > 0 && rp_now(r) >= deadline) {
            rc = rp_try_tx(r, b);
            return rc > 0 ? 0 : rc < 0 ? rc : -ETIMEDOUT;
        }
    }
}

/* Publish buffer b (owned by the application) carrying len payload bytes. */
void mdcom_rp_post_tx(struct mdcom_rpmsg *r, uint32_t b, uint32_t src, uint32_t dst, uint32_t len)
{
    uint8_t *buf = rp_buf(r, b);
    mdcom_wr32(buf + MDCOM_RP_HDR_SRC, src);
    mdcom_wr32(buf + MDCOM_RP_HDR_DST, dst);
    mdcom_wr32(buf + MDCOM_RP_HDR_RSVD, 0);
    mdcom_wr16(buf + MDCOM_RP_HDR_LEN, (uint16_t)len);
    mdcom_wr16(buf + MDCOM_RP_HDR_FLAGS, 0);
    rp_cache_clean(r, buf, MDCOM_RPMSG_HDR_SIZE + len);
    r->bstate[b] = MDCOM_RP_B_PEER;
    if (r->role == MDCOM_RPMSG_HOST) {
        mdcom_vq_drv_add(&r->txq, (uint16_t)(b - r->n), rp_buf_addr(r, b),
                         MDCOM_RPMSG_HDR_SIZE + len, 0);
        mdcom_vq_drv_publish(&r->txq);
    } else {
        mdcom_vq_dev_put_used(&r->txq, r->bhead[b], MDCOM_RPMSG_HDR_SIZE + len);
        mdcom_vq_dev_publish(&r->txq);
    }
    r->st.tx_msgs++;
    rp_kick(r, &r->txq);
}

/* Give back an unused TX buffer. */
void mdcom_rp_free_tx(struct mdcom_rpmsg *r, uint32_t b)
{
    r->bstate[b] = MDCOM_RP_B_FREE;
    r->stack[r->nstack++] = (uint16_t)(r->role == MDCOM_RPMSG_HOST ? b - r->n : b);
}

int mdcom_rp_send_raw(struct mdcom_rpmsg *r, uint32_t src, uint32_t dst, const void *data,
                      size_t len, int64_t timeout_ns)
{
    uint32_t b;
    int rc;
    if ((!data && len) || src == MDCOM_RPMSG_ADDR_ANY || dst == MDCOM_RPMSG_ADDR_ANY)
        return -EINVAL;
    if (len > r->bsize - MDCOM_RPMSG_HDR_SIZE)
        return -EMSGSIZE;
    rc = mdcom_rp_get_tx(r, &b, timeout_ns);
    if (rc)
        return rc;
    if (len)
        memcpy(rp_buf(r, b) + MDCOM_RPMSG_HDR_SIZE, data, len);
    mdcom_rp_post_tx(r, b, src, dst, (uint32_t)len);
    return 0;
}
