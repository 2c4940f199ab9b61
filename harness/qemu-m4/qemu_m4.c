/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qemu_m4.c - the QEMU launcher (qemu_m4.h).
 */
#define _GNU_SOURCE
#include "qemu_m4.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doorbell_mux.h"
#include "mdcom/wire.h" /* the wire format: header magic and state */

#define MAX_LIVE 16
static mdcom_qemu *volatile g_live[MAX_LIVE];

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000l};
    nanosleep(&ts, NULL);
}

/* code, with the message fmt in err (when given) */
static int fail(char *err, size_t n, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n)
        vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return code;
}

static const char *shm_base(void)
{
    const char *d = getenv("MDCOM_QEMU_SHM");
    return d && *d ? d : "/dev/shm";
}

static void reg_add(mdcom_qemu *q)
{
    int i;
    for (i = 0; i < MAX_LIVE; i++)
        if (!g_live[i]) {
            g_live[i] = q;
            return;
        }
}

static void reg_del(mdcom_qemu *q)
{
    int i;
    for (i = 0; i < MAX_LIVE; i++)
        if (g_live[i] == q)
            g_live[i] = NULL;
}

/* async-signal-safe: unlink + rmdir of what prepare created */
static void remove_files(mdcom_qemu *q)
{
    char p[MDCOM_QEMU_PATH_MAX + 16];
    size_t n;
    if (!q->dir[0])
        return;
    if (q->region_path[0])
        unlink(q->region_path);
    if (q->socket_path[0])
        unlink(q->socket_path);
    if (q->uart_path[0])
        unlink(q->uart_path);
    if (q->console_path[0])
        unlink(q->console_path);
    /* strlen/memcpy are not listed as async-signal-safe but are pure */
    n = strlen(q->dir); /* < MDCOM_QEMU_PATH_MAX: p has 16 more */
    memcpy(p, q->dir, n);
    memcpy(p + n, "/qemu.log", sizeof("/qemu.log"));
    unlink(p);
    rmdir(q->dir);
}

/* Remove directories of launchers that are gone (killed with SIGKILL). */
static void sweep_stale(void)
{
    const char *base = shm_base();
    DIR *d = opendir(base);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char dir[MDCOM_QEMU_PATH_MAX];
        struct stat st;
        long pid;
        DIR *sub;
        struct dirent *f;
        if (strncmp(e->d_name, "mdcom-qemu-", 11) != 0)
            continue;
        pid = strtol(e->d_name + 11, NULL, 10);
        if (pid <= 0 || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            continue;
        if (snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name) >= (int)sizeof(dir))
            continue;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
            continue;
        sub = opendir(dir);
        if (!sub)
            continue;
        while ((f = readdir(sub)) != NULL) {
            char p[2 * MDCOM_QEMU_PATH_MAX];
            if (f->d_name[0] == '.')
                continue;
            if (snprintf(p, sizeof(p), "%s/%s", dir, f->d_name) < (int)sizeof(p))
                unlink(p);
        }
        closedir(sub);
        rmdir(dir);
    }
    closedir(d);
}

