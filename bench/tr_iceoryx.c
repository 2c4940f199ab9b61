/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_iceoryx.c - Eclipse iceoryx (2.x, C binding) as a peer message transport,
 * built when CMake finds iceoryx_binding_c (MDCOM_BENCH_ICEORYX). Starts its
 * own iox-roudi; every port of both sides is made in the parent before fork
 * (iceoryx 2.0's runtime is a per-process singleton a child inherits).
 * Method: docs/benchmarks.md, "Transports" (iceoryx).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iceoryx_binding_c/log.h"
#include "iceoryx_binding_c/publisher.h"
#include "iceoryx_binding_c/runtime.h"
#include "iceoryx_binding_c/subscriber.h"
#include "iceoryx_binding_c/wait_set.h"

#include "transport.h"

#ifndef MDCOM_BENCH_IOX_ROUDI
#define MDCOM_BENCH_IOX_ROUDI "iox-roudi"
#endif

#define IOX_HDR 8u                 /* u32 length + u32 pad (alignment) */
#define IOX_QUEUE 256u             /* MAX_SUBSCRIBER_QUEUE_CAPACITY of 2.0 */
#define IOX_START_NS 10000000000LL /* RouDi start-up                  */
#define IOX_MATCH_NS 5000000000LL  /* publisher/subscriber matching   */

/* Mempools of our RouDi: user payload sizes (IOX_HDR + message, with room
 * for the chunk header; the largest bounds messages to 4 MiB, the limit in
 * transports.c) x counts, ~71 MiB of shared memory. Counts of at most
 * IOX_QUEUE keep one size class from overrunning a queue. */
static const char iox_config[] = "[general]\nversion = 1\n\n[[segment]]\n\n"
                                 "[[segment.mempool]]\nsize = 256\ncount = 256\n\n"
                                 "[[segment.mempool]]\nsize = 1088\ncount = 256\n\n"
                                 "[[segment.mempool]]\nsize = 4160\ncount = 256\n\n"
                                 "[[segment.mempool]]\nsize = 16448\ncount = 256\n\n"
                                 "[[segment.mempool]]\nsize = 65600\ncount = 256\n\n"
                                 "[[segment.mempool]]\nsize = 262208\ncount = 64\n\n"
                                 "[[segment.mempool]]\nsize = 1048640\ncount = 16\n\n"
                                 "[[segment.mempool]]\nsize = 4194368\ncount = 4\n";

/* ---- the daemon and this process's runtime ------------------------------------ */

static pid_t roudi_pid = -1;
static pid_t roudi_owner = -1; /* the process that started it (forks inherit the atexit) */
static char roudi_dir[64] = "/tmp/mdb-iox-XXXXXX", roudi_cfg[96], roudi_log[96];
static int roudi_state; /* 0 not tried, 1 running + runtime registered, -errno failed */

static void roudi_kill(void)
{
    if (roudi_pid <= 0)
        return;
    kill(roudi_pid, SIGTERM);
    bench_reap(roudi_pid, 3000000000ll, "iox-roudi"); /* SIGKILL after 3 s */
    roudi_pid = -1;
}

/* atexit: registered before the runtime is created, so it runs after the
 * runtime's own exit handler has unregistered this process from RouDi (RouDi
 * would otherwise signal its registered applications when it stops). */
static void roudi_atexit(void)
{
    if (getpid() != roudi_owner)
        return; /* a forked child: the daemon is not its to stop */
    roudi_kill();
    unlink(roudi_cfg);
    unlink(roudi_log);
    rmdir(roudi_dir);
}

/* The lines of RouDi's log that tell why it failed, without its colour
 * escapes (ESC [ ... m), which would land in redirected output. */
static void roudi_log_tail(void)
{
    FILE *f = fopen(roudi_log, "r");
    char line[256];
    int busy = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char *w = line;
        for (const char *r = line; *r && *r != '\n'; r++) {
            if (*r != '\033' || r[1] != '[') {
                *w++ = *r;
                continue;
            }
            r += 2 + strspn(r + 2, "0123456789;"); /* at the final letter, skipped */
            if (!*r || *r == '\n')
                break; /* cut off by the line's end */
        }
        *w = '\0';
        busy |= strstr(line, "is RouDi still running") != NULL;
        if (strstr(line, "rror") || strstr(line, "running") || strstr(line, "ailed"))
            bench_err("iceoryx: iox-roudi: %s", line);
    }
    if (f)
        fclose(f);
    if (busy)
        bench_err("iceoryx: another iox-roudi runs on this machine (one per machine, e.g. another "
                  "benchmark's): run the iceoryx cells when it has stopped");
}

