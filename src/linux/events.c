/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.c - pollable fds and wait sets (include/mdcom/events.h), Linux port.
 * Part of the library beside the core (not under ports/): it works on the
 * core's private attachment and channel state (src/core/internal.h).
 *
 * A member of a wait set holds one waiter count on its channel's shared
 * waiter word from add to remove, so every notify / unlock on the channel
 * changes the channel's word; a FIFO notify rings the doorbell (futex wake)
 * when a sleeper armed the word since the last ring, an unlock whenever the
 * count is not 0. Sleepers follow the core's protocol (src/core/wait.c): the
 * count is announced and fenced at add; then snap = word (acquire), a FIFO
 * word armed ; fence ; evaluate ; sleep while every word equals its snap.
 * futex_waitv(2) sleeps on all words of a set at once, plus a
 * process-private control word that add/remove/destroy change.
 *
 * mdcom_waitset_wait sleeps in the caller's thread. An fd is an eventfd,
 * armed through io_uring's FUTEX_WAITV where the kernel has it (see "io_uring
 * arming of fds" below: one wake-up per message); otherwise (and for the
 * slow re-evaluation and reaping of io_uring-armed sets) one helper thread
 * per attachment (started at the first fd) keeps it readable
 * while its set's events hold: the helper sleeps on the union of the words of
 * every set with an fd, and evaluates those sets when woken. A thread, not a
 * kernel object, because the waker is any domain (firmware writes the word
 * and rings a doorbell; nothing there can write our eventfd), and one per
 * attachment, not per channel, because futex_waitv takes 128 words.
 *
 * With a doorbell other than the futex one (the QEMU UART doorbell), sleeps
 * go through the port's doorbell.wait on the control word: that returns on
 * any doorbell event (a byte from the firmware) and re-checks the word every
 * few ms, after which everything is evaluated.
 *
 * Locks: g_mu (attachment table, fd list) -> att->mu -> ws->mu.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../core/internal.h"
#include "mdcom/events.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

#define EV_TAG_WS 0x6d645753u
#define EV_SLICE_NS 50000000ll /* default: re-evaluate and reap every 50 ms without news */
#define EV_WORDS_MAX 128u      /* FUTEX_WAITV_MAX */

struct member {
    uint32_t used;
    uint32_t type; /* MDCOM_CHAN_FIFO / MDCOM_CHAN_SMEM */
    uint32_t events;
    void *ch;
    void *user;
    mdcom_aword *word;    /* event word (FIFO) / lock word (SMEM) */
    mdcom_aword *waiters; /* the waiter count we hold one of      */
    uint32_t ev_snap;     /* event word at the last NOTIFY report  */
};

struct evatt;
struct evring;

struct mdcom_waitset {
    uint32_t tag;
    struct mdcom_instance *m; /* NULL once the attachment ended (term) */
    struct evatt *att;
    pthread_mutex_t mu;
    struct member mem[MDCOM_MAX_CHANNELS]; /* by channel index */
    uint32_t n;
    uint32_t rr;              /* where the next report starts */
    _Atomic uint32_t ctl;     /* private futex word: changes on add/remove/destroy */
    int efd;                  /* -1 until mdcom_waitset_fd */
    int pending;              /* efd's counter is non-zero (under mu) */
    int single;               /* behind mdcom_fifoch_fd / mdcom_smemch_fd */
    struct evring *ur;        /* io_uring arming the fd, or NULL (helper thread) */
    int ur_off;               /* ur no longer used: the helper took the set over */
    int ur_stale;             /* members changed since the armed request */
    _Atomic uint32_t spin_ns; /* spin before sleeping in wait (NO_SPIN: none) */
    struct mdcom_waitset *next_all, *next_fd, *next_g;
};

