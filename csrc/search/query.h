/*
 * query.h -- the query object's state and the helpers the search (search.c) and the building of its
 * result (search_path.c) share (internal; the public face is octonav.h's on_query).
 */
#ifndef OCTONAV_QUERY_H
#define OCTONAV_QUERY_H

#include "areas.h"
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
    return on_tree_visible_nav(q->t, q->lcache, a, b);
}

#endif
