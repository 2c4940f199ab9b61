/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_restart.cpp - re-attaching across restarts and what a writer of the
 * region (a scribbler of the same uid) can no longer wedge for ever, each
 * with real processes on a real region of the Linux port:
 *
 *   Reattach.*   a remote that maps the region file while its master's term
 *                unlinks it follows the path to the new master's file
 *   Liveness.*   process entries forged to name a live process and its real
 *                token (pid 1, readable by anyone) are not live attachments:
 *                they hold no liveness lock and are reclaimed
 *   Waiters.*    a waiter count forged to the top of its range is repaired
 *   InitFail.*   a master whose init fails on the file it created leaves a
 *                remote a clear error at once, not an attach timeout
 *   Sibling.*    a process of the master domain that re-initialises at once
 *                when the formatter terminates formats a file at the name,
 *                never one the formatter's term then unlinks
 *   Reformat.*   a receiver of the old generation takes nothing a process
 *                of the new one queued after an in-place re-format, and
 *                what that re-format discarded is counted
 */
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mount.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

constexpr uint32_t kDomA = 0, kDomB = 1; /* a: master, b: remote */

/* The Linux port's token of process pid: its start time (field 22 of
 * /proc/<pid>/stat) + 1; what any local user can read. */
uint32_t token_of(pid_t pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t p = s.rfind(')');
    if (p == std::string::npos)
        return 0;
    std::istringstream in(s.substr(p + 2));
    std::string field;
    for (int i = 3; i <= 22 && (in >> field); i++) {
    }
    return (uint32_t)std::stoull(field) + 1u;
}

/* 1 when process pid maps the file at path (/proc/<pid>/maps). */
bool maps_file(pid_t pid, const std::string &path)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(f, line))
        if (line.find(path) != std::string::npos)
            return true;
    return false;
}

class Restart : public TwoDomainFixture {
protected:
    static mdcom_channel_cfg ab() { return fifo_cfg("ab", 64, 8, 8, 1u << kDomA, 1u << kDomB); }
    template <class Write>
    void forge(Write write)
    {
        rel::RegionView v(region_path(region_), true);
        ASSERT_TRUE(v.ok());
        write(v);
    }
    /* every FREE entry of the process table made to name pid / token as a
     * live process of domain dom (what a scribbler can write) */
    void forge_free_entries(const rel::Layout &lay, uint32_t dom, uint32_t pid, uint32_t token)
    {
        forge([&](rel::RegionView &v) {
            for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++) {
                if (v.word(lay.proc_owner_off(i)) != MDCOM_PROC_FREE)
                    continue;
                v.set_word(lay.proc_pid_off(i), pid);
                v.set_word(lay.proc_off(i, offsetof(mdcom_wire_proc, token)), token);
                v.set_word(lay.proc_owner_off(i), MDCOM_PROC_DOMAIN_BASE + dom);
            }
        });
    }
};

/* --------------------------------------------------------------------- */
/* Re-attach while the old file is unlinked                                */
/* --------------------------------------------------------------------- */

/* The race of a restart, made deterministic: the old master's region stays
 * at the path (TERMINATED, keep_region) while a remote re-attaches and maps
 * it; then the path is unlinked (what the old master's term does) and a new
 * master creates and formats a new file. The remote must attach to the new
 * region within milliseconds of its format, not wait on the dead inode. */
