/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Both roles in one process over one area: one thread drives the host and the
 * remote alternately with non-blocking calls, so every step is deterministic.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "rp_test.h"

using rpt::Area;
using rpt::end_pair;
using rpt::Side;

namespace {

struct Pair : ::testing::Test {
    mdcom_rpmsg_geometry geo{};
    uint32_t max_epts = 0;
    mdcom_rpmsg_layout lay{};
    Area *area = nullptr;
    Side host, remote;

    void start()
    {
        ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&geo, &lay));
        area = new Area(lay.size);
        host.prepare(MDCOM_RPMSG_HOST, geo, max_epts);
        remote.prepare(MDCOM_RPMSG_REMOTE, geo, max_epts);
        ASSERT_EQ(0, host.init(area->p, area->size));
        ASSERT_EQ(0, remote.init(area->p, area->size));
    }
    void TearDown() override { end_pair(host, remote, area); }
    /* start() with n buffers of 64 B, vrings aligned to 16 */
    void start_small(uint32_t n)
    {
        geo = {n, 64, 16};
        start();
    }

    /* start_small(n), then host endpoint 5000
     * and remote endpoint 6000, each the other's peer */
    void connect(uint32_t n, mdcom_rpmsg_ept_t **h, mdcom_rpmsg_ept_t **r)
    {
        ASSERT_NO_FATAL_FAILURE(start_small(n));
        *h = host.ept(nullptr, 5000, 6000);
        *r = remote.ept(nullptr, 6000, 5000);
        ASSERT_TRUE(*h && *r);
    }

    /* remote announces name; host learns it; host endpoint bound to it */
    void handshake(const char *name, mdcom_rpmsg_ept_t **hep, mdcom_rpmsg_ept_t **rep)
    {
        *rep = remote.ept(name);
        ASSERT_NE(nullptr, *rep);
        uint32_t addr = 0;
        ASSERT_EQ(0, mdcom_rpmsg_wait_service(host.r, name, &addr, MDCOM_POLL));
        EXPECT_EQ(mdcom_rpmsg_ept_addr(*rep), addr);
        *hep = host.ept(name, MDCOM_RPMSG_ADDR_ANY, addr);
        ASSERT_NE(nullptr, *hep);
    }
};

} // namespace

TEST_F(Pair, RemoteBeforeHostTimesOut)
{
    ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&geo, &lay));
    area = new Area(lay.size);
    remote.prepare(MDCOM_RPMSG_REMOTE);
    EXPECT_EQ(-ETIMEDOUT, remote.init(area->p, area->size));
    remote.r = nullptr;
}

TEST_F(Pair, InitArgumentChecks)
{
    ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&geo, &lay));
    area = new Area(lay.size);
    host.prepare(MDCOM_RPMSG_HOST);
    mdcom_rpmsg_t *r = nullptr;
    EXPECT_EQ(-ENOSPC, mdcom_rpmsg_init(&r, host.state_mem, host.state_size, area->p, lay.size - 1,
                                        &host.opts));
    EXPECT_EQ(-ENOSPC, mdcom_rpmsg_init(&r, host.state_mem, host.state_size - 1, area->p, lay.size,
                                        &host.opts));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_init(&r, host.state_mem, host.state_size, area->at(8),
                                        lay.size - 8, &host.opts));
    mdcom_rpmsg_opts o = host.opts;
    o.role = 7;
    EXPECT_EQ(-EINVAL,
              mdcom_rpmsg_init(&r, host.state_mem, host.state_size, area->p, lay.size, &o));
    o = host.opts;
    o.geometry.buf_size = 100;
    EXPECT_EQ(-EINVAL,
              mdcom_rpmsg_init(&r, host.state_mem, host.state_size, area->p, lay.size, &o));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_init(nullptr, host.state_mem, host.state_size, area->p, lay.size,
                                        &host.opts));
    EXPECT_EQ(nullptr, r);
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_term(nullptr));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_poll(nullptr, 0));
    EXPECT_EQ(0u, mdcom_rpmsg_max_payload(nullptr));
}

