/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_template.c - the skeleton for a new port, and a working minimal port
 * for any single-image system without an OS (bare metal, or a test).
 *
 * Copy this file to ports/<yourport>/ to start a port; replace each axis
 * independently (see include/mdcom/platform.h). As it stands it needs three
 * board hooks, defined by the board file or the application:
 *
 *   void    *mdcom_board_region(const char *name, uint32_t *size);
 *                      base and size of the shared region called name
 *                      (a fixed address on a SoC, e.g. 0x21000000 on mps2-an386)
 *   uint64_t mdcom_board_now_ns(void);   monotonic clock (SysTick, DWT, ...)
 *   void     mdcom_board_ring(uint32_t chan);
 *                      raise the inter-core interrupt (IPCC, MU, UART byte);
 *                      may do nothing when every side polls
 *
 *   region    the board's fixed memory; "create" only checks the size
 *   doorbell  polling: wait spins on the word until it changes or the time is up
 *             (a real port sleeps in WFI until the interrupt instead)
 *   lock      the core's portable atomic owner-word lock (replace with HSEM/SEMA4)
 *   cache     none (add clean/invalidate for a Cortex-M7/A with caches)
 *   process   one process per image: pid TP_PID (a foreign pid, bit 31 set:
 *             never a Linux pid, as ports/baremetal), token 1, always alive
 *
 * Freestanding: no malloc, nothing from libc beyond mem*.
 */
#include <errno.h>
#include <stdatomic.h>

#include "mdcom/mdcom.h"
#include "mdcom/platform.h"

/* This image's pid: foreign (MDCOM_PID_FOREIGN of mdcom/platform.h), so a
 * Linux process sharing the region never takes it for one of its own pids
 * (pid 1 would read as init, alive forever). */
#define TP_PID (MDCOM_PID_FOREIGN | 1u)

void *mdcom_board_region(const char *name, uint32_t *size);
uint64_t mdcom_board_now_ns(void);
void mdcom_board_ring(uint32_t chan);

static uint64_t tp_now_ns(void *ctx)
{
    (void)ctx;
    return mdcom_board_now_ns();
}

static int tp_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                          int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    uint32_t have = 0;
    void *base = mdcom_board_region(name, &have);
    (void)ctx;
    (void)flags;
    (void)mode;
    (void)group;
    (void)timeout_ns;
    if (!base)
        return -ENOENT;
    if (have < size)
        return -ENOSPC;
    *out = (mdcom_region_map){.base = base, .size = have, .handle = 0};
    return 0;
}

static void tp_region_close(void *ctx, mdcom_region_map *map, int remove)
{
    (void)ctx;
    (void)remove;
    *map = (mdcom_region_map){0}; /* fixed memory: nothing to unmap or remove */
}

static int tp_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    uint64_t end = timeout_ns < 0 ? UINT64_MAX : mdcom_board_now_ns() + (uint64_t)timeout_ns;
    (void)ctx;
    /* acquire: the caller re-checks its condition after we return */
    while (atomic_load_explicit(word, memory_order_acquire) == expected) {
        if (mdcom_board_now_ns() >= end)
            return -ETIMEDOUT;
    }
    return 0;
}

static void tp_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    (void)ctx;
    (void)word;
    mdcom_board_ring(chan);
}

static int tp_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    (void)ctx;
    *pid = TP_PID;
    *token = 1;
    return 0;
}

static int tp_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    (void)ctx;
    /* this image (one process per domain): alive as itself only; a process
     * of another domain: unknown, counted as alive */
    if (pid == TP_PID)
        return token == 1;
    return -ENOSYS;
}

static const mdcom_platform template_platform = {
    .name = "template",
    .ctx = 0,
    .region_open = tp_region_open,
    .region_close = tp_region_close,
    .doorbell = {.wait = tp_wait, .ring = tp_ring, .ctx = 0},
    .lock_try = 0,
    .lock_release = 0,
    .now_ns = tp_now_ns,
    .relax = 0,
    .cache_clean = 0,
    .cache_invalidate = 0,
    .proc_self = tp_proc_self,
    .proc_alive = tp_proc_alive,
};

const mdcom_platform *mdcom_platform_template(void) { return &template_platform; }
