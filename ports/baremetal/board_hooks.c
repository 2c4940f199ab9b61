/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * board_hooks.c - the hooks every Cortex-M port of mdcom takes from the
 * board description (board.h) and the runtime as they are: region, lock,
 * cache, clock (board_hooks.h). ports/baremetal, ports/freertos and
 * ports/threadx differ only in the doorbell and the process identity.
 */
#include <errno.h>

#include "board.h"
#include "board_hooks.h"
#include "cortexm.h"

/* the runtime's clock: SysTick (systick.c) or the RTOS port's (its
 * mdcom_bm_now_ns) */
static uint64_t bh_now_ns(void *ctx)
{
    (void)ctx;
    return mdcom_bm_now_ns();
}

static void bh_relax(void *ctx)
{
    (void)ctx;
    __asm__ __volatile__("nop" ::: "memory");
}

static int bh_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                          int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    const mdcom_board *b = &mdcom_board_desc;
    /* one region per board, always there: name, mode, group, the wait for
     * it to appear mean nothing here; the master formats it */
    (void)ctx, (void)name, (void)flags, (void)mode, (void)group, (void)timeout_ns;
    if (!b->region_base || !b->region_size)
        return -ENOENT;
    if (b->region_size < size)
        return -ENOSPC;
    out->base = (void *)b->region_base;
    out->size = b->region_size;
    out->handle = 0;
    return 0;
}

static void bh_region_close(void *ctx, mdcom_region_map *map, int remove)
{
    (void)ctx;
    (void)remove; /* the board's memory: nothing to unmap or delete */
    map->base = 0;
    map->size = 0;
    map->handle = 0;
}

static int bh_lock_try(void *ctx, uint32_t id, mdcom_aword *word, uint32_t owner)
{
    (void)ctx;
    return mdcom_board_desc.lock_try(id, word, owner);
}

static int bh_lock_release(void *ctx, uint32_t id, mdcom_aword *word, uint32_t owner)
{
    (void)ctx;
    return mdcom_board_desc.lock_release(id, word, owner);
}

static void bh_clean(void *ctx, const void *addr, size_t len)
{
    (void)ctx;
    mdcom_board_desc.cache_clean(addr, len);
}

static void bh_invalidate(void *ctx, const void *addr, size_t len)
{
    (void)ctx;
    mdcom_board_desc.cache_invalidate(addr, len);
}

void mdcom_bm_board_hooks(mdcom_platform *p)
{
    const mdcom_board *b = &mdcom_board_desc;
    p->region_open = bh_region_open;
    p->region_close = bh_region_close;
    p->lock_try = b->lock_try ? bh_lock_try : 0;
    p->lock_release = b->lock_release ? bh_lock_release : 0;
    p->cache_clean = b->cache_clean ? bh_clean : 0;
    p->cache_invalidate = b->cache_invalidate ? bh_invalidate : 0;
    p->now_ns = bh_now_ns;
    p->relax = bh_relax;
}

const mdcom_platform *mdcom_bm_platform(mdcom_platform *p, const mdcom_bm_port_ops *ops)
{
    if (!p->name) { /* single core, before threads share it: no race */
        mdcom_bm_board_hooks(p);
        p->doorbell.wait = ops->wait;
        p->doorbell.ring = ops->ring;
        p->proc_self = ops->proc_self;
        p->proc_alive = ops->proc_alive;
        p->name = ops->name;
    }
    return p;
}

void mdcom_bm_rtos_stats_wake(mdcom_bm_rtos_stats *s, uint64_t lat)
{
    s->woken++;
    s->wake_n++;
    s->wake_sum_ns += lat;
    if (lat > s->wake_max_ns)
        s->wake_max_ns = lat > 0xffffffffu ? 0xffffffffu : (uint32_t)lat;
}