struct evatt {
    struct mdcom_instance *m;
    pthread_mutex_t mu;
    struct mdcom_waitset *all; /* every set of this attachment */
    struct mdcom_waitset *fds; /* sets with an fd (the helper's) */
    pthread_t th;
    int running;
    int stop;
    _Atomic uint32_t ctl;          /* private futex word of the helper */
    _Atomic uint64_t wakes, evals; /* statistics */
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct evatt g_att[MDCOM_MAX_INSTANCES];
static struct mdcom_waitset *g_fds; /* every set with an fd, for fd lookups */

static void ev_term(struct mdcom_instance *m);

/* The no-news re-evaluation period: EV_SLICE_NS, or MDCOM_EV_SLICE_MS from
 * the environment (tests lengthen it to show that wake-ups come from
 * notifies, not from the period). Read once. */
static int64_t slice_ns(void)
{
    static _Atomic int64_t v;
    int64_t s = mdcom_load(&v, memory_order_relaxed);
    if (!s) {
        const char *e = getenv("MDCOM_EV_SLICE_MS");
        long ms = e ? strtol(e, NULL, 10) : 0;
        s = ms > 0 && ms <= 3600000 ? (int64_t)ms * 1000000ll : EV_SLICE_NS;
        mdcom_store(&v, s, memory_order_relaxed); /* relaxed: same value every time */
    }
    return s;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int uses_futex(const struct mdcom_instance *m)
{
    return m->plat->doorbell.wait == mdcom_platform_linux()->doorbell.wait;
}

static void wake_private(_Atomic uint32_t *w)
{
    mdcom_fetch_add(w, 1, memory_order_release);
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* w: a futex_waitv entry for a process-private control word, with its
 * current value (acquire: what changed it before is seen after the wait) */
static void ctl_waitv(struct futex_waitv *w, _Atomic uint32_t *ctl)
{
    w->uaddr = (uint64_t)(uintptr_t)ctl;
    w->val = mdcom_load(ctl, memory_order_acquire);
    w->flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
    w->__reserved = 0;
}


/* Attachment record of m (created when create != 0). Under g_mu. */
static struct evatt *att_of(struct mdcom_instance *m, int create)
{
    uint32_t i;
    struct evatt *free_a = NULL;
    for (i = 0; i < MDCOM_MAX_INSTANCES; i++) {
        if (g_att[i].m == m)
            return &g_att[i];
        if (!g_att[i].m && !free_a)
            free_a = &g_att[i];
    }
    if (!create || !free_a)
        return NULL;
    memset(free_a, 0, sizeof(*free_a));
    pthread_mutex_init(&free_a->mu, NULL);
    free_a->m = m;
    /* release: ev_term is complete code before mdcom_term can call it */
    mdcom_store(&mdcom_term_hook, ev_term, memory_order_release);
    return free_a;
}

/* ---- evaluation (under ws->mu) ------------------------------------- */

static uint32_t member_eval(struct member *e, int consume)
{
    if (e->type == MDCOM_CHAN_FIFO) {
        uint32_t got = mdcom_fifo_events((struct mdcom_fifoch *)e->ch, e->events, e->ev_snap);
        if ((got & MDCOM_EV_NOTIFY) && consume) /* acquire: as in fifo_cond */
            e->ev_snap = mdcom_load(e->word, memory_order_acquire);
        return got;
    }
    /* acquire: the previous holder's writes are visible once we see it free */
    return mdcom_load(e->word, memory_order_acquire) == 0 ? MDCOM_EV_UNLOCKED : 0;
}

static void fd_signal(struct mdcom_waitset *ws)
{
    uint64_t one = 1;
    if (ws->efd >= 0 && !ws->pending && write(ws->efd, &one, sizeof one) == sizeof one)
        ws->pending = 1;
}

static void fd_unsignal(struct mdcom_waitset *ws)
{
    uint64_t v;
    if (ws->efd >= 0 && ws->pending) {
        if (read(ws->efd, &v, sizeof v) < 0 && errno != EAGAIN)
            return;
        ws->pending = 0;
    }
}

/* ---- io_uring arming of fds ------------------------------------------ */
/*
 * Where the kernel has io_uring with IORING_OP_FUTEX_WAITV (Linux >= 6.7) and
 * the doorbell is the futex one, a set's fd is armed by one FUTEX_WAITV
 * request over its members' words, on a ring with the set's eventfd
 * registered. A futex wake by any notifier completes the request inside the
 * kernel, and the ring (DEFER_TASKRUN: the completion is queued as task work
 * for the arming thread, and the eventfd is signalled when it is queued)
 * makes the eventfd readable: one wake-up, of the epoll waiter, per message.
 * The request is re-armed by the evaluations of the thread that created the
 * fd (mdcom_fd_clear, mdcom_waitset_wait): drain the eventfd, reap, take
 * fresh snapshots, evaluate, submit. A DEFER_TASKRUN ring accepts calls from
 * that thread only, so an evaluation in another thread hands the set over to
 * the helper thread for good. The helper still re-evaluates every armed set
 * each slice (signalling only: it cannot re-arm) and reaps dead peers.
 */
#define EV_OP_FUTEX_WAITV 53 /* IORING_OP_FUTEX_WAITV, not in older uapi headers */
#define EV_UD_CANCEL UINT64_MAX

struct evring {
    int fd;
    pid_t owner;
    void *ring;
    size_t ring_sz;
    struct io_uring_sqe *sqes;
    size_t sqes_sz;
    _Atomic uint32_t *sq_head, *sq_tail, *cq_head, *cq_tail;
    uint32_t sq_mask, cq_mask, *sq_array;
    struct io_uring_cqe *cqes;
    uint64_t gen;      /* user_data of the armed request */
    int armed;         /* a request with user_data gen is in flight */
    int bad;           /* the kernel refused the futex op */
    uint32_t inflight; /* requests without a reaped completion */
    uint32_t queued;   /* pushed, not yet submitted */
    struct futex_waitv w[EV_WORDS_MAX];
};

static _Thread_local pid_t t_tid;

static void tid_forget(void) { t_tid = 0; /* the child of fork: the forking thread has a new id */ }

static void tid_once(void) { (void)pthread_atfork(NULL, NULL, tid_forget); }

static pid_t my_tid(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!t_tid) {
        (void)pthread_once(&once, tid_once);
        t_tid = (pid_t)syscall(SYS_gettid);
    }
    return t_tid;
}

static int ur_wanted(void)
{
    const char *e = getenv("MDCOM_EVENTS_NO_URING");
    return !(e && *e && strcmp(e, "0") != 0);
}

static void ur_free(struct evring *u)
{
    if (u->sqes)
        munmap(u->sqes, u->sqes_sz);
    if (u->ring)
        munmap(u->ring, u->ring_sz);
    if (u->fd >= 0)
        close(u->fd);
    free(u);
}

/* Rings whose fd was closed, idle, kept for their owner thread's next fd:
 * closing a ring makes the kernel's exit work queue task work on every
 * thread that used it with a signal-like notification, which fails that
 * thread's next epoll_wait with EINTR. */
#define EV_RING_POOL 16
static pthread_mutex_t g_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct evring *g_pool[EV_RING_POOL];

/* a part of ring fd mapped (off: IORING_OFF_SQ_RING / IORING_OFF_SQES), or NULL */
static void *ur_map(int fd, size_t len, off_t off)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, off);
    return p == MAP_FAILED ? NULL : p;
}

/* A ring for eventfd efd, owned by the calling thread; NULL where io_uring,
 * its futex op or DEFER_TASKRUN is unavailable (the helper is used then). */
