/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_hostile.cpp - the shared region is untrusted. With a master and a
 * remote attached in this process, a third mapping of the region (the
 * "hostile peer") corrupts shared words between API calls; every call must
 * return success or a documented error, never crash, never hang, and never
 * hand out a pointer outside the region.
 *
 * Addresses of shared words come from mdcom_wire_layout_compute() (ut::Geometry,
 * ut::FifoView), never from hand-computed offsets.
 */
#include "fixture.h"

#include <fcntl.h>
#include <sys/wait.h>

#include <algorithm>
#include <functional>
#include <random>
#include <thread>

using namespace ut;

namespace {

class Hostile : public PairTest {
protected:
    void SetUp() override
    {
        const uint32_t both = bit(kMaster) | bit(kR1);
        /* channels 0 "h", 1 "h2" (both ways), 2 "s" */
        c_.std_domains(2)
            .fifo("h", 64, 8, 8, bit(kMaster), bit(kR1))
            .fifo("h2", 16, 4, 2, both, both);
        c_.smem("s", 256, both);
        ASSERT_NO_FATAL_FAILURE(attach("h"));
        cfg_ = c_.get();
        shm_.reset(new Shm(c_.name()));
        ASSERT_TRUE(shm_->ok());
        geo_.reset(new Geometry(cfg_));
        ASSERT_EQ(0, geo_->rc);
        fv_.reset(new FifoView(shm_->base, geo_->cl[0]));
    }
    void TearDown() override
    {
        /* whatever was done, both sides detach cleanly */
        EXPECT_EQ(0, r_.term());
        EXPECT_EQ(0, m_.term());
    }

    mdcom_fifo_state sense(mdcom_fifoch_t *ch, int expect = 0)
    {
        mdcom_fifo_state st;
        std::memset(&st, 0, sizeof(st));
        int r = mdcom_sense_fifoch(ch, &st);
        EXPECT_EQ(expect, r) << errname(r);
        EXPECT_LE(st.queued, st.queue_depth);
        EXPECT_LE(st.free_blocks, st.block_count);
        return st;
    }
    /* Master sends one message of len bytes (filled with v). */
    uint32_t send_one(uint32_t len, uint8_t v = 0x5a)
    {
        uint32_t id = 0xffffffffu;
        void *p;
        EXPECT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
        EXPECT_EQ(0, mdcom_fifoch_get(tx_, id, &p, nullptr));
        std::memset(p, v, len);
        EXPECT_EQ(0, mdcom_fifoch_enqueue(tx_, id, len));
        EXPECT_EQ(0, mdcom_fifoch_notify(tx_));
        return id;
    }
    /* The master re-initialises the channel; afterwards it works normally. */
    void recover_and_check()
    {
        ASSERT_EQ(0, mdcom_fifoch_init(tx_));
        mdcom_fifo_state st = sense(rx_);
        EXPECT_EQ(st.free_blocks, 8u);
        EXPECT_EQ(st.queued, 0u);
        char b[64];
        for (int i = 0; i < 20; i++) {
            ASSERT_EQ(0, mdcom_fifoch_send(tx_, "ok", 3, ms(100)));
            ASSERT_EQ(3, mdcom_fifoch_recv(rx_, b, sizeof(b), ms(100)));
            EXPECT_STREQ(b, "ok");
        }
    }
    /* Call every receive-side API; all results must be documented. With a
     * concurrent hostile writer, a block's state may change between dequeue
     * and free (-EALREADY then). */
    void poke_receiver(bool concurrent = false)
    {
        uint32_t id = 0xffffffffu, len = 0xffffffffu;
        int r = mdcom_fifoch_dequeue(rx_, &id, &len);
        UT_EXPECT_ONE_OF(r, 0, -EAGAIN, -EPROTO, -EBADMSG);
        if (r == 0) {
            EXPECT_LT(id, 8u);
            EXPECT_LE(len, 64u);
            void *p;
            uint32_t sz;
            ASSERT_EQ(0, mdcom_fifoch_get(rx_, id, &p, &sz));
            EXPECT_TRUE(r_.inside(p, sz));
            if (concurrent) {
                UT_EXPECT_ONE_OF(mdcom_fifoch_free(rx_, id), 0, -EALREADY);
            } else {
                EXPECT_EQ(0, mdcom_fifoch_free(rx_, id));
            }
        }
        char b[64];
        r = mdcom_fifoch_recv(rx_, b, sizeof(b), us(200));
        if (r < 0 && concurrent) {
            UT_EXPECT_ONE_OF(r, -ETIMEDOUT, -EPROTO, -EBADMSG, -EALREADY);
        } else if (r < 0) {
            UT_EXPECT_ONE_OF(r, -ETIMEDOUT, -EPROTO, -EBADMSG);
        } else {
            EXPECT_LE(r, 64);
        }
        r = mdcom_fifoch_wait(rx_, MDCOM_EV_RX | MDCOM_EV_NOTIFY, us(200));
        if (r < 0) {
            UT_EXPECT_ONE_OF(r, -ETIMEDOUT);
        } else {
            EXPECT_EQ(0, r & ~(int)(MDCOM_EV_RX | MDCOM_EV_NOTIFY));
        }
    }
    /* Call every send-side API; all results must be documented. */
    void poke_sender()
    {
        uint32_t id = 0xffffffffu;
        int r = mdcom_fifoch_alloc(tx_, &id);
        UT_EXPECT_ONE_OF(r, 0, -ENOBUFS, -EPROTO);
        if (r == 0) {
            EXPECT_LT(id, 8u);
            r = mdcom_fifoch_enqueue(tx_, id, 8);
            UT_EXPECT_ONE_OF(r, 0, -EAGAIN, -EALREADY, -EPROTO);
            if (r != 0)
                UT_EXPECT_ONE_OF(mdcom_fifoch_free(tx_, id), 0, -EALREADY);
        }
        r = mdcom_fifoch_send(tx_, "abc", 3, us(200));
        UT_EXPECT_ONE_OF(r, 0, -ETIMEDOUT, -EPROTO, -EAGAIN, -EALREADY, -ENOBUFS);
        r = mdcom_fifoch_wait(tx_, MDCOM_EV_TX | MDCOM_EV_SPACE, us(200));
        if (r < 0) {
            UT_EXPECT_ONE_OF(r, -ETIMEDOUT);
        } else {
            EXPECT_EQ(0, r & ~(int)(MDCOM_EV_TX | MDCOM_EV_SPACE));
        }
        EXPECT_EQ(0, mdcom_fifoch_notify(tx_));
        mdcom_fifo_state st;
        UT_EXPECT_ONE_OF(mdcom_sense_fifoch(tx_, &st), 0, -EPROTO);
        EXPECT_LE(st.queued, st.queue_depth);
        EXPECT_LE(st.free_blocks, st.block_count);
    }

