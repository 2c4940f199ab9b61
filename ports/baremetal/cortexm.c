/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cortexm.c - generic Cortex-M services of the bare-metal port: semihosting,
 * console formatting, exit and reset, the boot counter, and the fault handler
 * that reports the fault registers and exits. The clock is systick.c (bare
 * metal) or the RTOS port's (ports/freertos: the kernel owns SysTick).
 */
#include "board.h"
#include "cortexm.h"

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

void mdcom_bm_put_kv(const char *key, uint32_t v)
{
    mdcom_bm_puts(" ");
    mdcom_bm_puts(key);
    mdcom_bm_puts("=");
    mdcom_bm_put_u32(v);
}

int mdcom_bm_result(const char *name, int ok)
{
    mdcom_bm_puts("RESULT ");
    mdcom_bm_puts(name);
    mdcom_bm_puts(ok ? " PASS" : " FAIL");
    return !ok;
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
/* Boot counter (the token of this image's process identity)          */
/* ---------------------------------------------------------------- */

/* Boot counter in RAM that startup.c does not clear (.noinit). */
#define BOOT_MAGIC 0x4d424f54u /* "TOBM" */
static struct {
    uint32_t magic, count, check;
} g_boot __attribute__((section(".noinit")));
static uint32_t g_token;

uint32_t mdcom_bm_boot_token(void)
{
    if (!g_token) {
        if (g_boot.magic != BOOT_MAGIC || g_boot.check != ~g_boot.count)
            g_boot.count = 0; /* cold boot: RAM holds garbage */
        g_boot.count++;
        if (g_boot.count == 0 || g_boot.count == MDCOM_TOKEN_ANY) /* never a token */
            g_boot.count = 1;
        g_boot.magic = BOOT_MAGIC;
        g_boot.check = ~g_boot.count;
        g_token = g_boot.count;
    }
    return g_token;
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
