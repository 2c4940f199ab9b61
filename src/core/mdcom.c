/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom.c - attach/detach, process table, region liveness, the shared
 * wait/wake protocol, error names.
 *
 * Attach protocol
 *   master: open(create) -> state = FORMATTING -> write header, tables,
 *           channels -> generation = old + 1 -> state = READY (release) -> ring
 *   remote: open (waits for the file) -> wait for state == READY (acquire)
 *           -> verify every header/directory field against the layout computed
 *           from its own config -> claim a process slot
 *
 * Wait/wake protocol (used by FIFO events and SMEM locks)
 *   waker:  publish (release) ; change word ; fence ; if waiters: ring(word)
 *   waiter: snap = word ; waiters++ ; fence ; if cond: done ;
 *           else sleep while word == snap (bounded slices) ; waiters--
 *   The two seq_cst fences make it impossible for the waiter to miss the
 *   publication while the waker misses the waiter (store-buffering pattern).
 *   A sleeper records which waiter count it holds in its process entry, so
 *   that the count can be given back if it dies asleep.
 *
 * Dead processes (mdcom_reap)
 *   Any process that has to wait (each sleep slice), finds the pool dry or a
 *   lock busy, or asks mdcom_sense_process, scans the process table (at most
 *   once per ~34 ms per attachment). A dead process' entry is taken by CAS
 *   (one reaper wins), its blocks go back to the pools (ALLOC and HELD; its
 *   QUEUED messages stay queued and are delivered), its locks are released,
 *   its waiter counts are given back, and the entry is freed.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static struct mdcom g_pool[MDCOM_MAX_INSTANCES];
static _Atomic uint32_t g_pool_used[MDCOM_MAX_INSTANCES];

#define SLEEP_SLICE_NS 50000000ull /* re-check region and peers every 50 ms */
#define REAP_SHIFT 25 /* reap at most once per 2^25 ns (~34 ms) */
#define AUDIT_SHIFT 27 /* the formatter audits at most once per 2^27 ns (~134 ms) */

/* ---------------------------------------------------------------- */
/* errors                                                             */
/* ---------------------------------------------------------------- */

const char *mdcom_strerror(int err)
{
    switch (err < 0 ? -err : err) {
    case 0: return "success";
    case EINVAL: return "EINVAL: invalid argument or configuration";
    case ENOENT: return "ENOENT: no such channel or region";
    case EPERM: return "EPERM: this domain/process is not allowed to do that";
    case EACCES: return "EACCES: permission denied on the region";
    case ENOSPC: return "ENOSPC: no space (region, shm directory or instances)";
    case ETIMEDOUT: return "ETIMEDOUT: timed out";
    case EAGAIN: return "EAGAIN: nothing to dequeue / queue full";
    case ENOBUFS: return "ENOBUFS: no free block in the pool";
    case EBUSY: return "EBUSY: lock held by another process";
    case EDEADLK: return "EDEADLK: lock already held by this process";
    case EALREADY: return "EALREADY: block not held by this process";
    case EMSGSIZE: return "EMSGSIZE: message larger than the block or buffer";
    case EPROTO: return "EPROTO: the peer violated the protocol (corrupted index or state)";
    case EBADMSG: return "EBADMSG: corrupted message or region header";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT: region has another wire version";
    case ESTALE: return "ESTALE: region layout does not match this configuration";
    case ESHUTDOWN: return "ESHUTDOWN: the master terminated the region";
    case ECONNRESET: return "ECONNRESET: the master re-formatted the region";
    case EUSERS: return "EUSERS: all process slots of the region are in use";
    case EADDRINUSE: return "EADDRINUSE: a live master already serves this region";
    case EINTR: return "EINTR: interrupted by a signal";
    case ENOSYS: return "ENOSYS: not supported by this platform port";
    case ENOTCONN: return "ENOTCONN: taken for dead (missed heartbeat) and reaped";
    default: return "unknown error";
    }
}

/* ---------------------------------------------------------------- */
/* wait / wake                                                        */
/* ---------------------------------------------------------------- */

int mdcom_region_check(struct mdcom *m)
{
    /* acquire: a TERMINATED/READY state orders what the master wrote before it */
    uint32_t st = atomic_load_explicit(&m->hdr->state, memory_order_acquire);
    uint32_t gen = atomic_load_explicit(&m->hdr->generation, memory_order_relaxed);
    if (st == MDCOM_ST_TERMINATED)
        return -ESHUTDOWN;
    if (st != MDCOM_ST_READY || gen != m->generation)
        return -ECONNRESET;
    return m->hb_ms ? mdcom_beat(m) : 0;
}

int mdcom_self(struct mdcom *m)
{
    mdcom_wire_proc *me = m->me;
    uint32_t o, i;
    for (i = 0; i < 1024u; i++) {
        /* relaxed: our own entry; a reaper that took it wrote FREE (or the
         * next occupant's values) there, which is all we need to see */
        o = atomic_load_explicit(&me->owner, memory_order_relaxed);
        if (!MDCOM_PROC_IS_CLAIMING(o))
            break;
        mdcom_relax(m); /* a reaper holds it: wait for its verdict */
    }
    if (MDCOM_PROC_IS_CLAIMING(o))
        return 0;
    return o == MDCOM_PROC_DOMAIN_BASE + m->domain &&
                   ((volatile mdcom_wire_proc *)me)->incarn == m->incarn
               ? 1
               : -1;
}

