/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_rsc.c - bindings of memory that someone else laid out: legacy vrings
 * (vhost-user), the host's RX pool found from its posted descriptors, and a
 * remoteproc resource table's RPMsg vdev. Pure functions on a
 * mdcom_rpmsg_bind: no instance.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "rpmsg_internal.h"

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

int mdcom_rpmsg_bind_from_rsc(mdcom_rpmsg_bind *b, mdcom_rsc_vdev *vdev, void *mem, uint64_t mem_da,
                              size_t mem_size, uint64_t pool_da, uint32_t buf_size)
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
