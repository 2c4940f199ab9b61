/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_smem.cpp - SMEM channels: the shared area and its inter-domain lock.
 */
#include "fixture.h"

#include <thread>

using namespace ut;

namespace {

class Smem : public PairTest {
protected:
    void SetUp() override
    {
        c_.std_domains(4);
        c_.smem("s", 4096, bit(kMaster) | bit(kR1) | bit(kR2) | bit(kR3));
        c_.fifo("f", 8, 2, 0, bit(kMaster), bit(kR1));
        c_.smem("m_only", 8, bit(kMaster));
        ASSERT_NO_FATAL_FAILURE(attach());
        ms_ = m_.smem("s");
        rs_ = r_.smem("s");
        ASSERT_TRUE(ms_ && rs_);
    }
    mdcom_smemch_t *ms_ = nullptr, *rs_ = nullptr;
};

} // namespace

TEST_F(Smem, OpenAndGet)
{
    mdcom_smemch_t *s = nullptr;
    EXPECT_EQ(0, mdcom_smemch_at(m_, 0, &s));
    EXPECT_EQ(s, ms_);
    EXPECT_EQ(-ENOENT, mdcom_smemch_open(m_, "f", &s)) << "a FIFO is not an SMEM channel";
    EXPECT_EQ(-ENOENT, mdcom_smemch_at(m_, 1, &s));
    EXPECT_EQ(-ENOENT, mdcom_smemch_open(m_, "nope", &s));
    EXPECT_EQ(-EINVAL, mdcom_smemch_at(m_, 3, &s));
    EXPECT_EQ(-EPERM, mdcom_smemch_open(r_, "m_only", &s)) << "r1 is not a user";
    EXPECT_EQ(-EINVAL, mdcom_smemch_open(nullptr, "s", &s));
    EXPECT_EQ(-EINVAL, mdcom_smemch_open(m_, nullptr, &s));
    EXPECT_EQ(-EINVAL, mdcom_smemch_open(m_, "s", nullptr));

    void *p = nullptr, *q = nullptr;
    uint32_t sz = 0;
    ASSERT_EQ(0, mdcom_smemch_get(ms_, &p, &sz));
    EXPECT_EQ(sz, 4096u);
    EXPECT_TRUE(m_.inside(p, sz));
    ASSERT_EQ(0, mdcom_smemch_get(rs_, &q, nullptr));
    EXPECT_TRUE(r_.inside(q, sz));
    EXPECT_EQ(-EINVAL, mdcom_smemch_get(ms_, nullptr, &sz));
    EXPECT_EQ(-EINVAL, mdcom_smemch_get(nullptr, &p, &sz));

    /* both mappings alias the same area */
    ASSERT_EQ(0, mdcom_smemch_lock(ms_, MDCOM_FOREVER));
    std::memcpy(p, "shared!", 8);
    ASSERT_EQ(0, mdcom_smemch_unlock(ms_));
    ASSERT_EQ(0, mdcom_smemch_lock(rs_, ms(100)));
    EXPECT_STREQ((const char *)q, "shared!");
    ASSERT_EQ(0, mdcom_smemch_unlock(rs_));
}

TEST_F(Smem, TrylockUnlock)
{
    EXPECT_EQ(0, mdcom_smemch_trylock(ms_));
    EXPECT_EQ(-EDEADLK, mdcom_smemch_trylock(ms_)) << "held by this process already";
    EXPECT_EQ(-EDEADLK, mdcom_smemch_lock(ms_, ms(10)));
    EXPECT_EQ(-EDEADLK, mdcom_smemch_lock(ms_, MDCOM_FOREVER)) << "never waits for itself";
    EXPECT_EQ(-EBUSY, mdcom_smemch_trylock(rs_)) << "held by another process";
    EXPECT_EQ(-EPERM, mdcom_smemch_unlock(rs_)) << "unlock by non-owner";
    EXPECT_EQ(0, mdcom_smemch_unlock(ms_));
    EXPECT_EQ(-EPERM, mdcom_smemch_unlock(ms_)) << "not held any more";
    EXPECT_EQ(0, mdcom_smemch_trylock(rs_));
    EXPECT_EQ(-EBUSY, mdcom_smemch_trylock(ms_));
    EXPECT_EQ(0, mdcom_smemch_unlock(rs_));
    EXPECT_EQ(-EINVAL, mdcom_smemch_trylock(nullptr));
    EXPECT_EQ(-EINVAL, mdcom_smemch_lock(nullptr, 0));
    EXPECT_EQ(-EINVAL, mdcom_smemch_unlock(nullptr));
}

TEST_F(Smem, LockTimesOut)
{
    ASSERT_EQ(0, mdcom_smemch_trylock(ms_));
    for (int64_t t : {ms(1), ms(20), ms(60)}) {
        uint64_t t0 = now_ns();
        EXPECT_EQ(-ETIMEDOUT, mdcom_smemch_lock(rs_, t));
        uint64_t dt = now_ns() - t0;
        EXPECT_GE(dt, (uint64_t)t) << "returned before the timeout";
        EXPECT_LT(dt, (uint64_t)(t + ms(500)));
    }
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_smemch_lock(rs_, MDCOM_POLL));
    EXPECT_LT(now_ns() - t0, (uint64_t)ms(50));
    EXPECT_EQ(0, mdcom_smemch_unlock(ms_));
    EXPECT_EQ(0, mdcom_smemch_lock(rs_, MDCOM_POLL)) << "free: POLL takes it";
    EXPECT_EQ(0, mdcom_smemch_unlock(rs_));
}

