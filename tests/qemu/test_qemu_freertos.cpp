/* SPDX-License-Identifier: BSD-3-Clause */
// qemu_freertos_e2e: Linux processes <-> a FreeRTOS master on the Cortex-M4 of
// QEMU mps2-an386 (firmware/qemu-freertos, ports/freertos). The firmware runs
// the port checks on target, then its receiver, sender, SMEM and timeout
// tasks; two Linux processes (frt_peer, each its own process and mdcom
// attachment) send to the receiver task, receive from the sender task and
// take the SMEM lock, every message checked (seq + CRC) on both sides. All of
// them share the UART doorbell through the launcher's multiplexer
// (harness/qemu-m4/doorbell_mux.h). Two start orders:
//
//   LinuxFirst     both peers start (and wait to attach) before QEMU runs
//   FirmwareFirst  QEMU first, the region formatted, then one peer, and the
//                  other two seconds later
//
// Each parses the firmware's "RESULT <name> PASS|FAIL ..." lines and the
// peers' "PEER <i> PASS|FAIL ..." lines, and prints them (the timeout
// overshoots in ticks, the idle task's runs, the wake-up latencies). A run
// with every message intact but a timing check failed is run again, at most
// three times (run_until_on_time).
// Without qemu-system-arm or the firmware image: skipped (exit 77) with the
// reason, except under CI (env CI=true), where that is a failure.
//
// The same binary is qemu_threadx_e2e (env MDCOM_FRT_KERNEL=ThreadX,
// MDCOM_FRT_FW the ThreadX image): both images run one firmware body
// (firmware/common/rtos_e2e.c) over their kernel and port.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "qemu_m4.h"
#include "qemu_results.h"

namespace {

const char *fw_path() { return std::getenv("MDCOM_FRT_FW"); }
const char *peer_path() { return std::getenv("MDCOM_FRT_PEER"); }
// the kernel of the image under test, for messages: FreeRTOS unless told
std::string kernel()
{
    const char *k = std::getenv("MDCOM_FRT_KERNEL");
    return k && *k ? k : "FreeRTOS";
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct Run {
    std::string setup_error, console, qemu_log;
    std::vector<std::string> peer_out;
    std::vector<int> peer_status;
    int exit_status = -1, attempts = 0;
    double seconds = 0;
    std::map<std::string, std::string> results; // firmware: name -> rest of the line
};

long field(const std::string &res, const char *key)
{
    std::string k = std::string(" ") + key + "=";
    auto p = (" " + res).find(k);
    return p == std::string::npos ? -1 : std::strtol(res.c_str() + p + k.size() - 1, nullptr, 10);
}

pid_t spawn_peer(const mdcom_qemu &q, int idx, const std::string &log)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        setenv("MDCOM_SHM_DIR", q.dir, 1);
        setenv("MDCOM_QEMU_SOCKET", q.socket_path, 1);
        std::string a = std::to_string(idx);
        execl(peer_path(), peer_path(), a.c_str(), (char *)nullptr);
        _exit(127);
    }
    return pid;
}

