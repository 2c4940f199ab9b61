/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uml_guest - the program a User-Mode Linux kernel runs as init (tests/kernel).
 * Built on the host: UML runs host x86_64 binaries, and the root file system
 * is the host's (rootfstype=hostfs).
 *
 * It talks to vhost-rpmsg (the mdcom RPMsg remote) through the kernel's own
 * RPMsg host: virtio_rpmsg_bus, rpmsg_ctrl (/dev/rpmsg_ctrl0) and rpmsg_char
 * (/dev/rpmsgN). Kernel command line parameters of the form key=value arrive
 * as environment variables:
 *   mdcom_out=DIR     results: DIR/guest.log, DIR/dmesg-*.txt (required)
 *   mdcom_mode=MODE   full | quick | bench
 *   mdcom_n=N         echoes (full/quick), round trips per size (bench)
 *   mdcom_seed=S      seed of the random lengths
 * First it checks that vector registers survive context switches
 * (uml_vecregs.c), then the RPMsg steps; full mode adds, after the echo:
 * four guest threads' streams both ways at once, mdcom's TX ring filled
 * while the kernel's RX processing is held back, malformed input from the
 * kernel's side and from mdcom's (each step's kernel log in its own
 * dmesg-<step>.txt).
 * Every step writes one line to guest.log ("OK ...", "FAIL ...", "INFO ...",
 * "BENCH ...", "READY_FOR_KILL", "DONE"); the host test reads it.
 * Ends with a power-off (init must not exit).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/rpmsg.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "mdcom_crc32.h"
#include "uml_vecregs.h"

#define ECHO_ADDR_ENV "mdcom_echo_addr"
#define CTL_ADDR 1072u   /* vhost-rpmsg's control endpoint */
#define KSVC_ADDR 0x500u /* the service this side announces */
#define SAME_ADDR 0x440u /* vhost-rpmsg's second rpmsg-raw endpoint ("A") */
#define MAX_PAYLOAD 496u

static FILE *glog;
static const char *outdir;
static int failures;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (glog) {
        vfprintf(glog, fmt, ap);
        fputc('\n', glog);
        fflush(glog);
        fsync(fileno(glog));
    }
    va_end(ap);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    va_end(ap);
}

#define FAIL(...) (failures++, say("FAIL " __VA_ARGS__))

static void power_off(void)
{
    sync();
    reboot(RB_POWER_OFF);
    for (;;)
        pause();
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static int wait_path(const char *p, int present, int ms)
{
    for (int t = 0; t < ms; t += 10) {
        if ((access(p, F_OK) == 0) == present)
            return 0;
        usleep(10000);
    }
    return -1;
}

static long read_num(const char *path)
{
    char b[32] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, b, sizeof(b) - 1);
    close(fd);
    return n > 0 ? strtol(b, NULL, 0) : -1;
}

/* The kernel has no devtmpfs (tests/kernel/uml.config says why): create
 * /dev/<name> from /sys/class/rpmsg/<name>/dev on the tmpfs mounted at /dev.
 * 0 or -1 (no such device). */
static int make_node(const char *name)
{
    char p[300], b[32] = {0};
    unsigned maj, min;
    struct stat st;
    snprintf(p, sizeof(p), "/sys/class/rpmsg/%s/dev", name);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, b, sizeof(b) - 1);
    close(fd);
    if (n <= 0 || sscanf(b, "%u:%u", &maj, &min) != 2)
        return -1;
    snprintf(p, sizeof(p), "/dev/%s", name);
    if (stat(p, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(maj, min))
        return 0;
    unlink(p);
    return mknod(p, S_IFCHR | 0600, makedev(maj, min));
}

/* /dev/rpmsgN of the endpoint device with this src (or any src: -1) and dst;
 * -1 when none. */
static int find_eptdev(long src, long dst, char *dev, size_t cap)
{
    DIR *d = opendir("/sys/class/rpmsg");
    struct dirent *e;
    int found = -1;
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        char p[300];
        if (strncmp(e->d_name, "rpmsg", 5) || strncmp(e->d_name, "rpmsg_ctrl", 10) == 0 ||
            strlen(e->d_name) > 200)
            continue;
        snprintf(p, sizeof(p), "/sys/class/rpmsg/%s/dst", e->d_name);
        long dd = read_num(p);
        snprintf(p, sizeof(p), "/sys/class/rpmsg/%s/src", e->d_name);
        long ss = read_num(p);
        if (dd == dst && (src < 0 || ss == src) && make_node(e->d_name) == 0) {
            snprintf(dev, cap, "/dev/%s", e->d_name);
            found = 0;
            break;
        }
    }
    closedir(d);
    return found;
}

static int wait_eptdev(long src, long dst, char *dev, size_t cap, int ms)
{
    for (int t = 0; t < ms; t += 10) {
        if (find_eptdev(src, dst, dev, cap) == 0 && access(dev, F_OK) == 0)
            return 0;
        usleep(10000);
    }
    return -1;
}

/* read one message with a timeout: length, 0 on timeout, -errno */
static ssize_t read_msg(int fd, void *buf, size_t cap, int ms)
{
    struct pollfd pf = {fd, POLLIN, 0};
    int n = poll(&pf, 1, ms);
    if (n < 0)
        return -errno;
    if (n == 0)
        return 0;
    ssize_t r = read(fd, buf, cap);
    return r < 0 ? -errno : r;
}

