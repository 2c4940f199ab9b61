/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_linux.c - the Linux port of libmdcom.
 *
 *   region    a file under /dev/shm (or $MDCOM_SHM_DIR), created by the master
 *             with O_EXCL and mode 0600 (or the configured mode/group), never
 *             followed through a symlink, its pages allocated at creation
 *             (posix_fallocate: a full shm directory is -ENOSPC at init, not
 *             a SIGBUS at the first touch of a block), mapped MAP_SHARED.
 *             A file shrunk under a live mapping (ftruncate by any process of
 *             the owner) raises SIGBUS at the next touch of a lost page: the
 *             port's SIGBUS handler replaces the whole mapping with zero pages,
 *             so the faulting access completes, every later call sees an
 *             empty header (-ECONNRESET), and the process lives on to detach
 *             and attach again. Faults outside mdcom regions go to the
 *             handler that was there before (or the default action).
 *   doorbell  futex(2) on the shared word (not FUTEX_PRIVATE: other processes)
 *   lock      the core's portable atomic owner-word lock
 *   clock     CLOCK_MONOTONIC
 *   cache     coherent: no hooks
 *   process   pid + start time from /proc/<pid>/stat (changes when a pid is reused),
 *             and a liveness lock per process entry: an OFD write lock on one
 *             byte (LX_SLOT_LOCK_BASE + slot) of the region file, taken through
 *             the attachment's own descriptor and dropped by the kernel when
 *             the process dies. A live entry whose lock nobody holds was
 *             written into the region, not claimed (slot_lock).
 *   failures  a master whose open fails after it created the file leaves it
 *             as a marker: no permission bits and 1 to LX_FAIL_MAX bytes, its
 *             size the errno, which a remote returns at once instead of
 *             waiting for a region that will not come. The next master
 *             replaces it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/mdcom.h"
#include "mdcom/platform.h"

