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
#include "rl_platform_api.h"

/* The test's side of the platform: the shared window (local pointer, device
 * address, size), the doorbells, and the "interrupt controller". */
struct iop_rl_platform {
    uint8_t *mem;
    uint32_t mem_da, mem_size;
    int efd_mine, efd_peer; /* eventfds: sleep on mine, ring the peer's */
    uint32_t *irq_mine;     /* pending vring bits the peer sets for us  */
    uint32_t *irq_peer;     /* ... and we set for it                    */
};
void iop_rl_platform_setup(const struct iop_rl_platform *p);
/* Run the handler of every vring whose bit is pending (all = 1: of both
 * vrings, as a polling port does). Returns the number of handlers run. */
int iop_rl_platform_dispatch(int all);

#endif
