/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_raw.c - the baselines: a bare shared-memory ping-pong without mdcom.
 *
 * An anonymous MAP_SHARED mapping created before fork holds two flag words,
 * each alone on a 64-byte cache line, and two page-aligned payload buffers:
 *
 *   ping: stamp seq into a private buffer, memcpy size bytes -> A,
 *         flag_a = seq (release) [+ FUTEX_WAKE], wait until flag_b == seq,
 *         check the head/tail stamps of B.
 *   pong: wait until flag_a changes (acquire), check it is last + 1,
 *         memcpy A -> B, check the stamps, flag_b = seq (release) [+ FUTEX_WAKE].
 *
 * raw-spin waits by spinning with a pause instruction; raw-futex sleeps with
 * FUTEX_WAIT whenever the flag does not hold the expected value yet and the
 * writer calls FUTEX_WAKE after every store (no spinning at all). Shared (not
 * PRIVATE) futex operations: the two processes have different mms.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define RAW_PAGE 4096u

struct raw_shm {
    _Alignas(64) _Atomic uint32_t flag_a;
    _Alignas(64) _Atomic uint32_t flag_b;
};
_Static_assert(sizeof(struct raw_shm) == 128, "two flags on their own lines");

struct raw_ctx {
    int futex;
    uint32_t size;
    int64_t timeout_ns;
    void *map;
    size_t map_len;
    struct raw_shm *shm;
    unsigned char *buf_a, *buf_b;
    unsigned char *priv; /* ping side's private payload */
};

static long sys_futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* Wait until *flag != prev; returns the new value in *out. 0, -ETIMEDOUT. */
static int raw_wait_change(struct raw_ctx *c, _Atomic uint32_t *flag, uint32_t prev, uint32_t *out)
{
    uint32_t v = atomic_load_explicit(flag, memory_order_acquire);
    if (v != prev) {
        *out = v;
        return 0;
    }
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    if (!c->futex) {
        for (unsigned spins = 1;; spins++) {
            bench_relax();
            v = atomic_load_explicit(flag, memory_order_acquire);
            if (v != prev) {
                *out = v;
                return 0;
            }
            if ((spins & 1023u) == 0 && bench_now_ns() > deadline)
                return -ETIMEDOUT;
        }
    }
    for (;;) {
        uint64_t now = bench_now_ns();
        if (now > deadline)
            return -ETIMEDOUT;
        uint64_t left = deadline - now;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u),
                              .tv_nsec = (long)(left % 1000000000u)};
        if (sys_futex(flag, FUTEX_WAIT, prev, &ts) != 0 && errno != EAGAIN && errno != EINTR &&
            errno != ETIMEDOUT)
            return -errno;
        v = atomic_load_explicit(flag, memory_order_acquire);
        if (v != prev) {
            *out = v;
            return 0;
        }
    }
}

static void raw_post(struct raw_ctx *c, _Atomic uint32_t *flag, uint32_t v)
{
    atomic_store_explicit(flag, v, memory_order_release);
    if (c->futex)
        sys_futex(flag, FUTEX_WAKE, 1, NULL);
}

static int raw_setup(void **out, const bench_rt_params *p, int futex)
{
    struct raw_ctx *c = calloc(1, sizeof(*c));
    if (!c) {
        bench_err("raw: out of memory");
        return -ENOMEM;
    }
    size_t buf = ((size_t)p->max_size + RAW_PAGE - 1) / RAW_PAGE * RAW_PAGE;
    c->futex = futex;
    c->size = p->size;
    c->timeout_ns = p->timeout_ns;
    c->map_len = RAW_PAGE + 2 * buf;
    c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c->map == MAP_FAILED) {
        int e = errno;
        bench_err("raw: mmap %zu bytes: %s", c->map_len, strerror(e));
        free(c);
        return -e;
    }
    c->shm = c->map;
    atomic_init(&c->shm->flag_a, 0);
    atomic_init(&c->shm->flag_b, 0);
    c->buf_a = (unsigned char *)c->map + RAW_PAGE;
    c->buf_b = c->buf_a + buf;
    c->priv = malloc(p->size);
    if (!c->priv) {
        munmap(c->map, c->map_len);
        free(c);
        return -ENOMEM;
    }
    memset(c->priv, 0x5a, p->size);
    *out = c;
    return 0;
}

static int raw_spin_setup(void **out, const bench_rt_params *p) { return raw_setup(out, p, 0); }
static int raw_futex_setup(void **out, const bench_rt_params *p) { return raw_setup(out, p, 1); }

