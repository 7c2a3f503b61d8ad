/*
 * test_celladj.c -- the tiles' cell adjacencies (celladj.h) against the tree's neighbour walk: for every
 * free cell of every tile, its list (border faces walked in the tree; with a chain of ancestors kept
 * from the cell before and without, and compiled for the baseline x86-64 as well as for popcnt and BMI:
 * isaclone.h) gives the walk's cells in the walk's order, each entry's number
 * that of its code (on_celladj_codes), on box scenes of several tiles and depths, on voxel maps whose bounds cut the tiles, on
 * a face of 512 one-leaf neighbours; each cell's number is found back from its code, once each, and
 * the numbers that name a cell are as many as the free cells; its bytes are 3 a stored node above
 * layer 1 and none at layer 1 (their leaves are read from the node table); built again from a copy of
 * the tile's table (a streamer worker's build, on_celladj_build) it is the same, byte for byte; under
 * the tree's own bytes on every scene with more than a few boxes; edits, obstacles,
 * clear_tile and unloading drop the edited tile's adjacency only (salt changed -> built again, and
 * right again), a border face sees its neighbour tile's edits without a rebuild; searches over the
 * adjacency and over the walk (t->no_cell_adj) give the same paths and counts. With ../shared/data
 * present, every list of the Simple, Complex, DC1 and A1 maps (DC1 and A1: two tiles, a border between
 * them) too, their bytes within the tree's (Simple, a 1.4 KB tree: 5.7 times), and copies of a map's
 * first tile's adjacency with one bit wrong are each caught.
 */
#include "octonav.h"
#include "celladj.h"
#include "minitest.h"
#include "tree.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TESTRNG_SEED 0x9E3779B97F4A7C15ull
#include "testrng.h"

