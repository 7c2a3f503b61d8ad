/*
 * test_losmap.c -- line of sight's mask hierarchy (losmap.h) against the node table and the dense walk:
 * every leaf's free cell read off the masks equals the octree's (box scenes at depths 1-7, voxel maps
 * whose bounds cut the tiles); line of sight equals the dense walk (answer and t) over random, voxel
 * centre, lattice, axis-aligned and diagonal segments, before and after edits (add_box, clear_tile,
 * obstacles added and removed, a tile decoded again), each of which drops the edited tile's masks; and
 * hand-made cases at brick and tile edges (faces, grazed corners, zero-width gaps, ends on boundaries,
 * points outside the map); with the masks off, the node table alone.
 */
#include "octonav.h" /* (the whole public API: obstacles too) */
#include "losmap.h"
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

static void dense_set(dense *d, const int lo[3], const int hi[3], unsigned char v)
{
    for (int z = lo[2]; z < hi[2]; z++)
        for (int y = lo[1]; y < hi[1]; y++)
            for (int x = lo[0]; x < hi[0]; x++) d->b[x + (size_t)d->nx * (y + (size_t)d->ny * z)] = v;
}

#define TESTRNG_SEED 0x2545F4914F6CDD1Dull
#include "testrng.h"

static void rand_box(const dense *d, int lo[3], int hi[3], int maxside)
{
    int dim[3] = {d->nx, d->ny, d->nz};
    for (int j = 0; j < 3; j++) {
        lo[j] = rndi(dim[j]);
        hi[j] = lo[j] + 1 + rndi(maxside);
        if (hi[j] > dim[j]) hi[j] = dim[j];
    }
}

static void add_box(on_tree *t, dense *d, const int lo[3], const int hi[3])
{
    double mn[3] = {lo[0], lo[1], lo[2]}, mx[3] = {hi[0], hi[1], hi[2]};
    CHECK(on_ok(on_tree_add_box(t, mn, mx)));
    dense_set(d, lo, hi, 1);
}

static void scene(int depth, int tx, int ty, int tz, int nboxes, int maxside, on_tree **tp, dense *d)
{
    on_tree_params p = {{tx, ty, tz}, depth, 1.0, {0, 0, 0}, 0};
    CHECK(on_ok(on_tree_create(&p, tp)));
    int n = 1 << depth;
    d->nx = tx * n, d->ny = ty * n, d->nz = tz * n;
    d->b = calloc((size_t)d->nx * d->ny * d->nz, 1);
    for (int i = 0; i < nboxes; i++) {
        int lo[3], hi[3];
        rand_box(d, lo, hi, maxside);
        add_box(*tp, d, lo, hi);
    }
}

/* Every leaf: the masks give the node table's answer and free cell. Returns the mismatches. */
static long cells_agree(const on_tree *t)
{
    long bad = 0;
    int64_t n = t->n;
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        const on_losmap *m = on_tile_losmap(t, ti);
        if (!m) {
            bad += !(t->tiles[ti].solid || !t->tiles[ti].loaded);
            continue;
        }
        int ijk[3];
        on_tile_coords(t, ti, ijk);
        for (uint32_t z = 0; z < n; z++)
            for (uint32_t y = 0; y < n; y++)
                for (uint32_t x = 0; x < n; x++) {
                    on_cell c;
                    int f = on_tree_leaf_free(t, ijk[0] * n + x, ijk[1] * n + y, ijk[2] * n + z, &c);
                    const on_losnode *chain[ON_LOS_LEVELS];
                    chain[m->top] = m->node;
                    int l = on_losmap_leaf_from(m, chain, m->top, x, y, z, NULL);
                    if (f != (l >= 0) || (f && (c.tile != ti || c.code != on_code_at(x, y, z, (uint32_t)l)))) bad++;
                }
    }
    return bad;
}

static void rand_point(const dense *d, double p[3], int kind)
{
    int dim[3] = {d->nx, d->ny, d->nz};
    for (int j = 0; j < 3; j++) {
        if (kind == 0) p[j] = rnd() * dim[j];
        else if (kind == 1) p[j] = rndi(dim[j]) + 0.5;
        else if (kind == 2) p[j] = rndi(dim[j] + 1);
        else p[j] = rnd() * (dim[j] + 8) - 4; /* some outside the map */
    }
}

/* Segments of every kind: tree walk against dense walk, answer and t. Returns the disagreements and
 * adds the blocked ones to *blocked. */
