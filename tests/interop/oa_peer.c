/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * oa_peer.c - the OpenAMP side of the interop tests: the real open-amp +
 * libmetal (built unmodified from ../shared/third_party) as host (virtio
 * driver) or remote (virtio device) on a shared memory file, described by the
 * resource table at its offset 0 and reached through OpenAMP's own
 * remoteproc_virtio layer, as an OpenAMP application does.
 *
 * Service "oa-echo": echoes every message to its sender, alternating copy
 * send, zero-copy send (rpmsg_get_tx_payload_buffer + rpmsg_send_nocopy) and
 * hold/release of the RX buffer (released later from the main loop after
 * its contents were checked again), and keeps a CRC-32 of all it received.
 * Messages starting with "cmd:" are commands (see iop_cmd). Notifications:
 * the remoteproc notify callback rings efd_peer; the main loop sleeps on
 * efd_mine (interrupt-driven) or spins (polling) and then calls
 * rproc_virtio_notified(), as an interrupt handler would.
 */
#define _GNU_SOURCE
#include "interop.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <metal/io.h>
#include <metal/sys.h>
#include <openamp/open_amp.h>
#include <openamp/remoteproc_virtio.h>

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

void iop_write_table(uint8_t *mem)
{
    uint8_t *v = mem + IOP_RSC_VDEV_OFF;
    memset(mem, 0, 0x1000);
    wr32(mem + 0, 1);   /* ver */
    wr32(mem + 4, 1);   /* num */
    wr32(mem + 16, 20); /* offset[0] */
    wr32(mem + 20, 3);  /* RSC_VDEV */
    wr32(v + 0, 7);     /* VIRTIO_ID_RPMSG */
    wr32(v + 4, 2);     /* notifyid of the vdev */
    wr32(v + 8, 1);     /* dfeatures: VIRTIO_RPMSG_F_NS */
    v[21] = 2;          /* num_of_vrings */
    for (uint32_t i = 0; i < 2; i++) {
        uint8_t *r = v + 24 + 20 * i;
        wr32(r + 0, IOP_MEM_DA + (i ? IOP_VRING1 : IOP_VRING0));
        wr32(r + 4, IOP_ALIGN);
        wr32(r + 8, IOP_NUM);
        wr32(r + 12, i); /* notifyid */
    }
}

#define MAX_HELD 8

static struct {
    int efd_peer;
    struct rpmsg_device *rdev;
    struct rpmsg_endpoint echo, second, bound;
    int second_up, bound_up;
    uint32_t n, crc, quit, late, errors;
    struct {
        void *data;
        uint32_t len, crc;
    } held[MAX_HELD];
    uint32_t nheld;
    char ns_log[512];
} g;

static int oa_notify(void *priv, uint32_t id)
{
    uint64_t one = 1;
    (void)priv;
    (void)id;
    if (write(g.efd_peer, &one, 8) != 8)
        g.errors++;
    return 0;
}

static void log_ns(char sign, const char *name)
{
    size_t l = strlen(g.ns_log);
    snprintf(g.ns_log + l, sizeof(g.ns_log) - l, "%c%s,", sign, name);
}

static void ns_bind(struct rpmsg_device *rdev, const char *name, uint32_t dest)
{
    (void)rdev;
    (void)dest;
    log_ns('+', name);
}

static void ns_unbind(struct rpmsg_device *rdev, const char *name, uint32_t dest)
{
    (void)rdev;
    (void)dest;
    log_ns('-', name);
}

static int second_cb(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)ept, (void)data, (void)len, (void)src, (void)priv;
    return RPMSG_SUCCESS;
}

/* The same-name endpoint: OpenAMP binds it to the mdcom side's announced
 * service of that name; it answers every message with "re:" + message. */
static int bound_cb(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    char m[IOP_BUF];
    int n = (int)iop_reply(m, data, len);
    (void)priv;
    if (rpmsg_sendto(ept, m, n, src) != n)
        g.errors++;
    return RPMSG_SUCCESS;
}

/* Name service messages mdcom must drop (and count): short, name without
 * NUL, address ANY, unknown flags. */
static void send_bad_ns(struct rpmsg_endpoint *ept)
{
    struct iop_ns_msg m[4];
    iop_bad_ns_msgs(m);
    if (rpmsg_sendto(ept, &m[0], 10, RPMSG_NS_EPT_ADDR) != 10)
        g.errors++;
    for (int i = 1; i < 4; i++)
        if (rpmsg_sendto(ept, &m[i], sizeof(m[i]), RPMSG_NS_EPT_ADDR) != (int)sizeof(m[i]))
            g.errors++;
}

