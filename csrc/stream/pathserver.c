/*
 * pathserver.c -- path requests answered by worker threads over one shared, read-only tree.
 *
 * Threads share the request queue and the finished list, under one mutex; each worker owns a query
 * object and touches nothing else of the server. A search reads the tree and writes only its query
 * (search nodes, maps, heap, lookup cache, result buffers), so workers need no lock around it. The
 * caller's thread alone submits, hands results back (update) and pauses; results are copied out of
 * the worker's query into the request so the query is free for the next one at once.
 */
#include "octonav_stream.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_NODES 262144
#define MAX_WORKERS 64

typedef struct preq {
    struct preq *next;
    double a[3], b[3];
    on_query_opts o;
    on_path_result r;    /* filled when finished; r.path and r.tiles (tiles then salts) are malloc'd */
} preq;

typedef struct worker {
    on_pathserver *ps;
    on_query *q;
    pthread_t th;
} worker;

struct on_pathserver {
    const on_tree *t;
    int nworkers;
    worker *w;           /* nworkers entries */
    on_query *inline_q;  /* with 0 workers: the caller's query */
    size_t max_queued;
    uint64_t next_id;
    /* handed back by the last update (freed at the next) */
    preq *handed;
    on_path_result *out;
    size_t outcap;
    /* shared with the workers, under mu */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    preq *qhead, *qtail; /* waiting, in submission order */
    size_t queued, running;
    preq *dhead, *dtail; /* finished, in finishing order */
    size_t ndone;
    int paused, stop;
};

/* Run one request on query q and copy its result into r->r (any thread; touches only r and q). */
static void run_request(on_query *q, preq *r)
{
    size_t n = 0, nt = 0;
    on_query_info info;
    on_status s = on_query_find(q, r->a, r->b, &r->o, NULL, 0, &n, &info);
    double *path = NULL;
    uint32_t *tiles = NULL;
    if ((s & ON_BUFFER_SMALL) && n > 0) {
        path = malloc(n * 3 * sizeof *path);
        if (!path) s = ON_FAILURE | ON_NO_MEMORY;
        else s = on_query_finalize(q, path, n, &n, &info);
    }
    if (path && (on_ok(s) || (s & ON_PARTIAL))) {
        on_query_path_tiles(q, NULL, NULL, 0, &nt);
        tiles = malloc((nt ? nt : 1) * 2 * sizeof *tiles);
        if (!tiles) {
            s = ON_FAILURE | ON_NO_MEMORY;
            nt = 0;
        } else {
            on_query_path_tiles(q, tiles, tiles + nt, nt, &nt);
        }
    }
    if (!path || !(on_ok(s) || (s & ON_PARTIAL))) {
        free(path);
        free(tiles);
        path = NULL;
        tiles = NULL;
        n = nt = 0;
    }
    r->r.status = s;
    r->r.info = info;
    r->r.path = path;
    r->r.npath = n;
    r->r.tiles = tiles;
    r->r.salts = tiles ? tiles + nt : NULL;
    r->r.ntiles = nt;
}

static void push_done(on_pathserver *ps, preq *r)
{
    r->next = NULL;
    if (ps->dtail) ps->dtail->next = r;
    else ps->dhead = r;
    ps->dtail = r;
    ps->ndone++;
}

