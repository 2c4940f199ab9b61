/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - process-private state of the portable core.
 *
 * Everything here lives in this process' memory and is derived from our own
 * configuration (never from the region), so a peer cannot change it: these are
 * the "private copies" of geometry that every shared access is checked against.
 * The declarations below are grouped by the file that defines them, bottom
 * layer first (msg.c, layout.c, verify.c and format.c declare theirs in
 * layout.h).
 *
 * Layers of the core. Each file calls only files of lower layers (files of
 * one layer do not call each other), so each can be read, tested and left
 * out (the remote-only profile) knowing only what lies below it:
 *
 *   layer 1: msg errors
 *   layer 2: inst layout verify
 *   layer 3: format
 *   layer 4: proc
 *   layer 5: wait
 *   layer 6: fifo smem
 *   layer 7: fifo_repair
 *   layer 8: master
 *   layer 9: reap remote
 *   layer 10: attach
 *
 * remote.c replaces master.c, reap.c and fifo_repair.c in the remote-only
 * profile (MDCOM_PROFILE=remote); format.c is left out there too. The one
 * exception is the reaper: the message path calls it when it has a reason
 * to look for dead processes (a wait's sleep slice, a dry pool, a busy lock,
 * mdcom_sense_fifoch), and it gives back what they held on the channels
 * through the files that own them (fifo.c, smem.c, wait.c). These are the
 * up-calls, every call to a higher layer there is:
 *
 *   up-call: wait -> reap: mdcom_reap_until
 *   up-call: fifo -> reap: mdcom_reap mdcom_sense_process
 *   up-call: smem -> reap: mdcom_reap
 *   up-call: wait -> remote: mdcom_reap_until
 *   up-call: fifo -> remote: mdcom_reap mdcom_sense_process
 *   up-call: smem -> remote: mdcom_reap
 *
 * scripts/core-layers reads the two lists above and checks them against nm
 * of the built objects (ctest core_layers; in the cortex-m4 build, target
 * core-layers): a call that goes up without its line, a two-way pair that
 * is not an up-call, or a line no build needs any more fails it.
 */
#ifndef MDCOM_INTERNAL_H
#define MDCOM_INTERNAL_H

#include <stdint.h>

#include "layout.h"
#include "shm_access.h"
#include "mdcom/mdcom.h"
#include "mdcom/platform.h"

/* Hosted Linux builds have threads (operation records per thread, below);
 * freestanding builds have one. */
#if !defined(MDCOM_THREADS) && defined(__linux__)
#define MDCOM_THREADS 1
#endif
#if defined(MDCOM_THREADS) && MDCOM_THREADS
#include <threads.h>
#endif

#ifndef MDCOM_MAX_INSTANCES
#define MDCOM_MAX_INSTANCES 4
#endif
#ifndef MDCOM_MAX_CHANNELS
#define MDCOM_MAX_CHANNELS 64
#endif

#define MDCOM_SPIN_DEFAULT_NS 20000u /* adaptive spin starts here        */
#define MDCOM_SPIN_MIN_NS 500u
#define MDCOM_SPIN_MAX_NS 200000u
#define MDCOM_RETRY_MAX 4096u /* CAS retries before calling a ring corrupt */

/* Magic tags telling a live handle from garbage passed by the caller. */
#define MDCOM_TAG_INST 0x6d64434fu
#define MDCOM_TAG_FIFO 0x6d644649u
#define MDCOM_TAG_SMEM 0x6d64534du

struct mdcom_instance;

