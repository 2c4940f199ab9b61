/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * c_peer.c - the C side of tests/python: attaches as domain "b" of the
 * system in tests/python/pair.toml.in (built here at run time, region name
 * from argv[1]) and echoes argv[2] messages from "a2b" back on "b2a",
 * each with its bytes reversed (so the test sees the C side touched them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdcom/mdcom.h"

int main(int argc, char **argv)
{
    /* one channel per line */
    /* clang-format off */
    static const mdcom_domain_cfg doms[] = {{"a", 0, MDCOM_ROLE_MASTER}, {"b", 1, MDCOM_ROLE_REMOTE}};
    static const mdcom_channel_cfg chans[] = {
        {.name = "a2b", .type = MDCOM_CHAN_FIFO, .block_size = 64, .block_count = 8, .senders = 1, .receivers = 2},
        {.name = "b2a", .type = MDCOM_CHAN_FIFO, .block_size = 64, .block_count = 8, .senders = 2, .receivers = 1},
        {.name = "big", .type = MDCOM_CHAN_FIFO, .block_size = 1048576, .block_count = 4, .senders = 1, .receivers = 2},
        {.name = "bigack", .type = MDCOM_CHAN_FIFO, .block_size = 64, .block_count = 4, .senders = 2, .receivers = 1},
        {.name = "state", .type = MDCOM_CHAN_SMEM, .size = 256, .users = 3},
    };
    /* clang-format on */
    mdcom_config cfg = {.region_name = argc > 1 ? argv[1] : "",
                        .group = -1,
                        .domains = doms,
                        .n_domains = 2,
                        .channels = chans,
                        .n_channels = 5};
    mdcom_init_opts o = {.attach_timeout_ns = 10000000000ll};
    mdcom_t *m;
    mdcom_fifoch_t *in, *out;
    int n = argc > 2 ? atoi(argv[2]) : 1, r;
    if ((r = mdcom_init(&m, &cfg, 1, &o)) || (r = mdcom_fifoch_open(m, "a2b", &in)) ||
        (r = mdcom_fifoch_open(m, "b2a", &out))) {
        fprintf(stderr, "c_peer: attach: %s\n", mdcom_strerror(r));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        char buf[64], rev[64];
        int len = mdcom_fifoch_recv(in, buf, sizeof buf, 10000000000ll);
        if (len < 0) {
            fprintf(stderr, "c_peer: recv: %s\n", mdcom_strerror(len));
            return 1;
        }
        for (int k = 0; k < len; k++)
            rev[k] = buf[len - 1 - k];
        if ((r = mdcom_fifoch_send(out, rev, (uint32_t)len, 10000000000ll)) < 0) {
            fprintf(stderr, "c_peer: send: %s\n", mdcom_strerror(r));
            return 1;
        }
    }
    mdcom_term(m);
    return 0;
}
