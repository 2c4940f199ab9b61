/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two processes over real shared memory: the area is a MAP_SHARED mapping
 * created before fork (the RPMsg code sees exactly what it would see in a
 * /dev/shm region or an SMEM channel), one process plays the host, the other
 * the remote, in both assignments. Waits use the Linux port's futex doorbell.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <signal.h>

#include "mp/mp_util.h"
#include "rp_test.h"

using mdt::kMs;
using mdt::kSec;
using rpt::Area;
using rpt::Side;

namespace {

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        std::string e_ = (expr);                                                                   \
        if (!e_.empty())                                                                           \
            return e_;                                                                             \
    } while (0)
#define REQ(cond, msg)                                                                             \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return std::string(__FILE__ ":") + std::to_string(__LINE__) + ": " + #cond + ": " +    \
                   (msg);                                                                          \
    } while (0)

int child_result(const std::string &err)
{
    if (err.empty())
        return 0;
    fprintf(stderr, "[child %ld] %s\n", (long)getpid(), err.c_str());
    return 1;
}

std::string init_side(Side &s, uint32_t role, void *area, size_t size,
                      const mdcom_rpmsg_geometry &g, uint32_t max_epts = 0)
{
    s.prepare(role, g, max_epts);
    s.opts.attach_timeout_ns = 10 * kSec;
    int rc = s.init(area, size);
    REQ(rc == 0, "init: " + std::to_string(rc));
    return "";
}

/* ---- echo server: replies to every non-empty message, stops at an empty one */
struct EchoSrv {
    bool stop = false;
    uint32_t served = 0;
    int last_err = 0;
    bool hold = false; /* zero copy: hold RX, reply from get_tx_buffer */
    std::vector<std::pair<void *, std::pair<size_t, uint32_t>>> held;
};

int echo_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    EchoSrv *es = static_cast<EchoSrv *>(priv);
    if (len == 0) {
        es->stop = true;
        return 0;
    }
    if (es->hold) {
        int rc = mdcom_rpmsg_hold_rx_buffer(ept, data);
        if (rc)
            es->last_err = rc;
        else
            es->held.push_back({data, {len, src}});
        return rc;
    }
    int rc = mdcom_rpmsg_sendto(ept, data, len, src, 5 * kSec);
    if (rc)
        es->last_err = rc;
    else
        es->served++;
    return rc;
}

std::string echo_server(Side &s, const char *name, bool hold = false)
{
    EchoSrv es;
    es.hold = hold;
    mdcom_rpmsg_ept_t *e = nullptr;
    int rc = mdcom_rpmsg_ept_create(s.r, &e, name, MDCOM_RPMSG_ADDR_ANY, MDCOM_RPMSG_ADDR_ANY,
                                    echo_cb, &es, 5 * kSec);
    REQ(rc == 0, "ept_create: " + std::to_string(rc));
    uint64_t end = mdt::now_ns() + 60 * (uint64_t)kSec;
    while (!es.stop) {
        rc = mdcom_rpmsg_poll(s.r, 100 * kMs);
        REQ(rc >= 0, "poll: " + std::to_string(rc));
        REQ(es.last_err == 0, "echo: " + std::to_string(es.last_err));
        for (auto &h : es.held) {
            void *tx = nullptr;
            uint32_t cap = 0;
            rc = mdcom_rpmsg_get_tx_buffer(e, &tx, &cap, 5 * kSec);
            REQ(rc == 0, "get_tx_buffer: " + std::to_string(rc));
            REQ(h.second.first <= cap, "cap");
            memcpy(tx, h.first, h.second.first);
            rc = mdcom_rpmsg_sendto_nocopy(e, tx, h.second.first, h.second.second);
            REQ(rc == 0, "send_nocopy: " + std::to_string(rc));
            rc = mdcom_rpmsg_release_rx_buffer(e, h.first);
            REQ(rc == 0, "release_rx_buffer: " + std::to_string(rc));
            es.served++;
        }
        es.held.clear();
        REQ(mdt::now_ns() < end, "server ran too long");
    }
    return "";
}

