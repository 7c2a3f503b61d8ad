/*
 * streamer_update.c -- what on_streamer_update does (see streamer.h), on the caller's thread: start
 * the loads the rules ask for (agents' load padding, locks and pins, within max_loaded: eviction
 * farthest first, the rest listed as waiting), install the finished loads still wanted, report the
 * tree files read, unload the tiles no agent, lock or pin keeps, and list it all as events. With a
 * world graph set, a tile's graph comes and goes with the tile: linked when it is installed, dropped
 * when it is unloaded.
 */
#include "streamer.h"

#include "celladj.h"
#include "losmap.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int by_distance(const cand *x, const cand *y)
{
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->tile < y->tile ? -1 : x->tile > y->tile;
}

/* The update's sorts, in place: glibc's qsort takes a merge buffer from malloc once the array passes
 * 1 KB (43 queued loads, 64 candidates), and a malloc of that size first consolidates the allocator's
 * fast bins, where Lua's collector frees its small objects: 0.25-0.7 ms of the caller's thread in
 * one update with 45-62 loads queued (the seed's world, 100 streamed navigators). A heap sort
 * allocates nothing; both orders are total (ties broken by tile or queue position), so the result is
 * the one qsort gave. */
#define ON_STREAM_HEAPSORT(name, type, cmp)                                                          \
    static void name##_sift(type *a, size_t i, size_t n)                                             \
    {                                                                                                \
        for (;;) {                                                                                   \
            size_t c = 2 * i + 1;                                                                    \
            if (c >= n) return;                                                                      \
            if (c + 1 < n && cmp(&a[c], &a[c + 1]) < 0) c++;                                         \
            if (cmp(&a[i], &a[c]) >= 0) return;                                                      \
            type x = a[i];                                                                           \
            a[i] = a[c];                                                                             \
            a[c] = x;                                                                                \
            i = c;                                                                                   \
        }                                                                                            \
    }                                                                                                \
    static void name(type *a, size_t n)                                                              \
    {                                                                                                \
        for (size_t i = n / 2; i-- > 0;) name##_sift(a, i, n);                                       \
        for (size_t e = n; e-- > 1;) {                                                               \
            type x = a[0];                                                                           \
            a[0] = a[e];                                                                             \
            a[e] = x;                                                                                \
            name##_sift(a, 0, e);                                                                    \
        }                                                                                            \
    }

ON_STREAM_HEAPSORT(sort_cands, cand, by_distance)


/* Loaded tiles that no rule needs now (not pinned, beyond load_padding of every agent: kept only by
 * unload_padding), farthest first: what max_loaded may unload to make room for a needed tile. */
static size_t find_evictable(on_streamer *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nloaded; i++) {
        uint32_t tile = s->loaded[i];
        if (on_streamer_is_pinned(&s->tiles[tile])) continue;
        double d = nearest_agent(s, tile);
        if (d > s->p.load_padding) s->evict[n++] = (cand){tile, -d, 0};
    }
    sort_cands(s->evict, n);
    return n;
}

