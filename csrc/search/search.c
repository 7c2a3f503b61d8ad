/*
 * search.c -- the query: its API (create, init / update / finalize, find) and the A* loop over a
 * search graph, sliced (the counterpart of Detour's dtNavMeshQuery).
 *
 * The rooms it uses: the node pool, node map and open list (nodepool.h); the graph, free cells or
 * prepared boxes, behind one interface (graph.h: region, neighbours, locate, entry point); the path
 * tightening stages (tighten.h); the tiles a search read and its result depends on (tiledeps.h).
 * Each node has a point and edges cost the distance between points. Two point models (opts.points):
 * "face" (the default), as Detour does with polygon edges: a node's point is where it was entered
 * (graph.h's entry point: a cell's shared face centre; over boxes, where the line to the goal crosses
 * the face), which tracks the true length of a path through cells of mixed sizes far better than
 * centres (half the expansions, and the right way round obstacles more often: see README, "Search
 * defaults"); "centre": a cell's point is its centre, a fixed graph on which the Euclidean heuristic
 * is consistent and weight 1 gives the optimal path (Lazy Theta* always uses it). Options: a weight
 * and the seed's size bias (f = g + w*h - bias*size), Lazy Theta* (parents may be any visible
 * ancestor), escalation to greedier weights after a number of expansions, a user heuristic,
 * expansion budgets and partial results. Before searching, `direct` returns the straight segment
 * when the goal is in sight of the start. finalize (search_path.c) builds the result once: the
 * corridor of nodes, refine, simplify, smooth, relax (tighten.h), its tiles and its length. The
 * query's state is in query.h. Area costs (areas.h): with
 * areas, an edge costs its segment's weighted length (edge_cost), and every shortcut (direct,
 * Lazy Theta*'s parent, refine, smooth, relax) is taken only when not dearer; without, every
 * decision is the one made before areas existed (the same paths and expansions).
 */
#include "query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


void on_query_opts_default(on_query_opts *o)
{
    memset(o, 0, sizeof *o);
    o->weight = 1.39;          /* measured: see README, "Search defaults" */
    o->refine = 1;
    o->smooth = ON_SMOOTH_GREEDY;
    o->escalate = 1500;        /* measured: see README, "Search defaults" */
    o->escalate_weight = 2.5;
    o->escalate_size_bias = 1.0;
    o->direct = 1;
    o->relax = 1;              /* measured: see README, "Search defaults" */
}

on_status on_query_create(const on_tree *t, size_t max_nodes, on_query **out)
{
    *out = NULL;
    if (!t || max_nodes < 2 || max_nodes > (1u << 30)) return ON_FAILURE | ON_INVALID;
    on_query *q = calloc(1, sizeof *q);
    if (!q) return ON_FAILURE | ON_NO_MEMORY;
    q->t = t;
    on_pathbuf_reserve(&q->path, 64);
    q->corrcap = 64;
    q->corr = malloc(q->corrcap * sizeof *q->corr);
    q->lcache = malloc(sizeof *q->lcache);
    if (on_pool_init(&q->pool, max_nodes) != 0 || on_tileset_init(&q->touched, 64) != 0 ||
        on_tileset_init(&q->ptiles, 16) != 0 || !q->lcache || on_graph_init(&q->g, t, q->lcache, &q->touched) != 0 ||
        !q->path.p || !q->corr) {
        on_query_destroy(q);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    on_lcache_reset(q->lcache, t);
    q->state = ON_FAILURE | ON_INVALID; /* nothing started */
    *out = q;
    return ON_SUCCESS;
}

void on_query_destroy(on_query *q)
{
    if (!q) return;
    on_pool_free(&q->pool);
    on_graph_free(&q->g);
    on_pathbuf_free(&q->path);
    free(q->faces);
    free(q->clear);
    free(q->corr);
    free(q->lcache);
    on_tileset_free(&q->touched);
    on_tileset_free(&q->ptiles);
    on_areaset_free(&q->areas);
    on_pathbuf_free(&q->alt);
    free(q);
}

const on_tree *on_query_tree(const on_query *q) { return q->t; }

/* ---- the search ------------------------------------------------------------------------------ */

/* 2^layer as a double, for the layers of a cell code (a load where the adjacency loop converted an integer). */
static const double on_pow2_layer[16] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768};

typedef int16_t lm_v8 __attribute__((vector_size(16))); /* (GCC and clang vector extensions) */

/* The landmarks' estimate of the distance from cell `code` of tile `tile` (number ix in its tile's
 * adjacency, or unknown: found) to the goal point, in nav units: their bound on the distance between
 * the two cells' centres, max over the landmarks L of |d(L, cell) - d(L, goal's cell)| (landmarks.h),
 * less the goal point's distance from its cell's centre (the triangle inequality; without it a large
 * goal cell's centre, up to 0.87 of its side from the goal point, misled the search: DC1's mean ratio
 * 0.9282 -> 0.9304 with 16 landmarks, Complex's p99 ratio 0.9951 -> 1.0197). 0 or less for a cell
 * they do not cover. */
static inline double lm_term(const on_query *q, uint32_t tile, uint32_t ix, uint32_t code)
{
    const on_landmarks *lm = q->lm;
    if (__builtin_expect(ix >= lm->ncell[tile], 0)) {
        ix = on_landmarks_find(q->t, lm, tile, code);
        if (ix == UINT32_MAX) return 0;
    }
    const uint16_t *dv = lm->d[tile] + (size_t)ix * (size_t)lm->n;
    /* (a component no landmark reaches has no distance at all: ON_LM_INF is no length; with
     * partial results or a tile unloaded at the build such a cell may still be searched) */
    if (__builtin_expect(dv[0] == ON_LM_INF, 0)) return 0;
    int m = 0, l = 0;
    if (!(lm->n & 7)) { /* 8 landmarks at a time (distances below 2^15: differences fit an int16) */
        lm_v8 acc = {0};
        for (; l < lm->n; l += 8) {
            lm_v8 a, g;
            memcpy(&a, dv + l, sizeof a);
            memcpy(&g, q->lm_goal + l, sizeof g);
            lm_v8 gt = a > g, d = (gt & (a - g)) | (~gt & (g - a)), more = d > acc;
            acc = (more & d) | (~more & acc);
        }
        for (int k = 0; k < 8; k++) m = acc[k] > m ? acc[k] : m;
        return (double)m * lm->step - q->lm_rg;
    }
    for (; l < lm->n; l++) {
        int e = (int)dv[l] - (int)q->lm_goal[l];
        e = e < 0 ? -e : e;
        m = e > m ? e : m;
    }
    return (double)m * lm->step - q->lm_rg;
}