    mdcom_config *cfg_ = nullptr;
    std::unique_ptr<Shm> shm_;
    std::unique_ptr<Geometry> geo_;
    std::unique_ptr<FifoView> fv_;
};

} // namespace

/* ------------------------------------------------------------------ */
/* queue slots                                                          */
/* ------------------------------------------------------------------ */

TEST_F(Hostile, ForgedBlockIdInAQueueSlot)
{
    for (uint32_t forged : {8u, 9u, 0x100u, 0x10000u, 0x7fffffffu, 0xfffffffeu}) {
        fv_->inject_queue(forged, 4);
        uint32_t id = 0xabcd, len = 0xabcd;
        EXPECT_EQ(-EPROTO, mdcom_fifoch_dequeue(rx_, &id, &len)) << "forged id " << forged;
        EXPECT_EQ(id, 0xabcdu) << "nothing returned";
        uint32_t dummy;
        EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &dummy, nullptr)) << "the slot was consumed";
    }
    EXPECT_EQ(sense(rx_).errors, 6u) << "each one counted";
    /* the id of a skipped position (a dead producer's hole) is no error:
     * the consumer goes past it */
    fv_->inject_queue(MDCOM_QID_SKIP, 0);
    uint32_t id = 0xabcd;
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &id, nullptr));
    fv_->inject_queue(MDCOM_QID_SKIP, 0);
    uint32_t sent = send_one(4);
    EXPECT_EQ(0, mdcom_fifoch_dequeue(rx_, &id, nullptr)) << "the entry after a skip";
    EXPECT_EQ(id, sent);
    EXPECT_EQ(0, mdcom_fifoch_free(rx_, id));
    EXPECT_EQ(sense(rx_).errors, 6u) << "skips are not errors";
    /* through recv() too */
    fv_->inject_queue(1000, 4);
    char b[64];
    EXPECT_EQ(-EPROTO, mdcom_fifoch_recv(rx_, b, sizeof(b), ms(10)));
    /* the channel still works afterwards, without re-initialisation */
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "after", 6, 0));
    EXPECT_EQ(6, mdcom_fifoch_recv(rx_, b, sizeof(b), 0));
    EXPECT_EQ(sense(rx_).free_blocks, 8u);
}

TEST_F(Hostile, LengthLargerThanTheBlock)
{
    for (uint32_t bad : {65u, 66u, 4096u, 0x80000000u, 0xffffffffu}) {
        uint32_t sent = send_one(10);
        wr32(fv_->qlen(rd32(fv_->deq())), bad);
        uint32_t id = 0xabcd, len = 0xabcd;
        EXPECT_EQ(-EBADMSG, mdcom_fifoch_dequeue(rx_, &id, &len)) << "len " << bad;
        EXPECT_EQ(id, 0xabcdu);
        EXPECT_EQ(len, 0xabcdu);
        EXPECT_EQ(MDCOM_BLK_SO(rd32(fv_->bstate(sent))), (uint32_t)MDCOM_BLK_FREE)
            << "the bad message's block went back to the pool";
    }
    mdcom_fifo_state st = sense(rx_);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.errors, 5u);
    /* recv() with a bad length never copies past the block (or the buffer) */
    send_one(10);
    wr32(fv_->qlen(rd32(fv_->deq())), 1u << 20);
    char b[64];
    EXPECT_EQ(-EBADMSG, mdcom_fifoch_recv(rx_, b, sizeof(b), 0));
    /* exactly block_size is fine */
    send_one(10);
    wr32(fv_->qlen(rd32(fv_->deq())), 64);
    EXPECT_EQ(64, mdcom_fifoch_recv(rx_, b, sizeof(b), 0));
    EXPECT_EQ(sense(rx_).free_blocks, 8u);
}

