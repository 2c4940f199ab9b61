/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * attach.c - attach and detach: the attach state machine, the choice of a
 * process entry (a free one, else a dead process' one, reaped), term. The
 * top layer of the core (internal.h): no other file calls it.
 *
 * Attach protocol
 *   master: open(create) -> state = FORMATTING -> write header, tables,
 *           channels -> generation = old + 1 (master.c) -> claim a process
 *           slot -> state = READY (release) -> ring
 *   remote: open (waits for the file) -> wait for state == READY (acquire)
 *           -> verify every header/directory field against the layout computed
 *           from its own config -> claim a process slot
 *   Whoever waits asks the port whether the file it mapped is still the one
 *   at the region's name (region_moved), and opens the name again if not: a
 *   restarting master's term unlinks its file, and a process that opened it
 *   just before would otherwise wait on the dead file.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#if defined(MDCOM_THREADS) && MDCOM_THREADS
/* How many attachments of this process are formatting a region now: a
 * FORMATTING header naming this process is a leftover when none is. */
static _Atomic uint32_t g_formatting;
/* Counted before the CAS that makes us the formatter: a sibling that sees
 * the CAS' FORMATTING (acquire) sees the count too. */
#define FORMATTING() mdcom_fetch_add(&g_formatting, 1, memory_order_relaxed)
#define FORMATTED() mdcom_fetch_sub(&g_formatting, 1, memory_order_relaxed)
#else
#define FORMATTING() ((void)0)
#define FORMATTED() ((void)0)
#endif

/* How long a master's attach and the formatter's term wait for the format
 * lock (its holders hold it for microseconds to a few ms); term then leaves
 * the file, attach waits a round. */
#define MDCOM_FMT_LOCK_NS 100000000ull

/* The format lock (MDCOM_SLOT_FORMAT) on the file we map, spinning until
 * deadline: 1 held, 0 the port has none (nothing to order), -ETIMEDOUT.
 * Its holders hold it for a format or an unlink: microseconds to a few ms. */
static int fmt_lock(struct mdcom_instance *m, uint64_t deadline)
{
    uint32_t i;
    int r;
    if (!m->plat->slot_lock)
        return 0;
    for (i = 0;; i++) {
        r = m->plat->slot_lock(m->plat->ctx, &m->map, MDCOM_SLOT_FORMAT, MDCOM_SLOT_TAKE);
        if (r != -EBUSY)
            return r == 0 ? 1 : 0; /* -ENOSYS or another error: no lock to order by */
        if ((i & 63u) == 63u && mdcom_now(m) >= deadline)
            return -ETIMEDOUT;
        if (m->plat->relax)
            m->plat->relax(m->plat->ctx);
    }
}

static void fmt_unlock(struct mdcom_instance *m)
{
    (void)m->plat->slot_lock(m->plat->ctx, &m->map, MDCOM_SLOT_FORMAT, MDCOM_SLOT_GIVE);
}

/* Claim a process entry: a free one, or, on a second pass, one whose
 * process (or claimer) is dead, taken and reaped first (reap.c) so that no
 * one else reuses its owner token meanwhile; then what our FIFO handles
 * write is precomputed (fifo.c). 0, -EUSERS, or the platform's error taking
 * a liveness lock. m->pid and m->token (attach set them: a reaper's claim
 * names us, see mdcom_take_dead_slot) are pid and token. */
static int claim_proc(struct mdcom_instance *m, uint32_t pid, uint32_t token)
{
    uint32_t pass, i;
    int r;
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < MDCOM_MAX_PROCS; i++) {
            uint32_t o = mdcom_load(&m->procs[i].owner, memory_order_acquire);
            int reaped = pass == 1 && mdcom_take_if_dead(m, i, o);
            if (reaped)
                mdcom_reap_slot(m, i);
            else if (o != MDCOM_PROC_FREE)
                continue;
            r = mdcom_proc_claim(m, i, reaped, pid, token);
            if (r > 0)
                continue; /* taken meanwhile, or its lock is another's */
            if (r < 0)
                return r;
            for (i = 0; i < m->cfg->n_channels; i++)
                if (m->ch[i].tag == MDCOM_TAG_FIFO)
                    mdcom_fifo_own(&m->ch[i].f);
            return 0;
        }
    }
    return -MDCOM_EUSERS;
}

