/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_region.c - libFuzzer target: a hostile peer mutates the shared region
 * between the API calls of two attachments (a master and a remote).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined (CMake: -DMDCOM_FUZZ=ON
 * with CC=clang, or tests/fuzz/run_fuzz.sh); run: scripts/reliability fuzz.
 *
 * The region is a heap buffer of exactly the size the layout needs, so ASan
 * sees any access outside it. The platform is this file's: the region is that
 * buffer, the clock is virtual (a wait advances it by its timeout instead of
 * sleeping), process liveness is decided by the input, spinning is off. So
 * every blocking call returns at once in real time, and "never blocks past
 * its timeout" is checked exactly on the virtual clock.
 *
 * Each input is a program: a byte selects an operation, the following bytes
 * its arguments (missing bytes read as 0):
 *   hostile writes (a word anywhere, a run of bytes, a chosen field of a
 *   channel / the header / the process table set to an interesting value, a
 *   forged queue entry at the consumer position with its block made QUEUED),
 *   and every API call by either attachment: alloc, free, get (+ writing the
 *   whole block), enqueue, dequeue (+ reading the whole block), notify, wait,
 *   send, recv, sense, filters, fifoch_init, SMEM try/lock/unlock/get,
 *   sense_process, detach + re-attach, a third attachment, a master restart.
 * Every result must be one the public header documents for that call, every
 * returned ID / length / pointer in range, and every timed call must return
 * within its timeout (+ 2 ms of attach polling) on the virtual clock; any
 * violation aborts with a message (a finding).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdcom/wire.h"
#include "mdcom/mdcom.h"
#include "mdcom/platform.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ------------------------------------------------------------------ */
/* the fuzz platform                                                    */
/* ------------------------------------------------------------------ */

static uint8_t *g_region;
static uint32_t g_size;
static uint64_t g_clock;       /* virtual ns */
static uint32_t g_alive = 0xe; /* bit p: process p (1..3) alive */
static int g_region_present;

struct fz_ctx {
    uint32_t pid;
};
static struct fz_ctx g_ctx[4] = {{0}, {1}, {2}, {3}};

static void finding(const char *what, long a, long b) __attribute__((noreturn));
static void finding(const char *what, long a, long b)
{
    fprintf(stderr, "FINDING: %s (%ld, %ld)\n", what, a, b);
    abort();
}

static int fz_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                          int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    (void)ctx;
    (void)name;
    (void)flags;
    (void)mode;
    (void)group;
    if (!g_region_present || size > g_size) {
        if (timeout_ns > 0)
            g_clock += (uint64_t)timeout_ns;
        return timeout_ns != 0 ? -ETIMEDOUT : -ENOENT;
    }
    *out = (mdcom_region_map){.base = g_region, .size = g_size, .handle = 0};
    return 0;
}

static void fz_region_close(void *ctx, mdcom_region_map *map, int remove)
{
    (void)ctx;
    (void)remove;
    *map = (mdcom_region_map){0};
}

static int fz_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    (void)ctx;
    (void)word;
    (void)expected;
    if (timeout_ns <= 0)
        finding("doorbell wait called without a positive timeout", (long)timeout_ns, 0);
    /* nobody else runs: sleeping the whole slice changes nothing */
    g_clock += (uint64_t)timeout_ns;
    return -ETIMEDOUT;
}

static void fz_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    (void)ctx;
    if ((uint8_t *)word < g_region || (uint8_t *)word + 4 > g_region + g_size)
        finding("ring on a word outside the region", (long)((uint8_t *)word - g_region),
                (long)chan);
}

static uint64_t fz_now(void *ctx)
{
    (void)ctx;
    return ++g_clock;
}

static int fz_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    *pid = ((struct fz_ctx *)ctx)->pid;
    *token = *pid * 7u;
    return 0;
}

static int fz_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    (void)ctx;
    if (pid >= 1 && pid <= 3)
        return (int)((g_alive >> pid) & 1u) && token == pid * 7u;
    /* pids a hostile peer wrote: alive, dead or unknown */
    return pid % 3 == 0 ? 1 : pid % 3 == 1 ? 0 : -EIO;
}

static mdcom_platform g_plat[4];

const mdcom_platform *mdcom_platform_default(void) { return &g_plat[1]; }

