/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ut_internal.c - see ut_internal.h. Compiled with the same MDCOM_MAX_INSTANCES
 * and MDCOM_MAX_CHANNELS as the core, so struct mdcom has the same layout.
 */
#include "ut_internal.h"

#include "internal.h"

void ut_mapping(const mdcom_t *m, void **base, uint32_t *size)
{
    *base = m->map.base;
    *size = m->map.size;
}

uint32_t ut_owner(const mdcom_t *m) { return m->owner; }
uint32_t ut_lock_owner(const mdcom_t *m) { return m->lock_owner; }
uint32_t ut_proc_slot(const mdcom_t *m) { return m->proc_slot; }
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
