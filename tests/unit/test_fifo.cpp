/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fifo.cpp - the FIFO channel API: pool, queue, zero-copy access, copy
 * helpers, permissions, re-initialisation.
 */
#include "fixture.h"

#include <set>

using namespace ut;

namespace {

class Fifo : public PairTest {
protected:
    void SetUp() override
    {
        c_.std_domains(3);
        c_.fifo("data", 64, 8, 0, bit(kMaster), bit(kR1));                           /* 0 */
        c_.fifo("both", 32, 4, 0, bit(kMaster) | bit(kR1), bit(kMaster) | bit(kR1)); /* 1 */
        c_.fifo("shallow", 32, 8, 2, bit(kMaster), bit(kR1));                        /* 2 */
        c_.smem("shm", 64, bit(kMaster) | bit(kR1));                                 /* 3 */
        c_.fifo("tiny", 1, 4, 0, bit(kMaster), bit(kR1));                            /* 4 */
        c_.fifo("r2only", 16, 2, 0, bit(kR2), bit(kR2));                             /* 5 */
        ASSERT_NO_FATAL_FAILURE(attach("data"));
    }
    /* three blocks of tx_ taken, a and b queued (1 byte each), c held */
    void take3(uint32_t &a, uint32_t &b, uint32_t &c)
    {
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &a));
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &b));
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &c));
        ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, a, 1));
        ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, b, 1));
    }
    mdcom_fifo_state sense(mdcom_fifoch_t *ch)
    {
        mdcom_fifo_state st;
        std::memset(&st, 0xff, sizeof(st));
        EXPECT_EQ(0, mdcom_sense_fifoch(ch, &st));
        return st;
    }
};

} // namespace

TEST_F(Fifo, OpenByNameAndIndex)
{
    mdcom_fifoch_t *a = nullptr, *b = nullptr;
    EXPECT_EQ(0, mdcom_fifoch_at(m_, 0, &a));
    EXPECT_EQ(a, tx_);
    EXPECT_EQ(0, mdcom_fifoch_open(m_, "both", &b));
    EXPECT_NE(a, b);
    EXPECT_EQ(-ENOENT, mdcom_fifoch_open(m_, "nope", &a));
    EXPECT_EQ(-ENOENT, mdcom_fifoch_open(m_, "shm", &a)) << "an SMEM channel is not a FIFO";
    EXPECT_EQ(-ENOENT, mdcom_fifoch_at(m_, 3, &a));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_at(m_, 6, &a));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_at(m_, 0xffffffffu, &a));
    EXPECT_EQ(-EPERM, mdcom_fifoch_open(m_, "r2only", &a)) << "neither sender nor receiver";
    EXPECT_EQ(-EPERM, mdcom_fifoch_at(m_, 5, &a));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_open(nullptr, "data", &a));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_open(m_, nullptr, &a));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_open(m_, "data", nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_at(nullptr, 0, &a));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_at(m_, 0, nullptr));
    std::string longname(40, 'x');
    EXPECT_EQ(-ENOENT, mdcom_fifoch_open(m_, longname.c_str(), &a));
}

TEST_F(Fifo, AllocUntilEnobufsThenFree)
{
    std::set<uint32_t> ids;
    for (int i = 0; i < 8; i++) {
        uint32_t id = 0xffffffffu;
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
        EXPECT_LT(id, 8u);
        EXPECT_TRUE(ids.insert(id).second) << "id " << id << " handed out twice";
        EXPECT_EQ(sense(tx_).free_blocks, 7u - i);
    }
    uint32_t id;
    EXPECT_EQ(-ENOBUFS, mdcom_fifoch_alloc(tx_, &id));
    EXPECT_EQ(-ENOBUFS, mdcom_fifoch_alloc(tx_, &id));
    for (uint32_t i : ids)
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, i));
    EXPECT_EQ(sense(tx_).free_blocks, 8u);
    for (uint32_t i : ids)
        EXPECT_EQ(-EALREADY, mdcom_fifoch_free(tx_, i)) << "double free";
    EXPECT_EQ(sense(tx_).free_blocks, 8u);
    EXPECT_EQ(-EINVAL, mdcom_fifoch_free(tx_, 8));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_free(tx_, 0xffffffffu));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_alloc(tx_, nullptr));
    EXPECT_EQ(0u, sense(tx_).errors);
    /* the pool keeps working after many cycles (positions wrap the ring) */
    for (int i = 0; i < 1000; i++) {
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
        ASSERT_EQ(0, mdcom_fifoch_free(tx_, id));
    }
    EXPECT_EQ(sense(tx_).free_blocks, 8u);
}

