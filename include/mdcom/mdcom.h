/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom.h - public API of libmdcom, the MDCOM multi-domain communication library.
 *
 * A "system" is one shared memory region used by several domains (an OS instance:
 * a group of Linux processes, firmware on another core). The master domain formats
 * the region; remotes attach in any order. The region holds channels:
 *
 *   FIFO channel: a pool of fixed-size blocks + a FIFO of block IDs + an event word.
 *                 alloc -> get -> write -> enqueue -> notify   (sender)
 *                 wait  -> dequeue -> get -> read -> free -> notify (receiver)
 *   SMEM channel: a shared area guarded by an inter-domain lock.
 *
 * Conventions
 *   - Every function returning int returns 0 (or a documented non-negative value)
 *     on success and a negative errno value on failure. mdcom_strerror() names them.
 *   - Timeouts are int64_t nanoseconds: MDCOM_POLL (0) never blocks, a positive
 *     value blocks at most that long, MDCOM_FOREVER (-1) blocks until the event.
 *     A call that times out returns -ETIMEDOUT and never blocks past its timeout
 *     by more than the platform's scheduling latency. Calls that find a peer
 *     dead reclaim what it held (see mdcom_sense_process) within their
 *     budget: a timed call until its deadline, a call that never blocks
 *     (MDCOM_POLL, alloc, enqueue, dequeue, free, trylock, the sense calls)
 *     for about 1 ms (MDCOM_REAP_BUDGET_NS) plus the one part in hand;
 *     what is left is done by later calls or by other processes.
 *   - Errors that mean "the shared region holds something this side did not
 *     expect" (a corrupted or hostile peer) are -EPROTO (bad index/state) and
 *     -EBADMSG (bad length/ID in a message). They never cause an out-of-bounds
 *     access here.
 *   - Handles are opaque. Channel handles live as long as their mdcom_t.
 *   - All functions are thread-safe and multi-process safe, except that
 *     mdcom_term() must not race with other calls on the same mdcom_t.
 *
 * Errors common to every function taking a handle: -EINVAL for a NULL or foreign
 * handle or argument out of range. Calls that start a message (alloc, send) or
 * wait (wait, send, recv, lock) also return -ESHUTDOWN once the master
 * terminated the region and -ECONNRESET once it re-formatted it (generation
 * changed; re-attach with mdcom_term + mdcom_init). Calls that finish a
 * message (enqueue, dequeue, free) still work, so what is queued can be drained.
 * A process that promised a heartbeat (mdcom_init_opts.heartbeat_ms) and
 * missed it gets -ENOTCONN from those calls and from dequeue: the others have
 * reclaimed what it held (mdcom_term + mdcom_init again). Such a process
 * also checks its own process entry, and a damaged one (another owner,
 * identity or incarnation written there, or a claim on it that no reaper
 * finishes) is -ENOTCONN as well, from the next of those calls and from
 * mdcom_heartbeat: the entry no longer accounts for what it holds. Nothing
 * is taken off a queue then (a message dequeued in the instant of the damage
 * is counted in mdcom_fifo_state.lost); mdcom_term gives back what the
 * entry still names and frees it, and mdcom_init attaches again.
 */
#ifndef MDCOM_MDCOM_H
#define MDCOM_MDCOM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "mdcom/export.h"

/* Error codes used by mdcom that some C libraries (newlib without its Linux
 * extensions) lack. Portable code compares with MDCOM_ESHUTDOWN and
 * MDCOM_EUSERS: the C library's value where it has one, else a value outside
 * every libc's range. This header defines no name of the C library's own: a
 * project whose code still says ESHUTDOWN / EUSERS on such a C library
 * defines MDCOM_ERRNO_COMPAT before including it, and gets them as these. */
#ifdef ESHUTDOWN
#define MDCOM_ESHUTDOWN ESHUTDOWN
#else
#define MDCOM_ESHUTDOWN 2001
#endif
#ifdef EUSERS
#define MDCOM_EUSERS EUSERS
#else
#define MDCOM_EUSERS 2002
#endif
#ifdef MDCOM_ERRNO_COMPAT
#ifndef ESHUTDOWN
#define ESHUTDOWN MDCOM_ESHUTDOWN
#endif
#ifndef EUSERS
#define EUSERS MDCOM_EUSERS
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

