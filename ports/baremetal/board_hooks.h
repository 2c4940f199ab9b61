/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * board_hooks.h - the platform hooks that every Cortex-M port takes from
 * the board description and the runtime as they are (region, lock, cache,
 * clock): ports/baremetal, and the RTOS ports that reuse its boards
 * (ports/freertos, ports/threadx). Only the doorbell and the process
 * identity differ between them.
 */
#ifndef MDCOM_BM_BOARD_HOOKS_H
#define MDCOM_BM_BOARD_HOOKS_H

#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill p's region_open / region_close (the board's fixed memory: one region
 * per board, -ENOSPC when smaller than asked), lock_try / lock_release (the
 * board's hardware semaphore, NULL without one: the core's portable lock)
 * cache_clean / cache_invalidate (NULL on coherent boards), now_ns (the
 * runtime's mdcom_bm_now_ns: SysTick, or the RTOS port's clock) and relax
 * (a nop). */
void mdcom_bm_board_hooks(mdcom_platform *p);

/* What an RTOS port's doorbell did since boot (statistics, for tests and
 * tuning): mdcom_threadx_stats, and the fields of mdcom_freertos_stats. */
typedef struct mdcom_bm_rtos_stats {
    uint32_t waits;      /* doorbell.wait calls                              */
    uint32_t sleeps;     /* of those, blocked in the kernel                  */
    uint32_t woken;      /* sleeps ended by a ring or the doorbell interrupt */
    uint32_t timeouts;   /* waits that returned -ETIMEDOUT                   */
    uint32_t rings_task; /* ring() from a thread / task                      */
    uint32_t rings_isr;  /* ring() from an interrupt                         */
    uint32_t doorbells;  /* doorbell interrupts seen by the port             */
    uint32_t wake_n;     /* wake-ups timed: woken -> the thread runs again   */
    uint32_t wake_max_ns;
    uint64_t wake_sum_ns;
} mdcom_bm_rtos_stats;

/* Add a timed wake-up of lat ns (the thread ran lat ns after it was woken). */
void mdcom_bm_rtos_stats_wake(mdcom_bm_rtos_stats *s, uint64_t lat);

/* An RTOS port's thread pids: base + slot, slot 1 .. max (base: a foreign
 * pid, bit 31, without bit 30, with the port's letter in bits 16..23). */
#define MDCOM_BM_RTOS_PID_IS(pid, base, max)                                                       \
    (((pid)&0xffff0000u) == (base) && ((pid)&0xffffu) >= 1u && ((pid)&0xffffu) <= (max))

/* What a port adds: its name, doorbell and process identity. */
typedef struct mdcom_bm_port_ops {
    const char *name;
    int (*wait)(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns);
    void (*ring)(void *ctx, mdcom_aword *word, uint32_t chan);
    int (*proc_self)(void *ctx, uint32_t *pid, uint32_t *token);
    int (*proc_alive)(void *ctx, uint32_t pid, uint32_t token);
} mdcom_bm_port_ops;

/* p, filled at the first call: the board hooks above and ops (doorbell ctx
 * and platform ctx NULL, reserved hooks NULL). */
const mdcom_platform *mdcom_bm_platform(mdcom_platform *p, const mdcom_bm_port_ops *ops);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_BM_BOARD_HOOKS_H */