TEST_F(Fifo, FreeByAnotherProcessIsEalready)
{
    mdcom_fifoch_t *mb = m_.fifo("both"), *rb = r_.fifo("both");
    uint32_t id;
    ASSERT_EQ(0, mdcom_fifoch_alloc(mb, &id));
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(rb, id)) << "not held by r1";
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(rb, id, 1)) << "not allocated by r1";
    EXPECT_EQ(0, mdcom_fifoch_free(mb, id));
}

TEST_F(Fifo, EnqueueChecks)
{
    uint32_t id;
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, 0, 1)) << "block 0 is free, not allocated";
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_enqueue(tx_, id, 65)) << "len > block_size";
    EXPECT_EQ(-EINVAL, mdcom_fifoch_enqueue(tx_, id, 0xffffffffu));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_enqueue(tx_, 8, 1)) << "id out of range";
    EXPECT_EQ(-EINVAL, mdcom_fifoch_enqueue(nullptr, id, 1));
    EXPECT_EQ(0, mdcom_fifoch_enqueue(tx_, id, 64)) << "len == block_size is fine";
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, id, 1)) << "already queued";
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(tx_, id)) << "a queued block belongs to the receiver";
    uint32_t got, len;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &got, &len));
    EXPECT_EQ(got, id);
    EXPECT_EQ(len, 64u);
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, id, 1)) << "held by the receiver";
    EXPECT_EQ(0, mdcom_fifoch_free(rx_, id));
    EXPECT_EQ(0u, sense(tx_).errors);
}

TEST_F(Fifo, DequeueEmptyIsEagain)
{
    uint32_t id, len;
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &id, &len));
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &id, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_dequeue(rx_, nullptr, &len));
}

TEST_F(Fifo, FifoOrderAndData)
{
    for (int round = 0; round < 5; round++) {
        std::vector<uint32_t> sent;
        for (uint32_t i = 0; i < 8; i++) {
            uint32_t id;
            void *p;
            uint32_t sz;
            ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
            ASSERT_EQ(0, mdcom_fifoch_get(tx_, id, &p, &sz));
            ASSERT_EQ(sz, 64u);
            std::memset(p, (int)(i + round * 8), i + 1);
            ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, id, i + 1));
            sent.push_back(id);
        }
        EXPECT_EQ(0, mdcom_fifoch_notify(tx_));
        mdcom_fifo_state st = sense(rx_);
        EXPECT_EQ(st.queued, 8u);
        EXPECT_EQ(st.free_blocks, 0u);
        for (uint32_t i = 0; i < 8; i++) {
            uint32_t id, len;
            void *p;
            ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &id, &len));
            EXPECT_EQ(id, sent[i]) << "FIFO order";
            EXPECT_EQ(len, i + 1);
            ASSERT_EQ(0, mdcom_fifoch_get(rx_, id, &p, nullptr));
            for (uint32_t k = 0; k < len; k++)
                ASSERT_EQ(((uint8_t *)p)[k], (uint8_t)(i + round * 8));
            EXPECT_EQ(0, mdcom_fifoch_free(rx_, id));
        }
        uint32_t id;
        EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &id, nullptr));
    }
    mdcom_fifo_state st = sense(tx_);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.errors, 0u);
}

TEST_F(Fifo, SenseCounts)
{
    mdcom_fifo_state st = sense(tx_);
    EXPECT_EQ(st.block_size, 64u);
    EXPECT_EQ(st.block_count, 8u);
    EXPECT_EQ(st.queue_depth, 8u);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.filtered, 0u);
    EXPECT_EQ(st.errors, 0u);
    uint32_t a, b, c;
    ASSERT_NO_FATAL_FAILURE(take3(a, b, c));
    st = sense(rx_);
    EXPECT_EQ(st.free_blocks, 5u);
    EXPECT_EQ(st.queued, 2u);
    mdcom_fifo_state st2 = sense(m_.fifo("shallow"));
    EXPECT_EQ(st2.queue_depth, 2u);
    EXPECT_EQ(st2.block_count, 8u);
    EXPECT_EQ(-EINVAL, mdcom_sense_fifoch(tx_, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_sense_fifoch(nullptr, &st));
}

