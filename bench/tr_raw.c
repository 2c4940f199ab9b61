/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_raw.c - the baselines raw-spin and raw-futex: bare shared memory without
 * mdcom. Per channel and direction a ring of up to RAW_SLOTS contiguous slots,
 * the sender's word `posted` (count and length in one store) and the
 * receiver's word `taken`, each alone on its cache line: one copy per hop,
 * the reply sent from where the message arrived (raw-spin-2copy: copied out
 * first, two copies per hop). raw-futex sleeps in
 * FUTEX_WAIT (shared futexes: two processes). Method: docs/benchmarks.md,
 * "Transports".
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define RAW_PAGE 4096u
#define RAW_SLOTS 8u
#define RAW_MAP_BUDGET (32u << 20) /* slots of all rings; at least one slot each */

struct raw_box {
    _Alignas(128) _Atomic uint64_t posted; /* written by the sender: len << 32 | count */
    _Alignas(128) _Atomic uint64_t taken;  /* written by the receiver: count */
    _Atomic uint32_t tx_sleeps;            /* the sender sleeps on taken */
    _Alignas(128) uint32_t len[RAW_SLOTS]; /* written by the sender, read when
                                             several messages are queued */
};
_Static_assert(sizeof(struct raw_box) == 384, "three lines, each alone in its 128-byte pair");
/* futex words: the count, in the low half of each word */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the low half comes first");

struct raw_ctx {
    int futex, yield;
    uint32_t max, nslot;
    int64_t timeout_ns;
    void *map;
    size_t map_len, buf_len;
    struct raw_box *box; /* [chan * 2 + dir], dir 0 = A -> B */
    unsigned char *bufs; /* same index, nslot slots of buf_len bytes */
    /* private to each process after fork */
    uint32_t seen_taken[2 * BENCH_MAX_CHAN]; /* sender's copy of taken */
    uint32_t posted[2 * BENCH_MAX_CHAN];     /* sender's own count     */
    uint32_t taken[2 * BENCH_MAX_CHAN];      /* receiver's own count   */
};

/* FUTEX_WAIT at most ns, or FUTEX_WAKE (ns unused) */
static long sys_futex(_Atomic uint64_t *word, int op, uint32_t val, uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    return syscall(SYS_futex, (uint32_t *)word, op, val, op == FUTEX_WAIT ? &ts : NULL, NULL, 0);
}

static int raw_setup(void **out, const bench_msg_params *p)
{
    struct raw_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->futex = p->variant;
    c->yield = p->threads > 1;
    c->max = p->max_size;
    c->timeout_ns = p->timeout_ns;
    c->buf_len = p->max_size ? ((size_t)p->max_size + 63) / 64 * 64 : 64;
    size_t per_slot = (size_t)2 * p->n_chan * c->buf_len;
    /* a power of two (a mask, not a division, on the message path) */
    c->nslot = RAW_SLOTS;
    while (c->nslot > 1 && (c->nslot > p->depth || per_slot * c->nslot > RAW_MAP_BUDGET))
        c->nslot /= 2;
    size_t hdr = (2 * p->n_chan * sizeof(struct raw_box) + RAW_PAGE - 1) / RAW_PAGE * RAW_PAGE;
    c->map_len = hdr + per_slot * c->nslot;
    c->map = bench_shared_alloc(c->map_len);
    if (!c->map) {
        bench_err("raw: mmap %zu bytes: %s", c->map_len, strerror(errno));
        free(c);
        return -ENOMEM;
    }
    c->box = c->map;
    c->bufs = (unsigned char *)c->map + hdr;
    *out = c;
    return 0;
}

/* Wait until the count of *w is no longer old; the word. 0 or -ETIMEDOUT. */
static int raw_wait(struct raw_ctx *c, _Atomic uint64_t *w, uint32_t old, uint64_t *now_val)
{
    /* acquire: the data written before the peer's release store is visible */
    uint64_t cur = atomic_load_explicit(w, memory_order_acquire);
    uint64_t deadline = 0;
    for (unsigned spins = 1; (uint32_t)cur == old; spins++) {
        if (!c->futex) {
            bench_relax();
            if (c->yield && (spins & 63u) == 0)
                sched_yield();
        }
        if (c->futex || (spins & 1023u) == 0) {
            int64_t left = bench_left_ns(&deadline, c->timeout_ns);
            if (left < 0)
                return -ETIMEDOUT;
            if (c->futex)
                sys_futex(w, FUTEX_WAIT, old, (uint64_t)left);
        }
        /* acquire: as above */
        cur = atomic_load_explicit(w, memory_order_acquire);
    }
    *now_val = cur;
    return 0;
}