MDCOM_API_BEGIN /* the declarations below are the exported API */

/* ------------------------------------------------------------------ */
/* Version                                                              */
/* ------------------------------------------------------------------ */
#define MDCOM_VERSION_MAJOR 0
#define MDCOM_VERSION_MINOR 1
#define MDCOM_VERSION_PATCH 0
#define MDCOM_VERSION_STRING "0.1.0" /* = project(VERSION) in CMakeLists.txt */
/* Wire format version of the shared region (checked at attach). */
#define MDCOM_WIRE_VERSION 9u

/* ------------------------------------------------------------------ */
/* Limits (properties of the wire format, not build options)            */
/* ------------------------------------------------------------------ */
#define MDCOM_NAME_MAX 32u        /* bytes incl. NUL for channel names  */
#define MDCOM_DOMAIN_NAME_MAX 16u /* bytes incl. NUL for domain names */
#define MDCOM_MAX_DOMAINS 32u     /* domain ids 0..31 (bit masks)        */
#define MDCOM_MAX_PROCS 64u       /* attached processes per region       */
#define MDCOM_MAX_DIR 1024u       /* channels per region                 */
#define MDCOM_MAX_BLOCKS 65536u   /* blocks per FIFO channel             */

/* Timeouts in nanoseconds. */
#define MDCOM_POLL ((int64_t)0)
#define MDCOM_FOREVER ((int64_t)-1)
/* Reclaiming the dead done by one call that never blocks, at most (plus
 * the part in hand: one operation record of a dead process, O(queue depth),
 * or the pass over the block states, O(blocks)); the rest goes on at later
 * calls, ~1 ms apart at the earliest, or in other processes. */
#define MDCOM_REAP_BUDGET_NS 1000000

/* ------------------------------------------------------------------ */
/* Static configuration (generated by mdcom-cfg, or filled at run time) */
/* ------------------------------------------------------------------ */
enum mdcom_role { MDCOM_ROLE_MASTER = 1, MDCOM_ROLE_REMOTE = 2 };
enum mdcom_chan_type { MDCOM_CHAN_FIFO = 1, MDCOM_CHAN_SMEM = 2 };

typedef struct mdcom_domain_cfg {
    const char *name; /* 1..15 chars                                   */
    uint32_t id;      /* 0..31, unique                                 */
    uint32_t role;    /* enum mdcom_role; exactly one master           */
} mdcom_domain_cfg;

typedef struct mdcom_channel_cfg {
    const char *name; /* 1..31 chars, unique                       */
    uint32_t type;    /* enum mdcom_chan_type                      */
    /* FIFO channels */
    uint32_t block_size;  /* bytes per block, >= 1                     */
    uint32_t block_count; /* blocks in the pool, 1..MDCOM_MAX_BLOCKS   */
    uint32_t queue_depth; /* FIFO slots, power of two >= 1; 0 = the
                             smallest power of two >= block_count      */
    uint32_t senders;     /* bit mask of domain ids that may send      */
    uint32_t receivers;   /* bit mask of domain ids that may receive   */
    /* SMEM channels */
    uint32_t size;  /* bytes of the shared area, >= 1            */
    uint32_t users; /* bit mask of domain ids that may use it    */
} mdcom_channel_cfg;

typedef struct mdcom_config {
    const char *region_name; /* 1..31 chars of [A-Za-z0-9._-]         */
    uint32_t region_size;    /* bytes; 0 = exactly what the layout needs */
    uint32_t mode;           /* region file permission bits (Linux);
                                 0 = 0600; never world-accessible      */
    int32_t group;           /* gid allowed to attach: the port sets the
                                 region's group and adds g+rw; -1 none  */
    const mdcom_domain_cfg *domains;
    uint32_t n_domains;
    const mdcom_channel_cfg *channels;
    uint32_t n_channels;
} mdcom_config;

/* ------------------------------------------------------------------ */
/* Opaque handles                                                        */
/* ------------------------------------------------------------------ */
/* The tag is not `struct mdcom`: C++ code needs that name for the namespace
 * of <mdcom/mdcom.hpp> (a tag and a namespace of one name cannot coexist). */
typedef struct mdcom_instance mdcom_t;
typedef struct mdcom_fifoch mdcom_fifoch_t;
typedef struct mdcom_smemch mdcom_smemch_t;
struct mdcom_platform;     /* see mdcom/platform.h */
struct mdcom_layout_table; /* see mdcom/wire.h */