int mdcom_beat(struct mdcom *m)
{
    mdcom_wire_proc *me = m->me;
    uint32_t v;
    /* relaxed: our own entry. Another owner or identity in it means the
     * others took us for dead (a missed heartbeat) and reclaimed it: every
     * further use would act on someone else's blocks, so it is refused.
     * CLAIMING with our identity is a reaper that judged our entry's
     * previous process and is about to give it back (mdcom_take_dead_slot), or
     * one reclaiming us, whose FREE the next call sees. */
    uint32_t o = atomic_load_explicit(&me->owner, memory_order_relaxed);
    if ((o != MDCOM_PROC_DOMAIN_BASE + m->domain && !MDCOM_PROC_IS_CLAIMING(o)) ||
        ((volatile mdcom_wire_proc *)me)->pid != m->pid ||
        ((volatile mdcom_wire_proc *)me)->token != m->token)
        return -ENOTCONN;
    /* relaxed: a counter only observers compare with what they saw before;
     * we are its only writer */
    v = atomic_load_explicit(&me->heartbeat, memory_order_relaxed);
    atomic_store_explicit(&me->heartbeat, v + 1u, memory_order_relaxed);
    return 0;
}

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
    if (m->plat->proc_alive && m->plat->proc_alive(m->plat->ctx, pid, token) == 0)
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

void mdcom_ring_word(struct mdcom *m, mdcom_aword *word, mdcom_aword *waiters, uint32_t chan)
{
    /* fence: our publication (queue slot, lock release) must be globally
     * visible before we read the waiter count (pairs with the waiter's fence) */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(waiters, memory_order_relaxed) != 0)
        m->plat->doorbell.ring(m->plat->doorbell.ctx, word, chan);
}

/* The waiter count of channel chan (from our own layout), or NULL. */
static mdcom_aword *waiter_word(struct mdcom *m, uint32_t chan)
{
    if (chan >= m->cfg->n_channels)
        return 0;
    return (mdcom_aword *)(m->base + m->cl[chan].off +
                           (m->cl[chan].type == MDCOM_CHAN_FIFO
                                ? (uint32_t)offsetof(mdcom_wire_fifo_ctl, event.w[1])
                                : (uint32_t)offsetof(mdcom_wire_smem_ctl, lock.w[1])));
}

/* Take one from a waiter count, never below 0 (a count is a promise that
 * someone sleeps; "negative" is a lost wake-up for the next sleeper). */
void mdcom_waiters_down(mdcom_aword *w)
{
    uint32_t v = atomic_load_explicit(w, memory_order_relaxed), tries;
    /* relaxed: a counter; the sleeper's fence orders it against the check */
    for (tries = 0; v != 0 && v < 0x80000000u && tries < MDCOM_RETRY_MAX; tries++)
        if (atomic_compare_exchange_weak_explicit(w, &v, v - 1, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
}

/* Live waiter records naming channel chan (a recount of its waiter word). */
static uint32_t count_wait_records(struct mdcom *m, uint32_t chan)
{
    uint32_t i, k, n = 0;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        /* relaxed: a recount of a corrupted word; in-flight changes of it
         * make it off by those, which the sleepers' slices absorb */
        uint32_t o = atomic_load_explicit(&p->owner, memory_order_relaxed);
        if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS)
            continue;
        for (k = 0; k < 2; k++) {
            uint32_t r = atomic_load_explicit(&p->wait[k], memory_order_relaxed);
            n += r != 0 && MDCOM_WAITREC_CHAN(r) == chan;
        }
    }
    return n;
}

void mdcom_wait_begin(struct mdcom *m, uint32_t rec, uint32_t chan, mdcom_aword *waiters)
{
    uint32_t old;
    /* relaxed: only a reaper reads the record, after it saw us dead. Record
     * first: dying between the two leaves a record without a count, and the
     * reaper never takes a count below 0 (one sleeper then wakes late, at
     * the end of its slice, instead of a count leaking for ever) */
    atomic_store_explicit(&m->me->wait[rec], MDCOM_WAITREC_MAKE(chan, m->incarn),
                          memory_order_relaxed);
    old = atomic_fetch_add_explicit(waiters, 1, memory_order_relaxed);
    if (old >= 0x80000000u) /* "negative": forged or corrupted; recount */
        atomic_store_explicit(waiters, count_wait_records(m, chan), memory_order_relaxed);
}

