/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layouts of split virtqueues and of the RPMsg area against values computed
 * by hand from the virtio specification (section "Split Virtqueues" and the
 * legacy layout note):
 *   descriptor table at 0, 16 N bytes
 *   available ring at 16 N, 6 + 2 N bytes (flags, idx, ring[N], used_event)
 *   used ring at align_up(16 N + 6 + 2 N, align), 6 + 8 N bytes
 * The expected numbers below are written out, not recomputed with the
 * formula, so a wrong formula in the library cannot agree with itself.
 */
#include <gtest/gtest.h>

#include <cerrno>

#include "mdcom/rpmsg.h"
#include "support/whitebox.h"

/* The transport's virtio structures and flags (virtio 1.x 2.7.5, 2.7.6, 2.7.8). */
TEST(RpmsgLayout, VirtioStructuresMatchSpecification)
{
    ut_vq_wire_facts f{};
    ut_vq_wire(&f);
    EXPECT_EQ(16u, f.desc_size);
    EXPECT_EQ(8u, f.used_elem_size);
    EXPECT_EQ(4u, f.avail_ring_off);
    EXPECT_EQ(4u, f.used_ring_off);
    EXPECT_EQ(1u, f.desc_f_next);
    EXPECT_EQ(2u, f.desc_f_write);
    EXPECT_EQ(4u, f.desc_f_indirect);
}

struct VringCase {
    uint32_t num, align;
    uint32_t avail, used_event, used, avail_event, size, size_aligned;
};

/* By hand:
 *  N=256 a=4096: avail 4096; used_event 4096+4+512=4612; avail end 4614 -> used 8192;
 *                avail_event 8192+4+2048=10244; size 10246; aligned 12288
 *  N=16 a=4096:  avail 256; used_event 292; end 294 -> used 4096; avail_event 4228;
 *                size 4230; aligned 8192
 *  N=1 a=4:      avail 16; used_event 22; end 24 -> used 24; avail_event 36; size 38; aligned 40
 *  N=8 a=16:     avail 128; used_event 148; end 150 -> used 160; avail_event 228; size 230;
 *                aligned 240
 *  N=64 a=64:    avail 1024; used_event 1156; end 1158 -> used 1216; avail_event 1732;
 *                size 1734; aligned 1792
 *  N=32768 a=4096: avail 524288; used_event 589828; end 589830 -> used 593920;
 *                avail_event 856068; size 856070; aligned 860160
 *  N=4 a=16:     avail 64; used_event 76; end 78 -> used 80; avail_event 116; size 118;
 *                aligned 128 */
static const VringCase kVrings[] = {
    {256, 4096, 4096, 4612, 8192, 10244, 10246, 12288},
    {16, 4096, 256, 292, 4096, 4228, 4230, 8192},
    {1, 4, 16, 22, 24, 36, 38, 40},
    {8, 16, 128, 148, 160, 228, 230, 240},
    {64, 64, 1024, 1156, 1216, 1732, 1734, 1792},
    {32768, 4096, 524288, 589828, 593920, 856068, 856070, 860160},
    {4, 16, 64, 76, 80, 116, 118, 128},
};

TEST(RpmsgLayout, VringMatchesSpecification)
{
    for (const VringCase &c : kVrings) {
        SCOPED_TRACE("num " + std::to_string(c.num) + " align " + std::to_string(c.align));
        ut_vring_layout l{};
        ASSERT_EQ(0, ut_vring_layout_compute(c.num, c.align, &l));
        EXPECT_EQ(c.num, l.num);
        EXPECT_EQ(c.align, l.align);
        EXPECT_EQ(0u, l.desc_off);
        EXPECT_EQ(c.avail, l.avail_off);
        EXPECT_EQ(c.used_event, l.used_event_off);
        EXPECT_EQ(c.used, l.used_off);
        EXPECT_EQ(c.avail_event, l.avail_event_off);
        EXPECT_EQ(c.size, l.size);
        EXPECT_EQ(c.size_aligned, l.size_aligned);
        EXPECT_EQ(0u, l.used_off % c.align);
        EXPECT_EQ(0u, l.used_off % 4u); /* used ring natural alignment */
    }
}

