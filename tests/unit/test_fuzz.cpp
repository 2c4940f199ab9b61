/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_fuzz.cpp - random corruption of the shared region, then every API.
 *
 * A master and a remote are attached in this process. Each iteration a
 * "hostile peer" (a third mapping of the region) scribbles random bytes at
 * random offsets, sets random shared words to interesting values, or
 * overwrites a whole channel; then both attachments call every API with
 * short timeouts. Every result must be success or a documented negative
 * errno, every returned ID/length in range, every returned pointer inside the
 * caller's mapping, and no call may block past its timeout. From time to time
 * the region is restored from a healthy snapshot (or a channel re-initialised
 * by the master) so that the success paths run too.
 *
 *   MDCOM_UT_SEED=n        replay a run (the seed is printed)
 *   MDCOM_UT_FUZZ_ITERS=n  iterations (default 3000; capped at ~25 s)
 */
#include "fixture.h"

#include <csignal>
#include <map>
#include <random>
#include <set>

using namespace ut;

namespace {

uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : dflt;
}

/* The channels of the fuzzed system. */
struct ChanInfo {
    const char *name;
    bool fifo;
    uint32_t block_size, block_count;
};
const ChanInfo kChans[] = {
    {"a", true, 48, 8},
    {"b", true, 1, 3},
    {"s", false, 100, 0},
    {"c", true, 200, 2},
};

class Fuzz : public ::testing::Test {
protected:
    void SetUp() override
    {
        c_.std_domains(2);
        c_.fifo("a", 48, 8, 4, bit(kMaster) | bit(kR1), bit(kMaster) | bit(kR1));
        c_.fifo("b", 1, 3, 0, bit(kMaster), bit(kR1));
        c_.smem("s", 100, bit(kMaster) | bit(kR1));
        c_.fifo("c", 200, 2, 8, bit(kR1), bit(kMaster));
        cfg_ = c_.get();
        ASSERT_EQ(0, inst_[0].init(cfg_, kMaster)) << inst_[0].err;
        ASSERT_EQ(0, inst_[1].init(cfg_, kR1)) << inst_[1].err;
        for (int k = 0; k < 2; k++) {
            for (uint32_t i = 0; i < 4; i++) {
                if (kChans[i].fifo)
                    ASSERT_EQ(0, mdcom_fifoch_at(inst_[k], i, &fifo_[k][i]));
                else
                    ASSERT_EQ(0, mdcom_smemch_at(inst_[k], i, &smem_[k]));
            }
        }
        shm_.reset(new Shm(c_.name()));
        ASSERT_TRUE(shm_->ok());
        geo_.reset(new Geometry(cfg_));
        ASSERT_EQ(0, geo_->rc);
        pristine_.assign(shm_->base, shm_->base + shm_->size);
    }

    /* ------------------------------------------------------------ */
    /* the hostile peer                                               */
    /* ------------------------------------------------------------ */

    uint32_t interesting(uint32_t old)
    {
        const uint32_t owner_m = ut_owner(inst_[0]), owner_r = ut_owner(inst_[1]);
        switch (rng_() % 16) {
        case 0:
            return 0;
        case 1:
            return 1;
        case 2:
            return 0xffffffffu;
        case 3:
            return 0x80000000u;
        case 4:
            return 0x7fffffffu;
        case 5:
            return old + 1;
        case 6:
            return old - 1;
        case 7:
            return old + 4;
        case 8:
            return old + 8;
        case 9:
            return (uint32_t)rng_() % 16;
        case 10:
            return MDCOM_BLK_FREE;
        case 11:
            return MDCOM_BLK_MAKE(MDCOM_BLK_ALLOC, owner_m);
        case 12:
            return MDCOM_BLK_MAKE(MDCOM_BLK_HELD, owner_r);
        case 13:
            return MDCOM_BLK_MAKE(MDCOM_BLK_QUEUED, rng_() % 2 ? owner_m : owner_r);
        case 14:
            return old ^ (1u << (rng_() % 32));
        default:
            return (uint32_t)rng_();
        }
    }

