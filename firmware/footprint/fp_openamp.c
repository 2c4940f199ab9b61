// SPDX-License-Identifier: BSD-3-Clause
/*
 * fp_openamp.c - the minimal OpenAMP application of the footprint table, the
 * counterpart of fp_rpmsg_lite.c and fp_mdcom_rpmsg.c: an OpenAMP remote
 * (open-amp + libmetal's generic system, both unmodified) on a resource
 * table in its image, reached through OpenAMP's remoteproc_virtio layer as
 * an OpenAMP application does; one announced endpoint, one message sent,
 * messages received in the callback rproc_virtio_notified() runs from the
 * mailbox interrupt. OpenAMP allocates its virtqueues with
 * metal_allocate_memory (malloc): a bump allocator on a static pool stands
 * in for the C library's, as in small firmware; its string functions come
 * from newlib-nano (libc_nano).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <metal/io.h>
#include <metal/sys.h>
#include <openamp/open_amp.h>
#include <openamp/remoteproc_virtio.h>

#include "fp_board.h"

volatile int fp_result;
static volatile uint32_t received;
static struct virtio_device *vdev;

/* the resource table: one rpmsg vdev with two vrings at the shared memory
 * (OpenAMP's struct fw_rsc_vdev starts with the entry's type word) */
struct fp_rsc {
    uint32_t ver, num, reserved[2], offset[1];
    struct fw_rsc_vdev vdev;
    struct fw_rsc_vdev_vring vring[2];
} __attribute__((packed));
static struct fp_rsc rsc = {
    .ver = 1,
    .num = 1,
    .offset = {offsetof(struct fp_rsc, vdev)},
    .vdev = {.type = RSC_VDEV,
             .id = VIRTIO_ID_RPMSG,
             .dfeatures = 1u << VIRTIO_RPMSG_F_NS,
             .num_of_vrings = 2},
    .vring = {
        {.da = 0x20200000u, .align = FP_ALIGN, .num = FP_NUM, .notifyid = 0},
        {.da = 0x20200000u + FP_VRING_SIZE, .align = FP_ALIGN, .num = FP_NUM, .notifyid = 1}}};

void *malloc(size_t n);
void free(void *p);
void *malloc(size_t n)
{
    static uint8_t pool[1024] __attribute__((aligned(8)));
    static size_t used;
    void *p;
    n = (n + 7u) & ~(size_t)7u;
    if (n > sizeof(pool) - used)
        return NULL;
    p = pool + used;
    used += n;
    return p;
}
void free(void *p) { (void)p; }

void MAILBOX_IRQHandler(void);

static int notify(void *priv, uint32_t id)
{
    (void)priv;
    FP_MAILBOX = id;
    return 0;
}

static int on_msg(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)ept, (void)data, (void)src, (void)priv;
    received += (uint32_t)len;
    return RPMSG_SUCCESS;
}

void Reset_Handler(void)
{
    static struct metal_io_region io;
    static struct rpmsg_virtio_device rvdev;
    static struct rpmsg_endpoint ept;
    static metal_phys_addr_t pa = 0x20200000u;
    struct metal_init_params mp = METAL_INIT_DEFAULTS;
    int rc = metal_init(&mp);
    metal_io_init(&io, FP_SHM, &pa, 2u * FP_VRING_SIZE + 2u * FP_NUM * (FP_PAYLOAD + 16u),
                  (unsigned int)-1, 0, NULL);
    vdev = rproc_virtio_create_vdev(VIRTIO_DEV_DEVICE, 0, &rsc.vdev, &io, NULL, notify, NULL);
    if (rc == 0 && vdev &&
        rproc_virtio_init_vring(vdev, 0, 0, FP_SHM, &io, FP_NUM, FP_ALIGN) == 0 &&
        rproc_virtio_init_vring(vdev, 1, 1, FP_SHM + FP_VRING_SIZE, &io, FP_NUM, FP_ALIGN) == 0 &&
        rpmsg_init_vdev(&rvdev, vdev, NULL, &io, NULL) == 0 &&
        rpmsg_create_ept(&ept, rpmsg_virtio_get_rpmsg_device(&rvdev), "fp", RPMSG_ADDR_ANY,
                         RPMSG_ADDR_ANY, on_msg, NULL) == 0)
        rc = rpmsg_sendto(&ept, "hello", 6, 1024);
    else
        rc = -1;
    fp_result = rc;
    for (;;) {
    }
}

/* the mailbox interrupt: OpenAMP's handler of both vrings */
void MAILBOX_IRQHandler(void) { rproc_virtio_notified(vdev, RSC_NOTIFY_ID_ANY); }

__attribute__((section(".vectors"), used)) static void (*const vectors[3])(void) = {
    (void (*)(void))0x20400000, Reset_Handler, MAILBOX_IRQHandler};
