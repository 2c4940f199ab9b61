// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_smem.cpp - the SMEM lock guard of <mdcom/mdcom.hpp>: lock()
 * returns a guard holding the inter-domain lock (others get EBUSY / time
 * out), its data() is the shared area, dropping it unlocks (what was written
 * is seen by the next holder), unlock() reports, EDEADLK for a second lock
 * by the holder.
 */
#include <cstring>

#include "cpp/cpp_fixture.h"

namespace {

using namespace cpt;
using namespace std::chrono_literals;

class CppSmem : public CppPair {
protected:
    void SetUp() override
    {
        CppPair::SetUp();
        ms_ = m_.smem("shared").value();
        rs_ = r_.smem("shared").value();
    }
    mdcom::smem_channel ms_, rs_;
};

TEST_F(CppSmem, GuardHoldsAndReleasesTheLock)
{
    {
        auto g = ms_.lock(1s);
        ASSERT_TRUE(g) << why(g);
        EXPECT_TRUE(g->owns_lock());
        ASSERT_EQ(64u, g->data().size());
        std::memcpy(g->data().data(), "written under the lock", 23);
        auto other = rs_.try_lock();
        ASSERT_FALSE(other);
        EXPECT_EQ(EBUSY, other.error().code()) << "held by the other attachment";
    } /* guard dropped: unlocked */
    auto g = rs_.lock(1s);
    ASSERT_TRUE(g) << why(g) << ": the dropped guard released the lock";
    EXPECT_STREQ("written under the lock", reinterpret_cast<const char *>(g->data().data()));
}

TEST_F(CppSmem, SecondLockByTheHolderIsEdeadlk)
{
    auto g = ms_.lock(mdcom::forever).value();
    auto again = ms_.lock(10ms);
    ASSERT_FALSE(again);
    EXPECT_EQ(EDEADLK, again.error().code());
    auto forever = ms_.lock(mdcom::forever);
    ASSERT_FALSE(forever) << "never waits for itself";
    EXPECT_EQ(EDEADLK, forever.error().code());
}

TEST_F(CppSmem, ExplicitUnlockReports)
{
    mdcom::smem_lock g = ms_.try_lock().value();
    EXPECT_TRUE(g.unlock());
    EXPECT_FALSE(g.owns_lock());
    EXPECT_TRUE(g.data().empty()) << "no area without the lock";
    auto twice = g.unlock();
    ASSERT_FALSE(twice);
    EXPECT_EQ(EPERM, twice.error().code());
    EXPECT_TRUE(rs_.try_lock()) << "released";
}

TEST_F(CppSmem, AreaWithoutTheLock)
{
    /* the view's area() is where the guard points: the same bytes */
    mdcom::span<std::byte> a = ms_.area();
    auto g = ms_.lock(1s).value();
    EXPECT_EQ(a.data(), g.data().data());
    EXPECT_EQ(a.size(), g.data().size());
}

} // namespace
