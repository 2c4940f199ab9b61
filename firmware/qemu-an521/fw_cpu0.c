/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_cpu0.c - mdcom-fw-an521-cpu0: the master domain "cpu0" of an521.toml on
 * CPU0 of the SSE-200. Formats the region, releases CPU1 (CPUWAIT), then
 * drives CPU1's services (fw_cpu1.c) and checks every answer:
 *
 *   mhu        the MHU driver: per-channel set / status / clear, interrupt
 *   port       the port conformance checks that run on one core (region,
 *              clock, doorbell wait / timeout / wake by the MHU interrupt,
 *              process identity)
 *   ping       CPU1 attached (boot token), the doorbell reached it
 *   echo_poll  FIFO echo, varied lengths, seq + CRC checked on both sides,
 *              both cores polling
 *   echo_mhu   the same, both cores sleeping in WFI until the MHU interrupt
 *   smem_lock  both cores lock "state" at the same time, rounds each:
 *              no disturbed hold, counter = 2 * rounds, and contended (an
 *              -EBUSY seen; else run again, up to 6 attempts)
 *   smem3      if a Linux process attached as domain "linux" (word [4] of
 *              "state" set within 5 s): the same with three contenders,
 *              Linux taking the lock until both cores are done; counter =
 *              2 * rounds + Linux's rounds (else "RESULT smem3 SKIP")
 *   smem_nolock the same rounds without the lock (negative control): lost
 *              updates show that the two cores really ran in parallel
 *   blockack   header + bytes cut into blocks, CPU1 acks the byte count
 *   rtt_poll / rtt_mhu  round trips of a 16-byte message (timing, SysTick)
 *   rpmsg_poll / rpmsg_mhu  RPMsg between the cores (CPU0 host, CPU1 the
 *              remote echo): messages of varied length with seq + CRC,
 *              checked on both sides
 *   rpmsg_rtt_poll / rpmsg_rtt_mhu  its round trips of a 16-byte message,
 *              the same work as rtt_poll / rtt_mhu (timing)
 *
 * Each prints "RESULT <name> PASS|FAIL key=value ..." on UART0; the image
 * ends QEMU through semihosting with 0 when all passed, 1 otherwise.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_fw/proto.h"
#include "mdcom/mdcom.h"
#include "mdcom/rpmsg.h"
#include "mdcom_an521_layout.h"
#include "smem_round.h"

#define MS(x) ((int64_t)(x)*1000000)

#ifndef AN521_SMEM_ROUNDS
#define AN521_SMEM_ROUNDS 100000u
#endif
#define ECHO_COUNT 20000u
#define ECHO_MHU_COUNT 5000u
#define RTT_COUNT 5000u
#define RPMSG_COUNT 2000u
#define BA_COUNT 100u

static mdcom_t *g_m;
static mdcom_fifoch_t *g_ctl, *g_rsp, *g_ein, *g_eout, *g_bulk, *g_ack;
static mdcom_smemch_t *g_state, *g_rpmsg;
static uint32_t g_failed;

