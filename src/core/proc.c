/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc.c - our own process entry and the region's liveness, as the message
 * path checks them: is the region still READY in the generation we
 * attached to, is our entry still ours (a heartbeat promise lets the others
 * reap a process that stops), which attachment a SMEM lock word names.
 * Claiming an entry (its liveness lock, our identity and incarnation), and
 * the operation records of our threads in it. The reaper that acts on the
 * answers is reap.c; which entry to claim, attach.c.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static int region_state(const struct mdcom_instance *m)
{
    /* acquire: a TERMINATED/READY state orders what the master wrote before it */
    uint32_t st = mdcom_load(&m->hdr->state, memory_order_acquire);
    uint32_t gen = mdcom_load(&m->hdr->generation, memory_order_relaxed);
    if (st == MDCOM_ST_TERMINATED)
        return -MDCOM_ESHUTDOWN;
    if (st != MDCOM_ST_READY || gen != m->generation)
        return -ECONNRESET;
    return 0;
}

#if defined(__linux__) /* its only other user: src/linux/events.c (the Linux port) */
int mdcom_region_state(const struct mdcom_instance *m) { return region_state(m); }
#endif

int mdcom_region_check(struct mdcom_instance *m)
{
    int r = region_state(m);
    return r || !m->hb_ms ? r : mdcom_beat(m);
}

/* How long our entry may read CLAIMING before we judge it not ours. A
 * reaper that took it only to check who holds it (mdcom_take_dead_slot, a
 * re-use since it looked) gives it back within a few instructions; one that
 * holds it longer is reaping us, or nobody does (a forged claim, which no
 * reaper ever finishes): either way it is no longer ours. */
#define SELF_VERDICT_NS 200000u

int mdcom_self(struct mdcom_instance *m)
{
    mdcom_wire_proc *me = m->me;
    uint64_t end = 0;
    uint32_t o, i;
    for (i = 0;; i++) {
        /* relaxed: our own entry; a reaper that took it wrote FREE (or the
         * next occupant's values) there, which is all we need to see */
        o = mdcom_load(&me->owner, memory_order_relaxed);
        if (!MDCOM_PROC_IS_CLAIMING(o))
            break;
        /* a reaper holds it: wait for its verdict, SELF_VERDICT_NS at most
         * (the clock read once per 64 relaxes) */
        if ((i & 63u) == 0) {
            uint64_t now = mdcom_now(m);
            if (!end)
                end = now + SELF_VERDICT_NS;
            else if (now >= end)
                return -1;
        }
        mdcom_relax(m);
    }
    return o == MDCOM_PROC_DOMAIN_BASE + m->domain && mdcom_read_once(me->incarn) == m->incarn ? 1
                                                                                               : -1;
}

/* How long mdcom_self_reclaim lets a claim on our entry stand before it
 * takes the entry back: far longer than any reaper holds an entry (one
 * entry's reap is bounded, see reap.c), so that only a claim nobody will
 * finish is taken. */
#define SELF_RECLAIM_NS 20000000u

int mdcom_self_reclaim(struct mdcom_instance *m)
{
    mdcom_wire_proc *me = m->me;
    uint64_t end = mdcom_now(m) + SELF_RECLAIM_NS, now;
    /* relaxed: our own entry, as in mdcom_self */
    uint32_t o = mdcom_load(&me->owner, memory_order_relaxed);
    /* Only a plain claim (no claimer named: firmware's, or forged) or one
     * by a process that no longer exists (which reapers take over too): a
     * claim by a live process is a reaper's, and its FREE ends it */
    if (o != MDCOM_PROC_CLAIMING &&
        !(MDCOM_PROC_IS_CLAIMING(o) && MDCOM_PROC_CLAIMER(o) != m->pid &&
          mdcom_pid_dead(m, MDCOM_PROC_CLAIMER(o), MDCOM_TOKEN_ANY)))
        return 0;
    /* our identity still in it: it names our blocks and locks */
    if (mdcom_read_once(me->pid) != m->pid || mdcom_read_once(me->token) != m->token ||
        mdcom_read_once(me->incarn) != m->incarn)
        return 0;
    /* the claim stands for SELF_RECLAIM_NS (sleeping in 1 ms slices on the
     * owner word: nobody rings it, a change is seen at the next slice) */
    while ((now = mdcom_now(m)) < end) {
        uint64_t rem = end - now;
        m->plat->doorbell.wait(m->plat->doorbell.ctx, &me->owner, o,
                               rem > 1000000u ? 1000000 : (int64_t)rem);
        if (mdcom_load(&me->owner, memory_order_relaxed) != o)
            return 0; /* someone decided: not ours to take */
    }
    /* by CAS from the claim judged: a reaper that decides meanwhile wins.
     * acquire: as a claim (mdcom_proc_claim) */
    return mdcom_cas(&me->owner, &o, MDCOM_PROC_DOMAIN_BASE + m->domain, memory_order_acquire,
                     memory_order_relaxed);
}

