/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tx_glue.c - what the two ThreadX images on CPU1 (fw_tx_cpu1.c,
 * tm_cross_tx_cpu1.c) share of the kernel's glue: rr_sleep_ms (rr_fw.h) and
 * the stack checker's report (rr_tx_watch_stacks).
 */
#include <errno.h>

#include "tx_api.h"

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_threadx.h"
#include "rr_fw.h"

void rr_boot(const char *image)
{
    mdcom_bm_puts(image);
    mdcom_bm_puts(": ThreadX on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_put_kv("cpu", mdcom_an521_cpu());
    mdcom_bm_puts("\n");
    mdcom_threadx_set_boot_seed(mdcom_bm_boot_token() + mdcom_an521_cpu());
}

void rr_sleep_ms(uint32_t ms)
{
    ULONG t = ms * TX_TIMER_TICKS_PER_SECOND / 1000u;
    (void)tx_thread_sleep(t ? t : 1u);
}

static VOID stack_error(TX_THREAD *t) { fw_die(t->tx_thread_name, "stack overflow", -EFAULT); }

void rr_tx_watch_stacks(void) { (void)tx_thread_stack_error_notify(stack_error); }
