/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg.c - RPMsg endpoints, name service and the host/remote buffer flows
 * over the virtqueues of virtqueue.c. The area is drawn in rpmsg_internal.h.
 *
 *   host (virtio driver)                       remote (virtio device)
 *   send: free TX head (or reclaim from        send: take a host RX buffer from
 *         vring 1 used) -> write -> add to           vring 0 avail -> write ->
 *         vring 1 avail -> publish -> kick           vring 0 used -> publish -> kick
 *   recv: vring 0 used -> dispatch ->          recv: vring 1 avail -> dispatch ->
 *         re-post in vring 0 avail                   return in vring 1 used
 *
 * Everything read from the area (indices, heads, descriptors, headers, name
 * service messages) is read once into locals and validated; a violation is
 * counted in r->st and returned as -EPROTO / -EBADMSG. Freestanding: no
 * libc beyond memcpy/memset.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "rpmsg_internal.h"

#define RP_SPIN_DEFAULT_NS 20000u
#define RP_SPIN_MIN_NS 500u
#define RP_SLEEP_SLICE_NS 100000000ull /* re-check the peer's status every 100 ms */

/* ------------------------------------------------------------------ */
/* small helpers (no libc)                                               */
/* ------------------------------------------------------------------ */
static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1u) & ~(a - 1u); }
static size_t align_sz(size_t v, size_t a) { return (v + a - 1u) & ~(a - 1u); }
static int is_pow2(uint32_t v) { return v != 0 && (v & (v - 1u)) == 0; }

/* length of s if it has a NUL within max bytes, else max */
static uint32_t rp_strnlen(const char *s, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && s[n] != '\0')
        n++;
    return n;
}

static int rp_name_eq(const char *a, const char *b)
{
    uint32_t i;
    for (i = 0; i < MDCOM_RPMSG_NAME_SIZE; i++) {
        if (a[i] != b[i])
            return 0;
        if (a[i] == '\0')
            return 1;
    }
    return 1;
}

static uint64_t rp_now(const struct mdcom_rpmsg *r) { return r->plat->now_ns(r->plat->ctx); }

static void rp_relax(const struct mdcom_rpmsg *r)
{
    if (r->plat->relax)
        r->plat->relax(r->plat->ctx);
}

static uint64_t rp_deadline(const struct mdcom_rpmsg *r, int64_t timeout_ns)
{
    uint64_t now;
    if (timeout_ns < 0)
        return UINT64_MAX;
    now = rp_now(r);
    return now + (uint64_t)timeout_ns < now ? UINT64_MAX : now + (uint64_t)timeout_ns;
}

static uint8_t *rp_buf(const struct mdcom_rpmsg *r, uint32_t b)
{
    return r->pool + (size_t)b * r->bsize;
}

static uint64_t rp_buf_addr(const struct mdcom_rpmsg *r, uint32_t b)
{
    return r->addr_base + (uint64_t)b * r->bsize;
}

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

/* Buffer index of a payload pointer handed to the application. 0 or -1. */
static int rp_ptr_to_buf(const struct mdcom_rpmsg *r, const void *p, uint32_t *b)
{
    const uint8_t *q = (const uint8_t *)p;
    size_t off;
    if (q < r->pool + MDCOM_RPMSG_HDR_SIZE || q >= r->pool + r->lay.pool_size)
        return -1;
    off = (size_t)(q - r->pool) - MDCOM_RPMSG_HDR_SIZE;
    if (off % r->bsize != 0)
        return -1;
    *b = (uint32_t)(off / r->bsize);
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
/* layout                                                                */
/* ------------------------------------------------------------------ */
static void rp_geometry_resolve(const mdcom_rpmsg_geometry *g, mdcom_rpmsg_geometry *out)
{
    out->num_bufs = (g && g->num_bufs) ? g->num_bufs : MDCOM_RPMSG_DEFAULT_NUM_BUFS;
    out->buf_size = (g && g->buf_size) ? g->buf_size : MDCOM_RPMSG_DEFAULT_BUF_SIZE;
    out->vring_align = (g && g->vring_align) ? g->vring_align : MDCOM_RPMSG_DEFAULT_ALIGN;
}

int mdcom_rpmsg_layout_compute(const mdcom_rpmsg_geometry *g, mdcom_rpmsg_layout *out)
{
    mdcom_rpmsg_geometry geo;
    struct mdcom_vring_layout vl;
    uint64_t v0, v1, pool, pool_size, end;
    uint32_t pool_align;
    if (!out)
        return -EINVAL;
    rp_geometry_resolve(g, &geo);
    if (!is_pow2(geo.num_bufs) || geo.num_bufs > MDCOM_RPMSG_MAX_NUM_BUFS)
        return -EINVAL;
    if (geo.buf_size < MDCOM_RPMSG_MIN_BUF_SIZE || geo.buf_size > MDCOM_RPMSG_MAX_BUF_SIZE ||
        geo.buf_size % 16u != 0)
        return -EINVAL;
    if (mdcom_vring_layout_compute(geo.num_bufs, geo.vring_align, &vl) != 0)
        return -EINVAL;
    pool_align = geo.vring_align > MDCOM_RP_POOL_ALIGN ? geo.vring_align : MDCOM_RP_POOL_ALIGN;
    v0 = align_up(MDCOM_RP_CTL_SIZE, geo.vring_align);
    v1 = v0 + vl.size_aligned;
    pool = v1 + vl.size;
    pool = (pool + pool_align - 1u) & ~(uint64_t)(pool_align - 1u);
    pool_size = 2ull * geo.num_bufs * geo.buf_size;
    end = pool + pool_size;
    if (end > UINT32_MAX)
        return -EOVERFLOW;
    out->geometry = geo;
    out->ctl_off = 0;
    out->ctl_size = MDCOM_RP_CTL_SIZE;
    out->vring_off[0] = (uint32_t)v0;
    out->vring_off[1] = (uint32_t)v1;
    out->vring_size = vl.size;
    out->pool_off = (uint32_t)pool;
    out->pool_size = (uint32_t)pool_size;
    out->size = (uint32_t)end;
    return 0;
}

/* ------------------------------------------------------------------ */
/* private memory                                                         */
/* ------------------------------------------------------------------ */
struct rp_mem {
    size_t inst, epts, svcs, bhead, blen, stack, bstate, vq0, vq1, total;
};

static int rp_mem_plan(const mdcom_rpmsg_opts *o, const mdcom_rpmsg_layout *lay,
                       struct rp_mem *m)
{
    uint32_t ne = o->max_endpoints ? o->max_endpoints : MDCOM_RPMSG_DEFAULT_ENDPOINTS;
    uint32_t ns = o->max_services ? o->max_services : MDCOM_RPMSG_DEFAULT_SERVICES;
    size_t n = lay->geometry.num_bufs;
    if (ne > 65536u || ns > 65536u)
        return -EINVAL;
    m->inst = 0;
    m->epts = align_sz(sizeof(struct mdcom_rpmsg), 16);
    m->svcs = m->epts + align_sz(ne * sizeof(struct mdcom_rpmsg_ept), 16);
    m->bhead = m->svcs + align_sz(ns * sizeof(struct mdcom_rp_svc), 16);
    m->blen = m->bhead + align_sz(2 * n * sizeof(uint16_t), 16);
    m->stack = m->blen + align_sz(2 * n * sizeof(uint32_t), 16);
    m->bstate = m->stack + align_sz(n * sizeof(uint16_t), 16);
    m->vq0 = m->bstate + align_sz(2 * n, 16);
    m->vq1 = m->vq0 + align_sz(n, 16);
    m->total = m->vq1 + align_sz(n, 16);
    return 0;
}

size_t mdcom_rpmsg_state_size(const mdcom_rpmsg_opts *opts)
{
    mdcom_rpmsg_layout lay;
    struct rp_mem m;
    if (!opts || mdcom_rpmsg_layout_compute(&opts->geometry, &lay) != 0 ||
        rp_mem_plan(opts, &lay, &m) != 0)
        return 0;
    return m.total;
}

/* ------------------------------------------------------------------ */
/* notification and waiting                                              */
/* ------------------------------------------------------------------ */
/* Ask the peer not to notify us (on) or to notify us again (off), on both
 * rings we receive on. */
static void rp_suppress(struct mdcom_rpmsg *r, int on)
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
static void rp_notify(struct mdcom_rpmsg *r, uint32_t idx)
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
        rp_notify(r, idx);
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
        return -ESHUTDOWN;
    if (!r->bound && mdcom_rd32(&r->ctl->generation) != r->generation)
        return -ESHUTDOWN;
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
                r->spin_cur = (uint64_t)r->spin_cur * 2 > r->spin_max ? r->spin_max : r->spin_cur * 2;
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
        rp_suppress(r, 0);
        /* fence: ask for notifications before the final check (pairs with
         * the fence in rp_kick) */
        atomic_thread_fence(memory_order_seq_cst);
        if (cond(r)) {
            rp_suppress(r, 1);
            return 0;
        }
        now = rp_now(r);
        if (now >= deadline) {
            rp_suppress(r, 1);
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
        rp_suppress(r, 1);
        if (wr == -EINTR)
            return -EINTR;
        if (cond(r))
            return 0;
    }
}

