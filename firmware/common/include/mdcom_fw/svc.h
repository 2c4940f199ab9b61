/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_fw/svc.h - the firmware responder library (firmware/common, linked by
 * every QEMU firmware image): the services of mdcom_fw/proto.h on the
 * channels of one mdcom instance, and the command loop that runs them.
 *
 * An image boots and opens the channels by name (fw_start: the same names
 * in qemu_m4.toml and an521.toml), then calls fw_next() forever; ops
 * that are the image's own (the an521's two-core SMEM rounds, reset, exit)
 * go through fw_svc.op first.
 */
#ifndef MDCOM_FW_SVC_H
#define MDCOM_FW_SVC_H

#include <stdint.h>

#include "mdcom/mdcom.h"
#include "mdcom/wire.h"
#include "mdcom_fw/boot.h" /* fw_die, fw_boot */
#include "mdcom_fw/proto.h"

#define FW_MS(x) ((int64_t)(x)*1000000)
#define FW_BLK_MAX 32

typedef struct fw_svc fw_svc;
struct fw_svc {
    const char *who; /* console prefix of this image's messages */
    mdcom_t *m;
    /* required: ctl, rsp, ein, eout, bulk, ack; the others NULL when the
     * configuration has no such channel (the op then answers -ENOSYS) */
    mdcom_fifoch_t *ctl, *rsp, *ein, *eout, *bulk, *ack, *tm, *fin, *fout;
    mdcom_smemch_t *state, *tmsync, *rpmsg, *raw;
    /* the block addresses of ein / eout (mdcom_fifoch_get once per block at
     * open: they do not change while attached), so that the echo's
     * per-message work has no call for them, as the RPMsg echo's callback
     * is handed the payload's address; ids from FW_BLK_MAX on use get */
    void *ein_blk[FW_BLK_MAX], *eout_blk[FW_BLK_MAX];
    /* the image's own ops, tried first: 1 when it served c (o filled in),
     * 0 to let the library serve it; may be NULL */
    int (*op)(fw_svc *s, const fw_cmd *c, fw_rsp *o);
};

/* Open the channels of s by name; exits on a required one missing. */
void fw_open(fw_svc *s);

/* The start of every responder image: s cleared, fw_boot, fw_open with
 * op as the image's own ops, then "READY" on the console. */
void fw_start(fw_svc *s, const char *who, const char *banner, const mdcom_layout_table *layout,
              uint32_t domain, int64_t attach_timeout_ns,
              int (*op)(fw_svc *s, const fw_cmd *c, fw_rsp *o));

/* Wait in the service's mode (FW_MODE_POLL: spin; FW_MODE_DOORBELL: sleep
 * until the doorbell) for a message on ch / a free block on ch. 0,
 * -ETIMEDOUT after FW_IDLE_MS, or an error of the call. */
int fw_rx(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id, uint32_t *len);
int fw_tx_alloc(mdcom_fifoch_t *ch, uint32_t mode, uint32_t *id);

/* Doorbell mode: the data channels sleep at once (no spin); poll: spin. */
void fw_set_mode(fw_svc *s, uint32_t mode);

/* Run the service of c (s->op first); fills o (status: 0 or -errno in the
 * firmware's numbering). */
void fw_serve(fw_svc *s, const fw_cmd *c, fw_rsp *o);

/* Receive the next command on ctl, serve it, answer on rsp (status in the
 * wire numbering). 0, or -errno of the answer's send. Exits on a ctl
 * error. */
int fw_next(fw_svc *s, fw_cmd *c, fw_rsp *o);

/* The own ops of a responder image that is the master domain
 * (mdcom-fw-resp, the RTOS responders): RESET, EXIT, HANG; as fw_svc.op,
 * they are served by fw_resp_run. */
int fw_resp_op(fw_svc *s, const fw_cmd *c, fw_rsp *o);

/* The responder's command loop (fw_next forever, with fw_resp_op's ops):
 * RESET answers, waits up to 1 s for the host to read the answer, then
 * resets the core; EXIT ends the instance and the image with c.arg; HANG
 * holds a block of rsp and stops making mdcom calls. */
__attribute__((noreturn)) void fw_resp_run(fw_svc *s);

/* The remote responder (a domain whose region another, Linux, master
 * formats): prints the banner, then for ever: attach (mdcom_init with
 * FW_HEARTBEAT_MS, attempts of 100 ms, pauses of 1 ms doubling up to 50 ms
 * while the region is not formatted), fw_open, serve c over and over
 * (FW_OP_RELAY, say) until a call says the region ended (-ESHUTDOWN,
 * -ECONNRESET, -ENOTCONN: the master terminated or re-formatted it, or
 * took this image for dead), then mdcom_term and attach again. Prints
 * "ATTACHED" on the console at each attach. */
__attribute__((noreturn)) void fw_remote_run(fw_svc *s, const char *who, const char *banner,
                                             const mdcom_layout_table *layout, uint32_t domain,
                                             const fw_cmd *c);

#endif /* MDCOM_FW_SVC_H */