/* (inline: the search asks it for every node it reaches or improves) The estimate from point p of
 * cell c (its graph number aux, or UINT32_MAX) to the goal: the user's heuristic, or the straight
 * line, raised to the landmarks' bound when the search reads them. */
static inline double heuristic(on_query *q, const double p[3], double size, on_cell c, uint32_t aux)
{
    if (__builtin_expect(q->o.heuristic != NULL, 0)) return q->o.heuristic(q->o.heuristic_ud, p, q->b, size);
    double h = on_dist3(p, q->b);
    if (q->lm) {
        double l = lm_term(q, c.tile, aux, c.code);
        if (l > h) h = l;
    }
    return h;
}

/* Whether the new search reads the tree's landmarks: over the plain cells (not the boxes, not cells
 * split at areas), without a user heuristic, when they cover the goal's cell (gi: its number in them,
 * or UINT32_MAX). Sets the goal's distances. */
static void lm_begin(on_query *q, uint32_t gi)
{
    q->lm = NULL;
    const on_landmarks *lm = q->t->landmarks;
    if (!lm || q->no_landmarks || q->g.kind != ON_GRAPH_CELLS || q->o.heuristic || gi == UINT32_MAX) return;
    const uint16_t *dg = lm->d[q->goal_cell.tile] + (size_t)gi * (size_t)lm->n;
    for (int l = 0; l < lm->n; l++) {
        if (dg[l] == ON_LM_INF) return; /* a component without landmarks */
        q->lm_goal[l] = dg[l];
    }
    q->lm = lm;
    q->lm_gen = q->t->landmarks_gen;
    double mn[3], mx[3], gs, gc[3];
    on_graph_region(&q->g, q->goal_cell, mn, mx, &gs);
    for (int k = 0; k < 3; k++) gc[k] = 0.5 * (mn[k] + mx[k]);
    q->lm_rg = on_dist3(gc, q->b);
}

/* The plain cells a and b's numbers in the tree's landmarks (ix[0], ix[1]; UINT32_MAX: none), and
 * whether the landmarks know they lie in different components: the search could not join them (every
 * tile was loaded at their build, and nothing changed since; not asked with partial results, whose
 * search runs to give the nearest point). */
static int lm_apart(const on_query *q, on_cell a, on_cell b, uint32_t ix[2])
{
    const on_landmarks *lm = q->t->landmarks;
    ix[0] = ix[1] = UINT32_MAX;
    if (!lm || q->no_landmarks) return 0;
    ix[0] = on_landmarks_find(q->t, lm, a.tile, a.code);
    ix[1] = on_landmarks_find(q->t, lm, b.tile, b.code);
    return lm->complete && !q->o.partial && ix[0] != UINT32_MAX && ix[1] != UINT32_MAX &&
           lm->comp[a.tile][ix[0]] != lm->comp[b.tile][ix[1]];
}


/* Remember that the search read tile `tile` (salt now); -1 on allocation failure. */
static int touch_tile(on_query *q, uint32_t tile) { return on_tileset_touch(&q->touched, q->t, tile); }

/* Appends c to the corridor (a failed growth is remembered in corr_failed). */
static void corr_push(on_query *q, on_cell c)
{
    if (on_grow((void **)&q->corr, &q->corrcap, q->ncorr + 1, sizeof *q->corr)) {
        q->corr_failed = 1;
        return;
    }
    q->corr[q->ncorr++] = c;
}

/* Collects the cells of a straight walk into the corridor (on_tree_walk_cells). The walk reports the
 * cells around each crossing: skip the ones it just reported. Over prepared boxes entry 0 is the
 * start's box, whose number may equal a cell's code: it is never compared. */
static void corr_sink(void *ud, on_cell c)
{
    on_query *q = ud;
    size_t lo = q->g.kind == ON_GRAPH_BOXES ? 1 : 0;
    for (size_t i = q->ncorr, k = 0; i-- > lo && k < 8; k++)
        if (same_cell(q->corr[i], c)) return;
    corr_push(q, c);
}

/* Cell c last in the corridor: moved there when among the last cells the walk reported (corr_sink's
 * window), else appended. (The walk from the goal's end reports the cells around its last crossing
 * after the start's: turned round, the corridor must begin with the start's cell.) */
static void corr_last(on_query *q, on_cell c)
{
    for (size_t i = q->ncorr, k = 0; i-- > 0 && k < 8; k++)
        if (same_cell(q->corr[i], c)) {
            memmove(q->corr + i, q->corr + i + 1, (q->ncorr - i - 1) * sizeof *q->corr);
            q->corr[q->ncorr - 1] = c;
            return;
        }
    corr_push(q, c);
}

static on_status start(on_query *q, const double a[3], const double b[3], const on_query_opts *o, int cells_only);

/* Node 0 of the just reset pool: cell c at the search's start point (q->a), g 0, no parent, in no heap
 * (the caller sets its f and pushes it). Every pool has room for a first node (on_pool_init). */
static int32_t first_node(on_query *q, on_cell c)
{
    int created;
    int32_t s0 = on_pool_get(&q->pool, c, &created);
    q->pool.nodes[s0].g = 0;
    q->pool.nodes[s0].parent = -1;
    memcpy(q->pool.nodes[s0].pos, q->a, sizeof q->a);
    return s0;
}

