/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * linux_soc.h - the Linux side of a real SoC: the shared region in a
 * physical carveout and the SoC mailbox as the doorbell (ports/linux/
 * region_soc.c). Builds an mdcom_platform from the Linux port with another
 * region backend and/or doorbell; pass &soc.plat as mdcom_init_opts.platform.
 *
 * Region spec (a string: from the TOML's [region] backend keys, generated as
 * <PREFIX>_REGION_SPEC by mdcom-cfg, or given at run time):
 *   "shm"                      the Linux port's /dev/shm file (default)
 *   "devmem:<path>@<offset>:size=<bytes>"
 *                              mmap <path> (normally /dev/mem) at byte
 *                              <offset> (the carveout's physical address;
 *                              need not be page aligned), <bytes> long
 *   "uio:<path>:map=<n>[:size=<bytes>]"
 *                              mmap map n of a UIO device (<path> = /dev/uioX:
 *                              UIO selects map n with mmap offset n * page
 *                              size), all of it (sysfs maps/map<n>/size) or
 *                              <bytes> of it
 * The carveout must hold the configuration's region (else -ENOSPC).
 * Doorbell spec:
 *   "futex"                    the Linux port's futex doorbell (default)
 *   "uio:<path>:map=<n>:reg=<off>:val=<v>[:irq=<path2>][:ack=<off2>:ackval=<v2>][:noreenable]"
 *        ring  writes the 32-bit <v> to the register at byte <off> of map n
 *              of <path> (e.g. an IPCC channel SET bit, an MU GP request)
 *        wait  read() of 4 bytes (the interrupt count) on <path> (or <path2>),
 *              poll()ed with the timeout: /dev/uioX is pollable; after each
 *              interrupt, writes <v2> to the register at <off2> (clears the
 *              mailbox's pending request: IPCC channel clear, MU GIP w1c),
 *              then 1 (u32) to the fd to re-enable the interrupt
 *              (uio_pdrv_genirq's irqcontrol) unless :noreenable. Peers on Linux still ring the
 *              futex too; a wait re-checks its word at least every 20 ms.
 * Numbers are decimal or 0x-hex. The carveout is mapped once at init: one
 * region per soc handle.
 * Errors: negative errno; err (if not NULL) receives a one-line reason.
 */
#ifndef MDCOM_LINUX_SOC_H
#define MDCOM_LINUX_SOC_H

#include <stddef.h>
#include <stdint.h>

#include "mdcom/platform.h"
#include "mdcom/export.h"

#ifdef __cplusplus
extern "C" {
#endif

MDCOM_API_BEGIN /* the declarations below are the exported API */

#define MDCOM_SOC_PATH_MAX 128

typedef struct mdcom_linux_soc {
    mdcom_platform plat; /* the platform to use (mdcom_init_opts.platform) */
    /* private */
    int region_kind, db_kind;
    char region_path[MDCOM_SOC_PATH_MAX];
    uint64_t region_offset;
    uint32_t region_map, region_size;
    char db_path[MDCOM_SOC_PATH_MAX], db_irq_path[MDCOM_SOC_PATH_MAX];
    uint32_t db_map, db_reg, db_val, db_reenable, db_has_ack, db_ack, db_ackval;
    int db_irq_fd;
    void *db_regs, *db_map_base;
    size_t db_regs_len;
    uint64_t db_irqs, db_rings;
} mdcom_linux_soc;

/* Parse the specs (NULL: "shm" / "futex"), open the doorbell device.
 * -EINVAL (bad spec), -ENOENT/-EACCES (device), other errno. */
int mdcom_linux_soc_init(mdcom_linux_soc *s, const char *region_spec, const char *doorbell_spec,
                         char *err, size_t errlen);
/* Close the doorbell device (after mdcom_term). Safe to call twice. */
void mdcom_linux_soc_close(mdcom_linux_soc *s);
/* The pollable interrupt fd of a UIO doorbell (POLLIN on an interrupt), or -1. */
int mdcom_linux_soc_irq_fd(const mdcom_linux_soc *s);
/* Interrupts taken / rings written since init (statistics, tests). */
uint64_t mdcom_linux_soc_irqs(const mdcom_linux_soc *s);
uint64_t mdcom_linux_soc_rings(const mdcom_linux_soc *s);

MDCOM_API_END

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_LINUX_SOC_H */
