/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_init.cpp - mdcom_init / mdcom_term through the Linux port, with the
 * master and remotes attached in this one process (the static pool holds
 * MDCOM_MAX_INSTANCES attachments).
 */
#include "fixture.h"

#include <signal.h>
#include <sys/wait.h>

#include <thread>

using namespace ut;

namespace {

/* Three domains, a FIFO "data" (master -> r1) of 8 blocks of bs bytes and an
 * SMEM channel "shared". */
void std_config(Config &c, const char *data = "data", uint32_t bs = 64, uint32_t bc = 8)
{
    c.std_domains(3);
    c.fifo(data, bs, bc, 0, bit(kMaster), bit(kR1));
    c.smem("shared", 128, bit(kMaster) | bit(kR1));
}

} // namespace

/* Most tests: the std_config region c, and two attachments m and r (declared
 * after c, so terminated before it is removed). */
class Init : public ::testing::Test {
protected:
    Init() { std_config(c); }
    /* Another config of the same region: std_config with the data channel
     * changed (a mismatching peer). */
    Config variant(const char *data, uint32_t bs, uint32_t bc)
    {
        Config o = Config::named(c.name());
        std_config(o, data, bs, bc);
        return o;
    }
    ::testing::AssertionResult both() { return attach_both(c, m, r); }

    Config c;
    Inst m, r;
};

TEST_F(Init, MasterThenRemoteInOneProcess)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    EXPECT_STREQ(m.err, "") << "errbuf emptied on success";
    ASSERT_EQ(0, r.init(c.get(), kR1, ms(1000))) << r.err;
    EXPECT_EQ(mdcom_domain_id(m), kMaster);
    EXPECT_EQ(mdcom_domain_id(r), kR1);
    EXPECT_NE(ut_owner(m), ut_owner(r)) << "each attachment has its own process slot";

    /* both see the same memory */
    mdcom_fifoch_t *tx = m.fifo("data"), *rx = r.fifo("data");
    ASSERT_TRUE(tx && rx);
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "hi", 3, 0));
    char buf[8] = {};
    EXPECT_EQ(3, mdcom_fifoch_recv(rx, buf, sizeof(buf), 0));
    EXPECT_STREQ(buf, "hi");
    EXPECT_EQ(0, r.term());
    EXPECT_EQ(0, m.term());
}

TEST_F(Init, RemoteAttachWithPollWhenMasterIsUp)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    EXPECT_EQ(0, r.init(c.get(), kR1, MDCOM_POLL)) << r.err;
}

TEST_F(Init, SenseProcessCounts)
{
    Inst r1, r1b;
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    EXPECT_EQ(1, mdcom_sense_process(m, kMaster));
    EXPECT_EQ(0, mdcom_sense_process(m, kR1));
    ASSERT_EQ(0, r1.init(c.get(), kR1)) << r1.err;
    EXPECT_EQ(1, mdcom_sense_process(m, kR1));
    EXPECT_EQ(1, mdcom_sense_process(r1, kMaster));
    ASSERT_EQ(0, r1b.init(c.get(), kR1)) << r1b.err;
    EXPECT_EQ(2, mdcom_sense_process(m, kR1)) << "two attachments of domain r1";
    EXPECT_EQ(0, mdcom_sense_process(m, kR2));
    EXPECT_EQ(-EINVAL, mdcom_sense_process(m, 3)) << "domain 3 is not configured";
    EXPECT_EQ(-EINVAL, mdcom_sense_process(m, 32));
    EXPECT_EQ(-EINVAL, mdcom_sense_process(m, 0xffffffffu));
    EXPECT_EQ(-EINVAL, mdcom_sense_process(nullptr, kR1));
    EXPECT_EQ(0, r1b.term());
    EXPECT_EQ(1, mdcom_sense_process(m, kR1));
    EXPECT_EQ(0, r1.term());
    EXPECT_EQ(0, mdcom_sense_process(m, kR1));
}

TEST_F(Init, RegionFileMode0600)
{
    mode_t old = umask(0); /* the port must not depend on the umask */
    int r = m.init(c.get(), kMaster);
    umask(old);
    ASSERT_EQ(0, r) << m.err;
    struct stat st;
    ASSERT_EQ(0, lstat(c.path().c_str(), &st)) << c.path();
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(st.st_uid, geteuid());
    Geometry g(c.get());
    EXPECT_EQ((uint64_t)st.st_size, g.lay.region_size);
}

TEST_F(Init, RegionFileModeFromConfig)
{
    c.mode(0640);
    mode_t old = umask(0077);
    int r = m.init(c.get(), kMaster);
    umask(old);
    ASSERT_EQ(0, r) << m.err;
    struct stat st;
    ASSERT_EQ(0, lstat(c.path().c_str(), &st));
    EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(Init, TermRemovesTheRegionFile)
{
    ASSERT_TRUE(both());
    EXPECT_TRUE(region_exists(c.name()));
    EXPECT_EQ(0, r.term());
    EXPECT_TRUE(region_exists(c.name())) << "a remote never removes the region";
    EXPECT_EQ(0, m.term());
    EXPECT_FALSE(region_exists(c.name())) << "master term removes " << c.path();
}

TEST_F(Init, KeepRegionAndRestartWithNewGeneration)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster, 0, 0, /*keep_region=*/1)) << m.err;
    const uint32_t gen1 = ut_generation(m);
    EXPECT_EQ(0, m.term());
    ASSERT_TRUE(region_exists(c.name())) << "keep_region keeps the file";
    {
        Shm shm(c.name());
        ASSERT_TRUE(shm.ok());
        EXPECT_EQ(shm.hdr()->state.load(), (uint32_t)MDCOM_ST_TERMINATED);
    }
    Inst m2;
    ASSERT_EQ(0, m2.init(c.get(), kMaster)) << m2.err;
    EXPECT_EQ(ut_generation(m2), gen1 + 1) << "re-formatting bumps the generation";
    Shm shm(c.name());
    ASSERT_TRUE(shm.ok());
    EXPECT_EQ(shm.hdr()->generation.load(), gen1 + 1);
    EXPECT_EQ(shm.hdr()->state.load(), (uint32_t)MDCOM_ST_READY);
}

