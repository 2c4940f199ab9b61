/*
 * main.c - mdcom-bench: `mdcom-bench <subcommand> [options]`.
 *
 * Adding a subcommand: a file defining `const bench_cmd bench_cmd_<name>`
 * (see bench.h) and one line in the table below.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "mdcom/mdcom.h"

extern const bench_cmd bench_cmd_pingpong;
extern const bench_cmd bench_cmd_api;
extern const bench_cmd bench_cmd_latency;
extern const bench_cmd bench_cmd_blocks;
extern const bench_cmd bench_cmd_throughput;
extern const bench_cmd bench_cmd_thread_metric;
extern const bench_cmd bench_cmd_suite;

static const bench_cmd *const commands[] = {
    &bench_cmd_pingpong,
    &bench_cmd_api,
    &bench_cmd_latency,
    &bench_cmd_blocks,
    &bench_cmd_throughput,
    &bench_cmd_thread_metric,
    &bench_cmd_suite,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mdcom-bench <subcommand> [options]\n"
            "       mdcom-bench <subcommand> --help\n"
            "       mdcom-bench help <subcommand>\n"
            "\n"
            "Benchmarks of libmdcom %d.%d. Subcommands:\n",
            MDCOM_VERSION_MAJOR, MDCOM_VERSION_MINOR);
    for (unsigned i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-14s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\nSee docs/benchmarks.md for the method and how to read the output.\n");
}

static const bench_cmd *find(const char *name)
{
    for (unsigned i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        usage(stdout);
        return BENCH_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("mdcom-bench (libmdcom %d.%d, wire %u)\n", MDCOM_VERSION_MAJOR, MDCOM_VERSION_MINOR,
               MDCOM_WIRE_VERSION);
        return BENCH_EXIT_OK;
    }
    if (strcmp(name, "help") == 0) {
        if (argc < 3) {
            usage(stdout);
            return BENCH_EXIT_OK;
        }
        const bench_cmd *c = find(argv[2]);
        if (!c) {
            bench_err("unknown subcommand '%s'", argv[2]);
            usage(stderr);
            return BENCH_EXIT_USAGE;
        }
        c->usage(stdout);
        return BENCH_EXIT_OK;
    }
    const bench_cmd *c = find(name);
    if (!c) {
        bench_err("unknown subcommand '%s'", name);
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    return c->main(argc - 1, argv + 1);
}