TEST(RpmsgLayout, VringRejectsInvalid)
{
    ut_vring_layout l{};
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(0, 4096, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(3, 4096, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(65536, 4096, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(256, 0, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(256, 2, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(256, 3000, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(256, 2u << 20, &l));
    EXPECT_EQ(-EINVAL, ut_vring_layout_compute(256, 4096, nullptr));
}

TEST(RpmsgLayout, DefaultAreaIsLinuxGeometry)
{
    /* control block 192 B -> vring 0 at 4096; a vring of 256 takes 10246 B
     * (12288 aligned) -> vring 1 at 16384; its end 26630 -> pool at 28672;
     * pool 2 * 256 * 512 = 262144 -> total 290816 */
    mdcom_rpmsg_layout l{};
    ASSERT_EQ(0, mdcom_rpmsg_layout_compute(nullptr, &l));
    EXPECT_EQ(256u, l.geometry.num_bufs);
    EXPECT_EQ(512u, l.geometry.buf_size);
    EXPECT_EQ(4096u, l.geometry.vring_align);
    EXPECT_EQ(0u, l.ctl_off);
    EXPECT_EQ(192u, l.ctl_size);
    EXPECT_EQ(4096u, l.vring_off[0]);
    EXPECT_EQ(16384u, l.vring_off[1]);
    EXPECT_EQ(10246u, l.vring_size);
    EXPECT_EQ(28672u, l.pool_off);
    EXPECT_EQ(262144u, l.pool_size);
    EXPECT_EQ(290816u, l.size);
}

/* By hand:
 *  N=4, 64 B, align 16: v0 = 192; vring 118 B (128 aligned) -> v1 = 320;
 *    end 438 -> pool at 448 (64-aligned); pool 512 -> size 960
 *  N=16, 16 KiB, align 4096: v0 4096; vring 4230 (8192) -> v1 12288; end
 *    16518 -> pool 20480; pool 2*16*16384 = 524288 -> size 544768
 *  N=64, 512 B, align 64: v0 = 192; vring 1734 (1792) -> v1 1984; end
 *    3718 -> pool 3776; pool 65536 -> size 69312 */
TEST(RpmsgLayout, SmallAndLargeAreas)
{
    struct AreaCase {
        mdcom_rpmsg_geometry g;
        uint32_t vring0, vring1, vring_size, pool_off, pool_size, size;
    };
    const AreaCase cases[] = {{{4, 64, 16}, 192, 320, 118, 448, 512, 960},
                              {{16, 16384, 4096}, 4096, 12288, 4230, 20480, 524288, 544768},
                              {{64, 512, 64}, 192, 1984, 1734, 3776, 65536, 69312}};
    for (const AreaCase &c : cases) {
        SCOPED_TRACE("num_bufs " + std::to_string(c.g.num_bufs));
        mdcom_rpmsg_geometry g = c.g;
        mdcom_rpmsg_layout l{};
        ASSERT_EQ(0, mdcom_rpmsg_layout_compute(&g, &l));
        const uint32_t got[] = {l.vring_off[0], l.vring_off[1], l.vring_size,
                                l.pool_off,     l.pool_size,    l.size};
        const uint32_t want[] = {c.vring0, c.vring1, c.vring_size, c.pool_off, c.pool_size, c.size};
        for (size_t i = 0; i < 6; i++)
            EXPECT_EQ(want[i], got[i])
                << "field " << i << " (vring0 vring1 vring_size pool_off pool_size size)";
    }
}

TEST(RpmsgLayout, RejectsBadGeometry)
{
    mdcom_rpmsg_layout l{};
    mdcom_rpmsg_geometry bad[] = {
        {3, 512, 4096},     /* not a power of two        */
        {65536, 512, 4096}, /* more than 32768           */
        {256, 48, 4096},    /* smaller than 64            */
        {256, 520, 4096},   /* not a multiple of 16       */
        {256, 65552, 4096}, /* header len is 16 bits      */
        {256, 512, 24},     /* alignment not a power of 2 */
    };
    for (const auto &g : bad) {
        SCOPED_TRACE(std::to_string(g.num_bufs) + "/" + std::to_string(g.buf_size) + "/" +
                     std::to_string(g.vring_align));
        EXPECT_EQ(-EINVAL, mdcom_rpmsg_layout_compute(&g, &l));
    }
    mdcom_rpmsg_geometry huge{32768, 65536, 4096}; /* 4 GiB pool */
    EXPECT_EQ(-EOVERFLOW, mdcom_rpmsg_layout_compute(&huge, &l));
    EXPECT_EQ(-EINVAL, mdcom_rpmsg_layout_compute(nullptr, nullptr));
}

TEST(RpmsgLayout, StateSizeGrowsWithGeometryOnly)
{
    mdcom_rpmsg_opts o{};
    o.role = MDCOM_RPMSG_HOST;
    size_t def = mdcom_rpmsg_state_size(&o);
    EXPECT_GT(def, 0u);
    o.geometry.num_bufs = 1024;
    EXPECT_GT(mdcom_rpmsg_state_size(&o), def);
    o.geometry.num_bufs = 256;
    o.geometry.buf_size = 4096; /* buffer size lives in the area, not in the state */
    EXPECT_EQ(def, mdcom_rpmsg_state_size(&o));
    o.geometry.num_bufs = 5;
    EXPECT_EQ(0u, mdcom_rpmsg_state_size(&o));
    EXPECT_EQ(0u, mdcom_rpmsg_state_size(nullptr));
}