/* 1 when another attachment of this process holds entry i of our region, or
 * (i = MDCOM_MAX_PROCS) formats a region now. Freestanding (one image per
 * domain, rarely two attachments): when any other attachment exists. */
static int ours_live(const struct mdcom_instance *m, uint32_t i)
{
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    if (i == MDCOM_MAX_PROCS)
        return mdcom_load(&g_formatting, memory_order_relaxed) != 0;
#endif
    return mdcom_pool_held(m, i);
}

/* 1 when a live process of domain dom stands behind pid/token, read once
 * from the region at entry i (MDCOM_MAX_PROCS: the formatter). A process of
 * our own domain runs on our kind of platform: one the platform cannot judge
 * is a forged entry, not a process. The token wildcard is never a process'. */
static int named_live(const struct mdcom_instance *m, uint32_t dom, uint32_t pid, uint32_t token,
                      uint32_t i)
{
    int a;
    if (pid == m->pid && token == m->token)
        return ours_live(m, i);
    if (token == MDCOM_TOKEN_ANY)
        return 0;
    if (!m->plat->proc_alive)
        return 1; /* no way to tell: alive */
    a = m->plat->proc_alive(m->plat->ctx, pid, token);
    /* a live process whose entry's liveness lock nobody holds: the entry
     * was written into the region, not claimed by it */
    if (a > 0 && i < MDCOM_MAX_PROCS && mdcom_slot_unheld(m, i, pid))
        return 0;
    return a > 0 || (a < 0 && dom != m->domain);
}

/* 1 when fmt_pid word fp (read with acquire) names a process that claims
 * the region now, or formats it (state st FORMATTING). A claim is judged by
 * its pid alone (its token is not written yet); a formatter by pid and
 * token. One that formatted and is done (any other state) holds nothing. */
static int fmt_busy(const struct mdcom_instance *m, uint32_t fp, uint32_t st)
{
    uint32_t pid = fp & ~MDCOM_FMT_CLAIM;
    if (!pid)
        return 0;
    if (!(fp & MDCOM_FMT_CLAIM))
        return st == MDCOM_ST_FORMATTING &&
               named_live(m, m->domain, pid, mdcom_read_once(m->hdr->fmt_token), MDCOM_MAX_PROCS);
    if (pid == m->pid)
        return ours_live(m, MDCOM_MAX_PROCS);
    /* unknown in our own domain: forged, as in named_live */
    return !m->plat->proc_alive || m->plat->proc_alive(m->plat->ctx, pid, MDCOM_TOKEN_ANY) > 0;
}

/* 1 when a live process of domain dom is in the process table at proc_off
 * (an offset read from the region: checked against the mapping first). */
static int live_proc_of_domain(struct mdcom_instance *m, uint32_t proc_off, uint32_t dom)
{
    uint32_t i;
    if (proc_off % 4u || proc_off < MDCOM_HDR_SIZE ||
        (uint64_t)proc_off + MDCOM_MAX_PROCS * sizeof(mdcom_wire_proc) > m->map.size)
        return 0;
    for (i = 0; i < MDCOM_MAX_PROCS; i++) {
        mdcom_wire_proc *p = (mdcom_wire_proc *)(m->base + proc_off) + i;
        /* acquire: pairs with mdcom_proc_claim's release, so pid/token (and
         * the claimer's hold, when it is a thread of ours) are complete */
        uint32_t o = mdcom_load(&p->owner, memory_order_acquire);
        if (o == MDCOM_PROC_DOMAIN_BASE + dom &&
            named_live(m, dom, mdcom_read_once(p->pid), mdcom_read_once(p->token), i))
            return 1;
    }
    return 0;
}

