/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transport.h - the one transport interface, and the loops written once over it.
 *
 * Every transport implements the message interface (bench_msg_ops): side A
 * (the measuring parent) and side B (a forked child) send and receive
 * messages on bidirectional channels. Round trips and two-process sessions
 * over it are written once (roundtrip.c, below). Peers measured by an
 * external program (tr_ext.c) have no ops: they report samples. A link to a
 * peer on another machine that this process drives itself (tr_qemu.c: the
 * firmware under QEMU) has link ops instead: cells of n operations, their
 * times the same samples.
 *
 * Return values: 0 ok, BENCH_RT_MISMATCH when a message arrived but carried
 * the wrong seq/length/payload (an integrity error), or a negative errno /
 * mdcom error code (the transport printed what failed).
 *
 * Adding a transport: one file defining its bench_msg_ops
 * (`bench_ops_<x>`) and a row in the table of transports.c. A link's
 * transports are rows of its own file (tr_qemu.c), named by the scenarios
 * of that link.
 */
#ifndef MDCOM_BENCH_TRANSPORT_H
#define MDCOM_BENCH_TRANSPORT_H

#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

#define BENCH_SEQ_STOP 0xffffffffu /* a 4-byte message of it ends a round-trip peer */
#define BENCH_RT_MISMATCH 1
/* Most bidirectional channels a message scenario uses at once. */
#define BENCH_MAX_CHAN 32u

/* How a transport waits. Ratios are computed against the baseline of the
 * same class. */
enum bench_wait_class { BENCH_WAIT_POLL = 1, BENCH_WAIT_BLOCK = 2 };

/* Side A is the parent process (it measures), side B the child. Channel c
 * carries messages A -> B and B -> A. Every call waits at most timeout_ns.
 * Several threads of one side may use distinct channels at the same time. */
enum bench_side { BENCH_SIDE_A = 0, BENCH_SIDE_B = 1 };

typedef struct bench_msg_params {
    uint32_t n_chan;    /* 1..BENCH_MAX_CHAN bidirectional channels       */
    uint32_t max_size;  /* largest message in either direction            */
    uint32_t depth;     /* messages one direction may hold (pool / queue
                           size hint, >= 1)                                */
    uint32_t threads;   /* threads per side using it at once (>= 1): poll
                           waits yield the CPU when > 1                   */
    int64_t timeout_ns; /* a single wait longer than this is an error     */
    char name[32];      /* unique name for named resources                */
    /* the transport's name and variant (bench_transport; set by the session) */
    const char *tname;
    int variant;
} bench_msg_params;

typedef struct bench_msg_ops {
    /* Parent, before fork (p->max_size <= bench_tr_max_size). 0 or < 0
     * (printed); -EMSGSIZE / -EDQUOT: beyond what the transport carries on
     * this machine: the cell is n/a. */
    int (*setup)(void **ctx, const bench_msg_params *p);
    /* After fork, once in the process of `side`, before any send/recv. */
    int (*attach)(void *ctx, int side);
    /* Send len bytes (len <= max_size) on channel ch. 0 or < 0. */
    int (*send)(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len);
    /* Receive one message into buf (cap >= max_size). Its length, or < 0.
     * NULL: bench_recv copies what peek hands out, then releases it. */
    int (*recv)(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap);
    /* Once in the process of `side`, after the last send/recv. */
    void (*detach)(void *ctx, int side);
    /* Parent, after the child exited: release everything, free ctx. */
    void (*teardown)(void *ctx);
    /* Largest message on this machine, for a limit that depends on it (NULL:
     * none; a fixed one is bench_transport.max_size). */
    uint32_t (*max_msg)(int variant);
    /* Optional, used by round trips: the next message where it arrived (no
     * copy): its length and *msg, or < 0; valid until release(), which the
     * caller owes before its next peek. */
    int (*peek)(void *ctx, int side, uint32_t ch, const void **msg);
    void (*release)(void *ctx, int side, uint32_t ch);
    /* 1: only the first 4 bytes of a message travel (a zero-copy transport
     * that writes its header only): round trips of >= 4 B, nothing else. */
    int header_only;
    /* 1: one channel, one message in flight (recv may be NULL). */
    int round_trips_only;
} bench_msg_ops;

/* A cell of a link transport: its transport, the size of a message (or
 * transaction) and how both sides wait. */
