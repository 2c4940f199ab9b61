/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_freertos.c - the FreeRTOS port of libmdcom (FreeRTOS-Kernel V10.4 or
 * later, single core; Cortex-M for the SysTick refinement of the clock).
 * Board specifics (region, ring, optional hardware lock and cache hooks)
 * come from the bare-metal port's board description (ports/baremetal/board.h).
 *
 *   region    the board's fixed memory, as ports/baremetal
 *   doorbell  wait: the calling task registers in a waiter list (a node on
 *             its own stack), then re-checks the word, then blocks on its
 *             task notification (index MDCOM_FRT_NOTIFY_INDEX) until the
 *             tick that ends the timeout. ring: notify the local tasks that
 *             wait on that word (vTaskNotifyGiveIndexedFromISR with the
 *             kernel's interrupts masked, from a task or an ISR; then a yield
 *             if one of them should run first), then the board's ring to the
 *             other domain. The
 *             doorbell interrupt (mdcom_freertos_doorbell_isr) notifies every
 *             waiting task from the ISR: a wake-up costs an interrupt and a
 *             context switch, not a tick.
 *   lock      the board's hardware semaphore, or the core's portable CAS. Each
 *             task attaches as its own mdcom process (below), so the lock
 *             owner word tells tasks apart exactly as it tells processes
 *             apart: it is safe between tasks with nothing added.
 *   clock     the 64-bit tick count (tick count + overflow count, read
 *             together) refined by SysTick's current value: sub-tick
 *             resolution, never backwards.
 *   cache     the board's hooks, or none
 *   process   one task = one mdcom process: pid MDCOM_FRT_PID_BASE + a slot
 *             of this port's task table, token = an incarnation counter (from
 *             the boot seed). The core's freestanding build has one
 *             operation record per process entry (no thread-local storage),
 *             so tasks must not share an attachment: each calls mdcom_init
 *             (MDCOM_MAX_INSTANCES attachments per image). proc_alive judges
 *             task pids of this image (dead once mdcom_freertos_task_deleted
 *             ran for the task, or the token is of another incarnation);
 *             other pids (Linux, other cores) are "unknown".
 *
 * Lost wake-ups: a ring between the waiter's last check of the word and its
 * block cannot be lost, because the waiter is in the list (and its
 * notification cleared) before it reads the word: a ring after that read
 * finds the node and leaves a notification that the block consumes at once.
 *
 * Waits block only in a task with the scheduler running; elsewhere (before
 * vTaskStartScheduler, with the scheduler suspended, in an interrupt) the
 * wait cannot sleep and returns -EINTR.
 */
#include <errno.h>
#include <stdatomic.h>

#include "FreeRTOS.h"
#include "task.h"

#include "board.h"
#include "board_hooks.h"
#include "mdcom/mdcom.h"
#include "mdcom_freertos.h"

#if !configUSE_TASK_NOTIFICATIONS
#error "ports/freertos needs configUSE_TASK_NOTIFICATIONS 1"
#endif
#if !INCLUDE_xTaskGetCurrentTaskHandle || !INCLUDE_xTaskGetSchedulerState
#error "ports/freertos needs INCLUDE_xTaskGetCurrentTaskHandle and INCLUDE_xTaskGetSchedulerState"
#endif

/* The notification index mdcom blocks on: 1 when the kernel has two or more
 * (index 0 stays the application's), else 0 (then the application must not
 * use notifications of tasks that call mdcom). */
#ifndef MDCOM_FRT_NOTIFY_INDEX
#if configTASK_NOTIFICATION_ARRAY_ENTRIES > 1
#define MDCOM_FRT_NOTIFY_INDEX 1
#else
#define MDCOM_FRT_NOTIFY_INDEX 0
#endif
#endif
#if MDCOM_FRT_NOTIFY_INDEX >= configTASK_NOTIFICATION_ARRAY_ENTRIES
#error "MDCOM_FRT_NOTIFY_INDEX must be below configTASK_NOTIFICATION_ARRAY_ENTRIES"
#endif

/* The SysTick refinement of the clock: Cortex-M with SysTick as the tick
 * source and no tickless idle (which reprograms the reload). */
#ifndef MDCOM_FRT_SYSTICK
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) ||      \
    defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_6M__)
#define MDCOM_FRT_SYSTICK (configUSE_TICKLESS_IDLE == 0)
#else
#define MDCOM_FRT_SYSTICK 0
#endif
#endif
#ifndef configSYSTICK_CLOCK_HZ
#define configSYSTICK_CLOCK_HZ configCPU_CLOCK_HZ
#endif

