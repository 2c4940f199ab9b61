/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * shm_access.h - the one vocabulary the core uses to touch shared memory.
 *
 * Every access of the core to a word another process or domain may read or
 * write goes through a name defined here:
 *
 *   mdcom_load(p, mo)                  C11 atomic load
 *   mdcom_store(p, v, mo)              C11 atomic store            (kill point)
 *   mdcom_cas(p, e, d, s, f)           strong compare-exchange     (kill point)
 *   mdcom_cas_weak(p, e, d, s, f)      weak compare-exchange       (kill point)
 *   mdcom_xchg(p, v, mo)               exchange                    (kill point)
 *   mdcom_fetch_add / _sub(p, v, mo)   fetch-and-add / -subtract   (kill point)
 *   mdcom_fetch_and / _or(p, v, mo)    fetch-and-and / -or (the waiter words'
 *                                      arm bit and private record masks; not
 *                                      kill points)
 *   mdcom_fence(mo)                    a thread fence
 *   mdcom_read_once(x)                 one relaxed read of a plain (non-_Atomic)
 *                                      shared field: read exactly once, never
 *                                      re-read or torn, no ordering
 *   MDCOM_KP(addr)                     the kill point of a plain store
 *   mdcom_shm_clean / _invalidate      the platform's cache maintenance of a
 *                                      shared range (no-ops when it has none)
 *
 * Memory orders are C11's (memory_order_*); each use in the core says why it
 * needs the order it names. In the library build the names are the
 * <stdatomic.h> operations themselves, so the code is the same as written
 * with them directly.
 *
 * Kill points (a test build only: -DMDCOM_KILLPOINTS). The operations marked
 * above call mdcom_kp(address) first, and so does MDCOM_KP() before a plain
 * store to shared memory; the test's mdcom_kp() (tests/reliability,
 * firmware/common/rtos_kp.c) counts those inside the region and kills (or
 * stops) the process at the n-th one. Each argument is evaluated once, as
 * in the plain build. A file of the core that writes only regions nobody
 * uses yet (format.c) defines MDCOM_SHM_NO_KILLPOINTS before including this
 * header: its stores are not kill points.
 */
#ifndef MDCOM_SHM_ACCESS_H
#define MDCOM_SHM_ACCESS_H

#include <stdatomic.h>
#include <stddef.h>

#include "mdcom/platform.h"

#define mdcom_load(P, MO) atomic_load_explicit((P), (MO))
#define mdcom_fence(MO) atomic_thread_fence(MO)
#define mdcom_fetch_and(P, V, MO) atomic_fetch_and_explicit((P), (V), (MO))
#define mdcom_fetch_or(P, V, MO) atomic_fetch_or_explicit((P), (V), (MO))

/* A plain field read once: a relaxed atomic load of an object that is not
 * declared _Atomic (GCC's and clang's generic builtin takes the plain type);
 * on the targets the core runs on, the same single load a plain read would
 * be, which the compiler may neither repeat nor split. */
#define mdcom_read_once(X) __atomic_load_n(&(X), __ATOMIC_RELAXED)

#if defined(MDCOM_KILLPOINTS) && !defined(MDCOM_SHM_NO_KILLPOINTS)
void mdcom_kp(const volatile void *addr);
#define MDCOM_KP(addr) mdcom_kp(addr)
/* The address and value are taken once (the value's type without _Atomic,
 * which the comma drops), the hook called, then the standard operation. */
#define MDCOM_KP_VAL_(P, V, OP)                                                                    \
    __extension__({                                                                                \
        __auto_type kp_p_ = (P);                                                                   \
        __typeof__((void)0, *kp_p_) kp_v_ = (V);                                                   \
        mdcom_kp(kp_p_);                                                                           \
        OP;                                                                                        \
    })
#define mdcom_store(P, V, MO) MDCOM_KP_VAL_(P, V, atomic_store_explicit(kp_p_, kp_v_, (MO)))
#define mdcom_xchg(P, V, MO) MDCOM_KP_VAL_(P, V, atomic_exchange_explicit(kp_p_, kp_v_, (MO)))
#define mdcom_cas(P, E, D, S, F)                                                                   \
    MDCOM_KP_VAL_(P, D, atomic_compare_exchange_strong_explicit(kp_p_, (E), kp_v_, (S), (F)))
#define mdcom_cas_weak(P, E, D, S, F)                                                              \
    MDCOM_KP_VAL_(P, D, atomic_compare_exchange_weak_explicit(kp_p_, (E), kp_v_, (S), (F)))
#define mdcom_fetch_add(P, V, MO) MDCOM_KP_VAL_(P, V, atomic_fetch_add_explicit(kp_p_, kp_v_, (MO)))
#define mdcom_fetch_sub(P, V, MO) MDCOM_KP_VAL_(P, V, atomic_fetch_sub_explicit(kp_p_, kp_v_, (MO)))
#else
#define MDCOM_KP(addr) ((void)0)
#define mdcom_store(P, V, MO) atomic_store_explicit((P), (V), (MO))
#define mdcom_xchg(P, V, MO) atomic_exchange_explicit((P), (V), (MO))
#define mdcom_cas(P, E, D, S, F) atomic_compare_exchange_strong_explicit((P), (E), (D), (S), (F))
#define mdcom_cas_weak(P, E, D, S, F) atomic_compare_exchange_weak_explicit((P), (E), (D), (S), (F))
#define mdcom_fetch_add(P, V, MO) atomic_fetch_add_explicit((P), (V), (MO))
#define mdcom_fetch_sub(P, V, MO) atomic_fetch_sub_explicit((P), (V), (MO))
#endif

/* Cache maintenance of a shared range, for platforms whose shared memory is
 * not coherent with this core's cache: clean (write back) what we wrote
 * before publishing it, invalidate before reading what a peer published. */
static inline void mdcom_shm_clean(const mdcom_platform *p, const void *addr, size_t len)
{
    if (p->cache_clean)
        p->cache_clean(p->ctx, addr, len);
}

static inline void mdcom_shm_invalidate(const mdcom_platform *p, const void *addr, size_t len)
{
    if (p->cache_invalidate)
        p->cache_invalidate(p->ctx, addr, len);
}

#endif
