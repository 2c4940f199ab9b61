/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fifo.c - FIFO channels: a pool of blocks (one state word per block) and a
 * FIFO of block IDs (a bounded MPMC ring); see the diagram in layout.h.
 *
 * Block life cycle (state word, include/mdcom/wire.h: state (bits 0-3) |
 * the owner's incarnation, low 4 bits (4-7) | owner = process slot + 1
 * (8-15, 0 when free) | generation, counted up by each alloc (16-31))
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

#include "fifo_internal.h"

/* ---------------------------------------------------------------- */
/* the queue: bounded MPMC ring (free-running u32 positions, a seq per slot) */
/* ---------------------------------------------------------------- */

/* The protocol's steps. Every load, store and CAS of the ring and of the
 * block state words is written once, in these always-inline steps; the
 * inline paths (one attempt, anything unusual goes to the full path) and
 * the full paths (ring_push, ring_pop and their callers: retries, checks,
 * error codes) are both built from them, so the two cannot drift apart. */

/* Push, step 1: room at position pos by our copy *d of the consumers'
 * position, read again from the ring when that copy says full. 1 room. */
static MDCOM_ALWAYS_INLINE int push_room(mdcom_aword *deqw, _Atomic uint32_t *deq_cache,
                                         uint32_t mask, uint32_t pos, uint32_t *d)
{
    if (pos - *d <= mask)
        return 1;
    /* full by our private copy: read the consumers' progress.
     * acquire: their reads of the slot we reuse are done (their CAS on
     * deq_pos is a release) */
    *d = mdcom_load(deqw, memory_order_acquire);
    mdcom_store(deq_cache, *d, memory_order_relaxed);
    return pos - *d <= mask;
}

/* Push, step 2: claim position *pos (a failed CAS leaves the current
 * position in *pos) for the block our op record names. 1 claimed. */
static MDCOM_ALWAYS_INLINE int push_claim(mdcom_aword *posw, uint32_t *pos, mdcom_wire_oprec *rec)
{
    /* relaxed: the position this attempt claims, for a reaper (which reads
     * our record only once we are dead) */
    if (!MDCOM_CUT_OPREC)
        mdcom_store(&rec->pos, *pos, memory_order_relaxed);
    /* relaxed: claiming the position; publication is the seq store */
    return mdcom_cas_weak(posw, pos, *pos + 1, memory_order_relaxed, memory_order_relaxed);
}

/* Push, step 3: publish (id, len, state) in slot s of claimed position pos. */
static MDCOM_ALWAYS_INLINE void push_publish(mdcom_wire_qslot *s, uint32_t pos, uint32_t id,
                                             uint32_t len, uint32_t state)
{
    mdcom_store(&s->id, id, memory_order_relaxed);
    mdcom_store(&s->len, len, memory_order_relaxed);
    mdcom_store(&s->state, state, memory_order_relaxed);
    /* release: id/len/state and the block's data are visible before the slot reads full */
    mdcom_store(&s->seq, SEQ_FULL(pos), memory_order_release);
}

/* Pop, step 1: the seq word of slot s. acquire: pairs with the producer's
 * release; id/len/state/data are complete once it reads full */
static MDCOM_ALWAYS_INLINE uint32_t pop_seq(const mdcom_wire_qslot *s)
{
    return mdcom_load(&s->seq, memory_order_acquire);
}

/* Pop, step 2: a full slot's entry, read before claiming it: once deq_pos
 * passes the position a producer may overwrite the slot; a failed claim
 * discards what was read. The block's first line (blocks, stride, nblocks)
 * starts moving now, not after the claim (a locked CAS waits for earlier
 * loads, not for prefetches). */
static MDCOM_ALWAYS_INLINE void pop_read(const mdcom_wire_qslot *s, const uint8_t *blocks,
                                         uint32_t stride, uint32_t nblocks, uint32_t *v,
                                         uint32_t *l, uint32_t *w)
{
    /* relaxed: ordered by the seq acquire (pop_seq) */
    *v = mdcom_load(&s->id, memory_order_relaxed);
    *l = mdcom_load(&s->len, memory_order_relaxed);
    /* the producer's QUEUED word (with the generation of this use of the
     * block), ordered by the seq acquire like id and len */
    *w = mdcom_load(&s->state, memory_order_relaxed);
    if (MDCOM_HAVE_PREFETCH && *v < nblocks)
        MDCOM_PREFETCH(blocks + (size_t)*v * stride);
}

/* Pop, step 3 of a hole (and the end of step 3 of an entry): move the
 * consumers' position past *pos. release: our reads of the slot (and our op
 * record) are done before a producer or reaper that sees the new deq_pos
 * acts. 1 claimed. */
static MDCOM_ALWAYS_INLINE int pop_advance(mdcom_aword *posw, uint32_t *pos)
{
    return mdcom_cas_weak(posw, pos, *pos + 1, memory_order_release, memory_order_relaxed);
}

/* Pop, step 3: claim position *pos for the entry (v, w) read from it, our op
 * record (op: what it says we do) naming the block we take. 1 claimed. */
static MDCOM_ALWAYS_INLINE int pop_claim(mdcom_aword *posw, uint32_t *pos, mdcom_wire_oprec *rec,
                                         uint32_t v, uint32_t w, uint32_t op)
{
    /* the block we are taking, for a reaper (ours or, if we die now, to be
     * freed). relaxed: made visible by pop_advance's release */
    if (!MDCOM_CUT_OPREC) {
        mdcom_store(&rec->id, v, memory_order_relaxed);
        mdcom_store(&rec->state, w, memory_order_relaxed);
        mdcom_store(&rec->op, op, memory_order_relaxed);
    }
    return pop_advance(posw, pos);
}

/* Block word steps. Alloc: the block at bs (its word loaded into *s) is
 * FREE and our CAS makes it our ALLOC word of the next generation, *s +
 * delta. weak: one attempt whose spurious failure the caller's full path
 * retries. 1 taken. */
static MDCOM_ALWAYS_INLINE int blk_alloc(mdcom_aword *bs, uint32_t delta, uint32_t *s, int weak)
{
    if (MDCOM_CUT_BSTATE) {
        *s = MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0);
        return 1;
    }
    /* relaxed: a look before the CAS, which decides */
    *s = mdcom_load(bs, memory_order_relaxed);
    if (MDCOM_BLK_SO(*s) != MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0))
        return 0;
    if (MDCOM_CUT_SCAS) { /* the same line written, by a plain store */
        mdcom_fence(memory_order_acquire);
        /* *s stays the word found, as a successful CAS leaves it */
        mdcom_store(bs, *s + delta, memory_order_relaxed);
        return 1;
    }
    /* acquire: the previous owner's use of the data (its release in free)
     * happens before we hand the block out */
    return weak ? mdcom_cas_weak(bs, s, *s + delta, memory_order_acquire, memory_order_relaxed)
                : mdcom_cas(bs, s, *s + delta, memory_order_acquire, memory_order_relaxed);
}

/* Where the next alloc scan starts: after block v of n. relaxed: a private hint */
static MDCOM_ALWAYS_INLINE void alloc_hint_after(struct mdcom_fifoch *ch, uint32_t v, uint32_t n)
{
    mdcom_store(&ch->alloc_hint, v + 1 == n ? 0 : v + 1, memory_order_relaxed);
}

/* Enqueue: our op record names block id before the block reads QUEUED: a
 * QUEUED block in no slot exists only inside an enqueue, so a reaper finds
 * every such block of a dead process in its records, without scanning the
 * pool. relaxed: read only by a reaper once we are dead (a dead process'
 * stores are all in memory); our own line: no miss */
static MDCOM_ALWAYS_INLINE void enq_name(mdcom_wire_oprec *rec, uint32_t id, uint32_t op)
{
    if (MDCOM_CUT_OPREC)
        return;
    mdcom_store(&rec->id, id, memory_order_relaxed);
    mdcom_store(&rec->op, op, memory_order_relaxed);
}

/* Enqueue: our word s of block bs becomes q (ALLOC -> QUEUED, and back when
 * the inline path loses its claim). Ours: a store, as in blk_free, or by CAS
 * from s when we can be taken for dead (hb). relaxed: the queue slot's
 * release store publishes the new state with the entry. 1 done; 0 the word
 * was not s any more (a reaper's). */
