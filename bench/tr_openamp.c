/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_openamp.c - round trips between RPMsg ends that are the real OpenAMP
 * (built from ../shared/third_party by tests/interop/openamp.cmake) and/or
 * mdcom's RPMsg on bound memory, in the four pairings (openamp, rpmsg-bound,
 * oa-host-md, md-host-oa), over one resource table and an eventfd doorbell.
 * Layout: rsc table at 0, vrings at 0x4000 / 0x8000, 2 x 16 buffers of 512 B
 * at 0x10000 (payload <= 496 B). Method: docs/benchmarks.md, "Transports".
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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
#define TRO_BUF 512u /* transports.c: payloads up to TRO_BUF - 16 */
#define TRO_SIZE (TRO_POOL + 2u * TRO_NUM * TRO_BUF)
#define TRO_Q 64u /* > 2 x TRO_NUM: all buffers of both rings */

/* The resource table, in 32-bit words: version 1, one entry at offset 20,
 * a vdev (RSC_VDEV 3, VIRTIO_ID_RPMSG 7, notify id 2, VIRTIO_RPMSG_F_NS; its
 * byte num_of_vrings at 45 is set apart), then its two vrings. */
static const uint32_t tro_rsc[] = {1,
                                   1,
                                   0,
                                   0,
                                   20,
                                   3,
                                   7,
                                   2,
                                   1,
                                   0,
                                   0,
                                   0,
                                   TRO_DA + TRO_V0,
                                   TRO_ALIGN,
                                   TRO_NUM,
                                   0,
                                   0,
                                   TRO_DA + TRO_V1,
                                   TRO_ALIGN,
                                   TRO_NUM,
                                   1,
                                   0};

struct tro_ctx {
    const char *tname;
    int oa[2]; /* per end, 0 the host (side A), 1 the remote: 1 = OpenAMP */
    int64_t timeout_ns;
    uint8_t *mem;
    int efd[2]; /* efd[0] wakes the host, efd[1] the remote */
    int me;     /* this process's end */
    /* an OpenAMP end */
    struct metal_io_region io;
    metal_phys_addr_t pa;
    struct virtio_device *vdev;
    struct rpmsg_virtio_device rvdev;
    struct rpmsg_virtio_shm_pool pool;
    struct rpmsg_endpoint oept;
    int oa_up, oept_up;
    uint32_t svc_addr; /* from the name service, 0 = not yet */
    /* an mdcom end */
    mdcom_rpmsg_bind bind;
    mdcom_rpmsg_t *r;
    mdcom_rpmsg_ept_t *mept;
    void *state;
    int err; /* an error inside a callback */
    /* what the RX callback received, in order */
    uint32_t qlen[TRO_Q], qhead, qtail;
    unsigned char q[TRO_Q][TRO_BUF];
};

static int tro_fail(struct tro_ctx *c, const char *call, int rc)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s: %s", c->tname, c->me ? "remote" : "host", call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

/* Sleep until notified (or timeout). 0, -ETIMEDOUT or -errno. */
static int tro_sleep(struct tro_ctx *c, int64_t timeout_ns)
{
    struct pollfd p = {c->efd[c->me], POLLIN, 0};
    uint64_t v;
    int n = poll(&p, 1, timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000));
    if (n > 0)
        return read(c->efd[c->me], &v, 8) == 8 ? 0 : -errno;
    return n == 0 ? -ETIMEDOUT : -errno;
}

/* The doorbell of the other end, and the callbacks of both stacks. */
static void md_notify(void *ctx, uint32_t vq)
{
    struct tro_ctx *c = ctx;
    uint64_t one = 1;
    (void)vq;
    if (write(c->efd[1 - c->me], &one, 8) != 8)
        c->err = -errno;
}

static int oa_notify(void *priv, uint32_t id)
{
    md_notify(priv, id);
    return 0;
}

static int md_wait(void *ctx, int64_t timeout_ns)
{
    return tro_sleep(ctx, timeout_ns) == -EINTR ? -EINTR : 0;
}

/* A message arrived: queue a copy for peek. */
static int md_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    struct tro_ctx *c = priv;
    (void)ept;
    (void)src;
    if (c->qtail - c->qhead == TRO_Q || len > TRO_BUF) {
        c->err = -ENOBUFS;
        return 0;
    }
    memcpy(c->q[c->qtail % TRO_Q], data, len);
    c->qlen[c->qtail++ % TRO_Q] = (uint32_t)len;
    return 0;
}

