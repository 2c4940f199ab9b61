/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_traffic_freertos.c - the FreeRTOS part of the Thread-Metric traffic
 * images: the receiver (tm_traffic.c) as a task at FreeRTOS priority
 * configMAX_PRIORITIES - 1 (Thread-Metric's 1, above every test thread and
 * the reporter, which are at 2 .. 10), created before the scheduler starts.
 * Its stack comes from the kernel's heap, as the test threads' do.
 */
#include "FreeRTOS.h"
#include "task.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom_freertos.h"
#include "tm_traffic.h"

#define TM_TRAFFIC_STACK_WORDS 1024u /* mdcom_init and the calls */

static void tm_traffic_task(void *arg) { tm_traffic_rx(arg); }

void tm_traffic_start(void)
{
    /* the port's process identities (one per task) start from the boot's */
    mdcom_freertos_set_boot_seed(mdcom_bm_boot_token());
    if (xTaskCreate(tm_traffic_task, "tmrx", TM_TRAFFIC_STACK_WORDS, NULL, configMAX_PRIORITIES - 1,
                    NULL) != pdPASS) {
        mdcom_bm_puts("FAULT tm_traffic: xTaskCreate\n");
        mdcom_bm_exit(7);
    }
}

void tm_traffic_sleep_tick(void) { vTaskDelay(1); }
