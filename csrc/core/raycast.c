/*
 * raycast.c -- line of sight by the rule in raycast.h: the octree walk, which jumps a whole free cell at
 * a time (the dense walk, one voxel at a time, is raycast_dense.c's; the turns' check raycast_turn.c's).
 * Both walkers share the per-axis state and the transition check (raycast_walk.h); this one only stops
 * where the segment leaves its current free cell (what it asks of the tree: raycast_probe.h): every
 * crossing it skips lies inside one free cube, where the check cannot fail.
 */
#include "raycast.h"
#include "raycast_probe.h" /* (and losmap.h, raycast_walk.h, tree.h) */
#include "raycast_turn.h"

#include <math.h>

/* Bring a moving axis to its state just before parameter t: every plane crossed strictly earlier
 * is crossed. The position estimate is corrected with the exact plane parameters. */
static void sync_axis(walk *w, int j, double t)
{
    if (w->step[j] > 0) {
        int64_t k = ifloor(w->a[j] + t * w->d[j]);
        if (k < w->idx[j]) k = w->idx[j];
        while (tplane(w, j, k + 1) < t) k++;
        while (k > w->idx[j] && tplane(w, j, k) >= t) k--;
        w->idx[j] = k;
        w->tnext[j] = tplane(w, j, k + 1);
    } else {
        int64_t k = ifloor(w->a[j] + t * w->d[j]);
        if (k > w->idx[j]) k = w->idx[j];
        while (tplane(w, j, k) < t) k--;
        while (k < w->idx[j] && tplane(w, j, k + 1) >= t) k++;
        w->idx[j] = k;
        w->tnext[j] = tplane(w, j, k);
    }
}

#define FAST_MARGIN 1e-6
#define END_MARGIN 1e-9

#include "raycast_box.h" /* (reads FAST_MARGIN) */
#define FAST_COORD 1e7

/* The fast step's voxel index along a moving axis j (not the exit axis e) when the segment leaves the
 * cell through face e within FAST_MARGIN of plane k of axis j: the estimate cannot tell which side of
 * k it is on, the exact plane parameters can (the dense walk's comparisons; tE = the exit's): plane k
 * crossed before the exit (*v is past k), after it (*v before k), or at the same t, an edge crossing:
 * *v is the voxel entered diagonally, and *edge says where the edge lies on the cell's extent along j,
 * [lo, lo + cs): 1 strictly inside (the cell's free voxels lie all around it on this side, so the rule
 * asks only that the voxel entered be free, for a corner too when both its planes are inside), 2 on the
 * cell's far side (the voxels beside the edge outside the cell count too). 0 with *edge = 0 otherwise;
 * -1 when the voxel is outside the cell's extent (the segment left by another face first: the event
 * machinery decides). */
static int near_plane(const walk *w, int j, int64_t k, double tE, int64_t lo, int64_t cs, int64_t *v, int *edge)
{
    double tj = tplane(w, j, k);
    int up = w->step[j] > 0;
    if (tj == tE) {
        if (k > lo && k < lo + cs) *edge = 1;
        else if (k == (up ? lo + cs : lo)) *edge = 2;
        else return -1;
        *v = up ? k : k - 1;
        return 0;
    }
    int64_t vj = (tj < tE) == up ? k : k - 1;
    if (vj < lo || vj >= lo + cs) return -1;
    *v = vj;
    *edge = 0;
    return 0;
}

/* The common step: out of the current cell through one face, where no lattice edge is near (each other
 * coordinate at least FAST_MARGIN from an integer) or where near_plane settles the order of the
 * crossings exactly, so only the voxel entered needs a look. The exit parameters are estimated with
 * reciprocals (inv[j] = 1 / d[j]): the margins keep every decision the same as the exact comparisons
 * of plane parameters would make (the estimate is off by rounding, far less than the margins, for
 * coordinates below FAST_COORD), and a blocked voxel's t is computed by the exact expression. Returns
 * 1 when the walk moved into the entered voxel's cell, 0 when that voxel is blocked (*t_hit set), 2
 * when the segment ends in the current cell, -1 to take the exact event machinery instead (an edge
 * on the cell's boundary, a corner, or with a sink any edge). */