/* Whether every tile of the box the two ends' tiles span is loaded (at most 64 of them; more: no).
 * Where tiles stream in, a search waits for the tiles it reaches from the start's side, first those
 * nearest the start (spec/13): it keeps that order there. */
static int span_loaded(const on_query *q, uint32_t ta, uint32_t tb)
{
    int x[3], y[3], lo[3], hi[3];
    on_tile_coords(q->t, ta, x);
    on_tile_coords(q->t, tb, y);
    long n = 1;
    for (int k = 0; k < 3; k++) {
        lo[k] = x[k] < y[k] ? x[k] : y[k];
        hi[k] = x[k] < y[k] ? y[k] : x[k];
        n *= hi[k] - lo[k] + 1;
        if (n > 64) return 0; /* (each factor is at most a grid side: no overflow) */
    }
    for (int i = lo[0]; i <= hi[0]; i++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int k = lo[2]; k <= hi[2]; k++)
                if (!q->t->tiles[on_tile_index(q->t, i, j, k)].loaded) return 0;
    return 1;
}

/* Whether the search may run either way: from the goal's end (reverse_pays) or turned round when it
 * stalls (stalled). Only over the plain cells (over prepared boxes reversing made DB2's p99 ratio
 * 1.0005) with every tile between the ends loaded (span_loaded), and only where nothing after the
 * search depends on its direction but the chain of cells: face points with refine (the nodes' entry
 * points are not read), no areas, no user heuristic (given the goal), no partial results (the nearest
 * to the goal). */
static int either_way(const on_query *q, on_cell sc, on_cell gc)
{
    return !(q->no_reverse || q->g.kind != ON_GRAPH_CELLS || !face_points(q) || q->areas.n || q->o.heuristic ||
             q->o.partial || !q->o.refine || !span_loaded(q, sc.tile, gc.tile));
}

/* Whether to search from the goal's end to the start's. A weighted search floods the small cells in
 * front of the walls that hide the end it heads for; heading from the more hidden end for the more
 * open one floods less. The goal counts as the more hidden end when its straight segment towards the
 * start is blocked within the first 0.3 of the way (tb) and nearer than 1.5 times the start's (ta):
 * a ray walk from the goal (the `direct` check's, which walks from the goal's end, when it ran), then
 * one from the start as far as that decides (tb: the first walk's hit, or -1 when it is still to
 * walk). With one wall midway (tb and ta near 0.5, spec/17's scene) neither end is hidden and the
 * cells' alignment decides: the forward search expands 10 cells there, the reversed 204.
 * Measured on the benchmark's 300 scenarios a map (README, "Search defaults"): DC1 169 -> 134
 * expansions a query (the better of the two directions each time would give 112), Complex 207 -> 177. */
static int reverse_pays(const on_query *q, double tb)
{
    double m[3];
    if (tb < 0) on_tree_raycast(q->t, q->wb, q->wa, &tb); /* (tb: the direct check's, when it ran) */
    if (tb >= 0.3) return 0;
    for (int k = 0; k < 3; k++) m[k] = q->wa[k] + tb / 1.5 * (q->wb[k] - q->wa[k]);
    return on_ok(on_tree_raycast(q->t, q->wa, m, NULL)); /* clear that far: 1.5 ta >= tb */
}

/* Swap the search's ends: a and b, and the goal's cell for `c` (the start's). */
static void swap_ends(on_query *q, on_cell c)
{
    double t[3];
    memcpy(t, q->a, sizeof t);
    memcpy(q->a, q->b, sizeof t);
    memcpy(q->b, t, sizeof t);
    q->goal_cell = c;
    q->swapped = !q->swapped;
}

/* A reversed search ended: the ends back, and the chain of nodes it found (from the start's cell to
 * node 0, the goal's) turned round to run from node 0 back to the start's cell, as a forward search's
 * does. Its nodes keep the reversed search's points and costs (finalize, refining, reads only the
 * chain's cells). */
static void unreverse(on_query *q)
{
    swap_ends(q, q->pool.nodes[0].cell);
    if (q->found < 0) return;
    int32_t prev = -1, i = q->found;
    while (i >= 0) {
        int32_t next = q->pool.nodes[i].parent;
        q->pool.nodes[i].parent = prev;
        prev = i;
        i = next;
    }
    q->found = prev;
}

on_status on_query_init(on_query *q, const double a[3], const double b[3], const on_query_opts *o)
{
    return start(q, a, b, o, 0);
}

