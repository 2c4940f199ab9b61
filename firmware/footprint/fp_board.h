/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_board.h - the footprint images' stand-ins for a board: a mailbox
 * register (the doorbell), the shared memory of the RPMsg images, and the
 * entry point every image defines.
 */
#ifndef FP_BOARD_H
#define FP_BOARD_H

#include <stdint.h>

#define FP_MAILBOX (*(volatile uint32_t *)0x40001000u)
#define FP_SHM ((uint8_t *)0x20200000u) /* RPMsg vrings + pool */
#define FP_NUM 16u                      /* buffers per direction */
#define FP_PAYLOAD 496u
#define FP_ALIGN 16u
#define FP_VRING_SIZE 0x400u /* vring 1 at FP_SHM + this */

void Reset_Handler(void);
void *mdcom_board_region(const char *name, uint32_t *size);
uint64_t mdcom_board_now_ns(void);
void mdcom_board_ring(uint32_t chan);

/* the result of the image's one exchange, left for a debugger */
extern volatile int fp_result;

#endif