// waits for pid up to timeout; kills it after that. Its exit status or 128+sig.
int reap_peer(pid_t pid, std::chrono::seconds timeout)
{
    auto end = std::chrono::steady_clock::now() + timeout;
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0)
            return -1;
        if (std::chrono::steady_clock::now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return 124;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

Run run(bool linux_first)
{
    Run out;
    mdcom_qemu q{};
    mdcom_qemu_opts o{};
    char err[256] = "";
    auto t0 = std::chrono::steady_clock::now();
    o.firmware = fw_path();
    o.region_name = "mdcom-frt"; // freertos.toml
    o.doorbell = MDCOM_QEMU_DOORBELL_MUX;
    o.icount_shift = -1;
    o.ready_timeout_ns = 60000000000ll;
    int r = mdcom_qemu_prepare(&q, &o, err, sizeof(err));
    if (r) {
        out.setup_error = err;
        return out;
    }
    std::vector<pid_t> peers;
    std::vector<std::string> logs;
    for (int i = 0; i < 2; i++)
        logs.push_back(std::string(q.dir) + "/peer" + std::to_string(i) + ".log");
    if (linux_first) {
        for (int i = 0; i < 2; i++)
            peers.push_back(spawn_peer(q, i, logs[i]));
        std::this_thread::sleep_for(std::chrono::seconds(1)); // they wait for the region
    }
    r = mdcom_qemu_launch(&q, &o, err, sizeof(err));
    if (!r && !linux_first) {
        r = mdcom_qemu_wait_ready(&q, o.ready_timeout_ns, err, sizeof(err));
        if (!r) {
            peers.push_back(spawn_peer(q, 0, logs[0]));
            std::this_thread::sleep_for(std::chrono::seconds(2));
            peers.push_back(spawn_peer(q, 1, logs[1]));
        }
    }
    if (r)
        out.setup_error = err;
    if (!r && mdcom_qemu_wait_exit(&q, 300000000000ll) != 0)
        out.setup_error = "QEMU did not exit within 300 s";
    out.exit_status = q.exit_status;
    for (size_t i = 0; i < peers.size(); i++) {
        out.peer_status.push_back(reap_peer(peers[i], std::chrono::seconds(30)));
        out.peer_out.push_back(slurp(logs[i]));
        unlink(logs[i].c_str());
    }
    out.console = slurp(q.console_path);
    out.qemu_log = slurp(std::string(q.dir) + "/qemu.log");
    mdcom_qemu_stop(&q);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.results = qemu_results(out.console);
    std::printf("--- %s firmware console (%s, %.1f s)\n%s", kernel().c_str(),
                linux_first ? "Linux first" : "firmware first", out.seconds, out.console.c_str());
    for (size_t i = 0; i < out.peer_out.size(); i++)
        std::printf("--- peer %zu (exit %d)\n%s", i, out.peer_status[i], out.peer_out[i].c_str());
    if (!out.qemu_log.empty())
        std::printf("--- qemu.log\n%s", out.qemu_log.c_str());
    std::printf("---\n");
    return out;
}

const char *const kResults[] = {"port",
                                "port_timing",
                                "local_task_wakes_recv",
                                "local_isr_wakes_recv",
                                "task_reap",
                                "rx",
                                "tx",
                                "timeouts",
                                "smem_task0",
                                "smem_task1",
                                "smem_lock_timeouts_measured",
                                "smem_all",
                                "doorbell",
                                "uart_doorbell_used"};

bool passed(const Run &r, const char *name)
{
    auto it = r.results.find(name);
    return it != r.results.end() && it->second.rfind("PASS", 0) == 0;
}

bool all_passed(const Run &r)
{
    for (const char *name : kResults)
        if (!passed(r, name))
            return false;
    for (int st : r.peer_status)
        if (st != 0)
            return false;
    return r.setup_error.empty() && r.exit_status == 0 && r.peer_status.size() == 2;
}

// What does not depend on timing: every message intact and counted, the
// locks held, the peers done, a dead task reaped.
bool intact(const Run &r)
{
    if (!r.setup_error.empty() || r.peer_status.size() != 2)
        return false;
    for (size_t i = 0; i < 2; i++)
        if (r.peer_status[i] != 0)
            return false;
    auto f = [&](const char *name, const char *key) {
        auto it = r.results.find(name);
        return it == r.results.end() ? -1 : field(it->second, key);
    };
    return f("rx", "got") == 800 && f("rx", "bad") == 0 && f("tx", "sent0") == 400 &&
           f("tx", "sent1") == 400 && f("smem_all", "counter") == 1200 &&
           f("smem_all", "linux_disturbed") == 0 && f("smem_task0", "disturbed") == 0 &&
           f("smem_task1", "disturbed") == 0 && passed(r, "task_reap");
}

// The scenario, again when only a timing check failed with every message
// intact (at most three runs): the host of a CI machine may deschedule
// QEMU's thread for longer than a tick, which the guest sees as its own
// lateness. A port that is late, or polls, fails every run.
Run run_until_on_time(bool linux_first)
{
    Run r;
    for (int attempt = 1; attempt <= 3; attempt++) {
        r = run(linux_first);
        r.attempts = attempt;
        if (all_passed(r) || !intact(r))
            break;
        std::printf("attempt %d: a timing check failed with every message intact; again\n",
                    attempt);
    }
    std::printf("runs: %d\n", r.attempts);
    return r;
}

// Every check of one run.
void check_run(const Run &r)
{
    ASSERT_TRUE(r.setup_error.empty()) << r.setup_error;
    // the firmware's checks: all present, all PASS
    for (const char *name : kResults) {
        auto it = r.results.find(name);
        ASSERT_NE(it, r.results.end()) << "no RESULT " << name;
        EXPECT_EQ(it->second.rfind("PASS", 0), 0u) << name << ": " << it->second;
    }
    const std::string &port = r.results.at("port");
    EXPECT_EQ(field(port, "checks"), field(port, "passed")) << port; // no check skipped
    EXPECT_GE(field(port, "checks"), 26);
    // the wait blocks: the idle task ran while the main task waited, not while it spun
    const std::string &pt = r.results.at("port_timing");
    EXPECT_GT(field(pt, "idle_runs_wait_100ms"), 1000);
    EXPECT_EQ(field(pt, "idle_runs_spin_100ms"), 0);
    EXPECT_EQ(field(pt, "wait_early"), 0);
    const std::string &rx = r.results.at("rx");
    EXPECT_EQ(field(rx, "got"), 800);
    EXPECT_EQ(field(rx, "bad"), 0);
    // timeouts: never early (every task); mostly woken at the deadline's
    // tick where nothing of the task's priority or above competes (the
    // port checks, the timeout task; the firmware's tmo_ok has the rule,
    // here the numbers are visible again)
    EXPECT_EQ(field(rx, "tmo_early"), 0) << rx;
    EXPECT_EQ(field(r.results.at("smem_task0"), "lock_tmo_early"), 0);
    for (auto kp :
         {std::make_pair(&r.results.at("timeouts"), "recv"), std::make_pair(&pt, "wait")}) {
        std::string k = kp.second;
        long n = field(*kp.first, (k + "_n").c_str()),
             late0 = field(*kp.first, (k + "_late0").c_str());
        EXPECT_EQ(field(*kp.first, (k + "_early").c_str()), 0) << k;
        EXPECT_GE(4 * late0, 3 * n) << k << ": " << *kp.first;
    }
    EXPECT_GT(field(r.results.at("timeouts"), "recv_n"), 0);
    EXPECT_EQ(field(r.results.at("smem_all"), "counter"), 4 * 300);
    EXPECT_GT(field(r.results.at("doorbell"), "uart_doorbells"), 0);
    EXPECT_NE(r.console.find("DONE PASS"), std::string::npos);
    EXPECT_EQ(r.exit_status, 0);
    ASSERT_EQ(r.peer_status.size(), 2u);
    for (size_t i = 0; i < 2; i++) {
        EXPECT_EQ(r.peer_status[i], 0) << "peer " << i << ": " << r.peer_out[i];
        EXPECT_NE(r.peer_out[i].find(" PASS "), std::string::npos) << r.peer_out[i];
    }
}

TEST(FreeRtos, LinuxFirst) { check_run(run_until_on_time(true)); }
TEST(FreeRtos, FirmwareFirst) { check_run(run_until_on_time(false)); }

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    const char *fw = fw_path(), *peer = peer_path();
    struct stat st;
    std::string why;
    if (!mdcom_qemu_available())
        why = "qemu-system-arm cannot be run";
    else if (!fw || !*fw || stat(fw, &st) != 0)
        why = "no " + kernel() + " firmware image (MDCOM_FRT_FW=" + (fw ? fw : "") +
              (kernel() == "ThreadX"
                   ? "; it needs arm-none-eabi-gcc and a threadx tarball or THREADX_PATH)"
                   : "; it needs arm-none-eabi-gcc and a FreeRTOS-Kernel tarball or "
                     "FREERTOS_KERNEL_PATH)");
    else if (!peer || !*peer || stat(peer, &st) != 0)
        why = std::string("no frt_peer (MDCOM_FRT_PEER=") + (peer ? peer : "") + ")";
    if (!why.empty())
        return qemu_skip_or_fail(why);
    mdcom_qemu_cleanup_on_signals();
    return RUN_ALL_TESTS();
}