struct mdcom_fifoch {
    /* Field order: what the message path reads first, within the first 128
     * bytes (Thumb's 16-bit loads and stores reach offsets 0..124) */
    uint32_t tag;
    uint32_t index;
    struct mdcom_instance *m;
    mdcom_wire_fifo_ctl *ctl;
    mdcom_wire_qslot *q;
    mdcom_aword *bstate; /* block states = the pool            */
    uint8_t *blocks;
    uint32_t qmask; /* queue capacity - 1 (power of two)       */
    uint32_t block_size, block_count, stride;
    /* The message path's one-word gates: the handle's own address when the
     * inline path applies (this domain may send / receive, no cache hook,
     * no filter), else 0 and every call takes the
     * full path, which checks (and reports) each condition on its own. A
     * word equal to the handle's address is also the inline path's handle
     * check, as good as the tag. Private words. */
    _Atomic uintptr_t tx_fast;
    uintptr_t rx_fast;
    _Atomic uint32_t alloc_hint; /* where the next alloc scan starts */
    _Atomic uint32_t deq_cache;  /* producers' copy of deq_pos       */
    _Atomic uint32_t rx_next;    /* the block we expect to dequeue next (a guess) */
    /* what our transitions write, precomputed once the process entry is
     * ours (mdcom_fifo_own): FREE word + alloc_delta = our ALLOC word of the
     * next generation; the state|owner half of HELD words; our op record
     * words for this channel */
    uint32_t alloc_so, alloc_delta, held_so, op_enq, op_deq, who;
    /* the region header and the generation we attached to (copies of
     * m->hdr, m->generation next to the words the message path loads) */
    mdcom_wire_hdr *hdr;
    uint32_t gen;
    mdcom_wire_proc *me; /* our process entry (m->me) */
    /* a heartbeat promise (m->hb_ms != 0), and what our entry's owner word
     * and incarnation read while the entry is ours (mdcom_self) */
    uint32_t hb, self_owner, incarn;
    uint32_t can_tx, can_rx;
    /* filter: written by mdcom_filter_set, read at enqueue */
    _Atomic uint32_t filter_type;
    /* waits */
    _Atomic uint32_t spin_max; /* MDCOM_NO_SPIN = never spin       */
    _Atomic uint32_t spin_cur; /* adaptive current spin limit      */
    _Atomic uint32_t filter_n;
    _Atomic uint32_t filter_count;
    mdcom_filter_fn _Atomic filter_fn;
    void *_Atomic filter_arg;
    uint32_t pfw;                    /* mdcom_cpu_prefetchw(): PREFETCHW may be used  */
    uint32_t pool_index, rec_serial; /* m's, for mdcom_ch_rec */
#if defined(MDCOM_CUT_AHEAD) && MDCOM_CUT_AHEAD
    uint32_t ahead_id, ahead_w; /* an AHEAD cut build's block claimed for the next send */
#endif
    /* audit (master domain only): the producers' index one and two audits
     * ago (positions below the older one were claimed two periods ago at
     * least); the QUEUED blocks the last audit found in no entry and no
     * record (freed only when the next audit finds them so again, with the
     * same word) */
    uint32_t audit_e1, audit_e2;
    uint32_t audit_period; /* the audit period (mdcom_audit) it was last audited in */
    uint32_t audit_cursor; /* where the next audit's QUEUED checks start */
    uint32_t audit_cand[8], audit_cand_w[8], audit_ncand; /* AUDIT_QUEUED */
};

struct mdcom_smemch {
    uint32_t tag;
    uint32_t index;
    struct mdcom_instance *m;
    mdcom_wire_smem_ctl *ctl;
    uint8_t *data;
    uint32_t size;
    uint32_t can_use;
    _Atomic uint32_t spin_cur; /* adaptive spin limit for lock waits */
};

union mdcom_chan {
    uint32_t tag;
    struct mdcom_fifoch f;
    struct mdcom_smemch s;
};

