/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fifo.c - FIFO channels: a pool of blocks (one state word per block) and a
 * FIFO of block IDs (a bounded MPMC ring); see the diagram in layout.h.
 *
 * Block life cycle (state word = state | owner << 8 | gen << 16, owner =
 * process slot + 1, gen counted up by each alloc: see layout.h)
 *
 *     FREE --alloc--> ALLOC --enqueue--> QUEUED --dequeue--> HELD
 *       ^               |                                      |
 *       +-----free------+--------------------free--------------+
 *
 * Every transition checks the expected state, so a duplicated, forged or
 * double-freed block ID from a peer is caught (-EPROTO / -EALREADY). Alloc,
 * where processes compete for free blocks, is a CAS, and so is QUEUED ->
 * HELD at dequeue (a reaper may free a queued block that no slot holds; see
 * mdcom_fifo_reap_op); the other transitions are made by the block's single
 * owner and are plain atomic stores, so no locked instruction drains the
 * store buffer after the payload was written.
 * Ordering of block *data*: sender -> receiver by the queue (release store of
 * a slot's seq, acquire load of it); receiver -> next sender by the state
 * word (free is a release store, alloc an acquire CAS).
 *
 * Untrusted region: every position is masked before indexing, every ID and
 * length read from a slot is copied once into a local and range-checked, and
 * every retry loop is bounded (MDCOM_RETRY_MAX -> -EPROTO).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------- */
/* the queue: bounded MPMC ring (free-running u32 positions, a seq per slot) */
/* ---------------------------------------------------------------- */

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

/* Push (id, len); me: our process entry, whose op record (op, op_id,
 * the caller set) names the block; each attempt records its position in op_pos.
 * 0, -EAGAIN (full) or -EPROTO (indices never settle). */
static inline int ring_push(mdcom_aword *posw, mdcom_aword *deqw, _Atomic uint32_t *deq_cache,
                            mdcom_wire_qslot *slots, uint32_t mask, uint32_t id, uint32_t len,
                            uint32_t state, mdcom_wire_proc *me)
{
    /* relaxed: the position is only a hint; the CAS below decides */
    uint32_t pos = atomic_load_explicit(posw, memory_order_relaxed);
    uint32_t d = atomic_load_explicit(deq_cache, memory_order_relaxed);
    uint32_t tries;
    for (tries = 0; tries < MDCOM_RETRY_MAX; tries++) {
        if (pos - d > mask) {
            /* full by our private copy: read the consumers' progress.
             * acquire: their reads of the slot we reuse are done (their CAS
             * on deq_pos is a release) */
            d = atomic_load_explicit(deqw, memory_order_acquire);
            atomic_store_explicit(deq_cache, d, memory_order_relaxed);
            if (pos - d > mask) {
                uint32_t p2 = atomic_load_explicit(posw, memory_order_relaxed);
                if (p2 == pos)
                    return pos - d == mask + 1 ? -EAGAIN : -EPROTO; /* > capacity: corrupt */
                pos = p2; /* stale: other producers moved on */
                continue;
            }
        }
        /* relaxed: as the op record above; the position this attempt claims */
        atomic_store_explicit(&me->op_pos, pos, memory_order_relaxed);
        /* relaxed: claiming the position; publication is the seq store */
        if (atomic_compare_exchange_weak_explicit(posw, &pos, pos + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            mdcom_wire_qslot *s = &slots[pos & mask]; /* masked: always in bounds */
            atomic_store_explicit(&s->id, id, memory_order_relaxed);
            atomic_store_explicit(&s->len, len, memory_order_relaxed);
            atomic_store_explicit(&s->state, state, memory_order_relaxed);
            /* release: id/len/state and the block's data are visible before the slot reads full */
            atomic_store_explicit(&s->seq, SEQ_FULL(pos), memory_order_release);
            return 0;
        }
    }
    return -EPROTO;
}

/* Pop into *id, *len (a MDCOM_QID_SKIP entry too) and *state (the block's
 * state word as the producer published it); me/op as in ring_push. The first
 * line of the block (blocks, stride, nblocks) is prefetched before the claim.
 * 0, -EAGAIN (empty) or -EPROTO. */
static inline int ring_pop(mdcom_aword *posw, mdcom_wire_qslot *slots, uint32_t mask,
                           const uint8_t *blocks, uint32_t stride, uint32_t nblocks,
                           uint32_t *id, uint32_t *len, uint32_t *state, mdcom_wire_proc *me,
                           uint32_t op)
{
    uint32_t pos = atomic_load_explicit(posw, memory_order_relaxed); /* hint, as above */
    uint32_t tries;
    for (tries = 0; tries < MDCOM_RETRY_MAX; tries++) {
        mdcom_wire_qslot *s = &slots[pos & mask];
        /* acquire: pairs with the producer's release; id/len/data are complete */
        uint32_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (seq == SEQ_FULL(pos)) {
            /* read before claiming: once deq_pos passes pos a producer may
             * overwrite the slot; a failed CAS discards what we read */
            uint32_t v = atomic_load_explicit(&s->id, memory_order_relaxed);
            uint32_t l = atomic_load_explicit(&s->len, memory_order_relaxed);
            /* the producer's QUEUED word (with the generation of this use of
             * v), ordered by the seq acquire like id and len */
            uint32_t w = atomic_load_explicit(&s->state, memory_order_relaxed);
            /* the data's first line starts moving now, not after the claim
             * (a locked CAS waits for earlier loads, not for prefetches) */
            if (v < nblocks)
                MDCOM_PREFETCH(blocks + (size_t)v * stride);
            /* the block we are taking, for a reaper (ours or, if we die now,
             * to be freed): made visible by the release CAS below */
            atomic_store_explicit(&me->op_id, v, memory_order_relaxed);
            atomic_store_explicit(&me->op_state, w, memory_order_relaxed);
            atomic_store_explicit(&me->op, op, memory_order_relaxed);
            /* release: our reads of the slot (and our op record) are done
             * before a producer or reaper that sees the new deq_pos acts */
            if (atomic_compare_exchange_weak_explicit(posw, &pos, pos + 1, memory_order_release,
                                                      memory_order_relaxed)) {
                *id = v;
                *len = l;
                *state = w;
                return 0;
            }
        } else if (seq == SEQ_SKIP(pos)) {
            /* a hole a reaper or the audit closed: claim it and say so.
             * release: as above (nothing was read but the seq) */
            if (atomic_compare_exchange_weak_explicit(posw, &pos, pos + 1, memory_order_release,
                                                      memory_order_relaxed)) {
                *id = MDCOM_QID_SKIP;
                return 0;
            }
        } else {
            /* an older lap's entry (or nothing yet): empty unless our
             * position is stale */
            uint32_t p2 = atomic_load_explicit(posw, memory_order_relaxed);
            if (p2 == pos)
                return -EAGAIN;
            pos = p2;
        }
    }
    return -EPROTO;
}

/* 1 when the consumer position holds an entry (full) / the ring has room. */
static inline int ring_ready(mdcom_wire_fifo_ctl *ctl, mdcom_wire_qslot *slots, uint32_t mask,
                             int full)
{
    uint32_t d;
    if (full) {
        d = atomic_load_explicit(&ctl->deq.w[0], memory_order_relaxed); /* hint */
        /* acquire: a positive answer must let the caller see the entry */
        uint32_t seq = atomic_load_explicit(&slots[d & mask].seq, memory_order_acquire);
        return seq == SEQ_FULL(d) || seq == SEQ_SKIP(d); /* a skip: dequeue goes past it */
    }
    /* acquire: as in ring_push */
    d = atomic_load_explicit(&ctl->deq.w[0], memory_order_acquire);
    return atomic_load_explicit(&ctl->enq.w[0], memory_order_relaxed) - d <= mask;
}

/* ---------------------------------------------------------------- */
/* helpers                                                            */
/* ---------------------------------------------------------------- */

static inline int valid_fifo(const struct mdcom_fifoch *ch)
{
    return ch && ch->tag == MDCOM_TAG_FIFO;
}

static void count_error(struct mdcom_fifoch *ch)
{
    atomic_fetch_add_explicit(&ch->ctl->stats.errors, 1, memory_order_relaxed);
}

static inline uint8_t *block_ptr(struct mdcom_fifoch *ch, uint32_t id)
{
    return ch->blocks + (size_t)id * ch->stride;
}

/* Receive-side prediction. Senders take blocks round-robin (alloc_hint) and
 * receivers free them in the order received, so the next message of a
 * channel usually sits in the block after the last one dequeued. A receiver
 * that polls prefetches that block's first line and its state word along
 * with the slot: when the slot turns full, the two lines it points to are
 * already on their way instead of being fetched one after the other (on the
 * x86 test host, medians of 8 interleaved runs, 64 B polled round trips:
 * zero-copy 246 -> 230 ns, copy 325 -> 270 ns). Only a hint:
 * a wrong guess costs a prefetch, never a wrong read, since everything is
 * still read from the slot and validated after. */
static inline void rx_prefetch(struct mdcom_fifoch *ch)
{
    /* relaxed: a private guess, no ordering */
    uint32_t id = atomic_load_explicit(&ch->rx_next, memory_order_relaxed);
    if (id < ch->block_count) {
        MDCOM_PREFETCH(block_ptr(ch, id));
        MDCOM_PREFETCH(&ch->bstate[id]);
    }
}

/* Send-side prefetch for writing. A polling receiver keeps reading the slot
 * the next message goes to, so that line sits shared in its cache; the
 * sender's slot stores then wait for an invalidation first, and the state
 * word and block (last written or read by the receiver) are fetched only
 * when alloc, the copy and enqueue reach them, one after the other.
 * Asking for all three lines for writing before the first use overlaps the
 * transfers (x86 test host, 64 B polled round trips, medians of 8
 * interleaved runs: zero-copy 211-226 -> 180-190 ns, copy 260-270 -> 226-230
 * ns; the slot line brings most of it, the state word and block line the
 * rest for copy). Hints only: a guess that turns out wrong (the hint block
 * is not free, another producer takes the position) costs a prefetch. */
static inline void tx_prefetch_slot(struct mdcom_fifoch *ch)
{
    /* relaxed: a hint; masked, so always in bounds */
    uint32_t pos = atomic_load_explicit(&ch->ctl->enq.w[0], memory_order_relaxed);
    mdcom_prefetchw(ch->pfw, &ch->q[pos & ch->qmask]);
}

static inline void tx_prefetch(struct mdcom_fifoch *ch)
{
    /* relaxed: a private hint (the block alloc will try first) */
    uint32_t id = atomic_load_explicit(&ch->alloc_hint, memory_order_relaxed);
    if (id < ch->block_count) {
        mdcom_prefetchw(ch->pfw, &ch->bstate[id]);
        mdcom_prefetchw(ch->pfw, block_ptr(ch, id));
    }
    tx_prefetch_slot(ch);
}

void mdcom_fifo_bind(struct mdcom *m, uint32_t index, uint32_t pfw)
{
    struct mdcom_fifoch *f = &m->ch[index].f;
    const mdcom_chan_layout *cl = &m->cl[index];
    uint8_t *a = m->base + cl->off;
    memset(f, 0, sizeof(*f));
    f->index = index;
    f->m = m;
    f->ctl = (mdcom_wire_fifo_ctl *)a;
    f->q = (mdcom_wire_qslot *)(a + cl->qslots_off);
    f->bstate = (mdcom_aword *)(a + cl->bstate_off);
    f->blocks = a + cl->blocks_off;
    f->qmask = cl->qcap - 1;
    f->block_size = cl->block_size;
    f->block_count = cl->block_count;
    f->stride = cl->stride;
    f->can_tx = (cl->senders >> m->domain) & 1u;
    f->can_rx = (cl->receivers >> m->domain) & 1u;
    f->pfw = pfw;
    atomic_init(&f->spin_max, m->spin_ns);
    atomic_init(&f->spin_cur, m->spin_ns == MDCOM_NO_SPIN ? 0 : m->spin_ns);
    f->tag = MDCOM_TAG_FIFO;
}

/* Release (id) held by owner back to the pool. */
static int block_release(struct mdcom_fifoch *ch, uint32_t id, uint32_t owner)
{
    mdcom_aword *bs = &ch->bstate[id];
    uint32_t s = atomic_load_explicit(bs, memory_order_relaxed);
    uint32_t st = MDCOM_BLK_STATE(s);
    if (MDCOM_BLK_OWNER(s) != owner || (st != MDCOM_BLK_ALLOC && st != MDCOM_BLK_HELD))
        return -EALREADY;
    /* A plain store, not a CAS: the block is ours, and a locked instruction
     * here would stall on the store buffer in every message's path. A peer
     * racing us on this word can only confuse its own channel.
     * release: our use of the block's data is done before the next owner's alloc */
    atomic_store_explicit(bs, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(s)),
                          memory_order_release);
    return 0;
}

/* Release (id) held by owner by CAS (a reaper, or a process giving back a
 * block it may no longer own): a racing owner's change wins. 1 released. */
static int block_reclaim(struct mdcom_fifoch *ch, uint32_t id, uint32_t owner)
{
    mdcom_aword *bs = &ch->bstate[id];
    uint32_t s = atomic_load_explicit(bs, memory_order_relaxed);
    uint32_t st = MDCOM_BLK_STATE(s);
    if (MDCOM_BLK_OWNER(s) != owner || (st != MDCOM_BLK_ALLOC && st != MDCOM_BLK_HELD))
        return 0;
    /* release: as in block_release */
    return atomic_compare_exchange_strong_explicit(
        bs, &s, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(s)), memory_order_release,
        memory_order_relaxed);
}

