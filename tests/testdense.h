/*
 * testdense.h -- the dense voxel reference the line-of-sight tests compare the tree against: a
 * blocked flag a voxel, boxes added to the tree and the array together, random coordinates inside
 * voxels or on lattice planes, and random box scenes over 2 x 1 x 2 tiles. Include minitest.h,
 * tree.h and testrng.h (with the file's own seed) before it.
 */
#ifndef OCTONAV_TESTDENSE_H
#define OCTONAV_TESTDENSE_H

#include <stdint.h>
#include <stdlib.h>

typedef struct dense {
    int dim[3];
    unsigned char *b; /* 1 = blocked */
} dense;

/* Is voxel (x, y, z) free? Outside the array counts as blocked. (on_walk_dense's callback shape.) */
static int dense_free(const void *ud, int64_t x, int64_t y, int64_t z)
{
    const dense *d = ud;
    if (x < 0 || y < 0 || z < 0 || x >= d->dim[0] || y >= d->dim[1] || z >= d->dim[2]) return 0;
    return !d->b[x + (size_t)d->dim[0] * ((size_t)y + (size_t)d->dim[1] * (size_t)z)];
}

/* Block the voxels [lo, hi) in the tree and in the array. */
static void dense_add_box(on_tree *t, dense *d, const int lo[3], const int hi[3])
{
    double mn[3] = {lo[0], lo[1], lo[2]}, mx[3] = {hi[0], hi[1], hi[2]};
    CHECK(on_ok(on_tree_add_box(t, mn, mx)));
    for (int z = lo[2]; z < hi[2]; z++)
        for (int y = lo[1]; y < hi[1]; y++)
            for (int x = lo[0]; x < hi[0]; x++) d->b[x + (size_t)d->dim[0] * (y + (size_t)d->dim[1] * z)] = 1;
}

/* A coordinate in [0, n]: inside a voxel, or on a lattice plane. */
static double dense_coord(int n, int on_plane) { return on_plane ? (double)rndi(n + 1) : rndi(n) + 0.05 + 0.9 * rnd(); }

/* A tree of 2 x 1 x 2 tiles of `depth` with nboxes random boxes (sides 1 .. n/2 leaves, clipped to
 * the map), and the same scene in *d (the caller frees d->b and destroys the tree). */
static on_tree *dense_scene(int depth, int nboxes, dense *d)
{
    on_tree_params p = {{2, 1, 2}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&p, &t)));
    int n = 1 << depth;
    d->dim[0] = 2 * n, d->dim[1] = n, d->dim[2] = 2 * n;
    d->b = calloc((size_t)d->dim[0] * d->dim[1] * d->dim[2], 1);
    CHECK(d->b != NULL);
    for (int i = 0; i < nboxes; i++) {
        int lo[3], hi[3];
        for (int j = 0; j < 3; j++) {
            lo[j] = rndi(d->dim[j]);
            hi[j] = lo[j] + 1 + rndi(n / 2);
            if (hi[j] > d->dim[j]) hi[j] = d->dim[j];
        }
        dense_add_box(t, d, lo, hi);
    }
    return t;
}

#endif
