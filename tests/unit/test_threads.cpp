/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_threads.cpp - MPMC stress on one FIFO channel (also the TSan target).
 *
 * Every message carries (producer, sequence number, payload derived from
 * both) and a CRC-32 over all of it. Consumers check the CRC and the payload,
 * mark (producer, seq) as seen (a second sighting is a duplicate), and check
 * that each producer's messages reach each consumer in increasing order. At
 * the end every message was seen exactly once and every block is back in the
 * pool.
 *
 *   FourAttachments   2 producers + 2 consumers, each its own attachment and
 *                     domain (four mappings of the region)
 *   OneAttachment     2 producers + 2 consumers sharing one attachment (one
 *                     mapping: TSan sees every shared access)
 *   OneAttachmentSharedRecord
 *                     the same, with four more threads holding operation
 *                     records: one of the four takes the last own record,
 *                     three share record 0 (one operation at a time)
 */
#include "fixture.h"

#include <thread>

using namespace ut;

namespace {

constexpr uint32_t kMessages = 200000; /* total, split over 2 producers */
constexpr uint32_t kBlockSize = 128;
constexpr uint32_t kHeader = 12;     /* producer, seq, len */
constexpr int64_t kStep = ms(10000); /* per operation: far beyond any normal wait */

/* One domain; FIFOs "main" and `second` (kBlockSize x 4) and "idle" (for
 * tsup::RecordHolders), each master -> master; m attached as the master. */
::testing::AssertionResult filter_setup(Config &c, Inst &m, const char *second)
{
    c.std_domains(1);
    c.fifo("main", kBlockSize, 4, 0, bit(kMaster), bit(kMaster));
    c.fifo(second, kBlockSize, 4, 0, bit(kMaster), bit(kMaster));
    c.fifo("idle", 16, 2, 0, bit(kMaster), bit(kMaster));
    if (m.init(c.get(), kMaster) != 0)
        return ::testing::AssertionFailure() << m.err;
    return ::testing::AssertionSuccess();
}

uint32_t msg_len(uint32_t seq) { return kHeader + 4 + seq % (kBlockSize - kHeader - 4 + 1); }

uint8_t payload_byte(uint32_t producer, uint32_t seq, uint32_t i)
{
    return (uint8_t)((seq * 31u + i * 7u + producer * 101u) ^ (seq >> 8));
}

/* Build message (producer, seq) into p; returns its length. */
uint32_t build(uint8_t *p, uint32_t producer, uint32_t seq)
{
    uint32_t len = msg_len(seq);
    std::memcpy(p, &producer, 4);
    std::memcpy(p + 4, &seq, 4);
    std::memcpy(p + 8, &len, 4);
    for (uint32_t i = kHeader; i < len - 4; i++)
        p[i] = payload_byte(producer, seq, i);
    uint32_t crc = crc32(p, len - 4);
    std::memcpy(p + len - 4, &crc, 4);
    return len;
}

struct Tally {
    explicit Tally(uint32_t per_producer) : per(per_producer), seen(2 * per_producer)
    {
        for (auto &s : seen)
            s.store(0, std::memory_order_relaxed);
    }
    uint32_t per;
    std::vector<std::atomic<uint8_t>> seen;
    std::atomic<uint32_t> received{0};
    std::atomic<uint32_t> corrupt{0}, dup{0}, order{0}, bad_len{0}, api_errors{0};
    std::atomic<bool> abort{false};
    std::string first_error;
    std::atomic<bool> have_error{false};
    void error(std::atomic<uint32_t> &counter, const std::string &what)
    {
        counter++;
        bool f = false;
        if (have_error.compare_exchange_strong(f, true))
            first_error = what;
    }
    /* An API call failed with r: count it and stop every thread; false. */
    bool fail(const char *call, int r)
    {
        error(api_errors, std::string(call) + ": " + errname(r));
        abort = true;
        return false;
    }
};

/* op() until it stops answering busy, waiting for ev (at most kStep) between
 * tries; op's result, or the wait's error. */
template <class Op>
int retry(mdcom_fifoch_t *ch, int busy, uint32_t ev, Op op)
{
    int r;
    while ((r = op()) == busy) {
        r = mdcom_fifoch_wait(ch, ev, kStep);
        if (r < 0)
            break;
    }
    return r;
}

/* Check one received message. last[p] = last seq from producer p seen by this
 * consumer (or -1). */
void check(Tally &t, const uint8_t *p, uint32_t len, int64_t last[2])
{
    uint32_t producer, seq, hlen, crc;
    if (len < kHeader + 4 || len > kBlockSize) {
        t.error(t.bad_len, "length " + std::to_string(len));
        return;
    }
    std::memcpy(&producer, p, 4);
    std::memcpy(&seq, p + 4, 4);
    std::memcpy(&hlen, p + 8, 4);
    std::memcpy(&crc, p + len - 4, 4);
    if (crc != crc32(p, len - 4) || hlen != len || producer > 1 || seq >= t.per ||
        len != msg_len(seq)) {
        t.error(t.corrupt, "corrupted message p=" + std::to_string(producer) +
                               " seq=" + std::to_string(seq) + " len=" + std::to_string(len));
        return;
    }
    for (uint32_t i = kHeader; i < len - 4; i++) {
        if (p[i] != payload_byte(producer, seq, i)) {
            t.error(t.corrupt, "payload differs");
            return;
        }
    }
    if (t.seen[producer * t.per + seq].fetch_add(1) != 0)
        t.error(t.dup, "duplicate p=" + std::to_string(producer) + " seq=" + std::to_string(seq));
    if ((int64_t)seq <= last[producer])
        t.error(t.order, "out of order p=" + std::to_string(producer) + " seq=" +
                             std::to_string(seq) + " after " + std::to_string(last[producer]));
    last[producer] = seq;
    t.received.fetch_add(1);
}

/* Producer: zero-copy (alloc/get/enqueue/notify) or the send() helper. */
void producer(Tally &t, mdcom_fifoch_t *ch, uint32_t index, bool zero_copy)
{
    uint8_t buf[kBlockSize];
    for (uint32_t seq = 0; seq < t.per && !t.abort.load(std::memory_order_relaxed); seq++) {
        if (!zero_copy) {
            uint32_t len = build(buf, index, seq);
            int r = mdcom_fifoch_send(ch, buf, len, kStep);
            if (r != 0)
                t.fail("send", r);
            continue;
        }
        uint32_t id;
        int r = retry(ch, -ENOBUFS, MDCOM_EV_TX, [&] { return mdcom_fifoch_alloc(ch, &id); });
        if (r != 0 && !t.fail("alloc/wait TX", r))
            break;
        void *p;
        uint32_t sz;
        if (((r = mdcom_fifoch_get(ch, id, &p, &sz)) != 0 || sz != kBlockSize) && !t.fail("get", r))
            break;
        uint32_t len = build((uint8_t *)p, index, seq);
        r = retry(ch, -EAGAIN, MDCOM_EV_SPACE, [&] { return mdcom_fifoch_enqueue(ch, id, len); });
        if (r != 0 && !t.fail("enqueue", r))
            break;
        if (seq % 4 == 3 || seq + 1 == t.per) /* notify per small batch */
            mdcom_fifoch_notify(ch);
    }
    mdcom_fifoch_notify(ch);
}

/* Consumer: zero-copy (dequeue/get/free/notify) or the recv() helper. */
void consumer(Tally &t, mdcom_fifoch_t *ch, bool zero_copy)
{
    int64_t last[2] = {-1, -1};
    uint8_t buf[kBlockSize];
    const uint32_t total = 2 * t.per;
    while (t.received.load() < total && !t.abort.load(std::memory_order_relaxed)) {
        if (!zero_copy) {
            int r = mdcom_fifoch_recv(ch, buf, sizeof(buf), ms(20));
            if (r == -ETIMEDOUT)
                continue;
            if (r < 0 && !t.fail("recv", r))
                break;
            check(t, buf, (uint32_t)r, last);
            continue;
        }
        uint32_t id, len;
        int r = mdcom_fifoch_dequeue(ch, &id, &len);
        if (r == -EAGAIN) {
            r = mdcom_fifoch_wait(ch, MDCOM_EV_RX, ms(20));
            if (r < 0 && r != -ETIMEDOUT)
                t.fail("wait RX", r);
            continue;
        }
        if (r != 0 && !t.fail("dequeue", r))
            break;
        void *p;
        if (((r = mdcom_fifoch_get(ch, id, &p, nullptr)) != 0) && !t.fail("get", r))
            break;
        check(t, (const uint8_t *)p, len, last);
        if (((r = mdcom_fifoch_free(ch, id)) != 0) && !t.fail("free", r))
            break;
        mdcom_fifoch_notify(ch);
    }
}

void run(mdcom_fifoch_t *p0, mdcom_fifoch_t *p1, mdcom_fifoch_t *c0, mdcom_fifoch_t *c1,
         mdcom_fifoch_t *sense_ch)
{
    Tally t(kMessages / 2);
    uint64_t t0 = now_ns();
    std::thread tp0(producer, std::ref(t), p0, 0u, true);
    std::thread tp1(producer, std::ref(t), p1, 1u, false);
    std::thread tc0(consumer, std::ref(t), c0, true);
    std::thread tc1(consumer, std::ref(t), c1, false);
    tp0.join();
    tp1.join();
    tc0.join();
    tc1.join();
    double secs = (double)(now_ns() - t0) / 1e9;
    std::printf("  %u messages in %.2f s (%.0f msg/s)\n", t.received.load(), secs,
                t.received.load() / secs);

    EXPECT_FALSE(t.have_error.load()) << "first error: " << t.first_error;
    EXPECT_EQ(t.api_errors.load(), 0u);
    EXPECT_EQ(t.corrupt.load(), 0u);
    EXPECT_EQ(t.dup.load(), 0u);
    EXPECT_EQ(t.order.load(), 0u);
    EXPECT_EQ(t.bad_len.load(), 0u);
    EXPECT_EQ(t.received.load(), kMessages);
    uint32_t missing = 0;
    for (auto &s : t.seen)
        missing += s.load() == 0;
    EXPECT_EQ(missing, 0u) << "lost messages";

    mdcom_fifo_state st;
    ASSERT_EQ(0, mdcom_sense_fifoch(sense_ch, &st));
    EXPECT_EQ(st.free_blocks, st.block_count) << "every block back in the pool";
    EXPECT_EQ(st.queued, 0u);
    EXPECT_EQ(st.errors, 0u);
    EXPECT_EQ(st.filtered, 0u);
}

} // namespace

