/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - mdcom-bench: `mdcom-bench [--target T] <subcommand> [options]`.
 *
 * --target linux (the default) runs the subcommands below between Linux
 * processes; --target qemu-m4 hands the rest of the command line to
 * target_qemu.c (Linux <-> Cortex-M4 firmware under QEMU).
 *
 * Adding a subcommand: a file defining `bench_cmd_<name>` with BENCH_CMD
 * (its --help is data there), its extern in bench.h and one line in the
 * table below.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "mdcom/mdcom.h"

static const bench_cmd *const commands[] = {
    &bench_cmd_pingpong, &bench_cmd_api,        &bench_cmd_latency,
    &bench_cmd_blocks,   &bench_cmd_throughput, &bench_cmd_thread_metric,
    &bench_cmd_suite,    &bench_cmd_events,     &bench_cmd_reap,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mdcom-bench <subcommand> [options]\n"
            "       mdcom-bench <subcommand> --help\n"
            "       mdcom-bench help <subcommand>\n"
            "       mdcom-bench --target qemu-m4 <blocks|latency|api|all> [options]\n"
            "                   (Linux <-> Cortex-M4 firmware under QEMU; "
            "--target qemu-m4 --help)\n"
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
    /* Global option before the subcommand: --target linux | qemu-m4 | qemu-an521
     * (the firmware targets get argv from their name on). */
    if (argc >= 2 && strcmp(argv[1], "--target") == 0) {
        if (argc >= 3 && strcmp(argv[2], "qemu-m4") == 0)
            return bench_target_qemu_m4(argc - 2, argv + 2);
        if (argc >= 3 && strcmp(argv[2], "qemu-an521") == 0) /* M33 <-> M33 */
            return bench_target_qemu_an521(argc - 2, argv + 2);
        if (argc < 3 || strcmp(argv[2], "linux") != 0) {
            bench_err("--target takes linux, qemu-m4 or qemu-an521");
            return BENCH_EXIT_USAGE;
        }
        argc -= 2;
        argv += 2;
        argv[0] = (char *)"mdcom-bench";
    }
    if (argc < 2) {
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    const char *name = argv[1];
    int help = strcmp(name, "help") == 0; /* `help NAME`: NAME's --help */
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || (help && argc < 3)) {
        usage(stdout);
        return BENCH_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("mdcom-bench %s (wire %u)\n", MDCOM_VERSION_STRING, MDCOM_WIRE_VERSION);
        return BENCH_EXIT_OK;
    }
    const bench_cmd *c = find(argv[1 + help]);
    if (!c) {
        bench_err("unknown subcommand '%s'", argv[1 + help]);
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    if (help) {
        bench_cmd_usage(c, stdout);
        return BENCH_EXIT_OK;
    }
    return c->main(argc - 1, argv + 1);
}
