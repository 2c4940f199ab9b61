/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_faults.cpp - fault injection: processes killed with SIGKILL at random
 * points while traffic runs, on a real region of the Linux port.
 *
 *   KillSendersAndReceivers  2 sender and 2 receiver processes (each its own
 *       incarnation, re-spawned after every kill) move messages carrying
 *       (incarnation, sequence, length, CRC-32) through one FIFO channel, by
 *       copy and zero-copy at random. The test process (master domain) kills
 *       one of them at a random moment (0..MDCOM_REL_FAULT_DELAY_MS), checks
 *       that mdcom_sense_process stops counting it within 100 ms, re-spawns
 *       it, and checks the channel keeps moving. At the end, with every
 *       process stopped normally and the queue drained:
 *         - no message duplicated, corrupted or invented;
 *         - every message whose send returned 0 was delivered, except at most
 *           one per killed receiver (the one it had dequeued: see
 *           docs/reliability.md - mdcom does not report that loss to the sender);
 *         - every block is accounted for: free, or held by a dead process
 *           and waiting for reclaim (the core reclaims a dead process' blocks
 *           only when a new attach finds the process table full), or in a
 *           known-defect state reported by name.
 *   SmemLockHolderKilled  the lock holder is killed; survivors see it dead.
 *
 * CoreGaps.Core* prove that gaps of the core's crash recovery are closed
 * (docs/reliability.md).
 *
 *   MDCOM_REL_FAULT_KILLS=n      kills (default 200; scripts/reliability: 2000)
 *   MDCOM_REL_FAULT_DELAY_MS=n   maximum random delay before a kill (default 12)
 *   MDCOM_UT_SEED=n              replay
 */
#include <gtest/gtest.h>

#include <random>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

constexpr uint32_t kDomA = 0, kDomS = 1, kDomR = 2;
constexpr uint32_t kMaxInc = 4096;     /* sender incarnations        */
constexpr uint32_t kSeqMax = 1u << 16; /* messages per incarnation   */
constexpr uint32_t kBlock = 256, kBlocks = 16;

struct Msg {
    uint32_t inc, seq, len, crc;
    uint8_t payload[kBlock - 16];
};

/* Bookkeeping shared by every process (anonymous shared memory; the bitmap
 * is large but only touched pages exist). */
struct Book {
    std::atomic<uint32_t> stop_send, stop_recv;
    std::atomic<uint64_t> delivered, dups, corrupt, phantom, proto_errors, unexpected;
    std::atomic<int32_t> last_unexpected;
    struct Inc {
        std::atomic<uint32_t> attempting; /* seq + 1 of the send in progress */
        std::atomic<uint32_t> committed;  /* sends 0..committed-1 returned 0 */
    } inc[kMaxInc];
    std::atomic<uint64_t> bits[kMaxInc][kSeqMax / 64];
};

