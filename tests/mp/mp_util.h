/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mp_util.h - helpers for tests that use real processes and real shared memory:
 * forked children with a bounded wait and anonymous shared memory for test
 * bookkeeping; clocks, region names and the CRC-32 come from
 * support/common.h.
 *
 * Used by tests/mp and tests/conformance (header only, C++17).
 */
#ifndef MDCOM_TESTS_MP_UTIL_H
#define MDCOM_TESTS_MP_UTIL_H

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support/common.h"

namespace mdt {

using tsup::crc32;
using tsup::kMs;
using tsup::kSec;
using tsup::LoadFreeTimer;
using tsup::now_ns;
using tsup::region_exists;
using tsup::region_path;
using tsup::region_remove;
using tsup::run_delay_ns;
using tsup::sleep_ms;
using tsup::sleep_ns;
using tsup::unique_region;
using tsup::wait_until;

/* Anonymous MAP_SHARED memory visible to children forked afterwards. T must
 * be usable across processes (plain data, lock-free atomics). */
template <class T>
T *shared_new()
{
    void *p = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap(MAP_SHARED|MAP_ANONYMOUS)");
        abort();
    }
    return new (p) T();
}

template <class T>
void shared_delete(T *p)
{
    if (p) {
        p->~T();
        munmap(p, sizeof(T));
    }
}

template <class T>
struct Shared {
    T *p = shared_new<T>();
    Shared() = default;
    Shared(const Shared &) = delete;
    Shared &operator=(const Shared &) = delete;
    ~Shared() { shared_delete(p); }
    T *operator->() const { return p; }
    T &operator*() const { return *p; }
};

/* Report a failed check from inside a child process (stderr is unbuffered). */
inline void child_fail(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
inline void child_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "[child %ld] %s:%d: check failed: %s: %s\n", (long)getpid(), file, line, expr,
            msg);
}

/* In a child body (a callable returning int): fail the child with exit code 1. */
#define CHILD_CHECK(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ::mdt::child_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                             \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Forked children with bounded waits; whatever is still running when the
 * object dies (a failed assertion in the parent) is killed and reaped. */
class Children {
public:
    Children() = default;
    Children(const Children &) = delete;
    Children &operator=(const Children &) = delete;
    ~Children() { kill_all(); }

    /* Fork; the child runs body() and _exit()s with its return value
     * (0 = success). Returns the child's pid (or -1). */
    template <class F>
    pid_t spawn(F &&body)
    {
        fflush(nullptr); /* no duplicated buffered output */
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0) {
            /* die with the test (e.g. killed by ctest's timeout) */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(122);
            int rc = 120;
            try {
                rc = body();
            } catch (...) {
                fprintf(stderr, "[child %ld] uncaught exception\n", (long)getpid());
                rc = 121;
            }
            fflush(nullptr);
            _exit(rc);
        }
        if (pid > 0)
            live_.push_back(pid);
        return pid;
    }

    /* Wait for pid at most timeout_ns; a child still running then is killed
     * (SIGKILL) and reaped. Returns "" when it exited with status 0, else a
     * description of what happened. */
    std::string wait(pid_t pid, int64_t timeout_ns)
    {
        int st = 0;
        uint64_t end = now_ns() + (uint64_t)timeout_ns;
        for (;;) {
            pid_t r = waitpid(pid, &st, WNOHANG);
            if (r == pid)
                break;
            if (r < 0 && errno != EINTR) {
                forget(pid);
                return "waitpid(" + std::to_string(pid) + "): " + strerror(errno);
            }
            if (now_ns() >= end) {
                kill(pid, SIGKILL);
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
                }
                forget(pid);
                return "child " + std::to_string(pid) + " did not finish within " +
                       std::to_string(timeout_ns / kMs) + " ms (killed)";
            }
            sleep_ms(1);
        }
        forget(pid);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            return "";
        if (WIFEXITED(st))
            return "child " + std::to_string(pid) + " exited with status " +
                   std::to_string(WEXITSTATUS(st)) + " (see its stderr above)";
        if (WIFSIGNALED(st))
            return "child " + std::to_string(pid) + " killed by signal " +
                   std::to_string(WTERMSIG(st));
        return "child " + std::to_string(pid) + " ended oddly";
    }

    /* Mark pid as reaped by the caller (waitpid done elsewhere). */
    void forget(pid_t pid)
    {
        for (size_t i = 0; i < live_.size(); i++)
            if (live_[i] == pid) {
                live_.erase(live_.begin() + (long)i);
                return;
            }
    }

    void kill_all()
    {
        for (pid_t pid : live_) {
            int st;
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
        }
        live_.clear();
    }

private:
    std::vector<pid_t> live_;
};

} // namespace mdt

#endif /* MDCOM_TESTS_MP_UTIL_H */
