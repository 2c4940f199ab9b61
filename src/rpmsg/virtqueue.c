/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * virtqueue.c - virtio split virtqueues, driver and device roles (see the
 * diagram in virtqueue.h). Freestanding: no libc beyond memset.
 */
#include "virtqueue.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

/* The two shared indices are accessed as C11 atomics in place. */
_Static_assert(sizeof(_Atomic uint16_t) == 2, "16-bit atomics have the plain layout");
_Static_assert(ATOMIC_SHORT_LOCK_FREE == 2, "16-bit atomics are lock-free (shared with a peer)");

/* The fixed parts of the specification's formula. */
#define VQ_DESC_SIZE 16u
#define VQ_AVAIL_FIXED 6u /* flags, idx, used_event */
#define VQ_AVAIL_ELEM 2u
#define VQ_USED_FIXED 6u /* flags, idx, avail_event */
#define VQ_USED_ELEM 8u
_Static_assert(VQ_DESC_SIZE == sizeof(struct mdcom_vq_desc), "descriptor size");
_Static_assert(VQ_USED_ELEM == sizeof(struct mdcom_vq_used_elem), "used element size");
_Static_assert(VQ_AVAIL_FIXED == sizeof(struct mdcom_vq_avail) + 2, "avail: header + used_event");
_Static_assert(VQ_USED_FIXED == sizeof(struct mdcom_vq_used) + 2, "used: header + avail_event");
/* The largest vring (N = 32768, align 1 MiB) fits 32-bit offsets. */
_Static_assert((uint64_t)VQ_DESC_SIZE *MDCOM_VQ_MAX_NUM + VQ_AVAIL_FIXED +
                       VQ_AVAIL_ELEM * MDCOM_VQ_MAX_NUM + (1u << 20) + VQ_USED_FIXED +
                       (uint64_t)VQ_USED_ELEM * MDCOM_VQ_MAX_NUM + (1u << 20) <
                   UINT32_MAX,
               "vring offsets fit 32 bits");

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1u) & ~(a - 1u); }

int mdcom_vring_layout_compute(uint32_t num, uint32_t align, struct mdcom_vring_layout *out)
{
    if (!out || num == 0 || num > MDCOM_VQ_MAX_NUM || (num & (num - 1u)) != 0)
        return -EINVAL;
    if (align < 4 || align > (1u << 20) || (align & (align - 1u)) != 0)
        return -EINVAL;
    out->num = num;
    out->align = align;
    out->desc_off = 0;
    out->avail_off = VQ_DESC_SIZE * num;
    out->used_event_off = out->avail_off + 4u + VQ_AVAIL_ELEM * num;
    out->used_off = align_up(out->avail_off + VQ_AVAIL_FIXED + VQ_AVAIL_ELEM * num, align);
    out->avail_event_off = out->used_off + 4u + VQ_USED_ELEM * num;
    out->size = out->used_off + VQ_USED_FIXED + VQ_USED_ELEM * num;
    out->size_aligned = align_up(out->size, align);
    return 0;
}

/* ------------------------------------------------------------------ */
static _Atomic uint16_t *avail_idx(const struct mdcom_vq *vq)
{
    return (_Atomic uint16_t *)(void *)(vq->avail + offsetof(struct mdcom_vq_avail, idx));
}
static _Atomic uint16_t *used_idx(const struct mdcom_vq *vq)
{
    return (_Atomic uint16_t *)(void *)(vq->used + offsetof(struct mdcom_vq_used, idx));
}
static uint8_t *avail_slot(const struct mdcom_vq *vq, uint16_t pos)
{
    return vq->avail + sizeof(struct mdcom_vq_avail) + 2u * (pos & (vq->num - 1u));
}
static uint8_t *used_slot(const struct mdcom_vq *vq, uint16_t pos)
{
    return vq->used + sizeof(struct mdcom_vq_used) +
           sizeof(struct mdcom_vq_used_elem) * (pos & (vq->num - 1u));
}
static uint8_t *desc_at(const struct mdcom_vq *vq, uint16_t head)
{
    return vq->desc + sizeof(struct mdcom_vq_desc) * head;
}

void mdcom_vq_bind(struct mdcom_vq *vq, void *base, const struct mdcom_vring_layout *l,
                   uint8_t *state)
{
    uint8_t *b = (uint8_t *)base;
    vq->desc = b + l->desc_off;
    vq->avail = b + l->avail_off;
    vq->used = b + l->used_off;
    vq->state = state;
    vq->num = l->num;
    vq->next_avail = 0;
    vq->next_used = 0;
    vq->outstanding = 0;
    memset(state, MDCOM_VQ_IDLE, l->num);
}