#define FRT_REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define FRT_SYST_CSR FRT_REG(0xE000E010u)
#define FRT_SYST_RVR FRT_REG(0xE000E014u)
#define FRT_SYST_CVR FRT_REG(0xE000E018u)
#define FRT_SCB_ICSR FRT_REG(0xE000ED04u)
#define FRT_ICSR_PENDSTSET (1u << 26)

_Static_assert(sizeof(TickType_t) == 4,
               "ports/freertos: 32-bit TickType_t (configTICK_TYPE_WIDTH_IN_BITS)");

/* ---------------------------------------------------------------- */
/* Interrupt context and masking                                      */
/* ---------------------------------------------------------------- */

static inline int in_isr(void) { return xPortIsInsideInterrupt() == pdTRUE; }

/* Mask kernel-aware interrupts from a task or an interrupt alike (the
 * FromISR form nests and works in both on Cortex-M: BASEPRI). */
#define FRT_MASK() taskENTER_CRITICAL_FROM_ISR()
#define FRT_UNMASK(s) taskEXIT_CRITICAL_FROM_ISR(s)

/* ---------------------------------------------------------------- */
/* Clock                                                              */
/* ---------------------------------------------------------------- */

#define FRT_NS_PER_S 1000000000ull
#define FRT_TICK_NS ((uint32_t)(FRT_NS_PER_S / configTICK_RATE_HZ))
#define FRT_TICK_EXACT ((FRT_NS_PER_S % configTICK_RATE_HZ) == 0)

static uint64_t g_last_ns; /* the largest value now_ns returned (masked) */

/* The 64-bit tick count (masked by the caller). */
static uint64_t ticks64_masked(void)
{
    TimeOut_t t;
    vTaskInternalSetTimeOutState(&t); /* overflow count and tick count, together */
    return ((uint64_t)(uint32_t)t.xOverflowCount << 32) | t.xTimeOnEntering;
}

static uint64_t ticks64(void)
{
    UBaseType_t s = FRT_MASK();
    uint64_t t = ticks64_masked();
    FRT_UNMASK(s);
    return t;
}

static uint64_t ticks_to_ns(uint64_t t)
{
    if (FRT_TICK_EXACT)
        return t * FRT_TICK_NS;
    return t / configTICK_RATE_HZ * FRT_NS_PER_S +
           t % configTICK_RATE_HZ * FRT_NS_PER_S / configTICK_RATE_HZ;
}

/* The first tick whose start is at or after ns (a wait that ends at that
 * tick never returns before ns). */
static uint64_t ns_to_tick_ceil(uint64_t ns)
{
    if (FRT_TICK_EXACT)
        return ns / FRT_TICK_NS + (ns % FRT_TICK_NS != 0);
    return ns / FRT_NS_PER_S * configTICK_RATE_HZ +
           (ns % FRT_NS_PER_S * configTICK_RATE_HZ + FRT_NS_PER_S - 1) / FRT_NS_PER_S;
}

uint32_t mdcom_freertos_tick_ns(void) { return FRT_TICK_NS; }

uint64_t mdcom_freertos_now_ns(void)
{
    UBaseType_t s = FRT_MASK();
    uint64_t t = ticks64_masked(), ns, sub = 0;
#if MDCOM_FRT_SYSTICK
    if (FRT_SYST_CSR & 1u) {
        uint32_t rvr = FRT_SYST_RVR & 0xffffffu, v = FRT_SYST_CVR;
        /* SysTick wrapped but its interrupt (masked now) has not counted the
         * tick yet: count it here and take the value after the wrap */
        if (FRT_SCB_ICSR & FRT_ICSR_PENDSTSET) {
            v = FRT_SYST_CVR;
            t++;
        }
        if (v > rvr)
            v = rvr;
        /* ns into the tick: counted-down cycles scaled to a tick */
        sub = (uint64_t)(rvr - v) * FRT_TICK_NS / ((uint64_t)rvr + 1u);
    }
#endif
    ns = ticks_to_ns(t) + sub;
    /* never backwards: the tick count can lag SysTick (ticks pended while
     * the scheduler is suspended; an emulator raising the interrupt late) */
    if (ns < g_last_ns)
        ns = g_last_ns;
    else
        g_last_ns = ns;
    FRT_UNMASK(s);
    return ns;
}

/* ---------------------------------------------------------------- */
/* Statistics                                                         */
/* ---------------------------------------------------------------- */

static mdcom_freertos_stats g_st; /* updated masked */

