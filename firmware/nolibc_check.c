/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nolibc_check.c - proves the core is freestanding: this image links the core
 * and the template port with -nostdlib, providing only memcpy/memmove/memset/
 * memcmp (the bare-metal port's mem.c).
 * It formats a region in RAM and runs one message through a FIFO channel; the
 * result is left in a global (this image is linked, not run; the QEMU
 * firmware images run). Its configuration is nolibc_check.toml, whose layout
 * the build host computed (a freestanding core has no run-time layout code).
 */
#include <stddef.h>
#include <stdint.h>

#include "mdcom/mdcom.h"
#include "mdcom/rpmsg.h"
#include "nolibc_layout.h"

void Reset_Handler(void);

static uint8_t region[16384] __attribute__((aligned(64)));
static volatile uint64_t ticks;
volatile int nolibc_result;

void *mdcom_board_region(const char *name, uint32_t *size);
uint64_t mdcom_board_now_ns(void);
void mdcom_board_ring(uint32_t chan);

void *mdcom_board_region(const char *name, uint32_t *size)
{
    (void)name;
    *size = sizeof(region);
    return region;
}
uint64_t mdcom_board_now_ns(void) { return ticks += 1000; }
void mdcom_board_ring(uint32_t chan) { (void)chan; }


void Reset_Handler(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *ch;
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    mdcom_init_opts io = {.layout = &nolibc_layout};
    int r = mdcom_init(&m, &nolibc_config, NOLIBC_DOM_M4, &io);
    if (r == 0 && (r = mdcom_fifoch_open(m, "tx", &ch)) == 0 &&
        (r = mdcom_fifoch_send(ch, buf, sizeof(buf), MDCOM_POLL)) == 0)
        r = mdcom_fifoch_recv(ch, buf, sizeof(buf), MDCOM_POLL);
    if (r == 0) {
        /* the RPMsg transport links freestanding as well */
        static uint64_t st[4096 / 8];
        static uint8_t area[16384] __attribute__((aligned(64)));
        mdcom_rpmsg_opts o = {.role = MDCOM_RPMSG_HOST,
                              .geometry = {.num_bufs = 4, .buf_size = 512, .vring_align = 64}};
        mdcom_rpmsg_t *rp;
        r = mdcom_rpmsg_init(&rp, st, sizeof(st), area, sizeof(area), &o);
        if (r == 0)
            r = mdcom_rpmsg_term(rp);
    }
    nolibc_result = r;
    for (;;) {
    }
}

__attribute__((section(".vectors"), used)) static void (*const vectors[2])(void) = {
    (void (*)(void))0x20400000, Reset_Handler};
