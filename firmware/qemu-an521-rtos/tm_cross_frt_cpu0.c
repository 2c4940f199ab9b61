/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_cross_frt_cpu0.c - mdcom-fw-an521-tmx-frt-cpu0: FreeRTOS on CPU0 of
 * QEMU mps2-an521, the master and the reporter of the cross-core score rows
 * (tm_cross.h; CPU1 runs tm_cross_tx_cpu1.c). As Thread-Metric: test tasks
 * count, the reporter ("main", the highest priority) sleeps one period and
 * prints the count of it. The rows, one after the other:
 *
 *   cpu0_queue       FreeRTOS queues, task "qa" -> task "qb" -> "qa": 16 bytes
 *                    there and back (both on CPU0; the baseline)
 *   xcore_fifo_block mdcom FIFOs, task "xc" (CPU0) -> thread "peer" (CPU1)
 *                    -> "xc": 16 bytes there and back, each side blocked in
 *                    recv and woken by the other's MHU doorbell
 *   xcore_fifo_poll  the same, both sides polling recv
 *   xcore_rpmsg_block the same round trip over mdcom's RPMsg on SMEM "rpmsg"
 *                    (CPU0 the host, CPU1 the remote's announced endpoint),
 *                    each side blocked in mdcom_rpmsg_poll, woken by the MHU
 *   cpu0_mutex_turn  a FreeRTOS mutex handed over between tasks "ma" and
 *                    "mb": each waits for its turn (yielding while it is the
 *                    other's), takes the mutex, does a round (rr_lock_round),
 *                    gives the turn and the mutex (the baseline)
 *   xcore_lock_turn  mdcom's SMEM lock of "state" handed over the same way
 *                    between "xc" (CPU0) and "peer" (CPU1), each polling the
 *                    turn word while it is the other core's
 *
 * A count is a round trip or a hand-over.
 * A round trip's echo is compared with what was sent, and a round checks
 * that nobody else touched the locked area (bad=). The idle hook waits in
 * WFI, so that an idle core halts and QEMU runs the other one.
 */
#include <errno.h>
#include <string.h>

#include "FreeRTOS.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"

#include "an521.h"
#include "mdcom/rpmsg.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_an521rtos_layout.h"
#include "mdcom_freertos.h"
#include "rr_fw.h"
#include "tm_cross.h"

#define PRIO_MAIN 4u
#define PRIO_TEST 2u
#define STACK_WORDS 1024u

enum row {
    ROW_QUEUE,
    ROW_FIFO_BLOCK,
    ROW_FIFO_POLL,
    ROW_RPMSG_BLOCK,
    ROW_MUTEX_TURN,
    ROW_LOCK_TURN,
    ROWS
};
static const char *const g_row_name[ROWS] = {"cpu0_queue",      "xcore_fifo_block",
                                             "xcore_fifo_poll", "xcore_rpmsg_block",
                                             "cpu0_mutex_turn", "xcore_lock_turn"};

static TaskHandle_t g_main, g_xc, g_qa, g_ma, g_mb;
static QueueHandle_t g_q1, g_q2;
static SemaphoreHandle_t g_mx;
static volatile uint32_t g_row, g_stop;
static volatile uint32_t g_count;     /* round trips (the message rows) */
static volatile uint32_t g_bad;       /* echoes that differ, disturbed rounds */
static volatile uint32_t g_a, g_b;    /* the two sides' rounds (the lock rows) */
static volatile uint32_t g_mwords[4]; /* the mutex rows' area, as "state"'s words */
static volatile uint32_t *g_state;    /* the SMEM area of "state" */

/* ---------------------------------------------------------------- */
/* Kernel hooks (the others: frt_glue.c)                              */
/* ---------------------------------------------------------------- */

void vApplicationIdleHook(void);
void vApplicationIdleHook(void) { __asm__ __volatile__("wfi" ::: "memory"); }

static TaskHandle_t spawn(TaskFunction_t fn, const char *name, void *arg)
{
    TaskHandle_t h;
    if (xTaskCreate(fn, name, STACK_WORDS, arg, PRIO_TEST, &h) != pdPASS)
        fw_die(name, "xTaskCreate", -ENOMEM);
    return h;
}

/* a test task: wait for the reporter's start, tell it when done */
static void wait_start(void) { (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY); }
static void done(void) { xTaskNotifyGive(g_main); }

/* ---------------------------------------------------------------- */
/* The one-core baselines                                             */
/* ---------------------------------------------------------------- */

static void qa_task(void *arg)
{
    uint8_t out[TMX_MSG], in[TMX_MSG];
    uint32_t seq = 0;
    (void)arg;
    for (;;) {
        wait_start();
        while (!g_stop) {
            tmx_fill(out, seq++);
            (void)xQueueSend(g_q1, out, portMAX_DELAY);
            (void)xQueueReceive(g_q2, in, portMAX_DELAY);
            if (memcmp(in, out, TMX_MSG) != 0)
                g_bad++;
            g_count++;
        }
        done();
    }
}

/* the echo side: for ever */
static void qb_task(void *arg)
{
    uint8_t buf[TMX_MSG];
    (void)arg;
    for (;;) {
        (void)xQueueReceive(g_q1, buf, portMAX_DELAY);
        (void)xQueueSend(g_q2, buf, portMAX_DELAY);
    }
}

/* ma (arg 0) and mb (arg 1): the mutex hand-over */
static void m_task(void *arg)
{
    uint32_t me = (uint32_t)(uintptr_t)arg;
    volatile uint32_t *mine = me ? &g_b : &g_a;
    for (;;) {
        wait_start();
        while (!g_stop) {
            if (g_mwords[TMX_W_TURN] != me) {
                taskYIELD();
                continue;
            }
            (void)xSemaphoreTake(g_mx, portMAX_DELAY);
            g_bad += (uint32_t)rr_lock_round(g_mwords, me ? TMX_MARK_CPU1 : TMX_MARK_CPU0);
            ++*mine;
            g_mwords[TMX_W_TURN] = !me;
            (void)xSemaphoreGive(g_mx);
        }
        done();
    }
}

/* ---------------------------------------------------------------- */
/* The cross-core rows: task "xc"                                     */
/* ---------------------------------------------------------------- */

static void ctl_send(mdcom_fifoch_t *tx, uint32_t cmd)
{
    uint32_t c[3] = {TMX_MAGIC, cmd, 0};
    rr_send(tx, "xc", c, sizeof(c), RR_MS(5000));
}

/* CPU1's answer to a command: its bad count */
static uint32_t ctl_answer(mdcom_fifoch_t *rx, uint32_t cmd)
{
    uint32_t c[RR_MSG_MAX / 4];
    int n = mdcom_fifoch_recv(rx, c, sizeof(c), RR_MS(20000));
    if (n != (int)TMX_CTL || c[0] != TMX_MAGIC || c[1] != cmd)
        fw_die("xc", "answer", n < 0 ? n : -EBADMSG);
    return c[2];
}

static int recv_echo(mdcom_fifoch_t *rx, uint8_t *buf, int poll)
{
    for (;;) {
        int n = mdcom_fifoch_recv(rx, buf, RR_MSG_MAX, poll ? MDCOM_POLL : RR_MS(5000));
        if (!poll || (n != -ETIMEDOUT && n != -EAGAIN))
            return n;
    }
}

static uint8_t g_rp_state[TMX_RPMSG_STATE] __attribute__((aligned(16)));

typedef struct rp_host {
    uint8_t *in;
    volatile uint32_t got, len;
} rp_host;

/* the host's endpoint: the echo */
static int rp_host_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    rp_host *h = (rp_host *)priv;
    (void)ept;
    (void)src;
    h->len = (uint32_t)len;
    memcpy(h->in, data, len < RR_MSG_MAX ? len : RR_MSG_MAX);
    h->got = 1;
    return 0;
}

/* xcore_rpmsg_block: the host on "rpmsg" (formatted here, each run), CPU1
 * the remote; round trips until the stop, then the control message */
static void rpmsg_row(mdcom_fifoch_t *tx, mdcom_fifoch_t *rx, mdcom_smemch_t *rps, uint32_t *seq)
{
    static const uint32_t stop[3] = {TMX_MAGIC, TMX_CMD_STOP, 0};
    uint8_t out[TMX_MSG], in[RR_MSG_MAX];
    rp_host h = {in, 0, 0};
    mdcom_rpmsg_opts ro;
    mdcom_rpmsg_t *rp;
    mdcom_rpmsg_ept_t *ept;
    void *area;
    uint32_t size, addr;
    int r;
    memset(&ro, 0, sizeof(ro));
    ro.role = MDCOM_RPMSG_HOST;
    ro.geometry.num_bufs = TMX_RPMSG_NUM_BUFS;
    ro.geometry.buf_size = TMX_RPMSG_BUF_SIZE;
    ro.geometry.vring_align = TMX_RPMSG_ALIGN;
    ro.spin_ns = MDCOM_NO_SPIN;
    if (mdcom_rpmsg_state_size(&ro) > sizeof(g_rp_state))
        fw_die("xc", "rpmsg state", -ENOSPC);
    mdcom_smemch_get(rps, &area, &size);
    if ((r = mdcom_rpmsg_init(&rp, g_rp_state, sizeof(g_rp_state), area, size, &ro)) != 0)
        fw_die("xc", "rpmsg init", r);
    ctl_send(tx, TMX_CMD_RPMSG);
    (void)ctl_answer(rx, TMX_CMD_RPMSG);
    if ((r = mdcom_rpmsg_wait_service(rp, TMX_RPMSG_SERVICE, &addr, RR_MS(20000))) != 0 ||
        (r = mdcom_rpmsg_ept_create(rp, &ept, 0, MDCOM_RPMSG_ADDR_ANY, addr, rp_host_cb, &h,
                                    RR_MS(20000))) != 0)
        fw_die("xc", "rpmsg service", r);
    while (!g_stop) {
        tmx_fill(out, (*seq)++);
        h.got = 0;
        if ((r = mdcom_rpmsg_send(ept, out, TMX_MSG, RR_MS(5000))) != 0)
            fw_die("xc", "rpmsg send", r);
        while (!h.got)
            if ((r = mdcom_rpmsg_poll(rp, RR_MS(5000))) < 0)
                fw_die("xc", "rpmsg poll", r);
        if (h.len != TMX_MSG || memcmp(in, out, TMX_MSG) != 0)
            g_bad++;
        g_count++;
    }
    if ((r = mdcom_rpmsg_send(ept, stop, sizeof(stop), RR_MS(5000))) != 0)
        fw_die("xc", "rpmsg stop", r);
    g_bad += ctl_answer(rx, TMX_CMD_STOP);
    (void)mdcom_rpmsg_term(rp);
}

static void xc_task(void *arg)
{
    mdcom_t *m = rr_attach("xc", MDCOM_AN521RTOS_DOM_CPU0);
    mdcom_fifoch_t *tx = rr_fifo(m, "xc", "a2b"), *rx = rr_fifo(m, "xc", "b2a");
    mdcom_smemch_t *st, *rps;
    uint8_t out[TMX_MSG], in[RR_MSG_MAX];
    uint32_t seq = 0;
    int r;
    (void)arg;
    if ((r = mdcom_smemch_open(m, "state", &st)) != 0 ||
        (r = mdcom_smemch_open(m, "rpmsg", &rps)) != 0)
        fw_die("xc", "state", r);
    for (;;) {
        wait_start();
        if (g_row == ROW_FIFO_BLOCK || g_row == ROW_FIFO_POLL) {
            int poll = g_row == ROW_FIFO_POLL;
            uint32_t cmd = poll ? TMX_CMD_ECHO_POLL : TMX_CMD_ECHO_BLOCK;
            ctl_send(tx, cmd);
            (void)ctl_answer(rx, cmd);
            while (!g_stop) {
                tmx_fill(out, seq++);
                if ((r = mdcom_fifoch_send(tx, out, TMX_MSG, RR_MS(5000))) < 0)
                    fw_die("xc", "send", r);
                if ((r = recv_echo(rx, in, poll)) < 0)
                    fw_die("xc", "recv", r);
                if (r != (int)TMX_MSG || memcmp(in, out, TMX_MSG) != 0)
                    g_bad++;
                g_count++;
            }
            ctl_send(tx, TMX_CMD_STOP);
            g_bad += ctl_answer(rx, TMX_CMD_STOP);
        } else if (g_row == ROW_RPMSG_BLOCK) {
            rpmsg_row(tx, rx, rps, &seq);
        } else {
            ctl_send(tx, TMX_CMD_LOCK_TURN);
            (void)ctl_answer(rx, TMX_CMD_LOCK_TURN);
            while (!g_stop) {
                if (__atomic_load_n(&g_state[TMX_W_TURN], __ATOMIC_ACQUIRE) != TMX_TURN_CPU0)
                    continue;
                if ((r = mdcom_smemch_lock(st, RR_MS(10000))) != 0)
                    fw_die("xc", "lock", r);
                if (g_state[TMX_W_TURN] != TMX_TURN_CPU0)
                    g_bad++;
                g_bad += (uint32_t)rr_lock_round(g_state, TMX_MARK_CPU0);
                g_a++;
                g_state[TMX_W_TURN] = TMX_TURN_CPU1;
                if ((r = mdcom_smemch_unlock(st)) != 0)
                    fw_die("xc", "unlock", r);
            }
            /* CPU1 answers once it saw the stop word */
            g_bad += ctl_answer(rx, TMX_CMD_STOP);
        }
        done();
    }
}

/* ---------------------------------------------------------------- */
/* The reporter                                                       */
/* ---------------------------------------------------------------- */

/* The row's count now. The lock row's counter is the locked area's word 0,
 * read without taking the lock: the reporter must not contend (it would
 * be a third holder, and it outranks the CPU0 side), and one aligned word
 * is read whole. */
static uint32_t count(uint32_t row)
{
    switch (row) {
    case ROW_MUTEX_TURN:
        return __atomic_load_n(&g_mwords[TMX_W_COUNT], __ATOMIC_SEQ_CST);
    case ROW_LOCK_TURN:
        return __atomic_load_n(&g_state[TMX_W_COUNT], __ATOMIC_SEQ_CST);
    default:
        return g_count;
    }
}

/* One row: start its tasks, skip the warm-up, count one period, stop them;
 * its SCORE line. 0 when the score is 0 or a check failed. */
static int run_row(uint32_t row)
{
    TaskHandle_t t[2] = {0, 0};
    mdcom_freertos_stats f0, f1;
    uint32_t c0, c1, a0, b0, i, n;
    g_row = row;
    g_stop = 0;
    g_bad = 0;
    switch (row) {
    case ROW_QUEUE:
        t[0] = g_qa;
        break;
    case ROW_MUTEX_TURN:
        g_mwords[TMX_W_TURN] = 0;
        t[0] = g_ma;
        t[1] = g_mb;
        break;
    case ROW_LOCK_TURN:
        /* CPU1 waits for the command: nobody holds the lock */
        g_state[TMX_W_STOP] = 0;
        g_state[TMX_W_TURN] = TMX_TURN_CPU0;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        /* fall through */
    default:
        t[0] = g_xc;
        break;
    }
    n = t[1] ? 2u : 1u;
    for (i = 0; i < n; i++)
        xTaskNotifyGive(t[i]);
    vTaskDelay(pdMS_TO_TICKS(TMX_WARMUP_MS));
    c0 = count(row);
    a0 = g_a;
    b0 = g_b;
    mdcom_freertos_get_stats(&f0);
    vTaskDelay(pdMS_TO_TICKS(TMX_PERIOD_MS));
    c1 = count(row);
    mdcom_freertos_get_stats(&f1);
    a0 = g_a - a0;
    b0 = g_b - b0;
    g_stop = 1;
    if (row == ROW_LOCK_TURN)
        __atomic_store_n(&g_state[TMX_W_STOP], 1u, __ATOMIC_SEQ_CST);
    for (i = 0; i < n; i++)
        if (!ulTaskNotifyTake(pdFALSE, pdMS_TO_TICKS(30000)))
            fw_die("main", "waiting for the row's tasks", -ETIMEDOUT);
    mdcom_bm_puts("SCORE ");
    mdcom_bm_puts(g_row_name[row]);
    mdcom_bm_puts(" ");
    mdcom_bm_put_u32(c1 - c0);
    mdcom_bm_put_kv("period_ms", TMX_PERIOD_MS);
    mdcom_bm_put_kv("bad", g_bad);
    /* CPU0's mdcom waits in the period: blocked in the kernel, ended by the
     * doorbell, ended by their timeout */
    mdcom_bm_put_kv("sleeps", f1.sleeps - f0.sleeps);
    mdcom_bm_put_kv("woken", f1.woken - f0.woken);
    mdcom_bm_put_kv("timeouts", f1.timeouts - f0.timeouts);
    if (row == ROW_MUTEX_TURN) {
        mdcom_bm_put_kv("ma", a0);
        mdcom_bm_put_kv("mb", b0);
    } else if (row == ROW_LOCK_TURN) {
        /* CPU1's rounds: the counter's other increments */
        mdcom_bm_put_kv("cpu0", a0);
        mdcom_bm_put_kv("cpu1", (c1 - c0) - a0);
    }
    mdcom_bm_puts("\n");
    return c1 != c0 && g_bad == 0;
}

static void main_task(void *arg)
{
    mdcom_t *m = rr_attach("main", MDCOM_AN521RTOS_DOM_CPU0); /* formats */
    mdcom_smemch_t *st;
    void *p;
    uint32_t row;
    int ok = 1, r;
    (void)arg;
    if ((r = mdcom_smemch_open(m, "state", &st)) != 0)
        fw_die("main", "state", r);
    mdcom_smemch_get(st, &p, 0);
    g_state = (volatile uint32_t *)p;
    g_main = xTaskGetCurrentTaskHandle();
    g_q1 = xQueueCreate(1, TMX_MSG);
    g_q2 = xQueueCreate(1, TMX_MSG);
    g_mx = xSemaphoreCreateMutex();
    if (!g_q1 || !g_q2 || !g_mx)
        fw_die("main", "queues", -ENOMEM);
    mdcom_bm_puts("READY\n");
    mdcom_an521_start_cpu1(AN521_CPU1_VTOR);
    g_xc = spawn(xc_task, "xc", 0);
    g_qa = spawn(qa_task, "qa", 0);
    (void)spawn(qb_task, "qb", 0);
    g_ma = spawn(m_task, "ma", (void *)0);
    g_mb = spawn(m_task, "mb", (void *)1);
    for (row = 0; row < ROWS; row++)
        ok &= run_row(row);
    mdcom_bm_puts(ok ? "DONE PASS\n" : "DONE FAIL\n");
    mdcom_bm_exit(ok ? 0 : 1);
}

int main(void)
{
    rr_boot("mdcom-fw-an521-tmx-frt-cpu0");
    if (xTaskCreate(main_task, "main", STACK_WORDS, 0, PRIO_MAIN, 0) != pdPASS)
        fw_die("main", "xTaskCreate", -ENOMEM);
    vTaskStartScheduler();
    mdcom_bm_puts("vTaskStartScheduler returned\n");
    return 1;
}
