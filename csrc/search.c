/*
 * search.c -- the query: A* over the free cells of a tree, sliced (init / update / finalize).
 *
 * Graph: free cells joined across shared faces (on_tree_neighbors), or, where the tiles are prepared
 * (boxes.h, opts.graph), boxes of merged free leaves; a box's point is where the line from its parent's
 * point to the goal crosses the face they share (clamped onto it). Each search node has a point and
 * edges cost the distance between points. Two point models (opts.points): "face" (the default), as
 * Detour does with polygon edges: a cell's point is the centre of the face it was entered through
 * (the start's is the start point), which tracks the true length of a path through cells of mixed
 * sizes far better than centres (half the expansions, and the right way round obstacles more often:
 * see README, "Search defaults"); "centre": a cell's point is its centre, a fixed graph on which the
 * Euclidean heuristic is consistent and weight 1 gives the optimal path (Lazy Theta* always uses
 * it). Options: a weight and the seed's size bias (f = g + w*h - bias*size), Lazy Theta*
 * (parents may be any visible ancestor), a user heuristic, expansion budgets and partial results.
 * Before searching, `direct` returns the straight segment when the goal is in sight of the start.
 * After the search, `refine` pulls the waypoints tight inside the corridor of cells (each waypoint on
 * the face shared by two consecutive cells; coordinate descent with exact 1D minimisers, at most
 * REFINE_SWEEPS sweeps, so every segment stays inside one free cell and needs no line-of-sight
 * check); `smooth` then removes waypoints by line of sight (galloping or bisecting over the path), and
 * `relax` slides the remaining corners towards the obstacle edges they wrap around.
 * Memory: the node pool, map and heap (nodepool.h) and the neighbour buffer are allocated at
 * creation; a search reuses them.
 */
#include "graph.h"
#include "nodepool.h"
#include "raycast.h"
#include "tree.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Refinement stops when no waypoint moved more than REFINE_TOL leaves in a sweep (smoothing and
 * relaxation follow, so a thousandth of a leaf is plenty), or after REFINE_SWEEPS sweeps (measured:
 * 8 sweeps instead of 32 change the mean length ratio by less than 1e-4 on the benchmark maps). */
#define REFINE_TOL 1e-3
#define REFINE_SWEEPS 8

struct on_query {
    const on_tree *t;
    on_nodepool pool;     /* nodes, node map, open list */
    on_graph g;           /* what it runs over: the cells or the prepared boxes */
    on_lcache *lcache;    /* node-table lookups of recent expansions */
    on_tileset touched;   /* tiles this search has read, with their salts then */
    /* the current search */
    on_query_opts o;      /* its options (escalation changes the weights) */
    on_query_opts o0;     /* as given */
    double a[3], b[3];    /* nav space */
    on_cell goal_cell;
    on_status state;
    int32_t found, best;  /* goal node; node nearest the goal (for partial results) */
    double best_h;
    on_query_info info;
    /* results */
    double *pts;          /* nav-space waypoints */
    size_t npts, ptscap;
    on_cell *corr;
    size_t ncorr, corrcap;
    double wa[3], wb[3];  /* the endpoints in world space (for starting again over the cells) */
    on_tileset ptiles;    /* the result's tiles (corridor and final segments), with salts */
    int direct;           /* the result is the straight segment (corr: the cells it crosses) */
    int corr_failed;      /* growing corr ran out of memory */
};