TEST_F(Init, RemoteWithMismatchingConfigIsEstale)
{
    Config other = variant("data", 128, 8); /* block_size differs */
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ESTALE, r.init(other.get(), kR1, ms(3000)));
    EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000))
        << "a live master's region with another layout is refused at once";
    EXPECT_GT(std::strlen(r.err), 0u);
    EXPECT_TRUE(contains(r.err, c.name().c_str())) << r.err;
    EXPECT_TRUE(contains(r.err, "in this config")) << r.err;
    EXPECT_EQ(r.m, nullptr);
    EXPECT_EQ(1, mdcom_sense_process(m, kMaster));
    EXPECT_EQ(0, mdcom_sense_process(m, kR1)) << "a refused remote takes no process slot";
}

/* The errbuf example of mdcom.h: a block_size mismatch is reported as such
 * ("channel 'ctl': block_size 64 in region, 128 in config"). Same region_size
 * on both sides, so only the channel geometry differs. */
TEST_F(Init, MismatchMessageNamesTheChangedKey)
{
    c.region_size(1u << 20);
    Config other = variant("data", 128, 8);
    other.region_size(1u << 20);
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    EXPECT_EQ(-ESTALE, r.init(other.get(), kR1));
    EXPECT_TRUE(contains(r.err, "'data'")) << r.err;
    EXPECT_TRUE(contains(r.err, "block_size"))
        << "errbuf should name the key that differs: " << r.err;
}

TEST_F(Init, RemoteWithoutMasterTimesOut)
{
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, r.init(c.get(), kR1, ms(50)));
    uint64_t dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)ms(50)) << "returned before the attach timeout";
    EXPECT_LT(dt, (uint64_t)ms(2000));
    EXPECT_GT(std::strlen(r.err), 0u);
    EXPECT_TRUE(contains(r.err, c.name().c_str())) << r.err;
    EXPECT_FALSE(region_exists(c.name())) << "a remote never creates the region";
}

TEST_F(Init, RemoteWithPollAndNoMaster)
{
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, r.init(c.get(), kR1, MDCOM_POLL));
    EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000));
    /* also with no options at all (attach timeout 0) */
    mdcom_t *m = nullptr;
    EXPECT_EQ(-ETIMEDOUT, mdcom_init(&m, c.get(), kR1, nullptr));
    EXPECT_EQ(m, nullptr);
}

TEST_F(Init, RemoteWaitsForALateMaster)
{
    const mdcom_config *cfg = c.get(); /* once: get() rewrites the struct */
    int rr = 1;
    std::thread t([&] { rr = r.init(cfg, kR1, ms(5000)); });
    sleep_ms(30);
    ASSERT_EQ(0, m.init(cfg, kMaster)) << m.err;
    t.join();
    EXPECT_EQ(0, rr) << r.err;
}

TEST_F(Init, RemoteWaitsForReadyState)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    Shm shm(c.name());
    ASSERT_TRUE(shm.ok());
    shm.hdr()->state.store(MDCOM_ST_FORMATTING);
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ETIMEDOUT, r.init(c.get(), kR1, ms(40))) << r.err;
    EXPECT_GE(now_ns() - t0, (uint64_t)ms(40));
    /* publishing READY from another thread lets a waiting remote in */
    int rr = 1;
    const mdcom_config *cfg = c.get();
    std::thread t([&] { rr = r.init(cfg, kR1, ms(5000)); });
    sleep_ms(20);
    shm.hdr()->state.store(MDCOM_ST_READY);
    t.join();
    EXPECT_EQ(0, rr) << r.err;
}

TEST_F(Init, UnknownDomainIdIsEinval)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    for (uint32_t d : {3u, 4u, 31u, 32u, 1000u, 0xffffffffu}) {
        EXPECT_EQ(-EINVAL, r.init(c.get(), d)) << d;
        EXPECT_TRUE(contains(r.err, "domain")) << r.err;
    }
}

