/*
 * rules.c -- the crowd's rules of the road: each moving agent's preferred velocity after its path
 * (follow.c) meets its neighbours. Deadlock breaking between walls (backing off for an agent that has
 * the way), keeping right in open space, arrived agents making room for a goal they cover, a planning
 * agent's drift, and a tiny fixed nudge per agent that breaks exact symmetry. Run by the frame
 * (crowd.c) between the neighbour search and the avoidance.
 */
#include "crowd.h"
#include "tree.h"

/* A tiny turn of the preferred velocity, the same for an agent every frame: perfectly symmetric
 * crowds (a sphere swapping to its antipodes) would otherwise meet head on in ORCA's dead centre. */
static on_v3 nudge(on_v3 v, uint32_t slot)
{
    double l = v3_len(v);
    if (l <= 0) return v;
    uint64_t h = (uint64_t)(slot + 1) * 0x9E3779B97F4A7C15ull;
    double e[3];
    for (int i = 0; i < 3; i++) {
        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ull;
        e[i] = (double)(h >> 11) / 9007199254740992.0 - 0.5;
    }
    on_v3 w = v3_add(v, v3_scale(v3(e[0], e[1], e[2]), 2e-3 * l));
    return v3_scale(w, l / v3_len(w));
}

#define STILL_FRAMES 20   /* frames without progress before an agent met head on looks for who has the way */
#define JAM_FRAMES 45     /* the same in any other jam */
#define YIELD_FRAMES 90   /* frames it then backs off when a neighbour has the way */
#define WEDGE_GAP 0.25   /* leaves beyond touching: two agents of one way wedged at a passage's lip */
#define WEDGE_FRAMES 9    /* frames without progress before the one behind steps back (15 until session 24) */
#define WEDGE_YIELD 20    /* frames it steps back */
#define HOLD_RANGE 10     /* leaves beyond touching within which an oncoming agent with the way holds one back */
#define HOLD_COS 0.5      /* "ahead": within 60 degrees of its way */
#define BW_RANGE 6        /* leaves beyond its radius within which a passage's opposite walls are looked for */

/* Whether the agent's neighbours from the k-th on (the k-th at squared distance d2 from it, failing a
 * loop's test) all lie farther than their radius plus `extra` beyond its own: then the loop, which
 * skips every one that far, stops. a->nbr comes nearest first (proximity.c orders them by the squared
 * distance of their centres, the sum computed as it is here), so it is enough that the k-th lies that
 * far for the largest radius among them, by a margin far above rounding. Asked once a loop, at the
 * first neighbour that fails (a crowd of one radius stops there). */
static int rest_beyond(const on_crowd *c, const on_agent *a, int k, double d2, double extra)
{
    double r = 0;
    for (int j = k; j < a->nnbr; j++) {
        double ro = c->hot[a->nbr[j]].radius;
        r = ro > r ? ro : r;
    }
    double far = a->radius + r + extra;
    return d2 > far * far * (1 + 1e-6);
}

/* The direction of segment seg of an agent's path (not its velocity: a backing agent still faces its way). */
on_v3 on_rules_path_dir(const on_agent *o, size_t seg)
{
    if (o->npath < 2) return v3(0, 0, 0);
    size_t s = seg + 1 < o->npath ? seg : o->npath - 2;
    on_v3 d = v3(o->path[3 * s + 3] - o->path[3 * s], o->path[3 * s + 4] - o->path[3 * s + 1],
                 o->path[3 * s + 5] - o->path[3 * s + 2]);
    double l = v3_len(d);
    return l > 0 ? v3_scale(d, 1 / l) : d;
}

/* Right of way between two agents meeting head on: to the one heading toward +x (when the way runs
 * mostly along x; else +y, else +z). The same for every agent of a group going one way through a
 * passage, so a whole group passes while the other waits (an order by id would let the groups'
 * members win in turn, and both groups push into the passage). */
static int has_way(on_v3 mine, on_v3 theirs)
{
    on_v3 d = v3_sub(mine, theirs);
    double ax = fabs(d.x), ay = fabs(d.y), az = fabs(d.z);
    double k = ax >= ay && ax >= az ? d.x : ay >= az ? d.y : d.z;
    return k > 0;
}

