/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reap.c - dead processes: who is dead, and giving back what they held.
 *
 *   Any process that has to wait (each sleep slice), finds the pool dry or a
 *   lock busy, or asks mdcom_sense_process, scans the process table (a scan
 *   begins at most once per ~67 ms per attachment). Each call reaps within
 *   its budget: its deadline (a wait), or MDCOM_REAP_POLL_NS (~1 ms: a call
 *   that never blocks), one part of an entry at a time (an operation record,
 *   the pass over the pools); a scan cut short goes on at the next call (~1
 *   ms later at the earliest), and an entry cut short goes back to its owner
 *   word, the state any reaper takes (one dead by its heartbeat alone is
 *   finished at once: its process may run on). A dead process' entry is taken by CAS
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

#define REAP_SHIFT 20   /* the reaper's throttle unit: 2^20 ns (~1 ms) */
#define REAP_PERIOD 64u /* a new scan at most every 64 units (~67 ms) per attachment */

/* Non-zero when the process of live entry i is dead: 1 its platform says so,
 * 2 it promised a heartbeat and its heartbeat word has stood still for longer
 * than promised (measured by this attachment). The caller acquired the owner
 * word, so pid/token are complete; *pid_out and *token_out get the identity
 * judged. */
static int proc_dead(struct mdcom_instance *m, uint32_t i, uint32_t *pid_out, uint32_t *token_out)
{
    mdcom_wire_proc *p = &m->procs[i];
    struct mdcom_hb_seen *s = &m->hb[i];
    uint32_t pid = mdcom_read_once(p->pid); /* read once */
    uint32_t token = mdcom_read_once(p->token);
    uint32_t hb, val, now, key;
    *pid_out = pid;
    *token_out = token;
    if (mdcom_entry_dead(m, i, pid, token))
        return 1;
    hb = mdcom_read_once(p->hb_ms); /* read once */
    if (hb == 0)
        return 0;
    if (hb > MDCOM_HEARTBEAT_MAX_MS)
        hb = MDCOM_HEARTBEAT_MAX_MS; /* a corrupted promise cannot overflow below */
    /* relaxed: the word's value is all that matters, not what it orders */
    val = mdcom_load(&p->heartbeat, memory_order_relaxed);
    now = (uint32_t)(mdcom_now(m) >> 10); /* ~1.02 us units, wraps after 73 min */
    key = (pid ^ (token * 0x9e3779b9u)) | 1u;
    if (mdcom_load(&s->key, memory_order_relaxed) != key ||
        mdcom_load(&s->val, memory_order_relaxed) != val) {
        mdcom_store(&s->key, key, memory_order_relaxed);
        mdcom_store(&s->val, val, memory_order_relaxed);
        mdcom_store(&s->since, now, memory_order_relaxed);
        return 0; /* a new process, or a sign of life since we last looked */
    }
    /* 1 ms = 976.6 units; hb <= 3.6e6 keeps the product below 2^32 */
    return now - mdcom_load(&s->since, memory_order_relaxed) > hb * 977u ? 2 : 0;
}

/* The waiter count of channel chan (from our own layout), or NULL. */
static mdcom_aword *waiter_word(struct mdcom_instance *m, uint32_t chan)
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
static void drop_wait(struct mdcom_instance *m, uint32_t rec)
{
    mdcom_aword *w;
    if (!rec || !(w = waiter_word(m, MDCOM_WAITREC_CHAN(rec))))
        return; /* none, or a corrupted entry: ignore it */
    mdcom_waiters_down(w);
}

/* Give back what the dead process of entry i held (we own the entry: our
 * claim), one part after the other: each operation record in flight, then
 * the pass over the pools with its locks and waiter counts. Before each part
 * but the first, the clock is checked against until: 1 done, 0 stopped with
 * parts left (those done are done for good: a record is cleared as it is
 * taken, a block or lock given back no longer names the entry). */
