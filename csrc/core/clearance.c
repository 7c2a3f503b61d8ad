/*
 * clearance.c -- room for an agent of radius R leaves in a point's tree (clearance.h): whether a box of
 * leaves is all free, whether a cube is usable at R, and line of sight for a sphere. Each walks the node
 * tables of the tiles the box (or the segment's box grown by R) touches, descending only the stored
 * nodes that meet it, and stops at the first blocked cube found.
 */
#include "clearance.h"

#include <math.h>

/* ---- boxes of leaves ------------------------------------------------------------------------------- */

/* Node `code` (value v >= 0: stored) of tile ti, against the tile-local box lo..hi-1: 1 when every leaf
 * of the box inside the node is free. */
static int node_box_free(const on_tree *t, on_lcache *lc, uint32_t ti, uint32_t code, int v, const int64_t lo[3],
                         const int64_t hi[3])
{
    uint32_t layer = on_code_layer(code);
    int64_t cs = (int64_t)1 << (layer - 1);
    for (unsigned i = 0; i < 8; i++) {
        uint32_t cc = on_code_child(code, i);
        int64_t m[3] = {on_code_x(cc), on_code_y(cc), on_code_z(cc)};
        int meets = 1;
        for (int k = 0; k < 3; k++) meets &= m[k] < hi[k] && m[k] + cs > lo[k];
        if (!meets) continue;
        if (v & (1 << i)) return 0;
        if (layer == 1) continue;
        int cv = on_lcache_lookup(t, lc, ti, cc);
        if (cv >= 0 && !node_box_free(t, lc, ti, cc, cv, lo, hi)) return 0;
    }
    return 1;
}

void on_tree_set_border_free(on_tree *t, int on) { t->border_free = on != 0; }

int on_tree_box_free(const on_tree *t, on_lcache *lc, const int64_t lo_in[3], const int64_t hi_in[3])
{
    int64_t n = t->n, a[3], b[3], lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = lo_in[k];
        hi[k] = hi_in[k];
        if (t->border_free) { /* outside the grid is free: only the part inside counts */
            if (lo[k] < 0) lo[k] = 0;
            if (hi[k] > n * t->p.tiles[k]) hi[k] = n * t->p.tiles[k];
        }
    }
    for (int k = 0; k < 3; k++)
        if (hi[k] <= lo[k]) return 1;
    for (int k = 0; k < 3; k++) {
        if (lo[k] < 0 || hi[k] > n * t->p.tiles[k]) return 0;
        a[k] = lo[k] / n;
        b[k] = (hi[k] - 1) / n;
    }
    for (int64_t k = a[2]; k <= b[2]; k++)
        for (int64_t j = a[1]; j <= b[1]; j++)
            for (int64_t i = a[0]; i <= b[0]; i++) {
                uint32_t ti = on_tile_index(t, (int)i, (int)j, (int)k);
                const on_tile *tl = &t->tiles[ti];
                if (tl->solid || !tl->loaded) return 0;
                int v = on_lcache_lookup(t, lc, ti, on_root_code(t));
                if (v < 0) continue; /* wholly free */
                int64_t org[3] = {i * n, j * n, k * n}, l[3], h[3];
                for (int c = 0; c < 3; c++) {
                    l[c] = lo[c] - org[c];
                    h[c] = hi[c] - org[c];
                }
                if (!node_box_free(t, lc, ti, on_root_code(t), v, l, h)) return 0;
            }
    return 1;
}

int on_tree_cube_clear(const on_tree *t, on_lcache *lc, const int64_t m[3], int64_t s, int64_t R)
{
    int64_t lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = m[k] - R;
        hi[k] = m[k] + s + R;
    }
    return on_tree_box_free(t, lc, lo, hi);
}

int64_t on_tree_leaf_clearance(const on_tree *t, on_lcache *lc, const int64_t x[3], int64_t cap)
{
    if (!on_tree_cube_clear(t, lc, x, 1, 0)) return -1;
    int64_t r = 0;
    while (r < cap && on_tree_cube_clear(t, lc, x, 1, r + 1)) r++;
    return r;
}

/* ---- line of sight for a sphere ---------------------------------------------------------------------- */

typedef struct seg {
    double a[3], d[3];
    double R;
} seg;

