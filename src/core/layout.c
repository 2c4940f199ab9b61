/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * layout.c - validates a configuration and computes the region layout drawn
 * in <mdcom/wire.h>. Nothing else computes an offset: format.c writes what
 * this computes, verify.c checks a region against it. A core built with
 * MDCOM_RUNTIME_LAYOUT=0 leaves this file out and takes the layout computed
 * ahead of time by this same code on the build host (tools/mdcom-layout.c).
 */
#include "layout.h"

#include "bench_cut.h" /* all 0 outside a benchmark-only build */
_Static_assert(MDCOM_CUT_SPAD || MDCOM_CUT_BSTATE_STEP == sizeof(mdcom_aword),
               "a block state word is 4 bytes apart from the next");

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* validation + layout                                                */
/* ---------------------------------------------------------------- */

/* v rounded up to a whole number of pad units in *out: 0, or 1 when that
 * does not fit in 32 bits */
static int pad_up(uint32_t v, uint32_t *out)
{
    if (__builtin_add_overflow(v, MDCOM_PAD - 1u, out))
        return 1;
    *out &= ~(MDCOM_PAD - 1u);
    return 0;
}

/* (out of line: GCC copied it into each caller) */
static __attribute__((noinline)) uint32_t pow2_ceil(uint32_t v)
{
    uint32_t p = 1;
    while (p < v && p < 0x80000000u)
        p <<= 1;
    return p;
}

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

/* A configuration error names a key and a message of these packed tables:
 * CFG_FAIL(key, msg) is their indices in one byte + 1 (0 = no error). */
static const char cfg_keys[] = "name\0id\0role\0block_size\0block_count\0queue_depth\0senders\0"
                               "receivers\0size\0users\0type\0block_size x block_count";
enum {
    K_NAME,
    K_ID,
    K_ROLE,
    K_BSIZE,
    K_BCOUNT,
    K_QDEPTH,
    K_SENDERS,
    K_RECEIVERS,
    K_SIZE,
    K_USERS,
    K_TYPE,
    K_BSBC
};
/* the messages from M_BE on are "must be <text>"; the name rules' ("1..15",
 * "1..31") go on with " characters of [A-Za-z0-9._-]" (cfg_fail) */
static const char cfg_msgs[] =
    "1..15\0"
    "1..31\0"
    "duplicate domain name\0duplicate channel name\0duplicate domain id\0"
    "must name one or more configured domains\0"
    "region would exceed 4 GiB\0"
    "0..31\0master or remote\0>= 1\0"
    "1..65536\0"
    "a power of two, 1..65536 (or 0 = auto)\0fifo or smem";
enum {
    M_DNAME,
    M_CNAME,
    M_DDUP,
    M_CDUP,
    M_IDDUP,
    M_NODOM,
    M_BIG,
    M_BE,
    M_ID = M_BE,
    M_ROLE,
    M_ONE,
    M_BCOUNT,
    M_QDEPTH,
    M_TYPE
};
#define CFG_FAIL(k, m) (((uint32_t)(k) << 4 | (uint32_t)(m)) + 1u)
_Static_assert(K_BSBC < 16 && M_TYPE < 16, "a configuration error fits in one byte");

/* "kind[idx] 'name': key: msg" (name left out when NULL) */
static int cfg_fail(mdcom_err *e, const mdcom_config *cfg, const char *kind, uint32_t idx,
                    const char *name, uint32_t why)
{
    int q = name != 0;                                 /* set once the name was found valid */
    mdcom_err_set(e, -EINVAL, cfg->region_name, kind); /* a valid name: checked first */
    mdcom_err_fmt(e, q ? "[%u] '%s': %s: %s%s%s" : "[%u]%s: %s: %s%s%s", idx, q ? name : "",
                  mdcom_nth_str(cfg_keys, (why - 1u) >> 4),
                  ((why - 1u) & 15u) >= M_BE ? "must be " : "",
                  mdcom_nth_str(cfg_msgs, (why - 1u) & 15u),
                  ((why - 1u) & 15u) <= M_CNAME ? " characters of [A-Za-z0-9._-]" : "");
    return -EINVAL;
}

/* Channel c's geometry at region offset off into *cl (its fields beyond
 * the name; dom_mask: the configured domains). 0, or CFG_FAIL(key, msg).
 * Every size is checked to fit in 32 bits, from off on. */