static long los_agree(const on_tree *t, const dense *d, int count, long *blocked)
{
    long bad = 0;
    for (int i = 0; i < count; i++) {
        double a[3], b[3];
        int kind = i % 4;
        rand_point(d, a, kind);
        rand_point(d, b, kind);
        if (i % 7 == 0) {
            int ax = rndi(3);
            for (int j = 0; j < 3; j++)
                if (j != ax) b[j] = a[j];
        } else if (i % 7 == 1) {
            double len = (double)(rndi(9) + 1) * (rnd() < 0.5 ? 1 : -1);
            b[0] = a[0] + len;
            b[1] = a[1] + (rnd() < 0.5 ? len : -len);
            b[2] = (i % 2) ? a[2] : a[2] + len;
        }
        double th_d = -1, th_t = -1;
        int vd = on_walk_dense(dense_free, d, a, b, &th_d);
        int vt = on_ok(on_tree_raycast(t, a, b, &th_t));
        /* on_tree_visible walks its own way (raycast.c's visible_fast, a segment in one lattice plane
         * moved half a voxel into each layer first, walk_loop where fast_run stops) */
        int vv = on_ok(on_tree_visible(t, a, b));
        if (!vd) ++*blocked;
        if (vd != vt || vd != vv || (!vd && th_d != th_t)) {
            if (bad < 4)
                fprintf(stderr, "los mismatch: (%.17g %.17g %.17g)->(%.17g %.17g %.17g) dense %d@%.17g tree %d@%.17g visible %d\n",
                        a[0], a[1], a[2], b[0], b[1], b[2], vd, th_d, vt, th_t, vv);
            bad++;
        }
    }
    return bad;
}

static int los(const on_tree *t, double ax, double ay, double az, double bx, double by, double bz, double *th);

static int tile_has_losmap(const on_tree *t, uint32_t ti)
{
    return atomic_load(&t->tiles[ti].los) != NULL;
}

static void test_cells(void)
{
    static const int cfg[][5] = {
        /* depth, tiles x y z, boxes */
        {1, 3, 2, 2, 4}, {2, 2, 2, 1, 6}, {3, 2, 1, 2, 9}, {4, 2, 2, 2, 12}, {5, 2, 1, 1, 20}, {6, 1, 2, 1, 25},
        {7, 1, 1, 1, 30},
    };
    for (size_t k = 0; k < sizeof cfg / sizeof cfg[0]; k++) {
        on_tree *t;
        dense d;
        scene(cfg[k][0], cfg[k][1], cfg[k][2], cfg[k][3], cfg[k][4], (1 << cfg[k][0]) / 2 + 2, &t, &d);
        CHECK_EQ_INT(cells_agree(t), 0);
        on_tree_destroy(t);
        free(d.b);
    }
    /* an empty tile and a solid one */
    on_tree *t;
    dense d;
    scene(5, 2, 1, 1, 0, 1, &t, &d);
    int lo[3] = {32, 0, 0}, hi[3] = {64, 32, 32};
    add_box(t, &d, lo, hi);
    CHECK(t->tiles[1].solid);
    CHECK_EQ_INT(cells_agree(t), 0);
    CHECK(on_tile_losmap(t, 0) != NULL && on_tile_losmap(t, 1) == NULL);
    long blocked = 0;
    CHECK_EQ_INT(los_agree(t, &d, 2000, &blocked), 0);
    on_tree_destroy(t);
    free(d.b);
}

/* The rank by the popcnt instruction (chosen at run time) and the portable one: the same as counting
 * bit by bit, for every bit of random masks of every density; every losmap records whether the CPU
 * offers popcnt, and the free cells read off its masks are the octree's either way. */
static void test_popcnt_rank(void)
{
    int hw = on_los_popcnt_ok();
    long bad = 0;
    for (int k = 0; k < 4000; k++) {
        uint64_t m = 0;
        int density = k % 9; /* 0: empty, 8: each bit 8/8 */
        for (unsigned b = 0; b < 64; b++)
            if (rndi(8) < density) m |= 1ull << b;
        for (unsigned c = 0; c < 64; c++) {
            uint32_t naive = 0;
            for (unsigned b = 0; b < c; b++) naive += (uint32_t)((m >> b) & 1u);
            bad += on_los_rank(m, c) != naive;
            bad += on_los_rank_hw(0, m, c) != naive;
            if (hw) bad += on_los_rank_hw(1, m, c) != naive;
        }
    }
    CHECK_EQ_INT(bad, 0);
    on_tree *t;
    dense d;
    scene(6, 2, 1, 1, 25, 34, &t, &d);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            on_losmap *m = (on_losmap *)on_tile_losmap(t, ti);
            if (!m) continue;
            CHECK_EQ_INT(m->hwpop, pass ? 0 : hw);
            m->hwpop = 0; /* (the second pass: the portable rank) */
        }
        CHECK_EQ_INT(cells_agree(t), 0);
    }
    on_tree_destroy(t);
    free(d.b);
}

