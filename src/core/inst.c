/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inst.c - the instance pool of this process and the lookups every other
 * file of the core makes: is a handle a live instance, the instance at a
 * place of the pool, the role of a domain, a channel by name or index.
 * Which process entry each attachment holds (its hold) lives here too, so
 * that a sibling attachment can tell its own leftovers from live entries.
 * Calls no other file of the core but msg.c.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static struct mdcom_instance g_pool[MDCOM_MAX_INSTANCES];
static _Atomic uint32_t g_pool_used[MDCOM_MAX_INSTANCES];
#if defined(MDCOM_THREADS) && MDCOM_THREADS
/* The process entry each attachment of this process holds (hold_key), 0
 * for none. An entry that names this process is live only while one of
 * these says so; otherwise it is the leftover of an earlier attachment
 * (freed, then rewritten by a scribbler). */
static _Atomic uint32_t g_pool_holds[MDCOM_MAX_INSTANCES];
_Static_assert(MDCOM_MAX_PROCS < 255u, "an entry index + 1 fits the low byte of a hold");

/* Entry i of the region m names: a hash of the region's name (FNV-1a) with
 * i + 1 in the low byte. Attachments with other configs of one region share
 * it; a collision only makes a leftover count as live. */
static uint32_t hold_key(const struct mdcom_instance *m, uint32_t i)
{
    const char *s = m->cfg->region_name;
    uint32_t h = mdcom_fnv1a(MDCOM_FNV1A_BASIS, s, mdcom_strnlen(s, MDCOM_NAME_MAX));
    return (h & ~0xffu) | (i + 1u);
}

void mdcom_pool_hold(const struct mdcom_instance *m, uint32_t i)
{
    mdcom_store(&g_pool_holds[m - g_pool], i < MDCOM_MAX_PROCS ? hold_key(m, i) : 0u,
                memory_order_relaxed);
}

uint32_t mdcom_pool_index(const struct mdcom_instance *m) { return (uint32_t)(m - g_pool); }
#endif

int mdcom_domain_role(const mdcom_config *cfg, uint32_t id)
{
    uint32_t i;
    for (i = 0; i < cfg->n_domains; i++)
        if (cfg->domains[i].id == id)
            return (int)cfg->domains[i].role;
    return 0;
}

/* The process that took each attachment of the pool (the platform's
 * proc_self when it took it; pid 0: none known). Where every thread of
 * control is its own process (the RTOS ports: one task, one process), a task
 * deleted without mdcom_term leaves its attachment behind for good; the
 * pool takes it back once the platform says that process is dead. On Linux
 * the attachments of this process are all of a live process: none is
 * taken. */
static _Atomic uint32_t g_pool_owner_pid[MDCOM_MAX_INSTANCES];
static _Atomic uint32_t g_pool_owner_token[MDCOM_MAX_INSTANCES];

static struct mdcom_instance *pool_try(void)
{
    uint32_t i;
    for (i = 0; i < MDCOM_MAX_INSTANCES; i++) {
        uint32_t z = 0;
        /* acq_rel: the slot's previous user finished before we reuse it */
        if (mdcom_cas(&g_pool_used[i], &z, 1, memory_order_acq_rel, memory_order_relaxed))
            return &g_pool[i];
    }
    return 0;
}

/* Free the attachments of dead processes (see g_pool_owner_pid); how many. */
static uint32_t pool_reclaim(const mdcom_platform *plat)
{
    uint32_t i, n = 0;
    if (!plat->proc_alive)
        return 0;
    for (i = 0; i < MDCOM_MAX_INSTANCES; i++) {
        /* acquire: the owner's token was stored before its pid */
        uint32_t pid = mdcom_load(&g_pool_owner_pid[i], memory_order_acquire), one = 1;
        uint32_t token = mdcom_load(&g_pool_owner_token[i], memory_order_relaxed);
        if (!pid || plat->proc_alive(plat->ctx, pid, token) != 0)
            continue; /* alive, or unknown: never taken */
        /* 2: being taken back, so that only one of two takers frees it */
        if (!mdcom_cas(&g_pool_used[i], &one, 2, memory_order_acq_rel, memory_order_relaxed))
            continue;
        if (g_pool[i].plat == plat && g_pool[i].map.base)
            plat->region_close(plat->ctx, &g_pool[i].map, 0);
        mdcom_store(&g_pool_owner_pid[i], 0, memory_order_relaxed);
        mdcom_pool_put(&g_pool[i]);
        n++;
    }
    return n;
}

