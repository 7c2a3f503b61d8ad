/*
 * workers.c -- the crowd's threads: a small pool that runs one function over the slots [0, n) in
 * pieces, the caller's thread taking pieces beside the pool's (a frame's phase returns when every
 * slot is done). The slots are split in one range a thread (the same split every job: each agent's
 * records, its boundary's boxes and its candidate list stay in the cache of the core that works on
 * it, phase after phase and frame after frame); a thread takes pieces from the front of its own
 * range, then from the back of the range with the most left. Pieces shrink as a range runs out (half
 * of what is left, between a floor and the caller's chunk), so the threads finish together even when
 * the agents' costs differ (a boundary read, a crowded agent): the last pieces are small. A thread
 * that meets the slow agents takes fewer pieces, and the caller waits only for pieces others are
 * running (a thread still asleep has its range taken by the others).
 *
 * Waking a sleeping thread costs the caller a system call and the thread tens of microseconds (more
 * on a virtual machine) before its first piece: as much as a tenth of a 1,000-agent frame on two
 * threads. So a thread that ran a job watches for the next one for up to WORK_SPIN_NS before it
 * sleeps, the caller posts a job with a system call only when a thread sleeps, and it watches for its
 * last pieces the same way before it sleeps itself; and on_workers_wake lets the crowd wake the pool
 * at the start of a frame, so that the threads are awake by the time the frame's serial part (the
 * snapshot, the grid's build) is done.
 * A game paces its updates (a frame's other work between them): the pool's threads then sleep between
 * updates, and each wake cost the caller a system call (~0.045 ms paced here) and the frame the thread's
 * late start (its first piece ~0.1 ms after the post). So on_workers_wake also times the updates: once
 * they come at a steady rate (the next expected after the shortest of the last WAKE_GAPS gaps: from the
 * fifth update), a thread that goes to sleep sleeps with a deadline, WAKE_EARLY_NS before the next update
 * is due, then watches for it, yielding its core, until WAKE_LATE_NS after (the caller then posts without
 * a system call, and the thread starts at once); an update that does not come by then (the game stopped,
 * or slowed) finds the thread asleep without a deadline, as before: a thread watches at most
 * WAKE_EARLY_NS + WAKE_LATE_NS an expected update, and not again until the next update comes. A thread
 * reads a job posted without taking the pool's lock (the caller may hold it still).
 * Where the OS lets a thread choose another's CPUs (Linux), the pool's threads keep off the CPU the
 * updating thread runs on: a game's thread woken from its frame's sleep can land on the CPU where a
 * pool thread watches (yielding), and the frame then ran on one CPU while the other idled (the
 * scheduler moves one of them on its next tick only: at normal priority, 132 of 349 paced frames ran
 * without the pool's thread). on_workers_wake reads the caller's CPU and, when it is not the one the
 * threads keep off already, gives them the CPUs the pool was created with less that one (a system
 * call a thread, only when the caller's CPU changes); nothing is changed where that would leave none.
 * A job can also be left to the pool's threads while the caller returns (on_workers_behind: the crowd's
 * next grid, built between frames on a core idle then); on_workers_sync, called first by every other
 * entry, waits for it or runs it on the caller's thread if no thread began it.
 * Which thread runs a piece never changes what it computes (each agent's work reads only what no
 * phase of the same kind writes). Nothing global: each crowd with threads > 1 owns its pool.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getcpu, pthread_setaffinity_np: a pool thread keeps off the caller's CPU */