static MDCOM_ALWAYS_INLINE int blk_move(mdcom_aword *bs, uint32_t s, uint32_t q, uint32_t hb)
{
    if (MDCOM_CUT_BSTATE || MDCOM_CUT_NOQ)
        return 1;
    if (!hb) {
        mdcom_store(bs, q, memory_order_relaxed);
        return 1;
    }
    return mdcom_cas(bs, &s, q, memory_order_relaxed, memory_order_relaxed);
}

/* Enqueue failed after blk_move: QUEUED word q goes back to ALLOC word a,
 * by CAS (only a reaper that took us for dead could have changed it; an
 * error path, where a locked instruction costs nothing that matters).
 * relaxed: nothing was published. 1 done. */
static MDCOM_ALWAYS_INLINE int blk_unqueue(mdcom_aword *bs, uint32_t q, uint32_t a)
{
    return mdcom_cas(bs, &q, a, memory_order_relaxed, memory_order_relaxed);
}

/* Dequeue: the block bs of the entry we claimed, its word *cur (the
 * producer's QUEUED word s, as published in the slot) becomes our HELD word
 * h. A CAS, not a store: a reaper frees a queued block that is in no slot
 * and in no live consumer's op record, and the CAS makes one of the two
 * win. relaxed: the deq_pos CAS (pop_advance) just drained the store buffer
 * and the data was ordered by the seq acquire. weak: as in blk_alloc. On
 * failure *cur is the word found. 1 taken. */
static MDCOM_ALWAYS_INLINE int blk_hold(mdcom_aword *bs, uint32_t *cur, uint32_t h, int weak)
{
    if (MDCOM_CUT_BSTATE)
        return 1;
    if (MDCOM_CUT_SCAS) { /* the same line written, by a plain store */
        mdcom_store(bs, h, memory_order_relaxed);
        return 1;
    }
    return weak ? mdcom_cas_weak(bs, cur, h, memory_order_relaxed, memory_order_relaxed)
                : mdcom_cas(bs, cur, h, memory_order_relaxed, memory_order_relaxed);
}

/* Free: our block bs (ALLOC or HELD) becomes FREE word f. A plain store: the
 * block is ours, and nobody takes a process without a heartbeat promise for
 * dead while it runs; a locked instruction here would stall on the store
 * buffer in every message's path. A peer racing us on this word can only
 * confuse its own channel.
 * release: our use of the block's data is done before the next owner's alloc */
static MDCOM_ALWAYS_INLINE void blk_free(mdcom_aword *bs, uint32_t f)
{
    if (!MDCOM_CUT_BSTATE)
        mdcom_store(bs, f, memory_order_release);
}

/* Free by CAS from word *s (a heartbeat promise, a reaper, a block we may no
 * longer own): a racing change wins. release: as in blk_free. 1 freed. */
static MDCOM_ALWAYS_INLINE int blk_free_from(mdcom_aword *bs, uint32_t *s, uint32_t f)
{
    return mdcom_cas(bs, s, f, memory_order_release, memory_order_relaxed);
}

/* Push (id, len); rec: our thread's op record, which (op, id: the caller
 * set them) names the block; each attempt records its position in rec->pos.
 * 0, -EAGAIN (full) or -EPROTO (indices never settle). */
static inline int ring_push(mdcom_aword *posw, mdcom_aword *deqw, _Atomic uint32_t *deq_cache,
                            mdcom_wire_qslot *slots, uint32_t mask, uint32_t id, uint32_t len,
                            uint32_t state, mdcom_wire_oprec *rec)
{
    /* relaxed: the position is only a hint; the CAS in push_claim decides */
    uint32_t pos = mdcom_load(posw, memory_order_relaxed);
    uint32_t d = mdcom_load(deq_cache, memory_order_relaxed);
    uint32_t tries;
    for (tries = 0; tries < MDCOM_RETRY_MAX; tries++) {
        if (!push_room(deqw, deq_cache, mask, pos, &d)) {
            uint32_t p2 = mdcom_load(posw, memory_order_relaxed);
            if (p2 == pos)
                return pos - d == mask + 1 ? -EAGAIN : -EPROTO; /* > capacity: corrupt */
            pos = p2; /* stale: other producers moved on */
            continue;
        }
        if (push_claim(posw, &pos, rec)) {
            push_publish(QSLOT(slots, pos & mask), pos, id, len, state); /* masked: in bounds */
            return 0;
        }
    }
    return -EPROTO;
}

/* The generation guard of a consumer: 0 while the region's generation is
 * the one we attached to. Loaded after the slot's seq acquire, so an entry
 * that a process of a newer generation published (it attached after the
 * re-format's release of READY) shows the new generation here: a consumer
 * of the old one leaves it, having written nothing, for the new one's
 * consumers. relaxed: ordered by that acquire; the header line is read-only
 * in steady state (no transfer). */
static inline int gen_moved(const mdcom_aword *genw, uint32_t gen)
{
    return mdcom_load(genw, memory_order_relaxed) != gen;
}

/* Pop into *id, *len (a MDCOM_QID_SKIP entry too) and *state (the block's
 * state word as the producer published it); rec: our thread's op record,
 * op: what it says we do (pop_claim); genw, gen: the header's
 * generation word and ours (gen_moved). The first line of the block
 * (blocks, stride, nblocks) is prefetched before the claim.
 * 0, -EAGAIN (empty), -ECONNRESET (the region was re-formatted: nothing
 * claimed, or a position claimed in the new generation, left to its audit)
 * or -EPROTO. */
