// SPDX-License-Identifier: BSD-3-Clause
/*
 * rl_peer.c - the RPMsg-Lite side of the interop tests: NXP RPMsg-Lite
 * (built unmodified from ../shared/third_party by rpmsg_lite.cmake) as
 * master (virtio driver) or remote (device) on the shared memory file, with
 * the POSIX environment and platform layers of this directory
 * (rl_env_posix.c, rl_platform_posix.c). Its layout is RPMsg-Lite's fixed
 * one (rl_port/rpmsg_config.h): no resource table; the mdcom side binds to
 * the same vrings and pool.
 *
 * Service "rl-echo", announced through RPMsg-Lite's name service: the
 * endpoint callback (RPMsg-Lite calls it from the "interrupt", here
 * iop_rl_platform_dispatch) holds every RX buffer (RL_HOLD) and queues it;
 * the main loop echoes each to its sender, alternating copy send,
 * zero-copy send (rpmsg_lite_alloc_tx_buffer + rpmsg_lite_send_nocopy) and
 * a release deferred past the next wait (its contents checked again then),
 * and keeps a CRC-32 of all it received. Messages starting with "cmd:" are
 * commands (rl_cmd), the same set oa_peer.c understands.
 */
#define _GNU_SOURCE
#include "interop.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rpmsg_env.h"
#include "rpmsg_lite.h"
#include "rpmsg_ns.h"

#define QMAX (2u * IOP_NUM)
#define MAX_HELD 8u

static struct {
    struct rpmsg_lite_instance *rl;
    struct rpmsg_lite_endpoint *echo, *second, *bound;
    rpmsg_ns_handle ns;
    uint32_t n, crc, quit, late, errors, received;
    struct {
        void *data;
        uint32_t len, src;
    } q[QMAX];
    uint32_t qhead, qtail;
    struct {
        void *data;
        uint32_t len, crc;
    } held[MAX_HELD];
    uint32_t nheld;
    char ns_log[512];
} g;

static void log_ns(char sign, const char *name)
{
    size_t l = strlen(g.ns_log);
    snprintf(g.ns_log + l, sizeof(g.ns_log) - l, "%c%s,", sign, name);
}

static void ns_cb(uint32_t new_ept, const char *name, uint32_t flags, void *user)
{
    (void)new_ept, (void)user;
    log_ns(flags == RL_NS_DESTROY ? '-' : '+', name);
}

/* RPMsg-Lite's "interrupt" context: queue and hold; the main loop works */
static int32_t echo_cb(void *payload, uint32_t len, uint32_t src, void *priv)
{
    (void)priv;
    g.received++;
    if (g.qtail - g.qhead >= QMAX) {
        g.errors++;
        return RL_RELEASE;
    }
    g.q[g.qtail % QMAX].data = payload;
    g.q[g.qtail % QMAX].len = len;
    g.q[g.qtail % QMAX].src = src;
    g.qtail++;
    return RL_HOLD;
}

static int32_t second_cb(void *payload, uint32_t len, uint32_t src, void *priv)
{
    (void)payload, (void)len, (void)src, (void)priv;
    return RL_RELEASE;
}

static void rl_release(void *data)
{
    if (rpmsg_lite_release_rx_buffer(g.rl, data) != RL_SUCCESS)
        g.errors++;
}

static void rl_sendto(struct rpmsg_lite_endpoint *ept, uint32_t dst, const void *data, uint32_t len)
{
    if (rpmsg_lite_send(g.rl, ept, dst, (char *)(uintptr_t)data, len, RL_BLOCK) != RL_SUCCESS)
        g.errors++;
}

/* The same-name endpoint (RPMsg-Lite has no name binding of its own: it
 * announces the name, and the mdcom side binds): it answers every message
 * with "re:" + message, from the callback (a non-blocking send, as an
 * interrupt handler may). */
static int32_t bound_cb(void *payload, uint32_t len, uint32_t src, void *priv)
{
    char m[IOP_BUF];
    uint32_t n = iop_reply(m, payload, len);
    (void)priv;
    if (rpmsg_lite_send(g.rl, g.bound, src, m, n, RL_DONT_BLOCK) != RL_SUCCESS)
        g.errors++;
    return RL_RELEASE;
}

