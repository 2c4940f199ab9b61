/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg.h - RPMsg over virtio split virtqueues, wire-compatible with the Linux
 * virtio_rpmsg_bus driver and with OpenAMP / RPMsg-Lite firmware.
 *
 * One RPMsg instance runs over one shared memory area given as (pointer, size):
 * the data area of an mdcom SMEM channel (mdcom_smemch_get), a region mapped by
 * the platform, or the carveout of a remoteproc. Two roles:
 *
 *   MDCOM_RPMSG_HOST    the virtio driver (what Linux is): formats the vrings,
 *                       owns every buffer of the pool, first half RX, second
 *                       half TX, like virtio_rpmsg_bus.
 *   MDCOM_RPMSG_REMOTE  the virtio device (what OpenAMP/RPMsg-Lite firmware is):
 *                       sends in buffers the host posted for it.
 *
 * Area layout (mdcom_rpmsg_layout_compute; docs/rpmsg.md has the diagram):
 *   control block (mdcom rendezvous: magic, geometry, status, notify words)
 *   vring 0  remote -> host  (Linux: the "input" virtqueue, index 0)
 *   vring 1  host -> remote  (Linux: the "output" virtqueue, index 1)
 *   buffer pool: 2 x num_bufs buffers of buf_size bytes (host RX, then host TX)
 * Addresses in descriptors are addr_base + (offset of the buffer in the pool),
 * so a Linux peer's physical addresses are used by setting addr_base to the
 * pool's physical address; between two mdcom sides addr_base is 0.
 *
 * Memory laid out by someone else (a remoteproc resource table, a Linux
 * host's carveout, vhost-user): mdcom_rpmsg_init_bound() below, with no
 * control block; the layout above is then not used.
 *
 * Messages: a 16-byte header (le32 src, le32 dst, le32 reserved, le16 len,
 * le16 flags) and up to buf_size - 16 bytes of payload (496 by default).
 * Endpoint addresses below 1024 are reserved; 53 is the name service, which
 * carries announcements {char name[32]; le32 addr; le32 flags (0 create,
 * 1 destroy)}.
 *
 * Receiving: messages are dispatched to endpoint callbacks from
 * mdcom_rpmsg_poll() and from any blocked send on the same instance (a blocked
 * sender keeps draining its receive ring, so two sides that both send cannot
 * deadlock). Callbacks may send. A buffer is returned to the peer after its
 * callback returns, whatever the callback returned, unless the callback called
 * mdcom_rpmsg_hold_rx_buffer().
 *
 * Threads: an instance (and its endpoints) is used by one thread at a time;
 * the two sides are two instances (two processes, two cores, or two threads).
 *
 * Conventions (as mdcom.h): 0 or a documented value >= 0 on success, negative
 * errno on failure; timeouts in ns: MDCOM_POLL (0) never waits, MDCOM_FOREVER
 * (-1) waits without limit. Errors that mean the peer broke the protocol:
 * -EPROTO (bad ring index, descriptor, address) and -EBADMSG (bad length or
 * header); each is also counted in mdcom_rpmsg_stats. A message to an
 * address without endpoint and a malformed name service message are
 * counted and dropped, not errors (as Linux and OpenAMP do). Every function taking a handle returns -EINVAL for a NULL
 * or foreign handle. Waits of the remote return -ESHUTDOWN once the host
 * ended the instance.
 *
 * Freestanding: no malloc. The caller provides the instance's private memory
 * (mdcom_rpmsg_state_size bytes), whose size depends on the geometry and the
 * endpoint capacity only; nothing of it is shared with the peer.
 */
#ifndef MDCOM_RPMSG_H
#define MDCOM_RPMSG_H

#include <stddef.h>
#include <stdint.h>
#include "mdcom/export.h"

#include "mdcom/mdcom.h"

#ifdef __cplusplus
extern "C" {
#endif

MDCOM_API_BEGIN /* the declarations below are the exported API */

/* ------------------------------------------------------------------ */
/* Wire constants                                                         */
/* ------------------------------------------------------------------ */
#define MDCOM_RPMSG_HDR_SIZE 16u    /* struct rpmsg_hdr                 */
#define MDCOM_RPMSG_NAME_SIZE 32u   /* service name incl. NUL           */
#define MDCOM_RPMSG_NS_ADDR 53u     /* name service endpoint (0x35)      */
#define MDCOM_RPMSG_NS_MSG_SIZE 40u /* struct rpmsg_ns_msg              */
#define MDCOM_RPMSG_NS_CREATE 0u
#define MDCOM_RPMSG_NS_DESTROY 1u
#define MDCOM_RPMSG_RESERVED_ADDRESSES 1024u /* dynamic addresses start here   */
#define MDCOM_RPMSG_ADDR_ANY 0xffffffffu
#define MDCOM_RPMSG_F_NS 0x1u /* virtio feature bit 0: name service */

/* Defaults (Linux virtio_rpmsg_bus geometry). */
#define MDCOM_RPMSG_DEFAULT_NUM_BUFS 256u
#define MDCOM_RPMSG_DEFAULT_BUF_SIZE 512u
#define MDCOM_RPMSG_DEFAULT_ALIGN 4096u
#define MDCOM_RPMSG_DEFAULT_ENDPOINTS 16u
#define MDCOM_RPMSG_DEFAULT_SERVICES 16u

/* Limits of the geometry. */
#define MDCOM_RPMSG_MAX_NUM_BUFS 32768u /* virtio: queue size <= 32768      */
#define MDCOM_RPMSG_MIN_BUF_SIZE 64u    /* header + a name service message  */
#define MDCOM_RPMSG_MAX_BUF_SIZE 65536u /* header len field is 16 bits      */

enum mdcom_rpmsg_role { MDCOM_RPMSG_HOST = 1, MDCOM_RPMSG_REMOTE = 2 };

/* The wire geometry. Both sides must use the same. Zero fields take the
 * defaults. */
typedef struct mdcom_rpmsg_geometry {
    uint32_t num_bufs;    /* buffers per direction = vring size: power of two,
                             1..32768 (default 256)                            */
    uint32_t buf_size;    /* bytes per buffer incl. the 16-byte header: multiple
                             of 16, 64..65536 (default 512; a Linux peer needs
                             512)                                              */
    uint32_t vring_align; /* alignment of the used rings and of each vring:
                             power of two, 4..1 MiB (default 4096)             */
} mdcom_rpmsg_geometry;

/* Where everything lies in the area (byte offsets from the area base). */
typedef struct mdcom_rpmsg_layout {
    mdcom_rpmsg_geometry geometry; /* with defaults resolved                  */
    uint32_t ctl_off, ctl_size;    /* control block                            */
    uint32_t vring_off[2];         /* vring 0 (remote->host), 1 (host->remote) */
    uint32_t vring_size;           /* bytes of one vring (Linux vring_size)    */
    uint32_t pool_off, pool_size;  /* 2 * num_bufs * buf_size bytes            */
    uint32_t size;                 /* bytes the area must have at least        */
} mdcom_rpmsg_layout;

/* Compute the layout for geometry g (NULL = all defaults).
 * 0, or -EINVAL (a field out of range), -EOVERFLOW (larger than 4 GiB). */
int mdcom_rpmsg_layout_compute(const mdcom_rpmsg_geometry *g, mdcom_rpmsg_layout *out);

/* ------------------------------------------------------------------ */
/* Instance                                                               */
/* ------------------------------------------------------------------ */
typedef struct mdcom_rpmsg mdcom_rpmsg_t;
typedef struct mdcom_rpmsg_ept mdcom_rpmsg_ept_t;
struct mdcom_platform; /* see mdcom/platform.h */

/* Endpoint callback: a message of len bytes (data points into the shared
 * buffer, valid until the callback returns unless held) from address src.
 * A negative return is counted (stats.cb_errors); the buffer is returned to
 * the peer either way. */
typedef int (*mdcom_rpmsg_cb)(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src,
                              void *priv);

/* Name service callback: the peer announced (flags MDCOM_RPMSG_NS_CREATE) or
 * withdrew (MDCOM_RPMSG_NS_DESTROY) service name at address addr. Called from
 * the dispatching call; may create endpoints and send. */
typedef void (*mdcom_rpmsg_ns_cb)(mdcom_rpmsg_t *r, const char *name, uint32_t addr, uint32_t flags,
                                  void *priv);

typedef struct mdcom_rpmsg_opts {
    uint32_t role;                         /* enum mdcom_rpmsg_role                    */
    mdcom_rpmsg_geometry geometry;         /* zero fields: defaults                    */
    uint64_t addr_base;                    /* descriptor address of the pool's byte 0  */
    uint32_t max_endpoints;                /* local endpoints, 0 = 16 (not wire)       */
    uint32_t max_services;                 /* remembered peer services, 0 = 16         */
    const struct mdcom_platform *platform; /* NULL = mdcom_platform_default()   */
    uint32_t spin_ns;                      /* adaptive spin before sleeping; 0 =
                                       default (20 us), MDCOM_NO_SPIN = none    */
    int64_t attach_timeout_ns;             /* remote: wait this long for the host      */
    mdcom_rpmsg_ns_cb ns_cb;               /* optional                                 */
    void *ns_priv;
    uint32_t no_ns; /* host: do not offer VIRTIO_RPMSG_F_NS
                                       (mdcom control block mode; a bound host
                                       takes the device's features instead)    */
} mdcom_rpmsg_opts;

/* Bytes of private memory an instance with these options needs (0 when the
 * options are invalid). */
size_t mdcom_rpmsg_state_size(const mdcom_rpmsg_opts *opts);

/* Start an instance over area (area_size bytes, aligned to at least 64; to
 * vring_align for a Linux peer) in the caller's state memory (state_size >=
 * mdcom_rpmsg_state_size(opts), 16-byte aligned).
 * HOST: formats the control block and the vrings, posts all its RX buffers
 *   and publishes "driver OK"; never waits.
 * REMOTE: waits up to opts->attach_timeout_ns for the host's "driver OK",
 *   checks magic, version and geometry, and marks itself attached. It does
 *   not write the vrings at attach, so it may attach before or after the host
 *   sent messages.
 * Returns 0 and *out, or:
 *   -EINVAL    bad argument, role, geometry or alignment of area/state
 *   -ENOSPC    area_size or state_size too small
 *   -ETIMEDOUT (remote) the host did not start in time
 *   -EBADMSG   (remote) the control block holds garbage (bad magic)
 *   -EPROTONOSUPPORT (remote) another control block version
 *   -ESTALE    (remote) the host uses another geometry */
int mdcom_rpmsg_init(mdcom_rpmsg_t **out, void *state, size_t state_size, void *area,
                     size_t area_size, const mdcom_rpmsg_opts *opts);

/* End the instance. The host marks the area reset (the remote's waits return
 * -ESHUTDOWN); the remote marks itself detached. Endpoints are destroyed
 * without announcements. Buffers still held are not returned.
 * 0 or -EINVAL. */
int mdcom_rpmsg_term(mdcom_rpmsg_t *r);

/* Largest payload of one message (buf_size - 16), or 0 for a bad handle. */
uint32_t mdcom_rpmsg_max_payload(const mdcom_rpmsg_t *r);

/* Dispatch received messages to their endpoints. Waits up to timeout_ns for
 * the first one when none is pending, then dispatches everything pending.
 * Returns the number of messages taken (>= 0, dispatched or dropped; 0 when
 * nothing arrived in time), or at the first protocol violation (the
 * offending entry counted and, where possible, dropped and its buffer
 * returned):
 *   -EPROTO    bad ring index, descriptor head, flags or buffer address
 *   -EBADMSG   bad used/descriptor length or header length
 *   -ESHUTDOWN (remote) the host ended the instance
 *   -EINTR     a signal interrupted the wait (Linux port)
 *   -EDEADLK   called from inside a callback nested too deep (depth 4) */
int mdcom_rpmsg_poll(mdcom_rpmsg_t *r, int64_t timeout_ns);

/* Wait up to timeout_ns (dispatching messages meanwhile) until the peer has
 * announced a service called name; 0 and *addr, -ETIMEDOUT, -EINVAL (name
 * empty or longer than 31 bytes), or an error of mdcom_rpmsg_poll. */
int mdcom_rpmsg_wait_service(mdcom_rpmsg_t *r, const char *name, uint32_t *addr,
                             int64_t timeout_ns);

/* ------------------------------------------------------------------ */
/* Binding to memory mdcom does not lay out                               */
/* ------------------------------------------------------------------ */
/* An instance can run on vrings and a buffer pool placed by someone else
 * (a remoteproc resource table, a Linux host's carveout, vhost-user), with
 * no mdcom control block. The caller gives local pointers to the three parts
 * of both vrings, the pool, the device address of the pool (descriptor
 * addresses are pool_da + byte offset in the pool), and how to notify the
 * peer and wait for its notifications. Virtio device status and features,
 * when there is a place for them (a resource table's vdev entry), are read
 * and written there.
 *
 * Requirements: both vrings have num entries (a power of two); the pool holds
 * 2 * num buffers of buf_size bytes, the host's RX buffers (posted in vring
 * 0) first, then its TX buffers, as Linux virtio_rpmsg_bus and OpenAMP's
 * host allocate them. */
typedef struct mdcom_rpmsg_vring {
    void *desc, *avail, *used; /* local pointers to the three parts          */
} mdcom_rpmsg_vring;

typedef struct mdcom_rpmsg_bind {
    mdcom_rpmsg_vring vring[2]; /* 0: remote -> host, 1: host -> remote      */
    uint32_t num;               /* entries of each vring                      */
    uint32_t buf_size;          /* bytes per buffer incl. header (Linux: 512)  */
    void *pool;                 /* local pointer to buffer 0                  */
    uint64_t pool_da;           /* its address in descriptors                 */
    /* virtio device status byte and feature words (resource table vdev
     * entry: status, dfeatures, gfeatures); NULL: none (then features below
     * are the negotiated ones and the device counts as started) */
    uint8_t *status;
    uint32_t *dfeatures, *gfeatures;
    uint32_t features; /* used when gfeatures is NULL (bit 0: F_NS)  */
    /* Notify the peer that vring vq (0/1) has news. Required. */
    void (*notify)(void *ctx, uint32_t vq);
    /* Sleep until the peer notifies or timeout_ns passes; a notification
     * sent since the previous call must make it return at once (an
     * interrupt's pending bit, an eventfd, a semaphore). 0 or -EINTR.
     * NULL: the instance spins (platform relax) instead of sleeping. */
    int (*wait)(void *ctx, int64_t timeout_ns);
    void *ctx;
} mdcom_rpmsg_bind;

/* Fill b->vring[i] from legacy vrings starting at vring0/vring1 with num
 * entries and alignment align (the layout of Linux vring_init, OpenAMP and
 * RPMsg-Lite). 0 or -EINVAL. */
int mdcom_rpmsg_bind_legacy_vrings(mdcom_rpmsg_bind *b, void *vring0, void *vring1, uint32_t num,
                                   uint32_t align);

/* For a remote whose host does not say where its buffer pool lies (the
 * vhost-user case: a device only learns the vrings): find pool_da from the
 * RX buffers the host posted in vring 0. Linux virtio_rpmsg_bus (and
 * OpenAMP's host) allocate the 2 * num buffers in one block, RX half first,
 * and post every RX buffer before their first notification, so the lowest
 * posted address is the pool's. Call it after that notification, with
 * b->vring[0], b->num and b->buf_size set; it only reads the ring. Every
 * posted descriptor must be one device-writable buffer of buf_size bytes at
 * pool_da + k * buf_size, k < num.
 * 0 and b->pool_da; -EAGAIN (nothing posted yet), -EPROTO (a posted entry
 * breaks the rule: the host lays out its pool otherwise), -EINVAL (bad b).
 * The caller then sets b->pool to its own mapping of
 * [pool_da, pool_da + 2 * num * buf_size). */
int mdcom_rpmsg_bind_find_pool(mdcom_rpmsg_bind *b);

/* Start an instance on bound memory. opts->geometry and opts->addr_base are
 * ignored (b gives them); everything else as mdcom_rpmsg_init.
 * HOST: zeroes and formats both vrings, posts its RX buffers; with a status
 *   byte it writes ACKNOWLEDGE, DRIVER, the negotiated features
 *   (*gfeatures = *dfeatures & F_NS), FEATURES_OK, then DRIVER_OK.
 * REMOTE: with a status byte, waits up to attach_timeout_ns for DRIVER_OK
 *   (any other bits accepted; FAILED refused), then reads *gfeatures; its
 *   waits return -ESHUTDOWN once the status is reset to 0 or FAILED.
 * 0, or -EINVAL (bad b or opts), -ENOSPC (state_size), -ETIMEDOUT,
 * -ECONNREFUSED (status FAILED). */
int mdcom_rpmsg_init_bound(mdcom_rpmsg_t **out, void *state, size_t state_size,
                           const mdcom_rpmsg_bind *b, const mdcom_rpmsg_opts *opts);

/* Bytes of private memory mdcom_rpmsg_init_bound needs for num entries. */
size_t mdcom_rpmsg_state_size_bound(uint32_t num, const mdcom_rpmsg_opts *opts);

/* ---- remoteproc resource table (Linux remoteproc, OpenAMP) ---------- */
#define MDCOM_RSC_VDEV 3u        /* resource type of a virtio device         */
#define MDCOM_VIRTIO_ID_RPMSG 7u /* virtio device id of rpmsg                */
#define MDCOM_RSC_ADDR_ANY 0xffffffffu

/* struct fw_rsc_vdev_vring (20 bytes) */
typedef struct mdcom_rsc_vring {
    uint32_t da, align, num, notifyid, pa;
} mdcom_rsc_vring;
/* struct fw_rsc_vdev (24 bytes + vrings + config) after its le32 type word */
typedef struct mdcom_rsc_vdev {
    uint32_t id, notifyid, dfeatures, gfeatures, config_len;
    uint8_t status, num_of_vrings, reserved[2];
    mdcom_rsc_vring vring[];
} mdcom_rsc_vdev;

/* Find the first rpmsg vdev entry (id 7, >= 2 vrings) of the resource
 * table at table (size bytes: le32 ver = 1, num, reserved[2], le32
 * offset[num], entries), validating every offset and size against size.
 * 0 and *vdev, or -EINVAL (malformed table), -ENOENT (no rpmsg vdev). */
int mdcom_rsc_find_rpmsg(void *table, size_t size, mdcom_rsc_vdev **vdev);

/* Fill a binding from a resource table's rpmsg vdev: the vrings at their da
 * (vring[i].da, .align, .num), translated to local pointers through the
 * memory window mem (local pointer) = mem_da (device address) .. + mem_size;
 * the pool at pool_da (Linux: the vdev's buffer carveout; its RX half first),
 * also in the window; status and features pointing into the vdev entry.
 * notify/wait/ctx are left for the caller. 0, -EINVAL (da ANY or outside
 * the window, vrings of different sizes, bad geometry). */
int mdcom_rpmsg_bind_from_rsc(mdcom_rpmsg_bind *b, mdcom_rsc_vdev *vdev, void *mem, uint64_t mem_da,
                              size_t mem_size, uint64_t pool_da, uint32_t buf_size);

/* Counters (all time, this side). */
typedef struct mdcom_rpmsg_stats {
    uint64_t rx_msgs, tx_msgs; /* messages dispatched / sent            */
    uint32_t bad_idx;          /* a ring index jumped past what can exist       */
    uint32_t bad_head;         /* descriptor head / used id out of range or not
                               in the state the protocol allows             */
    uint32_t bad_desc;         /* descriptor flags (chain, indirect, direction) */
    uint32_t bad_addr;         /* buffer address outside the pool or not at the
                               start of one of the right buffers           */
    uint32_t bad_len;          /* descriptor/used length or header length wrong */
    uint32_t bad_ns;           /* malformed name service message               */
    uint32_t unknown_dst;      /* messages to an address without endpoint       */
    uint32_t cb_errors;        /* callbacks that returned < 0                   */
    uint32_t ns_dropped;       /* announcements not remembered (table full)     */
} mdcom_rpmsg_stats;

/* 0 or -EINVAL. */
int mdcom_rpmsg_stats_get(const mdcom_rpmsg_t *r, mdcom_rpmsg_stats *st);

/* ------------------------------------------------------------------ */
/* Endpoints                                                              */
/* ------------------------------------------------------------------ */

/* Create a local endpoint at address src (MDCOM_RPMSG_ADDR_ANY: the next free
 * dynamic address >= 1024) bound to the remote address dst (ADDR_ANY: not
 * yet known; learned from the first message received, as OpenAMP does, or
 * from an announcement of the same name). name may be NULL or "" (no
 * service). When name is given and dst is ADDR_ANY the endpoint is announced
 * to the peer (name service create), as OpenAMP's rpmsg_create_ept does; the
 * announcement waits at most timeout_ns for a TX buffer.
 * Returns 0 and *out, or:
 *   -EINVAL     bad argument, name of 32 bytes or more, src == 53 or ADDR_ANY
 *               explicitly reserved
 *   -EADDRINUSE src is taken
 *   -ENOSPC     all max_endpoints in use
 *   -ETIMEDOUT  / other send errors: the announcement failed (the endpoint
 *               is not created) */
int mdcom_rpmsg_ept_create(mdcom_rpmsg_t *r, mdcom_rpmsg_ept_t **out, const char *name,
                           uint32_t src, uint32_t dst, mdcom_rpmsg_cb cb, void *priv,
                           int64_t timeout_ns);

/* Destroy an endpoint; if it was announced, announce the destruction (only if
 * a TX buffer is free at once: never waits). The endpoint is gone either way.
 * 0, -ETIMEDOUT (destroyed, announcement not sent), -EINVAL. Buffers the
 * endpoint holds stay held: release them first. */
int mdcom_rpmsg_ept_destroy(mdcom_rpmsg_ept_t *ept);

/* Local / remote address (MDCOM_RPMSG_ADDR_ANY for a bad handle or unbound). */
uint32_t mdcom_rpmsg_ept_addr(const mdcom_rpmsg_ept_t *ept);
uint32_t mdcom_rpmsg_ept_dst(const mdcom_rpmsg_ept_t *ept);

/* ------------------------------------------------------------------ */
/* Sending (copy)                                                         */
/* ------------------------------------------------------------------ */
/* send: from the endpoint's address to its dst; sendto: to dst;
 * send_offchannel: from src to dst. They wait up to timeout_ns for a TX
 * buffer, dispatching received messages meanwhile, copy len bytes and
 * notify the peer. try*: timeout MDCOM_POLL.
 * Returns 0, or:
 *   -EMSGSIZE  len > mdcom_rpmsg_max_payload
 *   -ENOTCONN  send: the endpoint has no dst yet
 *   -EINVAL    bad handle/pointer, src or dst ADDR_ANY
 *   -ETIMEDOUT no TX buffer became free in time (the peer stopped
 *              consuming); with MDCOM_POLL: none free now
 *   -ESHUTDOWN (remote) the host ended the instance
 *   -EPROTO / -EBADMSG the TX ring was corrupted (counted)
 *   -EINTR     a signal interrupted the wait */
int mdcom_rpmsg_send(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, int64_t timeout_ns);
int mdcom_rpmsg_sendto(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, uint32_t dst,
                       int64_t timeout_ns);
int mdcom_rpmsg_send_offchannel(mdcom_rpmsg_ept_t *ept, uint32_t src, uint32_t dst,
                                const void *data, size_t len, int64_t timeout_ns);
int mdcom_rpmsg_trysend(mdcom_rpmsg_ept_t *ept, const void *data, size_t len);
int mdcom_rpmsg_trysendto(mdcom_rpmsg_ept_t *ept, const void *data, size_t len, uint32_t dst);
int mdcom_rpmsg_trysend_offchannel(mdcom_rpmsg_ept_t *ept, uint32_t src, uint32_t dst,
                                   const void *data, size_t len);

/* ------------------------------------------------------------------ */
/* Zero copy                                                              */
/* ------------------------------------------------------------------ */
/* Take a TX buffer (waiting like send): *buf points to its payload area of
 * *cap (= max_payload) bytes. The caller fills it and passes it to
 * send_nocopy / sendto_nocopy, or gives it back with release_tx_buffer.
 * 0, or the wait errors of send (-ETIMEDOUT, -ESHUTDOWN, -EPROTO, -EINTR),
 * -EINVAL. */
int mdcom_rpmsg_get_tx_buffer(mdcom_rpmsg_ept_t *ept, void **buf, uint32_t *cap,
                              int64_t timeout_ns);
/* Send len bytes of a buffer from get_tx_buffer (ownership passes to the
 * peer; never waits). 0, -EMSGSIZE, -ENOTCONN (send_nocopy without dst),
 * -EINVAL (not a TX buffer this side owns, dst ADDR_ANY), -EALREADY (already
 * sent or released). */
int mdcom_rpmsg_send_nocopy(mdcom_rpmsg_ept_t *ept, void *buf, size_t len);
int mdcom_rpmsg_sendto_nocopy(mdcom_rpmsg_ept_t *ept, void *buf, size_t len, uint32_t dst);
/* Give back an unsent TX buffer. 0, -EINVAL, -EALREADY. */
int mdcom_rpmsg_release_tx_buffer(mdcom_rpmsg_ept_t *ept, void *buf);

/* From inside the endpoint's callback: keep the RX buffer data (the pointer
 * the callback got) after the callback returns. 0, -EINVAL (not the buffer
 * being dispatched), -EALREADY (already held). */
int mdcom_rpmsg_hold_rx_buffer(mdcom_rpmsg_ept_t *ept, void *data);
/* Return a held RX buffer to the peer. 0, -EINVAL (not a buffer of this
 * instance), -EALREADY (not held). */
int mdcom_rpmsg_release_rx_buffer(mdcom_rpmsg_ept_t *ept, void *data);

MDCOM_API_END

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_RPMSG_H */
