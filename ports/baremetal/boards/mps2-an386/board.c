/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * board.c - ARM MPS2 AN386 (Cortex-M4) as modelled by QEMU (mps2-an386).
 *
 *   region    16 MiB at 0x21000000 (PSRAM; QEMU maps it from a file with
 *             -machine memory-backend=..., file offset X = 0x21000000 + X)
 *   console   UART0 (CMSDK APB UART at 0x40004000, first -serial)
 *   doorbell  UART1 (0x40005000, second -serial, a unix socket to Linux):
 *             the peer writes a byte -> UART1 RX interrupt (NVIC IRQ 2) ->
 *             mdcom_bm_doorbell_raise(); ring() writes one byte back
 *   clock     SysTick on the 25 MHz processor clock, 1 ms period
 *   lock      portable (no hardware semaphore); cache: none (no D-cache)
 * (UART registers: ../mps2.h)
 */
#include "../mps2.h"

#define UART0_BASE 0x40004000u
#define UART1_BASE 0x40005000u
#define UART1_RX_IRQ 2u

#define CPU_HZ 25000000u

static void an386_putc(char c) { mps2_uart_putc(UART0_BASE, c); }

static void an386_ring(uint32_t chan)
{
    (void)chan;
    /* a byte already waiting in the TX buffer is a pending wake-up too */
    if (!(UART_STATE(UART1_BASE) & UART_STATE_TXFULL))
        UART_DATA(UART1_BASE) = 1u;
}

const mdcom_board mdcom_board_desc = {
    MPS2_BOARD_DESC("mps2-an386", CPU_HZ, 0x21000000u),
    .ring = an386_ring,
    .putc = an386_putc,
};

void mdcom_board_init(void)
{
    mps2_uart_init(UART0_BASE, UART_CTRL_TXEN);
    mps2_uart_init(UART1_BASE, UART_CTRL_TXEN | UART_CTRL_RXEN | UART_CTRL_RXIRQ);
    (void)UART_DATA(UART1_BASE); /* drop a byte that arrived before RX was on */
    UART_INTCLR(UART1_BASE) = UART_INT_RX;
    mdcom_bm_systick_start(CPU_HZ, CPU_HZ / 1000u);
    mdcom_bm_nvic_enable(UART1_RX_IRQ, 0x40);
    mdcom_bm_irq_enable();
}

void mdcom_board_irq(uint32_t irq)
{
    if (irq == UART1_RX_IRQ) {
        /* clear, then drain: a byte that lands after the last read raises
         * the interrupt again. (Draining first loses it: the byte sets RX
         * full and the interrupt, the clear drops the interrupt, and with RX
         * full QEMU delivers no further byte: the doorbell is dead and the
         * firmware wakes only on SysTick.) Each byte is one ring (the
         * count tests/qemu compares with Linux's); any number of rings is
         * one wake-up. */
        UART_INTCLR(UART1_BASE) = UART_INT_RX;
        while (UART_STATE(UART1_BASE) & UART_STATE_RXFULL) {
            (void)UART_DATA(UART1_BASE);
            mdcom_bm_doorbell_raise();
        }
    } else {
        mdcom_bm_app_irq(irq); /* the application's (software-triggered tests) */
    }
}
