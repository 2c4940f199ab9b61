// SPDX-License-Identifier: BSD-3-Clause
/*
 * fp_rl_platform.c - the RPMsg-Lite platform layer of the footprint image,
 * as small as a real one: the bare-metal environment (rpmsg_env_bm.c)
 * registers the vrings' handlers through it, a notification is a mailbox
 * register write, addresses are 1:1, no cache.
 */
#include <stdint.h>

#include "rpmsg_env.h"
#include "rpmsg_platform.h"

static volatile uint32_t irq_enabled;

int32_t platform_init_interrupt(uint32_t vector_id, void *isr_data)
{
    env_register_isr(vector_id, isr_data);
    return 0;
}

int32_t platform_deinit_interrupt(uint32_t vector_id)
{
    env_unregister_isr(vector_id);
    return 0;
}

int32_t platform_interrupt_enable(uint32_t vector_id)
{
    irq_enabled |= 1u << vector_id;
    return 0;
}

int32_t platform_interrupt_disable(uint32_t vector_id)
{
    irq_enabled &= ~(1u << vector_id);
    return 0;
}

int32_t platform_in_isr(void) { return 0; }
void platform_notify(uint32_t vector_id) { FP_MAILBOX = vector_id; }
void platform_time_delay(uint32_t num_msec) { (void)num_msec; }
void platform_map_mem_region(uint32_t vrt_addr, uint32_t phy_addr, uint32_t size, uint32_t flags)
{
    (void)vrt_addr, (void)phy_addr, (void)size, (void)flags;
}
void platform_cache_all_flush_invalidate(void) {}
void platform_cache_disable(void) {}
void platform_cache_invalidate(void *data, uint32_t len) { (void)data, (void)len; }
void platform_cache_flush(void *data, uint32_t len) { (void)data, (void)len; }
uintptr_t platform_vatopa(void *addr) { return (uintptr_t)addr; }
void *platform_patova(uintptr_t addr) { return (void *)addr; }
int32_t platform_init(void) { return 0; }
int32_t platform_deinit(void) { return 0; }
