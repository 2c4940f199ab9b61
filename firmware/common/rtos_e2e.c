/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtos_e2e.c - the body of the RTOS test firmware on the Cortex-M4 of QEMU
 * mps2-an386: the master domain "m4" of firmware/qemu-freertos/freertos.toml,
 * against Linux processes (tests/qemu/test_qemu_freertos.cpp, frt_peer.c),
 * the same for every kernel: the image (fw_freertos.c, fw_threadx.c) gives
 * the threads, delays and ticks of its kernel (mdcom_fw/rtos_e2e.h)
 * and its port. Every thread that uses mdcom is its own mdcom process. The
 * main thread (e2e_main):
 *
 *   port       the port conformance checks on target (platform hooks alone,
 *              before mdcom_init): region, clock (monotonic, sub-tick,
 *              tracks the tick), doorbell wait (word differs, timeouts never
 *              early and at most a tick late, blocks: the idle task runs
 *              while a thread waits, and does not while a thread spins),
 *              ring from a thread and from an ISR, the doorbell interrupt,
 *              one ring wakes every sleeper, no stale wake-up, wait in an
 *              ISR refused, portable lock, process identity per thread,
 *              a killed thread is dead (and its pending wait forgotten)
 *   local      through the library: a thread blocked in mdcom_fifoch_recv is
 *              woken by a send from another thread, and by a send from an ISR
 *   task_reap  a thread that dies holding an SMEM lock: another thread gets
 *              the lock (the core reaps the dead thread's process)
 *   then the traffic threads, with the Linux peers (frt_proto.h):
 *   rx         receiver: mdcom_fifoch_recv on "up" with a 20 ms timeout,
 *              seq + CRC per sender; its timeouts' overshoot and the idle
 *              runs during them
 *   tx         sender: FRT_DOWN_COUNT messages to each peer on down<i>
 *   smem       two threads contend for "state" (mdcom_smemch_lock with a
 *              2 ms timeout; the second holds it 5 ticks now and then: the
 *              first's timeouts measured), then the Linux peers
 *              (frt_proto.h: not both domains at once on the an386)
 *   timeouts   the overshoot of mdcom_fifoch_recv timeouts of 1 .. 20 ms on
 *              an empty channel, in ticks
 *
 * The tests' interrupt is the an386's CMSDK timer 0 (a board device, the
 * same under every kernel), timed from just after a tick to 30 % into one.
 *
 * Each prints "RESULT <name> PASS|FAIL key=value ..." on UART0; the image
 * ends QEMU (semihosting) with 0 when all passed, 1 otherwise.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "frt_proto.h"
#include "mdcom/mdcom.h"
#include "mdcom_frt_layout.h"
#include "mdcom_fw/boot.h"
#include "mdcom_fw/proto.h"
#include "mdcom_fw/rtos_e2e.h"

#define MS(x) ((int64_t)(x)*1000000)
#define US(x) ((int64_t)(x)*1000)
/* CMSDK APB timer 0 of the an386 (QEMU cmsdk-apb-timer: counts down at the
 * 25 MHz bus clock, the processor's, interrupt at zero), NVIC line 8: the
 * tests' interrupt */
#define APP_IRQ 8u
#define TIMER0_CTRL MDCOM_BM_REG(0x40000000u)
#define TIMER0_VALUE MDCOM_BM_REG(0x40000004u)
#define TIMER0_RELOAD MDCOM_BM_REG(0x40000008u)
#define TIMER0_INTCLR MDCOM_BM_REG(0x4000000Cu)
#define STACK_HELPER 512u

static uint32_t g_failed;
static uint32_t g_tick_ns;
volatile uint32_t e2e_idle_runs;

/* ---------------------------------------------------------------- */
/* Output (only the main task prints, between its checks)             */
/* ---------------------------------------------------------------- */

#define kv mdcom_bm_put_kv

static void result(const char *name, int ok) { g_failed += (uint32_t)mdcom_bm_result(name, ok); }

static void die(const char *what, int r) { fw_die("fw", what, r); }

static uint64_t now(void) { return e2e_now_ns(); }

/* ---------------------------------------------------------------- */
/* Timeout overshoot statistics                                       */
/* ---------------------------------------------------------------- */

typedef struct tmo_stat {
    uint32_t n, early;  /* early: returned before the timeout (ns or ticks) */
    uint32_t max_ticks; /* ticks after the deadline's tick at the return */
    uint32_t late[3];   /* returns 0, 1, 2 or more ticks after the deadline's tick */
    uint32_t max_ns;    /* ns after the deadline at the return */
    uint64_t sum_ns;
} tmo_stat;

/* A wait of want ns that began at t0 (ns) ended at t1 (ns), tick1. Early:
 * t1 before t0 + want. The deadline's tick is the first tick at or after
 * t0 + want: a wait that ends there is on time (0 ticks late); what the ns
 * add beyond is the time from that tick's interrupt to the task running
 * again (emulator latency under QEMU, most of it the first translation of a
 * path). */
static void tmo_add(tmo_stat *s, uint64_t t0, uint64_t t1, uint32_t tick1, int64_t want)
{
    uint64_t dl = t0 + (uint64_t)want;
    uint32_t dl_tick = (uint32_t)((dl + g_tick_ns - 1u) / g_tick_ns);
    int32_t over_ticks = (int32_t)(tick1 - dl_tick);
    s->n++;
    if (t1 < dl) {
        s->early++;
        return;
    }
    /* a wake-up by a ring after the deadline but before its tick ends the
     * wait on time too (the core sees the deadline passed): 0 ticks late */
    if (over_ticks < 0)
        over_ticks = 0;
    s->late[over_ticks < 2 ? over_ticks : 2]++;
    if ((uint32_t)over_ticks > s->max_ticks)
        s->max_ticks = (uint32_t)over_ticks;
    s->sum_ns += t1 - dl;
    if (t1 - dl > s->max_ns)
        s->max_ns = (uint32_t)(t1 - dl > 0xffffffffu ? 0xffffffffu : t1 - dl);
}

/* Never early: what every thread's timeouts must be (a thread that shares
 * the CPU with others of its priority or above may run a tick or more after
 * its deadline's tick: the scheduler's doing, printed, not judged). */
static int tmo_never_early(const tmo_stat *s) { return s->early == 0; }

/* On time, for a thread that nothing of its priority or above keeps from
 * running (the port checks, the timeout thread): never early; at least 3/4
 * of the waits end at the deadline's tick (a port that waited a tick too many would have none there), the rest
 * at the next (a tick that fell between the wait's clock read and its
 * block), and at most 1 in 20 (at least 1) later: the emulator's thread
 * descheduled by the host, not the port; under a tick and a half late on
 * average in ns. */
static int tmo_ok(const tmo_stat *s)
{
    uint32_t n = s->n - s->early, noise = n / 20u > 1u ? n / 20u : 1u;
    return s->early == 0 && 4u * s->late[0] >= 3u * n && s->late[2] <= noise &&
           (n == 0 || s->sum_ns / n < g_tick_ns + g_tick_ns / 2u);
}

/* " <key><suffix>=<v>" */
static void kv2(const char *key, const char *suffix, uint32_t v)
{
    mdcom_bm_puts(" ");
    mdcom_bm_puts(key);
    mdcom_bm_puts(suffix);
    mdcom_bm_puts("=");
    mdcom_bm_put_u32(v);
}

/* key_n, key_early, key_max_ticks (ticks after the deadline's tick),
 * key_max_mticks and key_mean_mticks (ns after the deadline, in 1/1000 tick) */
static void tmo_print(const char *key, const tmo_stat *s)
{
    kv2(key, "_n", s->n);
    kv2(key, "_early", s->early);
    kv2(key, "_max_ticks", s->max_ticks);
    kv2(key, "_late0", s->late[0]);
    kv2(key, "_late1", s->late[1]);
    kv2(key, "_late2plus", s->late[2]);
    kv2(key, "_max_mticks", (uint32_t)((uint64_t)s->max_ns * 1000u / g_tick_ns));
    kv2(key, "_mean_mticks",
        s->n > s->early ? (uint32_t)(s->sum_ns * 1000u / g_tick_ns / (s->n - s->early)) : 0);
}

/* ---------------------------------------------------------------- */
/* The application interrupt (a hardware timer)                       */
/* ---------------------------------------------------------------- */

enum isr_act { ISR_NONE, ISR_RING, ISR_DOORBELL, ISR_WAIT, ISR_SEND };
static volatile uint32_t g_isr_act, g_isr_runs;
static volatile int g_isr_r;
static volatile uint64_t g_isr_ns;
static mdcom_aword *volatile g_isr_word;
static mdcom_fifoch_t *volatile g_isr_ch; /* an attachment the ISR alone uses */

void mdcom_bm_app_irq(uint32_t irq)
{
    const mdcom_platform *p = e2e_platform();
    uint32_t msg[2] = {0x15e, 0};
    if (irq != APP_IRQ)
        return;
    TIMER0_CTRL = 0; /* one shot */
    TIMER0_INTCLR = 1u;
    g_isr_runs++;
    g_isr_ns = now();
    switch (g_isr_act) {
    case ISR_RING:
        atomic_store(g_isr_word, 1u);
        p->doorbell.ring(p->doorbell.ctx, g_isr_word, 0);
        break;
    case ISR_DOORBELL:
        mdcom_bm_doorbell_raise(); /* what the UART1 RX handler calls */
        break;
    case ISR_WAIT:
        g_isr_r = p->doorbell.wait(p->doorbell.ctx, g_isr_word, atomic_load(g_isr_word), MS(1));
        break;
    case ISR_SEND:
        msg[1] = (uint32_t)g_isr_ns;
        g_isr_r = mdcom_fifoch_send(g_isr_ch, msg, sizeof(msg), MDCOM_POLL);
        break;
    default:
        break;
    }
}

/* The ISR runs act about ticks + 0.3 ticks from now, from a hardware timer
 * that knows nothing of the tick: started just after a tick, it fires 30 %
 * into one, so a wait that only looked at the word on ticks (polling) would
 * wake most of a tick later, the port's at once. The timer counts the
 * processor's clock (the board's cpu_hz); the tick is the kernel's. */
static void isr_after(uint32_t act, uint32_t ticks)
{
    uint32_t per_tick = (uint32_t)((uint64_t)mdcom_board_desc.cpu_hz * g_tick_ns / 1000000000u);
    uint32_t cycles = ticks * per_tick + per_tick / 10u * 3u;
    g_isr_act = act;
    e2e_delay(1); /* just after a tick */
    TIMER0_CTRL = 0;
    TIMER0_INTCLR = 1u;
    TIMER0_RELOAD = cycles;
    TIMER0_VALUE = cycles;
    TIMER0_CTRL = 0x9u; /* enable, interrupt */
}

/* ---------------------------------------------------------------- */
/* Helper tasks of the port checks                                     */
/* ---------------------------------------------------------------- */

typedef struct helper {
    mdcom_aword *word;
    uint32_t expected;
    int64_t timeout;
    volatile int r, done;
    volatile uint64_t t_begin, t_end; /* around its wait */
    volatile uint32_t tick_end;
    uint32_t pid, token;
    e2e_thread task;
} helper;

static void helper_task(void *arg)
{
    helper *h = arg;
    const mdcom_platform *p = e2e_platform();
    (void)p->proc_self(p->ctx, &h->pid, &h->token);
    h->t_begin = now();
    h->r = p->doorbell.wait(p->doorbell.ctx, h->word, h->expected, h->timeout);
    h->t_end = now();
    h->tick_end = e2e_ticks();
    h->done = 1;
    e2e_exit();
}

static void helper_start(helper *h, mdcom_aword *word, uint32_t expected, int64_t timeout,
                         uint32_t prio)
{
    memset(h, 0, sizeof(*h));
    h->word = word;
    h->expected = expected;
    h->timeout = timeout;
    h->r = 1;
    h->task = e2e_spawn(helper_task, "helper", STACK_HELPER, h, prio);
}

/* the smallest of five values (the host's load only ever adds latency) */
static uint32_t min5(const uint32_t *v)
{
    uint32_t m = v[0], i;
    for (i = 1; i < 5; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

/* the median of five values (sorts a copy) */
static uint32_t median5(const uint32_t *v)
{
    uint32_t a[5], i, j;
    memcpy(a, v, sizeof(a));
    for (i = 1; i < 5; i++)
        for (j = i; j > 0 && a[j - 1] > a[j]; j--) {
            uint32_t t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    return a[2];
}

/* until h is done (or ms passed): 1 when done */
static int helper_join(helper *h, uint32_t ms)
{
    uint32_t k;
    for (k = 0; k < ms && !h->done; k++)
        e2e_delay(1);
    return h->done;
}

/* ---------------------------------------------------------------- */
/* port: the conformance checks on target                             */
/* ---------------------------------------------------------------- */

static void test_port(void)
{
    const mdcom_platform *p = e2e_platform();
    mdcom_region_map map;
    static mdcom_aword w1, w2, w3, w4, w5, w6;
    e2e_stats s0, s1;
    helper h, h2;
    tmo_stat ts;
    uint32_t pid, pid2, tok, tok2, ok = 0, n = 0, k, idle_wait, idle_busy, distinct = 0;
    uint32_t lat_task[5], lat_isr[5], lat_db[5];
    const char *failed = "";
    uint64_t t0, t1, prev;
    volatile uint32_t *w;
    int r;
#define CHECK(name, cond)                                                                          \
    do {                                                                                           \
        n++;                                                                                       \
        if (cond)                                                                                  \
            ok++;                                                                                  \
        else if (!*failed)                                                                         \
            failed = name;                                                                         \
    } while (0)
    memset(&ts, 0, sizeof(ts));
    CHECK("hooks", p->region_open && p->region_close && p->doorbell.wait && p->doorbell.ring &&
                       p->now_ns && p->proc_self && p->proc_alive && p->reserved[0] == 0);
    memset(&map, 0, sizeof(map));
    r = p->region_open(p->ctx, "mdcom-frt", 4096, MDCOM_REGION_CREATE, 0600, -1, 0, &map);
    CHECK("region_open", r == 0 && map.base == (void *)0x21000000u && map.size >= 4096u);
    if (r == 0) {
        w = (volatile uint32_t *)map.base;
        uint32_t a = w[0], b = w[map.size / 4u - 1u];
        w[0] = 0xa5a5a5a5u;
        w[map.size / 4u - 1u] = 0x5a5a5a5au;
        CHECK("region_rw", w[0] == 0xa5a5a5a5u && w[map.size / 4u - 1u] == 0x5a5a5a5au);
        w[0] = a;
        w[map.size / 4u - 1u] = b;
        p->region_close(p->ctx, &map, 0);
    }
    CHECK("region_too_big", p->region_open(p->ctx, "x", (32u << 20), 0, 0, -1, 0, &map) == -ENOSPC);

    /* clock: monotonic; sub-tick resolution (two reads in one tick differ);
     * tracks the tick count */
    prev = p->now_ns(p->ctx);
    for (k = 0, r = 1; k < 1000; k++) {
        uint64_t t = p->now_ns(p->ctx);
        if (t < prev)
            r = 0;
        prev = t;
    }
    CHECK("clock_monotonic", r);
    for (k = 0; k < 50; k++) {
        uint32_t a;
        /* just after a tick: QEMU may show SysTick reloaded a while before
         * the tick's interrupt, and the clock holds still meanwhile */
        e2e_delay(1);
        a = e2e_ticks();
        t0 = p->now_ns(p->ctx);
        t1 = p->now_ns(p->ctx);
        if (e2e_ticks() == a && t1 > t0)
            distinct++;
    }
    CHECK("clock_subtick", distinct > 0);
    {
        uint32_t a = e2e_ticks();
        t0 = p->now_ns(p->ctx);
        e2e_delay(20);
        t1 = p->now_ns(p->ctx);
        uint64_t dk = (uint64_t)(e2e_ticks() - a) * g_tick_ns;
        CHECK("clock_tracks_ticks", t1 - t0 + g_tick_ns > dk && t1 - t0 < dk + g_tick_ns);
    }

    /* wait: word differs -> at once, no sleep (three times: the first run
     * of a path under QEMU includes translating it) */
    atomic_store(&w1, 5u);
    e2e_get_stats(&s0);
    for (k = 0, r = 0, prev = ~0ull; k < 3; k++) {
        t0 = now();
        r |= p->doorbell.wait(p->doorbell.ctx, &w1, 4u, MS(100));
        t1 = now();
        if (t1 - t0 < prev)
            prev = t1 - t0;
    }
    e2e_get_stats(&s1);
    CHECK("wait_differs", r == 0 && prev < g_tick_ns / 2u && s1.sleeps == s0.sleeps);

    /* timeouts: never early, at most one tick late (rounded up to the tick) */
    {
        static const int64_t tmo[] = {US(1000), US(2500), MS(3), MS(7), US(10300)};
        for (k = 0; k < 15; k++) {
            int64_t want = tmo[k % 5];
            t0 = now();
            r = p->doorbell.wait(p->doorbell.ctx, &w1, 5u, want);
            t1 = now();
            if (r != -ETIMEDOUT)
                ts.early++; /* counted as a failure below */
            tmo_add(&ts, t0, t1, e2e_ticks(), want);
        }
        /* the port rounds up to the tick; beyond it only the emulator's
         * latency (its timer and the first translation of a path) */
        CHECK("wait_timeout", ts.n == 15 && tmo_ok(&ts));
    }

    /* blocks: the idle task runs while the main task waits 100 ms, and not
     * while it spins for 100 ms (the control: the count can tell them apart) */
    k = e2e_idle_runs;
    r = p->doorbell.wait(p->doorbell.ctx, &w1, 5u, MS(100));
    idle_wait = e2e_idle_runs - k;
    t0 = now();
    k = e2e_idle_runs;
    while (now() - t0 < (uint64_t)MS(100))
        ;
    idle_busy = e2e_idle_runs - k;
    CHECK("wait_blocks", r == -ETIMEDOUT && idle_busy == 0 && idle_wait > 1000u);

    /* ring from a task wakes a task waiting on the word (the waiter at a
     * higher priority runs at once); from an ISR (the word changed there);
     * the doorbell interrupt (mdcom_bm_doorbell_raise, as the UART1 RX
     * handler calls it) wakes a waiter whose word did not change. Five
     * rounds each: the first run of a path under QEMU includes translating
     * it, and a loaded host adds to any run, so the check is on the fastest
     * wake-up: under half a tick, where a polling wait needs most of one. */
    for (k = 0, r = 1; k < 5; k++) {
        atomic_store(&w2, 0u);
        helper_start(&h, &w2, 0u, MS(1000), E2E_PRIO_MAIN + 1u);
        e2e_delay(2);
        atomic_store(&w2, 1u);
        t0 = now();
        p->doorbell.ring(p->doorbell.ctx, &w2, 0);
        if (!helper_join(&h, 100) || h.r != 0)
            r = 0;
        lat_task[k] = h.done ? (uint32_t)(h.t_end - t0) : 0xffffffffu;
    }
    CHECK("ring_task_wakes", r && min5(lat_task) < g_tick_ns / 2u);

    e2e_get_stats(&s0);
    for (k = 0, r = 1; k < 5; k++) {
        atomic_store(&w3, 0u);
        g_isr_word = &w3;
        helper_start(&h, &w3, 0u, MS(1000), E2E_PRIO_MAIN + 1u);
        t0 = now();
        isr_after(ISR_RING, 5);
        /* the helper waited before the interrupt, and woke after it (QEMU's
         * timer counts virtual time, the tick may lag it: no tick counts) */
        if (!helper_join(&h, 200) || h.r != 0 || h.t_begin >= g_isr_ns || h.t_end < g_isr_ns)
            r = 0;
        lat_isr[k] = h.done ? (uint32_t)(h.t_end - g_isr_ns) : 0xffffffffu;
    }
    CHECK("ring_isr_wakes", r && min5(lat_isr) < g_tick_ns / 2u);
    e2e_get_stats(&s1);
    CHECK("ring_isr_counted", s1.rings_isr == s0.rings_isr + 5u && s1.sleeps >= s0.sleeps + 5u);

    for (k = 0, r = 1; k < 5; k++) {
        atomic_store(&w4, 0u);
        helper_start(&h, &w4, 0u, MS(1000), E2E_PRIO_MAIN + 1u);
        isr_after(ISR_DOORBELL, 3);
        if (!helper_join(&h, 200) || h.r != 0 || h.t_begin >= g_isr_ns || h.t_end < g_isr_ns)
            r = 0;
        lat_db[k] = h.done ? (uint32_t)(h.t_end - g_isr_ns) : 0xffffffffu;
    }
    CHECK("doorbell_isr_wakes", r && min5(lat_db) < g_tick_ns / 2u);

    /* one ring wakes every sleeper on the word */
    atomic_store(&w5, 0u);
    helper_start(&h, &w5, 0u, MS(1000), E2E_PRIO_MAIN - 1u);
    helper_start(&h2, &w5, 0u, MS(1000), E2E_PRIO_MAIN - 1u);
    e2e_delay(3);
    atomic_store(&w5, 1u);
    t0 = now();
    p->doorbell.ring(p->doorbell.ctx, &w5, 0);
    CHECK("one_ring_wakes_all", helper_join(&h, 100) && helper_join(&h2, 100) && h.r == 0 &&
                                    h2.r == 0 && h.t_end - t0 < (uint64_t)MS(20) &&
                                    h2.t_end - t0 < (uint64_t)MS(20) && h.pid != h2.pid);

    /* a ring with nobody waiting leaves no stale wake-up behind */
    atomic_store(&w6, 0u);
    p->doorbell.ring(p->doorbell.ctx, &w6, 0);
    t0 = now();
    r = p->doorbell.wait(p->doorbell.ctx, &w6, 0u, MS(3));
    t1 = now();
    CHECK("ring_without_sleepers", r == -ETIMEDOUT && t1 - t0 >= (uint64_t)MS(3));

    /* an ISR cannot block: the wait refuses */
    g_isr_word = &w6;
    g_isr_r = 1;
    k = g_isr_runs;
    isr_after(ISR_WAIT, 1);
    while (g_isr_runs == k)
        e2e_delay(1);
    CHECK("wait_in_isr_refused", g_isr_r == -EINTR);

    CHECK("lock_hooks_portable", p->lock_try == 0 && p->lock_release == 0);

    /* identity: one per task, stable; foreign pid without bit 30 */
    CHECK("proc_self", p->proc_self(p->ctx, &pid, &tok) == 0 &&
                           p->proc_self(p->ctx, &pid2, &tok2) == 0 && pid == pid2 && tok == tok2 &&
                           (pid & 0x80000000u) && !(pid & 0x40000000u) && tok != 0 &&
                           tok != MDCOM_TOKEN_ANY && e2e_is_thread_pid(pid));
    CHECK("proc_alive_self",
          p->proc_alive(p->ctx, pid, tok) == 1 && p->proc_alive(p->ctx, pid, MDCOM_TOKEN_ANY) == 1);
    CHECK("proc_alive_wrong_token", p->proc_alive(p->ctx, pid, tok + 1u) == 0);
    CHECK("proc_alive_other_domain_unknown",
          p->proc_alive(p->ctx, MDCOM_BM_PID, 1u) < 0 && p->proc_alive(p->ctx, 1234u, 1u) < 0);
    /* helpers that ended: dead (their slots may hold other tasks by now:
     * the token tells the incarnations apart) */
    CHECK("proc_alive_ended_task", p->proc_alive(p->ctx, h.pid, h.token) == 0 &&
                                       p->proc_alive(p->ctx, h2.pid, h2.token) == 0);
    /* deleted while it waits: dead at once, and its wait record leaves the
     * list (the next ring on the word must not touch the freed stack) */
    atomic_store(&w2, 0u);
    helper_start(&h, &w2, 0u, MS(10000), E2E_PRIO_MAIN - 1u);
    e2e_delay(3);
    r = p->proc_alive(p->ctx, h.pid, h.token);
    /* two live threads: two identities (a thread that ended may have left
     * its slot to a later one: only live ones are compared) */
    CHECK("proc_per_task",
          h.pid != pid && e2e_is_thread_pid(h.pid) && h.token != 0 && h.token != MDCOM_TOKEN_ANY);
    e2e_kill(h.task);
    CHECK("proc_alive_deleted_task", r == 1 && p->proc_alive(p->ctx, h.pid, h.token) == 0 &&
                                         p->proc_alive(p->ctx, h.pid, MDCOM_TOKEN_ANY) == 0);
    e2e_delay(3); /* the idle task frees its stack */
    atomic_store(&w2, 1u);
    p->doorbell.ring(p->doorbell.ctx, &w2, 0);
    atomic_store(&w2, 0u);
    helper_start(&h, &w2, 0u, MS(1000), E2E_PRIO_MAIN + 1u);
    e2e_delay(2);
    atomic_store(&w2, 1u);
    p->doorbell.ring(p->doorbell.ctx, &w2, 0);
    CHECK("wait_after_deleted_waiter", helper_join(&h, 100) && h.r == 0);
#undef CHECK
    result("port", ok == n);
    kv("checks", n);
    kv("passed", ok);
    if (*failed) {
        mdcom_bm_puts(" first_failed=");
        mdcom_bm_puts(failed);
    }
    mdcom_bm_puts("\n");
    /* the numbers behind the checks */
    mdcom_bm_puts("RESULT port_timing PASS");
    kv("tick_ns", g_tick_ns);
    tmo_print("wait", &ts);
    kv("idle_runs_wait_100ms", idle_wait);
    kv("idle_runs_spin_100ms", idle_busy);
    kv("wake_task_min_ns", min5(lat_task));
    kv("wake_task_median_ns", median5(lat_task));
    kv("wake_task_first_ns", lat_task[0]);
    kv("wake_isr_min_ns", min5(lat_isr));
    kv("wake_isr_median_ns", median5(lat_isr));
    kv("wake_isr_first_ns", lat_isr[0]);
    kv("wake_doorbell_min_ns", min5(lat_db));
    kv("wake_doorbell_median_ns", median5(lat_db));
    mdcom_bm_puts("\n");
}

/* ---------------------------------------------------------------- */
/* Attachments: one per task                                          */
/* ---------------------------------------------------------------- */

static mdcom_t *attach(const char *who)
{
    /* the layout computed on the build host; no heartbeat */
    return fw_attach(who, &mdcom_frt_layout, MDCOM_FRT_DOM_M4, MS(10000), 0);
}

static mdcom_fifoch_t *fifo(mdcom_t *m, const char *name)
{
    mdcom_fifoch_t *ch;
    int r = mdcom_fifoch_open(m, name, &ch);
    if (r)
        die(name, r);
    mdcom_fifoch_set_spin(ch, MDCOM_NO_SPIN); /* block at once: the point is the port's wait */
    return ch;
}

static mdcom_smemch_t *smem(mdcom_t *m, const char *name)
{
    mdcom_smemch_t *ch;
    int r = mdcom_smemch_open(m, name, &ch);
    if (r)
        die(name, r);
    return ch;
}

/* ---------------------------------------------------------------- */
/* local: task -> task and ISR -> task through the library             */
/* ---------------------------------------------------------------- */

#define LOCAL_ROUNDS 3u

typedef struct rcv {
    volatile int r, done;
    volatile uint64_t t_end;
    uint32_t msg[2];
} rcv;

static void rcv_task(void *arg)
{
    rcv *x = arg;
    mdcom_t *m = attach("rcv");
    mdcom_fifoch_t *ch = fifo(m, "loc");
    uint32_t k;
    /* rounds from a task, then from the ISR */
    for (k = 0; k < 2u * LOCAL_ROUNDS; k++) {
        x[k].r = mdcom_fifoch_recv(ch, x[k].msg, sizeof(x[k].msg), MS(2000));
        x[k].t_end = now();
        x[k].done = 1;
    }
    mdcom_term(m);
    e2e_exit();
}

static void isr_holder_task(void *arg)
{
    (void)arg;
    mdcom_t *m = attach("isr");
    g_isr_ch = fifo(m, "loc");
    e2e_park(); /* the attachment is the ISR's from now on */
}

static void test_local(mdcom_t *m)
{
    static rcv x[2u * LOCAL_ROUNDS];
    mdcom_fifoch_t *ch = fifo(m, "loc");
    uint32_t msg[2] = {0x7a5c, 1}, k, j, ok_task = 1, ok_isr = 1, best_task = 0xffffffffu,
             best_isr = 0xffffffffu, isr_err = 0;
    uint64_t t0;
    int r;
    memset(x, 0, sizeof(x));
    (void)e2e_spawn(isr_holder_task, "isrhold", E2E_STACK_MDCOM, 0, E2E_PRIO_MAIN + 1u);
    (void)e2e_spawn(rcv_task, "rcv", E2E_STACK_MDCOM, x, E2E_PRIO_MAIN + 1u);
    for (k = 0; k < 1000 && !g_isr_ch; k++)
        e2e_delay(1);
    for (j = 0; j < LOCAL_ROUNDS; j++) {
        e2e_delay(5); /* rcv blocks in recv */
        t0 = now();
        r = mdcom_fifoch_send(ch, msg, sizeof(msg), MS(100));
        for (k = 0; k < 200 && !x[j].done; k++)
            e2e_delay(1);
        if (r || !x[j].done || x[j].r != (int)sizeof(msg) || x[j].msg[0] != 0x7a5c)
            ok_task = 0;
        else if (x[j].t_end - t0 < best_task)
            best_task = (uint32_t)(x[j].t_end - t0);
    }
    result("local_task_wakes_recv", ok_task && best_task < g_tick_ns / 2u);
    kv("rounds", LOCAL_ROUNDS);
    kv("best_wake_ns", best_task);
    mdcom_bm_puts("\n");
    for (j = LOCAL_ROUNDS; j < 2u * LOCAL_ROUNDS; j++) {
        e2e_delay(5);
        g_isr_r = 1;
        isr_after(ISR_SEND, 4);
        for (k = 0; k < 200 && !x[j].done; k++)
            e2e_delay(1);
        if (g_isr_r)
            isr_err = (uint32_t)-g_isr_r;
        if (g_isr_r || !x[j].done || x[j].r != (int)sizeof(msg) || x[j].msg[0] != 0x15e ||
            x[j].t_end < g_isr_ns)
            ok_isr = 0;
        else if (x[j].t_end - g_isr_ns < best_isr)
            best_isr = (uint32_t)(x[j].t_end - g_isr_ns);
    }
    result("local_isr_wakes_recv", ok_isr && best_isr < g_tick_ns / 2u);
    kv("rounds", LOCAL_ROUNDS);
    kv("best_wake_ns", best_isr);
    kv("isr_send_err", isr_err);
    mdcom_bm_puts("\n");
}

/* ---------------------------------------------------------------- */
/* task_reap: a task dies holding a lock                               */
/* ---------------------------------------------------------------- */

static volatile int g_victim_locked;

static void victim_task(void *arg)
{
    (void)arg;
    mdcom_t *m = attach("victim");
    mdcom_smemch_t *ch = smem(m, "victim");
    g_victim_locked = mdcom_smemch_lock(ch, MS(1000)) == 0 ? 1 : -1;
    e2e_park(); /* holds it until deleted: no unlock, no mdcom_term */
}

static void test_reap(mdcom_t *m)
{
    mdcom_smemch_t *ch = smem(m, "victim");
    e2e_thread v;
    uint64_t t0;
    int busy, busy2, r, k;
    v = e2e_spawn(victim_task, "victim", E2E_STACK_MDCOM, 0, E2E_PRIO_MAIN + 1u);
    for (k = 0; k < 1000 && !g_victim_locked; k++)
        e2e_delay(1);
    busy = mdcom_smemch_trylock(ch);       /* a live holder: busy */
    busy2 = mdcom_smemch_lock(ch, MS(50)); /* and it stays so */
    e2e_kill(v);                           /* dies holding it */
    t0 = now();
    r = mdcom_smemch_lock(ch, MS(3000)); /* its process is reaped, the lock freed */
    result("task_reap", g_victim_locked == 1 && busy == -EBUSY && busy2 == -ETIMEDOUT && r == 0);
    kv("trylock_err", (uint32_t)-busy);
    kv("lock50ms_err", (uint32_t)-busy2);
    kv("lock_err", (uint32_t)-r);
    kv("reap_us", (uint32_t)((now() - t0) / 1000u));
    mdcom_bm_puts("\n");
    if (r == 0)
        mdcom_smemch_unlock(ch);
}

/* ---------------------------------------------------------------- */
/* Traffic tasks                                                       */
/* ---------------------------------------------------------------- */

static struct {
    volatile int done;
    uint32_t got, bad, bad_sender, err;
    uint32_t next[FRT_PEERS];
    tmo_stat tmo;
    uint32_t idle_in_tmo, idle_tmo_n;
} g_rx;

static void rx_task(void *arg)
{
    static uint8_t buf[FRT_MSG_MAX];
    mdcom_t *m = attach("rx");
    mdcom_fifoch_t *up = fifo(m, "up");
    uint64_t last = now();
    (void)arg;
    while (g_rx.got < FRT_PEERS * FRT_UP_COUNT && now() - last < (uint64_t)MS(60000)) {
        uint32_t i0 = e2e_idle_runs;
        uint64_t t0 = now();
        int r = mdcom_fifoch_recv(up, buf, sizeof(buf), MS(20));
        uint64_t t1 = now();
        if (r == -ETIMEDOUT) {
            tmo_add(&g_rx.tmo, t0, t1, e2e_ticks(), MS(20));
            g_rx.idle_in_tmo += e2e_idle_runs - i0;
            g_rx.idle_tmo_n++;
            continue;
        }
        if (r < 0) {
            g_rx.err = (uint32_t)-r;
            break;
        }
        last = t1;
        frt_msg_hdr h;
        if ((uint32_t)r < sizeof(h)) {
            g_rx.bad++;
            continue;
        }
        memcpy(&h, buf, sizeof(h));
        if (h.sender >= FRT_PEERS) {
            g_rx.bad_sender++;
            continue;
        }
        if (h.seq != g_rx.next[h.sender] || h.len != (uint32_t)r - sizeof(h) ||
            h.len != frt_payload_len(h.sender, h.seq) || fw_crc32(buf + sizeof(h), h.len) != h.crc)
            g_rx.bad++;
        else {
            uint32_t i;
            for (i = 0; i < h.len; i++)
                if (buf[sizeof(h) + i] != frt_payload_byte(h.sender, h.seq, i))
                    break;
            if (i != h.len)
                g_rx.bad++;
        }
        g_rx.next[h.sender] = h.seq + 1u;
        g_rx.got++;
    }
    g_rx.done = 1;
    mdcom_term(m);
    e2e_park();
}

static struct {
    volatile int done;
    uint32_t sent[FRT_PEERS], err;
} g_tx;

static void tx_task(void *arg)
{
    static uint8_t buf[FRT_MSG_MAX];
    mdcom_t *m = attach("tx");
    mdcom_fifoch_t *down[FRT_PEERS] = {fifo(m, "down0"), fifo(m, "down1")};
    uint32_t seq, i, k;
    (void)arg;
    for (seq = 0; seq < FRT_DOWN_COUNT && !g_tx.err; seq++) {
        for (i = 0; i < FRT_PEERS; i++) {
            frt_msg_hdr h = {FRT_FW_SENDER, seq, frt_payload_len(FRT_FW_SENDER + i, seq), 0};
            for (k = 0; k < h.len; k++)
                buf[sizeof(h) + k] = frt_payload_byte(FRT_FW_SENDER + i, seq, k);
            h.crc = fw_crc32(buf + sizeof(h), h.len);
            memcpy(buf, &h, sizeof(h));
            /* blocks while the peer's pool is full (it may not be attached
             * yet): the peer's free rings the UART doorbell */
            int r = mdcom_fifoch_send(down[i], buf, sizeof(h) + h.len, MS(60000));
            if (r) {
                g_tx.err = (uint32_t)-r;
                break;
            }
            g_tx.sent[i]++;
        }
    }
    g_tx.done = 1;
    mdcom_term(m);
    e2e_park();
}

typedef struct smem_res {
    volatile int done;
    uint32_t mark, rounds, disturbed, busy, err;
    tmo_stat tmo;
} smem_res;

static smem_res g_sm[2];

static void smem_task(void *arg)
{
    smem_res *s = arg;
    mdcom_t *m = attach("smem");
    mdcom_smemch_t *ch = smem(m, "state");
    volatile uint32_t *area;
    void *pa;
    uint64_t start = now();
    mdcom_smemch_get(ch, &pa, 0);
    area = (volatile uint32_t *)pa;
    while (s->rounds < FRT_SMEM_ROUNDS && now() - start < (uint64_t)MS(90000)) {
        uint64_t t0 = now();
        int r = mdcom_smemch_lock(ch, MS(2));
        if (r == -ETIMEDOUT) {
            tmo_add(&s->tmo, t0, now(), e2e_ticks(), MS(2));
            s->busy++;
            continue;
        }
        if (r) {
            s->err = (uint32_t)-r;
            break;
        }
        if (fw_smem_bump(area, s->mark))
            s->disturbed++;
        /* hold it a little: the others find it taken; every 32nd round
         * the second thread holds it 5 ticks, so that the first one's 2 ms
         * lock waits time out (their overshoot is measured) and the others
         * are woken by the unlock's ring */
        for (uint32_t k = 0; k < 200; k++)
            __asm__ __volatile__("" ::: "memory");
        if (s == &g_sm[1] && (s->rounds & 31u) == 31u)
            e2e_delay(5);
        if (area[FRT_W_HOLDER] != s->mark)
            s->disturbed++;
        r = mdcom_smemch_unlock(ch);
        if (r) {
            s->err = (uint32_t)-r;
            break;
        }
        s->rounds++;
        if ((s->rounds & 7u) == 0)
            e2e_delay(1); /* let the other thread in between */
    }
    s->done = 1;
    mdcom_term(m);
    e2e_park();
}

/* timeouts of the library's recv on an always-empty channel */
static struct {
    volatile int done;
    tmo_stat tmo;
    uint32_t err;
} g_to;

static void timeout_task(void *arg)
{
    static const int64_t tmo[] = {MS(1), US(1500), MS(2), MS(5), US(7700), MS(20)};
    mdcom_t *m = attach("tmo");
    mdcom_fifoch_t *ch = fifo(m, "never");
    uint32_t buf[4], k;
    (void)arg;
    for (k = 0; k < 60; k++) {
        int64_t want = tmo[k % 6];
        uint64_t t0 = now();
        int r = mdcom_fifoch_recv(ch, buf, sizeof(buf), want);
        uint64_t t1 = now();
        if (r != -ETIMEDOUT) {
            g_to.err = r < 0 ? (uint32_t)-r : 1u;
            break;
        }
        tmo_add(&g_to.tmo, t0, t1, e2e_ticks(), want);
    }
    g_to.done = 1;
    mdcom_term(m);
    e2e_park();
}

/* ---------------------------------------------------------------- */
/* main task                                                           */
/* ---------------------------------------------------------------- */

static void report_traffic(mdcom_t *m)
{
    mdcom_smemch_t *st = smem(m, "state");
    volatile uint32_t *area;
    void *pa;
    uint32_t fin = 0, k, i, linux_rounds = 0, linux_dist = 0, counter = 0;
    int r;
    mdcom_smemch_get(st, &pa, 0);
    area = (volatile uint32_t *)pa;

    result("rx", g_rx.got == FRT_PEERS * FRT_UP_COUNT && g_rx.bad == 0 && g_rx.bad_sender == 0 &&
                     g_rx.err == 0 && tmo_never_early(&g_rx.tmo));
    kv("got", g_rx.got);
    kv("bad", g_rx.bad);
    kv("bad_sender", g_rx.bad_sender);
    kv("err", g_rx.err);
    tmo_print("tmo", &g_rx.tmo);
    kv("idle_runs_per_timeout", g_rx.idle_tmo_n ? g_rx.idle_in_tmo / g_rx.idle_tmo_n : 0);
    mdcom_bm_puts("\n");

    result("tx", g_tx.sent[0] == FRT_DOWN_COUNT && g_tx.sent[1] == FRT_DOWN_COUNT && g_tx.err == 0);
    kv("sent0", g_tx.sent[0]);
    kv("sent1", g_tx.sent[1]);
    kv("err", g_tx.err);
    mdcom_bm_puts("\n");

    result("timeouts", g_to.err == 0 && g_to.tmo.n == 60 && tmo_ok(&g_to.tmo));
    kv("err", g_to.err);
    tmo_print("recv", &g_to.tmo);
    mdcom_bm_puts("\n");

    /* the peers' marks (written under the lock when they are done); read
     * without taking the lock while they run (see frt_proto.h), then under
     * it once they are done */
    for (k = 0; k < 120000; k += 10) {
        for (fin = 0, i = 0; i < FRT_PEERS; i++)
            fin += __atomic_load_n(&area[FRT_W_FIN + i], __ATOMIC_ACQUIRE) == 1u;
        if (fin == FRT_PEERS)
            break;
        e2e_delay(10);
    }
    if (fin == FRT_PEERS && (r = mdcom_smemch_lock(st, MS(1000))) == 0) {
        counter = area[FRT_W_COUNTER];
        for (i = 0; i < FRT_PEERS; i++) {
            linux_rounds += area[FRT_W_DONE + i];
            linux_dist += area[FRT_W_DIST + i];
        }
        mdcom_smemch_unlock(st);
    }
    for (i = 0; i < 2; i++) {
        result(i ? "smem_task1" : "smem_task0", g_sm[i].rounds == FRT_SMEM_ROUNDS &&
                                                    g_sm[i].disturbed == 0 && g_sm[i].err == 0 &&
                                                    tmo_never_early(&g_sm[i].tmo));
        kv("rounds", g_sm[i].rounds);
        kv("disturbed", g_sm[i].disturbed);
        kv("err", g_sm[i].err);
        tmo_print("lock_tmo", &g_sm[i].tmo);
        mdcom_bm_puts("\n");
    }
    result("smem_lock_timeouts_measured", g_sm[0].tmo.n > 0);
    kv("n", g_sm[0].tmo.n);
    mdcom_bm_puts("\n");
    result("smem_all", fin == FRT_PEERS && linux_dist == 0 &&
                           counter == g_sm[0].rounds + g_sm[1].rounds + linux_rounds &&
                           linux_rounds == FRT_PEERS * FRT_SMEM_ROUNDS);
    kv("peers_done", fin);
    kv("counter", counter);
    kv("fw_rounds", g_sm[0].rounds + g_sm[1].rounds);
    kv("linux_rounds", linux_rounds);
    kv("linux_disturbed", linux_dist);
    kv("fw_lock_timeouts", g_sm[0].busy + g_sm[1].busy);
    mdcom_bm_puts("\n");
}

void e2e_main(void *arg)
{
    mdcom_t *m;
    e2e_stats st;
    uint32_t idle0, k;
    uint64_t t0;
    (void)arg;
    g_tick_ns = e2e_tick_ns();
    /* the test interrupt (mdcom_bm_app_irq), below FreeRTOS's
     * configMAX_SYSCALL_INTERRUPT_PRIORITY */
    mdcom_bm_nvic_enable(APP_IRQ, 0x40);
    mdcom_bm_puts(e2e_image);
    mdcom_bm_puts(" on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(", ");
    mdcom_bm_puts(e2e_kernel);
    mdcom_bm_puts(", boot ");
    mdcom_bm_put_u32(mdcom_bm_boot_token());
    mdcom_bm_puts("\n");
    test_port();
    m = attach("main"); /* the master: formats the region */
    mdcom_bm_puts("READY\n");
    test_local(m);
    test_reap(m);
    g_sm[0].mark = 0x46520001u;
    g_sm[1].mark = 0x46520002u;
    idle0 = e2e_idle_runs;
    t0 = now();
    (void)e2e_spawn(rx_task, "rx", E2E_STACK_MDCOM, 0, 3);
    (void)e2e_spawn(tx_task, "tx", E2E_STACK_MDCOM, 0, 2);
    (void)e2e_spawn(smem_task, "smem0", E2E_STACK_MDCOM, &g_sm[0], 2);
    (void)e2e_spawn(smem_task, "smem1", E2E_STACK_MDCOM, &g_sm[1], 3);
    /* above the others (and main, which sleeps meanwhile): its timeouts
     * measure the port, not the scheduler */
    (void)e2e_spawn(timeout_task, "tmo", E2E_STACK_MDCOM, 0, E2E_PRIO_MAIN + 1u);
    /* the traffic tasks end by themselves (counts reached, or timeouts);
     * once the firmware's SMEM rounds are done, the peers' begin */
    for (k = 0; !(g_sm[0].done && g_sm[1].done); k++)
        e2e_delay(10);
    {
        mdcom_smemch_t *sc = smem(m, "state");
        void *pa;
        mdcom_smemch_get(sc, &pa, 0);
        /* release: our rounds come before the peers see the phase */
        __atomic_store_n(&((uint32_t *)pa)[FRT_W_PHASE], 1u, __ATOMIC_RELEASE);
    }
    for (k = 0; !(g_rx.done && g_tx.done && g_to.done); k++)
        e2e_delay(10);
    mdcom_bm_puts("traffic done after ");
    mdcom_bm_put_u32((uint32_t)((now() - t0) / 1000000u));
    mdcom_bm_puts(" ms\n");
    report_traffic(m);
    e2e_get_stats(&st);
    mdcom_bm_puts("RESULT doorbell PASS");
    kv("waits", st.waits);
    kv("sleeps", st.sleeps);
    kv("woken", st.woken);
    kv("timeouts", st.timeouts);
    kv("rings_task", st.rings_task);
    kv("rings_isr", st.rings_isr);
    kv("uart_doorbells", st.doorbells);
    kv("wake_mean_ns", st.wake_n ? (uint32_t)(st.wake_sum_ns / st.wake_n) : 0);
    kv("wake_max_ns", st.wake_max_ns);
    kv("idle_runs", e2e_idle_runs - idle0);
    mdcom_bm_puts("\n");
    result("uart_doorbell_used", st.doorbells > 0 && st.woken > 0);
    mdcom_bm_puts("\n");
    mdcom_term(m);
    mdcom_bm_puts(g_failed ? "DONE FAIL\n" : "DONE PASS\n");
    mdcom_bm_exit(g_failed ? 1 : 0);
}
