/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_arch.h (Cortex-M) - no prefetches: M-profile cores have no data
 * cache to fill, or a small one a prefetch would not beat, and the calls
 * would only cost instructions. The names and what they mean:
 * ports/arch/x86/mdcom_arch.h.
 */
#ifndef MDCOM_ARCH_H
#define MDCOM_ARCH_H

#include <stdint.h>

#define MDCOM_HAVE_PREFETCH 0
#define MDCOM_PREFETCH(p) ((void)(p))
static inline uint32_t mdcom_cpu_prefetchw(void) { return 0u; }
static inline void mdcom_prefetchw(uint32_t ok, const void *p)
{
    (void)ok;
    (void)p;
}

#endif /* MDCOM_ARCH_H */
