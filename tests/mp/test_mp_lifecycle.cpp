/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mp_lifecycle.cpp - attach order, timeouts, termination, liveness and
 * geometry checks across real processes (Linux port, real /dev/shm region):
 *
 *   MpAttach         remote started before the master (waits, then traffic
 *                    flows); master first, remote later; a remote whose master
 *                    never comes (or never formats) gets -ETIMEDOUT in time.
 *   MpTimeouts       a receiver blocked with MDCOM_FOREVER wakes on the other
 *                    process' send / notify; finite waits time out on time;
 *                    with the adaptive spin and with MDCOM_NO_SPIN (futex).
 *   MpShutdown       the master terminates while a remote waits: the wait
 *                    returns -ESHUTDOWN at once, not at its timeout.
 *   MpSenseProcess   mdcom_sense_process counts live processes per domain; a
 *                    process killed with SIGKILL no longer counts.
 *   MpGeometry       a remote whose config differs gets -ESTALE and an errbuf
 *                    naming the channel and the field.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>

#include <atomic>
#include <string>

#include "mdcom/mdcom.h"
#include "mp/mp_sys.h"
#include "mp/mp_util.h"

using namespace mdt;

namespace {

/* How late a timed call may return: scheduling on a loaded 2-core machine,
 * sanitizers. The lower bound is always exact (never early). */
constexpr int64_t kSlack = 900 * kMs;
/* How soon a wake-up (send, notify, unlock, terminate) must reach a sleeper. */
constexpr int64_t kWakeMax = 900 * kMs;

Config chat_system(const std::string &region)
{
    Config s = Config::two_domains(region);
    s.channels.push_back(fifo_cfg("ab", 128, 8, 0, 1u << 0, 1u << 1));
    s.channels.push_back(fifo_cfg("ba", 128, 8, 0, 1u << 1, 1u << 0));
    return s;
}

/* Message i: "<i>:" followed by a pattern, with a trailing CRC-32. */
uint32_t make_msg(uint8_t *buf, uint32_t i)
{
    uint32_t n = (uint32_t)snprintf(reinterpret_cast<char *>(buf), 32, "%u:", i);
    uint32_t plen = 8 + i % 100;
    for (uint32_t k = 0; k < plen; k++)
        buf[n + k] = (uint8_t)(i * 31 + k);
    n += plen;
    uint32_t c = crc32(buf, n);
    memcpy(buf + n, &c, 4);
    return n + 4;
}

/* The remote side of a ping-pong: echo `count` messages from "ab" on "ba". */
int echo(mdcom_t *m, uint32_t count)
{
    mdcom_fifoch_t *ab = nullptr, *ba = nullptr;
    CHILD_CHECK(mdcom_fifoch_open(m, "ab", &ab) == 0, "open ab");
    CHILD_CHECK(mdcom_fifoch_open(m, "ba", &ba) == 0, "open ba");
    for (uint32_t i = 0; i < count; i++) {
        uint8_t buf[128];
        int n = mdcom_fifoch_recv(ab, buf, sizeof(buf), 10 * kSec);
        CHILD_CHECK(n > 0, "recv #%u = %d (%s)", i, n, mdcom_strerror(n));
        int r = mdcom_fifoch_send(ba, buf, (uint32_t)n, 10 * kSec);
        CHILD_CHECK(r == 0, "send #%u = %d (%s)", i, r, mdcom_strerror(r));
    }
    return 0;
}

/* The master side: send `count` messages and check each echo. */
void ping(mdcom_t *m, uint32_t count)
{
    mdcom_fifoch_t *ab = nullptr, *ba = nullptr;
    ASSERT_EQ(mdcom_fifoch_open(m, "ab", &ab), 0);
    ASSERT_EQ(mdcom_fifoch_open(m, "ba", &ba), 0);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t out[128], in[128];
        uint32_t len = make_msg(out, i);
        ASSERT_EQ(mdcom_fifoch_send(ab, out, len, 10 * kSec), 0) << "message " << i;
        int n = mdcom_fifoch_recv(ba, in, sizeof(in), 10 * kSec);
        ASSERT_EQ(n, (int)len) << "echo of message " << i << ": " << mdcom_strerror(n);
        ASSERT_EQ(memcmp(in, out, len), 0) << "echo of message " << i << " corrupted";
    }
    mdcom_fifo_state st{};
    ASSERT_EQ(mdcom_sense_fifoch(ab, &st), 0);
    EXPECT_EQ(st.free_blocks, 8u);
    ASSERT_EQ(mdcom_sense_fifoch(ba, &st), 0);
    EXPECT_EQ(st.free_blocks, 8u);
}