static int fast_step(walk *w, tree_probe *p, const double inv[3], double *t_hit, on_cell_sink sink)
{
    int e = -1;
    double te = INFINITY;
    int64_t bnd[3] = {0, 0, 0}, v[3];
    for (int j = 0; j < 3; j++) {
        if (!w->step[j]) continue;
        bnd[j] = w->step[j] > 0 ? p->cmin[j] + p->cs : p->cmin[j];
        double tj = ((double)bnd[j] - w->a[j]) * inv[j];
        if (tj < te) {
            te = tj;
            e = j;
        }
    }
    if (te > 1.0 + END_MARGIN) return 2;
    if (!(te < 1.0 - END_MARGIN)) return -1;
    int ties = 0;
    double tE = NAN;
    for (int j = 0; j < 3; j++) {
        if (j == e) {
            v[j] = w->step[j] > 0 ? bnd[j] : bnd[j] - 1;
        } else if (!w->step[j]) {
            v[j] = w->idx[j];
        } else {
            double x = w->a[j] + te * w->d[j];
            int64_t k = (int64_t)x; /* floor without a libm call (|x| < FAST_COORD) */
            k -= (double)k > x;
            double f = (double)k;
            if (x - f < FAST_MARGIN || f + 1 - x < FAST_MARGIN) {
                if (isnan(tE)) tE = tplane(w, e, bnd[e]);
                int edge;
                if (near_plane(w, j, x - f < FAST_MARGIN ? k : k + 1, tE, p->cmin[j], p->cs, &v[j], &edge) || edge == 2)
                    return -1;
                ties += edge;
            } else {
                v[j] = k;
            }
        }
    }
    if (ties > (sink ? 0 : 1)) return -1; /* a corner (or, with a sink, any edge): the event machinery */
    int64_t n = p->t->n;
    int64_t lx = v[0] - p->torg[0], ly = v[1] - p->torg[1], lz = v[2] - p->torg[2];
    if (p->chain_ok && in_range(lx, n) && in_range(ly, n) && in_range(lz, n)) {
        /* same tile, its masks: start at the lowest node holding both the cell and the voxel */
        const on_losmap *m = p->lm;
        uint32_t diff = ((uint32_t)lx ^ (uint32_t)(p->cmin[0] - p->torg[0])) |
                        ((uint32_t)ly ^ (uint32_t)(p->cmin[1] - p->torg[1])) |
                        ((uint32_t)lz ^ (uint32_t)(p->cmin[2] - p->torg[2]));
        uint32_t L = (31u - (uint32_t)__builtin_clz(diff)) / 2 + 1;
        if (L < 2) L = 2;
        if (L > m->top) L = m->top;
        p->pok = 0;
        int l = on_losmap_leaf_from(m, p->chain, L, (uint32_t)lx, (uint32_t)ly, (uint32_t)lz, NULL);
        if (l < 0) {
            *t_hit = tplane(w, e, bnd[e]);
            return 0;
        }
        uint32_t msk = ~((1u << l) - 1u);
        p->cur.code = on_code_make((uint32_t)lx & msk, (uint32_t)ly & msk, (uint32_t)lz & msk, (uint32_t)l);
        p->cmin[0] = p->torg[0] + ((uint32_t)lx & msk);
        p->cmin[1] = p->torg[1] + ((uint32_t)ly & msk);
        p->cmin[2] = p->torg[2] + ((uint32_t)lz & msk);
        p->cs = (int64_t)1 << l;
        return 1;
    }
    on_cell c;
    uint8_t vals[ON_MAX_DEPTH + 2];
    uint32_t top;
    if (!probe_leaf(p, v[0], v[1], v[2], &c, vals, &top)) {
        *t_hit = tplane(w, e, bnd[e]);
        return 0;
    }
    enter_cell(p, c, vals, top);
    p->chain_ok = p->lm != NULL; /* probe_leaf's descent left the cell's chain */
    return 1;
}

/* fast_run's edge (or corner) on the old cell's far side: the 4 (or 8) voxels around it, indexed by a
 * bit per crossing axis of T (set: the side after it), must join the one before (0, the old cell's
 * voxel) to the one entered (v, entry T) through free voxels sharing faces. Each is free when in the old
 * cell (oc, size ocs) or the new one (c, layer l), else read by a descent from the lowest node it shares
 * with the new cell (on a copy of the chain, which stays the new cell's). Out of line: rare (a few
 * hundred a query at most), and its locals would crowd the loop's registers (cold: measured with
 * callgrind, 1,000 fewer instructions a query on A1 than noinline alone). 1 when they join. */
static __attribute__((noinline, cold)) int far_side_ok(const on_losmap *m, const on_losnode *const *chain,
                                                       unsigned T, int64_t v0, int64_t v1, int64_t v2, int64_t up0,
                                                       int64_t up1, int64_t up2, int64_t oc0, int64_t oc1, int64_t oc2,
                                                       int64_t ocs, int64_t c0, int64_t c1, int64_t c2, uint32_t l)
{
    unsigned freem = 1u | 1u << T;
    const int64_t av[3] = {v0, v1, v2}, upm[3] = {up0, up1, up2};
    for (unsigned en = 1; en < T; en++) {
        if (en & ~T) continue;
        int64_t u[3];
        for (int j = 0; j < 3; j++) /* (the side before a crossing axis: one back from the entered) */
            u[j] = !(T >> j & 1u) || (en >> j & 1u) ? av[j] : upm[j] ? av[j] - 1 : av[j] + 1;
        uint32_t od = (uint32_t)(u[0] ^ oc0) | (uint32_t)(u[1] ^ oc1) | (uint32_t)(u[2] ^ oc2);
        uint32_t sd = (uint32_t)(u[0] ^ c0) | (uint32_t)(u[1] ^ c1) | (uint32_t)(u[2] ^ c2);
        if ((int64_t)od < ocs || !(sd >> l)) {
            freem |= 1u << en;
            continue;
        }
        uint32_t L = (31u - (uint32_t)__builtin_clz(sd)) / 2 + 1;
        if (L < 2) L = 2;
        if (L > m->top) L = m->top;
        const on_losnode *side[ON_LOS_LEVELS];
        side[L] = chain[L];
        if (on_losmap_leaf_from(m, side, L, (uint32_t)u[0], (uint32_t)u[1], (uint32_t)u[2], NULL) >= 0)
            freem |= 1u << en;
    }
    return reach_after(freem, 1u, 1u << T) != 0;
}

