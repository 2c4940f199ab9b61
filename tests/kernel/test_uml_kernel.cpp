/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Linux kernel's own RPMsg host (virtio_rpmsg_bus + rpmsg_ctrl +
 * rpmsg_char, Debian linux-source-6.1 built for User-Mode Linux) against
 * mdcom's RPMsg remote behind vhost-user (harness/vhost-rpmsg).
 *
 * Boot 1: uml_guest (init) echoes random-length messages with CRC through
 * /dev/rpmsgN (the device answering by copy, zero copy and held RX buffers),
 * runs four streams both ways at once from guest threads, fills mdcom's TX
 * ring while the kernel's RX processing is held back, sends malformed input
 * from the kernel's side and has the device send some to the kernel, checks
 * the name service both ways and same-name binding (docs/rpmsg.md lists the
 * steps), then the device process is killed (SIGKILL) and restarted; the
 * guest reports what the kernel did.
 * Boot 2: a fresh boot against the restarted device works again.
 * In both boots the guest first checks that vector registers (ymm, or zmm
 * with AVX-512) survive context switches between its threads: the kernel is
 * built with tests/kernel/uml_xstate_edit.py, which sizes UML's ptrace XSTATE
 * buffer from the host (without it UML cannot restore registers on hosts
 * with AMX) and with tests/kernel/uml_virtio_edit.py, which runs virtqueue
 * callbacks in process context as real remoteproc hosts do (without it
 * virtio_rpmsg_bus can sleep in UML's interrupt handler and hang the boot).
 * Skipped (exit 77) when scripts/uml-kernel cannot build the kernel because
 * the Debian package is missing; with CI=true that fails instead.
 */
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

std::string slurp(const std::string &p)
{
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

bool contains(const std::string &s, const std::string &what)
{
    return s.find(what) != std::string::npos;
}

/* Spawn argv with stdin /dev/null and stdout+stderr to log. */
pid_t spawn(const std::vector<std::string> &args, const std::string &log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char *> av;
    for (auto &a : args)
        av.push_back(const_cast<char *>(a.c_str()));
    av.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, av[0], &fa, nullptr, av.data(), environ) != 0)
        pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* Wait for pid up to ms; its exit status, or -1 (then it is killed). */
int wait_exit(pid_t pid, int ms)
{
    int st = 0;
    for (int t = 0; t < ms; t += 20) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* The first line of a kernel crash in a console log, or "". */
std::string crash_line(const std::string &console)
{
    for (const char *bad : {"Kernel panic", "BUG: "}) {
        size_t at = console.find(bad);
        if (at != std::string::npos)
            return console.substr(at, console.find('\n', at) - at);
    }
    return "";
}

/* Waits until file contains what (true), alive exits, ms pass, or the
 * console log (when given) shows a kernel crash (false: the kernel of a
 * crashed UML may hang instead of exiting). */
bool wait_for_text(const std::string &file, const std::string &what, int ms, pid_t alive,
                   const std::string &console = "")
{
    for (int t = 0; t < ms; t += 50) {
        if (contains(slurp(file), what))
            return true;
        if (!console.empty() && !crash_line(slurp(console)).empty()) {
            std::this_thread::sleep_for(
                std::chrono::milliseconds(500)); /* the rest of the report */
            return contains(slurp(file), what);
        }
        if (alive > 0 && waitpid(alive, nullptr, WNOHANG) == alive)
            return contains(slurp(file), what);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

/* Kernel log lines that must never appear while the device is alive. */
void expect_clean_log(const std::string &log, const char *what)
{
    for (const char *bad :
         {"WARNING:", "BUG:", "Oops", "Kernel panic", "inbound msg too big",
          "msg received with no recipient", "failed to announce", "rpmsg_send failed",
          "no used buffer", "timeout waiting for a tx buffer", "virtqueue_add"})
        EXPECT_FALSE(contains(log, bad)) << what << " contains '" << bad << "':\n" << log;
}

/* The kernel sized its XSTATE buffer from the host (tests/kernel/uml_xstate_edit.py
 * prints one line at boot), and the guest's vector registers survived its
 * context switches (uml_vecregs.c). */
void expect_vector_registers(const std::string &glog, const std::string &console)
{
    size_t at = console.find("x86/um: XSTATE host");
    EXPECT_NE(at, std::string::npos) << "no XSTATE line at boot: kernel built without the edit?\n"
                                     << console;
    if (at != std::string::npos)
        printf("%s\n", console.substr(at, console.find('\n', at) - at).c_str());
    bool ok = contains(glog, "OK vector registers"), none = contains(glog, "INFO vector registers");
    EXPECT_TRUE(ok || none) << glog;
    if (none)
        printf("*** vector register check not run: this CPU has no AVX ***\n");
}

struct Uml : ::testing::Test {
    std::string dir, kernel;
    std::vector<pid_t> children; /* killed at the end, whatever happened */
    void SetUp() override
    {
        FILE *p = popen(MDCOM_SOURCE_DIR "/scripts/uml-kernel", "r");
        ASSERT_NE(p, nullptr);
        char buf[4096] = {0};
        size_t n = fread(buf, 1, sizeof(buf) - 1, p);
        int st = pclose(p);
        int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        const char *ci = getenv("CI");
        if (rc == 77 && ci && !strcmp(ci, "true"))
            FAIL() << "CI=true: the UML kernel cannot be built here: Debian package "
                      "linux-source-6.1 (or "
                      "flex/bison) not installed; scripts/deps.sh installs it";
        if (rc == 77)
            GTEST_SKIP()
                << "UML kernel unavailable: Debian package linux-source-6.1 (or flex/bison) not "
                   "installed; scripts/deps.sh installs it";
        ASSERT_EQ(rc, 0) << "scripts/uml-kernel failed (see the build.log it names)";
        kernel.assign(buf, n);
        while (!kernel.empty() && (kernel.back() == '\n' || kernel.back() == '\r'))
            kernel.pop_back();
        /* which kernel, and the source edit it was built with */
        std::string info = slurp(kernel.substr(0, kernel.rfind('/')) + "/info");
        printf("UML kernel %s\n%s", kernel.c_str(), info.c_str());
        char tmpl[] = "/tmp/mdcom-uml-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override
    {
        for (pid_t p : children)
            if (waitpid(p, nullptr, WNOHANG) == 0) {
                kill(p, SIGKILL);
                waitpid(p, nullptr, 0);
            }
        if (!dir.empty() && !HasFailure())
            (void)!system(("rm -rf " + dir).c_str());
        else if (!dir.empty())
            printf("kept %s for inspection\n", dir.c_str());
    }
    pid_t device(const std::string &log)
    {
        pid_t p = spawn({MDCOM_VHOST_RPMSG, "--socket", dir + "/vu.sock", "--mixed-echo"},
                        dir + "/" + log);
        children.push_back(p);
        return p;
    }
    pid_t boot(const std::string &out, const std::string &mode, long n)
    {
        mkdir(out.c_str(), 0755);
        pid_t p = spawn({kernel, "mem=128M", "rootfstype=hostfs", "rootflags=/", "rw",
                         "init=" MDCOM_UML_GUEST, "virtio_uml.device=" + dir + "/vu.sock:7",
                         "con=null", "con0=null,fd:1", "ssl=null", "mdcom_out=" + out,
                         "mdcom_mode=" + mode, "mdcom_n=" + std::to_string(n)},
                        out + "/console.log");
        children.push_back(p);
        return p;
    }
};

TEST_F(Uml, EchoNameServiceDeviceRestart)
{
    const std::string out1 = dir + "/boot1", out2 = dir + "/boot2";
    const std::string sock = dir + "/vu.sock";
    pid_t dev = -1, uml = -1;
    bool ready = false;
    std::string glog, dlog = "device1.log";
    /* Unedited, UML runs virtio callbacks in interrupt context, where
     * virtio_rpmsg_bus takes mutexes and registers the channel of a name
     * service announcement: an announcement landing while the booting kernel
     * registers drivers slept there ("BUG: scheduling while atomic") or hung
     * UML silently (no init after 600 s, on a loaded host). The kernel is
     * built with tests/kernel/uml_virtio_edit.py, which moves the callbacks
     * to a workqueue as real remoteproc hosts do. Should a boot still crash
     * or hang before init ran (the kernel's, before any test step), it is
     * retried once, and said so loudly. */
    std::string why;
    for (int attempt = 1; attempt <= 2 && !ready; attempt++) {
        dlog = attempt == 1 ? "device1.log" : "device1-retry.log";
        if (attempt == 2) {
            printf("*** boot 1 %s: retrying once ***\n", why.c_str());
            kill(dev, SIGKILL);
            wait_exit(uml, 1000);
            wait_exit(dev, 1000);
            (void)!system(("mv " + out1 + " " + out1 + "-crashed").c_str());
        }
        dev = device(dlog);
        ASSERT_GT(dev, 0);
        ASSERT_TRUE(wait_for_text(dir + "/" + dlog, "listening", 5000, dev));
        uml = boot(out1, "full", 10000);
        ASSERT_GT(uml, 0);
        /* init writes its first line within a second when all is well */
        bool init =
            wait_for_text(out1 + "/guest.log", "INFO mode", 120000, uml, out1 + "/console.log");
        ready = init && wait_for_text(out1 + "/guest.log", "READY_FOR_KILL", 600000, uml,
                                      out1 + "/console.log");
        glog = slurp(out1 + "/guest.log");
        std::string crash = crash_line(slurp(out1 + "/console.log"));
        bool hung = !init && kill(uml, 0) == 0; /* still there (wait_for_text reaps an exit) */
        if (ready || !glog.empty() || (crash.empty() && !hung))
            break; /* reached the kill step, failed in a test step, or exited: no retry */
        why = crash.empty() ? "hung in the kernel before init ran (no init line after 120 s)"
                            : "crashed in the kernel before init ran (" + crash + ")";
    }
    if (!ready) {
        kill(dev, SIGKILL);
        wait_exit(uml, 1000);
        wait_exit(dev, 1000);
        FAIL() << "guest did not reach the kill step"
               << (why.empty() ? "" : " (" + why + ", twice)") << ":\n"
               << glog << "\nconsole:\n"
               << slurp(out1 + "/console.log") << "\ndevice:\n"
               << slurp(dir + "/" + dlog);
    }
    /* the device side dies without any goodbye, and a new one takes its place */
    kill(dev, SIGKILL);
    wait_exit(dev, 5000);
    pid_t dev2 = device("device2.log");
    ASSERT_GT(dev2, 0);
    int urc = wait_exit(uml, 120000);
    glog = slurp(out1 + "/guest.log");
    std::string dev1log = slurp(dir + "/" + dlog);
    EXPECT_EQ(urc, 0) << "UML exit";
    EXPECT_FALSE(contains(glog, "FAIL")) << glog;
    expect_vector_registers(glog, slurp(out1 + "/console.log"));
    EXPECT_TRUE(contains(glog, "DONE failures=0")) << glog;
    EXPECT_TRUE(contains(glog, "OK echo 10000 messages")) << glog;
    EXPECT_TRUE(contains(glog, "OK name service remote->kernel")) << glog;
    EXPECT_TRUE(contains(glog, "OK name service kernel->remote")) << glog;
    EXPECT_TRUE(contains(glog, "OK device loss")) << glog;
    EXPECT_TRUE(contains(dev1log, "ns create rpmsg-raw addr 0x500")) << dev1log;
    EXPECT_TRUE(contains(dev1log, "ns destroy rpmsg-raw addr 0x500")) << dev1log;
    /* endpoints made with RPMSG_CREATE_EPT_IOCTL are never announced */
    EXPECT_FALSE(contains(dev1log, "ns create mdcom-")) << dev1log;
    EXPECT_TRUE(contains(glog, "OK the device echoed by copy")) << glog;
    EXPECT_TRUE(contains(glog, "OK 4 streams at once")) << glog;
    EXPECT_TRUE(contains(glog, "OK TX ring full")) << glog;
    EXPECT_TRUE(contains(glog, "OK malformed from the kernel")) << glog;
    EXPECT_TRUE(contains(glog, "OK malformed from mdcom")) << glog;
    EXPECT_TRUE(contains(glog, "OK same-name binding")) << glog;
    EXPECT_TRUE(contains(glog, "OK two channels named rpmsg-raw both answered")) << glog;
    /* the kernel's destroy announcement unbound the endpoint again */
    EXPECT_TRUE(contains(dev1log, "same-name endpoint 0x440: bound to 0x500")) << dev1log;
    EXPECT_TRUE(contains(dev1log, "same-name endpoint 0x440: unbound")) << dev1log;
    /* the kernel log of every step without malformed input is clean ... */
    for (const char *part : {"start", "streams", "before-bad", "end"})
        expect_clean_log(
            slurp(out1 + "/dmesg-" + part + ".txt"),
            ("kernel log while the device was alive (" + std::string(part) + ")").c_str());
    /* ... and with it, the kernel complains as its source says and no more */
    std::string badk = slurp(out1 + "/dmesg-badk.txt"), bad = slurp(out1 + "/dmesg-bad.txt");
    EXPECT_TRUE(contains(badk, "message is too big (497)")) << badk;
    for (const std::string &l : {badk, bad})
        for (const char *worse :
             {"WARNING:", "BUG:", "Oops", "Kernel panic", "virtqueue_add", "no used buffer"})
            EXPECT_FALSE(contains(l, worse))
                << "'" << worse << "' in the kernel log of a malformed step:\n"
                << l;
    EXPECT_TRUE(contains(bad, "malformed ns msg (10)")) << bad;
    EXPECT_TRUE(contains(bad, "msg received with no recipient")) << bad;
    size_t big = 0;
    for (size_t at = bad.find("inbound msg too big"); at != std::string::npos;
         at = bad.find("inbound msg too big", at + 1))
        big++;
    EXPECT_EQ(2u, big) << bad;
    printf("kernel log of mdcom's malformed input:\n%s", bad.c_str());
    EXPECT_TRUE(contains(slurp(out1 + "/dmesg-run.txt"),
                         "virtio_uml: virtqueue callbacks in process context"))
        << "kernel built without tests/kernel/uml_virtio_edit.py?";
    /* after the kill, virtio_uml warns (its call pipes reach EOF: "read
     * returned 0"; removing the device, its vhost-user requests fail on the
     * dead socket) and nothing else may complain */
    std::string klog = slurp(out1 + "/dmesg-kill.txt");
    for (const char *bad : {"BUG:", "Oops", "Kernel panic"})
        EXPECT_FALSE(contains(klog, bad)) << "kernel log after the device was killed:\n" << klog;
    std::istringstream lines(klog);
    int warnings = 0;
    for (std::string line; std::getline(lines, line);)
        if (contains(line, "WARNING:")) {
            warnings++;
            EXPECT_TRUE(contains(line, "arch/um/drivers/virtio_uml.c")) << line;
        }
    printf("kernel warnings after the kill (all in virtio_uml.c): %d\n", warnings);
    /* the kernel never reconnects: the restarted device saw no front-end */
    EXPECT_FALSE(contains(slurp(dir + "/device2.log"), "front-end connected"));
    printf("guest (boot 1):\n%s", glog.c_str());

    /* boot 2: a new kernel instance meets the restarted device */
    uml = boot(out2, "quick", 1000);
    ASSERT_GT(uml, 0);
    urc = wait_exit(uml, 300000);
    std::string glog2 = slurp(out2 + "/guest.log");
    EXPECT_EQ(urc, 0);
    EXPECT_TRUE(contains(glog2, "OK echo 1000 messages")) << glog2 << slurp(out2 + "/console.log");
    EXPECT_TRUE(contains(glog2, "DONE failures=0")) << glog2;
    expect_vector_registers(glog2, slurp(out2 + "/console.log"));
    expect_clean_log(slurp(out2 + "/dmesg-run.txt"), "kernel log of boot 2");
    wait_exit(dev2, 10000);
    printf("guest (boot 2):\n%s", glog2.c_str());
}

} // namespace
