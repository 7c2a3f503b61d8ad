/*
 * lp.c -- the linear program of ORCA in 3D (van den Berg, Guy, Lin, Manocha, "Reciprocal n-body
 * collision avoidance", 2011): the point of a ball closest to a preferred velocity that meets a set of
 * half-spaces, by the incremental algorithm (a half-space the current answer violates moves the answer
 * onto its plane: a 2D program there, which in turn solves 1D programs on lines), and, when the set is
 * empty, the point that minimises the largest violation of the soft half-spaces while meeting the hard
 * ones. Deterministic: the half-spaces are taken in the order given.
 */
#include "crowd.h"

#define LP_EPS 1e-12

/* On the line (point lp, unit direction ld) inside the ball of radius r about the origin, meeting
 * planes[0..upto): the point closest to opt (or farthest along opt with direction_opt). */
static int lp1(const on_plane *planes, size_t upto, on_v3 lp, on_v3 ld, double r, on_v3 opt, int direction_opt,
               on_v3 *result)
{
    double dot = v3_dot(lp, ld);
    double disc = dot * dot + r * r - v3_len2(lp);
    if (disc < 0) return 0;
    double sq = sqrt(disc), tl = -dot - sq, tr = -dot + sq;
    for (size_t j = 0; j < upto; j++) {
        double num = v3_dot(v3_sub(planes[j].p, lp), planes[j].n);
        double den = v3_dot(ld, planes[j].n);
        if (fabs(den) <= LP_EPS) {
            if (num > 0) return 0; /* parallel, and the line lies outside it */
            continue;
        }
        double t = num / den;
        if (den > 0) tl = t > tl ? t : tl;
        else tr = t < tr ? t : tr;
        if (tl > tr) return 0;
    }
    double t;
    if (direction_opt) t = v3_dot(opt, ld) > 0 ? tr : tl;
    else {
        t = v3_dot(ld, v3_sub(opt, lp));
        t = t < tl ? tl : t > tr ? tr : t;
    }
    *result = v3_add(lp, v3_scale(ld, t));
    return 1;
}

/* On plane i inside the ball, meeting planes[0..i). */
static int lp2(const on_plane *planes, size_t i, double r, on_v3 opt, int direction_opt, on_v3 *result)
{
    const on_plane *pl = &planes[i];
    double dist = v3_dot(pl->p, pl->n);
    double rr = r * r - dist * dist;
    if (rr < 0) return 0;
    on_v3 centre = v3_scale(pl->n, dist);
    if (direction_opt) {
        on_v3 po = v3_sub(opt, v3_scale(pl->n, v3_dot(opt, pl->n)));
        double l2 = v3_len2(po);
        *result = l2 <= LP_EPS ? centre : v3_add(centre, v3_scale(po, sqrt(rr / l2)));
    } else {
        on_v3 po = v3_sub(opt, v3_scale(pl->n, v3_dot(opt, pl->n) - dist));
        on_v3 off = v3_sub(po, centre);
        double l2 = v3_len2(off);
        *result = l2 > rr ? v3_add(centre, v3_scale(off, sqrt(rr / l2))) : po;
    }
    for (size_t j = 0; j < i; j++) {
        if (v3_dot(planes[j].n, v3_sub(planes[j].p, *result)) <= 0) continue;
        on_v3 cr = v3_cross(planes[j].n, pl->n);
        double c2 = v3_len2(cr);
        if (c2 <= LP_EPS) return 0; /* parallel planes: j cuts plane i away */
        on_v3 ld = v3_scale(cr, 1.0 / sqrt(c2));
        on_v3 ln = v3_cross(cr, pl->n);
        double den = v3_dot(ln, planes[j].n);
        if (fabs(den) <= LP_EPS) return 0;
        on_v3 lp = v3_add(pl->p, v3_scale(ln, v3_dot(v3_sub(planes[j].p, pl->p), planes[j].n) / den));
        if (!lp1(planes, j, lp, ld, r, opt, direction_opt, result)) return 0;
    }
    return 1;
}

/* In the ball about the origin. */
static size_t lp3o(const on_plane *planes, size_t n, double r, on_v3 opt, int direction_opt, on_v3 *result)
{
    if (direction_opt) *result = v3_scale(opt, r);
    else {
        double l2 = v3_len2(opt);
        *result = l2 > r * r ? v3_scale(opt, r / sqrt(l2)) : opt;
    }
    for (size_t i = 0; i < n; i++) {
        if (v3_dot(planes[i].n, v3_sub(planes[i].p, *result)) <= 0) continue;
        on_v3 keep = *result;
        if (!lp2(planes, i, r, opt, direction_opt, result)) {
            *result = keep;
            return i;
        }
    }
    return n;
}

size_t on_lp3(const on_plane *planes, size_t n, on_v3 c, double r, on_v3 opt, int direction_opt, on_v3 *result)
{
    /* the planes are given about the caller's origin: shifted to the ball's centre in place would
     * change the caller's array, so they are shifted on the fly by shifting what is compared */
    if (c.x == 0 && c.y == 0 && c.z == 0) return lp3o(planes, n, r, opt, direction_opt, result);
    on_plane sh[ON_CROWD_MAX_PLANES]; /* (callers never give more) */
    if (n > ON_CROWD_MAX_PLANES) n = ON_CROWD_MAX_PLANES;
    for (size_t i = 0; i < n; i++) sh[i].p = v3_sub(planes[i].p, c), sh[i].n = planes[i].n;
    size_t k = lp3o(sh, n, r, direction_opt ? opt : v3_sub(opt, c), direction_opt, result);
    *result = v3_add(*result, c);
    return k;
}

void on_lp4(const on_plane *planes, size_t n, size_t first_soft, size_t fail, on_v3 c, double r, on_v3 *result,
            on_plane *scratch)
{
    double worst = 0;
    if (fail < first_soft) fail = first_soft;
    for (size_t i = fail; i < n; i++) {
        const on_plane *pi = &planes[i];
        if (v3_dot(pi->n, v3_sub(pi->p, *result)) <= worst) continue;
        size_t m = 0;
        for (size_t j = 0; j < first_soft; j++) scratch[m++] = planes[j]; /* the hard ones stay */
        for (size_t j = first_soft; j < i; j++) {
            const on_plane *pj = &planes[j];
            on_plane q;
            on_v3 cr = v3_cross(pj->n, pi->n);
            if (v3_len2(cr) <= LP_EPS) {
                if (v3_dot(pi->n, pj->n) > 0) continue; /* same direction: j adds nothing */
                q.p = v3_scale(v3_add(pi->p, pj->p), 0.5);
            } else {
                on_v3 ln = v3_cross(cr, pi->n);
                double den = v3_dot(ln, pj->n);
                if (fabs(den) <= LP_EPS) continue;
                q.p = v3_add(pi->p, v3_scale(ln, v3_dot(v3_sub(pj->p, pi->p), pj->n) / den));
            }
            on_v3 d = v3_sub(pj->n, pi->n);
            double l = v3_len(d);
            if (l <= LP_EPS) continue;
            q.n = v3_scale(d, 1.0 / l);
            scratch[m++] = q;
        }
        on_v3 keep = *result;
        if (on_lp3(scratch, m, c, r, pi->n, 1, result) < m) *result = keep;
        worst = v3_dot(pi->n, v3_sub(pi->p, *result));
    }
}
