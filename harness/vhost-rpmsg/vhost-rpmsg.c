/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-rpmsg - an mdcom RPMsg virtio device (virtio id 7) behind a
 * vhost-user socket, for a User-Mode Linux kernel booted with
 * virtio_uml.device=SOCKET:7 (tests/kernel).
 *
 * The vhost-user back-end side is written from the protocol specification
 * (QEMU docs/interop/vhost-user.rst): the front-end (the kernel) connects to
 * our listening Unix socket, sends its guest memory as file descriptors
 * (SET_MEM_TABLE, SCM_RIGHTS), the vring addresses and sizes, an eventfd per
 * vring for its kicks and a file descriptor per vring for our calls. We map
 * the memory, translate the vring addresses (front-end user addresses) and the
 * descriptor addresses (guest physical) through the memory table and run
 * mdcom's RPMsg REMOTE role (mdcom_rpmsg_init_bound) on the kernel's vrings.
 *
 * The RPMsg side: an echo endpoint announced as "rpmsg-raw" (the name Linux's
 * rpmsg_char binds to, so the kernel creates /dev/rpmsgN for it), echoing
 * every message back to its source and keeping a count and a CRC-32 of all
 * payload bytes; a control endpoint at a fixed address answering "S" with
 * "count crc" and "R" by resetting both; announcements from the kernel are
 * logged and answered with a "hello <name>" message to the announced address.
 * With --mixed-echo the echo answers in turn with a copy, a zero-copy send and by holding the
 * RX buffer and echoing it later from the main loop (order kept, contents
 * checked before the echo). More control requests drive tests/kernel's
 * steps from the guest: "X" counters, "P" RX buffers the kernel has posted,
 * "F addr n file" fill the TX ring (below), "M addr" send malformed input,
 * "C" withdraw what "M" made the kernel create, "A" / "D" create / destroy
 * a second endpoint named "rpmsg-raw" (same-name binding).
 *
 * Usage: vhost-rpmsg --socket PATH [--echo-addr N] [--ctl-addr N] [--no-backend-req] [--mixed-echo]
 * (--mixed-echo: the echo by copy, zero copy and held buffers in turn;
 * without it, copy only, as bench-uml next to this file measures it)
 * Log lines on stderr ("vhost-rpmsg: ..."); exits 0 when the front-end closes
 * the connection, 1 on an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/rpmsg.h"
#include "mdcom_crc32.h"
#include "unix_addr.h"

/* ---- vhost-user wire format (vhost-user.rst, "Message format") ---------- */
enum {
    VU_GET_FEATURES = 1,
    VU_SET_FEATURES = 2,
    VU_SET_OWNER = 3,
    VU_RESET_OWNER = 4,
    VU_SET_MEM_TABLE = 5,
    VU_SET_LOG_BASE = 6,
    VU_SET_LOG_FD = 7,
    VU_SET_VRING_NUM = 8,
    VU_SET_VRING_ADDR = 9,
    VU_SET_VRING_BASE = 10,
    VU_GET_VRING_BASE = 11,
    VU_SET_VRING_KICK = 12,
    VU_SET_VRING_CALL = 13,
    VU_SET_VRING_ERR = 14,
    VU_GET_PROTOCOL_FEATURES = 15,
    VU_SET_PROTOCOL_FEATURES = 16,
    VU_GET_QUEUE_NUM = 17,
    VU_SET_VRING_ENABLE = 18,
    VU_SET_BACKEND_REQ_FD = 21,
};
#define VU_VERSION 0x1u
#define VU_FLAG_REPLY 0x4u
#define VU_FLAG_NEED_REPLY 0x8u
#define VU_F_PROTOCOL_FEATURES 30
#define VU_PROTOCOL_F_REPLY_ACK 3
#define VU_PROTOCOL_F_BACKEND_REQ 5
#define VU_VRING_NOFD 0x100u
#define VU_MAX_REGIONS 8
#define VIRTIO_F_VERSION_1 32

struct vu_hdr {
    uint32_t request, flags, size;
};
struct vu_region {
    uint64_t guest_addr, size, user_addr, mmap_offset;
};
struct vu_mem {
    uint32_t num, padding;
    struct vu_region r[VU_MAX_REGIONS];
};
struct vu_state {
    uint32_t index, num;
};
struct vu_addr {
    uint32_t index, flags;
    uint64_t desc, used, avail, log;
};
_Static_assert(sizeof(struct vu_hdr) == 12, "header");
_Static_assert(sizeof(struct vu_mem) == 8 + 32 * VU_MAX_REGIONS, "memory table");
_Static_assert(sizeof(struct vu_addr) == 40, "vring address");

struct map {
    uint64_t gpa, uva, size;
    uint8_t *base; /* our pointer to guest_addr */
    void *mm;      /* the whole mmap (from file offset 0) */
    size_t mm_len;
};

struct vq {
    uint32_t num;
    uint64_t desc, used, avail; /* front-end user addresses */
    int have_addr, enabled;
    int kick, call;
};

