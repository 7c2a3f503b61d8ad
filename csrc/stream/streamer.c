/*
 * streamer.c -- tiles loaded and unloaded around agents, decoded on worker threads: the streamer's
 * life (create, stop the workers, detach from a destroyed tree, destroy), its agents, locks and pins,
 * and its stats. How the threads share the work is in streamer.h; the workers are in
 * streamer_worker.c, the rules of an update in streamer_update.c.
 */
#include "streamer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Free the streamer's arrays and itself (the workers are stopped, or were never started). */
static void free_state(on_streamer *s)
{
    free(s->dir);
    free(s->tiles);
    free(s->ev);
    free(s->agents);
    free(s->loaded);
    free(s->pinned);
    free(s->jobs);
    for (uint32_t i = 0; s->jobobs && i < s->ntiles; i++) on_obstacles_copy_free(s->jobobs[i]);
    free(s->jobobs);
    on_tree_destroy(s->scratch);
    free(s->cands);
    free(s->evict);
    free(s->qord);
    free(s->waiting);
    free(s->threads);
    free(s);
}

static const on_tree_hook streamer_hook; /* (below: stops the streamer when its tree goes) */

on_status on_streamer_create(on_tree *t, const char *dir, const on_streamer_params *p, on_streamer **out)
{
    *out = NULL;
    if (!t || !dir || !p || !(p->load_padding >= 0) || !isfinite(p->load_padding) || !isfinite(p->unload_padding) ||
        !(p->unload_padding > p->load_padding) || p->workers < 0 || p->workers > 16 || !(p->publish_ms >= 0) ||
        !isfinite(p->publish_ms))
        return ON_FAILURE | ON_INVALID;
    if (t->streamer) return ON_FAILURE | ON_INVALID; /* one streamer per tree: both would unload tiles */
    if (on_tree_hook_add(t, &streamer_hook) != 0) return ON_FAILURE | ON_NO_MEMORY;
    on_streamer *s = calloc(1, sizeof *s);
    if (!s) return ON_FAILURE | ON_NO_MEMORY;
    s->t = t;
    s->ntiles = t->ntiles;
    memcpy(s->grid, t->p.tiles, sizeof s->grid);
    s->depth = t->p.depth;
    s->p = *p;
    s->los = !t->no_los_masks;
    s->dir = malloc(strlen(dir) + 1);
    s->tiles = calloc(t->ntiles, sizeof *s->tiles);
    s->loaded = malloc(t->ntiles * sizeof *s->loaded);
    s->pinned = malloc(t->ntiles * sizeof *s->pinned);
    s->jobs = malloc(t->ntiles * sizeof *s->jobs);
    s->jobobs = calloc(t->ntiles, sizeof *s->jobobs);
    s->cands = malloc(2 * (size_t)t->ntiles * sizeof *s->cands); /* (the candidates, then the loads among them) */
    s->evict = malloc(t->ntiles * sizeof *s->evict);
    s->qord = malloc(t->ntiles * sizeof *s->qord);
    s->waiting = malloc(t->ntiles * sizeof *s->waiting);
    s->threads = calloc((size_t)(p->workers ? p->workers : 1), sizeof *s->threads);
    if (!s->dir || !s->tiles || !s->loaded || !s->pinned || !s->jobs || !s->jobobs || !s->cands || !s->evict ||
        !s->qord || !s->waiting || !s->threads) {
        free_state(s);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    strcpy(s->dir, dir);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    for (int i = 0; i < p->workers; i++) {
        if (pthread_create(&s->threads[i], NULL, on_streamer_worker, s) != 0) break;
        s->nthreads++;
    }
    if (s->nthreads != p->workers) {
        on_streamer_destroy(s);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_tree_unload_tile(t, i);
        on_obstacles_tile_unloaded(t, i); /* (the obstacles stay: they come back with the tiles) */
    }
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
        on_streamer_free_result(r);
    }
    for (uint32_t i = 0; i < s->ntiles; i++) { /* (queued loads dropped: their obstacle copies too) */
        on_obstacles_copy_free(s->jobobs[i]);
        s->jobobs[i] = NULL;
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
    on_streamer_free_jjobs(s->jjobs);
    on_streamer_free_jjobs(s->jdone);
    on_streamer_free_jjobs(s->copying);
    s->jjobs = s->jdone = s->copying = NULL;
    for (uint32_t i = 0; i < s->ntiles; i++) s->tiles[i].rejoin = 0, s->tiles[i].readj = 0;
    for (size_t i = 0; i < s->nev; i++) s->ev[i].tree = NULL; /* handed out already: the caller owns them */
}

on_streamer *on_tree_streamer(const on_tree *t)
{
    return t ? t->streamer : NULL;
}

/* Destroying a tree stops its streamer first (the tree's hook, tree.h): the workers are joined, queued
 * loads dropped, and the streamer answers ON_INVALID from then on (on_streamer_destroy still frees it). */
static void hook_stop(on_tree *t)
{
    on_streamer *s = t->streamer;
    if (!s) return;
    stop_workers(s);
    s->t->streamer = NULL;
    s->t = NULL;
}
static const on_tree_hook streamer_hook = {hook_stop, NULL, NULL, NULL};

void on_streamer_destroy(on_streamer *s)
{
    if (!s) return;
    if (s->t) s->t->streamer = NULL;
    stop_workers(s);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    free_state(s);
}

on_status on_streamer_set_graph(on_streamer *s, on_wgraph *w, size_t max_bytes)
{
    if (!s->t) return ON_FAILURE | ON_INVALID;
    if (w) {
        const on_tree_params *p = on_wgraph_params(w);
        if (p->depth != s->depth || memcmp(p->tiles, s->grid, sizeof s->grid) != 0) return ON_FAILURE | ON_INVALID;
    }
    s->graph = w;
    pthread_mutex_lock(&s->mu); /* the workers read these as they take a job */
    s->graphs = w != NULL;
    s->graph_max = max_bytes;
    pthread_mutex_unlock(&s->mu);
    return ON_SUCCESS;
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

on_status on_streamer_agent_position(const on_streamer *s, uint32_t id, double p[3])
{
    if (!s->t || id >= s->nagents || !s->agents[id].live) return ON_FAILURE | ON_INVALID;
    memcpy(p, s->agents[id].p, sizeof s->agents[id].p);
    return ON_SUCCESS;
}

int on_streamer_agents_in(const on_streamer *s, const double lo[3], const double hi[3])
{
    for (uint32_t a = 0; a < s->nagents; a++) {
        const double *p = s->agents[a].p;
        if (s->agents[a].live && p[0] >= lo[0] && p[0] <= hi[0] && p[1] >= lo[1] && p[1] <= hi[1] && p[2] >= lo[2] &&
            p[2] <= hi[2])
            return 1;
    }
    return 0;
}

on_status on_streamer_remove_agent(on_streamer *s, uint32_t id)
{
    if (!s->t || id >= s->nagents || !s->agents[id].live) return ON_FAILURE | ON_INVALID;
    s->agents[id].live = 0;
    return ON_SUCCESS;
}

/* Keep the pinned list in step with a tile's locks and pin; was = whether it was pinned before. */
static void repin(on_streamer *s, uint32_t tile, int was)
{
    int now = on_streamer_is_pinned(&s->tiles[tile]);
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

/* Change a tile's lock count by dlock (+1, -1 or 0) and its pin (forced: 1 set, 0 clear, -1 as it is),
 * keeping the pinned list in step. ON_INVALID for a bad tile, too many locks or no lock to remove. */
static on_status change_pins(on_streamer *s, uint32_t tile, int dlock, int forced)
{
    if (!s->t || tile >= s->ntiles) return ON_FAILURE | ON_INVALID;
    tstate *ts = &s->tiles[tile];
    if ((dlock > 0 && ts->locks == UINT32_MAX) || (dlock < 0 && ts->locks == 0)) return ON_FAILURE | ON_INVALID;
    int was = on_streamer_is_pinned(ts);
    if (dlock > 0) ts->locks++;
    if (dlock < 0) ts->locks--;
    if (forced >= 0) ts->forced = (uint8_t)forced;
    repin(s, tile, was);
    return ON_SUCCESS;
}

on_status on_streamer_lock(on_streamer *s, uint32_t tile) { return change_pins(s, tile, 1, -1); }

on_status on_streamer_unlock(on_streamer *s, uint32_t tile) { return change_pins(s, tile, -1, -1); }

on_status on_streamer_force_load(on_streamer *s, uint32_t tile) { return change_pins(s, tile, 0, 1); }

on_status on_streamer_force_unload(on_streamer *s, uint32_t tile)
{
    on_status st = change_pins(s, tile, 0, 0);
    if (on_ok(st) && s->tiles[tile].state == ON_TILE_LOADED && !s->tiles[tile].locks) on_streamer_do_unload(s, tile);
    return st;
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
    st->cancelled = s->cancelled;
    st->deferred = s->deferred;
    for (size_t i = 0; i < s->npinned; i++) st->locked += s->tiles[s->pinned[i]].locks != 0;
    pthread_mutex_lock(&s->mu);
    st->decoded = s->decoded;
    st->decode_seconds = s->decode_seconds;
    st->masks_built = s->masks_built;
    st->trims = s->trims;
    st->trim_seconds = s->trim_seconds;
    st->adjacency_built = s->adj_built;
    st->reading = s->jcount + s->inflight;
    pthread_mutex_unlock(&s->mu);
    on_tree_stats ts;
    on_tree_stats_get(s->t, &ts);
    st->tree_bytes = ts.bytes;
}

void on_streamer_set_joins(on_streamer *s, int on)
{
    pthread_mutex_lock(&s->mu);
    s->joins = on != 0;
    pthread_mutex_unlock(&s->mu);
}

void on_streamer_join_stats(on_streamer *s, size_t *tiles, size_t *bytes, double *seconds, size_t *rebuilt)
{
    *tiles = 0;
    *bytes = 0;
    *seconds = 0;
    *rebuilt = s->rejoined;
    if (!s->t) return;
    pthread_mutex_lock(&s->mu);
    *seconds = s->join_seconds;
    pthread_mutex_unlock(&s->mu);
    *bytes = on_tree_joins_bytes(s->t, tiles);
}

void on_streamer_waiting(const on_streamer *s, const uint32_t **tiles, size_t *n)
{
    *tiles = s->waiting;
    *n = s->t ? s->nwaiting : 0;
}

void on_streamer_set_trim_on_free(on_streamer *s, int on)
{
    s->trim_on_free = on != 0;
}

void on_streamer_hold(on_streamer *s, int on)
{
    pthread_mutex_lock(&s->mu);
    s->paused = on != 0;
    if (!s->paused) pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->mu);
}

size_t on_streamer_queue(on_streamer *s, uint32_t *tiles, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->jcount;
    for (size_t i = 0; i < n && i < cap; i++) tiles[i] = s->jobs[(s->jhead + i) % s->ntiles];
    pthread_mutex_unlock(&s->mu);
    return n;
}