void mdcom_wait_end(struct mdcom *m, uint32_t rec, mdcom_aword *waiters)
{
    mdcom_wire_proc *me = m->me;
    /* relaxed: our own entry. Only while the entry is still ours: a reaper
     * that took us for dead gave back the count our record named, and the
     * entry's next occupant has another incarnation. (Records are per
     * attachment, counts per sleeping thread: the record is cleared by
     * whichever thread ends first, and a reaper gives back one count per
     * record; see docs/reliability.md.) */
    uint32_t o = atomic_load_explicit(&me->owner, memory_order_relaxed);
    uint32_t r = atomic_load_explicit(&me->wait[rec], memory_order_relaxed);
    if ((o != MDCOM_PROC_DOMAIN_BASE + m->domain && !MDCOM_PROC_IS_CLAIMING(o)) ||
        ((volatile mdcom_wire_proc *)me)->incarn != m->incarn)
        return;
    mdcom_waiters_down(waiters);
    if (r != 0 && (r >> 16) == m->incarn) /* relaxed: bookkeeping for a reaper */
        atomic_compare_exchange_strong_explicit(&me->wait[rec], &r, 0, memory_order_relaxed,
                                                memory_order_relaxed);
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

int mdcom_lock_orphaned(struct mdcom *m, uint32_t w)
{
    uint32_t slot = MDCOM_LOCK_SLOT(w), o;
    mdcom_wire_proc *p;
    if (w == 0)
        return 0;
    if (slot >= MDCOM_MAX_PROCS)
        return 1;
    p = &m->procs[slot];
    /* acquire: pairs with claim_proc's release, so incarn is the occupant's */
    o = atomic_load_explicit(&p->owner, memory_order_acquire);
    if (o == MDCOM_PROC_FREE)
        return 1;
    if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS)
        return 0; /* being claimed or reaped: the reaper releases its locks */
    return (((volatile mdcom_wire_proc *)p)->incarn & 0xffffu) != MDCOM_LOCK_INCARN(w);
}

/* Free the entry of a dead process (we own it: owner == CLAIMING). */
static void reap_slot(struct mdcom *m, uint32_t i)
{
    mdcom_wire_proc *p = &m->procs[i];
    /* relaxed: the process is dead; all it wrote is in memory */
    mdcom_fifo_reap_op(m, i + 1, atomic_exchange_explicit(&p->op, 0, memory_order_relaxed),
                       atomic_load_explicit(&p->op_pos, memory_order_relaxed),
                       atomic_load_explicit(&p->op_id, memory_order_relaxed),
                       atomic_load_explicit(&p->op_state, memory_order_relaxed));
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
static int take_if_dead(struct mdcom *m, uint32_t i, uint32_t o)
{
    uint32_t pid = 0, token = 0;
    if (o != MDCOM_PROC_CLAIMING && (o & 0x80000000u)) {
        if (!m->plat->proc_alive ||
            m->plat->proc_alive(m->plat->ctx, MDCOM_PROC_CLAIMER(o), MDCOM_TOKEN_ANY) != 0)
            return 0;
    } else if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS ||
               !proc_dead(m, i, &pid, &token)) {
        return 0;
    }
    return mdcom_take_dead_slot(m, i, o, pid, token);
}

/* One scan of the process table: reap every entry whose process is dead. */
static int reap_scan(struct mdcom *m)
{
    uint32_t i, o;
    int n = 0;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        if (i == m->proc_slot)
            continue;
        /* acquire: pairs with claim_proc's release, so pid/token are complete */
        o = atomic_load_explicit(&p->owner, memory_order_acquire);
        if (!take_if_dead(m, i, o))
            continue;
        reap_slot(m, i);
        /* release: the reclaim is complete before the entry can be reused */
        atomic_store_explicit(&p->owner, MDCOM_PROC_FREE, memory_order_release);
        n++;
    }
    return n;
}