/* Start RouDi (once) with our config in a fresh directory, wait until it is
 * ready, and register this process's runtime. 0 or -errno (printed). */
static int roudi_start(void)
{
    if (roudi_state)
        return roudi_state > 0 ? 0 : roudi_state;
    if (!mkdtemp(roudi_dir)) {
        bench_err("iceoryx: mkdtemp: %s", strerror(errno));
        return roudi_state = -errno;
    }
    snprintf(roudi_cfg, sizeof(roudi_cfg), "%s/roudi.toml", roudi_dir);
    snprintf(roudi_log, sizeof(roudi_log), "%s/roudi.log", roudi_dir);
    roudi_owner = getpid();
    atexit(roudi_atexit);
    FILE *f = fopen(roudi_cfg, "w");
    if (!f || fputs(iox_config, f) < 0 || fclose(f) != 0) {
        bench_err("iceoryx: cannot write %s", roudi_cfg);
        return roudi_state = -EIO;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        bench_err("iceoryx: fork: %s", strerror(errno));
        return roudi_state = -errno;
    }
    if (pid == 0) {
        /* dies with the benchmark, whichever way it ends */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != roudi_owner)
            _exit(127);
        int fd = open(roudi_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        signal(SIGINT, SIG_IGN); /* ^C goes to the benchmark, which stops it */
        execlp(MDCOM_BENCH_IOX_ROUDI, MDCOM_BENCH_IOX_ROUDI, "-c", roudi_cfg, "-l", "warning", "-m",
               "off", (char *)NULL);
        fprintf(stderr, "exec %s: %s\n", MDCOM_BENCH_IOX_ROUDI, strerror(errno));
        _exit(127);
    }
    roudi_pid = pid;
    for (uint64_t deadline = bench_now_ns() + (uint64_t)IOX_START_NS;;) {
        char *log = bench_read_file(roudi_log);
        int ready = log && strstr(log, "RouDi is ready"), st;
        free(log);
        if (ready)
            break;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            roudi_pid = -1;
            bench_err("iceoryx: %s %s %d before it was ready; log %s:", MDCOM_BENCH_IOX_ROUDI,
                      WIFEXITED(st) ? "exited with status" : "died of signal",
                      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), roudi_log);
            roudi_log_tail();
            return roudi_state = -ECONNREFUSED;
        }
        if (bench_now_ns() >= deadline) {
            bench_err("iceoryx: %s not ready after %lld s", MDCOM_BENCH_IOX_ROUDI,
                      (long long)(IOX_START_NS / 1000000000LL));
            roudi_log_tail();
            roudi_kill();
            return roudi_state = -ETIMEDOUT;
        }
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    char name[64];
    snprintf(name, sizeof(name), "mdb-bench-%ld", (long)getpid());
    /* the runtime logs (coloured) to stderr: warnings and errors only */
    iox_set_loglevel(Iceoryx_LogLevel_Warn);
    iox_runtime_init(name); /* RouDi is up: registers at once */
    roudi_state = 1;
    return 0;
}

/* ---- transport ---------------------------------------------------------------- */