static int reap_parts(struct mdcom_instance *m, uint32_t i, uint64_t until)
{
    mdcom_wire_proc *p = &m->procs[i];
    uint32_t k, parts = 0;
    /* every thread's operation in flight (relaxed: the process is dead; all
     * it wrote is in memory) */
    for (k = 0; k < MDCOM_PROC_RECS; k++) {
        mdcom_wire_oprec *r = &p->rec[k];
        uint32_t op;
        if (!mdcom_load(&r->op, memory_order_relaxed))
            continue;
        if (parts++ && mdcom_now(m) >= until)
            return 0;
        op = mdcom_xchg(&r->op, 0, memory_order_relaxed);
        mdcom_fifo_reap_op(m, i + 1, op, mdcom_load(&r->pos, memory_order_relaxed),
                           mdcom_load(&r->id, memory_order_relaxed),
                           mdcom_load(&r->state, memory_order_relaxed));
    }
    if (parts && mdcom_now(m) >= until)
        return 0;
    mdcom_fifo_release_owner(m, i + 1, 1);
    mdcom_smem_release_owner(m, MDCOM_LOCK_MAKE(i, mdcom_read_once(p->incarn)));
    drop_wait(m, mdcom_xchg(&p->wait[0], 0, memory_order_relaxed));
    drop_wait(m, mdcom_xchg(&p->wait[1], 0, memory_order_relaxed));
    return 1;
}

/* Free the entry of a dead process (we own it: owner == CLAIMING). */
void mdcom_reap_slot(struct mdcom_instance *m, uint32_t i) { (void)reap_parts(m, i, UINT64_MAX); }

/* See internal.h. The owner word names only the domain, so between a
 * reaper's look and its CAS another reaper may have reaped the entry and a
 * live process of the same domain claimed it: the CAS alone would succeed
 * (ABA) and the live process would be reaped, the blocks it holds freed. So
 * the CAS is followed by a check of the identity; a different one is a
 * re-use, and the owner word goes back (history: docs/reliability.md). An
 * entry in a claim (o with bit 31) is taken whole: its claimer is dead. */
int mdcom_take_dead_slot(struct mdcom_instance *m, uint32_t i, uint32_t o, uint32_t pid,
                         uint32_t token)
{
    mdcom_wire_proc *p = &m->procs[i];
    /* acquire: the dead process' last writes (or the re-user's pid/token,
     * published by its release store of o) are visible to what follows */
    uint32_t mine = MDCOM_PROC_CLAIMING_BY(m->pid);
    if (!mdcom_cas(&p->owner, &o, mine, memory_order_acquire, memory_order_relaxed))
        return 0; /* another reaper was first, or the entry changed owner */
    if (MDCOM_PROC_IS_CLAIMING(o))
        return 1; /* a dead claimer's claim: ours to finish (reap, free) */
    if (mdcom_read_once(p->pid) != pid || mdcom_read_once(p->token) != token) {
        /* CLAIMING -> o by CAS: the live owner may have left meanwhile
         * (mdcom_term stores FREE), and then FREE stays. relaxed: we wrote
         * nothing in the entry that the owner word would publish */
        uint32_t c = mine;
        (void)mdcom_cas(&p->owner, &c, o, memory_order_relaxed, memory_order_relaxed);
        return 0;
    }
    return 1;
}

/* Take entry i (owner word o) if its process is dead, or if it is a claim
 * whose claimer's pid no longer exists: 1 taken (ours to reap, then free).
 * *gone: the platform says its process (or claimer) no longer exists, so
 * the entry may go back to o half reaped and be taken again later (it
 * cannot come back to life; one dead by its heartbeat might). */