/* The master domain's audit: header and directory, then every FIFO channel. */
static void audit(struct mdcom *m)
{
    uint32_t i, z = 0;
    /* any process of the master domain (the one that formatted the region
     * may have re-attached and joined instead) */
    if (!m->is_master || mdcom_region_check(m) != 0)
        return;
    /* one thread of this attachment at a time (the channels' audit state is
     * private and plain); a busy audit is as good as ours. acquire: the
     * previous auditor's writes of that state */
    if (!atomic_compare_exchange_strong_explicit(&m->audit_busy, &z, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return;
    /* Header, domain table and directory: what a remote verifies before it
     * joins. Attached processes never read them again (they keep private
     * copies of the layout), so damage there only stops new remotes; the
     * master domain, which knows what they must say, writes them again. State,
     * generation, the process table and the channels are left alone: no
     * message is lost and nobody has to re-attach. */
    if (mdcom_layout_verify(m->base, m->map.size, m->cfg, &m->lay, m->cl, 0) != 0)
        mdcom_layout_write_tables(m->base, m->cfg, &m->lay, m->cl);
    for (i = 0; i < m->cfg->n_channels; i++)
        (void)mdcom_fifo_audit(m, i);
    /* release: our writes of the audit state, for the next auditor */
    atomic_store_explicit(&m->audit_busy, 0, memory_order_release);
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
    if (m->is_master) {
        stamp = (uint32_t)(now >> AUDIT_SHIFT) | 1u;
        prev = atomic_load_explicit(&m->audit_stamp, memory_order_relaxed);
        /* relaxed: a throttle, as above */
        if (prev != stamp &&
            atomic_compare_exchange_strong_explicit(&m->audit_stamp, &prev, stamp,
                                                    memory_order_relaxed, memory_order_relaxed))
            audit(m);
    }
    return n;
}

int mdcom_wait_word(struct mdcom *m, uint32_t chan, mdcom_aword *word, mdcom_aword *waiters,
                    _Atomic uint32_t *spin_cur, uint32_t spin_max, mdcom_cond_fn cond,
                    void *arg, int64_t timeout_ns)
{
    uint64_t deadline, now;
    int r = cond(arg);
    if (r != 0)
        return r;
    if (timeout_ns == 0) {
        r = mdcom_region_check(m); /* a poller must learn of a shutdown too */
        return r ? r : -ETIMEDOUT;
    }
    now = mdcom_now(m);
    deadline = timeout_ns < 0 ? UINT64_MAX : now + (uint64_t)timeout_ns;

    /* adaptive spin: grow the limit when spinning pays off, shrink when not */
    if (spin_max != MDCOM_NO_SPIN && spin_max != 0) {
        uint32_t lim = atomic_load_explicit(spin_cur, memory_order_relaxed);
        uint64_t end = now + lim;
        uint32_t n = 0;
        if (end > deadline)
            end = deadline;
        for (;;) {
            mdcom_relax(m);
            r = cond(arg);
            if (r != 0) {
                if (r > 0 && lim < spin_max)
                    atomic_store_explicit(spin_cur, lim * 2 > spin_max ? spin_max : lim * 2,
                                          memory_order_relaxed);
                return r;
            }
            if ((++n & 31u) == 0 && mdcom_now(m) >= end)
                break;
        }
        if (lim / 2 >= MDCOM_SPIN_MIN_NS)
            atomic_store_explicit(spin_cur, lim / 2, memory_order_relaxed);
    }

    for (;;) {
        uint32_t snap;
        int64_t slice;
        int wr;
        r = mdcom_region_check(m);
        if (r)
            return r;
        /* acquire: a waker that changed the word before our snapshot also
         * published its data before it, so the cond() below will see it */
        snap = atomic_load_explicit(word, memory_order_acquire);
        /* about to sleep: is a peer dead holding something? (throttled) */
        (void)mdcom_reap(m);
        mdcom_wait_begin(m, 0, chan, waiters);
        /* fence: announce the waiter before the final check (pairs with the
         * waker's fence in mdcom_ring_word) */
        atomic_thread_fence(memory_order_seq_cst);
        r = cond(arg);
        if (r != 0) {
            mdcom_wait_end(m, 0, waiters);
            return r;
        }
        now = mdcom_now(m);
        if (now >= deadline) {
            mdcom_wait_end(m, 0, waiters);
            return -ETIMEDOUT;
        }
        slice = (deadline - now) > SLEEP_SLICE_NS ? (int64_t)SLEEP_SLICE_NS
                                                  : (int64_t)(deadline - now);
        wr = m->plat->doorbell.wait(m->plat->doorbell.ctx, word, snap, slice);
        mdcom_wait_end(m, 0, waiters);
        if (wr == -EINTR)
            return -EINTR;
        r = cond(arg);
        if (r != 0)
            return r;
        if (mdcom_now(m) >= deadline)
            return -ETIMEDOUT;
    }
}

/* ---------------------------------------------------------------- */
/* attach                                                             */
/* ---------------------------------------------------------------- */

static int domain_role(const mdcom_config *cfg, uint32_t id)
{
    uint32_t i;
    for (i = 0; i < cfg->n_domains; i++)
        if (cfg->domains[i].id == id)
            return (int)cfg->domains[i].role;
    return 0;
}

static struct mdcom *pool_get(void)
{
    uint32_t i;
    for (i = 0; i < MDCOM_MAX_INSTANCES; i++) {
        uint32_t z = 0;
        /* acq_rel: the slot's previous user finished before we reuse it */
        if (atomic_compare_exchange_strong_explicit(&g_pool_used[i], &z, 1,
                                                    memory_order_acq_rel, memory_order_relaxed))
            return &g_pool[i];
    }
    return 0;
}

static void pool_put(struct mdcom *m)
{
    uint32_t i = (uint32_t)(m - g_pool);
    memset(m, 0, sizeof(*m));
    /* release: our clearing is done before another init takes the slot */
    atomic_store_explicit(&g_pool_used[i], 0, memory_order_release);
}

static int valid_inst(const struct mdcom *m)
{
    return m && m >= g_pool && m < g_pool + MDCOM_MAX_INSTANCES && m->tag == MDCOM_TAG_INST;
}

/* Claim a process slot; reclaims slots of dead processes. */
static int claim_proc(struct mdcom *m, uint32_t pid, uint32_t token)
{
    uint32_t pass, i;
    m->pid = pid; /* a reaper's claim names us (mdcom_take_dead_slot) */
    m->token = token;
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < MDCOM_MAX_PROCS; i++) {
            mdcom_wire_proc *p = &m->procs[i];
            uint32_t o = atomic_load_explicit(&p->owner, memory_order_acquire);
            if (pass == 1 && take_if_dead(m, i, o)) {
                /* a dead owner (or claimer): the slot is taken first (so no
                 * one else reuses its owner token meanwhile), then what it
                 * held goes back */
                reap_slot(m, i);
            } else if (o != MDCOM_PROC_FREE ||
                       !atomic_compare_exchange_strong_explicit(&p->owner, &o,
                                                                MDCOM_PROC_CLAIMING_BY(pid),
                                                                memory_order_acquire,
                                                                memory_order_relaxed)) {
                continue;
            }
            MDCOM_KP(&p->pid);
            p->pid = pid;
            MDCOM_KP(&p->token);
            p->token = token;
            MDCOM_KP(&p->hb_ms);
            p->hb_ms = m->hb_ms;
            m->incarn = (((volatile mdcom_wire_proc *)p)->incarn + 1u) & 0xffffu;
            if (!m->incarn)
                m->incarn = 1;
            MDCOM_KP(&p->incarn);
            p->incarn = m->incarn;
            atomic_store_explicit(&p->wait[0], 0, memory_order_relaxed);
            atomic_store_explicit(&p->wait[1], 0, memory_order_relaxed);
            atomic_store_explicit(&p->op, 0, memory_order_relaxed);
            atomic_store_explicit(&p->heartbeat, 0, memory_order_relaxed);
            /* release: pid/token are visible before the slot reads as live */
            atomic_store_explicit(&p->owner, MDCOM_PROC_DOMAIN_BASE + m->domain,
                                  memory_order_release);
            m->proc_slot = i;
            m->owner = i + 1;
            m->lock_owner = MDCOM_LOCK_MAKE(i, m->incarn);
            m->me = p;
            m->pid = pid;
            m->token = token;
            return 0;
        }
    }
    return -EUSERS;
}