static struct dev {
    int sock;
    uint64_t features, protocol;
    int no_backend_req; /* --no-backend-req: do not offer BACKEND_REQ (shows
                           that virtio_uml 6.1 cannot probe without it) */
    struct map map[VU_MAX_REGIONS];
    uint32_t nmap;
    struct vq vq[2];
    int backend_req;
    uint8_t status; /* virtio status as mdcom sees it: DRIVER_OK while live */
    int gone;       /* the front-end closed the connection */
    /* RPMsg side */
    mdcom_rpmsg_t *rp;
    mdcom_rpmsg_ept_t *echo, *ctl;
    mdcom_rpmsg_ept_t *same; /* "A": a second endpoint named like the echo */
    uint64_t count;
    uint32_t crc;
    /* echo modes and what the tests ask about */
    int mixed; /* --mixed-echo */
    uint64_t echo_seq, n_copy, n_zc, n_held, held_changed, unordered;
    uint32_t last_src;
    void *used0; /* vring 0's used ring (what mdcom publishes to the kernel) */
    void *avail0;
    uint32_t num;
    int hold_call, call_pending; /* "M": the kernel's call withheld while a message is edited */
    char pending[300];           /* a control request run from the main loop */
    uint32_t pending_src;
} D = {.sock = -1, .backend_req = -1};

/* RX buffers held by the echo, echoed in arrival order from the main loop */
#define HELD_MAX 512 /* more than the kernel's TX buffers: a hold never fails */
static struct held {
    void *data;
    size_t len;
    uint32_t src, crc;
} H[HELD_MAX];
static unsigned h_head, h_tail, h_flushing, e_sending;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vhost-rpmsg: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- address translation through the memory table ----------------------- */
/* the mapping of [addr, addr + len): addr a guest physical address, or with
 * by_uva a front-end (QEMU/UML process) virtual one; NULL if unmapped */
static void *to_va(uint64_t addr, uint64_t len, int by_uva)
{
    for (uint32_t i = 0; i < D.nmap; i++) {
        const struct map *m = &D.map[i];
        uint64_t start = by_uva ? m->uva : m->gpa;
        if (addr >= start && len <= m->size && addr - start <= m->size - len)
            return m->base + (addr - start);
    }
    return NULL;
}
static void *gpa_to_va(uint64_t gpa, uint64_t len) { return to_va(gpa, len, 0); }
static void *uva_to_va(uint64_t uva, uint64_t len) { return to_va(uva, len, 1); }

static void unmap_all(void)
{
    for (uint32_t i = 0; i < D.nmap; i++)
        munmap(D.map[i].mm, D.map[i].mm_len);
    D.nmap = 0;
}

/* ---- messages ------------------------------------------------------------- */
/* Read one message: header, payload (<= cap bytes) and up to 8 fds.
 * 1 read, 0 end of connection, -1 error. */
static int vu_recv(struct vu_hdr *h, void *payload, size_t cap, int *fds, int *nfds)
{
    char cbuf[CMSG_SPACE(sizeof(int) * VU_MAX_REGIONS)];
    struct iovec iov = {h, sizeof(*h)};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t n;
    *nfds = 0;
    do
        n = recvmsg(D.sock, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    while (n < 0 && errno == EINTR);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return 0;
    if (n != (ssize_t)sizeof(*h)) {
        logf_("short header (%zd)", n);
        return -1;
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fds + *nfds, CMSG_DATA(c), sizeof(int) * (size_t)k);
            *nfds += k;
        }
    if (h->size > cap) {
        logf_("payload of %u bytes for request %u too large", h->size, h->request);
        return -1;
    }
    size_t got = 0;
    while (got < h->size) {
        n = read(D.sock, (char *)payload + got, h->size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? 0 : -1;
        got += (size_t)n;
    }
    return 1;
}

static int vu_reply(const struct vu_hdr *req, const void *payload, uint32_t size)
{
    uint8_t buf[sizeof(struct vu_hdr) + 512];
    struct vu_hdr h = {req->request, VU_VERSION | VU_FLAG_REPLY, size};
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), payload, size);
    size_t len = sizeof(h) + size, off = 0;
    while (off < len) {
        ssize_t n = send(D.sock, buf + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        off += (size_t)n;
    }
    return 0;
}

static int vu_reply_u64(const struct vu_hdr *req, uint64_t v) { return vu_reply(req, &v, 8); }

