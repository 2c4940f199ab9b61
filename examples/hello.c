/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hello.c - the smallest complete mdcom program.
 *
 * The system is examples/demo.toml, turned into C tables by mdcom-cfg at build
 * time (demo_cfg.h / demo_cfg.c). This program plays both domains: the parent
 * process is "linux" (the master), a forked child is "m4" (a remote; on a real
 * SoC it would be firmware on the other core, linked with the same tables).
 *
 *   linux --ctl (zero-copy)--> m4     commands
 *   linux <--evt (copy)------- m4     replies
 *   linux ==state (SMEM)====== m4     a shared counter under the lock
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo_cfg.h"
#include "mdcom/mdcom.h"

#define SEC 1000000000ll
#define N_CMDS 10

static int fail(const char *who, const char *what, int rc)
{
    fprintf(stderr, "%s: %s: %s\n", who, what, mdcom_strerror(rc));
    return 1;
}

static int attach(const mdcom_config *cfg, uint32_t dom, mdcom_t **m)
{
    char err[200];
    mdcom_init_opts o = {.attach_timeout_ns = 5 * SEC, .errbuf = err, .errbuf_len = sizeof(err)};
    int rc = mdcom_init(m, cfg, dom, &o);
    if (rc < 0)
        fprintf(stderr, "mdcom_init(domain %u): %s: %s\n", dom, mdcom_strerror(rc), err);
    return rc;
}

/* m4: answer every command, count them in the SMEM area. */
static int remote(const mdcom_config *cfg)
{
    mdcom_t *m;
    mdcom_fifoch_t *ctl, *evt;
    mdcom_smemch_t *state;
    uint32_t *counter;
    int rc, i;
    if (attach(cfg, DEMO_DOM_M4, &m) < 0)
        return 1;
    if ((rc = mdcom_fifoch_at(m, DEMO_CH_CTL, &ctl)) < 0 ||
        (rc = mdcom_fifoch_at(m, DEMO_CH_EVT, &evt)) < 0 ||
        (rc = mdcom_smemch_at(m, DEMO_CH_STATE, &state)) < 0 ||
        (rc = mdcom_smemch_get(state, (void **)&counter, NULL)) < 0)
        return fail("m4", "open", rc);
    for (i = 0; i < N_CMDS; i++) {
        uint32_t id, len;
        void *p;
        char reply[64];
        /* zero-copy receive: wait, dequeue, read in place, free, notify */
        if ((rc = mdcom_fifoch_wait(ctl, MDCOM_EV_RX, 2 * SEC)) < 0)
            return fail("m4", "wait", rc);
        if ((rc = mdcom_fifoch_dequeue(ctl, &id, &len)) < 0)
            return fail("m4", "dequeue", rc);
        mdcom_fifoch_get(ctl, id, &p, NULL);
        snprintf(reply, sizeof(reply), "ack '%.*s'", (int)len, (const char *)p);
        mdcom_fifoch_free(ctl, id);
        mdcom_fifoch_notify(ctl);

        if ((rc = mdcom_smemch_lock(state, 1 * SEC)) < 0)
            return fail("m4", "lock", rc);
        (*counter)++;
        mdcom_smemch_unlock(state);

        /* copy send: waits up to 1 s for a free block */
        if ((rc = mdcom_fifoch_send(evt, reply, (uint32_t)strlen(reply) + 1, 1 * SEC)) < 0)
            return fail("m4", "send", rc);
    }
    mdcom_term(m);
    return 0;
}

/* linux: send commands, print replies, check the shared counter. */
static int master(const mdcom_config *cfg, pid_t child)
{
    mdcom_t *m;
    mdcom_fifoch_t *ctl, *evt;
    mdcom_smemch_t *state;
    uint32_t *counter, seen;
    int rc, i, status;
    if (attach(cfg, DEMO_DOM_LINUX, &m) < 0)
        return 1;
    if ((rc = mdcom_fifoch_open(m, "ctl", &ctl)) < 0 ||
        (rc = mdcom_fifoch_open(m, "evt", &evt)) < 0 ||
        (rc = mdcom_smemch_open(m, "state", &state)) < 0 ||
        (rc = mdcom_smemch_get(state, (void **)&counter, NULL)) < 0)
        return fail("linux", "open", rc);
    for (i = 0; i < N_CMDS; i++) {
        uint32_t id;
        void *p;
        char reply[64];
        /* zero-copy send: alloc, write in place, enqueue, notify */
        if ((rc = mdcom_fifoch_alloc(ctl, &id)) < 0)
            return fail("linux", "alloc", rc);
        mdcom_fifoch_get(ctl, id, &p, NULL);
        int n = snprintf((char *)p, 512, "command %d", i);
        if ((rc = mdcom_fifoch_enqueue(ctl, id, (uint32_t)n)) < 0)
            return fail("linux", "enqueue", rc);
        mdcom_fifoch_notify(ctl);

        /* copy receive with a timeout: a dead peer gives -ETIMEDOUT, not a hang */
        if ((rc = mdcom_fifoch_recv(evt, reply, sizeof(reply), 2 * SEC)) < 0)
            return fail("linux", "recv", rc);
        printf("linux <- m4: %s\n", reply);
        if (i == 0) /* the remote is attached while it still has replies to send */
            printf("linux: %d live process(es) in domain m4\n",
                   mdcom_sense_process(m, DEMO_DOM_M4));
    }
    mdcom_smemch_lock(state, 1 * SEC);
    seen = *counter;
    mdcom_smemch_unlock(state);
    printf("linux: m4 counted %u commands in SMEM 'state'\n", seen);
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fprintf(stderr, "linux: m4 failed\n"), 1;
    mdcom_term(m);
    return seen == N_CMDS ? 0 : 1;
}

int main(void)
{
    /* The generated config is a plain struct: copy it to give this run's
     * region a unique name, so parallel runs do not meet. */
    mdcom_config cfg = demo_config;
    char name[32];
    pid_t child;
    snprintf(name, sizeof(name), "demo-%d", (int)getpid());
    cfg.region_name = name;

    child = fork(); /* the remote may start first: it waits for the master */
    if (child < 0)
        return perror("fork"), 1;
    if (child == 0)
        _exit(remote(&cfg));
    return master(&cfg, child);
}