TEST_F(Pair, GeometryMismatchIsStale)
{
    ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&geo, &lay));
    area = new Area(lay.size);
    host.prepare(MDCOM_RPMSG_HOST);
    ASSERT_EQ(0, host.init(area->p, area->size));
    mdcom_rpmsg_geometry other{128, 512, 4096};
    remote.prepare(MDCOM_RPMSG_REMOTE, other);
    EXPECT_EQ(-ESTALE, remote.init(area->p, area->size));
    remote.r = nullptr;
    /* version and magic are checked before the geometry */
    uint32_t v = rpt::rd32(area->at(4));
    rpt::wr32(area->at(4), v + 1);
    remote.prepare(MDCOM_RPMSG_REMOTE);
    EXPECT_EQ(-EPROTONOSUPPORT, remote.init(area->p, area->size));
    remote.r = nullptr;
    rpt::wr32(area->at(0), 0x12345678u);
    EXPECT_EQ(-EBADMSG, remote.init(area->p, area->size));
    remote.r = nullptr;
}

TEST_F(Pair, NameServiceHandshakeAndEcho)
{
    start();
    EXPECT_EQ(496u, mdcom_rpmsg_max_payload(host.r));
    mdcom_rpmsg_ept_t *rep = remote.ept("rpmsg-echo");
    ASSERT_NE(nullptr, rep);
    EXPECT_GE(mdcom_rpmsg_ept_addr(rep), MDCOM_RPMSG_RESERVED_ADDRESSES);
    EXPECT_EQ(MDCOM_RPMSG_ADDR_ANY, mdcom_rpmsg_ept_dst(rep));
    /* the announcement arrives at the host's name service */
    EXPECT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    ASSERT_EQ(1u, host.ns_log.size());
    EXPECT_EQ("+rpmsg-echo@" + std::to_string(mdcom_rpmsg_ept_addr(rep)), host.ns_log[0]);
    uint32_t addr = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(host.r, "rpmsg-echo", &addr, MDCOM_POLL));
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_wait_service(host.r, "other", &addr, MDCOM_POLL));
    mdcom_rpmsg_ept_t *hep = host.ept("rpmsg-echo", MDCOM_RPMSG_ADDR_ANY, addr);
    ASSERT_NE(nullptr, hep);
    /* bound endpoints are not announced: nothing for the remote's NS */
    EXPECT_EQ(0, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));

    /* the remote cannot answer before it learned the host's address */
    EXPECT_EQ(-ENOTCONN, mdcom_rpmsg_trysend(rep, "x", 1));
    for (uint32_t len = 1; len <= 496; len++) {
        auto p = rpt::make_payload(len, len);
        ASSERT_EQ(0, mdcom_rpmsg_trysend(hep, p.data(), len)) << len;
        ASSERT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
        ASSERT_EQ(len, remote.got.back().data.size());
        ASSERT_EQ(p, remote.got.back().data);
        ASSERT_EQ(mdcom_rpmsg_ept_addr(hep), remote.got.back().src);
        ASSERT_EQ(mdcom_rpmsg_ept_addr(hep), mdcom_rpmsg_ept_dst(rep)); /* learned */
        ASSERT_EQ(0, mdcom_rpmsg_trysend(rep, p.data(), len));
        ASSERT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
        ASSERT_EQ(p, host.got.back().data);
        ASSERT_EQ(mdcom_rpmsg_ept_addr(rep), host.got.back().src);
    }
    EXPECT_EQ(-EMSGSIZE, mdcom_rpmsg_trysend(hep, host.got.back().data.data(), 497));
    EXPECT_EQ(0, mdcom_rpmsg_trysend(hep, nullptr, 0)); /* empty messages exist */
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(0u, remote.got.back().data.size());
    mdcom_rpmsg_stats hs = host.stats(), rs = remote.stats();
    EXPECT_EQ(496u, hs.rx_msgs);
    EXPECT_EQ(497u, rs.rx_msgs);
    EXPECT_EQ(0u, hs.bad_idx + hs.bad_head + hs.bad_addr + hs.bad_len + hs.unknown_dst);
    EXPECT_EQ(0u, rs.bad_idx + rs.bad_head + rs.bad_addr + rs.bad_len + rs.unknown_dst);

    /* destroying an announced endpoint withdraws it */
    EXPECT_EQ(0, mdcom_rpmsg_ept_destroy(rep));
    EXPECT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    EXPECT_EQ("-rpmsg-echo@" + std::to_string(addr), host.ns_log.back());
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_wait_service(host.r, "rpmsg-echo", &addr, MDCOM_POLL));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_ept_destroy(rep));
}

