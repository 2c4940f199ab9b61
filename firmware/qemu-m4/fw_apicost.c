/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_apicost.c - mdcom-fw-apicost: the cost of each API call on the
 * Cortex-M, bare metal, in instructions: a 25 MHz counter under QEMU
 * -icount, dithered phases, the empty measurement subtracted; the harness and
 * the method are firmware/common/apicost.c's (mdcom_fw/apicost.h), shared
 * with the RTOS images (mdcom-fw-<kernel>-apicost). The counter is the one
 * the RTOS images read where the build names it (FW_APICOST_COUNTER: the
 * FPGAIO COUNTER of mps2-an386), so that the columns differ by the port
 * only; else SysTick, free running, no interrupt (mps2-an521). Output lines:
 * "apicost <call> mode <m> mean <x.y> sd <s.t> ..."; the calls floor_alloc /
 * _free / _enqueue / _dequeue are the reference floor of lean_floor.c (not
 * mdcom), measured the same way.
 */
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "lean_floor.h"
#include "mdcom/mdcom.h"
#include "mdcom_fw/apicost.h"
#include "mdcom_m4_layout.h"

int main(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *tm;
    mdcom_smemch_t *sm;
    uint32_t id, len;
    char err[128];
    mdcom_init_opts o;

    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    /* SysTick free running, no interrupt: the counter of the samples where
     * the build names no other, and the port's clock (port_now_ns, timeouts) */
    mdcom_bm_systick_start(mdcom_board_desc.cpu_hz, 0);
    apicost_begin("mdcom-fw-apicost");

    o.layout = &mdcom_m4_layout; /* computed on the build host */
    apicost_check("init", mdcom_init(&m, &mdcom_m4_config, MDCOM_M4_DOM_M4, &o));
    apicost_check("open tm", mdcom_fifoch_at(m, MDCOM_M4_CH_TM, &tm));
    apicost_check("open tm_sync", mdcom_smemch_at(m, MDCOM_M4_CH_TM_SYNC, &sm));
    apicost_mdcom_rows(tm, MDCOM_M4_CH_TM, sm);

    /* The reference floor (lean_floor.c, not mdcom): the same four calls,
     * setups and teardowns on a minimal SPSC pool + ring; tx produces (and
     * frees its own blocks in the alloc / free rows), rx consumes. Out-of-line
     * calls into their own translation unit, as mdcom's into the library. */
    {
        static lf_shared area; /* static RAM, no malloc */
        lf_chan tx, rx;
        lf_format(&area);
        apicost_check("floor open", lf_open(&tx, &area, 1u));
        apicost_check("floor open", lf_open(&rx, &area, 2u));
        APICOST_MEASURE("floor_alloc", (void)0, lf_alloc(&tx, &id),
                        apicost_check("floor free", lf_free(&tx, id)));
        APICOST_MEASURE("floor_free", apicost_check("floor alloc", lf_alloc(&tx, &id)),
                        lf_free(&tx, id), (void)0);
        APICOST_MEASURE("floor_enqueue", apicost_check("floor alloc", lf_alloc(&tx, &id)),
                        lf_enqueue(&tx, id, 16),
                        (apicost_check("floor dequeue", lf_dequeue(&rx, &id, &len)),
                         apicost_check("floor free", lf_free(&rx, id))));
        APICOST_MEASURE("floor_dequeue",
                        (apicost_check("floor alloc", lf_alloc(&tx, &id)),
                         apicost_check("floor enqueue", lf_enqueue(&tx, id, 16))),
                        lf_dequeue(&rx, &id, &len), apicost_check("floor free", lf_free(&rx, id)));
    }
    mdcom_term(m);
    return 0;
}
