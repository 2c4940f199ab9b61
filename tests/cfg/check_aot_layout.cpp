/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_aot_layout.cpp - layouts computed ahead of time on the build host
 * (mdcom_generate_config(... LAYOUT): <prefix>_layout) are what mdcom_init
 * computes at run time, attach in mdcom_init_opts.layout beside processes
 * that compute theirs, and are refused for another config.
 *
 * aot_layout.h        from tests/cfg/good/aot.toml (the attach tests)
 * demo_layout.h       from examples/demo.toml
 * cfgtest_layout.h    from tests/cfg/good/full.toml
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "aot_attach.h"
#include "cfgtest_layout.h"
#include "demo_layout.h"
#include "mdcom/mdcom.h"
#include "mdcom/wire.h"

namespace {

/* the table against mdcom_wire_layout_compute() of its config, now */
void expect_same_as_runtime(const mdcom_layout_table &t, const mdcom_config &cfg)
{
    EXPECT_EQ(t.cfg, &cfg);
    ASSERT_EQ(t.n_channels, cfg.n_channels);
    mdcom_wire_layout lay{};
    std::vector<mdcom_wire_chan_layout> ch(cfg.n_channels);
    char err[200] = "";
    ASSERT_EQ(mdcom_wire_layout_compute(&cfg, &lay, ch.data(), err, sizeof err), 0) << err;
    EXPECT_EQ(memcmp(&t.lay, &lay, sizeof lay), 0) << cfg.region_name << ": region layout";
    for (uint32_t i = 0; i < cfg.n_channels; i++)
        EXPECT_EQ(memcmp(&t.chans[i], &ch[i], sizeof ch[i]), 0)
            << cfg.region_name << ": channel " << i;
}

TEST(AotLayout, TablesAreWhatTheCoreComputesAtRunTime)
{
    expect_same_as_runtime(aot_layout, aot_config);
    expect_same_as_runtime(demo_layout, demo_config);
    expect_same_as_runtime(cfgtest_layout, cfgtest_config);
}

struct Attached {
    mdcom_t *m = nullptr;
    ~Attached()
    {
        if (m)
            mdcom_term(m);
    }
};

int attach(Attached &a, uint32_t dom, const mdcom_layout_table *t, std::string *msg = nullptr)
{
    return aot_attach(&a.m, dom, t, msg);
}

/* one message each way on the FIFO channels, and the SMEM lock */
void exchange(mdcom_t *host, mdcom_t *fw)
{
    mdcom_fifoch_t *up_h, *up_f, *down_h, *down_f;
    mdcom_smemch_t *st;
    ASSERT_EQ(mdcom_fifoch_open(host, "up", &up_h), 0);
    ASSERT_EQ(mdcom_fifoch_open(fw, "up", &up_f), 0);
    ASSERT_EQ(mdcom_fifoch_open(host, "down", &down_h), 0);
    ASSERT_EQ(mdcom_fifoch_open(fw, "down", &down_f), 0);
    char big[4096], in[4096];
    memset(big, 0x5a, sizeof big);
    EXPECT_EQ(mdcom_fifoch_send(down_h, big, sizeof big, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_fifoch_recv(down_f, in, sizeof in, 1000000000), (int)sizeof in);
    EXPECT_EQ(memcmp(big, in, sizeof in), 0);
    EXPECT_EQ(mdcom_fifoch_send(up_f, "ready", 6, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_fifoch_recv(up_h, in, 100, 1000000000), 6);
    EXPECT_STREQ(in, "ready");
    ASSERT_EQ(mdcom_smemch_open(fw, "state", &st), 0);
    EXPECT_EQ(mdcom_smemch_lock(st, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_smemch_unlock(st), 0);
}

TEST(AotLayout, MasterWithTableServesARemoteThatComputes)
{
    Attached host, fw;
    ASSERT_EQ(attach(host, AOT_DOM_HOST, &aot_layout), 0);
    ASSERT_EQ(attach(fw, AOT_DOM_FW, nullptr), 0);
    exchange(host.m, fw.m);
}

TEST(AotLayout, RemoteWithTableJoinsAMasterThatComputes)
{
    Attached host, fw;
    ASSERT_EQ(attach(host, AOT_DOM_HOST, nullptr), 0);
    ASSERT_EQ(attach(fw, AOT_DOM_FW, &aot_layout), 0);
    exchange(host.m, fw.m);
}

TEST(AotLayout, AnotherConfigsTableIsRefused)
{
    Attached a;
    std::string msg;
    EXPECT_EQ(attach(a, AOT_DOM_HOST, &demo_layout, &msg), -EINVAL);
    EXPECT_EQ(a.m, nullptr);
    EXPECT_NE(msg.find("opts.layout is not the layout of this config"), std::string::npos) << msg;
    /* the table of this config, but for another channel count */
    mdcom_layout_table t = aot_layout;
    t.n_channels = aot_config.n_channels + 1;
    EXPECT_EQ(attach(a, AOT_DOM_HOST, &t, &msg), -EINVAL);
    t = aot_layout;
    t.chans = nullptr;
    EXPECT_EQ(attach(a, AOT_DOM_HOST, &t, &msg), -EINVAL);
}

/* A table whose geometry differs from what the peer computes (another
 * build's, say) is caught by the peer's check at attach, as a region of
 * another configuration is. */
TEST(AotLayout, AWrongTableIsCaughtByThePeer)
{
    std::vector<mdcom_wire_chan_layout> ch(aot_layout.chans,
                                           aot_layout.chans + aot_layout.n_channels);
    mdcom_layout_table t = aot_layout;
    t.chans = ch.data();
    t.lay.hash ^= 1u;
    Attached host, fw;
    ASSERT_EQ(attach(host, AOT_DOM_HOST, &t), 0);
    std::string msg;
    EXPECT_EQ(attach(fw, AOT_DOM_FW, nullptr, &msg), -ESTALE) << msg;
    EXPECT_NE(msg.find("layout_hash"), std::string::npos) << msg;
}

} // namespace
