/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_freertos.c - mdcom-fw-freertos: FreeRTOS on the Cortex-M4 of QEMU
 * mps2-an386 against Linux processes (tests/qemu/test_qemu_freertos.cpp).
 * The checks and the traffic are firmware/common/rtos_e2e.c's; this file
 * gives them FreeRTOS (mdcom_fw/rtos_e2e.h): tasks, delays, the tick
 * count, the idle hook that counts idle runs, and ports/freertos as the
 * port under test (the test interrupt is a hardware timer of the board).
 */
#include <string.h>

#include "FreeRTOS.h"
#include "task.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_freertos.h"
#include "mdcom_fw/rtos_e2e.h"

/* the image's name: FW_IMAGE for the responder image built from this file
 * too (firmware/common/rtos_resp.c) */
#ifndef FW_IMAGE
#define FW_IMAGE "mdcom-fw-freertos"
#endif
const char e2e_image[] = FW_IMAGE;
const char e2e_kernel[] = "FreeRTOS " tskKERNEL_VERSION_NUMBER;

/* ---------------------------------------------------------------- */
/* Hooks                                                              */
/* ---------------------------------------------------------------- */

void vApplicationIdleHook(void);
void vApplicationIdleHook(void) { e2e_idle_runs++; }

/* "FAULT <what><where>[:<line>]" on the console, and the image ends with
 * code (line < 0: none) */
static void fault(const char *what, const char *where, int line, int code)
{
    mdcom_bm_puts("FAULT ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(where);
    if (line >= 0) {
        mdcom_bm_puts(":");
        mdcom_bm_put_u32((uint32_t)line);
    }
    mdcom_bm_puts("\n");
    mdcom_bm_exit(code);
}

void vApplicationStackOverflowHook(TaskHandle_t t, char *name);
void vApplicationStackOverflowHook(TaskHandle_t t, char *name)
{
    (void)t;
    fault("stack overflow in task ", name, -1, 4);
}

void vApplicationMallocFailedHook(void);
void vApplicationMallocFailedHook(void) { fault("FreeRTOS heap exhausted", "", -1, 4); }

void fw_frt_assert_failed(const char *file, int line)
{
    (void)mdcom_bm_irq_save(); /* nothing else runs: the report is the last word */
    fault("configASSERT ", file, line, 5);
}

/* ---------------------------------------------------------------- */
/* mdcom_fw/rtos_e2e.h                                                */
/* ---------------------------------------------------------------- */

/* the same fields in the same order (ports/baremetal/board_hooks.h) */
_Static_assert(sizeof(e2e_stats) == sizeof(mdcom_freertos_stats), "e2e_stats: the port's fields");

e2e_thread e2e_spawn(e2e_entry fn, const char *name, uint32_t stack_words, void *arg, uint32_t prio)
{
    TaskHandle_t t = 0;
    if (xTaskCreate(fn, name, stack_words, arg, prio, &t) != pdPASS)
        fault("xTaskCreate failed for ", name, -1, 2);
    return t;
}

void e2e_delay(uint32_t ticks) { vTaskDelay(ticks); }
uint32_t e2e_ticks(void) { return xTaskGetTickCount(); }
void e2e_kill(e2e_thread t) { vTaskDelete((TaskHandle_t)t); }

void e2e_exit(void)
{
    vTaskDelete(0);
    for (;;)
        ;
}

void e2e_park(void)
{
    for (;;)
        vTaskSuspend(0);
}

const mdcom_platform *e2e_platform(void) { return mdcom_platform_freertos(); }
uint64_t e2e_now_ns(void) { return mdcom_freertos_now_ns(); }
uint32_t e2e_tick_ns(void) { return mdcom_freertos_tick_ns(); }
int e2e_is_thread_pid(uint32_t pid) { return MDCOM_FRT_IS_TASK_PID(pid); }

void e2e_get_stats(e2e_stats *out)
{
    mdcom_freertos_stats s;
    mdcom_freertos_get_stats(&s);
    memcpy(out, &s, sizeof(*out));
}

int main(void)
{
    mdcom_freertos_set_boot_seed(mdcom_bm_boot_token());
    (void)e2e_spawn(e2e_main, "main", E2E_STACK_MDCOM, 0, E2E_PRIO_MAIN);
    vTaskStartScheduler();
    mdcom_bm_puts("fw: vTaskStartScheduler returned\n");
    return 1;
}