/* Number of free blocks (a racy snapshot). */
static uint32_t count_free(struct mdcom_fifoch *ch)
{
    uint32_t id, n = 0;
    for (id = 0; id < ch->block_count; id++)
        n += MDCOM_BLK_SO(atomic_load_explicit(&ch->bstate[id], memory_order_relaxed)) ==
             MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0);
    return n;
}

/* 1 when some block is free, scanning from the alloc hint. */
static int any_free(struct mdcom_fifoch *ch)
{
    uint32_t n = ch->block_count, k;
    uint32_t id = atomic_load_explicit(&ch->alloc_hint, memory_order_relaxed);
    if (id >= n)
        id = 0;
    for (k = 0; k < n; k++) {
        if (MDCOM_BLK_SO(atomic_load_explicit(&ch->bstate[id], memory_order_relaxed)) ==
            MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0))
            return 1;
        if (++id == n)
            id = 0;
    }
    return 0;
}

/* 1 when block id sits in a published slot between deq_pos and enq_pos, or
 * when the positions are absurd (then nothing is freed). */
static int queued_in_ring(struct mdcom_fifoch *ch, uint32_t id)
{
    /* acquire: pairs with consumers' release CAS, so their op records are
     * visible to live_deq_claim once we see them past an entry */
    uint32_t d = atomic_load_explicit(&ch->ctl->deq.w[0], memory_order_acquire);
    uint32_t e = atomic_load_explicit(&ch->ctl->enq.w[0], memory_order_relaxed);
    uint32_t p;
    if (e - d > ch->qmask + 1)
        return 1;
    for (p = d; p != e; p++) {
        mdcom_wire_qslot *s = &ch->q[p & ch->qmask];
        if (atomic_load_explicit(&s->seq, memory_order_acquire) == SEQ_FULL(p) &&
            atomic_load_explicit(&s->id, memory_order_relaxed) == id)
            return 1;
    }
    return 0;
}

