/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop.h - what the mdcom side and the peer of an interop test agree on:
 * the shared memory file and its layout, the device address the window has
 * in descriptors, the doorbells, and the echo service's names and commands.
 * The harness (test_interop.cpp) is built once per peer:
 *
 *   OpenAMP (oa_peer.c): a "firmware" resource table at offset 0, vrings and
 *     pool at OpenAMP's Linux reference layout (256 x 512-byte buffers), or
 *     (IOP_OA_LAYOUT2) 64 x 256-byte buffers with the pool apart.
 *   RPMsg-Lite (rl_peer.c, IOP_PEER_RPMSG_LITE): RPMsg-Lite's fixed layout
 *     from its compile-time configuration (IOP_RL_* from rpmsg_lite.cmake):
 *     vring 0 at offset 0, vring 1 at IOP_RL_VRING_SIZE, the pool at twice
 *     that; no resource table, so the mdcom side binds with
 *     mdcom_rpmsg_bind_legacy_vrings and takes F_NS as negotiated.
 */
#ifndef MDCOM_TESTS_INTEROP_H
#define MDCOM_TESTS_INTEROP_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom_crc32.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IOP_MEM_DA 0x3ed00000u /* device address of the window's byte 0 */
#define IOP_NS_ADDR 53u        /* the name service endpoint             */
#define IOP_NAME_SIZE 32u      /* name field of a name service message  */

#ifdef IOP_PEER_RPMSG_LITE
#ifndef IOP_RL_PAYLOAD /* the stub of a build without the peer: no layout */
#define IOP_RL_PAYLOAD 0u
#define IOP_RL_VRING_SIZE 0u
#define IOP_RL_COUNT 0u
#define IOP_RL_ALIGN 0u
#endif
#define IOP_PEER_NAME "RpmsgLite"
#define IOP_RSC 0 /* no resource table                     */
#define IOP_VRING0 0u
#define IOP_VRING1 ((uint32_t)(IOP_RL_VRING_SIZE))
#define IOP_POOL (2u * (uint32_t)(IOP_RL_VRING_SIZE))
#define IOP_NUM ((uint32_t)(IOP_RL_COUNT))
#define IOP_ALIGN ((uint32_t)(IOP_RL_ALIGN))
#define IOP_BUF ((uint32_t)(IOP_RL_PAYLOAD) + 16u)
#define IOP_ECHO_NAME "rl-echo"
#define IOP_SECOND_NAME "rl-second"
#else
#define IOP_PEER_NAME "Openamp"
#define IOP_RSC 1 /* resource table at offset 0            */
#ifdef IOP_OA_LAYOUT2
/* the second layout: 64 buffers of 256 bytes, the pool 96 KiB past the
 * rings (the vdev's buffer carveout placed elsewhere) */
#define IOP_VRING0 0x4000u
#define IOP_VRING1 0x6000u
#define IOP_POOL 0x20000u
#define IOP_NUM 64u
#define IOP_ALIGN 4096u
#define IOP_BUF 256u
#else
#define IOP_VRING0 0x4000u /* offsets in the window */
#define IOP_VRING1 0x8000u
#define IOP_POOL 0x10000u
#define IOP_NUM 256u /* vring entries = buffers per direction */
#define IOP_ALIGN 4096u
#define IOP_BUF 512u
#endif
#define IOP_ECHO_NAME "oa-echo" /* the OpenAMP side's echo service */
#define IOP_SECOND_NAME "oa-second"
#endif
#define IOP_SIZE (IOP_POOL + 2u * IOP_NUM * IOP_BUF)
#define IOP_RSC_ENTRY_OFF 20u /* the vdev entry (its le32 type word)   */
#define IOP_RSC_VDEV_OFF 24u  /* Linux's fw_rsc_vdev (after the type)  */
#define IOP_NOTIFY_ANY 0xffffffffu

#define IOP_MD_NAME "md-svc" /* announced by the mdcom side */

/* The wire form of a name service message. */
struct iop_ns_msg {
    char name[IOP_NAME_SIZE];
    uint32_t addr, flags;
};

/* Four name service messages a receiver must drop: [0] meant to be sent
 * short (10 bytes), [1] a name without NUL, [2] address ANY, [3] flags 7. */
static inline void iop_bad_ns_msgs(struct iop_ns_msg m[4])
{
    for (int i = 0; i < 4; i++) {
        for (unsigned j = 0; j < IOP_NAME_SIZE; j++)
            m[i].name[j] = j < 5 ? "bogus"[j] : '\0';
        m[i].addr = 4000u + (uint32_t)i;
        m[i].flags = 0;
    }
    for (unsigned j = 0; j < IOP_NAME_SIZE; j++)
        m[1].name[j] = 'A';
    m[2].addr = 0xffffffffu;
    m[3].flags = 7;
}

/* A name service destroy of "ghost", a name nobody announced. */
static inline void iop_ns_ghost_destroy(struct iop_ns_msg *m)
{
    for (unsigned j = 0; j < IOP_NAME_SIZE; j++)
        m->name[j] = j < 5 ? "ghost"[j] : '\0';
    m->addr = 7777;
    m->flags = 1; /* destroy */
}

/* The same-name endpoint's answer to data (len bytes): "re:" + data, cut
 * to fit out (IOP_BUF bytes). Returns its length. */
static inline uint32_t iop_reply(char out[IOP_BUF], const void *data, size_t len)
{
    const char *d = (const char *)data;
    uint32_t n = 3;
    out[0] = 'r', out[1] = 'e', out[2] = ':';
    for (size_t i = 0; i < len && n < IOP_BUF; i++)
        out[n++] = d[i];
    return n;
}

/* Write the resource table (one rpmsg vdev, 2 vrings, F_NS offered). */
void iop_write_table(uint8_t *mem);

/* CRC-32 (IEEE) update: mdcom_crc32() of harness/common/mdcom_crc32.h. */

/* How the peer process runs: role 1 host (virtio driver, RPMsg-Lite's
 * master), 2 remote (device), on the shared memory file path, sleeping on
 * eventfd efd_mine and ringing efd_peer (polling: never sleeps). Each
 * notification also sets bit <vring> in the receiver's pending word
 * (irq_mine / irq_peer, shared between the processes), which the
 * RPMsg-Lite platform layer reads as its interrupt status. */
struct iop_peer_args {
    int role;
    const char *path;
    int efd_mine, efd_peer;
    uint32_t *irq_mine, *irq_peer;
    int polling;
};

/* Run the peer in this process; returns the process exit code. */
int iop_peer_run(const struct iop_peer_args *a);

#ifdef __cplusplus
}
#endif

#endif
