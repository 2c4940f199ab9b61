/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.c - writing the layout that layout.c computes into the region: the
 * header, domain table and directory (at format, and again when the master
 * domain's audit finds them damaged), the process table, and each channel's
 * control words, slots and block states. The master domain's job: not built
 * into the remote-only profile (MDCOM_PROFILE=remote).
 */
#include <string.h>

#include "layout.h"

#include "bench_cut.h" /* all 0 outside a benchmark-only build */

/* a region nobody uses yet (or one the caller owns through FORMATTING):
 * its stores are not kill points */
#define MDCOM_SHM_NO_KILLPOINTS
#include "shm_access.h"

static __attribute__((noinline)) void put_name(char *dst, const char *src, size_t max)
{
    size_t n = mdcom_strnlen(src, max - 1);
    memset(dst, 0, max);
    memcpy(dst, src, n);
}

/* a SINB cut build's state word of block i of FIFO channel area a */
static inline mdcom_aword *sinb_word(uint8_t *a, const mdcom_chan_layout *cl, uint32_t i)
{
    return (mdcom_aword *)(a + cl->blocks_off + (size_t)i * cl->stride +
                           MDCOM_CUT_SINB_OFF(cl->block_size));
}

/* state word i of the state array bs (a SPAD cut build spreads them) */
static inline mdcom_aword *bs_word(mdcom_aword *bs, uint32_t i)
{
    if (MDCOM_CUT_SPAD)
        return (mdcom_aword *)((uint8_t *)bs + (size_t)i * MDCOM_CUT_BSTATE_STEP);
    return &bs[i];
}

void mdcom_layout_format_channel(void *base, const mdcom_chan_layout *cl)
{
    uint8_t *a = (uint8_t *)base + cl->off;
    uint32_t i;
    if (cl->type == MDCOM_CHAN_FIFO) {
        mdcom_wire_qslot *q = (mdcom_wire_qslot *)(a + cl->qslots_off);
        mdcom_aword *bs = (mdcom_aword *)(a + cl->bstate_off);
        memset(a, 0, cl->blocks_off); /* control, slots, states; not the blocks */
        (void)q;                      /* slots zeroed: seq 0 matches no position (full is odd) */
        /* every block in the pool. relaxed: as the memset above, published
         * by what follows the formatting (READY's release store, or the
         * repair's fence and ring) */
        for (i = 0; i < cl->block_count; i++)
            mdcom_store(MDCOM_CUT_SINB ? sinb_word(a, cl, i) : bs_word(bs, i),
                        MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0), memory_order_relaxed);
    } else {
        memset(a, 0, cl->data_off); /* lock free, no waiters; data kept */
    }
}

void mdcom_layout_write_tables(void *base, const mdcom_config *cfg, const mdcom_layout *lay,
                               const mdcom_chan_layout *chans)
{
    mdcom_wire_hdr *h = (mdcom_wire_hdr *)base;
    mdcom_wire_domain *d = (mdcom_wire_domain *)((uint8_t *)base + lay->dom_off);
    mdcom_wire_dirent *de = (mdcom_wire_dirent *)((uint8_t *)base + lay->dir_off);
    uint32_t w[MDCOM_HDR_WORDS], i;

    /* the header's layout words; generation and state are the attach
     * protocol's (atomic, written by the formatter alone) */
    mdcom_layout_hdr_words(cfg, lay, w);
    for (i = 0; i < MDCOM_HDR_WORDS; i++)
        if (i != MDCOM_HW(generation) && i != MDCOM_HW(state))
            ((uint32_t *)base)[i] = w[i];
    memset(h->reserved, 0, sizeof(h->reserved));
    for (i = 0; i < cfg->n_domains; i++) {
        memset(&d[i], 0, sizeof(d[i]));
        put_name(d[i].name, cfg->domains[i].name, MDCOM_DOMAIN_NAME_MAX);
        d[i].id = cfg->domains[i].id;
        d[i].role = cfg->domains[i].role;
    }
    for (i = 0; i < cfg->n_channels; i++) {
        put_name(de[i].name, cfg->channels[i].name, MDCOM_NAME_MAX);
        mdcom_layout_dirent_words(&chans[i], w);
        memcpy(&de[i].type, w, MDCOM_DIRENT_WORDS * sizeof(w[0]));
    }
}

/* The messages a re-format in place discards from FIFO channel cl: its
 * QUEUED blocks (sent, not dequeued; a HELD one was delivered, an ALLOC one
 * was never sent and its sender learns so). The words are the previous
 * generation's, untrusted: a forged one only moves the count, at most
 * block_count. relaxed: nobody writes them now (state FORMATTING). */
static uint32_t count_queued(void *base, const mdcom_chan_layout *cl)
{
    mdcom_aword *bs = (mdcom_aword *)((uint8_t *)base + cl->off + cl->bstate_off);
    uint32_t i, n = 0;
    for (i = 0; i < cl->block_count; i++)
        n += MDCOM_BLK_STATE(mdcom_load(MDCOM_CUT_SINB ? sinb_word((uint8_t *)base + cl->off, cl, i)
                                                       : bs_word(bs, i),
                                        memory_order_relaxed)) == MDCOM_BLK_QUEUED;
    return n;
}

void mdcom_layout_format(void *base, const mdcom_config *cfg, const mdcom_layout *lay,
                         const mdcom_chan_layout *chans, uint32_t generation, int same)
{
    uint32_t i;
    mdcom_layout_write_tables(base, cfg, lay, chans);
    /* relaxed: published by the formatter's release store of READY */
    mdcom_store(&((mdcom_wire_hdr *)base)->generation, generation, memory_order_relaxed);
    memset((uint8_t *)base + lay->proc_off, 0, MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc));
    for (i = 0; i < cfg->n_channels; i++) {
        uint32_t n = same && chans[i].type == MDCOM_CHAN_FIFO ? count_queued(base, &chans[i]) : 0;
        mdcom_layout_format_channel(base, &chans[i]);
        if (n) { /* relaxed: published by READY's release store, as the formatting */
            mdcom_wire_fifo_ctl *c = (mdcom_wire_fifo_ctl *)((uint8_t *)base + chans[i].off);
            mdcom_store(&c->stats.discarded, n, memory_order_relaxed);
        }
    }
}
