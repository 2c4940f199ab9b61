/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * port_threadx.c - the Eclipse ThreadX port of libmdcom (ThreadX 6.x, single
 * core; Cortex-M for the SysTick refinement of the clock). Board specifics
 * (region, ring, optional hardware lock and cache hooks) come from the
 * bare-metal port's board description (ports/baremetal/board.h).
 *
 *   region    the board's fixed memory (ports/baremetal/board_hooks.c, as
 *             the lock, cache and clock hooks)
 *   doorbell  every thread that uses mdcom has a slot of this port's thread
 *             table, and each slot a counting semaphore used as a binary one
 *             (tx_semaphore_ceiling_put with ceiling 1). wait: the calling
 *             thread publishes the word it waits on in its slot, drops a
 *             stale count, re-checks the word, then blocks in
 *             tx_semaphore_get until the tick that ends the timeout. ring:
 *             the board's ring to the other domain, then a put on the
 *             semaphore of each local thread waiting on that word (from a
 *             thread or an interrupt: ThreadX takes the same call in both).
 *             The doorbell interrupt (mdcom_threadx_doorbell_isr) puts to
 *             every waiting thread: a wake-up costs an interrupt and a
 *             context switch, not a tick. Any number of threads may wait.
 *   lock      the board's hardware semaphore, or the core's portable CAS.
 *             Each thread attaches as its own mdcom process (below), so the
 *             lock owner word tells threads apart exactly as it tells
 *             processes apart: safe between threads with nothing added.
 *   clock     ThreadX's tick count (tx_time_get, extended to 64 bits here)
 *             refined by SysTick's current value: sub-tick resolution,
 *             never backwards.
 *   cache     the board's hooks, or none
 *   process   one thread = one mdcom process, as ports/freertos decided for
 *             tasks: pid MDCOM_TX_PID_BASE + a slot, token = an incarnation
 *             counter (from the boot seed). The core's freestanding build
 *             keeps one operation record per process entry (no thread-local
 *             storage), so threads must not share an attachment: each calls
 *             mdcom_init (MDCOM_MAX_INSTANCES attachments per image).
 *             proc_alive judges thread pids of this image: dead once the
 *             thread exited (completed or terminated: the port's entry/exit
 *             notification, or mdcom_threadx_thread_exited), deleted, or
 *             the token is of another incarnation; other pids (Linux, other
 *             cores) are "unknown".
 *
 * Lost wake-ups: a ring between the waiter's last check of the word and its
 * block cannot be lost: the waiter publishes its word and drops the old
 * count before it reads the word, so a ring after that read leaves a count
 * that the block takes at once. A ring that lands between the drop and the
 * read leaves a count too: the next wait drops it (a spurious return at
 * worst, which the contract allows).
 *
 * Waits block only in a thread with the kernel running; elsewhere (in
 * tx_application_define, in an interrupt) the wait cannot sleep and returns
 * -EINTR, as it does when tx_thread_wait_abort ends it.
 */
#include <errno.h>
#include <stdatomic.h>

#include "tx_api.h"
#include "tx_thread.h" /* TX_THREAD_ID: a created thread (not deleted) */

#include "board.h"
#include "board_hooks.h"
#include "mdcom/mdcom.h"
#include "mdcom_threadx.h"

_Static_assert(
    MDCOM_TX_MAX_THREADS >= 1u && MDCOM_TX_MAX_THREADS <= 32u,
    "ports/threadx: MDCOM_TX_MAX_THREADS 1..32 (a ring collects slots in a 32-bit mask)");

/* The SysTick refinement of the clock: Cortex-M with SysTick as the tick
 * source (mdcom's low-level init, or the application's at the same rate). */
#ifndef MDCOM_TX_SYSTICK
#if defined(__ARM_ARCH_7M__) || defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) ||      \
    defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_6M__)
#define MDCOM_TX_SYSTICK 1
#else
#define MDCOM_TX_SYSTICK 0
#endif
#endif

#define TXP_REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define TXP_SYST_CSR TXP_REG(0xE000E010u)
#define TXP_SYST_RVR TXP_REG(0xE000E014u)
#define TXP_SYST_CVR TXP_REG(0xE000E018u)
#define TXP_ICSR TXP_REG(0xE000ED04u)
#define TXP_ICSR_PENDSTSET (1u << 26)

/* Mask interrupts from a thread or an interrupt alike (ThreadX's own
 * posture save / restore: nests). */
#define TXP_MASK(s) ((s) = tx_interrupt_control(TX_INT_DISABLE))
#define TXP_UNMASK(s) ((void)tx_interrupt_control(s))

