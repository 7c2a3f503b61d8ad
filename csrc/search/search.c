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
 * decision is the one made before areas existed (the same paths and expansions). A query's start
 * (locating the ends, the direct segment, the direction, the first node) is search_start.c's.
 */
/* The search loop (on_query_update: expand, relax and the heap inline, one large function) is built by
 * gcc without partial redundancy elimination on trees (-ftree-pre) and without the straight-line
 * vectorizer (-ftree-slp-vectorize): PRE keeps loads across the loop that then want registers, and the
 * SLP vectorizer packs a cell's coordinates into vectors with shuffles; without both, fewer instructions
 * (make bench-query-ir, gcc 12.2: DC1 399,574 -> 397,825, Complex 414,300 -> 412,912, A1 412,254 ->
 * 409,977; each alone: PRE off -0.8 k / -0.5 k / -1.2 k, SLP off +1.9 k / +2.5 k / +1.5 k). Before the
 * includes, so that the headers' inline functions get the same options and still inline (gcc inlines no
 * function into one of other optimize options). Clang: its own optimizer, no pragma. Also without
 * if-conversion (-fif-conversion: branches into conditional moves, which run both sides) and loop
 * invariant motion on trees (-ftree-loop-im): with the two above, make bench-query-ir Complex
 * 409,333 -> 408,466 (if-conversion off alone), -> 407,919 (both; with celladj.c's if-conversion off:
 * DC1 393,828 -> 391,643, Complex -> 407,213, A1 405,977 -> 404,323; session 29, h31ir3). */
/* The __builtin_expect hints in this file (and in nodepool.h's heap, search_path.c, raycast.c's fast_run and
 * raycast_turn.*) and the always_inline of tighten.c's and search_path.c's small helpers write down what gcc
 * 12.2's profile-guided build decides from a training run (a profile-guided build was 12-13 k a query below
 * the default): the rare side of a branch (the goal reached, a tile to wait for, partial results, Lazy
 * Theta*, a cell without the tile's adjacency, a replayed or logged finish) and the helpers it inlines.
 * Together, make bench-query-ir DC1 389,952 -> 383,802, Complex 405,933 -> 399,952, A1 402,867 -> 396,328,
 * each kept for what it paid alone (docs/benchmarks.md, session 31, h31ir5). Like the pragma, this is gcc's
 * register allocation and layout in one large function, not less work: other hints that would be as true
 * (the main loop's exits, the second adjacency loop's stop) cost 0.2-3 k; re-measure on a compiler change. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-pre", "no-tree-slp-vectorize", "no-if-conversion", "no-tree-loop-im")
#endif
#include "query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    free(q->flog);
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

/* Set bits of a face mask (search.c is built for the baseline x86-64, whose popcount is a call). */
static inline unsigned pop6(unsigned m)
{
    m = (m & 0x15u) + ((m >> 1) & 0x15u);
    return (m & 3u) + ((m >> 2) & 3u) + (m >> 4);
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
                                                             unsigned face, const int plain, const int room)
{
    int created, found = 0;
    int32_t v;
    on_mslot *slot = NULL;
    if (plain) found = room ? on_pool_probe_room(&q->pool, c, &slot) : on_pool_probe(&q->pool, c, &slot);
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
    /* (over the adjacency list: u, expanded, covers v's face towards it whole when u is no smaller; v's
     * list leaves that face out when v is expanded, see expand; a new node's is set with its pface) */
    if (plain && !fresh && x->ulayer >= on_code_layer(c.code)) vn->covered |= (uint8_t)(1u << (face ^ 1u));
    /* (over the adjacency list, an open node's new g is gfrom plus a distance, no lower than gfrom: a
     * node reached before at a g no higher than gfrom keeps it, and its point and distance are not
     * worked out; the same decision as below, g < vn->g) */
    if (plain && !fresh && !(x->gfrom < vn->g)) return ON_IN_PROGRESS;
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
        if (fresh) vn->covered = (uint8_t)(x->ulayer >= vl ? 1u << (face ^ 1u) : 0u); /* (see covered above) */
        vn->f = f;
        /* reached (not expanded): see expand */
        if (__builtin_expect(plain ? c.code == x->goal_code : x->early && same_cell(c, q->goal_cell), 0)) {
            q->found = v;
            return ON_SUCCESS;
        }
        if (fresh) on_pool_push_f(&q->pool, (uint32_t)v, f);
        else on_pool_push_or_update(&q->pool, (uint32_t)v);
    }
    return ON_IN_PROGRESS;
}

