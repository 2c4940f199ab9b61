/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h - shared pieces of mdcom-bench.
 *
 * mdcom-bench is one executable with subcommands. Each scenario is one file
 * (latency.c, throughput.c, ...) defining a `const bench_cmd bench_cmd_<name>`
 * and one line in the table of main.c; `pingpong` is a preset of latency.
 * A scenario is an option table and the code of one cell; the driver
 * (driver.c) parses the table, lists it for --help and prints and writes the
 * targets; out.c has the host header, progress line, CSV rows and output
 * files. Transports (transport.h) are one file each. The rest is plumbing:
 * clock, CPU pinning, number formatting, statistics (stats.c), JSON (json.c).
 */
#ifndef MDCOM_BENCH_H
#define MDCOM_BENCH_H

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* The firmware targets (target_qemu.c, over the QEMU link of tr_qemu.c):
 * argv[0] is the target's name, then its options. The exit status. */
int bench_target_qemu_m4(int argc, char **argv);
int bench_target_qemu_an521(int argc, char **argv);

#define BENCH_EXIT_OK 0
#define BENCH_EXIT_ERROR 1
#define BENCH_EXIT_USAGE 2
#define BENCH_EXIT_MISSED 3
/* more than BENCH_TIMEOUT_PCT % of the cells timed out (after a retry),
 * without any integrity or API error: the machine was too busy */
#define BENCH_EXIT_TIMEOUT 4
#define BENCH_TIMEOUT_PCT 5
#define BENCH_EXIT_INTERRUPTED 130
/* a prerequisite is missing (QEMU, a firmware image): "skipped" for ctest */
#define BENCH_EXIT_SKIPPED 77

/* Set by SIGINT/SIGTERM (handlers installed by bench_run_begin): measuring
 * loops stop at the next round trip and everything is torn down (no region
 * left behind in /dev/shm). */
extern volatile sig_atomic_t bench_interrupted;

/* ---- Clock and CPU --------------------------------------------------------------------------- */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One pause inside a spin loop. */
static inline void bench_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* CPUs for a two-sided benchmark: the first two of the affinity mask. */
typedef struct bench_cpus {
    int n_online;  /* sysconf(_SC_NPROCESSORS_ONLN)                    */
    int n_allowed; /* CPUs in the affinity mask at start              */
    int pinned;    /* 1 when two distinct CPUs were found             */
    int cpu[2];    /* [0] the measuring side, [1] the peer; -1 unpinned */
} bench_cpus;

/* Pin the calling process to cpu (no-op for cpu < 0). 0 or -errno. */
int bench_pin_self(int cpu);

/* ---- Errors and messages --------------------------------------------------------------------- */
/* Print "mdcom-bench: <fmt>\n" to stderr. */
void bench_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "mdcom-bench: <what>: <mdcom_strerror(rc)> (<rc>)\n". */
void bench_err_mdcom(const char *what, int rc);

/* ---- Argument parsing and formatting --------------------------------------------------------- */
/* "64", "4K", "4KiB", "1M", "1MiB", "512B": binary multiples. 0 or -1. */
int bench_parse_size(const char *s, uint64_t *out);
/* Comma separated sizes (what NULL: bytes) or counts of `what` (messages
 * name it: "channel count '64' out of range 1..32"), at most max entries.
 * Count or -1 (message printed). */
int bench_parse_size_list(const char *s, uint32_t *out, int max, uint32_t lo, uint32_t hi,
                          const char *what);
/* Unsigned integer with optional k/M suffix (decimal: 100k = 100000). */
int bench_parse_count(const char *s, uint64_t *out);

/* "64 B", "4 KiB", "1 MiB", "1536 B". buf >= 16 bytes. */
const char *bench_fmt_size(char *buf, size_t len, uint64_t bytes);
/* A duration in ns with a unit: "812 ns", "12.3 us", "1.25 ms", "2.00 s". */
const char *bench_fmt_ns(char *buf, size_t len, double ns);

/* Index of v in a[0..n), or -1. */
int bench_idx_u32(const uint32_t *a, int n, uint32_t v);
/* A whole file as a malloc'ed string (a console log), or NULL. */
char *bench_read_file(const char *path);

/* A name unique to this process and call: "<prefix>-<pid>-<n>". */
void bench_unique_name(char *buf, size_t len, const char *prefix);

/* ---- Statistics (stats.c) -------------------------------------------------------------------- */
typedef struct bench_stats {
    size_t n;
    uint64_t min, p50, p90, p99, p999, max; /* ns, nearest-rank percentiles */
    double mean, stddev;                    /* ns, sample standard deviation */
} bench_stats;

