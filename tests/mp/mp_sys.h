/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mp_sys.h - attaching to run-time configurations (tsup::Config of
 * support/config.h, the one config builder) and the fixtures of the
 * multi-process tests: a unique region, children killed and the region
 * removed at the end.
 */
#ifndef MDCOM_TESTS_MP_SYS_H
#define MDCOM_TESTS_MP_SYS_H

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mdcom/mdcom.h"
#include "mp/mp_util.h"
#include "support/config.h"
#include "support/inst.h"

namespace mdt {

using tsup::fifo_cfg;
using tsup::smem_cfg;

/* support/config.h: copyable, so build it before fork() and children get a
 * copy of everything. */
using tsup::Config;

/* mdcom_init with the options the tests vary. */
inline int attach(mdcom_t **m, const mdcom_config *cfg, uint32_t domain, int64_t attach_timeout_ns,
                  uint32_t spin_ns = 0, std::string *err = nullptr)
{
    char buf[256] = "";
    mdcom_init_opts o{};
    o.attach_timeout_ns = attach_timeout_ns;
    o.errbuf = buf;
    o.errbuf_len = sizeof(buf);
    o.spin_ns = spin_ns;
    int r = mdcom_init(m, cfg, domain, &o);
    if (err)
        *err = buf;
    if (r != 0)
        fprintf(stderr, "[pid %ld] mdcom_init(domain %u): %d (%s): %s\n", (long)getpid(), domain, r,
                mdcom_strerror(r), buf);
    return r;
}

using tsup::Inst; /* support/inst.h */

/* Test fixture base: a unique region name, children killed and the region
 * file removed at the end whatever happened. */
class MpFixture : public ::testing::Test {
protected:
    std::string region_;
    Children kids_;

    void SetUp() override { region_ = unique_region("mdmp"); }
    void TearDown() override
    {
        kids_.kill_all();
        region_remove(region_);
    }
};

/* The same with the two-domain system of most tests on that region. */
class TwoDomainFixture : public MpFixture {
protected:
    Config sys_ = Config::two_domains("");
    void SetUp() override
    {
        MpFixture::SetUp();
        sys_.region = region_;
    }
};

} // namespace mdt

#endif /* MDCOM_TESTS_MP_SYS_H */
