/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * systick.c - the bare-metal port's clock: SysTick extended to 64-bit
 * nanoseconds, and its interrupt handler. An RTOS port (ports/freertos)
 * links its own clock instead: there the kernel owns SysTick.
 */
#include "board.h"
#include "cortexm.h"

/* ---------------------------------------------------------------- */
/* SysTick clock                                                      */
/* ---------------------------------------------------------------- */

static uint32_t g_reload;           /* ticks per SysTick period - 1      */
static uint32_t g_ns_per_tick_q16;  /* ns per tick, 16.16 fixed point   */
static volatile uint32_t g_periods; /* SysTick periods elapsed (ISR)   */
static uint32_t g_periods_hi;       /* carries of g_periods               */
static uint64_t g_last_ns;          /* the largest value now_ns returned  */

void mdcom_bm_systick_start(uint32_t cpu_hz, uint32_t period_ticks)
{
    uint32_t csr = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE;
    if (period_ticks == 0 || period_ticks > (1u << 24))
        period_ticks = 1u << 24;
    else
        csr |= SYST_CSR_TICKINT;
    g_reload = period_ticks - 1u;
    g_ns_per_tick_q16 = (uint32_t)((1000000000ull << 16) / cpu_hz);
    SYST_CSR = 0;
    SYST_RVR = g_reload;
    SYST_CVR = 0;
    SYST_CSR = csr;
}

void SysTick_Handler(void)
{
    if (++g_periods == 0)
        g_periods_hi++;
}

uint64_t mdcom_bm_now_ns(void)
{
    uint32_t pm = mdcom_bm_irq_save();
    uint64_t periods = ((uint64_t)g_periods_hi << 32) | g_periods;
    uint32_t v = SYST_CVR;
    uint64_t ticks, ns;
    if (SCB_ICSR & SCB_ICSR_PENDSTSET) {
        /* wrapped, not yet counted (IRQs masked): re-read after the wrap */
        v = SYST_CVR;
        periods++;
    }
    ticks = periods * ((uint64_t)g_reload + 1u) + (g_reload - v);
    ns = (ticks * g_ns_per_tick_q16) >> 16;
    /* Never backwards. An emulator can show the counter reloaded before the
     * SysTick exception is pending (QEMU pends it from a timer callback,
     * which runs late on a loaded host): that read lacks one period until
     * the handler runs. Hold the last value meanwhile (IRQs still masked:
     * the handler and other callers on this core cannot interleave). */
    if (ns < g_last_ns)
        ns = g_last_ns;
    else
        g_last_ns = ns;
    mdcom_bm_irq_restore(pm);
    return ns;
}
