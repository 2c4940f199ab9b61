/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_config.h - RPMsg-Lite's configuration for the footprint image:
 * the static API (no heap), RPMsg-Lite's defaults otherwise, the layout of
 * fp_board.h.
 */
#ifndef RPMSG_CONFIG_H_
#define RPMSG_CONFIG_H_

#include "fp_board.h"

#define RL_BUFFER_PAYLOAD_SIZE (FP_PAYLOAD)
#define RL_BUFFER_COUNT (FP_NUM)
#define RL_USE_STATIC_API (1)
#define RL_API_HAS_ZEROCOPY (1)

#endif
