/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rr_fw.c - the kernel-neutral part of the an521 RTOS <-> RTOS images
 * (rr_fw.h): both link it, over their own port (ports/freertos on CPU0,
 * ports/threadx on CPU1) and the an521 board of ports/baremetal.
 */
#include "rr_fw.h"

#include <errno.h>

#include "mdcom_an521rtos_layout.h"

mdcom_t *rr_attach(const char *who, uint32_t domain)
{
    /* CPU1 boots after CPU0 formatted; no heartbeat (as rtos_e2e.c's
     * tasks): the ports' proc_alive judges these processes */
    return fw_attach(who, &mdcom_an521rtos_layout, domain, RR_MS(20000), 0);
}

mdcom_fifoch_t *rr_fifo(mdcom_t *m, const char *who, const char *name)
{
    mdcom_fifoch_t *ch;
    int r = mdcom_fifoch_open(m, name, &ch);
    if (r)
        fw_die(who, name, r);
    mdcom_fifoch_set_spin(ch, MDCOM_NO_SPIN);
    return ch;
}

void rr_send(mdcom_fifoch_t *ch, const char *who, const void *buf, uint32_t n, int64_t timeout_ns)
{
    uint32_t tries = 0;
    for (;;) {
        int r = mdcom_fifoch_send(ch, buf, n, timeout_ns);
        if (r >= 0)
            return;
        /* the receiver's process has not attached yet: 20 s at most */
        if (r != -ENOTCONN || ++tries > 2000u)
            fw_die(who, "send", r);
        rr_sleep_ms(10);
    }
}

void rr_lock_rounds(mdcom_t *m, const char *who, uint32_t rounds, uint32_t mark, rr_report *rep)
{
    mdcom_smemch_t *ch;
    void *p;
    uint32_t i;
    int r = mdcom_smemch_open(m, "state", &ch);
    if (r)
        fw_die(who, "state", r);
    mdcom_smemch_get(ch, &p, 0);
    for (i = 0; i < rounds; i++) {
        if ((r = mdcom_smemch_lock(ch, RR_MS(10000))) != 0)
            fw_die(who, "lock", r);
        rep->lock_bad += (uint32_t)rr_lock_round((volatile uint32_t *)p, mark);
        if ((r = mdcom_smemch_unlock(ch)) != 0)
            fw_die(who, "unlock", r);
        rep->lock_rounds++;
    }
}
