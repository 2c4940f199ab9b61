/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_killpoints.cpp - a process killed at EVERY store the core makes to
 * shared memory, in every public operation, and what the survivors find.
 *
 * This binary links a build of the core made with -DMDCOM_KILLPOINTS, in
 * which every atomic store, CAS, fetch-add/sub and exchange (and each plain
 * store marked MDCOM_KP) calls mdcom_kp(address) first. mdcom_kp() below
 * counts the calls that touch the region; the victim child arms it with a
 * number n before one operation and dies (SIGKILL) at the n-th store. n runs
 * 0, 1, 2, ... until the operation finishes without reaching it, so every
 * (operation, kill point) pair is covered; the test prints how many.
 *
 * After each death the survivor (the test process, master domain) reaps the
 * victim and checks the invariants:
 *   - every block is in exactly one place: free, or queued in exactly one
 *     published queue entry (nothing held by the dead, nothing queued in no
 *     slot, no entry twice), every position between the consumer and the
 *     producer index published (no hole left);
 *   - no message duplicated or invented, the queued messages of the dead
 *     still delivered (in order), at most the one in flight lost, and then
 *     counted in the channel's `lost` counter;
 *   - nothing wedged: the whole pool can be allocated, queued and drained,
 *     the SMEM lock taken;
 *   - the victim's process slot is reusable: a new process attaches, and no
 *     entry is left to anyone but the survivor.
 * Variants: the victim has a second thread busy on another channel (its
 * records must not confuse the reaper), and SIGSTOP instead of SIGKILL: the
 * paused victim is reaped on its missed heartbeat, then continued - its late
 * stores must change nothing that is no longer its own.
 *
 *   MDCOM_KP_MAX=n   stop each operation's sweep at n kill points (default: all)
 */
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

#include <sys/mman.h>
#include <sys/wait.h>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

/* ---- the kill-point hook the instrumented core calls ------------------- */

namespace {
std::atomic<uintptr_t> g_lo{0}, g_hi{0}; /* the mapped region */
thread_local long t_count = 0, t_target = -1;
thread_local int t_sig = SIGKILL;
/* park mode: a thread with t_park set stops for good (sleeps) at its first
 * store into [g_park_lo, g_park_hi) - a channel's queue slots: it has then
 * claimed a position and not yet published it */
std::atomic<uintptr_t> g_park_lo{0}, g_park_hi{0};
thread_local bool t_park = false;
/* parked threads so far; a parked thread runs on once *g_unpark (a word the
 * test shares with the child, when it set one) reads non-zero */
std::atomic<int> g_parked{0};
std::atomic<int> *g_unpark = nullptr;

const mdcom_platform *g_linux = nullptr;
mdcom_platform g_plat;

int kp_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                   int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    int r = g_linux->region_open(ctx, name, size, flags, mode, group, timeout_ns, out);
    if (r == 0) {
        g_hi.store((uintptr_t)out->base + out->size);
        g_lo.store((uintptr_t)out->base);
    }
    return r;
}

const mdcom_platform *kp_platform()
{
    if (!g_linux) {
        g_linux = mdcom_platform_linux();
        g_plat = *g_linux;
        g_plat.region_open = kp_region_open;
    }
    return &g_plat;
}

void arm(long n, int sig)
{
    t_count = 0;
    t_sig = sig;
    t_target = n;
}
long disarm()
{
    t_target = -1;
    return t_count;
}
} // namespace

extern "C" void mdcom_kp(const volatile void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    if (t_park && a >= g_park_lo.load() && a < g_park_hi.load()) {
        t_park = false;
        g_parked++;
        while (!(g_unpark && g_unpark->load()))
            usleep(1000);
    }
    if (t_target < 0 || a < g_lo.load(std::memory_order_relaxed) ||
        a >= g_hi.load(std::memory_order_relaxed))
        return;
    if (t_count++ == t_target) {
        t_target = -1;
        raise(t_sig); /* SIGKILL: gone here; SIGSTOP: resumes here later */
    }
}

namespace {

constexpr uint32_t kDomA = 0, kDomB = 1;
constexpr uint32_t kBlocks = 8;
int g_total_pairs = 0; /* over the whole run */

class PairsReport : public ::testing::Environment {
public:
    void TearDown() override
    {
        printf("(operation, kill point) pairs covered in this run: %d\n", g_total_pairs);
    }
};
const auto *g_report = ::testing::AddGlobalTestEnvironment(new PairsReport);
constexpr int kExitDone = 42; /* the operation finished before kill point n */

enum Op { ALLOC, ENQUEUE, DEQUEUE, FREE, SEND, RECV, NOTIFY, LOCK, UNLOCK, ATTACH, TERM, N_OPS };
const char *op_name(int op)
{
    static const char *n[] = {"alloc",  "enqueue", "dequeue", "free",   "send", "recv",
                              "notify", "lock",    "unlock",  "attach", "term"};
    return n[op];
}

struct Msg {
    uint32_t seq;
    uint32_t crc;
};

Msg make_msg(uint32_t seq)
{
    Msg m{seq, 0};
    m.crc = crc32(&m.seq, sizeof m.seq);
    return m;
}

class KillPoints : public MpFixture {
protected:
    Config sys_ = Config::two_domains("");
    const mdcom_config *cfg_ = nullptr;
    rel::Layout *lay_ = nullptr;
    std::map<std::string, int> covered_;

