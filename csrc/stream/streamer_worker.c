/*
 * streamer_worker.c -- the streamer's worker threads (see streamer.h): a worker takes a queued tile,
 * reads and decodes its file, blocks the obstacles copied for it (and, with params.prepare, builds
 * its box set after; with on_streamer_set_joins instead, the same set for the route planner's joins)
 * and its line-of-sight masks without touching the tree, reads and decodes its graph file when a
 * world graph is set (without touching the world graph), and hands the result back under the mutex; tree
 * files (a world's holes) are read the same way. Without workers the same reads happen inside
 * on_streamer_update, on the caller's thread.
 */
#include "streamer.h"

#include "celladj.h"
#include "losmap.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

double on_streamer_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double on_streamer_thread_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return on_streamer_now();
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void on_streamer_free_result(result *r)
{
    on_tgraph_free(r->graph);
    on_table_free(&r->table);
    on_table_free(&r->snap);
    on_boxset_free(r->boxes);
    on_boxset_free(r->joins);
    on_losmap_free(r->los);
    on_celladj_free(r->adj);
    on_table_free(&r->adjtab);
    on_obstacles_copy_free(r->obs);
    free(r);
}

const char *on_streamer_graph_reason(on_status st)
{
    if (st & ON_NO_MEMORY) return "out_of_memory";
    if (st & ON_VERSION) return "version";
    if (st & ON_CORRUPT) return "corrupt";
    return (st & ON_INVALID) ? "depth" : "invalid";
}

/* The reason of a graph whose tag is not its tile's (world.lua's add_graph gives the same). */
#define GRAPH_OTHER_BAKE "built from another version of its tile (bake the tile again)"

/* Read and decode tile ijk's graph file beside its tile file (path: the tile's, ending ".tile") into
 * r->graph, or set r->gstatus and r->gerr: the reader's message without its "PATH: " and "cannot
 * read: " (what pack.read_file gives after the path), or the decoder's reason, or GRAPH_OTHER_BAKE
 * when its tag is not r->tile_tag (a graph left from another bake of the tile: as the full load,
 * world.lua, refuses it; ON_MISPLACED, an intact file that belongs elsewhere). Any thread: the file
 * goes through the core's reader (a FIFO, device or directory is refused unopened, never blocks). */
static void load_graph(const on_streamer *s, char *path, size_t max, result *r)
{
    size_t n = strlen(path);
    memcpy(path + n - 5, ".graph", 7); /* the caller left room: "%s/tiles/I_J_K.tile" + 64 */
    char err[sizeof r->gerr + 512];
    uint8_t *buf;
    size_t len;
    r->graph_read = 1;
    r->gstatus = on_read_file_max(path, max, &buf, &len, err, sizeof err);
    if (on_ok(r->gstatus)) {
        r->gstatus = on_tgraph_decode(buf, len, s->depth, &r->graph);
        free(buf);
        if (!on_ok(r->gstatus)) {
            snprintf(r->gerr, sizeof r->gerr, "%s", on_streamer_graph_reason(r->gstatus));
            return;
        }
        on_tgraph_info gi;
        on_tgraph_get_info(r->graph, &gi);
        if (gi.tag != r->tile_tag) {
            on_tgraph_free(r->graph);
            r->graph = NULL;
            r->gstatus = ON_FAILURE | ON_MISPLACED;
            snprintf(r->gerr, sizeof r->gerr, "%s", GRAPH_OTHER_BAKE);
        }
        return;
    }
    const char *why = err;
    size_t pl = strlen(path);
    if (strncmp(why, path, pl) == 0 && strncmp(why + pl, ": ", 2) == 0) why += pl + 2;
    if (strncmp(why, "cannot read: ", 13) == 0) why += 13;
    size_t k = strlen(why);
    if (k >= sizeof r->gerr) k = sizeof r->gerr - 1; /* (the OS's reasons are short) */
    memcpy(r->gerr, why, k);
    r->gerr[k] = 0;
}

/* Read and decode one tile (any thread: reads only the streamer's copies of the tree's grid), with
 * obstacle copy obs blocked in it (through *scratch, a tree of the grid made when first needed; when
 * that fails the install blocks them) before its box set is built. Takes obs (NULL: on failure to
 * allocate the result, when obs is left to the caller). */
