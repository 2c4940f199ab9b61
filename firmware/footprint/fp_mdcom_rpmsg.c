// SPDX-License-Identifier: BSD-3-Clause
/*
 * fp_mdcom_rpmsg.c - the minimal mdcom RPMsg application of the footprint
 * table: a remote bound to fixed vrings and pool (RPMsg-Lite's layout, the
 * same numbers as fp_rpmsg_lite.c), one announced endpoint, one message
 * sent and the received ones dispatched. Polling: mdcom's wait is NULL.
 */
#include <stddef.h>
#include <stdint.h>

#include "fp_board.h"
#include "mdcom/rpmsg.h"

volatile int fp_result;
static volatile uint32_t received;
static uint64_t state[4096 / 8];

static void ring(void *ctx, uint32_t vq)
{
    (void)ctx;
    FP_MAILBOX = vq;
}

static int on_msg(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)ept, (void)data, (void)src, (void)priv;
    received += (uint32_t)len;
    return 0;
}

void Reset_Handler(void)
{
    mdcom_rpmsg_bind b = {0};
    mdcom_rpmsg_opts o = {.role = MDCOM_RPMSG_REMOTE};
    mdcom_rpmsg_t *r;
    mdcom_rpmsg_ept_t *e;
    static const char hello[] = "hello";
    int rc = mdcom_rpmsg_bind_legacy_vrings(&b, FP_SHM, FP_SHM + FP_VRING_SIZE, FP_NUM, FP_ALIGN);
    b.num = FP_NUM;
    b.buf_size = FP_PAYLOAD + 16u;
    b.pool = FP_SHM + 2u * FP_VRING_SIZE;
    b.pool_da = (uintptr_t)b.pool;
    b.features = MDCOM_RPMSG_F_NS;
    b.notify = ring;
    if (rc == 0)
        rc = mdcom_rpmsg_init_bound(&r, state, sizeof(state), &b, &o);
    if (rc == 0)
        rc = mdcom_rpmsg_ept_create(r, &e, "fp", MDCOM_RPMSG_ADDR_ANY, MDCOM_RPMSG_ADDR_ANY, on_msg,
                                    NULL, MDCOM_POLL);
    if (rc == 0)
        rc = mdcom_rpmsg_sendto(e, hello, sizeof(hello), 1024, MDCOM_POLL);
    while (rc >= 0)
        rc = mdcom_rpmsg_poll(r, MDCOM_POLL);
    fp_result = rc;
    for (;;) {
    }
}

__attribute__((section(".vectors"), used)) static void (*const vectors[2])(void) = {
    (void (*)(void))0x20400000, Reset_Handler};