int mdcom_beat(struct mdcom_instance *m)
{
    mdcom_wire_proc *me = m->me;
    uint32_t v;
    /* relaxed: our own entry. Another owner, identity or incarnation in it
     * means the others took us for dead (a missed heartbeat) and reclaimed
     * it, or the entry was damaged: every further use would act on someone
     * else's blocks (or on blocks nobody accounts for), so it is refused.
     * CLAIMING is a reaper's: mdcom_self waits briefly for its verdict (one
     * that judged our entry's previous process gives it back at once). */
    uint32_t o = mdcom_load(&me->owner, memory_order_relaxed);
    if ((o != MDCOM_PROC_DOMAIN_BASE + m->domain &&
         (!MDCOM_PROC_IS_CLAIMING(o) || mdcom_self(m) <= 0)) ||
        mdcom_read_once(me->pid) != m->pid || mdcom_read_once(me->token) != m->token ||
        mdcom_read_once(me->incarn) != m->incarn)
        return -ENOTCONN;
    /* relaxed: a counter only observers compare with what they saw before;
     * we are its only writer */
    v = mdcom_load(&me->heartbeat, memory_order_relaxed);
    mdcom_store(&me->heartbeat, v + 1u, memory_order_relaxed);
    return 0;
}

int mdcom_pid_dead(const struct mdcom_instance *m, uint32_t pid, uint32_t token)
{
    return m->plat->proc_alive && m->plat->proc_alive(m->plat->ctx, pid, token) == 0;
}

int mdcom_slot_unheld(const struct mdcom_instance *m, uint32_t i, uint32_t pid)
{
    /* a foreign pid (firmware on another core) is no process of this port:
     * it takes none of the port's liveness locks, whatever a link to its
     * core says of its liveness */
    return m->plat->slot_lock && !MDCOM_PID_IS_FOREIGN(pid) &&
           m->plat->slot_lock(m->plat->ctx, &m->map, i, MDCOM_SLOT_HELD) == 0;
}

int mdcom_entry_dead(const struct mdcom_instance *m, uint32_t i, uint32_t pid, uint32_t token)
{
    int a;
    if (!m->plat->proc_alive)
        return 0;
    a = m->plat->proc_alive(m->plat->ctx, pid, token);
    /* the process lives, but no attachment holds the entry: written into
     * the region (pid and token are public), or left by a process that
     * gave the entry up */
    return a == 0 || (a > 0 && mdcom_slot_unheld(m, i, pid));
}

int mdcom_lock_orphaned(struct mdcom_instance *m, uint32_t w)
{
    uint32_t slot = MDCOM_LOCK_SLOT(w), o;
    mdcom_wire_proc *p;
    if (w == 0)
        return 0;
    if (slot >= MDCOM_MAX_PROCS)
        return 1;
    p = &m->procs[slot];
    /* acquire: pairs with mdcom_proc_claim's release, so incarn is the occupant's */
    o = mdcom_load(&p->owner, memory_order_acquire);
    if (o == MDCOM_PROC_FREE)
        return 1;
    if (o < MDCOM_PROC_DOMAIN_BASE || o >= MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS)
        return 0; /* being claimed or reaped: the reaper releases its locks */
    return (mdcom_read_once(p->incarn) & 0xffffu) != MDCOM_LOCK_INCARN(w);
}

/* ---- claiming an entry ------------------------------------------------- */