static inline int in_isr(void)
{
#if MDCOM_TX_SYSTICK
    uint32_t ipsr;
    __asm__ __volatile__("mrs %0, ipsr" : "=r"(ipsr));
    return (ipsr & 0x1ffu) != 0;
#else
    return TX_THREAD_GET_SYSTEM_STATE() != 0; /* an ISR, or initialization */
#endif
}

/* ---------------------------------------------------------------- */
/* Clock                                                              */
/* ---------------------------------------------------------------- */

#define TXP_HZ ((uint64_t)TX_TIMER_TICKS_PER_SECOND)
#define TXP_NS_PER_S 1000000000ull
#define TXP_TICK_NS ((uint32_t)(TXP_NS_PER_S / TXP_HZ))

static uint32_t g_tick_lo; /* the last 32-bit tick count seen (masked)   */
static uint64_t g_tick_hi; /* its wraps, << 32                           */
static uint64_t g_last_ns; /* the largest value now_ns returned (masked) */

/* ThreadX's 32-bit tick count made 64-bit (masked by the caller): a wrap
 * is seen at the first read after it, and every wait and clock read is
 * one, far more often than every 2^32 ticks. */
static uint64_t ticks64_masked(void)
{
    uint32_t t = (uint32_t)tx_time_get();
    if (t < g_tick_lo)
        g_tick_hi += 1ull << 32;
    g_tick_lo = t;
    return g_tick_hi | t;
}

uint64_t mdcom_threadx_ticks64(void)
{
    UINT s;
    uint64_t t;
    TXP_MASK(s);
    t = ticks64_masked();
    TXP_UNMASK(s);
    return t;
}

uint32_t mdcom_threadx_tick_ns(void) { return TXP_TICK_NS; }

/* whole seconds and the rest apart: no overflow for any 64-bit count */
static uint64_t tick_to_ns(uint64_t t)
{
    return t / TXP_HZ * TXP_NS_PER_S + t % TXP_HZ * TXP_NS_PER_S / TXP_HZ;
}

/* The first tick that starts at or after ns: a wait that ends there never
 * returns before ns, and at most one tick after it. */
static uint64_t ns_to_tick_up(uint64_t ns)
{
    uint64_t whole = ns / TXP_NS_PER_S * TXP_HZ, rest = ns % TXP_NS_PER_S * TXP_HZ;
    return whole + rest / TXP_NS_PER_S + (rest % TXP_NS_PER_S != 0);
}

/* ns into the current tick from SysTick (masked); *carry = 1 when SysTick
 * wrapped but its interrupt (masked now) has not counted that tick yet. */
static uint64_t systick_part(uint32_t *carry)
{
    uint64_t part = 0;
    *carry = 0;
#if MDCOM_TX_SYSTICK
    if (TXP_SYST_CSR & 1u) {
        uint32_t reload = TXP_SYST_RVR & 0xffffffu, left = TXP_SYST_CVR;
        if (TXP_ICSR & TXP_ICSR_PENDSTSET) {
            left = TXP_SYST_CVR; /* the value after the wrap */
            *carry = 1;
        }
        left = left > reload ? reload : left;
        part = (uint64_t)(reload - left) * TXP_TICK_NS / ((uint64_t)reload + 1u);
    }
#endif
    return part;
}

uint64_t mdcom_threadx_now_ns(void)
{
    UINT s;
    uint32_t carry;
    uint64_t ns;
    TXP_MASK(s);
    ns = systick_part(&carry);
    ns += tick_to_ns(ticks64_masked() + carry);
    /* never backwards: QEMU may show SysTick reloaded before it pends the
     * interrupt; hold the last value until the tick is counted */
    if (ns > g_last_ns)
        g_last_ns = ns;
    ns = g_last_ns;
    TXP_UNMASK(s);
    return ns;
}

/* ---------------------------------------------------------------- */
/* The thread table: identity and the doorbell semaphore per thread   */
/* ---------------------------------------------------------------- */

typedef struct txp_slot {
    TX_THREAD *thread;          /* NULL: free, or its thread exited          */
    uint32_t token;             /* the incarnation of the slot's last thread */
    mdcom_aword *wait_word;     /* the word its thread waits on, NULL: none  */
    uint64_t notified_ns;       /* the first put of this wait, 0: none yet   */
    TX_SEMAPHORE sem;           /* its wake-up (count 0 or 1)                */
    volatile uint32_t sem_made; /* sem created (slots are reused, sems kept) */
} txp_slot;

static txp_slot g_slot[MDCOM_TX_MAX_THREADS]; /* changed masked */
static uint32_t g_seed = 1, g_incarnations;
static mdcom_threadx_stats g_st; /* changed masked */

void mdcom_threadx_set_boot_seed(uint32_t seed) { g_seed = seed; }

void mdcom_threadx_get_stats(mdcom_threadx_stats *out)
{
    UINT s;
    TXP_MASK(s);
    *out = g_st;
    TXP_UNMASK(s);
}