/* The kernel log into outdir/name: all of it, or with since_last only what
 * was logged after the previous save (the buffer, 128 KiB, does not wrap in
 * this test). */
static void save_dmesg_part(const char *name, int since_last)
{
    static char buf[1 << 20];
    static int seen;
    char p[512];
    int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf));
    int from = since_last && seen <= n ? seen : 0;
    if (n > 0)
        seen = n;
    snprintf(p, sizeof(p), "%s/%s", outdir, name);
    FILE *f = fopen(p, "w");
    if (f && n > from)
        fwrite(buf + from, 1, (size_t)(n - from), f);
    if (f) {
        fflush(f);
        fsync(fileno(f));
        fclose(f);
    }
}

/* rpmsg_ctrl's request req (RPMSG_CREATE_EPT_IOCTL, RPMSG_CREATE_DEV_IOCTL,
 * RPMSG_RELEASE_DEV_IOCTL; named what) for (name, src, dst): 0, or -1
 * (reported) */
static int ctrl_request(int ctrl, unsigned long req, const char *what, const char *name,
                        uint32_t src, uint32_t dst)
{
    struct rpmsg_endpoint_info ei;
    memset(&ei, 0, sizeof(ei));
    snprintf(ei.name, sizeof(ei.name), "%s", name);
    ei.src = src;
    ei.dst = dst;
    if (ioctl(ctrl, req, &ei) != 0) {
        FAIL("%s: %s", what, strerror(errno));
        return -1;
    }
    return 0;
}

/* Open an endpoint to the echo service through rpmsg_ctrl. */
static int open_echo_ept(int ctrl, uint32_t echo_addr, uint32_t src, char *dev, size_t cap)
{
    if (ctrl_request(ctrl, RPMSG_CREATE_EPT_IOCTL, "RPMSG_CREATE_EPT_IOCTL", "mdcom-echo", src,
                     echo_addr) != 0)
        return -1;
    if (wait_eptdev(src, echo_addr, dev, cap, 5000) != 0) {
        FAIL("no /dev/rpmsgN for the created endpoint");
        return -1;
    }
    int fd = open(dev, O_RDWR);
    if (fd < 0)
        FAIL("open %s: %s", dev, strerror(errno));
    return fd;
}

static void save_dmesg(const char *name) { save_dmesg_part(name, 0); }

static int ctl_request(int fd, const char *req, char *out, size_t cap)
{
    /* the control endpoint answers on the same endpoint device: send with
     * the eptdev bound to CTL_ADDR */
    if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
        return -1;
    ssize_t n = read_msg(fd, out, cap - 1, 5000);
    if (n <= 0)
        return -1;
    out[n] = 0;
    return 0;
}

static int echo_run(int fd, int ctl, long n)
{
    uint8_t tx[MAX_PAYLOAD], rx[MAX_PAYLOAD + 16];
    uint32_t crc = 0;
    char st[64];
    if (ctl_request(ctl, "R", st, sizeof(st)) != 0 || strcmp(st, "OK") != 0) {
        FAIL("control reset");
        return -1;
    }
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        uint32_t len = 1 + rnd() % MAX_PAYLOAD;
        for (uint32_t k = 0; k < len; k++)
            tx[k] = (uint8_t)rnd();
        crc = mdcom_crc32(crc, tx, len);
        ssize_t w = write(fd, tx, len);
        if (w != (ssize_t)len) {
            FAIL("echo %ld: write %zd (%s)", i, w, strerror(errno));
            return -1;
        }
        ssize_t r = read_msg(fd, rx, sizeof(rx), 10000);
        if (r != (ssize_t)len || memcmp(rx, tx, len) != 0) {
            FAIL("echo %ld: sent %u bytes, got %zd%s", i, len, r,
                 r == (ssize_t)len ? " (different)" : "");
            return -1;
        }
        if (mdcom_crc32(0, rx, len) != mdcom_crc32(0, tx, len)) {
            FAIL("echo %ld: crc", i);
            return -1;
        }
    }
    uint64_t dt = now_ns() - t0;
    if (ctl_request(ctl, "S", st, sizeof(st)) != 0) {
        FAIL("control stats");
        return -1;
    }
    unsigned long long cnt = 0;
    unsigned int dcrc = 0;
    if (sscanf(st, "%llu %x", &cnt, &dcrc) != 2 || cnt != (unsigned long long)n || dcrc != crc) {
        FAIL("device saw %s, expected %ld %08x", st, n, crc);
        return -1;
    }
    say("OK echo %ld messages, random lengths 1..%u, crc %08x matches the device's, %.1f us/round "
        "trip",
        n, MAX_PAYLOAD, crc, (double)dt / (double)n / 1000.0);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void bench_run(int fd, long n)
{
    static uint64_t t[100000];
    uint8_t tx[MAX_PAYLOAD], rx[MAX_PAYLOAD + 16];
    const uint32_t sizes[2] = {64, 496};
    if (n > 100000)
        n = 100000;
    memset(tx, 0x5a, sizeof(tx));
    for (int s = 0; s < 2; s++) {
        for (long i = -200; i < n; i++) { /* 200 warm-up round trips */
            uint64_t t0 = now_ns();
            if (write(fd, tx, sizes[s]) != (ssize_t)sizes[s] ||
                read_msg(fd, rx, sizeof(rx), 10000) != (ssize_t)sizes[s]) {
                FAIL("bench %u B: round trip %ld", sizes[s], i);
                return;
            }
            if (i >= 0)
                t[i] = now_ns() - t0;
        }
        qsort(t, (size_t)n, sizeof(t[0]), cmp_u64);
        uint64_t sum = 0;
        for (long i = 0; i < n; i++)
            sum += t[i];
        say("BENCH size=%u n=%ld p50_ns=%llu p99_ns=%llu mean_ns=%llu", sizes[s], n,
            (unsigned long long)t[n / 2], (unsigned long long)t[(n * 99) / 100],
            (unsigned long long)(sum / (uint64_t)n));
    }
}