Book *book_new()
{
    void *p =
        mmap(nullptr, sizeof(Book), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<Book *>(p); /* zero pages */
}

uint32_t msg_crc(const Msg &m)
{
    uint32_t c = crc32(&m, 12);
    return crc32(m.payload, m.len - 16, c);
}

Config fault_system(const std::string &region)
{
    Config s;
    s.region = region;
    s.domains = {{"a", kDomA, MDCOM_ROLE_MASTER},
                 {"s", kDomS, MDCOM_ROLE_REMOTE},
                 {"r", kDomR, MDCOM_ROLE_REMOTE}};
    s.channels = {fifo_cfg("q", kBlock, kBlocks, 0, 1u << kDomS, 1u << kDomR),
                  smem_cfg("lk", 64, (1u << kDomA) | (1u << kDomS) | (1u << kDomR))};
    return s;
}

int sender_body(const mdcom_config *cfg, Book *bk, uint32_t inc, uint32_t seed)
{
    Inst m;
    mdcom_fifoch_t *q;
    std::mt19937 rng(seed);
    CHILD_CHECK(attach(&m.m, cfg, kDomS, 5 * kSec) == 0, "attach");
    CHILD_CHECK(mdcom_fifoch_open(m, "q", &q) == 0, "open");
    Msg msg;
    for (uint32_t seq = 0; seq < kSeqMax && !bk->stop_send.load();) {
        msg.inc = inc;
        msg.seq = seq;
        msg.len = 16 + (uint32_t)(rng() % (sizeof(msg.payload) + 1));
        for (uint32_t i = 0; i < msg.len - 16; i++)
            msg.payload[i] = (uint8_t)rng();
        msg.crc = msg_crc(msg);
        bk->inc[inc].attempting.store(seq + 1);
        int r;
        if (rng() & 1) {
            r = mdcom_fifoch_send(q, &msg, msg.len, 20 * kMs);
        } else { /* zero-copy */
            uint32_t id;
            void *p;
            while ((r = mdcom_fifoch_alloc(q, &id)) == -ENOBUFS) {
                r = mdcom_fifoch_wait(q, MDCOM_EV_TX, 20 * kMs);
                if (r < 0)
                    break;
            }
            if (r == 0) {
                CHILD_CHECK(mdcom_fifoch_get(q, id, &p, nullptr) == 0, "get");
                memcpy(p, &msg, msg.len);
                r = mdcom_fifoch_enqueue(q, id, msg.len);
                if (r == 0)
                    mdcom_fifoch_notify(q);
                else
                    CHILD_CHECK(mdcom_fifoch_free(q, id) == 0, "free after %d", r);
            }
        }
        if (r == 0) {
            bk->inc[inc].committed.store(seq + 1);
            seq++;
        } else if (r != -ETIMEDOUT && r != -EAGAIN && r != -ENOBUFS) {
            bk->unexpected++;
            bk->last_unexpected = r;
            sleep_ms(1);
        }
    }
    while (!bk->stop_send.load())
        sleep_ms(1);
    return 0;
}

void take(Book *bk, const uint8_t *p, int n)
{
    Msg m;
    if (n < 16 || n > (int)sizeof(Msg)) {
        bk->corrupt++;
        return;
    }
    memcpy(&m, p, (size_t)n);
    if (m.len != (uint32_t)n || m.inc >= kMaxInc || m.seq >= kSeqMax || msg_crc(m) != m.crc) {
        bk->corrupt++;
        return;
    }
    uint64_t bit = 1ull << (m.seq % 64);
    if (bk->bits[m.inc][m.seq / 64].fetch_or(bit) & bit)
        bk->dups++;
    if (m.seq >= bk->inc[m.inc].attempting.load())
        bk->phantom++;
    bk->delivered++;
}

int receiver_body(const mdcom_config *cfg, Book *bk, uint32_t seed)
{
    Inst m;
    mdcom_fifoch_t *q;
    std::mt19937 rng(seed);
    CHILD_CHECK(attach(&m.m, cfg, kDomR, 5 * kSec) == 0, "attach");
    CHILD_CHECK(mdcom_fifoch_open(m, "q", &q) == 0, "open");
    uint8_t buf[kBlock];
    for (;;) {
        int n;
        if (rng() & 1) {
            n = mdcom_fifoch_recv(q, buf, sizeof buf, 20 * kMs);
            if (n >= 0)
                take(bk, buf, n);
        } else { /* zero-copy */
            uint32_t id, len;
            void *p;
            while ((n = mdcom_fifoch_dequeue(q, &id, &len)) == -EAGAIN) {
                n = mdcom_fifoch_wait(q, MDCOM_EV_RX, 20 * kMs);
                if (n < 0)
                    break;
            }
            if (n >= 0) {
                CHILD_CHECK(mdcom_fifoch_get(q, id, &p, nullptr) == 0, "get");
                take(bk, (const uint8_t *)p, (int)len);
                CHILD_CHECK(mdcom_fifoch_free(q, id) == 0, "free");
                mdcom_fifoch_notify(q);
            }
        }
        if (n == -ETIMEDOUT) {
            if (bk->stop_recv.load())
                break;
        } else if (n == -EPROTO || n == -EBADMSG) {
            bk->proto_errors++;
        } else if (n < 0) {
            bk->unexpected++;
            bk->last_unexpected = n;
            sleep_ms(1);
        }
    }
    return 0;
}

int hold_lock(mdcom_t *m, uint32_t *);

class Faults : public MpFixture {
protected:
    Book *bk_ = nullptr;
    void SetUp() override
    {
        MpFixture::SetUp();
        bk_ = book_new();
        ASSERT_TRUE(bk_);
    }
    void TearDown() override
    {
        MpFixture::TearDown();
        if (bk_)
            munmap(bk_, sizeof(Book));
    }
    /* A child attached as domain dom that runs body(m, &report) (0 = done),
     * writes report to a pipe, then waits to be killed. Returns its pid once
     * the report arrived (in *report), or -1 if the child failed first. */
    template <class Body>
    pid_t spawn_parked(const mdcom_config *cfg, uint32_t dom, uint32_t *report, Body body)
    {
        int pfd[2];
        if (pipe(pfd) != 0)
            return -1;
        pid_t pid = kids_.spawn([&] {
            Inst m;
            uint32_t v = 0;
            CHILD_CHECK(attach(&m.m, cfg, dom, kSec) == 0, "attach");
            if (body(m.m, &v) != 0)
                return 1;
            CHILD_CHECK(write(pfd[1], &v, sizeof v) == (ssize_t)sizeof v, "write");
            for (;;)
                pause();
            return 0;
        });
        close(pfd[1]); /* a child that fails before its report ends the read */
        uint32_t v = 0;
        bool got = read(pfd[0], &v, sizeof v) == (ssize_t)sizeof v;
        close(pfd[0]);
        if (report)
            *report = v;
        return got ? pid : -1;
    }
    /* The master a and a sender snd attached; *q: "q" opened by snd, with
     * one message queued. */
    void attach_sender_with_message(const mdcom_config *cfg, Inst &a, Inst &snd, mdcom_fifoch_t **q)
    {
        ASSERT_EQ(0, attach(&a.m, cfg, kDomA, 0));
        ASSERT_EQ(0, attach(&snd.m, cfg, kDomS, kSec));
        ASSERT_EQ(0, mdcom_fifoch_open(snd, "q", q));
        ASSERT_EQ(0, mdcom_fifoch_send(*q, "m", 1, 0));
    }
    /* The master a attached to cfg, a parked child of domain S holding the
     * SMEM lock "lk" (*holder), and *lk the master's end of it. */
    void lock_held_by_child(const mdcom_config *cfg, Inst &a, pid_t *holder, mdcom_smemch_t **lk)
    {
        ASSERT_EQ(0, attach(&a.m, cfg, kDomA, 0));
        *holder = spawn_parked(cfg, kDomS, nullptr, hold_lock);
        ASSERT_GT(*holder, 0);
        ASSERT_EQ(0, mdcom_smemch_open(a, "lk", lk));
    }
    /* SIGKILL a parked child and reap it. */
    void kill_parked(pid_t pid)
    {
        ASSERT_EQ(0, kill(pid, SIGKILL));
        EXPECT_EQ("child " + std::to_string(pid) + " killed by signal 9", kids_.wait(pid, kSec));
    }
};

/* spawn_parked bodies: take the SMEM lock "lk"; dequeue one message of "q"
 * and keep it held; the same, but free it and report its block ID. */
int hold_lock(mdcom_t *m, uint32_t *)
{
    mdcom_smemch_t *lk;
    CHILD_CHECK(mdcom_smemch_open(m, "lk", &lk) == 0, "open");
    CHILD_CHECK(mdcom_smemch_trylock(lk) == 0, "lock");
    return 0;
}

int dequeue_one(mdcom_t *m, uint32_t *id, bool free_it)
{
    mdcom_fifoch_t *rq;
    uint32_t len;
    CHILD_CHECK(mdcom_fifoch_open(m, "q", &rq) == 0, "open");
    CHILD_CHECK(mdcom_fifoch_dequeue(rq, id, &len) == 0, "dequeue");
    if (free_it)
        CHILD_CHECK(mdcom_fifoch_free(rq, *id) == 0, "free");
    return 0;
}
int hold_one(mdcom_t *m, uint32_t *id) { return dequeue_one(m, id, false); }
int take_and_free_one(mdcom_t *m, uint32_t *id) { return dequeue_one(m, id, true); }

struct Child {
    pid_t pid;
    bool sender;
};

TEST_F(Faults, KillSendersAndReceivers)
{
    const uint64_t kills = rel::env_u64("MDCOM_REL_FAULT_KILLS", 200);
    const uint64_t max_delay_us = rel::env_u64("MDCOM_REL_FAULT_DELAY_MS", 12) * 1000;
    const uint32_t seed = (uint32_t)rel::env_u64("MDCOM_UT_SEED", (uint64_t)time(nullptr));
    printf("seed %u (MDCOM_UT_SEED=%u to replay), %llu kills\n", seed, seed,
           (unsigned long long)kills);
    std::mt19937 rng(seed);
    Config s = fault_system(region_);
    const mdcom_config *cfg = s.get();
    Inst a;
    ASSERT_EQ(0, attach(&a.m, cfg, kDomA, 0));
    mdcom_fifoch_t *qa = nullptr;
    /* the master domain is neither sender nor receiver of q: it only watches */
    ASSERT_EQ(-EPERM, mdcom_fifoch_open(a, "q", &qa));

    uint32_t next_inc = 0;
    std::vector<Child> kids;
    auto spawn = [&](bool sender) {
        uint32_t inc = sender ? next_inc++ : 0;
        uint32_t cs = (uint32_t)rng();
        pid_t pid = kids_.spawn([&, inc, cs] {
            return sender ? sender_body(cfg, bk_, inc, cs) : receiver_body(cfg, bk_, cs);
        });
        kids.push_back({pid, sender});
    };
    for (int i = 0; i < 2; i++) {
        spawn(true);
        spawn(false);
    }
    ASSERT_TRUE(wait_until(
        [&] { return mdcom_sense_process(a, kDomS) == 2 && mdcom_sense_process(a, kDomR) == 2; },
        10 * kSec));

    uint64_t sender_kills = 0, receiver_kills = 0, attach_kills = 0, stalls = 0;
    std::vector<int64_t> detect;
    uint64_t last_delivered = 0, t_progress = now_ns();
    uint64_t t_start = now_ns();
    for (uint64_t k = 0; k < kills && next_inc < kMaxInc - 2; k++) {
        sleep_ns((int64_t)(rng() % (max_delay_us + 1)) * 1000);
        size_t vi = rng() % kids.size();
        Child victim = kids[vi];
        uint32_t dom = victim.sender ? kDomS : kDomR;
        int before = mdcom_sense_process(a, dom);
        ASSERT_EQ(0, kill(victim.pid, SIGKILL));
        /* the library's detection time starts once the process has died
         * (a zombie, not yet reaped by waitpid): the kernel's teardown of a
         * killed ASan process (its large mappings) takes up to seconds on
         * a loaded machine, and is not the library's */
        siginfo_t si;
        ASSERT_EQ(0, waitid(P_PID, (id_t)victim.pid, &si, WEXITED | WNOWAIT));
        uint64_t t0 = now_ns();
        /* detection: the dead (not yet reaped) process no longer counts */
        bool seen = wait_until([&] { return mdcom_sense_process(a, dom) < before; }, kSec);
        detect.push_back((int64_t)(now_ns() - t0));
        ASSERT_TRUE(seen) << "killed process " << victim.pid
                          << " still counted after 1 s: " << mdcom_sense_process(a, dom)
                          << " alive, " << before << " before";
        int st;
        ASSERT_EQ(victim.pid, waitpid(victim.pid, &st, 0));
        kids_.forget(victim.pid);
        ASSERT_TRUE(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
            << "child failed before being killed (status " << st << ")";
        (victim.sender ? sender_kills : receiver_kills)++;
        kids.erase(kids.begin() + (long)vi);
        spawn(victim.sender);
        /* the restarted process re-attaches (a new process slot, or the
         * dead one's once the table is full) */
        ASSERT_TRUE(wait_until([&] { return mdcom_sense_process(a, dom) == before; }, 10 * kSec))
            << "restarted process did not re-attach: " << mdcom_sense_process(a, dom);
        if (k % 8 == 7) {
            /* and now and then one killed while it attaches */
            pid_t p = kids_.spawn([&] { return receiver_body(cfg, bk_, 1); });
            sleep_ns((int64_t)(rng() % 4000) * 1000);
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
            kids_.forget(p);
            attach_kills++;
        }
        /* the channel keeps moving */
        uint64_t d = bk_->delivered.load();
        if (d != last_delivered) {
            last_delivered = d;
            t_progress = now_ns();
        } else if (now_ns() - t_progress > 3ull * kSec) {
            stalls++;
            FAIL() << "no message delivered for 3 s after kill " << k << ": the channel is wedged";
        }
    }
    double secs = (double)(now_ns() - t_start) / 1e9;

    /* stop: senders finish, then receivers drain the queue */
    bk_->stop_send = 1;
    for (auto &c : kids)
        if (c.sender) {
            EXPECT_EQ("", kids_.wait(c.pid, 20 * kSec));
        }
    bk_->stop_recv = 1;
    for (auto &c : kids)
        if (!c.sender) {
            EXPECT_EQ("", kids_.wait(c.pid, 20 * kSec));
        }

    /* accounting */
    uint64_t committed = 0, lost = 0, inflight_delivered = 0;
    for (uint32_t inc = 0; inc < next_inc; inc++) {
        uint32_t c = bk_->inc[inc].committed.load(), at = bk_->inc[inc].attempting.load();
        committed += c;
        for (uint32_t sq = 0; sq < c; sq++)
            if (!(bk_->bits[inc][sq / 64].load() >> (sq % 64) & 1))
                lost++;
        if (at > c && (bk_->bits[inc][(at - 1) / 64].load() >> ((at - 1) % 64) & 1))
            inflight_delivered++;
    }
    rel::RegionView v(region_path(region_));
    ASSERT_TRUE(v.ok());
    rel::Layout l(cfg);
    ASSERT_EQ(0, l.rc);
    auto alive = [&](uint32_t slot) {
        uint32_t o = v.word(l.proc_owner_off(slot));
        if (o < MDCOM_PROC_DOMAIN_BASE)
            return false;
        pid_t pid = (pid_t)v.word(l.proc_pid_off(slot));
        return kill(pid, 0) == 0;
    };
    /* Reap every dead process before the census: mdcom_sense_process reaps
     * within a call's budget and may leave one judged but not yet reaped
     * (an ASan build's reap takes longer), and what a receiver killed
     * between its claim of a queue entry and its HELD CAS left is a QUEUED
     * block in no slot until its reaper frees it from the op record. The
     * last kills (one killed while attaching may already have dequeued)
     * are not waited for by the loop above. */
    auto dead_entries = [&] {
        uint32_t n = 0;
        for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++)
            n += v.word(l.proc_owner_off(i)) >= MDCOM_PROC_DOMAIN_BASE && !alive(i);
        return n;
    };
    EXPECT_TRUE(wait_until(
        [&] {
            (void)mdcom_sense_process(a, kDomS);
            (void)mdcom_sense_process(a, kDomR);
            return dead_entries() == 0;
        },
        5 * kSec))
        << dead_entries() << " entries of dead processes not reaped within 5 s";
    rel::BlockCensus cs = rel::census(v, l, 0, alive);
    uint32_t q_enq = v.word(l.cl[0].off + offsetof(mdcom_wire_fifo_ctl, enq)),
             q_deq = v.word(l.cl[0].off + offsetof(mdcom_wire_fifo_ctl, deq));
    /* the channel's lost counter (stats line w[2]): what senders are told */
    uint32_t reported_lost = v.word(l.cl[0].off + offsetof(mdcom_wire_fifo_ctl, stats) + 8);

    uint32_t claiming = 0, dead_slots = 0;
    for (uint32_t i = 0; i < MDCOM_MAX_PROCS; i++) {
        uint32_t o = v.word(l.proc_owner_off(i));
        claiming += o == MDCOM_PROC_CLAIMING;
        dead_slots += o >= MDCOM_PROC_DOMAIN_BASE && !alive(i);
    }
    printf("faults: %llu kills (%llu senders, %llu receivers, %llu while attaching) in %.1f s; "
           "%u sender incarnations\n",
           (unsigned long long)(sender_kills + receiver_kills + attach_kills),
           (unsigned long long)sender_kills, (unsigned long long)receiver_kills,
           (unsigned long long)attach_kills, secs, next_inc);
    printf("process table: %u slots of dead processes, %u stuck CLAIMING (a process killed "
           "inside claim_proc: never reclaimed)\n",
           dead_slots, claiming);
    printf("messages: %llu committed, %llu delivered, %llu lost (receiver killed holding it), "
           "%llu in-flight at a sender kill delivered anyway\n",
           (unsigned long long)committed, (unsigned long long)bk_->delivered.load(),
           (unsigned long long)lost, (unsigned long long)inflight_delivered);
    printf("reported lost in the channel's counter: %u (a receiver killed after taking a "
           "message and before freeing its block counts there even when it had recorded it)\n",
           reported_lost);
    printf("errors: %llu duplicated, %llu corrupted, %llu invented, %llu protocol, %llu other\n",
           (unsigned long long)bk_->dups.load(), (unsigned long long)bk_->corrupt.load(),
           (unsigned long long)bk_->phantom.load(), (unsigned long long)bk_->proto_errors.load(),
           (unsigned long long)bk_->unexpected.load());
    printf("detection of a death by mdcom_sense_process: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
           rel::percentile(detect, 0.5) / 1e6, rel::percentile(detect, 0.99) / 1e6,
           rel::percentile(detect, 1.0) / 1e6);
    printf("blocks after recovery: %u free, %u held by dead processes (await reclaim), "
           "%u queued, %u alloc/held by live, %u invalid of %u; queue positions %u/%u\n",
           cs.free, cs.dead_owned, cs.queued, cs.alloc + cs.held - cs.dead_owned, cs.invalid,
           kBlocks, q_deq, q_enq);

    EXPECT_EQ(bk_->dups.load(), 0u);
    EXPECT_EQ(bk_->corrupt.load(), 0u);
    EXPECT_EQ(bk_->phantom.load(), 0u);
    EXPECT_EQ(bk_->proto_errors.load(), 0u);
    EXPECT_EQ(bk_->unexpected.load(), 0u)
        << "last unexpected error " << bk_->last_unexpected.load();
    EXPECT_LE(lost, receiver_kills) << "more messages lost than receivers killed";
    /* (no lost <= reported_lost check: a receiver killed inside
     * mdcom_fifoch_recv after its copy and free, before the test recorded the
     * message, loses it in its own memory; the library had delivered it) */
    /* the 100 ms of the issue is reported above and by the long run
     * (scripts/reliability); CI asserts only a generous bound */
    EXPECT_LE(rel::percentile(detect, 1.0), 1000 * kMs) << "death detected later than 1 s";
    EXPECT_EQ(stalls, 0u);
    EXPECT_EQ(q_enq, q_deq) << "queue not drained (a slot left half-written by a killed process?)";
    EXPECT_EQ(cs.invalid, 0u);
    /* conservation, with every dead process reaped: nobody holds a block,
     * every block is free, nothing is QUEUED in no slot (the reaper frees
     * the block of a receiver killed between its pop and its HELD CAS) */
    EXPECT_EQ(cs.alloc + cs.held, cs.dead_owned)
        << "a block is held by a live process after all stopped";
    EXPECT_EQ(cs.free + cs.dead_owned + cs.queued, kBlocks);
    EXPECT_EQ(cs.queued, 0u) << "blocks QUEUED but in no queue slot";
    EXPECT_EQ(cs.dead_owned, 0u) << "blocks of reaped processes not freed";
    if (cs.queued)
        for (uint32_t id = 0; id < kBlocks; id++) {
            uint32_t w = v.word(l.bstate_off(0, id));
            if (MDCOM_BLK_STATE(w) == MDCOM_BLK_QUEUED)
                printf("block %u QUEUED in no slot: word 0x%08x (owner %u)\n", id, w,
                       MDCOM_BLK_OWNER(w));
        }
    EXPECT_GT(bk_->delivered.load(), 0u);
}

TEST_F(Faults, SmemLockHolderKilledIsSeenDead)
{
    Config s = fault_system(region_);
    const mdcom_config *cfg = s.get();
    Inst a;
    pid_t holder;
    mdcom_smemch_t *lk;
    ASSERT_NO_FATAL_FAILURE(lock_held_by_child(cfg, a, &holder, &lk));
    EXPECT_EQ(-EBUSY, mdcom_smemch_trylock(lk));
    EXPECT_EQ(1, mdcom_sense_process(a, kDomS));
    ASSERT_EQ(0, kill(holder, SIGKILL));
    EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(a, kDomS) == 0; }, 100 * kMs));
    /* a lock waiter is bounded by its timeout whatever the holder did */
    uint64_t t0 = now_ns();
    int r = mdcom_smemch_lock(lk, 20 * kMs);
    EXPECT_TRUE(r == 0 || r == -ETIMEDOUT) << r;
    EXPECT_LT(now_ns() - t0, 70ull * kMs);
    if (r == 0) {
        EXPECT_EQ(0, mdcom_smemch_unlock(lk));
    }
}

