/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom-stat - show the state of an mdcom shared region, read-only.
 *
 *   mdcom-stat [--json] [--watch [SECONDS]] [--count N] REGION
 *   mdcom-stat [--json] --list       every region of this machine: state, users
 *   mdcom-stat --version
 *
 * REGION is a region name (the file $MDCOM_SHM_DIR/REGION, default
 * /dev/shm/REGION) or, when it contains a '/', a path to a region file.
 *
 * It opens the file O_RDONLY and maps it PROT_READ: it never writes to the
 * region, never claims a process slot, and needs no configuration. What it
 * shows is rebuilt from the region itself and trusted only after checking:
 *
 *   1. header fields are read once each; magic, wire version, header size and
 *      table counts are checked;
 *   2. the positions of the domain table and the channel directory come from
 *      the core's own layout computation, mdcom_wire_layout_compute() (on a
 *      placeholder configuration with the header's counts), never from the
 *      header's offsets, and must fit in the mapping;
 *   3. a configuration is rebuilt from the domain table and the directory,
 *      validated by mdcom_wire_layout_compute(), and the whole region compared
 *      with it by mdcom_wire_verify() - the same checks a remote makes at attach;
 *   4. only then are the live words (process table, queue positions, block
 *      states, lock words, counters) read, at offsets from that computed
 *      layout, which verify proved to lie inside the mapping. Their values are
 *      shown as found, with a warning for each one that is out of range.
 *
 * A region truncated while mapped (SIGBUS) is reported, not crashed on.
 *
 * Exit status: 0 region consistent (warnings may be printed), 1 usage,
 * 2 cannot open or map the file, 3 corrupted or inconsistent region,
 * 4 another wire version.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/mdcom.h"
#include "mdcom/platform.h"
#include "mdcom/wire.h"

enum { EX_OK = 0, EX_USAGE = 1, EX_OPEN = 2, EX_CORRUPT = 3, EX_VERSION = 4 };

#define MAX_WARN 64

/* ------------------------------------------------------------------ */
/* what was found                                                       */
/* ------------------------------------------------------------------ */

struct hdr_snap {
    uint32_t magic, version, hdr_size, region_size, layout_hash, generation, state;
    uint32_t n_domains, n_channels, dom_off, proc_off, dir_off, n_procs, data_off;
    uint32_t master_domain, fmt_pid, fmt_token;
};

struct proc_snap {
    uint32_t owner, pid, token, heartbeat;
    int alive; /* 1, 0, or negative: unknown / not a live-owner value */
};

struct chan_snap {
    char name[MDCOM_NAME_MAX];
    uint32_t type;
    uint32_t block_size, block_count, qcap, senders, receivers, data_size;
    /* FIFO */
    uint32_t enq, deq, queued, ev_seq, ev_waiters, filtered, errors, lost, reclaimed, discarded;
    uint32_t n_free, n_alloc, n_queued, n_held, n_bad, n_orphan;
    /* SMEM */
    uint32_t lock, lock_waiters;
    int lock_slot; /* -1 free, -2 invalid owner word, else slot */
};

struct report {
    char path[PATH_MAX];
    char name[MDCOM_NAME_MAX];
    uint64_t file_size;
    uint32_t mapped;
    int have_hdr; /* header fields read */
    struct hdr_snap h;
    int status; /* EX_* */
    char error[512];
    int verified;
    mdcom_domain_cfg dom[MDCOM_MAX_DOMAINS];
    char dom_name[MDCOM_MAX_DOMAINS][MDCOM_DOMAIN_NAME_MAX];
    struct proc_snap procs[MDCOM_MAX_PROCS];
    struct chan_snap *ch;
    uint32_t n_ch;
    char warn[MAX_WARN][160];
    uint32_t n_warn, n_warn_total;
};

static void warnf(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct report *r, const char *fmt, ...)
{
    va_list ap;
    r->n_warn_total++;
    if (r->n_warn >= MAX_WARN)
        return;
    va_start(ap, fmt);
    vsnprintf(r->warn[r->n_warn++], sizeof(r->warn[0]), fmt, ap);
    va_end(ap);
}

static int fail(struct report *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct report *r, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof(r->error), fmt, ap);
    va_end(ap);
    r->status = status;
    return status;
}

/* ------------------------------------------------------------------ */
/* reading shared words                                                 */
/* ------------------------------------------------------------------ */

/* Every shared word is read once, atomically (the region may be live). The
 * mapping is read-only: an atomic load never writes. */
static uint32_t rd(const void *p) { return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED); }

static sigjmp_buf g_bus_jmp;
static volatile sig_atomic_t g_bus_armed;

static void on_sigbus(int sig)
{
    (void)sig;
    if (g_bus_armed)
        siglongjmp(g_bus_jmp, 1);
    _exit(EX_CORRUPT);
}

static volatile sig_atomic_t g_stop;
static void on_sigint(int sig)
{
    (void)sig;
    g_stop = 1;
}

static const char *state_name(uint32_t st)
{
    switch (st) {
    case MDCOM_ST_EMPTY:
        return "EMPTY";
    case MDCOM_ST_FORMATTING:
        return "FORMATTING";
    case MDCOM_ST_READY:
        return "READY";
    case MDCOM_ST_TERMINATED:
        return "TERMINATED";
    default:
        return "INVALID";
    }
}