TEST_F(Smem, LockWaitsForUnlock)
{
    for (uint32_t spin : {0u, MDCOM_NO_SPIN}) {
        Inst r2;
        ASSERT_EQ(0, r2.init(c_.get(), kR2, 0, spin)) << r2.err;
        mdcom_smemch_t *s2 = r2.smem("s");
        ASSERT_EQ(0, mdcom_smemch_trylock(ms_));
        int rc = 1;
        uint64_t woke = 0;
        std::thread t([&] {
            rc = mdcom_smemch_lock(s2, ms(5000));
            woke = now_ns();
        });
        sleep_ms(30);
        uint64_t t_unlock = now_ns();
        EXPECT_EQ(0, mdcom_smemch_unlock(ms_));
        t.join();
        EXPECT_EQ(0, rc);
        EXPECT_LT(woke - t_unlock, (uint64_t)ms(1000)) << "woken by the unlock, spin " << spin;
        EXPECT_EQ(-EBUSY, mdcom_smemch_trylock(ms_));
        EXPECT_EQ(0, mdcom_smemch_unlock(s2));
    }
}

/* Four attachments (four domains), one thread each, increment a counter in the
 * shared area under the lock: no update may be lost, and no two holders may
 * ever be inside at the same time. */
TEST_F(Smem, ContentionBetweenAttachmentsLosesNoUpdate)
{
    Inst r2, r3;
    ASSERT_EQ(0, r2.init(c_.get(), kR2)) << r2.err;
    ASSERT_EQ(0, r3.init(c_.get(), kR3)) << r3.err;
    mdcom_smemch_t *chs[4] = {ms_, rs_, r2.smem("s"), r3.smem("s")};
    const int per_thread = 20000;
    struct Area {
        uint64_t counter;
        uint32_t inside;
        uint32_t violations;
        uint64_t per[4];
    };
    {
        void *p;
        ASSERT_EQ(0, mdcom_smemch_get(ms_, &p, nullptr));
        ASSERT_EQ(0, mdcom_smemch_lock(ms_, ms(1000)));
        std::memset(p, 0, sizeof(Area));
        ASSERT_EQ(0, mdcom_smemch_unlock(ms_));
    }
    std::atomic<int> errors{0};
    std::vector<std::thread> th;
    for (int k = 0; k < 4; k++) {
        th.emplace_back([&, k] {
            void *p;
            if (mdcom_smemch_get(chs[k], &p, nullptr) != 0) {
                errors++;
                return;
            }
            volatile Area *a = (volatile Area *)p;
            for (int i = 0; i < per_thread; i++) {
                int r;
                if (i % 3 == 0) {
                    while ((r = mdcom_smemch_trylock(chs[k])) == -EBUSY)
                        std::this_thread::yield();
                } else {
                    r = mdcom_smemch_lock(chs[k], i % 3 == 1 ? MDCOM_FOREVER : ms(10000));
                }
                if (r != 0) {
                    errors++;
                    return;
                }
                if (a->inside++ != 0)
                    a->violations++;
                uint64_t v = a->counter;
                if (i % 64 == 0)
                    std::this_thread::yield(); /* widen the window */
                a->counter = v + 1;
                a->per[k]++;
                a->inside--;
                if (mdcom_smemch_unlock(chs[k]) != 0) {
                    errors++;
                    return;
                }
            }
        });
    }
    for (auto &t : th)
        t.join();
    EXPECT_EQ(errors.load(), 0);
    void *p;
    ASSERT_EQ(0, mdcom_smemch_get(ms_, &p, nullptr));
    ASSERT_EQ(0, mdcom_smemch_lock(ms_, ms(1000)));
    Area *a = (Area *)p;
    EXPECT_EQ(a->counter, 4u * per_thread) << "lost updates";
    EXPECT_EQ(a->violations, 0u) << "two holders at once";
    for (int k = 0; k < 4; k++)
        EXPECT_EQ(a->per[k], (uint64_t)per_thread);
    EXPECT_EQ(0, mdcom_smemch_unlock(ms_));
}

/* A process that detaches while holding the lock must not leave it held for
 * ever, nor hand it to whoever attaches next in the same process slot (the
 * owner token is the slot). */
TEST_F(Smem, TermReleasesAHeldLock)
{
    Inst r2;
    ASSERT_EQ(0, r2.init(c_.get(), kR2)) << r2.err;
    ASSERT_EQ(0, mdcom_smemch_trylock(r2.smem("s")));
    EXPECT_EQ(0, r2.term());
    EXPECT_EQ(0, mdcom_smemch_trylock(ms_)) << "lock still held by a detached process";
    mdcom_smemch_unlock(ms_);
}

TEST_F(Smem, NewAttachmentDoesNotInheritALock)
{
    Inst r2;
    ASSERT_EQ(0, r2.init(c_.get(), kR2)) << r2.err;
    const uint32_t slot = ut_proc_slot(r2);
    ASSERT_EQ(0, mdcom_smemch_trylock(r2.smem("s")));
    EXPECT_EQ(0, r2.term());
    Inst r3;
    ASSERT_EQ(0, r3.init(c_.get(), kR3)) << r3.err;
    ASSERT_EQ(ut_proc_slot(r3), slot) << "test assumes the freed slot is reused";
    mdcom_smemch_t *s3 = r3.smem("s");
    EXPECT_EQ(0, mdcom_smemch_trylock(s3)) << "r3 never took the lock";
    mdcom_smemch_unlock(s3);
}
