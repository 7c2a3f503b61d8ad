/*
 * bench/jitter.c -- how often does this machine stall a thread that computes? (make bench-jitter)
 * One fixed piece of work (integer arithmetic in registers: no memory, no system call, calibrated to
 * CHUNK_MS of thread CPU at its fastest) is timed again and again for SECONDS, on the thread's CPU clock
 * and the wall clock. A machine that gives the thread its core times every piece alike; a virtual CPU the
 * host takes away mid-piece (or slows by its other guests on the same core) shows pieces several times
 * longer, and, since the guest cannot tell, on the thread's CPU clock too. A frame budget cannot bound
 * those stalls: they are the floor under any frame-time tail measured here (bench/frames.lua, whose
 * --trace counts the frames over that held a call of counted work at 5x its median pace: "slowed").
 * Prints the pieces' thread CPU p50 / p99.9 / max, how many took 0.5 ms and 2 ms more than the
 * median, and that a second of work. Usage: jitter [SECONDS (10)] [CHUNK_MS (0.5)].
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double clock_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static uint64_t work(uint64_t rounds, uint64_t seed)
{
    uint64_t a = seed, b = seed + 1;
    for (uint64_t i = 0; i < rounds; i++) {
        a = (a + i) ^ (a >> 7);
        b = (b - i) ^ (b << 9);
        __asm__ volatile("" : "+r"(a), "+r"(b));
    }
    return a ^ b;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10, chunk = argc > 2 ? atof(argv[2]) : 0.5;
    if (!(secs > 0 && secs <= 3600 && chunk > 0.01 && chunk <= 100)) {
        fprintf(stderr, "usage: jitter [SECONDS 0..3600] [CHUNK_MS 0.01..100]\n");
        return 2;
    }
    uint64_t keep = 0, rounds = 100000;
    double best = 1e30; /* calibrate: the fastest of 20 pieces of `rounds` */
    for (int i = 0; i < 20; i++) {
        double t = clock_ms(CLOCK_THREAD_CPUTIME_ID);
        keep ^= work(rounds, (uint64_t)i);
        t = clock_ms(CLOCK_THREAD_CPUTIME_ID) - t;
        if (t < best) best = t;
    }
    rounds = (uint64_t)(rounds * chunk / (best > 1e-6 ? best : 1e-6));
    if (rounds < 1) rounds = 1;
    size_t cap = (size_t)(secs * 1e3 / chunk * 1.5) + 16, n = 0;
    double *cpu = malloc(cap * sizeof *cpu), wmax = 0;
    if (!cpu) {
        fprintf(stderr, "jitter: out of memory\n");
        return 1;
    }
    double end = clock_ms(CLOCK_MONOTONIC) + secs * 1e3, spent = 0;
    while (n < cap && clock_ms(CLOCK_MONOTONIC) < end) {
        double w = clock_ms(CLOCK_MONOTONIC), t = clock_ms(CLOCK_THREAD_CPUTIME_ID);
        keep ^= work(rounds, n);
        t = clock_ms(CLOCK_THREAD_CPUTIME_ID) - t;
        w = clock_ms(CLOCK_MONOTONIC) - w;
        if (w > wmax) wmax = w;
        cpu[n++] = t;
        spent += t;
    }
    qsort(cpu, n, sizeof *cpu, cmp);
    double p50 = cpu[n / 2];
    size_t over05 = 0, over2 = 0;
    for (size_t i = 0; i < n; i++) {
        if (cpu[i] > p50 + 0.5) over05++;
        if (cpu[i] > p50 + 2) over2++;
    }
    printf("jitter: %zu pieces of %.2f ms, thread CPU p50 / p99.9 / max %.3f / %.3f / %.2f ms (wall max %.2f); "
           "%zu over p50 + 0.5 ms, %zu over p50 + 2 ms: %.2f and %.2f a second of work (%x)\n",
           n, chunk, p50, cpu[(size_t)(0.999 * (double)(n - 1))], cpu[n - 1], wmax, over05, over2,
           over05 / (spent * 1e-3), over2 / (spent * 1e-3), (unsigned)(keep & 0xf));
    free(cpu);
    return 0;
}
