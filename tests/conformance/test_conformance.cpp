/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conformance.cpp - the port conformance suite: every mdcom port must pass it.
 *
 * The suite is written once against `const mdcom_platform *` (the port table of
 * include/mdcom/platform.h) and instantiated per port at the bottom of this file.
 *
 * Adding a port
 *   1. Make its source part of this binary: either it is the port the library
 *      was built with (CMake MDCOM_PORT), or add its .c file to the sources in
 *      tests/conformance/CMakeLists.txt (as done here for ports/template).
 *   2. Add ONE line at the bottom of this file:
 *
 *        INSTANTIATE_TEST_SUITE_P(MyPort, PortConformance,
 *                                 ::testing::Values(mdcom_platform_myport()), port_name);
 *
 *   A port for hardware that cannot run on the build host builds this file for
 *   its target (GoogleTest runs on hosted targets) and instantiates it there.
 *
 * What is checked, per port (hooks that a port may leave NULL are checked when
 * present, and reported as skipped otherwise):
 *   region    create + reopen map at least the size, writable, and both mappings
 *             share memory; a doorbell rung through one mapping wakes a sleeper on
 *             the other; [linux] shared across fork(), and after region_close(remove)
 *             a non-creating open times out with -ETIMEDOUT after its timeout
 *   clock     now_ns is monotonic and advances by the real time slept; relax
 *   doorbell  wait returns 0 at once when the word differs, -ETIMEDOUT after
 *             (never before) its timeout when nobody rings, 0 soon after another
 *             thread changes the word and rings; one ring wakes every sleeper
 *   lock      lock_try/lock_release: mutual exclusion, -EBUSY, -EPERM (wrong owner)
 *   process   proc_self gives a stable pid, proc_alive(self) != 0; [linux] a dead
 *             child (zombie or reaped) and a wrong token are not alive
 *   cache     clean/invalidate accept any range and keep coherent data
 *   library   a master and a remote instance in one process through
 *             mdcom_init_opts.platform: FIFO send/recv with MDCOM_POLL and with
 *             finite timeouts, zero-copy, a cross-thread wake-up, SMEM lock and
 *             area; the master's termination wakes a remote waiter (-ESHUTDOWN).
 * [linux] = needs OS processes and removable regions; other ports skip those.
 *
 * The template port (ports/template) is compiled into this binary with the three
 * board hooks it needs defined below: a static region of 4 MiB, CLOCK_MONOTONIC,
 * and a ring that does nothing (its doorbell polls the word).
 * A third instance, "linux-hooked" (the Linux port with lock and cache hooks
 * added, as platform.h allows axes to be mixed), is not a shipped port: it makes
 * the checks of the optional hooks run, and shows that the core calls them.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mdcom/mdcom.h"
#include "mdcom/platform.h"
#include "mdcom/wire.h"
#include "mp/mp_util.h"

using namespace mdt;

/* ------------------------------------------------------------------ */
/* board hooks of the template port                                      */
/* ------------------------------------------------------------------ */

namespace {
constexpr size_t kBoardRegionSize = 4u << 20;
alignas(4096) unsigned char g_board_region[kBoardRegionSize];
} // namespace

extern "C" void *mdcom_board_region(const char *name, uint32_t *size)
{
    (void)name; /* one region on this "board" */
    *size = (uint32_t)kBoardRegionSize;
    return g_board_region;
}

extern "C" uint64_t mdcom_board_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

extern "C" void mdcom_board_ring(uint32_t chan) { (void)chan; }

namespace {

/* Late returns allowed for timed calls (loaded 2-core machine, sanitizers);
 * early returns are never allowed. */
constexpr int64_t kSlack = 900 * kMs;

/* the channel "fifo": *tx the master's end, *rx the remote's */
void open_fifo(mdcom_t *master, mdcom_t *remote, mdcom_fifoch_t **tx, mdcom_fifoch_t **rx)
{
    ASSERT_EQ(mdcom_fifoch_open(master, "fifo", tx), 0);
    ASSERT_EQ(mdcom_fifoch_open(remote, "fifo", rx), 0);
}

/* A thread asleep in mdcom_fifoch_recv(rx, ..., 5 s): its result, and when
 * it returned. */
struct SleepingRecv {
    explicit SleepingRecv(mdcom_fifoch_t *rx)
        : th([this, rx] {
              char b[64];
              got.store(mdcom_fifoch_recv(rx, b, sizeof(b), 5 * kSec));
              t_got.store(now_ns());
          })
    {}
    /* joined: how long after t0 it returned */
    int64_t join_after(uint64_t t0)
    {
        th.join();
        return (int64_t)(t_got.load() - t0);
    }
    std::atomic<int> got{-1000};
    std::atomic<uint64_t> t_got{0};
    std::thread th; /* last: starts once got and t_got exist */
};

std::string port_name(const ::testing::TestParamInfo<const mdcom_platform *> &i)
{
    std::string s = i.param && i.param->name ? i.param->name : "unnamed";
    for (char &c : s)
        if (!isalnum((unsigned char)c))
            c = '_';
    return s;
}

/* A mapping closed at scope exit. */
struct Map {
    const mdcom_platform *p;
    mdcom_region_map m{};
    bool open = false;
    int remove = 0;
    explicit Map(const mdcom_platform *pl) : p(pl) { m.handle = -1; }
    Map(const Map &) = delete;
    Map &operator=(const Map &) = delete;
    ~Map() { close(); }
    int create(const std::string &name, uint32_t size)
    {
        int r = p->region_open(p->ctx, name.c_str(), size, MDCOM_REGION_CREATE, 0600, -1, 0, &m);
        open = r == 0;
        remove = open;
        return r;
    }
    int attach(const std::string &name, uint32_t size, int64_t timeout)
    {
        int r = p->region_open(p->ctx, name.c_str(), size, 0, 0, -1, timeout, &m);
        open = r == 0;
        return r;
    }
    void close()
    {
        if (open)
            p->region_close(p->ctx, &m, remove);
        open = false;
    }
    uint8_t *base() const { return static_cast<uint8_t *>(m.base); }
    mdcom_aword *word(size_t off) const { return reinterpret_cast<mdcom_aword *>(base() + off); }
};

const mdcom_domain_cfg kDomains[] = {{"a", 0, MDCOM_ROLE_MASTER}, {"b", 1, MDCOM_ROLE_REMOTE}};

struct Att {
    mdcom_t *m = nullptr;
    Att() = default;
    Att(const Att &) = delete;
    Att &operator=(const Att &) = delete;
    ~Att() { term(); }
    int term()
    {
        int r = m ? mdcom_term(m) : 0;
        m = nullptr;
        return r;
    }
};

class PortConformance : public ::testing::TestWithParam<const mdcom_platform *> {
protected:
    const mdcom_platform *p = nullptr;
    std::string name_;
    /* the system of the library tests: "a" master, "b" remote, a FIFO a->b, an SMEM */
    mdcom_channel_cfg chans_[2]{};
    mdcom_config cfg_{};
    char err_[256] = "";

