// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_errors.cpp - result<T> and mdcom::error of <mdcom/mdcom.hpp>:
 * a failed C call becomes an error carrying its errno (positive) and
 * mdcom_strerror's text; bad channel names, wrong directions, bad configs
 * (with mdcom_init's explanation); value_or; value() of an error aborts.
 */
#include <cstring>
#include <string>

#include "cpp/cpp_fixture.h"

namespace {

using namespace cpt;
using namespace std::chrono_literals;

class CppErrors : public CppPair {};

TEST_F(CppErrors, BadChannelNameIsEnoent)
{
    auto f = m_.fifo("no-such-channel");
    ASSERT_FALSE(f);
    EXPECT_FALSE(f.has_value());
    EXPECT_EQ(ENOENT, f.error().code());
    EXPECT_EQ(mdcom::error(-ENOENT), f.error()) << "from the C value or the errno alike";
    EXPECT_STREQ(mdcom_strerror(-ENOENT), f.error().message());
    EXPECT_NE(nullptr, std::strstr(f.error().message(), "ENOENT")) << f.error().message();

    auto s = m_.smem("no-such-area");
    ASSERT_FALSE(s);
    EXPECT_EQ(ENOENT, s.error().code());
    auto ix = m_.fifo_at(1000);
    ASSERT_FALSE(ix);
    EXPECT_NE(0, ix.error().code());
}

TEST_F(CppErrors, WrongDirectionIsEperm)
{
    /* r1 receives on ping: sending there is refused by the library */
    auto s = ping_rx_.send("x", 1, mdcom::poll);
    ASSERT_FALSE(s);
    EXPECT_EQ(EPERM, s.error().code());
    auto a = ping_rx_.alloc();
    ASSERT_FALSE(a);
    EXPECT_EQ(EPERM, a.error().code());
    /* a smem channel's name is no FIFO channel */
    auto f = m_.fifo("shared");
    ASSERT_FALSE(f);
    EXPECT_NE(0, f.error().code());
}

TEST_F(CppErrors, MessageTooLongIsEmsgsize)
{
    std::byte big[kBlockSize + 1] = {};
    auto s = ping_tx_.send(big, mdcom::poll);
    ASSERT_FALSE(s);
    EXPECT_EQ(EMSGSIZE, s.error().code());
}

TEST(CppErrorsAttach, BadDomainIsEinvalWithTheReason)
{
    tsup::Config c = make_config();
    std::string why_not;
    mdcom::attach_options o;
    o.explain = &why_not;
    auto m = mdcom::attachment::attach(*c.get(), 7, o);
    ASSERT_FALSE(m);
    EXPECT_EQ(EINVAL, m.error().code());
    EXPECT_FALSE(why_not.empty()) << "mdcom_init's one-line explanation";
}

TEST(CppErrorsAttach, RemoteWithoutMasterTimesOut)
{
    tsup::Config c = make_config();
    mdcom::attach_options o;
    o.attach_timeout = 20ms;
    auto r = mdcom::attachment::attach(*c.get(), kR1, o);
    ASSERT_FALSE(r);
    EXPECT_TRUE(r.error().is_timeout()) << r.error().message();
}

TEST(CppResult, ValueOrAndVoid)
{
    mdcom::result<int> ok = 5;
    mdcom::result<int> bad = mdcom::error(ETIMEDOUT);
    EXPECT_EQ(5, ok.value_or(-1));
    EXPECT_EQ(-1, bad.value_or(-1));
    EXPECT_EQ(0, ok.error().code()) << "no error with a value";
    mdcom::result<int> odd = mdcom::error(0);
    EXPECT_FALSE(odd) << "an error without a code is still no value";
    EXPECT_EQ(EINVAL, odd.error().code());
    mdcom::result<void> v;
    EXPECT_TRUE(v);
    mdcom::result<void> e = mdcom::error(-EBUSY);
    EXPECT_FALSE(e);
    EXPECT_EQ(EBUSY, e.error().code());
    EXPECT_TRUE(e.error().would_block());
    EXPECT_FALSE(e.error().is_timeout());
}

TEST(CppResultDeathTest, ValueOfAnErrorAborts)
{
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    mdcom::result<int> bad = mdcom::error(ENOENT);
    EXPECT_DEATH((void)bad.value(), "value\\(\\) of an error: ENOENT");
}

} // namespace
