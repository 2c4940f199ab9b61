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

/* Format the region (our claim is in fmt_pid and the state is FORMATTING);
 * the state stays FORMATTING (mdcom_format_claim). */
static void format_region(struct mdcom_instance *m)
{
    uint32_t gen = 1;
    int same;
    /* our claim in fmt_pid keeps every other candidate off these words */
    MDCOM_KP(&m->hdr->fmt_token);
    m->hdr->fmt_token = m->token;
    /* release: the token is visible before fmt_pid names us with it (a
     * judge reads fmt_pid with acquire, then the token) */
    mdcom_store(&m->hdr->fmt_pid, m->pid, memory_order_release);
    if (m->hdr->magic == MDCOM_MAGIC)
        gen = mdcom_load(&m->hdr->generation, memory_order_relaxed) + 1;
    if (gen == 0)
        gen = 1;
    /* the region held our very layout before (a master restarted or reset):
     * what was still queued is counted as discarded */
    same = m->hdr->magic == MDCOM_MAGIC && m->hdr->version == MDCOM_WIRE_VERSION &&
           m->hdr->layout_hash == m->lay.hash && m->hdr->region_size == m->lay.region_size;
    mdcom_layout_format(m->base, m->cfg, &m->lay, m->cl, gen, same);
    m->generation = gen;
    m->owns_region = 1;
}

int mdcom_format_claim(struct mdcom_instance *m, uint32_t fp, uint32_t st, mdcom_err *e)
{
    /* of the candidates that judged fp, one CAS wins; a claim made since
     * makes ours fail. acquire: what a dead formatter wrote. */
    uint32_t claim = m->pid | MDCOM_FMT_CLAIM, seen = fp;
    (void)e; /* for the remote-only profile's refusal: formatting cannot fail */
    if (!mdcom_cas(&m->hdr->fmt_pid, &seen, claim, memory_order_acquire, memory_order_relaxed))
        return 1;
    /* then the state (FORMATTING already when its formatter died). acq_rel:
     * exclusive ownership of the header */
    if (st == MDCOM_ST_FORMATTING || mdcom_cas(&m->hdr->state, &st, MDCOM_ST_FORMATTING,
                                               memory_order_acq_rel, memory_order_relaxed)) {
        format_region(m);
        return 0;
    }
    /* the state moved meanwhile (a term): give the claim back (relaxed:
     * nothing rides on it) */
    mdcom_cas(&m->hdr->fmt_pid, &claim, fp, memory_order_relaxed, memory_order_relaxed);
    return 1;
}

/* The master domain's mdcom_audit: header and directory, then every FIFO
 * channel, each once per period; the parts not reached before until go on
 * at the next call. */
void mdcom_audit(struct mdcom_instance *m, uint32_t period, uint64_t until)
{
    uint32_t i, z = 0, done = 0;
    /* any process of the master domain (the one that formatted the region
     * may have re-attached and joined instead); none in a region that is
     * gone or an entry that is no longer ours (nothing left to go on with:
     * relaxed, a hint for this attachment's reaper) */
    if (!m->is_master)
        return;
    if (mdcom_region_check(m) != 0) {
        mdcom_store(&m->audit_more, 0, memory_order_relaxed);
        return;
    }
    /* one thread of this attachment at a time (the channels' mdcom_audit state is
     * private and plain); a busy mdcom_audit is as good as ours. acquire: the
     * previous auditor's writes of that state */
    if (!mdcom_cas(&m->audit_busy, &z, 1, memory_order_acquire, memory_order_relaxed))
        return;
    /* Header, domain table and directory: what a remote verifies before it
     * joins. Attached processes never read them again (they keep private
     * copies of the layout), so damage there only stops new remotes; the
     * master domain, which knows what they must say, writes them again. State,
     * generation, the process table and the channels are left alone: no
     * message is lost and nobody has to re-attach. */
    if (m->audit_hdr != period) {
        if (mdcom_layout_verify(m->base, m->map.size, m->cfg, &m->lay, m->cl, 0) != 0)
            mdcom_layout_write_tables(m->base, m->cfg, &m->lay, m->cl);
        m->audit_hdr = period;
        done++;
    }
    /* forged waiter counts: one load per channel unless one is forged */
    for (i = 0; i < m->cfg->n_channels; i++)
        mdcom_waiters_audit(m, i);
    for (i = 0; i < m->cfg->n_channels; i++) {
        struct mdcom_fifoch *ch = &m->ch[i].f;
        if (ch->tag != MDCOM_TAG_FIFO || ch->audit_period == period)
            continue;
        /* the budget: what is left goes on at the next call (at least one
         * part per call, so that a busy reaper does not starve the audit) */
        if (done++ && mdcom_now(m) >= until)
            break;
        (void)mdcom_fifo_audit(ch);
        ch->audit_period = period;
    }
    /* relaxed: read by this attachment's reaper as a hint */
    mdcom_store(&m->audit_more, i < m->cfg->n_channels, memory_order_relaxed);
    /* release: our writes of the mdcom_audit state, for the next auditor */
    mdcom_store(&m->audit_busy, 0, memory_order_release);
}