typedef struct bench_link_cell {
    const struct bench_transport *t;
    uint32_t bytes;
    int doorbell; /* 1: the peer sleeps until the doorbell wakes it; 0: both poll */
} bench_link_cell;

typedef struct bench_link_ops {
    /* n operations of cell c on link (the link's own context): the time of each
     * (ns) appended to samples[*np...] (room for n more). 0, > 0 bad replies
     * (integrity), -ENOENT when the peer of this transport is missing (the
     * cell is n/a), other < 0 an API or link error. */
    int (*run)(void *link, const bench_link_cell *c, uint32_t n, uint64_t *samples, size_t *np);
} bench_link_ops;

typedef struct bench_transport {
    const char *name;         /* "raw-spin"                                     */
    const char *desc;         /* one line for --help                            */
    int wait_class;           /* enum bench_wait_class                          */
    const char *baseline;     /* transport whose p50 this one is compared to;
                             NULL when it is a baseline itself             */
    const bench_msg_ops *msg; /* NULL only for external programs           */
    int variant;              /* passed to setup and max_msg: one ops table
                                 serves e.g. raw-spin and raw-futex          */
    /* Largest payload it takes (0 = no fixed limit; see also msg->max_msg).
     * Larger cells are reported n/a. */
    uint32_t max_size;
    /* A peer measured by an external program (tr_ext.c): its path, and how
     * to build it. */
    const char *ext, *ext_build;
    int hidden; /* chosen by name only, not by 'all' (the wait paths of `events`) */
    /* A link transport (msg NULL): not in the table of transports.c, the
     * scenarios of its link name it. */
    const bench_link_ops *link;
} bench_transport;

/* n operations of cell c on link (c->t->link->run): 0, > 0, < 0 as run. */
static inline int bench_link_run(void *link, const bench_link_cell *c, uint32_t n,
                                 uint64_t *samples, size_t *np)
{
    return c->t->link->run(link, c, n, samples, np);
}

/* Ops of a transport file whose functions are <p>_setup, <p>_attach,
 * <p>_send, <p>_detach and <p>_teardown; the optional members follow. */
#define BENCH_MSG_OPS(p, ...)                                                                      \
    {                                                                                              \
        .setup = p##_setup, .attach = p##_attach, .send = p##_send, .detach = p##_detach,          \
        .teardown = p##_teardown, __VA_ARGS__                                                      \
    }

/* The message ops of the transport files (transports.c names the
 * transports built on them); the variants of the kernel IPC ops. */
extern const bench_msg_ops bench_ops_raw, bench_ops_raw_copy2, bench_ops_mdcom_copy,
    bench_ops_mdcom_zc, bench_ops_smem, bench_ops_kernel, bench_ops_rpmsg, bench_ops_iceoryx,
    bench_ops_openamp;
enum { BENCH_K_PIPE, BENCH_K_STREAM, BENCH_K_SEQPACKET, BENCH_K_MQ };

/* Largest payload of t on this machine (UINT32_MAX: no limit of its own). */
uint32_t bench_tr_max_size(const bench_transport *t);
/* Smallest round-trip payload of t (4 when only its header travels, and for
 * external programs). */
static inline uint32_t bench_tr_min_size(const bench_transport *t)
{
    return !t->msg || t->msg->header_only ? 4u : 1u;
}
/* 1 when t carries whole messages (streams, blocks, one way). */
static inline int bench_tr_carries(const bench_transport *t)
{
    return t->msg && !t->msg->header_only && !t->msg->round_trips_only;
}

/* All transports, in report order. */
extern const bench_transport *const bench_transports[];
extern const unsigned bench_n_transports;
const bench_transport *bench_transport_find(const char *name);
/* Index of the transport called name in tr[0..n), or -1 (name NULL: -1). */
int bench_tr_index(const bench_transport *const *tr, unsigned n, const char *name);
/* The mdcom transport a row is compared with: the copy API of its wait class. */
const char *bench_mdcom_ref(const bench_transport *t);
/* The two ratio columns of a result row: "1.23x <baseline>" (or "(baseline)")
 * and the ratio to bench_mdcom_ref(t); "-" where not measured. */
void bench_fmt_ratios(char *rb, size_t lb, char *rm, size_t lm, const bench_transport *t,
                      double r_base, double r_mdcom);

