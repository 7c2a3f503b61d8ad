/*
 * test_tgraph_bytes.c -- the tile graph build and the local searches give the same bits as before a
 * change made only for speed (issue 31, goal 4: packs byte-identical): small worlds' tile graphs are
 * encoded and hashed (FNV-1a 64 over the blob), the costs of local searches (the route planner's
 * joins: on_reach_points, on_reach_points_group with a heading and a budget) hashed over their
 * doubles, and each hash compared with the one main's code gave at 2c9bd45 (stored below). The
 * worlds: 256^3 tiles (coarse box sets of 8 and 4 leaves, fine searches for the portals outside them)
 * of terrain, of dense random boxes and of thin walls; 64^3 tiles (fine searches only) with the
 * default options, a portal bound and a spanner's stretch.
 */
#include "portals.h"
#include "graph_test.h"
#include "minitest.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

#define FNV0 1469598103934665603ull

static double hf_height(int i, int k, double a, double b)
{
    return 60 + 35 * sin(i / a) * cos(k / b) + 12 * sin((i + k) / 5.0) + 6 * cos(i * k / 37.0);
}

/* A 256^3 tile: a heightfield of 8-leaf squares (rugged when `rough`), pillars, a wall with a gap, a
 * slab, an overhang with a pocket under it. */
static on_tree *terrain(uint64_t seed, int rough)
{
    uint64_t rs = seed;
    on_tree *t = gt_tree(1, 1, 1, 8);
    int n = 33;
    double *h = malloc((size_t)n * n * sizeof *h);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            h[i + k * n] = hf_height(i, k, 9.0, 13.0) + (rough ? 40 * gt_rnd(&rs) : 0);
    on_heightfield hf = {{0, 0, 0}, 8.0, n, n, h};
    CHECK(on_ok(on_tree_add_heightfield(t, &hf)));
    free(h);
    for (int i = 0; i < 8; i++) {
        double x = 20 + gt_rnd(&rs) * 210, z = 20 + gt_rnd(&rs) * 210, w = 2 + gt_rnd(&rs) * 6;
        gt_box(t, x, 0, z, x + w, 120 + gt_rnd(&rs) * 120, z + w);
    }
    gt_box(t, 40, 0, 150, 118, 200, 154);
    gt_box(t, 130, 0, 150, 220, 200, 154);
    gt_box(t, 60, 160, 40, 110, 164, 90);
    gt_box(t, 0, 0, 200, 30, 130, 203);
    gt_box(t, 0, 127, 200, 30, 130, 256);
    return t;
}

/* A tile of 2^depth leaves with nb random boxes up to `size` leaves a side. */
static on_tree *boxes(int depth, uint64_t seed, int nb, double size)
{
    uint64_t rs = seed;
    on_tree *t = gt_tree(1, 1, 1, depth);
    double n = ldexp(1.0, depth);
    for (int i = 0; i < nb; i++) {
        double x = gt_rnd(&rs) * n, y = gt_rnd(&rs) * n, z = gt_rnd(&rs) * n;
        /* drawn one by one: a call's arguments have no order in C (gcc evaluated these right to left,
         * clang left to right, so the two built other scenes); this is gcc's order, its hashes kept */
        double dz = gt_rnd(&rs), dy = gt_rnd(&rs), dx = gt_rnd(&rs);
        gt_box(t, x, y, z, x + 1 + dx * size, y + 1 + dy * size, z + 1 + dz * size);
    }
    return t;
}

/* Thin walls across a 256^3 tile with small holes: long corridors (long chains to pull taut). */
static on_tree *walls(void)
{
    on_tree *t = gt_tree(1, 1, 1, 8);
    for (int i = 0; i < 7; i++) {
        double x = 24 + 30 * i, hz = (i & 1) ? 20 : 220, hy = 30 + 25 * i;
        gt_box(t, x, 0, 0, x + 2, 256, hz - 3);
        gt_box(t, x, 0, hz + 3, x + 2, 256, 256);
        gt_box(t, x, 0, hz - 3, x + 2, hy - 3, hz + 3);
        gt_box(t, x, hy + 3, hz - 3, x + 2, 256, hz + 3);
    }
    return t;
}

/* The portals of g outside the coarse set of 2^shift leaves (the build searches from those over a
 * finer set). */
static int outside(const on_tree *t, const on_tgraph *g, int shift)
{
    on_boxset *s = NULL, *cs = NULL;
    CHECK(on_ok(on_boxset_build(&t->tiles[0].table, t->tiles[0].solid, t->p.depth, &s)));
    CHECK(on_ok(on_tgraph_coarse_set(s, t->p.depth, shift, 64 >> shift, &cs)));
    int n = 0;
    for (uint32_t p = 0; p < g->nportal; p++) {
        double x[3];
        uint32_t in[8];
        on_portal_point(g, p, x);
        for (int k = 0; k < 3; k++) x[k] /= 1 << shift;
        n += on_boxset_locate_all(cs, x, in) == 0;
    }
    on_boxset_free(cs);
    on_boxset_free(s);
    return n;
}

