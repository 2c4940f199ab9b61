/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verify.c - the header's and the directory's words for a layout (what
 * format.c writes), and the check of a formatted region against them (what
 * a process makes at attach before it reads any live word).
 */
#include "layout.h"
#include "shm_access.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* the tables' words: what format writes, what verify expects        */
/* ---------------------------------------------------------------- */

void mdcom_layout_hdr_words(const mdcom_config *cfg, const mdcom_layout *lay,
                            uint32_t w[MDCOM_HDR_WORDS])
{
    memset(w, 0, MDCOM_HDR_WORDS * sizeof(w[0]));
    w[MDCOM_HW(magic)] = MDCOM_MAGIC;
    w[MDCOM_HW(version)] = MDCOM_WIRE_VERSION;
    w[MDCOM_HW(hdr_size)] = MDCOM_HDR_SIZE;
    w[MDCOM_HW(region_size)] = lay->region_size;
    w[MDCOM_HW(layout_hash)] = lay->hash;
    w[MDCOM_HW(n_domains)] = cfg->n_domains;
    w[MDCOM_HW(n_channels)] = cfg->n_channels;
    w[MDCOM_HW(dom_off)] = lay->dom_off;
    w[MDCOM_HW(proc_off)] = lay->proc_off;
    w[MDCOM_HW(dir_off)] = lay->dir_off;
    w[MDCOM_HW(n_procs)] = MDCOM_MAX_PROCS;
    w[MDCOM_HW(data_off)] = lay->data_off;
    w[MDCOM_HW(master_domain)] = lay->master_domain;
}

void mdcom_layout_dirent_words(const mdcom_chan_layout *cl, uint32_t w[MDCOM_DIRENT_WORDS])
{
    w[MDCOM_DW(type)] = cl->type;
    w[MDCOM_DW(off)] = cl->off;
    w[MDCOM_DW(size)] = cl->size;
    w[MDCOM_DW(block_size)] = cl->type == MDCOM_CHAN_FIFO ? cl->block_size : cl->data_size;
    w[MDCOM_DW(block_count)] = cl->block_count;
    w[MDCOM_DW(queue_depth)] = cl->qcap;
    w[MDCOM_DW(senders)] = cl->senders;
    w[MDCOM_DW(receivers)] = cl->receivers;
}

/* ---------------------------------------------------------------- */
/* verification (remote)                                              */
/* ---------------------------------------------------------------- */

/* Names of the header's words (by word index; magic, version, generation
 * and state are never compared by name: empty), of a directory entry's
 * words after its name, of a domain entry's words after its name. */
static const char hdr_names[] = "\0\0hdr_size\0region_size\0layout_hash\0\0\0n_domains\0"
                                "n_channels\0dom_off\0proc_off\0dir_off\0n_procs\0data_off\0"
                                "master_domain";
_Static_assert(MDCOM_HW(hdr_size) == 2 && MDCOM_HW(generation) == 5 && MDCOM_HW(n_domains) == 7,
               "hdr_names follows the header's words");
static const char dirent_names[] =
    "type\0offset\0size\0block_size\0block_count\0queue_depth\0senders\0receivers";
static const char domain_names[] = "id\0role";

/* Which words verify compares, in its order: configured values first,
 * derived ones (offsets, sizes) last, so that the message names what
 * differs in the configurations. The tables' offsets depend only on the
 * domain and channel counts, checked first. */
static const uint8_t hdr_first[] = {
    MDCOM_HW(hdr_size), MDCOM_HW(n_domains), MDCOM_HW(n_channels), MDCOM_HW(dom_off),
    MDCOM_HW(proc_off), MDCOM_HW(dir_off),   MDCOM_HW(n_procs),    MDCOM_HW(master_domain)};
static const uint8_t hdr_region[] = {MDCOM_HW(region_size)};
static const uint8_t hdr_last[] = {MDCOM_HW(data_off), MDCOM_HW(layout_hash)};
static const uint8_t dirent_order[] = {
    MDCOM_DW(type),    MDCOM_DW(block_size), MDCOM_DW(block_count), MDCOM_DW(queue_depth),
    MDCOM_DW(senders), MDCOM_DW(receivers),  MDCOM_DW(off),         MDCOM_DW(size)};
static const uint8_t domain_order[] = {0, 1};

/* Where a mismatch is: "region 'R': what[idx] 'name': ..." (idx and name
 * left out when ~0 / NULL). */
struct vc {
    mdcom_err *e;
    const char *region;
    const char *what;
    uint32_t idx;
    const char *name;
};

static void vc_where(const struct vc *c)
{
    mdcom_err_set(c->e, -ESTALE, c->region, c->what);
    if (c->idx != 0xffffffffu)
        mdcom_err_fmt(c->e, "[%u]", c->idx);
}