/* ------------------------------------------------------------------ */
/* attach order                                                         */
/* ------------------------------------------------------------------ */

/* The tests' region described by chat_system(), as sys. */
class ChatFixture : public MpFixture {
protected:
    void SetUp() override
    {
        MpFixture::SetUp();
        sys = chat_system(region_);
    }
    Config sys = Config::named("");
};

struct AttachShared {
    std::atomic<uint32_t> stage{0};
    std::atomic<int> rc{1};
    std::atomic<uint64_t> t_start{0}, t_end{0};
    char err[256];
};

class MpAttach : public ChatFixture {};
class MpAttachBeforeMaster : public ChatFixture, public ::testing::WithParamInterface<int64_t> {};

TEST_P(MpAttachBeforeMaster, RemoteWaitsThenTrafficFlows)
{
    const int64_t attach_timeout = GetParam();
    Shared<AttachShared> sh;
    const mdcom_config *cfg = sys.get();

    pid_t pid = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        std::string err;
        sh->stage.store(1);
        sh->t_start.store(now_ns());
        int r = attach(&m, cfg, 1, attach_timeout, 0, &err);
        sh->t_end.store(now_ns());
        sh->rc.store(r);
        snprintf(sh->err, sizeof(sh->err), "%s", err.c_str());
        CHILD_CHECK(r == 0, "remote init = %d (%s): %s", r, mdcom_strerror(r), err.c_str());
        int rc = echo(m, 1000);
        CHILD_CHECK(wait_until([&] { return sh->stage.load() >= 2; }, 20 * kSec), "stage 2");
        CHILD_CHECK(mdcom_term(m) == 0, "term");
        return rc;
    });
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 1; }, 10 * kSec));
    sleep_ms(200);
    EXPECT_FALSE(region_exists(region_)) << "the remote must not create the region";
    EXPECT_EQ(sh->t_end.load(), 0u)
        << "the remote's init returned before the master existed: " << sh->rc.load() << " "
        << sh->err;
    Inst master;
    uint64_t t_master = now_ns();
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL), 0);
    ping(master, 1000);
    sh->stage.store(2);
    EXPECT_EQ(kids_.wait(pid, 20 * kSec), "");
    EXPECT_EQ(sh->rc.load(), 0) << sh->err;
    EXPECT_GE(sh->t_end.load(), t_master) << "attached before the master formatted the region";
    EXPECT_LT((int64_t)(sh->t_end.load() - t_master), kWakeMax)
        << "the waiting remote noticed the master late";
    EXPECT_EQ(mdcom_sense_process(master, 1), 0);
    EXPECT_EQ(master.term(), 0);
    EXPECT_FALSE(region_exists(region_)) << "the master's term removes the region";
}

INSTANTIATE_TEST_SUITE_P(AttachTimeout, MpAttachBeforeMaster,
                         ::testing::Values(5 * kSec, MDCOM_FOREVER),
                         [](const ::testing::TestParamInfo<int64_t> &i) {
                             return std::string(i.param < 0 ? "Forever" : "FiveSeconds");
                         });