/* Does the segment end inside the cell whose exit planes (global, on the side each moving axis moves
 * to) are b0, b1, b2? By the exact plane parameters, as the event machinery asks before an event (its
 * first test), for fast_run where the estimate stands within END_MARGIN of 1: a segment ending on the
 * cell's face (a waypoint of a path) is clear there without leaving fast_run (measured with callgrind:
 * about 30 % of fast_run's walks on DC1 end so). Out of line: its divisions are rare. */
static __attribute__((noinline)) int ends_in_cell(const walk *w, int64_t b0, int64_t b1, int64_t b2)
{
    const int64_t bnd[3] = {b0, b1, b2};
    for (int j = 0; j < 3; j++)
        if (w->step[j] && tplane(w, j, bnd[j]) < 1.0) return 0;
    return 1;
}

/* fast_step's loop in a tile with masks and the chain of the current cell, the state in locals and
 * tile-local (exact: a tile's origin is an integer below FAST_COORD); an axis that does not move is
 * never the exit (its parameter is +inf) and keeps its voxel. A next voxel in the brick of the current
 * cell is read off that brick's mask, kept from the last descent. Edges and corners crossed exactly are
 * decided here too (near_plane; with a sink, whose corridor takes every free cell around them, the
 * event machinery does): inside the cell's extent by the voxel entered, on its far side by the voxels
 * around them as the events would (below). Returns as fast_step, or 3 when the voxel entered is in
 * another tile (fast_step takes that step). The walk's cell is written back before any return but 0 and 2
 * (the walk ends there). */
