/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx_user.h - ThreadX on CPU1 of QEMU mps2-an521 (Cortex-M33, no FPU, the
 * Secure state; ThreadX port cortex_m33/gnu). ThreadX's CMake takes it as
 * TX_USER_FILE; its assembly includes it too.
 */
#ifndef TX_USER_H
#define TX_USER_H

/* The whole image runs Secure with no non-secure side (the an521 board
 * file: both cores use the secure aliases, nothing programs the SAU):
 * threads return to the secure PSP (EXC_RETURN 0xfffffffd) and no thread
 * gets a secure-side stack. TX_SINGLE_MODE_NON_SECURE would build
 * EXC_RETURN 0xffffffbc, a return into a non-secure state that has no code. */
#define TX_SINGLE_MODE_SECURE

/* 1 ms ticks (mdcom: the port's clock and timeouts follow this rate; its
 * low-level init, ports/threadx/tx_runtime.c, programs SysTick to it) */
#define TX_TIMER_TICKS_PER_SECOND 1000UL
#define TX_MAX_PRIORITIES 32
#define TX_ENABLE_STACK_CHECKING

#endif /* TX_USER_H */