struct mdcom_instance {
    /* Field order: the words used most first (Thumb's 16-bit loads and
     * stores reach offsets 0..124), then the channel handles (whose first
     * words are then within reach too), the rest and the tables last */
    uint32_t tag;
    uint32_t domain;
    const mdcom_config *cfg;
    const mdcom_platform *plat;
    uint8_t *base;
    mdcom_wire_hdr *hdr;
    mdcom_wire_proc *procs;
    mdcom_wire_proc *me;  /* our process entry (its op record) */
    uint32_t is_master;   /* this domain is the master domain          */
    uint32_t owns_region; /* this process formatted the region         */
    uint32_t proc_slot;   /* index in the process table           */
    uint32_t owner;       /* our owner token: proc_slot + 1 (non-zero) */
    uint32_t incarn;      /* our incarnation of the entry (proc.incarn) */
    uint32_t who;         /* our blocks' owner: MDCOM_BLK_WHO_OF(owner, incarn) */
    uint32_t lock_owner;  /* our SMEM lock word: MDCOM_LOCK_MAKE(slot, incarn) */
    uint32_t generation;  /* generation we attached to            */
    uint32_t spin_ns;
    _Atomic uint32_t reap_stamp;  /* clock >> REAP_SHIFT when the last scan began */
    _Atomic uint32_t audit_stamp; /* clock >> AUDIT_SHIFT of the last audit */
    _Atomic uint32_t audit_busy;  /* one thread audits at a time (its state is private) */
    uint32_t pid, token;          /* our identity in our process entry */
    uint32_t hb_ms;               /* our heartbeat promise (0 = none) */
    union mdcom_chan ch[MDCOM_MAX_CHANNELS];
    uint32_t keep_region;
    uint32_t pool_index; /* our place in the instance pool             */
    /* Reaping and auditing go on where the last call's budget ended
     * (reap.c, master.c): one thread of this attachment at a time
     * (reap_busy, audit_busy), which owns the cursor; *_more: work is left */
    _Atomic uint32_t reap_busy, reap_more, reap_cursor;
    _Atomic uint32_t audit_more;
    uint32_t audit_hdr; /* the audit period whose header check is done */
    /* operation records (proc.rec[]): which our threads hold (bits, private),
     * and this attachment's serial, which tells a thread's cached record
     * (mdcom_t_rec) of an earlier attachment in the same pool place */
    _Atomic uint32_t rec_used;
    uint32_t rec_serial;
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    /* held by a thread that uses the shared record 0 for one queue
     * operation (recursive: a filter function may enqueue) */
    mtx_t rec0_lock;
#endif
    mdcom_region_map map;
    mdcom_layout lay;
    mdcom_chan_layout cl[MDCOM_MAX_CHANNELS];
    /* what we last saw of each process entry's heartbeat word, to tell a
     * heartbeat that stands still (relaxed atomics: a heuristic any thread
     * of ours may update; a torn view costs at most one more period) */
    struct mdcom_hb_seen {
        _Atomic uint32_t key;   /* (pid, token) hash | 1; 0 = never seen */
        _Atomic uint32_t val;   /* heartbeat word */
        _Atomic uint32_t since; /* clock >> 10 (~1 us) when val was first seen */
    } hb[MDCOM_MAX_PROCS];
};

#if defined(__GNUC__) || defined(__clang__)
#define MDCOM_COLD __attribute__((noinline, cold))
#define MDCOM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MDCOM_COLD
#define MDCOM_ALWAYS_INLINE inline
#endif

/* CPU hints (prefetches; no effect on correctness or ordering) come from
 * the arch header the build chose (ports/arch/<arch>/mdcom_arch.h). */
#include "mdcom_arch.h"

/* time helpers */
static inline uint64_t mdcom_now(const struct mdcom_instance *m)
{
    return m->plat->now_ns(m->plat->ctx);
}
static inline void mdcom_relax(const struct mdcom_instance *m)
{
    if (m->plat->relax)
        m->plat->relax(m->plat->ctx);
}
/* deadline for a timeout; UINT64_MAX for FOREVER */
static inline uint64_t mdcom_deadline(const struct mdcom_instance *m, int64_t timeout_ns)
{
    if (timeout_ns < 0)
        return UINT64_MAX;
    return mdcom_now(m) + (uint64_t)timeout_ns;
}

/* ==== inst.c: the instance pool and the lookups (layer 2) ================ */

/* 1 when m is a live instance of this process' pool. */
int mdcom_valid_inst(const struct mdcom_instance *m);
/* the role of domain id in cfg (MDCOM_ROLE_*), 0 when it is not there */
int mdcom_domain_role(const mdcom_config *cfg, uint32_t id);
/* The channel named name (or, name NULL, at index) if it has type tag and
 * this domain may use it: 0, -EINVAL, -ENOENT, -EPERM. */
int mdcom_chan_open(struct mdcom_instance *m, const char *name, uint32_t index, uint32_t tag,
                    void **out);
/* A free place of the pool (taking back those of dead processes when none
 * is free: see mdcom_pool_own), or NULL. */
