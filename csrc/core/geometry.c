/*
 * geometry.c -- what blocks a cell: boxes, triangles and heightfields as classifiers for
 * on_tree_insert (tree.h), in nav space, with the agent radius applied conservatively.
 *
 * Rules (the README repeats them): a box blocks the cells it overlaps with positive volume (an axis of
 * zero extent counts as touching, so a flat box still blocks the cells it lies in); a triangle blocks the
 * leaves whose closed cube it touches (separating-axis test); a heightfield is solid from below the
 * world up to its surface. Radius r inflates a box by r on every side, a triangle by the cube of
 * half-size r (the Minkowski sum) and a heightfield by r up and sideways.
 */
#include "tree.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- boxes ----------------------------------------------------------------------------------- */

typedef struct box_geo {
    double lo[3], hi[3];
} box_geo;

/* The rule of on_tree_add_box, shared with the temporary obstacles (obstacles.c): a cube (corner m,
 * side s) is hit when it overlaps the box [lo, hi] with positive volume, an axis of zero extent
 * counting as touching; fully when the box holds it. */
int on_box_classify(const double lo[3], const double hi[3], const double m[3], double s)
{
    int full = 1;
    for (int i = 0; i < 3; i++) {
        double cmin = m[i], cmax = m[i] + s;
        if (lo[i] == hi[i]) {
            if (lo[i] < cmin || lo[i] > cmax) return ON_MISS;
            full = 0;
        } else {
            if (!(lo[i] < cmax && hi[i] > cmin)) return ON_MISS;
            if (!(lo[i] <= cmin && hi[i] >= cmax)) full = 0;
        }
    }
    return full ? ON_FULL_HIT : ON_PARTIAL_HIT;
}

static int classify_box(void *ud, const double m[3], double s)
{
    const box_geo *b = ud;
    return on_box_classify(b->lo, b->hi, m, s);
}

static int finite3(const double v[3])
{
    return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]);
}

on_status on_tree_add_box(on_tree *t, const double min[3], const double max[3])
{
    if (!finite3(min) || !finite3(max)) return ON_FAILURE | ON_INVALID;
    box_geo b;
    double r = t->p.radius * t->inv_scale;
    on_to_nav(t, min, b.lo);
    on_to_nav(t, max, b.hi);
    for (int i = 0; i < 3; i++) {
        if (b.lo[i] > b.hi[i]) return ON_FAILURE | ON_INVALID;
        b.lo[i] -= r;
        b.hi[i] += r;
    }
    return on_tree_insert(t, b.lo, b.hi, classify_box, &b);
}

/* ---- triangles ------------------------------------------------------------------------------- */

typedef struct tri_geo {
    double v[3][3];
    double r;      /* inflation, nav units */
} tri_geo;

/* Separating-axis test of a triangle against a box (centre c, half-size h), after Akenine-Moeller:
 * the 3 box axes, the triangle normal and the 9 edge cross products. Touching counts as overlap. */
static int tri_box_overlap(const double tv[3][3], const double c[3], double h)
{
    double v[3][3], e[3][3];
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) v[i][k] = tv[i][k] - c[k];
    for (int k = 0; k < 3; k++) {
        double mn = fmin(v[0][k], fmin(v[1][k], v[2][k])), mx = fmax(v[0][k], fmax(v[1][k], v[2][k]));
        if (mn > h || mx < -h) return 0;
        e[0][k] = v[1][k] - v[0][k];
        e[1][k] = v[2][k] - v[1][k];
        e[2][k] = v[0][k] - v[2][k];
    }
    /* edge x axis tests */
    for (int i = 0; i < 3; i++) {
        for (int a = 0; a < 3; a++) {
            /* axis = unit(a) x e[i] */
            double ax[3] = {0, 0, 0};
            int b = (a + 1) % 3, c2 = (a + 2) % 3;
            ax[b] = -e[i][c2];
            ax[c2] = e[i][b];
            double p0 = ax[0] * v[0][0] + ax[1] * v[0][1] + ax[2] * v[0][2];
            double p1 = ax[0] * v[1][0] + ax[1] * v[1][1] + ax[2] * v[1][2];
            double p2 = ax[0] * v[2][0] + ax[1] * v[2][1] + ax[2] * v[2][2];
            double mn = fmin(p0, fmin(p1, p2)), mx = fmax(p0, fmax(p1, p2));
            double rad = h * (fabs(ax[0]) + fabs(ax[1]) + fabs(ax[2]));
            if (mn > rad || mx < -rad) return 0;
        }
    }
    /* plane test */
    double n[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                   e[0][0] * e[1][1] - e[0][1] * e[1][0]};
    double d = n[0] * v[0][0] + n[1] * v[0][1] + n[2] * v[0][2];
    double rad = h * (fabs(n[0]) + fabs(n[1]) + fabs(n[2]));
    if (d > rad || d < -rad) return 0;
    return 1;
}