    void SetUp() override
    {
        p = GetParam();
        ASSERT_NE(p, nullptr);
        /* the "board" starts each test with blank memory, as after a reset */
        memset(g_board_region, 0, sizeof(g_board_region));
        name_ = unique_region("mdconf");
        chans_[0].name = "fifo";
        chans_[0].type = MDCOM_CHAN_FIFO;
        chans_[0].block_size = 64;
        chans_[0].block_count = 4;
        chans_[0].senders = 1u << 0;
        chans_[0].receivers = 1u << 1;
        chans_[1].name = "smem";
        chans_[1].type = MDCOM_CHAN_SMEM;
        chans_[1].size = 128;
        chans_[1].users = 3u;
        cfg_.region_name = name_.c_str();
        cfg_.group = -1;
        cfg_.domains = kDomains;
        cfg_.n_domains = 2;
        cfg_.channels = chans_;
        cfg_.n_channels = 2;
    }
    /* mdcom_init on this port */
    int init(Att &a, uint32_t domain, int64_t attach_timeout)
    {
        mdcom_init_opts o{};
        o.attach_timeout_ns = attach_timeout;
        o.platform = p;
        o.errbuf = err_;
        o.errbuf_len = sizeof(err_);
        return mdcom_init(&a.m, &cfg_, domain, &o);
    }
    void TearDown() override
    {
        if (is_linux())
            region_remove(name_);
    }
    /* ports with OS processes and removable regions: the [linux] checks */
    bool is_linux() const { return p && p->name && strncmp(p->name, "linux", 5) == 0; }

    void *ctx() const { return p->ctx; }
    int wait(mdcom_aword *w, uint32_t expected, int64_t timeout)
    {
        return p->doorbell.wait(p->doorbell.ctx, w, expected, timeout);
    }
    void ring(mdcom_aword *w, uint32_t chan = 0) { p->doorbell.ring(p->doorbell.ctx, w, chan); }

    /* Sleep on w (expected value `expected`) until it changes, honouring
     * spurious returns; returns the last result and the time it took. */
    int wait_change(mdcom_aword *w, uint32_t expected, int64_t timeout, int64_t *took,
                    int *spurious)
    {
        uint64_t t0 = now_ns(), end = timeout < 0 ? UINT64_MAX : t0 + (uint64_t)timeout;
        int r = 0;
        *spurious = 0;
        for (;;) {
            int64_t left = timeout < 0 ? MDCOM_FOREVER : (int64_t)(end - now_ns());
            if (timeout >= 0 && left <= 0) {
                r = -ETIMEDOUT;
                break;
            }
            r = wait(w, expected, left);
            if (r != 0 || w->load() != expected)
                break;
            ++*spurious;
        }
        *took = (int64_t)(now_ns() - t0);
        return r;
    }
};

/* ------------------------------------------------------------------ */
/* the table                                                            */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, HasRequiredHooks)
{
    ASSERT_NE(p->name, nullptr);
    EXPECT_GT(strlen(p->name), 0u);
    EXPECT_NE(p->region_open, nullptr);
    EXPECT_NE(p->region_close, nullptr);
    EXPECT_NE(p->doorbell.wait, nullptr);
    EXPECT_NE(p->doorbell.ring, nullptr);
    EXPECT_NE(p->now_ns, nullptr);
    EXPECT_EQ(p->lock_try == nullptr, p->lock_release == nullptr)
        << "lock_try and lock_release come together (one lock, one protocol)";
}