/* Voxel maps whose size cuts the tiles: the bounds read as blocked, in the masks too. */
static void test_bounds(void)
{
    static const int dims[][4] = {{37, 20, 45, 4}, {21, 9, 30, 5}, {5, 3, 7, 1}, {70, 33, 9, 6}};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        on_voxmap vm;
        vm.w = dims[k][0], vm.h = dims[k][1], vm.d = dims[k][2];
        dense d = {vm.w, vm.h, vm.d, calloc((size_t)vm.w * vm.h * vm.d, 1)};
        size_t cap = (size_t)vm.w * vm.h * vm.d / 6 + 1;
        vm.xyz = malloc(cap * 3 * sizeof *vm.xyz);
        vm.count = 0;
        for (size_t i = 0; i < cap; i++) {
            int x = rndi(vm.w), y = rndi(vm.h), z = rndi(vm.d);
            size_t at = x + (size_t)vm.w * (y + (size_t)vm.h * z);
            if (d.b[at]) continue;
            d.b[at] = 1;
            vm.xyz[3 * vm.count] = (uint16_t)x, vm.xyz[3 * vm.count + 1] = (uint16_t)y;
            vm.xyz[3 * vm.count + 2] = (uint16_t)z;
            vm.count++;
        }
        on_tree *t;
        CHECK(on_ok(on_tree_from_voxmap(&vm, dims[k][3], &t)));
        CHECK_EQ_INT(cells_agree(t), 0);
        long blocked = 0;
        CHECK_EQ_INT(los_agree(t, &d, 3000, &blocked), 0);
        CHECK(blocked > 300 && blocked < 2700);
        on_tree_destroy(t);
        free(vm.xyz);
        free(d.b);
    }
}

/* A map with a few blocked voxels in one corner (the box test decides most segments): segments along
 * axes and to points outside the map but inside its tile. */
static void test_sparse(void)
{
    static const int dims[][4] = {{37, 20, 45, 6}, {37, 20, 45, 9}, {30, 30, 30, 5}};
    for (size_t k = 0; k < sizeof dims / sizeof dims[0]; k++) {
        on_voxmap vm;
        vm.w = dims[k][0], vm.h = dims[k][1], vm.d = dims[k][2];
        dense d = {vm.w, vm.h, vm.d, calloc((size_t)vm.w * vm.h * vm.d, 1)};
        uint16_t xyz[] = {3, 4, 5, 4, 4, 5, 3, 5, 6, 9, 2, 7};
        vm.xyz = xyz;
        vm.count = 4;
        for (size_t i = 0; i < vm.count; i++) d.b[xyz[3 * i] + (size_t)vm.w * (xyz[3 * i + 1] + (size_t)vm.h * xyz[3 * i + 2])] = 1;
        on_tree *t;
        CHECK(on_ok(on_tree_from_voxmap(&vm, dims[k][3], &t)));
        CHECK(on_ok(on_tree_los_prepare(t, NULL)));
        CHECK_EQ_INT(cells_agree(t), 0);
        long blocked = 0;
        CHECK_EQ_INT(los_agree(t, &d, 6000, &blocked), 0);
        CHECK(blocked > 600 && blocked < 5400);
        double th;
        if (vm.h == 20) { /* along y, clear of the voxels' box, out of the map from y = 20 on */
            CHECK(!los(t, 20.5, 19.5, 30.5, 20.5, 21.5, 30.5, &th) && th == 0.25);
            CHECK(los(t, 20.5, 1.5, 30.5, 20.5, 19.5, 30.5, &th) && th == 1.0);
        }
        on_tree_destroy(t);
        free(d.b);
    }
}