/* Does the segment meet the open interior of the box lo..hi? (slabs; an axis the segment does not move
 * along must lie strictly inside) */
static int seg_meets_open(const seg *s, const double lo[3], const double hi[3])
{
    double t0 = 0, t1 = 1; /* (the segment's closed [0, 1] against each axis's open (u, w)) */
    for (int k = 0; k < 3; k++) {
        if (s->d[k] == 0) {
            if (!(s->a[k] > lo[k] && s->a[k] < hi[k])) return 0;
            continue;
        }
        double u = (lo[k] - s->a[k]) / s->d[k], w = (hi[k] - s->a[k]) / s->d[k];
        if (u > w) {
            double x = u;
            u = w;
            w = x;
        }
        if (u > t0) t0 = u;
        if (w < t1) t1 = w;
    }
    return t0 < t1;
}

/* A cube (corner m, edge e, nav space) grown by R: does the segment meet its interior? */
static int seg_meets_cube(const seg *s, const double m[3], double e)
{
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = m[k] - s->R;
        hi[k] = m[k] + e + s->R;
    }
    return seg_meets_open(s, lo, hi);
}

/* 1 when the segment meets no blocked cube of node `code` (stored, value v) grown by R. */
static int node_clear(const on_tree *t, on_lcache *lc, const seg *s, uint32_t ti, const double org[3], uint32_t code,
                      int v)
{
    uint32_t layer = on_code_layer(code);
    double cs = (double)((int64_t)1 << (layer - 1));
    for (unsigned i = 0; i < 8; i++) {
        uint32_t cc = on_code_child(code, i);
        double m[3] = {org[0] + on_code_x(cc), org[1] + on_code_y(cc), org[2] + on_code_z(cc)};
        int blocked = (v & (1 << i)) != 0;
        int cv = -1;
        if (!blocked) {
            if (layer == 1) continue;
            cv = on_lcache_lookup(t, lc, ti, cc);
            if (cv < 0) continue; /* free */
        }
        if (!seg_meets_cube(s, m, cs)) continue;
        if (blocked || !node_clear(t, lc, s, ti, org, cc, cv)) return 0;
    }
    return 1;
}

int on_tree_visible_radius(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], int64_t R)
{
    seg s;
    s.R = (double)R;
    int64_t n = t->n, lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        if (!isfinite(a[k]) || !isfinite(b[k])) return 0;
        double g = (double)(n * t->p.tiles[k]);
        double mn = fmin(a[k], b[k]), mx = fmax(a[k], b[k]);
        double border = t->border_free ? 0 : s.R; /* the grid's border, grown inwards unless free */
        if (mn < border || mx > g - border) return 0;
        s.a[k] = a[k];
        s.d[k] = b[k] - a[k];
        /* tiles whose cubes grown by R may meet the segment */
        lo[k] = (int64_t)floor((mn - s.R) / (double)n);
        hi[k] = (int64_t)floor((mx + s.R) / (double)n);
        if (lo[k] < 0) lo[k] = 0;
        if (hi[k] > t->p.tiles[k] - 1) hi[k] = t->p.tiles[k] - 1;
    }
    for (int64_t k = lo[2]; k <= hi[2]; k++)
        for (int64_t j = lo[1]; j <= hi[1]; j++)
            for (int64_t i = lo[0]; i <= hi[0]; i++) {
                uint32_t ti = on_tile_index(t, (int)i, (int)j, (int)k);
                const on_tile *tl = &t->tiles[ti];
                double org[3] = {(double)(i * n), (double)(j * n), (double)(k * n)};
                if (tl->solid || !tl->loaded) {
                    if (seg_meets_cube(&s, org, (double)n)) return 0;
                    continue;
                }
                int v = on_lcache_lookup(t, lc, ti, on_root_code(t));
                if (v < 0) continue;
                double e[3] = {org[0] - s.R, org[1] - s.R, org[2] - s.R};
                double f[3] = {org[0] + n + s.R, org[1] + n + s.R, org[2] + n + s.R};
                if (!seg_meets_open(&s, e, f)) continue;
                if (!node_clear(t, lc, &s, ti, org, on_root_code(t), v)) return 0;
            }
    return 1;
}