/* ------------------------------------------------------------------ */
/* region                                                               */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, RegionCreateAndReopenShareMemory)
{
    constexpr uint32_t kSize = 256u << 10;
    Map a(p), b(p);
    ASSERT_EQ(a.create(name_, kSize), 0);
    ASSERT_NE(a.m.base, nullptr);
    EXPECT_GE(a.m.size, kSize);
    EXPECT_EQ((uintptr_t)a.m.base % 64u, 0u) << "the region must be cache-line aligned";
    ASSERT_EQ(b.attach(name_, kSize, kSec), 0);
    ASSERT_NE(b.m.base, nullptr);
    EXPECT_GE(b.m.size, kSize);
    EXPECT_EQ((uintptr_t)b.m.base % 64u, 0u);

    /* writable through both, and what one writes the other reads */
    const size_t offs[] = {0, 1, 63, 4096, kSize / 2 + 3, kSize - 1};
    for (size_t o : offs) {
        a.base()[o] = (uint8_t)(0xA0 ^ o);
        EXPECT_EQ(b.base()[o], (uint8_t)(0xA0 ^ o)) << "offset " << o;
        b.base()[o] = (uint8_t)(0x5B ^ o);
        EXPECT_EQ(a.base()[o], (uint8_t)(0x5B ^ o)) << "offset " << o;
    }
    std::vector<uint8_t> pat(kSize);
    for (size_t i = 0; i < kSize; i++)
        pat[i] = (uint8_t)(i * 7 + (i >> 9));
    memcpy(a.base(), pat.data(), kSize);
    EXPECT_EQ(memcmp(b.base(), pat.data(), kSize), 0);

    /* shared atomics */
    a.word(128)->store(0x11223344u);
    EXPECT_EQ(b.word(128)->load(), 0x11223344u);
    b.word(128)->fetch_add(1);
    EXPECT_EQ(a.word(128)->load(), 0x11223345u);
}

TEST_P(PortConformance, DoorbellAcrossMappings)
{
    /* a sleeper on the word through one mapping is woken by a ring through the other */
    Map a(p), b(p);
    ASSERT_EQ(a.create(name_, 4096), 0);
    ASSERT_EQ(b.attach(name_, 4096, kSec), 0);
    a.word(256)->store(7);
    std::thread t([&] {
        sleep_ms(100);
        a.word(256)->store(8);
        ring(a.word(256), 1);
    });
    int64_t took = 0;
    int spurious = 0;
    int r = wait_change(b.word(256), 7, 5 * kSec, &took, &spurious);
    t.join();
    EXPECT_EQ(r, 0);
    EXPECT_EQ(b.word(256)->load(), 8u);
    EXPECT_LT(took, 100 * kMs + kSlack) << "woke late";
}

TEST_P(PortConformance, RegionRemoveThenOpenTimesOut)
{
    if (!is_linux())
        GTEST_SKIP() << "[linux] the port's regions are fixed memory, not removable";
    {
        Map a(p);
        ASSERT_EQ(a.create(name_, 4096), 0);
        EXPECT_TRUE(region_exists(name_));
        a.close(); /* remove */
    }
    EXPECT_FALSE(region_exists(name_));
    Map b(p);
    uint64_t t = now_ns();
    int r = b.attach(name_, 4096, 200 * kMs);
    int64_t el = (int64_t)(now_ns() - t);
    EXPECT_EQ(r, -ETIMEDOUT);
    EXPECT_GE(el, 200 * kMs);
    EXPECT_LT(el, 200 * kMs + kSlack);
    /* POLL: no wait at all */
    t = now_ns();
    EXPECT_EQ(b.attach(name_, 4096, 0), -ETIMEDOUT);
    EXPECT_LT((int64_t)(now_ns() - t), kSlack);
    /* close without remove keeps the region */
    {
        Map c(p);
        ASSERT_EQ(c.create(name_, 4096), 0);
        c.remove = 0;
    }
    EXPECT_TRUE(region_exists(name_));
    Map d(p);
    EXPECT_EQ(d.attach(name_, 4096, 0), 0);
    d.remove = 1;
}

TEST_P(PortConformance, RegionSharedAcrossFork)
{
    if (!is_linux())
        GTEST_SKIP() << "[linux] needs OS processes";
    Map a(p);
    ASSERT_EQ(a.create(name_, 8192), 0);
    a.word(0)->store(0);
    a.word(64)->store(0);
    memcpy(a.base() + 1024, "from parent", 12);
    Children kids;
    const mdcom_platform *pl = p;
    std::string name = name_;
    pid_t pid = kids.spawn([pl, name] {
        mdcom_region_map m{};
        int r = pl->region_open(pl->ctx, name.c_str(), 8192, 0, 0, -1, kSec, &m);
        CHILD_CHECK(r == 0, "open in the child = %d", r);
        uint8_t *b = static_cast<uint8_t *>(m.base);
        CHILD_CHECK(memcmp(b + 1024, "from parent", 12) == 0, "parent's data not visible");
        memcpy(b + 2048, "from child", 11);
        auto *w = reinterpret_cast<mdcom_aword *>(b);
        /* wake the parent asleep on word 0 */
        w->store(1);
        pl->doorbell.ring(pl->doorbell.ctx, w, 0);
        /* sleep until the parent rings word 64 */
        auto *w2 = reinterpret_cast<mdcom_aword *>(b + 64);
        uint64_t end = now_ns() + 5 * (uint64_t)kSec;
        while (w2->load() == 0 && now_ns() < end)
            pl->doorbell.wait(pl->doorbell.ctx, w2, 0, (int64_t)(end - now_ns()));
        CHILD_CHECK(w2->load() == 1, "the parent's ring did not arrive");
        pl->region_close(pl->ctx, &m, 0);
        return 0;
    });
    ASSERT_GT(pid, 0);
    int64_t took = 0;
    int spurious = 0;
    EXPECT_EQ(wait_change(a.word(0), 0, 5 * kSec, &took, &spurious), 0);
    EXPECT_EQ(a.word(0)->load(), 1u);
    EXPECT_EQ(memcmp(a.base() + 2048, "from child", 11), 0);
    sleep_ms(50);
    a.word(64)->store(1);
    ring(a.word(64));
    EXPECT_EQ(kids.wait(pid, 10 * kSec), "");
}