/* ---- echo client: one message per size, waits for the identical reply */
std::string echo_client(Side &s, const char *name, const std::vector<uint32_t> &sizes,
                        bool zero_copy = false)
{
    uint32_t addr = 0;
    int rc = mdcom_rpmsg_wait_service(s.r, name, &addr, 10 * kSec);
    REQ(rc == 0, "wait_service: " + std::to_string(rc));
    mdcom_rpmsg_ept_t *e = s.ept(name, MDCOM_RPMSG_ADDR_ANY, addr);
    REQ(e != nullptr, "ept");
    uint32_t seq = 0;
    for (uint32_t len : sizes) {
        auto p = rpt::make_payload(++seq, len);
        if (zero_copy) {
            void *tx = nullptr;
            rc = mdcom_rpmsg_get_tx_buffer(e, &tx, nullptr, 5 * kSec);
            REQ(rc == 0, "get_tx_buffer: " + std::to_string(rc));
            memcpy(tx, p.data(), len);
            rc = mdcom_rpmsg_send_nocopy(e, tx, len);
        } else {
            rc = mdcom_rpmsg_send(e, p.data(), len, 5 * kSec);
        }
        REQ(rc == 0, "send " + std::to_string(len) + ": " + std::to_string(rc));
        size_t want = s.got.size() + 1;
        uint64_t end = mdt::now_ns() + 10 * (uint64_t)kSec;
        while (s.got.size() < want) {
            rc = mdcom_rpmsg_poll(s.r, 100 * kMs);
            REQ(rc >= 0, "poll: " + std::to_string(rc));
            REQ(mdt::now_ns() < end, "no reply to " + std::to_string(len) + " bytes");
        }
        REQ(s.got.back().data == p, "reply differs at " + std::to_string(len) + " bytes");
        REQ(s.got.back().src == addr, "reply from the wrong address");
    }
    rc = mdcom_rpmsg_send(e, nullptr, 0, 5 * kSec); /* stop */
    REQ(rc == 0, "send stop: " + std::to_string(rc));
    return "";
}

std::vector<uint32_t> range(uint32_t a, uint32_t b)
{
    std::vector<uint32_t> v;
    for (uint32_t i = a; i <= b; i++)
        v.push_back(i);
    return v;
}

struct Mp : ::testing::Test {
    mdcom_rpmsg_layout lay{};
    Area *area = nullptr;
    mdt::Children kids;
    void make(const mdcom_rpmsg_geometry &g)
    {
        ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&g, &lay));
        area = new Area(lay.size);
    }
    void TearDown() override
    {
        kids.kill_all();
        delete area;
    }
    /* An echo server of role srv_role in a child (initialised after
     * srv_delay_ms, lingering linger_ms after its last reply so that the
     * client drains it before the reset) on service svc; cl, in this
     * process, the client of the other role, sends sizes (zero-copy: zc). */
    void echo_pair(Side &cl, const mdcom_rpmsg_geometry &g, uint32_t srv_role, const char *svc,
                   const std::vector<uint32_t> &sizes, bool zc = false, int srv_delay_ms = 0,
                   int linger_ms = 0)
    {
        pid_t pid = kids.spawn([&] {
            mdt::sleep_ms(srv_delay_ms);
            Side s;
            std::string err = init_side(s, srv_role, area->p, area->size, g);
            if (err.empty())
                err = echo_server(s, svc, zc);
            mdt::sleep_ms(linger_ms);
            return child_result(err);
        });
        uint32_t cl_role = srv_role == MDCOM_RPMSG_REMOTE ? MDCOM_RPMSG_HOST : MDCOM_RPMSG_REMOTE;
        ASSERT_EQ("", init_side(cl, cl_role, area->p, area->size, g));
        ASSERT_EQ("", echo_client(cl, svc, sizes, zc));
        EXPECT_EQ("", kids.wait(pid, 20 * kSec));
    }
    /* A child with its side of role initialised on the area (geometry g),
     * that runs body(side): body's exit status, or the init failure's. */
    template <class Body>
    pid_t spawn_side(uint32_t role, const mdcom_rpmsg_geometry &g, Body body)
    {
        return kids.spawn([&] {
            Side s;
            std::string err = init_side(s, role, area->p, area->size, g);
            return err.empty() ? body(s) : child_result(err);
        });
    }
};

} // namespace

