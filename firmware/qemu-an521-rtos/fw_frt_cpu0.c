/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_frt_cpu0.c - mdcom-fw-an521-frt-cpu0: FreeRTOS on CPU0 of QEMU
 * mps2-an521, the master domain "cpu0" of an521_rtos.toml. Four tasks, each
 * its own mdcom process:
 *
 *   main   formats the region (the first mdcom_init of the master domain),
 *          prints READY, releases CPU1 (ThreadX, fw_tx_cpu1.c), starts the
 *          others, waits for them and prints the RESULT lines
 *   ping   RR_PING_COUNT round trips with CPU1's "echo" thread while the
 *          other tasks and threads run, then RR_RTT_COUNT timed ones once
 *          this core's are done: a message
 *          (rr_proto.h: seq + CRC) on "a2b", the answer awaited in
 *          mdcom_fifoch_recv on "b2a" (blocked: CPU1's ring is an MHU0
 *          interrupt here, whose handler wakes the task); then the stop,
 *          answered with CPU1's report
 *   linux  answers each message of the Linux process on "l2a" on "a2l";
 *          Linux has no doorbell into the guest, so its waits end at a
 *          short timeout and look again
 *   lock   RR_LOCK_ROUNDS SMEM lock rounds on "state", while CPU1's "lock"
 *          thread and the Linux process do theirs
 */
#include <errno.h>
#include <string.h>

#include "FreeRTOS.h"
#include "task.h"

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_an521rtos_layout.h"
#include "mdcom_freertos.h"
#include "rr_fw.h"

#define DONE_PING 1u
#define DONE_LINUX 2u
#define DONE_LOCK 4u
#define PRIO_MAIN 4u
#define PRIO_PING 3u
#define PRIO_LINUX 3u
#define PRIO_LOCK 1u
#define STACK_WORDS 1024u

static volatile uint32_t g_done;
static rr_report g_ping, g_cpu1, g_lin, g_linux, g_lock;
/* round trips: while every task and thread runs (load), then alone */
static uint64_t g_load_sum, g_rtt_sum, g_rtt_min = UINT64_MAX, g_rtt_max;
static uint64_t g_port_sum; /* all of them on the port's clock (ns) */

/* The SSE-200's CMSDK timer 0 (secure alias 0x50000000), free-running down
 * from 0xffffffff at the 20 MHz SYSCLK: the round trips' clock. Unlike the
 * port's clock (ticks refined by SysTick) it does not wait for the tick
 * interrupt, which a host that deschedules the vCPU delivers late. */
#define TIMER0_BASE 0x50000000u
#define TIMER0_CTRL MDCOM_BM_REG(TIMER0_BASE + 0x0u)
#define TIMER0_VALUE MDCOM_BM_REG(TIMER0_BASE + 0x4u)
#define TIMER0_RELOAD MDCOM_BM_REG(TIMER0_BASE + 0x8u)
#define TIMER_NS 50u /* 1 / 20 MHz */

static void timer_start(void)
{
    TIMER0_CTRL = 0;
    TIMER0_RELOAD = 0xffffffffu;
    TIMER0_VALUE = 0xffffffffu;
    TIMER0_CTRL = 1u; /* enable, no interrupt */
}

static uint32_t timer_ticks(void) { return ~TIMER0_VALUE; }

/* ---------------------------------------------------------------- */
/* Kernel hooks (the others: frt_glue.c)                              */
/* ---------------------------------------------------------------- */

void vApplicationIdleHook(void);
void vApplicationIdleHook(void) {}

static void spawn(TaskFunction_t fn, const char *name, UBaseType_t prio)
{
    if (xTaskCreate(fn, name, STACK_WORDS, 0, prio, 0) != pdPASS)
        fw_die(name, "xTaskCreate", -ENOMEM);
}

static void park(uint32_t bit)
{
    taskENTER_CRITICAL();
    g_done |= bit;
    taskEXIT_CRITICAL();
    for (;;)
        vTaskSuspend(0); /* the identity stays alive: no reaping to confuse counts */
}

/* ---------------------------------------------------------------- */
/* Tasks                                                              */
/* ---------------------------------------------------------------- */

