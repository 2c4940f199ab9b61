/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_tx_cpu1.c - mdcom-fw-an521-tx-cpu1: Eclipse ThreadX on CPU1 of QEMU
 * mps2-an521, the remote domain "cpu1" of an521_rtos.toml. CPU0 (FreeRTOS,
 * fw_frt_cpu0.c) releases this core once it has formatted the region. Two
 * threads, each its own mdcom process:
 *
 *   echo  blocked in mdcom_fifoch_recv on "a2b" (CPU0's ring is an MHU0
 *         interrupt here, whose handler wakes the thread); checks each
 *         message of CPU0's "ping" (seq + CRC, rr_proto.h) and answers with
 *         its own on "b2a"; at the stop, once "lock" is done, answers with
 *         this core's report (counts, lock rounds, doorbell wake-ups)
 *   lock  RR_LOCK_ROUNDS SMEM lock rounds on "state", at the same time as
 *         CPU0's "lock" task and the Linux process
 */
#include <errno.h>
#include <string.h>

#include "tx_api.h"

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_an521rtos_layout.h"
#include "mdcom_threadx.h"
#include "rr_fw.h"

#define STACK_BYTES 4096u
#define PRIO_ECHO 4u /* ThreadX: lower runs first */
#define PRIO_LOCK 8u

static TX_THREAD g_echo, g_lock;
static UCHAR g_echo_stack[STACK_BYTES] __attribute__((aligned(8)));
static UCHAR g_lock_stack[STACK_BYTES] __attribute__((aligned(8)));
static volatile uint32_t g_lock_done;
static rr_report g_rep;

static VOID echo_entry(ULONG arg)
{
    mdcom_t *m = rr_attach("echo", MDCOM_AN521RTOS_DOM_CPU1);
    mdcom_fifoch_t *rx = rr_fifo(m, "echo", "a2b"), *tx = rr_fifo(m, "echo", "b2a");
    uint8_t buf[RR_MSG_MAX];
    rr_report cpu0;
    mdcom_threadx_stats st;
    uint32_t seq = 0;
    (void)arg;
    mdcom_bm_puts("cpu1: attached\n");
    for (;;) {
        int c, n = mdcom_fifoch_recv(rx, buf, sizeof(buf), RR_MS(20000));
        if (n < 0)
            fw_die("echo", "recv", n);
        c = rr_check(buf, n, seq, RR_TAG_CPU0, &cpu0);
        if (c == 1)
            break;
        if (c == 0)
            g_rep.received++;
        else
            g_rep.bad++;
        rr_send(tx, "echo", buf, rr_build(buf, seq, RR_TAG_CPU1), RR_MS(5000));
        seq++;
    }
    while (!g_lock_done)
        rr_sleep_ms(1);
    mdcom_threadx_get_stats(&st);
    g_rep.woken = st.woken;
    g_rep.irqs = mdcom_an521_mhu_irqs(0);
    rr_send(tx, "echo", buf, rr_build_stop(buf, &g_rep), RR_MS(5000));
    mdcom_bm_puts("cpu1:");
    mdcom_bm_put_kv("received", g_rep.received);
    mdcom_bm_put_kv("bad", g_rep.bad);
    mdcom_bm_put_kv("cpu0_says_received", cpu0.received);
    mdcom_bm_put_kv("lock_rounds", g_rep.lock_rounds);
    mdcom_bm_put_kv("lock_bad", g_rep.lock_bad);
    mdcom_bm_put_kv("sleeps", st.sleeps);
    mdcom_bm_put_kv("woken", st.woken);
    mdcom_bm_put_kv("mhu_irqs", g_rep.irqs);
    mdcom_bm_put_kv("wake_avg_ns", st.wake_n ? (uint32_t)(st.wake_sum_ns / st.wake_n) : 0);
    mdcom_bm_put_kv("wake_max_ns", st.wake_max_ns);
    mdcom_bm_puts("\n");
    for (;;) /* CPU0 ends QEMU */
        (void)tx_thread_suspend(tx_thread_identify());
}

static VOID lock_entry(ULONG arg)
{
    mdcom_t *m = rr_attach("lock", MDCOM_AN521RTOS_DOM_CPU1);
    (void)arg;
    rr_lock_rounds(m, "lock", RR_LOCK_ROUNDS, 0x42000000u, &g_rep);
    g_lock_done = 1;
    for (;;)
        (void)tx_thread_suspend(tx_thread_identify());
}

/* ThreadX calls it from tx_kernel_enter, before the scheduler. */
VOID tx_application_define(VOID *first_unused_memory)
{
    (void)first_unused_memory;
    rr_tx_watch_stacks();
    if (tx_thread_create(&g_echo, (CHAR *)"echo", echo_entry, 0, g_echo_stack, STACK_BYTES,
                         PRIO_ECHO, PRIO_ECHO, TX_NO_TIME_SLICE, TX_AUTO_START) != TX_SUCCESS ||
        tx_thread_create(&g_lock, (CHAR *)"lock", lock_entry, 0, g_lock_stack, STACK_BYTES,
                         PRIO_LOCK, PRIO_LOCK, TX_NO_TIME_SLICE, TX_AUTO_START) != TX_SUCCESS)
        fw_die("cpu1", "tx_thread_create", -ENOMEM);
}

int main(void)
{
    rr_boot("mdcom-fw-an521-tx-cpu1");
    tx_kernel_enter(); /* does not return */
    return 1;
}
