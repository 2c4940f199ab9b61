/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_test.h - helpers for the RPMsg tests: aligned memory for the area and
 * the private state, one side (instance + message log), byte access to the
 * area at offsets computed by the tests themselves.
 */
#ifndef MDCOM_TESTS_RP_TEST_H
#define MDCOM_TESTS_RP_TEST_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "mdcom/platform.h"
#include "mdcom/rpmsg.h"

namespace rpt {

/* A page-aligned area (mmap: MAP_SHARED so it can also outlive a fork). */
struct Area {
    void *p = nullptr;
    size_t size = 0;
    explicit Area(size_t n)
    {
        size = n;
        p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            abort();
    }
    ~Area() { munmap(p, size); }
    Area(const Area &) = delete;
    Area &operator=(const Area &) = delete;
    uint8_t *at(size_t off) const { return static_cast<uint8_t *>(p) + off; }
};

inline uint16_t rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
inline uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
inline void wr16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
inline void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
inline void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

struct Msg {
    uint32_t ept; /* local address it arrived at */
    uint32_t src;
    std::vector<uint8_t> data;
};

/* One side: its private state, its instance and what its callbacks saw. */
struct Side {
    void *state_mem = nullptr;
    size_t state_size = 0;
    mdcom_rpmsg_t *r = nullptr;
    mdcom_rpmsg_opts opts{};
    std::vector<Msg> got;
    std::vector<std::string> ns_log; /* "+name@addr" / "-name@addr" */
    int cb_result = 0;               /* what the default callback returns */

    ~Side()
    {
        if (r)
            mdcom_rpmsg_term(r);
        free(state_mem);
    }

    static void ns_cb(mdcom_rpmsg_t *, const char *name, uint32_t addr, uint32_t flags, void *priv)
    {
        Side *s = static_cast<Side *>(priv);
        s->ns_log.push_back(std::string(flags == MDCOM_RPMSG_NS_CREATE ? "+" : "-") + name + "@" +
                            std::to_string(addr));
    }

    static int record(mdcom_rpmsg_ept_t *e, void *data, size_t len, uint32_t src, void *priv)
    {
        Side *s = static_cast<Side *>(priv);
        const uint8_t *d = static_cast<const uint8_t *>(data);
        s->got.push_back(Msg{mdcom_rpmsg_ept_addr(e), src, std::vector<uint8_t>(d, d + len)});
        return s->cb_result;
    }

    /* Fill opts for role and geometry; allocate the state. */
    void prepare(uint32_t role, const mdcom_rpmsg_geometry &g = {}, uint32_t max_epts = 0)
    {
        opts = mdcom_rpmsg_opts{};
        opts.role = role;
        opts.geometry = g;
        opts.max_endpoints = opts.max_services = max_epts;
        opts.ns_cb = ns_cb;
        opts.ns_priv = this;
        state_size = mdcom_rpmsg_state_size(&opts);
        free(state_mem);
        state_mem = aligned_alloc(64, (state_size + 63) / 64 * 64);
    }

    int init(void *area, size_t size)
    {
        return mdcom_rpmsg_init(&r, state_mem, state_size, area, size, &opts);
    }

    int term()
    {
        int rc = mdcom_rpmsg_term(r);
        r = nullptr;
        return rc;
    }

    mdcom_rpmsg_ept_t *ept(const char *name, uint32_t src = MDCOM_RPMSG_ADDR_ANY,
                           uint32_t dst = MDCOM_RPMSG_ADDR_ANY, int *rc_out = nullptr)
    {
        mdcom_rpmsg_ept_t *e = nullptr;
        int rc = mdcom_rpmsg_ept_create(r, &e, name, src, dst, record, this, MDCOM_POLL);
        if (rc_out)
            *rc_out = rc;
        return e;
    }

    mdcom_rpmsg_stats stats() const
    {
        mdcom_rpmsg_stats st{};
        mdcom_rpmsg_stats_get(r, &st);
        return st;
    }
};

/* End a host/remote pair over one area (a fixture's TearDown): terminate
 * whichever side is up, then free the area. */
inline void end_pair(Side &host, Side &remote, Area *&area)
{
    if (remote.r)
        remote.term();
    if (host.r)
        host.term();
    delete area;
    area = nullptr;
}

/* Deterministic payload: byte i of message seq. */
inline uint8_t pattern(uint32_t seq, size_t i) { return (uint8_t)(seq * 131u + i * 7u + (i >> 8)); }

inline std::vector<uint8_t> make_payload(uint32_t seq, size_t len)
{
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; i++)
        v[i] = pattern(seq, i);
    return v;
}

} // namespace rpt

#endif /* MDCOM_TESTS_RP_TEST_H */
