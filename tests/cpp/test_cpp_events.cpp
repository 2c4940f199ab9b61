// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_events.cpp - mdcom::wait_set of <mdcom/events.hpp>: a set of a
 * FIFO channel and an SMEM channel times out while nothing holds, reports
 * the channel (and its user pointer) that has a message, its fd polls
 * readable then, and an SMEM member fires while its lock is free.
 */
#include <poll.h>

#include <array>

#include "cpp/cpp_fixture.h"
#include "mdcom/events.hpp"

namespace {

using namespace cpt;
using namespace std::chrono_literals;

static_assert(!std::is_copy_constructible_v<mdcom::wait_set>);
static_assert(std::is_nothrow_move_constructible_v<mdcom::wait_set>);

class CppEvents : public CppPair {};

TEST_F(CppEvents, WaitSetReportsTheChannelWithAMessage)
{
    auto ws = mdcom::wait_set::create(r_);
    ASSERT_TRUE(ws) << why(ws);
    int tag = 0;
    ASSERT_TRUE(ws->add(ping_rx_, mdcom::ev::rx, &tag));
    auto again = ws->add(ping_rx_, mdcom::ev::rx);
    ASSERT_FALSE(again);
    EXPECT_EQ(EEXIST, again.error().code()) << "a channel is in a set at most once";

    std::array<mdcom_event, 4> evs{};
    auto none = ws->wait(evs, 20ms);
    ASSERT_FALSE(none);
    EXPECT_TRUE(none.error().is_timeout());

    auto fd = ws->fd();
    ASSERT_TRUE(fd) << why(fd);
    ASSERT_TRUE(ping_tx_.send("x", 1, 1s));
    struct pollfd p = {*fd, POLLIN, 0};
    EXPECT_EQ(1, ::poll(&p, 1, 5000)) << "the set's fd is readable with a message queued";

    auto got = ws->wait(evs, 1s);
    ASSERT_TRUE(got) << why(got);
    ASSERT_EQ(1u, got->size());
    EXPECT_EQ(static_cast<void *>(ping_rx_.get()), (*got)[0].ch);
    EXPECT_EQ(&tag, (*got)[0].user);
    EXPECT_TRUE((*got)[0].events & mdcom::ev::rx);

    ASSERT_TRUE(ws->remove(ping_rx_));
    EXPECT_EQ(ENOENT, ws->remove(ping_rx_).error().code());
}

TEST_F(CppEvents, SmemMemberFiresWhileUnlocked)
{
    auto rs = r_.smem("shared").value();
    auto ws = mdcom::wait_set::create(r_).value();
    ASSERT_TRUE(ws.add(rs));
    std::array<mdcom_event, 1> evs{};
    {
        auto held = m_.smem("shared").value().lock(1s);
        ASSERT_TRUE(held) << why(held);
        auto busy = ws.wait(evs, 20ms);
        ASSERT_FALSE(busy) << "locked by the other attachment";
        EXPECT_TRUE(busy.error().is_timeout());
    }
    auto freed = ws.wait(evs, 1s);
    ASSERT_TRUE(freed) << why(freed);
    EXPECT_TRUE((*freed)[0].events & mdcom::ev::unlocked);
}

} // namespace