/* The liveness record of a process whose platform cannot tell (firmware) or
 * that hangs: a heartbeat. A receiver promises 200 ms, stays alive while it
 * sleeps in a long recv (waits beat) and while it calls mdcom_heartbeat, then
 * is stopped (SIGSTOP: its pid still exists). The survivors must count it
 * dead and take back the block it held; once continued, it learns that it was
 * reaped (-ENOTCONN) instead of touching blocks that are no longer its own. */
TEST_F(Faults, HungProcessWithHeartbeatIsSeenDead)
{
    Config s = fault_system(region_);
    const mdcom_config *cfg = s.get();
    Inst a, snd;
    ASSERT_EQ(0, attach(&a.m, cfg, kDomA, 0));
    ASSERT_EQ(0, attach(&snd.m, cfg, kDomS, kSec));
    mdcom_fifoch_t *q;
    ASSERT_EQ(0, mdcom_fifoch_open(snd, "q", &q));
    int pfd[2];
    ASSERT_EQ(0, pipe(pfd));
    pid_t rcv = kids_.spawn([&] {
        Inst m;
        mdcom_init_opts o{};
        o.attach_timeout_ns = kSec;
        o.heartbeat_ms = 50; /* below the minimum: refused */
        CHILD_CHECK(mdcom_init(&m.m, cfg, kDomR, &o) == -EINVAL, "heartbeat 50 ms accepted");
        o.heartbeat_ms = 200;
        CHILD_CHECK(mdcom_init(&m.m, cfg, kDomR, &o) == 0, "attach");
        mdcom_fifoch_t *rq;
        CHILD_CHECK(mdcom_fifoch_open(m, "q", &rq) == 0, "open");
        int32_t r = 1;
        CHILD_CHECK(write(pfd[1], &r, sizeof r) == (ssize_t)sizeof r, "write");
        /* asleep in one wait for ~700 ms: alive all along */
        CHILD_CHECK(mdcom_fifoch_wait(rq, MDCOM_EV_RX, 3 * kSec) > 0, "wait");
        uint32_t id, len;
        CHILD_CHECK(mdcom_fifoch_dequeue(rq, &id, &len) == 0, "dequeue");
        CHILD_CHECK(write(pfd[1], &r, sizeof r) == (ssize_t)sizeof r, "write");
        while ((r = mdcom_heartbeat(m)) == 0) /* busy elsewhere, beating */
            sleep_ms(20);
        int32_t f = mdcom_fifoch_free(rq, id); /* not ours any more */
        CHILD_CHECK(write(pfd[1], &r, sizeof r) == (ssize_t)sizeof r, "write");
        CHILD_CHECK(write(pfd[1], &f, sizeof f) == (ssize_t)sizeof f, "write");
        m.term();
        return 0;
    });
    int32_t msg = 0;
    ASSERT_EQ((ssize_t)sizeof msg, read(pfd[0], &msg, sizeof msg));
    for (int i = 0; i < 14; i++) { /* 700 ms: the receiver sleeps in its wait */
        EXPECT_EQ(1, mdcom_sense_process(a, kDomR)) << "a waiting process counted dead";
        sleep_ms(50);
    }
    ASSERT_EQ(0, mdcom_fifoch_send(q, "m", 1, 0));
    ASSERT_EQ((ssize_t)sizeof msg, read(pfd[0], &msg, sizeof msg));
    for (int i = 0; i < 14; i++) { /* 700 ms: it beats with mdcom_heartbeat */
        EXPECT_EQ(1, mdcom_sense_process(a, kDomR)) << "a beating process counted dead";
        sleep_ms(50);
    }
    ASSERT_EQ(0, kill(rcv, SIGSTOP));
    uint64_t t0 = now_ns();
    EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(a, kDomR) == 0; }, 3 * kSec));
    uint64_t dt = now_ns() - t0;
    printf("a stopped process with a 200 ms heartbeat counted dead after %.0f ms\n", dt / 1e6);
    EXPECT_GE(dt, 100 * kMs) << "counted dead before its heartbeat period passed";
    EXPECT_LT(dt, 1000 * kMs);
    mdcom_fifo_state st{};
    EXPECT_TRUE(wait_until(
        [&] { return mdcom_sense_fifoch(q, &st) == 0 && st.free_blocks == kBlocks; }, kSec))
        << "the hung receiver's block is not reclaimed: " << st.free_blocks;
    EXPECT_EQ(1u, st.lost);
    ASSERT_EQ(0, kill(rcv, SIGCONT));
    int32_t hb = 0, fr = 0;
    ASSERT_EQ((ssize_t)sizeof hb, read(pfd[0], &hb, sizeof hb));
    ASSERT_EQ((ssize_t)sizeof fr, read(pfd[0], &fr, sizeof fr));
    EXPECT_EQ(-ENOTCONN, hb);
    EXPECT_EQ(-ENOTCONN, fr); /* reaped: the block went back with it */
    EXPECT_EQ("", kids_.wait(rcv, 5 * kSec));
    ASSERT_EQ(0, mdcom_sense_fifoch(q, &st));
    EXPECT_EQ(kBlocks, st.free_blocks) << "the reaped process' term must not touch the pool";
    close(pfd[0]);
    close(pfd[1]);
}