/* Sort samples in place (ascending) and summarise them. n may be 0. */
void bench_stats_compute(uint64_t *samples, size_t n, bench_stats *out);
/* Nearest-rank percentile of sorted samples (0 < p <= 100). */
uint64_t bench_percentile(const uint64_t *sorted, size_t n, double p);

/* ---- JSON writer (json.c): streaming, handles commas and nesting. ---------------------------- */
#define BENCH_JSON_DEPTH 16
typedef struct bench_json {
    FILE *f;
    int depth;
    int count[BENCH_JSON_DEPTH]; /* members written at each level */
} bench_json;

void bench_json_init(bench_json *j, FILE *f);
/* key is NULL inside arrays (and for the top level value). */
void bench_json_obj_begin(bench_json *j, const char *key);
void bench_json_obj_end(bench_json *j);
void bench_json_arr_begin(bench_json *j, const char *key);
void bench_json_arr_end(bench_json *j);
void bench_json_str(bench_json *j, const char *key, const char *val); /* NULL -> null */
void bench_json_u64(bench_json *j, const char *key, uint64_t val);
void bench_json_i64(bench_json *j, const char *key, int64_t val);
void bench_json_dbl(bench_json *j, const char *key, double val); /* NaN/inf -> null */
void bench_json_bool(bench_json *j, const char *key, int val);
/* Write a bench_stats as an object with *_ns members. */
void bench_json_stats(bench_json *j, const char *key, const bench_stats *s);

/* ---- The scenario driver (driver.c): options as a table, targets ----------------------------- */
enum bench_opt_kind {
    BO_FLAG, /* int field = lo                 */
    BO_STR,  /* const char * field = the text  */
    BO_U64,  /* uint64_t field, range lo..hi   */
    BO_U32,  /* uint32_t field, range lo..hi   */
    BO_DBL,  /* double field, range lo..hi     */
    BO_ARG,  /* const char * field = the next argument that is not an option */
};
typedef struct bench_opt {
    const char *name; /* the long option, without "--"                    */
    int kind;         /* enum bench_opt_kind                              */
    size_t off;       /* offsetof(the scenario's options, the field)      */
    double lo, hi;    /* the accepted range; BO_FLAG: the value stored    */
    const char *arg;  /* placeholder for --help ("LIST", "N", "S"), or NULL */
    const char *help; /* for --help; '\n' separates lines               */
} bench_opt;
#define BENCH_MAX_OPTS 40
/* One table row: BOPT(options type, field, "name", kind, lo, hi, arg, help) */
#define BOPT(type, field, nm, kind, lo, hi, arg, help)                                             \
    {                                                                                              \
        nm, kind, offsetof(type, field), lo, hi, arg, help                                         \
    }
/* Parse argv[1..] into o by the table (ended by a row with name NULL).
 * 0 ok, 1 --help asked, -1 usage error (printed). */
int bench_opts_parse(const char *cmd, const bench_opt *tab, void *o, int argc, char **argv);
/* The options every scenario has, as table rows: BENCH_OUT_OPTS needs the
 * fields quick, json, csv of the options type, BENCH_TIMEOUT_OPT timeout_s,
 * BENCH_COMMON_OPTS all of them and trs_s, cell_time. */
#define BENCH_OUT_OPTS(type)                                                                       \
    BOPT(type, quick, "quick", BO_FLAG, 1, 0, NULL, "CI smoke run: a few seconds"),                \
        BOPT(type, json, "json", BO_STR, 0, 0, "FILE",                                             \
             "results as JSON ('-' = stdout, text to stderr)"),                                    \
        BOPT(type, csv, "csv", BO_STR, 0, 0, "FILE", "results as CSV rows ('-' = stdout)")
#define BENCH_TIMEOUT_OPT(type)                                                                    \
    BOPT(type, timeout_s, "timeout", BO_DBL, 1e-3, 3600, "S",                                      \
         "a wait longer than this is an error (default 5)")
#define BENCH_COMMON_OPTS(type)                                                                    \
    BOPT(type, trs_s, "transports", BO_STR, 0, 0, "LIST",                                          \
         "comma separated; 'all': every one, '-NAME' leaves one out"),                             \
        BOPT(type, cell_time, "cell-time", BO_DBL, 0, 1e6, "S",                                    \
             "at most S seconds per cell (0 = no limit)"),                                         \
        BENCH_TIMEOUT_OPT(type), BENCH_OUT_OPTS(type)

