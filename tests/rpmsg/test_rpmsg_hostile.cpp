/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile peers: the test plays one side by writing the vrings and buffers
 * itself (at offsets from the specification's layout), the library plays the
 * other. Every violation must give an error code and a counter, never an
 * out-of-bounds access (ASan/UBSan builds) or a hang.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "rp_test.h"
#include "support/whitebox.h"

using rpt::Area;
using rpt::end_pair;
using rpt::Side;

namespace {

constexpr uint32_t N = 4, BS = 64, AL = 16;
/* descriptor flags (virtio 1.x 2.7.5) */
constexpr uint16_t kDescNext = 1, kDescWrite = 2, kDescIndirect = 4;

/* One vring of the area, with byte access to its parts. */
struct Ring {
    uint8_t *base = nullptr;
    ut_vring_layout l{};
    uint8_t *desc(uint32_t i) const { return base + 16u * i; }
    uint8_t *avail_idx() const { return base + l.avail_off + 2; }
    uint8_t *avail_slot(uint32_t pos) const { return base + l.avail_off + 4 + 2u * (pos % l.num); }
    uint8_t *used_idx() const { return base + l.used_off + 2; }
    uint8_t *used_slot(uint32_t pos) const { return base + l.used_off + 4 + 8u * (pos % l.num); }
    /* as a driver: post desc i (addr, len, flags) at avail position pos */
    void post(uint32_t pos, uint16_t head, uint64_t addr, uint32_t len, uint16_t flags) const
    {
        if (head < l.num) {
            rpt::wr64(desc(head), addr);
            rpt::wr32(desc(head) + 8, len);
            rpt::wr16(desc(head) + 12, flags);
        }
        rpt::wr16(avail_slot(pos), head);
        rpt::wr16(avail_idx(), (uint16_t)(pos + 1));
    }
    /* as a device: return id with len at used position pos */
    void ret(uint32_t pos, uint32_t id, uint32_t len) const
    {
        rpt::wr32(used_slot(pos), id);
        rpt::wr32(used_slot(pos) + 4, len);
        rpt::wr16(used_idx(), (uint16_t)(pos + 1));
    }
};

struct Hostile : ::testing::Test {
    mdcom_rpmsg_geometry geo{N, BS, AL};
    mdcom_rpmsg_layout lay{};
    Area *area = nullptr;
    Side host, remote;
    Ring v0, v1;

    void SetUp() override
    {
        ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&geo, &lay));
        area = new Area(lay.size);
        host.prepare(MDCOM_RPMSG_HOST, geo);
        ASSERT_EQ(0, host.init(area->p, area->size));
        v0.base = area->at(lay.vring_off[0]);
        v1.base = area->at(lay.vring_off[1]);
        ASSERT_EQ(0, ut_vring_layout_compute(N, AL, &v0.l));
        v1.l = v0.l;
    }
    void TearDown() override { end_pair(host, remote, area); }

    void start_remote()
    {
        remote.prepare(MDCOM_RPMSG_REMOTE, geo);
        ASSERT_EQ(0, remote.init(area->p, area->size));
    }

    uint8_t *buf(uint32_t b) const { return area->at(lay.pool_off + b * BS); }
    uint64_t buf_addr(uint32_t b) const { return (uint64_t)b * BS; }
    /* write a message into buffer b */
    void msg(uint32_t b, uint32_t src, uint32_t dst, const void *p, uint16_t len) const
    {
        rpt::wr32(buf(b), src);
        rpt::wr32(buf(b) + 4, dst);
        rpt::wr32(buf(b) + 8, 0);
        rpt::wr16(buf(b) + 12, len);
        rpt::wr16(buf(b) + 14, 0);
        memcpy(buf(b) + 16, p, len);
    }
    /* (the hostile remote) a name-service message (name, addr, flags; its
     * first len bytes) from 2000 to 53 in buffer b, returned at used
     * position pos; what the host's poll then returns */
    int ns_in(uint32_t b, uint32_t pos, const char *name32, uint32_t addr, uint32_t flags,
              uint16_t len)
    {
        std::vector<uint8_t> m = ns_msg(name32, addr, flags);
        msg(b, 2000, 53, m.data(), len);
        v0.ret(pos, b, 16u + len);
        return mdcom_rpmsg_poll(host.r, MDCOM_POLL);
    }
    static std::vector<uint8_t> ns_msg(const char *name32, uint32_t addr, uint32_t flags)
    {
        std::vector<uint8_t> m(40, 0);
        memcpy(m.data(), name32, strnlen(name32, 32));
        memcpy(m.data() + 32, &addr, 4);
        memcpy(m.data() + 36, &flags, 4);
        return m;
    }
};

} // namespace

