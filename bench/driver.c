/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * driver.c - what every scenario subcommand shares: its options as a table
 * (parsed with getopt_long, range-checked, listed by --help) and the targets
 * (state, printing, JSON).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

int bench_opts_parse(const char *cmd, const bench_opt *tab, void *o, int argc, char **argv)
{
    struct option lo[BENCH_MAX_OPTS + 2];
    unsigned n = 0, k = 0;
    for (; tab[n].name && n < BENCH_MAX_OPTS; n++)
        if (tab[n].kind != BO_ARG)
            lo[k++] = (struct option){tab[n].name,
                                      tab[n].kind == BO_FLAG ? no_argument : required_argument,
                                      NULL, (int)n + 256};
    lo[k] = (struct option){"help", no_argument, NULL, 'h'};
    lo[k + 1] = (struct option){NULL, 0, NULL, 0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'h')
            return 1;
        if (c < 256 || c >= 256 + (int)n)
            return -1; /* getopt printed what was wrong */
        const bench_opt *t = &tab[c - 256];
        char *field = (char *)o + t->off, *end;
        uint64_t v = 0;
        double d = 0;
        int bad = 0;
        switch (t->kind) {
        case BO_FLAG:
            *(int *)field = (int)t->lo;
            break;
        case BO_STR:
            *(const char **)field = optarg;
            break;
        case BO_DBL:
            errno = 0;
            d = strtod(optarg, &end);
            bad = !*optarg || errno || *end || !isfinite(d) || d < t->lo || d > t->hi;
            if (!bad)
                *(double *)field = d;
            break;
        default: /* BO_U64, BO_U32: decimal k/M suffixes (100k = 100000) */
            bad = bench_parse_count(optarg, &v) != 0 || (double)v < t->lo || (double)v > t->hi;
            if (!bad && t->kind == BO_U64)
                *(uint64_t *)field = v;
            else if (!bad)
                *(uint32_t *)field = (uint32_t)v;
            break;
        }
        if (bad) {
            bench_err("%s: bad --%s '%s' (%g..%g)", cmd, t->name, optarg, t->lo, t->hi);
            return -1;
        }
    }
    for (const bench_opt *t = tab; t->name && optind < argc; t++)
        if (t->kind == BO_ARG)
            *(const char **)((char *)o + t->off) = argv[optind++];
    if (optind < argc) {
        bench_err("%s: unexpected argument '%s'", cmd, argv[optind]);
        return -1;
    }
    return 0;
}

int bench_parsed(int prc, const bench_cmd *c)
{
    if (prc == 1) {
        bench_cmd_usage(c, stdout);
        return BENCH_EXIT_OK;
    }
    if (prc != 0) {
        fprintf(stderr, "try 'mdcom-bench %s --help'\n", c->name);
        return BENCH_EXIT_USAGE;
    }
    return -1;
}

static void opts_usage(FILE *f, const bench_opt *tab)
{
    for (const bench_opt *t = tab; t->name; t++) {
        char lhs[40];
        snprintf(lhs, sizeof(lhs), "%s%s%s%s", t->kind == BO_ARG ? "" : "--", t->name,
                 t->arg ? " " : "", t->arg ? t->arg : "");
        fprintf(f, "  %-21s", lhs);
        /* help: one line, or several separated by '\n' (indented alike); after
         * a long option name it starts on the next line */
        for (const char *p = t->help; *p;) {
            size_t k = strcspn(p, "\n");
            int pad = p != t->help || strlen(lhs) > 20 ? 23 : 0;
            fprintf(f, "%s%*s%.*s\n", p == t->help && pad ? "\n" : "", pad, "", (int)k, p);
            p += k + (p[k] == '\n');
        }
    }
    fprintf(f, "  %-21s%s\n", "--help", "this text");
}

static void usage_tail(FILE *f, int need_msg)
{
    fprintf(f, "\nTransports:\n");
    bench_list_transports(f, need_msg);
    fprintf(f,
            "\nExit status: 0 ok, %d integrity or API error, %d usage, %d target missed "
            "(--strict). See docs/benchmarks.md.\n",
            BENCH_EXIT_ERROR, BENCH_EXIT_USAGE, BENCH_EXIT_MISSED);
}

void bench_cmd_usage(const bench_cmd *c, FILE *out)
{
    fprintf(out, "usage: mdcom-bench %s [options]\n\n%s\n", c->name, c->about);
    opts_usage(out, c->opts);
    if (c->more)
        fprintf(out, "\n%s", c->more);
    if (c->tail)
        usage_tail(out, c->tail - 1);
}

/* ---- targets ---------------------------------------------------------------------- */

static const char *const tg_state[] = {"MET", "MISSED", "SKIPPED"};

void bench_target_eval(bench_target *t, double value, int at_least)
{
    t->value = value;
    t->at_least = at_least;
    t->state = isnan(value)                                         ? BT_SKIPPED
               : (at_least ? value >= t->limit : value <= t->limit) ? BT_MET
                                                                    : BT_MISSED;
}

bench_target *bench_target_new(bench_target *t, double limit, const char *unit, const char *fmt,
                               ...)
{
    va_list ap;
    memset(t, 0, sizeof(*t));
    t->limit = limit;
    snprintf(t->unit, sizeof(t->unit), "%s", unit ? unit : "");
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof(t->name), fmt, ap);
    va_end(ap);
    return t;
}

unsigned bench_targets_print(FILE *out, const bench_target *tg, unsigned n, unsigned *missed)
{
    unsigned met = 0, skipped = 0;
    *missed = 0;
    fprintf(out, "\n== targets (computed from this run) ==\n");
    for (unsigned i = 0; i < n; i++) {
        fprintf(out, "%-7s  %-56s ", tg_state[tg[i].state], tg[i].name);
        if (tg[i].state == BT_SKIPPED)
            fprintf(out, "  not measured\n");
        else if (tg[i].unit[0]) /* detail: the value with its unit */
            fprintf(out, "= %s (limit %g %s)\n", tg[i].detail, tg[i].limit, tg[i].unit);
        else
            fprintf(out, "= %6.3fx (%s; limit %.2fx)\n", tg[i].value, tg[i].detail, tg[i].limit);
        met += tg[i].state == BT_MET;
        *missed += tg[i].state == BT_MISSED;
        skipped += tg[i].state == BT_SKIPPED;
    }
    fprintf(out, "\ntargets: %u met, %u missed, %u skipped\n", met, *missed, skipped);
    return met;
}

void bench_targets_json(bench_json *j, const bench_target *tg, unsigned n)
{
    bench_json_arr_begin(j, "targets");
    for (unsigned i = 0; i < n; i++) {
        bench_json_obj_begin(j, NULL);
        bench_json_str(j, "name", tg[i].name);
        bench_json_dbl(j, "value", tg[i].value);
        bench_json_dbl(j, "limit", tg[i].limit);
        bench_json_str(j, "need", tg[i].at_least ? ">=" : "<=");
        bench_json_str(j, "unit", tg[i].unit);
        bench_json_str(j, "detail", tg[i].detail);
        bench_json_str(j, "state", tg_state[tg[i].state]);
        bench_json_obj_end(j);
    }
    bench_json_arr_end(j);
}
