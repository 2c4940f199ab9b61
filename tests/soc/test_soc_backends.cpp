/* SPDX-License-Identifier: BSD-3-Clause */
// The Linux side of a real SoC (include/mdcom/linux_soc.h) against stand-ins:
// a regular file for /dev/mem (mapped at a non-zero offset) and for the maps
// of a UIO device (map n at n * page size, as UIO does), and a FIFO for the
// UIO interrupt counter (4-byte reads, pollable). A master and a remote in
// two processes (fork) exchange messages through the carveout stand-in.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mdcom/linux_soc.h"
#include "mdcom/mdcom.h"
#include "soc_dev_cfg.h"
#include "soc_test_cfg.h"

namespace {

struct TmpDir {
    std::string path;
    TmpDir()
    {
        char t[] = "/tmp/mdcom-soc-XXXXXX";
        path = mkdtemp(t);
    }
    ~TmpDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    std::string file(const char *name, size_t size) const
    {
        std::string p = path + "/" + name;
        int fd = open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        EXPECT_GE(fd, 0);
        EXPECT_EQ(ftruncate(fd, (off_t)size), 0);
        close(fd);
        return p;
    }
};

std::vector<uint8_t> read_at(const std::string &p, off_t off, size_t n)
{
    std::vector<uint8_t> b(n);
    int fd = open(p.c_str(), O_RDONLY);
    EXPECT_EQ(pread(fd, b.data(), n, off), (ssize_t)n);
    close(fd);
    return b;
}

double since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(SocSpec, ParsesAndRejects)
{
    mdcom_linux_soc s;
    char err[256];
    EXPECT_EQ(mdcom_linux_soc_init(&s, nullptr, nullptr, err, sizeof(err)), 0);
    EXPECT_EQ(mdcom_linux_soc_irq_fd(&s), -1);
    mdcom_linux_soc_close(&s);
    EXPECT_EQ(mdcom_linux_soc_init(&s, "shm", "futex", err, sizeof(err)), 0);
    mdcom_linux_soc_close(&s);
    EXPECT_EQ(mdcom_linux_soc_init(&s, "devmem:/dev/mem@0x10040000:size=0x40000", nullptr, err,
                                   sizeof(err)),
              0);
    EXPECT_EQ(mdcom_linux_soc_init(&s, "uio:/dev/uio0:map=1", nullptr, err, sizeof(err)), 0);
    EXPECT_EQ(mdcom_linux_soc_init(&s, "uio:/dev/uio0:map=1:size=4096", nullptr, err, sizeof(err)),
              0);
    for (const char *bad :
         {"", "tmpfs", "devmem:/dev/mem", "devmem:dev/mem@0:size=1", "devmem:/dev/mem@x",
          "devmem:/dev/mem@1", "devmem:/dev/mem@1:size=0", "devmem:/dev/mem@1:size=4:x",
          "uio:/dev/uio0", "uio:/dev/uio0:map=9", "uio:/dev/uio0:map=1:x=2"}) {
        EXPECT_EQ(mdcom_linux_soc_init(&s, bad, nullptr, err, sizeof(err)), -EINVAL) << bad;
        EXPECT_NE(std::strstr(err, "region spec"), nullptr) << err;
    }
    for (const char *bad :
         {"uio", "uio:/dev/uio1:map=0:reg=0x10", "uio:/dev/uio1:map=0:reg=2:val=1",
          "uio:/dev/uio1:map=0:reg=0x10:val=1:bogus", "eventfd",
          "uio:/dev/uio1:map=0:reg=0x10:val=1:ack=0x8",
          "uio:/dev/uio1:map=0:reg=0x10:val=1:ack=0x9:ackval=1"}) {
        EXPECT_EQ(mdcom_linux_soc_init(&s, "shm", bad, err, sizeof(err)), -EINVAL) << bad;
        EXPECT_NE(std::strstr(err, "doorbell spec"), nullptr) << err;
    }
}

// mdcom-cfg's spec strings ([region] backend / doorbell keys) are what the
// Linux port parses.
TEST(SocSpec, GeneratedSpecsParse)
{
    mdcom_linux_soc s;
    char err[256] = "";
    EXPECT_STREQ(SOC_TEST_REGION_SPEC, "shm");
    EXPECT_STREQ(SOC_TEST_DOORBELL_SPEC, "futex");
    EXPECT_EQ(mdcom_linux_soc_init(&s, SOC_DEV_REGION_SPEC, nullptr, err, sizeof(err)), 0) << err;
    EXPECT_STREQ(s.region_path, "/dev/mem");
    EXPECT_EQ(s.region_offset, 0x10040000u);
    EXPECT_EQ(s.region_size, 1u << 20);
    // the doorbell spec parses; opening /dev/uio0 is what may fail here
    int r = mdcom_linux_soc_init(&s, nullptr, SOC_DEV_DOORBELL_SPEC, err, sizeof(err));
    EXPECT_NE(r, -EINVAL) << err;
    if (r == 0)
        mdcom_linux_soc_close(&s);
    EXPECT_STREQ(SOC_DEV_DOORBELL_SPEC,
                 "uio:/dev/uio0:map=0:reg=0x8:val=0x10000:ack=0x8:ackval=0x2");
}

// Master in a child process, remote here, both on spec: 200 messages each
// way, checked; then the region's header is where the spec says in the file.
void exchange(const std::string &spec)
{
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        mdcom_linux_soc s;
        mdcom_t *m = nullptr;
        mdcom_init_opts o{};
        mdcom_fifoch_t *ab, *ba;
        if (mdcom_linux_soc_init(&s, spec.c_str(), nullptr, nullptr, 0))
            _exit(10);
        o.platform = &s.plat;
        o.keep_region = 1;
        if (mdcom_init(&m, &soc_test_config, SOC_TEST_DOM_A, &o))
            _exit(11);
        if (mdcom_fifoch_at(m, SOC_TEST_CH_AB, &ab) || mdcom_fifoch_at(m, SOC_TEST_CH_BA, &ba))
            _exit(12);
        for (uint32_t i = 0; i < 200; i++) {
            uint32_t v = 0;
            if (mdcom_fifoch_send(ab, &i, sizeof(i), 5000000000ll))
                _exit(13);
            if (mdcom_fifoch_recv(ba, &v, sizeof(v), 5000000000ll) != (int)sizeof(v) || v != i * 3u)
                _exit(14);
        }
        mdcom_term(m);
        _exit(0);
    }
    mdcom_linux_soc s;
    char err[256] = "";
    ASSERT_EQ(mdcom_linux_soc_init(&s, spec.c_str(), nullptr, err, sizeof(err)), 0) << err;
    mdcom_t *m = nullptr;
    mdcom_init_opts o{};
    o.platform = &s.plat;
    o.attach_timeout_ns = 10000000000ll;
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    int r = mdcom_init(&m, &soc_test_config, SOC_TEST_DOM_B, &o);
    ASSERT_EQ(r, 0) << err;
    mdcom_fifoch_t *ab, *ba;
    ASSERT_EQ(mdcom_fifoch_at(m, SOC_TEST_CH_AB, &ab), 0);
    ASSERT_EQ(mdcom_fifoch_at(m, SOC_TEST_CH_BA, &ba), 0);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < 200; i++) {
        uint32_t v = ~0u;
        ASSERT_EQ(mdcom_fifoch_recv(ab, &v, sizeof(v), 5000000000ll), (int)sizeof(v));
        bad += v != i;
        v *= 3u;
        ASSERT_EQ(mdcom_fifoch_send(ba, &v, sizeof(v), 5000000000ll), 0);
    }
    EXPECT_EQ(bad, 0u);
    int st = -1;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "master status " << st;
    mdcom_term(m);
    mdcom_linux_soc_close(&s);
}

