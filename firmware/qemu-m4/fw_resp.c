/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_resp.c - mdcom-fw-resp: the master domain of qemu_m4.toml on a
 * Cortex-M4, serving the Linux side's benchmark and test scenarios
 * (mdcom_fw/proto.h, services of firmware/common). Boots, formats the
 * region, prints "READY", then runs one service per command received on
 * "ctl" (fw_resp_run; its own ops: RESET, EXIT, HANG).
 */
#include "board.h"
#include "cortexm.h"
#include "mdcom_fw/svc.h"
#include "mdcom_m4_layout.h"

int main(void)
{
    fw_svc s;
    fw_start(&s, "fw", "mdcom-fw-resp", &mdcom_m4_layout, MDCOM_M4_DOM_M4, 0, fw_resp_op);
    fw_resp_run(&s);
}