/* The worker loop: take the oldest request unless paused, run it outside the lock, file the result. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    on_pathserver *ps = w->ps;
    pthread_mutex_lock(&ps->mu);
    for (;;) {
        while (!ps->stop && (ps->paused || !ps->qhead)) pthread_cond_wait(&ps->work, &ps->mu);
        if (ps->stop) break;
        preq *r = ps->qhead;
        ps->qhead = r->next;
        if (!ps->qhead) ps->qtail = NULL;
        ps->queued--;
        ps->running++;
        pthread_mutex_unlock(&ps->mu);
        run_request(w->q, r);
        pthread_mutex_lock(&ps->mu);
        ps->running--;
        push_done(ps, r);
        pthread_cond_broadcast(&ps->done);
    }
    pthread_mutex_unlock(&ps->mu);
    return NULL;
}

static void free_list(preq *r)
{
    while (r) {
        preq *next = r->next;
        free((void *)r->r.path);
        free((void *)r->r.tiles);
        free(r);
        r = next;
    }
}

on_status on_pathserver_create(const on_tree *t, const on_pathserver_params *p, on_pathserver **out)
{
    *out = NULL;
    if (!t || !p || p->workers < 0 || p->workers > MAX_WORKERS) return ON_FAILURE | ON_INVALID;
    size_t max_nodes = p->max_nodes ? p->max_nodes : DEFAULT_MAX_NODES;
    if (max_nodes < 2 || max_nodes > (1u << 30)) return ON_FAILURE | ON_INVALID;
    on_pathserver *ps = calloc(1, sizeof *ps);
    if (!ps) return ON_FAILURE | ON_NO_MEMORY;
    ps->t = t;
    ps->max_queued = p->max_queued;
    ps->next_id = 1;
    if (pthread_mutex_init(&ps->mu, NULL) != 0) {
        free(ps);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    if (pthread_cond_init(&ps->work, NULL) != 0) {
        pthread_mutex_destroy(&ps->mu);
        free(ps);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    if (pthread_cond_init(&ps->done, NULL) != 0) {
        pthread_cond_destroy(&ps->work);
        pthread_mutex_destroy(&ps->mu);
        free(ps);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    on_status s = ON_SUCCESS;
    if (p->workers == 0) {
        s = on_query_create(t, max_nodes, &ps->inline_q);
    } else {
        ps->w = calloc((size_t)p->workers, sizeof *ps->w);
        if (!ps->w) s = ON_FAILURE | ON_NO_MEMORY;
        /* every query first: a failure then needs no thread stopped */
        for (int i = 0; ps->w && i < p->workers && on_ok(s); i++) {
            ps->w[i].ps = ps;
            s = on_query_create(t, max_nodes, &ps->w[i].q);
        }
        for (int i = 0; on_ok(s) && i < p->workers; i++) {
            if (pthread_create(&ps->w[i].th, NULL, worker_main, &ps->w[i]) != 0) s = ON_FAILURE | ON_NO_MEMORY;
            else ps->nworkers = i + 1;
        }
        if (!on_ok(s) && ps->w) /* threads started so far are stopped by destroy; the rest never ran */
            for (int i = ps->nworkers; i < p->workers; i++) {
                on_query_destroy(ps->w[i].q);
                ps->w[i].q = NULL;
            }
    }
    if (!on_ok(s)) {
        on_pathserver_destroy(ps);
        return s;
    }
    *out = ps;
    return ON_SUCCESS;
}

void on_pathserver_destroy(on_pathserver *ps)
{
    if (!ps) return;
    pthread_mutex_lock(&ps->mu);
    ps->stop = 1;
    pthread_cond_broadcast(&ps->work);
    pthread_mutex_unlock(&ps->mu);
    for (int i = 0; i < ps->nworkers; i++) pthread_join(ps->w[i].th, NULL);
    for (int i = 0; i < ps->nworkers; i++) on_query_destroy(ps->w[i].q);
    on_query_destroy(ps->inline_q);
    free(ps->w);
    free_list(ps->qhead);
    free_list(ps->dhead);
    free_list(ps->handed);
    free(ps->out);
    pthread_cond_destroy(&ps->done);
    pthread_cond_destroy(&ps->work);
    pthread_mutex_destroy(&ps->mu);
    free(ps);
}

