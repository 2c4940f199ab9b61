/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_timeout.cpp - every mode of mdcom_fifoch_wait (MDCOM_POLL, finite,
 * MDCOM_FOREVER), the events RX / TX / SPACE (levels) and NOTIFY (an edge
 * during the wait), spin settings, and the timeouts of send/recv.
 *
 * Timing asserts are one-sided where the OS decides: never before the timeout,
 * and not absurdly after it (timeout + 500 ms).
 */
#include "fixture.h"

#include <thread>

using namespace ut;

namespace {

constexpr uint64_t kSlack = 500000000ull; /* 500 ms */

class Wait : public ::testing::TestWithParam<uint32_t> {
protected:
    void SetUp() override
    {
        c_.std_domains(2);
        c_.fifo("t", 32, 4, 0, bit(kMaster), bit(kR1));
        c_.fifo("sh", 32, 4, 2, bit(kMaster), bit(kR1));
        ASSERT_EQ(0, m_.init(c_.get(), kMaster, 0, GetParam())) << m_.err;
        ASSERT_EQ(0, r_.init(c_.get(), kR1, 0, GetParam())) << r_.err;
        tx_ = m_.fifo("t");
        rx_ = r_.fifo("t");
        ASSERT_TRUE(tx_ && rx_);
    }
    void enqueue_one(mdcom_fifoch_t *ch, uint32_t *idp = nullptr)
    {
        uint32_t id;
        ASSERT_EQ(0, mdcom_fifoch_alloc(ch, &id));
        ASSERT_EQ(0, mdcom_fifoch_enqueue(ch, id, 1));
        if (idp)
            *idp = id;
    }
    /* time one wait; returns its result, *dt the elapsed ns */
    int timed_wait(mdcom_fifoch_t *ch, uint32_t ev, int64_t t, uint64_t *dt)
    {
        uint64_t t0 = now_ns();
        int r = mdcom_fifoch_wait(ch, ev, t);
        *dt = now_ns() - t0;
        return r;
    }

    Config c_;
    Inst m_, r_;
    mdcom_fifoch_t *tx_ = nullptr, *rx_ = nullptr;
};

/* A thread in mdcom_fifoch_wait(ch, ev, MDCOM_FOREVER): its result, and
 * when it returned. */
struct Sleeper {
    Sleeper(mdcom_fifoch_t *ch, uint32_t ev)
        : t([this, ch, ev] {
              rc = mdcom_fifoch_wait(ch, ev, MDCOM_FOREVER);
              woke = now_ns();
          })
    {}
    int rc = 0;
    uint64_t woke = 0;
    std::thread t; /* last: starts once rc and woke exist */
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Spin, Wait, ::testing::Values(0u, MDCOM_NO_SPIN, 1000u, 500000u),
                         [](const ::testing::TestParamInfo<uint32_t> &i) {
                             return i.param == 0u              ? std::string("DefaultSpin")
                                    : i.param == MDCOM_NO_SPIN ? std::string("NoSpin")
                                                               : "Spin" + std::to_string(i.param);
                         });

TEST_P(Wait, InvalidEvents)
{
    EXPECT_EQ(-EINVAL, mdcom_fifoch_wait(rx_, 0, MDCOM_POLL));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_wait(rx_, 0x10, MDCOM_POLL));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_wait(rx_, MDCOM_EV_RX | 0x80000000u, MDCOM_POLL));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_wait(nullptr, MDCOM_EV_RX, MDCOM_POLL));
}

