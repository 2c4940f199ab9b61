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

#endif