/* an endpoint device through RPMSG_CREATE_EPT_IOCTL, opened: fd or -1 */
static int open_ept(int ctrl, const char *name, uint32_t src, uint32_t dst)
{
    char dev[300];
    if (ctrl_request(ctrl, RPMSG_CREATE_EPT_IOCTL, "RPMSG_CREATE_EPT_IOCTL", name, src, dst) != 0)
        return -1;
    if (wait_eptdev(src, dst, dev, sizeof(dev), 5000) != 0) {
        FAIL("no /dev/rpmsgN for endpoint 0x%x -> 0x%x", src, dst);
        return -1;
    }
    int fd = open(dev, O_RDWR);
    if (fd < 0)
        FAIL("open %s: %s", dev, strerror(errno));
    return fd;
}

/* the device's counters ("X"); 0 or -1 */
struct xstats {
    unsigned bad[5], ns, unknown, cb, src;
    unsigned long long copy, zc, held, changed, unordered;
};
static int xstats(int ctl, struct xstats *x)
{
    char rep[300];
    if (ctl_request(ctl, "X", rep, sizeof(rep)) != 0 ||
        sscanf(rep,
               "bad %u %u %u %u %u ns %u unknown %u cb %u copy %llu zc %llu held %llu changed %llu "
               "src %u unordered %llu",
               &x->bad[0], &x->bad[1], &x->bad[2], &x->bad[3], &x->bad[4], &x->ns, &x->unknown,
               &x->cb, &x->copy, &x->zc, &x->held, &x->changed, &x->src, &x->unordered) != 14) {
        FAIL("device counters: '%s'", rep);
        return -1;
    }
    return 0;
}

/* ---- several guest threads, both directions at once ---------------------- */
#define STREAMS 4
struct stream {
    int fd, id;
    long n, bad;
    pthread_t w, r;
    char why[160];
};

/* message k of stream id: 8..496 bytes, id, k and a pattern */
static size_t stream_msg(uint8_t *p, int id, uint32_t k)
{
    uint32_t h = (uint32_t)id * 2654435761u ^ k * 40503u;
    size_t len = 8 + h % (MAX_PAYLOAD - 7);
    memcpy(p, &id, 4);
    memcpy(p + 4, &k, 4);
    for (size_t i = 8; i < len; i++)
        p[i] = (uint8_t)(h + i * 7u);
    return len;
}

static void *stream_writer(void *arg)
{
    struct stream *st = arg;
    uint8_t m[MAX_PAYLOAD];
    for (uint32_t k = 0; k < (uint32_t)st->n; k++) {
        size_t len = stream_msg(m, st->id, k);
        if (write(st->fd, m, len) != (ssize_t)len) {
            snprintf(st->why, sizeof(st->why), "write %u: %s", k, strerror(errno));
            st->bad++;
            break;
        }
    }
    return NULL;
}

static void *stream_reader(void *arg)
{
    struct stream *st = arg;
    uint8_t m[MAX_PAYLOAD], got[MAX_PAYLOAD + 16];
    for (uint32_t k = 0; k < (uint32_t)st->n; k++) {
        size_t len = stream_msg(m, st->id, k);
        ssize_t r = read_msg(st->fd, got, sizeof(got), 20000);
        if (r != (ssize_t)len || memcmp(got, m, len) != 0) {
            uint32_t gk = 0;
            if (r >= 8)
                memcpy(&gk, got + 4, 4);
            snprintf(st->why, sizeof(st->why), "message %u: got %zd bytes (index %u), expected %zu",
                     k, r, gk, len);
            st->bad++;
            break;
        }
    }
    return NULL;
}