TEST_F(Pair, AnnouncementBindsUnboundEndpointOfSameName)
{
    start();
    /* a host endpoint of the same name created first, unbound (it announces too) */
    mdcom_rpmsg_ept_t *hep = host.ept("svc");
    ASSERT_NE(nullptr, hep);
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    mdcom_rpmsg_ept_t *rep = nullptr;
    /* the remote remembered the host's service */
    uint32_t a = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(remote.r, "svc", &a, MDCOM_POLL));
    EXPECT_EQ(mdcom_rpmsg_ept_addr(hep), a);
    /* the remote's announcement binds the host's unbound endpoint "svc" */
    rep = remote.ept("svc");
    ASSERT_NE(nullptr, rep);
    EXPECT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    EXPECT_EQ(mdcom_rpmsg_ept_addr(rep), mdcom_rpmsg_ept_dst(hep));
    EXPECT_EQ(0, mdcom_rpmsg_trysend(hep, "hi", 2));
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(mdcom_rpmsg_ept_addr(hep), mdcom_rpmsg_ept_dst(rep));
}

TEST_F(Pair, SendtoAndOffchannel)
{
    start();
    mdcom_rpmsg_ept_t *r1 = remote.ept(nullptr, 2000);
    mdcom_rpmsg_ept_t *r2 = remote.ept(nullptr, 2001);
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 3000);
    ASSERT_TRUE(r1 && r2 && h);
    EXPECT_EQ(0, mdcom_rpmsg_trysendto(h, "a", 1, 2000));
    EXPECT_EQ(0, mdcom_rpmsg_sendto(h, "b", 1, 2001, MDCOM_FOREVER));
    EXPECT_EQ(0, mdcom_rpmsg_send_offchannel(h, 4242, 2000, "c", 1, 1000000));
    EXPECT_EQ(0, mdcom_rpmsg_trysend_offchannel(h, 4343, 2001, "d", 1));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_trysendto(h, "e", 1, MDCOM_RPMSG_ADDR_ANY));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_trysend_offchannel(h, MDCOM_RPMSG_ADDR_ANY, 2000, "e", 1));
    EXPECT_EQ(-ENOTCONN, mdcom_rpmsg_trysend(h, "e", 1));
    EXPECT_EQ(4, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    ASSERT_EQ(4u, remote.got.size());
    EXPECT_EQ(2000u, remote.got[0].ept);
    EXPECT_EQ(3000u, remote.got[0].src);
    EXPECT_EQ(2001u, remote.got[1].ept);
    EXPECT_EQ(2000u, remote.got[2].ept);
    EXPECT_EQ(4242u, remote.got[2].src);
    EXPECT_EQ(4343u, remote.got[3].src);
    EXPECT_EQ('d', remote.got[3].data[0]);
}

TEST_F(Pair, EndpointTable)
{
    max_epts = 8;
    start();
    mdcom_rpmsg_ept_t *e[8];
    for (int i = 0; i < 8; i++) {
        e[i] = host.ept(nullptr);
        ASSERT_NE(nullptr, e[i]);
        EXPECT_EQ(1024u + (uint32_t)i, mdcom_rpmsg_ept_addr(e[i]));
    }
    int rc = 0;
    EXPECT_EQ(nullptr, host.ept(nullptr, MDCOM_RPMSG_ADDR_ANY, MDCOM_RPMSG_ADDR_ANY, &rc));
    EXPECT_EQ(-ENOSPC, rc);
    EXPECT_EQ(0, mdcom_rpmsg_ept_destroy(e[3]));
    EXPECT_EQ(nullptr, host.ept(nullptr, 1025, MDCOM_RPMSG_ADDR_ANY, &rc));
    EXPECT_EQ(-EADDRINUSE, rc);
    EXPECT_EQ(nullptr, host.ept(nullptr, MDCOM_RPMSG_NS_ADDR, MDCOM_RPMSG_ADDR_ANY, &rc));
    EXPECT_EQ(-EINVAL, rc);
    EXPECT_EQ(nullptr, host.ept("0123456789abcdef0123456789abcdef", 1, 2, &rc));
    EXPECT_EQ(-EINVAL, rc);
    mdcom_rpmsg_ept_t *x = host.ept(nullptr, 7); /* reserved range, explicitly */
    ASSERT_NE(nullptr, x);
    EXPECT_EQ(7u, mdcom_rpmsg_ept_addr(x));
    EXPECT_EQ(MDCOM_RPMSG_ADDR_ANY, mdcom_rpmsg_ept_addr(nullptr));
}