void mdcom_vq_bind_parts(struct mdcom_vq *vq, void *desc, void *avail, void *used, uint32_t num,
                         uint8_t *state)
{
    vq->desc = (uint8_t *)desc;
    vq->avail = (uint8_t *)avail;
    vq->used = (uint8_t *)used;
    vq->state = state;
    vq->num = num;
    vq->next_avail = 0;
    vq->next_used = 0;
    vq->outstanding = 0;
    memset(state, MDCOM_VQ_IDLE, num);
}

static _Atomic uint16_t *avail_flags(const struct mdcom_vq *vq)
{
    return (_Atomic uint16_t *)(void *)(vq->avail + offsetof(struct mdcom_vq_avail, flags));
}
static _Atomic uint16_t *used_flags(const struct mdcom_vq *vq)
{
    return (_Atomic uint16_t *)(void *)(vq->used + offsetof(struct mdcom_vq_used, flags));
}

/* The flags words are hints ordered by the callers' fences: relaxed. */
static void flag_set(_Atomic uint16_t *w, uint16_t flag, int on)
{
    atomic_store_explicit(w, MDCOM_LE16(on ? flag : 0u), memory_order_relaxed);
}
static int flag_clear(const _Atomic uint16_t *w, uint16_t flag)
{
    return (MDCOM_LE16(atomic_load_explicit(w, memory_order_relaxed)) & flag) == 0;
}
void mdcom_vq_drv_suppress(struct mdcom_vq *vq, int on)
{
    flag_set(avail_flags(vq), MDCOM_VQ_AVAIL_F_NO_INTERRUPT, on);
}
int mdcom_vq_drv_peer_wants_notify(const struct mdcom_vq *vq)
{
    return flag_clear(used_flags(vq), MDCOM_VQ_USED_F_NO_NOTIFY);
}
void mdcom_vq_dev_suppress(struct mdcom_vq *vq, int on)
{
    flag_set(used_flags(vq), MDCOM_VQ_USED_F_NO_NOTIFY, on);
}
int mdcom_vq_dev_peer_wants_interrupt(const struct mdcom_vq *vq)
{
    return flag_clear(avail_flags(vq), MDCOM_VQ_AVAIL_F_NO_INTERRUPT);
}

void mdcom_vq_drv_format(struct mdcom_vq *vq)
{
    /* the three parts may lie apart (bind_parts): zero each */
    memset(vq->desc, 0, VQ_DESC_SIZE * vq->num);
    memset(vq->avail, 0, VQ_AVAIL_FIXED + VQ_AVAIL_ELEM * vq->num);
    memset(vq->used, 0, VQ_USED_FIXED + VQ_USED_ELEM * vq->num);
}

/* ------------------------------------------------------------------ */
/* driver                                                               */
/* ------------------------------------------------------------------ */
void mdcom_vq_drv_add(struct mdcom_vq *vq, uint16_t head, uint64_t addr, uint32_t len,
                      uint16_t flags)
{
    uint8_t *d = desc_at(vq, head);
    /* the descriptor is rewritten every time: the device may have scribbled on it */
    mdcom_wr64(d + offsetof(struct mdcom_vq_desc, addr), addr);
    mdcom_wr32(d + offsetof(struct mdcom_vq_desc, len), len);
    mdcom_wr16(d + offsetof(struct mdcom_vq_desc, flags), flags);
    mdcom_wr16(d + offsetof(struct mdcom_vq_desc, next), 0);
    mdcom_wr16(avail_slot(vq, vq->next_avail), head);
    vq->next_avail++;
    vq->state[head] = MDCOM_VQ_OUT;
    vq->outstanding++;
}

void mdcom_vq_drv_publish(struct mdcom_vq *vq)
{
    /* release: the descriptors, ring entries and buffer contents written
     * before are visible to a device that acquires the new idx */
    atomic_store_explicit(avail_idx(vq), MDCOM_LE16(vq->next_avail), memory_order_release);
}

int mdcom_vq_drv_has_used(const struct mdcom_vq *vq)
{
    return MDCOM_LE16(atomic_load_explicit(used_idx(vq), memory_order_relaxed)) != vq->next_used;
}