/* Begin a search; over the cells when `cells_only` (or when the boxes cannot be used). */
static on_status start(on_query *q, const double a[3], const double b[3], const on_query_opts *o, int cells_only)
{
    memset(&q->info, 0, sizeof q->info);
    on_pool_reset(&q->pool);
    q->path.n = 0;
    q->ncorr = 0;
    q->found = q->best = -1;
    q->best_h2 = INFINITY;
    q->touched.n = 0;
    q->touch_last = UINT32_MAX;
    q->ptiles.n = 0;
    q->direct = 0;
    q->reversed = q->swapped = 0;
    q->may_turn = 0;
    q->visited0 = 0;
    q->stall_at = 0;
    q->stall_wh = INFINITY;
    if (o != &q->o0) { /* (starting again over the cells passes the options kept) */
        if (o) q->o0 = *o;
        else on_query_opts_default(&q->o0);
    }
    q->o = q->o0;
    if (!(q->o.weight >= 0) || !isfinite(q->o.weight) || !isfinite(q->o.size_bias) ||
        q->o.smooth < ON_SMOOTH_NONE || q->o.smooth > ON_SMOOTH_BINARY || q->o.graph < ON_GRAPH_AUTO ||
        q->o.graph > ON_GRAPH_BOXES || (q->o.graph == ON_GRAPH_BOXES && !face_points(q)) ||
        (q->o.nareas && !q->o.areas))
        return q->state = ON_FAILURE | ON_INVALID;
    for (size_t i = 0; i < q->o.nareas; i++)
        if (!on_area_valid(&q->o.areas[i])) return q->state = ON_FAILURE | ON_INVALID;
    if (on_areaset_build(&q->areas, q->t, q->o.areas, q->o.nareas) != 0) return q->state = ON_FAILURE | ON_NO_MEMORY;
    q->info.areas = q->areas.n;
    memmove(q->wa, a, sizeof q->wa);
    memmove(q->wb, b, sizeof q->wb);
    on_graph_use(&q->g, ON_GRAPH_CELLS);
    on_cell sc, gc;
    const double *ends[2] = {a, b};
    on_cell *cells[2] = {&sc, &gc};
    for (int w = 0; w < 2; w++) {
        on_status s = on_tree_locate(q->t, ends[w], cells[w]);
        if (on_ok(s)) continue;
        q->info.which = w;
        if (s & ON_UNLOADED) q->info.loading_tile = cells[w]->tile; /* (the tile, not a cell) */
        if (s & ON_BLOCKED) {
            double nf[3];
            if (on_ok(on_tree_nearest_free(q->t, ends[w], 64, nf))) memcpy(q->info.nearest, nf, sizeof nf);
            else q->info.nearest[0] = q->info.nearest[1] = q->info.nearest[2] = NAN;
        }
        return q->state = s;
    }
    on_to_nav(q->t, a, q->a);
    on_to_nav(q->t, b, q->b);
    on_cell psc = sc, pgc = gc; /* (the plain cells: the landmarks' components) */
    q->lm = NULL;
    for (int w = 0; w < 2; w++) /* an end in an excluded area is as good as blocked */
        if (q->areas.n && on_areaset_excluded(&q->areas, w ? q->b : q->a)) {
            q->info.which = w;
            q->info.nearest[0] = q->info.nearest[1] = q->info.nearest[2] = NAN;
            return q->state = ON_FAILURE | ON_BLOCKED;
        }
    /* (with areas, AUTO keeps to the cells, split at the areas' faces below) */
    if (!cells_only &&
        (q->o.graph == ON_GRAPH_BOXES || (q->o.graph == ON_GRAPH_AUTO && face_points(q) && !q->areas.n))) {
        /* over the boxes when both ends' tiles have valid graphs (ON_GRAPH_BOXES: or not at all) */
        on_cell sb, gb;
        on_graph_use(&q->g, ON_GRAPH_BOXES);
        int sok = on_graph_locate(&q->g, sc, q->a, &sb), gok = sok && on_graph_locate(&q->g, gc, q->b, &gb);
        if (gok) {
            sc = sb;
            gc = gb;
        } else if (q->o.graph == ON_GRAPH_BOXES) {
            q->info.loading_tile = sok ? gc.tile : sc.tile;
            q->info.graph = ON_GRAPH_BOXES;
            return q->state = ON_FAILURE | ON_UNPREPARED;
        } else {
            on_graph_use(&q->g, ON_GRAPH_CELLS);
        }
    }
    if (q->areas.n && q->g.kind == ON_GRAPH_CELLS) { /* cells split at the areas' faces */
        q->g.areas = &q->areas;
        on_graph_use(&q->g, ON_GRAPH_AREA_CELLS);
        on_graph_locate(&q->g, sc, q->a, &sc);
        on_graph_locate(&q->g, gc, q->b, &gc);
    }
    q->info.graph = q->g.kind == ON_GRAPH_BOXES ? ON_GRAPH_BOXES : ON_GRAPH_CELLS;
    q->goal_cell = gc;
    if (touch_tile(q, sc.tile) != 0 || touch_tile(q, gc.tile) != 0) return q->state = ON_FAILURE | ON_NO_MEMORY;
    int32_t s0 = first_node(q, sc); /* node 0: the start */
    if (same_cell(sc, gc)) { /* one free cube or box holds both: the straight segment */
        if (q->areas.n && edge_cost(q, q->a, q->b) == INFINITY) return q->state = ON_FAILURE | ON_UNREACHABLE;
        q->found = s0;
        q->pool.nodes[s0].closed = 1;
        return q->state = ON_SUCCESS;
    }
    double tb = -1; /* (where the walk from the goal's end was blocked: see reverse_pays) */
    if (q->o.direct && q->o.smooth != ON_SMOOTH_NONE &&
        (!q->areas.n || on_areaset_cost(&q->areas, q->a, q->b) == on_dist3(q->a, q->b))) {
        /* in sight: the straight segment is the shortest path, and what smoothing would make of any
         * path found; one walk instead of a search (with areas: when it enters none, the cheapest
         * too, as no path costs less than its length) */
        q->ncorr = 0;
        q->corr_failed = 0;
        /* the endpoints' own cells too: an endpoint on a tile border may lie in a cell the walk,
         * leaving the other way, never enters (and the path depends on that cell staying free).
         * Over the cells the walk runs from the goal's end and the corridor is turned round after:
         * when blocked, where it stopped is the first ray walk reverse_pays needs (on a cold cache
         * each walk of a long segment cost several microseconds: README "Queries in C"). */
        int back = q->g.kind == ON_GRAPH_CELLS;
        double hit = 1;
        corr_sink(q, back ? gc : sc);
        q->info.los++;
        int clear = on_tree_walk_cells_hit(q->t, q->lcache, back ? q->b : q->a, back ? q->a : q->b, corr_sink, q, &hit);
        /* (the rule is not symmetric at exact ties: a segment through a lattice edge may cross both
         * planes at one t from one end and an ulp apart from the other, through the voxel between:
         * seen clear from the goal's end, the path start -> goal is checked from the start's; review
         * of session 14, tests/test_reverse's edge_tie) */
        if (clear && back) {
            q->info.los++;
            clear = on_tree_visible_nav(q->t, q->lcache, q->a, q->b);
            hit = 1; /* (blocked only from the start's end: nothing hides the goal's) */
        }
        if (clear) {
            if (q->g.kind == ON_GRAPH_BOXES) corr_push(q, gc); /* a box: no walked cell is it */
            else if (back) corr_last(q, sc);
            else corr_sink(q, gc);
            if (q->corr_failed) return q->state = ON_FAILURE | ON_NO_MEMORY;
            for (size_t i = 0, j = q->ncorr; back && i + 1 < j; i++, j--) {
                on_cell c = q->corr[i];
                q->corr[i] = q->corr[j - 1];
                q->corr[j - 1] = c;
            }
            for (size_t i = 0; i < q->ncorr; i++)
                if (touch_tile(q, q->corr[i].tile) != 0) return q->state = ON_FAILURE | ON_NO_MEMORY;
            q->direct = 1;
            q->found = s0;
            q->pool.nodes[s0].closed = 1;
            return q->state = ON_SUCCESS;
        }
        q->ncorr = 0;
        if (back) tb = hit;
    }
    uint32_t lix[2]; /* (the ends' numbers in the landmarks) */
    if (lm_apart(q, psc, pgc, lix)) return q->state = ON_FAILURE | ON_UNREACHABLE;
    q->may_turn = either_way(q, sc, gc); /* (and may turn round once: stalled) */
    if (q->may_turn && reverse_pays(q, tb)) { /* from the goal's end: node 0 is the goal's cell */
        swap_ends(q, sc);
        q->reversed = 1;
        sc = gc;
        on_pool_reset(&q->pool);
        s0 = first_node(q, sc);
    }
    double mn[3], mx[3], sz;
    on_graph_region(&q->g, sc, mn, mx, &sz);
    lm_begin(q, lix[q->reversed ? 0 : 1]); /* (the goal's cell: the start's when reversed) */
    if (q->lm) q->may_turn = 0; /* (the landmarks' distances are the goal's) */
    q->stall_lim = 0.2 * q->o.weight * on_dist3(q->a, q->b);
    double h = heuristic(q, q->a, sz, sc, UINT32_MAX);
    if (isnan(h)) return q->state = ON_FAILURE | ON_INVALID;
    q->pool.nodes[s0].f = q->o.weight * h - q->o.size_bias * sz;
    on_pool_push_or_update(&q->pool, (uint32_t)s0);
    return q->state = ON_IN_PROGRESS;
}