static inline int ring_pop(mdcom_aword *posw, mdcom_wire_qslot *slots, uint32_t mask,
                           const uint8_t *blocks, uint32_t stride, uint32_t nblocks, uint32_t *id,
                           uint32_t *len, uint32_t *state, mdcom_wire_oprec *rec, uint32_t op,
                           const mdcom_aword *genw, uint32_t gen)
{
    uint32_t pos = mdcom_load(posw, memory_order_relaxed); /* hint, as above */
    uint32_t tries;
    for (tries = 0; tries < MDCOM_RETRY_MAX; tries++) {
        mdcom_wire_qslot *s = QSLOT(slots, pos & mask);
        uint32_t seq = pop_seq(s);
        if ((seq == SEQ_FULL(pos) || seq == SEQ_SKIP(pos)) && gen_moved(genw, gen))
            return -ECONNRESET; /* an entry of a newer generation: not ours to take */
        if (seq == SEQ_FULL(pos)) {
            uint32_t v, l, w;
            pop_read(s, blocks, stride, nblocks, &v, &l, &w);
            if (MDCOM_CUT_INLINE && v == MDCOM_CUT_QID_INLINE)
                return MDCOM_CUT_EINLINE; /* an inline entry: recv's to take */
            if (pop_claim(posw, &pos, rec, v, w, op)) {
                /* re-formatted between the check above and the claim (we
                 * were preempted): the position is the new generation's;
                 * its block, queued in no slot, is the audit's to reclaim
                 * and count */
                if (gen_moved(genw, gen))
                    return -ECONNRESET;
                *id = v;
                *len = l;
                *state = w;
                return 0;
            }
        } else if (seq == SEQ_SKIP(pos)) {
            /* a hole a reaper or the audit closed: claim it and say so
             * (nothing was read but the seq) */
            if (pop_advance(posw, &pos)) {
                *id = MDCOM_QID_SKIP;
                return 0;
            }
        } else {
            /* an older lap's entry (or nothing yet): empty unless our
             * position is stale */
            uint32_t p2 = mdcom_load(posw, memory_order_relaxed);
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
        d = mdcom_load(&ctl->deq.pos, memory_order_relaxed); /* hint */
        /* acquire: a positive answer must let the caller see the entry */
        uint32_t seq = mdcom_load(&QSLOT(slots, d & mask)->seq, memory_order_acquire);
        return seq == SEQ_FULL(d) || seq == SEQ_SKIP(d); /* a skip: dequeue goes past it */
    }
    /* acquire: as in push_room */
    d = mdcom_load(&ctl->deq.pos, memory_order_acquire);
    return mdcom_load(&ctl->enq.pos, memory_order_relaxed) - d <= mask;
}

/* ---------------------------------------------------------------- */
/* helpers                                                            */
/* ---------------------------------------------------------------- */




/* Receive-side prediction. Senders take blocks round-robin (alloc_hint) and
 * receivers free them in the order received, so the next message of a
 * channel usually sits in the block after the last one dequeued. A receiver
 * that polls prefetches that block's first line and its state word along
 * with the slot: when the slot turns full, the two lines it points to are
 * already on their way instead of being fetched one after the other
 * (docs/benchmarks.md has what it saves). Only a hint:
 * a wrong guess costs a prefetch, never a wrong read, since everything is
 * still read from the slot and validated after. */
static inline void rx_prefetch(struct mdcom_fifoch *ch)
{
    uint32_t id;
    if (!MDCOM_HAVE_PREFETCH) /* no hint to give: not even the load */
        return;
    /* relaxed: a private guess, no ordering */
    id = mdcom_load(&ch->rx_next, memory_order_relaxed);
    if (id < ch->block_count) {
        MDCOM_PREFETCH(block_ptr(ch, id));
        if (!MDCOM_CUT_BSTATE)
            MDCOM_PREFETCH(blk_word(ch, id));
    }
}

/* Send-side prefetch for writing. A polling receiver keeps reading the slot
 * the next message goes to, so that line sits shared in its cache; the
 * sender's slot stores then wait for an invalidation first, and the state
 * word and block (last written or read by the receiver) are fetched only
 * when alloc, the copy and enqueue reach them, one after the other.
 * Asking for all three lines for writing before the first use overlaps the
 * transfers (docs/benchmarks.md: the slot line brings most of the gain, the
 * state word and block line the rest for copy). Hints only: a guess that turns out wrong (the hint block
 * is not free, another producer takes the position) costs a prefetch. */
static inline void tx_prefetch_slot(struct mdcom_fifoch *ch)
{
    uint32_t pos;
    if (!MDCOM_HAVE_PREFETCH) /* as in rx_prefetch */
        return;
    /* relaxed: a hint; masked, so always in bounds */
    pos = mdcom_load(&ch->ctl->enq.pos, memory_order_relaxed);
    mdcom_prefetchw(ch->pfw, QSLOT(ch->q, pos & ch->qmask));
}

static inline void tx_prefetch(struct mdcom_fifoch *ch)
{
    uint32_t id;
    if (!MDCOM_HAVE_PREFETCH) /* as in rx_prefetch */
        return;
    /* relaxed: a private hint (the block alloc will try first) */
    id = mdcom_load(&ch->alloc_hint, memory_order_relaxed);
    if (id < ch->block_count) {
        if (!MDCOM_CUT_BSTATE)
            mdcom_prefetchw(ch->pfw, blk_word(ch, id));
        mdcom_prefetchw(ch->pfw, block_ptr(ch, id));
    }
    tx_prefetch_slot(ch);
}

void mdcom_fifo_bind(struct mdcom_instance *m, struct mdcom_fifoch *f, const mdcom_chan_layout *cl,
                     uint32_t pfw)
{
    uint8_t *a = m->base + cl->off;
    memset(f, 0, sizeof(*f));
    f->index = (uint32_t)(cl - m->cl);
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

/* The inline send gate: open while this domain may send with no cache hook
 * and no filter (relaxed: a private word; a racing
 * filter_set orders itself by filter_type, see filter_pass). */
static void tx_gate(struct mdcom_fifoch *f)
{
    struct mdcom_instance *m = f->m;
    int open = f->can_tx && f->alloc_so && !m->plat->cache_clean &&
               mdcom_load(&f->filter_type, memory_order_relaxed) == MDCOM_FILTER_NONE;
    mdcom_store(&f->tx_fast, open ? (uintptr_t)f : 0u, memory_order_relaxed);
}

void mdcom_fifo_own(struct mdcom_fifoch *f)
{
    struct mdcom_instance *m = f->m;
    uint32_t index = f->index;
    f->who = m->who;
    f->alloc_so = MDCOM_BLK_MAKE(MDCOM_BLK_ALLOC, m->who);
    f->alloc_delta = 0x10000u + f->alloc_so - MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0);
    f->hdr = m->hdr;
    f->gen = m->generation;
    f->me = m->me;
    f->held_so = MDCOM_BLK_MAKE(MDCOM_BLK_HELD, m->who);
#if defined(MDCOM_THREADS) && MDCOM_THREADS /* mdcom_ch_rec's; one thread: record 0 */
    f->pool_index = m->pool_index;
    f->rec_serial = m->rec_serial;
#endif
    f->op_enq = MDCOM_OP_MAKE(MDCOM_OP_ENQ, index);
    f->op_deq = MDCOM_OP_MAKE(MDCOM_OP_DEQ, index);
    f->hb = m->hb_ms != 0;
    f->self_owner = MDCOM_PROC_DOMAIN_BASE + m->domain;
    f->incarn = m->incarn;
    f->rx_fast = f->can_rx && !m->plat->cache_invalidate ? (uintptr_t)f : 0u;
    tx_gate(f);
}

/* Release (id) held by who back to the pool (mdcom_block_release; inline
 * in mdcom_fifoch_free, the message path's call). */
static MDCOM_ALWAYS_INLINE int block_release(struct mdcom_fifoch *ch, uint32_t id, uint32_t who)
{
    mdcom_aword *bs = blk_word(ch, id);
    uint32_t s = mdcom_load(bs, memory_order_relaxed);
    uint32_t st = MDCOM_BLK_STATE(s);
    uint32_t f = MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(s));
    if (MDCOM_BLK_WHO(s) != who || (st != MDCOM_BLK_ALLOC && st != MDCOM_BLK_HELD))
        return -EALREADY;
    if (!ch->hb) {
        blk_free(bs, f);
        return 0;
    }
    /* A heartbeat promise: a reaper may take us for dead between the check
     * and the store, free the block and someone reuse it; the CAS from the
     * word we checked changes nothing then */
    return blk_free_from(bs, &s, f) ? 0 : -EALREADY;
}

int mdcom_block_release(struct mdcom_fifoch *ch, uint32_t id, uint32_t who)
{
    return block_release(ch, id, who);
}

/* Release (id) held by an owner that (who & mask) names, by CAS (a reaper,
 * or a process giving back a block it may no longer own): a racing owner's
 * change wins. 1 released. */
int mdcom_block_reclaim(struct mdcom_fifoch *ch, uint32_t id, uint32_t who, uint32_t mask)
{
    mdcom_aword *bs = blk_word(ch, id);
    uint32_t s = mdcom_load(bs, memory_order_relaxed);
    uint32_t st = MDCOM_BLK_STATE(s);
    if ((MDCOM_BLK_WHO(s) & mask) != (who & mask) ||
        (st != MDCOM_BLK_ALLOC && st != MDCOM_BLK_HELD))
        return 0;
    return blk_free_from(bs, &s, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(s)));
}

/* Number of free blocks (a racy snapshot). */
static uint32_t count_free(struct mdcom_fifoch *ch)
{
    uint32_t id, n = 0;
    for (id = 0; id < ch->block_count; id++)
        n += MDCOM_BLK_SO(mdcom_load(blk_word(ch, id), memory_order_relaxed)) ==
             MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0);
    return n;
}

/* 1 when some block is free, scanning from the alloc hint. */
static int any_free(struct mdcom_fifoch *ch)
{
    uint32_t n = ch->block_count, k;
    uint32_t id = mdcom_load(&ch->alloc_hint, memory_order_relaxed);
    if (id >= n)
        id = 0;
    for (k = 0; k < n; k++) {
        if (MDCOM_BLK_SO(mdcom_load(blk_word(ch, id), memory_order_relaxed)) ==
            MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0))
            return 1;
        if (++id == n)
            id = 0;
    }
    return 0;
}

/* notify's body (the caller checked the handle) */
static MDCOM_ALWAYS_INLINE void notify_inline(struct mdcom_fifoch *ch)
{
    uint32_t w;
    /* fence: what we published (queue slots, block states) is visible before we read
     * the waiter count; pairs with the waiter's fence (store-buffering) */
    if (!MDCOM_CUT_FENCE)
        mdcom_fence(memory_order_seq_cst);
    w = mdcom_load(&ch->ctl->event.waiters, memory_order_relaxed);
    /* only sleepers look at the event word: no write at all when nobody waits */
    if (w & MDCOM_WAITERS_COUNT)
        mdcom_event_ring(ch->m, ch->ctl, ch->index, w);
}