static void close_fds(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* Handle one message. 1 handled, 0 connection closed, -1 error. */
static int vu_handle_one(void)
{
    struct vu_hdr h;
    union {
        uint64_t u64;
        struct vu_state st;
        struct vu_addr addr;
        struct vu_mem mem;
        uint8_t raw[512];
    } p;
    int fds[VU_MAX_REGIONS], nfds, rc = 0;
    memset(&p, 0, sizeof(p));
    int r = vu_recv(&h, &p, sizeof(p), fds, &nfds);
    if (r <= 0)
        return r;
    int replied = 0;
    switch (h.request) {
    case VU_GET_FEATURES:
        D.features = (1ull << 0) /* VIRTIO_RPMSG_F_NS */ | (1ull << VIRTIO_F_VERSION_1) |
                     (1ull << VU_F_PROTOCOL_FEATURES);
        rc = vu_reply_u64(&h, D.features);
        replied = 1;
        break;
    case VU_SET_FEATURES:
        D.features = p.u64;
        logf_("features 0x%" PRIx64, p.u64);
        break;
    case VU_GET_PROTOCOL_FEATURES:
        /* BACKEND_REQ: 6.1's virtio_uml allocates its interrupt only with
         * it (the probe fails without), and the end of file of that pipe
         * tells it that we are gone */
        rc = vu_reply_u64(&h, (1ull << VU_PROTOCOL_F_REPLY_ACK) |
                                  (D.no_backend_req ? 0 : (1ull << VU_PROTOCOL_F_BACKEND_REQ)));
        replied = 1;
        break;
    case VU_SET_PROTOCOL_FEATURES:
        D.protocol = p.u64;
        break;
    case VU_SET_OWNER:
    case VU_RESET_OWNER:
        break;
    case VU_SET_MEM_TABLE: {
        if (p.mem.num == 0 || p.mem.num > VU_MAX_REGIONS || (int)p.mem.num != nfds) {
            logf_("memory table: %u regions, %d fds", p.mem.num, nfds);
            close_fds(fds, nfds);
            rc = -1;
            break;
        }
        unmap_all();
        for (uint32_t i = 0; i < p.mem.num; i++) {
            const struct vu_region *g = &p.mem.r[i];
            size_t len = (size_t)(g->size + g->mmap_offset);
            void *mm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
            close(fds[i]);
            if (mm == MAP_FAILED) {
                logf_("mmap region %u: %s", i, strerror(errno));
                rc = -1;
                continue;
            }
            D.map[D.nmap++] = (struct map){
                g->guest_addr, g->user_addr, g->size, (uint8_t *)mm + g->mmap_offset, mm, len};
            logf_("region %u: guest 0x%" PRIx64 " user 0x%" PRIx64 " size 0x%" PRIx64, i,
                  g->guest_addr, g->user_addr, g->size);
        }
        break;
    }
    case VU_SET_VRING_NUM:
    case VU_SET_VRING_BASE:
    case VU_SET_VRING_ENABLE:
        if (p.st.index > 1) {
            rc = -1;
            break;
        }
        if (h.request == VU_SET_VRING_NUM)
            D.vq[p.st.index].num = p.st.num;
        else if (h.request == VU_SET_VRING_BASE && p.st.num != 0)
            logf_("vring %u base %u: only 0 is supported", p.st.index, p.st.num), rc = -1;
        else if (h.request == VU_SET_VRING_ENABLE) {
            D.vq[p.st.index].enabled = (int)p.st.num;
            if (!p.st.num)
                D.status = 0; /* the driver stops the device: mdcom's waits end */
        }
        break;
    case VU_GET_VRING_BASE: {
        /* the front-end stops the ring: mdcom's waits end; report the
         * front-end's own avail index, all of which we have seen */
        uint32_t i = p.st.index;
        struct vu_state st = {i, 0};
        D.status = 0;
        if (i < 2 && D.vq[i].have_addr) {
            uint16_t *avail = uva_to_va(D.vq[i].avail, 4);
            if (avail)
                st.num = avail[1];
        }
        rc = vu_reply(&h, &st, sizeof(st));
        replied = 1;
        break;
    }
    case VU_SET_VRING_ADDR:
        if (p.addr.index > 1) {
            rc = -1;
            break;
        }
        D.vq[p.addr.index].desc = p.addr.desc;
        D.vq[p.addr.index].used = p.addr.used;
        D.vq[p.addr.index].avail = p.addr.avail;
        D.vq[p.addr.index].have_addr = 1;
        break;
    case VU_SET_VRING_KICK:
    case VU_SET_VRING_CALL:
    case VU_SET_VRING_ERR: {
        uint32_t i = (uint32_t)(p.u64 & 0xff);
        int fd = (p.u64 & VU_VRING_NOFD) ? -1 : (nfds > 0 ? fds[0] : -1);
        if (i > 1 || (!(p.u64 & VU_VRING_NOFD) && nfds != 1)) {
            close_fds(fds, nfds);
            rc = -1;
            break;
        }
        if (h.request == VU_SET_VRING_ERR) {
            if (fd >= 0)
                close(fd);
        } else {
            int *slot = h.request == VU_SET_VRING_KICK ? &D.vq[i].kick : &D.vq[i].call;
            if (*slot >= 0)
                close(*slot);
            *slot = fd;
            if (fd >= 0 && h.request == VU_SET_VRING_CALL)
                /* a full pipe already holds a notification: never block on it */
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        }
        break;
    }
    case VU_SET_BACKEND_REQ_FD:
        if (nfds != 1) {
            close_fds(fds, nfds);
            rc = -1;
            break;
        }
        if (D.backend_req >= 0)
            close(D.backend_req);
        /* kept open and unused: its closing tells the kernel we are gone */
        D.backend_req = fds[0];
        break;
    default:
        logf_("unsupported request %u", h.request);
        close_fds(fds, nfds);
        rc = -1;
        break;
    }
    if (!replied && (h.flags & VU_FLAG_NEED_REPLY) &&
        (D.protocol & (1ull << VU_PROTOCOL_F_REPLY_ACK)))
        if (vu_reply_u64(&h, rc ? 1u : 0u) != 0)
            return -1;
    return rc < 0 ? -1 : 1;
}

/* ---- mdcom binding hooks -------------------------------------------------- */
static void dev_notify(void *ctx, uint32_t vq)
{
    (void)ctx;
    const uint64_t one = 1;
    if (vq == 0 && D.hold_call) {
        D.call_pending = 1;
        return;
    }
    if (vq < 2 && D.vq[vq].call >= 0)
        /* EAGAIN (pipe full) means a notification is already pending */
        (void)!write(D.vq[vq].call, &one, sizeof(one));
}

/* Wait for a kick on either vring, serving vhost-user messages meanwhile. */
static int dev_wait(void *ctx, int64_t timeout_ns)
{
    (void)ctx;
    struct pollfd pf[3] = {
        {D.sock, POLLIN, 0}, {D.vq[0].kick, POLLIN, 0}, {D.vq[1].kick, POLLIN, 0}};
    int ms = timeout_ns < 0 ? -1 : (int)((timeout_ns + 999999) / 1000000);
    int n = poll(pf, 3, ms);
    if (n < 0)
        return errno == EINTR ? -EINTR : 0;
    for (int i = 1; i < 3; i++)
        if (pf[i].revents & POLLIN) {
            uint64_t v;
            (void)!read(pf[i].fd, &v, sizeof(v));
        }
    if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        int r = vu_handle_one();
        if (r <= 0) {
            D.gone = 1;
            D.status = 0; /* mdcom's waits return -ESHUTDOWN */
        }
    }
    return 0;
}