    void SetUp() override
    {
        MpFixture::SetUp();
        sys_.region = region_;
        sys_.channels = {fifo_cfg("q", sizeof(Msg), kBlocks, kBlocks, 3, 3), smem_cfg("s", 64, 3),
                         fifo_cfg("busy", 16, 4, 4, 3, 3)};
        cfg_ = sys_.get();
        lay_ = new rel::Layout(cfg_);
    }
    void TearDown() override
    {
        int total = 0;
        for (auto &kv : covered_) {
            printf("  %-28s %3d kill points\n", kv.first.c_str(), kv.second);
            total += kv.second;
        }
        printf("  (operation, kill point) pairs covered: %d\n", total);
        g_total_pairs += total;
        delete lay_;
        MpFixture::TearDown();
    }

    enum class Victim { Stopped, Finished, Killed, Hung };
    /* Waits (at most 10 s) until victim c stops at its kill point (SIGSTOP
     * variant), exits having finished its operation before it, or is killed
     * there (SIGKILL variant); a victim that does neither is a failure,
     * killed and waited for. */
    Victim await_victim(pid_t c, const std::string &at, int sig)
    {
        int wst = 0;
        uint64_t end = now_ns() + 10 * (uint64_t)kSec;
        for (;;) {
            pid_t r = waitpid(c, &wst, WNOHANG | WUNTRACED);
            if (r == c && WIFSTOPPED(wst)) {
                EXPECT_EQ(sig, SIGSTOP) << at;
                return Victim::Stopped;
            }
            if (r == c) {
                kids_.forget(c);
                if (WIFEXITED(wst)) {
                    EXPECT_EQ(WEXITSTATUS(wst), kExitDone) << at;
                    return Victim::Finished;
                }
                EXPECT_TRUE(sig == SIGKILL && WTERMSIG(wst) == SIGKILL) << at;
                return Victim::Killed;
            }
            if (now_ns() > end) {
                ADD_FAILURE() << at << ": victim neither stopped nor ended";
                kill(c, SIGKILL);
                waitpid(c, &wst, 0);
                kids_.forget(c);
                return Victim::Hung;
            }
            sleep_ns(100000);
        }
    }
    /* A paused victim runs on: it must end its operation (kExitDone). */
    void continue_victim(pid_t c, const std::string &at)
    {
        int wst = 0;
        kill(c, SIGCONT);
        uint64_t end = now_ns() + 10 * (uint64_t)kSec;
        while (waitpid(c, &wst, WNOHANG) != c && now_ns() < end)
            sleep_ns(100000);
        kids_.forget(c);
        EXPECT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == kExitDone)
            << at << ": the continued victim failed";
    }

    int attach_kp(mdcom_t **m, uint32_t dom, uint32_t hb_ms = 0)
    {
        char err[200] = "";
        mdcom_init_opts o{};
        o.attach_timeout_ns = 2 * kSec;
        o.platform = kp_platform();
        o.errbuf = err;
        o.errbuf_len = sizeof err;
        o.heartbeat_ms = hb_ms;
        int r = mdcom_init(m, cfg_, dom, &o);
        if (r)
            fprintf(stderr, "attach: %d %s\n", r, err);
        return r;
    }

