/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_filter.cpp - send-side filters (mdcom_filter_set): EVERY_NTH, FUNC,
 * clearing, invalid filters.
 */
#include "fixture.h"

using namespace ut;

namespace {

class Filter : public PairTest {
protected:
    void SetUp() override
    {
        c_.std_domains(2);
        c_.fifo("f", 16, 8, 0, bit(kMaster) | bit(kR1), bit(kR1));
        c_.fifo("q2", 16, 8, 2, bit(kMaster), bit(kR1));
        ASSERT_NO_FATAL_FAILURE(attach("f"));
    }
    /* alloc, write i, enqueue; returns enqueue's result */
    int put(mdcom_fifoch_t *ch, uint8_t v, uint32_t len = 1)
    {
        uint32_t id;
        void *p;
        int r = mdcom_fifoch_alloc(ch, &id);
        EXPECT_EQ(0, r);
        if (r)
            return r;
        EXPECT_EQ(0, mdcom_fifoch_get(ch, id, &p, nullptr));
        std::memset(p, v, len);
        r = mdcom_fifoch_enqueue(ch, id, len);
        if (r < 0)
            mdcom_fifoch_free(ch, id);
        return r;
    }
    /* receive everything queued */
    std::vector<uint8_t> drain()
    {
        std::vector<uint8_t> out;
        uint8_t b[16];
        int r;
        while ((r = mdcom_fifoch_recv(rx_, b, sizeof(b), MDCOM_POLL)) >= 0)
            out.push_back(r > 0 ? b[0] : 0xff);
        EXPECT_EQ(-ETIMEDOUT, r);
        return out;
    }
    mdcom_fifo_state sense()
    {
        mdcom_fifo_state st;
        EXPECT_EQ(0, mdcom_sense_fifoch(tx_, &st));
        return st;
    }
};

} // namespace

TEST_F(Filter, EveryNth2PassesExactlyEverySecondMessage)
{
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    std::vector<uint8_t> got;
    for (uint8_t i = 0; i < 40; i++) {
        int r = put(tx_, i);
        if (i % 2 == 1) {
            EXPECT_EQ(0, r) << "message " << (int)i << " should pass";
        } else {
            EXPECT_EQ(MDCOM_FILTERED, r) << "message " << (int)i << " should be dropped";
        }
        mdcom_fifo_state st = sense();
        EXPECT_EQ(st.free_blocks + st.queued, 8u) << "a filtered block goes back to the pool";
        EXPECT_EQ(st.filtered, (uint32_t)(i / 2 + 1));
        if (st.queued >= 4) {
            auto d = drain();
            got.insert(got.end(), d.begin(), d.end());
        }
    }
    auto d = drain();
    got.insert(got.end(), d.begin(), d.end());
    ASSERT_EQ(got.size(), 20u);
    for (size_t k = 0; k < got.size(); k++)
        EXPECT_EQ(got[k], 2 * k + 1) << "messages n-1, 2n-1, ... pass";
    mdcom_fifo_state st = sense();
    EXPECT_EQ(st.filtered, 20u);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.errors, 0u);
}

TEST_F(Filter, EveryNth3And1)
{
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 3, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    std::vector<int> rc;
    for (uint8_t i = 0; i < 9; i++) {
        rc.push_back(put(tx_, i));
        drain();
    }
    EXPECT_EQ(rc, (std::vector<int>{1, 1, 0, 1, 1, 0, 1, 1, 0}));
    f.n = 1;
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    for (uint8_t i = 0; i < 5; i++)
        EXPECT_EQ(0, put(tx_, i)) << "n = 1 passes everything";
    EXPECT_EQ(drain().size(), 5u);
    EXPECT_EQ(sense().filtered, 6u);
}

TEST_F(Filter, SettingAFilterRestartsItsCount)
{
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    EXPECT_EQ(MDCOM_FILTERED, put(tx_, 0));
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    EXPECT_EQ(MDCOM_FILTERED, put(tx_, 1)) << "the first message after set is message 0";
    EXPECT_EQ(0, put(tx_, 2));
    drain();
}

namespace {
struct FnState {
    int calls = 0;
    uint32_t last_len = 0;
    const void *last_msg = nullptr;
};
int pass_even(void *arg, const void *msg, uint32_t len)
{
    FnState *s = (FnState *)arg;
    s->calls++;
    s->last_len = len;
    s->last_msg = msg;
    return ((const uint8_t *)msg)[0] % 2 == 0 ? 7 : 0; /* any non-zero passes */
}
} // namespace

TEST_F(Filter, FuncFilter)
{
    FnState s;
    mdcom_filter f = {MDCOM_FILTER_FUNC, 0, pass_even, &s};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    for (uint8_t i = 0; i < 10; i++) {
        int r = put(tx_, i, 3 + i);
        EXPECT_EQ(r, i % 2 == 0 ? 0 : MDCOM_FILTERED) << (int)i;
        EXPECT_EQ(s.last_len, 3u + i) << "the filter sees the message length";
        EXPECT_TRUE(m_.inside(s.last_msg, s.last_len)) << "and the block itself";
    }
    EXPECT_EQ(s.calls, 10);
    auto got = drain();
    EXPECT_EQ(got, (std::vector<uint8_t>{0, 2, 4, 6, 8}));
    EXPECT_EQ(sense().filtered, 5u);
    EXPECT_EQ(sense().free_blocks, 8u);
}