static int streams_run(int ctrl, int ctl, uint32_t echo_addr, long n)
{
    struct stream st[STREAMS];
    char rep[300];
    if (ctl_request(ctl, "R", rep, sizeof(rep)) != 0) {
        FAIL("control reset");
        return -1;
    }
    uint64_t t0 = now_ns();
    for (int i = 0; i < STREAMS; i++) {
        memset(&st[i], 0, sizeof(st[i]));
        st[i].id = i;
        st[i].n = n;
        char name[32];
        snprintf(name, sizeof(name), "mdcom-stream%d", i);
        st[i].fd = open_ept(ctrl, name, 0x610u + (uint32_t)i, echo_addr);
        if (st[i].fd < 0)
            return -1;
    }
    for (int i = 0; i < STREAMS; i++) {
        pthread_create(&st[i].r, NULL, stream_reader, &st[i]);
        pthread_create(&st[i].w, NULL, stream_writer, &st[i]);
    }
    long bad = 0;
    for (int i = 0; i < STREAMS; i++) {
        pthread_join(st[i].w, NULL);
        pthread_join(st[i].r, NULL);
        if (st[i].bad) {
            FAIL("stream %d: %s", i, st[i].why);
            bad++;
        }
        close(st[i].fd);
    }
    double dt = (double)(now_ns() - t0) / 1e9;
    if (bad)
        return -1;
    unsigned long long cnt = 0;
    unsigned crc = 0;
    struct xstats x;
    if (ctl_request(ctl, "S", rep, sizeof(rep)) != 0 || sscanf(rep, "%llu %x", &cnt, &crc) != 2 ||
        cnt != (unsigned long long)(STREAMS * n)) {
        FAIL("streams: the device counted '%s', expected %ld", rep, STREAMS * n);
        return -1;
    }
    if (xstats(ctl, &x) != 0 || x.changed != 0 || x.unordered != 0) {
        FAIL("streams: held buffers changed %llu, echoes out of order %llu", x.changed,
             x.unordered);
        return -1;
    }
    say("OK %d streams at once (a writer and a reader thread each), %ld messages each way per "
        "stream, "
        "in order and unchanged, %.2f s",
        STREAMS, n, dt);
    return 0;
}

/* ---- mdcom's TX ring full ---------------------------------------------------
 * rpmsg_char queues what arrives without limit, so a reader that stops does
 * not stop the kernel taking messages: the ring fills only while the kernel's
 * RX processing (virtio callbacks, a work item) cannot run. This thread makes
 * it so on UML's one CPU: SCHED_FIFO, RT throttling off, spinning until the
 * device reports its ring full and its timed send failed. */
static int fill_run(int ctrl, int ctl, long n)
{
    char path[400], rep[300], req[500];
    int ffd = open_ept(ctrl, "mdcom-fill", 0x630, CTL_ADDR);
    if (ffd < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/fill.txt", outdir);
    unlink(path);
    int rt = open("/proc/sys/kernel/sched_rt_runtime_us", O_WRONLY);
    if (rt < 0 || write(rt, "-1", 2) != 2) {
        FAIL("RT throttling: %s", strerror(errno));
        return -1;
    }
    close(rt);
    struct sched_param sp = {.sched_priority = 50}, sp0 = {.sched_priority = 0};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
        FAIL("SCHED_FIFO: %s", strerror(errno));
        return -1;
    }
    snprintf(req, sizeof(req), "F 0x630 %ld %s", n, path);
    ssize_t w = write(ctl, req, strlen(req));
    uint64_t t0 = now_ns();
    int seen = 0;
    while (w == (ssize_t)strlen(req) && now_ns() - t0 < 20000000000ull)
        if (access(path, F_OK) == 0) {
            seen = 1;
            break;
        }
    double held_ms = (double)(now_ns() - t0) / 1e6;
    sched_setscheduler(0, SCHED_OTHER, &sp0);
    if (!seen) {
        FAIL("fill: the device did not report a full ring within 20 s (write %zd)", w);
        return -1;
    }
    /* the reader drains: everything, in order, unchanged */
    uint8_t got[MAX_PAYLOAD + 16], want[MAX_PAYLOAD];
    for (uint32_t k = 0; k < (uint32_t)n; k++) {
        size_t len = 8 + (k * 37u) % 489u;
        memcpy(want, &k, 4);
        memcpy(want + 4, "FLD1", 4);
        for (size_t i = 8; i < len; i++)
            want[i] = (uint8_t)(k * 31u + i);
        ssize_t r = read_msg(ffd, got, sizeof(got), 20000);
        if (r != (ssize_t)len || memcmp(got, want, len) != 0) {
            FAIL("fill: message %u: got %zd bytes, expected %zu", k, r, len);
            return -1;
        }
    }
    ssize_t rn = read_msg(ctl, rep, sizeof(rep) - 1, 20000);
    if (rn <= 0) {
        FAIL("fill: no answer");
        return -1;
    }
    rep[rn] = 0;
    unsigned posted = 0, full = 0, sent = 0, failed = 0;
    int rc = 0, trc = 0;
    long long waited = 0;
    if (sscanf(rep, "FILL %u %u %d %d %lld %u %u", &posted, &full, &rc, &trc, &waited, &sent,
               &failed) != 7) {
        FAIL("fill: answer '%s'", rep);
        return -1;
    }
    say("INFO fill: %s; kernel RX held back for %.0f ms", rep, held_ms);
    if (posted != 256 || full != posted || rc != -ETIMEDOUT || trc != -ETIMEDOUT ||
        waited < 200000 || waited > 5000000 || sent != (unsigned)n || failed != 0) {
        FAIL("fill: expected 256 posted, the ring full after all of them, -ETIMEDOUT twice after "
             "a 200 ms wait, %ld sent, none failed: '%s'",
             n, rep);
        return -1;
    }
    close(ffd);
    say("OK TX ring full: %u messages filled the kernel's %u RX buffers, the next send waited %.0f "
        "ms "
        "and failed with -ETIMEDOUT, then all %ld arrived in order once the kernel went on",
        full, posted, (double)waited / 1000.0, n);
    return 0;
}

