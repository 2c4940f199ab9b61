/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_qemu_an521.h - `mdcom-bench --target qemu-an521 ...`
 * (target_qemu_an521.c): Cortex-M33 <-> Cortex-M33 on QEMU mps2-an521.
 */
#ifndef MDCOM_BENCH_TARGET_QEMU_AN521_H
#define MDCOM_BENCH_TARGET_QEMU_AN521_H

/* argv[0] is the target name ("qemu-an521"). Returns the exit status. */
int bench_target_qemu_an521(int argc, char **argv);

#endif /* MDCOM_BENCH_TARGET_QEMU_AN521_H */