static void rl_cmd(const char *c, uint32_t src)
{
    static const char x = 'x';
    if (!strcmp(c, "zero")) {
        rl_sendto(g.echo, src, &x, 0);
    } else if (!strcmp(c, "unknown")) {
        rl_sendto(g.echo, 0xdead, &x, 1);
    } else if (!strcmp(c, "nsdestroy-unknown")) {
        /* RPMsg-Lite's struct of it is internal to rpmsg_ns.c */
        struct iop_ns_msg m;
        iop_ns_ghost_destroy(&m);
        rl_sendto(g.echo, IOP_NS_ADDR, &m, sizeof(m));
    } else if (!strcmp(c, "announce")) {
        g.second = rpmsg_lite_create_ept(g.rl, RL_ADDR_ANY, second_cb, NULL);
        if (!g.second ||
            rpmsg_ns_announce(g.rl, g.second, IOP_SECOND_NAME, RL_NS_CREATE) != RL_SUCCESS)
            g.errors++;
    } else if (!strcmp(c, "unannounce")) {
        if (g.second) {
            if (rpmsg_ns_announce(g.rl, g.second, IOP_SECOND_NAME, RL_NS_DESTROY) != RL_SUCCESS)
                g.errors++;
            rpmsg_lite_destroy_ept(g.rl, g.second);
        }
        g.second = NULL;
    } else if (!strcmp(c, "report")) {
        char rep[600];
        int l = snprintf(rep, sizeof(rep), "rep:%u:%08x:%u:%u:%s", g.n, g.crc, g.late, g.errors,
                         g.ns_log);
        rl_sendto(g.echo, src, rep, (uint32_t)l);
    } else if (!strcmp(c, "nsbad")) {
        /* name service messages mdcom must drop (and count) */
        struct iop_ns_msg m[4];
        iop_bad_ns_msgs(m);
        rl_sendto(g.echo, IOP_NS_ADDR, &m[0], 10);
        for (int i = 1; i < 4; i++)
            rl_sendto(g.echo, IOP_NS_ADDR, &m[i], sizeof(m[i]));
    } else if (!strcmp(c, "oddsrc")) {
        /* a reserved source address: an endpoint RPMsg-Lite lets us put
         * there (it has no off-channel send) */
        struct rpmsg_lite_endpoint *odd = rpmsg_lite_create_ept(g.rl, 7, second_cb, NULL);
        if (!odd) {
            g.errors++;
            return;
        }
        rl_sendto(odd, src, "odd", 3);
        rpmsg_lite_destroy_ept(g.rl, odd);
    } else if (!strcmp(c, "bind")) {
        g.bound = rpmsg_lite_create_ept(g.rl, RL_ADDR_ANY, bound_cb, NULL);
        if (!g.bound || rpmsg_ns_announce(g.rl, g.bound, IOP_MD_NAME, RL_NS_CREATE) != RL_SUCCESS)
            g.errors++;
    } else if (!strcmp(c, "unbind")) {
        if (g.bound) {
            if (rpmsg_ns_announce(g.rl, g.bound, IOP_MD_NAME, RL_NS_DESTROY) != RL_SUCCESS)
                g.errors++;
            rpmsg_lite_destroy_ept(g.rl, g.bound);
        }
        g.bound = NULL;
    } else if (!strcmp(c, "stall")) {
        env_sleep_msec(300); /* stop taking messages for a while */
    } else if (!strcmp(c, "quit")) {
        g.quit = 1;
    } else {
        g.errors++;
    }
}

static void release_held(void)
{
    for (uint32_t i = 0; i < g.nheld; i++) {
        /* the peer must not have reused a held buffer */
        if (mdcom_crc32(0, g.held[i].data, g.held[i].len) != g.held[i].crc)
            g.errors++;
        rl_release(g.held[i].data);
    }
    g.nheld = 0;
}

