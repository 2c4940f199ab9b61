/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_events.cpp - pollable fds and wait sets (include/mdcom/events.h) with
 * real processes and a real region: notifies from another process wake the
 * fd, level semantics, timeouts, many channels, removal, dead notifiers and
 * lock holders, and the fd in poll, select and epoll.
 *
 * ctest runs it twice: "events" with MDCOM_EV_SLICE_MS=10000 (so the helper's
 * periodic re-evaluation cannot be what makes an fd readable within a test's
 * bounds: only a notify can), and "events_dead" (the Dead* tests) with the
 * default 50 ms period, through which the survivors notice a dead notifier.
 */
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <atomic>
#include <thread>

#include "support/whitebox.h"
#include "mdcom/events.h"
#include "mp/mp_sys.h"

using namespace mdt;

namespace {

constexpr uint32_t kA = 0, kB = 1;

class Events : public TwoDomainFixture {
protected:
    void channels(uint32_t n)
    {
        static std::vector<std::string> names;
        names.clear();
        for (uint32_t i = 0; i < n; i++)
            names.push_back("c" + std::to_string(i));
        for (uint32_t i = 0; i < n; i++)
            sys_.channels.push_back(fifo_cfg(names[i].c_str(), 64, 4, 0, 1u << kB, 1u << kA));
        sys_.channels.push_back(smem_cfg("lock", 64, 3u));
    }
    /* a (the parent) attached as domain A to n FIFO channels c0.. (B to A)
     * and an SMEM channel "lock" */
    bool start(uint32_t n)
    {
        channels(n);
        return attach(&a.m, sys_.get(), kA, 0) == 0;
    }
    /* b (in a child) attached as domain B; with c, c0 opened there */
    bool as_b(Inst &b, mdcom_fifoch_t **c = nullptr)
    {
        return attach(&b.m, sys_.get(), kB, 5 * kSec) == 0 &&
               (!c || mdcom_fifoch_open(b, "c0", c) == 0);
    }
    /* b (in a child) attached as domain B with a 200 ms heartbeat promise */
    bool as_b_beating(Inst &b)
    {
        mdcom_init_opts o{};
        o.attach_timeout_ns = 5 * kSec;
        o.heartbeat_ms = 200;
        return mdcom_init(&b.m, sys_.get(), kB, &o) == 0;
    }

    Inst a;
};

bool readable(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

mdcom_fifoch_t *fifo(mdcom_t *m, const char *name)
{
    mdcom_fifoch_t *ch = nullptr;
    EXPECT_EQ(mdcom_fifoch_open(m, name, &ch), 0);
    return ch;
}

uint32_t waiters_of(mdcom_fifoch_t *ch) { return ev_test_waiters(ch); }

/* (a child) until the parent sets step to v */
void await_step(const std::atomic<int> &step, int v)
{
    while (step.load() != v)
        sleep_ms(1);
}

} // namespace

/* A notify from another process makes the fd readable; without notify the
 * enqueued message does not (no polling); drained + cleared = not readable. */
TEST_F(Events, NotifyFromAnotherProcessWakesFd)
{
    ASSERT_TRUE(start(1));
    mdcom_fifoch_t *ch = fifo(a, "c0");
    Shared<std::atomic<int>> step;
    pid_t kid = kids_.spawn([&] {
        Inst b;
        mdcom_fifoch_t *c;
        CHILD_CHECK(as_b(b, &c), "attach, open c0");
        await_step(*step, 1);
        uint32_t id;
        CHILD_CHECK(mdcom_fifoch_alloc(c, &id) == 0, "alloc");
        CHILD_CHECK(mdcom_fifoch_enqueue(c, id, 8) == 0, "enqueue"); /* no notify yet */
        step->store(2);
        await_step(*step, 3);
        CHILD_CHECK(mdcom_fifoch_notify(c) == 0, "notify");
        return 0;
    });
    int fd = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(waiters_of(ch), 1u);
    /* the helper's evaluations at registration (thread start, fd link) are
     * over well within this; after them only a notify wakes it */
    EXPECT_FALSE(readable(fd, 200));
    step->store(1);
    ASSERT_TRUE(wait_until([&] { return step->load() == 2; }, 5 * kSec));
    EXPECT_FALSE(readable(fd, 300)) << "readable without a notify: the helper polls";
    step->store(3);
    EXPECT_TRUE(readable(fd, 5000));
    EXPECT_EQ(kids_.wait(kid, 5 * kSec), "");
    EXPECT_EQ(mdcom_fd_clear(fd), (int)MDCOM_EV_RX);
    EXPECT_TRUE(readable(fd, 0)) << "level: still readable while a block is queued";
    char buf[64];
    EXPECT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), 8);
    EXPECT_EQ(mdcom_fd_clear(fd), 0);
    EXPECT_FALSE(readable(fd, 0));
    EXPECT_EQ(mdcom_fd_close(fd), 0);
    EXPECT_EQ(waiters_of(ch), 0u) << "notify must be free again once the fd is closed";
    EXPECT_EQ(mdcom_fd_close(fd), -EBADF);
    EXPECT_EQ(mdcom_fd_clear(fd), -EBADF);
}