static result *load_tile(const on_streamer *s, uint32_t tile, on_obstacle_copy *obs, on_tree **scratch, int graphs,
                         size_t graph_max, int los, int joins, int adj, int later)
{
    result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->tile = tile;
    r->obs = obs;
    on_table_init(&r->table);
    on_table_init(&r->snap);
    on_table_init(&r->adjtab);
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
    if (on_ok(r->status)) {
        r->status = on_tile_file_decode(s->depth, ijk, buf, len, &r->table, &r->solid);
        if (on_ok(r->status) && graphs) r->tile_tag = on_tile_file_tag(buf, len); /* (its CRC, checked) */
        free(buf);
    }
    if (on_ok(r->status) && graphs) load_graph(s, path, graph_max, r);
    free(path);
    if (on_ok(r->status) && (obs || (adj && !r->solid)) && !*scratch) {
        on_tree_params tp = {{s->grid[0], s->grid[1], s->grid[2]}, s->depth, 1.0, {0, 0, 0}, 0};
        on_tree_create(&tp, scratch); /* (out of memory: the install blocks obs, no adjacency built) */
    }
    if (on_ok(r->status) && obs) {
        r->snap_solid = r->solid;
        if (*scratch) r->applied = on_obstacles_apply_copy(*scratch, tile, obs, &r->table, &r->solid, &r->snap) == 0;
    }
    /* out of memory here leaves the tile without a graph (searches take its cells), not unloaded */
    if (on_ok(r->status) && s->p.prepare) on_boxset_build(&r->table, r->solid, s->depth, &r->boxes);
    /* the route planner's join set (out of memory: none, its joins build the blocks they reach) */
    if (on_ok(r->status) && joins && !s->p.prepare) {
        double t0 = on_streamer_now();
        on_boxset_build(&r->table, r->solid, s->depth, &r->joins);
        r->join_seconds = on_streamer_now() - t0;
    }
    /* With more loads queued behind the tile (later), its masks and cell adjacency are built after them,
     * from one copy of its table (a jjob, adj_job): the tile is installed after its decode alone (about
     * a quarter of the worker's time for a 512^3 terrain tile), so the tiles navigators stand in and
     * wait for come in 3-4 times sooner when many are queued at once (a cold start). */
    int want_los = on_ok(r->status) && los && !r->solid;
    int want_adj = on_ok(r->status) && adj && !r->solid && *scratch;
    if (later && (want_los || want_adj) && on_table_copy(&r->table, &r->adjtab) == 0) {
        r->adj_later = want_adj;
        r->los_later = want_los;
        return r; /* (out of memory for the copy: both built now, below) */
    }
    /* (out of memory: none, the first line of sight through the tile builds them) */
    if (want_los) r->los = on_losmap_build(&r->table, r->solid, (uint32_t)s->depth);
    /* the cell adjacency of the tile as decoded (and blocked): on_celladj_build reads only the tree's
     * grid and depth, here the scratch tree's copy of them (out of memory: none, and a search on the
     * caller's thread builds it unless its tree is deferred) */
    if (want_adj) r->adj = on_celladj_build(*scratch, tile, &r->table);
    return r;
}

/* Build job j's join set (or cell adjacency, with the grid's scratch tree) from its table copy, then
 * free the copy (any thread). */
static void build_rejoin(const on_streamer *s, jjob *j, on_tree **scratch)
{
    double t0 = on_streamer_now();
    if (j->adj && j->do_los) j->lmap = on_losmap_build(&j->tab, j->solid, (uint32_t)s->depth); /* (none: NULL) */
    if (j->adj && !j->do_adj) {
        j->seconds = on_streamer_now() - t0;
        return;
    }
    if (j->adj) {
        if (!*scratch) {
            on_tree_params tp = {{s->grid[0], s->grid[1], s->grid[2]}, s->depth, 1.0, {0, 0, 0}, 0};
            on_tree_create(&tp, scratch);
        }
        if (*scratch) j->cadj = on_celladj_build(*scratch, j->tile, &j->tab); /* (out of memory: none) */
        j->seconds = on_streamer_now() - t0;
        return; /* (the table stays: the adjacency reads it until it is published in its tile) */
    }
    on_boxset_build(&j->tab, j->solid, s->depth, &j->set); /* (out of memory: none, tried again) */
    j->seconds = on_streamer_now() - t0;
    on_table_free(&j->tab);
}

void on_streamer_push_jjobs(on_streamer *s, jjob *list)
{
    if (!list) return;
    pthread_mutex_lock(&s->mu);
    while (list) {
        jjob *j = list;
        list = j->next;
        j->next = s->jjobs;
        s->jjobs = j;
    }
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->mu);
}

