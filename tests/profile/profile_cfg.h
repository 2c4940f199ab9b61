/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_cfg.h - the region both sides of the remote-profile test build
 * from: domain 0 the master (full core), domain 1 the remote (remote-only
 * core); "up" remote -> master, "down" master -> remote, one SMEM area.
 */
#ifndef PROFILE_CFG_H
#define PROFILE_CFG_H

#include "mdcom/mdcom.h"

static const mdcom_domain_cfg profile_domains[] = {
    {"master", 0, MDCOM_ROLE_MASTER},
    {"remote", 1, MDCOM_ROLE_REMOTE},
};

static const mdcom_channel_cfg profile_channels[] = {
    {"up", MDCOM_CHAN_FIFO, 256, 8, 0, 1u << 1, 1u << 0, 0, 0},
    {"down", MDCOM_CHAN_FIFO, 256, 8, 0, 1u << 0, 1u << 1, 0, 0},
    {"area", MDCOM_CHAN_SMEM, 0, 0, 0, 0, 0, 64, 3u},
};

static inline mdcom_config profile_config(const char *region)
{
    mdcom_config c = {region, 0, 0, -1, profile_domains, 2, profile_channels, 3};
    return c;
}

#endif
