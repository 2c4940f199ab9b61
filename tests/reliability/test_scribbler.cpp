/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_scribbler.cpp - a hostile process writes the region under live
 * traffic, one class of fields at a time, then stops; the two victims (the
 * master and a remote, each a real process exchanging seq + CRC messages and
 * taking the SMEM lock) must
 *   - never crash (no signal), never return an undocumented code,
 *   - never overrun a call's timeout by more than a scheduling bound (the
 *     time a victim waited, runnable, for a CPU during the call is not
 *     counted: that is the machine's load; tsup::LoadFreeTimer),
 *   - exchange messages again within a second of the scribbling stopping
 *     (re-attaching, mdcom_term + mdcom_init, when a call tells them to).
 *
 * Field classes: header, domain table, directory, process entries, queue
 * positions, queue slots, block states, slot lengths, lock words, waiter
 * counts, heartbeats and event words, counters, random bytes anywhere.
 *
 *   MDCOM_SCRIBBLE_SECONDS=n   total run (default 60: CI); each class gets an
 *                              equal share, half scribbling, half recovering
 *   MDCOM_SCRIBBLE_BOUND_MS=n  asserted timeout overshoot bound (default 200)
 *   MDCOM_SCRIBBLE_CLASS=k     only field class k (0..12), for a closer look
 *   MDCOM_SCRIBBLE_SEED=n      the scribbler's random seed (default fixed)
 *   MDCOM_SCRIBBLE_HEARTBEAT_MS=n  the victims promise a heartbeat of n ms
 *                              (default 0: none), so that their calls check
 *                              their own process entries
 */
#include <gtest/gtest.h>

#include <random>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

constexpr uint32_t kDomA = 0, kDomB = 1;
constexpr int64_t kCallTimeout = 20 * kMs;

enum Class {
    HEADER,
    DOMAINS,
    DIRECTORY,
    PROCS,
    POSITIONS,
    SLOTS,
    BSTATES,
    LENGTHS,
    LOCKS,
    WAITERS,
    EVENTS,
    COUNTERS,
    ANYWHERE,
    N_CLASSES
};
const char *class_name(int c)
{
    static const char *n[] = {"header",     "domains",       "directory",         "process entries",
                              "positions",  "slots",         "block states",      "lengths",
                              "lock words", "waiter counts", "heartbeats+events", "counters",
                              "anywhere"};
    return n[c];
}

/* What each victim reports, in shared memory. */
struct VictimStats {
    std::atomic<uint64_t> last_ok{0};      /* time of the last valid message received */
    std::atomic<uint64_t> first_ok{0};     /* of the first one after the scribbling stopped */
    std::atomic<int64_t> first_ok_rd{-1};  /* its run-queue wait total (run_delay_ns) then */
    std::atomic<uint64_t> first_ok_for{0}; /* the stop time first_ok answers; written last */
    std::atomic<uint64_t> calls{0};
    std::atomic<uint64_t> overruns{0};        /* calls past timeout + bound */
    std::atomic<int64_t> worst_over{0};       /* ns, less the run-queue wait */
    std::atomic<int64_t> worst_raw{0};        /* ns, elapsed - timeout */
    std::atomic<int64_t> worst_raw_queued{0}; /* the run-queue wait inside that call */
    std::atomic<uint64_t> undocumented{0};
    std::atomic<int> first_bad{0};      /* the first undocumented code */
    std::atomic<int> first_bad_call{0}; /* which call returned it */
    std::atomic<int> worst_call{0};     /* which call overshot most */
    std::atomic<int> worst_cls{0};      /* during which class */
    std::atomic<uint64_t> reattach{0};
    std::atomic<uint64_t> corrupt{0}; /* messages with a bad CRC (the scribbler's bytes) */
    std::atomic<uint64_t> received{0};
    std::atomic<int> last_rc[5];         /* each call's last return code, for a stuck victim */
    std::atomic<uint64_t> last_rc_at[5]; /* and when it returned it */
    char init_err[256];                  /* the last failed mdcom_init's message */
};
struct Shared2 {
    VictimStats v[2];
    std::atomic<int> stop{0};
    std::atomic<int> cls{0};          /* the class being scribbled (or just stopped) */
    std::atomic<uint64_t> stopped{0}; /* when the scribbling of cls stopped; 0 while it goes on */
};

