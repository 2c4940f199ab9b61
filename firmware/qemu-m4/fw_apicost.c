/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_apicost.c - mdcom-fw-apicost: the cost of each API call on the
 * Cortex-M4, in SysTick ticks. Run under QEMU with -icount shift=N: the
 * virtual clock then advances 2^N ns per instruction and SysTick (25 MHz,
 * 40 ns per tick) counts instructions * 2^N / 40, so the image prints
 * instructions = ticks * 40 / 2^N (the shift is given on the semihosting
 * command line or defaults to 0; see tools/qemu-m4). The empty measurement
 * (two SysTick reads) is subtracted.
 *
 * One tick is 40 instructions at shift 0 (no clock of this board runs
 * faster than 25 MHz), so one sample alone is quantized to 40. Each sample
 * therefore starts at a tick edge (a spin on the counter) followed by a delay
 * of 3 (k + 1) instructions, k = i mod PHASES (3 is coprime with 40: the
 * start sweeps every phase of the tick once per PHASES samples); the mean of
 * the ticks of one such cycle of PHASES samples, times 40, is the instruction
 * count of the call (when the PHASES calls cost the same; to within the
 * 3-instruction granularity of the edge spin: observed sd 0-0.4). The reported values are these per-cycle counts, N / PHASES
 * of them, minus the same count for the empty measurement (the two SysTick
 * reads): mode / mean / stddev / min / max.
 * (SysTick free running, no interrupt, so nothing lands inside a sample.)
 * Output lines:  "apicost <call> mode <m> mean <x.y> sd <s.t> ..."; the
 * calls floor_alloc / _free / _enqueue / _dequeue are the reference floor of
 * lean_floor.c (not mdcom), measured the same way.
 */
#include <errno.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "lean_floor.h"
#include "mdcom/mdcom.h"
#include "mdcom_m4_layout.h"

#ifndef PHASES /* the board's instructions per SysTick tick at -icount shift=0 (1e9 / cpu_hz) */
#define PHASES 40u /* mps2-an386: 25 MHz; mps2-an521 builds with 50 (20 MHz) */
#endif
#define N (13u * PHASES)
#define CYCLES (N / PHASES)

static uint32_t g_samples[N];
static uint32_t g_overhead10; /* empty measurement, instructions * 10 */
static uint32_t g_scale_num = 40, g_scale_den = 1; /* instructions per tick */

/* 3 (k + 1) instructions ((k + 1) x {nop, subs, bne}), no branch around
 * it, before a sample. */
static inline __attribute__((always_inline)) void dither(uint32_t k)
{
    uint32_t t = mdcom_bm_ticks();
    while (mdcom_bm_ticks() == t) /* start at a tick edge (to within the loop) */
        ;
    k += 1u;
    __asm__ __volatile__("1: nop\n\tsubs %0, %0, #1\n\tbne 1b" : "+r"(k)::"cc");
}

/* Ticks between two reads of the down-counter. */
#define T0() dither(i % PHASES); uint32_t t0_ = mdcom_bm_ticks()
#define T1() ((t0_ - mdcom_bm_ticks()) & 0xffffffu)

static void put_fixed1(uint64_t v10) /* v10 = value * 10 */
{
    mdcom_bm_put_u32((uint32_t)(v10 / 10u));
    mdcom_bm_puts(".");
    mdcom_bm_put_u32((uint32_t)(v10 % 10u));
}

static uint32_t isqrt64(uint64_t v)
{
    uint64_t r = 0, b = 1ull << 62;
    while (b > v)
        b >>= 2;
    while (b) {
        if (v >= r + b) {
            v -= r + b;
            r = (r >> 1) + b;
        } else {
            r >>= 1;
        }
        b >>= 2;
    }
    return (uint32_t)r;
}

/* Instructions * 10 of cycle c (PHASES samples, one per tick phase). */
static uint32_t cycle10(uint32_t c)
{
    uint64_t ticks = 0;
    uint32_t k;
    for (k = 0; k < PHASES; k++)
        ticks += g_samples[c * PHASES + k];
    return (uint32_t)((ticks * g_scale_num * 10u + (uint64_t)g_scale_den * PHASES / 2u) /
                      ((uint64_t)g_scale_den * PHASES));
}

static void put_fixed1_rounded(uint32_t v10) /* as an integer */
{
    mdcom_bm_put_u32((v10 + 5u) / 10u);
}