static void process(void *data, uint32_t len, uint32_t src)
{
    if (len > 4 && !memcmp(data, "cmd:", 4)) {
        char c[64];
        size_t l = len - 4 < sizeof(c) - 1 ? len - 4 : sizeof(c) - 1;
        memcpy(c, (char *)data + 4, l);
        c[l] = '\0';
        rl_release(data);
        rl_cmd(c, src);
        return;
    }
    g.n++;
    g.crc = mdcom_crc32(g.crc, data, len);
    switch (g.n % 3) {
    case 0: /* copy */
        rl_sendto(g.echo, src, data, len);
        rl_release(data);
        break;
    case 1: { /* zero copy */
        uint32_t cap = 0;
        void *b = rpmsg_lite_alloc_tx_buffer(g.rl, &cap, RL_BLOCK);
        if (!b || cap < len) {
            g.errors++;
            rl_release(data);
            break;
        }
        memcpy(b, data, len);
        if (rpmsg_lite_send_nocopy(g.rl, g.echo, src, b, len) != RL_SUCCESS)
            g.errors++;
        rl_release(data);
        break;
    }
    default: /* echo now, give the RX buffer back after the next wait */
        rl_sendto(g.echo, src, data, len);
        if (g.nheld < MAX_HELD) {
            g.held[g.nheld].data = data;
            g.held[g.nheld].len = len;
            g.held[g.nheld].crc = mdcom_crc32(0, data, len);
            g.nheld++;
        } else {
            rl_release(data);
        }
        break;
    }
}

int iop_peer_run(const struct iop_peer_args *a)
{
    struct iop_rl_platform p;
    uint8_t *mem;
    int fd;

    memset(&g, 0, sizeof(g));
    fd = open(a->path, O_RDWR);
    if (fd < 0)
        return 11;
    mem = mmap(NULL, IOP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED)
        return 12;
    p.mem = mem;
    p.mem_da = IOP_MEM_DA;
    p.mem_size = IOP_SIZE;
    p.efd_mine = a->efd_mine;
    p.efd_peer = a->efd_peer;
    p.irq_mine = a->irq_mine;
    p.irq_peer = a->irq_peer;
    iop_rl_platform_setup(&p);
    if (a->role == 1)
        g.rl = rpmsg_lite_master_init(mem + IOP_VRING0, IOP_SIZE - IOP_VRING0, 0, RL_NO_FLAGS);
    else
        g.rl = rpmsg_lite_remote_init(mem + IOP_VRING0, 0, RL_NO_FLAGS);
    if (!g.rl)
        return 13;
    if (a->role == 1 && !a->polling) {
        /* RPMsg-Lite's master sets VRING_AVAIL_F_NO_INTERRUPT on both its
         * vrings at init (virtqueue_disable_cb) and never clears it: its own
         * remote ignores that flag and always notifies, but a device that
         * honours it (virtio 1.x 2.7.7: mdcom, OpenAMP) never interrupts
         * such a master. An interrupt-driven master application has to ask
         * for its interrupts, with RPMsg-Lite's own virtqueue API. */
        virtqueue_enable_cb(g.rl->rvq);
        virtqueue_enable_cb(g.rl->tvq);
    }
    /* the remote's link comes up with the host's first notification */
    if (rpmsg_lite_wait_for_link_up(g.rl, 10000) != 1)
        return 14;
    g.ns = rpmsg_ns_bind(g.rl, ns_cb, NULL);
    g.echo = rpmsg_lite_create_ept(g.rl, RL_ADDR_ANY, echo_cb, NULL);
    if (!g.ns || !g.echo)
        return 15;
    if (rpmsg_ns_announce(g.rl, g.echo, IOP_ECHO_NAME, RL_NS_CREATE) != RL_SUCCESS)
        return 16;
    while (!g.quit) {
        uint32_t before = g.received;
        int woke = 1;
        if (!a->polling) {
            struct pollfd pf = {a->efd_mine, POLLIN, 0};
            woke = poll(&pf, 1, 1000) > 0;
            if (woke) {
                uint64_t v;
                if (read(a->efd_mine, &v, 8) != 8)
                    g.errors++;
            }
        } else {
            sched_yield();
        }
        iop_rl_platform_dispatch(a->polling || !woke);
        if (!woke && g.received != before)
            g.late++; /* work found without a notification: a lost wakeup */
        release_held();
        while (g.qhead != g.qtail && !g.quit) {
            uint32_t i = g.qhead++ % QMAX;
            process(g.q[i].data, g.q[i].len, g.q[i].src);
        }
    }
    release_held();
    while (g.qhead != g.qtail) /* anything after quit */
        rl_release(g.q[g.qhead++ % QMAX].data);
    rpmsg_lite_destroy_ept(g.rl, g.echo);
    rpmsg_ns_unbind(g.rl, g.ns);
    rpmsg_lite_deinit(g.rl);
    munmap(mem, IOP_SIZE);
    return g.errors ? 20 : 0;
}