/* Level semantics within one process: readable while any queued block
 * remains, for TX as well; NOTIFY is an edge consumed by clear. */
TEST_F(Events, LevelSemantics)
{
    channels(1);
    sys_.channels[0].senders = 3;
    sys_.channels[0].receivers = 3;
    Inst a;
    ASSERT_EQ(attach(&a.m, sys_.get(), kA, 0), 0);
    mdcom_fifoch_t *ch = fifo(a, "c0");
    int rx = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    int tx = mdcom_fifoch_fd(ch, MDCOM_EV_TX);
    int nt = mdcom_fifoch_fd(ch, MDCOM_EV_NOTIFY);
    ASSERT_GE(rx, 0);
    ASSERT_GE(tx, 0);
    ASSERT_GE(nt, 0);
    EXPECT_EQ(waiters_of(ch), 3u);
    EXPECT_TRUE(readable(tx, 5000)) << "blocks are free";
    EXPECT_FALSE(readable(rx, 100));
    EXPECT_FALSE(readable(nt, 0));
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(mdcom_fifoch_send(ch, "abc", 3, MDCOM_POLL), 0);
    EXPECT_TRUE(readable(rx, 5000));
    EXPECT_TRUE(readable(nt, 5000));
    EXPECT_EQ(mdcom_fd_clear(tx), 0) << "pool empty";
    EXPECT_FALSE(readable(tx, 0));
    EXPECT_EQ(mdcom_fd_clear(nt), (int)MDCOM_EV_NOTIFY);
    EXPECT_EQ(mdcom_fd_clear(nt), 0) << "NOTIFY is an edge";
    EXPECT_FALSE(readable(nt, 0));
    char buf[8];
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(mdcom_fd_clear(rx), (int)MDCOM_EV_RX);
        EXPECT_TRUE(readable(rx, 0));
        EXPECT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), 3); /* frees + notifies */
        EXPECT_TRUE(readable(tx, 5000)) << "a freed block makes TX hold";
    }
    EXPECT_EQ(mdcom_fd_clear(rx), 0);
    EXPECT_FALSE(readable(rx, 0));
    for (int fd : {rx, tx, nt})
        EXPECT_EQ(mdcom_fd_close(fd), 0);
    EXPECT_EQ(waiters_of(ch), 0u);
}

TEST_F(Events, Timeouts)
{
    ASSERT_TRUE(start(2));
    mdcom_waitset_t *ws;
    ASSERT_EQ(mdcom_waitset_create(a, &ws), 0);
    mdcom_event ev[4];
    uint64_t t0 = now_ns();
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 4, 100 * kMs), -ETIMEDOUT) << "empty set";
    uint64_t dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)100 * kMs);
    EXPECT_LT(dt, (uint64_t)3 * kSec);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, fifo(a, "c0"), MDCOM_EV_RX, nullptr), 0);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, fifo(a, "c1"), MDCOM_EV_RX | MDCOM_EV_NOTIFY, nullptr), 0);
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 4, MDCOM_POLL), -ETIMEDOUT);
    t0 = now_ns();
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 4, 150 * kMs), -ETIMEDOUT);
    dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)150 * kMs);
    EXPECT_LT(dt, (uint64_t)3 * kSec);
    int fd = mdcom_waitset_fd(ws);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(mdcom_waitset_fd(ws), fd) << "one fd per set";
    EXPECT_FALSE(readable(fd, 100));
    /* argument errors */
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 0, 0), -EINVAL);
    EXPECT_EQ(mdcom_waitset_add_fifo(ws, fifo(a, "c0"), MDCOM_EV_RX, nullptr), -EEXIST);
    EXPECT_EQ(mdcom_waitset_add_fifo(ws, fifo(a, "c0"), 0, nullptr), -EINVAL);
    EXPECT_EQ(mdcom_waitset_add_fifo(ws, fifo(a, "c0"), 0x100, nullptr), -EINVAL);
    EXPECT_EQ(mdcom_waitset_add_fifo(nullptr, fifo(a, "c0"), MDCOM_EV_RX, nullptr), -EINVAL);
    EXPECT_EQ(mdcom_fd_close(fd), -EBADF) << "a set's fd is closed by destroy";
    EXPECT_EQ(mdcom_waitset_destroy(ws), 0);
}

