/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fixture.h - shared helpers of the mdcom unit tests (C++17, GoogleTest).
 *
 *   ut::Config   tsup::Config (support/config.h): a run-time mdcom_config
 *                with a unique region name ("ut-<pid>-<counter>"), so
 *                parallel ctest runs never collide
 *   ut::Inst     tsup::Inst: an attachment (mdcom_init / mdcom_term, RAII)
 *   ut::Shm      a third, "hostile" mapping of a region file, to corrupt it
 *   ut::Geometry mdcom_wire_layout_compute() of a config: where every shared word is
 *   ut::FifoView the shared words of one FIFO channel inside a mapping
 *   ut::SmemView the same for an SMEM channel
 *   ut::attach_both  a config's master and an r1 remote, attached
 *   ut::PairTest     fixture base: those two on a config c_, with the ends of
 *                    one FIFO channel; ut::OneFifo<BS, BC, QD> the same on
 *                    a one-channel config
 *   UT_EXPECT_ONE_OF(expr, v...)   result is one of a documented set
 *   ut::crc32    CRC-32 (IEEE) for message integrity checks
 *
 * Declare Config objects before the Inst objects that use them: instances keep
 * a pointer to the config and must be terminated first (reverse destruction).
 */
#ifndef MDCOM_UT_FIXTURE_H
#define MDCOM_UT_FIXTURE_H

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

#include "mdcom/mdcom.h"
#include "mdcom/platform.h"

#include "mdcom/wire.h"
#include "support/common.h"
#include "support/config.h"
#include "support/inst.h"
#include "support/whitebox.h"

namespace ut {

using tsup::Config;
using tsup::crc32;
using tsup::errname;
using tsup::Geometry;
using tsup::Inst;
using tsup::now_ns;
using tsup::rd32;
using tsup::region_exists;
using tsup::region_path;
using tsup::sleep_ms;
using tsup::unique_name;
using tsup::unique_region;
using tsup::wr32;

/* Domain ids used by most tests. */
constexpr uint32_t kMaster = 0, kR1 = 1, kR2 = 2, kR3 = 3;
constexpr uint32_t bit(uint32_t d) { return 1u << d; }

constexpr int64_t ms(int64_t v) { return v * 1000000; }
constexpr int64_t us(int64_t v) { return v * 1000; }


/* Remove region files "ut...-<pid>-<n>" left by test processes that died
 * (e.g. a sanitizer abort skips destructors). Files of live processes, such
 * as a parallel ctest run, are kept. Runs once per test binary, at start-up. */
inline int remove_stale_regions()
{
    const char *dir = std::getenv("MDCOM_SHM_DIR");
    std::string d = dir && *dir ? dir : "/dev/shm";
    DIR *dp = opendir(d.c_str());
    int removed = 0;
    if (!dp)
        return 0;
    while (struct dirent *de = readdir(dp)) {
        std::string n = de->d_name;
        if (n.compare(0, 2, "ut") != 0)
            continue;
        size_t last = n.rfind('-');
        if (last == std::string::npos || last == 0)
            continue;
        size_t prev = n.rfind('-', last - 1);
        if (prev == std::string::npos)
            continue;
        std::string pid_s = n.substr(prev + 1, last - prev - 1);
        if (pid_s.empty() || pid_s.find_first_not_of("0123456789") != std::string::npos ||
            pid_s.size() > 9)
            continue;
        long pid = std::strtol(pid_s.c_str(), nullptr, 10);
        if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH &&
            unlink((d + "/" + n).c_str()) == 0)
            removed++;
    }
    closedir(dp);
    return removed;
}
inline const int stale_regions_removed = remove_stale_regions();