TEST_F(Hostile, SameBlockQueuedTwice)
{
    uint32_t a = send_one(5);
    fv_->inject_queue(a, 5); /* a duplicate of a queued entry */
    uint32_t id, len;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &id, &len));
    EXPECT_EQ(id, a);
    uint32_t id2 = 0xabcd;
    EXPECT_EQ(-EPROTO, mdcom_fifoch_dequeue(rx_, &id2, &len)) << "already held: one owner only";
    EXPECT_EQ(id2, 0xabcdu);
    EXPECT_EQ(0, mdcom_fifoch_free(rx_, id));
    /* a duplicate seen after the block went back to the pool: an entry
     * whose block moved on names nothing; it is consumed, counted, skipped */
    uint32_t errs = sense(rx_).errors;
    fv_->inject_queue(a, 5);
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &id2, &len)) << "a free block is not queued";
    EXPECT_EQ(id2, 0xabcdu);
    EXPECT_EQ(sense(rx_).errors, errs + 1);
    /* a duplicate of a block the sender holds (allocated, not queued) */
    uint32_t held;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &held));
    fv_->inject_queue(held, 5);
    EXPECT_EQ(-EPROTO, mdcom_fifoch_dequeue(rx_, &id2, &len));
    EXPECT_EQ(0, mdcom_fifoch_free(tx_, held)) << "the sender still owns it";
    mdcom_fifo_state st = sense(rx_);
    EXPECT_EQ(st.free_blocks, 8u);
    EXPECT_EQ(st.errors, 3u);
}

TEST_F(Hostile, PositionsJump)
{
    const uint32_t jumps[] = {0x80000000u, 0x7fffffffu, 0x40000000u, 0xffffffffu,
                              12345678u,   0xfffffff0u, 8u,          9u};
    for (uint32_t j : jumps) {
        for (int which = 0; which < 3; which++) {
            SCOPED_TRACE("jump " + std::to_string(j) + " of " +
                         (which == 0   ? "enq"
                          : which == 1 ? "deq"
                                       : "both"));
            send_one(3);
            if (which != 1)
                wr32(fv_->enq(), rd32(fv_->enq()) + j);
            if (which != 0)
                wr32(fv_->deq(), rd32(fv_->deq()) + j);
            uint64_t t0 = now_ns();
            for (int k = 0; k < 3; k++) {
                poke_receiver();
                poke_sender();
            }
            EXPECT_LT(now_ns() - t0, (uint64_t)ms(2000)) << "bounded";
            mdcom_fifo_state st;
            UT_EXPECT_ONE_OF(mdcom_sense_fifoch(rx_, &st), 0, -EPROTO);
            EXPECT_LE(st.queued, st.queue_depth) << "clamped";
            recover_and_check();
        }
    }
}

/* Enqueue on channel "h2" (4 blocks, depth 2) until it fails; the count of
 * successes in *ok. */
static int enqueue_until_error(mdcom_fifoch_t *tx, uint32_t *ok)
{
    *ok = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t id;
        int r = mdcom_fifoch_alloc(tx, &id);
        if (r)
            return r;
        r = mdcom_fifoch_enqueue(tx, id, 1);
        if (r) {
            EXPECT_EQ(0, mdcom_fifoch_free(tx, id))
                << "a failed enqueue leaves the block with its sender";
            return r;
        }
        ++*ok;
    }
    return 0;
}

TEST_F(Hostile, ConsumerPositionBeyondCapacityIsEproto)
{
    /* producers read deq_pos only when their private copy says "full": a
     * deq_pos ahead of enq_pos, or more than the capacity behind it, is
     * found then, after at most qcap enqueues, and is -EPROTO. (A deq_pos
     * just one ahead looks like a consumer that took an entry: that is a
     * consumer dropping messages, which a hostile consumer may do.) */
    FifoView f(shm_->base, geo_->cl[1]);
    mdcom_fifoch_t *tx = m_.fifo("h2"), *rx = r_.fifo("h2");
    ASSERT_TRUE(tx && rx);
    const uint32_t qcap = f.cl.qcap;
    ASSERT_EQ(qcap, 2u);
    for (int k = 0; k < 3; k++) {
        const uint32_t e = rd32(f.enq());
        const uint32_t bad[3] = {e + 12345, e - qcap - 1, e - 0x80000000u};
        wr32(f.deq(), bad[k]);
        uint32_t ok = 0;
        uint64_t t0 = now_ns();
        EXPECT_EQ(-EPROTO, enqueue_until_error(tx, &ok)) << "deq_pos " << bad[k];
        EXPECT_LE(ok, qcap);
        EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000));
        EXPECT_EQ(-EPROTO, mdcom_fifoch_send(tx, "x", 1, ms(50)));
        mdcom_fifo_state st;
        int r = mdcom_sense_fifoch(rx, &st);
        UT_EXPECT_ONE_OF(r, 0, -EPROTO);
        EXPECT_GE(st.errors, 2u) << "re-initialising the channel clears its counters";
        /* the master re-initialises the channel; then it works */
        ASSERT_EQ(0, mdcom_fifoch_init(tx));
        char b[16];
        for (int i = 0; i < 6; i++) {
            ASSERT_EQ(0, mdcom_fifoch_send(tx, "ok", 3, ms(100)));
            ASSERT_EQ(3, mdcom_fifoch_recv(rx, b, sizeof(b), ms(100)));
        }
    }
}

