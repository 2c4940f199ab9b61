/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtos_e2e.h - the RTOS test firmware of the QEMU end-to-end tests
 * (qemu_freertos_e2e, qemu_threadx_e2e): one body (firmware/common/
 * rtos_e2e.c: the port checks on target, the local wake-ups, the reap of a
 * dead thread, the traffic threads against the Linux peers of
 * frt_proto.h) over this small interface, which each kernel's image
 * implements (firmware/qemu-freertos/fw_freertos.c,
 * firmware/qemu-threadx/fw_threadx.c) and whose main thread runs
 * e2e_main.
 */
#ifndef MDCOM_FW_RTOS_E2E_H
#define MDCOM_FW_RTOS_E2E_H

#include <stdint.h>

#include "board_hooks.h"
#include "mdcom/platform.h"

#define E2E_PRIO_MAIN 4u      /* priorities 1..7, higher runs first (the image maps them) */
#define E2E_STACK_MDCOM 1024u /* words: mdcom_init and the calls */

typedef void (*e2e_entry)(void *arg);
typedef void *e2e_thread;

/* A thread running fn(arg); dies (mdcom_bm_exit) when it cannot. */
e2e_thread e2e_spawn(e2e_entry fn, const char *name, uint32_t stack_words, void *arg,
                     uint32_t prio);
void e2e_delay(uint32_t ticks); /* sleep ticks ticks */
uint32_t e2e_ticks(void);       /* the kernel's tick count */
/* The calling thread ends (its mdcom identity is dead from then on). */
__attribute__((noreturn)) void e2e_exit(void);
/* The calling thread blocks for ever (alive). */
__attribute__((noreturn)) void e2e_park(void);
/* Another thread ends (deleted, terminated), whatever it was doing. */
void e2e_kill(e2e_thread t);

/* The port under test. */
const mdcom_platform *e2e_platform(void);
uint64_t e2e_now_ns(void);
uint32_t e2e_tick_ns(void);
int e2e_is_thread_pid(uint32_t pid);

/* The port's doorbell statistics (ports/baremetal/board_hooks.h; the
 * fields of mdcom_freertos_stats too). */
typedef mdcom_bm_rtos_stats e2e_stats;
void e2e_get_stats(e2e_stats *out);

/* What the banner says: the image's name and the kernel's. */
extern const char e2e_image[], e2e_kernel[];
/* Runs of the idle task (its hook) or of a lowest-priority counting thread. */
extern volatile uint32_t e2e_idle_runs;

/* The main thread's body (priority E2E_PRIO_MAIN, E2E_STACK_MDCOM words):
 * ends the image with its verdict. */
void e2e_main(void *arg);

#endif /* MDCOM_FW_RTOS_E2E_H */
