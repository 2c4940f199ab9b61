// SPDX-License-Identifier: BSD-3-Clause
/*
 * fp_board.c - what the template port asks of a board, for the footprint
 * images: the shared region (a static array here), a clock and a doorbell
 * (a write to a mailbox register). The images are linked, not run.
 */
#include <stdint.h>

#include "fp_board.h"

static uint8_t region[16384] __attribute__((aligned(64)));
static volatile uint64_t ticks;

void *mdcom_board_region(const char *name, uint32_t *size)
{
    (void)name;
    *size = sizeof(region);
    return region;
}

uint64_t mdcom_board_now_ns(void) { return ticks += 1000; }

void mdcom_board_ring(uint32_t chan) { FP_MAILBOX = chan; }
