/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_layout.cpp - the wire format: struct sizes/offsets, the layout computed
 * from a config, config validation, the geometry hash, and format/verify.
 */
#include "fixture.h"

#include <cstdlib>
#include <functional>
#include <memory>

using namespace ut;

namespace {

uint32_t pow2_ceil(uint32_t v)
{
    uint32_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }
/* the false-sharing distance (MDCOM_PAD) */
uint64_t align128(uint64_t v) { return (v + 127) / 128 * 128; }
/* block stride: whole pairs, and from 4 KiB on an odd number of them (cache colouring) */
uint64_t stride_of(uint64_t bs)
{
    uint64_t st = align128(bs);
    return st >= 4096 && (st / 128) % 2 == 0 ? st + 128 : st;
}

/* A small valid config: two domains, a FIFO and an SMEM channel. */
void base_config(Config &c)
{
    c.domain("master", 0, MDCOM_ROLE_MASTER).domain("r1", 1, MDCOM_ROLE_REMOTE);
    c.fifo("f0", 100, 10, 0, bit(0), bit(1));
    c.smem("s0", 1000, bit(0) | bit(1));
}

struct Computed {
    int rc;
    mdcom_wire_layout lay;
    std::vector<mdcom_wire_chan_layout> cl;
    char err[256];
};

Computed compute(const mdcom_config *cfg)
{
    Computed r;
    std::memset(&r.lay, 0, sizeof(r.lay));
    r.cl.resize(cfg && cfg->n_channels ? (cfg->n_channels > 2048 ? 2048 : cfg->n_channels) : 1);
    std::memset(r.err, 0, sizeof(r.err));
    r.rc = mdcom_wire_layout_compute(cfg, &r.lay, r.cl.data(), r.err, sizeof(r.err));
    return r;
}

/* 64-byte aligned buffer for a formatted region image. */
struct Image {
    explicit Image(size_t n) : size(n)
    {
        mem = (uint8_t *)std::aligned_alloc(64, align64(n));
        std::memset(mem, 0xA5, align64(n));
    }
    ~Image() { std::free(mem); }
    Image(const Image &) = delete;
    Image &operator=(const Image &) = delete;
    uint8_t *mem;
    size_t size;
};

/* One field's offset against the value the wire format fixes. */
struct At {
    const char *field;
    size_t off, want;
};
#define AT(T, f, want)                                                                             \
    At { #T "." #f, offsetof(T, f), want }
void expect_at(std::initializer_list<At> fields)
{
    for (const At &a : fields)
        EXPECT_EQ(a.want, a.off) << a.field;
}

/* A field that format/verify name in their messages. */
struct Field {
    size_t off;
    const char *field;
};
#define FIELD(T, f)                                                                                \
    Field { offsetof(T, f), #f }

} // namespace

/* ------------------------------------------------------------------ */
/* wire structs                                                         */
/* ------------------------------------------------------------------ */

TEST(LayoutWire, StructSizesAndOffsets)
{
    EXPECT_EQ(sizeof(mdcom_aword), 4u);
    EXPECT_EQ(sizeof(mdcom_wire_hdr), 256u);
    using H = mdcom_wire_hdr;
    using P = mdcom_wire_proc;
    using D = mdcom_wire_dirent;
    using F = mdcom_wire_fifo_ctl;
    using Q = mdcom_wire_qslot;
    expect_at({AT(H, magic, 0), AT(H, version, 4), AT(H, hdr_size, 8), AT(H, region_size, 12),
               AT(H, layout_hash, 16), AT(H, generation, 20), AT(H, state, 24),
               AT(H, n_domains, 28), AT(H, n_channels, 32), AT(H, dom_off, 36), AT(H, proc_off, 40),
               AT(H, dir_off, 44), AT(H, n_procs, 48), AT(H, data_off, 52),
               AT(H, master_domain, 56), AT(H, fmt_pid, 60), AT(H, fmt_token, 64)});
    EXPECT_EQ(sizeof(mdcom_wire_domain), 32u);
    expect_at({AT(mdcom_wire_domain, id, 16), AT(mdcom_wire_domain, role, 20)});
    EXPECT_EQ(sizeof(P), 128u);
    expect_at({AT(P, owner, 0), AT(P, pid, 4), AT(P, token, 8), AT(P, heartbeat, 12),
               AT(P, wait, 16), AT(P, hb_ms, 24), AT(P, incarn, 28), AT(P, rec, 32)});
    using O = mdcom_wire_oprec;
    EXPECT_EQ(sizeof(O), 16u);
    EXPECT_EQ(32u + MDCOM_PROC_RECS * sizeof(O), 128u);
    expect_at({AT(O, pos, 4), AT(O, id, 8), AT(O, state, 12)});
    EXPECT_EQ(sizeof(D), 64u);
    expect_at({AT(D, type, 32), AT(D, off, 36), AT(D, size, 40), AT(D, block_size, 44),
               AT(D, block_count, 48), AT(D, queue_depth, 52), AT(D, senders, 56),
               AT(D, receivers, 60)});
    EXPECT_EQ(MDCOM_PAD, 128u);
    EXPECT_EQ(sizeof(F), 512u);
    expect_at({AT(F, enq, 0), AT(F, deq, 128), AT(F, event, 256), AT(F, stats, 384)});
    EXPECT_EQ(sizeof(Q), 16u);
    expect_at({AT(Q, seq, 0), AT(Q, id, 4), AT(Q, len, 8)});
    EXPECT_EQ(sizeof(mdcom_wire_smem_ctl), 128u);
    EXPECT_EQ(MDCOM_MAGIC, 0x4d43444du);
    EXPECT_EQ(0, std::memcmp("MDCM", "MDCM", 4));
    uint32_t m = MDCOM_MAGIC;
    EXPECT_EQ(0, std::memcmp(&m, "MDCM", 4)) << "magic reads 'MDCM' in memory (little-endian)";
}

TEST(LayoutWire, BlockStateWord)
{
    uint32_t w = MDCOM_BLK_MAKE(MDCOM_BLK_HELD, MDCOM_BLK_WHO_OF(7, 0x1235));
    EXPECT_EQ(MDCOM_BLK_STATE(w), (uint32_t)MDCOM_BLK_HELD);
    EXPECT_EQ(MDCOM_BLK_OWNER(w), 7u);
    EXPECT_EQ(MDCOM_BLK_INC(w), 5u);
    EXPECT_EQ(MDCOM_BLK_WHO(w), 0x75u);
    EXPECT_EQ(MDCOM_BLK_MAKE(MDCOM_BLK_FREE, 0), (uint32_t)MDCOM_BLK_FREE);
    /* the generation sits above owner and state and leaves them intact */
    uint32_t who = MDCOM_BLK_WHO_OF(MDCOM_MAX_PROCS, 0xf);
    uint32_t g = MDCOM_BLK_MAKEG(MDCOM_BLK_QUEUED, who, 0xfffeu);
    EXPECT_EQ(g, 0xfffe0000u | (MDCOM_MAX_PROCS << 8) | 0xf0u | MDCOM_BLK_QUEUED);
    EXPECT_EQ(MDCOM_BLK_STATE(g), (uint32_t)MDCOM_BLK_QUEUED);
    EXPECT_EQ(MDCOM_BLK_OWNER(g), MDCOM_MAX_PROCS);
    EXPECT_EQ(MDCOM_BLK_GEN(g), 0xfffeu);
    EXPECT_EQ(MDCOM_BLK_SO(g), MDCOM_BLK_MAKE(MDCOM_BLK_QUEUED, who));
}

/* ------------------------------------------------------------------ */
/* mdcom_wire_layout_compute (the core's mdcom_layout_compute)          */
/* ------------------------------------------------------------------ */

TEST(LayoutCompute, TablesAndChannelOffsets)
{
    Config c;
    c.std_domains(3);
    c.fifo("a", 100, 10, 0, bit(0), bit(1));
    c.smem("b", 1000, bit(0) | bit(2));
    c.fifo("c", 1, 1, 0, bit(1), bit(0));
    c.fifo("d", 64, 65, 4, bit(0), bit(1) | bit(2));
    c.smem("e", 1, bit(1));
    c.fifo("f", 4096, 3, 8, bit(0), bit(1));
    const mdcom_config *cfg = c.get();
    Computed r = compute(cfg);
    ASSERT_EQ(0, r.rc) << r.err;

    EXPECT_EQ(r.lay.dom_off, 256u);
    EXPECT_EQ(r.lay.proc_off % 128, 0u) << "sections start on a 128-B line pair";
    EXPECT_GE(r.lay.proc_off, r.lay.dom_off + 3 * 32);
    EXPECT_EQ(r.lay.proc_off, align128(256 + 3 * 32));
    EXPECT_EQ(r.lay.dir_off % 128, 0u);
    EXPECT_EQ(r.lay.dir_off, align128(r.lay.proc_off + MDCOM_MAX_PROCS * 128));
    EXPECT_EQ(r.lay.data_off % 128, 0u);
    EXPECT_EQ(r.lay.data_off, align128(r.lay.dir_off + cfg->n_channels * 64));
    EXPECT_EQ(r.lay.master_domain, 0u);

    uint64_t expect_off = r.lay.data_off;
    for (uint32_t i = 0; i < cfg->n_channels; i++) {
        const mdcom_channel_cfg &ch = cfg->channels[i];
        const mdcom_wire_chan_layout &l = r.cl[i];
        SCOPED_TRACE(ch.name);
        EXPECT_EQ(l.type, ch.type);
        EXPECT_EQ(l.off % 128, 0u) << "channel areas start on a 128-B line pair";
        EXPECT_EQ(l.off, expect_off) << "channels follow each other in directory order";
        if (ch.type == MDCOM_CHAN_FIFO) {
            uint32_t qcap = ch.queue_depth ? ch.queue_depth : pow2_ceil(ch.block_count);
            EXPECT_EQ(l.block_size, ch.block_size);
            EXPECT_EQ(l.block_count, ch.block_count);
            EXPECT_EQ(l.qcap, qcap);
            EXPECT_EQ(l.qslots_off, 512u) << "queue slots follow the four control pairs";
            EXPECT_EQ(l.bstate_off, align128(512u + qcap * 16));
            EXPECT_EQ(l.blocks_off % 128, 0u);
            EXPECT_EQ(l.blocks_off, align128(l.bstate_off + ch.block_count * 4));
            EXPECT_EQ(l.stride, stride_of(ch.block_size)) << "blocks whole line pairs apart";
            EXPECT_GE(l.stride, l.block_size);
            EXPECT_EQ(l.size, l.blocks_off + l.stride * ch.block_count);
            EXPECT_EQ(l.senders, ch.senders);
            EXPECT_EQ(l.receivers, ch.receivers);
            EXPECT_EQ((l.off + l.blocks_off) % 128, 0u) << "blocks start on a line pair";
        } else {
            EXPECT_EQ(l.data_off, 128u);
            EXPECT_EQ(l.data_size, ch.size);
            EXPECT_EQ(l.size, align128(128 + ch.size));
            EXPECT_EQ(l.senders, ch.users);
            EXPECT_EQ(l.receivers, ch.users);
        }
        expect_off = align128(l.off + (uint64_t)l.size);
    }
    EXPECT_EQ(r.lay.needed, expect_off);
    EXPECT_EQ(r.lay.region_size, r.lay.needed) << "region_size 0 = exactly what is needed";
}

TEST(LayoutCompute, AutoQueueDepthIsPow2AtLeastBlockCount)
{
    for (uint32_t bc : {1u, 2u, 3u, 5u, 8u, 63u, 64u, 65u, 1000u, 4096u, 65535u, 65536u}) {
        Config c;
        c.std_domains(2).fifo("f", 8, bc, 0, bit(0), bit(1));
        Computed r = compute(c.get());
        ASSERT_EQ(0, r.rc) << bc << ": " << r.err;
        EXPECT_EQ(r.cl[0].qcap, pow2_ceil(bc)) << "block_count " << bc;
        EXPECT_GE(r.cl[0].qcap, bc);
        EXPECT_EQ(r.cl[0].qcap & (r.cl[0].qcap - 1), 0u);
    }
    /* an explicit depth may be smaller or larger than the pool */
    for (uint32_t qd : {1u, 2u, 4u, 64u, 65536u}) {
        Config c;
        c.std_domains(2).fifo("f", 8, 10, qd, bit(0), bit(1));
        Computed r = compute(c.get());
        ASSERT_EQ(0, r.rc) << qd << ": " << r.err;
        EXPECT_EQ(r.cl[0].qcap, qd);
        EXPECT_EQ(r.cl[0].bstate_off, align128(512u + qd * 16));
    }
}

TEST(LayoutCompute, RegionSize)
{
    Config c;
    base_config(c);
    Computed r0 = compute(c.get());
    ASSERT_EQ(0, r0.rc) << r0.err;
    uint32_t needed = r0.lay.needed;

    c.region_size(needed);
    Computed r1 = compute(c.get());
    ASSERT_EQ(0, r1.rc) << r1.err;
    EXPECT_EQ(r1.lay.region_size, needed);
    EXPECT_EQ(r1.lay.hash, r0.lay.hash)
        << "region_size 0 and explicit needed size are the same geometry";

    c.region_size(needed + 4096);
    Computed r2 = compute(c.get());
    ASSERT_EQ(0, r2.rc) << r2.err;
    EXPECT_EQ(r2.lay.region_size, needed + 4096);
    EXPECT_EQ(r2.lay.needed, needed);

    c.region_size(needed - 1);
    Computed r3 = compute(c.get());
    EXPECT_EQ(-ENOSPC, r3.rc);
    EXPECT_TRUE(contains(r3.err, "needs")) << r3.err;
    EXPECT_TRUE(contains(r3.err, std::to_string(needed).c_str())) << r3.err;
    EXPECT_TRUE(contains(r3.err, c.name().c_str())) << r3.err;

    c.region_size(1);
    EXPECT_EQ(-ENOSPC, compute(c.get()).rc);
}

TEST(LayoutCompute, LargeButValid)
{
    Config c;
    c.std_domains(2).fifo("big", 4u << 20, 2, 0, bit(0), bit(1));
    c.fifo("many", 1, MDCOM_MAX_BLOCKS, 0, bit(0), bit(1));
    c.fifo("deep", 8, 4, MDCOM_MAX_BLOCKS, bit(0), bit(1));
    Computed r = compute(c.get());
    ASSERT_EQ(0, r.rc) << r.err;
    EXPECT_EQ(r.cl[0].stride, (4u << 20) + 128u) << "a whole-page stride gets one more pair";
    EXPECT_EQ(r.cl[1].qcap, MDCOM_MAX_BLOCKS);
    EXPECT_EQ(r.cl[1].blocks_off, align128(512 + MDCOM_MAX_BLOCKS * 16 + MDCOM_MAX_BLOCKS * 4));
    EXPECT_EQ(r.cl[1].stride, 128u) << "a 1-byte block takes a line pair";
    EXPECT_EQ(r.cl[2].qcap, MDCOM_MAX_BLOCKS);
}

TEST(LayoutCompute, LargeStridesAreColoured)
{
    const uint32_t sizes[] = {1,    128,  129,  2048, 4000,  4096,
                              4097, 4224, 4225, 8192, 65536, 1u << 20};
    const uint32_t want[] = {128,  128,  256,  2048, 4224,  4224,
                             4224, 4224, 4480, 8320, 65664, (1u << 20) + 128};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        Config c;
        c.std_domains(2).fifo("f", sizes[i], 32, 0, bit(0), bit(1));
        Computed r = compute(c.get());
        ASSERT_EQ(0, r.rc) << r.err;
        EXPECT_EQ(r.cl[0].stride, want[i]) << "block_size " << sizes[i];
        if (r.cl[0].stride < 4096)
            continue;
        /* the heads of 32 consecutive blocks sit at 32 different 128-B
         * offsets of a page: 32 different cache sets of a 4 KiB way */
        uint32_t seen = 0;
        for (uint32_t k = 0; k < 32; k++)
            seen |=
                1u << (((r.cl[0].off + r.cl[0].blocks_off + (uint64_t)k * r.cl[0].stride) % 4096) /
                       128);
        EXPECT_EQ(seen, 0xffffffffu) << "block_size " << sizes[i];
    }
}

TEST(LayoutCompute, NullArgumentsAndNoErrbuf)
{
    mdcom_wire_layout lay;
    char buf[64] = "x";
    EXPECT_EQ(-EINVAL, mdcom_wire_layout_compute(nullptr, &lay, nullptr, buf, sizeof(buf)));
    Config c;
    base_config(c);
    EXPECT_EQ(-EINVAL, mdcom_wire_layout_compute(c.get(), nullptr, nullptr, buf, sizeof(buf)));
    /* no channels array and no error buffer are both fine */
    EXPECT_EQ(0, mdcom_wire_layout_compute(c.get(), &lay, nullptr, nullptr, 0));
    c.region_size(1);
    EXPECT_EQ(-ENOSPC, mdcom_wire_layout_compute(c.get(), &lay, nullptr, nullptr, 0));
}

TEST(LayoutCompute, ErrorBufferIsBounded)
{
    Config c;
    base_config(c);
    c.channels[0].block_count = 0;
    for (size_t cap : {1u, 2u, 8u, 17u}) {
        std::vector<char> buf(cap + 8, '#');
        mdcom_wire_layout lay;
        EXPECT_EQ(-EINVAL, mdcom_wire_layout_compute(c.get(), &lay, nullptr, buf.data(), cap));
        EXPECT_LT(std::strlen(buf.data()), cap) << "terminated inside the buffer";
        for (size_t i = cap; i < cap + 8; i++)
            EXPECT_EQ(buf[i], '#') << "no write past the buffer";
    }
}

/* ------------------------------------------------------------------ */
/* invalid configurations                                               */
/* ------------------------------------------------------------------ */

struct BadCase {
    const char *what;
    std::function<void(Config &)> mutate;
    const char *key;              /* must appear in the error text */
    const char *region = nullptr; /* region name override */
    bool null_region = false;
};

TEST(LayoutCompute, EveryInvalidConfigIsEinvalNamingTheKey)
{
    static const std::string s16(16, 'd'), s32(32, 'c');
    const std::vector<BadCase> cases = {
        {"empty region name", [](Config &) {}, "region.name", ""},
        {"null region name", [](Config &) {}, "region.name", nullptr, true},
        {"region name starting with a dot", [](Config &) {}, "region.name", ".hidden"},
        {"region name with a slash", [](Config &) {}, "region.name", "a/b"},
        {"region name with a space", [](Config &) {}, "region.name", "a b"},
        {"region name 32 chars", [](Config &) {}, "region.name", s32.c_str()},
        {"no domains", [](Config &c) { c.domains.clear(); }, "domains"},
        {"33 domains",
         [](Config &c) {
             for (uint32_t i = 2; i < 33; i++)
                 c.domain("x" + std::to_string(i), i % 32, MDCOM_ROLE_REMOTE);
         },
         "domains"},
        {"domain name empty", [](Config &c) { c.domains[1].name = ""; }, "domains[1]"},
        {"domain name null", [](Config &c) { c.domains[1].name = nullptr; }, "name"},
        {"domain name 16 chars", [](Config &c) { c.domains[1].name = s16.c_str(); }, "name"},
        {"domain name bad char", [](Config &c) { c.domains[1].name = "r/1"; }, "name"},
        {"domain id 32", [](Config &c) { c.domains[1].id = 32; }, "id"},
        {"domain id huge", [](Config &c) { c.domains[1].id = 0xffffffffu; }, "id"},
        {"duplicate domain id", [](Config &c) { c.domains[1].id = 0; }, "duplicate domain id"},
        {"duplicate domain name", [](Config &c) { c.domains[1].name = "master"; },
         "duplicate domain name"},
        {"role 0", [](Config &c) { c.domains[1].role = 0; }, "role"},
        {"role 3", [](Config &c) { c.domains[1].role = 3; }, "role"},
        {"no master", [](Config &c) { c.domains[0].role = MDCOM_ROLE_REMOTE; }, "master"},
        {"two masters", [](Config &c) { c.domains[1].role = MDCOM_ROLE_MASTER; }, "master"},
        {"channel name empty", [](Config &c) { c.channels[0].name = ""; }, "channels[0]"},
        {"channel name null", [](Config &c) { c.channels[0].name = nullptr; }, "name"},
        {"channel name 32 chars", [](Config &c) { c.channels[0].name = s32.c_str(); }, "name"},
        {"channel name bad char", [](Config &c) { c.channels[1].name = "a:b"; }, "channels[1]"},
        {"duplicate channel name", [](Config &c) { c.channels[1].name = "f0"; },
         "duplicate channel name"},
        {"channel type 0", [](Config &c) { c.channels[0].type = 0; }, "type"},
        {"channel type 3", [](Config &c) { c.channels[1].type = 3; }, "type"},
        {"block_size 0", [](Config &c) { c.channels[0].block_size = 0; }, "block_size"},
        {"block_size 4 GiB - 1", [](Config &c) { c.channels[0].block_size = 0xffffffffu; },
         "block_size"},
        {"block_count 0", [](Config &c) { c.channels[0].block_count = 0; }, "block_count"},
        {"block_count 65537", [](Config &c) { c.channels[0].block_count = MDCOM_MAX_BLOCKS + 1; },
         "block_count"},
        {"block_count huge", [](Config &c) { c.channels[0].block_count = 0xffffffffu; },
         "block_count"},
        {"queue_depth 3", [](Config &c) { c.channels[0].queue_depth = 3; }, "queue_depth"},
        {"queue_depth 12", [](Config &c) { c.channels[0].queue_depth = 12; }, "queue_depth"},
        {"queue_depth 131072", [](Config &c) { c.channels[0].queue_depth = 131072; },
         "queue_depth"},
        {"queue_depth 2^31", [](Config &c) { c.channels[0].queue_depth = 0x80000000u; },
         "queue_depth"},
        {"region over 4 GiB",
         [](Config &c) {
             c.channels[0].block_size = 1u << 20;
             c.channels[0].block_count = 8192;
         },
         "block_size x block_count"},
        {"no senders", [](Config &c) { c.channels[0].senders = 0; }, "senders"},
        {"sender not a domain", [](Config &c) { c.channels[0].senders = bit(5); }, "senders"},
        {"sender domain 31 unknown", [](Config &c) { c.channels[0].senders = bit(0) | bit(31); },
         "senders"},
        {"no receivers", [](Config &c) { c.channels[0].receivers = 0; }, "receivers"},
        {"receiver not a domain", [](Config &c) { c.channels[0].receivers = bit(1) | bit(2); },
         "receivers"},
        {"smem size 0", [](Config &c) { c.channels[1].size = 0; }, "size"},
        {"smem size 4 GiB - 1", [](Config &c) { c.channels[1].size = 0xffffffffu; }, "size"},
        {"smem no users", [](Config &c) { c.channels[1].users = 0; }, "users"},
        {"smem user not a domain", [](Config &c) { c.channels[1].users = bit(3); }, "users"},
        {"mode world-readable", [](Config &c) { c.mode(0604); }, "region.mode"},
        {"mode world-writable", [](Config &c) { c.mode(0602); }, "region.mode"},
        {"mode world-executable", [](Config &c) { c.mode(0601); }, "region.mode"},
        {"mode 0777", [](Config &c) { c.mode(0777); }, "region.mode"},
        {"mode setuid", [](Config &c) { c.mode(04600); }, "region.mode"},
        {"mode sticky", [](Config &c) { c.mode(01600); }, "region.mode"},
        {"mode not permission bits", [](Config &c) { c.mode(0x10000 | 0600); }, "region.mode"},
    };
    for (const BadCase &bc : cases) {
        SCOPED_TRACE(bc.what);
        Config c;
        base_config(c);
        bc.mutate(c);
        mdcom_config *cfg = c.get();
        if (bc.region)
            cfg->region_name = bc.region;
        if (bc.null_region)
            cfg->region_name = nullptr;
        Computed r = compute(cfg);
        EXPECT_EQ(-EINVAL, r.rc) << bc.what << ": " << r.err;
        EXPECT_TRUE(contains(r.err, bc.key))
            << bc.what << ": error text '" << r.err << "' does not name '" << bc.key << "'";
    }
}

TEST(LayoutCompute, InvalidDomainNameQuotesNoOtherDomainsName)
{
    Config c;
    base_config(c);
    c.domains[1].name = "r/1";
    Computed r = compute(c.get());
    ASSERT_EQ(-EINVAL, r.rc);
    EXPECT_TRUE(contains(r.err, "domains[1]: name")) << r.err;
    EXPECT_FALSE(contains(r.err, "'master'")) << r.err; /* domains[0]'s */
}

TEST(LayoutCompute, ErrorTextNamesRegionAndChannel)
{
    Config c;
    base_config(c);
    c.channels[0].block_count = 0;
    Computed r = compute(c.get());
    ASSERT_EQ(-EINVAL, r.rc);
    EXPECT_TRUE(contains(r.err, c.name().c_str())) << r.err;
    EXPECT_TRUE(contains(r.err, "'f0'")) << r.err;
    EXPECT_TRUE(contains(r.err, "block_count")) << r.err;
}

TEST(LayoutCompute, TooManyChannels)
{
    Config c;
    c.std_domains(2);
    for (uint32_t i = 0; i < MDCOM_MAX_DIR + 1; i++)
        c.smem("s" + std::to_string(i), 1, bit(0));
    Computed r = compute(c.get());
    EXPECT_EQ(-EINVAL, r.rc);
    EXPECT_TRUE(contains(r.err, "channels")) << r.err;

    /* exactly MDCOM_MAX_DIR is fine */
    c.channels.pop_back();
    mdcom_wire_layout lay;
    EXPECT_EQ(0, mdcom_wire_layout_compute(c.get(), &lay, nullptr, nullptr, 0));

    /* n_channels without a channel array */
    Config d;
    d.std_domains(2);
    mdcom_config *cfg = d.get();
    cfg->n_channels = 1;
    Computed r2 = compute(cfg);
    EXPECT_EQ(-EINVAL, r2.rc);
    EXPECT_TRUE(contains(r2.err, "channels")) << r2.err;
}

TEST(LayoutCompute, ValidEdgeCases)
{
    Config c;
    std::string n31(31, 'n'), d15(15, 'd');
    c.get();
    c.domain(d15, 31, MDCOM_ROLE_MASTER).domain("x.y-z_0", 0, MDCOM_ROLE_REMOTE);
    c.fifo(n31, 1, 1, 1, bit(31), bit(0));
    c.smem("s", 1, bit(31) | bit(0));
    c.mode(0660);
    Computed r = compute(c.get());
    EXPECT_EQ(0, r.rc) << r.err;
    EXPECT_EQ(r.lay.master_domain, 31u);
    /* zero channels is a valid (if useless) system */
    Config e;
    e.std_domains(1);
    Computed r2 = compute(e.get());
    EXPECT_EQ(0, r2.rc) << r2.err;
    /* a region name may contain dots after the first character */
    Config f = Config::named("ut-a.b");
    f.std_domains(1);
    EXPECT_EQ(0, compute(f.get()).rc);
}

/* ------------------------------------------------------------------ */
/* geometry hash                                                        */
/* ------------------------------------------------------------------ */

TEST(LayoutHash, ChangesWithEveryGeometryField)
{
    auto hash_of = [](const std::function<void(Config &)> &mutate) {
        Config c = Config::named("ut-hash"); /* same region name for every variant */
        base_config(c);
        c.fifo("f1", 32, 4, 4, bit(1), bit(0) | bit(1));
        mutate(c);
        Computed r = compute(c.get());
        EXPECT_EQ(0, r.rc) << r.err;
        return r.lay.hash;
    };
    const uint32_t h0 = hash_of([](Config &) {});
    EXPECT_EQ(h0, hash_of([](Config &) {})) << "deterministic";
    EXPECT_EQ(h0, hash_of([](Config &c) { c.mode(0660); })) << "mode is not geometry";
    EXPECT_EQ(h0, hash_of([](Config &c) { c.channels[0].queue_depth = 16; }))
        << "explicit queue_depth equal to the automatic one";

    const std::vector<std::pair<const char *, std::function<void(Config &)>>> changes = {
        {"region_size", [](Config &c) { c.region_size(1u << 20); }},
        {"domain name", [](Config &c) { c.domains[1].name = "r2"; }},
        {"domain id",
         [](Config &c) {
             c.domains[1].id = 5;
             c.channels[0].receivers = bit(5);
             c.channels[1].users = bit(0) | bit(5);
             c.channels[2].senders = bit(5);
             c.channels[2].receivers = bit(0) | bit(5);
         }},
        {"domain role",
         [](Config &c) {
             c.domains[0].role = MDCOM_ROLE_REMOTE;
             c.domains[1].role = MDCOM_ROLE_MASTER;
         }},
        {"domain added", [](Config &c) { c.domain("r9", 9, MDCOM_ROLE_REMOTE); }},
        {"channel name", [](Config &c) { c.channels[0].name = "g0"; }},
        {"channel type",
         [](Config &c) {
             c.channels[1].type = MDCOM_CHAN_FIFO;
             c.channels[1].block_size = 1000;
             c.channels[1].block_count = 1;
             c.channels[1].senders = bit(0);
             c.channels[1].receivers = bit(1);
         }},
        {"block_size", [](Config &c) { c.channels[0].block_size = 101; }},
        {"block_count", [](Config &c) { c.channels[0].block_count = 11; }},
        {"queue_depth", [](Config &c) { c.channels[0].queue_depth = 32; }},
        {"queue_depth (smaller)", [](Config &c) { c.channels[2].queue_depth = 2; }},
        {"senders", [](Config &c) { c.channels[0].senders = bit(0) | bit(1); }},
        {"receivers", [](Config &c) { c.channels[0].receivers = bit(0) | bit(1); }},
        {"smem size", [](Config &c) { c.channels[1].size = 1001; }},
        {"smem users", [](Config &c) { c.channels[1].users = bit(0); }},
        {"channel added", [](Config &c) { c.smem("s9", 8, bit(0)); }},
        {"channel order", [](Config &c) { std::swap(c.channels[0], c.channels[2]); }},
    };
    for (const auto &ch : changes)
        EXPECT_NE(h0, hash_of(ch.second)) << "hash did not change with " << ch.first;
}

/* ------------------------------------------------------------------ */
/* format + verify                                                      */
/* ------------------------------------------------------------------ */

class LayoutVerify : public ::testing::Test {
protected:
    void SetUp() override
    {
        c_.std_domains(3);
        c_.fifo("f0", 100, 10, 0, bit(0), bit(1));
        c_.smem("s0", 1000, bit(0) | bit(1));
        c_.fifo("f1", 8, 3, 2, bit(1) | bit(2), bit(0));
        cfg_ = c_.get();
        r_ = compute(cfg_);
        ASSERT_EQ(0, r_.rc) << r_.err;
        img_.reset(new Image(r_.lay.region_size));
        mdcom_wire_hdr *h = (mdcom_wire_hdr *)img_->mem;
        h->state.store(0x5157a7e5u); /* format leaves state and fmt_* to its caller */
        h->fmt_pid.store(4242);
        h->fmt_token = 77;
        ASSERT_EQ(0, ut_layout_format(img_->mem, cfg_, 7));
        pristine_.assign(img_->mem, img_->mem + r_.lay.region_size);
    }
    void restore() { std::memcpy(img_->mem, pristine_.data(), pristine_.size()); }
    int verify(uint32_t mapped = 0)
    {
        std::memset(err_, 0, sizeof(err_));
        return mdcom_wire_verify(img_->mem, mapped ? mapped : r_.lay.region_size, cfg_, err_,
                                 sizeof(err_));
    }
    uint32_t &word(size_t off) { return *(uint32_t *)(img_->mem + off); }

