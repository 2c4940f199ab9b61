/*
 * ut_internal.h - a few process-private facts of an attachment, exposed to the
 * C++ unit tests by ut_internal.c (which is C and can include internal.h).
 */
#ifndef MDCOM_UT_INTERNAL_H
#define MDCOM_UT_INTERNAL_H

#include <stdint.h>

#include "mdcom/mdcom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the library mapped the region for this attachment. */
void ut_mapping(const mdcom_t *m, void **base, uint32_t *size);
/* Owner token of the attachment (process slot + 1), as stored in block state
 * words and SMEM lock words. */
uint32_t ut_owner(const mdcom_t *m);
uint32_t ut_proc_slot(const mdcom_t *m);
uint32_t ut_generation(const mdcom_t *m);
/* Build-time constants of the core. */
uint32_t ut_retry_max(void);
uint32_t ut_max_instances(void);
uint32_t ut_max_channels(void);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_UT_INTERNAL_H */