/* ------------------------------------------------------------------ */
/* core gaps (docs/reliability.md): each test proves a gap closed         */
/* ------------------------------------------------------------------ */

class CoreGaps : public Faults {
protected:
    /* the fault system: a_ as A, a sender snd_ and a receiver rcv_ attached,
     * sq_ and rq_ their ends of "q" */
    void attach_three()
    {
        cfg_ = s_.get();
        ASSERT_EQ(0, attach(&a_.m, cfg_, kDomA, 0));
        ASSERT_EQ(0, attach(&snd_.m, cfg_, kDomS, kSec));
        ASSERT_EQ(0, attach(&rcv_.m, cfg_, kDomR, kSec));
        ASSERT_EQ(0, mdcom_fifoch_open(snd_, "q", &sq_));
        ASSERT_EQ(0, mdcom_fifoch_open(rcv_, "q", &rq_));
    }
    /* what a process killed right after claiming the next position of q's
     * queue (its enq or deq word: field) leaves: the position moved on */
    void claim_and_die(size_t field)
    {
        rel::RegionView v(region_path(region_), true);
        rel::Layout l(cfg_);
        ASSERT_TRUE(v.ok());
        v.set_word(l.cl[0].off + field, v.word(l.cl[0].off + field) + 1);
    }

    Config s_ = fault_system("");
    const mdcom_config *cfg_ = nullptr;
    Inst a_, snd_, rcv_;
    mdcom_fifoch_t *sq_ = nullptr, *rq_ = nullptr;
    void SetUp() override
    {
        Faults::SetUp();
        s_.region = region_;
    }
};