/* ------------------------------------------------------------------ */
/* clock                                                                */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, ClockIsMonotonicAndTracksRealTime)
{
    uint64_t prev = p->now_ns(ctx());
    for (int i = 0; i < 100000; i++) {
        uint64_t t = p->now_ns(ctx());
        ASSERT_GE(t, prev) << "now_ns went backwards at read " << i;
        prev = t;
    }
    for (int64_t ms : {20, 100}) {
        uint64_t a = p->now_ns(ctx()), ra = now_ns();
        sleep_ms(ms);
        uint64_t b = p->now_ns(ctx()), rb = now_ns();
        int64_t d = (int64_t)(b - a), real = (int64_t)(rb - ra);
        EXPECT_GE(d, ms * kMs - kMs) << "slept " << ms << " ms";
        EXPECT_LT(d, real + 5 * kMs) << "slept " << ms << " ms, the real clock saw " << real;
    }
    if (p->relax)
        for (int i = 0; i < 1000; i++)
            p->relax(ctx());
}

/* ------------------------------------------------------------------ */
/* doorbell                                                             */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, DoorbellReturnsAtOnceWhenWordDiffers)
{
    mdcom_aword w{5};
    for (int64_t timeout : {int64_t(1), 10 * kMs, kSec, MDCOM_FOREVER}) {
        uint64_t t = now_ns();
        EXPECT_EQ(wait(&w, 4, timeout), 0) << "timeout " << timeout;
        EXPECT_LT((int64_t)(now_ns() - t), 100 * kMs) << "timeout " << timeout;
    }
}

TEST_P(PortConformance, DoorbellTimesOut)
{
    mdcom_aword w{7};
    for (int64_t timeout : {2 * kMs, 100 * kMs, 300 * kMs}) {
        int64_t took = 0;
        int spurious = 0;
        int r = wait_change(&w, 7, timeout, &took, &spurious);
        EXPECT_EQ(r, -ETIMEDOUT) << "timeout " << timeout / kMs << " ms";
        EXPECT_GE(took, timeout) << "returned early";
        EXPECT_LT(took, timeout + kSlack) << "returned late";
        EXPECT_LT(spurious, 100) << "a wait that never sleeps";
        /* a single call, as the core makes it */
        uint64_t t = now_ns();
        r = wait(&w, 7, timeout);
        int64_t el = (int64_t)(now_ns() - t);
        if (r == -ETIMEDOUT) {
            EXPECT_GE(el, timeout) << "-ETIMEDOUT before the timeout";
        } else {
            EXPECT_EQ(r, 0) << "only 0 (spurious) or -ETIMEDOUT";
        }
        EXPECT_LT(el, timeout + kSlack);
    }
}

TEST_P(PortConformance, DoorbellWakesOnRing)
{
    for (int64_t timeout : {5 * kSec, MDCOM_FOREVER}) {
        mdcom_aword w{0};
        std::thread t([&] {
            sleep_ms(100);
            w.store(1);
            ring(&w, 3);
        });
        int64_t took = 0;
        int spurious = 0;
        int r = wait_change(&w, 0, timeout, &took, &spurious);
        t.join();
        EXPECT_EQ(r, 0) << "timeout " << timeout;
        EXPECT_EQ(w.load(), 1u);
        EXPECT_LT(took, 100 * kMs + kSlack) << "woke late";
    }
}

TEST_P(PortConformance, DoorbellOneRingWakesEverySleeper)
{
    mdcom_aword w{0};
    std::atomic<int> woken{0};
    std::atomic<int64_t> worst{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 3; i++)
        ts.emplace_back([&] {
            int64_t took = 0;
            int spurious = 0;
            int r = wait_change(&w, 0, 5 * kSec, &took, &spurious);
            if (r == 0 && w.load() == 1)
                woken.fetch_add(1);
            int64_t cur = worst.load();
            while (took > cur && !worst.compare_exchange_weak(cur, took)) {
            }
        });
    sleep_ms(100);
    w.store(1);
    ring(&w, UINT32_MAX);
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(woken.load(), 3);
    EXPECT_LT(worst.load(), 100 * kMs + kSlack);
}

/* Ringing with nobody asleep neither blocks nor writes the word, and leaves
 * the doorbell usable: a later wait on a changed word returns at once and a
 * later ring still wakes a sleeper. */
