/*
 * test_boxbits_paint.c -- on_boxbits_paint (boxes.c: a tile's free leaves painted into the bitmap a
 * box set and the tile graph's coarse sets are built from, by its own walk down the tile's table) sets
 * exactly the bits of the free cells on_table_visit reports, leaf by leaf: on random box worlds of
 * several depths, a 256^3 heightfield tile, a voxel map's tile whose table is limited to the map's
 * extent (boundary nodes read, not stored), a tile free whole and a tile blocked whole.
 */
#include "boxes.h"
#include "graph_test.h"
#include "minitest.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x2545F4914F6CDD1Dull;

/* The reference: every free cell on_table_visit reports, painted leaf by leaf. */
static int paint_ref(void *ud, on_cell c, int blocked)
{
    if (blocked) return 0;
    on_boxbits *o = ud;
    int x = (int)on_code_x(c.code), y = (int)on_code_y(c.code), z = (int)on_code_z(c.code), s = 1 << on_code_layer(c.code);
    for (int zz = z; zz < z + s; zz++)
        for (int yy = y; yy < y + s; yy++)
            for (int xx = x; xx < x + s; xx++)
                o->w[((size_t)zz * (size_t)o->n + (size_t)yy) * (size_t)o->nw + (size_t)xx / 64] |= (uint64_t)1 << (xx % 64);
    return 0;
}

/* Tile ti of t painted both ways: the words that differ (0 when the same); *set gets the bits set. */
static size_t differ(const on_tree *t, uint32_t ti, long *set)
{
    int depth = t->p.depth;
    on_boxbits a, b;
    CHECK(on_boxbits_alloc(&a, depth) == 0);
    CHECK(on_boxbits_alloc(&b, depth) == 0);
    size_t words = (size_t)a.n * (size_t)a.n * (size_t)a.nw, bad = 0;
    memset(a.w, 0xA5, words * sizeof *a.w); /* (the painter clears it first) */
    on_boxbits_paint(&t->tiles[ti].table, t->tiles[ti].solid, depth, &a);
    memset(b.w, 0, words * sizeof *b.w);
    on_table_visit(&t->tiles[ti].table, t->tiles[ti].solid, depth, ti, paint_ref, &b);
    *set = 0;
    for (size_t i = 0; i < words; i++) {
        bad += a.w[i] != b.w[i];
        *set += __builtin_popcountll(b.w[i]);
    }
    on_boxbits_free(&a);
    on_boxbits_free(&b);
    return bad;
}

static void test_box_worlds(void)
{
    for (int depth = 1; depth <= 7; depth++) {
        on_tree *t = gt_tree(1, 1, 1, depth);
        int n = 1 << depth;
        for (int i = 0; i < 8 + 4 * depth; i++) {
            double x = gt_rnd(&rs) * n, y = gt_rnd(&rs) * n, z = gt_rnd(&rs) * n;
            double dz = gt_rnd(&rs), dy = gt_rnd(&rs), dx = gt_rnd(&rs); /* one by one: the same draws everywhere */
            gt_box(t, x, y, z, x + 0.3 + dx * n / 5, y + 0.3 + dy * n / 5, z + 0.3 + dz * n / 5);
        }
        long set;
        CHECK_EQ_INT((int)differ(t, 0, &set), 0);
        if (depth >= 3) CHECK(set > 0 && set < (long)n * n * n); /* (tiles of 2 and 4 may be blocked whole) */
        on_tree_destroy(t);
    }
}

static void test_heightfield(void)
{
    on_tree *t = gt_tree(1, 1, 1, 8);
    int n = 33;
    double *h = malloc((size_t)n * n * sizeof *h);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) h[i + k * n] = 60 + 35 * sin(i / 9.0) * cos(k / 13.0) + 12 * sin((i + k) / 5.0);
    on_heightfield hf = {{0, 0, 0}, 8.0, n, n, h};
    CHECK(on_ok(on_tree_add_heightfield(t, &hf)));
    free(h);
    gt_box(t, 60, 160, 40, 110, 164, 90); /* a slab in the air */
    long set;
    CHECK_EQ_INT((int)differ(t, 0, &set), 0);
    CHECK(set > 256L * 256 * 100 && set < 256L * 256 * 230);
    on_tree_destroy(t);
}

/* A voxel map of 40 x 50 x 30 in a tile of 64: the table limited to the map (boundary nodes). */
static void test_limited(void)
{
    size_t count = 400;
    uint16_t *xyz = malloc(3 * count * sizeof *xyz);
    for (size_t i = 0; i < count; i++) {
        xyz[3 * i] = (uint16_t)(gt_rnd(&rs) * 40);
        xyz[3 * i + 1] = (uint16_t)(gt_rnd(&rs) * 50);
        xyz[3 * i + 2] = (uint16_t)(gt_rnd(&rs) * 30);
    }
    on_voxmap m = {40, 50, 30, count, xyz};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_from_voxmap(&m, 6, &t)));
    if (t) {
        long set;
        CHECK_EQ_INT((int)differ(t, 0, &set), 0);
        CHECK(set > 40L * 50 * 30 - 400 - 1 && set <= 40L * 50 * 30); /* (only the map's free voxels) */
        on_tree_destroy(t);
    }
    free(xyz);
}

static void test_whole(void)
{
    on_tree *t = gt_tree(2, 1, 1, 5);
    gt_box(t, 32, 0, 0, 64, 32, 32); /* tile 1 blocked whole, tile 0 free whole */
    long set;
    CHECK_EQ_INT((int)differ(t, 0, &set), 0);
    CHECK_EQ_INT((int)set, 32 * 32 * 32);
    CHECK_EQ_INT((int)differ(t, 1, &set), 0);
    CHECK_EQ_INT((int)set, 0);
    on_tree_destroy(t);
}

TEST_MAIN("boxbits_paint", {
    test_box_worlds();
    test_heightfield();
    test_limited();
    test_whole();
})