/* 1 when a process entry other than skip's (and not free) records queue
 * operation op with op_pos (by_pos) or op_id equal to x and, when w != 0,
 * op_state equal to w: the records of processes that may still be running,
 * whose operations in flight are not to be repaired. */
static int live_record(struct mdcom *m, uint32_t op, uint32_t by_pos, uint32_t x, uint32_t w,
                       uint32_t skip)
{
    uint32_t i;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        if (i + 1 == skip ||
            atomic_load_explicit(&p->owner, memory_order_relaxed) == MDCOM_PROC_FREE)
            continue;
        if (atomic_load_explicit(&p->op, memory_order_relaxed) == op &&
            atomic_load_explicit(by_pos ? &p->op_pos : &p->op_id, memory_order_relaxed) == x &&
            (!w || atomic_load_explicit(&p->op_state, memory_order_relaxed) == w))
            return 1;
    }
    return 0;
}

/* A live consumer claimed block id (in the use whose word is w) to hold it. */
#define live_deq_claim(m, chan, id, w, skip)                                               \
    live_record((m), MDCOM_OP_MAKE(MDCOM_OP_DEQ, (chan)), 0, (id), (w), (skip))
/* A live producer records position pos: it claimed it (and will publish it),
 * or is about to try. A dead producer's record may name a position it lost
 * to such a one (it died between a failed claim and its next attempt). */
#define live_enq_claim(m, chan, pos, skip)                                                 \
    live_record((m), MDCOM_OP_MAKE(MDCOM_OP_ENQ, (chan)), 1, (pos), 0, (skip))
/* A live producer's record names block id: it marked it QUEUED and may not
 * have published it yet (an enqueue record names the block, not its word). */
#define live_enq_block(m, chan, id)                                                        \
    live_record((m), MDCOM_OP_MAKE(MDCOM_OP_ENQ, (chan)), 0, (id), 0, 0)

/* Close the hole at position pos, whose seq read seq (unpublished), unless
 * a live producer records the position (its claim). 1 closed. */
static int fill_skip(struct mdcom_fifoch *ch, uint32_t pos, uint32_t seq, uint32_t skip_owner)
{
    mdcom_wire_qslot *s = &ch->q[pos & ch->qmask];
    if (seq == SEQ_FULL(pos) || seq == SEQ_SKIP(pos))
        return 0; /* published or closed */
    /* Consumers still before pos (read after seq: positions only grow), so
     * when seq was read no producer could have claimed a later lap of this
     * slot (that needs the consumers past pos): seq is what pos left
     * unpublished, or garbage, never a later lap's entry. The caller's view
     * of the positions may be old. acquire: as in queued_in_ring */
    if (pos - atomic_load_explicit(&ch->ctl->deq.w[0], memory_order_acquire) >= 0x80000000u)
        return 0;
    if (live_enq_claim(ch->m, ch->index, pos, skip_owner))
        return 0;
    /* by CAS from the value judged: a producer that publishes meanwhile
     * wins. relaxed: a skip carries no data to publish */
    return atomic_compare_exchange_strong_explicit(&s->seq, &seq, SEQ_SKIP(pos),
                                                   memory_order_relaxed, memory_order_relaxed);
}

/* Free block id if its state word is still w, a QUEUED one, but the block
 * is in no slot and claimed by no live consumer: nobody can ever dequeue it.
 * w carries the generation, so a later message in the same block (its
 * producer between marking it QUEUED and publishing its slot) is not taken
 * for the orphan. */
static int free_orphan(struct mdcom_fifoch *ch, uint32_t id, uint32_t w, uint32_t dead)
{
    if (MDCOM_BLK_STATE(w) != MDCOM_BLK_QUEUED ||
        atomic_load_explicit(&ch->bstate[id], memory_order_relaxed) != w)
        return 0;
    if (queued_in_ring(ch, id) || live_deq_claim(ch->m, ch->index, id, w, dead))
        return 0;
    /* release: as in block_release */
    return atomic_compare_exchange_strong_explicit(
        &ch->bstate[id], &w, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(w)),
        memory_order_release, memory_order_relaxed);
}

