/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reap.c - dead processes: who is dead, and giving back what they held.
 *
 *   Any process that has to wait (each sleep slice), finds the pool dry or a
 *   lock busy, or asks mdcom_sense_process, scans the process table (at most
 *   once per ~34 ms per attachment). A dead process' entry is taken by CAS
 *   (one reaper wins), its operation in flight is finished or undone (its op
 *   record), its blocks go back to the pools (ALLOC and HELD; its QUEUED
 *   messages stay queued and are delivered), its locks are released, its
 *   waiter counts are given back, and the entry is freed. Processes of the
 *   master domain then run the audit (master.c), throttled.
 *   Not built into the remote-only profile (MDCOM_PROFILE=remote), where the
 *   master's processes reap (remote.c).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define REAP_SHIFT 25 /* reap at most once per 2^25 ns (~34 ms) */
#define AUDIT_SHIFT 27 /* the master domain audits at most once per 2^27 ns (~134 ms) */

/* 1 when the process of live entry i is dead: its platform says so, or it
 * promised a heartbeat and its heartbeat word has stood still for longer than
 * promised (measured by this attachment). The caller acquired the owner word,
 * so pid/token are complete; *pid_out and *token_out get the identity judged. */
static int proc_dead(struct mdcom *m, uint32_t i, uint32_t *pid_out, uint32_t *token_out)
{
    mdcom_wire_proc *p = &m->procs[i];
    struct mdcom_hb_seen *s = &m->hb[i];
    uint32_t pid = ((volatile mdcom_wire_proc *)p)->pid; /* read once */
    uint32_t token = ((volatile mdcom_wire_proc *)p)->token;
    uint32_t hb, val, now, key;
    *pid_out = pid;
    *token_out = token;
    if (mdcom_entry_dead(m, i, pid, token))
        return 1;
    hb = ((volatile mdcom_wire_proc *)p)->hb_ms; /* read once */
    if (hb == 0)
        return 0;
    if (hb > MDCOM_HEARTBEAT_MAX_MS)
        hb = MDCOM_HEARTBEAT_MAX_MS; /* a corrupted promise cannot overflow below */
    /* relaxed: the word's value is all that matters, not what it orders */
    val = atomic_load_explicit(&p->heartbeat, memory_order_relaxed);
    now = (uint32_t)(mdcom_now(m) >> 10); /* ~1.02 us units, wraps after 73 min */
    key = (pid ^ (token * 0x9e3779b9u)) | 1u;
    if (atomic_load_explicit(&s->key, memory_order_relaxed) != key ||
        atomic_load_explicit(&s->val, memory_order_relaxed) != val) {
        atomic_store_explicit(&s->key, key, memory_order_relaxed);
        atomic_store_explicit(&s->val, val, memory_order_relaxed);
        atomic_store_explicit(&s->since, now, memory_order_relaxed);
        return 0; /* a new process, or a sign of life since we last looked */
    }
    /* 1 ms = 976.6 units; hb <= 3.6e6 keeps the product below 2^32 */
    return now - atomic_load_explicit(&s->since, memory_order_relaxed) > hb * 977u;
}

/* The waiter count of channel chan (from our own layout), or NULL. */
static mdcom_aword *waiter_word(struct mdcom *m, uint32_t chan)
{
    if (chan >= m->cfg->n_channels)
        return 0;
    return (mdcom_aword *)(m->base + m->cl[chan].off +
                           (m->cl[chan].type == MDCOM_CHAN_FIFO
                                ? (uint32_t)offsetof(mdcom_wire_fifo_ctl, event.waiters)
                                : (uint32_t)offsetof(mdcom_wire_smem_ctl, lock.waiters)));
}

/* Give back a waiter count a dead process held (rec read from its entry:
 * validated by our own layout). */
static void drop_wait(struct mdcom *m, uint32_t rec)
{
    mdcom_aword *w;
    if (!rec || !(w = waiter_word(m, MDCOM_WAITREC_CHAN(rec))))
        return; /* none, or a corrupted entry: ignore it */
    mdcom_waiters_down(w);
}

