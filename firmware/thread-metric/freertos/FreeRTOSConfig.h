/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FreeRTOSConfig.h - the kernel configuration of the Thread-Metric images
 * (mps2-an386 under QEMU: Cortex-M4 at 25 MHz, FreeRTOS port GCC_ARM_CM3,
 * soft float). A benchmark configuration, not mdcom's: no asserts, no stack
 * or heap hooks, no trace (the kernel's defaults), and:
 *
 *   configUSE_TIME_SLICING 0   the cooperative test: equal-priority tasks
 *                              switch only when they relinquish (ThreadX's
 *                              porting layer creates its threads with
 *                              TX_NO_TIME_SLICE)
 *   configTICK_RATE_HZ 100     ThreadX's porting layer sleeps in 100-Hz
 *                              ticks (TM_THREADX_TICKS_PER_SECOND): the same
 *                              tick, the same tick overhead, on both kernels
 *   configMAX_PRIORITIES 32    Thread-Metric's priorities 1..31 map to
 *                              FreeRTOS's 31..1 (tm_porting_layer_freertos.c)
 */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#define configCPU_CLOCK_HZ 25000000u
#define configTICK_RATE_HZ 100u
#define configUSE_PREEMPTION 1
#define configUSE_TIME_SLICING 0
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 1
#define configUSE_TICKLESS_IDLE 0
#define configMAX_PRIORITIES 32
#define configMINIMAL_STACK_SIZE 128
#define configMAX_TASK_NAME_LEN 8
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS
#define configIDLE_SHOULD_YIELD 1
#define configQUEUE_REGISTRY_SIZE 0
#define configENABLE_FPU 0
#define configENABLE_MPU 0
#define configENABLE_TRUSTZONE 0

#define configUSE_TASK_NOTIFICATIONS 1
#define configUSE_MUTEXES 0
#define configUSE_RECURSIVE_MUTEXES 0
#define configUSE_COUNTING_SEMAPHORES 1
#define configUSE_QUEUE_SETS 0
#define configUSE_APPLICATION_TASK_TAG 0
#define configUSE_NEWLIB_REENTRANT 0
#define configUSE_CO_ROUTINES 0
#define configUSE_TIMERS 0

/* tasks, queue and semaphore from the heap (heap_4, FREERTOS_HEAP), and the
 * memory test's 128-byte blocks too (pvPortMalloc: FreeRTOS has no pool) */
#define configSUPPORT_STATIC_ALLOCATION 0
#define configSUPPORT_DYNAMIC_ALLOCATION 1
#define configTOTAL_HEAP_SIZE (48u * 1024u)
#define configAPPLICATION_ALLOCATED_HEAP 0

#define configUSE_IDLE_HOOK 0
#define configUSE_TICK_HOOK 0
#define configCHECK_FOR_STACK_OVERFLOW 0
#define configUSE_MALLOC_FAILED_HOOK 0
#define configUSE_TRACE_FACILITY 0
#define configGENERATE_RUN_TIME_STATS 0
#define configUSE_STATS_FORMATTING_FUNCTIONS 0

/* Cortex-M priorities (upper bits significant): the kernel at the lowest;
 * the test interrupt (tm_board.c, NVIC priority 0x40) calls FromISR
 * functions, so it is at or below configMAX_SYSCALL_INTERRUPT_PRIORITY */
#define configKERNEL_INTERRUPT_PRIORITY 0xffu
#define configMAX_SYSCALL_INTERRUPT_PRIORITY 0x20u

#define INCLUDE_vTaskPrioritySet 0
#define INCLUDE_uxTaskPriorityGet 0
#define INCLUDE_vTaskDelete 0
#define INCLUDE_vTaskSuspend 1       /* tm_thread_suspend, tm_thread_resume */
#define INCLUDE_xTaskResumeFromISR 1 /* the interrupt preemption test */
#define INCLUDE_vTaskDelayUntil 0
#define INCLUDE_vTaskDelay 1 /* tm_thread_sleep */
/* ports/freertos (linked for the bare-metal runtime's clock, unused here)
 * requires these two: they add functions only, garbage-collected if unused */
#define INCLUDE_xTaskGetSchedulerState 1
#define INCLUDE_xTaskGetCurrentTaskHandle 1
#define INCLUDE_uxTaskGetStackHighWaterMark 0
#define INCLUDE_xTaskGetIdleTaskHandle 0
#define INCLUDE_eTaskGetState 0
#define INCLUDE_xTimerPendFunctionCall 0

/* The vector table of ports/baremetal/startup.c uses the CMSIS handler names. */
#define vPortSVCHandler SVC_Handler
#define xPortPendSVHandler PendSV_Handler
#define xPortSysTickHandler SysTick_Handler

#endif /* FREERTOS_CONFIG_H */
