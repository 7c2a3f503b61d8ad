/*
 * search_path.c -- a finished search's result, built once by on_query_finalize: the corridor of nodes,
 * refine (or the chain of node points), simplify, smooth, relax (tighten.h), the tiles it depends on
 * (tiledeps.h), its length and its cost under the areas (areas.h); and on_query_path_tiles.
 */
#include "query.h"

/* ---- building the path ----------------------------------------------------------------------- */

/* Nodes from the start to node `end`, in order, into the corridor. */
static int build_corridor(on_query *q, int32_t end)
{
    size_t n = 0;
    for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) n++;
    if (on_grow((void **)&q->corr, &q->corrcap, n, sizeof *q->corr)) return -1;
    q->ncorr = n;
    for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) q->corr[--n] = q->pool.nodes[i].cell;
    return 0;
}

/* The faces consecutive corridor nodes share, for refine. */
static inline __attribute__((always_inline)) int corridor_faces(on_query *q)
{
    size_t m = q->ncorr - 1;
    if (on_grow((void **)&q->faces, &q->facescap, 6 * m, sizeof *q->faces)) return -1;
    double r[2][6], s; /* consecutive cells' regions (min, max), each looked up once */
    double *f = q->faces;
    if (q->g.kind == ON_GRAPH_CELLS) { /* (the plain cells' regions inline: the same values) */
        on_graph_cell_region(&q->g, q->corr[0], r[0], r[0] + 3, &s);
        for (size_t i = 0; i < m; i++, f += 6) {
            const double *a = r[i & 1];
            double *b = r[(i + 1) & 1];
            on_graph_cell_region(&q->g, q->corr[i + 1], b, b + 3, &s);
            for (int k = 0; k < 3; k++) {
                f[k] = on_maxf(a[k], b[k]);
                f[3 + k] = on_minf(a[3 + k], b[3 + k]);
            }
        }
        return 0;
    }
    on_graph_region(&q->g, q->corr[0], r[0], r[0] + 3, &s);
    for (size_t i = 0; i < m; i++, f += 6) {
        const double *a = r[i & 1];
        double *b = r[(i + 1) & 1];
        on_graph_region(&q->g, q->corr[i + 1], b, b + 3, &s);
        for (int k = 0; k < 3; k++) {
            f[k] = on_maxf(a[k], b[k]);
            f[3 + k] = on_minf(a[3 + k], b[3 + k]);
        }
    }
    return 0;
}

/* After refine: which waypoints lie strictly inside their face (inside both of its free cells'
 * shared face, off its edges), so that every voxel around them is free and any turn there keeps to
 * the visibility rule (smoothing then skips the turn check: on_sight's clear). The ends: 0 (never a
 * turn smoothing checks). -1 on allocation failure. */
static inline __attribute__((always_inline)) int refined_clear(on_query *q)
{
    size_t n = q->path.n, m = q->ncorr - 1;
    if (on_grow((void **)&q->clear, &q->clearcap, n, 1)) return -1;
    q->clear[0] = q->clear[n - 1] = 0;
    for (size_t i = 1; i + 1 < n && i <= m; i++) {
        const double *x = q->path.p + 3 * i, *lo = q->faces + 6 * (i - 1), *hi = lo + 3;
        int in = 1;
        for (int k = 0; k < 3 && in; k++) in = lo[k] == hi[k] || (x[k] > lo[k] && x[k] < hi[k]);
        q->clear[i] = (unsigned char)in;
    }
    return 0;
}

/* The path without refinement: start point, the chain's node points (visible from one another under
 * Lazy Theta*; adjacent ones without it), stop point. */
static int node_chain(on_query *q, int32_t end, const double stop[3])
{
    size_t n = 0;
    for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) n++;
    if (on_pathbuf_reserve(&q->path, n + 2)) return -1;
    memcpy(q->path.p, q->a, sizeof q->a);
    size_t k = n + 1;
    for (int32_t i = end; i >= 0; i = q->pool.nodes[i].parent) node_point(q, i, q->path.p + 3 * --k);
    memcpy(q->path.p + 3 * (n + 1), stop, 3 * sizeof *stop);
    q->path.n = n + 2;
    return 0;
}

