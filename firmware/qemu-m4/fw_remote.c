/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_remote.c - mdcom-fw-remote: the remote domain "m4" of
 * qemu_m4_remote.toml on a Cortex-M4, in a region a Linux master formats.
 * Waits for the format, attaches, relays echo_in -> echo_out and fwd_in ->
 * fwd_out (FW_OP_RELAY, poll mode: Linux cannot wake this core), and
 * attaches again by itself whenever the region ends under it (the master
 * terminated or re-formatted it, or reaped this image): fw_remote_run.
 * After its own reset or a new QEMU it attaches afresh; the entry of the
 * image before it is dead (another boot token, or a heartbeat that stopped).
 */
#include "mdcom_fw/svc.h"
#include "mdcom_m4r_layout.h"

int main(void)
{
    static const fw_cmd relay = {FW_OP_RELAY, FW_MODE_POLL, 0xffffffffu, 0};
    fw_svc s;
    fw_remote_run(&s, "fw", "mdcom-fw-remote", &mdcom_m4r_layout, MDCOM_M4R_DOM_M4, &relay);
}