TEST_P(Wait, PollReturnsAtOnce)
{
    uint64_t dt;
    EXPECT_EQ(-ETIMEDOUT, timed_wait(rx_, MDCOM_EV_RX, MDCOM_POLL, &dt));
    EXPECT_LT(dt, (uint64_t)ms(50));
    EXPECT_EQ(-ETIMEDOUT, timed_wait(rx_, MDCOM_EV_NOTIFY, MDCOM_POLL, &dt));
    EXPECT_LT(dt, (uint64_t)ms(50));
    EXPECT_EQ((int)MDCOM_EV_TX, timed_wait(tx_, MDCOM_EV_TX, MDCOM_POLL, &dt));
    EXPECT_EQ((int)MDCOM_EV_SPACE, timed_wait(tx_, MDCOM_EV_SPACE, MDCOM_POLL, &dt));
    enqueue_one(tx_); /* no notify: RX is a level, not a wake-up */
    EXPECT_EQ((int)MDCOM_EV_RX, timed_wait(rx_, MDCOM_EV_RX, MDCOM_POLL, &dt));
    EXPECT_EQ((int)MDCOM_EV_RX, timed_wait(rx_, MDCOM_EV_RX, MDCOM_POLL, &dt)) << "still holds";
    EXPECT_EQ((int)(MDCOM_EV_RX | MDCOM_EV_TX),
              timed_wait(rx_, MDCOM_EV_RX | MDCOM_EV_TX | MDCOM_EV_NOTIFY, MDCOM_POLL, &dt))
        << "every event that holds is reported";
}

TEST_P(Wait, TxLevel)
{
    uint32_t ids[4];
    for (uint32_t &i : ids)
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &i));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(tx_, MDCOM_EV_TX, MDCOM_POLL)) << "pool empty";
    ASSERT_EQ(0, mdcom_fifoch_free(tx_, ids[2]));
    EXPECT_EQ((int)MDCOM_EV_TX, mdcom_fifoch_wait(tx_, MDCOM_EV_TX, MDCOM_POLL));
    uint32_t id;
    ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &id));
    EXPECT_EQ(id, ids[2]);

    /* a sender blocked on TX is woken by a receiver's free + notify */
    ASSERT_EQ(0, mdcom_fifoch_enqueue(tx_, ids[0], 1));
    Sleeper w(tx_, MDCOM_EV_TX);
    sleep_ms(30);
    uint32_t got;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx_, &got, nullptr));
    uint64_t t_free = now_ns();
    ASSERT_EQ(0, mdcom_fifoch_free(rx_, got));
    ASSERT_EQ(0, mdcom_fifoch_notify(rx_));
    w.t.join();
    EXPECT_EQ((int)MDCOM_EV_TX, w.rc);
    EXPECT_LT(w.woke - t_free, (uint64_t)ms(1000));
    for (uint32_t i : {ids[1], ids[2], ids[3]})
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, i));
}

TEST_P(Wait, SpaceLevel)
{
    mdcom_fifoch_t *t = m_.fifo("sh"), *r = r_.fifo("sh");
    enqueue_one(t);
    EXPECT_EQ((int)MDCOM_EV_SPACE, mdcom_fifoch_wait(t, MDCOM_EV_SPACE, MDCOM_POLL));
    enqueue_one(t);
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(t, MDCOM_EV_SPACE, MDCOM_POLL)) << "queue full";
    EXPECT_EQ((int)MDCOM_EV_TX, mdcom_fifoch_wait(t, MDCOM_EV_TX | MDCOM_EV_SPACE, MDCOM_POLL))
        << "blocks free, but no slot";
    uint64_t dt;
    EXPECT_EQ(-ETIMEDOUT, timed_wait(t, MDCOM_EV_SPACE, ms(20), &dt));
    EXPECT_GE(dt, (uint64_t)ms(20));

    /* a sender blocked on SPACE is woken by a receiver's dequeue + notify */
    int rc = 0;
    uint64_t woke = 0;
    std::thread th([&] {
        rc = mdcom_fifoch_wait(t, MDCOM_EV_SPACE, ms(5000));
        woke = now_ns();
    });
    sleep_ms(30);
    uint32_t got;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(r, &got, nullptr));
    uint64_t t_deq = now_ns();
    ASSERT_EQ(0, mdcom_fifoch_notify(r));
    th.join();
    EXPECT_EQ((int)MDCOM_EV_SPACE, rc);
    EXPECT_LT(woke - t_deq, (uint64_t)ms(1000));
    ASSERT_EQ(0, mdcom_fifoch_free(r, got));

    /* send() waits for space (queue depth 2 < 4 blocks) */
    std::thread drainer([&] {
        sleep_ms(30);
        char b[32];
        mdcom_fifoch_recv(r, b, sizeof(b), ms(1000));
    });
    uint64_t t0 = now_ns();
    EXPECT_EQ(0, mdcom_fifoch_send(t, "x", 1, ms(5000)));
    EXPECT_LT(now_ns() - t0, (uint64_t)ms(2000));
    drainer.join();
}