TEST_F(Mp, EchoHostClientRemoteServerLinuxGeometry)
{
    mdcom_rpmsg_geometry g{}; /* 256 x 512 B, align 4096 */
    make(g);
    Side host;
    ASSERT_NO_FATAL_FAILURE(
        echo_pair(host, g, MDCOM_RPMSG_REMOTE, "rpmsg-client-sample", range(1, 496)));
    EXPECT_EQ(0u, host.stats().bad_len + host.stats().bad_head + host.stats().unknown_dst);
}

TEST_F(Mp, EchoRemoteClientHostServer)
{
    mdcom_rpmsg_geometry g{};
    make(g);
    /* the remote attaches first and waits for the host */
    Side remote;
    ASSERT_NO_FATAL_FAILURE(
        echo_pair(remote, g, MDCOM_RPMSG_HOST, "host-echo", range(1, 496), false, 20, 50));
}

TEST_F(Mp, EchoLargeBuffersBothRoles)
{
    mdcom_rpmsg_geometry g{32, 65536, 4096};
    make(g);
    std::vector<uint32_t> sizes = {1, 496, 497, 4096, 30000, 65519, 65520};
    for (int round = 0; round < 2; round++) {
        uint32_t srv_role = round == 0 ? MDCOM_RPMSG_REMOTE : MDCOM_RPMSG_HOST;
        memset(area->p, 0, area->size);
        Side cl;
        ASSERT_NO_FATAL_FAILURE(echo_pair(cl, g, srv_role, "big", sizes, false,
                                          srv_role == MDCOM_RPMSG_REMOTE ? 10 : 0, 50));
        EXPECT_EQ(65520u, mdcom_rpmsg_max_payload(cl.r));
    }
}

TEST_F(Mp, ZeroCopyEcho)
{
    mdcom_rpmsg_geometry g{8, 512, 4096};
    make(g);
    std::vector<uint32_t> sizes;
    for (uint32_t i = 0; i < 200; i++)
        sizes.push_back(1 + (i * 37) % 496);
    Side host;
    ASSERT_NO_FATAL_FAILURE(echo_pair(host, g, MDCOM_RPMSG_REMOTE, "zc", sizes, true));
}