/* m and r1 send, r2 and r3 receive on one channel of blocks blocks and a
 * queue of depth slots (0: as many as blocks), each attachment with spin_ns. */
static void run_four(const char *name, uint32_t blocks, uint32_t depth, uint32_t spin_ns = 0)
{
    Config c;
    c.std_domains(4);
    c.fifo(name, kBlockSize, blocks, depth, bit(kMaster) | bit(kR1), bit(kR2) | bit(kR3));
    Inst in[4];
    for (uint32_t d = 0; d < 4; d++)
        ASSERT_EQ(0, in[d].init(c.get(), d, 0, spin_ns)) << in[d].err;
    run(in[0].fifo(name), in[1].fifo(name), in[2].fifo(name), in[3].fifo(name), in[0].fifo(name));
}

TEST(Threads, MpmcFourAttachments) { run_four("mpmc", 64, 0); }

TEST(Threads, MpmcOneAttachment)
{
    Config c;
    c.std_domains(1);
    c.fifo("self", kBlockSize, 32, 0, bit(kMaster), bit(kMaster));
    Inst m;
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    mdcom_fifoch_t *ch = m.fifo("self");
    run(ch, ch, ch, ch, ch);
}

TEST(Threads, MpmcOneAttachmentSharedRecord)
{
    Config c;
    c.std_domains(1);
    c.fifo("self", kBlockSize, 32, 0, bit(kMaster), bit(kMaster));
    c.fifo("idle", 16, 2, 0, bit(kMaster), bit(kMaster));
    Inst m;
    ASSERT_EQ(0, m.init(c.get(), kMaster)) << m.err;
    mdcom_fifoch_t *ch = m.fifo("self"), *idle = m.fifo("idle");
    /* four threads keep records: one of run's four takes the last own one */
    tsup::RecordHolders hold(idle, MDCOM_PROC_RECS - 2);
    EXPECT_EQ(0, hold.bad());
    run(ch, ch, ch, ch, ch);
}

