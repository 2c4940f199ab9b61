/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_platform.h - the RPMsg-Lite platform layer of the interop tests: a
 * Linux process sharing a memory file with the mdcom side. "Interrupts" are a
 * pending-bit word per direction plus an eventfd (rl_platform_posix.c);
 * physical addresses are the device addresses of the shared window. The
 * names and signatures are those RPMsg-Lite's own platform headers declare.
 */
#ifndef RPMSG_PLATFORM_H_
#define RPMSG_PLATFORM_H_

#include <stdint.h>

#define VRING_ALIGN (IOP_RL_ALIGN)
#define VRING_SIZE (IOP_RL_VRING_SIZE)
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

/* The test's side of the platform: the shared window (local pointer, device
 * address, size), the doorbells, and the "interrupt controller". */
struct iop_rl_platform {
    uint8_t *mem;
    uint32_t mem_da, mem_size;
    int efd_mine, efd_peer;     /* eventfds: sleep on mine, ring the peer's */
    uint32_t *irq_mine;         /* pending vring bits the peer sets for us  */
    uint32_t *irq_peer;         /* ... and we set for it                    */
};
void iop_rl_platform_setup(const struct iop_rl_platform *p);
/* Run the handler of every vring whose bit is pending (all = 1: of both
 * vrings, as a polling port does). Returns the number of handlers run. */
int iop_rl_platform_dispatch(int all);

#endif