/* 40 FIFO channels and a lock in one set, 4000 messages from another process
 * in a shuffled channel order: every one arrives, through one thread. */
TEST_F(Events, ManyChannels)
{
    const uint32_t n = 40, per = 100;
    ASSERT_TRUE(start(n));
    std::vector<mdcom_fifoch_t *> ch(n);
    mdcom_waitset_t *ws;
    ASSERT_EQ(mdcom_waitset_create(a, &ws), 0);
    for (uint32_t i = 0; i < n; i++) {
        ch[i] = fifo(a, ("c" + std::to_string(i)).c_str());
        ASSERT_EQ(mdcom_waitset_add_fifo(ws, ch[i], MDCOM_EV_RX, (void *)(uintptr_t)i), 0);
    }
    pid_t kid = kids_.spawn([&] {
        Inst b;
        CHILD_CHECK(as_b(b), "attach");
        uint32_t x = 12345;
        for (uint32_t k = 0; k < n * per; k++) {
            x = x * 1103515245u + 12345u;
            uint32_t i = (x >> 8) % n;
            mdcom_fifoch_t *c;
            CHILD_CHECK(mdcom_fifoch_open(b, ("c" + std::to_string(i)).c_str(), &c) == 0, "open");
            int r = mdcom_fifoch_send(c, &i, sizeof i, 5 * kSec);
            CHILD_CHECK(r == 0, "send %d", r);
        }
        return 0;
    });
    std::vector<uint32_t> got(n, 0);
    uint32_t total = 0;
    mdcom_event ev[8];
    while (total < n * per) {
        int r = mdcom_waitset_wait(ws, ev, 8, 10 * kSec);
        ASSERT_GT(r, 0) << mdcom_strerror(r);
        for (int k = 0; k < r; k++) {
            uint32_t i = (uint32_t)(uintptr_t)ev[k].user;
            ASSERT_EQ(ev[k].ch, ch[i]);
            ASSERT_EQ(ev[k].events, MDCOM_EV_RX);
            uint32_t v;
            while (mdcom_fifoch_recv(ch[i], &v, sizeof v, MDCOM_POLL) == (int)sizeof v) {
                ASSERT_EQ(v, i);
                got[i]++;
                total++;
            }
        }
    }
    EXPECT_EQ(kids_.wait(kid, 10 * kSec), "");
    uint32_t sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += got[i];
    EXPECT_EQ(sum, n * per);
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 8, MDCOM_POLL), -ETIMEDOUT);
    EXPECT_EQ(mdcom_waitset_destroy(ws), 0);
    for (uint32_t i = 0; i < n; i++)
        EXPECT_EQ(waiters_of(ch[i]), 0u);
}

/* A removed channel no longer wakes the set; removal wakes a sleeper in
 * another thread, and an add from another thread is waited for. */
