/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * smem_round.h - the SMEM mutual-exclusion round both an521 cores run at the
 * same time on the "state" area (words: [0] counter, [1] holder mark):
 *
 *   lock (trylock until it succeeds; each -EBUSY counted), read the
 *   counter, write our mark, spin a little so the other core has time to
 *   break in, check that mark and counter are unchanged (else a "disturbed"
 *   hold), write counter + 1, unlock.
 *
 * Both cores start together: CPU1 sets word [2] ("ready") and waits for
 * word [3] ("go"), which CPU0 sets after it saw [2] (CPU0 clears both before
 * it sends the command). Without this start line CPU0 may finish its rounds
 * before CPU1 has even received the command, and nothing is contended.
 *
 * Words [4..10] serve the optional Linux domain (smem3): [4] Linux is
 * attached and ready (set by Linux), [8] the three-way phase began (set by
 * CPU0 after it cleared [3] and [11]), [11] Linux saw [8] and now spins for
 * "go" [3] like CPU1 (CPU0 waits for it before it starts the cores),
 * [10] both cores finished (set by CPU0: Linux, much faster, keeps taking
 * the lock until then, so that it contends for the whole phase), [5] Linux
 * finished, [6] its disturbed holds, [7] its -EBUSY retries, [9] its rounds
 * (set by Linux).
 *
 * With the lock each core's rounds must see no disturbance and the counter
 * must end at the sum of both cores' rounds. With nolock (the negative
 * control) the same code without the lock must lose updates when both cores
 * really run in parallel: this is what shows the test can fail.
 */
#ifndef MDCOM_FW_SMEM_ROUND_H
#define MDCOM_FW_SMEM_ROUND_H

#include <errno.h>
#include <stdint.h>

#include "cortexm.h"
#include "mdcom/mdcom.h"

#define SMEM_MARK_CPU0 0x43505530u /* "CPU0" */
#define SMEM_MARK_CPU1 0x43505531u
#define SMEM_HOLD_SPIN 8u

/* The start line (see above); cpu 0 or 1. 0, or -ETIMEDOUT when the other
 * core does not arrive within about a second of spinning. */
static inline int smem_start_line(volatile uint32_t *area, uint32_t cpu)
{
    uint32_t k;
    if (cpu) {
        area[2] = 1u;
        mdcom_bm_dmb(); /* "ready" is published before we wait for "go" */
        for (k = 0; area[3] != 1u; k++)
            if (k > 200000000u)
                return -ETIMEDOUT;
    } else {
        for (k = 0; area[2] != 1u; k++)
            if (k > 200000000u)
                return -ETIMEDOUT;
        mdcom_bm_dmb(); /* CPU1's "ready" is seen before "go" */
        area[3] = 1u;
    }
    mdcom_bm_dmb(); /* the rounds' accesses come after the start line */
    return 0;
}

static inline int smem_rounds(mdcom_smemch_t *ch, volatile uint32_t *area, uint32_t rounds,
                              uint32_t nolock, uint32_t mark, uint32_t *done, uint32_t *disturbed,
                              uint32_t *busy)
{
    int r0 = smem_start_line(area, mark == SMEM_MARK_CPU1);
    if (r0)
        return r0;
    while (*done < rounds) {
        uint32_t v, k;
        if (!nolock) {
            int r = mdcom_smemch_trylock(ch);
            if (r == -EBUSY) {
                ++*busy;
                continue;
            }
            if (r)
                return r;
        }
        v = area[0];
        area[1] = mark;
        for (k = 0; k < SMEM_HOLD_SPIN; k++)
            __asm__ __volatile__("nop" ::: "memory");
        if (area[0] != v || area[1] != mark)
            ++*disturbed;
        area[0] = v + 1;
        if (!nolock) {
            int r = mdcom_smemch_unlock(ch);
            if (r)
                return r;
        }
        ++*done;
    }
    return 0;
}

#endif /* MDCOM_FW_SMEM_ROUND_H */