/* 1 when a live process of domain dom is in the process table at proc_off
 * (an offset read from the region: checked against the mapping first). */
static int live_proc_of_domain(struct mdcom *m, uint32_t proc_off, uint32_t dom)
{
    uint32_t i;
    if (proc_off % 4u || proc_off < MDCOM_HDR_SIZE ||
        (uint64_t)proc_off + MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc) > m->map.size)
        return 0;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = (mdcom_wire_proc *)(m->base + proc_off) + i;
        /* acquire: pairs with claim_proc's release, so pid/token are complete */
        uint32_t o = atomic_load_explicit(&p->owner, memory_order_acquire);
        if (o == MDCOM_PROC_DOMAIN_BASE + dom &&
            (!m->plat->proc_alive ||
             m->plat->proc_alive(m->plat->ctx, ((volatile mdcom_wire_proc *)p)->pid,
                                 ((volatile mdcom_wire_proc *)p)->token) != 0))
            return 1;
    }
    return 0;
}

static void bind_channels(struct mdcom *m)
{
    uint32_t i, pfw = mdcom_cpu_prefetchw(); /* asked once (CPUID may trap to a hypervisor) */
    for (i = 0; i < m->cfg->n_channels; i++) {
        if (m->cl[i].type == MDCOM_CHAN_FIFO)
            mdcom_fifo_bind(m, i, pfw);
        else
            mdcom_smem_bind(m, i);
    }
}

/* Master-domain process: format the region (we won state -> FORMATTING). */
static int format_region(struct mdcom *m, uint32_t pid, uint32_t token, mdcom_err *e)
{
    uint32_t gen = 1;
    int r;
    MDCOM_KP(&m->hdr->fmt_pid);
    m->hdr->fmt_pid = pid; /* who formats: lets others take over if we die */
    MDCOM_KP(&m->hdr->fmt_token);
    m->hdr->fmt_token = token;
    if (m->hdr->magic == MDCOM_MAGIC)
        gen = atomic_load_explicit(&m->hdr->generation, memory_order_relaxed) + 1;
    if (gen == 0)
        gen = 1;
    mdcom_layout_format(m->base, m->cfg, &m->lay, m->cl, gen);
    m->generation = gen;
    m->owns_region = 1;
    bind_channels(m);
    r = claim_proc(m, pid, token);
    if (r) {
        atomic_store_explicit(&m->hdr->state, MDCOM_ST_EMPTY, memory_order_relaxed);
        return mdcom_err_set(e, r, m->cfg->region_name, "no free process slot");
    }
    /* release: every formatted byte is visible before anyone sees READY */
    atomic_store_explicit(&m->hdr->state, MDCOM_ST_READY, memory_order_release);
    m->plat->doorbell.ring(m->plat->doorbell.ctx, &m->hdr->state, UINT32_MAX);
    return 0;
}