void mdcom_freertos_get_stats(mdcom_freertos_stats *out)
{
    UBaseType_t s = FRT_MASK();
    *out = g_st;
    FRT_UNMASK(s);
}

/* ---------------------------------------------------------------- */
/* Doorbell                                                           */
/* ---------------------------------------------------------------- */

/* A waiting task: on its stack for the duration of the wait, linked into
 * g_waiters (changed and walked masked). */
typedef struct frt_waiter {
    struct frt_waiter *next, *prev;
    TaskHandle_t task;
    mdcom_aword *word;
    uint64_t notified_ns; /* when the first ring / interrupt notified it, 0 not yet */
} frt_waiter;

static frt_waiter *g_waiters;

static void waiter_link(frt_waiter *w)
{
    w->prev = 0;
    w->next = g_waiters;
    if (g_waiters)
        g_waiters->prev = w;
    g_waiters = w;
}

static void waiter_unlink(frt_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else if (g_waiters == w)
        g_waiters = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->next = w->prev = 0;
}

/* Notify the waiters on word (NULL: all of them); masked, from a task or an
 * interrupt alike: the FromISR call only readies the task (no API call that
 * yields inside the masked section); *woken says whether one of them should
 * run before the caller, which then yields once unmasked. */
static void notify_masked(mdcom_aword *word, BaseType_t *woken)
{
    frt_waiter *w;
    uint64_t now = 0;
    for (w = g_waiters; w; w = w->next) {
        if (word && w->word != word)
            continue;
        if (!w->notified_ns) {
            if (!now)
                now = mdcom_freertos_now_ns();
            w->notified_ns = now;
        }
        vTaskNotifyGiveIndexedFromISR(w->task, MDCOM_FRT_NOTIFY_INDEX, woken);
    }
}

void mdcom_freertos_doorbell_isr(void)
{
    BaseType_t woken = pdFALSE;
    UBaseType_t s = FRT_MASK();
    g_st.doorbells++;
    notify_masked(0, &woken); /* the peer's ring names no word: everyone checks */
    FRT_UNMASK(s);
    portYIELD_FROM_ISR(woken);
}

static int frt_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    frt_waiter w;
    uint64_t end_tick = 0;
    int r = 0, slept = 0;
    (void)ctx;
    if (in_isr() || xTaskGetSchedulerState() != taskSCHEDULER_RUNNING)
        return -EINTR; /* cannot block here */
    if (timeout_ns >= 0)
        end_tick = ns_to_tick_ceil(mdcom_freertos_now_ns() + (uint64_t)timeout_ns);
    w.task = xTaskGetCurrentTaskHandle();
    w.word = word;
    w.notified_ns = 0;
    taskENTER_CRITICAL();
    g_st.waits++;
    /* a notification left from an earlier ring is stale now: the word is
     * checked below, after we are in the list */
    (void)xTaskNotifyStateClearIndexed(0, MDCOM_FRT_NOTIFY_INDEX);
    (void)ulTaskNotifyValueClearIndexed(0, MDCOM_FRT_NOTIFY_INDEX, 0xffffffffu);
    waiter_link(&w);
    taskEXIT_CRITICAL();
    /* acquire: the caller re-checks its condition after we return */
    while (atomic_load_explicit(word, memory_order_acquire) == expected) {
        TickType_t dt = portMAX_DELAY;
        if (timeout_ns >= 0) {
            uint64_t now = ticks64();
            if (now >= end_tick) {
                r = -ETIMEDOUT;
                break;
            }
            /* the kernel wakes us when the tick count reaches now + dt */
            dt = end_tick - now >= (uint64_t)portMAX_DELAY ? portMAX_DELAY - 1u
                                                           : (TickType_t)(end_tick - now);
        }
        slept = 1;
        if (ulTaskNotifyTakeIndexed(MDCOM_FRT_NOTIFY_INDEX, pdTRUE, dt) != 0)
            break; /* rung: the caller re-checks everything */
    }
    taskENTER_CRITICAL();
    waiter_unlink(&w);
    if (slept)
        g_st.sleeps++;
    if (r == -ETIMEDOUT)
        g_st.timeouts++;
    else if (slept && w.notified_ns) {
        uint64_t lat = mdcom_freertos_now_ns() - w.notified_ns;
        g_st.woken++;
        g_st.wake_n++;
        g_st.wake_sum_ns += lat;
        if (lat > g_st.wake_max_ns)
            g_st.wake_max_ns = lat > 0xffffffffu ? 0xffffffffu : (uint32_t)lat;
    }
    taskEXIT_CRITICAL();
    return r;
}

