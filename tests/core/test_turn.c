/*
 * test_turn.c -- the rule at a path's turns (on_tree_turn_ok, raycast.c) against a reference over a
 * dense voxel array: random box scenes over several tiles (depths 3-6), turns at voxel interiors, face,
 * edge and corner points (tile borders and the map's boundary among them), coming in and leaving on
 * every combination of sides; with the tiles' masks (the voxels read off the losmap) and without them
 * (the node table); and hand-made turns through a zero-width gap, beside it and across a tile border.
 */
#include "octonav.h"
#include "minitest.h"
#include "raycast.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TESTRNG_SEED 0x9E3779B97F4A7C15ull
#include "testrng.h"
#include "testdense.h"

/* The rule, written out voxel by voxel: the voxels around x are those whose closed cube holds x (on an
 * axis where x is on a lattice plane, the two beside it; elsewhere its own). Of them, the side a comes
 * from (on such an axis: the voxel below x when a is below, above when above, both when a is on the
 * plane) and the side b leaves to; the turn keeps to the rule when a free voxel of the first side
 * reaches a free voxel of the second through free voxels around x that share a face. */
static int ref_turn(const dense *d, const double a[3], const double x[3], const double b[3])
{
    int lo[3], two[3], inok[3][2], outok[3][2];
    for (int j = 0; j < 3; j++) {
        two[j] = floor(x[j]) == x[j];
        lo[j] = (int)floor(x[j]) - two[j];
        inok[j][0] = inok[j][1] = outok[j][0] = outok[j][1] = 1;
        if (two[j]) {
            if (a[j] < x[j]) inok[j][1] = 0;
            if (a[j] > x[j]) inok[j][0] = 0;
            if (b[j] > x[j]) outok[j][0] = 0;
            if (b[j] < x[j]) outok[j][1] = 0;
        }
    }
    int fr[2][2][2], seen[2][2][2];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < 2; l++) {
                int in = (two[0] || !i) && (two[1] || !k) && (two[2] || !l);
                fr[i][k][l] = in && dense_free(d, lo[0] + i, lo[1] + k, lo[2] + l);
                seen[i][k][l] = fr[i][k][l] && inok[0][i] && inok[1][k] && inok[2][l];
            }
    for (int round = 0; round < 8; round++) /* (8 voxels: a path between two has at most 7 steps) */
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 2; k++)
                for (int l = 0; l < 2; l++)
                    if (fr[i][k][l] && (seen[!i][k][l] || seen[i][!k][l] || seen[i][k][!l])) seen[i][k][l] = 1;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < 2; l++)
                if (seen[i][k][l] && outok[0][i] && outok[1][k] && outok[2][l]) return 1;
    return 0;
}

/* count random turns: on_tree_turn_ok against ref_turn; returns the disagreements, *blocked gets the
 * turns the rule refuses. */
static long turns_agree(const on_tree *t, on_lcache *lc, const dense *d, int count, long *blocked)
{
    long bad = 0;
    for (int i = 0; i < count; i++) {
        double x[3], a[3], b[3];
        int planes = rndi(8); /* which axes of x lie on a lattice plane */
        for (int j = 0; j < 3; j++) {
            x[j] = dense_coord(d->dim[j], (planes >> j) & 1);
            /* a and b below, on or above x's coordinate, on each axis */
            a[j] = x[j] + (double)(rndi(3) - 1) * (0.5 + 3 * rnd());
            b[j] = x[j] + (double)(rndi(3) - 1) * (0.5 + 3 * rnd());
        }
        int want = ref_turn(d, a, x, b), got = on_tree_turn_ok(t, lc, a, x, b);
        if (!want) ++*blocked;
        if (want != got) {
            if (bad < 5)
                fprintf(stderr, "turn (%g %g %g) -> (%g %g %g) -> (%g %g %g): tree %d, dense %d\n", a[0], a[1], a[2],
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
        on_tree *t = dense_scene(depth, 6 * depth, &d);
        on_lcache *lc = calloc(1, sizeof *lc);
        CHECK(lc != NULL);
        on_lcache_reset(lc, t);
        long blocked = 0;
        CHECK_EQ_INT(turns_agree(t, lc, &d, 20000, &blocked), 0); /* masks (the default) */
        CHECK(blocked > 1000); /* (the scenes refuse many turns: the comparison means something) */
        CHECK(blocked < 19000);
        on_tree_set_los_masks(t, 0);
        blocked = 0;
        CHECK_EQ_INT(turns_agree(t, lc, &d, 20000, &blocked), 0); /* the node table */
        CHECK(blocked > 1000);
        free(lc);
        free(d.b);
        on_tree_destroy(t);
    }
}

/* Two blocked voxels meeting only at an edge leave a zero-width gap: a turn on that edge from one
 * free side to the other slips through it (refused); a turn that comes back to the side it came from
 * is allowed; and a corner of a tile border turns as inside a tile. */
static void hand_made(void)
{
    for (int masks = 1; masks >= 0; masks--) {
        on_tree_params p = {{2, 1, 1}, 3, 1.0, {0, 0, 0}, 0};
        on_tree *t;
        CHECK(on_ok(on_tree_create(&p, &t)));
        on_tree_set_los_masks(t, masks);
        double b1lo[3] = {3, 0, 0}, b1hi[3] = {4, 1, 8}, b2lo[3] = {4, 1, 0}, b2hi[3] = {5, 2, 8};
        CHECK(on_ok(on_tree_add_box(t, b1lo, b1hi))); /* voxels (3, 0) and (4, 1) in x, y: they meet at */
        CHECK(on_ok(on_tree_add_box(t, b2lo, b2hi))); /* the edge x = 4, y = 1 */
        double x[3] = {4, 1, 4.5};
        double from_lo[3] = {3.5, 1.5, 4.5}, to_hi[3] = {4.5, 0.5, 4.5}, back[3] = {3.2, 1.8, 4.5};
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, from_lo, x, to_hi), 0); /* through the gap */
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, from_lo, x, back), 1);  /* back to where it came from */
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, to_hi, x, to_hi), 1);   /* the other free side, and back */
        /* the same gap at the tile border x = 8: voxels (7, 2) and (8, 3) */
        double c1lo[3] = {7, 2, 0}, c1hi[3] = {8, 3, 8}, c2lo[3] = {8, 3, 0}, c2hi[3] = {9, 4, 8};
        CHECK(on_ok(on_tree_add_box(t, c1lo, c1hi)));
        CHECK(on_ok(on_tree_add_box(t, c2lo, c2hi)));
        double y[3] = {8, 3, 2.5}, ya[3] = {7.5, 3.5, 2.5}, yb[3] = {8.5, 2.5, 2.5}, yc[3] = {7.5, 3.9, 3};
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, ya, y, yb), 0);
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, ya, y, yc), 1);
        /* a face point of the map's boundary: the voxel outside is blocked, the one inside free */
        double f[3] = {2.5, 0, 5.5}, fa[3] = {2, 1, 5}, fout[3] = {2.5, -1, 5.5};
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, fa, f, fa), 1);
        CHECK_EQ_INT(on_tree_turn_ok(t, NULL, fa, f, fout), 0);
        on_tree_destroy(t);
    }
}

TEST_MAIN("turn", {
    hand_made();
    random_scenes();
})
