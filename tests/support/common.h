/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * support/common.h - the helpers every test directory shares (C++17, header
 * only, no GoogleTest so that forked children may use it too):
 *
 *   now_ns, sleep_ns, sleep_ms, wait_until   clocks and bounded polling
 *   crc32                                    CRC-32 (IEEE) of messages
 *   unique_region, region_path,
 *   region_exists, region_remove             region files of the Linux port
 *   chan_cfg, fifo_cfg, smem_cfg             one channel of an mdcom_config
 *   errname                                  "-71 (EPROTO ...)" for messages
 *   RegionMap                                a separate mapping of a region
 *                                            file (an inspector, or a hostile
 *                                            peer when writable)
 *   Geometry                                 where every shared word of a
 *                                            config is, from the core's own
 *                                            mdcom_wire_layout_compute()
 *   RecordHolders                            threads that keep operation
 *                                            records of an attachment taken
 *
 * support/config.h (tsup::Config, the config builder) and support/inst.h
 * (tsup::Inst) build on them, as do tests/unit (fixture.h), tests/mp
 * (mp_util.h, mp_sys.h), tests/reliability (rel_util.h) and the others
 * (namespace tsup).
 */
#ifndef MDCOM_TESTS_SUPPORT_COMMON_H
#define MDCOM_TESTS_SUPPORT_COMMON_H

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/mdcom.h"
#include "mdcom/wire.h"

namespace tsup {

constexpr int64_t kMs = 1000000;     /* ns per millisecond */
constexpr int64_t kSec = 1000000000; /* ns per second      */

inline uint64_t now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

inline void sleep_ns(int64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / kSec);
    ts.tv_nsec = (long)(ns % kSec);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

inline void sleep_ms(int64_t ms) { sleep_ns(ms * kMs); }

/* Poll pred() every millisecond for at most timeout_ns; true when it held. */
template <class Pred>
bool wait_until(Pred pred, int64_t timeout_ns)
{
    uint64_t end = now_ns() + (uint64_t)timeout_ns;
    for (;;) {
        if (pred())
            return true;
        if (now_ns() >= end)
            return pred();
        sleep_ms(1);
    }
}

/* How long the calling thread has waited, runnable, for a CPU (the second
 * field of /proc/thread-self/schedstat, in ns); -1 where the kernel does not
 * say. A time-bound assertion subtracts the growth of this across the call
 * it times: that part of the elapsed time is the machine's load (the thread
 * was ready and other tasks ran), never the library's sleeping or spinning. */
inline int schedstat_open() { return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); }
/* fd: from schedstat_open() in the calling thread (one pread), or -1 (open,
 * read, close: three system calls) */
inline int64_t run_delay_ns(int64_t *on_cpu = nullptr, int fd = -1)
{
    int own = fd < 0 ? schedstat_open() : -1;
    if (fd < 0 && own < 0)
        return -1;
    char buf[128];
    ssize_t n = pread(own >= 0 ? own : fd, buf, sizeof buf - 1, 0);
    if (own >= 0)
        close(own);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = buf, *end;
    unsigned long long c = std::strtoull(p, &end, 10); /* time on the CPU */
    if (end == p)
        return -1;
    if (on_cpu)
        *on_cpu = (int64_t)c;
    p = end;
    unsigned long long d = std::strtoull(p, &end, 10);
    return end == p ? -1 : (int64_t)d;
}

/* Elapsed time of a stretch of code less the time its thread waited for a
 * CPU inside it (run_delay_ns): start() before, ns() after. */
struct LoadFreeTimer {
    int fd = -1; /* schedstat_open() of this thread, or -1 */
    uint64_t t0 = 0;
    int64_t rd0 = -1, cpu0 = 0;
    mutable int64_t cpu = 0; /* time on a CPU between start() and the last queued() */
    explicit LoadFreeTimer(int schedstat_fd = -1) : fd(schedstat_fd) {}
    void start()
    {
        t0 = now_ns();
        rd0 = run_delay_ns(&cpu0, fd); /* after t0: a wait before this read is not subtracted */
    }
    /* the thread's run-queue wait since start() (0 where unknown) */
    int64_t queued() const
    {
        int64_t cpu1 = cpu0;
        int64_t rd1 = rd0 < 0 ? -1 : run_delay_ns(&cpu1, fd);
        cpu = cpu1 - cpu0;
        return rd1 < rd0 ? 0 : rd1 - rd0;
    }
    int64_t elapsed() const { return (int64_t)(now_ns() - t0); }
    /* elapsed less run-queue wait; *raw (if given) gets the plain elapsed time */
    int64_t ns(int64_t *raw = nullptr) const
    {
        int64_t q = queued(); /* before the clock: a wait after it is not in the elapsed time */
        int64_t el = elapsed();
        if (raw)
            *raw = el;
        return el - q;
    }
};

/* CRC-32 (IEEE 802.3: reflected, polynomial 0xEDB88320, init and final xor
 * 0xFFFFFFFF). Chainable: crc32(b, n, crc32(a, m)) == crc32(a || b). */
