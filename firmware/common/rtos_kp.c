/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtos_kp.c - a firmware task deleted at EVERY store the core makes to
 * shared memory, in every public operation, and what the surviving tasks
 * find: the RTOS counterpart of tests/reliability/test_killpoints.cpp
 * (processes killed at every store), on the Cortex-M4 of QEMU mps2-an386,
 * over each kernel's image glue (mdcom_fw/rtos_e2e.h: fw_freertos.c,
 * fw_threadx.c) and its port. Tests qemu_freertos_killpoints and
 * qemu_threadx_killpoints (tests/qemu/test_qemu_rtos_kp.cpp).
 *
 * The image links a build of the core made with -DMDCOM_KILLPOINTS
 * (src/core/shm_access.h): every atomic store, CAS, fetch-add/sub and exchange, and
 * each plain store marked MDCOM_KP, calls mdcom_kp(address) first. The
 * mdcom_kp() below counts the calls of the victim task (its process
 * identity, the port's proc_self) that touch the region; at the n-th it
 * stops there, inside the call:
 *
 *   kill   the victim suspends itself for good and the survivor (the main
 *          task) deletes it (vTaskDelete / tx_thread_terminate): a task
 *          deleted in the middle of the call, with whatever it held;
 *   stop   the victim, attached with a heartbeat promise, sleeps there until
 *          the survivor has reaped it for the missed heartbeat, then runs on:
 *          its late stores must change nothing that is no longer its own
 *          (the incarnation of its process entry is over); "ran_on" counts
 *          the rounds whose late call still returned success (its work was
 *          done before the stop: a published enqueue, a claimed entry);
 *   busy   kill, while a third task (its own process) sends and receives on
 *          another channel: its records must not confuse the reaper.
 *
 * n runs 0, 1, 2, ... until the operation ends before reaching it, so every
 * (operation, kill point) pair is covered. After each death the survivor
 * reaps (mdcom_sense_process) and checks, through the public API:
 *   - no message duplicated or invented (seq + CRC), the survivor's queued
 *     1..3 delivered in order, at most the one in flight lost and then
 *     counted in the channel's `lost`;
 *   - every block in one place: after the drain the whole pool can be
 *     allocated, queued and drained (a block held by the dead, QUEUED in no
 *     entry or queued twice, or a queue position left unpublished fails it);
 *     the busy channel too;
 *   - the SMEM lock can be taken;
 *   - nobody is left attached but the survivor, and the victim's process
 *     slot is reusable: a new task attaches and detaches.
 *
 * Output: "RESULT kp_<op>_<variant> PASS|FAIL points=<n>" per sweep, the
 * first failing round's reason before it, "RESULT killpoints PASS|FAIL
 * pairs=<total>", and the image ends QEMU with 0 when all passed.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_fw/boot.h"
#include "mdcom_fw/proto.h" /* fw_crc32 */
#include "mdcom_fw/rtos_e2e.h"
#include "mdcom_kp_layout.h"

#define MS(x) ((int64_t)(x)*1000000)
#define DOM MDCOM_KP_DOM_M4
#define BLOCKS 8u      /* "q" */
#define BUSY_BLOCKS 4u /* "busy" */
#define HB_MS 100u     /* the stopped victim's heartbeat promise */
#define KP_MAX 400     /* a sweep longer than this is a runaway */
#define PRIO_VICTIM 2u /* below the survivor (E2E_PRIO_MAIN), which sleeps while it waits */
#define PRIO_BUSY 1u   /* runs while the victim is stopped or blocked */

volatile uint32_t e2e_idle_runs;

enum {
    OP_ALLOC,
    OP_ENQUEUE,
    OP_DEQUEUE,
    OP_FREE,
    OP_SEND,
    OP_RECV,
    OP_NOTIFY,
    OP_LOCK,
    OP_UNLOCK,
    OP_ATTACH,
    OP_TERM,
    N_OPS
};
static const char *const op_names[N_OPS] = {"alloc",  "enqueue", "dequeue", "free",
                                            "send",   "recv",    "notify",  "lock",
                                            "unlock", "attach",  "term"};
enum { V_KILL, V_BUSY, V_STOP, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {"kill", "busy", "stop"};

typedef struct msg {
    uint32_t seq, crc;
} msg;

static msg make_msg(uint32_t seq)
{
    msg m;
    m.seq = seq;
    m.crc = fw_crc32(&m.seq, sizeof(m.seq));
    return m;
}

/* ---------------------------------------------------------------- */
/* The kill-point hook the instrumented core calls                    */
/* ---------------------------------------------------------------- */

static volatile uint32_t g_armed; /* the victim's stores count */
static volatile uint32_t g_victim_pid;
static volatile long g_count, g_target;
static volatile uint32_t g_hit;  /* the victim reached its kill point */
static volatile uint32_t g_stop; /* 1: wait there for g_release (stop); 0: park (kill) */
static volatile uint32_t g_release;

void mdcom_kp(const volatile void *addr);
void mdcom_kp(const volatile void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    const mdcom_platform *p;
    uint32_t pid, token;
    if (!g_armed || a < mdcom_board_desc.region_base ||
        a >= mdcom_board_desc.region_base + mdcom_board_desc.region_size)
        return;
    p = e2e_platform();
    if (p->proc_self(p->ctx, &pid, &token) != 0 || pid != g_victim_pid)
        return; /* the survivor's or the busy task's store, or an ISR's */
    if (g_count++ != g_target)
        return;
    g_armed = 0;
    g_hit = 1;
    if (!g_stop)
        e2e_park(); /* deleted here by the survivor */
    while (!g_release)
        e2e_delay(1); /* no store, no heartbeat: reaped meanwhile */
}

static void arm(long n)
{
    g_count = 0;
    g_target = n;
    g_armed = 1;
}

/* ---------------------------------------------------------------- */
/* Output: the first failure of a sweep is the one to read            */
/* ---------------------------------------------------------------- */

static const char *g_tag;
static long g_n;
static int g_round_failed;

static void fail(const char *what, int v)
{
    if (g_round_failed++)
        return;
    mdcom_bm_puts("FAIL ");
    mdcom_bm_puts(g_tag);
    mdcom_bm_puts(" kp ");
    mdcom_bm_put_u32((uint32_t)g_n);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(" (");
    if (v < 0) {
        mdcom_bm_puts(mdcom_strerror(v));
    } else {
        mdcom_bm_put_u32((uint32_t)v);
    }
    mdcom_bm_puts(")\n");
}
#define CHECK(cond, what, v)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail(what, (int)(v));                                                                  \
    } while (0)

static int attach(mdcom_t **m, uint32_t hb_ms)
{
    char err[128];
    mdcom_init_opts o;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.attach_timeout_ns = MS(2000);
    o.heartbeat_ms = hb_ms;
    o.layout = &mdcom_kp_layout;
    return mdcom_init(m, mdcom_kp_layout.cfg, DOM, &o);
}

/* a tick-sleeping wait for *flag (no mdcom call), at most ms; 1 when set */
static int await(volatile uint32_t *flag, uint32_t ms)
{
    uint32_t t0 = e2e_ticks(), per_ms = 1000000u / e2e_tick_ns();
    while (!*flag) {
        if ((e2e_ticks() - t0) > ms * (per_ms ? per_ms : 1u))
            return 0;
        e2e_delay(1);
    }
    return 1;
}

/* ---------------------------------------------------------------- */
/* The victim and the busy task                                       */
/* ---------------------------------------------------------------- */

static volatile int g_op;
static volatile long g_victim_n;
static volatile uint32_t g_victim_done; /* it ended its operation before the kill point */
static volatile int g_victim_r, g_victim_setup;

static void victim_task(void *arg)
{
    const mdcom_platform *p = e2e_platform();
    mdcom_t *m = 0;
    mdcom_fifoch_t *q = 0;
    mdcom_smemch_t *s = 0;
    uint32_t pid, token, id = 0, len = 0;
    uint32_t hb = g_stop ? HB_MS : 0u;
    msg mine = make_msg(100);
    char buf[16];
    int op = g_op, r = 0;
    (void)arg;
    if (p->proc_self(p->ctx, &pid, &token) != 0) {
        g_victim_setup = -MDCOM_EUSERS;
        e2e_park();
    }
    g_victim_pid = pid;
    if (op == OP_ATTACH) {
        arm(g_victim_n);
        r = attach(&m, hb);
        g_armed = 0;
    } else {
        r = attach(&m, hb);
        if (r == 0)
            r = mdcom_fifoch_open(m, "q", &q);
        if (r == 0)
            r = mdcom_smemch_open(m, "s", &s);
        if (r == 0 && op == OP_ENQUEUE) {
            void *pl;
            r = mdcom_fifoch_alloc(q, &id);
            if (r == 0 && (r = mdcom_fifoch_get(q, id, &pl, 0)) == 0)
                memcpy(pl, &mine, sizeof(mine));
        } else if (r == 0 && op == OP_FREE) {
            r = mdcom_fifoch_dequeue(q, &id, &len);
        } else if (r == 0 && op == OP_UNLOCK) {
            r = mdcom_smemch_lock(s, MS(1000));
        }
        if (r) {
            g_victim_setup = r;
            e2e_park();
        }
        if (q)
            mdcom_fifoch_set_spin(q, MDCOM_NO_SPIN);
        arm(g_victim_n);
        switch (op) {
        case OP_ALLOC:
            r = mdcom_fifoch_alloc(q, &id);
            break;
        case OP_ENQUEUE:
            r = mdcom_fifoch_enqueue(q, id, sizeof(mine));
            break;
        case OP_DEQUEUE:
            r = mdcom_fifoch_dequeue(q, &id, &len);
            break;
        case OP_FREE:
            r = mdcom_fifoch_free(q, id);
            break;
        case OP_SEND:
            r = mdcom_fifoch_send(q, &mine, sizeof(mine), MS(1000));
            break;
        case OP_RECV:
            r = mdcom_fifoch_recv(q, buf, sizeof(buf), MS(1000));
            break;
        case OP_NOTIFY:
            r = mdcom_fifoch_notify(q);
            break;
        case OP_LOCK:
            r = mdcom_smemch_lock(s, MS(1000));
            break;
        case OP_UNLOCK:
            r = mdcom_smemch_unlock(s);
            break;
        case OP_TERM:
            r = mdcom_term(m);
            m = 0;
            break;
        default:
            break;
        }
        g_armed = 0;
    }
    /* a stopped victim that was reaped finds its call refused; a deleted
     * one never gets here */
    g_victim_r = r;
    if (m)
        (void)mdcom_term(m);
    g_victim_done = 1;
    e2e_exit();
}

static volatile uint32_t g_busy_stop, g_busy_done, g_busy_ready;
static volatile int g_busy_setup;

static void busy_task(void *arg)
{
    mdcom_t *m = 0;
    mdcom_fifoch_t *b = 0;
    char x[16] = {0};
    int r = attach(&m, 0);
    (void)arg;
    if (r == 0)
        r = mdcom_fifoch_open(m, "busy", &b);
    g_busy_setup = r;
    g_busy_ready = 1;
    while (r == 0 && !g_busy_stop) {
        (void)mdcom_fifoch_send(b, x, sizeof(x), MDCOM_POLL);
        (void)mdcom_fifoch_recv(b, x, sizeof(x), MDCOM_POLL);
    }
    if (m)
        (void)mdcom_term(m);
    g_busy_done = 1;
    e2e_exit();
}

static volatile uint32_t g_again_done;
static volatile int g_again_r;

static void again_task(void *arg)
{
    mdcom_t *m = 0;
    (void)arg;
    g_again_r = attach(&m, 0);
    if (m)
        (void)mdcom_term(m);
    g_again_done = 1;
    e2e_exit();
}

/* ---------------------------------------------------------------- */
/* The survivor                                                       */
/* ---------------------------------------------------------------- */

static mdcom_fifoch_t *g_q, *g_b;
static uint32_t g_ran_on; /* stopped victims whose late call succeeded (this sweep) */
static mdcom_smemch_t *g_s;

/* the whole pool of ch: allocated, queued and drained */
static void cycle_pool(mdcom_fifoch_t *ch, uint32_t blocks, const char *what)
{
    uint32_t ids[BLOCKS], k, n = 0, id, len;
    int r;
    for (k = 0; k < blocks; k++) {
        r = mdcom_fifoch_alloc(ch, &ids[n]);
        CHECK(r == 0, what, r);
        if (r == 0)
            n++;
    }
    for (k = 0; k < n; k++) {
        r = mdcom_fifoch_enqueue(ch, ids[k], 4);
        CHECK(r == 0, "enqueue of the pool", r);
    }
    for (k = 0; k < n; k++) {
        r = mdcom_fifoch_dequeue(ch, &id, &len);
        CHECK(r == 0, "dequeue of the pool", r);
        if (r == 0)
            CHECK(mdcom_fifoch_free(ch, id) == 0, "free of the pool", id);
    }
}

/* One (op, variant, n) round. 1 when the victim died (or stopped) at kill
 * point n, 0 when its operation ended before it, -1 on a failure. */
static int round_once(mdcom_t *m, int op, int variant, long n)
{
    mdcom_fifo_state st0, st1;
    e2e_thread v, busy = 0;
    uint32_t k, seen = 0, prev = 0, theirs = 0, lost, live;
    int r, finished, consumes = op == OP_DEQUEUE || op == OP_RECV || op == OP_FREE;
    uint32_t late_took = 0;
    g_n = n;
    g_round_failed = 0;
    for (k = 1; k <= 3; k++) {
        msg mm = make_msg(k);
        r = mdcom_fifoch_send(g_q, &mm, sizeof(mm), MDCOM_POLL);
        CHECK(r == 0, "the survivor's send", r);
    }
    memset(&st0, 0, sizeof(st0));
    (void)mdcom_sense_fifoch(g_q, &st0);
    g_hit = g_release = g_victim_done = 0;
    g_victim_setup = 0;
    g_stop = variant == V_STOP;
    g_op = op;
    g_victim_n = n;
    if (variant == V_BUSY) {
        g_busy_stop = g_busy_done = g_busy_ready = 0;
        g_busy_setup = 0;
        busy = e2e_spawn(busy_task, "busy", E2E_STACK_MDCOM, 0, PRIO_BUSY);
        CHECK(await(&g_busy_ready, 2000) && g_busy_setup == 0, "busy task attach", g_busy_setup);
    }
    v = e2e_spawn(victim_task, "victim", E2E_STACK_MDCOM, 0, PRIO_VICTIM);
    for (k = 0; k < 5000 && !g_hit && !g_victim_done && !g_victim_setup; k++)
        e2e_delay(1);
    CHECK(!g_victim_setup, "victim setup", g_victim_setup);
    CHECK(g_hit || g_victim_done, "victim neither reached its kill point nor ended", 0);
    finished = !g_hit && g_victim_done;
    if (g_hit && !g_stop) {
        e2e_kill(v); /* deleted inside its call */
    } else if (g_hit) {
        /* reaped for its missed heartbeat, then it runs on. A sense call
         * whose budget ran out only judges a heartbeat-dead entry (not
         * counted, not reaped): three answers of "only the survivor" on
         * three ticks, so that a scan has reaped it */
        uint32_t ones = 0;
        for (k = 0; k < 3000 && ones < 3; k++) {
            r = mdcom_sense_process(m, DOM);
            ones = r == 1 ? ones + 1 : 0;
            e2e_delay(1);
        }
        CHECK(ones == 3, "the stopped victim never reaped (live processes)", r);
        g_release = 1;
        CHECK(await(&g_victim_done, 3000), "the released victim did not end its call", 0);
        r = g_victim_r;
        CHECK(r >= 0 || r == -ENOTCONN || r == -EALREADY || r == -EPROTO,
              "the released victim's late call", r);
        /* a late dequeue / recv / free that still succeeded handed its
         * caller the message (one whose entry a stalled host left unreaped
         * past every sense call's budget): delivered, not lost */
        if (r >= 0)
            g_ran_on++;
        late_took = r >= 0 && consumes;
    } else if (g_victim_done) {
        CHECK(g_victim_r >= 0, "the victim's operation failed", g_victim_r);
    } else {
        e2e_kill(v); /* hung: a failure above; gone, so that the next round runs */
    }
    if (busy) {
        g_busy_stop = 1;
        CHECK(await(&g_busy_done, 2000), "busy task did not end", 0);
    }
    /* reap (three calls, as the process test: an audit fills a hole that
     * no record names once it was claimed two audits ago); nobody is left
     * but the survivor */
    for (k = 0; k < 3; k++)
        live = (uint32_t)mdcom_sense_process(m, DOM);
    CHECK(live == 1, "live processes after the reap", live);
    /* drain: 1..3 in order, at most one lost with a dead receiver and then
     * counted, the victim's 100 at most once */
    for (;;) {
        msg mm;
        r = mdcom_fifoch_recv(g_q, &mm, sizeof(mm), MDCOM_POLL);
        if (r == -ETIMEDOUT || r == -EAGAIN)
            break;
        CHECK(r == (int)sizeof(mm), "drain", r);
        if (r != (int)sizeof(mm))
            break;
        CHECK(mm.crc == fw_crc32(&mm.seq, sizeof(mm.seq)), "invented (CRC)", mm.seq);
        CHECK(mm.seq == 100u || (mm.seq >= 1u && mm.seq <= 3u), "invented", mm.seq);
        if (mm.seq > 100u || (mm.seq > 3u && mm.seq != 100u))
            continue;
        k = mm.seq == 100u ? 4u : mm.seq;
        CHECK(!(seen & (1u << k)), "duplicated", mm.seq);
        seen |= 1u << k;
        if (mm.seq <= 3u) {
            CHECK(mm.seq > prev, "out of order", mm.seq);
            prev = mm.seq;
            theirs++;
        }
    }
    memset(&st1, 0, sizeof(st1));
    (void)mdcom_sense_fifoch(g_q, &st1);
    lost = st1.lost - st0.lost;
    if (!finished || !consumes)
        CHECK(theirs + lost + late_took >= 3u, "a queued message vanished uncounted (delivered)",
              theirs);
    CHECK(theirs >= (consumes ? 2u : 3u), "queued messages not delivered", theirs);
    CHECK(lost <= 1u, "lost", lost);
    /* nothing wedged */
    cycle_pool(g_q, BLOCKS, "a block of the pool missing");
    for (k = 0; k < 2 * BUSY_BLOCKS; k++) {
        char x[16];
        if (mdcom_fifoch_recv(g_b, x, sizeof(x), MDCOM_POLL) < 0)
            break;
    }
    cycle_pool(g_b, BUSY_BLOCKS, "a block of the busy pool missing");
    r = mdcom_smemch_lock(g_s, MS(500));
    CHECK(r == 0, "the lock wedged", r);
    if (r == 0)
        (void)mdcom_smemch_unlock(g_s);
    /* the slot is reusable */
    g_again_done = 0;
    (void)e2e_spawn(again_task, "again", E2E_STACK_MDCOM, 0, PRIO_VICTIM);
    CHECK(await(&g_again_done, 3000) && g_again_r == 0, "re-attach", g_again_r);
    if (g_round_failed)
        return -1;
    return finished ? 0 : 1;
}

static uint32_t g_failed;

/* s appended at t of buf (NUL-terminated, cut at cap); the new end */
static size_t append(char *buf, size_t t, size_t cap, const char *s)
{
    while (*s && t + 1 < cap)
        buf[t++] = *s++;
    buf[t] = 0;
    return t;
}

void e2e_main(void *arg)
{
    mdcom_t *m;
    uint32_t pairs = 0;
    int op, variant, r;
    (void)arg;
    mdcom_bm_puts("mdcom kill points on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(", ");
    mdcom_bm_puts(e2e_kernel);
    mdcom_bm_puts("\n");
    r = attach(&m, 0); /* the master: formats the region */
    if (r)
        fw_die("kp", "mdcom_init", r);
    if ((r = mdcom_fifoch_open(m, "q", &g_q)) != 0 ||
        (r = mdcom_fifoch_open(m, "busy", &g_b)) != 0 || (r = mdcom_smemch_open(m, "s", &g_s)) != 0)
        fw_die("kp", "open", r);
    mdcom_bm_puts("READY\n");
    for (op = 0; op < N_OPS; op++) {
        for (variant = 0; variant < N_VARIANTS; variant++) {
            char tag[40];
            long n, points = 0;
            int ok = 1;
            size_t t = 0;
            t = append(tag, t, sizeof(tag), "kp_");
            t = append(tag, t, sizeof(tag), op_names[op]);
            t = append(tag, t, sizeof(tag), "_");
            (void)append(tag, t, sizeof(tag), variant_names[variant]);
            g_tag = tag;
            g_ran_on = 0;
            for (n = 0; n < KP_MAX; n++) {
                r = round_once(m, op, variant, n);
                if (r < 0)
                    ok = 0;
                if (r <= 0)
                    break;
                points++;
            }
            if (n == KP_MAX)
                ok = 0;
            /* every operation but notify stores into the region (notify
             * with nobody waiting only rings: its one round ends at once,
             * and is checked all the same) */
            ok = ok && (points > 0 || op == OP_NOTIFY);
            pairs += (uint32_t)points;
            g_failed += (uint32_t)mdcom_bm_result(tag, ok);
            mdcom_bm_put_kv("points", (uint32_t)points);
            if (variant == V_STOP)
                mdcom_bm_put_kv("ran_on", g_ran_on);
            mdcom_bm_puts("\n");
        }
    }
    g_failed += (uint32_t)mdcom_bm_result("killpoints", g_failed == 0);
    mdcom_bm_put_kv("pairs", pairs);
    mdcom_bm_put_kv("idle_runs", e2e_idle_runs);
    mdcom_bm_puts("\n");
    mdcom_term(m);
    mdcom_bm_puts(g_failed ? "DONE FAIL\n" : "DONE PASS\n");
    mdcom_bm_exit(g_failed ? 1 : 0);
}