    Config c_;
    mdcom_config *cfg_ = nullptr;
    Computed r_;
    std::unique_ptr<Image> img_;
    std::vector<uint8_t> pristine_;
    char err_[256];
};

TEST_F(LayoutVerify, FormattedRegion)
{
    const mdcom_wire_hdr *h = (const mdcom_wire_hdr *)img_->mem;
    EXPECT_EQ(h->magic, MDCOM_MAGIC);
    EXPECT_EQ(h->version, MDCOM_WIRE_VERSION);
    EXPECT_EQ(h->hdr_size, 256u);
    EXPECT_EQ(h->region_size, r_.lay.region_size);
    EXPECT_EQ(h->layout_hash, r_.lay.hash);
    EXPECT_EQ(h->generation.load(), 7u);
    EXPECT_EQ(h->state.load(), 0x5157a7e5u)
        << "the caller owns state (FORMATTING) and publishes READY";
    EXPECT_EQ(h->fmt_pid.load(), 4242u);
    EXPECT_EQ(h->fmt_token, 77u);
    EXPECT_EQ(h->n_domains, 3u);
    EXPECT_EQ(h->n_channels, 3u);
    EXPECT_EQ(h->dom_off, r_.lay.dom_off);
    EXPECT_EQ(h->proc_off, r_.lay.proc_off);
    EXPECT_EQ(h->dir_off, r_.lay.dir_off);
    EXPECT_EQ(h->n_procs, MDCOM_MAX_PROCS);
    EXPECT_EQ(h->data_off, r_.lay.data_off);
    EXPECT_EQ(h->master_domain, 0u);

    const mdcom_wire_domain *d = (const mdcom_wire_domain *)(img_->mem + r_.lay.dom_off);
    EXPECT_STREQ(d[1].name, "r1");
    EXPECT_EQ(d[1].id, 1u);
    EXPECT_EQ(d[1].role, (uint32_t)MDCOM_ROLE_REMOTE);
    for (uint32_t i = 0; i < MDCOM_MAX_PROCS * 16; i++)
        ASSERT_EQ(img_->mem[r_.lay.proc_off + i], 0) << "process table cleared";

    const mdcom_wire_dirent *de = (const mdcom_wire_dirent *)(img_->mem + r_.lay.dir_off);
    EXPECT_STREQ(de[0].name, "f0");
    EXPECT_EQ(de[0].type, (uint32_t)MDCOM_CHAN_FIFO);
    EXPECT_EQ(de[0].off, r_.cl[0].off);
    EXPECT_EQ(de[0].size, r_.cl[0].size);
    EXPECT_EQ(de[0].block_size, 100u);
    EXPECT_EQ(de[0].block_count, 10u);
    EXPECT_EQ(de[0].queue_depth, 16u);
    EXPECT_EQ(de[1].block_size, 1000u) << "SMEM: size in block_size";
    EXPECT_EQ(de[1].senders, bit(0) | bit(1));
    EXPECT_EQ(de[1].receivers, bit(0) | bit(1));

    /* empty FIFO: queue empty, every block free (= in the pool) */
    for (uint32_t ci : {0u, 2u}) {
        FifoView f(img_->mem, r_.cl[ci]);
        const mdcom_wire_chan_layout &l = r_.cl[ci];
        EXPECT_EQ(*f.enq(), 0u);
        EXPECT_EQ(*f.deq(), 0u);
        EXPECT_EQ(*f.ev_waiters(), 0u);
        EXPECT_EQ(*f.filtered(), 0u);
        EXPECT_EQ(*f.errors(), 0u);
        for (uint32_t i = 0; i < l.qcap; i++)
            EXPECT_EQ(*f.qseq(i), 0u) /* matches no position: empty */;
        for (uint32_t i = 0; i < l.block_count; i++)
            EXPECT_EQ(*f.bstate(i), (uint32_t)MDCOM_BLK_FREE);
    }
    EXPECT_EQ(0, verify()) << err_;
}

TEST_F(LayoutVerify, FormatChannelResetsOnlyThatChannel)
{
    FifoView f(img_->mem, r_.cl[0]);
    *f.enq() = 5;
    *f.bstate(3) = 0xdeadbeef;
    std::memset(f.block(0), 0x5a, 100);
    FifoView g(img_->mem, r_.cl[2]);
    *g.enq() = 9;
    ASSERT_EQ(0, ut_layout_format_channel(img_->mem, cfg_, 0));
    EXPECT_EQ(*f.enq(), 0u);
    EXPECT_EQ(*f.bstate(3), (uint32_t)MDCOM_BLK_FREE);
    EXPECT_EQ(f.block(0)[99], 0x5a) << "block data is not cleared";
    EXPECT_EQ(*g.enq(), 9u) << "other channels untouched";
}

TEST_F(LayoutVerify, HeaderFieldsAreChecked)
{
    using H = mdcom_wire_hdr;
    const Field fields[] = {FIELD(H, hdr_size),  FIELD(H, region_size),  FIELD(H, layout_hash),
                            FIELD(H, n_domains), FIELD(H, n_channels),   FIELD(H, dom_off),
                            FIELD(H, proc_off),  FIELD(H, dir_off),      FIELD(H, n_procs),
                            FIELD(H, data_off),  FIELD(H, master_domain)};
    for (const Field &f : fields) {
        for (uint32_t delta : {1u, 0x80000000u, 0xffffffffu}) {
            restore();
            word(f.off) += delta;
            EXPECT_EQ(-ESTALE, verify()) << f.field;
            EXPECT_TRUE(contains(err_, f.field)) << f.field << ": " << err_;
            EXPECT_TRUE(contains(err_, "in the region")) << err_;
            EXPECT_TRUE(contains(err_, "in this config")) << err_;
        }
    }
    /* generation and state are not geometry */
    restore();
    word(offsetof(mdcom_wire_hdr, generation)) = 12345;
    word(offsetof(mdcom_wire_hdr, state)) = 0xffffffffu;
    EXPECT_EQ(0, verify()) << err_;
}

TEST_F(LayoutVerify, MagicVersionAndMappedSize)
{
    /* a wrong magic / version (one bit off, or 0) is a region of another kind */
    struct Bad {
        Field f;
        uint32_t value;
        int rc;
    };
    const Bad bad[] = {{FIELD(mdcom_wire_hdr, magic), MDCOM_MAGIC ^ 1, -EBADMSG},
                       {FIELD(mdcom_wire_hdr, magic), 0, -EBADMSG},
                       {FIELD(mdcom_wire_hdr, version), MDCOM_WIRE_VERSION + 1, -EPROTONOSUPPORT},
                       {FIELD(mdcom_wire_hdr, version), 0, -EPROTONOSUPPORT}};
    for (const Bad &b : bad) {
        restore();
        word(b.f.off) = b.value;
        EXPECT_EQ(b.rc, verify()) << b.f.field << " = " << b.value;
        EXPECT_TRUE(contains(err_, b.f.field)) << err_;
    }
    restore();
    EXPECT_EQ(-EBADMSG, verify(255)) << "smaller than a header";
    EXPECT_EQ(-EBADMSG, verify(1));
    EXPECT_EQ(-ESTALE, verify(r_.lay.region_size - 1));
    EXPECT_TRUE(contains(err_, "mapped size")) << err_;
    EXPECT_EQ(0, verify(r_.lay.region_size + 4096)) << "a larger mapping is fine";
}

TEST_F(LayoutVerify, DomainFieldsAreChecked)
{
    const size_t d1 = r_.lay.dom_off + 32;
    word(d1 + 16) = 9;
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_TRUE(contains(err_, "id")) << err_;
    EXPECT_TRUE(contains(err_, "domains[1]")) << err_;
    restore();
    word(d1 + 20) = MDCOM_ROLE_MASTER;
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_TRUE(contains(err_, "role")) << err_;
    restore();
    img_->mem[d1] = 'X';
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_TRUE(contains(err_, "domains[1]")) << err_;
    EXPECT_TRUE(contains(err_, "named")) << err_;
    restore();
    std::memset(img_->mem + d1, 'Z', 16); /* no terminator in the region */
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_LT(std::strlen(err_), sizeof(err_));
}

TEST_F(LayoutVerify, DirectoryFieldsAreChecked)
{
    using D = mdcom_wire_dirent;
    const Field fields[] = {FIELD(D, type),        {offsetof(D, off), "offset"},
                            FIELD(D, size),        FIELD(D, block_size),
                            FIELD(D, block_count), FIELD(D, queue_depth),
                            FIELD(D, senders),     FIELD(D, receivers)};
    for (uint32_t ch : {0u, 2u}) {
        for (const Field &f : fields) {
            restore();
            word(r_.lay.dir_off + ch * 64 + f.off) ^= 0x10;
            EXPECT_EQ(-ESTALE, verify()) << "channel " << ch << " " << f.field;
            EXPECT_TRUE(contains(err_, f.field)) << f.field << ": " << err_;
            EXPECT_TRUE(contains(err_, ("channels[" + std::to_string(ch) + "]").c_str())) << err_;
            EXPECT_TRUE(contains(err_, cfg_->channels[ch].name)) << err_;
        }
    }
    /* SMEM: its size lives in block_size; block_count/queue_depth unused */
    const size_t s = r_.lay.dir_off + 64;
    restore();
    word(s + offsetof(mdcom_wire_dirent, block_size)) = 999;
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_TRUE(contains(err_, "size")) << err_;
    restore();
    word(s + offsetof(mdcom_wire_dirent, senders)) = bit(2);
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_TRUE(contains(err_, "senders")) << err_;
    /* the name */
    restore();
    img_->mem[r_.lay.dir_off] = 'g';
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_TRUE(contains(err_, "named 'g0'")) << err_;
    restore();
    std::memset(img_->mem + r_.lay.dir_off, 'A', 32);
    EXPECT_EQ(-ESTALE, verify());
    EXPECT_LT(std::strlen(err_), sizeof(err_));
}

TEST_F(LayoutVerify, ChannelContentsAreNotGeometry)
{
    /* verify looks at header/tables only; channel state is checked at use */
    FifoView f(img_->mem, r_.cl[0]);
    *f.enq() = 0xdeadbeef;
    *f.bstate(0) = 0;
    std::memset(img_->mem + r_.lay.proc_off, 0xff, 64);
    EXPECT_EQ(0, verify()) << err_;
}

TEST_F(LayoutVerify, OtherConfigIsStale)
{
    Config other = Config::named(c_.name());
    other.std_domains(3);
    other.fifo("f0", 100, 10, 0, bit(0), bit(1));
    other.smem("s0", 1000, bit(0) | bit(1));
    other.fifo("f1", 8, 3, 2, bit(1) | bit(2), bit(0) | bit(2)); /* receivers differ */
    other.region_size(r_.lay.region_size);
    const mdcom_config *ocfg = other.get();
    Computed o = compute(ocfg);
    ASSERT_EQ(0, o.rc) << o.err;
    EXPECT_EQ(-ESTALE, mdcom_wire_verify(img_->mem, r_.lay.region_size, ocfg, err_, sizeof(err_)));
    EXPECT_TRUE(contains(err_, "receivers")) << err_;
}