void reattach_over_unlinked_file(const mdcom_config *cfg, const std::string &region, Children &kids,
                                 int64_t remote_timeout)
{
    {
        Inst old;
        ASSERT_EQ(old.init(cfg, kDomA, 0, 0, /*keep_region=*/1), 0) << old.err;
    } /* term: TERMINATED, file kept */
    ASSERT_TRUE(region_exists(region));
    Shared<std::atomic<uint64_t>> formatted; /* when the new master's init started */
    Shared<std::atomic<int>> done;
    pid_t remote = kids.spawn([&] {
        uint64_t t0 = now_ns();
        mdcom_t *m = nullptr;
        int r = attach(&m, cfg, kDomB, remote_timeout);
        uint64_t t1 = now_ns();
        CHILD_CHECK(r == 0, "re-attach: %d (%s) after %.1f ms", r, mdcom_strerror(r),
                    (t1 - t0) / 1e6);
        uint64_t f = formatted->load();
        CHILD_CHECK(f != 0 && t1 > f, "attached before the new master started (%.1f ms)",
                    (t1 - t0) / 1e6);
        printf("remote attached %.2f ms after the new master's init started (%.1f ms in "
               "mdcom_init)\n",
               (t1 - f) / 1e6, (t1 - t0) / 1e6);
        /* generous for ASan on a loaded 2-core machine; the old code waited
         * on the dead file for its whole timeout (or for ever) */
        CHILD_CHECK(t1 - f < 500 * (uint64_t)kMs, "attached %.1f ms after the new master started",
                    (t1 - f) / 1e6);
        mdcom_fifoch_t *ch;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &ch) == 0, "open");
        char buf[8];
        int n = mdcom_fifoch_recv(ch, buf, sizeof buf, 5 * kSec);
        CHILD_CHECK(n == 1, "recv from the new master: %d", n);
        done->store(1);
        mdcom_term(m);
        return 0;
    });
    /* the remote has mapped the old file and waits for READY */
    ASSERT_TRUE(wait_until([&] { return maps_file(remote, region_path(region)); }, 5 * kSec));
    sleep_ms(20);
    ASSERT_EQ(unlink(region_path(region).c_str()), 0) << strerror(errno);
    Inst fresh;
    formatted->store(now_ns());
    ASSERT_EQ(fresh.init(cfg, kDomA), 0) << fresh.err;
    mdcom_fifoch_t *tx = fresh.fifo("ab");
    ASSERT_TRUE(tx);
    uint64_t end = now_ns() + 5 * (uint64_t)kSec;
    while (!done->load() && now_ns() < end) {
        mdcom_fifoch_send(tx, "x", 1, MDCOM_POLL);
        sleep_ms(2);
    }
    EXPECT_EQ(kids.wait(remote, 10 * kSec), "");
}

TEST_F(Restart, ReattachFollowsThePathToTheNewFile)
{
    sys_.channels = {ab()};
    reattach_over_unlinked_file(sys_.get(), region_, kids_, 2 * kSec);
}

TEST_F(Restart, ReattachForeverFollowsThePathToTheNewFile)
{
    sys_.channels = {ab()};
    reattach_over_unlinked_file(sys_.get(), region_, kids_, MDCOM_FOREVER);
}

/* --------------------------------------------------------------------- */
/* Liveness that a write into shared memory cannot forge                   */
/* --------------------------------------------------------------------- */

TEST_F(Restart, ForgedEntriesNamingPid1AndItsRealTokenAreReclaimed)
{
    sys_.channels = {ab()};
    const mdcom_config *cfg = sys_.get();
    rel::Layout lay(cfg);
    ASSERT_EQ(lay.rc, 0);
    Inst master;
    ASSERT_EQ(master.init(cfg, kDomA), 0) << master.err;
    /* a live remote in another process, attached before the forgery */
    Shared<std::atomic<int>> phase;
    pid_t live = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        CHILD_CHECK(attach(&m, cfg, kDomB, 5 * kSec) == 0, "attach");
        phase->store(1);
        while (phase->load() != 2)
            sleep_ms(1);
        mdcom_fifoch_t *ch;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &ch) == 0, "open");
        char buf[8];
        int n = mdcom_fifoch_recv(ch, buf, sizeof buf, 5 * kSec);
        CHILD_CHECK(n == 1, "the live remote lost its entry: recv %d (%s)", n, mdcom_strerror(n));
        mdcom_term(m);
        return 0;
    });
    ASSERT_TRUE(wait_until([&] { return phase->load() == 1; }, 5 * kSec));
    uint32_t tok1 = token_of(1);
    ASSERT_NE(tok1, 0u);
    ASSERT_EQ(mdcom_platform_linux()->proc_alive(nullptr, 1, tok1), 1) << "pid 1's token";
    forge_free_entries(lay, kDomB, 1, tok1);
    uint64_t t0 = now_ns();
    Inst r;
    EXPECT_EQ(r.init(cfg, kDomB, kSec), 0)
        << "forged entries of pid 1 with its real token fill the table: " << r.err;
    printf("attach after the forgery: %.2f ms\n", (now_ns() - t0) / 1e6);
    /* the live remote and the new one count; the forged entries do not */
    EXPECT_EQ(mdcom_sense_process(master, kDomB), 2);
    EXPECT_EQ(mdcom_sense_process(master, kDomA), 1);
    phase->store(2);
    mdcom_fifoch_t *tx = master.fifo("ab");
    ASSERT_TRUE(tx);
    EXPECT_EQ(mdcom_fifoch_send(tx, "x", 1, kSec), 0);
    EXPECT_EQ(kids_.wait(live, 10 * kSec), "");
}