/* What every expansion of a search reads off its options and graph, set when the search's loop
 * starts and again whenever they change in it (escalation, turning round, starting again over the
 * cells): read once there rather than at each expansion. */
typedef struct exp_mode {
    int fp, cells, early, partial, any_angle;
    const on_areaset *areas;
    uint32_t *adjix;         /* (see expand) */
    on_celladj_lister list;  /* the adjacency's lists, with numbers when adjix */
} exp_mode;

static void mode_set(on_query *q, exp_mode *md)
{
    md->fp = face_points(q);
    md->cells = md->fp && q->g.kind == ON_GRAPH_CELLS;
    /* (see expand) */
    md->early = md->fp && q->o.weight > 1 && q->g.kind != ON_GRAPH_BOXES;
    md->partial = q->o.partial;
    md->any_angle = q->o.any_angle;
    md->areas = q->areas.n ? &q->areas : NULL;
    md->adjix = q->lm ? q->g.nbix : NULL; /* (a flag: expand reads q->g.nbix, which moves as it grows) */
    md->list = md->adjix ? q->g.list_num : q->g.list_nn;
}

/* The expansion context's fields that follow the mode (set with it, not at every expansion). */
static void xset(exp_ctx *x, const exp_mode *md)
{
    x->fp = md->fp;
    x->cells = md->cells;
    x->areas = md->areas; /* (read once: not per edge) */
    x->early = md->early;
}

/* Expand node u: close it and reach its neighbours (relax). Inline in on_query_update, its one caller:
 * no call frame an expansion (measured: about 23 instructions an expansion). */
