/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx_runtime.c - what ThreadX's Cortex-M port needs from the application
 * and what ports/baremetal's runtime (startup.c, board files, cortexm.c)
 * needs from its port, answered once for every board of ports/baremetal:
 *
 *   _tx_initialize_low_level  ThreadX calls it from tx_kernel_enter: masks
 *                             interrupts (the scheduler unmasks them),
 *                             points VTOR at ports/baremetal's vector table,
 *                             gives the kernel the system stack (the reset
 *                             stack) and the first free RAM, programs
 *                             SysTick to TX_TIMER_TICKS_PER_SECOND from the
 *                             board's clock, and sets the exception
 *                             priorities ThreadX's context switch needs
 *                             (SVCall and PendSV lowest, SysTick above)
 *   SysTick_Handler           the tick: _tx_timer_interrupt (PendSV_Handler
 *                             is ThreadX's own, tx_thread_schedule.S; the
 *                             Cortex-M port uses no SVCall)
 *   mdcom_bm_systick_start    the board asks for a 1 ms SysTick at its init:
 *                             nothing then, the low-level init owns SysTick
 *   mdcom_bm_now_ns           the port's clock (tick count + SysTick)
 *   mdcom_bm_doorbell_raise   the board's doorbell interrupt: wake threads
 */
#include "tx_api.h"
#include "tx_initialize.h" /* _tx_initialize_unused_memory */
#include "tx_thread.h"     /* _tx_thread_system_stack_ptr */
#include "tx_timer.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom_threadx.h"

/* cortexm.ld and ports/baremetal/startup.c */
extern uint32_t __stack_top[], __ram_free[];
extern const uint32_t mdcom_bm_vectors[];
/* the tick of ThreadX's Cortex-M ports (tx_timer_interrupt.S; no header
 * declares it: the ports' own low-level init calls it from assembly) */
VOID _tx_timer_interrupt(VOID);

#define SCB_SHPR2 MDCOM_BM_REG(0xE000ED1Cu) /* SVCall: bits 31..24         */
#define SCB_SHPR3 MDCOM_BM_REG(0xE000ED20u) /* SysTick 31..24, PendSV 23..16 */
#ifndef MDCOM_TX_SYSTICK_PRIO
#define MDCOM_TX_SYSTICK_PRIO 0x40u /* the an386 doorbell's level: neither preempts the other */
#endif

static volatile uint32_t g_doorbells;

void _tx_initialize_low_level(void);
void _tx_initialize_low_level(void)
{
    uint32_t reload = mdcom_board_desc.cpu_hz / (uint32_t)TX_TIMER_TICKS_PER_SECOND - 1u;
    __asm__ __volatile__("cpsid i" ::: "memory");
    SCB_VTOR = (uint32_t)(uintptr_t)mdcom_bm_vectors;
    _tx_thread_system_stack_ptr = (VOID *)__stack_top;
    _tx_initialize_unused_memory = (VOID *)__ram_free;
    SYST_CSR = 0;
    SYST_RVR = reload > 0xffffffu ? 0xffffffu : reload;
    SYST_CVR = 0;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_TICKINT | SYST_CSR_CLKSOURCE;
    SCB_SHPR2 = (SCB_SHPR2 & 0x00ffffffu) | 0xff000000u;
    SCB_SHPR3 = (SCB_SHPR3 & 0x0000ffffu) | (MDCOM_TX_SYSTICK_PRIO << 24) | 0x00ff0000u;
}

void SysTick_Handler(void);
void SysTick_Handler(void) { _tx_timer_interrupt(); }

uint32_t mdcom_bm_doorbell_count(void) { return g_doorbells; }

void mdcom_bm_doorbell_raise(void)
{
    g_doorbells++;
    mdcom_threadx_doorbell_isr();
}

/* Before the kernel: the board's request is dropped (see above). */
void mdcom_bm_systick_start(uint32_t cpu_hz, uint32_t period_ticks)
{
    (void)cpu_hz;
    (void)period_ticks;
}

uint64_t mdcom_bm_now_ns(void) { return mdcom_threadx_now_ns(); }
