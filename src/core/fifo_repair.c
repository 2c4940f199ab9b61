/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fifo_repair.c - putting FIFO channels right after a death or a forged
 * write, for the reaper (reap.c: a dead process' queue operation in flight,
 * from its op record) and the master domain's audit (master.c: positions,
 * holes, block states and owners that the shared words prove wrong), and
 * mdcom_fifoch_init (the master empties a channel). Every repair is a CAS
 * from the value judged, so a live process that acts first wins; none is
 * made while a live process' op record claims the position or block.
 * Not built into the remote-only profile (MDCOM_PROFILE=remote).
 */
#include <errno.h>

#include "fifo_internal.h"

/* 1 when block id sits in a published slot between deq_pos and enq_pos, or
 * when the positions are absurd (then nothing is freed). */
static int queued_in_ring(struct mdcom_fifoch *ch, uint32_t id)
{
    /* acquire: pairs with consumers' release CAS, so their op records are
     * visible to live_deq_claim once we see them past an entry */
    uint32_t d = mdcom_load(&ch->ctl->deq.pos, memory_order_acquire);
    uint32_t e = mdcom_load(&ch->ctl->enq.pos, memory_order_relaxed);
    uint32_t p;
    if (e - d > ch->qmask + 1)
        return 1;
    for (p = d; p != e; p++) {
        mdcom_wire_qslot *s = QSLOT(ch->q, p & ch->qmask);
        if (mdcom_load(&s->seq, memory_order_acquire) == SEQ_FULL(p) &&
            mdcom_load(&s->id, memory_order_relaxed) == id)
            return 1;
    }
    return 0;
}

/* 1 when a process entry other than skip's (and not free) has a record of
 * queue operation op with pos (by_pos) or id equal to x and, when w != 0,
 * state equal to w: the records of threads that may still be running, whose
 * operations in flight are not to be repaired. */
static int live_record(struct mdcom_instance *m, uint32_t op, uint32_t by_pos, uint32_t x,
                       uint32_t w, uint32_t skip)
{
    uint32_t i, k;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        if (i + 1 == skip || mdcom_load(&p->owner, memory_order_relaxed) == MDCOM_PROC_FREE)
            continue;
        for (k = 0; k < MDCOM_PROC_RECS; k++) {
            mdcom_wire_oprec *r = &p->rec[k];
            if (mdcom_load(&r->op, memory_order_relaxed) == op &&
                mdcom_load(by_pos ? &r->pos : &r->id, memory_order_relaxed) == x &&
                (!w || mdcom_load(&r->state, memory_order_relaxed) == w))
                return 1;
        }
    }
    return 0;
}

/* A live consumer claimed block id (in the use whose word is w) to hold it. */
#define live_deq_claim(m, chan, id, w, skip)                                                       \
    live_record((m), MDCOM_OP_MAKE(MDCOM_OP_DEQ, (chan)), 0, (id), (w), (skip))
/* A live producer records position pos: it claimed it (and will publish it),
 * or is about to try. A dead producer's record may name a position it lost
 * to such a one (it died between a failed claim and its next attempt). */
#define live_enq_claim(m, chan, pos, skip)                                                         \
    live_record((m), MDCOM_OP_MAKE(MDCOM_OP_ENQ, (chan)), 1, (pos), 0, (skip))
/* A live producer's record names block id: it marked it QUEUED and may not
 * have published it yet (an enqueue record names the block, not its word). */
#define live_enq_block(m, chan, id)                                                                \
    live_record((m), MDCOM_OP_MAKE(MDCOM_OP_ENQ, (chan)), 0, (id), 0, 0)


/* Close the hole at position pos, whose seq read seq (unpublished), unless
 * a live producer records the position (its claim). 1 closed. */
