/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_layout.h - C shim for check_generated.cpp: runs the core's layout
 * computation (mdcom_wire_layout_compute(), <mdcom/wire.h>) on a
 * configuration from C, as a C program would.
 */
#ifndef MDCOM_TESTS_CHECK_LAYOUT_H
#define MDCOM_TESTS_CHECK_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/mdcom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mdcom_wire_layout_compute(cfg); returns its result and
 * fills *needed / *region_size (on success) and err (always, NUL-terminated). */
int cfgtest_layout_check(const mdcom_config *cfg, uint32_t *needed, uint32_t *region_size,
                         char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_TESTS_CHECK_LAYOUT_H */
