/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transports.c - the table of transports, in report order: name, wait class,
 * baseline (the transport its ratios refer to), message ops (the tr_*.c
 * files), variant, largest payload where fixed (0: none), description.
 * Baselines first.
 */
#include <math.h>
#include <string.h>

#include "mdcom/rpmsg.h"
#include "transport.h"

/* One RPMsg buffer less its header: of the largest size, or of the 512-byte
 * buffers of tr_openamp.c's layout; iceoryx: its largest chunk pool. */
#define MAX_RPMSG (MDCOM_RPMSG_MAX_BUF_SIZE - MDCOM_RPMSG_HDR_SIZE)
#define MAX_OPENAMP (512u - MDCOM_RPMSG_HDR_SIZE)
#define MAX_ICEORYX (4u << 20)

#define TR(nm, cls, base, ops, v, max, d)                                                          \
    &(const bench_transport)                                                                       \
    {                                                                                              \
        .name = nm, .desc = d, .wait_class = BENCH_WAIT_##cls, .baseline = base, .msg = &ops,      \
        .variant = v, .max_size = max                                                              \
    }
/* the wait paths of `events` (tr_mdcom.c's copy variants), chosen by name only */
#define TR_EVENTS(nm, v, d)                                                                        \
    &(const bench_transport)                                                                       \
    {                                                                                              \
        .name = nm, .desc = d, .wait_class = BENCH_WAIT_BLOCK, .baseline = "raw-futex",            \
        .msg = &bench_ops_mdcom_copy, .variant = v, .hidden = 1                                    \
    }

