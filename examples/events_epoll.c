/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events_epoll.c - an epoll loop that serves mdcom channels next to its
 * other fds (docs/events.md): a wait set over two channels exposes one fd;
 * the loop sleeps in epoll_wait until a notify from the other domain (here a
 * thread attached as the sensor domain, the region's master; another process
 * or firmware is the same), asks the set which channels fired, drains them
 * and goes back. When the master ends the region (mdcom_term, after its
 * messages were taken), the fd stays readable and mdcom_waitset_wait answers
 * -ESHUTDOWN: that negative answer is how the loop ends (docs/events.md,
 * "When the region ends"); a loop that ignored it would spin.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "mdcom/events.h"
#include "mdcom/mdcom.h"

/* one channel per line */
/* clang-format off */
static const mdcom_domain_cfg doms[] = {{"app", 0, MDCOM_ROLE_REMOTE}, {"sensor", 1, MDCOM_ROLE_MASTER}};
static const mdcom_channel_cfg chans[] = {
    {.name = "temp", .type = MDCOM_CHAN_FIFO, .block_size = 64, .block_count = 8, .senders = 2, .receivers = 1},
    {.name = "alarm", .type = MDCOM_CHAN_FIFO, .block_size = 64, .block_count = 8, .senders = 2, .receivers = 1},
};
/* clang-format on */
static char region[32];
static const mdcom_config cfg = {.region_name = region,
                                 .group = -1,
                                 .domains = doms,
                                 .n_domains = 2,
                                 .channels = chans,
                                 .n_channels = 2};
#define N 5

static void *sensor(void *arg)
{
    mdcom_t *m;
    mdcom_fifoch_t *temp, *alarm;
    mdcom_init_opts o = {.attach_timeout_ns = 5000000000ll};
    (void)arg;
    if (mdcom_init(&m, &cfg, 1, &o) || mdcom_fifoch_open(m, "temp", &temp) ||
        mdcom_fifoch_open(m, "alarm", &alarm))
        return NULL;
    for (int i = 0; i < N; i++) {
        char msg[16];
        usleep(10000);
        snprintf(msg, sizeof msg, "%d C", 20 + i);
        mdcom_fifoch_send(temp, msg, (uint32_t)strlen(msg) + 1, 5000000000ll);
    }
    mdcom_fifoch_send(alarm, "overheat", 9, 5000000000ll);
    /* end the region once the app has taken everything (at most 5 s) */
    for (int t = 0; t < 5000; t++) {
        mdcom_fifo_state a = {0}, b = {0};
        if (mdcom_sense_fifoch(temp, &a) || mdcom_sense_fifoch(alarm, &b) ||
            a.queued + b.queued == 0)
            break;
        usleep(1000);
    }
    mdcom_term(m); /* the master: this terminates the region for the app */
    return NULL;
}

int main(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *ch[2];
    mdcom_waitset_t *ws;
    pthread_t th;
    int ep, fd, got = 0, end = 0, r;
    mdcom_init_opts o = {.attach_timeout_ns = 5000000000ll}; /* the master comes up meanwhile */
    snprintf(region, sizeof region, "mdcom-ev-epoll-%ld", (long)getpid());
    pthread_create(&th, NULL, sensor, NULL);
    if ((r = mdcom_init(&m, &cfg, 0, &o)) || (r = mdcom_fifoch_open(m, "temp", &ch[0])) ||
        (r = mdcom_fifoch_open(m, "alarm", &ch[1])) || (r = mdcom_waitset_create(m, &ws))) {
        fprintf(stderr, "events_epoll: %s\n", mdcom_strerror(r));
        return 1;
    }
    for (int i = 0; i < 2; i++)
        mdcom_waitset_add_fifo(ws, ch[i], MDCOM_EV_RX, (void *)chans[i].name);
    fd = mdcom_waitset_fd(ws);
    ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};
    if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0) {
        fprintf(stderr, "events_epoll: fd/epoll failed\n");
        return 1;
    }
    while (!end) {
        struct epoll_event out[4];
        mdcom_event ev[2];
        int n = epoll_wait(ep, out, 4, 5000);
        if (n <= 0) {
            fprintf(stderr, "events_epoll: no event within 5 s\n");
            return 1;
        }
        /* which channels fired; MDCOM_POLL also re-arms the level of the fd */
        n = mdcom_waitset_wait(ws, ev, 2, MDCOM_POLL);
        if (n < 0 && n != -ETIMEDOUT && n != -EINTR) { /* -ETIMEDOUT: stale readiness */
            end = n; /* -ESHUTDOWN, -ECONNRESET, -ENOTCONN: the region ended */
            printf("events_epoll: region ended: %s\n", mdcom_strerror(n));
        }
        for (int k = 0; k < n; k++) {
            char buf[64];
            while (mdcom_fifoch_recv(ev[k].ch, buf, sizeof buf, MDCOM_POLL) > 0) {
                printf("%s: %s\n", (const char *)ev[k].user, buf);
                got++;
            }
        }
    }
    pthread_join(th, NULL);
    close(ep);
    mdcom_waitset_destroy(ws);
    mdcom_term(m);
    return got == N + 1 && end == -ESHUTDOWN ? 0 : 1;
}