/* ------------------------------------------------------------------ */
/* Initialisation                                                        */
/* ------------------------------------------------------------------ */
typedef struct mdcom_init_opts {
    /* How long mdcom_init may wait for the master to create and format the
     * region (remotes) - MDCOM_POLL, a time in ns, or MDCOM_FOREVER. */
    int64_t attach_timeout_ns;
    /* Platform to use; NULL = the port the library was built with. */
    const struct mdcom_platform *platform;
    /* Optional buffer that receives a one-line explanation of a failure,
     * e.g. "region 'sys': channel 'ctl': block_size 64 in region, 128 in config". */
    char *errbuf;
    size_t errbuf_len;
    /* Spin time before sleeping in waits (adaptive start value), in ns.
     * 0 = library default; set MDCOM_NO_SPIN to sleep at once. */
    uint32_t spin_ns;
    /* Master only: keep the region file at mdcom_term() (default: remove). */
    uint32_t keep_region;
    /* Heartbeat promise in ms (0 = none; else MDCOM_HEARTBEAT_MIN_MS ..
     * MDCOM_HEARTBEAT_MAX_MS). With it, the other processes count this one
     * dead - and reclaim its blocks, locks and process slot - when it has not
     * shown a sign of life for that long, even though its platform says it
     * exists: the liveness record of firmware, whose "pid" cannot be probed,
     * and of a hung process. Signs of life: mdcom_heartbeat(), every
     * mdcom_fifoch_alloc / mdcom_fifoch_dequeue, and every wait (once per
     * sleep slice, <= 50 ms). Choose it above the longest time the process
     * computes without calling mdcom or holds a SMEM lock. */
    uint32_t heartbeat_ms;
    uint32_t reserved0; /* must be zero (see reserved) */
    /* The layout of cfg computed ahead of time (<mdcom/wire.h>,
     * mdcom_layout_table: the generated <prefix>_layout of
     * mdcom_generate_config(... LAYOUT)), or NULL: mdcom_init computes it.
     * It must be the table of this very cfg (-EINVAL otherwise). A core built
     * with MDCOM_RUNTIME_LAYOUT=OFF (firmware) needs it (-EINVAL without). */
    const struct mdcom_layout_table *layout;
    /* Reserved for options of later versions; must be zero (a designated or
     * `= {0}` initializer does it). A later minor version gives a word a
     * meaning only with 0 = the behaviour of this version, so code built
     * against this header keeps working unchanged. */
    uint32_t reserved[4];
} mdcom_init_opts;

#define MDCOM_HEARTBEAT_MIN_MS 100u
#define MDCOM_HEARTBEAT_MAX_MS 3600000u

#define MDCOM_NO_SPIN 0xffffffffu

/* Attach this process to the system described by cfg as domain domain_id.
 * A process of the master domain creates and formats the region (re-using and
 * re-formatting a stale one, with generation + 1); further processes of the
 * master domain join it like remotes, and only the formatting process ends the
 * region at mdcom_term. A remote waits up to opts->attach_timeout_ns for the
 * master, then checks the region against cfg. Attach order does not matter.
 * opts may be NULL (attach timeout 0, default platform).
 * cfg is NOT copied: the handle keeps the pointer (and the names and tables it
 * points to) until mdcom_term, so cfg must outlive the handle (a generated
 * `const mdcom_config` or a static one does; a stack copy does not). opts is
 * read during the call only.
 * Returns 0 and *out, or:
 *   -EINVAL   invalid config or domain_id (errbuf says which key)
 *   -ENOSPC   region_size too small for the layout, or too many instances
 *   -ETIMEDOUT the master did not format the region in time
 *   -EPROTONOSUPPORT region has another wire version
 *   -ESTALE   region geometry/layout does not match cfg (errbuf says where)
 *   -EBADMSG  region header corrupted (bad magic or fields)
 *   -EUSERS   all MDCOM_MAX_PROCS process slots in use
 *   -EADDRINUSE (master domain) a live master serves the region with another
 *             layout (-ESTALE is returned instead when verification names it)
 *   -EPERM/-EACCES region file owned by someone else or too permissive
 *   other negative errno from the platform's region mapping or its process
 *             entry lock; for a remote also the error of a master whose init
 *             failed on the region it created (Linux: the marker file it left,
 *             e.g. -ENOSPC for a full shm directory), returned at once.
 * A process that waits for the master follows the region's name: a file
 * unlinked (a restarting master's term) or replaced while it waits is opened
 * again, so it attaches to the new master's region as soon as it is formatted. */