void mdcom_fifo_reclaimed(struct mdcom_fifoch *ch, uint32_t n, uint32_t lost, int wake)
{
    /* relaxed: counters */
    mdcom_fetch_add(&ch->ctl->stats.lost, lost, memory_order_relaxed);
    mdcom_fetch_add(&ch->ctl->stats.reclaimed, n, memory_order_relaxed);
    if (wake) /* blocks are free again: wake senders waiting for one */
        notify_inline(ch);
}

void mdcom_fifo_release_owner(struct mdcom_instance *m, uint32_t owner, int dead)
{
    uint32_t i, id;
    for (i = 0; i < m->cfg->n_channels; i++) {
        struct mdcom_fifoch *ch = &m->ch[i].f;
        uint32_t lost = 0, n = 0;
        if (ch->tag != MDCOM_TAG_FIFO)
            continue;
        for (id = 0; id < ch->block_count; id++) {
            /* relaxed: only to tell a dequeued message from an unsent block */
            uint32_t s = mdcom_load(blk_word(ch, id), memory_order_relaxed);
            /* a dead owner's blocks by CAS: its late stores (a process
             * reaped while paused) and ours must not both win */
            if (dead ? mdcom_block_reclaim(ch, id, MDCOM_BLK_WHO_OF(owner, 0), MDCOM_BLK_WHO_SLOT)
                     : mdcom_block_release(ch, id, m->who) == 0) {
                n++;
                lost += MDCOM_BLK_STATE(s) == MDCOM_BLK_HELD;
            }
        }
        /* a dead receiver's dequeued messages are gone: senders see it in
         * mdcom_sense_fifoch (QUEUED blocks stay queued and are delivered) */
        if (dead && n)
            mdcom_fifo_reclaimed(ch, n, lost, 1);
    }
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
    e = mdcom_load(&ch->ctl->enq.pos, memory_order_relaxed);
    d = mdcom_load(&ch->ctl->deq.pos, memory_order_relaxed);
    st->block_size = ch->block_size;
    st->block_count = ch->block_count;
    st->queue_depth = ch->qmask + 1;
    st->queued = e - d;
    st->free_blocks = count_free(ch);
    st->filtered = mdcom_load(&ch->ctl->stats.filtered, memory_order_relaxed);
    st->errors = mdcom_load(&ch->ctl->stats.errors, memory_order_relaxed);
    st->lost = mdcom_load(&ch->ctl->stats.lost, memory_order_relaxed);
    st->reclaimed = mdcom_load(&ch->ctl->stats.reclaimed, memory_order_relaxed);
    st->discarded = mdcom_load(&ch->ctl->stats.discarded, memory_order_relaxed);
    /* a snapshot of racing counters may be off by the in-flight ops; beyond
     * capacity (or "negative") it is corrupted */
    if (st->queued > st->queue_depth) {
        st->queued = st->queue_depth;
        return -EPROTO;
    }
    return 0;
}

/* alloc took block v, and we promised a heartbeat: if the others took us for
 * dead while we ran, or our entry was damaged (mdcom_self judges), the block
 * is not ours to keep and goes back unless a reaper took it already. */
static MDCOM_COLD int alloc_judged(struct mdcom_fifoch *ch, uint32_t v, uint32_t *id)
{
    if (mdcom_self(ch->m) <= 0) {
        (void)mdcom_block_reclaim(ch, v, ch->m->who, MDCOM_BLK_WHO_ALL);
        return -ENOTCONN;
    }
    *id = v;
    return 0;
}

static MDCOM_COLD int alloc_full(struct mdcom_fifoch *ch, uint32_t *id)
{
    uint32_t n, k, v;
    int r;
    if (!valid_fifo(ch) || !id)
        return -EINVAL;
    if (!ch->can_tx)
        return -EPERM;
    /* no new message into a dead region; with a heartbeat promise also a
     * sign of life (a sender polling a dry pool stays alive) */
    r = mdcom_region_check(ch->m);
    if (r)
        return r;
    n = ch->block_count;
    /* relaxed: a private hint; blocks are usually freed in the order sent */
    v = mdcom_load(&ch->alloc_hint, memory_order_relaxed);
    if (v >= n)
        v = 0;
    for (k = 0; k < 2 * n; k++) {
        if (k == n && mdcom_reap(ch->m) <= 0)
            break; /* none free: unless a dead process held some, the pool is dry */
        uint32_t s;
        /* the new use gets the next generation (FREE + alloc_delta) */
        if (blk_alloc(blk_word(ch, v), ch->alloc_delta, &s, 0)) {
            alloc_hint_after(ch, v, n);
            if (ch->m->hb_ms)
                return alloc_judged(ch, v, id);
            *id = v;
            return 0;
        }
        if (++v == n)
            v = 0;
    }
    return -ENOBUFS;
}

/* The inline path takes the hinted block when it is free and the first CAS
 * wins; anything else (a bad argument, another state, a region that changed,
 * a heartbeat promise) is alloc_full's, which checks everything again. */
/* 1 while our process entry is plainly ours (owner word and incarnation as
 * we claimed them); anything else is for mdcom_self to judge. relaxed: our
 * own entry, as in mdcom_self */
static MDCOM_ALWAYS_INLINE int self_ok(const struct mdcom_fifoch *ch)
{
    return mdcom_load(&ch->me->owner, memory_order_relaxed) == ch->self_owner &&
           mdcom_read_once(ch->me->incarn) == ch->incarn;
}

/* A heartbeat promise's sign of life on the inline paths (mdcom_beat's
 * common case): 0, or 1 when the entry is not plainly ours (the full path
 * then decides). relaxed: a counter we alone write (see mdcom_beat) */
static MDCOM_ALWAYS_INLINE int beat_inline(struct mdcom_fifoch *ch)
{
    uint32_t v;
    if (!self_ok(ch))
        return 1;
    v = mdcom_load(&ch->me->heartbeat, memory_order_relaxed);
    mdcom_store(&ch->me->heartbeat, v + 1u, memory_order_relaxed);
    return 0;
}

/* alloc's inline path (the caller checked the handle); what alloc_full
 * answers when it does not apply. *word: the block's new state word (our
 * ALLOC word of this generation) when it returns 0. */
static MDCOM_ALWAYS_INLINE int alloc_inline(struct mdcom_fifoch *ch, uint32_t *id, uint32_t *word)
{
    uint32_t v, s;
    /* relaxed: READY of our generation was acquired at attach; all this
     * looks for is a later change (a shutdown or re-format) */
    if (mdcom_load(&ch->hdr->state, memory_order_relaxed) != MDCOM_ST_READY ||
        mdcom_load(&ch->hdr->generation, memory_order_relaxed) != ch->gen)
        goto full;
    /* relaxed: a private hint, always < block_count (stored wrapped) */
    v = mdcom_load(&ch->alloc_hint, memory_order_relaxed);
    /* FREE + alloc_delta: our ALLOC word of the next generation; one
     * attempt (weak), anything else is alloc_full's */
    if (!blk_alloc(blk_word(ch, v), ch->alloc_delta, &s, 1))
        goto full;
    alloc_hint_after(ch, v, ch->block_count);
    /* A heartbeat promise: our entry checked once, after the CAS (taken for
     * dead before or while we ran: alloc_judged gives the block back and
     * says so, as alloc_full), then the sign of life */
    *word = 0;
    if (ch->hb && beat_inline(ch))
        return alloc_judged(ch, v, id);
    *id = v;
    *word = s + ch->alloc_delta;
    return 0;
full:
    *word = 0;
    return alloc_full(ch, id);
}

/* 1 when the inline send path applies to ch (tx_gate); no other field of a
 * handle that fails it is read */
static MDCOM_ALWAYS_INLINE int tx_open(const struct mdcom_fifoch *ch)
{
    /* relaxed: a private gate word */
    return ch && mdcom_load(&ch->tx_fast, memory_order_relaxed) == (uintptr_t)ch;
}

