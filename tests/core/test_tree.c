/*
 * test_tree.c -- the tree against a dense voxel reference: random box scenes over several tiles,
 * every leaf located, the storage invariants, neighbours, fill, and line of sight (octree walk vs the
 * dense walk) over random, axis-aligned and lattice-diagonal segments; a tile not loaded (locate and
 * search answer ON_UNLOADED, not ON_BLOCKED).
 */
#include "octonav.h"
#include "minitest.h"
#include "raycast.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct dense {
    int nx, ny, nz;
    unsigned char *b; /* 1 = blocked */
} dense;

static int dense_free(const void *ud, int64_t x, int64_t y, int64_t z)
{
    const dense *d = ud;
    if (x < 0 || y < 0 || z < 0 || x >= d->nx || y >= d->ny || z >= d->nz) return 0;
    return !d->b[x + (size_t)d->nx * (y + (size_t)d->ny * z)];
}

#define TESTRNG_SEED 88172645463325252ull
#include "testrng.h"

/* Every stored node: not fully blocked, not empty (some child blocked or stored). */
static int check_invariants(const on_tree *t)
{
    int bad = 0;
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        const on_table *tab = &t->tiles[ti].table;
        if (t->tiles[ti].solid && tab->count) bad++;
        for (uint32_t i = 0; i < tab->cap; i++) {
            uint32_t k;
            uint8_t v;
            if (!on_table_slot(tab, i, &k, &v)) continue;
            if (v == 0xff) bad++;
            int stored = 0;
            if (on_code_layer(k) > 1)
                for (unsigned c = 0; c < 8; c++)
                    if (on_table_find(tab, on_code_child(k, c))) {
                        stored = 1;
                        if (v & (1u << c)) bad++;
                    }
            if (!v && !stored) bad++;
            if (on_code_layer(k) == 0) bad++;
            if (on_code_layer(k) < (uint32_t)t->p.depth && !on_table_find(tab, on_code_parent(k))) bad++;
        }
    }
    return bad;
}

static void scene(int depth, int tx, int ty, int tz, int nboxes, on_tree **tp, dense *d)
{
    on_tree_params p = {{tx, ty, tz}, depth, 1.0, {0, 0, 0}, 0};
    CHECK(on_ok(on_tree_create(&p, tp)));
    int n = 1 << depth;
    d->nx = tx * n, d->ny = ty * n, d->nz = tz * n;
    d->b = calloc((size_t)d->nx * d->ny * d->nz, 1);
    for (int i = 0; i < nboxes; i++) {
        int lo[3], hi[3], dim[3] = {d->nx, d->ny, d->nz};
        for (int j = 0; j < 3; j++) {
            lo[j] = rndi(dim[j]);
            hi[j] = lo[j] + 1 + rndi(dim[j] / 3 + 1);
            if (hi[j] > dim[j]) hi[j] = dim[j];
        }
        double mn[3] = {lo[0], lo[1], lo[2]}, mx[3] = {hi[0], hi[1], hi[2]};
        CHECK(on_ok(on_tree_add_box(*tp, mn, mx)));
        for (int z = lo[2]; z < hi[2]; z++)
            for (int y = lo[1]; y < hi[1]; y++)
                for (int x = lo[0]; x < hi[0]; x++) d->b[x + (size_t)d->nx * (y + (size_t)d->ny * z)] = 1;
    }
}