static int oa_cb(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)ept;
    md_cb(NULL, data, len, src, priv);
    return RPMSG_SUCCESS;
}

static struct tro_ctx *g_ns_ctx; /* OpenAMP's name service callback has no priv */
static void oa_ns_bind(struct rpmsg_device *rdev, const char *name, uint32_t dest)
{
    (void)rdev;
    if (g_ns_ctx && !strcmp(name, "bench"))
        g_ns_ctx->svc_addr = dest;
}

/* An OpenAMP end: the remote announces the "bench" service, the host binds
 * an endpoint to it. */
static int oa_open(struct tro_ctx *c, int host)
{
    struct metal_init_params mp = METAL_INIT_DEFAULTS;
    struct rpmsg_virtio_config cfg = {TRO_BUF, TRO_BUF, false};
    /* errors only: a stream's last acknowledgement may still be in a ring
     * when an end closes, which libmetal would report as a warning */
    mp.log_level = METAL_LOG_ERROR;
    /* -ENODEV: no uio/vfio bus here; the message path does not need it */
    int rc = metal_init(&mp);
    if (rc && rc != -ENODEV)
        return tro_fail(c, "metal_init", rc);
    c->pa = TRO_DA;
    metal_io_init(&c->io, c->mem, &c->pa, TRO_SIZE, (unsigned)-1, 0, NULL);
    c->vdev = rproc_virtio_create_vdev(host ? VIRTIO_DEV_DRIVER : VIRTIO_DEV_DEVICE, 2, c->mem + 20,
                                       &c->io, c, oa_notify, NULL);
    if (!c->vdev)
        return tro_fail(c, "rproc_virtio_create_vdev", -ENOMEM);
    rproc_virtio_init_vring(c->vdev, 0, 0, c->mem + TRO_V0, &c->io, TRO_NUM, TRO_ALIGN);
    rproc_virtio_init_vring(c->vdev, 1, 1, c->mem + TRO_V1, &c->io, TRO_NUM, TRO_ALIGN);
    g_ns_ctx = c;
    if (host)
        rpmsg_virtio_init_shm_pool(&c->pool, c->mem + TRO_POOL, 2u * TRO_NUM * TRO_BUF);
    rc = host ? rpmsg_init_vdev_with_config(&c->rvdev, c->vdev, oa_ns_bind, &c->io, &c->pool, &cfg)
              : rpmsg_init_vdev(&c->rvdev, c->vdev, oa_ns_bind, &c->io, NULL);
    if (rc)
        return tro_fail(c, "rpmsg_init_vdev", -EPROTO);
    c->oa_up = 1;
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    while (host && !c->svc_addr) {
        rproc_virtio_notified(c->vdev, RSC_NOTIFY_ID_ANY);
        if (c->svc_addr)
            break;
        if (bench_now_ns() >= deadline)
            return tro_fail(c, "name service", -ETIMEDOUT);
        (void)tro_sleep(c, 10000000);
    }
    if (rpmsg_create_ept(&c->oept, rpmsg_virtio_get_rpmsg_device(&c->rvdev), "bench",
                         RPMSG_ADDR_ANY, host ? c->svc_addr : RPMSG_ADDR_ANY, oa_cb, NULL) != 0)
        return tro_fail(c, "rpmsg_create_ept", -EPROTO);
    c->oept.priv = c;
    c->oept_up = 1;
    return 0;
}