static struct evring *ur_open(int efd)
{
    struct io_uring_params p;
    struct evring *u = NULL;
    struct io_uring_probe *pr;
    const size_t prn = 256;
    int ok, i;
    pid_t me = my_tid();
    char *b;
    if (!ur_wanted())
        return NULL;
    pthread_mutex_lock(&g_pool_mu);
    for (i = 0; i < EV_RING_POOL && !u; i++)
        if (g_pool[i] && g_pool[i]->owner == me) {
            u = g_pool[i];
            g_pool[i] = NULL;
        }
    pthread_mutex_unlock(&g_pool_mu);
    if (u) {
        if (syscall(SYS_io_uring_register, u->fd, IORING_REGISTER_EVENTFD, &efd, 1) == 0)
            return u;
        ur_free(u);
    }
    u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    u->fd = (int)syscall(SYS_io_uring_setup, 8u, &p);
    if (u->fd < 0 || !(p.features & IORING_FEAT_SINGLE_MMAP)) {
        ur_free(u);
        return NULL;
    }
    pr = calloc(1, sizeof(*pr) + prn * sizeof(pr->ops[0]));
    ok = pr && syscall(SYS_io_uring_register, u->fd, IORING_REGISTER_PROBE, pr, prn) == 0 &&
         pr->last_op >= EV_OP_FUTEX_WAITV &&
         (pr->ops[EV_OP_FUTEX_WAITV].flags & IO_URING_OP_SUPPORTED);
    free(pr);
    if (!ok || syscall(SYS_io_uring_register, u->fd, IORING_REGISTER_EVENTFD, &efd, 1) != 0) {
        ur_free(u);
        return NULL;
    }
    u->ring_sz = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
    if (p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe) > u->ring_sz)
        u->ring_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    u->sqes_sz = p.sq_entries * sizeof(struct io_uring_sqe);
    u->ring = ur_map(u->fd, u->ring_sz, IORING_OFF_SQ_RING);
    u->sqes = u->ring ? ur_map(u->fd, u->sqes_sz, IORING_OFF_SQES) : NULL;
    if (!u->sqes) {
        ur_free(u);
        return NULL;
    }
    b = u->ring;
    u->sq_head = (_Atomic uint32_t *)(void *)(b + p.sq_off.head);
    u->sq_tail = (_Atomic uint32_t *)(void *)(b + p.sq_off.tail);
    u->sq_mask = *(uint32_t *)(void *)(b + p.sq_off.ring_mask);
    u->sq_array = (uint32_t *)(void *)(b + p.sq_off.array);
    u->cq_head = (_Atomic uint32_t *)(void *)(b + p.cq_off.head);
    u->cq_tail = (_Atomic uint32_t *)(void *)(b + p.cq_off.tail);
    u->cq_mask = *(uint32_t *)(void *)(b + p.cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(void *)(b + p.cq_off.cqes);
    u->owner = my_tid();
    return u;
}

/* Queue one SQE (the caller fills it); submitted by ur_enter. */
static struct io_uring_sqe *ur_sqe(struct evring *u)
{
    /* relaxed: only this thread writes the tail; acquire on the head: the
     * kernel has read the entries before it advanced it */
    uint32_t t = mdcom_load(u->sq_tail, memory_order_relaxed);
    uint32_t h = mdcom_load(u->sq_head, memory_order_acquire);
    struct io_uring_sqe *q;
    if (t - h > u->sq_mask)
        return NULL;
    q = &u->sqes[t & u->sq_mask];
    memset(q, 0, sizeof(*q));
    u->sq_array[t & u->sq_mask] = t & u->sq_mask;
    return q;
}

static void ur_push(struct evring *u)
{
    uint32_t t = mdcom_load(u->sq_tail, memory_order_relaxed);
    /* release: the entry is written before the kernel sees the tail */
    mdcom_store(u->sq_tail, t + 1, memory_order_release);
    u->inflight++;
    u->queued++;
}

/* Submit what was pushed and run the ring's task work (completions of this
 * thread's requests), waiting for min completions; then consume the CQ.
 * 0 or a negative errno. */
static int ur_enter(struct evring *u, uint32_t min)
{
    uint32_t h, t;
    long r;
    do
        r = syscall(SYS_io_uring_enter, u->fd, u->queued, min, IORING_ENTER_GETEVENTS, NULL, 0);
    while (r < 0 && errno == EINTR && !min);
    if (r < 0 && errno != EINTR && errno != EBUSY && errno != EAGAIN)
        return -errno;
    if (r > 0)
        u->queued -= (uint32_t)r < u->queued ? (uint32_t)r : u->queued;
    h = mdcom_load(u->cq_head, memory_order_relaxed);
    /* acquire: the CQEs are written before the kernel advanced the tail */
    t = mdcom_load(u->cq_tail, memory_order_acquire);
    for (; h != t; h++) {
        const struct io_uring_cqe *c = &u->cqes[h & u->cq_mask];
        if (u->inflight)
            u->inflight--;
        if (c->user_data == EV_UD_CANCEL)
            continue;
        if (u->armed && c->user_data == u->gen) {
            u->armed = 0;
            if (c->res == -EINVAL || c->res == -EOPNOTSUPP || c->res == -ENOSYS ||
                c->res == -EFAULT)
                u->bad = 1;
        }
    }
    /* release: we are done reading the entries we hand back */
    mdcom_store(u->cq_head, h, memory_order_release);
    return 0;
}

/* Cancel request ud (EV_UD_CANCEL: every request) without waiting. */
static int ur_cancel(struct evring *u, uint64_t ud)
{
    struct io_uring_sqe *q = ur_sqe(u);
    if (!q)
        return -EBUSY;
    q->opcode = IORING_OP_ASYNC_CANCEL;
    q->fd = -1;
    if (ud == EV_UD_CANCEL)
        q->cancel_flags = IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY;
    else
        q->addr = ud;
    q->user_data = EV_UD_CANCEL;
    ur_push(u);
    return 0;
}

