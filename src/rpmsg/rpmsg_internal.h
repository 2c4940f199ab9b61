/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_internal.h - the RPMsg area (wire format owned by this file), the
 * private instance state, and what the parts of the transport (rpmsg.c,
 * rpmsg_virtio.c, rpmsg_ns.c, rpmsg_ept.c, rpmsg_rsc.c) share.
 *
 * The area (base aligned to >= 64; to vring_align when a Linux peer maps it),
 * all offsets from its base, computed only by mdcom_rpmsg_layout_compute():
 *
 *   0 ----------------------------------------------------------------------+
 *   | control block, 192 B (mdcom rendezvous; a Linux peer uses the          |
 *   | remoteproc resource table / virtio config space for this instead)      |
 *   |   line 0 (+0):   le32 magic 'MDRP', version, num_bufs, buf_size,       |
 *   |                  vring_align, size, features, generation,              |
 *   |                  a32 status (virtio device status, written by the      |
 *   |                  host; 0xF = ACK|DRIVER|DRIVER_OK|FEATURES_OK = ready), |
 *   |                  a32 remote (1 while a remote is attached), 6 x rsvd   |
 *   |   line 1 (+64):  a32 notify_host, a32 host_waiters   (remote -> host)  |
 *   |   line 2 (+128): a32 notify_remote, a32 remote_waiters (host -> remote)|
 *   V0 = align_up(192, vring_align) -----------------------------------------+
 *   | vring 0: remote -> host (Linux vq 0 "input"; the host is its driver,   |
 *   |          its descriptors are the host's RX buffers, device-writable)   |
 *   |          layout of virtqueue.h for (num_bufs, vring_align)             |
 *   V1 = V0 + align_up(vring_size, vring_align) ----------------------------+
 *   | vring 1: host -> remote (Linux vq 1 "output": the host's TX buffers)   |
 *   P = align_up(V1 + vring_size, max(vring_align, 64)) ---------------------+
 *   | buffer pool: buffers 0 .. N-1   host RX (posted in vring 0)            |
 *   |              buffers N .. 2N-1  host TX (posted in vring 1)            |
 *   |   each buf_size B: le32 src, le32 dst, le32 reserved, le16 len,        |
 *   |                    le16 flags, payload[buf_size - 16]                  |
 *   P + 2 N buf_size = size --------------------------------------------------+
 *
 * Descriptor addresses are addr_base + (byte offset in the pool). The vring
 * order follows the virtqueue indices of virtio_rpmsg_bus (0 = host RX) and
 * of the resource table, so a remoteproc-style peer sees the same thing.
 *
 * Notification: a side that is about to sleep clears the suppression flag of
 * the rings it receives on (virtio VRING_AVAIL_F_NO_INTERRUPT /
 * VRING_USED_F_NO_NOTIFY), fences and re-checks the rings; while awake it
 * keeps the flag set. After publishing a ring index a side fences and, unless
 * the peer's flag is set, notifies it: between two mdcom sides by
 * incrementing the peer's notify word and ringing the platform doorbell on
 * it, on bound memory through the binding's notify callback (the
 * store-buffering handshake of the core: see docs/architecture.md). The
 * host_waiters / remote_waiters words of version 1 are unused (reserved).
 */
#ifndef MDCOM_RPMSG_INTERNAL_H
#define MDCOM_RPMSG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/platform.h"
#include "mdcom/rpmsg.h"
#include "virtqueue.h"

#define MDCOM_RP_MAGIC 0x5052444du /* "MDRP" in memory order */
#define MDCOM_RP_VERSION 2u        /* 2: notifications follow the vring flags */
#define MDCOM_RP_CTL_SIZE 192u
#define MDCOM_RP_POOL_ALIGN 64u

/* virtio device status bits */
#define MDCOM_RP_ST_ACK 1u
#define MDCOM_RP_ST_DRIVER 2u
#define MDCOM_RP_ST_DRIVER_OK 4u
#define MDCOM_RP_ST_FEATURES_OK 8u
#define MDCOM_RP_ST_FAILED 0x80u
#define MDCOM_RP_ST_READY                                                                          \
    (MDCOM_RP_ST_ACK | MDCOM_RP_ST_DRIVER | MDCOM_RP_ST_DRIVER_OK | MDCOM_RP_ST_FEATURES_OK)

struct mdcom_rp_ctl {
    /* line 0: written by the host before it publishes status */
    uint32_t magic;
    uint32_t version;
    uint32_t num_bufs;
    uint32_t buf_size;
    uint32_t vring_align;
    uint32_t size;
    uint32_t features;
    uint32_t generation;
    mdcom_aword status; /* written by the host */
    mdcom_aword remote; /* written by the remote */
    uint32_t rsvd0[6];
    /* line 1: the host sleeps on notify_host */
    mdcom_aword notify_host;
    mdcom_aword host_waiters;
    uint32_t rsvd1[14];
    /* line 2: the remote sleeps on notify_remote */
    mdcom_aword notify_remote;
    mdcom_aword remote_waiters;
    uint32_t rsvd2[14];
};

#ifndef __cplusplus
_Static_assert(sizeof(mdcom_aword) == 4, "shared words are 32-bit");
_Static_assert(sizeof(struct mdcom_rp_ctl) == MDCOM_RP_CTL_SIZE, "control block is 192 bytes");
/* field f of the control block at byte off */
#define MDCOM_RP_CTL_AT(f, off) _Static_assert(offsetof(struct mdcom_rp_ctl, f) == (off), "ctl." #f)
MDCOM_RP_CTL_AT(version, 4);
MDCOM_RP_CTL_AT(num_bufs, 8);
MDCOM_RP_CTL_AT(buf_size, 12);
MDCOM_RP_CTL_AT(vring_align, 16);
MDCOM_RP_CTL_AT(size, 20);
MDCOM_RP_CTL_AT(features, 24);
MDCOM_RP_CTL_AT(generation, 28);
MDCOM_RP_CTL_AT(status, 32);
MDCOM_RP_CTL_AT(remote, 36);
_Static_assert(offsetof(struct mdcom_rp_ctl, notify_host) == 64, "host words on line 1");
MDCOM_RP_CTL_AT(host_waiters, 68);
_Static_assert(offsetof(struct mdcom_rp_ctl, notify_remote) == 128, "remote words on line 2");
MDCOM_RP_CTL_AT(remote_waiters, 132);
#undef MDCOM_RP_CTL_AT
_Static_assert(sizeof(mdcom_rsc_vring) == 20, "fw_rsc_vdev_vring is 20 bytes");
_Static_assert(sizeof(mdcom_rsc_vdev) == 24, "fw_rsc_vdev is 24 bytes before its vrings");
_Static_assert(offsetof(mdcom_rsc_vdev, status) == 20, "fw_rsc_vdev.status");
_Static_assert(offsetof(mdcom_rsc_vdev, gfeatures) == 12, "fw_rsc_vdev.gfeatures");
#endif

/* RPMsg header (offsets in a buffer) */
#define MDCOM_RP_HDR_SRC 0u
#define MDCOM_RP_HDR_DST 4u
#define MDCOM_RP_HDR_RSVD 8u
#define MDCOM_RP_HDR_LEN 12u
#define MDCOM_RP_HDR_FLAGS 14u
/* name service message (offsets in the payload) */
#define MDCOM_RP_NS_NAME 0u
#define MDCOM_RP_NS_ADDR 32u
#define MDCOM_RP_NS_FLAGS 36u
#ifndef __cplusplus
_Static_assert(MDCOM_RP_HDR_FLAGS + 2 == MDCOM_RPMSG_HDR_SIZE, "rpmsg_hdr is 16 bytes");
_Static_assert(MDCOM_RP_NS_FLAGS + 4 == MDCOM_RPMSG_NS_MSG_SIZE, "rpmsg_ns_msg is 40 bytes");
_Static_assert(MDCOM_RPMSG_HDR_SIZE + MDCOM_RPMSG_NS_MSG_SIZE <= MDCOM_RPMSG_MIN_BUF_SIZE,
               "the smallest buffer carries an announcement");
#endif

/* ------------------------------------------------------------------ */
/* private state                                                         */
/* ------------------------------------------------------------------ */
/* per-buffer state (this side's view of who owns it) */
enum mdcom_rp_bstate {
    MDCOM_RP_B_PEER = 0, /* in a ring / at the peer                        */
    MDCOM_RP_B_FREE,     /* TX: ours, unused (host free list, remote spare) */
    MDCOM_RP_B_TX_APP,   /* TX: given to the application (get_tx_buffer)   */
    MDCOM_RP_B_RX_CB,    /* RX: being dispatched to a callback              */
    MDCOM_RP_B_RX_HELD   /* RX: held by the application                     */
};

struct mdcom_rpmsg_ept {
    struct mdcom_rpmsg *r;
    uint32_t addr;
    uint32_t dst;
    mdcom_rpmsg_cb cb;
    void *priv;
    char name[MDCOM_RPMSG_NAME_SIZE];
    uint8_t in_use;
    uint8_t announced;
};

struct mdcom_rp_svc {
    char name[MDCOM_RPMSG_NAME_SIZE];
    uint32_t addr;
    uint32_t in_use;
};

#define MDCOM_RP_INST_MAGIC 0x72706d31u
#define MDCOM_RP_MAX_DEPTH 4u /* nested dispatch (callback -> send -> drain) */

struct mdcom_rpmsg {
    uint32_t magic;
    uint32_t role;
    mdcom_rpmsg_layout lay;
    struct mdcom_vring_layout vl;
    uint8_t *area;
    uint8_t *pool;
    struct mdcom_rp_ctl *ctl;
    uint64_t addr_base;
    uint32_t n;     /* num_bufs */
    uint32_t bsize; /* buf_size */
    const mdcom_platform *plat;
    uint32_t spin_max; /* MDCOM_NO_SPIN = never */
    uint32_t spin_cur;
    uint32_t generation;
    struct mdcom_vq rxq;   /* host: vring 0 as driver; remote: vring 1 as device */
    struct mdcom_vq txq;   /* host: vring 1 as driver; remote: vring 0 as device */
    uint8_t *bstate;       /* 2N: enum mdcom_rp_bstate                         */
    uint16_t *bhead;       /* 2N: remote: the descriptor head of a buffer      */
    uint32_t *blen;        /* 2N: remote: the descriptor length of a buffer    */
    uint32_t bound;        /* 1: mdcom_rpmsg_init_bound, no control block      */
    mdcom_rpmsg_bind bind; /* bound: the caller's binding                    */
    uint32_t ns_on;        /* VIRTIO_RPMSG_F_NS negotiated                     */
    uint16_t *stack;       /* N: host: free TX heads; remote: spare TX buffers */
    uint32_t nstack;
    mdcom_aword *my_notify, *my_waiters, *peer_notify, *peer_waiters;
    struct mdcom_rpmsg_ept *epts;
    uint32_t max_epts;
    struct mdcom_rp_svc *svcs;
    uint32_t max_svcs;
    uint32_t next_addr;
    uint32_t depth;
    uint32_t rx_dirty;
    mdcom_rpmsg_stats st;
    mdcom_rpmsg_ns_cb ns_cb;
    void *ns_priv;
};

/* ------------------------------------------------------------------ */
/* what the parts share                                                  */
/* ------------------------------------------------------------------ */
/* small helpers (no libc) */
static inline int is_pow2(uint32_t v) { return v != 0 && (v & (v - 1u)) == 0; }

/* length of s if it has a NUL within max bytes, else max */
static inline uint32_t rp_strnlen(const char *s, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && s[n] != '\0')
        n++;
    return n;
}

