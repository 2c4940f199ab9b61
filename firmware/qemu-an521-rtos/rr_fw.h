/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rr_fw.h - what the two RTOS images of the an521 RTOS <-> RTOS test share
 * (rr_fw.c, kernel-neutral; with firmware/common/fw_boot.c): attaching a
 * task / thread as its own mdcom process, opening its channels, the SMEM lock rounds, console lines. Each
 * kernel's glue (frt_glue.c, tx_glue.c) gives rr_sleep_ms (its delay).
 */
#ifndef RR_FW_H
#define RR_FW_H

#include <stdint.h>

#include "mdcom/mdcom.h"
#include "mdcom_fw/boot.h" /* fw_attach, fw_die */
#include "rr_proto.h"

#define RR_MS(x) ((int64_t)(x)*1000000ll)

/* the image's kernel: block the caller for ms milliseconds (frt_glue.c,
 * tx_glue.c) */
void rr_sleep_ms(uint32_t ms);
/* ThreadX images: a thread's stack overflow ends the run (tx_glue.c; from
 * tx_application_define) */
void rr_tx_watch_stacks(void);
/* the banner "<image>: <kernel> on <board> cpu=<n>", then the port's boot
 * seed (the boot token, + 1 on CPU1 so that the cores' tokens differ);
 * before the kernel starts (frt_glue.c, tx_glue.c) */
void rr_boot(const char *image);

/* the caller attaches as its own mdcom process of domain (the first
 * caller in the master domain formats the region); fw_die on failure */
mdcom_t *rr_attach(const char *who, uint32_t domain);
/* a FIFO whose waits sleep at once (no spinning: the doorbell wakes them) */
mdcom_fifoch_t *rr_fifo(mdcom_t *m, const char *who, const char *name);
/* send, retrying while the receiving side has not attached yet */
void rr_send(mdcom_fifoch_t *ch, const char *who, const void *buf, uint32_t n, int64_t timeout_ns);
/* rounds SMEM lock rounds on "state" with mark; counts into rep */
void rr_lock_rounds(mdcom_t *m, const char *who, uint32_t rounds, uint32_t mark, rr_report *rep);

#endif /* RR_FW_H */