static int fill_skip(struct mdcom_fifoch *ch, uint32_t pos, uint32_t seq, uint32_t skip_owner)
{
    mdcom_wire_qslot *s = QSLOT(ch->q, pos & ch->qmask);
    if (seq == SEQ_FULL(pos) || seq == SEQ_SKIP(pos))
        return 0; /* published or closed */
    /* Consumers still before pos (read after seq: positions only grow), so
     * when seq was read no producer could have claimed a later lap of this
     * slot (that needs the consumers past pos): seq is what pos left
     * unpublished, or garbage, never a later lap's entry. The caller's view
     * of the positions may be old. acquire: as in queued_in_ring */
    if (pos - mdcom_load(&ch->ctl->deq.pos, memory_order_acquire) >= 0x80000000u)
        return 0;
    if (live_enq_claim(ch->m, ch->index, pos, skip_owner))
        return 0;
    /* by CAS from the value judged: a producer that publishes meanwhile
     * wins. relaxed: a skip carries no data to publish */
    return mdcom_cas(&s->seq, &seq, SEQ_SKIP(pos), memory_order_relaxed, memory_order_relaxed);
}

/* Free block id if its state word is still w, a QUEUED one, but the block
 * is in no slot and claimed by no live consumer: nobody can ever dequeue it.
 * w carries the generation, so a later message in the same block (its
 * producer between marking it QUEUED and publishing its slot) is not taken
 * for the orphan. */
static int free_orphan(struct mdcom_fifoch *ch, uint32_t id, uint32_t w, uint32_t dead)
{
    if (MDCOM_BLK_STATE(w) != MDCOM_BLK_QUEUED ||
        mdcom_load(blk_word(ch, id), memory_order_relaxed) != w)
        return 0;
    if (queued_in_ring(ch, id) || live_deq_claim(ch->m, ch->index, id, w, dead))
        return 0;
    /* release: as in blk_free (fifo.c) */
    return mdcom_cas(blk_word(ch, id), &w, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(w)),
                     memory_order_release, memory_order_relaxed);
}