/* ------------------------------------------------------------------ */
/* receive path                                                          */
/* ------------------------------------------------------------------ */
/* Give an RX buffer back to the peer (made visible by rp_flush_rx). */
static void rp_return_rx(struct mdcom_rpmsg *r, uint32_t b)
{
    r->bstate[b] = MDCOM_RP_B_PEER;
    if (r->role == MDCOM_RPMSG_HOST)
        mdcom_vq_drv_add(&r->rxq, (uint16_t)b, rp_buf_addr(r, b), r->bsize,
                         MDCOM_VQ_DESC_F_WRITE);
    else
        /* used.len: virtio 1.x counts bytes the device wrote (none here: the
         * buffer is device-readable) and Linux ignores it, but OpenAMP's host
         * takes it as the size of the reclaimed TX buffer; OpenAMP's own
         * device returns the descriptor's length, and so do we */
        mdcom_vq_dev_put_used(&r->rxq, r->bhead[b], r->blen[b]);
    r->rx_dirty = 1;
}

static void rp_flush_rx(struct mdcom_rpmsg *r)
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

static struct mdcom_rpmsg_ept *rp_find_ept(struct mdcom_rpmsg *r, uint32_t addr)
{
    uint32_t i;
    for (i = 0; i < r->max_epts; i++)
        if (r->epts[i].in_use && r->epts[i].addr == addr)
            return &r->epts[i];
    return NULL;
}

static struct mdcom_rp_svc *rp_find_svc(struct mdcom_rpmsg *r, const char *name)
{
    uint32_t i;
    for (i = 0; i < r->max_svcs; i++)
        if (r->svcs[i].in_use && rp_name_eq(r->svcs[i].name, name))
            return &r->svcs[i];
    return NULL;
}

