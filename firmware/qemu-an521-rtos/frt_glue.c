/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frt_glue.c - what the two FreeRTOS images on CPU0 (fw_frt_cpu0.c,
 * tm_cross_frt_cpu0.c) share of the kernel's glue: rr_sleep_ms (rr_fw.h) and
 * the hooks that end the run on a stack overflow, a failed allocation or a
 * configASSERT. Each image gives its own idle hook.
 */
#include <errno.h>

#include "FreeRTOS.h"
#include "task.h"

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_freertos.h"
#include "rr_fw.h"

void rr_boot(const char *image)
{
    mdcom_bm_puts(image);
    mdcom_bm_puts(": FreeRTOS " tskKERNEL_VERSION_NUMBER " on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_put_kv("cpu", mdcom_an521_cpu());
    mdcom_bm_puts("\n");
    mdcom_freertos_set_boot_seed(mdcom_bm_boot_token() + mdcom_an521_cpu());
}

void rr_sleep_ms(uint32_t ms) { vTaskDelay(pdMS_TO_TICKS(ms) ? pdMS_TO_TICKS(ms) : 1); }

void vApplicationStackOverflowHook(TaskHandle_t t, char *name);
void vApplicationStackOverflowHook(TaskHandle_t t, char *name)
{
    (void)t;
    fw_die(name, "stack overflow", -EFAULT);
}

void vApplicationMallocFailedHook(void);
void vApplicationMallocFailedHook(void) { fw_die("FreeRTOS", "heap", -ENOMEM); }

void fw_frt_assert_failed(const char *file, int line)
{
    (void)mdcom_bm_irq_save();
    mdcom_bm_puts("configASSERT ");
    mdcom_bm_puts(file);
    mdcom_bm_put_kv("line", (uint32_t)line);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(5);
}