/* A subcommand: `bench_cmd_<name>`, one line in main.c's table. */
typedef struct bench_cmd {
    const char *name;
    const char *summary; /* one line for `mdcom-bench --help` */
    /* argv[0] is the subcommand name. Returns the process exit code:
     * 0 ok, 1 integrity or API error, 2 usage error, 3 a target missed
     * (only when the subcommand was asked to be strict). */
    int (*main)(int argc, char **argv);
    /* `mdcom-bench NAME --help`: the usage line, about, the option table,
     * more, then (tail > 0) the transports (need_msg = tail - 1, as
     * bench_parse_transports) and the exit statuses */
    const char *about;
    const bench_opt *opts;
    const char *more;
    int tail;
} bench_cmd;
#define BENCH_CMD(var, nm, sum, mainfn, ...)                                                       \
    const bench_cmd bench_cmd_##var = {.name = nm, .summary = sum, .main = mainfn, __VA_ARGS__}
extern const bench_cmd bench_cmd_pingpong, bench_cmd_api, bench_cmd_latency, bench_cmd_blocks,
    bench_cmd_throughput, bench_cmd_thread_metric, bench_cmd_suite, bench_cmd_events,
    bench_cmd_reap;
/* The full --help of c. */
void bench_cmd_usage(const bench_cmd *c, FILE *out);
/* What a scenario does with its parse result: 1 (--help) prints usage and
 * gives BENCH_EXIT_OK, -1 a hint and BENCH_EXIT_USAGE; 0 gives -1: go on. */
int bench_parsed(int prc, const bench_cmd *c);

/* A target computed from the run: value against limit. */
enum { BT_MET, BT_MISSED, BT_SKIPPED };
typedef struct bench_target {
    char name[96];
    char detail[160];
    char unit[8]; /* "" = a ratio (printed "1.23x"), else the unit of value */
    double value, limit;
    int state;
    int at_least; /* 1: MET when value >= limit; 0: when value <= limit */
} bench_target;
/* state from value (NaN: not measured = skipped); at_least: MET when
 * value >= limit, else when value <= limit. */
void bench_target_eval(bench_target *t, double value, int at_least);
/* t zeroed, with limit, unit (NULL: a ratio) and the name from fmt. */
bench_target *bench_target_new(bench_target *t, double limit, const char *unit, const char *fmt,
                               ...) __attribute__((format(printf, 4, 5)));
/* Print the targets and their counts; returns met, sets *missed. */
unsigned bench_targets_print(FILE *out, const bench_target *tg, unsigned n, unsigned *missed);
void bench_targets_json(bench_json *j, const bench_target *tg, unsigned n);

/* ---- Shared pieces of the scenario subcommands (out.c) --------------------------------------- */
typedef struct bench_host {
    char cpu_model[128];
    char kernel[160];
    char machine[72];
    bench_cpus cpus;
    double timer_ns;
    double loadavg; /* 1-minute load average at the start, -1 unknown */
    char date[32];  /* UTC, "YYYY-MM-DD HH:MM UTC" */
} bench_host;

void bench_host_detect(bench_host *h);
/* The 1-minute load average now, -1 unknown. */
double bench_loadavg(void);
/* 1 when timeouts of cells are more than BENCH_TIMEOUT_PCT % of them. */
static inline int bench_timeouts_too_many(unsigned cells, unsigned timeouts)
{
    return (uint64_t)timeouts * 100u > (uint64_t)cells * BENCH_TIMEOUT_PCT;
}

/* A cell's result, the same word in the text, the JSON and the report:
 * "n/a", "INTEGRITY" (a message lost, damaged or repeated: a bug),
 * "ERROR" (a call failed), "TIMEOUT" (a wait ran past --timeout, and again
 * when retried: a busy machine), else "ok". */
const char *bench_cell_status(int na, unsigned integrity, unsigned failures, unsigned timeouts);

/* One attempt at a cell, as bench_retry sees it. */
typedef struct bench_try {
    unsigned timeouts; /* waits past the timeout (bench_timeouts.n)        */
    int worse;         /* n/a, an integrity error or a failure: no retry   */
    double load;       /* the load average when the attempt started        */
    char why[112];     /* what timed out (bench_timeouts.why)              */
} bench_try;
/* attempt(arg, timeout_s, t) runs a cell and fills t; one that timed out
 * and nothing worse runs once more with twice the timeout (label names the
 * cell in the message saying so). why: what timed out and at what load, in
 * each attempt ("" when none did). The attempts made. */
int bench_retry(void (*attempt)(void *arg, double timeout_s, bench_try *t), void *arg,
                double timeout_s, const char *label, char *why, size_t len);

/* Test-only fault injection, from the environment: MDCOM_BENCH_INJECT=
 * KIND:TRANSPORT:SIZE (KIND corrupt: one message of the cell is damaged;
 * stall: side B stops answering past the timeout, in every attempt).
 * 1 for the first cell of that transport and size for which it is asked
 * (once per kind and process), else 0. */