/* An mdcom end, bound to the same table: as oa_open. */
static int md_open(struct tro_ctx *c, int host)
{
    mdcom_rpmsg_opts o = {.role = host ? MDCOM_RPMSG_HOST : MDCOM_RPMSG_REMOTE,
                          .max_endpoints = 2,
                          .max_services = 2,
                          .spin_ns = MDCOM_NO_SPIN,
                          .attach_timeout_ns = c->timeout_ns};
    mdcom_rsc_vdev *vdev;
    uint32_t dest = MDCOM_RPMSG_ADDR_ANY;
    int rc;
    if ((rc = mdcom_rsc_find_rpmsg(c->mem, 0x1000, &vdev)) != 0)
        return tro_fail(c, "mdcom_rsc_find_rpmsg", rc);
    if ((rc = mdcom_rpmsg_bind_from_rsc(&c->bind, vdev, c->mem, TRO_DA, TRO_SIZE, TRO_DA + TRO_POOL,
                                        TRO_BUF)) != 0)
        return tro_fail(c, "mdcom_rpmsg_bind_from_rsc", rc);
    c->bind.notify = md_notify;
    c->bind.wait = md_wait;
    c->bind.ctx = c;
    size_t ssz = mdcom_rpmsg_state_size_bound(TRO_NUM, &o);
    c->state = aligned_alloc(64, (ssz + 63) & ~(size_t)63);
    if (!c->state)
        return -ENOMEM;
    if ((rc = mdcom_rpmsg_init_bound(&c->r, c->state, ssz, &c->bind, &o)) != 0)
        return tro_fail(c, "mdcom_rpmsg_init_bound", rc);
    if (host && (rc = mdcom_rpmsg_wait_service(c->r, "bench", &dest, c->timeout_ns)) != 0)
        return tro_fail(c, "mdcom_rpmsg_wait_service", rc);
    rc = mdcom_rpmsg_ept_create(c->r, &c->mept, host ? NULL : "bench", MDCOM_RPMSG_ADDR_ANY, dest,
                                md_cb, c, c->timeout_ns);
    return rc ? tro_fail(c, "mdcom_rpmsg_ept_create", rc) : 0;
}

/* Close this process's end (once: at detach or at teardown). */
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
    free(c->state);
}

/* Everything setup made (also a partial setup: closing -1 is harmless). */
static void tro_teardown(void *ctx)
{
    struct tro_ctx *c = ctx;
    tro_close(c);
    bench_shared_free(c->mem, TRO_SIZE);
    close(c->efd[0]);
    close(c->efd[1]);
    free(c);
}

/* ---- message interface (one channel) ---------------------------------- */
static int tro_setup(void **out, const bench_msg_params *p)
{
    if (p->n_chan != 1)
        return -EDQUOT; /* one endpoint pair: n/a for more channels */
    struct tro_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->tname = p->tname;
    c->oa[0] = p->variant & 1;
    c->oa[1] = (p->variant >> 1) & 1;
    c->timeout_ns = p->timeout_ns;
    c->mem = bench_shared_alloc(TRO_SIZE);
    c->efd[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->efd[1] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!c->mem || c->efd[0] < 0 || c->efd[1] < 0) {
        bench_err("%s: setup failed", c->tname);
        tro_teardown(c);
        return -ENOMEM;
    }
    memcpy(c->mem, tro_rsc, sizeof(tro_rsc));
    c->mem[45] = 2; /* num_of_vrings */
    *out = c;
    return 0;
}

/* Side A is the host (ping), side B the remote (pong). */
static int tro_attach(void *ctx, int side)
{
    struct tro_ctx *c = ctx;
    c->me = side;
    return c->oa[side] ? oa_open(c, side == BENCH_SIDE_A) : md_open(c, side == BENCH_SIDE_A);
}

static int tro_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct tro_ctx *c = ctx;
    int rc;
    (void)side;
    (void)ch;
    if (c->oa[c->me]) {
        rc = rpmsg_send(&c->oept, buf, (int)len);
        rc = rc == (int)len ? 0 : rc < 0 ? rc : -EIO;
    } else {
        rc = mdcom_rpmsg_send(c->mept, buf, len, c->timeout_ns);
    }
    return rc ? tro_fail(c, "send", rc) : 0;
}

/* Run this end's dispatch until a message is queued: the oldest one in
 * place, until tro_release. */
static int tro_peek(void *ctx, int side, uint32_t ch, const void **msg)
{
    struct tro_ctx *c = ctx;
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    (void)side;
    (void)ch;
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
    *msg = c->q[c->qhead % TRO_Q];
    return (int)c->qlen[c->qhead % TRO_Q];
}

static void tro_release(void *ctx, int side, uint32_t ch)
{
    (void)side;
    (void)ch;
    ((struct tro_ctx *)ctx)->qhead++;
}

/* The remote closes at once, the host at teardown once the remote exited
 * (a host closing first may shut the ring down under the last message). */
static void tro_detach(void *ctx, int side)
{
    if (side == BENCH_SIDE_B)
        tro_close(ctx);
}

const bench_msg_ops bench_ops_openamp =
    BENCH_MSG_OPS(tro, .peek = tro_peek, .release = tro_release);