static int raw_pong(void *ctx)
{
    struct raw_ctx *c = ctx;
    uint32_t last = 0;
    int bad = 0;
    for (;;) {
        uint32_t v;
        int rc = raw_wait_change(c, &c->shm->flag_a, last, &v);
        if (rc != 0) {
            bench_err("raw pong: waiting for seq %u: %s", last + 1, strerror(-rc));
            return rc;
        }
        if (v == BENCH_SEQ_STOP)
            return bad ? BENCH_RT_MISMATCH : 0;
        if (v != last + 1) {
            bench_err("raw pong: got seq %u, expected %u", v, last + 1);
            return BENCH_RT_MISMATCH;
        }
        memcpy(c->buf_b, c->buf_a, c->size);
        if (!bench_stamp_ok(c->buf_b, c->size, v)) {
            bench_err("raw pong: payload of seq %u carries head %u, tail %u", v,
                      bench_head(c->buf_b), c->size >= 8 ? bench_tail(c->buf_b, c->size) : 0);
            bad = 1;
        }
        raw_post(c, &c->shm->flag_b, v);
        last = v;
    }
}

static int raw_ping_open(void *ctx)
{
    (void)ctx;
    return 0;
}

static int raw_ping(void *ctx, uint32_t seq)
{
    struct raw_ctx *c = ctx;
    bench_stamp(c->priv, c->size, seq);
    memcpy(c->buf_a, c->priv, c->size);
    raw_post(c, &c->shm->flag_a, seq);
    uint32_t v;
    int rc = raw_wait_change(c, &c->shm->flag_b, seq - 1, &v);
    if (rc != 0) {
        bench_err("raw ping: waiting for reply %u: %s", seq, strerror(-rc));
        return rc;
    }
    if (v != seq) {
        bench_err("raw ping: reply carries seq %u, expected %u", v, seq);
        return BENCH_RT_MISMATCH;
    }
    if (!bench_stamp_ok(c->buf_b, c->size, seq)) {
        bench_err("raw ping: reply payload of seq %u carries head %u, tail %u", seq,
                  bench_head(c->buf_b), c->size >= 8 ? bench_tail(c->buf_b, c->size) : 0);
        return BENCH_RT_MISMATCH;
    }
    return 0;
}

static void raw_stop(void *ctx)
{
    struct raw_ctx *c = ctx;
    raw_post(c, &c->shm->flag_a, BENCH_SEQ_STOP);
}

static void raw_teardown(void *ctx)
{
    struct raw_ctx *c = ctx;
    munmap(c->map, c->map_len);
    free(c->priv);
    free(c);
}

/* ---- message interface: a one-slot mailbox per direction ------------------------ *
 *
 * Per bench channel and direction: `posted` (written by the sender) and `taken`
 * (written by the receiver), each on its own cache line, plus a length and a
 * buffer of max_size bytes. The slot is empty when taken == posted.
 *   send: wait until taken == posted, copy, len, posted + 1 (release) [+ wake]
 *   recv: wait until posted == taken + 1 (acquire), copy out, taken + 1
 *         (release) [+ wake]
 * raw-spin spins (and yields every 64 pauses when several threads share a
 * CPU); raw-futex sleeps in FUTEX_WAIT whenever the word is not there yet. */
struct raw_box {
    _Alignas(64) _Atomic uint32_t posted;
    _Alignas(64) _Atomic uint32_t taken;
    _Alignas(64) uint32_t len;
};
_Static_assert(sizeof(struct raw_box) == 192, "three cache lines");

struct rawm_ctx {
    int futex, yield;
    uint32_t n, max;
    int64_t timeout_ns;
    void *map;
    size_t map_len, buf_len;
    struct raw_box *box;  /* [chan * 2 + dir], dir 0 = A -> B */
    unsigned char *bufs;  /* same index, buf_len bytes each    */
};

static int rawm_setup(void **out, const bench_msg_params *p, int futex)
{
    struct rawm_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->futex = futex;
    c->yield = p->threads > 1;
    c->n = p->n_chan;
    c->max = p->max_size;
    c->timeout_ns = p->timeout_ns;
    c->buf_len = ((size_t)p->max_size + RAW_PAGE - 1) / RAW_PAGE * RAW_PAGE;
    if (!c->buf_len)
        c->buf_len = RAW_PAGE;
    size_t hdr = ((size_t)2 * c->n * sizeof(struct raw_box) + RAW_PAGE - 1) / RAW_PAGE * RAW_PAGE;
    c->map_len = hdr + (size_t)2 * c->n * c->buf_len;
    c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c->map == MAP_FAILED) {
        int e = errno;
        bench_err("raw: mmap %zu bytes: %s", c->map_len, strerror(e));
        free(c);
        return -e;
    }
    c->box = c->map;
    c->bufs = (unsigned char *)c->map + hdr;
    *out = c;
    return 0;
}

static int rawm_spin_setup(void **o, const bench_msg_params *p) { return rawm_setup(o, p, 0); }
static int rawm_futex_setup(void **o, const bench_msg_params *p) { return rawm_setup(o, p, 1); }