static inline __attribute__((always_inline)) int fast_run(walk *w, tree_probe *p, const double inv[3], double *t_hit,
                                                          on_cell_sink sink, void *ud, int64_t *entered)
{
    const on_losmap *m = p->lm;
    const int64_t o0 = p->torg[0], o1 = p->torg[1], o2 = p->torg[2], n = p->t->n, out = ~(n - 1);
    const double a0 = w->a[0] - (double)o0, a1 = w->a[1] - (double)o1, a2 = w->a[2] - (double)o2;
    const double d0 = w->d[0], d1 = w->d[1], d2 = w->d[2];
    const double i0 = inv[0], i1 = inv[1], i2 = inv[2]; /* (+inf for an axis that does not move) */
    /* the cell's side each exit face is on: + (all ones: add the cell's size) or - (0); + for an axis
     * that does not move, whose face is then ahead of a and its parameter +inf */
    const int64_t up0 = -(int64_t)(w->step[0] >= 0), up1 = -(int64_t)(w->step[1] >= 0),
                  up2 = -(int64_t)(w->step[2] >= 0);
    /* An axis that does not move goes through OTHER as the others (with d = 0, x is a, exactly: its voxel is
     * a's, the walk's idx), but for a coordinate within the margin of a plane, which near_plane cannot
     * order (its t is infinite): such a segment takes the event machinery. */
    const double ax[3] = {a0, a1, a2};
    for (int j = 0; j < 3; j++)
        if (!w->step[j]) {
            double fr = ax[j] - (double)(int64_t)ax[j];
            if (fr < FAST_MARGIN || fr > 1 - FAST_MARGIN) return -1;
        }
    int64_t c0 = p->cmin[0] - o0, c1 = p->cmin[1] - o1, c2 = p->cmin[2] - o2; /* the cell, tile-local */
    uint32_t l = on_code_layer(p->cur.code), tile = p->cur.tile;
    p->pok = 0;         /* (its descents write chain[]) */
    /* the mask of the brick holding the cell when the cell came from a brick (layer <= 1) through this
     * loop, else all ones (a brick holds a free leaf: never all ones) */
    uint64_t bw = ~0ull;
    int rc;
    for (;;) {
        int64_t cs = (int64_t)1 << l;
        int64_t b0 = c0 + (cs & up0), b1 = c1 + (cs & up1), b2 = c2 + (cs & up2);
        double t0 = ((double)b0 - a0) * i0, t1 = ((double)b1 - a1) * i1, t2 = ((double)b2 - a2) * i2, te;
        int e;
        if (t0 <= t1 && t0 <= t2) e = 0, te = t0;
        else if (t1 <= t2) e = 1, te = t1;
        else e = 2, te = t2;
        if (te > 1.0 + END_MARGIN) {
            rc = 2;
            break;
        }
        if (!(te < 1.0 - END_MARGIN)) { /* (b on or near the cell's boundary: a path's waypoints lie on faces) */
            rc = ends_in_cell(w, b0 + o0, b1 + o1, b2 + o2) ? 2 : -1;
            break;
        }
        /* the voxel entered: across face e, and where the other two coordinates are at te */
        int64_t v0, v1, v2;
        double x, f, tE = NAN;
        unsigned ties = 0, far = 0; /* axes whose plane is crossed at the exit's t; of them, on the far side */
        int edge;
#define BND_E (e == 0 ? b0 + o0 : e == 1 ? b1 + o1 : b2 + o2) /* the exit plane, global */
/* (OTHER: the voxel index along an axis j other than the exit's, and whether the point lies within
 * the margin of a plane. x lies in the cell's tile-local extent, so >= 0 up to the estimate's rounding:
 * the truncation is the floor, and where x is a hair below 0 it gives 0 with f < 0, near plane 0, as the
 * floor's -1 with f a hair below 1 would. f is x's distance above voxel vj's lower plane.) */
/* (the near-plane side expected rare: as gcc's profile-guided build lays the loop out, make
 * bench-query-ir Complex -526 instructions a query; see search.c, h31ir5) */
#define OTHER(j, vj, aj, dj, cj, oj)                                                                                   \
    {                                                                                                                  \
        x = aj + te * dj;                                                                                              \
        vj = (int64_t)x;                                                                                               \
        f = x - (double)vj;                                                                                            \
        if (__builtin_expect(f < FAST_MARGIN || f > 1 - FAST_MARGIN, 0)) {                                             \
            if (isnan(tE)) tE = tplane(w, e, BND_E);                                                                   \
            int64_t k = (f < FAST_MARGIN ? vj : vj + 1) + oj;                                                          \
            if (near_plane(w, j, k, tE, oj + cj, cs, &vj, &edge)) {                                                    \
                rc = -1;                                                                                               \
                break;                                                                                                 \
            }                                                                                                          \
            ties |= (unsigned)(edge != 0) << j;                                                                        \
            far |= (unsigned)(edge == 2) << j;                                                                         \
            vj -= oj;                                                                                                  \
        }                                                                                                              \
    }
        if (e == 0) {
            v0 = up0 ? b0 : b0 - 1;
            OTHER(1, v1, a1, d1, c1, o1)
            OTHER(2, v2, a2, d2, c2, o2)
        } else if (e == 1) {
            v1 = up1 ? b1 : b1 - 1;
            OTHER(0, v0, a0, d0, c0, o0)
            OTHER(2, v2, a2, d2, c2, o2)
        } else {
            v2 = up2 ? b2 : b2 - 1;
            OTHER(0, v0, a0, d0, c0, o0)
            OTHER(1, v1, a1, d1, c1, o1)
        }
#undef OTHER
        if (sink && ties) { /* every free cell around an edge goes to the sink: the event machinery */
            rc = -1;
            break;
        }
        const int64_t oc0 = c0, oc1 = c1, oc2 = c2, ocs = cs; /* the old cell */
        uint32_t diff = (uint32_t)(v0 ^ c0) | (uint32_t)(v1 ^ c1) | (uint32_t)(v2 ^ c2);
        /* another tile (n is a power of two and the cell is in the tile, so a voxel index from -1 to n
         * has a bit of out in its difference from the cell's corner exactly when it is outside; around
         * an edge, every other voxel is the old cell's extent or the voxel entered's along each axis, so
         * in the tile too) */
        if (diff & (uint32_t)out) {
            rc = 3;
            break;
        }
        int nl;
        if (diff < 4 && bw != ~0ull) { /* the cell's brick */
            unsigned bit = (unsigned)(v0 & 3) | (unsigned)(v1 & 3) << 2 | (unsigned)(v2 & 3) << 4;
            nl = (bw >> bit) & 1u ? -1 : (bw & on_los_group(bit)) ? 0 : 1;
        } else {
            uint32_t L = (31u - (uint32_t)__builtin_clz(diff)) / 2 + 1;
            if (L < 2) L = 2;
            if (L > m->top) L = m->top;
            bw = ~0ull; /* (set when the answer comes from a brick: the new cell's, layer <= 1) */
            nl = on_losmap_leaf_from(m, p->chain, L, (uint32_t)v0, (uint32_t)v1, (uint32_t)v2, &bw);
        }
        if (nl < 0) {
            *t_hit = tplane(w, e, BND_E);
            if (entered) { /* (the voxel entered is blocked: the voxel of the interval after t_hit) */
                entered[0] = 1, entered[1] = v0 + o0, entered[2] = v1 + o1, entered[3] = v2 + o2;
            }
            return 0;
        }
        int64_t msk = ~(((int64_t)1 << nl) - 1);
        c0 = v0 & msk, c1 = v1 & msk, c2 = v2 & msk, l = (uint32_t)nl;
        if (far && !far_side_ok(m, p->chain, ties | 1u << e, v0, v1, v2, up0, up1, up2, oc0, oc1, oc2, ocs, c0, c1, c2,
                                l)) {
            *t_hit = tE;
            return 0;
        }
#undef BND_E
        if (sink) {
            on_cell c = {tile, on_code_make((uint32_t)c0, (uint32_t)c1, (uint32_t)c2, l)};
            sink(ud, c);
        }
    }
    if (rc == 2) return 2; /* (the walk ends: its cell is not read again) */
    p->cur.code = on_code_make((uint32_t)c0, (uint32_t)c1, (uint32_t)c2, l);
    p->cmin[0] = o0 + c0;
    p->cmin[1] = o1 + c1;
    p->cmin[2] = o2 + c2;
    p->cs = (int64_t)1 << l;
    return rc;
}