struct mdcom_instance *mdcom_pool_get(const mdcom_platform *plat);
/* The caller is the owner of attachment m from now on (pid 0: unknown);
 * the pool takes m back once the platform says that process is dead. */
void mdcom_pool_own(const struct mdcom_instance *m, uint32_t pid, uint32_t token);
/* Give place m back (cleared); _bare: before its rec0_lock was made. */
void mdcom_pool_put(struct mdcom_instance *m);
void mdcom_pool_put_bare(struct mdcom_instance *m);
/* 1 when another attachment of this process holds entry i of m's region
 * (its hold). Freestanding (one image per domain, rarely two attachments,
 * no holds): when any other attachment exists. */
int mdcom_pool_held(const struct mdcom_instance *m, uint32_t i);
#if defined(MDCOM_THREADS) && MDCOM_THREADS
/* m holds entry i of its region from now on (i = MDCOM_MAX_PROCS: none). */
void mdcom_pool_hold(const struct mdcom_instance *m, uint32_t i);
/* m's place in the pool; the instance at place i (NULL past the end), for
 * the operation records' destructor (proc.c). */
uint32_t mdcom_pool_index(const struct mdcom_instance *m);
struct mdcom_instance *mdcom_pool_at(uint32_t i);
#else
#define mdcom_pool_hold(m, i) ((void)(m), (void)(i))
#endif

/* ==== proc.c: our process entry, the region's liveness (layer 4) ========= */

/* region liveness: 0 READY with our generation, or -ESHUTDOWN / -ECONNRESET;
 * with a heartbeat promise also a sign of life (or -ENOTCONN: reaped). */
int mdcom_region_check(struct mdcom_instance *m);
/* the same without the sign of life (for observers such as the events
 * helper thread, which must not beat for a hung process; built on Linux) */
int mdcom_region_state(const struct mdcom_instance *m);
/* A sign of life (m->hb_ms != 0): 0, or -ENOTCONN when our entry was reaped. */
int mdcom_beat(struct mdcom_instance *m);
/* Is our process entry still ours? 1 yes, -1 no: reaped (FREE or another
 * occupant), damaged (another owner or incarnation), or CLAIMING for longer
 * than a reaper's check takes (~200 us: a reaper reaping us, or a claim
 * nobody finishes). Only a process with a heartbeat promise can be reaped
 * while it runs, so only those ask, after a transition a late call must not
 * keep (alloc, dequeue). */
int mdcom_self(struct mdcom_instance *m);
/* At term: our entry reads a claim nobody will finish (plain CLAIMING, or a
 * claimer that no longer exists) for ~20 ms while our identity is still in
 * it: take it back (1), so that term gives back what it names and frees it
 * instead of leaving a claim no reaper takes. 0 otherwise. */
int mdcom_self_reclaim(struct mdcom_instance *m);
/* Claim process entry i for (pid, token) and make it ours: reaped 0, the
 * entry read FREE and is claimed here by CAS; reaped 1, it is ours already
 * (CLAIMING: a dead process' entry, taken and reaped). Then its liveness
 * lock where the platform has one, our identity, a new incarnation, and the
 * owner word that makes it live (release). 0 ours; 1 not ours (the CAS
 * failed, or another attachment holds the lock: a process reaped while it
 * runs; the entry is FREE again); or the platform's error taking the lock. */
int mdcom_proc_claim(struct mdcom_instance *m, uint32_t i, int reaped, uint32_t pid,
                     uint32_t token);
/* Give back the liveness lock of entry i (after its owner word reads FREE). */
void mdcom_slot_give(struct mdcom_instance *m, uint32_t i);
/* 1 when the platform says process (pid, token) is gone; 0 when it is
 * alive, or when the platform cannot tell (no proc_alive hook). */
int mdcom_pid_dead(const struct mdcom_instance *m, uint32_t pid, uint32_t token);
/* 1 when the platform says that no attachment holds the liveness lock of
 * process entry i, naming pid (platform.h slot_lock); 0 when one does, or
 * when it cannot tell (no lock: firmware, other ports), or when pid is
 * foreign (firmware on another core holds no lock of this port, even where
 * a link to it reports it alive). Never asked about our own entry. */