void on_query_opts_default(on_query_opts *o)
{
    memset(o, 0, sizeof *o);
    o->weight = 1.4;           /* measured: see README, "Search defaults" */
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
    q->ptscap = 64;
    q->pts = malloc(q->ptscap * 3 * sizeof *q->pts);
    q->corrcap = 64;
    q->corr = malloc(q->corrcap * sizeof *q->corr);
    q->lcache = malloc(sizeof *q->lcache);
    if (on_pool_init(&q->pool, max_nodes) != 0 || on_tileset_init(&q->touched, 64) != 0 ||
        on_tileset_init(&q->ptiles, 16) != 0 || !q->lcache || on_graph_init(&q->g, t, q->lcache, &q->touched) != 0 ||
        !q->pts || !q->corr) {
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
    free(q->pts);
    free(q->corr);
    free(q->lcache);
    on_tileset_free(&q->touched);
    on_tileset_free(&q->ptiles);
    free(q);
}

const on_tree *on_query_tree(const on_query *q) { return q->t; }

/* ---- geometry helpers ------------------------------------------------------------------------ */

static int same_cell(on_cell x, on_cell y) { return x.tile == y.tile && x.code == y.code; }

/* Face points: the model of every search but Lazy Theta*'s (which needs centres, below). */
static inline int face_points(const on_query *q) { return q->o.points == ON_POINTS_FACE && !q->o.any_angle; }

/* A node's point. Face model: the centre of the face its cell was entered through (set with its g).
 * Centre model: its cell's centre. Segments between the centres of two face neighbours always stay
 * inside the two cells (the crossing point lies within the smaller cell's face), which Lazy Theta*'s
 * fallback parent relies on; the start and goal points join their own cells' centres, inside one cube. */
static void node_point(on_query *q, int32_t i, double p[3])
{
    if (face_points(q)) {
        memcpy(p, q->pool.nodes[i].pos, 3 * sizeof *p);
        return;
    }
    double mn[3], mx[3], s;
    on_graph_region(&q->g, q->pool.nodes[i].cell, mn, mx, &s);
    for (int k = 0; k < 3; k++) p[k] = 0.5 * (mn[k] + mx[k]);
}

static double heuristic(on_query *q, const double p[3], double size)
{
    if (q->o.heuristic) return q->o.heuristic(q->o.heuristic_ud, p, q->b, size);
    return on_dist3(p, q->b);
}

/* ---- the search ------------------------------------------------------------------------------ */

/* Remember that the search read tile `tile` (salt now); -1 on allocation failure. */
static int touch_tile(on_query *q, uint32_t tile) { return on_tileset_touch(&q->touched, q->t, tile); }

/* Collects the cells of a straight walk into the corridor (on_tree_walk_cells). */
static void corr_sink(void *ud, on_cell c)
{
    on_query *q = ud;
    /* the walk reports the cells around each crossing: skip the ones it just reported */
    for (size_t i = q->ncorr, k = 0; i-- > 0 && k < 8; k++)
        if (same_cell(q->corr[i], c)) return;
    if (q->ncorr == q->corrcap) {
        size_t nc = q->corrcap * 2;
        on_cell *bigger = realloc(q->corr, nc * sizeof *bigger);
        if (!bigger) {
            q->corr_failed = 1;
            return;
        }
        q->corr = bigger;
        q->corrcap = nc;
    }
    q->corr[q->ncorr++] = c;
}

/* Line of sight between two nav-space points. */
static int los(const on_query *q, const double a[3], const double b[3])
{
    return on_tree_visible_nav(q->t, q->lcache, a, b);
}

static on_status start(on_query *q, const double a[3], const double b[3], const on_query_opts *o, int cells_only);

on_status on_query_init(on_query *q, const double a[3], const double b[3], const on_query_opts *o)
{
    return start(q, a, b, o, 0);
}

/* Begin a search; over the cells when `cells_only` (or when the boxes cannot be used). */
static on_status start(on_query *q, const double a[3], const double b[3], const on_query_opts *o, int cells_only)
{
    memset(&q->info, 0, sizeof q->info);
    on_pool_reset(&q->pool);
    q->npts = 0;
    q->ncorr = 0;
    q->found = q->best = -1;
    q->best_h = INFINITY;
    q->touched.n = 0;
    q->ptiles.n = 0;
    q->direct = 0;
    if (o != &q->o0) { /* (starting again over the cells passes the options kept) */
        if (o) q->o0 = *o;
        else on_query_opts_default(&q->o0);
    }
    q->o = q->o0;
    if (!(q->o.weight >= 0) || !isfinite(q->o.weight) || !isfinite(q->o.size_bias) ||
        q->o.smooth < ON_SMOOTH_NONE || q->o.smooth > ON_SMOOTH_BINARY || q->o.graph < ON_GRAPH_AUTO ||
        q->o.graph > ON_GRAPH_CELLS)
        return q->state = ON_FAILURE | ON_INVALID;
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
        if (s & ON_BLOCKED) {
            double nf[3];
            if (on_ok(on_tree_nearest_free(q->t, ends[w], 64, nf))) memcpy(q->info.nearest, nf, sizeof nf);
            else q->info.nearest[0] = q->info.nearest[1] = q->info.nearest[2] = NAN;
        }
        return q->state = s;
    }
    on_to_nav(q->t, a, q->a);
    on_to_nav(q->t, b, q->b);
    if (!cells_only && q->o.graph == ON_GRAPH_AUTO && face_points(q)) {
        /* over the boxes when both ends' tiles have valid graphs */
        on_cell sb, gb;
        on_graph_use(&q->g, ON_GRAPH_BOXES);
        if (on_graph_locate(&q->g, sc, q->a, &sb) && on_graph_locate(&q->g, gc, q->b, &gb)) {
            sc = sb;
            gc = gb;
        } else {
            on_graph_use(&q->g, ON_GRAPH_CELLS);
        }
    }
    q->info.graph = q->g.kind;
    q->goal_cell = gc;
    if (touch_tile(q, sc.tile) != 0 || touch_tile(q, gc.tile) != 0) return q->state = ON_FAILURE | ON_NO_MEMORY;
    int created;
    int32_t s0 = on_pool_get(&q->pool, sc, &created); /* node 0: the start */
    q->pool.nodes[s0].g = 0;
    q->pool.nodes[s0].parent = -1;
    memcpy(q->pool.nodes[s0].pos, q->a, sizeof q->a);
    if (same_cell(sc, gc)) { /* one free cube or box holds both: the straight segment */
        q->found = s0;
        q->pool.nodes[s0].closed = 1;
        return q->state = ON_SUCCESS;
    }
    if (q->o.direct && q->o.smooth != ON_SMOOTH_NONE) {
        /* in sight: the straight segment is the shortest path, and what smoothing would make of any
         * path found; one walk instead of a search */
        q->ncorr = 0;
        q->corr_failed = 0;
        /* the endpoints' own cells too: an endpoint on a tile border may lie in a cell the walk,
         * leaving the other way, never enters (and the path depends on that cell staying free) */
        corr_sink(q, sc);
        if (on_tree_walk_cells(q->t, q->lcache, q->a, q->b, corr_sink, q)) {
            corr_sink(q, gc);
            if (q->corr_failed) return q->state = ON_FAILURE | ON_NO_MEMORY;
            for (size_t i = 0; i < q->ncorr; i++)
                if (touch_tile(q, q->corr[i].tile) != 0) return q->state = ON_FAILURE | ON_NO_MEMORY;
            q->direct = 1;
            q->found = s0;
            q->pool.nodes[s0].closed = 1;
            return q->state = ON_SUCCESS;
        }
        q->ncorr = 0;
    }
    double mn[3], mx[3], sz;
    on_graph_region(&q->g, sc, mn, mx, &sz);
    double h = heuristic(q, q->a, sz);
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
    if (los(q, pp, pu)) return;
    double best = INFINITY;
    int32_t bp = -1;
    for (size_t k = 0; k < nnb; k++) {
        int created;
        int32_t v = on_pool_get(&q->pool, q->g.nb[k], &created);
        if (v < 0 || created || !q->pool.nodes[v].closed) continue;
        double pv[3];
        node_point(q, v, pv);
        double g = q->pool.nodes[v].g + on_dist3(pv, pu);
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

static on_status expand(on_query *q, int32_t u)
{
    int64_t wait = on_graph_unloaded_beyond(&q->g, q->pool.nodes[u].cell);
    if (wait >= 0) { /* put u back and wait for the tile rather than taking it for a wall */
        q->info.loading_tile = (uint32_t)wait;
        on_pool_push_or_update(&q->pool, (uint32_t)u);
        return ON_IN_PROGRESS | ON_LOADING;
    }
    if (touch_tile(q, q->pool.nodes[u].cell.tile) != 0) return ON_FAILURE | ON_NO_MEMORY;
    size_t nnb;
    on_status ns = on_graph_neighbors(&q->g, q->pool.nodes[u].cell, &nnb);
    if (ns != ON_SUCCESS) {
        if (ns == ON_FALLBACK) on_pool_push_or_update(&q->pool, (uint32_t)u);
        return ns;
    }
    if (q->o.any_angle) lazy_fix_parent(q, u, nnb);
    on_snode *un = &q->pool.nodes[u];
    un->closed = 1;
    double pu[3];
    node_point(q, u, pu);
    /* the goal is reached when its node is expanded */
    if (same_cell(un->cell, q->goal_cell)) {
        q->found = u;
        return ON_SUCCESS;
    }
    double hu = on_dist3(pu, q->b);
    if (hu < q->best_h) {
        q->best_h = hu;
        q->best = u;
    }
    int32_t from = u;
    double pfrom[3];
    memcpy(pfrom, pu, sizeof pu);
    if (q->o.any_angle && un->parent >= 0) {
        from = un->parent;
        node_point(q, from, pfrom);
    }
    double gfrom = q->pool.nodes[from].g;
    double umn[3], umx[3], us = 0;
    if (face_points(q)) on_graph_region(&q->g, un->cell, umn, umx, &us);
    for (size_t k = 0; k < nnb; k++) {
        int created;
        int32_t v = on_pool_get(&q->pool, q->g.nb[k], &created);
        if (v < 0) return ON_FAILURE | ON_OUT_OF_NODES;
        on_snode *vn = &q->pool.nodes[v];
        if (vn->closed) continue;
        double mn[3], mx[3], sz, pv[3];
        on_graph_region(&q->g, vn->cell, mn, mx, &sz); /* its point (node_point: the centre) and its size */
        if (face_points(q)) {
            q->g.ops->entry(pfrom, umn, umx, mn, mx, q->b, pv);
        } else {
            for (int j = 0; j < 3; j++) pv[j] = 0.5 * (mn[j] + mx[j]);
        }
        double g = gfrom + on_dist3(pfrom, pv);
        if (g < vn->g) {
            double h = heuristic(q, pv, sz);
            if (isnan(h)) return ON_FAILURE | ON_INVALID;
            vn->g = g;
            memcpy(vn->pos, pv, sizeof pv);
            vn->parent = from;
            vn->f = g + q->o.weight * h - q->o.size_bias * sz;
            on_pool_push_or_update(&q->pool, (uint32_t)v);
        }
    }
    return ON_IN_PROGRESS;
}

/* The search is taking long: switch to the escalation weights for the rest of it. Every open node's
 * f is recomputed and the heap rebuilt (bottom-up), once. */
static void escalate(on_query *q)
{
    q->o.weight = q->o.escalate_weight;
    q->o.size_bias = q->o.escalate_size_bias;
    for (size_t i = 0; i < q->pool.nheap; i++) {
        on_snode *n = &q->pool.nodes[q->pool.heap[i]];
        double p[3], mn[3], mx[3], sz;
        node_point(q, (int32_t)q->pool.heap[i], p);
        on_graph_region(&q->g, n->cell, mn, mx, &sz);
        double h = heuristic(q, p, sz);
        n->f = n->g + q->o.weight * (isnan(h) ? 0 : h) - q->o.size_bias * sz;
    }
    on_pool_heapify(&q->pool);
}

on_status on_query_update(on_query *q, size_t max_iter, size_t *done)
{
    size_t n = 0;
    if ((q->state & ON_IN_PROGRESS) && on_tileset_changed(&q->touched, q->t)) q->state = ON_FAILURE | ON_STALE;
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
        on_status s = expand(q, u);
        if (s == (ON_IN_PROGRESS | ON_LOADING)) {
            q->state = s;
            break;
        }
        if (s == ON_FALLBACK) { /* a tile without a valid box graph: again from the start, over the cells */
            start(q, q->wa, q->wb, &q->o0, 1);
            continue;
        }
        q->info.expansions++;
        n++;
        if (s != ON_IN_PROGRESS) q->state = s;
    }
    if (done) *done = n;
    q->info.visited = q->pool.nnodes;
    return q->state;
}

/* ---- building the path ----------------------------------------------------------------------- */

static int push_pt(on_query *q, const double p[3])
{
    if (q->npts == q->ptscap) {
        size_t nc = q->ptscap * 2;
        double *bigger = realloc(q->pts, nc * 3 * sizeof *bigger);
        if (!bigger) return -1;
        q->pts = bigger;
        q->ptscap = nc;
    }
    memcpy(q->pts + 3 * q->npts++, p, 3 * sizeof *p);
    return 0;
}

/* Cells from the start to node `end`, in order. */
static int build_corridor(on_query *q, int32_t end)
{
    size_t n = 0;
    for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) n++;
    if (n > q->corrcap) {
        on_cell *bigger = realloc(q->corr, n * sizeof *bigger);
        if (!bigger) return -1;
        q->corr = bigger;
        q->corrcap = n;
    }
    q->ncorr = n;
    for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) q->corr[--n] = q->pool.nodes[i].cell;
    return 0;
}

