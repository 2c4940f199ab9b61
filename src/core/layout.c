/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * layout.c - validates a configuration, computes the region layout drawn in
 * layout.h and verifies a region against it. Nothing else computes an
 * offset (format.c writes what this computes).
 */
#include "layout.h"

#include <errno.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* small freestanding helpers                                         */
/* ---------------------------------------------------------------- */

size_t mdcom_strnlen(const char *s, size_t max)
{
    size_t n = 0;
    if (!s)
        return 0;
    while (n < max && s[n])
        n++;
    return n;
}

int mdcom_streq(const char *a, const char *b, size_t max)
{
    size_t i;
    for (i = 0; i < max; i++) {
        if (a[i] != b[i])
            return 0;
        if (!a[i])
            return 1;
    }
    return 1;
}

uint32_t mdcom_fnv1a(uint32_t h, const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    while (n--) {
        h ^= *b++;
        h *= 16777619u;
    }
    return h;
}

void mdcom_err_str(mdcom_err *e, const char *s)
{
    if (!e || !e->buf || e->cap == 0 || !s)
        return;
    while (*s && e->pos + 1 < e->cap)
        e->buf[e->pos++] = *s++;
    e->buf[e->pos] = '\0';
}

void mdcom_err_u32(mdcom_err *e, uint32_t v)
{
    char tmp[11];
    int i = 10;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v && i > 0);
    mdcom_err_str(e, &tmp[i]);
}

int mdcom_err_set(mdcom_err *e, int code, const char *region, const char *msg)
{
    if (e && e->buf && e->cap) {
        e->pos = 0;
        e->buf[0] = '\0';
        if (region) {
            mdcom_err_str(e, "region '");
            mdcom_err_str(e, region);
            mdcom_err_str(e, "': ");
        }
        mdcom_err_str(e, msg);
    }
    return code;
}

/* ---------------------------------------------------------------- */
/* validation + layout                                                */
/* ---------------------------------------------------------------- */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static uint32_t pow2_ceil(uint32_t v)
{
    uint32_t p = 1;
    while (p < v && p < 0x80000000u)
        p <<= 1;
    return p;
}

static int is_pow2(uint32_t v) { return v && !(v & (v - 1)); }

static int name_ok(const char *s, size_t max, int region)
{
    size_t n = mdcom_strnlen(s, max);
    size_t i;
    if (n == 0 || n >= max)
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || c == '.';
        if (!ok || (region && i == 0 && c == '.'))
            return 0;
    }
    return 1;
}

/* "key 'what' of channel 'name': msg" */
static int cfg_fail(mdcom_err *e, const mdcom_config *cfg, const char *kind, uint32_t idx,
                    const char *name, const char *msg)
{
    mdcom_err_set(e, -EINVAL, name_ok(cfg->region_name, MDCOM_NAME_MAX, 1) ? cfg->region_name : 0,
                  kind);
    mdcom_err_str(e, "[");
    mdcom_err_u32(e, idx);
    mdcom_err_str(e, "]");
    if (name && mdcom_strnlen(name, MDCOM_NAME_MAX) < MDCOM_NAME_MAX) {
        mdcom_err_str(e, " '");
        mdcom_err_str(e, name);
        mdcom_err_str(e, "'");
    }
    mdcom_err_str(e, ": ");
    mdcom_err_str(e, msg);
    return -EINVAL;
}

static uint32_t hash_u32(uint32_t h, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return mdcom_fnv1a(h, b, 4);
}

static uint32_t hash_name(uint32_t h, const char *s, size_t max)
{
    size_t n = mdcom_strnlen(s, max);
    h = mdcom_fnv1a(h, s, n);
    while (n++ < max)
        h = mdcom_fnv1a(h, "", 1);
    return h;
}

