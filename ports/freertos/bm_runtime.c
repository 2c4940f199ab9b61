/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bm_runtime.c - what the bare-metal runtime (ports/baremetal: startup,
 * board files, cortexm.c) expects from its port, answered by the FreeRTOS
 * port, so that the same board files and vector table serve FreeRTOS images:
 *
 *   mdcom_bm_systick_start  the board asks for a 1 ms SysTick: nothing here,
 *                           the kernel programs SysTick when the scheduler
 *                           starts (configTICK_RATE_HZ), and a second owner
 *                           would fight it
 *   mdcom_bm_now_ns         the port's clock (tick count + SysTick)
 *   mdcom_bm_doorbell_raise the board's doorbell interrupt: wake the tasks
 *   mdcom_bm_doorbell_count rings seen (statistics)
 */
#include "board.h"
#include "cortexm.h"
#include "mdcom_freertos.h"

static volatile uint32_t g_db_count;

void mdcom_bm_systick_start(uint32_t cpu_hz, uint32_t period_ticks)
{
    (void)cpu_hz;
    (void)period_ticks;
}

uint64_t mdcom_bm_now_ns(void) { return mdcom_freertos_now_ns(); }

void mdcom_bm_doorbell_raise(void)
{
    g_db_count++;
    mdcom_freertos_doorbell_isr();
}

uint32_t mdcom_bm_doorbell_count(void) { return g_db_count; }