static on_tree *tree(int tx, int ty, int tz, int depth)
{
    on_tree_params p = {{tx, ty, tz}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    return t;
}

static void box(on_tree *t, double x0, double y0, double z0, double x1, double y1, double z1)
{
    double a[3] = {x0, y0, z0}, b[3] = {x1, y1, z1};
    CHECK(on_ok(on_tree_add_box(t, a, b)));
}

static void random_boxes(on_tree *t, int nboxes, int maxside)
{
    int ext[3] = {t->p.tiles[0] * t->n, t->p.tiles[1] * t->n, t->p.tiles[2] * t->n};
    for (int i = 0; i < nboxes; i++) {
        double lo[3], hi[3];
        for (int j = 0; j < 3; j++) {
            lo[j] = rndi(ext[j]);
            hi[j] = lo[j] + 1 + rndi(maxside);
        }
        box(t, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
    }
}

typedef struct walk_ctx {
    const on_tree *t;
    const on_celladj *a;
    uint32_t tile;
    uint32_t *codes;  /* the adjacency's cells by number (on_celladj_codes) */
    uint8_t *seen;    /* numbers met */
    on_adjchain chain;
    on_adjchain lchain[3]; /* (the search's bodies' check: on_celladj_list's, and each body's own) */
    long bad, cells, entries;
    on_cell *w, *x, *y;
    uint8_t *wf, *xf, *yf;
    uint32_t *xi, *yi;
    size_t cap;
} walk_ctx;

/* Cell c's list (border entries walked in the tree) into k->y: the count, or -1. */
static long full_list(walk_ctx *k, on_cell c, on_adjchain *ch, int bits)
{
    long m = on_celladj_list_isa(bits, k->a, ch, c.tile, c.code, 63u, k->x, k->xi, k->xf, k->cap, NULL);
    if (m < 0 || (size_t)m > k->cap) return -1;
    size_t ny = 0;
    for (long j = 0; j < m; j++) {
        if (k->xi[j] == ON_ADJ_BORDER) {
            size_t nf;
            if (k->x[j].code != c.code || k->x[j].tile != c.tile) return -1;
            if (!on_ok(on_tree_neighbors_face(k->t, NULL, c, k->xf[j], k->y + ny, NULL, k->cap - ny, &nf))) return -1;
            ny += nf;
            continue;
        }
        /* an entry in the tile: its number is its code's */
        if (k->xi[j] >= k->a->n || k->codes[k->xi[j]] != k->x[j].code || k->x[j].tile != c.tile) return -1;
        if (ny < k->cap) k->y[ny++] = k->x[j];
    }
    k->entries += m;
    return (long)ny;
}

/* One free cell: its number, found back from its code (once each), and its list (with the chain and
 * without) against the walk. */
static int check_cell(void *ud, on_cell c, int blocked)
{
    walk_ctx *k = ud;
    if (blocked) return 0;
    const on_celladj *a = k->a;
    k->cells++;
    uint32_t i = on_celladj_find(a, c.code);
    if (i >= a->n || k->seen[i] || k->codes[i] != c.code) {
        k->bad++;
        return 0;
    }
    k->seen[i] = 1;
    size_t nw = 0;
    if (!on_ok(on_tree_neighbors_cached(k->t, NULL, c, k->w, k->wf, k->cap, &nw))) {
        k->bad++;
        return 0;
    }
    for (int pass = 0; pass < 3; pass++) { /* (pass 2: the baseline instructions' build, isaclone.h) */
        long ny = full_list(k, c, pass == 1 ? &k->chain : NULL, pass != 2);
        int same = ny >= 0 && (size_t)ny == nw;
        for (size_t j = 0; same && j < nw; j++) same = k->w[j].tile == k->y[j].tile && k->w[j].code == k->y[j].code;
        if (!same) k->bad++;
    }
    /* the search's bodies (on_celladj_lister_for: this CPU's clone, with pext and pdep where they are
     * fast), with numbers and without, each over its own chain, against on_celladj_list's: the same codes,
     * faces and numbers (their tiles are left unset) */
    long m = on_celladj_list(a, &k->lchain[0], c.tile, c.code, 63u, k->x, k->xi, k->xf, k->cap, NULL);
    for (int numbers = 1; numbers >= 0; numbers--) {
        long ml = on_celladj_lister_for(numbers)(a, &k->lchain[1 + numbers], c.tile, c.code, 63u, k->y,
                                                 numbers ? k->yi : NULL, k->yf, k->cap, NULL);
        int same = ml == m && m >= 0 && (size_t)m <= k->cap;
        for (long j = 0; same && j < m; j++)
            same = k->y[j].code == k->x[j].code && k->yf[j] == k->xf[j] && (!numbers || k->yi[j] == k->xi[j]);
        if (!same) k->bad++;
    }
    return 0;
}

/* Tile ti's cells and lists in adjacency a against the walk (k's buffers ready): the mismatches are
 * added to k->bad; -1 on allocation failure. */
static int check_tile(walk_ctx *k, const on_celladj *a, uint32_t ti)
{
    k->a = a;
    k->tile = ti;
    k->chain.code = ON_CODE_NONE;
    for (int i = 0; i < 3; i++) k->lchain[i].code = ON_CODE_NONE;
    k->codes = malloc(a->n * sizeof *k->codes);
    k->seen = calloc(a->n, 1);
    if (!k->codes || !k->seen || on_celladj_codes(a, k->codes)) return -1;
    long before = k->cells, named = 0;
    for (uint32_t i = 0; i < a->n; i++) named += k->codes[i] != ON_CODE_NONE;
    on_tree_visit_tile(k->t, ti, check_cell, k);
    if (k->cells - before != (long)a->ncell || named != (long)a->ncell) k->bad++;
    free(k->codes);
    free(k->seen);
    k->codes = NULL;
    k->seen = NULL;
    return 0;
}

/* Every tile's adjacency against the walk: the mismatches (cells in the wrong place, lists that differ).
 * *cells and *entries (may be NULL) get the totals. */
static long check_tree(const on_tree *t, long *cells, long *entries)
{
    walk_ctx k;
    memset(&k, 0, sizeof k);
    k.t = t;
    k.cap = 4096;
    k.w = malloc(k.cap * sizeof *k.w);
    k.x = malloc(k.cap * sizeof *k.x);
    k.y = malloc(k.cap * sizeof *k.y);
    k.xi = malloc(k.cap * sizeof *k.xi);
    k.wf = malloc(k.cap);
    k.xf = malloc(k.cap);
    k.yi = malloc(k.cap * sizeof *k.yi);
    k.yf = malloc(k.cap);
    if (!k.w || !k.x || !k.y || !k.xi || !k.wf || !k.xf || !k.yi || !k.yf) return -1;
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        const on_celladj *a = on_tile_celladj(t, ti);
        if (t->tiles[ti].solid || !t->tiles[ti].loaded) {
            if (a) k.bad++;
            continue;
        }
        if (!a) {
            k.bad++;
            continue;
        }
        if (check_tile(&k, a, ti) < 0) return -1;
        if (a->bytes != sizeof *a + (a->nup + 7) / 8 * sizeof(on_adjgrp)) k.bad++; /* (none at layer 1) */
        /* built again off the tree (a worker's build: from a copy of the tile's table), the same bytes */
        on_table copy;
        on_table_init(&copy);
        if (on_table_copy(&t->tiles[ti].table, &copy) != 0) return -1;
        on_celladj *b = on_celladj_build(t, ti, &copy);
        if (!b) return -1;
        if (b->n != a->n || b->ncell != a->ncell || b->nnode != a->nnode || b->nup != a->nup || b->lbase != a->lbase ||
            b->root != a->root || b->border != a->border || b->bytes != a->bytes ||
            (a->nup && memcmp(a->grp, b->grp, (a->nup + 7) / 8 * sizeof *a->grp) != 0))
            k.bad++;
        on_celladj_free(b);
        on_table_free(&copy);
    }
    free(k.w);
    free(k.x);
    free(k.y);
    free(k.xi);
    free(k.wf);
    free(k.xf);
    free(k.yi);
    free(k.yf);
    if (cells) *cells = k.cells;
    if (entries) *entries = k.entries;
    return k.bad;
}

static const on_celladj *adj_of(const on_tree *t, uint32_t tile)
{
    return atomic_load(&t->tiles[tile].adj);
}

static void test_box_scenes(void)
{
    static const int scenes[][6] = {
        /* tiles x, y, z, depth, boxes, max side */
        {1, 1, 1, 1, 1, 1}, {1, 1, 1, 3, 6, 3}, {2, 1, 2, 4, 40, 6}, {3, 2, 2, 5, 120, 12}, {2, 2, 2, 6, 200, 20},
    };
    for (size_t s = 0; s < sizeof scenes / sizeof scenes[0]; s++) {
        on_tree *t = tree(scenes[s][0], scenes[s][1], scenes[s][2], scenes[s][3]);
        random_boxes(t, scenes[s][4], scenes[s][5]);
        long cells = 0, entries = 0;
        CHECK_EQ_INT(check_tree(t, &cells, &entries), 0);
        CHECK(cells > 0 && entries > 0);
        size_t tiles = 0, bytes = on_tree_celladj_bytes(t, &tiles);
        size_t nfree = 0;
        for (uint32_t i = 0; i < t->ntiles; i++) nfree += !t->tiles[i].solid;
        CHECK_EQ_INT(tiles, nfree);
        on_tree_stats st;
        on_tree_stats_get(t, &st);
        if (s >= 3) CHECK(bytes < st.bytes); /* (3 bytes a stored node above layer 1; the table holds 5.6) */
        on_tree_destroy(t);
    }
    /* a wholly free tile is one cell: its entries are its border faces with a tile beyond */
    on_tree *t = tree(3, 1, 1, 4);
    const on_celladj *a = on_tile_celladj(t, 1);
    on_cell out[8];
    uint32_t ix[8];
    uint8_t fc[8];
    CHECK(a && a->n == 1 && a->nnode == 0);
    CHECK_EQ_INT(a ? on_celladj_list(a, NULL, 1, on_root_code(t), 63u, out, ix, fc, 8, NULL) : -1, 2);
    CHECK(ix[0] == ON_ADJ_BORDER && fc[0] == 0 && ix[1] == ON_ADJ_BORDER && fc[1] == 1);
    a = on_tile_celladj(t, 0); /* (the map's edge on -x: no entry there) */
    CHECK_EQ_INT(a ? on_celladj_list(a, NULL, 0, on_root_code(t), 63u, out, ix, fc, 8, NULL) : -1, 1);
    CHECK(ix[0] == ON_ADJ_BORDER && fc[0] == 1);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    /* a solid tile has none, and the neighbours beyond a border face follow it without a rebuild */
    const on_celladj *a0 = on_tile_celladj(t, 0);
    box(t, 16, 0, 0, 32, 16, 16);
    CHECK(t->tiles[1].solid);
    CHECK(on_tile_celladj(t, 1) == NULL);
    CHECK(adj_of(t, 0) == a0); /* tile 0 unchanged: kept */
    on_cell c0 = {0, on_root_code(t)};
    size_t n = 9;
    CHECK(on_ok(on_tree_neighbors_face(t, NULL, c0, 1, out, NULL, 8, &n)));
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    CHECK(on_celladj_find(a0, on_code_make(0, 0, 0, 3)) == ON_ADJ_NONE); /* no cell: a part of one */
    CHECK(on_tree_neighbors_face(t, NULL, c0, 6, out, NULL, 8, &n) == (ON_FAILURE | ON_INVALID));
    on_tree_destroy(t);
}

/* A 32-leaf free cube whose +x face meets 512 one-leaf cells (a checkerboard slab): a list longer than
 * the search's first neighbour buffer. */
static void test_large_face(void)
{
    on_tree *t = tree(1, 1, 1, 6);
    for (int z = 0; z < 32; z++)
        for (int y = 0; y < 32; y++)
            if ((y + z) % 2 == 0) box(t, 32, y, z, 33, y + 1, z + 1);
    box(t, 33, 0, 0, 64, 32, 32);
    const on_celladj *a = on_tile_celladj(t, 0);
    uint32_t i = a ? on_celladj_find(a, on_code_make(0, 0, 0, 5)) : ON_ADJ_NONE;
    CHECK(i != ON_ADJ_NONE);
    on_cell *out = malloc(600 * sizeof *out);
    uint32_t *ix = malloc(600 * sizeof *ix);
    uint8_t *fc = malloc(600);
    CHECK(out && ix && fc);
    if (a && out && ix && fc) {
        CHECK_EQ_INT(on_celladj_list(a, NULL, 0, on_code_make(0, 0, 0, 5), 2u, out, ix, fc, 8, NULL), 512);
        CHECK_EQ_INT(on_celladj_list(a, NULL, 0, on_code_make(0, 0, 0, 5), 2u, out, ix, fc, 600, NULL), 512);
        CHECK(out[0].code == on_code_make(32, 1, 0, 0) && fc[0] == 1 && fc[511] == 1); /* ((32, 0, 0) is blocked) */
    }
    free(out);
    free(ix);
    free(fc);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    /* a search through the slab: the same path and counts over the walk */
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    double a0[3] = {5.5, 20.5, 20.5}, b0[3] = {32.5, 3.5, 4.5}, p1[64 * 3], p2[64 * 3];
    size_t n1 = 0, n2 = 0;
    on_query_info i1, i2;
    on_status s1 = on_query_find(q, a0, b0, NULL, p1, 64, &n1, &i1);
    t->no_cell_adj = 1;
    on_status s2 = on_query_find(q, a0, b0, NULL, p2, 64, &n2, &i2);
    t->no_cell_adj = 0;
    CHECK(on_ok(s1) && s1 == s2 && n1 == n2 && n1 >= 2);
    CHECK(n1 == n2 && !memcmp(p1, p2, n1 * 3 * sizeof *p1));
    CHECK(i1.expansions == i2.expansions && i1.neighbors == i2.neighbors && i1.visited == i2.visited);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* A voxel map whose size cuts its tiles (the table's bounds): beyond reads as blocked. */
static void test_voxmap(void)
{
    on_voxmap vm = {45, 20, 37, 0, NULL};
    size_t cap = 3000;
    vm.xyz = malloc(3 * cap * sizeof *vm.xyz);
    if (!vm.xyz) return;
    for (size_t i = 0; i < cap; i++) {
        vm.xyz[3 * i] = (uint16_t)rndi(vm.w);
        vm.xyz[3 * i + 1] = (uint16_t)rndi(vm.h);
        vm.xyz[3 * i + 2] = (uint16_t)rndi(vm.d);
    }
    vm.count = cap;
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_from_voxmap(&vm, 4, &t)));
    free(vm.xyz);
    if (!t) return;
    CHECK_EQ_INT(t->ntiles, 3 * 2 * 3);
    long cells = 0;
    CHECK_EQ_INT(check_tree(t, &cells, NULL), 0);
    CHECK(cells > 1000);
    on_tree_destroy(t);
}

/* Every change to a tile's contents drops its adjacency alone; built again, it is right again. */
static void test_edits(void)
{
    on_tree *t = tree(2, 2, 1, 5);
    random_boxes(t, 60, 8);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    const on_celladj *keep[4];
    for (uint32_t i = 0; i < 4; i++) keep[i] = adj_of(t, i);
    uint32_t salt = t->tiles[0].salt;
    box(t, 3, 3, 3, 9, 5, 7); /* inside tile 0 */
    CHECK(t->tiles[0].salt != salt);
    CHECK(adj_of(t, 0) == NULL);
    for (uint32_t i = 1; i < 4; i++) CHECK(adj_of(t, i) == keep[i]);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    uint32_t id = 0;
    double lo[3] = {30, 10, 2}, hi[3] = {35, 12, 30}; /* an obstacle over tiles 0 and 1 */
    keep[2] = adj_of(t, 2);
    CHECK(on_ok(on_tree_add_obstacle(t, lo, hi, &id)));
    CHECK(adj_of(t, 0) == NULL && adj_of(t, 1) == NULL && adj_of(t, 2) == keep[2]);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    CHECK(on_ok(on_tree_remove_obstacle(t, id)));
    CHECK(adj_of(t, 0) == NULL && adj_of(t, 1) == NULL);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    CHECK(on_ok(on_tree_clear_tile(t, 3)));
    CHECK(adj_of(t, 3) == NULL);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0);
    const on_celladj *a3 = on_tile_celladj(t, 3);
    CHECK(a3 && a3->n == 1); /* cleared: one free cell */
    on_tree_unload_tile(t, 2);
    CHECK(adj_of(t, 2) == NULL && on_tile_celladj(t, 2) == NULL);
    CHECK_EQ_INT(check_tree(t, NULL, NULL), 0); /* (border faces towards the unloaded tile: nothing) */
    t->no_cell_adj = 1;
    CHECK(on_tile_celladj(t, 2) == NULL);
    size_t bytes = 1;
    CHECK(on_tree_adjacency_prepare(t, &bytes) == (ON_FAILURE | ON_INVALID) && bytes == 0);
    t->no_cell_adj = 0;
    CHECK(on_ok(on_tree_adjacency_prepare(t, &bytes)) && bytes == on_tree_celladj_bytes(t, NULL));
    on_tree_destroy(t);
}

