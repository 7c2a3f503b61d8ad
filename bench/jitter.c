/*
 * bench/jitter.c -- how often does this machine stall a thread that computes? (make bench-jitter)
 * One fixed piece of work (integer arithmetic in registers: no memory, no system call, calibrated to
 * CHUNK_MS of thread CPU at its fastest) is timed again and again on the thread's CPU clock and the
 * wall clock, three ways taken in turns (2 s each, round after round, so that the host's moods fall on
 * all three alike):
 *   alone   -- pieces back to back, the machine's other cores idle;
 *   paced   -- as a 60 fps game's frame: 4 ms of pieces, then a sleep until 16.7 ms after the frame
 *              began (the thread's core idle between frames, as every game's is);
 *   beside  -- back to back while a second thread of this process spins on another core (a streamer's
 *              worker decoding a tile, a crowd's pool).
 * A machine that gives the thread its core times every piece alike; a virtual CPU the host takes away
 * mid-piece (or slows by its other guests on the same core) shows pieces several times longer, and, since
 * the guest cannot tell, on the thread's CPU clock too. A frame budget cannot bound those stalls: they
 * are the floor under any frame-time tail measured here (bench/frames.lua, whose --trace counts the
 * frames over that held a call of counted work at 5x its median pace: "slowed").
 * Prints, for each way, the pieces' thread CPU p50 / p99.9 / max, how many took 0.5 ms and 2 ms more
 * than the median and that a second of work, and each way's rate over alone's.
 * With COLD_SECONDS > 0, then: 64 MB written, left untouched for COLD_SECONDS, and read a byte a page (every
 * page resident: no fault in the guest), against the same read at once after: what memory left idle (a
 * tile nobody flew through for a minute, the collector's sweep of old objects) costs the thread that
 * touches it again, on a host that reclaims or unmaps a guest's idle memory behind its back.
 * Usage: jitter [SECONDS (10): each way's wall seconds] [CHUNK_MS (0.5)] [COLD_SECONDS (0: not run)].
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The second thread: spins while `on`, else waits on the condition (no wake-ups of its own); `on` is
 * written under mu and read without it while spinning. */
typedef struct spinner {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int on;
    int quit;
} spinner;

static void *spin_main(void *arg)
{
    spinner *s = arg;
    uint64_t x = 1;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!atomic_load(&s->on) && !s->quit) pthread_cond_wait(&s->cv, &s->mu);
        int quit = s->quit;
        pthread_mutex_unlock(&s->mu);
        if (quit) break;
        while (atomic_load_explicit(&s->on, memory_order_relaxed)) x = work(4096, x);
    }
    return (void *)(uintptr_t)(x & 1);
}

static void spin_set(spinner *s, int on)
{
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->on, on);
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

enum { ALONE, PACED, BESIDE, WAYS };
static const char *const way_name[WAYS] = {"alone", "paced", "beside"};

typedef struct way {
    double *cpu, spent, wmax;
    size_t n, cap;
} way;

#define TURN_MS 2000.0
#define FRAME_MS (1000.0 / 60.0)
#define FRAME_WORK_MS 4.0

/* One turn of `w`'s way: TURN_MS of wall time. */
static void turn(way *w, int kind, uint64_t rounds, uint64_t *keep)
{
    double end = clock_ms(CLOCK_MONOTONIC) + TURN_MS;
    double frame0 = clock_ms(CLOCK_MONOTONIC);
    while (w->n < w->cap && clock_ms(CLOCK_MONOTONIC) < end) {
        if (kind == PACED && clock_ms(CLOCK_MONOTONIC) - frame0 >= FRAME_WORK_MS) {
            double next = frame0 + FRAME_MS, now = clock_ms(CLOCK_MONOTONIC);
            if (next > now) {
                struct timespec ts = {0, (long)((next - now) * 1e6)};
                nanosleep(&ts, NULL);
            }
            frame0 = clock_ms(CLOCK_MONOTONIC);
        }
        double wc = clock_ms(CLOCK_MONOTONIC), t = clock_ms(CLOCK_THREAD_CPUTIME_ID);
        *keep ^= work(rounds, w->n);
        t = clock_ms(CLOCK_THREAD_CPUTIME_ID) - t;
        wc = clock_ms(CLOCK_MONOTONIC) - wc;
        if (wc > w->wmax) w->wmax = wc;
        w->cpu[w->n++] = t;
        w->spent += t;
    }
}

/* The cold read (COLD_SECONDS): ms to read a byte of each of 64 MB's pages, left idle `secs` first, and
 * read again at once; the pages' read times' p99.9 and max (us). 0, or -1: out of memory. */
