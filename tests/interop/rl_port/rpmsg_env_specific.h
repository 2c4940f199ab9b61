/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpmsg_env_specific.h - what RPMsg-Lite's rpmsg_env.h expects of an
 * environment (the type of rpmsg_queue's entries); the POSIX environment of
 * the interop tests has nothing else environment-specific.
 */
#ifndef RPMSG_ENV_SPECIFIC_H_
#define RPMSG_ENV_SPECIFIC_H_

#include <stdint.h>

#include "rpmsg_default_config.h"

typedef struct {
    uint32_t src;
    void *data;
    uint32_t len;
} rpmsg_queue_rx_cb_data_t;

#endif
