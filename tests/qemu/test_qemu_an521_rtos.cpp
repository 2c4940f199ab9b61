/* SPDX-License-Identifier: BSD-3-Clause */
// qemu_an521_freertos_threadx: RTOS <-> RTOS on the two Cortex-M33 of QEMU
// mps2-an521 (firmware/qemu-an521-rtos): FreeRTOS on CPU0, the master, and
// ThreadX on CPU1 exchange messages both ways (seq + CRC, rr_proto.h), the
// receiver blocked in mdcom_fifoch_recv and woken by the MHU interrupt; a
// FreeRTOS task, a ThreadX thread and this process take the SMEM lock at the
// same time; and this process, a third domain on the same region, sends to
// and receives from the FreeRTOS task "linux". QEMU gives this process no
// doorbell into or out of the guest: its waits (and the task's on "l2a") end
// at short timeouts and look again. Skipped (exit 77) without
// qemu-system-arm or the images, failed then under CI=true.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "an521_qemu.h"
#include "mdcom/mdcom.h"
#include "mdcom_an521rtos_cfg.h"
#include "rr_proto.h"

namespace {

const char *fw0() { return std::getenv("MDCOM_AN521_RTOS_FW0"); }
const char *fw1() { return std::getenv("MDCOM_AN521_RTOS_FW1"); }

struct LinuxSide {
    rr_report mine{}; // what this process received, its lock rounds
    rr_report cpu0{}; // the FreeRTOS task's answer to the stop
    int answer = -2;  // rr_check of that answer (1: a good report)
    int err = 0;
    std::string what;
};

int64_t ms(int64_t v) { return v * 1000000ll; }

// recv with this process' short waits (nothing rings it) up to timeout
int recv_poll(mdcom_fifoch_t *ch, uint8_t *buf, int64_t timeout)
{
    auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout);
    for (;;) {
        int n = mdcom_fifoch_recv(ch, buf, RR_MSG_MAX, ms(1));
        if (n != -ETIMEDOUT || std::chrono::steady_clock::now() > end)
            return n;
    }
}

