/*
 * raycast.h -- line of sight: a segment walked through the leaf lattice, by one exact rule.
 *
 * The rule (nav space, leaves are unit voxels; outside the map is blocked). While the segment runs in
 * the open interior of a lattice face, edge or voxel, the voxels around it (1, 2 or 4) must include a
 * free one: sliding along a wall is allowed, passing through a blocked interior is not. Where it
 * crosses lattice planes, the free voxels around it just before and just after must be joined through
 * free voxels around the crossing point that share faces: touching a blocked corner is allowed, slipping
 * through a zero-width gap where blocked voxels meet only at an edge or corner is not.
 * Crossings are found by comparing plane-crossing parameters t = (k - a) / d, the same expression
 * in every walker, so the dense walk and the octree walk agree exactly, even on edges and corners.
 */
#ifndef OCTONAV_RAYCAST_H
#define OCTONAV_RAYCAST_H

#include "octonav_core.h"
#include "tree.h"

#include <stdint.h>

typedef int (*on_voxel_free_fn)(const void *ud, int64_t x, int64_t y, int64_t z);

/* Dense walk, one voxel at a time (the reference and the grid baseline's line of sight).
 * a, b in voxel units. Returns 1 when clear; 0 when blocked, with *t_hit (may be NULL) the segment
 * parameter in [0, 1] of the first blocked point. */
int on_walk_dense(on_voxel_free_fn fn, const void *ud, const double a[3], const double b[3], double *t_hit);

/* The octree walk for nav-space points (the search's line of sight), through a query's lookup cache
 * lc (may be NULL). 1 when clear. */
int on_tree_visible_nav(const on_tree *t, on_lcache *lc, const double a[3], const double b[3]);

/* Where the last line of sight through it started: its tile's masks, the start voxel, the layer of its
 * free cell and the nodes of its descent in the masks (chain[stop ..]), kept across the lines of sight of
 * one path's finish while the tree does not change (as on_turn_cache): the next start in the same tile
 * descends from the lowest node the two voxels share, or takes the last answer for the same voxel
 * (smoothing and relaxation start many segments at one waypoint). Start it with on_sight_cache_init. */
typedef struct on_sight_cache {
    const struct on_losmap *lm; /* (NULL: none yet) */
    int64_t x, y, z;            /* the start voxel (global leaves) */
    int l;                      /* its free cell's layer, -1 when blocked */
    uint32_t stop;
    const struct on_losnode *chain[(ON_MAX_DEPTH + 1) / 2 + 2]; /* (losmap.h's ON_LOS_LEVELS) */
} on_sight_cache;

static inline void on_sight_cache_init(on_sight_cache *c)
{
    c->lm = NULL; /* (the rest is read only once a start has set it) */
    c->x = c->y = c->z = 0;
    c->l = -1;
    c->stop = 0;
}
/* on_tree_visible_nav through c (the same answers). */
int on_tree_visible_nav_cached(const on_tree *t, on_lcache *lc, on_sight_cache *c, const double a[3],
                               const double b[3]);

/* The same walk, handing every free cell it passes through (in order) to `sink`: the corridor of a
 * straight path. 1 when clear. */
typedef void (*on_cell_sink)(void *ud, on_cell c);
int on_tree_walk_cells(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], on_cell_sink sink,
                       void *ud);
/* on_tree_walk_cells, and when blocked, where: *t_hit is the parameter along a -> b of the first
 * blocked point, as on_tree_raycast gives it for the same points. */
int on_tree_walk_cells_hit(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], on_cell_sink sink,
                           void *ud, double *t_hit);

/* The rule at a waypoint x where a path turns from a -> x to x -> b (nav space): 1 when the path may
 * turn there (it does not slip through a zero-width gap at x). Each segment is checked on its own. */
int on_tree_turn_ok(const on_tree *t, on_lcache *lc, const double a[3], const double x[3], const double b[3]);

/* What turn checks read last (a tile's masks and one aligned 4 x 4 x 4 block of leaves with its answer;
 * the nodes of the last descent in the masks, where the next one starts), kept across the turn checks of
 * one path while the tree does not change: consecutive turns lie close together. Start it with
 * on_turn_cache_init. */
typedef struct on_turn_cache {
    uint32_t tile;
    const struct on_losmap *lm;
    int64_t key[3];
    int state;      /* the block's answer: 0 none yet, 1 all free, -1 all blocked, 2 the brick's mask */
    uint64_t brick; /* (state 2: 1 = blocked, bit x | y << 2 | z << 4) */
    /* the last descent in lm (dok): its tile-local leaf, the level of the node that answered (dstop) and
     * chain[dstop ..] the nodes holding the leaf; its answer (dfree) holds in that node's child */
    int dok, dfree;
    uint32_t dx, dy, dz, dstop;
    int64_t org[3]; /* (dok: the tile's min corner, in leaves) */
    const struct on_losnode *chain[(ON_MAX_DEPTH + 1) / 2 + 2]; /* (losmap.h's ON_LOS_LEVELS) */
} on_turn_cache;

void on_turn_cache_init(on_turn_cache *c);
/* on_tree_turn_ok through c (the same answers). */
int on_tree_turn_ok_cached(const on_tree *t, on_lcache *lc, on_turn_cache *c, const double a[3], const double x[3],
                           const double b[3]);

#endif