/* Searches over the adjacency and over the walk: the same results, counts and paths; and a search
 * sliced across an edit of a tile it read is stale, as before. */
static void test_searches(void)
{
    on_tree *t = tree(2, 1, 2, 5);
    random_boxes(t, 150, 10);
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    double p1[512 * 3], p2[512 * 3];
    int found = 0, differ = 0;
    for (int k = 0; k < 200; k++) {
        double a[3] = {rnd() * 64, rnd() * 32, rnd() * 64}, b[3] = {rnd() * 64, rnd() * 32, rnd() * 64};
        size_t n1 = 0, n2 = 0;
        on_query_info i1, i2;
        on_status s1 = on_query_find(q, a, b, NULL, p1, 512, &n1, &i1);
        t->no_cell_adj = 1;
        on_status s2 = on_query_find(q, a, b, NULL, p2, 512, &n2, &i2);
        t->no_cell_adj = 0;
        found += on_ok(s1) && i1.expansions > 0;
        if (s1 != s2 || n1 != n2 || memcmp(p1, p2, n1 * 3 * sizeof *p1) || i1.expansions != i2.expansions ||
            i1.neighbors != i2.neighbors || i1.visited != i2.visited)
            differ++;
    }
    CHECK(found > 50);
    CHECK_EQ_INT(differ, 0);
    /* sliced: an edit between slices drops the adjacency the search read; the search is stale */
    int stale = 0;
    for (int k = 0; k < 50 && !stale; k++) {
        double a[3] = {rnd() * 64, rnd() * 32, rnd() * 64}, b[3] = {rnd() * 64, rnd() * 32, rnd() * 64};
        if (on_query_init(q, a, b, NULL) != ON_IN_PROGRESS) continue;
        size_t done = 0;
        if (on_query_update(q, 3, &done) != ON_IN_PROGRESS) continue;
        on_cell sc;
        if (!on_ok(on_tree_locate(t, a, &sc))) continue;
        int ijk[3];
        on_tree_tile_coords(t, sc.tile, ijk);
        box(t, ijk[0] * 32 + 31, ijk[1] * 32 + 31, ijk[2] * 32 + 31, ijk[0] * 32 + 32, ijk[1] * 32 + 32,
            ijk[2] * 32 + 32);
        CHECK(adj_of(t, sc.tile) == NULL);
        stale = on_query_update(q, (size_t)-1, &done) == (ON_FAILURE | ON_STALE);
    }
    CHECK(stale);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* Tile ti's adjacency a with one bit of its shape flipped (bit `bit` of node nd's byte in sub, or in
 * blk when blk is set): the mismatches of its lists against the walk (-1 on allocation failure). */