TEST_F(Hostile, ForeignSeqWordsLookEmptyAndAFakeFullRingTimesOut)
{
    /* a slot whose seq names another position is empty for the consumer */
    uint32_t d = rd32(fv_->deq());
    for (uint32_t i = 0; i < 8; i++)
        wr32(fv_->qseq(d + i), 2 * d + 1001);
    uint32_t id;
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx_, &id, nullptr));
    char b[64];
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_recv(rx_, b, sizeof(b), ms(20)));
    EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000));
    recover_and_check();
    /* a deq_pos that never moves makes the ring full after qcap messages */
    FifoView f(shm_->base, geo_->cl[1]);
    mdcom_fifoch_t *tx = m_.fifo("h2");
    wr32(f.deq(), rd32(f.enq()));
    for (uint32_t i = 0; i < 8; i++)
        wr32(f.qseq(i), 0); /* and nothing is ever readable */
    uint32_t ok = 0;
    EXPECT_EQ(-EAGAIN, enqueue_until_error(tx, &ok));
    EXPECT_EQ(ok, f.cl.qcap);
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(tx, MDCOM_EV_SPACE, ms(5)));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_send(tx, "x", 1, ms(5)));
    ASSERT_EQ(0, mdcom_fifoch_init(tx));
}

/* ------------------------------------------------------------------ */
/* block state words (= the pool)                                       */
/* ------------------------------------------------------------------ */

TEST_F(Hostile, BlockStateGarbage)
{
    (void)send_one(4);
    uint32_t held;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &held));
    std::mt19937 rng(12345);
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t g;
        do
            g = rng();
        while (MDCOM_BLK_STATE(g) == MDCOM_BLK_FREE);
        wr32(fv_->bstate(i), g);
    }
    /* what the words say now is refused... */
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, held, 1)) << "our block's state was changed";
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(tx_, held));
    for (uint32_t i = 0; i < 8; i++) {
        EXPECT_EQ(-EALREADY, mdcom_fifoch_free(tx_, i));
        EXPECT_EQ(-EALREADY, mdcom_fifoch_free(rx_, i));
    }
    uint32_t got;
    UT_EXPECT_ONE_OF(mdcom_fifoch_dequeue(rx_, &got, nullptr), -EPROTO, -EAGAIN);
    /* ...and the formatter's audit (sense_fifoch runs it) proves every one of
     * them wrong - no such state, or an owner that is no live process, or
     * QUEUED in no entry - and gives the blocks back */
    mdcom_fifo_state st = sense(tx_); /* the master's: the formatter audits */
    EXPECT_EQ(st.free_blocks, 8u) << "garbage state words not repaired";
    uint32_t id;
    EXPECT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
    EXPECT_EQ(0, mdcom_fifoch_free(tx_, id));
    recover_and_check();
}

TEST_F(Hostile, BlockStateForgedToFreeWhileInUse)
{
    /* the peer "frees" a block the sender holds and one that is queued */
    uint32_t held, queued = send_one(4);
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &held));
    wr32(fv_->bstate(held), MDCOM_BLK_FREE);
    wr32(fv_->bstate(queued), MDCOM_BLK_FREE);
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, held, 1));
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(tx_, held));
    /* both can be allocated again: one owner at a time, by CAS */
    std::vector<uint32_t> ids;
    uint32_t id;
    while (mdcom_fifoch_alloc(tx_, &id) == 0)
        ids.push_back(id);
    EXPECT_EQ(ids.size(), 8u);
    uint32_t got;
    EXPECT_EQ(-EPROTO, mdcom_fifoch_dequeue(rx_, &got, nullptr))
        << "the queued entry's block is now ALLOC";
    for (uint32_t i : ids)
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, i));
    EXPECT_EQ(sense(rx_).free_blocks, 8u);
}

TEST_F(Hostile, BlockStateForgedToOurOwner)
{
    /* a block "given" to the receiver by the peer can be freed by it: the
     * state word is the only record; nothing breaks */
    wr32(fv_->bstate(3), MDCOM_BLK_MAKE(MDCOM_BLK_HELD, ut_owner(r_)));
    EXPECT_EQ(0, mdcom_fifoch_free(rx_, 3));
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(rx_, 3));
    /* a state with our owner but an unknown state byte is not ours */
    wr32(fv_->bstate(4), MDCOM_BLK_MAKE(0x9, ut_owner(m_)));
    EXPECT_EQ(-EALREADY, mdcom_fifoch_free(tx_, 4));
    EXPECT_EQ(-EALREADY, mdcom_fifoch_enqueue(tx_, 4, 1));
    recover_and_check();
}

/* Every alloc starts a new use of the block: its state word gets the next
 * generation, which state and owner checks ignore and a reaper's CAS does not
 * (see CoreGaps.CoreStaleDequeueRecordSparesALaterMessage). */