/* set up every channel handle from our layout */
static void bind_channels(struct mdcom_instance *m)
{
    uint32_t i, pfw = mdcom_cpu_prefetchw(); /* asked once (CPUID may trap to a hypervisor) */
    for (i = 0; i < m->cfg->n_channels; i++) {
        if (m->cl[i].type == MDCOM_CHAN_FIFO)
            mdcom_fifo_bind(m, &m->ch[i].f, &m->cl[i], pfw);
        else
            mdcom_smem_bind(m, &m->ch[i].s, &m->cl[i]);
    }
}

/* Join a READY region that matches our layout. */
static int join_region(struct mdcom_instance *m, uint32_t pid, uint32_t token, mdcom_err *e)
{
    int r;
    m->generation = mdcom_load(&m->hdr->generation, memory_order_relaxed);
    bind_channels(m);
    r = claim_proc(m, pid, token);
    if (r)
        return mdcom_err_set(e, r, m->cfg->region_name, "no free process slot");
    /* the region may have been re-formatted while we bound it */
    if (mdcom_region_check(m) != 0) {
        mdcom_store(&m->procs[m->proc_slot].owner, MDCOM_PROC_FREE, memory_order_release);
        mdcom_slot_give(m, m->proc_slot); /* after the FREE: never live without it */
        return 1;                         /* look again */
    }
    return 0;
}

/* Join the region we have just formatted (mdcom_format_claim: 0, the state
 * still FORMATTING): our channels, our entry, then READY for all. 0, or a
 * negative errno (set in e) with the state back at EMPTY. */
static int join_formatted(struct mdcom_instance *m, mdcom_err *e)
{
    int r;
    bind_channels(m);
    r = claim_proc(m, m->pid, m->token);
    if (r) {
        mdcom_store(&m->hdr->state, MDCOM_ST_EMPTY, memory_order_relaxed);
        return mdcom_err_set(e, r, m->cfg->region_name, "no free process slot");
    }
    /* release: every formatted byte is visible before anyone sees READY */
    mdcom_store(&m->hdr->state, MDCOM_ST_READY, memory_order_release);
    m->plat->doorbell.ring(m->plat->doorbell.ctx, &m->hdr->state, UINT32_MAX);
    return 0;
}

/* Open and map the region (the master domain creates it), waiting at most
 * timeout_ns for it to exist (remotes). 0, or a negative errno (set in e)
 * with nothing mapped. */
static int open_region(struct mdcom_instance *m, int64_t timeout_ns, mdcom_err *e)
{
    const mdcom_platform *plat = m->plat;
    const mdcom_config *cfg = m->cfg;
    int r;
    if (m->is_master)
        r = plat->region_open(plat->ctx, cfg->region_name, m->lay.region_size, MDCOM_REGION_CREATE,
                              cfg->mode ? cfg->mode : 0600u, cfg->group, 0, &m->map);
    else
        r = plat->region_open(plat->ctx, cfg->region_name, MDCOM_HDR_SIZE, 0, 0, cfg->group,
                              timeout_ns, &m->map);
    if (r) {
        m->map.base = 0;
        if (r == -ETIMEDOUT)
            return mdcom_err_set(e, r, cfg->region_name,
                                 "master did not create the region in time");
        mdcom_err_set(e, r, cfg->region_name, "cannot open the region: ");
        mdcom_err_str(e, mdcom_strerror(r));
        return r;
    }
    m->base = (uint8_t *)m->map.base;
    m->hdr = (mdcom_wire_hdr *)m->base;
    m->procs = (mdcom_wire_proc *)(m->base + m->lay.proc_off);
    if (m->map.size < MDCOM_HDR_SIZE || (m->is_master && m->map.size < m->lay.region_size)) {
        plat->region_close(plat->ctx, &m->map, 0);
        m->map.base = 0;
        return mdcom_err_set(e, -ENOSPC, cfg->region_name, "mapped region is too small");
    }
    return 0;
}

