/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_stat.cpp - mdcom-stat against a live region and against corrupted ones.
 *
 *   StatLive     a region made by libmdcom (queued messages, an allocated
 *                block, a held SMEM lock, a killed process): text and JSON
 *                show them; the file is unchanged by reading it; --watch.
 *   StatCorrupt  copies of that region scribbled in targeted and random ways
 *                (and a file of random bytes, empty, truncated): mdcom-stat
 *                never crashes or trips a sanitizer; a broken structure gives
 *                exit status 3 and a message, broken live words warnings.
 *
 *   MDCOM_REL_STAT_ITERS=n   random scribbles (default 120)
 */
#include <gtest/gtest.h>

#include <random>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

const std::string kStat = MDCOM_STAT_EXE;

/* The system shown: master "a", remote "b"; two FIFOs and an SMEM area. */
struct StatSystem {
    Config sys;
    explicit StatSystem(const std::string &region)
    {
        sys = Config::two_domains(region);
        sys.channels = {fifo_cfg("ctl", 64, 8, 0, 1u, 2u), fifo_cfg("back", 32, 4, 4, 2u, 1u),
                        smem_cfg("state", 100, 3u)};
    }
};

bool contains(const std::string &s, const std::string &what)
{
    return s.find(what) != std::string::npos;
}

class StatLive : public MpFixture {};

TEST_F(StatLive, ShowsQueuesLocksAndProcesses)
{
    StatSystem s(region_);
    const mdcom_config *cfg = s.sys.get();
    Inst a, b;
    ASSERT_EQ(0, attach(&a.m, cfg, 0, 0));
    ASSERT_EQ(0, attach(&b.m, cfg, 1, kSec));
    mdcom_fifoch_t *ctl;
    mdcom_smemch_t *st;
    ASSERT_EQ(0, mdcom_fifoch_open(a, "ctl", &ctl));
    ASSERT_EQ(0, mdcom_smemch_open(b, "state", &st));
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(0, mdcom_fifoch_send(ctl, "hello", 5, 0));
    uint32_t held;
    ASSERT_EQ(0, mdcom_fifoch_alloc(ctl, &held));
    ASSERT_EQ(0, mdcom_smemch_trylock(st));

    /* a process of domain b killed without mdcom_term: shown dead */
    int pfd[2];
    ASSERT_EQ(0, pipe(pfd));
    pid_t victim = kids_.spawn([&] {
        Inst c;
        CHILD_CHECK(attach(&c.m, cfg, 1, kSec) == 0, "attach");
        char x = 1;
        CHILD_CHECK(write(pfd[1], &x, 1) == 1, "write");
        for (;;)
            pause();
        return 0;
    });
    char x;
    ASSERT_EQ(1, read(pfd[0], &x, 1));
    ASSERT_EQ(0, kill(victim, SIGKILL));
    kids_.wait(victim, 5 * kSec);
    close(pfd[0]);
    close(pfd[1]);

    std::string before = rel::slurp(region_path(region_));
    rel::RunResult r = rel::run({kStat, "--json", region_});
    ASSERT_EQ(r.signal, 0) << r.err;
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(before, rel::slurp(region_path(region_))) << "mdcom-stat changed the region";
    const std::string &j = r.out;
    EXPECT_TRUE(contains(j, "\"ok\":true")) << j;
    EXPECT_TRUE(contains(j, "\"state\":\"READY\"")) << j;
    EXPECT_TRUE(contains(j, "\"generation\":1,")) << j;
    EXPECT_TRUE(contains(j, "{\"index\":0,\"name\":\"ctl\",\"type\":\"fifo\",\"block_size\":64,"
                            "\"block_count\":8,\"queue_depth\":8,\"senders\":1,\"receivers\":2,"
                            "\"queued\":3,\"free_blocks\":4,\"alloc_blocks\":1,"
                            "\"queued_blocks\":3,\"held_blocks\":0,\"orphaned_blocks\":0"))
        << j;
    EXPECT_TRUE(contains(j, "\"name\":\"back\",\"type\":\"fifo\",\"block_size\":32,"
                            "\"block_count\":4,\"queue_depth\":4"))
        << j;
    EXPECT_TRUE(contains(j, "\"name\":\"state\",\"type\":\"smem\",\"size\":100,\"users\":3,"
                            "\"lock_slot\":1,\"lock_word\":"))
        << j;
    /* the lock word: slot 1 + 1, the holder's incarnation above (1: the
     * entry's first claim) */
    EXPECT_TRUE(
        contains(j, "\"lock_slot\":1,\"lock_word\":" + std::to_string(MDCOM_LOCK_MAKE(1, 1)) +
                        ",\"lock_owner_pid\":" + std::to_string(getpid()) +
                        ",\"lock_owner_state\":\"alive\""))
        << j;
    EXPECT_TRUE(
        contains(j, "\"domain\":1,\"pid\":" + std::to_string(victim) + ",\"state\":\"dead\""))
        << j;
    EXPECT_TRUE(
        contains(j, "\"domain\":0,\"pid\":" + std::to_string(getpid()) + ",\"state\":\"alive\""))
        << j;
#ifdef MDCOM_PYTHON
    {
        /* well-formed JSON */
        std::string path = "/tmp/mdcom-stat-json-" + std::to_string(getpid());
        FILE *f = fopen(path.c_str(), "w");
        ASSERT_TRUE(f);
        fputs(j.c_str(), f);
        fclose(f);
        rel::RunResult py = rel::run({MDCOM_PYTHON, "-c",
                                      "import json,sys; d=json.load(open(sys.argv[1])); "
                                      "assert d['channels'][0]['queued'] == 3",
                                      path});
        unlink(path.c_str());
        EXPECT_EQ(py.status, 0) << py.err;
    }
#endif

    rel::RunResult t = rel::run({kStat, region_});
    ASSERT_EQ(t.status, 0) << t.out << t.err;
    EXPECT_TRUE(contains(t.out, "state READY")) << t.out;
    EXPECT_TRUE(contains(t.out, "queued 3  free 4/8  alloc 1")) << t.out;
    EXPECT_TRUE(contains(t.out, "held by slot 1 (pid " + std::to_string(getpid()) + ", alive)"))
        << t.out;
    EXPECT_TRUE(contains(t.out, "remote  1 alive, 1 dead")) << t.out;
    EXPECT_TRUE(contains(t.out, std::to_string(victim) + " ")) << t.out;

    ASSERT_EQ(0, mdcom_smemch_unlock(st));
    ASSERT_EQ(0, mdcom_fifoch_free(ctl, held));
}