/* A passage: blocked space on two opposite sides within BW_RANGE leaves of the agent's sphere (a tunnel,
 * its mouth, a door's frame), not a wall or a pillar on one side. */
static int between_walls(const on_agent *a, double scale)
{
    on_v3 q[ON_CROWD_MAX_WALLS], n[ON_CROWD_MAX_WALLS];
    double d[ON_CROWD_MAX_WALLS];
    int nw = on_boundary_planes(a, a->pos, a->radius + BW_RANGE * scale, q, n, d, ON_CROWD_MAX_WALLS);
    for (int i = 0; i < nw; i++)
        for (int j = i + 1; j < nw; j++)
            if (v3_dot(n[i], n[j]) < -0.5) return 1;
    return 0;
}

/* Deadlock breaking, between walls only (in open space ORCA and keep_right find a way): an agent
 * whose distance left along its path has not shrunk for STILL_FRAMES, with a neighbour close by
 * (within two leaves of touching) coming the other way that has the way, backs off along its path for
 * YIELD_FRAMES; so does an agent close behind one of its own way backing off (the group clears the
 * passage together). A one-lane tunnel met from both ends: ORCA alone shares the lane and holds both.
 * Before that, holding back: an agent in a passage with an oncoming agent ahead (within HOLD_RANGE
 * leaves of touching, 60 degrees of its way) that has the way backs out of the passage along its path
 * (at half its top speed), and once out of it holds (a preferred velocity of 0) while that agent is
 * still ahead, instead of entering to meet it head on (tunnel at seeds 1-20: 83.1 % in time before
 * holding, 93.1 % holding where it stood: the group without the way stood in the tunnel's mouth and
 * the other group could not get out past it; 96.9 % backing out, 97.5 % with the wedge rule; held
 * anywhere between walls, mixed radii had agents held 322 frames by a pillar, hence the passage's
 * test; 99.4 % with the wedge found after 9 frames without progress instead of 15: the 4 late agents
 * were of three agents of one way pressing into the narrow part's lip together, late by 4-30 frames;
 * after 5, 7, 8, 10 or 12 frames: 158, 156, 158, 155, 154 of 160). Every agent reads its
 * neighbours' hot copies of the frame's start (crowd.h: on_hot, crowd.c), so the order agents are visited in, and the
 * threads, change nothing. */
