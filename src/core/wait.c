/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait.c - the shared wait/wake protocol (FIFO events, SMEM locks) and the
 * waiter counts a sleeper holds.
 *
 *   waker:  publish (release) ; change word ; fence ; if waiters: ring(word)
 *   waiter: snap = word ; waiters++ ; fence ; if cond: done ;
 *           else sleep while word == snap (bounded slices) ; waiters--
 *   The two seq_cst fences make it impossible for the waiter to miss the
 *   publication while the waker misses the waiter (store-buffering pattern).
 *
 *   FIFO events ring once per sleep, not once per message (MDCOM_WAITERS_ARMED):
 *   waiter: snap = word ; waiters++ ; ARMED |= (release) ; fence ; cond ; sleep
 *   waker:  publish ; fence ; if count: [ARMED &= ~ (acquire), was set:]
 *           word++ ; [ring]
 *   The waker that clears ARMED reads the arming RMW, so the sleeper's snapshot
 *   precedes that waker's word++: the sleeper either finds the word changed
 *   or is asleep when the ring comes. Every waker that sees a count changes
 *   the word (EV_NOTIFY waits and wait sets see every notify). Wakers that
 *   find ARMED clear skip the system call: the sleeper they would wake was
 *   woken already and has not run since.
 *   A sleeper records which waiter count it holds in its process entry, so
 *   that the count can be given back if it dies asleep (reap.c).
 *   Before each sleep slice a waiter calls the reaper (mdcom_reap_until,
 *   the one up-call of this file, within the wait's deadline): a peer that
 *   died holding what it waits for is found within a slice.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define SLEEP_SLICE_NS 50000000ull /* re-check region and peers every 50 ms */
#define SPIN_COND_SLOW_NS 2000u    /* a condition slower than this: the clock at every spin round */
/* More sleepers on one word than 64 processes of 4096 sleeping threads
 * each: a forged count (the field holds up to MDCOM_WAITERS_COUNT). */
#define WAITERS_MAX (MDCOM_MAX_PROCS * 4096u)

void mdcom_ring_word(struct mdcom_instance *m, mdcom_aword *word, mdcom_aword *waiters,
                     uint32_t chan)
{
    /* fence: our publication (queue slot, lock release) must be globally
     * visible before we read the waiter count (pairs with the waiter's fence) */
    mdcom_fence(memory_order_seq_cst);
    if (mdcom_load(waiters, memory_order_relaxed) != 0)
        m->plat->doorbell.ring(m->plat->doorbell.ctx, word, chan);
}

void mdcom_event_ring(struct mdcom_instance *m, mdcom_wire_fifo_ctl *ctl, uint32_t chan, uint32_t w)
{
    uint32_t armed = 0;
    if (w & MDCOM_WAITERS_ARMED)
        /* acquire: reads the sleeper's release arming, so its snapshot of the
         * event word precedes our change of the word below */
        armed = mdcom_fetch_and(&ctl->event.waiters, ~MDCOM_WAITERS_ARMED, memory_order_acquire) &
                MDCOM_WAITERS_ARMED;
    /* relaxed: ordered after what we published by the caller's fence; only
     * sleepers (their futex compare, EV_NOTIFY) look at the word */
    mdcom_fetch_add(&ctl->event.word, 1, memory_order_relaxed);
    if (armed)
        m->plat->doorbell.ring(m->plat->doorbell.ctx, &ctl->event.word, chan);
}

static void event_arm(mdcom_aword *waiters)
{
    /* release: our snapshot of the event word (taken before) precedes this,
     * for the waker whose acquire clear reads it (mdcom_event_ring) */
    mdcom_fetch_or(waiters, MDCOM_WAITERS_ARMED, memory_order_release);
}

#if defined(__linux__) /* its only other user: src/linux/events.c (the Linux port) */
void mdcom_event_arm(mdcom_aword *waiters) { event_arm(waiters); }
#endif

/* Take one from a waiter count, never below 0 (a count is a promise that
 * someone sleeps; "negative" is a lost wake-up for the next sleeper). The
 * last one out drops ARMED too (no sleeper left to wake). */
void mdcom_waiters_down(mdcom_aword *w)
{
    uint32_t v = mdcom_load(w, memory_order_relaxed), tries;
    /* relaxed: a counter; the sleeper's fence orders it against the check */
    for (tries = 0; (v & MDCOM_WAITERS_COUNT) != 0 && v < 0x80000000u && tries < MDCOM_RETRY_MAX;
         tries++)
        if (mdcom_cas_weak(w, &v, (v & MDCOM_WAITERS_COUNT) == 1 ? 0 : v - 1, memory_order_relaxed,
                           memory_order_relaxed))
            break;
}

/* Live waiter records naming channel chan (a recount of its waiter word). */
static uint32_t count_wait_records(struct mdcom_instance *m, uint32_t chan)
{
    uint32_t i, k, n = 0;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = &m->procs[i];
        /* relaxed: a recount of a corrupted word; in-flight changes of it
         * make it off by those, which the sleepers' slices absorb */
        uint32_t o = mdcom_load(&p->owner, memory_order_relaxed);
        if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS)
            continue;
        for (k = 0; k < 2; k++) {
            uint32_t r = mdcom_load(&p->wait[k], memory_order_relaxed);
            n += r != 0 && MDCOM_WAITREC_CHAN(r) == chan;
        }
    }
    return n;
}