/* A thread that shares record 0 holds its lock through an enqueue, filter
 * included; a filter function that sends on another channel of the same
 * attachment takes the lock again (it is recursive) instead of waiting for
 * itself for ever. */
TEST(Threads, SharedRecordFilterMaySendOnTheSameAttachment)
{
    Config c;
    Inst m;
    ASSERT_TRUE(filter_setup(c, m, "copy"));
    mdcom_fifoch_t *mainq = m.fifo("main"), *copy = m.fifo("copy");
    /* every own record kept: the thread below shares record 0 */
    tsup::RecordHolders hold(m.fifo("idle"), MDCOM_PROC_RECS - 1);
    EXPECT_EQ(0, hold.bad());
    mdcom_filter f{};
    f.type = MDCOM_FILTER_FUNC;
    f.arg = copy;
    f.fn = [](void *arg, const void *msg, uint32_t len) {
        return mdcom_fifoch_send((mdcom_fifoch_t *)arg, msg, len, MDCOM_POLL) == 0 ? 1 : 0;
    };
    ASSERT_EQ(0, mdcom_filter_set(mainq, &f));
    std::atomic<int> sent{1};
    std::thread t([&] { sent = mdcom_fifoch_send(mainq, "dup", 3, ms(1000)); });
    for (int i = 0; i < 2000 && sent.load() == 1; i++)
        tsup::sleep_ns(1000000);
    ASSERT_NE(1, sent.load()) << "the sharer waits for its own record lock (not recursive)";
    t.join();
    EXPECT_EQ(0, sent.load());
    char buf[8];
    EXPECT_EQ(3, mdcom_fifoch_recv(mainq, buf, sizeof buf, MDCOM_POLL));
    EXPECT_EQ(3, mdcom_fifoch_recv(copy, buf, sizeof buf, MDCOM_POLL));
}

