/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * aot_attach.h - attach to tests/cfg/good/aot.toml's region as domain dom,
 * with the layout table t (NULL: computed at run time), for the two tests of
 * layouts computed ahead of time (check_aot_layout.cpp, check_aot_core.cpp).
 */
#ifndef MDCOM_TESTS_AOT_ATTACH_H
#define MDCOM_TESTS_AOT_ATTACH_H

#include <string>

#include "aot_layout.h"
#include "mdcom/mdcom.h"

/* mdcom_init's result; *msg (may be NULL) gets its message. 2 s to attach. */
inline int aot_attach(mdcom_t **m, uint32_t dom, const mdcom_layout_table *t,
                      std::string *msg = nullptr)
{
    char err[200] = "";
    mdcom_init_opts o{};
    o.attach_timeout_ns = 2000000000;
    o.errbuf = err;
    o.errbuf_len = sizeof err;
    o.layout = t;
    int r = mdcom_init(m, &aot_config, dom, &o);
    if (msg)
        *msg = err;
    return r;
}

#endif
