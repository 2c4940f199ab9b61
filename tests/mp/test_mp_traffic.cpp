/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mp_traffic.cpp - multi-process traffic on a real region (Linux port):
 *
 *   MpTraffic        2 domains, 4 processes, 8 FIFO channels (4 each way),
 *                    100 000 messages, each carrying (producer, sequence,
 *                    varying payload, CRC-32); every process of a domain sends
 *                    and receives on the same channels concurrently. Receivers
 *                    check: nothing lost, duplicated, corrupted, or reordered
 *                    per producer. At the end every block is back in its pool.
 *   MpSmem           SMEM lock contention across 4 processes (a shared counter
 *                    is exact), trylock/-EBUSY/-EPERM/-EDEADLK across processes,
 *                    a lock waiter woken by an unlock in another process.
 *
 * Every child calls mdcom_init itself and exits with a status the parent
 * checks; a child that hangs is killed by the parent's bounded wait.
 */
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "mdcom/mdcom.h"
#include "mp/mp_sys.h"
#include "mp/mp_util.h"

using namespace mdt;

namespace {

constexpr int64_t kOpTimeout = 10 * kSec;      /* every blocking call       */
constexpr int64_t kBarrierTimeout = 40 * kSec; /* waiting for the others    */
constexpr int64_t kChildrenTimeout = 55 * kSec;

TEST(MpCrc32, KnownAnswer)
{
    EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
    EXPECT_EQ(crc32("", 0), 0u);
    /* chaining */
    EXPECT_EQ(crc32("6789", 4, crc32("12345", 5)), 0xCBF43926u);
}

/* ------------------------------------------------------------------ */
/* topology                                                             */
/* ------------------------------------------------------------------ */

struct Topology {
    const char *label;
    std::vector<mdcom_domain_cfg> domains;
    std::vector<uint32_t> procs; /* domain id of each process; procs[0] = the master */
    uint32_t x, y;               /* traffic flows between domains x and y            */

    uint32_t count(uint32_t dom) const
    {
        uint32_t n = 0;
        for (uint32_t d : procs)
            n += d == dom;
        return n;
    }
    uint32_t rank(uint32_t proc) const /* position among the processes of its domain */
    {
        uint32_t n = 0;
        for (uint32_t i = 0; i < proc; i++)
            n += procs[i] == procs[proc];
        return n;
    }
    bool is_master_domain(uint32_t dom) const
    {
        for (const auto &d : domains)
            if (d.id == dom)
                return d.role == MDCOM_ROLE_MASTER;
        return false;
    }
};

void PrintTo(const Topology &t, std::ostream *os) { *os << t.label; }

/* ------------------------------------------------------------------ */
/* messages                                                             */
/* ------------------------------------------------------------------ */

constexpr uint32_t kHdr = 16;
constexpr uint32_t kEndProducer = 0xffffu;
constexpr uint32_t kEndSeq = 0xffffffffu;

struct MsgHdr {
    uint32_t tag; /* channel << 16 | producer process index */
    uint32_t seq;
    uint32_t len; /* whole message, header included */
    uint32_t crc; /* CRC-32 of tag, seq, len and the payload */
};
static_assert(sizeof(MsgHdr) == kHdr, "header");

uint32_t mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h =
        a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u ^ (c + 0x165667B1u) * 0xC2B2AE3Du;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return h;
}

/* Write message (chan, producer, seq) into dst (block_size bytes); returns its length. */
uint32_t build_msg(uint8_t *dst, uint32_t block_size, uint32_t chan, uint32_t producer,
                   uint32_t seq)
{
    uint32_t room = block_size - kHdr;
    uint32_t h = mix(chan, producer, seq);
    uint32_t plen = 0;
    if (seq != kEndSeq)
        plen = seq % 97 == 0 ? room : seq % 89 == 0 ? 0 : h % (room + 1);
    MsgHdr hd{chan << 16 | producer, seq, kHdr + plen, 0};
    uint32_t x = h | 1u;
    for (uint32_t i = 0; i < plen; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        dst[kHdr + i] = (uint8_t)(x >> 7);
    }
    memcpy(dst, &hd, 12);
    hd.crc = crc32(dst + kHdr, plen, crc32(dst, 12));
    memcpy(dst + 12, &hd.crc, 4);
    return kHdr + plen;
}

/* ------------------------------------------------------------------ */
/* the traffic test                                                     */
/* ------------------------------------------------------------------ */

constexpr uint32_t kChans = 8;
constexpr uint32_t kMaxProcs = 6;
constexpr uint32_t kPerProducer = 6250; /* 8 channels x 2 producers x 6250 = 100 000 */