int mdcom_qemu_prepare(mdcom_qemu *q, const mdcom_qemu_opts *o, char *err, size_t errlen)
{
    int fd;
    if (!q || !o || !o->firmware || !o->region_name || !*o->region_name ||
        strchr(o->region_name, '/'))
        return fail(err, errlen, -EINVAL, "qemu: firmware and a plain region name are required");
    memset(q, 0, sizeof(*q));
    if (access(o->firmware, R_OK) != 0)
        return fail(err, errlen, -ENOENT, "qemu: no firmware image %s", o->firmware);
    sweep_stale();
    if (snprintf(q->dir, sizeof(q->dir), "%s/mdcom-qemu-%ld-XXXXXX", shm_base(), (long)getpid()) >=
            (int)sizeof(q->dir) ||
        !mkdtemp(q->dir)) {
        int e = errno;
        q->dir[0] = '\0';
        return fail(err, errlen, -e, "qemu: cannot create a directory in %s: %s", shm_base(),
                    strerror(e));
    }
    if (snprintf(q->region_path, sizeof(q->region_path), "%s/%s", q->dir, o->region_name) >=
        (int)sizeof(q->region_path)) {
        rmdir(q->dir);
        return fail(err, errlen, -ENAMETOOLONG, "qemu: path too long");
    }
    if ((o->doorbell && snprintf(q->socket_path, sizeof(q->socket_path), "%s/doorbell.sock",
                                 q->dir) >= (int)sizeof(q->socket_path)) ||
        (!o->console && snprintf(q->console_path, sizeof(q->console_path), "%s/console.log",
                                 q->dir) >= (int)sizeof(q->console_path))) {
        rmdir(q->dir);
        return fail(err, errlen, -ENAMETOOLONG, "qemu: path too long");
    }
    if (o->doorbell == MDCOM_QEMU_DOORBELL_MUX &&
        snprintf(q->uart_path, sizeof(q->uart_path), "%s/uart1.sock", q->dir) >=
            (int)sizeof(q->uart_path)) {
        rmdir(q->dir);
        return fail(err, errlen, -ENAMETOOLONG, "qemu: path too long");
    }
    reg_add(q);
    if (o->doorbell == MDCOM_QEMU_DOORBELL_MUX) {
        mdcom_doorbell_mux *mux;
        /* clients may connect from now on; QEMU's socket comes at launch */
        int r = mdcom_doorbell_mux_start(&mux, q->socket_path, q->uart_path, 600000000000ll, err,
                                         errlen);
        if (r) {
            mdcom_qemu_stop(q);
            return r;
        }
        q->mux = mux;
    }
    fd = open(q->region_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, MDCOM_QEMU_REGION_SIZE) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        mdcom_qemu_stop(q);
        return fail(err, errlen, -e, "qemu: cannot create the region file: %s", strerror(e));
    }
    close(fd);
    return 0;
}