    /* The victim: attach as B, prepare, arm n, run op. Exit kExitDone when
     * the op finished without reaching kill point n. */
    int victim(int op, long n, int sig, bool busy_thread)
    {
        mdcom_t *m = nullptr;
        if (op == ATTACH) {
            arm(n, sig);
            int r = attach_kp(&m, kDomB, sig == SIGSTOP ? 100 : 0);
            disarm();
            CHILD_CHECK(r == 0 || r == -ENOTCONN, "attach: %d", r);
            if (m)
                mdcom_term(m);
            return kExitDone;
        }
        CHILD_CHECK(attach_kp(&m, kDomB, sig == SIGSTOP ? 100 : 0) == 0, "attach");
        mdcom_fifoch_t *q, *busy;
        mdcom_smemch_t *s;
        CHILD_CHECK(mdcom_fifoch_open(m, "q", &q) == 0, "open q");
        CHILD_CHECK(mdcom_fifoch_open(m, "busy", &busy) == 0, "open busy");
        CHILD_CHECK(mdcom_smemch_open(m, "s", &s) == 0, "open s");
        std::atomic<bool> stop{false};
        std::thread th;
        /* (not with term: mdcom_term must not race with other calls on the
         * attachment, mdcom.h) */
        if (busy_thread && op != TERM)
            th = std::thread([&] { /* another thread of the victim, mid-traffic */
                                   char b[16] = {0};
                                   while (!stop.load()) {
                                       mdcom_fifoch_send(busy, b, sizeof b, MDCOM_POLL);
                                       mdcom_fifoch_recv(busy, b, sizeof b, MDCOM_POLL);
                                   }
            });
        uint32_t id = 0, len = 0;
        int r = 0;
        Msg mine = make_msg(100);
        char buf[64];
        /* preparation (not armed) */
        switch (op) {
        case ENQUEUE:
        case FREE: {
            if (op == ENQUEUE) {
                r = mdcom_fifoch_alloc(q, &id);
                void *p;
                mdcom_fifoch_get(q, id, &p, nullptr);
                memcpy(p, &mine, sizeof mine);
            } else {
                r = mdcom_fifoch_dequeue(q, &id, &len);
            }
            CHILD_CHECK(r == 0, "prepare: %d", r);
            break;
        }
        case UNLOCK:
            CHILD_CHECK(mdcom_smemch_lock(s, kSec) == 0, "lock");
            break;
        default:
            break;
        }
        arm(n, sig);
        switch (op) {
        case ALLOC:
            r = mdcom_fifoch_alloc(q, &id);
            break;
        case ENQUEUE:
            r = mdcom_fifoch_enqueue(q, id, sizeof mine);
            break;
        case DEQUEUE:
            r = mdcom_fifoch_dequeue(q, &id, &len);
            break;
        case FREE:
            r = mdcom_fifoch_free(q, id);
            break;
        case SEND:
            r = mdcom_fifoch_send(q, &mine, sizeof mine, kSec);
            break;
        case RECV:
            r = mdcom_fifoch_recv(q, buf, sizeof buf, kSec);
            break;
        case NOTIFY:
            r = mdcom_fifoch_notify(q);
            break;
        case LOCK:
            r = mdcom_smemch_lock(s, kSec);
            break;
        case UNLOCK:
            r = mdcom_smemch_unlock(s);
            break;
        case TERM:
            r = mdcom_term(m);
            m = nullptr;
            break;
        }
        disarm();
        stop = true;
        if (th.joinable())
            th.join();
        /* a paused and reaped victim's late call fails; a killed one never
         * gets here */
        CHILD_CHECK(r >= 0 || r == -ENOTCONN || r == -EALREADY || r == -EPROTO, "%s: %d (%s)",
                    op_name(op), r, mdcom_strerror(r));
        if (m)
            mdcom_term(m);
        return kExitDone;
    }

    /* ---- the survivor's checks ---- */

    /* Census of channel 0 ("q") and of the queue; returns "" or a complaint. */
    std::string check_region(uint32_t ch, const rel::RegionView &v)
    {
        const mdcom_wire_chan_layout &cl = lay_->cl[ch];
        uint32_t e = v.word(cl.off + offsetof(mdcom_wire_fifo_ctl, enq.pos));
        uint32_t d = v.word(cl.off + offsetof(mdcom_wire_fifo_ctl, deq.pos));
        std::map<uint32_t, int> in_ring;
        if (e - d > cl.qcap)
            return "queue positions absurd: enq " + std::to_string(e) + " deq " + std::to_string(d);
        for (uint32_t p = d; p != e; p++) {
            size_t so = cl.off + cl.qslots_off + sizeof(mdcom_wire_qslot) * (p % cl.qcap);
            uint32_t seq = v.word(so), id = v.word(so + 4), sw = v.word(so + 12);
            if (seq == 2 * p + 2)
                continue; /* a hole closed with a skip */
            if (seq != 2 * p + 1)
                return "position " + std::to_string(p) + " not published (a hole)";
            /* an entry whose block moved on since (a producer reaped while
             * paused, publishing late) names nothing: consumers skip it */
            if (id != MDCOM_QID_SKIP && id < cl.block_count &&
                v.word(lay_->bstate_off(ch, id)) == sw)
                in_ring[id]++;
        }
        for (uint32_t id = 0; id < cl.block_count; id++) {
            uint32_t w = v.word(lay_->bstate_off(ch, id));
            uint32_t st = MDCOM_BLK_STATE(w);
            int n = in_ring.count(id) ? in_ring[id] : 0;
            if (n > 1)
                return "block " + std::to_string(id) + " queued twice";
            if (st == MDCOM_BLK_FREE && MDCOM_BLK_WHO(w) == 0) {
                if (n)
                    return "free block " + std::to_string(id) + " in a queue entry";
            } else if (st == MDCOM_BLK_QUEUED) {
                if (!n)
                    return "block " + std::to_string(id) + " QUEUED in no entry";
            } else {
                return "block " + std::to_string(id) + " state word " + std::to_string(w) +
                       " (held by the dead?)";
            }
        }
        return "";
    }