/* Lazy Theta*: before expanding u, make sure its parent sees it; otherwise take the best closed
 * neighbour as parent (A*'s choice). */
static void lazy_fix_parent(on_query *q, int32_t u, size_t nnb)
{
    on_snode *n = &q->pool.nodes[u];
    if (n->parent < 0) return;
    double pu[3], pp[3];
    node_point(q, u, pu);
    node_point(q, n->parent, pp);
    if (sight_visible(q, pp, pu)) return;
    double best = INFINITY;
    int32_t bp = -1;
    for (size_t k = 0; k < nnb; k++) {
        int created;
        int32_t v = on_pool_get(&q->pool, q->g.nb[k], &created);
        if (v >= 0 && created && q->g.kind == ON_GRAPH_CELLS) q->pool.nodes[v].aux = q->g.nbix[k];
        if (v < 0 || created || !q->pool.nodes[v].closed) continue;
        double pv[3];
        node_point(q, v, pv);
        double g = q->pool.nodes[v].g + edge_cost(q, pv, pu);
        if (g < best) {
            best = g;
            bp = v;
        }
    }
    if (bp >= 0) {
        q->pool.nodes[u].parent = bp;
        q->pool.nodes[u].g = best;
    }
}

/* What every neighbour of an expansion shares (expand's locals, for relax). */
typedef struct exp_ctx {
    int32_t u, from;
    double pu[3], pfrom[3], gfrom, umn[3], umx[3], uc[3];
    uint32_t ulayer;
    uint32_t goal_code;   /* (the adjacency loop) the goal's code when it ends the search in u's tile on
                           * reaching it (see early), else UINT32_MAX, which is no node code */
    const on_areaset *areas;
    const on_celladj *adj; /* (the adjacency loop) u's tile's cell adjacency */
    int fp, cells, early;
} exp_ctx;

/* Neighbour c of the expanded node (its number ix in its tile's cell adjacency or ON_ADJ_NONE; across
 * the expanded cell's face `face`, read over the plain cells): reach it, or reach it at a lower cost.
 * ON_IN_PROGRESS, ON_SUCCESS (the goal reached: see `early`) or a failure. Inlined in both of expand's
 * loops; `plain` (a constant) says the loop over the expanded cell's adjacency list, where every
 * neighbour is a plain cell of u's tile (whose corner the graph holds), without areas, reached from u
 * itself: those tests fold away. */