/* The same with our own pid and token, and with a live child's: liveness is
 * the attachment's lock, not a process that happens to exist. */
TEST_F(Restart, ForgedEntriesNamingLiveProcessesAreReclaimed)
{
    sys_.channels = {ab()};
    const mdcom_config *cfg = sys_.get();
    rel::Layout lay(cfg);
    ASSERT_EQ(lay.rc, 0);
    Inst master;
    ASSERT_EQ(master.init(cfg, kDomA), 0) << master.err;
    pid_t idle = kids_.spawn([] {
        pause();
        return 0;
    });
    uint32_t self_pid = 0, self_tok = 0;
    ASSERT_EQ(mdcom_platform_linux()->proc_self(nullptr, &self_pid, &self_tok), 0);
    uint32_t kid_tok = 0;
    ASSERT_TRUE(wait_until([&] { return (kid_tok = token_of(idle)) != 0; }, kSec));
    forge([&](rel::RegionView &v) {
        for (uint32_t i = 0, n = 0; i < MDCOM_MAX_PROCS; i++) {
            if (v.word(lay.proc_owner_off(i)) != MDCOM_PROC_FREE)
                continue;
            bool me = n++ % 2 == 0;
            v.set_word(lay.proc_pid_off(i), me ? self_pid : (uint32_t)idle);
            v.set_word(lay.proc_off(i, offsetof(mdcom_wire_proc, token)), me ? self_tok : kid_tok);
            v.set_word(lay.proc_owner_off(i), MDCOM_PROC_DOMAIN_BASE + kDomB);
        }
    });
    Inst r;
    EXPECT_EQ(r.init(cfg, kDomB, kSec), 0) << "forged entries of live processes: " << r.err;
    EXPECT_EQ(mdcom_sense_process(master, kDomB), 1);
}

/* Master-domain entries forged into a stale region (its master died) so
 * that it looks served: the next master must format it, not join it. */
TEST_F(Restart, ForgedMasterEntriesOfPid1DoNotHoldAStaleRegion)
{
    sys_.channels = {ab()};
    const mdcom_config *cfg = sys_.get();
    rel::Layout lay(cfg);
    ASSERT_EQ(lay.rc, 0);
    pid_t dead = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        CHILD_CHECK(attach(&m, cfg, kDomA, 0) == 0, "attach");
        pause(); /* killed here: a stale region */
        return 0;
    });
    ASSERT_TRUE(wait_until(
        [&] {
            rel::RegionView v(region_path(region_));
            return v.ok() && v.size >= sizeof(mdcom_wire_hdr) &&
                   v.word(offsetof(mdcom_wire_hdr, state)) == MDCOM_ST_READY;
        },
        5 * kSec));
    kill(dead, SIGKILL);
    ASSERT_NE(kids_.wait(dead, 5 * kSec), "");
    uint32_t gen0 = 0;
    forge_free_entries(lay, kDomA, 1, token_of(1));
    {
        rel::RegionView v(region_path(region_));
        gen0 = v.word(offsetof(mdcom_wire_hdr, generation));
    }
    Inst master;
    ASSERT_EQ(master.init(cfg, kDomA, kSec), 0) << master.err;
    rel::RegionView v(region_path(region_));
    EXPECT_EQ(v.word(offsetof(mdcom_wire_hdr, generation)), gen0 + 1)
        << "the new master joined a stale region that forged entries of pid 1 held";
}