/* While we wait at attach: is the file we mapped still the region at its
 * name? If the port says it is not (unlinked by a master's term, the name
 * now another file's, shrunk), we open the name again, waiting for it
 * until deadline. 0 still the same file (or the port cannot tell), 1
 * opened again (look at it), or a negative errno (nothing mapped, e set). */
static int follow_region(struct mdcom_instance *m, uint64_t deadline, mdcom_err *e)
{
    uint64_t now;
    int64_t left;
    int r;
    if (!m->plat->region_moved ||
        m->plat->region_moved(m->plat->ctx, m->cfg->region_name, &m->map) != 1)
        return 0;
    m->plat->region_close(m->plat->ctx, &m->map, 0);
    m->map.base = 0;
    now = mdcom_now(m);
    left = deadline == UINT64_MAX ? MDCOM_FOREVER : now >= deadline ? 0 : (int64_t)(deadline - now);
    r = open_region(m, left, e);
    return r ? r : 1;
}

/* The region against our layout (mdcom_layout_verify). */
static int verify(struct mdcom_instance *m, mdcom_err *e)
{
    return mdcom_layout_verify(m->base, m->map.size, m->cfg, &m->lay, m->cl, e);
}

/* (inlined: GCC's out-of-line copy cost more than its two inline ones) */
static MDCOM_ALWAYS_INLINE int attach_timeout(struct mdcom_instance *m, uint32_t st, int stale,
                                              mdcom_err *e)
{
    if (st == MDCOM_ST_FORMATTING)
        return mdcom_err_set(e, -ETIMEDOUT, m->cfg->region_name,
                             "stuck in FORMATTING (formatter busy or dead)");
    if (stale) /* the region of a master that is gone, laid out for another config */
        return verify(m, e);
    return mdcom_err_set(e, -ETIMEDOUT, m->cfg->region_name,
                         "master did not format the region in time");
}

#ifndef MDCOM_RUNTIME_LAYOUT
#define MDCOM_RUNTIME_LAYOUT 1
#endif

/* Our layout: the table t computed ahead of time for this very cfg, or, with
 * no table, computed now (validating cfg first: an invalid config is -EINVAL
 * whatever its size). The channel layouts are kept only when they fit this
 * build's capacity (init refuses more channels next). */
static int layout_of(struct mdcom_instance *m, const mdcom_config *cfg, const mdcom_layout_table *t,
                     mdcom_err *e)
{
    if (t) {
        /* cfg not named in the message: it may not be what the table names */
        if (!cfg || t->cfg != cfg || t->n_channels != cfg->n_channels ||
            (t->n_channels && !t->chans))
            return mdcom_err_set(e, -EINVAL, 0, "opts.layout is not the layout of this config");
        m->lay = t->lay;
        if (t->n_channels <= MDCOM_MAX_CHANNELS)
            memcpy(m->cl, t->chans, t->n_channels * sizeof(m->cl[0]));
        return 0;
    }
#if MDCOM_RUNTIME_LAYOUT
    return mdcom_layout_compute(cfg, &m->lay,
                                cfg && cfg->n_channels <= MDCOM_MAX_CHANNELS ? m->cl : 0, e);
#else
    return mdcom_err_set(e, -EINVAL, 0,
                         "this core takes only layouts computed ahead of time "
                         "(MDCOM_RUNTIME_LAYOUT=OFF): opts.layout must be the config's "
                         "<prefix>_layout");
#endif
}

/*
 * Attach state machine. Every process of the master domain may format the
 * region, but only one does: the one whose CAS puts its claim in fmt_pid
 * (from the value it judged: nobody, a formatter that is done, or one that
 * died), then moves the state to FORMATTING. The others (and remotes) wait
 * for READY and join. A READY region whose master domain has no live
 * process, or an unknown state, is stale and re-formatted by the next
 * master-domain process (generation + 1).
 */
/* How many times attach opens the name again (the file it mapped was
 * unlinked or replaced) before such a round counts against the timeout. */
#define MDCOM_REOPEN_FREE 8u