#endif
#include "crowd.h"
#include "crowd_prof.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* how long a thread watches for the next job, or the caller for its last pieces, before it sleeps
 * (between a frame's phases, and from on_workers_wake to the first phase: the snapshot and the
 * grid's build, ~0.05 ms at 1,000 agents, ~0.3 at 5,000) */
#define WORK_SPIN_NS 200000
/* paced updates: a thread asleep between them wakes this long before the next is due (a timer's wake
 * is late by tens of microseconds on a virtual machine) and watches for it until this long after (the
 * game's own jitter: tests/crowd's paced frames come 3.6-4.9 ms apart); the rate: the shortest of the
 * last WAKE_GAPS gaps between updates, if below WAKE_MAX_GAP_NS (a slower game: the threads sleep until
 * woken, as between unpaced calls) */
#define WAKE_EARLY_NS 250000
#define WAKE_LATE_NS 500000
#define WAKE_GAPS 3
#define WAKE_MAX_GAP_NS 100000000
#define WORK_MIN_PIECE 2 /* the smallest piece (slots) */
/* a range: the job's generation (22 bits: a thread that comes late, its job over, finds another's
 * and takes nothing), its first slot left and its end (21 bits each: slots < 2^20, crowd.c) */
#define RANGE_BITS 21
#define RANGE_MASK ((1u << RANGE_BITS) - 1)
#define GEN_MASK ((1u << (64 - 2 * RANGE_BITS)) - 1)
static uint64_t range_pack(uint32_t gen, uint32_t lo, uint32_t hi)
{
    return (uint64_t)(gen & GEN_MASK) << (2 * RANGE_BITS) | (uint64_t)lo << RANGE_BITS | hi;
}
#define RANGE_GEN(v) ((uint32_t)((v) >> (2 * RANGE_BITS)))
#define RANGE_LO(v) ((uint32_t)((v) >> RANGE_BITS) & RANGE_MASK)
#define RANGE_HI(v) ((uint32_t)(v) & RANGE_MASK)

typedef struct range {
    atomic_uint_least64_t v;
    char pad[64 - sizeof(atomic_uint_least64_t)]; /* one cache line each */
} range;

typedef struct worker {
    struct on_workers *pool;
    int index;
    pthread_t th;
} worker;

struct on_workers {
    int n;                   /* threads in all, the caller's counted */
    int started;             /* of the pool's threads */
    worker *w;
    pthread_mutex_t mu;
    pthread_cond_t go, done_cv;
    atomic_uint gen;         /* a new job each time it grows (written under mu; read by spinning threads) */
    int stop;
    int sleeping;            /* threads waiting on go (under mu): a job posted wakes them */
    int waiting;             /* the caller waits on done_cv (under mu) */
    /* the job: written under mu before gen grows, read by a thread that saw gen grow without the lock
     * (a job posted meanwhile can mix its fields with the one seen: harmless, its ranges are tagged
     * with the newer generation and the older's are empty, so the thread claims nothing of either) */
    _Atomic(on_work_fn) fn;
    _Atomic(void *) ctx;
    atomic_uint total, chunk;
    int behind;              /* a job left to the pool's threads (on_workers_behind): on_workers_sync ends it */
    atomic_uint done;        /* the job's slots done */
    range *ranges;           /* one a thread: the slots left of its share of the job */
    uint64_t t_wake, gaps[WAKE_GAPS]; /* (under mu) the last on_workers_wake's time and the gaps before it (ns) */
    uint64_t expect;         /* (under mu) when the next on_workers_wake is due (0: no steady rate) */
    uint64_t wakes, wakes_asleep; /* (under mu) on_workers_wake's calls, and those that found a thread asleep */
    int avoided;             /* (the caller's) the CPU the pool's threads keep off (-1: none) */
    unsigned moves;          /* (the caller's) how many times they were moved off the caller's CPU */
#ifdef __linux__
    cpu_set_t allowed;       /* the CPUs the pool was created with */
    int allowed_known;
#endif
#ifdef ON_CROWD_PROFILE
    on_workers_prof prof[8];
    double t_post[ON_WORKERS_PROF_FNS]; /* when each job function was last posted */
    on_work_fn prof_fn[ON_WORKERS_PROF_FNS]; /* the jobs' functions, in the order first run (the rest: the last's) */
#endif
};

typedef struct job {
    on_work_fn fn;
    void *ctx;
    uint32_t gen, total, chunk;
} job;

/* Claim a piece of range r of job j (from its front when front, else from its back): its first slot
 * into *b and its size, or 0 when the range is empty (or belongs to another job). A piece: half of
 * what is left, at least WORK_MIN_PIECE, at most the job's chunk. */
static uint32_t claim(range *r, const job *j, int front, uint32_t *b)
{
    uint64_t v = atomic_load(&r->v);
    for (;;) {
        uint32_t lo = RANGE_LO(v), hi = RANGE_HI(v);
        if (RANGE_GEN(v) != (j->gen & GEN_MASK) || lo >= hi) return 0;
        uint32_t left = hi - lo, size = left / 2;
        size = size < WORK_MIN_PIECE ? WORK_MIN_PIECE : size > j->chunk ? j->chunk : size;
        if (size > left) size = left;
        uint64_t nv = front ? range_pack(j->gen, lo + size, hi) : range_pack(j->gen, lo, hi - size);
        if (atomic_compare_exchange_weak(&r->v, &v, nv)) {
            *b = front ? lo : hi - size;
            return size;
        }
    }
}

/* Pieces of job j while it has any: from thread index's own range, then from the others' (the one with
 * the most left). A thread that comes late (the job done, or a newer one begun) takes none. */
static void take_chunks(on_workers *p, const job *j, int index)
{
#ifdef ON_CROWD_PROFILE
    on_workers_prof *pr = index < 8 ? &p->prof[index] : NULL;
    double t_first = -1, t_end = 0, c0 = prof_cpu();
#endif
    for (;;) {
        uint32_t b, size = claim(&p->ranges[index], j, 1, &b);
        if (!size) {
            int best = -1;
            uint32_t most = 0;
            for (int k = 0; k < p->n; k++) {
                uint64_t v = atomic_load(&p->ranges[k].v);
                uint32_t left = RANGE_LO(v) < RANGE_HI(v) ? RANGE_HI(v) - RANGE_LO(v) : 0;
                if (k != index && RANGE_GEN(v) == (j->gen & GEN_MASK) && left > most) best = k, most = left;
            }
            if (best < 0) break;
            size = claim(&p->ranges[best], j, 0, &b);
            if (!size) continue;
        }
#ifdef ON_CROWD_PROFILE
        double t0 = prof_now();
        if (t_first < 0) t_first = t0;
        j->fn(j->ctx, index, b, b + size);
        t_end = prof_now();
        if (pr) pr->busy += t_end - t0, pr->pieces++, pr->slots += size;
#else
        j->fn(j->ctx, index, b, b + size);
#endif
        if (atomic_fetch_add(&p->done, size) + size == j->total) {
            pthread_mutex_lock(&p->mu);
            if (p->waiting) pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
    }
#ifdef ON_CROWD_PROFILE
    if (pr && t_first >= 0) {
        int k = 0;
        while (k < ON_WORKERS_PROF_FNS - 1 && p->prof_fn[k] != j->fn) k++;
        pr->cpu[k] += prof_cpu() - c0;
        pr->first[k] += t_first - p->t_post[k];
        pr->last[k] += t_end - p->t_post[k];
        pr->jobs[k]++;
    }
#endif
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Watch *a until it differs from v (want_change) or reaches at least v (!want_change), until the
 * monotonic clock passes until_ns (0: for WORK_SPIN_NS from now): 1 if it did. The clock is read every
 * 64 checks (each check a pause, ~20 ns). */
static int spin_until(atomic_uint *a, unsigned v, int want_change, uint64_t until_ns)
{
    for (unsigned i = 0;; i++) {
        unsigned x = atomic_load_explicit(a, memory_order_acquire);
        if (want_change ? x != v : x >= v) return 1;
        cpu_relax();
        if ((i & 63) == 0) {
            uint64_t t = mono_ns();
            if (!until_ns) until_ns = t + WORK_SPIN_NS;
            else if (t > until_ns) return 0;
        }
    }
}
static int spin_on(atomic_uint *a, unsigned v, int want_change) { return spin_until(a, v, want_change, 0); }

/* Watch gen until it differs from v or the clock passes until_ns, yielding the core between checks: a
 * thread that watches for a paced update must not hold off the game's thread (woken on the same core,
 * the scheduler lets a running thread finish its slice first: tests/crowd saw the update come right
 * after the watch ended, 0.26 ms late), nor any other. */
static void watch_yielding(atomic_uint *gen, unsigned v, uint64_t until_ns)
{
    while (atomic_load_explicit(gen, memory_order_acquire) == v && mono_ns() <= until_ns) sched_yield();
}

/* (the caller, on_workers_wake) Move the pool's threads off the caller's CPU if it changed (see the
 * header). */
static void keep_off_caller(on_workers *p)
{
#ifdef __linux__
    int c = sched_getcpu();
    if (c < 0 || c == p->avoided || !p->allowed_known || c >= CPU_SETSIZE || !CPU_ISSET(c, &p->allowed) ||
        CPU_COUNT(&p->allowed) < 2)
        return;
    cpu_set_t set = p->allowed;
    CPU_CLR(c, &set);
    int moved = 0;
    for (int i = 1; i <= p->started; i++)
        moved += pthread_setaffinity_np(p->w[i].th, sizeof set, &set) == 0;
    if (moved) {
        p->avoided = c;
        p->moves++;
    }
#else
    (void)p;
#endif
}

/* Sleep on go (under mu) until a job newer than seen is posted or the pool stops; if the updates come
 * at a steady rate (p->expect, not yet waited for: *waited), with a deadline WAKE_EARLY_NS before the
 * next is due, then watch for it (the mutex let go) until WAKE_LATE_NS after. */
static void sleep_for_job(on_workers *p, uint32_t seen, uint64_t *waited)
{
    while (!p->stop && atomic_load(&p->gen) == seen) {
        uint64_t e = p->expect;
        p->sleeping++;
        if (e && e != *waited) {
            *waited = e;
            uint64_t d = e - WAKE_EARLY_NS;
            struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};
            int r = 0;
            while (r != ETIMEDOUT && !p->stop && atomic_load(&p->gen) == seen)
                r = pthread_cond_timedwait(&p->go, &p->mu, &ts);
            p->sleeping--;
            if (r != ETIMEDOUT) continue;
            pthread_mutex_unlock(&p->mu);
            watch_yielding(&p->gen, seen, e + WAKE_LATE_NS);
            pthread_mutex_lock(&p->mu);
            continue;
        }
        pthread_cond_wait(&p->go, &p->mu);
        p->sleeping--;
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    on_workers *p = w->pool;
    uint32_t seen = 0;
    uint64_t waited = 0; /* the last update's due time slept for */
    for (;;) {
        uint32_t g = atomic_load_explicit(&p->gen, memory_order_acquire);
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            sleep_for_job(p, seen, &waited);
            int stop = p->stop;
            pthread_mutex_unlock(&p->mu);
            if (stop) break;
            continue;
        }
        /* a new job, read without the lock (the caller may still hold it: a thread blocked on it
         * would cost the caller a system call to wake it, and itself a wake) */
        seen = g;
        job j = {atomic_load_explicit(&p->fn, memory_order_relaxed), atomic_load_explicit(&p->ctx, memory_order_relaxed),
                 g, atomic_load_explicit(&p->total, memory_order_relaxed),
                 atomic_load_explicit(&p->chunk, memory_order_relaxed)};
        take_chunks(p, &j, w->index);
        /* the next job (the frame's next phase) comes soon: watch for it before sleeping */
        spin_on(&p->gen, seen, 1);
    }
    return NULL;
}

int on_workers_create(int n, on_workers **out)
{
    *out = NULL;
    on_workers *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->n = n;
    p->w = calloc((size_t)n, sizeof *p->w);
    p->ranges = aligned_alloc(64, (size_t)n * sizeof *p->ranges);
    if (!p->w || !p->ranges) {
        free(p->w);
        free(p->ranges);
        free(p);
        return -1;
    }
    for (int i = 0; i < n; i++) atomic_init(&p->ranges[i].v, 0);
    atomic_init(&p->gen, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->fn, NULL);
    atomic_init(&p->ctx, NULL);
    atomic_init(&p->total, 0);
    atomic_init(&p->chunk, 0);
    p->avoided = -1;
#ifdef __linux__
    CPU_ZERO(&p->allowed);
    p->allowed_known = pthread_getaffinity_np(pthread_self(), sizeof p->allowed, &p->allowed) == 0;
#endif
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->w);
        free(p->ranges);
        free(p);
        return -1;
    }
    /* go's deadlines on the monotonic clock (the clock the updates are timed by) */
    pthread_condattr_t ca;
    int cr = pthread_condattr_init(&ca);
    if (cr == 0 && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0) {
        pthread_condattr_destroy(&ca);
        cr = -1;
    }
    if (cr != 0 || pthread_cond_init(&p->go, &ca) != 0) {
        if (cr == 0) pthread_condattr_destroy(&ca);
        pthread_mutex_destroy(&p->mu);
        free(p->w);
        free(p->ranges);
        free(p);
        return -1;
    }
    pthread_condattr_destroy(&ca);
    if (pthread_cond_init(&p->done_cv, NULL) != 0) {
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->mu);
        free(p->w);
        free(p->ranges);
        free(p);
        return -1;
    }
    for (int i = 1; i < n; i++) {
        p->w[i].pool = p;
        p->w[i].index = i;
        if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]) != 0) {
            on_workers_destroy(p);
            return -1;
        }
        p->started++;
    }
    *out = p;
    return 0;
}

