// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_cpp_cxx20.cpp - <mdcom/mdcom.hpp> compiled as C++20 (this target's
 * CXX_STANDARD, tests/cpp/CMakeLists.txt): the header builds there too, and
 * mdcom::span converts from and to std::span, so C++20 code passes its own
 * spans to send/recv and takes a block's bytes as a std::span.
 */
#if __cplusplus < 202002L
#error "this test is meant to be compiled as C++20"
#endif

#include <array>
#include <cstring>
#include <span>

#include "cpp/cpp_fixture.h"

namespace {

using namespace cpt;
using namespace std::chrono_literals;

class CppCxx20 : public CppPair {};

TEST_F(CppCxx20, StdSpanInterop)
{
    std::array<std::byte, 6> out{std::byte{1}, std::byte{2}, std::byte{3},
                                 std::byte{4}, std::byte{5}, std::byte{6}};
    std::span<const std::byte> s{out};
    auto r = ping_tx_.send(s, 1s); /* std::span -> mdcom::span */
    ASSERT_TRUE(r) << why(r);

    mdcom::block b = ping_rx_.dequeue(1s).value();
    std::span<const std::byte> got = b.message(); /* mdcom::span -> std::span */
    ASSERT_EQ(out.size(), got.size());
    EXPECT_EQ(0, std::memcmp(out.data(), got.data(), got.size()));

    std::array<std::byte, kBlockSize> in{};
    ASSERT_TRUE(ping_tx_.send(s, 1s));
    auto n = ping_rx_.recv(std::span<std::byte>{in}, 1s);
    ASSERT_TRUE(n) << why(n);
    EXPECT_EQ(out.size(), *n);
}

} // namespace
