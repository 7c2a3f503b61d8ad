/*
 * avoidance.c -- an agent's new velocity: ORCA in 3D, then made safe and reachable.
 *
 * First ORCA (lp.c): one half-space of velocities per neighbour, reciprocal (each agent takes half of
 * the change that avoids a collision within time_horizon; RVO2-3D's construction), and one per wall of
 * its local boundary, one-sided (the agent alone keeps its distance: no approach faster than its gap
 * over time_horizon_obst), inside the ball of its top speed, closest to its preferred velocity. When
 * they leave no velocity, the walls stay hard and the largest violation of the others is minimised.
 * Then the safe step: of the velocities its acceleration reaches this frame (a ball of max_accel * dt
 * about its velocity), inside its turn limit (a pyramid about its heading inside the cone of
 * max_turn_rate * dt) and top speed, the one closest to ORCA's answer that approaches no wall faster
 * than it can brake within its gap, and no neighbour faster than it can brake within half theirs (the
 * neighbour brakes for the other half). The approach speed u allowed toward a wall at a gap s meets
 * u (dt + top / (2 accel)) <= s (top: the fastest speed it can reach this frame), the normal part of
 * its stopping distance when it brakes along its heading, which the turn limit leaves it; toward a
 * neighbour u dt + u^2 / (2 accel) <= s. So braking in the next frame is allowed too: a gap never
 * closes below zero. When the walls' rules cannot all be met, the agent brakes at full acceleration
 * along its heading (a->fallback), which keeps them; when the neighbours' cannot, the least largest
 * violation of theirs with the walls' kept.
 */
#include "crowd.h"
#include "tree.h"

#include <string.h>

/* The neighbours ORCA's program reads, the nearest of the up to max_neighbours found (DetourCrowd
 * keeps 6 in all). Fewer planes, a shorter program; the safe step reads them all. bench/crowd.c's
 * 1,000 agents: 12.29 -> 11.21 M instructions a frame; bench/crowd.lua's scenarios: 0 overlaps, 0
 * wall entries, every agent in time, as with 16 (docs/benchmarks.md, session 23). */
#define AVOID_ORCA_NEIGHBOURS 8

double on_brake_speed(double s, double accel, double dt)
{
    if (s <= 0) return 0;
    return accel * (sqrt(dt * dt + 2 * s / accel) - dt);
}

/* RVO2-3D's half-space for agent a against b (reciprocal: a takes half). */
static on_plane orca_plane(const on_agent *a, const on_hot *b, double tau, double dt)
{
    on_v3 rp = v3_sub(b->pos, a->pos), rv = v3_sub(a->vel, b->vel);
    double d2 = v3_len2(rp), cr = a->radius + b->radius, cr2 = cr * cr;
    on_plane pl;
    on_v3 u;
    if (d2 > cr2) {
        on_v3 w = v3_sub(rv, v3_scale(rp, 1.0 / tau));
        double wl2 = v3_len2(w), dp = v3_dot(w, rp);
        if (dp < 0 && dp * dp > cr2 * wl2) {
            /* the cut-off sphere */
            double wl = sqrt(wl2);
            on_v3 uw = wl > 0 ? v3_scale(w, 1.0 / wl) : v3(1, 0, 0);
            pl.n = uw;
            u = v3_scale(uw, cr / tau - wl);
        } else {
            /* the cone's side */
            double A = d2, B = v3_dot(rp, rv);
            double C = v3_len2(rv) - v3_len2(v3_cross(rp, rv)) / (d2 - cr2);
            double disc = B * B - A * C;
            double t = (B + sqrt(disc > 0 ? disc : 0)) / A;
            on_v3 ww = v3_sub(rv, v3_scale(rp, t));
            double wwl = v3_len(ww);
            on_v3 uww = wwl > 0 ? v3_scale(ww, 1.0 / wwl) : v3(1, 0, 0);
            pl.n = uww;
            u = v3_scale(uww, cr * t - wwl);
        }
    } else {
        /* already overlapping: apart within this frame */
        on_v3 w = v3_sub(rv, v3_scale(rp, 1.0 / dt));
        double wl = v3_len(w);
        on_v3 uw = wl > 0 ? v3_scale(w, 1.0 / wl) : v3(1, 0, 0);
        pl.n = uw;
        u = v3_scale(uw, cr / dt - wl);
    }
    pl.p = v3_add(a->vel, v3_scale(u, 0.5));
    return pl;
}