/* ---- malformed input, from the kernel's side --------------------------------
 * What the guest can make its kernel send: bad name service messages, a
 * message to nobody, a reserved source address (7), a zero-length message;
 * a message past the buffer the kernel refuses itself (EMSGSIZE). */
static int bad_from_kernel(int ctrl, int ctl, int fd, uint32_t echo_addr)
{
    struct xstats a, b;
    uint8_t m[600], got[600];
    if (xstats(ctl, &a) != 0)
        return -1;
    int nsfd = open_ept(ctrl, "mdcom-badns", 0x650, 53);
    int nofd = open_ept(ctrl, "mdcom-nobody", 0x651, 0x7777);
    int oddfd = open_ept(ctrl, "mdcom-odd", 7, echo_addr);
    if (nsfd < 0 || nofd < 0 || oddfd < 0)
        return -1;
    /* short; name without NUL; address ANY; flags 7 */
    memset(m, 0, sizeof(m));
    strcpy((char *)m, "md-bad");
    int ok = write(nsfd, m, 10) == 10;
    memset(m, 'n', 32);
    uint32_t addr = 0x460, flags = 0, any = RPMSG_ADDR_ANY, seven = 7;
    memcpy(m + 32, &addr, 4);
    memcpy(m + 36, &flags, 4);
    ok &= write(nsfd, m, 40) == 40;
    memset(m, 0, 32);
    strcpy((char *)m, "md-bad-any");
    memcpy(m + 32, &any, 4);
    ok &= write(nsfd, m, 40) == 40;
    strcpy((char *)m, "md-bad-flags");
    memcpy(m + 32, &addr, 4);
    memcpy(m + 36, &seven, 4);
    ok &= write(nsfd, m, 40) == 40;
    ok &= write(nofd, "nobody", 6) == 6;
    ok &= write(oddfd, "odd", 3) == 3;
    ssize_t r = read_msg(oddfd, got, sizeof(got), 5000);
    if (!ok || r != 3 || memcmp(got, "odd", 3) != 0) {
        FAIL("malformed from the kernel: writes %d, echo to source 7: %zd", ok, r);
        return -1;
    }
    if (xstats(ctl, &b) != 0)
        return -1;
    unsigned dbad = 0;
    for (int i = 0; i < 5; i++)
        dbad += b.bad[i] - a.bad[i];
    if (b.ns - a.ns != 4 || b.unknown - a.unknown != 1 || dbad != 0 || b.cb != a.cb || b.src != 7) {
        FAIL("malformed from the kernel: the device counted bad_ns +%u (4), unknown_dst +%u (1), "
             "other bad_* +%u (0), cb_errors +%u (0), last source %u (7)",
             b.ns - a.ns, b.unknown - a.unknown, dbad, b.cb - a.cb, b.src);
        return -1;
    }
    /* past the buffer: refused by the kernel itself */
    memset(m, 'x', sizeof(m));
    errno = 0;
    ssize_t big = write(fd, m, MAX_PAYLOAD + 1);
    int big_err = errno;
    /* zero length: a message of its own, echoed as one */
    ssize_t z = write(fd, m, 0);
    struct pollfd pf = {fd, POLLIN, 0};
    int pr = poll(&pf, 1, 5000);
    ssize_t zr = pr > 0 ? read(fd, got, sizeof(got)) : -2;
    if (big != -1 || big_err != EMSGSIZE || z != 0 || zr != 0) {
        FAIL("malformed from the kernel: write of %u bytes %zd (%s), zero-length write %zd, its "
             "echo %zd",
             MAX_PAYLOAD + 1, big, strerror(big_err), z, zr);
        return -1;
    }
    close(nsfd);
    close(nofd);
    close(oddfd);
    say("OK malformed from the kernel: 4 bad name service messages counted bad_ns, one to nobody "
        "unknown_dst, source 7 delivered and answered, nothing else rejected; %u bytes refused by "
        "the kernel (EMSGSIZE); zero length echoed",
        MAX_PAYLOAD + 1);
    return 0;
}

static int sysfs_has(const char *part)
{
    DIR *d = opendir("/sys/bus/rpmsg/devices");
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, part))
            found = 1;
    if (d)
        closedir(d);
    return found;
}