int mdcom_slot_unheld(const struct mdcom_instance *m, uint32_t i, uint32_t pid);
/* 1 when process entry i, naming (pid, token), names no live attachment:
 * the platform says the process is gone, or that it lives but the entry's
 * liveness lock is not held (a forged entry: pid and token are public). 0
 * alive, or unknown (a platform that cannot judge the pid). */
int mdcom_entry_dead(const struct mdcom_instance *m, uint32_t i, uint32_t pid, uint32_t token);
/* 1 when SMEM lock word w names no live attachment: a slot out of range, a
 * free entry, or an entry re-claimed since (another incarnation). */
int mdcom_lock_orphaned(struct mdcom_instance *m, uint32_t w);

/* Operation records (proc.c). Hosted builds: each thread of an
 * attachment takes a record of its own at its first queue operation (cached
 * in thread-local storage, given back by a C11 tss destructor when the
 * thread ends). Threads beyond the MDCOM_PROC_RECS - 1 own records share
 * record 0, one operation at a time: they take the full paths, between
 * mdcom_rec_enter and mdcom_rec_leave (the attachment's rec0_lock), so a
 * record names at most one operation in flight and a live claim is never
 * taken for a dead one's hole. Freestanding builds have one thread:
 * record 0. */
#if defined(MDCOM_THREADS) && MDCOM_THREADS
/* this thread's record per pool place: rec_serial << 3 | record, 0 none */
extern _Thread_local __attribute__((tls_model("initial-exec")))
uint32_t mdcom_t_rec[MDCOM_MAX_INSTANCES];
/* The calling thread's record (taken now if it has none; 0 when none of
 * its own is free: the shared one). */
mdcom_wire_oprec *mdcom_rec_claim(struct mdcom_instance *m);
/* The inline paths' record: the calling thread's own, or NULL (none taken
 * yet, or the shared record 0), and the caller takes its full path. */
static MDCOM_ALWAYS_INLINE mdcom_wire_oprec *mdcom_ch_rec(const struct mdcom_fifoch *ch)
{
    uint32_t t = mdcom_t_rec[ch->pool_index];
    if (t >> 3 == ch->rec_serial && (t & 7u))
        return &ch->me->rec[t & 7u];
    return 0;
}
/* Around a full path's queue operation: takes the calling thread's record;
 * 1 when that is the shared one, whose lock it then holds; mdcom_rec_leave
 * (with that answer) ends the operation. */
int mdcom_rec_enter(struct mdcom_instance *m);
void mdcom_rec_leave(struct mdcom_instance *m, int shared);
/* Before a sleep, outside any queue operation, when every own record is
 * taken: the calling thread's goes back, to be taken again at its next
 * operation, so that the threads that run find records free while those
 * that sleep hold none. */
void mdcom_rec_park(struct mdcom_instance *m);
/* The record taken by mdcom_rec_enter. */
static MDCOM_ALWAYS_INLINE mdcom_wire_oprec *mdcom_rec_held(const struct mdcom_fifoch *ch)
{
    return &ch->me->rec[mdcom_t_rec[ch->pool_index] & 7u];
}
#define MDCOM_REC_SHARED 1
#else
static MDCOM_ALWAYS_INLINE mdcom_wire_oprec *mdcom_ch_rec(const struct mdcom_fifoch *ch)
{
    return &ch->me->rec[0];
}
#define mdcom_rec_held mdcom_ch_rec
#define mdcom_rec_park(m) ((void)(m))
#define MDCOM_REC_SHARED 0
#endif

/* ==== wait.c: the wait/wake protocol, waiter counts (layer 5) ============ */

/* wait on a shared word of channel chan until cond(arg) > 0 or deadline;
 * shared by FIFO and SMEM waits. cond returns > 0 ready (returned), 0 not yet, < 0 error.
 * Before each sleep slice it calls the reaper (mdcom_reap_until: an up-call). */
typedef int (*mdcom_cond_fn)(void *arg);
int mdcom_wait_word(struct mdcom_instance *m, uint32_t chan, mdcom_aword *word,
                    mdcom_aword *waiters, _Atomic uint32_t *spin_cur, uint32_t spin_max,
                    mdcom_cond_fn cond, void *arg, int64_t timeout_ns);
