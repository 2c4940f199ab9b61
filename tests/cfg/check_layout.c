/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_layout.c - see check_layout.h.
 */
#include "check_layout.h"

#include <errno.h>

#include "mdcom/wire.h"

int cfgtest_layout_check(const mdcom_config *cfg, uint32_t *needed, uint32_t *region_size,
                         char *err, size_t err_len)
{
    mdcom_wire_layout lay;
    int rc;

    rc = mdcom_wire_layout_compute(cfg, &lay, NULL, err, err_len);
    if (rc == 0) {
        *needed = lay.needed;
        *region_size = lay.region_size;
    }
    return rc;
}