static int take_if_dead(struct mdcom_instance *m, uint32_t i, uint32_t o, int *gone)
{
    mdcom_wire_proc *p = &m->procs[i];
    uint32_t pid = 0, token = 0, inc = 0;
    int d = 1;
    if (o != MDCOM_PROC_CLAIMING && (o & 0x80000000u)) {
        if (!mdcom_pid_dead(m, MDCOM_PROC_CLAIMER(o), MDCOM_TOKEN_ANY))
            return 0;
    } else if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS ||
               (inc = mdcom_read_once(p->incarn), !(d = proc_dead(m, i, &pid, &token)))) {
        return 0;
    }
    *gone = d == 1;
    if (!mdcom_take_dead_slot(m, i, o, pid, token))
        return 0;
    /* A live entry judged by its lock may have been left (term: FREE, its
     * lock dropped) and claimed again by the same process (same pid and
     * token) since: the incarnation tells. relaxed: as in take_dead_slot */
    if (!MDCOM_PROC_IS_CLAIMING(o) && mdcom_read_once(p->incarn) != inc) {
        uint32_t c = MDCOM_PROC_CLAIMING_BY(m->pid);
        (void)mdcom_cas(&p->owner, &c, o, memory_order_relaxed, memory_order_relaxed);
        return 0;
    }
    return 1;
}

int mdcom_take_if_dead(struct mdcom_instance *m, uint32_t i, uint32_t o)
{
    int gone;
    return take_if_dead(m, i, o, &gone);
}

/* Reap entry i (owner word o) if its process is dead, within until: 1
 * reaped and free again, 0 not dead (or another reaper's), -1 dead and
 * stopped half way at until (the entry went back to o, for this or another
 * reaper to take again and finish). An entry dead by its heartbeat alone is
 * finished whatever the clock says (its process may still run: it must not
 * find its entry live again). */
static int reap_if_dead(struct mdcom_instance *m, uint32_t i, uint32_t o, uint64_t until)
{
    int gone = 0;
    if (!take_if_dead(m, i, o, &gone))
        return 0;
    if (!reap_parts(m, i, gone ? until : UINT64_MAX)) {
        /* release: what we gave back is visible to the next reaper, whose
         * CAS on the owner word acquires it */
        mdcom_store(&m->procs[i].owner, o, memory_order_release);
        return -1;
    }
    /* release: the reclaim is complete before the entry can be reused */
    mdcom_store(&m->procs[i].owner, MDCOM_PROC_FREE, memory_order_release);
    return 1;
}

/* The scan of the process table, from where the last one stopped: reap
 * every entry whose process is dead, until the clock reaches until (checked
 * before each entry but the first looked at, and between the parts of an
 * entry: every call makes progress, and overruns until by one part at most).
 * A slice that reaped or stopped inside an entry goes on ~1 ms later
 * (reap_more); one that only judged living processes at the usual period.
 * The caller holds reap_busy. Returns how many were reaped. */
static int reap_scan(struct mdcom_instance *m, uint64_t until)
{
    /* relaxed: private to the holder of reap_busy (acquired) */
    uint32_t i = mdcom_load(&m->reap_cursor, memory_order_relaxed), looked = 0;
    int n = 0, r;
    for (; i < MDCOM_MAX_PROCS; i++) {
        if (i == m->proc_slot)
            continue;
        if (looked++ && mdcom_now(m) >= until) {
            /* the rest of the table next time; soon (reap_more) only when
             * this slice found the dead: judging the living (a system call
             * each on Linux) is left at the scan's usual period */
            mdcom_store(&m->reap_cursor, i, memory_order_relaxed);
            mdcom_store(&m->reap_more, n > 0, memory_order_relaxed);
            return n;
        }
        /* acquire: pairs with mdcom_proc_claim's release, so pid/token are complete */
        r = reap_if_dead(m, i, mdcom_load(&m->procs[i].owner, memory_order_acquire), until);
        if (r < 0) { /* stopped half way: this entry first, next time */
            mdcom_store(&m->reap_cursor, i, memory_order_relaxed);
            mdcom_store(&m->reap_more, 1, memory_order_relaxed);
            return n;
        }
        n += r;
    }
    mdcom_store(&m->reap_cursor, 0, memory_order_relaxed);
    mdcom_store(&m->reap_more, 0, memory_order_relaxed);
    return n;
}

/* reap_scan by one thread of this attachment at a time (another one's scan
 * is as good as ours): -1 when busy */