static int attach(struct mdcom_instance *m, uint32_t pid, uint32_t token, uint64_t deadline,
                  mdcom_err *e)
{
    int stale = 0; /* last verify error of a READY region without a live master */
    int fmt, locked;
    uint32_t rounds = 0, reopened = 0;
    /* who we are: to know our own entries (named_live), and what
     * claim_proc writes in ours */
    m->pid = pid;
    m->token = token;
    for (;;) {
        /* acquire: a formatter's fmt_pid without the claim (release) orders
         * its token and its state CAS before it; read before the state */
        uint32_t fp = mdcom_load(&m->hdr->fmt_pid, memory_order_acquire);
        /* acquire: a READY state orders everything its formatter wrote before it */
        uint32_t st = mdcom_load(&m->hdr->state, memory_order_acquire);
        uint64_t now;
        int r;
        /* a state that keeps changing under us must not extend the timeout */
        if (rounds++ > 0 && mdcom_now(m) >= deadline)
            return attach_timeout(m, st, stale, e);
        stale = 0;
        if (st == MDCOM_ST_READY) {
            mdcom_err scratch = {0, 0, 0};
            uint32_t proc_off = mdcom_read_once(m->hdr->proc_off);
            r = verify(m, m->is_master ? &scratch : e);
            if (r == 0 && (!m->is_master || live_proc_of_domain(m, m->lay.proc_off, m->domain))) {
                r = join_region(m, pid, token, e);
                if (r <= 0)
                    return r;
                continue;
            }
            if (!m->is_master) {
                /* a region of a live master with another layout: refuse now;
                 * a stale one (its master gone): wait for a new master */
                if (live_proc_of_domain(m, proc_off, m->lay.master_domain))
                    return r;
                stale = r;
            } else if (r != 0 && live_proc_of_domain(m, proc_off, m->lay.master_domain)) {
                /* a live system with another layout: never clobber it */
                r = verify(m, e);
                mdcom_err_str(e, " (a live master serves the region)");
                return r ? r : -EADDRINUSE;
            }
        }
        /* not joined: if the file is not the region's any more, the next
         * master formats (or has formatted) the one at the name. A master
         * about to format holds the format lock from this look at the name
         * to the end of its format: a term that is removing the file has
         * removed it before (we open the name again) or finds it ours after
         * (and leaves it). A lock we cannot get in time: we wait a round. */
        fmt = m->is_master && !fmt_busy(m, fp, st);
        /* the lock is held for a format or an unlink: worth waiting for
         * whatever our own timeout (a master's is often 0) */
        locked = fmt ? fmt_lock(m, mdcom_now(m) + MDCOM_FMT_LOCK_NS) : 0;
        if (locked < 0)
            fmt = 0;
        r = follow_region(m, deadline, e); /* (not 0: the lock went with the old file) */
        if (r < 0)
            return r;
        if (r > 0) {
            /* opened again without waiting: not a round against the
             * timeout (a master's 0 would end here), a few times at most */
            if (reopened++ < MDCOM_REOPEN_FREE)
                rounds = 0;
            continue;
        }
        if (fmt) {
            FORMATTING(); /* first: a sibling thread takes our claim for live */
            r = mdcom_format_claim(m, fp, st, e);
            if (r == 0)
                r = join_formatted(m, e);
            FORMATTED();
            if (locked > 0)
                fmt_unlock(m);
            if (r <= 0)
                return r;
            continue;
        }
        now = mdcom_now(m);
        if (now >= deadline)
            return attach_timeout(m, st, stale, e);
        {
            uint64_t rem = deadline - now;
            int64_t slice = rem > 1000000ull ? 1000000 : (int64_t)rem; /* 1 ms */
            m->plat->doorbell.wait(m->plat->doorbell.ctx, &m->hdr->state, st, slice);
        }
    }
}