TEST_F(Hostile, AllocCountsTheBlocksGeneration)
{
    uint32_t id, again = ~0u, n = 0;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
    const uint32_t g0 = MDCOM_BLK_GEN(rd32(fv_->bstate(id)));
    ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, id, 3));
    EXPECT_EQ(MDCOM_BLK_GEN(rd32(fv_->bstate(id))), g0) << "same use while queued";
    uint32_t got, len;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &got, &len));
    ASSERT_EQ(got, id);
    EXPECT_EQ(rd32(fv_->bstate(id)), MDCOM_BLK_MAKEG(MDCOM_BLK_HELD, ut_owner(r_), g0));
    ASSERT_EQ(0, mdcom_fifoch_free(rx_, id));
    EXPECT_EQ(rd32(fv_->bstate(id)), MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, g0));
    std::vector<uint32_t> taken;
    while (again != id && n++ < 64) {
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &again));
        taken.push_back(again);
    }
    ASSERT_EQ(again, id);
    EXPECT_EQ(rd32(fv_->bstate(id)), MDCOM_BLK_MAKEG(MDCOM_BLK_ALLOC, ut_owner(m_), g0 + 1));
    /* the generation wraps inside its 16 bits without touching owner/state */
    wr32(fv_->bstate(id), MDCOM_BLK_MAKEG(MDCOM_BLK_FREE, 0, 0xffffu));
    for (uint32_t t : taken) {
        if (t != id) {
            EXPECT_EQ(0, mdcom_fifoch_free(tx_, t));
        }
    }
    taken.clear();
    again = ~0u;
    n = 0;
    while (again != id && n++ < 64) {
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &again));
        taken.push_back(again);
    }
    EXPECT_EQ(rd32(fv_->bstate(id)), MDCOM_BLK_MAKEG(MDCOM_BLK_ALLOC, ut_owner(m_), 0));
    for (uint32_t t : taken)
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, t));
    recover_and_check();
}

/* ------------------------------------------------------------------ */
/* control lines                                                        */
/* ------------------------------------------------------------------ */

TEST_F(Hostile, EventAndCounterWords)
{
    wr32(fv_->ev_waiters(), 0xffffffffu);
    wr32(fv_->ev_seq(), 0x12345678u);
    wr32(fv_->filtered(), 0xdeadbeefu);
    wr32(fv_->errors(), 0xffffffffu);
    EXPECT_EQ(0, mdcom_fifoch_notify(tx_)) << "rings for phantom waiters: harmless";
    uint64_t dt, t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(20)));
    dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)ms(20));
    EXPECT_LT(dt, (uint64_t)ms(520));
    mdcom_fifo_state st = sense(rx_);
    EXPECT_EQ(st.filtered, 0xdeadbeefu) << "counters are reported as found";
    char b[64];
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "x", 2, 0));
    EXPECT_EQ(2, mdcom_fifoch_recv(rx_, b, sizeof(b), ms(100)));

    /* a peer hammering the event word makes waits return early at most */
    std::atomic<bool> stop{false};
    std::thread h([&] {
        uint32_t v = 0;
        while (!stop.load())
            wr32(fv_->ev_seq(), v++);
    });
    t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(30)));
    dt = now_ns() - t0;
    int r = mdcom_fifoch_wait(rx_, MDCOM_EV_NOTIFY, ms(30));
    UT_EXPECT_ONE_OF(r, (int)MDCOM_EV_NOTIFY, -ETIMEDOUT);
    stop = true;
    h.join();
    EXPECT_GE(dt, (uint64_t)ms(30)) << "a changing word never shortens a timeout";
    EXPECT_LT(dt, (uint64_t)ms(530));
}

TEST_F(Hostile, HostileWriterThread)
{
    /* a peer rewriting the channel's control lines, slots and states as fast
     * as it can while both sides use the channel */
    std::atomic<bool> stop{false};
    const mdcom_wire_chan_layout &cl = geo_->cl[0];
    std::thread h([&] {
        std::mt19937 rng(777);
        const uint32_t words = cl.blocks_off / 4; /* control, slots, states */
        uint32_t *w = (uint32_t *)fv_->a;
        while (!stop.load(std::memory_order_relaxed)) {
            uint32_t i = rng() % words;
            uint32_t v;
            switch (rng() % 4) {
            case 0:
                v = rng();
                break;
            case 1:
                v = rd32(&w[i]) + 1;
                break;
            case 2:
                v = rd32(&w[i]) - 1;
                break;
            default:
                v = rng() % 16;
                break;
            }
            wr32(&w[i], v);
        }
    });
    uint64_t end = now_ns() + ms(300);
    int rounds = 0;
    while (now_ns() < end) {
        uint64_t t0 = now_ns();
        poke_sender();
        poke_receiver(true);
        EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000)) << "a call blocked past its timeout";
        rounds++;
    }
    stop = true;
    h.join();
    EXPECT_GT(rounds, 10);
    recover_and_check();
}

/* ------------------------------------------------------------------ */
/* region header, process table, liveness                               */
/* ------------------------------------------------------------------ */

TEST_F(Hostile, GenerationAndStateWords)
{
    mdcom_wire_hdr *h = shm_->hdr();
    const uint32_t gen = h->generation.load();
    uint32_t id;
    h->generation.store(gen + 1);
    EXPECT_EQ(-ECONNRESET, mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(5)));
    EXPECT_EQ(-ECONNRESET, mdcom_fifoch_recv(rx_, nullptr, 0, ms(5)));
    EXPECT_EQ(-ECONNRESET, mdcom_fifoch_alloc(tx_, &id));
    EXPECT_EQ(-ECONNRESET, mdcom_fifoch_send(tx_, "x", 1, ms(5)));
    h->generation.store(gen);
    h->state.store(MDCOM_ST_TERMINATED);
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(5)));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_alloc(tx_, &id));
    h->state.store(0x12345678u);
    EXPECT_EQ(-ECONNRESET, mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(5)));
    h->state.store(MDCOM_ST_READY);
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(5)));
    char b[8];
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "x", 1, 0));
    EXPECT_EQ(1, mdcom_fifoch_recv(rx_, b, sizeof(b), ms(100)));
}

