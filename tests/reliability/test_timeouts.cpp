/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_timeouts.cpp - every blocking call returns -ETIMEDOUT no earlier than
 * its timeout and no later than timeout + a bound, over many calls.
 *
 * Calls: mdcom_fifoch_wait (RX), send (pool empty), send (queue full),
 * recv, mdcom_smemch_lock (held by another process), mdcom_init of a remote
 * (region missing; region never formatted), and wait under a notify storm
 * (a peer waking the waiter continuously without ever satisfying it).
 * Timeouts are drawn from 1 us .. 5 ms. The overshoot (elapsed - timeout)
 * distribution of each call is printed; the assertion is only a generous
 * bound, because CI machines are shared (the target, 1 ms, is
 * reported as the fraction of calls within it). The asserted overshoot is
 * the elapsed time less the time the calling thread waited, runnable, for a
 * CPU during the call (the kernel's run-queue delay, tsup::LoadFreeTimer):
 * on a loaded machine a thread woken on time can wait tens of ms for a
 * CPU, which says nothing of the library; sleeping or spinning past the
 * deadline is still counted in full. The raw overshoot and the run-queue
 * wait are printed beside it. One call per kind may exceed the bound (but
 * not 20 x the bound): see TearDown.
 *
 *   MDCOM_REL_TIMEOUT_CALLS=n     calls per kind (default 60)
 *   MDCOM_REL_TIMEOUT_BOUND_US=n  asserted overshoot bound (default 50000)
 */
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <random>
#include <thread>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

const int64_t kTimeouts[] = {1000, 10000, 100000, 1000000, 2000000, 5000000};

struct Stats {
    std::vector<int64_t> over;   /* elapsed - timeout - run-queue wait */
    std::vector<int64_t> raw;    /* elapsed - timeout */
    std::vector<int64_t> queued; /* the run-queue wait */
    int early = 0, wrong = 0, firstbad = 0;
    int64_t worst = -1, worst_t = 0, worst_cpu = 0, worst_q = 0; /* the worst call, in parts */
};

class Timeouts : public MpFixture {
protected:
    std::map<std::string, Stats> stats_;
    std::mt19937 rng_{12345};
    uint64_t calls_ = rel::env_u64("MDCOM_REL_TIMEOUT_CALLS", 60);
    int64_t bound_ns_ = (int64_t)rel::env_u64("MDCOM_REL_TIMEOUT_BOUND_US", 50000) * 1000;

    /* Time call(timeout), which must return -ETIMEDOUT. */
    template <class F>
    void measure(const std::string &kind, F call)
    {
        Stats &s = stats_[kind];
        for (uint64_t i = 0; i < calls_; i++) {
            int64_t t = kTimeouts[rng_() % (sizeof(kTimeouts) / sizeof(kTimeouts[0]))];
            LoadFreeTimer tm;
            tm.start();
            int r = call(t);
            int64_t el;
            int64_t busy = tm.ns(&el);
            if (r != -ETIMEDOUT) {
                if (!s.wrong++)
                    s.firstbad = r;
                continue;
            }
            if (el < t)
                s.early++;
            if (busy - t > s.worst) {
                s.worst = busy - t;
                s.worst_t = t;
                s.worst_cpu = tm.cpu;
                s.worst_q = el - busy;
            }
            s.over.push_back(busy - t);
            s.raw.push_back(el - t);
            s.queued.push_back(el - busy);
        }
    }

    void TearDown() override
    {
        std::vector<int64_t> all;
        printf("%-22s %6s %9s %9s %9s %9s %9s %9s %9s\n", "overshoot (us)", "calls", "p50", "p90",
               "p99", "max", "<=1ms", "raw max", "queued");
        for (auto &kv : stats_) {
            const Stats &s = kv.second;
            size_t in1 = 0;
            for (int64_t o : s.over)
                in1 += o <= 1000000;
            printf("%-22s %6zu %9.1f %9.1f %9.1f %9.1f %8.1f%% %9.1f %9.1f\n", kv.first.c_str(),
                   s.over.size(), rel::percentile(s.over, 0.5) / 1e3,
                   rel::percentile(s.over, 0.9) / 1e3, rel::percentile(s.over, 0.99) / 1e3,
                   rel::percentile(s.over, 1.0) / 1e3,
                   s.over.empty() ? 0.0 : 100.0 * (double)in1 / (double)s.over.size(),
                   rel::percentile(s.raw, 1.0) / 1e3, rel::percentile(s.queued, 1.0) / 1e3);
            all.insert(all.end(), s.over.begin(), s.over.end());
            EXPECT_EQ(s.wrong, 0) << kv.first << ": returned " << s.firstbad
                                  << " instead of -ETIMEDOUT";
            EXPECT_EQ(s.early, 0) << kv.first << ": returned before its timeout";
            /* every call within the bound but one: a lone call may lose
             * time the kernel does not count as run-queue wait (the host
             * preempting this VM's CPU, seen at 100-150 ms on a 2-core CI
             * VM at load 8-10, once per ~80 runs); that one stays within
             * 20 x the bound. A wait that ignores its deadline does so in
             * more than one call of 60 (and the p50 above is ~0.1 ms). */
            size_t n_over = 0;
            for (int64_t o : s.over)
                n_over += o > bound_ns_;
            std::ostringstream worst;
            worst << "the worst call (timeout " << s.worst_t / 1e3 << " us) overshot by "
                  << s.worst / 1e3 << " us (plus " << s.worst_q / 1e3 << " us waiting for a CPU), "
                  << s.worst_cpu / 1e3 << " us of it on a CPU, the rest asleep or blocked";
            EXPECT_LE(n_over, 1u) << kv.first << ": " << n_over << " calls overshot the bound; "
                                  << worst.str();
            EXPECT_LE(rel::percentile(s.over, 1.0), 20 * bound_ns_)
                << kv.first << ": overshoot beyond 20 x the bound; " << worst.str();
            if (n_over)
                printf("%-22s one call overshot the bound: %s\n", kv.first.c_str(),
                       worst.str().c_str());
        }
        if (!all.empty())
            printf("%-22s %6zu %9.1f %9.1f %9.1f %9.1f\n", "all", all.size(),
                   rel::percentile(all, 0.5) / 1e3, rel::percentile(all, 0.9) / 1e3,
                   rel::percentile(all, 0.99) / 1e3, rel::percentile(all, 1.0) / 1e3);
        MpFixture::TearDown();
    }
};

TEST_F(Timeouts, ChannelWaitsSendRecvLock)
{
    Config s = Config::two_domains(region_);
    s.channels = {fifo_cfg("full", 32, 4, 0, 3u, 3u), fifo_cfg("deep", 32, 8, 2, 3u, 3u),
                  fifo_cfg("empty", 32, 4, 0, 3u, 3u), smem_cfg("lk", 64, 3u)};
    const mdcom_config *cfg = s.get();
    Inst a, b;
    ASSERT_EQ(0, attach(&a.m, cfg, 0, 0));
    ASSERT_EQ(0, attach(&b.m, cfg, 1, kSec));
    mdcom_fifoch_t *full_a, *full_b, *deep_a, *deep_b, *empty_b;
    mdcom_smemch_t *lk_a, *lk_b;
    ASSERT_EQ(0, mdcom_fifoch_open(a, "full", &full_a));
    ASSERT_EQ(0, mdcom_fifoch_open(b, "full", &full_b));
    ASSERT_EQ(0, mdcom_fifoch_open(a, "deep", &deep_a));
    ASSERT_EQ(0, mdcom_fifoch_open(b, "deep", &deep_b));
    ASSERT_EQ(0, mdcom_fifoch_open(b, "empty", &empty_b));
    ASSERT_EQ(0, mdcom_smemch_open(a, "lk", &lk_a));
    ASSERT_EQ(0, mdcom_smemch_open(b, "lk", &lk_b));

    /* pool empty: a holds every block of "full" */
    uint32_t id;
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(0, mdcom_fifoch_alloc(full_a, &id));
    /* queue full: "deep" has 8 blocks, 2 slots */
    ASSERT_EQ(0, mdcom_fifoch_send(deep_a, "x", 1, 0));
    ASSERT_EQ(0, mdcom_fifoch_send(deep_a, "y", 1, 0));
    /* lock held by a */
    ASSERT_EQ(0, mdcom_smemch_trylock(lk_a));

    char buf[32];
    measure("fifoch_wait(RX)",
            [&](int64_t t) { return mdcom_fifoch_wait(empty_b, MDCOM_EV_RX, t); });
    measure("fifoch_wait(TX)",
            [&](int64_t t) { return mdcom_fifoch_wait(full_b, MDCOM_EV_TX, t); });
    measure("send (no block)", [&](int64_t t) { return mdcom_fifoch_send(full_b, "z", 1, t); });
    measure("send (queue full)", [&](int64_t t) { return mdcom_fifoch_send(deep_b, "z", 1, t); });
    measure("recv (empty)",
            [&](int64_t t) { return mdcom_fifoch_recv(empty_b, buf, sizeof buf, t); });
    measure("smemch_lock (held)", [&](int64_t t) { return mdcom_smemch_lock(lk_b, t); });

    /* a peer notifying continuously: spurious wake-ups must not extend the wait */
    std::atomic<bool> stop{false};
    std::thread storm([&] {
        while (!stop.load())
            mdcom_fifoch_notify(empty_b);
    });
    measure("wait (notify storm)",
            [&](int64_t t) { return mdcom_fifoch_wait(empty_b, MDCOM_EV_RX, t); });
    stop = true;
    storm.join();

    /* MDCOM_POLL never blocks */
    for (int i = 0; i < 100; i++) {
        LoadFreeTimer tm;
        tm.start();
        EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(empty_b, MDCOM_EV_RX, MDCOM_POLL));
        EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_recv(empty_b, buf, sizeof buf, MDCOM_POLL));
        EXPECT_EQ(-ETIMEDOUT, mdcom_smemch_lock(lk_b, MDCOM_POLL));
        int64_t el, busy = tm.ns(&el);
        EXPECT_LT(busy, bound_ns_) << "3 polls took " << el / 1e6 << " ms, " << (el - busy) / 1e6
                                   << " of them waiting for a CPU";
    }
    ASSERT_EQ(0, mdcom_smemch_unlock(lk_a));
}