/* A placeholder configuration with the header's counts: the core computes
 * where the domain table and the directory are (nothing else does). */
static int table_layout(uint32_t n_domains, uint32_t n_channels, mdcom_wire_layout *lay)
{
    static char dnames[MDCOM_MAX_DOMAINS][12];
    static char cnames[MDCOM_MAX_DIR][12];
    static mdcom_domain_cfg d[MDCOM_MAX_DOMAINS];
    static mdcom_channel_cfg c[MDCOM_MAX_DIR];
    mdcom_config cfg;
    uint32_t i;
    memset(&cfg, 0, sizeof(cfg));
    for (i = 0; i < n_domains; i++) {
        snprintf(dnames[i], sizeof(dnames[i]), "d%u", i);
        d[i].name = dnames[i];
        d[i].id = i;
        d[i].role = i == 0 ? MDCOM_ROLE_MASTER : MDCOM_ROLE_REMOTE;
    }
    for (i = 0; i < n_channels; i++) {
        snprintf(cnames[i], sizeof(cnames[i]), "c%u", i);
        memset(&c[i], 0, sizeof(c[i]));
        c[i].name = cnames[i];
        c[i].type = MDCOM_CHAN_SMEM;
        c[i].size = 1;
        c[i].users = 1;
    }
    cfg.region_name = "stat";
    cfg.group = -1;
    cfg.domains = d;
    cfg.n_domains = n_domains;
    cfg.channels = c;
    cfg.n_channels = n_channels;
    return mdcom_wire_layout_compute(&cfg, lay, NULL, NULL, 0);
}

/* Copy a fixed-size name field, NUL-terminated, non-printables as '?'. */
static void copy_name(char *dst, const volatile char *src, size_t max)
{
    size_t i;
    for (i = 0; i < max; i++) {
        char ch = src[i];
        dst[i] = (char)((ch == '\0' || (ch >= 0x20 && ch < 0x7f)) ? ch : '?');
    }
    dst[max - 1] = '\0';
}

static void read_header(const uint8_t *b, struct hdr_snap *h)
{
    const mdcom_wire_hdr *w = (const mdcom_wire_hdr *)b;
    h->magic = rd(&w->magic);
    h->version = rd(&w->version);
    h->hdr_size = rd(&w->hdr_size);
    h->region_size = rd(&w->region_size);
    h->layout_hash = rd(&w->layout_hash);
    h->generation = rd(&w->generation);
    h->state = rd(&w->state);
    h->n_domains = rd(&w->n_domains);
    h->n_channels = rd(&w->n_channels);
    h->dom_off = rd(&w->dom_off);
    h->proc_off = rd(&w->proc_off);
    h->dir_off = rd(&w->dir_off);
    h->n_procs = rd(&w->n_procs);
    h->data_off = rd(&w->data_off);
    h->master_domain = rd(&w->master_domain);
    h->fmt_pid = rd(&w->fmt_pid);
    h->fmt_token = rd(&w->fmt_token);
}

/* Live words of one FIFO channel (offsets from our verified layout). */
static void read_fifo(struct report *r, const uint8_t *base, const mdcom_wire_chan_layout *cl,
                      struct chan_snap *c)
{
    const uint8_t *a = base + cl->off;
    const mdcom_wire_fifo_ctl *ctl = (const mdcom_wire_fifo_ctl *)a;
    const uint32_t *bs = (const uint32_t *)(a + cl->bstate_off);
    uint32_t id;
    c->deq = rd(&ctl->deq.pos); /* consumer first: then enq - deq >= 0 */
    c->enq = rd(&ctl->enq.pos);
    c->ev_seq = rd(&ctl->event.word);
    c->ev_waiters = rd(&ctl->event.waiters);
    if (c->ev_waiters < 0x80000000u) /* the count without the ARMED bit */
        c->ev_waiters &= MDCOM_WAITERS_COUNT;
    c->filtered = rd(&ctl->stats.filtered);
    c->errors = rd(&ctl->stats.errors);
    c->lost = rd(&ctl->stats.lost);
    c->reclaimed = rd(&ctl->stats.reclaimed);
    c->discarded = rd(&ctl->stats.discarded);
    c->queued = c->enq - c->deq;
    if (c->queued > cl->qcap)
        warnf(r,
              "channel '%s': %" PRIu32 " entries between consumer (%" PRIu32
              ") and producer (%" PRIu32 ") positions, queue depth %" PRIu32,
              c->name, c->queued, c->deq, c->enq, cl->qcap);
    if (c->ev_waiters > 4096u)
        warnf(r, "channel '%s': waiter count %" PRIu32 " is absurd", c->name, c->ev_waiters);
    if (c->errors)
        warnf(r, "channel '%s': %" PRIu32 " protocol errors detected", c->name, c->errors);
    for (id = 0; id < cl->block_count; id++) {
        uint32_t w = rd(&bs[id]);
        uint32_t st = MDCOM_BLK_STATE(w), owner = MDCOM_BLK_OWNER(w);
        if (MDCOM_BLK_SO(w) == MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0)) {
            c->n_free++;
            continue;
        }
        if (owner == 0 || owner > MDCOM_MAX_PROCS ||
            (st != MDCOM_BLK_ALLOC && st != MDCOM_BLK_QUEUED && st != MDCOM_BLK_HELD)) {
            c->n_bad++;
            continue;
        }
        if (st == MDCOM_BLK_ALLOC)
            c->n_alloc++;
        else if (st == MDCOM_BLK_QUEUED)
            c->n_queued++;
        else
            c->n_held++;
        /* a block held (not queued) by a slot without a live process */
        if (st != MDCOM_BLK_QUEUED && r->procs[owner - 1].alive != 1)
            c->n_orphan++;
    }
    if (c->n_bad)
        warnf(r, "channel '%s': %" PRIu32 " block state words hold no valid state/owner", c->name,
              c->n_bad);
    if (c->n_orphan)
        warnf(r, "channel '%s': %" PRIu32 " blocks held by processes that are not alive", c->name,
              c->n_orphan);
}