TEST_P(PortConformance, DoorbellRingWithoutSleepers)
{
    mdcom_aword w{0};
    for (uint32_t i = 0; i < 1000; i++) {
        w.store(i);
        ring(&w, i % 3 == 0 ? UINT32_MAX : i);
        ASSERT_EQ(w.load(), i) << "ring wrote the word";
    }
    EXPECT_EQ(wait(&w, 998, kSec), 0) << "the word differs: wait returns at once";
    std::thread t([&] {
        sleep_ms(50);
        w.store(1000);
        ring(&w, UINT32_MAX);
    });
    int64_t took = 0;
    int spurious = 0;
    EXPECT_EQ(wait_change(&w, 999, 10 * kSec, &took, &spurious), 0);
    t.join();
    EXPECT_EQ(w.load(), 1000u);
}

/* ------------------------------------------------------------------ */
/* lock                                                                 */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, LockHooksOwnership)
{
    if (!p->lock_try || !p->lock_release)
        GTEST_SKIP() << "the port uses the core's portable lock (checked by the library tests)";
    mdcom_aword w{0};
    EXPECT_EQ(p->lock_try(ctx(), 0, &w, 5), 0);
    EXPECT_NE(w.load(), 0u) << "a held lock reads non-zero";
    EXPECT_EQ(p->lock_try(ctx(), 0, &w, 6), -EBUSY);
    EXPECT_EQ(p->lock_release(ctx(), 0, &w, 6), -EPERM) << "released by a non-owner";
    EXPECT_EQ(p->lock_try(ctx(), 0, &w, 6), -EBUSY) << "still held after the refused release";
    EXPECT_EQ(p->lock_release(ctx(), 0, &w, 5), 0);
    EXPECT_EQ(p->lock_try(ctx(), 0, &w, 6), 0);
    EXPECT_EQ(p->lock_release(ctx(), 0, &w, 5), -EPERM);
    EXPECT_EQ(p->lock_release(ctx(), 0, &w, 6), 0);
    EXPECT_EQ(p->lock_release(ctx(), 0, &w, 6), -EPERM) << "released twice";
    /* independent locks */
    mdcom_aword w2{0};
    EXPECT_EQ(p->lock_try(ctx(), 0, &w, 5), 0);
    EXPECT_EQ(p->lock_try(ctx(), 1, &w2, 6), 0);
    EXPECT_EQ(p->lock_release(ctx(), 1, &w2, 6), 0);
    EXPECT_EQ(p->lock_release(ctx(), 0, &w, 5), 0);
}

TEST_P(PortConformance, LockHooksMutualExclusion)
{
    if (!p->lock_try || !p->lock_release)
        GTEST_SKIP() << "the port uses the core's portable lock (checked by the library tests)";
    constexpr int kThreads = 4, kIters = 20000;
    mdcom_aword w{0};
    uint64_t counter = 0; /* plain: protected by the lock only */
    std::atomic<int> inside{0}, violations{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < kThreads; i++)
        ts.emplace_back([&, i] {
            uint32_t owner = (uint32_t)i + 1;
            for (int k = 0; k < kIters; k++) {
                while (p->lock_try(ctx(), 0, &w, owner) != 0)
                    std::this_thread::yield();
                if (inside.fetch_add(1) != 0)
                    violations.fetch_add(1);
                counter++;
                inside.fetch_sub(1);
                if (p->lock_release(ctx(), 0, &w, owner) != 0)
                    violations.fetch_add(1);
            }
        });
    for (auto &t : ts)
        t.join();
    EXPECT_EQ(violations.load(), 0);
    EXPECT_EQ(counter, (uint64_t)kThreads * kIters);
}

/* ------------------------------------------------------------------ */
/* process identity and liveness                                        */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, ProcessIdentity)
{
    if (!p->proc_self)
        GTEST_SKIP() << "no process identity hooks";
    uint32_t pid = 0, token = 0, pid2 = 0, token2 = 0;
    ASSERT_EQ(p->proc_self(ctx(), &pid, &token), 0);
    EXPECT_NE(pid, 0u);
    EXPECT_EQ(pid & MDCOM_FMT_CLAIM, 0u) << "bit 30 marks a formatter's claim in the header";
    ASSERT_EQ(p->proc_self(ctx(), &pid2, &token2), 0);
    EXPECT_EQ(pid, pid2) << "stable";
    EXPECT_EQ(token, token2) << "stable";
    ASSERT_NE(p->proc_alive, nullptr);
    EXPECT_NE(p->proc_alive(ctx(), pid, token), 0) << "we are alive (or unknown), never dead";
    if (is_linux()) {
        EXPECT_EQ(pid, (uint32_t)getpid());
        EXPECT_EQ(p->proc_alive(ctx(), pid, token), 1);
        uint32_t wrong = token + 1 != 0 ? token + 1 : 2;
        EXPECT_EQ(p->proc_alive(ctx(), pid, wrong), 0) << "a reused pid (other token) is dead";
        EXPECT_EQ(p->proc_alive(ctx(), 0, token), 0);
    }
}