/* ------------------------------------------------------------------ */
/* the test is a hostile remote; the library is the host                 */
/* ------------------------------------------------------------------ */
TEST_F(Hostile, HostUsedIdOutOfRange)
{
    mdcom_rpmsg_ept_t *e = host.ept(nullptr, 5000);
    ASSERT_NE(nullptr, e);
    v0.ret(0, 99, 20);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    EXPECT_EQ(1u, host.stats().bad_head);
    EXPECT_EQ(0, mdcom_rpmsg_poll(host.r, MDCOM_POLL)); /* the bad entry was consumed */
    /* an honest entry afterwards is delivered */
    msg(1, 77, 5000, "ok", 2);
    v0.ret(1, 1, 18);
    EXPECT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    ASSERT_EQ(1u, host.got.size());
    EXPECT_EQ(77u, host.got[0].src);
}

TEST_F(Hostile, HostUsedIdxJump)
{
    host.ept(nullptr, 5000);
    rpt::wr16(v0.used_idx(), 1000);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    /* a blocking poll does not wait on (or spin over) a corrupted ring */
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(host.r, 50 * 1000000LL));
    EXPECT_EQ(4u, host.stats().bad_idx);
    EXPECT_EQ(0u, host.stats().rx_msgs);
}

TEST_F(Hostile, HostUsedLengthBad)
{
    host.ept(nullptr, 5000);
    uint16_t avail_before = rpt::rd16(v0.avail_idx());
    msg(0, 1, 5000, "x", 1);
    v0.ret(0, 0, BS + 1); /* longer than the buffer */
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    v0.ret(1, 1, 15); /* shorter than the header */
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    msg(2, 1, 5000, "abc", 3);
    rpt::wr16(buf(2) + 12, 40); /* header says 40, the used length says 19 */
    v0.ret(2, 2, 19);
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    EXPECT_EQ(3u, host.stats().bad_len);
    EXPECT_EQ(0u, host.got.size());
    /* each bad buffer was re-posted to the remote */
    EXPECT_EQ((uint16_t)(avail_before + 3), rpt::rd16(v0.avail_idx()));
}

namespace {
int hold_all(mdcom_rpmsg_ept_t *e, void *data, size_t, uint32_t, void *priv)
{
    static_cast<std::vector<void *> *>(priv)->push_back(data);
    return mdcom_rpmsg_hold_rx_buffer(e, data);
}
} // namespace

TEST_F(Hostile, HostUsedIdReturnedTwice)
{
    std::vector<void *> held;
    mdcom_rpmsg_ept_t *e = nullptr;
    ASSERT_EQ(0, mdcom_rpmsg_ept_create(host.r, &e, nullptr, 5000, MDCOM_RPMSG_ADDR_ANY, hold_all,
                                        &held, 0));
    msg(0, 1, 5000, "a", 1);
    v0.ret(0, 0, 17);
    EXPECT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    ASSERT_EQ(1u, held.size());
    /* buffer 0 is held by the application: the remote returns it again */
    msg(0, 1, 5000, "b", 1);
    v0.ret(1, 0, 17);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    EXPECT_EQ(1u, host.stats().bad_head);
    EXPECT_EQ(1u, held.size());
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(e, held[0]));
}

