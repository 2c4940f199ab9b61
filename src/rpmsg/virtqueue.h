/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtqueue.h - virtio split virtqueues (virtio 1.x, section "Split Virtqueues",
 * and its "Legacy Interfaces: A Note on Virtqueue Layout"), both roles.
 *
 * One split virtqueue of queue size N (a power of two, 1..32768) is three
 * parts in shared memory. The layout below is the one a legacy/remoteproc
 * peer (Linux vring_init(), OpenAMP, RPMsg-Lite) computes from (N, align):
 *
 *   offset 0 ------------------------------------------------------------+
 *   | descriptor table: N x 16 B                                          |
 *   |   +0 le64 addr   +8 le32 len   +12 le16 flags   +14 le16 next       |
 *   16N -----------------------------------------------------------------+
 *   | available ring (driver -> device): 6 + 2N B                         |
 *   |   +0 le16 flags  +2 le16 idx  +4 le16 ring[N]  +4+2N le16 used_event|
 *   16N + 6 + 2N ---------------------------------------------------------+
 *   | padding up to the next multiple of align                            |
 *   U = align_up(16N + 6 + 2N, align) -------------------------------------+
 *   | used ring (device -> driver): 6 + 8N B                              |
 *   |   +0 le16 flags  +2 le16 idx  +4 {le32 id; le32 len} ring[N]        |
 *   |   +4+8N le16 avail_event                                            |
 *   U + 6 + 8N  (= vring_size(N, align) of Linux) ------------------------+
 *
 * mdcom_vring_layout_compute() is the one function that computes these offsets.
 *
 * Roles:
 *   driver (virtio "driver", the Linux host): owns the descriptors, publishes
 *     descriptor heads in the available ring, reclaims them from the used ring.
 *     It writes desc[], avail.ring[], avail.idx and reads only used.idx and
 *     used.ring[].
 *   device (OpenAMP/RPMsg-Lite remote): consumes heads from the available ring,
 *     returns them (possibly out of order) in the used ring. It writes
 *     used.ring[], used.idx and reads only avail.idx, avail.ring[] and desc[].
 * Each side keeps its own positions privately and never reads back an index
 * it wrote itself; every index, head, length and address read from the peer
 * is read once into a local and validated before use.
 *
 * Notification suppression: the receiving side of a ring asks its peer not
 * to notify it by setting a flag in the part of the ring it writes (driver:
 * avail.flags VRING_AVAIL_F_NO_INTERRUPT; device: used.flags
 * VRING_USED_F_NO_NOTIFY); the publishing side reads the peer's flag after a
 * full fence and notifies unless it is set (virtio 1.x 2.7.7, 2.7.10).
 * The event-index feature (VIRTIO_RING_F_EVENT_IDX) and indirect/chained
 * descriptors are never offered nor accepted (RPMsg does not need them), so
 * a conforming peer does not use them: the two event fields are laid out (so
 * the sizes match the specification) but left 0.
 *
 * This header is C and C++ (tests): no _Atomic in it; the .c file accesses
 * the two shared 16-bit indices with C11 atomics.
 */
#ifndef MDCOM_RPMSG_VIRTQUEUE_H
#define MDCOM_RPMSG_VIRTQUEUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MDCOM_VQ_MAX_NUM 32768u /* specification: queue size <= 32768  */

/* descriptor flags */
#define MDCOM_VQ_DESC_F_NEXT 1u
#define MDCOM_VQ_DESC_F_WRITE 2u /* device-writable (an RX buffer of the driver) */
#define MDCOM_VQ_DESC_F_INDIRECT 4u
/* ring flags */
#define MDCOM_VQ_AVAIL_F_NO_INTERRUPT 1u
#define MDCOM_VQ_USED_F_NO_NOTIFY 1u

/* Wire structures (little-endian fields). */
struct mdcom_vq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
struct mdcom_vq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[]; /* N entries, then le16 used_event */
};
struct mdcom_vq_used_elem {
    uint32_t id;
    uint32_t len;
};
struct mdcom_vq_used {
    uint16_t flags;
    uint16_t idx;
    struct mdcom_vq_used_elem ring[]; /* N entries, then le16 avail_event */
};