inline uint32_t crc32(const void *data, size_t len, uint32_t crc = 0)
{
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    const uint8_t *p = static_cast<const uint8_t *>(data);
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ p[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

/* A region name unique to this process and call: "<tag>-<pid>-<n>". */
inline std::string unique_region(const char *tag)
{
    static std::atomic<unsigned> counter{0};
    return std::string(tag) + "-" + std::to_string((long)getpid()) + "-" +
           std::to_string(counter.fetch_add(1) + 1);
}

/* Path of a Linux-port region file (honours $MDCOM_SHM_DIR like the port). */
inline std::string region_path(const std::string &name)
{
    const char *dir = getenv("MDCOM_SHM_DIR");
    if (!dir || !*dir)
        dir = "/dev/shm";
    return std::string(dir) + "/" + name;
}

inline bool region_exists(const std::string &name)
{
    struct stat st;
    return lstat(region_path(name).c_str(), &st) == 0;
}

inline void region_remove(const std::string &name) { unlink(region_path(name).c_str()); }

/* One channel of an mdcom_config: the fields both types have, then each
 * type's own. */
inline mdcom_channel_cfg chan_cfg(const char *name, uint32_t type, uint32_t senders,
                                  uint32_t receivers)
{
    mdcom_channel_cfg c{};
    c.name = name;
    c.type = type;
    c.senders = senders;
    c.receivers = receivers;
    return c;
}

inline mdcom_channel_cfg fifo_cfg(const char *name, uint32_t block_size, uint32_t block_count,
                                  uint32_t queue_depth, uint32_t senders, uint32_t receivers)
{
    mdcom_channel_cfg c = chan_cfg(name, MDCOM_CHAN_FIFO, senders, receivers);
    c.block_size = block_size;
    c.block_count = block_count;
    c.queue_depth = queue_depth;
    return c;
}

inline mdcom_channel_cfg smem_cfg(const char *name, uint32_t size, uint32_t users)
{
    mdcom_channel_cfg c = chan_cfg(name, MDCOM_CHAN_SMEM, 0, 0);
    c.size = size;
    c.users = users;
    return c;
}

/* "-71 (EPROTO: ...)" for messages. */
inline std::string errname(int r)
{
    if (r > 0)
        return "+" + std::to_string(r);
    return std::to_string(r) + " (" + mdcom_strerror(r) + ")";
}

/* Relaxed atomic access to a shared 32-bit word (any mapping). */
inline uint32_t rd32(const void *p)
{
    return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
}
inline void wr32(void *p, uint32_t v) { __atomic_store_n((uint32_t *)p, v, __ATOMIC_RELAXED); }

/* A separate mapping of a region file (path, never through a symlink): read
 * only for an inspector, writable for a hostile peer. ok() false when the
 * file cannot be opened or mapped. */
class RegionMap {
public:
    explicit RegionMap(const std::string &path, bool writable = false)
    {
        fd_ = open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
        if (fd_ < 0)
            return;
        struct stat st;
        if (fstat(fd_, &st) != 0 || st.st_size <= 0)
            return;
        void *p = mmap(nullptr, (size_t)st.st_size, PROT_READ | (writable ? PROT_WRITE : 0),
                       MAP_SHARED, fd_, 0);
        if (p == MAP_FAILED)
            return;
        base = (uint8_t *)p;
        size = (size_t)st.st_size;
    }
    ~RegionMap()
    {
        if (base)
            munmap(base, size);
        if (fd_ >= 0)
            close(fd_);
    }
    RegionMap(const RegionMap &) = delete;
    RegionMap &operator=(const RegionMap &) = delete;
    bool ok() const { return base != nullptr; }
    uint32_t word(size_t off) const { return rd32(base + off); }
    void set_word(size_t off, uint32_t v) { wr32(base + off, v); }
    mdcom_wire_hdr *hdr() { return (mdcom_wire_hdr *)base; }

    uint8_t *base = nullptr;
    size_t size = 0;

private:
    int fd_ = -1;
};

/* The layout of cfg, computed by the core (the one function that does it),
 * and the offsets of the words tests look at. */
struct Geometry {
    explicit Geometry(const mdcom_config *cfg) : cl(cfg->n_channels ? cfg->n_channels : 1)
    {
        rc = mdcom_wire_layout_compute(cfg, &lay, cl.data(), nullptr, 0);
    }
    int rc = -1;
    mdcom_wire_layout lay{};
    std::vector<mdcom_wire_chan_layout> cl;

    size_t bstate_off(uint32_t ch, uint32_t id) const
    {
        return cl[ch].off + cl[ch].bstate_off + 4u * id;
    }
    size_t proc_off(uint32_t slot, size_t field) const
    {
        return lay.proc_off + sizeof(mdcom_wire_proc) * slot + field;
    }
    size_t proc_owner_off(uint32_t slot) const
    {
        return proc_off(slot, offsetof(mdcom_wire_proc, owner));
    }
    size_t proc_pid_off(uint32_t slot) const
    {
        return proc_off(slot, offsetof(mdcom_wire_proc, pid));
    }
};

/* n threads that each take an operation record of ch's attachment (a
 * dequeue of the empty channel ch takes one) and keep it while this object
 * lives: threads that come after them share record 0 once the attachment's
 * own records are all taken. */
class RecordHolders {
public:
    RecordHolders(mdcom_fifoch_t *ch, int n)
    {
        for (int k = 0; k < n; k++)
            th_.emplace_back([this, ch] {
                uint32_t id;
                if (mdcom_fifoch_dequeue(ch, &id, nullptr) != -EAGAIN)
                    bad_++;
                held_++;
                while (!done_.load())
                    sleep_ns(kMs);
            });
        while (held_.load() < n)
            sleep_ns(kMs);
    }
    ~RecordHolders()
    {
        done_ = true;
        for (auto &t : th_)
            t.join();
    }
    /* dequeues that did not find ch empty (it must be: nobody sends on it) */
    int bad() const { return bad_.load(); }

private:
    std::vector<std::thread> th_;
    std::atomic<int> held_{0}, bad_{0};
    std::atomic<bool> done_{false};
};

} // namespace tsup

#endif /* MDCOM_TESTS_SUPPORT_COMMON_H */
