/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_openamp.c - round trips between RPMsg ends that are the real OpenAMP
 * (built from ../shared/third_party by tests/interop/openamp.cmake) and/or
 * mdcom's RPMsg on bound memory, in the four pairings (openamp, rpmsg-bound,
 * oa-host-md, md-host-oa), over one resource table and an eventfd doorbell.
 * Layout: rsc table at 0, vrings at 0x4000 / 0x8000, 2 x 16 buffers of 512 B
 * at 0x10000 (payload <= 496 B). Method: docs/benchmarks.md, "Transports".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <metal/io.h>
#include <metal/sys.h>
#include <openamp/open_amp.h>
#include <openamp/remoteproc_virtio.h>

#include "mdcom/rpmsg.h"
#include "transport.h"

#define TRO_DA 0x3ed00000u
#define TRO_V0 0x4000u
#define TRO_V1 0x8000u
#define TRO_POOL 0x10000u
#define TRO_NUM 16u
#define TRO_ALIGN 4096u
#define TRO_BUF 512u
#define TRO_SIZE (TRO_POOL + 2u * TRO_NUM * TRO_BUF)
#define TRO_MAX (TRO_BUF - 16u)
#define TRO_Q 64u /* > 2 x TRO_NUM: all buffers of both rings */

struct tro_ctx {
    const char *tname;
    int oa[2]; /* per role index 0 host (ping), 1 remote (pong): 1 = OpenAMP */
    int64_t timeout_ns;
    uint8_t *mem;
    int efd[2]; /* efd[0] wakes the host, efd[1] the remote */
    int me;     /* 0 host, 1 remote (after fork) */
    /* OpenAMP end */
    struct metal_io_region io;
    metal_phys_addr_t pa;
    struct virtio_device *vdev;
    struct rpmsg_virtio_device rvdev;
    struct rpmsg_virtio_shm_pool pool;
    struct rpmsg_endpoint oept;
    int oa_up, oept_up;
    uint32_t svc_addr; /* from the name service, 0 = not yet */
    /* mdcom end */
    mdcom_rpmsg_bind bind;
    mdcom_rpmsg_t *r;
    mdcom_rpmsg_ept_t *mept;
    void *state;
    int err; /* an error inside a callback */
    /* what the RX callback received, in order */
    unsigned char (*q)[TRO_BUF];
    uint32_t qlen[TRO_Q], qhead, qtail;
};

static int tro_fail(struct tro_ctx *c, const char *call, int rc)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s: %s", c->tname, c->me ? "remote" : "host", call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

static void tro_table(uint8_t *mem)
{
    uint8_t *v = mem + 24;
    wr32(mem + 0, 1);
    wr32(mem + 4, 1);
    wr32(mem + 16, 20);
    wr32(mem + 20, 3); /* RSC_VDEV */
    wr32(v + 0, 7);    /* VIRTIO_ID_RPMSG */
    wr32(v + 4, 2);
    wr32(v + 8, 1); /* F_NS */
    v[21] = 2;
    for (uint32_t i = 0; i < 2; i++) {
        wr32(v + 24 + 20 * i, TRO_DA + (i ? TRO_V1 : TRO_V0));
        wr32(v + 28 + 20 * i, TRO_ALIGN);
        wr32(v + 32 + 20 * i, TRO_NUM);
        wr32(v + 36 + 20 * i, i);
    }
}

static void tro_ring(struct tro_ctx *c)
{
    uint64_t one = 1;
    if (write(c->efd[1 - c->me], &one, 8) != 8)
        c->err = -errno;
}

/* Sleep until notified (or timeout). 0 or -ETIMEDOUT. */
static int tro_sleep(struct tro_ctx *c, int64_t timeout_ns)
{
    struct pollfd p = {c->efd[c->me], POLLIN, 0};
    int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
    int n = poll(&p, 1, ms);
    if (n > 0) {
        uint64_t v;
        if (read(c->efd[c->me], &v, 8) != 8)
            return -errno;
        return 0;
    }
    return n == 0 ? -ETIMEDOUT : -errno;
}