/* Close the ring. In the owner thread, cancel and reap what is in flight
 * first, so that no completion is left to run as task work later. */
static void ur_close(struct evring *u)
{
    int k;
    if (my_tid() == u->owner) {
        if (u->inflight && ur_cancel(u, EV_UD_CANCEL) == 0)
            for (k = 0; k < 100 && u->inflight; k++)
                if (ur_enter(u, 1) < 0)
                    break;
        if (!u->inflight && !u->queued && !u->bad &&
            syscall(SYS_io_uring_register, u->fd, IORING_UNREGISTER_EVENTFD, NULL, 0) == 0) {
            u->armed = 0;
            pthread_mutex_lock(&g_pool_mu);
            for (k = 0; k < EV_RING_POOL; k++)
                if (!g_pool[k]) {
                    g_pool[k] = u;
                    u = NULL;
                    break;
                }
            pthread_mutex_unlock(&g_pool_mu);
            if (!u)
                return;
        }
    }
    ur_free(u);
}

static int ur_active(const struct mdcom_waitset *ws) { return ws->ur && !ws->ur_off; }

static void fd_drain(struct mdcom_waitset *ws)
{
    uint64_t v;
    (void)!read(ws->efd, &v, sizeof v); /* EAGAIN: already zero */
    ws->pending = 0;
}

static uint32_t ws_words(struct mdcom_waitset *ws, struct futex_waitv *w, uint32_t nw,
                         uint64_t *seen);
static int ws_count(struct mdcom_waitset *ws);

/* The helper thread takes the set over (under ws->mu). */
static void ur_disable(struct mdcom_waitset *ws)
{
    ws->ur_off = 1;
    if (ws->att)
        wake_private(&ws->att->ctl);
}

/* Nothing holds: make the fd unreadable and arm it (under ws->mu, owner
 * thread). Reap first (posting a completion signals the eventfd), then
 * drain; the order drain -> reap (-> snapshots -> evaluate -> submit) loses
 * no wake-up: a completion after the drain leaves the fd readable. Three
 * syscalls when the request had completed, two when it is still armed. */
static void ur_rearm(struct mdcom_waitset *ws)
{
    struct evring *u = ws->ur;
    uint64_t seen[(MDCOM_MAX_CHANNELS + 63) / 64];
    struct io_uring_sqe *q;
    uint32_t n;
    if (ur_enter(u, 0) < 0)
        goto off;
    if (u->armed && !ws->ur_stale) {
        fd_drain(ws);
        if (ur_enter(u, 0) < 0)
            goto off;
        if (u->armed)
            return; /* still armed on current snapshots, fd not readable */
    }
    if (u->bad)
        goto off;
    if (u->armed) { /* members changed: drop the old request */
        if (ur_cancel(u, u->gen) < 0)
            goto off;
        u->armed = 0;
    }
    ws->ur_stale = 0;
    fd_drain(ws);
    memset(seen, 0, sizeof seen);
    n = ws_words(ws, u->w, 0, seen);
    /* fence: the snapshots precede the evaluation (as in the helper) */
    mdcom_fence(memory_order_seq_cst);
    if (ws_count(ws) != 0) {
        fd_signal(ws);
        if (ur_enter(u, 0) < 0) /* submit a pending cancel */
            goto off;
        return;
    }
    if (n == 0) /* no members: nothing can become readable but an add */
        return (void)ur_enter(u, 0);
    q = ur_sqe(u);
    if (!q)
        goto off;
    q->opcode = EV_OP_FUTEX_WAITV;
    q->addr = (uint64_t)(uintptr_t)u->w;
    q->len = n;
    q->user_data = ++u->gen;
    ur_push(u);
    u->armed = 1;
    if (ur_enter(u, 0) < 0 || u->bad)
        goto off;
    if (!u->armed) /* completed at submission (a word changed): re-evaluate */
        fd_signal(ws);
    return;
off:
    ur_disable(ws);
    fd_signal(ws); /* re-evaluated by the helper or the next caller */
}

/* Set the fd's readiness after an evaluation that found cnt members with
 * events (under ws->mu). helper: the helper thread's evaluation, which never
 * makes the fd unreadable on an armed set (it cannot re-arm it). */
static void fd_update(struct mdcom_waitset *ws, int cnt, int helper)
{
    if (ws->efd < 0)
        return;
    if (cnt) {
        fd_signal(ws);
        return;
    }
    if (!ur_active(ws)) {
        fd_unsignal(ws);
        /* Another thread's evaluation (fd_clear, a wait) found nothing: the
         * helper's snapshots may predate it, and a word that changed and
         * changed back since (a lock word free -> held -> free) passes its
         * futex compare, so it would sleep through the change that makes
         * the fd readable again. It takes its snapshots again. */
        if (!helper && ws->att)
            wake_private(&ws->att->ctl);
        return;
    }
    if (helper)
        return;
    if (my_tid() != ws->ur->owner) {
        ur_disable(ws);
        fd_drain(ws);
        return;
    }
    ur_rearm(ws);
}

/* Evaluate every member; report up to n (out may be NULL: no report, no
 * consumption) and set the fd's readiness. Returns the number of members
 * with events (all of them, not only the reported), or a region error. */