/* Edits drop the edited tiles' masks; line of sight after them is the new contents'. */
static void test_edits(void)
{
    for (int s = 0; s < 6; s++) {
        on_tree *t;
        dense d;
        int depth = 3 + s % 3;
        scene(depth, 2, 1 + s % 2, 2, 4 + s, (1 << depth) / 2, &t, &d);
        long blocked = 0;
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        size_t bytes = 0;
        CHECK(on_ok(on_tree_los_prepare(t, &bytes)));
        CHECK(bytes > 0 && bytes == on_tree_losmap_bytes(t, NULL));
        /* add_box: the tiles it touches lose their masks, the others keep theirs */
        int n = t->n, lo[3] = {1, 1, 1}, hi[3] = {3, 2, n + 1}; /* tiles (0,0,0) and (0,0,1) */
        add_box(t, &d, lo, hi);
        CHECK(!tile_has_losmap(t, on_tile_index(t, 0, 0, 0)) && !tile_has_losmap(t, on_tile_index(t, 0, 0, 1)));
        CHECK(tile_has_losmap(t, on_tile_index(t, 1, 0, 0)));
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        CHECK_EQ_INT(cells_agree(t), 0);
        for (int i = 0; i < 3; i++) {
            int blo[3], bhi[3];
            rand_box(&d, blo, bhi, n);
            add_box(t, &d, blo, bhi);
            CHECK_EQ_INT(los_agree(t, &d, 500, &blocked), 0);
        }
        /* clear_tile */
        uint32_t ct = on_tile_index(t, 1, 0, 1);
        CHECK(on_ok(on_tree_clear_tile(t, ct)));
        CHECK(!tile_has_losmap(t, ct));
        int clo[3] = {n, 0, n}, chi[3] = {2 * n, n, 2 * n};
        dense_set(&d, clo, chi, 0);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        /* an obstacle, then its removal */
        unsigned char *before = malloc((size_t)d.nx * d.ny * d.nz);
        memcpy(before, d.b, (size_t)d.nx * d.ny * d.nz);
        int olo[3] = {n / 2, 0, n / 2}, ohi[3] = {n + n / 2, d.ny, n / 2 + 1}; /* a wall over 2 tiles */
        double omn[3] = {olo[0], olo[1], olo[2]}, omx[3] = {ohi[0], ohi[1], ohi[2]};
        uint32_t id;
        CHECK(on_ok(on_tree_add_obstacle(t, omn, omx, &id)));
        dense_set(&d, olo, ohi, 1);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        CHECK_EQ_INT(cells_agree(t), 0);
        CHECK(on_ok(on_tree_remove_obstacle(t, id)));
        memcpy(d.b, before, (size_t)d.nx * d.ny * d.nz);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        free(before);
        /* a tile decoded again from another tile's blob */
        uint8_t *buf = malloc(on_tile_file_max_bytes(depth));
        size_t len = 0;
        uint32_t src = on_tile_index(t, 0, 0, 0), dst = on_tile_index(t, 1, 0, 0);
        CHECK(on_ok(on_tree_encode_tile(t, src, buf, on_tile_file_max_bytes(depth), &len)));
        CHECK(on_ok(on_tree_decode_tile(t, dst, buf, len)));
        CHECK(!tile_has_losmap(t, dst));
        for (int z = 0; z < n; z++)
            for (int y = 0; y < n; y++)
                for (int x = 0; x < n; x++)
                    d.b[(x + n) + (size_t)d.nx * (y + (size_t)d.ny * z)] = d.b[x + (size_t)d.nx * (y + (size_t)d.ny * z)];
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        CHECK_EQ_INT(cells_agree(t), 0);
        free(buf);
        on_tree_destroy(t);
        free(d.b);
    }
}

static int los(const on_tree *t, double ax, double ay, double az, double bx, double by, double bz, double *th)
{
    double a[3] = {ax, ay, az}, b[3] = {bx, by, bz};
    int r = on_ok(on_tree_raycast(t, a, b, th));
    CHECK_EQ_INT(on_ok(on_tree_visible(t, a, b)), r); /* (visible_fast's way: the same answer) */
    return r;
}