/* Shortest path through the chain of shared faces: waypoint i lies on the face between corridor cells
 * i and i+1. Coordinate descent over the two free coordinates of each face with the exact minimiser
 * of |P - x| + |x - N| along one coordinate (clamped, which is exact for a convex function of one
 * variable), sweeping forward and back until nothing moves more than REFINE_TOL or REFINE_SWEEPS
 * sweeps are done. */
static int refine(on_query *q, const double start[3], const double end[3])
{
    size_t m = q->ncorr - 1; /* faces */
    q->npts = 0;
    if (push_pt(q, start)) return -1;
    if (m == 0) return push_pt(q, end);
    /* faces as boxes with lo == hi on the axis they are perpendicular to */
    size_t need = q->npts + m + 1;
    while (q->ptscap < need + 2 * m) { /* room for waypoints and the face bounds (2 points each) */
        size_t nc = q->ptscap * 2;
        double *bigger = realloc(q->pts, nc * 3 * sizeof *bigger);
        if (!bigger) return -1;
        q->pts = bigger;
        q->ptscap = nc;
    }
    double *x = q->pts + 3;                 /* waypoints 1..m */
    double *lo = q->pts + 3 * (m + 2);      /* face bounds after the end point */
    double *hi = lo + 3 * m;
    for (size_t i = 0; i < m; i++) {
        double amn[3], amx[3], as, bmn[3], bmx[3], bs;
        on_graph_region(&q->g, q->corr[i], amn, amx, &as);
        on_graph_region(&q->g, q->corr[i + 1], bmn, bmx, &bs);
        for (int k = 0; k < 3; k++) {
            lo[3 * i + k] = on_maxf(amn[k], bmn[k]);
            hi[3 * i + k] = on_minf(amx[k], bmx[k]);
        }
        /* start from the straight line start -> end, clamped onto the face: in open space that is
         * already the answer, and elsewhere it leaves less to move than the face centres */
        double u = (double)(i + 1) / (double)(m + 1);
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = on_clampf(start[k] + u * (end[k] - start[k]), lo[3 * i + k], hi[3 * i + k]);
    }
    double *e = q->pts + 3 * (m + 1);
    memcpy(e, end, 3 * sizeof *end);
    for (int sweep = 0; sweep < REFINE_SWEEPS; sweep++) {
        double moved = 0;
        for (size_t s = 0; s < m; s++) {
            size_t i = (sweep & 1) ? m - 1 - s : s;
            double *X = x + 3 * i;
            /* the nearest neighbours that do not coincide with X: waypoints stacked on one corner
             * would otherwise pin one another (the objective has a kink there) */
            size_t pi = i, ni = i;
            const double *P = start, *N = e;
            while (pi > 0 && on_dist3(x + 3 * (pi - 1), X) < 1e-9) pi--;
            if (pi > 0) P = x + 3 * (pi - 1);
            while (ni + 1 < m && on_dist3(x + 3 * (ni + 1), X) < 1e-9) ni++;
            if (ni + 1 < m) N = x + 3 * (ni + 1);
            for (int k = 0; k < 3; k++) {
                if (lo[3 * i + k] == hi[3 * i + k]) continue; /* the face's fixed axis */
                double A = 0, B = 0;
                for (int j = 0; j < 3; j++)
                    if (j != k) {
                        A += (P[j] - X[j]) * (P[j] - X[j]);
                        B += (N[j] - X[j]) * (N[j] - X[j]);
                    }
                double sa = sqrt(A), sb = sqrt(B);
                double u = sa + sb > 0 ? P[k] + (N[k] - P[k]) * sa / (sa + sb) : 0.5 * (P[k] + N[k]);
                u = on_clampf(u, lo[3 * i + k], hi[3 * i + k]);
                moved = on_maxf(moved, fabs(u - X[k]));
                X[k] = u;
            }
        }
        if (moved < REFINE_TOL) break;
    }
    q->npts = m + 2;
    return 0;
}

