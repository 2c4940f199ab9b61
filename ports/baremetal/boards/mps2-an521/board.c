/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * board.c - ARM MPS2+ AN521 (two Cortex-M33 in an SSE-200) as modelled by
 * QEMU (mps2-an521). Addresses from QEMU's hw/arm/armsse.c and
 * hw/arm/mps2-tz.c (checked with `info mtree` on QEMU 7.2). Both cores run
 * in the Secure state and use the secure (0x1/0x3/0x5...) aliases.
 *
 *   region    16 MiB PSRAM at 0x80000000: QEMU's main RAM of the machine,
 *             so -machine memory-backend= maps it from a file (file offset
 *             X = 0x80000000 + X); both cores see it
 *   code/RAM  CPU0: SSRAM1 0x10000000, SSRAM2 0x38000000; CPU1: 0x10200000,
 *             SSRAM3 0x38200000 (memory.ld, memory_cpu1.ld)
 *   console   CPU0: UART0 (0x50200000, first -serial); CPU1: UART1
 *             (0x50201000, second -serial)
 *   doorbell  MHU0 (0x50003000): ring() sets channel bit (chan % 4) in the
 *             other core's SET register; the other core's MHU0 interrupt
 *             (NVIC 6 on each core) clears the bits it saw and raises the
 *             port's doorbell
 *   CPU1 boot SSE-200 system control (0x50021000): INITSVTOR1 (+0x114), then
 *             CPUWAIT (+0x118) bit 1 cleared: QEMU powers CPU1 on and resets
 *             it (CPU1 is held at reset while CPUWAIT bit 1 is set, its
 *             reset value on the SSE-200)
 *   clock     each core's own SysTick on the 20 MHz SYSCLK, 1 ms period
 *   lock      portable (LDREX/STREX; atomic across the two vCPUs when QEMU
 *             runs multi-threaded TCG)
 */
#include "an521.h"
#include "../mps2.h"

#define UART0_BASE 0x50200000u
#define UART1_BASE 0x50201000u
#define SYSCTL_BASE 0x50021000u
#define CPUID_REG MDCOM_BM_REG(0x5001f000u) /* SSE-200 CPU_IDENTITY: core number */

#define SYSCTL_INITSVTOR1 MDCOM_BM_REG(SYSCTL_BASE + 0x114u)
#define SYSCTL_CPUWAIT MDCOM_BM_REG(SYSCTL_BASE + 0x118u)

#define MHU_STAT(b, cpu) MDCOM_BM_REG((b) + 0x10u * (cpu) + 0x0u)
#define MHU_SET(b, cpu) MDCOM_BM_REG((b) + 0x10u * (cpu) + 0x4u)
#define MHU_CLR(b, cpu) MDCOM_BM_REG((b) + 0x10u * (cpu) + 0x8u)
#define MHU_MASK ((1u << AN521_MHU_CHANNELS) - 1u)


#define CPU_HZ 20000000u

static uint32_t g_cpu; /* 0 or 1, set by mdcom_board_init */
static uint32_t g_uart = UART0_BASE;
static volatile uint32_t g_mhu_irqs[2];
static volatile uint32_t g_mhu_bits;

static uintptr_t mhu_base(uint32_t mhu) { return mhu ? AN521_MHU1_BASE : AN521_MHU0_BASE; }

uint32_t mdcom_an521_cpu(void) { return g_cpu; }

void mdcom_an521_mhu_set(uint32_t mhu, uint32_t cpu, uint32_t bits)
{
    MHU_SET(mhu_base(mhu), cpu & 1u) = bits & MHU_MASK;
}

void mdcom_an521_mhu_clear(uint32_t mhu, uint32_t cpu, uint32_t bits)
{
    MHU_CLR(mhu_base(mhu), cpu & 1u) = bits & MHU_MASK;
}

uint32_t mdcom_an521_mhu_status(uint32_t mhu, uint32_t cpu)
{
    return MHU_STAT(mhu_base(mhu), cpu & 1u);
}

uint32_t mdcom_an521_mhu_irqs(uint32_t mhu) { return g_mhu_irqs[mhu & 1u]; }

uint32_t mdcom_an521_mhu_take_bits(void)
{
    uint32_t pm = mdcom_bm_irq_save();
    uint32_t b = g_mhu_bits;
    g_mhu_bits = 0;
    mdcom_bm_irq_restore(pm);
    return b;
}

void mdcom_an521_start_cpu1(uint32_t vtor)
{
    SYSCTL_INITSVTOR1 = vtor;
    mdcom_bm_dmb(); /* the vector table and the region are written before CPU1 runs */
    SYSCTL_CPUWAIT = SYSCTL_CPUWAIT & ~2u;
}

static void an521_putc(char c) { mps2_uart_putc(g_uart, c); }

static void an521_ring(uint32_t chan)
{
    uint32_t bit = chan == UINT32_MAX ? 1u : 1u << (chan % AN521_MHU_CHANNELS);
    /* the region's stores must be visible before the other core's interrupt */
    __asm__ __volatile__("dsb" ::: "memory");
    MHU_SET(AN521_MHU0_BASE, g_cpu ^ 1u) = bit;
}

static uint32_t an521_pid(void) { return MDCOM_BM_PID + g_cpu; }

const mdcom_board mdcom_board_desc = {
    MPS2_BOARD_DESC("mps2-an521", CPU_HZ, 0x80000000u),
    .ring = an521_ring,
    .putc = an521_putc,
    .pid = an521_pid,
};

void mdcom_board_init(void)
{
    g_cpu = CPUID_REG & 1u;
    g_uart = g_cpu ? UART1_BASE : UART0_BASE;
    mps2_uart_init(g_uart, UART_CTRL_TXEN);
    /* bits left from before this core's reset are stale rings: drop them */
    MHU_CLR(AN521_MHU0_BASE, g_cpu) = MHU_MASK;
    MHU_CLR(AN521_MHU1_BASE, g_cpu) = MHU_MASK;
    mdcom_bm_systick_start(CPU_HZ, CPU_HZ / 1000u);
    mdcom_bm_nvic_enable(AN521_MHU0_IRQ, 0x40);
    mdcom_bm_nvic_enable(AN521_MHU1_IRQ, 0x40);
    mdcom_bm_irq_enable();
}

void mdcom_board_irq(uint32_t irq)
{
    if (irq == AN521_MHU0_IRQ || irq == AN521_MHU1_IRQ) {
        uint32_t mhu = irq - AN521_MHU0_IRQ;
        uintptr_t b = mhu_base(mhu);
        uint32_t bits = MHU_STAT(b, g_cpu);
        /* clear what we saw; a bit set after this read keeps the line high
         * and re-enters: no ring is lost */
        MHU_CLR(b, g_cpu) = bits;
        g_mhu_irqs[mhu]++;
        if (mhu == 0) {
            g_mhu_bits |= bits;
            mdcom_bm_doorbell_raise();
        }
    }
}