TEST_F(StatLive, WatchRepeatsAndReadsAReadOnlyFile)
{
    StatSystem s(region_);
    Inst a;
    ASSERT_EQ(0, attach(&a.m, s.sys.get(), 0, 0));
    ASSERT_EQ(0, chmod(region_path(region_).c_str(), 0400));
    rel::RunResult r = rel::run({kStat, "--json", "--watch", "0.02", "--count", "3", region_});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
}

TEST_F(StatLive, MissingRegionAndUsage)
{
    rel::RunResult r = rel::run({kStat, region_ + "-none"});
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "cannot open")) << r.err;
    EXPECT_EQ(rel::run({kStat}).status, 1);
    EXPECT_EQ(rel::run({kStat, "--watch", "-3", "x"}).status, 1);
    EXPECT_EQ(rel::run({kStat, "--bogus", "x"}).status, 1);
}

/* ------------------------------------------------------------------ */
/* corrupted regions                                                    */
/* ------------------------------------------------------------------ */

class StatCorrupt : public MpFixture {
protected:
    std::string pristine_;
    std::string dir_;
    rel::Layout *lay_ = nullptr;
    StatSystem *sys_ = nullptr;

    void SetUp() override
    {
        MpFixture::SetUp();
        sys_ = new StatSystem(region_);
        Inst a, b;
        ASSERT_EQ(0, attach(&a.m, sys_->sys.get(), 0, 0));
        ASSERT_EQ(0, attach(&b.m, sys_->sys.get(), 1, kSec));
        mdcom_fifoch_t *ctl;
        ASSERT_EQ(0, mdcom_fifoch_open(a, "ctl", &ctl));
        ASSERT_EQ(0, mdcom_fifoch_send(ctl, "x", 1, 0));
        pristine_ = rel::slurp(region_path(region_));
        ASSERT_GT(pristine_.size(), 256u);
        lay_ = new rel::Layout(sys_->sys.get());
        ASSERT_EQ(0, lay_->rc);
        char tmpl[] = "/tmp/mdcom-stat-XXXXXX";
        ASSERT_TRUE(mkdtemp(tmpl));
        dir_ = tmpl;
    }
    void TearDown() override
    {
        unlink((dir_ + "/r").c_str());
        rmdir(dir_.c_str());
        delete lay_;
        delete sys_;
        MpFixture::TearDown();
    }