/* What smoothing and relaxation ask while one path is finished: the query's line of sight and turn
 * checks, with turns' answers kept. A turn's answer depends only on its corner x and on which side of
 * each axis the path comes from and leaves to (on_tree_turn_ok), and relaxation asks the same turns
 * again as it tries to slide a corner between them (measured on DC1: 28.1 turn checks a query without,
 * 23.5 with the last 16 kept, 23.0 with 32; the same paths). Kept in TURN_MEMO slots by a hash of the
 * corner and its sides (a later turn in the same slot replaces it) rather than the last 16 in a list
 * read through at every ask (70 asks a query on DC1): make bench-query-ir DC1 438,199 -> 435,978
 * instructions a query, A1 445,656 -> 443,772; the same paths. */
#define TURN_MEMO 64 /* (a power of two: slots by a hash of the corner and its sides) */
#define BLOCKED_MEMO 16
typedef struct fin_sight {
    on_query *q;
    size_t pos; /* the next answer of q->flog this run reads */
    on_turn_cache tc; /* the voxels the last turn check read (the tree does not change meanwhile) */
    on_sight_cache sc; /* where the last line of sight started (the same) */
    uint64_t tvalid; /* bit i: turn[i] holds an answer */
    struct {
        int64_t v[3];   /* the floor of x on each axis */
        unsigned sides; /* on each axis where x lies on a lattice plane: 16 and the signs of x - a and b - x */
        int ok;
    } turn[TURN_MEMO];
    int relaxing; /* smoothing is done: the blocked segments are asked, no longer recorded */
    unsigned nblocked; /* blocked[nblocked % BLOCKED_MEMO] is the next replaced */
    double blocked[BLOCKED_MEMO][6]; /* a segment's ends a, b */
} fin_sight;

/* (fin_replay, fin_log, fin_turn_tree, corridor_faces and refined_clear always inline, the replay and the log's
 * growth expected rare: as gcc's profile-guided build decides; see search.c, h31ir5) */
/* A check's answer without the tree: the one a slice before this run got (replayed), or, once this
 * run went past its limit, a made-up 0 (the run's result is not kept). 0 when the tree must answer. */
static inline __attribute__((always_inline)) int fin_replay(fin_sight *fs, int *ans)
{
    on_query *q = fs->q;
    if (__builtin_expect(fs->pos < q->nflog, 0)) {
        *ans = q->flog[fs->pos++];
        return 1;
    }
    if (__builtin_expect(q->fin_cut, 0)) {
        *ans = 0;
        return 1;
    }
    return 0;
}

/* The tree's answer, logged; the slice's limit or its stop ends the run's real checks after it. */
static inline __attribute__((always_inline)) int fin_log(fin_sight *fs, int ans)
{
    on_query *q = fs->q;
    if (__builtin_expect(on_grow((void **)&q->flog, &q->flogcap, q->nflog + 1, 1) != 0, 0)) {
        q->fin_nomem = q->fin_cut = 1;
        return ans;
    }
    q->flog[q->nflog++] = (unsigned char)(ans != 0);
    fs->pos++;
    if (--q->fin_left == 0 || (q->fin_stop && q->fin_stop(q->fin_stop_ud))) q->fin_cut = 1;
    return ans;
}

/* Line of sight; while smoothing (fs->relaxing 0), the last BLOCKED_MEMO segments found blocked are
 * kept for fin_known_blocked. */
static int fin_visible(void *ud, const double a[3], const double b[3])
{
    fin_sight *fs = ud;
    int ok;
    if (!fin_replay(fs, &ok)) {
        on_query *q = fs->q;
        if (q->g.radius) ok = sight_visible(q, a, b);
        else {
            q->info.los++;
            ok = on_tree_visible_nav_cached(q->t, q->lcache, &fs->sc, a, b);
        }
        ok = fin_log(fs, ok);
    }
    if (!ok && !fs->relaxing) {
        double *s = fs->blocked[fs->nblocked++ % BLOCKED_MEMO];
        memcpy(s, a, 3 * sizeof *a);
        memcpy(s + 3, b, 3 * sizeof *b);
    }
    return ok;
}