TEST_F(MpAttach, MasterFirstThenRemoteWithPoll)
{
    Shared<AttachShared> sh;
    const mdcom_config *cfg = sys.get();
    Inst master;
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL), 0);
    EXPECT_TRUE(region_exists(region_));
    sleep_ms(50);
    pid_t pid = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        int r = attach(&m, cfg, 1, MDCOM_POLL); /* the region is ready: no wait needed */
        CHILD_CHECK(r == 0, "remote init with POLL = %d (%s)", r, mdcom_strerror(r));
        CHILD_CHECK(mdcom_sense_process(m, 0) == 1, "master not seen");
        int rc = echo(m, 200);
        CHILD_CHECK(mdcom_term(m) == 0, "term");
        return rc;
    });
    ASSERT_GT(pid, 0);
    ping(master, 200);
    EXPECT_EQ(kids_.wait(pid, 20 * kSec), "");
    EXPECT_EQ(mdcom_sense_process(master, 1), 0);
    EXPECT_EQ(mdcom_sense_process(master, 0), 1);
}

/* A remote whose master never comes: -ETIMEDOUT after its attach timeout. */
void expect_attach_timeout(Children &kids, Config &sys, int64_t timeout)
{
    Shared<AttachShared> sh;
    const mdcom_config *cfg = sys.get();
    pid_t pid = kids.spawn([&] {
        mdcom_t *m = nullptr;
        std::string err;
        uint64_t t = now_ns();
        int r = attach(&m, cfg, 1, timeout, 0, &err);
        sh->t_end.store(now_ns() - t);
        sh->rc.store(r);
        snprintf(sh->err, sizeof(sh->err), "%s", err.c_str());
        return 0;
    });
    ASSERT_GT(pid, 0);
    EXPECT_EQ(kids.wait(pid, timeout + 10 * kSec), "");
    EXPECT_EQ(sh->rc.load(), -ETIMEDOUT) << mdcom_strerror(sh->rc.load()) << ": " << sh->err;
    int64_t el = (int64_t)sh->t_end.load();
    EXPECT_GE(el, timeout) << "gave up early";
    EXPECT_LT(el, timeout + kSlack) << "gave up late";
    EXPECT_NE(std::string(sh->err).find(sys.region), std::string::npos)
        << "errbuf should name the region: '" << sh->err << "'";
}

TEST_F(MpAttach, RemoteWithoutMasterTimesOut)
{
    expect_attach_timeout(kids_, sys, 300 * kMs);
    EXPECT_FALSE(region_exists(region_)) << "a remote must not leave a region behind";
}

