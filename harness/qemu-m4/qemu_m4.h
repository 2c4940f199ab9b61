/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * qemu_m4.h - run mdcom firmware on a Cortex-M4 under QEMU (mps2-an386) with
 * its shared region in a file that Linux processes map (bench-independent:
 * used by tests/qemu, the mdcom-qemu command and mdcom-bench).
 *
 * mdcom_qemu_start():
 *   1. creates a private directory /dev/shm/mdcom-qemu-<pid>-XXXXXX (mode
 *      0700; $MDCOM_QEMU_SHM overrides /dev/shm) holding
 *        <region_name>  the region file, exactly 16 MiB, zero-filled (a new
 *                       file every run: QEMU never clears it)
 *        doorbell.sock  the doorbell UART's socket (with opts.doorbell; with
 *                       MDCOM_QEMU_DOORBELL_MUX the multiplexer's, started
 *                       here, and QEMU's own is uart1.sock)
 *        console.log    the firmware console (UART0), unless opts.console
 *      Directories of launchers that died (SIGKILL) are removed here.
 *   2. starts qemu-system-arm -machine mps2-an386,memory-backend=m
 *        -object memory-backend-file,id=m,size=16M,mem-path=FILE,share=on
 *        -kernel FW -nographic -monitor none -serial <console>
 *        [-serial unix:SOCK,server=on,wait=off]
 *        -semihosting-config enable=on,target=native[,arg=...]
 *        [-icount shift=N]
 *      in its own process group, with PR_SET_PDEATHSIG so it dies with us
 *      (note: the death signal follows the *thread* that called start/launch:
 *      call them from a thread that lives as long as QEMU should);
 *   3. waits (opts.ready_timeout_ns, default 30 s) until the header of the
 *      region says magic "MDCM" and state READY: the master formatted it.
 *      Fails early if QEMU exits meanwhile.
 * A Linux program then attaches as a remote with MDCOM_SHM_DIR=q.dir (the
 * Linux port opens $MDCOM_SHM_DIR/<region_name>), and with
 * mdcom_doorbell_uart_open(q.socket_path) for the doorbell.
 *
 * mdcom_qemu_stop(): SIGTERM, then SIGKILL after 2 s, reaps QEMU, removes the
 * directory. mdcom_qemu_cleanup_on_signals() makes SIGINT/SIGTERM/SIGHUP/
 * SIGQUIT (and exit()) stop every running instance before the process dies.
 *
 * All functions return 0 or a negative errno; err (if not NULL) receives a
 * one-line explanation.
 */
#ifndef MDCOM_QEMU_M4_H
#define MDCOM_QEMU_M4_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MDCOM_QEMU_REGION_SIZE (16u << 20)
#define MDCOM_QEMU_PATH_MAX 160
#define MDCOM_QEMU_DOORBELL_MUX 2

typedef struct mdcom_qemu_opts {
    const char *firmware;     /* ELF image (required)                        */
    const char *region_name;  /* the config's region name (required)         */
    const char *qemu;         /* NULL: $MDCOM_QEMU or "qemu-system-arm"      */
    const char *machine;      /* NULL: "mps2-an386"                          */
    int doorbell;             /* 1: second UART as doorbell socket (one
                                client); MDCOM_QEMU_DOORBELL_MUX: the same
                                through doorbell_mux.h, so that any number
                                of Linux processes connect to socket_path,
                                before or after QEMU starts              */
    int icount_shift;         /* >= 0: -icount shift=N (and "shift=N" on the
                                semihosting command line); -1: off          */
    const char *console;      /* NULL: <dir>/console.log; "-": our stdout    */
    int64_t ready_timeout_ns; /* 0: 30 s; < 0: do not wait for READY        */
    /* NULL, or more QEMU arguments (NULL-terminated, at most 16): e.g. for
     * mps2-an521 "-smp 2 -device loader,file=<cpu1.elf>,cpu-num=1" */
    const char *const *extra;
} mdcom_qemu_opts;

typedef struct mdcom_qemu {
    pid_t pid; /* QEMU, 0 when not running */
    int running;
    char dir[MDCOM_QEMU_PATH_MAX];
    char region_path[MDCOM_QEMU_PATH_MAX];
    char socket_path[MDCOM_QEMU_PATH_MAX];  /* "" without doorbell */
    char uart_path[MDCOM_QEMU_PATH_MAX];    /* QEMU's own socket behind the mux, or "" */
    void *mux;                              /* the mdcom_doorbell_mux, or NULL */
    char console_path[MDCOM_QEMU_PATH_MAX]; /* "" with console "-" */
    int exit_status; /* after stop/wait: QEMU's exit status, 128+sig if killed */
} mdcom_qemu;

/* Create the files, start QEMU, wait for READY (see above).
 * -ENOENT (firmware or qemu missing), -ETIMEDOUT (not READY in time; QEMU is
 * stopped), -ECHILD (QEMU exited before READY), other errno. */
int mdcom_qemu_start(mdcom_qemu *q, const mdcom_qemu_opts *o, char *err, size_t errlen);

/* Only steps 1 and 2 / only step 3 of start (to attach a remote first). */
int mdcom_qemu_prepare(mdcom_qemu *q, const mdcom_qemu_opts *o, char *err, size_t errlen);
int mdcom_qemu_launch(mdcom_qemu *q, const mdcom_qemu_opts *o, char *err, size_t errlen);
int mdcom_qemu_wait_ready(mdcom_qemu *q, int64_t timeout_ns, char *err, size_t errlen);

/* Wait up to timeout_ns (< 0: forever) for QEMU to exit by itself (the
 * firmware ended with semihosting). 0 and q->exit_status, or -ETIMEDOUT. */
int mdcom_qemu_wait_exit(mdcom_qemu *q, int64_t timeout_ns);

/* Kill QEMU at once (SIGKILL) and reap it; the files stay (for tests of a
 * dying peer). 0 or -ESRCH. */
int mdcom_qemu_kill(mdcom_qemu *q);

/* Stop QEMU if running (SIGTERM, SIGKILL after 2 s), remove the files.
 * Always safe to call again. Returns 0. */
int mdcom_qemu_stop(mdcom_qemu *q);

/* Install handlers so that SIGINT/SIGTERM/SIGHUP/SIGQUIT and exit() stop all
 * running instances first (then the signal's default action). */
void mdcom_qemu_cleanup_on_signals(void);

/* 1 when `qemu-system-arm` (or $MDCOM_QEMU) can be run. */
int mdcom_qemu_available(void);

/* The last lines of the console log (for error messages); "" if none. */
void mdcom_qemu_console_tail(const mdcom_qemu *q, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_QEMU_M4_H */
