/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reap.c - `mdcom-bench reap`: what a dead sender costs the survivor. A
 * child fills a channel of N blocks and is killed; the parent times
 * mdcom_sense_process with and without the dead peer, then receives all N
 * messages in order. Method: docs/benchmarks.md, `reap`.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mdcfg.h"
#include "transport.h"

#define RP_MAX_DEPTHS 8
#define RP_MSG 64u

typedef struct rp_opts {
    const char *depths_s, *json, *csv;
    uint32_t depths[RP_MAX_DEPTHS];
    int n_depths;
    uint32_t reps, calls;
    double timeout_s;
    int quick;
} rp_opts;

typedef struct rp_cell {
    uint32_t depth;
    uint64_t reap_ns[16]; /* one per repetition */
    uint32_t reps_done;
    bench_stats reap, before, after;
    uint64_t received, expected;
    int ok;
} rp_cell;

static const bench_opt rp_tab[] = {
    BOPT(rp_opts, depths_s, "depths", BO_STR, 0, 0, "LIST",
         "messages the dead sender leaves queued (= blocks of the\nchannel; default 1K,64K)"),
    BOPT(rp_opts, reps, "reps", BO_U32, 1, 16, "N", "kills per depth (default 3, --quick 1)"),
    BOPT(rp_opts, calls, "calls", BO_U32, 1, 1e6, "N",
         "timed calls without a dead peer, before and after\n(default 1000, --quick 100)"),
    BENCH_TIMEOUT_OPT(rp_opts),
    BENCH_OUT_OPTS(rp_opts),
    {0},
};

/* The sender: fill the channel, say so, wait to be killed. */
static void rp_child(bench_mdreg *reg, uint32_t depth, int wfd, int64_t timeout_ns)
{
    mdcom_fifoch_t *tx;
    if (bench_mdreg_attach(reg, BENCH_SIDE_B, timeout_ns, "reap (sender)") != 0)
        _exit(BENCH_EXIT_ERROR);
    int rc = mdcom_fifoch_open(reg->remote, reg->mc.names[1], &tx);
    for (uint32_t seq = 1; rc == 0 && seq <= depth; seq++) {
        uint32_t id, bsize;
        void *p;
        rc = mdcom_fifoch_alloc(tx, &id);
        if (rc == 0)
            rc = mdcom_fifoch_get(tx, id, &p, &bsize);
        if (rc == 0) {
            memset(p, 0x5a, RP_MSG);
            bench_stamp_any(p, RP_MSG, seq);
            rc = mdcom_fifoch_enqueue(tx, id, RP_MSG);
        }
    }
    if (rc != 0) {
        bench_err_mdcom("reap: the sender's fill", rc);
        _exit(BENCH_EXIT_ERROR);
    }
    if (write(wfd, "F", 1) != 1)
        _exit(BENCH_EXIT_ERROR);
    for (;;)
        pause(); /* killed here, attached, with the queue full */
}

/* K timed calls of mdcom_sense_process(m, b); each must count `live`. */
static int rp_calls(mdcom_t *m, uint32_t k, int live, bench_stats *st)
{
    uint64_t *s = malloc((size_t)k * sizeof(*s));
    int rc = s ? 0 : -ENOMEM;
    for (uint32_t i = 0; i < k && rc == 0; i++) {
        uint64_t t0 = bench_now_ns();
        int n = mdcom_sense_process(m, 1);
        s[i] = bench_now_ns() - t0;
        if (n != live) {
            bench_err("reap: mdcom_sense_process gave %d, expected %d", n, live);
            rc = n < 0 ? n : -EPROTO;
        }
    }
    bench_stats_compute(s, rc ? 0 : k, st);
    free(s);
    return rc;
}

