// SPDX-License-Identifier: BSD-3-Clause
/*
 * fp_fifo.c - the minimal mdcom FIFO application of the footprint table:
 * attach (mdcom_init, ahead-of-time layout), open one channel each way,
 * send one message and receive one. FP_MASTER selects the master domain
 * (linked with the full core) or the remote one (the remote-only profile).
 */
#include <stddef.h>
#include <stdint.h>

#include "fp_board.h"
#include "fp_cfg.h"
#include "fp_layout.h"
#include "mdcom/mdcom.h"

volatile int fp_result;

void Reset_Handler(void)
{
#if FP_MASTER
    const uint32_t self = FP_DOM_HOST;
    const char *tx_name = "down", *rx_name = "up";
#else
    const uint32_t self = FP_DOM_M4;
    const char *tx_name = "up", *rx_name = "down";
#endif
    mdcom_t *m;
    mdcom_fifoch_t *tx, *rx;
    uint8_t buf[16] = {1, 2, 3};
    mdcom_init_opts io = {.layout = &fp_layout};
    int r = mdcom_init(&m, &fp_config, self, &io);
    if (r == 0)
        r = mdcom_fifoch_open(m, tx_name, &tx);
    if (r == 0)
        r = mdcom_fifoch_open(m, rx_name, &rx);
    if (r == 0)
        r = mdcom_fifoch_send(tx, buf, sizeof(buf), MDCOM_POLL);
    if (r == 0)
        r = mdcom_fifoch_recv(rx, buf, sizeof(buf), MDCOM_POLL);
    fp_result = r;
    for (;;) {
    }
}

__attribute__((section(".vectors"), used)) static void (*const vectors[2])(void) = {
    (void (*)(void))0x20400000, Reset_Handler};
