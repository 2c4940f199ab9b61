/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RPMsg on memory mdcom does not lay out: a remoteproc resource table with an
 * rpmsg vdev entry, vrings at fixed device addresses (OpenAMP's Linux
 * reference layout: vrings at 0x4000 / 0x8000, pool at 0x10000), the virtio
 * status protocol, feature negotiation, notification suppression by the vring
 * flags, used.len of consumed buffers, and an interrupt-driven echo between
 * two threads sleeping on eventfds.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mdcom/rpmsg.h"
#include "rp_test.h"

namespace {

constexpr uint64_t MEM_DA = 0x3ed00000ull; /* device address of the window */
constexpr size_t MEM_SIZE = 1u << 20;
constexpr uint32_t V0 = 0x4000, V1 = 0x8000, POOL = 0x10000, ALIGN = 16, BUF = 512;

/* A window holding a resource table at offset 0 (one vdev entry). */
struct Window {
    rpt::Area area{MEM_SIZE};
    uint8_t *m() const { return area.at(0); }
    static constexpr uint32_t ENTRY = 16 + 4; /* header + one offset */
    uint8_t *vdev_raw() const { return m() + ENTRY + 4; }
    mdcom_rsc_vdev *vdev() const { return reinterpret_cast<mdcom_rsc_vdev *>(vdev_raw()); }
    size_t table_size() const { return ENTRY + 4 + 24 + 2 * 20; }

    void table(uint32_t num, uint32_t dfeatures)
    {
        memset(m(), 0, 0x1000);
        rpt::wr32(m(), 1);          /* ver */
        rpt::wr32(m() + 4, 1);      /* num */
        rpt::wr32(m() + 16, ENTRY); /* offset[0] */
        rpt::wr32(m() + ENTRY, MDCOM_RSC_VDEV);
        uint8_t *v = vdev_raw();
        rpt::wr32(v + 0, MDCOM_VIRTIO_ID_RPMSG);
        rpt::wr32(v + 8, dfeatures);
        v[21] = 2; /* num_of_vrings */
        const uint32_t da[2] = {V0, V1};
        for (int i = 0; i < 2; i++) {
            uint8_t *r = v + 24 + 20 * i;
            rpt::wr32(r + 0, (uint32_t)(MEM_DA + da[i]));
            rpt::wr32(r + 4, ALIGN);
            rpt::wr32(r + 8, num);
            rpt::wr32(r + 12, (uint32_t)i);
        }
    }
};

/* One bound side: notify counters per vring, an eventfd to sleep on. */
struct BSide {
    mdcom_rpmsg_bind b{};
    mdcom_rpmsg_opts opts{};
    std::vector<uint8_t> state;
    mdcom_rpmsg_t *r = nullptr;
    std::atomic<uint32_t> notified[2]{{0}, {0}};
    int my_efd = -1;   /* we sleep on it */
    int peer_efd = -1; /* we ring it */
    std::vector<std::vector<uint8_t>> got;
    std::vector<std::string> ns_log;