/* Is a -> b one of the segments smoothing found blocked? Relaxation's first check of a corner, whether
 * its neighbours see each other, is often one smoothing tried from the neighbour before (measured on
 * A1: 1.08 of 13 relaxation line-of-sight checks a query; the same paths). */
static int fin_known_blocked(void *ud, const double a[3], const double b[3])
{
    const fin_sight *fs = ud;
    unsigned kept = fs->nblocked < BLOCKED_MEMO ? fs->nblocked : BLOCKED_MEMO;
    for (unsigned i = 0; i < kept; i++) {
        const double *s = fs->blocked[i];
        if (s[0] == a[0] && s[3] == b[0] && s[1] == a[1] && s[2] == a[2] && s[4] == b[1] && s[5] == b[2]) return 1;
    }
    return 0;
}

static double fin_cost(void *ud, const double a[3], const double b[3])
{
    return on_areaset_cost(&((fin_sight *)ud)->q->areas, a, b);
}

/* A turn's answer from the tree (or the replayed log), counted in info.turns. */
static inline __attribute__((always_inline)) int fin_turn_tree(fin_sight *fs, const double a[3], const double x[3],
                                                               const double b[3])
{
    on_query *q = fs->q;
    int ok;
    if (!fin_replay(fs, &ok)) {
        q->info.turns++;
        ok = fin_log(fs, on_tree_turn_ok_cached(q->t, q->lcache, &fs->tc, a, x, b));
    }
    return ok;
}

static int fin_turn_ok(void *ud, const double a[3], const double x[3], const double b[3])
{
    fin_sight *fs = ud;
    unsigned sides = 0;
    int64_t v[3];
    for (int j = 0; j < 3; j++) {
        /* The rule reads, on an axis where x lies off the lattice planes, x's own voxel there whichever way
         * the path goes and wherever x lies inside it; on a plane, the voxels on either side of it and the
         * sides the path comes from and leaves to (on_tree_turn_ok). So turns whose corners have the same
         * floor on each axis, on the same planes, with the same sides on those, have one answer: the memo's
         * key. (Keyed by the corner's exact point before: a slide's tries along an axis inside one voxel
         * missed it.) Coordinates beyond the range of int64_t (not a path's: the tree answers no to them
         * all the same) are asked of the tree. */
        if (!(fabs(x[j]) < 0x1p52)) return fin_turn_tree(fs, a, x, b);
        int64_t fl = (int64_t)x[j];
        fl -= (double)fl > x[j];
        v[j] = fl;
        if ((double)fl != x[j]) continue;
        double din = x[j] - a[j], dout = b[j] - x[j];
        sides |= (unsigned)((din > 0) | (din < 0) << 1 | (dout > 0) << 2 | (dout < 0) << 3 | 16) << (5 * j);
    }
    unsigned slot = (unsigned)(((((uint64_t)v[0] * 0x9E3779B97F4A7C15ull ^ (uint64_t)v[1]) * 0x9E3779B97F4A7C15ull ^
                                 (uint64_t)v[2] ^ sides) *
                                0x9E3779B97F4A7C15ull) >>
                               58);
    if (((fs->tvalid >> slot) & 1u) && fs->turn[slot].sides == sides && fs->turn[slot].v[0] == v[0] &&
        fs->turn[slot].v[1] == v[1] && fs->turn[slot].v[2] == v[2])
        return fs->turn[slot].ok;
    int ok = fin_turn_tree(fs, a, x, b);
    fs->tvalid |= 1ull << slot;
    memcpy(fs->turn[slot].v, v, sizeof v);
    fs->turn[slot].sides = sides;
    fs->turn[slot].ok = ok;
    return ok;
}

