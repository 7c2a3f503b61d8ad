/*
 * facepoint.h -- the best point of a face rectangle between two points (internal): where a string
 * from a to c through the rectangle is shortest. The route's crossings (route.c) and the box
 * corridors of the local searches (reach.c) are pulled taut with it.
 */
#ifndef OCTONAV_FACEPOINT_H
#define OCTONAV_FACEPOINT_H

#include "util.h"

#include <math.h>
#include <string.h>

/* The point q of the edges of the rectangle [lo, hi] (flat along axis k) in the mask `edges`
 * minimising |a - q| + |q - c| (a mask of one edge: its point, no sum computed). Edges 0 and 1 run
 * along axis u at the third axis w's lo and hi, 2 and 3 along w at u's lo and hi. Of equal sums the
 * first edge's point is kept, so the order is part of the answer: on_rect_best keeps the order each
 * of its two cases had before they shared this loop (u = (k + 1) % 3 on the plane, (k + 2) % 3 off
 * it), and the route's costs stay as measured. On an edge's line the sum is convex with a closed
 * form: with ra, rc the points' distances from the line, s = (sa rc + sc ra) / (ra + rc), clamped onto
 * the edge. All four edges (15): the best point of the rectangle's boundary (tests/world/test_route.c's
 * reference). */
static inline void on_rect_edges(const double a[3], const double c[3], const double lo[3], const double hi[3], int k,
                                 int u, unsigned edges, double q[3])
{
    int w = 3 - k - u, one = (edges & (edges - 1)) == 0;
    double da = a[k] - lo[k], dc = c[k] - lo[k], best = HUGE_VAL;
    for (int e = 0; e < 4; e++) {
        if (!(edges & 1u << e)) continue;
        int ax = e < 2 ? u : w, ox = e < 2 ? w : u; /* the edge runs along ax at ox = lo or hi */
        double fix = (e & 1) ? hi[ox] : lo[ox];
        double ra = sqrt((a[ox] - fix) * (a[ox] - fix) + da * da), rc = sqrt((c[ox] - fix) * (c[ox] - fix) + dc * dc);
        double sv = ra + rc > 1e-12 ? (a[ax] * rc + c[ax] * ra) / (ra + rc) : a[ax];
        if (sv < lo[ax]) sv = lo[ax];
        if (sv > hi[ax]) sv = hi[ax];
        double cand[3];
        cand[k] = lo[k];
        cand[ax] = sv;
        cand[ox] = fix;
        double d = one ? 0 : on_dist3(a, cand) + on_dist3(cand, c);
        if (best == HUGE_VAL || d < best) { /* (the first edge's point whatever its sum: q is set) */
            best = d;
            memcpy(q, cand, sizeof cand);
        }
    }
}

/* The point q of the rectangle [lo, hi] (flat along axis k) minimising |a - q| + |q - c|. Unfolded
 * about the rectangle's plane, the minimum over the plane is where the segment a-c' meets it; inside
 * the rectangle that is q, else the sum being convex on the plane, the minimum over the rectangle lies
 * on an edge whose side that point is beyond (one or two of the four). With a and c both on the plane
 * there is no such point: every edge is tried. The two axes along the plane are given: i = (k + 1) % 3,
 * j = (k + 2) % 3 (a caller that keeps them: reach.c's corridors). */
static inline void on_rect_best_ax(const double a[3], const double c[3], const double lo[3], const double hi[3], int k,
                                   int i, int j, double q[3])
{
    double da = fabs(a[k] - lo[k]), dc = fabs(c[k] - lo[k]);
    if (da + dc == 0) {
        on_rect_edges(a, c, lo, hi, k, i, 15, q);
        return;
    }
    double t = da / (da + dc), x = a[i] + t * (c[i] - a[i]), y = a[j] + t * (c[j] - a[j]);
    if (x >= lo[i] && x <= hi[i] && y >= lo[j] && y <= hi[j]) {
        q[k] = lo[k];
        q[i] = x;
        q[j] = y;
        return;
    }
    /* edges 0, 1 at i = lo, hi; 2, 3 at j = lo, hi: those the unfolded point is beyond */
    unsigned edges = (unsigned)(x < lo[i]) | (unsigned)(x > hi[i]) << 1 | (unsigned)(y < lo[j]) << 2 | (unsigned)(y > hi[j]) << 3;
    on_rect_edges(a, c, lo, hi, k, j, edges, q);
}

/* The same, the axes from k. */
static inline void on_rect_best(const double a[3], const double c[3], const double lo[3], const double hi[3], int k, double q[3])
{
    on_rect_best_ax(a, c, lo, hi, k, (k + 1) % 3, (k + 2) % 3, q);
}

#endif