struct ChanSpec {
    const char *name;
    uint32_t block_size, block_count, queue_depth;
    bool zero_copy; /* alloc/enqueue/dequeue/free, else send/recv */
};
/* channels 0..3 flow x -> y, 4..7 y -> x; geometries differ on purpose
 * (a queue shallower than the pool exercises send's queue-full wait) */
const ChanSpec kSpec[kChans] = {
    {"xy0", 256, 16, 0, false}, {"xy1", 96, 8, 4, true},   {"xy2", 1024, 32, 8, false},
    {"xy3", 40, 4, 0, true},    {"yx0", 256, 16, 0, true}, {"yx1", 96, 8, 4, false},
    {"yx2", 1024, 32, 8, true}, {"yx3", 40, 4, 0, false},
};

struct TrafficShared {
    std::atomic<uint32_t> abort{0};
    std::atomic<uint32_t> errors{0};
    std::atomic<uint32_t> err_claim{0};
    char first_error[1024];
    std::atomic<uint32_t> master_ready{0};
    std::atomic<uint32_t> attached{0}, done{0}, checked{0}, detached{0};
    std::atomic<uint32_t> sent_done[kChans];
    std::atomic<uint32_t> received[kChans];
    std::atomic<uint32_t> ends[kChans];
    std::atomic<uint8_t> seen[kChans][kMaxProcs][kPerProducer];
};

class TrafficProc {
public:
    TrafficProc(TrafficShared *sh, const Topology &topo, Config &sys, uint32_t me)
        : sh_(sh), topo_(topo), sys_(sys), me_(me), dom_(topo.procs[me])
    {}

    int run();

private:
    TrafficShared *sh_;
    const Topology &topo_;
    Config &sys_;
    uint32_t me_, dom_;
    mdcom_t *m_ = nullptr;
    mdcom_fifoch_t *ch_[kChans] = {};
    std::atomic<uint32_t> my_errors_{0};

