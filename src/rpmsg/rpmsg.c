/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg.c - the RPMsg instance: the area's layout, the private state, the
 * host's format and the remote's attach (on an mdcom area, or on memory
 * bound by a resource table / vhost-user), term and the accessors.
 *
 * The transport is cut along its responsibilities, as OpenAMP cuts its own
 * (rpmsg.c endpoints, rpmsg_virtio.c the virtio flows, remoteproc the
 * resource table); the parts share rpmsg_internal.h:
 *
 *   rpmsg.c         instance: layout, state, setup of either role, term
 *   rpmsg_virtio.c  the host/remote buffer flows over the virtqueues of
 *                   virtqueue.c: notification, waiting, receive, transmit
 *   rpmsg_ns.c      name service: announcements sent and received, services
 *   rpmsg_ept.c     endpoints, sending, zero copy
 *   rpmsg_rsc.c     bindings: legacy vrings, the host's pool, resource table
 *
 * The area is drawn in rpmsg_internal.h. Everything read from the area is
 * read once into locals and validated; a violation is counted in r->st and
 * returned as -EPROTO / -EBADMSG. Freestanding: no libc beyond
 * memcpy/memset.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "rpmsg_internal.h"

#define RP_SPIN_DEFAULT_NS 20000u

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1u) & ~(a - 1u); }

static size_t align_sz(size_t v, size_t a) { return (v + a - 1u) & ~(a - 1u); }

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

static int rp_mem_plan(const mdcom_rpmsg_opts *o, const mdcom_rpmsg_layout *lay, struct rp_mem *m)
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
/* instance                                                              */
/* ------------------------------------------------------------------ */

/* Host: zero both vrings, post every RX buffer, put every TX buffer on the
 * free list (not yet visible: the caller publishes the status after). */
static void rp_host_rings(struct mdcom_rpmsg *r)
{
    uint32_t i;
    mdcom_vq_drv_format(&r->rxq);
    mdcom_vq_drv_format(&r->txq);
    for (i = 0; i < r->n; i++) {
        mdcom_vq_drv_add(&r->rxq, (uint16_t)i, rp_buf_addr(r, i), r->bsize, MDCOM_VQ_DESC_F_WRITE);
        r->bstate[r->n + i] = MDCOM_RP_B_FREE;
        r->stack[i] = (uint16_t)(r->n - 1u - i); /* pop order 0, 1, 2, ... */
    }
    r->nstack = r->n;
    mdcom_rp_suppress(r, 1);
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
    mdcom_rp_suppress(r, 1);
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
/* instance on bound memory (resource table, vhost-user)                */
/* ------------------------------------------------------------------ */

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
    if (!opts || !is_pow2(num) || num > MDCOM_RPMSG_MAX_NUM_BUFS ||
        rp_mem_plan(opts, &lay, &m) != 0)
        return 0;
    return m.total;
}

/* Remote: wait for DRIVER_OK in the bound status byte. */
static int rp_bound_attach(struct mdcom_rpmsg *r, int64_t timeout_ns)
{
    uint64_t deadline = rp_deadline(r, timeout_ns);
    for (;;) {
        /* acquire: the host formatted the vrings before it set DRIVER_OK */
        uint32_t st =
            atomic_load_explicit((_Atomic uint8_t *)(void *)r->bind.status, memory_order_acquire);
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
        mdcom_vq_bind_parts(&r->rxq, b->vring[0].desc, b->vring[0].avail, b->vring[0].used, b->num,
                            s + m.vq0);
        mdcom_vq_bind_parts(&r->txq, b->vring[1].desc, b->vring[1].avail, b->vring[1].used, b->num,
                            s + m.vq1);
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
        mdcom_rp_notify(r, 0);
    } else {
        mdcom_vq_bind_parts(&r->rxq, b->vring[1].desc, b->vring[1].avail, b->vring[1].used, b->num,
                            s + m.vq0);
        mdcom_vq_bind_parts(&r->txq, b->vring[0].desc, b->vring[0].avail, b->vring[0].used, b->num,
                            s + m.vq1);
        if (b->status && (rc = rp_bound_attach(r, opts->attach_timeout_ns)) != 0)
            return rc;
        /* the host formatted the rings: continue where their used rings are */
        mdcom_vq_dev_resume_used(&r->rxq);
        mdcom_vq_dev_resume_used(&r->txq);
        features = b->gfeatures ? mdcom_rd32(b->gfeatures) : b->features;
        r->ns_on = (features & MDCOM_RPMSG_F_NS) != 0;
        r->nstack = 0;
        mdcom_rp_suppress(r, 1);
    }
    r->magic = MDCOM_RP_INST_MAGIC;
    *out = r;
    return 0;
}

/* ------------------------------------------------------------------ */
/* end and accessors                                                    */
/* ------------------------------------------------------------------ */

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
        mdcom_rp_notify(r, 0);
        mdcom_rp_notify(r, 1);
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
    mdcom_rp_notify(r, 0);
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
