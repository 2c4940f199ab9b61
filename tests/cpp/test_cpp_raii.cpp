// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_raii.cpp - ownership in <mdcom/mdcom.hpp>: an attachment owns its
 * mdcom_t (mdcom_term at destruction, exactly once, moves transfer it), the
 * guards (block, smem_lock) are move-only, channel views are plain copies,
 * and a temporary config is refused at compile time (the library keeps the
 * pointer).
 */
#include <type_traits>
#include <utility>

#include "cpp/cpp_fixture.h"

namespace {

using namespace cpt;

/* owners are move-only; views are copyable */
static_assert(!std::is_copy_constructible_v<mdcom::attachment>);
static_assert(!std::is_copy_assignable_v<mdcom::attachment>);
static_assert(std::is_nothrow_move_constructible_v<mdcom::attachment>);
static_assert(std::is_nothrow_move_assignable_v<mdcom::attachment>);
static_assert(!std::is_copy_constructible_v<mdcom::block>);
static_assert(std::is_nothrow_move_constructible_v<mdcom::block>);
static_assert(!std::is_copy_constructible_v<mdcom::smem_lock>);
static_assert(std::is_nothrow_move_constructible_v<mdcom::smem_lock>);
static_assert(std::is_trivially_copyable_v<mdcom::fifo_channel>);
static_assert(std::is_trivially_copyable_v<mdcom::smem_channel>);

/* attach(config temporary) is deleted: detection of a well-formed call */
template <class Cfg, class = void>
struct can_attach : std::false_type {};
template <class Cfg>
struct can_attach<Cfg, std::void_t<decltype(mdcom::attachment::attach(std::declval<Cfg>(), 0u))>>
    : std::true_type {};
static_assert(can_attach<const mdcom_config &>::value);
static_assert(!can_attach<mdcom_config &&>::value, "a temporary config would dangle");

/* live processes of domain d as the other end sees them */
uint32_t live(const mdcom::attachment &seen_by, uint32_t d)
{
    return seen_by.sense_process(d).value();
}

TEST(CppRaii, DestructorTerminatesTheAttachment)
{
    tsup::Config c = make_config();
    auto m = mdcom::attachment::attach(*c.get(), kMaster);
    ASSERT_TRUE(m) << why(m);
    {
        auto r = mdcom::attachment::attach(*c.get(), kR1);
        ASSERT_TRUE(r) << why(r);
        EXPECT_EQ(1u, live(*m, kR1));
    } /* r's attachment destroyed here: mdcom_term */
    EXPECT_EQ(0u, live(*m, kR1));
}

TEST(CppRaii, MoveTransfersOwnershipOnce)
{
    tsup::Config c = make_config();
    mdcom::attachment m = mdcom::attachment::attach(*c.get(), kMaster).value();
    mdcom::attachment a = mdcom::attachment::attach(*c.get(), kR1).value();
    mdcom_t *raw = a.get();
    mdcom::attachment b(std::move(a));
    EXPECT_FALSE(a) << "a moved-from attachment is empty";
    EXPECT_EQ(nullptr, a.get());
    EXPECT_EQ(raw, b.get());
    EXPECT_EQ(kR1, b.domain_id());
    EXPECT_EQ(1u, live(m, kR1)) << "a move neither terms nor attaches";
    EXPECT_TRUE(b.fifo("ping")) << "the moved-to attachment works";

    /* move-assigning onto an attachment terms the one it held */
    mdcom::attachment other = mdcom::attachment::attach(*c.get(), kR1).value();
    EXPECT_EQ(2u, live(m, kR1));
    b = std::move(other);
    EXPECT_EQ(1u, live(m, kR1)) << "b's old attachment was terminated";
    EXPECT_FALSE(other);

    /* term() ends it now; a second term has nothing to end */
    EXPECT_TRUE(b.term());
    EXPECT_EQ(0u, live(m, kR1));
    auto again = b.term();
    ASSERT_FALSE(again);
    EXPECT_EQ(EINVAL, again.error().code());
}

TEST(CppRaii, ReleaseAndAdopt)
{
    tsup::Config c = make_config();
    mdcom::attachment m = mdcom::attachment::attach(*c.get(), kMaster).value();
    mdcom_t *raw = mdcom::attachment::attach(*c.get(), kR1).value().release();
    ASSERT_NE(nullptr, raw);
    EXPECT_EQ(1u, live(m, kR1)) << "released: no longer owned, not terminated";
    {
        mdcom::attachment adopted(raw);
        EXPECT_EQ(kR1, adopted.domain_id());
    }
    EXPECT_EQ(0u, live(m, kR1)) << "the adopting attachment terminated it";
}

class CppRaiiPair : public CppPair {};

TEST_F(CppRaiiPair, ViewsAreTheAttachmentsHandles)
{
    /* a view is the C handle: by name or by config index, copies alike */
    mdcom_fifoch_t *c = nullptr;
    ASSERT_EQ(0, mdcom_fifoch_open(m_.get(), "ping", &c));
    EXPECT_EQ(c, ping_tx_.get());
    EXPECT_EQ(c, m_.fifo_at(0).value().get()) << "ping is channel 0 of the config";
    mdcom::fifo_channel copy = ping_tx_;
    EXPECT_EQ(c, copy.get());
    EXPECT_EQ(m_.smem("shared").value().get(), m_.smem_at(2).value().get());
    EXPECT_TRUE(m_.heartbeat());
}

TEST_F(CppRaiiPair, BlockGuardMovesFreeOnce)
{
    EXPECT_EQ(kBlocks, free_blocks(ping_tx_));
    mdcom::block a = ping_tx_.alloc().value();
    EXPECT_EQ(kBlocks - 1, free_blocks(ping_tx_));
    uint32_t id = a.id();
    mdcom::block b(std::move(a));
    EXPECT_FALSE(a.held());
    EXPECT_TRUE(b.held());
    EXPECT_EQ(id, b.id());
    mdcom::block c2 = ping_tx_.alloc().value();
    EXPECT_EQ(kBlocks - 2, free_blocks(ping_tx_));
    c2 = std::move(b); /* c2's own block is freed, b's moves in */
    EXPECT_EQ(kBlocks - 1, free_blocks(ping_tx_));
    EXPECT_EQ(id, c2.id());
    {
        mdcom::block d(std::move(c2));
    }
    EXPECT_EQ(kBlocks, free_blocks(ping_tx_)) << "freed once, by the last owner";
    auto st = ping_tx_.state().value();
    EXPECT_EQ(0u, st.errors) << "no double free reached the library";
}

TEST_F(CppRaiiPair, LockGuardMovesUnlockOnce)
{
    auto ms = m_.smem("shared").value();
    auto rs = r_.smem("shared").value();
    {
        mdcom::smem_lock a = ms.lock(mdcom::forever).value();
        mdcom::smem_lock b(std::move(a));
        EXPECT_FALSE(a.owns_lock());
        EXPECT_TRUE(b.owns_lock());
        EXPECT_EQ(EBUSY, rs.try_lock().error().code()) << "still held after the move";
    }
    EXPECT_TRUE(rs.try_lock()) << "released by the last owner";
}

} // namespace