TEST_F(Hostile, HostTxUsedIdBad)
{
    mdcom_rpmsg_ept_t *e = host.ept(nullptr, 5000, 6000);
    uint32_t x = 0;
    for (uint32_t i = 0; i < N; i++)
        ASSERT_EQ(0, mdcom_rpmsg_trysend(e, &x, 4));
    v1.ret(0, 7, 0); /* a head that does not exist */
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_trysend(e, &x, 4));
    v1.ret(1, 2, 0); /* honest */
    EXPECT_EQ(0, mdcom_rpmsg_trysend(e, &x, 4));
    v1.ret(2, 2, 0); /* head 2 again, after the host re-used it: legal */
    v1.ret(3, 2, 0); /* and once more: it is not outstanding any more */
    EXPECT_EQ(0, mdcom_rpmsg_trysend(e, &x, 4)); /* with the one good head */
    EXPECT_EQ(2u, host.stats().bad_head);
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_trysend(e, &x, 4));
    rpt::wr16(v1.used_idx(), 60000); /* jump */
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_trysend(e, &x, 4));
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_send(e, &x, 4, 20 * 1000000LL));
    EXPECT_EQ(2u, host.stats().bad_idx);
}

TEST_F(Hostile, HostNameServiceGarbage)
{
    /* 32 bytes of name without a NUL */
    EXPECT_EQ(1, ns_in(0, 0, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 2000, 0, 40));
    /* wrong length */
    EXPECT_EQ(1, ns_in(1, 1, "svc", 2000, 0, 39));
    /* unknown flags, address ANY, empty name */
    EXPECT_EQ(1, ns_in(2, 2, "svc", 2000, 5, 40));
    EXPECT_EQ(1, ns_in(3, 3, "svc", 0xffffffffu, 0, 40));
    EXPECT_EQ(1, ns_in(0, 4, "", 2000, 0, 40));
    EXPECT_EQ(5u, host.stats().bad_ns);
    EXPECT_TRUE(host.ns_log.empty());
    uint32_t a;
    EXPECT_EQ(-ETIMEDOUT, mdcom_rpmsg_wait_service(host.r, "svc", &a, MDCOM_POLL));
    /* a proper one is still accepted */
    EXPECT_EQ(1, ns_in(1, 5, "svc", 2000, 0, 40));
    EXPECT_EQ(0, mdcom_rpmsg_wait_service(host.r, "svc", &a, MDCOM_POLL));
    EXPECT_EQ(2000u, a);
}

TEST_F(Hostile, HostUnknownDestination)
{
    msg(0, 2000, 4444, "zz", 2);
    v0.ret(0, 0, 18);
    EXPECT_EQ(1, mdcom_rpmsg_poll(host.r, MDCOM_POLL));
    EXPECT_EQ(1u, host.stats().unknown_dst);
}

/* ------------------------------------------------------------------ */
/* the test is a hostile host; the library is the remote                 */
/* ------------------------------------------------------------------ */
TEST_F(Hostile, RemoteAvailHeadOutOfRange)
{
    start_remote();
    remote.ept(nullptr, 6000);
    v1.post(0, 99, 0, 0, 0);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(1u, remote.stats().bad_head);
    msg(N + 1, 5000, 6000, "ok", 2);
    v1.post(1, 1, buf_addr(N + 1), 18, 0);
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    ASSERT_EQ(1u, remote.got.size());
}

TEST_F(Hostile, RemoteAvailIdxJump)
{
    start_remote();
    rpt::wr16(v1.avail_idx(), N + 1);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, 50 * 1000000LL));
    EXPECT_EQ(2u, remote.stats().bad_idx);
    /* a jump of exactly N is legal (the whole ring) */
    for (uint32_t i = 0; i < N; i++) {
        msg(N + i, 5000, 6000, "q", 1);
        v1.post(i, (uint16_t)i, buf_addr(N + i), 17, 0);
    }
    remote.ept(nullptr, 6000);
    EXPECT_EQ((int)N, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
}

