/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_mdcom.c - round trips through libmdcom FIFO channels.
 *
 * One region per cell (unique name), configured at run time:
 *   domain "a" id 0 master  = the ping side (parent; mdcom_init before fork)
 *   domain "b" id 1 remote  = the pong side (child; attaches with a timeout)
 *   FIFO "ping" a -> b, FIFO "pong" b -> a, block_size = the run's largest
 *   size, block_count 8.
 *
 * Four modes:
 *   copy: mdcom_fifoch_send / mdcom_fifoch_recv, the whole payload copied in
 *         and out on both sides (4 copies per round trip).
 *   zc:   get, write the seq header only, enqueue(len = size), notify, then
 *         alloc the block for the next message (a zero-copy sender owns its
 *         next buffer ahead of time, as the raw baseline owns its buffer, so
 *         alloc is not on the round trip; its cost is in the api section);
 *         the receiver dequeues, gets, checks seq and len, answers with a new
 *         block on the other channel, then frees the received block and
 *         notifies its channel (as mdcom.h asks of receivers: it wakes senders
 *         waiting for a block; with nobody waiting it is a fence and a load).
 *   poll: never sleeps: non-blocking calls (MDCOM_POLL) in a loop with a
 *         pause; the channels' spin limit is set high.
 *   block: mdcom_fifoch_set_spin(MDCOM_NO_SPIN), then blocking calls
 *         (mdcom_fifoch_wait(MDCOM_EV_RX, timeout) / send / recv with a
 *         timeout): every wait that is not already satisfied sleeps.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdcom/mdcom.h"
#include "transport.h"

#define MDB_POLL_SPIN_NS 200000u /* spin limit set on channels in poll mode */

struct mdb_ctx {
    /* configuration: must outlive the attachments (mdcom keeps a pointer) */
    char region[32];
    mdcom_domain_cfg dom[2];
    mdcom_channel_cfg ch[2];
    mdcom_config cfg;
    int zc, block;
    const char *tname;
    uint32_t size, max_size;
    int64_t timeout_ns;
    char errbuf[200];
    /* parent: master attachment; child: its own remote attachment. The child
     * inherits the parent's pointer and must leave it alone. */
    mdcom_t *master;
    mdcom_t *remote;
    /* channels of the side that uses this copy of the context */
    mdcom_fifoch_t *tx, *rx;
    unsigned char *buf; /* copy modes: max_size bytes */
    uint32_t next_id;   /* zc: block allocated for the next message, or UINT32_MAX */
};

static int mdb_fail(struct mdb_ctx *c, const char *side, const char *call, int rc)
{
    char what[160];
    snprintf(what, sizeof(what), "%s %s (%u B): %s", c->tname, side, c->size, call);
    bench_err_mdcom(what, rc);
    return rc < 0 ? rc : -EPROTO;
}