TEST_F(Init, InvalidArguments)
{
    mdcom_t *m = (mdcom_t *)0x1;
    EXPECT_EQ(-EINVAL, mdcom_init(nullptr, c.get(), kMaster, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_init(&m, nullptr, kMaster, nullptr));
    EXPECT_EQ(m, nullptr) << "*out cleared on failure";
    Inst i;
    c.channels[0].block_count = 0;
    EXPECT_EQ(-EINVAL, i.init(c.get(), kMaster));
    EXPECT_TRUE(contains(i.err, "block_count")) << i.err;
    EXPECT_FALSE(region_exists(c.name())) << "no region for an invalid config";
    c.channels[0].block_count = 8;
    c.region_size(100);
    EXPECT_EQ(-ENOSPC, i.init(c.get(), kMaster));
    EXPECT_TRUE(contains(i.err, "needs")) << i.err;

    /* a platform lacking hooks */
    mdcom_platform p = *mdcom_platform_default();
    p.now_ns = nullptr;
    mdcom_init_opts o;
    std::memset(&o, 0, sizeof(o));
    o.platform = &p;
    c.region_size(0);
    EXPECT_EQ(-EINVAL, mdcom_init(&m, c.get(), kMaster, &o));
}

TEST_F(Init, ErrorBufferEdgeCases)
{
    c.channels[0].block_count = 0;
    mdcom_t *m = nullptr;
    mdcom_init_opts o;
    std::memset(&o, 0, sizeof(o));
    o.errbuf = nullptr;
    o.errbuf_len = 100; /* no buffer: nothing written */
    EXPECT_EQ(-EINVAL, mdcom_init(&m, c.get(), kMaster, &o));
    char one[1] = {'x'};
    o.errbuf = one;
    o.errbuf_len = 1;
    EXPECT_EQ(-EINVAL, mdcom_init(&m, c.get(), kMaster, &o));
    EXPECT_EQ(one[0], '\0');
    char small[9];
    std::memset(small, 'x', sizeof(small));
    o.errbuf = small;
    o.errbuf_len = 8;
    EXPECT_EQ(-EINVAL, mdcom_init(&m, c.get(), kMaster, &o));
    EXPECT_EQ(std::strlen(small), 7u);
    EXPECT_EQ(small[8], 'x') << "no write past errbuf_len";
    char zero[1] = {'x'};
    o.errbuf = zero;
    o.errbuf_len = 0;
    EXPECT_EQ(-EINVAL, mdcom_init(&m, c.get(), kMaster, &o));
    EXPECT_EQ(zero[0], 'x') << "errbuf_len 0: untouched";
}

/* A second process of the master domain with the same config joins the live
 * region; only the formatting process ends it. */
TEST_F(Init, SecondMasterDomainProcessJoins)
{
    Inst m2;
    ASSERT_TRUE(both());
    mdcom_fifoch_t *tx = m.fifo("data"), *rx = r.fifo("data");
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "x", 1, 0));
    const uint32_t gen = ut_generation(m);
    ASSERT_EQ(0, m2.init(c.get(), kMaster)) << m2.err;
    EXPECT_EQ(ut_generation(m2), gen) << "joined, not re-formatted";
    EXPECT_EQ(2, mdcom_sense_process(r, kMaster));
    char b[4];
    EXPECT_EQ(1, mdcom_fifoch_recv(rx, b, sizeof(b), ms(100))) << "queued data survived";
    mdcom_fifoch_t *tx2 = m2.fifo("data");
    ASSERT_EQ(0, mdcom_fifoch_send(tx2, "y", 1, 0));
    EXPECT_EQ(1, mdcom_fifoch_recv(rx, b, sizeof(b), ms(100)));
    EXPECT_EQ(0, m2.term());
    EXPECT_TRUE(region_exists(c.name()))
        << "a joined master-domain process does not end the region";
    EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx, MDCOM_EV_RX, ms(1))) << "not terminated";
    EXPECT_EQ(0, m.term());
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_wait(rx, MDCOM_EV_RX, ms(1)));
    EXPECT_FALSE(region_exists(c.name()));
}

/* A master-domain process whose config differs from the live one must not
 * re-format (or resize) the region the first master serves: -EADDRINUSE, or
 * -ESTALE when verification names the difference. */
TEST_F(Init, SecondMasterWithOtherConfigWhileFirstIsAlive)
{
    Config other = variant("data2", 64, 8); /* same size, other name */
    Config bigger = variant("data", 64, 32);
    Inst m2;
    ASSERT_TRUE(both());
    mdcom_fifoch_t *tx = m.fifo("data"), *rx = r.fifo("data");
    for (Config *o : {&other, &bigger}) {
        ASSERT_EQ(0, mdcom_fifoch_send(tx, "x", 1, 0));
        int rc = m2.init(o->get(), kMaster);
        UT_EXPECT_ONE_OF(rc, -EADDRINUSE, -ESTALE);
        EXPECT_GT(std::strlen(m2.err), 0u);
        m2.term();
        /* the message queued before is still there, the region still READY */
        char b[4];
        EXPECT_EQ(1, mdcom_fifoch_recv(rx, b, sizeof(b), ms(100)))
            << "the live region was re-formatted under its master";
        EXPECT_EQ(-ETIMEDOUT, mdcom_fifoch_wait(rx, MDCOM_EV_RX, ms(1)))
            << "waits must not report ECONNRESET";
    }
    struct stat st;
    ASSERT_EQ(0, stat(c.path().c_str(), &st));
    Geometry g(c.get());
    EXPECT_GE((uint64_t)st.st_size, g.lay.region_size);
}

/* Same, with a second config whose region is smaller: the file of a live
 * region must not be truncated under its users (they would die of SIGBUS).
 * Run in a child process so that a crash is reported, not suffered. */
TEST(InitOwnConfig, SecondMasterMustNotTruncateALiveRegion)
{
    Config c;
    c.std_domains(2);
    c.fifo("data", 4096, 16, 0, bit(kMaster), bit(kR1));
    Config small = Config::named(c.name());
    small.std_domains(2);
    small.fifo("data", 64, 2, 0, bit(kMaster), bit(kR1));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        mdcom_t *m = nullptr, *r = nullptr, *m2 = nullptr;
        mdcom_fifoch_t *tx = nullptr, *rx = nullptr;
        if (mdcom_init(&m, c.get(), kMaster, nullptr) || mdcom_init(&r, c.get(), kR1, nullptr) ||
            mdcom_fifoch_open(m, "data", &tx) || mdcom_fifoch_open(r, "data", &rx))
            _exit(10);
        int rc = mdcom_init(&m2, small.get(), kMaster, nullptr);
        /* touch the last block through both live attachments */
        void *p;
        for (mdcom_fifoch_t *ch : {tx, rx}) {
            if (mdcom_fifoch_get(ch, 15, &p, nullptr) != 0)
                _exit(11);
            std::memset(p, 1, 4096);
        }
        _exit(rc == -EADDRINUSE || rc == -ESTALE ? 0 : 20);
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    if (WIFSIGNALED(status)) {
        ADD_FAILURE() << "the live master and remote died of signal " << WTERMSIG(status) << " ("
                      << strsignal(WTERMSIG(status)) << "): a second master truncated "
                      << "the region file before checking for a live master";
    } else {
        ASSERT_TRUE(WIFEXITED(status));
        EXPECT_NE(WEXITSTATUS(status), 10) << "setup failed";
        EXPECT_EQ(WEXITSTATUS(status), 0)
            << "second master was not refused with -EADDRINUSE / -ESTALE";
    }
}

