/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtos_resp.c - the responder of mdcom-fw-resp (fw_svc.c: fw_start, then
 * fw_next forever with RESET / EXIT / HANG) as the main thread of an RTOS
 * image: mdcom-fw-freertos-resp, mdcom-fw-threadx-resp, the master domain
 * of firmware/qemu-m4/qemu_m4.toml. The kernel's image file (fw_freertos.c,
 * fw_threadx.c: mdcom_fw/rtos_e2e.h) starts the kernel and runs e2e_main
 * here in a task / thread, which is the region's one mdcom process.
 *
 * Waits: FW_MODE_DOORBELL services and the wait for a command block the
 * task in the port's doorbell wait (the UART doorbell interrupt wakes it);
 * FW_MODE_POLL services spin. A Linux peer that cannot ring the doorbell (a
 * process without the UART doorbell, as the restart storm's) is still
 * heard: the core sleeps in slices of 50 ms and looks again after each.
 */
#include "board.h"
#include "cortexm.h"
#include "mdcom_fw/rtos_e2e.h"
#include "mdcom_fw/svc.h"
#include "mdcom_m4_layout.h"

/* counted by the image's idle hook / thread; nothing reads it here */
volatile uint32_t e2e_idle_runs;

void e2e_main(void *arg)
{
    fw_svc s;
    (void)arg;
    mdcom_bm_puts(e2e_kernel);
    mdcom_bm_puts(": ");
    fw_start(&s, "fw", e2e_image, &mdcom_m4_layout, MDCOM_M4_DOM_M4, 0, fw_resp_op);
    fw_resp_run(&s);
}