/* ---- RPMsg application ---------------------------------------------------- */
/* Echo the held RX buffers in arrival order, checking that the kernel left
 * them alone, and give them back; from the main loop only. Messages
 * arriving meanwhile (a blocked send dispatches) are held behind them. */
static void flush_held(void)
{
    if (h_flushing)
        return;
    h_flushing = 1;
    while (h_head != h_tail) {
        struct held h = H[h_head % HELD_MAX];
        if (mdcom_crc32(0, h.data, h.len) != h.crc)
            D.held_changed++;
        e_sending++;
        int rc = mdcom_rpmsg_sendto(D.echo, h.data, h.len, h.src, 5000000000LL);
        e_sending--;
        if (rc)
            logf_("held echo to 0x%x failed: %d", h.src, rc);
        h_head++;
        rc = mdcom_rpmsg_release_rx_buffer(D.echo, h.data);
        if (rc)
            logf_("release_rx_buffer: %d", rc);
    }
    h_flushing = 0;
}

static int echo_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)priv;
    int rc;
    D.count++;
    D.crc = mdcom_crc32(D.crc, data, len);
    D.last_src = src;
    uint64_t k = D.mixed ? D.echo_seq++ : 0; /* 0: copy */
    /* every third message, and, to keep the order, every one behind a held
     * one or arriving while an echo waits for a TX buffer (a blocked send
     * dispatches) */
    if (k % 3 == 2 || h_head != h_tail || e_sending) {
        if (h_tail - h_head < HELD_MAX && mdcom_rpmsg_hold_rx_buffer(ept, data) == 0) {
            H[h_tail++ % HELD_MAX] = (struct held){data, len, src, mdcom_crc32(0, data, len)};
            D.n_held++;
            return 0;
        }
    }
    D.unordered += h_head != h_tail || e_sending; /* could not hold it */
    e_sending++;
    if (k % 3 == 1) {
        void *tb = NULL;
        uint32_t cap = 0;
        rc = mdcom_rpmsg_get_tx_buffer(ept, &tb, &cap, 5000000000LL);
        if (rc == 0) {
            memcpy(tb, data, len);
            rc = mdcom_rpmsg_sendto_nocopy(ept, tb, len, src);
        }
        D.n_zc++;
    } else {
        rc = mdcom_rpmsg_sendto(ept, data, len, src, 5000000000LL);
        D.n_copy++;
    }
    e_sending--;
    if (rc)
        logf_("echo to 0x%x failed: %d", src, rc);
    return rc;
}

/* RX buffers the kernel has posted and mdcom not yet used: vring 0's
 * avail.idx - used.idx (exact while the kernel is idle) */
static unsigned posted_rx(void)
{
    uint16_t a = __atomic_load_n((uint16_t *)D.avail0 + 1, __ATOMIC_ACQUIRE);
    uint16_t u = __atomic_load_n((uint16_t *)D.used0 + 1, __ATOMIC_ACQUIRE);
    return (uint16_t)(a - u);
}

