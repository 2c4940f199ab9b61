/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_remote_profile.cpp - the remote-only core (MDCOM_PROFILE=remote) meets
 * the full one on one region. This test binary is linked with the remote
 * core (mdcom_core_remote + the Linux port); its master is another process,
 * profile_master, linked with the full libmdcom. Proves: the same wire
 * format (attach, messages both ways, SMEM), the master-only calls refused
 * (-EPERM, with a message), and that the master reaps a remote-profile
 * process that died holding a block (the remote core has no reaper).
 */
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "mdcom/mdcom.h"
#include "profile_cfg.h"

extern char **environ;

namespace {

constexpr int64_t kSec = 1000000000LL;

class RemoteProfile : public ::testing::Test {
protected:
    void SetUp() override
    {
        region_ = "mdprof-" + std::to_string(getpid());
        cfg_ = profile_config(region_.c_str());
        char *argv[] = {const_cast<char *>(PROFILE_MASTER), const_cast<char *>(region_.c_str()),
                        nullptr};
        ASSERT_EQ(0, posix_spawn(&master_, PROFILE_MASTER, nullptr, nullptr, argv, environ));
        mdcom_init_opts o{};
        o.errbuf = err_;
        o.errbuf_len = sizeof(err_);
        o.attach_timeout_ns = 10 * kSec;
        ASSERT_EQ(0, mdcom_init(&m_, &cfg_, 1, &o)) << err_;
        ASSERT_EQ(0, mdcom_fifoch_open(m_, "up", &up_));
        ASSERT_EQ(0, mdcom_fifoch_open(m_, "down", &down_));
    }

    void TearDown() override
    {
        if (m_) {
            (void)mdcom_fifoch_send(up_, "quit", 4, kSec);
            EXPECT_EQ(0, mdcom_term(m_));
        }
        if (master_ > 0) {
            int st = 0;
            pid_t w = 0;
            for (int i = 0; i < 500 && (w = waitpid(master_, &st, WNOHANG)) == 0; i++)
                usleep(10000);
            if (w == 0) {
                kill(master_, SIGKILL);
                waitpid(master_, &st, 0);
                ADD_FAILURE() << "profile_master did not exit";
            } else {
                EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
                    << "profile_master status " << st;
            }
        }
    }

    /* the master's mdcom_sense_process(domain 1): it reaps before it counts */
    int remote_count()
    {
        uint32_t v = 0;
        EXPECT_EQ(0, mdcom_fifoch_send(up_, "cnt?", 4, kSec));
        EXPECT_EQ(4, mdcom_fifoch_recv(down_, &v, sizeof(v), 5 * kSec));
        return (int)v;
    }

    std::string region_;
    mdcom_config cfg_{};
    pid_t master_ = -1;
    mdcom_t *m_ = nullptr;
    mdcom_fifoch_t *up_ = nullptr, *down_ = nullptr;
    char err_[256] = "";
};

TEST_F(RemoteProfile, EchoesThroughAFullProfileMaster)
{
    char out[256], in[256];
    for (uint32_t i = 0; i < 2000; i++) {
        uint32_t len = 1 + (i * 37) % 256;
        for (uint32_t k = 0; k < len; k++)
            out[k] = (char)(i + k * 7);
        ASSERT_EQ(0, mdcom_fifoch_send(up_, out, len, kSec)) << i;
        ASSERT_EQ((int)len, mdcom_fifoch_recv(down_, in, sizeof(in), 5 * kSec)) << i;
        ASSERT_EQ(0, memcmp(in, out, len)) << i;
    }
    /* zero-copy calls of the remote core too */
    uint32_t id, len;
    void *p;
    ASSERT_EQ(0, mdcom_fifoch_alloc(up_, &id));
    ASSERT_EQ(0, mdcom_fifoch_get(up_, id, &p, nullptr));
    memcpy(p, "zero-copy", 9);
    ASSERT_EQ(0, mdcom_fifoch_enqueue(up_, id, 9));
    ASSERT_EQ(0, mdcom_fifoch_notify(up_));
    ASSERT_EQ(0, mdcom_fifoch_wait(down_, MDCOM_EV_RX, 5 * kSec) > 0 ? 0 : -1);
    ASSERT_EQ(0, mdcom_fifoch_dequeue(down_, &id, &len));
    ASSERT_EQ(0, mdcom_fifoch_get(down_, id, &p, nullptr));
    EXPECT_EQ(9u, len);
    EXPECT_EQ(0, memcmp(p, "zero-copy", 9));
    EXPECT_EQ(0, mdcom_fifoch_free(down_, id));
    /* SMEM: the lock and the area */
    mdcom_smemch_t *s;
    ASSERT_EQ(0, mdcom_smemch_open(m_, "area", &s));
    ASSERT_EQ(0, mdcom_smemch_lock(s, kSec));
    ASSERT_EQ(0, mdcom_smemch_get(s, &p, &len));
    EXPECT_EQ(64u, len);
    EXPECT_EQ(0, mdcom_smemch_unlock(s));
}

TEST_F(RemoteProfile, MasterOnlyCallsAreRefused)
{
    EXPECT_EQ(-EPERM, mdcom_fifoch_init(down_));
    EXPECT_EQ(-EINVAL, mdcom_fifoch_init(nullptr));
    /* a master-domain attach that has to format: another region, no master */
    std::string other = region_ + "-x";
    mdcom_config c = profile_config(other.c_str());
    mdcom_init_opts o{};
    char err[256] = "";
    o.errbuf = err;
    o.errbuf_len = sizeof(err);
    mdcom_t *m2 = nullptr;
    EXPECT_EQ(-EPERM, mdcom_init(&m2, &c, 0, &o));
    EXPECT_NE(nullptr, strstr(err, "remote-only")) << err;
    unlink(("/dev/shm/" + other).c_str());
    EXPECT_EQ(1, mdcom_sense_process(m_, 1)) << "this process, counted without reaping";
}

TEST_F(RemoteProfile, MasterReapsADeadRemoteProfileProcess)
{
    EXPECT_EQ(1, remote_count());
    int pipefd[2];
    ASSERT_EQ(0, pipe(pipefd));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        /* a second remote-profile process: attach, take a block, die */
        mdcom_t *m2;
        mdcom_fifoch_t *u;
        uint32_t id;
        char ok = 0;
        if (mdcom_init(&m2, &cfg_, 1, nullptr) == 0 && mdcom_fifoch_open(m2, "up", &u) == 0 &&
            mdcom_fifoch_alloc(u, &id) == 0)
            ok = 1;
        (void)!write(pipefd[1], &ok, 1);
        pause();
        _exit(0);
    }
    char ok = 0;
    ASSERT_EQ(1, read(pipefd[0], &ok, 1));
    ASSERT_EQ(1, ok);
    mdcom_fifo_state st;
    ASSERT_EQ(0, mdcom_sense_fifoch(up_, &st));
    EXPECT_EQ(st.block_count - 1, st.free_blocks) << "the child holds one block";
    EXPECT_EQ(2, remote_count());
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    EXPECT_EQ(1, remote_count()) << "the master reaped the dead remote";
    ASSERT_EQ(0, mdcom_sense_fifoch(up_, &st));
    EXPECT_EQ(st.block_count, st.free_blocks) << "its block is back in the pool";
    close(pipefd[0]);
    close(pipefd[1]);
}

} // namespace