struct Msg {
    uint32_t seq, crc;
    uint8_t pad[24];
};

bool documented(int call, int r)
{
    /* 0 send, 1 recv, 2 lock, 3 unlock, 4 init */
    static const std::vector<std::vector<int>> ok = {
        {0, MDCOM_FILTERED, -ETIMEDOUT, -ENOBUFS, -EAGAIN, -EPROTO, -EBADMSG, -EALREADY, -ESHUTDOWN,
         -ECONNRESET, -ENOTCONN, -EMSGSIZE},
        {-ETIMEDOUT, -EPROTO, -EBADMSG, -EALREADY, -EMSGSIZE, -ESHUTDOWN, -ECONNRESET, -ENOTCONN},
        {0, -ETIMEDOUT, -EDEADLK, -EBUSY, -ESHUTDOWN, -ECONNRESET, -ENOTCONN},
        {0, -EPERM, -ENOTCONN},
        {0, -ETIMEDOUT, -ESTALE, -EBADMSG, -EPROTONOSUPPORT, -EUSERS, -EADDRINUSE, -ENOSPC}};
    if (call == 1 && r >= 0)
        return true;
    for (int x : ok[call])
        if (x == r)
            return true;
    return false;
}

/* A single-threaded child's run-queue wait total (run_delay_ns), -1 if unknown. */
int64_t victim_run_delay(pid_t pid)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    unsigned long long cpu, wait;
    return sscanf(buf, "%llu %llu", &cpu, &wait) == 2 ? (int64_t)wait : -1;
}

class Scribbler : public MpFixture {
protected:
    Config sys_ = Config::two_domains("");
    int64_t bound_ns_ = (int64_t)rel::env_u64("MDCOM_SCRIBBLE_BOUND_MS", 200) * kMs;

    void SetUp() override
    {
        MpFixture::SetUp();
        sys_.region = region_;
        sys_.channels = {fifo_cfg("ab", sizeof(Msg), 16, 16, 1u << kDomA, 1u << kDomB),
                         fifo_cfg("ba", sizeof(Msg), 16, 16, 1u << kDomB, 1u << kDomA),
                         smem_cfg("s", 64, 3)};
    }