int mdcom_init(mdcom_t **out, const mdcom_config *cfg, uint32_t domain_id,
               const mdcom_init_opts *opts);

/* A sign of life for the heartbeat promised at mdcom_init (see
 * mdcom_init_opts.heartbeat_ms); without one it only checks the region.
 * Call it from a loop that can run longer than the promise without other
 * mdcom calls. Returns 0, or:
 *   -EINVAL     m is not an instance
 *   -ENOTCONN   other processes took this one for dead (it missed its
 *               heartbeat) and reclaimed its slot, blocks and locks, or its
 *               process entry was damaged (see the conventions above):
 *               every further use is refused; mdcom_term() and attach again
 *   -ECONNRESET / -ESHUTDOWN  the region was re-formatted / terminated */
int mdcom_heartbeat(mdcom_t *m);

/* Detach. The process that formatted the region marks it terminated (waiters
 * elsewhere return -ESHUTDOWN) and removes it unless keep_region. Blocks this
 * process still holds are returned to their pools. Returns 0 or -EINVAL. */
int mdcom_term(mdcom_t *m);

/* Number of live processes attached as domain domain_id (>= 0), or -EINVAL.
 *
 * Dead processes: a process that dies attached (kill -9) is found by the
 * survivors' next mdcom_sense_process / mdcom_sense_fifoch, a wait that sleeps
 * a whole slice (50 ms) without news, an alloc that finds the pool dry or a
 * lock attempt that finds the lock busy (a scan of the process table begins
 * at most once per ~67 ms per attachment; each call scans within its budget,
 * MDCOM_REAP_BUDGET_NS or its deadline, and a scan cut short goes on at the
 * next call). A dead process not reached yet is not counted. What it held
 * is given back: its allocated and dequeued blocks return to their pools (a
 * dequeued one is counted as lost in mdcom_fifo_state.lost, for senders to
 * see), its SMEM locks are released, its slot is freed. Messages it had
 * queued stay queued. */
int mdcom_sense_process(mdcom_t *m, uint32_t domain_id);

/* The domain id of this attachment (UINT32_MAX for an invalid handle). */
uint32_t mdcom_domain_id(const mdcom_t *m);

/* Name of an mdcom error code (e.g. "EPROTO: peer violated the protocol"). */
const char *mdcom_strerror(int err);

/* ------------------------------------------------------------------ */
/* FIFO channels                                                         */
/* ------------------------------------------------------------------ */

/* Find a FIFO channel by name. -ENOENT if none, -EPERM if this domain is
 * neither sender nor receiver of it. */
int mdcom_fifoch_open(mdcom_t *m, const char *name, mdcom_fifoch_t **out);

/* Channel by its index in cfg->channels (as generated: MDCOM_CH_<NAME>). */
int mdcom_fifoch_at(mdcom_t *m, uint32_t index, mdcom_fifoch_t **out);

typedef struct mdcom_fifo_state {
    uint32_t block_size;
    uint32_t block_count;
    uint32_t queue_depth;
    uint32_t free_blocks; /* blocks in the pool, ready to alloc         */
    uint32_t queued;      /* block IDs in the FIFO, ready to dequeue    */
    uint32_t filtered;    /* enqueues dropped by a filter (all time)    */
    uint32_t errors;      /* protocol errors detected on this channel   */
    uint32_t lost;        /* messages lost with a receiver that died
                              after dequeuing them (all time)            */
    uint32_t reclaimed;   /* blocks taken back from dead processes      */
    uint32_t discarded;   /* messages that were queued when the region was
                              re-formatted in place (a master restarted
                              or reset), discarded by that re-format:
                              this generation's start, not all time      */
    /* Room for counters of later versions (the struct's size is part of the
     * ABI); this version leaves them as the caller set them: zero the struct
     * before the call to tell a later counter's 0 from "not written". */
    uint32_t reserved[6];
} mdcom_fifo_state;