    /* Write bytes as the region file "r" and run mdcom-stat on it. */
    rel::RunResult stat_of(const std::string &bytes, bool json = false)
    {
        std::string path = dir_ + "/r";
        unlink(path.c_str());
        FILE *f = fopen(path.c_str(), "wb");
        EXPECT_TRUE(f);
        if (!f)
            return {};
        fwrite(bytes.data(), 1, bytes.size(), f);
        fclose(f);
        std::vector<std::string> argv = {kStat};
        if (json)
            argv.push_back("--json");
        argv.push_back("r");
        return rel::run(argv, {"MDCOM_SHM_DIR=" + dir_});
    }

    /* Survived: no signal, a documented status, a message on failure. */
    static void expect_survived(const rel::RunResult &r, const std::string &what)
    {
        EXPECT_EQ(r.signal, 0) << what << ": " << r.err;
        EXPECT_TRUE(r.status == 0 || r.status == 3 || r.status == 4)
            << what << ": " << r.describe() << "\n"
            << r.out << r.err;
        if (r.status == 3 || r.status == 4) {
            EXPECT_TRUE(contains(r.err, "mdcom-stat: ")) << what << ": no message";
        }
        EXPECT_FALSE(contains(r.err, "Sanitizer")) << what << ": " << r.err;
        EXPECT_FALSE(contains(r.err, "runtime error")) << what << ": " << r.err;
    }

    static void put32(std::string &b, size_t off, uint32_t v)
    {
        if (off + 4 <= b.size())
            memcpy(&b[off], &v, 4);
    }
};

TEST_F(StatCorrupt, PristineCopyIsConsistent)
{
    rel::RunResult r = stat_of(pristine_);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "queued 1  free 7/8")) << r.out;
}

TEST_F(StatCorrupt, RandomBytesEmptyAndTruncatedFiles)
{
    std::mt19937 rng(1234);
    std::string junk(pristine_.size(), '\0');
    for (auto &c : junk)
        c = (char)rng();
    rel::RunResult r = stat_of(junk);
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "bad magic")) << r.err;

    r = stat_of("");
    EXPECT_EQ(r.status, 3) << r.err;
    r = stat_of(pristine_.substr(0, 100));
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "less than an mdcom header")) << r.err;
    /* header intact, tables cut off */
    r = stat_of(pristine_.substr(0, lay_->lay.dir_off + 10));
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "tables")) << r.err;
    /* tables intact, channel areas cut off */
    r = stat_of(pristine_.substr(0, pristine_.size() - 64));
    EXPECT_EQ(r.status, 3) << r.err;
    EXPECT_TRUE(contains(r.err, "inconsistent")) << r.err;
}

