/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_port.h - this project's Thread-Metric porting-layer header, in place of
 * the snapshot's tm_porting_layer.h (whose TM_CAUSE_INTERRUPT is "SVC #0":
 * FreeRTOS's Cortex-M port owns SVC #0, it starts the first task with it).
 *
 * Every Thread-Metric source of an image is compiled with "-include
 * tm_port.h": this file claims tm_porting_layer.h's include guard, so the
 * snapshot's header (which tm_api.h includes from its own directory) is
 * skipped and the unmodified tests see this TM_CAUSE_INTERRUPT: one
 * software-pended NVIC interrupt (TM_IRQ), the same on every RTOS, whose
 * handler calls the test's handler (tm_board.c).
 */
#ifndef TM_PORTING_LAYER_H
#define TM_PORTING_LAYER_H

#include <stdio.h> /* the tests print with printf (tm_board.c's) */

/* Pend TM_IRQ in the NVIC and wait until it has been taken. */
void tm_cause_interrupt(void);
#define TM_CAUSE_INTERRUPT tm_cause_interrupt();

/* The board glue of every image (tm_board.c): enable TM_IRQ. Called by main
 * before the kernel starts. */
void tm_board_init(void);

#endif /* TM_PORTING_LAYER_H */
