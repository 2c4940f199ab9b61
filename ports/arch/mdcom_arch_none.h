/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_arch_none.h - the CPU hints of ports/arch/<arch>/mdcom_arch.h when
 * there are none (Cortex-M, compilers without the prefetch builtin): the
 * four names, doing nothing. Included by those headers only.
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