static int ws_eval(struct mdcom_waitset *ws, mdcom_event *out, uint32_t n, uint32_t *mask,
                   int helper)
{
    uint32_t k, i, got, cnt = 0, rep = 0, next_rr = ws->rr;
    int r;
    if (mask)
        *mask = 0;
    if (!ws->m) {
        fd_signal(ws);
        return -MDCOM_ESHUTDOWN;
    }
    r = mdcom_region_state(ws->m);
    /* with a heartbeat promise, the end of our own attachment too: the
     * others reaped us (a loop asleep in poll does not beat). A check, no
     * sign of life: the helper must not keep a hung process alive. */
    if (!r && ws->m->hb_ms && mdcom_self(ws->m) < 0)
        r = -ENOTCONN;
    if (r) {
        fd_signal(ws);
        return r;
    }
    for (k = 0; k < MDCOM_MAX_CHANNELS; k++) {
        struct member *e;
        i = (ws->rr + 1 + k) % MDCOM_MAX_CHANNELS;
        e = &ws->mem[i];
        if (!e->used)
            continue;
        got = member_eval(e, out && rep < n);
        if (!got)
            continue;
        cnt++;
        if (mask)
            *mask |= got;
        if (out && rep < n) {
            out[rep].ch = e->ch;
            out[rep].type = e->type;
            out[rep].events = got;
            out[rep].user = e->user;
            rep++;
            next_rr = i;
        }
    }
    ws->rr = next_rr;
    fd_update(ws, (int)cnt, helper);
    return (int)cnt;
}

/* The caller's check before an evaluation (mdcom_fd_clear,
 * mdcom_waitset_wait; under ws->mu): the region, and with a heartbeat
 * promise this process' own entry (-ENOTCONN once the others reaped it; the
 * check is a sign of life, as every wait's). The helper thread does not make
 * it: its beats would keep a hung process alive. An error makes the fd
 * readable for good, as ws_eval does for the region (docs/events.md, "When
 * the region ends"). */
static int ws_check(struct mdcom_waitset *ws)
{
    int r = ws->m ? mdcom_region_check(ws->m) : -MDCOM_ESHUTDOWN;
    if (r)
        fd_signal(ws);
    return r;
}

/* How many members have events (no report, no fd change; under ws->mu). */
static int ws_count(struct mdcom_waitset *ws)
{
    uint32_t i, cnt = 0;
    if (!ws->m || mdcom_region_state(ws->m))
        return 1;
    for (i = 0; i < MDCOM_MAX_CHANNELS; i++)
        if (ws->mem[i].used && member_eval(&ws->mem[i], 0))
            cnt++;
    return (int)cnt;
}

/* Words to sleep on (under ws->mu); returns how many were added to w. */
static uint32_t ws_words(struct mdcom_waitset *ws, struct futex_waitv *w, uint32_t nw,
                         uint64_t *seen)
{
    uint32_t i, k = 0;
    for (i = 0; i < MDCOM_MAX_CHANNELS && nw + k < EV_WORDS_MAX; i++) {
        struct member *e = &ws->mem[i];
        if (!e->used || (seen[i / 64] >> (i % 64) & 1u))
            continue;
        seen[i / 64] |= 1ull << (i % 64);
        w[nw + k].uaddr = (uint64_t)(uintptr_t)e->word;
        /* acquire: a waker that changed the word before our snapshot also
         * published its data before it, so the evaluation after sees it */
        w[nw + k].val = mdcom_load(e->word, memory_order_acquire);
        if (e->type == MDCOM_CHAN_FIFO) /* a notify after this one rings */
            mdcom_event_arm(e->waiters);
        w[nw + k].flags = FUTEX_32; /* shared: the region is a shared mapping */
        w[nw + k].__reserved = 0;
        k++;
    }
    return k;
}

/* Sleep on the control word w[0] alone, at most t ns (the port's doorbell:
 * not a futex, or no futex_waitv). 0 woken, -ETIMEDOUT, -EINTR. */
static int sleep_control(struct mdcom_instance *m, struct futex_waitv *w, int64_t t)
{
    int wr;
    if (t <= 0)
        return -ETIMEDOUT;
    wr = m->plat->doorbell.wait(m->plat->doorbell.ctx, (mdcom_aword *)(uintptr_t)w[0].uaddr,
                                (uint32_t)w[0].val, t);
    return wr == -EINTR ? -EINTR : wr == -ETIMEDOUT ? -ETIMEDOUT : 0;
}

/* Sleep on w[0..n-1] (w[0] = a private control word) until one changes or
 * the absolute deadline (CLOCK_MONOTONIC ns). 0 woken, -ETIMEDOUT, -EINTR. */
static int sleep_words(struct mdcom_instance *m, struct futex_waitv *w, uint32_t n,
                       int64_t deadline)
{
    int64_t now = mono_ns(), end = deadline;
    struct timespec ts;
    long r;
    if (now + slice_ns() < end)
        end = now + slice_ns();
    if (!uses_futex(m))
        return sleep_control(m, w, end - now);
    ts.tv_sec = (time_t)(end / 1000000000ll);
    ts.tv_nsec = (long)(end % 1000000000ll);
    r = syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC);
    if (r >= 0 || errno == EAGAIN)
        return 0;
    if (errno == ENOSYS) /* a kernel or emulator without futex_waitv: members
                          * are re-evaluated every slice (later wake-ups, never
                          * lost ones) */
        return sleep_control(m, w, end - now);
    if (errno == ETIMEDOUT)
        return -ETIMEDOUT;
    if (errno == EINTR)
        return -EINTR;
    return -errno;
}

/* ---- helper thread --------------------------------------------------- */

