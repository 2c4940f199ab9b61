/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_platform.h - the RPMsg-Lite platform of the footprint image: one
 * mailbox interrupt for both vrings (fp_rl_platform.c), addresses 1:1.
 */
#ifndef RPMSG_PLATFORM_H_
#define RPMSG_PLATFORM_H_

#include <stdint.h>

#include "fp_board.h"

#define VRING_ALIGN (FP_ALIGN)
#define VRING_SIZE (FP_VRING_SIZE)
#define RL_VRING_OVERHEAD (2UL * VRING_SIZE)
#define RL_PLATFORM_MAX_ISR_COUNT (2U)
#define RL_GET_VQ_ID(link_id, queue_id) (((queue_id)&0x1U) | (((link_id) << 1U) & 0xFFFFFFFEU))
#define RL_GET_LINK_ID(id) (((id)&0xFFFFFFFEU) >> 1U)
#define RL_GET_Q_ID(id) ((id)&0x1U)
#define RL_PLATFORM_HIGHEST_LINK_ID (0U)

int32_t platform_init_interrupt(uint32_t vector_id, void *isr_data);
int32_t platform_deinit_interrupt(uint32_t vector_id);
int32_t platform_interrupt_enable(uint32_t vector_id);
int32_t platform_interrupt_disable(uint32_t vector_id);
int32_t platform_in_isr(void);
void platform_notify(uint32_t vector_id);
void platform_time_delay(uint32_t num_msec);
void platform_map_mem_region(uint32_t vrt_addr, uint32_t phy_addr, uint32_t size, uint32_t flags);
void platform_cache_all_flush_invalidate(void);
void platform_cache_disable(void);
void platform_cache_invalidate(void *data, uint32_t len);
void platform_cache_flush(void *data, uint32_t len);
uintptr_t platform_vatopa(void *addr);
void *platform_patova(uintptr_t addr);
int32_t platform_init(void);
int32_t platform_deinit(void);

#endif
