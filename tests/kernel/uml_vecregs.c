/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * uml_vecregs - does the kernel keep each thread's vector registers across
 * context switches? Part of uml_guest (tests/kernel).
 *
 * Several threads in two processes each load every vector register (ymm0-15
 * with AVX, zmm0-31 with AVX-512) with a pattern of their own, give the CPU
 * away inside the same asm statement (sched_yield, then a spin long enough
 * for the timer to preempt), and store the registers back. Threads of one
 * process share one host process under User-Mode Linux, so a kernel that
 * restores only the FXSAVE area (x87 + xmm) hands one thread the upper
 * halves of another's registers; this check sees that as a mismatch. A
 * round counts as "switched" when another thread made progress during it:
 * the check fails unless some rounds were.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "uml_vecregs.h"

#define THREADS 2 /* per process; two processes */
#define ROUNDS 400
#define SPIN 200000L

enum width { W_NONE, W_YMM, W_ZMM };

static enum width width;
static atomic_long progress;

struct worker {
    int id;
    long rounds, switched, mismatches;
    char first_bad[160];
};

static void pattern(uint8_t *buf, size_t n, int id, long round)
{
    uint32_t x = 0x9E3779B9u * (uint32_t)(id + 1) ^ (uint32_t)round * 0x85EBCA6Bu;
    for (size_t i = 0; i < n; i += 4) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        memcpy(buf + i, &x, 4);
    }
}

#define YL(i) "vmovdqu " #i "*32(%[in]), %%ymm" #i "\n\t"
#define YS(i) "vmovdqu %%ymm" #i ", " #i "*32(%[out])\n\t"
#define ZL(i) "vmovdqu64 " #i "*64(%[in]), %%zmm" #i "\n\t"
#define ZS(i) "vmovdqu64 %%zmm" #i ", " #i "*64(%[out])\n\t"
/* sched_yield, then spin: the registers stay loaded all the while */
#define GIVE_AWAY                                                                                  \
    "mov %[nr], %%eax\n\t"                                                                         \
    "syscall\n\t"                                                                                  \
    "mov %[spin], %%rdx\n"                                                                         \
    "1:\n\t"                                                                                       \
    "dec %%rdx\n\t"                                                                                \
    "jnz 1b\n\t"

__attribute__((target("avx"))) static void ymm_round(const uint8_t *in, uint8_t *out)
{
    __asm__ volatile(YL(0) YL(1) YL(2) YL(3) YL(4) YL(5) YL(6) YL(7) YL(8) YL(9) YL(10) YL(11)
                         YL(12) YL(13) YL(14) YL(15) GIVE_AWAY YS(0) YS(1) YS(2) YS(3) YS(4) YS(5)
                             YS(6) YS(7) YS(8) YS(9) YS(10) YS(11) YS(12) YS(13) YS(14) YS(15)
                     :
                     : [in] "r"(in), [out] "r"(out), [nr] "i"(SYS_sched_yield), [spin] "i"(SPIN)
                     : "rax", "rcx", "rdx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
                       "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
                       "xmm14", "xmm15");
}

__attribute__((target("avx512f"))) static void zmm_round(const uint8_t *in, uint8_t *out)
{
    __asm__ volatile(
        ZL(0) ZL(1) ZL(2) ZL(3) ZL(4) ZL(5) ZL(6) ZL(7) ZL(8) ZL(9) ZL(10) ZL(11) ZL(12) ZL(13)
            ZL(14) ZL(15) ZL(16) ZL(17) ZL(18) ZL(19) ZL(20) ZL(21) ZL(22) ZL(23) ZL(24) ZL(25)
                ZL(26) ZL(27) ZL(28) ZL(29) ZL(30) ZL(31) GIVE_AWAY ZS(0) ZS(1) ZS(2) ZS(3) ZS(4)
                    ZS(5) ZS(6) ZS(7) ZS(8) ZS(9) ZS(10) ZS(11) ZS(12) ZS(13) ZS(14) ZS(15) ZS(16)
                        ZS(17) ZS(18) ZS(19) ZS(20) ZS(21) ZS(22) ZS(23) ZS(24) ZS(25) ZS(26) ZS(27)
                            ZS(28) ZS(29) ZS(30) ZS(31)
        :
        : [in] "r"(in), [out] "r"(out), [nr] "i"(SYS_sched_yield), [spin] "i"(SPIN)
        : "rax", "rcx", "rdx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
          "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
          "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25",
          "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31");
}