TEST_F(Events, Removal)
{
    channels(2);
    sys_.channels[0].senders = sys_.channels[1].senders = 3;
    Inst a;
    ASSERT_EQ(attach(&a.m, sys_.get(), kA, 0), 0);
    mdcom_fifoch_t *c0 = fifo(a, "c0"), *c1 = fifo(a, "c1");
    mdcom_waitset_t *ws;
    ASSERT_EQ(mdcom_waitset_create(a, &ws), 0);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, c0, MDCOM_EV_RX, nullptr), 0);
    int fd = mdcom_waitset_fd(ws);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(mdcom_waitset_remove(ws, c0), 0);
    EXPECT_EQ(mdcom_waitset_remove(ws, c0), -ENOENT);
    EXPECT_EQ(waiters_of(c0), 0u);
    ASSERT_EQ(mdcom_fifoch_send(c0, "x", 1, MDCOM_POLL), 0);
    mdcom_event ev[2];
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 2, 50 * kMs), -ETIMEDOUT);
    EXPECT_FALSE(readable(fd, 200));
    /* a waiter in another thread sees a member added meanwhile */
    std::atomic<int> res{0};
    std::thread t([&] { res = mdcom_waitset_wait(ws, ev, 2, 10 * kSec); });
    sleep_ms(100);
    ASSERT_EQ(mdcom_fifoch_send(c1, "y", 1, MDCOM_POLL), 0);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, c1, MDCOM_EV_RX, nullptr), 0);
    t.join();
    EXPECT_EQ(res.load(), 1);
    EXPECT_EQ(ev[0].ch, c1);
    EXPECT_TRUE(readable(fd, 5000));
    EXPECT_EQ(mdcom_waitset_destroy(ws), 0);
    EXPECT_EQ(waiters_of(c1), 0u);
}

/* SMEM: the fd is readable while the lock is free; an unlock by another
 * process wakes it. */
TEST_F(Events, SmemUnlockFromAnotherProcess)
{
    ASSERT_TRUE(start(1));
    mdcom_smemch_t *s;
    ASSERT_EQ(mdcom_smemch_open(a, "lock", &s), 0);
    Shared<std::atomic<int>> step;
    pid_t kid = kids_.spawn([&] {
        Inst b;
        CHILD_CHECK(as_b(b), "attach");
        mdcom_smemch_t *t;
        CHILD_CHECK(mdcom_smemch_open(b, "lock", &t) == 0, "open");
        CHILD_CHECK(mdcom_smemch_lock(t, 5 * kSec) == 0, "lock");
        step->store(1);
        await_step(*step, 2);
        CHILD_CHECK(mdcom_smemch_unlock(t) == 0, "unlock");
        return 0;
    });
    ASSERT_TRUE(wait_until([&] { return step->load() == 1; }, 5 * kSec));
    int fd = mdcom_smemch_fd(s);
    ASSERT_GE(fd, 0);
    EXPECT_FALSE(readable(fd, 300));
    step->store(2);
    EXPECT_TRUE(readable(fd, 5000));
    EXPECT_EQ(mdcom_fd_clear(fd), (int)MDCOM_EV_UNLOCKED);
    EXPECT_EQ(mdcom_smemch_trylock(s), 0);
    EXPECT_EQ(mdcom_fd_clear(fd), 0);
    EXPECT_FALSE(readable(fd, 0));
    EXPECT_EQ(mdcom_smemch_unlock(s), 0);
    EXPECT_TRUE(readable(fd, 5000)) << "our own unlock wakes it too";
    EXPECT_EQ(kids_.wait(kid, 5 * kSec), "");
    EXPECT_EQ(mdcom_fd_close(fd), 0);
}

