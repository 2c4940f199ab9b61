/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx_user.h - the ThreadX configuration of the Thread-Metric images
 * (mps2-an386 under QEMU: Cortex-M4 at 25 MHz, ThreadX port cortex_m4/gnu,
 * soft float). ThreadX's defaults (as the FreeRTOS images keep FreeRTOS's),
 * except the tick: 100 Hz, the rate ThreadX's Thread-Metric porting layer
 * assumes when it sleeps (TM_THREADX_TICKS_PER_SECOND) and the FreeRTOS
 * images use too. ports/threadx/tx_runtime.c programs SysTick to it.
 */
#ifndef TX_USER_H
#define TX_USER_H

#define TX_TIMER_TICKS_PER_SECOND 100UL

#endif /* TX_USER_H */