/* Every free cell around a crossing: the path depends on the ones that join its two sides, which need
 * not be the one the walk goes on in (a diagonal crossing of an edge passes by a third voxel). */
static void sink_all(on_cell_sink sink, void *ud, const tree_probe *p, unsigned m)
{
    for (unsigned e = 0; e < 8; e++)
        if (m & (1u << e)) sink(ud, p->cells[e]);
}

/* walk_tree's loop from a walk w with its cell in p (inv: the reciprocals, +inf for an axis that does
 * not move; fast: the segment lies on no lattice plane), or visible_fast's walk taken over where
 * fast_run stopped (pending: its return, 3 or -1; 0 for none). Returns as walk_tree. */
static int walk_loop(walk *w, tree_probe *p, const double inv[3], double *t_hit, on_cell_sink sink, void *ud, int fast,
                     int pending)
{
    around r;
    for (;;) {
        if (fast) {
            int rc = 3;
            if (pending) rc = pending, pending = 0;
            else if (p->chain_ok && p->lm && p->lmtile == p->cur.tile) rc = fast_run(w, p, inv, t_hit, sink, ud, NULL);
            if (rc == 3) rc = fast_step(w, p, inv, t_hit, sink);
            if (rc == 1) {
                if (sink) sink(ud, p->cur); /* the one cell entered (events report theirs below) */
                continue;
            }
            if (rc >= 0) return rc == 2;
        }
        const int64_t *cmin = p->cmin, cs = p->cs;
        /* when does the segment leave the current cell, per axis and first? */
        double te = INFINITY;
        for (int j = 0; j < 3; j++)
            if (w->step[j]) {
                double tj = tplane(w, j, w->step[j] > 0 ? cmin[j] + cs : cmin[j]);
                if (tj < te) te = tj;
            }
        if (!(te < 1.0)) return 1;
        p->chain_ok = 0;
        for (int j = 0; j < 3; j++)
            if (w->step[j]) sync_axis(w, j, te);
        double tev;
        unsigned cross = lowest_axes(w, &tev);
        around_event(w, cross, &r);
        unsigned fm = free_mask_tree(p, &r);
        unsigned ok = reach_after(fm, r.before, r.after);
        if (!ok) {
            *t_hit = tev;
            return 0;
        }
        if (sink) sink_all(sink, ud, p, fm);
        unsigned e = pick_largest(p, ok);
        if (p->cells[e].code != p->cur.code || p->cells[e].tile != p->cur.tile) enter_cell(p, p->cells[e], p->vals[e], p->top[e]);
        advance(w, cross);
    }
}

/* The walk's first cell off its tile's masks (lm, tile ti of side n): the free leaf cell holding global
 * voxel (x, y, z) becomes p's current cell, with the chain of its descent; 0 when the voxel is
 * blocked. (walk_tree and visible_core start so; visible_core's through a sight cache sc when not NULL:
 * start_cached's descent.) */
static inline __attribute__((always_inline)) int start_cell(tree_probe *p, const on_losmap *lm, uint32_t ti, int64_t n,
                                                            int64_t x, int64_t y, int64_t z, on_sight_cache *sc)
{
    uint32_t lx = (uint32_t)(x & (n - 1)), ly = (uint32_t)(y & (n - 1)), lz = (uint32_t)(z & (n - 1));
    int l = sc ? start_cached(sc, p, lm, x, y, z, lx, ly, lz)
               : on_losmap_leaf_from(lm, p->chain, on_losmap_start(lm, p->chain, lx, ly, lz), lx, ly, lz, NULL);
    if (l < 0) return 0;
    uint32_t msk = ~((1u << l) - 1u);
    p->lm = lm;
    p->lmtile = ti;
    p->chain_ok = 1;
    p->cur.tile = ti;
    p->cur.code = on_code_make(lx & msk, ly & msk, lz & msk, (uint32_t)l);
    p->torg[0] = x - lx, p->torg[1] = y - ly, p->torg[2] = z - lz;
    p->cmin[0] = p->torg[0] + (lx & msk), p->cmin[1] = p->torg[1] + (ly & msk), p->cmin[2] = p->torg[2] + (lz & msk);
    p->cs = (int64_t)1 << l;
    return 1;
}