TEST_F(Fifo, PermissionsOfSendersAndReceivers)
{
    uint32_t id, len;
    /* master only sends on "data", r1 only receives */
    EXPECT_EQ(-EPERM, mdcom_fifoch_dequeue(tx_, &id, &len));
    EXPECT_EQ(-EPERM, mdcom_fifoch_alloc(rx_, &id));
    EXPECT_EQ(-EPERM, mdcom_fifoch_enqueue(rx_, 0, 1));
    EXPECT_EQ(-EPERM, mdcom_fifoch_send(rx_, "x", 1, 0));
    EXPECT_EQ(-EPERM, mdcom_fifoch_recv(tx_, &id, sizeof(id), 0));
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    EXPECT_EQ(-EPERM, mdcom_filter_set(rx_, &f));
    /* a domain that is neither cannot even open it */
    Inst r2;
    ASSERT_EQ(0, r2.init(c_.get(), kR2)) << r2.err;
    mdcom_fifoch_t *ch = nullptr;
    EXPECT_EQ(-EPERM, mdcom_fifoch_open(r2, "data", &ch));
    EXPECT_EQ(ch, nullptr);
}

TEST_F(Fifo, ZeroCopyPointersAreDistinctAndInsideTheRegion)
{
    std::set<uintptr_t> seen;
    for (uint32_t id = 0; id < 8; id++) {
        void *p = nullptr, *q = nullptr;
        uint32_t sz = 0;
        ASSERT_EQ(0, mdcom_fifoch_get(tx_, id, &p, &sz));
        EXPECT_EQ(sz, 64u);
        EXPECT_TRUE(m_.inside(p, sz)) << "block " << id;
        EXPECT_EQ((uintptr_t)p % 64, 0u) << "blocks are CL-aligned";
        EXPECT_TRUE(seen.insert((uintptr_t)p).second);
        ASSERT_EQ(0, mdcom_fifoch_get(rx_, id, &q, nullptr));
        EXPECT_TRUE(r_.inside(q, sz)) << "block " << id;
    }
    /* distinct and non-overlapping */
    uintptr_t prev = 0;
    for (uintptr_t p : seen) {
        if (prev) {
            EXPECT_GE(p - prev, 64u);
        }
        prev = p;
    }
    void *p;
    EXPECT_EQ(-EINVAL, mdcom_fifoch_get(tx_, 8, &p, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_get(tx_, 0xffffffffu, &p, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_get(tx_, 0, nullptr, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_get(nullptr, 0, &p, nullptr));

    /* both mappings alias the same block */
    uint32_t id;
    void *w, *r;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
    ASSERT_EQ(0, mdcom_fifoch_get(tx_, id, &w, nullptr));
    std::memcpy(w, "zero-copy", 10);
    ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, id, 10));
    uint32_t got;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &got, nullptr));
    ASSERT_EQ(0, mdcom_fifoch_get(rx_, got, &r, nullptr));
    EXPECT_STREQ((const char *)r, "zero-copy");
    EXPECT_EQ(0, mdcom_fifoch_free(rx_, got));
}

TEST_F(Fifo, OneByteBlocks)
{
    mdcom_fifoch_t *t = m_.fifo("tiny"), *r = r_.fifo("tiny");
    for (int i = 0; i < 20; i++) {
        uint8_t b = (uint8_t)(i * 7), out = 0;
        ASSERT_EQ(0, mdcom_fifoch_send(t, &b, 1, 0));
        ASSERT_EQ(1, mdcom_fifoch_recv(r, &out, 1, 0));
        EXPECT_EQ(out, b);
    }
    uint8_t two[2] = {1, 2};
    EXPECT_EQ(-EMSGSIZE, mdcom_fifoch_send(t, two, 2, 0));
    EXPECT_EQ(0, mdcom_fifoch_send(t, nullptr, 0, 0));
    uint8_t none;
    EXPECT_EQ(0, mdcom_fifoch_recv(r, &none, 0, 0)) << "empty message";
    void *p[4];
    for (uint32_t id = 0; id < 4; id++) {
        ASSERT_EQ(0, mdcom_fifoch_get(t, id, &p[id], nullptr));
        EXPECT_TRUE(m_.inside(p[id], 1));
    }
}