    void scribble()
    {
        const size_t size = shm_->size;
        const int n = 1 + (int)(rng_() % 3);
        for (int k = 0; k < n; k++) {
            uint32_t what = (uint32_t)(rng_() % 100);
            if (what < 30) {
                /* random bytes anywhere */
                size_t off = rng_() % size;
                size_t len = 1 + rng_() % 8;
                for (size_t i = 0; i < len && off + i < size; i++)
                    shm_->base[off + i] = (uint8_t)rng_();
            } else if (what < 80) {
                /* an interesting value in a channel's shared words */
                const mdcom_wire_chan_layout &cl = geo_->cl[rng_() % 4];
                uint32_t span = cl.type == MDCOM_CHAN_FIFO ? cl.blocks_off : cl.data_off;
                size_t off = cl.off + (rng_() % (span / 4)) * 4;
                shm_->set_word(off, interesting(shm_->word(off)));
            } else if (what < 88) {
                /* a header word */
                size_t off = (rng_() % 16) * 4;
                if (off == offsetof(mdcom_wire_hdr, state) && rng_() % 2)
                    shm_->set_word(off, rng_() % 2 ? MDCOM_ST_TERMINATED : MDCOM_ST_FORMATTING);
                else
                    shm_->set_word(off, interesting(shm_->word(off)));
            } else if (what < 96) {
                /* a process table word: owner .. hb_ms of one entry */
                size_t off = geo_->lay.proc_off +
                             sizeof(mdcom_wire_proc) * (rng_() % MDCOM_MAX_PROCS) +
                             (rng_() % (offsetof(mdcom_wire_proc, hb_ms) / 4 + 1)) * 4;
                shm_->set_word(off, interesting(shm_->word(off)));
            } else if (what < 98) {
                /* a directory / domain table word (checked at attach only) */
                size_t off = geo_->lay.dom_off +
                             (rng_() % ((geo_->lay.data_off - geo_->lay.dom_off) / 4)) * 4;
                shm_->set_word(off, (uint32_t)rng_());
            } else {
                /* a whole channel area */
                const mdcom_wire_chan_layout &cl = geo_->cl[rng_() % 4];
                for (uint32_t i = 0; i < cl.size; i++)
                    shm_->base[cl.off + i] = (uint8_t)rng_();
            }
        }
    }

    void restore()
    {
        std::memcpy(shm_->base, pristine_.data(), pristine_.size());
        for (auto &h : held_)
            h.clear();
        restores_++;
    }

    /* ------------------------------------------------------------ */
    /* every API, checked                                             */
    /* ------------------------------------------------------------ */

    int64_t short_timeout() { return rng_() % 3 == 0 ? MDCOM_POLL : us(20 + rng_() % 80); }

    std::set<uint32_t> &held(int k, uint32_t ch) { return held_[k * 4 + ch]; }

    uint32_t some_id(int k, uint32_t ch)
    {
        std::set<uint32_t> &h = held(k, ch);
        if (!h.empty() && rng_() % 3 != 0) {
            auto it = h.begin();
            std::advance(it, rng_() % h.size());
            return *it;
        }
        uint32_t r = (uint32_t)(rng_() % 8);
        return r == 7 ? (uint32_t)rng_() : (uint32_t)(rng_() % (kChans[ch].block_count + 1));
    }