TEST_F(Pair, HostTxExhaustionAndRecovery)
{
    mdcom_rpmsg_ept_t *h = nullptr, *r = nullptr;
    ASSERT_NO_FATAL_FAILURE(connect(8, &h, &r));
    for (uint32_t i = 0; i < 8; i++)
        ASSERT_EQ(0, mdcom_rpmsg_trysend(h, &i, 4)) << i;
    uint32_t x = 99;
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_trysend(h, &x, 4));
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_send(h, &x, 4, 2000000)); /* 2 ms: nobody consumes */
    EXPECT_EQ(8, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t v;
        memcpy(&v, remote.got[i].data.data(), 4);
        EXPECT_EQ(i, v);
    }
    for (uint32_t round = 0; round < 5; round++) {
        for (uint32_t i = 0; i < 8; i++)
            ASSERT_EQ(0, mdcom_rpmsg_trysend(h, &i, 4));
        ASSERT_EQ(8, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    }
}

TEST_F(Pair, RemoteTxExhaustionAndRecovery)
{
    mdcom_rpmsg_ept_t *h = nullptr, *r = nullptr;
    ASSERT_NO_FATAL_FAILURE(connect(4, &h, &r));
    for (uint32_t round = 0; round < 10; round++) {
        for (uint32_t i = 0; i < 4; i++)
            ASSERT_EQ(0, mdcom_rpmsg_trysend(r, &i, 4)) << round << "/" << i;
        EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_trysend(r, &round, 4));
        ASSERT_EQ(4, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    }
    EXPECT_EQ(40u, host.got.size());
}

TEST_F(Pair, CallbackFailureStillReturnsBuffers)
{
    host.cb_result = -EIO;
    mdcom_rpmsg_ept_t *h = nullptr, *r = nullptr;
    ASSERT_NO_FATAL_FAILURE(connect(4, &h, &r));
    /* 5 rounds of a full ring: only possible if every buffer came back */
    for (uint32_t round = 0; round < 5; round++) {
        for (uint32_t i = 0; i < 4; i++)
            ASSERT_EQ(0, mdcom_rpmsg_trysend(r, &i, 4));
        ASSERT_EQ(4, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    }
    EXPECT_EQ(20u, host.stats().cb_errors);
}

namespace {
struct Holder {
    std::vector<void *> held;
    mdcom_rpmsg_ept_t *ept = nullptr;
    int hold_rc = 0, again_rc = 0;
};
int hold_cb(mdcom_rpmsg_ept_t *e, void *data, size_t, uint32_t, void *priv)
{
    Holder *h = static_cast<Holder *>(priv);
    h->hold_rc = mdcom_rpmsg_hold_rx_buffer(e, data);
    h->again_rc = mdcom_rpmsg_hold_rx_buffer(e, data);
    h->held.push_back(data);
    return 0;
}

/* rx's endpoint lrx (peer ltx) holds every message it receives (hold); tx's
 * endpoint ltx sends it four (0..3), which rx polls in. */
void send_four_held(Side &rx, uint32_t lrx, Side &tx, uint32_t ltx, Holder &hold,
                    mdcom_rpmsg_ept_t **erx, mdcom_rpmsg_ept_t **etx)
{
    ASSERT_EQ(0, mdcom_rpmsg_ept_create(rx.r, erx, nullptr, lrx, ltx, hold_cb, &hold, 0));
    *etx = tx.ept(nullptr, ltx, lrx);
    ASSERT_NE(nullptr, *etx);
    for (uint32_t i = 0; i < 4; i++)
        ASSERT_EQ(0, mdcom_rpmsg_trysend(*etx, &i, 4));
    ASSERT_EQ(4, mdcom_rpmsg_poll(rx.r, MDCOM_POLL));
}
} // namespace

TEST_F(Pair, HoldAndReleaseRxBuffers)
{
    ASSERT_NO_FATAL_FAILURE(start_small(4));
    Holder hh;
    mdcom_rpmsg_ept_t *h = nullptr, *r = nullptr;
    ASSERT_NO_FATAL_FAILURE(send_four_held(host, 5000, remote, 6000, hh, &h, &r));
    EXPECT_EQ(0, hh.hold_rc);
    EXPECT_EQ(-EALREADY, hh.again_rc);
    ASSERT_EQ(4u, hh.held.size());
    /* all host RX buffers are held: the remote has nothing to send in */
    uint32_t x = 7;
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_trysend(r, &x, 4));
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t v;
        memcpy(&v, hh.held[i], 4); /* still valid while held */
        EXPECT_EQ(i, v);
    }
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(h, hh.held[2]));
    EXPECT_EQ(-EALREADY, mdcom_rpmsg_release_rx_buffer(h, hh.held[2]));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_release_rx_buffer(h, static_cast<uint8_t *>(hh.held[1]) + 1));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_hold_rx_buffer(h, hh.held[2])); /* not being dispatched */
    EXPECT_EQ(0, mdcom_rpmsg_trysend(r, &x, 4));
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_trysend(r, &x, 4));
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(h, hh.held[0]));
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(h, hh.held[1]));
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(h, hh.held[3]));
}