int mdcom_fifoch_alloc(mdcom_fifoch_t *ch, uint32_t *id)
{
    uint32_t w;
    if (!tx_open(ch) || !id)
        return alloc_full(ch, id);
    return alloc_inline(ch, id, &w);
}

/* -EALREADY from a transition of our own block: a process the others took
 * for dead (a missed heartbeat promise, or a forged identity in its entry)
 * learns it (-ENOTCONN). */
static MDCOM_COLD int not_ours(struct mdcom_fifoch *ch, int r)
{
    return mdcom_self(ch->m) < 0 ? -ENOTCONN : r;
}

int mdcom_fifoch_free(mdcom_fifoch_t *ch, uint32_t id)
{
    int r;
    /* valid_fifo, spelled out: one call less on the message path */
    if (!ch || ch->tag != MDCOM_TAG_FIFO || id >= ch->block_count)
        return -EINVAL;
    if (MDCOM_CUT_BSTATE)
        return 0;
    r = block_release(ch, id, ch->who);
    return r ? not_ours(ch, r) : 0;
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
    uint32_t type = mdcom_load(&ch->filter_type, memory_order_acquire);
    if (type == MDCOM_FILTER_NONE)
        return 1;
    if (type == MDCOM_FILTER_EVERY_NTH) {
        uint32_t n = mdcom_load(&ch->filter_n, memory_order_relaxed);
        uint32_t c = mdcom_fetch_add(&ch->filter_count, 1, memory_order_relaxed) + 1;
        return n <= 1 || c % n == 0;
    }
    {
        mdcom_filter_fn fn = mdcom_load(&ch->filter_fn, memory_order_relaxed);
        void *arg = mdcom_load(&ch->filter_arg, memory_order_relaxed);
        return !fn || fn(arg, block_ptr(ch, id), len) != 0;
    }
}

static MDCOM_COLD int enqueue_body(struct mdcom_fifoch *ch, uint32_t id, uint32_t len)
{
    struct mdcom_instance *m;
    mdcom_wire_oprec *rec;
    uint32_t s, q;
    int r;
    if (!valid_fifo(ch) || id >= ch->block_count || len > ch->block_size)
        return -EINVAL;
    if (!ch->can_tx)
        return -EPERM;
    m = ch->m; /* private: loaded once, not again after each shared store */
    /* the slot and the state word: both written below (see tx_prefetch) */
    tx_prefetch_slot(ch);
    mdcom_prefetchw(ch->pfw, blk_word(ch, id));
    s = MDCOM_CUT_BSTATE ? ch->alloc_so : mdcom_load(blk_word(ch, id), memory_order_relaxed);
    if (MDCOM_BLK_SO(s) != ch->alloc_so) /* our ALLOC word */
        return not_ours(ch, -EALREADY);
    if (!filter_pass(ch, id, len)) {
        r = mdcom_block_release(ch, id, ch->who);
        if (r)
            return not_ours(ch, r);
        mdcom_fetch_add(&ch->ctl->stats.filtered, 1, memory_order_relaxed);
        return MDCOM_FILTERED;
    }
    q = s + (MDCOM_BLK_QUEUED - MDCOM_BLK_ALLOC); /* our QUEUED word of this generation */
    rec = mdcom_rec_held(ch);
    enq_name(rec, id, ch->op_enq);
    if (!blk_move(blk_word(ch, id), s, q, ch->hb))
        return not_ours(ch, -EALREADY);
    mdcom_shm_clean(m->plat, block_ptr(ch, id), len);
    r = ring_push(&ch->ctl->enq.pos, &ch->ctl->deq.pos, &ch->deq_cache, ch->q, ch->qmask, id, len,
                  q, rec);
    if (r) {
        /* not sent: a retry of the same message must meet the filter as this
         * attempt did, so the every-nth count goes back */
        if (mdcom_load(&ch->filter_type, memory_order_relaxed) == MDCOM_FILTER_EVERY_NTH)
            mdcom_fetch_sub(&ch->filter_count, 1, memory_order_relaxed);
        /* not queued: give the block back to the caller */
        if (!blk_unqueue(blk_word(ch, id), q, s))
            r = -EPROTO;
        if (r == -EPROTO)
            count_error(ch);
    }
    return r;
}

static MDCOM_COLD int dequeue_body(struct mdcom_fifoch *ch, uint32_t *id, uint32_t *len);
#if MDCOM_REC_SHARED
/* The full paths with the calling thread's record taken (a thread that
 * shares record 0 holds its lock meanwhile): rec_take says -1 (an invalid
 * handle: nothing taken) or what rec_give passes to mdcom_rec_leave. */
static int rec_take(struct mdcom_fifoch *ch)
{
    return valid_fifo(ch) ? mdcom_rec_enter(ch->m) : -1;
}
static int rec_give(struct mdcom_fifoch *ch, int shared, int r)
{
    if (shared >= 0)
        mdcom_rec_leave(ch->m, shared);
    return r;
}
static MDCOM_COLD int enqueue_full(struct mdcom_fifoch *ch, uint32_t id, uint32_t len)
{
    int shared = rec_take(ch);
    return rec_give(ch, shared, enqueue_body(ch, id, len));
}
static MDCOM_COLD int dequeue_full(struct mdcom_fifoch *ch, uint32_t *id, uint32_t *len)
{
    int shared = rec_take(ch);
    return rec_give(ch, shared, dequeue_body(ch, id, len));
}
#else
#define enqueue_full enqueue_body
#define dequeue_full dequeue_body
#endif

/* The inline path of a block whose state word s, our ALLOC word, the
 * caller knows: no filter or cache hook, room by our copy of the consumers'
 * position, the first position CAS wins. Every other case is
 * enqueue_full's, entered before anything shared was written. The steps
 * and their order are enqueue_body's and ring_push's, one attempt. */
static MDCOM_ALWAYS_INLINE int enqueue_word(struct mdcom_fifoch *ch, uint32_t id, uint32_t len,
                                            uint32_t s)
{
    mdcom_wire_oprec *rec;
    mdcom_wire_qslot *sl;
    mdcom_aword *bs, *posw;
    uint32_t pos, d, qmask, q;
    /* private words into locals: the shared stores below could alias them */
    bs = blk_word(ch, id);
    posw = &ch->ctl->enq.pos;
    qmask = ch->qmask;
    sl = ch->q;
    /* relaxed: hints; the CAS in push_claim decides */
    pos = mdcom_load(posw, memory_order_relaxed);
    d = mdcom_load(&ch->deq_cache, memory_order_relaxed);
    if (!push_room(&ch->ctl->deq.pos, &ch->deq_cache, qmask, pos, &d))
        return enqueue_full(ch, id, len);
    rec = mdcom_ch_rec(ch);
    if (MDCOM_REC_SHARED && !rec) /* none of our own yet, or the shared one */
        return enqueue_full(ch, id, len);
    enq_name(rec, id, ch->op_enq);
    q = s + (MDCOM_BLK_QUEUED - MDCOM_BLK_ALLOC); /* the QUEUED word of this generation */
    if (!blk_move(bs, s, q, ch->hb))
        return enqueue_full(ch, id, len);
    if (!push_claim(posw, &pos, rec)) {
        /* another producer took it (or a spurious failure): back to ALLOC
         * (ours: a reaper takes only the dead) and the full path */
        if (!blk_move(bs, q, s, ch->hb))
            return not_ours(ch, -EALREADY);
        return enqueue_full(ch, id, len);
    }
    push_publish(QSLOT(sl, pos & qmask), pos, id, len, q); /* masked: always in bounds */
    return 0;
}

/* The inline path: our ALLOC block (its word read and checked here), then
 * enqueue_word. */
static MDCOM_ALWAYS_INLINE int enqueue_inline(struct mdcom_fifoch *ch, uint32_t id, uint32_t len)
{
    mdcom_aword *bs = blk_word(ch, id);
    uint32_t s;
    if (MDCOM_HAVE_PREFETCH) {
        tx_prefetch_slot(ch);
        if (!MDCOM_CUT_BSTATE)
            mdcom_prefetchw(ch->pfw, bs);
    }
    /* relaxed: our own block's word */
    s = MDCOM_CUT_BSTATE ? ch->alloc_so : mdcom_load(bs, memory_order_relaxed);
    if (MDCOM_BLK_SO(s) != ch->alloc_so)
        return enqueue_full(ch, id, len);
    return enqueue_word(ch, id, len, s);
}