TEST(FifoBig, FourMiBBlocks)
{
    Config c;
    c.std_domains(2);
    c.fifo("big", 4u << 20, 2, 0, bit(kMaster), bit(kR1));
    Inst m, r;
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    ASSERT_EQ(0, r.init(c.get(), kR1)) << r.err;
    mdcom_fifoch_t *t = m.fifo("big"), *rx = r.fifo("big");
    const uint32_t n = 4u << 20;
    std::vector<uint8_t> msg(n), out(n);
    for (uint32_t i = 0; i < n; i++)
        msg[i] = (uint8_t)(i * 2654435761u >> 24);
    for (int k = 0; k < 3; k++) {
        msg[0] = (uint8_t)k;
        ASSERT_EQ(0, mdcom_fifoch_send(t, msg.data(), n, 0));
        ASSERT_EQ((int)n, mdcom_fifoch_recv(rx, out.data(), n, 0));
        ASSERT_EQ(0, std::memcmp(msg.data(), out.data(), n));
    }
    for (uint32_t id = 0; id < 2; id++) {
        void *p;
        uint32_t sz;
        ASSERT_EQ(0, mdcom_fifoch_get(t, id, &p, &sz));
        EXPECT_EQ(sz, n);
        EXPECT_TRUE(m.inside(p, sz));
    }
    EXPECT_EQ(-EMSGSIZE, mdcom_fifoch_send(t, msg.data(), n + 1, 0));
}

TEST_F(Fifo, InitByMasterResetsTheChannel)
{
    uint32_t a, b, c;
    ASSERT_NO_FATAL_FAILURE(take3(a, b, c));
    uint32_t got;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &got, nullptr));
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    uint32_t d;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &d));
    ASSERT_EQ(MDCOM_FILTERED, mdcom_fifoch_enqueue(tx_, d, 1));
    ASSERT_EQ(0, mdcom_filter_set(tx_, nullptr));

    EXPECT_EQ(-EPERM, mdcom_fifoch_init(rx_)) << "only the master may re-initialise";
    EXPECT_EQ(0, mdcom_fifoch_init(tx_));
    mdcom_fifo_state st = sense(rx_);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.filtered, 0u);
    EXPECT_EQ(st.errors, 0u);
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(rx_, got)) << "ownership was reset";
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, c, 1));
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &got, nullptr));
    /* and it works as new */
    char buf[4];
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "abc", 4, 0));
    EXPECT_EQ(4, mdcom_fifoch_recv(rx_, buf, sizeof(buf), 0));
    EXPECT_STREQ(buf, "abc");
    EXPECT_EQ(-EINVAL, mdcom_fifoch_init(nullptr));
}

TEST_F(Fifo, SendRecvHelpers)
{
    char buf[64];
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "hello", 5, 0));
    EXPECT_EQ(5, mdcom_fifoch_recv(rx_, buf, sizeof(buf), 0));
    EXPECT_EQ(0, std::memcmp(buf, "hello", 5));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_recv(rx_, buf, sizeof(buf), MDCOM_POLL));

    /* -EMSGSIZE on the send side: nothing is taken from the pool */
    std::vector<char> big(65, 'x');
    EXPECT_EQ(-EMSGSIZE, mdcom_fifoch_send(tx_, big.data(), 65, 0));
    EXPECT_EQ(sense(tx_).free_blocks, 8u);
    EXPECT_EQ(0, mdcom_fifoch_send(tx_, big.data(), 64, 0));
    EXPECT_EQ(64, mdcom_fifoch_recv(rx_, buf, 64, 0));

    /* -EMSGSIZE on the receive side: consumed, first cap bytes copied,
     * counted as an error, block back in the pool */
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "0123456789", 10, 0));
    std::memset(buf, 0, sizeof(buf));
    EXPECT_EQ(-EMSGSIZE, mdcom_fifoch_recv(rx_, buf, 4, 0));
    EXPECT_EQ(0, std::memcmp(buf, "0123", 4));
    EXPECT_EQ(buf[4], 0) << "no more than cap bytes";
    mdcom_fifo_state st = sense(rx_);
    EXPECT_EQ(st.errors, 1u);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_recv(rx_, buf, sizeof(buf), MDCOM_POLL)) << "consumed";

    /* empty message, NULL buffer with zero length */
    EXPECT_EQ(0, mdcom_fifoch_send(tx_, nullptr, 0, 0));
    EXPECT_EQ(0, mdcom_fifoch_recv(rx_, buf, sizeof(buf), 0));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_send(tx_, nullptr, 1, 0));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_recv(rx_, nullptr, 1, 0));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_send(nullptr, "x", 1, 0));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_recv(nullptr, buf, 1, 0));

    /* pool exhausted: send with POLL times out, nothing leaks */
    std::vector<uint32_t> held(8);
    for (uint32_t &id : held)
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_send(tx_, "x", 1, MDCOM_POLL));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_send(tx_, "x", 1, ms(5)));
    for (uint32_t id : held)
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, id));
    EXPECT_EQ(sense(tx_).free_blocks, 8u);
}