TEST_F(Pair, RemoteHoldsRxBuffers)
{
    ASSERT_NO_FATAL_FAILURE(start_small(4));
    Holder rh;
    mdcom_rpmsg_ept_t *r = nullptr, *h = nullptr;
    ASSERT_NO_FATAL_FAILURE(send_four_held(remote, 6000, host, 5000, rh, &r, &h));
    uint32_t x = 1;
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_trysend(h, &x, 4)); /* held at the remote */
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(r, rh.held[1]));
    EXPECT_EQ(0, mdcom_rpmsg_trysend(h, &x, 4));
    for (int i : {0, 2, 3})
        EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(r, rh.held[(size_t)i]));
}

TEST_F(Pair, ZeroCopySend)
{
    geo = {4, 128, 16};
    start();
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 5000, 6000);
    mdcom_rpmsg_ept_t *r = remote.ept(nullptr, 6000, 5000);
    for (Side *s : {&host, &remote}) {
        mdcom_rpmsg_ept_t *from = s == &host ? h : r;
        Side *to = s == &host ? &remote : &host;
        void *buf[4];
        uint32_t cap = 0;
        for (int i = 0; i < 4; i++)
            ASSERT_EQ(0, mdcom_rpmsg_get_tx_buffer(from, &buf[i], &cap, MDCOM_POLL));
        EXPECT_EQ(112u, cap);
        void *none = nullptr;
        EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_get_tx_buffer(from, &none, &cap, MDCOM_POLL));
        EXPECT_EQ(nullptr, none);
        memset(buf[0], 0xab, 112);
        EXPECT_EQ(-EMSGSIZE, mdcom_rpmsg_send_nocopy(from, buf[0], 113));
        EXPECT_EQ(0, mdcom_rpmsg_send_nocopy(from, buf[0], 112));
        EXPECT_EQ(-EALREADY, mdcom_rpmsg_send_nocopy(from, buf[0], 1));
        EXPECT_EQ(-EINVAL, mdcom_rpmsg_send_nocopy(from, static_cast<uint8_t *>(buf[1]) + 4, 1));
        EXPECT_EQ(-EINVAL, mdcom_rpmsg_send_nocopy(from, &cap, 1));
        EXPECT_EQ(0, mdcom_rpmsg_release_tx_buffer(from, buf[1]));
        EXPECT_EQ(-EALREADY, mdcom_rpmsg_release_tx_buffer(from, buf[1]));
        memcpy(buf[2], "zc", 2);
        EXPECT_EQ(0, mdcom_rpmsg_sendto_nocopy(from, buf[2], 2, 6000u - (s == &host ? 0 : 1000)));
        EXPECT_EQ(0, mdcom_rpmsg_release_tx_buffer(from, buf[3]));
        /* released buffers are reused */
        void *again = nullptr;
        EXPECT_EQ(0, mdcom_rpmsg_get_tx_buffer(from, &again, nullptr, MDCOM_POLL));
        EXPECT_TRUE(again == buf[1] || again == buf[3]);
        EXPECT_EQ(0, mdcom_rpmsg_release_tx_buffer(from, again));
        size_t before = to->got.size();
        EXPECT_EQ(2, mdcom_rpmsg_poll(to->r, MDCOM_POLL));
        ASSERT_EQ(before + 2, to->got.size());
        EXPECT_EQ(std::vector<uint8_t>(112, 0xab), to->got[before].data);
        EXPECT_EQ(std::vector<uint8_t>({'z', 'c'}), to->got[before + 1].data);
    }
}