TEST_P(PortConformance, ProcessLivenessOfDeadChild)
{
    if (!is_linux())
        GTEST_SKIP() << "[linux] needs OS processes";
    int up[2], down[2];
    ASSERT_EQ(pipe(up), 0);
    ASSERT_EQ(pipe(down), 0);
    Children kids;
    const mdcom_platform *pl = p;
    pid_t pid = kids.spawn([=] {
        uint32_t id[2] = {0, 0};
        if (pl->proc_self(pl->ctx, &id[0], &id[1]) != 0)
            return 1;
        if (write(up[1], id, sizeof(id)) != (ssize_t)sizeof(id))
            return 2;
        char c;
        if (read(down[0], &c, 1) != 1) /* until the parent has looked */
            return 3;
        return 0;
    });
    ASSERT_GT(pid, 0);
    uint32_t id[2] = {0, 0};
    ASSERT_EQ(read(up[0], id, sizeof(id)), (ssize_t)sizeof(id));
    EXPECT_EQ(id[0], (uint32_t)pid);
    EXPECT_EQ(p->proc_alive(ctx(), id[0], id[1]), 1) << "a running child";
    ASSERT_EQ(write(down[1], "x", 1), 1);
    siginfo_t si{};
    int r;
    while ((r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) != 0 && errno == EINTR) {
    }
    ASSERT_EQ(r, 0);
    EXPECT_EQ(p->proc_alive(ctx(), id[0], id[1]), 0) << "an exited, unreaped (zombie) child";
    EXPECT_EQ(kids.wait(pid, 5 * kSec), "");
    EXPECT_EQ(p->proc_alive(ctx(), id[0], id[1]), 0) << "a reaped child";
    for (int fd : {up[0], up[1], down[0], down[1]})
        close(fd);
}

/* ------------------------------------------------------------------ */
/* cache                                                                */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, CacheHooksAcceptAnyRange)
{
    if (!p->cache_clean && !p->cache_invalidate)
        GTEST_SKIP() << "coherent port: no cache hooks";
    alignas(64) static uint8_t buf[8192];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 13);
    const std::pair<size_t, size_t> ranges[] = {{0, 0},  {0, 1},  {1, 1},    {3, 61},
                                                {63, 2}, {0, 64}, {5, 4000}, {0, sizeof(buf)}};
    for (auto [off, len] : ranges) {
        if (p->cache_clean)
            p->cache_clean(ctx(), buf + off, len);
        if (p->cache_invalidate)
            p->cache_invalidate(ctx(), buf + off, len); /* after a clean: data kept */
    }
    for (size_t i = 0; i < sizeof(buf); i++)
        ASSERT_EQ(buf[i], (uint8_t)(i * 13)) << "byte " << i;
}

/* ------------------------------------------------------------------ */
/* the library on this port                                             */
/* ------------------------------------------------------------------ */

