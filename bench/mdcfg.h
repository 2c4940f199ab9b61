/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcfg.h - a run-time mdcom configuration for the message transports: two
 * domains ("a" id 0 master = side A, "b" id 1 remote = side B) and, per bench
 * channel c, one channel "f<c>" A -> B and one "r<c>" B -> A.
 */
#ifndef MDCOM_BENCH_MDCFG_H
#define MDCOM_BENCH_MDCFG_H

#include <stdio.h>
#include <string.h>

#include "mdcom/mdcom.h"
#include "transport.h"

typedef struct bench_mdcfg {
    char region[32];
    char names[2 * BENCH_MAX_CHAN][16];
    mdcom_domain_cfg dom[2];
    mdcom_channel_cfg ch[2 * BENCH_MAX_CHAN];
    mdcom_config cfg;
} bench_mdcfg;

/* type MDCOM_CHAN_FIFO: block_size, block_count; MDCOM_CHAN_SMEM: size. */
static inline void bench_mdcfg_fill(bench_mdcfg *m, const char *region, uint32_t n_chan,
                                    uint32_t type, uint32_t size, uint32_t count)
{
    memset(m, 0, sizeof(*m));
    snprintf(m->region, sizeof(m->region), "%s", region);
    m->dom[0] = (mdcom_domain_cfg){.name = "a", .id = 0, .role = MDCOM_ROLE_MASTER};
    m->dom[1] = (mdcom_domain_cfg){.name = "b", .id = 1, .role = MDCOM_ROLE_REMOTE};
    for (uint32_t i = 0; i < 2 * n_chan; i++) {
        snprintf(m->names[i], sizeof(m->names[i]), "%c%u", i & 1u ? 'r' : 'f', i / 2);
        mdcom_channel_cfg *c = &m->ch[i];
        c->name = m->names[i];
        c->type = type;
        if (type == MDCOM_CHAN_FIFO) {
            c->block_size = size;
            c->block_count = count;
            c->senders = i & 1u ? 2u : 1u;
            c->receivers = i & 1u ? 1u : 2u;
        } else {
            c->size = size;
            c->users = 3u;
        }
    }
    m->cfg = (mdcom_config){.region_name = m->region,
                            .mode = 0600,
                            .group = -1,
                            .domains = m->dom,
                            .n_domains = 2,
                            .channels = m->ch,
                            .n_channels = 2 * n_chan};
}

/* The attachments to such a region: the parent's master (side A, made at
 * setup) and the child's own remote (side B, made at its attach; the child
 * leaves the inherited master pointer alone). mc must outlive them (mdcom
 * keeps a pointer to the config). */
typedef struct bench_mdreg {
    bench_mdcfg mc;
    mdcom_t *master, *remote;
} bench_mdreg;

/* Attach as side's domain (B waits up to attach_ns for the master). 0 or
 * the mdcom error (printed with the config error text, tname first). */
static inline int bench_mdreg_attach(bench_mdreg *r, int side, int64_t attach_ns, const char *tname)
{
    char eb[200] = "", what[96];
    mdcom_init_opts o = {.attach_timeout_ns = side == BENCH_SIDE_B ? attach_ns : 0,
                         .errbuf = eb,
                         .errbuf_len = sizeof(eb)};
    int rc = mdcom_init(side == BENCH_SIDE_B ? &r->remote : &r->master, &r->mc.cfg,
                        side == BENCH_SIDE_B ? 1u : 0u, &o);
    if (rc != 0) {
        snprintf(what, sizeof(what), "%s: mdcom_init(%s)", tname,
                 side == BENCH_SIDE_B ? "remote" : "master");
        bench_err_mdcom(what, rc);
        if (eb[0])
            bench_err("  %s", eb);
    }
    return rc;
}

static inline mdcom_t *bench_mdreg_of(const bench_mdreg *r, int side)
{
    return side == BENCH_SIDE_B ? r->remote : r->master;
}

/* Detach side (the master: at teardown, which ends the region). */
static inline void bench_mdreg_detach(bench_mdreg *r, int side, const char *tname)
{
    mdcom_t **m = side == BENCH_SIDE_B ? &r->remote : &r->master;
    int rc = *m ? mdcom_term(*m) : 0;
    if (rc != 0) {
        char what[96];
        snprintf(what, sizeof(what), "%s: mdcom_term", tname);
        bench_err_mdcom(what, rc);
    }
    *m = NULL;
}

#endif /* MDCOM_BENCH_MDCFG_H */