TEST_F(Hostile, RemoteDescriptorAddressOutsidePool)
{
    start_remote();
    remote.ept(nullptr, 6000);
    struct {
        uint64_t addr;
        const char *why;
    } bad[] = {
        {lay.pool_size, "just past the pool"},
        {lay.pool_size + 4096, "far past the pool"},
        {0xfffffffffffffff0ull, "wraps around"},
        {buf_addr(N) + 8, "inside a buffer, not at its start"},
        {buf_addr(0), "a host RX buffer"},
        {buf_addr(2 * N - 1) + BS - 16, "the last 16 bytes of the pool"},
    };
    uint32_t pos = 0;
    for (const auto &c : bad) {
        SCOPED_TRACE(c.why);
        msg(N, 5000, 6000, "x", 1);
        v1.post(pos, 0, c.addr, 17, 0);
        EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
        /* the descriptor came back in the used ring, with nothing written */
        EXPECT_EQ((uint16_t)(pos + 1), rpt::rd16(v1.used_idx()));
        EXPECT_EQ(0u, rpt::rd32(v1.used_slot(pos)));
        EXPECT_EQ(0u, rpt::rd32(v1.used_slot(pos) + 4));
        pos++;
    }
    EXPECT_EQ(6u, remote.stats().bad_addr);
    EXPECT_TRUE(remote.got.empty());
}

TEST_F(Hostile, RemoteDescriptorLengthAndFlags)
{
    start_remote();
    remote.ept(nullptr, 6000);
    msg(N, 5000, 6000, "x", 1);
    v1.post(0, 0, buf_addr(N), BS + 16, 0);
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    v1.post(1, 0, buf_addr(N), 8, 0);
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    rpt::wr16(buf(N) + 12, 49); /* header longer than the descriptor (16 + 49 > 64) */
    v1.post(2, 0, buf_addr(N), BS, 0);
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(3u, remote.stats().bad_len);
    msg(N, 5000, 6000, "x", 1);
    v1.post(3, 0, buf_addr(N), 17, kDescNext);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    v1.post(4, 0, buf_addr(N), 17, kDescIndirect);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(2u, remote.stats().bad_desc);
    EXPECT_TRUE(remote.got.empty());
    v1.post(5, 0, buf_addr(N), 17, 0);
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    /* device-writable: RPMsg-Lite's master marks every TX buffer so; the
     * remote only reads it, so it is delivered */
    msg(N, 5000, 6000, "y", 1);
    v1.post(6, 0, buf_addr(N), 17, kDescWrite);
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(2u, remote.stats().bad_desc);
    EXPECT_EQ(2u, remote.got.size());
}

TEST_F(Hostile, RemoteAliasedBuffersAndHeads)
{
    start_remote();
    std::vector<void *> held;
    mdcom_rpmsg_ept_t *e = nullptr;
    ASSERT_EQ(0, mdcom_rpmsg_ept_create(remote.r, &e, nullptr, 6000, MDCOM_RPMSG_ADDR_ANY, hold_all,
                                        &held, 0));
    msg(N, 5000, 6000, "a", 1);
    v1.post(0, 0, buf_addr(N), 17, 0);
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    ASSERT_EQ(1u, held.size());
    /* another head naming the held buffer */
    v1.post(1, 1, buf_addr(N), 17, 0);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(1u, remote.stats().bad_addr);
    /* the held head itself, posted again */
    v1.post(2, 0, buf_addr(N + 1), 17, 0);
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(1u, remote.stats().bad_head);
    EXPECT_EQ(1u, held.size());
    EXPECT_EQ('a', *static_cast<char *>(held[0]));
    EXPECT_EQ(0, mdcom_rpmsg_release_rx_buffer(e, held[0]));
}

TEST_F(Hostile, RemoteNameServiceNameWithoutNul)
{
    start_remote();
    auto m = ns_msg("BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", 1500, 0);
    msg(N, 1500, 53, m.data(), 40);
    v1.post(0, 0, buf_addr(N), 56, 0);
    EXPECT_EQ(1, mdcom_rpmsg_poll(remote.r, MDCOM_POLL));
    EXPECT_EQ(1u, remote.stats().bad_ns);
    EXPECT_TRUE(remote.ns_log.empty());
}

