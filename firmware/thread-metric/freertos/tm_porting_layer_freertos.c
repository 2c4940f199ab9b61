/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_porting_layer_freertos.c - the Thread-Metric porting layer (tm_api.h)
 * over FreeRTOS, shaped like ThreadX's tm_porting_layer_threadx.c: the same
 * object counts, stack size and queue depth, threads created suspended, no
 * waiting in queue, semaphore and pool calls.
 *
 *   priorities  Thread-Metric's 1 (highest) .. 31 are FreeRTOS's 31 .. 1
 *   threads     xTaskCreate then vTaskSuspend (ThreadX: TX_DONT_START);
 *               resume and suspend are vTaskResume / vTaskSuspend, from an
 *               interrupt xTaskResumeFromISR
 *   queue       12 messages of 16 bytes (ThreadX: 200 bytes of TX_4_ULONG)
 *   semaphore   counting, initial count 1 (ThreadX: tx_semaphore_create(.., 1));
 *               put from an interrupt: xSemaphoreGiveFromISR
 *   pool        FreeRTOS has no block pool: 128-byte blocks from the kernel's
 *               heap (pvPortMalloc / vPortFree, heap_4), at most as many as
 *               ThreadX's 2048-byte pool holds
 *   sleep       vTaskDelay of seconds * configTICK_RATE_HZ ticks
 */
#include <stdint.h>

#include "FreeRTOS.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"

#include "tm_api.h"
#ifdef TM_TRAFFIC
#include "tm_traffic.h" /* the traffic images: mdcom's receiver task */
#endif

#define TM_FRT_MAX_THREADS 10
#define TM_FRT_MAX_QUEUES 1
#define TM_FRT_MAX_SEMAPHORES 1
#define TM_FRT_MAX_POOLS 1
#define TM_FRT_STACK_BYTES 2096      /* TM_THREADX_THREAD_STACK_SIZE */
#define TM_FRT_QUEUE_MSGS (200 / 16) /* TM_THREADX_QUEUE_SIZE of 16-byte messages */
#define TM_FRT_BLOCK 128
#define TM_FRT_POOL_BLOCKS (2048 / (TM_FRT_BLOCK + sizeof(void *))) /* ThreadX's pool */

static TaskHandle_t tm_thread[TM_FRT_MAX_THREADS];
static void (*tm_thread_entry_fn[TM_FRT_MAX_THREADS])(void);
static QueueHandle_t tm_queue[TM_FRT_MAX_QUEUES];
static SemaphoreHandle_t tm_sem[TM_FRT_MAX_SEMAPHORES];
static unsigned tm_pool_used[TM_FRT_MAX_POOLS];
static int tm_pool_made[TM_FRT_MAX_POOLS];

int main(void);
void tm_main(void); /* the test's (each tm_*_test.c has one) */

static void tm_frt_entry(void *arg) { tm_thread_entry_fn[(uintptr_t)arg](); }

int main(void)
{
    tm_board_init();
#ifdef TM_TRAFFIC
    tm_traffic_start();
#endif
    tm_main(); /* tm_initialize: the test's threads, then the scheduler */
    return 1;  /* the scheduler did not start: no memory for its tasks */
}

/* The test's initialization runs in a task above every test thread, with
 * the scheduler running: FreeRTOS suspends and resumes tasks consistently
 * only then (before the scheduler starts, suspending the task
 * pxCurrentTCB names leaves it there). It then suspends itself for good,
 * as ThreadX's tx_application_define returns before its threads run. */
static void (*tm_init_fn)(void);

static void tm_frt_init_task(void *arg)
{
    (void)arg;
    tm_init_fn();
    vTaskSuspend(NULL);
}

void tm_initialize(void (*test_initialization_function)(void))
{
    tm_init_fn = test_initialization_function;
    if (xTaskCreate(tm_frt_init_task, "tminit", 256, NULL, configMAX_PRIORITIES - 1, NULL) !=
        pdPASS)
        return;
    vTaskStartScheduler();
}

