/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.h - event-loop integration of libmdcom (Linux port only): a pollable
 * file descriptor per channel event, and wait sets over many channels.
 *
 * Mechanism (docs/events.md): a channel in a wait set (or behind an fd) holds
 * one waiter count on its shared waiter word for as long as it is registered,
 * so every mdcom_fifoch_notify() / mdcom_smemch_unlock() on it, from any
 * domain, changes the channel's event (lock) word and rings the doorbell.
 *   - mdcom_waitset_wait() sleeps in the calling thread on all members' words
 *     at once (futex_waitv(2), Linux >= 5.16; with a non-futex doorbell such
 *     as the QEMU UART one, in the port's doorbell wait) - no extra thread.
 *   - An fd (mdcom_waitset_fd, mdcom_fifoch_fd, mdcom_smemch_fd) is an
 *     eventfd(2). Where io_uring has FUTEX_WAITV (Linux >= 6.7) the fd's own
 *     ring sleeps on the members' words and the kernel makes the eventfd
 *     readable when one changes: one wake-up per event; the calls below re-arm
 *     it from the thread that made the fd. Elsewhere (older kernels,
 *     io_uring disabled, qemu-user, a non-futex doorbell, another thread, or
 *     MDCOM_EVENTS_NO_URING=1) one helper thread per attachment sleeps on the
 *     words of every wait set with an fd and makes it readable. The helper
 *     thread also re-evaluates every set with an fd every 50 ms.
 * While nothing is registered on a channel, notify stays free (no syscall, no
 * shared write when nobody sleeps); while something is, each notify on that
 * channel costs one futex wake.
 *
 * Readiness semantics of the fds (level-triggered, re-evaluated):
 *   The fd is readable when one of its events held at the last evaluation.
 *   Evaluations happen (a) in the kernel (io_uring) or the helper thread
 *   after each notify / unlock on a member channel, in the helper thread
 *   every 50 ms, and (b) in the caller, in every
 *   mdcom_waitset_wait() and mdcom_fd_clear(). An evaluation that finds no
 *   event holding makes the fd not readable; one that finds an event makes it
 *   readable. So after draining a channel (dequeue until -EAGAIN), call
 *   mdcom_fd_clear() (or mdcom_waitset_wait(..., MDCOM_POLL)): if nothing is
 *   left the fd stops being readable, and a later notify makes it readable
 *   again; nothing is ever missed. Readiness may be stale in the safe
 *   direction only: readable although another process took the block
 *   meanwhile (callers loop, as with mdcom_fifoch_wait). Do not read(2) the
 *   fd yourself, and never close(2) it: use mdcom_fd_close(). The fds are
 *   non-blocking and close-on-exec; they work with poll, select and epoll
 *   (EPOLLIN, level or edge-triggered: with EPOLLET call mdcom_fd_clear()
 *   after each wake-up, it re-arms the edge when an event still holds).
 *   MDCOM_EV_NOTIFY is an edge: it holds from a notify after the previous
 *   evaluation that reported it until that report.
 *
 * When the region ends (the master terminated or re-formatted it, or this
 * process was reaped): every fd becomes readable (at once on a termination,
 * else by the next 50 ms re-evaluation) and stays readable, and every
 * evaluation (mdcom_fd_clear, mdcom_waitset_wait, whatever its timeout)
 * returns -ESHUTDOWN / -ECONNRESET / -ENOTCONN without blocking. A loop ends
 * on that negative answer (ignoring it would spin on the readable fd);
 * mdcom_fd_close / mdcom_waitset_destroy still work after it.
 *
 * Errors common to all functions: -EINVAL (NULL or foreign handle, bad
 * events), -ENOSYS (the library was built without the Linux port).
 */
#ifndef MDCOM_EVENTS_H
#define MDCOM_EVENTS_H

#include <stdint.h>

#include "mdcom/mdcom.h"
#include "mdcom/export.h"

#ifdef __cplusplus
extern "C" {
#endif

MDCOM_API_BEGIN /* the declarations below are the exported API */

/* SMEM event: the channel's lock is free (a lock attempt may succeed). */
#define MDCOM_EV_UNLOCKED 0x10u

typedef struct mdcom_waitset mdcom_waitset_t;

/* What mdcom_waitset_wait reports: one entry per channel with events. */
typedef struct mdcom_event {
    void *ch;        /* the mdcom_fifoch_t * or mdcom_smemch_t * added   */
    uint32_t type;   /* MDCOM_CHAN_FIFO or MDCOM_CHAN_SMEM               */
    uint32_t events; /* the events that hold (subset of those added)     */
    void *user;      /* the user pointer given at add                    */
} mdcom_event;

/* A new, empty wait set on attachment m. 0 and *out, -EINVAL, -ENOMEM. */
int mdcom_waitset_create(mdcom_t *m, mdcom_waitset_t **out);

/* Add FIFO channel ch (of the same attachment) waiting for events
 * (MDCOM_EV_RX | TX | SPACE | NOTIFY). A channel is in a set at most once.
 * 0, -EINVAL (bad events, channel of another attachment), -EEXIST (already
 * in the set), -ESHUTDOWN / -ECONNRESET (the region is gone). */
int mdcom_waitset_add_fifo(mdcom_waitset_t *ws, mdcom_fifoch_t *ch, uint32_t events, void *user);

/* Add SMEM channel ch waiting for MDCOM_EV_UNLOCKED. Same errors. */
int mdcom_waitset_add_smem(mdcom_waitset_t *ws, mdcom_smemch_t *ch, void *user);

/* Remove a channel (mdcom_fifoch_t * or mdcom_smemch_t *). A wait in another
 * thread re-evaluates without it. 0, -EINVAL, -ENOENT (not in the set). */
int mdcom_waitset_remove(mdcom_waitset_t *ws, const void *ch);

/* Wait until at least one member's events hold, at most timeout_ns
 * (MDCOM_POLL, ns, MDCOM_FOREVER). Fills out[0..n-1] with at most n fired
 * members (in channel index order, starting after the last reported one, so
 * a busy channel cannot starve the others) and returns their number (> 0),
 * or -ETIMEDOUT, -EINVAL (n == 0), -EINTR (signal), -ESHUTDOWN /
 * -ECONNRESET / -ENOTCONN (the region, see mdcom.h). An empty set waits for
 * its timeout (or a member added by another thread). Evaluates (and so
 * re-arms) the set's fd. Several threads may wait on one set. */
int mdcom_waitset_wait(mdcom_waitset_t *ws, mdcom_event *out, uint32_t n, int64_t timeout_ns);

/* Spin limit of mdcom_waitset_wait before it sleeps, in ns (re-evaluating
 * the members; default: the attachment's mdcom_init_opts.spin_ns);
 * MDCOM_NO_SPIN sleeps at once. 0 or -EINVAL. */
int mdcom_waitset_set_spin(mdcom_waitset_t *ws, uint32_t spin_ns);

/* The set's pollable fd (created at the first call, the same fd after),
 * readable per the semantics above. It belongs to the set: destroy closes it.
 * fd >= 0, or -EMFILE/-ENFILE/-ENOMEM (eventfd), -EAGAIN (the helper
 * thread could not be started). */
int mdcom_waitset_fd(mdcom_waitset_t *ws);

/* Remove every member, stop its fd, free the set. 0 or -EINVAL. */
int mdcom_waitset_destroy(mdcom_waitset_t *ws);

/* A pollable fd for one FIFO channel's events (a wait set of one member
 * behind the scenes). fd >= 0, or the errors of create/add/fd. */
int mdcom_fifoch_fd(mdcom_fifoch_t *ch, uint32_t events);

/* A pollable fd readable while the SMEM channel's lock is free. */
int mdcom_smemch_fd(mdcom_smemch_t *ch);

/* Re-evaluate the fd's events now: returns the mask of events that hold
 * (> 0; the fd stays readable), 0 (none: the fd is no longer readable), or
 * -EBADF (not an fd of mdcom_fifoch_fd / mdcom_smemch_fd / mdcom_waitset_fd),
 * -ESHUTDOWN / -ECONNRESET / -ENOTCONN (the region, or this process was
 * reaped after a missed heartbeat; the fd stays readable). With a heartbeat
 * promise (mdcom_init_opts.heartbeat_ms) the call is a sign of life, as a
 * wait is. For a wait set's fd the mask is the union over its members. */
int mdcom_fd_clear(int fd);

/* Close an fd of mdcom_fifoch_fd / mdcom_smemch_fd (and free what is behind
 * it). 0, -EBADF. A wait set's fd is closed by mdcom_waitset_destroy. */
int mdcom_fd_close(int fd);

MDCOM_API_END

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_EVENTS_H */
