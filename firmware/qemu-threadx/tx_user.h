/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx_user.h - the ThreadX configuration of the ThreadX test firmware
 * (mps2-an386 under QEMU: Cortex-M4 at 25 MHz, ThreadX port cortex_m4/gnu,
 * soft float). ThreadX's CMake takes it as TX_USER_FILE. What mdcom's
 * ThreadX port needs is marked "mdcom:"; examples/threadx has the same
 * settings for an application to copy.
 */
#ifndef TX_USER_H
#define TX_USER_H

/* 1 ms ticks, as the FreeRTOS firmware: the test judges timeouts in ticks.
 * mdcom: the port's clock and timeouts follow whatever rate is set here,
 * and its low-level init (ports/threadx/tx_runtime.c) programs SysTick
 * to it. */
#define TX_TIMER_TICKS_PER_SECOND 1000UL

#define TX_MAX_PRIORITIES 32

/* a thread that overflows its stack is reported (tx_thread_stack_error_notify) */
#define TX_ENABLE_STACK_CHECKING

/* mdcom: leave the entry/exit notification callbacks on (no
 * TX_DISABLE_NOTIFY_CALLBACKS): the port learns of a thread's exit there */

#endif /* TX_USER_H */
