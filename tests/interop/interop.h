/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop.h - what the mdcom side and the OpenAMP peer of the interop tests
 * agree on: the shared memory file (a "firmware" resource table at offset 0,
 * vrings and pool at OpenAMP's Linux reference layout), the device address
 * the window has in descriptors, and the echo service's commands.
 */
#ifndef MDCOM_TESTS_INTEROP_H
#define MDCOM_TESTS_INTEROP_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom_crc32.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IOP_MEM_DA 0x3ed00000u   /* device address of the window's byte 0 */
#define IOP_VRING0 0x4000u       /* offsets in the window */
#define IOP_VRING1 0x8000u
#define IOP_POOL 0x10000u
#define IOP_NUM 256u             /* vring entries = buffers per direction */
#define IOP_ALIGN 4096u
#define IOP_BUF 512u
#define IOP_SIZE (IOP_POOL + 2u * IOP_NUM * IOP_BUF)
#define IOP_RSC_ENTRY_OFF 20u    /* the vdev entry (its le32 type word)   */
#define IOP_RSC_VDEV_OFF 24u     /* Linux's fw_rsc_vdev (after the type)  */
#define IOP_NOTIFY_ANY 0xffffffffu

#define IOP_ECHO_NAME "oa-echo"   /* the OpenAMP side's echo service */
#define IOP_SECOND_NAME "oa-second"
#define IOP_MD_NAME "md-svc"      /* announced by the mdcom side */

/* Write the resource table (one rpmsg vdev, 2 vrings, F_NS offered). */
void iop_write_table(uint8_t *mem);

/* CRC-32 (IEEE) update: mdcom_crc32() of tools/common/mdcom_crc32.h. */

/* Run the OpenAMP peer in this process: role 1 host (virtio driver), 2
 * remote (device), on the shared memory file path, sleeping on efd_mine and
 * ringing efd_peer (polling: never sleeps). Returns the process exit code. */
int iop_openamp_peer(int role, const char *path, int efd_mine, int efd_peer, int polling);

#ifdef __cplusplus
}
#endif

#endif
