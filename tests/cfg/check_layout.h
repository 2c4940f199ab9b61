/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_layout.h - C shim for check_generated.cpp: runs mdcom_layout_compute()
 * (src/core/layout.h is C-only) on a configuration.
 */
#ifndef MDCOM_TESTS_CHECK_LAYOUT_H
#define MDCOM_TESTS_CHECK_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/mdcom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mdcom_layout_compute(cfg) with a channel table; returns its result and
 * fills *needed / *region_size (on success) and err (always, NUL-terminated). */
int cfgtest_layout_check(const mdcom_config *cfg, uint32_t *needed, uint32_t *region_size,
                         char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_TESTS_CHECK_LAYOUT_H */
