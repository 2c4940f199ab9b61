/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_cross_tx_cpu1.c - mdcom-fw-an521-tmx-tx-cpu1: ThreadX on CPU1 of QEMU
 * mps2-an521, the peer of the cross-core score rows (tm_cross.h; CPU0 runs
 * tm_cross_frt_cpu0.c and reports). Two threads:
 *
 *   peer  an mdcom process of domain "cpu1": blocked in recv on "a2b" for
 *         CPU0's commands; in an echo mode it returns every data message on
 *         "b2a" (blocked in recv, woken by CPU0's MHU doorbell, or polling),
 *         in a lock mode it takes and releases the SMEM lock of "state" until
 *         CPU0 sets the stop word
 *   wfi   the lowest priority: WFI until the next interrupt, so that an idle
 *         core halts (under -icount QEMU then runs the other core at once
 *         instead of spending this one's turn in an idle loop)
 */
#include <errno.h>
#include <string.h>

#include "tx_api.h"

#include "mdcom/rpmsg.h"

#include "an521.h"
#include "board.h"
#include "cortexm.h"
#include "mdcom_an521rtos_layout.h"
#include "mdcom_threadx.h"
#include "rr_fw.h"
#include "tm_cross.h"

#define STACK_BYTES 4096u
#define PRIO_PEER 4u /* ThreadX: lower runs first */
#define PRIO_WFI (TX_MAX_PRIORITIES - 1u)

static TX_THREAD g_peer, g_wfi;
static UCHAR g_peer_stack[STACK_BYTES] __attribute__((aligned(8)));
static UCHAR g_wfi_stack[1024] __attribute__((aligned(8)));

/* a control message {TMX_MAGIC, cmd, bad} */
static void ctl_send(mdcom_fifoch_t *tx, uint32_t cmd, uint32_t bad)
{
    uint32_t c[3] = {TMX_MAGIC, cmd, bad};
    rr_send(tx, "peer", c, sizeof(c), RR_MS(5000));
}

/* echo data messages until the stop command, which is answered */
static void echo(mdcom_fifoch_t *rx, mdcom_fifoch_t *tx, int poll)
{
    uint8_t buf[RR_MSG_MAX];
    for (;;) {
        int r, n = mdcom_fifoch_recv(rx, buf, sizeof(buf), poll ? MDCOM_POLL : RR_MS(20000));
        if (poll && (n == -ETIMEDOUT || n == -EAGAIN))
            continue;
        if (n < 0)
            fw_die("peer", "recv", n);
        if (n == (int)TMX_CTL) {
            ctl_send(tx, TMX_CMD_STOP, 0);
            return;
        }
        if ((r = mdcom_fifoch_send(tx, buf, (uint32_t)n, RR_MS(5000))) < 0)
            fw_die("peer", "echo", r);
    }
}

/* The hand-over rounds until the stop word: wait for the turn (polling the
 * turn word, outside the lock), take the lock, do the round, give the turn,
 * release. The rounds that found the area disturbed. */
static uint32_t turn_rounds(mdcom_smemch_t *st, volatile uint32_t *w)
{
    uint32_t bad = 0;
    int r;
    for (;;) {
        while (__atomic_load_n(&w[TMX_W_TURN], __ATOMIC_ACQUIRE) != TMX_TURN_CPU1)
            if (__atomic_load_n(&w[TMX_W_STOP], __ATOMIC_ACQUIRE))
                return bad;
        if ((r = mdcom_smemch_lock(st, RR_MS(10000))) != 0)
            fw_die("peer", "lock", r);
        if (w[TMX_W_TURN] != TMX_TURN_CPU1)
            bad++;
        bad += (uint32_t)rr_lock_round(w, TMX_MARK_CPU1);
        w[TMX_W_TURN] = TMX_TURN_CPU0;
        if ((r = mdcom_smemch_unlock(st)) != 0)
            fw_die("peer", "unlock", r);
    }
}

static uint8_t g_rp_state[TMX_RPMSG_STATE] __attribute__((aligned(16)));
static volatile int g_rp_done;

/* the remote's endpoint: echo a data message to its sender, a control
 * message ends the row */
static int rp_echo_cb(mdcom_rpmsg_ept_t *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)priv;
    if (len == TMX_CTL) {
        g_rp_done = 1;
        return 0;
    }
    return mdcom_rpmsg_sendto(ept, data, len, src, RR_MS(5000));
}

/* The RPMsg echo: a remote on "rpmsg", blocked in poll (no spin: the MHU
 * doorbell wakes it), until the host's control message. */
static void rpmsg_echo(mdcom_smemch_t *area_ch)
{
    mdcom_rpmsg_opts ro;
    mdcom_rpmsg_t *rp;
    mdcom_rpmsg_ept_t *ept;
    void *area;
    uint32_t size;
    int r;
    memset(&ro, 0, sizeof(ro));
    ro.role = MDCOM_RPMSG_REMOTE;
    ro.geometry.num_bufs = TMX_RPMSG_NUM_BUFS;
    ro.geometry.buf_size = TMX_RPMSG_BUF_SIZE;
    ro.geometry.vring_align = TMX_RPMSG_ALIGN;
    ro.spin_ns = MDCOM_NO_SPIN;
    ro.attach_timeout_ns = RR_MS(20000);
    if (mdcom_rpmsg_state_size(&ro) > sizeof(g_rp_state))
        fw_die("peer", "rpmsg state", -ENOSPC);
    mdcom_smemch_get(area_ch, &area, &size);
    if ((r = mdcom_rpmsg_init(&rp, g_rp_state, sizeof(g_rp_state), area, size, &ro)) != 0)
        fw_die("peer", "rpmsg init", r);
    g_rp_done = 0;
    r = mdcom_rpmsg_ept_create(rp, &ept, TMX_RPMSG_SERVICE, MDCOM_RPMSG_ADDR_ANY,
                               MDCOM_RPMSG_ADDR_ANY, rp_echo_cb, 0, RR_MS(20000));
    if (r)
        fw_die("peer", "rpmsg endpoint", r);
    while (!g_rp_done)
        if ((r = mdcom_rpmsg_poll(rp, RR_MS(20000))) < 0)
            fw_die("peer", "rpmsg poll", r);
    (void)mdcom_rpmsg_term(rp);
}

static VOID peer_entry(ULONG arg)
{
    mdcom_t *m = rr_attach("peer", MDCOM_AN521RTOS_DOM_CPU1);
    mdcom_fifoch_t *rx = rr_fifo(m, "peer", "a2b"), *tx = rr_fifo(m, "peer", "b2a");
    mdcom_smemch_t *st, *rps;
    void *p;
    uint32_t c[RR_MSG_MAX / 4];
    int r;
    (void)arg;
    if ((r = mdcom_smemch_open(m, "state", &st)) != 0 ||
        (r = mdcom_smemch_open(m, "rpmsg", &rps)) != 0)
        fw_die("peer", "state", r);
    mdcom_smemch_get(st, &p, 0);
    mdcom_bm_puts("cpu1: attached\n");
    for (;;) {
        int n = mdcom_fifoch_recv(rx, c, sizeof(c), RR_MS(120000));
        if (n < 0)
            fw_die("peer", "recv command", n);
        if (n != (int)TMX_CTL || c[0] != TMX_MAGIC)
            fw_die("peer", "command", -EBADMSG);
        ctl_send(tx, c[1], 0);
        switch (c[1]) {
        case TMX_CMD_ECHO_BLOCK:
        case TMX_CMD_ECHO_POLL:
            echo(rx, tx, c[1] == TMX_CMD_ECHO_POLL);
            break;
        case TMX_CMD_LOCK_TURN:
            ctl_send(tx, TMX_CMD_STOP, turn_rounds(st, (volatile uint32_t *)p));
            break;
        case TMX_CMD_RPMSG:
            rpmsg_echo(rps);
            ctl_send(tx, TMX_CMD_STOP, 0);
            break;
        default:
            fw_die("peer", "command", -EINVAL);
        }
    }
}

static VOID wfi_entry(ULONG arg)
{
    (void)arg;
    for (;;)
        __asm__ __volatile__("wfi" ::: "memory");
}

/* ThreadX calls it from tx_kernel_enter, before the scheduler. */
VOID tx_application_define(VOID *first_unused_memory)
{
    (void)first_unused_memory;
    rr_tx_watch_stacks();
    if (tx_thread_create(&g_peer, (CHAR *)"peer", peer_entry, 0, g_peer_stack, STACK_BYTES,
                         PRIO_PEER, PRIO_PEER, TX_NO_TIME_SLICE, TX_AUTO_START) != TX_SUCCESS ||
        tx_thread_create(&g_wfi, (CHAR *)"wfi", wfi_entry, 0, g_wfi_stack, sizeof(g_wfi_stack),
                         PRIO_WFI, PRIO_WFI, TX_NO_TIME_SLICE, TX_AUTO_START) != TX_SUCCESS)
        fw_die("cpu1", "tx_thread_create", -ENOMEM);
}

int main(void)
{
    rr_boot("mdcom-fw-an521-tmx-tx-cpu1");
    tx_kernel_enter(); /* does not return */
    return 1;
}