/* --------------------------------------------------------------------- */
/* Waiter counts                                                           */
/* --------------------------------------------------------------------- */

/* A count forged to the top of its range while a sleeper sleeps (the
 * forgery also clears the ARMED bit): the sleeper still wakes (at the end of
 * its slice at worst), and once it has left the count is 0 again, so that
 * notifies without sleepers write nothing and the next sleeper is woken at
 * once. */
TEST_F(Restart, WaiterCountForgedToTheLimitIsRepaired)
{
    sys_.channels = {ab()};
    const mdcom_config *cfg = sys_.get();
    rel::Layout lay(cfg);
    ASSERT_EQ(lay.rc, 0);
    Inst master;
    ASSERT_EQ(master.init(cfg, kDomA), 0) << master.err;
    mdcom_fifoch_t *tx = master.fifo("ab");
    ASSERT_TRUE(tx);
    size_t waiters = lay.cl[0].off + offsetof(mdcom_wire_fifo_ctl, event.waiters);
    size_t event = lay.cl[0].off + offsetof(mdcom_wire_fifo_ctl, event.word);
    Shared<std::atomic<int>> asleep;
    pid_t c = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        CHILD_CHECK(attach(&m, cfg, kDomB, 5 * kSec, MDCOM_NO_SPIN) == 0, "attach");
        mdcom_fifoch_t *ch;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &ch) == 0, "open");
        asleep->store(1);
        char buf[8];
        int n = mdcom_fifoch_recv(ch, buf, sizeof buf, 5 * kSec);
        CHILD_CHECK(n == 1, "recv: %d", n);
        mdcom_term(m);
        return 0;
    });
    ASSERT_TRUE(wait_until([&] { return asleep->load() == 1; }, 5 * kSec));
    ASSERT_TRUE(wait_until(
        [&] {
            rel::RegionView v(region_path(region_));
            return v.ok() && (v.word(waiters) & MDCOM_WAITERS_COUNT) != 0;
        },
        5 * kSec));
    sleep_ms(20); /* in its futex wait */
    forge([&](rel::RegionView &v) { v.set_word(waiters, MDCOM_WAITERS_COUNT); });
    ASSERT_EQ(mdcom_fifoch_send(tx, "x", 1, kSec), 0);
    EXPECT_EQ(kids_.wait(c, 5 * kSec), "");
    /* nobody sleeps now; the master goes about its business (its waits and
     * sense calls run the audit) */
    uint32_t w = 0;
    uint64_t t0 = now_ns();
    bool repaired = wait_until(
        [&] {
            mdcom_sense_process(master, kDomB);
            sleep_ms(5);
            rel::RegionView v(region_path(region_));
            w = v.word(waiters);
            return (w & MDCOM_WAITERS_COUNT) == 0;
        },
        3 * kSec);
    EXPECT_TRUE(repaired) << "waiter count still 0x" << std::hex << w << " with nobody asleep";
    printf("waiter count repaired after %.1f ms\n", (now_ns() - t0) / 1e6);
    /* notifies without sleepers leave the event word alone again */
    uint32_t ev0 = rel::RegionView(region_path(region_)).word(event);
    for (int i = 0; i < 10; i++)
        mdcom_fifoch_notify(tx);
    EXPECT_EQ(rel::RegionView(region_path(region_)).word(event), ev0)
        << "notify rings for sleepers that do not exist";
    /* and a new sleeper is woken by the next notify, not by its 50 ms slice */
    Shared<std::atomic<uint64_t>> woke;
    Shared<std::atomic<int>> ready;
    pid_t d = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        CHILD_CHECK(attach(&m, cfg, kDomB, 5 * kSec, MDCOM_NO_SPIN) == 0, "attach");
        mdcom_fifoch_t *ch;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &ch) == 0, "open");
        for (int i = 0; i < 10; i++) {
            ready->store(i + 1);
            char buf[8];
            CHILD_CHECK(mdcom_fifoch_recv(ch, buf, sizeof buf, 5 * kSec) == 1, "recv");
            woke->store(now_ns());
        }
        mdcom_term(m);
        return 0;
    });
    std::vector<int64_t> lat;
    for (int i = 0; i < 10; i++) {
        ASSERT_TRUE(wait_until([&] { return ready->load() == i + 1; }, 5 * kSec));
        sleep_ms(5);
        uint64_t s0 = now_ns();
        ASSERT_EQ(mdcom_fifoch_send(tx, "x", 1, kSec), 0);
        ASSERT_TRUE(wait_until([&] { return woke->load() >= s0; }, 5 * kSec));
        lat.push_back((int64_t)(woke->load() - s0));
    }
    EXPECT_EQ(kids_.wait(d, 10 * kSec), "");
    int64_t p50 = rel::percentile(lat, 0.5);
    printf("wake-up latency p50 %.3f ms after the repair\n", p50 / 1e6);
    EXPECT_LT(p50, 25 * kMs);
}

