/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * out.c - what the scenario subcommands share: signal handling, host
 * description, progress line, CSV rows, output files, transport lists.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "mdcom/mdcom.h"
#include "transport.h"

/* the CMake build type (bench/CMakeLists.txt); unknown in other builds */
#ifndef MDCOM_BENCH_BUILD
#define MDCOM_BENCH_BUILD "unknown"
#endif

volatile sig_atomic_t bench_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    bench_interrupted = 1;
}

/* Mean cost of one bench_now_ns() call in ns, measured once: the best of a
 * few short runs (the call itself, not the interrupts that hit one of them). */
static double timer_overhead_ns(void)
{
    static double best = 1e9;
    static int done;
    for (int r = 0; r < 5 && !done; r++) {
        enum { N = 20000 };
        volatile uint64_t sink = 0;
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < N; i++)
            sink += bench_now_ns();
        (void)sink;
        double per = (double)(bench_now_ns() - t0) / N;
        if (per < best)
            best = per;
    }
    done = 1;
    return best;
}

/* The first two CPUs of this process' affinity mask. */
static void cpus_detect(bench_cpus *c)
{
    cpu_set_t set;
    long on = sysconf(_SC_NPROCESSORS_ONLN);
    *c = (bench_cpus){.n_online = on > 0 ? (int)on : 1, .cpu = {-1, -1}};
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        c->n_allowed = c->n_online;
        return;
    }
    c->n_allowed = CPU_COUNT(&set);
    int found = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
        if (CPU_ISSET(cpu, &set))
            c->cpu[found++] = cpu;
    c->pinned = found == 2;
    if (!c->pinned)
        c->cpu[0] = c->cpu[1] = -1;
}