const bench_transport *const bench_transports[] = {
    TR("raw-spin", POLL, NULL, bench_ops_raw, 0, 0,
       "baseline: shared ring + memcpy, both sides spin (no mdcom)"),
    TR("raw-spin-2copy", POLL, NULL, bench_ops_raw_copy2, 0, 0,
       "baseline: raw-spin whose receiver copies out (two copies per hop, as mdcom-copy)"),
    TR("raw-futex", BLOCK, NULL, bench_ops_raw, 1, 0,
       "baseline: shared ring + memcpy, waiters sleep in FUTEX_WAIT (no mdcom)"),
    TR("mdcom-copy-poll", POLL, "raw-spin", bench_ops_mdcom_copy, 0, 0,
       "mdcom_fifoch_send/recv with MDCOM_POLL in a loop (copies the payload)"),
    TR("mdcom-copy-block", BLOCK, "raw-futex", bench_ops_mdcom_copy, 1, 0,
       "mdcom_fifoch_send/recv blocking, spin off (copies the payload)"),
    TR_EVENTS("mdcom-copy-adaptive", 2, "mdcom_fifoch_send/recv blocking, default adaptive spin"),
    TR_EVENTS("mdcom-copy-waitset", 3, "recv MDCOM_POLL, asleep in mdcom_waitset_wait when empty"),
    TR_EVENTS("mdcom-copy-fd", 4, "recv MDCOM_POLL, asleep in epoll on mdcom_fifoch_fd when empty"),
    TR("mdcom-zc-poll", POLL, "raw-spin", bench_ops_mdcom_zc, 0, 0,
       "alloc/get/enqueue/notify + dequeue polled in a loop (header only)"),
    TR("mdcom-zc-block", BLOCK, "raw-futex", bench_ops_mdcom_zc, 1, 0,
       "zero-copy with mdcom_fifoch_wait(EV_RX), spin off (header only)"),
    TR("mdcom-smem-poll", POLL, "raw-spin", bench_ops_smem, 0, 0,
       "SMEM channel as a mailbox: lock, copy, flag, unlock (polling)"),
    TR("pipe", BLOCK, "raw-futex", bench_ops_kernel, BENCH_K_PIPE, 0,
       "kernel baseline: two pipes, length-framed, poll(2) + read"),
    TR("unix-stream", BLOCK, "raw-futex", bench_ops_kernel, BENCH_K_STREAM, 0,
       "kernel baseline: AF_UNIX SOCK_STREAM socketpair, length-framed"),
    TR("unix-seqpacket", BLOCK, "raw-futex", bench_ops_kernel, BENCH_K_SEQPACKET, 0,
       "kernel baseline: AF_UNIX SOCK_SEQPACKET socketpair (one message per call)"),
    TR("mq", BLOCK, "raw-futex", bench_ops_kernel, BENCH_K_MQ, 0,
       "kernel baseline: POSIX message queues (mq_timedsend/receive)"),
    TR("rpmsg-poll", POLL, "raw-spin", bench_ops_rpmsg, 0, MAX_RPMSG,
       "RPMsg over virtio vrings (host <-> remote), polled dispatch, one copy each way"),
    TR("rpmsg-block", BLOCK, "raw-futex", bench_ops_rpmsg, 1, MAX_RPMSG,
       "RPMsg over virtio vrings, sleeping on the doorbell, one copy each way"),
#ifdef MDCOM_BENCH_ICEORYX
    TR("iceoryx", BLOCK, "raw-futex", bench_ops_iceoryx, 0, MAX_ICEORYX,
       "peer: Eclipse iceoryx 2 (C binding, own iox-roudi), loan+copy+publish, WaitSet"),
#endif
#ifdef MDCOM_BENCH_IOX2 /* a peer program (tr_ext.c) */
    &(const bench_transport){
        .name = "iceoryx2",
        .wait_class = BENCH_WAIT_POLL,
        .baseline = "raw-spin",
        .desc = "iceoryx2 publish-subscribe, loaned samples, polling (Rust, bench/peers/iceoryx2)",
        .ext = MDCOM_BENCH_IOX2,
        .ext_build = "cmake --build --preset default --target mdcom-bench-iceoryx2 (needs cargo)"},
#endif
#ifdef MDCOM_BENCH_OPENAMP /* variant: bit 0 an OpenAMP host, bit 1 an OpenAMP remote */
    TR("openamp", BLOCK, "raw-futex", bench_ops_openamp, 3, MAX_OPENAMP,
       "real OpenAMP host <-> OpenAMP remote (resource table, eventfd doorbell)"),
    TR("rpmsg-bound", BLOCK, "raw-futex", bench_ops_openamp, 0, MAX_OPENAMP,
       "mdcom RPMsg host <-> remote bound to the same resource table and doorbell"),
    TR("oa-host-md", BLOCK, "raw-futex", bench_ops_openamp, 1, MAX_OPENAMP,
       "OpenAMP host <-> mdcom RPMsg remote"),
    TR("md-host-oa", BLOCK, "raw-futex", bench_ops_openamp, 2, MAX_OPENAMP,
       "mdcom RPMsg host <-> OpenAMP remote"),
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

int bench_tr_index(const bench_transport *const *tr, unsigned n, const char *name)
{
    for (unsigned i = 0; name && i < n; i++)
        if (strcmp(tr[i]->name, name) == 0)
            return (int)i;
    return -1;
}

const char *bench_mdcom_ref(const bench_transport *t)
{
    return t->wait_class == BENCH_WAIT_POLL ? "mdcom-copy-poll" : "mdcom-copy-block";
}

void bench_fmt_ratios(char *rb, size_t lb, char *rm, size_t lm, const bench_transport *t,
                      double r_base, double r_mdcom)
{
    snprintf(rb, lb, "-");
    snprintf(rm, lm, "-");
    if (!t->baseline)
        snprintf(rb, lb, "(baseline)");
    else if (!isnan(r_base))
        snprintf(rb, lb, "%.2fx %s", r_base, t->baseline);
    if (strcmp(bench_mdcom_ref(t), t->name) != 0 && !isnan(r_mdcom))
        snprintf(rm, lm, "%.2fx", r_mdcom);
}