TEST_P(PortConformance, LibraryRoundTrip)
{
    Att master, remote;
    ASSERT_EQ(init(master, 0, MDCOM_POLL), 0) << err_;
    ASSERT_EQ(init(remote, 1, kSec), 0) << err_;
    EXPECT_EQ(mdcom_sense_process(master.m, 0), 1);
    EXPECT_EQ(mdcom_sense_process(master.m, 1), 1);

    mdcom_fifoch_t *tx = nullptr, *rx = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_fifo(master.m, remote.m, &tx, &rx));
    char buf[64];

    /* empty: POLL and a finite timeout */
    uint64_t t = now_ns();
    EXPECT_EQ(mdcom_fifoch_recv(rx, buf, sizeof(buf), MDCOM_POLL), -ETIMEDOUT);
    EXPECT_LT((int64_t)(now_ns() - t), kSlack);
    t = now_ns();
    EXPECT_EQ(mdcom_fifoch_recv(rx, buf, sizeof(buf), 50 * kMs), -ETIMEDOUT);
    int64_t el = (int64_t)(now_ns() - t);
    EXPECT_GE(el, 50 * kMs);
    EXPECT_LT(el, 50 * kMs + kSlack);

    /* send/recv with POLL and with a finite timeout */
    EXPECT_EQ(mdcom_fifoch_send(tx, "hello", 5, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_fifoch_recv(rx, buf, sizeof(buf), MDCOM_POLL), 5);
    EXPECT_EQ(memcmp(buf, "hello", 5), 0);
    EXPECT_EQ(mdcom_fifoch_send(tx, "world!", 6, kSec), 0);
    EXPECT_EQ(mdcom_fifoch_recv(rx, buf, sizeof(buf), kSec), 6);
    EXPECT_EQ(memcmp(buf, "world!", 6), 0);

    /* a full pool: POLL and a finite timeout time out; order is kept */
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t v = 0xC0DE0000u + i;
        EXPECT_EQ(mdcom_fifoch_send(tx, &v, sizeof(v), MDCOM_POLL), 0) << i;
    }
    EXPECT_EQ(mdcom_fifoch_send(tx, "x", 1, MDCOM_POLL), -ETIMEDOUT);
    t = now_ns();
    EXPECT_EQ(mdcom_fifoch_send(tx, "x", 1, 20 * kMs), -ETIMEDOUT);
    el = (int64_t)(now_ns() - t);
    EXPECT_GE(el, 20 * kMs);
    EXPECT_LT(el, 20 * kMs + kSlack);
    for (uint32_t i = 0; i < 4; i++) {
        uint32_t v = 0;
        EXPECT_EQ(mdcom_fifoch_recv(rx, &v, sizeof(v), MDCOM_POLL), 4) << i;
        EXPECT_EQ(v, 0xC0DE0000u + i);
    }

    /* zero-copy */
    uint32_t id = 0, len = 0, size = 0;
    void *ptr = nullptr;
    ASSERT_EQ(mdcom_fifoch_alloc(tx, &id), 0);
    ASSERT_EQ(mdcom_fifoch_get(tx, id, &ptr, &size), 0);
    EXPECT_EQ(size, 64u);
    memcpy(ptr, "zero-copy", 9);
    ASSERT_EQ(mdcom_fifoch_enqueue(tx, id, 9), 0);
    ASSERT_EQ(mdcom_fifoch_notify(tx), 0);
    int ev = mdcom_fifoch_wait(rx, MDCOM_EV_RX, kSec);
    EXPECT_GT(ev, 0);
    EXPECT_TRUE(ev & MDCOM_EV_RX);
    ASSERT_EQ(mdcom_fifoch_dequeue(rx, &id, &len), 0);
    EXPECT_EQ(len, 9u);
    ASSERT_EQ(mdcom_fifoch_get(rx, id, &ptr, nullptr), 0);
    EXPECT_EQ(memcmp(ptr, "zero-copy", 9), 0);
    EXPECT_EQ(mdcom_fifoch_free(rx, id), 0);
    EXPECT_EQ(mdcom_fifoch_notify(rx), 0);

    /* a receiver asleep in another thread is woken by a send */
    SleepingRecv th(rx);
    sleep_ms(100);
    uint64_t t_send = now_ns();
    EXPECT_EQ(mdcom_fifoch_send(tx, "wake", 4, kSec), 0);
    EXPECT_LT(th.join_after(t_send), kSlack) << "woke late";
    EXPECT_EQ(th.got.load(), 4);

    mdcom_fifo_state st{};
    ASSERT_EQ(mdcom_sense_fifoch(tx, &st), 0);
    EXPECT_EQ(st.free_blocks, 4u);
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.errors, 0u);

    /* SMEM: lock, area, -EBUSY, timeout, POLL */
    mdcom_smemch_t *sa = nullptr, *sb = nullptr;
    ASSERT_EQ(mdcom_smemch_open(master.m, "smem", &sa), 0);
    ASSERT_EQ(mdcom_smemch_open(remote.m, "smem", &sb), 0);
    void *pa = nullptr, *pb = nullptr;
    uint32_t sza = 0;
    ASSERT_EQ(mdcom_smemch_get(sa, &pa, &sza), 0);
    ASSERT_EQ(mdcom_smemch_get(sb, &pb, nullptr), 0);
    EXPECT_GE(sza, 128u);
    ASSERT_EQ(mdcom_smemch_lock(sa, kSec), 0);
    memcpy(pa, "ping", 5);
    ASSERT_EQ(mdcom_smemch_unlock(sa), 0);
    ASSERT_EQ(mdcom_smemch_trylock(sb), 0);
    EXPECT_EQ(memcmp(pb, "ping", 5), 0);
    memcpy(pb, "pong", 5);
    EXPECT_EQ(mdcom_smemch_trylock(sa), -EBUSY);
    t = now_ns();
    EXPECT_EQ(mdcom_smemch_lock(sa, 20 * kMs), -ETIMEDOUT);
    el = (int64_t)(now_ns() - t);
    EXPECT_GE(el, 20 * kMs);
    EXPECT_LT(el, 20 * kMs + kSlack);
    EXPECT_EQ(mdcom_smemch_unlock(sa), -EPERM);
    ASSERT_EQ(mdcom_smemch_unlock(sb), 0);
    ASSERT_EQ(mdcom_smemch_lock(sa, MDCOM_POLL), 0);
    EXPECT_EQ(memcmp(pa, "pong", 5), 0);
    ASSERT_EQ(mdcom_smemch_unlock(sa), 0);

    EXPECT_EQ(remote.term(), 0);
    EXPECT_EQ(mdcom_sense_process(master.m, 1), 0);
    EXPECT_EQ(master.term(), 0);
    if (is_linux()) {
        EXPECT_FALSE(region_exists(name_)) << "the master's term removes the region";
    }
}

TEST_P(PortConformance, LibraryTerminationWakesWaiter)
{
    Att master, remote;
    ASSERT_EQ(init(master, 0, MDCOM_POLL), 0) << err_;
    ASSERT_EQ(init(remote, 1, kSec), 0) << err_;
    mdcom_fifoch_t *rx = nullptr;
    ASSERT_EQ(mdcom_fifoch_open(remote.m, "fifo", &rx), 0);
    SleepingRecv th(rx);
    sleep_ms(100);
    uint64_t t_term = now_ns();
    EXPECT_EQ(master.term(), 0);
    EXPECT_LT(th.join_after(t_term), kSlack) << "woke late";
    EXPECT_EQ(th.got.load(), -ESHUTDOWN) << mdcom_strerror(th.got.load());
    EXPECT_EQ(remote.term(), 0);
}

TEST_P(PortConformance, LibraryRemoteBeforeMaster)
{
    /* the remote's mdcom_init waits (attach timeout) until the master formats */
    Att master, remote;
    std::atomic<int> rc{-1000};
    char rerr[256] = "";
    std::thread th([&] {
        mdcom_init_opts o{};
        o.attach_timeout_ns = 5 * kSec;
        o.platform = p;
        o.errbuf = rerr;
        o.errbuf_len = sizeof(rerr);
        rc.store(mdcom_init(&remote.m, &cfg_, 1, &o));
    });
    sleep_ms(100);
    EXPECT_EQ(rc.load(), -1000) << "the remote attached before the master existed: " << rerr;
    ASSERT_EQ(init(master, 0, MDCOM_POLL), 0) << err_;
    th.join();
    ASSERT_EQ(rc.load(), 0) << rerr;
    mdcom_fifoch_t *tx = nullptr, *rx = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_fifo(master.m, remote.m, &tx, &rx));
    char buf[8];
    EXPECT_EQ(mdcom_fifoch_send(tx, "late", 4, kSec), 0);
    EXPECT_EQ(mdcom_fifoch_recv(rx, buf, sizeof(buf), kSec), 4);
    EXPECT_EQ(remote.term(), 0);
    EXPECT_EQ(master.term(), 0);
}

