/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpp_fixture.h - the system of the C++ API tests (tests/cpp): domains
 * master (0) and r1 (1), FIFO "ping" master -> r1 and "pong" r1 -> master
 * (4 blocks of 64 bytes, a queue of 2 slots: so a full queue and a dry pool
 * are both reachable), SMEM "shared" (64 bytes, both). CppPair attaches
 * both ends in this process through <mdcom/mdcom.hpp> (two attachments of
 * one region count as two processes for blocks and locks).
 */
#ifndef MDCOM_TESTS_CPP_FIXTURE_H
#define MDCOM_TESTS_CPP_FIXTURE_H

#include <gtest/gtest.h>

#include <string>

#include "mdcom/mdcom.hpp"
#include "support/config.h"

namespace cpt {

constexpr uint32_t kMaster = 0, kR1 = 1;
constexpr uint32_t kBlockSize = 64, kBlocks = 4, kDepth = 2;

/* The config of the system on a unique region (or on region, for a test
 * that forks: a copy per process). */
inline tsup::Config make_config(const std::string &region = "")
{
    tsup::Config c = region.empty() ? tsup::Config("cpp") : tsup::Config::named(region);
    c.std_domains(2);
    c.fifo("ping", kBlockSize, kBlocks, kDepth, 1u << kMaster, 1u << kR1);
    c.fifo("pong", kBlockSize, kBlocks, kDepth, 1u << kR1, 1u << kMaster);
    c.smem("shared", 64, (1u << kMaster) | (1u << kR1));
    return c;
}

/* mdcom's text of a result's error, for assertion messages */
template <class R>
std::string why(const R &r)
{
    return r ? std::string("ok") : std::string(r.error().message());
}

/* master m_ and remote r_ attached, the channel views opened */
class CppPair : public ::testing::Test {
protected:
    void SetUp() override
    {
        auto m = mdcom::attachment::attach(*c_.get(), kMaster);
        ASSERT_TRUE(m) << why(m);
        m_ = std::move(*m);
        auto r = mdcom::attachment::attach(*c_.get(), kR1);
        ASSERT_TRUE(r) << why(r);
        r_ = std::move(*r);
        ping_tx_ = m_.fifo("ping").value();
        ping_rx_ = r_.fifo("ping").value();
        pong_tx_ = r_.fifo("pong").value();
        pong_rx_ = m_.fifo("pong").value();
    }
    uint32_t free_blocks(const mdcom::fifo_channel &ch) { return ch.state().value().free_blocks; }

    tsup::Config c_ = make_config(); /* declared first: outlives the attachments */
    mdcom::attachment m_, r_;
    mdcom::fifo_channel ping_tx_, ping_rx_, pong_tx_, pong_rx_;
};

} // namespace cpt

#endif /* MDCOM_TESTS_CPP_FIXTURE_H */