/* [d][ch]: the direction d (0 A -> B, 1 B -> A) of channel ch; side s waits
 * in ws[s][ch] for sub[s ^ 1][ch]. */
struct ictx {
    uint32_t n, max;
    int64_t timeout_ns;
    iox_pub_storage_t pub_st[2][BENCH_MAX_CHAN];
    iox_sub_storage_t sub_st[2][BENCH_MAX_CHAN];
    iox_ws_storage_t ws_st[2][BENCH_MAX_CHAN];
    iox_pub_t pub[2][BENCH_MAX_CHAN];
    iox_sub_t sub[2][BENCH_MAX_CHAN];
    iox_ws_t ws[2][BENCH_MAX_CHAN];
};

static int i_fail(const char *what, int err)
{
    bench_err("iceoryx: %s: %s", what, strerror(err));
    return -err;
}

/* The WaitSet first, then the subscriber it waits on. */
static void i_teardown(void *ctx)
{
    struct ictx *c = ctx;
    for (int d = 0; d < 2; d++)
        for (uint32_t i = 0; i < BENCH_MAX_CHAN; i++) {
            if (c->ws[d ^ 1][i])
                iox_ws_deinit(c->ws[d ^ 1][i]);
            if (c->sub[d][i])
                iox_sub_deinit(c->sub[d][i]);
            if (c->pub[d][i])
                iox_pub_deinit(c->pub[d][i]);
        }
    free(c);
}

/* The ports of channel i, direction d, in the service instance inst: the
 * publisher, the subscriber and the receiving side's WaitSet. 0 or < 0. */
static int i_ports(struct ictx *c, const char *inst, uint32_t i, int d)
{
    iox_pub_options_t po;
    iox_sub_options_t so;
    char ev[16];
    iox_pub_options_init(&po);
    po.historyCapacity = 0;
    po.offerOnCreate = true;
    po.subscriberTooSlowPolicy = ConsumerTooSlowPolicy_DISCARD_OLDEST_DATA;
    iox_sub_options_init(&so);
    so.queueCapacity = IOX_QUEUE;
    so.historyRequest = 0;
    so.subscribeOnCreate = true;
    so.queueFullPolicy = QueueFullPolicy_DISCARD_OLDEST_DATA;
    snprintf(ev, sizeof(ev), "%c%u", d ? 'b' : 'a', i);
    c->pub[d][i] = iox_pub_init(&c->pub_st[d][i], "mdb", inst, ev, &po);
    c->sub[d][i] = iox_sub_init(&c->sub_st[d][i], "mdb", inst, ev, &so);
    if (!c->pub[d][i] || !c->sub[d][i])
        return i_fail("creating a publisher/subscriber", ENOMEM);
    c->ws[d ^ 1][i] = iox_ws_init(&c->ws_st[d ^ 1][i]);
    if (!c->ws[d ^ 1][i] ||
        iox_ws_attach_subscriber_state(c->ws[d ^ 1][i], c->sub[d][i], SubscriberState_HAS_DATA, 0,
                                       NULL) != WaitSetResult_SUCCESS)
        return i_fail("creating a WaitSet", ENOMEM);
    return 0;
}