int mdcom_init(mdcom_t **out, const mdcom_config *cfg, uint32_t domain_id,
               const mdcom_init_opts *opts)
{
    mdcom_init_opts no_opts; /* all zero: the defaults */
    const mdcom_platform *plat;
    struct mdcom_instance *m;
    mdcom_err e;
    uint32_t pid = 0, token = 0;
    uint64_t deadline;
    int role, r;

    if (!opts) {
        memset(&no_opts, 0, sizeof(no_opts));
        opts = &no_opts;
    }
    e.buf = opts->errbuf;
    e.cap = opts->errbuf_len;
    e.pos = 0;
    if (e.buf && e.cap)
        e.buf[0] = '\0';
    if (!out)
        return mdcom_err_set(&e, -EINVAL, 0, "out is NULL");
    *out = 0;
    plat = opts->platform ? opts->platform : mdcom_platform_default();
    if (!plat || !plat->region_open || !plat->region_close || !plat->now_ns ||
        !plat->doorbell.wait || !plat->doorbell.ring)
        return mdcom_err_set(&e, -EINVAL, 0, "platform lacks a required hook");
    m = mdcom_pool_get(plat);
    if (!m)
        return mdcom_err_set(&e, -ENOSPC, 0, "MDCOM_MAX_INSTANCES attachments in use");
    memset(m, 0, sizeof(*m));
#if defined(MDCOM_THREADS) && MDCOM_THREADS
    /* after the memset: a zeroed mutex would be a plain one */
    if (mtx_init(&m->rec0_lock, mtx_plain | mtx_recursive) != thrd_success) {
        mdcom_pool_put_bare(m);
        return mdcom_err_set(&e, -ENOMEM, 0, "cannot make a mutex");
    }
#endif

    r = layout_of(m, cfg, opts->layout, &e);
    if (r)
        goto fail_pool;
    if (cfg->n_channels > MDCOM_MAX_CHANNELS) {
        r = mdcom_err_set(&e, -ENOSPC, cfg->region_name, "more channels than MDCOM_MAX_CHANNELS");
        goto fail_pool;
    }
    role = mdcom_domain_role(cfg, domain_id);
    if (!role) {
        r = mdcom_err_set(&e, -EINVAL, cfg->region_name, "domain id not in the config");
        goto fail_pool;
    }
    m->cfg = cfg;
    m->plat = plat;
    m->domain = domain_id;
    m->is_master = role == MDCOM_ROLE_MASTER;
    m->keep_region = opts->keep_region;
    if (opts->heartbeat_ms && (opts->heartbeat_ms < MDCOM_HEARTBEAT_MIN_MS ||
                               opts->heartbeat_ms > MDCOM_HEARTBEAT_MAX_MS)) {
        r = mdcom_err_set(&e, -EINVAL, cfg->region_name,
                          "heartbeat_ms outside MDCOM_HEARTBEAT_MIN_MS..MAX_MS");
        goto fail_pool;
    }
    m->hb_ms = opts->heartbeat_ms;
    m->spin_ns = opts->spin_ns ? opts->spin_ns : MDCOM_SPIN_DEFAULT_NS;
    if (plat->proc_self && (r = plat->proc_self(plat->ctx, &pid, &token)) != 0) {
        mdcom_err_set(&e, r, cfg->region_name, "platform cannot identify this process");
        goto fail_pool;
    }
    mdcom_pool_own(m, plat->proc_self ? pid : 0u, token);
    deadline = mdcom_deadline(m, opts->attach_timeout_ns);

    r = open_region(m, opts->attach_timeout_ns, &e);
    if (r)
        goto fail_pool;
    r = attach(m, pid, token, deadline, &e);
    if (r)
        goto fail_map;
    m->tag = MDCOM_TAG_INST;
    *out = m;
    return 0;

fail_map:
    if (m->map.base) /* attach may have given it up (follow_region) */
        plat->region_close(plat->ctx, &m->map, 0);
fail_pool:
    mdcom_pool_put(m);
    return r;
}

#if defined(__linux__) /* its only setter: src/linux/events.c (the Linux port) */
void (*_Atomic mdcom_term_hook)(struct mdcom_instance *m);
#endif