/* Free the entry of a dead process (we own it: owner == CLAIMING). */
void mdcom_reap_slot(struct mdcom *m, uint32_t i)
{
    mdcom_wire_proc *p = &m->procs[i];
    uint32_t k;
    /* every thread's operation in flight (relaxed: the process is dead; all
     * it wrote is in memory) */
    for (k = 0; k < MDCOM_PROC_RECS; k++) {
        mdcom_wire_oprec *r = &p->rec[k];
        mdcom_fifo_reap_op(m, i + 1, atomic_exchange_explicit(&r->op, 0, memory_order_relaxed),
                           atomic_load_explicit(&r->pos, memory_order_relaxed),
                           atomic_load_explicit(&r->id, memory_order_relaxed),
                           atomic_load_explicit(&r->state, memory_order_relaxed));
    }
    mdcom_fifo_release_owner(m, i + 1, 1);
    mdcom_smem_release_owner(m, MDCOM_LOCK_MAKE(i, ((volatile mdcom_wire_proc *)p)->incarn));
    drop_wait(m, atomic_exchange_explicit(&p->wait[0], 0, memory_order_relaxed));
    drop_wait(m, atomic_exchange_explicit(&p->wait[1], 0, memory_order_relaxed));
}

/* See internal.h. The owner word names only the domain, so between a
 * reaper's look and its CAS another reaper may have reaped the entry and a
 * live process of the same domain claimed it: the CAS alone would succeed
 * (ABA) and the live process would be reaped, the blocks it holds freed. So
 * the CAS is followed by a check of the identity; a different one is a
 * re-use, and the owner word goes back (history: docs/reliability.md). An
 * entry in a claim (o with bit 31) is taken whole: its claimer is dead. */