/* --------------------------------------------------------------------- */
/* A master whose init fails                                               */
/* --------------------------------------------------------------------- */

/* A private tmpfs too small for the region (as Recovery.SigbusFullShmIsEnospcAtInit):
 * the master's init fails with -ENOSPC. A remote that waits for it (started
 * first) and one started afterwards must both get a clear error at once, not
 * wait out their 5 s attach timeout; a later master that fits attaches. */
TEST_F(Restart, InitFailureGivesRemotesAClearErrorAtOnce)
{
    Shared<std::atomic<int>> verdict; /* 0 ran, 77 skipped */
    pid_t c = kids_.spawn([&] {
        char dir[] = "/tmp/mdcom-initfail-XXXXXX";
        int ns = rel::tiny_shm_namespace(dir);
        CHILD_CHECK(ns >= 0, "mkdtemp");
        if (ns == 77) {
            verdict->store(77);
            return 0;
        }
        Config big = Config::two_domains("initfail");
        big.channels = {fifo_cfg("big", 65536, 64, 64, 1u << kDomA, 1u << kDomB)}; /* 4 MiB */
        const mdcom_config *bcfg = big.get();
        int early_rc = 1;
        int64_t early_ns = 0;
        std::thread early([&] {
            uint64_t t0 = now_ns();
            mdcom_t *m = nullptr;
            early_rc = attach(&m, bcfg, kDomB, 5 * kSec);
            early_ns = (int64_t)(now_ns() - t0);
            if (early_rc == 0)
                mdcom_term(m);
        });
        sleep_ms(50); /* the remote polls for the file */
        mdcom_t *m = nullptr;
        int r = attach(&m, bcfg, kDomA, 0);
        early.join();
        uint64_t t0 = now_ns();
        std::string err;
        mdcom_t *late = nullptr;
        int late_rc = attach(&late, bcfg, kDomB, 5 * kSec, 0, &err);
        int64_t late_ns = (int64_t)(now_ns() - t0);
        printf("master: %d (%s); remote waiting: %d (%s) after %.1f ms; remote started "
               "after: %d (%s) after %.1f ms: %s\n",
               r, mdcom_strerror(r), early_rc, mdcom_strerror(early_rc), early_ns / 1e6, late_rc,
               mdcom_strerror(late_rc), late_ns / 1e6, err.c_str());
        /* a master that fits the tmpfs attaches, and its remote too */
        Config small = Config::two_domains("initfail");
        small.channels = {fifo_cfg("big", 64, 8, 8, 1u << kDomA, 1u << kDomB)};
        mdcom_t *m2 = nullptr, *r2 = nullptr;
        int m2_rc = attach(&m2, small.get(), kDomA, 0);
        int r2_rc = m2_rc == 0 ? attach(&r2, small.get(), kDomB, kSec) : -1;
        if (r2)
            mdcom_term(r2);
        if (m2)
            mdcom_term(m2);
        if (m)
            mdcom_term(m);
        if (late)
            mdcom_term(late);
        umount2(dir, MNT_DETACH);
        rmdir(dir);
        CHILD_CHECK(r == -ENOSPC, "master init: %d", r);
        CHILD_CHECK(early_rc < 0 && early_rc != -ETIMEDOUT, "waiting remote: %d (%s)", early_rc,
                    mdcom_strerror(early_rc));
        CHILD_CHECK(early_ns < 1500 * kMs, "waiting remote took %.1f ms", early_ns / 1e6);
        CHILD_CHECK(late_rc < 0 && late_rc != -ETIMEDOUT, "later remote: %d (%s)", late_rc,
                    mdcom_strerror(late_rc));
        CHILD_CHECK(late_ns < 1500 * kMs, "later remote took %.1f ms", late_ns / 1e6);
        CHILD_CHECK(m2_rc == 0 && r2_rc == 0, "a master that fits: %d, its remote: %d", m2_rc,
                    r2_rc);
        return 0;
    });
    EXPECT_EQ(kids_.wait(c, 60 * kSec), "");
    if (verdict->load() == 77)
        GTEST_SKIP() << "cannot mount a private tmpfs here (no root, no user namespaces)";
}