/* A name service message (payload p of plen bytes). 1 (handled or dropped). */
static int rp_ns_rx(struct mdcom_rpmsg *r, const uint8_t *p, uint32_t plen)
{
    char name[MDCOM_RPMSG_NAME_SIZE];
    uint32_t addr, flags, i;
    if (plen != MDCOM_RPMSG_NS_MSG_SIZE) {
        r->st.bad_ns++; /* dropped, as Linux and OpenAMP do */
        return 1;
    }
    memcpy(name, p + MDCOM_RP_NS_NAME, sizeof(name)); /* read once */
    addr = mdcom_rd32(p + MDCOM_RP_NS_ADDR);
    flags = mdcom_rd32(p + MDCOM_RP_NS_FLAGS);
    if (rp_strnlen(name, sizeof(name)) == sizeof(name) || name[0] == '\0' ||
        addr == MDCOM_RPMSG_ADDR_ANY ||
        (flags != MDCOM_RPMSG_NS_CREATE && flags != MDCOM_RPMSG_NS_DESTROY)) {
        r->st.bad_ns++; /* dropped */
        return 1;
    }
    if (flags == MDCOM_RPMSG_NS_CREATE) {
        struct mdcom_rp_svc *s = rp_find_svc(r, name);
        /* an unbound local endpoint of that name binds to it (OpenAMP) */
        for (i = 0; i < r->max_epts; i++) {
            struct mdcom_rpmsg_ept *e = &r->epts[i];
            if (e->in_use && e->dst == MDCOM_RPMSG_ADDR_ANY && rp_name_eq(e->name, name)) {
                e->dst = addr;
                break;
            }
        }
        if (!s) {
            for (i = 0; i < r->max_svcs && r->svcs[i].in_use; i++) {
            }
            s = i < r->max_svcs ? &r->svcs[i] : NULL;
        }
        if (s) {
            memcpy(s->name, name, sizeof(name));
            s->addr = addr;
            s->in_use = 1;
        } else {
            r->st.ns_dropped++;
        }
    } else {
        struct mdcom_rp_svc *s = rp_find_svc(r, name);
        if (s && s->addr == addr)
            s->in_use = 0;
        for (i = 0; i < r->max_epts; i++) {
            struct mdcom_rpmsg_ept *e = &r->epts[i];
            if (e->in_use && e->dst == addr && rp_name_eq(e->name, name))
                e->dst = MDCOM_RPMSG_ADDR_ANY;
        }
    }
    if (r->ns_cb)
        r->ns_cb(r, name, addr, flags, r->ns_priv);
    return 1;
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
        rp_return_rx(r, b);
        return -EBADMSG;
    }
    r->bstate[b] = MDCOM_RP_B_RX_CB;
    if (dst == MDCOM_RPMSG_NS_ADDR && r->ns_on) {
        rc = rp_ns_rx(r, buf + MDCOM_RPMSG_HDR_SIZE, plen);
    } else {
        struct mdcom_rpmsg_ept *e = rp_find_ept(r, dst);
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
        rp_return_rx(r, b);
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
            rp_return_rx(r, b);
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
        if (rp_addr_to_buf(r, addr, r->n, 2 * r->n, &b) != 0 ||
            r->bstate[b] != MDCOM_RP_B_PEER) {
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
    rp_flush_rx(r);
    return rc < 0 ? rc : (int)n;
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
static int rp_get_tx(struct mdcom_rpmsg *r, uint32_t *b, int64_t timeout_ns)
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
static void rp_post_tx(struct mdcom_rpmsg *r, uint32_t b, uint32_t src, uint32_t dst,
                       uint32_t len)
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
static void rp_free_tx(struct mdcom_rpmsg *r, uint32_t b)
{
    r->bstate[b] = MDCOM_RP_B_FREE;
    r->stack[r->nstack++] = (uint16_t)(r->role == MDCOM_RPMSG_HOST ? b - r->n : b);
}

static int rp_send_raw(struct mdcom_rpmsg *r, uint32_t src, uint32_t dst, const void *data,
                       size_t len, int64_t timeout_ns)
{
    uint32_t b;
    int rc;
    if ((!data && len) || src == MDCOM_RPMSG_ADDR_ANY || dst == MDCOM_RPMSG_ADDR_ANY)
        return -EINVAL;
    if (len > r->bsize - MDCOM_RPMSG_HDR_SIZE)
        return -EMSGSIZE;
    rc = rp_get_tx(r, &b, timeout_ns);
    if (rc)
        return rc;
    if (len)
        memcpy(rp_buf(r, b) + MDCOM_RPMSG_HDR_SIZE, data, len);
    rp_post_tx(r, b, src, dst, (uint32_t)len);
    return 0;
}

static int rp_send_ns(struct mdcom_rpmsg *r, const struct mdcom_rpmsg_ept *e, uint32_t flags,
                      int64_t timeout_ns)
{
    uint8_t msg[MDCOM_RPMSG_NS_MSG_SIZE];
    memset(msg, 0, sizeof(msg));
    memcpy(msg + MDCOM_RP_NS_NAME, e->name, MDCOM_RPMSG_NAME_SIZE);
    mdcom_wr32(msg + MDCOM_RP_NS_ADDR, e->addr);
    mdcom_wr32(msg + MDCOM_RP_NS_FLAGS, flags);
    return rp_send_raw(r, e->addr, MDCOM_RPMSG_NS_ADDR, msg, sizeof(msg), timeout_ns);
}

/* ------------------------------------------------------------------ */
/* instance                                                              */
/* ------------------------------------------------------------------ */
static int rp_ok(const struct mdcom_rpmsg *r) { return r && r->magic == MDCOM_RP_INST_MAGIC; }

static struct mdcom_rpmsg *rp_of(const struct mdcom_rpmsg_ept *e)
{
    if (!e || !e->in_use || !rp_ok(e->r))
        return NULL;
    if (e < e->r->epts || e >= e->r->epts + e->r->max_epts)
        return NULL;
    return e->r;
}

/* Host: zero both vrings, post every RX buffer, put every TX buffer on the
 * free list (not yet visible: the caller publishes the status after). */
static void rp_host_rings(struct mdcom_rpmsg *r)
{
    uint32_t i;
    mdcom_vq_drv_format(&r->rxq);
    mdcom_vq_drv_format(&r->txq);
    for (i = 0; i < r->n; i++) {
        mdcom_vq_drv_add(&r->rxq, (uint16_t)i, rp_buf_addr(r, i), r->bsize,
                         MDCOM_VQ_DESC_F_WRITE);
        r->bstate[r->n + i] = MDCOM_RP_B_FREE;
        r->stack[i] = (uint16_t)(r->n - 1u - i); /* pop order 0, 1, 2, ... */
    }
    r->nstack = r->n;
    rp_suppress(r, 1);
    mdcom_vq_drv_publish(&r->rxq);
}

static void rp_host_format(struct mdcom_rpmsg *r, uint32_t features)
{
    struct mdcom_rp_ctl *c = r->ctl;
    uint32_t gen = 1;
    if (mdcom_rd32(&c->magic) == MDCOM_RP_MAGIC)
        gen = mdcom_rd32(&c->generation) + 1u;
    else
        memset(c, 0, sizeof(*c));
    /* relaxed: the remote only trusts the fields after the release below */
    atomic_store_explicit(&c->status, 0, memory_order_relaxed);
    atomic_store_explicit(&c->remote, 0, memory_order_relaxed);
    mdcom_wr32(&c->magic, MDCOM_RP_MAGIC);
    mdcom_wr32(&c->version, MDCOM_RP_VERSION);
    mdcom_wr32(&c->num_bufs, r->n);
    mdcom_wr32(&c->buf_size, r->bsize);
    mdcom_wr32(&c->vring_align, r->lay.geometry.vring_align);
    mdcom_wr32(&c->size, r->lay.size);
    mdcom_wr32(&c->features, features);
    mdcom_wr32(&c->generation, gen);
    r->generation = gen;
    r->ns_on = (features & MDCOM_RPMSG_F_NS) != 0;
    rp_host_rings(r);
    /* release: geometry, vrings and posted buffers are complete before a
     * remote that acquires status with DRIVER_OK looks at them */
    atomic_store_explicit(&c->status, MDCOM_RP_ST_READY, memory_order_release);
    r->plat->doorbell.ring(r->plat->doorbell.ctx, &c->status, UINT32_MAX);
}

static int rp_remote_attach(struct mdcom_rpmsg *r, int64_t timeout_ns)
{
    struct mdcom_rp_ctl *c = r->ctl;
    uint64_t deadline = rp_deadline(r, timeout_ns);
    for (;;) {
        /* acquire: pairs with the host's release of status (format complete) */
        uint32_t st = atomic_load_explicit(&c->status, memory_order_acquire);
        uint64_t now;
        if (st & MDCOM_RP_ST_FAILED)
            return -ECONNREFUSED;
        if (st & MDCOM_RP_ST_DRIVER_OK)
            break;
        now = rp_now(r);
        if (now >= deadline)
            return -ETIMEDOUT;
        /* sleep on the status word in slices (a stale value never hangs us) */
        r->plat->doorbell.wait(r->plat->doorbell.ctx, &c->status, st,
                               (deadline - now) > 10000000u ? 10000000 : (int64_t)(deadline - now));
    }
    if (mdcom_rd32(&c->magic) != MDCOM_RP_MAGIC)
        return -EBADMSG;
    if (mdcom_rd32(&c->version) != MDCOM_RP_VERSION)
        return -EPROTONOSUPPORT;
    if (mdcom_rd32(&c->num_bufs) != r->n || mdcom_rd32(&c->buf_size) != r->bsize ||
        mdcom_rd32(&c->vring_align) != r->lay.geometry.vring_align ||
        mdcom_rd32(&c->size) != r->lay.size)
        return -ESTALE;
    r->generation = mdcom_rd32(&c->generation);
    r->ns_on = (mdcom_rd32(&c->features) & MDCOM_RPMSG_F_NS) != 0;
    r->nstack = 0;
    rp_suppress(r, 1);
    /* release: nothing to publish with it, but keeps the host's view ordered */
    atomic_store_explicit(&c->remote, 1, memory_order_release);
    return 0;
}

/* The parts of an instance common to both modes. */
static int rp_setup(struct mdcom_rpmsg *r, uint8_t *s, const struct rp_mem *m,
                    const mdcom_rpmsg_opts *opts)
{
    r->role = opts->role;
    r->plat = opts->platform ? opts->platform : mdcom_platform_default();
    if (!r->plat || !r->plat->now_ns || !r->plat->doorbell.wait || !r->plat->doorbell.ring)
        return -EINVAL;
    if (r->addr_base + r->lay.pool_size < r->addr_base)
        return -EINVAL;
    r->n = r->lay.geometry.num_bufs;
    r->bsize = r->lay.geometry.buf_size;
    r->spin_max = opts->spin_ns ? opts->spin_ns : RP_SPIN_DEFAULT_NS;
    r->spin_cur = r->spin_max == MDCOM_NO_SPIN ? 0 : r->spin_max;
    r->epts = (struct mdcom_rpmsg_ept *)(void *)(s + m->epts);
    r->max_epts = opts->max_endpoints ? opts->max_endpoints : MDCOM_RPMSG_DEFAULT_ENDPOINTS;
    r->svcs = (struct mdcom_rp_svc *)(void *)(s + m->svcs);
    r->max_svcs = opts->max_services ? opts->max_services : MDCOM_RPMSG_DEFAULT_SERVICES;
    r->bhead = (uint16_t *)(void *)(s + m->bhead);
    r->blen = (uint32_t *)(void *)(s + m->blen);
    r->stack = (uint16_t *)(void *)(s + m->stack);
    r->bstate = s + m->bstate;
    r->next_addr = MDCOM_RPMSG_RESERVED_ADDRESSES;
    r->ns_cb = opts->ns_cb;
    r->ns_priv = opts->ns_priv;
    return 0;
}

int mdcom_rpmsg_init(mdcom_rpmsg_t **out, void *state, size_t state_size, void *area,
                     size_t area_size, const mdcom_rpmsg_opts *opts)
{
    mdcom_rpmsg_layout lay;
    struct rp_mem m;
    struct mdcom_rpmsg *r;
    uint8_t *s = (uint8_t *)state;
    int rc;
    if (!out || !state || !area || !opts)
        return -EINVAL;
    *out = NULL;
    if (opts->role != MDCOM_RPMSG_HOST && opts->role != MDCOM_RPMSG_REMOTE)
        return -EINVAL;
    if ((rc = mdcom_rpmsg_layout_compute(&opts->geometry, &lay)) != 0)
        return rc == -EOVERFLOW ? -ENOSPC : rc;
    if (rp_mem_plan(opts, &lay, &m) != 0)
        return -EINVAL;
    if (((uintptr_t)area & (MDCOM_RP_POOL_ALIGN - 1u)) != 0 || ((uintptr_t)state & 15u) != 0)
        return -EINVAL;
    if (area_size < lay.size || state_size < m.total)
        return -ENOSPC;
    memset(state, 0, m.total);
    r = (struct mdcom_rpmsg *)(void *)s;
    r->lay = lay;
    r->addr_base = opts->addr_base;
    if ((rc = rp_setup(r, s, &m, opts)) != 0)
        return rc;
    (void)mdcom_vring_layout_compute(lay.geometry.num_bufs, lay.geometry.vring_align, &r->vl);
    r->area = (uint8_t *)area;
    r->ctl = (struct mdcom_rp_ctl *)area;
    r->pool = r->area + lay.pool_off;
    if (r->role == MDCOM_RPMSG_HOST) {
        mdcom_vq_bind(&r->rxq, r->area + lay.vring_off[0], &r->vl, s + m.vq0);
        mdcom_vq_bind(&r->txq, r->area + lay.vring_off[1], &r->vl, s + m.vq1);
        r->my_notify = &r->ctl->notify_host;
        r->peer_notify = &r->ctl->notify_remote;
        rp_host_format(r, opts->no_ns ? 0u : MDCOM_RPMSG_F_NS);
    } else {
        mdcom_vq_bind(&r->rxq, r->area + lay.vring_off[1], &r->vl, s + m.vq0);
        mdcom_vq_bind(&r->txq, r->area + lay.vring_off[0], &r->vl, s + m.vq1);
        r->my_notify = &r->ctl->notify_remote;
        r->peer_notify = &r->ctl->notify_host;
        if ((rc = rp_remote_attach(r, opts->attach_timeout_ns)) != 0)
            return rc;
    }
    r->magic = MDCOM_RP_INST_MAGIC;
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------ */
/* bound memory (resource table, vhost-user)                             */
/* ------------------------------------------------------------------ */
int mdcom_rpmsg_bind_legacy_vrings(mdcom_rpmsg_bind *b, void *vring0, void *vring1, uint32_t num,
                                   uint32_t align)
{
    struct mdcom_vring_layout l;
    uint8_t *v[2];
    uint32_t i;
    if (!b || !vring0 || !vring1 || mdcom_vring_layout_compute(num, align, &l) != 0)
        return -EINVAL;
    v[0] = (uint8_t *)vring0;
    v[1] = (uint8_t *)vring1;
    for (i = 0; i < 2; i++) {
        b->vring[i].desc = v[i] + l.desc_off;
        b->vring[i].avail = v[i] + l.avail_off;
        b->vring[i].used = v[i] + l.used_off;
    }
    b->num = num;
    return 0;
}

int mdcom_rpmsg_bind_find_pool(mdcom_rpmsg_bind *b)
{
    const uint8_t *avail, *desc;
    uint64_t lo = UINT64_MAX, span;
    uint16_t n, k;
    if (!b || !b->vring[0].desc || !b->vring[0].avail || !is_pow2(b->num) ||
        b->num > MDCOM_RPMSG_MAX_NUM_BUFS || b->buf_size < MDCOM_RPMSG_MIN_BUF_SIZE ||
        b->buf_size > MDCOM_RPMSG_MAX_BUF_SIZE || b->buf_size % 16u != 0)
        return -EINVAL;
    avail = (const uint8_t *)b->vring[0].avail;
    desc = (const uint8_t *)b->vring[0].desc;
    /* acquire: the ring entries and descriptors the host wrote before it
     * published avail.idx are visible once we see idx */
    n = MDCOM_LE16(atomic_load_explicit((const _Atomic uint16_t *)(const void *)(avail + 2),
                                        memory_order_acquire));
    if (n == 0)
        return -EAGAIN;
    if (n > b->num)
        return -EPROTO;
    span = (uint64_t)b->num * b->buf_size; /* the RX half of the pool */
    /* two passes over the host's entries, each read once per pass and
     * checked before use: the lowest address, then every address inside
     * [lo, lo + span) on a buffer boundary */
    for (k = 0; k < n; k++) {
        uint16_t h = mdcom_rd16(avail + 4u + 2u * k);
        const uint8_t *d;
        uint64_t a;
        if (h >= b->num)
            return -EPROTO;
        d = desc + 16u * h;
        if (mdcom_rd32(d + 8) != b->buf_size || mdcom_rd16(d + 12) != MDCOM_VQ_DESC_F_WRITE)
            return -EPROTO;
        a = mdcom_rd64(d);
        if (a < lo)
            lo = a;
    }
    if (lo > UINT64_MAX - 2u * span)
        return -EPROTO;
    for (k = 0; k < n; k++) {
        uint16_t h = mdcom_rd16(avail + 4u + 2u * k);
        uint64_t a;
        if (h >= b->num)
            return -EPROTO;
        a = mdcom_rd64(desc + 16u * h);
        if (a < lo || a - lo >= span || (a - lo) % b->buf_size != 0)
            return -EPROTO;
    }
    b->pool_da = lo;
    return 0;
}

static void rp_status_set(const struct mdcom_rpmsg *r, uint32_t st, memory_order mo)
{
    atomic_store_explicit((_Atomic uint8_t *)(void *)r->bind.status, (uint8_t)st, mo);
}

size_t mdcom_rpmsg_state_size_bound(uint32_t num, const mdcom_rpmsg_opts *opts)
{
    mdcom_rpmsg_layout lay;
    struct rp_mem m;
    memset(&lay, 0, sizeof(lay));
    lay.geometry.num_bufs = num;
    if (!opts || !is_pow2(num) || num > MDCOM_RPMSG_MAX_NUM_BUFS || rp_mem_plan(opts, &lay, &m) != 0)
        return 0;
    return m.total;
}

/* Remote: wait for DRIVER_OK in the bound status byte. */
static int rp_bound_attach(struct mdcom_rpmsg *r, int64_t timeout_ns)
{
    uint64_t deadline = rp_deadline(r, timeout_ns);
    for (;;) {
        /* acquire: the host formatted the vrings before it set DRIVER_OK */
        uint32_t st = atomic_load_explicit((_Atomic uint8_t *)(void *)r->bind.status,
                                           memory_order_acquire);
        if (st & MDCOM_RP_ST_FAILED)
            return -ECONNREFUSED;
        if (st & MDCOM_RP_ST_DRIVER_OK)
            return 0;
        if (rp_now(r) >= deadline)
            return -ETIMEDOUT;
        /* the host does not notify a status change: sleep 1 ms slices */
        if (r->bind.wait)
            (void)r->bind.wait(r->bind.ctx, 1000000);
        else
            rp_relax(r);
    }
}

int mdcom_rpmsg_init_bound(mdcom_rpmsg_t **out, void *state, size_t state_size,
                           const mdcom_rpmsg_bind *b, const mdcom_rpmsg_opts *opts)
{
    struct rp_mem m;
    struct mdcom_rpmsg *r;
    uint8_t *s = (uint8_t *)state;
    uint32_t i, features;
    int rc;
    if (!out || !state || !b || !opts)
        return -EINVAL;
    *out = NULL;
    if (opts->role != MDCOM_RPMSG_HOST && opts->role != MDCOM_RPMSG_REMOTE)
        return -EINVAL;
    if (!b->pool || !b->notify || !is_pow2(b->num) || b->num > MDCOM_RPMSG_MAX_NUM_BUFS ||
        b->buf_size < MDCOM_RPMSG_MIN_BUF_SIZE || b->buf_size > MDCOM_RPMSG_MAX_BUF_SIZE ||
        b->buf_size % 16u != 0 || ((uintptr_t)state & 15u) != 0)
        return -EINVAL;
    for (i = 0; i < 2; i++)
        if (!b->vring[i].desc || !b->vring[i].avail || !b->vring[i].used ||
            ((uintptr_t)b->vring[i].desc & 15u) != 0 || ((uintptr_t)b->vring[i].avail & 1u) != 0 ||
            ((uintptr_t)b->vring[i].used & 3u) != 0)
            return -EINVAL;
    if ((uint64_t)2 * b->num * b->buf_size > UINT32_MAX)
        return -EINVAL;
    {
        mdcom_rpmsg_layout lay;
        memset(&lay, 0, sizeof(lay));
        lay.geometry.num_bufs = b->num;
        lay.geometry.buf_size = b->buf_size;
        lay.pool_size = 2u * b->num * b->buf_size;
        if (rp_mem_plan(opts, &lay, &m) != 0)
            return -EINVAL;
        if (state_size < m.total)
            return -ENOSPC;
        memset(state, 0, m.total);
        r = (struct mdcom_rpmsg *)(void *)s;
        r->lay = lay;
    }
    r->bound = 1;
    r->bind = *b;
    r->addr_base = b->pool_da;
    r->pool = (uint8_t *)b->pool;
    if ((rc = rp_setup(r, s, &m, opts)) != 0)
        return rc;
    if (r->role == MDCOM_RPMSG_HOST) {
        mdcom_vq_bind_parts(&r->rxq, b->vring[0].desc, b->vring[0].avail, b->vring[0].used,
                            b->num, s + m.vq0);
        mdcom_vq_bind_parts(&r->txq, b->vring[1].desc, b->vring[1].avail, b->vring[1].used,
                            b->num, s + m.vq1);
        features = b->features;
        if (b->status) {
            /* the driver's side of the virtio status protocol (virtio 1.x
             * 3.1.1): reset, ACKNOWLEDGE, DRIVER, features, FEATURES_OK */
            rp_status_set(r, 0, memory_order_relaxed);
            rp_status_set(r, MDCOM_RP_ST_ACK, memory_order_relaxed);
            rp_status_set(r, MDCOM_RP_ST_ACK | MDCOM_RP_ST_DRIVER, memory_order_relaxed);
            if (b->dfeatures)
                features = mdcom_rd32(b->dfeatures);
            features &= opts->no_ns ? 0u : MDCOM_RPMSG_F_NS;
            if (b->gfeatures)
                mdcom_wr32(b->gfeatures, features);
            rp_status_set(r, MDCOM_RP_ST_ACK | MDCOM_RP_ST_DRIVER | MDCOM_RP_ST_FEATURES_OK,
                          memory_order_relaxed);
        } else {
            features &= opts->no_ns ? 0u : MDCOM_RPMSG_F_NS;
        }
        r->ns_on = (features & MDCOM_RPMSG_F_NS) != 0;
        rp_host_rings(r);
        /* release: vrings and posted buffers are complete before a device
         * that acquires DRIVER_OK looks at them */
        if (b->status)
            rp_status_set(r, MDCOM_RP_ST_READY, memory_order_release);
        rp_notify(r, 0);
    } else {
        mdcom_vq_bind_parts(&r->rxq, b->vring[1].desc, b->vring[1].avail, b->vring[1].used,
                            b->num, s + m.vq0);
        mdcom_vq_bind_parts(&r->txq, b->vring[0].desc, b->vring[0].avail, b->vring[0].used,
                            b->num, s + m.vq1);
        if (b->status && (rc = rp_bound_attach(r, opts->attach_timeout_ns)) != 0)
            return rc;
        /* the host formatted the rings: continue where their used rings are */
        mdcom_vq_dev_resume_used(&r->rxq);
        mdcom_vq_dev_resume_used(&r->txq);
        features = b->gfeatures ? mdcom_rd32(b->gfeatures) : b->features;
        r->ns_on = (features & MDCOM_RPMSG_F_NS) != 0;
        r->nstack = 0;
        rp_suppress(r, 1);
    }
    r->magic = MDCOM_RP_INST_MAGIC;
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------ */
/* resource table                                                        */
/* ------------------------------------------------------------------ */
#define RP_RSC_HDR 16u /* le32 ver, num, reserved[2] */

int mdcom_rsc_find_rpmsg(void *table, size_t size, mdcom_rsc_vdev **vdev)
{
    uint8_t *t = (uint8_t *)table;
    uint32_t num, i;
    if (!t || !vdev || size < RP_RSC_HDR || ((uintptr_t)t & 3u) != 0)
        return -EINVAL;
    if (mdcom_rd32(t) != 1u)
        return -EINVAL;
    num = mdcom_rd32(t + 4);
    if (num > (size - RP_RSC_HDR) / 4u)
        return -EINVAL;
    for (i = 0; i < num; i++) {
        uint32_t off = mdcom_rd32(t + RP_RSC_HDR + 4u * i);
        mdcom_rsc_vdev *v;
        uint32_t nv;
        if (off < RP_RSC_HDR + 4u * num || (off & 3u) != 0 || (uint64_t)off + 4u > size)
            return -EINVAL;
        if (mdcom_rd32(t + off) != MDCOM_RSC_VDEV)
            continue;
        if ((uint64_t)off + 4u + sizeof(mdcom_rsc_vdev) > size)
            return -EINVAL;
        v = (mdcom_rsc_vdev *)(void *)(t + off + 4u);
        nv = v->num_of_vrings;
        if ((uint64_t)off + 4u + sizeof(mdcom_rsc_vdev) + (uint64_t)nv * sizeof(mdcom_rsc_vring) +
                mdcom_rd32(&v->config_len) >
            size)
            return -EINVAL;
        if (mdcom_rd32(&v->id) != MDCOM_VIRTIO_ID_RPMSG || nv < 2)
            continue;
        *vdev = v;
        return 0;
    }
    return -ENOENT;
}

/* Local pointer of [da, da + len) inside the window, or NULL. */
static void *rp_da_to_va(void *mem, uint64_t mem_da, size_t mem_size, uint64_t da, uint64_t len)
{
    if (da < mem_da || da - mem_da > mem_size || len > mem_size - (da - mem_da))
        return NULL;
    return (uint8_t *)mem + (da - mem_da);
}

int mdcom_rpmsg_bind_from_rsc(mdcom_rpmsg_bind *b, mdcom_rsc_vdev *vdev, void *mem,
                              uint64_t mem_da, size_t mem_size, uint64_t pool_da,
                              uint32_t buf_size)
{
    struct mdcom_vring_layout l;
    void *v[2] = {NULL, NULL};
    uint32_t num, i;
    if (!b || !vdev || !mem || vdev->num_of_vrings < 2)
        return -EINVAL;
    num = mdcom_rd32(&vdev->vring[0].num);
    if (mdcom_rd32(&vdev->vring[1].num) != num)
        return -EINVAL;
    for (i = 0; i < 2; i++) {
        uint32_t da = mdcom_rd32(&vdev->vring[i].da);
        uint32_t align = mdcom_rd32(&vdev->vring[i].align);
        if (da == MDCOM_RSC_ADDR_ANY || mdcom_vring_layout_compute(num, align, &l) != 0)
            return -EINVAL;
        v[i] = rp_da_to_va(mem, mem_da, mem_size, da, l.size);
        if (!v[i])
            return -EINVAL;
        b->vring[i].desc = (uint8_t *)v[i] + l.desc_off;
        b->vring[i].avail = (uint8_t *)v[i] + l.avail_off;
        b->vring[i].used = (uint8_t *)v[i] + l.used_off;
    }
    b->num = num;
    b->buf_size = buf_size;
    if (buf_size == 0 || (uint64_t)2 * num * buf_size > UINT32_MAX)
        return -EINVAL;
    b->pool = rp_da_to_va(mem, mem_da, mem_size, pool_da, (uint64_t)2 * num * buf_size);
    if (!b->pool)
        return -EINVAL;
    b->pool_da = pool_da;
    b->status = &vdev->status;
    b->dfeatures = &vdev->dfeatures;
    b->gfeatures = &vdev->gfeatures;
    b->features = 0;
    return 0;
}

int mdcom_rpmsg_term(mdcom_rpmsg_t *r)
{
    uint32_t i;
    if (!rp_ok(r))
        return -EINVAL;
    for (i = 0; i < r->max_epts; i++)
        r->epts[i].in_use = 0;
    if (r->bound) {
        /* the host resets the device (status 0); the remote has nothing
         * to say in the virtio protocol */
        if (r->role == MDCOM_RPMSG_HOST && r->bind.status)
            /* release: orders our last ring updates before the reset */
            rp_status_set(r, 0, memory_order_release);
        atomic_thread_fence(memory_order_seq_cst);
        rp_notify(r, 0);
        rp_notify(r, 1);
        r->magic = 0;
        return 0;
    }
    if (r->role == MDCOM_RPMSG_HOST)
        /* release: orders our last ring updates before the reset */
        atomic_store_explicit(&r->ctl->status, 0, memory_order_release);
    else
        atomic_store_explicit(&r->ctl->remote, 0, memory_order_release);
    /* wake the peer unconditionally so a sleeper re-checks the status */
    atomic_thread_fence(memory_order_seq_cst);
    rp_notify(r, 0);
    r->magic = 0;
    return 0;
}

uint32_t mdcom_rpmsg_max_payload(const mdcom_rpmsg_t *r)
{
    return rp_ok(r) ? r->bsize - MDCOM_RPMSG_HDR_SIZE : 0;
}

int mdcom_rpmsg_stats_get(const mdcom_rpmsg_t *r, mdcom_rpmsg_stats *st)
{
    if (!rp_ok(r) || !st)
        return -EINVAL;
    *st = r->st;
    return 0;
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

int mdcom_rpmsg_wait_service(mdcom_rpmsg_t *r, const char *name, uint32_t *addr,
                             int64_t timeout_ns)
{
    uint64_t deadline;
    int polled = 0;
    if (!rp_ok(r) || !name || !addr)
        return -EINVAL;
    if (name[0] == '\0' || rp_strnlen(name, MDCOM_RPMSG_NAME_SIZE) == MDCOM_RPMSG_NAME_SIZE)
        return -EINVAL;
    deadline = rp_deadline(r, timeout_ns);
    for (;;) {
        struct mdcom_rp_svc *s = rp_find_svc(r, name);
        uint64_t now;
        int64_t left;
        int rc;
        if (s) {
            *addr = s->addr;
            return 0;
        }
        now = rp_now(r);
        if (polled && now >= deadline)
            return -ETIMEDOUT;
        left = deadline == UINT64_MAX ? MDCOM_FOREVER
                                      : (now >= deadline ? 0 : (int64_t)(deadline - now));
        rc = mdcom_rpmsg_poll(r, left);
        if (rc < 0)
            return rc;
        polled = 1;
    }
}

/* ------------------------------------------------------------------ */
/* endpoints                                                             */
/* ------------------------------------------------------------------ */
int mdcom_rpmsg_ept_create(mdcom_rpmsg_t *r, mdcom_rpmsg_ept_t **out, const char *name,
                           uint32_t src, uint32_t dst, mdcom_rpmsg_cb cb, void *priv,
                           int64_t timeout_ns)
{
    struct mdcom_rpmsg_ept *e = NULL;
    uint32_t i, nlen = 0;
    if (!rp_ok(r) || !out)
        return -EINVAL;
    *out = NULL;
    if (name) {
        nlen = rp_strnlen(name, MDCOM_RPMSG_NAME_SIZE);
        if (nlen == MDCOM_RPMSG_NAME_SIZE)
            return -EINVAL;
    }
    if (src == MDCOM_RPMSG_NS_ADDR)
        return -EINVAL;
    for (i = 0; i < r->max_epts; i++)
        if (!r->epts[i].in_use) {
            e = &r->epts[i];
            break;
        }
    if (src == MDCOM_RPMSG_ADDR_ANY) {
        /* next free dynamic address; at most max_epts of them are taken */
        for (i = 0;; i++) {
            if (r->next_addr < MDCOM_RPMSG_RESERVED_ADDRESSES ||
                r->next_addr == MDCOM_RPMSG_ADDR_ANY)
                r->next_addr = MDCOM_RPMSG_RESERVED_ADDRESSES;
            if (!rp_find_ept(r, r->next_addr))
                break;
            r->next_addr++;
        }
        if (!e)
            return -ENOSPC;
        src = r->next_addr++;
    } else {
        if (rp_find_ept(r, src))
            return -EADDRINUSE;
        if (!e)
            return -ENOSPC;
    }
    memset(e, 0, sizeof(*e));
    e->r = r;
    e->addr = src;
    e->dst = dst;
    e->cb = cb;
    e->priv = priv;
    if (nlen)
        memcpy(e->name, name, nlen);
    e->in_use = 1;
    if (nlen && dst == MDCOM_RPMSG_ADDR_ANY && r->ns_on) {
        int rc = rp_send_ns(r, e, MDCOM_RPMSG_NS_CREATE, timeout_ns);
        if (rc) {
            e->in_use = 0;
            return rc;
        }
        e->announced = 1;
    }
    *out = e;
    return 0;
}

int mdcom_rpmsg_ept_destroy(mdcom_rpmsg_ept_t *ept)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    int rc = 0;
    if (!r)
        return -EINVAL;
    if (ept->announced)
        rc = rp_send_ns(r, ept, MDCOM_RPMSG_NS_DESTROY, MDCOM_POLL);
    ept->in_use = 0;
    ept->r = NULL;
    return rc == 0 ? 0 : -ETIMEDOUT;
}

uint32_t mdcom_rpmsg_ept_addr(const mdcom_rpmsg_ept_t *ept)
{
    return rp_of(ept) ? ept->addr : MDCOM_RPMSG_ADDR_ANY;
}

uint32_t mdcom_rpmsg_ept_dst(const mdcom_rpmsg_ept_t *ept)
{
    return rp_of(ept) ? ept->dst : MDCOM_RPMSG_ADDR_ANY;
}

/* ------------------------------------------------------------------ */
/* sending                                                               */
/* ------------------------------------------------------------------ */
int mdcom_rpmsg_send_offchannel(mdcom_rpmsg_ept_t *ept, uint32_t src, uint32_t dst,
                                const void *data, size_t len, int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    if (!r)
        return -EINVAL;
    return rp_send_raw(r, src, dst, data, len, timeout_ns);
}

int mdcom_rpmsg_sendto(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, uint32_t dst,
                       int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    if (!r)
        return -EINVAL;
    return rp_send_raw(r, ept->addr, dst, data, len, timeout_ns);
}

int mdcom_rpmsg_send(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    if (!r)
        return -EINVAL;
    if (ept->dst == MDCOM_RPMSG_ADDR_ANY)
        return -ENOTCONN;
    return rp_send_raw(r, ept->addr, ept->dst, data, len, timeout_ns);
}

int mdcom_rpmsg_trysend(mdcom_rpmsg_ept_t *ept, const void *data, size_t len)
{
    return mdcom_rpmsg_send(ept, data, len, MDCOM_POLL);
}

int mdcom_rpmsg_trysendto(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, uint32_t dst)
{
    return mdcom_rpmsg_sendto(ept, data, len, dst, MDCOM_POLL);
}

int mdcom_rpmsg_trysend_offchannel(mdcom_rpmsg_ept_t *ept, uint32_t src, uint32_t dst,
                                   const void *data, size_t len)
{
    return mdcom_rpmsg_send_offchannel(ept, src, dst, data, len, MDCOM_POLL);
}

/* ------------------------------------------------------------------ */
/* zero copy                                                             */
/* ------------------------------------------------------------------ */
int mdcom_rpmsg_get_tx_buffer(mdcom_rpmsg_ept_t *ept, void **buf, uint32_t *cap,
                              int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    uint32_t b;
    int rc;
    if (!r || !buf)
        return -EINVAL;
    *buf = NULL;
    rc = rp_get_tx(r, &b, timeout_ns);
    if (rc)
        return rc;
    *buf = rp_buf(r, b) + MDCOM_RPMSG_HDR_SIZE;
    if (cap)
        *cap = r->bsize - MDCOM_RPMSG_HDR_SIZE;
    return 0;
}

/* The TX buffer of payload pointer p, which the application must own. */
static int rp_app_tx_buf(const struct mdcom_rpmsg *r, const void *p, uint32_t *b)
{
    if (rp_ptr_to_buf(r, p, b) != 0)
        return -EINVAL;
    if (r->role == MDCOM_RPMSG_HOST ? *b < r->n : *b >= r->n)
        return -EINVAL; /* an RX buffer */
    if (r->bstate[*b] != MDCOM_RP_B_TX_APP)
        return -EALREADY;
    return 0;
}

int mdcom_rpmsg_sendto_nocopy(mdcom_rpmsg_ept_t *ept, void *buf, size_t len, uint32_t dst)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    uint32_t b;
    int rc;
    if (!r || dst == MDCOM_RPMSG_ADDR_ANY)
        return -EINVAL;
    if ((rc = rp_app_tx_buf(r, buf, &b)) != 0)
        return rc;
    if (len > r->bsize - MDCOM_RPMSG_HDR_SIZE)
        return -EMSGSIZE;
    rp_post_tx(r, b, ept->addr, dst, (uint32_t)len);
    return 0;
}

int mdcom_rpmsg_send_nocopy(mdcom_rpmsg_ept_t *ept, void *buf, size_t len)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    if (!r)
        return -EINVAL;
    if (ept->dst == MDCOM_RPMSG_ADDR_ANY)
        return -ENOTCONN;
    return mdcom_rpmsg_sendto_nocopy(ept, buf, len, ept->dst);
}

int mdcom_rpmsg_release_tx_buffer(mdcom_rpmsg_ept_t *ept, void *buf)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    uint32_t b;
    int rc;
    if (!r)
        return -EINVAL;
    if ((rc = rp_app_tx_buf(r, buf, &b)) != 0)
        return rc;
    rp_free_tx(r, b);
    return 0;
}

/* The RX buffer of payload pointer p. */
static int rp_rx_buf(const struct mdcom_rpmsg *r, const void *p, uint32_t *b)
{
    if (rp_ptr_to_buf(r, p, b) != 0)
        return -EINVAL;
    if (r->role == MDCOM_RPMSG_HOST ? *b >= r->n : *b < r->n)
        return -EINVAL; /* a TX buffer */
    return 0;
}

/* ept's instance (*r) and the RX buffer (*b) of payload pointer data: 0, or
 * -EINVAL */
static int rp_ept_rx_buf(mdcom_rpmsg_ept_t *ept, const void *data, struct mdcom_rpmsg **r,
                         uint32_t *b)
{
    *r = rp_of(ept);
    return *r && rp_rx_buf(*r, data, b) == 0 ? 0 : -EINVAL;
}

int mdcom_rpmsg_hold_rx_buffer(mdcom_rpmsg_ept_t *ept, void *data)
{
    struct mdcom_rpmsg *r;
    uint32_t b;
    if (rp_ept_rx_buf(ept, data, &r, &b) != 0)
        return -EINVAL;
    if (r->bstate[b] == MDCOM_RP_B_RX_HELD)
        return -EALREADY;
    if (r->bstate[b] != MDCOM_RP_B_RX_CB)
        return -EINVAL;
    r->bstate[b] = MDCOM_RP_B_RX_HELD;
    return 0;
}

int mdcom_rpmsg_release_rx_buffer(mdcom_rpmsg_ept_t *ept, void *data)
{
    struct mdcom_rpmsg *r;
    uint32_t b;
    if (rp_ept_rx_buf(ept, data, &r, &b) != 0)
        return -EINVAL;
    if (r->bstate[b] != MDCOM_RP_B_RX_HELD)
        return -EALREADY;
    rp_return_rx(r, b);
    rp_flush_rx(r);
    return 0;
}