/* Join a READY region that matches our layout. */
static int join_region(struct mdcom *m, uint32_t pid, uint32_t token, mdcom_err *e)
{
    int r;
    m->generation = atomic_load_explicit(&m->hdr->generation, memory_order_relaxed);
    bind_channels(m);
    r = claim_proc(m, pid, token);
    if (r)
        return mdcom_err_set(e, r, m->cfg->region_name, "all process slots are in use");
    /* the region may have been re-formatted while we bound it */
    if (mdcom_region_check(m) != 0) {
        atomic_store_explicit(&m->procs[m->proc_slot].owner, MDCOM_PROC_FREE,
                              memory_order_release);
        return 1; /* look again */
    }
    return 0;
}

static int attach_timeout(struct mdcom *m, uint32_t st, int stale, mdcom_err *e)
{
    if (st == MDCOM_ST_FORMATTING)
        return mdcom_err_set(e, -ETIMEDOUT, m->cfg->region_name,
                             "the region stayed in FORMATTING (formatter busy or dead)");
    if (stale) /* the region of a master that is gone, laid out for another config */
        return mdcom_layout_verify(m->base, m->map.size, m->cfg, &m->lay, m->cl, e);
    return mdcom_err_set(e, -ETIMEDOUT, m->cfg->region_name,
                         "the master did not format the region in time");
}

/*
 * Attach state machine. Every process of the master domain may format the
 * region, but only one does: the one whose CAS moves the state to FORMATTING.
 * The others (and remotes) wait for READY and join. A READY region whose
 * master domain has no live process, or an unknown state, is stale and
 * re-formatted by the next master-domain process (generation + 1).
 */
static int attach(struct mdcom *m, uint32_t pid, uint32_t token, uint64_t deadline, mdcom_err *e)
{
    const mdcom_config *cfg = m->cfg;
    int stale = 0; /* last verify error of a READY region without a live master */
    uint32_t rounds = 0;
    for (;;) {
        /* acquire: a READY state orders everything its formatter wrote before it */
        uint32_t st = atomic_load_explicit(&m->hdr->state, memory_order_acquire);
        uint64_t now;
        int r;
        /* a state that keeps changing under us must not extend the timeout */
        if (rounds++ > 0 && mdcom_now(m) >= deadline)
            return attach_timeout(m, st, stale, e);
        stale = 0;
        if (st == MDCOM_ST_READY) {
            mdcom_err scratch = {0, 0, 0};
            uint32_t proc_off = ((volatile mdcom_wire_hdr *)m->hdr)->proc_off;
            r = mdcom_layout_verify(m->base, m->map.size, cfg, &m->lay, m->cl,
                                    m->is_master ? &scratch : e);
            if (r == 0 && (!m->is_master || live_proc_of_domain(m, m->lay.proc_off, m->domain))) {
                r = join_region(m, pid, token, e);
                if (r <= 0)
                    return r;
                continue;
            }
            if (!m->is_master) {
                /* a region of a live master with another layout: refuse now;
                 * a stale one (its master gone): wait for a new master */
                if (live_proc_of_domain(m, proc_off, m->lay.master_domain))
                    return r;
                stale = r;
            } else if (r != 0 && live_proc_of_domain(m, proc_off, m->lay.master_domain)) {
                /* a live system with another layout: never clobber it */
                r = mdcom_layout_verify(m->base, m->map.size, cfg, &m->lay, m->cl, e);
                mdcom_err_str(e, " (a live master process serves this region)");
                return r ? r : -EADDRINUSE;
            }
        } else if (st == MDCOM_ST_FORMATTING) {
            if (m->is_master && m->plat->proc_alive) {
                uint32_t fp = ((volatile mdcom_wire_hdr *)m->hdr)->fmt_pid;
                uint32_t ft = ((volatile mdcom_wire_hdr *)m->hdr)->fmt_token;
                if (fp != 0 && m->plat->proc_alive(m->plat->ctx, fp, ft) == 0) {
                    /* the formatter died: take its place; the CAS on fmt_pid
                     * makes one taker win. acquire: see what it had written. */
                    if (atomic_compare_exchange_strong_explicit(
                            (mdcom_aword *)&m->hdr->fmt_pid, &fp, pid, memory_order_acquire,
                            memory_order_relaxed))
                        return format_region(m, pid, token, e);
                    continue;
                }
            }
        }
        if (m->is_master && st != MDCOM_ST_FORMATTING) {
            /* EMPTY, TERMINATED, garbage, or a stale READY: format it.
             * acq_rel: exclusive ownership of the header from here on */
            if (atomic_compare_exchange_strong_explicit(&m->hdr->state, &st, MDCOM_ST_FORMATTING,
                                                        memory_order_acq_rel,
                                                        memory_order_relaxed))
                return format_region(m, pid, token, e);
            continue;
        }
        now = mdcom_now(m);
        if (now >= deadline)
            return attach_timeout(m, st, stale, e);
        {
            uint64_t rem = deadline - now;
            int64_t slice = rem > 1000000ull ? 1000000 : (int64_t)rem; /* 1 ms */
            m->plat->doorbell.wait(m->plat->doorbell.ctx, &m->hdr->state, st, slice);
        }
    }
}

