/*
 * streamer.c -- tiles loaded and unloaded around agents, decoded on worker threads.
 *
 * Threads share only the job queue and the results list, under one mutex: a worker takes a tile
 * index, reads DIR/tiles/I_J_K.tile and decodes it into a fresh table (on_tile_decode, which touches
 * no tree) and, with params.prepare, builds its box set (on_boxset_build, which touches no tree
 * either), then hands them back. Only on_streamer_update, on the caller's thread, changes the
 * tree: it installs results still wanted, frees the others, queues the loads now needed and unloads
 * tiles no agent, lock or pin keeps. So a search on the caller's thread never sees a tile change
 * under it, and a stale path is detected by the tile salts that install and unload bump.
 */
#include "boxes.h"
#include "tree.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct result {
    struct result *next;
    uint32_t tile;
    on_status status;
    on_table table;
    uint8_t solid;
    on_boxset *boxes;  /* with params.prepare: the tile's box set, built beside the decode */
} result;

/* A whole tree file to read on a worker (a world's hole, on_streamer_load_tree): queued, then done. */
typedef struct tjob {
    struct tjob *next;
    uint32_t id;
    on_tree *tree;      /* the result, NULL on failure */
    on_status status;
    char err[256];      /* on failure: "PATH: reason" */
    char path[];
} tjob;

typedef struct agent {
    double p[3];
    int live;
} agent;

typedef struct tstate {
    uint8_t state;      /* ON_TILE_* */
    uint8_t forced;
    uint32_t locks;
    uint32_t cand;      /* 1 + its index in this update's candidate list, 0 when not in it */
} tstate;

/* A tile and its distance to the nearest agent (load candidates, eviction candidates). */
typedef struct cand {
    uint32_t tile;
    double d;
} cand;