static void read_smem(struct report *r, const uint8_t *base, const mdcom_wire_chan_layout *cl,
                      struct chan_snap *c)
{
    const mdcom_wire_smem_ctl *ctl = (const mdcom_wire_smem_ctl *)(base + cl->off);
    c->lock = rd(&ctl->lock.word);
    c->lock_waiters = rd(&ctl->lock.waiters);
    if (c->lock == 0) {
        c->lock_slot = -1;
    } else if (c->lock <= 0xffffffu && MDCOM_LOCK_SLOT(c->lock) < MDCOM_MAX_PROCS) {
        c->lock_slot = (int)MDCOM_LOCK_SLOT(c->lock);
        if (r->procs[c->lock_slot].alive != 1)
            warnf(r, "channel '%s': lock held by slot %d whose process is not alive", c->name,
                  c->lock_slot);
    } else {
        c->lock_slot = -2;
        warnf(r, "channel '%s': lock word 0x%08" PRIx32 " is not a process token", c->name,
              c->lock);
    }
}

/* Rebuild the configuration from the region, have the core validate and
 * verify it, then read the live words. Returns an EX_* status. */
static int inspect(struct report *r, const uint8_t *b, uint32_t size)
{
    const mdcom_platform *plat = mdcom_platform_linux();
    mdcom_wire_layout tl, lay;
    mdcom_wire_chan_layout *cls = NULL;
    mdcom_channel_cfg *ccfg = NULL;
    char(*cnames)[MDCOM_NAME_MAX] = NULL;
    mdcom_config cfg;
    char ebuf[256] = "";
    struct hdr_snap *h = &r->h;
    uint32_t i, n_ch;
    int rc;

    if (size < MDCOM_HDR_SIZE)
        return fail(r, EX_CORRUPT, "the file has %" PRIu32 " bytes, less than an mdcom header (%u)",
                    size, MDCOM_HDR_SIZE);
    read_header(b, h);
    r->have_hdr = 1;
    if (h->magic != MDCOM_MAGIC)
        return fail(r, EX_CORRUPT, "bad magic 0x%08" PRIx32 ": not an mdcom region", h->magic);
    if (h->version != MDCOM_WIRE_VERSION)
        return fail(r, EX_VERSION, "wire version %" PRIu32 ", this tool reads version %u",
                    h->version, MDCOM_WIRE_VERSION);
    if (h->hdr_size != MDCOM_HDR_SIZE)
        return fail(r, EX_CORRUPT, "header size %" PRIu32 ", expected %u", h->hdr_size,
                    MDCOM_HDR_SIZE);
    if (h->n_domains == 0 || h->n_domains > MDCOM_MAX_DOMAINS)
        return fail(r, EX_CORRUPT, "n_domains %" PRIu32 " is not 1..%u", h->n_domains,
                    MDCOM_MAX_DOMAINS);
    if (h->n_channels > MDCOM_MAX_DIR)
        return fail(r, EX_CORRUPT, "n_channels %" PRIu32 " is more than %u", h->n_channels,
                    MDCOM_MAX_DIR);
    n_ch = h->n_channels;
    if (table_layout(h->n_domains, n_ch, &tl) != 0)
        return fail(r, EX_CORRUPT, "cannot lay out %" PRIu32 " domains and %" PRIu32 " channels",
                    h->n_domains, n_ch);
    if (tl.data_off > size)
        return fail(r, EX_CORRUPT,
                    "the tables of %" PRIu32 " domains and %" PRIu32 " channels need %" PRIu32
                    " bytes, the file has %" PRIu32,
                    h->n_domains, n_ch, tl.data_off, size);

    /* domains */
    for (i = 0; i < h->n_domains; i++) {
        const mdcom_wire_domain *d = (const mdcom_wire_domain *)(b + tl.dom_off) + i;
        copy_name(r->dom_name[i], d->name, MDCOM_DOMAIN_NAME_MAX);
        r->dom[i].name = r->dom_name[i];
        r->dom[i].id = rd(&d->id);
        r->dom[i].role = rd(&d->role);
    }
    /* directory */
    r->ch = calloc(n_ch ? n_ch : 1, sizeof(*r->ch));
    cls = calloc(n_ch ? n_ch : 1, sizeof(*cls));
    ccfg = calloc(n_ch ? n_ch : 1, sizeof(*ccfg));
    cnames = calloc(n_ch ? n_ch : 1, sizeof(*cnames));
    if (!r->ch || !cls || !ccfg || !cnames) {
        rc = fail(r, EX_OPEN, "out of memory");
        goto out;
    }
    r->n_ch = n_ch;
    for (i = 0; i < n_ch; i++) {
        const mdcom_wire_dirent *d = (const mdcom_wire_dirent *)(b + tl.dir_off) + i;
        struct chan_snap *c = &r->ch[i];
        copy_name(cnames[i], d->name, MDCOM_NAME_MAX);
        memcpy(c->name, cnames[i], MDCOM_NAME_MAX);
        c->type = rd(&d->type);
        c->block_size = rd(&d->block_size);
        c->block_count = rd(&d->block_count);
        c->qcap = rd(&d->queue_depth);
        c->senders = rd(&d->senders);
        c->receivers = rd(&d->receivers);
        ccfg[i].name = cnames[i];
        ccfg[i].type = c->type;
        if (c->type == MDCOM_CHAN_SMEM) {
            ccfg[i].size = c->block_size;
            ccfg[i].users = c->senders;
        } else {
            ccfg[i].block_size = c->block_size;
            ccfg[i].block_count = c->block_count;
            ccfg[i].queue_depth = c->qcap;
            ccfg[i].senders = c->senders;
            ccfg[i].receivers = c->receivers;
        }
    }

    /* the core validates the rebuilt configuration and compares the region */
    memset(&cfg, 0, sizeof(cfg));
    cfg.region_name = r->name[0] ? r->name : "region";
    cfg.region_size = h->region_size;
    cfg.group = -1;
    cfg.domains = r->dom;
    cfg.n_domains = h->n_domains;
    cfg.channels = ccfg;
    cfg.n_channels = n_ch;
    rc = mdcom_wire_layout_compute(&cfg, &lay, cls, ebuf, sizeof(ebuf));
    if (rc != 0) {
        rc = fail(r, EX_CORRUPT, "the region describes an invalid system: %s", ebuf);
        goto out;
    }
    rc = mdcom_wire_verify(b, size, &cfg, ebuf, sizeof(ebuf));
    if (rc != 0) {
        rc = fail(r, rc == -EPROTONOSUPPORT ? EX_VERSION : EX_CORRUPT,
                  "the region is inconsistent: %s", ebuf);
        goto out;
    }
    r->verified = 1;
    if (h->state != MDCOM_ST_READY && h->state != MDCOM_ST_TERMINATED)
        warnf(r, "state %s (0x%08" PRIx32 "): the region is not ready", state_name(h->state),
              h->state);
    if (h->region_size != size)
        warnf(r, "region_size %" PRIu32 " but the file has %" PRIu32 " bytes", h->region_size,
              size);

    /* process table (offset from the computed layout) */
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        const mdcom_wire_proc *p = (const mdcom_wire_proc *)(b + lay.proc_off) + i;
        struct proc_snap *s = &r->procs[i];
        s->owner = rd(&p->owner);
        s->pid = rd(&p->pid);
        s->token = rd(&p->token);
        s->heartbeat = rd(&p->heartbeat);
        s->alive = -1;
        if (s->owner >= MDCOM_PROC_DOMAIN_BASE &&
            s->owner < MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS) {
            uint32_t dom = s->owner - MDCOM_PROC_DOMAIN_BASE;
            uint32_t k, known = 0;
            for (k = 0; k < h->n_domains; k++)
                known |= r->dom[k].id == dom;
            if (!known)
                warnf(r, "process slot %u: domain %" PRIu32 " is not in the domain table", i, dom);
            s->alive = plat->proc_alive ? plat->proc_alive(plat->ctx, s->pid, s->token) : -ENOSYS;
        } else if (s->owner != MDCOM_PROC_FREE && s->owner != MDCOM_PROC_CLAIMING) {
            warnf(r, "process slot %u: owner word 0x%08" PRIx32 " is invalid", i, s->owner);
        }
    }
    for (i = 0; i < n_ch; i++) {
        struct chan_snap *c = &r->ch[i];
        c->qcap = cls[i].qcap;
        c->data_size = cls[i].data_size;
        if (cls[i].type == MDCOM_CHAN_FIFO)
            read_fifo(r, b, &cls[i], c);
        else
            read_smem(r, b, &cls[i], c);
    }
    rc = EX_OK;