/* Take the liveness lock of entry i for our mapping: 0 (also where the
 * platform has none), -EBUSY (another attachment holds it), or another
 * negative errno. */
static int slot_take(struct mdcom_instance *m, uint32_t i)
{
    int r;
    if (!m->plat->slot_lock)
        return 0;
    r = m->plat->slot_lock(m->plat->ctx, &m->map, i, MDCOM_SLOT_TAKE);
    return r == -ENOSYS ? 0 : r;
}

void mdcom_slot_give(struct mdcom_instance *m, uint32_t i)
{
    if (m->plat->slot_lock)
        (void)m->plat->slot_lock(m->plat->ctx, &m->map, i, MDCOM_SLOT_GIVE);
}

int mdcom_proc_claim(struct mdcom_instance *m, uint32_t i, int reaped, uint32_t pid, uint32_t token)
{
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    static _Atomic uint32_t serial;
#endif
    mdcom_wire_proc *p = &m->procs[i];
    uint32_t o = MDCOM_PROC_FREE, k;
    int lr;
    if (!reaped && !mdcom_cas(&p->owner, &o, MDCOM_PROC_CLAIMING_BY(pid), memory_order_acquire,
                              memory_order_relaxed))
        return 1;
    /* the entry's liveness lock, before the entry reads live (a judge that
     * sees it live finds the lock held) */
    if ((lr = slot_take(m, i)) != 0) {
        /* release: nothing of ours in the entry to publish */
        mdcom_store(&p->owner, MDCOM_PROC_FREE, memory_order_release);
        return lr == -EBUSY ? 1 : lr; /* a process reaped while it runs holds it still */
    }
    MDCOM_KP(&p->pid);
    p->pid = pid;
    MDCOM_KP(&p->token);
    p->token = token;
    MDCOM_KP(&p->hb_ms);
    p->hb_ms = m->hb_ms;
    m->incarn = (mdcom_read_once(p->incarn) + 1u) & 0xffffu;
    if (!m->incarn)
        m->incarn = 1;
    MDCOM_KP(&p->incarn);
    p->incarn = m->incarn;
    mdcom_store(&p->wait[0], 0, memory_order_relaxed);
    mdcom_store(&p->wait[1], 0, memory_order_relaxed);
    for (k = 0; k < MDCOM_PROC_RECS; k++)
        mdcom_store(&p->rec[k].op, 0, memory_order_relaxed);
    mdcom_store(&p->heartbeat, 0, memory_order_relaxed);
    /* relaxed: published by the owner store below */
    mdcom_pool_hold(m, i);
    /* release: pid/token (and our hold) are visible before the slot reads
     * as live */
    mdcom_store(&p->owner, MDCOM_PROC_DOMAIN_BASE + m->domain, memory_order_release);
    m->proc_slot = i;
    m->owner = i + 1;
    m->lock_owner = MDCOM_LOCK_MAKE(i, m->incarn);
    m->who = MDCOM_BLK_WHO_OF(m->owner, m->incarn);
    m->me = p;
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    /* our threads' records start again (relaxed: a counter that only has
     * to differ from the last attachments' values); one thread
     * (freestanding) has record 0 and none of this */
    m->pool_index = mdcom_pool_index(m);
    m->rec_serial = (mdcom_fetch_add(&serial, 1, memory_order_relaxed) & 0x0fffffffu) + 1u;
    mdcom_store(&m->rec_used, 0, memory_order_relaxed);
#endif
    return 0;
}

int mdcom_heartbeat(mdcom_t *m)
{
    if (!mdcom_valid_inst(m))
        return -EINVAL;
    return mdcom_region_check(m); /* a sign of life when we promised some */
}

/* ---- operation records: one per thread of an attachment ---------------- */

#if defined(MDCOM_THREADS) && MDCOM_THREADS
_Thread_local __attribute__((tls_model("initial-exec"))) uint32_t mdcom_t_rec[MDCOM_MAX_INSTANCES];
static tss_t g_rec_key;
/* set once by rec_key_make (release: the key is created before it reads 1) */
static _Atomic int g_rec_key_ok;
static once_flag g_rec_once = ONCE_FLAG_INIT;

