/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * doorbell_mux.h - one UART doorbell of a core under QEMU shared by any
 * number of Linux processes (harness/qemu-m4, not installed).
 *
 * QEMU's chardev server (-serial unix:PATH,server=on,wait=off) takes one
 * client at a time, so without this only one Linux process could ring the
 * firmware and be woken by it. The multiplexer is that one client: a thread
 * of the launcher that listens on its own socket (listen_path), which every
 * Linux process connects to with mdcom_doorbell_uart_open() as it would to
 * QEMU's:
 *
 *   firmware -> Linux  each byte QEMU sends goes to every connected client
 *                      (a ring names no process: every waiter re-checks)
 *   Linux -> firmware  a byte from any client is forwarded as one byte,
 *                      unless a byte sent before is still unread by QEMU
 *                      (SIOCOUTQ): that one wakes the firmware after the
 *                      caller's publication already
 *
 * Clients may connect before QEMU runs: the thread connects to QEMU's socket
 * (upstream_path) as soon as it exists, until connect_timeout_ns; a ring
 * before that is sent once connected. When QEMU closes its socket, every
 * client is closed (doorbell_uart then counts the firmware dead) and later
 * clients are closed at once.
 */
#ifndef MDCOM_DOORBELL_MUX_H
#define MDCOM_DOORBELL_MUX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdcom_doorbell_mux mdcom_doorbell_mux;

/* Listen on listen_path (created, mode 0600) and start the thread. 0 and
 * *out, or a negative errno (err gets a one-line explanation). */
int mdcom_doorbell_mux_start(mdcom_doorbell_mux **out, const char *listen_path,
                             const char *upstream_path, int64_t connect_timeout_ns, char *err,
                             size_t errlen);

/* Stop the thread, close every socket, remove listen_path. NULL is ignored. */
void mdcom_doorbell_mux_stop(mdcom_doorbell_mux *m);

typedef struct mdcom_doorbell_mux_stats {
    uint64_t clients;   /* connections accepted                      */
    uint64_t to_fw;     /* bytes forwarded to QEMU                   */
    uint64_t coalesced; /* client bytes not forwarded (one pending)  */
    uint64_t from_fw;   /* bytes QEMU sent (each to every client)    */
    int upstream;       /* 1 connected to QEMU, 0 not yet, -1 closed */
} mdcom_doorbell_mux_stats;

void mdcom_doorbell_mux_get_stats(mdcom_doorbell_mux *m, mdcom_doorbell_mux_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_DOORBELL_MUX_H */
