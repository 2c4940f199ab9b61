/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interop with real RPMsg peers, built once per peer (interop.h):
 * OpenAMP (oa_peer.c, built by openamp.cmake) and RPMsg-Lite (rl_peer.c,
 * rpmsg_lite.cmake), both from ../shared/third_party. Two processes over one
 * shared memory file: this process is the mdcom side, through the public API
 * only (a resource table binding for OpenAMP: mdcom_rsc_find_rpmsg +
 * mdcom_rpmsg_bind_from_rsc; RPMsg-Lite's fixed layout:
 * mdcom_rpmsg_bind_legacy_vrings; then mdcom_rpmsg_init_bound); a forked
 * child runs the peer. Doorbell: one eventfd per direction plus a
 * pending-vring word each, inherited across the fork.
 *
 * Each case: the mdcom side finds the peer's echo service by name, announces
 * its own "md-svc", runs the echoes (random lengths up to the payload size,
 * exact compare and a CRC-32 both sides keep), a burst (TX ring full, traffic
 * both ways, zero copy and held RX buffers on the mdcom side), the malformed
 * input the peer's API allows (zero length, unknown destination, name
 * service destroy of an unknown name, four bad name service messages,
 * reserved and ANY source addresses), same-name binding, a second service
 * announced and destroyed by the peer, md-svc destroyed, and the peer's
 * report (count, CRC, lost wakeups, errors, name service log).
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interop.h"
#include "mdcom/rpmsg.h"

#ifndef MDCOM_INTEROP_SKIP

namespace {

struct Peer {
    int efd_mine = -1, efd_peer = -1;
    uint32_t *irq_peer = nullptr; /* the peer's pending-vring word */
    uint32_t wait_timeouts = 0;
    static void notify(void *ctx, uint32_t vq)
    {
        auto *p = static_cast<Peer *>(ctx);
        uint64_t one = 1;
        __atomic_fetch_or(p->irq_peer, 1u << (vq & 1u), __ATOMIC_SEQ_CST);
        if (write(p->efd_peer, &one, 8) != 8)
            abort();
    }
    static int wait(void *ctx, int64_t timeout_ns)
    {
        auto *p = static_cast<Peer *>(ctx);
        struct pollfd f = {p->efd_mine, POLLIN, 0};
        int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
        int n = poll(&f, 1, ms);
        if (n > 0) {
            uint64_t v;
            if (read(p->efd_mine, &v, 8) != 8)
                abort();
        } else if (n == 0) {
            p->wait_timeouts++;
        } else if (errno == EINTR) {
            return -EINTR;
        }
        return 0;
    }
};

/* Polling: no doorbell; the spinning side yields its core (the test machine
 * shares two cores between both processes and other jobs). */
int poll_yield(void *, int64_t)
{
    sched_yield();
    return 0;
}

struct Held {
    mdcom_rpmsg_ept_t *ept;
    void *data;
    size_t len;
    uint32_t crc;
};

struct Got {
    std::vector<std::vector<uint8_t>> msgs;
    std::vector<uint32_t> srcs;
    std::vector<std::string> ns;
    bool hold = false; /* keep every 4th RX buffer past its callback */
    std::vector<Held> held;
};

int on_msg(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    auto *d = static_cast<uint8_t *>(data);
    auto *g = static_cast<Got *>(priv);
    g->msgs.emplace_back(d, d + len);
    g->srcs.push_back(src);
    if (g->hold && g->msgs.size() % 4 == 0 && g->held.size() < 8 &&
        mdcom_rpmsg_hold_rx_buffer(ept, data) == 0)
        g->held.push_back(Held{ept, data, len, mdcom_crc32(0, d, len)});
    return 0;
}

/* Give the held RX buffers back, after checking the peer left them alone. */
::testing::AssertionResult release_held(Got &g)
{
    for (const Held &h : g.held) {
        if (mdcom_crc32(0, h.data, h.len) != h.crc)
            return ::testing::AssertionFailure() << "a held RX buffer changed";
        int rc = mdcom_rpmsg_release_rx_buffer(h.ept, h.data);
        if (rc != 0)
            return ::testing::AssertionFailure() << "release_rx_buffer " << rc;
    }
    g.held.clear();
    return ::testing::AssertionSuccess();
}

void on_ns(mdcom_rpmsg_t *, const char *name, uint32_t addr, uint32_t flags, void *priv)
{
    (void)addr;
    static_cast<Got *>(priv)->ns.push_back((flags ? "-" : "+") + std::string(name));
}

struct Case {
    uint32_t mdcom_role; /* MDCOM_RPMSG_HOST or _REMOTE */
    bool polling;
    uint32_t echoes;
};

class Interop : public ::testing::TestWithParam<Case> {};

constexpr int64_t SEC = 1000000000LL;

/* Poll until pred holds (at most 10 s). */
template <class F>
::testing::AssertionResult poll_until(mdcom_rpmsg_t *r, F pred)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
        int rc = mdcom_rpmsg_poll(r, SEC / 10);
        if (rc < 0)
            return ::testing::AssertionFailure() << "poll " << rc;
        if (std::chrono::steady_clock::now() > end)
            return ::testing::AssertionFailure() << "timed out";
    }
    return ::testing::AssertionSuccess();
}

