/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_traffic_threadx.c - the ThreadX part of the Thread-Metric traffic
 * images: the receiver (tm_traffic.c) as a thread at ThreadX priority 1
 * (Thread-Metric's 1, above every test thread and the reporter, which are
 * at 2 .. 10: the snapshot's porting layer passes the numbers through), no
 * time slice, its stack a static array, created in tx_application_define.
 */
#include "tx_api.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom_threadx.h"
#include "tm_traffic.h"

#define TM_TRAFFIC_STACK_WORDS 1024u /* mdcom_init and the calls */

static TX_THREAD tm_traffic_thread;
static ULONG tm_traffic_stack[TM_TRAFFIC_STACK_WORDS];

static VOID tm_traffic_entry(ULONG arg)
{
    (void)arg;
    tm_traffic_rx(0);
}

void tm_traffic_start(void)
{
    /* the port's process identities (one per thread) start from the boot's */
    mdcom_threadx_set_boot_seed(mdcom_bm_boot_token());
    if (tx_thread_create(&tm_traffic_thread, (CHAR *)"tmrx", tm_traffic_entry, 0, tm_traffic_stack,
                         sizeof(tm_traffic_stack), 1, 1, TX_NO_TIME_SLICE,
                         TX_AUTO_START) != TX_SUCCESS) {
        mdcom_bm_puts("FAULT tm_traffic: tx_thread_create\n");
        mdcom_bm_exit(7);
    }
}

void tm_traffic_sleep_tick(void) { (void)tx_thread_sleep(1); }
