/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rtos_apicost.c - the body of mdcom-fw-<kernel>-apicost: the calls of
 * mdcom-fw-apicost (firmware/common/apicost.c, the same harness and rows)
 * made from an RTOS task with the scheduler running, through the kernel's
 * port (ports/freertos, ports/threadx: its ring notifies the local waiters
 * and the board; its clock is the tick count refined by SysTick). The
 * kernel's file (fw_<kernel>_apicost.c) starts the task, which calls
 * apicost_rtos_main.
 *
 * The kernel owns SysTick for its 1 kHz tick, so the samples read the MPS2
 * FPGAIO COUNTER (FW_APICOST_COUNTER, 25 MHz, free running) instead, with
 * interrupts masked within each sample (mdcom_fw/apicost.h): a tick due
 * during a sample is taken after it. The channel configuration is
 * mdcom-fw-apicost's (firmware/qemu-m4/qemu_m4.toml), so that the rows
 * compare call for call.
 */
#include <string.h>

#include "board.h"
#include "mdcom/mdcom.h"
#include "mdcom_fw/apicost.h"
#include "mdcom_m4_layout.h"

void apicost_rtos_main(const char *image);

void apicost_rtos_main(const char *image)
{
    mdcom_t *m;
    mdcom_fifoch_t *tm;
    mdcom_smemch_t *sm;
    char err[128];
    mdcom_init_opts o;

    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    apicost_begin(image);
    o.layout = &mdcom_m4_layout; /* computed on the build host */
    apicost_check("init", mdcom_init(&m, &mdcom_m4_config, MDCOM_M4_DOM_M4, &o));
    apicost_check("open tm", mdcom_fifoch_at(m, MDCOM_M4_CH_TM, &tm));
    apicost_check("open tm_sync", mdcom_smemch_at(m, MDCOM_M4_CH_TM_SYNC, &sm));
    apicost_mdcom_rows(tm, MDCOM_M4_CH_TM, sm);
    mdcom_term(m);
    mdcom_bm_exit(0);
}