static void test_locate_and_invariants(void)
{
    for (int s = 0; s < 30; s++) {
        on_tree *t;
        dense d;
        scene(1 + s % 4, 1 + s % 3, 1 + (s / 3) % 2, 1 + s % 2, 1 + s % 7, &t, &d);
        int mism = 0;
        for (int z = 0; z < d.nz; z++)
            for (int y = 0; y < d.ny; y++)
                for (int x = 0; x < d.nx; x++) {
                    on_cell c;
                    int f = on_tree_leaf_free(t, x, y, z, &c);
                    if (f != dense_free(&d, x, y, z)) mism++;
                    if (f) { /* the cell holds the leaf and is wholly free */
                        int64_t m[3], sz;
                        on_tree_cell_nav(t, c, m, &sz);
                        if (x < m[0] || x >= m[0] + sz || y < m[1] || y >= m[1] + sz || z < m[2] || z >= m[2] + sz)
                            mism++;
                    }
                }
        CHECK_EQ_INT(mism, 0);
        CHECK_EQ_INT(check_invariants(t), 0);
        on_tree_destroy(t);
        free(d.b);
    }
}

static void test_neighbors(void)
{
    for (int s = 0; s < 12; s++) {
        on_tree *t;
        dense d;
        scene(2 + s % 3, 2, 1 + s % 2, 2, 3 + s % 5, &t, &d);
        int bad = 0;
        on_cell nb[4096];
        uint8_t faces[4096];
        /* for each free cell (found at its min leaf), every neighbour it reports shares a face, and
         * every free leaf across each face is covered by exactly one reported neighbour */
        for (int z = 0; z < d.nz; z++)
            for (int y = 0; y < d.ny; y++)
                for (int x = 0; x < d.nx; x++) {
                    on_cell c;
                    if (!on_tree_leaf_free(t, x, y, z, &c)) continue;
                    int64_t m[3], sz;
                    on_tree_cell_nav(t, c, m, &sz);
                    if (m[0] != x || m[1] != y || m[2] != z) continue;
                    size_t n;
                    CHECK(on_ok(on_tree_neighbors(t, c, nb, faces, 4096, &n)));
                    for (int face = 0; face < 6; face++) {
                        int ax = face >> 1, dir = face & 1;
                        int u = (ax + 1) % 3, v = (ax + 2) % 3;
                        for (int64_t i = 0; i < sz; i++)
                            for (int64_t j = 0; j < sz; j++) {
                                int64_t q[3];
                                q[ax] = dir ? m[ax] + sz : m[ax] - 1;
                                q[u] = m[u] + i;
                                q[v] = m[v] + j;
                                int fr = on_tree_leaf_free(t, q[0], q[1], q[2], NULL);
                                int hits = 0; /* reported neighbours on this face holding leaf q */
                                for (size_t k = 0; k < n; k++) {
                                    int64_t qm[3], qs;
                                    on_tree_cell_nav(t, nb[k], qm, &qs);
                                    if (faces[k] == face && q[0] >= qm[0] && q[0] < qm[0] + qs && q[1] >= qm[1] &&
                                        q[1] < qm[1] + qs && q[2] >= qm[2] && q[2] < qm[2] + qs)
                                        hits++;
                                }
                                if (fr ? hits != 1 : hits != 0) bad++;
                            }
                    }
                    for (size_t k = 0; k < n; k++) { /* no reported neighbour is blocked or misplaced */
                        int64_t qm[3], qs;
                        on_tree_cell_nav(t, nb[k], qm, &qs);
                        on_cell back;
                        if (!on_tree_leaf_free(t, qm[0], qm[1], qm[2], &back) || back.code != nb[k].code) bad++;
                    }
                }
        CHECK_EQ_INT(bad, 0);
        on_tree_destroy(t);
        free(d.b);
    }
}

static void rand_point(const dense *d, double p[3], int kind)
{
    int dim[3] = {d->nx, d->ny, d->nz};
    for (int j = 0; j < 3; j++) {
        if (kind == 0) p[j] = rnd() * dim[j];
        else if (kind == 1) p[j] = rndi(dim[j]) + 0.5; /* voxel centres: diagonals pass edges/corners */
        else p[j] = rndi(dim[j] + 1);                   /* lattice points */
    }
}

