/*
 * test_tgraph_coarse.c -- a large tile's graph weights searched over coarse box sets (portals.c,
 * tgraph_coarse.c): the coarse set holds exactly the coarse leaves whose fine leaves are all free
 * (checked leaf by leaf on random tiles), and on a 256^3 terrain tile (a heightfield with pillars, a
 * wall with a gap, a slab and a pocket under an overhang) the build settles far fewer boxes than one
 * search over the fine boxes per portal would (the build before: every portal but the last searched
 * the whole tile), while every weight stays at or above the straight line, within 1.25 x (mean 1.01)
 * of a fresh fine search's free path, closed under the triangle inequality, and the same bytes on a
 * second build; the coarse sets read off the painted fine bitmap (on_tgraph_coarse_bits, as
 * on_tgraph_build_table builds them) are those counted from the boxes, and give the same graph.
 */
#include "portals.h"
#include "graph_test.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x5DEECE66Dull;

static on_boxset *boxes_of(const on_tree *t)
{
    on_boxset *s = NULL;
    on_boxset_build(&t->tiles[0].table, t->tiles[0].solid, t->p.depth, &s);
    return s;
}

/* Is fine leaf (x, y, z) free? (the fine boxes: the leaf's centre in one of them) */
static int leaf_free(const on_boxset *s, int x, int y, int z)
{
    double p[3] = {x + 0.5, y + 0.5, z + 0.5};
    return on_boxset_locate(s, p) >= 0;
}

/* Random tiles of 64^3: every coarse leaf of every shift is in a coarse box exactly when its fine
 * leaves are all free, and no coarse box overlaps another. */
static void test_coarse_set(void)
{
    int bad_in = 0, bad_out = 0, bad_overlap = 0, cells = 0;
    for (int round = 0; round < 3; round++) {
        on_tree *t = gt_tree(1, 1, 1, 6);
        for (int i = 0; i < 40; i++) {
            double x = gt_rnd(&rs) * 60, y = gt_rnd(&rs) * 60, z = gt_rnd(&rs) * 60;
            double dz = gt_rnd(&rs), dy = gt_rnd(&rs), dx = gt_rnd(&rs); /* one by one: gcc's order */
            gt_box(t, x, y, z, x + 1 + dx * 12, y + 1 + dy * 12, z + 1 + dz * 12);
        }
        on_boxset *s = boxes_of(t);
        for (int shift = 1; shift <= 3; shift++) {
            on_boxset *cs = NULL;
            CHECK(on_ok(on_tgraph_coarse_set(s, 6, shift, 64 >> shift, &cs)));
            int F = 1 << shift, C = 64 >> shift;
            uint8_t *cov = calloc((size_t)C * C * C, 1);
            for (uint32_t b = 0; b < cs->nbox; b++) {
                const on_box *x = &cs->box[b];
                for (int cz = x->mn[2]; cz < x->mx[2]; cz++)
                    for (int cy = x->mn[1]; cy < x->mx[1]; cy++)
                        for (int cx = x->mn[0]; cx < x->mx[0]; cx++)
                            if (cov[cx + C * (cy + C * cz)]++) bad_overlap++;
            }
            for (int cz = 0; cz < C; cz++)
                for (int cy = 0; cy < C; cy++)
                    for (int cx = 0; cx < C; cx++) {
                        int all = 1;
                        for (int z = cz * F; z < cz * F + F && all; z++)
                            for (int y = cy * F; y < cy * F + F && all; y++)
                                for (int x = cx * F; x < cx * F + F && all; x++) all = leaf_free(s, x, y, z);
                        int in = cov[cx + C * (cy + C * cz)] != 0;
                        if (in && !all) bad_in++;
                        if (!in && all) bad_out++;
                        cells++;
                    }
            free(cov);
            on_boxset_free(cs);
        }
        on_boxset_free(s);
        on_tree_destroy(t);
    }
    CHECK_EQ_INT(bad_in, 0);
    CHECK_EQ_INT(bad_out, 0);
    CHECK_EQ_INT(bad_overlap, 0);
    CHECK(cells > 100000);
    on_boxset *none = NULL;
    on_boxset s0;
    memset(&s0, 0, sizeof s0);
    CHECK_EQ_INT(on_tgraph_coarse_set(&s0, 6, 4, 4, &none), ON_FAILURE | ON_INVALID);
    CHECK(none == NULL);
}