/* Drop exactly repeated waypoints (several faces meeting at one corner pull their waypoints onto it).
 * Only exact repeats: two waypoints 1e-14 apart may sit on opposite sides of a lattice plane, and the
 * segment after the one dropped would then start a rounding error inside a blocked voxel. Collinear
 * and nearly equal points stay; smoothing removes them with a line-of-sight check. */
static void simplify(on_query *q)
{
    size_t w = 1;
    for (size_t r = 1; r < q->npts; r++) {
        const double *p = q->pts + 3 * (w - 1), *c = q->pts + 3 * r;
        if (p[0] == c[0] && p[1] == c[1] && p[2] == c[2] && r + 1 < q->npts) continue;
        if (w != r) memmove(q->pts + 3 * w, c, 3 * sizeof *c);
        w++;
    }
    q->npts = w;
}

/* Can smoothing go from kept waypoint i (the kept one before it: prev, NULL at the start) straight to
 * waypoint c? In sight, and the turns at i and at c (on to c + 1, as the path before smoothing goes)
 * keep to the visibility rule: a turn exactly on an edge where blocked voxels meet could slip through
 * the gap there. The turns of the path before smoothing are sound (each waypoint lies on the face two
 * consecutive cells share), so c = i + 1 always passes once i did: smoothing never gets stuck. */