TEST_P(Wait, FiniteTimeoutIsNeitherEarlyNorVeryLate)
{
    for (int64_t t : {us(100), ms(1), ms(10), ms(50), ms(120)}) {
        for (uint32_t ev : {MDCOM_EV_RX, MDCOM_EV_NOTIFY, MDCOM_EV_RX | MDCOM_EV_NOTIFY}) {
            uint64_t dt;
            EXPECT_EQ(-ETIMEDOUT, timed_wait(rx_, ev, t, &dt)) << "timeout " << t;
            EXPECT_GE(dt, (uint64_t)t) << "returned before the timeout " << t;
            EXPECT_LT(dt, (uint64_t)t + kSlack) << "timeout " << t;
        }
    }
    uint32_t ids[4];
    for (uint32_t &i : ids)
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &i));
    uint64_t dt;
    EXPECT_EQ(-ETIMEDOUT, timed_wait(tx_, MDCOM_EV_TX, ms(30), &dt));
    EXPECT_GE(dt, (uint64_t)ms(30));
    EXPECT_LT(dt, (uint64_t)ms(30) + kSlack);
    for (uint32_t i : ids)
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, i));
}

TEST_P(Wait, SendRecvTimeouts)
{
    char b[32];
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_recv(rx_, b, sizeof(b), ms(30)));
    uint64_t dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)ms(30));
    EXPECT_LT(dt, (uint64_t)ms(30) + kSlack);

    uint32_t ids[4];
    for (uint32_t &i : ids)
        ASSERT_EQ(0, mdcom_fifoch_alloc(tx_, &i));
    t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_send(tx_, "x", 1, ms(30)));
    dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)ms(30));
    EXPECT_LT(dt, (uint64_t)ms(30) + kSlack);
    for (uint32_t i : ids)
        EXPECT_EQ(0, mdcom_fifoch_free(tx_, i));
}

TEST_P(Wait, ForeverWokenByRxNotify)
{
    Sleeper w(rx_, MDCOM_EV_RX);
    sleep_ms(40);
    enqueue_one(tx_);
    uint64_t t_notify = now_ns();
    ASSERT_EQ(0, mdcom_fifoch_notify(tx_));
    w.t.join();
    EXPECT_EQ((int)MDCOM_EV_RX, w.rc);
    EXPECT_LT(w.woke - t_notify, (uint64_t)ms(1000));
    char b[32];
    EXPECT_EQ(1, mdcom_fifoch_recv(rx_, b, sizeof(b), MDCOM_POLL));
}

TEST_P(Wait, LongTimeoutReturnsEarlyOnData)
{
    int rc = 0;
    uint64_t dt = 0;
    std::thread t([&] { rc = timed_wait(rx_, MDCOM_EV_RX, ms(10000), &dt); });
    sleep_ms(30);
    enqueue_one(tx_);
    ASSERT_EQ(0, mdcom_fifoch_notify(tx_));
    t.join();
    EXPECT_EQ((int)MDCOM_EV_RX, rc);
    EXPECT_LT(dt, (uint64_t)ms(2000));
    char b[32];
    EXPECT_EQ(1, mdcom_fifoch_recv(rx_, b, sizeof(b), MDCOM_POLL));
}

TEST_P(Wait, RecvForeverWokenBySend)
{
    int rc = 0;
    char b[32] = {};
    std::thread t([&] { rc = mdcom_fifoch_recv(rx_, b, sizeof(b), MDCOM_FOREVER); });
    sleep_ms(30);
    ASSERT_EQ(0, mdcom_fifoch_send(tx_, "wake", 5, 0));
    t.join();
    EXPECT_EQ(5, rc);
    EXPECT_STREQ(b, "wake");
}