    /* No process entry left but the survivor's (slot 0). */
    std::string check_slots(const rel::RegionView &v)
    {
        for (uint32_t i = 1; i < MDCOM_MAX_PROCS; i++) {
            uint32_t o = v.word(lay_->proc_owner_off(i));
            if (o != MDCOM_PROC_FREE)
                return "process entry " + std::to_string(i) + " left with owner word " +
                       std::to_string(o);
        }
        return "";
    }

    /* One (op, n) round. Returns false when the op finished before n. */
    bool round(mdcom_t *mst, int op, long n, int sig, bool busy)
    {
        mdcom_fifoch_t *q, *qb;
        mdcom_smemch_t *s;
        EXPECT_EQ(mdcom_fifoch_open(mst, "q", &q), 0);
        EXPECT_EQ(mdcom_fifoch_open(mst, "busy", &qb), 0);
        EXPECT_EQ(mdcom_smemch_open(mst, "s", &s), 0);
        /* three messages queued by the survivor */
        for (uint32_t i = 1; i <= 3; i++) {
            Msg mm = make_msg(i);
            EXPECT_EQ(mdcom_fifoch_send(q, &mm, sizeof mm, MDCOM_POLL), 0);
        }
        mdcom_fifo_state st0{};
        mdcom_sense_fifoch(q, &st0);
        std::string tag =
            std::string(op_name(op)) + (sig == SIGSTOP ? " (stop)" : "") + (busy ? " +thread" : "");
        pid_t c = kids_.spawn([&] { return victim(op, n, sig, busy); });
        std::string at = tag + " kp " + std::to_string(n);
        Victim v = await_victim(c, at, sig);
        bool finished = v == Victim::Finished;
        if (v == Victim::Stopped) {
            /* reaped on its missed heartbeat (100 ms), then continued */
            EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(mst, kDomB) == 0; }, 5 * kSec))
                << at << ": paused victim never reaped";
            continue_victim(c, at);
        }
        /* reap and check (three calls: the formatter's audit fills a hole
         * that no record names - a victim's second thread can leave one -
         * once it was claimed two audits ago, and frees a QUEUED block in no
         * entry when two audits found it so) */
        for (int k = 0; k < 3; k++)
            EXPECT_EQ(mdcom_sense_process(mst, kDomB), 0) << tag << " kp " << n;
        {
            rel::RegionView v(region_path(region_));
            std::string why = check_region(0, v);
            EXPECT_EQ(why, "") << tag << " kp " << n;
            why = check_region(2, v);
            EXPECT_EQ(why, "") << tag << " kp " << n << " (busy channel)";
            why = check_slots(v);
            EXPECT_EQ(why, "") << tag << " kp " << n;
        }
        /* drain: the survivor's 1..3 in order (one may be lost with the dead
         * receiver, then counted), the victim's 100 at most once */
        std::vector<uint32_t> got;
        for (;;) {
            Msg mm{};
            int r = mdcom_fifoch_recv(q, &mm, sizeof mm, MDCOM_POLL);
            if (r == -ETIMEDOUT || r == -EAGAIN)
                break;
            EXPECT_EQ(r, (int)sizeof mm) << tag << " kp " << n;
            if (r != (int)sizeof mm)
                break;
            EXPECT_EQ(mm.crc, crc32(&mm.seq, sizeof mm.seq)) << tag << " kp " << n;
            got.push_back(mm.seq);
        }
        mdcom_fifo_state st1{};
        mdcom_sense_fifoch(q, &st1);
        uint32_t lost = st1.lost - st0.lost;
        std::set<uint32_t> seen;
        uint32_t prev = 0, mine = 0, theirs = 0;
        for (uint32_t x : got) {
            EXPECT_TRUE(x == 100 || (x >= 1 && x <= 3)) << tag << " kp " << n << ": invented " << x;
            EXPECT_TRUE(seen.insert(x).second) << tag << " kp " << n << ": duplicated " << x;
            if (x <= 3) {
                EXPECT_GT(x, prev) << tag << " kp " << n << ": out of order";
                prev = x;
                theirs++;
            } else {
                mine++;
            }
        }
        bool consumes = op == DEQUEUE || op == RECV || op == FREE;
        uint32_t expect_min = consumes ? 2 : 3;
        /* a victim that finished its dequeue consumed one message for good;
         * one that died with it claimed or held lost it, and says so */
        if (!finished || !consumes) {
            EXPECT_GE(theirs + lost, 3u)
                << tag << " kp " << n << ": a queued message vanished uncounted (delivered "
                << theirs << ", lost " << lost << ")";
        }
        EXPECT_GE(theirs, expect_min) << tag << " kp " << n << ": queued messages not delivered";
        EXPECT_LE(lost, 1u) << tag << " kp " << n;
        (void)mine;
        /* nothing wedged: the whole pool cycles, the lock is free */
        std::vector<uint32_t> ids;
        for (uint32_t i = 0; i < kBlocks; i++) {
            uint32_t id;
            int r = mdcom_fifoch_alloc(q, &id);
            EXPECT_EQ(r, 0) << tag << " kp " << n << ": block " << i << " of the pool missing";
            if (r == 0)
                ids.push_back(id);
        }
        for (uint32_t id : ids)
            EXPECT_EQ(mdcom_fifoch_enqueue(q, id, 4), 0) << tag << " kp " << n;
        for (size_t i = 0; i < ids.size(); i++) {
            uint32_t id, len;
            EXPECT_EQ(mdcom_fifoch_dequeue(q, &id, &len), 0) << tag << " kp " << n;
            EXPECT_EQ(mdcom_fifoch_free(q, id), 0) << tag << " kp " << n;
        }
        for (;;) { /* drain the busy channel too */
            char b[16];
            int r = mdcom_fifoch_recv(qb, b, sizeof b, MDCOM_POLL);
            if (r < 0)
                break;
        }
        EXPECT_EQ(mdcom_smemch_lock(s, 500 * kMs), 0) << tag << " kp " << n << ": lock wedged";
        mdcom_smemch_unlock(s);
        /* the slot is reusable */
        pid_t c2 = kids_.spawn([&] {
            mdcom_t *m = nullptr;
            CHILD_CHECK(attach(&m, cfg_, kDomB, kSec) == 0, "re-attach");
            mdcom_term(m);
            return 0;
        });
        EXPECT_EQ(kids_.wait(c2, 10 * kSec), "") << tag << " kp " << n;
        if (!finished)
            covered_[tag]++;
        return !finished;
    }

    void sweep(int op, int sig, bool busy)
    {
        long max = (long)rel::env_u64("MDCOM_KP_MAX", 1000);
        Inst mst;
        ASSERT_EQ(attach(&mst.m, cfg_, kDomA, 0), 0);
        for (long n = 0; n < max; n++) {
            if (!round(mst, op, n, sig, busy))
                break;
            if (HasFailure())
                break; /* the first failing point is the one to read */
        }
    }
};