on_status on_pathserver_submit(on_pathserver *ps, const double a[3], const double b[3], const on_query_opts *o,
                               uint64_t *id)
{
    if (id) *id = 0;
    for (int i = 0; i < 3; i++)
        if (!isfinite(a[i]) || !isfinite(b[i])) return ON_FAILURE | ON_INVALID;
    if (ps->max_queued && on_pathserver_pending(ps) >= ps->max_queued) return ON_FAILURE | ON_BUFFER_SMALL;
    preq *r = calloc(1, sizeof *r);
    if (!r) return ON_FAILURE | ON_NO_MEMORY;
    memcpy(r->a, a, sizeof r->a);
    memcpy(r->b, b, sizeof r->b);
    if (o) r->o = *o;
    else on_query_opts_default(&r->o);
    r->r.id = ps->next_id++;
    if (id) *id = r->r.id;
    pthread_mutex_lock(&ps->mu);
    if (ps->qtail) ps->qtail->next = r;
    else ps->qhead = r;
    ps->qtail = r;
    ps->queued++;
    pthread_cond_signal(&ps->work);
    pthread_mutex_unlock(&ps->mu);
    return ON_SUCCESS;
}

on_status on_pathserver_update(on_pathserver *ps, int wait, const on_path_result **res, size_t *n)
{
    *res = NULL;
    *n = 0;
    free_list(ps->handed);
    ps->handed = NULL;
    pthread_mutex_lock(&ps->mu);
    if (wait && ps->paused && ps->queued) {
        pthread_mutex_unlock(&ps->mu);
        return ON_FAILURE | ON_INVALID;
    }
    if (!ps->nworkers && !ps->paused) { /* no threads: the caller's thread runs the queue */
        while (ps->qhead) {
            preq *r = ps->qhead;
            ps->qhead = r->next;
            if (!ps->qhead) ps->qtail = NULL;
            ps->queued--;
            pthread_mutex_unlock(&ps->mu);
            run_request(ps->inline_q, r);
            pthread_mutex_lock(&ps->mu);
            push_done(ps, r);
        }
    }
    while (wait && (ps->queued || ps->running)) pthread_cond_wait(&ps->done, &ps->mu);
    preq *list = ps->dhead;
    size_t count = ps->ndone;
    ps->dhead = ps->dtail = NULL;
    ps->ndone = 0;
    pthread_mutex_unlock(&ps->mu);
    ps->handed = list;
    if (count > ps->outcap) {
        size_t cap = ps->outcap ? ps->outcap : 16;
        while (cap < count) cap *= 2;
        on_path_result *o = realloc(ps->out, cap * sizeof *o);
        if (!o) { /* keep the results for the next call */
            pthread_mutex_lock(&ps->mu);
            preq *tail = list;
            while (tail->next) tail = tail->next;
            tail->next = ps->dhead;
            if (!ps->dhead) ps->dtail = tail;
            ps->dhead = list;
            ps->ndone += count;
            pthread_mutex_unlock(&ps->mu);
            ps->handed = NULL;
            return ON_FAILURE | ON_NO_MEMORY;
        }
        ps->out = o;
        ps->outcap = cap;
    }
    size_t i = 0;
    for (preq *r = list; r; r = r->next) ps->out[i++] = r->r;
    *res = ps->out;
    *n = count;
    return ON_SUCCESS;
}

size_t on_pathserver_pending(on_pathserver *ps)
{
    pthread_mutex_lock(&ps->mu);
    size_t n = ps->queued + ps->running + ps->ndone;
    pthread_mutex_unlock(&ps->mu);
    return n;
}

int on_pathserver_busy(on_pathserver *ps)
{
    pthread_mutex_lock(&ps->mu);
    int busy = ps->running > 0 || (ps->nworkers > 0 && ps->queued > 0 && !ps->paused);
    pthread_mutex_unlock(&ps->mu);
    return busy;
}

void on_pathserver_pause(on_pathserver *ps)
{
    pthread_mutex_lock(&ps->mu);
    ps->paused = 1;
    while (ps->running) pthread_cond_wait(&ps->done, &ps->mu);
    pthread_mutex_unlock(&ps->mu);
}

void on_pathserver_resume(on_pathserver *ps)
{
    pthread_mutex_lock(&ps->mu);
    ps->paused = 0;
    pthread_cond_broadcast(&ps->work);
    pthread_mutex_unlock(&ps->mu);
}