static void die(const char *what, int r)
{
    mdcom_bm_puts("cpu0: ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(mdcom_strerror(r));
    mdcom_bm_puts("\n");
    mdcom_bm_exit(2);
}

#define kv mdcom_bm_put_kv

static void result(const char *name, int ok) { g_failed += (uint32_t)mdcom_bm_result(name, ok); }

static int cmd(uint32_t op, uint32_t mode, uint32_t count, uint32_t arg)
{
    fw_cmd c = {op, mode, count, arg};
    return mdcom_fifoch_send(g_ctl, &c, sizeof(c), MS(FW_IDLE_MS));
}

static int answer(fw_rsp *o)
{
    int r = mdcom_fifoch_recv(g_rsp, o, sizeof(*o), MS(4 * FW_IDLE_MS));
    return r == (int)sizeof(*o) ? 0 : r < 0 ? r : -EBADMSG;
}

static void set_mode(uint32_t mode)
{
    uint32_t spin = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    mdcom_fifoch_t *chs[] = {g_ein, g_eout, g_bulk, g_ack, g_rsp};
    unsigned i;
    for (i = 0; i < sizeof(chs) / sizeof(chs[0]); i++)
        mdcom_fifoch_set_spin(chs[i], spin);
}

/* Send (tx) or receive one message with the timeout of mode: doorbell mode
 * sleeps (WFI) in the core's wait; poll mode spins with MDCOM_POLL calls,
 * reading the clock (MMIO: SysTick) once every 1024 of them. */
static int xfer_m(mdcom_fifoch_t *ch, void *b, uint32_t n, uint32_t mode, int tx)
{
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(FW_IDLE_MS);
    int64_t tmo = mode == FW_MODE_DOORBELL ? MS(FW_IDLE_MS) : MDCOM_POLL;
    uint32_t spins = 0;
    for (;;) {
        int r = tx ? mdcom_fifoch_send(ch, b, n, tmo) : mdcom_fifoch_recv(ch, b, n, tmo);
        if (tmo != MDCOM_POLL || (r != -ENOBUFS && r != -EAGAIN && r != -ETIMEDOUT))
            return r;
        if ((++spins & 1023u) == 0 && mdcom_bm_now_ns() >= end)
            return -ETIMEDOUT;
    }
}

static int send_m(mdcom_fifoch_t *ch, const void *b, uint32_t n, uint32_t mode)
{
    return xfer_m(ch, (void *)(uintptr_t)b, n, mode, 1);
}

static int recv_m(mdcom_fifoch_t *ch, void *b, uint32_t cap, uint32_t mode)
{
    return xfer_m(ch, b, cap, mode, 0);
}

static uint32_t g_rng = 0x12345678u;
static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}

static void test_mhu(void)
{
    uint32_t irq0 = mdcom_an521_mhu_irqs(1), st1, st_after, k;
    /* towards CPU1 (still held in CPUWAIT): bits stay pending, readable */
    mdcom_an521_mhu_set(1, 1, 0x5u);
    st1 = mdcom_an521_mhu_status(1, 1);
    mdcom_an521_mhu_clear(1, 1, 0x1u);
    st_after = mdcom_an521_mhu_status(1, 1);
    mdcom_an521_mhu_clear(1, 1, 0xfu);
    /* towards this core: the interrupt runs and clears the bits */
    mdcom_an521_mhu_set(1, 0, 0xau);
    for (k = 0; k < 1000 && mdcom_an521_mhu_irqs(1) == irq0; k++)
        __asm__ __volatile__("nop");
    result("mhu", st1 == 0x5u && st_after == 0x4u && mdcom_an521_mhu_status(1, 1) == 0 &&
                      mdcom_an521_mhu_irqs(1) == irq0 + 1u && mdcom_an521_mhu_status(1, 0) == 0);
    kv("stat_set", st1);
    kv("stat_clr1", st_after);
    kv("irqs", mdcom_an521_mhu_irqs(1) - irq0);
    mdcom_bm_puts("\n");
}

/* The port conformance checks of tests/conformance that can run here, on
 * the bare-metal port of this core, before the library is initialised
 * (what needs two parties - the region shared, a ring waking the other core,
 * the lock - is covered by the tests below with CPU1). */
