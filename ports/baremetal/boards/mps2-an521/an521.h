/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * an521.h - what the mps2-an521 board file offers beyond board.h: which
 * core runs this image, starting CPU1, and the SSE-200 MHU registers.
 *
 * MHU (SSE-200 TRM, "Message Handling Unit"; QEMU hw/misc/armsse-mhu.c): a
 * 4 KiB block with, per destination core, STAT (+0x0 CPU0, +0x10 CPU1; read),
 * SET (+0x4 / +0x14; write 1s to raise) and CLR (+0x8 / +0x18; write 1s to
 * drop). Bits 0..3 are channels; any set bit holds that core's MHU
 * interrupt (NVIC 6 for MHU0, 7 for MHU1, per core) high.
 */
#ifndef MDCOM_BM_AN521_H
#define MDCOM_BM_AN521_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AN521_MHU0_BASE 0x50003000u /* secure alias of 0x40003000 */
#define AN521_MHU1_BASE 0x50004000u
#define AN521_MHU0_IRQ 6u
#define AN521_MHU1_IRQ 7u
#define AN521_MHU_CHANNELS 4u
#define AN521_CPU1_VTOR 0x10200000u /* memory_cpu1.ld's CODE */

/* 0 on CPU0, 1 on CPU1 (SSE-200 CPUID register). */
uint32_t mdcom_an521_cpu(void);
/* CPU0: set INITSVTOR1 = vtor and clear CPUWAIT bit 1: CPU1 leaves reset and
 * boots from the vector table at vtor. */
void mdcom_an521_start_cpu1(uint32_t vtor);
/* MHU mhu (0 or 1): raise / drop bits (channels 0..3) towards core cpu, or
 * read that core's pending bits. */
void mdcom_an521_mhu_set(uint32_t mhu, uint32_t cpu, uint32_t bits);
void mdcom_an521_mhu_clear(uint32_t mhu, uint32_t cpu, uint32_t bits);
uint32_t mdcom_an521_mhu_status(uint32_t mhu, uint32_t cpu);
/* MHU interrupts taken on this core, per MHU (statistics and tests). */
uint32_t mdcom_an521_mhu_irqs(uint32_t mhu);
/* OR of the channel bits seen by this core's MHU0 handler since the last call. */
uint32_t mdcom_an521_mhu_take_bits(void);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_BM_AN521_H */