int mdcom_layout_compute(const mdcom_config *cfg, mdcom_layout *lay, mdcom_chan_layout *chans,
                         mdcom_err *e)
{
    uint32_t i, j, dom_mask = 0, masters = 0, h;
    uint64_t off;

    if (!cfg || !lay)
        return mdcom_err_set(e, -EINVAL, 0, "no config");
    if (!name_ok(cfg->region_name, MDCOM_NAME_MAX, 1))
        return mdcom_err_set(e, -EINVAL, 0,
                             "region.name: must be 1..31 characters of [A-Za-z0-9._-]");
    if (cfg->n_domains == 0 || cfg->n_domains > MDCOM_MAX_DOMAINS || !cfg->domains)
        return mdcom_err_set(e, -EINVAL, cfg->region_name, "domains: need 1..32 domains");
    if (cfg->n_channels > MDCOM_MAX_DIR || (cfg->n_channels && !cfg->channels))
        return mdcom_err_set(e, -EINVAL, cfg->region_name, "channels: at most 1024 channels");
    if ((cfg->mode & ~0777u) || (cfg->mode & 0007u))
        return mdcom_err_set(e, -EINVAL, cfg->region_name,
                             "region.mode: permission bits only, never world-accessible");

    memset(lay, 0, sizeof(*lay));
    for (i = 0; i < cfg->n_domains; i++) {
        const mdcom_domain_cfg *d = &cfg->domains[i];
        if (!name_ok(d->name, MDCOM_DOMAIN_NAME_MAX, 0))
            return cfg_fail(e, cfg, "domains", i, 0, "name: 1..15 characters of [A-Za-z0-9._-]");
        if (d->id >= MDCOM_MAX_DOMAINS)
            return cfg_fail(e, cfg, "domains", i, d->name, "id: must be 0..31");
        if (dom_mask & (1u << d->id))
            return cfg_fail(e, cfg, "domains", i, d->name, "id: duplicate domain id");
        if (d->role != MDCOM_ROLE_MASTER && d->role != MDCOM_ROLE_REMOTE)
            return cfg_fail(e, cfg, "domains", i, d->name, "role: must be master or remote");
        for (j = 0; j < i; j++)
            if (mdcom_streq(cfg->domains[j].name, d->name, MDCOM_DOMAIN_NAME_MAX))
                return cfg_fail(e, cfg, "domains", i, d->name, "name: duplicate domain name");
        dom_mask |= 1u << d->id;
        if (d->role == MDCOM_ROLE_MASTER) {
            masters++;
            lay->master_domain = d->id;
        }
    }
    if (masters != 1)
        return mdcom_err_set(e, -EINVAL, cfg->region_name,
                             "domains: exactly one domain must have role master");

    lay->dom_off = MDCOM_HDR_SIZE;
    lay->proc_off = (uint32_t)align_up(lay->dom_off + (uint64_t)cfg->n_domains * sizeof(mdcom_wire_domain),
                                       MDCOM_PAD);
    lay->dir_off = (uint32_t)align_up(
        lay->proc_off + (uint64_t)MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc), MDCOM_PAD);
    off = align_up(lay->dir_off + (uint64_t)cfg->n_channels * sizeof(mdcom_wire_dirent), MDCOM_PAD);
    lay->data_off = (uint32_t)off;

    for (i = 0; i < cfg->n_channels; i++) {
        const mdcom_channel_cfg *c = &cfg->channels[i];
        mdcom_chan_layout cl;
        memset(&cl, 0, sizeof(cl));
        if (!name_ok(c->name, MDCOM_NAME_MAX, 0))
            return cfg_fail(e, cfg, "channels", i, 0, "name: 1..31 characters of [A-Za-z0-9._-]");
        for (j = 0; j < i; j++)
            if (mdcom_streq(cfg->channels[j].name, c->name, MDCOM_NAME_MAX))
                return cfg_fail(e, cfg, "channels", i, c->name, "name: duplicate channel name");
        cl.type = c->type;
        cl.off = (uint32_t)off;
        if (c->type == MDCOM_CHAN_FIFO) {
            uint64_t sz, st;
            if (c->block_size == 0)
                return cfg_fail(e, cfg, "channels", i, c->name, "block_size: must be >= 1");
            if (c->block_count == 0 || c->block_count > MDCOM_MAX_BLOCKS)
                return cfg_fail(e, cfg, "channels", i, c->name, "block_count: must be 1..65536");
            if (c->queue_depth && (!is_pow2(c->queue_depth) || c->queue_depth > MDCOM_MAX_BLOCKS))
                return cfg_fail(e, cfg, "channels", i, c->name,
                                "queue_depth: must be a power of two, 1..65536 (or 0 = auto)");
            if (!c->senders || (c->senders & ~dom_mask))
                return cfg_fail(e, cfg, "channels", i, c->name,
                                "senders: must name one or more configured domains");
            if (!c->receivers || (c->receivers & ~dom_mask))
                return cfg_fail(e, cfg, "channels", i, c->name,
                                "receivers: must name one or more configured domains");
            cl.block_size = c->block_size;
            cl.block_count = c->block_count;
            cl.qcap = c->queue_depth ? c->queue_depth : pow2_ceil(c->block_count);
            /* blocks whole pad units apart: the producer filling block
             * k + 1 and the consumer reading block k never share a pair.
             * From MDCOM_COLOR_MIN on, an odd number of units: a stride of
             * whole pages would put the first line of every block (where
             * small messages and headers go) at the same page offset, so
             * in the same cache set; k x odd units mod 32 visits all 32
             * offsets of a 4 KiB page before it repeats. */
            st = align_up(c->block_size, MDCOM_PAD);
            if (st >= MDCOM_COLOR_MIN && (st / MDCOM_PAD) % 2u == 0)
                st += MDCOM_PAD;
            if (st > 0xffffffffu)
                return cfg_fail(e, cfg, "channels", i, c->name, "block_size: too large");
            cl.stride = (uint32_t)st;
            cl.qslots_off = (uint32_t)sizeof(mdcom_wire_fifo_ctl);
            cl.bstate_off = (uint32_t)align_up(cl.qslots_off + (uint64_t)cl.qcap * sizeof(mdcom_wire_qslot),
                                               MDCOM_PAD);
            cl.blocks_off = (uint32_t)align_up(cl.bstate_off + (uint64_t)cl.block_count * sizeof(mdcom_aword),
                                               MDCOM_PAD);
            sz = cl.blocks_off + (uint64_t)cl.stride * cl.block_count;
            if (sz > 0xffffffffu || off + sz > 0xffffffffu)
                return cfg_fail(e, cfg, "channels", i, c->name,
                                "block_size x block_count: region would exceed 4 GiB");
            cl.size = (uint32_t)sz;
            cl.senders = c->senders;
            cl.receivers = c->receivers;
        } else if (c->type == MDCOM_CHAN_SMEM) {
            if (c->size == 0)
                return cfg_fail(e, cfg, "channels", i, c->name, "size: must be >= 1");
            if (c->size > 0xffffffffu - 2u * MDCOM_PAD)
                return cfg_fail(e, cfg, "channels", i, c->name, "size: region would exceed 4 GiB");
            if (!c->users || (c->users & ~dom_mask))
                return cfg_fail(e, cfg, "channels", i, c->name,
                                "users: must name one or more configured domains");
            cl.data_off = (uint32_t)sizeof(mdcom_wire_smem_ctl);
            cl.data_size = c->size;
            cl.size = (uint32_t)align_up(cl.data_off + (uint64_t)c->size, MDCOM_PAD);
            if (off + cl.size > 0xffffffffu)
                return cfg_fail(e, cfg, "channels", i, c->name, "size: region would exceed 4 GiB");
            cl.senders = cl.receivers = c->users;
        } else {
            return cfg_fail(e, cfg, "channels", i, c->name, "type: must be fifo or smem");
        }
        off = align_up(off + cl.size, MDCOM_PAD);
        if (off > 0xffffffffu)
            return cfg_fail(e, cfg, "channels", i, c->name, "region would exceed 4 GiB");
        if (chans)
            chans[i] = cl;
    }
    lay->needed = (uint32_t)off;
    lay->region_size = cfg->region_size ? cfg->region_size : lay->needed;
    if (lay->region_size < lay->needed) {
        mdcom_err_set(e, -ENOSPC, cfg->region_name, "region.size ");
        mdcom_err_u32(e, cfg->region_size);
        mdcom_err_str(e, " is too small: the layout needs ");
        mdcom_err_u32(e, lay->needed);
        mdcom_err_str(e, " bytes");
        return -ENOSPC;
    }

    /* The hash covers everything a peer must agree on. */
    h = 2166136261u;
    h = hash_u32(h, MDCOM_WIRE_VERSION);
    h = hash_u32(h, lay->region_size);
    h = hash_u32(h, cfg->n_domains);
    for (i = 0; i < cfg->n_domains; i++) {
        h = hash_name(h, cfg->domains[i].name, MDCOM_DOMAIN_NAME_MAX);
        h = hash_u32(h, cfg->domains[i].id);
        h = hash_u32(h, cfg->domains[i].role);
    }
    h = hash_u32(h, cfg->n_channels);
    off = lay->data_off;
    for (i = 0; i < cfg->n_channels; i++) {
        const mdcom_channel_cfg *c = &cfg->channels[i];
        h = hash_name(h, c->name, MDCOM_NAME_MAX);
        h = hash_u32(h, c->type);
        if (c->type == MDCOM_CHAN_FIFO) {
            h = hash_u32(h, c->block_size);
            h = hash_u32(h, c->block_count);
            h = hash_u32(h, c->queue_depth ? c->queue_depth : pow2_ceil(c->block_count));
            h = hash_u32(h, c->senders);
            h = hash_u32(h, c->receivers);
        } else {
            h = hash_u32(h, c->size);
            h = hash_u32(h, c->users);
        }
    }
    lay->hash = h;
    return 0;
}