TEST_P(Interop, EchoNameServiceMalformed)
{
    const Case c = GetParam();
    char path[] = "/dev/shm/mdcom-interop-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, ftruncate(fd, IOP_SIZE));
    auto *mem =
        static_cast<uint8_t *>(mmap(nullptr, IOP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    ASSERT_NE(MAP_FAILED, mem);
#if IOP_RSC
    iop_write_table(mem); /* the "firmware image": a resource table */
#endif

    /* the two pending-vring words (the RPMsg-Lite platform's interrupt
     * status), shared across the fork */
    auto *irq = static_cast<uint32_t *>(
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, irq);
    uint32_t *irq_host = &irq[0], *irq_remote = &irq[16];
    int to_host = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int to_remote = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_GE(to_host, 0);
    ASSERT_GE(to_remote, 0);
    bool md_host = c.mdcom_role == MDCOM_RPMSG_HOST;
    Peer me;
    me.efd_mine = md_host ? to_host : to_remote;
    me.efd_peer = md_host ? to_remote : to_host;
    me.irq_peer = md_host ? irq_remote : irq_host;

    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no peer behind */
        munmap(mem, IOP_SIZE);
        iop_peer_args a{};
        a.role = md_host ? 2 : 1;
        a.path = path;
        a.efd_mine = md_host ? to_remote : to_host;
        a.efd_peer = md_host ? to_host : to_remote;
        a.irq_mine = md_host ? irq_remote : irq_host;
        a.irq_peer = md_host ? irq_host : irq_remote;
        a.polling = c.polling;
        _exit(iop_peer_run(&a));
    }

    mdcom_rpmsg_bind b{};
#if IOP_RSC
    /* the mdcom side, through the resource table */
    mdcom_rsc_vdev *vdev = nullptr;
    ASSERT_EQ(0, mdcom_rsc_find_rpmsg(mem, 0x1000, &vdev));
    ASSERT_EQ(0, mdcom_rpmsg_bind_from_rsc(&b, vdev, mem, IOP_MEM_DA, IOP_SIZE,
                                           IOP_MEM_DA + IOP_POOL, IOP_BUF));
#else
    /* the mdcom side, on the peer's fixed layout: no status byte, name
     * service on as both sides are built with it */
    ASSERT_EQ(0, mdcom_rpmsg_bind_legacy_vrings(&b, mem + IOP_VRING0, mem + IOP_VRING1, IOP_NUM,
                                                IOP_ALIGN));
    b.num = IOP_NUM;
    b.buf_size = IOP_BUF;
    b.pool = mem + IOP_POOL;
    b.pool_da = IOP_MEM_DA + IOP_POOL;
    b.features = MDCOM_RPMSG_F_NS;
    if (!md_host) {
        /* without a status byte a remote learns that the host formatted
         * the rings from its first notification (as RPMsg-Lite's own
         * remote does: its link comes up then) */
        struct pollfd f = {me.efd_mine, POLLIN, 0};
        ASSERT_EQ(1, poll(&f, 1, 10000)) << "the host never notified";
    }
#endif
    b.notify = Peer::notify;
    b.wait = c.polling ? poll_yield : Peer::wait;
    b.ctx = &me;
    Got got;
    mdcom_rpmsg_opts o{};
    o.role = c.mdcom_role;
    o.attach_timeout_ns = 10 * SEC;
    o.ns_cb = on_ns;
    o.ns_priv = &got;
    o.spin_ns = c.polling ? 0 : MDCOM_NO_SPIN;
    size_t ssz = mdcom_rpmsg_state_size_bound(b.num, &o);
    ASSERT_GT(ssz, 0u);
    void *state = aligned_alloc(16, (ssz + 15) & ~size_t(15));
    mdcom_rpmsg_t *r = nullptr;
    ASSERT_EQ(0, mdcom_rpmsg_init_bound(&r, state, ssz, &b, &o));

    uint32_t echo_addr = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(r, IOP_ECHO_NAME, &echo_addr, 10 * SEC));
    mdcom_rpmsg_ept_t *e = nullptr, *svc = nullptr;
    ASSERT_EQ(0, mdcom_rpmsg_ept_create(r, &e, nullptr, MDCOM_RPMSG_ADDR_ANY, echo_addr, on_msg,
                                        &got, SEC));
    ASSERT_EQ(0, mdcom_rpmsg_ept_create(r, &svc, IOP_MD_NAME, MDCOM_RPMSG_ADDR_ANY,
                                        MDCOM_RPMSG_ADDR_ANY, on_msg, &got, SEC));

    /* echoes */
    std::mt19937 rng(1234 + c.mdcom_role + (c.polling ? 10 : 0));
    uint32_t crc = 0;
    me.wait_timeouts = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < c.echoes; i++) {
        size_t len = 1 + rng() % (IOP_BUF - 16);
        std::vector<uint8_t> p(len);
        for (auto &x : p)
            x = (uint8_t)rng();
        if (len > 4 && !memcmp(p.data(), "cmd:", 4))
            p[0] = 0;
        crc = mdcom_crc32(crc, p.data(), len);
        ASSERT_EQ(0, mdcom_rpmsg_send(e, p.data(), len, 10 * SEC)) << i;
        ASSERT_TRUE(poll_until(r, [&] { return got.msgs.size() == 1; })) << "echo " << i;
        ASSERT_EQ(p, got.msgs[0]) << "echo " << i;
        got.msgs.clear();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("%u echoes in %.2f s (%.1f us per round trip), mdcom waits that timed out: %u\n",
           c.echoes, secs, secs * 1e6 / c.echoes, me.wait_timeouts);
    if (!c.polling) {
        EXPECT_EQ(0u, me.wait_timeouts) << "a notification was lost";
    }

    auto cmd = [&](const char *s) {
        std::string m = std::string("cmd:") + s;
        return mdcom_rpmsg_send(e, m.data(), m.size(), 10 * SEC);
    };

    /* Burst: the peer stalls (stops taking messages for 300 ms), mdcom
     * fills its TX ring until trysend says none is free, then keeps sending
     * with blocking sends (copy and zero copy alternating) while the peer,
     * resumed, echoes: traffic both ways at once, both TX rings under
     * pressure, every fourth RX buffer held by the mdcom side meanwhile.
     * Nothing may be lost, reordered or changed. */
    const uint32_t burst = 3 * IOP_NUM;
    std::vector<std::vector<uint8_t>> sent;
    ASSERT_EQ(0, cmd("stall"));
    got.hold = true;
    uint32_t queued = 0;
    int trc = 0;
    auto payload = [&](uint32_t k) {
        size_t len = 1 + rng() % (IOP_BUF - 16);
        std::vector<uint8_t> p(len);
        for (auto &x : p)
            x = (uint8_t)rng();
        p[0] = (uint8_t)(k | 1); /* never "cmd:" */
        crc = mdcom_crc32(crc, p.data(), len);
        sent.push_back(p);
        return p;
    };
    for (;;) {
        /* the payload is drawn only for a send that is going to happen */
        void *tb = nullptr;
        uint32_t cap = 0;
        trc = mdcom_rpmsg_get_tx_buffer(e, &tb, &cap, MDCOM_POLL);
        if (trc != 0)
            break;
        std::vector<uint8_t> p = payload(queued);
        ASSERT_LE(p.size(), cap);
        memcpy(tb, p.data(), p.size());
        ASSERT_EQ(0, mdcom_rpmsg_send_nocopy(e, tb, p.size()));
        queued++;
        ASSERT_LE(queued, IOP_NUM) << "more TX buffers than the ring has";
    }
    EXPECT_EQ(-ETIMEDOUT, trc) << "the TX ring never filled";
    printf("TX ring full after %u messages (%u buffers)\n", queued, IOP_NUM);
    for (uint32_t k = queued; k < burst; k++) {
        std::vector<uint8_t> p = payload(k);
        if (k % 2) {
            ASSERT_EQ(0, mdcom_rpmsg_send(e, p.data(), p.size(), 10 * SEC)) << k;
        } else {
            void *tb = nullptr;
            uint32_t cap = 0;
            ASSERT_EQ(0, mdcom_rpmsg_get_tx_buffer(e, &tb, &cap, 10 * SEC)) << k;
            memcpy(tb, p.data(), p.size());
            ASSERT_EQ(0, mdcom_rpmsg_send_nocopy(e, tb, p.size())) << k;
        }
        if (got.held.size() == 8) {
            ASSERT_TRUE(release_held(got));
        }
    }
    ASSERT_TRUE(poll_until(r, [&] { return got.msgs.size() == burst; }));
    got.hold = false;
    ASSERT_TRUE(release_held(got));
    ASSERT_EQ(sent.size(), got.msgs.size());
    for (size_t k = 0; k < sent.size(); k++)
        ASSERT_EQ(sent[k], got.msgs[k]) << "burst message " << k;
    got.msgs.clear();
    mdcom_rpmsg_stats st0{}, st{};
    mdcom_rpmsg_stats_get(r, &st0);
    /* zero length: delivered as an empty message */
    ASSERT_EQ(0, cmd("zero"));
    ASSERT_TRUE(poll_until(r, [&] { return got.msgs.size() == 1; }));
    EXPECT_EQ(0u, got.msgs[0].size());
    got.msgs.clear();
    /* unknown destination: counted, dropped, nothing breaks */
    ASSERT_EQ(0, cmd("unknown"));
    ASSERT_TRUE(poll_until(r, [&] {
        mdcom_rpmsg_stats_get(r, &st);
        return st.unknown_dst == st0.unknown_dst + 1;
    }));
    /* name service destroy of a name never announced */
    ASSERT_EQ(0, cmd("nsdestroy-unknown"));
    ASSERT_TRUE(poll_until(r, [&] { return !got.ns.empty() && got.ns.back() == "-ghost"; }));
    /* malformed name service messages (short, name without NUL, address
     * ANY, unknown flags): each dropped and counted, no callback */
    size_t nns = got.ns.size();
    ASSERT_EQ(0, cmd("nsbad"));
    ASSERT_TRUE(poll_until(r, [&] {
        mdcom_rpmsg_stats_get(r, &st);
        return st.bad_ns == st0.bad_ns + 4;
    }));
    EXPECT_EQ(nns, got.ns.size());
    /* reserved (7) and, where the peer's API can send it, ANY source
     * addresses: delivered as they are */
    got.msgs.clear();
    got.srcs.clear();
    ASSERT_EQ(0, cmd("oddsrc"));
    const size_t odd = IOP_RSC ? 2 : 1; /* RPMsg-Lite cannot send from ANY */
    ASSERT_TRUE(poll_until(r, [&] { return got.msgs.size() == odd; }));
    EXPECT_EQ(7u, got.srcs[0]);
    EXPECT_EQ(std::string("odd"), std::string(got.msgs[0].begin(), got.msgs[0].end()));
    if (odd == 2) {
        EXPECT_EQ(MDCOM_RPMSG_ADDR_ANY, got.srcs[1]);
        EXPECT_EQ(std::string("any"), std::string(got.msgs[1].begin(), got.msgs[1].end()));
    }
    got.msgs.clear();
    got.srcs.clear();
    /* same-name binding: the peer opens an endpoint named like mdcom's
     * announced md-svc and announces it; mdcom's md-svc binds to it */
    ASSERT_EQ(MDCOM_RPMSG_ADDR_ANY, mdcom_rpmsg_ept_dst(svc));
    ASSERT_EQ(0, cmd("bind"));
    ASSERT_TRUE(poll_until(r, [&] { return mdcom_rpmsg_ept_dst(svc) != MDCOM_RPMSG_ADDR_ANY; }));
    ASSERT_EQ(0, mdcom_rpmsg_send(svc, "ping", 4, 10 * SEC));
    ASSERT_TRUE(poll_until(r, [&] { return got.msgs.size() == 1; }));
    EXPECT_EQ(std::string("re:ping"), std::string(got.msgs[0].begin(), got.msgs[0].end()));
    EXPECT_EQ(mdcom_rpmsg_ept_dst(svc), got.srcs[0]);
    got.msgs.clear();
    ASSERT_EQ(0, cmd("unbind"));
    ASSERT_TRUE(poll_until(r, [&] { return got.ns.back() == "-" IOP_MD_NAME; }));
    /* a second service announced and withdrawn by the peer */
    ASSERT_EQ(0, cmd("announce"));
    uint32_t a2 = 0;
    ASSERT_EQ(0, mdcom_rpmsg_wait_service(r, IOP_SECOND_NAME, &a2, 10 * SEC));
    ASSERT_EQ(0, cmd("unannounce"));
    ASSERT_TRUE(poll_until(r, [&] { return got.ns.back() == "-" IOP_SECOND_NAME; }));
    /* mdcom withdraws md-svc */
    ASSERT_EQ(0, mdcom_rpmsg_ept_destroy(svc));
    /* the peer's view */
    ASSERT_EQ(0, cmd("report"));
    ASSERT_TRUE(poll_until(r, [&] { return got.msgs.size() == 1; }));
    std::string rep(got.msgs[0].begin(), got.msgs[0].end());
    unsigned n = 0, ocrc = 0, late = 0, errs = 0;
    char log[512] = "";
    ASSERT_GE(sscanf(rep.c_str(), "rep:%u:%x:%u:%u:%511s", &n, &ocrc, &late, &errs, log), 4) << rep;
    EXPECT_EQ(c.echoes + burst, n);
    EXPECT_EQ(crc, ocrc);
    EXPECT_EQ(0u, errs);
    if (!c.polling) {
        EXPECT_EQ(0u, late) << "the peer found messages without a notification";
    }
    EXPECT_EQ(std::string("+" IOP_MD_NAME ",-" IOP_MD_NAME ","), std::string(log));
    mdcom_rpmsg_stats_get(r, &st);
    EXPECT_EQ(0u, st.bad_idx + st.bad_head + st.bad_desc + st.bad_addr + st.bad_len);
    EXPECT_EQ(4u, st.bad_ns); /* the four of "nsbad" */

    ASSERT_EQ(0, cmd("quit"));
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status));
    mdcom_rpmsg_term(r);
    free(state);
    munmap(mem, IOP_SIZE);
    munmap(irq, 4096);
    unlink(path);
    close(to_host);
    close(to_remote);
}