/* Two threads of one process, each between claiming a queue position and
 * publishing it, when the process dies: the reaper fills both holes at once
 * from the two threads' records. The reaper here is a process of a domain
 * that does not audit, and the consumer dequeues without waiting, so the
 * master domain's audit (which used to be the only repair of the second
 * hole, with one record per process) cannot be what fills them. */
TEST_F(KillPoints, TwoThreadsKilledBetweenClaimAndPublishBothHolesFilledByTheReaper)
{
    mdcom_t *mst = nullptr, *rb = nullptr;
    ASSERT_EQ(0, attach_kp(&mst, kDomA));
    const size_t qs = lay_->cl[0].off + lay_->cl[0].qslots_off;
    const size_t qe = qs + (size_t)lay_->cl[0].qcap * sizeof(mdcom_wire_qslot);
    pid_t c = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        mdcom_fifoch_t *q;
        CHILD_CHECK(attach_kp(&m, kDomB) == 0, "attach");
        CHILD_CHECK(mdcom_fifoch_open(m, "q", &q) == 0, "open q");
        g_park_lo.store(g_lo.load() + qs);
        g_park_hi.store(g_lo.load() + qe);
        std::thread th[2];
        for (uint32_t k = 0; k < 2; k++)
            th[k] = std::thread([q, k] {
                uint32_t id;
                Msg mm = make_msg(200 + k);
                void *p;
                if (mdcom_fifoch_alloc(q, &id) != 0 || mdcom_fifoch_get(q, id, &p, nullptr) != 0)
                    _exit(3);
                memcpy(p, &mm, sizeof mm);
                t_park = true;
                (void)mdcom_fifoch_enqueue(q, id, sizeof mm); /* parks inside */
                _exit(4); /* never reached: the position is claimed, not published */
            });
        for (;;)
            pause();
        return 0;
    });
    /* both positions claimed (the producers' index at 2), neither published */
    rel::RegionView v(region_path(region_));
    const size_t enq = lay_->cl[0].off + offsetof(mdcom_wire_fifo_ctl, enq.pos);
    EXPECT_TRUE(wait_until([&] { return v.word(enq) == 2; }, 5 * kSec))
        << "the victim's threads did not both claim a position: enq.pos " << v.word(enq);
    sleep_ns(20 * 1000000); /* let both reach the slot store */
    EXPECT_NE(v.word(qs) & 1u, 1u) << "position 0 published";
    EXPECT_NE(v.word(qs + sizeof(mdcom_wire_qslot)) & 1u, 1u) << "position 1 published";
    ASSERT_EQ(0, kill(c, SIGKILL));
    int wst = 0;
    ASSERT_EQ(c, waitpid(c, &wst, 0));
    kids_.forget(c);
    /* a process of domain B (no audit) reaps the dead one and sends one more */
    ASSERT_EQ(0, attach_kp(&rb, kDomB));
    EXPECT_EQ(1, mdcom_sense_process(rb, kDomB)) << "the dead victim is not reaped";
    mdcom_fifoch_t *qb, *qa;
    ASSERT_EQ(0, mdcom_fifoch_open(rb, "q", &qb));
    Msg marker = make_msg(7);
    ASSERT_EQ(0, mdcom_fifoch_send(qb, &marker, sizeof marker, MDCOM_POLL));
    /* the master's consumer finds both holes skipped and the marker behind them */
    ASSERT_EQ(0, mdcom_fifoch_open(mst, "q", &qa));
    uint32_t id = 0, len = 0;
    int r = mdcom_fifoch_dequeue(qa, &id, &len);
    EXPECT_EQ(0, r) << "a hole is left before the marker";
    if (r == 0) {
        void *p;
        ASSERT_EQ(0, mdcom_fifoch_get(qa, id, &p, nullptr));
        EXPECT_EQ(0, memcmp(p, &marker, sizeof marker));
        EXPECT_EQ(0, mdcom_fifoch_free(qa, id));
    }
    std::string why = check_region(0, v);
    EXPECT_EQ(why, "");
    mdcom_term(rb);
    mdcom_term(mst);
}

