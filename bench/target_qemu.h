/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_qemu.h - `mdcom-bench --target qemu-m4 ...` (target_qemu.c): the
 * Linux <-> Cortex-M4 measurements against the firmware under QEMU.
 */
#ifndef MDCOM_BENCH_TARGET_QEMU_H
#define MDCOM_BENCH_TARGET_QEMU_H

#include <stdio.h>

/* Exit status when a prerequisite is missing (qemu-system-arm, the firmware
 * image, or mdcom-bench built without tools/qemu-m4): "skipped" for ctest. */
#define BENCH_EXIT_SKIPPED 77

/* argv[0] is the target name ("qemu-m4"); then options and one subcommand
 * (blocks | latency | api | all), in any order. Returns the exit status. */
int bench_target_qemu_m4(int argc, char **argv);
void bench_target_qemu_m4_usage(FILE *out);

#endif /* MDCOM_BENCH_TARGET_QEMU_H */
