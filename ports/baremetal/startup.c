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

/* NMI, SVCall, PendSV, DebugMonitor: unused; report like a fault. */
void mdcom_bm_default_handler(void) { HardFault_Handler(); }

typedef void (*mdcom_bm_vector)(void);

#define IRQ mdcom_bm_irq_entry
__attribute__((section(".vectors"), used)) const mdcom_bm_vector mdcom_bm_vectors[16 + MDCOM_BM_NUM_IRQS] = {
    (mdcom_bm_vector)(uintptr_t)__stack_top,
    Reset_Handler,
    mdcom_bm_default_handler, /* NMI          */
    HardFault_Handler,        /* HardFault    */
    HardFault_Handler,        /* MemManage    */
    HardFault_Handler,        /* BusFault     */
    HardFault_Handler,        /* UsageFault   */
    0, 0, 0, 0,
    mdcom_bm_default_handler, /* SVCall       */
    mdcom_bm_default_handler, /* DebugMonitor */
    0,
    mdcom_bm_default_handler, /* PendSV       */
    SysTick_Handler,
    [16 ... 16 + MDCOM_BM_NUM_IRQS - 1] = IRQ,
};