int mdcom_fifoch_enqueue(mdcom_fifoch_t *ch, uint32_t id, uint32_t len)
{
    if (!tx_open(ch) || id >= ch->block_count || len > ch->block_size)
        return enqueue_full(ch, id, len);
    return enqueue_inline(ch, id, len);
}

/* The entry (v, l, s) we just claimed from the queue: make its block ours.
 * 0 taken, 1 the entry names nothing (a producer reaped while paused that
 * published late: take the next one), -EPROTO forged. */
static int deq_take_block(struct mdcom_fifoch *ch, uint32_t v, uint32_t s)
{
    uint32_t cur = MDCOM_CUT_NOQ ? s - (MDCOM_BLK_QUEUED - MDCOM_BLK_ALLOC) : s;
#if MDCOM_CUT_BSTATE
    return v < ch->block_count ? 0 : -EPROTO;
#endif
    if (v >= ch->block_count || MDCOM_BLK_STATE(s) != MDCOM_BLK_QUEUED) {
        count_error(ch); /* a queued ID whose block is not queued: forged/duplicated */
        return -EPROTO;
    }
    /* The queue slot made it ours (blk_hold; with our op record published
     * by the deq_pos CAS, a reaper never should free it). Expected s with its
     * generation (s: the block's state word as its producer published it in
     * the slot; untrusted: a wrong one makes the CAS fail). */
    if (blk_hold(blk_word(ch, v), &cur, (s & 0xffff0000u) | ch->held_so, 0))
        return 0;
    count_error(ch);
    /* the block moved on since this entry was written (freed, maybe reused):
     * any other mismatch is a forged entry */
    return MDCOM_BLK_STATE(cur) != MDCOM_BLK_FREE && MDCOM_BLK_GEN(cur) == MDCOM_BLK_GEN(s)
               ? -EPROTO
               : 1;
}

/* After the block of entry (v, l) became ours: the last checks, then hand it out. */
static int deq_finish(struct mdcom_fifoch *ch, uint32_t v, uint32_t l, uint32_t *id, uint32_t *len)
{
    struct mdcom_instance *m = ch->m;
    if (m->hb_ms && mdcom_self(m) <= 0) {
        /* taken for dead (or our entry damaged) while we ran: the message
         * is lost with us (as if we had died holding it), and counted so.
         * Never -EAGAIN: a caller that retried would take and lose the
         * next message too. */
        if (mdcom_block_reclaim(ch, v, m->who, MDCOM_BLK_WHO_ALL))
            mdcom_fifo_reclaimed(ch, 1, 1, 0);
        return -ENOTCONN;
    }
    if (l > ch->block_size) {
        count_error(ch);
        (void)mdcom_block_release(ch, v, m->who);
        return -EBADMSG;
    }
    mdcom_shm_invalidate(m->plat, block_ptr(ch, v), l);
    if (MDCOM_HAVE_PREFETCH) /* relaxed: a private guess (see rx_prefetch) */
        mdcom_store(&ch->rx_next, v + 1 == ch->block_count ? 0 : v + 1, memory_order_relaxed);
    *id = v;
    if (len)
        *len = l;
    return 0;
}

/* What a consumer that met a newer generation returns: the region's own
 * code (a re-format then a term: -ESHUTDOWN), else -ECONNRESET. */
static MDCOM_COLD int gen_reset(struct mdcom_instance *m)
{
    int r = mdcom_region_check(m);
    return r ? r : -ECONNRESET;
}

static MDCOM_COLD int dequeue_body(struct mdcom_fifoch *ch, uint32_t *id, uint32_t *len)
{
    struct mdcom_instance *m;
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
        r = ring_pop(&ch->ctl->deq.pos, ch->q, ch->qmask, ch->blocks, ch->stride, ch->block_count,
                     &v, &l, &s, mdcom_rec_held(ch), ch->op_deq, &ch->hdr->generation, ch->gen);
        if (r == 0 && v == MDCOM_QID_SKIP) { /* a dead producer's hole, filled by a reaper */
            if (++tries < MDCOM_RETRY_MAX)
                continue;
            r = -EPROTO;
        }
        if (r == -ECONNRESET)
            return gen_reset(m);
        if (r) {
            if (r == -EPROTO)
                count_error(ch);
            return r;
        }
        r = deq_take_block(ch, v, s);
        if (r == 0)
            break;
        if (r < 0 || ++tries >= MDCOM_RETRY_MAX)
            return -EPROTO;
        if (m->hb_ms && mdcom_self(m) < 0)
            return -ENOTCONN; /* taken for dead meanwhile: take no further entry */
    }
    return deq_finish(ch, v, l, id, len);
}

/* An entry we claimed on the inline path that is not a plain one. */
static MDCOM_COLD int dequeue_claimed(struct mdcom_fifoch *ch, uint32_t v, uint32_t l, uint32_t s,
                                      uint32_t *id, uint32_t *len)
{
    int r;
    if (v == MDCOM_QID_SKIP) /* a skip written as an entry: go past it, as ring_pop's callers do */
        return dequeue_full(ch, id, len);
    r = deq_take_block(ch, v, s);
    if (r < 0)
        return r;
    if (r > 0)
        return dequeue_full(ch, id, len);
    return deq_finish(ch, v, l, id, len);
}

/* The inline path: the entry at our position is full (or the queue empty),
 * the first claim wins and the entry is a plain one. The steps and their
 * order are ring_pop's and dequeue_body's, one attempt. */
/* dequeue's inline path; *held: the HELD word it wrote when it returns 0
 * from that path, else 0 (the full paths do not say) */
static MDCOM_ALWAYS_INLINE int dequeue_inline(struct mdcom_fifoch *ch, uint32_t *id, uint32_t *len,
                                              uint32_t *held)
{
    mdcom_wire_oprec *rec;
    mdcom_wire_qslot *sl;
    mdcom_aword *posw;
    uint32_t pos, seq, v, l, s, n;
    *held = 0;
    if (ch->hb && beat_inline(ch)) /* a sign of life, as dequeue_full's mdcom_beat */
        return dequeue_full(ch, id, len);
    /* private words into locals: the shared stores below could alias them */
    posw = &ch->ctl->deq.pos;
    n = ch->block_count;
    rec = mdcom_ch_rec(ch);
    if (MDCOM_REC_SHARED && !rec) /* none of our own yet, or the shared one */
        return dequeue_full(ch, id, len);
    if (MDCOM_HAVE_PREFETCH)
        rx_prefetch(ch);
    /* relaxed: a hint; the CAS in pop_claim decides */
    pos = mdcom_load(posw, memory_order_relaxed);
    sl = QSLOT(ch->q, pos & ch->qmask); /* masked: always in bounds */
    seq = pop_seq(sl);
    if (seq != SEQ_FULL(pos)) {
        /* empty unless our position is stale or the entry is a skip */
        if (seq != SEQ_SKIP(pos) && mdcom_load(posw, memory_order_relaxed) == pos)
            return -EAGAIN;
        return dequeue_full(ch, id, len);
    }
    /* an entry of a newer generation: the full path says so (gen_moved) */
    if (gen_moved(&ch->hdr->generation, ch->gen))
        return dequeue_full(ch, id, len);
    pop_read(sl, ch->blocks, ch->stride, n, &v, &l, &s);
    if (MDCOM_CUT_INLINE && v == MDCOM_CUT_QID_INLINE)
        return MDCOM_CUT_EINLINE; /* an inline entry: recv's to take */
    if (!pop_claim(posw, &pos, rec, v, s, ch->op_deq))
        return dequeue_full(ch, id, len);
    /* (No second look after the claim, as ring_pop makes: a re-format
     * between the look above and the claim also reset the block words, so
     * the CAS below fails on the entry we read before it - unless the new
     * generation's word of that block equals the old one in state, owner,
     * incarnation and use count - and the full path that follows looks at
     * the generation again. Two instructions less per message on the M4.) */
    if (v >= n || MDCOM_BLK_STATE(s) != MDCOM_BLK_QUEUED || l > ch->block_size)
        return dequeue_claimed(ch, v, l, s, id, len);
    {
        uint32_t cur = MDCOM_CUT_NOQ ? s - (MDCOM_BLK_QUEUED - MDCOM_BLK_ALLOC) : s,
                 h = (s & 0xffff0000u) | ch->held_so;
        /* weak: a spurious failure is retried by dequeue_claimed */
        if (!blk_hold(blk_word(ch, v), &cur, h, 1))
            return dequeue_claimed(ch, v, l, s, id, len);
        /* taken for dead while we ran (a heartbeat promise only): deq_finish
         * judges, as on the full path */
        if (ch->hb && !self_ok(ch))
            return deq_finish(ch, v, l, id, len);
        *held = h;
    }
    if (MDCOM_HAVE_PREFETCH) /* relaxed: a private guess (see rx_prefetch) */
        mdcom_store(&ch->rx_next, v + 1 == n ? 0 : v + 1, memory_order_relaxed);
    *id = v;
    if (len)
        *len = l;
    return 0;
}

