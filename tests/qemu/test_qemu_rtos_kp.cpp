/* SPDX-License-Identifier: BSD-3-Clause */
// qemu_freertos_killpoints, qemu_threadx_killpoints: a firmware task deleted
// at every store the core makes to shared memory, in every public operation
// (and stopped there past its heartbeat, then run on; and deleted while
// another task is mid-traffic), on the Cortex-M4 of QEMU mps2-an386 over
// FreeRTOS or ThreadX (firmware/common/rtos_kp.c, which does the sweep and
// the survivor's checks on target). This side runs the image, prints its
// verdicts, and checks that every sweep passed and covered kill points.
//
//   MDCOM_KP_FW      the image (mdcom-fw-<kernel>-kp.elf)
//   MDCOM_KP_KERNEL  FreeRTOS or ThreadX, for messages
// Without qemu-system-arm or the image: skipped (exit 77) with the reason,
// except under CI (env CI=true), where that is a failure.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "qemu_m4.h"
#include "qemu_results.h"

namespace {

const char *fw_path() { return std::getenv("MDCOM_KP_FW"); }
std::string kernel()
{
    const char *k = std::getenv("MDCOM_KP_KERNEL");
    return k && *k ? k : "FreeRTOS";
}

long field(const std::string &rest, const char *key)
{
    std::string k = std::string(" ") + key + "=";
    auto p = (" " + rest).find(k);
    return p == std::string::npos ? -1 : std::strtol(rest.c_str() + p + k.size() - 1, nullptr, 10);
}

TEST(RtosKillPoints, EveryStoreOfEveryOperation)
{
    mdcom_qemu q;
    mdcom_qemu_opts o{};
    char err[512] = "";
    o.firmware = fw_path();
    o.region_name = "mdcom-kp";
    o.icount_shift = -1;
    o.ready_timeout_ns = 60ll * 1000000000ll;
    ASSERT_EQ(mdcom_qemu_start(&q, &o, err, sizeof err), 0) << err;
    // a few seconds here; the bound is for a loaded host
    int waited = mdcom_qemu_wait_exit(&q, 400ll * 1000000000ll);
    std::ifstream f(q.console_path);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string console = ss.str();
    mdcom_qemu_stop(&q);
    std::printf("%s", console.c_str());
    ASSERT_EQ(waited, 0) << kernel() << " image still running after 400 s";
    auto res = qemu_results(console);
    int sweeps = 0;
    long pairs = 0;
    for (auto &kv : res) {
        if (kv.first.rfind("kp_", 0) != 0)
            continue;
        sweeps++;
        EXPECT_EQ(kv.second.rfind("PASS", 0), 0u) << kv.first << " " << kv.second;
        pairs += field(kv.second, "points");
    }
    // 11 operations x 3 variants (kill, kill beside a busy task, stop)
    EXPECT_EQ(sweeps, 33) << "sweeps reported";
    ASSERT_TRUE(res.count("killpoints")) << "no verdict (the image died?)";
    EXPECT_EQ(res["killpoints"].rfind("PASS", 0), 0u) << res["killpoints"];
    EXPECT_EQ(field(res["killpoints"], "pairs"), pairs);
    EXPECT_GT(pairs, 100) << "(operation, kill point) pairs covered";
    EXPECT_EQ(q.exit_status, 0);
    std::printf("%s: %ld (operation, kill point) pairs over %d sweeps\n", kernel().c_str(), pairs,
                sweeps);
}

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    const char *fw = fw_path();
    struct stat st;
    std::string why;
    if (!mdcom_qemu_available())
        why = "qemu-system-arm cannot be run";
    else if (!fw || !*fw || stat(fw, &st) != 0)
        why = "no " + kernel() + " kill-point image (MDCOM_KP_FW=" + (fw ? fw : "") +
              "; it needs arm-none-eabi-gcc and the kernel's tarball or source tree)";
    if (!why.empty())
        return qemu_skip_or_fail(why);
    mdcom_qemu_cleanup_on_signals();
    return RUN_ALL_TESTS();
}
