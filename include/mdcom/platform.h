/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * platform.h - the port interface of libmdcom.
 *
 * The portable core (src/core) touches the outside world only through this
 * table. It is cut into independent axes so that a board can mix them (e.g. the
 * Linux region mapping with a UART doorbell to a core under QEMU):
 *
 *   region    map / unmap the shared region           (Linux: /dev/shm file)
 *   doorbell  wait on / ring a shared 32-bit word     (Linux: futex; pluggable)
 *   lock      inter-domain lock on a shared word      (Linux: atomics + owner;
 *                                                      boards: HW semaphore)
 *   clock     monotonic nanoseconds, cpu relax
 *   cache     clean / invalidate a range of block data (coherent: NULL)
 *   process   identity and liveness of attached processes
 *
 * The build selects one port (CMake option MDCOM_PORT) which provides
 * mdcom_platform_default(). ports/template/ is the skeleton for a new one and
 * tests/conformance/ the suite every port must pass.
 *
 * Shared words are 32-bit, naturally aligned, and must be accessed atomically
 * (a Cortex-M peer has no 64-bit atomics).
 */
#ifndef MDCOM_PLATFORM_H
#define MDCOM_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include "mdcom/export.h"

#ifdef __cplusplus
#include <atomic>
typedef std::atomic<uint32_t> mdcom_aword;
extern "C" {
#else
typedef _Atomic uint32_t mdcom_aword;
#endif

/* proc_alive's token for "whatever process has this pid now". */
#define MDCOM_TOKEN_ANY 0xffffffffu

/* Foreign pids: a process id with bit 31 set names a process of a domain
 * that is not an OS process of this port (firmware on another core:
 * ports/baremetal's MDCOM_BM_PID). No Linux pid has it (pids stay below
 * 2^22). The Linux port answers "unknown" for them; a platform that can see
 * the other core (a doorbell link) may judge them. */
#define MDCOM_PID_FOREIGN 0x80000000u
#define MDCOM_PID_IS_FOREIGN(pid) (((uint32_t)(pid)&MDCOM_PID_FOREIGN) != 0u)

MDCOM_API_BEGIN /* the declarations below are the exported API */

/* A mapped region. */
typedef struct mdcom_region_map {
    void *base;
    uint32_t size;
    intptr_t handle; /* port private (fd on Linux) */
} mdcom_region_map;

/* Region open flags. */
#define MDCOM_REGION_CREATE 0x1u /* master: create (or re-use its own stale) */

typedef struct mdcom_doorbell {
    /* Sleep while *word == expected, at most timeout_ns (MDCOM_FOREVER: no
     * limit; never called with 0). Returns 0 when woken or the word differs
     * (spurious returns are allowed), -ETIMEDOUT, -EINTR. */
    int (*wait)(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns);
    /* Wake every sleeper on word. The caller has already changed *word.
     * chan is the channel index (or UINT32_MAX), for doorbells that signal per
     * channel (an interrupt line, a UART byte). */
    void (*ring)(void *ctx, mdcom_aword *word, uint32_t chan);
    void *ctx;
} mdcom_doorbell;

typedef struct mdcom_platform {
    const char *name;
    void *ctx;

    /* region: open the region called name and map all of it.
     * With MDCOM_REGION_CREATE (master domain): create it with mode bits and
     * group (or -1), or re-use an existing one (of this user, never through a
     * symlink), growing it to at least size bytes, never shrinking it.
     * Without: wait up to timeout_ns for it to exist with at least size bytes;
     * refuse (-EPERM) one that is world-accessible or neither this user's
     * nor group's (where the port has owners: somebody else planted it).
     * Returns 0 or a negative errno (-ETIMEDOUT, -EPERM, -EACCES, ...). */
    int (*region_open)(void *ctx, const char *name, uint32_t size, uint32_t flags, uint32_t mode,
                       int32_t group, int64_t timeout_ns, mdcom_region_map *out);
    /* Unmap; with remove != 0 also delete the region (master at term). */
    void (*region_close)(void *ctx, mdcom_region_map *map, int remove);

    /* doorbell: the default one for every channel. */
    mdcom_doorbell doorbell;

    /* lock: try to change *word from 0 to owner (non-zero). 0 or -EBUSY.
     * NULL = the core's portable atomic version. */
    int (*lock_try)(void *ctx, uint32_t lock_id, mdcom_aword *word, uint32_t owner);
    /* release a lock held by owner. 0 or -EPERM. NULL = portable version. */
    int (*lock_release)(void *ctx, uint32_t lock_id, mdcom_aword *word, uint32_t owner);

    /* clock */
    uint64_t (*now_ns)(void *ctx);
    void (*relax)(void *ctx); /* cpu pause inside spin loops; may be NULL */

    /* cache maintenance of block data; NULL where memory is coherent. */
    void (*cache_clean)(void *ctx, const void *addr, size_t len);
    void (*cache_invalidate)(void *ctx, const void *addr, size_t len);

    /* process identity: a pid and a token that changes when the pid is
     * reused (Linux: start time); the pid is never 0 and never has bit 30
     * set (the region's formatter claim, wire.h), the token is never 0 nor
     * MDCOM_TOKEN_ANY. 0 or negative errno. */
    int (*proc_self)(void *ctx, uint32_t *pid, uint32_t *token);
    /* 1 alive, 0 dead, negative errno if unknown. token MDCOM_TOKEN_ANY
     * asks about the pid alone (any incarnation of it). The core takes an
     * unknown entry of its own domain (a process of its own kind) for
     * forged: answer unknown only for processes of other domains. */
    int (*proc_alive)(void *ctx, uint32_t pid, uint32_t token);

    /* region (optional, NULL = never): 1 when the file mapped in map is no
     * longer the region called name (unlinked, or the name now names another
     * file, or it shrank below the mapping), 0 when it still is, negative
     * errno when the port cannot tell (not its mapping). A process that
     * waits at attach for a master asks it, and opens the name again: a
     * restarted master's term may unlink the file just after it was opened. */
    int (*region_moved)(void *ctx, const char *name, const mdcom_region_map *map);
    /* process (optional, NULL = none): the liveness lock of process entry
     * slot, which the OS drops when the process dies, so that a live entry
     * cannot be forged by writing the region. op MDCOM_SLOT_TAKE: take it for
     * this mapping (0, -EBUSY held by another mapping, -ENOSYS no lock for
     * this mapping, or another negative errno); MDCOM_SLOT_GIVE: give it
     * back (0); MDCOM_SLOT_HELD: 1 another mapping holds it, 0 none does,
     * negative errno when the port cannot tell. The core asks HELD only of
     * entries whose pid is not foreign (firmware takes no lock here). */
    int (*slot_lock)(void *ctx, const mdcom_region_map *map, uint32_t slot, uint32_t op);
    /* Reserved for hooks of later versions; must be NULL (a designated
     * initializer leaves them so). A later minor version calls a new hook
     * only when it is non-NULL, so a table built against this header keeps
     * working with it. */
    void (*reserved[2])(void);
} mdcom_platform;

/* slot_lock operations */
#define MDCOM_SLOT_TAKE 0u
#define MDCOM_SLOT_GIVE 1u
#define MDCOM_SLOT_HELD 2u
/* The slot_lock "slot" of the region's format lock (not a process entry):
 * held by a process of the master domain from its last look at the name to
 * the end of its format, and by the formatter's term from its last look at
 * the generation to the removal of the file, so that a term never removes
 * a file another process re-formatted, nor does anyone format a file that
 * a term is removing. A port that has slot locks must take this one too. */
#define MDCOM_SLOT_FORMAT 0xffffu

/* The port selected by the build (CMake MDCOM_PORT). */
const mdcom_platform *mdcom_platform_default(void);

/* Ports shipped with mdcom; only those built into the library link. */
const mdcom_platform *mdcom_platform_linux(void);    /* ports/linux    */
const mdcom_platform *mdcom_platform_template(void); /* ports/template */

MDCOM_API_END

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_PLATFORM_H */