TEST_F(Pair, LargeBuffers)
{
    geo = {16, 16384, 4096};
    start();
    mdcom_rpmsg_ept_t *hep, *rep;
    handshake("big", &hep, &rep);
    EXPECT_EQ(16368u, mdcom_rpmsg_max_payload(remote.r));
    for (uint32_t len : {1u, 496u, 497u, 4096u, 10000u, 16368u}) {
        auto p = rpt::make_payload(len, len);
        ASSERT_EQ(0, mdcom_rpmsg_trysend(hep, p.data(), len));
        ASSERT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
        ASSERT_EQ(p, remote.got.back().data);
        ASSERT_EQ(0, mdcom_rpmsg_trysend(rep, p.data(), len));
        ASSERT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
        ASSERT_EQ(p, host.got.back().data);
    }
}

TEST_F(Pair, UnknownDestinationIsDroppedAndCounted)
{
    geo = {4, 64, 16};
    start();
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 5000, 6000);
    for (uint32_t round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 4; i++)
            ASSERT_EQ(0, mdcom_rpmsg_trysend(h, &i, 4));
        /* dropped, not errors: one poll takes all four */
        EXPECT_EQ(4, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
        EXPECT_EQ(0, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    }
    EXPECT_EQ(12u, remote.stats().unknown_dst);
    EXPECT_EQ(0u, remote.stats().rx_msgs);
}

TEST_F(Pair, HostTermShutsRemoteDown)
{
    start();
    mdcom_rpmsg_ept_t *r = remote.ept(nullptr, 6000, 5000);
    mdcom_rpmsg_t *old = host.r;
    ASSERT_EQ(0, host.term());
    EXPECT_EQ(-ESHUTDOWN, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(-ESHUTDOWN, mdcom_rpmsg_poll(remote.r, 1000000));
    uint32_t x = 0;
    /* buffers the host had posted remain usable until they run out; then
     * the wait reports the shutdown */
    int rc = 0;
    for (int i = 0; i < 300 && rc == 0; i++)
        rc = mdcom_rpmsg_send(r, &x, 4, 1000000);
    EXPECT_EQ(-ESHUTDOWN, rc);
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_poll(old, 0)); /* terminated handle */
}

/* Host and remote on two threads of one process (the TSan target): blocking
 * sends and polls, both directions at once, tiny rings. */
TEST_F(Pair, TwoThreadsBothDirections)
{
    geo = {4, 128, 64};
    start();
    constexpr uint32_t kMsgs = 5000;
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 5000, 6000);
    mdcom_rpmsg_ept_t *r = remote.ept(nullptr, 6000, 5000);
    ASSERT_TRUE(h && r);
    auto run = [](Side *s, mdcom_rpmsg_ept_t *e, int *result) {
        *result = 0;
        for (uint32_t i = 0; i < kMsgs && *result == 0; i++) {
            auto p = rpt::make_payload(i, 1 + i % 112);
            int rc = mdcom_rpmsg_send(e, p.data(), p.size(), 10 * 1000000000LL);
            if (rc)
                *result = rc;
        }
        uint64_t spins = 0;
        while (*result == 0 && s->got.size() < kMsgs && spins++ < 100000)
            if (mdcom_rpmsg_poll(s->r, 100 * 1000000LL) < 0)
                *result = -EPROTO;
    };
    int hr = -1, rr = -1;
    std::thread th(run, &remote, r, &rr);
    run(&host, h, &hr);
    th.join();
    EXPECT_EQ(0, hr);
    EXPECT_EQ(0, rr);
    for (Side *s : {&host, &remote}) {
        ASSERT_EQ(kMsgs, s->got.size());
        for (uint32_t i = 0; i < kMsgs; i++)
            ASSERT_EQ(rpt::make_payload(i, 1 + i % 112), s->got[i].data) << i;
    }
}