static __attribute__((noinline)) uint32_t
chan_geometry(const mdcom_channel_cfg *c, uint32_t dom_mask, uint32_t off, mdcom_chan_layout *cl)
{
    uint32_t st, sz;
    memset(cl, 0, sizeof(*cl));
    cl->type = c->type;
    cl->off = off;
    if (c->type == MDCOM_CHAN_FIFO) {
        if (c->block_size == 0)
            return CFG_FAIL(K_BSIZE, M_ONE);
        if (c->block_count == 0 || c->block_count > MDCOM_MAX_BLOCKS)
            return CFG_FAIL(K_BCOUNT, M_BCOUNT);
        if (c->queue_depth &&
            ((c->queue_depth & (c->queue_depth - 1u)) || c->queue_depth > MDCOM_MAX_BLOCKS))
            return CFG_FAIL(K_QDEPTH, M_QDEPTH);
        if (!c->senders || (c->senders & ~dom_mask))
            return CFG_FAIL(K_SENDERS, M_NODOM);
        if (!c->receivers || (c->receivers & ~dom_mask))
            return CFG_FAIL(K_RECEIVERS, M_NODOM);
        cl->block_size = c->block_size;
        cl->block_count = c->block_count;
        cl->qcap = c->queue_depth ? c->queue_depth : pow2_ceil(c->block_count);
        /* blocks whole pad units apart: the producer filling block
         * k + 1 and the consumer reading block k never share a pair.
         * From MDCOM_COLOR_MIN on, an odd number of units: a stride of
         * whole pages would put the first line of every block (where
         * small messages and headers go) at the same page offset, so
         * in the same cache set; k x odd units mod 32 visits all 32
         * offsets of a 4 KiB page before it repeats. */
        if (pad_up(c->block_size + (MDCOM_CUT_SINB ? 7u : 0u), &st) ||
            (!MDCOM_CUT_NOCOLOR && st >= MDCOM_COLOR_MIN && !(st & MDCOM_PAD) &&
             __builtin_add_overflow(st, MDCOM_PAD, &st)))
            return CFG_FAIL(K_BSBC, M_BIG);
        cl->stride = st;
        cl->qslots_off = (uint32_t)sizeof(mdcom_wire_fifo_ctl);
        (void)pad_up(cl->qslots_off +
                         cl->qcap * (uint32_t)sizeof(mdcom_wire_qslot) * MDCOM_CUT_QSTEP,
                     &cl->bstate_off);
        /* one word per block (a SPAD cut build: one PAD unit each) */
        (void)pad_up(cl->bstate_off + cl->block_count * MDCOM_CUT_BSTATE_STEP, &cl->blocks_off);
        if (__builtin_mul_overflow(st, cl->block_count, &sz) ||
            __builtin_add_overflow(sz, cl->blocks_off, &sz) || __builtin_add_overflow(sz, off, &st))
            return CFG_FAIL(K_BSBC, M_BIG);
        cl->senders = c->senders;
        cl->receivers = c->receivers;
    } else if (c->type == MDCOM_CHAN_SMEM) {
        if (c->size == 0)
            return CFG_FAIL(K_SIZE, M_ONE);
        if (c->size > 0xffffffffu - 2u * MDCOM_PAD)
            return CFG_FAIL(K_SIZE, M_BIG);
        if (!c->users || (c->users & ~dom_mask))
            return CFG_FAIL(K_USERS, M_NODOM);
        cl->data_off = (uint32_t)sizeof(mdcom_wire_smem_ctl);
        cl->data_size = c->size;
        (void)pad_up(cl->data_off + c->size, &sz);
        if (__builtin_add_overflow(sz, off, &st))
            return CFG_FAIL(K_SIZE, M_BIG);
        cl->senders = cl->receivers = c->users;
    } else {
        return CFG_FAIL(K_TYPE, M_TYPE);
    }
    cl->size = sz;
    /* the next channel's offset must fit too */
    return pad_up(off + sz, &st) ? CFG_FAIL(K_SIZE, M_BIG) : 0;
}

static uint32_t hash_u32(uint32_t h, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return mdcom_fnv1a(h, b, 4);
}

_Static_assert(offsetof(mdcom_domain_cfg, role) == offsetof(mdcom_domain_cfg, id) + 4u,
               "a domain's id and role are hashed as two words");
_Static_assert(offsetof(mdcom_channel_cfg, block_count) == offsetof(mdcom_channel_cfg, type) + 8u &&
                   offsetof(mdcom_channel_cfg, receivers) ==
                       offsetof(mdcom_channel_cfg, senders) + 4u &&
                   offsetof(mdcom_channel_cfg, users) == offsetof(mdcom_channel_cfg, size) + 4u,
               "a channel's words are hashed in runs of adjacent words");