static void test_port(void)
{
    const mdcom_platform *p = mdcom_platform_baremetal();
    mdcom_region_map map;
    mdcom_aword word;
    uint32_t pid, pid2, tok, tok2, ok = 0, n = 0, k;
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
    memset(&map, 0, sizeof(map));
    r = p->region_open(p->ctx, "mdcom-an521", 4096, MDCOM_REGION_CREATE, 0600, -1, 0, &map);
    CHECK("region_open", r == 0 && map.base == (void *)0x80000000u && map.size >= 4096u);
    if (r == 0) {
        w = (volatile uint32_t *)map.base;
        w[0] = 0xa5a5a5a5u;
        w[map.size / 4u - 1u] = 0x5a5a5a5au;
        CHECK("region_rw", w[0] == 0xa5a5a5a5u && w[map.size / 4u - 1u] == 0x5a5a5a5au);
        w[0] = 0;
        w[map.size / 4u - 1u] = 0;
        p->region_close(p->ctx, &map, 0);
    }
    CHECK("region_too_big", p->region_open(p->ctx, "x", (32u << 20), 0, 0, -1, 0, &map) == -ENOSPC);
    prev = p->now_ns(p->ctx);
    for (k = 0, r = 1; k < 1000; k++) {
        uint64_t t = p->now_ns(p->ctx);
        if (t < prev)
            r = 0;
        prev = t;
    }
    CHECK("clock_monotonic", r);
    atomic_store(&word, 5u);
    t0 = p->now_ns(p->ctx);
    CHECK("wait_differs", p->doorbell.wait(p->doorbell.ctx, &word, 4u, MS(100)) == 0);
    t1 = p->now_ns(p->ctx);
    CHECK("wait_differs_at_once", t1 - t0 < (uint64_t)MS(2));
    t0 = p->now_ns(p->ctx);
    r = p->doorbell.wait(p->doorbell.ctx, &word, 5u, MS(3));
    t1 = p->now_ns(p->ctx);
    CHECK("wait_timeout",
          r == -ETIMEDOUT && t1 - t0 >= (uint64_t)MS(3) && t1 - t0 < (uint64_t)MS(50));
    /* a doorbell interrupt (our own MHU0 channel 0) ends a wait on an unchanged word */
    mdcom_an521_mhu_set(0, 0, 1u);
    t0 = p->now_ns(p->ctx);
    r = p->doorbell.wait(p->doorbell.ctx, &word, 5u, MS(1000));
    t1 = p->now_ns(p->ctx);
    CHECK("wait_ring_wakes", r == 0 && t1 - t0 < (uint64_t)MS(500));
    CHECK("lock_hooks_portable", p->lock_try == 0 && p->lock_release == 0);
    CHECK("proc_self", p->proc_self(p->ctx, &pid, &tok) == 0 &&
                           p->proc_self(p->ctx, &pid2, &tok2) == 0 && pid == pid2 && tok == tok2 &&
                           pid == MDCOM_BM_PID && (pid & 0x80000000u));
    CHECK("proc_alive_self", p->proc_alive(p->ctx, pid, tok) == 1);
    CHECK("proc_alive_wrong_token", p->proc_alive(p->ctx, pid, tok + 1u) == 0);
    CHECK("proc_alive_other_core_unknown", p->proc_alive(p->ctx, MDCOM_BM_PID + 1u, 1u) < 0);
#undef CHECK
    result("port", ok == n);
    kv("checks", n);
    kv("passed", ok);
    if (*failed) {
        mdcom_bm_puts(" first_failed=");
        mdcom_bm_puts(failed);
    }
    mdcom_bm_puts("\n");
}

static void test_ping(void)
{
    fw_rsp o;
    int r = cmd(FW_OP_PING, FW_MODE_POLL, 0, 0);
    if (!r)
        r = answer(&o);
    result("ping", r == 0 && o.status == 0 && o.value >= 1u &&
                       mdcom_sense_process(g_m, MDCOM_AN521_DOM_CPU1) == 1);
    kv("token", r ? 0 : o.value);
    mdcom_bm_puts("\n");
}

/* count echoes of varied length (16..496 B), each checked here; CPU1 checks
 * seq + CRC (arg 1). */
static void test_echo(const char *name, uint32_t mode, uint32_t count)
{
    static uint8_t out[496], back[512];
    uint32_t bad = 0, i, db0 = mdcom_bm_doorbell_count();
    fw_rsp o;
    int r;
    uint64_t t0;
    memset(&o, 0, sizeof(o));
    set_mode(mode);
    r = cmd(FW_OP_ECHO, mode, count, FW_ARG_CHECK);
    t0 = mdcom_bm_now_ns();
    for (i = 0; !r && i < count; i++) {
        fw_echo_hdr *h = (fw_echo_hdr *)out;
        uint32_t n = 16u + rnd() % (sizeof(out) - sizeof(*h) - 16u), k;
        for (k = 0; k < n; k++)
            out[sizeof(*h) + k] = (uint8_t)rnd();
        h->seq = i;
        h->len = n;
        h->crc = fw_crc32(out + sizeof(*h), n);
        r = send_m(g_ein, out, sizeof(*h) + n, mode);
        if (r)
            break;
        r = recv_m(g_eout, back, sizeof(back), mode);
        if (r != (int)(sizeof(*h) + n) || memcmp(back, out, sizeof(*h) + n) != 0)
            bad++;
        r = r < 0 ? r : 0;
    }
    if (!r)
        r = answer(&o);
    result(name, r == 0 && o.status == 0 && o.count == count && o.value == 0 && bad == 0 &&
                     (mode != FW_MODE_DOORBELL || mdcom_bm_doorbell_count() > db0));
    kv("count", i);
    kv("bad_here", bad);
    kv("bad_cpu1", o.value);
    kv("err", (uint32_t)-r);
    kv("mhu_irqs_cpu0", mdcom_bm_doorbell_count() - db0);
    kv("us", (uint32_t)((mdcom_bm_now_ns() - t0) / 1000u));
    mdcom_bm_puts("\n");
    set_mode(FW_MODE_POLL);
}