TEST_F(Init, StaleRegionOfADeadMasterIsReused)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        mdcom_t *m = nullptr;
        int r = mdcom_init(&m, c.get(), kMaster, nullptr);
        _exit(r == 0 ? 0 : 1); /* dies without mdcom_term */
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_TRUE(region_exists(c.name()));
    uint32_t gen;
    {
        Shm shm(c.name());
        ASSERT_TRUE(shm.ok());
        EXPECT_EQ(shm.hdr()->state.load(), (uint32_t)MDCOM_ST_READY);
        gen = shm.hdr()->generation.load();
    }
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    EXPECT_EQ(ut_generation(m), gen + 1);
    EXPECT_EQ(1, mdcom_sense_process(m, kMaster)) << "the dead master's slot is gone";
    EXPECT_EQ(0, r.init(c.get(), kR1)) << r.err;
}

/* A region a scribbler damaged after its master left (keep_region): a bad
 * magic, state READY, and an entry of the master domain that names no live
 * process - our own released entry revived, a pid this platform cannot judge
 * (a process of our own domain always can be), the token wildcard. None of
 * them is a live master: the next master re-formats instead of refusing the
 * region for ever. A FORMATTING header that names this process while none of
 * its attachments formats is taken over the same way. */
TEST_F(Init, ForgedMasterEntriesDoNotHoldTheRegion)
{
    uint32_t self_pid = 0, self_tok = 0;
    ASSERT_EQ(0, mdcom_platform_linux()->proc_self(nullptr, &self_pid, &self_tok));
    struct Forge {
        const char *what;
        bool own_entry, formatting;
        uint32_t pid, token;
    } forges[] = {
        {"our own released entry, revived", true, false, 0, 0},
        {"a foreign pid in the master domain", false, false, MDCOM_PID_FOREIGN | 5u, 7u},
        {"a pid beyond Linux' range", false, false, 1u << 30, 7u},
        {"a live pid with the token wildcard", false, false, 1u, MDCOM_TOKEN_ANY},
        {"FORMATTING in our name, nobody formatting", false, true, self_pid, self_tok},
    };
    tsup::Geometry g(c.get());
    ASSERT_EQ(g.rc, 0);
    for (const Forge &f : forges) {
        SCOPED_TRACE(f.what);
        tsup::region_remove(c.name()); /* each forge on a fresh region */
        uint32_t slot;
        {
            Inst a;
            ASSERT_EQ(0, a.init(c.get(), kMaster, 0, 0, /*keep_region=*/1)) << a.err;
            slot = ut_proc_slot(a);
        }
        {
            Shm shm(c.name());
            ASSERT_TRUE(shm.ok());
            if (f.formatting) {
                shm.hdr()->fmt_pid = f.pid;
                shm.hdr()->fmt_token = f.token;
                shm.hdr()->state.store(MDCOM_ST_FORMATTING);
            } else {
                uint32_t e = f.own_entry ? slot : slot + 1;
                if (!f.own_entry) {
                    shm.set_word(g.proc_off(e, offsetof(mdcom_wire_proc, pid)), f.pid);
                    shm.set_word(g.proc_off(e, offsetof(mdcom_wire_proc, token)), f.token);
                }
                shm.set_word(g.proc_owner_off(e), MDCOM_PROC_DOMAIN_BASE + kMaster);
                shm.hdr()->magic = 0xdeadbeefu;
                shm.hdr()->state.store(MDCOM_ST_READY);
            }
        }
        Inst b;
        uint64_t t0 = now_ns();
        int rc = b.init(c.get(), kMaster, ms(2000), 0, /*keep_region=*/1);
        EXPECT_EQ(0, rc) << b.err;
        if (rc)
            continue;
        EXPECT_LT(now_ns() - t0, (uint64_t)ms(1000)) << "re-formatted at once";
        EXPECT_EQ(0, r.init(c.get(), kR1, ms(1000))) << r.err;
        EXPECT_EQ(0, r.term());
    }
}

/* A READY region whose master died: a remote with another layout waits (a new
 * master may come) and then reports the mismatch; one with the same layout
 * attaches. */
TEST_F(Init, StaleRegionAndAMismatchingRemote)
{
    Config other = variant("data", 64, 9);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        mdcom_t *m = nullptr;
        _exit(mdcom_init(&m, c.get(), kMaster, nullptr) == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    uint64_t t0 = now_ns();
    EXPECT_EQ(-ESTALE, r.init(other.get(), kR1, ms(50))) << r.err;
    uint64_t dt = now_ns() - t0;
    EXPECT_GE(dt, (uint64_t)ms(50)) << "waited for a new master";
    EXPECT_LT(dt, (uint64_t)ms(2000));
    EXPECT_TRUE(contains(r.err, "block_count")) << r.err;
    EXPECT_EQ(0, r.init(c.get(), kR1)) << r.err;
}

TEST_F(Init, RemoteOfADeadProcessIsReclaimed)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    mdcom_fifoch_t *tx = m.fifo("data");
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "x", 1, 0)); /* before the child looks */
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        mdcom_t *r = nullptr;
        mdcom_fifoch_t *ch = nullptr;
        uint32_t id;
        if (mdcom_init(&r, c.get(), kR1, nullptr) != 0)
            _exit(1);
        if (mdcom_fifoch_open(r, "data", &ch) != 0)
            _exit(2);
        if (mdcom_fifoch_dequeue(ch, &id, nullptr) != 0)
            _exit(3);
        _exit(0); /* dies holding a block */
    }
    int status = 0;
    ASSERT_EQ(pid, waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status)) << status;
    ASSERT_EQ(0, WEXITSTATUS(status));
    mdcom_fifo_state st;
    /* (no sense call here: it would reap the dead process itself) */

    /* fill every free slot so the next attach must reclaim the dead one */
    Shm shm(c.name());
    ASSERT_TRUE(shm.ok());
    Geometry g(c.get());
    mdcom_wire_proc *procs = (mdcom_wire_proc *)(shm.base + g.lay.proc_off);
    std::vector<uint32_t> filled;
    for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++) {
        if (procs[i].owner.load() == MDCOM_PROC_FREE) {
            procs[i].pid = (uint32_t)getpid();
            procs[i].token = 0;
            procs[i].owner.store(MDCOM_PROC_DOMAIN_BASE + kR2);
            filled.push_back(i);
        }
    }
    ASSERT_EQ(0, r.init(c.get(), kR1)) << r.err;
    ASSERT_EQ(0, mdcom_sense_fifoch(tx, &st));
    EXPECT_EQ(st.free_blocks, 8u) << "reclaiming the slot returned the dead process' block";
    EXPECT_EQ(st.lost, 1u) << "it had dequeued the message";
    EXPECT_EQ(st.reclaimed, 1u);
    for (uint32_t i : filled)
        procs[i].owner.store(MDCOM_PROC_FREE);
}

