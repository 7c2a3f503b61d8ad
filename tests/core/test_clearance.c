/*
 * test_clearance.c -- room for an agent of radius R (clearance.h) against brute force over the leaves:
 * on random box scenes (2 x 2 x 1 tiles of 16^3, and a voxel map whose bounds cut its tiles), whether a
 * box of leaves is free, each leaf's clearance (the least Chebyshev distance to a blocked leaf or the
 * outside, less one) and line of sight for a sphere (the segment against every blocked leaf's cube
 * grown by R, the outside as a ring of blocked leaves), plus the property the search relies on: every
 * sample of a clear segment lies at least R (Euclidean) from every blocked leaf and from the border.
 * Then searches with on_query_opts.radius: their paths keep R from blocked space (sampled), an end too
 * near a wall fails as ON_BLOCKED, and a bad radius as ON_INVALID.
 */
#define TESTRNG_SEED 0x33C1EA4Aull
#include "octonav.h"
#include "clearance.h"
#include "minitest.h"
#include "testrng.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct scene {
    on_tree *t;
    int g[3];          /* grid size in leaves */
    int span[3];       /* the part random points come from (the map's extent) */
    unsigned char *b;  /* 1 = blocked, from on_tree_leaf_free */
} scene;

static int blocked(const scene *s, int64_t x, int64_t y, int64_t z)
{
    if (x < 0 || y < 0 || z < 0 || x >= s->g[0] || y >= s->g[1] || z >= s->g[2]) return 1;
    return s->b[x + (size_t)s->g[0] * ((size_t)y + (size_t)s->g[1] * (size_t)z)];
}

static void scene_read(scene *s)
{
    const on_tree_params *p = on_tree_get_params(s->t);
    for (int k = 0; k < 3; k++) s->span[k] = s->g[k] = p->tiles[k] << p->depth;
    s->b = malloc((size_t)s->g[0] * s->g[1] * s->g[2]);
    for (int z = 0; z < s->g[2]; z++)
        for (int y = 0; y < s->g[1]; y++)
            for (int x = 0; x < s->g[0]; x++)
                s->b[x + (size_t)s->g[0] * ((size_t)y + (size_t)s->g[1] * z)] = !on_tree_leaf_free(s->t, x, y, z, NULL);
}

static void scene_boxes(scene *s, int nboxes)
{
    on_tree_params p = {{2, 2, 1}, 4, 1.0, {0, 0, 0}, 0};
    CHECK(on_ok(on_tree_create(&p, &s->t)));
    for (int i = 0; i < nboxes; i++) {
        double mn[3], mx[3];
        int g[3] = {32, 32, 16};
        for (int k = 0; k < 3; k++) {
            int a = rndi(g[k]), e = 1 + rndi(rndi(2) ? 2 : 7);
            mn[k] = a;
            mx[k] = a + e > g[k] ? g[k] : a + e;
        }
        CHECK(on_ok(on_tree_add_box(s->t, mn, mx)));
    }
    scene_read(s);
}

static void scene_voxmap(scene *s)
{
    on_voxmap vm = {21, 13, 19, 0, NULL}; /* (bounds cut the 16^3 tiles) */
    vm.xyz = malloc(3 * 300 * sizeof *vm.xyz);
    for (int i = 0; i < 300; i++) {
        vm.xyz[3 * i] = (uint16_t)rndi(vm.w);
        vm.xyz[3 * i + 1] = (uint16_t)rndi(vm.h);
        vm.xyz[3 * i + 2] = (uint16_t)rndi(vm.d);
    }
    vm.count = 25;
    CHECK(on_ok(on_tree_from_voxmap(&vm, 4, &s->t)));
    free(vm.xyz);
    scene_read(s);
    s->span[0] = vm.w;
    s->span[1] = vm.h;
    s->span[2] = vm.d;
}

static void scene_free(scene *s)
{
    on_tree_destroy(s->t);
    free(s->b);
}

static int brute_box_free(const scene *s, const int64_t lo[3], const int64_t hi[3])
{
    for (int64_t z = lo[2]; z < hi[2]; z++)
        for (int64_t y = lo[1]; y < hi[1]; y++)
            for (int64_t x = lo[0]; x < hi[0]; x++)
                if (blocked(s, x, y, z)) return 0;
    return 1;
}

static int64_t brute_clearance(const scene *s, const int64_t x[3], int64_t cap)
{
    if (blocked(s, x[0], x[1], x[2])) return -1;
    int64_t best = cap + 1;
    for (int64_t z = x[2] - cap - 1; z <= x[2] + cap + 1; z++)
        for (int64_t y = x[1] - cap - 1; y <= x[1] + cap + 1; y++)
            for (int64_t w = x[0] - cap - 1; w <= x[0] + cap + 1; w++) {
                if (!blocked(s, w, y, z)) continue;
                int64_t d = llabs(w - x[0]);
                if (llabs(y - x[1]) > d) d = llabs(y - x[1]);
                if (llabs(z - x[2]) > d) d = llabs(z - x[2]);
                if (d < best) best = d;
            }
    return best - 1;
}