void mdcom_fifo_reap_op(struct mdcom *m, uint32_t owner, uint32_t op, uint32_t pos, uint32_t id,
                        uint32_t state)
{
    uint32_t chan = (op & 0xffffu) - 1u, lost = 0, n = 0;
    struct mdcom_fifoch *ch;
    if (op && chan < m->cfg->n_channels && m->ch[chan].tag == MDCOM_TAG_FIFO) {
        ch = &m->ch[chan].f;
        if (op >> 16 == MDCOM_OP_ENQ) {
            /* a claimed position it never published: publish "skip" there so
             * that consumers go past it, unless a live producer claims it.
             * acquire: as in queued_in_ring */
            uint32_t d = atomic_load_explicit(&ch->ctl->deq.w[0], memory_order_acquire);
            uint32_t e = atomic_load_explicit(&ch->ctl->enq.w[0], memory_order_relaxed);
            mdcom_wire_qslot *s = &ch->q[pos & ch->qmask];
            if (pos - d < e - d && e - d <= ch->qmask + 1)
                (void)fill_skip(ch, pos, atomic_load_explicit(&s->seq, memory_order_relaxed),
                                owner);
            /* the block it marked QUEUED, if it never made it into a slot:
             * QUEUED by it (its owner byte; the record names the block, not
             * its word, and a later use of the block by it would have
             * rewritten the record) and in no queue entry */
            if (id < ch->block_count) {
                uint32_t w = atomic_load_explicit(&ch->bstate[id], memory_order_relaxed);
                if (MDCOM_BLK_OWNER(w) == owner && free_orphan(ch, id, w, owner))
                    n++;
            }
        } else if (op >> 16 == MDCOM_OP_DEQ && id < ch->block_count) {
            /* a block it took off the queue but did not get to hold (in
             * the use it recorded: state has the generation) */
            if (free_orphan(ch, id, state, owner)) {
                lost++;
                n++;
            }
        }
        if (n) {
            atomic_fetch_add_explicit(&ch->ctl->stats.lost, lost, memory_order_relaxed);
            atomic_fetch_add_explicit(&ch->ctl->stats.reclaimed, n, memory_order_relaxed);
        }
    }
}

void mdcom_fifo_release_owner(struct mdcom *m, uint32_t owner, int dead)
{
    uint32_t i, id;
    for (i = 0; i < m->cfg->n_channels; i++) {
        struct mdcom_fifoch *ch = &m->ch[i].f;
        uint32_t lost = 0, n = 0;
        if (ch->tag != MDCOM_TAG_FIFO)
            continue;
        for (id = 0; id < ch->block_count; id++) {
            /* relaxed: only to tell a dequeued message from an unsent block */
            uint32_t s = atomic_load_explicit(&ch->bstate[id], memory_order_relaxed);
            /* a dead owner's blocks by CAS: its late stores (a process
             * reaped while paused) and ours must not both win */
            if (dead ? block_reclaim(ch, id, owner) : block_release(ch, id, owner) == 0) {
                n++;
                lost += MDCOM_BLK_STATE(s) == MDCOM_BLK_HELD;
            }
        }
        if (dead && n) {
            /* a dead receiver's dequeued messages are gone: senders see it in
             * mdcom_sense_fifoch (QUEUED blocks stay queued and are delivered) */
            atomic_fetch_add_explicit(&ch->ctl->stats.lost, lost, memory_order_relaxed);
            atomic_fetch_add_explicit(&ch->ctl->stats.reclaimed, n, memory_order_relaxed);
            /* blocks are free again: wake senders waiting for one */
            atomic_fetch_add_explicit(&ch->ctl->event.w[0], 1, memory_order_relaxed);
            mdcom_ring_word(m, &ch->ctl->event.w[0], &ch->ctl->event.w[1], i);
        }
    }
}

/* ---------------------------------------------------------------- */
/* audit (self-healing after forged or corrupted words)               */
/* ---------------------------------------------------------------- */

/* The channel empty again (all blocks free, queue empty, counters zero),
 * its sleepers' count kept and their event word changed so they wake. */
static void reinit_channel(struct mdcom_fifoch *ch)
{
    struct mdcom *m = ch->m;
    uint32_t ev = atomic_load_explicit(&ch->ctl->event.w[0], memory_order_relaxed);
    uint32_t wt = atomic_load_explicit(&ch->ctl->event.w[1], memory_order_relaxed);
    mdcom_layout_format_channel(m->base, &m->cl[ch->index]);
    atomic_store_explicit(&ch->ctl->event.w[1], wt, memory_order_relaxed);
    atomic_store_explicit(&ch->ctl->event.w[0], ev + 1, memory_order_relaxed);
    /* fence: the re-initialised channel is visible before sleepers wake */
    atomic_thread_fence(memory_order_seq_cst);
    m->plat->doorbell.ring(m->plat->doorbell.ctx, &ch->ctl->event.w[0], ch->index);
}

#define AUDIT_QUEUED 8u /* QUEUED blocks examined per audit (a queue pass each) */

/* 1 when block owner byte o names no live process entry. */
static int owner_gone(struct mdcom *m, uint32_t o)
{
    uint32_t w;
    if (o == 0 || o > MDCOM_MAX_PROCS)
        return 1;
    w = atomic_load_explicit(&m->procs[o - 1].owner, memory_order_relaxed);
    return w == MDCOM_PROC_FREE ||
           (!MDCOM_PROC_IS_CLAIMING(w) && w >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS);
}

