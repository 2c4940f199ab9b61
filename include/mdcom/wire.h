/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.h - the wire format of an mdcom shared region: a read-only view for
 * inspectors (mdcom-stat, tests, debuggers) and the one definition the core
 * (src/core/layout.h, layout.c) builds on. Only the core writes a region;
 * an inspector reads each shared word once, atomically for those marked *,
 * and validates offsets against the mapped size before following them (the
 * region may be damaged or written by an untrusted peer).
 *
 * All fields are 32-bit, little-endian (every supported core is), naturally
 * aligned; positions are byte offsets from the region base, never pointers.
 * CL = 64 bytes (the largest cache line of the supported cores). PAD = 128
 * bytes, the false-sharing distance: x86 cores fetch lines in 128-B aligned
 * pairs (the adjacent-line prefetcher), so a line written by one party next
 * to a line written by another still ping-pongs between the cores. Every
 * word written by one party on a hot path sits alone in its PAD unit, every
 * section starts on a PAD boundary and blocks are whole PAD units apart.
 * Cores with 32-B lines lose nothing but memory. Large block strides are
 * coloured (see blocks below). docs/architecture.md explains both choices
 * and docs/benchmarks.md has their measurements.
 *
 *  Region
 *  0        +--------------------------------------------------------------+
 *           | header (256 B): magic 'MDCM', version, hdr_size, region_size, |
 *           | layout_hash, generation*, state*, n_domains, n_channels,      |
 *           | dom_off, proc_off, dir_off, n_procs, data_off, master_domain, |
 *           | fmt_pid*, fmt_token (the formatting process: fmt_pid is       |
 *           |   FMT_CLAIM | pid while it claims, then pid with its token)  |
 *  256      +--------------------------------------------------------------+
 *  dom_off  | domain table: n_domains x 32 B {name[16], id, role}           |
 *  proc_off | process table: MDCOM_MAX_PROCS x 128 B (one PAD each: written |
 *           |   by its process on the message path)                        |
 *           |   {owner* (0 free, 1 claiming, 2+domain live), pid, token,    |
 *           |    heartbeat*, wait[2]* (waiter counts this process has      |
 *           |    incremented: channel + 1 | incarnation << 16, 0 = none),  |
 *           |    hb_ms (heartbeat promise; heartbeat* counts signs of      |
 *           |    life), incarn (counted up by each claim of the entry),    |
 *           |    rec[6]* {op, pos, id, state}: one record per thread of    |
 *           |    the queue operation in flight, for a reaper}              |
 *  dir_off  | channel directory: n_channels x 64 B                          |
 *           |   {name[32], type, off, size, block_size, block_count,        |
 *           |    queue_depth, senders, receivers}                          |
 *           |   (SMEM: block_size = data size, users in senders+receivers) |
 *  data_off +--------------------------------------------------------------+
 *           | channel areas, each PAD-aligned, in directory order           |
 *           +--------------------------------------------------------------+
 *  (* = written after formatting, atomically)
 *
 *  FIFO channel area (off .. off+size)
 *  +0     | enq_pos*                    | PAD  producers of the queue
 *  +128   | deq_pos*                    | PAD  consumers of the queue
 *  +256   | ev_seq*, ev_waiters*        | PAD  notify / wait (ev_waiters: count |
 *         |                             |      ARMED, MDCOM_WAITERS_*)
 *  +384   | filtered*, errors*, lost*,  | PAD  counters
 *         | reclaimed*, discarded*      |
 *  +512   | queue slots: qcap x 16 B {seq*, id*, len*, state*} qcap = queue_depth
 *  bst    | block states: block_count x 4 B* (state | incarnation << 4 |
 *         |   owner << 8 | gen << 16),
 *         |   PAD-aligned
 *  bl_off | blocks: block_count x stride, stride = block_size rounded to PAD,
 *         |   plus one PAD when that is >= 4 KiB and an even number of PADs
 *         |   (cache colouring: block heads spread over a page's 32 PADs),
 *         |   PAD-aligned
 *
 *  The queue is a bounded MPMC ring whose slots only producers write: a
 *  producer claims position p by CAS on enq_pos once p - deq_pos < qcap,
 *  fills the slot (id, len, the block's QUEUED state word) and publishes it with seq = 2p + 1 (odd; formatting writes
 *  0, which matches no position). A hole nobody will publish (a dead
 *  producer's, or one the formatter's audit proved unclaimed) is closed
 *  with seq = 2p + 2 (even), by CAS in the seq word alone. A consumer reads the slot at deq_pos, and
 *  if its seq says "entry of position p" claims it by CAS on deq_pos (read
 *  first, claim second: once deq_pos has passed p a producer may reuse the
 *  slot). Slot lines thus travel one way, producer -> consumer. Positions are
 *  free-running u32 compared with wrap-around differences. The pool is the block state array itself: a
 *  block is free when its state word is FREE, and alloc claims one by CAS,
 *  scanning from a private hint (no pool ring: one cache line less to move
 *  between the cores per message).
 *
 *  SMEM channel area
 *  +0     | lock* (0 free, else slot + 1 | incarnation << 8), lock_waiters* | PAD
 *  +128   | data: size bytes                              |
 */
#ifndef MDCOM_WIRE_H
#define MDCOM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/export.h"
#include "mdcom/mdcom.h"
#include "mdcom/platform.h"

/* The layout asserts below hold in C11 and in C++ (mdcom_aword is
 * std::atomic<uint32_t> there), whose keyword is static_assert: C++ has no
 * _Static_assert, and that name is reserved to the implementation. */
#ifdef __cplusplus
#define MDCOM_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define MDCOM_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#ifdef __cplusplus
extern "C" {
#endif

MDCOM_API_BEGIN /* the declarations below are the exported API */

#define MDCOM_CL 64u            /* cache line                                   */
#define MDCOM_PAD 128u          /* false-sharing distance (a 128-B line pair)   */
#define MDCOM_COLOR_MIN 4096u   /* from this block stride on, an odd number of PADs */
#define MDCOM_MAGIC 0x4d43444du /* "MDCM" little-endian */
#define MDCOM_HDR_SIZE 256u

/* Region states (hdr.state). */
enum {
    MDCOM_ST_EMPTY = 0,
    MDCOM_ST_FORMATTING = 0x464f524du, /* "MROF" */
    MDCOM_ST_READY = 0x59444552u,      /* "REDY" */
    MDCOM_ST_TERMINATED = 0x4d524554u  /* "TERM" */
};

/* hdr.fmt_pid: who formats the region. 0 nobody yet; MDCOM_FMT_CLAIM | pid
 * while that process claims it (fmt_token is not yet its own: it is judged
 * by its pid alone); pid once fmt_token holds its token (a release store
 * after the token). Candidates take it by CAS from the value they judged,
 * before the state CAS to FORMATTING, so one claim decides who formats.
 * Platform pids never have this bit (platform.h). */
#define MDCOM_FMT_CLAIM 0x40000000u

/* Process slot owner values. An entry being claimed (by a new process, or
 * by a reaper) names the claimer's pid when it fits in 31 bits, so that a
 * claimer that dies half-way is recognised and its claim taken over; other
 * claimers (ids a port cannot judge) write plain CLAIMING. */
#define MDCOM_PROC_FREE 0u
#define MDCOM_PROC_CLAIMING 1u
#define MDCOM_PROC_DOMAIN_BASE 2u /* owner = 2 + domain id */
#define MDCOM_PROC_CLAIMING_BY(pid)                                                                \
    ((pid) != 0 && (pid) < 0x400000u ? 0x80000000u | (uint32_t)(pid) : MDCOM_PROC_CLAIMING)
#define MDCOM_PROC_IS_CLAIMING(o) ((o) == MDCOM_PROC_CLAIMING || ((o)&0x80000000u) != 0)
#define MDCOM_PROC_CLAIMER(o) ((o)&0x7fffffffu)

/* Block state word: state (bits 0-3) | the owner's incarnation, its low 4
 * bits (bits 4-7) | owner (process slot + 1, bits 8-15; 0 when free) |
 * generation (bits 16-31, counted up by every alloc). Owner and incarnation
 * together ("who", bits 4-15) name the attachment that holds the block, not
 * only its slot: a process reaped while paused whose slot was claimed again
 * meanwhile finds another "who" in the words of its slot's new blocks and
 * cannot free or queue them. The generation makes a stale state word useless
 * for a CAS: a reaper that read QUEUED of one message cannot free the block
 * of a later message that reuses it (ABA). */
enum { MDCOM_BLK_FREE = 0x1, MDCOM_BLK_ALLOC = 0x2, MDCOM_BLK_QUEUED = 0x3, MDCOM_BLK_HELD = 0x4 };
#define MDCOM_BLK_STATE(w) ((w)&0xfu)
#define MDCOM_BLK_INC(w) (((w) >> 4) & 0xfu)
#define MDCOM_BLK_OWNER(w) (((w) >> 8) & 0xffu)
#define MDCOM_BLK_WHO(w) (((w) >> 4) & 0xfffu)
#define MDCOM_BLK_GEN(w) ((w) >> 16)
/* who of the attachment in process slot + 1 = owner with incarnation incarn */
#define MDCOM_BLK_WHO_OF(owner, incarn) (((uint32_t)(owner) << 4) | ((uint32_t)(incarn)&0xfu))
#define MDCOM_BLK_MAKEG(st, who, gen)                                                              \
    ((uint32_t)(st) | ((uint32_t)(who) << 4) | ((uint32_t)(gen) << 16))
#define MDCOM_BLK_MAKE(st, who) MDCOM_BLK_MAKEG(st, who, 0u)
/* state | who: the word without its generation */
#define MDCOM_BLK_SO(w) ((w)&0xffffu)

typedef struct mdcom_wire_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t hdr_size;
    uint32_t region_size;
    uint32_t layout_hash;
    mdcom_aword generation;
    mdcom_aword state;
    uint32_t n_domains;
    uint32_t n_channels;
    uint32_t dom_off;
    uint32_t proc_off;
    uint32_t dir_off;
    uint32_t n_procs;
    uint32_t data_off;
    uint32_t master_domain;
    mdcom_aword fmt_pid; /* process that claims/formats (MDCOM_FMT_CLAIM) / formatted */
    uint32_t fmt_token;
    uint8_t reserved[188];
} mdcom_wire_hdr;

typedef struct mdcom_wire_domain {
    char name[MDCOM_DOMAIN_NAME_MAX];
    uint32_t id;
    uint32_t role;
    uint32_t reserved[2];
} mdcom_wire_domain;

/* One thread's queue operation in flight (written before its position CAS,
 * left when done): op = kind << 16 | (channel index + 1), 0 = none. A reaper
 * uses it to fill the hole a producer killed between claiming and publishing
 * leaves (pos), and to find a block a consumer killed between claiming and
 * holding leaves behind (id; state: the block state word, with its
 * generation, that consumer read in the slot). */
typedef struct mdcom_wire_oprec {
    mdcom_aword op;
    mdcom_aword pos;
    mdcom_aword id;
    mdcom_aword state;
} mdcom_wire_oprec;
#define MDCOM_PROC_RECS 6u /* operation records per process entry */

typedef struct mdcom_wire_proc {
    mdcom_aword owner;
    uint32_t pid;
    uint32_t token;
    mdcom_aword heartbeat;
    mdcom_aword wait[2]; /* waiter records (MDCOM_WAITREC_MAKE), 0 = none */
    /* the heartbeat promise (ms, 0 = none) of mdcom_init_opts; written
     * before the entry reads live, like pid and token */
    uint32_t hb_ms;
    /* incarnation: counted up (16 bits, never 0) by every claim of the
     * entry, written before it reads live. It tags what an attachment owns -
     * its blocks (low 4 bits), lock words and waiter records - so that a
     * process reaped while paused cannot, when it runs again, release or
     * queue what the entry's next occupant holds. */
    uint32_t incarn;
    /* The queue operations in flight, one record per thread of the
     * attachment (as Linux's robust futex lists: each thread names what it
     * is doing, whoever cleans up after a death reads them all). A thread
     * takes a record of its own at its first queue operation and gives it
     * back when it ends; threads beyond MDCOM_PROC_RECS share record 0. */
    mdcom_wire_oprec rec[MDCOM_PROC_RECS];
} mdcom_wire_proc;
/* A waiter record (proc.wait[]): channel index + 1 in the low 16 bits, the
 * sleeper's incarnation above; 0 = none. */
#define MDCOM_WAITREC_MAKE(chan, incarn) ((uint32_t)(incarn) << 16 | ((uint32_t)(chan) + 1u))
#define MDCOM_WAITREC_CHAN(r) (((r)&0xffffu) - 1u)
/* A FIFO channel's ev_waiters: the count of sleepers on the event word in
 * bits 0-29 and "armed" in bit 30. A sleeper sets ARMED after its snapshot of
 * the event word; a notifier that sees a count changes the event word, and
 * rings the doorbell only when it is the one that clears ARMED: one wake-up
 * per sleep, not one per message while a woken sleeper has not run yet.
 * Bit 31 set means a corrupted count (recounted from the waiter records).
 * A SMEM lock's waiters word is a plain count (its unlocker always rings). */
#define MDCOM_WAITERS_COUNT 0x3fffffffu
#define MDCOM_WAITERS_ARMED 0x40000000u
/* A SMEM lock word: 0 free, else the holder's process slot + 1 in the low 8
 * bits and its incarnation in bits 8-23. */
#define MDCOM_LOCK_MAKE(slot, incarn) (((uint32_t)(incarn)&0xffffu) << 8 | ((uint32_t)(slot) + 1u))
#define MDCOM_LOCK_SLOT(w) (((w)&0xffu) - 1u)
#define MDCOM_LOCK_INCARN(w) (((w) >> 8) & 0xffffu)
#define MDCOM_OP_ENQ 1u
#define MDCOM_OP_DEQ 2u
#define MDCOM_OP_MAKE(kind, chan) ((uint32_t)(kind) << 16 | ((uint32_t)(chan) + 1u))
/* Queue entry id of a skipped position (a dead producer's hole). */
#define MDCOM_QID_SKIP 0xffffffffu

typedef struct mdcom_wire_dirent {
    char name[MDCOM_NAME_MAX];
    uint32_t type;
    uint32_t off;
    uint32_t size;
    uint32_t block_size;
    uint32_t block_count;
    uint32_t queue_depth;
    uint32_t senders;
    uint32_t receivers;
} mdcom_wire_dirent;

/* The channel's counters (one PAD unit, written rarely). */
typedef struct mdcom_wire_fifo_stats {
    mdcom_aword filtered;  /* enqueues a filter dropped               */
    mdcom_aword errors;    /* protocol errors detected                */
    mdcom_aword lost;      /* messages lost with a dead receiver      */
    mdcom_aword reclaimed; /* blocks taken back from dead processes   */
    mdcom_aword discarded; /* messages queued in the previous generation
                              that the re-format starting this one
                              discarded (written by the formatter)    */
    mdcom_aword reserved[MDCOM_PAD / 4 - 5];
} mdcom_wire_fifo_stats;

/* One PAD unit holding a queue position (its writers: the producers, or the
 * consumers; nobody else writes the line). */
typedef struct mdcom_wire_pos_line {
    mdcom_aword pos; /* free-running u32 position */
    uint32_t pad[MDCOM_PAD / 4 - 1];
} mdcom_wire_pos_line;

/* One PAD unit: a word that sleepers wait on and the count of sleepers. */
typedef struct mdcom_wire_wait_line {
    mdcom_aword word;    /* FIFO: the event sequence; SMEM: the lock word */
    mdcom_aword waiters; /* sleepers on word (each one recorded in its process entry) */
    uint32_t pad[MDCOM_PAD / 4 - 2];
} mdcom_wire_wait_line;

typedef struct mdcom_wire_fifo_ctl {
    mdcom_wire_pos_line enq;     /* enq.pos: the producers' position   */
    mdcom_wire_pos_line deq;     /* deq.pos: the consumers' position   */
    mdcom_wire_wait_line event;  /* event sequence and its sleepers    */
    mdcom_wire_fifo_stats stats; /* counters                          */
} mdcom_wire_fifo_ctl;

typedef struct mdcom_wire_qslot {
    mdcom_aword seq;
    mdcom_aword id;
    mdcom_aword len;
    /* the block's state word as its producer set it (QUEUED | owner | gen):
     * the consumer's expected value for its QUEUED -> HELD CAS, so it need
     * not read the state line first (one cache miss less per message) */
    mdcom_aword state;
} mdcom_wire_qslot;

typedef struct mdcom_wire_smem_ctl {
    mdcom_wire_wait_line lock; /* lock.word: the holder (MDCOM_LOCK_MAKE), 0 free */
} mdcom_wire_smem_ctl;

/* The wire format is fixed: any change here is a new MDCOM_WIRE_VERSION. */
MDCOM_STATIC_ASSERT(sizeof(mdcom_aword) == 4, "32-bit shared atomics");
MDCOM_STATIC_ASSERT(MDCOM_COLOR_MIN % MDCOM_PAD == 0 && MDCOM_COLOR_MIN / MDCOM_PAD == 32,
                    "colouring: odd strides visit the 32 PADs of a 4 KiB page");
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_hdr) == MDCOM_HDR_SIZE, "header size");
/* field f of mdcom_wire_<T> at byte off */
#define MDCOM_WIRE_AT(T, f, off)                                                                   \
    MDCOM_STATIC_ASSERT(offsetof(mdcom_wire_##T, f) == (off), #T "." #f)
MDCOM_WIRE_AT(hdr, magic, 0);
MDCOM_WIRE_AT(hdr, version, 4);
MDCOM_WIRE_AT(hdr, hdr_size, 8);
MDCOM_WIRE_AT(hdr, region_size, 12);
MDCOM_WIRE_AT(hdr, layout_hash, 16);
MDCOM_WIRE_AT(hdr, generation, 20);
MDCOM_WIRE_AT(hdr, state, 24);
MDCOM_WIRE_AT(hdr, n_domains, 28);
MDCOM_WIRE_AT(hdr, n_channels, 32);
MDCOM_WIRE_AT(hdr, dom_off, 36);
MDCOM_WIRE_AT(hdr, proc_off, 40);
MDCOM_WIRE_AT(hdr, dir_off, 44);
MDCOM_WIRE_AT(hdr, n_procs, 48);
MDCOM_WIRE_AT(hdr, data_off, 52);
MDCOM_WIRE_AT(hdr, master_domain, 56);
MDCOM_WIRE_AT(hdr, fmt_pid, 60);
MDCOM_WIRE_AT(hdr, fmt_token, 64);
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_domain) == 32, "domain entry");
MDCOM_WIRE_AT(domain, id, 16);
MDCOM_WIRE_AT(domain, role, 20);
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_proc) == MDCOM_PAD, "process entry: one PAD unit");
MDCOM_WIRE_AT(proc, pid, 4);
MDCOM_WIRE_AT(proc, token, 8);
MDCOM_WIRE_AT(proc, heartbeat, 12);
MDCOM_WIRE_AT(proc, wait, 16);
MDCOM_WIRE_AT(proc, hb_ms, 24);
MDCOM_WIRE_AT(proc, incarn, 28);
MDCOM_WIRE_AT(proc, rec, 32);
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_oprec) == 16, "operation record");
MDCOM_WIRE_AT(oprec, pos, 4);
MDCOM_WIRE_AT(oprec, id, 8);
MDCOM_WIRE_AT(oprec, state, 12);
MDCOM_STATIC_ASSERT(MDCOM_MAX_DIR <= 0xffffu, "a waiter record's channel fits in 16 bits");
MDCOM_STATIC_ASSERT(MDCOM_MAX_PROCS < 255u, "a block's owner (slot + 1) fits in 8 bits");
MDCOM_STATIC_ASSERT(MDCOM_BLK_HELD <= 0xfu, "block states fit in 4 bits");
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_dirent) == 64, "directory entry");
MDCOM_WIRE_AT(dirent, type, 32);
MDCOM_WIRE_AT(dirent, off, 36);
MDCOM_WIRE_AT(dirent, size, 40);
MDCOM_WIRE_AT(dirent, block_size, 44);
MDCOM_WIRE_AT(dirent, block_count, 48);
MDCOM_WIRE_AT(dirent, queue_depth, 52);
MDCOM_WIRE_AT(dirent, senders, 56);
MDCOM_WIRE_AT(dirent, receivers, 60);
MDCOM_STATIC_ASSERT(MDCOM_PAD % MDCOM_CL == 0, "a PAD unit is whole cache lines");
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_pos_line) == MDCOM_PAD, "position line");
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_wait_line) == MDCOM_PAD, "wait line");
MDCOM_WIRE_AT(fifo_ctl, enq.pos, 0);
MDCOM_WIRE_AT(fifo_ctl, deq.pos, 128);
MDCOM_WIRE_AT(fifo_ctl, event.word, 256);
MDCOM_WIRE_AT(fifo_ctl, event.waiters, 260);
MDCOM_WIRE_AT(smem_ctl, lock.word, 0);
MDCOM_WIRE_AT(smem_ctl, lock.waiters, 4);
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_fifo_ctl) == 512, "fifo control");
MDCOM_WIRE_AT(fifo_ctl, deq, 128);
MDCOM_WIRE_AT(fifo_ctl, event, 256);
MDCOM_WIRE_AT(fifo_ctl, stats, 384);
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_fifo_stats) == MDCOM_PAD, "fifo stats: one PAD unit");
MDCOM_WIRE_AT(fifo_stats, errors, 4);
MDCOM_WIRE_AT(fifo_stats, lost, 8);
MDCOM_WIRE_AT(fifo_stats, reclaimed, 12);
MDCOM_WIRE_AT(fifo_stats, discarded, 16);
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_qslot) == 16, "queue slot");
MDCOM_WIRE_AT(qslot, id, 4);
MDCOM_WIRE_AT(qslot, len, 8);
MDCOM_WIRE_AT(qslot, state, 12);
#undef MDCOM_WIRE_AT
MDCOM_STATIC_ASSERT(sizeof(mdcom_wire_smem_ctl) == MDCOM_PAD, "smem control");

