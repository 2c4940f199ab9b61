// SPDX-License-Identifier: BSD-3-Clause
/*
 * fp_rpmsg_lite.c - the minimal RPMsg-Lite application of the footprint
 * table, the counterpart of fp_mdcom_rpmsg.c: RPMsg-Lite's remote with its
 * static API and bare-metal environment (both from the tarball, unmodified)
 * on the same layout, one announced endpoint, one message sent, messages
 * received in the callback RPMsg-Lite calls from the mailbox interrupt.
 */
#include <stddef.h>
#include <stdint.h>

#include "fp_board.h"
#include "rpmsg_lite.h"
#include "rpmsg_ns.h"

volatile int fp_result;
static volatile uint32_t received;
static struct rpmsg_lite_instance ctx;
static struct rpmsg_lite_ept_static_context ept_ctx;

void MAILBOX_IRQHandler(void);

static int32_t on_msg(void *payload, uint32_t len, uint32_t src, void *priv)
{
    (void)payload, (void)src, (void)priv;
    received += len;
    return RL_RELEASE;
}

void Reset_Handler(void)
{
    static char hello[] = "hello";
    struct rpmsg_lite_instance *rl = rpmsg_lite_remote_init(FP_SHM, 0, RL_NO_FLAGS, &ctx);
    struct rpmsg_lite_endpoint *e;
    int rc = -1;
    if (rl) {
        while (!rpmsg_lite_is_link_up(rl)) {
        }
        e = rpmsg_lite_create_ept(rl, RL_ADDR_ANY, on_msg, NULL, &ept_ctx);
        if (e && rpmsg_ns_announce(rl, e, "fp", RL_NS_CREATE) == RL_SUCCESS)
            rc = rpmsg_lite_send(rl, e, 1024, hello, sizeof(hello), RL_DONT_BLOCK);
    }
    fp_result = rc;
    for (;;) {
    }
}

/* the mailbox interrupt: RPMsg-Lite's handler of both vrings */
void MAILBOX_IRQHandler(void)
{
    env_isr(0);
    env_isr(1);
}

__attribute__((section(".vectors"), used)) static void (*const vectors[3])(void) = {
    (void (*)(void))0x20400000, Reset_Handler, MAILBOX_IRQHandler};