static void txp_exit_notify(TX_THREAD *t, UINT why)
{
    if (why == TX_THREAD_EXIT)
        mdcom_threadx_thread_exited(t);
}

#ifndef TX_DISABLE_NOTIFY_CALLBACKS
/* tx_api.h maps the service's name (an object-like macro) to its
 * implementation, which hides the TX_THREAD member of the same name: the
 * service is called through this wrapper, and the name is the member's
 * below it. */
static UINT exit_notify_register(TX_THREAD *t)
{
    return tx_thread_entry_exit_notify(t, txp_exit_notify);
}
#undef tx_thread_entry_exit_notify
#endif

/* The slot of thread me, taking a free one (a never-used one first: a dead
 * thread's pid stays dead longer) when it has none. NULL when all are
 * taken. From a thread only (it may create the slot's semaphore). */
static txp_slot *slot_of(TX_THREAD *me)
{
    txp_slot *mine = 0, *spare = 0;
    uint32_t i;
    UINT s;
    TXP_MASK(s);
    for (i = 0; i < MDCOM_TX_MAX_THREADS && !mine; i++) {
        txp_slot *e = &g_slot[i];
        if (e->thread == me)
            mine = e;
        else if (!e->thread && (!spare || (spare->token && !e->token)))
            spare = e;
    }
    if (!mine && spare) {
        mine = spare;
        mine->thread = me;
        mine->wait_word = 0;
        /* tokens: the boot seed above 12 bits of incarnation, so that the
         * first 4096 of two boots differ; never 0 nor MDCOM_TOKEN_ANY */
        do
            mine->token = (g_seed << 12) + ++g_incarnations;
        while (mine->token == 0u || mine->token == MDCOM_TOKEN_ANY);
    }
    TXP_UNMASK(s);
    if (mine && !mine->sem_made) {
        /* only this thread uses the slot now: nobody else creates it */
        if (tx_semaphore_create(&mine->sem, (CHAR *)"mdcom", 0) != TX_SUCCESS)
            return 0;
        mine->sem_made = 1;
    }
#ifndef TX_DISABLE_NOTIFY_CALLBACKS
    /* its exit makes its identity dead at once; a thread with its own
     * notification must call mdcom_threadx_thread_exited from it */
    if (mine && !me->tx_thread_entry_exit_notify)
        (void)exit_notify_register(me);
#endif
    return mine;
}

void mdcom_threadx_thread_exited(void *thread)
{
    uint32_t i;
    UINT s;
    TXP_MASK(s);
    for (i = 0; i < MDCOM_TX_MAX_THREADS; i++)
        if (g_slot[i].thread == (TX_THREAD *)thread) {
            g_slot[i].thread = 0; /* the token stays: (pid, token) is dead now */
            g_slot[i].wait_word = 0;
        }
    TXP_UNMASK(s);
}

/* ---------------------------------------------------------------- */
/* Doorbell                                                           */
/* ---------------------------------------------------------------- */

/* The slots waiting on word (NULL: all), stamped with the time of their
 * first wake-up; masked. */
static uint32_t waiting_on(mdcom_aword *word)
{
    uint32_t i, who = 0;
    uint64_t t = 0;
    for (i = 0; i < MDCOM_TX_MAX_THREADS; i++) {
        txp_slot *e = &g_slot[i];
        if (!e->wait_word || (word && e->wait_word != word))
            continue;
        if (!e->notified_ns) {
            if (!t)
                t = mdcom_threadx_now_ns();
            e->notified_ns = t;
        }
        who |= 1u << i;
    }
    return who;
}

/* Unmasked: a put may switch to the woken thread at once (from a thread)
 * or at the interrupt's return (PendSV). A slot whose thread stopped
 * waiting meanwhile keeps a count: its next wait drops it. */
static void wake(uint32_t who)
{
    uint32_t i;
    for (i = 0; who; i++, who >>= 1)
        if (who & 1u)
            (void)tx_semaphore_ceiling_put(&g_slot[i].sem, 1);
}

void mdcom_threadx_doorbell_isr(void)
{
    uint32_t who;
    UINT s;
    TXP_MASK(s);
    g_st.doorbells++;
    who = waiting_on(0); /* the peer's ring names no word: everyone checks */
    TXP_UNMASK(s);
    wake(who);
}

/* The ticks from now to tick end, what tx_semaphore_get takes (ThreadX
 * resumes a thread at the n-th tick from the call: at end); 0 once end has
 * come. */
static ULONG ticks_until(uint64_t end)
{
    uint64_t now = mdcom_threadx_ticks64();
    if (now >= end)
        return 0;
    return end - now >= (uint64_t)TX_WAIT_FOREVER ? TX_WAIT_FOREVER - 1u : (ULONG)(end - now);
}