int mdcom_init(mdcom_t **out, const mdcom_config *cfg, uint32_t domain_id,
               const mdcom_init_opts *opts)
{
    static const mdcom_init_opts no_opts;
    const mdcom_platform *plat;
    struct mdcom *m;
    mdcom_err e;
    uint32_t pid = 0, token = 0;
    uint64_t deadline;
    int role, r;

    if (!opts)
        opts = &no_opts;
    e.buf = opts->errbuf;
    e.cap = opts->errbuf_len;
    e.pos = 0;
    if (e.buf && e.cap)
        e.buf[0] = '\0';
    if (!out)
        return mdcom_err_set(&e, -EINVAL, 0, "out is NULL");
    *out = 0;
    plat = opts->platform ? opts->platform : mdcom_platform_default();
    if (!plat || !plat->region_open || !plat->region_close || !plat->now_ns ||
        !plat->doorbell.wait || !plat->doorbell.ring)
        return mdcom_err_set(&e, -EINVAL, 0, "platform lacks a required hook");
    m = pool_get();
    if (!m)
        return mdcom_err_set(&e, -ENOSPC, 0, "all MDCOM_MAX_INSTANCES attachments in use");
    memset(m, 0, sizeof(*m));

    /* validate first (an invalid config is -EINVAL whatever its size), and
     * keep the channel layouts only when they fit this build's capacity */
    r = mdcom_layout_compute(cfg, &m->lay,
                             cfg && cfg->n_channels <= MDCOM_MAX_CHANNELS ? m->cl : 0, &e);
    if (r)
        goto fail_pool;
    if (cfg->n_channels > MDCOM_MAX_CHANNELS) {
        r = mdcom_err_set(&e, -ENOSPC, cfg->region_name,
                          "more channels than this build's MDCOM_MAX_CHANNELS");
        goto fail_pool;
    }
    role = domain_role(cfg, domain_id);
    if (!role) {
        r = mdcom_err_set(&e, -EINVAL, cfg->region_name, "domain id not in the configuration");
        goto fail_pool;
    }
    m->cfg = cfg;
    m->plat = plat;
    m->domain = domain_id;
    m->is_master = role == MDCOM_ROLE_MASTER;
    m->keep_region = opts->keep_region;
    if (opts->heartbeat_ms &&
        (opts->heartbeat_ms < MDCOM_HEARTBEAT_MIN_MS || opts->heartbeat_ms > MDCOM_HEARTBEAT_MAX_MS)) {
        r = mdcom_err_set(&e, -EINVAL, cfg->region_name,
                          "heartbeat_ms outside MDCOM_HEARTBEAT_MIN_MS..MAX_MS");
        goto fail_pool;
    }
    m->hb_ms = opts->heartbeat_ms;
    m->spin_ns = opts->spin_ns ? opts->spin_ns : MDCOM_SPIN_DEFAULT_NS;
    if (plat->proc_self && (r = plat->proc_self(plat->ctx, &pid, &token)) != 0) {
        mdcom_err_set(&e, r, cfg->region_name, "platform cannot identify this process");
        goto fail_pool;
    }
    deadline = mdcom_deadline(m, opts->attach_timeout_ns);

    if (m->is_master)
        r = plat->region_open(plat->ctx, cfg->region_name, m->lay.region_size,
                              MDCOM_REGION_CREATE, cfg->mode ? cfg->mode : 0600u, cfg->group, 0,
                              &m->map);
    else
        r = plat->region_open(plat->ctx, cfg->region_name, MDCOM_HDR_SIZE, 0, 0, -1,
                              opts->attach_timeout_ns, &m->map);
    if (r) {
        if (r == -ETIMEDOUT) {
            mdcom_err_set(&e, r, cfg->region_name, "the master did not create the region in time");
        } else {
            mdcom_err_set(&e, r, cfg->region_name, "cannot open the region: ");
            mdcom_err_str(&e, mdcom_strerror(r));
        }
        goto fail_pool;
    }
    m->base = (uint8_t *)m->map.base;
    m->hdr = (mdcom_wire_hdr *)m->base;
    m->procs = (mdcom_wire_proc *)(m->base + m->lay.proc_off);
    if (m->map.size < MDCOM_HDR_SIZE || (m->is_master && m->map.size < m->lay.region_size)) {
        r = mdcom_err_set(&e, -ENOSPC, cfg->region_name, "mapped region is too small");
        goto fail_map;
    }
    r = attach(m, pid, token, deadline, &e);
    if (r)
        goto fail_map;
    m->tag = MDCOM_TAG_INST;
    *out = m;
    return 0;

fail_map:
    plat->region_close(plat->ctx, &m->map, 0);
fail_pool:
    pool_put(m);
    return r;
}

void (*_Atomic mdcom_term_hook)(struct mdcom *m);