inline ::testing::AssertionResult one_of(const char *expr, int r, std::initializer_list<int> ok)
{
    for (int v : ok)
        if (r == v)
            return ::testing::AssertionSuccess();
    std::string set;
    for (int v : ok)
        set += (set.empty() ? "" : ", ") + errname(v);
    return ::testing::AssertionFailure()
           << expr << " returned " << errname(r) << ", expected one of {" << set << "}";
}
#define UT_EXPECT_ONE_OF(expr, ...)                                                                \
    do {                                                                                           \
        EXPECT_TRUE(::ut::one_of(#expr, (expr), {__VA_ARGS__}));                                   \
    } while (0)
#define UT_ASSERT_ONE_OF(expr, ...)                                                                \
    do {                                                                                           \
        ASSERT_TRUE(::ut::one_of(#expr, (expr), {__VA_ARGS__}));                                   \
    } while (0)

inline bool contains(const char *hay, const char *needle)
{
    return hay && std::strstr(hay, needle) != nullptr;
}

/* m the master of c, r a remote of domain r1 */
inline ::testing::AssertionResult attach_both(Config &c, Inst &m, Inst &r)
{
    if (int rc = m.init(c.get(), kMaster))
        return ::testing::AssertionFailure() << "master: " << errname(rc) << ": " << m.err;
    if (int rc = r.init(c.get(), kR1))
        return ::testing::AssertionFailure() << "remote: " << errname(rc) << ": " << r.err;
    return ::testing::AssertionSuccess();
}

/* Base of the fixtures with a master m_ and an r1 remote r_ on c_: the
 * subclass describes c_, then calls attach(fifo) for that FIFO channel's
 * ends tx_ (master) and rx_ (remote), or attach() for none. */
class PairTest : public ::testing::Test {
protected:
    void attach(const char *fifo = nullptr)
    {
        ASSERT_TRUE(attach_both(c_, m_, r_));
        if (!fifo)
            return;
        tx_ = m_.fifo(fifo);
        rx_ = r_.fifo(fifo);
        ASSERT_TRUE(tx_ && rx_);
    }

    Config c_;
    Inst m_, r_;
    mdcom_fifoch_t *tx_ = nullptr, *rx_ = nullptr;
};

/* PairTest on two domains and one FIFO channel "f" (master -> r1) of BC
 * blocks of BS bytes and a queue of QD slots. */
template <uint32_t BS, uint32_t BC, uint32_t QD>
class OneFifo : public PairTest {
protected:
    void SetUp() override
    {
        c_.std_domains(2);
        c_.fifo("f", BS, BC, QD, bit(kMaster), bit(kR1));
        ASSERT_NO_FATAL_FAILURE(attach("f"));
    }
};

/* A separate read/write mapping of a region file: the hostile peer. */
struct Shm : tsup::RegionMap {
    explicit Shm(const std::string &region) : RegionMap(region_path(region), true) {}
};

/* The shared words of one FIFO channel inside some mapping. */
struct FifoView {
    FifoView(uint8_t *region_base, const mdcom_wire_chan_layout &l) : a(region_base + l.off), cl(l)
    {}
    mdcom_wire_fifo_ctl *ctl() const { return (mdcom_wire_fifo_ctl *)a; }
    uint32_t *enq() const { return (uint32_t *)&ctl()->enq.pos; }
    uint32_t *deq() const { return (uint32_t *)&ctl()->deq.pos; }
    uint32_t *ev_seq() const { return (uint32_t *)&ctl()->event.word; }
    uint32_t *ev_waiters() const { return (uint32_t *)&ctl()->event.waiters; }
    uint32_t *filtered() const { return (uint32_t *)&ctl()->stats.filtered; }
    uint32_t *errors() const { return (uint32_t *)&ctl()->stats.errors; }
    /* queue slot at position pos (masked like the library does) */
    mdcom_wire_qslot *qslot(uint32_t pos) const
    {
        return (mdcom_wire_qslot *)(a + cl.qslots_off) + (pos & (cl.qcap - 1));
    }
    uint32_t *qseq(uint32_t pos) const { return (uint32_t *)&qslot(pos)->seq; }
    uint32_t *qid(uint32_t pos) const { return (uint32_t *)&qslot(pos)->id; }
    uint32_t *qlen(uint32_t pos) const { return (uint32_t *)&qslot(pos)->len; }
    uint32_t *qstate(uint32_t pos) const { return (uint32_t *)&qslot(pos)->state; }
    /* block state words: the pool */
    uint32_t *bstate(uint32_t id) const
    {
        return (uint32_t *)((mdcom_aword *)(a + cl.bstate_off) + id);
    }
    uint8_t *block(uint32_t id) const { return a + cl.blocks_off + (size_t)id * cl.stride; }

    /* Queue block id as a well-behaved producer would (hostile injection). */
    void inject_queue(uint32_t id, uint32_t len)
    {
        uint32_t p = rd32(enq());
        /* the most convincing forgery: the state word the block would have
         * if its current owner had queued it (the consumer's CAS decides) */
        uint32_t cur = id < cl.block_count ? rd32(bstate(id)) : 0;
        wr32(qid(p), id);
        wr32(qlen(p), len);
        wr32(qstate(p), MDCOM_BLK_MAKEG(MDCOM_BLK_QUEUED, MDCOM_BLK_WHO(cur), MDCOM_BLK_GEN(cur)));
        wr32(qseq(p), 2 * p + 1); /* full at p */
        wr32(enq(), p + 1);
    }

    uint8_t *a;
    mdcom_wire_chan_layout cl;
};

/* The shared words of one SMEM channel inside some mapping. */
struct SmemView {
    SmemView(uint8_t *region_base, const mdcom_wire_chan_layout &l) : a(region_base + l.off), cl(l)
    {}
    mdcom_wire_smem_ctl *ctl() const { return (mdcom_wire_smem_ctl *)a; }
    uint32_t *lock() const { return (uint32_t *)&ctl()->lock.word; }
    uint32_t *waiters() const { return (uint32_t *)&ctl()->lock.waiters; }
    uint8_t *data() const { return a + cl.data_off; }

    uint8_t *a;
    mdcom_wire_chan_layout cl;
};

} // namespace ut

#endif /* MDCOM_UT_FIXTURE_H */