    /* A victim: attach, then send on its tx channel, receive on its rx
     * channel, take and release the lock, for ever; re-attach when told. */
    int victim(Shared2 *sh, uint32_t dom)
    {
        VictimStats &st = sh->v[dom];
        const mdcom_config *cfg = sys_.get();
        const int schedstat_fd = tsup::schedstat_open(); /* this process' only thread */
        mdcom_t *m = nullptr;
        mdcom_fifoch_t *tx = nullptr, *rx = nullptr;
        mdcom_smemch_t *s = nullptr;
        uint32_t seq = 0;
        auto timed = [&](int call, int64_t timeout, auto f) {
            LoadFreeTimer tm(schedstat_fd);
            tm.start();
            int r = f();
            int64_t to = timeout < 0 ? 0 : timeout;
            int64_t raw = tm.elapsed() - to, over = raw, queued = 0;
            if (raw > bound_ns_) {
                /* the time this process waited, runnable, for a CPU is the
                 * machine's load, not the call's (LoadFreeTimer); asked
                 * only past the bound, so that a call costs one read of
                 * the counter, not two */
                int64_t el;
                over = tm.ns(&el) - to;
                raw = el - to;
                queued = raw - over;
            }
            st.calls++;
            if (over > bound_ns_)
                st.overruns++;
            if (raw > st.worst_raw.load()) {
                st.worst_raw.store(raw);
                st.worst_raw_queued.store(queued);
            }
            if (over > st.worst_over.load()) {
                st.worst_over.store(over);
                st.worst_call.store(call);
                st.worst_cls.store(sh->cls.load());
            }
            st.last_rc[call].store(r);
            st.last_rc_at[call].store(now_ns());
            if (!documented(call, r)) {
                if (!st.undocumented++) {
                    st.first_bad.store(r);
                    st.first_bad_call.store(call);
                }
            }
            return r;
        };
        auto detach = [&] {
            if (m)
                mdcom_term(m);
            m = nullptr;
        };
        while (!sh->stop.load()) {
            if (!m) {
                char err[256];
                mdcom_init_opts o{};
                o.attach_timeout_ns = 200 * kMs;
                o.errbuf = err;
                o.errbuf_len = sizeof err;
                o.heartbeat_ms = (uint32_t)rel::env_u64("MDCOM_SCRIBBLE_HEARTBEAT_MS", 0);
                int r = timed(4, o.attach_timeout_ns, [&] { return mdcom_init(&m, cfg, dom, &o); });
                if (r) {
                    snprintf(st.init_err, sizeof st.init_err, "%s", err);
                    m = nullptr;
                    sleep_ms(5);
                    continue;
                }
                st.reattach++;
                if (mdcom_fifoch_open(m, dom == kDomA ? "ab" : "ba", &tx) ||
                    mdcom_fifoch_open(m, dom == kDomA ? "ba" : "ab", &rx) ||
                    mdcom_smemch_open(m, "s", &s)) {
                    detach();
                    continue;
                }
            }
            Msg msg{};
            msg.seq = seq++;
            memset(msg.pad, (int)(msg.seq & 0xff), sizeof msg.pad);
            msg.crc = crc32(msg.pad, sizeof msg.pad, msg.seq);
            int r = timed(0, kCallTimeout,
                          [&] { return mdcom_fifoch_send(tx, &msg, sizeof msg, kCallTimeout); });
            bool reset = r == -ECONNRESET || r == -ESHUTDOWN || r == -ENOTCONN;
            Msg in{};
            int n = timed(1, kCallTimeout,
                          [&] { return mdcom_fifoch_recv(rx, &in, sizeof in, kCallTimeout); });
            reset |= n == -ECONNRESET || n == -ESHUTDOWN || n == -ENOTCONN;
            if (n == (int)sizeof in) {
                if (in.crc == crc32(in.pad, sizeof in.pad, in.seq)) {
                    st.received++;
                    /* keyed by the stop time, not by a flag the scribbler
                     * clears: a flag cleared between this load of stopped
                     * and the check would be set again for a class whose
                     * scribbling has not stopped yet */
                    uint64_t stopped = sh->stopped.load();
                    if (stopped && st.first_ok_for.load() != stopped) {
                        /* the wait total first: a wait after it is counted as recovery time */
                        int64_t rd = run_delay_ns(nullptr, schedstat_fd);
                        uint64_t t = now_ns();
                        if (t > stopped) {
                            st.first_ok_rd.store(rd);
                            st.first_ok.store(t);
                            st.first_ok_for.store(stopped);
                        }
                    }
                    st.last_ok.store(now_ns());
                } else {
                    st.corrupt++;
                }
            }
            r = timed(2, kCallTimeout, [&] { return mdcom_smemch_lock(s, kCallTimeout); });
            reset |= r == -ECONNRESET || r == -ESHUTDOWN || r == -ENOTCONN;
            if (r == 0) {
                r = timed(3, 0, [&] { return mdcom_smemch_unlock(s); });
                reset |= r == -ENOTCONN;
            }
            if (reset)
                detach();
        }
        detach();
        if (schedstat_fd >= 0)
            close(schedstat_fd);
        return 0;
    }

