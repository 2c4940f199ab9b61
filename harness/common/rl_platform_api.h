/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rl_platform_api.h - what an RPMsg-Lite platform layer declares, as its
 * own platform headers do (one link, two vrings; vq id = link * 2 + queue).
 * mdcom's two RPMsg-Lite platforms include it from their rpmsg_platform.h
 * (tests/interop/rl_port for the interop tests, firmware/footprint/rl for
 * the footprint image), after defining VRING_ALIGN and VRING_SIZE.
 */
#ifndef MDCOM_RL_PLATFORM_API_H
#define MDCOM_RL_PLATFORM_API_H

#include <stdint.h>

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
uintptr_t platform_vatopa(void *addr);
void *platform_patova(uintptr_t addr);
int32_t platform_init(void);
int32_t platform_deinit(void);

#endif