/* The same fd works in poll, select and epoll (level and edge-triggered). */
TEST_F(Events, PollSelectEpoll)
{
    ASSERT_TRUE(start(1));
    mdcom_fifoch_t *ch = fifo(a, "c0");
    int fd = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    ASSERT_GE(fd, 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(ep, 0);
    struct epoll_event e {};
    e.events = EPOLLIN | EPOLLET;
    e.data.u32 = 7;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e), 0);
    struct epoll_event out[2];
    EXPECT_EQ(epoll_wait(ep, out, 2, 100), 0) << strerror(errno);
    pid_t kid = kids_.spawn([&] {
        Inst b;
        mdcom_fifoch_t *c;
        CHILD_CHECK(as_b(b, &c), "attach, open c0");
        for (int i = 0; i < 2; i++)
            CHILD_CHECK(mdcom_fifoch_send(c, "m", 1, 5 * kSec) == 0, "send");
        return 0;
    });
    EXPECT_EQ(kids_.wait(kid, 10 * kSec), "");
    ASSERT_EQ(epoll_wait(ep, out, 2, 5000), 1);
    EXPECT_EQ(out[0].data.u32, 7u);
    EXPECT_EQ(epoll_wait(ep, out, 2, 0), 0) << "edge-triggered: reported once";
    char buf[4];
    EXPECT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), 1);
    EXPECT_EQ(mdcom_fd_clear(fd), (int)MDCOM_EV_RX); /* one left */
    /* select sees it */
    fd_set rs;
    FD_ZERO(&rs);
    FD_SET(fd, &rs);
    struct timeval tv = {1, 0};
    EXPECT_EQ(select(fd + 1, &rs, nullptr, nullptr, &tv), 1);
    EXPECT_TRUE(FD_ISSET(fd, &rs));
    EXPECT_TRUE(readable(fd, 0));
    EXPECT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), 1);
    EXPECT_EQ(mdcom_fd_clear(fd), 0);
    FD_ZERO(&rs);
    FD_SET(fd, &rs);
    tv = {0, 100000};
    EXPECT_EQ(select(fd + 1, &rs, nullptr, nullptr, &tv), 0);
    /* level-triggered epoll on a wait set's fd, nested */
    mdcom_waitset_t *ws;
    ASSERT_EQ(mdcom_waitset_create(a, &ws), 0);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, ch, MDCOM_EV_TX, nullptr), 0);
    int wfd = mdcom_waitset_fd(ws);
    ASSERT_GE(wfd, 0);
    e.events = EPOLLIN;
    e.data.u32 = 9;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, wfd, &e), 0);
    ASSERT_EQ(epoll_wait(ep, out, 2, 5000), 1);
    EXPECT_EQ(out[0].data.u32, 9u);
    mdcom_event ev[1];
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 1, MDCOM_POLL), 1);
    EXPECT_EQ(ev[0].events, MDCOM_EV_TX);
    EXPECT_EQ(mdcom_waitset_destroy(ws), 0);
    close(ep);
    EXPECT_EQ(mdcom_fd_close(fd), 0);
}

/* mdcom_term with live sets and fds: they report -ESHUTDOWN, the fd is
 * readable, destroy/close still work. */
TEST_F(Events, TermWithLiveSets)
{
    ASSERT_TRUE(start(1));
    mdcom_fifoch_t *ch = fifo(a, "c0");
    mdcom_waitset_t *ws;
    ASSERT_EQ(mdcom_waitset_create(a, &ws), 0);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, ch, MDCOM_EV_RX, nullptr), 0);
    int fd = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    ASSERT_GE(fd, 0);
    ASSERT_GE(mdcom_waitset_fd(ws), 0);
    EXPECT_EQ(a.term(), 0);
    mdcom_event ev[1];
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 1, 100 * kMs), -ESHUTDOWN);
    EXPECT_TRUE(readable(fd, 0));
    EXPECT_EQ(mdcom_fd_clear(fd), -ESHUTDOWN);
    EXPECT_EQ(mdcom_fd_close(fd), 0);
    EXPECT_EQ(mdcom_waitset_destroy(ws), 0);
}

/* The end of the region, the contract of docs/events.md: after the master
 * terminates the region, a remote's fd wakes its loop at once (not at the
 * next periodic re-evaluation: this test runs with a 10 s slice), reports
 * POLLIN, and every evaluation (mdcom_fd_clear) answers -ESHUTDOWN: an
 * ordinary "poll, drain, clear" loop that stops on a negative clear ends
 * after a bounded number of rounds instead of spinning on a readable fd. */
