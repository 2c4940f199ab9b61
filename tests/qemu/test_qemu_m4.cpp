/* SPDX-License-Identifier: BSD-3-Clause */
// End-to-end tests: the mdcom firmware (firmware/qemu-m4/fw_resp.c) runs as
// the master domain on a Cortex-M4 under QEMU; this process attaches as the
// remote domain "linux" to the same 16 MiB region file and checks every
// reply. Correctness only: no timing is asserted except that calls return
// within their own timeout when the firmware is gone.
// Skipped (exit 77) without qemu-system-arm or the firmware image.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "m4_scen.h"
#include "mdcom_m4_cfg.h"

namespace {

const char *fw_path() { return std::getenv("MDCOM_M4_FW"); }

struct Link : ::testing::Test {
    m4_link l{};
    bool up = false;
    void start()
    {
        int r = m4_link_start(&l, fw_path());
        ASSERT_EQ(r, 0) << l.err;
        up = true;
    }
    void TearDown() override
    {
        if (up)
            m4_link_stop(&l);
    }
    fw_rsp ping()
    {
        fw_rsp res{};
        EXPECT_EQ(m4_cmd(&l, FW_OP_PING, FW_MODE_POLL, 0, 0), 0);
        EXPECT_EQ(m4_result(&l, &res, 5000000000ll), 0);
        EXPECT_EQ(res.op, (uint32_t)FW_OP_PING);
        return res;
    }
};

TEST_F(Link, BootHandshake)
{
    start();
    fw_rsp r = ping();
    EXPECT_EQ(r.status, 0);
    EXPECT_GE(r.value, 1u);                    // boot token
    EXPECT_EQ(mdcom_sense_process(l.m, 0), 1); // the firmware, alive while QEMU is
    EXPECT_EQ(mdcom_sense_process(l.m, 1), 1); // this process
}

TEST_F(Link, FifoEchoPolling100k)
{
    start();
    uint32_t fw_bad = 1;
    EXPECT_EQ(m4_echo(&l, 100000, FW_MODE_POLL, -1, nullptr, &fw_bad), 0);
    EXPECT_EQ(fw_bad, 0u);
}

TEST_F(Link, FifoEchoDoorbell100k)
{
    start();
    uint32_t fw_bad = 1;
    EXPECT_EQ(m4_echo(&l, 100000, FW_MODE_DOORBELL, 0, nullptr, &fw_bad), 0);
    EXPECT_EQ(fw_bad, 0u);
    EXPECT_GT(mdcom_doorbell_uart_rx(l.db), 0u); // the firmware did ring us
    EXPECT_GT(mdcom_doorbell_uart_tx(l.db), 0u);
}

// Every ring this side sends reaches the firmware's doorbell interrupt: the
// firmware counts the UART bytes it drains (the ping's value2). A lost
// interrupt leaves the UART's RX full, QEMU then delivers no further byte and
// the count stops for good while this side's grows (MDCOM and RPMsg
// alternate: RPMsg rings more often per message). Bytes in flight land
// within the wait below: QEMU takes one per main loop turn.
TEST_F(Link, DoorbellLosesNoRing)
{
    start();
    uint64_t tx0 = mdcom_doorbell_uart_tx(l.db);
    fw_rsp a = ping();
    for (int k = 0; k < 4; k++) {
        uint32_t fw_bad = 1;
        ASSERT_EQ(m4_echo(&l, 1000, FW_MODE_DOORBELL, 4, nullptr, &fw_bad), 0);
        EXPECT_EQ(fw_bad, 0u);
        ASSERT_EQ(m4_rpmsg_echo(&l, 1000, FW_MODE_DOORBELL, 64, nullptr), 0);
    }
    EXPECT_GT(mdcom_doorbell_uart_tx(l.db) - tx0, 10u); // the firmware did sleep
    uint64_t sent = 0, got = 0;
    for (int tries = 0; tries < 500; tries++) { // up to ~5 s
        sent = mdcom_doorbell_uart_tx(l.db) - tx0;
        got = ping().value2 - a.value2;
        // a ping's own ring (if the firmware slept on ctl) may land after
        // its answer: one short is complete
        if (got + 1 >= sent)
            break;
        usleep(10000);
    }
    EXPECT_GE(got + 1, sent) << "rings received " << got << ", sent " << sent;
    EXPECT_LE(got, mdcom_doorbell_uart_tx(l.db) - tx0) << "more rings received than sent";
}

TEST_F(Link, BlockAckAllSizes)
{
    start();
    for (uint32_t b = 512; b <= 32768; b *= 2) {
        EXPECT_EQ(m4_blockack(&l, 50, b, 32768, FW_MODE_POLL, nullptr), 0) << b;
        EXPECT_EQ(m4_blockack(&l, 10, b, 512, FW_MODE_DOORBELL, nullptr), 0) << b;
    }
    double ns = 0;
    EXPECT_EQ(m4_sink(&l, 10000, 4096, FW_MODE_POLL, &ns), 0);
}

TEST_F(Link, SmemLock100kPollingAndDoorbell)
{
    start();
    EXPECT_EQ(m4_smem(&l, 100000, FW_MODE_POLL), 0);
    EXPECT_EQ(m4_smem(&l, 100000, FW_MODE_DOORBELL), 0);
}

TEST_F(Link, RpmsgEcho100k)
{
    start();
    EXPECT_EQ(m4_rpmsg_echo(&l, 100000, FW_MODE_POLL, 64, nullptr), 0);
    EXPECT_EQ(m4_rpmsg_echo(&l, 10000, FW_MODE_DOORBELL, 64, nullptr), 0);
    EXPECT_EQ(m4_rpmsg_blockack(&l, 20, 32768, FW_MODE_POLL, nullptr), 0);
}

// The benchmark's modes: the echoes with the firmware checking nothing (equal
// work on both transports: this side still checks seq + CRC of each reply),
// the raw spin echo, and the firmware's arrival stamps. The stamps must be
// consistent with one clock on both sides (QEMU without -icount): a non-empty
// causality interval for the offset over every sample, and each one-way time
// inside the round trip.
TEST_F(Link, EqualWorkRawEchoAndOneWayStamps)
{
    start();
    uint32_t fw_bad = 1;
    EXPECT_EQ(m4_echo_arg(&l, 2000, FW_MODE_POLL, -1, 0, nullptr, nullptr, &fw_bad), 0);
    EXPECT_EQ(fw_bad, 0u);
    EXPECT_EQ(m4_rpmsg_echo_arg(&l, 2000, FW_MODE_POLL, 64, 0, nullptr, nullptr), 0);
    enum { N = 2000 };
    static double a[3 * N], b[3 * N], rt[N];
    m4_ow ow{{a, 0, 3 * N}, {b, 0, 3 * N}};
    m4_times t{rt, 0, N};
    EXPECT_EQ(m4_raw_echo(&l, N, FW_ARG_STAMP, &t, &ow), 0);
    EXPECT_EQ(t.n, (uint32_t)N);
    EXPECT_EQ(m4_echo_arg(&l, N, FW_MODE_POLL, 52, FW_ARG_STAMP, nullptr, &ow, nullptr), 0);
    EXPECT_EQ(m4_rpmsg_echo_arg(&l, N, FW_MODE_POLL, 64, FW_ARG_STAMP, nullptr, &ow), 0);
    ASSERT_EQ(ow.a.n, 3u * N);
    double theta = 0, hw = 0;
    ASSERT_EQ(m4_ow_offset(&ow, &theta, &hw), 0) << "the two sides' clocks are not one clock";
    EXPECT_LT(hw, 1e6); // the bound is at most half the fastest round trip
    for (uint32_t i = 0; i < ow.a.n; i++) {
        EXPECT_GE(ow.a.v[i] - theta, -hw); // arrival after the send
        EXPECT_LE(ow.b.v[i] - theta, hw);  // and before the reply
    }
}

TEST_F(Link, RemoteStartedBeforeMaster)
{
    mdcom_qemu_opts o{};
    o.firmware = fw_path();
    o.region_name = "mdcom-m4";
    o.doorbell = 1;
    o.icount_shift = -1;
    o.ready_timeout_ns = -1;
    ASSERT_EQ(mdcom_qemu_prepare(&l.q, &o, l.err, sizeof(l.err)), 0) << l.err;
    up = true;
    // attach first (the region file exists, all zero: no master yet), then
    // boot the master. The attach runs in a thread: QEMU must be started by
    // a thread that outlives it (PR_SET_PDEATHSIG follows the forking thread).
    // Without the doorbell socket yet, the remote uses the plain Linux port.
    setenv("MDCOM_SHM_DIR", l.q.dir, 1);
    int r = 1;
    mdcom_t *m = nullptr;
    std::thread remote([&] {
        mdcom_init_opts io{};
        io.attach_timeout_ns = 30000000000ll;
        r = mdcom_init(&m, &mdcom_m4_config, MDCOM_M4_DOM_LINUX, &io);
    });
    usleep(300000);
    int launched = mdcom_qemu_launch(&l.q, &o, l.err, sizeof(l.err));
    remote.join();
    ASSERT_EQ(launched, 0) << l.err;
    ASSERT_EQ(r, 0);
    EXPECT_EQ(mdcom_sense_process(m, 1), 1);
    mdcom_term(m);
    ASSERT_EQ(m4_link_attach(&l, 5000000000ll), 0) << l.err;
    EXPECT_EQ(ping().status, 0);
    EXPECT_EQ(m4_echo(&l, 1000, FW_MODE_POLL, -1, nullptr, nullptr), 0);
}

TEST_F(Link, FirmwareResetMidStream)
{
    start();
    uint32_t boot1 = ping().value;
    ASSERT_EQ(m4_echo(&l, 1000, FW_MODE_POLL, -1, nullptr, nullptr), 0);
    fw_rsp res{};
    ASSERT_EQ(m4_cmd(&l, FW_OP_RESET, FW_MODE_POLL, 0, 0), 0);
    ASSERT_EQ(m4_result(&l, &res, 5000000000ll), 0);
    // the reset core re-formats the region (generation + 1): our next call fails
    int r = 0;
    for (int i = 0; i < 100 && r == 0; i++) {
        r = m4_echo(&l, 10, FW_MODE_POLL, -1, nullptr, nullptr);
        usleep(10000);
    }
    EXPECT_TRUE(r == -ECONNRESET || r == -ESHUTDOWN || r == -ETIMEDOUT) << r;
    // recover: detach, attach again, carry on
    m4_link_detach(&l);
    ASSERT_EQ(m4_link_attach(&l, 30000000000ll), 0) << l.err;
    fw_rsp p = ping();
    EXPECT_EQ(p.value, boot1 + 1); // the boot counter survived the warm reset
    EXPECT_EQ(m4_echo(&l, 1000, FW_MODE_POLL, -1, nullptr, nullptr), 0);
}

// The firmware promises a heartbeat (FW_HEARTBEAT_MS): idle in a FOREVER
// recv it stays alive (its waits beat); hung (spinning without mdcom calls)
// it is counted dead although QEMU runs on, and the block it held returns.
TEST_F(Link, HungFirmwareIsSeenDead)
{
    start();
    EXPECT_EQ(ping().status, 0);
    for (int i = 0; i < 15; i++) { // 1.5 s > FW_HEARTBEAT_MS, idle
        EXPECT_EQ(mdcom_sense_process(l.m, 0), 1) << "an idle firmware counted dead";
        usleep(100000);
    }
    fw_rsp res{};
    ASSERT_EQ(m4_cmd(&l, FW_OP_HANG, FW_MODE_POLL, 0, 0), 0);
    ASSERT_EQ(m4_result(&l, &res, 5000000000ll), 0);
    double t0 = m4_now_ns();
    int n = 1;
    while (n != 0 && m4_now_ns() - t0 < 10e9) {
        n = mdcom_sense_process(l.m, 0);
        usleep(10000);
    }
    double ms = (m4_now_ns() - t0) / 1e6;
    EXPECT_EQ(n, 0) << "a hung firmware is still counted alive";
    EXPECT_LT(ms, 5000.0);
    printf("hung firmware (heartbeat %u ms) counted dead after %.0f ms\n", FW_HEARTBEAT_MS, ms);
    mdcom_fifo_state st{};
    for (int i = 0; i < 100; i++) {
        if (mdcom_sense_fifoch(l.rsp, &st) == 0 && st.free_blocks == st.block_count)
            break;
        usleep(10000);
    }
    EXPECT_EQ(st.free_blocks, st.block_count) << "the hung firmware's block is not reclaimed";
}

void killed_case(m4_link &l, uint32_t mode)
{
    ASSERT_EQ(m4_echo(&l, 100, mode, -1, nullptr, nullptr), 0);
    ASSERT_EQ(mdcom_qemu_kill(&l.q), 0);
    double t0 = m4_now_ns();
    int r = m4_echo(&l, 10, mode, 16, nullptr, nullptr); // 5 s per reply
    double s = (m4_now_ns() - t0) / 1e9;
    EXPECT_LT(r, 0);
    EXPECT_LT(s, 15.0); // an error within the call's timeouts, never a hang
}

TEST_F(Link, QemuKilledPolling)
{
    start();
    killed_case(l, FW_MODE_POLL);
}

TEST_F(Link, QemuKilledDoorbell)
{
    start();
    killed_case(l, FW_MODE_DOORBELL);
    EXPECT_EQ(mdcom_doorbell_uart_connected(l.db), 0);
    EXPECT_EQ(mdcom_sense_process(l.m, 0), 0); // the firmware counts as dead now
}

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    const char *fw = fw_path();
    struct stat st;
    if (!mdcom_qemu_available() || !fw || !*fw || stat(fw, &st) != 0) {
        std::printf("SKIP: needs qemu-system-arm and the firmware image (MDCOM_M4_FW=%s)\n",
                    fw ? fw : "");
        return 77;
    }
    mdcom_qemu_cleanup_on_signals();
    int r = RUN_ALL_TESTS();
    const auto *u = ::testing::UnitTest::GetInstance();
    std::printf("%d passed, %d failed\n", u->successful_test_count(), u->failed_test_count());
    return r;
}