out:
    free(cls);
    free(ccfg);
    free(cnames);
    r->status = rc;
    return rc;
}

/* Open, map read-only, inspect, unmap. */
static int snapshot(struct report *r, const char *arg)
{
    const char *dir = getenv("MDCOM_SHM_DIR");
    const char *slash = strrchr(arg, '/');
    struct stat st;
    void *p;
    int fd, n, rc;

    memset(r, 0, sizeof(*r));
    if (slash) {
        n = snprintf(r->path, sizeof(r->path), "%s", arg);
        snprintf(r->name, sizeof(r->name), "%s", slash + 1);
    } else {
        if (!dir || !*dir)
            dir = "/dev/shm";
        n = snprintf(r->path, sizeof(r->path), "%s/%s", dir, arg);
        snprintf(r->name, sizeof(r->name), "%s", arg);
    }
    if (n < 0 || (size_t)n >= sizeof(r->path))
        return fail(r, EX_USAGE, "region path too long");
    fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return fail(r, EX_OPEN, "cannot open %s: %s", r->path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = fail(r, EX_OPEN, "cannot stat %s: %s", r->path, strerror(errno));
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(r, EX_OPEN, "%s is not a regular file", r->path);
    }
    r->file_size = (uint64_t)st.st_size;
    if (r->file_size > 0xffffffffull) {
        close(fd);
        return fail(r, EX_CORRUPT, "%s has %" PRIu64 " bytes, more than a region can (4 GiB)",
                    r->path, r->file_size);
    }
    if (r->file_size == 0) {
        close(fd);
        return fail(r, EX_CORRUPT, "%s is empty (not formatted yet?)", r->path);
    }
    p = mmap(NULL, (size_t)r->file_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail(r, EX_OPEN, "cannot map %s: %s", r->path, strerror(errno));
    r->mapped = (uint32_t)r->file_size;
    if (sigsetjmp(g_bus_jmp, 1) == 0) {
        g_bus_armed = 1;
        rc = inspect(r, (const uint8_t *)p, r->mapped);
    } else {
        r->verified = 0;
        rc = fail(r, EX_CORRUPT, "%s was truncated while being read (SIGBUS)", r->path);
    }
    g_bus_armed = 0;
    munmap(p, (size_t)r->file_size);
    return rc;
}

/* ------------------------------------------------------------------ */
/* output                                                               */
/* ------------------------------------------------------------------ */

static const char *domain_name(const struct report *r, uint32_t id)
{
    uint32_t i;
    if (!r->verified)
        return "?";
    for (i = 0; i < r->h.n_domains; i++)
        if (r->dom[i].id == id)
            return r->dom[i].name;
    return "?";
}

static const char *alive_name(int a) { return a == 1 ? "alive" : a == 0 ? "dead" : "unknown"; }

static void mask_names(const struct report *r, uint32_t mask, char *buf, size_t cap)
{
    size_t pos = 0;
    uint32_t d;
    buf[0] = '\0';
    for (d = 0; d < MDCOM_MAX_DOMAINS && pos < cap; d++) {
        if (!((mask >> d) & 1u))
            continue;
        pos += (size_t)snprintf(buf + pos, cap - pos, "%s%s", pos ? "," : "", domain_name(r, d));
    }
}

static void print_text(const struct report *r, FILE *o)
{
    const struct hdr_snap *h = &r->h;
    uint32_t i;
    fprintf(o, "region '%s' (%s), %" PRIu64 " bytes\n", r->name, r->path, r->file_size);
    if (r->have_hdr) {
        fprintf(o,
                "header: magic 0x%08" PRIx32 "  version %" PRIu32 "  generation %" PRIu32
                "  state %s  region_size %" PRIu32 "  layout_hash 0x%08" PRIx32 "\n",
                h->magic, h->version, h->generation, state_name(h->state), h->region_size,
                h->layout_hash);
        fprintf(o,
                "        %" PRIu32 " domains, %" PRIu32 " channels, master domain %" PRIu32
                ", %s by pid %" PRIu32 "\n",
                h->n_domains, h->n_channels, h->master_domain,
                h->fmt_pid & MDCOM_FMT_CLAIM ? "claimed" : "formatted",
                h->fmt_pid & ~MDCOM_FMT_CLAIM);
    }
    if (r->status != EX_OK) {
        fprintf(o, "error: %s\n", r->error);
        return;
    }
    fprintf(o, "domains:\n  %-4s %-16s %-7s %s\n", "id", "name", "role", "processes");
    for (i = 0; i < h->n_domains; i++) {
        uint32_t k, live = 0, dead = 0;
        for (k = 0; k < MDCOM_MAX_PROCS; k++) {
            if (r->procs[k].owner != MDCOM_PROC_DOMAIN_BASE + r->dom[i].id)
                continue;
            if (r->procs[k].alive == 0)
                dead++;
            else
                live++;
        }
        fprintf(o, "  %-4" PRIu32 " %-16s %-7s %" PRIu32 " alive, %" PRIu32 " dead\n", r->dom[i].id,
                r->dom[i].name, r->dom[i].role == MDCOM_ROLE_MASTER ? "master" : "remote", live,
                dead);
    }
    fprintf(o, "processes:\n  %-4s %-16s %-10s %s\n", "slot", "domain", "pid", "state");
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        const struct proc_snap *p = &r->procs[i];
        if (p->owner == MDCOM_PROC_FREE)
            continue;
        if (p->owner == MDCOM_PROC_CLAIMING)
            fprintf(o, "  %-4u %-16s %-10" PRIu32 " %s\n", i, "-", p->pid, "claiming");
        else if (p->owner >= MDCOM_PROC_DOMAIN_BASE &&
                 p->owner < MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS)
            fprintf(o, "  %-4u %-16s %-10" PRIu32 " %s\n", i,
                    domain_name(r, p->owner - MDCOM_PROC_DOMAIN_BASE), p->pid,
                    alive_name(p->alive));
        else
            fprintf(o, "  %-4u %-16s %-10" PRIu32 " invalid owner 0x%08" PRIx32 "\n", i, "?",
                    p->pid, p->owner);
    }
    fprintf(o, "channels:\n");
    for (i = 0; i < r->n_ch; i++) {
        const struct chan_snap *c = &r->ch[i];
        char s[160], rcv[160];
        if (c->type == MDCOM_CHAN_FIFO) {
            mask_names(r, c->senders, s, sizeof(s));
            mask_names(r, c->receivers, rcv, sizeof(rcv));
            fprintf(o,
                    "  %-4u %-20s fifo  %" PRIu32 " B x %" PRIu32 " blocks, depth %" PRIu32
                    "  (%s -> %s)\n"
                    "       queued %" PRIu32 "  free %" PRIu32 "/%" PRIu32 "  alloc %" PRIu32
                    "  in-queue %" PRIu32 "  held %" PRIu32 "  orphaned %" PRIu32
                    "  invalid %" PRIu32 "  filtered %" PRIu32 "  errors %" PRIu32 "  lost %" PRIu32
                    "  reclaimed %" PRIu32 "  discarded %" PRIu32 "  waiters %" PRIu32 "\n",
                    i, c->name, c->block_size, c->block_count, c->qcap, s, rcv, c->queued,
                    c->n_free, c->block_count, c->n_alloc, c->n_queued, c->n_held, c->n_orphan,
                    c->n_bad, c->filtered, c->errors, c->lost, c->reclaimed, c->discarded,
                    c->ev_waiters);
        } else {
            mask_names(r, c->senders, s, sizeof(s));
            fprintf(o, "  %-4u %-20s smem  %" PRIu32 " B  (%s)\n       lock ", i, c->name,
                    c->data_size, s);
            if (c->lock_slot == -1)
                fprintf(o, "free");
            else if (c->lock_slot == -2)
                fprintf(o, "invalid word 0x%08" PRIx32, c->lock);
            else
                fprintf(o, "held by slot %d (pid %" PRIu32 ", %s)", c->lock_slot,
                        r->procs[c->lock_slot].pid, alive_name(r->procs[c->lock_slot].alive));
            fprintf(o, "  waiters %" PRIu32 "\n", c->lock_waiters);
        }
    }
    for (i = 0; i < r->n_warn; i++)
        fprintf(o, "warning: %s\n", r->warn[i]);
    if (r->n_warn_total > r->n_warn)
        fprintf(o, "warning: ... %" PRIu32 " more\n", r->n_warn_total - r->n_warn);
}