uint32_t mdcom_fifo_audit(struct mdcom *m, uint32_t index)
{
    struct mdcom_fifoch *ch = &m->ch[index].f;
    uint32_t d, e, p, k, id, checks, fixed = 0, lost = 0;
    uint32_t cand[AUDIT_QUEUED], cand_w[AUDIT_QUEUED], ncand = 0, last = 0;
    if (ch->tag != MDCOM_TAG_FIFO)
        return 0;
    /* A snapshot of both positions: the consumers' read again after the
     * producers', and kept only if it did not move (positions only grow), so
     * that e - d is what the queue held at one instant. Two reads at two
     * instants can differ by more than the capacity under live traffic, and
     * must not be taken for corruption. acquire: as in queued_in_ring */
    for (k = 0;; k++) {
        d = atomic_load_explicit(&ch->ctl->deq.w[0], memory_order_acquire);
        e = atomic_load_explicit(&ch->ctl->enq.w[0], memory_order_acquire);
        if (atomic_load_explicit(&ch->ctl->deq.w[0], memory_order_relaxed) == d)
            break;
        if (k == 16)
            return 0; /* busy: nothing to repair in a queue that moves */
    }
    if (e - d > ch->qmask + 1) {
        /* positions no queue can hold: nothing in it can be trusted. The
         * channel starts again empty (what was queued is lost, counted as
         * an error), and its sleepers are woken. */
        reinit_channel(ch);
        count_error(ch);
        ch->audit_e1 = ch->audit_e2 = 0;
        ch->audit_ncand = 0;
        return 1;
    }
    /* Holes: positions producers have passed but nobody published. Every
     * unpublished position that was claimed two audits ago already (below
     * that audit's producer index), and that no live producer records (a
     * live claimer's record names its position until it has published: see
     * ring_push), gets a skip entry. (Two periods, not one: records are per
     * attachment, and a thread whose record a sibling overwrote is covered
     * only by time; reliability.md.) */
    if (ch->audit_e2 - d <= e - d) {
        for (p = d; p != ch->audit_e2; p++) {
            mdcom_wire_qslot *s = &ch->q[p & ch->qmask];
            if (!fill_skip(ch, p, atomic_load_explicit(&s->seq, memory_order_acquire), 0))
                continue;
            count_error(ch);
            fixed++;
        }
    }
    ch->audit_e2 = ch->audit_e1;
    ch->audit_e1 = e;
    /* Every state word. A QUEUED one is an orphan if no queue entry and no
     * live record holds it; that costs a pass over the queue, so at most
     * AUDIT_QUEUED of them are examined per audit, from a cursor that goes
     * round the pool (bounded: O(blocks + AUDIT_QUEUED x depth)). */
    for (k = 0, id = ch->audit_cursor, checks = 0; k < ch->block_count; k++) {
        mdcom_aword *bs;
        uint32_t w, st;
        int orphan;
        if (++id >= ch->block_count)
            id = 0;
        bs = &ch->bstate[id];
        w = atomic_load_explicit(bs, memory_order_relaxed);
        st = MDCOM_BLK_STATE(w);
        if (st == MDCOM_BLK_FREE) {
            orphan = MDCOM_BLK_OWNER(w) != 0; /* FREE names nobody */
        } else if (st == MDCOM_BLK_ALLOC || st == MDCOM_BLK_HELD) {
            orphan = owner_gone(m, MDCOM_BLK_OWNER(w));
        } else if (st == MDCOM_BLK_QUEUED) {
            uint32_t c, seen = 0;
            if (checks == AUDIT_QUEUED)
                continue;
            if (++checks == AUDIT_QUEUED)
                last = id;
            orphan = !queued_in_ring(ch, id) && !live_deq_claim(m, index, id, w, 0) &&
                     !live_enq_block(m, index, id);
            /* freed only if the previous audit found it so too (same word) */
            for (c = 0; c < ch->audit_ncand; c++)
                seen |= ch->audit_cand[c] == id && ch->audit_cand_w[c] == w;
            if (orphan && !seen && ncand < AUDIT_QUEUED) {
                cand[ncand] = id;
                cand_w[ncand++] = w;
            }
            orphan &= seen;
        } else {
            orphan = 1; /* no such state */
        }
        /* by CAS on the word judged: a change since (a live owner) wins.
         * release: as in block_release */
        if (orphan && atomic_compare_exchange_strong_explicit(
                          bs, &w, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(w)),
                          memory_order_release, memory_order_relaxed)) {
            fixed++;
            lost += st == MDCOM_BLK_QUEUED || st == MDCOM_BLK_HELD;
        }
    }
    for (k = 0; k < ncand; k++) {
        ch->audit_cand[k] = cand[k];
        ch->audit_cand_w[k] = cand_w[k];
    }
    ch->audit_ncand = ncand;
    /* the next audit looks at the same QUEUED blocks again while some are
     * suspects, else at the next ones */
    if (!ncand && checks == AUDIT_QUEUED)
        ch->audit_cursor = last;
    if (fixed) {
        atomic_fetch_add_explicit(&ch->ctl->stats.reclaimed, fixed, memory_order_relaxed);
        if (lost)
            atomic_fetch_add_explicit(&ch->ctl->stats.lost, lost, memory_order_relaxed);
        /* blocks are free again: wake senders waiting for one */
        atomic_fetch_add_explicit(&ch->ctl->event.w[0], 1, memory_order_relaxed);
        mdcom_ring_word(m, &ch->ctl->event.w[0], &ch->ctl->event.w[1], index);
    }
    return fixed;
}

/* ---------------------------------------------------------------- */
/* API                                                                */
/* ---------------------------------------------------------------- */

int mdcom_fifoch_at(mdcom_t *m, uint32_t index, mdcom_fifoch_t **out)
{
    return mdcom_chan_open(m, 0, index, MDCOM_TAG_FIFO, (void **)out);
}

int mdcom_fifoch_open(mdcom_t *m, const char *name, mdcom_fifoch_t **out)
{
    if (!name)
        return -EINVAL;
    return mdcom_chan_open(m, name, 0, MDCOM_TAG_FIFO, (void **)out);
}

int mdcom_sense_fifoch(mdcom_fifoch_t *ch, mdcom_fifo_state *st)
{
    uint32_t e, d;
    if (!valid_fifo(ch) || !st)
        return -EINVAL;
    /* blocks of dead processes are counted free, not held; the master domain
     * repairs what the words prove wrong first */
    (void)mdcom_sense_process(ch->m, ch->m->domain);
    e = atomic_load_explicit(&ch->ctl->enq.w[0], memory_order_relaxed);
    d = atomic_load_explicit(&ch->ctl->deq.w[0], memory_order_relaxed);
    st->block_size = ch->block_size;
    st->block_count = ch->block_count;
    st->queue_depth = ch->qmask + 1;
    st->queued = e - d;
    st->free_blocks = count_free(ch);
    st->filtered = atomic_load_explicit(&ch->ctl->stats.filtered, memory_order_relaxed);
    st->errors = atomic_load_explicit(&ch->ctl->stats.errors, memory_order_relaxed);
    st->lost = atomic_load_explicit(&ch->ctl->stats.lost, memory_order_relaxed);
    st->reclaimed = atomic_load_explicit(&ch->ctl->stats.reclaimed, memory_order_relaxed);
    /* a snapshot of racing counters may be off by the in-flight ops; beyond
     * capacity (or "negative") it is corrupted */
    if (st->queued > st->queue_depth) {
        st->queued = st->queue_depth;
        return -EPROTO;
    }
    return 0;
}