/* Payload k of the "F" stream: 8..496 bytes, index and a pattern. */
static size_t fill_payload(uint8_t *p, uint32_t k)
{
    size_t len = 8 + (k * 37u) % 489u;
    memcpy(p, &k, 4);
    static const uint8_t tag[4] = {'F', 'L', 'D', '1'}; /* a binary tag, no NUL */
    memcpy(p + 4, tag, sizeof(tag));
    for (size_t i = 8; i < len; i++)
        p[i] = (uint8_t)(k * 31u + i);
    return len;
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* "F addr n file": the guest holds its kernel's RX processing back; send the
 * n-message stream to addr zero-copy until no TX buffer is left (MDCOM_POLL
 * says -ETIMEDOUT), then one copy send with a 200 ms timeout, which must
 * wait and fail with -ETIMEDOUT; write "posted full rc timed_rc waited_us"
 * to file (the guest, spinning, lets its kernel go on when it appears),
 * then send the rest with blocking sends, copy and zero copy in turn, and
 * answer "FILL posted full rc timed_rc waited_us sent failed". */
static void do_fill(uint32_t addr, uint32_t n, const char *file, uint32_t to)
{
    uint8_t p[MDCOM_RPMSG_DEFAULT_BUF_SIZE];
    unsigned posted = posted_rx();
    uint32_t k = 0, failed = 0;
    int rc = 0, trc = 0;
    while (k < n) {
        void *tb = NULL;
        uint32_t cap = 0;
        if ((rc = mdcom_rpmsg_get_tx_buffer(D.ctl, &tb, &cap, MDCOM_POLL)) != 0)
            break;
        size_t len = fill_payload(tb, k);
        if (mdcom_rpmsg_sendto_nocopy(D.ctl, tb, len, addr) != 0)
            failed++;
        k++;
    }
    uint32_t full = k;
    int64_t t0 = mono_us();
    size_t len = fill_payload(p, k);
    trc = mdcom_rpmsg_sendto(D.ctl, p, len, addr, 200000000LL);
    int64_t waited = mono_us() - t0;
    if (trc == 0)
        k++;
    char tmp[320], line[160];
    (void)snprintf(line, sizeof(line), "%u %u %d %d %lld", posted, full, rc, trc,
                   (long long)waited);
    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0 || rename(tmp, file) != 0)
        logf_("fill: cannot write %s", file);
    logf_("fill: %s", line);
    for (; k < n; k++) {
        len = fill_payload(p, k);
        if (k % 2) {
            if (mdcom_rpmsg_sendto(D.ctl, p, len, addr, 10000000000LL) != 0)
                failed++;
        } else {
            void *tb = NULL;
            uint32_t cap = 0;
            if (mdcom_rpmsg_get_tx_buffer(D.ctl, &tb, &cap, 10000000000LL) != 0 ||
                (memcpy(tb, p, len), mdcom_rpmsg_sendto_nocopy(D.ctl, tb, len, addr)) != 0)
                failed++;
        }
    }
    char out[200];
    int ln = snprintf(out, sizeof(out), "FILL %s %u %u", line, k, failed);
    if (mdcom_rpmsg_sendto(D.ctl, out, (size_t)ln, to, 5000000000LL) != 0)
        logf_("fill: answer failed");
}

enum edit { EDIT_SRC_ANY, EDIT_USED_LEN, EDIT_HDR_LEN };

/* Send msg from the control endpoint to dst, then edit what the kernel will
 * read, before it is told (its call withheld): the header's source address
 * to ANY, used.len past the buffer (600), or the header's length one past
 * used.len - 16. mdcom's own API cannot produce these; the kernel reads a
 * message only when called, and the guest is idle, waiting. */
static int send_edited(uint32_t dst, const char *msg, enum edit e)
{
    void *tb = NULL;
    uint32_t cap = 0;
    size_t len = strlen(msg);
    int rc = mdcom_rpmsg_get_tx_buffer(D.ctl, &tb, &cap, 1000000000LL);
    if (rc)
        return rc;
    memcpy(tb, msg, len);
    D.hold_call = 1;
    D.call_pending = 0;
    rc = mdcom_rpmsg_sendto_nocopy(D.ctl, tb, len, dst);
    uint8_t *hdr = (uint8_t *)tb - MDCOM_RPMSG_HDR_SIZE;
    uint16_t idx = __atomic_load_n((uint16_t *)D.used0 + 1, __ATOMIC_RELAXED);
    uint8_t *ent = (uint8_t *)D.used0 + 4 + 8u * ((uint16_t)(idx - 1) & (D.num - 1));
    uint32_t any = MDCOM_RPMSG_ADDR_ANY, big = 600;
    uint16_t hlen = (uint16_t)(len + 1);
    if (e == EDIT_SRC_ANY)
        memcpy(hdr, &any, 4);
    else if (e == EDIT_USED_LEN)
        memcpy(ent + 4, &big, 4);
    else
        memcpy(hdr + 12, &hlen, 2);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    D.hold_call = 0;
    if (D.call_pending)
        dev_notify(NULL, 0);
    return rc;
}

/* a name service message {name[32], addr, flags}, or len bytes of one */
static int send_ns(const char *name, size_t nlen, uint32_t addr, uint32_t flags, size_t len)
{
    uint8_t m[40];
    memset(m, 0, sizeof(m));
    memcpy(m, name, nlen);
    memcpy(m + 32, &addr, 4);
    memcpy(m + 36, &flags, 4);
    return mdcom_rpmsg_sendto(D.ctl, m, len, MDCOM_RPMSG_NS_ADDR, 1000000000LL);
}

#define LONG_NAME "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq" /* 32 bytes, no NUL */

/* Wait until the kernel has posted target RX buffers (it posts a buffer
 * again once it took its message; not one it rejected), notifying it again
 * every 50 ms: virtio_rpmsg_bus stops draining the ring at a message it
 * rejects and takes the rest only at its next notification, which never
 * comes when it was the last. 0 or -1 (not within 10 s). */
static int settle(unsigned target, unsigned *kicks)
{
    for (int i = 1; i <= 1000; i++) {
        if (posted_rx() == target)
            return 0;
        usleep(10000);
        if (i % 5 == 0) {
            dev_notify(NULL, 0);
            (*kicks)++;
        }
    }
    logf_("settle: %u RX buffers posted after 10 s, expected %u", posted_rx(), target);
    return -1;
}

