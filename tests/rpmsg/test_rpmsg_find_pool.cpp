/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_rpmsg_bind_find_pool: a remote that is only given the vrings (the
 * vhost-user case) finds the host's buffer pool from the RX buffers posted in
 * vring 0, and refuses a ring whose posted entries do not form one pool.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mdcom/rpmsg.h"
#include "rp_test.h"

namespace {

constexpr uint32_t NUM = 64, BUF = 512, ALIGN = 4096;
constexpr uint64_t POOL_DA = 0x7f3a10000ull; /* an arbitrary guest-physical address */
constexpr size_t V0 = 0, V1 = 0x4000, POOL = 0x8000, SIZE = POOL + 2 * NUM * BUF;

void noop_notify(void *, uint32_t) {}

struct Host {
    rpt::Area area{SIZE};
    std::vector<uint8_t> state;
    mdcom_rpmsg_t *r = nullptr;
    mdcom_rpmsg_bind b{};
    Host()
    {
        EXPECT_EQ(mdcom_rpmsg_bind_legacy_vrings(&b, area.at(V0), area.at(V1), NUM, ALIGN), 0);
        b.buf_size = BUF;
        b.pool = area.at(POOL);
        b.pool_da = POOL_DA;
        b.features = MDCOM_RPMSG_F_NS;
        b.notify = noop_notify;
        mdcom_rpmsg_opts o{};
        o.role = MDCOM_RPMSG_HOST;
        state.resize(mdcom_rpmsg_state_size_bound(NUM, &o) + 16);
        EXPECT_EQ(mdcom_rpmsg_init_bound(&r, rpt_align16(state.data()), state.size() - 16, &b, &o),
                  0);
    }
    ~Host()
    {
        if (r)
            mdcom_rpmsg_term(r);
    }
    static void *rpt_align16(uint8_t *p) { return (void *)(((uintptr_t)p + 15) & ~(uintptr_t)15); }
    /* the remote's view: vrings only */
    mdcom_rpmsg_bind remote_view() const
    {
        mdcom_rpmsg_bind v{};
        EXPECT_EQ(mdcom_rpmsg_bind_legacy_vrings(&v, area.at(V0), area.at(V1), NUM, ALIGN), 0);
        v.buf_size = BUF;
        return v;
    }
    uint8_t *desc0(uint16_t head) const { return area.at(V0) + 16u * head; }
};

TEST(RpmsgFindPool, FindsTheHostsPoolAndAnEchoWorks)
{
    Host h;
    mdcom_rpmsg_bind v = h.remote_view();
    ASSERT_EQ(mdcom_rpmsg_bind_find_pool(&v), 0);
    EXPECT_EQ(v.pool_da, POOL_DA);

    /* the binding it completes carries a message host -> remote */
    v.pool = h.area.at(POOL);
    v.features = MDCOM_RPMSG_F_NS;
    v.notify = noop_notify;
    mdcom_rpmsg_opts o{};
    o.role = MDCOM_RPMSG_REMOTE;
    std::vector<uint8_t> st(mdcom_rpmsg_state_size_bound(NUM, &o) + 16);
    mdcom_rpmsg_t *rem = nullptr;
    ASSERT_EQ(mdcom_rpmsg_init_bound(&rem, Host::rpt_align16(st.data()), st.size() - 16, &v, &o),
              0);
    struct Got {
        std::vector<uint8_t> data;
        uint32_t src = 0;
    } got;
    auto cb = [](mdcom_rpmsg_ept_t *, void *d, size_t n, uint32_t src, void *priv) -> int {
        auto *g = static_cast<Got *>(priv);
        g->data.assign((uint8_t *)d, (uint8_t *)d + n);
        g->src = src;
        return 0;
    };
    mdcom_rpmsg_ept_t *er = nullptr, *eh = nullptr;
    ASSERT_EQ(
        mdcom_rpmsg_ept_create(rem, &er, nullptr, 1100, MDCOM_RPMSG_ADDR_ANY, cb, &got, MDCOM_POLL),
        0);
    ASSERT_EQ(mdcom_rpmsg_ept_create(h.r, &eh, nullptr, 1200, 1100, cb, &got, MDCOM_POLL), 0);
    ASSERT_EQ(mdcom_rpmsg_send(eh, "abc", 3, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_rpmsg_poll(rem, MDCOM_POLL), 1);
    EXPECT_EQ(got.data, (std::vector<uint8_t>{'a', 'b', 'c'}));
    EXPECT_EQ(got.src, 1200u);
    mdcom_rpmsg_term(rem);
}

TEST(RpmsgFindPool, NothingPostedYet)
{
    rpt::Area a{SIZE};
    mdcom_rpmsg_bind v{};
    ASSERT_EQ(mdcom_rpmsg_bind_legacy_vrings(&v, a.at(V0), a.at(V1), NUM, ALIGN), 0);
    v.buf_size = BUF;
    EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EAGAIN);
}

TEST(RpmsgFindPool, RefusesEntriesThatAreNotOnePool)
{
    {
        Host h; /* a buffer off the buffer grid */
        uint64_t a;
        memcpy(&a, h.desc0(5), 8);
        a += 8;
        memcpy(h.desc0(5), &a, 8);
        mdcom_rpmsg_bind v = h.remote_view();
        EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EPROTO);
    }
    {
        Host h; /* a buffer beyond the RX half */
        uint64_t a = POOL_DA + (uint64_t)NUM * BUF;
        memcpy(h.desc0(7), &a, 8);
        mdcom_rpmsg_bind v = h.remote_view();
        EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EPROTO);
    }
    {
        Host h; /* a device-readable (TX-like) descriptor */
        uint16_t f = 0;
        memcpy(h.desc0(3) + 12, &f, 2);
        mdcom_rpmsg_bind v = h.remote_view();
        EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EPROTO);
    }
    {
        Host h; /* a shorter buffer */
        uint32_t len = BUF - 16;
        memcpy(h.desc0(0) + 8, &len, 4);
        mdcom_rpmsg_bind v = h.remote_view();
        EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EPROTO);
    }
    {
        Host h; /* a head out of range */
        uint16_t head = NUM;
        memcpy(h.area.at(V0) + 16u * NUM + 4, &head, 2);
        mdcom_rpmsg_bind v = h.remote_view();
        EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EPROTO);
    }
    {
        Host h; /* an index past the ring size */
        uint16_t idx = NUM + 1;
        memcpy(h.area.at(V0) + 16u * NUM + 2, &idx, 2);
        mdcom_rpmsg_bind v = h.remote_view();
        EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EPROTO);
    }
}

TEST(RpmsgFindPool, BadArguments)
{
    EXPECT_EQ(mdcom_rpmsg_bind_find_pool(nullptr), -EINVAL);
    Host h;
    mdcom_rpmsg_bind v = h.remote_view();
    v.num = 3;
    EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EINVAL);
    v = h.remote_view();
    v.buf_size = 500;
    EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EINVAL);
    v = h.remote_view();
    v.vring[0].avail = nullptr;
    EXPECT_EQ(mdcom_rpmsg_bind_find_pool(&v), -EINVAL);
}

} // namespace