    /* The scribbler's writes for one class (rng-driven, 32-bit words). */
    static void scribble(rel::RegionView &v, const rel::Layout &l, int cls, std::mt19937 &rng)
    {
        auto val = [&]() -> uint32_t {
            switch (rng() % 6) {
            case 0:
                return 0;
            case 1:
                return rng() % 4;
            case 2:
                return 0xffffffffu;
            case 3:
                return rng() % 70;
            default:
                return rng();
            }
        };
        auto put = [&](size_t off) {
            if (off + 4 <= v.size)
                v.set_word(off & ~(size_t)3, val());
        };
        const mdcom_wire_chan_layout &c0 = l.cl[rng() % 2];
        const mdcom_wire_chan_layout &sm = l.cl[2];
        switch (cls) {
        case HEADER:
            put(rng() % MDCOM_HDR_SIZE);
            break;
        case DOMAINS:
            put(l.lay.dom_off + rng() % (2 * sizeof(mdcom_wire_domain)));
            break;
        case DIRECTORY:
            put(l.lay.dir_off + rng() % (3 * sizeof(mdcom_wire_dirent)));
            break;
        case PROCS:
            put(l.lay.proc_off + rng() % (MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc)));
            break;
        case POSITIONS:
            put(c0.off + (rng() % 2 ? offsetof(mdcom_wire_fifo_ctl, enq)
                                    : offsetof(mdcom_wire_fifo_ctl, deq)));
            break;
        case SLOTS:
            put(c0.off + c0.qslots_off + rng() % (c0.qcap * sizeof(mdcom_wire_qslot)));
            break;
        case BSTATES:
            put(c0.off + c0.bstate_off + 4 * (rng() % c0.block_count));
            break;
        case LENGTHS:
            put(c0.off + c0.qslots_off + sizeof(mdcom_wire_qslot) * (rng() % c0.qcap) +
                offsetof(mdcom_wire_qslot, len));
            break;
        case LOCKS:
            put(sm.off + offsetof(mdcom_wire_smem_ctl, lock.word));
            break;
        case WAITERS:
            put(rng() % 2 ? sm.off + offsetof(mdcom_wire_smem_ctl, lock.waiters)
                          : c0.off + offsetof(mdcom_wire_fifo_ctl, event.waiters));
            break;
        case EVENTS:
            put(rng() % 2 ? c0.off + offsetof(mdcom_wire_fifo_ctl, event.word)
                          : l.lay.proc_off + sizeof(mdcom_wire_proc) * (rng() % 4) +
                                offsetof(mdcom_wire_proc, heartbeat));
            break;
        case COUNTERS:
            put(c0.off + offsetof(mdcom_wire_fifo_ctl, stats) + 4 * (rng() % 4));
            break;
        default:
            put(rng() % v.size);
            break;
        }
    }
};

