/*
 * fw_apicost.c - mdcom-fw-apicost: the cost of each API call on the
 * Cortex-M4, in SysTick ticks. Run under QEMU with -icount shift=N: the
 * virtual clock then advances 2^N ns per instruction and SysTick (25 MHz,
 * 40 ns per tick) counts instructions * 2^N / 40, so the image prints
 * instructions = ticks * 40 / 2^N (the shift is given on the semihosting
 * command line or defaults to 0; see tools/qemu-m4). The empty measurement
 * (two SysTick reads) is subtracted.
 *
 * For each call: N samples of one call each (SysTick free running, no
 * interrupt, so nothing lands inside a sample), then mode / mean / stddev /
 * min / max. Output lines:  "apicost <call> mode <m> mean <x.y> sd <s.t> ..."
 */
#include <errno.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_m4_cfg.h"

#define N 512
#define MAXV 4096u

static uint32_t g_samples[N];
static uint16_t g_hist[MAXV];
static uint32_t g_overhead;
static uint32_t g_scale_num = 40, g_scale_den = 1; /* instructions per tick */

/* Ticks between two reads of the down-counter. */
#define T0() uint32_t t0_ = mdcom_bm_ticks()
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

/* Convert ticks to instructions (rounded), after removing the overhead. */
static uint32_t to_instr(uint32_t ticks)
{
    uint32_t t = ticks > g_overhead ? ticks - g_overhead : 0;
    return (t * g_scale_num + g_scale_den / 2) / g_scale_den;
}

static void report(const char *name)
{
    uint64_t sum = 0, sq = 0, mean10, var100;
    uint32_t i, mode = 0, lo = UINT32_MAX, hi = 0;
    memset(g_hist, 0, sizeof(g_hist));
    for (i = 0; i < N; i++) {
        uint32_t v = to_instr(g_samples[i]);
        sum += v;
        sq += (uint64_t)v * v;
        if (v < lo)
            lo = v;
        if (v > hi)
            hi = v;
        if (v < MAXV && ++g_hist[v] > g_hist[mode])
            mode = v;
    }
    mean10 = (sum * 10u + N / 2) / N;
    /* variance * 100 = (sq*N - sum^2) * 100 / N^2 */
    var100 = ((sq * N - sum * sum) * 100u) / ((uint64_t)N * N);
    mdcom_bm_puts("apicost ");
    mdcom_bm_puts(name);
    mdcom_bm_puts(" mode ");
    mdcom_bm_put_u32(mode);
    mdcom_bm_puts(" mean ");
    put_fixed1(mean10);
    mdcom_bm_puts(" sd ");
    put_fixed1(isqrt64(var100)); /* sqrt(var * 100) = sd * 10 */
    mdcom_bm_puts(" min ");
    mdcom_bm_put_u32(lo);
    mdcom_bm_puts(" max ");
    mdcom_bm_put_u32(hi);
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

    check("init", mdcom_init(&m, &mdcom_m4_config, MDCOM_M4_DOM_M4, &o));
    check("open tm", mdcom_fifoch_at(m, MDCOM_M4_CH_TM, &tm));
    check("open tm_sync", mdcom_smemch_at(m, MDCOM_M4_CH_TM_SYNC, &sm));

    /* overhead of the measurement itself (mode of empty samples) */
    g_overhead = 0;
    for (i = 0; i < N; i++) {
        T0();
        __asm__ __volatile__("" ::: "memory");
        g_samples[i] = T1();
    }
    {
        uint32_t best = UINT32_MAX;
        for (i = 0; i < N; i++)
            if (g_samples[i] < best)
                best = g_samples[i];
        g_overhead = best;
    }
    report("empty");

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
    mdcom_term(m);
    return 0;
}