static int by_queue_order(const qent *x, const qent *y)
{
    if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
    if (x->inside != y->inside) return x->inside > y->inside ? -1 : 1;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A queued or finished load's place in line (qent), from this update's candidates (s->cands, valid
 * from start_loads until the update's end): tier 0 when an agent stands in the tile, 1 when it is
 * locked or pinned, else 2. */
static qent queue_key(const on_streamer *s, uint32_t tile, uint32_t pos)
{
    const tstate *ts = &s->tiles[tile];
    const cand *c = ts->cand ? &s->cands[ts->cand - 1] : NULL;
    uint32_t inside = c ? c->inside : 0;
    int tier = inside ? 0 : on_streamer_is_pinned(ts) ? 1 : 2;
    return (qent){tile, pos, tier, inside, c ? c->d : HUGE_VAL};
}

ON_STREAM_HEAPSORT(sort_queue, qent, by_queue_order)

/* Unload a tile for the update's rules, counted against max_unloads (unloads_left). */
static void rule_unload(on_streamer *s, uint32_t tile, size_t *unloads_left)
{
    on_streamer_do_unload(s, tile);
    on_streamer_emit(s, tile, ON_EVENT_UNLOADED, ON_SUCCESS);
    (*unloads_left)--;
}

/* The queued loads no worker took yet (the ring), after this update's candidates are known (d: a
 * tile's index + 1 in s->cands, the distance to its nearest agent when within load_padding): those no
 * rule wants any more leave the queue (not pinned, beyond load_padding of every agent: reading them
 * would only feed the next unload); the rest are ordered as the workers should take them (queue_key):
 * tiles agents stand in first, the most agents first (what their navigators wait in: a navigator's
 * first move waits for its own tile alone), then the other locked or pinned tiles (a goal's tile, what
 * a search waits for), then the rest; each nearest an agent first, then as queued. The caller holds mu. */
static void order_queue(on_streamer *s, int cancel)
{
    size_t n = 0;
    for (size_t i = 0; i < s->jcount; i++) {
        uint32_t tile = s->jobs[(s->jhead + i) % s->ntiles];
        tstate *ts = &s->tiles[tile];
        if (cancel && !on_streamer_is_pinned(ts) && ts->cand == 0) {
            ts->state = ON_TILE_UNLOADED;
            s->nqueued--;
            s->cancelled++;
            on_obstacles_copy_free(s->jobobs[tile]);
            s->jobobs[tile] = NULL;
            continue;
        }
        s->qord[n++] = queue_key(s, tile, (uint32_t)i);
    }
    sort_queue(s->qord, n);
    for (size_t i = 0; i < n; i++) s->jobs[(s->jhead + i) % s->ntiles] = s->qord[i].tile;
    s->jcount = n;
}

/* Step 1 of an update: start the loads the rules ask for. Locked and forced tiles load whatever
 * max_loaded says (a lock is a promise to the caller, so it wins over the limit: the loaded count
 * may exceed max_loaded by the pinned tiles); above the limit, loaded tiles no rule needs (kept only
 * by unload_padding) are unloaded, farthest first. Tiles within load_padding of an agent then load
 * nearest first while loaded + queued < max_loaded; at the limit such an unneeded tile is unloaded
 * to make room, and what still does not fit is listed as waiting (never a silent wait:
 * on_streamer_waiting, stats.waiting). Queued loads no rule wants any more are dropped and the queue
 * ordered (order_queue). Evictions count against max_unloads (unloads_left): past it a needed tile
 * waits. The caller holds mu. */
static void start_loads(on_streamer *s, size_t *unloads_left)
{
    const on_tree *t = s->t;
    double tsize = (double)t->n * t->p.scale;
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
                    /* (queued tiles too: their distance orders the queue) */
                    if (ts->state != ON_TILE_UNLOADED && ts->state != ON_TILE_QUEUED) continue;
                    double d = tile_dist(t, tile, s->agents[a].p);
                    if (d > s->p.load_padding) continue;
                    if (!ts->cand) {
                        s->cands[nc++] = (cand){tile, d, d == 0};
                        ts->cand = (uint32_t)nc;
                    } else {
                        s->cands[ts->cand - 1].d = fmin(s->cands[ts->cand - 1].d, d);
                        s->cands[ts->cand - 1].inside += d == 0;
                    }
                }
    }
    /* queued loads no rule wants any more leave the queue first (their room goes to the others) */
    order_queue(s, 1);
    for (size_t i = 0; i < s->npinned; i++)
        if (s->tiles[s->pinned[i]].state == ON_TILE_UNLOADED) on_streamer_queue_load(s, s->pinned[i]);
    /* the load candidates: tiles within load_padding not loaded or queued yet, nearest first */
    size_t nl = 0;
    for (size_t c = 0; c < nc; c++)
        if (s->tiles[s->cands[c].tile].state == ON_TILE_UNLOADED) s->evict[nl++] = s->cands[c];
    memcpy(s->cands + nc, s->evict, nl * sizeof *s->cands); /* (kept apart: cand indices still point below nc) */
    cand *loads = s->cands + nc;
    sort_cands(loads, nl);
    size_t nev = 0, ev = 0;
    int evict_known = 0;
    s->nwaiting = 0;
    /* above the limit (pinned tiles came in): tiles no rule needs go first */
    if (s->p.max_loaded && s->nloaded + s->nqueued > s->p.max_loaded) {
        nev = find_evictable(s);
        evict_known = 1;
        while (ev < nev && *unloads_left && s->nloaded + s->nqueued > s->p.max_loaded)
        {
            rule_unload(s, s->evict[ev++].tile, unloads_left);
            s->evicted++;
        }
    }
    for (size_t c = 0; c < nl; c++) {
        uint32_t tile = loads[c].tile;
        if (s->p.max_loaded && s->nloaded + s->nqueued >= s->p.max_loaded) {
            if (!evict_known) {
                nev = find_evictable(s);
                evict_known = 1;
            }
            if (ev == nev || !*unloads_left) {
                s->waiting[s->nwaiting++] = tile;
                continue;
            }
            rule_unload(s, s->evict[ev++].tile, unloads_left);
            s->evicted++;
        }
        on_streamer_queue_load(s, tile);
    }
    /* the new loads take their places in the queue (without workers they are read already) */
    if (s->nthreads) order_queue(s, 0);
    s->ncands = nc; /* (their tiles' cand indices stay set until the update's end: take_results) */
}