static inline __attribute__((always_inline)) on_status expand(on_query *q, int32_t u, const exp_mode *md, exp_ctx *xp)
{
    on_cell ucell = q->pool.nodes[u].cell;
    /* (a plain cell inside its tile: no tile beyond to wait for, and its neighbours are its tile's) */
    int inside = q->g.kind == ON_GRAPH_CELLS && on_graph_cell_inside(&q->g, ucell);
    int64_t wait = inside ? -1 : on_graph_unloaded_beyond_slow(&q->g, ucell);
    if (__builtin_expect(wait >= 0, 0)) { /* put u back and wait for the tile rather than taking it for a wall */
        q->info.loading_tile = (uint32_t)wait;
        on_pool_push_or_update(&q->pool, (uint32_t)u);
        return ON_IN_PROGRESS | ON_LOADING;
    }
    if (ucell.tile != q->touch_last) { /* (most expansions stay in the tile of the one before) */
        if (touch_tile(q, ucell.tile) != 0) return ON_FAILURE | ON_NO_MEMORY;
        q->touch_last = ucell.tile;
    }
    exp_ctx *x = xp; /* (fp, cells, areas and early: set with the mode, xset) */
    /* Over the plain cells with face points: the face of u's cell its parent's cell covers whole (set
     * with the parent, in relax). Every neighbour across it is the parent, closed: it is left out. */
    int skip = x->cells ? q->pool.nodes[u].pface : -1;
    /* Over the tile's adjacency also every face the adjacency loop found covered whole by a node expanded
     * before (on_snode's covered: its one neighbour there is that node, closed, which relax passes
     * over): not listed, but counted in q->info.neighbors as the entry it would be. Measured with
     * callgrind (make bench-query-ir): see docs/benchmarks.md, session 26. */
    unsigned covered = __builtin_expect(x->cells, 1) ? q->pool.nodes[u].covered : 0u;
    /* A cell inside its tile (most) reads its neighbours off the tile's cell adjacency: every one is a
     * cell of the tile (celladj.h); others ask the graph (border faces walk the tree). */
    const on_celladj *adj = NULL;
    size_t nnb = 0;
    /* (the cells' numbers, which nodes keep for the landmarks' bound alone: without landmarks none are
     * asked, and the list's counts for them fold away) */
    /* (read here, not kept in md: growing the lists, here or in the graph's walk, moves q->g.nbix;
     * a pointer kept from before wrote into freed memory, found by ASan on A4 with landmarks) */
    uint32_t *adjix = md->adjix ? q->g.nbix : NULL;
    if (x->cells && inside && (adj = on_graph_cells_adj(&q->g, ucell.tile))) {
        unsigned pbit = skip >= 0 ? 1u << skip : 0u;
        unsigned walk = 63u & ~(pbit | covered);
        covered &= ~pbit; /* (the faces left out beyond the parent's: one entry each in the count) */
        long m;
        while ((m = md->list(adj, &q->g.chain, ucell.tile, ucell.code, walk, q->g.nb, adjix, q->g.nbface, q->g.nbcap, NULL)) >
               (long)q->g.nbcap) {
            if (on_graph_nb_reserve(&q->g, (size_t)m) != 0) return ON_FAILURE | ON_NO_MEMORY;
            adjix = md->adjix ? q->g.nbix : NULL;
        }
        if (__builtin_expect(m < 0, 0)) adj = NULL; /* (no free cell of the tile: the graph walks the tree) */
        else nnb = (size_t)m;
        if (adj && covered) q->info.neighbors += pop6(covered);
    }
    if (__builtin_expect(!adj, 0)) {
        q->g.skip_face = skip;
        on_status ns = on_graph_neighbors(&q->g, ucell, &nnb);
        q->g.skip_face = -1;
        if (ns != ON_SUCCESS) {
            if (ns == ON_FALLBACK) on_pool_push_or_update(&q->pool, (uint32_t)u);
            return ns;
        }
        if (md->any_angle) lazy_fix_parent(q, u, nnb);
    }
    on_snode *un = &q->pool.nodes[u];
    un->closed = 1;
    node_point(q, u, x->pu);
    /* the goal is reached when its node is expanded (weighted over face points: when first reached, below) */
    if (__builtin_expect(same_cell(un->cell, q->goal_cell), 0)) {
        q->found = u;
        return ON_SUCCESS;
    }
    if (__builtin_expect(md->partial, 0)) { /* (the node nearest the goal: read only for partial results) */
        double dx = x->pu[0] - q->b[0], dy = x->pu[1] - q->b[1], dz = x->pu[2] - q->b[2];
        double hu2 = dx * dx + dy * dy + dz * dz;
        if (hu2 < q->best_h2) {
            q->best_h2 = hu2;
            q->best = u;
        }
    }
    x->u = u;
    x->from = u;
    memcpy(x->pfrom, x->pu, sizeof x->pu);
    if (__builtin_expect(md->any_angle, 0) && un->parent >= 0) {
        x->from = un->parent;
        node_point(q, x->from, x->pfrom);
    }
    x->gfrom = q->pool.nodes[x->from].g;
    double us = 0;
    x->ulayer = on_code_layer(un->cell.code);
    /* the plain cell graph's region and entry point inline (the same as its operations) */
    if (x->cells) on_graph_cell_region(&q->g, un->cell, x->umn, x->umx, &us);
    else if (x->fp) on_graph_region(&q->g, un->cell, x->umn, x->umx, &us);
    for (int j = 0; j < 3; j++) x->uc[j] = x->umn[j] + 0.5 * us; /* (cells) u's centre */
    /* A weighted search over face points ends when it first reaches the goal's node rather than when
     * it would expand it: its f was already no bound on the path (weight > 1), the goal's point is
     * the face it is entered through either way, and what remains of the path is the straight
     * segment on to the goal inside its node. Measured: the same mean and p99 length ratios, 3-37%
     * fewer expansions (see README). Weight 1 keeps A*'s rule (its paths are the graph's shortest),
     * and Lazy Theta* expands the goal to check its parent's sight. Over prepared boxes the goal's box
     * is large: reached first, its point may lie far from the goal, round the wrong side of a wall
     * (Simple's hollow column); the goal is expanded, at the best f (see relax). */
    x->adj = adj;
    q->info.neighbors += nnb; /* (the whole list, also when the goal is reached before its end) */
    if (adj) {
        x->goal_code = x->early && q->goal_cell.tile == ucell.tile ? q->goal_cell.code : UINT32_MAX;
        if (q->pool.nnodes + nnb < q->pool.fastmax) { /* (room for a new node at every entry: no check each) */
            for (size_t k = 0; k < nnb; k++) {
                on_cell c = {ucell.tile, q->g.nb[k].code}; /* (the lister writes no tile) */
                on_status s = relax(q, x, c, adjix ? adjix[k] : ON_ADJ_NONE, q->g.nbface[k], 1, 1);
                if (__builtin_expect(s != ON_IN_PROGRESS, 0)) return s;
            }
            return ON_IN_PROGRESS;
        }
        for (size_t k = 0; k < nnb; k++) {
            on_cell c = {ucell.tile, q->g.nb[k].code};
            on_status s = relax(q, x, c, adjix ? adjix[k] : ON_ADJ_NONE, q->g.nbface[k], 1, 0);
            if (s != ON_IN_PROGRESS) return s;
        }
        return ON_IN_PROGRESS;
    }
    const uint32_t *nbix = q->g.kind == ON_GRAPH_CELLS ? q->g.nbix : NULL; /* (the cells' numbers: kept) */
    for (size_t k = 0; k < nnb; k++) {
        on_status s = relax(q, x, q->g.nb[k], nbix ? nbix[k] : ON_ADJ_NONE, x->cells ? q->g.nbface[k] : 0u, 0, 0);
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
    on_query_swap_ends(q, q->pool.nodes[0].cell);
    q->reversed = q->swapped;
    q->visited0 += q->pool.nnodes;
    on_pool_reset(&q->pool);
    int32_t s0 = on_query_first_node(q, sc);
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
    exp_mode md;
    exp_ctx x;
    mode_set(q, &md);
    xset(&x, &md);
    while (q->state == ON_IN_PROGRESS && n < max_iter) {
        if (q->pool.nheap == 0) {
            q->state = ON_FAILURE | ON_UNREACHABLE;
            break;
        }
        if (q->o.max_expansions && q->info.expansions >= q->o.max_expansions) {
            q->state = ON_FAILURE | ON_BUDGET;
            break;
        }
        if (q->o.escalate && q->info.expansions == q->o.escalate) {
            escalate(q);
            mode_set(q, &md);
            xset(&x, &md);
        }
        int32_t u = (int32_t)on_pool_pop(&q->pool);
        if (__builtin_expect(q->lm != NULL, 0) && lm_defer(q, u)) continue;
        if (q->may_turn && stalled(q, &q->pool.nodes[u])) {
            turn_round(q);
            mode_set(q, &md);
            xset(&x, &md);
            continue;
        }
        on_status s = expand(q, u, &md, &x);
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
            on_query_start(q, q->wa, q->wb, &q->o0, 1);
            mode_set(q, &md);
            xset(&x, &md);
            continue;
        }
        q->info.expansions++;
        n++;
        if (s != ON_IN_PROGRESS) q->state = s;
    }
    if (q->swapped && !(q->state & ON_IN_PROGRESS)) on_query_unreverse(q);
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
        if (q->swapped) on_query_unreverse(q);
    }
    return on_query_finalize(q, path, cap, npath, info);
}