    void fifo_calls(int k, uint32_t ch)
    {
        mdcom_fifoch_t *f = fifo_[k][ch];
        const Inst &in = inst_[k];
        const uint32_t bs = kChans[ch].block_size, bc = kChans[ch].block_count;
        uint32_t id = 0xdeadbeefu, len = 0xdeadbeefu;
        int r;

        mdcom_fifo_state st;
        r = mdcom_sense_fifoch(f, &st);
        UT_EXPECT_ONE_OF(r, 0, -EPROTO);
        EXPECT_EQ(st.block_size, bs);
        EXPECT_EQ(st.block_count, bc);
        EXPECT_LE(st.queued, st.queue_depth);
        EXPECT_LE(st.free_blocks, st.block_count);

        r = mdcom_fifoch_alloc(f, &id);
        UT_EXPECT_ONE_OF(r, 0, -ENOBUFS, -EPERM, -EPROTO, -ESHUTDOWN, -ECONNRESET);
        if (r == 0) {
            EXPECT_LT(id, bc);
            held(k, ch).insert(id);
        }

        uint32_t gid = some_id(k, ch);
        void *p = nullptr;
        uint32_t sz = 0;
        r = mdcom_fifoch_get(f, gid, &p, &sz);
        UT_EXPECT_ONE_OF(r, 0, -EINVAL);
        if (r == 0) {
            EXPECT_LT(gid, bc);
            EXPECT_EQ(sz, bs);
            EXPECT_TRUE(in.inside(p, sz)) << "get(" << gid << ") outside the mapping";
            if (in.inside(p, sz))
                std::memset(p, (int)rng_(), sz); /* touch it all (ASan) */
        }

        uint32_t eid = some_id(k, ch);
        uint32_t elen = (uint32_t)(rng_() % (bs + 2));
        r = mdcom_fifoch_enqueue(f, eid, elen);
        UT_EXPECT_ONE_OF(r, 0, MDCOM_FILTERED, -EAGAIN, -EINVAL, -EALREADY, -EPERM, -EPROTO,
                         -ENOTCONN);
        if (r >= 0)
            held(k, ch).erase(eid);

        r = mdcom_fifoch_dequeue(f, &id, &len);
        UT_EXPECT_ONE_OF(r, 0, -EAGAIN, -EPERM, -EPROTO, -EBADMSG, -ECONNRESET, -ESHUTDOWN);
        if (r == 0) {
            EXPECT_LT(id, bc) << "dequeue returned an ID out of range";
            EXPECT_LE(len, bs) << "dequeue returned a length over the block size";
            if (id < bc) {
                held(k, ch).insert(id);
                void *q;
                ASSERT_EQ(0, mdcom_fifoch_get(f, id, &q, nullptr));
                ASSERT_TRUE(in.inside(q, len));
                volatile uint8_t sum = 0;
                for (uint32_t i = 0; i < len; i++)
                    sum = (uint8_t)(sum + ((uint8_t *)q)[i]);
                (void)sum;
            }
        }

        uint32_t fid = some_id(k, ch);
        r = mdcom_fifoch_free(f, fid);
        UT_EXPECT_ONE_OF(r, 0, -EINVAL, -EALREADY, -EPROTO, -ENOTCONN);
        if (r == 0 || r == -EALREADY || r == -ENOTCONN)
            held(k, ch).erase(fid);

        EXPECT_EQ(0, mdcom_fifoch_notify(f));

        uint32_t ev = 1 + (uint32_t)(rng_() % 15);
        r = mdcom_fifoch_wait(f, ev, short_timeout());
        if (r > 0) {
            EXPECT_EQ(0u, (uint32_t)r & ~ev) << "events not asked for";
        } else {
            UT_EXPECT_ONE_OF(r, -ETIMEDOUT, -ESHUTDOWN, -ECONNRESET, -EINTR);
        }

        std::vector<uint8_t> buf(bs + 2, 0x77);
        uint32_t slen = (uint32_t)(rng_() % (bs + 2));
        r = mdcom_fifoch_send(f, buf.data(), slen, short_timeout());
        UT_EXPECT_ONE_OF(r, 0, MDCOM_FILTERED, -EMSGSIZE, -ETIMEDOUT, -ESHUTDOWN, -ECONNRESET,
                         -EINTR, -EPERM, -EPROTO, -ENOBUFS, -EAGAIN, -EALREADY);
        if (slen > bs) {
            EXPECT_EQ(-EMSGSIZE, r);
        }

        uint32_t cap = (uint32_t)(rng_() % (bs + 2));
        std::vector<uint8_t> rb(cap + 16, 0xee);
        /* (NULL, 0) is covered by unit_fifo; here always a buffer, so that a
         * sanitizer build keeps exploring */
        r = mdcom_fifoch_recv(f, rb.data(), cap, short_timeout());
        if (r >= 0) {
            EXPECT_LE((uint32_t)r, cap) << "recv returned more than cap";
            EXPECT_LE((uint32_t)r, bs);
        } else {
            UT_EXPECT_ONE_OF(r, -EMSGSIZE, -ETIMEDOUT, -ESHUTDOWN, -ECONNRESET, -EINTR, -EPERM,
                             -EPROTO, -EBADMSG);
        }
        for (uint32_t i = cap; i < cap + 16; i++)
            ASSERT_EQ(rb[i], 0xee) << "recv wrote past cap";

        if (rng_() % 20 == 0) {
            mdcom_filter fl = {(uint32_t)(rng_() % 3), 1 + (uint32_t)(rng_() % 3), nullptr,
                               nullptr};
            if (fl.type == MDCOM_FILTER_FUNC)
                fl.fn = [](void *, const void *msg, uint32_t n) -> int {
                    return n == 0 || ((const uint8_t *)msg)[0] % 2;
                };
            r = mdcom_filter_set(f, &fl);
            UT_EXPECT_ONE_OF(r, 0, -EPERM);
        }
        if (rng_() % 20 == 0) {
            static const uint32_t spins[] = {0, 100, 5000, MDCOM_NO_SPIN};
            EXPECT_EQ(0, mdcom_fifoch_set_spin(f, spins[rng_() % 4]));
        }
        if (rng_() % 40 == 0) {
            r = mdcom_fifoch_init(f);
            if (k == 0) {
                EXPECT_EQ(0, r);
                held(0, ch).clear();
                held(1, ch).clear();
            } else {
                EXPECT_EQ(-EPERM, r);
            }
        }
    }