TEST(SocRegion, DevmemAtAnOffsetTwoProcesses)
{
    TmpDir d;
    const off_t off = 0x100040; // not page aligned: the backend maps the page and adds the rest
    std::string mem = d.file("mem", 2u << 20);
    exchange("devmem:" + mem + "@" + std::to_string(off) + ":size=262144");
    auto hdr = read_at(mem, off, 4);
    EXPECT_EQ(std::memcmp(hdr.data(), "MDCM", 4), 0) << "no region header at the carveout offset";
    auto before = read_at(mem, off - 64, 64);
    EXPECT_EQ(std::vector<uint8_t>(64, 0), before) << "written below the carveout";
}

/* mdcom_init of the test config on a devmem: stand-in of file_size bytes
 * (spec after the file name: offset and size) */
int init_on_devmem(size_t file_size, const std::string &spec)
{
    TmpDir d;
    std::string mem = d.file("mem", file_size);
    mdcom_linux_soc s;
    int rc = mdcom_linux_soc_init(&s, ("devmem:" + mem + spec).c_str(), nullptr, nullptr, 0);
    EXPECT_EQ(rc, 0) << spec;
    if (rc != 0)
        return rc;
    mdcom_t *m = nullptr;
    mdcom_init_opts o{};
    o.platform = &s.plat;
    return mdcom_init(&m, &soc_test_config, SOC_TEST_DOM_A, &o);
}

TEST(SocRegion, DevmemFileTooSmallIsENOSPC)
{
    EXPECT_EQ(init_on_devmem(64u << 10, "@0x1000:size=262144"), -ENOSPC);
}