/* ---- Where things are: the core's layout computation, for inspectors ----
 * Hosted builds (the Linux port) only. An inspector rebuilds an
 * mdcom_config from a region's domain table and directory (or uses its own),
 * computes the layout with mdcom_wire_layout_compute() and checks the region
 * against it with mdcom_wire_verify() - the same checks a remote makes at
 * attach - before it reads any live word at the computed offsets. */

/* The region's geometry (offsets from the region base). */
typedef struct mdcom_wire_layout {
    uint32_t dom_off, proc_off, dir_off, data_off;
    uint32_t needed;      /* bytes the layout needs                  */
    uint32_t region_size; /* bytes the region has (>= needed)        */
    uint32_t hash;        /* the header's layout_hash                */
    uint32_t master_domain;
} mdcom_wire_layout;

/* One channel's geometry: off from the region base, the others from off. */
typedef struct mdcom_wire_chan_layout {
    uint32_t type; /* MDCOM_CHAN_FIFO or MDCOM_CHAN_SMEM */
    uint32_t off;  /* channel area in the region         */
    uint32_t size; /* channel area bytes                 */
    /* FIFO: queue slots (qcap of them), block states, blocks (stride apart) */
    uint32_t qslots_off, qcap;
    uint32_t bstate_off;
    uint32_t blocks_off, stride;
    uint32_t block_size, block_count;
    /* SMEM: the data area */
    uint32_t data_off, data_size;
    uint32_t senders, receivers; /* SMEM: users in both */
} mdcom_wire_chan_layout;