void on_workers_destroy(on_workers *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i <= p->started; i++) pthread_join(p->w[i].th, NULL);
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
    free(p->w);
    free(p->ranges);
    free(p);
}

int on_workers_count(const on_workers *p) { return p ? p->n : 1; }

/* Wait (watch, then sleep) until the job's n slots are done. */
static void wait_done(on_workers *p, uint32_t n)
{
    if (!spin_on(&p->done, n, 0)) {
        pthread_mutex_lock(&p->mu);
        p->waiting = 1;
        while (atomic_load(&p->done) < n) pthread_cond_wait(&p->done_cv, &p->mu);
        p->waiting = 0;
        pthread_mutex_unlock(&p->mu);
    }
}

/* A new job (under mu): the threads asleep woken, those watching see gen grow. */
static uint32_t post(on_workers *p, on_work_fn fn, void *ctx, uint32_t n, uint32_t chunk)
{
    atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&p->total, n, memory_order_relaxed);
    atomic_store_explicit(&p->chunk, chunk, memory_order_relaxed);
    atomic_store(&p->done, 0);
    uint32_t gen = atomic_load(&p->gen) + 1;
    for (int k = 0; k < p->n; k++)
        atomic_store(&p->ranges[k].v, range_pack(gen, (uint32_t)((uint64_t)n * k / p->n),
                                                 (uint32_t)((uint64_t)n * (k + 1) / p->n)));
    atomic_store(&p->gen, gen);
    if (p->sleeping) pthread_cond_broadcast(&p->go);
    return gen;
}

