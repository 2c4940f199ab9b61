/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fifo_internal.h - what the FIFO message path (fifo.c) and the FIFO repairs
 * (fifo_repair.c: a dead process' operation in flight, the master domain's
 * audit) share: the queue slots' sequence values and the block helpers.
 */
#ifndef MDCOM_FIFO_INTERNAL_H
#define MDCOM_FIFO_INTERNAL_H

#include "bench_cut.h" /* all 0 outside a benchmark-only build */
#include "internal.h"

/* Slot sequence values. Only producers write slots: the entry for position p
 * is published with seq = 2p + 1 (odd; formatting writes 0, which no
 * position matches). A consumer claims position p by CAS on deq_pos *after*
 * reading the slot, so it never writes the slot; a producer reuses the slot
 * of position p for p + qcap only once deq_pos has passed p. The slot lines
 * thus move one way (producer -> consumer) and the consumer's progress is
 * read by producers only when their private copy says the ring is full. */
#define SEQ_FULL(p) ((uint32_t)(((p) << 1) | 1u))
/* A skipped position p (a hole nobody will publish: a dead producer's, or
 * one the audit proved unclaimed): even, never 0 for a live position (0 is
 * the formatted slot, which position 0x7fffffff never sees again). Written
 * by CAS from the unpublished value that was judged, in the seq word alone,
 * so a producer that publishes first wins and its entry is never touched. */
#define SEQ_SKIP(p) ((uint32_t)((p) << 1) + 2u)

static inline int valid_fifo(const struct mdcom_fifoch *ch)
{
    return ch && ch->tag == MDCOM_TAG_FIFO;
}

/* out of line: an error path's, one copy per file */
static __attribute__((noinline, unused)) void count_error(struct mdcom_fifoch *ch)
{
    mdcom_fetch_add(&ch->ctl->stats.errors, 1, memory_order_relaxed);
}

static inline uint8_t *block_ptr(struct mdcom_fifoch *ch, uint32_t id)
{
    return ch->blocks + (size_t)id * ch->stride;
}

/* Slot i of the queue slots q (one struct each; an INLINE cut build's are
 * a PAD unit apart, bench_cut.h) */
#define QSLOT(q, i) (&(q)[(size_t)(i)*MDCOM_CUT_QSTEP])

/* Block id's state word: in the pool's state array; in a SINB cut build
 * (bench_cut.h) in the block's own stride, just after its data; in a SPAD
 * one alone in its PAD unit of the state array. */
static inline mdcom_aword *blk_word(struct mdcom_fifoch *ch, uint32_t id)
{
    if (MDCOM_CUT_SINB)
        return (mdcom_aword *)(block_ptr(ch, id) + MDCOM_CUT_SINB_OFF(ch->block_size));
    if (MDCOM_CUT_SPAD)
        return (mdcom_aword *)((uint8_t *)ch->bstate + (size_t)id * MDCOM_CUT_BSTATE_STEP);
    return &ch->bstate[id];
}

/* Release block id held (ALLOC or HELD) by who (MDCOM_BLK_WHO) back to the
 * pool: 0, or -EALREADY when who does not hold it. A plain release store
 * (the block is the caller's), by CAS from the word checked when the caller
 * has a heartbeat promise (the others may take it for dead meanwhile). */
int mdcom_block_release(struct mdcom_fifoch *ch, uint32_t id, uint32_t who);
/* The same by CAS, for a block the caller may no longer own (a reaper, or a
 * process taken for dead): held by an owner whose who & mask equals who &
 * mask (MDCOM_BLK_WHO_ALL: that attachment; MDCOM_BLK_WHO_SLOT: any
 * incarnation of its process slot). A racing owner's change wins. 1 released. */
#define MDCOM_BLK_WHO_ALL 0xfffu
#define MDCOM_BLK_WHO_SLOT 0xff0u
int mdcom_block_reclaim(struct mdcom_fifoch *ch, uint32_t id, uint32_t who, uint32_t mask);

/* n blocks of ch given back by a repair, lost of them a message the
 * receiver never got: counted in the channel's stats; wake: senders waiting
 * for a block are woken. */
void mdcom_fifo_reclaimed(struct mdcom_fifoch *ch, uint32_t n, uint32_t lost, int wake);

#endif /* MDCOM_FIFO_INTERNAL_H */
