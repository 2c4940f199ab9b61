/* SPDX-License-Identifier: BSD-3-Clause */
// test_bench.cpp - unit tests of mdcom-bench's scenario logic: statistics,
// argument parsing and the driver's option table (positional
// rows too), payload checks (integrity), CSV rows, the one row writer for
// JSON and CSV, targets and their JSON, the child runner.
// The scenarios themselves run as ctest smoke tests (bench_*_smoke).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

extern "C" {
#include "bench.h"
#include "payload.h"
#include "transport.h"
}

// What fn writes to a FILE, as a string.
template <class F>
static std::string written(F fn)
{
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return "open_memstream failed";
    fn(f);
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

// JSON without its layout (spaces and newlines).
static std::string flat(const std::string &s)
{
    std::string r;
    for (char c : s)
        if (c != ' ' && c != '\n')
            r += c;
    return r;
}

TEST(BenchStats, NearestRankPercentiles)
{
    std::vector<uint64_t> v;
    for (uint64_t i = 100; i >= 1; i--)
        v.push_back(i * 10); // 1000, 990, ..., 10: unsorted on purpose
    bench_stats st;
    bench_stats_compute(v.data(), v.size(), &st);
    EXPECT_EQ(st.n, 100u);
    EXPECT_EQ(st.min, 10u);
    EXPECT_EQ(st.max, 1000u);
    EXPECT_EQ(st.p50, 500u); // rank ceil(0.5 * 100) = 50
    EXPECT_EQ(st.p90, 900u);
    EXPECT_EQ(st.p99, 990u);
    EXPECT_EQ(st.p999, 1000u); // rank ceil(99.9) = 100
    EXPECT_DOUBLE_EQ(st.mean, 505.0);
    EXPECT_NEAR(st.stddev, 290.1149, 1e-3); // sample standard deviation
    for (size_t i = 1; i < v.size(); i++)
        ASSERT_LE(v[i - 1], v[i]) << "samples are sorted in place";
}

TEST(BenchStats, EmptyAndSingle)
{
    bench_stats st;
    bench_stats_compute(nullptr, 0, &st);
    EXPECT_EQ(st.n, 0u);
    uint64_t one = 42;
    bench_stats_compute(&one, 1, &st);
    EXPECT_EQ(st.p50, 42u);
    EXPECT_EQ(st.p999, 42u);
    EXPECT_EQ(st.stddev, 0.0);
}

TEST(BenchStats, LargeValuesSortLikeQsort)
{
    std::vector<uint64_t> v = {5000000000ull, 3, 70000, 1ull << 40, 12, 70000, 0};
    std::vector<uint64_t> w = v;
    std::sort(w.begin(), w.end());
    bench_stats st;
    bench_stats_compute(v.data(), v.size(), &st);
    EXPECT_EQ(v, w);
    EXPECT_EQ(st.max, 1ull << 40);
}

TEST(BenchParse, SizesAndCounts)
{
    uint64_t v;
    EXPECT_EQ(bench_parse_size("4K", &v), 0);
    EXPECT_EQ(v, 4096u);
    EXPECT_EQ(bench_parse_size("1MiB", &v), 0);
    EXPECT_EQ(v, 1u << 20);
    EXPECT_EQ(bench_parse_size("16M", &v), 0);
    EXPECT_EQ(v, 16u << 20);
    EXPECT_NE(bench_parse_size("4X", &v), 0);
    EXPECT_NE(bench_parse_size("-1", &v), 0);
    EXPECT_NE(bench_parse_size("", &v), 0);
    EXPECT_EQ(bench_parse_count("100k", &v), 0);
    EXPECT_EQ(v, 100000u);
    EXPECT_EQ(bench_parse_count("10M", &v), 0);
    EXPECT_EQ(v, 10000000u);
    uint32_t l[4];
    EXPECT_EQ(bench_parse_size_list("1,64,4K", l, 4, 1, 1 << 20, nullptr), 3);
    EXPECT_EQ(l[2], 4096u);
    EXPECT_EQ(bench_parse_size_list("1,2,3,4,5", l, 4, 1, 100, nullptr), -1); // too many
    EXPECT_EQ(bench_parse_size_list("0", l, 4, 1, 100, nullptr), -1);         // out of range
    uint32_t s[32];
    int n = bench_log2_sizes(s, 32, 1, 16u << 20);
    EXPECT_EQ(n, 25);
    EXPECT_EQ(s[24], 16u << 20);
}

TEST(BenchParse, Transports)
{
    const bench_transport *t[32];
    unsigned n = 0;
    EXPECT_EQ(bench_parse_transports("raw-spin,pipe", t, &n, 32, 0, "test"), 0);
    EXPECT_EQ(n, 2u);
    EXPECT_STREQ(t[1]->name, "pipe");
    EXPECT_EQ(bench_parse_transports("no-such", t, &n, 32, 0, "test"), -1);
    // mdcom-zc-poll and rpmsg-poll measure round trips only: refused where
    // whole messages are needed
    EXPECT_EQ(bench_parse_transports("mdcom-zc-poll", t, &n, 32, 1, "test"), -1);
    EXPECT_EQ(bench_parse_transports("rpmsg-poll", t, &n, 32, 1, "test"), -1);
    ASSERT_EQ(bench_parse_transports("all", t, &n, 32, 1, "test"), 0);
    ASSERT_GT(n, 0u);
    for (unsigned i = 0; i < n; i++)
        EXPECT_TRUE(bench_tr_carries(t[i]));
    // 'all' among names and '-NAME' leaving one out (a name not built here: nothing)
    unsigned n_all = n;
    ASSERT_EQ(bench_parse_transports("all,-pipe,-not-built-here", t, &n, 32, 1, "test"), 0);
    EXPECT_EQ(n, n_all - 1);
    EXPECT_EQ(bench_tr_index(t, n, "pipe"), -1);
    EXPECT_GE(bench_tr_index(t, n, "mq"), 0);
    ASSERT_EQ(bench_parse_transports("pipe,all", t, &n, 32, 1, "test"), 0);
    EXPECT_EQ(n, n_all); // pipe first, not twice
    EXPECT_STREQ(t[0]->name, "pipe");
    // every transport but an external program implements the message interface
    for (unsigned i = 0; i < bench_n_transports; i++)
        EXPECT_TRUE(bench_transports[i]->msg != nullptr || bench_transports[i]->ext != nullptr);
}

TEST(BenchPayload, Crc32cKnownVector)
{
    // CRC-32C check value of "123456789" (RFC 3720 / iSCSI)
    EXPECT_EQ(bench_crc32c(0, "123456789", 9), 0xe3069283u);
    EXPECT_EQ(bench_crc32c(0, "", 0), 0u);
}

TEST(BenchPayload, PatternDetectsEveryKindOfDamage)
{
    for (uint32_t size : {1u, 3u, 4u, 6u, 8u, 64u, 4096u}) {
        bench_pattern p;
        ASSERT_EQ(bench_pattern_init(&p, size, 3), 0);
        for (uint32_t seq = 1; seq < 20; seq++) {
            std::vector<unsigned char> m(bench_pattern_msg(&p, seq),
                                         bench_pattern_msg(&p, seq) + size);
            EXPECT_EQ(bench_pattern_check(&p, m.data(), size, seq, 1), BENCH_PAT_OK);
            EXPECT_EQ(bench_pattern_check(&p, m.data(), size, seq + 1, 0), BENCH_PAT_SEQ) << size;
            if (size > 1)
                EXPECT_EQ(bench_pattern_check(&p, m.data(), size - 1, seq, 0), BENCH_PAT_LEN);
            if (size > 8) {
                m[size - 1] ^= 1;
                EXPECT_EQ(bench_pattern_check(&p, m.data(), size, seq, 0), BENCH_PAT_BODY);
                m[size - 1] ^= 1;
                m[5] ^= 1;
                EXPECT_EQ(bench_pattern_check(&p, m.data(), size, seq, 0), BENCH_PAT_CRC);
            } else if (size == 8) {
                m[7] ^= 1; // no body: the last byte is the CRC field
                EXPECT_EQ(bench_pattern_check(&p, m.data(), size, seq, 0), BENCH_PAT_CRC);
            } else if (size > 4) {
                m[size - 1] ^= 1;
                EXPECT_EQ(bench_pattern_check(&p, m.data(), size, seq, 0), BENCH_PAT_BODY);
            }
        }
        // different channels get different bodies
        bench_pattern q;
        ASSERT_EQ(bench_pattern_init(&q, size, 4), 0);
        if (size >= 16)
            EXPECT_NE(memcmp(bench_pattern_msg(&p, 1) + 8, bench_pattern_msg(&q, 1) + 8, size - 8),
                      0);
        bench_pattern_free(&q);
        bench_pattern_free(&p);
    }
}

TEST(BenchPayload, StampAnySize)
{
    unsigned char b[16];
    for (uint32_t size : {1u, 2u, 4u, 7u, 8u, 16u}) {
        memset(b, 0, sizeof(b));
        bench_stamp_any(b, size, 0x01020304u);
        EXPECT_TRUE(bench_check_any(b, size, 0x01020304u));
        EXPECT_FALSE(bench_check_any(b, size, 0x01020305u)) << size;
    }
}

TEST(BenchCsv, RowsHaveFixedColumns)
{
    std::string s = written([](FILE *f) {
        bench_csv_header(f);
        bench_csv_key k = {"latency", "pipe", "rtt", 64, 0, 100, 0};
        bench_csv_row(f, &k, "p50", 1234.0, "ns");
        bench_csv_row(f, &k, "ratio", NAN, "x");
    });
    EXPECT_NE(s.find("scenario,transport,size,channels,mode,n,total_bytes,metric,value,unit\n"),
              std::string::npos);
    EXPECT_NE(s.find("latency,pipe,64,,rtt,100,,p50,1234,ns\n"), std::string::npos);
    EXPECT_NE(s.find("latency,pipe,64,,rtt,100,,ratio,,x\n"), std::string::npos);
}

// A list of counts names what is out of range, not "size ... bytes".
TEST(BenchParse, CountListNamesWhatIsOutOfRange)
{
    uint32_t l[4];
    testing::internal::CaptureStderr();
    EXPECT_EQ(bench_parse_size_list("1,64", l, 4, 1, 32, "channel count"), -1);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("channel count '64' out of range 1..32"), std::string::npos) << err;
    EXPECT_EQ(err.find("bytes"), std::string::npos) << err;
}

