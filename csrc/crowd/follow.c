/*
 * follow.c -- path following: an agent's preferred velocity from its path.
 *
 * The agent's place on its path is the point nearest it on the segment it follows or one of the next
 * three (it never goes back). It steers at a point `look` further along the path, look being the
 * distance its turn rate needs to swing its heading round at its speed (speed / turn rate, at least
 * half a leaf): it starts rounding a corner that far before it, as an arc tangent to both legs would.
 * Its speed is what lets it meet every corner ahead at the corner's speed and stop at the goal, braking
 * at half its acceleration: a corner of turn angle phi is taken on an arc of radius
 * rho = e / (1 - cos(phi / 2)), whose middle lies e = half a leaf from both legs, at
 * min(top speed, turn rate * rho, sqrt(accel * rho)): the speed at which its turn rate and its
 * acceleration both follow the arc. Corners are rounded, never stopped at.
 */
#include "crowd.h"
#include "tree.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define FOLLOW_AHEAD 4 /* corners looked at ahead */

static on_v3 pt(const on_agent *a, size_t i) { return v3(a->path[3 * i], a->path[3 * i + 1], a->path[3 * i + 2]); }

/* Nearest point of segment [p, q] to x: its parameter in [0, 1]. */
static double nearest_on(on_v3 p, on_v3 q, on_v3 x)
{
    on_v3 d = v3_sub(q, p);
    double l2 = v3_len2(d);
    if (l2 <= 0) return 0;
    double t = v3_dot(v3_sub(x, p), d) / l2;
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

on_v3 on_follow_pref(on_agent *a, double scale)
{
    if (a->npath < 2) return v3(0, 0, 0);
    size_t last = a->npath - 2; /* the last segment */
    /* where it is along the path */
    size_t best = a->seg;
    double bt = 0, bd = INFINITY;
    for (size_t s = a->seg; s <= last && s <= a->seg + 3; s++) {
        double t = nearest_on(pt(a, s), pt(a, s + 1), a->pos);
        on_v3 x = v3_add(pt(a, s), v3_scale(v3_sub(pt(a, s + 1), pt(a, s)), t));
        double d = v3_len2(v3_sub(x, a->pos));
        if (d < bd) bd = d, best = s, bt = t;
    }
    a->seg = best;
    on_v3 x = v3_add(pt(a, best), v3_scale(v3_sub(pt(a, best + 1), pt(a, best)), bt));
    double speed = v3_len(a->vel);
    double look = speed / a->max_turn;
    if (look < 2 * a->radius) look = 2 * a->radius;
    if (look < 0.5 * scale) look = 0.5 * scale;
    look += sqrt(bd); /* pushed off its path (by others), it comes back gently */
    /* the point `look` ahead, and the speed every corner ahead allows */
    double brake = 0.5 * a->max_accel, e = 0.5 * scale;
    double want = a->max_speed;
    on_v3 carrot = x, from = x;
    double along = 0, left = look;
    int carrot_set = 0, corners = 0;
    for (size_t s = best; s <= last; s++) {
        on_v3 to = pt(a, s + 1);
        double l = v3_len(v3_sub(to, from));
        if (!carrot_set) {
            if (l >= left || s == last) {
                carrot = l > 0 ? v3_add(from, v3_scale(v3_sub(to, from), (l < left ? l : left) / l)) : to;
                carrot_set = 1;
            } else left -= l;
        }
        along += l;
        if (s < last && corners < FOLLOW_AHEAD) {
            on_v3 d0 = v3_sub(to, pt(a, s)), d1 = v3_sub(pt(a, s + 2), to);
            double q0 = v3_len2(d0), q1 = v3_len2(d1);
            if (q0 > 0 && q1 > 0 && 2 * brake * along > want * want * (1 + 1e-12)) {
                /* braking from it alone allows more than the speed wanted: no corner's speed can
                 * lower it (allow below is at least sqrt(2 brake along)); counted, its angle unread */
                corners++;
            } else if (q0 > 0 && q1 > 0) {
                double l0 = sqrt(q0), l1 = sqrt(q1);
                double c = v3_dot(d0, d1) / (l0 * l1);
                c = c > 1 ? 1 : c < -1 ? -1 : c;
                double phi = acos(c);
                if (phi > 1e-3) {
                    double rho = e / (1 - cos(0.5 * phi));
                    double vc = a->max_turn * rho;
                    double va = sqrt(a->max_accel * rho);
                    vc = va < vc ? va : vc;
                    double allow = sqrt(vc * vc + 2 * brake * along);
                    if (allow < want) want = allow;
                }
                corners++;
            }
        }
        from = to;
        if (carrot_set && corners >= FOLLOW_AHEAD) break;
    }
    /* stop at the goal: the distance left along the path (all of it when the loop ran to the end) */
    on_v3 goal = pt(a, a->npath - 1);
    double togo = 0;
    {
        on_v3 f = x;
        for (size_t s = best; s <= last; s++) {
            togo += v3_len(v3_sub(pt(a, s + 1), f));
            f = pt(a, s + 1);
        }
    }
    a->togo = togo;
    double stop = sqrt(2 * brake * togo);
    if (stop < want) want = stop;
    on_v3 dir = v3_sub(carrot, a->pos);
    /* on the last leg, clear of walls: straight for the goal (pushed aside by others, it does not come back to the
     * line first, which would bring every agent of a swap back to the same middle) */
    if (best == last && a->nwalls == 0) dir = v3_sub(goal, a->pos);
    double dl = v3_len(dir);
    if (dl <= 1e-12 * scale) return v3(0, 0, 0);
    return v3_scale(dir, want / dl);
}

on_v3 on_follow_retreat(const on_agent *a, double scale)
{
    if (a->npath < 2) return v3(0, 0, 0);
    double back = 2 * a->radius > scale ? 2 * a->radius : scale;
    size_t s = a->seg < a->npath - 1 ? a->seg : a->npath - 2;
    on_v3 from = v3_add(pt(a, s), v3_scale(v3_sub(pt(a, s + 1), pt(a, s)),
                                           nearest_on(pt(a, s), pt(a, s + 1), a->pos)));
    on_v3 target = pt(a, 0);
    for (;;) {
        on_v3 to = pt(a, s);
        double l = v3_len(v3_sub(to, from));
        if (l >= back) {
            target = v3_add(from, v3_scale(v3_sub(to, from), back / l));
            break;
        }
        back -= l;
        from = to;
        if (s == 0) {
            target = to;
            break;
        }
        s--;
    }
    on_v3 d = v3_sub(target, a->pos);
    double l = v3_len(d);
    if (l <= 1e-9 * scale) return v3(0, 0, 0);
    return v3_scale(d, 0.5 * a->max_speed / l);
}

/* One corner moved out to radius r from the boxes read around it (scratch->boxes): 1 when it moved. */
static int clear_corner(const on_tree *t, on_agent *scratch, double *v, double r)
{
    double orig[3] = {v[0], v[1], v[2]};
    scratch->pos = v3_from(v);
    if (on_boundary_read(t, scratch, 2 * r + t->p.scale) < 0) return 0;
    for (int pass = 0; pass < 4; pass++) {
        int moved = 0;
        for (size_t b = 0; b < scratch->nboxes; b++) {
            const double *bx = scratch->boxes + 6 * b;
            double q[3], d2 = 0;
            for (int i = 0; i < 3; i++) {
                q[i] = v[i] < bx[i] ? bx[i] : v[i] > bx[3 + i] ? bx[3 + i] : v[i];
                d2 += (v[i] - q[i]) * (v[i] - q[i]);
            }
            if (d2 >= r * r * (1 - 1e-9)) continue;
            double d = sqrt(d2);
            if (d > 1e-9 * r) {
                for (int i = 0; i < 3; i++) v[i] += (v[i] - q[i]) / d * (r - d);
            } else {
                /* on its surface (a path's corner on an edge of blocked space): out along every face
                 * it touches, r each */
                double push[3] = {0, 0, 0};
                int faces = 0;
                for (int i = 0; i < 3; i++) {
                    int side = fabs(v[i] - bx[i]) <= 1e-9 * (1 + fabs(v[i]))           ? -1
                               : fabs(v[i] - bx[3 + i]) <= 1e-9 * (1 + fabs(v[i])) ? 1
                                                                                    : 0;
                    if (!side) continue;
                    /* a face shared with another blocked cube is no edge of free space */
                    double probe[3], eps = 1e-6 * t->p.scale;
                    for (int j = 0; j < 3; j++) {
                        double lo = bx[j] + eps, hi = bx[3 + j] - eps;
                        probe[j] = v[j] < lo ? lo : v[j] > hi ? hi : v[j]; /* inside the face */
                    }
                    probe[i] = side < 0 ? bx[i] - eps : bx[3 + i] + eps;
                    on_cell pc;
                    if (on_failed(on_tree_locate(t, probe, &pc))) continue;
                    push[i] += side * r, faces++;
                }
                if (!faces) continue; /* wholly inside: left alone */
                for (int i = 0; i < 3; i++) v[i] += push[i];
            }
            moved = 1;
        }
        if (!moved) break;
    }
    on_cell cell;
    if (on_failed(on_tree_locate(t, v, &cell))) {
        v[0] = orig[0], v[1] = orig[1], v[2] = orig[2];
        return 0;
    }
    return v[0] != orig[0] || v[1] != orig[1] || v[2] != orig[2];
}

int on_follow_clear_path(const on_tree *t, on_agent *scratch, double **pts, size_t *n, size_t *cap, double r)
{
    /* the corners, and points every `step` along each segment: pushed out, kept when they moved */
    size_t np = *n;
    if (np < 2) return 0;
    double step = r < t->p.scale ? r : t->p.scale;
    size_t want = 0;
    for (size_t i = 0; i + 1 < np; i++) {
        double l = on_dist3(*pts + 3 * i, *pts + 3 * i + 3);
        double k = ceil(l / step);
        if (!(k < 1e7)) return 0; /* (a path that long keeps its corners only) */
        want += (size_t)k;
    }
    want += 1;
    double *out = malloc(want * 3 * sizeof *out);
    if (!out) return -1;
    size_t m = 0;
    memcpy(out, *pts, 3 * sizeof *out);
    m = 1;
    for (size_t i = 0; i + 1 < np; i++) {
        const double *a = *pts + 3 * i, *b = a + 3;
        size_t k = (size_t)ceil(on_dist3(a, b) / step);
        for (size_t j = 1; j <= k; j++) {
            double *v = out + 3 * m;
            double f = (double)j / (double)k;
            for (int d = 0; d < 3; d++) v[d] = a[d] + (b[d] - a[d]) * f;
            int corner = j == k;
            if (i + 2 == np && corner) { /* the goal stays */
                m++;
                continue;
            }
            int moved = clear_corner(t, scratch, v, r);
            if (moved || corner) m++;
        }
    }
    if (m > *cap) {
        double *q = realloc(*pts, m * 3 * sizeof *q);
        if (!q) {
            free(out);
            return -1;
        }
        *pts = q;
        *cap = m;
    }
    memcpy(*pts, out, m * 3 * sizeof *out);
    *n = m;
    free(out);
    return 0;
}