/* The hash of tile 0's graph, built with options o (NULL: the defaults). */
static uint64_t graph_hash(const on_tree *t, const on_tgraph_opts *o, uint32_t *portals)
{
    on_tgraph *g = NULL;
    CHECK(on_ok(on_tgraph_build_tile(t, 0, o, &g)));
    if (!g) return 0;
    if (t->p.depth >= 8)
        printf("tgraph_bytes: %u portals, %d outside the coarse set of 8 leaves, %d outside that of 4\n", g->nportal,
               outside(t, g, 3), outside(t, g, 2));
    size_t len = 0;
    on_tgraph_encode(g, NULL, 0, &len);
    uint8_t *b = malloc(len);
    CHECK(on_ok(on_tgraph_encode(g, b, len, &len)));
    uint64_t h = fnv(FNV0, b, len);
    *portals = g->nportal;
    free(b);
    on_tgraph_free(g);
    return h;
}

/* The hash of the costs of local searches in tile 0 from `ns` points to the tile's portals: plain
 * (on_reach_points) and, with a heading to the next point and a budget, as the planner's joins. */
static uint64_t reach_hash(const on_tree *t, int ns, uint64_t seed)
{
    uint64_t rs = seed, h = FNV0;
    on_tgraph *g = NULL;
    on_boxset *s = NULL;
    CHECK(on_ok(on_tgraph_build_tile(t, 0, NULL, &g)));
    CHECK(on_ok(on_boxset_build(&t->tiles[0].table, t->tiles[0].solid, t->p.depth, &s)));
    uint32_t np = g->nportal, *group = malloc(np * sizeof *group);
    double *pts = malloc(3 * (size_t)np * sizeof *pts), *cost = malloc(np * sizeof *cost);
    for (uint32_t p = 0; p < np; p++) {
        on_portal_point(g, p, pts + 3 * (size_t)p);
        group[p] = g->portal[p].comp;
    }
    on_reach r;
    memset(&r, 0, sizeof r);
    double n = ldexp(1.0, t->p.depth);
    int done = 0;
    for (int tries = 0; done < ns && tries < 50 * ns; tries++) {
        double p[3], to[3]; /* drawn in order (an initializer list's expressions have none in C) */
        for (int k = 0; k < 3; k++) p[k] = gt_rnd(&rs) * n;
        for (int k = 0; k < 3; k++) to[k] = gt_rnd(&rs) * n;
        uint32_t reached = 0;
        if (on_boxset_locate(s, p) < 0) continue;
        CHECK(on_ok(on_reach_points(&r, s, pts, np, p, cost, &reached)));
        h = fnv(h, cost, np * sizeof *cost);
        h = fnv(h, &reached, sizeof reached);
        CHECK(on_ok(on_reach_points_group(&r, s, pts, np, p, group, to, 1.5, 0.1, 2, 400, cost, &reached)));
        h = fnv(h, cost, np * sizeof *cost);
        h = fnv(h, &reached, sizeof reached);
        done++;
    }
    CHECK_EQ_INT(done, ns);
    free(group);
    free(pts);
    free(cost);
    on_reach_free(&r);
    on_boxset_free(s);
    on_tgraph_free(g);
    return h;
}

typedef struct expect {
    const char *name;
    uint64_t hash;
} expect;

/* Hashes from main at 2c9bd45 (the code before the session's speed changes). */
static const expect want[] = {
    {"terrain", 0x821e64bed3925aaaull},
    {"terrain rough", 0xfd798bbb4a30cae3ull},
    {"boxes 256", 0x1c80a155eeee8af6ull},
    {"walls", 0xe3a681ed992be48cull},
    {"boxes 64", 0x9eaaa74430b2928eull},
    {"boxes 64 bound 16", 0x38afba1ab651ddf2ull},
    {"boxes 64 stretch 1.5", 0xd22eebb3fba0bd60ull},
    {"reach terrain", 0xfa3e2709a4609f67ull},
    {"reach boxes 64", 0x7917ec7d10b176e8ull},
};

static void check(int i, uint64_t got, const uint32_t *portals)
{
    printf("tgraph_bytes: %-22s %3u portals  hash 0x%016" PRIx64 "%s\n", want[i].name, *portals, got,
           got == want[i].hash ? "" : "  DIFFERS from main's");
    CHECK(got == want[i].hash);
}

static void test_bytes(void)
{
    uint32_t np = 0, zero = 0;
    on_tree *t = terrain(0x5DEECE66Dull, 0);
    check(0, graph_hash(t, NULL, &np), &np);
    check(7, reach_hash(t, 12, 77), &zero);
    on_tree_destroy(t);
    t = terrain(0x2545F4914F6CDD1Dull, 1);
    check(1, graph_hash(t, NULL, &np), &np);
    on_tree_destroy(t);
    t = boxes(8, 0x9E3779B97F4A7C15ull, 900, 14);
    check(2, graph_hash(t, NULL, &np), &np);
    on_tree_destroy(t);
    t = walls();
    check(3, graph_hash(t, NULL, &np), &np);
    on_tree_destroy(t);
    t = boxes(6, 0xD1B54A32D192ED03ull, 60, 9);
    check(4, graph_hash(t, NULL, &np), &np);
    on_tgraph_opts o = {.bound = 16, .stretch = 1};
    check(5, graph_hash(t, &o, &np), &np);
    o = (on_tgraph_opts){.bound = 0, .stretch = 1.5};
    check(6, graph_hash(t, &o, &np), &np);
    check(8, reach_hash(t, 20, 99), &zero);
    on_tree_destroy(t);
}

TEST_MAIN("tgraph_bytes", { test_bytes(); })