/* Does segment a -> b meet the open box lo..hi? (the closed parameter range [0, 1] against each axis) */
static int meets_open(const double a[3], const double b[3], const double lo[3], const double hi[3])
{
    double t0 = 0, t1 = 1;
    for (int k = 0; k < 3; k++) {
        double d = b[k] - a[k];
        if (d == 0) {
            if (!(a[k] > lo[k] && a[k] < hi[k])) return 0;
            continue;
        }
        double u = (lo[k] - a[k]) / d, w = (hi[k] - a[k]) / d;
        t0 = fmax(t0, fmin(u, w));
        t1 = fmin(t1, fmax(u, w));
    }
    return t0 < t1;
}

/* Every blocked leaf (the outside: a ring R + 1 wide) grown by R against the segment. */
static int brute_visible(const scene *s, const double a[3], const double b[3], int64_t R)
{
    for (int64_t z = -R - 1; z <= s->g[2] + R; z++)
        for (int64_t y = -R - 1; y <= s->g[1] + R; y++)
            for (int64_t x = -R - 1; x <= s->g[0] + R; x++) {
                if (!blocked(s, x, y, z)) continue;
                double lo[3] = {(double)(x - R), (double)(y - R), (double)(z - R)};
                double hi[3] = {(double)(x + 1 + R), (double)(y + 1 + R), (double)(z + 1 + R)};
                if (meets_open(a, b, lo, hi)) return 0;
            }
    return 1;
}

/* Euclidean distance from p to the nearest blocked leaf or the outside (brute force). */
static double brute_distance(const scene *s, const double p[3])
{
    double best = INFINITY;
    for (int k = 0; k < 3; k++) best = fmin(best, fmin(p[k], s->g[k] - p[k]));
    for (int z = 0; z < s->g[2]; z++)
        for (int y = 0; y < s->g[1]; y++)
            for (int x = 0; x < s->g[0]; x++) {
                if (!blocked(s, x, y, z)) continue;
                int v[3] = {x, y, z};
                double d2 = 0;
                for (int k = 0; k < 3; k++) {
                    double e = p[k] < v[k] ? v[k] - p[k] : p[k] > v[k] + 1 ? p[k] - v[k] - 1 : 0;
                    d2 += e * e;
                }
                best = fmin(best, sqrt(d2));
            }
    return best;
}

static double least_along(const scene *s, const double *pts, size_t n)
{
    double least = INFINITY;
    for (size_t i = 0; i + 1 < n || (n == 1 && i == 0); i++) {
        const double *a = pts + 3 * i, *b = n == 1 ? a : a + 3;
        for (int j = 0; j <= 16; j++) {
            double p[3];
            for (int k = 0; k < 3; k++) p[k] = a[k] + (b[k] - a[k]) * j / 16.0;
            least = fmin(least, brute_distance(s, p));
        }
    }
    return least;
}

static double coord(int g)
{
    switch (rndi(4)) {
    case 0: return rndi(g + 1);                 /* lattice planes */
    case 1: return rndi(g) + 0.5;               /* leaf centres */
    case 2: return -1 + rnd() * (g + 2);        /* anywhere, outside too */
    default: return rnd() * g;
    }
}

static void check_scene(scene *s, int nseg)
{
    on_lcache *lc = malloc(sizeof *lc);
    on_lcache_reset(lc, s->t);
    int box_bad = 0, clr_bad = 0, vis_bad = 0, dist_bad = 0, clear_seen = 0, blocked_seen = 0;
    for (int i = 0; i < 400; i++) { /* boxes */
        int64_t lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            lo[k] = rndi(s->g[k] + 4) - 2;
            hi[k] = lo[k] + rndi(7);
        }
        if (on_tree_box_free(s->t, rndi(2) ? lc : NULL, lo, hi) != brute_box_free(s, lo, hi)) box_bad++;
    }
    for (int z = 0; z < s->g[2]; z++) /* every leaf's clearance */
        for (int y = 0; y < s->g[1]; y++)
            for (int x = 0; x < s->g[0]; x++) {
                int64_t p[3] = {x, y, z};
                if (on_tree_leaf_clearance(s->t, lc, p, 5) != brute_clearance(s, p, 5)) clr_bad++;
            }
    for (int i = 0; i < nseg; i++) { /* line of sight for a sphere */
        double a[3], b[3];
        for (int k = 0; k < 3; k++) {
            a[k] = coord(s->span[k]);
            b[k] = rndi(4) ? coord(s->span[k]) : a[k]; /* (axis-aligned ones too) */
            if (rndi(3) == 0) b[k] = a[k] + (rnd() - 0.5) * 6;
        }
        int64_t R = 1 + rndi(3);
        int v = on_tree_visible_radius(s->t, lc, a, b, R);
        if (v != brute_visible(s, a, b, R)) vis_bad++;
        if (v) {
            clear_seen++;
            double pts[6] = {a[0], a[1], a[2], b[0], b[1], b[2]};
            if (least_along(s, pts, 2) < (double)R - 1e-9) dist_bad++;
        } else {
            blocked_seen++;
        }
    }
    CHECK_EQ_INT(box_bad, 0);
    CHECK_EQ_INT(clr_bad, 0);
    CHECK_EQ_INT(vis_bad, 0);
    CHECK_EQ_INT(dist_bad, 0);
    CHECK(clear_seen > nseg / 20); /* (both answers met often enough to mean something) */
    CHECK(blocked_seen > nseg / 20);
    free(lc);
}

