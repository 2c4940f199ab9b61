/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_freertos_apicost.c - mdcom-fw-freertos-apicost: the API-cost rows of
 * mdcom-fw-apicost measured in a FreeRTOS task with the scheduler running,
 * through ports/freertos (firmware/common/rtos_apicost.c). One task at the
 * highest priority but the kernel's; the idle task runs only after it ends.
 */
#include "FreeRTOS.h"
#include "task.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom_freertos.h"

void apicost_rtos_main(const char *image);

static void fault(const char *what, const char *where)
{
    mdcom_bm_puts("apicost: ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(where);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(4);
}

void vApplicationIdleHook(void);
void vApplicationIdleHook(void) {}

void vApplicationStackOverflowHook(TaskHandle_t t, char *name);
void vApplicationStackOverflowHook(TaskHandle_t t, char *name)
{
    (void)t;
    fault("stack overflow in task ", name);
}

void vApplicationMallocFailedHook(void);
void vApplicationMallocFailedHook(void) { fault("FreeRTOS heap exhausted", ""); }

void fw_frt_assert_failed(const char *file, int line)
{
    (void)line;
    (void)mdcom_bm_irq_save();
    fault("configASSERT ", file);
}

static void task(void *arg)
{
    (void)arg;
    apicost_rtos_main("mdcom-fw-freertos-apicost (FreeRTOS " tskKERNEL_VERSION_NUMBER ")");
}

int main(void)
{
    mdcom_freertos_set_boot_seed(mdcom_bm_boot_token());
    if (xTaskCreate(task, "apicost", 1024, 0, configMAX_PRIORITIES - 2, 0) != pdPASS)
        fault("xTaskCreate failed", "");
    vTaskStartScheduler();
    fault("vTaskStartScheduler returned", "");
    return 1;
}