static uint64_t lx_now_ns(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void lx_relax(void *ctx)
{
    (void)ctx;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

static void sleep_ns(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------- */
/* SIGBUS recovery                                                    */
/* ---------------------------------------------------------------- */

#define LX_MAX_MAPS 64 /* mapped regions per process (instances x remaps) */

/* Mapped regions, read by the signal handler: lock-free slots. A slot is
 * claimed by CAS of its base from 0; size is written before base is
 * published (release) and the handler reads base first (acquire). */
static struct lx_map {
    _Atomic uintptr_t base;
    _Atomic size_t size;
    _Atomic int fd; /* the descriptor mapped (region_moved, slot_lock) */
} lx_maps[LX_MAX_MAPS];

static struct sigaction lx_old_bus;
static atomic_int lx_bus_installed; /* 0 no, 1 installing, 2 yes */

static void *lx_raw_mmap_anon_fixed(void *addr, size_t len)
{
    /* the raw system call: async-signal-safe, and not a sanitizer's wrapper */
#ifdef SYS_mmap2
    return (void *)syscall(SYS_mmap2, addr, len, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
#else
    return (void *)syscall(SYS_mmap, addr, len, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
#endif
}

static void lx_sigbus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    int i, saved = errno;
    for (i = 0; i < LX_MAX_MAPS; i++) {
        /* acquire: size is complete for a base we see */
        uintptr_t b = atomic_load_explicit(&lx_maps[i].base, memory_order_acquire);
        size_t n = atomic_load_explicit(&lx_maps[i].size, memory_order_relaxed);
        if (b && a >= b && a - b < n) {
            /* the region's file lost this page: from now on this process
             * sees zeros there (an empty header: -ECONNRESET), never a fault */
            lx_raw_mmap_anon_fixed((void *)b, n);
            errno = saved;
            return;
        }
    }
    errno = saved;
    /* not ours: what was there before */
    if (lx_old_bus.sa_flags & SA_SIGINFO) {
        if (lx_old_bus.sa_sigaction) {
            lx_old_bus.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (lx_old_bus.sa_handler != SIG_DFL && lx_old_bus.sa_handler != SIG_IGN) {
        lx_old_bus.sa_handler(sig);
        return;
    }
    /* default action: restore it; the access faults again and ends us */
    signal(SIGBUS, SIG_DFL);
}

static void lx_bus_install(void)
{
    int z = 0;
    struct sigaction sa;
    if (atomic_load_explicit(&lx_bus_installed, memory_order_acquire) == 2 ||
        !atomic_compare_exchange_strong(&lx_bus_installed, &z, 1)) {
        while (atomic_load_explicit(&lx_bus_installed, memory_order_acquire) != 2)
            lx_relax(NULL);
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = lx_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &lx_old_bus);
    /* release: lx_old_bus is complete before anyone sees "installed" */
    atomic_store_explicit(&lx_bus_installed, 2, memory_order_release);
}

static void lx_map_add(void *base, size_t size, int fd)
{
    int i;
    lx_bus_install();
    for (i = 0; i < LX_MAX_MAPS; i++) {
        uintptr_t z = 0;
        if (atomic_load_explicit(&lx_maps[i].base, memory_order_relaxed) != 0)
            continue;
        atomic_store_explicit(&lx_maps[i].size, size, memory_order_relaxed);
        atomic_store_explicit(&lx_maps[i].fd, fd, memory_order_relaxed);
        /* release: size before base, for the handler */
        if (atomic_compare_exchange_strong_explicit(&lx_maps[i].base, &z, (uintptr_t)base,
                                                    memory_order_release, memory_order_relaxed))
            return;
    }
    /* more live mappings than slots: this one is unprotected (as before) */
}

static void lx_map_del(void *base)
{
    int i;
    for (i = 0; i < LX_MAX_MAPS; i++) {
        uintptr_t b = (uintptr_t)base;
        /* relaxed: the unmap that follows is ours; no data is published */
        if (atomic_compare_exchange_strong_explicit(&lx_maps[i].base, &b, 0, memory_order_relaxed,
                                                    memory_order_relaxed))
            return;
    }
}

/* 1 when map is a mapping of a region file made by this port (its handle
 * the descriptor mapped): the tables that replace region_open (a /dev/mem
 * carveout, region_soc.c) keep this port's other hooks, with handles that
 * are no descriptors. */
static int lx_map_is_ours(const mdcom_region_map *map)
{
    int i;
    for (i = 0; i < LX_MAX_MAPS; i++)
        /* relaxed: our own earlier store (lx_map_add) of this mapping */
        if (map->base &&
            atomic_load_explicit(&lx_maps[i].base, memory_order_relaxed) == (uintptr_t)map->base)
            return map->handle >= 0 &&
                   atomic_load_explicit(&lx_maps[i].fd, memory_order_relaxed) == (int)map->handle;
    return 0;
}

static int region_path(const char *name, char *buf, size_t cap)
{
    const char *dir = getenv("MDCOM_SHM_DIR");
    int n;
    if (!dir || !*dir)
        dir = "/dev/shm";
    n = snprintf(buf, cap, "%s/%s", dir, name);
    return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

static int map_fd(int fd, uint32_t size, mdcom_region_map *out)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -errno;
    out->base = p;
    out->size = size;
    out->handle = fd;
    lx_map_add(p, size, fd);
    return 0;
}

/* The marker of a master whose open failed: a regular file with no
 * permission bits (a region is never so: a master sets its mode first) of
 * 1 to LX_FAIL_MAX bytes (a region is never smaller than its 256-byte
 * header), its size the errno (every Linux errno fits). Neither its mode
 * nor its size needs space, even on a full shm directory. */
#define LX_FAIL_MAX 255

/* A master's open failed with err (negative) after it created the file
 * (fd): the file becomes the marker, or, when even that fails, it is
 * removed. */
static int lx_created_failed(int fd, const char *path, int err)
{
    if (err >= 0 || -err > LX_FAIL_MAX || fchmod(fd, 0) != 0 || ftruncate(fd, (off_t)-err) != 0)
        unlink(path);
    close(fd);
    return err;
}

/* The error a marker at path records (negative), or 0 when path is no
 * marker of ours (this user's, or the configured group's). */
static int lx_marker(const char *path, int32_t group)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777u) != 0 ||
        st.st_size <= 0 || st.st_size > LX_FAIL_MAX ||
        (st.st_uid != geteuid() && !(group >= 0 && st.st_gid == (gid_t)group)))
        return 0;
    return -(int)st.st_size;
}

static int lx_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                          int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    char path[PATH_MAX];
    struct stat st;
    int fd, r;
    (void)ctx;
    if ((r = region_path(name, path, sizeof(path))) != 0)
        return r;
    if (mode & 0007u)
        return -EINVAL; /* never world-accessible */
    if (group >= 0)
        mode |= 0060u;

    if (flags & MDCOM_REGION_CREATE) {
        int created;
        /* an earlier master's marker (below) gives way to this attempt */
        if (lx_marker(path, -1) != 0)
            unlink(path);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        created = fd >= 0;
        if (fd < 0 && errno == EEXIST) {
            /* a stale region (crashed or restarted master): re-use it only if
             * it is a regular file that we own */
            fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                return -errno;
            if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                return -EINVAL;
            }
            if (st.st_uid != geteuid()) {
                close(fd);
                return -EPERM;
            }
        } else if (fd < 0) {
            return -errno;
        }
        /* umask may have removed bits; a stale file may have had others */
        if (fchmod(fd, (mode_t)mode) != 0 ||
            (group >= 0 && fchown(fd, (uid_t)-1, (gid_t)group) != 0) || fstat(fd, &st) != 0) {
            r = -errno;
            goto fail_master;
        }
        /* grow only: shrinking would fault processes still mapping a stale,
         * larger region; the core checks what it finds there */
        if ((uint64_t)st.st_size < size && ftruncate(fd, (off_t)size) != 0) {
            r = -errno;
            goto fail_master;
        }
        if ((uint64_t)st.st_size > 0xffffffffull) {
            r = -EFBIG;
            goto fail_master;
        }
        /* back every page now: a full shm directory is an error here, not a
         * SIGBUS when a block is first touched (tmpfs files are sparse) */
        r = posix_fallocate(fd, 0,
                            (off_t)((uint64_t)st.st_size > size ? (uint64_t)st.st_size : size));
        if (r != 0 && r != EOPNOTSUPP && r != EINVAL) {
            r = -r;
            goto fail_master;
        }
        r = map_fd(fd, (uint64_t)st.st_size > size ? (uint32_t)st.st_size : size, out);
        if (r)
            goto fail_master;
        return 0;
    fail_master:
        /* a file we created is ours to mark (its remotes learn why at
         * once); a stale one we re-used may serve a live system: left alone */
        if (created)
            return lx_created_failed(fd, path, r);
        close(fd);
        return r;
    }

    /* remote: wait for the master to create the file and give it its size */
    {
        uint64_t start = lx_now_ns(NULL);
        for (;;) {
            /* the master failed to create the region: its error, at once */
            if ((r = lx_marker(path, group)) != 0)
                return r;
            fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0) {
                if (fstat(fd, &st) != 0) {
                    r = -errno;
                    close(fd);
                    return r;
                }
                if (!S_ISREG(st.st_mode)) {
                    close(fd);
                    return -EINVAL;
                }
                /* a master of ours made it: our uid, or the configured
                 * group, and never world-accessible. Anything else is a
                 * file somebody else planted at the name (squatting it in a
                 * world-writable directory would make them our master). */
                if ((st.st_mode & 0007u) ||
                    (st.st_uid != geteuid() && !(group >= 0 && st.st_gid == (gid_t)group))) {
                    close(fd);
                    return -EPERM;
                }
                if ((uint64_t)st.st_size >= size && (uint64_t)st.st_size <= 0xffffffffull) {
                    r = map_fd(fd, (uint32_t)st.st_size, out);
                    if (r)
                        close(fd);
                    return r;
                }
                if ((uint64_t)st.st_size > 0xffffffffull) {
                    close(fd);
                    return -EFBIG;
                }
                close(fd);
            } else if (errno != ENOENT) {
                return -errno;
            }
            {
                /* poll for the file every 1 ms, never past the deadline */
                uint64_t waited = lx_now_ns(NULL) - start, nap = 1000000;
                if (timeout_ns >= 0 && waited >= (uint64_t)timeout_ns)
                    return -ETIMEDOUT;
                if (timeout_ns >= 0 && (uint64_t)timeout_ns - waited < nap)
                    nap = (uint64_t)timeout_ns - waited;
                sleep_ns((long)nap);
            }
        }
    }
}

