/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.c - the inspectors' entry to the core's layout computation
 * (include/mdcom/wire.h): public wrappers of mdcom_layout_compute() and
 * mdcom_layout_verify() with public types. Hosted builds only (malloc).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/layout.h"
#include "mdcom/wire.h"

static void to_public(mdcom_wire_chan_layout *o, const mdcom_chan_layout *c)
{
    o->type = c->type;
    o->off = c->off;
    o->size = c->size;
    o->qslots_off = c->qslots_off;
    o->qcap = c->qcap;
    o->bstate_off = c->bstate_off;
    o->blocks_off = c->blocks_off;
    o->stride = c->stride;
    o->block_size = c->block_size;
    o->block_count = c->block_count;
    o->data_off = c->data_off;
    o->data_size = c->data_size;
    o->senders = c->senders;
    o->receivers = c->receivers;
}

/* empty the caller's error buffer; -EINVAL without the caller's output
 * (out); else compute into a private array of cfg->n_channels entries (*cls,
 * freed by the caller whatever the result) */
static int compute(const void *out, const mdcom_config *cfg, mdcom_layout *lay,
                   mdcom_chan_layout **cls, mdcom_err *e)
{
    size_t n;
    if (e->buf && e->cap)
        e->buf[0] = '\0';
    if (!out)
        return -EINVAL;
    n = cfg && cfg->n_channels <= MDCOM_MAX_DIR ? cfg->n_channels : 0;
    *cls = calloc(n ? n : 1, sizeof(**cls));
    if (!*cls)
        return -ENOMEM;
    return mdcom_layout_compute(cfg, lay, *cls, e);
}

int mdcom_wire_layout_compute(const mdcom_config *cfg, mdcom_wire_layout *lay,
                              mdcom_wire_chan_layout *chans, char *err, size_t err_len)
{
    mdcom_err e = {err, err_len, 0};
    mdcom_chan_layout *cls = NULL;
    mdcom_layout l;
    uint32_t i;
    int rc = compute(lay, cfg, &l, &cls, &e);
    if (rc == 0) {
        lay->dom_off = l.dom_off;
        lay->proc_off = l.proc_off;
        lay->dir_off = l.dir_off;
        lay->data_off = l.data_off;
        lay->needed = l.needed;
        lay->region_size = l.region_size;
        lay->hash = l.hash;
        lay->master_domain = l.master_domain;
        for (i = 0; chans && i < cfg->n_channels; i++)
            to_public(&chans[i], &cls[i]);
    }
    free(cls);
    return rc;
}

int mdcom_wire_verify(const void *base, uint32_t mapped_size, const mdcom_config *cfg, char *err,
                      size_t err_len)
{
    mdcom_err e = {err, err_len, 0};
    mdcom_chan_layout *cls = NULL;
    mdcom_layout l;
    int rc = compute(base, cfg, &l, &cls, &e);
    if (rc == 0)
        rc = mdcom_layout_verify(base, mapped_size, cfg, &l, cls, &e);
    free(cls);
    return rc;
}
