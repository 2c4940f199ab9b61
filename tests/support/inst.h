/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * support/inst.h - tsup::Inst, the one attachment helper of the tests
 * (GoogleTest: its channel openers report failures with EXPECT).
 */
#ifndef MDCOM_TESTS_SUPPORT_INST_H
#define MDCOM_TESTS_SUPPORT_INST_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "mdcom/mdcom.h"
#include "support/common.h"
#include "support/whitebox.h"

namespace tsup {

/* One attachment (mdcom_init / mdcom_term, RAII): detached at scope exit
 * even when an assertion fails, so a failed test leaks no instance slot.
 * Either init() here, or mdcom_init(&inst.m, ...) by hand. */
class Inst {
public:
    Inst() = default;
    ~Inst() { term(); }
    Inst(const Inst &) = delete;
    Inst &operator=(const Inst &) = delete;

    int init(const mdcom_config *cfg, uint32_t domain, int64_t attach_timeout = 0,
             uint32_t spin_ns = 0, uint32_t keep_region = 0)
    {
        mdcom_init_opts o;
        std::memset(&o, 0, sizeof(o));
        o.attach_timeout_ns = attach_timeout;
        o.errbuf = err;
        o.errbuf_len = sizeof(err);
        o.spin_ns = spin_ns;
        o.keep_region = keep_region;
        std::memset(err, 'X', sizeof(err)); /* init must terminate it */
        err[sizeof(err) - 1] = '\0';
        return mdcom_init(&m, cfg, domain, &o);
    }
    int term()
    {
        int r = 0;
        if (m)
            r = mdcom_term(m);
        m = nullptr;
        return r;
    }
    /* Forget the handle without terminating (the test terminated it). */
    void release() { m = nullptr; }
    operator mdcom_t *() const { return m; }

    mdcom_fifoch_t *fifo(const char *name)
    {
        mdcom_fifoch_t *c = nullptr;
        int r = mdcom_fifoch_open(m, name, &c);
        EXPECT_EQ(0, r) << "mdcom_fifoch_open(" << name << "): " << errname(r);
        return c;
    }
    mdcom_smemch_t *smem(const char *name)
    {
        mdcom_smemch_t *c = nullptr;
        int r = mdcom_smemch_open(m, name, &c);
        EXPECT_EQ(0, r) << "mdcom_smemch_open(" << name << "): " << errname(r);
        return c;
    }
    /* The library's own mapping of the region for this attachment. */
    bool inside(const void *p, size_t len) const
    {
        void *base;
        uint32_t size;
        ut_mapping(m, &base, &size); /* support/whitebox.h */
        const uint8_t *b = (const uint8_t *)base, *q = (const uint8_t *)p;
        return q >= b && len <= size && (size_t)(q - b) <= size - len;
    }

    mdcom_t *m = nullptr;
    char err[512] = {};
};

} // namespace tsup

#endif /* MDCOM_TESTS_SUPPORT_INST_H */