int tm_thread_create(int thread_id, int priority, void (*entry_function)(void))
{
    if (thread_id < 0 || thread_id >= TM_FRT_MAX_THREADS || priority < 1 ||
        priority >= configMAX_PRIORITIES)
        return TM_ERROR;
    tm_thread_entry_fn[thread_id] = entry_function;
    /* suspended before it can run (the scheduler is held meanwhile) */
    vTaskSuspendAll();
    if (xTaskCreate(tm_frt_entry, "tm", TM_FRT_STACK_BYTES / sizeof(StackType_t),
                    (void *)(uintptr_t)thread_id, (UBaseType_t)(configMAX_PRIORITIES - priority),
                    &tm_thread[thread_id]) != pdPASS) {
        (void)xTaskResumeAll();
        return TM_ERROR;
    }
    vTaskSuspend(tm_thread[thread_id]);
    (void)xTaskResumeAll();
    return TM_SUCCESS;
}

int tm_thread_resume(int thread_id)
{
    if (xPortIsInsideInterrupt()) {
        portYIELD_FROM_ISR(xTaskResumeFromISR(tm_thread[thread_id]));
    } else {
        vTaskResume(tm_thread[thread_id]);
    }
    return TM_SUCCESS;
}

int tm_thread_suspend(int thread_id)
{
    vTaskSuspend(tm_thread[thread_id]);
    return TM_SUCCESS;
}

void tm_thread_relinquish(void) { taskYIELD(); }

void tm_thread_sleep(int seconds) { vTaskDelay((TickType_t)seconds * configTICK_RATE_HZ); }

int tm_queue_create(int queue_id)
{
    tm_queue[queue_id] = xQueueCreate(TM_FRT_QUEUE_MSGS, 16);
    return tm_queue[queue_id] ? TM_SUCCESS : TM_ERROR;
}

int tm_queue_send(int queue_id, unsigned long *message_ptr)
{
    return xQueueSend(tm_queue[queue_id], message_ptr, 0) == pdPASS ? TM_SUCCESS : TM_ERROR;
}

int tm_queue_receive(int queue_id, unsigned long *message_ptr)
{
    return xQueueReceive(tm_queue[queue_id], message_ptr, 0) == pdPASS ? TM_SUCCESS : TM_ERROR;
}

int tm_semaphore_create(int semaphore_id)
{
    tm_sem[semaphore_id] = xSemaphoreCreateCounting(~(UBaseType_t)0, 1);
    return tm_sem[semaphore_id] ? TM_SUCCESS : TM_ERROR;
}

int tm_semaphore_get(int semaphore_id)
{
    return xSemaphoreTake(tm_sem[semaphore_id], 0) == pdPASS ? TM_SUCCESS : TM_ERROR;
}

int tm_semaphore_put(int semaphore_id)
{
    BaseType_t ok, woken = pdFALSE;
    if (!xPortIsInsideInterrupt())
        return xSemaphoreGive(tm_sem[semaphore_id]) == pdPASS ? TM_SUCCESS : TM_ERROR;
    ok = xSemaphoreGiveFromISR(tm_sem[semaphore_id], &woken);
    portYIELD_FROM_ISR(woken);
    return ok == pdPASS ? TM_SUCCESS : TM_ERROR;
}

int tm_memory_pool_create(int pool_id)
{
    tm_pool_made[pool_id] = 1;
    tm_pool_used[pool_id] = 0;
    return TM_SUCCESS;
}

int tm_memory_pool_allocate(int pool_id, unsigned char **memory_ptr)
{
    if (!tm_pool_made[pool_id] || tm_pool_used[pool_id] >= TM_FRT_POOL_BLOCKS)
        return TM_ERROR;
    *memory_ptr = pvPortMalloc(TM_FRT_BLOCK);
    if (!*memory_ptr)
        return TM_ERROR;
    tm_pool_used[pool_id]++;
    return TM_SUCCESS;
}

int tm_memory_pool_deallocate(int pool_id, unsigned char *memory_ptr)
{
    if (!memory_ptr || !tm_pool_used[pool_id])
        return TM_ERROR;
    vPortFree(memory_ptr);
    tm_pool_used[pool_id]--;
    return TM_SUCCESS;
}