static int txp_wait(void *ctx, mdcom_aword *word, uint32_t expected, int64_t timeout_ns)
{
    TX_THREAD *me = tx_thread_identify();
    txp_slot *e;
    uint64_t end = 0;
    int r = 0, slept = 0;
    UINT s, st;
    ULONG dt;
    (void)ctx;
    if (in_isr() || !me || _tx_thread_system_state != 0)
        return -EINTR; /* cannot block here */
    e = slot_of(me);
    if (!e)
        return -MDCOM_EUSERS; /* more threads than MDCOM_TX_MAX_THREADS */
    if (timeout_ns >= 0)
        end = ns_to_tick_up(mdcom_threadx_now_ns() + (uint64_t)timeout_ns);
    TXP_MASK(s);
    g_st.waits++;
    e->notified_ns = 0;
    e->wait_word = word;
    TXP_UNMASK(s);
    /* a count left from an earlier ring is stale: the word is read below,
     * after the slot shows what we wait on */
    while (tx_semaphore_get(&e->sem, TX_NO_WAIT) == TX_SUCCESS)
        ;
    for (;;) {
        /* acquire: the caller re-checks its condition after we return */
        if (atomic_load_explicit(word, memory_order_acquire) != expected)
            break;
        dt = timeout_ns < 0 ? TX_WAIT_FOREVER : ticks_until(end);
        if (dt == 0) {
            r = -ETIMEDOUT;
            break;
        }
        slept = 1;
        st = tx_semaphore_get(&e->sem, dt);
        if (st == TX_SUCCESS)
            break; /* rung: the caller re-checks everything */
        if (st != TX_NO_INSTANCE) {
            r = -EINTR; /* tx_thread_wait_abort, or a context that cannot wait */
            break;
        }
    }
    TXP_MASK(s);
    e->wait_word = 0;
    if (slept)
        g_st.sleeps++;
    if (r == -ETIMEDOUT)
        g_st.timeouts++;
    else if (slept && e->notified_ns)
        mdcom_bm_rtos_stats_wake(&g_st, mdcom_threadx_now_ns() - e->notified_ns);
    TXP_UNMASK(s);
    return r;
}

static void txp_ring(void *ctx, mdcom_aword *word, uint32_t chan)
{
    uint32_t who;
    UINT s;
    (void)ctx;
    /* the other domain first: a local thread woken below may run before
     * this call returns */
    mdcom_board_desc.ring(chan);
    TXP_MASK(s);
    if (in_isr())
        g_st.rings_isr++;
    else
        g_st.rings_task++;
    who = waiting_on(word);
    TXP_UNMASK(s);
    wake(who);
}

/* ---------------------------------------------------------------- */
/* Process identity: one thread, one process                          */
/* ---------------------------------------------------------------- */

static int txp_proc_self(void *ctx, uint32_t *pid, uint32_t *token)
{
    TX_THREAD *me = tx_thread_identify();
    txp_slot *e;
    (void)ctx;
    if (in_isr() || !me)
        return -EPERM; /* identities belong to threads */
    e = slot_of(me);
    if (!e)
        return -MDCOM_EUSERS;
    *pid = MDCOM_TX_PID_BASE + (uint32_t)(e - g_slot) + 1u;
    *token = e->token;
    return 0;
}

/* The slot a pid of this port names; NULL for every other pid. */
static const txp_slot *slot_named(uint32_t pid)
{
    return MDCOM_TX_IS_THREAD_PID(pid) ? &g_slot[(pid & 0xffffu) - 1u] : 0;
}

static int txp_proc_alive(void *ctx, uint32_t pid, uint32_t token)
{
    const txp_slot *e = slot_named(pid);
    const TX_THREAD *t;
    int alive;
    UINT s;
    (void)ctx;
    if (!e)
        return -ENOSYS; /* Linux, another core: unknown here, counted alive */
    TXP_MASK(s);
    t = e->thread;
    /* the state too: a thread whose exit notification is the application's
     * (which may not forward it) is still seen dead once it ended */
    alive = t && (token == MDCOM_TOKEN_ANY || token == e->token) &&
            t->tx_thread_id == TX_THREAD_ID && t->tx_thread_state != TX_COMPLETED &&
            t->tx_thread_state != TX_TERMINATED;
    TXP_UNMASK(s);
    return alive;
}

/* ---------------------------------------------------------------- */

/* the doorbell and identity above; region, lock, cache, clock: the board's
 * (board_hooks.c; the clock is mdcom_bm_now_ns of tx_runtime.c) */
static const mdcom_bm_port_ops g_ops = {"threadx", txp_wait, txp_ring, txp_proc_self,
                                        txp_proc_alive};
static mdcom_platform g_plat;

const mdcom_platform *mdcom_platform_threadx(void) { return mdcom_bm_platform(&g_plat, &g_ops); }
