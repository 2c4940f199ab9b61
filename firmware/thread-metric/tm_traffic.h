/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_traffic.h - what the Thread-Metric traffic images (tm_traffic.c) and
 * the Linux sender (tests/qemu/tm_flood.c) agree on, over the "flood"
 * channel of tm_traffic.toml: every message is TM_TRAFFIC_MSG bytes, its
 * first word the sender's sequence number (0, 1, ...), its second
 * TM_TRAFFIC_MAGIC; the receiver counts a message whose seq is not the
 * next one, or whose length or magic differ, as bad.
 */
#ifndef MDCOM_TM_TRAFFIC_H
#define MDCOM_TM_TRAFFIC_H

#include <stdint.h>

#define TM_TRAFFIC_MSG 64u
#define TM_TRAFFIC_MAGIC 0x746d6d64u
#define TM_TRAFFIC_CHANNEL "flood"

/* The receiver's budget: at most this many messages a kernel tick (100 Hz
 * in both kernels' Thread-Metric configurations: 1600 messages, 100 KiB, a
 * second of instruction time), then it sleeps to the next tick, as a
 * driver with a budget would. Without one, a sender that never waits (the
 * Linux flood) keeps a receiver above the tests busy all the time, and
 * every score falls to 0. */
#ifndef TM_TRAFFIC_BUDGET
#define TM_TRAFFIC_BUDGET 16u
#endif

/* The receiver: a thread of the firmware (above every Thread-Metric thread,
 * so that messages are handled when they arrive, as a driver's thread
 * would: below them it would never run in the tests whose threads never
 * block, and the traffic would stop at the channel's 16 blocks). Attaches
 * as the master (formats the region), prints "READY", then receives for
 * ever: blocks until a message (the doorbell interrupt wakes it), takes
 * what is queued up to the budget. */
void tm_traffic_rx(void *arg);

/* Each kernel's traffic file: sleep to the next tick (the budget spent). */
void tm_traffic_sleep_tick(void);

/* Each kernel's traffic file (tm_traffic_<kernel>.c): start tm_traffic_rx
 * in a thread of its own. Called where the kernel's entry may create
 * threads: FreeRTOS's main before the scheduler starts
 * (tm_porting_layer_freertos.c), ThreadX's tx_application_define before the
 * test's tm_main (tm_main_threadx.c). */
void tm_traffic_start(void);

/* At each "Time Period Total:" line (tm_board.c): prints
 * "TM traffic period: received=<n> bad=<n> err=<n>" (the messages of the
 * period). */
void tm_traffic_period(void);

#endif /* MDCOM_TM_TRAFFIC_H */
