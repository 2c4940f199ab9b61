/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lean_floor.h - a reference floor for the API cost table of
 * mdcom-fw-apicost.elf, NOT used by mdcom: a minimal single-producer /
 * single-consumer pool + ring with the checks the project's rules require
 * and nothing else (see lean_floor.c). mdcom's cost minus this floor's is
 * the price of multi-producer / multi-consumer channels with crash recovery.
 */
#ifndef MDCOM_LEAN_FLOOR_H
#define MDCOM_LEAN_FLOOR_H

#include <stdatomic.h>
#include <stdint.h>

#define LF_BLOCKS 8u      /* blocks in the pool, a power of two */
#define LF_BLOCK_SIZE 64u /* bytes per block */
#define LF_SLOTS 8u       /* ring slots, a power of two */

/* Block state word, as mdcom's: state | owner << 8 | generation << 16 */
enum { LF_FREE = 1, LF_ALLOC = 2, LF_QUEUED = 3, LF_HELD = 4 };
#define LF_WORD(st, owner, gen) ((uint32_t)(st) | (uint32_t)(owner) << 8 | (uint32_t)(gen) << 16)

typedef struct lf_slot {
    _Atomic uint32_t seq;            /* position + 1 once the slot is published */
    _Atomic uint32_t id, len, state; /* state: the block's QUEUED word */
} lf_slot;

/* The shared area: positions on their own 32-byte lines */
typedef struct lf_shared {
    _Alignas(32) _Atomic uint32_t prod; /* producer's position */
    _Alignas(32) _Atomic uint32_t cons; /* consumer's position */
    _Alignas(32) _Atomic uint32_t blk[LF_BLOCKS];
    lf_slot ring[LF_SLOTS];
    _Alignas(32) uint8_t data[LF_BLOCKS][LF_BLOCK_SIZE];
} lf_shared;

/* One side's handle (private): the producer uses hint/head/cons_seen, the
 * consumer tail. Our words precomputed, as mdcom's handles do: alloc_so and
 * held_so are our ALLOC and HELD words without their generation, alloc_delta
 * turns a FREE word into our ALLOC word of the next generation. */
typedef struct lf_chan {
    uint32_t tag;
    lf_shared *sh;
    uint32_t hint, head, cons_seen, tail;
    uint32_t alloc_so, held_so, alloc_delta;
} lf_chan;

void lf_format(lf_shared *sh);
int lf_open(lf_chan *c, lf_shared *sh, uint32_t me);
int lf_alloc(lf_chan *c, uint32_t *id);
int lf_free(lf_chan *c, uint32_t id);
int lf_enqueue(lf_chan *c, uint32_t id, uint32_t len);
int lf_dequeue(lf_chan *c, uint32_t *id, uint32_t *len);

#endif