int mdcom_fifoch_alloc(mdcom_fifoch_t *ch, uint32_t *id)
{
    const uint32_t free_word = MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0);
    uint32_t n, k, v;
    int r;
    if (!valid_fifo(ch) || !id)
        return -EINVAL;
    if (!ch->can_tx)
        return -EPERM;
    r = mdcom_region_ok(ch->m); /* no new message into a dead region */
    if (r)
        return r;
    n = ch->block_count;
    /* relaxed: a private hint; blocks are usually freed in the order sent */
    v = atomic_load_explicit(&ch->alloc_hint, memory_order_relaxed);
    if (v >= n)
        v = 0;
    for (k = 0; k < 2 * n; k++) {
        if (k == n && mdcom_reap(ch->m) <= 0)
            break; /* none free: unless a dead process held some, the pool is dry */
        /* relaxed: a look before the CAS, which decides */
        uint32_t s = atomic_load_explicit(&ch->bstate[v], memory_order_relaxed);
        /* acquire: the previous owner's use of the data (its release in
         * free) happens before we hand the block out. The new use gets the
         * next generation. */
        if (MDCOM_BLK_SO(s) == free_word &&
            atomic_compare_exchange_strong_explicit(
                &ch->bstate[v], &s,
                MDCOM_BLK_MAKEG(MDCOM_BLK_ALLOC, ch->m->owner, MDCOM_BLK_GEN(s) + 1u),
                memory_order_acquire, memory_order_relaxed)) {
            atomic_store_explicit(&ch->alloc_hint, v + 1 == n ? 0 : v + 1, memory_order_relaxed);
            if (ch->m->hb_ms && (r = mdcom_self(ch->m)) <= 0) {
                /* taken for dead (a missed heartbeat) while we ran: the block
                 * is not ours to keep; give it back unless a reaper did */
                (void)block_reclaim(ch, v, ch->m->owner);
                return r < 0 ? -ENOTCONN : -ENOBUFS;
            }
            *id = v;
            return 0;
        }
        if (++v == n)
            v = 0;
    }
    return -ENOBUFS;
}

int mdcom_fifoch_free(mdcom_fifoch_t *ch, uint32_t id)
{
    if (!valid_fifo(ch) || id >= ch->block_count)
        return -EINVAL;
    return block_release(ch, id, ch->m->owner);
}

int mdcom_fifoch_get(mdcom_fifoch_t *ch, uint32_t id, void **ptr, uint32_t *size)
{
    if (!valid_fifo(ch) || id >= ch->block_count || !ptr)
        return -EINVAL;
    *ptr = block_ptr(ch, id);
    if (size)
        *size = ch->block_size;
    return 0;
}

static int filter_pass(struct mdcom_fifoch *ch, uint32_t id, uint32_t len)
{
    /* acquire: pairs with mdcom_filter_set's release so fn/arg/n are complete */
    uint32_t type = atomic_load_explicit(&ch->filter_type, memory_order_acquire);
    if (type == MDCOM_FILTER_NONE)
        return 1;
    if (type == MDCOM_FILTER_EVERY_NTH) {
        uint32_t n = atomic_load_explicit(&ch->filter_n, memory_order_relaxed);
        uint32_t c = atomic_fetch_add_explicit(&ch->filter_count, 1, memory_order_relaxed) + 1;
        return n <= 1 || c % n == 0;
    }
    {
        mdcom_filter_fn fn = atomic_load_explicit(&ch->filter_fn, memory_order_relaxed);
        void *arg = atomic_load_explicit(&ch->filter_arg, memory_order_relaxed);
        return !fn || fn(arg, block_ptr(ch, id), len) != 0;
    }
}

int mdcom_fifoch_enqueue(mdcom_fifoch_t *ch, uint32_t id, uint32_t len)
{
    const mdcom_platform *p;
    struct mdcom *m;
    mdcom_wire_proc *me;
    uint32_t s, q, owner;
    int r;
    if (!valid_fifo(ch) || id >= ch->block_count || len > ch->block_size)
        return -EINVAL;
    if (!ch->can_tx)
        return -EPERM;
    m = ch->m; /* private: loaded once, not again after each shared store */
    me = m->me;
    owner = m->owner;
    /* the slot and the state word: both written below (see tx_prefetch) */
    tx_prefetch_slot(ch);
    mdcom_prefetchw(ch->pfw, &ch->bstate[id]);
    s = atomic_load_explicit(&ch->bstate[id], memory_order_relaxed);
    if (MDCOM_BLK_SO(s) != MDCOM_BLK_MAKE(MDCOM_BLK_ALLOC, owner))
        return -EALREADY;
    if (!filter_pass(ch, id, len)) {
        r = block_release(ch, id, owner);
        if (r)
            return r;
        atomic_fetch_add_explicit(&ch->ctl->stats.filtered, 1, memory_order_relaxed);
        return MDCOM_FILTERED;
    }
    q = MDCOM_BLK_MAKEG(MDCOM_BLK_QUEUED, owner, MDCOM_BLK_GEN(s));
    /* The op record names the block before it reads QUEUED: a QUEUED block
     * in no slot exists only inside an enqueue, so a reaper finds every such
     * block of a dead process in its record, without scanning the pool.
     * relaxed: read only by a reaper once we are dead (a dead process'
     * stores are all in memory); our own line: no miss */
    atomic_store_explicit(&me->op_id, id, memory_order_relaxed);
    atomic_store_explicit(&me->op, MDCOM_OP_MAKE(MDCOM_OP_ENQ, ch->index),
                          memory_order_relaxed);
    /* ours (checked above): a store, as in block_release. relaxed: the queue
     * ring's release store publishes the new state with the slot */
    atomic_store_explicit(&ch->bstate[id], q, memory_order_relaxed);
    p = m->plat;
    if (p->cache_clean)
        p->cache_clean(p->ctx, block_ptr(ch, id), len);
    r = ring_push(&ch->ctl->enq.w[0], &ch->ctl->deq.w[0], &ch->deq_cache, ch->q, ch->qmask, id,
                  len, q, me);
    if (r) {
        /* not sent: a retry of the same message must meet the filter as this
         * attempt did, so the every-nth count goes back */
        if (atomic_load_explicit(&ch->filter_type, memory_order_relaxed) ==
            MDCOM_FILTER_EVERY_NTH)
            atomic_fetch_sub_explicit(&ch->filter_count, 1, memory_order_relaxed);
        /* not queued: give the block back to the caller (by CAS: only a
         * reaper that took us for dead could have changed it) */
        if (!atomic_compare_exchange_strong_explicit(&ch->bstate[id], &q, s, memory_order_relaxed,
                                                     memory_order_relaxed))
            r = -EPROTO;
        if (r == -EPROTO)
            count_error(ch);
    }
    return r;
}