struct mdcom_instance *mdcom_pool_get(const mdcom_platform *plat)
{
    struct mdcom_instance *m = pool_try();
    if (!m && pool_reclaim(plat))
        m = pool_try();
    return m;
}

void mdcom_pool_own(const struct mdcom_instance *m, uint32_t pid, uint32_t token)
{
    uint32_t i = (uint32_t)(m - g_pool);
    mdcom_store(&g_pool_owner_token[i], token, memory_order_relaxed);
    /* release: a taker that reads the pid reads its token */
    mdcom_store(&g_pool_owner_pid[i], pid, memory_order_release);
}

#if defined(MDCOM_THREADS) && MDCOM_THREADS
struct mdcom_instance *mdcom_pool_at(uint32_t i)
{
    return i < MDCOM_MAX_INSTANCES ? &g_pool[i] : 0;
}
#endif

void mdcom_pool_put_bare(struct mdcom_instance *m)
{
    uint32_t i = (uint32_t)(m - g_pool);
    mdcom_store(&g_pool_owner_pid[i], 0, memory_order_relaxed);
    mdcom_pool_hold(m, MDCOM_MAX_PROCS);
    memset(m, 0, sizeof(*m));
    /* release: our clearing is done before another init takes the slot */
    mdcom_store(&g_pool_used[i], 0, memory_order_release);
}

void mdcom_pool_put(struct mdcom_instance *m)
{
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    mtx_destroy(&m->rec0_lock);
#endif
    mdcom_pool_put_bare(m);
}

int mdcom_pool_held(const struct mdcom_instance *m, uint32_t i)
{
    uint32_t j;
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    uint32_t want = hold_key(m, i);
    for (j = 0; j < MDCOM_MAX_INSTANCES; j++)
        if (&g_pool[j] != m && mdcom_load(&g_pool_holds[j], memory_order_relaxed) == want)
            return 1;
#else
    (void)i;
    for (j = 0; j < MDCOM_MAX_INSTANCES; j++)
        if (&g_pool[j] != m && mdcom_load(&g_pool_used[j], memory_order_relaxed))
            return 1;
#endif
    return 0;
}

static int valid_inst(const struct mdcom_instance *m)
{
    return m && m >= g_pool && m < g_pool + MDCOM_MAX_INSTANCES && m->tag == MDCOM_TAG_INST;
}

int mdcom_valid_inst(const struct mdcom_instance *m) { return valid_inst(m); }

uint32_t mdcom_domain_id(const mdcom_t *m) { return valid_inst(m) ? m->domain : UINT32_MAX; }

int mdcom_chan_open(struct mdcom_instance *m, const char *name, uint32_t index, uint32_t tag,
                    void **out)
{
    const mdcom_chan_layout *cl;
    if (!valid_inst(m) || !out)
        return -EINVAL;
    if (name) {
        for (index = 0; index < m->cfg->n_channels; index++)
            if (mdcom_streq(m->cfg->channels[index].name, name, MDCOM_NAME_MAX))
                break;
        if (index == m->cfg->n_channels)
            return -ENOENT;
    } else if (index >= m->cfg->n_channels) {
        return -EINVAL;
    }
    if (m->ch[index].tag != tag)
        return -ENOENT;
    cl = &m->cl[index];
    if (!(((cl->senders | cl->receivers) >> m->domain) & 1u))
        return -EPERM;
    *out = &m->ch[index];
    return 0;
}
