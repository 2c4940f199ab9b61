/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_security.cpp - what a local attacker (another user, a planted file) and
 * a misconfiguration can do to a region of the Linux port.
 *
 *   RegionFile      created 0600 with O_EXCL semantics, owned by us, never
 *                   world-accessible; a configured group gets g+rw; a world
 *                   mode is refused; a planted symlink is not followed; a
 *                   planted file of another user is not adopted; a stale file
 *                   of ours gets its mode reset.
 *   OtherUser       (root only, else skipped) a process switched to uid
 *                   nobody cannot attach (and cannot read the region with
 *                   mdcom-stat); the same process in the configured group can
 *                   (the positive control that shows the test can pass).
 *   Grants          a domain uses only the channels, and the directions, the
 *                   configuration grants it.
 *   ConfigBounds    names and sizes from the configuration are bounded.
 */
#include <gtest/gtest.h>

#include <fstream>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "mp/mp_sys.h"
#include "reliability/rel_util.h"

using namespace mdt;

namespace {

constexpr uid_t kNobody = 65534;

/* s: two domains, "ab", "ba" and the SMEM channel "sa" (a only) on the
 * test's region; a: the master, once master() attached it. */
class Security : public MpFixture {
protected:
    void SetUp() override
    {
        MpFixture::SetUp();
        s = Config::two_domains(region_);
        s.channels = {fifo_cfg("ab", 64, 4, 0, 1u, 2u), fifo_cfg("ba", 64, 4, 0, 2u, 1u),
                      smem_cfg("sa", 64, 1u)};
    }
    bool master(const mdcom_config *cfg) { return attach(&a.m, cfg, 0, 0) == 0; }
    /* why another uid cannot be tested here ("" when it can) */
    static std::string no_other_uid()
    {
        if (geteuid() != 0)
            return "needs root to run a process as another uid";
        const std::string dir = region_path("");
        struct stat dst;
        if (stat(dir.c_str(), &dst) != 0 || (dst.st_mode & 0003) != 0003)
            return dir + " is not writable/searchable by others: cannot test another uid";
        return "";
    }

    /* mdcom-stat copied where uid nobody can run it (/tmp): the build tree
     * may sit in a directory only we can enter (a CI clone in mktemp -d) */
    static std::string stat_for_nobody()
    {
        std::string dst = "/tmp/mdcom-stat-sec-" + std::to_string(getpid());
        std::ifstream in(MDCOM_STAT_EXE, std::ios::binary);
        std::ofstream out(dst, std::ios::binary | std::ios::trunc);
        out << in.rdbuf();
        out.close();
        if (!in || !out || chmod(dst.c_str(), 0755) != 0)
            return "";
        return dst;
    }