static void lx_region_close(void *ctx, mdcom_region_map *map, int remove)
{
    (void)ctx;
    if (map->base) {
        lx_map_del(map->base);
        munmap(map->base, map->size);
    }
    if (map->handle > 0) {
        if (remove) {
            /* unlink by the fd's path only if it is still our file */
            char link[64], path[PATH_MAX];
            ssize_t n;
            snprintf(link, sizeof(link), "/proc/self/fd/%d", (int)map->handle);
            n = readlink(link, path, sizeof(path) - 1);
            if (n > 0 && n < (ssize_t)sizeof(path)) {
                path[n] = '\0';
                unlink(path);
            }
        }
        close((int)map->handle);
    }
    map->base = NULL;
    map->size = 0;
    map->handle = -1;
}

static int lx_region_moved(void *ctx, const char *name, const mdcom_region_map *map)
{
    char path[PATH_MAX];
    struct stat mine, now;
    (void)ctx;
    if (!lx_map_is_ours(map))
        return -ENOSYS;
    if (region_path(name, path, sizeof(path)) != 0 || fstat((int)map->handle, &mine) != 0)
        return -EIO;
    if (mine.st_nlink == 0 || (uint64_t)mine.st_size < map->size)
        return 1; /* unlinked (a master's term), or shrunk under us */
    if (lstat(path, &now) != 0)
        return errno == ENOENT ? 1 : -errno;
    return now.st_ino != mine.st_ino || now.st_dev != mine.st_dev;
}

/* Liveness locks: byte LX_SLOT_LOCK_BASE + slot of the region file, far
 * from its data (advisory locks do not affect reads, writes or mappings)
 * and below 2^31 (a 32-bit off_t reaches it). OFD locks belong to the open
 * file description: each attachment's own open, so attachments of one
 * process are told apart, and all of a process' go when it dies. */
