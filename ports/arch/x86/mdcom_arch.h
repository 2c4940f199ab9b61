/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_arch.h (x86, x86-64) - the core's CPU hints: cache-line prefetches.
 *
 * One of the arch headers the build puts on the core's include path
 * (ports/arch/<arch>, chosen from CMAKE_SYSTEM_PROCESSOR): x86, cortex-m,
 * generic. Each defines the same four names; none changes behaviour, only
 * how soon a cache line arrives:
 *   MDCOM_HAVE_PREFETCH     1 when MDCOM_PREFETCH does something
 *   MDCOM_PREFETCH(p)       prefetch for reading
 *   mdcom_cpu_prefetchw()   1 when mdcom_prefetchw may use a write prefetch
 *                           (asked once per attachment: CPUID may trap to a
 *                           hypervisor)
 *   mdcom_prefetchw(ok, p)  prefetch for writing where ok, else for reading
 * A prefetch for writing asks for the line in an exclusive state, so the
 * store or CAS that follows finds the line ours instead of fetching it
 * shared and then invalidating the peer's copy, and the transfers of several
 * lines overlap instead of coming one after the other.
 */
#ifndef MDCOM_ARCH_H
#define MDCOM_ARCH_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#include <cpuid.h>

#define MDCOM_HAVE_PREFETCH 1
#define MDCOM_PREFETCH(p) __builtin_prefetch((p), 0, 3)

/* PREFETCHW exists where CPUID says PRFCHW (leaf 0x80000001, ECX bit 8);
 * compilers emit a read prefetch for __builtin_prefetch(p, 1) unless built
 * for such a CPU, hence the instruction by hand. */
static inline uint32_t mdcom_cpu_prefetchw(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8)) ? 1u : 0u;
}
static inline void mdcom_prefetchw(uint32_t ok, const void *p)
{
    if (ok)
        __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
    else
        __builtin_prefetch(p, 0, 3);
}
#else
#include "../mdcom_arch_none.h"
#endif

#endif /* MDCOM_ARCH_H */