static int i_setup(void **out, const bench_msg_params *p)
{
    static unsigned seq; /* names stay unique within this process */
    char inst[64];
    int rc = roudi_start();
    if (rc != 0)
        return rc;
    struct ictx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->n = p->n_chan;
    c->max = p->max_size;
    c->timeout_ns = p->timeout_ns;
    snprintf(inst, sizeof(inst), "%s-%u", p->name, seq++);
    for (uint32_t k = 0; rc == 0 && k < 2 * c->n; k++)
        rc = i_ports(c, inst, k / 2, k & 1);
    /* RouDi connects offered publishers and subscribers in its discovery
     * loop: wait until every pair is connected, before anything is sent. */
    uint64_t deadline = bench_now_ns() + (uint64_t)IOX_MATCH_NS;
    for (uint32_t k = 0; rc == 0 && k < 2 * c->n; k++)
        while (rc == 0 && (!iox_pub_has_subscribers(c->pub[k & 1][k / 2]) ||
                           iox_sub_get_subscription_state(c->sub[k & 1][k / 2]) !=
                               SubscribeState_SUBSCRIBED)) {
            if (bench_now_ns() >= deadline)
                rc = i_fail("publisher and subscriber not connected by RouDi", ETIMEDOUT);
            else
                nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
    if (rc != 0)
        i_teardown(c);
    else
        *out = c;
    return rc;
}

/* Everything is made before fork, and deinited by the parent in teardown. */
static int i_attach(void *ctx, int side)
{
    (void)ctx;
    (void)side;
    return 0;
}

static void i_detach(void *ctx, int side)
{
    (void)ctx;
    (void)side;
}

/* Side s publishes on the direction s. */
static int i_send(void *ctx, int side, uint32_t ch, const void *buf, uint32_t len)
{
    struct ictx *c = ctx;
    void *chunk = NULL;
    uint64_t deadline = 0;
    for (;;) {
        enum iox_AllocationResult r = iox_pub_loan_chunk(c->pub[side][ch], &chunk, IOX_HDR + len);
        if (r == AllocationResult_SUCCESS)
            break;
        if (r != AllocationResult_RUNNING_OUT_OF_CHUNKS) {
            bench_err("iceoryx: loan of %u bytes failed (result %d)", IOX_HDR + len, (int)r);
            return r == AllocationResult_NO_MEMPOOLS_AVAILABLE ? -EMSGSIZE : -EIO;
        }
        /* every chunk of this size is in flight: the receiver frees one */
        if (bench_left_ns(&deadline, c->timeout_ns) <= 0)
            return i_fail("loan (waiting for a free chunk)", ETIMEDOUT);
        sched_yield();
    }
    memcpy(chunk, &len, 4);
    memset((unsigned char *)chunk + 4, 0, 4);
    memcpy((unsigned char *)chunk + IOX_HDR, buf, len);
    iox_pub_publish_chunk(c->pub[side][ch], chunk);
    return 0;
}

static int i_recv(void *ctx, int side, uint32_t ch, void *buf, uint32_t cap)
{
    struct ictx *c = ctx;
    iox_sub_t sub = c->sub[side ^ 1][ch];
    uint64_t deadline = 0;
    for (;;) {
        const void *chunk = NULL;
        enum iox_ChunkReceiveResult r = iox_sub_take_chunk(sub, &chunk);
        if (r == ChunkReceiveResult_SUCCESS) {
            uint32_t len;
            memcpy(&len, chunk, 4); /* read once, checked before use */
            if (len > cap || len > c->max) {
                iox_sub_release_chunk(sub, chunk);
                bench_err("iceoryx: message length %u exceeds the buffer (%u)", len, cap);
                return -EBADMSG;
            }
            memcpy(buf, (const unsigned char *)chunk + IOX_HDR, len);
            iox_sub_release_chunk(sub, chunk);
            if (iox_sub_has_lost_chunks(sub)) {
                bench_err("iceoryx: subscriber queue overflowed: messages lost");
                return -EPROTO;
            }
            return (int)len;
        }
        if (r != ChunkReceiveResult_NO_CHUNK_AVAILABLE) {
            bench_err("iceoryx: take failed (result %d)", (int)r);
            return -EIO;
        }
        int64_t left = bench_left_ns(&deadline, c->timeout_ns);
        uint64_t missed = 0;
        if (left <= 0)
            return i_fail("receive", ETIMEDOUT);
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        iox_notification_info_t info[1];
        iox_ws_timed_wait(c->ws[side][ch], ts, info, 1, &missed);
    }
}

const bench_msg_ops bench_ops_iceoryx = BENCH_MSG_OPS(i, .recv = i_recv);