static void *helper(void *arg)
{
    struct evatt *a = arg;
    struct futex_waitv w[EV_WORDS_MAX];
    for (;;) {
        uint64_t seen[(MDCOM_MAX_CHANNELS + 63) / 64];
        uint32_t n = 1;
        struct mdcom_waitset *ws;
        int r;
        memset(seen, 0, sizeof seen);
        pthread_mutex_lock(&a->mu);
        if (a->stop) {
            pthread_mutex_unlock(&a->mu);
            return NULL;
        }
        ctl_waitv(&w[0], &a->ctl);
        for (ws = a->fds; ws; ws = ws->next_fd) {
            pthread_mutex_lock(&ws->mu);
            if (!ur_active(ws)) /* an armed set wakes its fd without us */
                n += ws_words(ws, w, n, seen);
            pthread_mutex_unlock(&ws->mu);
        }
        /* fence: our snapshots precede the evaluation (the counts were
         * announced and fenced at add) */
        mdcom_fence(memory_order_seq_cst);
        for (ws = a->fds; ws; ws = ws->next_fd) {
            pthread_mutex_lock(&ws->mu);
            (void)ws_eval(ws, NULL, 0, NULL, 1);
            pthread_mutex_unlock(&ws->mu);
        }
        mdcom_fetch_add(&a->evals, 1, memory_order_relaxed);
        pthread_mutex_unlock(&a->mu);
        r = sleep_words(a->m, w, n, INT64_MAX);
        mdcom_fetch_add(&a->wakes, 1, memory_order_relaxed);
        if (r == -ETIMEDOUT)
            (void)mdcom_reap(a->m); /* a quiet slice: is a peer dead holding something? */
    }
}

/* ---- wait sets ------------------------------------------------------- */

static int valid_ws(const struct mdcom_waitset *ws) { return ws && ws->tag == EV_TAG_WS; }

int mdcom_waitset_create(mdcom_t *m, mdcom_waitset_t **out)
{
    struct mdcom_waitset *ws;
    struct evatt *a;
    if (!out || !mdcom_valid_inst(m))
        return -EINVAL;
    *out = NULL;
    ws = calloc(1, sizeof(*ws));
    if (!ws)
        return -ENOMEM;
    pthread_mutex_init(&ws->mu, NULL);
    ws->m = m;
    atomic_init(&ws->spin_ns, m->spin_ns ? m->spin_ns : MDCOM_SPIN_DEFAULT_NS);
    ws->efd = -1;
    ws->tag = EV_TAG_WS;
    pthread_mutex_lock(&g_mu);
    a = att_of(m, 1);
    if (!a) {
        pthread_mutex_unlock(&g_mu);
        free(ws);
        return -ENOMEM;
    }
    pthread_mutex_lock(&a->mu);
    ws->att = a;
    ws->next_all = a->all;
    a->all = ws;
    pthread_mutex_unlock(&a->mu);
    pthread_mutex_unlock(&g_mu);
    *out = ws;
    return 0;
}

/* Something about the set changed: wake its sleepers and the helper. */
static void ws_changed(struct mdcom_waitset *ws)
{
    wake_private(&ws->ctl);
    if (ur_active(ws)) { /* the armed request has the old words: make the
                          * owner re-evaluate and re-arm */
        ws->ur_stale = 1;
        fd_signal(ws);
    }
    if (ws->efd >= 0 && ws->att)
        wake_private(&ws->att->ctl);
}

static int ws_add(struct mdcom_waitset *ws, uint32_t type, void *ch, uint32_t events, void *user)
{
    struct mdcom_instance *m;
    struct member *e;
    uint32_t idx;
    int r;
    if (!valid_ws(ws))
        return -EINVAL;
    pthread_mutex_lock(&ws->mu);
    m = ws->m;
    if (!m) {
        pthread_mutex_unlock(&ws->mu);
        return -MDCOM_ESHUTDOWN;
    }
    if (type == MDCOM_CHAN_FIFO) {
        struct mdcom_fifoch *f = ch;
        if (f->tag != MDCOM_TAG_FIFO || f->m != m || f->index >= MDCOM_MAX_CHANNELS) {
            pthread_mutex_unlock(&ws->mu);
            return -EINVAL;
        }
        idx = f->index;
    } else {
        struct mdcom_smemch *s = ch;
        if (s->tag != MDCOM_TAG_SMEM || s->m != m || s->index >= MDCOM_MAX_CHANNELS) {
            pthread_mutex_unlock(&ws->mu);
            return -EINVAL;
        }
        idx = s->index;
    }
    r = mdcom_region_state(m);
    if (r) {
        pthread_mutex_unlock(&ws->mu);
        return r;
    }
    e = &ws->mem[idx];
    if (e->used) {
        pthread_mutex_unlock(&ws->mu);
        return -EEXIST;
    }
    e->type = type;
    e->ch = ch;
    e->events = events;
    e->user = user;
    if (type == MDCOM_CHAN_FIFO) {
        e->word = &((struct mdcom_fifoch *)ch)->ctl->event.word;
        e->waiters = &((struct mdcom_fifoch *)ch)->ctl->event.waiters;
    } else {
        e->word = &((struct mdcom_smemch *)ch)->ctl->lock.word;
        e->waiters = &((struct mdcom_smemch *)ch)->ctl->lock.waiters;
    }
    /* relaxed + fence: announce the waiter before any snapshot or
     * evaluation (pairs with the waker's fence in notify / ring_word) */
    mdcom_fetch_add(e->waiters, 1, memory_order_relaxed);
    mdcom_fence(memory_order_seq_cst);
    e->ev_snap = mdcom_load(e->word, memory_order_relaxed);
    e->used = 1;
    ws->n++;
    ws_changed(ws);
    pthread_mutex_unlock(&ws->mu);
    return 0;
}

int mdcom_waitset_add_fifo(mdcom_waitset_t *ws, mdcom_fifoch_t *ch, uint32_t events, void *user)
{
    const uint32_t all = MDCOM_EV_RX | MDCOM_EV_TX | MDCOM_EV_SPACE | MDCOM_EV_NOTIFY;
    if (!ch || !events || (events & ~all))
        return -EINVAL;
    return ws_add(ws, MDCOM_CHAN_FIFO, ch, events, user);
}

