/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_config.h - RPMsg-Lite's build configuration for the interop tests
 * (RPMsg-Lite includes it from rpmsg_default_config.h). RPMsg-Lite fixes its
 * wire layout at compile time: RL_BUFFER_COUNT buffers per direction of
 * RL_BUFFER_PAYLOAD_SIZE + 16 bytes, vring 0 at the shared memory base,
 * vring 1 VRING_SIZE bytes later (rpmsg_platform.h), the buffer pool after
 * both (the master's RX half first). tests/interop/rpmsg_lite.cmake passes
 * the geometry as IOP_RL_* definitions, and the mdcom side binds to the same
 * numbers (interop.h), so both sides of a test see one layout.
 */
#ifndef RPMSG_CONFIG_H_
#define RPMSG_CONFIG_H_

#ifndef IOP_RL_COUNT
#error "IOP_RL_COUNT / IOP_RL_PAYLOAD / IOP_RL_ALIGN / IOP_RL_VRING_SIZE come from rpmsg_lite.cmake"
#endif

#define RL_BUFFER_PAYLOAD_SIZE (IOP_RL_PAYLOAD)
#define RL_BUFFER_COUNT (IOP_RL_COUNT)
#define RL_API_HAS_ZEROCOPY (1)
#define RL_USE_STATIC_API (0)
#define RL_USE_ENVIRONMENT_CONTEXT (0)
/* a peer that blocks in send must learn that its buffers came back: the
 * setting RPMsg-Lite documents for a Linux (virtio) peer */
#define RL_ALLOW_CONSUMED_BUFFERS_NOTIFICATION (1)
/* pointers given back to RPMsg-Lite are checked against its descriptors */
#define RL_DEBUG_CHECK_BUFFERS (0)
#define RL_MS_PER_INTERVAL (1)

/* an assertion inside RPMsg-Lite ends the peer process with a message
 * (its default spins forever, which a test sees only as a timeout) */
void iop_rl_assert_failed(const char *file, int line);
#define RL_ASSERT(x)                                                                               \
    do {                                                                                           \
        if (!(x))                                                                                  \
            iop_rl_assert_failed(__FILE__, __LINE__);                                              \
    } while (0)

#endif