static int mdb_setup(void **out, const bench_rt_params *p, const char *tname, int zc, int block)
{
    struct mdb_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->tname = tname;
    c->next_id = UINT32_MAX;
    c->zc = zc;
    c->block = block;
    c->size = p->size;
    c->max_size = p->max_size;
    c->timeout_ns = p->timeout_ns;
    snprintf(c->region, sizeof(c->region), "%s", p->name);

    c->dom[0] = (mdcom_domain_cfg){.name = "a", .id = 0, .role = MDCOM_ROLE_MASTER};
    c->dom[1] = (mdcom_domain_cfg){.name = "b", .id = 1, .role = MDCOM_ROLE_REMOTE};
    c->ch[0] = (mdcom_channel_cfg){.name = "ping",
                                   .type = MDCOM_CHAN_FIFO,
                                   .block_size = p->max_size,
                                   .block_count = 8,
                                   .queue_depth = 0,
                                   .senders = 1u << 0,
                                   .receivers = 1u << 1};
    c->ch[1] = (mdcom_channel_cfg){.name = "pong",
                                   .type = MDCOM_CHAN_FIFO,
                                   .block_size = p->max_size,
                                   .block_count = 8,
                                   .queue_depth = 0,
                                   .senders = 1u << 1,
                                   .receivers = 1u << 0};
    c->cfg = (mdcom_config){.region_name = c->region,
                            .region_size = 0,
                            .mode = 0600,
                            .group = -1,
                            .domains = c->dom,
                            .n_domains = 2,
                            .channels = c->ch,
                            .n_channels = 2};
    if (!zc) {
        c->buf = malloc(p->max_size);
        if (!c->buf) {
            free(c);
            return -ENOMEM;
        }
        memset(c->buf, 0x5a, p->max_size);
    }

    mdcom_init_opts o;
    memset(&o, 0, sizeof(o));
    o.errbuf = c->errbuf;
    o.errbuf_len = sizeof(c->errbuf);
    int rc = mdcom_init(&c->master, &c->cfg, 0, &o);
    if (rc != 0) {
        mdb_fail(c, "master", "mdcom_init", rc);
        if (c->errbuf[0])
            bench_err("  %s", c->errbuf);
        free(c->buf);
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* Open tx/rx on attachment m and set the spin mode. */
static int mdb_open(struct mdb_ctx *c, mdcom_t *m, const char *side, const char *tx, const char *rx)
{
    int rc = mdcom_fifoch_open(m, tx, &c->tx);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_open(tx)", rc);
    rc = mdcom_fifoch_open(m, rx, &c->rx);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_open(rx)", rc);
    uint32_t spin = c->block ? MDCOM_NO_SPIN : MDB_POLL_SPIN_NS;
    rc = mdcom_fifoch_set_spin(c->tx, spin);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_set_spin(tx)", rc);
    rc = mdcom_fifoch_set_spin(c->rx, spin);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_set_spin(rx)", rc);
    return 0;
}

/* "Not yet" answers of a non-blocking call. */
static int mdb_not_yet(int rc) { return rc == -EAGAIN || rc == -ETIMEDOUT || rc == -ENOBUFS; }

/* ---- copy mode --------------------------------------------------------- */

static int mdb_send_copy(struct mdb_ctx *c, const char *side, uint32_t len)
{
    int rc;
    if (c->block) {
        do
            rc = mdcom_fifoch_send(c->tx, c->buf, len, c->timeout_ns);
        while (rc == -EINTR);
    } else {
        uint64_t deadline = 0; /* the clock is read only once the send has to wait */
        for (unsigned spins = 1;; spins++) {
            rc = mdcom_fifoch_send(c->tx, c->buf, len, MDCOM_POLL);
            if (!mdb_not_yet(rc))
                break;
            if (!deadline)
                deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
            bench_relax();
            if ((spins & 255u) == 0 && bench_now_ns() > deadline)
                break;
        }
    }
    if (rc != 0)
        return mdb_fail(c, side, rc == MDCOM_FILTERED ? "mdcom_fifoch_send (filtered)" : "mdcom_fifoch_send", rc);
    return 0;
}

/* Receive into c->buf; returns the length (>= 0) or < 0. */
static int mdb_recv_copy(struct mdb_ctx *c, const char *side)
{
    int rc;
    if (c->block) {
        do
            rc = mdcom_fifoch_recv(c->rx, c->buf, c->max_size, c->timeout_ns);
        while (rc == -EINTR);
    } else {
        uint64_t deadline = 0; /* as in mdb_send_copy */
        for (unsigned spins = 1;; spins++) {
            rc = mdcom_fifoch_recv(c->rx, c->buf, c->max_size, MDCOM_POLL);
            if (!mdb_not_yet(rc))
                break;
            if (!deadline)
                deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
            bench_relax();
            if ((spins & 255u) == 0 && bench_now_ns() > deadline)
                break;
        }
    }
    if (rc < 0)
        return mdb_fail(c, side, "mdcom_fifoch_recv", rc);
    return rc;
}

/* ---- zero-copy mode ------------------------------------------------------ */

/* alloc + get + header + enqueue(len) + notify on tx. */
static int mdb_send_zc(struct mdb_ctx *c, const char *side, uint32_t seq, uint32_t len)
{
    uint32_t id = c->next_id;
    int rc = 0;
    uint64_t deadline = 0;
    c->next_id = UINT32_MAX;
    for (unsigned spins = 1; id == UINT32_MAX; spins++) {
        rc = mdcom_fifoch_alloc(c->tx, &id);
        if (rc != -ENOBUFS)
            break;
        /* the pool never runs dry in a ping-pong; handle it anyway */
        if (!deadline)
            deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
        if (c->block) {
            rc = mdcom_fifoch_wait(c->tx, MDCOM_EV_TX, c->timeout_ns);
            if (rc < 0 && rc != -EINTR)
                return mdb_fail(c, side, "mdcom_fifoch_wait(EV_TX)", rc);
        } else {
            bench_relax();
            if ((spins & 255u) == 0 && bench_now_ns() > deadline)
                return mdb_fail(c, side, "mdcom_fifoch_alloc", rc);
        }
    }
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_alloc", rc);
    void *ptr;
    uint32_t bsize;
    rc = mdcom_fifoch_get(c->tx, id, &ptr, &bsize);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_get", rc);
    if (bsize < len) {
        bench_err("%s %s: block %u has %u bytes, need %u", c->tname, side, id, bsize, len);
        return -EMSGSIZE;
    }
    memcpy(ptr, &seq, sizeof(seq));
    rc = mdcom_fifoch_enqueue(c->tx, id, len);
    if (rc != 0)
        return mdb_fail(c, side, rc == MDCOM_FILTERED ? "mdcom_fifoch_enqueue (filtered)" : "mdcom_fifoch_enqueue", rc);
    rc = mdcom_fifoch_notify(c->tx);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_notify", rc);
    /* the next message's block, while the peer works (-ENOBUFS: the loop
     * above waits for one next time) */
    if (mdcom_fifoch_alloc(c->tx, &c->next_id) != 0)
        c->next_id = UINT32_MAX;
    return 0;
}

/* dequeue (waiting) + get; returns 0 with *id, *seq, *len. */
static int mdb_recv_zc(struct mdb_ctx *c, const char *side, uint32_t *id, uint32_t *seq, uint32_t *len)
{
    int rc;
    uint64_t deadline = 0;
    for (unsigned spins = 1;; spins++) {
        rc = mdcom_fifoch_dequeue(c->rx, id, len);
        if (rc != -EAGAIN)
            break;
        if (!deadline)
            deadline = bench_now_ns() + (uint64_t)c->timeout_ns;
        if (c->block) {
            int64_t left = (int64_t)(deadline - bench_now_ns());
            if (left <= 0)
                return mdb_fail(c, side, "mdcom_fifoch_wait(EV_RX)", -ETIMEDOUT);
            rc = mdcom_fifoch_wait(c->rx, MDCOM_EV_RX, left);
            if (rc < 0 && rc != -EINTR)
                return mdb_fail(c, side, "mdcom_fifoch_wait(EV_RX)", rc);
        } else {
            bench_relax();
            if ((spins & 255u) == 0 && bench_now_ns() > deadline)
                return mdb_fail(c, side, "mdcom_fifoch_dequeue (polling)", -ETIMEDOUT);
        }
    }
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_dequeue", rc);
    void *ptr;
    uint32_t bsize;
    rc = mdcom_fifoch_get(c->rx, *id, &ptr, &bsize);
    if (rc != 0)
        return mdb_fail(c, side, "mdcom_fifoch_get", rc);
    if (*len < 4 || *len > bsize) {
        bench_err("%s %s: block %u carries %u bytes (block size %u)", c->tname, side, *id, *len, bsize);
        mdcom_fifoch_free(c->rx, *id);
        return BENCH_RT_MISMATCH;
    }
    memcpy(seq, ptr, sizeof(*seq));
    return 0;
}

/* free a received block + notify the channel (wakes senders waiting for it) */
static int mdb_free_zc(struct mdb_ctx *c, uint32_t id)
{
    int rc = mdcom_fifoch_free(c->rx, id);
    if (rc != 0)
        return mdb_fail(c, "receiver", "mdcom_fifoch_free", rc);
    rc = mdcom_fifoch_notify(c->rx);
    if (rc != 0)
        return mdb_fail(c, "receiver", "mdcom_fifoch_notify", rc);
    return 0;
}

/* ---- the two sides ----------------------------------------------------------- */

static int mdb_pong(void *ctx)
{
    struct mdb_ctx *c = ctx;
    const char *side = "pong";
    mdcom_init_opts o;
    memset(&o, 0, sizeof(o));
    o.attach_timeout_ns = c->timeout_ns;
    o.errbuf = c->errbuf;
    o.errbuf_len = sizeof(c->errbuf);
    c->errbuf[0] = '\0';
    int rc = mdcom_init(&c->remote, &c->cfg, 1, &o);
    if (rc != 0) {
        mdb_fail(c, side, "mdcom_init(remote)", rc);
        if (c->errbuf[0])
            bench_err("  %s", c->errbuf);
        return rc;
    }
    rc = mdb_open(c, c->remote, side, "pong", "ping");
    uint32_t last = 0;
    int bad = 0;
    while (rc == 0) {
        uint32_t seq, len;
        if (c->zc) {
            uint32_t id;
            rc = mdb_recv_zc(c, side, &id, &seq, &len);
            if (rc != 0)
                break;
            if (seq != BENCH_SEQ_STOP && (seq != last + 1 || len != c->size)) {
                bench_err("%s pong: got seq %u len %u, expected seq %u len %u", c->tname, seq, len,
                          last + 1, c->size);
                mdcom_fifoch_free(c->rx, id);
                rc = BENCH_RT_MISMATCH;
                break;
            }
            if (seq != BENCH_SEQ_STOP)
                rc = mdb_send_zc(c, side, seq, len);
            int frc = mdb_free_zc(c, id);
            if (rc == 0 && frc != 0)
                rc = frc;
        } else {
            int n = mdb_recv_copy(c, side);
            if (n < 0) {
                rc = n;
                break;
            }
            len = (uint32_t)n;
            seq = len >= 4 ? bench_head(c->buf) : 0;
            if (seq != BENCH_SEQ_STOP) {
                if (seq != last + 1 || len != c->size) {
                    bench_err("%s pong: got seq %u len %u, expected seq %u len %u", c->tname, seq,
                              len, last + 1, c->size);
                    rc = BENCH_RT_MISMATCH;
                    break;
                }
                if (!bench_stamp_ok(c->buf, len, seq)) {
                    bench_err("%s pong: payload of seq %u is damaged (tail %u)", c->tname, seq,
                              len >= 8 ? bench_tail(c->buf, len) : 0);
                    bad = 1;
                }
                rc = mdb_send_copy(c, side, len);
            }
        }
        if (seq == BENCH_SEQ_STOP)
            break;
        last = seq;
    }
    int trc = mdcom_term(c->remote);
    if (trc != 0 && rc == 0)
        rc = mdb_fail(c, side, "mdcom_term(remote)", trc);
    if (rc == 0 && bad)
        rc = BENCH_RT_MISMATCH;
    return rc;
}

static int mdb_ping_open(void *ctx)
{
    struct mdb_ctx *c = ctx;
    return mdb_open(c, c->master, "ping", "ping", "pong");
}

static int mdb_ping(void *ctx, uint32_t seq)
{
    struct mdb_ctx *c = ctx;
    const char *side = "ping";
    if (c->zc) {
        int rc = mdb_send_zc(c, side, seq, c->size);
        if (rc != 0)
            return rc;
        uint32_t id, rseq, len;
        rc = mdb_recv_zc(c, side, &id, &rseq, &len);
        if (rc != 0)
            return rc;
        int frc = mdb_free_zc(c, id);
        if (rseq != seq || len != c->size) {
            bench_err("%s ping: reply carries seq %u len %u, expected seq %u len %u", c->tname, rseq,
                      len, seq, c->size);
            return BENCH_RT_MISMATCH;
        }
        return frc;
    }
    bench_stamp(c->buf, c->size, seq);
    int rc = mdb_send_copy(c, side, c->size);
    if (rc != 0)
        return rc;
    int n = mdb_recv_copy(c, side);
    if (n < 0)
        return n;
    if ((uint32_t)n != c->size || !bench_stamp_ok(c->buf, c->size, seq)) {
        bench_err("%s ping: reply of seq %u: len %d (expected %u), head %u, tail %u", c->tname,
                  seq, n, c->size, n >= 4 ? bench_head(c->buf) : 0,
                  n >= 8 ? bench_tail(c->buf, (uint32_t)n) : 0);
        return BENCH_RT_MISMATCH;
    }
    return 0;
}

static void mdb_stop(void *ctx)
{
    struct mdb_ctx *c = ctx;
    if (!c->tx) { /* ping_open failed: try to reach the peer anyway */
        if (mdcom_fifoch_open(c->master, "ping", &c->tx) != 0)
            return;
    }
    if (c->zc) {
        mdb_send_zc(c, "ping", BENCH_SEQ_STOP, 4);
    } else {
        uint32_t stop = BENCH_SEQ_STOP;
        memcpy(c->buf, &stop, sizeof(stop));
        mdb_send_copy(c, "ping", 4);
    }
}

static void mdb_teardown(void *ctx)
{
    struct mdb_ctx *c = ctx;
    int rc = mdcom_term(c->master);
    if (rc != 0)
        mdb_fail(c, "ping", "mdcom_term(master)", rc);
    free(c->buf);
    free(c);
}

static int mdb_setup_copy_poll(void **out, const bench_rt_params *p)
{
    return mdb_setup(out, p, "mdcom-copy-poll", 0, 0);
}
static int mdb_setup_zc_poll(void **out, const bench_rt_params *p)
{
    return mdb_setup(out, p, "mdcom-zc-poll", 1, 0);
}
static int mdb_setup_copy_block(void **out, const bench_rt_params *p)
{
    return mdb_setup(out, p, "mdcom-copy-block", 0, 1);
}
static int mdb_setup_zc_block(void **out, const bench_rt_params *p)
{
    return mdb_setup(out, p, "mdcom-zc-block", 1, 1);
}

/* The message interface of the copy modes (tr_mdcom_msg.c). */
extern const bench_msg_ops bench_msg_mdcom_copy_poll;
extern const bench_msg_ops bench_msg_mdcom_copy_block;

#define MDB_TRANSPORT(var, tname, d, cls, base, setupfn, msgops)                                  \
    const bench_transport var = {.name = tname,                                                    \
                                 .desc = d,                                                        \
                                 .wait_class = cls,                                                \
                                 .baseline = base,                                                 \
                                 .setup = setupfn,                                                 \
                                 .pong = mdb_pong,                                                 \
                                 .ping_open = mdb_ping_open,                                       \
                                 .ping = mdb_ping,                                                 \
                                 .stop = mdb_stop,                                                 \
                                 .teardown = mdb_teardown,                                         \
                                 .msg = msgops}

MDB_TRANSPORT(bench_tr_mdcom_copy_poll, "mdcom-copy-poll",
              "mdcom_fifoch_send/recv with MDCOM_POLL in a loop (copies the payload)",
              BENCH_WAIT_POLL, "raw-spin", mdb_setup_copy_poll, &bench_msg_mdcom_copy_poll);
MDB_TRANSPORT(bench_tr_mdcom_zc_poll, "mdcom-zc-poll",
              "alloc/get/enqueue/notify + dequeue polled in a loop (header only)",
              BENCH_WAIT_POLL, "raw-spin", mdb_setup_zc_poll, NULL);
MDB_TRANSPORT(bench_tr_mdcom_copy_block, "mdcom-copy-block",
              "mdcom_fifoch_send/recv blocking, spin off (copies the payload)",
              BENCH_WAIT_BLOCK, "raw-futex", mdb_setup_copy_block, &bench_msg_mdcom_copy_block);
MDB_TRANSPORT(bench_tr_mdcom_zc_block, "mdcom-zc-block",
              "zero-copy with mdcom_fifoch_wait(EV_RX), spin off (header only)",
              BENCH_WAIT_BLOCK, "raw-futex", mdb_setup_zc_block, NULL);