static void frt_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    BaseType_t woken = pdFALSE;
    UBaseType_t s;
    int isr = in_isr();
    (void)ctx;
    s = FRT_MASK();
    if (isr)
        g_st.rings_isr++;
    else
        g_st.rings_task++;
    notify_masked(word, &woken);
    FRT_UNMASK(s);
    mdcom_board_desc.ring(chan);
    if (isr)
        portYIELD_FROM_ISR(woken);
    else if (woken && xTaskGetSchedulerState() == taskSCHEDULER_RUNNING)
        taskYIELD(); /* a woken task of higher priority runs now, not at the next tick */
}

/* ---------------------------------------------------------------- */
/* Process identity: one task, one process                            */
/* ---------------------------------------------------------------- */

static struct frt_id {
    TaskHandle_t task; /* NULL: free, or its task was deleted */
    uint32_t token;    /* the incarnation of the slot's last task */
} g_ids[MDCOM_FRT_MAX_TASKS];
static uint32_t g_seed = 1, g_incarn;

void mdcom_freertos_set_boot_seed(uint32_t seed) { g_seed = seed; }

static uint32_t next_token(void)
{
    /* seed << 12 + incarnation: tokens of two boots differ for the first
     * 4096 incarnations of each */
    uint32_t t;
    do
        t = (g_seed << 12) + ++g_incarn;
    while (t == 0 || t == MDCOM_TOKEN_ANY);
    return t;
}

static int frt_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    TaskHandle_t me;
    uint32_t i, free_slot = MDCOM_FRT_MAX_TASKS;
    (void)ctx;
    if (in_isr() || xTaskGetSchedulerState() == taskSCHEDULER_NOT_STARTED)
        return -EPERM; /* identities belong to tasks */
    me = xTaskGetCurrentTaskHandle();
    taskENTER_CRITICAL();
    for (i = 0; i < MDCOM_FRT_MAX_TASKS; i++) {
        if (g_ids[i].task == me)
            break;
        /* prefer a slot never used: a deleted task's pid stays dead longer */
        if (!g_ids[i].task &&
            (free_slot == MDCOM_FRT_MAX_TASKS || (!g_ids[i].token && g_ids[free_slot].token)))
            free_slot = i;
    }
    if (i == MDCOM_FRT_MAX_TASKS && free_slot < MDCOM_FRT_MAX_TASKS) {
        i = free_slot;
        g_ids[i].task = me;
        g_ids[i].token = next_token();
    }
    if (i < MDCOM_FRT_MAX_TASKS) {
        *pid = MDCOM_FRT_PID_BASE + i + 1u;
        *token = g_ids[i].token;
    }
    taskEXIT_CRITICAL();
    return i < MDCOM_FRT_MAX_TASKS ? 0 : -MDCOM_EUSERS;
}

static int frt_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    const struct frt_id *e;
    int alive;
    UBaseType_t s;
    (void)ctx;
    if (!MDCOM_FRT_IS_TASK_PID(pid))
        return -ENOSYS; /* Linux, another core: unknown here, counted alive */
    e = &g_ids[(pid & 0xffffu) - 1u];
    s = FRT_MASK();
    alive = e->task != 0 && (token == MDCOM_TOKEN_ANY || token == e->token);
    FRT_UNMASK(s);
    return alive;
}

void mdcom_freertos_task_deleted(void *task)
{
    uint32_t i;
    frt_waiter *w, *next;
    UBaseType_t s;
    if (!task)
        task = xTaskGetCurrentTaskHandle(); /* vTaskDelete(NULL) */
    s = FRT_MASK();
    for (i = 0; i < MDCOM_FRT_MAX_TASKS; i++)
        if (g_ids[i].task == (TaskHandle_t)task)
            g_ids[i].task = 0; /* the token stays: (pid, token) is dead now */
    /* a task deleted while it waited: its node (on the stack being freed)
     * must leave the list */
    for (w = g_waiters; w; w = next) {
        next = w->next;
        if (w->task == (TaskHandle_t)task)
            waiter_unlink(w);
    }
    FRT_UNMASK(s);
}

/* ---------------------------------------------------------------- */

/* the doorbell and identity above; region, lock, cache, clock: the board's
 * (board_hooks.c; the clock is mdcom_bm_now_ns of bm_runtime.c) */
static const mdcom_bm_port_ops g_ops = {"freertos", frt_wait, frt_ring, frt_proc_self,
                                        frt_proc_alive};
static mdcom_platform g_plat;

const mdcom_platform *mdcom_platform_freertos(void) { return mdcom_bm_platform(&g_plat, &g_ops); }