TEST_F(Events, LoopEndsAfterMasterExits)
{
    sys_.channels.push_back(fifo_cfg("down", 64, 4, 0, 1u << kA, 1u << kB));
    Shared<std::atomic<int>> step;
    pid_t kid = kids_.spawn([&] {
        Inst m;
        mdcom_fifoch_t *c;
        CHILD_CHECK(attach(&m.m, sys_.get(), kA, 0) == 0, "attach as the master");
        CHILD_CHECK(mdcom_fifoch_open(m, "down", &c) == 0, "open down");
        step->store(1);
        await_step(*step, 2);
        CHILD_CHECK(mdcom_fifoch_send(c, "hi", 2, kSec) == 0, "send");
        await_step(*step, 3);
        CHILD_CHECK(m.term() == 0, "term");
        return 0;
    });
    ASSERT_TRUE(wait_until([&] { return step->load() == 1; }, 5 * kSec));
    Inst b;
    ASSERT_EQ(attach(&b.m, sys_.get(), kB, 5 * kSec), 0);
    mdcom_fifoch_t *ch = fifo(b, "down");
    int fd = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    ASSERT_GE(fd, 0);
    mdcom_waitset_t *ws; /* and a wait set's fd in an epoll */
    ASSERT_EQ(mdcom_waitset_create(b, &ws), 0);
    ASSERT_EQ(mdcom_waitset_add_fifo(ws, ch, MDCOM_EV_RX, nullptr), 0);
    int wfd = mdcom_waitset_fd(ws), ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ee = {};
    ee.events = EPOLLIN;
    ASSERT_GE(wfd, 0);
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, wfd, &ee), 0);
    step->store(2);
    int rounds = 0, msgs = 0, end = 0, n;
    int64_t t_end = 0;
    char buf[64];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        ASSERT_EQ(poll(&p, 1, 5000), 1) << "the loop was not woken (round " << rounds << ")";
        ASSERT_LT(++rounds, 50) << "the loop spins on a readable fd";
        while ((n = mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL)) > 0)
            msgs++;
        if (msgs == 1 && step->load() == 2) {
            step->store(3); /* the master may end now */
            t_end = (int64_t)now_ns();
        }
        int c = mdcom_fd_clear(fd);
        if (c < 0) {
            end = c;
            break;
        }
    }
    EXPECT_EQ(end, -ESHUTDOWN);
    EXPECT_EQ(msgs, 1);
    EXPECT_LT((int64_t)now_ns() - t_end, 2 * kSec)
        << "the end was noticed by the periodic re-evaluation only";
    EXPECT_LE(rounds, 4);
    EXPECT_TRUE(readable(fd, 0)) << "after the end the fd stays readable";
    EXPECT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), -ESHUTDOWN);
    struct epoll_event out;
    EXPECT_EQ(epoll_wait(ep, &out, 1, 0), 1) << "the wait set's fd is not readable after the end";
    mdcom_event ev[1];
    int64_t t0 = (int64_t)now_ns();
    EXPECT_EQ(mdcom_waitset_wait(ws, ev, 1, MDCOM_FOREVER), -ESHUTDOWN);
    EXPECT_LT((int64_t)now_ns() - t0, kSec) << "a wait after the end blocked";
    close(ep);
    EXPECT_EQ(mdcom_waitset_destroy(ws), 0);
    EXPECT_EQ(mdcom_fd_close(fd), 0);
    EXPECT_EQ(kids_.wait(kid, 5 * kSec), "");
}

/* The end of the region for one process: a process that promised a
 * heartbeat and stopped (SIGSTOP) is reaped by the others; when it runs
 * again, its fd is readable and its evaluations answer -ENOTCONN (the
 * contract of docs/events.md), like its channel calls, instead of reporting
 * events on blocks that are no longer its own. */
TEST_F(Events, ReapedProcessEndsItsLoop)
{
    ASSERT_TRUE(start(1));
    Shared<std::atomic<int>> step, clear_r, send_r, wait_r;
    pid_t kid = kids_.spawn([&] {
        Inst b;
        CHILD_CHECK(as_b_beating(b), "attach with a heartbeat");
        mdcom_fifoch_t *c;
        mdcom_waitset_t *ws;
        CHILD_CHECK(mdcom_fifoch_open(b, "c0", &c) == 0, "open c0");
        int fd = mdcom_fifoch_fd(c, MDCOM_EV_TX);
        CHILD_CHECK(fd >= 0, "fd");
        CHILD_CHECK(mdcom_waitset_create(b, &ws) == 0, "waitset");
        CHILD_CHECK(mdcom_waitset_add_fifo(ws, c, MDCOM_EV_TX, nullptr) == 0, "add");
        CHILD_CHECK(mdcom_fd_clear(fd) == (int)MDCOM_EV_TX, "TX holds while attached");
        step->store(1);
        await_step(*step, 2); /* stopped and reaped meanwhile */
        clear_r->store(mdcom_fd_clear(fd));
        mdcom_event ev[1];
        wait_r->store(mdcom_waitset_wait(ws, ev, 1, MDCOM_POLL));
        char buf[4];
        send_r->store(mdcom_fifoch_send(c, buf, sizeof buf, MDCOM_POLL));
        CHILD_CHECK(readable(fd, 0), "the fd of a reaped process is not readable");
        mdcom_fd_close(fd);
        mdcom_waitset_destroy(ws);
        return 0;
    });
    ASSERT_TRUE(wait_until([&] { return step->load() == 1; }, 5 * kSec));
    ASSERT_EQ(kill(kid, SIGSTOP), 0);
    EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(a, kB) == 0; }, 5 * kSec))
        << "the stopped process was not reaped";
    ASSERT_EQ(kill(kid, SIGCONT), 0);
    step->store(2);
    EXPECT_EQ(kids_.wait(kid, 5 * kSec), "");
    EXPECT_EQ(send_r->load(), -ENOTCONN) << "a channel call: the core's contract";
    EXPECT_EQ(clear_r->load(), -ENOTCONN) << "mdcom_fd_clear of a reaped process";
    EXPECT_EQ(wait_r->load(), -ENOTCONN) << "mdcom_waitset_wait of a reaped process";
}

