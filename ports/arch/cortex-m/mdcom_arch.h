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

#include "../mdcom_arch_none.h"

#endif /* MDCOM_ARCH_H */