/* A receiver killed while holding a dequeued block: the block should return
 * to the pool once the death is detected (docs/reliability.md: within 100 ms
 * of the survivors' next call or wait), not only when a later attach finds all 64 slots taken. */
TEST_F(CoreGaps, CoreDeadReceiversBlockIsReclaimed)
{
    mdcom_fifoch_t *q;
    ASSERT_NO_FATAL_FAILURE(attach_sender_with_message(cfg_ = s_.get(), a_, snd_, &q));
    pid_t rcv = spawn_parked(cfg_, kDomR, nullptr, hold_one);
    ASSERT_GT(rcv, 0);
    ASSERT_NO_FATAL_FAILURE(kill_parked(rcv));
    /* survivors keep calling: the dead process' block must come back */
    mdcom_fifo_state st{};
    bool back = wait_until(
        [&] {
            uint32_t id;
            if (mdcom_fifoch_alloc(q, &id) == 0)
                mdcom_fifoch_free(q, id);
            mdcom_fifoch_wait(q, MDCOM_EV_TX, 1 * kMs);
            return mdcom_sense_fifoch(q, &st) == 0 && st.free_blocks == kBlocks;
        },
        500 * kMs);
    EXPECT_TRUE(back) << "free_blocks " << st.free_blocks << " of " << kBlocks
                      << ": the dead receiver's HELD block is not reclaimed";
}