TEST_F(Fifo, BothDirections)
{
    mdcom_fifoch_t *mb = m_.fifo("both"), *rb = r_.fifo("both");
    char buf[32];
    ASSERT_EQ(0, mdcom_fifoch_send(mb, "m->r", 5, 0));
    ASSERT_EQ(0, mdcom_fifoch_send(rb, "r->m", 5, 0));
    /* either side may take either message: one queue */
    EXPECT_EQ(5, mdcom_fifoch_recv(rb, buf, sizeof(buf), 0));
    EXPECT_STREQ(buf, "m->r");
    EXPECT_EQ(5, mdcom_fifoch_recv(mb, buf, sizeof(buf), 0));
    EXPECT_STREQ(buf, "r->m");
    /* a sender may receive its own message */
    ASSERT_EQ(0, mdcom_fifoch_send(mb, "self", 5, 0));
    EXPECT_EQ(5, mdcom_fifoch_recv(mb, buf, sizeof(buf), 0));
}

TEST_F(Fifo, QueueShallowerThanThePool)
{
    mdcom_fifoch_t *t = m_.fifo("shallow"), *r = r_.fifo("shallow");
    uint32_t a, b, c;
    ASSERT_EQ(0, mdcom_fifoch_alloc(t, &a));
    ASSERT_EQ(0, mdcom_fifoch_alloc(t, &b));
    ASSERT_EQ(0, mdcom_fifoch_alloc(t, &c));
    ASSERT_EQ(0, mdcom_fifoch_enqueue(t, a, 1));
    ASSERT_EQ(0, mdcom_fifoch_enqueue(t, b, 2));
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_enqueue(t, c, 3)) << "queue full";
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_enqueue(t, c, 3));
    mdcom_fifo_state st = sense(t);
    EXPECT_EQ(st.queued, 2u);
    EXPECT_EQ(st.free_blocks, 5u);
    EXPECT_EQ(st.errors, 0u);
    /* the block stays allocated to the sender after -EAGAIN */
    uint32_t got, len;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(r, &got, &len));
    EXPECT_EQ(got, a);
    EXPECT_EQ(0, mdcom_fifoch_enqueue(t, c, 3));
    ASSERT_EQ(0, mdcom_fifoch_free(r, got));
    /* send() on a full queue times out and returns its block */
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_send(t, "x", 1, ms(20)));
    EXPECT_EQ(sense(t).free_blocks, 6u);
    ASSERT_EQ(0, mdcom_fifoch_dequeue(r, &got, &len));
    EXPECT_EQ(got, b);
    EXPECT_EQ(len, 2u);
    ASSERT_EQ(0, mdcom_fifoch_free(r, got));
    ASSERT_EQ(0, mdcom_fifoch_dequeue(r, &got, &len));
    EXPECT_EQ(got, c);
    EXPECT_EQ(len, 3u);
    ASSERT_EQ(0, mdcom_fifoch_free(r, got));
    EXPECT_EQ(sense(t).free_blocks, 8u);
}

/* queue_depth 1 is a valid config ("power of two >= 1"): one queued message
 * makes the queue full. */