#define COLD_MB 64
static int cold(double secs)
{
    size_t pages = (size_t)COLD_MB * 256, bytes = pages * 4096;
    volatile char *p = malloc(bytes);
    double *t = malloc(pages * sizeof *t);
    if (!p || !t) {
        free((void *)p);
        free(t);
        return -1;
    }
    memset((char *)p, 7, bytes);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    for (int pass = 0; pass < 2; pass++) {
        double all = clock_ms(CLOCK_MONOTONIC);
        for (size_t i = 0; i < pages; i++) {
            double a = clock_ms(CLOCK_MONOTONIC);
            (void)p[i * 4096 + (i * 97) % 4096];
            t[i] = (clock_ms(CLOCK_MONOTONIC) - a) * 1e3;
        }
        all = clock_ms(CLOCK_MONOTONIC) - all;
        qsort(t, pages, sizeof *t, cmp);
        size_t over = 0;
        for (size_t i = 0; i < pages; i++) over += t[i] > 50;
        printf("jitter %-6s: %d MB's pages read a byte each %s: %.2f ms, a page p99.9 / max %.1f / %.0f us, %zu over "
               "50 us\n",
               pass ? "warm" : "cold", COLD_MB, pass ? "at once after" : "after idling", all,
               t[(size_t)(0.999 * (double)(pages - 1))], t[pages - 1], over);
    }
    free((void *)p);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10, chunk = argc > 2 ? atof(argv[2]) : 0.5;
    double idle = argc > 3 ? atof(argv[3]) : 0;
    if (!(secs >= 2 && secs <= 3600 && chunk > 0.01 && chunk <= 1 && idle >= 0 && idle <= 3600)) {
        fprintf(stderr, "usage: jitter [SECONDS 2..3600] [CHUNK_MS 0.01..1] [COLD_SECONDS 0..3600]\n");
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
    way ways[WAYS] = {{0}};
    int status = 0;
    for (int k = 0; k < WAYS; k++) {
        ways[k].cap = (size_t)(secs * 1e3 / chunk * 1.5) + 16;
        ways[k].cpu = malloc(ways[k].cap * sizeof *ways[k].cpu);
        if (!ways[k].cpu) status = 1;
    }
    spinner sp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    pthread_t th;
    if (!status && pthread_create(&th, NULL, spin_main, &sp) != 0) status = 1;
    if (status) {
        fprintf(stderr, "jitter: out of memory\n");
        for (int k = 0; k < WAYS; k++) free(ways[k].cpu);
        return 1;
    }
    int turns = (int)(secs * 1e3 / TURN_MS + 0.5);
    for (int r = 0; r < turns; r++)
        for (int k = 0; k < WAYS; k++) {
            if (k == BESIDE) spin_set(&sp, 1);
            turn(&ways[k], k, rounds, &keep);
            if (k == BESIDE) spin_set(&sp, 0);
        }
    pthread_mutex_lock(&sp.mu);
    sp.quit = 1;
    pthread_cond_signal(&sp.cv);
    pthread_mutex_unlock(&sp.mu);
    pthread_join(th, NULL);
    double base = 0;
    for (int k = 0; k < WAYS; k++) {
        way *w = &ways[k];
        if (w->n == 0) continue;
        qsort(w->cpu, w->n, sizeof *w->cpu, cmp);
        double p50 = w->cpu[w->n / 2];
        size_t over05 = 0, over2 = 0;
        for (size_t i = 0; i < w->n; i++) {
            if (w->cpu[i] > p50 + 0.5) over05++;
            if (w->cpu[i] > p50 + 2) over2++;
        }
        double rate = over05 / (w->spent * 1e-3);
        if (k == ALONE) base = rate;
        printf("jitter %-6s: %zu pieces of %.2f ms, thread CPU p50 / p99.9 / max %.3f / %.3f / %.2f ms (wall max "
               "%.2f); %zu over p50 + 0.5 ms, %zu over p50 + 2 ms: %.2f and %.2f a second of work",
               way_name[k], w->n, chunk, p50, w->cpu[(size_t)(0.999 * (double)(w->n - 1))], w->cpu[w->n - 1],
               w->wmax, over05, over2, rate, over2 / (w->spent * 1e-3));
        if (k != ALONE) {
            if (base > 0)
                printf("; %.1fx alone's", rate / base);
            else
                printf("; alone had none");
        }
        printf(" (%x)\n", (unsigned)((keep >> k) & 0xf));
        free(w->cpu);
    }
    if (idle > 0 && cold(idle) != 0) {
        fprintf(stderr, "jitter: out of memory\n");
        return 1;
    }
    return 0;
}