/* ---- malformed input, from mdcom's side (the device sends it, "M") --------- */
static int bad_from_mdcom(int ctrl, int ctl, int fd)
{
    char rep[300];
    uint8_t got[600];
    int mfd = open_ept(ctrl, "mdcom-bad", 0x640, CTL_ADDR);
    if (mfd < 0)
        return -1;
    save_dmesg_part("dmesg-before-bad.txt", 1);
    if (write(ctl, "M 0x640", 7) != 7) {
        FAIL("request M");
        return -1;
    }
    /* of everything sent to 0x640 only these arrive: source 7, source ANY,
     * and the messages after the two too long for their buffers */
    const char *want[4] = {"src7", "srcany", "after1", "after2"};
    for (int i = 0; i < 4; i++) {
        ssize_t r = read_msg(mfd, got, sizeof(got) - 1, 5000);
        if (r != (ssize_t)strlen(want[i]) || memcmp(got, want[i], (size_t)r) != 0) {
            got[r > 0 ? r : 0] = 0;
            FAIL("malformed from mdcom: message %d: '%s' (%zd), expected '%s'", i, (char *)got, r,
                 want[i]);
            return -1;
        }
    }
    ssize_t rn = read_msg(ctl, rep, sizeof(rep) - 1, 5000);
    unsigned before = 0, kicks = 0;
    int err = 1;
    if (rn > 0)
        rep[rn] = 0;
    if (rn <= 0 || sscanf(rep, "MDONE %u %d %u", &before, &err, &kicks) != 3 || err != 0) {
        FAIL("malformed from mdcom: answer '%s'", rn > 0 ? rep : "");
        return -1;
    }
    unsigned after = 0;
    if (ctl_request(ctl, "P", rep, sizeof(rep)) != 0 || sscanf(rep, "%u", &after) != 1) {
        FAIL("posted count");
        return -1;
    }
    /* what the name service made of it */
    int trunc = sysfs_has(".qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.-1.1104"); /* 31 of the 32 */
    int anyc = sysfs_has(".md-any.-1.-1");
    int flagc = sysfs_has(".md-flags.");
    int shortc = sysfs_has(".md-short.");
    say("INFO malformed from mdcom: RX buffers posted by the kernel %u before, %u after; the "
        "device "
        "notified %u more times to get the messages behind the rejected ones taken; channels: "
        "32-byte name %s, address ANY %s, flags 7 %s, short %s",
        before, after, kicks, trunc ? "created with 31 bytes" : "none", anyc ? "created" : "none",
        flagc ? "created" : "none (taken as destroy)", shortc ? "created" : "none");
    if (ctl_request(ctl, "C", rep, sizeof(rep)) != 0 || strcmp(rep, "CDONE") != 0) {
        FAIL("cleanup: '%s'", rep);
        return -1;
    }
    int gone = 0;
    for (int t = 0; t < 200 && !gone; t++, usleep(10000))
        gone = !sysfs_has(".qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq.") && !sysfs_has(".md-any.");
    /* the kernel lives on: an echo still works */
    ssize_t w = write(fd, "still", 5);
    ssize_t r = read_msg(fd, got, sizeof(got), 5000);
    save_dmesg_part("dmesg-bad.txt", 1);
    if (after != before - 2 || !trunc || !anyc || flagc || shortc || !gone || w != 5 || r != 5 ||
        memcmp(got, "still", 5) != 0) {
        FAIL("malformed from mdcom: posted %u -> %u (expected 2 fewer), truncated %d any %d flags7 "
             "%d "
             "short %d (expected 1 1 0 0), withdrawn %d, echo after %zd/%zd",
             before, after, trunc, anyc, flagc, shortc, gone, w, r);
        return -1;
    }
    close(mfd);
    say("OK malformed from mdcom: the kernel survived; source 7 and ANY delivered; the two "
        "messages past "
        "their buffers dropped and their 2 RX buffers not posted again (%u -> %u); short and "
        "flags-7 "
        "name service messages created nothing, a 32-byte name was cut to 31, address ANY made a "
        "channel; both withdrawn again",
        before, after);
    return 0;
}