struct on_streamer {
    on_tree *t;         /* NULL once the tree was destroyed (on_streamer_detach) */
    uint32_t ntiles;    /* the tree's tile grid, copied: workers never read the tree */
    int grid[3], depth;
    char *dir;
    on_streamer_params p;
    tstate *tiles;
    agent *agents;
    uint32_t nagents, agentcap;
    uint32_t *loaded;   /* indices of loaded tiles (unordered) */
    size_t nloaded;
    uint32_t *pinned;   /* tiles locked or forced (unordered): update() visits these, not every tile */
    size_t npinned;
    size_t nqueued, nfailed;
    cand *cands;        /* scratch: padding loads of one update, nearest first (capacity ntiles) */
    cand *evict;        /* scratch: loaded tiles no rule needs now, farthest first (capacity ntiles) */
    uint32_t *waiting;  /* tiles held back by max_loaded in the last update */
    size_t nwaiting, evicted;
    on_stream_event *ev; /* events of the last update */
    size_t nev, evcap;
    int evlost;          /* an event could not be stored (out of memory) */
    /* shared with the workers, under mu */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    uint32_t *jobs;     /* ring of queued tile indices, capacity ntiles */
    size_t jhead, jcount;
    result *results;
    tjob *tjobs, *tdone; /* tree files queued (LIFO, order does not matter), and read */
    size_t inflight;    /* jobs taken by workers, not yet in results */
    int stop;
    size_t decoded;
    double decode_seconds;
    pthread_t *threads;
    int nthreads;
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Read and decode one tile (any thread: reads only the streamer's copies of the tree's grid). */
static result *load_tile(const on_streamer *s, uint32_t tile)
{
    result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->tile = tile;
    int ijk[3] = {(int)(tile % (uint32_t)s->grid[0]), (int)((tile / (uint32_t)s->grid[0]) % (uint32_t)s->grid[1]),
                  (int)(tile / ((uint32_t)s->grid[0] * (uint32_t)s->grid[1]))};
    size_t plen = strlen(s->dir) + 64;
    char *path = malloc(plen);
    if (!path) {
        r->status = ON_FAILURE | ON_NO_MEMORY;
        return r;
    }
    snprintf(path, plen, "%s/tiles/%d_%d_%d.tile", s->dir, ijk[0], ijk[1], ijk[2]);
    uint8_t *buf;
    size_t len;
    r->status = on_read_file_max(path, on_tile_file_max_bytes(s->depth), &buf, &len, NULL, 0);
    free(path);
    if (on_ok(r->status)) {
        r->status = on_tile_file_decode(s->depth, ijk, buf, len, &r->table, &r->solid);
        free(buf);
    }
    /* out of memory here leaves the tile without a graph (searches take its cells), not unloaded */
    if (on_ok(r->status) && s->p.prepare) on_boxset_build(&r->table, r->solid, s->depth, &r->boxes);
    return r;
}

static void *worker(void *arg)
{
    on_streamer *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->jcount == 0 && !s->tjobs) pthread_cond_wait(&s->work, &s->mu);
        if (s->stop) break;
        if (s->tjobs) { /* a tree file: read it outside the lock (a FIFO is refused by the reader) */
            tjob *j = s->tjobs;
            s->tjobs = j->next;
            s->inflight++;
            pthread_mutex_unlock(&s->mu);
            j->status = on_tree_load_msg(j->path, &j->tree, j->err, sizeof j->err);
            pthread_mutex_lock(&s->mu);
            s->inflight--;
            j->next = s->tdone;
            s->tdone = j;
            pthread_cond_broadcast(&s->done);
            continue;
        }
        uint32_t tile = s->jobs[s->jhead];
        s->jhead = (s->jhead + 1) % s->ntiles;
        s->jcount--;
        s->inflight++;
        pthread_mutex_unlock(&s->mu);
        double t0 = now_seconds();
        result *r = load_tile(s, tile);
        double dt = now_seconds() - t0;
        pthread_mutex_lock(&s->mu);
        s->inflight--;
        s->decode_seconds += dt;
        if (r) {
            s->decoded++;
            r->next = s->results;
            s->results = r;
        } else {
            /* could not even allocate the result: hand back a marker by re-queueing the tile */
            s->jobs[(s->jhead + s->jcount) % s->ntiles] = tile;
            s->jcount++;
        }
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

on_status on_streamer_create(on_tree *t, const char *dir, const on_streamer_params *p, on_streamer **out)
{
    *out = NULL;
    if (!t || !dir || !p || !(p->load_padding >= 0) || !isfinite(p->load_padding) || !isfinite(p->unload_padding) ||
        !(p->unload_padding > p->load_padding) || p->workers < 0 || p->workers > 16)
        return ON_FAILURE | ON_INVALID;
    if (t->streamer) return ON_FAILURE | ON_INVALID; /* one streamer per tree: both would unload tiles */
    on_streamer *s = calloc(1, sizeof *s);
    if (!s) return ON_FAILURE | ON_NO_MEMORY;
    s->t = t;
    s->ntiles = t->ntiles;
    memcpy(s->grid, t->p.tiles, sizeof s->grid);
    s->depth = t->p.depth;
    s->p = *p;
    s->dir = malloc(strlen(dir) + 1);
    s->tiles = calloc(t->ntiles, sizeof *s->tiles);
    s->loaded = malloc(t->ntiles * sizeof *s->loaded);
    s->pinned = malloc(t->ntiles * sizeof *s->pinned);
    s->jobs = malloc(t->ntiles * sizeof *s->jobs);
    s->cands = malloc(t->ntiles * sizeof *s->cands);
    s->evict = malloc(t->ntiles * sizeof *s->evict);
    s->waiting = malloc(t->ntiles * sizeof *s->waiting);
    s->threads = calloc((size_t)(p->workers ? p->workers : 1), sizeof *s->threads);
    if (!s->dir || !s->tiles || !s->loaded || !s->pinned || !s->jobs || !s->cands || !s->evict || !s->waiting ||
        !s->threads) {
        free(s->cands);
        free(s->evict);
        free(s->waiting);
        free(s->dir);
        free(s->tiles);
        free(s->loaded);
        free(s->pinned);
        free(s->jobs);
        free(s->threads);
        free(s);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    strcpy(s->dir, dir);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    for (int i = 0; i < p->workers; i++) {
        if (pthread_create(&s->threads[i], NULL, worker, s) != 0) break;
        s->nthreads++;
    }
    if (s->nthreads != p->workers) {
        on_streamer_destroy(s);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    for (uint32_t i = 0; i < t->ntiles; i++) on_tree_unload_tile(t, i);
    t->streamer = s;
    *out = s;
    return ON_SUCCESS;
}

/* Join the workers and drop every queued or finished load: afterwards no thread but the caller's
 * touches the streamer. Tiles marked queued go back to unloaded. */
static void stop_workers(on_streamer *s)
{
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nthreads; i++) pthread_join(s->threads[i], NULL);
    s->nthreads = 0;
    s->jcount = 0;
    while (s->results) {
        result *r = s->results;
        s->results = r->next;
        on_table_free(&r->table);
        on_boxset_free(r->boxes);
        free(r);
    }
    for (uint32_t i = 0; i < s->ntiles; i++)
        if (s->tiles[i].state == ON_TILE_QUEUED) s->tiles[i].state = ON_TILE_UNLOADED;
    s->nqueued = 0;
    for (int pass = 0; pass < 2; pass++) {
        tjob **list = pass ? &s->tdone : &s->tjobs;
        while (*list) {
            tjob *j = *list;
            *list = j->next;
            on_tree_destroy(j->tree);
            free(j);
        }
    }
    for (size_t i = 0; i < s->nev; i++) s->ev[i].tree = NULL; /* handed out already: the caller owns them */
}

void on_streamer_detach(on_streamer *s)
{
    stop_workers(s);
    s->t->streamer = NULL;
    s->t = NULL;
}

void on_streamer_destroy(on_streamer *s)
{
    if (!s) return;
    if (s->t) s->t->streamer = NULL;
    stop_workers(s);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    free(s->dir);
    free(s->tiles);
    free(s->ev);
    free(s->agents);
    free(s->loaded);
    free(s->pinned);
    free(s->jobs);
    free(s->cands);
    free(s->evict);
    free(s->waiting);
    free(s->threads);
    free(s);
}

/* ---- agents, locks, pins --------------------------------------------------------------------- */

static int finite3(const double p[3]) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

on_status on_streamer_add_agent(on_streamer *s, const double p[3], uint32_t *id)
{
    if (!s->t || !finite3(p)) return ON_FAILURE | ON_INVALID;
    uint32_t i = 0;
    while (i < s->nagents && s->agents[i].live) i++;
    if (i == s->nagents) {
        if (s->nagents == s->agentcap) {
            uint32_t nc = s->agentcap ? s->agentcap * 2 : 16;
            agent *bigger = realloc(s->agents, nc * sizeof *bigger);
            if (!bigger) return ON_FAILURE | ON_NO_MEMORY;
            s->agents = bigger;
            s->agentcap = nc;
        }
        s->nagents++;
    }
    memcpy(s->agents[i].p, p, sizeof s->agents[i].p);
    s->agents[i].live = 1;
    *id = i;
    return ON_SUCCESS;
}

on_status on_streamer_move_agent(on_streamer *s, uint32_t id, const double p[3])
{
    if (!s->t || id >= s->nagents || !s->agents[id].live || !finite3(p)) return ON_FAILURE | ON_INVALID;
    memcpy(s->agents[id].p, p, sizeof s->agents[id].p);
    return ON_SUCCESS;
}

on_status on_streamer_remove_agent(on_streamer *s, uint32_t id)
{
    if (!s->t || id >= s->nagents || !s->agents[id].live) return ON_FAILURE | ON_INVALID;
    s->agents[id].live = 0;
    return ON_SUCCESS;
}

static int is_pinned(const tstate *ts) { return ts->locks != 0 || ts->forced; }

/* Keep the pinned list in step with a tile's locks and pin; was = whether it was pinned before. */
static void repin(on_streamer *s, uint32_t tile, int was)
{
    int now = is_pinned(&s->tiles[tile]);
    if (now && !was) {
        s->pinned[s->npinned++] = tile;
    } else if (!now && was) {
        for (size_t i = 0; i < s->npinned; i++)
            if (s->pinned[i] == tile) {
                s->pinned[i] = s->pinned[--s->npinned];
                break;
            }
    }
}

on_status on_streamer_lock(on_streamer *s, uint32_t tile)
{
    if (!s->t || tile >= s->ntiles || s->tiles[tile].locks == UINT32_MAX) return ON_FAILURE | ON_INVALID;
    int was = is_pinned(&s->tiles[tile]);
    s->tiles[tile].locks++;
    repin(s, tile, was);
    return ON_SUCCESS;
}

on_status on_streamer_unlock(on_streamer *s, uint32_t tile)
{
    if (!s->t || tile >= s->ntiles || s->tiles[tile].locks == 0) return ON_FAILURE | ON_INVALID;
    int was = is_pinned(&s->tiles[tile]);
    s->tiles[tile].locks--;
    repin(s, tile, was);
    return ON_SUCCESS;
}

on_status on_streamer_force_load(on_streamer *s, uint32_t tile)
{
    if (!s->t || tile >= s->ntiles) return ON_FAILURE | ON_INVALID;
    int was = is_pinned(&s->tiles[tile]);
    s->tiles[tile].forced = 1;
    repin(s, tile, was);
    return ON_SUCCESS;
}

static void do_unload(on_streamer *s, uint32_t tile)
{
    on_tree_unload_tile(s->t, tile);
    s->tiles[tile].state = ON_TILE_UNLOADED;
    for (size_t i = 0; i < s->nloaded; i++)
        if (s->loaded[i] == tile) {
            s->loaded[i] = s->loaded[--s->nloaded];
            break;
        }
}

static void emit(on_streamer *s, uint32_t tile, int kind, on_status st)
{
    if (s->nev == s->evcap) {
        size_t nc = s->evcap ? s->evcap * 2 : 64;
        on_stream_event *bigger = realloc(s->ev, nc * sizeof *bigger);
        if (!bigger) {
            s->evlost = 1;
            return;
        }
        s->ev = bigger;
        s->evcap = nc;
    }
    s->ev[s->nev].tile = tile;
    s->ev[s->nev].kind = kind;
    s->ev[s->nev].status = st;
    s->ev[s->nev].tree = NULL;
    s->ev[s->nev].err[0] = 0;
    s->nev++;
}

on_status on_streamer_force_unload(on_streamer *s, uint32_t tile)
{
    if (!s->t || tile >= s->ntiles) return ON_FAILURE | ON_INVALID;
    int was = is_pinned(&s->tiles[tile]);
    s->tiles[tile].forced = 0;
    repin(s, tile, was);
    if (s->tiles[tile].state == ON_TILE_LOADED && !s->tiles[tile].locks) do_unload(s, tile);
    return ON_SUCCESS;
}

on_status on_streamer_retry(on_streamer *s, uint32_t tile)
{
    if (!s->t || tile >= s->ntiles) return ON_FAILURE | ON_INVALID;
    if (s->tiles[tile].state == ON_TILE_FAILED) {
        s->tiles[tile].state = ON_TILE_UNLOADED;
        s->nfailed--;
    }
    return ON_SUCCESS;
}

int on_streamer_tile_state(const on_streamer *s, uint32_t tile)
{
    return s->t && tile < s->ntiles ? s->tiles[tile].state : -1;
}

/* Queue reading DIR-relative or absolute `path` as a whole tree (a world's hole) on a worker; the
 * next update that finds it read reports it (ON_EVENT_TREE_LOADED with the tree, owned by the
 * caller from then on, or ON_EVENT_TREE_FAILED). Without workers it is read in that update. */
on_status on_streamer_load_tree(on_streamer *s, uint32_t id, const char *path)
{
    if (!s->t || !path) return ON_FAILURE | ON_INVALID;
    size_t n = strlen(path);
    tjob *j = calloc(1, sizeof *j + n + 1);
    if (!j) return ON_FAILURE | ON_NO_MEMORY;
    j->id = id;
    memcpy(j->path, path, n + 1);
    pthread_mutex_lock(&s->mu);
    j->next = s->tjobs;
    s->tjobs = j;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
    return ON_SUCCESS;
}

/* Trees read since the last update, as events (the caller holds none of the locks). Without workers
 * the queued ones are read here, on the caller's thread. */
static void report_trees(on_streamer *s, tjob *done)
{
    if (s->nthreads == 0) {
        while (s->tjobs) {
            tjob *j = s->tjobs;
            s->tjobs = j->next;
            j->status = on_tree_load_msg(j->path, &j->tree, j->err, sizeof j->err);
            j->next = done;
            done = j;
        }
    }
    while (done) {
        tjob *j = done;
        done = j->next;
        size_t before = s->nev;
        emit(s, j->id, on_ok(j->status) ? ON_EVENT_TREE_LOADED : ON_EVENT_TREE_FAILED, j->status);
        if (s->nev > before) {
            s->ev[before].tree = j->tree;
            snprintf(s->ev[before].err, sizeof s->ev[before].err, "%s", on_ok(j->status) ? "" : j->err);
        } else {
            on_tree_destroy(j->tree); /* no room to report it: as if never read */
        }
        free(j);
    }
}

/* ---- update ---------------------------------------------------------------------------------- */

/* Distance from p to the world box of a tile (0 inside). */
static double tile_dist(const on_tree *t, uint32_t tile, const double p[3])
{
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    double size = (double)t->n * t->p.scale, d2 = 0;
    for (int k = 0; k < 3; k++) {
        double lo = t->p.origin[k] + ijk[k] * size, hi = lo + size;
        double e = p[k] < lo ? lo - p[k] : p[k] > hi ? p[k] - hi : 0;
        d2 += e * e;
    }
    return sqrt(d2);
}

static int near_agent(const on_streamer *s, uint32_t tile, double pad)
{
    for (uint32_t a = 0; a < s->nagents; a++)
        if (s->agents[a].live && tile_dist(s->t, tile, s->agents[a].p) <= pad) return 1;
    return 0;
}

/* Distance from a tile to the nearest live agent (HUGE_VAL with none). */
static double nearest_agent(const on_streamer *s, uint32_t tile)
{
    double best = HUGE_VAL;
    for (uint32_t a = 0; a < s->nagents; a++)
        if (s->agents[a].live) best = fmin(best, tile_dist(s->t, tile, s->agents[a].p));
    return best;
}

/* Queue a load (the caller holds mu; the caller checked max_loaded). */
static void queue_load(on_streamer *s, uint32_t tile)
{
    tstate *ts = &s->tiles[tile];
    if (ts->state != ON_TILE_UNLOADED) return;
    ts->state = ON_TILE_QUEUED;
    s->nqueued++;
    if (s->nthreads == 0) { /* no workers: load here, now */
        double t0 = now_seconds();
        result *r = load_tile(s, tile);
        s->decode_seconds += now_seconds() - t0;
        s->decoded += r != NULL;
        if (!r) {
            ts->state = ON_TILE_UNLOADED;
            s->nqueued--;
            return;
        }
        r->next = s->results;
        s->results = r;
        return;
    }
    s->jobs[(s->jhead + s->jcount) % s->ntiles] = tile;
    s->jcount++;
    pthread_cond_signal(&s->work);
}

static int by_distance(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->tile < y->tile ? -1 : x->tile > y->tile;
}

/* Loaded tiles that no rule needs now (not pinned, beyond load_padding of every agent: kept only by
 * unload_padding), farthest first: what max_loaded may unload to make room for a needed tile. */
static size_t find_evictable(on_streamer *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nloaded; i++) {
        uint32_t tile = s->loaded[i];
        if (is_pinned(&s->tiles[tile])) continue;
        double d = nearest_agent(s, tile);
        if (d > s->p.load_padding) s->evict[n++] = (cand){tile, -d};
    }
    qsort(s->evict, n, sizeof *s->evict, by_distance);
    return n;
}

/* Step 1 of an update: start the loads the rules ask for. Locked and forced tiles load whatever
 * max_loaded says (a lock is a promise to the caller, so it wins over the limit: the loaded count
 * may exceed max_loaded by the pinned tiles); above the limit, loaded tiles no rule needs (kept only
 * by unload_padding) are unloaded, farthest first. Tiles within load_padding of an agent then load
 * nearest first while loaded + queued < max_loaded; at the limit such an unneeded tile is unloaded
 * to make room, and what still does not fit is listed as waiting (never a silent wait:
 * on_streamer_waiting, stats.waiting). The caller holds mu. */
static void start_loads(on_streamer *s)
{
    const on_tree *t = s->t;
    double tsize = (double)t->n * t->p.scale;
    for (size_t i = 0; i < s->npinned; i++)
        if (s->tiles[s->pinned[i]].state == ON_TILE_UNLOADED) queue_load(s, s->pinned[i]);
    size_t nc = 0;
    for (uint32_t a = 0; a < s->nagents; a++) {
        if (!s->agents[a].live) continue;
        /* A superset of the tiles the load padding can reach (one tile more on each side, so rounding
         * never drops a tile whose box lies exactly load_padding away), clamped to the grid (empty
         * when off it); tile_dist alone decides, the same way on every side. */
        int lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            double rel = (s->agents[a].p[k] - t->p.origin[k]) / tsize, pad = s->p.load_padding / tsize;
            double l = fmax(0.0, floor(rel - pad) - 1), h = fmin((double)t->p.tiles[k] - 1, floor(rel + pad) + 1);
            lo[k] = l > h ? 1 : (int)l;
            hi[k] = l > h ? 0 : (int)h;
        }
        for (int k = lo[2]; k <= hi[2]; k++)
            for (int j = lo[1]; j <= hi[1]; j++)
                for (int i = lo[0]; i <= hi[0]; i++) {
                    uint32_t tile = on_tile_index(t, i, j, k);
                    tstate *ts = &s->tiles[tile];
                    if (ts->state != ON_TILE_UNLOADED) continue;
                    double d = tile_dist(t, tile, s->agents[a].p);
                    if (d > s->p.load_padding) continue;
                    if (!ts->cand) {
                        s->cands[nc++] = (cand){tile, d};
                        ts->cand = (uint32_t)nc;
                    } else {
                        s->cands[ts->cand - 1].d = fmin(s->cands[ts->cand - 1].d, d);
                    }
                }
    }
    for (size_t c = 0; c < nc; c++) s->tiles[s->cands[c].tile].cand = 0;
    qsort(s->cands, nc, sizeof *s->cands, by_distance);
    size_t nev = 0, ev = 0;
    int evict_known = 0;
    s->nwaiting = 0;
    /* above the limit (pinned tiles came in): tiles no rule needs go first */
    if (s->p.max_loaded && s->nloaded + s->nqueued > s->p.max_loaded) {
        nev = find_evictable(s);
        evict_known = 1;
        while (ev < nev && s->nloaded + s->nqueued > s->p.max_loaded) {
            uint32_t out = s->evict[ev++].tile;
            do_unload(s, out);
            emit(s, out, ON_EVENT_UNLOADED, ON_SUCCESS);
            s->evicted++;
        }
    }
    for (size_t c = 0; c < nc; c++) {
        uint32_t tile = s->cands[c].tile;
        if (s->p.max_loaded && s->nloaded + s->nqueued >= s->p.max_loaded) {
            if (!evict_known) {
                nev = find_evictable(s);
                evict_known = 1;
            }
            if (ev == nev) {
                s->waiting[s->nwaiting++] = tile;
                continue;
            }
            uint32_t out = s->evict[ev++].tile;
            do_unload(s, out);
            emit(s, out, ON_EVENT_UNLOADED, ON_SUCCESS);
            s->evicted++;
        }
        queue_load(s, tile);
    }
}