// The driver's option table: every kind of row, ranges, flags that set and
// clear, --help, unknown options and stray arguments.
struct TestOpts {
    const char *sizes;
    uint64_t iters;
    uint32_t rounds;
    double cell;
    int api;
};
static const bench_opt test_tab[] = {
    BOPT(TestOpts, sizes, "sizes", BO_STR, 0, 0, "LIST", "sizes"),
    BOPT(TestOpts, iters, "iters", BO_U64, 1, 1e6, "N", "samples"),
    BOPT(TestOpts, rounds, "rounds", BO_U32, 1, 100, "R", "rounds\nsecond line"),
    BOPT(TestOpts, cell, "cell-time", BO_DBL, 0, 10, "S", "seconds"),
    BOPT(TestOpts, api, "api", BO_FLAG, 1, 0, nullptr, "on"),
    BOPT(TestOpts, api, "no-api", BO_FLAG, 0, 0, nullptr, "off"),
    {},
};

static int parse_test(std::vector<const char *> args, TestOpts *o)
{
    args.insert(args.begin(), "test");
    *o = TestOpts{nullptr, 7, 3, 0.5, 0};
    return bench_opts_parse("test", test_tab, o, (int)args.size(),
                            const_cast<char **>(args.data()));
}

TEST(BenchDriver, OptionTableParsesEveryKind)
{
    TestOpts o;
    ASSERT_EQ(parse_test({"--sizes", "64,4K", "--iters", "100k", "--rounds=5", "--cell-time",
                          "0.25", "--api"},
                         &o),
              0);
    EXPECT_STREQ(o.sizes, "64,4K");
    EXPECT_EQ(o.iters, 100000u);
    EXPECT_EQ(o.rounds, 5u);
    EXPECT_DOUBLE_EQ(o.cell, 0.25);
    EXPECT_EQ(o.api, 1);
    ASSERT_EQ(parse_test({"--api", "--no-api"}, &o), 0); // the last one wins
    EXPECT_EQ(o.api, 0);
    EXPECT_EQ(o.iters, 7u); // untouched: the caller's default
}