static int classify_tri(void *ud, const double m[3], double s)
{
    const tri_geo *g = ud;
    double h = s * 0.5;
    double c[3] = {m[0] + h, m[1] + h, m[2] + h};
    return tri_box_overlap(g->v, c, h + g->r) ? ON_PARTIAL_HIT : ON_MISS;
}

on_status on_tree_add_triangles(on_tree *t, const double *verts, size_t nverts, const uint32_t *tris, size_t ntris)
{
    for (size_t i = 0; i < nverts * 3; i++)
        if (!isfinite(verts[i])) return ON_FAILURE | ON_INVALID;
    for (size_t i = 0; i < ntris * 3; i++)
        if (tris[i] >= nverts) return ON_FAILURE | ON_INVALID;
    tri_geo g;
    g.r = t->p.radius * t->inv_scale;
    for (size_t i = 0; i < ntris; i++) {
        double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
        for (int k = 0; k < 3; k++) {
            on_to_nav(t, verts + 3 * (size_t)tris[3 * i + k], g.v[k]);
            for (int a = 0; a < 3; a++) {
                lo[a] = fmin(lo[a], g.v[k][a] - g.r);
                hi[a] = fmax(hi[a], g.v[k][a] + g.r);
            }
        }
        on_status s = on_tree_insert(t, lo, hi, classify_tri, &g);
        if (on_failed(s)) return s;
    }
    return ON_SUCCESS;
}

/* ---- heightfields ---------------------------------------------------------------------------- */

/* The last two ranges asked for at each cell size over HF_BLOCK leaves (the smaller ones: the blocks
 * below): a cell's two children stacked in y share their footprint, so the classifier asks for each
 * footprint twice, with the other x neighbour's and the subtree of the first between them (deeper
 * sizes: their own entries). */
#define HF_MEMO 2
#define HF_SIZES 32

typedef struct hf_memo {
    double x0, x1, z0, z1, lo, hi;
    int any;
} hf_memo;

/* The ranges of the small cells (edge 1 .. HF_BLOCK leaves), kept by block of HF_BLOCK x HF_BLOCK leaf
 * columns: a column's footprint is asked for again by every cell stacked over it along the surface
 * (a leaf column about four times on the seed's terrain), often after the descent has been elsewhere
 * for a while, and a small cell's range is worth one to four clipped grid squares. Entries are found
 * by the cell's leaf coordinates, so a hit is the answer for the very same rectangle: trees are
 * bit-identical with or without the blocks. Level l holds (HF_BLOCK >> l)^2 cells from offset
 * hf_level_at[l]; [0] the footprint grown by the radius, [1] the footprint itself. */
#define HF_BLOCK_SHIFT 4
#define HF_BLOCK (1 << HF_BLOCK_SHIFT)
#define HF_BLOCK_CELLS 341 /* 256 + 64 + 16 + 4 + 1 */
#define HF_SLOT_BITS 4     /* 16 x 16 blocks (256 leaf columns a side) kept, by the low bits */

static const int hf_level_at[HF_BLOCK_SHIFT + 1] = {0, 256, 320, 336, 340};

typedef struct hf_block {
    int64_t bx, bz;                     /* the block's leaf column / HF_BLOCK */
    int used;
    uint8_t state[2][HF_BLOCK_CELLS];   /* 0 unknown, 1 no overlap, 2 range below */
    double v[2][HF_BLOCK_CELLS][2];     /* lo, hi */
} hf_block;

typedef struct hf_geo {
    double ox, oz, cell; /* nav space */
    int nx, nz;
    double *h;           /* nav-space heights, already raised by the radius */
    double r;
    hf_memo memo[HF_SIZES][HF_MEMO]; /* by the cell size's binary exponent (mod HF_SIZES) */
    unsigned next[HF_SIZES];         /* the entry to replace next */
    hf_block *blocks;                /* 1 << (2 * HF_SLOT_BITS) */
} hf_geo;

/* Clip a convex polygon (x, z, y triples) to x in [x0, x1], z in [z0, z1] (Sutherland-Hodgman). An
 * edge that every vertex is inside of is skipped (it would copy the polygon as it is); the vertices
 * are otherwise computed as one pass an edge always did, so the answers are the same to the bit. */