/* Both cores run rounds at once (smem_round.h). The host runs the two vCPU
 * threads on shared CPUs, so a run may happen to see no overlap at all (no
 * -EBUSY on either side, and for the control nothing lost): then it is run
 * again, up to 6 attempts; the line shows how many it took. */
static void test_smem(const char *name, uint32_t nolock, uint32_t rounds)
{
    volatile uint32_t *area;
    void *p;
    uint32_t done, dist, busy, total, attempt, overlap;
    fw_rsp o;
    int r, r2;
    uint64_t t0;
    mdcom_smemch_get(g_state, &p, 0);
    area = (volatile uint32_t *)p;
    for (attempt = 1;; attempt++) {
        done = dist = busy = 0;
        memset(&o, 0, sizeof(o));
        area[0] = 0;
        area[1] = 0;
        area[2] = 0; /* the start line (smem_round.h) */
        area[3] = 0;
        mdcom_bm_dmb(); /* cleared before CPU1 gets the command */
        r = cmd(FW_OP_SMEM, FW_MODE_POLL, rounds, nolock);
        t0 = mdcom_bm_now_ns();
        r2 =
            r ? r : smem_rounds(g_state, area, rounds, nolock, SMEM_MARK_CPU0, &done, &dist, &busy);
        if (!r)
            r = answer(&o);
        total = area[0];
        overlap = nolock ? (total < 2u * rounds || dist + o.value > 0) : (busy + o.value2 > 0);
        if (r || r2 || overlap || attempt == 6)
            break;
    }
    if (nolock) /* the control must see the race: lost updates or disturbed holds */
        result(name, r == 0 && r2 == 0 && o.count == rounds && done == rounds && overlap);
    else
        result(name, r == 0 && r2 == 0 && o.status == 0 && o.count == rounds && done == rounds &&
                         dist == 0 && o.value == 0 && total == 2u * rounds && overlap);
    kv("rounds", rounds);
    kv("counter", total);
    kv("lost", 2u * rounds - total);
    kv("disturbed_cpu0", dist);
    kv("disturbed_cpu1", o.value);
    kv("busy_cpu0", busy);
    kv("busy_cpu1", o.value2);
    kv("attempts", attempt);
    kv("us", (uint32_t)((mdcom_bm_now_ns() - t0) / 1000u));
    mdcom_bm_puts("\n");
}