/* A process with a heartbeat promise asleep in poll(2) on its fd does not
 * beat, so the others take it for dead and reap it: its fd then becomes
 * readable (the helper's periodic evaluation checks the process' own entry,
 * without beating for it), so the loop wakes and ends on -ENOTCONN instead
 * of sleeping until its own timeout. Runs with the default 50 ms slice
 * (events_dead). */
TEST_F(Events, DeadByHeartbeatWakesItsPoll)
{
    sys_.channels.push_back(fifo_cfg("down", 64, 4, 0, 1u << kA, 1u << kB));
    ASSERT_EQ(attach(&a.m, sys_.get(), kA, 0), 0);
    Shared<std::atomic<int>> step, poll_r, clear_r;
    Shared<std::atomic<int64_t>> slept;
    pid_t kid = kids_.spawn([&] {
        Inst b;
        CHILD_CHECK(as_b_beating(b), "attach with a heartbeat");
        mdcom_fifoch_t *c;
        CHILD_CHECK(mdcom_fifoch_open(b, "down", &c) == 0, "open down");
        int fd = mdcom_fifoch_fd(c, MDCOM_EV_RX);
        CHILD_CHECK(fd >= 0 && mdcom_fd_clear(fd) == 0, "an fd, nothing queued");
        step->store(1);
        struct pollfd p = {fd, POLLIN, 0};
        int64_t t0 = (int64_t)now_ns();
        poll_r->store(poll(&p, 1, 8000));
        slept->store((int64_t)now_ns() - t0);
        clear_r->store(mdcom_fd_clear(fd));
        mdcom_fd_close(fd);
        return 0;
    });
    ASSERT_TRUE(wait_until([&] { return step->load() == 1; }, 5 * kSec));
    EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(a, kB) == 0; }, 5 * kSec))
        << "the process asleep in poll was not reaped";
    EXPECT_EQ(kids_.wait(kid, 10 * kSec), "");
    EXPECT_EQ(poll_r->load(), 1) << "poll was not woken by the end of the attachment";
    EXPECT_LT(slept->load(), 4 * kSec) << "woken by its own timeout only";
    EXPECT_EQ(clear_r->load(), -ENOTCONN);
}

/* A notifier that dies after enqueueing, before its notify: the fd still
 * becomes readable (the helper re-evaluates every slice). A lock holder that
 * dies: the helper's reaping releases the lock and the fd becomes readable. */
TEST_F(Events, DeadNotifier)
{
    ASSERT_TRUE(start(1));
    mdcom_fifoch_t *ch = fifo(a, "c0");
    mdcom_smemch_t *s;
    ASSERT_EQ(mdcom_smemch_open(a, "lock", &s), 0);
    int fd = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    int lfd = mdcom_smemch_fd(s);
    ASSERT_GE(fd, 0);
    ASSERT_GE(lfd, 0);
    Shared<std::atomic<int>> step;
    pid_t kid = kids_.spawn([&] {
        Inst b;
        mdcom_fifoch_t *c;
        mdcom_smemch_t *t;
        CHILD_CHECK(as_b(b, &c), "attach, open c0");
        CHILD_CHECK(mdcom_smemch_open(b, "lock", &t) == 0, "open");
        CHILD_CHECK(mdcom_smemch_lock(t, 5 * kSec) == 0, "lock");
        uint32_t id;
        CHILD_CHECK(mdcom_fifoch_alloc(c, &id) == 0, "alloc");
        CHILD_CHECK(mdcom_fifoch_enqueue(c, id, 4) == 0, "enqueue");
        step->store(1);
        for (;;)
            pause(); /* killed here, without notify or unlock */
    });
    ASSERT_TRUE(wait_until([&] { return step->load() == 1; }, 5 * kSec));
    EXPECT_EQ(mdcom_fd_clear(lfd), 0);
    kill(kid, SIGKILL);
    waitpid(kid, nullptr, 0);
    kids_.forget(kid);
    EXPECT_TRUE(readable(fd, 5000));
    EXPECT_TRUE(readable(lfd, 5000)) << "the dead holder's lock was not released";
    EXPECT_EQ(mdcom_fd_clear(lfd), (int)MDCOM_EV_UNLOCKED);
    char buf[8];
    EXPECT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), 4);
    EXPECT_EQ(mdcom_fd_close(fd), 0);
    EXPECT_EQ(mdcom_fd_close(lfd), 0);
}