/* Wait until *w == v. 0 or -ETIMEDOUT. */
static int rawm_wait(struct rawm_ctx *c, _Atomic uint32_t *w, uint32_t v)
{
    /* acquire: the data written before the peer's release store is visible */
    uint32_t cur = atomic_load_explicit(w, memory_order_acquire);
    if (cur == v)
        return 0;
    uint64_t deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
    for (unsigned spins = 1;; spins++) {
        if (c->futex) {
            uint64_t now = bench_now_ns();
            if (now > deadline)
                return -ETIMEDOUT;
            uint64_t left = deadline - now;
            struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u),
                                  .tv_nsec = (long)(left % 1000000000u)};
            sys_futex(w, FUTEX_WAIT, cur, &ts);
        } else {
            bench_relax();
            if (c->yield && (spins & 63u) == 0)
                sched_yield();
            if ((spins & 1023u) == 0 && bench_now_ns() > deadline)
                return -ETIMEDOUT;
        }
        /* acquire: as above */
        cur = atomic_load_explicit(w, memory_order_acquire);
        if (cur == v)
            return 0;
    }
}

static void rawm_post(struct rawm_ctx *c, _Atomic uint32_t *w, uint32_t v)
{
    /* release: the payload and length are visible before the counter moves */
    atomic_store_explicit(w, v, memory_order_release);
    if (c->futex)
        sys_futex(w, FUTEX_WAKE, INT_MAX, NULL);
}

static int rawm_attach(void *ctx, int side)
{
    (void)ctx;
    (void)side;
    return 0;
}

static void rawm_detach(void *ctx, int side)
{
    (void)ctx;
    (void)side;
}

static int rawm_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct rawm_ctx *c = ctx;
    size_t i = (size_t)ch * 2 + (size_t)side;
    struct raw_box *b = &c->box[i];
    uint32_t p = atomic_load_explicit(&b->posted, memory_order_relaxed); /* ours */
    if (rawm_wait(c, &b->taken, p) != 0) {
        bench_err("%s: send: slot not emptied in time", c->futex ? "raw-futex" : "raw-spin");
        return -ETIMEDOUT;
    }
    memcpy(c->bufs + i * c->buf_len, buf, len);
    b->len = len;
    rawm_post(c, &b->posted, p + 1);
    return 0;
}

static int rawm_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct rawm_ctx *c = ctx;
    size_t i = (size_t)ch * 2 + (size_t)(side ^ 1);
    struct raw_box *b = &c->box[i];
    uint32_t t = atomic_load_explicit(&b->taken, memory_order_relaxed); /* ours */
    if (rawm_wait(c, &b->posted, t + 1) != 0) {
        bench_err("%s: recv: nothing arrived in time", c->futex ? "raw-futex" : "raw-spin");
        return -ETIMEDOUT;
    }
    uint32_t len = b->len;
    if (len > cap || len > c->max)
        return -EBADMSG;
    memcpy(buf, c->bufs + i * c->buf_len, len);
    rawm_post(c, &b->taken, t + 1);
    return (int)len;
}

static void rawm_teardown(void *ctx)
{
    struct rawm_ctx *c = ctx;
    munmap(c->map, c->map_len);
    free(c);
}

static const bench_msg_ops raw_spin_msg = {.setup = rawm_spin_setup,
                                           .attach = rawm_attach,
                                           .send = rawm_send,
                                           .recv = rawm_recv,
                                           .detach = rawm_detach,
                                           .teardown = rawm_teardown};
static const bench_msg_ops raw_futex_msg = {.setup = rawm_futex_setup,
                                            .attach = rawm_attach,
                                            .send = rawm_send,
                                            .recv = rawm_recv,
                                            .detach = rawm_detach,
                                            .teardown = rawm_teardown};

const bench_transport bench_tr_raw_spin = {
    .name = "raw-spin",
    .desc = "baseline: shared flags + memcpy, both sides spin (no mdcom)",
    .wait_class = BENCH_WAIT_POLL,
    .baseline = NULL,
    .setup = raw_spin_setup,
    .pong = raw_pong,
    .ping_open = raw_ping_open,
    .ping = raw_ping,
    .stop = raw_stop,
    .teardown = raw_teardown,
    .msg = &raw_spin_msg,
};

const bench_transport bench_tr_raw_futex = {
    .name = "raw-futex",
    .desc = "baseline: shared flags + memcpy, waiters sleep in FUTEX_WAIT (no mdcom)",
    .wait_class = BENCH_WAIT_BLOCK,
    .baseline = NULL,
    .setup = raw_futex_setup,
    .pong = raw_pong,
    .ping_open = raw_ping_open,
    .ping = raw_ping,
    .stop = raw_stop,
    .teardown = raw_teardown,
    .msg = &raw_futex_msg,
};
