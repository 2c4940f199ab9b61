/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * master.c - what only the master domain does: format the region, and audit
 * it (header and directory rewritten when damaged, every FIFO channel's
 * shared words checked and repaired: fifo_repair.c).
 * Not built into the remote-only profile (MDCOM_PROFILE=remote, remote.c).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Master-domain process: format the region (we won state -> FORMATTING). */
int mdcom_format_region(struct mdcom *m, uint32_t pid, uint32_t token, mdcom_err *e)
{
    uint32_t gen = 1;
    int r;
    MDCOM_KP(&m->hdr->fmt_pid);
    /* who formats: lets others take over if we die (relaxed: a taker judges
     * the pid and takes over by CAS on this word; it publishes nothing) */
    atomic_store_explicit(&m->hdr->fmt_pid, pid, memory_order_relaxed);
    MDCOM_KP(&m->hdr->fmt_token);
    m->hdr->fmt_token = token;
    if (m->hdr->magic == MDCOM_MAGIC)
        gen = atomic_load_explicit(&m->hdr->generation, memory_order_relaxed) + 1;
    if (gen == 0)
        gen = 1;
    mdcom_layout_format(m->base, m->cfg, &m->lay, m->cl, gen);
    m->generation = gen;
    m->owns_region = 1;
    mdcom_bind_channels(m);
    r = mdcom_claim_proc(m, pid, token);
    if (r) {
        atomic_store_explicit(&m->hdr->state, MDCOM_ST_EMPTY, memory_order_relaxed);
        return mdcom_err_set(e, r, m->cfg->region_name, "no free process slot");
    }
    /* release: every formatted byte is visible before anyone sees READY */
    atomic_store_explicit(&m->hdr->state, MDCOM_ST_READY, memory_order_release);
    m->plat->doorbell.ring(m->plat->doorbell.ctx, &m->hdr->state, UINT32_MAX);
    return 0;
}

/* The master domain's mdcom_audit: header and directory, then every FIFO channel. */
void mdcom_audit(struct mdcom *m)
{
    uint32_t i, z = 0;
    /* any process of the master domain (the one that formatted the region
     * may have re-attached and joined instead) */
    if (!m->is_master || mdcom_region_check(m) != 0)
        return;
    /* one thread of this attachment at a time (the channels' mdcom_audit state is
     * private and plain); a busy mdcom_audit is as good as ours. acquire: the
     * previous auditor's writes of that state */
    if (!atomic_compare_exchange_strong_explicit(&m->audit_busy, &z, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return;
    /* Header, domain table and directory: what a remote verifies before it
     * joins. Attached processes never read them again (they keep private
     * copies of the layout), so damage there only stops new remotes; the
     * master domain, which knows what they must say, writes them again. State,
     * generation, the process table and the channels are left alone: no
     * message is lost and nobody has to re-attach. */
    if (mdcom_layout_verify(m->base, m->map.size, m->cfg, &m->lay, m->cl, 0) != 0)
        mdcom_layout_write_tables(m->base, m->cfg, &m->lay, m->cl);
    for (i = 0; i < m->cfg->n_channels; i++)
        (void)mdcom_fifo_audit(&m->ch[i].f);
    /* release: our writes of the mdcom_audit state, for the next auditor */
    atomic_store_explicit(&m->audit_busy, 0, memory_order_release);
}
