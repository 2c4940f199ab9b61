/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_openamp.c - mdcom-fw-openamp: OpenAMP's own RPMsg (open-amp + libmetal,
 * built unmodified from ../shared/third_party for this Cortex-M4, libmetal's
 * generic system) as the firmware, the peer of the "MDCOM FIFO vs OpenAMP's
 * RPMsg on the same link" rows of `mdcom-bench --target qemu-m4 latency`.
 * Layout, service and modes: mdcom_fw/oa_layout.h. The board and the
 * doorbell are the bare-metal port's (console, SysTick, UART doorbell
 * interrupt); no mdcom call on the message path.
 */
#include <stdint.h>
#include <string.h>

#include <metal/io.h>
#include <metal/sys.h>
#include <openamp/open_amp.h>
#include <openamp/remoteproc_virtio.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom_fw/oa_layout.h"

static struct metal_io_region g_io;
static metal_phys_addr_t g_pa = FW_OA_DA;
static struct rpmsg_virtio_device g_rvdev;
static struct rpmsg_endpoint g_ept;
static volatile uint32_t *const g_ctl = (volatile uint32_t *)(FW_OA_DA + FW_OA_CTL);

/* libmetal's generic system allocates with malloc (the vdev, at start
 * only): a bump allocator over a static arena; nothing is freed. */
static uint8_t g_arena[4096] __attribute__((aligned(8)));
static uint32_t g_arena_used;

void *malloc(size_t n);
void free(void *p);

void *malloc(size_t n)
{
    void *p;
    n = (n + 7u) & ~(size_t)7u;
    if (n > sizeof(g_arena) - g_arena_used)
        return 0;
    p = g_arena + g_arena_used;
    g_arena_used += (uint32_t)n;
    return p;
}

void free(void *p) { (void)p; }

/* libmetal's metal_assert(): report and stop (newlib's would pull in stdio) */
void __assert_func(const char *file, int line, const char *func, const char *expr);

void __assert_func(const char *file, int line, const char *func, const char *expr)
{
    (void)func;
    mdcom_bm_puts("fw-openamp: assertion ");
    mdcom_bm_puts(expr);
    mdcom_bm_puts(" failed at ");
    mdcom_bm_puts(file);
    mdcom_bm_puts(":");
    mdcom_bm_put_u32((uint32_t)line);
    mdcom_bm_puts("\n");
    mdcom_bm_exit(2);
}

/* OpenAMP's notify: ring Linux (one UART byte) */
static int oa_notify(void *priv, uint32_t id)
{
    (void)priv;
    (void)id;
    mdcom_board_desc.ring(0);
    return 0;
}

/* the echo: the send's copy is the one copy, nothing checked */
static int echo_cb(struct rpmsg_endpoint *ept, void *data, size_t len, uint32_t src, void *priv)
{
    (void)priv;
    if (rpmsg_sendto(ept, data, (int)len, src) < 0)
        g_ctl[FW_OA_ERRORS]++;
    else
        g_ctl[FW_OA_ECHOED]++;
    return RPMSG_SUCCESS;
}

/* the clock of FW_OA_COSTING: the MPS2 FPGAIO counter (25 MHz: 40 ns a
 * tick; under -icount shift=0 one instruction is 1 ns) */
#define COUNTER MDCOM_BM_REG(0x40028018u)
#define COUNTER_NS 40u

/* the clock's own cost: the mean of 64 back-to-back pairs of reads (ns) */
static uint32_t clock_pair_ns(void)
{
    uint32_t sum = 0, k;
    for (k = 0; k < 64; k++) {
        uint32_t a = COUNTER;
        sum += (COUNTER - a) * COUNTER_NS;
    }
    return sum / 64u;
}

/* one poll; with FW_OA_COSTING its cost when it echoed messages */
static void poll_once(struct virtio_device *vdev, uint32_t pair)
{
    uint32_t n0, t0, d;
    if (!g_ctl[FW_OA_COSTING]) {
        rproc_virtio_notified(vdev, RSC_NOTIFY_ID_ANY);
        return;
    }
    n0 = g_ctl[FW_OA_ECHOED];
    t0 = COUNTER;
    rproc_virtio_notified(vdev, RSC_NOTIFY_ID_ANY);
    d = (COUNTER - t0) * COUNTER_NS;
    if (g_ctl[FW_OA_ECHOED] != n0) {
        g_ctl[FW_OA_COST] += d > pair ? d - pair : 0;
        g_ctl[FW_OA_COST_N] += g_ctl[FW_OA_ECHOED] - n0;
    }
}

static void die(const char *what)
{
    mdcom_bm_puts("fw-openamp: ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(" failed\n");
    mdcom_bm_exit(2);
}

int main(void)
{
    struct metal_init_params mp = METAL_INIT_DEFAULTS;
    uint8_t *mem = (uint8_t *)FW_OA_DA;
    struct virtio_device *vdev;
    uint32_t pair;
    mdcom_bm_puts("mdcom-fw-openamp (OpenAMP RPMsg remote) on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts("\n");
    if (metal_init(&mp))
        die("metal_init");
    metal_io_init(&g_io, mem, &g_pa, FW_OA_SIZE, (unsigned)-1, 0, NULL);
    vdev = rproc_virtio_create_vdev(VIRTIO_DEV_DEVICE, 2, mem + FW_OA_RSC + FW_OA_VDEV, &g_io, NULL,
                                    oa_notify, NULL);
    if (!vdev)
        die("rproc_virtio_create_vdev");
    if (rproc_virtio_init_vring(vdev, 0, 0, mem + FW_OA_VRING0, &g_io, FW_OA_NUM, FW_OA_ALIGN) ||
        rproc_virtio_init_vring(vdev, 1, 1, mem + FW_OA_VRING1, &g_io, FW_OA_NUM, FW_OA_ALIGN))
        die("rproc_virtio_init_vring");
    mdcom_bm_puts("READY\n"); /* Linux starts the host side now */
    /* device role: returns once the host set DRIVER_OK */
    if (rpmsg_init_vdev(&g_rvdev, vdev, NULL, &g_io, NULL))
        die("rpmsg_init_vdev");
    if (rpmsg_create_ept(&g_ept, rpmsg_virtio_get_rpmsg_device(&g_rvdev), FW_OA_SERVICE,
                         RPMSG_ADDR_ANY, RPMSG_ADDR_ANY, echo_cb, NULL))
        die("rpmsg_create_ept");
    pair = clock_pair_ns();
    g_ctl[FW_OA_UP] = 1;
    for (;;) {
        uint32_t rings = mdcom_bm_doorbell_count();
        poll_once(vdev, pair);
        if (g_ctl[FW_OA_MODE] == 1) {
            /* masked WFI: a ring after the poll above still ends it */
            uint32_t pm = mdcom_bm_irq_save();
            if (mdcom_bm_doorbell_count() == rings)
                mdcom_bm_wfi();
            mdcom_bm_irq_restore(pm);
        }
    }
}