static inline __attribute__((always_inline)) on_status relax(on_query *q, const exp_ctx *x, on_cell c, uint32_t ix,
                                                             unsigned face, const int plain)
{
    int created, found = 0;
    int32_t v;
    on_mslot *slot = NULL;
    if (plain) found = on_pool_probe(&q->pool, c, &slot);
    /* (fresh: a node made here for the adjacency loop, whose g is none yet: reached below for sure) */
    const int fresh = plain && found < 0;
    if (fresh) {
        v = on_pool_make_bare(&q->pool, slot, c, ix);
    } else if (found) {
        v = (int32_t)slot->idx;
    } else {
        v = on_pool_get(&q->pool, c, &created);
        if (v < 0) return ON_FAILURE | (v == -2 ? ON_NO_MEMORY : ON_OUT_OF_NODES); /* -2: growing failed */
        if (created) q->pool.nodes[v].aux = ix;
    }
    on_snode *vn = &q->pool.nodes[v];
    if (!fresh && vn->closed) return ON_IN_PROGRESS;
    double mn[3], mx[3], sz, pv[3];
    uint32_t vl = 0;
    const int cells = plain || x->cells;
    if (cells) {
        /* the shared face's centre (on_graph_face_centre, without v's region): on u's face plane,
         * centred on the smaller cell (octree cells' faces nest); exact either way */
        uint32_t vcode = c.code;
        vl = on_code_layer(vcode);
        unsigned ax = face >> 1;
        sz = on_pow2_layer[vl];
        if (vl < x->ulayer) {
            if (!plain) on_graph_tile(&q->g, c.tile);
            double half = 0.5 * sz;
            pv[0] = q->g.org[0] + (double)on_code_x(vcode) + half;
            pv[1] = q->g.org[1] + (double)on_code_y(vcode) + half;
            pv[2] = q->g.org[2] + (double)on_code_z(vcode) + half;
        } else {
            memcpy(pv, x->uc, sizeof pv);
        }
        pv[ax] = (face & 1) ? x->umx[ax] : x->umn[ax];
    } else if (x->fp) {
        on_graph_region(&q->g, c, mn, mx, &sz); /* its point and its size */
        q->g.ops->entry(x->pfrom, x->umn, x->umx, mn, mx, q->b, pv);
    } else {
        on_graph_region(&q->g, c, mn, mx, &sz); /* its point (node_point: the centre) and size */
        for (int j = 0; j < 3; j++) pv[j] = 0.5 * (mn[j] + mx[j]);
    }
    const on_areaset *areas = plain ? NULL : x->areas;
    double g = x->gfrom + (areas ? on_areaset_cost(areas, x->pfrom, pv) : on_dist3(x->pfrom, pv));
    int32_t par = x->from;
    if (areas && x->from != x->u) { /* Lazy Theta*'s shortcut only when it is not dearer */
        double gu = q->pool.nodes[x->u].g + on_areaset_cost(areas, x->pu, pv);
        if (gu < g) {
            g = gu;
            par = x->u;
        }
    }
    /* Over prepared boxes a node's point is where the way in entered it (graph_boxes.c's entry), so a
     * lower g is no better way when its point lies further from the goal: the node's whole estimate
     * through it (f) decides. With the goal's box expanded rather than reached (expand's early end),
     * measured on the 13 maps (README, "Prepared graph"): every p99 length ratio <= 0.9925 (Simple
     * 1.039 -> 0.980), every mean lower, 3-30 % fewer expansions on 12 maps (Simple 2.6 -> 4.3);
     * either change alone leaves Simple's p99 at 1.039 or 1.049. Over the cells, g as ever. */
    const int by_f = !plain && q->g.kind == ON_GRAPH_BOXES;
    if (by_f || fresh || g < vn->g) {
        double h;
        if (__builtin_expect(q->o.heuristic != NULL, 0)) { /* (a user's: it may answer NaN) */
            h = q->o.heuristic(q->o.heuristic_ud, pv, q->b, sz);
            if (isnan(h)) return ON_FAILURE | ON_INVALID;
        } else {
            h = on_dist3(pv, q->b); /* (the landmarks' bound: when popped, lm_defer) */
        }
        double f = g + q->o.weight * h - q->o.size_bias * sz;
        if (by_f && !(f < vn->f)) return ON_IN_PROGRESS;
        vn->g = g;
        memcpy(vn->pos, pv, sizeof pv);
        vn->parent = par;
        /* (u covers v's face towards it whole when u is no smaller) */
        if (cells) vn->pface = x->ulayer >= vl ? (int8_t)(face ^ 1) : -1;
        vn->f = f;
        if (plain ? c.code == x->goal_code : x->early && same_cell(c, q->goal_cell)) { /* reached (not expanded): see expand */
            q->found = v;
            return ON_SUCCESS;
        }
        if (fresh) on_pool_push_f(&q->pool, (uint32_t)v, f);
        else on_pool_push_or_update(&q->pool, (uint32_t)v);
    }
    return ON_IN_PROGRESS;
}

/* Expand node u: close it and reach its neighbours (relax). Inline in on_query_update, its one caller:
 * no call frame an expansion (measured: about 23 instructions an expansion). */