TEST_P(Wait, NotifyIsAnEdgeDuringTheWait)
{
    /* a notify before the wait is not remembered */
    ASSERT_EQ(0, mdcom_fifoch_notify(tx_));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_NOTIFY, MDCOM_POLL));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_NOTIFY, ms(5)));

    /* a notify during a FOREVER wait ends it, from any attachment */
    for (mdcom_fifoch_t *notifier : {tx_, rx_}) {
        int rc = 0;
        std::thread t([&] { rc = mdcom_fifoch_wait(rx_, MDCOM_EV_NOTIFY, MDCOM_FOREVER); });
        /* keep notifying until the waiter has seen one (it may not sleep yet) */
        uint64_t t0 = now_ns();
        std::atomic<bool> done{false};
        std::thread n([&] {
            while (!done.load()) {
                mdcom_fifoch_notify(notifier);
                sleep_ms(5);
            }
        });
        t.join();
        done = true;
        n.join();
        EXPECT_EQ((int)MDCOM_EV_NOTIFY, rc);
        EXPECT_LT(now_ns() - t0, (uint64_t)ms(2000));
    }
    /* and only for that wait */
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_NOTIFY, MDCOM_POLL));

    /* NOTIFY together with a level: the level still reports at once */
    enqueue_one(tx_);
    EXPECT_EQ((int)MDCOM_EV_RX, mdcom_fifoch_wait(rx_, MDCOM_EV_RX | MDCOM_EV_NOTIFY, ms(1000)));
    char b[32];
    EXPECT_EQ(1, mdcom_fifoch_recv(rx_, b, sizeof(b), MDCOM_POLL));
}

TEST_P(Wait, NotifyWithoutWaitersWritesNothing)
{
    Shm shm(c_.name());
    ASSERT_TRUE(shm.ok());
    Geometry g(c_.get());
    ASSERT_EQ(0, g.rc);
    FifoView f(shm.base, g.cl[0]);
    const uint32_t ev = rd32(f.ev_seq());
    ASSERT_EQ(0u, rd32(f.ev_waiters()));
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(0, mdcom_fifoch_notify(tx_));
    EXPECT_EQ(ev, rd32(f.ev_seq())) << "notify wrote to shared memory with nobody waiting";
    EXPECT_EQ(0u, rd32(f.ev_waiters()));
    /* waits leave the waiter count as they found it */
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_RX | MDCOM_EV_NOTIFY, ms(2)));
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx_, MDCOM_EV_NOTIFY, MDCOM_POLL));
    EXPECT_EQ(0u, rd32(f.ev_waiters()));
}

TEST_P(Wait, SetSpin)
{
    for (uint32_t s : {0u, 1u, 1000u, 200000u, MDCOM_NO_SPIN}) {
        ASSERT_EQ(0, mdcom_fifoch_set_spin(rx_, s));
        uint64_t dt;
        EXPECT_EQ(-ETIMEDOUT, timed_wait(rx_, MDCOM_EV_RX, ms(5), &dt)) << s;
        EXPECT_GE(dt, (uint64_t)ms(5)) << s;
        EXPECT_LT(dt, (uint64_t)ms(5) + kSlack) << s;
        /* wake-up still works with this spin */
        int rc = 0;
        std::thread t([&] { rc = mdcom_fifoch_wait(rx_, MDCOM_EV_RX, ms(5000)); });
        sleep_ms(10);
        enqueue_one(tx_);
        mdcom_fifoch_notify(tx_);
        t.join();
        EXPECT_EQ((int)MDCOM_EV_RX, rc) << s;
        char b[32];
        EXPECT_EQ(1, mdcom_fifoch_recv(rx_, b, sizeof(b), MDCOM_POLL));
    }
    EXPECT_EQ(-EINVAL, mdcom_fifoch_set_spin(nullptr, 0));
}

TEST_P(Wait, ManyShortWaitsAndWakeups)
{
    /* ping-pong between a sender and a receiver thread: no lost wake-up */
    const int n = 2000;
    std::atomic<int> errors{0};
    std::thread rcv([&] {
        char b[32];
        for (int i = 0; i < n; i++) {
            int r = mdcom_fifoch_recv(rx_, b, sizeof(b), ms(5000));
            if (r != 4 || std::memcmp(b, &i, 4) != 0) {
                errors++;
                return;
            }
        }
    });
    for (int i = 0; i < n; i++) {
        int r = mdcom_fifoch_send(tx_, &i, 4, ms(5000));
        if (r != 0) {
            ADD_FAILURE() << "send " << i << ": " << errname(r);
            break;
        }
    }
    rcv.join();
    EXPECT_EQ(0, errors.load());
}
