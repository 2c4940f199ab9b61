/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rel_util.h - helpers of the reliability tests (tests/reliability, tests/soak):
 * running a program and capturing its output, a read-only view of a region
 * file through the core's own layout, percentiles, environment knobs.
 * Header only, C++17; builds on tests/mp/mp_util.h.
 */
#ifndef MDCOM_TESTS_REL_UTIL_H
#define MDCOM_TESTS_REL_UTIL_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mdcom/wire.h"
#include "mdcom/mdcom.h"
#include "mp/mp_util.h"
#include "support/common.h"

namespace rel {

/* In a child process: a fresh mount namespace (through a user namespace
 * where this uid may not make one) whose shm directory (MDCOM_SHM_DIR) is a
 * 256 KiB tmpfs mounted at dir (a mkdtemp template, rewritten). 0 done, 77
 * this machine allows no namespace or mount (the caller skips), -1 mkdtemp
 * failed. The caller unmounts and removes dir. */
inline int tiny_shm_namespace(char *dir)
{
    if (unshare(CLONE_NEWNS) != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return 77;
    mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
    if (!mkdtemp(dir))
        return -1;
    if (mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0) {
        rmdir(dir);
        return 77;
    }
    setenv("MDCOM_SHM_DIR", dir, 1);
    return 0;
}

/* An integer knob from the environment (long versions set them). */
inline uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 0) : dflt;
}

/* Result of running a program. */
struct RunResult {
    int status = -1; /* exit status, or -1 */
    int signal = 0;  /* terminating signal, or 0 */
    std::string out, err;
    std::string describe() const
    {
        return signal ? "killed by signal " + std::to_string(signal)
                      : "exit status " + std::to_string(status);
    }
};

inline std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/* Run argv with extra environment entries ("K=V"), stdout and stderr to
 * files, at most timeout_ns (then SIGKILL). Sanitizer findings abort, so they
 * show up as a signal rather than as an exit status. */
inline RunResult run(const std::vector<std::string> &argv, const std::vector<std::string> &env = {},
                     int64_t timeout_ns = 30 * mdt::kSec)
{
    RunResult rr;
    char outp[] = "/tmp/mdcom-rel-outXXXXXX", errp[] = "/tmp/mdcom-rel-errXXXXXX";
    int ofd = mkstemp(outp), efd = mkstemp(errp);
    if (ofd < 0 || efd < 0) {
        rr.err = "mkstemp failed";
        return rr;
    }
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        std::vector<char *> av;
        for (auto &a : argv)
            av.push_back(const_cast<char *>(a.c_str()));
        av.push_back(nullptr);
        dup2(ofd, 1);
        dup2(efd, 2);
        setenv("ASAN_OPTIONS", "abort_on_error=1:detect_leaks=1", 1);
        setenv("UBSAN_OPTIONS", "abort_on_error=1:print_stacktrace=1", 1);
        for (auto &e : env)
            putenv(const_cast<char *>(e.c_str()));
        execv(av[0], av.data());
        _exit(127);
    }
    int st = 0;
    uint64_t end = mdt::now_ns() + (uint64_t)timeout_ns;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (mdt::now_ns() >= end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            break;
        }
        mdt::sleep_ns(200000);
    }
    if (WIFEXITED(st))
        rr.status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        rr.signal = WTERMSIG(st);
    close(ofd);
    close(efd);
    rr.out = slurp(outp);
    rr.err = slurp(errp);
    unlink(outp);
    unlink(errp);
    return rr;
}

/* A mapping of a region file, and the layout of a config (support/common.h). */
using RegionView = tsup::RegionMap;
using Layout = tsup::Geometry;

/* Block accounting of one FIFO channel, read from the region. */
struct BlockCensus {
    uint32_t free = 0, alloc = 0, queued = 0, held = 0, invalid = 0;
    uint32_t dead_owned = 0; /* ALLOC/HELD by a slot whose process is gone or slot free */
};

/* alive(slot) -> bool */
template <class Alive>
BlockCensus census(const RegionView &v, const Layout &l, uint32_t ch, Alive alive)
{
    BlockCensus c;
    for (uint32_t id = 0; id < l.cl[ch].block_count; id++) {
        uint32_t w = v.word(l.bstate_off(ch, id));
        uint32_t st = MDCOM_BLK_STATE(w), owner = MDCOM_BLK_OWNER(w);
        if (MDCOM_BLK_SO(w) == MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0)) {
            c.free++;
        } else if (owner == 0 || owner > MDCOM_MAX_PROCS) {
            c.invalid++;
        } else if (st == MDCOM_BLK_QUEUED) {
            c.queued++;
        } else if (st == MDCOM_BLK_ALLOC || st == MDCOM_BLK_HELD) {
            (st == MDCOM_BLK_ALLOC ? c.alloc : c.held)++;
            if (!alive(owner - 1))
                c.dead_owned++;
        } else {
            c.invalid++;
        }
    }
    return c;
}

/* Percentile of a sample (sorted copy), q in [0, 1]. */
inline int64_t percentile(std::vector<int64_t> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t i = (size_t)(q * (double)(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

/* Resident set size of this process in KiB (from /proc/self/statm). */
inline long rss_kib()
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

} // namespace rel

#endif /* MDCOM_TESTS_REL_UTIL_H */