static void test_visible(void)
{
    long total = 0, disagree = 0, blocked = 0;
    for (int s = 0; s < 24; s++) {
        on_tree *t;
        dense d;
        scene(2 + s % 3, 1 + s % 3, 1 + s % 2, 1 + (s / 2) % 2, 2 + s % 9, &t, &d);
        for (int i = 0; i < 3000; i++) {
            double a[3], b[3];
            int kind = i % 3;
            rand_point(&d, a, kind);
            rand_point(&d, b, kind);
            if (i % 7 == 0) { /* axis-aligned */
                int ax = rndi(3);
                for (int j = 0; j < 3; j++)
                    if (j != ax) b[j] = a[j];
            } else if (i % 7 == 1) { /* 45-degree diagonal in a plane or in space */
                double len = (double)(rndi(6) + 1) * (rnd() < 0.5 ? 1 : -1);
                b[0] = a[0] + len;
                b[1] = a[1] + (rnd() < 0.5 ? len : -len);
                b[2] = (i % 2) ? a[2] : a[2] + len;
            }
            double th_d = -1, th_t = -1;
            int vd = on_walk_dense(dense_free, &d, a, b, &th_d);
            on_status st = on_tree_raycast(t, a, b, &th_t);
            int vt = on_ok(st);
            total++;
            if (!vd) blocked++;
            if (vd != vt || (!vd && th_d != th_t)) {
                disagree++;
                if (disagree < 5)
                    fprintf(stderr, "visible mismatch: (%g %g %g)->(%g %g %g) dense %d@%g tree %d@%g\n", a[0], a[1],
                            a[2], b[0], b[1], b[2], vd, th_d, vt, th_t);
            }
        }
        on_tree_destroy(t);
        free(d.b);
    }
    CHECK_EQ_INT(disagree, 0);
    CHECK(blocked > total / 10 && blocked < total * 9 / 10); /* the scenes exercise both answers */
}

/* The rule itself on hand-made cases (dense walk). */
static void test_rule(void)
{
    dense d = {4, 4, 1, calloc(16, 1)};
    d.b[1 + 4 * 1] = 1; /* voxel (1,1) */
    d.b[2 + 4 * 2] = 1; /* voxel (2,2): meets (1,1) only at the corner point (2,2) */
    double a[3], b[3];
    /* through the zero-width gap between them: blocked */
    a[0] = 1.5, a[1] = 2.5, a[2] = 0.5, b[0] = 2.5, b[1] = 1.5, b[2] = 0.5;
    CHECK(!on_walk_dense(dense_free, &d, a, b, NULL));
    /* (0,0) -> (3,3) runs through the interiors of both blocked voxels */
    a[0] = 0.5, a[1] = 0.5, b[0] = 3.5, b[1] = 3.5;
    CHECK(!on_walk_dense(dense_free, &d, a, b, NULL));
    /* sliding along a wall face: clear */
    a[0] = 0, a[1] = 1, b[0] = 4, b[1] = 1;
    CHECK(on_walk_dense(dense_free, &d, a, b, NULL));
    /* touching one blocked corner only: clear */
    memset(d.b, 0, 16);
    d.b[1 + 4 * 1] = 1;
    a[0] = 1, a[1] = 3, b[0] = 3, b[1] = 1; /* passes exactly through the corner (2,2) of voxel (1,1) */
    CHECK(on_walk_dense(dense_free, &d, a, b, NULL));
    a[0] = 0.5, a[1] = 2.5, b[0] = 2.5, b[1] = 0.5; /* passes (1.5, 1.5), inside voxel (1,1) */
    double th;
    CHECK(!on_walk_dense(dense_free, &d, a, b, &th));
    CHECK(fabs(th - 0.25) < 1e-12); /* enters the blocked voxel at x = 1 */
    free(d.b);
}