    void smem_calls(int k)
    {
        mdcom_smemch_t *s = smem_[k];
        const Inst &in = inst_[k];
        void *p = nullptr;
        uint32_t sz = 0;
        ASSERT_EQ(0, mdcom_smemch_get(s, &p, &sz));
        EXPECT_EQ(sz, 100u);
        ASSERT_TRUE(in.inside(p, sz));
        int r = mdcom_smemch_trylock(s);
        UT_EXPECT_ONE_OF(r, 0, -EBUSY, -EDEADLK);
        r = mdcom_smemch_lock(s, short_timeout());
        UT_EXPECT_ONE_OF(r, 0, -ETIMEDOUT, -EDEADLK, -ESHUTDOWN, -ECONNRESET, -EINTR);
        if (r == 0 || r == -EDEADLK)
            std::memset(p, k + 1, sz);
        r = mdcom_smemch_unlock(s);
        UT_EXPECT_ONE_OF(r, 0, -EPERM, -ENOTCONN);
        if (rng_() % 2) {
            r = mdcom_smemch_unlock(s);
            UT_EXPECT_ONE_OF(r, 0, -EPERM, -ENOTCONN);
        }
    }

    void global_calls()
    {
        for (uint32_t d : {kMaster, kR1}) {
            int n = mdcom_sense_process(inst_[rng_() % 2], d);
            EXPECT_GE(n, 0);
            EXPECT_LE(n, (int)MDCOM_MAX_PROCS);
        }
        EXPECT_EQ(-EINVAL, mdcom_sense_process(inst_[0], 5));
        if (rng_() % 50 == 0) {
            /* a third attachment tries its luck with the corrupted region */
            Inst extra;
            int r = extra.init(cfg_, kR1, rng_() % 2 ? MDCOM_POLL : us(200));
            UT_EXPECT_ONE_OF(r, 0, -ETIMEDOUT, -EPROTONOSUPPORT, -ESTALE, -EBADMSG, -EUSERS);
            if (r == 0) {
                mdcom_fifoch_t *f;
                EXPECT_EQ(0, mdcom_fifoch_open(extra, "a", &f));
                char b[48];
                r = mdcom_fifoch_recv(f, b, sizeof(b), MDCOM_POLL);
                EXPECT_TRUE(r >= 0 || r == -ETIMEDOUT || r == -EPROTO || r == -EBADMSG ||
                            r == -EMSGSIZE || r == -ESHUTDOWN || r == -ECONNRESET)
                    << errname(r);
                EXPECT_EQ(0, extra.term());
            }
            attaches_++;
        }
        if (rng_() % 100 == 0) {
            /* a second process of the master domain: joins a healthy region,
             * re-formats one it finds stale (keep_region: the file stays) */
            Inst extra;
            int r = extra.init(cfg_, kMaster, rng_() % 2 ? MDCOM_POLL : us(200), 0, 1);
            UT_EXPECT_ONE_OF(r, 0, -ETIMEDOUT, -EPROTONOSUPPORT, -ESTALE, -EBADMSG, -EUSERS,
                             -EADDRINUSE);
            if (r == 0) {
                EXPECT_EQ(0, extra.term());
            }
            attaches_++;
        }
    }

    Config c_;
    mdcom_config *cfg_ = nullptr;
    Inst inst_[2];
    mdcom_fifoch_t *fifo_[2][4] = {};
    mdcom_smemch_t *smem_[2] = {};
    std::unique_ptr<Shm> shm_;
    std::unique_ptr<Geometry> geo_;
    std::vector<uint8_t> pristine_;
    std::set<uint32_t> held_[8];
    std::mt19937_64 rng_;
    int restores_ = 0, attaches_ = 0;
};

} // namespace