/* A process reaped while paused (a missed heartbeat) whose process slot a
 * new process has claimed since: when it runs again, its free of a block it
 * allocated before the pause must not free the block the new occupant holds
 * now in the same place (block words name the incarnation, not only the
 * slot), and it learns that it was reaped (-ENOTCONN). */
TEST_F(KillPoints, ReapedProcessCannotFreeTheNextOccupantsBlock)
{
    mdcom_t *mst = nullptr, *occ = nullptr;
    /* On the Linux port the paused process' liveness lock keeps its slot
     * from any new occupant while it lives; the incarnation in block words
     * is what protects where there is no such lock (firmware, other ports),
     * so this test runs without it (every process of it: a process without
     * the lock beside one with it would be taken for a forged entry). */
    kp_platform();
    struct NoSlotLock {
        decltype(g_plat.slot_lock) saved = g_plat.slot_lock;
        NoSlotLock() { g_plat.slot_lock = nullptr; }
        ~NoSlotLock() { g_plat.slot_lock = saved; }
    } no_slot_lock;
    ASSERT_EQ(0, attach_kp(&mst, kDomA));
    struct Shared {
        std::atomic<uint32_t> block{~0u};
        std::atomic<int> result{1};
    };
    void *mem =
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    Shared *sh = new (mem) Shared;
    pid_t c = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        mdcom_fifoch_t *q;
        uint32_t id;
        CHILD_CHECK(attach_kp(&m, kDomB, 100) == 0, "attach");
        CHILD_CHECK(mdcom_fifoch_open(m, "q", &q) == 0, "open q");
        CHILD_CHECK(mdcom_fifoch_alloc(q, &id) == 0, "alloc");
        sh->block.store(id);
        raise(SIGSTOP); /* reaped while we stand here */
        sh->result.store(mdcom_fifoch_free(q, id));
        return kExitDone;
    });
    int wst = 0;
    ASSERT_EQ(c, waitpid(c, &wst, WUNTRACED));
    ASSERT_TRUE(WIFSTOPPED(wst));
    const uint32_t b = sh->block.load();
    ASSERT_LT(b, kBlocks);
    EXPECT_TRUE(wait_until([&] { return mdcom_sense_process(mst, kDomB) == 0; }, 5 * kSec))
        << "the paused process is never reaped";
    /* a new process of the same domain takes the free slot, and with it every
     * block: b among them */
    ASSERT_EQ(0, attach_kp(&occ, kDomB));
    mdcom_fifoch_t *qo;
    ASSERT_EQ(0, mdcom_fifoch_open(occ, "q", &qo));
    bool has_b = false;
    for (uint32_t k = 0; k < kBlocks; k++) {
        uint32_t id;
        ASSERT_EQ(0, mdcom_fifoch_alloc(qo, &id));
        has_b |= id == b;
    }
    ASSERT_TRUE(has_b);
    rel::RegionView v(region_path(region_));
    EXPECT_EQ(MDCOM_BLK_OWNER(v.word(lay_->bstate_off(0, b))), 2u)
        << "the new occupant is not in the reaped process' slot: the test proves nothing";
    kill(c, SIGCONT);
    ASSERT_EQ(c, waitpid(c, &wst, 0));
    kids_.forget(c);
    EXPECT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == kExitDone);
    EXPECT_EQ(-ENOTCONN, sh->result.load()) << "the reaped process' free was not refused";
    EXPECT_EQ(0, mdcom_fifoch_free(qo, b)) << "the new occupant lost its block";
    munmap(mem, sizeof(Shared));
    mdcom_term(occ);
    mdcom_term(mst);
}