TEST(BenchDriver, OptionTableRefusesBadInput)
{
    TestOpts o;
    testing::internal::CaptureStderr();
    EXPECT_EQ(parse_test({"--iters", "0"}, &o), -1);     // below the range
    EXPECT_EQ(parse_test({"--rounds", "101"}, &o), -1);  // above
    EXPECT_EQ(parse_test({"--cell-time", "x"}, &o), -1); // not a number
    EXPECT_EQ(parse_test({"--bogus"}, &o), -1);          // unknown
    EXPECT_EQ(parse_test({"stray"}, &o), -1);            // an argument
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("bad --rounds '101' (1..100)"), std::string::npos) << err;
    EXPECT_NE(err.find("unexpected argument 'stray'"), std::string::npos) << err;
    EXPECT_EQ(parse_test({"--sizes", "1", "--help"}, &o), 1);
}

// --help is data: the usage line, about, the option table, more, and the
// transports and exit statuses when tail is set.
TEST(BenchDriver, UsageListsEveryOption)
{
    bench_cmd c = {"test", "summary", nullptr, "About it.\n", test_tab, "More.\n", 0};
    std::string s = written([&](FILE *f) { bench_cmd_usage(&c, f); });
    EXPECT_EQ(s.rfind("usage: mdcom-bench test [options]\n\nAbout it.\n\n", 0), 0u) << s;
    for (const char *o : {"--sizes LIST", "--iters N", "--rounds R", "--cell-time S", "--api ",
                          "--no-api", "--help"})
        EXPECT_NE(s.find(o), std::string::npos) << o << "\n" << s;
    EXPECT_NE(s.find("\n                       second line\n"), std::string::npos) << s;
    EXPECT_NE(s.find("this text\n\nMore.\n"), std::string::npos) << s;
    EXPECT_EQ(s.find("Transports:"), std::string::npos) << s;
    c.tail = 1;
    s = written([&](FILE *f) { bench_cmd_usage(&c, f); });
    EXPECT_NE(s.find("\nTransports:\n  raw-spin "), std::string::npos) << s;
    EXPECT_NE(s.find("Exit status: 0 ok"), std::string::npos) << s;
}