/* Fork a remote of domain kR1 that runs fn(instance) and then dies with
 * _exit(0) (or is killed by the parent while fn blocks: kill_after_ms > 0).
 * Returns the child's exit status as waitpid gave it. */
template <class Fn>
static pid_t fork_remote(Config &c, Fn fn)
{
    pid_t pid = fork();
    if (pid == 0) {
        mdcom_t *r = nullptr;
        if (mdcom_init(&r, c.get(), kR1, nullptr) != 0)
            _exit(1);
        _exit(fn(r));
    }
    return pid;
}
template <class Fn, class Ready>
static int die_when(Config &c, Fn fn, Ready ready)
{
    pid_t pid = fork_remote(c, fn);
    if (pid < 0)
        return -1;
    /* killed in a state where ready() holds: stopped (SIGSTOP, then a look),
     * killed if it holds, else continued and looked at again a moment
     * later; after 30 s killed anyway (a child that never gets there fails
     * the caller's checks) */
    int status = 0;
    uint64_t end = now_ns() + 30 * (uint64_t)tsup::kSec;
    for (;;) {
        kill(pid, SIGSTOP);
        if (waitpid(pid, &status, WUNTRACED) != pid || !WIFSTOPPED(status))
            return status; /* it ended by itself */
        if (ready() || now_ns() > end)
            break;
        kill(pid, SIGCONT);
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return status;
}
template <class Fn>
static int die_after(Config &c, Fn fn)
{
    pid_t pid = fork_remote(c, fn);
    if (pid < 0)
        return -1;
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

TEST_F(Init, SurvivorsReapADeadProcessAtTheirNextCall)
{
    c.fifo("back", 64, 8, 0, bit(kR1), bit(kMaster)); /* a channel the other way */
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    mdcom_fifoch_t *tx = m.fifo("data");
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "a", 1, 0));
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "b", 1, 0));
    /* dies holding a dequeued block, an allocated one and the SMEM lock */
    int st_ = die_after(c, [](mdcom_t *r) {
        mdcom_fifoch_t *ch = nullptr, *back = nullptr;
        mdcom_smemch_t *sm = nullptr;
        uint32_t id;
        if (mdcom_fifoch_open(r, "data", &ch) || mdcom_fifoch_dequeue(ch, &id, nullptr))
            return 2;
        if (mdcom_fifoch_open(r, "back", &back) || mdcom_fifoch_alloc(back, &id))
            return 3;
        if (mdcom_smemch_open(r, "shared", &sm) || mdcom_smemch_trylock(sm))
            return 4;
        return 0;
    });
    ASSERT_TRUE(WIFEXITED(st_) && WEXITSTATUS(st_) == 0) << st_;
    mdcom_smemch_t *sm = m.smem("shared");
    /* the trylock finds the lock busy, reaps, and takes it */
    EXPECT_EQ(0, mdcom_smemch_trylock(sm)) << "a dead holder's lock is released";
    EXPECT_EQ(0, mdcom_smemch_unlock(sm));
    EXPECT_EQ(0, mdcom_sense_process(m, kR1));
    mdcom_fifo_state st;
    ASSERT_EQ(0, mdcom_sense_fifoch(tx, &st));
    EXPECT_EQ(st.free_blocks, 7u) << "one block still queued, the dequeued one back";
    EXPECT_EQ(st.queued, 1u) << "its queued message stays for the next receiver";
    EXPECT_EQ(st.lost, 1u);
    EXPECT_EQ(st.reclaimed, 1u);
    ASSERT_EQ(0, mdcom_sense_fifoch(m.fifo("back"), &st));
    EXPECT_EQ(st.free_blocks, 8u) << "its allocated block is back";
    EXPECT_EQ(st.lost, 0u) << "an unsent block is not a lost message";
    EXPECT_EQ(st.reclaimed, 1u);
}

/* A reaper judges an entry's process dead from (owner word, pid, token), then
 * takes the entry by CAS on the owner word. The word names only the domain:
 * if meanwhile another reaper freed the entry and a live process of the same
 * domain claimed it, the CAS alone succeeds (ABA) and the live process is
 * reaped. mdcom_take_dead_slot checks the identity after the CAS and gives
 * the entry back. (rel_faults saw a restarted process stop being counted.) */