/* h over n words (out of line: one copy of the loop for every caller) */
static __attribute__((noinline)) uint32_t hash_words(uint32_t h, const uint32_t *w, uint32_t n)
{
    while (n--)
        h = hash_u32(h, *w++);
    return h;
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
    uint32_t i, j, dom_mask = 0, masters = 0, h, off, why, w[3];
    const char *kind = "domains", *name = 0;
    mdcom_chan_layout cl, *pcl;

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
        name = 0; /* not the previous domain's */
        why = CFG_FAIL(K_NAME, M_DNAME);
        if (!name_ok(d->name, MDCOM_DOMAIN_NAME_MAX, 0))
            goto fail;
        name = d->name;
        why = CFG_FAIL(K_NAME, M_DDUP);
        for (j = 0; j < i; j++)
            if (mdcom_streq(cfg->domains[j].name, d->name, MDCOM_DOMAIN_NAME_MAX))
                goto fail;
        why = CFG_FAIL(K_ID, M_ID);
        if (d->id >= MDCOM_MAX_DOMAINS)
            goto fail;
        why = CFG_FAIL(K_ID, M_IDDUP);
        if (dom_mask & (1u << d->id))
            goto fail;
        why = CFG_FAIL(K_ROLE, M_ROLE);
        if (d->role != MDCOM_ROLE_MASTER && d->role != MDCOM_ROLE_REMOTE)
            goto fail;
        dom_mask |= 1u << d->id;
        if (d->role == MDCOM_ROLE_MASTER) {
            masters++;
            lay->master_domain = d->id;
        }
    }
    if (masters != 1)
        return mdcom_err_set(e, -EINVAL, cfg->region_name, "domains: need exactly one master");

    /* n_domains <= 32 and n_channels <= 1024: these fit in 32 bits */
    lay->dom_off = MDCOM_HDR_SIZE;
    (void)pad_up(lay->dom_off + cfg->n_domains * (uint32_t)sizeof(mdcom_wire_domain),
                 &lay->proc_off);
    (void)pad_up(lay->proc_off + MDCOM_MAX_PROCS * (uint32_t)sizeof(mdcom_wire_proc),
                 &lay->dir_off);
    (void)pad_up(lay->dir_off + cfg->n_channels * (uint32_t)sizeof(mdcom_wire_dirent), &off);
    lay->data_off = off;

    kind = "channels";
    for (i = 0; i < cfg->n_channels; i++) {
        const mdcom_channel_cfg *c = &cfg->channels[i];
        name = 0;
        why = CFG_FAIL(K_NAME, M_CNAME);
        if (!name_ok(c->name, MDCOM_NAME_MAX, 0))
            goto fail;
        name = c->name;
        why = CFG_FAIL(K_NAME, M_CDUP);
        for (j = 0; j < i; j++)
            if (mdcom_streq(cfg->channels[j].name, c->name, MDCOM_NAME_MAX))
                goto fail;
        /* straight into the caller's table when it wants one */
        pcl = chans ? &chans[i] : &cl;
        why = chan_geometry(c, dom_mask, off, pcl);
        if (why)
            goto fail;
        (void)pad_up(off + pcl->size, &off); /* checked by chan_geometry */
    }
    lay->needed = off;
    lay->region_size = cfg->region_size ? cfg->region_size : lay->needed;
    if (lay->region_size < lay->needed) {
        mdcom_err_set(e, -ENOSPC, cfg->region_name, 0);
        mdcom_err_fmt(e, "region.size %u is too small: the layout needs %u bytes", cfg->region_size,
                      lay->needed);
        return -ENOSPC;
    }

    /* The hash covers everything a peer must agree on: per FIFO channel
     * type, block_size, block_count, queue depth, senders, receivers; per
     * SMEM channel type, size, users. */
    w[0] = MDCOM_WIRE_VERSION;
    w[1] = lay->region_size;
    w[2] = cfg->n_domains;
    h = hash_words(MDCOM_FNV1A_BASIS, w, 3);
    for (i = 0; i < cfg->n_domains; i++) {
        h = hash_name(h, cfg->domains[i].name, MDCOM_DOMAIN_NAME_MAX);
        h = hash_words(h, &cfg->domains[i].id, 2); /* id, role: adjacent words */
    }
    h = hash_words(h, &cfg->n_channels, 1);
    for (i = 0; i < cfg->n_channels; i++) {
        const mdcom_channel_cfg *c = &cfg->channels[i];
        /* valid (checked above): the words chan_geometry keeps */
        h = hash_name(h, c->name, MDCOM_NAME_MAX);
        if (c->type == MDCOM_CHAN_FIFO) {
            w[0] = c->queue_depth ? c->queue_depth : pow2_ceil(c->block_count);
            h = hash_words(h, &c->type, 3); /* type, block_size, block_count */
            h = hash_words(h, w, 1);
            h = hash_words(h, &c->senders, 2); /* senders, receivers */
        } else {
            h = hash_words(hash_words(h, &c->type, 1), &c->size, 2); /* size, users */
        }
    }
    lay->hash = h;
    return 0;

fail:
    return cfg_fail(e, cfg, kind, i, name, why);
}