static int raw_attach(void *ctx, int side)
{
    (void)ctx;
    (void)side;
    return 0;
}

static void raw_detach(void *ctx, int side)
{
    (void)ctx;
    (void)side;
}

static unsigned char *raw_slot(struct raw_ctx *c, size_t i, uint32_t k)
{
    return c->bufs + (i * c->nslot + (k & (c->nslot - 1))) * c->buf_len;
}

static int raw_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct raw_ctx *c = ctx;
    size_t i = (size_t)ch * 2 + (size_t)side;
    struct raw_box *b = &c->box[i];
    uint32_t p = c->posted[i];
    if (p - c->seen_taken[i] >= c->nslot) { /* looked full: look again */
        /* acquire: the receiver is done with the slot before we overwrite it */
        uint64_t t = atomic_load_explicit(&b->taken, memory_order_acquire);
        if (p - (uint32_t)t >= c->nslot) {
            /* seq_cst with the receiver's store of taken / load of tx_sleeps:
             * either it sees us asleep, or we see its new taken */
            atomic_store(&b->tx_sleeps, 1);
            atomic_thread_fence(memory_order_seq_cst);
            int rc = raw_wait(c, &b->taken, p - c->nslot, &t);
            atomic_store_explicit(&b->tx_sleeps, 0, memory_order_relaxed);
            if (rc != 0) {
                bench_err("%s: send: no slot free in time", c->futex ? "raw-futex" : "raw-spin");
                return rc;
            }
        }
        c->seen_taken[i] = (uint32_t)t;
    }
    memcpy(raw_slot(c, i, p), buf, len);
    b->len[p & (c->nslot - 1)] = len;
    /* release: the payload is visible before the counter moves */
    atomic_store_explicit(&b->posted, (uint64_t)len << 32 | ++c->posted[i], memory_order_release);
    if (c->futex)
        sys_futex(&b->posted, FUTEX_WAKE, INT_MAX, 0);
    return 0;
}

static int raw_peek(void *ctx, int side, uint32_t ch, const void **msg)
{
    struct raw_ctx *c = ctx;
    size_t i = (size_t)ch * 2 + (size_t)(side ^ 1);
    struct raw_box *b = &c->box[i];
    uint32_t t = c->taken[i];
    uint64_t w;
    if (raw_wait(c, &b->posted, t, &w) != 0) {
        bench_err("%s: recv: nothing arrived in time", c->futex ? "raw-futex" : "raw-spin");
        return -ETIMEDOUT;
    }
    /* the length of the newest message: the one at t when it is the only one */
    uint32_t len = (uint32_t)w - t == 1 ? (uint32_t)(w >> 32) : b->len[t & (c->nslot - 1)];
    if (len > c->max || (uint32_t)w - t > c->nslot)
        return -EBADMSG;
    *msg = raw_slot(c, i, t);
    return (int)len;
}

static void raw_release(void *ctx, int side, uint32_t ch)
{
    struct raw_ctx *c = ctx;
    size_t i = (size_t)ch * 2 + (size_t)(side ^ 1);
    struct raw_box *b = &c->box[i];
    if (!c->futex) {
        /* release: the slot is read before the sender reuses it */
        atomic_store_explicit(&b->taken, ++c->taken[i], memory_order_release);
        return;
    }
    /* seq_cst: see raw_send (and release as above) */
    atomic_store(&b->taken, ++c->taken[i]);
    if (atomic_load(&b->tx_sleeps))
        sys_futex(&b->taken, FUTEX_WAKE, INT_MAX, 0);
}

static void raw_teardown(void *ctx)
{
    struct raw_ctx *c = ctx;
    bench_shared_free(c->map, c->map_len);
    free(c);
}

const bench_msg_ops bench_ops_raw = BENCH_MSG_OPS(raw, .peek = raw_peek, .release = raw_release);

/* raw-spin-2copy: the receiver copies the message out of the slot into its
 * own buffer and frees the slot before it looks at it, and a round trip's
 * reply is sent from that buffer: two copies per hop (sender in, receiver
 * out), as mdcom-copy-poll makes with send and recv. raw-spin makes one (the
 * reply goes from the slot where the message arrived into the next slot). */
static int raw_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    return bench_recv(&bench_ops_raw, ctx, side, ch, buf, cap); /* peek, copy out, release */
}

const bench_msg_ops bench_ops_raw_copy2 = BENCH_MSG_OPS(raw, .recv = raw_recv);