TEST_F(Filter, FilterWithSendHelper)
{
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    EXPECT_EQ(MDCOM_FILTERED, mdcom_fifoch_send(tx_, "a", 1, 0));
    EXPECT_EQ(0, mdcom_fifoch_send(tx_, "b", 1, 0));
    EXPECT_EQ(MDCOM_FILTERED, mdcom_fifoch_send(tx_, "c", 1, 0));
    auto got = drain();
    EXPECT_EQ(got, (std::vector<uint8_t>{'b'}));
    EXPECT_EQ(sense().free_blocks, 8u);
}

TEST_F(Filter, Clearing)
{
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    EXPECT_EQ(MDCOM_FILTERED, put(tx_, 0));
    ASSERT_EQ(0, mdcom_filter_set(tx_, nullptr));
    for (uint8_t i = 0; i < 4; i++)
        EXPECT_EQ(0, put(tx_, i)) << "cleared with NULL";
    drain();
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    EXPECT_EQ(MDCOM_FILTERED, put(tx_, 0));
    mdcom_filter none = {MDCOM_FILTER_NONE, 0, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &none));
    for (uint8_t i = 0; i < 4; i++)
        EXPECT_EQ(0, put(tx_, i)) << "cleared with MDCOM_FILTER_NONE";
    drain();
    EXPECT_EQ(sense().filtered, 2u) << "the counter is all-time";
}

TEST_F(Filter, InvalidFilters)
{
    mdcom_filter bad_type = {3, 1, nullptr, nullptr};
    mdcom_filter bad_type2 = {0xffffffffu, 1, pass_even, nullptr};
    mdcom_filter n0 = {MDCOM_FILTER_EVERY_NTH, 0, nullptr, nullptr};
    mdcom_filter nofn = {MDCOM_FILTER_FUNC, 0, nullptr, nullptr};
    EXPECT_EQ(-EINVAL, mdcom_filter_set(tx_, &bad_type));
    EXPECT_EQ(-EINVAL, mdcom_filter_set(tx_, &bad_type2));
    EXPECT_EQ(-EINVAL, mdcom_filter_set(tx_, &n0));
    EXPECT_EQ(-EINVAL, mdcom_filter_set(tx_, &nofn));
    EXPECT_EQ(-EINVAL, mdcom_filter_set(nullptr, nullptr));
    /* a rejected filter leaves the channel unfiltered */
    for (uint8_t i = 0; i < 3; i++)
        EXPECT_EQ(0, put(tx_, i));
    drain();
    /* a receiver-only handle may not set a send filter */
    mdcom_fifoch_t *q1r = r_.fifo("q2");
    mdcom_filter ok = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    EXPECT_EQ(-EPERM, mdcom_filter_set(q1r, &ok));
}

TEST_F(Filter, FiltersArePerAttachment)
{
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(tx_, &f));
    mdcom_fifoch_t *r1tx = rx_; /* r1 is a sender on "f" too */
    for (uint8_t i = 0; i < 4; i++)
        EXPECT_EQ(0, put(r1tx, i)) << "r1's sends are not filtered by the master's filter";
    drain();
    EXPECT_EQ(MDCOM_FILTERED, put(tx_, 0));
    drain();
}

/* EVERY_NTH counts messages. An enqueue refused with -EAGAIN (queue full) did
 * not send anything; retrying the same message must not change which message
 * passes. Queue depth 2, n = 2: messages 1, 3, 5 (0-based) pass. */
TEST_F(Filter, EveryNthNotAdvancedByAFullQueue)
{
    mdcom_fifoch_t *t = m_.fifo("q2"), *r = r_.fifo("q2");
    mdcom_filter f = {MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    ASSERT_EQ(0, mdcom_filter_set(t, &f));
    uint32_t id[6];
    for (uint32_t &i : id)
        ASSERT_EQ(0, mdcom_fifoch_alloc(t, &i));
    EXPECT_EQ(MDCOM_FILTERED, mdcom_fifoch_enqueue(t, id[0], 1)); /* message 0 */
    EXPECT_EQ(0, mdcom_fifoch_enqueue(t, id[1], 1));              /* message 1 */
    EXPECT_EQ(MDCOM_FILTERED, mdcom_fifoch_enqueue(t, id[2], 1)); /* message 2 */
    EXPECT_EQ(0, mdcom_fifoch_enqueue(t, id[3], 1));              /* message 3: queue full now */
    EXPECT_EQ(MDCOM_FILTERED, mdcom_fifoch_enqueue(t, id[4], 1)); /* message 4 */
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_enqueue(t, id[5], 1));        /* message 5: no space */
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_enqueue(t, id[5], 1));        /* still none */
    uint32_t got;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(r, &got, nullptr));
    EXPECT_EQ(got, id[1]);
    ASSERT_EQ(0, mdcom_fifoch_free(r, got));
    EXPECT_EQ(0, mdcom_fifoch_enqueue(t, id[5], 1))
        << "message 5 must pass the every-2nd filter when retried after -EAGAIN";
    mdcom_fifo_state st;
    ASSERT_EQ(0, mdcom_sense_fifoch(t, &st));
    EXPECT_EQ(st.filtered, 3u);
}