#ifndef __cplusplus
_Static_assert(sizeof(struct mdcom_vq_desc) == 16, "virtq_desc is 16 bytes");
_Static_assert(offsetof(struct mdcom_vq_desc, addr) == 0, "desc.addr at 0");
_Static_assert(offsetof(struct mdcom_vq_desc, len) == 8, "desc.len at 8");
_Static_assert(offsetof(struct mdcom_vq_desc, flags) == 12, "desc.flags at 12");
_Static_assert(offsetof(struct mdcom_vq_desc, next) == 14, "desc.next at 14");
_Static_assert(sizeof(struct mdcom_vq_avail) == 4, "avail header is 4 bytes");
_Static_assert(offsetof(struct mdcom_vq_avail, idx) == 2, "avail.idx at 2");
_Static_assert(offsetof(struct mdcom_vq_avail, ring) == 4, "avail.ring at 4");
_Static_assert(sizeof(struct mdcom_vq_used_elem) == 8, "virtq_used_elem is 8 bytes");
_Static_assert(offsetof(struct mdcom_vq_used_elem, len) == 4, "used_elem.len at 4");
_Static_assert(sizeof(struct mdcom_vq_used) == 4, "used header is 4 bytes");
_Static_assert(offsetof(struct mdcom_vq_used, idx) == 2, "used.idx at 2");
_Static_assert(offsetof(struct mdcom_vq_used, ring) == 4, "used.ring at 4");
#endif

/* Offsets (bytes from the start of the vring) for queue size num and
 * alignment align. size is the end of the used ring (Linux vring_size());
 * size_aligned rounds it up to align (where a following vring may start). */
struct mdcom_vring_layout {
    uint32_t num, align;
    uint32_t desc_off;        /* 0                                 */
    uint32_t avail_off;       /* 16N                               */
    uint32_t used_event_off;  /* 16N + 4 + 2N                    */
    uint32_t used_off;        /* align_up(16N + 6 + 2N, align)     */
    uint32_t avail_event_off; /* used_off + 4 + 8N              */
    uint32_t size;            /* used_off + 6 + 8N                 */
    uint32_t size_aligned;    /* align_up(size, align)             */
};

/* 0, or -EINVAL unless num is a power of two in 1..32768 and align a power of
 * two >= 4 (the used ring's natural alignment) and <= 1 MiB. */
int mdcom_vring_layout_compute(uint32_t num, uint32_t align, struct mdcom_vring_layout *out);

/* ------------------------------------------------------------------ */
/* Private per-side state of one virtqueue (in the caller's memory)    */
/* ------------------------------------------------------------------ */
/* state[] values per descriptor head */
#define MDCOM_VQ_IDLE 0u /* driver: free; device: not taken            */
#define MDCOM_VQ_OUT 1u  /* driver: given to the device; device: taken */

struct mdcom_vq {
    uint8_t *desc;  /* shared */
    uint8_t *avail; /* shared */
    uint8_t *used;  /* shared */
    uint8_t *state; /* private, num entries */
    uint32_t num;
    uint16_t next_avail;  /* driver: next avail.idx to publish; device: next entry to consume */
    uint16_t next_used;   /* driver: next used entry to consume; device: next used.idx */
    uint32_t outstanding; /* heads in state OUT */
};

/* Result codes of the peer-facing calls (besides 0 / 1) */
/* -EPROTO: index jump (more entries than can exist) or head out of range or
 *          not in the expected state; *bad tells which. */
enum mdcom_vq_bad { MDCOM_VQ_BAD_NONE = 0, MDCOM_VQ_BAD_IDX_JUMP, MDCOM_VQ_BAD_HEAD };

/* Bind the private state to a vring at base (layout l). state has l->num bytes. */
void mdcom_vq_bind(struct mdcom_vq *vq, void *base, const struct mdcom_vring_layout *l,
                   uint8_t *state);
/* Bind to a vring whose three parts lie anywhere (vhost-user, a resource
 * table with its own layout). state has num bytes. */
void mdcom_vq_bind_parts(struct mdcom_vq *vq, void *desc, void *avail, void *used, uint32_t num,
                         uint8_t *state);

/* Notification suppression (atomic 16-bit flags words).
 * Driver: ask (on != 0) or stop asking the device not to interrupt us. */
void mdcom_vq_drv_suppress(struct mdcom_vq *vq, int on);
/* Driver: 1 unless the device set VRING_USED_F_NO_NOTIFY. Call after a full
 * fence that follows the publication of avail.idx. */
int mdcom_vq_drv_peer_wants_notify(const struct mdcom_vq *vq);
/* Device: ask (on != 0) or stop asking the driver not to notify us. */
void mdcom_vq_dev_suppress(struct mdcom_vq *vq, int on);
/* Device: 1 unless the driver set VRING_AVAIL_F_NO_INTERRUPT. Call after a
 * full fence that follows the publication of used.idx. */
