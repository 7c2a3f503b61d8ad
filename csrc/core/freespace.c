/*
 * freespace.c -- questions and edits about the free space around a point of a tree: the nearest free
 * point to a blocked one (what a search reports for a blocked endpoint), and the flood fill that
 * blocks the free region face-connected to a point (on_tree_fill).
 */
#include "tree.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Is c still a free cell of t (not blocked or merged since it was queued)? */
static int cell_still_free(const on_tree *t, on_cell c)
{
    int64_t m[3];
    on_cell now;
    on_tree_cell_nav(t, c, m, NULL);
    return on_tree_leaf_free(t, m[0], m[1], m[2], &now) && now.tile == c.tile && now.code == c.code;
}

/* Breadth-first over free cells, blocking each as it is taken: blocked cells are never neighbours,
 * so no visited set is needed (a cell queued twice is found already blocked and skipped). */
on_status on_tree_fill(on_tree *t, const double p[3], size_t *blocked_cells)
{
    if (blocked_cells) *blocked_cells = 0;
    on_cell start;
    on_status s = on_tree_locate(t, p, &start);
    if (!on_ok(s)) return s;
    size_t qcap = 1024, head = 0, tail = 0, nbcap = 256, done = 0;
    on_cell *q = malloc(qcap * sizeof *q), *nb = malloc(nbcap * sizeof *nb);
    if (!q || !nb) {
        free(q);
        free(nb);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    on_status rc = ON_SUCCESS;
    q[tail++] = start;
    while (head < tail) {
        on_cell c = q[head++];
        if (!cell_still_free(t, c)) continue;
        size_t n;
        for (;;) {
            on_status ns = on_tree_neighbors(t, c, nb, NULL, nbcap, &n);
            if (on_ok(ns)) break;
            if (on_grow((void **)&nb, &nbcap, n, sizeof *nb)) {
                rc = ON_FAILURE | ON_NO_MEMORY;
                goto out;
            }
        }
        on_tree_block_cell(t, c);
        done++;
        /* compact the consumed front of the queue before growing it */
        if (tail + n > qcap && head > 0) {
            memmove(q, q + head, (tail - head) * sizeof *q);
            tail -= head;
            head = 0;
        }
        if (on_grow((void **)&q, &qcap, tail + n, sizeof *q)) {
            rc = ON_FAILURE | ON_NO_MEMORY;
            goto out;
        }
        memcpy(q + tail, nb, n * sizeof *nb);
        tail += n;
    }
out:
    free(q);
    free(nb);
    if (blocked_cells) *blocked_cells = done;
    return rc;
}

/* ---- nearest free point ---------------------------------------------------------------------- */

/* The Chebyshev distance, in voxels, from voxel coordinate c to the nearest and to the farthest voxel
 * of the grid's range [0, g) along one axis. */
static int64_t axis_near(int64_t c, int64_t g) { return c < 0 ? -c : c >= g ? c - (g - 1) : 0; }
static int64_t axis_far(int64_t c, int64_t g) { return c > g - 1 - c ? c : g - 1 - c; }

/* Shells of voxels around p's voxel, nearest shell first, stopping once a whole shell lies farther
 * than the best point found: the answer is exact (the closest point of the closest free voxel), and
 * a point a little inside free space usually finds it in the first shell or two. Only the voxels of
 * the tile grid are visited (outside it nothing is free): the shells start at the first one reaching
 * the grid and end at the last, and each walks only its part inside the grid, so the work is bounded
 * by the grid's voxels however far p lies or however large the radius. */
on_status on_tree_nearest_free(const on_tree *t, const double p[3], double radius_leaves, double out[3])
{
    double n[3];
    on_to_nav(t, p, n);
    for (int k = 0; k < 3; k++)
        if (!isfinite(n[k]) || fabs(n[k]) > 1e15) return ON_FAILURE | ON_INVALID;
    if (!(radius_leaves >= 0)) return ON_FAILURE | ON_INVALID;
    int64_t c[3] = {(int64_t)floor(n[0]), (int64_t)floor(n[1]), (int64_t)floor(n[2])};
    int64_t g[3], rmin = 0, rmax = 0;
    for (int k = 0; k < 3; k++) {
        g[k] = (int64_t)t->n * t->p.tiles[k];
        int64_t a = axis_near(c[k], g[k]), b = axis_far(c[k], g[k]);
        if (a > rmin) rmin = a;
        if (b > rmax) rmax = b;
    }
    int64_t R = radius_leaves >= (double)rmax ? rmax : (int64_t)radius_leaves;
    double best = INFINITY, bp[3] = {0, 0, 0};
    for (int64_t r = rmin; r <= R; r++) {
        if ((double)(r - 1) > best) break; /* every voxel of this shell is farther than the best */
        int64_t lo[3], hi[3];
        for (int k = 0; k < 3; k++) { /* the shell's cube cut to the grid */
            lo[k] = -c[k] > -r ? -c[k] : -r;
            hi[k] = g[k] - 1 - c[k] < r ? g[k] - 1 - c[k] : r;
        }
        for (int64_t dz = lo[2]; dz <= hi[2]; dz++)
            for (int64_t dy = lo[1]; dy <= hi[1]; dy++) {
                int face = llabs(dz) == r || llabs(dy) == r; /* else only dx = -r and dx = r are on the shell */
                for (int64_t dx = face ? lo[0] : -r; dx <= hi[0]; dx += face ? 1 : 2 * r) {
                    if (dx < lo[0]) continue;
                    int64_t v[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
                    if (!on_tree_leaf_free(t, v[0], v[1], v[2], NULL)) continue;
                    double q[3];
                    for (int k = 0; k < 3; k++) {
                        /* the voxel's closest point, kept a hair inside so it locates as free */
                        double vlo = (double)v[k] + 1e-3, vhi = (double)v[k] + 1 - 1e-3;
                        q[k] = fmin(fmax(n[k], vlo), vhi);
                    }
                    double d = on_dist3(q, n);
                    if (d < best) {
                        best = d;
                        memcpy(bp, q, sizeof q);
                    }
                }
            }
    }
    if (!isfinite(best)) return ON_FAILURE | ON_UNREACHABLE;
    on_to_world(t, bp, out);
    return ON_SUCCESS;
}