/* "M addr": malformed input for the kernel; to addr, of what is sent, only
 * "src7", "srcany", "after1" and "after2" can arrive; answers "MDONE
 * posted_before errors notifications_added". */
static void do_malformed(uint32_t addr, uint32_t to)
{
    unsigned before = posted_rx(), kicks = 0;
    int err = 0;
    /* name service: short, name without NUL, address ANY, flags 7 */
    err |= send_ns("md-short", 8, 0x450, 0, 10);
    err |= send_ns(LONG_NAME, 32, 0x450, 0, 40);
    err |= send_ns("md-any", 6, MDCOM_RPMSG_ADDR_ANY, 0, 40);
    err |= send_ns("md-flags", 8, 0x451, 7, 40);
    /* odd source addresses: reserved 7 and ANY */
    err |= mdcom_rpmsg_send_offchannel(D.ctl, 7, addr, "src7", 4, 1000000000LL);
    err |= send_edited(addr, "srcany", EDIT_SRC_ANY);
    /* nobody at the destination */
    err |= mdcom_rpmsg_sendto(D.ctl, "nobody", 6, 0x7777, 1000000000LL);
    err |= settle(before, &kicks);
    /* lengths past the buffer, each alone, then a message behind it */
    err |= send_edited(addr, "toobig-used", EDIT_USED_LEN);
    err |= mdcom_rpmsg_sendto(D.ctl, "after1", 6, addr, 1000000000LL);
    err |= settle(before - 1, &kicks);
    err |= send_edited(addr, "toobig-hdr", EDIT_HDR_LEN);
    err |= mdcom_rpmsg_sendto(D.ctl, "after2", 6, addr, 1000000000LL);
    err |= settle(before - 2, &kicks);
    char out[100];
    int n = snprintf(out, sizeof(out), "MDONE %u %d %u", before, err != 0, kicks);
    if (mdcom_rpmsg_sendto(D.ctl, out, (size_t)n, to, 5000000000LL) != 0)
        logf_("malformed: answer failed");
    logf_("malformed input sent (%s)", out);
}

static int ctl_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)priv;
    char out[64];
    if (len == 1 && *(char *)data == 'R') {
        D.count = 0;
        D.crc = 0;
        return mdcom_rpmsg_sendto(ept, "OK", 2, src, 5000000000LL);
    }
    if (len == 1 && *(char *)data == 'S') {
        int n = snprintf(out, sizeof(out), "%" PRIu64 " %08x", D.count, D.crc);
        return mdcom_rpmsg_sendto(ept, out, (size_t)n, src, 5000000000LL);
    }
    if (len == 1 && *(char *)data == 'X') {
        char x[240];
        mdcom_rpmsg_stats st;
        mdcom_rpmsg_stats_get(D.rp, &st);
        int n = snprintf(x, sizeof(x),
                         "bad %u %u %u %u %u ns %u unknown %u cb %u copy %" PRIu64 " zc %" PRIu64
                         " held %" PRIu64 " changed %" PRIu64 " src %u unordered %" PRIu64,
                         st.bad_idx, st.bad_head, st.bad_desc, st.bad_addr, st.bad_len, st.bad_ns,
                         st.unknown_dst, st.cb_errors, D.n_copy, D.n_zc, D.n_held, D.held_changed,
                         D.last_src, D.unordered);
        return mdcom_rpmsg_sendto(ept, x, (size_t)n, src, 5000000000LL);
    }
    if (len == 1 && *(char *)data == 'P') {
        int n = snprintf(out, sizeof(out), "%u", posted_rx());
        return mdcom_rpmsg_sendto(ept, out, (size_t)n, src, 5000000000LL);
    }
    if (len >= 1 && len < sizeof(D.pending) && *(char *)data && strchr("FMCAD", *(char *)data) &&
        !D.pending[0]) {
        memcpy(D.pending, data, len); /* run from the main loop, not a callback */
        D.pending[len] = 0;
        D.pending_src = src;
        return 0;
    }
    return -EINVAL;
}

/* "C": withdraw the channels "M" made the kernel create (the truncated long
 * name, address ANY); answers "CDONE". */
static void do_cleanup(uint32_t to)
{
    int err = send_ns(LONG_NAME, 31, 0x450, 1, 40);
    err |= send_ns("md-any", 6, MDCOM_RPMSG_ADDR_ANY, 1, 40);
    err |= mdcom_rpmsg_sendto(D.ctl, err ? "CFAIL" : "CDONE", 5, to, 5000000000LL);
    if (err)
        logf_("cleanup failed");
}

/* the endpoint of "A": answers "same:<message>" to its source */
static int same_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)priv;
    char out[MDCOM_RPMSG_DEFAULT_BUF_SIZE];
    if (len > sizeof(out) - 16 - 5)
        return -EMSGSIZE;
    static const char tag[5] = {'s', 'a', 'm', 'e', ':'}; /* a binary tag, no NUL */
    memcpy(out, tag, sizeof(tag));
    memcpy(out + 5, data, len);
    return mdcom_rpmsg_sendto(ept, out, len + 5, src, 5000000000LL);
}

#define SAME_ADDR 0x440u

/* "A": a second endpoint named "rpmsg-raw" (announced, unbound) at
 * SAME_ADDR; "D": destroy it (announced). Answer "ADONE rc" / "DDONE rc". */