/* --------------------------------------------------------------------- */
/* The formatter's term and a sibling's re-format                          */
/* --------------------------------------------------------------------- */

/* Two processes of the master domain: the formatter terminates; the other
 * sees -ESHUTDOWN at once (it polls) and initialises again, which opens the
 * file the formatter's term is about to unlink. Had it formatted that file,
 * its region would be unlinked under it: nobody could attach to it and its
 * messages would go nowhere. Each round a remote must attach at the name
 * and receive what the sibling sent. */
TEST_F(Restart, SiblingReformatsWhileTheFormatterTerminates)
{
    sys_.channels = {ab()};
    const mdcom_config *cfg = sys_.get();
    const int rounds = 60;
    int bad = 0;
    for (int i = 0; i < rounds && bad < 3; i++) {
        Inst formatter;
        ASSERT_EQ(formatter.init(cfg, kDomA), 0) << formatter.err;
        Shared<std::atomic<int>> phase;
        pid_t sib = kids_.spawn([&] {
            mdcom_t *m = nullptr;
            CHILD_CHECK(attach(&m, cfg, kDomA, 0) == 0, "sibling joins");
            mdcom_fifoch_t *tx;
            CHILD_CHECK(mdcom_fifoch_open(m, "ab", &tx) == 0, "open");
            phase->store(1);
            uint32_t id;
            int r;
            while ((r = mdcom_fifoch_alloc(tx, &id)) == 0)
                (void)mdcom_fifoch_free(tx, id); /* polls: sees the end at once */
            CHILD_CHECK(r == -ESHUTDOWN, "alloc: %d", r);
            mdcom_term(m);
            m = nullptr;
            CHILD_CHECK(attach(&m, cfg, kDomA, 0) == 0, "sibling re-initialises");
            CHILD_CHECK(mdcom_fifoch_open(m, "ab", &tx) == 0, "open");
            CHILD_CHECK(mdcom_fifoch_send(tx, "s", 1, kSec) == 0, "send");
            while (phase->load() != 2)
                sleep_ms(1);
            mdcom_term(m);
            return 0;
        });
        ASSERT_TRUE(wait_until([&] { return phase->load() == 1; }, 5 * kSec));
        ASSERT_EQ(formatter.term(), 0);
        Inst rx;
        int r = rx.init(cfg, kDomB, kSec);
        char buf[4];
        int n = r == 0 ? mdcom_fifoch_recv(rx.fifo("ab"), buf, sizeof buf, kSec) : r;
        if (r != 0 || n != 1) {
            bad++;
            printf("round %d: remote init %d (%s), recv %d: the sibling's region is not at "
                   "the name\n",
                   i, r, rx.err, n);
        }
        rx.term();
        phase->store(2);
        EXPECT_EQ(kids_.wait(sib, 10 * kSec), "");
        region_remove(region_);
    }
    EXPECT_EQ(bad, 0) << "rounds in which the sibling formatted a file its formatter unlinked";
}