/* ------------------------------------------------------------------ */
/* the system                                                           */
/* ------------------------------------------------------------------ */

#define NCH 4
static const mdcom_domain_cfg g_doms[] = {{"m", 0, MDCOM_ROLE_MASTER}, {"r", 1, MDCOM_ROLE_REMOTE}};
static const mdcom_channel_cfg g_chans[NCH] = {
    {"a", MDCOM_CHAN_FIFO, 48, 8, 4, 3, 3, 0, 0},
    {"b", MDCOM_CHAN_FIFO, 1, 3, 0, 1, 2, 0, 0},
    {"s", MDCOM_CHAN_SMEM, 0, 0, 0, 0, 0, 100, 3},
    {"c", MDCOM_CHAN_FIFO, 200, 2, 8, 2, 1, 0, 0},
};
static const mdcom_config g_cfg = {"fuzz", 0, 0, -1, g_doms, 2, g_chans, NCH};
static mdcom_wire_layout g_lay;
static mdcom_wire_chan_layout g_cl[NCH];

#define NINST 3 /* 0 master, 1 remote, 2 a third attachment */
#define NHELD 8
struct inst {
    mdcom_t *m;
    mdcom_fifoch_t *f[NCH];
    mdcom_smemch_t *s;
    uint32_t held[NCH][NHELD]; /* IDs we believe we hold */
    uint32_t n_held[NCH];
};
static struct inst g_in[NINST];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    uint32_t i;
    (void)argc;
    (void)argv;
    if (mdcom_wire_layout_compute(&g_cfg, &g_lay, g_cl, NULL, 0) != 0)
        abort();
    g_size = g_lay.region_size;
    g_region = malloc(g_size);
    if (!g_region)
        abort();
    for (i = 0; i < 4; i++) {
        mdcom_platform *p = &g_plat[i];
        memset(p, 0, sizeof(*p));
        p->name = "fuzz";
        p->ctx = &g_ctx[i];
        p->region_open = fz_region_open;
        p->region_close = fz_region_close;
        p->doorbell.wait = fz_wait;
        p->doorbell.ring = fz_ring;
        p->doorbell.ctx = &g_ctx[i];
        p->now_ns = fz_now;
        p->proc_self = fz_proc_self;
        p->proc_alive = fz_proc_alive;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* input                                                                */
/* ------------------------------------------------------------------ */

struct in {
    const uint8_t *p;
    size_t n, i;
};
static uint8_t u8(struct in *s) { return s->i < s->n ? s->p[s->i++] : 0; }
static uint32_t u16(struct in *s) { return (uint32_t)u8(s) | (uint32_t)u8(s) << 8; }
static uint32_t u32(struct in *s) { return u16(s) | u16(s) << 16; }

static const int64_t g_timeouts[] = {MDCOM_POLL, 1, 1000, 100000, 2000000, 150000000};

static uint32_t interesting(struct in *s)
{
    static const uint32_t v[] = {0,
                                 1,
                                 2,
                                 3,
                                 0x7fffffffu,
                                 0x80000000u,
                                 0xffffffffu,
                                 0xfffffffeu,
                                 MDCOM_MAGIC,
                                 MDCOM_ST_READY,
                                 MDCOM_ST_FORMATTING,
                                 MDCOM_ST_TERMINATED,
                                 MDCOM_WIRE_VERSION + 1,
                                 65536,
                                 65535};
    uint32_t k = u8(s);
    if (k < 15)
        return v[k];
    if (k < 80) { /* block state words */
        static const uint32_t st[] = {MDCOM_BLK_FREE, MDCOM_BLK_ALLOC, MDCOM_BLK_QUEUED,
                                      MDCOM_BLK_HELD};
        return MDCOM_BLK_MAKE(st[k & 3], MDCOM_BLK_WHO_OF((k >> 2) & 3, k >> 4));
    }
    if (k < 140) /* sequence words around small positions */
        return (k - 100) & 0xffffffffu;
    if (k < 160) /* owner values of process slots */
        return k - 140;
    return u32(s);
}

/* ------------------------------------------------------------------ */
/* checks                                                               */
/* ------------------------------------------------------------------ */

static void expect_rc(const char *call, int rc, const int *ok, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (rc == ok[i])
            return;
    finding(call, rc, 0);
}
#define EXPECT_RC(call, rc, ...)                                                                   \
    do {                                                                                           \
        static const int ok_[] = {__VA_ARGS__};                                                    \
        expect_rc(call, rc, ok_, sizeof(ok_) / sizeof(ok_[0]));                                    \
    } while (0)

static void expect_in_time(const char *call, uint64_t t0, int64_t timeout)
{
    uint64_t el = g_clock - t0;
    /* timeout 0: no wait at all; else the timeout + the clock reads */
    uint64_t limit = (uint64_t)timeout + 100000u;
    if (el > limit)
        finding(call, (long)el, (long)timeout);
}

static void check_ptr(void *p, uint32_t len)
{
    uint8_t *b = (uint8_t *)p;
    if (b < g_region || b + len > g_region + g_size || b + len < b)
        finding("pointer outside the region", (long)(b - g_region), (long)len);
}

static void held_add(struct inst *x, uint32_t c, uint32_t id)
{
    if (x->n_held[c] < NHELD)
        x->held[c][x->n_held[c]++] = id;
}

static uint32_t held_pick(struct inst *x, uint32_t c, struct in *s)
{
    uint32_t k = u8(s);
    if (x->n_held[c] && k < 200) {
        uint32_t i = k % x->n_held[c];
        uint32_t id = x->held[c][i];
        x->held[c][i] = x->held[c][--x->n_held[c]];
        return id;
    }
    return k < 250 ? k - 200 : u32(s);
}

/* ------------------------------------------------------------------ */
/* attach / detach                                                      */
/* ------------------------------------------------------------------ */

static int attach(uint32_t k, uint32_t domain, int64_t timeout)
{
    struct inst *x = &g_in[k];
    mdcom_init_opts o;
    char err[160];
    uint64_t t0 = g_clock;
    uint32_t c;
    int r;
    memset(&o, 0, sizeof(o));
    o.attach_timeout_ns = timeout;
    o.platform = &g_plat[k + 1];
    o.spin_ns = MDCOM_NO_SPIN;
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.keep_region = 1;
    memset(x, 0, sizeof(*x));
    r = mdcom_init(&x->m, &g_cfg, domain, &o);
    EXPECT_RC("mdcom_init", r, 0, -EINVAL, -ENOSPC, -ETIMEDOUT, -EPROTONOSUPPORT, -ESTALE, -EBADMSG,
              -EUSERS, -EADDRINUSE, -EPERM, -EACCES, -ENOENT);
    /* attach polls in 1 ms slices: allow one slice beyond the timeout */
    if (g_clock - t0 > (uint64_t)timeout + 2000000u)
        finding("mdcom_init past its timeout", (long)(g_clock - t0), (long)timeout);
    if (r != 0) {
        x->m = NULL;
        return r;
    }
    for (c = 0; c < NCH; c++) {
        if (g_chans[c].type == MDCOM_CHAN_FIFO) {
            r = mdcom_fifoch_at(x->m, c, &x->f[c]);
            EXPECT_RC("mdcom_fifoch_at", r, 0, -EPERM);
            if (r)
                x->f[c] = NULL;
        } else {
            r = mdcom_smemch_at(x->m, c, &x->s);
            EXPECT_RC("mdcom_smemch_at", r, 0, -EPERM);
            if (r)
                x->s = NULL;
        }
    }
    return 0;
}

static void detach(uint32_t k)
{
    struct inst *x = &g_in[k];
    if (x->m && mdcom_term(x->m) != 0)
        finding("mdcom_term failed", k, 0);
    memset(x, 0, sizeof(*x));
}

/* ------------------------------------------------------------------ */
/* one operation                                                        */
/* ------------------------------------------------------------------ */

static void hostile(struct in *s, uint32_t kind)
{
    uint32_t c, v, off;
    switch (kind % 4) {
    case 0: /* a word anywhere */
        off = (u16(s) % (g_size / 4)) * 4;
        v = interesting(s);
        memcpy(g_region + off, &v, 4);
        break;
    case 1: { /* a run of bytes */
        uint32_t n = u8(s) % 17, i;
        off = u16(s) % g_size;
        for (i = 0; i < n && off + i < g_size; i++)
            g_region[off + i] = u8(s);
        break;
    }
    case 3: { /* a protocol-aware peer: forge an entry at the consumer position */
        const mdcom_wire_chan_layout *cl = &g_cl[u8(s) % NCH];
        uint32_t pos, id, len, seq, w[4];
        if (cl->type != MDCOM_CHAN_FIFO)
            break;
        memcpy(&pos, g_region + cl->off + offsetof(mdcom_wire_fifo_ctl, deq), 4); /* deq_pos */
        pos += u8(s) % 3;
        id = u8(s) % (cl->block_count + 2);
        len = u8(s) % (cl->block_size + 2);
        seq = 2u * pos + 1u;
        w[0] = seq;
        w[1] = id;
        w[2] = len;
        /* the state word the consumer will expect: the block's own current
         * one made QUEUED (the most convincing forgery), or any */
        if (id < cl->block_count && (u8(s) & 1)) {
            memcpy(&v, g_region + cl->off + cl->bstate_off + 4u * id, 4);
            w[3] = MDCOM_BLK_MAKEG(MDCOM_BLK_QUEUED, MDCOM_BLK_WHO(v), MDCOM_BLK_GEN(v));
        } else {
            w[3] = interesting(s);
        }
        memcpy(g_region + cl->off + cl->qslots_off + 16u * (pos & (cl->qcap - 1)), w, 16);
        if (id <= cl->block_count && (u8(s) & 1)) { /* and make the block look queued */
            v = (u8(s) & 1) ? w[3]
                            : MDCOM_BLK_MAKE(MDCOM_BLK_QUEUED, MDCOM_BLK_WHO_OF(u8(s) % 4, u8(s)));
            memcpy(g_region + cl->off + cl->bstate_off + 4u * id, &v, 4);
        }
        break;
    }
    default: { /* a chosen field */
        const mdcom_wire_chan_layout *cl;
        uint32_t f = u8(s);
        c = f % NCH;
        cl = &g_cl[c];
        v = interesting(s);
        switch ((f >> 2) % 8) {
        case 0:
            off = 20 + 4 * (u8(s) % 2);
            break; /* generation, state */
        case 1:    /* a process entry word: owner .. hb_ms */
            off = g_lay.proc_off + (uint32_t)sizeof(mdcom_wire_proc) * (u8(s) % MDCOM_MAX_PROCS) +
                  4u * (u8(s) % 11);
            break;
        case 2: /* ctl words */
            off = cl->off + MDCOM_PAD * (u8(s) % 4) + 4u * (u8(s) % 2);
            break;
        case 3: /* a queue slot word */
            off = cl->type == MDCOM_CHAN_FIFO
                      ? cl->off + cl->qslots_off + 16u * (u8(s) % cl->qcap) + 4u * (u8(s) % 4)
                      : cl->off;
            break;
        case 4: /* a block state word */
            /* (one past the array too: an off-by-one must meet a plausible word) */
            off = cl->type == MDCOM_CHAN_FIFO
                      ? cl->off + cl->bstate_off + 4u * (u8(s) % (cl->block_count + 1))
                      : cl->off + 4u;
            break;
        case 5:
            off = g_lay.dir_off + 64u * c + 32u + 4u * (u8(s) % 8);
            break; /* dirent */
        case 6:
            off = 4u * (u8(s) % 17);
            break; /* header */
        default:
            off = g_lay.dom_off + 4u * (u8(s) % 16);
            break; /* domains */
        }
        if (off + 4 <= g_size)
            memcpy(g_region + off, &v, 4);
        break;
    }
    }
}

#define FIFO_WAIT_ERRS -ETIMEDOUT, -EINVAL, -ESHUTDOWN, -ECONNRESET, -EINTR

static void api(struct in *s, uint32_t op)
{
    uint32_t k = u8(s) % NINST, c = u8(s) % NCH;
    struct inst *x = &g_in[k];
    mdcom_fifoch_t *f;
    int64_t to = g_timeouts[u8(s) % (sizeof(g_timeouts) / sizeof(g_timeouts[0]))];
    uint64_t t0;
    uint32_t id, len;
    void *p;
    int r;
    if (!x->m)
        return;
    if (g_chans[c].type == MDCOM_CHAN_SMEM || !x->f[c]) {
        /* SMEM operations */
        uint32_t sz;
        if (!x->s)
            return;
        switch (op % 4) {
        case 0:
            r = mdcom_smemch_trylock(x->s);
            EXPECT_RC("smemch_trylock", r, 0, -EBUSY, -EDEADLK);
            break;
        case 1:
            t0 = g_clock;
            r = mdcom_smemch_lock(x->s, to);
            EXPECT_RC("smemch_lock", r, 0, -ETIMEDOUT, -EDEADLK, -ESHUTDOWN, -ECONNRESET, -EINTR,
                      -EBUSY);
            expect_in_time("smemch_lock", t0, to);
            break;
        case 2:
            r = mdcom_smemch_unlock(x->s);
            EXPECT_RC("smemch_unlock", r, 0, -EPERM, -ENOTCONN);
            break;
        default:
            r = mdcom_smemch_get(x->s, &p, &sz);
            EXPECT_RC("smemch_get", r, 0);
            if (sz != g_chans[2].size)
                finding("smem size", (long)sz, 0);
            check_ptr(p, sz);
            memset(p, (int)op, sz);
            break;
        }
        return;
    }
    f = x->f[c];
    switch (op % 12) {
    case 0:
        r = mdcom_fifoch_alloc(f, &id);
        EXPECT_RC("fifoch_alloc", r, 0, -ENOBUFS, -EPERM, -ESHUTDOWN, -ECONNRESET);
        if (r == 0) {
            if (id >= g_chans[c].block_count)
                finding("alloc returned a bad id", (long)id, (long)c);
            held_add(x, c, id);
        }
        break;
    case 1:
        r = mdcom_fifoch_free(f, held_pick(x, c, s));
        EXPECT_RC("fifoch_free", r, 0, -EINVAL, -EALREADY, -EPROTO, -ENOTCONN);
        break;
    case 2: {
        uint32_t sz;
        id = u8(s) % (g_chans[c].block_count + 1);
        r = mdcom_fifoch_get(f, id, &p, &sz);
        EXPECT_RC("fifoch_get", r, 0, -EINVAL);
        if (r == 0) {
            check_ptr(p, sz);
            memset(p, (int)op, sz); /* the whole block: ASan checks it */
        }
        break;
    }
    case 3:
        id = held_pick(x, c, s);
        len = u8(s) % (g_chans[c].block_size + 2);
        r = mdcom_fifoch_enqueue(f, id, len);
        EXPECT_RC("fifoch_enqueue", r, 0, MDCOM_FILTERED, -EAGAIN, -EINVAL, -EALREADY, -EPERM,
                  -EPROTO, -ENOTCONN);
        if (r == -EAGAIN || r == -EPROTO)
            held_add(x, c, id);
        break;
    case 4:
        r = mdcom_fifoch_dequeue(f, &id, &len);
        EXPECT_RC("fifoch_dequeue", r, 0, -EAGAIN, -EPERM, -EPROTO, -EBADMSG, -ECONNRESET,
                  -ESHUTDOWN);
        if (r == 0) {
            static volatile uint8_t g_sink;
            uint32_t i;
            if (id >= g_chans[c].block_count || len > g_chans[c].block_size)
                finding("dequeue returned a bad id/len", (long)id, (long)len);
            r = mdcom_fifoch_get(f, id, &p, NULL);
            EXPECT_RC("fifoch_get after dequeue", r, 0);
            check_ptr(p, len);
            for (i = 0; i < len; i++) /* read the whole message: ASan checks it */
                g_sink = (uint8_t)(g_sink + ((uint8_t *)p)[i]);
            held_add(x, c, id);
        }
        break;
    case 5:
        r = mdcom_fifoch_notify(f);
        EXPECT_RC("fifoch_notify", r, 0);
        break;
    case 6: {
        uint32_t ev = u8(s) & 0x1f;
        t0 = g_clock;
        r = mdcom_fifoch_wait(f, ev, to);
        if (r > 0 && ((uint32_t)r & ~ev))
            finding("wait returned events not asked for", r, (long)ev);
        if (r <= 0)
            EXPECT_RC("fifoch_wait", r, FIFO_WAIT_ERRS);
        expect_in_time("fifoch_wait", t0, to);
        break;
    }
    case 7: {
        uint8_t buf[256];
        len = u8(s) % (g_chans[c].block_size + 2);
        memset(buf, (int)op, sizeof(buf));
        t0 = g_clock;
        r = mdcom_fifoch_send(f, buf, len, to);
        EXPECT_RC("fifoch_send", r, 0, MDCOM_FILTERED, -EMSGSIZE, FIFO_WAIT_ERRS, -ENOBUFS, -EPERM,
                  -EAGAIN, -EALREADY, -EPROTO);
        expect_in_time("fifoch_send", t0, to);
        break;
    }
    case 8: {
        uint8_t buf[256];
        uint32_t cap = u8(s) % (g_chans[c].block_size + 2);
        t0 = g_clock;
        r = mdcom_fifoch_recv(f, buf, cap, to);
        if (r >= 0 && (uint32_t)r > cap)
            finding("recv returned more than cap", r, (long)cap);
        if (r < 0)
            EXPECT_RC("fifoch_recv", r, -EMSGSIZE, FIFO_WAIT_ERRS, -EPERM, -EAGAIN, -EPROTO,
                      -EBADMSG, -EALREADY);
        expect_in_time("fifoch_recv", t0, to);
        break;
    }
    case 9: {
        mdcom_fifo_state st;
        r = mdcom_sense_fifoch(f, &st);
        EXPECT_RC("sense_fifoch", r, 0, -EPROTO);
        if (st.block_count != g_chans[c].block_count || st.free_blocks > st.block_count ||
            st.queued > st.queue_depth)
            finding("sense_fifoch out of range", (long)st.free_blocks, (long)st.queued);
        break;
    }
    case 10: {
        mdcom_filter fl;
        memset(&fl, 0, sizeof(fl));
        fl.type = u8(s) % 3;
        fl.n = u8(s) % 4;
        r = mdcom_filter_set(f, (u8(s) & 1) ? &fl : NULL);
        EXPECT_RC("filter_set", r, 0, -EINVAL, -EPERM);
        break;
    }
    default:
        switch (u8(s) % 4) {
        case 0:
            r = mdcom_fifoch_init(f);
            EXPECT_RC("fifoch_init", r, 0, -EPERM);
            if (r == 0) {
                uint32_t j;
                for (j = 0; j < NINST; j++)
                    g_in[j].n_held[c] = 0;
            }
            break;
        case 1:
            r = mdcom_fifoch_set_spin(f, u8(s) & 1 ? MDCOM_NO_SPIN : 0);
            EXPECT_RC("set_spin", r, 0);
            break;
        default:
            r = mdcom_sense_process(x->m, u8(s) % 3);
            if (r < 0)
                EXPECT_RC("sense_process", r, -EINVAL);
            else if (r > (int)MDCOM_MAX_PROCS)
                finding("sense_process count", r, 0);
            break;
        }
        break;
    }
}

static void lifecycle(struct in *s)
{
    uint32_t what = u8(s) % 6;
    int64_t to = g_timeouts[u8(s) % 4];
    switch (what) {
    case 0: /* the remote detaches and re-attaches */
        detach(1);
        attach(1, 1, to);
        break;
    case 1: /* a third attachment comes and goes */
        if (!g_in[2].m)
            attach(2, u8(s) & 1, to);
        else
            detach(2);
        break;
    case 2: /* the master dies (its liveness) and restarts */
        g_alive &= ~2u;
        detach(0);
        g_alive |= 2u;
        attach(0, 0, 0);
        break;
    case 3: /* the remote dies without detaching: its slot stays claimed */
        g_alive ^= 4u;
        break;
    case 4: /* the master terminates the region */
        detach(0);
        break;
    default: /* the master attaches (again) */
        if (!g_in[0].m)
            attach(0, 0, 0);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct in s = {data, size, 0};
    uint32_t k, steps = 0;
    memset(g_region, 0, g_size);
    g_region_present = 1;
    g_clock = 1000000000ull;
    g_alive = 0xe;
    memset(g_in, 0, sizeof(g_in));
    if (attach(0, 0, 0) != 0 || attach(1, 1, 0) != 0)
        finding("attach to a fresh region failed", 0, 0);
    while (s.i < s.n && steps++ < 4096) {
        uint32_t op = u8(&s);
        if (op < 48)
            hostile(&s, op);
        else if (op < 240)
            api(&s, op - 48);
        else
            lifecycle(&s);
    }
    for (k = NINST; k-- > 0;)
        detach(k);
    return 0;
}