/* A wait inside an operation (a filter function that waits on another
 * channel) keeps the thread's record, even with every own record taken (where
 * a plain wait gives it back): the operation goes on with the record it took,
 * and a thread that runs meanwhile shares record 0 instead of taking it. */
TEST(Threads, WaitInsideAnOperationKeepsTheRecord)
{
    Config c;
    Inst m;
    ASSERT_TRUE(filter_setup(c, m, "other"));
    mdcom_fifoch_t *mainq = m.fifo("main"), *other = m.fifo("other");
    /* every own record but one kept: the sender below takes the last */
    tsup::RecordHolders hold(m.fifo("idle"), MDCOM_PROC_RECS - 2);
    EXPECT_EQ(0, hold.bad());
    static struct {
        mdcom_t *m;
        mdcom_fifoch_t *idle;
        std::atomic<int> before, after, waiting, wait_rc;
    } x;
    x.m = m.m;
    x.idle = m.fifo("idle");
    x.before = x.after = -2;
    x.waiting = 0;
    x.wait_rc = 1;
    mdcom_filter f{};
    f.type = MDCOM_FILTER_FUNC;
    f.fn = [](void *, const void *, uint32_t) {
        x.before = ut_thread_record(x.m);
        x.waiting = 1;
        x.wait_rc = mdcom_fifoch_wait(x.idle, MDCOM_EV_RX, ms(300));
        x.after = ut_thread_record(x.m);
        return 1;
    };
    ASSERT_EQ(0, mdcom_filter_set(mainq, &f));
    std::atomic<int> sent{1};
    std::thread t([&] { sent = mdcom_fifoch_send(mainq, "t", 1, ms(2000)); });
    for (int i = 0; i < 2000 && !x.waiting.load(); i++)
        tsup::sleep_ns(1000000);
    ASSERT_EQ(1, x.waiting.load()) << "the filter function did not run";
    tsup::sleep_ns(20 * 1000000); /* the filter function is asleep in its wait */
    int u_rc = 1, u_rec = -2;
    std::thread u([&] {
        u_rc = mdcom_fifoch_send(other, "u", 1, ms(100));
        u_rec = ut_thread_record(m.m);
    });
    u.join();
    t.join();
    EXPECT_EQ(-ETIMEDOUT, x.wait_rc.load());
    EXPECT_GE(x.before.load(), 1) << "the sender took the last own record";
    EXPECT_EQ(x.before.load(), x.after.load()) << "the record was given back inside the operation";
    EXPECT_EQ(0, u_rec) << "the thread that ran meanwhile took the sender's record";
    EXPECT_EQ(0, u_rc);
    EXPECT_EQ(0, sent.load());
    char buf[8];
    EXPECT_EQ(1, mdcom_fifoch_recv(mainq, buf, sizeof buf, MDCOM_POLL));
    EXPECT_EQ(1, mdcom_fifoch_recv(other, buf, sizeof buf, MDCOM_POLL));
}