/* One kill at depth c->depth. 0, or -1 (printed). */
static int rp_once(const rp_opts *o, rp_cell *c, int first)
{
    static bench_mdreg reg; /* outlives the attachments */
    char name[32];
    mdcom_fifoch_t *rx;
    int pfd[2] = {-1, -1}, ret = -1;
    pid_t pid = -1;
    bench_unique_name(name, sizeof(name), "mdbr");
    bench_mdcfg_fill(&reg.mc, name, 1, MDCOM_CHAN_FIFO, RP_MSG, c->depth);
    if (bench_mdreg_attach(&reg, BENCH_SIDE_A, 0, "reap (survivor)") != 0)
        return -1;
    mdcom_t *m = reg.master;
    if (mdcom_fifoch_open(m, reg.mc.names[1], &rx) != 0 || pipe(pfd) != 0) {
        bench_err("reap: open/pipe failed");
        goto out;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        signal(SIGINT, SIG_IGN);
        rp_child(&reg, c->depth, pfd[1], (int64_t)(o->timeout_s * 1e9));
    }
    close(pfd[1]);
    char ch = 0;
    struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
    if (pid < 0 || poll(&pf, 1, (int)(o->timeout_s * 1000) + 10000) != 1 ||
        read(pfd[0], &ch, 1) != 1 || ch != 'F') {
        bench_err("reap: the sender did not fill its channel");
        goto out;
    }
    bench_stats before, after;
    if (rp_calls(m, o->calls, 1, &before) != 0)
        goto out;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    uint64_t t0 = bench_now_ns();
    int n = mdcom_sense_process(m, 1);
    c->reap_ns[c->reps_done++] = bench_now_ns() - t0;
    if (n != 0) {
        bench_err("reap: mdcom_sense_process after the kill gave %d, expected 0", n);
        goto out;
    }
    if (rp_calls(m, o->calls, 0, &after) != 0)
        goto out;
    if (first) { /* the cell reports the first repetition's call distributions */
        c->before = before;
        c->after = after;
    }
    /* every message the dead sender queued arrives, in order, then nothing */
    unsigned char buf[RP_MSG];
    uint32_t got = 0;
    int len;
    while ((len = mdcom_fifoch_recv(rx, buf, sizeof(buf), MDCOM_POLL)) >= 0) {
        if ((uint32_t)len != RP_MSG || !bench_check_any(buf, RP_MSG, got + 1)) {
            bench_err("reap: message %u: length %d or stamps wrong", got + 1, len);
            break;
        }
        got++;
    }
    c->received += got;
    c->expected += c->depth;
    ret = got == c->depth ? 0 : -1;
    if (ret)
        bench_err("reap: %u of %u queued messages received", got, c->depth);
out:
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (pfd[0] >= 0)
        close(pfd[0]);
    bench_mdreg_detach(&reg, BENCH_SIDE_A, "reap (survivor)");
    return ret;
}

/* p50 of the reaping call / p50 of the calls in base, NaN unmeasured */
static double rp_ratio(const rp_cell *c, const bench_stats *base)
{
    return c->reap.n && base->n ? (double)c->reap.p50 / (double)base->p50 : NAN;
}

static rp_cell rp_cells[RP_MAX_DEPTHS];

static void rp_json_config(bench_json *j, void *arg)
{
    const rp_opts *o = arg;
    bench_json_u64(j, "reps", o->reps);
    bench_json_u64(j, "calls", o->calls);
    bench_json_u64(j, "message_size", RP_MSG);
}

static void rp_rows(bench_row *w, void *arg)
{
    const rp_opts *o = arg;
    for (int d = 0; d < o->n_depths; d++) {
        const rp_cell *c = &rp_cells[d];
        if (!w->j && !c->ok)
            continue;
        w->k = (bench_csv_key){.scenario = "reap",
                               .transport = "mdcom",
                               .mode = "sense_process",
                               .size = RP_MSG,
                               .channels = 1,
                               .n = c->depth};
        bench_json_obj_begin(w->j, NULL);
        bench_json_u64(w->j, "queued", c->depth);
        bench_json_bool(w->j, "ok", c->ok);
        bench_json_arr_begin(w->j, "reap_ns");
        for (uint32_t r = 0; r < c->reps_done; r++)
            bench_json_u64(w->j, NULL, c->reap_ns[r]);
        bench_json_arr_end(w->j);
        bench_json_stats(w->j, "reap", &c->reap);
        bench_json_stats(w->j, "alive", &c->before);
        bench_json_stats(w->j, "after", &c->after);
        bench_row_num(w, NULL, "reap_p50", (double)c->reap.p50, "ns");
        bench_row_num(w, NULL, "reap_max", (double)c->reap.max, "ns");
        bench_row_num(w, NULL, "alive_p50", (double)c->before.p50, "ns");
        bench_row_num(w, NULL, "after_p50", (double)c->after.p50, "ns");
        bench_row_num(w, "ratio", "reap_ratio_alive", rp_ratio(c, &c->before), "x");
        bench_row_num(w, "ratio_after", "reap_ratio_after", rp_ratio(c, &c->after), "x");
        bench_json_u64(w->j, "received", c->received);
        bench_json_u64(w->j, "expected", c->expected);
        bench_json_obj_end(w->j);
    }
}