static int jump_ok(on_query *q, const double *prev, size_t i, size_t c)
{
    const double *P = q->pts;
    return los(q, P + 3 * i, P + 3 * c) && (!prev || on_tree_turn_ok(q->t, q->lcache, prev, P + 3 * i, P + 3 * c)) &&
           (c + 1 >= q->npts || on_tree_turn_ok(q->t, q->lcache, P + 3 * i, P + 3 * c, P + 3 * (c + 1)));
}

/* String pulling by line of sight: from each kept waypoint, jump to the farthest one jump_ok allows.
 * greedy: gallop forward (the next waypoints 2, 4, 8, ... ahead, and the last one) while allowed, then
 * bisect between the last one allowed and the first one not: O(log n) checks per kept waypoint
 * instead of scanning back from the end (O(n)), and as short with relaxation after it (measured: mean
 * length ratio within 0.001 on the benchmark maps, p99 within 0.003). binary: bisect over the whole
 * rest of the path. Both assume what they bisect is monotone. */
static void smooth(on_query *q, int mode)
{
    if (q->npts < 3) return;
    size_t w = 0, i = 0, n = q->npts;
    while (i < n - 1) {
        /* the output so far is pts[0..w] (pts[w] == waypoint i); waypoints after i are untouched, and
         * pts[w - 1] stays as it is until this step is done */
        const double *prev = w > 0 ? q->pts + 3 * (w - 1) : NULL;
        size_t ok = i + 1, bad = n; /* bad: the first waypoint known not allowed (n: none yet) */
        if (mode == ON_SMOOTH_GREEDY) {
            for (size_t step = 1; ok < n - 1; step *= 2) {
                size_t c = ok + step < n - 1 ? ok + step : n - 1;
                if (!jump_ok(q, prev, i, c)) {
                    bad = c;
                    break;
                }
                ok = c;
            }
        } else {
            bad = n - 1;
            if (jump_ok(q, prev, i, bad)) ok = bad;
        }
        while (bad < n && bad - ok > 1) {
            size_t mid = ok + (bad - ok) / 2;
            if (jump_ok(q, prev, i, mid)) ok = mid;
            else bad = mid;
        }
        memmove(q->pts + 3 * ++w, q->pts + 3 * ok, 3 * sizeof *q->pts);
        i = ok;
    }
    q->npts = w + 1;
}