/* Hand-made cases where bricks (4 leaves), their groups (8) and tiles (16) meet. */
static void test_edges(void)
{
    on_tree *t;
    dense d;
    scene(4, 2, 2, 1, 0, 1, &t, &d); /* 32 x 32 x 16, empty */
    double th;
    CHECK(los(t, 0.5, 0.5, 0.5, 31.5, 31.5, 15.5, &th) && th == 1.0);
    /* voxels (7,7,z) and (8,8,z) for all z meet only along the edge x = y = 8, a brick-group corner */
    int a0[3] = {7, 7, 0}, a1[3] = {8, 8, 16}, b0[3] = {8, 8, 0}, b1[3] = {9, 9, 16};
    add_box(t, &d, a0, a1);
    add_box(t, &d, b0, b1);
    CHECK(!los(t, 7.5, 8.5, 3.25, 8.5, 7.5, 3.75, &th)); /* through the zero-width gap */
    CHECK(th == 0.5);
    /* the line x + y = 16 meets both walls only at that edge, crossing from free (7,8) to free (8,7):
     * the same gap */
    CHECK(!los(t, 6, 10, 3.5, 10, 6, 3.5, &th) && th == 0.5);
    /* x + y = 15 runs through wall (7,7)'s interior from its corner (7,8) on */
    CHECK(!los(t, 5, 10, 3.5, 10, 5, 3.5, &th) && th == 0.4);
    /* x + y = 18 touches wall (8,8) only at its corner edge (9,9), passing free (8,9), (9,9), (9,8): clear */
    CHECK(los(t, 7, 11, 3.5, 11, 7, 3.5, &th));
    CHECK(!los(t, 7.5, 7.5, 1.5, 20.5, 20.5, 1.5, &th) && fabs(th - 0.0) < 1e-12); /* starts in a blocked voxel */
    /* along the face y = 7 of the first wall (sliding): clear */
    CHECK(los(t, 0, 7, 5.5, 7, 7, 5.5, &th));
    /* along the tile face x = 16, from outside the first tile row into the second */
    CHECK(los(t, 16, 0.5, 0.5, 16, 31.5, 0.5, &th));
    /* a wall filling tile (1,0,0)'s x = 16 layer: a segment along the tile face slides along it */
    int w0[3] = {16, 0, 0}, w1[3] = {17, 16, 16};
    add_box(t, &d, w0, w1);
    CHECK(los(t, 16, 0.5, 0.5, 16, 15.5, 15.5, &th));     /* on the face: free voxels at x = 15 */
    CHECK(!los(t, 15.5, 2.5, 2.5, 17.5, 2.5, 2.5, &th) && th == 0.25);
    /* ends exactly on a blocked face and on the map's boundary */
    CHECK(los(t, 10.5, 2.5, 2.5, 16, 2.5, 2.5, &th));
    CHECK(los(t, 10.5, 20.5, 2.5, 32, 20.5, 2.5, &th));
    CHECK(!los(t, 10.5, 20.5, 2.5, 32.5, 20.5, 2.5, &th) && th == 21.5 / 22.0);
    /* points outside the map */
    CHECK(!los(t, -1, 20.5, 2.5, 10.5, 20.5, 2.5, &th) && th == 0.0);
    CHECK(!los(t, 1e300, 0.5, 0.5, 0.5, 0.5, 0.5, &th));
    /* everything above again, against the dense walk, along with random segments */
    long blocked = 0;
    CHECK_EQ_INT(los_agree(t, &d, 3000, &blocked), 0);
    CHECK_EQ_INT(cells_agree(t), 0);
    on_tree_destroy(t);
    free(d.b);
}

/* Segments whose lattice edge crossings are exact (voxel centre to voxel centre along diagonals): the
 * walk settles an edge inside its cell by the voxel entered and an edge on its cell's far side by that
 * voxel and the two beside the edge, without the event machinery. Zero-width gaps at the corners of
 * cells of every size (1, 2, 4, bricks, tiles), then one side of the gap opened (an obstacle), then
 * random sparse scenes against the dense walk, with segments that leave the map. */
