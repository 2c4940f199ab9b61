/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_ept.c - RPMsg endpoints (local addresses, bound or learnt peer
 * addresses), sending on them, and the zero-copy buffers handed to the
 * application.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "rpmsg_internal.h"

static struct mdcom_rpmsg *rp_of(const struct mdcom_rpmsg_ept *e)
{
    if (!e || !e->in_use || !rp_ok(e->r))
        return NULL;
    if (e < e->r->epts || e >= e->r->epts + e->r->max_epts)
        return NULL;
    return e->r;
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

/* ------------------------------------------------------------------ */
/* endpoints                                                             */
/* ------------------------------------------------------------------ */

struct mdcom_rpmsg_ept *mdcom_rp_find_ept(struct mdcom_rpmsg *r, uint32_t addr)
{
    uint32_t i;
    for (i = 0; i < r->max_epts; i++)
        if (r->epts[i].in_use && r->epts[i].addr == addr)
            return &r->epts[i];
    return NULL;
}

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
            if (!mdcom_rp_find_ept(r, r->next_addr))
                break;
            r->next_addr++;
        }
        if (!e)
            return -ENOSPC;
        src = r->next_addr++;
    } else {
        if (mdcom_rp_find_ept(r, src))
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
        int rc = mdcom_rp_send_ns(r, e, MDCOM_RPMSG_NS_CREATE, timeout_ns);
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
        rc = mdcom_rp_send_ns(r, ept, MDCOM_RPMSG_NS_DESTROY, MDCOM_POLL);
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
    return mdcom_rp_send_raw(r, src, dst, data, len, timeout_ns);
}

int mdcom_rpmsg_sendto(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, uint32_t dst,
                       int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    if (!r)
        return -EINVAL;
    return mdcom_rp_send_raw(r, ept->addr, dst, data, len, timeout_ns);
}

int mdcom_rpmsg_send(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    if (!r)
        return -EINVAL;
    if (ept->dst == MDCOM_RPMSG_ADDR_ANY)
        return -ENOTCONN;
    return mdcom_rp_send_raw(r, ept->addr, ept->dst, data, len, timeout_ns);
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

int mdcom_rpmsg_get_tx_buffer(mdcom_rpmsg_ept_t *ept, void **buf, uint32_t *cap, int64_t timeout_ns)
{
    struct mdcom_rpmsg *r = rp_of(ept);
    uint32_t b;
    int rc;
    if (!r || !buf)
        return -EINVAL;
    *buf = NULL;
    rc = mdcom_rp_get_tx(r, &b, timeout_ns);
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
    mdcom_rp_post_tx(r, b, ept->addr, dst, (uint32_t)len);
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
    mdcom_rp_free_tx(r, b);
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
    mdcom_rp_return_rx(r, b);
    mdcom_rp_flush_rx(r);
    return 0;
}