/* Per-cycle exact counts, minus the overhead: mode / mean / sd / min / max. */
static void report(const char *name)
{
    uint32_t v[CYCLES], i, j, mode = 0, best = 0, lo = UINT32_MAX, hi = 0;
    uint64_t sum = 0, sq = 0, mean10, var100;
    for (i = 0; i < CYCLES; i++) {
        uint32_t c = cycle10(i);
        v[i] = c > g_overhead10 ? c - g_overhead10 : 0;
        sum += v[i];
        sq += (uint64_t)v[i] * v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    for (i = 0; i < CYCLES; i++) { /* the most frequent value (the smallest on ties) */
        uint32_t cnt = 0;
        for (j = 0; j < CYCLES; j++)
            cnt += v[j] == v[i];
        if (cnt > best || (cnt == best && v[i] < mode)) {
            best = cnt;
            mode = v[i];
        }
    }
    mean10 = (sum + CYCLES / 2) / CYCLES;
    /* values in tenths: variance * 100 = (sq * n - sum^2) / n^2 */
    var100 = (sq * CYCLES - sum * sum) / ((uint64_t)CYCLES * CYCLES);
    mdcom_bm_puts("apicost ");
    mdcom_bm_puts(name);
    mdcom_bm_puts(" mode ");
    put_fixed1_rounded(mode);
    mdcom_bm_puts(" mean ");
    put_fixed1(mean10);
    mdcom_bm_puts(" sd ");
    put_fixed1(isqrt64(var100)); /* sqrt(var * 100) = sd * 10 */
    mdcom_bm_puts(" min ");
    put_fixed1_rounded(lo);
    mdcom_bm_puts(" max ");
    put_fixed1_rounded(hi);
    mdcom_bm_puts(" n ");
    mdcom_bm_put_u32(N);
    mdcom_bm_puts("\n");
}

static void check(const char *what, int r)
{
    if (r < 0) {
        mdcom_bm_puts("apicost: ");
        mdcom_bm_puts(what);
        mdcom_bm_puts(": ");
        mdcom_bm_puts(mdcom_strerror(r));
        mdcom_bm_puts("\n");
        mdcom_bm_exit(2);
    }
}

/* -icount shift from the semihosting command line ("shift=N"), if any. */
static uint32_t read_shift(void)
{
    static char cmd[64];
    uint32_t blk[2] = {(uint32_t)(uintptr_t)cmd, sizeof(cmd)};
    register uint32_t r0 __asm__("r0") = 0x15u; /* SYS_GET_CMDLINE */
    register uint32_t *r1 __asm__("r1") = blk;
    uint32_t i, v = 0;
    __asm__ __volatile__("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    if (r0 != 0)
        return 0;
    for (i = 0; i + 6 < sizeof(cmd) && cmd[i]; i++) {
        if (memcmp(&cmd[i], "shift=", 6) == 0) {
            for (i += 6; i < sizeof(cmd) && cmd[i] >= '0' && cmd[i] <= '9'; i++)
                v = v * 10u + (uint32_t)(cmd[i] - '0');
            return v > 20u ? 0 : v;
        }
    }
    return 0;
}

int main(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *tm;
    mdcom_smemch_t *sm;
    uint32_t i, id, len, shift;
    void *p;
    char err[128];
    mdcom_init_opts o;
    uint8_t msg[16] = {0};

    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    /* free-running SysTick, no interrupt inside a sample */
    mdcom_bm_systick_start(mdcom_board_desc.cpu_hz, 0);
    shift = read_shift();
    /* instructions per tick = (1e9 / cpu_hz) / 2^shift */
    g_scale_num = 1000000000u / mdcom_board_desc.cpu_hz;
    g_scale_den = 1u << shift;
    mdcom_bm_puts("mdcom-fw-apicost on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(", icount shift ");
    mdcom_bm_put_u32(shift);
    mdcom_bm_puts(" (instructions = ticks * ");
    mdcom_bm_put_u32(g_scale_num);
    mdcom_bm_puts(" / ");
    mdcom_bm_put_u32(g_scale_den);
    mdcom_bm_puts(")\n");

    o.layout = &mdcom_m4_layout; /* computed on the build host */
    check("init", mdcom_init(&m, &mdcom_m4_config, MDCOM_M4_DOM_M4, &o));
    check("open tm", mdcom_fifoch_at(m, MDCOM_M4_CH_TM, &tm));
    check("open tm_sync", mdcom_smemch_at(m, MDCOM_M4_CH_TM_SYNC, &sm));

    /* overhead of the measurement itself (the two SysTick reads) */
    g_overhead10 = 0;
    for (i = 0; i < N; i++) {
        T0();
        __asm__ __volatile__("" ::: "memory");
        g_samples[i] = T1();
    }
    report("empty");
    {
        uint64_t s10 = 0;
        for (i = 0; i < CYCLES; i++)
            s10 += cycle10(i);
        g_overhead10 = (uint32_t)((s10 + CYCLES / 2) / CYCLES);
    }

#define MEASURE(name, setup, call, after)                                                  \
    do {                                                                                   \
        for (i = 0; i < N; i++) {                                                          \
            int r_;                                                                        \
            setup;                                                                         \
            {                                                                              \
                T0();                                                                      \
                r_ = (call);                                                               \
                g_samples[i] = T1();                                                       \
            }                                                                              \
            check(name, r_);                                                               \
            after;                                                                         \
        }                                                                                  \
        report(name);                                                                      \
    } while (0)

    /* alloc / free */
    MEASURE("alloc", (void)0, mdcom_fifoch_alloc(tm, &id), check("free", mdcom_fifoch_free(tm, id)));
    MEASURE("free", check("alloc", mdcom_fifoch_alloc(tm, &id)), mdcom_fifoch_free(tm, id), (void)0);
    check("alloc", mdcom_fifoch_alloc(tm, &id));
    MEASURE("get", (void)0, mdcom_fifoch_get(tm, id, &p, 0), (void)0);
    check("free", mdcom_fifoch_free(tm, id));
    /* enqueue / dequeue */
    MEASURE("enqueue", check("alloc", mdcom_fifoch_alloc(tm, &id)), mdcom_fifoch_enqueue(tm, id, 16),
            (check("dequeue", mdcom_fifoch_dequeue(tm, &id, &len)), check("free", mdcom_fifoch_free(tm, id))));
    MEASURE("dequeue",
            (check("alloc", mdcom_fifoch_alloc(tm, &id)), check("enqueue", mdcom_fifoch_enqueue(tm, id, 16))),
            mdcom_fifoch_dequeue(tm, &id, &len), check("free", mdcom_fifoch_free(tm, id)));
    MEASURE("notify", (void)0, mdcom_fifoch_notify(tm), (void)0);
    MEASURE("wait_poll_rx",
            (check("alloc", mdcom_fifoch_alloc(tm, &id)), check("enqueue", mdcom_fifoch_enqueue(tm, id, 16))),
            mdcom_fifoch_wait(tm, MDCOM_EV_RX, MDCOM_POLL),
            (check("dequeue", mdcom_fifoch_dequeue(tm, &id, &len)), check("free", mdcom_fifoch_free(tm, id))));
    MEASURE("send16", (void)0, mdcom_fifoch_send(tm, msg, sizeof(msg), MDCOM_POLL),
            check("recv", mdcom_fifoch_recv(tm, msg, sizeof(msg), MDCOM_POLL)));
    MEASURE("recv16", check("send", mdcom_fifoch_send(tm, msg, sizeof(msg), MDCOM_POLL)),
            mdcom_fifoch_recv(tm, msg, sizeof(msg), MDCOM_POLL), (void)0);
    MEASURE("smem_get", (void)0, mdcom_smemch_get(sm, &p, 0), (void)0);
    MEASURE("smem_trylock", (void)0, mdcom_smemch_trylock(sm), check("unlock", mdcom_smemch_unlock(sm)));
    MEASURE("smem_unlock", check("trylock", mdcom_smemch_trylock(sm)), mdcom_smemch_unlock(sm), (void)0);
    {
        mdcom_fifo_state st;
        MEASURE("sense_fifoch", (void)0, mdcom_sense_fifoch(tm, &st), (void)0);
    }
    /* The reference floor (lean_floor.c, not mdcom): the same four calls,
     * setups and teardowns on a minimal SPSC pool + ring; tx produces (and
     * frees its own blocks in the alloc / free rows), rx consumes. Out-of-line
     * calls into their own translation unit, as mdcom's into the library. */
    {
        static lf_shared area; /* static RAM, no malloc */
        lf_chan tx, rx;
        lf_format(&area);
        check("floor open", lf_open(&tx, &area, 1u));
        check("floor open", lf_open(&rx, &area, 2u));
        MEASURE("floor_alloc", (void)0, lf_alloc(&tx, &id), check("floor free", lf_free(&tx, id)));
        MEASURE("floor_free", check("floor alloc", lf_alloc(&tx, &id)), lf_free(&tx, id), (void)0);
        MEASURE("floor_enqueue", check("floor alloc", lf_alloc(&tx, &id)), lf_enqueue(&tx, id, 16),
                (check("floor dequeue", lf_dequeue(&rx, &id, &len)),
                 check("floor free", lf_free(&rx, id))));
        MEASURE("floor_dequeue",
                (check("floor alloc", lf_alloc(&tx, &id)),
                 check("floor enqueue", lf_enqueue(&tx, id, 16))),
                lf_dequeue(&rx, &id, &len), check("floor free", lf_free(&rx, id)));
    }
    mdcom_term(m);
    return 0;
}