static void iop_cmd(struct rpmsg_endpoint *ept, const char *c, uint32_t src)
{
    static const char x = 'x';
    if (!strcmp(c, "zero")) {
        if (rpmsg_sendto(ept, &x, 0, src) != 0)
            g.errors++;
    } else if (!strcmp(c, "unknown")) {
        if (rpmsg_sendto(ept, &x, 1, 0xdead) != 1)
            g.errors++;
    } else if (!strcmp(c, "nsdestroy-unknown")) {
        /* struct rpmsg_ns_msg is OpenAMP-internal: its wire form */
        struct iop_ns_msg m;
        iop_ns_ghost_destroy(&m);
        if (rpmsg_sendto(ept, &m, sizeof(m), RPMSG_NS_EPT_ADDR) != (int)sizeof(m))
            g.errors++;
    } else if (!strcmp(c, "announce")) {
        if (rpmsg_create_ept(&g.second, g.rdev, IOP_SECOND_NAME, RPMSG_ADDR_ANY, RPMSG_ADDR_ANY,
                             second_cb, NULL) != 0)
            g.errors++;
        else
            g.second_up = 1;
    } else if (!strcmp(c, "unannounce")) {
        if (g.second_up)
            rpmsg_destroy_ept(&g.second);
        g.second_up = 0;
    } else if (!strcmp(c, "report")) {
        char rep[600];
        int l = snprintf(rep, sizeof(rep), "rep:%u:%08x:%u:%u:%s", g.n, g.crc, g.late, g.errors,
                         g.ns_log);
        if (rpmsg_sendto(ept, rep, l, src) != l)
            g.errors++;
    } else if (!strcmp(c, "nsbad")) {
        send_bad_ns(ept);
    } else if (!strcmp(c, "oddsrc")) {
        /* reserved and ANY source addresses */
        if (rpmsg_send_offchannel(ept, 7, src, "odd", 3) != 3 ||
            rpmsg_send_offchannel(ept, RPMSG_ADDR_ANY, src, "any", 3) != 3)
            g.errors++;
    } else if (!strcmp(c, "bind")) {
        if (rpmsg_create_ept(&g.bound, g.rdev, IOP_MD_NAME, RPMSG_ADDR_ANY, RPMSG_ADDR_ANY,
                             bound_cb, NULL) != 0)
            g.errors++;
        else
            g.bound_up = 1;
    } else if (!strcmp(c, "unbind")) {
        if (g.bound_up)
            rpmsg_destroy_ept(&g.bound);
        g.bound_up = 0;
    } else if (!strcmp(c, "stall")) {
        usleep(300000); /* stop taking messages for a while */
    } else if (!strcmp(c, "quit")) {
        g.quit = 1;
    } else {
        g.errors++;
    }
}

static int echo_cb(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)priv;
    if (len > 4 && !memcmp(data, "cmd:", 4)) {
        char c[64];
        size_t l = len - 4 < sizeof(c) - 1 ? len - 4 : sizeof(c) - 1;
        memcpy(c, (char *)data + 4, l);
        c[l] = '\0';
        iop_cmd(ept, c, src);
        return RPMSG_SUCCESS;
    }
    g.n++;
    g.crc = mdcom_crc32(g.crc, data, len);
    switch (g.n % 3) {
    case 0: /* copy */
        if (rpmsg_sendto(ept, data, (int)len, src) != (int)len)
            g.errors++;
        break;
    case 1: { /* zero copy */
        uint32_t cap = 0;
        void *b = rpmsg_get_tx_payload_buffer(ept, &cap, 1);
        if (!b || cap < len) {
            g.errors++;
            break;
        }
        memcpy(b, data, len);
        if (rpmsg_sendto_nocopy(ept, b, (int)len, src) != (int)len)
            g.errors++;
        break;
    }
    default: /* hold the RX buffer past the callback, echo now, release later */
        if (g.nheld < MAX_HELD) {
            rpmsg_hold_rx_buffer(ept, data);
            g.held[g.nheld].data = data;
            g.held[g.nheld].len = (uint32_t)len;
            g.held[g.nheld].crc = mdcom_crc32(0, data, len);
            g.nheld++;
        }
        if (rpmsg_sendto(ept, data, (int)len, src) != (int)len)
            g.errors++;
        break;
    }
    return RPMSG_SUCCESS;
}