double bench_loadavg(void)
{
    double v = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

void bench_host_detect(bench_host *h)
{
    memset(h, 0, sizeof(*h));
    snprintf(h->cpu_model, sizeof(h->cpu_model), "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "model name : %127[^\n]", h->cpu_model) == 1)
            break;
    if (f)
        fclose(f);
    struct utsname un;
    if (uname(&un) == 0) {
        snprintf(h->kernel, sizeof(h->kernel), "%s %s", un.sysname, un.release);
        snprintf(h->machine, sizeof(h->machine), "%s", un.machine);
    }
    cpus_detect(&h->cpus);
    h->timer_ns = timer_overhead_ns();
    /* other work on the machine at the start: part of every report's caption */
    h->loadavg = bench_loadavg();
    time_t now = time(NULL);
    struct tm tmv;
    strftime(h->date, sizeof(h->date), "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &tmv));
}

/* The header every subcommand prints: name, host, pinning, timer. */
static void host_print(FILE *out, const bench_host *h, const char *cmd, int quick, int no_pin)
{
    fprintf(out, "mdcom-bench %s (libmdcom %d.%d, wire %u)%s\n", cmd, MDCOM_VERSION_MAJOR,
            MDCOM_VERSION_MINOR, MDCOM_WIRE_VERSION, quick ? " --quick" : "");
    fprintf(out, "host: %s, %s, %d cpus online, %d allowed\n", h->cpu_model, h->kernel,
            h->cpus.n_online, h->cpus.n_allowed);
    if (no_pin)
        fprintf(out, "pinned: no (this process and the emulators it starts run where the kernel "
                     "puts them)\n");
    else if (h->cpus.pinned)
        fprintf(out, "pinned: yes (side A / ping on cpu %d, side B / pong on cpu %d)\n",
                h->cpus.cpu[0], h->cpus.cpu[1]);
    else
        fprintf(out, "pinned: NO (fewer than 2 cpus allowed: both sides share a cpu)\n");
    fprintf(out,
            "timer: clock_gettime(CLOCK_MONOTONIC), %.0f ns per read; load average %.2f at "
            "start (%s)\n",
            h->timer_ns, h->loadavg, h->date);
}

void bench_host_json(bench_json *j, const char *key, const bench_host *h)
{
    bench_json_obj_begin(j, key);
    bench_json_str(j, "cpu_model", h->cpu_model);
    bench_json_str(j, "kernel", h->kernel);
    bench_json_str(j, "machine", h->machine);
    bench_json_i64(j, "cpus_online", h->cpus.n_online);
    bench_json_i64(j, "cpus_allowed", h->cpus.n_allowed);
    bench_json_bool(j, "pinned", h->cpus.pinned);
    bench_json_i64(j, "cpu_a", h->cpus.cpu[0]);
    bench_json_i64(j, "cpu_b", h->cpus.cpu[1]);
    bench_json_dbl(j, "timer_overhead_ns", h->timer_ns);
    bench_json_dbl(j, "loadavg_1m", h->loadavg);
    bench_json_str(j, "date", h->date);
    bench_json_str(j, "build", MDCOM_BENCH_BUILD);
    bench_json_u64(j, "mdcom_version_major", MDCOM_VERSION_MAJOR);
    bench_json_u64(j, "mdcom_version_minor", MDCOM_VERSION_MINOR);
    bench_json_obj_end(j);
}

const char *bench_cell_status(int na, unsigned integrity, unsigned failures, unsigned timeouts)
{
    return na ? "n/a" : integrity ? "INTEGRITY" : failures ? "ERROR" : timeouts ? "TIMEOUT" : "ok";
}

int bench_retry(void (*attempt)(void *arg, double timeout_s, bench_try *t), void *arg,
                double timeout_s, const char *label, char *why, size_t len)
{
    bench_try t = {0};
    char first[160];
    attempt(arg, timeout_s, &t);
    snprintf(first, sizeof(first), "%s (load %.2f)", t.why, t.load);
    snprintf(why, len, "%s", t.timeouts ? first : "");
    if (!t.timeouts || t.worse || bench_interrupted)
        return 1;
    bench_err("%s: %s: retrying once with a %.3g s timeout", label, first, 2 * timeout_s);
    t = (bench_try){0};
    attempt(arg, 2 * timeout_s, &t);
    if (t.timeouts)
        snprintf(why, len, "%s; retried: %s (load %.2f)", first, t.why, t.load);
    else
        snprintf(why, len, "retried after: %s", first);
    return 2;
}

int bench_inject(const char *kind, const char *transport, uint64_t size)
{
    static char used[2][16];
    const char *v = getenv("MDCOM_BENCH_INJECT");
    char k[16], t[40];
    unsigned long long sz;
    int slot = strcmp(kind, "corrupt") != 0;
    if (!v || sscanf(v, "%15[^:]:%39[^:]:%llu", k, t, &sz) != 3 || strcmp(k, kind) != 0 ||
        strcmp(t, transport) != 0 || sz != size || used[slot][0])
        return 0;
    snprintf(used[slot], sizeof(used[slot]), "%s", kind);
    bench_err("MDCOM_BENCH_INJECT: %s in this cell (%s, %llu B): a self-test", kind, transport, sz);
    return 1;
}

/* ---- progress ------------------------------------------------------------------- */

static int progress_shown;
static uint64_t progress_last, progress_total, progress_step, progress_t0;

void bench_progress_plan(uint64_t steps)
{
    progress_total = steps;
    progress_step = 0;
    progress_t0 = bench_now_ns();
}

void bench_progress(const char *fmt, ...)
{
    char buf[240];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    /* the steps done so far give the time per step, hence the time left */
    if (progress_total && n > 0 && (size_t)n < sizeof(buf)) {
        uint64_t done = progress_step++;
        double el = (double)(bench_now_ns() - progress_t0) / 1e9;
        if (done && done < progress_total)
            snprintf(buf + n, sizeof(buf) - (size_t)n, "  [%llu/%llu, %.0f s left]",
                     (unsigned long long)done + 1, (unsigned long long)progress_total,
                     el / (double)done * (double)(progress_total - done));
        else
            snprintf(buf + n, sizeof(buf) - (size_t)n, "  [%llu/%llu]",
                     (unsigned long long)done + 1, (unsigned long long)progress_total);
    }
    if (isatty(2)) {
        fprintf(stderr, "\r%s\033[K", buf);
        progress_shown = 1;
    } else {
        uint64_t now = bench_now_ns();
        if (progress_last && now - progress_last < 10000000000ull)
            return;
        progress_last = now;
        fprintf(stderr, "mdcom-bench: %s\n", buf);
    }
    fflush(stderr);
}

void bench_progress_end(void)
{
    if (progress_shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    progress_shown = 0;
}

/* ---- CSV ---------------------------------------------------------------------- */

void bench_csv_header(FILE *f)
{
    fprintf(f, "scenario,transport,size,channels,mode,n,total_bytes,metric,value,unit\n");
}

static void csv_u(FILE *f, uint64_t v)
{
    if (v)
        fprintf(f, "%llu", (unsigned long long)v);
    fputc(',', f);
}

void bench_csv_row(FILE *f, const bench_csv_key *k, const char *metric, double value,
                   const char *unit)
{
    if (!f)
        return;
    fprintf(f, "%s,%s,", k->scenario ? k->scenario : "", k->transport ? k->transport : "");
    csv_u(f, k->size);
    csv_u(f, k->channels);
    fprintf(f, "%s,", k->mode ? k->mode : "");
    csv_u(f, k->n);
    csv_u(f, k->total);
    if (value != value) /* NaN: not measured */
        fprintf(f, "%s,,%s\n", metric, unit ? unit : "");
    else
        fprintf(f, "%s,%.6g,%s\n", metric, value, unit ? unit : "");
}

void bench_row_num(bench_row *w, const char *key, const char *metric, double v, const char *unit)
{
    if (key && v == floor(v) && fabs(v) < 9e15)
        bench_json_i64(w->j, key, (int64_t)v);
    else if (key)
        bench_json_dbl(w->j, key, v);
    if (metric && w->csv)
        bench_csv_row(w->csv, &w->k, metric, v, unit);
}

void bench_row_stats(bench_row *w, const char *key, const bench_stats *s)
{
    static const char *const name[] = {"min", "p50", "p90", "p99", "p99.9", "max"};
    const uint64_t v[] = {s->min, s->p50, s->p90, s->p99, s->p999, s->max};
    if (w->j)
        bench_json_stats(w->j, key, s);
    for (unsigned i = 0; w->csv && i < 6; i++)
        bench_csv_row(w->csv, &w->k, name[i], (double)v[i], "ns");
    if (w->csv) {
        bench_csv_row(w->csv, &w->k, "mean", s->mean, "ns");
        bench_csv_row(w->csv, &w->k, "stddev", s->stddev, "ns");
    }
}

FILE *bench_open_out(const char *path, const char *cmd)
{
    if (!path)
        return NULL;
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        bench_err("%s: cannot write %s: %s", cmd, path, strerror(errno));
    return f;
}

int bench_run_begin(bench_run *r)
{
    int to_stdout = (r->json && !strcmp(r->json, "-")) || (r->csv && !strcmp(r->csv, "-"));
    r->out = to_stdout ? stderr : stdout;
    r->jf = r->cf = NULL;
    r->t0 = bench_now_ns();
    if ((r->json && !(r->jf = bench_open_out(r->json, r->cmd))) ||
        (r->csv && !(r->cf = bench_open_out(r->csv, r->cmd))))
        return BENCH_EXIT_USAGE;
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bench_host_detect(&r->h);
    host_print(r->out, &r->h, r->cmd, r->quick, r->no_pin);
    if (r->no_pin)
        r->h.cpus.pinned = 0;
    else if (r->h.cpus.pinned)
        bench_pin_self(r->h.cpus.cpu[0]);
    return 0;
}

int bench_run_end(bench_run *r, int rc, const bench_target *tg, unsigned ntg, int strict)
{
    unsigned missed = 0;
    if (ntg)
        bench_targets_print(r->out, tg, ntg, &missed);
    double secs = (double)(bench_now_ns() - r->t0) / 1e9, load_end = bench_loadavg();
    fprintf(r->out, "errors: %u integrity, %u other; %.1f s total\n", r->integrity, r->failures,
            secs);
    if (r->timeouts)
        fprintf(r->out,
                "timeouts: %u of %u cells timed out twice (load average %.2f at start, %.2f now): "
                "a busy machine, not an integrity error%s\n",
                r->timeouts, r->cells, r->h.loadavg, load_end,
                bench_timeouts_too_many(r->cells, r->timeouts) ? "; more than 5 %: the run fails"
                                                               : "");
    fflush(r->out);
    if (r->jf) {
        bench_json j;
        bench_json_init(&j, r->jf);
        bench_json_obj_begin(&j, NULL);
        bench_json_str(&j, "benchmark", r->cmd);
        bench_host_json(&j, "host", &r->h);
        bench_json_obj_begin(&j, "config");
        bench_json_bool(&j, "quick", r->quick);
        if (r->json_config)
            r->json_config(&j, r->arg);
        bench_json_obj_end(&j);
        bench_row w = {.j = &j};
        if (r->rows) {
            bench_json_arr_begin(&j, r->rows_key ? r->rows_key : "results");
            r->rows(&w, r->arg);
            bench_json_arr_end(&j);
        }
        if (r->json_body)
            r->json_body(&j, r->arg);
        if (ntg)
            bench_targets_json(&j, tg, ntg);
        bench_json_u64(&j, "integrity_errors", r->integrity);
        bench_json_u64(&j, "failures", r->failures);
        bench_json_u64(&j, "cells", r->cells);
        bench_json_u64(&j, "timeouts", r->timeouts);
        bench_json_dbl(&j, "loadavg_end_1m", load_end);
        bench_json_dbl(&j, "seconds", secs);
        bench_json_obj_end(&j);
        bench_close_out(r->jf, r->json, &r->failures);
    }
    if (r->cf) {
        bench_row w = {.csv = r->cf};
        bench_csv_header(r->cf);
        if (r->rows)
            r->rows(&w, r->arg);
        bench_close_out(r->cf, r->csv, &r->failures);
    }
    if (rc)
        return rc;
    if (bench_interrupted)
        return BENCH_EXIT_INTERRUPTED;
    if (r->integrity || r->failures)
        return BENCH_EXIT_ERROR;
    if (bench_timeouts_too_many(r->cells, r->timeouts))
        return BENCH_EXIT_TIMEOUT;
    return strict && missed ? BENCH_EXIT_MISSED : BENCH_EXIT_OK;
}

void bench_close_out(FILE *f, const char *path, unsigned *failures)
{
    if (!f)
        return;
    if (f == stdout) {
        fflush(f);
        return;
    }
    if (fclose(f) != 0) {
        bench_err("writing %s: %s", path, strerror(errno));
        (*failures)++;
    }
}

/* ---- sizes ---------------------------------------------------------------------------------- */

int bench_log2_sizes(uint32_t *out, int max, uint32_t lo, uint32_t hi)
{
    int n = 0;
    for (uint64_t s = lo; s <= hi && n < max; s *= 2)
        out[n++] = (uint32_t)s;
    return n;
}

/* ---- transport lists ---------------------------------------------------------------- */

/* 1 when t serves a scenario that needs whole messages (need_msg, as
 * bench_parse_transports) */
static int tr_fits(const bench_transport *t, int need_msg)
{
    return !need_msg || bench_tr_carries(t) || (need_msg == 2 && t->ext);
}

int bench_parse_transports(const char *list, const bench_transport **out, unsigned *np,
                           unsigned max, int need_msg, const char *cmd)
{
    unsigned n = 0;
    *np = 0;
    char tmp[512];
    if (!list)
        list = "all";
    if (strlen(list) >= sizeof(tmp)) {
        bench_err("%s: transport list too long", cmd);
        return -1;
    }
    strcpy(tmp, list);
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "all") == 0) { /* every one that fits and is not in the list yet */
            for (unsigned i = 0; i < bench_n_transports && n < max; i++)
                if (tr_fits(bench_transports[i], need_msg) && !bench_transports[i]->hidden &&
                    bench_tr_index(out, n, bench_transports[i]->name) < 0)
                    out[n++] = bench_transports[i];
            continue;
        }
        if (tok[0] == '-') { /* leave one out; a name not built here is not in the list */
            int k = bench_tr_index(out, n, tok + 1);
            if (k >= 0) {
                memmove(&out[k], &out[k + 1], (n - (unsigned)k - 1) * sizeof(*out));
                n--;
            }
            continue;
        }
        const bench_transport *t = bench_transport_find(tok);
        if (!t) {
            bench_err("%s: unknown transport '%s' (see --help)", cmd, tok);
            return -1;
        }
        if (!tr_fits(t, need_msg)) {
            bench_err("%s: transport '%s' measures round trips only", cmd, tok);
            return -1;
        }
        if (n == max) {
            bench_err("%s: at most %u transports", cmd, max);
            return -1;
        }
        out[n++] = t;
    }
    if (n == 0) {
        bench_err("%s: empty transport list", cmd);
        return -1;
    }
    *np = n;
    return 0;
}

void bench_list_transports(FILE *out, int need_msg)
{
    for (unsigned i = 0; i < bench_n_transports; i++)
        if (tr_fits(bench_transports[i], need_msg))
            fprintf(out, "  %-18s %s\n", bench_transports[i]->name, bench_transports[i]->desc);
}