static void do_same(int create, uint32_t to)
{
    int rc;
    char out[32];
    if (create)
        rc = D.same ? -EEXIST
                    : mdcom_rpmsg_ept_create(D.rp, &D.same, "rpmsg-raw", SAME_ADDR,
                                             MDCOM_RPMSG_ADDR_ANY, same_cb, NULL, 5000000000LL);
    else {
        rc = D.same ? mdcom_rpmsg_ept_destroy(D.same) : -ENOENT;
        D.same = NULL;
    }
    int n = snprintf(out, sizeof(out), "%s %d", create ? "ADONE" : "DDONE", rc);
    if (mdcom_rpmsg_sendto(D.ctl, out, (size_t)n, to, 5000000000LL) != 0)
        logf_("same: answer failed");
}

static void run_pending(void)
{
    char cmd[sizeof(D.pending)], file[sizeof(D.pending)];
    long addr = 0; /* %li: decimal or 0x... */
    unsigned n = 0;
    if (!D.pending[0])
        return;
    memcpy(cmd, D.pending, sizeof(cmd));
    D.pending[0] = 0;
    if (cmd[0] == 'F' && sscanf(cmd, "F %li %u %255s", &addr, &n, file) == 3)
        do_fill((uint32_t)addr, n, file, D.pending_src);
    else if (cmd[0] == 'M' && sscanf(cmd, "M %li", &addr) == 1)
        do_malformed((uint32_t)addr, D.pending_src);
    else if (cmd[0] == 'C')
        do_cleanup(D.pending_src);
    else if (cmd[0] == 'A' || cmd[0] == 'D')
        do_same(cmd[0] == 'A', D.pending_src);
    else
        logf_("bad request '%s'", cmd);
}

static void ns_cb(mdcom_rpmsg_t *r, const char *name, uint32_t addr, uint32_t flags, void *priv)
{
    (void)r;
    (void)priv;
    logf_("ns %s %s addr 0x%x", flags == MDCOM_RPMSG_NS_CREATE ? "create" : "destroy", name, addr);
    if (flags == MDCOM_RPMSG_NS_CREATE && D.ctl) {
        char msg[48];
        int n = snprintf(msg, sizeof(msg), "hello %s", name);
        int rc = mdcom_rpmsg_sendto(D.ctl, msg, (size_t)n, addr, 5000000000LL);
        if (rc)
            logf_("hello to 0x%x failed: %d", addr, rc);
    }
    /* an announcement of its name binds the unbound "A" endpoint (mdcom
     * does it before this callback; its withdrawal unbinds it): it says so
     * with a send to its destination */
    if (D.same) {
        uint32_t dst = mdcom_rpmsg_ept_dst(D.same);
        logf_("same-name endpoint 0x%x: %s 0x%x", SAME_ADDR,
              dst == MDCOM_RPMSG_ADDR_ANY ? "unbound" : "bound to", dst);
        if (flags == MDCOM_RPMSG_NS_CREATE && dst == addr) {
            char msg[48];
            int n = snprintf(msg, sizeof(msg), "bound 0x%x", SAME_ADDR);
            if (mdcom_rpmsg_send(D.same, msg, (size_t)n, 5000000000LL) != 0)
                logf_("bound: send failed");
        }
    }
}