int mdcom_vq_dev_peer_wants_interrupt(const struct mdcom_vq *vq);

/* Driver: zero the whole vring (at format time, before the device looks). */
void mdcom_vq_drv_format(struct mdcom_vq *vq);

/* Driver: write desc[head] and append head to the available ring (not yet
 * visible to the device: see mdcom_vq_drv_publish). head must be IDLE. */
void mdcom_vq_drv_add(struct mdcom_vq *vq, uint16_t head, uint64_t addr, uint32_t len,
                      uint16_t flags);
/* Driver: make the added heads visible (release store of avail.idx). */
void mdcom_vq_drv_publish(struct mdcom_vq *vq);
/* Driver: take one returned head from the used ring.
 * 1 and *head, *len; 0 when none, -EPROTO (with *bad) for a used.idx that
 * jumped past the heads outstanding (nothing consumed) or a head that is out
 * of range or not outstanding (that entry is consumed and dropped). */
int mdcom_vq_drv_get_used(struct mdcom_vq *vq, uint16_t *head, uint32_t *len,
                          enum mdcom_vq_bad *bad);
/* Driver: 1 when used.idx differs from our position (something to take). */
int mdcom_vq_drv_has_used(const struct mdcom_vq *vq);

/* Device: take one head from the available ring and read its descriptor
 * (each field once). 1 and *head, *addr, *len, *flags; 0 when none, -EPROTO
 * (with *bad) for an avail.idx that jumped more than num entries ahead
 * (nothing consumed) or a head out of range / already taken (consumed and
 * dropped). Chained/indirect flags are returned for the caller to refuse. */
int mdcom_vq_dev_get_avail(struct mdcom_vq *vq, uint16_t *head, uint64_t *addr, uint32_t *len,
                           uint16_t *flags, enum mdcom_vq_bad *bad);
/* Device: return a taken head with used.len = len (not yet visible: see
 * mdcom_vq_dev_publish). */
void mdcom_vq_dev_put_used(struct mdcom_vq *vq, uint16_t head, uint32_t len);
/* Device: make the returned heads visible (release store of used.idx). */
void mdcom_vq_dev_publish(struct mdcom_vq *vq);
/* Device, at attach to a ring the driver formatted: continue the used ring
 * from the used.idx found there (the one time the device reads it).
 * Linux and OpenAMP leave it 0; RPMsg-Lite's master pre-fills the used ring
 * of its TX vring with all its buffers (used.idx = num) and takes them from
 * there, so a device that restarted the count at 0 would hide them. Only
 * positions are relative, so whatever value is found is harmless. */
void mdcom_vq_dev_resume_used(struct mdcom_vq *vq);
/* Device: 1 when avail.idx differs from our position. */
int mdcom_vq_dev_has_avail(const struct mdcom_vq *vq);

/* little-endian helpers (plain loads on a little-endian CPU; a big-endian
 * port swaps here) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define MDCOM_LE16(x) ((uint16_t)__builtin_bswap16((uint16_t)(x)))
#define MDCOM_LE32(x) ((uint32_t)__builtin_bswap32((uint32_t)(x)))
#define MDCOM_LE64(x) ((uint64_t)__builtin_bswap64((uint64_t)(x)))
#else
#define MDCOM_LE16(x) ((uint16_t)(x))
#define MDCOM_LE32(x) ((uint32_t)(x))
#define MDCOM_LE64(x) ((uint64_t)(x))
#endif

/* Read a shared field exactly once (volatile: the compiler may not re-load it). */
static inline uint16_t mdcom_rd16(const void *p)
{
    return MDCOM_LE16(*(const volatile uint16_t *)p);
}
static inline uint32_t mdcom_rd32(const void *p)
{
    return MDCOM_LE32(*(const volatile uint32_t *)p);
}
static inline uint64_t mdcom_rd64(const void *p)
{
    /* two 32-bit loads: a Cortex-M peer has no 64-bit single-copy atomicity */
    uint64_t lo = mdcom_rd32(p), hi = mdcom_rd32((const uint8_t *)p + 4);
    return lo | (hi << 32);
}
static inline void mdcom_wr16(void *p, uint16_t v) { *(volatile uint16_t *)p = MDCOM_LE16(v); }
static inline void mdcom_wr32(void *p, uint32_t v) { *(volatile uint32_t *)p = MDCOM_LE32(v); }
static inline void mdcom_wr64(void *p, uint64_t v)
{
    mdcom_wr32(p, (uint32_t)v);
    mdcom_wr32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_RPMSG_VIRTQUEUE_H */