/* ---------------------------------------------------------------- */
/* verification (remote)                                              */
/* ---------------------------------------------------------------- */

static int field_mismatch(mdcom_err *e, const mdcom_config *cfg, const char *what, uint32_t idx,
                          const char *name, const char *field, uint32_t got, uint32_t want)
{
    mdcom_err_set(e, -ESTALE, cfg->region_name, what);
    if (idx != 0xffffffffu) {
        mdcom_err_str(e, "[");
        mdcom_err_u32(e, idx);
        mdcom_err_str(e, "]");
    }
    if (name) {
        mdcom_err_str(e, " '");
        mdcom_err_str(e, name);
        mdcom_err_str(e, "'");
    }
    mdcom_err_str(e, ": ");
    mdcom_err_str(e, field);
    mdcom_err_str(e, " is ");
    mdcom_err_u32(e, got);
    mdcom_err_str(e, " in the region, ");
    mdcom_err_u32(e, want);
    mdcom_err_str(e, " in this config");
    return -ESTALE;
}

/* a header field differs */
static int hdr_mismatch(mdcom_err *e, const mdcom_config *cfg, const char *field, uint32_t got,
                        uint32_t want)
{
    return field_mismatch(e, cfg, "header", 0xffffffffu, 0, field, got, want);
}

