/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * support/whitebox.h - what white-box tests see of the core's private state
 * (an attachment's process-private facts, a channel's waiter count) and of
 * its private layout functions (format). Implemented by whitebox.c, the only
 * test file that includes src/ headers (target mdcom_test_internal); every
 * test links it through mdcom_add_gtest.
 */
#ifndef MDCOM_TESTS_SUPPORT_WHITEBOX_H
#define MDCOM_TESTS_SUPPORT_WHITEBOX_H

#include <stdint.h>

#include "mdcom/mdcom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the library mapped the region for this attachment. */
void ut_mapping(const mdcom_t *m, void **base, uint32_t *size);
/* Who holds a block of this attachment's, as its block state words say
 * (MDCOM_BLK_WHO: process slot + 1 and incarnation). */
uint32_t ut_owner(const mdcom_t *m);
/* The SMEM lock word this attachment writes (slot + 1 | incarnation << 8). */
uint32_t ut_lock_owner(const mdcom_t *m);
uint32_t ut_proc_slot(const mdcom_t *m);
uint32_t ut_generation(const mdcom_t *m);
/* The identity (pid, token) this attachment wrote in its process entry, and
 * that entry's owner word (its domain + 2 while attached). */
void ut_identity(const mdcom_t *m, uint32_t *pid, uint32_t *token);
uint32_t ut_proc_owner_word(const mdcom_t *m, uint32_t slot);
/* mdcom_take_dead_slot of the reaper in m, on entry slot. */
int ut_take_dead_slot(mdcom_t *m, uint32_t slot, uint32_t owner_word, uint32_t pid, uint32_t token);
/* Store an owner word (to hand an entry taken by ut_take_dead_slot back). */
void ut_set_proc_owner_word(mdcom_t *m, uint32_t slot, uint32_t owner_word);
/* The waiter count of a FIFO channel (its event line's second word). */
uint32_t ev_test_waiters(mdcom_fifoch_t *ch);
/* The core's mdcom_layout_format() of cfg into base (region_size bytes,
 * header state and fmt_* left alone): 0 or the layout's error. */
int ut_layout_format(void *base, const mdcom_config *cfg, uint32_t generation);
/* The core's mdcom_layout_format_channel() of channel chan of cfg. */
int ut_layout_format_channel(void *base, const mdcom_config *cfg, uint32_t chan);
/* Build-time constants of the core. */
uint32_t ut_retry_max(void);
uint32_t ut_max_instances(void);
uint32_t ut_max_channels(void);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_TESTS_SUPPORT_WHITEBOX_H */