static void test_diagonal_edges(void)
{
    static const int offs[] = {8, 6, 5, 12, 16, 4, 2, 1};
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
        on_tree *t;
        dense d;
        scene(4, 2, 2, 1, 0, 1, &t, &d); /* 32 x 32 x 16, empty */
        int o = offs[k];
        int p0[3] = {o - 1, o, 0}, p1[3] = {o, o + 1, 16}, q0[3] = {o, o - 1, 0}, q1[3] = {o + 1, o, 16};
        add_box(t, &d, p0, p1);
        double th, omn[3] = {o, o - 1, 0}, omx[3] = {o + 1, o, 16};
        uint32_t id;
        CHECK(on_ok(on_tree_add_obstacle(t, omn, omx, &id)));
        dense_set(&d, q0, q1, 1);
        /* through the gap between (o-1, o) and (o, o-1), from (o-1, o-1) to (o, o): blocked at the edge */
        CHECK(!los(t, o - 0.5, o - 0.5, 3.25, o + 0.5, o + 0.5, 3.75, &th) && th == 0.5);
        CHECK(!los(t, o + 1.5, o + 1.5, 9.5, o - 1.5, o - 1.5, 9.5, &th) && th == 0.5);
        CHECK(!los(t, o - 0.5, o - 0.5, 2.5, o + 2.5, o + 2.5, 8.5, &th) && th == 1.0 / 6.0);
        if (o + 5 < 32) CHECK(!los(t, o - 0.5, o - 0.5, 0.5, o + 4.5, o + 4.5, 5.5, &th) && th == 0.1);
        if (o >= 2) {
            /* the other diagonal through the same edge enters blocked (o-1, o) across the edge before */
            CHECK(!los(t, o - 1.5, o + 1.5, 3.5, o + 1.5, o - 1.5, 3.5, &th) && th == 1.0 / 6.0);
            /* a parallel diagonal one voxel up passes the corner of (o-1, o) at (o-1, o+1): clear */
            CHECK(los(t, o - 1.5, o + 0.5, 3.5, o + 1.5, o + 3.5, 3.5, &th) && th == 1.0);
        }
        long blocked = 0;
        CHECK_EQ_INT(los_agree(t, &d, 600, &blocked), 0);
        /* one side of the gap opened: the diagonal passes (o, o-1) is free */
        CHECK(on_ok(on_tree_remove_obstacle(t, id)));
        dense_set(&d, q0, q1, 0);
        CHECK(los(t, o - 0.5, o - 0.5, 3.25, o + 0.5, o + 0.5, 3.75, &th) && th == 1.0);
        if (o >= 2) {
            CHECK(los(t, o + 1.5, o + 1.5, 9.5, o - 1.5, o - 1.5, 9.5, &th) && th == 1.0);
            CHECK(!los(t, o - 1.5, o + 1.5, 3.5, o + 1.5, o - 1.5, 3.5, &th) && th == 1.0 / 6.0);
        }
        CHECK_EQ_INT(los_agree(t, &d, 600, &blocked), 0);
        on_tree_destroy(t);
        free(d.b);
    }
    /* random sparse scenes: voxel centre to voxel centre by (s k, s' k, m) and (k, 3k, m), ends often
     * outside the map */
    long blocked = 0, total = 0;
    for (int s = 0; s < 6; s++) {
        on_tree *t;
        dense d;
        int depth = 3 + s % 3;
        scene(depth, 2, 2, 1 + s % 2, 6 + 4 * s, 2, &t, &d);
        CHECK(on_ok(on_tree_los_prepare(t, NULL)));
        long bad = 0;
        for (int i = 0; i < 4000; i++) {
            double a[3], b[3], del[3];
            rand_point(&d, a, 1);
            int kk = 1 + rndi(d.nx / 2), sx = rnd() < 0.5 ? 1 : -1, sy = rnd() < 0.5 ? 1 : -1;
            del[0] = sx * kk;
            del[1] = sy * kk * (i % 3 == 0 ? 3 : 1);
            int mz = rndi(4);
            del[2] = mz == 0 ? 0 : mz == 1 ? del[0] : mz == 2 ? -2 * kk : rndi(2 * kk + 1) - kk;
            int perm = rndi(3); /* which axis plays which part */
            for (int j = 0; j < 3; j++) b[j] = a[j] + del[(j + perm) % 3];
            double th_d = -1, th_t = -1;
            int vd = on_walk_dense(dense_free, &d, a, b, &th_d);
            int vt = on_ok(on_tree_raycast(t, a, b, &th_t));
            blocked += !vd;
            total++;
            if (vd != vt || (!vd && th_d != th_t)) {
                if (bad < 4)
                    fprintf(stderr, "diagonal mismatch: (%g %g %g)->(%g %g %g) dense %d@%.17g tree %d@%.17g\n",
                            a[0], a[1], a[2], b[0], b[1], b[2], vd, th_d, vt, th_t);
                bad++;
            }
        }
        CHECK_EQ_INT(bad, 0);
        on_tree_destroy(t);
        free(d.b);
    }
    CHECK(blocked > total / 5 && blocked < total * 4 / 5);
}

/* Masks off (on_tree_set_los_masks(t, 0)): the built ones are freed, none is built again, line of sight
 * reads the node table and still equals the dense walk, los_prepare refuses; on again: built on use. */