int mdcom_vq_drv_get_used(struct mdcom_vq *vq, uint16_t *head, uint32_t *len,
                          enum mdcom_vq_bad *bad)
{
    /* acquire: the used entry and what the device wrote into the buffer
     * before publishing idx are visible once we see idx */
    uint16_t idx = MDCOM_LE16(atomic_load_explicit(used_idx(vq), memory_order_acquire));
    uint16_t pending = (uint16_t)(idx - vq->next_used);
    uint8_t *e;
    uint32_t id;
    *bad = MDCOM_VQ_BAD_NONE;
    if (pending == 0)
        return 0;
    if (pending > vq->outstanding) {
        /* more returned than we ever gave out: do not consume anything */
        *bad = MDCOM_VQ_BAD_IDX_JUMP;
        return -EPROTO;
    }
    e = used_slot(vq, vq->next_used);
    id = mdcom_rd32(e + offsetof(struct mdcom_vq_used_elem, id));
    *len = mdcom_rd32(e + offsetof(struct mdcom_vq_used_elem, len));
    vq->next_used++;
    if (id >= vq->num || vq->state[id] != MDCOM_VQ_OUT) {
        *bad = MDCOM_VQ_BAD_HEAD; /* consumed and dropped */
        return -EPROTO;
    }
    vq->state[id] = MDCOM_VQ_IDLE;
    vq->outstanding--;
    *head = (uint16_t)id;
    return 1;
}

/* ------------------------------------------------------------------ */
/* device                                                               */
/* ------------------------------------------------------------------ */
int mdcom_vq_dev_has_avail(const struct mdcom_vq *vq)
{
    return MDCOM_LE16(atomic_load_explicit(avail_idx(vq), memory_order_relaxed)) != vq->next_avail;
}

int mdcom_vq_dev_get_avail(struct mdcom_vq *vq, uint16_t *head, uint64_t *addr, uint32_t *len,
                           uint16_t *flags, enum mdcom_vq_bad *bad)
{
    /* acquire: the ring entry, the descriptor and the buffer contents the
     * driver wrote before publishing idx are visible once we see idx */
    uint16_t idx = MDCOM_LE16(atomic_load_explicit(avail_idx(vq), memory_order_acquire));
    uint16_t pending = (uint16_t)(idx - vq->next_avail);
    uint16_t h;
    const uint8_t *d;
    *bad = MDCOM_VQ_BAD_NONE;
    if (pending == 0)
        return 0;
    if (pending > vq->num - vq->outstanding) {
        /* the driver cannot have more heads available than we do not hold */
        *bad = MDCOM_VQ_BAD_IDX_JUMP;
        return -EPROTO;
    }
    h = mdcom_rd16(avail_slot(vq, vq->next_avail));
    vq->next_avail++;
    if (h >= vq->num || vq->state[h] != MDCOM_VQ_IDLE) {
        *bad = MDCOM_VQ_BAD_HEAD; /* consumed and dropped */
        return -EPROTO;
    }
    d = desc_at(vq, h);
    *addr = mdcom_rd64(d + offsetof(struct mdcom_vq_desc, addr));
    *len = mdcom_rd32(d + offsetof(struct mdcom_vq_desc, len));
    *flags = mdcom_rd16(d + offsetof(struct mdcom_vq_desc, flags));
    vq->state[h] = MDCOM_VQ_OUT;
    vq->outstanding++;
    *head = h;
    return 1;
}

void mdcom_vq_dev_put_used(struct mdcom_vq *vq, uint16_t head, uint32_t len)
{
    uint8_t *e = used_slot(vq, vq->next_used);
    mdcom_wr32(e + offsetof(struct mdcom_vq_used_elem, id), head);
    mdcom_wr32(e + offsetof(struct mdcom_vq_used_elem, len), len);
    vq->next_used++;
    vq->state[head] = MDCOM_VQ_IDLE;
    vq->outstanding--;
}

void mdcom_vq_dev_resume_used(struct mdcom_vq *vq)
{
    vq->next_used = MDCOM_LE16(atomic_load_explicit(used_idx(vq), memory_order_acquire));
}

void mdcom_vq_dev_publish(struct mdcom_vq *vq)
{
    /* release: the used entries and the buffer contents written before are
     * visible to a driver that acquires the new idx */
    atomic_store_explicit(used_idx(vq), MDCOM_LE16(vq->next_used), memory_order_release);
}
