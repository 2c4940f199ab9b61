/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_threadx.c - mdcom-fw-threadx: Eclipse ThreadX on the Cortex-M4 of QEMU
 * mps2-an386 against Linux processes (tests/qemu/test_qemu_freertos.cpp as
 * qemu_threadx_e2e, with the same peers and protocol as qemu_freertos_e2e).
 * The checks and the traffic are firmware/common/rtos_e2e.c's; this file
 * gives them ThreadX (mdcom_fw/rtos_e2e.h) and ports/threadx as the port
 * under test:
 *
 *   threads   each from a byte pool (control block, stack), ThreadX
 *             priority 16 - the body's (higher runs first there), time
 *             slices of one tick between equals; threads that ended are
 *             deleted and their memory returned at the next spawn (the
 *             FreeRTOS idle task does that there)
 *   idle      ThreadX has no idle hook: a thread at the lowest priority
 *             counts its loops (it runs only when no other thread can)
 */
#include <string.h>

#include "tx_api.h"

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_fw/rtos_e2e.h"
#include "mdcom_threadx.h"

#define POOL_BYTES (256u * 1024u)
#define IDLE_STACK 512u
#define PRIO_IDLE (TX_MAX_PRIORITIES - 1u)

#define FW_STR_(x) #x
#define FW_STR(x) FW_STR_(x)
/* the image's name: FW_IMAGE for the responder image built from this file
 * too (firmware/common/rtos_resp.c) */
#ifndef FW_IMAGE
#define FW_IMAGE "mdcom-fw-threadx"
#endif
const char e2e_image[] = FW_IMAGE;
const char e2e_kernel[] = "ThreadX " FW_STR(THREADX_MAJOR_VERSION) "." FW_STR(
    THREADX_MINOR_VERSION) "." FW_STR(THREADX_PATCH_VERSION);

typedef struct fw_thread {
    TX_THREAD tcb; /* first: a TX_THREAD * is a fw_thread * */
    e2e_entry fn;
    void *arg;
    struct fw_thread *next; /* every thread spawned and not yet deleted */
} fw_thread;

static TX_BYTE_POOL g_pool;
static UCHAR g_pool_mem[POOL_BYTES] __attribute__((aligned(8)));
static fw_thread *g_threads;
static TX_MUTEX g_threads_lock;
static TX_THREAD g_idle;
static UCHAR g_idle_stack[IDLE_STACK] __attribute__((aligned(8)));

static void fault(const char *what, const char *name)
{
    mdcom_bm_puts("FAULT ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(name ? name : "");
    mdcom_bm_puts("\n");
    mdcom_bm_exit(4);
}

static VOID stack_error(TX_THREAD *t) { fault("stack overflow in thread ", t->tx_thread_name); }

static VOID idle_entry(ULONG arg)
{
    (void)arg;
    for (;;)
        e2e_idle_runs++;
}

static VOID thread_entry(ULONG arg)
{
    fw_thread *t = (fw_thread *)(uintptr_t)arg;
    t->fn(t->arg); /* returning completes the thread (its identity dies) */
}

/* Delete the threads that ended, returning their memory; not the caller. */
static void reap(void)
{
    fw_thread **pp = &g_threads, *t;
    TX_THREAD *me = tx_thread_identify();
    while ((t = *pp) != 0) {
        UINT st = t->tcb.tx_thread_state;
        if (&t->tcb != me && (st == TX_COMPLETED || st == TX_TERMINATED)) {
            *pp = t->next;
            (void)tx_thread_delete(&t->tcb);
            (void)tx_byte_release(t->tcb.tx_thread_stack_start);
            (void)tx_byte_release(t);
        } else {
            pp = &t->next;
        }
    }
}

e2e_thread e2e_spawn(e2e_entry fn, const char *name, uint32_t stack_words, void *arg, uint32_t prio)
{
    fw_thread *t = 0;
    void *stack = 0;
    UINT txp = 16u - prio, r;
    /* no waiting in tx_application_define (nobody else runs then) */
    (void)tx_mutex_get(&g_threads_lock, tx_thread_identify() ? TX_WAIT_FOREVER : TX_NO_WAIT);
    reap();
    if (tx_byte_allocate(&g_pool, (VOID **)&t, sizeof(*t), TX_NO_WAIT) != TX_SUCCESS ||
        tx_byte_allocate(&g_pool, &stack, stack_words * 4u, TX_NO_WAIT) != TX_SUCCESS)
        fault("byte pool exhausted spawning ", name);
    memset(t, 0, sizeof(*t));
    t->fn = fn;
    t->arg = arg;
    t->next = g_threads;
    g_threads = t;
    (void)tx_mutex_put(&g_threads_lock);
    /* auto-started: a thread above the caller's priority runs at once */
    r = tx_thread_create(&t->tcb, (CHAR *)name, thread_entry, (ULONG)(uintptr_t)t, stack,
                         stack_words * 4u, txp, txp, 1, TX_AUTO_START);
    if (r != TX_SUCCESS)
        fault("tx_thread_create failed for ", name);
    return t;
}

void e2e_delay(uint32_t ticks) { (void)tx_thread_sleep(ticks); }
uint32_t e2e_ticks(void) { return (uint32_t)tx_time_get(); }
void e2e_kill(e2e_thread t) { (void)tx_thread_terminate(&((fw_thread *)t)->tcb); }

void e2e_exit(void)
{
    (void)tx_thread_terminate(tx_thread_identify());
    for (;;)
        ;
}

void e2e_park(void)
{
    for (;;)
        (void)tx_thread_suspend(tx_thread_identify());
}

const mdcom_platform *e2e_platform(void) { return mdcom_platform_threadx(); }
uint64_t e2e_now_ns(void) { return mdcom_threadx_now_ns(); }
uint32_t e2e_tick_ns(void) { return mdcom_threadx_tick_ns(); }
int e2e_is_thread_pid(uint32_t pid) { return MDCOM_TX_IS_THREAD_PID(pid); }

void e2e_get_stats(e2e_stats *out) { mdcom_threadx_get_stats(out); }

/* ThreadX calls it from tx_kernel_enter, before the scheduler. */
VOID tx_application_define(VOID *first_unused_memory)
{
    (void)first_unused_memory; /* the pool is a static array: its size is in the map */
    if (tx_byte_pool_create(&g_pool, (CHAR *)"fw", g_pool_mem, sizeof(g_pool_mem)) != TX_SUCCESS ||
        tx_mutex_create(&g_threads_lock, (CHAR *)"threads", TX_NO_INHERIT) != TX_SUCCESS ||
        tx_thread_create(&g_idle, (CHAR *)"idle", idle_entry, 0, g_idle_stack, sizeof(g_idle_stack),
                         PRIO_IDLE, PRIO_IDLE, TX_NO_TIME_SLICE, TX_AUTO_START) != TX_SUCCESS)
        fault("ThreadX start", 0);
#ifdef TX_ENABLE_STACK_CHECKING
    (void)tx_thread_stack_error_notify(stack_error);
#endif
    (void)e2e_spawn(e2e_main, "main", E2E_STACK_MDCOM, 0, E2E_PRIO_MAIN);
}

int main(void)
{
    mdcom_threadx_set_boot_seed(mdcom_bm_boot_token());
    tx_kernel_enter(); /* does not return */
    return 1;
}
