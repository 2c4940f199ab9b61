/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_arch.h (generic: Cortex-A, AArch64, others) - the core's CPU hints,
 * through the compiler's prefetch builtin (read and write prefetches).
 * The names and what they mean: ports/arch/x86/mdcom_arch.h.
 */
#ifndef MDCOM_ARCH_H
#define MDCOM_ARCH_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define MDCOM_HAVE_PREFETCH 1
#define MDCOM_PREFETCH(p) __builtin_prefetch((p), 0, 3)
static inline uint32_t mdcom_cpu_prefetchw(void) { return 1u; }
static inline void mdcom_prefetchw(uint32_t ok, const void *p)
{
    (void)ok;
    __builtin_prefetch(p, 1, 3);
}
#else
#include "../mdcom_arch_none.h"
#endif

#endif /* MDCOM_ARCH_H */
