/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_cpu1.c - mdcom-fw-an521-cpu1: the remote domain "cpu1" of an521.toml on
 * CPU1 of the SSE-200. CPU0 releases this core from CPUWAIT after it has
 * formatted the region; this image attaches, then serves one command of
 * mdcom_fw/proto.h at a time received on "ctl" and answers on "rsp":
 *
 *   PING, ECHO, BLOCKACK, RPMSG_ECHO  the services of firmware/common
 *   SMEM      this image's own: count lock / check / increment / unlock
 *             rounds on "state", at the same time as CPU0 (arg 1: no lock, the negative
 *             control); value = holds disturbed, value2 = -EBUSY retries
 *   EXIT      answers, then sleeps forever (CPU0 ends QEMU)
 */
#include <errno.h>
#include <string.h>

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_an521_layout.h"
#include "mdcom_fw/svc.h"
#include "smem_round.h"

static int own_op(fw_svc *s, const fw_cmd *c, fw_rsp *o)
{
    void *p;
    if (c->op == FW_OP_EXIT)
        return 1;
    if (c->op != FW_OP_SMEM)
        return 0;
    mdcom_smemch_get(s->state, &p, 0);
    o->status = smem_rounds(s->state, (volatile uint32_t *)p, c->count, c->arg, SMEM_MARK_CPU1,
                            &o->count, &o->value, &o->value2);
    return 1;
}

int main(void)
{
    fw_svc s;
    fw_start(&s, "cpu1", "mdcom-fw-an521-cpu1", &mdcom_an521_layout, MDCOM_AN521_DOM_CPU1,
             FW_MS(10000), own_op);
    for (;;) {
        fw_cmd c;
        fw_rsp out;
        int r = fw_next(&s, &c, &out);
        if (r)
            fw_die(s.who, "rsp", r);
        if (c.op == FW_OP_EXIT) {
            mdcom_bm_puts("cpu1: exit\n");
            (void)mdcom_bm_irq_save();
            for (;;)
                mdcom_bm_wfi();
        }
    }
}
