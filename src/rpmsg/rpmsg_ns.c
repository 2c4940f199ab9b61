/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_ns.c - the RPMsg name service (address 53): announcements of our
 * endpoints, the peer's announcements (validated, then binding our unbound
 * endpoints of that name and recorded as services) and the wait for one.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "rpmsg_internal.h"

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

static struct mdcom_rp_svc *rp_find_svc(struct mdcom_rpmsg *r, const char *name)
{
    uint32_t i;
    for (i = 0; i < r->max_svcs; i++)
        if (r->svcs[i].in_use && rp_name_eq(r->svcs[i].name, name))
            return &r->svcs[i];
    return NULL;
}

/* A name service message (payload p of plen bytes). 1 (handled or dropped). */
int mdcom_rp_ns_rx(struct mdcom_rpmsg *r, const uint8_t *p, uint32_t plen)
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

int mdcom_rp_send_ns(struct mdcom_rpmsg *r, const struct mdcom_rpmsg_ept *e, uint32_t flags,
                     int64_t timeout_ns)
{
    uint8_t msg[MDCOM_RPMSG_NS_MSG_SIZE];
    memset(msg, 0, sizeof(msg));
    memcpy(msg + MDCOM_RP_NS_NAME, e->name, MDCOM_RPMSG_NAME_SIZE);
    mdcom_wr32(msg + MDCOM_RP_NS_ADDR, e->addr);
    mdcom_wr32(msg + MDCOM_RP_NS_FLAGS, flags);
    return mdcom_rp_send_raw(r, e->addr, MDCOM_RPMSG_NS_ADDR, msg, sizeof(msg), timeout_ns);
}

int mdcom_rpmsg_wait_service(mdcom_rpmsg_t *r, const char *name, uint32_t *addr, int64_t timeout_ns)
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