int mdcom_fifoch_dequeue(mdcom_fifoch_t *ch, uint32_t *id, uint32_t *len)
{
    uint32_t held;
    if (!ch || ch->rx_fast != (uintptr_t)ch || !id)
        return dequeue_full(ch, id, len);
    return dequeue_inline(ch, id, len, &held);
}

int mdcom_fifoch_notify(mdcom_fifoch_t *ch)
{
    if (!valid_fifo(ch))
        return -EINVAL;
    notify_inline(ch);
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
        mdcom_load(&ch->ctl->event.word, memory_order_acquire) != a->ev_snap)
        got |= MDCOM_EV_NOTIFY;
    return got;
}

#if defined(__linux__) /* its only user: src/linux/events.c (the Linux port) */
uint32_t mdcom_fifo_events(struct mdcom_fifoch *ch, uint32_t events, uint32_t ev_snap)
{
    struct wait_arg a;
    a.ch = ch;
    a.events = events;
    a.ev_snap = ev_snap;
    return (uint32_t)fifo_cond(&a);
}
#endif

int mdcom_fifoch_wait(mdcom_fifoch_t *ch, uint32_t events, int64_t timeout_ns)
{
    const uint32_t all = MDCOM_EV_RX | MDCOM_EV_TX | MDCOM_EV_SPACE | MDCOM_EV_NOTIFY;
    mdcom_aword *waiters;
    struct wait_arg a;
    int r;
    if (!valid_fifo(ch) || !events || (events & ~all))
        return -EINVAL;
    waiters = &ch->ctl->event.waiters;
    a.ch = ch;
    a.events = events;
    a.ev_snap = 0;
    if (events & MDCOM_EV_NOTIFY) {
        /* notifiers change the event word only when someone waits: announce
         * for the whole wait so that every later notify() is seen */
        mdcom_wait_begin(ch->m, 1, ch->index, waiters);
        /* fence: the announcement is visible before we take the snapshot */
        mdcom_fence(memory_order_seq_cst);
        a.ev_snap = mdcom_load(&ch->ctl->event.word, memory_order_relaxed);
    }
    r = mdcom_wait_word(ch->m, ch->index, &ch->ctl->event.word, waiters, &ch->spin_cur,
                        mdcom_load(&ch->spin_max, memory_order_relaxed), fifo_cond, &a, timeout_ns);
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

static int64_t remaining(struct mdcom_instance *m, struct budget *b)
{
    uint64_t now;
    if (b->timeout_ns <= 0)
        return b->timeout_ns; /* MDCOM_POLL or MDCOM_FOREVER */
    now = mdcom_now(m);
    if (!b->deadline)
        b->deadline = now + (uint64_t)b->timeout_ns;
    return now >= b->deadline ? 0 : (int64_t)(b->deadline - now);
}

/* send after alloc: id holds the message (len bytes copied); queue it,
 * waiting for space within the budget. */
static int send_queue(struct mdcom_fifoch *ch, uint32_t id, uint32_t len, struct budget *b)
{
    uint32_t tries;
    int r;
    for (tries = 0; (r = mdcom_fifoch_enqueue(ch, id, len)) == -EAGAIN; tries++) {
        /* queue shallower than the pool and full: receivers notify as they
         * drain. The wait may say "space" and the enqueue still find none
         * (another producer took it, or the words lie): past the deadline
         * (a poll: after one retry) that is a timeout, not another round */
        int64_t rem = remaining(ch->m, b);
        if (tries && rem == 0) {
            r = -ETIMEDOUT;
            break;
        }
        r = mdcom_fifoch_wait(ch, MDCOM_EV_SPACE, rem);
        if (r < 0)
            break;
    }
    if (r < 0) {
        (void)mdcom_fifoch_free(ch, id);
        return r;
    }
    (void)mdcom_fifoch_notify(ch); /* out of line: a full queue is no hot path */
    return r;
}

/* send's slow part: a bad argument, or no block on the inline path (or no
 * inline path): alloc, waiting within the budget. 0 with *id (send copies
 * and queues it), or an error. *timeout_ns becomes what is left of it for
 * the queueing (unchanged when no time was spent waiting). */
static MDCOM_COLD int send_alloc(struct mdcom_fifoch *ch, const void *buf, uint32_t len,
                                 int64_t *timeout_ns, uint32_t *id)
{
    struct budget b = {*timeout_ns, 0};
    uint32_t tries;
    int r;
    if (!valid_fifo(ch) || (!buf && len))
        return -EINVAL;
    if (len > ch->block_size)
        return -EMSGSIZE;
    tx_prefetch(ch); /* the lines alloc, the copy and enqueue will write */
    /* the timeout runs from here: the alloc below may reclaim the dead for
     * MDCOM_REAP_BUDGET_NS (the inline path, which reads no clock, found
     * no block) */
    (void)remaining(ch->m, &b);
    for (tries = 0; (r = mdcom_fifoch_alloc(ch, id)) == -ENOBUFS; tries++) {
        /* as in send_queue: a wait that says "a block is free" and an alloc
         * that finds none end at the deadline */
        int64_t rem = remaining(ch->m, &b);
        if (tries && rem == 0)
            return -ETIMEDOUT;
        r = mdcom_fifoch_wait(ch, MDCOM_EV_TX, rem);
        if (r < 0)
            return r;
    }
    if (b.deadline)
        *timeout_ns = remaining(ch->m, &b);
    return r;
}

#if MDCOM_CUT_INLINE
/* An INLINE cut build's send of a payload that fits a slot: claim a
 * position, copy the payload into the slot, publish. 0, or -EAGAIN (full,
 * or the position taken: the caller polls again). */
static int inline_send(struct mdcom_fifoch *ch, const void *buf, uint32_t len)
{
    mdcom_aword *posw = &ch->ctl->enq.pos;
    /* relaxed: hints; the CAS decides */
    uint32_t pos = mdcom_load(posw, memory_order_relaxed);
    uint32_t d = mdcom_load(&ch->deq_cache, memory_order_relaxed);
    mdcom_wire_qslot *sl = QSLOT(ch->q, pos & ch->qmask);
    /* the slot's entry and payload lines asked for writing first, as
     * tx_prefetch does for the normal path */
    mdcom_prefetchw(ch->pfw, sl);
    mdcom_prefetchw(ch->pfw, (uint8_t *)sl + MDCOM_CUT_INLINE_OFF);
    if (!push_room(&ch->ctl->deq.pos, &ch->deq_cache, ch->qmask, pos, &d) ||
        !mdcom_cas_weak(posw, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed))
        return -EAGAIN;
    sl = QSLOT(ch->q, pos & ch->qmask);
    if (len)
        memcpy((uint8_t *)sl + MDCOM_CUT_INLINE_OFF, buf, len);
    push_publish(sl, pos, MDCOM_CUT_QID_INLINE, len, 0);
    notify_inline(ch);
    return 0;
}

/* ... and its recv: the entry at the consumers' position, if inline, copied
 * out before the claim (once deq_pos passes it a producer may reuse the
 * slot). The length, -EMSGSIZE, -EPROTO, or 1: not an inline entry (or
 * none, or the claim lost), the normal path's. */
static int inline_recv(struct mdcom_fifoch *ch, void *buf, uint32_t cap)
{
    uint32_t pos = mdcom_load(&ch->ctl->deq.pos, memory_order_relaxed); /* hint */
    mdcom_wire_qslot *sl = QSLOT(ch->q, pos & ch->qmask);
    uint32_t l;
    if (pop_seq(sl) != SEQ_FULL(pos) ||
        mdcom_load(&sl->id, memory_order_relaxed) != MDCOM_CUT_QID_INLINE)
        return 1;
    l = mdcom_load(&sl->len, memory_order_relaxed);
    if (l > MDCOM_CUT_INLINE_MAX)
        return -EPROTO;
    if (cap && l)
        memcpy(buf, (uint8_t *)sl + MDCOM_CUT_INLINE_OFF, l < cap ? l : cap);
    if (!pop_advance(&ch->ctl->deq.pos, &pos))
        return 1;
    notify_inline(ch);
    return l > cap ? -EMSGSIZE : (int)l;
}
#endif

/* The inline path: alloc, copy, enqueue and notify with one handle check;
 * a dry pool goes to send_alloc (which waits), a full queue to send_queue. */
int mdcom_fifoch_send(mdcom_fifoch_t *ch, const void *buf, uint32_t len, int64_t timeout_ns)
{
    uint32_t id, w = 0;
    int r;
#if MDCOM_CUT_INLINE
    if (tx_open(ch) && len <= MDCOM_CUT_INLINE_MAX && (buf || !len))
        return inline_send(ch, buf, len);
#endif
#if MDCOM_CUT_AHEAD
    if (ch && ch->ahead_w && tx_open(ch) && len <= ch->block_size && (buf || !len)) {
        id = ch->ahead_id; /* claimed by the last send, after its notify */
        w = ch->ahead_w;
        ch->ahead_w = 0;
        r = 0;
        if (MDCOM_HAVE_PREFETCH)
            tx_prefetch_slot(ch);
    } else
#endif
        if (!tx_open(ch) || len > ch->block_size || (!buf && len))
        r = send_alloc(ch, buf, len, &timeout_ns, &id);
    else {
        if (MDCOM_HAVE_PREFETCH)
            tx_prefetch(ch);
        r = alloc_inline(ch, &id, &w);
        if (r == -ENOBUFS)
            r = send_alloc(ch, buf, len, &timeout_ns, &id);
    }
    if (r)
        return r;
    if (len) /* buf may be NULL when len is 0 */
        memcpy(block_ptr(ch, id), buf, len);
    /* the block's word is the one alloc's inline path wrote (ours alone to
     * change, or a reaper's: its CAS and ours decide, as in enqueue_word);
     * after the full path, enqueue reads it */
    r = w ? enqueue_word(ch, id, len, w) : mdcom_fifoch_enqueue(ch, id, len);
    if (r == 0) {
        notify_inline(ch);
#if MDCOM_CUT_AHEAD
        /* the next message's block claimed now, while the peer works (its
         * state line's transfer off the next send's path) */
        if (tx_open(ch) && !ch->hb) {
            if (alloc_inline(ch, &ch->ahead_id, &ch->ahead_w) != 0)
                ch->ahead_w = 0;
            else if (!ch->ahead_w) /* the full path's block: no word to reuse */
                (void)mdcom_fifoch_free(ch, ch->ahead_id);
        }
#endif
        return 0;
    }
    if (r == -EAGAIN) {
        struct budget b = {timeout_ns, 0};
        return send_queue(ch, id, len, &b);
    }
    (void)mdcom_fifoch_free(ch, id);
    return r;
}

/* recv after dequeue: copy out, give the block back, tell waiting senders. */
static MDCOM_ALWAYS_INLINE int recv_done(struct mdcom_fifoch *ch, uint32_t id, uint32_t len,
                                         void *buf, uint32_t cap, uint32_t held)
{
    int r = 0;
    if (cap && len)
        memcpy(buf, block_ptr(ch, id), len < cap ? len : cap);
    if (MDCOM_CUT_BSTATE || gen_moved(&ch->hdr->generation, ch->gen)) {
        /* re-formatted in place since our dequeue: the message was ours
         * (taken before), the block word is the new generation's, not ours
         * to free; the next call says -ECONNRESET (a BSTATE cut build: no
         * block word to free) */
    } else if (held && !ch->hb) /* the word our inline dequeue wrote: ours, a store as in
                               * mdcom_block_release. release: our reads of the data
                               * are done before the next alloc */
        mdcom_store(blk_word(ch, id), (held & 0xffff0000u) | MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0),
                    memory_order_release);
    else if ((r = mdcom_block_release(ch, id, ch->who)) != 0)
        r = not_ours(ch, r);
    notify_inline(ch);
    if (len > cap) {
        count_error(ch);
        return -EMSGSIZE;
    }
    return r ? r : (int)len;
}

