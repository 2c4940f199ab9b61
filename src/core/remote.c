/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * remote.c - the remote-only profile (MDCOM_PROFILE=remote): this process is
 * never in the master domain, so it neither formats nor audits the region,
 * and it leaves reaping to the master domain's processes, which reap every
 * domain's dead (reap.c in their build). What it keeps: attach, the message
 * path, waits, SMEM locks, term, and the checks of its own entry, so the
 * wire format and every answer a remote gets are those of the full profile.
 * A process of the master domain may join a region that a full-profile
 * process formatted, but formatting one is refused (-EPERM).
 */
#include <errno.h>

#include "fifo_internal.h"

int mdcom_format_claim(struct mdcom_instance *m, uint32_t fp, uint32_t st, mdcom_err *e)
{
    (void)fp;
    (void)st;
    return mdcom_err_set(e, -EPERM, m->cfg->region_name,
                         "this core is built remote-only (MDCOM_PROFILE=remote): it cannot be "
                         "the master domain");
}

void mdcom_audit(struct mdcom_instance *m, uint32_t period, uint64_t until)
{
    (void)m;
    (void)period;
    (void)until;
}

int mdcom_take_if_dead(struct mdcom_instance *m, uint32_t i, uint32_t o)
{
    (void)m;
    (void)i;
    (void)o;
    return 0;
}

void mdcom_reap_slot(struct mdcom_instance *m, uint32_t i)
{
    (void)m;
    (void)i;
}

int mdcom_reap_until(struct mdcom_instance *m, uint64_t until)
{
    (void)m;
    (void)until;
    return 0;
}

int mdcom_reap(struct mdcom_instance *m)
{
    (void)m;
    return 0;
}

int mdcom_sense_process(mdcom_t *m, uint32_t domain_id)
{
    uint32_t i;
    int n = 0;
    if (!mdcom_valid_inst(m) || domain_id >= MDCOM_MAX_DOMAINS ||
        !mdcom_domain_role(m->cfg, domain_id))
        return -EINVAL;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        /* acquire: pairs with the claimer's release (a complete entry) */
        uint32_t o = mdcom_load(&m->procs[i].owner, memory_order_acquire);
        n += o == MDCOM_PROC_DOMAIN_BASE + domain_id &&
             (i == m->proc_slot || !mdcom_entry_dead(m, i, mdcom_read_once(m->procs[i].pid),
                                                     mdcom_read_once(m->procs[i].token)));
    }
    return n;
}

int mdcom_fifoch_init(mdcom_fifoch_t *ch)
{
    if (!valid_fifo(ch))
        return -EINVAL;
    return -EPERM; /* only the master domain empties a channel */
}