/* Walk a, b (nav space). Returns 1 when clear; 0 with *t_hit otherwise. `sink` (may be NULL) gets
 * every free cell the walk passes through, in order, and at each crossing every free cell around it. */
static int walk_tree(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], double *t_hit,
                     on_cell_sink sink, void *ud)
{
    *t_hit = 0;
    int small = fabs(a[0]) < FAST_COORD && fabs(a[1]) < FAST_COORD && fabs(a[2]) < FAST_COORD &&
                fabs(b[0]) < FAST_COORD && fabs(b[1]) < FAST_COORD && fabs(b[2]) < FAST_COORD;
    if (!small && !sane(a, b)) return 0; /* (small implies sane) */
    walk w;
    walk_init(&w, a, b, 0);
    tree_probe p;
    p.t = t;
    p.lc = lc; /* (checked against the tree before the node table's first read: probe_leaf) */
    p.cs = 0; /* no current cell yet */
    p.cmin[0] = p.cmin[1] = p.cmin[2] = 0;
    p.torg[0] = p.torg[1] = p.torg[2] = 0;
    p.cur.tile = p.cur.code = 0;
    p.lm = NULL;
    p.lmtile = UINT32_MAX;
    p.chain_ok = 0;
    p.pok = 0;
    int fast = small && !(w.two[0] | w.two[1] | w.two[2]);
    if (fast) {
        /* no lattice plane holds the segment: one voxel around the start, read off its tile's masks
         * from the top (which leaves the chain of its cell) */
        int64_t n = t->n, x = w.idx[0], y = w.idx[1], z = w.idx[2];
        if (!in_range(x, n * t->p.tiles[0]) || !in_range(y, n * t->p.tiles[1]) || !in_range(z, n * t->p.tiles[2]))
            return 0;
        int D = t->p.depth;
        uint32_t ti = on_tile_index(t, (int)(x >> D), (int)(y >> D), (int)(z >> D));
        const on_tile *tl = &t->tiles[ti];
        if (tl->solid || !tl->loaded) return 0;
        const on_losmap *lm = on_tile_losmap(t, ti);
        /* (the box test only where it may pay: the tile's box leaves most of its region out; a's tile is
         * the start voxel's, so clear_by_box's answer is the same as before the walk's start) */
        if (lm && !sink && lm->box_small && clear_by_box(t, a, b)) return 1;
        if (lm) {
            if (!start_cell(&p, lm, ti, n, x, y, z, NULL)) return 0;
            if (sink) sink(ud, p.cur);
        }
    }
    if (!fast && !sink && small && clear_by_box(t, a, b)) return 1;
    around r;
    if (!p.cs) { /* the voxels around the start (1, 2, 4 or 8), read one by one */
        around_start(&w, &r);
        unsigned m = free_mask_tree(&p, &r);
        if (!m) return 0;
        if (sink) sink_all(sink, ud, &p, m);
        unsigned first = pick_largest(&p, m);
        enter_cell(&p, p.cells[first], p.vals[first], p.top[first]);
        p.chain_ok = p.lm != NULL && !(r.valid & (r.valid - 1)); /* one voxel read: its descent left the chain */
    }
    double inv[3];
    for (int j = 0; j < 3; j++) inv[j] = w.step[j] ? 1.0 / w.d[j] : INFINITY; /* (fast_run's exit: never) */
    return walk_loop(&w, &p, inv, t_hit, sink, ud, fast, 0);
}

/* A blocked start for visible_core: at t = 0, the voxel of the interval after it. */
static inline int visible_hit0(double *t_hit, int64_t *entered, int64_t x, int64_t y, int64_t z)
{
    if (t_hit) *t_hit = 0;
    if (entered) entered[0] = 1, entered[1] = x, entered[2] = y, entered[3] = z;
    return 0;
}

/* on_tree_visible_nav's common case, the search's line of sight: a segment off every lattice plane whose
 * start voxel is in a tile with masks, walked by fast_run to its end, with only what fast_run reads set
 * up (walk_tree's set-up for the other cases and the event machinery cost about 100 instructions more a
 * walk, measured with callgrind on DC1). 1 when clear, 0 when blocked, -1 when walk_tree must take the
 * segment (the segment lies on a lattice plane; no masks; a coordinate beyond FAST_COORD); where
 * fast_run stops (a corner, an edge it cannot order, another tile) walk_loop goes on from there. The
 * answers are walk_tree's: the same start voxel, box test, fast_run and loop. No t of the hit: on_tree_raycast, which
 * wants it, takes walk_tree (the hit's t kept through this walk cost about 500,000 instructions more
 * on DC1's 300 queries, callgrind). */