static inline __attribute__((always_inline)) on_status expand(on_query *q, int32_t u)
{
    on_cell ucell = q->pool.nodes[u].cell;
    /* (a plain cell inside its tile: no tile beyond to wait for, and its neighbours are its tile's) */
    int inside = q->g.kind == ON_GRAPH_CELLS && on_graph_cell_inside(&q->g, ucell);
    int64_t wait = inside ? -1 : on_graph_unloaded_beyond_slow(&q->g, ucell);
    if (wait >= 0) { /* put u back and wait for the tile rather than taking it for a wall */
        q->info.loading_tile = (uint32_t)wait;
        on_pool_push_or_update(&q->pool, (uint32_t)u);
        return ON_IN_PROGRESS | ON_LOADING;
    }
    if (ucell.tile != q->touch_last) { /* (most expansions stay in the tile of the one before) */
        if (touch_tile(q, ucell.tile) != 0) return ON_FAILURE | ON_NO_MEMORY;
        q->touch_last = ucell.tile;
    }
    exp_ctx x;
    x.fp = face_points(q);
    x.cells = x.fp && q->g.kind == ON_GRAPH_CELLS;
    /* Over the plain cells with face points: the face of u's cell its parent's cell covers whole (set
     * with the parent, in relax). Every neighbour across it is the parent, closed: it is left out. */
    int skip = x.cells ? q->pool.nodes[u].pface : -1;
    /* A cell inside its tile (most) reads its neighbours off the tile's cell adjacency: every one is a
     * cell of the tile (celladj.h); others ask the graph (border faces walk the tree). */
    const on_celladj *adj = NULL;
    size_t nnb = 0;
    if (x.cells && inside && (adj = on_graph_cells_adj(&q->g, ucell.tile))) {
        unsigned walk = skip >= 0 ? 63u & ~(1u << skip) : 63u;
        long m;
        while ((m = on_celladj_list(adj, &q->g.chain, ucell.tile, ucell.code, walk, q->g.nb, q->g.nbix, q->g.nbface, q->g.nbcap,
                                    NULL)) > (long)q->g.nbcap)
            if (on_graph_nb_reserve(&q->g, (size_t)m) != 0) return ON_FAILURE | ON_NO_MEMORY;
        if (m < 0) adj = NULL; /* (no free cell of the tile: the graph walks the tree) */
        else nnb = (size_t)m;
    }
    if (!adj) {
        q->g.skip_face = skip;
        on_status ns = on_graph_neighbors(&q->g, ucell, &nnb);
        q->g.skip_face = -1;
        if (ns != ON_SUCCESS) {
            if (ns == ON_FALLBACK) on_pool_push_or_update(&q->pool, (uint32_t)u);
            return ns;
        }
        if (q->o.any_angle) lazy_fix_parent(q, u, nnb);
    }
    on_snode *un = &q->pool.nodes[u];
    un->closed = 1;
    node_point(q, u, x.pu);
    /* the goal is reached when its node is expanded (weighted over face points: when first reached, below) */
    if (same_cell(un->cell, q->goal_cell)) {
        q->found = u;
        return ON_SUCCESS;
    }
    if (q->o.partial) { /* (the node nearest the goal: read only for partial results) */
        double dx = x.pu[0] - q->b[0], dy = x.pu[1] - q->b[1], dz = x.pu[2] - q->b[2];
        double hu2 = dx * dx + dy * dy + dz * dz;
        if (hu2 < q->best_h2) {
            q->best_h2 = hu2;
            q->best = u;
        }
    }
    x.u = u;
    x.from = u;
    memcpy(x.pfrom, x.pu, sizeof x.pu);
    if (q->o.any_angle && un->parent >= 0) {
        x.from = un->parent;
        node_point(q, x.from, x.pfrom);
    }
    x.gfrom = q->pool.nodes[x.from].g;
    double us = 0;
    x.ulayer = on_code_layer(un->cell.code);
    /* the plain cell graph's region and entry point inline (the same as its operations) */
    if (x.cells) on_graph_cell_region(&q->g, un->cell, x.umn, x.umx, &us);
    else if (x.fp) on_graph_region(&q->g, un->cell, x.umn, x.umx, &us);
    for (int j = 0; j < 3; j++) x.uc[j] = x.umn[j] + 0.5 * us; /* (cells) u's centre */
    x.areas = q->areas.n ? &q->areas : NULL; /* (read once: not per edge) */
    /* A weighted search over face points ends when it first reaches the goal's node rather than when
     * it would expand it: its f was already no bound on the path (weight > 1), the goal's point is
     * the face it is entered through either way, and what remains of the path is the straight
     * segment on to the goal inside its node. Measured: the same mean and p99 length ratios, 3-37%
     * fewer expansions (see README). Weight 1 keeps A*'s rule (its paths are the graph's shortest),
     * and Lazy Theta* expands the goal to check its parent's sight. Over prepared boxes the goal's box
     * is large: reached first, its point may lie far from the goal, round the wrong side of a wall
     * (Simple's hollow column); the goal is expanded, at the best f (see relax). */
    x.early = x.fp && q->o.weight > 1 && q->g.kind != ON_GRAPH_BOXES;
    x.adj = adj;
    q->info.neighbors += nnb; /* (the whole list, also when the goal is reached before its end) */
    if (adj) {
        x.goal_code = x.early && q->goal_cell.tile == ucell.tile ? q->goal_cell.code : UINT32_MAX;
        for (size_t k = 0; k < nnb; k++) {
            on_status s = relax(q, &x, q->g.nb[k], q->g.nbix[k], q->g.nbface[k], 1);
            if (s != ON_IN_PROGRESS) return s;
        }
        return ON_IN_PROGRESS;
    }
    const uint32_t *nbix = q->g.kind == ON_GRAPH_CELLS ? q->g.nbix : NULL; /* (the cells' numbers: kept) */
    for (size_t k = 0; k < nnb; k++) {
        on_status s = relax(q, &x, q->g.nb[k], nbix ? nbix[k] : ON_ADJ_NONE, x.cells ? q->g.nbface[k] : 0u, 0);
        if (s != ON_IN_PROGRESS) return s;
    }
    return ON_IN_PROGRESS;
}

/* The landmarks' bound, read lazily: a node is reached with the straight line's estimate, and when
 * popped its f is raised to the bound's (max of the two) and the node goes back in the heap when that
 * is larger (1: deferred, not expanded); its second pop expands it. Reading the bound for every node
 * reached instead (2-4 times as many: a cache miss each) left the expansions and paths within noise
 * and took more time (README, "Landmarks"). */
__attribute__((noinline)) static int lm_defer(on_query *q, int32_t u)
{
    on_snode *n = &q->pool.nodes[u];
    double l = lm_term(q, n->cell.tile, n->aux, n->cell.code);
    double p[3], mn[3], mx[3], sz;
    node_point(q, u, p);
    if (l <= on_dist3(p, q->b)) return 0;
    on_graph_cell_region(&q->g, n->cell, mn, mx, &sz);
    double f = n->g + q->o.weight * l - q->o.size_bias * sz;
    if (!(f > n->f)) return 0;
    n->f = f;
    on_pool_push_or_update(&q->pool, (uint32_t)u);
    return 1;
}

/* Whether the search, about to expand node n, has stalled in front of its goal: for 400 expansions no
 * node it expanded came 2 % nearer the goal than the nearest before, and that one lies between 0.05
 * and 0.2 of the ends' distance from it (nearness read as f - g: w h, less size_bias times the size
 * with a bias). The goal then sits in a pocket whose walls the search floods from outside (in the
 * slowest 3 % of queries on Complex, DB2 and BC1, 86-96 % of the expansions are off the path, 80 % of
 * those in 1-voxel cells); from the goal's end the search leaves the pocket first. The slowest queries
 * searched the wrong way round more often than not (Complex: 1599, 1509, 1524, 1505 expansions, the
 * other way 676, 212, 268, 353; bench/query -v against -R and always reversed). A stall farther off
 * is the start's own pocket, which the other way would flood at its end (0.3: DB2's p99 expansions
 * 1087 -> 1208); nearer, the goal's wall is thin and the search about through (without 0.05: BC1 550
 * -> 1035 expansions on one query). Measured over the 13 maps (README, "Search defaults"): on the
 * benchmark's sample Complex p99 expansions 1505 -> 917, p99 time 406-422 -> 254-271 us, mean ratio
 * 0.9255 -> 0.9250, other maps' p99 expansions unchanged; seeds 2 and 3 mixed (Complex 1031 -> 1014,
 * 955 -> 1114; DB2 1180 -> 1180, 1223 -> 1087). */