    void fail(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    bool barrier(std::atomic<uint32_t> &ctr, uint32_t n, const char *what);
    uint32_t sender_dom(uint32_t c) const { return c < 4 ? topo_.x : topo_.y; }
    uint32_t receiver_dom(uint32_t c) const { return c < 4 ? topo_.y : topo_.x; }
    void sender(uint32_t c);
    void receiver(uint32_t c);
    bool send_one(uint32_t c, uint32_t seq);
    bool handle(uint32_t c, const uint8_t *p, uint32_t len, std::vector<int64_t> &last, bool *end);
};

void TrafficProc::fail(const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    my_errors_.fetch_add(1);
    uint32_t n = sh_->errors.fetch_add(1);
    if (sh_->err_claim.exchange(1) == 0)
        snprintf(sh_->first_error, sizeof(sh_->first_error), "process %u (domain %u): %s", me_,
                 dom_, msg);
    if (n < 20)
        fprintf(stderr, "[traffic process %u, domain %u, pid %ld] %s\n", me_, dom_, (long)getpid(),
                msg);
    sh_->abort.store(1);
}

bool TrafficProc::barrier(std::atomic<uint32_t> &ctr, uint32_t n, const char *what)
{
    ctr.fetch_add(1);
    if (!wait_until([&] { return ctr.load() >= n || sh_->abort.load() != 0; }, kBarrierTimeout)) {
        fail("barrier '%s': only %u of %u processes arrived", what, ctr.load(), n);
        return false;
    }
    return sh_->abort.load() == 0;
}

bool TrafficProc::send_one(uint32_t c, uint32_t seq)
{
    const ChanSpec &s = kSpec[c];
    mdcom_fifoch_t *ch = ch_[c];
    uint32_t producer = seq == kEndSeq ? kEndProducer : me_;
    if (!s.zero_copy) {
        uint8_t buf[1024];
        uint32_t len = build_msg(buf, s.block_size, c, producer, seq);
        int r = mdcom_fifoch_send(ch, buf, len, kOpTimeout);
        if (r != 0) {
            fail("%s: mdcom_fifoch_send(seq %u) = %d (%s)", s.name, seq, r, mdcom_strerror(r));
            return false;
        }
        return true;
    }
    uint32_t id;
    int r;
    while ((r = mdcom_fifoch_alloc(ch, &id)) == -ENOBUFS) {
        int w = mdcom_fifoch_wait(ch, MDCOM_EV_TX, kOpTimeout);
        if (w < 0) {
            fail("%s: wait(EV_TX) for seq %u = %d (%s)", s.name, seq, w, mdcom_strerror(w));
            return false;
        }
    }
    if (r != 0) {
        fail("%s: alloc = %d (%s)", s.name, r, mdcom_strerror(r));
        return false;
    }
    void *p = nullptr;
    uint32_t size = 0;
    r = mdcom_fifoch_get(ch, id, &p, &size);
    if (r != 0 || size != s.block_size) {
        fail("%s: get(%u) = %d, size %u", s.name, id, r, size);
        return false;
    }
    uint32_t len = build_msg(static_cast<uint8_t *>(p), s.block_size, c, producer, seq);
    while ((r = mdcom_fifoch_enqueue(ch, id, len)) == -EAGAIN) {
        int w = mdcom_fifoch_wait(ch, MDCOM_EV_SPACE, kOpTimeout);
        if (w < 0) {
            fail("%s: wait(EV_SPACE) on a full queue = %d (%s)", s.name, w, mdcom_strerror(w));
            mdcom_fifoch_free(ch, id);
            return false;
        }
    }
    if (r != 0) {
        fail("%s: enqueue(id %u, len %u) = %d (%s)", s.name, id, len, r, mdcom_strerror(r));
        return false;
    }
    r = mdcom_fifoch_notify(ch);
    if (r != 0) {
        fail("%s: notify = %d", s.name, r);
        return false;
    }
    return true;
}

void TrafficProc::sender(uint32_t c)
{
    const uint32_t nsend = topo_.count(sender_dom(c));
    const uint32_t nrecv = topo_.count(receiver_dom(c));
    for (uint32_t seq = 0; seq < kPerProducer; seq++) {
        if (sh_->abort.load(std::memory_order_relaxed))
            return;
        if (!send_one(c, seq))
            return;
    }
    sh_->sent_done[c].fetch_add(1);
    if (topo_.rank(me_) != 0)
        return;
    /* one end marker per receiving process, after every producer's data,
     * so that FIFO order puts them behind all messages */
    if (!wait_until([&] { return sh_->sent_done[c].load() >= nsend || sh_->abort.load(); },
                    kBarrierTimeout)) {
        fail("%s: the other producers did not finish", kSpec[c].name);
        return;
    }
    for (uint32_t k = 0; k < nrecv && !sh_->abort.load(); k++)
        if (!send_one(c, kEndSeq))
            return;
}

bool TrafficProc::handle(uint32_t c, const uint8_t *p, uint32_t len, std::vector<int64_t> &last,
                         bool *end)
{
    const ChanSpec &s = kSpec[c];
    MsgHdr hd;
    *end = false;
    if (len < kHdr || len > s.block_size) {
        fail("%s: corrupted: message length %u", s.name, len);
        return false;
    }
    memcpy(&hd, p, kHdr);
    uint32_t crc = crc32(p + kHdr, len - kHdr, crc32(p, 12));
    if (hd.len != len || crc != hd.crc) {
        fail("%s: corrupted: length %u (header says %u), crc %08x (header says %08x)", s.name, len,
             hd.len, crc, hd.crc);
        return false;
    }
    uint32_t chan = hd.tag >> 16, producer = hd.tag & 0xffffu;
    if (chan != c) {
        fail("%s: message of channel %u delivered here", s.name, chan);
        return false;
    }
    if (producer == kEndProducer && hd.seq == kEndSeq) {
        sh_->ends[c].fetch_add(1);
        *end = true;
        return true;
    }
    if (producer >= topo_.procs.size() || topo_.procs[producer] != sender_dom(c) ||
        hd.seq >= kPerProducer) {
        fail("%s: message from unknown producer %u / seq %u", s.name, producer, hd.seq);
        return false;
    }
    /* independent of the CRC: the exact bytes this producer sent */
    uint8_t want[1024];
    uint32_t wlen = build_msg(want, s.block_size, c, producer, hd.seq);
    if (wlen != len || memcmp(want, p, len) != 0) {
        fail("%s: corrupted payload of producer %u seq %u", s.name, producer, hd.seq);
        return false;
    }
    if ((int64_t)hd.seq <= last[producer]) {
        fail("%s: producer %u: seq %u after seq %lld (out of order)", s.name, producer, hd.seq,
             (long long)last[producer]);
        return false;
    }
    last[producer] = hd.seq;
    uint8_t prev = sh_->seen[c][producer][hd.seq].fetch_add(1);
    if (prev != 0) {
        fail("%s: producer %u seq %u received %u times", s.name, producer, hd.seq, prev + 1u);
        return false;
    }
    sh_->received[c].fetch_add(1, std::memory_order_relaxed);
    return true;
}

void TrafficProc::receiver(uint32_t c)
{
    const ChanSpec &s = kSpec[c];
    mdcom_fifoch_t *ch = ch_[c];
    std::vector<int64_t> last(topo_.procs.size(), -1);
    bool end = false;
    while (!end) {
        if (!s.zero_copy) {
            uint8_t buf[1024];
            int r = mdcom_fifoch_recv(ch, buf, sizeof(buf), kOpTimeout);
            if (r < 0) {
                fail("%s: recv = %d (%s) after %u messages on the channel", s.name, r,
                     mdcom_strerror(r), sh_->received[c].load());
                return;
            }
            if (!handle(c, buf, (uint32_t)r, last, &end))
                return;
            continue;
        }
        uint32_t id, len;
        int r = mdcom_fifoch_dequeue(ch, &id, &len);
        if (r == -EAGAIN) {
            int w = mdcom_fifoch_wait(ch, MDCOM_EV_RX, kOpTimeout);
            if (w < 0) {
                fail("%s: wait(EV_RX) = %d (%s) after %u messages on the channel", s.name, w,
                     mdcom_strerror(w), sh_->received[c].load());
                return;
            }
            continue;
        }
        if (r != 0) {
            fail("%s: dequeue = %d (%s)", s.name, r, mdcom_strerror(r));
            return;
        }
        void *p = nullptr;
        r = mdcom_fifoch_get(ch, id, &p, nullptr);
        if (r != 0) {
            fail("%s: get(%u) = %d", s.name, id, r);
            return;
        }
        bool ok = handle(c, static_cast<const uint8_t *>(p), len, last, &end);
        r = mdcom_fifoch_free(ch, id);
        if (r != 0) {
            fail("%s: free(%u) = %d (%s)", s.name, id, r, mdcom_strerror(r));
            return;
        }
        mdcom_fifoch_notify(ch);
        if (!ok)
            return;
    }
}

int TrafficProc::run()
{
    const uint32_t n = (uint32_t)topo_.procs.size();
    const mdcom_config *cfg = sys_.get();
    std::string err;
    int r;

    /* a second process of the master domain joins a region its master serves */
    if (me_ != 0 && topo_.is_master_domain(dom_) &&
        !wait_until([&] { return sh_->master_ready.load() || sh_->abort.load(); }, 10 * kSec)) {
        fail("the master process did not come up");
        return 1;
    }
    r = attach(&m_, cfg, dom_, me_ == 0 ? MDCOM_POLL : 5 * kSec, 0, &err);
    if (r != 0) {
        fail("mdcom_init(domain %u) = %d (%s): %s", dom_, r, mdcom_strerror(r), err.c_str());
        return 1;
    }
    if (me_ == 0)
        sh_->master_ready.store(1);
    if (!barrier(sh_->attached, n, "attached"))
        return my_errors_.load() ? 1 : 2;
    for (const auto &d : topo_.domains) {
        int cnt = mdcom_sense_process(m_, d.id);
        if (cnt != (int)topo_.count(d.id))
            fail("mdcom_sense_process(domain %u) = %d, want %u", d.id, cnt, topo_.count(d.id));
    }

    std::vector<std::thread> threads;
    for (uint32_t c = 0; c < kChans; c++) {
        r = mdcom_fifoch_open(m_, kSpec[c].name, &ch_[c]);
        bool tx = sender_dom(c) == dom_, rx = receiver_dom(c) == dom_;
        if ((tx || rx) ? r != 0 : r != -EPERM) {
            fail("mdcom_fifoch_open(%s) = %d", kSpec[c].name, r);
            ch_[c] = nullptr;
            continue;
        }
        if (tx)
            threads.emplace_back([this, c] { sender(c); });
        if (rx)
            threads.emplace_back([this, c] { receiver(c); });
    }
    for (auto &t : threads)
        t.join();

    /* everything sent was received and freed: every pool is full again */
    if (barrier(sh_->done, n, "traffic done")) {
        for (uint32_t c = 0; c < kChans; c++) {
            if (!ch_[c])
                continue;
            mdcom_fifo_state st{};
            r = mdcom_sense_fifoch(ch_[c], &st);
            if (r != 0 || st.free_blocks != kSpec[c].block_count || st.queued != 0 ||
                st.errors != 0 || st.filtered != 0 || st.block_size != kSpec[c].block_size)
                fail("%s: sense = %d: free %u of %u, queued %u, errors %u, filtered %u",
                     kSpec[c].name, r, st.free_blocks, kSpec[c].block_count, st.queued, st.errors,
                     st.filtered);
        }
        barrier(sh_->checked, n, "pools checked");
    }

    if (me_ != 0) {
        r = mdcom_term(m_);
        if (r != 0)
            fail("mdcom_term = %d", r);
        sh_->detached.fetch_add(1);
    } else {
        if (!wait_until([&] { return sh_->detached.load() >= n - 1 || sh_->abort.load(); },
                        kBarrierTimeout))
            fail("the other processes did not detach");
        for (const auto &d : topo_.domains) {
            if (sh_->abort.load())
                break;
            int want = d.id == dom_ ? 1 : 0;
            int cnt = mdcom_sense_process(m_, d.id);
            if (cnt != want)
                fail("after the others detached: sense_process(domain %u) = %d, want %d", d.id, cnt,
                     want);
        }
        r = mdcom_term(m_);
        if (r != 0)
            fail("master mdcom_term = %d", r);
    }
    return my_errors_.load() ? 1 : sh_->abort.load() ? 2 : 0;
}

class MpTraffic : public MpFixture, public ::testing::WithParamInterface<Topology> {};

TEST_P(MpTraffic, NothingLostDuplicatedCorruptedOrReordered)
{
    const Topology &topo = GetParam();
    ASSERT_LE(topo.procs.size(), kMaxProcs);
    Shared<TrafficShared> sh;
    Config sys;
    sys.region = region_;
    sys.domains = topo.domains;
    for (uint32_t c = 0; c < kChans; c++) {
        uint32_t s = 1u << (c < 4 ? topo.x : topo.y), r = 1u << (c < 4 ? topo.y : topo.x);
        sys.channels.push_back(fifo_cfg(kSpec[c].name, kSpec[c].block_size, kSpec[c].block_count,
                                        kSpec[c].queue_depth, s, r));
    }

    uint64_t t0 = now_ns();
    std::vector<pid_t> pids;
    for (uint32_t i = 0; i < topo.procs.size(); i++) {
        pid_t pid = kids_.spawn([&, i] {
            TrafficProc p(sh.p, topo, sys, i);
            return p.run();
        });
        ASSERT_GT(pid, 0);
        pids.push_back(pid);
    }
    std::vector<std::string> outcome;
    for (pid_t pid : pids) {
        int64_t left = (int64_t)(t0 + kChildrenTimeout) - (int64_t)now_ns();
        outcome.push_back(kids_.wait(pid, left > kSec ? left : kSec));
    }
    double secs = (double)(now_ns() - t0) / 1e9;
    std::string bad;
    for (size_t i = 0; i < outcome.size(); i++)
        if (!outcome[i].empty())
            bad += "\n  process " + std::to_string(i) + " (domain " +
                   std::to_string(topo.procs[i]) + "): " + outcome[i];
    EXPECT_EQ(bad, "") << "processes that failed (exit status 2: stopped because another failed)";
    /* the counts below are meaningless once a process gave up */
    ASSERT_EQ(sh->errors.load(), 0u) << "first error: " << sh->first_error;

    uint64_t total = 0, lost = 0, dup = 0;
    for (uint32_t c = 0; c < kChans; c++) {
        uint32_t sdom = c < 4 ? topo.x : topo.y;
        for (uint32_t p = 0; p < topo.procs.size(); p++) {
            if (topo.procs[p] != sdom)
                continue;
            for (uint32_t s = 0; s < kPerProducer; s++) {
                uint8_t v = sh->seen[c][p][s].load();
                total++;
                lost += v == 0;
                dup += v > 1 ? v - 1u : 0u;
            }
        }
        EXPECT_EQ(sh->received[c].load(), topo.count(sdom) * kPerProducer) << kSpec[c].name;
        EXPECT_EQ(sh->ends[c].load(), topo.count(c < 4 ? topo.y : topo.x)) << kSpec[c].name;
    }
    EXPECT_GE(total, 100000u);
    EXPECT_EQ(lost, 0u) << "of " << total << " messages";
    EXPECT_EQ(dup, 0u) << "of " << total << " messages";
    RecordProperty("messages", (int)total);
    printf("  %llu messages through 8 channels by %zu processes in %.2f s\n",
           (unsigned long long)total, topo.procs.size(), secs);
}

const mdcom_domain_cfg kDomA{"a", 0, MDCOM_ROLE_MASTER};
const mdcom_domain_cfg kDomB{"b", 1, MDCOM_ROLE_REMOTE};

INSTANTIATE_TEST_SUITE_P(
    Topologies, MpTraffic,
    ::testing::Values(
        /* the scenario: master "a" and remote "b", two processes each */
        Topology{"TwoPerDomain", {kDomA, kDomB}, {0, 0, 1, 1}, 0, 1},
        /* the same traffic between two remote domains, the master only formats */
        Topology{
            "TwoRemoteDomainsTwoEach",
            {{"m", 0, MDCOM_ROLE_MASTER}, {"x", 1, MDCOM_ROLE_REMOTE}, {"y", 2, MDCOM_ROLE_REMOTE}},
            {0, 1, 1, 2, 2},
            1,
            2}),
    [](const ::testing::TestParamInfo<Topology> &i) { return std::string(i.param.label); });

/* ------------------------------------------------------------------ */
/* SMEM                                                                 */
/* ------------------------------------------------------------------ */

struct SmemArea {
    volatile uint32_t counter;
    volatile uint32_t holder; /* process index + 1 while inside the critical section */
};

struct SmemShared {
    std::atomic<uint32_t> abort{0};
    std::atomic<uint32_t> master_ready{0};
    std::atomic<uint32_t> attached{0}, done{0}, detached{0};
    std::atomic<uint32_t> final_value{0};
    std::atomic<uint32_t> contended{0}; /* trylocks that found the lock held */
};

constexpr uint32_t kLockIters = 20000;

/* (an SMEM process) until ctr counts need processes: 0; 1 (reported) on a
 * timeout; 2 when a process aborted the test */
int smem_wait(SmemShared *sh, std::atomic<uint32_t> &ctr, uint32_t need, const char *what)
{
    CHILD_CHECK(wait_until([&] { return ctr.load() >= need || sh->abort.load(); }, kBarrierTimeout),
                "only %u of %u processes %s", ctr.load(), need, what);
    return sh->abort.load() ? 2 : 0;
}

struct SmemTopo {
    const char *label;
    std::vector<uint32_t> procs; /* domain of each process (a = 0 master, b = 1) */
};
void PrintTo(const SmemTopo &t, std::ostream *os) { *os << t.label; }

class MpSmemContention : public MpFixture, public ::testing::WithParamInterface<SmemTopo> {};

int smem_proc(SmemShared *sh, Config &sys, const SmemTopo &topo, uint32_t me)
{
    const uint32_t n = (uint32_t)topo.procs.size();
    const uint32_t dom = topo.procs[me];
    if (me != 0 && dom == 0 &&
        !wait_until([&] { return sh->master_ready.load() || sh->abort.load(); }, 10 * kSec))
        return 2; /* the master process failed */
    if (sh->abort.load())
        return 2;
    mdcom_t *m = nullptr;
    int r = attach(&m, sys.get(), dom, me == 0 ? MDCOM_POLL : 5 * kSec);
    CHILD_CHECK(r == 0, "init(domain %u) = %d (%s)", dom, r, mdcom_strerror(r));
    if (me == 0)
        sh->master_ready.store(1);
    sh->attached.fetch_add(1);
    if (int rc = smem_wait(sh, sh->attached, n, "attached"))
        return rc;

    mdcom_smemch_t *ch = nullptr;
    r = mdcom_smemch_open(m, "counter", &ch);
    CHILD_CHECK(r == 0, "smemch_open = %d", r);
    void *p = nullptr;
    uint32_t size = 0;
    r = mdcom_smemch_get(ch, &p, &size);
    CHILD_CHECK(r == 0 && size >= sizeof(SmemArea), "smemch_get = %d, size %u", r, size);
    SmemArea *a = static_cast<SmemArea *>(p);
    for (uint32_t i = 0; i < kLockIters; i++) {
        if (i % 7 == 3) {
            /* trylock until it succeeds */
            uint64_t end = now_ns() + (uint64_t)kOpTimeout;
            while ((r = mdcom_smemch_trylock(ch)) == -EBUSY) {
                sh->contended.fetch_add(1, std::memory_order_relaxed);
                CHILD_CHECK(now_ns() < end, "trylock kept failing for %lld ms",
                            (long long)(kOpTimeout / kMs));
                sched_yield();
            }
            CHILD_CHECK(r == 0, "trylock = %d (%s)", r, mdcom_strerror(r));
        } else {
            r = mdcom_smemch_lock(ch, kOpTimeout);
            CHILD_CHECK(r == 0, "lock = %d (%s) at iteration %u", r, mdcom_strerror(r), i);
        }
        uint32_t h = a->holder;
        CHILD_CHECK(h == 0, "mutual exclusion violated: process %u entered while %u holds it", me,
                    h - 1);
        a->holder = me + 1;
        uint32_t v = a->counter;
        if ((i & 255) == 0)
            sleep_ns(20000); /* long critical sections: the others go to sleep in lock() */
        else if ((i & 31) == 0)
            sched_yield();
        a->counter = v + 1;
        h = a->holder;
        CHILD_CHECK(h == me + 1, "mutual exclusion violated: holder became %u", h);
        a->holder = 0;
        r = mdcom_smemch_unlock(ch);
        CHILD_CHECK(r == 0, "unlock = %d (%s)", r, mdcom_strerror(r));
    }
    sh->done.fetch_add(1);
    if (int rc = smem_wait(sh, sh->done, n, "finished"))
        return rc;
    if (me != 0) {
        r = mdcom_term(m);
        CHILD_CHECK(r == 0, "term = %d", r);
        sh->detached.fetch_add(1);
        return 0;
    }
    r = mdcom_smemch_lock(ch, kOpTimeout);
    CHILD_CHECK(r == 0, "final lock = %d", r);
    sh->final_value.store(a->counter);
    r = mdcom_smemch_unlock(ch);
    CHILD_CHECK(r == 0, "final unlock = %d", r);
    if (int rc = smem_wait(sh, sh->detached, n - 1, "detached"))
        return rc;
    r = mdcom_term(m);
    CHILD_CHECK(r == 0, "master term = %d", r);
    return 0;
}

TEST_P(MpSmemContention, SharedCounterIsExact)
{
    const SmemTopo &topo = GetParam();
    Shared<SmemShared> sh;
    Config sys = Config::two_domains(region_);
    sys.channels.push_back(smem_cfg("counter", 64, 3u));

    uint64_t t0 = now_ns();
    std::vector<pid_t> pids;
    for (uint32_t i = 0; i < topo.procs.size(); i++) {
        pid_t pid = kids_.spawn([&, i] {
            int rc = smem_proc(sh.p, sys, topo, i);
            if (rc != 0)
                sh->abort.store(1); /* the others stop waiting for this one */
            return rc;
        });
        ASSERT_GT(pid, 0);
        pids.push_back(pid);
    }
    std::string bad;
    for (size_t i = 0; i < pids.size(); i++) {
        int64_t left = (int64_t)(t0 + kChildrenTimeout) - (int64_t)now_ns();
        std::string o = kids_.wait(pids[i], left > kSec ? left : kSec);
        if (!o.empty())
            bad += "\n  process " + std::to_string(i) + " (domain " +
                   std::to_string(topo.procs[i]) + "): " + o;
    }
    ASSERT_EQ(bad, "") << "processes that failed (exit status 2: stopped because another failed)";
    EXPECT_EQ(sh->final_value.load(), kLockIters * topo.procs.size());
    printf("  %zu processes x %u lock/increment/unlock in %.2f s (%u contended trylocks)\n",
           topo.procs.size(), kLockIters, (double)(now_ns() - t0) / 1e9, sh->contended.load());
}

INSTANTIATE_TEST_SUITE_P(Topologies, MpSmemContention,
                         ::testing::Values(SmemTopo{"TwoPerDomain", {0, 0, 1, 1}},
                                           SmemTopo{"OneMasterThreeRemote", {0, 1, 1, 1}}),
                         [](const ::testing::TestParamInfo<SmemTopo> &i) {
                             return std::string(i.param.label);
                         });

/* trylock -EBUSY while another process holds the lock, -EPERM for an unlock by
 * a process that does not hold it, -EDEADLK on a relock, and a lock waiter in
 * one process woken by the unlock in another (spin and futex path). */
struct LockShared {
    std::atomic<uint32_t> stage{0};
    std::atomic<uint64_t> t_unlock{0}, t_locked{0};
};

class MpSmemLock : public MpFixture, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(MpSmemLock, TrylockBusyAcrossProcessesAndWakeOnUnlock)
{
    const uint32_t spin = GetParam();
    Shared<LockShared> sh;
    Config sys = Config::two_domains(region_);
    sys.channels.push_back(smem_cfg("area", 128, 3u));
    const mdcom_config *cfg = sys.get();