/* Searches for radius R between random usable leaves: each path keeps R from blocked space. */
static void check_search(scene *s)
{
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(s->t, 1 << 16, &q)));
    double *pbuf = malloc(4096 * 3 * sizeof *pbuf);
    int found = 0, bad = 0, tried = 0;
    for (int i = 0; i < 60; i++) {
        int64_t R = 1 + i % 2;
        double a[3], b[3];
        int64_t la[3], lb[3];
        for (int k = 0; k < 3; k++) {
            la[k] = rndi(s->span[k]);
            lb[k] = rndi(s->span[k]);
            a[k] = la[k] + 0.5;
            b[k] = lb[k] + 0.5;
        }
        int ua = on_tree_cube_clear(s->t, NULL, la, 1, R), ub = on_tree_cube_clear(s->t, NULL, lb, 1, R);
        on_query_opts o;
        on_query_opts_default(&o);
        o.radius = (double)R - 0.25; /* (ceil: R leaves) */
        size_t np = 0;
        on_query_info info;
        on_status st = on_query_find(q, a, b, &o, pbuf, 4096, &np, &info);
        if (!ua || !ub) { /* an end too near blocked space (or blocked) */
            if (!(st & ON_BLOCKED)) bad++;
            continue;
        }
        tried++;
        if (!on_ok(st)) continue;
        found++;
        if (least_along(s, pbuf, np) < (double)R - 1e-9) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(tried > 5);
    CHECK(found > 3);
    on_query_opts o;
    on_query_opts_default(&o);
    double a[3] = {0.5, 0.5, 0.5}, b[3] = {1.5, 1.5, 1.5};
    size_t np;
    o.radius = -1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, pbuf, 4096, &np, NULL), ON_FAILURE | ON_INVALID);
    o.radius = NAN;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, pbuf, 4096, &np, NULL), ON_FAILURE | ON_INVALID);
    o.radius = 1;
    o.graph = ON_GRAPH_BOXES;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, pbuf, 4096, &np, NULL), ON_FAILURE | ON_INVALID);
    free(pbuf);
    on_query_destroy(q);
}

/* A corridor 5 leaves wide between two walls: radius 2 goes through its middle, radius 3 cannot. */
static void check_corridor(void)
{
    on_tree *t = NULL;
    on_tree_params p = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
    CHECK(on_ok(on_tree_create(&p, &t)));
    double h1[2][3] = {{0, 0, 13}, {14, 32, 18}}, h2[2][3] = {{19, 0, 13}, {32, 32, 18}};
    /* a wall z 13..18 with a slot x 14..19 (5 wide) through it, the whole height */
    CHECK(on_ok(on_tree_add_box(t, h1[0], h1[1])));
    CHECK(on_ok(on_tree_add_box(t, h2[0], h2[1])));
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    double a[3] = {16.5, 16.5, 5.5}, b[3] = {16.5, 16.5, 26.5}, buf[3 * 256];
    size_t np = 0;
    on_query_opts o;
    on_query_opts_default(&o);
    o.radius = 2;
    on_query_info info;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, buf, 256, &np, &info), ON_SUCCESS);
    CHECK(fabs(info.length - 21) < 1e-9); /* (straight through the slot: x 16..17 keeps 2 from 14 and 19) */
    for (size_t i = 0; i < np; i++) CHECK(buf[3 * i] >= 16 && buf[3 * i] <= 17);
    o.radius = 3;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, buf, 256, &np, &info), ON_FAILURE | ON_UNREACHABLE);
    on_query_destroy(q);
    on_tree_destroy(t);
}

TEST_MAIN("clearance", {
    for (int i = 0; i < 3; i++) {
        scene s;
        scene_boxes(&s, 25 + 15 * i);
        check_scene(&s, 1500);
        check_search(&s);
        scene_free(&s);
    }
    scene s;
    scene_voxmap(&s);
    check_scene(&s, 1500);
    check_search(&s);
    scene_free(&s);
    check_corridor();
})