static inline __attribute__((always_inline)) int visible_core(const on_tree *t, on_lcache *lc, const double a[3],
                                                              const double b[3], double *t_hit, int64_t *entered,
                                                              on_sight_cache *sc)
{
    walk w;
    double inv[3];
    int64_t *idx = w.idx;
    for (int j = 0; j < 3; j++) { /* walk_init's state, but tnext and two */
        double aj = a[j], bj = b[j];
        if (!(fabs(aj) < FAST_COORD && fabs(bj) < FAST_COORD)) return -1;
        double d = bj - aj;
        int64_t k = (int64_t)aj; /* (truncation: the floor is k - (k > a), the ceiling k + (k < a)) */
        w.a[j] = aj;
        w.d[j] = d;
        if (d > 0) {
            w.step[j] = 1;
            idx[j] = k - ((double)k > aj);
            inv[j] = 1.0 / d;
        } else if (d < 0) {
            w.step[j] = -1;
            idx[j] = k + ((double)k < aj) - 1;
            inv[j] = 1.0 / d;
        } else {
            int64_t f = k - ((double)k > aj);
            if ((double)f == aj) return -1; /* on a lattice plane: the event machinery */
            w.step[j] = 0;
            idx[j] = f;
            inv[j] = INFINITY;
        }
    }
    int64_t n = t->n, x = idx[0], y = idx[1], z = idx[2];
    if (!in_range(x, n * t->p.tiles[0]) || !in_range(y, n * t->p.tiles[1]) || !in_range(z, n * t->p.tiles[2]))
        return visible_hit0(t_hit, entered, x, y, z);
    int D = t->p.depth;
    uint32_t ti = on_tile_index(t, (int)(x >> D), (int)(y >> D), (int)(z >> D));
    const on_tile *tl = &t->tiles[ti];
    if (tl->solid || !tl->loaded) return visible_hit0(t_hit, entered, x, y, z);
    const on_losmap *lm = on_tile_losmap(t, ti);
    if (!lm) return -1;
    /* (clear_by_box with the tile and masks of a's voxel: where a lies more than the margin inside a tile,
     * that is the tile of a's floor, whose masks those are; elsewhere, on either tile, the test's region
     * check fails) */
    if (lm->box_small) {
        const double o[3] = {(double)((x >> D) << D), (double)((y >> D) << D), (double)((z >> D) << D)};
        if (clear_in_box(lm, o, a, b)) return 1;
    }
    tree_probe p;
    if (!start_cell(&p, lm, ti, n, x, y, z, sc)) return visible_hit0(t_hit, entered, x, y, z);
    p.t = t;
    p.lc = lc; /* (the rest of walk_tree's probe, for walk_loop below) */
    p.pok = 0; /* (probe_leaf's last descent: none yet; left unset, walk_loop's first probe_leaf could take
                * a stack value for a cached answer: a layer of 21945 under glibc's MALLOC_PERTURB_) */
    double th;
    int rc = fast_run(&w, &p, inv, t_hit ? t_hit : &th, NULL, NULL, entered);
    if (rc == 2 || rc == 0) return rc == 2;
    /* fast_run stopped at another tile (3) or where the exact order decides (-1): walk_tree's loop takes
     * the walk over from there (w as walk_init leaves it: tnext unset but for axes that do not move) */
    for (int j = 0; j < 3; j++) {
        w.two[j] = 0;
        if (!w.step[j]) w.tnext[j] = INFINITY;
    }
    return walk_loop(&w, &p, inv, t_hit ? t_hit : &th, NULL, NULL, 1, rc);
}

/* visible_core without the hit (on_tree_visible_nav's and on_tree_visible's walk). */
static int visible_fast(const on_tree *t, on_lcache *lc, const double a[3], const double b[3])
{
    return visible_core(t, lc, a, b, NULL, NULL, NULL);
}

/* The same through a sight cache (on_tree_visible_nav_cached's: a function of its own, so that the walk
 * without one is built as before; one function for both cost about 800 instructions a query more on
 * the three maps of make bench-query-ir, callgrind). */
static int visible_fast_cached(const on_tree *t, on_lcache *lc, const double a[3], const double b[3],
                               on_sight_cache *sc)
{
    return visible_core(t, lc, a, b, NULL, NULL, sc);
}

/* visible_core with the t of the hit and, when the walk stopped at a blocked voxel it entered (its
 * start voxel included: the voxel of the interval just after *t_hit), entered[0] = 1 and the voxel in
 * entered[1..3] (else entered[0] = 0), for walk_visible's moved segments. */
