/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * check_aot_core.cpp - a core built without the run-time layout
 * (MDCOM_RUNTIME_LAYOUT=0: what firmware links; here with the Linux port)
 * attaches with a layout computed on the build host, and refuses a config
 * without one with a message that says what to do. Its peer, a process of
 * the same program through the same core, takes the same table.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "aot_attach.h"

namespace {

TEST(AotCore, RefusesAConfigWithoutATable)
{
    mdcom_t *m = nullptr;
    std::string msg;
    EXPECT_EQ(aot_attach(&m, AOT_DOM_HOST, nullptr, &msg), -EINVAL);
    EXPECT_EQ(m, nullptr);
    EXPECT_NE(msg.find("MDCOM_RUNTIME_LAYOUT=OFF"), std::string::npos) << msg;
    EXPECT_NE(msg.find("opts.layout"), std::string::npos) << msg;
}

TEST(AotCore, AttachesWithTheTable)
{
    mdcom_t *host = nullptr, *fw = nullptr;
    std::string msg;
    ASSERT_EQ(aot_attach(&host, AOT_DOM_HOST, &aot_layout, &msg), 0) << msg;
    ASSERT_EQ(aot_attach(&fw, AOT_DOM_FW, &aot_layout, &msg), 0) << msg;
    mdcom_fifoch_t *tx, *rx;
    ASSERT_EQ(mdcom_fifoch_open(fw, "up", &tx), 0);
    ASSERT_EQ(mdcom_fifoch_open(host, "up", &rx), 0);
    char in[16] = "";
    EXPECT_EQ(mdcom_fifoch_send(tx, "hello", 6, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_fifoch_recv(rx, in, sizeof in, 1000000000), 6);
    EXPECT_STREQ(in, "hello");
    mdcom_term(fw);
    mdcom_term(host);
}

} // namespace