/* Two sets the same: boxes, adjacency and face lists in the same order. */
static int same_set(const on_boxset *a, const on_boxset *b)
{
    if (a->nbox != b->nbox || a->bsize != b->bsize || a->nb != b->nb) return 0;
    if (a->nbox && memcmp(a->box, b->box, a->nbox * sizeof *a->box)) return 0;
    if (memcmp(a->adj_off, b->adj_off, ((size_t)a->nbox + 1) * sizeof *a->adj_off)) return 0;
    if (a->adj_off[a->nbox] && memcmp(a->adj, b->adj, a->adj_off[a->nbox] * sizeof *a->adj)) return 0;
    size_t ng = (size_t)a->nb * (size_t)a->nb;
    for (int f = 0; f < 6; f++) {
        if (memcmp(a->face_off[f], b->face_off[f], (ng + 1) * sizeof *a->face_off[f])) return 0;
        if (a->face_off[f][ng] && memcmp(a->face[f], b->face[f], a->face_off[f][ng] * sizeof *a->face[f])) return 0;
    }
    return 1;
}

/* The coarse sets from the fine leaves' bitmap (on_tgraph_coarse_bits, what on_tgraph_build_table
 * uses) are the sets counted from the fine boxes (on_tgraph_coarse_set), box for box, for every shift
 * and for a shift made of two (2 then 1: 3), on random 64^3 tiles; a bad shift is refused. */
static void test_coarse_bits(void)
{
    int same = 0, sets = 0, boxes = 0;
    for (int round = 0; round < 4; round++) {
        on_tree *t = gt_tree(1, 1, 1, 6);
        for (int i = 0; i < 60; i++) {
            double x = gt_rnd(&rs) * 60, y = gt_rnd(&rs) * 60, z = gt_rnd(&rs) * 60;
            double dz = gt_rnd(&rs), dy = gt_rnd(&rs), dx = gt_rnd(&rs); /* one by one: gcc's order */
            gt_box(t, x, y, z, x + 1 + dx * 12, y + 1 + dy * 12, z + 1 + dz * 12);
        }
        on_boxset *s = boxes_of(t);
        on_boxbits fine;
        CHECK(on_boxbits_alloc(&fine, 6) == 0);
        on_boxbits_paint(&t->tiles[0].table, t->tiles[0].solid, 6, &fine);
        for (int shift = 1; shift <= 4; shift++) {
            on_boxbits cb = {NULL, 0, 0}, half = {NULL, 0, 0};
            int sh = shift == 4 ? 3 : shift; /* 4: shift 3 as 2 then 1 */
            if (shift == 4) {
                CHECK(on_tgraph_coarse_bits(&fine, 2, &half) == 0);
                CHECK(on_tgraph_coarse_bits(&half, 1, &cb) == 0);
            } else {
                CHECK(on_tgraph_coarse_bits(&fine, sh, &cb) == 0);
            }
            CHECK_EQ_INT(cb.n, 64 >> sh);
            on_boxset *a = NULL, *b = NULL;
            CHECK(on_ok(on_boxset_from_bits(&cb, 64 >> sh, &a)));
            CHECK(on_ok(on_tgraph_coarse_set(s, 6, sh, 64 >> sh, &b)));
            same += same_set(a, b);
            sets++;
            boxes += (int)a->nbox;
            on_boxset_free(a);
            on_boxset_free(b);
            on_boxbits_free(&cb);
            on_boxbits_free(&half);
        }
        on_boxbits bad = {NULL, 0, 0};
        CHECK(on_tgraph_coarse_bits(&fine, 4, &bad) == -1 && bad.w == NULL);
        CHECK(on_tgraph_coarse_bits(&fine, 0, &bad) == -1 && bad.w == NULL);
        on_boxbits_free(&fine);
        on_boxset_free(s);
        on_tree_destroy(t);
    }
    CHECK_EQ_INT(same, sets);
    CHECK(boxes > 1000);
}

static double hf_height(int i, int k) { return 60 + 35 * sin(i / 9.0) * cos(k / 13.0) + 12 * sin((i + k) / 5.0); }

/* A 256^3 terrain tile. */
static on_tree *terrain_tile(void)
{
    on_tree *t = gt_tree(1, 1, 1, 8);
    int n = 33;
    double *h = malloc((size_t)n * n * sizeof *h);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) h[i + k * n] = hf_height(i, k);
    on_heightfield hf = {{0, 0, 0}, 8.0, n, n, h};
    CHECK(on_ok(on_tree_add_heightfield(t, &hf)));
    free(h);
    for (int i = 0; i < 6; i++) { /* pillars */
        double x = 20 + gt_rnd(&rs) * 210, z = 20 + gt_rnd(&rs) * 210, w = 2 + gt_rnd(&rs) * 6;
        gt_box(t, x, 0, z, x + w, 120 + gt_rnd(&rs) * 120, z + w);
    }
    gt_box(t, 40, 0, 150, 118, 200, 154); /* a wall with a 12-leaf gap */
    gt_box(t, 130, 0, 150, 220, 200, 154);
    gt_box(t, 60, 160, 40, 110, 164, 90); /* a slab */
    gt_box(t, 0, 0, 200, 30, 130, 203);   /* an overhang by the -x face: a low pocket under it */
    gt_box(t, 0, 127, 200, 30, 130, 256);
    return t;
}