/* --------------------------------------------------------------------- */
/* A re-format in place: the old generation's receiver, the new one's data */
/* --------------------------------------------------------------------- */

/* The master is killed with messages queued; a new master re-formats the
 * same file (generation + 1) and sends. A receiver still attached to the
 * old generation, dequeuing or receiving without a wait in between (a
 * poller, or one that was inside recv at the re-format), must get the
 * generation's end and leave the new message to the new generation's
 * receivers; the new generation's counters say how many queued messages
 * the re-format discarded. */
TEST_F(Restart, StaleReceiverTakesNothingFromTheNewGeneration)
{
    sys_.channels = {ab()};
    const mdcom_config *cfg = sys_.get();
    Shared<std::atomic<int>> phase;
    pid_t old = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        CHILD_CHECK(attach(&m, cfg, kDomA, 0) == 0, "old master");
        mdcom_fifoch_t *tx;
        CHILD_CHECK(mdcom_fifoch_open(m, "ab", &tx) == 0, "open");
        for (char c : {'1', '2', '3'})
            CHILD_CHECK(mdcom_fifoch_send(tx, &c, 1, kSec) == 0, "send %c", c);
        phase->store(1);
        for (;;)
            pause(); /* killed with two messages still queued */
    });
    ASSERT_TRUE(wait_until([&] { return phase->load() == 1; }, 5 * kSec));
    Inst rx;
    ASSERT_EQ(rx.init(cfg, kDomB, 5 * kSec), 0) << rx.err;
    mdcom_fifoch_t *rch = rx.fifo("ab");
    ASSERT_TRUE(rch);
    char buf[8];
    ASSERT_EQ(mdcom_fifoch_recv(rch, buf, sizeof buf, kSec), 1);
    ASSERT_EQ(buf[0], '1');
    ASSERT_EQ(kill(old, SIGKILL), 0);
    (void)kids_.wait(old, 10 * kSec); /* killed: its status is not the point */

    Inst master; /* finds the old master dead and formats the same file again */
    ASSERT_EQ(master.init(cfg, kDomA), 0) << master.err;
    mdcom_fifoch_t *tx = master.fifo("ab");
    ASSERT_TRUE(tx);
    mdcom_fifo_state st{};
    ASSERT_EQ(mdcom_sense_fifoch(tx, &st), 0);
    EXPECT_EQ(st.discarded, 2u) << "the two messages queued at the re-format";
    EXPECT_EQ(st.queued, 0u);
    ASSERT_EQ(mdcom_fifoch_send(tx, "n", 1, kSec), 0);

    /* the old generation's receiver: no wait before the calls */
    uint32_t id = 0, len = 0;
    int r = mdcom_fifoch_dequeue(rch, &id, &len);
    EXPECT_EQ(r, -ECONNRESET) << "dequeue from the old generation took block " << id
                              << " of the new one: " << tsup::errname(r);
    if (r == 0)
        (void)mdcom_fifoch_free(rch, id);
    r = mdcom_fifoch_recv(rch, buf, sizeof buf, MDCOM_POLL);
    EXPECT_EQ(r, -ECONNRESET) << "recv from the old generation: " << tsup::errname(r);
    rx.term();

    /* the new generation's receiver gets the message */
    Inst rx2;
    ASSERT_EQ(rx2.init(cfg, kDomB, 5 * kSec), 0) << rx2.err;
    mdcom_fifoch_t *r2 = rx2.fifo("ab");
    ASSERT_TRUE(r2);
    r = mdcom_fifoch_recv(r2, buf, sizeof buf, kSec);
    EXPECT_EQ(r, 1) << tsup::errname(r);
    EXPECT_EQ(buf[0], 'n');
    /* a normal master's first format discards nothing */
    rx2.term();
    master.term();
    Inst fresh;
    ASSERT_EQ(fresh.init(cfg, kDomA), 0) << fresh.err;
    mdcom_fifo_state st2{};
    ASSERT_EQ(mdcom_sense_fifoch(fresh.fifo("ab"), &st2), 0);
    EXPECT_EQ(st2.discarded, 0u);
}

} // namespace
