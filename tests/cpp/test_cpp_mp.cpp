// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_mp.cpp - two processes through <mdcom/mdcom.hpp> on a real
 * region (fork): the parent (master) sends numbered, checksummed messages on
 * "ping" with zero-copy blocks; the child (r1) checks each one (sequence,
 * length, CRC) and answers on "pong" with the copy API, the sequence number
 * and the CRC it computed; the parent checks every answer. Both ways, every
 * message checked, the child's failures reported through its exit status.
 */
#include <cstring>
#include <string>

#include "cpp/cpp_fixture.h"
#include "mp/mp_util.h"

namespace {

using namespace cpt;
using namespace std::chrono_literals;

constexpr uint32_t kMessages = 2000;

/* message i: 4 bytes sequence, then 8 + i % 48 bytes of a pattern of i;
 * its last 4 bytes hold the CRC-32 of what precedes them */
uint32_t fill(mdcom::span<std::byte> b, uint32_t i)
{
    uint32_t len = 4 + 8 + i % 48 + 4;
    std::memcpy(b.data(), &i, 4);
    for (uint32_t k = 4; k < len - 4; k++)
        b[k] = std::byte(uint8_t(i * 31 + k));
    uint32_t crc = mdt::crc32(b.data(), len - 4);
    std::memcpy(b.data() + len - 4, &crc, 4);
    return len;
}

struct Reply {
    uint32_t seq;
    uint32_t crc;
};

/* the child: r1 echoes what it checked */
int child_body(tsup::Config cfg)
{
    mdcom::attach_options o;
    o.attach_timeout = 10s;
    std::string why_not;
    o.explain = &why_not;
    auto att = mdcom::attachment::attach(*cfg.get(), kR1, o);
    CHILD_CHECK(att, "attach: %s (%s)", att.error().message(), why_not.c_str());
    auto ping = att->fifo("ping");
    auto pong = att->fifo("pong");
    CHILD_CHECK(ping && pong, "open: %s / %s", why(ping).c_str(), why(pong).c_str());
    for (uint32_t i = 0; i < kMessages; i++) {
        auto b = ping->dequeue(10s);
        CHILD_CHECK(b, "dequeue %u: %s", i, b.error().message());
        mdcom::span<const std::byte> m = b->message();
        CHILD_CHECK(m.size() >= 8, "message %u: %zu bytes", i, m.size());
        uint32_t seq = 0, crc = 0;
        std::memcpy(&seq, m.data(), 4);
        std::memcpy(&crc, m.data() + m.size() - 4, 4);
        CHILD_CHECK(seq == i, "message %u carries sequence %u", i, seq);
        CHILD_CHECK(m.size() == 4 + 8 + i % 48 + 4, "message %u: %zu bytes", i, m.size());
        uint32_t mine = mdt::crc32(m.data(), m.size() - 4);
        CHILD_CHECK(mine == crc, "message %u: CRC %08x, carried %08x", i, mine, crc);
        Reply r{seq, mine};
        auto s = pong->send(&r, sizeof r, 10s);
        CHILD_CHECK(s && *s == mdcom::sent::queued, "reply %u: %s", i, why(s).c_str());
    } /* b dropped each round: the block goes back to the parent's pool */
    return 0;
}

class CppMp : public ::testing::Test {
protected:
    void TearDown() override
    {
        kids_.kill_all();
        tsup::region_remove(region_);
    }
    std::string region_ = tsup::unique_name("cppmp");
    mdt::Children kids_;
};

TEST_F(CppMp, TwoProcessesBothWays)
{
    tsup::Config cfg = make_config(region_);
    auto m = mdcom::attachment::attach(*cfg.get(), kMaster);
    ASSERT_TRUE(m) << why(m);
    pid_t pid = kids_.spawn([&] { return child_body(cfg); });
    ASSERT_GT(pid, 0);
    auto ping = m->fifo("ping").value();
    auto pong = m->fifo("pong").value();

    uint32_t sent = 0, answered = 0;
    while (answered < kMessages) {
        /* keep up to the queue's depth in flight, then read an answer */
        while (sent < kMessages && sent - answered < kDepth) {
            auto b = ping.alloc(10s);
            ASSERT_TRUE(b) << "alloc " << sent << ": " << why(b);
            uint32_t len = fill(b->buffer(), sent);
            auto e = b->enqueue(len);
            ASSERT_TRUE(e) << "enqueue " << sent << ": " << why(e);
            ASSERT_EQ(mdcom::sent::queued, *e);
            sent++;
        }
        Reply r{};
        auto n = pong.recv(&r, sizeof r, 10s);
        ASSERT_TRUE(n) << "answer " << answered << ": " << why(n);
        ASSERT_EQ(sizeof r, *n);
        ASSERT_EQ(answered, r.seq) << "answers come in order";
        /* the CRC the child computed is the one of what the parent wrote */
        std::byte expect[kBlockSize];
        uint32_t len = fill(expect, answered);
        ASSERT_EQ(mdt::crc32(expect, len - 4), r.crc) << "message " << answered;
        answered++;
    }
    EXPECT_EQ("", kids_.wait(pid, 30 * mdt::kSec));
    auto st = ping.state().value();
    EXPECT_EQ(kBlocks, st.free_blocks) << "every block came back";
    EXPECT_EQ(0u, st.errors);
    EXPECT_EQ(0u, st.lost);
}

} // namespace