static void *work(void *arg)
{
    struct worker *w = arg;
    _Alignas(64) uint8_t in[32 * 64], out[32 * 64];
    size_t n = width == W_ZMM ? 32 * 64 : 16 * 32;
    for (long r = 0; r < ROUNDS; r++) {
        pattern(in, n, w->id, r);
        memset(out, 0, n);
        long before = atomic_load(&progress);
        if (width == W_ZMM)
            zmm_round(in, out);
        else
            ymm_round(in, out);
        /* more than our own increment since the load: another thread ran */
        if (atomic_fetch_add(&progress, 1) != before)
            w->switched++;
        w->rounds++;
        if (memcmp(in, out, n) != 0) {
            if (!w->mismatches) {
                size_t i = 0;
                while (in[i] == out[i])
                    i++;
                snprintf(w->first_bad, sizeof(w->first_bad),
                         "round %ld: byte %zu of the register file (%s%zu)", r, i,
                         width == W_ZMM ? "zmm" : "ymm", i / (width == W_ZMM ? 64 : 32));
            }
            w->mismatches++;
        }
    }
    return NULL;
}

/* Runs THREADS workers in this process; the totals into *t. */
static void run_threads(int base_id, struct worker *t)
{
    pthread_t th[THREADS];
    struct worker w[THREADS];
    memset(w, 0, sizeof(w));
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < THREADS; i++) {
        w[i].id = base_id + i;
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        t->rounds += w[i].rounds;
        t->switched += w[i].switched;
        t->mismatches += w[i].mismatches;
        if (w[i].mismatches && !t->first_bad[0])
            snprintf(t->first_bad, sizeof(t->first_bad), "thread %d %.140s", w[i].id,
                     w[i].first_bad);
    }
}

static enum width detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
        return W_NONE;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) /* SSE and AVX state enabled */
        return W_NONE;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b & bit_AVX512F) && (lo & 0xe0) == 0xe0) /* opmask, ZMM_Hi256, Hi16_ZMM */
        return W_ZMM;
    return W_YMM;
}

int vecregs_check(char *msg, size_t len)
{
    width = detect();
    if (width == W_NONE) {
        snprintf(msg, len, "no AVX on this CPU: nothing beyond the FXSAVE area to check");
        return 1;
    }
    /* the child's threads live in another host process than ours */
    int pfd[2];
    if (pipe(pfd) != 0) {
        snprintf(msg, len, "pipe failed");
        return -1;
    }
    pid_t child = fork();
    if (child == 0) {
        struct worker t;
        close(pfd[0]);
        run_threads(THREADS, &t);
        (void)!write(pfd[1], &t, sizeof(t));
        _exit(0);
    }
    close(pfd[1]);
    struct worker mine, theirs;
    memset(&theirs, 0, sizeof(theirs));
    run_threads(0, &mine);
    ssize_t got = read(pfd[0], &theirs, sizeof(theirs));
    close(pfd[0]);
    int st = 0;
    waitpid(child, &st, 0);
    if (child < 0 || got != (ssize_t)sizeof(theirs) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(msg, len, "the forked half did not report (fork %d, read %zd, status 0x%x)",
                 (int)child, got, st);
        return -1;
    }
    long rounds = mine.rounds + theirs.rounds, switched = mine.switched + theirs.switched;
    long bad = mine.mismatches + theirs.mismatches;
    const char *reg = width == W_ZMM ? "zmm0-31" : "ymm0-15";
    if (bad) {
        snprintf(msg, len, "%s: %ld of %ld rounds lost register contents (%ld switched); first: %s",
                 reg, bad, rounds, switched, mine.first_bad[0] ? mine.first_bad : theirs.first_bad);
        return -1;
    }
    if (switched == 0) {
        snprintf(msg, len,
                 "%s: no round had another thread run inside it (%ld rounds): nothing was tested",
                 reg, rounds);
        return -1;
    }
    snprintf(
        msg, len,
        "%s kept in %ld rounds of %d threads in 2 processes, %ld with another thread run inside",
        reg, rounds, 2 * THREADS, switched);
    return 0;
}