static int rp_main(int argc, char **argv)
{
    rp_opts o = {.timeout_s = 5};
    int prc = bench_parsed(bench_opts_parse("reap", rp_tab, &o, argc, argv), &bench_cmd_reap);
    if (prc >= 0)
        return prc;
    o.n_depths = bench_parse_size_list(o.depths_s ? o.depths_s : "1K,64K", o.depths, RP_MAX_DEPTHS,
                                       2, MDCOM_MAX_BLOCKS, "--depths");
    if (o.n_depths < 0)
        return bench_parsed(-1, &bench_cmd_reap);
    if (!o.reps)
        o.reps = o.quick ? 1 : 3;
    if (!o.calls)
        o.calls = o.quick ? 100 : 1000;
    bench_run rn = BENCH_RUN("reap", o, .json_config = rp_json_config, .rows = rp_rows, .arg = &o);
    if (bench_run_begin(&rn))
        return BENCH_EXIT_USAGE;
    bench_progress_plan((uint64_t)o.n_depths * o.reps);
    for (int d = 0; d < o.n_depths && !bench_interrupted; d++) {
        rp_cell *c = &rp_cells[d];
        memset(c, 0, sizeof(*c));
        c->depth = o.depths[d];
        c->ok = 1;
        for (uint32_t r = 0; r < o.reps && !bench_interrupted; r++) {
            bench_progress("reap: %u queued, kill %u of %u", c->depth, r + 1, o.reps);
            if (rp_once(&o, c, r == 0) != 0) {
                c->ok = 0;
                rn.failures++;
                break;
            }
        }
        uint64_t tmp[16];
        memcpy(tmp, c->reap_ns, sizeof(tmp));
        bench_stats_compute(tmp, c->reps_done, &c->reap);
    }
    bench_progress_end();

    char b1[24], b2[24], b3[24];
    fprintf(rn.out,
            "\n== reap: the survivor's mdcom_sense_process after a sender with N messages "
            "queued was killed (SIGKILL) ==\n%-8s %5s %12s %12s %12s %15s  %s\n",
            "queued", "kills", "reap (p50)", "alive (p50)", "after (p50)", "ratio alv/aft",
            "received");
    for (int d = 0; d < o.n_depths; d++) {
        const rp_cell *c = &rp_cells[d];
        fprintf(rn.out, "%-8u %5u %12s %12s %12s %6.2fx /%6.2fx  %llu of %llu%s\n", c->depth,
                c->reps_done, bench_fmt_ns(b1, sizeof(b1), (double)c->reap.p50),
                bench_fmt_ns(b2, sizeof(b2), (double)c->before.p50),
                bench_fmt_ns(b3, sizeof(b3), (double)c->after.p50), rp_ratio(c, &c->before),
                rp_ratio(c, &c->after), (unsigned long long)c->received,
                (unsigned long long)c->expected, c->ok ? ", in order" : "  <- ERROR");
    }
    fprintf(rn.out,
            "reap: one call per kill; alive / after: %u calls with the sender alive / after "
            "it was reaped\n(alive includes probing the live sender's pid); ratio = reap / "
            "alive, reap / after.\n",
            o.calls);
    return bench_run_end(&rn, 0, NULL, 0, 0);
}

BENCH_CMD(reap, "reap", "the cost of reaping a dead sender with 1 Ki / 64 Ki messages queued",
          rp_main, .opts = rp_tab,
          .about = "The cost of reaping a dead sender: a child fills a channel of N blocks (N\n"
                   "messages queued) and is killed with SIGKILL; the parent times its next\n"
                   "mdcom_sense_process, which reaps it, against the same call with no dead\n"
                   "peer (same run, same full queue), then receives all N messages.\n",
          .more = "Exit status: 0 ok, 1 an API error or a message lost, 2 usage.\n");