int mdcom_qemu_launch(mdcom_qemu *q, const mdcom_qemu_opts *o, char *err, size_t errlen)
{
    char machine[96], object[2 * MDCOM_QEMU_PATH_MAX], serial0[MDCOM_QEMU_PATH_MAX + 8],
        serial1[MDCOM_QEMU_PATH_MAX + 32], semi[64], icount[32], logp[MDCOM_QEMU_PATH_MAX + 16];
    const char *qemu = o->qemu ? o->qemu : getenv("MDCOM_QEMU");
    const char *argv[48];
    int n = 0, pfd[2], k;
    pid_t parent = getpid(), pid;
    if (!qemu || !*qemu)
        qemu = "qemu-system-arm";
    snprintf(machine, sizeof(machine), "%s,memory-backend=m",
             o->machine ? o->machine : "mps2-an386");
    snprintf(object, sizeof(object), "memory-backend-file,id=m,size=%u,mem-path=%s,share=on",
             MDCOM_QEMU_REGION_SIZE, q->region_path);
    if (q->console_path[0])
        snprintf(serial0, sizeof(serial0), "file:%s", q->console_path);
    else
        snprintf(serial0, sizeof(serial0), "stdio");
    snprintf(semi, sizeof(semi), "enable=on,target=native");
    if (o->icount_shift >= 0) {
        snprintf(semi, sizeof(semi), "enable=on,target=native,arg=fw,arg=shift=%d",
                 o->icount_shift);
        snprintf(icount, sizeof(icount), "shift=%d", o->icount_shift);
    }
    argv[n++] = qemu;
    argv[n++] = "-machine";
    argv[n++] = machine;
    argv[n++] = "-object";
    argv[n++] = object;
    argv[n++] = "-kernel";
    argv[n++] = o->firmware;
    argv[n++] = "-nographic";
    argv[n++] = "-monitor";
    argv[n++] = "none";
    argv[n++] = "-serial";
    argv[n++] = serial0;
    if (o->doorbell) {
        snprintf(serial1, sizeof(serial1), "unix:%s,server=on,wait=off",
                 q->uart_path[0] ? q->uart_path : q->socket_path);
        argv[n++] = "-serial";
        argv[n++] = serial1;
    }
    argv[n++] = "-semihosting-config";
    argv[n++] = semi;
    if (o->icount_shift >= 0) {
        argv[n++] = "-icount";
        argv[n++] = icount;
    } else {
        /* multi-threaded TCG. It does NOT make the guest's LDREX/STREX
         * atomic against the Linux processes that share the region: QEMU
         * marks translated code parallel (CF_PARALLEL: host CAS for STREX,
         * host fences for DMB) only when the machine can have more than
         * one vCPU, and mps2-an386 has one. STREX is then a load, compare
         * and unconditional store, so a host CAS can land in between (see
         * docs/reliability.md, formerly known gap 5: the two-vCPU mps2-an521 has it). icount needs single-threaded
         * TCG; the API-cost image takes no locks against Linux. */
        argv[n++] = "-accel";
        argv[n++] = "tcg,thread=multi";
    }
    for (k = 0; o->extra && o->extra[k] && k < 16; k++)
        argv[n++] = o->extra[k];
    argv[n] = NULL;
    snprintf(logp, sizeof(logp), "%s/qemu.log", q->dir);

    if (pipe2(pfd, O_CLOEXEC) != 0)
        return fail(err, errlen, -errno, "qemu: pipe: %s", strerror(errno));
    pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return fail(err, errlen, -errno, "qemu: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        int e, fd;
        setpgid(0, 0); /* a ^C at the terminal goes to us; we stop QEMU */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        fd = open("/dev/null", O_RDONLY);
        if (fd >= 0)
            dup2(fd, 0);
        if (q->console_path[0]) {
            fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0) {
                dup2(fd, 1);
                dup2(fd, 2);
            }
        }
        execvp(qemu, (char *const *)argv);
        e = errno;
        if (write(pfd[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    close(pfd[1]);
    {
        int e = 0;
        ssize_t r = read(pfd[0], &e, sizeof(e)); /* EOF: exec succeeded */
        close(pfd[0]);
        if (r == (ssize_t)sizeof(e)) {
            waitpid(pid, NULL, 0);
            return fail(err, errlen, e == ENOENT ? -ENOENT : -e, "qemu: cannot run %s: %s", qemu,
                        strerror(e));
        }
    }
    q->pid = pid;
    q->running = 1;
    return 0;
}

static int reap(mdcom_qemu *q, int options)
{
    int st;
    pid_t r;
    if (!q->running)
        return 1;
    do
        r = waitpid(q->pid, &st, options);
    while (r < 0 && errno == EINTR);
    if (r == q->pid || (r < 0 && errno == ECHILD)) {
        q->running = 0;
        q->exit_status = r < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return 1;
    }
    return 0;
}

int mdcom_qemu_wait_ready(mdcom_qemu *q, int64_t timeout_ns, char *err, size_t errlen)
{
    int64_t end;
    void *p;
    int fd, r = -ETIMEDOUT;
    if (timeout_ns == 0)
        timeout_ns = 30000000000ll;
    end = now_ns() + timeout_ns;
    fd = open(q->region_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, -errno, "qemu: region file: %s", strerror(errno));
    p = mmap(NULL, MDCOM_HDR_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail(err, errlen, -errno, "qemu: mmap: %s", strerror(errno));
    for (;;) {
        const mdcom_wire_hdr *h = (const mdcom_wire_hdr *)p;
        /* acquire: READY is published by the master with a release store */
        uint32_t st = atomic_load_explicit((mdcom_aword *)&h->state, memory_order_acquire);
        if (st == MDCOM_ST_READY && ((volatile const mdcom_wire_hdr *)h)->magic == MDCOM_MAGIC) {
            r = 0;
            break;
        }
        if (reap(q, WNOHANG)) {
            char tail[256];
            mdcom_qemu_console_tail(q, tail, sizeof(tail));
            r = fail(err, errlen, -ECHILD, "qemu: exited (status %d) before READY; console: %s",
                     q->exit_status, tail);
            break;
        }
        if (now_ns() >= end) {
            char tail[256];
            mdcom_qemu_console_tail(q, tail, sizeof(tail));
            r = fail(err, errlen, -ETIMEDOUT,
                     "qemu: the firmware did not format the region in "
                     "time; console: %s",
                     tail);
            break;
        }
        sleep_ms(1);
    }
    munmap(p, MDCOM_HDR_SIZE);
    return r;
}

int mdcom_qemu_start(mdcom_qemu *q, const mdcom_qemu_opts *o, char *err, size_t errlen)
{
    int r = mdcom_qemu_prepare(q, o, err, errlen);
    if (r)
        return r;
    r = mdcom_qemu_launch(q, o, err, errlen);
    if (r == 0 && o->ready_timeout_ns >= 0)
        r = mdcom_qemu_wait_ready(q, o->ready_timeout_ns, err, errlen);
    if (r)
        mdcom_qemu_stop(q);
    return r;
}

int mdcom_qemu_wait_exit(mdcom_qemu *q, int64_t timeout_ns)
{
    int64_t end = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
    for (;;) {
        if (reap(q, WNOHANG))
            return 0;
        if (now_ns() >= end)
            return -ETIMEDOUT;
        sleep_ms(2);
    }
}

int mdcom_qemu_kill(mdcom_qemu *q)
{
    if (!q->running)
        return -ESRCH;
    kill(q->pid, SIGKILL);
    reap(q, 0);
    return 0;
}

int mdcom_qemu_stop(mdcom_qemu *q)
{
    if (!q)
        return 0;
    if (q->running) {
        int i;
        kill(q->pid, SIGTERM);
        for (i = 0; i < 1000 && !reap(q, WNOHANG); i++)
            sleep_ms(2);
        if (q->running) {
            kill(q->pid, SIGKILL);
            reap(q, 0);
        }
    }
    if (q->mux) {
        mdcom_doorbell_mux_stop(q->mux);
        q->mux = NULL;
    }
    remove_files(q);
    reg_del(q);
    q->dir[0] = '\0';
    return 0;
}

static void on_signal(int sig)
{
    int i;
    for (i = 0; i < MAX_LIVE; i++) {
        mdcom_qemu *q = g_live[i];
        if (q) {
            if (q->running)
                kill(q->pid, SIGKILL);
            remove_files(q);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void at_exit(void)
{
    int i;
    for (i = 0; i < MAX_LIVE; i++)
        if (g_live[i])
            mdcom_qemu_stop(g_live[i]);
}

void mdcom_qemu_cleanup_on_signals(void)
{
    static int done;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    unsigned i;
    if (done)
        return;
    done = 1;
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    atexit(at_exit);
}

int mdcom_qemu_available(void)
{
    const char *qemu = getenv("MDCOM_QEMU");
    const char *path = getenv("PATH");
    char buf[4096];
    if (qemu && *qemu)
        return strchr(qemu, '/') ? access(qemu, X_OK) == 0 : 1;
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *c = strchr(path, ':');
        size_t l = c ? (size_t)(c - path) : strlen(path);
        if (l && l < sizeof(buf) - 20) {
            memcpy(buf, path, l);
            memcpy(buf + l, "/qemu-system-arm",
                   sizeof("/qemu-system-arm")); /* l < sizeof(buf) - 20 */
            if (access(buf, X_OK) == 0)
                return 1;
        }
        path += l + (c ? 1 : 0);
    }
    return 0;
}

void mdcom_qemu_console_tail(const mdcom_qemu *q, char *buf, size_t cap)
{
    char tmp[4096];
    ssize_t n;
    int fd;
    size_t i, start;
    if (!cap)
        return;
    buf[0] = '\0';
    if (!q->console_path[0])
        return;
    fd = open(q->console_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    n = read(fd, tmp, sizeof(tmp) - 1);
    close(fd);
    if (n <= 0)
        return;
    tmp[n] = '\0';
    start = (size_t)n + 1 > cap ? (size_t)n + 1 - cap : 0;
    for (i = 0; tmp[start + i] && i + 1 < cap; i++)
        buf[i] = (char)(tmp[start + i] == '\n' ? '|' : tmp[start + i]);
    buf[i] = '\0';
}