/* A dead receiver's op record names a block it dequeued and freed long ago.
 * Meanwhile a live sender reuses that block and is between marking it QUEUED
 * and publishing its queue slot (simulated: the op record and the state word
 * are written as enqueue writes them). The reaper must not take the new message's block for
 * the dead receiver's orphan: the generation in the state word tells them
 * apart (a CI run lost a message and got -EPROTO here before it had one). */
TEST_F(CoreGaps, CoreStaleDequeueRecordSparesALaterMessage)
{
    mdcom_fifoch_t *q;
    ASSERT_NO_FATAL_FAILURE(attach_sender_with_message(cfg_ = s_.get(), a_, snd_, &q));
    uint32_t b = 0;
    pid_t rcv = spawn_parked(cfg_, kDomR, &b, take_and_free_one);
    ASSERT_GT(rcv, 0);
    ASSERT_LT(b, kBlocks);
    /* the sender takes block b again (and whatever comes before it) */
    std::vector<uint32_t> others;
    for (uint32_t k = 0; k < kBlocks; k++) {
        uint32_t id;
        ASSERT_EQ(0, mdcom_fifoch_alloc(q, &id));
        if (id == b)
            break;
        others.push_back(id);
    }
    rel::RegionView v(region_path(region_), true);
    rel::Layout l(cfg_);
    ASSERT_TRUE(v.ok());
    const size_t off = l.bstate_off(0, b);
    const uint32_t alloc_w = v.word(off);
    ASSERT_EQ(MDCOM_BLK_STATE(alloc_w), (uint32_t)MDCOM_BLK_ALLOC);
    const uint32_t queued_w =
        MDCOM_BLK_MAKEG(MDCOM_BLK_QUEUED, MDCOM_BLK_WHO(alloc_w), MDCOM_BLK_GEN(alloc_w));
    /* enqueue names the block in its op record before it reads QUEUED (a
     * record of a thread of ours that does nothing else: the last one) */
    const uint32_t slot = MDCOM_BLK_OWNER(alloc_w) - 1;
    const size_t rec =
        offsetof(mdcom_wire_proc, rec) + (MDCOM_PROC_RECS - 1) * sizeof(mdcom_wire_oprec);
    v.set_word(l.proc_off(slot, rec + offsetof(mdcom_wire_oprec, id)), b);
    v.set_word(l.proc_off(slot, rec + offsetof(mdcom_wire_oprec, state)), queued_w);
    v.set_word(l.proc_off(slot, rec + offsetof(mdcom_wire_oprec, op)),
               MDCOM_OP_MAKE(MDCOM_OP_ENQ, 0));
    v.set_word(off, queued_w);
    ASSERT_NO_FATAL_FAILURE(kill_parked(rcv));
    EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(a_, kDomR) == 0; }, 200 * kMs));
    for (int i = 0; i < 5; i++) { /* more reaper passes (throttled to one per ~67 ms) */
        mdcom_fifo_state st{};
        EXPECT_EQ(0, mdcom_sense_fifoch(q, &st));
        EXPECT_EQ(0u, st.lost);
        sleep_ms(40);
    }
    EXPECT_EQ(queued_w, v.word(off)) << "the reaper freed a live sender's block";
    v.set_word(off, alloc_w); /* the simulated enqueue did not happen */
    v.set_word(l.proc_off(slot, rec + offsetof(mdcom_wire_oprec, op)), 0);
    EXPECT_EQ(0, mdcom_fifoch_free(q, b));
    for (uint32_t id : others)
        EXPECT_EQ(0, mdcom_fifoch_free(q, id));
}