/* JSON string: names were checked or sanitised to printable ASCII; escape " and \. */
static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

/* JSON array of the names of the domains in mask (ids without a domain: "?"). */
static void json_names(const struct report *r, FILE *o, uint32_t mask)
{
    uint32_t d;
    int first = 1;
    fputc('[', o);
    for (d = 0; d < MDCOM_MAX_DOMAINS; d++) {
        if (!((mask >> d) & 1u))
            continue;
        if (!first)
            fputc(',', o);
        json_str(o, domain_name(r, d));
        first = 0;
    }
    fputc(']', o);
}

static void print_json(const struct report *r, FILE *o)
{
    const struct hdr_snap *h = &r->h;
    uint32_t i;
    fprintf(o, "{\"region\":");
    json_str(o, r->name);
    fprintf(o, ",\"path\":");
    json_str(o, r->path);
    fprintf(o, ",\"file_size\":%" PRIu64 ",\"ok\":%s,\"status\":%d", r->file_size,
            r->status == EX_OK ? "true" : "false", r->status);
    if (r->status != EX_OK) {
        fprintf(o, ",\"error\":");
        json_str(o, r->error);
    }
    if (r->have_hdr)
        fprintf(o,
                ",\"header\":{\"magic\":%" PRIu32 ",\"version\":%" PRIu32 ",\"generation\":%" PRIu32
                ",\"state\":\"%s\",\"state_word\":%" PRIu32 ",\"region_size\":%" PRIu32
                ",\"layout_hash\":%" PRIu32 ",\"n_domains\":%" PRIu32 ",\"n_channels\":%" PRIu32
                ",\"master_domain\":%" PRIu32 ",\"fmt_pid\":%" PRIu32 "}",
                h->magic, h->version, h->generation, state_name(h->state), h->state, h->region_size,
                h->layout_hash, h->n_domains, h->n_channels, h->master_domain, h->fmt_pid);
    if (r->status == EX_OK) {
        fprintf(o, ",\"domains\":[");
        for (i = 0; i < h->n_domains; i++) {
            fprintf(o, "%s{\"id\":%" PRIu32 ",\"name\":", i ? "," : "", r->dom[i].id);
            json_str(o, r->dom[i].name);
            fprintf(o, ",\"role\":\"%s\"}",
                    r->dom[i].role == MDCOM_ROLE_MASTER ? "master" : "remote");
        }
        fprintf(o, "],\"processes\":[");
        {
            int first = 1;
            for (i = 0; i < MDCOM_MAX_PROCS; i++) {
                const struct proc_snap *p = &r->procs[i];
                const char *state;
                if (p->owner == MDCOM_PROC_FREE)
                    continue;
                if (p->owner == MDCOM_PROC_CLAIMING)
                    state = "claiming";
                else if (p->owner >= MDCOM_PROC_DOMAIN_BASE &&
                         p->owner < MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS)
                    state = alive_name(p->alive);
                else
                    state = "invalid";
                fprintf(o,
                        "%s{\"slot\":%u,\"owner\":%" PRIu32 ",\"domain\":%" PRId64
                        ",\"pid\":%" PRIu32 ",\"state\":\"%s\",\"domain_name\":",
                        first ? "" : ",", i, p->owner,
                        p->owner >= MDCOM_PROC_DOMAIN_BASE &&
                                p->owner < MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS
                            ? (int64_t)(p->owner - MDCOM_PROC_DOMAIN_BASE)
                            : (int64_t)-1,
                        p->pid, state);
                json_str(o, p->owner >= MDCOM_PROC_DOMAIN_BASE &&
                                    p->owner < MDCOM_PROC_DOMAIN_BASE + MDCOM_MAX_DOMAINS
                                ? domain_name(r, p->owner - MDCOM_PROC_DOMAIN_BASE)
                                : "?");
                fputc('}', o);
                first = 0;
            }
        }
        fprintf(o, "],\"channels\":[");
        for (i = 0; i < r->n_ch; i++) {
            const struct chan_snap *c = &r->ch[i];
            fprintf(o, "%s{\"index\":%u,\"name\":", i ? "," : "", i);
            json_str(o, c->name);
            if (c->type == MDCOM_CHAN_FIFO)
                fprintf(o,
                        ",\"type\":\"fifo\",\"block_size\":%" PRIu32 ",\"block_count\":%" PRIu32
                        ",\"queue_depth\":%" PRIu32 ",\"senders\":%" PRIu32
                        ",\"receivers\":%" PRIu32 ",\"queued\":%" PRIu32 ",\"free_blocks\":%" PRIu32
                        ",\"alloc_blocks\":%" PRIu32 ",\"queued_blocks\":%" PRIu32
                        ",\"held_blocks\":%" PRIu32 ",\"orphaned_blocks\":%" PRIu32
                        ",\"invalid_blocks\":%" PRIu32 ",\"filtered\":%" PRIu32
                        ",\"errors\":%" PRIu32 ",\"waiters\":%" PRIu32 ",\"lost\":%" PRIu32
                        ",\"reclaimed\":%" PRIu32 ",\"discarded\":%" PRIu32,
                        c->block_size, c->block_count, c->qcap, c->senders, c->receivers, c->queued,
                        c->n_free, c->n_alloc, c->n_queued, c->n_held, c->n_orphan, c->n_bad,
                        c->filtered, c->errors, c->ev_waiters, c->lost, c->reclaimed, c->discarded);
            else
                fprintf(o,
                        ",\"type\":\"smem\",\"size\":%" PRIu32 ",\"users\":%" PRIu32
                        ",\"lock_slot\":%d,\"lock_word\":%" PRIu32 ",\"lock_owner_pid\":%" PRIu32
                        ",\"lock_owner_state\":\"%s\",\"waiters\":%" PRIu32,
                        c->data_size, c->senders, c->lock_slot, c->lock,
                        c->lock_slot >= 0 ? r->procs[c->lock_slot].pid : 0,
                        c->lock_slot >= 0    ? alive_name(r->procs[c->lock_slot].alive)
                        : c->lock_slot == -1 ? "free"
                                             : "invalid",
                        c->lock_waiters);
            /* the masks above, as names */
            if (c->type == MDCOM_CHAN_FIFO) {
                fprintf(o, ",\"sender_names\":");
                json_names(r, o, c->senders);
                fprintf(o, ",\"receiver_names\":");
                json_names(r, o, c->receivers);
            } else {
                fprintf(o, ",\"user_names\":");
                json_names(r, o, c->senders);
            }
            fputc('}', o);
        }
        fprintf(o, "],\"warnings\":[");
        for (i = 0; i < r->n_warn; i++) {
            fprintf(o, "%s", i ? "," : "");
            json_str(o, r->warn[i]);
        }
        fprintf(o, "],\"warnings_total\":%" PRIu32, r->n_warn_total);
    }
    fprintf(o, "}\n");
}

