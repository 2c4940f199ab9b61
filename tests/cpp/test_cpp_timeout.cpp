// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_timeout.cpp - std::chrono timeouts of <mdcom/mdcom.hpp>: what
 * mdcom::timeout hands to the C API (rounding, poll, forever, negative and
 * huge durations), and the outcome of calls that time out: a 50 ms recv on
 * an empty channel returns ETIMEDOUT (checked: the outcome, and that it came
 * back at all within a generous bound, not how fast), poll answers "would
 * block" at once, a waiting alloc / dequeue / lock time out.
 */
#include <chrono>
#include <vector>

#include "cpp/cpp_fixture.h"

namespace {

using namespace cpt;
using namespace std::chrono_literals;
using std::chrono::steady_clock;

/* mdcom::timeout is a literal type: these hold at compile time */
static_assert(mdcom::timeout(50ms).ns() == 50'000'000);
static_assert(mdcom::poll.ns() == MDCOM_POLL);
static_assert(mdcom::forever.ns() == MDCOM_FOREVER);
static_assert(mdcom::timeout(0s).is_poll());
static_assert(mdcom::timeout(-5ms).is_poll(), "a negative duration is an expired deadline");
static_assert(mdcom::timeout(std::chrono::nanoseconds(-1)).is_poll(), "-1 ns is not forever");
static_assert(mdcom::timeout(std::chrono::duration<double, std::nano>(1.5)).ns() == 2,
              "rounded up: never shorter than asked");
static_assert(mdcom::timeout(std::chrono::hours(1'000'000'000)).is_forever(), "no overflow");
static_assert(mdcom::timeout(std::chrono::duration<int, std::milli>(3)).ns() == 3'000'000);
static_assert(mdcom::timeout::from_c(-1).is_forever());

class CppTimeout : public CppPair {};

TEST_F(CppTimeout, RecvOf50msTimesOut)
{
    std::byte buf[kBlockSize];
    auto t0 = steady_clock::now();
    auto r = ping_rx_.recv(buf, 50ms);
    auto spent = steady_clock::now() - t0;
    ASSERT_FALSE(r) << "nothing was sent";
    EXPECT_TRUE(r.error().is_timeout()) << r.error().message();
    EXPECT_EQ(ETIMEDOUT, r.error().code());
    EXPECT_LT(spent, 10s) << "it returned within its bound (a hang would not)";
}

TEST_F(CppTimeout, PollNeverWaits)
{
    std::byte buf[kBlockSize];
    /* recv waits like mdcom_fifoch_wait: its poll times out at once */
    auto r = ping_rx_.recv(buf, mdcom::poll);
    ASSERT_FALSE(r);
    EXPECT_EQ(ETIMEDOUT, r.error().code());
    /* dequeue is mdcom_fifoch_dequeue: "empty" */
    auto d = ping_rx_.dequeue(); /* default: poll */
    ASSERT_FALSE(d);
    EXPECT_EQ(EAGAIN, d.error().code());
    EXPECT_TRUE(d.error().would_block());
}

TEST_F(CppTimeout, WaitingAllocAndDequeueTimeOut)
{
    std::vector<mdcom::block> held;
    for (uint32_t i = 0; i < kBlocks; i++)
        held.push_back(ping_tx_.alloc().value());
    auto dry = ping_tx_.alloc();
    ASSERT_FALSE(dry);
    EXPECT_EQ(ENOBUFS, dry.error().code()) << "poll on a dry pool";
    auto waited = ping_tx_.alloc(20ms);
    ASSERT_FALSE(waited);
    EXPECT_EQ(ETIMEDOUT, waited.error().code()) << "a wait on a dry pool";
    auto empty = ping_rx_.dequeue(20ms);
    ASSERT_FALSE(empty);
    EXPECT_EQ(ETIMEDOUT, empty.error().code());
    auto w = ping_rx_.wait(mdcom::ev::rx, 20ms);
    ASSERT_FALSE(w);
    EXPECT_EQ(ETIMEDOUT, w.error().code());
}

TEST_F(CppTimeout, WaitingDequeueGetsAMessageSentMeanwhile)
{
    /* a message already there is taken on the first try of a waiting call */
    const char msg[] = "hello";
    ASSERT_TRUE(ping_tx_.send(msg, sizeof msg, 1s));
    auto b = ping_rx_.dequeue(1s);
    ASSERT_TRUE(b) << why(b);
    EXPECT_EQ(sizeof msg, b->length());
}

TEST_F(CppTimeout, LockTimesOutWhileHeldElsewhere)
{
    auto ms = m_.smem("shared").value();
    auto rs = r_.smem("shared").value();
    auto held = ms.lock(1s);
    ASSERT_TRUE(held) << why(held);
    auto r = rs.lock(50ms);
    ASSERT_FALSE(r);
    EXPECT_EQ(ETIMEDOUT, r.error().code());
}

} // namespace
