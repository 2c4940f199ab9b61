// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_blocks.cpp - zero-copy blocks of <mdcom/mdcom.hpp>: a block's
 * span is the block in the region (what the receiver reads is what the
 * sender wrote there, no copy), the guard frees a block dropped while held
 * (the pool count shows it) and not one that was enqueued, released or
 * detached, a failed enqueue (queue full) leaves the block held, and
 * mdcom::span / as_bytes view containers.
 */
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "cpp/cpp_fixture.h"

namespace {

using namespace cpt;
using namespace std::chrono_literals;

class CppBlocks : public CppPair {};

TEST_F(CppBlocks, ZeroCopyRoundTrip)
{
    mdcom::block b = ping_tx_.alloc().value();
    mdcom::span<std::byte> buf = b.buffer();
    ASSERT_EQ(kBlockSize, buf.size());
    void *p = nullptr;
    uint32_t size = 0;
    ASSERT_EQ(0, mdcom_fifoch_get(ping_tx_.get(), b.id(), &p, &size));
    EXPECT_EQ(p, buf.data()) << "the span is the block itself, in the region";
    for (size_t i = 0; i < 10; i++)
        buf[i] = std::byte(0xa0 + i);
    auto e = b.enqueue(10);
    ASSERT_TRUE(e) << why(e);
    EXPECT_EQ(mdcom::sent::queued, *e);
    EXPECT_FALSE(b.held()) << "enqueued: ownership passed to the receiver";

    mdcom::block r = ping_rx_.dequeue(1s).value();
    ASSERT_EQ(10u, r.length());
    mdcom::span<const std::byte> msg = r.message();
    ASSERT_EQ(10u, msg.size());
    for (size_t i = 0; i < msg.size(); i++)
        EXPECT_EQ(std::byte(0xa0 + i), msg[i]) << i;
    EXPECT_EQ(kBlocks - 1, free_blocks(ping_rx_)) << "held by the receiver";
}

TEST_F(CppBlocks, DroppedGuardReturnsTheBlock)
{
    ASSERT_EQ(kBlocks, free_blocks(ping_tx_));
    {
        mdcom::block b = ping_tx_.alloc().value();
        EXPECT_EQ(kBlocks - 1, free_blocks(ping_tx_));
    } /* dropped without enqueue */
    EXPECT_EQ(kBlocks, free_blocks(ping_tx_)) << "the guard freed the allocated block";

    /* a dequeued block dropped after reading goes back too */
    ASSERT_TRUE(ping_tx_.send("x", 1, 1s));
    EXPECT_EQ(kBlocks - 1, free_blocks(ping_tx_)) << "queued";
    {
        mdcom::block r = ping_rx_.dequeue().value();
        EXPECT_EQ(1u, r.length());
    }
    EXPECT_EQ(kBlocks, free_blocks(ping_tx_)) << "the guard freed the dequeued block";
    EXPECT_EQ(0u, ping_tx_.state().value().queued);
}

TEST_F(CppBlocks, ReleaseAndDetach)
{
    mdcom::block b = ping_tx_.alloc().value();
    EXPECT_TRUE(b.release());
    EXPECT_FALSE(b.held());
    EXPECT_EQ(kBlocks, free_blocks(ping_tx_));
    auto twice = b.release();
    ASSERT_FALSE(twice) << "nothing left to release";

    /* detach: the guard lets go, the C API owns the block */
    uint32_t id = 0;
    {
        mdcom::block d = ping_tx_.alloc().value();
        id = d.detach();
    }
    EXPECT_EQ(kBlocks - 1, free_blocks(ping_tx_)) << "a detached block is not freed";
    EXPECT_EQ(0, mdcom_fifoch_free(ping_tx_.get(), id));
    EXPECT_EQ(kBlocks, free_blocks(ping_tx_));
}

TEST_F(CppBlocks, FullQueueLeavesTheBlockHeld)
{
    for (uint32_t i = 0; i < kDepth; i++)
        ASSERT_TRUE(ping_tx_.alloc().value().enqueue(1));
    {
        mdcom::block b = ping_tx_.alloc().value();
        auto e = b.enqueue(1);
        ASSERT_FALSE(e);
        EXPECT_EQ(EAGAIN, e.error().code()) << "the queue has " << kDepth << " slots";
        EXPECT_TRUE(b.held()) << "still ours: retry or drop";
        EXPECT_EQ(kBlocks - kDepth - 1, free_blocks(ping_tx_));
    }
    EXPECT_EQ(kBlocks - kDepth, free_blocks(ping_tx_)) << "dropped after the failed enqueue";
}

TEST_F(CppBlocks, EnqueueLongerThanTheBlockIsRefused)
{
    mdcom::block b = ping_tx_.alloc().value();
    auto e = b.enqueue(kBlockSize + 1);
    ASSERT_FALSE(e);
    EXPECT_EQ(EINVAL, e.error().code());
    EXPECT_TRUE(b.held());
}

TEST(CppSpan, ViewsOfContainers)
{
    std::vector<int> v{1, 2, 3};
    mdcom::span<int> s(v);
    EXPECT_EQ(v.data(), s.data());
    EXPECT_EQ(3u, s.size());
    mdcom::span<const int> cs = s; /* span<T> -> span<const T> */
    EXPECT_EQ(3u, cs.size());
    EXPECT_EQ(2u, cs.subspan(1).size());
    EXPECT_EQ(0u, cs.subspan(7).size());
    EXPECT_EQ(2u, cs.first(2).size());
    EXPECT_EQ(3u, cs.first(9).size());
    int sum = 0;
    for (int x : cs)
        sum += x;
    EXPECT_EQ(6, sum);
    std::array<char, 5> a{};
    EXPECT_EQ(5u, mdcom::as_writable_bytes(a).size());
    EXPECT_EQ(3 * sizeof(int), mdcom::as_bytes(v).size());
    std::string str = "abc";
    EXPECT_EQ(3u, mdcom::as_bytes(str).size());
    uint32_t words[4] = {};
    EXPECT_EQ(16u, mdcom::as_bytes(words).size());
    static_assert(!std::is_constructible_v<mdcom::span<int>, const std::vector<int> &>,
                  "no const-dropping view");
}

TEST_F(CppBlocks, CopySendAndRecvOfContainers)
{
    std::string out = "through the copy API";
    auto s = ping_tx_.send(mdcom::as_bytes(out), 1s);
    ASSERT_TRUE(s) << why(s);
    std::array<char, kBlockSize> in{};
    auto n = ping_rx_.recv(mdcom::as_writable_bytes(in), 1s);
    ASSERT_TRUE(n) << why(n);
    EXPECT_EQ(out, std::string(in.data(), *n));
    EXPECT_EQ(kBlocks, free_blocks(ping_rx_)) << "recv freed the block";
}

} // namespace