/* May the path run pa -> A -> X -> B -> nb (pa, nb: the waypoints around, NULL at the ends)? Both
 * segments in sight, and the turns at A, X and B allowed by the rule (on_tree_turn_ok): a corner moved
 * onto a lattice edge could otherwise slip through a zero-width gap there. */
static int corner_ok(on_query *q, const double *pa, const double A[3], const double X[3], const double B[3],
                     const double *nb)
{
    return los(q, A, X) && los(q, X, B) && on_tree_turn_ok(q->t, q->lcache, A, X, B) &&
           (!pa || on_tree_turn_ok(q->t, q->lcache, pa, A, X)) && (!nb || on_tree_turn_ok(q->t, q->lcache, X, B, nb));
}

/* Move corner P (between A and B) from P towards C, as far as corner_ok holds (bisection, `steps`
 * halvings). Returns 1 when it moved. */
static int slide(on_query *q, const double *pa, const double A[3], double P[3], const double B[3], const double *nb,
                 const double C[3], int steps)
{
    double before = on_dist3(A, P) + on_dist3(P, B);
    double lo = 0, hi = 1, best[3];
    for (int it = 0; it <= steps; it++) {
        double mid = it == 0 ? 1 : 0.5 * (lo + hi), X[3];
        for (int k = 0; k < 3; k++) X[k] = P[k] + mid * (C[k] - P[k]);
        if (corner_ok(q, pa, A, X, B, nb)) {
            lo = mid;
            memcpy(best, X, sizeof best);
            if (it == 0) break; /* the whole move is free */
        } else {
            hi = mid;
        }
    }
    if (lo == 0) return 0;
    double after = on_dist3(A, best) + on_dist3(best, B);
    if (!(after < before)) return 0;
    memcpy(P, best, sizeof best);
    return 1;
}

/* Corner relaxation: after smoothing, each kept corner P (between A and B) lies where the corridor of
 * cells bent, on a cell face, which need not be where the obstacle is (the corridor may pass through
 * leaves at some distance from it). Each pass drops a corner whose neighbours see each other, then
 * slides it along each axis towards the exact 1D minimiser of |A - X| + |X - B| (as in refine), as
 * far as both its segments stay in sight and the turns at A, P and B keep to the rule (corner_ok). `passes` passes, each finer than the one before. */