void on_streamer_free_jjobs(jjob *list)
{
    while (list) {
        jjob *j = list;
        list = j->next;
        on_table_free(&j->tab);
        on_boxset_free(j->set);
        on_celladj_free(j->cadj);
        on_losmap_free(j->lmap);
        free(j);
    }
}

/* A job building tile's join set (adj 0) or cell adjacency (adj 1) from a copy of its table, put on
 * *list; with sliced, the copy's slots are left for copy_slices to fill over the next updates
 * (j->copied 0); -1 when out of memory (none queued). */
static int copy_job(on_streamer *s, uint32_t tile, int adj, int sliced, jjob **list)
{
    const on_tile *tl = &s->t->tiles[tile];
    jjob *j = calloc(1, sizeof *j);
    if (!j) return -1;
    if ((sliced ? on_table_alloc_like(&tl->table, &j->tab) : on_table_copy(&tl->table, &j->tab)) != 0) {
        free(j);
        return -1;
    }
    j->copied = sliced ? 0 : j->tab.cap;
    j->tile = tile;
    j->salt = tl->salt;
    j->solid = tl->solid;
    j->adj = (uint8_t)adj;
    j->do_adj = (uint8_t)adj;
    if (adj) s->tiles[tile].readj++;
    else s->tiles[tile].rejoin = 1;
    j->next = *list;
    *list = j;
    return 0;
}

/* The table copies under way (s->copying, oldest first): at most `slots` slots copied in all (the
 * rest left for the next updates); a job whose tile was unloaded or changed since it was made is
 * dropped (its tile still lacks the cache: a later update finds it again). Returns the jobs whose copy
 * is whole, taken off the list. */
static jjob *copy_slices(on_streamer *s, uint32_t slots)
{
    jjob *ready = NULL, **pp = &s->copying;
    while (*pp) {
        jjob *j = *pp;
        const on_tile *tl = &s->t->tiles[j->tile];
        if (!tl->loaded || tl->salt != j->salt || tl->table.cap != j->tab.cap || tl->table.count != j->tab.count) {
            *pp = j->next;
            j->next = NULL;
            if (j->adj) s->tiles[j->tile].readj--;
            else s->tiles[j->tile].rejoin = 0;
            on_streamer_free_jjobs(j);
            continue;
        }
        uint32_t n = j->tab.cap - j->copied;
        if (n > slots) n = slots;
        if (n) {
            memcpy(j->tab.keys + j->copied, tl->table.keys + j->copied, (size_t)n * sizeof *j->tab.keys);
            memcpy(j->tab.vals + j->copied, tl->table.vals + j->copied, n);
            j->copied += n;
            slots -= n;
        }
        if (j->copied < j->tab.cap) break; /* (this update's slots are spent) */
        *pp = j->next;
        j->next = ready;
        ready = j;
    }
    return ready;
}

void on_streamer_queue_rejoins(on_streamer *s, int wait)
{
    on_tree *t = s->t;
    int joins = s->joins && !s->p.prepare, adj = !t->no_cell_adj;
    int sliced = s->nthreads > 0 && !wait;
    jjob *list = NULL;
    if (joins || adj) {
        int adj_left = 1; /* (an adjacency's table copy an update) */
        for (size_t i = 0; i < s->nloaded; i++) {
            uint32_t tile = s->loaded[i];
            const on_tile *tl = &t->tiles[tile];
            if (joins && !s->tiles[tile].rejoin && !on_tile_joins(t, tile) && !on_tile_boxes(t, tile) &&
                copy_job(s, tile, 0, sliced, &list) != 0)
                break; /* (out of memory: tried again by the next update) */
            if (adj && adj_left && !tl->solid && !s->tiles[tile].readj &&
                !atomic_load_explicit(&tl->adj, memory_order_acquire)) {
                if (copy_job(s, tile, 1, sliced, &list) != 0) break;
                adj_left = 0;
            }
        }
    }
    if (s->nthreads == 0) { /* no workers: here, now */
        if (!list) return;
        for (jjob *j = list; j; j = j->next) {
            build_rejoin(s, j, &s->scratch);
            if (!j->adj) s->join_seconds += j->seconds; /* (an adjacency is no join set) */
        }
        on_streamer_adopt_rejoins(s, list);
        return;
    }
    if (!list && !s->copying) return;
    /* the new jobs after those under way; all of them made whole when waiting (no bound) */
    jjob **tail = &s->copying;
    while (*tail) tail = &(*tail)->next;
    *tail = list;
    on_streamer_push_jjobs(s, copy_slices(s, wait ? UINT32_MAX : ON_STREAM_COPY_SLOTS));
}

