/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile_master.c - the master domain for test_remote_profile, linked with
 * the full core (libmdcom as installed). Formats the region named by argv[1],
 * prints READY, then echoes every message of "up" on "down" until "quit";
 * "cnt?" is answered with mdcom_sense_process(domain 1) as a u32 (the master
 * reaps the remote domain's dead: the remote-only core has no reaper).
 * Exit 0 after "quit", 2 on any error (printed).
 */
#include <stdio.h>
#include <string.h>

#include "mdcom/mdcom.h"
#include "profile_cfg.h"

static int fail(const char *what, int r)
{
    fprintf(stderr, "profile_master: %s: %s\n", what, mdcom_strerror(r));
    return 2;
}

int main(int argc, char **argv)
{
    char err[256] = "", buf[256];
    mdcom_init_opts o;
    mdcom_t *m;
    mdcom_fifoch_t *up, *down;
    mdcom_config cfg;
    int r;
    if (argc != 2)
        return 2;
    cfg = profile_config(argv[1]);
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    r = mdcom_init(&m, &cfg, 0, &o);
    if (r) {
        fprintf(stderr, "profile_master: init: %s\n", err);
        return 2;
    }
    if ((r = mdcom_fifoch_open(m, "up", &up)) || (r = mdcom_fifoch_open(m, "down", &down)))
        return fail("open", r);
    printf("READY\n");
    fflush(stdout);
    for (;;) {
        int n = mdcom_fifoch_recv(up, buf, sizeof(buf), 10000000000LL);
        if (n < 0)
            return fail("recv", n);
        if (n == 4 && memcmp(buf, "quit", 4) == 0)
            break;
        if (n == 4 && memcmp(buf, "cnt?", 4) == 0) {
            int c = mdcom_sense_process(m, 1);
            uint32_t v = c < 0 ? 0xffffffffu : (uint32_t)c;
            memcpy(buf, &v, 4);
            n = 4;
        }
        if ((r = mdcom_fifoch_send(down, buf, (uint32_t)n, 1000000000LL)) != 0)
            return fail("send", r);
    }
    return mdcom_term(m) ? 2 : 0;
}
