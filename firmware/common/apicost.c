/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * apicost.c - the body of the API-cost images (mdcom_fw/apicost.h): the cost
 * of each API call on the Cortex-M, in instructions. Run under QEMU with
 * -icount shift=N: the virtual clock then advances 2^N ns per instruction
 * and a counter of f Hz counts instructions * 2^N * f / 1e9, so the image
 * prints instructions = ticks * (1e9 / f) / 2^N (the shift is given on the
 * semihosting command line or defaults to 0; see harness/qemu-m4). The empty
 * measurement (two counter reads) is subtracted.
 *
 * One tick is 40 instructions at shift 0 for a 25 MHz counter (no clock of
 * the board runs faster), so one sample alone is quantized to 40. Each
 * sample therefore starts at a tick edge (a spin on the counter) followed by
 * a delay of 3 (k + 1) instructions, k = i mod PHASES (3 is coprime with 40:
 * the start sweeps every phase of the tick once per PHASES samples); the
 * mean of the ticks of one such cycle of PHASES samples, times 40, is the
 * instruction count of the call (when the PHASES calls cost the same). The
 * edge spin leaves the start 0-2 instructions after the edge; apicost_dither
 * measures that lateness and pads it out, so each sample starts exactly
 * 3 (k + 1) instructions after an edge (observed sd 0.0 on every call that
 * costs the same each time).
 * The reported values are these per-cycle counts, N / PHASES of them, minus
 * the same count for the empty measurement: mode / mean / stddev / min / max.
 * Interrupts are masked within a sample (PRIMASK), so nothing lands inside
 * one: neither an RTOS tick nor a doorbell.
 * Output lines:  "apicost <call> mode <m> mean <x.y> sd <s.t> min .. max .. n ..".
 */
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom/platform.h"
#include "mdcom_fw/apicost.h"

uint32_t apicost_samples[APICOST_N];
static uint32_t g_overhead10;                      /* empty measurement, instructions * 10 */
static uint32_t g_scale_num = 40, g_scale_den = 1; /* instructions per tick */

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
        ticks += apicost_samples[c * PHASES + k];
    return (uint32_t)((ticks * g_scale_num * 10u + (uint64_t)g_scale_den * PHASES / 2u) /
                      ((uint64_t)g_scale_den * PHASES));
}

static void put_fixed1_rounded(uint32_t v10) /* as an integer */
{
    mdcom_bm_put_u32((v10 + 5u) / 10u);
}