static inline uint64_t rp_now(const struct mdcom_rpmsg *r) { return r->plat->now_ns(r->plat->ctx); }

static inline void rp_relax(const struct mdcom_rpmsg *r)
{
    if (r->plat->relax)
        r->plat->relax(r->plat->ctx);
}

static inline uint64_t rp_deadline(const struct mdcom_rpmsg *r, int64_t timeout_ns)
{
    uint64_t now;
    if (timeout_ns < 0)
        return UINT64_MAX;
    now = rp_now(r);
    return now + (uint64_t)timeout_ns < now ? UINT64_MAX : now + (uint64_t)timeout_ns;
}

static inline uint8_t *rp_buf(const struct mdcom_rpmsg *r, uint32_t b)
{
    return r->pool + (size_t)b * r->bsize;
}

static inline uint64_t rp_buf_addr(const struct mdcom_rpmsg *r, uint32_t b)
{
    return r->addr_base + (uint64_t)b * r->bsize;
}

static inline int rp_ok(const struct mdcom_rpmsg *r)
{
    return r && r->magic == MDCOM_RP_INST_MAGIC;
}

/* rpmsg_virtio.c: notification, and the buffer flows */
void mdcom_rp_suppress(struct mdcom_rpmsg *r, int on);
void mdcom_rp_notify(struct mdcom_rpmsg *r, uint32_t idx);
void mdcom_rp_return_rx(struct mdcom_rpmsg *r, uint32_t b);
void mdcom_rp_flush_rx(struct mdcom_rpmsg *r);
int mdcom_rp_get_tx(struct mdcom_rpmsg *r, uint32_t *b, int64_t timeout_ns);
void mdcom_rp_post_tx(struct mdcom_rpmsg *r, uint32_t b, uint32_t src, uint32_t dst, uint32_t len);
void mdcom_rp_free_tx(struct mdcom_rpmsg *r, uint32_t b);
int mdcom_rp_send_raw(struct mdcom_rpmsg *r, uint32_t src, uint32_t dst, const void *data,
                      size_t len, int64_t timeout_ns);

/* rpmsg_ns.c: the name service (a received message, an announcement) */
int mdcom_rp_ns_rx(struct mdcom_rpmsg *r, const uint8_t *p, uint32_t plen);
int mdcom_rp_send_ns(struct mdcom_rpmsg *r, const struct mdcom_rpmsg_ept *e, uint32_t flags,
                     int64_t timeout_ns);

/* rpmsg_ept.c: the endpoint of a local address, NULL if none */
struct mdcom_rpmsg_ept *mdcom_rp_find_ept(struct mdcom_rpmsg *r, uint32_t addr);

#endif /* MDCOM_RPMSG_INTERNAL_H */