/* A thread ends: its records go back to their attachments (those it took
 * in an attachment since ended carry another serial and are left alone). */
static void rec_drop(void *unused)
{
    uint32_t i;
    (void)unused;
    for (i = 0; i < MDCOM_MAX_INSTANCES; i++) {
        uint32_t t = mdcom_t_rec[i];
        struct mdcom_instance *m = mdcom_pool_at(i);
        mdcom_t_rec[i] = 0;
        /* release: our stores to the record come before those of the
         * thread that takes it next (acquire in mdcom_rec_claim) */
        if (t && m && (t & 7u) && t >> 3 == m->rec_serial)
            mdcom_fetch_and(&m->rec_used, ~(1u << (t & 7u)), memory_order_release);
    }
}

static void rec_key_make(void)
{
    mdcom_store(&g_rec_key_ok, tss_create(&g_rec_key, rec_drop) == thrd_success,
                memory_order_release);
}

mdcom_wire_oprec *mdcom_rec_claim(struct mdcom_instance *m)
{
    uint32_t k, used;
    int key_ok;
    call_once(&g_rec_once, rec_key_make);
    /* acquire: pairs with rec_key_make's release (call_once orders it too,
     * in a way the thread sanitizer does not see) */
    key_ok = mdcom_load(&g_rec_key_ok, memory_order_acquire);
    /* Record 0 is the shared one (threads beyond the others); a thread that
     * cannot be told when it ends (no tss key) takes it too. relaxed: a
     * private bitmap, each bit owned by the thread that set it */
    used = mdcom_load(&m->rec_used, memory_order_relaxed);
    for (k = 1; key_ok && k < MDCOM_PROC_RECS; k++) {
        if (used & (1u << k))
            continue;
        /* acquire: the stores of the thread that gave the record back
         * (rec_drop, mdcom_rec_park) come before ours */
        if (mdcom_cas(&m->rec_used, &used, used | (1u << k), memory_order_acquire,
                      memory_order_relaxed)) {
            /* a record another thread of ours used before: nothing in flight */
            mdcom_store(&m->me->rec[k].op, 0, memory_order_relaxed);
            (void)tss_set(g_rec_key, (void *)1); /* non-NULL: the destructor runs */
            break;
        }
        k = 0; /* the bitmap changed: look again from the start */
    }
    if (!key_ok || k >= MDCOM_PROC_RECS)
        k = 0;
    mdcom_t_rec[m->pool_index] = m->rec_serial << 3 | k;
    return &m->me->rec[k];
}

/* queue operations of this thread on a full path under way (more than one:
 * a filter function's own operations): its record is not given back then */
static _Thread_local uint32_t t_rec_depth;

int mdcom_rec_enter(struct mdcom_instance *m)
{
    uint32_t t = mdcom_t_rec[m->pool_index];
    t_rec_depth++;
    /* none yet, or the shared one: (again) look for one of our own */
    if (t >> 3 != m->rec_serial || !(t & 7u))
        t = (uint32_t)(mdcom_rec_claim(m) - m->me->rec);
    if (t & 7u)
        return 0;
    (void)mtx_lock(&m->rec0_lock);
    return 1;
}

void mdcom_rec_park(struct mdcom_instance *m)
{
    uint32_t t = mdcom_t_rec[m->pool_index];
    /* never inside an operation (a filter function that waits: the
     * operation goes on with its record after); only when every own record
     * is taken (others may be sharing record 0): taking one again costs the
     * next operation its inline path. relaxed: a hint */
    if (!t_rec_depth && t >> 3 == m->rec_serial && (t & 7u) &&
        (mdcom_load(&m->rec_used, memory_order_relaxed) | 1u) == (1u << MDCOM_PROC_RECS) - 1u) {
        mdcom_t_rec[m->pool_index] = 0;
        /* release: as in rec_drop */
        mdcom_fetch_and(&m->rec_used, ~(1u << (t & 7u)), memory_order_release);
    }
}

void mdcom_rec_leave(struct mdcom_instance *m, int shared)
{
    t_rec_depth--;
    if (shared)
        (void)mtx_unlock(&m->rec0_lock);
}
#endif