void on_streamer_adopt_rejoins(on_streamer *s, jjob *list)
{
    for (jjob *j = list; j; j = j->next) {
        const on_tile *tl = &s->t->tiles[j->tile];
        if (j->adj) { /* a tile's adjacency (and masks) built after the loads or an edit: for the tile as copied */
            s->tiles[j->tile].readj--;
            /* the masks, unless the tile changed since, the tree's masks were turned off or a line of
             * sight's deferred build (on_tree_los_step) gave the tile its own meanwhile */
            if (j->do_los && tl->loaded && tl->salt == j->salt) {
                if (j->lmap && !s->t->no_los_masks && !atomic_load_explicit(&tl->los, memory_order_acquire)) {
                    on_tree_losmap_adopt(s->t, j->tile, j->lmap);
                    j->lmap = NULL;
                    s->masks_built++;
                }
                unsigned char two = 2; /* (set at the install: readers may build them again from now on) */
                atomic_compare_exchange_strong_explicit(&s->t->tiles[j->tile].los_want, &two, 0,
                                                        memory_order_relaxed, memory_order_relaxed);
            }
            if (!j->do_adj) { /* (masks only: the table copy was theirs) */
                on_table_free(&j->tab);
                continue;
            }
            if (j->cadj && tl->loaded && tl->salt == j->salt) {
                on_table_free(&j->tab); /* (published, it reads the tile's own table) */
                if (on_tile_celladj_publish(s->t, j->tile, j->cadj) == j->cadj) s->adj_built++;
                j->cadj = NULL;
            }
            continue;
        }
        s->tiles[j->tile].rejoin = 0;
        if (!j->set || !tl->loaded || tl->salt != j->salt || on_tile_joins(s->t, j->tile)) continue;
        on_tree_adopt_joins(s->t, j->tile, j->set);
        j->set = NULL;
        s->rejoined++;
    }
    on_streamer_free_jjobs(list);
}

/* The allocator's free pages given back to the system when a worker goes idle after work, at most
 * once a second (the caller holds mu; released during the trim). A worker's decodes, table copies and
 * mask builds allocate in glibc's arena of its thread, and what they free between the tiles' long-lived
 * tables stays resident there: on the seed's world streamed (64 tiles, one worker) 107 MB of arena for
 * 59 MB in use, and the main arena keeps the 22 MB of a tree loaded whole before the streamer unloaded
 * it; malloc_trim(0) gives back every free page of every arena (a process's RSS 133 -> 65 MB there). */
#define ON_STREAM_TRIM_GAP 1.0
/* -> 1 when it trimmed (mu was released meanwhile); else *left: the seconds until a trim is due (0: none
 * due). */
static int idle_trim(on_streamer *s, double *left)
{
    *left = 0;
#if defined(__GLIBC__)
    if (!s->trim_due) return 0;
    double t0 = on_streamer_now();
    if (t0 - s->trim_at < ON_STREAM_TRIM_GAP) {
        *left = ON_STREAM_TRIM_GAP - (t0 - s->trim_at);
        return 0;
    }
    s->trim_due = 0;
    s->trim_at = t0;
    pthread_mutex_unlock(&s->mu);
    double c0 = on_streamer_thread_now();
    malloc_trim(0);
    double dt = on_streamer_thread_now() - c0;
    pthread_mutex_lock(&s->mu);
    s->trims++;
    s->trim_seconds += dt;
    return 1;
#else
    s->trim_due = 0;
    return 0;
#endif
}

/* The first update's (on the caller's thread): with workers, glibc's own trim at a free turned off for
 * the process, the workers' idle_trim giving the pages back instead (octonav_stream.h,
 * on_streamer_set_trim_on_free). */
void on_streamer_trim_setting(on_streamer *s)
{
    s->trim_set = 1;
#if defined(__GLIBC__)
    if (s->nthreads > 0 && !s->trim_on_free) mallopt(M_TRIM_THRESHOLD, INT_MAX); /* (process-wide, once) */
#endif
}

