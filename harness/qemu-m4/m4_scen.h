/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * m4_scen.h - Linux-side scenarios against the QEMU firmware responder
 * (firmware/qemu-m4 + firmware/common, protocol mdcom_fw/proto.h): a link = QEMU started by
 * the launcher + this process attached as the remote domain "linux" with the
 * UART doorbell. Used by mdcom-m4-client (measurements) and tests/qemu.
 */
#ifndef MDCOM_M4_SCEN_H
#define MDCOM_M4_SCEN_H

#include <stdint.h>

#include "mdcom_fw/proto.h"
#include "doorbell_uart.h"
#include "mdcom/mdcom.h"
#include "mdcom/rpmsg.h"
#include "qemu_m4.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a benchmark puts in doorbell_gap_ns (m4_link, m4_oa): doorbell round trips
 * then start with everything asleep, this long (untimed) before each request.
 * Back to back, the next request sometimes finds the firmware still awake (no
 * ring, no interrupt: a polled round trip in a doorbell row), as often as each
 * transport's firmware path after its reply is long. And the host's threads of
 * the chain (QEMU's main loop and vCPU, the Linux process) wake faster after a
 * short idle than after a long one (most likely the hypervisor's halt polling,
 * ~200 us): a transport that rings once more after its reply (RPMsg's returned
 * buffer) would otherwise start its next round trip from a shorter idle. 1 ms
 * puts every transport past both. Tests keep 0: back-to-back rings are what
 * they exercise. */
#define M4_DOORBELL_GAP_NS 1000000ll

typedef struct m4_link {
    mdcom_qemu q;
    mdcom_uart_doorbell *db;
    int64_t doorbell_gap_ns; /* doorbell echoes / block-acks: untimed wait before each (0) */
    mdcom_t *m;
    mdcom_fifoch_t *ctl, *rsp, *ein, *eout, *bulk, *ack;
    mdcom_smemch_t *state, *rpmsg, *raw;
    fw_rsp last; /* the last result m4_result received */
    char err[512];
} m4_link;

/* Start QEMU with firmware fw (doorbell socket on) and attach. 0 or -errno
 * (l->err says why). */
int m4_link_start(m4_link *l, const char *fw);
/* The same with QEMU's -icount shift=N (N >= 0: the firmware's clock counts
 * instructions, 2^N ns each; -1: off). */
int m4_link_start_icount(m4_link *l, const char *fw, int shift);
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

/* One-way samples (FW_ARG_STAMP): a = tf - t0 and b = tf - t3 per message,
 * tf the firmware's clock when the message arrived, t0 / t3 this side's
 * CLOCK_MONOTONIC at the send and at the reply. */
typedef struct m4_ow {
    m4_times a, b;
} m4_ow;

/* The offset theta = firmware clock - host clock, from causality alone:
 * every message arrives after it was sent and before its reply came back,
 * so max(b) <= theta <= min(a) + FW_STAMP_RES_NS over all samples given
 * (a stamp is rounded down by less than FW_STAMP_RES_NS). One-way time of
 * a sample = a - *theta, within +- *halfwidth (the interval and the
 * rounding). 0, -ENODATA
 * without samples, -ERANGE when the interval is empty (the clocks are not
 * one clock: e.g. QEMU under -icount). */
int m4_ow_offset(const m4_ow *ow, double *theta, double *halfwidth);

/* Echo n messages (payload bytes: fixed `payload`, or varying 0..496 when
 * payload < 0) with seq + CRC, checking every reply. Returns the number of
 * bad replies (>= 0) or -errno; firmware's own count of bad requests in
 * *fw_bad. Each round trip's time goes to t. */
int m4_echo(m4_link *l, uint32_t n, uint32_t mode, int payload, m4_times *t, uint32_t *fw_bad);

/* The echo with the firmware's work chosen by arg (FW_ARG_CHECK: it checks
 * seq + CRC, as m4_echo; 0: it only copies; FW_ARG_STAMP: it answers with
 * its arrival time, collected in ow). This side checks every reply after
 * taking its time: t = send to reply in hand, the check not included. */
int m4_echo_arg(m4_link *l, uint32_t n, uint32_t mode, int payload, uint32_t arg, m4_times *t,
                m4_ow *ow, uint32_t *fw_bad);

/* Raw spin echo on the "raw" SMEM area (no library call per round): n
 * rounds, polling; arg FW_ARG_STAMP fills ow. Bad rounds or -errno. */
int m4_raw_echo(m4_link *l, uint32_t n, uint32_t arg, m4_times *t, m4_ow *ow);

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

/* RPMsg echo of n messages of `bytes` (>= 12: fw_echo_hdr + payload, the
 * same messages and checks as the FIFO echo; firmware checks seq + CRC)
 * (this side: host role). Returns bad replies or -errno; round trips to t. */
int m4_rpmsg_echo(m4_link *l, uint32_t n, uint32_t mode, uint32_t bytes, m4_times *t);
/* The same with the firmware's work chosen by arg (as m4_echo_arg). */
int m4_rpmsg_echo_arg(m4_link *l, uint32_t n, uint32_t mode, uint32_t bytes, uint32_t arg,
                      m4_times *t, m4_ow *ow);

/* n block-ack transactions of `bytes` over RPMsg (496-byte messages). */
int m4_rpmsg_blockack(m4_link *l, uint32_t n, uint32_t bytes, uint32_t mode, m4_times *t);

/* OpenAMP's own RPMsg as the firmware (mdcom-fw-openamp.elf, layout
 * mdcom_fw/oa_layout.h): its own QEMU, this side mdcom's RPMsg host bound to
 * the resource table this side writes before QEMU starts, the same UART
 * doorbell. Not an mdcom region: no m4_link. */
typedef struct m4_oa {
    mdcom_qemu q;
    mdcom_uart_doorbell *db;
    int64_t doorbell_gap_ns; /* doorbell echoes: untimed wait before each (0) */
    uint8_t *mem;            /* the whole region file, mapped */
    void *state;
    mdcom_rpmsg_bind bind;
    mdcom_rpmsg_t *r;
    mdcom_rpmsg_ept_t *ept;
    void *cb; /* the echo's callback context */
    char err[512];
} m4_oa;

/* Start QEMU with image fw, attach and find the echo service. 0 or -errno
 * (o->err says why; -ENOENT: fw or QEMU missing). */
int m4_oa_start(m4_oa *o, const char *fw);
/* The same with QEMU's -icount shift=N (N >= 0). */
int m4_oa_start_icount(m4_oa *o, const char *fw, int shift);
/* n round trips of `bytes` (>= 12, as m4_rpmsg_echo: the same messages and
 * checks; the image checks nothing) in mode FW_MODE_POLL / FW_MODE_DOORBELL.
 * Returns bad replies (>= 0) or -errno; round trips to t. */
int m4_oa_echo(m4_oa *o, uint32_t n, uint32_t mode, uint32_t bytes, m4_times *t);
/* The image's instructions per echoed message (FW_OA_COSTING; start it with
 * -icount shift=0): n polled echoes of `bytes`. 0 and *instr, or as
 * m4_oa_echo. */
int m4_oa_cost(m4_oa *o, uint32_t n, uint32_t bytes, double *instr);
void m4_oa_stop(m4_oa *o);

double m4_now_ns(void);
void m4_times_add(m4_times *t, double v);
/* Sorts t->v. */
double m4_times_pct(m4_times *t, double pct);
double m4_times_mean(const m4_times *t);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_M4_SCEN_H */
