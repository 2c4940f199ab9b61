/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cortexm.c - generic Cortex-M services of the bare-metal port: the SysTick
 * clock, semihosting, console formatting, exit and reset, and the fault
 * handler that reports the fault registers and exits.
 */
#include "board.h"
#include "cortexm.h"

/* ---------------------------------------------------------------- */
/* SysTick clock                                                      */
/* ---------------------------------------------------------------- */

static uint32_t g_reload;        /* ticks per SysTick period - 1      */
static uint32_t g_ns_per_tick_q16; /* ns per tick, 16.16 fixed point   */
static volatile uint32_t g_periods; /* SysTick periods elapsed (ISR)   */
static uint32_t g_periods_hi;    /* carries of g_periods               */
static uint64_t g_last_ns;       /* the largest value now_ns returned  */

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

/* ---------------------------------------------------------------- */
/* Semihosting                                                        */
/* ---------------------------------------------------------------- */

static int semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (int)r0;
}

void mdcom_bm_semihost_write0(const char *s) { (void)semihost(0x04u, s); /* SYS_WRITE0 */ }

void mdcom_bm_semihost_exit(int code)
{
    /* SYS_EXIT_EXTENDED: {ADP_Stopped_ApplicationExit, exit status} */
    uint32_t blk[2] = {0x20026u, (uint32_t)code};
    for (;;)
        (void)semihost(0x20u, blk);
}

/* ---------------------------------------------------------------- */
/* Console                                                            */
/* ---------------------------------------------------------------- */

void mdcom_bm_puts(const char *s)
{
    while (*s)
        mdcom_board_desc.putc(*s++);
}

void mdcom_bm_put_u32(uint32_t v)
{
    uint32_t d = 1000000000u; /* the highest decimal place a u32 has */
    while (d > v && d > 1u)
        d /= 10u;
    for (; d; d /= 10u)
        mdcom_board_desc.putc((char)('0' + v / d % 10u));
}

void mdcom_bm_put_i32(int32_t v)
{
    if (v < 0) {
        mdcom_board_desc.putc('-');
        mdcom_bm_put_u32(0u - (uint32_t)v);
    } else {
        mdcom_bm_put_u32((uint32_t)v);
    }
}

void mdcom_bm_put_hex(uint32_t v)
{
    static const char dig[] = "0123456789abcdef";
    int i;
    mdcom_bm_puts("0x");
    for (i = 28; i >= 0; i -= 4)
        mdcom_board_desc.putc(dig[(v >> i) & 0xfu]);
}

void mdcom_bm_exit(int code)
{
    mdcom_bm_puts("exit ");
    mdcom_bm_put_i32(code);
    mdcom_bm_puts("\n");
    if (mdcom_board_desc.semihosting)
        mdcom_bm_semihost_exit(code);
    (void)mdcom_bm_irq_save();
    for (;;)
        mdcom_bm_wfi();
}

void mdcom_bm_reset(void)
{
    mdcom_bm_dmb();
    SCB_AIRCR = SCB_AIRCR_RESET;
    __asm__ __volatile__("dsb" ::: "memory");
    for (;;) {
    }
}

/* ---------------------------------------------------------------- */
/* Faults: report and exit (status 3)                                 */
/* ---------------------------------------------------------------- */

void mdcom_bm_fault_report(const uint32_t *frame, uint32_t exc_return);

void mdcom_bm_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    mdcom_bm_puts("\nFAULT exception ");
    mdcom_bm_put_u32(ipsr & 0x1ffu);
    mdcom_bm_puts(" pc ");
    mdcom_bm_put_hex(frame[6]);
    mdcom_bm_puts(" lr ");
    mdcom_bm_put_hex(frame[5]);
    mdcom_bm_puts(" exc_return ");
    mdcom_bm_put_hex(exc_return);
    mdcom_bm_puts("\n CFSR ");
    mdcom_bm_put_hex(SCB_CFSR);
    mdcom_bm_puts(" HFSR ");
    mdcom_bm_put_hex(SCB_HFSR);
    mdcom_bm_puts(" MMFAR ");
    mdcom_bm_put_hex(SCB_MMFAR);
    mdcom_bm_puts(" BFAR ");
    mdcom_bm_put_hex(SCB_BFAR);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(3);
}

/* All fault vectors: pass the stacked frame (MSP or PSP) to the reporter. */
__attribute__((naked)) void HardFault_Handler(void)
{
    __asm__ __volatile__("tst lr, #4\n"
                         "ite eq\n"
                         "mrseq r0, msp\n"
                         "mrsne r0, psp\n"
                         "mov r1, lr\n"
                         "b mdcom_bm_fault_report\n");
}