TEST_F(MpAttach, RemoteOfNeverFormattedRegionTimesOut)
{
    /* the file exists (a master that died while creating it) but is never formatted */
    int fd = open(region_path(region_).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << strerror(errno);
    ASSERT_EQ(ftruncate(fd, 1 << 16), 0);
    close(fd);
    expect_attach_timeout(kids_, sys, 300 * kMs);
}

/* ------------------------------------------------------------------ */
/* timeouts and wake-ups across processes                               */
/* ------------------------------------------------------------------ */

struct WakeShared {
    std::atomic<uint32_t> stage{0};
    std::atomic<uint64_t> t_send{0}, t_wake{0};
    std::atomic<uint64_t> t_notify{0}, t_wake_notify{0};
    std::atomic<uint64_t> t_reply{0};
};

class MpTimeouts : public ChatFixture, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(MpTimeouts, ForeverWakesAndFiniteTimesOut)
{
    const uint32_t spin = GetParam();
    Shared<WakeShared> sh;
    const mdcom_config *cfg = sys.get();
    Inst master;
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL, spin), 0);
    mdcom_fifoch_t *ab = nullptr, *ba = nullptr;
    ASSERT_EQ(mdcom_fifoch_open(master, "ab", &ab), 0);
    ASSERT_EQ(mdcom_fifoch_open(master, "ba", &ba), 0);

    pid_t pid = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        int r = attach(&m, cfg, 1, 5 * kSec, spin);
        CHILD_CHECK(r == 0, "init = %d", r);
        mdcom_fifoch_t *rx = nullptr, *tx = nullptr;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &rx) == 0, "open ab");
        CHILD_CHECK(mdcom_fifoch_open(m, "ba", &tx) == 0, "open ba");
        uint8_t buf[128];

        /* nothing is sent: finite waits time out, on time */
        uint64_t t = now_ns();
        r = mdcom_fifoch_wait(rx, MDCOM_EV_RX, MDCOM_POLL);
        CHILD_CHECK(r == -ETIMEDOUT, "wait(POLL) = %d", r);
        r = mdcom_fifoch_recv(rx, buf, sizeof(buf), MDCOM_POLL);
        CHILD_CHECK(r == -ETIMEDOUT, "recv(POLL) = %d", r);
        CHILD_CHECK((int64_t)(now_ns() - t) < kSlack, "POLL calls blocked");
        t = now_ns();
        r = mdcom_fifoch_wait(rx, MDCOM_EV_RX, 200 * kMs);
        int64_t el = (int64_t)(now_ns() - t);
        CHILD_CHECK(r == -ETIMEDOUT, "wait(EV_RX, 200 ms) = %d (%s)", r, mdcom_strerror(r));
        CHILD_CHECK(el >= 200 * kMs && el < 200 * kMs + kSlack, "wait(200 ms) took %lld ms",
                    (long long)(el / kMs));
        t = now_ns();
        r = mdcom_fifoch_recv(rx, buf, sizeof(buf), 150 * kMs);
        el = (int64_t)(now_ns() - t);
        CHILD_CHECK(r == -ETIMEDOUT, "recv(150 ms) = %d (%s)", r, mdcom_strerror(r));
        CHILD_CHECK(el >= 150 * kMs && el < 150 * kMs + kSlack, "recv(150 ms) took %lld ms",
                    (long long)(el / kMs));

        /* blocked forever: woken by the other process' send */
        sh->stage.store(1);
        r = mdcom_fifoch_recv(rx, buf, sizeof(buf), MDCOM_FOREVER);
        sh->t_wake.store(now_ns());
        CHILD_CHECK(r == 5 && memcmp(buf, "hello", 5) == 0, "recv(FOREVER) = %d (%s)", r,
                    mdcom_strerror(r));

        /* blocked forever on EV_NOTIFY (an edge: the notify of the send
         * above does not count) until a bare notify of the other process */
        r = mdcom_fifoch_wait(rx, MDCOM_EV_NOTIFY, MDCOM_POLL);
        CHILD_CHECK(r == -ETIMEDOUT, "wait(EV_NOTIFY, POLL) = %d: an old notify counted", r);
        sh->stage.store(2);
        r = mdcom_fifoch_wait(rx, MDCOM_EV_NOTIFY, MDCOM_FOREVER);
        sh->t_wake_notify.store(now_ns());
        CHILD_CHECK(r > 0 && (r & MDCOM_EV_NOTIFY), "wait(EV_NOTIFY, FOREVER) = %d", r);
        CHILD_CHECK(mdcom_fifoch_wait(rx, MDCOM_EV_NOTIFY, MDCOM_POLL) == -ETIMEDOUT,
                    "EV_NOTIFY is an edge, not a level");

        /* the other direction: the parent blocks, we send late */
        CHILD_CHECK(wait_until([&] { return sh->stage.load() >= 3; }, 10 * kSec), "stage 3");
        sleep_ms(200);
        sh->t_reply.store(now_ns());
        r = mdcom_fifoch_send(tx, "reply", 5, 10 * kSec);
        CHILD_CHECK(r == 0, "send(reply) = %d", r);
        CHILD_CHECK(wait_until([&] { return sh->stage.load() >= 4; }, 10 * kSec), "stage 4");
        CHILD_CHECK(mdcom_term(m) == 0, "term");
        return 0;
    });
    ASSERT_GT(pid, 0);

    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 1; }, 10 * kSec));
    sleep_ms(200); /* the child is asleep in recv(FOREVER) */
    EXPECT_EQ(sh->t_wake.load(), 0u) << "recv(FOREVER) returned with nothing sent";
    sh->t_send.store(now_ns());
    ASSERT_EQ(mdcom_fifoch_send(ab, "hello", 5, kSec), 0);

    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 2; }, 10 * kSec));
    sleep_ms(200);
    EXPECT_EQ(sh->t_wake_notify.load(), 0u) << "wait(EV_NOTIFY, FOREVER) returned early";
    sh->t_notify.store(now_ns());
    ASSERT_EQ(mdcom_fifoch_notify(ab), 0);
    ASSERT_TRUE(wait_until([&] { return sh->t_wake_notify.load() != 0; }, 10 * kSec));

    sh->stage.store(3);
    uint8_t buf[16];
    int n = mdcom_fifoch_recv(ba, buf, sizeof(buf), 10 * kSec);
    uint64_t t_got = now_ns();
    EXPECT_EQ(n, 5) << mdcom_strerror(n);
    sh->stage.store(4);
    EXPECT_EQ(kids_.wait(pid, 20 * kSec), "");

    int64_t d1 = (int64_t)(sh->t_wake.load() - sh->t_send.load());
    int64_t d2 = (int64_t)(sh->t_wake_notify.load() - sh->t_notify.load());
    int64_t d3 = (int64_t)(t_got - sh->t_reply.load());
    EXPECT_GE(d1, 0);
    EXPECT_LT(d1, kWakeMax) << "recv(FOREVER) woke " << d1 / kMs << " ms after the send";
    EXPECT_GE(d2, 0);
    EXPECT_LT(d2, kWakeMax) << "wait(EV_NOTIFY) woke " << d2 / kMs << " ms after the notify";
    EXPECT_GE(d3, 0);
    EXPECT_LT(d3, kWakeMax) << "recv(10 s) woke " << d3 / kMs << " ms after the send";
}