INSTANTIATE_TEST_SUITE_P(Peers, Interop,
                         ::testing::Values(Case{MDCOM_RPMSG_HOST, false, 10000},
                                           Case{MDCOM_RPMSG_REMOTE, false, 10000},
                                           Case{MDCOM_RPMSG_HOST, true, 10000},
                                           Case{MDCOM_RPMSG_REMOTE, true, 10000}),
                         [](const ::testing::TestParamInfo<Case> &i) {
                             return (i.param.mdcom_role == MDCOM_RPMSG_HOST
                                         ? std::string("MdcomHost") + IOP_PEER_NAME + "Remote"
                                         : std::string(IOP_PEER_NAME) + "HostMdcomRemote") +
                                    (i.param.polling ? "_Polling" : "_Interrupts");
                         });

} // namespace

#else

/* Not built (MDCOM_INTEROP_SKIP says why). A prerequisite that is missing
 * on this machine (tarball, library) fails under CI=true, where the run must
 * prove the interop; a configuration that excludes the peer by design
 * (ThreadSanitizer, cross builds: MDCOM_INTEROP_BY_DESIGN) skips anyway. */
TEST(Interop, Peer)
{
    const char *ci = std::getenv("CI");
    if (!MDCOM_INTEROP_BY_DESIGN && ci && !std::strcmp(ci, "true"))
        FAIL() << "CI=true: the " IOP_PEER_NAME " interop test was not built: " MDCOM_INTEROP_SKIP;
    GTEST_SKIP() << MDCOM_INTEROP_SKIP;
}

#endif
