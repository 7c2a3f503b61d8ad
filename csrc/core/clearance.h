/*
 * clearance.h -- room for an agent of radius r in a tree baked for a point (internal): the questions a
 * search for a sphere asks of the one tree every agent size shares (issue 33, "one tree for every agent
 * size"). Nothing is stored: each answer is a descent of the tree's node tables.
 *
 * The rule is the bake's inflation (geometry.c: a box grows by r on every side), in leaves: with
 * R = ceil(r) leaves, a leaf is usable when every leaf within Chebyshev distance R of it is free, which
 * is exactly the leaf being free in the tree baked with its blocked space grown by R (outside the map,
 * solid and unloaded tiles count as blocked, so the map's border grows inwards too; with
 * on_tree_set_border_free(t, 1), a world's tree, outside the map counts as free, as in a tree the bake
 * grew by r). Every point of a usable leaf, its faces included, lies at least R (>= r) from blocked space.
 */
#ifndef OCTONAV_CLEARANCE_H
#define OCTONAV_CLEARANCE_H

#include "tree.h"

#include <stdint.h>

/* Radii are bounded (in leaves) so that every box below stays within int64 arithmetic. */
#define ON_MAX_RADIUS_LEAVES 65536

/* 1 when every leaf of the global leaf box lo..hi-1 (half-open on each axis) is free; 0 when one is
 * blocked, outside the grid, or in a solid or unloaded tile. Through the lookup cache lc (may be NULL;
 * the caller has run on_lcache_check). An empty box (hi <= lo on an axis) is free. */
int on_tree_box_free(const on_tree *t, on_lcache *lc, const int64_t lo[3], const int64_t hi[3]);

/* 1 when every leaf of the cube at global leaf corner m, edge s, is usable at radius R leaves (the cube
 * grown by R on every side is free). */
int on_tree_cube_clear(const on_tree *t, on_lcache *lc, const int64_t m[3], int64_t s, int64_t R);

/* Line of sight for a sphere: 1 when the segment a -> b (nav space) meets the open interior of no
 * blocked cube grown by R on every side (and keeps R inside the grid; inside it with border_free): the
 * segment is clear in the tree
 * of blocked space grown by R. Every point of a clear segment lies at least R from blocked space. */
int on_tree_visible_radius(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], int64_t R);

/* The clearance of the free leaf at global leaf x: the largest R (up to cap) at which it is usable,
 * or -1 when the leaf is blocked (on_tree_box_free on growing boxes: tests, tools). */
int64_t on_tree_leaf_clearance(const on_tree *t, on_lcache *lc, const int64_t x[3], int64_t cap);

#endif