/* ------------------------------------------------------------------ */
/* the optional hooks                                                   */
/* ------------------------------------------------------------------ */

/* The Linux port with the optional hooks filled in, as a board with a hardware
 * semaphore and data caches would have them (platform.h: axes mix). It runs
 * the suite's lock and cache checks, which no shipped port triggers, and shows
 * that the core goes through the hooks. */
std::atomic<uint32_t> g_hook_calls[4]; /* lock_try, lock_release, clean, invalidate */

int hk_lock_try(void *ctx, uint32_t lock_id, mdcom_aword *w, uint32_t owner)
{
    (void)ctx;
    (void)lock_id;
    uint32_t z = 0;
    g_hook_calls[0].fetch_add(1, std::memory_order_relaxed);
    return w->compare_exchange_strong(z, owner, std::memory_order_acquire,
                                      std::memory_order_relaxed)
               ? 0
               : -EBUSY;
}

int hk_lock_release(void *ctx, uint32_t lock_id, mdcom_aword *w, uint32_t owner)
{
    (void)ctx;
    (void)lock_id;
    uint32_t o = owner;
    g_hook_calls[1].fetch_add(1, std::memory_order_relaxed);
    return w->compare_exchange_strong(o, 0, std::memory_order_release, std::memory_order_relaxed)
               ? 0
               : -EPERM;
}

void hk_clean(void *ctx, const void *addr, size_t len)
{
    (void)ctx;
    (void)addr;
    (void)len;
    g_hook_calls[2].fetch_add(1, std::memory_order_relaxed);
}

void hk_invalidate(void *ctx, const void *addr, size_t len)
{
    (void)ctx;
    (void)addr;
    (void)len;
    g_hook_calls[3].fetch_add(1, std::memory_order_relaxed);
}

#ifdef MDCOM_CONF_HAVE_LINUX
const mdcom_platform *linux_hooked()
{
    static const mdcom_platform plat = [] {
        mdcom_platform q = *mdcom_platform_linux();
        q.name = "linux-hooked";
        q.lock_try = hk_lock_try;
        q.lock_release = hk_lock_release;
        q.cache_clean = hk_clean;
        q.cache_invalidate = hk_invalidate;
        return q;
    }();
    return &plat;
}

class LinuxHooked : public PortConformance {};

TEST_P(LinuxHooked, LibraryGoesThroughTheHooks)
{
    for (auto &c : g_hook_calls)
        c.store(0);
    Att master, remote;
    ASSERT_EQ(init(master, 0, MDCOM_POLL), 0) << err_;
    ASSERT_EQ(init(remote, 1, kSec), 0) << err_;
    mdcom_fifoch_t *tx = nullptr, *rx = nullptr;
    ASSERT_NO_FATAL_FAILURE(open_fifo(master.m, remote.m, &tx, &rx));
    char buf[8];
    ASSERT_EQ(mdcom_fifoch_send(tx, "abc", 3, kSec), 0);
    ASSERT_EQ(mdcom_fifoch_recv(rx, buf, sizeof(buf), kSec), 3);
    EXPECT_GT(g_hook_calls[2].load(), 0u) << "cache_clean before a block is published";
    EXPECT_GT(g_hook_calls[3].load(), 0u) << "cache_invalidate after a block is received";
    mdcom_smemch_t *sa = nullptr;
    ASSERT_EQ(mdcom_smemch_open(master.m, "smem", &sa), 0);
    uint32_t clean = g_hook_calls[2].load(), inval = g_hook_calls[3].load();
    ASSERT_EQ(mdcom_smemch_lock(sa, kSec), 0);
    ASSERT_EQ(mdcom_smemch_unlock(sa), 0);
    EXPECT_GT(g_hook_calls[0].load(), 0u) << "the port's lock_try";
    EXPECT_GT(g_hook_calls[1].load(), 0u) << "the port's lock_release";
    EXPECT_GT(g_hook_calls[2].load(), clean) << "cache_clean of the area at unlock";
    EXPECT_GT(g_hook_calls[3].load(), inval) << "cache_invalidate of the area at lock";
}

INSTANTIATE_TEST_SUITE_P(LinuxHooked, LinuxHooked, ::testing::Values(linux_hooked()), port_name);
#endif

} // namespace

/* ------------------------------------------------------------------ */
/* the ports: one INSTANTIATE line each                                 */
/* ------------------------------------------------------------------ */

#ifdef MDCOM_CONF_HAVE_LINUX
INSTANTIATE_TEST_SUITE_P(Linux, PortConformance, ::testing::Values(mdcom_platform_linux()),
                         port_name);
#endif
INSTANTIATE_TEST_SUITE_P(Template, PortConformance, ::testing::Values(mdcom_platform_template()),
                         port_name);
#ifdef MDCOM_CONF_HAVE_LINUX
/* not a shipped port: Linux with the optional lock and cache hooks (see above) */
INSTANTIATE_TEST_SUITE_P(LinuxHooked, PortConformance, ::testing::Values(linux_hooked()),
                         port_name);
#endif