static int oa_notify(void *priv, uint32_t id)
{
    (void)id;
    tro_ring(priv);
    return 0;
}
static void md_notify(void *ctx, uint32_t vq)
{
    (void)vq;
    tro_ring(ctx);
}
static int md_wait(void *ctx, int64_t timeout_ns)
{
    int rc = tro_sleep(ctx, timeout_ns);
    return rc == -EINTR ? -EINTR : 0;
}

/* ---- callbacks (both stacks call the same logic) -------------------- */
static int tro_send(struct tro_ctx *c, const void *data, uint32_t len)
{
    if (c->oa[c->me]) {
        int rc = rpmsg_send(&c->oept, data, (int)len);
        return rc == (int)len ? 0 : rc < 0 ? rc : -EIO;
    }
    return mdcom_rpmsg_send(c->mept, data, len, c->timeout_ns);
}

/* queue a copy for peek/recv */
static void tro_rx(struct tro_ctx *c, const void *data, size_t len)
{
    if (c->qtail - c->qhead == TRO_Q || len > TRO_BUF) {
        c->err = -ENOBUFS;
        return;
    }
    memcpy(c->q[c->qtail % TRO_Q], data, len);
    c->qlen[c->qtail++ % TRO_Q] = (uint32_t)len;
}

static int oa_cb(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)ept;
    (void)src;
    tro_rx(priv, data, len);
    return RPMSG_SUCCESS;
}
static int md_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)ept;
    (void)src;
    tro_rx(priv, data, len);
    return 0;
}

static struct tro_ctx *g_ns_ctx; /* OpenAMP's name service callback has no priv */
static void oa_ns_bind(struct rpmsg_device *rdev, const char *name, uint32_t dest)
{
    (void)rdev;
    if (g_ns_ctx && !strcmp(name, "bench"))
        g_ns_ctx->svc_addr = dest;
}

/* ---- one end -------------------------------------------------------- */
static int tro_open(struct tro_ctx *c, int me)
{
    struct metal_init_params mp = METAL_INIT_DEFAULTS;
    /* errors only: a stream's last acknowledgement may still be in a ring
     * when an end closes, which libmetal would report as a warning */
    mp.log_level = METAL_LOG_ERROR;
    int host = me == 0, rc;
    c->me = me;
    c->r = NULL;
    c->oa_up = c->oept_up = 0;
    if (c->oa[me]) {
        struct rpmsg_virtio_config cfg = {TRO_BUF, TRO_BUF, false};
        /* -ENODEV: no uio/vfio bus here; the message path does not need it */
        rc = metal_init(&mp);
        if (rc && rc != -ENODEV)
            return tro_fail(c, "metal_init", rc);
        c->pa = TRO_DA;
        metal_io_init(&c->io, c->mem, &c->pa, TRO_SIZE, (unsigned)-1, 0, NULL);
        c->vdev = rproc_virtio_create_vdev(host ? VIRTIO_DEV_DRIVER : VIRTIO_DEV_DEVICE, 2,
                                           c->mem + 20, &c->io, c, oa_notify, NULL);
        if (!c->vdev)
            return tro_fail(c, "rproc_virtio_create_vdev", -ENOMEM);
        rproc_virtio_init_vring(c->vdev, 0, 0, c->mem + TRO_V0, &c->io, TRO_NUM, TRO_ALIGN);
        rproc_virtio_init_vring(c->vdev, 1, 1, c->mem + TRO_V1, &c->io, TRO_NUM, TRO_ALIGN);
        g_ns_ctx = c;
        if (host) {
            rpmsg_virtio_init_shm_pool(&c->pool, c->mem + TRO_POOL, 2u * TRO_NUM * TRO_BUF);
            rc = rpmsg_init_vdev_with_config(&c->rvdev, c->vdev, oa_ns_bind, &c->io, &c->pool,
                                             &cfg);
        } else {
            rc = rpmsg_init_vdev(&c->rvdev, c->vdev, oa_ns_bind, &c->io, NULL);
        }
        if (rc)
            return tro_fail(c, "rpmsg_init_vdev", -EPROTO);
        c->oa_up = 1;
    } else {
        mdcom_rpmsg_opts o;
        mdcom_rsc_vdev *vdev;
        size_t ssz;
        memset(&o, 0, sizeof(o));
        o.role = host ? MDCOM_RPMSG_HOST : MDCOM_RPMSG_REMOTE;
        o.max_endpoints = 2;
        o.max_services = 2;
        o.spin_ns = MDCOM_NO_SPIN;
        o.attach_timeout_ns = c->timeout_ns;
        if ((rc = mdcom_rsc_find_rpmsg(c->mem, 0x1000, &vdev)) != 0)
            return tro_fail(c, "mdcom_rsc_find_rpmsg", rc);
        if ((rc = mdcom_rpmsg_bind_from_rsc(&c->bind, vdev, c->mem, TRO_DA, TRO_SIZE,
                                            TRO_DA + TRO_POOL, TRO_BUF)) != 0)
            return tro_fail(c, "mdcom_rpmsg_bind_from_rsc", rc);
        c->bind.notify = md_notify;
        c->bind.wait = md_wait;
        c->bind.ctx = c;
        ssz = mdcom_rpmsg_state_size_bound(TRO_NUM, &o);
        c->state = aligned_alloc(64, (ssz + 63) & ~(size_t)63);
        if (!c->state)
            return -ENOMEM;
        if ((rc = mdcom_rpmsg_init_bound(&c->r, c->state, ssz, &c->bind, &o)) != 0)
            return tro_fail(c, "mdcom_rpmsg_init_bound", rc);
    }
    return 0;
}