void on_workers_wake(on_workers *p)
{
    if (!p || p->n < 2) return;
    on_workers_sync(p);
    uint64_t now = mono_ns();
    keep_off_caller(p);
    pthread_mutex_lock(&p->mu);
    p->wakes++;
    if (p->sleeping) {
        post(p, NULL, NULL, 0, 1); /* an empty job: its threads then watch for the next */
        p->wakes_asleep++;
    }
    /* the rate: the shortest of the last WAKE_GAPS gaps, once there are as many (a frame late by the
     * game's jitter does not push the next wake past its update) */
    uint64_t s = p->t_wake ? now - p->t_wake : 0;
    for (int k = WAKE_GAPS - 1; k > 0; k--) {
        p->gaps[k] = p->gaps[k - 1];
        s = p->gaps[k] < s ? p->gaps[k] : s;
    }
    p->gaps[0] = p->t_wake ? now - p->t_wake : 0;
    p->expect = s && s < WAKE_MAX_GAP_NS ? now + s : 0;
    p->t_wake = now;
    pthread_mutex_unlock(&p->mu);
}

unsigned on_workers_moves(on_workers *p)
{
    return p ? p->moves : 0;
}

void on_workers_wakes(on_workers *p, uint64_t *calls, uint64_t *asleep)
{
    *calls = *asleep = 0;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    *calls = p->wakes, *asleep = p->wakes_asleep;
    pthread_mutex_unlock(&p->mu);
}

