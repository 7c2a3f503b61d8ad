/*
 * query.h -- the query object's state and the helpers the search (search.c) and the building of its
 * result (search_path.c) share (internal; the public face is octonav.h's on_query).
 */
#ifndef OCTONAV_QUERY_H
#define OCTONAV_QUERY_H

#include "areas.h"
#include "clearance.h"
#include "graph.h"
#include "landmarks.h"
#include "nodepool.h"
#include "raycast.h"
#include "tighten.h"
#include "tree.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct on_query {
    const on_tree *t;
    on_nodepool pool;     /* nodes, node map, open list */
    on_graph g;           /* what it runs over: the cells or the prepared boxes */
    on_lcache *lcache;    /* node-table lookups of recent expansions */
    on_tileset touched;   /* tiles this search has read, with their salts then */
    uint32_t touch_last;  /* the tile of the last expansion, in touched already (UINT32_MAX: none) */
    on_areaset areas;     /* the current search's area costs (areas.h; none: edges cost their length) */
    on_pathbuf alt;       /* the node chain, beside the refined path (areas: the cheaper is kept) */
    /* the current search */
    on_query_opts o;      /* its options (escalation changes the weights) */
    on_query_opts o0;     /* as given */
    double a[3], b[3];    /* nav space */
    on_cell goal_cell;
    on_status state;
    int32_t found, best;  /* goal node; node nearest the goal (kept only with opts.partial, for its results) */
    double best_h2;       /* best's squared distance to the goal */
    on_query_info info;
    /* results */
    on_pathbuf path;      /* nav-space waypoints */
    on_cell *corr;        /* the nodes the path runs through */
    size_t ncorr, corrcap;
    double *faces;        /* the corridor's faces (refine), 6 doubles each */
    size_t facescap;      /* (in doubles) */
    unsigned char *clear; /* per refined waypoint: strictly inside its face (on_sight's clear) */
    size_t clearcap;
    /* a finalize in slices (on_query_finalize_step, search_path.c): the answers of the line-of-sight
     * and turn checks it made so far, in order (1 byte each); each slice runs the finalize again from
     * the start, answering from them, then asks the tree until its limit; the result is kept only from
     * the run that needed no answer past its limit */
    unsigned char *flog;
    size_t nflog, flogcap;
    size_t fin_left;       /* checks this slice may still make */
    int (*fin_stop)(void *ud); /* read after each check: nonzero ends the slice (may be NULL) */
    void *fin_stop_ud;
    int fin_cut;           /* this slice's run went past its limit: its answers after that are made up */
    int fin_nomem;         /* the log could not grow */
    uint64_t fin_sig;      /* the salts of the tiles the search read (touched) when the log's first answer
                            * was got: one changed since, the answers are dropped and the finalize starts
                            * over on the tree as it is */
    double wa[3], wb[3];  /* the endpoints in world space (for starting again over the cells) */
    on_tileset ptiles;    /* the result's tiles (corridor and final segments), with salts */
    int direct;           /* the result is the straight segment (corr: the cells it crosses) */
    int corr_failed;      /* growing corr ran out of memory */
    int reversed;         /* the current search runs from the goal's end (search.c, reverse_pays) */
    int swapped;          /* a and b (and goal_cell) are swapped while it runs: unreverse puts them back */
    int no_reverse;       /* (tests) never reverse */
    int no_landmarks;     /* (tests, benchmarks) never read the tree's landmarks */
    int may_turn;         /* the current search may still turn round once when it stalls (search.c, stalled) */
    size_t visited0;      /* nodes the search reached before it turned round (info.visited counts both) */
    size_t stall_at;      /* the expansion that last brought the search 2 % nearer its goal (stalled) */
    double stall_wh;      /* the least f - g of a node expanded so far (w h, less size_bias times its size) */
    double stall_lim;     /* f - g at 0.2 of the ends' distance from the goal */
    const on_landmarks *lm; /* the tree's landmarks while the current search uses them (search.c), or NULL */
    uint64_t lm_gen;        /* the tree's landmarks_gen then */
    double lm_rg;           /* the goal point's distance from its cell's centre (nav units) */
    uint16_t lm_goal[ON_LM_MAX]; /* the goal cell's distances to the landmarks (steps) */
};

/* ---- geometry helpers ------------------------------------------------------------------------ */

static inline int same_cell(on_cell x, on_cell y) { return x.tile == y.tile && x.code == y.code; }

/* Face points: the model of every search but Lazy Theta*'s (which needs centres, below). */
static inline int face_points(const on_query *q) { return q->o.points == ON_POINTS_FACE && !q->o.any_angle; }

/* A node's point. Face model: the centre of the face its cell was entered through (set with its g).
 * Centre model: its cell's centre. Segments between the centres of two face neighbours always stay
 * inside the two cells (the crossing point lies within the smaller cell's face), which Lazy Theta*'s
 * fallback parent relies on; the start and goal points join their own cells' centres, inside one cube. */
static inline void node_point(on_query *q, int32_t i, double p[3])
{
    if (face_points(q)) {
        memcpy(p, q->pool.nodes[i].pos, 3 * sizeof *p);
        return;
    }
    double mn[3], mx[3], s;
    on_graph_region(&q->g, q->pool.nodes[i].cell, mn, mx, &s);
    for (int k = 0; k < 3; k++) p[k] = 0.5 * (mn[k] + mx[k]);
}

/* The cost of the edge a -> b: its length, weighted by the areas when there are any. */
static inline double edge_cost(const on_query *q, const double a[3], const double b[3])
{
    return q->areas.n ? on_areaset_cost(&q->areas, a, b) : on_dist3(a, b);
}

/* Line of sight between two nav-space points (Lazy Theta*'s parents, smoothing, relaxation). */
static inline int sight_visible(void *ud, const double a[3], const double b[3])
{
    on_query *q = ud;
    q->info.los++;
    if (q->g.radius) return on_tree_visible_radius(q->t, q->lcache, a, b, q->g.radius); /* (clearance.h) */
    return on_tree_visible_nav(q->t, q->lcache, a, b);
}

/* ---- shared by the loop (search.c) and the start (search_start.c) ------------------------------ */

static inline int touch_tile(on_query *q, uint32_t tile) { return on_tileset_touch(&q->touched, q->t, tile); }

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

/* The start (search_start.c): a new search from a to b (cells_only: an escalation's restart, the
 * direct check skipped), the first node of cell c, the ends swapped for a search from the goal's end
 * and a reversed result turned back. */
on_status on_query_start(on_query *q, const double a[3], const double b[3], const on_query_opts *o, int cells_only);
int32_t on_query_first_node(on_query *q, on_cell c);
void on_query_swap_ends(on_query *q, on_cell c);
void on_query_unreverse(on_query *q);

#endif
