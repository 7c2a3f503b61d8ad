/*
 * test_workers_cpu.c -- the crowd's pool keeps its threads off the updating thread's CPU (workers.c,
 * on_workers_wake; Linux): after a wake from a thread pinned to CPU a, every piece the pool's thread
 * runs runs on another CPU, on a thread not allowed a; the caller moved to CPU b, the next wake moves the pool's thread off b;
 * a wake from the same CPU again changes nothing (no system call: the count of moves stays); a pool
 * made by a thread allowed one CPU only is never moved. Every slot of every job still runs once.
 * Skipped where the process has fewer than two CPUs, or off Linux.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "minitest.h"
#include "crowd.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>

enum { SLOTS = 200 };

/* each slot: a short spin (so that the pool's thread surely takes pieces), counted once; the CPU of
 * every piece the pool's thread (worker 1) runs recorded */
typedef struct cpu_job {
    unsigned char hits[SLOTS];
    atomic_int pieces1;        /* pieces run by worker 1 */
    int caller_cpu;
    atomic_int may_caller;     /* worker 1's pieces on the caller's CPU or on a thread allowed it */
} cpu_job;

static void spin_us(double us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) * 1e-3 < us);
}

static void cpu_fn(void *ctx, int w, uint32_t begin, uint32_t end)
{
    cpu_job *j = ctx;
    if (w == 1) {
        int c = sched_getcpu();
        atomic_fetch_add(&j->pieces1, 1);
        cpu_set_t mine;
        CPU_ZERO(&mine);
        if (c == j->caller_cpu || pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0 ||
            CPU_ISSET(j->caller_cpu, &mine))
            atomic_fetch_add(&j->may_caller, 1);
    }
    for (uint32_t i = begin; i < end; i++) {
        spin_us(10);
        j->hits[i]++;
    }
}

static int pin_self(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

/* jobs after a wake from the caller's CPU until the pool's thread has run pieces (up to 50 rounds):
 * its pieces on the caller's CPU or allowed it (returned), every slot run once (*wrong counts the
 * others) */
static int pieces_on(on_workers *p, int caller_cpu, int *pieces, int *wrong)
{
    static cpu_job j;
    memset(&j, 0, sizeof j);
    j.caller_cpu = caller_cpu;
    for (int round = 0; round < 50 && atomic_load(&j.pieces1) == 0; round++) {
        on_workers_wake(p);
        memset(j.hits, 0, sizeof j.hits);
        on_workers_run(p, SLOTS, 4, cpu_fn, &j);
        for (int i = 0; i < SLOTS; i++) *wrong += j.hits[i] != 1;
    }
    *pieces = atomic_load(&j.pieces1);
    return atomic_load(&j.may_caller);
}

static void test_keep_off(void)
{
    cpu_set_t all;
    CPU_ZERO(&all); /* (MemorySanitizer does not see the system call fill it) */
    CHECK_EQ_INT(pthread_getaffinity_np(pthread_self(), sizeof all, &all), 0);
    int a = -1, b = -1;
    for (int c = 0; c < 1024 && b < 0; c++)
        if (CPU_ISSET(c, &all)) {
            if (a < 0) a = c;
            else b = c;
        }
    if (b < 0) {
        printf("keep off: one CPU, skipped\n");
        return;
    }
    on_workers *p = NULL;
    CHECK_EQ_INT(on_workers_create(2, &p), 0);
    CHECK_EQ_INT((int)on_workers_moves(p), 0);
    int wrong = 0, pieces = 0;
    CHECK_EQ_INT(pin_self(a), 0);
    CHECK_EQ_INT(pieces_on(p, a, &pieces, &wrong), 0);
    CHECK(pieces > 0);
    CHECK_EQ_INT((int)on_workers_moves(p), 1);
    printf("keep off: caller on CPU %d, the pool's thread ran %d pieces, none there\n", a, pieces);
    CHECK_EQ_INT(pin_self(b), 0);
    CHECK_EQ_INT(pieces_on(p, b, &pieces, &wrong), 0);
    CHECK(pieces > 0);
    CHECK_EQ_INT((int)on_workers_moves(p), 2);
    CHECK_EQ_INT(pieces_on(p, b, &pieces, &wrong), 0); /* the same CPU: not moved again */
    CHECK_EQ_INT((int)on_workers_moves(p), 2);
    printf("keep off: caller on CPU %d, the pool's thread ran %d pieces, none there; moves %u\n", b, pieces,
           on_workers_moves(p));
    on_workers_destroy(p);
    CHECK_EQ_INT(wrong, 0);

    /* a pool made by a thread allowed one CPU: its threads have nowhere else to go */
    CHECK_EQ_INT(pin_self(a), 0);
    CHECK_EQ_INT(on_workers_create(2, &p), 0);
    int there = pieces_on(p, a, &pieces, &wrong);
    CHECK(pieces > 0);
    CHECK_EQ_INT(there, pieces); /* every piece on CPU a: the only one it was made with */
    CHECK_EQ_INT((int)on_workers_moves(p), 0);
    on_workers_destroy(p);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);
}
#endif

#ifdef __linux__
TEST_MAIN("workers_cpu", { test_keep_off(); })
#else
TEST_MAIN("workers_cpu", { printf("keep off: not Linux, skipped\n"); })
#endif