TEST(SocRegion, CarveoutSmallerThanConfigIsENOSPC)
{
    EXPECT_EQ(init_on_devmem(1u << 20, "@0:size=4096"), -ENOSPC);
}

TEST(SocRegion, UioMapOneTwoProcesses)
{
    TmpDir d;
    long pg = sysconf(_SC_PAGESIZE);
    std::string uio = d.file("uio0", (size_t)pg + (512u << 10));
    exchange("uio:" + uio + ":map=1:size=262144"); // no sysfs for a stand-in: the size given
    auto hdr = read_at(uio, pg, 4);                // map 1 = mmap offset 1 * page size
    EXPECT_EQ(std::memcmp(hdr.data(), "MDCM", 4), 0);
    EXPECT_EQ(read_at(uio, 0, 4), std::vector<uint8_t>(4, 0)) << "map 0 written";
}

struct UioDoorbell : ::testing::Test {
    TmpDir d;
    std::string regs, irq;
    mdcom_linux_soc s{};
    void SetUp() override
    {
        long pg = sysconf(_SC_PAGESIZE);
        regs = d.file("uio1", 2 * (size_t)pg);
        irq = d.path + "/irq";
        ASSERT_EQ(mkfifo(irq.c_str(), 0600), 0);
        std::string spec =
            "uio:" + regs + ":map=1:reg=0x10:val=0x5:irq=" + irq + ":ack=0x8:ackval=0x3:noreenable";
        char err[256] = "";
        ASSERT_EQ(mdcom_linux_soc_init(&s, "shm", spec.c_str(), err, sizeof(err)), 0) << err;
    }
    void TearDown() override { mdcom_linux_soc_close(&s); }
    void interrupt(uint32_t count)
    {
        int fd = open(irq.c_str(), O_WRONLY | O_NONBLOCK);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(write(fd, &count, sizeof(count)), (ssize_t)sizeof(count));
        close(fd);
    }
};

TEST_F(UioDoorbell, RingWritesTheMailboxRegister)
{
    mdcom_aword w;
    atomic_store(&w, 0u);
    s.plat.doorbell.ring(s.plat.doorbell.ctx, &w, 3);
    long pg = sysconf(_SC_PAGESIZE);
    auto v = read_at(regs, pg + 0x10, 4);
    uint32_t got;
    std::memcpy(&got, v.data(), 4);
    EXPECT_EQ(got, 5u);
    EXPECT_EQ(read_at(regs, pg, 4), std::vector<uint8_t>(4, 0)); // only that register
    EXPECT_EQ(read_at(regs, pg + 0x8, 4),
              std::vector<uint8_t>(4, 0)); // no ack without an interrupt
    EXPECT_EQ(mdcom_linux_soc_rings(&s), 1u);
}

TEST_F(UioDoorbell, WaitTimesOutWithoutInterrupt)
{
    mdcom_aword w;
    atomic_store(&w, 7u);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(s.plat.doorbell.wait(s.plat.doorbell.ctx, &w, 7u, 60000000ll), -ETIMEDOUT);
    double dt = since(t0);
    EXPECT_GE(dt, 0.060);
    EXPECT_LT(dt, 1.0);
    EXPECT_EQ(s.plat.doorbell.wait(s.plat.doorbell.ctx, &w, 6u, 60000000ll), 0); // word differs
}

TEST_F(UioDoorbell, InterruptWakesWaiterAndFdIsPollable)
{
    mdcom_aword w;
    atomic_store(&w, 7u);
    /* t0 before the thread starts: the interrupt comes 40 ms or more after
     * it whatever the load, so a wait that returns before 40 ms did not
     * wait for the interrupt */
    auto t0 = std::chrono::steady_clock::now();
    std::thread t([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        interrupt(1);
    });
    EXPECT_EQ(s.plat.doorbell.wait(s.plat.doorbell.ctx, &w, 7u, 5000000000ll), 0);
    double dt = since(t0);
    t.join();
    EXPECT_GE(dt, 0.040);
    EXPECT_LT(dt, 2.0);
    EXPECT_EQ(mdcom_linux_soc_irqs(&s), 1u);
    uint32_t ack;
    std::memcpy(&ack, read_at(regs, sysconf(_SC_PAGESIZE) + 0x8, 4).data(), 4);
    EXPECT_EQ(ack, 3u) << "the request is cleared (ack register) after an interrupt";
    // the same fd in an event loop
    struct pollfd p = {mdcom_linux_soc_irq_fd(&s), POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0);
    interrupt(2);
    EXPECT_EQ(poll(&p, 1, 1000), 1);
    EXPECT_TRUE(p.revents & POLLIN);
}

} // namespace