static void release_held(void)
{
    for (uint32_t i = 0; i < g.nheld; i++) {
        /* the peer must not have reused a held buffer */
        if (mdcom_crc32(0, g.held[i].data, g.held[i].len) != g.held[i].crc)
            g.errors++;
        rpmsg_release_rx_buffer(&g.echo, g.held[i].data);
    }
    g.nheld = 0;
}

int iop_peer_run(const struct iop_peer_args *a)
{
    int role = a->role, efd_mine = a->efd_mine, efd_peer = a->efd_peer, polling = a->polling;
    const char *path = a->path;
    struct metal_init_params mp = METAL_INIT_DEFAULTS;
    struct metal_io_region io;
    metal_phys_addr_t pa = IOP_MEM_DA;
    struct rpmsg_virtio_device rvdev;
    struct rpmsg_virtio_shm_pool pool;
    struct rpmsg_virtio_config cfg = {IOP_BUF, IOP_BUF, false};
    struct virtio_device *vdev;
    uint8_t *mem;
    int fd, rc;

    memset(&g, 0, sizeof(g));
    g.efd_peer = efd_peer;
    /* -ENODEV: no uio/vfio bus on this machine; nothing below needs it */
    rc = metal_init(&mp);
    if (rc != 0 && rc != -ENODEV) {
        fprintf(stderr, "oa_peer: metal_init %d\n", rc);
        return 10;
    }
    fd = open(path, O_RDWR);
    if (fd < 0)
        return 11;
    mem = mmap(NULL, IOP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED)
        return 12;
    metal_io_init(&io, mem, &pa, IOP_SIZE, (unsigned int)-1, 0, NULL);
    vdev = rproc_virtio_create_vdev(role == 1 ? VIRTIO_DEV_DRIVER : VIRTIO_DEV_DEVICE, 2,
                                    /* OpenAMP's fw_rsc_vdev starts at the type word */
                                    mem + IOP_RSC_ENTRY_OFF, &io, NULL, oa_notify, NULL);
    if (!vdev)
        return 13;
    if (rproc_virtio_init_vring(vdev, 0, 0, mem + IOP_VRING0, &io, IOP_NUM, IOP_ALIGN) ||
        rproc_virtio_init_vring(vdev, 1, 1, mem + IOP_VRING1, &io, IOP_NUM, IOP_ALIGN))
        return 14;
    if (role == 1) {
        rpmsg_virtio_init_shm_pool(&pool, mem + IOP_POOL, 2u * IOP_NUM * IOP_BUF);
        rc = rpmsg_init_vdev_with_config(&rvdev, vdev, ns_bind, &io, &pool, &cfg);
    } else {
        rc = rpmsg_init_vdev(&rvdev, vdev, ns_bind, &io, NULL);
    }
    if (rc != 0) {
        fprintf(stderr, "oa_peer: rpmsg_init_vdev %d\n", rc);
        return 15;
    }
    g.rdev = rpmsg_virtio_get_rpmsg_device(&rvdev);
    g.rdev->ns_unbind_cb = ns_unbind;
    if (rpmsg_create_ept(&g.echo, g.rdev, IOP_ECHO_NAME, RPMSG_ADDR_ANY, RPMSG_ADDR_ANY, echo_cb,
                         NULL) != 0)
        return 16;
    while (!g.quit) {
        uint32_t before = g.n;
        int woke = 1;
        if (!polling) {
            struct pollfd p = {efd_mine, POLLIN, 0};
            woke = poll(&p, 1, 1000) > 0;
            if (woke) {
                uint64_t v;
                if (read(efd_mine, &v, 8) != 8)
                    g.errors++;
            }
        } else {
            sched_yield();
        }
        rproc_virtio_notified(vdev, RSC_NOTIFY_ID_ANY);
        if (!woke && g.n != before)
            g.late++; /* work found without a notification: a lost wakeup */
        release_held();
    }
    release_held();
    rpmsg_destroy_ept(&g.echo);
    if (role == 1)
        rpmsg_deinit_vdev(&rvdev);
    munmap(mem, IOP_SIZE);
    metal_finish();
    return g.errors ? 20 : 0;
}
