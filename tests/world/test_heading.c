/*
 * test_heading.c -- the directed local search of a route join (reach.c, on_reach_points_group with a
 * `to`) keys a box it reaches by a lower bound of its heading (the straight line to `to`; the
 * distance to the nearest face holding targets once it heads for the nearest target) and computes
 * the heading only when that entry is popped. Seeded scenes of 128^3 tiles (terrain, pillars, slabs,
 * closed rooms) and their boxes, targets on the tile faces and starts inside: against the search
 * keying every box by its heading when pushed (on_reach.eager_heading), the same costs bit for bit,
 * the same targets reached and the same boxes settled, searches that turned to the nearest target
 * among them, and fewer headings computed in all.
 */
#include "octonav.h"
#include "boxes.h"
#include "minitest.h"
#include "reach.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TESTRNG_SEED 0x6A09E667F3BCC909ull
#include "testrng.h"

#define N 128 /* leaves a tile side (depth 7: 8 blocks) */

static void block(on_tree *t, double x0, double y0, double z0, double x1, double y1, double z1)
{
    double a[3] = {x0, y0, z0}, b[3] = {x1, y1, z1};
    CHECK(on_ok(on_tree_add_box(t, a, b)));
}

/* A seeded scene: rolling ground of columns, pillars, slabs in the air and closed rooms with one
 * small door (starts inside them find no target for a while and turn to the nearest one). */
static on_boxset *scene(void)
{
    on_tree_params p = {{1, 1, 1}, 7, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    for (int x = 0; x < N; x += 8)
        for (int z = 0; z < N; z += 8) block(t, x, 0, z, x + 8, 2 + rndi(14), z + 8);
    for (int i = 0; i < 40; i++) {
        double x = rnd() * (N - 6), z = rnd() * (N - 6);
        block(t, x, 0, z, x + 1 + rnd() * 5, 10 + rnd() * 80, z + 1 + rnd() * 5);
    }
    for (int i = 0; i < 12; i++) {
        double x = rnd() * (N - 30), y = 20 + rnd() * 90, z = rnd() * (N - 30);
        block(t, x, y, z, x + 10 + rnd() * 20, y + 1 + rnd() * 3, z + 10 + rnd() * 20);
    }
    for (int i = 0; i < 3; i++) { /* a room of 20^3 inside walls of 1, its door on +x */
        double x = 10 + 35 * i, y = 30 + 25 * i, z = 20 + 30 * i;
        block(t, x, y, z, x + 22, y + 1, z + 22);
        block(t, x, y + 21, z, x + 22, y + 22, z + 22);
        block(t, x, y, z, x + 1, y + 22, z + 22);
        block(t, x + 21, y, z, x + 22, y + 22, z + 10);
        block(t, x + 21, y, z + 12, x + 22, y + 22, z + 22);
        block(t, x + 21, y, z + 10, x + 22, y + 9, z + 12);
        block(t, x + 21, y + 11, z + 10, x + 22, y + 22, z + 12);
        block(t, x, y, z, x + 22, y + 22, z + 1);
        block(t, x, y, z + 21, x + 22, y + 22, z + 22);
        for (int j = 0; j < 150; j++) { /* clutter: its free space in many boxes */
            double cx = x + 2 + rnd() * 17, cy = y + 2 + rnd() * 17, cz = z + 2 + rnd() * 17;
            block(t, cx, cy, cz, cx + 1, cy + 1, cz + 1);
        }
    }
    on_boxset *s = NULL;
    CHECK(on_ok(on_boxset_build(&t->tiles[0].table, t->tiles[0].solid, t->p.depth, &s)));
    on_tree_destroy(t);
    return s;
}

/* A free point of s: on face f (0..5) when f >= 0, else inside (the room's insides half the time). */
static int free_point(const on_boxset *s, int f, double q[3])
{
    uint32_t in[8];
    for (int tries = 0; tries < 1000; tries++) {
        for (int k = 0; k < 3; k++) q[k] = 0.5 + rnd() * (N - 1);
        if (f >= 0) q[f >> 1] = (f & 1) ? N : 0;
        else if (rnd() < 0.5) { /* inside one of the rooms */
            int i = rndi(3);
            q[0] = 10 + 35 * i + 1.5 + rnd() * 19;
            q[1] = 30 + 25 * i + 1.5 + rnd() * 19;
            q[2] = 20 + 30 * i + 1.5 + rnd() * 19;
        }
        if (on_boxset_locate_all(s, q, in) > 0) return 1;
    }
    return 0;
}

static void compare(void)
{
    on_boxset *s = scene();
    enum { NPT = 48, SEARCHES = 120 };
    double pts[3 * NPT];
    uint32_t group[NPT];
    for (int i = 0; i < NPT; i++) {
        static const int faces[5] = {0, 1, 3, 4, 5}; /* (the ground covers -y) */
        CHECK(free_point(s, faces[i % 5], pts + 3 * i));
        group[i] = 0;
    }
    on_reach lazy, eager;
    memset(&lazy, 0, sizeof lazy);
    memset(&eager, 0, sizeof eager);
    eager.eager_heading = 1;
    double cl[NPT], ce[NPT];
    size_t hl = 0, he = 0, pops = 0;
    int same_cost = 1, same_reached = 1, same_pops = 1, turned = 0, searches = 0;
    for (int n = 0; n < SEARCHES; n++) {
        double p[3], to[3];
        if (!free_point(s, -1, p)) continue;
        double a = rnd() * 6.283185307179586, up = (rnd() - 0.5) * 0.6, far = 200 + rnd() * 600;
        to[0] = p[0] + far * cos(a);
        to[1] = p[1] + far * up;
        to[2] = p[2] + far * sin(a);
        uint32_t rl = 0, re = 0;
        CHECK(on_ok(on_reach_points_group(&lazy, s, pts, NPT, p, group, to, 1.5, 0, 16, 20, cl, &rl)));
        CHECK(on_ok(on_reach_points_group(&eager, s, pts, NPT, p, group, to, 1.5, 0, 16, 20, ce, &re)));
        searches++;
        same_cost &= memcmp(cl, ce, sizeof cl) == 0;
        same_reached &= rl == re;
        same_pops &= lazy.pops == eager.pops;
        turned += lazy.hlazy == 2; /* it found no target in its first boxes and heads for the nearest */
        hl += lazy.headings;
        he += eager.headings;
        pops += lazy.pops;
    }
    CHECK_EQ_INT(searches, SEARCHES);
    CHECK(same_cost);
    CHECK(same_reached);
    CHECK(same_pops);
    CHECK(turned > 0);
    CHECK(pops > 128 * (size_t)turned); /* (a search turns after 128 boxes without a target) */
    CHECK(hl < he);
    printf("heading: %d searches (%d turned to the nearest target), %zu boxes settled, headings %zu keyed "
           "lazily against %zu eagerly\n", searches, turned, pops, hl, he);
    on_reach_free(&lazy);
    on_reach_free(&eager);
    on_boxset_free(s);
}

TEST_MAIN("heading", { compare(); })