static int clip_poly(double (*p)[3], int n, double x0, double x1, double z0, double z1)
{
    double buf[12][3], d[12];
    double(*src)[3] = p, (*dst)[3] = buf;
    for (int edge = 0; edge < 4 && n > 0; edge++) {
        int axis = edge < 2 ? 0 : 1;
        double lim = edge == 0 ? x0 : edge == 1 ? x1 : edge == 2 ? z0 : z1;
        int keep_ge = (edge == 0 || edge == 2), in = 0;
        for (int i = 0; i < n; i++) {
            d[i] = keep_ge ? src[i][axis] - lim : lim - src[i][axis];
            in += d[i] >= 0;
        }
        if (in == n) continue;
        int m = 0;
        for (int i = 0; i < n; i++) {
            int j = i + 1 == n ? 0 : i + 1;
            const double *a = src[i], *b = src[j];
            double da = d[i], db = d[j];
            if (da >= 0) {
                dst[m][0] = a[0], dst[m][1] = a[1], dst[m][2] = a[2], m++;
            }
            if ((da >= 0) != (db >= 0)) {
                double u = da / (da - db);
                for (int k = 0; k < 3; k++) dst[m][k] = a[k] + u * (b[k] - a[k]);
                m++;
            }
        }
        n = m;
        double(*t)[3] = src;
        src = dst;
        dst = t;
    }
    if (src != p)
        for (int i = 0; i < n; i++) p[i][0] = src[i][0], p[i][1] = src[i][1], p[i][2] = src[i][2];
    return n;
}

/* floor and ceil without a libm call (x86-64 without SSE4.1 has no instruction for them); the same
 * values: exact through an integer below 2^52, libm's beyond (and for NaN). */
static inline double floor_fast(double x)
{
    if (!(fabs(x) < 4503599627370496.0)) return floor(x);
    double t = (double)(int64_t)x;
    return t > x ? t - 1.0 : t;
}

static inline double ceil_fast(double x)
{
    if (!(fabs(x) < 4503599627370496.0)) return ceil(x);
    double t = (double)(int64_t)x;
    return t < x ? t + 1.0 : t;
}

/* v (a whole number, or NaN) clamped to [lo, hi] before the cast (NaN: lo). */
static inline int grid_index(double v, int lo, int hi)
{
    return v >= (double)hi ? hi : v > (double)lo ? (int)v : lo;
}

/* The triangles of grid square (i, k) clipped to the rectangle: their min and max height into lo, hi.
 * Returns 1 when anything is left. */
static int square_clipped(const hf_geo *g, int i, int k, double x0, double x1, double z0, double z1, double *lo,
                          double *hi)
{
    int any = 0;
    double xa = g->ox + i * g->cell, xb = xa + g->cell, za = g->oz + k * g->cell, zb = za + g->cell;
    double h00 = g->h[i + (size_t)k * g->nx], h10 = g->h[i + 1 + (size_t)k * g->nx];
    double h01 = g->h[i + (size_t)(k + 1) * g->nx], h11 = g->h[i + 1 + (size_t)(k + 1) * g->nx];
    double tris[2][3][3] = {{{xa, za, h00}, {xb, za, h10}, {xb, zb, h11}},
                            {{xa, za, h00}, {xb, zb, h11}, {xa, zb, h01}}};
    /* The first triangle is the part of the square with x - xa >= z - za, the second the rest: a
     * rectangle clear of the diagonal by more than rounding (most of a square's small rectangles)
     * leaves nothing of the triangle on the other side, which is not clipped then (the same answer:
     * its clip would be empty). */
    double eps = 1e-9 * (fabs(xa) + fabs(za) + g->cell), dlo = (x0 - xa) - (z1 - za), dhi = (x1 - xa) - (z0 - za);
    int only = dlo > eps ? 0 : dhi < -eps ? 1 : -1;
    for (int tr = 0; tr < 2; tr++) {
        if (only >= 0 && tr != only) continue;
        double p[12][3];
        for (int v = 0; v < 3; v++) p[v][0] = tris[tr][v][0], p[v][1] = tris[tr][v][1], p[v][2] = tris[tr][v][2];
        int n = clip_poly(p, 3, x0, x1, z0, z1);
        for (int v = 0; v < n; v++) { /* (finite heights: as fmin and fmax, without the calls) */
            *lo = p[v][2] < *lo ? p[v][2] : *lo;
            *hi = p[v][2] > *hi ? p[v][2] : *hi;
            any = 1;
        }
    }
    return any;
}