/* The result's tiles, from the corridor and the final path. */
static int path_tiles(on_query *q)
{
    return on_tileset_of_path(&q->ptiles, &q->touched, q->t, q->lcache, q->corr, q->ncorr, q->path.p, q->path.n);
}

/* The straight segment of a direct result (its corridor: the cells the walk crossed). */
static int straight_path(on_query *q)
{
    if (on_pathbuf_push(&q->path, q->a) || on_pathbuf_push(&q->path, q->b)) return -1;
    q->info.cells = q->ncorr;
    if (path_tiles(q) != 0) return -1;
    q->info.length = on_dist3(q->a, q->b) * q->t->p.scale;
    q->info.cost = edge_cost(q, q->a, q->b) * q->t->p.scale;
    return 0;
}

/* The searched path to node `end` (partial: the node nearest the goal), pulled tight: corridor,
 * refine (or the node chain), simplify, smooth, relax; then its tiles and length. 1 when the run went
 * past its slice's limit (q->fin_cut: nothing kept, q->path.n 0), -1 on allocation failure. */
static int tightened_path(on_query *q, int32_t end, int partial)
{
    if (build_corridor(q, end) != 0) return -1;
    double stop[3];
    if (partial) { /* the point of the nearest node closest to the goal */
        double mn[3], mx[3], s;
        on_graph_region(&q->g, q->pool.nodes[end].cell, mn, mx, &s);
        for (int k = 0; k < 3; k++) stop[k] = on_clampf(q->b[k], mn[k], mx[k]);
    } else {
        memcpy(stop, q->b, sizeof stop);
    }
    fin_sight fs;
    fs.q = q;
    fs.pos = 0;
    q->fin_cut = q->fin_nomem = 0;
    fs.tvalid = 0;
    fs.relaxing = 0;
    fs.nblocked = 0;
    on_turn_cache_init(&fs.tc);
    on_sight_cache_init(&fs.sc);
    on_sight sight = {fin_visible, fin_turn_ok, &fs, q->areas.n ? fin_cost : NULL, NULL, fin_known_blocked};
    if (q->o.any_angle || !q->o.refine) {
        if (node_chain(q, end, stop) != 0) return -1;
    } else if (q->areas.n) {
        /* refinement pulls the path tight by length: kept when it is not dearer than the chain of
         * node points the search costed */
        if (node_chain(q, end, stop) != 0 || on_pathbuf_reserve(&q->alt, q->path.n) != 0) return -1;
        memcpy(q->alt.p, q->path.p, 3 * q->path.n * sizeof *q->path.p);
        q->alt.n = q->path.n;
        if (corridor_faces(q) != 0 || on_refine(&q->path, q->faces, q->ncorr - 1, q->a, stop) != 0) return -1;
        if (on_pathbuf_cost(&q->alt, &sight) < on_pathbuf_cost(&q->path, &sight)) {
            on_pathbuf t = q->path;
            q->path = q->alt;
            q->alt = t;
        } else {
            if (refined_clear(q) != 0) return -1;
            sight.clear = q->clear;
        }
    } else {
        if (corridor_faces(q) != 0 || on_refine(&q->path, q->faces, q->ncorr - 1, q->a, stop) != 0 ||
            refined_clear(q) != 0)
            return -1;
        sight.clear = q->clear;
    }
    on_simplify(&q->path, q->clear && sight.clear ? q->clear : NULL);
    if (q->o.smooth != ON_SMOOTH_NONE) on_smooth(&q->path, &sight, q->o.smooth);
    sight.clear = NULL; /* (the flags follow the waypoints smoothing was given, not its output) */
    fs.relaxing = 1;
    if (q->o.smooth != ON_SMOOTH_NONE && q->o.relax > 0) on_relax(&q->path, &sight, q->o.relax);
    if (q->fin_cut) {
        q->path.n = 0;
        return q->fin_nomem ? -1 : 1;
    }
    q->info.cells = q->ncorr;
    if (path_tiles(q) != 0) return -1;
    q->info.length = on_pathbuf_length(&q->path) * q->t->p.scale;
    q->info.cost = q->areas.n ? on_pathbuf_cost(&q->path, &sight) * q->t->p.scale : q->info.length;
    return 0;
}