/* Three contenders: CPU0, CPU1 and the Linux process (smem_round.h). */
static void test_smem3(uint32_t rounds)
{
    volatile uint32_t *area;
    void *p;
    uint32_t done = 0, dist = 0, busy = 0, total, ldist, lbusy, ldone;
    fw_rsp o;
    int r, r2;
    uint64_t end = mdcom_bm_now_ns() + (uint64_t)MS(5000);
    memset(&o, 0, sizeof(o));
    mdcom_smemch_get(g_state, &p, 0);
    area = (volatile uint32_t *)p;
    while (area[4] != 1u && mdcom_bm_now_ns() < end) {
        mdcom_bm_wfi();             /* SysTick wakes us every ms */
        (void)mdcom_heartbeat(g_m); /* keep the heartbeat promise while we wait */
    }
    if (area[4] != 1u) {
        mdcom_bm_puts("RESULT smem3 SKIP no Linux domain attached\n");
        return;
    }
    area[0] = 0;
    area[1] = 0;
    area[2] = 0;
    area[3] = 0;
    area[10] = 0;
    area[11] = 0;
    mdcom_bm_dmb(); /* "go" cleared before Linux sees the phase begin */
    area[8] = 1u;
    end = mdcom_bm_now_ns() + (uint64_t)MS(30000);
    while (area[11] != 1u && mdcom_bm_now_ns() < end)
        (void)mdcom_heartbeat(g_m); /* Linux spins for "go" once [11] is set */
    r = cmd(FW_OP_SMEM, FW_MODE_POLL, rounds, 0);
    r2 = r ? r : smem_rounds(g_state, area, rounds, 0, SMEM_MARK_CPU0, &done, &dist, &busy);
    if (!r)
        r = answer(&o);
    mdcom_bm_dmb(); /* our rounds come before "cores done" */
    area[10] = 1u;
    end = mdcom_bm_now_ns() + (uint64_t)MS(60000);
    while (area[5] != 1u && mdcom_bm_now_ns() < end) {
        mdcom_bm_wfi();
        (void)mdcom_heartbeat(g_m);
    }
    mdcom_bm_dmb(); /* Linux's results are read after its "done" */
    ldist = area[6];
    lbusy = area[7];
    ldone = area[9];
    total = area[0];
    result("smem3", r == 0 && r2 == 0 && o.status == 0 && o.count == rounds && area[5] == 1u &&
                        dist == 0 && o.value == 0 && ldist == 0 && ldone >= rounds &&
                        total == 2u * rounds + ldone);
    kv("rounds", rounds);
    kv("rounds_linux", ldone);
    kv("counter", total);
    kv("lost", 2u * rounds + ldone - total);
    kv("disturbed_cpu0", dist);
    kv("disturbed_cpu1", o.value);
    kv("disturbed_linux", ldist);
    kv("busy_cpu0", busy);
    kv("busy_cpu1", o.value2);
    kv("busy_linux", lbusy);
    mdcom_bm_puts("\n");
}

static void test_blockack(uint32_t count)
{
    uint32_t i, bad = 0, total = 0;
    fw_rsp o;
    int r;
    memset(&o, 0, sizeof(o));
    r = cmd(FW_OP_BLOCKACK, FW_MODE_POLL, count, 0);
    for (i = 0; !r && i < count; i++) {
        uint32_t want = 1u + rnd() % 30000u, sent = 0, ack = 0, id, first = 1;
        while (!r && (first || sent < want)) {
            void *b;
            uint32_t cap, off = 0, n;
            r = mdcom_fifoch_alloc(g_bulk, &id);
            if (r == -ENOBUFS) {
                r = 0;
                continue;
            }
            if (r)
                break;
            mdcom_fifoch_get(g_bulk, id, &b, &cap);
            if (first) {
                fw_ba_hdr h = {FW_BA_PREAMBLE, want};
                memcpy(b, &h, sizeof(h));
                off = sizeof(h);
                first = 0;
            }
            n = want - sent;
            if (n > cap - off)
                n = cap - off;
            memset((uint8_t *)b + off, (int)(i & 0xffu), n);
            sent += n;
            r = mdcom_fifoch_enqueue(g_bulk, id, off + n);
            if (!r)
                r = mdcom_fifoch_notify(g_bulk);
        }
        if (r)
            break;
        r = recv_m(g_ack, &ack, sizeof(ack), FW_MODE_POLL);
        if (r != (int)sizeof(ack) || ack != want)
            bad++;
        r = r < 0 ? r : 0;
        total += want;
    }
    if (!r)
        r = answer(&o);
    result("blockack", r == 0 && o.status == 0 && o.count == count && bad == 0 && o.value == 0);
    kv("transactions", i);
    kv("bytes", total);
    kv("bad", bad);
    kv("err", (uint32_t)-r);
    mdcom_bm_puts("\n");
}

/* Round trips of one 16-byte message (no checks: timing only): the mean.
 * (Batches of 100 timed with SysTick sometimes read 0 ns under multi-threaded
 * TCG, so no per-batch figure is given.) */
