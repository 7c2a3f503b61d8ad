/*
 * search_start.c -- a query's start (on_query_init, and the restart of an escalation; see search.c):
 * locating the ends, the direct segment when the goal is in sight, the landmarks' part, whether to
 * search from the goal's end (and turning a reversed result back), the corridor of a direct answer,
 * and the first node on the open list; the options' defaults.
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


/* Node 0 of the just reset pool: cell c at the search's start point (q->a), g 0, no parent, in no heap
 * (the caller sets its f and pushes it). Every pool has room for a first node (on_pool_init). */
int32_t on_query_first_node(on_query *q, on_cell c)
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
 * 1.0005), or the cells split for an agent's radius (issue 33: the same cells cut where the clearance
 * varies; a point's search on the tree baked for R reverses, and without it the one tree's paths went
 * the other way round on Complex's R = 3 scenario 5810, 74.86 against 58.62), with every tile between
 * the ends loaded (span_loaded), and only where nothing after the search depends on its direction but
 * the chain of cells: face points with refine (the nodes' entry points are not read), no areas, no
 * user heuristic (given the goal), no partial results (the nearest to the goal). */
static int either_way(const on_query *q, on_cell sc, on_cell gc)
{
    return !(q->no_reverse || (q->g.kind != ON_GRAPH_CELLS && !(q->g.kind == ON_GRAPH_AREA_CELLS && q->g.radius)) ||
             !face_points(q) || q->areas.n || q->o.heuristic || q->o.partial || !q->o.refine ||
             !span_loaded(q, sc.tile, gc.tile));
}

/* reverse_pays for an agent's radius R (issue 33), asked in the space the search keeps to: the walks
 * are the sphere's lines of sight (on_tree_visible_radius), as a point's ray walks on the tree baked
 * with blocked space grown by R. The goal's hit tb, the largest t of a clear goal -> goal + t (start -
 * goal), to 0.3 * 2^-12 by halving (nothing more once 0.3 is clear). With the point's walks on the
 * one tree deciding, the two trees' searches still went different ways: bench/radius -n 1000, Complex
 * R = 2, max length ratio 1.3670 with them, 1.0067 with these (docs/radius.md). */
__attribute__((noinline)) static int radius_reverse_pays(const on_query *q)
{
    double m[3], lo = 0, hi = 0.3;
    for (int k = 0; k < 3; k++) m[k] = q->b[k] + hi * (q->a[k] - q->b[k]);
    if (on_tree_visible_radius(q->t, q->lcache, q->b, m, q->g.radius)) return 0;
    for (int i = 0; i < 12; i++) {
        double t = 0.5 * (lo + hi);
        for (int k = 0; k < 3; k++) m[k] = q->b[k] + t * (q->a[k] - q->b[k]);
        if (on_tree_visible_radius(q->t, q->lcache, q->b, m, q->g.radius)) lo = t;
        else hi = t;
    }
    for (int k = 0; k < 3; k++) m[k] = q->a[k] + lo / 1.5 * (q->b[k] - q->a[k]);
    return on_tree_visible_radius(q->t, q->lcache, q->a, m, q->g.radius); /* clear that far: 1.5 ta >= tb */
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
void on_query_swap_ends(on_query *q, on_cell c)
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
void on_query_unreverse(on_query *q)
{
    on_query_swap_ends(q, q->pool.nodes[0].cell);
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
    return on_query_start(q, a, b, o, 0);
}

/* Begin a search; over the cells when `cells_only` (or when the boxes cannot be used). */
on_status on_query_start(on_query *q, const double a[3], const double b[3], const on_query_opts *o, int cells_only)
{
    memset(&q->info, 0, sizeof q->info);
    on_pool_reset(&q->pool);
    q->path.n = 0;
    q->ncorr = 0;
    q->nflog = 0;
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
        (q->o.nareas && !q->o.areas) || !(q->o.radius >= 0) ||
        !(q->o.radius * q->t->inv_scale <= ON_MAX_RADIUS_LEAVES) || (q->o.radius > 0 && q->o.graph == ON_GRAPH_BOXES))
        return q->state = ON_FAILURE | ON_INVALID;
    q->g.radius = (int64_t)ceil(q->o.radius * q->t->inv_scale); /* (graph.h: in leaves) */
    q->g.memo_gen++;
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
    /* (with areas or a radius, AUTO keeps to the cells, split at the areas' faces or the clearance below) */
    if (!cells_only && (q->o.graph == ON_GRAPH_BOXES ||
                        (q->o.graph == ON_GRAPH_AUTO && face_points(q) && !q->areas.n && !q->g.radius))) {
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
    if ((q->areas.n || q->g.radius) && q->g.kind == ON_GRAPH_CELLS) { /* cells split at the areas' faces */
        q->g.areas = &q->areas;
        on_graph_use(&q->g, ON_GRAPH_AREA_CELLS);
        for (int w = 0; w < 2; w++) /* (an end too near blocked space for the radius: as good as blocked) */
            if (!on_graph_locate(&q->g, w ? gc : sc, w ? q->b : q->a, w ? &gc : &sc)) {
                q->info.which = w;
                q->info.nearest[0] = q->info.nearest[1] = q->info.nearest[2] = NAN;
                return q->state = ON_FAILURE | ON_BLOCKED;
            }
    }
    q->info.graph = q->g.kind == ON_GRAPH_BOXES ? ON_GRAPH_BOXES : ON_GRAPH_CELLS;
    q->goal_cell = gc;
    if (touch_tile(q, sc.tile) != 0 || touch_tile(q, gc.tile) != 0) return q->state = ON_FAILURE | ON_NO_MEMORY;
    int32_t s0 = on_query_first_node(q, sc); /* node 0: the start */
    if (same_cell(sc, gc)) { /* one free cube or box holds both: the straight segment */
        if (q->areas.n && edge_cost(q, q->a, q->b) == INFINITY) return q->state = ON_FAILURE | ON_UNREACHABLE;
        q->found = s0;
        q->pool.nodes[s0].closed = 1;
        return q->state = ON_SUCCESS;
    }
    double tb = -1; /* (where the walk from the goal's end was blocked: see reverse_pays) */
    if (q->o.direct && q->o.smooth != ON_SMOOTH_NONE && !q->g.radius &&
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
    if (q->may_turn && (q->g.radius ? radius_reverse_pays(q) : reverse_pays(q, tb))) { /* from the goal's end: node 0 is the goal's cell */
        on_query_swap_ends(q, sc);
        q->reversed = 1;
        sc = gc;
        on_pool_reset(&q->pool);
        s0 = on_query_first_node(q, sc);
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
