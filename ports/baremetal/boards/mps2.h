/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mps2.h - what the ARM MPS2/MPS2+ boards share (boards/mps2-an386,
 * boards/mps2-an521): the CMSDK APB UART (ARM DDI 0479, "APB UART") of their
 * consoles and doorbells, the 16 MiB PSRAM that QEMU maps from the region
 * file, semihosting, and the part of the board description that follows.
 *
 * CMSDK APB UART registers: DATA +0, STATE +4 (bit0 TX full, bit1 RX full),
 * CTRL +8 (bit0 TX en, bit1 RX en, bit3 RX interrupt en), INTSTATUS/INTCLEAR
 * +0xC (bit1 RX), BAUDDIV +0x10.
 */
#ifndef MDCOM_BM_MPS2_H
#define MDCOM_BM_MPS2_H

#include "board.h"
#include "cortexm.h"

#define UART_DATA(b) MDCOM_BM_REG((b) + 0x00u)
#define UART_STATE(b) MDCOM_BM_REG((b) + 0x04u)
#define UART_CTRL(b) MDCOM_BM_REG((b) + 0x08u)
#define UART_INTCLR(b) MDCOM_BM_REG((b) + 0x0Cu)
#define UART_BAUDDIV(b) MDCOM_BM_REG((b) + 0x10u)
#define UART_STATE_TXFULL 0x1u
#define UART_STATE_RXFULL 0x2u
#define UART_CTRL_TXEN 0x1u
#define UART_CTRL_RXEN 0x2u
#define UART_CTRL_RXIRQ 0x8u
#define UART_INT_RX 0x2u

/* Console output of one character on the UART at base (waits for room). */
static inline void mps2_uart_putc(uintptr_t base, char c)
{
    while (UART_STATE(base) & UART_STATE_TXFULL) {
    }
    UART_DATA(base) = (uint8_t)c;
}

/* The UART at base on, with ctrl (UART_CTRL_* bits). */
static inline void mps2_uart_init(uintptr_t base, uint32_t ctrl)
{
    UART_BAUDDIV(base) = 16u;
    UART_CTRL(base) = ctrl;
}

/* The fields of mdcom_board common to the MPS2 boards under QEMU. */
#define MPS2_BOARD_DESC(board_name, hz, psram)                                                     \
    .name = (board_name), .cpu_hz = (hz), .region_base = (psram), .region_size = 16u << 20,        \
    .semihosting = 1

#endif /* MDCOM_BM_MPS2_H */