int mdcom_take_dead_slot(struct mdcom *m, uint32_t i, uint32_t o, uint32_t pid, uint32_t token)
{
    mdcom_wire_proc *p = &m->procs[i];
    /* acquire: the dead process' last writes (or the re-user's pid/token,
     * published by its release store of o) are visible to what follows */
    uint32_t mine = MDCOM_PROC_CLAIMING_BY(m->pid);
    if (!atomic_compare_exchange_strong_explicit(&p->owner, &o, mine, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0; /* another reaper was first, or the entry changed owner */
    if (MDCOM_PROC_IS_CLAIMING(o))
        return 1; /* a dead claimer's claim: ours to finish (reap, free) */
    if (((volatile mdcom_wire_proc *)p)->pid != pid ||
        ((volatile mdcom_wire_proc *)p)->token != token) {
        /* CLAIMING -> o by CAS: the live owner may have left meanwhile
         * (mdcom_term stores FREE), and then FREE stays. relaxed: we wrote
         * nothing in the entry that the owner word would publish */
        uint32_t c = mine;
        (void)atomic_compare_exchange_strong_explicit(&p->owner, &c, o, memory_order_relaxed,
                                                      memory_order_relaxed);
        return 0;
    }
    return 1;
}

/* Take entry i (owner word o) if its process is dead, or if it is a claim
 * whose claimer's pid no longer exists: 1 taken (ours to reap, then free). */
int mdcom_take_if_dead(struct mdcom *m, uint32_t i, uint32_t o)
{
    mdcom_wire_proc *p = &m->procs[i];
    uint32_t pid = 0, token = 0, inc = 0;
    if (o != MDCOM_PROC_CLAIMING && (o & 0x80000000u)) {
        if (!mdcom_pid_dead(m, MDCOM_PROC_CLAIMER(o), MDCOM_TOKEN_ANY))
            return 0;
    } else if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS ||
               (inc = ((volatile mdcom_wire_proc *)p)->incarn, !proc_dead(m, i, &pid, &token))) {
        return 0;
    }
    if (!mdcom_take_dead_slot(m, i, o, pid, token))
        return 0;
    /* A live entry judged by its lock may have been left (term: FREE, its
     * lock dropped) and claimed again by the same process (same pid and
     * token) since: the incarnation tells. relaxed: as in take_dead_slot */
    if (!MDCOM_PROC_IS_CLAIMING(o) && ((volatile mdcom_wire_proc *)p)->incarn != inc) {
        uint32_t c = MDCOM_PROC_CLAIMING_BY(m->pid);
        (void)atomic_compare_exchange_strong_explicit(&p->owner, &c, o, memory_order_relaxed,
                                                      memory_order_relaxed);
        return 0;
    }
    return 1;
}

/* One scan of the process table: reap every entry whose process is dead. */
/* Reap entry i (owner word o) if its process is dead: 1 reaped and free again. */
static int reap_if_dead(struct mdcom *m, uint32_t i, uint32_t o)
{
    if (!mdcom_take_if_dead(m, i, o))
        return 0;
    mdcom_reap_slot(m, i);
    /* release: the reclaim is complete before the entry can be reused */
    atomic_store_explicit(&m->procs[i].owner, MDCOM_PROC_FREE, memory_order_release);
    return 1;
}

static int reap_scan(struct mdcom *m)
{
    uint32_t i;
    int n = 0;
    for (i = 0; i < MDCOM_MAX_PROCS; i++)
        if (i != m->proc_slot)
            /* acquire: pairs with claim_proc's release, so pid/token are complete */
            n += reap_if_dead(m, i, atomic_load_explicit(&m->procs[i].owner,
                                                         memory_order_acquire));
    return n;
}

/* The master domain's audit, at most once per AUDIT_SHIFT period per
 * attachment: its repairs of holes and orphans count periods ("claimed two
 * audits ago"), and a pass costs O(blocks + 8 x depth) per channel. */
static void audit_when_due(struct mdcom *m, uint64_t now)
{
    uint32_t stamp = (uint32_t)(now >> AUDIT_SHIFT) | 1u;
    uint32_t prev = atomic_load_explicit(&m->audit_stamp, memory_order_relaxed);
    /* relaxed: a throttle only, as reap_stamp */
    if (m->is_master && prev != stamp &&
        atomic_compare_exchange_strong_explicit(&m->audit_stamp, &prev, stamp,
                                                memory_order_relaxed, memory_order_relaxed))
        mdcom_audit(m);
}

int mdcom_reap(struct mdcom *m)
{
    uint64_t now = mdcom_now(m);
    uint32_t stamp = (uint32_t)(now >> REAP_SHIFT) | 1u;
    uint32_t prev = atomic_load_explicit(&m->reap_stamp, memory_order_relaxed);
    int n;
    /* relaxed: a throttle only; one thread of this process scans per period */
    if (prev == stamp || !atomic_compare_exchange_strong_explicit(&m->reap_stamp, &prev, stamp,
                                                                   memory_order_relaxed,
                                                                   memory_order_relaxed))
        return 0;
    n = reap_scan(m);
    audit_when_due(m, now);
    return n;
}

int mdcom_sense_process(mdcom_t *m, uint32_t domain_id)
{
    uint32_t i;
    int n = 0;
    if (!mdcom_valid_inst(m) || domain_id >= MDCOM_MAX_DOMAINS || !mdcom_domain_role(m->cfg, domain_id))
        return -EINVAL;
    /* what the dead held goes back now (unthrottled), and the master domain
     * audits when an audit is due */
    (void)reap_scan(m);
    audit_when_due(m, mdcom_now(m));
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        /* acquire: pairs with claim_proc's release, so pid/token are complete */
        uint32_t o = atomic_load_explicit(&p->owner, memory_order_acquire);
        if (o != MDCOM_PROC_DOMAIN_BASE + domain_id)
            continue;
        /* one judged dead only now (a heartbeat that ran out since the scan
         * above) is reaped, not only judged, and not counted; one alive is
         * (unless it is another reaper's now) */
        if (i == m->proc_slot ||
            (!reap_if_dead(m, i, o) && atomic_load_explicit(&p->owner, memory_order_acquire) == o))
            n++;
    }
    return n;
}