int mdcom_fifoch_dequeue(mdcom_fifoch_t *ch, uint32_t *id, uint32_t *len)
{
    const mdcom_platform *p;
    struct mdcom *m;
    uint32_t v, l, s, tries;
    int r;
    if (!valid_fifo(ch) || !id)
        return -EINVAL;
    if (!ch->can_rx)
        return -EPERM;
    m = ch->m; /* private: loaded once, not again after each shared store */
    /* a sign of life when we promised heartbeats (our own line: no miss) */
    if (m->hb_ms && (r = mdcom_beat(m)) != 0)
        return r;
    rx_prefetch(ch);
    for (tries = 0;;) {
        uint32_t cur;
        r = ring_pop(&ch->ctl->deq.w[0], ch->q, ch->qmask, ch->blocks, ch->stride,
                     ch->block_count, &v, &l, &s, m->me, MDCOM_OP_MAKE(MDCOM_OP_DEQ, ch->index));
        if (r == 0 && v == MDCOM_QID_SKIP) { /* a dead producer's hole, filled by a reaper */
            if (++tries < MDCOM_RETRY_MAX)
                continue;
            r = -EPROTO;
        }
        if (r) {
            if (r == -EPROTO)
                count_error(ch);
            return r;
        }
        if (v >= ch->block_count) {
            count_error(ch);
            return -EPROTO;
        }
        /* s: the block's state word as its producer published it in the
         * slot (untrusted: a wrong one makes the CAS below fail) */
        if (MDCOM_BLK_STATE(s) != MDCOM_BLK_QUEUED) {
            count_error(ch); /* a queued ID whose block is not queued: forged/duplicated */
            return -EPROTO;
        }
        /* the queue slot made it ours. A CAS, not a store: a reaper frees a
         * queued block that is in no slot and in no live consumer's op
         * record, and the CAS makes one of the two win (with our op record
         * published by the deq_pos CAS, the reaper never should). Expected s
         * with its generation. The deq_pos CAS just drained the store
         * buffer: this one costs no drain. */
        cur = s;
        if (atomic_compare_exchange_strong_explicit(
                &ch->bstate[v], &cur,
                MDCOM_BLK_MAKEG(MDCOM_BLK_HELD, m->owner, MDCOM_BLK_GEN(s)),
                memory_order_relaxed, memory_order_relaxed))
            break;
        count_error(ch);
        /* The block moved on since this entry was written (freed, maybe
         * reused): the entry of a producer that was reaped while paused
         * and published late. It names nothing: take the next one. Any
         * other mismatch is a forged entry. */
        if ((MDCOM_BLK_STATE(cur) != MDCOM_BLK_FREE && MDCOM_BLK_GEN(cur) == MDCOM_BLK_GEN(s)) ||
            ++tries >= MDCOM_RETRY_MAX)
            return -EPROTO;
        if (m->hb_ms && mdcom_self(m) < 0)
            return -ENOTCONN; /* taken for dead meanwhile: take no further entry */
    }
    if (m->hb_ms && (r = mdcom_self(m)) <= 0) {
        /* taken for dead while we ran: the message is lost with us (as if
         * we had died holding it), and counted so */
        if (block_reclaim(ch, v, m->owner)) {
            atomic_fetch_add_explicit(&ch->ctl->stats.lost, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&ch->ctl->stats.reclaimed, 1, memory_order_relaxed);
        }
        return r < 0 ? -ENOTCONN : -EAGAIN;
    }
    if (l > ch->block_size) {
        count_error(ch);
        (void)block_release(ch, v, m->owner);
        return -EBADMSG;
    }
    p = m->plat;
    if (p->cache_invalidate)
        p->cache_invalidate(p->ctx, block_ptr(ch, v), l);
    /* relaxed: a private guess (see rx_prefetch) */
    atomic_store_explicit(&ch->rx_next, v + 1 == ch->block_count ? 0 : v + 1,
                          memory_order_relaxed);
    *id = v;
    if (len)
        *len = l;
    return 0;
}

int mdcom_fifoch_notify(mdcom_fifoch_t *ch)
{
    mdcom_aword *ev, *waiters;
    if (!valid_fifo(ch))
        return -EINVAL;
    ev = &ch->ctl->event.w[0];
    waiters = &ch->ctl->event.w[1];
    /* fence: what we published (queue slots, block states) is visible before we read
     * the waiter count; pairs with the waiter's fence (store-buffering) */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(waiters, memory_order_relaxed) != 0) {
        /* only sleepers look at the event word: change it so their futex
         * compare fails, then wake them (no write at all when nobody waits) */
        atomic_fetch_add_explicit(ev, 1, memory_order_relaxed);
        ch->m->plat->doorbell.ring(ch->m->plat->doorbell.ctx, ev, ch->index);
    }
    return 0;
}

struct wait_arg {
    struct mdcom_fifoch *ch;
    uint32_t events;
    uint32_t ev_snap; /* event word when an EV_NOTIFY wait began */
};

static int fifo_cond(void *p)
{
    struct wait_arg *a = (struct wait_arg *)p;
    struct mdcom_fifoch *ch = a->ch;
    int got = 0;
    if (a->events & MDCOM_EV_RX) {
        rx_prefetch(ch);
        if (ring_ready(ch->ctl, ch->q, ch->qmask, 1))
            got |= MDCOM_EV_RX;
    }
    if ((a->events & MDCOM_EV_TX) && any_free(ch))
        got |= MDCOM_EV_TX;
    if ((a->events & MDCOM_EV_SPACE) && ring_ready(ch->ctl, ch->q, ch->qmask, 0))
        got |= MDCOM_EV_SPACE;
    /* acquire: what the notifier published before notify() is visible */
    if ((a->events & MDCOM_EV_NOTIFY) &&
        atomic_load_explicit(&ch->ctl->event.w[0], memory_order_acquire) != a->ev_snap)
        got |= MDCOM_EV_NOTIFY;
    return got;
}

