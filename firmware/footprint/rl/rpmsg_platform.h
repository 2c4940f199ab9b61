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
#include "rl_platform_api.h"

/* what RPMsg-Lite's bare-metal environment also calls */
void platform_map_mem_region(uint32_t vrt_addr, uint32_t phy_addr, uint32_t size, uint32_t flags);
void platform_cache_all_flush_invalidate(void);
void platform_cache_disable(void);
void platform_cache_invalidate(void *data, uint32_t len);
void platform_cache_flush(void *data, uint32_t len);

#endif