/* (the profiling build: when fn's job was posted, under the pool's lock) */
static void prof_posted(on_workers *p, on_work_fn fn)
{
#ifdef ON_CROWD_PROFILE
    for (int k = 0; k < ON_WORKERS_PROF_FNS; k++)
        if (p->prof_fn[k] == fn || !p->prof_fn[k]) {
            p->prof_fn[k] = fn;
            p->t_post[k] = prof_now();
            break;
        }
#else
    (void)p, (void)fn;
#endif
}

void on_workers_run(on_workers *p, uint32_t n, uint32_t chunk, on_work_fn fn, void *ctx)
{
    on_workers_sync(p);
    if (!p || p->n < 2 || n <= chunk || n > RANGE_MASK) {
        if (n) fn(ctx, 0, 0, n);
        return;
    }
    pthread_mutex_lock(&p->mu);
    uint32_t gen = post(p, fn, ctx, n, chunk);
    job j = {fn, ctx, gen, n, chunk};
    prof_posted(p, fn);
    pthread_mutex_unlock(&p->mu);
    /* the caller takes pieces too, and waits only for pieces other threads are running: a thread
     * the system has not woken yet (a loaded machine) holds nothing up */
    take_chunks(p, &j, 0);
    wait_done(p, n);
}

/* One call fn(ctx, worker, 0, 1) on a thread of the pool while the caller goes on (its thread returns at
 * once): work the caller's next frame needs and nothing reads before it, done between frames on a core
 * that is idle then. on_workers_sync (called first by on_workers_run and on_workers_wake) waits for it,
 * or runs it on the caller's thread if no thread of the pool has begun it (a loaded machine). */
void on_workers_behind(on_workers *p, on_work_fn fn, void *ctx)
{
    if (!p || p->n < 2) {
        fn(ctx, 0, 0, 1);
        return;
    }
    on_workers_sync(p);
    pthread_mutex_lock(&p->mu);
    p->behind = 1;
    /* one slot: range k holds [k / n, (k + 1) / n) of it, so only the last thread's holds it (not the
     * caller's: it takes no piece here) */
    post(p, fn, ctx, 1, 1);
    prof_posted(p, fn);
    pthread_mutex_unlock(&p->mu);
}

void on_workers_sync(on_workers *p)
{
    if (!p || !p->behind) return;
    pthread_mutex_lock(&p->mu);
    job j = {atomic_load(&p->fn), atomic_load(&p->ctx), atomic_load(&p->gen), atomic_load(&p->total),
             atomic_load(&p->chunk)};
    pthread_mutex_unlock(&p->mu);
    take_chunks(p, &j, 0); /* (none left unless no thread began it) */
    wait_done(p, j.total);
    p->behind = 0;
}

#ifdef ON_CROWD_PROFILE
on_workers_prof *on_workers_profile(on_workers *p) { return p ? p->prof : NULL; }
#endif
