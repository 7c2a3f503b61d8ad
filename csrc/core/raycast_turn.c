/*
 * raycast_turn.c -- the rule at a path's turns (on_tree_turn_ok, raycast.h): the voxels around the
 * turning point read off the tiles' losmaps through a small cache (raycast_turn.h), and the transition
 * check of the walk (raycast_walk.h) between the voxels before and after.
 */
#include "raycast_turn.h"
#include "raycast_walk.h"

void on_turn_cache_init(on_turn_cache *c)
{
    c->tile = UINT32_MAX;
    c->lm = NULL;
    c->key[0] = c->key[1] = c->key[2] = 0;
    c->state = 0;
    c->brick = 0;
    c->dok = 0;
    c->dfree = 0;
    c->dx = c->dy = c->dz = 0;
    c->dstop = 0;
    c->org[0] = c->org[1] = c->org[2] = 0;
}

/* sane() for one point (a turn's three points, each once). */
static inline int sane_point(const double p[3])
{
    return fabs(p[0]) < COORD_LIMIT && fabs(p[1]) < COORD_LIMIT && fabs(p[2]) < COORD_LIMIT;
}

/* The rule at a waypoint where a path turns (a -> x -> b): the voxels around x on the side a comes
 * from must reach, through free voxels around x sharing faces, the voxels on the side b leaves to, as
 * at a crossing inside one segment. On an axis where x lies on a lattice plane the sides are those of
 * the directions in and out (both, for a direction along the plane); elsewhere x's own voxel. */
static inline __attribute__((always_inline)) int turn_ok(const on_tree *t, on_lcache *lc, on_turn_cache *c,
                                                         const double a[3], const double x[3], const double b[3])
{
    int64_t lo[3];
    unsigned valid = 0xff, before = 0xff, after = 0xff;
    /* (sane(a, x) and sane(x, b)) */
    if (__builtin_expect(!sane_point(a) || !sane_point(x) || !sane_point(b), 0)) return 0;
    for (int j = 0; j < 3; j++) {
        int64_t fl = ifloor(x[j]); /* (x is sane(): the floor without a libm call) */
        double f = (double)fl;
        if (f == x[j]) {
            lo[j] = fl - 1;
            double din = x[j] - a[j], dout = b[j] - x[j];
            if (din > 0) before &= mask_with_bit(j, 0);
            else if (din < 0) before &= mask_with_bit(j, 1);
            if (dout > 0) after &= mask_with_bit(j, 1);
            else if (dout < 0) after &= mask_with_bit(j, 0);
        } else {
            lo[j] = fl;
            valid &= low_half[j];
        }
    }
    unsigned m = 0;
    for (unsigned todo = valid; todo; todo &= todo - 1) {
        unsigned e = (unsigned)__builtin_ctz(todo);
        if (turn_leaf_free(t, lc, c, lo[0] + (e & 1u), lo[1] + ((e >> 1) & 1u), lo[2] + ((e >> 2) & 1u)))
            m |= 1u << e;
    }
    return reach_after(m, before & valid, after & valid) != 0;
}

int on_tree_turn_ok(const on_tree *t, on_lcache *lc, const double a[3], const double x[3], const double b[3])
{
    on_turn_cache c;
    on_turn_cache_init(&c);
    return turn_ok(t, lc, &c, a, x, b);
}

int on_tree_turn_ok_cached(const on_tree *t, on_lcache *lc, on_turn_cache *c, const double a[3], const double x[3],
                           const double b[3])
{
    return turn_ok(t, lc, c, a, x, b);
}
