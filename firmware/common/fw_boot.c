/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_boot.c - mdcom_fw/boot.h: dying with a message, attaching, the banner.
 * Kernel-neutral: only the console and exit of ports/baremetal's runtime.
 */
#include <string.h>

#include "board.h"
#include "cortexm.h"
#include "mdcom_fw/boot.h"
#include "mdcom_fw/proto.h" /* FW_HEARTBEAT_MS */

void fw_die(const char *who, const char *what, int r)
{
    mdcom_bm_puts(who);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(what);
    mdcom_bm_puts(": ");
    mdcom_bm_puts(mdcom_strerror(r));
    mdcom_bm_puts("\n");
    mdcom_bm_exit(2);
}

int fw_try_attach(mdcom_t **m, const mdcom_layout_table *layout, uint32_t domain,
                  int64_t attach_timeout_ns, uint32_t heartbeat_ms, char *err, uint32_t err_len)
{
    mdcom_init_opts o;
    memset(&o, 0, sizeof(o));
    o.errbuf = err;
    o.errbuf_len = err_len;
    o.attach_timeout_ns = attach_timeout_ns;
    o.heartbeat_ms = heartbeat_ms; /* waits and mdcom calls beat */
    o.layout = layout;
    return mdcom_init(m, layout->cfg, domain, &o);
}

mdcom_t *fw_attach(const char *who, const mdcom_layout_table *layout, uint32_t domain,
                   int64_t attach_timeout_ns, uint32_t heartbeat_ms)
{
    char err[128];
    mdcom_t *m;
    int r = fw_try_attach(&m, layout, domain, attach_timeout_ns, heartbeat_ms, err, sizeof(err));
    if (r) {
        mdcom_bm_puts(err);
        mdcom_bm_puts("\n");
        fw_die(who, "mdcom_init", r);
    }
    return m;
}

void fw_banner(const char *banner)
{
    mdcom_bm_puts(banner);
    mdcom_bm_puts(" on ");
    mdcom_bm_puts(mdcom_board_desc.name);
    mdcom_bm_puts(", boot ");
    mdcom_bm_put_u32(mdcom_bm_boot_token());
    mdcom_bm_puts("\n");
}

mdcom_t *fw_boot(const char *who, const char *banner, const mdcom_layout_table *layout,
                 uint32_t domain, int64_t attach_timeout_ns)
{
    fw_banner(banner);
    return fw_attach(who, layout, domain, attach_timeout_ns, FW_HEARTBEAT_MS);
}
