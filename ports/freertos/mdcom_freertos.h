/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_freertos.h - the FreeRTOS port of libmdcom (ports/freertos).
 *
 * What an application on FreeRTOS calls besides the mdcom API; see
 * port_freertos.c for the design and ports/freertos/README.md for the build.
 *
 *   mdcom_platform_freertos()      the platform (also mdcom_platform_default()
 *                                  in a build with MDCOM_PORT=freertos)
 *   mdcom_freertos_doorbell_isr()  the board's doorbell interrupt handler
 *                                  calls it (IPCC RX, MU, a UART byte): wakes
 *                                  every task waiting in mdcom. The bare-metal
 *                                  board files call mdcom_bm_doorbell_raise(),
 *                                  which the FreeRTOS runtime maps to it.
 *   mdcom_freertos_task_deleted()  from FreeRTOSConfig.h:
 *                                  #define traceTASK_DELETE(t) mdcom_freertos_task_deleted(t)
 *                                  the task's mdcom identity is dead from then on
 *                                  (its peers reap what it held) and its wait
 *                                  record leaves the waiter list.
 *   mdcom_freertos_set_boot_seed() a number that differs at every boot (a
 *                                  counter in RAM that survives a warm reset):
 *                                  tokens of this boot differ from the last's.
 */
#ifndef MDCOM_FREERTOS_H
#define MDCOM_FREERTOS_H

#include <stdint.h>

#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Task identities: pid MDCOM_FRT_PID_BASE + slot (1 .. MDCOM_FRT_MAX_TASKS),
 * a foreign pid (bit 31) without bit 30, distinct from ports/baremetal's
 * MDCOM_BM_PID (+ core). */
#define MDCOM_FRT_PID_BASE (MDCOM_PID_FOREIGN | 0x00460000u) /* 'F' */
#ifndef MDCOM_FRT_MAX_TASKS
#define MDCOM_FRT_MAX_TASKS 16u
#endif
#define MDCOM_FRT_IS_TASK_PID(pid)                                                                 \
    (((pid)&0xffff0000u) == MDCOM_FRT_PID_BASE && ((pid)&0xffffu) >= 1u &&                         \
     ((pid)&0xffffu) <= MDCOM_FRT_MAX_TASKS)

const mdcom_platform *mdcom_platform_freertos(void);

/* From the doorbell interrupt (any priority at or below
 * configMAX_SYSCALL_INTERRUPT_PRIORITY): wake every waiting task. */
void mdcom_freertos_doorbell_isr(void);

/* traceTASK_DELETE hook (see above); task is the TaskHandle_t. */
void mdcom_freertos_task_deleted(void *task);

/* Tokens of this boot start from seed (see above); call before the first
 * mdcom_init. Default 1. */
void mdcom_freertos_set_boot_seed(uint32_t seed);

/* Monotonic nanoseconds: the tick count refined by SysTick's current value.
 * Callable from tasks and interrupts (it masks them up to
 * configMAX_SYSCALL_INTERRUPT_PRIORITY for a few instructions). */
uint64_t mdcom_freertos_now_ns(void);

/* The nanoseconds of one tick (1e9 / configTICK_RATE_HZ). */
uint32_t mdcom_freertos_tick_ns(void);

/* What the doorbell did since boot (statistics, for tests and tuning). */
typedef struct mdcom_freertos_stats {
    uint32_t waits;      /* doorbell.wait calls                              */
    uint32_t sleeps;     /* of those, blocked in the kernel                  */
    uint32_t woken;      /* sleeps ended by a ring or the doorbell interrupt */
    uint32_t timeouts;   /* waits that returned -ETIMEDOUT                   */
    uint32_t rings_task; /* ring() from a task                               */
    uint32_t rings_isr;  /* ring() from an interrupt                         */
    uint32_t doorbells;  /* mdcom_freertos_doorbell_isr() calls              */
    uint32_t wake_n;     /* wake-ups timed: notify -> the task runs again    */
    uint32_t wake_max_ns;
    uint64_t wake_sum_ns;
} mdcom_freertos_stats;

void mdcom_freertos_get_stats(mdcom_freertos_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_FREERTOS_H */
