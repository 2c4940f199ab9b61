// SPDX-License-Identifier: BSD-3-Clause
/*
 * rl_platform_posix.c - the RPMsg-Lite platform layer of the interop tests
 * (the functions of rl_port/rpmsg_platform.h, as RPMsg-Lite's platform
 * headers declare them). A notification of vring v sets bit v of the
 * peer's pending word (shared memory) and rings its eventfd, like an
 * inter-core mailbox with a status register; iop_rl_platform_dispatch is
 * the interrupt handler: it takes the pending bits and runs RPMsg-Lite's
 * virtqueue handler of each vring whose interrupt is enabled.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <unistd.h>

#include "rpmsg_env.h"
#include "rpmsg_platform.h"
#include "virtqueue.h"

static struct iop_rl_platform P;
static struct {
    void *vq;
    int enabled;
} isr[RL_PLATFORM_MAX_ISR_COUNT];

void iop_rl_platform_setup(const struct iop_rl_platform *p) { P = *p; }

int32_t platform_init(void) { return 0; }
int32_t platform_deinit(void) { return 0; }

int32_t platform_init_interrupt(uint32_t vector_id, void *isr_data)
{
    if (vector_id >= RL_PLATFORM_MAX_ISR_COUNT)
        return -1;
    isr[vector_id].vq = isr_data;
    return 0;
}

int32_t platform_deinit_interrupt(uint32_t vector_id)
{
    if (vector_id >= RL_PLATFORM_MAX_ISR_COUNT)
        return -1;
    isr[vector_id].vq = NULL;
    isr[vector_id].enabled = 0;
    return 0;
}

int32_t platform_interrupt_enable(uint32_t vector_id)
{
    if (vector_id < RL_PLATFORM_MAX_ISR_COUNT)
        isr[vector_id].enabled = 1;
    return 0;
}

int32_t platform_interrupt_disable(uint32_t vector_id)
{
    if (vector_id < RL_PLATFORM_MAX_ISR_COUNT)
        isr[vector_id].enabled = 0;
    return 0;
}

int32_t platform_in_isr(void) { return 0; }

void platform_notify(uint32_t vector_id)
{
    uint64_t one = 1;
    __atomic_fetch_or(P.irq_peer, 1u << RL_GET_Q_ID(vector_id), __ATOMIC_SEQ_CST);
    if (write(P.efd_peer, &one, sizeof(one)) != (ssize_t)sizeof(one))
        iop_rl_assert_failed("platform_notify: eventfd write", 0);
}

void platform_time_delay(uint32_t num_msec) { env_sleep_msec(num_msec); }

uintptr_t platform_vatopa(void *addr)
{
    uintptr_t off = (uintptr_t)((uint8_t *)addr - P.mem);
    if ((uint8_t *)addr < P.mem || off >= P.mem_size)
        iop_rl_assert_failed("platform_vatopa: outside the shared window", 0);
    return P.mem_da + off;
}

void *platform_patova(uintptr_t addr)
{
    /* RPMsg-Lite trusts its peer's descriptor addresses; an address outside
     * the window would make it touch this process's memory, so stop here */
    if (addr < P.mem_da || addr - P.mem_da >= P.mem_size)
        iop_rl_assert_failed("platform_patova: peer address outside the shared window", 0);
    return P.mem + (addr - P.mem_da);
}

int iop_rl_platform_dispatch(int all)
{
    uint32_t bits = __atomic_exchange_n(P.irq_mine, 0u, __ATOMIC_SEQ_CST);
    int n = 0;
    if (all)
        bits = 3u;
    for (uint32_t v = 0; v < RL_PLATFORM_MAX_ISR_COUNT; v++) {
        if (!(bits & (1u << v)))
            continue;
        if (isr[v].vq && isr[v].enabled) {
            virtqueue_notification((struct virtqueue *)isr[v].vq);
            n++;
        } else if (!all) {
            /* masked: stays pending, as an interrupt controller keeps it */
            __atomic_fetch_or(P.irq_mine, 1u << v, __ATOMIC_SEQ_CST);
        }
    }
    return n;
}