TEST_F(Init, ReaperGivesBackAnEntryReusedSinceItLooked)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    /* the remote promises heartbeats, so its calls check its own entry */
    mdcom_t *r = nullptr;
    mdcom_init_opts o;
    std::memset(&o, 0, sizeof(o));
    o.heartbeat_ms = 1000;
    ASSERT_EQ(0, mdcom_init(&r, c.get(), kR1, &o));
    const uint32_t slot = ut_proc_slot(r), live = MDCOM_PROC_DOMAIN_BASE + kR1;
    uint32_t pid, token;
    ut_identity(r, &pid, &token);
    ASSERT_EQ(live, ut_proc_owner_word(m, slot));
    mdcom_fifoch_t *rx = nullptr;
    ASSERT_EQ(0, mdcom_fifoch_open(r, "data", &rx));
    uint32_t id;

    /* judged: an earlier occupant of the entry (another identity) */
    EXPECT_EQ(0, ut_take_dead_slot(m, slot, live, pid + 1u, token));
    EXPECT_EQ(0, ut_take_dead_slot(m, slot, live, pid, token ^ 1u));
    EXPECT_EQ(live, ut_proc_owner_word(m, slot)) << "the live owner's word is back";
    EXPECT_EQ(1, mdcom_sense_process(m, kR1));
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx, &id, nullptr)) << "and its calls work";

    /* an owner word that changed since the look: the CAS fails */
    EXPECT_EQ(0, ut_take_dead_slot(m, slot, MDCOM_PROC_DOMAIN_BASE + kR2, pid, token));
    EXPECT_EQ(live, ut_proc_owner_word(m, slot));

    /* judged: this very process (a missed heartbeat): the entry is taken */
    EXPECT_EQ(1, ut_take_dead_slot(m, slot, live, pid, token));
    EXPECT_TRUE(MDCOM_PROC_IS_CLAIMING(ut_proc_owner_word(m, slot)));
    /* a reaper that holds it longer than the check of an identity takes
     * (~200 us) is reaping it (or the claim is one nobody finishes): the
     * process' own calls are refused, and so they are once it is freed */
    EXPECT_EQ(-ENOTCONN, mdcom_fifoch_dequeue(rx, &id, nullptr));
    ut_set_proc_owner_word(m, slot, MDCOM_PROC_FREE);
    EXPECT_EQ(-ENOTCONN, mdcom_fifoch_dequeue(rx, &id, nullptr));
    ut_set_proc_owner_word(m, slot, live);
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx, &id, nullptr));
    EXPECT_EQ(0, mdcom_term(r));
}

TEST_F(Init, ADeadSleepersWaiterCountIsGivenBack)
{
    c.fifo("back", 64, 8, 0, bit(kR1), bit(kMaster)); /* a channel the other way */
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    Shm shm(c.name());
    ASSERT_TRUE(shm.ok());
    Geometry g(c.get());
    FifoView f(shm.base, g.cl[0]); /* "data" */
    /* killed while asleep in a blocking receive: once its sleep is armed
     * (not after a fixed time: a loaded machine may take longer to get the
     * child that far) */
    int st_ = die_when(
        c,
        [](mdcom_t *r) {
            mdcom_fifoch_t *ch = nullptr;
            char b[8];
            if (mdcom_fifoch_open(r, "data", &ch))
                return 2;
            mdcom_fifoch_set_spin(ch, MDCOM_NO_SPIN);
            return mdcom_fifoch_recv(ch, b, sizeof(b), MDCOM_FOREVER) == 0 ? 0 : 3;
        },
        [&] { return rd32(f.ev_waiters()) == (1u | MDCOM_WAITERS_ARMED); });
    ASSERT_TRUE(WIFSIGNALED(st_)) << st_;
    EXPECT_EQ(rd32(f.ev_waiters()), 1u | MDCOM_WAITERS_ARMED)
        << "it died counted as a waiter, its sleep armed";
    EXPECT_EQ(0, mdcom_sense_process(m, kR1));
    EXPECT_EQ(rd32(f.ev_waiters()), 0u) << "the reaper gave the count back";
}

/* Rings of a counting doorbell (the default one underneath). */
static std::atomic<int> g_rings{0};
static void counting_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    g_rings.fetch_add(1);
    mdcom_platform_default()->doorbell.ring(ctx, word, chan);
}

/* A receiver woken but not yet run costs its senders no more wake-ups: a
 * receiver process asleep in recv is stopped; the first send rings, the
 * next ones find the sleep no longer armed. After it runs again it gets
 * every message, in order. */
TEST_F(Init, OneWakeUpPerSleepNotPerMessage)
{
    constexpr int kMsgs = 8; /* the channel's whole pool */
    mdcom_platform p = *mdcom_platform_default();
    p.doorbell.ring = counting_ring;
    mdcom_init_opts o;
    std::memset(&o, 0, sizeof(o));
    o.platform = &p;
    mdcom_t *mm = nullptr;
    ASSERT_EQ(0, mdcom_init(&mm, c.get(), kMaster, &o));
    mdcom_fifoch_t *tx = nullptr;
    ASSERT_EQ(0, mdcom_fifoch_open(mm, "data", &tx));
    Shm shm(c.name());
    ASSERT_TRUE(shm.ok());
    Geometry g(c.get());
    FifoView f(shm.base, g.cl[0]);
    pid_t pid = fork();
    if (pid == 0) {
        mdcom_t *rr = nullptr;
        mdcom_fifoch_t *ch = nullptr;
        char b[8];
        if (mdcom_init(&rr, c.get(), kR1, nullptr) || mdcom_fifoch_open(rr, "data", &ch))
            _exit(1);
        mdcom_fifoch_set_spin(ch, MDCOM_NO_SPIN);
        for (int i = 0; i < kMsgs; i++)
            if (mdcom_fifoch_recv(ch, b, sizeof(b), ms(20000)) != 1 || b[0] != (char)i)
                _exit(2 + i);
        _exit(0);
    }
    ASSERT_GT(pid, 0);
    uint32_t w = 0;
    for (int t = 0; t < 5000 && w != (1u | MDCOM_WAITERS_ARMED); t++) {
        usleep(1000);
        w = rd32(f.ev_waiters());
    }
    ASSERT_EQ(w, 1u | MDCOM_WAITERS_ARMED) << "the receiver sleeps, counted and armed";
    int st_ = 0;
    ASSERT_EQ(0, kill(pid, SIGSTOP));
    ASSERT_EQ(pid, waitpid(pid, &st_, WUNTRACED));
    ASSERT_TRUE(WIFSTOPPED(st_));
    g_rings = 0;
    for (int i = 0; i < kMsgs; i++) {
        char b = (char)i;
        ASSERT_EQ(0, mdcom_fifoch_send(tx, &b, 1, 0)) << i;
    }
    EXPECT_EQ(1, g_rings.load()) << "one wake-up for the one sleep, not one per message";
    EXPECT_EQ(rd32(f.ev_waiters()), 1u) << "still counted (it has not run), no longer armed";
    ASSERT_EQ(0, kill(pid, SIGCONT));
    ASSERT_EQ(pid, waitpid(pid, &st_, 0));
    EXPECT_TRUE(WIFEXITED(st_) && WEXITSTATUS(st_) == 0) << st_;
    EXPECT_EQ(rd32(f.ev_waiters()), 0u) << "the last sleeper out leaves the word clean";
    mdcom_term(mm);
}

