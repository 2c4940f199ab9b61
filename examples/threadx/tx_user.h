/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx_user.h - the ThreadX configuration of examples/threadx (ThreadX's CMake
 * takes it as TX_USER_FILE). What mdcom's ThreadX port needs is marked
 * "mdcom:"; the rest is this application's choice.
 */
#ifndef TX_USER_H
#define TX_USER_H

/* mdcom: any rate; the port's timeouts round up to these ticks, its clock
 * refines them with SysTick, and ports/threadx/tx_runtime.c programs
 * SysTick to this rate */
#define TX_TIMER_TICKS_PER_SECOND 1000UL

#define TX_MAX_PRIORITIES 32

/* mdcom: do not define TX_DISABLE_NOTIFY_CALLBACKS: the port learns there
 * that a thread ended (its peers then reap what it held) */

#endif /* TX_USER_H */