TEST_F(Hostile, RemoteTxDescriptorsBad)
{
    /* the host posted its 4 RX buffers in vring 0; corrupt three of them
     * before the remote takes them for sending */
    rpt::wr64(v0.desc(0), lay.pool_size + 64); /* outside the pool */
    rpt::wr16(v0.desc(1) + 12, 0);             /* not device-writable */
    rpt::wr32(v0.desc(2) + 8, BS / 2);         /* not a whole buffer */
    start_remote();
    mdcom_rpmsg_ept_t *e = remote.ept(nullptr, 6000, 5000);
    host.ept(nullptr, 5000);
    uint32_t x = 1;
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_trysend(e, &x, 4));
    EXPECT_EQ(-EPROTO, mdcom_rpmsg_trysend(e, &x, 4));
    EXPECT_EQ(-EBADMSG, mdcom_rpmsg_trysend(e, &x, 4));
    EXPECT_EQ(0, mdcom_rpmsg_trysend(e, &x, 4));
    mdcom_rpmsg_stats st = remote.stats();
    EXPECT_EQ(1u, st.bad_addr);
    EXPECT_EQ(1u, st.bad_desc);
    EXPECT_EQ(1u, st.bad_len);
    /* the host got the three bad ones back with length 0 (counted) and the
     * message; it re-posts all four */
    int n = 0, rc;
    for (int i = 0; i < 4; i++) {
        rc = mdcom_rpmsg_poll(host.r, MDCOM_POLL);
        if (rc > 0)
            n += rc;
        else
            EXPECT_EQ(-EBADMSG, rc);
    }
    EXPECT_EQ(1, n);
    EXPECT_EQ(3u, host.stats().bad_len);
}

/* ------------------------------------------------------------------ */
/* random scribbling over the rings, the control block and the buffers   */
/* ------------------------------------------------------------------ */
TEST_F(Hostile, RandomScribbleNeverEscapes)
{
    start_remote();
    mdcom_rpmsg_ept_t *he = host.ept("h", 5000, 6000);
    mdcom_rpmsg_ept_t *re = remote.ept("r", 6000, 5000);
    ASSERT_TRUE(he && re);
    std::mt19937 rng(12345);
    const uint32_t ring_bytes = v0.l.size;
    uint8_t *ctl = area->at(0);
    for (int iter = 0; iter < 3000; iter++) {
        /* a few random bytes somewhere in the vrings or the pool */
        for (int k = 0; k < 3; k++) {
            uint32_t what = rng() % 3;
            uint8_t *base = what == 0 ? v0.base : what == 1 ? v1.base : area->at(lay.pool_off);
            uint32_t span = what == 2 ? lay.pool_size : ring_bytes;
            base[rng() % span] = (uint8_t)rng();
        }
        if (iter % 500 == 0)
            ctl[64 + rng() % 8] = (uint8_t)rng(); /* notify/waiter words */
        uint32_t x[16] = {(uint32_t)iter};
        switch (rng() % 6) {
        case 0:
            (void)mdcom_rpmsg_trysend(he, x, rng() % 49);
            break;
        case 1:
            (void)mdcom_rpmsg_trysend(re, x, rng() % 49);
            break;
        case 2:
            (void)mdcom_rpmsg_poll(host.r, MDCOM_POLL);
            break;
        case 3:
            (void)mdcom_rpmsg_poll(remote.r, MDCOM_POLL);
            break;
        case 4:
            (void)mdcom_rpmsg_send(he, x, 4, 100000);
            break; /* 0.1 ms */
        case 5: {
            void *b = nullptr;
            if (mdcom_rpmsg_get_tx_buffer(re, &b, nullptr, MDCOM_POLL) == 0)
                (void)mdcom_rpmsg_send_nocopy(re, b, rng() % 49);
            break;
        }
        }
    }
    mdcom_rpmsg_stats hs = host.stats(), rs = remote.stats();
    uint64_t errs = (uint64_t)hs.bad_idx + hs.bad_head + hs.bad_desc + hs.bad_addr + hs.bad_len +
                    hs.bad_ns + hs.unknown_dst + rs.bad_idx + rs.bad_head + rs.bad_desc +
                    rs.bad_addr + rs.bad_len + rs.bad_ns + rs.unknown_dst;
    EXPECT_GT(errs, 0u); /* the scribbling was noticed */
}