TEST_F(Mp, ManyEndpoints)
{
    constexpr int kEp = 48;
    mdcom_rpmsg_geometry g{64, 256, 64};
    make(g);
    pid_t pid = kids.spawn([&] {
        Side s;
        std::string err = init_side(s, MDCOM_RPMSG_REMOTE, area->p, area->size, g, kEp + 1);
        if (!err.empty())
            return child_result(err);
        EchoSrv es[kEp];
        for (int i = 0; i < kEp; i++) {
            mdcom_rpmsg_ept_t *e = nullptr;
            std::string name = "svc-" + std::to_string(i);
            int rc = mdcom_rpmsg_ept_create(s.r, &e, name.c_str(), MDCOM_RPMSG_ADDR_ANY,
                                            MDCOM_RPMSG_ADDR_ANY, echo_cb, &es[i], 5 * kSec);
            if (rc)
                return child_result("ept_create " + std::to_string(rc));
        }
        uint64_t end = mdt::now_ns() + 30 * (uint64_t)kSec;
        for (;;) {
            int stopped = 0;
            for (auto &x : es)
                stopped += x.stop;
            if (stopped == kEp)
                break;
            int rc = mdcom_rpmsg_poll(s.r, 100 * kMs);
            if (rc < 0 || mdt::now_ns() > end)
                return child_result("poll " + std::to_string(rc));
        }
        for (int i = 0; i < kEp; i++)
            if (es[i].served != 10 || es[i].last_err)
                return child_result("endpoint " + std::to_string(i) + " served " +
                                    std::to_string(es[i].served));
        return 0;
    });
    Side host;
    ASSERT_EQ("", init_side(host, MDCOM_RPMSG_HOST, area->p, area->size, g, kEp + 1));
    mdcom_rpmsg_ept_t *e[kEp];
    uint32_t raddr[kEp];
    for (int i = 0; i < kEp; i++) {
        std::string name = "svc-" + std::to_string(i);
        ASSERT_EQ(0, mdcom_rpmsg_wait_service(host.r, name.c_str(), &raddr[i], 10 * kSec)) << i;
        e[i] = host.ept(nullptr, MDCOM_RPMSG_ADDR_ANY, raddr[i]);
        ASSERT_NE(nullptr, e[i]);
    }
    /* 10 rounds: one message to every endpoint, then collect all replies */
    for (uint32_t round = 0; round < 10; round++) {
        host.got.clear();
        for (int i = 0; i < kEp; i++) {
            uint32_t v[2] = {round, (uint32_t)i};
            ASSERT_EQ(0, mdcom_rpmsg_send(e[i], v, sizeof(v), 5 * kSec));
        }
        ASSERT_TRUE(mdt::wait_until(
            [&] {
                mdcom_rpmsg_poll(host.r, 10 * kMs);
                return host.got.size() >= (size_t)kEp;
            },
            10 * kSec));
        ASSERT_EQ((size_t)kEp, host.got.size());
        for (const auto &m : host.got) {
            uint32_t v[2];
            ASSERT_EQ(sizeof(v), m.data.size());
            memcpy(v, m.data.data(), sizeof(v));
            ASSERT_LT(v[1], (uint32_t)kEp);
            EXPECT_EQ(round, v[0]);
            EXPECT_EQ(raddr[v[1]], m.src) << "reply from the endpoint it was sent to";
            EXPECT_EQ(mdcom_rpmsg_ept_addr(e[v[1]]), m.ept) << "delivered to its endpoint";
        }
    }
    for (int i = 0; i < kEp; i++)
        ASSERT_EQ(0, mdcom_rpmsg_send(e[i], nullptr, 0, 5 * kSec));
    EXPECT_EQ("", kids.wait(pid, 20 * kSec));
}

/* Both sides send as fast as they can with tiny rings while neither polls
 * explicitly: only the draining of blocked senders keeps them going. */
TEST_F(Mp, BlockedSendersDrainNoDeadlock)
{
    constexpr uint32_t kMsgs = 20000;
    mdcom_rpmsg_geometry g{4, 64, 64};
    make(g);
    auto run = [&](uint32_t role) -> std::string {
        Side s;
        TRY(init_side(s, role, area->p, area->size, g));
        uint32_t me = role == MDCOM_RPMSG_HOST ? 1100 : 2200;
        uint32_t peer = role == MDCOM_RPMSG_HOST ? 2200 : 1100;
        mdcom_rpmsg_ept_t *e = s.ept(nullptr, me, peer);
        REQ(e != nullptr, "ept");
        for (uint32_t i = 0; i < kMsgs; i++) {
            int rc = mdcom_rpmsg_send(e, &i, 4, 10 * kSec);
            REQ(rc == 0, "send " + std::to_string(i) + ": " + std::to_string(rc));
        }
        uint64_t end = mdt::now_ns() + 30 * (uint64_t)kSec;
        while (s.got.size() < kMsgs) {
            int rc = mdcom_rpmsg_poll(s.r, 100 * kMs);
            REQ(rc >= 0, "poll: " + std::to_string(rc));
            REQ(mdt::now_ns() < end, "only " + std::to_string(s.got.size()) + " received");
        }
        for (uint32_t i = 0; i < kMsgs; i++) {
            uint32_t v;
            memcpy(&v, s.got[i].data.data(), 4);
            REQ(v == i, "out of order at " + std::to_string(i));
        }
        REQ(s.stats().unknown_dst == 0, "unknown destinations");
        return "";
    };
    pid_t pid = kids.spawn([&] { return child_result(run(MDCOM_RPMSG_REMOTE)); });
    /* the host stays attached until the remote has everything */
    {
        Side s;
        ASSERT_EQ("", init_side(s, MDCOM_RPMSG_HOST, area->p, area->size, g));
        mdcom_rpmsg_ept_t *e = s.ept(nullptr, 1100, 2200);
        ASSERT_NE(nullptr, e);
        for (uint32_t i = 0; i < kMsgs; i++)
            ASSERT_EQ(0, mdcom_rpmsg_send(e, &i, 4, 10 * kSec)) << i;
        ASSERT_TRUE(mdt::wait_until(
            [&] {
                mdcom_rpmsg_poll(s.r, 10 * kMs);
                return s.got.size() >= kMsgs;
            },
            30 * kSec));
        for (uint32_t i = 0; i < kMsgs; i++) {
            uint32_t v;
            memcpy(&v, s.got[i].data.data(), 4);
            ASSERT_EQ(i, v);
        }
        EXPECT_EQ("", kids.wait(pid, 30 * kSec));
    }
}