void mdcom_wait_begin(struct mdcom_instance *m, uint32_t rec, uint32_t chan, mdcom_aword *waiters)
{
    uint32_t old;
    /* relaxed: only a reaper reads the record, after it saw us dead. Record
     * first: dying between the two leaves a record without a count, and the
     * reaper never takes a count below 0 (one sleeper then wakes late, at
     * the end of its slice, instead of a count leaking for ever) */
    mdcom_store(&m->me->wait[rec], MDCOM_WAITREC_MAKE(chan, m->incarn), memory_order_relaxed);
    old = mdcom_fetch_add(waiters, 1, memory_order_relaxed);
    /* "negative" or beyond what sleepers can hold: forged or corrupted;
     * recount (armed: one spare ring at worst, never a sleeper left unrung) */
    if (old >= 0x80000000u || (old & MDCOM_WAITERS_COUNT) >= WAITERS_MAX)
        mdcom_store(waiters, count_wait_records(m, chan) | MDCOM_WAITERS_ARMED,
                    memory_order_relaxed);
}

void mdcom_waiters_audit(struct mdcom_instance *m, uint32_t chan)
{
    const mdcom_chan_layout *cl = &m->cl[chan];
    int fifo = cl->type == MDCOM_CHAN_FIFO;
    mdcom_aword *w =
        (mdcom_aword *)(m->base + cl->off +
                        (fifo ? (uint32_t)offsetof(mdcom_wire_fifo_ctl, event.waiters)
                              : (uint32_t)offsetof(mdcom_wire_smem_ctl, lock.waiters)));
    /* relaxed: a counter; the sleepers' fences order it against their checks */
    uint32_t v = mdcom_load(w, memory_order_relaxed), n;
    if (v < 0x80000000u && (v & MDCOM_WAITERS_COUNT) < WAITERS_MAX)
        return;
    n = count_wait_records(m, chan);
    /* from the value judged: a sleeper that came or left since keeps its
     * count (the next audit looks again); armed when anyone sleeps */
    (void)mdcom_cas(w, &v, fifo && n ? n | MDCOM_WAITERS_ARMED : n, memory_order_relaxed,
                    memory_order_relaxed);
}