static inline int stalled(on_query *q, const on_snode *n)
{
    double wh = n->f - n->g;
    if (__builtin_expect(wh < q->stall_wh, 0)) {
        if (wh < 0.98 * q->stall_wh) q->stall_at = q->info.expansions;
        q->stall_wh = wh;
    }
    return q->info.expansions - q->stall_at >= 400 && q->stall_wh < q->stall_lim &&
           q->stall_wh > 0.25 * q->stall_lim;
}

/* Turn a stalled search round (once): again from its goal's end to its start's, over a new pool (the
 * expansions so far stay counted: escalation comes at the same total). */
static void turn_round(on_query *q)
{
    on_cell sc = q->goal_cell;
    q->may_turn = 0;
    swap_ends(q, q->pool.nodes[0].cell);
    q->reversed = q->swapped;
    q->visited0 += q->pool.nnodes;
    on_pool_reset(&q->pool);
    int32_t s0 = first_node(q, sc);
    double mn[3], mx[3], sz;
    on_graph_region(&q->g, sc, mn, mx, &sz);
    q->pool.nodes[s0].f = q->o.weight * on_dist3(q->a, q->b) - q->o.size_bias * sz;
    on_pool_push_or_update(&q->pool, (uint32_t)s0);
    q->touch_last = UINT32_MAX;
}

/* The search is taking long: switch to the escalation weights for the rest of it. Every open node's
 * f is recomputed and the heap rebuilt (bottom-up), once. */
static void escalate(on_query *q)
{
    q->o.weight = q->o.escalate_weight;
    q->o.size_bias = q->o.escalate_size_bias;
    q->may_turn = 0; /* (stalled reads f - g at the old weights) */
    for (size_t i = 0; i < q->pool.nheap; i++) {
        on_snode *n = &q->pool.nodes[q->pool.heap[i]];
        double p[3], mn[3], mx[3], sz;
        node_point(q, (int32_t)q->pool.heap[i], p);
        on_graph_region(&q->g, n->cell, mn, mx, &sz);
        double h = heuristic(q, p, sz, n->cell, n->aux);
        n->f = n->g + q->o.weight * (isnan(h) ? 0 : h) - q->o.size_bias * sz;
    }
    on_pool_heapify(&q->pool);
}

on_status on_query_update(on_query *q, size_t max_iter, size_t *done)
{
    size_t n = 0;
    if ((q->state & ON_IN_PROGRESS) && on_tileset_changed(&q->touched, q->t)) q->state = ON_FAILURE | ON_STALE;
    q->g.adj_tile = UINT32_MAX; /* (a tile's cell adjacency is read again: edits free them) */
    if (q->lm && q->lm_gen != q->t->landmarks_gen) q->lm = NULL; /* (freed by an edit: the straight line) */
    if (q->state == (ON_IN_PROGRESS | ON_LOADING)) {
        if (!q->t->tiles[q->info.loading_tile].loaded) {
            if (done) *done = 0;
            return q->state; /* still waiting */
        }
        q->state = ON_IN_PROGRESS;
    }
    while (q->state == ON_IN_PROGRESS && n < max_iter) {
        if (q->pool.nheap == 0) {
            q->state = ON_FAILURE | ON_UNREACHABLE;
            break;
        }
        if (q->o.max_expansions && q->info.expansions >= q->o.max_expansions) {
            q->state = ON_FAILURE | ON_BUDGET;
            break;
        }
        if (q->o.escalate && q->info.expansions == q->o.escalate) escalate(q);
        int32_t u = (int32_t)on_pool_pop(&q->pool);
        if (__builtin_expect(q->lm != NULL, 0) && lm_defer(q, u)) continue;
        if (q->may_turn && stalled(q, &q->pool.nodes[u])) {
            turn_round(q);
            continue;
        }
        on_status s = expand(q, u);
        if (s == (ON_IN_PROGRESS | ON_LOADING)) {
            q->state = s;
            break;
        }
        if (s == ON_FALLBACK) { /* a tile without a valid box graph: again from the start, over the cells */
            if (q->o0.graph == ON_GRAPH_BOXES) { /* (asked for the boxes alone: say which tile) */
                q->info.loading_tile = q->g.fallback_tile;
                q->state = ON_FAILURE | ON_UNPREPARED;
                break;
            }
            start(q, q->wa, q->wb, &q->o0, 1);
            continue;
        }
        q->info.expansions++;
        n++;
        if (s != ON_IN_PROGRESS) q->state = s;
    }
    if (q->swapped && !(q->state & ON_IN_PROGRESS)) unreverse(q);
    if (done) *done = n;
    q->info.visited = q->visited0 + q->pool.nnodes;
    return q->state;
}

on_status on_query_find(on_query *q, const double a[3], const double b[3], const on_query_opts *o, double *path,
                        size_t cap, size_t *npath, on_query_info *info)
{
    on_status s = on_query_init(q, a, b, o);
    if (s == ON_IN_PROGRESS) on_query_update(q, (size_t)-1, NULL);
    if (q->state == (ON_IN_PROGRESS | ON_LOADING)) { /* cannot wait here */
        q->state = ON_FAILURE | ON_LOADING;
        if (q->swapped) unreverse(q);
    }
    return on_query_finalize(q, path, cap, npath, info);
}
