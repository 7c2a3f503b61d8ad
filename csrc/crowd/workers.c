/*
 * workers.c -- the crowd's threads: a small pool that runs one function over the slots [0, n) in
 * chunks, the caller's thread taking chunks beside the pool's (a frame's phase returns when every
 * chunk is done). Chunks are handed out in order from one atomic counter, so a thread that meets
 * the slow agents (a boundary read from the tree) takes fewer chunks, and the caller waits only for the
 * chunks others are running (not for a thread still asleep); which thread runs a chunk never
 * changes what it computes (each agent's work reads only what no phase of the same kind writes).
 * Nothing global: each crowd with threads > 1 owns its pool.
 */
#include "crowd.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

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
    pthread_cond_t go, done;
    uint32_t gen;            /* a new job each time it grows */
    int stop;
    on_work_fn fn;           /* the job (read under mu by a thread joining it) */
    void *ctx;
    uint32_t total, chunk, nchunks, chunks_done;
    atomic_uint_least64_t next; /* the job's generation << 32 | the next slot handed out */
};

typedef struct job {
    on_work_fn fn;
    void *ctx;
    uint32_t gen, total, chunk;
} job;

/* Chunks of job j while it has any; a thread that comes late (the job done, or a newer one begun)
 * takes none: a chunk is claimed only while the counter still carries its job's generation. */
static void take_chunks(on_workers *p, const job *j, int index)
{
    uint64_t v = atomic_load(&p->next);
    for (;;) {
        if ((uint32_t)(v >> 32) != j->gen || (uint32_t)v >= j->total) return;
        if (!atomic_compare_exchange_weak(&p->next, &v, v + j->chunk)) continue;
        uint32_t b = (uint32_t)v, e = b + j->chunk < j->total ? b + j->chunk : j->total;
        j->fn(j->ctx, index, b, e);
        pthread_mutex_lock(&p->mu);
        if (++p->chunks_done == p->nchunks) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
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
        while (!p->stop && p->gen == seen) pthread_cond_wait(&p->go, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        job j = {p->fn, p->ctx, p->gen, p->total, p->chunk};
        pthread_mutex_unlock(&p->mu);
        take_chunks(p, &j, w->index);
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
    if (pthread_cond_init(&p->done, NULL) != 0) {
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
    pthread_cond_destroy(&p->done);
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
    p->nchunks = (n + chunk - 1) / chunk;
    p->chunks_done = 0;
    p->gen++;
    job j = {fn, ctx, p->gen, n, chunk};
    atomic_store(&p->next, (uint64_t)p->gen << 32);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    /* the caller takes chunks too, and waits only for chunks other threads are running: a thread
     * the system has not woken yet (a loaded machine) holds nothing up */
    take_chunks(p, &j, 0);
    pthread_mutex_lock(&p->mu);
    while (p->chunks_done < p->nchunks) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