static __attribute__((noinline)) int visible_hit(const on_tree *t, on_lcache *lc, const double a[3], const double b[3],
                                                 double *t_hit, int64_t entered[4])
{
    *t_hit = 0;
    entered[0] = 0;
    return visible_core(t, lc, a, b, t_hit, entered, NULL);
}

/* Line of sight without a sink or the hit's t: visible_fast, else walk_tree. 1 when clear.
 * A segment in one lattice plane (x_j = k for one axis j, the others off every plane: waypoints on a
 * face) has the voxels of both layers k - 1 and k around it, and walk_tree's event machinery reads
 * them at every cell it leaves (about 2,000 instructions such a walk on DC1, 2,700 on BC1, against
 * 800 for visible_fast's). The same segment moved half a voxel into one layer (x_j = k - 0.5, or
 * k + 0.5) has around it, at every t, the voxels of that layer alone that the segment has there: each
 * of the rule's tests on it (a free voxel around; free voxels before joined to free voxels after
 * through free voxels around the crossing, sharing faces) passing passes the same test on the segment,
 * whose voxels are a superset (the crossings are at the same t: the other coordinates are the same).
 * So either moved segment clear shows the segment clear; one stopped at a blocked voxel it entered whose
 * neighbour across the plane is blocked too (the segment's two voxels just after that t) shows it
 * blocked; otherwise walk_tree decides. */
static inline __attribute__((always_inline)) int walk_visible(const on_tree *t, on_lcache *lc, const double a[3],
                                                              const double b[3], on_sight_cache *sc)
{
    int r = sc ? visible_fast_cached(t, lc, a, b, sc) : visible_fast(t, lc, a, b);
    if (r >= 0) return r;
    int j = -1, planes = 0;
    for (int i = 0; i < 3; i++)
        if (a[i] == b[i] && fabs(a[i]) < FAST_COORD && (double)ifloor(a[i]) == a[i]) j = i, planes++;
    if (planes == 1) {
        double a2[3] = {a[0], a[1], a[2]}, b2[3] = {b[0], b[1], b[2]}, th;
        int64_t en[4];
        on_turn_cache tc;
        on_turn_cache_init(&tc);
        for (int side = 0; side < 2; side++) { /* layer k - 1, then k */
            a2[j] = b2[j] = a[j] + (side ? 0.5 : -0.5);
            int r2 = visible_hit(t, lc, a2, b2, &th, en);
            if (r2 == 1) return 1;
            /* stopped at a blocked voxel entered: with the voxel beside it across the plane blocked too,
             * the segment's voxels in the interval just after th (those two) are blocked */
            if (r2 == 0 && en[0]) {
                en[1 + j] += side ? -1 : 1;
                if (!turn_leaf_free(t, lc, &tc, en[1], en[2], en[3])) return 0;
            }
        }
    }
    double th;
    return walk_tree(t, lc, a, b, &th, NULL, NULL);
}

int on_tree_visible_nav(const on_tree *t, on_lcache *lc, const double a[3], const double b[3])
{
    return walk_visible(t, lc, a, b, NULL);
}

int on_tree_visible_nav_cached(const on_tree *t, on_lcache *lc, on_sight_cache *c, const double a[3],
                               const double b[3])
{
    return walk_visible(t, lc, a, b, c);
}

int on_tree_walk_cells(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], on_cell_sink sink,
                       void *ud)
{
    double th;
    return walk_tree(t, lc, a, b, &th, sink, ud);
}

static inline __attribute__((always_inline)) int to_nav_checked(const on_tree *t, const double a[3], const double b[3],
                                                               double na[3], double nb[3])
{
    for (int j = 0; j < 3; j++)
        if (isnan(a[j]) || isnan(b[j])) return 0;
    on_to_nav(t, a, na);
    on_to_nav(t, b, nb);
    return 1;
}

on_status on_tree_visible(const on_tree *t, const double a[3], const double b[3])
{
    double na[3], nb[3];
    if (!to_nav_checked(t, a, b, na, nb)) return ON_FAILURE | ON_INVALID;
    return walk_visible(t, NULL, na, nb, NULL) ? ON_SUCCESS : (ON_FAILURE | ON_BLOCKED);
}

on_status on_tree_raycast(const on_tree *t, const double a[3], const double b[3], double *t_hit)
{
    double na[3], nb[3], th = 0;
    if (!to_nav_checked(t, a, b, na, nb)) return ON_FAILURE | ON_INVALID;
    int clear = walk_tree(t, NULL, na, nb, &th, NULL, NULL);
    if (t_hit) *t_hit = clear ? 1.0 : th;
    return clear ? ON_SUCCESS : (ON_FAILURE | ON_BLOCKED);
}

int on_tree_walk_cells_hit(const on_tree *t, on_lcache *lc, const double a[3], const double b[3], on_cell_sink sink,
                           void *ud, double *t_hit)
{
    return walk_tree(t, lc, a, b, t_hit, sink, ud);
}