/* Exact min and max of the surface over the rectangle (intersected with the heightfield's domain).
 * Returns 0 when they do not overlap. A grid square wholly inside the rectangle keeps its triangles
 * unclipped, so its part is the min and max of its four samples: those squares form one block (the
 * corners are monotone in the index), read as a block of samples; only the squares around it, cut by
 * the rectangle's edges, are clipped. The same numbers as clipping every square (clipping keeps an
 * inside vertex as it is), at a fraction of the cost: bakes give bit-identical trees. */
static int hf_range_of(const hf_geo *g, double x0, double x1, double z0, double z1, double *hmin, double *hmax)
{
    double gx0 = (x0 - g->ox) / g->cell, gx1 = (x1 - g->ox) / g->cell;
    double gz0 = (z0 - g->oz) / g->cell, gz1 = (z1 - g->oz) / g->cell;
    /* clamped to the squares before the cast (a far rectangle or a tiny cell gives indices beyond int,
     * a zero cell infinities or NaN: an empty range then, or the whole grid) */
    int i0 = grid_index(floor_fast(gx0), 0, g->nx - 1), i1 = grid_index(ceil_fast(gx1) - 1, -1, g->nx - 2);
    int k0 = grid_index(floor_fast(gz0), 0, g->nz - 1), k1 = grid_index(ceil_fast(gz1) - 1, -1, g->nz - 2);
    int any = 0;
    double lo = DBL_MAX, hi = -DBL_MAX;
    /* the inside block [ia, ib] x [ka, kb] (empty when ia > ib or ka > kb) */
    int ia = i0, ib = i1, ka = k0, kb = k1;
    while (ia <= i1 && !(g->ox + ia * g->cell >= x0)) ia++;
    while (ib >= ia && !(g->ox + ib * g->cell + g->cell <= x1)) ib--;
    while (ka <= k1 && !(g->oz + ka * g->cell >= z0)) ka++;
    while (kb >= ka && !(g->oz + kb * g->cell + g->cell <= z1)) kb--;
    int block = ia <= ib && ka <= kb;
    if (block) {
        any = 1;
        for (int k = ka; k <= kb + 1; k++) {
            const double *row = g->h + (size_t)k * g->nx;
            for (int i = ia; i <= ib + 1; i++) {
                double v = row[i];
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    }
    for (int k = k0; k <= k1; k++)
        for (int i = i0; i <= i1; i++) {
            if (block && i >= ia && i <= ib && k >= ka && k <= kb) {
                i = ib; /* skip the block's squares in this row */
                continue;
            }
            any |= square_clipped(g, i, k, x0, x1, z0, z1, &lo, &hi);
        }
    *hmin = lo;
    *hmax = hi;
    return any;
}

/* hf_range_of through the memo of recent rectangles of a cell of size s (the same rectangle, the same
 * answer). */
static int hf_range(hf_geo *g, double s, double x0, double x1, double z0, double z1, double *hmin, double *hmax)
{
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    unsigned lv = (unsigned)(bits >> 52) % HF_SIZES;
    for (int i = 0; i < HF_MEMO; i++) {
        const hf_memo *e = &g->memo[lv][i];
        if (e->x0 == x0 && e->x1 == x1 && e->z0 == z0 && e->z1 == z1) {
            *hmin = e->lo;
            *hmax = e->hi;
            return e->any;
        }
    }
    hf_memo *e = &g->memo[lv][g->next[lv]++ % HF_MEMO];
    e->any = hf_range_of(g, x0, x1, z0, z1, &e->lo, &e->hi);
    e->x0 = x0;
    e->x1 = x1;
    e->z0 = z0;
    e->z1 = z1;
    *hmin = e->lo;
    *hmax = e->hi;
    return e->any;
}

/* The surface's height at (x, z) in grid square (i, k), on the triangle the point lies in. */
static inline double square_height(const hf_geo *g, int i, int k, double xa, double za, double x, double z)
{
    const double *r0 = g->h + (size_t)k * (size_t)g->nx + (size_t)i, *r1 = r0 + g->nx;
    double u = (x - xa) / g->cell, v = (z - za) / g->cell;
    return u >= v ? r0[0] + u * (r0[1] - r0[0]) + v * (r1[1] - r0[1]) : r0[0] + v * (r1[0] - r0[0]) + u * (r1[1] - r1[0]);
}

/* For the blocks, whose ranges are only ever compared with whole numbers (a cell on the leaf lattice:
 * its bottom m[1] and top m[1] + s): the min and max of the surface over a rectangle that lies inside
 * one grid square and the domain, from the plane at its corners and where the square's diagonal
 * crosses its sides (the vertices of its two pieces), without clipping. Off by a few units in the
 * last place of the heights, where the clipped ones are too: so when either lies within 1e-9 of a
 * whole number (a flat plateau at a whole height, a tie), or the rectangle is not of that kind, it
 * returns 0 and the rectangle is clipped instead; otherwise every comparison with a whole number
 * comes out as with the clipped range, and the tree is bit-identical. */
static int hf_range_fast(const hf_geo *g, double x0, double x1, double z0, double z1, double *hmin, double *hmax)
{
    double gx0 = (x0 - g->ox) / g->cell, gz0 = (z0 - g->oz) / g->cell;
    if (!(gx0 >= 0 && gz0 >= 0 && gx0 < (double)(g->nx - 1) && gz0 < (double)(g->nz - 1))) return 0;
    int i = (int)gx0, k = (int)gz0;
    double xa = g->ox + i * g->cell, za = g->oz + k * g->cell;
    if (!(x0 >= xa && z0 >= za && x1 <= xa + g->cell && z1 <= za + g->cell)) return 0;
    double xs[8], zs[8];
    int n = 4;
    xs[0] = x0, zs[0] = z0, xs[1] = x1, zs[1] = z0, xs[2] = x0, zs[2] = z1, xs[3] = x1, zs[3] = z1;
    double d = za - xa; /* the diagonal: z = x + d */
    if (x0 + d > z0 && x0 + d < z1) xs[n] = x0, zs[n++] = x0 + d;
    if (x1 + d > z0 && x1 + d < z1) xs[n] = x1, zs[n++] = x1 + d;
    if (z0 - d > x0 && z0 - d < x1) xs[n] = z0 - d, zs[n++] = z0;
    if (z1 - d > x0 && z1 - d < x1) xs[n] = z1 - d, zs[n++] = z1;
    double lo = DBL_MAX, hi = -DBL_MAX;
    for (int v = 0; v < n; v++) {
        double h = square_height(g, i, k, xa, za, xs[v], zs[v]);
        lo = h < lo ? h : lo;
        hi = h > hi ? h : hi;
    }
    double eps = 1e-9 * (1.0 + fabs(lo) + fabs(hi));
    if (fabs(lo - nearbyint(lo)) <= eps || fabs(hi - nearbyint(hi)) <= eps || !(fabs(hi) < 1e15)) return 0;
    *hmin = lo;
    *hmax = hi;
    return 1;
}

/* The block entry of cell (m, s) when the cell is small and on the leaf lattice (at or above 0 in nav
 * space, as a tree's cells are), its index in the block in *e; else NULL (the memo's way then). */
static hf_block *cell_entry(hf_geo *g, const double m[3], double s, int *e)
{
    int l = s == 1.0 ? 0 : s == 2.0 ? 1 : s == 4.0 ? 2 : s == 8.0 ? 3 : s == 16.0 ? 4 : -1;
    if (l < 0 || !(m[0] >= 0 && m[0] < 1e15 && m[2] >= 0 && m[2] < 1e15)) return NULL;
    int64_t ix = (int64_t)m[0], iz = (int64_t)m[2];
    if ((double)ix != m[0] || (double)iz != m[2]) return NULL;
    int64_t bx = ix >> HF_BLOCK_SHIFT, bz = iz >> HF_BLOCK_SHIFT;
    unsigned mask = (1u << HF_SLOT_BITS) - 1;
    hf_block *b = &g->blocks[((unsigned)bz & mask) << HF_SLOT_BITS | ((unsigned)bx & mask)];
    if (!b->used || b->bx != bx || b->bz != bz) {
        b->used = 1;
        b->bx = bx;
        b->bz = bz;
        memset(b->state, 0, sizeof b->state);
    }
    int cx = (int)(ix & (HF_BLOCK - 1)) >> l, cz = (int)(iz & (HF_BLOCK - 1)) >> l;
    *e = hf_level_at[l] + cz * (HF_BLOCK >> l) + cx;
    return b;
}

/* The range of the rectangle [x0, x1] x [z0, z1] (cell footprint, grown or not) through block entry
 * (b, which, e): computed the first time, fast where hf_range_fast can. */
static int block_range(hf_geo *g, hf_block *b, int which, int e, double x0, double x1, double z0, double z1,
                       double *lo, double *hi)
{
    uint8_t *st = &b->state[which][e];
    double *v = b->v[which][e];
    if (!*st) *st = hf_range_fast(g, x0, x1, z0, z1, &v[0], &v[1]) || hf_range_of(g, x0, x1, z0, z1, &v[0], &v[1]) ? 2 : 1;
    *lo = v[0];
    *hi = v[1];
    return *st == 2;
}

static int classify_hf(void *ud, const double m[3], double s)
{
    hf_geo *g = ud;
    double lo, hi, lo_in, hi_in, r = g->r;
    int e = 0;
    hf_block *b = cell_entry(g, m, s, &e);
    double x0 = m[0] - r, x1 = m[0] + s + r, z0 = m[2] - r, z1 = m[2] + s + r;
    if (!(b ? block_range(g, b, 0, e, x0, x1, z0, z1, &lo, &hi) : hf_range(g, s, x0, x1, z0, z1, &lo, &hi)))
        return ON_MISS;
    if (m[1] >= hi) return ON_MISS;
    /* full only when the footprint lies inside the domain and the cube lies below the lowest point */
    double dx1 = g->ox + (g->nx - 1) * g->cell, dz1 = g->oz + (g->nz - 1) * g->cell;
    if (!(m[0] >= g->ox && m[0] + s <= dx1 && m[2] >= g->oz && m[2] + s <= dz1)) return ON_PARTIAL_HIT;
    if (r == 0.0) { /* (the same rectangle) */
        lo_in = lo;
    } else if (!(b ? block_range(g, b, 1, e, m[0], m[0] + s, m[2], m[2] + s, &lo_in, &hi_in)
                   : hf_range(g, s, m[0], m[0] + s, m[2], m[2] + s, &lo_in, &hi_in))) {
        return ON_PARTIAL_HIT;
    }
    return m[1] + s <= lo_in ? ON_FULL_HIT : ON_PARTIAL_HIT;
}

on_status on_tree_add_heightfield(on_tree *t, const on_heightfield *hf)
{
    if (!hf || hf->nx < 2 || hf->nz < 2 || !finite3(hf->origin) || !isfinite(hf->cell) || hf->cell <= 0)
        return ON_FAILURE | ON_INVALID;
    size_t n = (size_t)hf->nx * (size_t)hf->nz;
    hf_geo g;
    g.h = malloc(n * sizeof *g.h);
    if (!g.h) return ON_FAILURE | ON_NO_MEMORY;
    g.r = t->p.radius * t->inv_scale;
    double top = -DBL_MAX;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(hf->heights[i])) {
            free(g.h);
            return ON_FAILURE | ON_INVALID;
        }
        g.h[i] = (hf->origin[1] + hf->heights[i] - t->p.origin[1]) * t->inv_scale + g.r;
        top = fmax(top, g.h[i]);
    }
    g.ox = (hf->origin[0] - t->p.origin[0]) * t->inv_scale;
    g.oz = (hf->origin[2] - t->p.origin[2]) * t->inv_scale;
    g.cell = hf->cell * t->inv_scale;
    g.nx = hf->nx;
    g.nz = hf->nz;
    /* in nav space too: a height or extent that overflows, or a cell that underflows to 0, is refused */
    if (!isfinite(top) || !(g.cell > 0) || !isfinite(g.ox + (g.nx - 1) * g.cell + g.r) ||
        !isfinite(g.oz + (g.nz - 1) * g.cell + g.r) || !isfinite(g.ox - g.r) || !isfinite(g.oz - g.r)) {
        free(g.h);
        return ON_FAILURE | ON_INVALID;
    }
    for (int l = 0; l < HF_SIZES; l++) {
        for (int i = 0; i < HF_MEMO; i++) g.memo[l][i].x0 = NAN; /* matches no rectangle */
        g.next[l] = 0;
    }
    g.blocks = calloc((size_t)1 << (2 * HF_SLOT_BITS), sizeof *g.blocks);
    if (!g.blocks) {
        free(g.h);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    double lo[3] = {g.ox - g.r, -DBL_MAX, g.oz - g.r};
    double hi[3] = {g.ox + (g.nx - 1) * g.cell + g.r, top, g.oz + (g.nz - 1) * g.cell + g.r};
    on_status s = on_tree_insert(t, lo, hi, classify_hf, &g);
    free(g.blocks);
    free(g.h);
    return s;
}
