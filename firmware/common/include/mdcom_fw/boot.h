/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_fw/boot.h - the start of a QEMU test firmware's mdcom process, for
 * every port of ports/baremetal's runtime (bare metal, FreeRTOS, ThreadX):
 * firmware/common/fw_boot.c. The responder library (mdcom_fw/svc.h) and the
 * an521 RTOS images (firmware/qemu-an521-rtos) use it.
 */
#ifndef MDCOM_FW_BOOT_H
#define MDCOM_FW_BOOT_H

#include <stdint.h>

#include "mdcom/mdcom.h"
#include "mdcom/wire.h" /* mdcom_layout_table */

/* Print "<who>: <what>: <error>" and end QEMU with status 2. */
__attribute__((noreturn)) void fw_die(const char *who, const char *what, int r);

/* mdcom_init(layout->cfg, domain) with the layout computed on the build host
 * (<prefix>_layout), heartbeat_ms as mdcom_init_opts' (0: none); prints the
 * error and exits on failure. On an RTOS, the calling task / thread is the
 * process. */
mdcom_t *fw_attach(const char *who, const mdcom_layout_table *layout, uint32_t domain,
                   int64_t attach_timeout_ns, uint32_t heartbeat_ms);

/* fw_attach without the exit: 0 and *m, or mdcom_init's error (the text in
 * err, err_len bytes). */
int fw_try_attach(mdcom_t **m, const mdcom_layout_table *layout, uint32_t domain,
                  int64_t attach_timeout_ns, uint32_t heartbeat_ms, char *err, uint32_t err_len);

/* "<banner> on <board>, boot <token>" on the console. */
void fw_banner(const char *banner);

/* Print the banner, then fw_attach with FW_HEARTBEAT_MS (mdcom_fw/proto.h). */
mdcom_t *fw_boot(const char *who, const char *banner, const mdcom_layout_table *layout,
                 uint32_t domain, int64_t attach_timeout_ns);

#endif /* MDCOM_FW_BOOT_H */
