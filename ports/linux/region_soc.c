/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * region_soc.c - region backends for a physical carveout (/dev/mem at an
 * offset, a UIO device's map n) and a UIO mailbox doorbell for the Linux port
 * (include/mdcom/linux_soc.h). The platform is the Linux port's table with
 * region_open/close and the doorbell replaced; everything else (clock,
 * process identity, portable lock) stays the port's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/linux_soc.h"
#include "mdcom/mdcom.h"

enum { REG_SHM = 0, REG_DEVMEM = 1, REG_UIO = 2 };
enum { DB_FUTEX = 0, DB_UIO = 1 };

#define RECHECK_NS 20000000ll /* a UIO wait re-checks its word every 20 ms */

static int fail(char *err, size_t n, int rc, const char *fmt, ...)
{
    if (err && n) {
        va_list ap;
        va_start(ap, fmt);
        /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start(ap) is above (clang 14) */
        vsnprintf(err, n, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A decimal or 0x-hex number at *p; advances *p. */
static int num(const char **p, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!(**p >= '0' && **p <= '9'))
        return -EINVAL;
    *out = strtoull(*p, &end, 0);
    if (errno || end == *p)
        return -EINVAL;
    *p = end;
    return 0;
}

/* Copy the path part of "<path>[:...|@...]" into dst; advances *p. */
static int path_part(const char **p, char *dst, const char *stops)
{
    size_t n = strcspn(*p, stops);
    if (n == 0 || n >= MDCOM_SOC_PATH_MAX || (*p)[0] != '/')
        return -EINVAL;
    memcpy(dst, *p, n);
    dst[n] = '\0';
    *p += n;
    return 0;
}

/* ":key=<number>" at *p. */
static int key_num(const char **p, const char *key, uint64_t max, uint32_t *out)
{
    size_t k = strlen(key);
    uint64_t v;
    if ((*p)[0] != ':' || strncmp(*p + 1, key, k) != 0 || (*p)[1 + k] != '=')
        return -EINVAL;
    *p += 2 + k;
    if (num(p, &v) || v > max)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static int parse_region(mdcom_linux_soc *s, const char *spec)
{
    const char *p = spec;
    uint64_t off;
    if (!spec || strcmp(spec, "shm") == 0) {
        s->region_kind = REG_SHM;
        return 0;
    }
    if (strncmp(p, "devmem:", 7) == 0) {
        p += 7;
        if (path_part(&p, s->region_path, "@") || *p++ != '@' || num(&p, &off) ||
            key_num(&p, "size", 0xffffffffu, &s->region_size) || !s->region_size || *p)
            return -EINVAL;
        s->region_kind = REG_DEVMEM;
        s->region_offset = off;
        return 0;
    }
    if (strncmp(p, "uio:", 4) == 0) {
        p += 4;
        if (path_part(&p, s->region_path, ":") || key_num(&p, "map", 4, &s->region_map))
            return -EINVAL;
        if (*p && (key_num(&p, "size", 0xffffffffu, &s->region_size) || !s->region_size || *p))
            return -EINVAL;
        s->region_kind = REG_UIO;
        return 0;
    }
    return -EINVAL;
}

static int parse_doorbell(mdcom_linux_soc *s, const char *spec)
{
    const char *p = spec;
    if (!spec || strcmp(spec, "futex") == 0) {
        s->db_kind = DB_FUTEX;
        return 0;
    }
    if (strncmp(p, "uio:", 4) != 0)
        return -EINVAL;
    p += 4;
    if (path_part(&p, s->db_path, ":") || key_num(&p, "map", 4, &s->db_map) ||
        key_num(&p, "reg", 0xfffffffcu, &s->db_reg) || (s->db_reg & 3u) ||
        key_num(&p, "val", 0xffffffffu, &s->db_val))
        return -EINVAL;
    s->db_reenable = 1;
    snprintf(s->db_irq_path, sizeof(s->db_irq_path), "%s", s->db_path);
    while (*p) {
        if (strncmp(p, ":irq=", 5) == 0) {
            p += 5;
            if (path_part(&p, s->db_irq_path, ":"))
                return -EINVAL;
        } else if (strncmp(p, ":ack=", 5) == 0) {
            if (key_num(&p, "ack", 0xfffffffcu, &s->db_ack) || (s->db_ack & 3u) ||
                key_num(&p, "ackval", 0xffffffffu, &s->db_ackval))
                return -EINVAL;
            s->db_has_ack = 1;
        } else if (strncmp(p, ":noreenable", 11) == 0 && (p[11] == '\0' || p[11] == ':')) {
            s->db_reenable = 0;
            p += 11;
        } else {
            return -EINVAL;
        }
    }
    s->db_kind = DB_UIO;
    return 0;
}

/* Size of map n of /dev/uioX from sysfs; 0 when unknown (not a UIO device:
 * a stand-in file). */
static uint64_t uio_map_size(const char *dev, uint32_t map)
{
    char path[MDCOM_SOC_PATH_MAX + 64], buf[32];
    const char *base = strrchr(dev, '/');
    unsigned long long v = 0;
    FILE *f;
    if (!base || strncmp(base + 1, "uio", 3) != 0)
        return 0;
    snprintf(path, sizeof(path), "/sys/class/uio/%s/maps/map%u/size", base + 1, map);
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (fgets(buf, sizeof(buf), f))
        v = strtoull(buf, NULL, 0);
    fclose(f);
    return v;
}

/* mmap len bytes of path at byte offset off (any alignment). On success
 * base: the mapping of offset off; map_base, map_len: what to munmap. */
static int map_at(const char *path, uint64_t off, size_t len, void **base, void **map_base,
                  size_t *map_len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t aligned = off & ~(uint64_t)(pg - 1);
    size_t delta = (size_t)(off - aligned);
    size_t total = (delta + len + (size_t)pg - 1) & ~((size_t)pg - 1);
    struct stat st;
    void *m;
    int fd = open(path, O_RDWR | O_CLOEXEC | O_SYNC);
    if (fd < 0)
        return -errno;
    /* a regular file standing in for the device must cover the range: a
     * mapping beyond its end faults (SIGBUS) at the first access */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < off + len) {
        close(fd);
        return -ENOSPC;
    }
    m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)aligned);
    close(fd); /* the mapping stays */
    if (m == MAP_FAILED)
        return -errno;
    *map_base = m;
    *map_len = total;
    *base = (char *)m + delta;
    return 0;
}

/* The region mapping of a devmem/uio backend: [base, base + len) to unmap. */
typedef struct soc_map {
    void *map_base;
    size_t map_len;
} soc_map;

static int soc_region_open(void *ctx, const char *name, uint32_t size, uint32_t flags,
                           uint32_t mode, int32_t group, int64_t timeout_ns, mdcom_region_map *out)
{
    mdcom_linux_soc *s = ctx;
    soc_map *m;
    void *base = NULL; /* map_at sets it on success (the analyzer cannot see that) */
    uint64_t off;
    uint32_t len;
    int r;
    (void)name; /* the carveout is where the spec says */
    (void)flags;
    (void)mode;
    (void)group;
    (void)timeout_ns;
    if (s->region_kind == REG_SHM)
        return mdcom_platform_linux()->region_open(NULL, name, size, flags, mode, group, timeout_ns,
                                                   out);
    /* "all of it": the carveout's size (spec), or the UIO map's (sysfs) */
    len = s->region_size;
    if (s->region_kind == REG_UIO) {
        uint64_t have = uio_map_size(s->region_path, s->region_map);
        if (!len)
            len = have > 0xffffffffu ? 0xffffffffu : (uint32_t)have;
        else if (have && have < len)
            return -ENOSPC;
        off = (uint64_t)s->region_map * (uint64_t)sysconf(_SC_PAGESIZE);
    } else {
        off = s->region_offset;
    }
    if (!len)
        return -EINVAL; /* a UIO stand-in without sysfs needs :size= */
    if (len < size)
        return -ENOSPC;
    m = malloc(sizeof(*m));
    if (!m)
        return -ENOMEM;
    r = map_at(s->region_path, off, len, &base, &m->map_base, &m->map_len);
    if (r) {
        free(m);
        return r;
    }
    out->base = base;
    out->size = len;
    out->handle = (intptr_t)m;
    return 0;
}

static void soc_region_close(void *ctx, mdcom_region_map *map, int remove)
{
    mdcom_linux_soc *s = ctx;
    if (s->region_kind == REG_SHM) {
        mdcom_platform_linux()->region_close(NULL, map, remove);
        return;
    }
    if (map->handle) {
        soc_map *m = (soc_map *)map->handle;
        munmap(m->map_base, m->map_len); /* never removed: the carveout is hardware */
        free(m);
    }
    map->base = NULL;
    map->size = 0;
    map->handle = 0;
}

static int soc_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    mdcom_linux_soc *s = ctx;
    int64_t end = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
    for (;;) {
        struct pollfd pfd = {.fd = s->db_irq_fd, .events = POLLIN};
        struct timespec ts;
        int64_t left, slice;
        /* acquire: the caller re-checks its condition after we return */
        if (atomic_load_explicit(word, memory_order_acquire) != expected)
            return 0;
        left = end - now_ns();
        if (left <= 0)
            return -ETIMEDOUT;
        slice = left < RECHECK_NS ? left : RECHECK_NS;
        ts.tv_sec = slice / 1000000000ll;
        ts.tv_nsec = slice % 1000000000ll;
        if (ppoll(&pfd, 1, &ts, NULL) > 0 && (pfd.revents & POLLIN)) {
            uint32_t count, one = 1;
            if (read(s->db_irq_fd, &count, sizeof(count)) == (ssize_t)sizeof(count)) {
                s->db_irqs++;
                /* clear the mailbox's request before the interrupt is
                 * enabled again, else it fires at once (IPCC, MU: w1c) */
                if (s->db_has_ack)
                    ((volatile uint32_t *)s->db_regs)[s->db_ack / 4u] = s->db_ackval;
                if (s->db_reenable &&
                    write(s->db_irq_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
                    return -errno;
                return 0; /* an interrupt: the caller re-checks everything */
            }
        }
    }
}

static void soc_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    mdcom_linux_soc *s = ctx;
    /* Linux peers of this region sleep on the futex */
    mdcom_platform_linux()->doorbell.ring(NULL, word, chan);
    /* seq_cst fence: the region's stores are visible before the peer core's
     * interrupt (the register write through an uncached device mapping) */
    atomic_thread_fence(memory_order_seq_cst);
    ((volatile uint32_t *)s->db_regs)[s->db_reg / 4u] = s->db_val;
    s->db_rings++;
}

int mdcom_linux_soc_init(mdcom_linux_soc *s, const char *region_spec, const char *doorbell_spec,
                         char *err, size_t errlen)
{
    int r;
    if (!s)
        return fail(err, errlen, -EINVAL, "soc: no handle");
    memset(s, 0, sizeof(*s));
    s->db_irq_fd = -1;
    if (parse_region(s, region_spec))
        return fail(err, errlen, -EINVAL,
                    "soc: bad region spec '%s' (shm | devmem:<path>@<offset> | uio:<path>:map=<n>)",
                    region_spec);
    if (parse_doorbell(s, doorbell_spec))
        return fail(err, errlen, -EINVAL,
                    "soc: bad doorbell spec '%s' (futex | uio:<path>:map=<n>:reg=<off>:val=<v>"
                    "[:irq=<path>][:noreenable])",
                    doorbell_spec);
    s->plat = *mdcom_platform_linux();
    s->plat.ctx = s;
    s->plat.region_open = soc_region_open;
    s->plat.region_close = soc_region_close;
    if (s->db_kind == DB_UIO) {
        void *base, *mb;
        size_t ml;
        uint64_t have = uio_map_size(s->db_path, s->db_map);
        uint32_t top = (s->db_has_ack && s->db_ack > s->db_reg ? s->db_ack : s->db_reg) + 4u;
        if (have && have < top)
            return fail(err, errlen, -ENOSPC,
                        "soc: register 0x%x beyond map %u of %s (%" PRIu64 " bytes)", top - 4u,
                        s->db_map, s->db_path, have);
        r = map_at(s->db_path, (uint64_t)s->db_map * (uint64_t)sysconf(_SC_PAGESIZE), top, &base,
                   &mb, &ml);
        if (r)
            return fail(err, errlen, r, "soc: cannot map the mailbox register of %s: %s",
                        s->db_path, strerror(-r));
        s->db_regs = base; /* the map's start: registers at db_reg, db_ack */
        s->db_regs_len = ml;
        s->db_irq_fd = open(s->db_irq_path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (s->db_irq_fd < 0) {
            r = -errno;
            munmap(mb, ml);
            s->db_regs = NULL;
            return fail(err, errlen, r, "soc: cannot open the interrupt of %s: %s", s->db_irq_path,
                        strerror(-r));
        }
        s->plat.doorbell.wait = soc_wait;
        s->plat.doorbell.ring = soc_ring;
        s->plat.doorbell.ctx = s;
        s->db_map_base = mb; /* for munmap at close */
    }
    s->plat.name = "linux-soc";
    return 0;
}

void mdcom_linux_soc_close(mdcom_linux_soc *s)
{
    if (!s)
        return;
    if (s->db_irq_fd >= 0)
        close(s->db_irq_fd);
    s->db_irq_fd = -1;
    if (s->db_map_base)
        munmap(s->db_map_base, s->db_regs_len);
    s->db_map_base = NULL;
    s->db_regs = NULL;
}

int mdcom_linux_soc_irq_fd(const mdcom_linux_soc *s) { return s ? s->db_irq_fd : -1; }
uint64_t mdcom_linux_soc_irqs(const mdcom_linux_soc *s) { return s ? s->db_irqs : 0; }
uint64_t mdcom_linux_soc_rings(const mdcom_linux_soc *s) { return s ? s->db_rings : 0; }
