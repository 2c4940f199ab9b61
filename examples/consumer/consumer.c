/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * consumer.c - a program that uses an INSTALLED mdcom, as a downstream project
 * does: its configuration (consumer.toml) is turned into C by the installed
 * mdcom-cfg, its headers and library come from the installed tree. The
 * parent is domain "app" (master), a forked child domain "peer"; the parent
 * sends N requests, the child answers each, the parent checks the answers.
 * Exit 0 and "consumer: ok" on success. With --hold SECONDS the parent stays
 * attached that long after the exchange (to look at it with mdcom-stat).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "consumer_cfg.h"
#include "mdcom/mdcom.h"

#define SEC 1000000000ll
#define N 5

static int attach(uint32_t dom, mdcom_t **m, mdcom_fifoch_t **req, mdcom_fifoch_t **rsp)
{
    char err[200] = "";
    mdcom_init_opts o = {.attach_timeout_ns = 5 * SEC, .errbuf = err, .errbuf_len = sizeof(err)};
    int rc = mdcom_init(m, &consumer_config, dom, &o);
    if (rc < 0) {
        fprintf(stderr, "consumer: mdcom_init(%u): %s %s\n", dom, mdcom_strerror(rc), err);
        return rc;
    }
    if ((rc = mdcom_fifoch_at(*m, CONSUMER_CH_REQ, req)) < 0 ||
        (rc = mdcom_fifoch_at(*m, CONSUMER_CH_RSP, rsp)) < 0)
        fprintf(stderr, "consumer: open: %s\n", mdcom_strerror(rc));
    return rc;
}

static int peer(void)
{
    mdcom_t *m;
    mdcom_fifoch_t *req, *rsp;
    char buf[64];
    if (attach(CONSUMER_DOM_PEER, &m, &req, &rsp) < 0)
        return 1;
    for (int i = 0; i < N; i++) {
        int n = mdcom_fifoch_recv(req, buf, sizeof(buf) - 1, 5 * SEC);
        if (n < 0)
            return 1;
        buf[n] = 0;
        char out[64];
        int len = snprintf(out, sizeof(out), "re: %s", buf);
        if (mdcom_fifoch_send(rsp, out, (uint32_t)len, 5 * SEC) < 0)
            return 1;
    }
    mdcom_term(m);
    return 0;
}

int main(int argc, char **argv)
{
    mdcom_t *m;
    mdcom_fifoch_t *req, *rsp;
    if (attach(CONSUMER_DOM_APP, &m, &req, &rsp) < 0)
        return 1;
    pid_t child = fork();
    if (child == 0)
        _exit(peer());
    int bad = child < 0;
    for (int i = 0; i < N && !bad; i++) {
        char msg[32], want[64], got[64];
        int len = snprintf(msg, sizeof(msg), "request %d", i);
        snprintf(want, sizeof(want), "re: %s", msg);
        int n = mdcom_fifoch_send(req, msg, (uint32_t)len, 5 * SEC);
        if (n >= 0)
            n = mdcom_fifoch_recv(rsp, got, sizeof(got) - 1, 5 * SEC);
        if (n < 0) {
            fprintf(stderr, "consumer: %s\n", mdcom_strerror(n));
            bad = 1;
            break;
        }
        got[n] = 0;
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "consumer: got '%s', want '%s'\n", got, want);
            bad = 1;
        }
    }
    int status = 1;
    if (child > 0)
        waitpid(child, &status, 0);
    if (argc == 3 && strcmp(argv[1], "--hold") == 0 && !bad) {
        printf("consumer: holding\n");
        fflush(stdout);
        sleep((unsigned)atoi(argv[2]));
    }
    mdcom_term(m);
    if (bad || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 1;
    printf("consumer: ok (%d round trips, mdcom %d.%d)\n", N, MDCOM_VERSION_MAJOR,
           MDCOM_VERSION_MINOR);
    return 0;
}