using FifoDepth1 = OneFifo<16, 4, 1>;
TEST_F(FifoDepth1, QueueDepthOne)
{
    mdcom_fifoch_t *t = tx_, *rx = rx_;
    for (int round = 0; round < 3; round++) {
        uint32_t a, b, got;
        ASSERT_EQ(0, mdcom_fifoch_alloc(t, &a));
        ASSERT_EQ(0, mdcom_fifoch_alloc(t, &b));
        ASSERT_EQ(0, mdcom_fifoch_enqueue(t, a, 1));
        EXPECT_EQ((int)MDCOM_EV_RX, mdcom_fifoch_wait(rx, MDCOM_EV_RX, MDCOM_POLL));
        EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(t, MDCOM_EV_SPACE, MDCOM_POLL)) << "queue full";
        EXPECT_EQ(-EAGAIN, mdcom_fifoch_enqueue(t, b, 2)) << "a second message in a 1-slot queue";
        ASSERT_EQ(0, mdcom_fifoch_dequeue(rx, &got, nullptr)) << "round " << round;
        EXPECT_EQ(got, a);
        EXPECT_EQ(0, mdcom_fifoch_free(rx, got));
        mdcom_fifoch_free(t, b);
        mdcom_fifo_state st;
        ASSERT_EQ(0, mdcom_sense_fifoch(t, &st));
        EXPECT_EQ(st.free_blocks, 4u) << "round " << round;
        EXPECT_EQ(st.errors, 0u);
        if (st.free_blocks != 4)
            break;
    }
    /* one block only (automatic depth 1) works */
    Config c1;
    c1.std_domains(2);
    c1.fifo("one", 8, 1, 0, bit(kMaster), bit(kR1));
    Inst m1, r1;
    ASSERT_EQ(0, m1.init(c1.get(), kMaster)) << m1.err;
    ASSERT_EQ(0, r1.init(c1.get(), kR1)) << r1.err;
    mdcom_fifoch_t *t1 = m1.fifo("one"), *x1 = r1.fifo("one");
    for (int i = 0; i < 10; i++) {
        char b[8];
        ASSERT_EQ(0, mdcom_fifoch_send(t1, "abc", 4, 0));
        ASSERT_EQ(4, mdcom_fifoch_recv(x1, b, sizeof(b), 0));
    }
}

/* Positions are free-running u32: a channel that has moved 2^32 messages
 * keeps working across the wrap. The state "P messages already passed" is
 * written directly: positions P, slot i free for position P + ((i - P) & mask). */
TEST_F(Fifo, PositionsWrapAround)
{
    Shm shm(c_.name());
    ASSERT_TRUE(shm.ok());
    Geometry g(c_.get());
    ASSERT_EQ(0, g.rc);
    for (uint32_t ci : {0u, 2u}) { /* "data" (depth 8) and "shallow" (depth 2) */
        FifoView f(shm.base, g.cl[ci]);
        const uint32_t qcap = g.cl[ci].qcap, P = 0xffffffffu - 2 * qcap - 3;
        wr32(f.enq(), P);
        wr32(f.deq(), P);
        for (uint32_t k = 0; k < qcap; k++)
            wr32(f.qseq(P + k), 0); /* empty: 0 matches no position (full is 2p + 1) */
        mdcom_fifoch_t *t = m_.fifo(ci == 0 ? "data" : "shallow");
        mdcom_fifoch_t *r = r_.fifo(ci == 0 ? "data" : "shallow");
        for (uint32_t i = 0; i < 10 * qcap; i++) {
            uint32_t v = i * 2654435761u;
            ASSERT_EQ(0, mdcom_fifoch_send(t, &v, 4, 0)) << "message " << i;
            if (i % 2 == 0 && qcap > 1) {
                ASSERT_EQ(0, mdcom_fifoch_send(t, &v, 4, 0));
            }
            uint32_t got = 0;
            ASSERT_EQ(4, mdcom_fifoch_recv(r, &got, 4, 0)) << "message " << i;
            EXPECT_EQ(got, v);
            if (i % 2 == 0 && qcap > 1) {
                ASSERT_EQ(4, mdcom_fifoch_recv(r, &got, 4, 0));
            }
        }
        EXPECT_LT(rd32(f.enq()), P) << "the position wrapped";
        mdcom_fifo_state st = sense(t);
        EXPECT_EQ(st.queued, 0u);
        EXPECT_EQ(st.errors, 0u);
    }
}