// Targets: state from value and limit, in both directions; JSON shape.
TEST(BenchDriver, TargetsStateAndJson)
{
    bench_target t[3] = {};
    snprintf(t[0].name, sizeof(t[0].name), "ratio");
    t[0].limit = 1.5;
    bench_target_eval(&t[0], 1.2, 0);
    EXPECT_EQ(t[0].state, BT_MET);
    t[1].limit = 20e6;
    bench_target_eval(&t[1], 19e6, 1);
    EXPECT_EQ(t[1].state, BT_MISSED);
    bench_target_eval(&t[2], NAN, 0);
    EXPECT_EQ(t[2].state, BT_SKIPPED);
    std::string s = flat(written([&](FILE *f) {
        bench_json j;
        bench_json_init(&j, f);
        bench_json_obj_begin(&j, nullptr);
        bench_targets_json(&j, t, 3);
        bench_json_obj_end(&j);
    }));
    unsigned missed = 0;
    std::string text =
        written([&](FILE *f) { EXPECT_EQ(bench_targets_print(f, t, 3, &missed), 1u); });
    EXPECT_EQ(missed, 1u);
    EXPECT_NE(text.find("targets: 1 met, 1 missed, 1 skipped"), std::string::npos) << text;
    // one object with a "targets" array of three objects, NaN written as null
    EXPECT_EQ(s.rfind("{\"targets\":[{\"name\":\"ratio\",\"value\":1.2,\"limit\":1.5", 0), 0u) << s;
    EXPECT_NE(s.find("\"state\":\"MISSED\""), std::string::npos) << s;
    // each target says which way its limit goes (at most / at least)
    EXPECT_NE(s.find("\"limit\":2e+07,\"need\":\">=\""), std::string::npos) << s;
    EXPECT_NE(s.find("\"value\":null,\"limit\":0,\"need\":\"<=\",\"unit\":\"\",\"detail\":\"\","
                     "\"state\":\"SKIPPED\"}]}"),
              std::string::npos)
        << s;
}

// A console log longer than the first buffer is read whole.
TEST(BenchUtil, ReadFileWhole)
{
    char path[] = "/tmp/mdb-readfile-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    std::string want;
    for (int i = 0; i < 20000; i++)
        want += "line " + std::to_string(i) + "\n";
    ASSERT_EQ(write(fd, want.data(), want.size()), (ssize_t)want.size());
    close(fd);
    char *got = bench_read_file(path);
    unlink(path);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(std::string(got), want);
    free(got);
    EXPECT_EQ(bench_read_file("/nonexistent/mdb"), nullptr);
}