/* The graph read beside an installed tile goes into the world graph (which takes it); a graph that
 * could not be read, decoded or added is an ON_EVENT_GRAPH_FAILED event, its tile staying loaded. */
static void link_graph(on_streamer *s, result *r)
{
    if (r->graph) {
        on_status st = on_wgraph_add_tile(s->graph, r->tile, r->graph); /* (frees it on failure too) */
        r->graph = NULL;
        if (on_ok(st)) return;
        r->gstatus = st;
        snprintf(r->gerr, sizeof r->gerr, "%s", on_streamer_graph_reason(st));
    }
    size_t before = s->nev;
    on_streamer_emit(s, r->tile, ON_EVENT_GRAPH_FAILED, r->gstatus);
    if (s->nev > before) snprintf(s->ev[before].err, sizeof s->ev[before].err, "%s", r->gerr);
}

/* Put finished loads back for the next updates (counted in s->deferred). */
static void defer_results(on_streamer *s, result *later)
{
    if (!later) return;
    size_t n = 1;
    result *last = later;
    while (last->next) {
        last = last->next;
        n++;
    }
    s->deferred += n;
    pthread_mutex_lock(&s->mu);
    last->next = s->results;
    s->results = later;
    pthread_mutex_unlock(&s->mu);
}

/* Has this update's installing and unloading used up params.publish_ms (t0: its start on the caller's
 * thread CPU clock; never with publish_ms 0 or when the update waits)? */
static int out_of_time(const on_streamer *s, double t0, int wait)
{
    return !wait && s->p.publish_ms > 0 && (on_streamer_thread_now() - t0) * 1e3 >= s->p.publish_ms;
}

/* Install the finished loads of list in order, the first always, the next ones while params.publish_ms
 * allows (t0, wait: out_of_time); the rest go back for the next updates. *did: set when one was
 * handled (this update's first piece of work is always done). */
/* A job building the adjacency of tile r->tile, installed from r->table with salt `salt`, from the
 * copy the worker made (r->adjtab, taken), put on *jobs; NULL jobs when out of memory (none built). */
static void adj_job(on_streamer *s, result *r, uint32_t salt, jjob **jobs)
{
    jjob *j = calloc(1, sizeof *j);
    if (!j) return;
    j->tile = r->tile;
    j->salt = salt;
    j->adj = 1;
    j->do_adj = r->adj_later != 0;
    j->do_los = r->los_later != 0;
    j->tab = r->adjtab;
    on_table_init(&r->adjtab);
    j->solid = s->t->tiles[r->tile].solid;
    j->next = *jobs;
    *jobs = j;
    s->tiles[r->tile].readj++;
}

