/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * startup.c - vector table and reset handler for any Cortex-M (ARMv7-M).
 *
 * The table holds the 16 architectural entries and MDCOM_BM_NUM_IRQS
 * external interrupts (the board's count, from board.cmake). Every external
 * interrupt enters mdcom_bm_irq_entry, which reads its number from IPSR and
 * calls the board's mdcom_board_irq(n): a board writes one C function, not a
 * table. Faults go to HardFault_Handler (cortexm.c), which reports and exits.
 *
 * SVCall, PendSV and SysTick go to SVC_Handler, PendSV_Handler and
 * SysTick_Handler, weak names that default to the fault report: the bare-metal
 * clock (systick.c) defines SysTick_Handler, and an RTOS defines all three
 * (FreeRTOS: FreeRTOSConfig.h maps vPortSVCHandler, xPortPendSVHandler and
 * xPortSysTickHandler to them, the CMSIS names), so one table serves both.
 *
 * Reset: copy .data from its load address, clear .bss (not .noinit), run
 * mdcom_board_init() and main(); main returning ends the program with its
 * status (mdcom_bm_exit).
 */
#include <stdint.h>

#include "board.h"
#include "cortexm.h"

#ifndef MDCOM_BM_NUM_IRQS
#define MDCOM_BM_NUM_IRQS 32
#endif

/* Linker script symbols (cortexm.ld). */
extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];

int main(void);
void Reset_Handler(void);
void mdcom_bm_irq_entry(void);
void mdcom_bm_default_handler(void);
void HardFault_Handler(void);
void SVC_Handler(void);
void PendSV_Handler(void);
void SysTick_Handler(void);

void Reset_Handler(void)
{
    uint32_t *s = __data_load, *d = __data_start;
    while (d < __data_end)
        *d++ = *s++;
    for (d = __bss_start; d < __bss_end;)
        *d++ = 0;
    mdcom_board_init();
    mdcom_bm_exit(main());
}

void mdcom_bm_irq_entry(void)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    mdcom_board_irq((ipsr & 0x1ffu) - 16u);
}

/* Interrupts the board leaves to the application: none by default. */
__attribute__((weak)) void mdcom_bm_app_irq(uint32_t irq) { (void)irq; }

/* NMI, DebugMonitor, and SVCall / PendSV / SysTick unless an RTOS or the
 * bare-metal clock defines them: unused; report like a fault. */
void mdcom_bm_default_handler(void) { HardFault_Handler(); }
void SVC_Handler(void) __attribute__((weak, alias("mdcom_bm_default_handler")));
void PendSV_Handler(void) __attribute__((weak, alias("mdcom_bm_default_handler")));
void SysTick_Handler(void) __attribute__((weak, alias("mdcom_bm_default_handler")));

typedef void (*mdcom_bm_vector)(void);

#define IRQ mdcom_bm_irq_entry
__attribute__((section(".vectors"), used))
const mdcom_bm_vector mdcom_bm_vectors[16 + MDCOM_BM_NUM_IRQS] = {
    (mdcom_bm_vector)(uintptr_t)__stack_top,
    Reset_Handler,
    mdcom_bm_default_handler, /* NMI          */
    HardFault_Handler,        /* HardFault    */
    HardFault_Handler,        /* MemManage    */
    HardFault_Handler,        /* BusFault     */
    HardFault_Handler,        /* UsageFault   */
    0,
    0,
    0,
    0,
    SVC_Handler,              /* SVCall       */
    mdcom_bm_default_handler, /* DebugMonitor */
    0,
    PendSV_Handler,  /* PendSV       */
    SysTick_Handler, /* SysTick      */
    [16 ... 16 + MDCOM_BM_NUM_IRQS - 1] = IRQ,
};