static void usage(FILE *o)
{
    fprintf(o, "usage: mdcom-stat [--json] [--watch [SECONDS]] [--count N] REGION\n"
               "       mdcom-stat [--json] --list\n"
               "  REGION       region name ($MDCOM_SHM_DIR or /dev/shm) or a path containing '/'\n"
               "  --json       one JSON object per snapshot\n"
               "  --watch [S]  repeat every S seconds (default 1) until interrupted\n"
               "  --count N    with --watch: stop after N snapshots\n"
               "  --list       the mdcom regions in $MDCOM_SHM_DIR (or /dev/shm): state,\n"
               "               generation, size and the processes of each domain\n"
               "  --version    print the version\n"
               "Reads the region without changing it. Exit status: 0 consistent, 1 usage,\n"
               "2 cannot open/map, 3 corrupted or inconsistent, 4 other wire version.\n");
}

/* --list: every file of the region directory that holds an mdcom header.
 * Files that are not mdcom regions (bad magic, too small, not regular) are
 * skipped; mdcom regions that fail the checks are listed with their error. */
static int list_regions(int json)
{
    const char *dir = getenv("MDCOM_SHM_DIR");
    struct dirent **ents = NULL;
    static struct report rep;
    int n, k, shown = 0, worst = EX_OK;
    if (!dir || !*dir)
        dir = "/dev/shm";
    n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "mdcom-stat: cannot read %s: %s\n", dir, strerror(errno));
        return EX_OPEN;
    }
    if (json)
        printf("{\"dir\":\"%s\",\"regions\":[", dir);
    else
        printf("%-24s %-9s %-5s %-10s %s\n", "REGION", "STATE", "GEN", "BYTES", "USERS");
    for (k = 0; k < n; k++) {
        const char *name = ents[k]->d_name;
        char path[PATH_MAX];
        uint32_t i;
        if (name[0] == '.' || snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
            continue;
        snapshot(&rep, path);
        free(rep.ch);
        rep.ch = NULL;
        if (!rep.have_hdr || rep.h.magic != MDCOM_MAGIC)
            continue; /* not an mdcom region */
        if (rep.status > worst)
            worst = rep.status;
        if (json) {
            printf("%s{\"region\":", shown ? "," : "");
            json_str(stdout, rep.name);
            printf(",\"path\":");
            json_str(stdout, rep.path);
            printf(",\"ok\":%s,\"state\":\"%s\",\"generation\":%" PRIu32 ",\"file_size\":%" PRIu64
                   ",\"users\":[",
                   rep.status == EX_OK ? "true" : "false", state_name(rep.h.state),
                   rep.h.generation, rep.file_size);
        } else {
            printf("%-24s %-9s %-5" PRIu32 " %-10" PRIu64 " ", rep.name, state_name(rep.h.state),
                   rep.h.generation, rep.file_size);
        }
        shown++;
        if (rep.status != EX_OK) {
            if (json) {
                printf("],\"error\":");
                json_str(stdout, rep.error);
                printf("}");
            } else {
                printf("error: %s\n", rep.error);
            }
            continue;
        }
        /* users: the live and dead processes of each domain */
        {
            int first = 1;
            for (i = 0; i < rep.h.n_domains; i++) {
                uint32_t p, live = 0, dead = 0;
                for (p = 0; p < MDCOM_MAX_PROCS; p++) {
                    if (rep.procs[p].owner != MDCOM_PROC_DOMAIN_BASE + rep.dom[i].id)
                        continue;
                    if (rep.procs[p].alive == 0)
                        dead++;
                    else
                        live++;
                }
                if (!live && !dead)
                    continue;
                if (json) {
                    printf("%s{\"domain\":", first ? "" : ",");
                    json_str(stdout, rep.dom[i].name);
                    printf(",\"alive\":%" PRIu32 ",\"dead\":%" PRIu32 "}", live, dead);
                } else {
                    printf("%s%s:%" PRIu32, first ? "" : " ", rep.dom[i].name, live);
                    if (dead)
                        printf("(+%" PRIu32 " dead)", dead);
                }
                first = 0;
            }
            if (json)
                printf("]}");
            else
                printf("%s\n", first ? "-" : "");
        }
    }
    for (k = 0; k < n; k++)
        free(ents[k]);
    free(ents);
    if (json)
        printf("]}\n");
    else if (!shown)
        printf("(no mdcom regions in %s)\n", dir);
    return worst;
}

