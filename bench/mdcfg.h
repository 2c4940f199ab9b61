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

#endif /* MDCOM_BENCH_MDCFG_H */