/* Usage of the channel (a snapshot; reaps dead processes first, see
 * mdcom_sense_process). 0, -EINVAL, -EPROTO (counters absurd). */
int mdcom_sense_fifoch(mdcom_fifoch_t *ch, mdcom_fifo_state *st);

/* Take a free block. 0 and *id, -ENOBUFS if the pool is empty, -EPERM if this
 * domain may not send, -ESHUTDOWN / -ECONNRESET / -ENOTCONN (see above).
 * Never blocks (a dry pool: at most MDCOM_REAP_BUDGET_NS of reclaiming the
 * dead); wait for MDCOM_EV_TX to block. */
int mdcom_fifoch_alloc(mdcom_fifoch_t *ch, uint32_t *id);

/* Return a block this process allocated or dequeued to the pool.
 * 0, -EINVAL bad id, -EALREADY block not held by this process, -EPROTO,
 * -ENOTCONN this process was taken for dead (a missed heartbeat promise, or a
 * forged identity in its process entry) and reaped: the block went back to
 * the pool with it, nothing is changed. */
int mdcom_fifoch_free(mdcom_fifoch_t *ch, uint32_t id);

/* Address and size of a block. 0, -EINVAL (bad id). */
int mdcom_fifoch_get(mdcom_fifoch_t *ch, uint32_t id, void **ptr, uint32_t *size);

/* Queue block id carrying len bytes (len <= block size). Ownership passes to
 * the receiver. Returns 0, or MDCOM_FILTERED (1) when the channel's filter
 * dropped it (the block is freed and counted), -EAGAIN queue full,
 * -EINVAL bad id/len, -EALREADY block not allocated by this process,
 * -EPERM not a sender, -EPROTO corrupted queue, -ENOTCONN this process was
 * reaped (as for mdcom_fifoch_free; nothing is queued). Does not wake the receiver:
 * call mdcom_fifoch_notify() (once per batch is enough). */
int mdcom_fifoch_enqueue(mdcom_fifoch_t *ch, uint32_t id, uint32_t len);
#define MDCOM_FILTERED 1

/* Take the oldest queued block. 0 with *id and *len (len may be NULL),
 * -EAGAIN if empty, -EPERM not a receiver, -EPROTO/-EBADMSG if the queue
 * holds an invalid block ID, state or length (the slot is consumed and
 * counted), -ENOTCONN this process was reaped or its entry damaged (see
 * above: nothing is taken), -ECONNRESET (or -ESHUTDOWN) the entry was queued
 * in a newer generation of the region (re-formatted since we attached:
 * nothing is taken, it is left to that generation's receivers; attach
 * again). The caller owns the block until mdcom_fifoch_free(). Never
 * blocks. */
int mdcom_fifoch_dequeue(mdcom_fifoch_t *ch, uint32_t *id, uint32_t *len);

/* Signal the channel's event: wakes processes blocked in mdcom_fifoch_wait()
 * on it, in any domain. When nobody sleeps it writes nothing to shared memory
 * (one fence and one load). Senders call it after enqueue (once per batch is
 * enough); receivers after free, to wake senders waiting for blocks or space.
 * 0 or -EINVAL. */
int mdcom_fifoch_notify(mdcom_fifoch_t *ch);

/* Events for mdcom_fifoch_wait. RX, TX and SPACE are levels (true while the
 * condition holds); NOTIFY is an edge. */
#define MDCOM_EV_RX 0x1u     /* a block is queued (dequeue will succeed)       */
#define MDCOM_EV_TX 0x2u     /* a block is free (alloc will succeed)           */
#define MDCOM_EV_NOTIFY 0x4u /* mdcom_fifoch_notify() was called during this wait */
#define MDCOM_EV_SPACE 0x8u  /* the FIFO has a free slot (enqueue will not -EAGAIN) */

/* Wait until one of events holds. Returns the mask of events that hold (> 0),
 * -ETIMEDOUT, -EINVAL (events 0), -ESHUTDOWN / -ECONNRESET / -ENOTCONN (see
 * above), -EINTR (signal, Linux).
 * The condition may be gone again by the time the caller acts on it (another
 * process may have taken the block): callers loop. */
int mdcom_fifoch_wait(mdcom_fifoch_t *ch, uint32_t events, int64_t timeout_ns);

