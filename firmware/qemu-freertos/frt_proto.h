/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frt_proto.h - what the FreeRTOS test firmware (fw_freertos.c) and its Linux
 * peers (tests/qemu/frt_peer.c) agree on, over the channels of freertos.toml.
 *
 *   up         each Linux peer i sends FRT_UP_COUNT messages: frt_msg_hdr
 *              {sender i, seq 0.., len, CRC-32 of the payload} + payload of
 *              varied length; the firmware's receiver task checks the
 *              sequence per sender and the CRC
 *   down<i>    the firmware's sender task sends FRT_DOWN_COUNT such messages
 *              (sender FRT_FW_SENDER) to peer i, which checks them
 *   state      SMEM: word 0 a counter, word 1 the holder's mark: every party
 *              (two firmware tasks, each peer) takes the lock FRT_SMEM_ROUNDS
 *              times and bumps it (fw_smem_bump of mdcom_fw/proto.h). The
 *              firmware's two tasks contend first; then the firmware writes
 *              1 to FRT_W_PHASE and the peers contend with each other. (Not
 *              firmware against Linux at the same time: on mps2-an386, one
 *              vCPU, QEMU does not make the guest's LDREX/STREX atomic
 *              against host atomics; docs/reliability.md. The an521 test
 *              covers that.) Peer i writes, under the lock, its rounds to
 *              FRT_W_DONE + i, its disturbed holds to FRT_W_DIST + i, then 1
 *              to FRT_W_FIN + i; the firmware checks counter = all rounds.
 */
#ifndef MDCOM_FRT_PROTO_H
#define MDCOM_FRT_PROTO_H

#include <stdint.h>

#define FRT_PEERS 2u
#define FRT_UP_COUNT 400u
#define FRT_DOWN_COUNT 400u
#define FRT_SMEM_ROUNDS 300u
#define FRT_FW_SENDER 0xf0u
#define FRT_MSG_MIN 16u  /* header included */
#define FRT_MSG_MAX 256u /* = block_size of up / down<i> */

enum {
    FRT_W_COUNTER = 0,
    FRT_W_HOLDER = 1,
    FRT_W_DONE = 8,
    FRT_W_DIST = 12,
    FRT_W_FIN = 16,
    FRT_W_PHASE = 20
};

typedef struct frt_msg_hdr {
    uint32_t sender, seq, len, crc; /* len: payload bytes after the header */
} frt_msg_hdr;

/* The payload length of message seq of sender (deterministic, so both sides
 * know it): 0 .. FRT_MSG_MAX - header. */
static inline uint32_t frt_payload_len(uint32_t sender, uint32_t seq)
{
    return (seq * 37u + sender * 11u) % (FRT_MSG_MAX - (uint32_t)sizeof(frt_msg_hdr) + 1u);
}

static inline uint8_t frt_payload_byte(uint32_t sender, uint32_t seq, uint32_t i)
{
    return (uint8_t)(seq * 131u + i * 7u + sender * 29u + (seq >> 8));
}

#endif /* MDCOM_FRT_PROTO_H */
