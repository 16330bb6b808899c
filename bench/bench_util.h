/*
 * bench_util.h - what the in-process benchmarks share: a monotonic clock
 * and a fixed-seed pseudo-random sequence (xorshift64: reproducible runs,
 * not randomness anyone relies on).
 */
#ifndef SK_BENCH_UTIL_H
#define SK_BENCH_UTIL_H

#include <stdint.h>
#include <time.h>

static inline double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t bench_rng = 0x9E3779B97F4A7C15ULL;
static inline uint64_t bench_rand(void)
{
    bench_rng ^= bench_rng << 13;
    bench_rng ^= bench_rng >> 7;
    bench_rng ^= bench_rng << 17;
    return bench_rng;
}

#endif