/* Threads beyond the process entry's own records (here the sixth and the
 * seventh of a process) share record 0, one queue operation at a time. The
 * first sharer stops between claiming a position and publishing it (a
 * preemption, made long); the second tries to enqueue meanwhile. The
 * master domain audits for four periods: the claimed position is never
 * taken for a dead producer's hole, and once the first sharer runs again
 * both messages arrive, in order, with no error counted. (When both wrote
 * record 0 at once, the second's claim replaced the first's, and the audit
 * skipped the first's position after two periods: its message was lost.) */
TEST_F(KillPoints, ThreadsSharingRecordZeroKeepTheirClaimsFromTheAudit)
{
    mdcom_t *mst = nullptr;
    ASSERT_EQ(0, attach_kp(&mst, kDomA));
    const size_t qs = lay_->cl[0].off + lay_->cl[0].qslots_off;
    const size_t qe = qs + (size_t)lay_->cl[0].qcap * sizeof(mdcom_wire_qslot);
    void *mem = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    std::atomic<int> *go = new (mem) std::atomic<int>(0);
    pid_t c = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        mdcom_fifoch_t *q, *busy;
        CHILD_CHECK(attach_kp(&m, kDomB) == 0, "attach");
        CHILD_CHECK(mdcom_fifoch_open(m, "q", &q) == 0, "open q");
        CHILD_CHECK(mdcom_fifoch_open(m, "busy", &busy) == 0, "open busy");
        g_unpark = go;
        g_park_lo.store(g_lo.load() + qs);
        g_park_hi.store(g_lo.load() + qe);
        /* five threads keep the five own records */
        tsup::RecordHolders hold(busy, MDCOM_PROC_RECS - 1);
        CHILD_CHECK(hold.bad() == 0, "busy not empty");
        auto send = [q](uint32_t seq, bool park) {
            uint32_t id;
            Msg mm = make_msg(seq);
            void *p;
            if (mdcom_fifoch_alloc(q, &id) != 0 || mdcom_fifoch_get(q, id, &p, nullptr) != 0)
                _exit(3);
            memcpy(p, &mm, sizeof mm);
            t_park = park;
            if (mdcom_fifoch_enqueue(q, id, sizeof mm) != 0)
                _exit(4);
        };
        std::thread x(send, 301u, true); /* stops at its slot store */
        while (g_parked.load() == 0)
            usleep(1000);
        std::thread y(send, 302u, false);
        x.join();
        y.join();
        return kExitDone;
    });
    rel::RegionView v(region_path(region_));
    const size_t enq = lay_->cl[0].off + offsetof(mdcom_wire_fifo_ctl, enq.pos);
    ASSERT_TRUE(wait_until([&] { return v.word(enq) >= 1; }, 5 * kSec))
        << "the first sharer did not claim a position";
    mdcom_fifoch_t *qa;
    ASSERT_EQ(0, mdcom_fifoch_open(mst, "q", &qa));
    /* four audit periods (~134 ms each) with the first claim unpublished */
    const uint64_t t0 = now_ns();
    uint32_t id = 0, len = 0;
    while (now_ns() - t0 < 600ull * 1000000u) {
        (void)mdcom_sense_process(mst, kDomB); /* reaps and audits when due */
        int r = mdcom_fifoch_dequeue(qa, &id, &len);
        ASSERT_EQ(-EAGAIN, r) << "the audit took the live sharer's claimed position for a hole";
        sleep_ns(10 * 1000000);
    }
    EXPECT_NE(v.word(qs), 2u) << "position 0 skipped";
    go->store(1);
    int wst = 0;
    ASSERT_EQ(c, waitpid(c, &wst, 0));
    kids_.forget(c);
    EXPECT_TRUE(WIFEXITED(wst) && WEXITSTATUS(wst) == kExitDone) << "child status " << wst;
    for (uint32_t want : {301u, 302u}) {
        ASSERT_EQ(0, mdcom_fifoch_dequeue(qa, &id, &len)) << "message " << want << " lost";
        void *p;
        Msg mm = make_msg(want);
        ASSERT_EQ(0, mdcom_fifoch_get(qa, id, &p, nullptr));
        EXPECT_EQ(0, memcmp(p, &mm, sizeof mm)) << "not message " << want;
        EXPECT_EQ(0, mdcom_fifoch_free(qa, id));
    }
    mdcom_fifo_state st{};
    ASSERT_EQ(0, mdcom_sense_fifoch(qa, &st));
    EXPECT_EQ(0u, st.errors);
    EXPECT_EQ(check_region(0, v), "");
    munmap(mem, sizeof(std::atomic<int>));
    mdcom_term(mst);
}

/* A master-domain process killed, or paused, at every store of its attach:
 * formatting a file nobody formatted yet, and re-formatting the region of a
 * master that died without term. After a kill the next master attaches
 * within its timeout (the region is never left in FORMATTING for good). A
 * paused victim holds the region or has not claimed it yet: the next master
 * either times out (the victim is alive and formats) or formats it; when the
 * victim runs on, it must not format that region a second time under the
 * master that attached meanwhile (whose calls would then get -ECONNRESET). */