TEST_F(Mp, PeerStopsAnswering)
{
    mdcom_rpmsg_geometry g{8, 128, 64};
    make(g);
    auto *flag = mdt::shared_new<std::atomic<int>>();
    pid_t pid = spawn_side(MDCOM_RPMSG_REMOTE, g, [&](Side &s) {
        if (!s.ept("mute"))
            return child_result("ept");
        flag->store(1);
        for (;;) /* never polls again */
            mdt::sleep_ms(1000);
    });
    Side host;
    ASSERT_EQ("", init_side(host, MDCOM_RPMSG_HOST, area->p, area->size, g));
    uint32_t addr = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(host.r, "mute", &addr, 10 * kSec));
    ASSERT_TRUE(mdt::wait_until([&] { return flag->load() == 1; }, 10 * kSec));
    mdcom_rpmsg_ept_t *e = host.ept(nullptr, MDCOM_RPMSG_ADDR_ANY, addr);
    uint32_t x = 0;
    for (int i = 0; i < 8; i++)
        ASSERT_EQ(0, mdcom_rpmsg_trysend(e, &x, 4));
    uint64_t t0 = mdt::now_ns();
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_send(e, &x, 4, 30 * kMs));
    EXPECT_GE(mdt::now_ns() - t0, (uint64_t)(30 * kMs)); /* it did wait, then gave up */
    EXPECT_EQ(0, mdcom_rpmsg_poll(host.r, 20 * kMs));    /* nothing arrives */
    uint32_t a2;
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_wait_service(host.r, "other", &a2, 20 * kMs));
    /* the peer dies: still only timeouts, no hang */
    kill(pid, SIGKILL);
    EXPECT_NE("", kids.wait(pid, 5 * kSec));
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_send(e, &x, 4, 10 * kMs));
    mdt::shared_delete(flag);
}

TEST_F(Mp, HostTermWakesBlockedRemote)
{
    mdcom_rpmsg_geometry g{8, 128, 64};
    make(g);
    auto *flag = mdt::shared_new<std::atomic<int>>();
    pid_t pid = spawn_side(MDCOM_RPMSG_HOST, g, [&](Side &s) {
        /* wait until the remote is attached, let it fall asleep, then end */
        if (!mdt::wait_until([&] { return flag->load() == 1; }, 10 * kSec))
            return child_result("remote never attached");
        mdt::sleep_ms(50);
        s.term();
        return 0;
    });
    Side remote;
    ASSERT_EQ("", init_side(remote, MDCOM_RPMSG_REMOTE, area->p, area->size, g));
    flag->store(1);
    uint64_t t0 = mdt::now_ns();
    EXPECT_EQ(-ESHUTDOWN, mdcom_rpmsg_poll(remote.r, MDCOM_FOREVER));
    EXPECT_LT(mdt::now_ns() - t0, (uint64_t)(10 * kSec));
    EXPECT_EQ("", kids.wait(pid, 10 * kSec));
    mdt::shared_delete(flag);
}