/* ---- Runner ---------------------------------------------------------------------------------- */
typedef struct bench_rt_opts {
    uint32_t size, max_size;
    uint64_t samples;       /* round trips to record                         */
    uint64_t warmup;        /* round trips before recording (not recorded)   */
    uint64_t budget_ns;     /* stop recording after this long; 0 = no limit;
                            warm-up stops after a quarter of it          */
    int64_t timeout_ns;     /* per wait; also bounds the peer's exit        */
    int cpu_ping, cpu_pong; /* -1 = not pinned                           */
    /* one way: side B copies each message out, writes the time it arrived
     * to t1[seq - 1] (MAP_SHARED, warmup + samples entries) and answers
     * with a 4-byte ack; the samples are then the send times (t0) */
    uint64_t *t1;
} bench_rt_opts;

typedef struct bench_rt_result {
    bench_stats st; /* of the recorded round trips                */
    uint64_t warmup_done;
    int ok;             /* 1: no error on either side                 */
    unsigned integrity; /* integrity errors (mismatches), both sides  */
    unsigned failures;  /* API / system errors, both sides            */
    unsigned timeouts;  /* waits past the timeout (not failures)      */
    int na;             /* setup said -EMSGSIZE: size not supported   */
    double load;        /* load average when the last chunk started   */
    char why[320];      /* what timed out (bench_timeouts.why), or
                              after a retry, in both attempts            */
} bench_rt_result;

/* Run one chunk of a cell in a fresh process pair and fresh transport state:
 * up to o->samples round trips appended to buf[*n...] (buf has room for
 * o->samples more). Adds to r's counters (warmup_done, integrity,
 * failures, timeouts; why and load); does not touch r->st or r->ok.
 * Returns 0 when the chunk was clean, -1 otherwise (messages printed). */
int bench_rt_chunk(const bench_transport *t, const bench_rt_opts *o, uint64_t *buf, size_t *n,
                   bench_rt_result *r);

/* External transports (tr_ext.c): one chunk of round trips, as
 * bench_rt_chunk (which calls this for them), and one streaming cell: 0,
 * BENCH_RT_MISMATCH, BENCH_SESSION_NA (not built) or -1. */
int bench_ext_chunk(const bench_transport *t, const bench_rt_opts *o, uint64_t *samples, size_t *np,
                    bench_rt_result *r);
typedef struct bench_ext_stream_res {
    uint64_t msgs, bytes, wall_ns, lost, corrupt;
} bench_ext_stream_res;
int bench_ext_stream(const bench_transport *t, uint32_t size, uint64_t msgs, uint32_t window,
                     uint64_t budget_ns, int cpu_a, int cpu_b, bench_ext_stream_res *res);

/* Parse "a,b,c" ("all" / NULL: every transport, "-x" leaves x out of what the
 * list has so far (nothing when x is not built here); with need_msg only those
 * that carry whole messages (bench_tr_carries); need_msg 2: or an external
 * program) into out[0..*np), at most max. 0, or -1 (printed). */
int bench_parse_transports(const char *list, const bench_transport **out, unsigned *np,
                           unsigned max, int need_msg, const char *cmd);
/* "  name   description" lines for --help. */
void bench_list_transports(FILE *out, int need_msg);

/* Wait for child pid at most timeout_ns, then SIGKILL it. Its exit code, or
 * -1 when it had to be killed or died of a signal (printed). */
int bench_reap(pid_t pid, int64_t timeout_ns, const char *tname);
/* Run fn(arg) in a child process whose exit status is fn's (fn may exec;
 * it must _exit if exec fails). The child's stdout is a pipe read here:
 * copied to tee (when set) and to *out (malloc'ed, *len bytes and a NUL,
 * when out is set; NULL when the child wrote nothing). Then
 * bench_reap(timeout_ns) (timeout_ns < 0: wait, and 128 + the signal for a
 * child killed by one). The exit status, or -1 (printed). */
int bench_child(int (*fn)(void *), void *arg, FILE *tee, char **out, size_t *len,
                int64_t timeout_ns, const char *name);

/* ---- Two-process sessions over the message interface (roundtrip.c) --------------------------- */
/* fn runs in the process of `side` after attach; it returns 0,
 * BENCH_RT_MISMATCH or < 0. arg must live in MAP_SHARED memory for results
 * the child writes (bench_shared_alloc). */