int mdcom_term(mdcom_t *m)
{
    uint32_t i, st, gen;
    int live, ours;
    void (*hook)(struct mdcom *);
    if (!valid_inst(m))
        return -EINVAL;
    /* acquire: the hook's setter initialised what the hook uses */
    hook = atomic_load_explicit(&mdcom_term_hook, memory_order_acquire);
    if (hook)
        hook(m);
    /* acquire: as in mdcom_region_check */
    st = atomic_load_explicit(&m->hdr->state, memory_order_acquire);
    gen = atomic_load_explicit(&m->hdr->generation, memory_order_relaxed);
    /* the region we formatted, still in the generation we formatted: ours to
     * end, even when the others took us for dead (-ENOTCONN) - otherwise
     * its remotes would stay on a deleted file while we format a new one */
    ours = m->owns_region && st == MDCOM_ST_READY && gen == m->generation;
    /* our entry, blocks and locks are still ours: the region is as we
     * attached it, or (a state or generation that changed without a
     * re-format, e.g. forged) our entry still has our identity - left live,
     * it would be counted as a live process of ours for ever */
    live = mdcom_region_check(m) == 0 ||
           (mdcom_self(m) > 0 && ((volatile mdcom_wire_proc *)m->me)->pid == m->pid &&
            ((volatile mdcom_wire_proc *)m->me)->token == m->token);
    if (ours || live) {
        if (ours) /* release: all before is visible to whoever sees TERMINATED */
            atomic_store_explicit(&m->hdr->state, MDCOM_ST_TERMINATED, memory_order_release);
        if (live) {
            mdcom_fifo_release_owner(m, m->owner, 0);
            mdcom_smem_release_owner(m, m->lock_owner);
        }
        if (ours) {
            for (i = 0; i < m->cfg->n_channels; i++) {
                union mdcom_chan *c = &m->ch[i];
                if (c->tag == MDCOM_TAG_FIFO) {
                    atomic_fetch_add_explicit(&c->f.ctl->event.w[0], 1, memory_order_relaxed);
                    m->plat->doorbell.ring(m->plat->doorbell.ctx, &c->f.ctl->event.w[0], i);
                } else {
                    m->plat->doorbell.ring(m->plat->doorbell.ctx, &c->s.ctl->lock.w[0], i);
                }
            }
            m->plat->doorbell.ring(m->plat->doorbell.ctx, &m->hdr->state, UINT32_MAX);
        }
        /* release: our last uses of the region happen before the slot is free */
        if (live)
            atomic_store_explicit(&m->procs[m->proc_slot].owner, MDCOM_PROC_FREE,
                                  memory_order_release);
    }
    /* remove the file only if it is still ours: a region another process of
     * the master domain re-formatted (generation + 1) is theirs now */
    m->plat->region_close(m->plat->ctx, &m->map, ours && !m->keep_region);
    pool_put(m);
    return 0;
}

int mdcom_heartbeat(mdcom_t *m)
{
    if (!valid_inst(m))
        return -EINVAL;
    return mdcom_region_check(m); /* a sign of life when we promised some */
}

int mdcom_sense_process(mdcom_t *m, uint32_t domain_id)
{
    uint32_t i;
    int n = 0;
    if (!valid_inst(m) || domain_id >= MDCOM_MAX_DOMAINS || !domain_role(m->cfg, domain_id))
        return -EINVAL;
    /* what the dead held goes back now (unthrottled), and the formatter
     * audits */
    (void)reap_scan(m);
    audit(m);
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        /* acquire: pairs with claim_proc's release, so pid/token are complete */
        uint32_t o = atomic_load_explicit(&p->owner, memory_order_acquire);
        if (o != MDCOM_PROC_DOMAIN_BASE + domain_id)
            continue;
        if (i == m->proc_slot) {
            n++;
        } else if (take_if_dead(m, i, o)) {
            /* judged dead only now (a heartbeat that ran out since the scan
             * above): a process counted dead has been reaped, not only judged */
            reap_slot(m, i);
            /* release: as in reap_scan */
            atomic_store_explicit(&p->owner, MDCOM_PROC_FREE, memory_order_release);
        } else if (atomic_load_explicit(&p->owner, memory_order_acquire) == o) {
            n++; /* alive (or another reaper's now: then not counted) */
        }
    }
    return n;
}

int mdcom_chan_open(struct mdcom *m, const char *name, uint32_t index, uint32_t tag, void **out)
{
    const mdcom_chan_layout *cl;
    if (!valid_inst(m) || !out)
        return -EINVAL;
    if (name) {
        for (index = 0; index < m->cfg->n_channels; index++)
            if (mdcom_streq(m->cfg->channels[index].name, name, MDCOM_NAME_MAX))
                break;
        if (index == m->cfg->n_channels)
            return -ENOENT;
    } else if (index >= m->cfg->n_channels) {
        return -EINVAL;
    }
    if (m->ch[index].tag != tag)
        return -ENOENT;
    cl = &m->cl[index];
    if (!(((cl->senders | cl->receivers) >> m->domain) & 1u))
        return -EPERM;
    *out = &m->ch[index];
    return 0;
}

uint32_t mdcom_domain_id(const mdcom_t *m) { return valid_inst(m) ? m->domain : UINT32_MAX; }

int mdcom_valid_inst(const struct mdcom *m) { return valid_inst(m); }
