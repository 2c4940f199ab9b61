/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frt_peer.c - one Linux process of qemu_freertos_e2e (test_qemu_freertos.cpp):
 * attaches to the FreeRTOS firmware's region as domain "linux" of
 * freertos.toml, through the UART doorbell shared by every peer (the
 * launcher's multiplexer, doorbell_mux.h), and runs frt_proto.h's part of
 * peer <index>, three threads at once:
 *
 *   up     FRT_UP_COUNT messages, seq + CRC, to the firmware's receiver task
 *   down   FRT_DOWN_COUNT messages from its sender task, every one checked
 *   smem   after the firmware's phase, FRT_SMEM_ROUNDS lock rounds against
 *          the other peer, then its marks
 *
 *   frt_peer <index>     (env MDCOM_SHM_DIR: the region's directory,
 *                         MDCOM_QEMU_SOCKET: the doorbell socket)
 *
 * Prints one line "PEER <i> key=value ..." and exits 0 when everything
 * arrived intact, 1 otherwise, 2 when it could not attach.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doorbell_uart.h"
#include "frt_proto.h"
#include "mdcom/mdcom.h"
#include "mdcom_fw/proto.h" /* fw_crc32, fw_smem_bump: the firmware's own */
#include "mdcom_frt_cfg.h"

#define S(x) ((int64_t)(x)*1000000000ll)

static uint32_t g_idx;
static mdcom_t *g_m;

static struct {
    uint32_t sent;
    int err;
} g_up;

static struct {
    uint32_t got, bad;
    int err;
} g_down;

static struct {
    uint32_t rounds, disturbed, busy;
    int err;
} g_sm;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *up_main(void *arg)
{
    mdcom_fifoch_t *ch;
    uint8_t buf[FRT_MSG_MAX];
    uint32_t seq, i;
    (void)arg;
    g_up.err = mdcom_fifoch_open(g_m, "up", &ch);
    for (seq = 0; !g_up.err && seq < FRT_UP_COUNT; seq++) {
        frt_msg_hdr h = {g_idx, seq, frt_payload_len(g_idx, seq), 0};
        for (i = 0; i < h.len; i++)
            buf[sizeof(h) + i] = frt_payload_byte(g_idx, seq, i);
        h.crc = fw_crc32(buf + sizeof(h), h.len);
        memcpy(buf, &h, sizeof(h));
        /* blocks while the firmware's pool is full: its free rings us */
        g_up.err = mdcom_fifoch_send(ch, buf, sizeof(h) + h.len, S(60));
        if (!g_up.err)
            g_up.sent++;
    }
    return NULL;
}

static void *down_main(void *arg)
{
    char name[8];
    mdcom_fifoch_t *ch;
    uint8_t buf[FRT_MSG_MAX];
    uint32_t want = FRT_FW_SENDER + g_idx; /* the sender task's payload key for us */
    (void)arg;
    snprintf(name, sizeof(name), "down%u", g_idx);
    g_down.err = mdcom_fifoch_open(g_m, name, &ch);
    while (!g_down.err && g_down.got < FRT_DOWN_COUNT) {
        frt_msg_hdr h;
        uint32_t i;
        int r = mdcom_fifoch_recv(ch, buf, sizeof(buf), S(60));
        if (r < 0) {
            g_down.err = r;
            break;
        }
        memcpy(&h, buf, sizeof(h));
        if ((uint32_t)r < sizeof(h) || h.sender != FRT_FW_SENDER || h.seq != g_down.got ||
            h.len != (uint32_t)r - sizeof(h) || h.len != frt_payload_len(want, h.seq) ||
            fw_crc32(buf + sizeof(h), h.len) != h.crc)
            g_down.bad++;
        else {
            for (i = 0; i < h.len && buf[sizeof(h) + i] == frt_payload_byte(want, h.seq, i); i++)
                ;
            if (i != h.len)
                g_down.bad++;
        }
        g_down.got++;
    }
    return NULL;
}

static void *smem_main(void *arg)
{
    mdcom_smemch_t *ch;
    void *p;
    volatile uint32_t *w;
    const uint32_t mark = 0x4c4e5800u | g_idx; /* "LNX" + index */
    double end;
    (void)arg;
    g_sm.err = mdcom_smemch_open(g_m, "state", &ch);
    if (g_sm.err)
        return NULL;
    mdcom_smemch_get(ch, &p, NULL);
    w = p;
    /* the firmware's phase first (frt_proto.h) */
    end = mono_s() + 300;
    while (__atomic_load_n(&w[FRT_W_PHASE], __ATOMIC_ACQUIRE) != 1u) {
        if (mono_s() > end) {
            g_sm.err = -ETIMEDOUT;
            return NULL;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    while (g_sm.rounds < FRT_SMEM_ROUNDS) {
        int r = mdcom_smemch_lock(ch, 2000000); /* 2 ms */
        if (r == -ETIMEDOUT) {
            g_sm.busy++;
            continue;
        }
        if (r) {
            g_sm.err = r;
            return NULL;
        }
        if (fw_smem_bump(w, mark))
            g_sm.disturbed++;
        for (int k = 0; k < 2000; k++)
            __asm__ __volatile__("" ::: "memory");
        if (w[FRT_W_HOLDER] != mark)
            g_sm.disturbed++;
        g_sm.rounds++;
        if (g_sm.rounds == FRT_SMEM_ROUNDS) { /* the marks, under the lock */
            w[FRT_W_DONE + g_idx] = g_sm.rounds;
            w[FRT_W_DIST + g_idx] = g_sm.disturbed;
            __atomic_store_n(&w[FRT_W_FIN + g_idx], 1u, __ATOMIC_RELEASE);
        }
        r = mdcom_smemch_unlock(ch);
        if (r) {
            g_sm.err = r;
            return NULL;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *sock = getenv("MDCOM_QEMU_SOCKET");
    mdcom_uart_doorbell *db = NULL;
    mdcom_init_opts o;
    char err[200] = "";
    pthread_t t[3];
    double t0 = mono_s(), t_att;
    int r, ok;
    if (argc != 2 || !sock || (g_idx = (uint32_t)atoi(argv[1])) >= FRT_PEERS) {
        fprintf(stderr, "usage: MDCOM_SHM_DIR=.. MDCOM_QEMU_SOCKET=.. frt_peer <0..%u>\n",
                FRT_PEERS - 1u);
        return 2;
    }
    r = mdcom_doorbell_uart_open(&db, sock, S(120));
    if (r) {
        printf("PEER %u doorbell_open %s\n", g_idx, mdcom_strerror(r));
        return 2;
    }
    memset(&o, 0, sizeof(o));
    o.platform = mdcom_doorbell_uart_platform(db);
    o.attach_timeout_ns = S(180); /* the firmware may start long after us */
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    r = mdcom_init(&g_m, &mdcom_frt_config, MDCOM_FRT_DOM_LINUX, &o);
    if (r) {
        printf("PEER %u mdcom_init %s: %s\n", g_idx, mdcom_strerror(r), err);
        mdcom_doorbell_uart_close(db);
        return 2;
    }
    t_att = mono_s();
    pthread_create(&t[0], NULL, up_main, NULL);
    pthread_create(&t[1], NULL, down_main, NULL);
    pthread_create(&t[2], NULL, smem_main, NULL);
    for (int k = 0; k < 3; k++)
        pthread_join(t[k], NULL);
    ok = g_up.sent == FRT_UP_COUNT && !g_up.err && g_down.got == FRT_DOWN_COUNT && !g_down.bad &&
         !g_down.err && g_sm.rounds == FRT_SMEM_ROUNDS && !g_sm.disturbed && !g_sm.err;
    printf("PEER %u %s up_sent=%u up_err=%d down_got=%u down_bad=%u down_err=%d smem_rounds=%u "
           "smem_disturbed=%u smem_lock_timeouts=%u smem_err=%d attach_wait_s=%.1f run_s=%.1f "
           "doorbell_rx=%llu doorbell_tx=%llu doorbell_coalesced=%llu\n",
           g_idx, ok ? "PASS" : "FAIL", g_up.sent, g_up.err, g_down.got, g_down.bad, g_down.err,
           g_sm.rounds, g_sm.disturbed, g_sm.busy, g_sm.err, t_att - t0, mono_s() - t_att,
           (unsigned long long)mdcom_doorbell_uart_rx(db),
           (unsigned long long)mdcom_doorbell_uart_tx(db),
           (unsigned long long)mdcom_doorbell_uart_coalesced(db));
    fflush(stdout);
    mdcom_term(g_m);
    mdcom_doorbell_uart_close(db);
    return ok ? 0 : 1;
}