TEST_F(Hostile, HeaderScribbledBeforeARemoteAttaches)
{
    struct Case {
        const char *what;
        size_t off;
        uint32_t value;
        int expect;
    };
    Geometry &g = *geo_;
    const size_t de0 = g.lay.dir_off;
    const Case cases[] = {
        {"magic", offsetof(mdcom_wire_hdr, magic), 0x4d43444eu, -EBADMSG},
        {"magic zero", offsetof(mdcom_wire_hdr, magic), 0, -EBADMSG},
        {"version", offsetof(mdcom_wire_hdr, version), MDCOM_WIRE_VERSION + 1, -EPROTONOSUPPORT},
        {"version huge", offsetof(mdcom_wire_hdr, version), 0xffffffffu, -EPROTONOSUPPORT},
        {"region_size", offsetof(mdcom_wire_hdr, region_size), g.lay.region_size + 64, -ESTALE},
        {"region_size huge", offsetof(mdcom_wire_hdr, region_size), 0xffffffffu, -ESTALE},
        {"region_size 0", offsetof(mdcom_wire_hdr, region_size), 0, -ESTALE},
        {"hdr_size", offsetof(mdcom_wire_hdr, hdr_size), 0xffffffffu, -ESTALE},
        {"n_domains", offsetof(mdcom_wire_hdr, n_domains), 0xffffffffu, -ESTALE},
        {"n_channels", offsetof(mdcom_wire_hdr, n_channels), 0x7fffffffu, -ESTALE},
        {"dom_off", offsetof(mdcom_wire_hdr, dom_off), 0xfffffff0u, -ESTALE},
        {"proc_off", offsetof(mdcom_wire_hdr, proc_off), 0xfffffff0u, -ESTALE},
        {"dir_off", offsetof(mdcom_wire_hdr, dir_off), 0xfffffff0u, -ESTALE},
        {"n_procs", offsetof(mdcom_wire_hdr, n_procs), 0xffffffffu, -ESTALE},
        {"data_off", offsetof(mdcom_wire_hdr, data_off), 0, -ESTALE},
        {"master_domain", offsetof(mdcom_wire_hdr, master_domain), 1, -ESTALE},
        {"layout_hash", offsetof(mdcom_wire_hdr, layout_hash), 0, -ESTALE},
        {"dirent off", de0 + offsetof(mdcom_wire_dirent, off), 0xfffffff0u, -ESTALE},
        {"dirent size", de0 + offsetof(mdcom_wire_dirent, size), 0xffffffffu, -ESTALE},
        {"dirent block_size", de0 + offsetof(mdcom_wire_dirent, block_size), 0xffffffffu, -ESTALE},
        {"dirent block_count", de0 + offsetof(mdcom_wire_dirent, block_count), 0x10000000u,
         -ESTALE},
        {"dirent queue_depth", de0 + offsetof(mdcom_wire_dirent, queue_depth), 0x80000000u,
         -ESTALE},
        {"dirent name", de0, 0x41414141u, -ESTALE},
        {"domain id", g.lay.dom_off + sizeof(mdcom_wire_domain) + offsetof(mdcom_wire_domain, id),
         31, -ESTALE},
        {"state FORMATTING", offsetof(mdcom_wire_hdr, state), MDCOM_ST_FORMATTING, -ETIMEDOUT},
        {"state TERMINATED", offsetof(mdcom_wire_hdr, state), MDCOM_ST_TERMINATED, -ETIMEDOUT},
        {"state garbage", offsetof(mdcom_wire_hdr, state), 0xdeadbeefu, -ETIMEDOUT},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        const uint32_t old = shm_->word(c.off);
        shm_->set_word(c.off, c.value);
        Inst r;
        uint64_t t0 = now_ns();
        int rc = r.init(cfg_, kR1, ms(20));
        EXPECT_EQ(c.expect, rc) << errname(rc) << ": " << r.err;
        EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000));
        if (c.expect != -ETIMEDOUT) {
            EXPECT_GT(std::strlen(r.err), 0u);
            EXPECT_LT(std::strlen(r.err), sizeof(r.err));
        }
        shm_->set_word(c.off, old);
        EXPECT_EQ(0, r.init(cfg_, kR1)) << "after repair: " << r.err;
    }
}