/* A configuration's layout computed ahead of time, on the build host, by the
 * core's own layout code (mdcom_generate_config(... LAYOUT) in CMake writes
 * one as C: <prefix>_layout): what mdcom_init would compute from cfg. Given
 * in mdcom_init_opts.layout, it spares the firmware the code that validates
 * a configuration and computes its layout (MDCOM_RUNTIME_LAYOUT=OFF). */
typedef struct mdcom_layout_table {
    const mdcom_config *cfg; /* the configuration it was computed for    */
    mdcom_wire_layout lay;
    uint32_t n_channels; /* entries in chans (= cfg->n_channels)     */
    const mdcom_wire_chan_layout *chans;
} mdcom_layout_table;

/* Validate cfg and compute its layout. chans (may be NULL) receives
 * cfg->n_channels entries; err (may be NULL) a NUL-terminated reason.
 * Returns 0, -EINVAL (cfg invalid) or -ENOSPC (region_size too small). */
int mdcom_wire_layout_compute(const mdcom_config *cfg, mdcom_wire_layout *lay,
                              mdcom_wire_chan_layout *chans, char *err, size_t err_len);

/* Check the formatted region mapped at base (mapped_size bytes) against the
 * layout of cfg, reading each shared header and directory field once.
 * Returns 0, -EINVAL / -ENOSPC (cfg, as above), -ENOMEM, -EBADMSG (not an
 * mdcom region, or damaged), -EPROTONOSUPPORT (another wire version) or
 * -ESTALE (another configuration); err says which field differs. */
int mdcom_wire_verify(const void *base, uint32_t mapped_size, const mdcom_config *cfg, char *err,
                      size_t err_len);

MDCOM_API_END

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_WIRE_H */
