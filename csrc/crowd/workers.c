/*
 * workers.c -- the crowd's threads: a small pool that runs one function over the slots [0, n) in
 * pieces, the caller's thread taking pieces beside the pool's (a frame's phase returns when every
 * slot is done). Pieces are handed out in order from one atomic counter and shrink as the slots run
 * out (each a share of what is left, 1 / (2 threads), between a floor and the caller's chunk), so the
 * threads finish together even when the agents' costs differ (a boundary read, a crowded agent): the
 * last pieces are small. A thread that meets the slow agents takes fewer pieces, and the caller waits
 * only for pieces others are running (not for a thread still asleep). Between jobs a thread spins a
 * little (WORK_SPIN) before it sleeps, and so does the caller before it waits for the last pieces:
 * a frame's two phases follow each other within microseconds, far less than a sleep and a wake-up.
 * Which thread runs a piece never changes what it computes (each agent's work reads only what no
 * phase of the same kind writes). Nothing global: each crowd with threads > 1 owns its pool.
 */
#include "crowd.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* checks of the shared counters before sleeping (each a few nanoseconds: tens of microseconds in all) */
#define WORK_SPIN 20000
#define WORK_MIN_PIECE 2 /* the smallest piece (slots) */

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
    on_work_fn fn;           /* the job (read under mu by a thread joining it) */
    void *ctx;
    uint32_t total, chunk;
    atomic_uint done;        /* the job's slots done */
    atomic_uint_least64_t next; /* the job's generation << 32 | the next slot handed out */
};

typedef struct job {
    on_work_fn fn;
    void *ctx;
    uint32_t gen, total, chunk;
} job;

/* Pieces of job j while it has any; a thread that comes late (the job done, or a newer one begun)
 * takes none: a piece is claimed only while the counter still carries its job's generation. A piece:
 * what is left over twice the threads, at least WORK_MIN_PIECE, at most the job's chunk. */
static void take_chunks(on_workers *p, const job *j, int index)
{
    uint64_t v = atomic_load(&p->next);
    uint32_t share = 2 * (uint32_t)p->n;
    for (;;) {
        if ((uint32_t)(v >> 32) != j->gen || (uint32_t)v >= j->total) return;
        uint32_t b = (uint32_t)v, left = j->total - b, size = left / share;
        size = size < WORK_MIN_PIECE ? WORK_MIN_PIECE : size > j->chunk ? j->chunk : size;
        if (size > left) size = left;
        if (!atomic_compare_exchange_weak(&p->next, &v, v + size)) continue;
        j->fn(j->ctx, index, b, b + size);
        if (atomic_fetch_add(&p->done, size) + size == j->total) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
        }
        v = atomic_load(&p->next);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    on_workers *p = w->pool;
    uint32_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && atomic_load(&p->gen) == seen) pthread_cond_wait(&p->go, &p->mu);
        if (p->stop) break;
        seen = atomic_load(&p->gen);
        job j = {p->fn, p->ctx, seen, p->total, p->chunk};
        pthread_mutex_unlock(&p->mu);
        take_chunks(p, &j, w->index);
        /* the next job (the frame's next phase) comes soon: watch for it before sleeping */
        for (int i = 0; i < WORK_SPIN && atomic_load_explicit(&p->gen, memory_order_relaxed) == seen; i++)
            ;
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int on_workers_create(int n, on_workers **out)
{
    *out = NULL;
    on_workers *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->n = n;
    p->w = calloc((size_t)n, sizeof *p->w);
    if (!p->w) {
        free(p);
        return -1;
    }
    atomic_init(&p->next, 0);
    atomic_init(&p->gen, 0);
    atomic_init(&p->done, 0);
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->w);
        free(p);
        return -1;
    }
    if (pthread_cond_init(&p->go, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p->w);
        free(p);
        return -1;
    }
    if (pthread_cond_init(&p->done_cv, NULL) != 0) {
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->mu);
        free(p->w);
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
    free(p);
}

int on_workers_count(const on_workers *p) { return p ? p->n : 1; }

void on_workers_run(on_workers *p, uint32_t n, uint32_t chunk, on_work_fn fn, void *ctx)
{
    if (!p || p->n < 2 || n <= chunk) {
        if (n) fn(ctx, 0, 0, n);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->total = n;
    p->chunk = chunk;
    atomic_store(&p->done, 0);
    uint32_t gen = atomic_load(&p->gen) + 1;
    atomic_store(&p->next, (uint64_t)gen << 32);
    atomic_store(&p->gen, gen);
    job j = {fn, ctx, gen, n, chunk};
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    /* the caller takes pieces too, and waits only for pieces other threads are running: a thread
     * the system has not woken yet (a loaded machine) holds nothing up */
    take_chunks(p, &j, 0);
    for (int i = 0; i < WORK_SPIN && atomic_load(&p->done) < n; i++)
        ;
    if (atomic_load(&p->done) < n) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->done) < n) pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