int mdcom_waitset_add_smem(mdcom_waitset_t *ws, mdcom_smemch_t *ch, void *user)
{
    if (!ch)
        return -EINVAL;
    return ws_add(ws, MDCOM_CHAN_SMEM, ch, MDCOM_EV_UNLOCKED, user);
}

/* Drop member e's waiter count (under ws->mu, region mapped). */
static void member_drop(struct mdcom_waitset *ws, struct member *e)
{
    if (ws->m)                          /* relaxed: a count, ordered by nothing else */
        mdcom_waiters_down(e->waiters); /* never below 0, whatever a peer wrote */
    memset(e, 0, sizeof(*e));
    ws->n--;
}

int mdcom_waitset_remove(mdcom_waitset_t *ws, const void *ch)
{
    uint32_t i;
    if (!valid_ws(ws) || !ch)
        return -EINVAL;
    pthread_mutex_lock(&ws->mu);
    for (i = 0; i < MDCOM_MAX_CHANNELS; i++) {
        if (ws->mem[i].used && ws->mem[i].ch == ch) {
            member_drop(ws, &ws->mem[i]);
            ws_changed(ws);
            pthread_mutex_unlock(&ws->mu);
            return 0;
        }
    }
    pthread_mutex_unlock(&ws->mu);
    return -ENOENT;
}

int mdcom_waitset_wait(mdcom_waitset_t *ws, mdcom_event *out, uint32_t n, int64_t timeout_ns)
{
    struct futex_waitv w[EV_WORDS_MAX];
    int64_t deadline;
    uint32_t slept = 0;
    if (!valid_ws(ws) || !out || n == 0)
        return -EINVAL;
    deadline = timeout_ns < 0 ? INT64_MAX : mono_ns() + timeout_ns;
    for (;;) {
        uint64_t seen[(MDCOM_MAX_CHANNELS + 63) / 64];
        uint32_t nw, spin;
        int r;
        struct mdcom_instance *m;
        memset(seen, 0, sizeof seen);
        pthread_mutex_lock(&ws->mu);
        m = ws->m;
        if ((r = ws_check(ws)) != 0) { /* -ESHUTDOWN without an instance */
            pthread_mutex_unlock(&ws->mu);
            return r;
        }
        ctl_waitv(&w[0], &ws->ctl);
        nw = 1 + ws_words(ws, w, 1, seen);
        /* fence: the snapshots precede the evaluation */
        mdcom_fence(memory_order_seq_cst);
        r = ws_eval(ws, out, n, NULL, 0);
        pthread_mutex_unlock(&ws->mu);
        if (r != 0)
            return r < 0 ? r : (int)(r > (int)n ? (int)n : r);
        if (timeout_ns == 0 || mono_ns() >= deadline)
            return -ETIMEDOUT;
        spin = mdcom_load(&ws->spin_ns, memory_order_relaxed);
        if (!slept && m && spin != MDCOM_NO_SPIN) {
            /* spin first, as mdcom_fifoch_wait does: a reply due within
             * microseconds costs no sleep and no wake-up */
            int64_t end = mono_ns() + spin;
            uint32_t k = 0;
            if (end > deadline)
                end = deadline;
            for (;;) {
                mdcom_relax(m);
                pthread_mutex_lock(&ws->mu);
                r = ws_eval(ws, out, n, NULL, 1); /* the fd was updated above */
                pthread_mutex_unlock(&ws->mu);
                if (r != 0)
                    return r < 0 ? r : (r > (int)n ? (int)n : r);
                if ((++k & 15u) == 0 && mono_ns() >= end)
                    break;
            }
            slept = 1;
            continue; /* fresh snapshots before sleeping */
        }
        if (slept++ > 1)
            (void)mdcom_reap(m);
        r = sleep_words(m, w, nw, deadline);
        if (r == -EINTR)
            return -EINTR;
    }
}

int mdcom_waitset_set_spin(mdcom_waitset_t *ws, uint32_t spin_ns)
{
    if (!valid_ws(ws))
        return -EINVAL;
    /* relaxed: a tuning value read at the next wait */
    mdcom_store(&ws->spin_ns, spin_ns, memory_order_relaxed);
    return 0;
}

int mdcom_waitset_fd(mdcom_waitset_t *ws)
{
    struct evatt *a;
    int fd;
    if (!valid_ws(ws))
        return -EINVAL;
    pthread_mutex_lock(&g_mu);
    a = ws->att;
    if (!ws->m || !a) {
        pthread_mutex_unlock(&g_mu);
        return -MDCOM_ESHUTDOWN;
    }
    pthread_mutex_lock(&a->mu);
    if (ws->efd >= 0) {
        fd = ws->efd;
        goto out;
    }
    if (!a->running) {
        a->stop = 0;
        if (pthread_create(&a->th, NULL, helper, a) != 0) {
            fd = -EAGAIN;
            goto out;
        }
        a->running = 1;
        (void)pthread_setname_np(a->th, "mdcom-ev"); /* for ps/top and tests */
    }
    fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
        fd = -errno;
        goto out;
    }
    pthread_mutex_lock(&ws->mu);
    ws->efd = fd;
    ws->pending = 0;
    if (uses_futex(ws->m))
        ws->ur = ur_open(fd);
    ws->next_fd = a->fds;
    a->fds = ws;
    ws->next_g = g_fds;
    g_fds = ws;
    if (ws->ur) /* first evaluation: readable, or armed */
        (void)ws_eval(ws, NULL, 0, NULL, 0);
    pthread_mutex_unlock(&ws->mu);
    wake_private(&a->ctl);
out:
    pthread_mutex_unlock(&a->mu);
    pthread_mutex_unlock(&g_mu);
    return fd;
}