TEST_F(Scribbler, VictimsSurviveAndRecoverEveryFieldClass)
{
    const int64_t total = (int64_t)rel::env_u64("MDCOM_SCRIBBLE_SECONDS", 60) * kSec;
    const int64_t per_class = total / N_CLASSES;
    const mdcom_config *cfg = sys_.get();
    rel::Layout lay(cfg);
    ASSERT_EQ(lay.rc, 0);
    Shared<Shared2> sh;
    pid_t a = kids_.spawn([&] { return victim(sh.p, kDomA); });
    pid_t b = kids_.spawn([&] { return victim(sh.p, kDomB); });
    ASSERT_TRUE(
        wait_until([&] { return sh->v[0].received.load() > 100 && sh->v[1].received.load() > 100; },
                   10 * kSec))
        << "no traffic before scribbling";
    std::mt19937 rng((uint32_t)rel::env_u64("MDCOM_SCRIBBLE_SEED", 20261124));
    uint64_t hb = rel::env_u64("MDCOM_SCRIBBLE_HEARTBEAT_MS", 0);
    if (hb)
        printf("victims promise a heartbeat of %llu ms (they check their own process entries)\n",
               (unsigned long long)hb);
    else
        printf("victims promise no heartbeat\n");
    printf("%-18s %8s %10s %10s %s\n", "class", "writes", "recovery", "raw",
           "(ms after stop; recovery: less the victims' run-queue waits)");
    std::vector<int64_t> recoveries;
    int only = (int)rel::env_u64("MDCOM_SCRIBBLE_CLASS", 99);
    for (int cls = 0; cls < N_CLASSES; cls++) {
        if (only != 99 && cls != only)
            continue;
        sh->cls.store(cls);
        sh->stopped.store(0);
        uint64_t writes = 0;
        uint64_t end = now_ns() + (uint64_t)(per_class / 2);
        while (now_ns() < end) {
            /* the file may be re-created by a re-attaching master: map anew */
            rel::RegionView v(region_path(region_), true);
            if (!v.ok() || v.size < lay.lay.region_size) {
                sleep_ms(1);
                continue;
            }
            for (int i = 0; i < 200; i++, writes++)
                scribble(v, lay, cls, rng);
            sleep_ns(200000);
        }
        uint64_t stopped = now_ns();
        int64_t rd_stop[2] = {victim_run_delay(a), victim_run_delay(b)};
        sh->stopped.store(stopped);
        bool back = wait_until(
            [&] {
                return sh->v[0].first_ok_for.load() == stopped &&
                       sh->v[1].first_ok_for.load() == stopped;
            },
            per_class / 2 > 3 * kSec ? per_class / 2 : 3 * kSec);
        /* recovery: until both victims received a valid message; each
         * victim's time less its own run-queue wait since the stop (the
         * machine's load; what one victim waits for the other to do is
         * still counted) */
        int64_t rec = 0, rec_raw = 0;
        for (int d = 0; d < 2; d++) {
            int64_t t = (int64_t)(sh->v[d].first_ok.load() - stopped);
            int64_t rd = sh->v[d].first_ok_rd.load();
            int64_t q = rd_stop[d] >= 0 && rd >= rd_stop[d] ? rd - rd_stop[d] : 0;
            rec_raw = std::max(rec_raw, t);
            rec = std::max(rec, t - q);
        }
        printf("%-18s %8llu %10.1f %10.1f\n", class_name(cls), (unsigned long long)writes,
               back ? rec / 1e6 : -1.0, back ? rec_raw / 1e6 : -1.0);
        EXPECT_TRUE(back) << class_name(cls) << ": no messages after the scribbling stopped";
        if (!back) {
            static const char *call_name[] = {"send", "recv", "lock", "unlock", "init"};
            uint64_t t = now_ns();
            for (int d = 0; d < 2; d++)
                for (int c = 0; c < 5; c++)
                    printf("  victim %d %-6s last returned %d (%s) %.1f ms ago\n", d, call_name[c],
                           sh->v[d].last_rc[c].load(), mdcom_strerror(sh->v[d].last_rc[c].load()),
                           (double)(t - sh->v[d].last_rc_at[c].load()) / 1e6);
            for (int d = 0; d < 2; d++)
                printf("  victim %d: the last failed attach said: %s\n", d, sh->v[d].init_err);
        }
        if (back) {
            recoveries.push_back(rec);
            EXPECT_LE(rec, kSec) << class_name(cls) << ": recovered after more than 1 s";
        }
        /* the rest of the class' share: traffic as usual */
        int64_t left = per_class / 2 - (int64_t)(now_ns() - stopped);
        if (left > 0)
            sleep_ns(left);
    }
    sh->stop.store(1);
    EXPECT_EQ(kids_.wait(a, 10 * kSec), "");
    EXPECT_EQ(kids_.wait(b, 10 * kSec), "");
    for (int d = 0; d < 2; d++) {
        VictimStats &st = sh->v[d];
        printf(
            "victim %d: %llu calls, %llu received, %llu corrupt (scribbled data), %llu attaches, "
            "worst overshoot %.1f ms (call %d, class %s), %llu over the bound; worst elapsed "
            "overshoot %.1f ms, %.1f ms of it waiting for a CPU (measured past the bound only)\n",
            d, (unsigned long long)st.calls.load(), (unsigned long long)st.received.load(),
            (unsigned long long)st.corrupt.load(), (unsigned long long)st.reattach.load(),
            st.worst_over.load() / 1e6, st.worst_call.load(), class_name(st.worst_cls.load()),
            (unsigned long long)st.overruns.load(), st.worst_raw.load() / 1e6,
            st.worst_raw_queued.load() / 1e6);
        EXPECT_EQ(st.undocumented.load(), 0u)
            << "victim " << d << ": call " << st.first_bad_call.load() << " returned "
            << st.first_bad.load() << " (" << mdcom_strerror(st.first_bad.load()) << ")";
        EXPECT_EQ(st.overruns.load(), 0u)
            << "victim " << d << ": calls past timeout + " << bound_ns_ / kMs << " ms";
    }
}

} // namespace
