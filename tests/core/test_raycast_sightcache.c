/*
 * test_raycast_sightcache.c -- line of sight through a sight cache (on_tree_visible_nav_cached,
 * raycast.c: the start voxel's descent in the tile's masks kept between segments) against the dense
 * voxel walk (on_walk_dense: the exact rule) and the walk without the cache: random box scenes over
 * 2 x 1 x 2 tiles (depths 3-8, so masks of 2 to 4 levels), runs of segments that start at the last
 * start's voxel, a few voxels from it (the descent from a shared node), in another tile, on lattice
 * planes, and from blocked voxels; and a hand-made scene with known answers.
 */
#include "octonav.h"
#include "minitest.h"
#include "raycast.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TESTRNG_SEED 0x5EC7CAC4Eull
#include "testrng.h"
#include "testdense.h"

/* A point near p: within r voxels on each axis, kept inside the map, off the lattice planes. */
static void near_point(const dense *d, const double p[3], double r, double out[3])
{
    for (int j = 0; j < 3; j++) {
        double v = p[j] + (2 * rnd() - 1) * r;
        if (v < 0.05) v = 0.05;
        if (v > d->dim[j] - 0.05) v = d->dim[j] - 0.05;
        if (v == floor(v)) v += 0.01;
        out[j] = v;
    }
}

/* count segments: the cached walk against the dense rule and the uncached walk; returns the
 * disagreements, *blocked gets the segments the rule finds blocked, *same those that started at the
 * last start's voxel and *near those that started elsewhere in its tile. */
static long segments_agree(const on_tree *t, on_lcache *lc, const dense *d, int count, long *blocked, long *same,
                           long *near)
{
    on_sight_cache sc;
    on_sight_cache_init(&sc);
    long bad = 0;
    double a[3] = {0.5, 0.5, 0.5}, b[3], last[3] = {-1, -1, -1};
    int n = d->dim[1]; /* (a tile's side: the map is 2 x 1 x 2 tiles) */
    for (int i = 0; i < count; i++) {
        int kind = rndi(8);
        if (kind < 3) { /* the same start (smoothing's gallop from one waypoint) */
        } else if (kind < 6) { /* near the last start */
            double c[3] = {a[0], a[1], a[2]};
            near_point(d, c, kind == 3 ? 1.5 : kind == 4 ? 6 : n / 2.0, a);
        } else { /* anywhere (another tile, lattice planes now and then) */
            for (int j = 0; j < 3; j++) a[j] = dense_coord(d->dim[j], kind == 7 && rndi(4) == 0);
        }
        if (rndi(2)) near_point(d, a, 1 + rndi(2 * n), b);
        else
            for (int j = 0; j < 3; j++) b[j] = dense_coord(d->dim[j], rndi(8) == 0);
        int v0 = (int)floor(a[0]), v1 = (int)floor(a[1]), v2 = (int)floor(a[2]);
        if (v0 == (int)floor(last[0]) && v1 == (int)floor(last[1]) && v2 == (int)floor(last[2])) ++*same;
        else if (v0 / n == (int)floor(last[0]) / n && v2 / n == (int)floor(last[2]) / n) ++*near;
        memcpy(last, a, sizeof last);
        int want = on_walk_dense(dense_free, d, a, b, NULL);
        int got = on_tree_visible_nav_cached(t, lc, &sc, a, b);
        int plain = on_tree_visible_nav(t, lc, a, b);
        if (!want) ++*blocked;
        if (want != got || plain != got) {
            if (bad < 5)
                fprintf(stderr, "segment (%.17g %.17g %.17g) -> (%.17g %.17g %.17g): cached %d, uncached %d, dense %d\n",
                        a[0], a[1], a[2], b[0], b[1], b[2], got, plain, want);
            bad++;
        }
    }
    return bad;
}

static void random_scenes(void)
{
    for (int depth = 3; depth <= 8; depth++) {
        dense d;
        on_tree *t = dense_scene(depth, depth <= 5 ? 6 * depth : 12 * depth, &d);
        on_lcache *lc = calloc(1, sizeof *lc);
        CHECK(lc != NULL);
        on_lcache_reset(lc, t);
        long blocked = 0, same = 0, near = 0;
        int count = depth <= 6 ? 20000 : 8000;
        CHECK_EQ_INT(segments_agree(t, lc, &d, count, &blocked, &same, &near), 0);
        /* (the scenes block many segments and the runs reuse the cache both ways: the comparison means
         * something) */
        CHECK(blocked > count / 20);
        CHECK(blocked < count - count / 20);
        CHECK(same > count / 4);
        CHECK(near > count / 4);
        free(lc);
        free(d.b);
        on_tree_destroy(t);
    }
}

/* A wall x in [8, 9) across a 16^3 tile but for a hole at y, z in [4, 6): from one start voxel, segments
 * through the hole (clear), through the wall (blocked), then a start in the next voxel and one in the
 * wall itself (blocked at once), and the same start again: the cache's answers are the rule's. */
static void hand_made(void)
{
    on_tree_params p = {{2, 1, 1}, 4, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&p, &t)));
    double lo1[3] = {8, 0, 0}, hi1[3] = {9, 4, 16}, lo2[3] = {8, 6, 0}, hi2[3] = {9, 16, 16};
    double lo3[3] = {8, 4, 0}, hi3[3] = {9, 6, 4}, lo4[3] = {8, 4, 6}, hi4[3] = {9, 6, 16};
    CHECK(on_ok(on_tree_add_box(t, lo1, hi1)));
    CHECK(on_ok(on_tree_add_box(t, lo2, hi2)));
    CHECK(on_ok(on_tree_add_box(t, lo3, hi3)));
    CHECK(on_ok(on_tree_add_box(t, lo4, hi4)));
    on_sight_cache sc;
    on_sight_cache_init(&sc);
    double a[3] = {2.5, 5.1, 5.2}, hole[3] = {14.5, 4.9, 4.8}, wall[3] = {14.5, 1.5, 12.5};
    double a2[3] = {3.5, 5.3, 5.1}, in_wall[3] = {8.5, 1.5, 1.5}, far[3] = {20.5, 5.2, 5.3}, back[3] = {2.5, 1.5, 12.5};
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, a, hole), 1);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, a, wall), 0);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, a, hole), 1);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, a2, wall), 0);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, a2, far), 1); /* (into the second tile) */
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, in_wall, hole), 0);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, in_wall, hole), 0);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, a, far), 1);
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, far, a), 1); /* (a start in the second tile) */
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, far, wall), 1); /* (the wall's side beyond it) */
    CHECK_EQ_INT(on_tree_visible_nav_cached(t, NULL, &sc, far, back), 0);
    on_tree_destroy(t);
}

TEST_MAIN("raycast_sightcache", {
    hand_made();
    random_scenes();
})