const auto kSpinName = [](const ::testing::TestParamInfo<uint32_t> &i) {
    return std::string(i.param == MDCOM_NO_SPIN ? "NoSpin" : "DefaultSpin");
};
INSTANTIATE_TEST_SUITE_P(Spin, MpTimeouts, ::testing::Values(0u, MDCOM_NO_SPIN), kSpinName);

/* ------------------------------------------------------------------ */
/* master termination                                                   */
/* ------------------------------------------------------------------ */

enum class Blocked { WaitRx, Recv, WaitRxForever, SendFullPool, Lock };
struct ShutdownCase {
    Blocked what;
    uint32_t spin;
};

struct ShutdownShared {
    std::atomic<uint32_t> stage{0};
    std::atomic<int> rc{1};
    std::atomic<uint64_t> t_ret{0};
};

class MpShutdown : public ChatFixture, public ::testing::WithParamInterface<ShutdownCase> {};

TEST_P(MpShutdown, RemoteWaitReturnsEshutdownPromptly)
{
    const ShutdownCase k = GetParam();
    Shared<ShutdownShared> sh;
    sys.channels.push_back(smem_cfg("lock", 64, 3u));
    const mdcom_config *cfg = sys.get();
    Inst master;
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL, k.spin), 0);
    mdcom_smemch_t *lk = nullptr;
    ASSERT_EQ(mdcom_smemch_open(master, "lock", &lk), 0);
    if (k.what == Blocked::Lock) {
        ASSERT_EQ(mdcom_smemch_trylock(lk), 0);
    }

    pid_t pid = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        int r = attach(&m, cfg, 1, 5 * kSec, k.spin);
        CHILD_CHECK(r == 0, "init = %d", r);
        mdcom_fifoch_t *rx = nullptr, *tx = nullptr;
        mdcom_smemch_t *l = nullptr;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &rx) == 0, "open ab");
        CHILD_CHECK(mdcom_fifoch_open(m, "ba", &tx) == 0, "open ba");
        CHILD_CHECK(mdcom_smemch_open(m, "lock", &l) == 0, "open lock");
        uint8_t buf[128] = {0};
        if (k.what == Blocked::SendFullPool) {
            int sent = 0;
            while ((r = mdcom_fifoch_send(tx, buf, 16, MDCOM_POLL)) == 0)
                sent++;
            CHILD_CHECK(r == -ETIMEDOUT && sent == 8,
                        "send(POLL) on a full pool = %d (%s) after %d sends", r, mdcom_strerror(r),
                        sent);
        }
        sh->stage.store(1);
        switch (k.what) {
        case Blocked::WaitRx:
            r = mdcom_fifoch_wait(rx, MDCOM_EV_RX, 10 * kSec);
            break;
        case Blocked::Recv:
            r = mdcom_fifoch_recv(rx, buf, sizeof(buf), 10 * kSec);
            break;
        case Blocked::WaitRxForever:
            r = mdcom_fifoch_wait(rx, MDCOM_EV_RX, MDCOM_FOREVER);
            break;
        case Blocked::SendFullPool:
            r = mdcom_fifoch_send(tx, buf, 16, 10 * kSec);
            break;
        case Blocked::Lock:
            r = mdcom_smemch_lock(l, 10 * kSec);
            break;
        }
        sh->t_ret.store(now_ns());
        sh->rc.store(r);
        /* later waits fail at once too */
        uint64_t t = now_ns();
        int r2 = mdcom_fifoch_wait(rx, MDCOM_EV_RX, 10 * kSec);
        CHILD_CHECK(r2 == -ESHUTDOWN, "a wait after termination = %d (%s)", r2, mdcom_strerror(r2));
        CHILD_CHECK((int64_t)(now_ns() - t) < kWakeMax, "a wait after termination blocked");
        CHILD_CHECK(mdcom_term(m) == 0, "term after the master's termination");
        return 0;
    });
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 1; }, 10 * kSec));
    sleep_ms(200); /* the child is asleep */
    EXPECT_EQ(sh->t_ret.load(), 0u) << "the blocked call returned early: " << sh->rc.load();
    uint64_t t_term = now_ns();
    ASSERT_EQ(master.term(), 0);
    EXPECT_FALSE(region_exists(region_));
    EXPECT_EQ(kids_.wait(pid, 20 * kSec), "");
    EXPECT_EQ(sh->rc.load(), -ESHUTDOWN) << mdcom_strerror(sh->rc.load());
    int64_t d = (int64_t)(sh->t_ret.load() - t_term);
    EXPECT_GE(d, 0);
    EXPECT_LT(d, kWakeMax) << "returned " << d / kMs << " ms after the termination";
}