/* "...: field is got in the region, want in this config" */
static inline __attribute__((always_inline)) int mismatch(const struct vc *c, const char *field,
                                                          uint32_t got, uint32_t want)
{
    vc_where(c);
    if (c->name)
        mdcom_err_fmt(c->e, " '%s'", c->name);
    mdcom_err_fmt(c->e, ": %s is %u in the region, %u in this config", field, got, want);
    return -ESTALE;
}

/* The words ord[0..n) of the region's r against want (each read once):
 * 0, or -ESTALE naming the first that differs. */
static int words_match(const struct vc *c, const uint32_t *r, const uint32_t *want,
                       const uint8_t *ord, uint32_t n, const char *names)
{
    uint32_t k, v;
    for (k = 0; k < n; k++)
        if ((v = mdcom_read_once(r[ord[k]])) != want[ord[k]])
            return mismatch(c, mdcom_nth_str(names, ord[k]), v, want[ord[k]]);
    return 0;
}

/* A table entry: its name (max bytes, read once) against c->name, then its
 * words after the name (r) as words_match. */
static inline __attribute__((always_inline)) int
entry_match(const struct vc *c, const char *rname, size_t max, const uint32_t *r,
            const uint32_t *want, const uint8_t *ord, uint32_t n, const char *names)
{
    char name[MDCOM_NAME_MAX];
    size_t k;
    for (k = 0; k < max; k++)
        name[k] = mdcom_read_once(rname[k]);
    name[max - 1] = '\0';
    if (mdcom_streq(name, c->name, max))
        return words_match(c, r, want, ord, n, names);
    vc_where(c);
    mdcom_err_fmt(c->e, ": named '%s' in the region, '%s' in this config", name, c->name);
    return -ESTALE;
}

int mdcom_layout_verify(const void *base, uint32_t mapped_size, const mdcom_config *cfg,
                        const mdcom_layout *lay, const mdcom_chan_layout *chans, mdcom_err *e)
{
    const uint32_t *h = (const uint32_t *)base;
    const uint8_t *b = (const uint8_t *)base;
    uint32_t want[MDCOM_HDR_WORDS], w[MDCOM_DIRENT_WORDS], v, i;
    struct vc c = {e, cfg->region_name, "header", 0xffffffffu, 0};
    int r;

    if (mapped_size < MDCOM_HDR_SIZE)
        return mdcom_err_set(e, -EBADMSG, c.region, "region smaller than its header");
    if (mdcom_read_once(h[MDCOM_HW(magic)]) != MDCOM_MAGIC)
        return mdcom_err_set(e, -EBADMSG, c.region, "bad magic: not an mdcom region");
    if ((v = mdcom_read_once(h[MDCOM_HW(version)])) != MDCOM_WIRE_VERSION) {
        mdcom_err_set(e, -EPROTONOSUPPORT, c.region, 0);
        mdcom_err_fmt(e, "wire version %u in the region, this library speaks %u", v,
                      MDCOM_WIRE_VERSION);
        return -EPROTONOSUPPORT;
    }
    mdcom_layout_hdr_words(cfg, lay, want);
    if ((r = words_match(&c, h, want, hdr_first, sizeof(hdr_first), hdr_names)) != 0)
        return r;
    /* the tables below our data_off are read next: mapped? */
    if (mapped_size < lay->data_off)
        return mismatch(&c, "mapped size", mapped_size, lay->region_size);

    /* Offsets below come from our own layout, which fits in region_size. */
    c.what = "domains";
    for (i = 0; i < cfg->n_domains; i++) {
        const mdcom_wire_domain *d = (const mdcom_wire_domain *)(b + lay->dom_off) + i;
        const mdcom_domain_cfg *dc = &cfg->domains[i];
        w[0] = dc->id;
        w[1] = dc->role;
        c.idx = i;
        c.name = dc->name;
        if ((r = entry_match(&c, d->name, MDCOM_DOMAIN_NAME_MAX, &d->id, w, domain_order, 2,
                             domain_names)) != 0)
            return r;
    }
    c.what = "channels";
    for (i = 0; i < cfg->n_channels; i++) {
        const mdcom_wire_dirent *d = (const mdcom_wire_dirent *)(b + lay->dir_off) + i;
        mdcom_layout_dirent_words(&chans[i], w);
        c.idx = i;
        c.name = cfg->channels[i].name;
        if ((r = entry_match(&c, d->name, MDCOM_NAME_MAX, &d->type, w, dirent_order,
                             sizeof(dirent_order), dirent_names)) != 0)
            return r;
    }
    c.what = "header";
    c.idx = 0xffffffffu;
    c.name = 0;
    if ((r = words_match(&c, h, want, hdr_region, 1, hdr_names)) != 0)
        return r;
    if (mapped_size < lay->region_size)
        return mismatch(&c, "mapped size", mapped_size, lay->region_size);
    return words_match(&c, h, want, hdr_last, sizeof(hdr_last), hdr_names);
}