/* recv's slow part: a bad argument, or nothing to take on the inline path
 * (or no inline path): dequeue, waiting within the budget. 0 with *id and
 * *len of the message dequeued (recv_done finishes it), or an error. */
static MDCOM_COLD int recv_wait(struct mdcom_fifoch *ch, void *buf, uint32_t cap,
                                int64_t timeout_ns, uint32_t *id, uint32_t *len)
{
    struct budget b = {timeout_ns, 0};
    uint32_t tries;
    int r;
    if (!valid_fifo(ch) || (!buf && cap))
        return -EINVAL;
    for (tries = 0; (r = mdcom_fifoch_dequeue(ch, id, len)) == -EAGAIN; tries++) {
        /* as in send_queue: "an entry is there" and an empty dequeue end
         * at the deadline */
        int64_t rem = remaining(ch->m, &b);
        if (tries && rem == 0)
            return -ETIMEDOUT;
        r = mdcom_fifoch_wait(ch, MDCOM_EV_RX, rem);
        if (r < 0)
            return r;
    }
    return r;
}

/* The inline path: a message already there is dequeued, copied out and its
 * block given back with one handle check; an empty queue goes to recv_wait
 * (which waits). */
int mdcom_fifoch_recv(mdcom_fifoch_t *ch, void *buf, uint32_t cap, int64_t timeout_ns)
{
    uint32_t id, len, held = 0;
    int r;
#if MDCOM_CUT_INLINE
    if (ch && ch->rx_fast == (uintptr_t)ch && (buf || !cap) && (r = inline_recv(ch, buf, cap)) != 1)
        return r;
#endif
    if (!ch || ch->rx_fast != (uintptr_t)ch || (!buf && cap) ||
        (r = dequeue_inline(ch, &id, &len, &held)) == -EAGAIN)
        r = recv_wait(ch, buf, cap, timeout_ns, &id, &len);
#if MDCOM_CUT_INLINE
    if (r == MDCOM_CUT_EINLINE) /* it arrived meanwhile */
        return (r = inline_recv(ch, buf, cap)) == 1 ? -EAGAIN : r;
#endif
    if (r)
        return r;
    return recv_done(ch, id, len, buf, cap, held);
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
        mdcom_store(&ch->filter_type, MDCOM_FILTER_NONE, memory_order_release);
        tx_gate(ch);
        return 0;
    }
    mdcom_store(&ch->filter_n, f->n, memory_order_relaxed);
    mdcom_store(&ch->filter_count, 0, memory_order_relaxed);
    mdcom_store(&ch->filter_fn, f->fn, memory_order_relaxed);
    mdcom_store(&ch->filter_arg, f->arg, memory_order_relaxed);
    /* release: n/fn/arg are visible to enqueuers that see the new type */
    mdcom_store(&ch->filter_type, f->type, memory_order_release);
    tx_gate(ch);
    return 0;
}


int mdcom_fifoch_set_spin(mdcom_fifoch_t *ch, uint32_t spin_ns)
{
    if (!valid_fifo(ch))
        return -EINVAL;
    mdcom_store(&ch->spin_max, spin_ns, memory_order_relaxed);
    mdcom_store(&ch->spin_cur, spin_ns == MDCOM_NO_SPIN ? 0 : spin_ns, memory_order_relaxed);
    return 0;
}
