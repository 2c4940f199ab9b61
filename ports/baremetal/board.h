/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * board.h - what a board file provides to the bare-metal port.
 *
 * The port (port_baremetal.c, cortexm.c, startup.c) is generic Cortex-M; a
 * board is one C file in ports/baremetal/boards/<board>/ plus a memory map
 * (memory.ld) and board.cmake (CPU flags, IRQ count). Adding STM32MP1
 * (IPCC + HSEM) or i.MX (MU + SEMA4) is a new directory there:
 *
 *   region    where the shared region lies (RETRAM/SRAM carveout, DDR)
 *   doorbell  ring(): raise the peer's interrupt (IPCC channel, MU GP
 *             interrupt, a UART byte); the board's interrupt handler calls
 *             mdcom_bm_doorbell_raise() when the peer rings us
 *   lock      optional hardware semaphore (HSEM, SEMA4) for SMEM locks
 *   cache     optional clean/invalidate (Cortex-M7: SCB D-cache by address)
 *   console   a character output for reports (UART)
 *
 * All functions are called with the board initialised (mdcom_board_init runs
 * before main).
 */
#ifndef MDCOM_BM_BOARD_H
#define MDCOM_BM_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdcom_board {
    const char *name;
    uint32_t cpu_hz;       /* SysTick clock (processor clock)            */
    uintptr_t region_base; /* the shared region                          */
    uint32_t region_size;
    int semihosting; /* 1: mdcom_bm_exit may use semihosting        */
    /* Ring the peer (chan: channel index or UINT32_MAX). Required. */
    void (*ring)(uint32_t chan);
    /* Console output of one character. Required (may discard). */
    void (*putc)(char c);
    /* Optional (NULL: the core's portable lock / coherent memory). */
    int (*lock_try)(uint32_t lock_id, mdcom_aword *word, uint32_t owner);
    int (*lock_release)(uint32_t lock_id, mdcom_aword *word, uint32_t owner);
    void (*cache_clean)(const void *addr, size_t len);
    void (*cache_invalidate)(const void *addr, size_t len);
    /* Optional: this image's pid (bit 31 set) when several cores of the
     * board run images (NULL: MDCOM_BM_PID). */
    uint32_t (*pid)(void);
} mdcom_board;

/* The board description (board file). */
extern const mdcom_board mdcom_board_desc;
/* Early init before main (board file): clocks, console, doorbell interrupt.
 * Called by Reset_Handler after .data/.bss are set up. */
void mdcom_board_init(void);
/* External interrupt irq (0-based NVIC number) fired (board file). */
void mdcom_board_irq(uint32_t irq);
/* An external interrupt the board does not use: the application's (weak
 * default in startup.c: ignored). */
void mdcom_bm_app_irq(uint32_t irq);

/* The bare-metal platform (port_baremetal.c). */
const mdcom_platform *mdcom_platform_baremetal(void);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_BM_BOARD_H */
