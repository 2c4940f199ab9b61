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
uint32_t ut_proc_slot(const mdcom_t *m) { return m->proc_slot; }
uint32_t ut_generation(const mdcom_t *m) { return m->generation; }
uint32_t ut_retry_max(void) { return MDCOM_RETRY_MAX; }
uint32_t ut_max_instances(void) { return MDCOM_MAX_INSTANCES; }
uint32_t ut_max_channels(void) { return MDCOM_MAX_CHANNELS; }