int main(void)
{
    const char *mode = getenv("mdcom_mode");
    const char *ns = getenv("mdcom_n");
    const char *seed = getenv("mdcom_seed");
    long n = ns ? strtol(ns, NULL, 0) : 10000;
    char p[512], dev[300], dev2[300], buf[600];
    outdir = getenv("mdcom_out");
    if (!mode)
        mode = "full";
    rng = seed ? strtoull(seed, NULL, 0) : 0x9E3779B97F4A7C15ull;
    if (!rng)
        rng = 1;
    mount("proc", "/proc", "proc", 0, NULL);
    mount("sysfs", "/sys", "sysfs", 0, NULL);
    /* over the host's /dev, inside this kernel only */
    mount("tmpfs", "/dev", "tmpfs", 0, "mode=755");
    if (!outdir) {
        printf("uml_guest: no mdcom_out= on the kernel command line\n");
        power_off();
    }
    snprintf(p, sizeof(p), "%s/guest.log", outdir);
    glog = fopen(p, "w");
    say("INFO mode %s n %ld", mode, n);

    /* 0. this kernel keeps each thread's vector registers (the host's
     *    XSTATE, not only the FXSAVE area) across context switches */
    char vmsg[300];
    int vr = vecregs_check(vmsg, sizeof(vmsg));
    if (vr == 0)
        say("OK vector registers: %s", vmsg);
    else if (vr > 0)
        say("INFO vector registers: %s", vmsg);
    else
        FAIL("vector registers: %s", vmsg);

    /* 1. the kernel probed the virtio device and the remote announced
     *    "rpmsg-raw": rpmsg_ctrl0 and an rpmsg_char device for it */
    if (wait_path("/sys/class/rpmsg/rpmsg_ctrl0/dev", 1, 10000) != 0 ||
        make_node("rpmsg_ctrl0") != 0) {
        FAIL("no rpmsg_ctrl0 after 10 s");
        goto out;
    }
    long echo_addr = -1;
    for (int t = 0; t < 500 && echo_addr < 0; t++) {
        DIR *d = opendir("/sys/bus/rpmsg/devices");
        struct dirent *e;
        while (d && (e = readdir(d))) {
            const char *s = strstr(e->d_name, ".rpmsg-raw.");
            if (s && strstr(e->d_name, ".-1.")) { /* a channel from the remote's announcement */
                const char *last = strrchr(e->d_name, '.');
                echo_addr = strtol(last + 1, NULL, 10);
                say("OK name service remote->kernel: channel %s", e->d_name);
            }
        }
        if (d)
            closedir(d);
        if (echo_addr < 0)
            usleep(10000);
    }
    if (echo_addr < 0) {
        FAIL("no rpmsg-raw channel announced by the remote");
        goto out;
    }
    if (wait_eptdev(-1, echo_addr, dev, sizeof(dev), 5000) != 0) {
        FAIL("rpmsg_char did not bind the announced rpmsg-raw channel");
        goto out;
    }
    say("OK rpmsg_char bound the announced channel as %s", dev);

    int ctrl = open("/dev/rpmsg_ctrl0", O_RDWR);
    if (ctrl < 0) {
        FAIL("open /dev/rpmsg_ctrl0: %s", strerror(errno));
        goto out;
    }
    /* 2. an endpoint of our own to the echo service, one to the control */
    int fd = open_echo_ept(ctrl, (uint32_t)echo_addr, 0x600, dev, sizeof(dev));
    struct rpmsg_endpoint_info ci;
    memset(&ci, 0, sizeof(ci));
    snprintf(ci.name, sizeof(ci.name), "mdcom-ctl");
    ci.src = 0x601;
    ci.dst = CTL_ADDR;
    int ctl = -1;
    if (ioctl(ctrl, RPMSG_CREATE_EPT_IOCTL, &ci) == 0 &&
        wait_eptdev(0x601, CTL_ADDR, dev2, sizeof(dev2), 5000) == 0)
        ctl = open(dev2, O_RDWR);
    if (fd < 0 || ctl < 0) {
        FAIL("endpoints (echo %d, control %d)", fd, ctl);
        goto out;
    }
    say("OK RPMSG_CREATE_EPT_IOCTL: %s -> 0x%lx, %s -> 0x%x", dev, echo_addr, dev2, CTL_ADDR);

    if (!strcmp(mode, "bench")) {
        bench_run(fd, n);
        goto out;
    }
    if (echo_run(fd, ctl, n) != 0)
        goto out;
    if (!strcmp(mode, "full")) {
        struct xstats x;
        if (xstats(ctl, &x) != 0)
            goto out;
        if (x.copy == 0 || x.zc == 0 || x.held == 0 || x.changed != 0 || x.unordered != 0) {
            FAIL("echo modes: copy %llu zero-copy %llu held %llu (held changed %llu, not held in "
                 "order %llu)",
                 x.copy, x.zc, x.held, x.changed, x.unordered);
            goto out;
        }
        say("OK the device echoed by copy %llu, zero copy %llu, held RX buffer %llu times (none "
            "changed "
            "while held)",
            x.copy, x.zc, x.held);
        save_dmesg_part("dmesg-start.txt", 1);
        if (streams_run(ctrl, ctl, (uint32_t)echo_addr, n / 4) != 0)
            goto out;
        if (fill_run(ctrl, ctl, 768) != 0)
            goto out;
        save_dmesg_part("dmesg-streams.txt", 1);
        if (bad_from_kernel(ctrl, ctl, fd, (uint32_t)echo_addr) != 0)
            goto out;
        save_dmesg_part("dmesg-badk.txt", 1);
        if (bad_from_mdcom(ctrl, ctl, fd) != 0)
            goto out;
    }

    /* 3. name service kernel -> remote: a local rpmsg-raw channel with a
     *    fixed address is announced; the remote answers "hello rpmsg-raw".
     *    Full mode first asks the remote for a second endpoint named
     *    rpmsg-raw (two of one name, the kernel makes a channel for each):
     *    the announcement binds it, it says "bound" */
    int full = !strcmp(mode, "full"), sfd = -1;
    if (full) {
        if (ctl_request(ctl, "A", buf, sizeof(buf)) != 0 || strcmp(buf, "ADONE 0") != 0) {
            FAIL("second endpoint: '%s'", buf);
            goto out;
        }
        char sdev[300];
        if (wait_eptdev(-1, SAME_ADDR, sdev, sizeof(sdev), 5000) != 0 ||
            (sfd = open(sdev, O_RDWR)) < 0) {
            FAIL("no /dev/rpmsgN for the remote's second rpmsg-raw endpoint");
            goto out;
        }
        say("OK name service remote->kernel: a second rpmsg-raw endpoint at 0x%x, its own channel "
            "%s",
            SAME_ADDR, sdev);
    }
    if (ctrl_request(ctrl, RPMSG_CREATE_DEV_IOCTL, "RPMSG_CREATE_DEV_IOCTL", "rpmsg-raw", KSVC_ADDR,
                     RPMSG_ADDR_ANY) != 0)
        goto out;
    char dev3[300];
    /* rpmsg_char prints an unset dst (RPMSG_ADDR_ANY) as -1 */
    if (wait_eptdev(KSVC_ADDR, -1, dev3, sizeof(dev3), 5000) != 0) {
        FAIL("no /dev/rpmsgN for the local channel");
        goto out;
    }
    int kfd = open(dev3, O_RDWR);
    ssize_t hn = kfd >= 0 ? read_msg(kfd, buf, sizeof(buf) - 1, 5000) : -1;
    if (hn <= 0) {
        FAIL("no answer to the kernel's announcement on %s (%zd)", dev3, hn);
        goto out;
    }
    buf[hn] = 0;
    if (strcmp(buf, "hello rpmsg-raw") != 0) {
        FAIL("answer to the announcement: '%s'", buf);
        goto out;
    }
    say("OK name service kernel->remote: announced rpmsg-raw at 0x%x, the remote answered '%s'",
        KSVC_ADDR, buf);
    if (full) {
        char want[32];
        snprintf(want, sizeof(want), "bound 0x%x", SAME_ADDR);
        hn = read_msg(kfd, buf, sizeof(buf) - 1, 5000);
        buf[hn > 0 ? hn : 0] = 0;
        if (strcmp(buf, want) != 0) {
            FAIL("same-name binding: '%s' on 0x%x, expected '%s'", buf, KSVC_ADDR, want);
            goto out;
        }
        say("OK same-name binding: the kernel's announcement bound the remote's unbound rpmsg-raw "
            "endpoint, "
            "which sent '%s' to 0x%x",
            buf, KSVC_ADDR);
    }
    close(kfd);
    if (ctrl_request(ctrl, RPMSG_RELEASE_DEV_IOCTL, "RPMSG_RELEASE_DEV_IOCTL", "rpmsg-raw",
                     KSVC_ADDR, RPMSG_ADDR_ANY) != 0)
        goto out;
    say("OK released the local channel (the remote logs the destroy announcement)");
    /* the destroy announcement reaches the remote before the next echo does */
    if (ctl_request(ctl, "S", buf, sizeof(buf)) != 0) {
        FAIL("control after release");
        goto out;
    }
    if (full) {
        /* both channels named rpmsg-raw answer, each its own way */
        char edev[300], got[64];
        int efd =
            wait_eptdev(-1, echo_addr, edev, sizeof(edev), 1000) == 0 ? open(edev, O_RDWR) : -1;
        ssize_t e1 =
            efd >= 0 && write(efd, "y", 1) == 1 ? read_msg(efd, got, sizeof(got) - 1, 5000) : -1;
        int echo_ok = e1 == 1 && got[0] == 'y';
        ssize_t s1 = write(sfd, "x", 1) == 1 ? read_msg(sfd, got, sizeof(got) - 1, 5000) : -1;
        got[s1 > 0 ? s1 : 0] = 0;
        if (efd >= 0)
            close(efd);
        if (!echo_ok || strcmp(got, "same:x") != 0) {
            FAIL("two channels named rpmsg-raw: echo %d, the second answered '%s'", echo_ok, got);
            goto out;
        }
        /* name service remote -> kernel, destroy: the channel goes, its reader gets EPIPE */
        if (ctl_request(ctl, "D", buf, sizeof(buf)) != 0 || strcmp(buf, "DDONE 0") != 0) {
            FAIL("destroy the second endpoint: '%s'", buf);
            goto out;
        }
        char p2[64];
        snprintf(p2, sizeof(p2), ".rpmsg-raw.-1.%u", SAME_ADDR);
        int gone = 0;
        for (int t = 0; t < 500 && !gone; t++, usleep(10000))
            gone = !sysfs_has(p2);
        ssize_t sr = read(sfd, got, sizeof(got));
        int serr = errno;
        close(sfd);
        if (!gone || sr != -1 || serr != EPIPE) {
            FAIL("the remote's destroy announcement: channel gone %d, read %zd (%s)", gone, sr,
                 strerror(serr));
            goto out;
        }
        say("OK two channels named rpmsg-raw both answered; the remote's destroy announcement "
            "removed the "
            "second one (its reader: EPIPE)");
    }
    /* the whole log, and (full mode) the part since the malformed input */
    save_dmesg_part("dmesg-end.txt", 1);
    save_dmesg("dmesg-run.txt");
    if (!strcmp(mode, "quick"))
        goto out;

    /* 4. the remote is killed: what does the kernel do? */
    say("READY_FOR_KILL");
    uint64_t t0 = now_ns();
    struct pollfd pf = {fd, POLLIN, 0};
    int pr = poll(&pf, 1, 30000);
    ssize_t rr = pr > 0 ? read(fd, buf, sizeof(buf)) : 0;
    int rerr = rr < 0 ? errno : 0;
    say("INFO after kill: poll %d revents 0x%x read %zd (%s) after %.1f ms", pr,
        pr > 0 ? pf.revents : 0, rr, rerr ? strerror(rerr) : "-", (double)(now_ns() - t0) / 1e6);
    int gone = wait_path("/sys/class/rpmsg/rpmsg_ctrl0", 0, 10000) == 0;
    ssize_t wr = write(fd, "x", 1);
    int werr = wr < 0 ? errno : 0;
    say("INFO after kill: /dev/rpmsg_ctrl0 %s, write %zd (%s)", gone ? "removed" : "still there",
        wr, werr ? strerror(werr) : "-");
    if (pr > 0 && rerr == EPIPE && gone && werr == EPIPE)
        say("OK device loss: readers woken with EPIPE, writes fail with EPIPE, rpmsg_ctrl0 "
            "removed");
    else
        FAIL("device loss not seen as expected");
    sleep(1);
    save_dmesg("dmesg-kill.txt");
out:
    say("DONE failures=%d", failures);
    power_off();
    return 0;
}