#define LX_SLOT_LOCK_BASE 0x7fff0000

static int lx_slot_lock(void *ctx, const mdcom_region_map *map, uint32_t slot, uint32_t op)
{
    struct flock fl;
    int fd = (int)map->handle;
    (void)ctx;
    if (slot > 0xffffu || !lx_map_is_ours(map))
        return -ENOSYS;
    memset(&fl, 0, sizeof fl);
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)(LX_SLOT_LOCK_BASE + slot);
    fl.l_len = 1;
    if (op == MDCOM_SLOT_HELD) {
        fl.l_type = F_WRLCK;
        if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
            return errno == EINVAL ? -ENOSYS : -errno;
        /* our own description's locks never conflict: "none" (the core
         * never asks about an entry this attachment holds) */
        return fl.l_type != F_UNLCK;
    }
    fl.l_type = op == MDCOM_SLOT_TAKE ? F_WRLCK : F_UNLCK;
    if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
        return 0;
    if (errno == EAGAIN || errno == EACCES)
        return -EBUSY;
    return errno == EINVAL ? -ENOSYS : -errno; /* EINVAL: no OFD locks here */
}

static int lx_futex_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    struct timespec ts, *tp = NULL;
    long r;
    (void)ctx;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tp = &ts;
    }
    r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, tp, NULL, 0);
    if (r == 0 || errno == EAGAIN)
        return 0;
    if (errno == ETIMEDOUT)
        return -ETIMEDOUT;
    if (errno == EINTR)
        return -EINTR;
    return -errno;
}

static void lx_futex_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    (void)ctx;
    (void)chan;
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Field 3 (state) and 22 (starttime) of /proc/<pid>/stat. */
static int read_stat(uint32_t pid, char *state, uint64_t *start)
{
    char path[64], buf[1024];
    const char *p;
    ssize_t n;
    int fd, field;
    snprintf(path, sizeof(path), "/proc/%u/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the command name may contain spaces and ')' */
    if (!p || p[1] != ' ')
        return -EIO;
    p += 2;
    *state = *p;
    for (field = 3; field < 22 && *p; p++)
        if (*p == ' ')
            field++;
    if (field != 22)
        return -EIO;
    *start = strtoull(p, NULL, 10);
    return 0;
}

/* The token of a process: its start time + 1, so that 0 is never a token
 * (a zeroed or forged entry names nobody alive). */
static uint32_t lx_token(uint64_t start)
{
    uint32_t t = (uint32_t)start + 1u;
    /* never 0 (no process) nor the wildcard MDCOM_TOKEN_ANY */
    return t && t != MDCOM_TOKEN_ANY ? t : 1u;
}

static int lx_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    char st;
    uint64_t start;
    int r;
    (void)ctx;
    *pid = (uint32_t)getpid();
    r = read_stat(*pid, &st, &start);
    if (r)
        return r; /* no start time: no identity that pid reuse cannot fake */
    *token = lx_token(start);
    return 0;
}

static int lx_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    char st = 0;        /* read_stat sets both on success (the analyzer */
    uint64_t start = 0; /* cannot see that) */
    (void)ctx;
    if (pid == 0)
        return 0;
    /* Linux pids stay below PID_MAX_LIMIT (2^22): a foreign pid
     * (MDCOM_PID_IS_FOREIGN) or any other larger id is a process of another
     * kind of domain. Its liveness is not ours to judge: unknown, which
     * counts as alive (a platform with a link to it may know better). */
    if (MDCOM_PID_IS_FOREIGN(pid) || pid >= 4194304u)
        return -ENOSYS;
    if (token == 0)
        return 0; /* a Linux process' token is never 0 (lx_token) */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    if (read_stat(pid, &st, &start) != 0)
        return kill((pid_t)pid, 0) == 0 || errno == EPERM ? 1 : 0;
    if (st == 'Z' || st == 'X')
        return 0; /* exited, not yet reaped */
    return token == MDCOM_TOKEN_ANY || lx_token(start) == token;
}

static const mdcom_platform linux_platform = {
    .name = "linux",
    .ctx = NULL,
    .region_open = lx_region_open,
    .region_close = lx_region_close,
    .doorbell = {.wait = lx_futex_wait, .ring = lx_futex_ring, .ctx = NULL},
    .lock_try = NULL,
    .lock_release = NULL,
    .now_ns = lx_now_ns,
    .relax = lx_relax,
    .cache_clean = NULL,
    .cache_invalidate = NULL,
    .proc_self = lx_proc_self,
    .proc_alive = lx_proc_alive,
    .region_moved = lx_region_moved,
    .slot_lock = lx_slot_lock,
};

const mdcom_platform *mdcom_platform_linux(void) { return &linux_platform; }
