/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_ext.c - peer transports measured by an external program (bench/peers/):
 *   PROG rtt SIZE SAMPLES WARMUP BUDGET_NS CPU_A CPU_B
 *        stdout: one little-endian u64 (ns) per recorded round trip
 *   PROG stream SIZE MSGS WINDOW BUDGET_NS CPU_A CPU_B
 *        stdout: "msgs bytes wall_ns lost corrupt"
 *   exit status: 0 ok, 1 integrity error, other: failure
 * Statistics are computed here, as for every transport; a program that is
 * not built makes its cells n/a.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport.h"

static int ext_built(const bench_transport *t)
{
    static const bench_transport *told;
    if (access(t->ext, X_OK) == 0)
        return 1;
    if (told != t)
        bench_err("%s: %s not built (%s): its cells are n/a", t->name, t->ext, t->ext_build);
    told = t;
    return 0;
}

static int ext_exec(void *argv)
{
    signal(SIGINT, SIG_IGN);
    execv(((char **)argv)[0], (char **)argv);
    _exit(127);
}

/* Run `PROG mode v[0] .. v[5]`; its stdout into *out (malloc'ed, *len
 * bytes). Its exit code, or -1 (printed). */
static int ext_run(const bench_transport *t, const char *mode, const long long v[6], char **out,
                   size_t *len, int64_t timeout_ns)
{
    char a[6][24];
    char *argv[] = {(char *)t->ext, (char *)mode, a[0], a[1], a[2], a[3], a[4], a[5], NULL};
    for (int i = 0; i < 6; i++)
        snprintf(a[i], sizeof(a[i]), "%lld", v[i]);
    *out = NULL;
    *len = 0;
    return bench_child(ext_exec, argv, NULL, out, len, timeout_ns, t->name);
}

int bench_ext_chunk(const bench_transport *t, const bench_rt_opts *o, uint64_t *samples, size_t *np,
                    bench_rt_result *r)
{
    if (!ext_built(t)) {
        r->na = 1;
        return -1;
    }
    const long long v[6] = {o->size,
                            (long long)o->samples,
                            (long long)o->warmup,
                            (long long)o->budget_ns,
                            o->cpu_ping,
                            o->cpu_pong};
    char *out;
    size_t len;
    int code =
        ext_run(t, "rtt", v, &out, &len, (int64_t)o->budget_ns * 2 + o->timeout_ns + 30000000000LL);
    size_t got = len / 8;
    if (got > o->samples)
        got = o->samples;
    if (out)
        memcpy(samples + *np, out, got * 8); /* little-endian host (x86-64, aarch64) */
    free(out);
    *np += got;
    r->warmup_done += o->warmup;
    if (code == 0)
        return 0;
    if (code == 1)
        r->integrity++;
    else
        r->failures++;
    bench_err("%s %u B: %s exited %d", t->name, o->size, t->ext, code);
    return -1;
}

int bench_ext_stream(const bench_transport *t, uint32_t size, uint64_t msgs, uint32_t window,
                     uint64_t budget_ns, int cpu_a, int cpu_b, bench_ext_stream_res *res)
{
    memset(res, 0, sizeof(*res));
    if (!ext_built(t))
        return BENCH_SESSION_NA;
    const long long args[6] = {size, (long long)msgs, window, (long long)budget_ns, cpu_a, cpu_b};
    char *out;
    size_t len;
    int code = ext_run(t, "stream", args, &out, &len, (int64_t)budget_ns * 2 + 30000000000LL);
    int n = out ? sscanf(out, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
                         &res->msgs, &res->bytes, &res->wall_ns, &res->lost, &res->corrupt)
                : 0;
    free(out);
    if (code == 0 && n == 5)
        return 0;
    bench_err("%s stream %u B: %s exited %d", t->name, size, t->ext, code);
    return code == 1 ? BENCH_RT_MISMATCH : -1;
}