static void ping_task(void *arg)
{
    mdcom_t *m = rr_attach("ping", MDCOM_AN521RTOS_DOM_CPU0);
    mdcom_fifoch_t *tx = rr_fifo(m, "ping", "a2b"), *rx = rr_fifo(m, "ping", "b2a");
    uint8_t buf[RR_MSG_MAX];
    uint32_t seq;
    int n, c;
    (void)arg;
    for (seq = 0; seq < RR_PING_COUNT + RR_RTT_COUNT; seq++) {
        uint64_t t0, dt;
        uint32_t c0;
        /* the timed round trips: once this core's other tasks are done
         * (CPU1's lock thread yields to its echo thread) */
        while (seq == RR_PING_COUNT &&
               (g_done & (DONE_LINUX | DONE_LOCK)) != (DONE_LINUX | DONE_LOCK))
            vTaskDelay(1);
        uint32_t len = rr_build(buf, seq, RR_TAG_CPU0);
        t0 = mdcom_freertos_now_ns();
        c0 = timer_ticks();
        rr_send(tx, "ping", buf, len, RR_MS(5000));
        n = mdcom_fifoch_recv(rx, buf, sizeof(buf), RR_MS(5000));
        dt = (uint64_t)(uint32_t)(timer_ticks() - c0) * TIMER_NS;
        g_port_sum += mdcom_freertos_now_ns() - t0;
        if (n < 0)
            fw_die("ping", "recv", n);
        c = rr_check(buf, n, seq, RR_TAG_CPU1, &g_cpu1);
        if (c == 0)
            g_ping.received++;
        else
            g_ping.bad++;
        if (seq < RR_PING_COUNT) {
            g_load_sum += dt;
            continue;
        }
        g_rtt_sum += dt;
        g_rtt_min = dt < g_rtt_min ? dt : g_rtt_min;
        g_rtt_max = dt > g_rtt_max ? dt : g_rtt_max;
    }
    rr_send(tx, "ping", buf, rr_build_stop(buf, &g_ping), RR_MS(5000));
    /* CPU1 answers when its lock thread is done too */
    n = mdcom_fifoch_recv(rx, buf, sizeof(buf), RR_MS(60000));
    if (n < 0)
        fw_die("ping", "recv report", n);
    if (rr_check(buf, n, seq, RR_TAG_CPU1, &g_cpu1) != 1)
        g_ping.bad++;
    park(DONE_PING);
}

static void linux_task(void *arg)
{
    mdcom_t *m = rr_attach("linux", MDCOM_AN521RTOS_DOM_CPU0);
    mdcom_fifoch_t *rx = rr_fifo(m, "linux", "l2a"), *tx = rr_fifo(m, "linux", "a2l");
    uint8_t buf[RR_MSG_MAX];
    uint32_t seq = 0, idle = 0;
    (void)arg;
    for (;;) {
        int c, n = mdcom_fifoch_recv(rx, buf, sizeof(buf), RR_MS(2));
        if (n == -ETIMEDOUT) {
            if (++idle > 100000u) /* about 200 s without a message */
                fw_die("linux", "recv", n);
            continue;
        }
        if (n < 0)
            fw_die("linux", "recv", n);
        idle = 0;
        c = rr_check(buf, n, seq, RR_TAG_LINUX, &g_linux);
        if (c == 1)
            break;
        if (c == 0)
            g_lin.received++;
        else
            g_lin.bad++;
        rr_send(tx, "linux", buf, rr_build(buf, seq, RR_TAG_CPU0), RR_MS(5000));
        seq++;
    }
    rr_send(tx, "linux", buf, rr_build_stop(buf, &g_lin), RR_MS(5000));
    park(DONE_LINUX);
}

static void lock_task(void *arg)
{
    mdcom_t *m = rr_attach("lock", MDCOM_AN521RTOS_DOM_CPU0);
    (void)arg;
    rr_lock_rounds(m, "lock", RR_LOCK_ROUNDS, 0x41000000u, &g_lock);
    park(DONE_LOCK);
}