TEST_F(Hostile, ProcessTable)
{
    Geometry &g = *geo_;
    mdcom_wire_proc *procs = (mdcom_wire_proc *)(shm_->base + g.lay.proc_off);
    std::vector<uint8_t> saved(shm_->base + g.lay.proc_off,
                               shm_->base + g.lay.proc_off +
                                   MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc));
    /* every free slot naming a live process (this one) but held by no
     * attachment (its liveness lock is not held): forged, reclaimed */
    uint32_t my_pid, my_token;
    ut_identity(m_, &my_pid, &my_token);
    auto forge_live = [&] {
        std::vector<uint32_t> forged;
        for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++) {
            if (procs[i].owner.load() == MDCOM_PROC_FREE) {
                procs[i].pid = my_pid;
                procs[i].token = my_token;
                procs[i].owner.store(MDCOM_PROC_DOMAIN_BASE + kR1);
                forged.push_back(i);
            }
        }
        return forged;
    };
    std::vector<uint32_t> first = forge_live();
    Inst r;
    EXPECT_EQ(0, r.init(cfg_, kR1)) << "forged entries of a live pid: " << r.err;
    EXPECT_EQ(2, mdcom_sense_process(m_, kR1)) << "r_ and r, not the forged entries";
    /* reaping runs within a budget per call (MDCOM_REAP_BUDGET_NS): an
     * entry cut short goes back to its forged owner word until a later call
     * finishes it; a few calls free them all */
    auto still_forged = [&] { /* entries of the first forgery not free again (r holds one) */
                              size_t n = 0;
                              for (uint32_t i : first)
                                  n += procs[i].owner.load() != MDCOM_PROC_FREE;
                              return n;
    };
    for (int k = 0; k < 1000 && still_forged() > 1; k++)
        (void)mdcom_sense_process(m_, kR1);
    EXPECT_LE(still_forged(), 1u)
        << "forged entries left after 1000 calls (r took one of the slots)";
    r.term();
    /* the same entries with their locks held by the writer (what a process
     * of the region's uid can still do, docs/security.md): live, -EUSERS */
    std::vector<uint32_t> forged = forge_live();
    int lk = open(region_path(c_.name()).c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(lk, 0);
    for (uint32_t i : forged) {
        struct flock fl;
        std::memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = 0x7fff0000 + (off_t)i; /* the Linux port's liveness lock of entry i */
        fl.l_len = 1;
        ASSERT_EQ(0, fcntl(lk, F_OFD_SETLK, &fl)) << strerror(errno);
    }
    EXPECT_EQ(-EUSERS, r.init(cfg_, kR1));
    EXPECT_GT(std::strlen(r.err), 0u);
    EXPECT_EQ((int)MDCOM_MAX_PROCS - 1, mdcom_sense_process(m_, kR1));
    close(lk);
    /* slots stuck in CLAIMING: still -EUSERS, never a hang */
    for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++)
        procs[i].owner.store(MDCOM_PROC_CLAIMING);
    EXPECT_EQ(-EUSERS, r.init(cfg_, kR1));
    EXPECT_EQ(0, mdcom_sense_process(m_, kR1));
    /* garbage everywhere: counts stay in range; attach succeeds or -EUSERS */
    std::mt19937 rng(99);
    for (int round = 0; round < 20; round++) {
        for (uint32_t i = 0; i < MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc) / 4; i++)
            wr32(shm_->base + g.lay.proc_off + i * 4, rng() % 3 == 0 ? rng() % 40 : rng());
        for (uint32_t d : {kMaster, kR1}) {
            int n = mdcom_sense_process(m_, d);
            EXPECT_GE(n, 0);
            EXPECT_LE(n, (int)MDCOM_MAX_PROCS);
        }
        Inst r2;
        int rc = r2.init(cfg_, kR1);
        UT_EXPECT_ONE_OF(rc, 0, -EUSERS);
    }
    /* slots of dead processes are reclaimed (a pid of a child that exited
     * and was waited for: no such process; ids above PID_MAX_LIMIT would be
     * "unknown", i.e. a firmware process, and count as alive) */
    pid_t gone = fork();
    if (gone == 0)
        _exit(0);
    ASSERT_GT(gone, 0);
    ASSERT_EQ(gone, waitpid(gone, nullptr, 0));
    for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++) {
        procs[i].pid = (uint32_t)gone;
        procs[i].token = 1;
        procs[i].owner.store(MDCOM_PROC_DOMAIN_BASE + kR1);
    }
    EXPECT_EQ(0, r.init(cfg_, kR1)) << r.err;
    r.term();
    std::memcpy(shm_->base + g.lay.proc_off, saved.data(), saved.size());
}

TEST_F(Hostile, SmemLockWord)
{
    mdcom_smemch_t *ms_ = m_.smem("s"), *rs = r_.smem("s");
    SmemView sv(shm_->base, geo_->cl[2]);
    uint32_t *lock = sv.lock(), *waiters = sv.waiters();
    /* a word naming no live attachment (a slot out of range, a free
     * entry, another incarnation) is broken by the next taker */
    for (uint32_t forged :
         {0xdeadbeefu, MDCOM_LOCK_MAKE(MDCOM_MAX_PROCS - 1, 7), ut_lock_owner(m_) ^ 0x100u}) {
        wr32(lock, forged);
        EXPECT_EQ(0, mdcom_smemch_trylock(rs)) << std::hex << forged;
        EXPECT_EQ(0, mdcom_smemch_unlock(rs));
    }
    /* held by a live attachment (the master): busy */
    wr32(lock, ut_lock_owner(m_));
    EXPECT_EQ(-EBUSY, mdcom_smemch_trylock(rs));
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_smemch_lock(rs, ms(20)));
    EXPECT_GE(now_ns() - t0, (uint64_t)ms(20));
    EXPECT_EQ(-EPERM, mdcom_smemch_unlock(rs));
    /* the peer puts our own token there: we "hold" it; unlocking works */
    wr32(lock, ut_lock_owner(r_));
    EXPECT_EQ(-EDEADLK, mdcom_smemch_trylock(rs));
    EXPECT_EQ(-EBUSY, mdcom_smemch_trylock(ms_));
    EXPECT_EQ(0, mdcom_smemch_unlock(rs));
    wr32(waiters, 0xffffffffu);
    EXPECT_EQ(0, mdcom_smemch_trylock(ms_));
    EXPECT_EQ(0, mdcom_smemch_unlock(ms_)) << "phantom waiters: a useless wake, no harm";
    wr32(waiters, 0);
    void *p;
    uint32_t sz;
    ASSERT_EQ(0, mdcom_smemch_get(rs, &p, &sz));
    EXPECT_TRUE(r_.inside(p, sz));
    /* a peer flipping the lock word while we wait: bounded by the timeout */
    std::atomic<bool> stop{false};
    std::thread h([&] {
        uint32_t v = 100;
        while (!stop.load())
            wr32(lock, v++ | 0x1000);
    });
    t0 = now_ns();
    int r = mdcom_smemch_lock(rs, ms(30));
    uint64_t dt = now_ns() - t0;
    stop = true;
    h.join();
    UT_EXPECT_ONE_OF(r, 0, -ETIMEDOUT);
    EXPECT_LT(dt, (uint64_t)ms(530));
    wr32(lock, 0);
}