    Config s = Config::named("");
    Inst a;
};

TEST_F(Security, RegionFileIsPrivate)
{
    ASSERT_TRUE(master(s.get()));
    struct stat st;
    ASSERT_EQ(0, lstat(region_path(region_).c_str(), &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(st.st_uid, geteuid());
}

TEST_F(Security, ConfiguredGroupGetsGroupAccessOnly)
{
    mdcom_config *cfg = s.get();
    cfg->mode = 0640;
    cfg->group = (int32_t)getegid();
    ASSERT_TRUE(master(cfg));
    struct stat st;
    ASSERT_EQ(0, lstat(region_path(region_).c_str(), &st));
    EXPECT_EQ(st.st_mode & 07777, 0660u);
    EXPECT_EQ(st.st_gid, getegid());
}

TEST_F(Security, WorldAccessIsRefused)
{
    for (uint32_t mode : {0604u, 0602u, 0666u, 0777u, 01600u}) {
        mdcom_config *cfg = s.get();
        cfg->mode = mode;
        mdcom_t *m = nullptr;
        EXPECT_EQ(-EINVAL, mdcom_init(&m, cfg, 0, nullptr)) << std::oct << mode;
        EXPECT_FALSE(region_exists(region_));
    }
}

TEST_F(Security, PlantedSymlinkIsNotFollowed)
{
    char tmpl[] = "/tmp/mdcom-target-XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(5, write(fd, "hello", 5));
    close(fd);
    ASSERT_EQ(0, symlink(tmpl, region_path(region_).c_str()));
    mdcom_t *m = nullptr;
    int r = mdcom_init(&m, s.get(), 0, nullptr);
    EXPECT_LT(r, 0) << "master adopted a symlink";
    r = mdcom_init(&m, s.get(), 1, nullptr);
    EXPECT_LT(r, 0) << "remote followed a symlink";
    EXPECT_EQ("hello", rel::slurp(tmpl)) << "the symlink's target was written";
    struct stat st;
    ASSERT_EQ(0, lstat(region_path(region_).c_str(), &st));
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    unlink(tmpl);
}

TEST_F(Security, StaleFileOfOursGetsItsModeReset)
{
    int fd = open(region_path(region_).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, fchmod(fd, 0666));
    close(fd);
    ASSERT_TRUE(master(s.get()));
    struct stat st;
    ASSERT_EQ(0, lstat(region_path(region_).c_str(), &st));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(Security, PlantedFileOfAnotherUserIsNotAdopted)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to plant a file owned by another user";
    int fd = open(region_path(region_).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, ftruncate(fd, 1 << 16));
    ASSERT_EQ(0, fchown(fd, kNobody, kNobody));
    close(fd);
    mdcom_t *m = nullptr;
    EXPECT_EQ(-EPERM, mdcom_init(&m, s.get(), 0, nullptr));
}

/* In a forked child: drop to uid nobody (group gid, no others) and attach. */
int attach_as_nobody(const mdcom_config *cfg, gid_t gid, const char *stat_exe, const char *region)
{
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(kNobody) != 0)
        return 90;
    if (getuid() != kNobody || geteuid() != kNobody)
        return 91;
    mdcom_t *m = nullptr;
    mdcom_init_opts o{};
    o.attach_timeout_ns = 100 * kMs;
    int r = mdcom_init(&m, cfg, 1, &o);
    if (r == 0) {
        mdcom_term(m);
        return 0;
    }
    if (stat_exe) {
        /* the read-only tool is refused too */
        rel::RunResult sr = rel::run({stat_exe, region});
        if (sr.status != 2)
            return 92;
    }
    return r == -EACCES ? 13 : r == -EPERM ? 1 : 99;
}

TEST_F(Security, AnotherUserCannotAttach)
{
    if (std::string why = no_other_uid(); !why.empty())
        GTEST_SKIP() << why;
    const mdcom_config *cfg = s.get();
    ASSERT_TRUE(master(cfg));
    const gid_t other_gid = 4242;
    const std::string stat_exe = stat_for_nobody();
    ASSERT_FALSE(stat_exe.empty()) << "cannot copy " << MDCOM_STAT_EXE << " to /tmp";
    pid_t c = kids_.spawn(
        [&] { return attach_as_nobody(cfg, other_gid, stat_exe.c_str(), region_.c_str()); });
    std::string res = kids_.wait(c, 10 * kSec);
    unlink(stat_exe.c_str());
    EXPECT_TRUE(res.find("exited with status 13") != std::string::npos)
        << "uid nobody: " << res << " (13 = -EACCES expected; 0 = it attached!)";
}

TEST_F(Security, ConfiguredGroupMemberCanAttach)
{
    if (std::string why = no_other_uid(); !why.empty())
        GTEST_SKIP() << why;
    const gid_t grp = 4243;
    mdcom_config *cfg = s.get();
    cfg->group = (int32_t)grp;
    ASSERT_TRUE(master(cfg));
    pid_t c = kids_.spawn([&] { return attach_as_nobody(cfg, grp, nullptr, nullptr); });
    EXPECT_EQ("", kids_.wait(c, 10 * kSec)) << "a member of the configured group could not attach";
}

/* A user who squats the name (creates the file first, world-writable, and
 * formats it) must not become the master of the remotes that attach: a
 * remote refuses a file that is neither its own uid's nor the configured
 * group's, or that is world-accessible (needs root to give the file away). */
TEST_F(Security, PortRemoteRefusesRegionOfAnotherUser)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "needs root to give the region to another user";
    const mdcom_config *cfg = s.get();
    ASSERT_TRUE(master(cfg));
    /* as if another user had created and formatted it: private to them
     * (root could still open it), then world-writable */
    ASSERT_EQ(0, chown(region_path(region_).c_str(), kNobody, kNobody));
    for (mode_t mode : {0600, 0666}) {
        ASSERT_EQ(0, chmod(region_path(region_).c_str(), mode));
        mdcom_t *m = nullptr;
        int r = mdcom_init(&m, cfg, 1, nullptr);
        if (r == 0)
            mdcom_term(m);
        EXPECT_EQ(-EPERM, r) << "the remote attached to a region of another user, mode " << std::oct
                             << mode;
    }
}

TEST_F(Security, DomainsUseOnlyGrantedChannels)
{
    const mdcom_config *cfg = s.get();
    Inst b;
    ASSERT_TRUE(master(cfg));
    ASSERT_EQ(0, attach(&b.m, cfg, 1, kSec));
    mdcom_fifoch_t *ab_a, *ab_b, *ba_a;
    mdcom_smemch_t *sa;
    ASSERT_EQ(0, mdcom_fifoch_open(a, "ab", &ab_a));
    ASSERT_EQ(0, mdcom_fifoch_open(b, "ab", &ab_b));
    ASSERT_EQ(0, mdcom_fifoch_open(a, "ba", &ba_a));
    EXPECT_EQ(-EPERM, mdcom_smemch_open(b, "sa", &sa)) << "b is not a user of sa";
    uint32_t id, len;
    char buf[8];
    EXPECT_EQ(-EPERM, mdcom_fifoch_alloc(ab_b, &id)) << "b only receives on ab";
    EXPECT_EQ(-EPERM, mdcom_fifoch_send(ab_b, "x", 1, 0));
    EXPECT_EQ(-EPERM, mdcom_fifoch_dequeue(ab_a, &id, &len)) << "a only sends on ab";
    EXPECT_EQ(-EPERM, mdcom_fifoch_recv(ab_a, buf, sizeof buf, 0));
    EXPECT_EQ(-EPERM, mdcom_fifoch_alloc(ba_a, &id)) << "a only receives on ba";
    mdcom_filter f{MDCOM_FILTER_EVERY_NTH, 2, nullptr, nullptr};
    EXPECT_EQ(-EPERM, mdcom_filter_set(ab_b, &f));
    mdcom_fifoch_t *ab_b2;
    EXPECT_EQ(-EPERM, mdcom_fifoch_init(ab_b)) << "only the master domain re-initialises";
    EXPECT_EQ(-ENOENT, mdcom_fifoch_open(a, "sa", &ab_b2)) << "an SMEM channel is not a FIFO";
}

TEST_F(Security, ConfigurationBounds)
{
    auto rc = [&](auto mutate) {
        Config t = s;
        mdcom_config *cfg = t.get();
        mutate(t, cfg);
        mdcom_t *m = nullptr;
        int r = mdcom_init(&m, cfg, 0, nullptr);
        if (r == 0)
            mdcom_term(m);
        return r;
    };
    static const char long_name[] = "0123456789012345678901234567890123456789";
    EXPECT_EQ(-EINVAL, rc([](Config &, mdcom_config *c) { c->region_name = "../etc/passwd"; }));
    EXPECT_EQ(-EINVAL, rc([](Config &, mdcom_config *c) { c->region_name = ".hidden"; }));
    EXPECT_EQ(-EINVAL, rc([](Config &, mdcom_config *c) { c->region_name = long_name; }));
    EXPECT_EQ(-EINVAL, rc([](Config &, mdcom_config *c) { c->region_name = ""; }));
    EXPECT_EQ(-EINVAL, rc([](Config &t, mdcom_config *c) {
        t.channels[0].name = long_name;
        c->channels = t.channels.data();
    }));
    EXPECT_EQ(-EINVAL, rc([](Config &t, mdcom_config *c) {
        t.domains[1].name = "a-very-long-domain-name";
        c->domains = t.domains.data();
    }));
    EXPECT_EQ(-EINVAL, rc([](Config &t, mdcom_config *c) {
        t.channels[0].block_count = MDCOM_MAX_BLOCKS + 1;
        c->channels = t.channels.data();
    }));
    EXPECT_EQ(-EINVAL, rc([](Config &t, mdcom_config *c) {
        t.channels[0].block_size = 0x10000000u; /* x 4 blocks > 4 GiB */
        t.channels[0].block_count = 64;
        c->channels = t.channels.data();
    }));
    EXPECT_EQ(-EINVAL, rc([](Config &t, mdcom_config *c) {
        t.channels[0].senders = 1u << 7; /* a domain that does not exist */
        c->channels = t.channels.data();
    }));
    EXPECT_EQ(-EINVAL, rc([](Config &, mdcom_config *c) { c->n_channels = MDCOM_MAX_DIR + 1; }));
    EXPECT_FALSE(region_exists(region_));
}

} // namespace