/* Run this end's dispatch until a message is queued. */
static int tro_dispatch(struct tro_ctx *c)
{
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    while (c->qhead == c->qtail) {
        if (c->oa[c->me]) {
            rproc_virtio_notified(c->vdev, RSC_NOTIFY_ID_ANY);
            if (c->qhead != c->qtail)
                break;
            int rc = tro_sleep(c, c->timeout_ns);
            if (rc && rc != -ETIMEDOUT && rc != -EINTR)
                return tro_fail(c, "poll(eventfd)", rc);
        } else {
            int rc = mdcom_rpmsg_poll(c->r, c->timeout_ns);
            if (rc < 0)
                return tro_fail(c, "mdcom_rpmsg_poll", rc);
        }
        if (c->err)
            return tro_fail(c, "send (in callback)", c->err);
        if (c->qhead == c->qtail && bench_now_ns() >= deadline)
            return tro_fail(c, "dispatch", -ETIMEDOUT);
    }
    return 0;
}

static void tro_close(struct tro_ctx *c)
{
    if (c->oa_up) {
        if (c->oept_up)
            rpmsg_destroy_ept(&c->oept);
        rpmsg_deinit_vdev(&c->rvdev);
        rproc_virtio_remove_vdev(c->vdev);
        metal_finish();
    }
    if (c->r)
        mdcom_rpmsg_term(c->r);
    c->oa_up = c->oept_up = 0;
    c->r = NULL;
    free(c->state);
    c->state = NULL;
}

/* Everything setup made (also a partial setup: closing -1 is harmless). */
static void tro_teardown(void *ctx)
{
    struct tro_ctx *c = ctx;
    tro_close(c);
    bench_shared_free(c->mem, TRO_SIZE);
    close(c->efd[0]);
    close(c->efd[1]);
    free(c->q);
    free(c);
}