void mdcom_ring_word(struct mdcom_instance *m, mdcom_aword *word, mdcom_aword *waiters,
                     uint32_t chan);
/* A FIFO notify once its fence is done and it read ev_waiters = w with a
 * count: changes the event word, rings if it cleared ARMED (wait.c). */
void mdcom_event_ring(struct mdcom_instance *m, mdcom_wire_fifo_ctl *ctl, uint32_t chan,
                      uint32_t w);
/* A sleeper on a FIFO event word arms it after its snapshot of the word
 * (wait.c's own; exported on Linux, for the events helper thread). */
void mdcom_event_arm(mdcom_aword *waiters);
/* A sleeper's waiter count on channel chan, recorded in its process entry
 * (rec 0: the sleep of mdcom_wait_word, rec 1: an EV_NOTIFY wait's
 * announcement) with our incarnation. wait_end gives the count back only if
 * the record is still ours (a reaper that took us for dead gave it back
 * already), and never below 0; wait_begin repairs a count that reads
 * negative or beyond what sleepers can hold (forged) by recounting the live
 * records. */
void mdcom_wait_begin(struct mdcom_instance *m, uint32_t rec, uint32_t chan, mdcom_aword *waiters);
/* Take one from a waiter count, never below 0 (nor from a count that reads
 * negative: forged). */
void mdcom_waiters_down(mdcom_aword *waiters);
void mdcom_wait_end(struct mdcom_instance *m, uint32_t rec, mdcom_aword *waiters);
/* The master domain's audit of channel chan's waiter count (wait.c): one
 * that reads negative or more than any sleepers can hold (forged) is
 * recounted from the live waiter records, so that notifies without
 * sleepers write nothing again. */
void mdcom_waiters_audit(struct mdcom_instance *m, uint32_t chan);

/* ==== fifo.c: FIFO channels, the message path (layer 6) ================== */

/* Set up the handle f of channel &m->cl[k] (m->ch[k]); pfw: what
 * mdcom_cpu_prefetchw() said. Handles are passed as pointers: GCC would
 * address every field of m->ch[k] from m with 32-bit offsets. */
void mdcom_fifo_bind(struct mdcom_instance *m, struct mdcom_fifoch *f, const mdcom_chan_layout *cl,
                     uint32_t pfw);
/* our process entry is claimed (m->owner, m->hb_ms final): precompute the
 * words the message path writes and open its inline gates (f bound) */
void mdcom_fifo_own(struct mdcom_fifoch *f);
/* reclaim every block held by owner on every FIFO channel (term; dead != 0:
 * a dead process, counted in the channel's lost/reclaimed counters). */
void mdcom_fifo_release_owner(struct mdcom_instance *m, uint32_t owner, int dead);
/* Event-loop hooks (src/linux/events.c). The FIFO events of mask events
 * that hold now, without waiting (the conditions of mdcom_fifoch_wait;
 * NOTIFY: the event word differs from ev_snap). */
uint32_t mdcom_fifo_events(struct mdcom_fifoch *ch, uint32_t events, uint32_t ev_snap);

/* ==== smem.c: SMEM channels and their lock (layer 6) ===================== */

/* as mdcom_fifo_bind, for an SMEM channel */
void mdcom_smem_bind(struct mdcom_instance *m, struct mdcom_smemch *s, const mdcom_chan_layout *cl);
/* release every SMEM lock whose word is lock_owner (term: ours; reaper: the
 * dead entry's MDCOM_LOCK_MAKE(slot, incarn)). */
void mdcom_smem_release_owner(struct mdcom_instance *m, uint32_t lock_owner);

/* ==== fifo_repair.c: FIFO repairs (layer 7; full profile) ================ */

/* A dead process' queue operation in flight (its op record): fill the hole
 * of a claimed but unpublished position, free a block it claimed to dequeue
 * or queued into no slot. Called by the reaper before release_owner. */
void mdcom_fifo_reap_op(struct mdcom_instance *m, uint32_t owner, uint32_t op, uint32_t pos,
                        uint32_t id, uint32_t state);
