/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transports.c - the table of round-trip transports, in report order.
 * Baselines first: the ratios of the others refer to them.
 */
#include <string.h>

#include "transport.h"

extern const bench_transport bench_tr_raw_spin;
extern const bench_transport bench_tr_raw_futex;
extern const bench_transport bench_tr_mdcom_copy_poll;
extern const bench_transport bench_tr_mdcom_zc_poll;
extern const bench_transport bench_tr_mdcom_copy_block;
extern const bench_transport bench_tr_mdcom_zc_block;
extern const bench_transport bench_tr_mdcom_smem_poll;
extern const bench_transport bench_tr_pipe;
extern const bench_transport bench_tr_unix_stream;
extern const bench_transport bench_tr_unix_seqpacket;
extern const bench_transport bench_tr_mq;
extern const bench_transport bench_tr_rpmsg_poll, bench_tr_rpmsg_block; /* tr_rpmsg.c */
#ifdef MDCOM_BENCH_ICEORYX
extern const bench_transport bench_tr_iceoryx; /* tr_iceoryx.c */
#endif
#ifdef MDCOM_BENCH_IOX2
extern const bench_transport bench_tr_iceoryx2; /* tr_ext.c */
#endif
#ifdef MDCOM_BENCH_OPENAMP
extern const bench_transport bench_tr_openamp, bench_tr_rpmsg_bound, bench_tr_oa_host_md,
    bench_tr_md_host_oa; /* tr_openamp.c */
#endif

const bench_transport *const bench_transports[] = {
    &bench_tr_raw_spin,        &bench_tr_raw_futex,       &bench_tr_mdcom_copy_poll,
    &bench_tr_mdcom_zc_poll,   &bench_tr_mdcom_copy_block, &bench_tr_mdcom_zc_block,
    &bench_tr_mdcom_smem_poll,
    /* kernel IPC peers (tr_kernel.c) */
    &bench_tr_pipe,
    &bench_tr_unix_stream,
    &bench_tr_unix_seqpacket,
    &bench_tr_mq,
    &bench_tr_rpmsg_poll, &bench_tr_rpmsg_block, /* RPMsg over virtio vrings (tr_rpmsg.c) */
#ifdef MDCOM_BENCH_ICEORYX
    &bench_tr_iceoryx, /* peer, when built (tr_iceoryx.c) */
#endif
#ifdef MDCOM_BENCH_IOX2
    &bench_tr_iceoryx2, /* peer program, when cargo was found (tr_ext.c) */
#endif
#ifdef MDCOM_BENCH_OPENAMP
    /* the real OpenAMP and mixed RPMsg pairs, when built (tr_openamp.c) */
    &bench_tr_openamp, &bench_tr_rpmsg_bound, &bench_tr_oa_host_md, &bench_tr_md_host_oa,
#endif
};
const unsigned bench_n_transports = sizeof(bench_transports) / sizeof(bench_transports[0]);

const bench_transport *bench_transport_find(const char *name)
{
    for (unsigned i = 0; i < bench_n_transports; i++)
        if (strcmp(bench_transports[i]->name, name) == 0)
            return bench_transports[i];
    return NULL;
}