static void relax(on_query *q, int passes)
{
    double thr = 1e-3;
    int steps = 2;
    for (int pass = 0; pass < passes && q->npts >= 3; pass++, thr *= 0.25, steps += steps < 8) {
        for (size_t i = 1; i + 1 < q->npts; i++) {
            double *A = q->pts + 3 * (i - 1), *P = q->pts + 3 * i, *B = q->pts + 3 * (i + 1);
            const double *pa = i >= 2 ? q->pts + 3 * (i - 2) : NULL;
            const double *nb = i + 2 < q->npts ? q->pts + 3 * (i + 2) : NULL;
            if (los(q, A, B) && (!pa || on_tree_turn_ok(q->t, q->lcache, pa, A, B)) &&
                (!nb || on_tree_turn_ok(q->t, q->lcache, A, B, nb))) { /* the corner is not needed */
                memmove(P, B, 3 * sizeof *P * (q->npts - i - 1));
                q->npts--;
                i--;
                continue;
            }
            for (int k = 0; k < 3; k++) {
                double SA = 0, SB = 0;
                for (int j = 0; j < 3; j++)
                    if (j != k) {
                        SA += (A[j] - P[j]) * (A[j] - P[j]);
                        SB += (B[j] - P[j]) * (B[j] - P[j]);
                    }
                double sa = sqrt(SA), sb = sqrt(SB), C[3] = {P[0], P[1], P[2]};
                C[k] = sa + sb > 0 ? A[k] + (B[k] - A[k]) * sa / (sa + sb) : 0.5 * (A[k] + B[k]);
                /* pass 0 tries only moves that could gain a thousandth of the two segments' length,
                 * with two halvings (measured: 35-40 checks a query instead of 59 for 1e-3 leaves and
                 * three, mean lengths within 0.0006); each later pass looks 4 times closer, one
                 * halving finer, so more passes buy precision */
                double full = on_dist3(A, C) + on_dist3(C, B), now = on_dist3(A, P) + on_dist3(P, B);
                if (now - full > thr * now) slide(q, pa, A, P, B, nb, C, steps);
            }
        }
    }
}

on_status on_query_finalize(on_query *q, double *path, size_t cap, size_t *npath, on_query_info *info)
{
    on_status st = q->state;
    if (npath) *npath = 0;
    int32_t end = -1;
    int partial = 0;
    if (on_ok(st)) end = q->found;
    else if (q->o.partial && q->best >= 0 && (st & (ON_UNREACHABLE | ON_BUDGET | ON_OUT_OF_NODES))) {
        end = q->best;
        partial = 1;
    }
    if (end >= 0 && q->npts == 0 && q->g.ops->borrows_tiles && !q->direct && on_tileset_changed(&q->touched, q->t)) {
        /* the corridor's boxes may be gone (a tile changed, re-prepared or unloaded since the search):
         * the result is stale, as a running search would be */
        q->state = ON_FAILURE | ON_STALE;
        if (info) *info = q->info;
        return q->state;
    }
    if (end >= 0 && q->npts == 0 && q->direct) {
        if (push_pt(q, q->a) || push_pt(q, q->b)) return ON_FAILURE | ON_NO_MEMORY;
        q->info.cells = q->ncorr;
        if (on_tileset_of_path(&q->ptiles, &q->touched, q->t, q->lcache, q->corr, q->ncorr, q->pts, q->npts) != 0) return ON_FAILURE | ON_NO_MEMORY;
        q->info.length = on_dist3(q->a, q->b) * q->t->p.scale;
    } else if (end >= 0 && q->npts == 0) {
        if (build_corridor(q, end) != 0) return ON_FAILURE | ON_NO_MEMORY;
        double stop[3];
        if (partial) { /* the point of the nearest cell closest to the goal */
            double mn[3], mx[3], s;
            on_graph_region(&q->g, q->pool.nodes[end].cell, mn, mx, &s);
            for (int k = 0; k < 3; k++) stop[k] = on_clampf(q->b[k], mn[k], mx[k]);
        } else {
            memcpy(stop, q->b, sizeof stop);
        }
        if (q->o.any_angle || !q->o.refine) {
            /* start point, the chain's cell centres (visible from one another under Lazy Theta*;
             * adjacent ones without it), goal point */
            q->npts = 0;
            size_t n = 0;
            for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) n++;
            for (size_t k = 0; k < n + 2; k++)
                if (push_pt(q, q->a)) return ON_FAILURE | ON_NO_MEMORY;
            size_t k = n + 1;
            for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) node_point(q, i, q->pts + 3 * --k);
            memcpy(q->pts + 3 * (n + 1), stop, sizeof stop);
            q->npts = n + 2;
        } else if (refine(q, q->a, stop) != 0) {
            return ON_FAILURE | ON_NO_MEMORY;
        }
        simplify(q);
        if (q->o.smooth != ON_SMOOTH_NONE) smooth(q, q->o.smooth);
        if (q->o.smooth != ON_SMOOTH_NONE && q->o.relax > 0) relax(q, q->o.relax);
        q->info.cells = q->ncorr;
        if (on_tileset_of_path(&q->ptiles, &q->touched, q->t, q->lcache, q->corr, q->ncorr, q->pts, q->npts) != 0) return ON_FAILURE | ON_NO_MEMORY;
        double len = 0;
        for (size_t i = 1; i < q->npts; i++) len += on_dist3(q->pts + 3 * (i - 1), q->pts + 3 * i);
        q->info.length = len * q->t->p.scale;
    }
    if (info) *info = q->info;
    if (end < 0) return st;
    if (npath) *npath = q->npts;
    if (path && cap >= q->npts)
        for (size_t i = 0; i < q->npts; i++)
            for (int k = 0; k < 3; k++) path[3 * i + k] = q->t->p.origin[k] + q->pts[3 * i + k] * q->t->p.scale;
    else if (cap < q->npts)
        return ON_FAILURE | ON_BUFFER_SMALL;
    return partial ? (st | ON_PARTIAL) : st;
}