int bench_inject(const char *kind, const char *transport, uint64_t size);

void bench_host_json(bench_json *j, const char *key, const bench_host *h);

/* A progress line on stderr ("\r...") when stderr is a terminal, else one
 * line every 10 s at most. bench_progress_end() clears it. */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Announce that `steps` bench_progress() calls follow: each line then ends in
 * "[k/steps, N s left]" (the estimate from the time per step so far). */
void bench_progress_plan(uint64_t steps);
void bench_progress_end(void);

/* CSV in long format, the same columns for every scenario:
 * scenario,transport,size,channels,mode,n,total_bytes,metric,value,unit
 * (empty fields where not applicable: NULL strings, 0 numbers). */
typedef struct bench_csv_key {
    const char *scenario, *transport, *mode;
    uint64_t size, channels, n, total;
} bench_csv_key;
void bench_csv_header(FILE *f);
void bench_csv_row(FILE *f, const bench_csv_key *k, const char *metric, double value,
                   const char *unit);

/* Open an output file for --json/--csv: "-" is stdout. NULL after printing
 * why. */
FILE *bench_open_out(const char *path, const char *cmd);
void bench_close_out(FILE *f, const char *path, unsigned *failures);

/* One writer for a scenario's result rows, JSON and CSV alike: the
 * scenario's rows function writes each row once, and runs twice: with j set
 * (each row an object of the JSON array) and with csv set (j NULL: the
 * bench_json_* calls do nothing; each metric a CSV line keyed by k). */
typedef struct bench_row {
    bench_json *j;
    FILE *csv;
    bench_csv_key k; /* the row's CSV key (set by the rows function) */
} bench_row;
/* A number: JSON member key (when not NULL; an integer when integral) and,
 * when metric is not NULL, a CSV line (metric, v, unit). */
void bench_row_num(bench_row *w, const char *key, const char *metric, double v, const char *unit);
/* Statistics of samples in ns: the JSON object key (bench_json_stats) and
 * the CSV lines min, p50, p90, p99, p99.9, max, mean, stddev (unit ns). */
void bench_row_stats(bench_row *w, const char *key, const bench_stats *s);

/* One run of a scenario subcommand, from bench_run_begin to bench_run_end:
 * what every scenario writes the same way. The scenario fills in cmd, json,
 * csv, quick, and its writers: the members of the JSON object's "config"
 * (after "quick"), its result rows (JSON array rows_key, default "results",
 * and CSV; the CSV header is written here) and further JSON members. */
typedef struct bench_run {
    const char *cmd, *json, *csv;
    int quick;
    /* members of "config" after "quick" */
    void (*json_config)(bench_json *j, void *arg);
    void (*rows)(bench_row *w, void *arg);
    const char *rows_key;
    void (*json_body)(bench_json *j, void *arg);
    void *arg;
    /* not pinned: the scenario starts emulators, which would inherit the pin */
    int no_pin;
    /* set by bench_run_begin */
    FILE *out, *jf, *cf; /* text (stderr when JSON or CSV go to stdout), outputs */
    bench_host h;
    uint64_t t0;
    /* counted by the scenario: errors, and cells that ran (not n/a) and
     * those of them that timed out even when retried */
    unsigned integrity, failures;
    unsigned cells, timeouts;
} bench_run;

/* The bench_run of scenario name, from its options opts (members json, csv
 * and quick); the rest (its writers, arg) as designated initializers. */
#define BENCH_RUN(name, opts, ...)                                                                 \
    {                                                                                              \
        .cmd = (name), .json = (opts).json, .csv = (opts).csv, .quick = (opts).quick, __VA_ARGS__  \
    }

/* Open --json/--csv, pick the text stream, install the signal handlers,
 * detect and print the host header, pin this process to the measuring CPU.
 * 0, or BENCH_EXIT_USAGE when an output cannot be opened (printed). */
int bench_run_begin(bench_run *r);
/* The end of every scenario: the error line, targets (print, JSON), JSON
 * and CSV, and the exit status: rc when non-zero (interrupted, ...), else 1
 * on an integrity or other error, BENCH_EXIT_TIMEOUT when too many cells
 * timed out, 3 on a missed target when strict, else 0. */
int bench_run_end(bench_run *r, int rc, const bench_target *tg, unsigned ntg, int strict);

/* Size lists of log2 steps lo..hi (both powers of two). Count. */
int bench_log2_sizes(uint32_t *out, int max, uint32_t lo, uint32_t hi);

#endif /* MDCOM_BENCH_H */