/* A lock holder killed: a waiter should get the lock (broken safely) instead
 * of timing out until a later attach happens to fill the process table. */
TEST_F(CoreGaps, CoreDeadHoldersLockIsBroken)
{
    pid_t holder;
    mdcom_smemch_t *lk;
    ASSERT_NO_FATAL_FAILURE(lock_held_by_child(s_.get(), a_, &holder, &lk));
    ASSERT_EQ(0, kill(holder, SIGKILL));
    EXPECT_EQ(0, mdcom_smemch_lock(lk, 300 * kMs)) << "the dead holder's lock is never broken";
}

/* A position claimed and never published with no record naming it (the
 * state a producer killed after its position CAS leaves, made here by a
 * forged write: no process died, so no reaper acts) would hold every later
 * message behind it for ever; the master domain's audit (here from its
 * sense calls) skips it after two periods, so the later message arrives
 * within a second. */
TEST_F(CoreGaps, CoreUnpublishedPositionIsSkippedByTheAudit)
{
    ASSERT_NO_FATAL_FAILURE(attach_three());
    ASSERT_NO_FATAL_FAILURE(claim_and_die(offsetof(mdcom_wire_fifo_ctl, enq)));
    ASSERT_EQ(0, mdcom_fifoch_send(sq_, "later", 5, 0));
    char buf[16];
    int r = -EAGAIN;
    EXPECT_TRUE(wait_until(
        [&] {
            (void)mdcom_sense_process(a_, kDomS); /* the master domain audits when due */
            return (r = mdcom_fifoch_recv(rq_, buf, sizeof buf, 10 * kMs)) != -ETIMEDOUT;
        },
        kSec))
        << "a message sent after the unpublished position is never delivered";
    EXPECT_EQ(5, r);
}