TEST_F(Init, MasterTermMakesRemoteWaitsReturnEshutdown)
{
    ASSERT_TRUE(both());
    mdcom_fifoch_t *rx = r.fifo("data");
    mdcom_smemch_t *ms_ = m.smem("shared"), *rs = r.smem("shared");
    ASSERT_EQ(0, mdcom_smemch_trylock(ms_)) << "master holds the lock";

    int fifo_rc = 0, lock_rc = 0;
    uint64_t fifo_woke = 0, lock_woke = 0;
    std::thread t1([&] {
        fifo_rc = mdcom_fifoch_wait(rx, MDCOM_EV_RX, MDCOM_FOREVER);
        fifo_woke = now_ns();
    });
    std::thread t2([&] {
        lock_rc = mdcom_smemch_lock(rs, MDCOM_FOREVER);
        lock_woke = now_ns();
    });
    sleep_ms(50);
    uint64_t t_term = now_ns();
    EXPECT_EQ(0, m.term());
    t1.join();
    t2.join();
    EXPECT_EQ(-ESHUTDOWN, fifo_rc);
    EXPECT_EQ(-ESHUTDOWN, lock_rc);
    EXPECT_GE(fifo_woke, t_term) << "the FIFO wait returned before the master terminated";
    EXPECT_GE(lock_woke, t_term) << "the lock wait returned before the master terminated";
    EXPECT_LT(fifo_woke - t_term, (uint64_t)ms(2000)) << "waiters woke promptly";
    EXPECT_LT(lock_woke - t_term, (uint64_t)ms(2000)) << "waiters woke promptly";

    /* later waits too */
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_wait(rx, MDCOM_EV_RX, ms(10)));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_recv(rx, nullptr, 0, ms(10)));
    EXPECT_EQ(0, r.term());
}

/* mdcom.h: calls that start a message or wait return -ESHUTDOWN once the
 * master terminated the region; calls that finish one still work, so what is
 * queued can be drained. */
TEST_F(Init, AfterMasterTermQueuedDataDrainsThenEshutdown)
{
    ASSERT_TRUE(both());
    mdcom_fifoch_t *tx = m.fifo("data"), *rx = r.fifo("data");
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "1", 2, 0));
    ASSERT_EQ(0, mdcom_fifoch_send(tx, "2", 2, 0));
    EXPECT_EQ(0, m.term());
    uint32_t id, len;
    ASSERT_EQ(0, mdcom_fifoch_dequeue(rx, &id, &len)) << "drain after shutdown";
    EXPECT_EQ(0, mdcom_fifoch_free(rx, id));
    char b[4];
    EXPECT_EQ(2, mdcom_fifoch_recv(rx, b, sizeof(b), MDCOM_POLL)) << "a queued message is received";
    EXPECT_STREQ(b, "2");
    EXPECT_EQ(-EAGAIN, mdcom_fifoch_dequeue(rx, &id, &len));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_wait(rx, MDCOM_EV_RX, ms(5)));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_recv(rx, b, sizeof(b), ms(5)));
}

TEST_F(Init, StartingCallsAfterMasterTermAreEshutdown)
{
    c.fifo("up", 16, 4, 0, bit(kR1), bit(kMaster));
    ASSERT_TRUE(both());
    mdcom_fifoch_t *tx = r.fifo("up");
    EXPECT_EQ(0, m.term());
    uint32_t id;
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_alloc(tx, &id));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_send(tx, "x", 1, MDCOM_POLL));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_send(tx, "x", 1, ms(5)));
}

/* The same for waits with MDCOM_POLL: a receiver that polls must learn about
 * the shutdown too, not see -ETIMEDOUT for ever. */
TEST_F(Init, PollWaitAfterMasterTermIsEshutdown)
{
    ASSERT_TRUE(both());
    mdcom_fifoch_t *rx = r.fifo("data");
    mdcom_smemch_t *ms_ = m.smem("shared"), *rs = r.smem("shared");
    ASSERT_EQ(0, mdcom_smemch_trylock(ms_));
    EXPECT_EQ(0, m.term());
    char b[4];
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_wait(rx, MDCOM_EV_RX, MDCOM_POLL));
    EXPECT_EQ(-ESHUTDOWN, mdcom_fifoch_recv(rx, b, sizeof(b), MDCOM_POLL));
    EXPECT_EQ(-ESHUTDOWN, mdcom_smemch_lock(rs, MDCOM_POLL));
}

