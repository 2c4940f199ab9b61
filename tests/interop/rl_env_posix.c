// SPDX-License-Identifier: BSD-3-Clause
/*
 * rl_env_posix.c - an RPMsg-Lite environment layer for a Linux process, the
 * functions RPMsg-Lite's include/rpmsg_env.h asks an environment to provide
 * (no environment context, no static API). RPMsg-Lite ships environments for
 * bare metal and RTOSes only; this one is for the interop tests, where the
 * RPMsg-Lite side is a single-threaded process: the "interrupt handlers"
 * (rpmsg_lite's virtqueue callbacks) run from its main loop
 * (iop_rl_platform_dispatch), so the mutex is a nesting counter that
 * catches misuse rather than a lock.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpmsg_env.h"
#include "rpmsg_lite.h"

void iop_rl_assert_failed(const char *file, int line)
{
    fprintf(stderr, "rl_peer: RPMsg-Lite assertion failed at %s:%d\n", file, line);
    abort();
}

static int env_refs;

int32_t env_init(void)
{
    env_refs++;
    return platform_init();
}

int32_t env_deinit(void)
{
    if (env_refs > 0 && --env_refs == 0)
        return platform_deinit();
    return 0;
}

void *env_allocate_memory(uint32_t size) { return malloc(size); }
void env_free_memory(void *ptr) { free(ptr); }
void env_memset(void *ptr, int32_t value, uint32_t size) { memset(ptr, (int)value, size); }
void env_memcpy(void *dst, void const *src, uint32_t len) { memcpy(dst, src, len); }
int32_t env_strcmp(const char *dst, const char *src) { return strcmp(dst, src); }
void env_strncpy(char *dest, const char *src, uint32_t len) { strncpy(dest, src, len); }
int32_t env_strncmp(char *dest, const char *src, uint32_t len) { return strncmp(dest, src, len); }

/* The peer is another process on another core: full fences (RPMsg-Lite
 * orders its ring updates with these). */
void env_mb(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void env_rmb(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void env_wmb(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

uint32_t env_map_vatopa(void *address) { return (uint32_t)platform_vatopa(address); }
void *env_map_patova(uint32_t address) { return platform_patova(address); }

/* one counter per mutex: RPMsg-Lite never nests its lock, and nothing in
 * this process runs concurrently with the main loop */
int32_t env_create_mutex(void **lock, int32_t count)
{
    int *m = malloc(sizeof(int));
    if (!m)
        return -1;
    *m = count;
    *lock = m;
    return 0;
}

void env_delete_mutex(void *lock) { free(lock); }

void env_lock_mutex(void *lock)
{
    int *m = lock;
    if (*m <= 0)
        iop_rl_assert_failed("env_lock_mutex: taken twice", 0);
    (*m)--;
}

void env_unlock_mutex(void *lock) { (*(int *)lock)++; }

void env_sleep_msec(uint32_t num_msec)
{
    struct timespec t = {(time_t)(num_msec / 1000u), (long)(num_msec % 1000u) * 1000000L};
    nanosleep(&t, NULL);
}

/* interrupts: the platform layer's dispatcher; enabling and disabling is
 * RPMsg-Lite saying whether it wants the handler of a vring run */
void env_enable_interrupt(uint32_t vector_id) { (void)platform_interrupt_enable(vector_id); }
void env_disable_interrupt(uint32_t vector_id) { (void)platform_interrupt_disable(vector_id); }

void env_cache_flush(void *data, uint32_t len) { (void)data, (void)len; }
void env_cache_invalidate(void *data, uint32_t len) { (void)data, (void)len; }

/* the link comes up in the "interrupt handler" (rpmsg_lite's tx callback):
 * dispatch pending notifications while waiting */
uint32_t env_wait_for_link_up(volatile uint32_t *link_state, uint32_t link_id, uint32_t timeout_ms)
{
    (void)link_id;
    for (uint32_t waited = 0; *link_state != 1U; waited++) {
        if (timeout_ms != UINT32_MAX && waited >= timeout_ms) /* RL_BLOCK, truncated */
            return 0;
        if (iop_rl_platform_dispatch(0) == 0)
            env_sleep_msec(1);
    }
    return 1;
}

void env_tx_callback(uint32_t link_id) { (void)link_id; }
