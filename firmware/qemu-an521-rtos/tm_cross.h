/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_cross.h - the cross-core Thread-Metric-style score images of QEMU
 * mps2-an521 (scripts/thread-metric --cross-core): FreeRTOS on CPU0
 * (tm_cross_frt_cpu0.c, the master, the reporter) and ThreadX on CPU1
 * (tm_cross_tx_cpu1.c, the peer), over the region of an521_rtos.toml
 * (FIFOs "a2b", "b2a", SMEM "state" and "rpmsg"; the "linux" domain stays
 * unused).
 *
 * As in Thread-Metric, a test task counts and a reporter prints the count
 * of one period: each row runs TMX_WARMUP_MS, then TMX_PERIOD_MS of the
 * kernel tick on CPU0 (QEMU's virtual clock; under -icount a period of
 * instruction time), and CPU0 prints
 *
 *   SCORE <row> <count> period_ms=<p> bad=<n> sleeps=<n> woken=<n> timeouts=<n> [...]
 *
 * (sleeps, woken, timeouts: CPU0's mdcom waits of the period that blocked in
 * the kernel, that the doorbell ended, that timed out; the two sides' counts
 * of the hand-over rows follow)
 *
 * Messages on a2b (CPU0 -> CPU1) and b2a (CPU1 -> CPU0):
 *   command  {TMX_MAGIC, TMX_CMD_*, 0}: CPU1 enters the mode and
 *            answers with the same (for TMX_CMD_STOP: once it left
 *            the mode; after the lock mode: once it saw the stop word, with
 *            the count of its rounds that found the area disturbed)
 *   data     TMX_MSG bytes, a function of the round trip's seq: echoed
 *            unchanged by CPU1, compared by CPU0
 *
 * SMEM "state" words (a superset of rr_proto.h's): [0] the counter
 * (rr_lock_round), [1] the holder's mark, [2] the stop word (CPU0 sets it
 * at the end of the lock row), [3] the turn (the core whose round is next).
 * A control message is TMX_CTL bytes, a data message TMX_MSG.
 */
#ifndef TM_CROSS_H
#define TM_CROSS_H

#include <stdint.h>

#ifndef TMX_PERIOD_MS
#define TMX_PERIOD_MS 1000u /* one period of CPU0's tick (virtual time) */
#endif
#define TMX_WARMUP_MS 10u
#define TMX_MSG 16u           /* the payload of a round trip, as Thread-Metric's 16-byte messages */
#define TMX_CTL 12u           /* {TMX_MAGIC, cmd, bad} */
#define TMX_MAGIC 0x584d5400u /* "TMX" */

enum tmx_cmd {
    TMX_CMD_ECHO_BLOCK = 1, /* CPU1 echoes, blocked in recv (the doorbell wakes it) */
    TMX_CMD_ECHO_POLL,      /* CPU1 echoes, polling recv (no sleep, no doorbell) */
    TMX_CMD_LOCK_TURN,      /* CPU1 takes the SMEM lock for a round whenever the turn is its own */
    TMX_CMD_STOP,           /* leave an echo mode */
    TMX_CMD_RPMSG           /* CPU1 starts an RPMsg remote on "rpmsg" and echoes there */
};

/* the RPMsg instance on SMEM "rpmsg": CPU0 the host, CPU1 the remote
 * announcing TMX_RPMSG_SERVICE; a 16-byte message is echoed, a TMX_CTL-byte
 * one ends the row */
#define TMX_RPMSG_SERVICE "tmx-echo"
#define TMX_RPMSG_NUM_BUFS 4u
#define TMX_RPMSG_BUF_SIZE 64u
#define TMX_RPMSG_ALIGN 64u
#define TMX_RPMSG_STATE 4096u /* >= mdcom_rpmsg_state_size, checked at init */

#define TMX_W_COUNT 0
#define TMX_W_MARK 1
#define TMX_W_STOP 2
#define TMX_W_TURN 3
#define TMX_TURN_CPU0 0u
#define TMX_TURN_CPU1 1u
#define TMX_MARK_CPU0 0x41000000u
#define TMX_MARK_CPU1 0x42000000u

/* the data message of round trip seq */
static inline void tmx_fill(uint8_t *buf, uint32_t seq)
{
    uint32_t i;
    for (i = 0; i < TMX_MSG; i++)
        buf[i] = (uint8_t)(seq * 13u + i);
}

#endif /* TM_CROSS_H */