TEST_F(Fuzz, RandomCorruptionThenEveryApi)
{
    const uint64_t seed = env_u64("MDCOM_UT_SEED", now_ns() ^ ((uint64_t)getpid() << 32));
    const uint64_t iters = env_u64("MDCOM_UT_FUZZ_ITERS", 3000);
    std::printf("fuzz seed %llu (replay: MDCOM_UT_SEED=%llu)\n", (unsigned long long)seed,
                (unsigned long long)seed);
    std::fflush(stdout);
    RecordProperty("seed", std::to_string(seed));
    SCOPED_TRACE("seed " + std::to_string(seed));
    rng_.seed(seed);
    alarm(55); /* a hang ends the process with SIGALRM before ctest's timeout */

    const uint64_t start = now_ns(), budget = 25ull * 1000000000ull;
    uint64_t i, worst = 0;
    for (i = 0; i < iters && now_ns() - start < budget; i++) {
        if (i % 64 == 0 || rng_() % 10 == 0)
            restore();
        else
            scribble();
        if (rng_() % 4 == 0)
            scribble();
        uint64_t t0 = now_ns();
        for (int k = 0; k < 2; k++) {
            for (uint32_t ch = 0; ch < 4; ch++) {
                if (kChans[ch].fifo)
                    fifo_calls(k, ch);
            }
            smem_calls(k);
        }
        global_calls();
        uint64_t dt = now_ns() - t0;
        worst = std::max(worst, dt);
        ASSERT_LT(dt, (uint64_t)ms(2000)) << "iteration " << i << " blocked";
        if (HasFatalFailure() || ::testing::Test::HasFailure()) {
            ADD_FAILURE() << "first failure at iteration " << i << ", seed " << seed;
            break;
        }
    }
    alarm(0);
    std::printf("fuzz: %llu iterations, %d restores, %d extra attaches, slowest %.2f ms\n",
                (unsigned long long)i, restores_, attaches_, (double)worst / 1e6);
    EXPECT_GE(i, std::min<uint64_t>(iters, 500)) << "too few iterations in the time budget";

    /* healthy again after a restore: both sides work normally */
    restore();
    for (uint32_t ch = 0; ch < 4; ch++) {
        if (!kChans[ch].fifo)
            continue;
        EXPECT_EQ(0, mdcom_fifoch_init(fifo_[0][ch]));
        for (int k = 0; k < 2; k++)
            UT_EXPECT_ONE_OF(mdcom_filter_set(fifo_[k][ch], nullptr), 0, -EPERM);
    }
    char b[48];
    EXPECT_EQ(0, mdcom_fifoch_send(fifo_[0][0], "healthy", 8, ms(100)));
    EXPECT_EQ(8, mdcom_fifoch_recv(fifo_[1][0], b, sizeof(b), ms(100)));
    EXPECT_EQ(0, inst_[1].term());
    EXPECT_EQ(0, inst_[0].term());
}

TEST_F(Fuzz, WholeRegionNoise)
{
    /* every byte random (keeping magic/state so waits keep going), many times */
    const uint64_t seed = env_u64("MDCOM_UT_SEED", now_ns());
    std::printf("noise seed %llu\n", (unsigned long long)seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    rng_.seed(seed);
    alarm(55);
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < shm_->size; i++)
            shm_->base[i] = (uint8_t)rng_();
        if (round % 2) {
            shm_->hdr()->state.store(MDCOM_ST_READY);
            shm_->hdr()->generation.store(ut_generation(inst_[0]));
        }
        for (auto &h : held_)
            h.clear();
        uint64_t t0 = now_ns();
        for (int k = 0; k < 2; k++) {
            for (uint32_t ch = 0; ch < 4; ch++)
                if (kChans[ch].fifo)
                    fifo_calls(k, ch);
            smem_calls(k);
        }
        global_calls();
        ASSERT_LT(now_ns() - t0, (uint64_t)ms(2000)) << "round " << round << " blocked";
        if (::testing::Test::HasFailure())
            break;
    }
    alarm(0);
    restore();
    EXPECT_EQ(0, inst_[1].term());
    EXPECT_EQ(0, inst_[0].term());
}
