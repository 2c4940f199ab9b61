/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_fw/apicost.h - the harness of the API-cost images (mdcom-fw-apicost
 * on bare metal, mdcom-fw-<kernel>-apicost in an RTOS task): one call per
 * sample between two reads of a counter of the board, run under QEMU with
 * -icount shift=N, so that the counter counts instructions. The body is
 * firmware/common/apicost.c; the method is its header comment.
 *
 * The counter, chosen per image at compile time (the read is inline, in the
 * sample):
 *   FW_APICOST_COUNTER=<address>  a 32-bit free-running up-counter at that
 *                                 address, FW_APICOST_COUNTER_HZ (the RTOS
 *                                 images: the MPS2 FPGAIO COUNTER, 25 MHz;
 *                                 the kernel owns SysTick for its tick)
 *   (neither)                     SysTick, free running, no interrupt, at
 *                                 the board's cpu_hz (mdcom_bm_systick_start
 *                                 by the caller)
 *
 * Every sample runs with PRIMASK set (from before the tick-edge spin to
 * after the second read): no interrupt, the RTOS tick included, lands in a
 * sample; one pended meanwhile is taken after it, between two samples.
 */
#ifndef MDCOM_FW_APICOST_H
#define MDCOM_FW_APICOST_H

#include <stdint.h>

#include "cortexm.h"
#include "mdcom/mdcom.h"

#ifndef PHASES     /* the counter's period in instructions at -icount shift=0 (1e9 / its Hz) */
#define PHASES 40u /* 25 MHz (SysTick of mps2-an386, the FPGAIO COUNTER); an521 SysTick: 50 */
#endif
#define APICOST_N (13u * PHASES)
#define APICOST_CYCLES (APICOST_N / PHASES)

#ifdef FW_APICOST_COUNTER
#ifndef FW_APICOST_COUNTER_HZ
#error "FW_APICOST_COUNTER needs FW_APICOST_COUNTER_HZ"
#endif
static inline uint32_t apicost_now(void) { return MDCOM_BM_REG(FW_APICOST_COUNTER); }
#define APICOST_ELAPSED(t0, t1) ((t1) - (t0)) /* up, 32 bits */
#else
static inline uint32_t apicost_now(void) { return mdcom_bm_ticks(); }
#define APICOST_ELAPSED(t0, t1) (((t0) - (t1)) & 0xffffffu) /* SysTick: down, 24 bits */
#endif

extern uint32_t apicost_samples[APICOST_N];

#ifdef FW_APICOST_COUNTER
#define APICOST_COUNTER_ADDR ((uintptr_t)(FW_APICOST_COUNTER))
#else
#define APICOST_COUNTER_ADDR ((uintptr_t)0xE000E018u) /* SYST_CVR */
#endif

/* PRIMASK set, then exactly C + 3 (k + 1) instructions after a counter edge
 * (C a constant of this code): the start of sample i sweeps every phase of
 * the counter once per PHASES samples (3 is coprime with 40 and 50), so the
 * mean of a cycle's ticks is the exact instruction count of the sample.
 *
 * Written in assembly because every instruction of it is counted. Under
 * -icount a read of the counter returns floor(n / PHASES) for the n-th
 * instruction (shift 0). The edge spin (ldr, cmp, beq) leaves at the first
 * read past the edge E, at E + L with L in {0, 1, 2} unknown. Three reads
 * one instruction apart, placed PHASES - 2 .. PHASES instructions after
 * that exit, see the next edge from the (2 - L)-th on: L + 1 of them differ
 * from the exit's value. The branches that follow take 7 - L instructions,
 * put every sample at the same distance from E, whatever L was;
 * without them L left a bias of up to +-1 instruction that moved with the
 * length of the code around the sample. */