/* Copy helpers. send: wait for a free block up to timeout, copy len bytes,
 * enqueue, notify. Returns 0, MDCOM_FILTERED, -EMSGSIZE (len > block size),
 * or the errors of wait/alloc/enqueue (-ETIMEDOUT also when a block or a
 * slot the wait saw was gone again at the deadline; -ENOTCONN: the message
 * was not queued).
 * recv: wait for a block up to timeout, copy it to buf, free it, notify.
 * Returns the message length (>= 0), or -EMSGSIZE if cap is too small: the
 * message is consumed, its first cap bytes copied, and the channel's error
 * counter incremented (use the zero-copy API to size buffers first), or the
 * errors of wait/dequeue, or -EALREADY if a peer changed the received block's
 * state while we held it (the data was copied). */
int mdcom_fifoch_send(mdcom_fifoch_t *ch, const void *buf, uint32_t len, int64_t timeout_ns);
int mdcom_fifoch_recv(mdcom_fifoch_t *ch, void *buf, uint32_t cap, int64_t timeout_ns);

/* Filters decide, at enqueue, whether a message is actually sent. */
enum mdcom_filter_type {
    MDCOM_FILTER_NONE = 0,  /* every message passes                   */
    MDCOM_FILTER_EVERY_NTH, /* pass messages n-1, 2n-1, ... (every nth) */
    MDCOM_FILTER_FUNC       /* pass when fn returns non-zero          */
};
typedef int (*mdcom_filter_fn)(void *arg, const void *msg, uint32_t len);
typedef struct mdcom_filter {
    uint32_t type; /* enum mdcom_filter_type */
    uint32_t n;    /* EVERY_NTH: n >= 1     */
    mdcom_filter_fn fn;
    void *arg;
} mdcom_filter;

/* Set (or clear with NULL / MDCOM_FILTER_NONE) this process' filter on the
 * channel's send side. It runs in mdcom_fifoch_enqueue(): EVERY_NTH counts
 * messages (an enqueue that fails with -EAGAIN does not count, so a retry
 * meets the same decision); a FUNC filter is called on every attempt and
 * should decide from the message alone. 0, -EINVAL (bad type, n == 0, FUNC
 * without fn), -EPERM not a sender. */
int mdcom_filter_set(mdcom_fifoch_t *ch, const mdcom_filter *f);

/* Re-initialise a FIFO channel: all blocks back in the pool, queue empty,
 * counters zero, waiters woken. Only the master domain may do it, and only
 * when no other process is using the channel. 0, -EPERM. */
int mdcom_fifoch_init(mdcom_fifoch_t *ch);

/* Adaptive spin limit for waits on this channel (ns); MDCOM_NO_SPIN sleeps
 * at once. 0 or -EINVAL. */
int mdcom_fifoch_set_spin(mdcom_fifoch_t *ch, uint32_t spin_ns);

/* ------------------------------------------------------------------ */
/* SMEM channels                                                         */
/* ------------------------------------------------------------------ */

/* Find an SMEM channel by name. -ENOENT, -EPERM (not a user). */
int mdcom_smemch_open(mdcom_t *m, const char *name, mdcom_smemch_t **out);
int mdcom_smemch_at(mdcom_t *m, uint32_t index, mdcom_smemch_t **out);

/* Address and size of the shared area. Access it only while holding the lock. */
int mdcom_smemch_get(mdcom_smemch_t *ch, void **ptr, uint32_t *size);

/* Take the lock without waiting. 0, -EBUSY (held), -EDEADLK (held by this
 * process already). Never blocks (a busy lock: at most MDCOM_REAP_BUDGET_NS
 * of reclaiming the dead). */
int mdcom_smemch_trylock(mdcom_smemch_t *ch);

/* Take the lock, waiting up to timeout_ns. 0, -ETIMEDOUT, -EDEADLK,
 * -ESHUTDOWN / -ECONNRESET / -ENOTCONN (see above). */
int mdcom_smemch_lock(mdcom_smemch_t *ch, int64_t timeout_ns);

/* Release the lock (publishes the area's contents). 0, -EPERM if this
 * process does not hold it, -ENOTCONN if this process was taken for dead and
 * reaped (its lock was broken then). */
int mdcom_smemch_unlock(mdcom_smemch_t *ch);

MDCOM_API_END

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_MDCOM_H */