    Inst master;
    ASSERT_EQ(attach(&master.m, cfg, 0, MDCOM_POLL, spin), 0);
    mdcom_smemch_t *ch = nullptr;
    ASSERT_EQ(mdcom_smemch_open(master, "area", &ch), 0);
    uint32_t *area = nullptr;
    ASSERT_EQ(mdcom_smemch_get(ch, reinterpret_cast<void **>(&area), nullptr), 0);
    ASSERT_EQ(mdcom_smemch_trylock(ch), 0);
    area[0] = 0x1234;
    ASSERT_EQ(mdcom_smemch_trylock(ch), -EDEADLK);

    pid_t pid = kids_.spawn([&] {
        mdcom_t *m = nullptr;
        int r = attach(&m, cfg, 1, 5 * kSec, spin);
        CHILD_CHECK(r == 0, "init = %d", r);
        mdcom_smemch_t *c = nullptr;
        CHILD_CHECK(mdcom_smemch_open(m, "area", &c) == 0, "open");
        uint32_t *a = nullptr;
        CHILD_CHECK(mdcom_smemch_get(c, reinterpret_cast<void **>(&a), nullptr) == 0, "get");
        /* the parent holds the lock */
        r = mdcom_smemch_trylock(c);
        CHILD_CHECK(r == -EBUSY, "trylock while the other process holds it = %d (%s)", r,
                    mdcom_strerror(r));
        r = mdcom_smemch_unlock(c);
        CHILD_CHECK(r == -EPERM, "unlock of a lock held by another process = %d (%s)", r,
                    mdcom_strerror(r));
        uint64_t t = now_ns();
        r = mdcom_smemch_lock(c, 100 * kMs);
        int64_t el = (int64_t)(now_ns() - t);
        CHILD_CHECK(r == -ETIMEDOUT, "lock(100 ms) on a held lock = %d (%s)", r, mdcom_strerror(r));
        CHILD_CHECK(el >= 100 * kMs && el < 100 * kMs + 900 * kMs,
                    "lock(100 ms) timed out after %lld ms", (long long)(el / kMs));
        r = mdcom_smemch_lock(c, MDCOM_POLL);
        CHILD_CHECK(r == -ETIMEDOUT, "lock(POLL) on a held lock = %d", r);
        /* block until the parent unlocks */
        sh->stage.store(1);
        r = mdcom_smemch_lock(c, 10 * kSec);
        sh->t_locked.store(now_ns());
        CHILD_CHECK(r == 0, "lock(10 s) = %d (%s)", r, mdcom_strerror(r));
        CHILD_CHECK(a[0] == 0x5678, "area holds %#x, the holder wrote 0x5678", a[0]);
        r = mdcom_smemch_trylock(c);
        CHILD_CHECK(r == -EDEADLK, "relock by the holder = %d", r);
        a[0] = 0x9abc;
        sh->stage.store(2);
        /* hold it until the parent has seen -EBUSY */
        CHILD_CHECK(wait_until([&] { return sh->stage.load() >= 3; }, 10 * kSec), "stage 3");
        r = mdcom_smemch_unlock(c);
        CHILD_CHECK(r == 0, "unlock = %d", r);
        sh->stage.store(4);
        CHILD_CHECK(wait_until([&] { return sh->stage.load() >= 5; }, 10 * kSec), "stage 5");
        CHILD_CHECK(mdcom_term(m) == 0, "term");
        return 0;
    });
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 1; }, 10 * kSec));
    sleep_ms(150); /* the child is asleep in lock() */
    area[0] = 0x5678;
    sh->t_unlock.store(now_ns());
    ASSERT_EQ(mdcom_smemch_unlock(ch), 0);
    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 2; }, 10 * kSec));
    int64_t wake = (int64_t)(sh->t_locked.load() - sh->t_unlock.load());
    EXPECT_GE(wake, 0);
    EXPECT_LT(wake, 500 * kMs) << "the waiter took " << wake / kMs << " ms to get the lock";
    EXPECT_EQ(mdcom_smemch_trylock(ch), -EBUSY);
    EXPECT_EQ(mdcom_smemch_unlock(ch), -EPERM);
    sh->stage.store(3);
    ASSERT_TRUE(wait_until([&] { return sh->stage.load() >= 4; }, 10 * kSec));
    EXPECT_EQ(mdcom_smemch_lock(ch, kSec), 0);
    EXPECT_EQ(area[0], 0x9abcu);
    EXPECT_EQ(mdcom_smemch_unlock(ch), 0);
    sh->stage.store(5);
    EXPECT_EQ(kids_.wait(pid, 20 * kSec), "");
    EXPECT_EQ(master.term(), 0);
}

INSTANTIATE_TEST_SUITE_P(Spin, MpSmemLock, ::testing::Values(0u, MDCOM_NO_SPIN),
                         [](const ::testing::TestParamInfo<uint32_t> &i) {
                             return std::string(i.param == MDCOM_NO_SPIN ? "NoSpin"
                                                                         : "DefaultSpin");
                         });

} // namespace
