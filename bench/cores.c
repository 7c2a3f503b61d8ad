/*
 * bench/cores.c -- are this machine's CPUs independent cores? (make bench-crowd-scaling)
 * A loop of integer work that touches no memory and keeps one core's integer units busy is timed on one CPU alone, then on CPUs 0 and 1
 * at once (two threads, each pinned). Independent cores give the same time both ways; two
 * hardware threads of one core (SMT), or virtual CPUs the host runs on one core, give about
 * twice the time each: then "two threads against one" cannot reach 2x for any program, and the
 * crowd's scaling is read against what two independent copies of it reach (bench/crowd_scaling.sh).
 * Prints "cores: alone A ms, together B ms each, together/alone R" (the fastest of 3 passes; about
 * 0.5 s). The host can move virtual CPUs between its cores from one minute to the next: run it beside
 * each measurement, not once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define ROUNDS 50000000ull

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct leg {
    int cpu;
    double ms;
    uint64_t sum;
};

static void *run(void *arg)
{
    struct leg *l = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(l->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) l->cpu = -1;
    /* four independent chains of adds and rotates: enough to fill one core's integer units, so two
     * threads sharing a core slow each other while two cores do not */
    uint64_t a = 1, b = 2, c = 3, d = 4;
    double t = now();
    for (uint64_t i = 0; i < ROUNDS; i++) {
        a = (a + i) ^ (a >> 7);
        b = (b + i) ^ (b << 9);
        c = (c - i) ^ (c >> 11);
        d = (d - i) ^ (d << 5);
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    }
    l->ms = (now() - t) * 1e3;
    l->sum = a ^ b ^ c ^ d;
    return NULL;
}

int main(void)
{
    double alone = 1e30, together = 1e30;
    uint64_t keep = 0;
    for (int pass = 0; pass < 3; pass++) {
        struct leg a = {0, 0, 0};
        run(&a);
        if (a.cpu < 0) {
            printf("cores: cannot pin a thread to CPU 0, skipped\n");
            return 0;
        }
        if (a.ms < alone) alone = a.ms;
        struct leg b[2] = {{0, 0, 0}, {1, 0, 0}};
        pthread_t th;
        if (pthread_create(&th, NULL, run, &b[1]) != 0) {
            printf("cores: no second thread, skipped\n");
            return 0;
        }
        run(&b[0]);
        pthread_join(th, NULL);
        if (b[1].cpu < 0) {
            printf("cores: cannot pin a thread to CPU 1 (one CPU?), skipped\n");
            return 0;
        }
        double each = b[0].ms > b[1].ms ? b[0].ms : b[1].ms;
        if (each < together) together = each;
        keep ^= a.sum ^ b[0].sum ^ b[1].sum;
    }
    printf("cores: alone %.1f ms, together %.1f ms each, together/alone %.2f%s (%llx)\n", alone, together,
           together / alone, together / alone > 1.5 ? ": the CPUs share a core" : "", (unsigned long long)(keep & 0xff));
    return 0;
}