// A positional row (BO_ARG) takes the argument that is not an option, in any
// position; a second one is refused.
TEST(BenchDriver, PositionalArgument)
{
    struct P {
        const char *what, *json;
        int quick;
    } o = {};
    static const bench_opt tab[] = {
        BOPT(P, what, "WHAT", BO_ARG, 0, 0, nullptr, "the measurement"),
        BOPT(P, json, "json", BO_STR, 0, 0, "FILE", "json"),
        BOPT(P, quick, "quick", BO_FLAG, 1, 0, nullptr, "quick"),
        {},
    };
    std::vector<const char *> a = {"t", "--quick", "latency", "--json", "x.json"};
    ASSERT_EQ(bench_opts_parse("t", tab, &o, (int)a.size(), const_cast<char **>(a.data())), 0);
    EXPECT_STREQ(o.what, "latency");
    EXPECT_STREQ(o.json, "x.json");
    EXPECT_EQ(o.quick, 1);
    std::vector<const char *> b = {"t", "api", "latency"};
    testing::internal::CaptureStderr();
    EXPECT_EQ(bench_opts_parse("t", tab, &o, (int)b.size(), const_cast<char **>(b.data())), -1);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("unexpected argument 'latency'"),
              std::string::npos);
    std::vector<const char *> c = {"t", "--WHAT", "api"}; // not an option
    testing::internal::CaptureStderr();
    EXPECT_EQ(bench_opts_parse("t", tab, &o, (int)c.size(), const_cast<char **>(c.data())), -1);
    testing::internal::GetCapturedStderr();
}

TEST(BenchDriver, TargetNew)
{
    bench_target t;
    memset(&t, 0x55, sizeof(t));
    bench_target_new(&t, 20e6, "msgs/s", "%s stream %d ch", "mdcom-copy-poll", 1);
    EXPECT_STREQ(t.name, "mdcom-copy-poll stream 1 ch");
    EXPECT_STREQ(t.unit, "msgs/s");
    EXPECT_STREQ(t.detail, "");
    EXPECT_EQ(t.limit, 20e6);
    bench_target_new(&t, 1.5, nullptr, "ratio");
    EXPECT_STREQ(t.unit, "");
}

// One row function writes both outputs: a JSON object (numbers integral or
// not, NaN as null) and CSV lines for the members that have a metric name.
static void row_fn(bench_row *w)
{
    w->k = bench_csv_key{"s", "pipe", "rtt", 64, 0, 10, 0};
    bench_json_obj_begin(w->j, nullptr);
    bench_json_str(w->j, "transport", "pipe");
    bench_row_num(w, "p50_ns", "p50", 1234, "ns");
    bench_row_num(w, "ratio", "ratio", 1.25, "x");
    bench_row_num(w, "gone", "gone", NAN, "x");
    bench_row_num(w, nullptr, "csv_only", 7, "n");
    bench_row_num(w, "json_only", nullptr, 8, nullptr);
    bench_json_obj_end(w->j);
}

TEST(BenchRow, OneFunctionJsonAndCsv)
{
    std::string js = written([](FILE *f) {
        bench_json j;
        bench_json_init(&j, f);
        bench_row w = {&j, nullptr, {}};
        row_fn(&w);
    });
    std::string cs = written([](FILE *f) {
        bench_row w = {nullptr, f, {}};
        row_fn(&w);
    });
    EXPECT_EQ(
        flat(js),
        "{\"transport\":\"pipe\",\"p50_ns\":1234,\"ratio\":1.25,\"gone\":null,\"json_only\":8}");
    EXPECT_EQ(cs, "s,pipe,64,,rtt,10,,p50,1234,ns\ns,pipe,64,,rtt,10,,ratio,1.25,x\n"
                  "s,pipe,64,,rtt,10,,gone,,x\ns,pipe,64,,rtt,10,,csv_only,7,n\n");
}

// A child's stdout is captured whole (NUL-terminated), its exit status returned; a child that
// does not exit in time is killed.
static int child_print(void *arg)
{
    for (int i = 0; i < 3000; i++)
        printf("%s %d\n", (const char *)arg, i);
    return 3;
}
static int child_hang(void *)
{
    fclose(stdout); // EOF for the reader, then no exit
    for (;;)
        pause();
}

TEST(BenchChild, CapturesOutputAndStatus)
{
    char *out = nullptr;
    size_t len = 0;
    EXPECT_EQ(bench_child(child_print, (void *)"line", nullptr, &out, &len, -1, "t"), 3);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out[len], '\0'); // a string, too
    std::string s(out, len);
    free(out);
    EXPECT_EQ(s.rfind("line 0\nline 1\n", 0), 0u);
    EXPECT_NE(s.find("\nline 2999\n"), std::string::npos);
    testing::internal::CaptureStderr();
    EXPECT_EQ(bench_child(child_hang, nullptr, nullptr, nullptr, nullptr, 100000000, "t"), -1);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("killing it"), std::string::npos);
}