void mdcom_wait_end(struct mdcom_instance *m, uint32_t rec, mdcom_aword *waiters)
{
    mdcom_wire_proc *me = m->me;
    /* relaxed: our own entry. Only while the entry is still ours: a reaper
     * that took us for dead gave back the count our record named, and the
     * entry's next occupant has another incarnation. (Records are per
     * attachment, counts per sleeping thread: the record is cleared by
     * whichever thread ends first, and a reaper gives back one count per
     * record; see docs/reliability.md.) */
    uint32_t o = mdcom_load(&me->owner, memory_order_relaxed);
    uint32_t r = mdcom_load(&me->wait[rec], memory_order_relaxed);
    if ((o != MDCOM_PROC_DOMAIN_BASE + m->domain && !MDCOM_PROC_IS_CLAIMING(o)) ||
        mdcom_read_once(me->incarn) != m->incarn)
        return;
    mdcom_waiters_down(waiters);
    if (r != 0 && (r >> 16) == m->incarn) /* relaxed: bookkeeping for a reaper */
        mdcom_cas(&me->wait[rec], &r, 0, memory_order_relaxed, memory_order_relaxed);
}

int mdcom_wait_word(struct mdcom_instance *m, uint32_t chan, mdcom_aword *word,
                    mdcom_aword *waiters, _Atomic uint32_t *spin_cur, uint32_t spin_max,
                    mdcom_cond_fn cond, void *arg, int64_t timeout_ns)
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
        uint32_t lim = mdcom_load(spin_cur, memory_order_relaxed);
        uint64_t end = now + lim;
        uint32_t n = 0, every = 31u;
        if (end > deadline)
            end = deadline;
        for (;;) {
            mdcom_relax(m);
            r = cond(arg);
            if (r != 0) {
                if (r > 0 && lim < spin_max)
                    mdcom_store(spin_cur, lim * 2 > spin_max ? spin_max : lim * 2,
                                memory_order_relaxed);
                return r;
            }
            /* the clock every 32 rounds, or every round when the first
             * cond took long (a pass over a pool: EV_TX on a dry one of
             * 65536 blocks, ~50 us, ~1 ms under ASan), which must not
             * stretch the spin, and the wait, by 32 of them. A fast cond
             * is not cut at its first round: where a round outlasts the
             * shortest limit (TSan, a preempted round) a one-round spin
             * never succeeds, its limit never grows again, and every wait
             * sleeps */
            if ((++n & every) == 0 || n == 1) {
                uint64_t t = mdcom_now(m);
                if (n == 1 && t - now > SPIN_COND_SLOW_NS)
                    every = 0;
                if ((n & every) == 0 && t >= end)
                    break;
            }
        }
        if (lim / 2 >= MDCOM_SPIN_MIN_NS)
            mdcom_store(spin_cur, lim / 2, memory_order_relaxed);
    }

    mdcom_rec_park(m);
    for (;;) {
        uint32_t snap;
        int64_t slice;
        int wr;
        r = mdcom_region_check(m);
        if (r)
            return r;
        /* acquire: a waker that changed the word before our snapshot also
         * published its data before it, so the cond() below will see it */
        snap = mdcom_load(word, memory_order_acquire);
        /* about to sleep: is a peer dead holding something? (throttled;
         * within our deadline, and a slice at most) */
        now = mdcom_now(m);
        (void)mdcom_reap_until(m, now >= deadline                   ? now
                                  : deadline - now > SLEEP_SLICE_NS ? now + SLEEP_SLICE_NS
                                                                    : deadline);
        mdcom_wait_begin(m, 0, chan, waiters);
        if (m->cl[chan].type == MDCOM_CHAN_FIFO)
            event_arm(waiters);
        /* fence: announce the waiter before the final check (pairs with the
         * waker's fence in mdcom_ring_word / notify) */
        mdcom_fence(memory_order_seq_cst);
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
        slice =
            (deadline - now) > SLEEP_SLICE_NS ? (int64_t)SLEEP_SLICE_NS : (int64_t)(deadline - now);
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