static void bench_rtt(const char *name, uint32_t mode, uint32_t count)
{
    uint32_t msg[4] = {0, 16, 0, 0}, back[8], i;
    fw_rsp o;
    int r;
    uint64_t t0, dt;
    set_mode(mode);
    r = cmd(FW_OP_ECHO, mode, count, 0);
    t0 = mdcom_bm_now_ns();
    for (i = 0; !r && i < count; i++) {
        msg[0] = i;
        r = send_m(g_ein, msg, sizeof(msg), mode);
        if (!r) {
            r = recv_m(g_eout, back, sizeof(back), mode);
            r = r == (int)sizeof(msg) && back[0] == i ? 0 : r < 0 ? r : -EBADMSG;
        }
    }
    dt = mdcom_bm_now_ns() - t0;
    if (!r)
        r = answer(&o);
    set_mode(FW_MODE_POLL);
    result(name, r == 0 && o.count == count);
    kv("round_trips", i);
    kv("ns_per_rt", i ? (uint32_t)(dt / i) : 0);
    mdcom_bm_puts("\n");
}

/* RPMsg host role against CPU1's remote echo (firmware/common). */
static uint64_t g_rp_state[2048] __attribute__((aligned(16)));

typedef struct rp_host {
    uint32_t got, bad;
    const uint8_t *sent;
    uint32_t len;
} rp_host;

static int rp_host_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    rp_host *h = priv;
    (void)ept;
    (void)src;
    if (len != h->len || memcmp(data, h->sent, len) != 0)
        h->bad++;
    h->got++;
    return 0;
}

/* fixed = 0: messages of varied length (12..496 B), seq + CRC checked on
 * CPU1 too; fixed = 16: the timing of bench_rtt (16-byte messages, CPU1
 * copies and checks nothing, checked here by memcmp). */
static void test_rpmsg(const char *name, uint32_t mode, uint32_t count, uint32_t fixed)
{
    static uint8_t out[FW_RPMSG_BUF_SIZE];
    mdcom_rpmsg_opts ro;
    mdcom_rpmsg_t *rp = 0;
    mdcom_rpmsg_ept_t *ept;
    rp_host h = {0, 0, out, 0};
    uint32_t i = 0, addr, size, max;
    void *area;
    fw_rsp o;
    uint64_t t0 = 0, dt = 0;
    int r, r2;
    memset(&o, 0, sizeof(o));
    memset(&ro, 0, sizeof(ro));
    ro.role = MDCOM_RPMSG_HOST;
    ro.geometry.num_bufs = FW_RPMSG_NUM_BUFS;
    ro.geometry.buf_size = FW_RPMSG_BUF_SIZE;
    ro.geometry.vring_align = FW_RPMSG_ALIGN;
    ro.spin_ns = mode == FW_MODE_DOORBELL ? MDCOM_NO_SPIN : 0;
    mdcom_smemch_get(g_rpmsg, &area, &size);
    r = mdcom_rpmsg_init(&rp, g_rp_state, sizeof(g_rp_state), area, size, &ro);
    if (!r)
        r = cmd(FW_OP_RPMSG_ECHO, mode, count, fixed ? 0 : FW_ARG_CHECK);
    if (!r)
        r = mdcom_rpmsg_wait_service(rp, FW_RPMSG_SERVICE, &addr, MS(FW_IDLE_MS));
    if (!r)
        r = mdcom_rpmsg_ept_create(rp, &ept, 0, MDCOM_RPMSG_ADDR_ANY, addr, rp_host_cb, &h,
                                   MS(FW_IDLE_MS));
    max = r ? 0 : mdcom_rpmsg_max_payload(rp);
    t0 = mdcom_bm_now_ns();
    for (i = 0; !r && i < count; i++) {
        fw_echo_hdr *eh = (fw_echo_hdr *)out;
        uint32_t n = fixed ? fixed - sizeof(*eh) : rnd() % (max - sizeof(*eh) + 1u), k;
        uint32_t want = h.got + 1;
        for (k = 0; k < n; k++)
            out[sizeof(*eh) + k] = (uint8_t)rnd();
        eh->seq = i;
        eh->len = n;
        eh->crc = fw_crc32(out + sizeof(*eh), n);
        h.len = sizeof(*eh) + n;
        /* RPMsg calls are no mdcom calls: keep the heartbeat promise here
         * (a run can last over FW_HEARTBEAT_MS when the host is loaded) */
        if ((i & 63u) == 0)
            (void)mdcom_heartbeat(g_m);
        r = mdcom_rpmsg_send(ept, out, h.len, MS(FW_IDLE_MS));
        while (!r && h.got < want) {
            r = mdcom_rpmsg_poll(rp, mode == FW_MODE_DOORBELL ? MS(FW_IDLE_MS) : MDCOM_POLL);
            r = r > 0 ? 0 : r;
        }
    }
    dt = mdcom_bm_now_ns() - t0;
    if (rp)
        mdcom_rpmsg_term(rp); /* CPU1's service ends (-ESHUTDOWN) */
    r2 = answer(&o);
    if (!r)
        r = r2;
    result(name, r == 0 && o.status == 0 && o.value == 0 && h.bad == 0 && h.got == count);
    kv("count", h.got);
    kv("bad_here", h.bad);
    kv("bad_cpu1", o.value);
    kv("err", (uint32_t)-r);
    kv("ns_per_rt", i ? (uint32_t)(dt / i) : 0);
    mdcom_bm_puts("\n");
}

