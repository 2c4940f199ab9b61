/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_soak.cpp - 32 FIFO channels x 4 processes for a fixed duration.
 *
 * Four processes, each its own domain (the test process is the master), move
 * messages of random sizes through 32 channels: 16 point-to-point (one
 * sender, one receiver process) and 16 multi-producer/multi-consumer (two
 * senders, two receivers). Every message carries (channel, sender, sequence,
 * length, CRC-32); sizes are random, mostly up to 256 bytes and one in 16 up
 * to the block size (16 B .. 64 KiB). Senders use copy or zero-copy at random, never block; a
 * process with nothing to do waits (1 ms) on one of its receive channels.
 *
 * Checked:
 *   - nothing corrupted (CRC, length, channel), nothing duplicated (a ring
 *     bitmap per sender and channel), nothing reordered per sender on the
 *     point-to-point channels, nothing lost (received == sent per channel
 *     after the drain);
 *   - region usage flat: at the end every block of every channel is free, the
 *     queues empty, no protocol error counted;
 *   - memory flat: each process' private resident memory (RssAnon) at the
 *     end is within 1 MiB of what it was after the warm-up (printed but not
 *     asserted under TSan, whose shadow of the shared region grows with it).
 *
 *   MDCOM_SOAK_SECONDS=n   duration of the traffic (default 60 = CI; the long run
 *                          of scripts/reliability uses 600)
 */
#include <gtest/gtest.h>

#include <random>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

constexpr uint32_t kProcs = 4, kChans = 32;
constexpr uint32_t kRingBits = 1u << 20; /* duplicate window per (channel, sender) */
const uint32_t kSizes[] = {16, 64, 200, 512, 1024, 4096, 16384, 65536};
const uint32_t kCounts[] = {4, 16, 64, 8, 32, 2, 16, 4};

struct Hdr {
    uint8_t chan, sender;
    uint16_t pad;
    uint32_t seq, len, crc;
};
static_assert(sizeof(Hdr) == 16, "header");

struct Pair {
    std::atomic<uint32_t> sent, received, next; /* next: expected seq (p2p) */
    std::atomic<uint64_t> ring[kRingBits / 64];
};

struct Book {
    std::atomic<uint64_t> corrupt, dups, reorder, lapped, proto, unexpected, timeouts;
    std::atomic<int32_t> last_unexpected;
    std::atomic<uint32_t> done_sending, drained, checked;
    std::atomic<uint64_t> chan_sent[kChans], chan_recv[kChans];
    std::atomic<int64_t> rss_warm[kProcs], rss_end[kProcs];
    std::atomic<uint64_t> min_free; /* fewest free blocks seen (all channels) */
    Pair pairs[kChans][2];
};

struct ChanRole {
    uint32_t senders[2], n_senders;
    uint32_t receivers[2], n_receivers;
};

ChanRole role(uint32_t c)
{
    ChanRole r{};
    uint32_t s = c % kProcs;
    if (c % 2 == 0) { /* point to point */
        r.senders[0] = s;
        r.n_senders = 1;
        r.receivers[0] = (s + 1 + (c / 4) % 3) % kProcs;
        r.n_receivers = 1;
    } else {
        r.senders[0] = s;
        r.senders[1] = (s + 2) % kProcs;
        r.n_senders = 2;
        r.receivers[0] = (s + 1) % kProcs;
        r.receivers[1] = (s + 3) % kProcs;
        r.n_receivers = 2;
    }
    return r;
}

long rss_anon_kib()
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld kB", &v) == 1)
            break;
    fclose(f);
    return v;
}

struct Soak {
    Config sys;
    std::vector<std::string> names;
    Book *bk = nullptr;
    uint64_t duration_ns = 0;

