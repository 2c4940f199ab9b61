/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_baremetal.c - the bare-metal Cortex-M port of libmdcom (no OS, no libc
 * beyond mem*). Board specifics come from the board file (board.h).
 *
 *   region    the board's fixed memory (mdcom_board_desc.region_base/size);
 *             "create" only checks the size: the master formats it
 *   doorbell  wait: sleep in WFI until the word changes, the peer's doorbell
 *             interrupt arrives, or the timeout (SysTick wakes WFI every
 *             period). ring: the board's ring (UART byte, IPCC, MU)
 *   lock      the board's hardware semaphore, or the core's portable lock
 *   clock     SysTick extended to 64-bit nanoseconds (cortexm.c)
 *   cache     the board's hooks, or none (Cortex-M4: no data cache)
 *   process   one image = one process: pid MDCOM_BM_PID (bit 31 set, never a
 *             Linux pid), token = a boot counter kept in RAM that survives
 *             a warm reset (.noinit), so the image after a reset sees the
 *             slot of the image before it as dead and re-formats the region
 *             (generation + 1) instead of joining it. Processes of other
 *             domains (Linux) cannot be checked from here: "unknown".
 *
 * The lost wake-up: the doorbell interrupt may fire between our last check
 * and WFI. The wait masks interrupts (PRIMASK) around the final check and
 * WFI: a pending interrupt still ends WFI, and runs when PRIMASK is cleared,
 * so a ring can never fall between the check and the sleep.
 */
#include <errno.h>
#include <stdatomic.h>

#include "board.h"
#include "board_hooks.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"

static volatile uint32_t g_db_pending; /* set by the doorbell ISR */
static volatile uint32_t g_db_count;

void mdcom_bm_doorbell_raise(void)
{
    g_db_pending = 1;
    g_db_count++;
}

uint32_t mdcom_bm_doorbell_count(void) { return g_db_count; }

static int bm_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    /* the clock (SysTick: MMIO reads, slow under emulation) is read once per
     * sleep, not also on entry: end is set by the first sleep */
    uint64_t end = 0, now;
    (void)ctx;
    for (;;) {
        uint32_t pm = mdcom_bm_irq_save();
        /* acquire: the caller re-checks its condition after we return */
        if (atomic_load_explicit(word, memory_order_acquire) != expected || g_db_pending) {
            g_db_pending = 0; /* consumed: the caller re-checks everything */
            mdcom_bm_irq_restore(pm);
            return 0;
        }
        if (timeout_ns == 0) {
            mdcom_bm_irq_restore(pm);
            return -ETIMEDOUT;
        }
        now = mdcom_bm_now_ns();
        if (!end)
            end = timeout_ns < 0 ? UINT64_MAX : now + (uint64_t)timeout_ns;
        else if (now >= end) {
            mdcom_bm_irq_restore(pm);
            return -ETIMEDOUT;
        }
        /* masked WFI: a doorbell (or SysTick) interrupt that became pending
         * after the checks above still wakes us, and runs at restore */
        mdcom_bm_wfi();
        mdcom_bm_irq_restore(pm);
    }
}

static void bm_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    (void)ctx;
    (void)word;
    mdcom_board_desc.ring(chan);
}

static uint32_t bm_pid(void)
{
    return mdcom_board_desc.pid ? mdcom_board_desc.pid() : MDCOM_BM_PID;
}

static int bm_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    (void)ctx;
    *pid = bm_pid();
    *token = mdcom_bm_boot_token();
    return 0;
}

static int bm_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    (void)ctx;
    if (pid == bm_pid()) /* this image: alive only as this boot */
        return token == mdcom_bm_boot_token();
    return -ENOSYS; /* a process of another OS: unknown, counted as alive */
}

/* the doorbell and identity above; region, lock, cache, clock: the board's
 * (board_hooks.c) */
static const mdcom_bm_port_ops g_ops = {"baremetal", bm_wait, bm_ring, bm_proc_self, bm_proc_alive};
static mdcom_platform g_plat;

const mdcom_platform *mdcom_platform_baremetal(void) { return mdcom_bm_platform(&g_plat, &g_ops); }