on_status on_query_path_tiles(const on_query *q, uint32_t *tiles, uint32_t *salts, size_t cap, size_t *n)
{
    /* built by finalize: the corridor's tiles and those the final segments cross, each once */
    for (size_t i = 0; i < q->ptiles.n && i < cap; i++) {
        tiles[i] = q->ptiles.tile[i];
        salts[i] = q->ptiles.salt[i];
    }
    *n = q->ptiles.n;
    return q->ptiles.n > cap ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}

on_status on_query_find(on_query *q, const double a[3], const double b[3], const on_query_opts *o, double *path,
                        size_t cap, size_t *npath, on_query_info *info)
{
    on_status s = on_query_init(q, a, b, o);
    if (s == ON_IN_PROGRESS) on_query_update(q, (size_t)-1, NULL);
    if (q->state == (ON_IN_PROGRESS | ON_LOADING)) q->state = ON_FAILURE | ON_LOADING; /* cannot wait here */
    return on_query_finalize(q, path, cap, npath, info);
}

/* ---- nearest free point ---------------------------------------------------------------------- */

on_status on_tree_nearest_free(const on_tree *t, const double p[3], double radius_leaves, double out[3])
{
    double n[3];
    on_to_nav(t, p, n);
    for (int k = 0; k < 3; k++)
        if (!isfinite(n[k]) || fabs(n[k]) > 1e15) return ON_FAILURE | ON_INVALID;
    int64_t c[3] = {(int64_t)floor(n[0]), (int64_t)floor(n[1]), (int64_t)floor(n[2])};
    double best = INFINITY, bp[3] = {0, 0, 0};
    int64_t R = (int64_t)radius_leaves;
    for (int64_t r = 0; r <= R; r++) {
        if ((double)(r - 1) > best) break; /* every voxel of this shell is farther than the best */
        for (int64_t dz = -r; dz <= r; dz++)
            for (int64_t dy = -r; dy <= r; dy++)
                for (int64_t dx = -r; dx <= r; dx++) {
                    if (llabs(dx) != r && llabs(dy) != r && llabs(dz) != r) continue; /* shell only */
                    int64_t v[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
                    if (!on_tree_leaf_free(t, v[0], v[1], v[2], NULL)) continue;
                    double q[3];
                    for (int k = 0; k < 3; k++) {
                        /* the voxel's closest point, kept a hair inside so it locates as free */
                        double lo = (double)v[k] + 1e-3, hi = (double)v[k] + 1 - 1e-3;
                        q[k] = fmin(fmax(n[k], lo), hi);
                    }
                    double d = on_dist3(q, n);
                    if (d < best) {
                        best = d;
                        memcpy(bp, q, sizeof q);
                    }
                }
    }
    if (!isfinite(best)) return ON_FAILURE | ON_UNREACHABLE;
    for (int k = 0; k < 3; k++) out[k] = t->p.origin[k] + bp[k] * t->p.scale;
    return ON_SUCCESS;
}