/* Wait for work (the caller holds mu), at most `left` seconds when left > 0. */
static void wait_work(on_streamer *s, double left)
{
    if (left <= 0) {
        pthread_cond_wait(&s->work, &s->mu);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* (the condition variable's clock) */
    double ns = (double)ts.tv_nsec + left * 1e9;
    ts.tv_sec += (time_t)(ns / 1e9);
    ts.tv_nsec = (long)(ns - (double)(time_t)(ns / 1e9) * 1e9);
    pthread_cond_timedwait(&s->work, &s->mu, &ts);
}

void *on_streamer_worker(void *arg)
{
    on_streamer *s = arg;
    on_tree *scratch = NULL; /* this worker's (on_obstacles_apply_copy) */
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && (s->jcount == 0 || s->paused) && !s->tjobs && !s->jjobs) {
            double left;
            if (!idle_trim(s, &left)) wait_work(s, left);
        }
        if (s->stop) break;
        if ((s->jcount == 0 || s->paused) && !s->tjobs) { /* a join set to build again: after every load */
            jjob *j = s->jjobs;
            s->jjobs = j->next;
            s->inflight++;
            pthread_mutex_unlock(&s->mu);
            build_rejoin(s, j, &scratch);
            pthread_mutex_lock(&s->mu);
            s->inflight--;
            if (!j->adj) s->join_seconds += j->seconds; /* (an adjacency is no join set) */
            s->trim_due = 1;
            j->next = s->jdone;
            s->jdone = j;
            pthread_cond_broadcast(&s->done);
            continue;
        }
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
        on_obstacle_copy *obs = s->jobobs[tile];
        s->jobobs[tile] = NULL;
        int graphs = s->graphs;
        size_t graph_max = s->graph_max;
        int los = s->los, joins = s->joins, adj = s->adj;
        int later = s->jcount > 0 && !s->paused; /* more loads behind it: its adjacency after them */
        pthread_mutex_unlock(&s->mu);
        double t0 = on_streamer_now();
        result *r = load_tile(s, tile, obs, &scratch, graphs, graph_max, los, joins, adj, later);
        double dt = on_streamer_now() - t0;
        pthread_mutex_lock(&s->mu);
        s->inflight--;
        s->decode_seconds += dt;
        s->trim_due = 1;
        if (r) {
            s->join_seconds += r->join_seconds;
            s->decoded++;
            r->next = s->results;
            s->results = r;
        } else {
            /* could not even allocate the result: hand back a marker by re-queueing the tile */
            s->jobs[(s->jhead + s->jcount) % s->ntiles] = tile;
            s->jcount++;
            s->jobobs[tile] = obs;
        }
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    on_tree_destroy(scratch);
    return NULL;
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
void on_streamer_report_trees(on_streamer *s, tjob *done)
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
        on_streamer_emit(s, j->id, on_ok(j->status) ? ON_EVENT_TREE_LOADED : ON_EVENT_TREE_FAILED, j->status);
        if (s->nev > before) {
            s->ev[before].tree = j->tree;
            snprintf(s->ev[before].err, sizeof s->ev[before].err, "%s", on_ok(j->status) ? "" : j->err);
        } else {
            on_tree_destroy(j->tree); /* no room to report it: as if never read */
        }
        free(j);
    }
}

/* Queue a load (the caller holds mu; the caller checked max_loaded). */
void on_streamer_queue_load(on_streamer *s, uint32_t tile)
{
    tstate *ts = &s->tiles[tile];
    if (ts->state != ON_TILE_UNLOADED) return;
    ts->state = ON_TILE_QUEUED;
    s->nqueued++;
    on_obstacle_copy *obs = on_obstacles_copy_over(s->t, tile); /* (NULL: none, or the install blocks them) */
    if (s->nthreads == 0) { /* no workers: load here, now */
        double t0 = on_streamer_now();
        result *r = load_tile(s, tile, obs, &s->scratch, s->graphs, s->graph_max, s->los, s->joins, s->adj, 0);
        s->decode_seconds += on_streamer_now() - t0;
        s->decoded += r != NULL;
        if (r) s->join_seconds += r->join_seconds;
        if (!r) {
            on_obstacles_copy_free(obs);
            ts->state = ON_TILE_UNLOADED;
            s->nqueued--;
            return;
        }
        r->next = s->results;
        s->results = r;
        return;
    }
    on_obstacles_copy_free(s->jobobs[tile]);
    s->jobobs[tile] = obs;
    s->jobs[(s->jhead + s->jcount) % s->ntiles] = tile;
    s->jcount++;
    pthread_cond_signal(&s->work);
}
