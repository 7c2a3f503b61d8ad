/*
 * test_planewalk.c -- line of sight along lattice planes and edges (raycast.c) against the dense walk:
 * a segment lying in a lattice plane walks by the exact events only, each reading the voxels around it
 * off the tile's masks through probe_leaf, which starts a descent at the lowest node it shares with the
 * last one (or takes the last answer in the same child). Random box scenes over 2 x 1 x 2 tiles at
 * depths 3-6, segments in a plane x, y or z = k (and some along a lattice edge), ends inside voxels,
 * on planes and at tile borders, answers and the blocked parameter compared with on_walk_dense; with the
 * masks and with the node table. And turn checks through one on_turn_cache kept across a path's turns
 * (on_tree_turn_ok_cached) against fresh ones (on_tree_turn_ok), over runs of turns close together.
 */
#include "octonav.h"
#include "minitest.h"
#include "raycast.h"
#include "tree.h"

#include <stdlib.h>

#define TESTRNG_SEED 0x2545F4914F6CDD1Dull
#include "testrng.h"
#include "testdense.h"

/* count segments in lattice planes (every third along a lattice edge): tree against dense walk;
 * returns the disagreements, *blocked gets the blocked ones. */
static long plane_walks_agree(const on_tree *t, const dense *d, int count, long *blocked)
{
    long bad = 0;
    for (int i = 0; i < count; i++) {
        double a[3], b[3];
        int ax = rndi(3), ax2 = (ax + 1 + rndi(2)) % 3, edge = i % 3 == 0;
        for (int j = 0; j < 3; j++) {
            a[j] = dense_coord(d->dim[j], rndi(2));
            b[j] = dense_coord(d->dim[j], rndi(2));
        }
        a[ax] = b[ax] = (double)rndi(d->dim[ax] + 1); /* the plane */
        if (edge) a[ax2] = b[ax2] = (double)rndi(d->dim[ax2] + 1);
        double th_d = -1, th_t = -1;
        int vd = on_walk_dense(dense_free, d, a, b, &th_d);
        int vt = on_ok(on_tree_raycast(t, a, b, &th_t));
        if (!vd) ++*blocked;
        if (vd != vt || (!vd && th_d != th_t)) {
            if (bad < 5)
                fprintf(stderr, "plane walk (%.17g %.17g %.17g) -> (%.17g %.17g %.17g): tree %d@%.17g, dense %d@%.17g\n",
                        a[0], a[1], a[2], b[0], b[1], b[2], vt, th_t, vd, th_d);
            bad++;
        }
    }
    return bad;
}

/* count turns along random runs (each corner a short step from the last, on lattice planes and edges
 * often, across tile borders): one cache kept across the run against a fresh check each; returns the
 * disagreements, *refused the turns refused. */
static long cached_turns_agree(const on_tree *t, const dense *d, int count, long *refused)
{
    long bad = 0;
    on_turn_cache c;
    on_turn_cache_init(&c);
    double x[3];
    for (int j = 0; j < 3; j++) x[j] = dense_coord(d->dim[j], rndi(2));
    for (int i = 0; i < count; i++) {
        double a[3], b[3];
        for (int j = 0; j < 3; j++) {
            if (rndi(4) == 0) x[j] = dense_coord(d->dim[j], rndi(2)); /* now and then a jump */
            else x[j] += rndi(2) ? (double)(rndi(3) - 1) : 0.25 * (rnd() - 0.5);
            if (x[j] < 0) x[j] = 0;
            if (x[j] > d->dim[j]) x[j] = d->dim[j];
            a[j] = x[j] + (double)(rndi(3) - 1) * (0.5 + 3 * rnd());
            b[j] = x[j] + (double)(rndi(3) - 1) * (0.5 + 3 * rnd());
        }
        int want = on_tree_turn_ok(t, NULL, a, x, b), got = on_tree_turn_ok_cached(t, NULL, &c, a, x, b);
        if (!want) ++*refused;
        if (want != got) {
            if (bad < 5)
                fprintf(stderr, "cached turn (%g %g %g) -> (%g %g %g) -> (%g %g %g): %d, fresh %d\n", a[0], a[1], a[2],
                        x[0], x[1], x[2], b[0], b[1], b[2], got, want);
            bad++;
        }
    }
    return bad;
}

static void random_scenes(void)
{
    for (int depth = 3; depth <= 6; depth++) {
        dense d;
        on_tree *t = dense_scene(depth, 8 * depth, &d);
        long blocked = 0;
        CHECK_EQ_INT(plane_walks_agree(t, &d, 20000, &blocked), 0); /* masks (the default) */
        CHECK(blocked > 2000); /* (many are blocked and many clear: the comparison means something) */
        CHECK(blocked < 18000);
        long refused = 0;
        CHECK_EQ_INT(cached_turns_agree(t, &d, 20000, &refused), 0);
        CHECK(refused > 1000);
        on_tree_set_los_masks(t, 0);
        blocked = 0;
        CHECK_EQ_INT(plane_walks_agree(t, &d, 5000, &blocked), 0); /* the node table */
        CHECK(blocked > 500);
        free(d.b);
        on_tree_destroy(t);
    }
}

TEST_MAIN("planewalk", { random_scenes(); })
