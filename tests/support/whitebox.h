/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * support/whitebox.h - what white-box tests see of the library's private
 * state (an attachment's process-private facts, a channel's waiter count), of
 * its private layout functions (format) and of the RPMsg transport's
 * virtqueue layout. Implemented by src/testing/whitebox.c (test library
 * mdcom_test_internal, never part of libmdcom): the tests include this
 * header, never a header under src/. Every test links it through
 * mdcom_add_gtest.
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
/* The operation record the calling thread holds in m: 1..5 its own, 0 the
 * shared record 0, -1 none (given back, or never taken). Linux builds. */
int ut_thread_record(const mdcom_t *m);
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

/* The RPMsg transport's split-virtqueue layout (mdcom_vring_layout_compute()
 * of src/rpmsg/virtqueue.h, field by field): 0 or -EINVAL. */
/* one field per line (clang-format 14 does not settle on X-macro lists) */
/* clang-format off */
#define UT_VRING_FIELDS(X)                                                                         \
    X(num)                                                                                         \
    X(align)                                                                                       \
    X(desc_off)                                                                                    \
    X(avail_off)                                                                                   \
    X(used_event_off)                                                                              \
    X(used_off)                                                                                    \
    X(avail_event_off)                                                                             \
    X(size)                                                                                        \
    X(size_aligned)
/* clang-format on */
typedef struct ut_vring_layout {
#define UT_VRING_FIELD(f) uint32_t f;
    UT_VRING_FIELDS(UT_VRING_FIELD)
#undef UT_VRING_FIELD
} ut_vring_layout;
int ut_vring_layout_compute(uint32_t num, uint32_t align, ut_vring_layout *out);
/* Sizes, offsets and flag values of the transport's virtio structures. */
typedef struct ut_vq_wire_facts {
    uint32_t desc_size, used_elem_size, avail_ring_off, used_ring_off;
    uint32_t desc_f_next, desc_f_write, desc_f_indirect;
} ut_vq_wire_facts;
void ut_vq_wire(ut_vq_wire_facts *f);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_TESTS_SUPPORT_WHITEBOX_H */