static long flipped(const on_tree *t, uint32_t ti, const on_celladj *a, uint32_t nd, unsigned bit, int blk)
{
    on_celladj c = *a;
    size_t ng = (a->nup + 7) / 8;
    c.grp = malloc(ng * sizeof *c.grp);
    if (!c.grp) return -1;
    memcpy(c.grp, a->grp, ng * sizeof *c.grp);
    uint64_t m = 1ull << (8u * (nd & 7u) + bit);
    if (blk) c.grp[nd / 8].blk ^= m;
    else c.grp[nd / 8].sub ^= m;
    walk_ctx k;
    memset(&k, 0, sizeof k);
    k.t = t;
    k.cap = 4096;
    k.w = malloc(k.cap * sizeof *k.w);
    k.x = malloc(k.cap * sizeof *k.x);
    k.y = malloc(k.cap * sizeof *k.y);
    k.xi = malloc(k.cap * sizeof *k.xi);
    k.wf = malloc(k.cap);
    k.xf = malloc(k.cap);
    k.yi = malloc(k.cap * sizeof *k.yi);
    k.yf = malloc(k.cap);
    long bad = -1;
    if (k.w && k.x && k.y && k.xi && k.wf && k.xf && k.yi && k.yf && check_tile(&k, &c, ti) == 0) bad = k.bad;
    free(k.w);
    free(k.x);
    free(k.y);
    free(k.xi);
    free(k.wf);
    free(k.xf);
    free(k.yi);
    free(k.yf);
    free(c.grp);
    return bad;
}