/* Repair what the shared words of a FIFO channel prove wrong (the
 * master domain's periodic audit): positions further apart than the queue holds
 * (the channel is re-initialised), holes no live producer claims (skipped),
 * blocks owned by no live process, QUEUED blocks in no entry and no live
 * record, invalid state words (freed). Bounded: O(blocks + 8 x depth).
 * Returns the number of repairs; 0 for a handle that is not a FIFO's. */
uint32_t mdcom_fifo_audit(struct mdcom_fifoch *ch);

/* ==== master.c: formatting, the audit (layer 8; remote.c in the
 * remote-only profile) ==================================================== */

/* A master-domain process that judged fmt_pid fp (no live claimant or
 * formatter; state st read after it) claims the region, moves it to
 * FORMATTING and formats it (master.c): 0 formatted, the state still
 * FORMATTING (the caller claims its entry, then publishes READY, or EMPTY
 * when it cannot); 1 another candidate won (look again), or a negative
 * errno, set in e. The remote-only profile refuses (-EPERM). */
int mdcom_format_claim(struct mdcom_instance *m, uint32_t fp, uint32_t st, mdcom_err *e);
/* The master domain's audit of header, directory and every FIFO channel
 * (master.c; nothing in the remote-only profile), each at most once per
 * audit period (period: clock >> MDCOM_AUDIT_SHIFT, | 1), one after the
 * other until the clock reaches until (at least one per call): what is left
 * goes on at the next call (m->audit_more). */
void mdcom_audit(struct mdcom_instance *m, uint32_t period, uint64_t until);
#define MDCOM_AUDIT_SHIFT 27 /* the audit period: 2^27 ns (~134 ms) */

/* ==== reap.c: the reaper (layer 9; remote.c in the remote-only profile) == */

/* Take process entry i (owner word o) if its process is dead, or if it is a
 * claim whose claimer no longer exists: 1 taken, ours to reap with
 * mdcom_reap_slot and then to free (reap.c; 0 in the remote-only profile). */
int mdcom_take_if_dead(struct mdcom_instance *m, uint32_t i, uint32_t o);
/* Give back what the dead process of entry i held (we own the entry). */
void mdcom_reap_slot(struct mdcom_instance *m, uint32_t i);
/* Scan the process table for dead processes and reclaim what they held
 * (throttled: a scan begins at most once per ~67 ms per attachment), and
 * in the master domain audit when due, until the clock reaches until: the
 * part in hand is finished (one operation record of a dead entry, O(queue
 * depth), or its pass over the pools, O(blocks)), the rest goes on at a
 * later call, ~1 ms later at the earliest, or is done by another reaper: an
 * entry stopped half way goes back to the owner word it had, the state any
 * reaper takes (one dead by its heartbeat alone is finished at once: its
 * process may run on). Returns how many were reaped now (0 also when
 * throttled).
 * mdcom_reap: the budget of a call that never blocks, MDCOM_REAP_POLL_NS.
 * The up-calls of the core (above): wait.c, fifo.c and smem.c call these. */
int mdcom_reap_until(struct mdcom_instance *m, uint64_t until);
int mdcom_reap(struct mdcom_instance *m);
#define MDCOM_REAP_POLL_NS ((uint64_t)MDCOM_REAP_BUDGET_NS) /* mdcom.h */
/* Take process entry i for reaping: its owner word was o and its process
 * (pid, token) was judged dead. CAS owner o -> CLAIMING, then check that the
 * entry still holds that identity; if not (reaped and re-used meanwhile by a
 * live process of the same domain), the owner word goes back and 0 is
 * returned. 1: the entry is ours (CLAIMING) to reap, then to free. */
int mdcom_take_dead_slot(struct mdcom_instance *m, uint32_t i, uint32_t o, uint32_t pid,
                         uint32_t token);

/* ==== attach.c: attach and term (layer 10) =============================== */

/* Called first by mdcom_term when set (the events machinery stops its
 * helper thread and gives back its waiter counts); NULL where unused.
 * Built on Linux only, as mdcom_fifo_events (their one user is there). */
extern void (*_Atomic mdcom_term_hook)(struct mdcom_instance *m);

#endif /* MDCOM_INTERNAL_H */
