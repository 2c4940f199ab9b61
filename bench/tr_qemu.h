/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tr_qemu.h - the QEMU link as transports of mdcom-bench: the mdcom firmware
 * on a Cortex-M4 under qemu-system-arm (mps2-an386, launcher and firmware
 * protocol: harness/qemu-m4) with this process attached as the remote domain.
 *
 * What is QEMU's stays behind this header: starting QEMU, the boot
 * handshake, the UART doorbell, the firmware's commands. The transports of
 * the link are bench_transport rows (transport.h) with link ops; a cell of
 * them is measured by bench_link_run into the driver's samples, statistics
 * and rows (target_qemu.c). The measurements the firmware makes itself
 * (instructions under -icount, its arrival stamps) have functions here.
 */
#ifndef MDCOM_BENCH_TR_QEMU_H
#define MDCOM_BENCH_TR_QEMU_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define BENCH_QEMU_PATH 512

/* The transports of the link, in the order of the tables: the echoes
 * (12-byte header + payload, the same on FIFO and RPMsg; raw spin: one word
 * each way, polling only), then the block-ack transactions. */
extern const bench_transport bench_qemu_fifo, bench_qemu_rpmsg, bench_qemu_openamp, bench_qemu_raw,
    bench_qemu_fifo_blk32k, bench_qemu_fifo_blk512, bench_qemu_rpmsg_blk;

/* 1 when path is a readable file. */
int bench_qemu_exists(const char *p);
/* path = the file `name` in the directory of file fw. */
void bench_qemu_beside(char *path, size_t len, const char *fw, const char *name);
/* 1 when qemu-system-arm ($MDCOM_QEMU) is there. */
int bench_qemu_available(void);
/* QEMU stopped and its files removed on SIGINT/SIGTERM/SIGHUP/SIGQUIT and exit(). */
void bench_qemu_cleanup_on_signals(void);

/* A link: QEMU running firmware fw, this process attached, the firmware
 * answering the boot handshake; optionally OpenAMP's RPMsg firmware in a QEMU
 * of its own (bench_qemu_oa_begin). icount_shift >= 0: -icount shift=N (the
 * firmware's clock counts instructions), -1 off. Doorbell cells start with
 * everything asleep (an untimed gap before each request). 0, -ENOENT (QEMU
 * or the image missing), or another error; err says what failed. */
typedef struct bench_qemu bench_qemu;
int bench_qemu_up(bench_qemu **q, const char *fw, int icount_shift, char *err, size_t len);
/* The boot handshake (a ping answered), after bench_qemu_up: 0 or < 0. */
int bench_qemu_ping(bench_qemu *q);
const char *bench_qemu_region(const bench_qemu *q);
void bench_qemu_down(bench_qemu *q);
/* OpenAMP's RPMsg as the firmware for the bench_qemu_openamp cells (image
 * path). 0, or < 0 with why (its cells then say n/a). */
int bench_qemu_oa_begin(bench_qemu *q, const char *path, int icount_shift, char *why, size_t len);
void bench_qemu_oa_end(bench_qemu *q);

/* One-way Linux -> firmware with time stamps on both sides, polling: for
 * each k < nk, n messages of bytes[k] on tr[k] (echoes only); the firmware
 * stamps each arrival with its clock, one clock with this host's up to an
 * offset bounded from causality over all samples. p50_us[k]: the one-way
 * p50, back_us[k]: the firmware's work + its 16-byte reply, *bound_us: the
 * offset's bound (+-), *samples: all samples. 0, > 0 bad replies, -ERANGE
 * (the two clocks disagree) or another error. */
int bench_qemu_stamped(bench_qemu *q, unsigned nk, const bench_transport *const *tr,
                       const uint32_t *bytes, uint32_t n, double *p50_us, double *back_us,
                       double *bound_us, unsigned *samples);
/* One-way stream: n messages of bytes to the firmware's sink, polling, one ack
 * at the end; *ns: first send to the ack. 0 or < 0. */
int bench_qemu_sink(bench_qemu *q, uint32_t n, uint32_t bytes, double *ns);
/* Firmware instructions per echoed message on t (a link under -icount
 * shift=0): n echoes of bytes, one copy, no check. 0 (*instr), > 0 bad
 * replies, < 0; -ENOENT for the OpenAMP transport without its firmware. */
int bench_qemu_cost(bench_qemu *q, const bench_transport *t, uint32_t n, uint32_t bytes,
                    double *instr);

/* Run fw0 (and fw1 on CPU 1 of mps2-an521; machine NULL: mps2-an386) until it
 * exits by itself, at most timeout_s; region NULL: the M4's. Its console text
 * (malloc'ed; *status its exit status, -1 when it had to be stopped), or NULL
 * (printed). icount: -icount shift, -1 off. */
char *bench_qemu_console(const char *machine, const char *region, const char *fw0, const char *fw1,
                         int icount, int timeout_s, int *status);

/* The API-cost image's lines "apicost <call> mode M mean X sd S min A max B n N". */
typedef struct bench_qemu_api_row {
    char call[32];
    unsigned mode, min, max, n;
    double mean, sd;
} bench_qemu_api_row;
#define BENCH_QEMU_API_MAX 32
/* Run the API-cost image fw under -icount shift=0 and parse its lines into
 * rows (at most BENCH_QEMU_API_MAX): their count, 0 when it failed, -1 when it
 * reported an error ("apicost: ..."). Its console text to *log (freed when log
 * is NULL). */
int bench_qemu_apicost(const char *machine, const char *region, const char *fw, int timeout_s,
                       bench_qemu_api_row *rows, char **log, int *status);

#endif /* MDCOM_BENCH_TR_QEMU_H */