static int start_rpmsg(void)
{
    static _Alignas(16) uint8_t state[1 << 20];
    uint32_t num = D.vq[0].num;
    uint64_t pool_da;
    mdcom_rpmsg_bind b;
    mdcom_rpmsg_opts o;
    int rc;
    if (num == 0 || num != D.vq[1].num) {
        logf_("vrings of %u and %u entries", D.vq[0].num, D.vq[1].num);
        return -1;
    }
    memset(&b, 0, sizeof(b));
    for (int i = 0; i < 2; i++) {
        b.vring[i].desc = uva_to_va(D.vq[i].desc, 16u * num);
        b.vring[i].avail = uva_to_va(D.vq[i].avail, 6u + 2u * num);
        b.vring[i].used = uva_to_va(D.vq[i].used, 6u + 8u * num);
        if (!b.vring[i].desc || !b.vring[i].avail || !b.vring[i].used) {
            logf_("vring %d outside the memory table", i);
            return -1;
        }
    }
    b.num = num;
    b.buf_size = MDCOM_RPMSG_DEFAULT_BUF_SIZE;
    D.used0 = b.vring[0].used;
    D.avail0 = b.vring[0].avail;
    D.num = num;
    /* the kernel posted its RX buffers before this first kick: they give
     * the pool's guest-physical address */
    if ((rc = mdcom_rpmsg_bind_find_pool(&b)) != 0) {
        logf_("mdcom_rpmsg_bind_find_pool: %d", rc);
        return rc == -EAGAIN ? 1 : -1;
    }
    pool_da = b.pool_da;
    b.pool = gpa_to_va(pool_da, 2ull * num * b.buf_size);
    if (!b.pool) {
        logf_("pool at 0x%" PRIx64 " outside the memory table", pool_da);
        return -1;
    }
    D.status = 0x0f; /* ACKNOWLEDGE | DRIVER | DRIVER_OK | FEATURES_OK */
    b.status = &D.status;
    b.features = (uint32_t)(D.features & 1u);
    b.notify = dev_notify;
    b.wait = dev_wait;
    memset(&o, 0, sizeof(o));
    o.role = MDCOM_RPMSG_REMOTE;
    o.ns_cb = ns_cb;
    o.attach_timeout_ns = 1000000000LL;
    if (mdcom_rpmsg_state_size_bound(num, &o) > sizeof(state)) {
        logf_("state too small");
        return -1;
    }
    rc = mdcom_rpmsg_init_bound(&D.rp, state, sizeof(state), &b, &o);
    if (rc) {
        logf_("mdcom_rpmsg_init_bound: %d", rc);
        return -1;
    }
    logf_("rpmsg remote up: %u buffers per ring, pool at 0x%" PRIx64 ", ns %s", num, pool_da,
          (b.features & 1u) ? "on" : "off");
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    uint32_t echo_addr = MDCOM_RPMSG_ADDR_ANY, ctl_addr = 0x400 + 0x30; /* 1072 */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--socket") && i + 1 < argc)
            path = argv[++i];
        else if (!strcmp(argv[i], "--echo-addr") && i + 1 < argc)
            echo_addr = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--no-backend-req"))
            D.no_backend_req = 1;
        else if (!strcmp(argv[i], "--mixed-echo"))
            D.mixed = 1;
        else if (!strcmp(argv[i], "--ctl-addr") && i + 1 < argc)
            ctl_addr = (uint32_t)strtoul(argv[++i], NULL, 0);
        else {
            fprintf(stderr,
                    "usage: %s --socket PATH [--echo-addr N] [--ctl-addr N] [--no-backend-req] "
                    "[--mixed-echo]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!path)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stderr, NULL, _IOLBF, 0);
    D.vq[0].kick = D.vq[0].call = D.vq[1].kick = D.vq[1].call = -1;

    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    if (ls < 0) {
        logf_("socket(): %s", strerror(errno));
        return 1;
    }
    if (mdcom_unix_addr(&sa, path) != 0) {
        logf_("socket path too long: %s", path);
        return 1;
    }
    unlink(path);
    if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0) {
        logf_("bind/listen %s: %s", path, strerror(errno));
        return 1;
    }
    logf_("listening on %s", path);
    D.sock = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    close(ls);
    if (D.sock < 0) {
        logf_("accept: %s", strerror(errno));
        return 1;
    }
    logf_("front-end connected");

    /* set-up phase: until both vrings are placed and the driver kicked
     * vring 0 with its RX buffers posted */
    for (;;) {
        struct pollfd pf[2] = {{D.sock, POLLIN, 0}, {D.vq[0].kick, POLLIN, 0}};
        int n = poll(pf, D.vq[0].kick >= 0 ? 2 : 1, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (pf[0].revents) {
            int r = vu_handle_one();
            if (r == 0) {
                logf_("front-end closed the connection during set-up");
                return 0;
            }
            if (r < 0)
                return 1;
        }
        if (D.vq[0].kick >= 0 && (pf[1].revents & POLLIN) && D.vq[0].have_addr &&
            D.vq[1].have_addr && D.vq[1].kick >= 0 && D.nmap > 0) {
            int st = start_rpmsg();
            if (st == 0)
                break;
            if (st < 0)
                return 1;
        }
    }

    int rc = mdcom_rpmsg_ept_create(D.rp, &D.ctl, NULL, ctl_addr, MDCOM_RPMSG_ADDR_ANY, ctl_cb,
                                    NULL, MDCOM_POLL);
    if (rc == 0)
        rc = mdcom_rpmsg_ept_create(D.rp, &D.echo, "rpmsg-raw", echo_addr, MDCOM_RPMSG_ADDR_ANY,
                                    echo_cb, NULL, 5000000000LL);
    if (rc) {
        logf_("endpoints: %d", rc);
        return 1;
    }
    logf_("announced rpmsg-raw at 0x%x, control at 0x%x", mdcom_rpmsg_ept_addr(D.echo),
          mdcom_rpmsg_ept_addr(D.ctl));
    while (!D.gone) {
        rc = mdcom_rpmsg_poll(D.rp, 1000000000LL);
        if (rc == -ESHUTDOWN || D.gone)
            break;
        if (rc >= 0) {
            flush_held();
            run_pending();
        }
        if (rc < 0 && rc != -EINTR) {
            logf_("mdcom_rpmsg_poll: %d", rc);
            break;
        }
    }
    /* after a stop (SET_VRING_ENABLE 0) keep serving the socket until it closes */
    while (!D.gone && vu_handle_one() > 0)
        ;
    mdcom_rpmsg_stats st;
    mdcom_rpmsg_stats_get(D.rp, &st);
    logf_("stopped: rx %" PRIu64 " tx %" PRIu64 " bad idx/head/desc/addr/len/ns %u/%u/%u/%u/%u/%u "
          "unknown_dst %u cb_errors %u; echo copy/zero-copy/held %" PRIu64 "/%" PRIu64 "/%" PRIu64
          " (held changed %" PRIu64 ")",
          st.rx_msgs, st.tx_msgs, st.bad_idx, st.bad_head, st.bad_desc, st.bad_addr, st.bad_len,
          st.bad_ns, st.unknown_dst, st.cb_errors, D.n_copy, D.n_zc, D.n_held, D.held_changed);
    return rc < 0 && rc != -ESHUTDOWN ? 1 : 0;
}
