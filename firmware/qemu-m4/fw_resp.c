/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_resp.c - mdcom-fw-resp: the master domain of qemu_m4.toml on a
 * Cortex-M4, serving the Linux side's benchmark and test scenarios
 * (mdcom_fw/proto.h, services of firmware/common). Boots, formats the
 * region, prints "READY", then runs one service per command received on
 * "ctl". This image's own ops: RESET, EXIT, HANG.
 */
#include <errno.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom_fw/svc.h"
#include "mdcom_m4_layout.h"

static int own_op(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    (void)s;
    (void)o;
    return c->op == FW_OP_RESET || c->op == FW_OP_EXIT || c->op == FW_OP_HANG;
}

int main(void)
{
    fw_svc s;
    fw_start(&s, "fw", "mdcom-fw-resp", &mdcom_m4_layout, MDCOM_M4_DOM_M4, 0, own_op);
    for (;;) {
        fw_cmd c;
        fw_rsp out;
        int r = fw_next(&s, &c, &out);
        if (c.op == FW_OP_RESET) {
            /* let the host read the response first (up to 1 s): after the
             * reset the region is re-formatted and an unread response would
             * be gone (the host's recv says -ECONNRESET) */
            uint64_t until = mdcom_bm_now_ns() + FW_MS(1000);
            mdcom_fifo_state st;
            while (r == 0 && mdcom_sense_fifoch(s.rsp, &st) == 0 && st.queued != 0 &&
                   mdcom_bm_now_ns() < until)
                ;
            mdcom_bm_puts("fw: reset\n");
            mdcom_bm_reset();
        }
        if (c.op == FW_OP_HANG) {
            uint32_t id;
            (void)mdcom_fifoch_alloc(s.rsp, &id); /* held when we hang */
            mdcom_bm_puts("fw: hang\n");
            for (;;)
                ; /* no mdcom call, no heartbeat */
        }
        if (c.op == FW_OP_EXIT) {
            mdcom_term(s.m);
            mdcom_bm_exit((int)c.arg);
        }
    }
}
