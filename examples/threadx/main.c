/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - a ThreadX application that uses mdcom (examples/threadx; copy
 * it). Two threads, each its own mdcom process of domain "m4" (app.toml):
 *
 *   echo    blocks in mdcom_fifoch_recv on "to_fw" (1 s timeout: it wakes
 *           from the doorbell interrupt the moment Linux sends, and at the
 *           timeout otherwise), answers each request on "from_fw"
 *   status  once a second, under the SMEM lock of "status": uptime in ms,
 *           requests answered, timeouts seen
 *
 * On mps2-an386 under QEMU the doorbell is UART1 (ports/baremetal/boards/
 * mps2-an386): run it with harness/qemu-m4's launcher, e.g.
 *   mdcom-qemu --firmware mdcom-threadx-example.elf --region mdcom-app \
 *              --doorbell-mux -- <your Linux program>
 * On a real SoC the board file rings the IPCC / MU and its interrupt handler
 * calls mdcom_threadx_doorbell_isr() (docs/porting.md, "Eclipse ThreadX").
 */
#include <errno.h>

#include "tx_api.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_threadx.h"
#include "app_layout.h"

#define MS(x) ((int64_t)(x)*1000000)
#define STACK_BYTES 4096u

static volatile uint32_t g_answered, g_timeouts;
static TX_THREAD g_echo, g_status;
static ULONG g_echo_stack[STACK_BYTES / sizeof(ULONG)], g_status_stack[STACK_BYTES / sizeof(ULONG)];

/* Stop the calling thread for good, saying why. */
static void give_up(const char *who, const char *why)
{
    mdcom_bm_puts(who);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(why);
    mdcom_bm_puts("\n");
    for (;;)
        (void)tx_thread_suspend(tx_thread_identify());
}

/* Each thread attaches on its own: threads must not share an mdcom_t (the
 * freestanding core keeps one operation record per attachment). */
static mdcom_t *attach(const char *who)
{
    char err[128];
    mdcom_init_opts o = {.errbuf = err,
                         .errbuf_len = sizeof(err),
                         .attach_timeout_ns = MS(5000),
                         .layout = &app_layout}; /* the layout computed on the build host */
    mdcom_t *m = 0;
    if (mdcom_init(&m, app_layout.cfg, APP_DOM_M4, &o) != 0)
        give_up(who, err);
    return m;
}

static VOID echo_entry(ULONG arg)
{
    static uint8_t buf[256];
    mdcom_t *m = attach("echo");
    mdcom_fifoch_t *in, *out;
    int n = 0;
    (void)arg;
    if (mdcom_fifoch_open(m, "to_fw", &in) || mdcom_fifoch_open(m, "from_fw", &out))
        give_up("echo", "no channels to_fw / from_fw");
    mdcom_fifoch_set_spin(in, MDCOM_NO_SPIN); /* block at once: no spinning on an RTOS */
    mdcom_bm_puts("echo: ready\n");
    /* until the region goes (-ESHUTDOWN, -ECONNRESET) */
    while (n >= 0 || n == -ETIMEDOUT) {
        n = mdcom_fifoch_recv(in, buf, sizeof(buf), MS(1000));
        if (n >= 0)
            g_answered += mdcom_fifoch_send(out, buf, (uint32_t)n, MS(1000)) == 0;
        else
            g_timeouts += n == -ETIMEDOUT;
    }
    mdcom_term(m); /* then the thread completes: its identity is dead */
}

static VOID status_entry(ULONG arg)
{
    mdcom_t *m = attach("status");
    mdcom_smemch_t *st;
    volatile uint32_t *w;
    void *p;
    (void)arg;
    if (mdcom_smemch_open(m, "status", &st))
        give_up("status", "no SMEM channel status");
    mdcom_smemch_get(st, &p, 0);
    w = p;
    for (;;) {
        (void)tx_thread_sleep(TX_TIMER_TICKS_PER_SECOND);
        if (mdcom_smemch_lock(st, MS(100)) != 0)
            continue; /* a peer holds it: next second */
        w[0] = (uint32_t)(mdcom_threadx_now_ns() / 1000000u);
        w[1] = g_answered;
        w[2] = g_timeouts;
        mdcom_smemch_unlock(st);
    }
}

/* ThreadX calls it from tx_kernel_enter, before the scheduler starts. */
VOID tx_application_define(VOID *first_unused_memory)
{
    (void)first_unused_memory;
    /* echo first (priority 3 above status' 4): it attaches as the master
     * and formats the region */
    (void)tx_thread_create(&g_echo, (CHAR *)"echo", echo_entry, 0, g_echo_stack,
                           sizeof(g_echo_stack), 3, 3, TX_NO_TIME_SLICE, TX_AUTO_START);
    (void)tx_thread_create(&g_status, (CHAR *)"status", status_entry, 0, g_status_stack,
                           sizeof(g_status_stack), 4, 4, TX_NO_TIME_SLICE, TX_AUTO_START);
}

int main(void)
{
    /* tokens differ from the last boot's (a warm reset re-formats the region) */
    mdcom_threadx_set_boot_seed(mdcom_bm_boot_token());
    tx_kernel_enter(); /* does not return */
    return 1;
}