/* The node a finished search's result ends at (-1: none), *partial set for the node nearest the goal. */
static int32_t result_end(const on_query *q, int *partial)
{
    on_status st = q->state;
    *partial = 0;
    if (on_ok(st)) return q->found;
    if (q->o.partial && q->best >= 0 && (st & (ON_UNREACHABLE | ON_BUDGET | ON_OUT_OF_NODES))) {
        *partial = 1;
        return q->best;
    }
    return -1;
}

/* Build the result (not built yet: q->path.n 0) within the slice's limits set in q: ON_SUCCESS when
 * built, ON_IN_PROGRESS when the slice ended first, ON_FAILURE with ON_STALE or ON_NO_MEMORY. */
static on_status build_result(on_query *q, int32_t end, int partial)
{
    if (!q->direct && q->g.ops->borrows_tiles && on_tileset_changed(&q->touched, q->t)) {
        /* the corridor's nodes may be gone (a tile changed, re-prepared or unloaded since the
         * search): the result is stale, as a running search would be */
        q->state = ON_FAILURE | ON_STALE;
        return q->state;
    }
    int r = q->direct ? straight_path(q) : tightened_path(q, end, partial);
    return r < 0 ? (ON_FAILURE | ON_NO_MEMORY) : r > 0 ? ON_IN_PROGRESS : ON_SUCCESS;
}

/* The current salts of the tiles the search read, folded (a slice's answers hold while it stays). */
static uint64_t touched_sig(const on_query *q)
{
    uint64_t h = 0;
    for (size_t i = 0; i < q->touched.n; i++)
        h = (h ^ ((uint64_t)q->touched.tile[i] << 32 | q->t->tiles[q->touched.tile[i]].salt)) * 0x100000001B3ull;
    return h;
}

on_status on_query_finalize_step(on_query *q, size_t max_checks, int (*stop)(void *ud), void *ud, size_t *checks)
{
    if (checks) *checks = 0;
    if (q->state & ON_IN_PROGRESS) return ON_FAILURE | ON_INVALID; /* (the search runs: nothing to finalize) */
    int partial;
    int32_t end = result_end(q, &partial);
    if (end < 0 || q->path.n > 0) return ON_SUCCESS; /* nothing to build, or built */
    uint64_t sig = touched_sig(q);
    if (q->nflog == 0 || q->fin_sig != sig) {
        q->nflog = 0;
        q->fin_sig = sig;
    }
    size_t before = q->nflog;
    q->fin_left = max_checks ? max_checks : SIZE_MAX;
    q->fin_stop = stop;
    q->fin_stop_ud = ud;
    on_status s = build_result(q, end, partial);
    q->fin_stop = NULL;
    if (checks) *checks = q->nflog - before;
    return s;
}

on_status on_query_finalize(on_query *q, double *path, size_t cap, size_t *npath, on_query_info *info)
{
    if (npath) *npath = 0;
    int partial;
    int32_t end = result_end(q, &partial);
    if (end >= 0 && q->path.n == 0) { /* built once, on the first call after the search (or the rest of
                                        * a finalize in slices) */
        if (q->nflog && q->fin_sig != touched_sig(q)) q->nflog = 0;
        q->fin_left = SIZE_MAX;
        q->fin_stop = NULL;
        on_status s = build_result(q, end, partial);
        if (s & ON_STALE) {
            if (info) *info = q->info;
            return s;
        }
        if (s != ON_SUCCESS) return ON_FAILURE | ON_NO_MEMORY;
    }
    on_status st = q->state;
    if (info) *info = q->info;
    if (end < 0) return st;
    size_t n = q->path.n;
    if (npath) *npath = n;
    if (cap < n) return ON_FAILURE | ON_BUFFER_SMALL;
    if (path)
        for (size_t i = 0; i < n; i++) on_to_world(q->t, q->path.p + 3 * i, path + 3 * i);
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
