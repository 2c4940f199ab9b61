/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - a FreeRTOS application that uses mdcom (examples/freertos; copy
 * it). Two tasks, each its own mdcom process of domain "m4" (app.toml):
 *
 *   echo    blocks in mdcom_fifoch_recv on "to_fw" (1 s timeout: it wakes
 *           from the doorbell interrupt the moment Linux sends, and at the
 *           timeout otherwise), answers each request on "from_fw"
 *   status  once a second, under the SMEM lock of "status": uptime in ms,
 *           requests answered, timeouts seen
 *
 * On mps2-an386 under QEMU the doorbell is UART1 (ports/baremetal/boards/
 * mps2-an386): run it with harness/qemu-m4's launcher, e.g.
 *   mdcom-qemu --firmware mdcom-freertos-example.elf --region mdcom-app \
 *              --doorbell-mux -- <your Linux program>
 * On a real SoC the board file rings the IPCC / MU and its interrupt handler
 * calls mdcom_bm_doorbell_raise() (docs/porting.md, "FreeRTOS").
 */
#include <string.h>

#include "FreeRTOS.h"
#include "task.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_freertos.h"
#include "app_layout.h"

#define MS(x) ((int64_t)(x)*1000000)

static volatile uint32_t g_answered, g_timeouts;

/* Each task attaches on its own: tasks must not share an mdcom_t (the
 * freestanding core keeps one operation record per attachment). */
static mdcom_t *attach(const char *who)
{
    char err[128];
    mdcom_init_opts o;
    mdcom_t *m;
    int r;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.attach_timeout_ns = MS(5000);
    o.layout = &app_layout; /* computed on the build host */
    r = mdcom_init(&m, app_layout.cfg, APP_DOM_M4, &o);
    if (r) {
        mdcom_bm_puts(who);
        mdcom_bm_puts(": mdcom_init: ");
        mdcom_bm_puts(err);
        mdcom_bm_puts("\n");
        vTaskSuspend(0);
    }
    return m;
}

static void echo_task(void *arg)
{
    static uint8_t buf[256];
    mdcom_t *m;
    mdcom_fifoch_t *in, *out;
    (void)arg;
    m = attach("echo");
    if (mdcom_fifoch_open(m, "to_fw", &in) || mdcom_fifoch_open(m, "from_fw", &out))
        vTaskSuspend(0);
    mdcom_fifoch_set_spin(in, MDCOM_NO_SPIN); /* block at once: no spinning on an RTOS */
    mdcom_bm_puts("echo: ready\n");
    for (;;) {
        int n = mdcom_fifoch_recv(in, buf, sizeof(buf), MS(1000));
        if (n == -ETIMEDOUT) {
            g_timeouts++;
            continue;
        }
        if (n < 0)
            break; /* -ESHUTDOWN, -ECONNRESET: the region is gone */
        if (mdcom_fifoch_send(out, buf, (uint32_t)n, MS(1000)) == 0)
            g_answered++;
    }
    mdcom_term(m);
    vTaskDelete(0);
}

static void status_task(void *arg)
{
    mdcom_t *m;
    mdcom_smemch_t *st;
    void *p;
    TickType_t last = xTaskGetTickCount();
    (void)arg;
    m = attach("status");
    if (mdcom_smemch_open(m, "status", &st))
        vTaskSuspend(0);
    mdcom_smemch_get(st, &p, 0);
    for (;;) {
        vTaskDelayUntil(&last, pdMS_TO_TICKS(1000));
        if (mdcom_smemch_lock(st, MS(100)) == 0) {
            volatile uint32_t *w = p;
            w[0] = (uint32_t)(mdcom_freertos_now_ns() / 1000000u);
            w[1] = g_answered;
            w[2] = g_timeouts;
            mdcom_smemch_unlock(st);
        }
    }
}

/* FreeRTOSConfig.h's hooks */
void vApplicationStackOverflowHook(TaskHandle_t t, char *name);
void vApplicationStackOverflowHook(TaskHandle_t t, char *name)
{
    (void)t;
    mdcom_bm_puts("stack overflow: ");
    mdcom_bm_puts(name);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(4);
}

void vApplicationMallocFailedHook(void);
void vApplicationMallocFailedHook(void) { mdcom_bm_exit(4); }

void app_assert_failed(const char *file, int line)
{
    (void)mdcom_bm_irq_save();
    mdcom_bm_puts("assert: ");
    mdcom_bm_puts(file);
    mdcom_bm_puts(":");
    mdcom_bm_put_u32((uint32_t)line);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(5);
}

int main(void)
{
    /* tokens differ from the last boot's (a warm reset re-formats the region) */
    mdcom_freertos_set_boot_seed(mdcom_bm_boot_token());
    /* the echo task first: it attaches as the master and formats the region */
    xTaskCreate(echo_task, "echo", 1024, 0, 3, 0);
    xTaskCreate(status_task, "status", 1024, 0, 2, 0);
    vTaskStartScheduler();
    return 1;
}
