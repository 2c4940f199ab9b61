/* SPDX-License-Identifier: BSD-3-Clause */
// an521_qemu.h - QEMU mps2-an521 with one image per Cortex-M33 for the tests
// of this directory (test_qemu_an521.cpp, test_qemu_an521_rtos.cpp): CPU0's
// image is the firmware of the launcher (harness/qemu-m4, its console UART0),
// CPU1's is loaded with -device loader,cpu-num=1 (its console UART1, a file),
// -smp 2 (multi-threaded TCG: the vCPUs run in parallel host threads). The
// region is the PSRAM at 0x80000000, mapped from the launcher's file, so this
// process attaches to it as a further domain once CPU0 printed READY.
#ifndef MDCOM_TESTS_AN521_QEMU_H
#define MDCOM_TESTS_AN521_QEMU_H

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "mdcom/mdcom.h"
#include "qemu_m4.h"
#include "qemu_results.h"

struct An521Qemu {
    mdcom_qemu q{};
    mdcom_qemu_opts o{};
    std::string loader, log1;
    const char *extra[7] = {};
    std::string console, console1;              // CPU0's and CPU1's output
    std::map<std::string, std::string> results; // "RESULT <name> <rest>" of CPU0: name -> rest
    int exit_status = -1;
};

// Start both cores and wait for CPU0's READY; "" or what failed. On success
// MDCOM_SHM_DIR names the launcher's directory (the region file).
inline std::string an521_launch(An521Qemu &a, const char *fw0, const char *fw1, const char *region)
{
    char err[256] = "";
    a.o.firmware = fw0;
    a.o.region_name = region;
    a.o.machine = "mps2-an521";
    a.o.icount_shift = -1;
    a.o.ready_timeout_ns = 60000000000ll;
    if (mdcom_qemu_prepare(&a.q, &a.o, err, sizeof(err)))
        return err;
    a.loader = std::string("loader,file=") + fw1 + ",cpu-num=1";
    a.log1 = std::string("file:") + a.q.dir + "/cpu1.log";
    const char *extra[] = {"-smp",         "2",    "-device", a.loader.c_str(), "-serial",
                           a.log1.c_str(), nullptr};
    for (int i = 0; i < 7; i++)
        a.extra[i] = extra[i];
    a.o.extra = a.extra;
    int r = mdcom_qemu_launch(&a.q, &a.o, err, sizeof(err));
    if (!r)
        r = mdcom_qemu_wait_ready(&a.q, a.o.ready_timeout_ns, err, sizeof(err));
    if (r) {
        mdcom_qemu_stop(&a.q);
        return err;
    }
    setenv("MDCOM_SHM_DIR", a.q.dir, 1);
    return "";
}

// Wait for CPU0's image to end QEMU; false after timeout_ns.
inline bool an521_wait(An521Qemu &a, int64_t timeout_ns)
{
    bool ok = mdcom_qemu_wait_exit(&a.q, timeout_ns) == 0;
    a.exit_status = a.q.exit_status;
    return ok;
}

// After an521_wait: both consoles (printed), CPU0's RESULT lines; QEMU's
// directory is removed.
inline void an521_collect(An521Qemu &a)
{
    auto slurp = [](const std::string &path) {
        std::ifstream f(path);
        std::stringstream s;
        s << f.rdbuf();
        return s.str();
    };
    a.console = slurp(a.q.console_path);
    a.console1 = slurp(std::string(a.q.dir) + "/cpu1.log");
    unlink((std::string(a.q.dir) + "/cpu1.log").c_str());
    mdcom_qemu_stop(&a.q);
    a.results = qemu_results(a.console);
    std::printf("--- CPU0 console\n%s--- CPU1 console\n%s---\n", a.console.c_str(),
                a.console1.c_str());
}

// One run: launch, attach this process as domain of cfg, run linux_side on
// that attachment while the firmware runs, wait for QEMU to end, collect.
// "" or what went wrong (the consoles are collected whenever QEMU started).
template <class F>
std::string an521_run(An521Qemu &a, const char *fw0, const char *fw1, const mdcom_config *cfg,
                      uint32_t domain, F linux_side)
{
    std::string err = an521_launch(a, fw0, fw1, cfg->region_name);
    if (!err.empty())
        return err;
    mdcom_t *m = nullptr;
    mdcom_init_opts io{};
    char ierr[160] = "";
    io.errbuf = ierr;
    io.errbuf_len = sizeof(ierr);
    io.attach_timeout_ns = 10000000000ll;
    if (mdcom_init(&m, cfg, domain, &io))
        err = std::string("mdcom_init linux: ") + ierr;
    else
        linux_side(m);
    if (!an521_wait(a, 240000000000ll))
        err += " QEMU did not exit within 240 s";
    if (m)
        mdcom_term(m);
    an521_collect(a);
    return err;
}

// A test binary's one run (its tests share it): the Linux side's own
// record S, QEMU's outcome, and what kept the run from completing.
template <class S>
struct An521Run {
    bool ran = false;
    std::string setup_error;
    S ls;
    An521Qemu a;
};

// an521_run once per binary: the first test that asks runs it.
template <class S, class F>
void an521_run_once(An521Run<S> &run, const char *fw0, const char *fw1, const mdcom_config *cfg,
                    uint32_t domain, F linux_side)
{
    if (run.ran)
        return;
    run.ran = true;
    run.setup_error =
        an521_run(run.a, fw0, fw1, cfg, domain, [&](mdcom_t *m) { linux_side(m, &run.ls); });
}

// The RESULT lines of a run, for the tests' assertions.
struct An521Results {
    const An521Qemu &a;
    std::string res(const char *name) const
    {
        auto it = a.results.find(name);
        return it == a.results.end() ? std::string("MISSING") : it->second;
    }
    bool passed(const char *name) const { return res(name).rfind("PASS", 0) == 0; }
};

// The value of key=<n> in a RESULT line (-1: none).
inline long an521_field(const std::string &res, const char *key)
{
    std::string k = std::string(" ") + key + "=";
    auto p = (" " + res).find(k);
    return p == std::string::npos ? -1 : std::strtol(res.c_str() + p + k.size() - 1, nullptr, 10);
}

#endif // MDCOM_TESTS_AN521_QEMU_H