    ~BSide()
    {
        if (r)
            mdcom_rpmsg_term(r);
    }
    static void notify(void *ctx, uint32_t vq)
    {
        auto *s = static_cast<BSide *>(ctx);
        s->notified[vq & 1]++;
        if (s->peer_efd >= 0) {
            uint64_t one = 1;
            ssize_t n = write(s->peer_efd, &one, 8);
            (void)n;
        }
    }
    static int wait(void *ctx, int64_t timeout_ns)
    {
        auto *s = static_cast<BSide *>(ctx);
        struct pollfd p = {s->my_efd, POLLIN, 0};
        int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
        if (poll(&p, 1, ms) > 0) {
            uint64_t v;
            ssize_t n = read(s->my_efd, &v, 8);
            (void)n;
        }
        return 0;
    }
    static void ns_cb(mdcom_rpmsg_t *, const char *name, uint32_t addr, uint32_t flags, void *priv)
    {
        static_cast<BSide *>(priv)->ns_log.push_back((flags ? "-" : "+") + std::string(name) + "@" +
                                                     std::to_string(addr));
    }
    static int cb(mdcom_rpmsg_ept_t *, void *data, size_t len, uint32_t, void *priv)
    {
        auto *d = static_cast<uint8_t *>(data);
        static_cast<BSide *>(priv)->got.emplace_back(d, d + len);
        return 0;
    }
    int init(uint32_t role, const mdcom_rpmsg_bind &bind, int64_t attach_timeout = 0)
    {
        b = bind;
        b.notify = notify;
        b.ctx = this;
        if (my_efd >= 0)
            b.wait = wait;
        opts.role = role;
        opts.attach_timeout_ns = attach_timeout;
        opts.ns_cb = ns_cb;
        opts.ns_priv = this;
        size_t n = mdcom_rpmsg_state_size_bound(b.num, &opts);
        if (n == 0)
            return -1000;
        state.assign(n + 16, 0);
        void *p = state.data();
        size_t sz = state.size();
        p = std::align(16, n, p, sz);
        return mdcom_rpmsg_init_bound(&r, p, n, &b, &opts);
    }
    mdcom_rpmsg_ept_t *ept(const char *name, uint32_t src, uint32_t dst)
    {
        mdcom_rpmsg_ept_t *e = nullptr;
        EXPECT_EQ(0, mdcom_rpmsg_ept_create(r, &e, name, src, dst, cb, this, 100000000));
        return e;
    }
    mdcom_rpmsg_stats stats() const
    {
        mdcom_rpmsg_stats s{};
        mdcom_rpmsg_stats_get(r, &s);
        return s;
    }
};

struct Bound : ::testing::Test {
    Window w;
    BSide host, remote;
    mdcom_rpmsg_bind bind{};
    uint32_t num = 8;