/* Unlink ws from its attachment's lists (under g_mu and a->mu). */
static void ws_unlink(struct evatt *a, struct mdcom_waitset *ws)
{
    struct mdcom_waitset **p;
    for (p = &a->all; *p; p = &(*p)->next_all)
        if (*p == ws) {
            *p = ws->next_all;
            break;
        }
    for (p = &a->fds; *p; p = &(*p)->next_fd)
        if (*p == ws) {
            *p = ws->next_fd;
            break;
        }
}

int mdcom_waitset_destroy(mdcom_waitset_t *ws)
{
    uint32_t i;
    struct mdcom_waitset **p;
    if (!valid_ws(ws))
        return -EINVAL;
    pthread_mutex_lock(&g_mu);
    for (p = &g_fds; *p; p = &(*p)->next_g)
        if (*p == ws) {
            *p = ws->next_g;
            break;
        }
    if (ws->att) {
        pthread_mutex_lock(&ws->att->mu);
        ws_unlink(ws->att, ws);
        pthread_mutex_unlock(&ws->att->mu);
    }
    pthread_mutex_unlock(&g_mu);
    pthread_mutex_lock(&ws->mu);
    for (i = 0; i < MDCOM_MAX_CHANNELS; i++)
        if (ws->mem[i].used)
            member_drop(ws, &ws->mem[i]);
    ws->tag = 0;
    if (ws->ur)
        ur_close(ws->ur);
    ws->ur = NULL;
    if (ws->efd >= 0)
        close(ws->efd);
    pthread_mutex_unlock(&ws->mu);
    pthread_mutex_destroy(&ws->mu);
    free(ws);
    return 0;
}

/* Attachment m ends (called first by mdcom_term): stop the helper, give
 * back every count, leave the sets empty and their fds readable. */
static void ev_term(struct mdcom_instance *m)
{
    struct evatt *a;
    struct mdcom_waitset *ws;
    uint32_t i;
    pthread_mutex_lock(&g_mu);
    a = att_of(m, 0);
    if (!a) {
        pthread_mutex_unlock(&g_mu);
        return;
    }
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    wake_private(&a->ctl);
    pthread_mutex_unlock(&a->mu);
    if (a->running)
        pthread_join(a->th, NULL);
    pthread_mutex_lock(&a->mu);
    for (ws = a->all; ws; ws = ws->next_all) {
        pthread_mutex_lock(&ws->mu);
        for (i = 0; i < MDCOM_MAX_CHANNELS; i++)
            if (ws->mem[i].used)
                member_drop(ws, &ws->mem[i]);
        ws->m = NULL;
        ws->att = NULL;
        fd_signal(ws);
        wake_private(&ws->ctl);
        pthread_mutex_unlock(&ws->mu);
    }
    a->all = a->fds = NULL;
    a->running = 0;
    a->m = NULL;
    pthread_mutex_unlock(&a->mu);
    pthread_mutex_unlock(&g_mu);
}

/* ---- single-channel fds ---------------------------------------------- */

/* The set behind fd (any fd of a set), or NULL. Under g_mu. */
static struct mdcom_waitset *ws_of_fd(int fd)
{
    struct mdcom_waitset *ws;
    for (ws = g_fds; ws; ws = ws->next_g)
        if (ws->efd == fd)
            return ws;
    return NULL;
}

static int single_fd(struct mdcom_instance *m, uint32_t type, void *ch, uint32_t events)
{
    mdcom_waitset_t *ws;
    int r = mdcom_waitset_create(m, &ws);
    if (r)
        return r;
    ws->single = 1;
    r = type == MDCOM_CHAN_FIFO ? mdcom_waitset_add_fifo(ws, ch, events, NULL)
                                : mdcom_waitset_add_smem(ws, ch, NULL);
    if (r == 0)
        r = mdcom_waitset_fd(ws);
    if (r < 0)
        mdcom_waitset_destroy(ws);
    return r;
}

int mdcom_fifoch_fd(mdcom_fifoch_t *ch, uint32_t events)
{
    if (!ch || ch->tag != MDCOM_TAG_FIFO)
        return -EINVAL;
    return single_fd(ch->m, MDCOM_CHAN_FIFO, ch, events);
}

int mdcom_smemch_fd(mdcom_smemch_t *ch)
{
    if (!ch || ch->tag != MDCOM_TAG_SMEM)
        return -EINVAL;
    return single_fd(ch->m, MDCOM_CHAN_SMEM, ch, MDCOM_EV_UNLOCKED);
}

int mdcom_fd_clear(int fd)
{
    struct mdcom_waitset *ws;
    uint32_t mask;
    int r;
    pthread_mutex_lock(&g_mu);
    ws = ws_of_fd(fd);
    if (!ws) {
        pthread_mutex_unlock(&g_mu);
        return -EBADF;
    }
    pthread_mutex_lock(&ws->mu);
    pthread_mutex_unlock(&g_mu);
    mask = 0;
    r = ws_check(ws);
    if (r == 0) {
        mdcom_event ev[1];
        /* consume NOTIFY edges of single-channel fds (their report is ours) */
        r = ws_eval(ws, ws->single ? ev : NULL, ws->single ? 1u : 0u, &mask, 0);
    }
    pthread_mutex_unlock(&ws->mu);
    return r < 0 ? r : (int)mask;
}

int mdcom_fd_close(int fd)
{
    struct mdcom_waitset *ws;
    pthread_mutex_lock(&g_mu);
    ws = ws_of_fd(fd);
    if (!ws || !ws->single) {
        pthread_mutex_unlock(&g_mu);
        return -EBADF;
    }
    pthread_mutex_unlock(&g_mu);
    return mdcom_waitset_destroy(ws);
}