static int reap_scan_once(struct mdcom_instance *m, uint64_t until)
{
    uint32_t z = 0;
    int n;
    /* acquire: the previous scanner's cursor */
    if (!mdcom_cas(&m->reap_busy, &z, 1, memory_order_acquire, memory_order_relaxed))
        return -1;
    n = reap_scan(m, until);
    /* release: our cursor, for the next scanner */
    mdcom_store(&m->reap_busy, 0, memory_order_release);
    return n;
}

/* The master domain's audit, each part at most once per audit period per
 * attachment (its repairs of holes and orphans count periods: "claimed two
 * audits ago"; a channel costs O(blocks + 8 x depth)); a round cut short by
 * the budget goes on at the next call. */
static void audit_when_due(struct mdcom_instance *m, uint64_t now, uint64_t until)
{
    uint32_t stamp = (uint32_t)(now >> MDCOM_AUDIT_SHIFT) | 1u;
    uint32_t prev = mdcom_load(&m->audit_stamp, memory_order_relaxed);
    if (!m->is_master)
        return;
    /* relaxed: a throttle only, as reap_stamp */
    if ((prev != stamp &&
         mdcom_cas(&m->audit_stamp, &prev, stamp, memory_order_relaxed, memory_order_relaxed)) ||
        mdcom_load(&m->audit_more, memory_order_relaxed))
        mdcom_audit(m, stamp, until);
}

int mdcom_reap_until(struct mdcom_instance *m, uint64_t until)
{
    uint64_t now = mdcom_now(m);
    uint32_t unit = (uint32_t)(now >> REAP_SHIFT);
    uint32_t prev = mdcom_load(&m->reap_stamp, memory_order_relaxed);
    /* relaxed: hints; the throttle's CAS and reap_busy decide */
    uint32_t more = mdcom_load(&m->reap_more, memory_order_relaxed) |
                    mdcom_load(&m->audit_more, memory_order_relaxed);
    int n;
    /* a new scan a period after the last one began; one cut short goes on
     * at the next unit (so a thread that loops on a poll shares the CPU
     * with its work, and a timed wait's spin is not all reaping). prev 0:
     * never scanned. relaxed: a throttle only; one thread of this process
     * claims each unit */
    if (prev && unit - prev < (more ? 1u : REAP_PERIOD))
        return 0;
    if (!mdcom_cas(&m->reap_stamp, &prev, unit ? unit : 1u, memory_order_relaxed,
                   memory_order_relaxed))
        return 0;
    n = reap_scan_once(m, until);
    audit_when_due(m, now, until);
    return n < 0 ? 0 : n;
}

int mdcom_reap(struct mdcom_instance *m)
{
    return mdcom_reap_until(m, mdcom_now(m) + MDCOM_REAP_POLL_NS);
}

int mdcom_sense_process(mdcom_t *m, uint32_t domain_id)
{
    uint64_t until;
    uint32_t i;
    int n = 0;
    if (!mdcom_valid_inst(m) || domain_id >= MDCOM_MAX_DOMAINS ||
        !mdcom_domain_role(m->cfg, domain_id))
        return -EINVAL;
    /* what the dead held goes back now (unthrottled, within the budget of
     * a call that never blocks), and the master domain audits when an
     * audit is due */
    until = mdcom_now(m) + MDCOM_REAP_POLL_NS;
    (void)reap_scan_once(m, until);
    audit_when_due(m, mdcom_now(m), until);
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        /* acquire: pairs with mdcom_proc_claim's release, so pid/token are complete */
        uint32_t o = mdcom_load(&p->owner, memory_order_acquire), pid, token;
        if (o != MDCOM_PROC_DOMAIN_BASE + domain_id)
            continue;
        /* one judged dead only now (a heartbeat that ran out since the scan
         * above, or one the scan's budget did not reach) is reaped while the
         * budget lasts, else only judged, and not counted; one alive is
         * (unless it is another reaper's now) */
        if (i == m->proc_slot)
            n++;
        else if (mdcom_now(m) < until)
            n += !reap_if_dead(m, i, o, until) && mdcom_load(&p->owner, memory_order_acquire) == o;
        else
            n += !proc_dead(m, i, &pid, &token);
    }
    return n;
}