std::string shutdown_name(const ::testing::TestParamInfo<ShutdownCase> &i)
{
    static const char *names[] = {"WaitRx10s", "Recv10s", "WaitRxForever", "SendFullPool10s",
                                  "Lock10s"};
    return std::string(names[(int)i.param.what]) +
           (i.param.spin == MDCOM_NO_SPIN ? "_NoSpin" : "_DefaultSpin");
}

INSTANTIATE_TEST_SUITE_P(Blocked, MpShutdown,
                         ::testing::Values(ShutdownCase{Blocked::WaitRx, 0},
                                           ShutdownCase{Blocked::Recv, 0},
                                           ShutdownCase{Blocked::WaitRxForever, 0},
                                           ShutdownCase{Blocked::SendFullPool, 0},
                                           ShutdownCase{Blocked::Lock, 0},
                                           ShutdownCase{Blocked::WaitRx, MDCOM_NO_SPIN},
                                           ShutdownCase{Blocked::Recv, MDCOM_NO_SPIN},
                                           ShutdownCase{Blocked::WaitRxForever, MDCOM_NO_SPIN},
                                           ShutdownCase{Blocked::SendFullPool, MDCOM_NO_SPIN},
                                           ShutdownCase{Blocked::Lock, MDCOM_NO_SPIN}),
                         shutdown_name);

/* ------------------------------------------------------------------ */
/* process liveness                                                     */
/* ------------------------------------------------------------------ */

struct SenseShared {
    std::atomic<uint32_t> attached{0};
    std::atomic<uint32_t> failed{0};
    std::atomic<uint32_t> quit{0};
    std::atomic<int> seen_a{-100}, seen_b{-100};
};

class MpSenseProcess : public ChatFixture {};

