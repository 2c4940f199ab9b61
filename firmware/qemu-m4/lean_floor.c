/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lean_floor.c - a reference floor for the API cost table printed by
 * `mdcom-bench --target qemu-m4 api`, NOT used by mdcom. A minimal
 * single-producer / single-consumer channel in a static RAM area: a pool of
 * LF_BLOCKS blocks with one state word each, a ring of LF_SLOTS slots
 * {seq, id, len, state}. It keeps the checks the project's rules require
 * (the handle, the arguments; the peer is untrusted: each shared field read
 * once and validated before use, private copies of our own positions) and
 * leaves out what mdcom's multi-producer / multi-consumer channels with
 * crash recovery need (CAS loops, op records, heartbeats, cache hooks). It
 * is measured by fw_apicost.c in the same run, with the same harness and
 * compile flags, so that mdcom minus floor is the price of those.
 */
#include "lean_floor.h"

#include <errno.h>

#define LF_TAG 0x6c666c6eu
#define LF_SO(w) ((w)&0xffffu) /* state | owner: the word without its generation */

void lf_format(lf_shared *sh)
{
    uint32_t k;
    for (k = 0; k < LF_BLOCKS; k++)
        atomic_store_explicit(&sh->blk[k], LF_WORD(LF_FREE, 0, 0), memory_order_relaxed);
    for (k = 0; k < LF_SLOTS; k++)
        atomic_store_explicit(&sh->ring[k].seq, 0, memory_order_relaxed);
    atomic_store_explicit(&sh->prod, 0, memory_order_relaxed);
    /* release: the words above happen before a side's acquire in lf_open */
    atomic_store_explicit(&sh->cons, 0, memory_order_release);
}

int lf_open(lf_chan *c, lf_shared *sh, uint32_t me)
{
    if (!c || !sh || me == 0 || me > 0xffu)
        return -EINVAL;
    c->tag = LF_TAG;
    c->sh = sh;
    c->hint = 0;
    c->alloc_so = LF_WORD(LF_ALLOC, me, 0);
    c->held_so = LF_WORD(LF_HELD, me, 0);
    c->alloc_delta = LF_WORD(LF_ALLOC, me, 1) - LF_FREE;
    /* acquire: pairs with lf_format's release */
    c->cons_seen = c->tail = atomic_load_explicit(&sh->cons, memory_order_acquire);
    /* relaxed: ordered by the acquire above */
    c->head = atomic_load_explicit(&sh->prod, memory_order_relaxed);
    return 0;
}

/* The floor looks at the hinted block only (-ENOBUFS when it is not free)
 * and scans nothing, where mdcom scans the pool: with one consumer freeing
 * blocks in the order they were queued, the hinted one comes back next. */
int lf_alloc(lf_chan *c, uint32_t *id)
{
    lf_shared *sh;
    uint32_t v, w;
    if (!c || c->tag != LF_TAG || !id)
        return -EINVAL;
    sh = c->sh;
    v = c->hint;
    /* acquire: the consumer's use of the data (its release in lf_free)
     * happens before we hand the block out again */
    w = atomic_load_explicit(&sh->blk[v], memory_order_acquire);
    if (LF_SO(w) != LF_FREE)
        return -ENOBUFS;
    /* relaxed, a plain store and no CAS: only the producer allocates and no
     * one else changes a FREE block; enqueue's release publishes the word */
    atomic_store_explicit(&sh->blk[v], w + c->alloc_delta, memory_order_relaxed);
    c->hint = (v + 1u) & (LF_BLOCKS - 1u);
    *id = v;
    return 0;
}

int lf_free(lf_chan *c, uint32_t id)
{
    uint32_t w;
    if (!c || c->tag != LF_TAG || id >= LF_BLOCKS)
        return -EINVAL;
    /* relaxed: if it is our ALLOC or HELD word, only we change it */
    w = atomic_load_explicit(&c->sh->blk[id], memory_order_relaxed);
    if (LF_SO(w) != c->alloc_so && LF_SO(w) != c->held_so)
        return -EALREADY;
    /* release: our use of the data happens before the acquire in lf_alloc
     * that hands the block out again */
    atomic_store_explicit(&c->sh->blk[id], LF_WORD(LF_FREE, 0, w >> 16), memory_order_release);
    return 0;
}