static on_v3 follow_or_yield(const on_crowd *c, on_agent *a)
{
    double scale = c->t->p.scale;
    if (a->yield > 0) {
        a->yield--;
        return on_follow_retreat(a, scale);
    }
    on_v3 v = a->fpref; /* on_follow_pref, run in the frame's first phase */
    if (a->togo < a->togo_best - 0.1 * scale) {
        a->togo_best = a->togo;
        a->still = 0;
    } else
        a->still++;
    if (a->nwalls == 0) return v;
    on_v3 mine = on_rules_path_dir(a, a->seg);
    int tried = 0;
    for (int k = 0; k < a->nnbr; k++) {
        const on_hot *o = &c->hot[a->nbr[k]];
        if (o->state != ON_CROWD_MOVING) continue;
        on_v3 d = v3_sub(o->pos, a->pos);
        double gap = v3_len(d) - a->radius - o->radius;
        if (gap >= 2 * scale) {
            if (!tried++ && rest_beyond(c, a, k, v3_len2(d), 2 * scale)) break;
            continue;
        }
        /* its way as the frame found it (the snapshot's) */
        on_v3 theirs = o->dir;
        double same = v3_dot(mine, theirs);
        int yield = 0, head_on = 1, frames = YIELD_FRAMES;
        if (same > 0.5 && (o->flags & ON_HOT_YIELD) && (o->flags & ON_HOT_HEAD_ON) && v3_dot(d, mine) > 0)
            yield = 1; /* one of mine ahead backs off from a head-on meeting */
        else if (same < -0.5) /* head on: the way by direction */
            yield = a->still >= STILL_FRAMES && o->still >= STILL_FRAMES / 2 && v3_dot(d, mine) > 0 &&
                    !has_way(mine, theirs);
        else if (same > 0.5 && v3_dot(d, mine) > 0 && gap < WEDGE_GAP * scale && a->still >= WEDGE_FRAMES &&
                 o->still >= WEDGE_FRAMES / 2) {
            /* wedged behind one of mine (two agents of one way side by side at a narrow part's lip, each
             * needing the other's place to enter): the one behind steps back a little, at once; the
             * jam rule below waited 45 frames, then backed off 90 (tunnel's default layout: one agent
             * held 340 frames outside while the other group's wedge lasted); after WEDGE_FRAMES */
            yield = 1;
            head_on = 0;
            frames = WEDGE_YIELD;
        } else { /* any other jam (a crowd pressing through a door): the way to the lower id, later */
            yield = a->still >= JAM_FRAMES && o->still >= JAM_FRAMES / 2 && o->id < a->id;
            head_on = 0;
        }
        if (yield) {
            a->yield = frames;
            a->yield_head_on = head_on;
            a->still = 0;
            a->togo_best = INFINITY;
            return on_follow_retreat(a, scale);
        }
    }
    /* holding back: an oncoming agent that has the way, ahead within HOLD_RANGE leaves of touching */
    tried = 0;
    for (int k = 0; k < a->nnbr; k++) {
        const on_hot *o = &c->hot[a->nbr[k]];
        if (o->state != ON_CROWD_MOVING || (o->flags & ON_HOT_YIELD)) continue;
        on_v3 d = v3_sub(o->pos, a->pos);
        double dl = v3_len(d);
        if (dl - a->radius - o->radius >= HOLD_RANGE * scale) {
            if (!tried++ && rest_beyond(c, a, k, v3_len2(d), HOLD_RANGE * scale)) break;
            continue;
        }
        if (v3_dot(d, mine) < HOLD_COS * dl) continue;
        on_v3 theirs = o->dir;
        if (v3_dot(mine, theirs) < -0.5 && !has_way(mine, theirs)) {
            /* in the passage it backs out (held still there it blocked the other group's way out); out
             * of it, held once, it waits */
            if (between_walls(a, scale)) {
                a->hold = 1;
                return on_follow_retreat(a, scale);
            }
            return a->hold ? v3(0, 0, 0) : v;
        }
    }
    a->hold = 0;
    return v;
}

/* Keep right: with an agent ahead (within 60 degrees of its heading) coming the other way, within four
 * leaves of touching, the preferred velocity turns toward its right (about the world's y axis; x for a
 * vertical heading), so that two agents meeting head on in a lane pass on either side instead of
 * stopping face to face, which ORCA's exactly symmetric answer would do; and a crowd meeting in one
 * place (a sphere swapping to its antipodes) turns about it as one, instead of jamming in its centre
 * (within two leaves and 37 degrees, 73 of 100 agents of a sphere swap arrived in time, one stuck 317
 * frames; with four and 60, 100 in time, none stuck). The turn is atan(KR_TURN), 27 degrees; in open
 * space (no wall near) an agent without progress for KR_JAM_FRAMES turns atan(KR_JAM_TURN), 45
 * degrees: in a sphere's centre, where every agent meets oncoming ones from all sides, 27 degrees
 * left the vortex too slow to form since ORCA reads 8 neighbours (session 23): the last agents stood
 * in the centre up to 325 frames (sphere at seeds 1-20: 1,948 of 2,000 in time, 2 stuck 305 and 324
 * frames; 21-40: 1,970, 1 stuck 325); with 45 degrees once jammed, 2,000 and 2,000, none stuck.
 * Not for an agent held back at a passage's mouth (a->hold, kept from its last frame between walls:
 * waiting outside a tunnel it presses into the other group coming out): turned harder there, tunnel's
 * seeds 1-20 went from 159 to 155 of 160 in time; the gentle turn leaves them as they were. Harder
 * in all of open space (36 or 39 degrees: 2,000 of 2,000 in the sphere too) changed the tunnel's
 * meetings at its mouths as much. */