static void install_results(on_streamer *s, result *list, double t0, int wait, int *did)
{
    jjob *adjs = NULL; /* adjacencies to build after the loads (result.adj_later) */
    while (list) {
        if (*did && out_of_time(s, t0, wait)) {
            defer_results(s, list);
            break;
        }
        *did = 1;
        result *r = list;
        list = r->next;
        tstate *ts = &s->tiles[r->tile];
        if (ts->state == ON_TILE_QUEUED) {
            s->nqueued--;
            uint32_t salt0 = 0;
            if (on_ok(r->status)) {
                on_tree_install_tile(s->t, r->tile, &r->table, r->solid);
                salt0 = s->t->tiles[r->tile].salt;
                if (r->boxes) on_tree_adopt_boxes(s->t, r->tile, r->boxes);
                r->boxes = NULL;
                /* the join set of the tile as installed: the reinstall below (obstacles changed since
                 * the job was queued) drops it, and the planner builds what its joins reach there */
                if (r->joins) on_tree_adopt_joins(s->t, r->tile, r->joins);
                r->joins = NULL;
                /* masks of the tile as installed (a change below drops them, on_tree_touch); none when
                 * the tree's masks were turned off since the job was taken */
                if (r->los && !s->t->no_los_masks) {
                    on_tree_losmap_adopt(s->t, r->tile, r->los);
                    s->masks_built++;
                } else {
                    on_losmap_free(r->los);
                }
                r->los = NULL;
                /* its cell adjacency, built from the table just installed (the same change drops it);
                 * none when the tree's adjacencies were turned off since the job was taken */
                if (r->adj && on_tile_celladj_publish(s->t, r->tile, r->adj) == r->adj) s->adj_built++;
                r->adj = NULL;
                /* the tree's obstacles over it blocked again (an obstacle outlives its tiles' unloads):
                 * by the worker when they are still those of the queued load, else here */
                int got = r->applied ? on_obstacles_adopt(s->t, r->tile, r->obs, &r->snap, r->snap_solid) : 0;
                if (got < 0) {
                    r->status = ON_FAILURE | ON_NO_MEMORY;
                } else if (got == 0 && r->applied) { /* changed since: from the tile as read */
                    int prepared = on_tile_boxes(s->t, r->tile) != NULL;
                    on_tree_install_tile(s->t, r->tile, &r->snap, r->snap_solid);
                    r->status = on_obstacles_tile_loaded(s->t, r->tile);
                    /* (out of memory in the build leaves the tile without a graph, as a worker's does) */
                    if (on_ok(r->status) && prepared && !on_tile_boxes(s->t, r->tile)) on_tree_prepare(s->t, r->tile, NULL);
                } else if (got == 0) {
                    r->status = on_obstacles_tile_loaded(s->t, r->tile);
                }
                if (on_failed(r->status)) { /* never loaded without them */
                    on_tree_unload_tile(s->t, r->tile);
                    on_obstacles_tile_unloaded(s->t, r->tile);
                }
            }
            if (on_ok(r->status)) {
                ts->state = ON_TILE_LOADED;
                s->loaded[s->nloaded++] = r->tile;
                on_streamer_emit(s, r->tile, ON_EVENT_LOADED, ON_SUCCESS);
                if (s->graph && r->graph_read) link_graph(s, r);
                /* the adjacency after the loads, for the tile as read (not when the caller blocked
                 * obstacles in it since: no adjacency then, as when a change drops it) */
                if ((r->adj_later || r->los_later) && s->t->tiles[r->tile].salt == salt0) {
                    adj_job(s, r, salt0, &adjs);
                    /* masks coming from a worker: no line of sight builds them on its own thread, nor
                     * on_tree_los_step in a budget's frame (los_want 2, as for a tile over the masks'
                     * budget; reads take the node table meanwhile); the adoption or any change of the
                     * tile (on_tree_touch) clears it */
                    unsigned char none = 0;
                    if (r->los_later)
                        atomic_compare_exchange_strong_explicit(&s->t->tiles[r->tile].los_want, &none, 2,
                                                                memory_order_relaxed, memory_order_relaxed);
                }
            } else {
                ts->state = ON_TILE_FAILED;
                s->nfailed++;
                on_streamer_emit(s, r->tile, ON_EVENT_FAILED, r->status);
            }
        }
        on_streamer_free_result(r);
    }
    on_streamer_push_jjobs(s, adjs);
}

/* Is finished load x before y in line (queue_key: tiles agents stand in, then locked or pinned
 * ones, ...; ties by tile)? */
static int result_before(const on_streamer *s, const result *x, const result *y)
{
    qent a = queue_key(s, x->tile, x->tile), b = queue_key(s, y->tile, y->tile);
    return by_queue_order(&a, &b) < 0;
}

/* A list of finished loads in line order (a merge sort: no allocation). */
static result *sort_results(const on_streamer *s, result *list)
{
    if (!list || !list->next) return list;
    result *a = NULL, *b = NULL;
    for (int k = 0; list; k ^= 1) { /* split in two */
        result *r = list;
        list = r->next;
        if (k) {
            r->next = b;
            b = r;
        } else {
            r->next = a;
            a = r;
        }
    }
    a = sort_results(s, a);
    b = sort_results(s, b);
    result *out = NULL, **tail = &out;
    while (a && b) {
        result **from = result_before(s, b, a) ? &b : &a; /* (a first on ties: never, keys are unique) */
        result *r = *from;
        *from = r->next;
        *tail = r;
        tail = &r->next;
    }
    *tail = a ? a : b;
    return out;
}

/* The finished loads this update handles (list: taken from s->results under mu): all of them when
 * limit is SIZE_MAX, else the first limit in line order (the queue's: tiles agents stand in first, then
 * locked or pinned ones, ...; so when workers finish faster than max_publish installs, the tiles
 * navigators wait in come first whatever order they were read in); the others go back to s->results
 * for the next updates (counted in s->deferred). bounded: the installs may stop at publish_ms, so all
 * of them are in line order too (else, as they came). Returns the ones to handle. */