typedef int (*bench_side_fn)(const bench_msg_ops *ops, void *ctx, int side, void *arg);

/* Waits that ran past the timeout in a session (bench_msg_job.to): a busy
 * machine, not a wrong message, so counted apart from the failures; why
 * says which side and how long it waited (the first one). */
typedef struct bench_timeouts {
    unsigned n;
    char why[112];
} bench_timeouts;

typedef struct bench_msg_job {
    const bench_transport *t;
    bench_msg_params p;
    int cpu_a, cpu_b; /* -1: not pinned                            */
    bench_side_fn fn_a, fn_b;
    void *arg;
    bench_timeouts *to; /* NULL: a timeout is a failure like any other   */
} bench_msg_job;

/* setup, fork, pin, attach, run fn_a / fn_b, detach, reap, teardown.
 * Integrity errors (BENCH_RT_MISMATCH of either side) and other failures
 * are added to *integrity and *failures; with j->to, a side that returned
 * -ETIMEDOUT (and nothing worse) is added to j->to instead. 0 when clean, -1 otherwise, and
 * BENCH_SESSION_NA when setup said -EMSGSIZE or -EDQUOT (size or a limit of
 * this machine: reported n/a, not an error). */
#define BENCH_SESSION_NA (-2)
int bench_msg_session(const bench_msg_job *j, unsigned *integrity, unsigned *failures);
/* A job on cpus a and b: n_chan channels used by n_chan threads a side,
 * messages up to max_size bytes, depth per direction. */
bench_msg_job bench_job(const bench_transport *t, int cpu_a, int cpu_b, uint32_t n_chan,
                        uint32_t max_size, uint32_t depth, double timeout_s, bench_side_fn fn_a,
                        bench_side_fn fn_b, void *arg);

/* Receive one message: ops->recv, or peek, copy, release. */
int bench_recv(const bench_msg_ops *ops, void *ctx, int side, uint32_t ch, void *buf, uint32_t cap);

/* Round trips in a session (roundtrip.c): bench_rt_serve is side B's
 * function (arg: a bench_rt_side; it answers until STOP); side A calls
 * bench_rt_one per round trip (seq + 1, checked) and bench_rt_stop at the
 * end. bench_rt_side_init allocates the buffer (free(buf) after). */
typedef struct bench_rt_side {
    uint32_t size, seq;
    unsigned char *buf;
    uint64_t *t1; /* one way (bench_rt_opts.t1), or NULL */
} bench_rt_side;
int bench_rt_side_init(bench_rt_side *s, uint32_t size);
int bench_rt_serve(const bench_msg_ops *ops, void *ctx, int side, void *arg);
int bench_rt_one(const bench_msg_ops *ops, void *ctx, int side, bench_rt_side *s);
int bench_rt_stop(const bench_msg_ops *ops, void *ctx, int side, bench_rt_side *s);

/* Zeroed MAP_SHARED memory inherited by the child; NULL on failure. */
void *bench_shared_alloc(size_t len);
void bench_shared_free(void *p, size_t len);

/* Time left until *deadline, which the first call (*deadline 0) sets to now
 * + timeout_ns; <= 0 once it has passed. */
static inline int64_t bench_left_ns(uint64_t *deadline, int64_t timeout_ns)
{
    uint64_t now = bench_now_ns();
    if (!*deadline)
        *deadline = now + (uint64_t)timeout_ns;
    return (int64_t)(*deadline - now);
}

static inline uint32_t bench_head(const void *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}

/* seq in a message of any size >= 1: the first min(4, size) bytes (LE) and,
 * for size >= 8, the last 4. */
static inline void bench_stamp_any(unsigned char *p, uint32_t size, uint32_t seq)
{
    uint32_t n = size < 4 ? size : 4;
    for (uint32_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seq >> (8 * i));
    if (size >= 8)
        __builtin_memcpy(p + size - 4, &seq, 4);
}
static inline int bench_check_any(const unsigned char *p, uint32_t size, uint32_t seq)
{
    uint32_t n = size < 4 ? size : 4;
    for (uint32_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seq >> (8 * i)))
            return 0;
    if (size >= 8) {
        uint32_t t;
        __builtin_memcpy(&t, p + size - 4, 4);
        if (t != seq)
            return 0;
    }
    return 1;
}

#endif /* MDCOM_BENCH_TRANSPORT_H */