static void main_task(void *arg)
{
    mdcom_t *m = rr_attach("main", MDCOM_AN521RTOS_DOM_CPU0); /* formats */
    mdcom_smemch_t *st;
    mdcom_freertos_stats fs;
    void *p;
    uint32_t waited = 0, counter, want;
    int failed = 0, r;
    (void)arg;
    timer_start();
    mdcom_bm_puts("READY\n");
    mdcom_an521_start_cpu1(AN521_CPU1_VTOR);
    spawn(ping_task, "ping", PRIO_PING);
    spawn(linux_task, "linux", PRIO_LINUX);
    spawn(lock_task, "lock", PRIO_LOCK);
    while (g_done != (DONE_PING | DONE_LINUX | DONE_LOCK)) {
        vTaskDelay(pdMS_TO_TICKS(10));
        if (++waited > 24000u) { /* 240 s */
            mdcom_bm_put_kv("done", g_done);
            fw_die("main", "waiting for the tasks", -ETIMEDOUT);
        }
    }
    if ((r = mdcom_smemch_open(m, "state", &st)) || (r = mdcom_smemch_lock(st, RR_MS(5000))))
        fw_die("main", "state", r);
    mdcom_smemch_get(st, &p, 0);
    counter = ((volatile uint32_t *)p)[0];
    (void)mdcom_smemch_unlock(st);
    mdcom_freertos_get_stats(&fs);

    failed |= mdcom_bm_result(
        "rtos_ping", g_ping.received == RR_PING_COUNT + RR_RTT_COUNT && g_ping.bad == 0 &&
                         g_cpu1.received == RR_PING_COUNT + RR_RTT_COUNT && g_cpu1.bad == 0);
    mdcom_bm_put_kv("sent", RR_PING_COUNT + RR_RTT_COUNT);
    mdcom_bm_put_kv("cpu0_received", g_ping.received);
    mdcom_bm_put_kv("cpu0_bad", g_ping.bad);
    mdcom_bm_put_kv("cpu1_received", g_cpu1.received);
    mdcom_bm_put_kv("cpu1_bad", g_cpu1.bad);
    mdcom_bm_put_kv("loaded_rtt_avg_ns", (uint32_t)(g_load_sum / RR_PING_COUNT));
    mdcom_bm_put_kv("rtt_min_ns", (uint32_t)g_rtt_min);
    mdcom_bm_put_kv("rtt_avg_ns", (uint32_t)(g_rtt_sum / RR_RTT_COUNT));
    mdcom_bm_put_kv("rtt_max_ns", (uint32_t)g_rtt_max);
    /* the same round trips, all of them, on the port's clock: a cross-check */
    mdcom_bm_put_kv("port_clock_avg_ns", (uint32_t)(g_port_sum / (RR_PING_COUNT + RR_RTT_COUNT)));
    mdcom_bm_puts("\n");

    failed |=
        mdcom_bm_result("rtos_linux", g_lin.received > 0 && g_lin.received == g_linux.received &&
                                          g_lin.bad == 0 && g_linux.bad == 0);
    mdcom_bm_put_kv("cpu0_received", g_lin.received);
    mdcom_bm_put_kv("cpu0_bad", g_lin.bad);
    mdcom_bm_put_kv("linux_received", g_linux.received);
    mdcom_bm_put_kv("linux_bad", g_linux.bad);
    mdcom_bm_puts("\n");

    want = g_lock.lock_rounds + g_cpu1.lock_rounds + g_linux.lock_rounds;
    failed |= mdcom_bm_result("rtos_smem",
                              counter == want && g_lock.lock_rounds == RR_LOCK_ROUNDS &&
                                  g_cpu1.lock_rounds == RR_LOCK_ROUNDS && g_linux.lock_rounds > 0 &&
                                  g_lock.lock_bad + g_cpu1.lock_bad + g_linux.lock_bad == 0);
    mdcom_bm_put_kv("counter", counter);
    mdcom_bm_put_kv("cpu0_rounds", g_lock.lock_rounds);
    mdcom_bm_put_kv("cpu1_rounds", g_cpu1.lock_rounds);
    mdcom_bm_put_kv("linux_rounds", g_linux.lock_rounds);
    mdcom_bm_put_kv("disturbed", g_lock.lock_bad + g_cpu1.lock_bad + g_linux.lock_bad);
    mdcom_bm_puts("\n");

    /* the blocked receivers were woken by the MHU interrupt on both cores */
    failed |= mdcom_bm_result("rtos_doorbell", fs.woken > 0 && mdcom_an521_mhu_irqs(0) > 0 &&
                                                   g_cpu1.woken > 0 && g_cpu1.irqs > 0);
    mdcom_bm_put_kv("cpu0_sleeps", fs.sleeps);
    mdcom_bm_put_kv("cpu0_woken", fs.woken);
    mdcom_bm_put_kv("cpu0_timeouts", fs.timeouts);
    mdcom_bm_put_kv("cpu0_mhu_irqs", mdcom_an521_mhu_irqs(0));
    /* notify in the MHU interrupt -> the task runs */
    mdcom_bm_put_kv("cpu0_wake_avg_ns", fs.wake_n ? (uint32_t)(fs.wake_sum_ns / fs.wake_n) : 0);
    mdcom_bm_put_kv("cpu0_wake_max_ns", fs.wake_max_ns);
    mdcom_bm_put_kv("cpu1_woken", g_cpu1.woken);
    mdcom_bm_put_kv("cpu1_mhu_irqs", g_cpu1.irqs);
    mdcom_bm_puts("\n");
    mdcom_bm_puts(failed ? "DONE FAIL\n" : "DONE PASS\n");
    mdcom_bm_exit(failed ? 1 : 0);
}

int main(void)
{
    rr_boot("mdcom-fw-an521-frt-cpu0");
    spawn(main_task, "main", PRIO_MAIN);
    vTaskStartScheduler();
    mdcom_bm_puts("vTaskStartScheduler returned\n");
    return 1;
}
