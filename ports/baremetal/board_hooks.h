/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * board_hooks.h - the platform hooks that a port on Cortex-M takes from the
 * board description as they are (region, lock, cache), for the RTOS ports
 * that reuse ports/baremetal's boards (ports/threadx). Only the doorbell,
 * clock and identity differ between such ports; these do not.
 */
#ifndef MDCOM_BM_BOARD_HOOKS_H
#define MDCOM_BM_BOARD_HOOKS_H

#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill p's region_open / region_close (the board's fixed memory: one region
 * per board, -ENOSPC when smaller than asked), lock_try / lock_release (the
 * board's hardware semaphore, NULL without one: the core's portable lock)
 * and cache_clean / cache_invalidate (NULL on coherent boards). */
void mdcom_bm_board_hooks(mdcom_platform *p);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_BM_BOARD_HOOKS_H */