namespace {

/* io_uring rings open in this process (the fd path's arming). */
int uring_fds()
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (struct dirent *e = readdir(d)) {
        char path[300], link[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = 0;
            n += strstr(link, "io_uring") != nullptr;
        }
    }
    closedir(d);
    return n;
}

/* Voluntary context switches of the helper thread ("mdcom-ev"), or -1. */
long helper_switches()
{
    long v = -1;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    while (struct dirent *e = readdir(d)) {
        std::string t = std::string("/proc/self/task/") + e->d_name;
        std::ifstream comm(t + "/comm");
        std::string name;
        if (!std::getline(comm, name) || name != "mdcom-ev")
            continue;
        std::ifstream st(t + "/status");
        std::string line;
        while (std::getline(st, line))
            if (line.rfind("voluntary_ctxt_switches:", 0) == 0)
                v = strtol(line.c_str() + 24, nullptr, 10);
    }
    closedir(d);
    return v;
}

bool uring_forced_off()
{
    const char *e = getenv("MDCOM_EVENTS_NO_URING");
    return e && *e && strcmp(e, "0") != 0;
}

} // namespace

/* Which path arms the fd: with io_uring's futex op (Linux >= 6.7, not
 * disabled), notifies from another process complete the armed request and
 * signal the eventfd without waking the helper thread; with
 * MDCOM_EVENTS_NO_URING=1 (ctest "events_nouring") the helper thread does it
 * and no ring exists. Both deliver every message. */
TEST_F(Events, ArmingPath)
{
    ASSERT_TRUE(start(1));
    mdcom_fifoch_t *ch = fifo(a, "c0");
    int fd = mdcom_fifoch_fd(ch, MDCOM_EV_RX);
    ASSERT_GE(fd, 0);
    /* rings of closed fds are kept for reuse by their thread: count them all */
    int rings = uring_fds();
    if (uring_forced_off()) {
        EXPECT_EQ(rings, 0) << "MDCOM_EVENTS_NO_URING=1 must force the helper thread";
    }
    bool uring = rings >= 1;
    if (!uring && !uring_forced_off())
        printf("note: io_uring futex op unavailable here: helper-thread path\n");
    constexpr int kMsgs = 200;
    Shared<std::atomic<int>> got;
    pid_t kid = kids_.spawn([&] {
        Inst b;
        mdcom_fifoch_t *c;
        CHILD_CHECK(as_b(b, &c), "attach, open c0");
        for (int i = 0; i < kMsgs; i++) {
            CHILD_CHECK(mdcom_fifoch_send(c, "m", 1, 5 * kSec) == 0, "send");
            for (int k = 0; got->load() <= i && k < 5000; k++)
                sleep_ms(1); /* one message at a time: one notify each */
        }
        return 0;
    });
    long sw0 = helper_switches();
    char buf[4];
    for (int i = 0; i < kMsgs; i++) {
        ASSERT_TRUE(readable(fd, 5000)) << "message " << i;
        ASSERT_EQ(mdcom_fifoch_recv(ch, buf, sizeof buf, MDCOM_POLL), 1);
        EXPECT_EQ(mdcom_fd_clear(fd), 0); /* before the next message is sent */
        got->store(i + 1);
    }
    long sw1 = helper_switches();
    EXPECT_EQ(kids_.wait(kid, 10 * kSec), "");
    ASSERT_GE(sw0, 0);
    if (uring) { /* 10 s slices in this run: the helper stays asleep */
        EXPECT_LT(sw1 - sw0, kMsgs / 4) << "the helper thread was woken per message";
    } else {
        EXPECT_GE(sw1 - sw0, kMsgs / 2) << "the helper thread relays each notify";
    }
    EXPECT_EQ(mdcom_fd_close(fd), 0);
}