/* Fork a child attached as domain dom that stays until sh->quit (or killed). */
pid_t spawn_member(Children &kids, SenseShared *sh, const mdcom_config *cfg, uint32_t dom,
                   uint32_t expect_attached)
{
    return kids.spawn([=] {
        mdcom_t *m = nullptr;
        int r = attach(&m, cfg, dom, 5 * kSec);
        if (r != 0)
            sh->failed.fetch_add(1);
        CHILD_CHECK(r == 0, "init(domain %u) = %d (%s)", dom, r, mdcom_strerror(r));
        sh->attached.fetch_add(1);
        if (wait_until([&] { return sh->attached.load() >= expect_attached; }, 10 * kSec)) {
            sh->seen_a.store(mdcom_sense_process(m, 0));
            sh->seen_b.store(mdcom_sense_process(m, 1));
        }
        CHILD_CHECK(wait_until([&] { return sh->quit.load() != 0; }, 30 * kSec), "quit");
        CHILD_CHECK(mdcom_term(m) == 0, "term");
        return 0;
    });
}

/* Wait until pid has exited without reaping it (it stays a zombie). */
void wait_zombie(pid_t pid)
{
    siginfo_t si{};
    int r;
    while ((r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) != 0 && errno == EINTR) {
    }
    ASSERT_EQ(r, 0) << strerror(errno);
}

TEST_F(MpSenseProcess, CountsPerDomainAndForgetsKilledProcesses)
{
    Shared<SenseShared> sh;
    const mdcom_config *cfg = sys.get();
    Inst master;
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL), 0);
    EXPECT_EQ(mdcom_sense_process(master, 0), 1);
    EXPECT_EQ(mdcom_sense_process(master, 1), 0);

    pid_t b1 = spawn_member(kids_, sh.p, cfg, 1, 2);
    pid_t b2 = spawn_member(kids_, sh.p, cfg, 1, 2);
    ASSERT_GT(b1, 0);
    ASSERT_GT(b2, 0);
    ASSERT_TRUE(
        wait_until([&] { return sh->attached.load() >= 2 || sh->failed.load(); }, 10 * kSec));
    ASSERT_EQ(sh->failed.load(), 0u);
    EXPECT_EQ(mdcom_sense_process(master, 0), 1);
    EXPECT_EQ(mdcom_sense_process(master, 1), 2);
    ASSERT_TRUE(wait_until([&] { return sh->seen_b.load() != -100; }, 10 * kSec));
    EXPECT_EQ(sh->seen_a.load(), 1) << "a remote counting the master domain";
    EXPECT_EQ(sh->seen_b.load(), 2) << "a remote counting its own domain";

    /* SIGKILL: no mdcom_term, the slot stays claimed but the process is dead */
    ASSERT_EQ(kill(b1, SIGKILL), 0);
    wait_zombie(b1);
    EXPECT_EQ(mdcom_sense_process(master, 1), 1) << "a zombie is not a live process";
    std::string how = kids_.wait(b1, 5 * kSec);
    EXPECT_NE(how.find("signal 9"), std::string::npos) << how;
    EXPECT_EQ(mdcom_sense_process(master, 1), 1) << "a reaped process is not a live process";

    /* orderly exit */
    sh->quit.store(1);
    EXPECT_EQ(kids_.wait(b2, 10 * kSec), "");
    EXPECT_EQ(mdcom_sense_process(master, 1), 0);
    EXPECT_EQ(mdcom_sense_process(master, 0), 1);

    EXPECT_EQ(mdcom_sense_process(master, 2), -EINVAL) << "domain not in the configuration";
    EXPECT_EQ(mdcom_sense_process(master, 40), -EINVAL);
    EXPECT_EQ(mdcom_sense_process(nullptr, 0), -EINVAL);
}

/* The scenario has two processes in the master domain too. */
TEST_F(MpSenseProcess, CountsSecondProcessOfMasterDomain)
{
    Shared<SenseShared> sh;
    const mdcom_config *cfg = sys.get();
    Inst master;
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL), 0);

    pid_t a2 = spawn_member(kids_, sh.p, cfg, 0, 1);
    ASSERT_GT(a2, 0);
    ASSERT_TRUE(
        wait_until([&] { return sh->attached.load() >= 1 || sh->failed.load(); }, 10 * kSec));
    ASSERT_EQ(sh->failed.load(), 0u)
        << "a second process of the master domain could not attach (see its stderr)";
    EXPECT_EQ(mdcom_sense_process(master, 0), 2);
    ASSERT_TRUE(wait_until([&] { return sh->seen_a.load() != -100; }, 10 * kSec));
    EXPECT_EQ(sh->seen_a.load(), 2);
    ASSERT_EQ(kill(a2, SIGKILL), 0);
    wait_zombie(a2);
    EXPECT_EQ(mdcom_sense_process(master, 0), 1);
    kids_.wait(a2, 5 * kSec);
    EXPECT_EQ(mdcom_sense_process(master, 0), 1);
}