    void make(uint32_t dfeatures = MDCOM_RPMSG_F_NS)
    {
        w.table(num, dfeatures);
        mdcom_rsc_vdev *v = nullptr;
        ASSERT_EQ(0, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
        ASSERT_EQ(0,
                  mdcom_rpmsg_bind_from_rsc(&bind, v, w.m(), MEM_DA, MEM_SIZE, MEM_DA + POOL, BUF));
    }
    void start(uint32_t dfeatures = MDCOM_RPMSG_F_NS)
    {
        make(dfeatures);
        ASSERT_EQ(0, host.init(MDCOM_RPMSG_HOST, bind));
        ASSERT_EQ(0, remote.init(MDCOM_RPMSG_REMOTE, bind, 100000000));
    }
    /* vring parts of the window */
    uint8_t *used(int i) const { return static_cast<uint8_t *>(bind.vring[i].used); }
    uint8_t *avail(int i) const { return static_cast<uint8_t *>(bind.vring[i].avail); }
    uint8_t *desc(int i) const { return static_cast<uint8_t *>(bind.vring[i].desc); }
};

TEST_F(Bound, ResourceTableFound)
{
    w.table(8, 1);
    mdcom_rsc_vdev *v = nullptr;
    ASSERT_EQ(0, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
    EXPECT_EQ(reinterpret_cast<uint8_t *>(v), w.vdev_raw());
    EXPECT_EQ(2u, v->num_of_vrings);
    EXPECT_EQ(MEM_DA + V1, v->vring[1].da);
    /* truncated: the vrings do not fit */
    EXPECT_EQ(-EINVAL, mdcom_rsc_find_rpmsg(w.m(), w.table_size() - 4, &v));
    /* an offset past the end */
    rpt::wr32(w.m() + 16, 0x100000);
    EXPECT_EQ(-EINVAL, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
    /* an offset inside the offset array */
    rpt::wr32(w.m() + 16, 8);
    EXPECT_EQ(-EINVAL, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
    /* an entry count that does not fit */
    w.table(8, 1);
    rpt::wr32(w.m() + 4, 1000);
    EXPECT_EQ(-EINVAL, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
    /* another version */
    w.table(8, 1);
    rpt::wr32(w.m(), 2);
    EXPECT_EQ(-EINVAL, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
    /* a vdev that is not rpmsg (virtio id 3 = console) */
    w.table(8, 1);
    rpt::wr32(w.vdev_raw(), 3);
    EXPECT_EQ(-ENOENT, mdcom_rsc_find_rpmsg(w.m(), w.table_size(), &v));
}

TEST_F(Bound, BindFromResourceTablePlacesVringsAtTheirDa)
{
    make();
    /* legacy layout of num 8, align 16: avail at 16*8, used at align_up(128+6+16, 16) */
    EXPECT_EQ(w.m() + V0, desc(0));
    EXPECT_EQ(w.m() + V0 + 128, avail(0));
    EXPECT_EQ(w.m() + V0 + 160, used(0));
    EXPECT_EQ(w.m() + V1 + 160, used(1));
    EXPECT_EQ(w.m() + POOL, static_cast<uint8_t *>(bind.pool));
    EXPECT_EQ(MEM_DA + POOL, bind.pool_da);
    EXPECT_EQ(8u, bind.num);
    mdcom_rpmsg_bind b2{};
    /* da not yet assigned */
    rpt::wr32(w.vdev_raw() + 24, MDCOM_RSC_ADDR_ANY);
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_bind_from_rsc(&b2, w.vdev(), w.m(), MEM_DA, MEM_SIZE,
                                                 MEM_DA + POOL, BUF));
    /* outside the window */
    rpt::wr32(w.vdev_raw() + 24, (uint32_t)(MEM_DA + MEM_SIZE - 8));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_bind_from_rsc(&b2, w.vdev(), w.m(), MEM_DA, MEM_SIZE,
                                                 MEM_DA + POOL, BUF));
    /* vrings of different sizes */
    w.table(8, 1);
    rpt::wr32(w.vdev_raw() + 24 + 20 + 8, 16);
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_bind_from_rsc(&b2, w.vdev(), w.m(), MEM_DA, MEM_SIZE,
                                                 MEM_DA + POOL, BUF));
    /* pool past the window */
    w.table(8, 1);
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_bind_from_rsc(&b2, w.vdev(), w.m(), MEM_DA, MEM_SIZE,
                                                 MEM_DA + MEM_SIZE - 1024, BUF));
}

TEST_F(Bound, HostWritesStatusSequenceAndNegotiatesFeatures)
{
    make(MDCOM_RPMSG_F_NS | 0x100u);
    ASSERT_EQ(0, host.init(MDCOM_RPMSG_HOST, bind));
    EXPECT_EQ(0x0Fu, w.vdev()->status);
    EXPECT_EQ(MDCOM_RPMSG_F_NS, w.vdev()->gfeatures); /* unknown bit 8 not accepted */
    /* host RX buffers posted in vring 0 at the pool's device addresses */
    EXPECT_EQ(num, rpt::rd16(avail(0) + 2));
    EXPECT_EQ(MEM_DA + POOL + 3 * BUF, *reinterpret_cast<uint64_t *>(desc(0) + 16 * 3));
    EXPECT_EQ(BUF, rpt::rd32(desc(0) + 16 * 3 + 8));
    ASSERT_EQ(0, mdcom_rpmsg_term(host.r));
    host.r = nullptr;
    EXPECT_EQ(0u, w.vdev()->status); /* reset */
    make(0);
    ASSERT_EQ(0, host.init(MDCOM_RPMSG_HOST, bind));
    EXPECT_EQ(0u, w.vdev()->gfeatures);
}

TEST_F(Bound, RemoteAcceptsDriverOkAloneAndSeesReset)
{
    make();
    ASSERT_EQ(0, host.init(MDCOM_RPMSG_HOST, bind));
    /* what OpenAMP's host writes: DRIVER_OK only */
    w.vdev()->status = 4;
    ASSERT_EQ(0, remote.init(MDCOM_RPMSG_REMOTE, bind, 0));
    EXPECT_EQ(0, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    w.vdev()->status = 0; /* the host resets the device */
    EXPECT_EQ(-ESHUTDOWN, mdcom_rpmsg_poll(remote.r, 1000000));
    mdcom_rpmsg_term(remote.r);
    remote.r = nullptr;
    /* not started: times out; FAILED: refused */
    EXPECT_EQ(-ETIMEDOUT, remote.init(MDCOM_RPMSG_REMOTE, bind, 5000000));
    w.vdev()->status = 0x80 | 0x07;
    EXPECT_EQ(-ECONNREFUSED, remote.init(MDCOM_RPMSG_REMOTE, bind, 5000000));
}

TEST_F(Bound, EchoAndUsedLengthOfConsumedBuffers)
{
    start();
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 1024, 1025);
    mdcom_rpmsg_ept_t *r = remote.ept(nullptr, 1025, 1024);
    std::mt19937 rng(7);
    for (uint32_t i = 0; i < 500; i++) {
        size_t len = 1 + rng() % 496;
        std::vector<uint8_t> p(len);
        for (auto &c : p)
            c = (uint8_t)rng();
        ASSERT_EQ(0, mdcom_rpmsg_trysend(h, p.data(), len));
        uint16_t pos = (uint16_t)i; /* the remote returns buffers in order */
        ASSERT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
        ASSERT_EQ(p, remote.got.back());
        /* used.len of the consumed host TX buffer = its descriptor length */
        uint32_t id = rpt::rd32(used(1) + 4 + 8 * (pos % num));
        uint32_t ulen = rpt::rd32(used(1) + 8 + 8 * (pos % num));
        ASSERT_LT(id, num);
        ASSERT_EQ(rpt::rd32(desc(1) + 16 * id + 8), ulen);
        ASSERT_EQ(16 + len, ulen);
        ASSERT_EQ(0, mdcom_rpmsg_trysend(r, p.data(), len));
        ASSERT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
        ASSERT_EQ(p, host.got.back());
        /* the host's RX buffer comes back with the bytes written */
        ASSERT_EQ(16 + len, rpt::rd32(used(0) + 8 + 8 * (pos % num)));
    }
}

TEST_F(Bound, NotificationsFollowThePeersRingFlags)
{
    start();
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 1024, 1025);
    mdcom_rpmsg_ept_t *r = remote.ept(nullptr, 1025, 1024);
    uint32_t x = 1;
    /* an awake remote keeps VRING_USED_F_NO_NOTIFY set: no kick */
    EXPECT_EQ(1u, rpt::rd16(used(1)));
    uint32_t before = host.notified[1];
    ASSERT_EQ(0, mdcom_rpmsg_trysend(h, &x, 4));
    EXPECT_EQ(before, host.notified[1].load());
    /* a peer that wants interrupts (flags 0, as OpenAMP by default) is kicked */
    rpt::wr16(used(1), 0);
    ASSERT_EQ(0, mdcom_rpmsg_trysend(h, &x, 4));
    EXPECT_EQ(before + 1, host.notified[1].load());
    /* the other direction: VRING_AVAIL_F_NO_INTERRUPT of vring 0 */
    EXPECT_EQ(1u, rpt::rd16(avail(0)));
    before = remote.notified[0];
    ASSERT_EQ(0, mdcom_rpmsg_trysend(r, &x, 4));
    EXPECT_EQ(before, remote.notified[0].load());
    rpt::wr16(avail(0), 0);
    ASSERT_EQ(0, mdcom_rpmsg_trysend(r, &x, 4));
    EXPECT_EQ(before + 1, remote.notified[0].load());
    /* returning the host's TX buffers kicks vring 1's driver when it asks */
    rpt::wr16(avail(1), 0);
    before = remote.notified[1];
    ASSERT_EQ(2, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(before + 1, remote.notified[1].load());
}

TEST_F(Bound, WithoutNameServiceFeatureNothingIsAnnounced)
{
    start(0);
    mdcom_rpmsg_ept_t *h = host.ept("svc", MDCOM_RPMSG_ADDR_ANY, MDCOM_RPMSG_ADDR_ANY);
    ASSERT_NE(nullptr, h);
    EXPECT_EQ(0, mdcom_rpmsg_poll(remote.r, MDCOM_POLL)); /* no announcement sent */
    /* a message to 53 is not a name service message: dropped as unknown */
    uint8_t junk[40] = {'s', 'v', 'c'};
    ASSERT_EQ(0, mdcom_rpmsg_trysendto(h, junk, sizeof(junk), MDCOM_RPMSG_NS_ADDR));
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_TRUE(remote.ns_log.empty());
    EXPECT_EQ(1u, remote.stats().unknown_dst);
}

TEST_F(Bound, WaitServiceSkipsMessagesForUnknownAddresses)
{
    start();
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, 1024, 1025);
    uint32_t x = 5;
    ASSERT_EQ(0, mdcom_rpmsg_trysendto(h, &x, 4, 4444)); /* nobody there */
    ASSERT_EQ(0, mdcom_rpmsg_trysendto(h, &x, 0, 4445)); /* zero length, nobody */
    mdcom_rpmsg_ept_t *s = host.ept("svc", MDCOM_RPMSG_ADDR_ANY, MDCOM_RPMSG_ADDR_ANY);
    ASSERT_NE(nullptr, s);
    uint32_t addr = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(remote.r, "svc", &addr, 100000000));
    EXPECT_EQ(mdcom_rpmsg_ept_addr(s), addr);
    EXPECT_EQ(2u, remote.stats().unknown_dst);
    /* destroy of a name never announced: noted, harmless */
    uint8_t m[40] = {'n', 'o', 'n', 'e'};
    rpt::wr32(m + 32, 3000);
    rpt::wr32(m + 36, MDCOM_RPMSG_NS_DESTROY);
    ASSERT_EQ(0, mdcom_rpmsg_trysendto(h, m, 40, MDCOM_RPMSG_NS_ADDR));
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(0u, remote.stats().bad_ns);
}

/* Two threads, both sleeping on eventfds (no spinning): every wakeup must
 * come from a notification the flags asked for, or the echo stalls. */
TEST_F(Bound, InterruptDrivenEchoBetweenThreads)
{
    host.my_efd = eventfd(0, EFD_NONBLOCK);
    remote.my_efd = eventfd(0, EFD_NONBLOCK);
    host.peer_efd = remote.my_efd;
    remote.peer_efd = host.my_efd;
    host.opts.spin_ns = MDCOM_NO_SPIN;
    remote.opts.spin_ns = MDCOM_NO_SPIN;
    num = 16;
    make();
    ASSERT_EQ(0, host.init(MDCOM_RPMSG_HOST, bind));
    constexpr uint32_t ROUNDS = 3000;
    std::atomic<int> remote_rc{0};
    std::thread t([&] {
        if (remote.init(MDCOM_RPMSG_REMOTE, bind, 2000000000LL) != 0) {
            remote_rc = -1;
            return;
        }
        mdcom_rpmsg_ept_t *e = nullptr;
        if (mdcom_rpmsg_ept_create(remote.r, &e, "echo", MDCOM_RPMSG_ADDR_ANY, MDCOM_RPMSG_ADDR_ANY,
                                   BSide::cb, &remote, 1000000000LL) != 0) {
            remote_rc = -2;
            return;
        }
        size_t done = 0;
        while (done < ROUNDS) {
            int rc = mdcom_rpmsg_poll(remote.r, 2000000000LL);
            if (rc <= 0) {
                remote_rc = rc == 0 ? -ETIMEDOUT : rc;
                return;
            }
            for (; done < remote.got.size(); done++)
                if (mdcom_rpmsg_send(e, remote.got[done].data(), remote.got[done].size(),
                                     2000000000LL) != 0) {
                    remote_rc = -3;
                    return;
                }
        }
    });
    uint32_t addr = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(host.r, "echo", &addr, 2000000000LL));
    mdcom_rpmsg_ept_t *h = host.ept(nullptr, MDCOM_RPMSG_ADDR_ANY, addr);
    std::mt19937 rng(11);
    for (uint32_t i = 0; i < ROUNDS; i++) {
        size_t len = 1 + rng() % 496;
        std::vector<uint8_t> p(len, (uint8_t)i);
        ASSERT_EQ(0, mdcom_rpmsg_send(h, p.data(), len, 2000000000LL));
        while (host.got.size() <= i)
            ASSERT_LT(0, mdcom_rpmsg_poll(host.r, 2000000000LL)) << "stalled at " << i;
        ASSERT_EQ(p, host.got[i]);
    }
    t.join();
    EXPECT_EQ(0, remote_rc.load());
    EXPECT_GT(host.notified[1].load() + remote.notified[0].load(), 0u);
    close(host.my_efd);
    close(remote.my_efd);
}

} // namespace