uint32_t mdcom_fifo_events(struct mdcom_fifoch *ch, uint32_t events, uint32_t ev_snap)
{
    struct wait_arg a;
    a.ch = ch;
    a.events = events;
    a.ev_snap = ev_snap;
    return (uint32_t)fifo_cond(&a);
}

int mdcom_fifoch_wait(mdcom_fifoch_t *ch, uint32_t events, int64_t timeout_ns)
{
    const uint32_t all = MDCOM_EV_RX | MDCOM_EV_TX | MDCOM_EV_SPACE | MDCOM_EV_NOTIFY;
    mdcom_aword *waiters;
    struct wait_arg a;
    int r;
    if (!valid_fifo(ch) || !events || (events & ~all))
        return -EINVAL;
    waiters = &ch->ctl->event.w[1];
    a.ch = ch;
    a.events = events;
    a.ev_snap = 0;
    if (events & MDCOM_EV_NOTIFY) {
        /* notifiers change the event word only when someone waits: announce
         * for the whole wait so that every later notify() is seen */
        mdcom_wait_begin(ch->m, 1, ch->index, waiters);
        /* fence: the announcement is visible before we take the snapshot */
        atomic_thread_fence(memory_order_seq_cst);
        a.ev_snap = atomic_load_explicit(&ch->ctl->event.w[0], memory_order_relaxed);
    }
    r = mdcom_wait_word(ch->m, ch->index, &ch->ctl->event.w[0], waiters, &ch->spin_cur,
                        atomic_load_explicit(&ch->spin_max, memory_order_relaxed), fifo_cond, &a,
                        timeout_ns);
    if (events & MDCOM_EV_NOTIFY)
        mdcom_wait_end(ch->m, 1, waiters);
    return r;
}

/* Time left of a call's timeout. The clock is read only once a call has to
 * wait (a poll or a message already there costs no clock read). */
struct budget {
    int64_t timeout_ns;
    uint64_t deadline; /* 0 = not started */
};

static int64_t remaining(struct mdcom *m, struct budget *b)
{
    uint64_t now;
    if (b->timeout_ns <= 0)
        return b->timeout_ns; /* MDCOM_POLL or MDCOM_FOREVER */
    now = mdcom_now(m);
    if (!b->deadline)
        b->deadline = now + (uint64_t)b->timeout_ns;
    return now >= b->deadline ? 0 : (int64_t)(b->deadline - now);
}

int mdcom_fifoch_send(mdcom_fifoch_t *ch, const void *buf, uint32_t len, int64_t timeout_ns)
{
    struct budget b = {timeout_ns, 0};
    uint32_t id;
    int r;
    if (!valid_fifo(ch) || (!buf && len))
        return -EINVAL;
    if (len > ch->block_size)
        return -EMSGSIZE;
    tx_prefetch(ch); /* the lines alloc, the copy and enqueue will write */
    while ((r = mdcom_fifoch_alloc(ch, &id)) == -ENOBUFS) {
        r = mdcom_fifoch_wait(ch, MDCOM_EV_TX, remaining(ch->m, &b));
        if (r < 0)
            return r;
    }
    if (r)
        return r;
    if (len)
        memcpy(block_ptr(ch, id), buf, len);
    while ((r = mdcom_fifoch_enqueue(ch, id, len)) == -EAGAIN) {
        /* queue shallower than the pool and full: receivers notify as they drain */
        r = mdcom_fifoch_wait(ch, MDCOM_EV_SPACE, remaining(ch->m, &b));
        if (r < 0)
            break;
    }
    if (r < 0) {
        (void)mdcom_fifoch_free(ch, id);
        return r;
    }
    mdcom_fifoch_notify(ch);
    return r;
}

int mdcom_fifoch_recv(mdcom_fifoch_t *ch, void *buf, uint32_t cap, int64_t timeout_ns)
{
    struct budget b = {timeout_ns, 0};
    uint32_t id, len;
    int r;
    if (!valid_fifo(ch) || (!buf && cap))
        return -EINVAL;
    while ((r = mdcom_fifoch_dequeue(ch, &id, &len)) == -EAGAIN) {
        r = mdcom_fifoch_wait(ch, MDCOM_EV_RX, remaining(ch->m, &b));
        if (r < 0)
            return r;
    }
    if (r)
        return r;
    if (cap && len)
        memcpy(buf, block_ptr(ch, id), len < cap ? len : cap);
    r = block_release(ch, id, ch->m->owner);
    mdcom_fifoch_notify(ch);
    if (len > cap) {
        count_error(ch);
        return -EMSGSIZE;
    }
    return r ? r : (int)len;
}

int mdcom_filter_set(mdcom_fifoch_t *ch, const mdcom_filter *f)
{
    if (!valid_fifo(ch))
        return -EINVAL;
    if (f && (f->type > MDCOM_FILTER_FUNC || (f->type == MDCOM_FILTER_EVERY_NTH && f->n == 0) ||
              (f->type == MDCOM_FILTER_FUNC && !f->fn)))
        return -EINVAL;
    if (!ch->can_tx)
        return -EPERM;
    if (!f || f->type == MDCOM_FILTER_NONE) {
        atomic_store_explicit(&ch->filter_type, MDCOM_FILTER_NONE, memory_order_release);
        return 0;
    }
    atomic_store_explicit(&ch->filter_n, f->n, memory_order_relaxed);
    atomic_store_explicit(&ch->filter_count, 0, memory_order_relaxed);
    atomic_store_explicit(&ch->filter_fn, f->fn, memory_order_relaxed);
    atomic_store_explicit(&ch->filter_arg, f->arg, memory_order_relaxed);
    /* release: n/fn/arg are visible to enqueuers that see the new type */
    atomic_store_explicit(&ch->filter_type, f->type, memory_order_release);
    return 0;
}

int mdcom_fifoch_init(mdcom_fifoch_t *ch)
{
    struct mdcom *m;
    if (!valid_fifo(ch))
        return -EINVAL;
    m = ch->m;
    if (!m->is_master)
        return -EPERM;
    atomic_store_explicit(&ch->filter_count, 0, memory_order_relaxed);
    reinit_channel(ch);
    return 0;
}

int mdcom_fifoch_set_spin(mdcom_fifoch_t *ch, uint32_t spin_ns)
{
    if (!valid_fifo(ch))
        return -EINVAL;
    atomic_store_explicit(&ch->spin_max, spin_ns, memory_order_relaxed);
    atomic_store_explicit(&ch->spin_cur, spin_ns == MDCOM_NO_SPIN ? 0 : spin_ns,
                          memory_order_relaxed);
    return 0;
}
