/*
 * facepoint.h -- the best point of a face rectangle between two points (internal): where a string
 * from a to c through the rectangle is shortest. The route's crossings are pulled taut with it
 * (route.c); reach.c's on_best_on_face answers the same question by trying every edge.
 */
#ifndef OCTONAV_FACEPOINT_H
#define OCTONAV_FACEPOINT_H

#include "reach.h"
#include "util.h"

#include <math.h>
#include <string.h>

/* The point q of the rectangle [lo, hi] (flat along axis k) minimising |a - q| + |q - c|. Unfolded
 * about the rectangle's plane, the minimum over the plane is where the segment a-c' meets it; inside
 * the rectangle that is q, else the sum being convex on the plane, the minimum over the rectangle lies
 * on an edge whose side that point is beyond (one or two of the four), each a 1D closed form: with ra,
 * rc the points' distances from the edge's line, s = (sa rc + sc ra) / (ra + rc), clamped. a and c
 * both on the plane: on_best_on_face (every edge). */
static inline void on_rect_best(const double a[3], const double c[3], const double lo[3], const double hi[3], int k, double q[3])
{
    int i = (k + 1) % 3, j = (k + 2) % 3;
    double da = fabs(a[k] - lo[k]), dc = fabs(c[k] - lo[k]);
    if (da + dc == 0) {
        on_best_on_face(a, c, lo, hi, k, q);
        return;
    }
    double t = da / (da + dc), x = a[i] + t * (c[i] - a[i]), y = a[j] + t * (c[j] - a[j]);
    q[k] = lo[k];
    if (x >= lo[i] && x <= hi[i] && y >= lo[j] && y <= hi[j]) {
        q[i] = x;
        q[j] = y;
        return;
    }
    double best = HUGE_VAL;
    for (int e = 0; e < 4; e++) {
        int ax = e < 2 ? j : i, ox = e < 2 ? i : j; /* the edge runs along ax at ox = lo or hi */
        double fix = (e & 1) ? hi[ox] : lo[ox], v = ox == i ? x : y;
        if ((e & 1) ? v <= fix : v >= fix) continue; /* the unconstrained point is not beyond this edge */
        double ra = sqrt((a[ox] - fix) * (a[ox] - fix) + da * da), rc = sqrt((c[ox] - fix) * (c[ox] - fix) + dc * dc);
        double sv = ra + rc > 1e-12 ? (a[ax] * rc + c[ax] * ra) / (ra + rc) : a[ax];
        if (sv < lo[ax]) sv = lo[ax];
        if (sv > hi[ax]) sv = hi[ax];
        double cand[3];
        cand[k] = lo[k];
        cand[ax] = sv;
        cand[ox] = fix;
        double d = best == HUGE_VAL && ((x < lo[i] || x > hi[i]) != (y < lo[j] || y > hi[j]))
                       ? 0 /* the only candidate */
                       : on_dist3(a, cand) + on_dist3(cand, c);
        if (d < best) {
            best = d;
            memcpy(q, cand, sizeof cand);
        }
    }
}

#endif