/* Per-cycle exact counts, minus the overhead: mode / mean / sd / min / max. */
void apicost_report(const char *name)
{
    uint32_t v[APICOST_CYCLES], i, j, mode = 0, best = 0, lo = UINT32_MAX, hi = 0;
    uint64_t sum = 0, sq = 0, mean10, var100;
    for (i = 0; i < APICOST_CYCLES; i++) {
        uint32_t c = cycle10(i);
        v[i] = c > g_overhead10 ? c - g_overhead10 : 0;
        sum += v[i];
        sq += (uint64_t)v[i] * v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    for (i = 0; i < APICOST_CYCLES; i++) { /* the most frequent value (the smallest on ties) */
        uint32_t cnt = 0;
        for (j = 0; j < APICOST_CYCLES; j++)
            cnt += v[j] == v[i];
        if (cnt > best || (cnt == best && v[i] < mode)) {
            best = cnt;
            mode = v[i];
        }
    }
    mean10 = (sum + APICOST_CYCLES / 2) / APICOST_CYCLES;
    /* values in tenths: variance * 100 = (sq * n - sum^2) / n^2 */
    var100 = (sq * APICOST_CYCLES - sum * sum) / ((uint64_t)APICOST_CYCLES * APICOST_CYCLES);
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
    mdcom_bm_put_u32(APICOST_N);
    mdcom_bm_puts("\n");
}

void apicost_check(const char *what, int r)
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

/* the empty sample's "call": a compiler barrier, no instruction */
static inline __attribute__((always_inline)) int nothing(void)
{
    __asm__ __volatile__("" ::: "memory");
    return 0;
}

void apicost_begin(const char *image)
{
#ifdef FW_APICOST_COUNTER
    uint32_t hz = FW_APICOST_COUNTER_HZ;
    const char *clock = "FPGAIO COUNTER";
#else
    uint32_t hz = mdcom_board_desc.cpu_hz;
    const char *clock = "SysTick";
#endif
    uint32_t shift = read_shift();
    /* instructions per tick = (1e9 / hz) / 2^shift */
    g_scale_num = 1000000000u / hz;
    g_scale_den = 1u << shift;
    mdcom_bm_puts(image);
    mdcom_bm_puts(" on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(", icount shift ");
    mdcom_bm_put_u32(shift);
    mdcom_bm_puts(" (instructions = ticks * ");
    mdcom_bm_put_u32(g_scale_num);
    mdcom_bm_puts(" / ");
    mdcom_bm_put_u32(g_scale_den);
    mdcom_bm_puts("; ");
    mdcom_bm_puts(clock);
    mdcom_bm_puts(", interrupts masked in a sample)\n");

    /* overhead of the measurement itself (the two counter reads) */
    g_overhead10 = 0;
    APICOST_MEASURE("empty", (void)0, nothing(), (void)0);
    {
        uint64_t s10 = 0;
        uint32_t i;
        for (i = 0; i < APICOST_CYCLES; i++)
            s10 += cycle10(i);
        g_overhead10 = (uint32_t)((s10 + APICOST_CYCLES / 2) / APICOST_CYCLES);
    }
}

void apicost_mdcom_rows(mdcom_fifoch_t *tm, uint32_t tm_index, mdcom_smemch_t *sm)
{
    uint32_t id, len;
    void *p;
    uint8_t msg[16] = {0};
    mdcom_fifo_state st;

    /* alloc / free */
    APICOST_MEASURE("alloc", (void)0, mdcom_fifoch_alloc(tm, &id),
                    apicost_check("free", mdcom_fifoch_free(tm, id)));
    APICOST_MEASURE("free", apicost_check("alloc", mdcom_fifoch_alloc(tm, &id)),
                    mdcom_fifoch_free(tm, id), (void)0);
    apicost_check("alloc", mdcom_fifoch_alloc(tm, &id));
    APICOST_MEASURE("get", (void)0, mdcom_fifoch_get(tm, id, &p, 0), (void)0);
    apicost_check("free", mdcom_fifoch_free(tm, id));
    /* enqueue / dequeue */
    APICOST_MEASURE("enqueue", apicost_check("alloc", mdcom_fifoch_alloc(tm, &id)),
                    mdcom_fifoch_enqueue(tm, id, 16),
                    (apicost_check("dequeue", mdcom_fifoch_dequeue(tm, &id, &len)),
                     apicost_check("free", mdcom_fifoch_free(tm, id))));
    APICOST_MEASURE("dequeue",
                    (apicost_check("alloc", mdcom_fifoch_alloc(tm, &id)),
                     apicost_check("enqueue", mdcom_fifoch_enqueue(tm, id, 16))),
                    mdcom_fifoch_dequeue(tm, &id, &len),
                    apicost_check("free", mdcom_fifoch_free(tm, id)));
    APICOST_MEASURE("notify", (void)0, mdcom_fifoch_notify(tm), (void)0);
    APICOST_MEASURE("wait_poll_rx",
                    (apicost_check("alloc", mdcom_fifoch_alloc(tm, &id)),
                     apicost_check("enqueue", mdcom_fifoch_enqueue(tm, id, 16))),
                    mdcom_fifoch_wait(tm, MDCOM_EV_RX, MDCOM_POLL),
                    (apicost_check("dequeue", mdcom_fifoch_dequeue(tm, &id, &len)),
                     apicost_check("free", mdcom_fifoch_free(tm, id))));
    APICOST_MEASURE("send16", (void)0, mdcom_fifoch_send(tm, msg, sizeof(msg), MDCOM_POLL),
                    apicost_check("recv", mdcom_fifoch_recv(tm, msg, sizeof(msg), MDCOM_POLL)));
    APICOST_MEASURE("recv16",
                    apicost_check("send", mdcom_fifoch_send(tm, msg, sizeof(msg), MDCOM_POLL)),
                    mdcom_fifoch_recv(tm, msg, sizeof(msg), MDCOM_POLL), (void)0);
    APICOST_MEASURE("smem_get", (void)0, mdcom_smemch_get(sm, &p, 0), (void)0);
    APICOST_MEASURE("smem_trylock", (void)0, mdcom_smemch_trylock(sm),
                    apicost_check("unlock", mdcom_smemch_unlock(sm)));
    APICOST_MEASURE("smem_unlock", apicost_check("trylock", mdcom_smemch_trylock(sm)),
                    mdcom_smemch_unlock(sm), (void)0);
    APICOST_MEASURE("sense_fifoch", (void)0, mdcom_sense_fifoch(tm, &st), (void)0);
    /* The port's own paths under the calls above: its doorbell ring (what
     * notify calls when a peer sleeps on the channel; uncontended notify does
     * not ring) and its clock (timeouts, heartbeats). On an RTOS port the ring
     * also wakes the local waiters (none here) besides ringing the board. */
    {
        const mdcom_platform *pf = mdcom_platform_default();
        static mdcom_aword word;
        APICOST_MEASURE("port_ring", (void)0,
                        (pf->doorbell.ring(pf->doorbell.ctx, &word, tm_index), 0), (void)0);
        APICOST_MEASURE("port_now_ns", (void)0, ((void)pf->now_ns(pf->ctx), 0), (void)0);
    }
}