/* ------------------------------------------------------------------ */
/* region files prepared by a peer (no master)                          */
/* ------------------------------------------------------------------ */

namespace {

/* Write a region file of file_size bytes holding a formatted image of cfg
 * (state READY), then let mutate() change it. */
void write_region(const mdcom_config *cfg, size_t file_size,
                  const std::function<void(uint8_t *, const Geometry &)> &mutate)
{
    Geometry g(cfg);
    ASSERT_EQ(0, g.rc);
    std::vector<uint8_t> img(std::max<size_t>(file_size, g.lay.region_size) + 64);
    uint8_t *base = (uint8_t *)(((uintptr_t)img.data() + 63) & ~(uintptr_t)63);
    ASSERT_EQ(0, ut_layout_format(base, cfg, 1));
    ((mdcom_wire_hdr *)base)->state.store(MDCOM_ST_READY);
    if (mutate)
        mutate(base, g);
    int fd = open(region_path(cfg->region_name).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ((ssize_t)file_size, write(fd, base, file_size));
    close(fd);
}

/* Region files written by the test, with no process attached. */
class HostileFile : public ::testing::Test {
protected:
    static mdcom_config *describe(Config &c)
    {
        c.std_domains(2);
        c.fifo("h", 64, 8, 8, bit(kMaster), bit(kR1));
        return c.get();
    }
    /* random bytes, the header's state READY on odd rounds */
    static void garbage(std::mt19937 &rng, uint8_t *b, size_t n, int round)
    {
        for (size_t k = 0; k < n; k++)
            b[k] = (uint8_t)rng();
        if (round % 2)
            ((mdcom_wire_hdr *)b)->state.store(MDCOM_ST_READY);
    }

    Config c;
    const mdcom_config *cfg = describe(c);
    Geometry g{cfg};
};

} // namespace

TEST_F(HostileFile, RegionFilesWithoutAMaster)
{
    const size_t full = g.lay.region_size;
    Inst r;

    /* a well-formed region is accepted even without a live master */
    write_region(cfg, full, nullptr);
    EXPECT_EQ(0, r.init(cfg, kR1)) << r.err;
    r.term();

    /* shorter than its header says: refused, no access past the file */
    write_region(cfg, full - 64, nullptr);
    EXPECT_EQ(-ESTALE, r.init(cfg, kR1)) << r.err;
    write_region(cfg, 256, nullptr);
    EXPECT_EQ(-ESTALE, r.init(cfg, kR1)) << r.err;

    /* shorter than a header: the remote waits for the master to size it */
    write_region(cfg, 100, nullptr);
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, r.init(cfg, kR1, ms(20))) << r.err;
    EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000));
    write_region(cfg, 0, nullptr);
    EXPECT_EQ(-ETIMEDOUT, r.init(cfg, kR1, ms(20))) << r.err;

    /* all zero / random bytes */
    write_region(cfg, full, [&](uint8_t *b, const Geometry &) { std::memset(b, 0, full); });
    EXPECT_EQ(-ETIMEDOUT, r.init(cfg, kR1, ms(20)));
    std::mt19937 rng(5);
    for (int i = 0; i < 20; i++) {
        write_region(cfg, full, [&](uint8_t *b, const Geometry &) {
            garbage(rng, b, full, i);
            if (i % 4 == 1)
                ((mdcom_wire_hdr *)b)->magic = MDCOM_MAGIC;
        });
        int rc = r.init(cfg, kR1, ms(5));
        UT_EXPECT_ONE_OF(rc, -ETIMEDOUT, -EBADMSG, -EPROTONOSUPPORT, -ESTALE);
    }

    /* a file larger than 4 GiB (sparse): refused by the port */
    {
        int fd = open(c.path().c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(0, ftruncate(fd, (off_t)5 << 30));
        close(fd);
        int rc = r.init(cfg, kR1, ms(20));
        EXPECT_LT(rc, 0);
        EXPECT_NE(rc, 0);
    }
    unlink(c.path().c_str());
}

TEST_F(HostileFile, MasterReformatsGarbage)
{
    std::mt19937 rng(6);
    for (int i = 0; i < 10; i++) {
        size_t sz = i == 0 ? 0 : i == 1 ? 10 : i == 2 ? g.lay.region_size * 2 : g.lay.region_size;
        write_region(cfg, sz, [&](uint8_t *b, const Geometry &) { garbage(rng, b, sz, i); });
        Inst m, r;
        ASSERT_EQ(0, m.init(cfg, kMaster)) << m.err;
        ASSERT_EQ(0, r.init(cfg, kR1)) << r.err;
        mdcom_fifoch_t *t = m.fifo("h"), *x = r.fifo("h");
        char b[8];
        ASSERT_EQ(0, mdcom_fifoch_send(t, "ok", 3, 0));
        EXPECT_EQ(3, mdcom_fifoch_recv(x, b, sizeof(b), 0));
    }
}
