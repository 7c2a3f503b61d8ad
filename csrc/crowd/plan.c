/*
 * plan.c -- the agents' paths: one query on the crowd's tree, sliced under a budget of expansions a
 * frame (params.plan_budget), serving the agents in the order they asked. An agent waiting is
 * PLANNING (crowd.c: it holds, or drifts toward its goal); a search that finishes gives it its path
 * (MOVING) or fails (FAILED, plan_status saying why). Detour's path queue in the same spirit.
 * Each search is for the agent's size (the query's radius: the path keeps ceil(radius / scale)
 * leaves from blocked space), so an agent of 4 leaves goes round a pillar where it fits instead of
 * along a point's path pushed out after (mixed radii: those pushed paths jammed); where no way fits
 * its rounded-up radius (an end too near a wall, a passage narrower), the search runs again for a
 * point, the path then pushed out to its radius (follow.c).
 */
#include "crowd.h"
#include "tree.h"

#include <stdlib.h>
#include <string.h>

on_agent *on_crowd_find(const on_crowd *c, uint32_t id, uint32_t *slot)
{
    uint32_t s = (id & 0xfffffu);
    if (!s || s > c->used) return NULL;
    on_agent *a = &c->agents[s - 1];
    if (a->id != id) return NULL;
    if (slot) *slot = s - 1;
    return a;
}

void on_plan_forget(on_crowd *c, uint32_t id)
{
    if (c->cur == id) c->cur = 0;
    uint32_t cap = c->p.max_agents, n = 0;
    for (uint32_t i = 0; i < c->qcount; i++) {
        uint32_t v = c->queue[(c->qhead + i) % cap];
        if (v != id) c->queue[(c->qhead + n++) % cap] = v;
    }
    c->qcount = n;
    on_agent *a = on_crowd_find(c, id, NULL);
    if (a) a->queued = 0;
}

void on_plan_request(on_crowd *c, uint32_t slot)
{
    on_agent *a = &c->agents[slot];
    if (c->cur == a->id) c->cur = 0;
    a->state = ON_CROWD_PLANNING;
    if (a->queued && c->cur != a->id) {
        /* already waiting: it will search for the goal it has then */
        for (uint32_t i = 0; i < c->qcount; i++)
            if (c->queue[(c->qhead + i) % c->p.max_agents] == a->id) return;
    }
    /* one entry an agent, so max_agents entries suffice */
    c->queue[(c->qhead + c->qcount) % c->p.max_agents] = a->id;
    c->qcount++;
    a->queued = 1;
}

/* the agent's record changed by the step: its slot noted for the frame (crowd.c takes its copy again) */
static void on_plan_changed(on_crowd *c, const on_agent *a)
{
    if (c->nchanged < c->p.max_agents) c->changed[c->nchanged++] = (uint32_t)(a - c->agents);
}

static int take_path(on_crowd *c, on_agent *a)
{
    size_t n = 0;
    on_query_info info;
    on_status s = on_query_finalize(c->q, NULL, 0, &n, &info);
    a->plan_status = s;
    c->st.plans++;
    c->st.plan_expansions += info.expansions;
    if (!on_ok(s) && !(s & ON_BUFFER_SMALL)) {
        a->state = ON_CROWD_FAILED;
        return 0;
    }
    if (n > a->path_cap) {
        double *p = realloc(a->path, n * 3 * sizeof *p);
        if (!p) {
            a->state = ON_CROWD_FAILED;
            a->plan_status = ON_FAILURE | ON_NO_MEMORY;
            return -1;
        }
        a->path = p;
        a->path_cap = n;
    }
    s = on_query_finalize(c->q, a->path, a->path_cap, &n, &info);
    a->plan_status = s;
    a->npath = n;
    a->dir_valid = 0; /* (the hot copy's way: crowd.c) */
    if (on_follow_clear_path(c->t, &c->scratch, &a->path, &a->npath, &a->path_cap, a->radius) < 0) return -1;
    a->seg = 0;
    on_rules_reset(a); /* progress along this path from here (rules.c) */
    a->state = on_ok(s) && n >= 2 ? ON_CROWD_MOVING : on_ok(s) ? ON_CROWD_ARRIVED : ON_CROWD_FAILED;
    return 0;
}

/* A search from the agent to its goal keeping r from blocked space (q:find's radius: the free cells
 * at least ceil(r / scale) leaves from it), or as a point (r = 0). */
static on_status start_search(on_crowd *c, const on_agent *a, double r)
{
    double p[3], g[3];
    v3_to(a->pos, p);
    v3_to(a->goal, g);
    on_query_opts o;
    on_query_opts_default(&o);
    o.radius = r;
    return on_query_init(c->q, p, g, &o);
}

int on_plan_step(on_crowd *c)
{
    size_t budget = c->p.plan_budget;
    int rc = 0;
    while (budget > 0) {
        on_agent *a = c->cur ? on_crowd_find(c, c->cur, NULL) : NULL;
        if (!a) {
            c->cur = 0;
            if (!c->qcount) break;
            uint32_t id = c->queue[c->qhead];
            c->qhead = (c->qhead + 1) % c->p.max_agents;
            c->qcount--;
            a = on_crowd_find(c, id, NULL);
            if (!a || !a->queued) continue;
            double r = a->radius;
            on_status s = start_search(c, a, r);
            if (on_failed(s) && r > 0) s = start_search(c, a, r = 0);
            if (on_failed(s)) {
                a->queued = 0;
                a->plan_status = s;
                a->state = ON_CROWD_FAILED;
                on_plan_changed(c, a);
                c->st.plans++;
                continue;
            }
            c->cur = id;
            c->cur_radius = r;
        }
        size_t done = 0;
        on_status s = on_query_update(c->q, budget, &done);
        budget = done >= budget ? 0 : budget - (done ? done : 1);
        if (on_in_progress(s)) {
            if (s & ON_LOADING) break; /* waits for a tile: again next frame */
            continue;
        }
        if (on_failed(s) && c->cur_radius > 0 && !(s & ON_NO_MEMORY)) {
            /* no way at its radius (a passage narrower than the leaves it rounds up to): as a point,
             * the path then pushed out to its radius as far as the space lets it */
            c->cur_radius = 0;
            if (!on_failed(start_search(c, a, 0))) continue;
        }
        a->queued = 0;
        c->cur = 0;
        if (take_path(c, a) < 0) rc = -1;
        on_plan_changed(c, a); /* (its next hot copy: crowd.c) */
    }
    size_t w = c->qcount + (c->cur ? 1 : 0);
    c->st.waiting = w;
    return rc;
}