static void test_fill(void)
{
    /* a hollow box: fill outside leaves the interior free, fill inside blocks it */
    on_tree_params p = {{2, 1, 1}, 4, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&p, &t)));
    double walls[6][2][3] = {{{4, 4, 4}, {5, 12, 12}},  {{11, 4, 4}, {12, 12, 12}}, {{4, 4, 4}, {12, 5, 12}},
                             {{4, 11, 4}, {12, 12, 12}}, {{4, 4, 4}, {12, 12, 5}},  {{4, 4, 11}, {12, 12, 12}}};
    for (int i = 0; i < 6; i++) CHECK(on_ok(on_tree_add_box(t, walls[i][0], walls[i][1])));
    double out[3] = {1, 1, 1}, in[3] = {8, 8, 8};
    size_t n = 0;
    CHECK(on_ok(on_tree_fill(t, out, &n)));
    CHECK(n > 0);
    CHECK(!on_tree_leaf_free(t, 1, 1, 1, NULL));
    CHECK(!on_tree_leaf_free(t, 30, 15, 15, NULL)); /* the other tile too */
    CHECK(on_tree_leaf_free(t, 8, 8, 8, NULL));
    CHECK(on_tree_leaf_free(t, 5, 5, 5, NULL));
    CHECK_EQ_INT(check_invariants(t), 0);
    CHECK(on_ok(on_tree_fill(t, in, &n)));
    CHECK(!on_tree_leaf_free(t, 8, 8, 8, NULL));
    CHECK(t->tiles[0].solid && t->tiles[1].solid); /* everything blocked and pruned to solid tiles */
    CHECK((on_tree_fill(t, in, &n) & ON_BLOCKED) != 0);
    on_tree_destroy(t);
}

/* Unloaded is not blocked: a point in a tile not loaded locates as ON_UNLOADED with its tile; a search
 * with an end there fails ON_UNLOADED (which end, which tile); a search that must cross one fails
 * ON_LOADING with that tile; loaded again, the same path as before to the bit. */
static void test_unloaded(void)
{
    on_tree_params p = {{2, 1, 2}, 3, 1.0, {0, 0, 0}, 0}; /* tiles 0 (0,0,0), 1 (1,0,0), 2 (0,0,1), 3 (1,0,1) */
    on_tree *t;
    CHECK(on_ok(on_tree_create(&p, &t)));
    double wlo[3] = {7, 0, 0}, whi[3] = {9, 8, 8}; /* closes the border of tiles 0 and 1 */
    CHECK(on_ok(on_tree_add_box(t, wlo, whi)));
    double a[3] = {3.5, 4.5, 4.5}, b[3] = {12.5, 4.5, 4.5}, wall[3] = {7.5, 4.5, 4.5};
    on_query *q;
    CHECK(on_ok(on_query_create(t, 4096, &q)));
    double ref[3 * 64], path[3 * 64];
    size_t nref = 0, n = 0;
    on_query_info info;
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, ref, 64, &nref, &info), ON_SUCCESS);
    double len = info.length;
    CHECK(len >= 2 + 2 * sqrt(2 * 3.5 * 3.5) - 1e-9); /* round the wall (z >= 8: through tiles 2 and 3) */
    uint8_t blob[4096];
    size_t blen[2];
    CHECK(on_ok(on_tree_encode_tile(t, 1, blob, 2048, &blen[0])));
    CHECK(on_ok(on_tree_encode_tile(t, 2, blob + 2048, 2048, &blen[1])));
    /* goal's tile unloaded */
    on_tree_unload_tile(t, 1);
    on_cell c = {0, 0};
    CHECK_EQ_INT(on_tree_locate(t, b, &c), ON_FAILURE | ON_UNLOADED);
    CHECK_EQ_INT(c.tile, 1);
    CHECK_EQ_INT(c.code, ON_CODE_NONE);
    CHECK_EQ_INT(on_tree_locate(t, wall, &c), ON_FAILURE | ON_BLOCKED); /* loaded and blocked: unchanged */
    CHECK_EQ_INT(on_tree_locate(t, a, &c), ON_SUCCESS);
    CHECK_EQ_INT(c.tile, 0);
    CHECK(strcmp(on_status_string(ON_FAILURE | ON_UNLOADED), "tile not loaded") == 0);
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, 64, &n, &info), ON_FAILURE | ON_UNLOADED);
    CHECK_EQ_INT(info.which, 1);
    CHECK_EQ_INT(info.loading_tile, 1);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(on_query_init(q, b, a, NULL), ON_FAILURE | ON_UNLOADED); /* the start's */
    CHECK_EQ_INT(on_query_finalize(q, path, 64, &n, &info), ON_FAILURE | ON_UNLOADED);
    CHECK_EQ_INT(info.which, 0);
    CHECK_EQ_INT(info.loading_tile, 1);
    /* both ends loaded, the only way through an unloaded tile: the search waits for it */
    CHECK(on_ok(on_tree_decode_tile(t, 1, blob, blen[0])));
    on_tree_unload_tile(t, 2);
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, 64, &n, &info), ON_FAILURE | ON_LOADING);
    CHECK_EQ_INT(info.loading_tile, 2);
    CHECK_EQ_INT(on_query_init(q, a, b, NULL), ON_IN_PROGRESS);
    CHECK_EQ_INT(on_query_update(q, (size_t)-1, NULL), ON_IN_PROGRESS | ON_LOADING);
    CHECK(on_ok(on_tree_decode_tile(t, 2, blob + 2048, blen[1])));
    CHECK_EQ_INT(on_query_update(q, (size_t)-1, NULL), ON_SUCCESS); /* a tile loaded while it waits is welcome */
    CHECK_EQ_INT(on_query_finalize(q, path, 64, &n, &info), ON_SUCCESS);
    CHECK_EQ_INT(n, nref);
    CHECK(info.length == len);
    CHECK(memcmp(path, ref, 3 * nref * sizeof *path) == 0);
    /* all loaded again: the path of before, bit for bit */
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, 64, &n, &info), ON_SUCCESS);
    CHECK_EQ_INT(n, nref);
    CHECK(info.length == len);
    CHECK(memcmp(path, ref, 3 * nref * sizeof *path) == 0);
    on_query_destroy(q);
    on_tree_destroy(t);
}

