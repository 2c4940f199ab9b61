/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smem.c - SMEM channels: a shared area guarded by an inter-domain lock.
 *
 * The lock word holds 0 (free) or the holder (MDCOM_LOCK_MAKE,
 * include/mdcom/wire.h): its process slot + 1 in bits 0-7 and its
 * incarnation in bits 8-23, so a dead owner, and a slot claimed again since,
 * can be identified. Ports with a hardware
 * semaphore (STM32 HSEM, i.MX SEMA4) replace lock_try/lock_release; the word
 * is still what waiters sleep on.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static inline int valid_smem(const struct mdcom_smemch *ch)
{
    return ch && ch->tag == MDCOM_TAG_SMEM;
}

void mdcom_smem_bind(struct mdcom_instance *m, struct mdcom_smemch *s, const mdcom_chan_layout *cl)
{
    uint8_t *a = m->base + cl->off;
    memset(s, 0, sizeof(*s));
    s->index = (uint32_t)(cl - m->cl);
    s->m = m;
    s->ctl = (mdcom_wire_smem_ctl *)a;
    s->data = a + cl->data_off;
    s->size = cl->data_size;
    s->can_use = (cl->senders >> m->domain) & 1u;
    atomic_init(&s->spin_cur, m->spin_ns == MDCOM_NO_SPIN ? 0 : m->spin_ns);
    s->tag = MDCOM_TAG_SMEM;
}

/* Lock word w of channel index from o to free (the port's lock_release, or
 * by CAS: a holder that came meanwhile stays): 1 released. release: the
 * holder's writes are visible to the next holder (whose acquire pairs
 * with it). Out of line: the repairs' (unlock has its own copy). */
static MDCOM_COLD int lock_free_from(struct mdcom_instance *m, uint32_t index, mdcom_aword *w,
                                     uint32_t o)
{
    const mdcom_platform *p = m->plat;
    if (p->lock_release)
        return p->lock_release(p->ctx, index, w, o) == 0;
    return mdcom_cas(w, &o, 0, memory_order_release, memory_order_relaxed);
}

void mdcom_smem_release_owner(struct mdcom_instance *m, uint32_t owner)
{
    /* owner: a lock word value, MDCOM_LOCK_MAKE(slot, incarnation) */
    uint32_t i;
    for (i = 0; i < m->cfg->n_channels; i++) {
        struct mdcom_smemch *ch = &m->ch[i].s;
        if (ch->tag == MDCOM_TAG_SMEM && lock_free_from(m, i, &ch->ctl->lock.word, owner))
            mdcom_ring_word(m, &ch->ctl->lock.word, &ch->ctl->lock.waiters, i);
    }
}

int mdcom_smemch_at(mdcom_t *m, uint32_t index, mdcom_smemch_t **out)
{
    return mdcom_chan_open(m, 0, index, MDCOM_TAG_SMEM, (void **)out);
}

int mdcom_smemch_open(mdcom_t *m, const char *name, mdcom_smemch_t **out)
{
    if (!name)
        return -EINVAL;
    return mdcom_chan_open(m, name, 0, MDCOM_TAG_SMEM, (void **)out);
}

int mdcom_smemch_get(mdcom_smemch_t *ch, void **ptr, uint32_t *size)
{
    if (!valid_smem(ch) || !ptr)
        return -EINVAL;
    *ptr = ch->data;
    if (size)
        *size = ch->size;
    return 0;
}

static int lock_try(struct mdcom_smemch *ch)
{
    const mdcom_platform *p = ch->m->plat;
    mdcom_aword *w = &ch->ctl->lock.word;
    uint32_t owner = ch->m->lock_owner;
    int r;
    if (p->lock_try) {
        r = p->lock_try(p->ctx, ch->index, w, owner);
    } else {
        uint32_t z = 0;
        /* acquire: see everything the previous holder wrote before unlocking */
        r = mdcom_cas(w, &z, owner, memory_order_acquire, memory_order_relaxed) ? 0 : -EBUSY;
    }
    if (r == -EBUSY && mdcom_load(w, memory_order_relaxed) == owner)
        return -EDEADLK;
    if (r == 0)
        mdcom_shm_invalidate(p, ch->data, ch->size);
    return r;
}

/* lock_try, and when the lock is busy, once more after reaping dead
 * processes (a dead holder's lock is released by the reap), or after
 * breaking a lock whose word names no live attachment (forged, or left by
 * an attachment whose entry was re-claimed since). */
static int lock_try_reap(struct mdcom_smemch *ch)
{
    int r = lock_try(ch);
    if (r == -EBUSY && mdcom_reap(ch->m) > 0)
        r = lock_try(ch);
    if (r == -EBUSY) {
        mdcom_aword *w = &ch->ctl->lock.word;
        uint32_t o = mdcom_load(w, memory_order_relaxed);
        /* from the value judged: a holder that came meanwhile stays (a
         * release as an unlock: nobody's writes to order, but the next
         * holder's acquire pairs with one) */
        if (mdcom_lock_orphaned(ch->m, o) && lock_free_from(ch->m, ch->index, w, o))
            r = lock_try(ch);
    }
    return r;
}

int mdcom_smemch_trylock(mdcom_smemch_t *ch)
{
    if (!valid_smem(ch))
        return -EINVAL;
    return lock_try_reap(ch);
}

static int lock_cond(void *p)
{
    struct mdcom_smemch *ch = (struct mdcom_smemch *)p;
    int r = mdcom_region_check(ch->m); /* a terminated region is not locked */
    if (r)
        return r;
    r = lock_try_reap(ch);
    return r == 0 ? 1 : r == -EBUSY ? 0 : r;
}

int mdcom_smemch_lock(mdcom_smemch_t *ch, int64_t timeout_ns)
{
    int r;
    if (!valid_smem(ch))
        return -EINVAL;
    r = mdcom_wait_word(ch->m, ch->index, &ch->ctl->lock.word, &ch->ctl->lock.waiters,
                        &ch->spin_cur, ch->m->spin_ns, lock_cond, ch, timeout_ns);
    if (r < 0)
        return r;
    return 0;
}

int mdcom_smemch_unlock(mdcom_smemch_t *ch)
{
    const mdcom_platform *p;
    mdcom_aword *w;
    uint32_t owner;
    int r;
    if (!valid_smem(ch))
        return -EINVAL;
    p = ch->m->plat;
    w = &ch->ctl->lock.word;
    owner = ch->m->lock_owner;
    mdcom_shm_clean(p, ch->data, ch->size);
    if (p->lock_release) {
        r = p->lock_release(p->ctx, ch->index, w, owner);
    } else {
        uint32_t o = owner;
        /* release: our writes to the area are visible before the lock reads free */
        r = mdcom_cas(w, &o, 0, memory_order_release, memory_order_relaxed) ? 0 : -EPERM;
    }
    if (r)
        /* not ours (any more): a process taken for dead learns why */
        return mdcom_self(ch->m) < 0 ? -ENOTCONN : r;
    mdcom_ring_word(ch->m, w, &ch->ctl->lock.waiters, ch->index);
    return 0;
}