TEST_F(StatCorrupt, TargetedHeaderAndDirectoryFields)
{
    const uint32_t vals[] = {0,     1,           2,           31,          32,         33,
                             64,    255,         256,         1023,        1024,       1025,
                             65536, 0x7fffffffu, 0x80000000u, 0xfffffff0u, 0xffffffffu};
    const rel::Layout &L = *lay_;
    /* words that describe the structure: any change must be rejected */
    auto structural = [&](size_t off) {
        if (off < 20 || (off >= 28 && off < 60))
            return true; /* magic .. layout_hash, n_domains .. master_domain */
        if (off >= L.lay.dom_off && off < L.lay.dom_off + 2 * 32u)
            return (off - L.lay.dom_off) % 32 == 16 ||
                   (off - L.lay.dom_off) % 32 == 20; /* id, role */
        if (off >= L.lay.dir_off && off < L.lay.dir_off + L.cl.size() * 64u) {
            size_t f = (off - L.lay.dir_off) % 64;
            /* type .. receivers; an SMEM entry has no block_count/queue_depth
             * (zero, unused: the core does not compare them) */
            return f >= 32 && !(L.cl[(off - L.lay.dir_off) / 64].type == MDCOM_CHAN_SMEM &&
                                (f == 48 || f == 52));
        }
        return false;
    };
    int rejected = 0, n = 0;
    for (size_t off = 0; off < L.lay.data_off; off += 4) {
        if (off >= L.lay.proc_off && off < L.lay.dir_off)
            continue; /* process table: live words (next test) */
        for (uint32_t v : {vals[(off / 4) % 17], ~0u ^ (uint32_t)off}) {
            std::string b = pristine_;
            uint32_t old;
            memcpy(&old, &b[off], 4);
            if (v == old)
                continue;
            put32(b, off, v);
            rel::RunResult r = stat_of(b);
            std::string what = "word at " + std::to_string(off) + " = " + std::to_string(v);
            expect_survived(r, what);
            if (structural(off)) {
                EXPECT_TRUE(r.status == 3 || r.status == 4) << what << ": not detected\n" << r.out;
                n++;
                rejected += r.status != 0;
            }
            if (::testing::Test::HasFailure())
                return;
        }
    }
    printf("targeted: %d of %d changes of structural words rejected\n", rejected, n);
    EXPECT_GT(n, 60) << "too few structural words changed: the test lost its coverage";
}

TEST_F(StatCorrupt, LiveWordsGarbageGivesWarningsNotCrashes)
{
    std::mt19937 rng(99);
    std::string b = pristine_;
    /* process table and every channel area (control, slots, states), not the blocks */
    for (size_t off = lay_->lay.proc_off; off < lay_->lay.dir_off; off++)
        b[off] = (char)rng();
    for (const auto &cl : lay_->cl) {
        size_t stop = cl.type == MDCOM_CHAN_FIFO ? cl.blocks_off : cl.data_off;
        for (size_t off = cl.off; off < cl.off + stop; off++)
            b[off] = (char)rng();
    }
    rel::RunResult r = stat_of(b, true);
    expect_survived(r, "live words");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "\"warnings\":[\"")) << r.out;
}

TEST_F(StatCorrupt, RandomScribbles)
{
    uint64_t iters = rel::env_u64("MDCOM_REL_STAT_ITERS", 120);
    uint32_t seed = (uint32_t)rel::env_u64("MDCOM_UT_SEED", (uint64_t)time(nullptr));
    printf("seed %u (MDCOM_UT_SEED=%u to replay)\n", seed, seed);
    std::mt19937 rng(seed);
    int rejected = 0;
    for (uint64_t i = 0; i < iters; i++) {
        std::string b = pristine_;
        size_t limit = (rng() & 1) ? (size_t)lay_->lay.data_off : b.size();
        int k = 1 + (int)(rng() % 8);
        for (int j = 0; j < k; j++) {
            size_t off = rng() % limit;
            if (rng() & 1)
                b[off] = (char)rng();
            else
                put32(b, off & ~size_t(3), rng() % 3 == 0 ? 0xffffffffu : rng());
        }
        if (rng() % 10 == 0)
            b.resize(rng() % b.size());
        rel::RunResult r = stat_of(b, rng() & 1);
        expect_survived(r, "iteration " + std::to_string(i));
        rejected += r.status != 0;
        if (::testing::Test::HasFailure())
            return;
    }
    printf("random: %d of %llu scribbled regions rejected, the rest shown\n", rejected,
           (unsigned long long)iters);
}

} // namespace