int lf_enqueue(lf_chan *c, uint32_t id, uint32_t len)
{
    lf_shared *sh;
    lf_slot *s;
    uint32_t w, h, t;
    if (!c || c->tag != LF_TAG || id >= LF_BLOCKS || len > LF_BLOCK_SIZE)
        return -EINVAL;
    sh = c->sh;
    /* relaxed: if it is our ALLOC word, only we change it */
    w = atomic_load_explicit(&sh->blk[id], memory_order_relaxed);
    if (LF_SO(w) != c->alloc_so)
        return -EALREADY;
    h = c->head;
    if (h - c->cons_seen >= LF_SLOTS) { /* full by our private copy: look again */
        /* acquire: the consumer's reads of a slot happen before we reuse it */
        t = atomic_load_explicit(&sh->cons, memory_order_acquire);
        if (h - t > LF_SLOTS)
            return -EPROTO; /* a consumer position we never made possible */
        c->cons_seen = t;
        if (h - t == LF_SLOTS)
            return -EAGAIN;
    }
    w += LF_QUEUED - LF_ALLOC; /* our QUEUED word, the same generation */
    /* relaxed: the word and the slot's fields are published by seq below */
    atomic_store_explicit(&sh->blk[id], w, memory_order_relaxed);
    s = &sh->ring[h & (LF_SLOTS - 1u)];
    atomic_store_explicit(&s->id, id, memory_order_relaxed);
    atomic_store_explicit(&s->len, len, memory_order_relaxed);
    atomic_store_explicit(&s->state, w, memory_order_relaxed);
    /* release: the data, the block word and the slot happen before the
     * consumer's acquire of seq */
    atomic_store_explicit(&s->seq, h + 1u, memory_order_release);
    c->head = h + 1u;
    /* relaxed: for waiters and monitors; the consumer goes by the slot's seq */
    atomic_store_explicit(&sh->prod, h + 1u, memory_order_relaxed);
    return 0;
}

int lf_dequeue(lf_chan *c, uint32_t *id, uint32_t *len)
{
    lf_shared *sh;
    lf_slot *s;
    uint32_t t, i, n, st;
    if (!c || c->tag != LF_TAG || !id || !len)
        return -EINVAL;
    sh = c->sh;
    t = c->tail;
    s = &sh->ring[t & (LF_SLOTS - 1u)];
    /* acquire: pairs with enqueue's release of seq (slot, block word, data) */
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != t + 1u)
        return -EAGAIN;
    /* relaxed: ordered by the acquire above; each field read once */
    i = atomic_load_explicit(&s->id, memory_order_relaxed);
    n = atomic_load_explicit(&s->len, memory_order_relaxed);
    st = atomic_load_explicit(&s->state, memory_order_relaxed);
    if (i >= LF_BLOCKS || n > LF_BLOCK_SIZE || (st & 0xffu) != LF_QUEUED)
        return -EPROTO; /* the slot stays: the floor repairs nothing */
    /* relaxed: ordered by the acquire of seq. A check and a plain store, no
     * CAS: in this SPSC floor only the consumer changes a QUEUED block (the
     * producer gave it up by queueing it), so the word cannot change between
     * the two */
    if (atomic_load_explicit(&sh->blk[i], memory_order_relaxed) != st)
        return -EPROTO;
    atomic_store_explicit(&sh->blk[i], st - LF_SO(st) + c->held_so, memory_order_relaxed);
    c->tail = t + 1u;
    /* release: our reads of the slot happen before the producer's acquire
     * of cons lets it reuse the slot */
    atomic_store_explicit(&sh->cons, t + 1u, memory_order_release);
    *id = i;
    *len = n;
    return 0;
}