#define KR_RANGE 4        /* leaves beyond touching within which an oncoming agent ahead turns one right */
#define KR_COS 0.5        /* "ahead": within 60 degrees of its heading */
#define KR_TURN 0.5       /* the turn's tangent */
#define KR_JAM_TURN 1.0   /* the turn's tangent in open space after KR_JAM_FRAMES without progress */
#define KR_JAM_FRAMES 10
static on_v3 keep_right(const on_crowd *c, const on_agent *a, on_v3 v)
{
    double l = v3_len(v);
    if (l <= 0) return v;
    int tried = 0;
    for (int k = 0; k < a->nnbr; k++) {
        const on_hot *o = &c->hot[a->nbr[k]];
        on_v3 d = v3_sub(o->pos, a->pos);
        double d2 = v3_len2(d), range = a->radius + o->radius + KR_RANGE * c->t->p.scale;
        if (d2 > range * range * (1 + 1e-12)) { /* (farther by far more than rounding) */
            if (!tried++ && rest_beyond(c, a, k, d2, KR_RANGE * c->t->p.scale)) break;
            continue;
        }
        double dl = sqrt(d2);
        if (dl <= 0 || dl > range) continue;
        if (v3_dot(v, d) < KR_COS * l * dl || v3_dot(o->pref, v) >= 0) continue;
        on_v3 right = v3_cross(v, v3(0, 1, 0));
        if (v3_len2(right) < 1e-6 * l * l) right = v3_cross(v, v3(1, 0, 0));
        double turn = a->nwalls == 0 && !a->hold && a->still >= KR_JAM_FRAMES ? KR_JAM_TURN : KR_TURN;
        right = v3_scale(right, turn * l / v3_len(right));
        on_v3 w = v3_add(v, right);
        return v3_scale(w, l / v3_len(w));
    }
    return v;
}

/* Making room: an arrived agent holds where it stopped, and another agent's goal may lie closer to it
 * than their radii allow the other to come (two goals 0.46 leaf apart: door seed 18, one agent never
 * arrived). An arrived agent steps away from the goal of a neighbour still on its way that it covers
 * (closer to it than their radii together), at up to half its top speed, braking to stop where the
 * goal is clear; the nearest such goal first. */
static on_v3 make_room(const on_crowd *c, const on_agent *a)
{
    for (int k = 0; k < a->nnbr; k++) {
        const on_hot *o = &c->hot[a->nbr[k]];
        if (o->state != ON_CROWD_MOVING && o->state != ON_CROWD_PLANNING) continue;
        double need = a->radius + o->radius + 0.05 * c->t->p.scale;
        on_v3 d = v3_sub(a->pos, c->agents[a->nbr[k]].goal); /* (no phase writes a goal) */
        double l = v3_len(d);
        if (l >= need) continue;
        double sp = 0.5 * a->max_speed, stop = sqrt(a->max_accel * (need - l));
        if (l <= 1e-9 * c->t->p.scale) d = v3_sub(a->pos, o->pos); /* on it: away from the one coming */
        double dl = v3_len(d);
        if (dl <= 0) continue;
        return v3_scale(d, (stop < sp ? stop : sp) / dl);
    }
    return v3(0, 0, 0);
}

void on_rules_reset(on_agent *a)
{
    a->togo_best = INFINITY;
    a->still = a->yield = 0;
    a->hold = 0;
    a->yield_head_on = 0;
}

on_v3 on_rules_pref(const on_crowd *c, on_agent *a, uint32_t slot)
{
    on_v3 v = v3(0, 0, 0);
    if (a->state == ON_CROWD_ARRIVED) v = make_room(c, a);
    else if (a->state == ON_CROWD_MOVING) v = keep_right(c, a, follow_or_yield(c, a));
    else if (a->state == ON_CROWD_PLANNING && c->p.drift > 0) {
        on_v3 d = v3_sub(a->goal, a->pos);
        double l = v3_len(d);
        double sp = c->p.drift * a->max_speed, stop = sqrt(a->max_accel * l);
        if (stop < sp) sp = stop;
        if (l > a->arrive_dist) v = v3_scale(d, sp / l);
    }
    return nudge(v, slot);
}