/* A consumer killed between its position CAS and its block state store:
 * consumers never write queue slots, so the ring goes on (in a ring whose
 * consumers hand slots back, the slot would never reach the next lap and
 * every enqueue would fail -EAGAIN after one lap). */
TEST_F(CoreGaps, CoreConsumerKilledMidPopDoesNotWedgeQueue)
{
    ASSERT_NO_FATAL_FAILURE(attach_three());
    ASSERT_EQ(0, mdcom_fifoch_send(sq_, "first", 5, 0));
    /* the state a consumer killed after claiming position 0 leaves */
    ASSERT_NO_FATAL_FAILURE(claim_and_die(offsetof(mdcom_wire_fifo_ctl, deq)));
    char buf[16];
    int ok = 0;
    for (uint32_t i = 0; i < 3 * kBlocks; i++) {
        if (mdcom_fifoch_send(sq_, "x", 1, 50 * kMs) != 0)
            break;
        if (mdcom_fifoch_recv(rq_, buf, sizeof buf, 50 * kMs) != 1)
            break;
        ok++;
    }
    EXPECT_EQ(ok, (int)(3 * kBlocks)) << "the channel stops after one lap of the queue";
}

/* The same state (a consumer's claim with no record naming it) leaves the
 * claimed block QUEUED in no slot: the master domain's audit gives it back
 * to the pool, once no live record names it (the sender's record names
 * the block it last enqueued until its next enqueue: a second message). */
TEST_F(CoreGaps, CoreOrphanQueuedBlockIsReclaimedByTheAudit)
{
    ASSERT_NO_FATAL_FAILURE(attach_three());
    ASSERT_EQ(0, mdcom_fifoch_send(sq_, "first", 5, 0));
    ASSERT_NO_FATAL_FAILURE(claim_and_die(offsetof(mdcom_wire_fifo_ctl, deq)));
    ASSERT_EQ(0, mdcom_fifoch_send(sq_, "second", 6, 0));
    char buf[16];
    ASSERT_EQ(6, mdcom_fifoch_recv(rq_, buf, sizeof buf, kSec));
    mdcom_fifo_state st{};
    EXPECT_TRUE(wait_until(
        [&] {
            (void)mdcom_sense_process(a_, kDomS); /* the master domain audits when due */
            return mdcom_sense_fifoch(sq_, &st) == 0 && st.free_blocks == kBlocks;
        },
        kSec))
        << "the block of the unpublished claim is lost: free " << st.free_blocks;
}

} // namespace