static inline __attribute__((always_inline)) uint32_t apicost_dither(uint32_t k)
{
    uint32_t pm = mdcom_bm_irq_save();
    uint32_t t, u, a, b, c;
    k += 1u;
    __asm__ __volatile__(
        "ldr %[t], [%[cnt]]\n\t"
        "1: ldr %[u], [%[cnt]]\n\t" /* exit read: E + L            */
        "cmp %[u], %[t]\n\t"
        "beq 1b\n\t"
        ".rept %c[pad]\n\t" /* to E + L + PHASES - 2           */
        "nop\n\t"
        ".endr\n\t"
        "ldr %[a], [%[cnt]]\n\t"
        "ldr %[b], [%[cnt]]\n\t"
        "ldr %[c], [%[cnt]]\n\t"
        "subs %[a], %[a], %[u]\n\t" /* 1 when past the next edge    */
        "it ne\n\t"
        "movne %[a], #1\n\t"
        "subs %[b], %[b], %[u]\n\t"
        "it ne\n\t"
        "movne %[b], #1\n\t"
        "subs %[c], %[c], %[u]\n\t"
        "it ne\n\t"
        "movne %[c], #1\n\t"
        "add %[a], %[a], %[b]\n\t"
        "add %[a], %[a], %[c]\n\t" /* L + 1                       */
        "cmp %[a], #1\n\t"
        "beq 2f\n\t" /* L = 0: 2 so far                              */
        "cmp %[a], #2\n\t"
        "beq 3f\n\t" /* L = 1: 4 so far                              */
        "b 4f\n\t"   /* L = 2 (or a counter that jumped): 5           */
        "2: nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "nop\n\t"
        "b 4f\n\t" /* L = 0: 7                                        */
        "3: nop\n\t"
        "b 4f\n\t" /* L = 1: 6                                        */
        "4:\n\t"
        "5: nop\n\t" /* the sweep: 3 (k + 1)                          */
        "subs %[k], %[k], #1\n\t"
        "bne 5b"
        : [t] "=&r"(t), [u] "=&r"(u), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c), [k] "+r"(k)
        : [cnt] "r"(APICOST_COUNTER_ADDR), [pad] "i"(PHASES - 5u)
        : "cc", "memory");
    return pm;
}

/* Within a loop over i: APICOST_T0(); <the call>; samples[i] = APICOST_T1(); */
#define APICOST_T0()                                                                               \
    uint32_t pm_ = apicost_dither(i % PHASES);                                                     \
    uint32_t t0_ = apicost_now()
#define APICOST_T1() (apicost_t1_(t0_, pm_))
static inline __attribute__((always_inline)) uint32_t apicost_t1_(uint32_t t0, uint32_t pm)
{
    uint32_t d = APICOST_ELAPSED(t0, apicost_now());
    mdcom_bm_irq_restore(pm);
    return d;
}

/* Banner ("<image> on <board>, icount shift N (...)"), the scale from the
 * semihosting command line ("shift=N") and the counter's rate, then the empty
 * measurement (reported as "empty", subtracted from every later row). */
void apicost_begin(const char *image);
/* One "apicost <name> mode .. mean .. sd .. min .. max .. n .." line from
 * apicost_samples. */
void apicost_report(const char *name);
/* r < 0: "apicost: <what>: <error>" and the image exits with 2. */
void apicost_check(const char *what, int r);
/* The mdcom rows: alloc, free, get, enqueue, dequeue, notify, wait_poll_rx,
 * send16, recv16 on tm (an empty FIFO channel of 16-byte blocks or larger,
 * channel index tm_index), smem_get, smem_trylock, smem_unlock on sm
 * (unlocked), sense_fifoch; then the port's doorbell ring (port_ring, for
 * tm_index) and clock (port_now_ns) of mdcom_platform_default(). */
void apicost_mdcom_rows(mdcom_fifoch_t *tm, uint32_t tm_index, mdcom_smemch_t *sm);

/* One row: N samples of `call` (an int expression, checked), `setup` before
 * and `after` after each, outside the sample; i is the sample index. */
#define APICOST_MEASURE(name, setup, call, after)                                                  \
    do {                                                                                           \
        uint32_t i;                                                                                \
        for (i = 0; i < APICOST_N; i++) {                                                          \
            int r_;                                                                                \
            setup;                                                                                 \
            {                                                                                      \
                APICOST_T0();                                                                      \
                r_ = (call);                                                                       \
                apicost_samples[i] = APICOST_T1();                                                 \
            }                                                                                      \
            apicost_check(name, r_);                                                               \
            after;                                                                                 \
        }                                                                                          \
        apicost_report(name);                                                                      \
    } while (0)

#endif