int mdcom_layout_verify(const void *base, uint32_t mapped_size, const mdcom_config *cfg,
                        const mdcom_layout *lay, const mdcom_chan_layout *chans, mdcom_err *e)
{
    const volatile mdcom_wire_hdr *h = (const volatile mdcom_wire_hdr *)base;
    const uint8_t *b = (const uint8_t *)base;
    uint32_t v, i;

    if (mapped_size < MDCOM_HDR_SIZE)
        return mdcom_err_set(e, -EBADMSG, cfg->region_name, "region smaller than its header");
    if ((v = h->magic) != MDCOM_MAGIC)
        return mdcom_err_set(e, -EBADMSG, cfg->region_name, "bad magic: not an mdcom region");
    if ((v = h->version) != MDCOM_WIRE_VERSION) {
        mdcom_err_set(e, -EPROTONOSUPPORT, cfg->region_name, "wire version ");
        mdcom_err_u32(e, v);
        mdcom_err_str(e, " in the region, this library speaks ");
        mdcom_err_u32(e, MDCOM_WIRE_VERSION);
        return -EPROTONOSUPPORT;
    }
    if ((v = h->hdr_size) != MDCOM_HDR_SIZE)
        return hdr_mismatch(e, cfg, "hdr_size", v, MDCOM_HDR_SIZE);
    /* Configured values first, derived ones (offsets, sizes) last, so that the
     * message names what differs in the configurations. The tables' offsets
     * depend only on the domain and channel counts, checked first. */
    if ((v = h->n_domains) != cfg->n_domains)
        return hdr_mismatch(e, cfg, "n_domains", v, cfg->n_domains);
    if ((v = h->n_channels) != cfg->n_channels)
        return hdr_mismatch(e, cfg, "n_channels", v, cfg->n_channels);
    if ((v = h->dom_off) != lay->dom_off)
        return hdr_mismatch(e, cfg, "dom_off", v, lay->dom_off);
    if ((v = h->proc_off) != lay->proc_off)
        return hdr_mismatch(e, cfg, "proc_off", v, lay->proc_off);
    if ((v = h->dir_off) != lay->dir_off)
        return hdr_mismatch(e, cfg, "dir_off", v, lay->dir_off);
    if ((v = h->n_procs) != MDCOM_MAX_PROCS)
        return hdr_mismatch(e, cfg, "n_procs", v, MDCOM_MAX_PROCS);
    if ((v = h->master_domain) != lay->master_domain)
        return hdr_mismatch(e, cfg, "master_domain", v, lay->master_domain);
    /* the tables below our data_off are read next: mapped? */
    if (mapped_size < lay->data_off)
        return hdr_mismatch(e, cfg, "mapped size", mapped_size, lay->region_size);

    /* Offsets below come from our own layout, which fits in region_size. */
    for (i = 0; i < cfg->n_domains; i++) {
        const mdcom_wire_domain *d = (const mdcom_wire_domain *)(b + lay->dom_off) + i;
        char name[MDCOM_DOMAIN_NAME_MAX];
        memcpy(name, d->name, sizeof(name)); /* read once */
        name[MDCOM_DOMAIN_NAME_MAX - 1] = '\0';
        if (!mdcom_streq(name, cfg->domains[i].name, MDCOM_DOMAIN_NAME_MAX)) {
            mdcom_err_set(e, -ESTALE, cfg->region_name, "domains[");
            mdcom_err_u32(e, i);
            mdcom_err_str(e, "]: named '");
            mdcom_err_str(e, name);
            mdcom_err_str(e, "' in the region, '");
            mdcom_err_str(e, cfg->domains[i].name);
            mdcom_err_str(e, "' in this config");
            return -ESTALE;
        }
        if ((v = ((const volatile mdcom_wire_domain *)d)->id) != cfg->domains[i].id)
            return field_mismatch(e, cfg, "domains", i, cfg->domains[i].name, "id", v,
                                  cfg->domains[i].id);
        if ((v = ((const volatile mdcom_wire_domain *)d)->role) != cfg->domains[i].role)
            return field_mismatch(e, cfg, "domains", i, cfg->domains[i].name, "role", v,
                                  cfg->domains[i].role);
    }
    for (i = 0; i < cfg->n_channels; i++) {
        const volatile mdcom_wire_dirent *d = (const volatile mdcom_wire_dirent *)(b + lay->dir_off) + i;
        const mdcom_chan_layout *cl = &chans[i];
        const char *cn = cfg->channels[i].name;
        char name[MDCOM_NAME_MAX];
        uint32_t k;
        for (k = 0; k < MDCOM_NAME_MAX; k++)
            name[k] = d->name[k];
        name[MDCOM_NAME_MAX - 1] = '\0';
        if (!mdcom_streq(name, cn, MDCOM_NAME_MAX)) {
            mdcom_err_set(e, -ESTALE, cfg->region_name, "channels[");
            mdcom_err_u32(e, i);
            mdcom_err_str(e, "]: named '");
            mdcom_err_str(e, name);
            mdcom_err_str(e, "' in the region, '");
            mdcom_err_str(e, cn);
            mdcom_err_str(e, "' in this config");
            return -ESTALE;
        }
        if ((v = d->type) != cl->type)
            return field_mismatch(e, cfg, "channels", i, cn, "type", v, cl->type);
        if (cl->type == MDCOM_CHAN_FIFO) {
            if ((v = d->block_size) != cl->block_size)
                return field_mismatch(e, cfg, "channels", i, cn, "block_size", v, cl->block_size);
            if ((v = d->block_count) != cl->block_count)
                return field_mismatch(e, cfg, "channels", i, cn, "block_count", v,
                                      cl->block_count);
            if ((v = d->queue_depth) != cl->qcap)
                return field_mismatch(e, cfg, "channels", i, cn, "queue_depth", v, cl->qcap);
        } else if ((v = d->block_size) != cl->data_size) {
            return field_mismatch(e, cfg, "channels", i, cn, "size", v, cl->data_size);
        }
        if ((v = d->senders) != cl->senders)
            return field_mismatch(e, cfg, "channels", i, cn, "senders", v, cl->senders);
        if ((v = d->receivers) != cl->receivers)
            return field_mismatch(e, cfg, "channels", i, cn, "receivers", v, cl->receivers);
        if ((v = d->off) != cl->off)
            return field_mismatch(e, cfg, "channels", i, cn, "offset", v, cl->off);
        if ((v = d->size) != cl->size)
            return field_mismatch(e, cfg, "channels", i, cn, "size", v, cl->size);
    }
    if ((v = h->region_size) != lay->region_size)
        return hdr_mismatch(e, cfg, "region_size", v, lay->region_size);
    if (mapped_size < lay->region_size)
        return hdr_mismatch(e, cfg, "mapped size", mapped_size, lay->region_size);
    if ((v = h->data_off) != lay->data_off)
        return hdr_mismatch(e, cfg, "data_off", v, lay->data_off);
    if ((v = h->layout_hash) != lay->hash)
        return hdr_mismatch(e, cfg, "layout_hash", v, lay->hash);
    return 0;
}
