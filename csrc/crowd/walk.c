/*
 * walk.c -- the smoother's update for the slots of a walk (walk.h): lua/octonav/smoother.lua's
 * advance in C. Every comparison and every floating-point operation is the Lua one's, in its order, so
 * that a navigator walked here and one walked by Lua at the same positions head for the same waypoints
 * (spec/117-walk_c_spec.lua compares them).
 */
#include "walk.h"

#include <math.h>
#include <stdlib.h>

double on_walk_dist(const double a[3], const double b[3])
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

on_status on_walk_reserve(on_walk_slot *s, uint32_t n)
{
    if (n <= s->cap) return ON_SUCCESS;
    uint32_t cap = s->cap ? s->cap : 8;
    while (cap < n) {
        if (cap > UINT32_MAX / 2) return ON_FAILURE | ON_NO_MEMORY;
        cap *= 2;
    }
    double *p = realloc(s->pts, (size_t)cap * 3 * sizeof *p);
    if (!p) return ON_FAILURE | ON_NO_MEMORY;
    s->pts = p;
    s->cap = cap;
    return ON_SUCCESS;
}

static const double *pt(const on_walk_slot *s, uint32_t i) { return s->pts + 3 * (size_t)(i - 1); }

static int same(const double *a, const double *b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

/* The target after stepping over the waypoints the agent stands on (recheck > 0: the input's promise). */
static uint32_t stand_on(const on_walk_slot *s, const double pos[3])
{
    uint32_t i = s->st.i, n = s->n;
    if (s->recheck > 0)
        while (i < n && same(pt(s, i), pos)) i++;
    return i;
}

/* Does the same check from the same place, or one not near enough yet, stop the scan at j = i + 1? */
static int held_back(const on_walk_slot *s, const on_walk_state *st, uint32_t i, const double pos[3])
{
    if (st->fail_j != i + 1) return 0;
    if (same(st->fail_pos, pos)) return 1;
    return s->recheck > 0 && on_walk_dist(pos, pt(s, i)) > st->fail_d;
}

int on_walk_wants_check(const on_walk_slot *s, const double pos[3])
{
    uint32_t i = stand_on(s, pos);
    return i < s->n && s->budget > 0 && !held_back(s, &s->st, i, pos);
}

uint32_t on_walk_advance(const on_walk_slot *s, const on_tree *t, const double pos[3], uint32_t max_checks,
                         on_walk_state *out)
{
    uint32_t budget = s->budget < max_checks ? s->budget : max_checks;
    uint32_t n = s->n, used = 0;
    *out = s->st;
    uint32_t i = stand_on(s, pos);
    while (i < n && used < budget) {
        uint32_t j = i + 1;
        if (held_back(s, out, i, pos)) break;
        used++;
        if (on_ok(on_tree_visible(t, pos, pt(s, j)))) {
            i = j;
        } else {
            out->fail_pos[0] = pos[0];
            out->fail_pos[1] = pos[1];
            out->fail_pos[2] = pos[2];
            out->fail_j = j;
            if (s->recheck > 0) out->fail_d = s->recheck * on_walk_dist(pos, pt(s, i));
            break;
        }
    }
    /* no check left: from a point of the path the next one is visible, so an agent standing on its
     * target steps on for free */
    if (i < n && used >= budget && same(pt(s, i), pos)) i++;
    out->i = i;
    return used;
}
