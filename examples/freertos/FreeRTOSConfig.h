/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FreeRTOSConfig.h - the kernel configuration of examples/freertos (copy it)
 * (mps2-an386 under QEMU: Cortex-M4 at 25 MHz, FreeRTOS port GCC_ARM_CM3 with
 * soft float, or GCC_ARM_CM4F with -mfloat-abi=softfp). What mdcom's FreeRTOS
 * port needs is marked "mdcom:"; the rest is an ordinary configuration (a
 * CubeMX / MCUXpresso project keeps its own and adds the "mdcom:" lines).
 */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#define configCPU_CLOCK_HZ 25000000u
#define configTICK_RATE_HZ 1000u
#define configUSE_PREEMPTION 1
#define configUSE_TIME_SLICING 1
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 0
#define configUSE_TICKLESS_IDLE 0 /* mdcom: the clock refines ticks with SysTick */
#define configMAX_PRIORITIES 8
#define configMINIMAL_STACK_SIZE 256
#define configMAX_TASK_NAME_LEN 12
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS /* mdcom: 32-bit ticks */
#define configIDLE_SHOULD_YIELD 1
#define configTASK_NOTIFICATION_ARRAY_ENTRIES 2 /* mdcom: index 1 is mdcom's */
#define configQUEUE_REGISTRY_SIZE 0
#define configENABLE_FPU 0
#define configENABLE_MPU 0
#define configENABLE_TRUSTZONE 0

#define configUSE_TASK_NOTIFICATIONS 1 /* mdcom: waits block on notifications */
#define configUSE_MUTEXES 1
#define configUSE_RECURSIVE_MUTEXES 0
#define configUSE_COUNTING_SEMAPHORES 1
#define configUSE_QUEUE_SETS 0
#define configUSE_APPLICATION_TASK_TAG 0
#define configUSE_NEWLIB_REENTRANT 0
#define configUSE_CO_ROUTINES 0

#define configUSE_TIMERS 0
/* (no software timers in this example) */
#define configTIMER_TASK_PRIORITY (configMAX_PRIORITIES - 1)
#define configTIMER_QUEUE_LENGTH 8
#define configTIMER_TASK_STACK_DEPTH 512

#define configSUPPORT_STATIC_ALLOCATION 0
#define configSUPPORT_DYNAMIC_ALLOCATION 1
#define configTOTAL_HEAP_SIZE (32u * 1024u)
#define configAPPLICATION_ALLOCATED_HEAP 0

#define configUSE_IDLE_HOOK 0
#define configUSE_TICK_HOOK 0
#define configCHECK_FOR_STACK_OVERFLOW 2
#define configUSE_MALLOC_FAILED_HOOK 1
#define configUSE_TRACE_FACILITY 0
#define configGENERATE_RUN_TIME_STATS 0
#define configUSE_STATS_FORMATTING_FUNCTIONS 0

/* Cortex-M priorities (upper bits significant): the kernel at the lowest;
 * interrupts that call FromISR functions (mdcom's doorbell: NVIC priority
 * 0x40 on mps2-an386) at or below configMAX_SYSCALL_INTERRUPT_PRIORITY */
#define configKERNEL_INTERRUPT_PRIORITY 0xffu
#define configMAX_SYSCALL_INTERRUPT_PRIORITY 0x20u

#define INCLUDE_vTaskPrioritySet 1
#define INCLUDE_uxTaskPriorityGet 1
#define INCLUDE_vTaskDelete 1
#define INCLUDE_vTaskSuspend 1 /* portMAX_DELAY blocks for ever (MDCOM_FOREVER) */
#define INCLUDE_vTaskDelayUntil 1
#define INCLUDE_vTaskDelay 1
#define INCLUDE_xTaskGetSchedulerState 1    /* mdcom */
#define INCLUDE_xTaskGetCurrentTaskHandle 1 /* mdcom */
#define INCLUDE_uxTaskGetStackHighWaterMark 1
#define INCLUDE_xTaskGetIdleTaskHandle 0
#define INCLUDE_eTaskGetState 1
#define INCLUDE_xTimerPendFunctionCall 0

/* The vector table of ports/baremetal/startup.c uses the CMSIS handler names. */
#define vPortSVCHandler SVC_Handler
#define xPortPendSVHandler PendSV_Handler
#define xPortSysTickHandler SysTick_Handler

#ifndef __ASSEMBLER__
/* mdcom: a deleted task's mdcom identity is dead at once (its peers reap
 * what it held; ports/freertos/mdcom_freertos.h). */
void mdcom_freertos_task_deleted(void *task);
#define traceTASK_DELETE(pxTCB) mdcom_freertos_task_deleted((void *)(pxTCB))

void app_assert_failed(const char *file, int line);
#define configASSERT(x)                                                                            \
    do {                                                                                           \
        if (!(x))                                                                                  \
            app_assert_failed(__FILE__, __LINE__);                                                 \
    } while (0)
#endif

#endif /* FREERTOS_CONFIG_H */