TEST_F(Init, InstancePoolLimit)
{
    const uint32_t n = ut_max_instances();
    ASSERT_GE(n, 2u);
    std::vector<Inst> v(n);
    ASSERT_EQ(0, v[0].init(c.get(), kMaster)) << v[0].err;
    for (uint32_t i = 1; i < n; i++)
        ASSERT_EQ(0, v[i].init(c.get(), kR1)) << v[i].err;
    Inst extra;
    EXPECT_EQ(-ENOSPC, extra.init(c.get(), kR2));
    EXPECT_TRUE(contains(extra.err, "MDCOM_MAX_INSTANCES")) << extra.err;
    EXPECT_EQ(0, v[n - 1].term());
    EXPECT_EQ(0, extra.init(c.get(), kR2)) << extra.err;
}

TEST_F(Init, FailedInitsDoNotLeakInstances)
{
    Config bad = variant("data", 64, 9);
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    for (int i = 0; i < 20; i++) {
        Inst r;
        EXPECT_EQ(-ESTALE, r.init(bad.get(), kR1));
        EXPECT_EQ(-EINVAL, r.init(c.get(), 17));
    }
    std::vector<Inst> v(ut_max_instances() - 1);
    for (Inst &r : v)
        EXPECT_EQ(0, r.init(c.get(), kR1)) << r.err;
}

TEST(InitOwnConfig, MoreChannelsThanThisBuildSupports)
{
    Config c;
    c.std_domains(2);
    for (uint32_t i = 0; i < ut_max_channels() + 1; i++)
        c.smem("s" + std::to_string(i), 1, bit(0));
    Inst m;
    EXPECT_EQ(-ENOSPC, m.init(c.get(), kMaster));
    EXPECT_TRUE(contains(m.err, "MDCOM_MAX_CHANNELS")) << m.err;
    c.channels.pop_back();
    EXPECT_EQ(0, m.init(c.get(), kMaster)) << m.err;
}

/* mdcom_init documents -EINVAL for an invalid config; a config with more
 * than MDCOM_MAX_DIR channels is invalid whatever this build's capacity. */
TEST(InitOwnConfig, InvalidChannelCountIsEinval)
{
    Config c;
    c.std_domains(2);
    for (uint32_t i = 0; i < MDCOM_MAX_DIR + 1; i++)
        c.smem("s" + std::to_string(i), 1, bit(0));
    Inst m;
    EXPECT_EQ(-EINVAL, m.init(c.get(), kMaster)) << m.err;
}

TEST_F(Init, HandlesAfterTermAreInvalid)
{
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    mdcom_fifoch_t *f = m.fifo("data");
    mdcom_smemch_t *s = m.smem("shared");
    mdcom_t *raw = m.m;
    EXPECT_EQ(0, m.term());
    uint32_t id;
    mdcom_fifo_state st;
    void *p;
    EXPECT_EQ(-EINVAL, mdcom_term(raw));
    EXPECT_EQ(-EINVAL, mdcom_sense_process(raw, kMaster));
    EXPECT_EQ(mdcom_domain_id(raw), UINT32_MAX);
    EXPECT_EQ(-EINVAL, mdcom_fifoch_alloc(f, &id));
    EXPECT_EQ(-EINVAL, mdcom_sense_fifoch(f, &st));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_wait(f, MDCOM_EV_RX, MDCOM_POLL));
    EXPECT_EQ(-EINVAL, mdcom_smemch_trylock(s));
    EXPECT_EQ(-EINVAL, mdcom_smemch_get(s, &p, nullptr));
    EXPECT_EQ(-EINVAL, mdcom_term(nullptr));
    EXPECT_EQ(mdcom_domain_id(nullptr), UINT32_MAX);
    mdcom_t *fake = (mdcom_t *)&st;
    EXPECT_EQ(-EINVAL, mdcom_term(fake)) << "foreign pointer";
}

TEST_F(Init, MasterRefusesARegionFileItDoesNotOwn)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to create a file owned by another user";
    int fd = open(c.path().c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, fchown(fd, 12345, 12345));
    close(fd);
    EXPECT_EQ(-EPERM, m.init(c.get(), kMaster));
    struct stat st;
    ASSERT_EQ(0, stat(c.path().c_str(), &st));
    EXPECT_EQ(st.st_uid, 12345u) << "left alone";
    EXPECT_EQ(st.st_size, 0) << "left alone";
}

TEST_F(Init, SymlinkAtTheRegionPathIsNotFollowed)
{
    std::string target = region_path(unique_name("ut-target"));
    int fd = open(target.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
    ASSERT_EQ(0, symlink(target.c_str(), c.path().c_str()));
    EXPECT_LT(m.init(c.get(), kMaster), 0) << "master must not open a symlink";
    EXPECT_LT(r.init(c.get(), kR1), 0) << "remote must not open a symlink";
    struct stat st;
    ASSERT_EQ(0, stat(target.c_str(), &st));
    EXPECT_EQ(st.st_size, 0) << "symlink target untouched";
    unlink(target.c_str());
}

TEST_F(Init, NotARegularFile)
{
    ASSERT_EQ(0, mkdir(c.path().c_str(), 0700));
    EXPECT_LT(m.init(c.get(), kMaster), 0);
    EXPECT_LT(r.init(c.get(), kR1), 0);
    rmdir(c.path().c_str());
}

TEST_F(Init, StrerrorNamesEveryDocumentedCode)
{
    for (int e : {EINVAL,          ENOENT, EPERM,     EACCES,     ENOSPC,   ETIMEDOUT,  EAGAIN,
                  ENOBUFS,         EBUSY,  EDEADLK,   EALREADY,   EMSGSIZE, EPROTO,     EBADMSG,
                  EPROTONOSUPPORT, ESTALE, ESHUTDOWN, ECONNRESET, EUSERS,   EADDRINUSE, EINTR}) {
        const char *s = mdcom_strerror(-e);
        ASSERT_NE(s, nullptr);
        EXPECT_STRNE(s, "unknown error") << e;
        EXPECT_STREQ(s, mdcom_strerror(e));
    }
    EXPECT_STREQ(mdcom_strerror(0), "success");
    EXPECT_NE(mdcom_strerror(-99999), nullptr);
}