/* ------------------------------------------------------------------ */
/* geometry mismatch                                                    */
/* ------------------------------------------------------------------ */

struct GeoShared {
    std::atomic<int> rc{1};
    char err[256];
};

class MpGeometry : public MpFixture {
protected:
    /* master with block_size master_bs, remote (in a child) with remote_bs */
    void run(uint32_t region_size, uint32_t master_bs, uint32_t remote_bs, int *rc,
             std::string *err)
    {
        Shared<GeoShared> sh;
        Config ms = Config::two_domains(region_);
        ms.region_size(region_size);
        ms.channels.push_back(fifo_cfg("data", 256, 4, 0, 1u, 2u));
        ms.channels.push_back(fifo_cfg("ctl", master_bs, 8, 0, 1u, 2u));
        Config rs = ms;
        rs.channels[1].block_size = remote_bs;
        const mdcom_config *mcfg = ms.get();
        const mdcom_config *rcfg = rs.get();
        Inst master;
        ASSERT_EQ(attach(&master.m, mcfg, 0, MDCOM_POLL), 0);
        pid_t pid = kids_.spawn([&] {
            mdcom_t *m = nullptr;
            std::string e;
            int r = attach(&m, rcfg, 1, 2 * kSec, 0, &e);
            sh->rc.store(r);
            snprintf(sh->err, sizeof(sh->err), "%s", e.c_str());
            if (r == 0)
                mdcom_term(m);
            return 0;
        });
        ASSERT_GT(pid, 0);
        EXPECT_EQ(kids_.wait(pid, 10 * kSec), "");
        *rc = sh->rc.load();
        *err = sh->err;
        /* the refused remote took no process slot, and a matching one still attaches */
        EXPECT_EQ(mdcom_sense_process(master, 1), 0);
        pid = kids_.spawn([&] {
            mdcom_t *m = nullptr;
            int r = attach(&m, mcfg, 1, 2 * kSec);
            CHILD_CHECK(r == 0, "a matching remote after a refused one: %d", r);
            CHILD_CHECK(mdcom_term(m) == 0, "term");
            return 0;
        });
        ASSERT_GT(pid, 0);
        EXPECT_EQ(kids_.wait(pid, 10 * kSec), "");
    }
};

TEST_F(MpGeometry, BlockSizeDiffersSameFootprint)
{
    /* 100 and 120 both round to a 128-byte stride: only block_size differs */
    int rc = 0;
    std::string err;
    run(1u << 16, 100, 120, &rc, &err);
    EXPECT_EQ(rc, -ESTALE) << mdcom_strerror(rc);
    EXPECT_NE(err.find("'ctl'"), std::string::npos) << "errbuf: " << err;
    EXPECT_NE(err.find("block_size"), std::string::npos) << "errbuf: " << err;
    EXPECT_NE(err.find("100"), std::string::npos) << "errbuf: " << err;
    EXPECT_NE(err.find("120"), std::string::npos) << "errbuf: " << err;
}

TEST_F(MpGeometry, BlockSizeDiffersDocumentedExample)
{
    /* the example of mdcom.h / docs/architecture.md: 64 in the region, 128 in
     * the remote's config, region sized by the layout (region_size 0) */
    int rc = 0;
    std::string err;
    run(0, 64, 128, &rc, &err);
    EXPECT_EQ(rc, -ESTALE) << mdcom_strerror(rc);
    EXPECT_NE(err.find("'ctl'"), std::string::npos) << "errbuf: " << err;
    EXPECT_NE(err.find("block_size"), std::string::npos) << "errbuf: " << err;
}

} // namespace