/* A Warframe map's every list against the walk (skipped when the data is absent); then `flips` copies
 * of its first tile's adjacency, each with the blocked bit of a free child of a stored node set (one
 * bit wrong: a cell lost, the numbers after it shifted), must each differ from the walk somewhere. */
static void test_real_map(const char *name, long min_cells, double max_ratio, int flips)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "../shared/data/voxel/%s.3dmap", name);
    on_voxmap vm;
    if (!on_ok(on_voxmap_read(path, &vm, err, sizeof err))) {
        printf("celladj: %s skipped (%s)\n", name, err);
        return;
    }
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_from_voxmap(&vm, 9, &t)));
    on_voxmap_free(&vm);
    if (!t) return;
    long cells = 0;
    CHECK_EQ_INT(check_tree(t, &cells, NULL), 0);
    CHECK(cells >= min_cells);
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    printf("celladj: %s adjacency %zu bytes, tree %zu (%.2f)\n", name, st.adj_bytes, st.bytes,
           (double)st.adj_bytes / (double)st.bytes);
    /* (issue 31: within the tree's bytes; A1 held 1.91x, Complex 1.08x. Simple's tree is 1.4 KB: its
     * bounds' nodes above layer 1 hold 8 KB, 5.65x, 13.15x before) */
    CHECK((double)st.adj_bytes <= max_ratio * (double)st.bytes);
    const on_celladj *a = adj_of(t, 0);
    CHECK(a && a->nup > 0);
    for (int f = 0; a && a->nup && f < flips; f++) {
        uint32_t nd;
        unsigned bit;
        do { /* (a free child: a blocked one read as free may lie out of reach of every cell, e.g. beyond
              * the map's bounds; a stored one read as blocked, in a pocket) */
            nd = (uint32_t)rndi((int)a->nup);
            bit = (unsigned)rndi(8);
        } while (((a->grp[nd / 8].sub | a->grp[nd / 8].blk) >> (8u * (nd & 7u) + bit)) & 1u);
        long bad = flipped(t, 0, a, nd, bit, 1);
        if (bad <= 0) printf("celladj: %s node %u: a flipped bit went unseen (%ld)\n", name, nd, bad);
        CHECK(bad > 0);
    }
    on_tree_destroy(t);
}

TEST_MAIN("celladj", {
    test_box_scenes();
    test_large_face();
    test_voxmap();
    test_edits();
    test_searches();
    test_real_map("Simple", 29406, 5.7, 24);
    test_real_map("Complex", 105777, 1.0, 4);
    test_real_map("DC1", 337672, 1.0, 2);
    test_real_map("A1", 656655, 1.0, 2);
})