static void test_masks_off(void)
{
    for (int s = 0; s < 3; s++) {
        on_tree *t;
        dense d;
        scene(4 + s, 2, 1, 2, 6 + s, 6, &t, &d);
        long blocked = 0;
        size_t bytes = 0;
        on_tree_stats st;
        CHECK(on_ok(on_tree_los_prepare(t, &bytes)) && bytes > 0);
        on_tree_stats_get(t, &st);
        CHECK(st.los_bytes == bytes && st.los_tiles > 0 && st.los_tiles <= 4);
        on_tree_set_los_masks(t, 0);
        on_tree_stats_get(t, &st);
        CHECK(st.los_bytes == 0 && st.los_tiles == 0);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        CHECK(blocked > 0);
        for (uint32_t i = 0; i < t->ntiles; i++) CHECK(!tile_has_losmap(t, i));
        CHECK(on_tree_los_prepare(t, &bytes) == (ON_FAILURE | ON_INVALID) && bytes == 0);
        on_tree_set_los_masks(t, 1);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        on_tree_stats_get(t, &st);
        CHECK(st.los_bytes > 0 && st.los_bytes == on_tree_losmap_bytes(t, NULL));
        on_tree_destroy(t);
        free(d.b);
    }
}

/* Two losmaps equal field for field and array for array (a build in slices is the one-piece build). */
static int same_losmap(const on_losmap *a, const on_losmap *b)
{
    if (!a || !b) return 0;
    if (a->top != b->top || a->depth != b->depth || a->nnode != b->nnode || a->nbrick != b->nbrick ||
        a->bytes != b->bytes || a->rlevel != b->rlevel || a->box_small != b->box_small)
        return 0;
    for (uint32_t i = 0; i < a->nnode; i++) /* (field by field: the struct has padding) */
        if (a->node[i].any != b->node[i].any || a->node[i].mixed != b->node[i].mixed ||
            a->node[i].base != b->node[i].base)
            return 0;
    if (a->nbrick && memcmp(a->brick, b->brick, a->nbrick * sizeof *a->brick)) return 0;
    for (int j = 0; j < 3; j++)
        if (a->reg[j] != b->reg[j] || a->lo[j] != b->lo[j] || a->hi[j] != b->hi[j]) return 0;
    for (uint32_t L = a->rlevel; L <= a->top; L++)
        if (a->rpath[L] != b->rpath[L]) return 0;
    return 1;
}

/* The tiles (not solid) whose published masks differ from a one-piece build of their contents. */
static long masks_not_whole(const on_tree *t)
{
    long bad = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_tile *tl = &t->tiles[i];
        if (tl->solid) continue;
        on_losmap *one = on_losmap_build(&tl->table, tl->solid, (uint32_t)t->p.depth);
        bad += !same_losmap(atomic_load(&tl->los), one);
        on_losmap_free(one);
    }
    return bad;
}

/* Deferred masks (on_tree_set_los_defer, on_tree_los_step): line of sight builds nothing and gives the
 * dense walk's answers through the node table, marking the tiles it read wanted; steps of a few node
 * reads build the wanted tiles first, resume mid-tile, stop within one node's reads of their limit, and
 * publish losmaps equal to the one-piece build's; an edit abandons a build in progress. */
static void test_deferred_steps(void)
{
    for (int s = 0; s < 4; s++) {
        on_tree *t;
        dense d;
        scene(5 + s % 3, 3, 1 + s % 2, 2, 10 + 3 * s, 9, &t, &d);
        on_tree_set_los_defer(t, 1);
        long blocked = 0;
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        CHECK(blocked > 0);
        for (uint32_t i = 0; i < t->ntiles; i++) CHECK(!tile_has_losmap(t, i));
        on_los_step_info info;
        /* a segment through tile (2, 0, 1) only: that tile is the first built */
        double n = (double)t->n, a[3] = {2 * n + 0.5, 0.5, n + 0.5}, b[3] = {3 * n - 0.5, 0.5, 2 * n - 0.5};
        for (uint32_t i = 0; i < t->ntiles; i++) atomic_store(&t->tiles[i].los_want, 0);
        atomic_store(&t->los_wanted, 0);
        on_tree_visible(t, a, b);
        uint32_t want = on_tile_index(t, 2, 0, 1);
        CHECK(atomic_load(&t->los_wanted) == 1 && atomic_load(&t->tiles[want].los_want) == 1);
        CHECK(on_ok(on_tree_los_step(t, 0, 0, 0, &info)));
        CHECK(info.built == 1 && info.wanted == 0 && !info.partial && tile_has_losmap(t, want));
        for (uint32_t i = 0; i < t->ntiles; i++) CHECK(i == want || !tile_has_losmap(t, i));
        /* the rest in steps of 100 reads: each stops within one node's children's reads (72) of its limit,
         * also in a level-2 node with many mixed bricks (8 reads each, filled one at a time: a step once ran
         * past its limit by up to 72 + 8 x 64 there); and some step does pass its limit (the bound is read) */
        long calls = 0;
        int over = 0;
        uint64_t most = 0;
        do {
            CHECK(on_ok(on_tree_los_step(t, 100, 0, 1, &info)));
            if (info.work > 100 + 72) over++;
            if (info.work > most) most = info.work;
            calls++;
        } while (info.left > 0 && calls < 100000);
        CHECK(over == 0 && calls > (long)t->ntiles);
        CHECK(most > 100);
        CHECK_EQ_INT(masks_not_whole(t), 0);
        CHECK_EQ_INT(cells_agree(t), 0);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        /* an edit in the middle of a tile's build: the build is abandoned and made again from the new
         * contents */
        on_tree_set_los_masks(t, 0);
        on_tree_set_los_masks(t, 1);
        CHECK(on_ok(on_tree_los_step(t, 20, 0, 1, &info)) && info.partial && t->losbuild);
        int lo[3] = {1, 1, 1}, hi[3] = {4, 3, 5};
        add_box(t, &d, lo, hi); /* tile 0 */
        do CHECK(on_ok(on_tree_los_step(t, 300, 0, 1, &info)));
        while (info.left > 0);
        CHECK_EQ_INT(masks_not_whole(t), 0);
        CHECK_EQ_INT(los_agree(t, &d, 1500, &blocked), 0);
        /* masks off: a step is refused */
        on_tree_set_los_masks(t, 0);
        CHECK(on_tree_los_step(t, 0, 0, 1, &info) == (ON_FAILURE | ON_INVALID));
        on_tree_destroy(t);
        free(d.b);
    }
}

