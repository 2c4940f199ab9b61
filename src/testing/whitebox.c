/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * whitebox.c - the core's side of tests/support/whitebox.h (the interface the
 * white-box tests see). Part of the test library mdcom_test_internal only:
 * never in libmdcom, never installed. It lives under src/ because it includes
 * the core's private headers, which no file outside src/ does; compiled with
 * the same MDCOM_MAX_INSTANCES and MDCOM_MAX_CHANNELS as the core, so struct
 * mdcom has the same layout.
 */
#include "support/whitebox.h"

#include <stddef.h>
#include <stdlib.h>

#include "core/internal.h"
#include "core/layout.h"
#include "rpmsg/virtqueue.h"

void ut_mapping(const mdcom_t *m, void **base, uint32_t *size)
{
    *base = m->map.base;
    *size = m->map.size;
}

uint32_t ut_owner(const mdcom_t *m) { return m->who; }
uint32_t ut_lock_owner(const mdcom_t *m) { return m->lock_owner; }
uint32_t ut_proc_slot(const mdcom_t *m) { return m->proc_slot; }

int ut_thread_record(const mdcom_t *m)
{
    uint32_t t = mdcom_t_rec[m->pool_index];
    return t >> 3 == m->rec_serial ? (int)(t & 7u) : -1;
}
uint32_t ut_generation(const mdcom_t *m) { return m->generation; }
uint32_t ut_retry_max(void) { return MDCOM_RETRY_MAX; }
uint32_t ut_max_instances(void) { return MDCOM_MAX_INSTANCES; }
uint32_t ut_max_channels(void) { return MDCOM_MAX_CHANNELS; }

void ut_identity(const mdcom_t *m, uint32_t *pid, uint32_t *token)
{
    *pid = m->pid;
    *token = m->token;
}

uint32_t ut_proc_owner_word(const mdcom_t *m, uint32_t slot)
{
    return atomic_load_explicit(&m->procs[slot].owner, memory_order_acquire);
}

int ut_take_dead_slot(mdcom_t *m, uint32_t slot, uint32_t owner_word, uint32_t pid, uint32_t token)
{
    return mdcom_take_dead_slot(m, slot, owner_word, pid, token);
}

void ut_set_proc_owner_word(mdcom_t *m, uint32_t slot, uint32_t owner_word)
{
    atomic_store_explicit(&m->procs[slot].owner, owner_word, memory_order_release);
}

uint32_t ev_test_waiters(mdcom_fifoch_t *ch)
{
    /* relaxed: a test's look at a count (without the ARMED bit) */
    return atomic_load_explicit(&ch->ctl->event.waiters, memory_order_relaxed) &
           MDCOM_WAITERS_COUNT;
}

/* the core's own layout of cfg, in a private array (freed by the caller) */
static int ut_compute(const mdcom_config *cfg, mdcom_layout *lay, mdcom_chan_layout **cls)
{
    *cls = calloc(cfg->n_channels ? cfg->n_channels : 1, sizeof(**cls));
    if (!*cls)
        return -ENOMEM;
    return mdcom_layout_compute(cfg, lay, *cls, NULL);
}

int ut_layout_format(void *base, const mdcom_config *cfg, uint32_t generation)
{
    mdcom_layout lay;
    mdcom_chan_layout *cls;
    int rc = ut_compute(cfg, &lay, &cls);
    if (rc == 0)
        mdcom_layout_format(base, cfg, &lay, cls, generation, 0);
    free(cls);
    return rc;
}

int ut_layout_format_channel(void *base, const mdcom_config *cfg, uint32_t chan)
{
    mdcom_layout lay;
    mdcom_chan_layout *cls;
    int rc = ut_compute(cfg, &lay, &cls);
    if (rc == 0 && chan >= cfg->n_channels)
        rc = -EINVAL;
    if (rc == 0)
        mdcom_layout_format_channel(base, &cls[chan]);
    free(cls);
    return rc;
}

int ut_vring_layout_compute(uint32_t num, uint32_t align, ut_vring_layout *out)
{
    struct mdcom_vring_layout l;
    int rc = mdcom_vring_layout_compute(num, align, out ? &l : NULL);
    if (rc == 0 && out) {
#define UT_COPY(f) out->f = l.f;
        UT_VRING_FIELDS(UT_COPY)
#undef UT_COPY
    }
    return rc;
}

void ut_vq_wire(ut_vq_wire_facts *f)
{
    f->desc_size = (uint32_t)sizeof(struct mdcom_vq_desc);
    f->used_elem_size = (uint32_t)sizeof(struct mdcom_vq_used_elem);
    f->avail_ring_off = (uint32_t)offsetof(struct mdcom_vq_avail, ring);
    f->used_ring_off = (uint32_t)offsetof(struct mdcom_vq_used, ring);
    f->desc_f_next = MDCOM_VQ_DESC_F_NEXT;
    f->desc_f_write = MDCOM_VQ_DESC_F_WRITE;
    f->desc_f_indirect = MDCOM_VQ_DESC_F_INDIRECT;
}