TEST(FifoMax, MaxBlockCount)
{
    Config c;
    c.std_domains(2);
    c.fifo("max", 1, MDCOM_MAX_BLOCKS, 0, bit(kMaster), bit(kR1));
    Inst m, r;
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    ASSERT_EQ(0, r.init(c.get(), kR1)) << r.err;
    mdcom_fifoch_t *t = m.fifo("max"), *rx = r.fifo("max");
    std::vector<uint32_t> ids;
    uint32_t id;
    while (mdcom_fifoch_alloc(t, &id) == 0) {
        void *p;
        ASSERT_EQ(0, mdcom_fifoch_get(t, id, &p, nullptr));
        *(uint8_t *)p = (uint8_t)ids.size();
        ids.push_back(id);
    }
    ASSERT_EQ(ids.size(), (size_t)MDCOM_MAX_BLOCKS);
    EXPECT_EQ(-ENOBUFS, mdcom_fifoch_alloc(t, &id));
    for (uint32_t i : ids)
        ASSERT_EQ(0, mdcom_fifoch_enqueue(t, i, 1));
    mdcom_fifo_state st;
    ASSERT_EQ(0, mdcom_sense_fifoch(rx, &st));
    EXPECT_EQ(st.queued, MDCOM_MAX_BLOCKS);
    EXPECT_EQ(st.free_blocks, 0u);
    for (size_t k = 0; k < ids.size(); k++) {
        uint32_t len;
        void *p;
        ASSERT_EQ(0, mdcom_fifoch_dequeue(rx, &id, &len));
        ASSERT_EQ(id, ids[k]);
        ASSERT_EQ(0, mdcom_fifoch_get(rx, id, &p, nullptr));
        ASSERT_EQ(*(uint8_t *)p, (uint8_t)k);
        ASSERT_EQ(0, mdcom_fifoch_free(rx, id));
    }
    ASSERT_EQ(0, mdcom_sense_fifoch(rx, &st));
    EXPECT_EQ(st.free_blocks, MDCOM_MAX_BLOCKS);
}

TEST_F(Fifo, TermReturnsHeldBlocks)
{
    Inst r2;
    ASSERT_EQ(0, r2.init(c_.get(), kR1)) << r2.err;
    mdcom_fifoch_t *rx2 = r2.fifo("data");
    uint32_t a, b, got;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &a));
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &b));
    ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, a, 1));
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx2, &got, nullptr));
    EXPECT_EQ(sense(tx_).free_blocks, 6u);
    EXPECT_EQ(0, r2.term());
    EXPECT_EQ(sense(tx_).free_blocks, 7u) << "the held block went back to the pool";
    EXPECT_EQ(0, mdcom_fifoch_free(tx_, b));
}

TEST_F(Fifo, WrongHandleTypesAreEinval)
{
    mdcom_smemch_t *s = m_.smem("shm");
    mdcom_fifoch_t *bogus = (mdcom_fifoch_t *)s;
    uint32_t id;
    mdcom_fifo_state st;
    EXPECT_EQ(-EINVAL, mdcom_fifoch_alloc(bogus, &id));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_free(bogus, 0));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_enqueue(bogus, 0, 0));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_dequeue(bogus, &id, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_notify(bogus));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_wait(bogus, MDCOM_EV_RX, 0));
    EXPECT_EQ(-EINVAL, mdcom_sense_fifoch(bogus, &st));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_set_spin(bogus, 0));
    EXPECT_EQ(-EINVAL, mdcom_filter_set(bogus, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_notify(nullptr));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_alloc(nullptr, &id));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_free(nullptr, 0));
    EXPECT_EQ(-EINVAL, mdcom_smemch_trylock((mdcom_smemch_t *)tx_));
}

/* recv() documents -EINVAL only for buf == NULL with cap > 0, so (NULL, 0) is
 * a valid call (e.g. to drop a message). It must not pass NULL to memcpy
 * (undefined behaviour; UBSan aborts the process here). Its own suite, last in
 * this file, so that the other tests run first under the sanitizer preset. */
using FifoZeroCap = OneFifo<64, 8, 0>;
TEST_F(FifoZeroCap, RecvWithNullBufferAndZeroCap)
{
    mdcom_fifoch_t *tx = tx_, *rx = rx_;
    ASSERT_EQ(0, mdcom_fifoch_send(tx, nullptr, 0, 0));
    EXPECT_EQ(0, mdcom_fifoch_recv(rx, nullptr, 0, 0)) << "empty message, no buffer";
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "abc", 3, 0));
    EXPECT_EQ(-EMSGSIZE, mdcom_fifoch_recv(rx, nullptr, 0, 0)) << "dropped, counted";
    mdcom_fifo_state st;
    ASSERT_EQ(0, mdcom_sense_fifoch(rx, &st));
    EXPECT_EQ(st.free_blocks, 8u);
}