/* ---- message interface (one channel) ---------------------------------- */
/* variant: bit 0 the host is OpenAMP, bit 1 the remote */
static int tro_setup(void **out, const bench_msg_params *p)
{
    const char *tname = p->tname;
    int oa_host = p->variant & 1, oa_remote = (p->variant >> 1) & 1;
    struct tro_ctx *c;
    if (p->max_size > TRO_MAX) {
        bench_err("%s: %u B does not fit one 512-byte RPMsg buffer (at most %u B)", tname,
                  p->max_size, TRO_MAX);
        return -EMSGSIZE;
    }
    if (p->n_chan != 1)
        return -EDQUOT; /* one endpoint pair: n/a for more channels */
    c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->tname = tname;
    c->oa[0] = oa_host;
    c->oa[1] = oa_remote;
    c->timeout_ns = p->timeout_ns;
    c->mem = bench_shared_alloc(TRO_SIZE);
    c->q = malloc(TRO_Q * sizeof(*c->q));
    c->efd[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->efd[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!c->mem || !c->q || c->efd[0] < 0 || c->efd[1] < 0) {
        bench_err("%s: setup failed", tname);
        tro_teardown(c);
        return -ENOMEM;
    }
    tro_table(c->mem);
    *out = c;
    return 0;
}

/* The remote end: open, announce the "bench" service. */
static int tro_remote_open(struct tro_ctx *c)
{
    int rc = tro_open(c, 1);
    if (rc)
        return rc;
    if (c->oa[1]) {
        if (rpmsg_create_ept(&c->oept, rpmsg_virtio_get_rpmsg_device(&c->rvdev), "bench",
                             RPMSG_ADDR_ANY, RPMSG_ADDR_ANY, oa_cb, NULL) != 0)
            rc = tro_fail(c, "rpmsg_create_ept", -EPROTO);
        c->oept.priv = c;
        c->oept_up = 1;
    } else {
        rc = mdcom_rpmsg_ept_create(c->r, &c->mept, "bench", MDCOM_RPMSG_ADDR_ANY,
                                    MDCOM_RPMSG_ADDR_ANY, md_cb, c, c->timeout_ns);
        if (rc)
            rc = tro_fail(c, "mdcom_rpmsg_ept_create", rc);
    }
    return rc;
}

/* The host end: open, find the service, bind an endpoint to it. */
static int tro_host_open(void *ctx)
{
    struct tro_ctx *c = ctx;
    uint64_t deadline;
    int rc = tro_open(c, 0);
    if (rc)
        return rc;
    if (c->oa[0]) {
        deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
        while (!c->svc_addr) {
            rproc_virtio_notified(c->vdev, RSC_NOTIFY_ID_ANY);
            if (c->svc_addr)
                break;
            if (bench_now_ns() >= deadline)
                return tro_fail(c, "name service", -ETIMEDOUT);
            (void)tro_sleep(c, 10000000);
        }
        if (rpmsg_create_ept(&c->oept, rpmsg_virtio_get_rpmsg_device(&c->rvdev), "bench",
                             RPMSG_ADDR_ANY, c->svc_addr, oa_cb, NULL) != 0)
            return tro_fail(c, "rpmsg_create_ept", -EPROTO);
        c->oept.priv = c;
        c->oept_up = 1;
    } else {
        uint32_t addr = 0;
        rc = mdcom_rpmsg_wait_service(c->r, "bench", &addr, c->timeout_ns);
        if (rc)
            return tro_fail(c, "mdcom_rpmsg_wait_service", rc);
        rc = mdcom_rpmsg_ept_create(c->r, &c->mept, NULL, MDCOM_RPMSG_ADDR_ANY, addr, md_cb, c,
                                    c->timeout_ns);
        if (rc)
            return tro_fail(c, "mdcom_rpmsg_ept_create", rc);
    }
    return 0;
}

static int tro_msg_attach(void *ctx, int side)
{
    return side == BENCH_SIDE_A ? tro_host_open(ctx) : tro_remote_open(ctx);
}

static int tro_msg_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    (void)side;
    (void)ch;
    struct tro_ctx *c = ctx;
    int rc = tro_send(c, buf, len);
    return rc ? tro_fail(c, "send", rc) : 0;
}

/* The oldest queued message in place, until tro_msg_release. */
static int tro_msg_peek(void *ctx, int side, uint32_t ch, const void **msg)
{
    (void)side;
    (void)ch;
    struct tro_ctx *c = ctx;
    int rc = tro_dispatch(c);
    if (rc)
        return rc;
    *msg = c->q[c->qhead % TRO_Q];
    return (int)c->qlen[c->qhead % TRO_Q];
}

static void tro_msg_release(void *ctx, int side, uint32_t ch)
{
    (void)side;
    (void)ch;
    ((struct tro_ctx *)ctx)->qhead++;
}

/* The remote closes at once, the host at teardown once the remote exited
 * (a host closing first may shut the ring down under the last message). */
static void tro_msg_detach(void *ctx, int side)
{
    if (side == BENCH_SIDE_B)
        tro_close(ctx);
}

static uint32_t tro_msg_max(int variant)
{
    (void)variant;
    return TRO_MAX;
}

const bench_msg_ops bench_ops_openamp = {
    .setup = tro_setup, .attach = tro_msg_attach, .send = tro_msg_send,
    .peek = tro_msg_peek, .release = tro_msg_release, .detach = tro_msg_detach,
    .teardown = tro_teardown, .max_msg = tro_msg_max};
