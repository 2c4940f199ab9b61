/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mdcom_fw/oa_layout.h - the memory of mdcom-fw-openamp, the image that runs
 * OpenAMP's own RPMsg (open-amp + libmetal, remote = virtio device role) on
 * the Cortex-M4 under QEMU, against mdcom's RPMsg host on Linux
 * (mdcom_rpmsg_init_bound over the resource table). Shared by the image and
 * the Linux side (harness/qemu-m4); not installed.
 *
 * Offsets from the start of the QEMU region (the whole 16 MiB file is this
 * image's shared memory; no mdcom region is formatted in it). The image sees
 * offset X at FW_OA_DA + X; descriptors carry those device addresses.
 *
 *   FW_OA_RSC     resource table: one rpmsg vdev (notify id 2), two vrings
 *                 (notify ids 0, 1). Linux writes it before QEMU starts.
 *   FW_OA_CTL     u32 words, enum fw_oa_word
 *   FW_OA_VRING0/1, FW_OA_POOL  vrings and the buffer pool (RX half first)
 *
 * The image echoes every message of endpoint FW_OA_SERVICE to its sender
 * with rpmsg_sendto (one copy, no check: the work of mdcom-fw-resp's
 * echoes). FW_OA_MODE: 0 it polls (rproc_virtio_notified in a loop), 1 it
 * sleeps in WFI until the UART doorbell rings between polls (also while
 * idle: Linux sets 1 before QEMU starts and after each run); it rings the
 * doorbell from OpenAMP's notify callback.
 */
#ifndef MDCOM_FW_OA_LAYOUT_H
#define MDCOM_FW_OA_LAYOUT_H

#define FW_OA_DA 0x21000000u /* mps2-an386: the region's address on the M4 */
#define FW_OA_RSC 0x0u
#define FW_OA_RSC_SIZE 0x1000u
#define FW_OA_VDEV 20u /* the vdev entry (its type word) in the table */
#define FW_OA_CTL 0x3000u
#define FW_OA_VRING0 0x4000u
#define FW_OA_VRING1 0x8000u
#define FW_OA_POOL 0x10000u
#define FW_OA_NUM 16u
#define FW_OA_ALIGN 4096u
#define FW_OA_BUF 512u
#define FW_OA_SIZE (FW_OA_POOL + 2u * FW_OA_NUM * FW_OA_BUF)
#define FW_OA_SERVICE "oa-echo"

/* words at FW_OA_CTL: MODE and COSTING written by Linux; UP (1 once the
 * endpoint exists), ECHOED (messages echoed) and ERRORS (failed sends) by
 * the image. COSTING 1 (poll mode, run under -icount shift=0): the image adds
 * the clock time (= instructions) of each rproc_virtio_notified() call that
 * echoed messages, the clock's own cost subtracted, to COST, and their number
 * to COST_N (the span of mdcom-fw-resp's FW_ARG_COST for its RPMsg echo). */
enum fw_oa_word {
    FW_OA_MODE = 0,
    FW_OA_UP = 1,
    FW_OA_ECHOED = 2,
    FW_OA_ERRORS = 3,
    FW_OA_COSTING = 4,
    FW_OA_COST = 5,
    FW_OA_COST_N = 6
};

#endif /* MDCOM_FW_OA_LAYOUT_H */
