/*
 * workers.c -- the crowd's threads: a small pool that runs one function over the slots [0, n) in
 * chunks, the caller's thread taking chunks beside the pool's (a frame's phase returns when every
 * chunk is done). Chunks are handed out in order from one atomic counter, so a thread that meets
 * the slow agents (a boundary read from the tree) takes fewer chunks; which thread runs a chunk never
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
    uint64_t gen;            /* a new job each time it grows */
    int stop, busy;          /* busy: pool threads still in the current job */
    on_work_fn fn;
    void *ctx;
    uint32_t total, chunk;
    atomic_uint_fast32_t next;
};

static void take_chunks(on_workers *p, int index)
{
    for (;;) {
        uint_fast32_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->total) return;
        uint32_t e = (uint32_t)b + p->chunk;
        p->fn(p->ctx, index, (uint32_t)b, e < p->total ? e : p->total);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    on_workers *p = w->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->gen == seen) pthread_cond_wait(&p->go, &p->mu);
        if (p->stop) break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        take_chunks(p, w->index);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0) pthread_cond_signal(&p->done);
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
    atomic_store(&p->next, 0);
    p->busy = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    take_chunks(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
