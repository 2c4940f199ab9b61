/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tm_traffic.c - the mdcom side of the Thread-Metric traffic images
 * (tm-<kernel>-<test>-traffic.elf), the same for every kernel: the receiver
 * thread (tm_traffic.h) dequeues and frees every message a Linux process
 * sends on "flood" (tm_traffic.toml), checking its sequence number, so that
 * the traffic costs the firmware what real traffic costs: the UART doorbell
 * interrupt, the thread's wake-up, the dequeue, the copy and the free (whose
 * ring wakes a sender blocked on a full channel), at most TM_TRAFFIC_BUDGET
 * messages a kernel tick (tm_traffic.h). The test's score is the
 * unmodified Thread-Metric test's; the report hook adds the messages
 * received in each period.
 */
#include <errno.h>
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom/mdcom.h"
#include "mdcom_tm_layout.h"
#include "tm_traffic.h"

static volatile uint32_t g_got, g_bad, g_err;
static uint32_t g_got_reported, g_bad_reported;

static void tm_traffic_die(const char *what, const char *why, int r)
{
    mdcom_bm_puts("FAULT tm_traffic ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(why && why[0] ? why : mdcom_strerror(r));
    mdcom_bm_puts("\n");
    mdcom_bm_exit(7);
}

void tm_traffic_rx(void *arg)
{
    static char err[128];
    uint32_t buf[TM_TRAFFIC_MSG / 4u + 1u]; /* one word more: a longer message shows */
    uint32_t next = 0;
    mdcom_init_opts o;
    mdcom_fifoch_t *ch;
    mdcom_t *m;
    int r;
    (void)arg;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    o.layout = &mdcom_tm_layout; /* computed on the build host */
    r = mdcom_init(&m, mdcom_tm_layout.cfg, MDCOM_TM_DOM_M4, &o);
    if (r)
        tm_traffic_die("mdcom_init", err, r);
    r = mdcom_fifoch_open(m, TM_TRAFFIC_CHANNEL, &ch);
    if (r)
        tm_traffic_die("mdcom_fifoch_open", 0, r);
    /* block at once: spinning above every test thread would be the
     * receiver's cost, not the traffic's */
    mdcom_fifoch_set_spin(ch, MDCOM_NO_SPIN);
    mdcom_bm_puts("READY\n"); /* mdcom-qemu starts the Linux side now */
    for (;;) {
        /* block (the doorbell) until a message, then take what is queued,
         * at most TM_TRAFFIC_BUDGET a tick */
        uint32_t n = 0;
        int64_t tmo = MDCOM_FOREVER;
        while (n < TM_TRAFFIC_BUDGET) {
            r = mdcom_fifoch_recv(ch, buf, sizeof(buf), tmo);
            tmo = MDCOM_POLL;
            if (r == -ETIMEDOUT)
                break; /* drained */
            if (r < 0) {
                g_err++;
                break;
            }
            if ((uint32_t)r != TM_TRAFFIC_MSG || buf[0] != next || buf[1] != TM_TRAFFIC_MAGIC)
                g_bad++;
            next = buf[0] + 1u;
            g_got++;
            n++;
        }
        if (n >= TM_TRAFFIC_BUDGET)
            tm_traffic_sleep_tick();
    }
}

void tm_traffic_period(void)
{
    uint32_t got = g_got, bad = g_bad;
    mdcom_bm_puts("TM traffic period: received=");
    mdcom_bm_put_u32(got - g_got_reported);
    mdcom_bm_puts(" bad=");
    mdcom_bm_put_u32(bad - g_bad_reported);
    mdcom_bm_puts(" err=");
    mdcom_bm_put_u32(g_err);
    mdcom_bm_puts("\n");
    g_got_reported = got;
    g_bad_reported = bad;
}