static void test_terrain_tile(void)
{
    on_tree *t = terrain_tile();
    on_boxset *s = boxes_of(t);
    on_tgraph *g = NULL, *g2 = NULL;
    CHECK(on_ok(on_tgraph_build(s, 8, NULL, &g)));
    CHECK(on_ok(on_tgraph_build(s, 8, NULL, &g2)));
    size_t la, lb;
    on_tgraph_encode(g, NULL, 0, &la);
    on_tgraph_encode(g2, NULL, 0, &lb);
    uint8_t *ba = malloc(la), *bb = malloc(lb);
    on_tgraph_encode(g, ba, la, &la);
    on_tgraph_encode(g2, bb, lb, &lb);
    CHECK(la == lb && memcmp(ba, bb, la) == 0); /* deterministic */
    /* from the tile's table (its coarse sets from the painted bitmap): the same bytes */
    on_tgraph *g3 = NULL;
    CHECK(on_ok(on_tgraph_build_table(&t->tiles[0].table, t->tiles[0].solid, 8, NULL, &g3)));
    size_t lc;
    on_tgraph_encode(g3, NULL, 0, &lc);
    uint8_t *bc = malloc(lc);
    on_tgraph_encode(g3, bc, lc, &lc);
    CHECK(la == lc && memcmp(ba, bc, la) == 0);
    CHECK_EQ_INT((int)g3->settled, (int)g->settled);
    free(bc);
    on_tgraph_free(g3);
    free(ba);
    free(bb);
    /* the work: a search over the fine boxes from every portal but the last settled every box each */
    double fine_all = (double)(g->nportal - 1) * s->nbox;
    printf("tgraph_coarse: 256^3 terrain tile, %u boxes, %u portals: %zu boxes settled (%.3f of a fine search "
           "per portal)\n", s->nbox, g->nportal, g->settled, g->settled / fine_all);
    CHECK(g->nportal > 20 && s->nbox > 5000);
    CHECK(g->settled * 5 < fine_all);
    /* the weights against fresh fine searches from each portal */
    double *pts = malloc(3 * (size_t)g->nportal * sizeof *pts), *cost = malloc(g->nportal * sizeof *cost);
    for (uint32_t p = 0; p < g->nportal; p++) on_portal_point(g, p, pts + 3 * (size_t)p);
    on_reach r;
    memset(&r, 0, sizeof r);
    double unit = ldexp(1.0, g->wshift), sum = 0, worst = 0;
    int n = 0, below_line = 0, over = 0, bad_tri = 0;
    for (uint32_t a = 0; a < g->nportal; a++) {
        uint32_t reached;
        CHECK(on_ok(on_reach_points(&r, s, pts, g->nportal, pts + 3 * (size_t)a, cost, &reached)));
        for (uint32_t b = a + 1; b < g->nportal; b++) {
            if (g->portal[a].comp != g->portal[b].comp) continue;
            double w = on_tgraph_weight(g, a, b) / unit;
            if (w < gt_dist(pts + 3 * (size_t)a, pts + 3 * (size_t)b) - 1e-9) below_line++;
            double ratio = w / cost[b];
            if (ratio > 1.25 && w > cost[b] + 1) over++;
            if (ratio > worst) worst = ratio;
            sum += ratio;
            n++;
            for (uint32_t c = 0; c < g->nportal; c++)
                if (c != a && c != b && g->portal[c].comp == g->portal[a].comp &&
                    on_tgraph_weight(g, a, b) > on_tgraph_weight(g, a, c) + on_tgraph_weight(g, c, b) + 1)
                    bad_tri++;
        }
    }
    printf("tgraph_coarse: weight / fresh fine search: mean %.4f max %.4f over %d pairs\n", sum / n, worst, n);
    CHECK(n > 200);
    CHECK_EQ_INT(below_line, 0);
    CHECK_EQ_INT(over, 0);
    CHECK(sum / n < 1.01);
    CHECK_EQ_INT(bad_tri, 0);
    free(pts);
    free(cost);
    on_reach_free(&r);
    on_tgraph_free(g);
    on_tgraph_free(g2);
    on_boxset_free(s);
    on_tree_destroy(t);
}

TEST_MAIN("tgraph_coarse", {
    test_coarse_set();
    test_coarse_bits();
    test_terrain_tile();
})