/* Our entry, blocks and locks are still ours: the region is as we attached
 * it, or (a state or generation that changed without a re-format, e.g.
 * forged) our entry still has our identity. (Out of line: GCC copied it
 * into both branches of term's "ours" test.) */
static __attribute__((noinline)) int entry_live(struct mdcom_instance *m)
{
    return mdcom_region_check(m) == 0 ||
           (mdcom_self(m) > 0 && mdcom_read_once(m->me->pid) == m->pid &&
            mdcom_read_once(m->me->token) == m->token) ||
           mdcom_self_reclaim(m) > 0; /* a claim on it nobody finishes */
}

int mdcom_term(mdcom_t *m)
{
    uint32_t i, st, gen;
    int live, ours, remove;
    if (!mdcom_valid_inst(m))
        return -EINVAL;
#if defined(__linux__)
    {
        /* acquire: the hook's setter initialised what the hook uses */
        void (*hook)(struct mdcom_instance *) = mdcom_load(&mdcom_term_hook, memory_order_acquire);
        if (hook)
            hook(m);
    }
#endif
    /* acquire: as in mdcom_region_check */
    st = mdcom_load(&m->hdr->state, memory_order_acquire);
    gen = mdcom_load(&m->hdr->generation, memory_order_relaxed);
    /* the region we formatted, still in the generation we formatted: ours to
     * end, even when the others took us for dead (-ENOTCONN) - otherwise
     * its remotes would stay on a deleted file while we format a new one */
    ours = m->owns_region && st == MDCOM_ST_READY && gen == m->generation;
    /* our entry still ours (entry_live): left live, it would be counted as
     * a live process of ours for ever */
    live = entry_live(m);
    if (ours) /* release: all before is visible to whoever sees TERMINATED */
        mdcom_store(&m->hdr->state, MDCOM_ST_TERMINATED, memory_order_release);
    if (live) {
        mdcom_fifo_release_owner(m, m->owner, 0);
        mdcom_smem_release_owner(m, m->lock_owner);
    }
    if (ours) {
        for (i = 0; i < m->cfg->n_channels; i++) {
            union mdcom_chan *c = &m->ch[i];
            mdcom_aword *w;
            if (c->tag == MDCOM_TAG_FIFO) {
                w = &c->f.ctl->event.word;
                mdcom_fetch_add(w, 1, memory_order_relaxed);
            } else {
                w = &c->s.ctl->lock.word;
            }
            m->plat->doorbell.ring(m->plat->doorbell.ctx, w, i);
        }
        m->plat->doorbell.ring(m->plat->doorbell.ctx, &m->hdr->state, UINT32_MAX);
    }
    /* release: our last uses of the region happen before the slot is free */
    if (live)
        mdcom_store(&m->procs[m->proc_slot].owner, MDCOM_PROC_FREE, memory_order_release);
    /* remove the file only if it is still ours: a region another process of
     * the master domain re-formatted (generation + 1) is theirs now. Looked
     * at again under the format lock, which a master holds while it
     * formats: a sibling that re-initialised on our TERMINATED has either
     * formatted by now (we leave the file) or will find it removed. Without
     * the lock in time (a stuck holder), the file stays: the next master
     * re-formats it in place. Our unlink and close drop the lock. */
    remove = ours && !m->keep_region;
    if (remove) {
        int lk = fmt_lock(m, mdcom_now(m) + MDCOM_FMT_LOCK_NS);
        /* acquire: a new formatter's claim (state CAS) and generation */
        remove = lk >= 0 &&
                 mdcom_load(&m->hdr->state, memory_order_acquire) == MDCOM_ST_TERMINATED &&
                 mdcom_load(&m->hdr->generation, memory_order_relaxed) == m->generation;
        if (lk > 0 && !remove)
            fmt_unlock(m);
    }
    m->plat->region_close(m->plat->ctx, &m->map, remove);
    mdcom_pool_put(m);
    return 0;
}
