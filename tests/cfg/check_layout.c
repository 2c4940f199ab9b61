/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_layout.c - see check_layout.h.
 */
#include "check_layout.h"

#include <errno.h>

#include "layout.h"

int cfgtest_layout_check(const mdcom_config *cfg, uint32_t *needed, uint32_t *region_size,
                         char *err, size_t err_len)
{
    static mdcom_chan_layout chans[MDCOM_MAX_DIR];
    mdcom_layout lay;
    mdcom_err e = {err, err_len, 0};
    int rc;

    if (err_len)
        err[0] = '\0';
    rc = mdcom_layout_compute(cfg, &lay, chans, &e);
    if (rc == 0) {
        *needed = lay.needed;
        *region_size = lay.region_size;
    }
    return rc;
}
