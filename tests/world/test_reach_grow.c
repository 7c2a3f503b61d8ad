/*
 * test_reach_grow.c -- a local search over a lazy box set that builds more boxes mid-search than its
 * scratch had room for (reach_impl.h's reach_grow_keep): the per-box arrays are pages of their own
 * (on_pages_*), grown keeping what the search wrote. Until session 30 they were grown with realloc,
 * which aborts on such an array ("realloc(): invalid next size"): a join in a tile of many small boxes
 * crashed. The grown search must give what the same search gives with room enough from its start;
 * a scratch made anew for a set past its room (reach_reserve: its stamps zero pages, not cleared box
 * by box) the same as a scratch of its own.
 */
#include "octonav.h"
#include "reach.h"
#include "graph_test.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A 128^3 tile whose leaves at even (x, y, z) are blocked: free space all connected, in ~300k boxes. */
static on_tree *pillars(void)
{
    on_tree *t = gt_tree(1, 1, 1, 7);
    CHECK(t != NULL);
    for (int z = 0; z < 128; z += 2)
        for (int y = 0; y < 128; y += 2)
            for (int x = 0; x < 128; x += 2) gt_box(t, x, y, z, x + 1, y + 1, z + 1);
    return t;
}

static void test_grow_mid_search(void)
{
    on_tree *t = pillars();
    on_boxlazy z;
    CHECK_EQ_INT(on_boxlazy_init_blocks(&z, 7, 4), 0);
    z.tab = &t->tiles[0].table;
    z.solid = t->tiles[0].solid;
    on_reach r;
    memset(&r, 0, sizeof r);
    r.lazy = &z;
    double pts[6] = {125.5, 125.5, 125.5, 63.5, 1.5, 99.5}, p[3] = {1.5, 1.5, 1.5}, cost[2], again[2];
    uint32_t grp[2] = {0, 0}, reached = 0;
    /* the first search starts with no box built: room for REACH_LAZY_ROOM, then the blocks it builds */
    on_status st = on_reach_points_group(&r, &z.set, pts, 2, p, grp, NULL, 1.0, 0, 0, 0, cost, &reached);
    CHECK_EQ_INT(st, ON_SUCCESS);
    CHECK_EQ_INT(reached, 2);
    size_t cap_grown = r.cap;
    uint32_t nbox = z.set.nbox;
    CHECK(nbox > 2 * 16384); /* (it outgrew its first room at least once) */
    CHECK(cap_grown >= (size_t)nbox + 1);
    /* each cost at least the straight line, and at most the free lattice's shortest path (face moves
     * through odd coordinates: the boxes' pulled corridors are never longer) */
    CHECK(cost[0] >= sqrt(3.0) * 124.0 - 1e-9 && cost[0] <= 3 * 124.0);
    CHECK(cost[1] >= gt_dist(p, pts + 3) - 1e-9 && cost[1] <= 62.0 + 0.0 + 98.0);
    /* the same search again over the set now built: room enough from the start, the same answers */
    uint32_t reached2 = 0;
    st = on_reach_points_group(&r, &z.set, pts, 2, p, grp, NULL, 1.0, 0, 0, 0, again, &reached2);
    CHECK_EQ_INT(st, ON_SUCCESS);
    CHECK_EQ_INT(reached2, 2);
    CHECK_EQ_INT(z.set.nbox, nbox);
    CHECK(memcmp(cost, again, sizeof cost) == 0);
    printf("reach grown mid-search: %u boxes built (%u blocks), room %zu; costs %.6f and %.6f, the same "
           "with room from the start\n", (unsigned)nbox, (unsigned)z.built, cap_grown, cost[0], cost[1]);
    on_reach_free(&r);
    on_boxlazy_free(&z);
    on_tree_destroy(t);
}

/* A scratch shared by two sets (as the planners of a world share one): made for a small search over
 * one set, then used over another set already built past its room (reach.c's reach_reserve grows it
 * keeping its stamps); the answers are those of a scratch of its own. */
static void test_grow_shared(void)
{
    on_tree *t = pillars();
    on_boxlazy z1, z2;
    CHECK_EQ_INT(on_boxlazy_init_blocks(&z1, 7, 4), 0);
    CHECK_EQ_INT(on_boxlazy_init_blocks(&z2, 7, 4), 0);
    z1.tab = z2.tab = &t->tiles[0].table;
    z1.solid = z2.solid = t->tiles[0].solid;
    on_reach r, own;
    memset(&r, 0, sizeof r);
    memset(&own, 0, sizeof own);
    double near[3] = {5.5, 1.5, 1.5}, pts[6] = {125.5, 125.5, 125.5, 63.5, 1.5, 99.5}, p[3] = {1.5, 1.5, 1.5};
    double c1[1], cost[2], shared[2];
    uint32_t grp[2] = {0, 0}, reached = 0;
    r.lazy = &z1;
    CHECK_EQ_INT(on_reach_points_group(&r, &z1.set, near, 1, p, grp, NULL, 1.0, 0, 0, 0, c1, &reached), ON_SUCCESS);
    CHECK_EQ_INT(reached, 1);
    CHECK(fabs(c1[0] - 4.0) < 1e-9); /* (1.5 -> 5.5 along a free row of odd y and z) */
    size_t small = r.cap;
    own.lazy = &z2;
    CHECK_EQ_INT(on_reach_points_group(&own, &z2.set, pts, 2, p, grp, NULL, 1.0, 0, 0, 0, cost, &reached), ON_SUCCESS);
    CHECK_EQ_INT(reached, 2);
    CHECK(z2.set.nbox + 1 > small); /* (z2 is past the shared scratch's room) */
    r.lazy = &z2;
    CHECK_EQ_INT(on_reach_points_group(&r, &z2.set, pts, 2, p, grp, NULL, 1.0, 0, 0, 0, shared, &reached), ON_SUCCESS);
    CHECK_EQ_INT(reached, 2);
    CHECK(r.cap >= (size_t)z2.set.nbox + 1);
    CHECK(memcmp(cost, shared, sizeof cost) == 0);
    /* and back over the small set: the stamps kept are no answer of this search */
    r.lazy = &z1;
    double c2[1];
    CHECK_EQ_INT(on_reach_points_group(&r, &z1.set, near, 1, p, grp, NULL, 1.0, 0, 0, 0, c2, &reached), ON_SUCCESS);
    CHECK(memcmp(c1, c2, sizeof c1) == 0);
    printf("reach scratch shared: room %zu grown to %zu over a set of %u boxes; the same costs as its own\n", small,
           r.cap, (unsigned)z2.set.nbox);
    on_reach_free(&r);
    on_reach_free(&own);
    on_boxlazy_free(&z1);
    on_boxlazy_free(&z2);
    on_tree_destroy(t);
}

TEST_MAIN("reach_grow", {
    test_grow_mid_search();
    test_grow_shared();
})