/* Segments in one lattice plane (x = 8), which on_tree_visible first walks moved half a voxel into
 * each layer (x = 7.5, then 8.5): clear when either moved one is, else the event walk decides. */
static void test_plane_lanes(void)
{
    on_tree *t;
    dense d;
    scene(4, 1, 1, 1, 0, 1, &t, &d); /* 16 x 16 x 16, empty */
    double th;
    /* layer x = 7 blocked at y = 3, layer x = 8 at y = 9: neither layer is clear from y = 0.5 to 14.5, but
     * each crossing of a y plane keeps a free voxel on one side joined to one after: clear */
    int l0[3] = {7, 3, 0}, l1[3] = {8, 4, 16}, r0[3] = {8, 9, 0}, r1[3] = {9, 10, 16};
    add_box(t, &d, l0, l1);
    add_box(t, &d, r0, r1);
    CHECK(los(t, 8, 0.5, 5.5, 8, 14.5, 5.5, &th) && th == 1.0);
    CHECK(on_walk_dense(dense_free, &d, (double[3]){8, 0.5, 5.5}, (double[3]){8, 14.5, 5.5}, NULL));
    /* one layer clear (x = 7 from y = 4 on): clear by the moved segment */
    CHECK(los(t, 8, 4.5, 5.5, 8, 14.5, 5.5, &th));
    CHECK(los(t, 8, 0.5, 5.5, 8, 8.5, 5.5, &th));
    /* both layers blocked at the same y (y = 12): blocked where the segment enters them, t exact */
    int b0[3] = {7, 12, 0}, b1[3] = {9, 13, 16};
    add_box(t, &d, b0, b1);
    CHECK(!los(t, 8, 10.5, 5.5, 8, 14.5, 5.5, &th) && th == 0.375);
    /* the two layers blocked diagonally across a crossing (x = 7 from y = 3, x = 8 below y = 3 ... here x = 7
     * at y in [3, 4) and x = 8 at y in [2, 3)): a zero-width gap at the edge (8, 3), blocked */
    int g0[3] = {8, 2, 0}, g1[3] = {9, 3, 16};
    add_box(t, &d, g0, g1);
    CHECK(!los(t, 8, 0.5, 5.5, 8, 8.5, 5.5, &th) && th == 0.3125);
    CHECK(!on_walk_dense(dense_free, &d, (double[3]){8, 0.5, 5.5}, (double[3]){8, 8.5, 5.5}, &th) && th == 0.3125);
    long blocked = 0;
    CHECK_EQ_INT(los_agree(t, &d, 4000, &blocked), 0);
    free(d.b);
    on_tree_destroy(t);
}

TEST_MAIN("losmap", {
    test_cells();
    test_popcnt_rank();
    test_bounds();
    test_sparse();
    test_edits();
    test_edges();
    test_diagonal_edges();
    test_plane_lanes();
    test_masks_off();
    test_deferred_steps();
})
