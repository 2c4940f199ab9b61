/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_arch_none.h - no CPU hints: what the arch headers use where a core
 * has no data cache to prefetch into (Cortex-M) or the compiler has no
 * prefetch builtin. The names and what they mean: x86/mdcom_arch.h.
 */
#ifndef MDCOM_ARCH_NONE_H
#define MDCOM_ARCH_NONE_H

#include <stdint.h>

#define MDCOM_HAVE_PREFETCH 0
#define MDCOM_PREFETCH(p) ((void)(p))
static inline uint32_t mdcom_cpu_prefetchw(void) { return 0u; }
static inline void mdcom_prefetchw(uint32_t ok, const void *p)
{
    (void)ok;
    (void)p;
}

#endif /* MDCOM_ARCH_NONE_H */