void mdcom_fifo_reap_op(struct mdcom_instance *m, uint32_t owner, uint32_t op, uint32_t pos,
                        uint32_t id, uint32_t state)
{
    uint32_t chan = (op & 0xffffu) - 1u, lost = 0, n = 0;
    struct mdcom_fifoch *ch;
    if (op && chan < m->cfg->n_channels && m->ch[chan].tag == MDCOM_TAG_FIFO) {
        ch = &m->ch[chan].f;
        if (op >> 16 == MDCOM_OP_ENQ) {
            /* a claimed position it never published: publish "skip" there so
             * that consumers go past it, unless a live producer claims it.
             * acquire: as in queued_in_ring */
            uint32_t d = mdcom_load(&ch->ctl->deq.pos, memory_order_acquire);
            uint32_t e = mdcom_load(&ch->ctl->enq.pos, memory_order_relaxed);
            mdcom_wire_qslot *s = QSLOT(ch->q, pos & ch->qmask);
            if (pos - d < e - d && e - d <= ch->qmask + 1)
                (void)fill_skip(ch, pos, mdcom_load(&s->seq, memory_order_relaxed), owner);
            /* the block it marked QUEUED, if it never made it into a slot:
             * QUEUED by it (its owner byte; the record names the block, not
             * its word, and a later use of the block by it would have
             * rewritten the record) and in no queue entry */
            if (id < ch->block_count) {
                uint32_t w = mdcom_load(blk_word(ch, id), memory_order_relaxed);
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
        if (n)
            mdcom_fifo_reclaimed(ch, n, lost, 0);
    }
}

/* The channel empty again (all blocks free, queue empty, counters zero),
 * its sleepers' count kept and their event word changed so they wake. */
static void reinit_channel(struct mdcom_fifoch *ch)
{
    struct mdcom_instance *m = ch->m;
    uint32_t ev = mdcom_load(&ch->ctl->event.word, memory_order_relaxed);
    uint32_t wt = mdcom_load(&ch->ctl->event.waiters, memory_order_relaxed);
    mdcom_layout_format_channel(m->base, &m->cl[ch->index]);
    mdcom_store(&ch->ctl->event.waiters, wt, memory_order_relaxed);
    mdcom_store(&ch->ctl->event.word, ev + 1, memory_order_relaxed);
    /* fence: the re-initialised channel is visible before sleepers wake */
    mdcom_fence(memory_order_seq_cst);
    m->plat->doorbell.ring(m->plat->doorbell.ctx, &ch->ctl->event.word, ch->index);
}

#define AUDIT_QUEUED 8u /* QUEUED blocks examined per audit (a queue pass each) */

/* 1 when a block's who (owner slot + 1 and incarnation, MDCOM_BLK_WHO)
 * names no live attachment: a slot out of range, a free entry, or an entry
 * claimed again since (another incarnation). An entry being claimed or
 * reaped is left to its claimer. */
static int who_gone(struct mdcom_instance *m, uint32_t who)
{
    uint32_t o = who >> 4, w;
    if (o == 0 || o > MDCOM_MAX_PROCS)
        return 1;
    /* acquire: pairs with claim_proc's release, so incarn is the occupant's */
    w = mdcom_load(&m->procs[o - 1].owner, memory_order_acquire);
    if (MDCOM_PROC_IS_CLAIMING(w))
        return 0;
    return w == MDCOM_PROC_FREE || w >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS ||
           (mdcom_read_once(m->procs[o - 1].incarn) & 0xfu) != (who & 0xfu);
}

uint32_t mdcom_fifo_audit(struct mdcom_fifoch *ch)
{
    struct mdcom_instance *m = ch->m;
    mdcom_wire_fifo_ctl *ctl = ch->ctl; /* private: loaded once, not after each atomic */
    uint32_t index = ch->index, d, e, p, k, id, checks, fixed = 0, lost = 0;
    uint32_t cand[AUDIT_QUEUED], cand_w[AUDIT_QUEUED], ncand = 0, last = 0;
    if (ch->tag != MDCOM_TAG_FIFO)
        return 0;
    /* A snapshot of both positions: the consumers' read again after the
     * producers', and kept only if it did not move (positions only grow), so
     * that e - d is what the queue held at one instant. Two reads at two
     * instants can differ by more than the capacity under live traffic, and
     * must not be taken for corruption. acquire: as in queued_in_ring */
    for (k = 0;; k++) {
        d = mdcom_load(&ctl->deq.pos, memory_order_acquire);
        e = mdcom_load(&ctl->enq.pos, memory_order_acquire);
        if (mdcom_load(&ctl->deq.pos, memory_order_relaxed) == d)
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
     * ring_push), gets a skip entry. (Two periods, not one: a claim is
     * recorded by relaxed stores, so an audit just after a claim may not
     * see its record yet.) */
    if (ch->audit_e2 - d <= e - d) {
        for (p = d; p != ch->audit_e2; p++) {
            mdcom_wire_qslot *s = QSLOT(ch->q, p & ch->qmask);
            if (!fill_skip(ch, p, mdcom_load(&s->seq, memory_order_acquire), 0))
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
        bs = blk_word(ch, id);
        w = mdcom_load(bs, memory_order_relaxed);
        st = MDCOM_BLK_STATE(w);
        if (st == MDCOM_BLK_FREE) {
            orphan = MDCOM_BLK_WHO(w) != 0; /* FREE names nobody */
        } else if (st == MDCOM_BLK_ALLOC || st == MDCOM_BLK_HELD) {
            orphan = who_gone(m, MDCOM_BLK_WHO(w));
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
            orphan = orphan && seen;
        } else {
            orphan = 1; /* no such state */
        }
        /* by CAS on the word judged: a change since (a live owner) wins.
         * release: as in blk_free (fifo.c) */
        if (orphan && mdcom_cas(bs, &w, MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, MDCOM_BLK_GEN(w)),
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
    if (fixed)
        mdcom_fifo_reclaimed(ch, fixed, lost, 1);
    return fixed;
}

int mdcom_fifoch_init(mdcom_fifoch_t *ch)
{
    struct mdcom_instance *m;
    if (!valid_fifo(ch))
        return -EINVAL;
    m = ch->m;
    if (!m->is_master)
        return -EPERM;
    mdcom_store(&ch->filter_count, 0, memory_order_relaxed);
    reinit_channel(ch);
    return 0;
}