int main(int argc, char **argv)
{
    const char *region = NULL;
    int json = 0, watch = 0;
    double interval = 1.0;
    long count = -1, done = 0;
    int i, rc = EX_OK;
    struct sigaction sa;
    static struct report rep;

    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"watch", optional_argument, NULL, 'w'},
        {"count", required_argument, NULL, 'n'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int opt, list = 0;
    while ((opt = getopt_long(argc, argv, "jw::n:lhV", opts, NULL)) != -1) {
        char *end;
        const char *arg = optarg;
        switch (opt) {
        case 'j':
            json = 1;
            break;
        case 'w':
            watch = 1;
            /* "--watch 0.5" as well as "--watch=0.5": a numeric next word is the interval */
            if (!arg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
                arg = argv[optind++];
            if (arg) {
                interval = strtod(arg, &end);
                if (*end || interval < 0.01 || interval > 86400) {
                    fprintf(stderr, "mdcom-stat: --watch: interval must be 0.01..86400 s\n");
                    return EX_USAGE;
                }
            }
            break;
        case 'n':
            count = arg ? strtol(arg, &end, 10) : 0; /* getopt gives -n its argument */
            if (!arg || *end || count < 1) {
                fprintf(stderr, "mdcom-stat: --count: must be a positive number\n");
                return EX_USAGE;
            }
            break;
        case 'l':
            list = 1;
            break;
        case 'h':
            usage(stdout);
            return EX_OK;
        case 'V':
            printf("mdcom-stat %s (wire %u)\n", MDCOM_VERSION_STRING, MDCOM_WIRE_VERSION);
            return EX_OK;
        default:
            usage(stderr);
            return EX_USAGE;
        }
    }
    for (i = optind; i < argc; i++) {
        if (region) {
            usage(stderr);
            return EX_USAGE;
        }
        region = argv[i];
    }
    if (list) {
        if (region || watch) {
            usage(stderr);
            return EX_USAGE;
        }
        return list_regions(json);
    }
    if (!region || !*region) {
        usage(stderr);
        return EX_USAGE;
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sigbus;
    sigaction(SIGBUS, &sa, NULL);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    for (;;) {
        rc = snapshot(&rep, region);
        if (watch && !json && isatty(STDOUT_FILENO))
            fputs("\033[H\033[2J", stdout);
        if (json)
            print_json(&rep, stdout);
        else
            print_text(&rep, stdout);
        if (rc != EX_OK)
            fprintf(stderr, "mdcom-stat: %s\n", rep.error);
        fflush(stdout);
        free(rep.ch);
        rep.ch = NULL;
        if (!watch || (count > 0 && ++done >= count) || g_stop)
            break;
        {
            struct timespec ts;
            ts.tv_sec = (time_t)interval;
            ts.tv_nsec = (long)((interval - (double)ts.tv_sec) * 1e9);
            nanosleep(&ts, NULL); /* a signal cuts it short: g_stop ends the loop */
        }
        if (g_stop)
            break;
        if (!json)
            fputc('\n', stdout);
    }
    return rc;
}