static void test_codes(void)
{
    uint32_t c = on_code_make(96, 32, 160, 5);
    CHECK_EQ_INT(on_code_parent(c), on_code_make(64, 0, 128, 6));
    for (unsigned i = 0; i < 8; i++) {
        uint32_t ch = on_code_child(c, i);
        CHECK_EQ_INT(on_code_parent(ch), c);
        CHECK_EQ_INT(on_code_child_index(ch), i);
        CHECK(on_code_contains(c, ch));
    }
    CHECK(!on_code_contains(on_code_child(c, 0), c));
}

static void test_table(void)
{
    on_table t;
    on_table_init(&t);
    for (uint32_t i = 0; i < 20000; i++) CHECK_EQ_INT(on_table_insert(&t, i * 7919u, (uint8_t)i), 0);
    int bad = 0;
    for (uint32_t i = 0; i < 20000; i++) {
        uint8_t *v = on_table_find(&t, i * 7919u);
        if (!v || *v != (uint8_t)i) bad++;
    }
    for (uint32_t i = 0; i < 20000; i += 2) CHECK_EQ_INT(on_table_remove(&t, i * 7919u), 1);
    for (uint32_t i = 0; i < 20000; i++) {
        uint8_t *v = on_table_find(&t, i * 7919u);
        if ((i % 2 == 0) != (v == NULL)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(on_table_compact(&t, 0.88), 0);
    CHECK(t.count == 10000 && (double)t.count / t.cap > 0.85);
    for (uint32_t i = 1; i < 20000; i += 2) {
        uint8_t *v = on_table_find(&t, i * 7919u);
        if (!v || *v != (uint8_t)i) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    on_table_free(&t);
}

TEST_MAIN("tree", {
    test_codes();
    test_table();
    test_locate_and_invariants();
    test_neighbors();
    test_rule();
    test_fill();
    test_visible();
    test_unloaded();
})
