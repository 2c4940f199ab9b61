// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_cut.h - the cuts of a benchmark-only attribution build
 * (cmake -DMDCOM_BENCH_CUT="NAME;...", run by scripts/bench-lines). Each
 * MDCOM_CUT_<NAME> takes one shared line's traffic, or one barrier, out of
 * the FIFO message path, so that timing a cut build against the normal one
 * says what that line costs a round trip (docs/architecture.md, "Cache lines
 * per message"). A cut breaks guarantees (crash recovery, the untrusted-peer
 * checks): such a build only times a two-process ping-pong, and CMake
 * refuses to install or package it. In a normal build every cut is 0.
 *
 *   OPREC   the op record stores of enqueue's and dequeue's inline paths
 *           (the process entry's line: a reaper cannot find the block)
 *   BSTATE  the block state word on the inline paths: alloc takes the hinted
 *           block without its CAS, enqueue, dequeue and free leave the word
 *           alone (no double-free, forgery or ownership check)
 *   FENCE   notify's seq_cst fence before it reads the waiter count (a
 *           sleeper may miss its wake-up)
 *   SCAS    the block state word still written on the inline paths, but
 *           alloc's and dequeue's CAS on it are plain stores (no locked
 *           instruction; racing producers or a reaper could both win): the
 *           line moves as before, so SCAS against BSTATE splits the line's
 *           cost from the locked instructions'
 *   SINB    the block state word moved from the pool's state array into
 *           the block's own stride, just after its data (the stride grows
 *           by up to 7 bytes before rounding: alignment and the word): a
 *           small message's state word then
 *           shares the data's line (data up to 60 bytes) or its 128-B pair,
 *           so SINB against the normal build says what a state word
 *           riding with the data would save. Layout, format and FIFO paths
 *           follow it; mdcom-stat, the tools and the tests do not (the
 *           wire format is not the normal one)
 *   AHEAD   send claims the block of the next message right after its
 *           notify (while the peer works) and the next send uses it: the
 *           producer's read-for-ownership of the state line leaves the
 *           send path (the block stays claimed while the handle is idle;
 *           close does not give it back)
 *   NOQ     enqueue leaves the block state word ALLOC (the slot alone
 *           carries the QUEUED word) and dequeue's CAS expects ALLOC: the
 *           producer writes the state line at alloc only, which with
 *           AHEAD is long before the entry (a reaper would take a queued
 *           block for one in its producer's hands)
 *   SPAD    each block's state word alone in its own PAD unit of the state
 *           array (not 16 to a line): the consumer freeing block v and the
 *           producer claiming block v + 1 no longer write the same line
 *           (the same number of moves; with AHEAD, no fight over the line)
 *   NOCOLOR the block stride without its colouring PAD (whole pages from
 *           4 KiB on): every block starts on a page, so a 4 KiB message
 *           is one page, not two (the hardware prefetchers stop at page
 *           boundaries), at the price of the first lines' cache sets
 *   INLINE  small payloads carried in the queue slot: each slot position
 *           two PAD units, the entry in the first, up to 128 payload bytes
 *           in the second (off the pair the consumer polls); send of a
 *           message that fits claims a position and writes the payload
 *           into the slot (no block, no state word), recv copies it out
 *           before its claim. Copy path only: dequeue (zero-copy) and the
 *           full paths answer MDCOM_CUT_EINLINE at an inline entry, which
 *           recv then takes; no op record, no recovery
 */
#ifndef MDCOM_BENCH_CUT_H
#define MDCOM_BENCH_CUT_H

#ifndef MDCOM_CUT_OPREC
#define MDCOM_CUT_OPREC 0
#endif
#ifndef MDCOM_CUT_BSTATE
#define MDCOM_CUT_BSTATE 0
#endif
#ifndef MDCOM_CUT_FENCE
#define MDCOM_CUT_FENCE 0
#endif
#ifndef MDCOM_CUT_SCAS
#define MDCOM_CUT_SCAS 0
#endif
#ifndef MDCOM_CUT_AHEAD
#define MDCOM_CUT_AHEAD 0
#endif
#ifndef MDCOM_CUT_NOQ
#define MDCOM_CUT_NOQ 0
#endif
#ifndef MDCOM_CUT_SPAD
#define MDCOM_CUT_SPAD 0
#endif
#ifndef MDCOM_CUT_SINB
#define MDCOM_CUT_SINB 0
#endif
#ifndef MDCOM_CUT_NOCOLOR
#define MDCOM_CUT_NOCOLOR 0
#endif
#ifndef MDCOM_CUT_INLINE
#define MDCOM_CUT_INLINE 0
#endif
/* queue slot structs per slot position: 1, or (INLINE) two PAD units of 16,
 * the entry in the first unit and its inline payload in the second */
#define MDCOM_CUT_QSTEP (MDCOM_CUT_INLINE ? 16u : 1u)
#define MDCOM_CUT_INLINE_OFF 128u /* the payload: the second PAD unit */
#define MDCOM_CUT_INLINE_MAX 128u /* (not the pair the consumer polls) */
#define MDCOM_CUT_QID_INLINE 0xfffffffeu
/* what dequeue answers at an inline entry (recv then takes it) */
#define MDCOM_CUT_EINLINE (-EXDEV)
/* the distance between two blocks' state words in the state array: 4, or a
 * PAD unit each in a SPAD build */
#define MDCOM_CUT_BSTATE_STEP (MDCOM_CUT_SPAD ? 128u : 4u)
/* where SINB puts the word: the first 4-aligned byte after the data */
#define MDCOM_CUT_SINB_OFF(block_size) (((block_size) + 3u) & ~3u)

#endif