TEST_F(Timeouts, LockHeldByAnotherProcess)
{
    Config s = Config::two_domains(region_);
    s.channels = {smem_cfg("lk", 64, 3u)};
    const mdcom_config *cfg = s.get();
    Inst a;
    ASSERT_EQ(0, attach(&a.m, cfg, 0, 0));
    int pfd[2], qfd[2];
    ASSERT_EQ(0, pipe(pfd));
    ASSERT_EQ(0, pipe(qfd));
    pid_t holder = kids_.spawn([&] {
        Inst b;
        mdcom_smemch_t *lk;
        CHILD_CHECK(attach(&b.m, cfg, 1, kSec) == 0, "attach");
        CHILD_CHECK(mdcom_smemch_open(b, "lk", &lk) == 0, "open");
        CHILD_CHECK(mdcom_smemch_trylock(lk) == 0, "trylock");
        char x = 1;
        CHILD_CHECK(write(pfd[1], &x, 1) == 1, "write");
        CHILD_CHECK(read(qfd[0], &x, 1) == 1, "read");
        CHILD_CHECK(mdcom_smemch_unlock(lk) == 0, "unlock");
        return 0;
    });
    char x;
    ASSERT_EQ(1, read(pfd[0], &x, 1));
    mdcom_smemch_t *lk;
    ASSERT_EQ(0, mdcom_smemch_open(a, "lk", &lk));
    measure("smemch_lock (process)", [&](int64_t t) { return mdcom_smemch_lock(lk, t); });
    ASSERT_EQ(1, write(qfd[1], &x, 1));
    EXPECT_EQ("", kids_.wait(holder, 10 * kSec));
    EXPECT_EQ(0, mdcom_smemch_lock(lk, kSec));
    EXPECT_EQ(0, mdcom_smemch_unlock(lk));
    for (int fd : {pfd[0], pfd[1], qfd[0], qfd[1]})
        close(fd);
}

TEST_F(Timeouts, AttachWithoutMaster)
{
    Config s = Config::two_domains(region_);
    s.channels = {fifo_cfg("c", 16, 2, 0, 1u, 2u)};
    const mdcom_config *cfg = s.get();
    auto attach_remote = [&](int64_t t) {
        mdcom_t *m = nullptr;
        mdcom_init_opts o{};
        o.attach_timeout_ns = t;
        int r = mdcom_init(&m, cfg, 1, &o);
        if (r == 0)
            mdcom_term(m);
        return r;
    };
    uint64_t saved = calls_;
    calls_ = std::max<uint64_t>(calls_ / 3, 10);
    measure("init (no region)", attach_remote);
    /* a region file that exists but was never formatted */
    {
        int fd = open(region_path(region_).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(0, ftruncate(fd, 65536));
        close(fd);
    }
    measure("init (not formatted)", attach_remote);
    calls_ = saved;
}

} // namespace
