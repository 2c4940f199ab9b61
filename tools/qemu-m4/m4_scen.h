/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * m4_scen.h - Linux-side scenarios against the QEMU firmware responder
 * (firmware/qemu-m4/fw_resp.c, protocol fw_proto.h): a link = QEMU started by
 * the launcher + this process attached as the remote domain "linux" with the
 * UART doorbell. Used by mdcom-m4-client (measurements) and tests/qemu.
 */
#ifndef MDCOM_M4_SCEN_H
#define MDCOM_M4_SCEN_H

#include <stdint.h>

#include "fw_proto.h"
#include "doorbell_uart.h"
#include "mdcom/mdcom.h"
#include "qemu_m4.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct m4_link {
    mdcom_qemu q;
    mdcom_uart_doorbell *db;
    mdcom_t *m;
    mdcom_fifoch_t *ctl, *rsp, *ein, *eout, *bulk, *ack;
    mdcom_smemch_t *state, *rpmsg;
    char err[512];
} m4_link;

/* Start QEMU with firmware fw (doorbell socket on) and attach. 0 or -errno
 * (l->err says why). */
int m4_link_start(m4_link *l, const char *fw);
/* Attach / detach this process (QEMU keeps running). */
int m4_link_attach(m4_link *l, int64_t timeout_ns);
void m4_link_detach(m4_link *l);
/* Detach and stop QEMU. */
void m4_link_stop(m4_link *l);

/* Send a command on ctl; receive the result on rsp (timeout_ns). */
int m4_cmd(m4_link *l, uint32_t op, uint32_t mode, uint32_t count, uint32_t arg);
int m4_result(m4_link *l, fw_rsp *out, int64_t timeout_ns);

/* Per-operation timing collected by the scenarios (ns); may be NULL. */
typedef struct m4_times {
    double *v;
    uint32_t n, cap;
} m4_times;

/* Echo n messages (payload bytes: fixed `payload`, or varying 0..496 when
 * payload < 0) with seq + CRC, checking every reply. Returns the number of
 * bad replies (>= 0) or -errno; firmware's own count of bad requests in
 * *fw_bad. Each round trip's time goes to t. */
int m4_echo(m4_link *l, uint32_t n, uint32_t mode, int payload, m4_times *t, uint32_t *fw_bad);

/* n block-ack transactions of `bytes` payload, cut in messages of at most
 * `chunk` bytes. Returns bad acks (>= 0) or -errno; time per transaction to t. */
int m4_blockack(m4_link *l, uint32_t n, uint32_t bytes, uint32_t chunk, uint32_t mode, m4_times *t);

/* One-way stream: n messages of `bytes` to the sink, one ack at the end.
 * Returns 0 or -errno; *ns_total = first send to the ack. */
int m4_sink(m4_link *l, uint32_t n, uint32_t bytes, uint32_t mode, double *ns_total);

/* SMEM: both sides increment the counter of "state" n times under the
 * lock. Returns the number of errors (lost updates + firmware-seen errors)
 * or -errno. */
int m4_smem(m4_link *l, uint32_t n, uint32_t mode);

/* RPMsg echo of n messages (this side: host role). Returns bad replies or
 * -errno; round trips to t. */
int m4_rpmsg_echo(m4_link *l, uint32_t n, uint32_t mode, uint32_t payload, m4_times *t);

/* n block-ack transactions of `bytes` over RPMsg (496-byte messages). */
int m4_rpmsg_blockack(m4_link *l, uint32_t n, uint32_t bytes, uint32_t mode, m4_times *t);

double m4_now_ns(void);
void m4_times_add(m4_times *t, double v);
/* Sorts t->v. */
double m4_times_pct(m4_times *t, double pct);
double m4_times_mean(const m4_times *t);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_M4_SCEN_H */