static result *take_results(on_streamer *s, result *list, size_t limit, int bounded)
{
    if (limit == SIZE_MAX && !bounded) return list;
    list = sort_results(s, list);
    if (limit == SIZE_MAX) return list;
    result *now = list, **tail = &now;
    while (*tail && limit) {
        tail = &(*tail)->next;
        limit--;
    }
    result *later = *tail;
    *tail = NULL;
    defer_results(s, later);
    return now;
}

on_status on_streamer_update(on_streamer *s, int wait, const on_stream_event **ev, size_t *nev)
{
    s->nev = 0;
    s->evlost = 0;
    s->deferred = 0;
    *ev = s->ev;
    *nev = 0;
    if (!s->t) return ON_FAILURE | ON_INVALID;
    if (!s->trim_set) on_streamer_trim_setting(s);
    /* the caller's thread's work this update: installs (and frees) and unloads, bounded unless waiting
     * (by count, and by time: publish_ms from here) */
    double t0 = on_streamer_thread_now();
    size_t publish = (wait || !s->nthreads || !s->p.max_publish) ? SIZE_MAX : s->p.max_publish;
    size_t unloads_left = (wait || !s->nthreads || !s->p.max_unloads) ? SIZE_MAX : s->p.max_unloads;
    /* 0. the join sets changes of loaded tiles dropped since the last update, built again */
    on_streamer_queue_rejoins(s, wait);
    pthread_mutex_lock(&s->mu);
    s->los = !s->t->no_los_masks; /* (for the jobs taken from now on) */
    if (s->freed_since && s->nthreads) { /* the last update's frees: a worker trims once idle */
        s->freed_since = 0;
        s->trim_due = 1;
        pthread_cond_signal(&s->work);
    }
    s->adj = !s->t->no_cell_adj;
    /* 1. loads now needed: tiles near agents, locked or pinned; the queue ordered */
    start_loads(s, &unloads_left);
    /* 2. finished loads (all of the queued ones when asked to wait, and the join sets too) */
    if (wait && s->paused) {
        s->paused = 0;
        pthread_cond_broadcast(&s->work);
    }
    if (wait)
        while (s->jcount || s->inflight || ((s->tjobs || s->jjobs) && s->nthreads))
            pthread_cond_wait(&s->done, &s->mu);
    result *list = s->results;
    s->results = NULL;
    tjob *trees = s->tdone;
    s->tdone = NULL;
    jjob *joins = s->jdone;
    s->jdone = NULL;
    pthread_mutex_unlock(&s->mu);
    int did = 0;
    install_results(s, take_results(s, list, publish, !wait && s->nthreads && s->p.publish_ms > 0), t0, wait, &did);
    for (size_t c = 0; c < s->ncands; c++) s->tiles[s->cands[c].tile].cand = 0; /* (start_loads') */
    s->ncands = 0;
    if (joins) s->freed_since = 1; /* (their table copies) */
    on_streamer_adopt_rejoins(s, joins);
    if (wait && s->nthreads) { /* the adjacencies the installs queued: built and given too */
        pthread_mutex_lock(&s->mu);
        while (s->inflight || s->jjobs) pthread_cond_wait(&s->done, &s->mu);
        joins = s->jdone;
        s->jdone = NULL;
        pthread_mutex_unlock(&s->mu);
        on_streamer_adopt_rejoins(s, joins);
    }
    on_streamer_report_trees(s, trees);
    /* 3. unloads: loaded tiles no agent, lock or pin keeps (at most unloads_left of them) */
    for (size_t i = 0; i < s->nloaded;) {
        uint32_t tile = s->loaded[i];
        const tstate *ts = &s->tiles[tile];
        if (!ts->locks && !ts->forced && !near_agent(s, tile, s->p.unload_padding)) {
            if (!unloads_left || (did && out_of_time(s, t0, wait))) {
                s->deferred++;
                i++;
                continue;
            }
            rule_unload(s, tile, &unloads_left); /* moves the last entry into slot i */
            did = 1;
        } else {
            i++;
        }
    }
    if (did) s->freed_since = 1;
    *ev = s->ev;
    *nev = s->nev;
    return s->evlost ? (ON_SUCCESS | ON_NO_MEMORY) : ON_SUCCESS;
}