int send_retry(mdcom_fifoch_t *ch, const uint8_t *buf, uint32_t n)
{
    for (int i = 0; i < 2000; i++) { // the task attaches after READY
        int r = mdcom_fifoch_send(ch, buf, n, ms(5000));
        if (r != -ENOTCONN)
            return r < 0 ? r : 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -ENOTCONN;
}

// RR_LINUX_COUNT round trips with the task "linux", each followed by lock
// rounds on "state" (RR_LOCK_ROUNDS in all), then the stop and its answer.
void linux_side(mdcom_t *m, LinuxSide *ls)
{
    mdcom_fifoch_t *tx = nullptr, *rx = nullptr;
    mdcom_smemch_t *st = nullptr;
    void *p = nullptr;
    uint8_t buf[RR_MSG_MAX];
    if ((ls->err = mdcom_fifoch_at(m, MDCOM_AN521RTOS_CH_L2A, &tx)) ||
        (ls->err = mdcom_fifoch_at(m, MDCOM_AN521RTOS_CH_A2L, &rx)) ||
        (ls->err = mdcom_smemch_at(m, MDCOM_AN521RTOS_CH_STATE, &st))) {
        ls->what = "channels";
        return;
    }
    mdcom_smemch_get(st, &p, nullptr);
    auto *w = static_cast<volatile uint32_t *>(p);
    const uint32_t per = (RR_LOCK_ROUNDS + RR_LINUX_COUNT - 1) / RR_LINUX_COUNT;
    for (uint32_t seq = 0; seq < RR_LINUX_COUNT; seq++) {
        if ((ls->err = send_retry(tx, buf, rr_build(buf, seq, RR_TAG_LINUX)))) {
            ls->what = "send";
            return;
        }
        for (uint32_t k = 0; k < per && ls->mine.lock_rounds < RR_LOCK_ROUNDS; k++) {
            if ((ls->err = mdcom_smemch_lock(st, ms(10000)))) {
                ls->what = "lock";
                return;
            }
            ls->mine.lock_bad += (uint32_t)rr_lock_round(w, 0x4c000000u | seq);
            if ((ls->err = mdcom_smemch_unlock(st))) {
                ls->what = "unlock";
                return;
            }
            ls->mine.lock_rounds++;
        }
        int n = recv_poll(rx, buf, ms(20000));
        if (n < 0) {
            ls->err = n;
            ls->what = "recv";
            return;
        }
        rr_report dummy;
        if (rr_check(buf, n, seq, RR_TAG_CPU0, &dummy) == 0)
            ls->mine.received++;
        else
            ls->mine.bad++;
    }
    if ((ls->err = send_retry(tx, buf, rr_build_stop(buf, &ls->mine)))) {
        ls->what = "send stop";
        return;
    }
    int n = recv_poll(rx, buf, ms(20000));
    if (n < 0) {
        ls->err = n;
        ls->what = "recv answer";
        return;
    }
    ls->answer = rr_check(buf, n, RR_LINUX_COUNT, RR_TAG_CPU0, &ls->cpu0);
}

An521Run<LinuxSide> g_run;

void run_once()
{
    if (g_run.ran)
        return;
    an521_run_once(g_run, fw0(), fw1(), &mdcom_an521rtos_config, MDCOM_AN521RTOS_DOM_LINUX,
                   linux_side);
    const rr_report &l = g_run.ls.mine;
    std::printf("linux: sent %u received %u bad %u lock_rounds %u lock_bad %u (err %d %s)\n",
                RR_LINUX_COUNT, l.received, l.bad, l.lock_rounds, l.lock_bad, g_run.ls.err,
                g_run.ls.what.c_str());
}

struct An521Rtos : ::testing::Test {
    void SetUp() override
    {
        run_once();
        ASSERT_TRUE(g_run.setup_error.empty()) << g_run.setup_error;
    }
    static std::string res(const char *name) { return An521Results{g_run.a}.res(name); }
    static long field(const char *name, const char *key) { return an521_field(res(name), key); }
    static void expect_pass(const char *name)
    {
        EXPECT_TRUE(An521Results{g_run.a}.passed(name)) << name << ": " << res(name);
    }
};

// FreeRTOS "ping" <-> ThreadX "echo": every message in order with a good
// CRC on both cores; the round trip as CPU0's clock measured it
TEST_F(An521Rtos, FreeRtosThreadxBothWays)
{
    expect_pass("rtos_ping");
    const long all = (long)(RR_PING_COUNT + RR_RTT_COUNT);
    EXPECT_EQ(field("rtos_ping", "cpu0_received"), all);
    EXPECT_EQ(field("rtos_ping", "cpu1_received"), all);
    EXPECT_EQ(field("rtos_ping", "cpu0_bad"), 0);
    EXPECT_EQ(field("rtos_ping", "cpu1_bad"), 0);
    EXPECT_GT(field("rtos_ping", "rtt_min_ns"), 0); // CPU0's timer 0 counts while CPU1 answers
    EXPECT_GE(field("rtos_ping", "rtt_avg_ns"), field("rtos_ping", "rtt_min_ns"));
    std::printf(
        "FreeRTOS <-> ThreadX round trip: min %ld avg %ld max %ld ns (%u timed), avg %ld ns "
        "while the lock rounds and the Linux leg ran (%u); %ld messages each way\n",
        field("rtos_ping", "rtt_min_ns"), field("rtos_ping", "rtt_avg_ns"),
        field("rtos_ping", "rtt_max_ns"), RR_RTT_COUNT, field("rtos_ping", "loaded_rtt_avg_ns"),
        RR_PING_COUNT, all);
}

// the blocked receivers slept in the kernel and were woken by MHU interrupts
TEST_F(An521Rtos, ReceiversWokenByMhuInterrupt)
{
    expect_pass("rtos_doorbell");
    EXPECT_GT(field("rtos_doorbell", "cpu0_woken"), 0);
    EXPECT_GT(field("rtos_doorbell", "cpu0_mhu_irqs"), 0);
    EXPECT_GT(field("rtos_doorbell", "cpu1_woken"), 0);
    EXPECT_GT(field("rtos_doorbell", "cpu1_mhu_irqs"), 0);
}

// this process <-> the FreeRTOS task "linux", checked on both sides
TEST_F(An521Rtos, LinuxAndFreeRtosBothWays)
{
    const LinuxSide &ls = g_run.ls;
    EXPECT_EQ(ls.err, 0) << ls.what;
    EXPECT_EQ(ls.mine.received, RR_LINUX_COUNT);
    EXPECT_EQ(ls.mine.bad, 0u);
    EXPECT_EQ(ls.answer, 1) << "no good report from the task";
    EXPECT_EQ(ls.cpu0.received, RR_LINUX_COUNT);
    EXPECT_EQ(ls.cpu0.bad, 0u);
    expect_pass("rtos_linux");
    EXPECT_EQ(field("rtos_linux", "cpu0_received"), (long)RR_LINUX_COUNT);
    EXPECT_EQ(field("rtos_linux", "linux_received"), (long)ls.mine.received);
}

// one counter under the SMEM lock, by FreeRTOS, ThreadX and Linux at once
TEST_F(An521Rtos, SmemLockThreeDomains)
{
    const LinuxSide &ls = g_run.ls;
    expect_pass("rtos_smem");
    EXPECT_EQ(ls.mine.lock_rounds, RR_LOCK_ROUNDS);
    EXPECT_EQ(ls.mine.lock_bad, 0u);
    EXPECT_EQ(field("rtos_smem", "linux_rounds"), (long)ls.mine.lock_rounds);
    EXPECT_EQ(field("rtos_smem", "counter"), 3l * RR_LOCK_ROUNDS);
    EXPECT_EQ(field("rtos_smem", "disturbed"), 0);
}

TEST_F(An521Rtos, AllPassedAndExitStatus)
{
    EXPECT_NE(g_run.a.console.find("DONE PASS"), std::string::npos);
    EXPECT_NE(g_run.a.console1.find("cpu1: received="), std::string::npos);
    EXPECT_EQ(g_run.a.exit_status, 0);
}

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    struct stat st;
    std::string why;
    if (!mdcom_qemu_available())
        why = "qemu-system-arm cannot be run";
    else if (!fw0() || stat(fw0(), &st) != 0 || !fw1() || stat(fw1(), &st) != 0)
        why = std::string("no FreeRTOS / ThreadX an521 images (MDCOM_AN521_RTOS_FW0=") +
              (fw0() ? fw0() : "") + " MDCOM_AN521_RTOS_FW1=" + (fw1() ? fw1() : "") +
              "; they need arm-none-eabi-gcc and the FreeRTOS-Kernel and threadx tarballs "
              "or FREERTOS_KERNEL_PATH and THREADX_PATH)";
    if (!why.empty())
        return qemu_skip_or_fail(why);
    mdcom_qemu_cleanup_on_signals();
    return RUN_ALL_TESTS();
}