static void install_results(on_streamer *s, result *list)
{
    while (list) {
        result *r = list;
        list = r->next;
        tstate *ts = &s->tiles[r->tile];
        if (ts->state == ON_TILE_QUEUED) {
            s->nqueued--;
            if (on_ok(r->status)) {
                on_tree_install_tile(s->t, r->tile, &r->table, r->solid);
                if (r->boxes) on_tree_adopt_boxes(s->t, r->tile, r->boxes);
                r->boxes = NULL;
                ts->state = ON_TILE_LOADED;
                s->loaded[s->nloaded++] = r->tile;
                emit(s, r->tile, ON_EVENT_LOADED, ON_SUCCESS);
            } else {
                ts->state = ON_TILE_FAILED;
                s->nfailed++;
                emit(s, r->tile, ON_EVENT_FAILED, r->status);
            }
        }
        on_table_free(&r->table);
        on_boxset_free(r->boxes);
        free(r);
    }
}

on_status on_streamer_update(on_streamer *s, int wait, const on_stream_event **ev, size_t *nev)
{
    s->nev = 0;
    s->evlost = 0;
    *ev = s->ev;
    *nev = 0;
    if (!s->t) return ON_FAILURE | ON_INVALID;
    /* 1. loads now needed: tiles near agents, locked or pinned */
    pthread_mutex_lock(&s->mu);
    start_loads(s);
    /* 2. finished loads (all of the queued ones when asked to wait) */
    if (wait)
        while (s->jcount || s->inflight || (s->tjobs && s->nthreads)) pthread_cond_wait(&s->done, &s->mu);
    result *list = s->results;
    s->results = NULL;
    tjob *trees = s->tdone;
    s->tdone = NULL;
    pthread_mutex_unlock(&s->mu);
    install_results(s, list);
    report_trees(s, trees);
    /* 3. unloads: loaded tiles no agent, lock or pin keeps */
    for (size_t i = 0; i < s->nloaded;) {
        uint32_t tile = s->loaded[i];
        const tstate *ts = &s->tiles[tile];
        if (!ts->locks && !ts->forced && !near_agent(s, tile, s->p.unload_padding)) {
            do_unload(s, tile); /* moves the last entry into slot i */
            emit(s, tile, ON_EVENT_UNLOADED, ON_SUCCESS);
        } else {
            i++;
        }
    }
    *ev = s->ev;
    *nev = s->nev;
    return s->evlost ? (ON_SUCCESS | ON_NO_MEMORY) : ON_SUCCESS;
}

void on_streamer_stats_get(on_streamer *s, on_streamer_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!s->t) return;
    for (uint32_t a = 0; a < s->nagents; a++) st->agents += s->agents[a].live;
    st->loaded = s->nloaded;
    st->queued = s->nqueued;
    st->failed = s->nfailed;
    st->waiting = s->nwaiting;
    st->evicted = s->evicted;
    for (size_t i = 0; i < s->npinned; i++) st->locked += s->tiles[s->pinned[i]].locks != 0;
    pthread_mutex_lock(&s->mu);
    st->decoded = s->decoded;
    st->decode_seconds = s->decode_seconds;
    pthread_mutex_unlock(&s->mu);
    on_tree_stats ts;
    on_tree_stats_get(s->t, &ts);
    st->tree_bytes = ts.bytes;
}

void on_streamer_waiting(const on_streamer *s, const uint32_t **tiles, size_t *n)
{
    *tiles = s->waiting;
    *n = s->t ? s->nwaiting : 0;
}