/* Plane i of the safe step: normal n, point p (about the origin) kept in raw[i] for the fallback, and
 * in pl[i] about the velocity c when shift (what on_lp3 would do to every plane for each program in
 * the ball about c: done once, as it did, p - c; with c zero it did not shift, nor does this). */
static void safe_plane(on_plane *pl, on_v3 *raw, size_t i, on_v3 n, on_v3 p, on_v3 c, int shift)
{
    pl[i].n = n;
    raw[i] = p;
    pl[i].p = shift ? v3_sub(p, c) : p;
}

void on_avoid_select(const on_avoid_params *pp, on_agent *agents, const on_hot *hot, uint32_t self, const on_tree *t)
{
    on_agent *a = &agents[self];
    double dt = pp->dt;
    double margin = 1e-7 * a->radius;
    on_plane pl[ON_CROWD_MAX_PLANES], scratch[ON_CROWD_MAX_PLANES];
    on_v3 raw[ON_CROWD_MAX_PLANES];
    on_v3 wq[ON_CROWD_MAX_WALLS], wn[ON_CROWD_MAX_WALLS];
    double wd[ON_CROWD_MAX_WALLS];
    double look = on_agent_lookahead(a, dt);
    double within = a->radius + (look > a->max_speed * pp->tau_obst ? look : a->max_speed * pp->tau_obst);
    int nw = a->bound_valid ? on_boundary_planes(a, a->pos, within, wq, wn, wd, ON_CROWD_MAX_WALLS) : 0;
    (void)t;
    a->nwalls = nw;
    a->fallback = 0;

    /* ORCA */
    size_t m = 0;
    for (int i = 0; i < nw; i++) {
        double s = wd[i] - a->radius;
        double allow = s >= 0 ? s / pp->tau_obst : s / dt;
        pl[m].n = wn[i];
        pl[m].p = v3_scale(wn[i], -allow);
        m++;
    }
    size_t hard = m;
    /* ORCA's half-spaces for the nearest AVOID_ORCA_NEIGHBOURS only (a->nbr is nearest first); the safe
     * step below still brakes for every listed neighbour, which is what keeps the gaps */
    int norca = a->nnbr < AVOID_ORCA_NEIGHBOURS ? a->nnbr : AVOID_ORCA_NEIGHBOURS;
    for (int k = 0; k < norca; k++) pl[m++] = orca_plane(a, &hot[a->nbr[k]], pp->tau, dt);
    on_v3 v;
    size_t fail = on_lp3(pl, m, v3(0, 0, 0), a->max_speed, a->pref, 0, &v);
    if (fail < m) on_lp4(pl, m, hard, fail, v3(0, 0, 0), a->max_speed, &v, scratch);

    /* the safe step: the motion limits first (hard), then the walls, then the neighbours */
    m = 0;
    double w = v3_len(a->vel);
    /* the safe step's programs lie in the ball about the velocity: their planes are kept about it */
    on_v3 c0 = a->vel;
    int shift = !(c0.x == 0 && c0.y == 0 && c0.z == 0);
    double turn = a->max_turn * dt;
    if (w >= a->max_accel * dt && turn < 1.5) {
        /* a square pyramid about the heading whose edges lie inside the cone of half-angle turn */
        on_v3 h = v3_scale(a->vel, 1.0 / w);
        on_v3 e1 = fabs(h.x) < 0.9 ? v3(1, 0, 0) : v3(0, 1, 0);
        e1 = v3_cross(h, e1);
        e1 = v3_scale(e1, 1.0 / v3_len(e1));
        on_v3 e2 = v3_cross(h, e1);
        if (a->turn_of != turn) a->turn_of = turn, a->turn_k = tan(turn) / sqrt(2.0) * (1 - 1e-9);
        double k = a->turn_k; /* (tan once for each turn limit) */
        on_v3 ns[4] = {v3_sub(v3_scale(h, k), e1), v3_add(v3_scale(h, k), e1), v3_sub(v3_scale(h, k), e2),
                       v3_add(v3_scale(h, k), e2)};
        for (int i = 0; i < 4; i++) {
            safe_plane(pl, raw, m, v3_scale(ns[i], 1.0 / v3_len(ns[i])), v3(0, 0, 0), c0, shift);
            m++;
        }
    }
    size_t motion0 = m, motion = m;
    /* Within its turn limit an agent brakes along its heading, not along a wall's normal: braking
     * at full acceleration from a velocity v of speed sp approaching a wall at u, it covers
     * u dt + u sp / (2 accel) toward it (the normal part of its stopping distance), more than
     * u dt + u^2 / (2 accel) when it slides along the wall. The wall's rule bounds that by the gap, at
     * the fastest speed it can reach this frame (top): a half-space inside that set. A velocity meeting
     * it, braked along its heading next frame, meets it again (the gap shrinks by u dt, the stopping
     * distance by more), so braking along the heading (the fallback) never enters a wall. */
    double top = w + a->max_accel * dt;
    if (top > a->max_speed) top = a->max_speed;
    double per_u = dt + top / (2 * a->max_accel);
    double reach = a->max_accel * dt * (1 - 1e-9);
    /* Speed only: the first pass leaves out the neighbours the agent moves away from faster than its
     * acceleration reaches (rp . vel > reach |rp|, not touching): their half-spaces hold on the whole
     * ball of velocities the program searches, by far more than rounding, so the program never reads
     * them as violated or binding, and its answer is the same bit for bit. The fallback (RVO's fourth
     * program) does read every half-space: when the first pass finds no velocity, the second runs
     * the program again with all of them (and fails as the first did). */
    double far2 = reach * (1 + 1e-6) * reach * (1 + 1e-6);
    /* Speed only, too: the first pass leaves out the neighbours so far that their half-space holds on
     * the whole ball. A neighbour's rule n . v >= -allow (n from it to the agent) is violated only
     * where n . v < -allow, and n . v >= -(w + reach) on the ball; allow grows with the gap, and
     * reaches u = (w + reach) (1 + 1e-6) at gap 2 (u^2 / accel + u dt) (on_brake_speed at half the
     * gap and half the acceleration, inverted), so beyond that gap (a little more: rounding) the
     * half-space holds by far more than rounding and the program's answer is the same bit for bit.
     * 1,000 agents of bench/crowd.c: most of the 16 neighbours lie beyond it. */
    double uf = (w + reach) * (1 + 1e-6) + 1e-9 * a->max_speed;
    double gfar = 2 * (uf * uf / a->max_accel + uf * dt) * (1 + 1e-6) + 1e-9 * a->radius;
    /* a->nbr comes nearest first (proximity.c: by the squared distance of the centres, the sum
     * computed as it is here): the first pass stops at the first neighbour left out by distance when
     * every one from it on lies beyond the reach of the largest radius among them, by a margin far
     * above rounding (asked once; a crowd of one radius stops there) */
    int tried = 0;
    on_v3 out;
    int ok = 0;
    for (int pass = 0; pass < 2; pass++) {
        m = motion = motion0;
        for (int i = 0; i < nw; i++) {
            double s = wd[i] - a->radius - margin;
            double allow = s >= 0 ? s / per_u : s / dt;
            safe_plane(pl, raw, m, wn[i], v3_scale(wn[i], -allow), c0, shift);
            m++;
        }
        for (int k = 0; k < a->nnbr; k++) {
            const on_hot *b = &hot[a->nbr[k]];
            on_v3 rp = v3_sub(a->pos, b->pos);
            if (pass == 0) {
                double d2 = v3_len2(rp), r = a->radius + b->radius + margin, rf = r + gfar;
                if (d2 > rf * rf * (1 + 1e-9)) {
                    if (!tried++) {
                        double rmax = 0;
                        for (int j = k; j < a->nnbr; j++) {
                            double rb = hot[a->nbr[j]].radius;
                            rmax = rb > rmax ? rb : rmax;
                        }
                        double rfm = a->radius + rmax + margin + gfar;
                        if (d2 > rfm * rfm * (1 + 1e-9) * (1 + 1e-6)) break;
                    }
                    continue;
                }
                double away = v3_dot(rp, a->vel);
                if (away > 0 && away * away > far2 * d2 && d2 > r * r * (1 + 1e-9)) continue;
            }
            double dist = v3_len(rp);
            if (dist <= 0) continue;
            double gap = dist - a->radius - b->radius - margin;
            /* half the gap and half the deceleration each (both closing); toward a neighbour braking
             * in its fallback against a wall last frame (ON_HOT_FALLBACK: crowd.c), the whole gap and the
             * full deceleration, as toward a wall (docs/crowd.md: measured, not proven) */
            double share = (b->flags & ON_HOT_FALLBACK) ? 1.0 : 0.5;
            double allow = gap >= 0 ? on_brake_speed(share * gap, share * a->max_accel, dt) : share * gap / dt;
            on_v3 nn = v3_scale(rp, 1.0 / dist);
            safe_plane(pl, raw, m, nn, v3_scale(nn, -allow), c0, shift);
            m++;
        }
        on_v3 vs = shift ? v3_sub(v, c0) : v;
        fail = on_lp3(pl, m, v3(0, 0, 0), reach, vs, 0, &out);
        if (shift) out = v3_add(out, c0);
        ok = fail == m;
        for (int it = 0; ok && it < 4 && v3_len2(out) > a->max_speed * a->max_speed; it++) {
            /* the top speed: a plane tangent to its sphere where the answer left it (kept hard, first) */
            on_v3 hw = v3_scale(out, 1.0 / v3_len(out));
            memmove(pl + motion + 1, pl + motion, (m - motion) * sizeof *pl);
            memmove(raw + motion + 1, raw + motion, (m - motion) * sizeof *raw);
            safe_plane(pl, raw, motion, v3_scale(hw, -1), v3_scale(hw, a->max_speed), c0, shift);
            m++, motion++;
            fail = on_lp3(pl, m, v3(0, 0, 0), reach, vs, 0, &out);
            if (shift) out = v3_add(out, c0);
            ok = fail == m;
        }
        if (ok) break;
    }
    if (!ok) {
        /* no velocity meets them all: within the motion limits (and the walls' rules when they can
         * be met), the least largest violation of the rest (RVO's fourth program) */
        a->fallback = 1;
        if (fail < motion + (size_t)nw) {
            /* the walls' rules cannot be met within the motion limits: brake along the heading */
            double k = w > 0 ? 1 - reach / w : 0;
            out = v3_scale(a->vel, k > 0 ? k : 0);
        } else {
            for (size_t i = 0; shift && i < m; i++) pl[i].p = raw[i]; /* (on_lp4 takes them about the origin) */
            on_lp4(pl, m, motion + (size_t)nw, fail, a->vel, reach, &out, scratch); /* walls kept hard */
        }
    }
    double s2 = v3_len2(out);
    if (s2 > a->max_speed * a->max_speed) out = v3_scale(out, a->max_speed / sqrt(s2));
    a->nvel = out;
}

double on_agent_lookahead(const on_agent *a, double dt)
{
    return a->max_speed * dt + a->max_speed * a->max_speed / (2 * a->max_accel);
}