class MasterKillPoints : public KillPoints {
protected:
    /* The region of a master that died without term: READY, naming it as
     * its formatter. */
    void make_stale()
    {
        pid_t c = kids_.spawn([&] {
            mdcom_t *m = nullptr;
            CHILD_CHECK(attach(&m, cfg_, kDomA, kSec) == 0, "first master");
            return 0; /* _exit without term */
        });
        EXPECT_EQ(kids_.wait(c, 10 * kSec), "");
    }

    /* The victim: a master attaching with kill point n armed; leaves without
     * term, so that its region stays for the survivors. */
    int master_victim(long n, int sig)
    {
        mdcom_t *m = nullptr;
        arm(n, sig);
        int r = attach_kp(&m, kDomA);
        disarm();
        CHILD_CHECK(r == 0, "master attach: %d", r);
        return kExitDone;
    }

    /* A master (the survivor) attaches, then a remote, and one message goes
     * from the remote to the master. */
    void exchange(Inst &mst, const std::string &tag)
    {
        Inst rem;
        ASSERT_EQ(attach(&rem.m, cfg_, kDomB, kSec), 0) << tag;
        Msg out = make_msg(7), in{};
        mdcom_fifoch_t *qr = rem.fifo("q"), *qm = mst.fifo("q");
        EXPECT_EQ(mdcom_fifoch_send(qr, &out, sizeof out, MDCOM_POLL), 0) << tag;
        EXPECT_EQ(mdcom_fifoch_recv(qm, &in, sizeof in, kSec), (int)sizeof in)
            << tag << ": the master's region changed under it";
        EXPECT_EQ(in.seq, 7u) << tag;
        out = make_msg(8);
        EXPECT_EQ(mdcom_fifoch_send(qm, &out, sizeof out, MDCOM_POLL), 0)
            << tag << ": the master's region changed under it";
        EXPECT_EQ(mdcom_fifoch_recv(qr, &in, sizeof in, kSec), (int)sizeof in) << tag;
        EXPECT_EQ(in.seq, 8u) << tag;
    }

    /* One (n) round. Returns false when the attach finished before n. */
    bool master_round(long n, int sig, bool stale)
    {
        std::string tag = std::string("master attach") + (stale ? ", stale region" : ", new file") +
                          (sig == SIGSTOP ? " (stop)" : "");
        std::string at = tag + " kp " + std::to_string(n);
        region_remove(region_);
        if (stale)
            make_stale();
        pid_t c = kids_.spawn([&] { return master_victim(n, sig); });
        Victim v = await_victim(c, at, sig);
        if (v == Victim::Hung)
            return false;
        bool finished = v == Victim::Finished, stopped = v == Victim::Stopped;
        Inst mst;
        int rm = -1;
        if (stopped) {
            rm = attach(&mst.m, cfg_, kDomA, 100 * kMs);
            EXPECT_TRUE(rm == 0 || rm == -ETIMEDOUT) << at << ": " << rm;
            continue_victim(c, at);
            if (rm == 0)
                exchange(mst, at + " (attached while the victim was paused)");
        }
        if (rm != 0) {
            mst.term();
            rm = attach(&mst.m, cfg_, kDomA, 2 * kSec);
            EXPECT_EQ(rm, 0) << at << ": the next master cannot attach";
            if (rm == 0)
                exchange(mst, at);
        }
        if (!finished)
            covered_[tag]++;
        return !finished;
    }

    void master_sweep(int sig, bool stale)
    {
        long max = (long)rel::env_u64("MDCOM_KP_MAX", 1000);
        for (long n = 0; n < max && !HasFailure(); n++)
            if (!master_round(n, sig, stale))
                break;
    }
};

TEST_F(MasterKillPoints, KilledAtEveryStoreOfANewFilesFormat) { master_sweep(SIGKILL, false); }
TEST_F(MasterKillPoints, KilledAtEveryStoreOfAStaleRegionsFormat) { master_sweep(SIGKILL, true); }
TEST_F(MasterKillPoints, StoppedAtEveryStoreOfANewFilesFormat) { master_sweep(SIGSTOP, false); }
TEST_F(MasterKillPoints, StoppedAtEveryStoreOfAStaleRegionsFormat) { master_sweep(SIGSTOP, true); }

class KillPointsOp : public KillPoints, public ::testing::WithParamInterface<int> {};

TEST_P(KillPointsOp, KilledAtEveryStore) { sweep(GetParam(), SIGKILL, false); }
TEST_P(KillPointsOp, KilledAtEveryStoreWithASecondThread) { sweep(GetParam(), SIGKILL, true); }
TEST_P(KillPointsOp, StoppedAtEveryStoreReapedThenContinued) { sweep(GetParam(), SIGSTOP, false); }

INSTANTIATE_TEST_SUITE_P(Ops, KillPointsOp, ::testing::Range(0, (int)N_OPS),
                         [](const ::testing::TestParamInfo<int> &i) {
                             return std::string(op_name(i.param));
                         });

} // namespace
