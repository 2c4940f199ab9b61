/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_threadx.h - the Eclipse ThreadX port of libmdcom (ports/threadx).
 *
 * What an application on ThreadX calls besides the mdcom API; see
 * port_threadx.c for the design and ports/threadx/README.md for the build.
 *
 *   mdcom_platform_threadx()        the platform (also mdcom_platform_default()
 *                                   in a build with MDCOM_PORT=threadx)
 *   mdcom_threadx_doorbell_isr()    the board's doorbell interrupt handler
 *                                   calls it (IPCC RX, MU, a UART byte): wakes
 *                                   every thread waiting in mdcom. The
 *                                   bare-metal board files call
 *                                   mdcom_bm_doorbell_raise(), which the
 *                                   ThreadX runtime maps to it.
 *   mdcom_threadx_thread_exited()   a thread's mdcom identity is dead from
 *                                   then on (its peers reap what it held).
 *                                   The port registers its own entry/exit
 *                                   notification on each thread that attaches
 *                                   (tx_thread_entry_exit_notify) unless the
 *                                   thread has one: then that callback must
 *                                   call this on TX_THREAD_EXIT.
 *   mdcom_threadx_set_boot_seed()   a number that differs at every boot (a
 *                                   counter in RAM that survives a warm reset):
 *                                   tokens of this boot differ from the last's.
 */
#ifndef MDCOM_THREADX_H
#define MDCOM_THREADX_H

#include <stdint.h>

#include "board_hooks.h" /* ports/baremetal: mdcom_bm_rtos_stats */
#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread identities: pid MDCOM_TX_PID_BASE + slot (1 .. MDCOM_TX_MAX_THREADS),
 * a foreign pid (bit 31) without bit 30, distinct from ports/baremetal's
 * MDCOM_BM_PID and ports/freertos' task pids. */
#define MDCOM_TX_PID_BASE (MDCOM_PID_FOREIGN | 0x00580000u) /* 'X' */
#ifndef MDCOM_TX_MAX_THREADS
#define MDCOM_TX_MAX_THREADS 16u
#endif
#define MDCOM_TX_IS_THREAD_PID(pid)                                                                \
    MDCOM_BM_RTOS_PID_IS(pid, MDCOM_TX_PID_BASE, MDCOM_TX_MAX_THREADS)

const mdcom_platform *mdcom_platform_threadx(void);

/* From the doorbell interrupt (any priority: ThreadX's Cortex-M ports call
 * services from every interrupt): wake every waiting thread. */
void mdcom_threadx_doorbell_isr(void);

/* The thread (a TX_THREAD *) exited or was terminated; see above. */
void mdcom_threadx_thread_exited(void *thread);

/* Tokens of this boot start from seed (see above); call before the first
 * mdcom_init. Default 1. */
void mdcom_threadx_set_boot_seed(uint32_t seed);

/* Monotonic nanoseconds: the tick count refined by SysTick's current value.
 * Callable from threads and interrupts (masks interrupts for a few
 * instructions). */
uint64_t mdcom_threadx_now_ns(void);

/* The nanoseconds of one tick (1e9 / TX_TIMER_TICKS_PER_SECOND). */
uint32_t mdcom_threadx_tick_ns(void);

/* The 64-bit tick count the clock and the timeouts use (ThreadX's 32-bit
 * tx_time_get() extended; the application must not move it with
 * tx_time_set). */
uint64_t mdcom_threadx_ticks64(void);

/* What the doorbell did since boot (ports/baremetal/board_hooks.h). */
typedef mdcom_bm_rtos_stats mdcom_threadx_stats;
void mdcom_threadx_get_stats(mdcom_threadx_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_THREADX_H */