/* queue shallower than the pool: producers block on SPACE as well */
TEST(Threads, MpmcShallowQueueNoSpin) { run_four("mpmc", 16, 4, MDCOM_NO_SPIN); }

/* two blocks, two slots: every thread blocks often (TX, SPACE, RX) */
TEST(Threads, MpmcTinyPool) { run_four("tiny", 2, 2); }

/* Waits announce themselves in the shared waiter count; whatever the mix of
 * events, timeouts and notifies, the count returns to zero. */
TEST(Threads, WaiterCountReturnsToZero)
{
    Config c;
    c.std_domains(2);
    c.fifo("w", 16, 4, 2, bit(kMaster), bit(kR1));
    c.smem("s", 16, bit(kMaster) | bit(kR1));
    Inst m, r;
    ASSERT_TRUE(attach_both(c, m, r));
    mdcom_fifoch_t *tx = m.fifo("w"), *rx = r.fifo("w");
    mdcom_smemch_t *ms_ = m.smem("s"), *rs = r.smem("s");
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0};
    std::vector<std::thread> th;
    for (int k = 0; k < 3; k++) {
        th.emplace_back([&, k] {
            uint32_t x = 12345u + k;
            for (int i = 0; i < 1500; i++) {
                x = x * 1103515245u + 12345u;
                uint32_t ev = 1 + (x >> 16) % 15;
                int64_t t = (x >> 8) % 3 == 0 ? MDCOM_POLL : us(50 + (x >> 4) % 200);
                int rc = mdcom_fifoch_wait(k % 2 ? rx : tx, ev, t);
                if (rc < 0 && rc != -ETIMEDOUT)
                    bad++;
            }
        });
    }
    /* the lock belongs to an attachment, not a thread: one thread per side */
    for (mdcom_smemch_t *s : {ms_, rs}) {
        th.emplace_back([&, s] {
            for (int i = 0; i < 3000; i++) {
                int rc = mdcom_smemch_lock(s, i % 3 ? us(100) : MDCOM_POLL);
                if (rc == 0)
                    mdcom_smemch_unlock(s);
                else if (rc != -ETIMEDOUT)
                    bad++;
            }
        });
    }
    std::thread notifier([&] {
        while (!stop.load()) {
            mdcom_fifoch_notify(tx);
            mdcom_fifoch_notify(rx);
            std::this_thread::yield();
        }
    });
    for (auto &t : th)
        t.join();
    stop = true;
    notifier.join();
    EXPECT_EQ(bad.load(), 0);
    Shm shm(c.name());
    ASSERT_TRUE(shm.ok());
    Geometry g(c.get());
    FifoView f(shm.base, g.cl[0]);
    EXPECT_EQ(rd32(f.ev_waiters()), 0u) << "FIFO waiter count leaked";
    SmemView sv(shm.base, g.cl[1]);
    EXPECT_EQ(rd32(sv.waiters()), 0u) << "SMEM lock waiter count leaked";
    EXPECT_EQ(rd32(sv.lock()), 0u) << "lock left held";
}