    explicit Soak(const std::string &region)
    {
        sys.region = region;
        sys.domains = {{"p0", 0, MDCOM_ROLE_MASTER},
                       {"p1", 1, MDCOM_ROLE_REMOTE},
                       {"p2", 2, MDCOM_ROLE_REMOTE},
                       {"p3", 3, MDCOM_ROLE_REMOTE}};
        names.reserve(kChans);
        for (uint32_t c = 0; c < kChans; c++) {
            names.push_back("ch" + std::to_string(c));
            ChanRole r = role(c);
            uint32_t sm = 0, rm = 0;
            for (uint32_t i = 0; i < r.n_senders; i++)
                sm |= 1u << r.senders[i];
            for (uint32_t i = 0; i < r.n_receivers; i++)
                rm |= 1u << r.receivers[i];
            uint32_t depth = (c % 3 == 0) ? 2 : 0; /* some queues shallower than the pool */
            sys.channels.push_back(fifo_cfg(names.back().c_str(), kSizes[c % 8],
                                            kCounts[(c / 8 + c) % 8], depth, sm, rm));
        }
        void *p =
            mmap(nullptr, sizeof(Book), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        bk = p == MAP_FAILED ? nullptr : static_cast<Book *>(p);
        if (bk)
            bk->min_free = UINT64_MAX;
    }
    ~Soak()
    {
        if (bk)
            munmap(bk, sizeof(Book));
    }

    static uint32_t crc_of(const uint8_t *msg, uint32_t len)
    {
        uint32_t c = crc32(msg, 12);
        return crc32(msg + 16, len - 16, c);
    }

    void check(uint32_t c, const uint8_t *msg, uint32_t len, bool p2p)
    {
        Hdr h;
        if (len < sizeof(Hdr)) {
            bk->corrupt++;
            return;
        }
        memcpy(&h, msg, sizeof h);
        ChanRole r = role(c);
        uint32_t k = 2;
        for (uint32_t i = 0; i < r.n_senders; i++)
            if (r.senders[i] == h.sender)
                k = i;
        if (h.chan != c || k == 2 || h.len != len || crc_of(msg, len) != h.crc) {
            bk->corrupt++;
            return;
        }
        Pair &p = bk->pairs[c][k];
        uint64_t bit = 1ull << (h.seq % 64);
        if (p.ring[(h.seq % kRingBits) / 64].fetch_or(bit) & bit)
            bk->dups++;
        if (p2p) {
            if (h.seq != p.next.load())
                bk->reorder++;
            p.next.store(h.seq + 1);
        }
        p.received++;
        bk->chan_recv[c]++;
    }

    /* One process of the soak; returns 0 or a failure code. */
    int run(uint32_t me, uint32_t seed, bool master_attached, mdcom_t *given)
    {
        Inst own;
        mdcom_t *m = given;
        if (!master_attached) {
            if (attach(&own.m, sys.get(), me, 10 * kSec) != 0)
                return 2;
            m = own.m;
        }
        std::mt19937 rng(seed);
        struct Mine {
            uint32_t c, k;
            mdcom_fifoch_t *ch;
            bool tx, rx, p2p;
        };
        std::vector<Mine> mine;
        std::vector<mdcom_fifoch_t *> rxs;
        for (uint32_t c = 0; c < kChans; c++) {
            ChanRole r = role(c);
            Mine x{c, 0, nullptr, false, false, c % 2 == 0};
            for (uint32_t i = 0; i < r.n_senders; i++)
                if (r.senders[i] == me) {
                    x.tx = true;
                    x.k = i;
                }
            for (uint32_t i = 0; i < r.n_receivers; i++)
                x.rx = x.rx || r.receivers[i] == me;
            if (!x.tx && !x.rx)
                continue;
            if (mdcom_fifoch_at(m, c, &x.ch) != 0)
                return 3;
            mine.push_back(x);
            if (x.rx)
                rxs.push_back(x.ch);
        }
        std::vector<uint8_t> buf(65536);
        uint64_t start = now_ns(), warm = start + duration_ns / 4, end = start + duration_ns;
        bool sending = true, warmed = false;
        uint64_t idle_since = 0;
        for (;;) {
            uint64_t now = now_ns();
            if (!warmed && now >= warm) {
                bk->rss_warm[me] = rss_anon_kib();
                warmed = true;
            }
            if (sending && now >= end) {
                sending = false;
                bk->done_sending++;
            }
            bool progress = false;
            for (auto &x : mine) {
                if (x.tx && sending) {
                    uint32_t bs = kSizes[x.c % 8];
                    Pair &p = bk->pairs[x.c][x.k];
                    uint32_t seq = p.sent.load();
                    /* mostly small messages, one in 16 up to the block size */
                    uint32_t span = (rng() % 16 == 0) ? bs - 16 : std::min(bs - 16, 240u);
                    uint32_t len = 16 + (uint32_t)(rng() % (span + 1));
                    /* clear the duplicate-window bit; the lap before must have arrived */
                    uint64_t bit = 1ull << (seq % 64);
                    bool was = p.ring[(seq % kRingBits) / 64].fetch_and(~bit) & bit;
                    if (!was && seq >= kRingBits)
                        bk->lapped++;
                    Hdr h{(uint8_t)x.c, (uint8_t)me, 0, seq, len, 0};
                    memcpy(buf.data(), &h, sizeof h);
                    uint64_t z = ((uint64_t)rng() << 32) | seq; /* xorshift fill */
                    for (uint32_t i = 16; i < len; i += 8) {
                        z ^= z << 13;
                        z ^= z >> 7;
                        z ^= z << 17;
                        memcpy(&buf[i], &z, std::min<uint32_t>(8, len - i));
                    }
                    h.crc = crc_of(buf.data(), len);
                    memcpy(buf.data(), &h, sizeof h);
                    int r;
                    if (rng() & 1) {
                        r = mdcom_fifoch_send(x.ch, buf.data(), len, MDCOM_POLL);
                    } else {
                        uint32_t id;
                        void *ptr;
                        r = mdcom_fifoch_alloc(x.ch, &id);
                        if (r == 0) {
                            mdcom_fifoch_get(x.ch, id, &ptr, nullptr);
                            memcpy(ptr, buf.data(), len);
                            r = mdcom_fifoch_enqueue(x.ch, id, len);
                            if (r == 0)
                                mdcom_fifoch_notify(x.ch);
                            else
                                mdcom_fifoch_free(x.ch, id);
                        }
                    }
                    if (r == 0) {
                        p.sent++;
                        bk->chan_sent[x.c]++;
                        progress = true;
                    } else {
                        /* not sent: the window bit goes back to what it was */
                        if (was)
                            p.ring[(seq % kRingBits) / 64].fetch_or(bit);
                        if (r != -ETIMEDOUT && r != -ENOBUFS && r != -EAGAIN) {
                            bk->unexpected++;
                            bk->last_unexpected = r;
                        }
                    }
                }
                if (x.rx) {
                    int n;
                    if (rng() & 1) {
                        n = mdcom_fifoch_recv(x.ch, buf.data(), (uint32_t)buf.size(), MDCOM_POLL);
                        if (n >= 0)
                            check(x.c, buf.data(), (uint32_t)n, x.p2p);
                    } else {
                        uint32_t id, len;
                        void *ptr;
                        n = mdcom_fifoch_dequeue(x.ch, &id, &len);
                        if (n == 0) {
                            mdcom_fifoch_get(x.ch, id, &ptr, nullptr);
                            check(x.c, (const uint8_t *)ptr, len, x.p2p);
                            mdcom_fifoch_free(x.ch, id);
                            mdcom_fifoch_notify(x.ch);
                        }
                    }
                    if (n >= 0)
                        progress = true;
                    else if (n == -EPROTO || n == -EBADMSG)
                        bk->proto++;
                    else if (n != -ETIMEDOUT && n != -EAGAIN) {
                        bk->unexpected++;
                        bk->last_unexpected = n;
                    }
                }
            }
            if (me == 0 && (rng() % 64) == 0) {
                uint64_t f = 0;
                for (uint32_t c = 0; c < kChans; c++) {
                    mdcom_fifo_state st;
                    mdcom_fifoch_t *ch;
                    if (mdcom_fifoch_at(m, c, &ch) == 0 && mdcom_sense_fifoch(ch, &st) == 0)
                        f += st.free_blocks;
                }
                uint64_t prev = bk->min_free.load();
                while (f < prev && !bk->min_free.compare_exchange_weak(prev, f)) {
                }
            }
            if (!sending && bk->done_sending.load() == kProcs) {
                bool all = true;
                for (auto &x : mine)
                    if (x.rx && bk->chan_recv[x.c].load() != bk->chan_sent[x.c].load())
                        all = false;
                if (all)
                    break;
                if (progress || !idle_since)
                    idle_since = now;
                else if (now - idle_since > 20ull * kSec)
                    return 4; /* messages missing: reported by the parent */
            }
            if (!progress && !rxs.empty()) {
                int r = mdcom_fifoch_wait(rxs[rng() % rxs.size()], MDCOM_EV_RX, kMs);
                if (r == -ETIMEDOUT)
                    bk->timeouts++;
            }
        }
        /* everybody drained: then the pools must be whole */
        bk->drained++;
        if (!wait_until([&] { return bk->drained.load() == kProcs; }, 60 * kSec))
            return 5;
        int bad = 0;
        for (auto &x : mine) {
            mdcom_fifo_state st;
            if (mdcom_sense_fifoch(x.ch, &st) != 0 || st.free_blocks != st.block_count ||
                st.queued != 0 || st.errors != 0 || st.filtered != 0) {
                fprintf(stderr, "[p%u] channel ch%u: free %u/%u queued %u errors %u\n", me, x.c,
                        st.free_blocks, st.block_count, st.queued, st.errors);
                bad = 6;
            }
        }
        bk->rss_end[me] = rss_anon_kib();
        bk->checked++;
        /* stay attached until everyone checked (a term frees nothing here, but
         * the master's term ends the region) */
        if (!wait_until([&] { return bk->checked.load() == kProcs; }, 60 * kSec))
            return 7;
        return bad;
    }
};

class SoakTest : public MpFixture {};

TEST_F(SoakTest, ThirtyTwoChannelsFourProcesses)
{
    Soak s(region_);
    ASSERT_TRUE(s.bk);
    s.duration_ns = rel::env_u64("MDCOM_SOAK_SECONDS", 60) * (uint64_t)kSec;
    const mdcom_config *cfg = s.sys.get();
    Inst a;
    ASSERT_EQ(0, attach(&a.m, cfg, 0, 0));
    uint32_t seed = (uint32_t)rel::env_u64("MDCOM_UT_SEED", (uint64_t)time(nullptr));
    printf("seed %u, %llu s, %u channels, %u processes\n", seed,
           (unsigned long long)(s.duration_ns / kSec), kChans, kProcs);
    std::vector<pid_t> pids;
    for (uint32_t p = 1; p < kProcs; p++)
        pids.push_back(kids_.spawn([&, p] { return s.run(p, seed + p, false, nullptr); }));
    uint64_t t0 = now_ns();
    int mine = s.run(0, seed, true, a.m);
    double secs = (double)(now_ns() - t0) / 1e9;
    EXPECT_EQ(mine, 0) << "master process failed (4 = messages missing, 6 = pools not whole)";
    for (pid_t p : pids)
        EXPECT_EQ("", kids_.wait(p, 90 * kSec));

    Book *bk = s.bk;
    uint64_t sent = 0, recv = 0, total_blocks = 0;
    for (uint32_t c = 0; c < kChans; c++) {
        sent += bk->chan_sent[c].load();
        recv += bk->chan_recv[c].load();
        total_blocks += s.sys.channels[c].block_count;
        EXPECT_EQ(bk->chan_sent[c].load(), bk->chan_recv[c].load()) << "channel " << c;
    }
    printf("soak: %llu messages sent, %llu received in %.1f s (%.0f msg/s)\n",
           (unsigned long long)sent, (unsigned long long)recv, secs, (double)recv / secs);
    printf("soak: corrupted %llu, duplicated %llu, reordered %llu, window lapped %llu, "
           "protocol errors %llu, other errors %llu (last %d), idle waits %llu\n",
           (unsigned long long)bk->corrupt.load(), (unsigned long long)bk->dups.load(),
           (unsigned long long)bk->reorder.load(), (unsigned long long)bk->lapped.load(),
           (unsigned long long)bk->proto.load(), (unsigned long long)bk->unexpected.load(),
           bk->last_unexpected.load(), (unsigned long long)bk->timeouts.load());
    printf("soak: free blocks min %llu during the run, all %llu at the end\n",
           (unsigned long long)bk->min_free.load(), (unsigned long long)total_blocks);
    for (uint32_t p = 0; p < kProcs; p++) {
        int64_t w = bk->rss_warm[p].load(), e = bk->rss_end[p].load();
        printf("soak: p%u RssAnon %lld KiB after warm-up, %lld KiB at the end\n", p, (long long)w,
               (long long)e);
        EXPECT_GT(w, 0);
#if defined(__SANITIZE_THREAD__)
        /* TSan's shadow of the shared region grows as traffic first touches
         * each part of the big blocks: not the process' own memory */
        (void)e;
#else
        EXPECT_LE(e - w, 1024) << "process p" << p << " grew its private memory";
#endif
    }
    EXPECT_EQ(bk->corrupt.load(), 0u);
    EXPECT_EQ(bk->dups.load(), 0u);
    EXPECT_EQ(bk->reorder.load(), 0u);
    EXPECT_EQ(bk->lapped.load(), 0u);
    EXPECT_EQ(bk->proto.load(), 0u);
    EXPECT_EQ(bk->unexpected.load(), 0u);
    EXPECT_GT(recv, 1000u);
}

} // namespace