static void open_all(void)
{
    int r;
    if ((r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_CTL, &g_ctl)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_RSP, &g_rsp)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_ECHO_IN, &g_ein)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_ECHO_OUT, &g_eout)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_BULK, &g_bulk)) ||
        (r = mdcom_fifoch_at(g_m, MDCOM_AN521_CH_ACK, &g_ack)) ||
        (r = mdcom_smemch_at(g_m, MDCOM_AN521_CH_STATE, &g_state)) ||
        (r = mdcom_smemch_at(g_m, MDCOM_AN521_CH_RPMSG, &g_rpmsg)))
        die("open channels", r);
}

int main(void)
{
    char err[128];
    mdcom_init_opts o;
    int r;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.heartbeat_ms = FW_HEARTBEAT_MS;
    o.layout = &mdcom_an521_layout; /* computed on the build host */
    mdcom_bm_puts("mdcom-fw-an521-cpu0 on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(" cpu ");
    mdcom_bm_put_u32(mdcom_an521_cpu());
    mdcom_bm_puts("\n");
    test_mhu();
    test_port();
    r = mdcom_init(&g_m, &mdcom_an521_config, MDCOM_AN521_DOM_CPU0, &o);
    if (r) {
        mdcom_bm_puts(err);
        mdcom_bm_puts("\n");
        die("mdcom_init", r);
    }
    open_all();
    mdcom_an521_start_cpu1(AN521_CPU1_VTOR);
    test_ping();
    test_echo("echo_poll", FW_MODE_POLL, ECHO_COUNT);
    test_echo("echo_mhu", FW_MODE_DOORBELL, ECHO_MHU_COUNT);
    test_smem("smem_lock", 0, AN521_SMEM_ROUNDS);
    test_smem3(AN521_SMEM_ROUNDS);
    /* 10x the rounds: without the lock a round is short, and the control
     * needs the two vCPU threads to overlap for a while */
    test_smem("smem_nolock", 1, 10u * AN521_SMEM_ROUNDS);
    test_blockack(BA_COUNT);
    bench_rtt("rtt_poll", FW_MODE_POLL, RTT_COUNT);
    bench_rtt("rtt_mhu", FW_MODE_DOORBELL, RTT_COUNT);
    test_rpmsg("rpmsg_poll", FW_MODE_POLL, RPMSG_COUNT, 0);
    test_rpmsg("rpmsg_mhu", FW_MODE_DOORBELL, RPMSG_COUNT, 0);
    test_rpmsg("rpmsg_rtt_poll", FW_MODE_POLL, RTT_COUNT, 16);
    test_rpmsg("rpmsg_rtt_mhu", FW_MODE_DOORBELL, RTT_COUNT, 16);
    r = cmd(FW_OP_EXIT, FW_MODE_POLL, 0, 0);
    mdcom_bm_puts(g_failed ? "DONE FAIL\n" : "DONE PASS\n");
    return g_failed ? 1 : 0;
}
