/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * doorbell_uart.h - a Linux-side doorbell over a byte stream socket: the
 * unix socket of a UART of a core emulated by QEMU
 * (-serial unix:PATH,server=on,wait=off). A test harness of harness/qemu-m4
 * (library mdcom_qemu_m4, not installed), built on the public port API.
 *
 *   ring  writes one byte to the socket: the UART's RX interrupt wakes the
 *         firmware (mdcom_bm_doorbell_raise in ports/baremetal); nothing
 *         while a byte sent before is still unread by QEMU (SIOCOUTQ)
 *   wait  sleeps in ppoll() on the socket until the firmware writes a byte,
 *         the word changes (re-checked every 10 ms, so a byte drained by
 *         another thread of this process costs at most that), or the
 *         timeout. Once the peer closed the socket (QEMU gone), waits poll
 *         the word every 1 ms until their timeout: callers still get
 *         -ETIMEDOUT within their timeout, never a hang.
 *
 * The socket accepts one client at a time (QEMU's chardev server): one Linux
 * process per link uses the doorbell; others may attach with the plain Linux
 * port and poll.
 *
 * mdcom_doorbell_uart_platform() is the Linux port with this doorbell and a
 * process-liveness check that knows firmware processes: foreign pids
 * (MDCOM_PID_IS_FOREIGN, mdcom/platform.h; ports/baremetal writes
 * MDCOM_BM_PID) are alive while the socket is connected, dead once the peer
 * closed it. Pass it in
 * mdcom_init_opts.platform (or mdcom_rpmsg_opts.platform).
 */
#ifndef MDCOM_DOORBELL_UART_H
#define MDCOM_DOORBELL_UART_H

#include <stdint.h>

#include "mdcom/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdcom_uart_doorbell mdcom_uart_doorbell;

/* Connect to the unix socket at path, retrying up to timeout_ns
 * (MDCOM_POLL: once) while it does not exist or refuses. 0 and *out, or
 * -EINVAL (NULL, path too long), -ENOMEM, -ETIMEDOUT, or a negative errno of
 * socket/connect. */
int mdcom_doorbell_uart_open(mdcom_uart_doorbell **out, const char *path, int64_t timeout_ns);

/* Close the socket and free the doorbell; platforms obtained from it become
 * invalid (mdcom_term every attachment using it first). NULL is ignored. */
void mdcom_doorbell_uart_close(mdcom_uart_doorbell *db);

/* The doorbell alone, to put into any mdcom_platform. */
mdcom_doorbell mdcom_doorbell_uart(mdcom_uart_doorbell *db);

/* The Linux port with this doorbell (see above). NULL if db is NULL. */
const mdcom_platform *mdcom_doorbell_uart_platform(mdcom_uart_doorbell *db);

/* 1 while connected, 0 once the peer closed the socket. */
int mdcom_doorbell_uart_connected(const mdcom_uart_doorbell *db);

/* Bytes received from / sent to the peer so far (statistics). */
uint64_t mdcom_doorbell_uart_rx(const mdcom_uart_doorbell *db);
uint64_t mdcom_doorbell_uart_tx(const mdcom_uart_doorbell *db);
/* Rings not sent because a byte sent before was still unread by the peer
 * (that byte's interrupt wakes it after the caller's publication). */
uint64_t mdcom_doorbell_uart_coalesced(const mdcom_uart_doorbell *db);

#ifdef __cplusplus
}
#endif

#endif /* MDCOM_DOORBELL_UART_H */
