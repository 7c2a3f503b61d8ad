/*
 * crowd.c -- the crowd: its agents and the frame (octonav_crowd.h says what each file does).
 *
 * A frame: the searches run under their budget (plan.c); the proximity grid is rebuilt (proximity.c);
 * then three phases over the agents, in one job of the threads (phase_frame: a piece of the slots
 * through all three before the next piece). (1) In parallel (p.threads, workers.c): each agent's local
 * boundary is read again when it left the region read or the tree changed (boundary.c), its
 * neighbours found, its path followed (follow.c) and its preferred velocity chosen (rules.c: deadlock
 * breaking, holding back in passages, keeping right), reading of the others only their hot copies
 * (crowd.h: on_hot, taken before the phase: position, velocity, radius, state, the rule state, the
 * direction of their way; in parallel too from 512 slots, each agent by the thread that owns its slot)
 * and their goals, writing only its own agent. (2) In parallel: every new velocity from the old
 * positions and velocities of all (avoidance.c, from the hot copies). (3) All agents move.
 * From 512 slots on two threads or more the next frame's snapshot is taken at the end of each piece
 * (phase_frame_ahead), so a frame is one job of the threads, not two; and the next frame's grid is built
 * from those copies by a thread of the pool behind the frame, while the caller returns (build_behind).
 * The same inputs give the same frames, bit for bit, whatever the number of threads.
 */
#include "crowd.h"
#include "crowd_prof.h"
#include "tree.h"

#include <stdlib.h>
#include <string.h>
#ifdef ON_CROWD_PROFILE
#define PROF(i) (t1 = prof_now(), c->prof[i] += t1 - t0, t0 = t1, u1 = prof_cpu(), c->profcpu[i] += u1 - u0, u0 = u1)
#else
#define PROF(i) ((void)0)
#endif

#define ID_SLOT_BITS 20

static int finite_pos(const double p[3]) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

on_status on_crowd_create(const on_tree *t, const on_crowd_params *p, on_crowd **out)
{
    *out = NULL;
    if (!t || !p || p->max_agents < 1 || p->max_agents >= (1u << ID_SLOT_BITS)) return ON_FAILURE | ON_INVALID;
    on_crowd_params q = *p;
    if (q.max_neighbours == 0) q.max_neighbours = 16;
    if (q.time_horizon == 0) q.time_horizon = 1.5;
    if (q.time_horizon_obst == 0) q.time_horizon_obst = 0.5;
    if (q.plan_budget == 0) q.plan_budget = 4000;
    if (q.max_nodes == 0) q.max_nodes = 65536;
    if (q.threads == 0) q.threads = 1;
    if (q.threads < 1 || q.threads > 64 || q.max_neighbours < 1 || q.max_neighbours > ON_CROWD_MAX_NEIGHBOURS ||
        !(q.time_horizon > 0) ||
        !(q.time_horizon <= 1e6) || !(q.time_horizon_obst > 0) || !(q.time_horizon_obst <= 1e6) ||
        !(q.drift >= 0 && q.drift <= 1))
        return ON_FAILURE | ON_INVALID;
    on_crowd *c = calloc(1, sizeof *c);
    if (!c) return ON_FAILURE | ON_NO_MEMORY;
    c->t = t;
    c->p = q;
    /* the records on whole cache lines (crowd.h: a frame's threads share none they write) */
    c->agents = aligned_alloc(ON_AGENT_ALIGN, (size_t)q.max_agents * sizeof *c->agents);
    if (c->agents) memset(c->agents, 0, (size_t)q.max_agents * sizeof *c->agents);
    c->hot = aligned_alloc(ON_AGENT_ALIGN, (size_t)q.max_agents * sizeof *c->hot);
    if (c->hot) memset(c->hot, 0, (size_t)q.max_agents * sizeof *c->hot);
    c->hotn = aligned_alloc(ON_AGENT_ALIGN, (size_t)q.max_agents * sizeof *c->hotn);
    if (c->hotn) memset(c->hotn, 0, (size_t)q.max_agents * sizeof *c->hotn);
    c->gen = calloc(q.max_agents, sizeof *c->gen);
    c->freeslots = malloc(q.max_agents * sizeof *c->freeslots);
    c->queue = malloc(q.max_agents * sizeof *c->queue);
    c->changed = malloc(q.max_agents * sizeof *c->changed);
    c->wstat = aligned_alloc(ON_AGENT_ALIGN, (size_t)q.threads * sizeof *c->wstat);
    if (c->wstat) memset(c->wstat, 0, (size_t)q.threads * sizeof *c->wstat);
    on_status s = c->agents && c->hot && c->hotn && c->gen && c->freeslots && c->queue && c->changed && c->wstat ? on_query_create(t, q.max_nodes, &c->q)
                                                                              : ON_FAILURE | ON_NO_MEMORY;
    if (on_ok(s) && q.threads > 1 && on_workers_create(q.threads, &c->workers) < 0) s = ON_FAILURE | ON_NO_MEMORY;
    if (on_failed(s)) {
        on_crowd_destroy(c);
        return s;
    }
    *out = c;
    return ON_SUCCESS;
}

static void on_crowd_touch(on_crowd *c, on_agent *a);

static void agent_free(on_agent *a)
{
    free(a->path);
    free(a->boxes);
    memset(a, 0, sizeof *a);
}

void on_crowd_destroy(on_crowd *c)
{
    if (!c) return;
    on_workers_destroy(c->workers);
    free(c->wstat);
    if (c->agents)
        for (uint32_t i = 0; i < c->used; i++) agent_free(&c->agents[i]);
    free(c->agents);
    free(c->hot);
    free(c->hotn);
    free(c->gen);
    free(c->freeslots);
    free(c->queue);
    free(c->changed);
    on_proxgrid_free(&c->grid);
    free(c->scratch.boxes);
    on_query_destroy(c->q);
    free(c);
}

static int agent_params_valid(const on_crowd_agent_params *ap)
{
    return ap && ap->radius > 0 && ap->radius <= ON_MAX_COORD && ap->max_speed > 0 && ap->max_speed <= ON_MAX_COORD &&
           ap->max_accel > 0 && ap->max_accel <= ON_MAX_COORD && ap->max_turn_rate > 0 && ap->max_turn_rate <= 1e6 &&
           ap->arrive_dist >= 0 && ap->arrive_dist <= ON_MAX_COORD;
}

on_status on_crowd_add(on_crowd *c, const double pos[3], const on_crowd_agent_params *ap, uint32_t *id)
{
    if (!pos || !finite_pos(pos) || !agent_params_valid(ap)) return ON_FAILURE | ON_INVALID;
    on_cell cell;
    on_status s = on_tree_locate(c->t, pos, &cell);
    if (on_failed(s)) return ON_FAILURE | (s & (ON_OUTSIDE | ON_BLOCKED | ON_UNLOADED));
    if (!c->nfree && c->used == c->p.max_agents) return ON_FAILURE | ON_BUFFER_SMALL;
    on_v3 p = v3_from(pos);
    for (uint32_t i = 0; i < c->used; i++) {
        const on_agent *o = &c->agents[i];
        if (!o->id) continue;
        double r = o->radius + ap->radius;
        if (v3_len2(v3_sub(o->pos, p)) < r * r) return ON_FAILURE | ON_BLOCKED;
    }
    on_agent na;
    memset(&na, 0, sizeof na);
    na.pos = p;
    na.radius = ap->radius;
    na.max_speed = ap->max_speed;
    na.max_accel = ap->max_accel;
    na.max_turn = ap->max_turn_rate;
    na.arrive_dist = ap->arrive_dist > 0 ? ap->arrive_dist : ap->radius;
    na.goal = p;
    na.state = ON_CROWD_IDLE;
    /* its clearance from blocked space, read as every frame reads it */
    if (on_boundary_read(c->t, &na, ap->radius * 1.01 + c->t->p.scale) < 0) {
        free(na.boxes);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    on_v3 q[ON_CROWD_MAX_WALLS], n[ON_CROWD_MAX_WALLS];
    double d[ON_CROWD_MAX_WALLS];
    int nw = on_boundary_planes(&na, p, ap->radius, q, n, d, ON_CROWD_MAX_WALLS);
    for (int i = 0; i < nw; i++)
        if (d[i] < ap->radius) {
            free(na.boxes);
            return ON_FAILURE | ON_BLOCKED;
        }
    uint32_t slot = c->nfree ? c->freeslots[--c->nfree] : c->used++;
    na.id = ((uint32_t)(c->gen[slot] & 0xfffu) << ID_SLOT_BITS) | (slot + 1);
    c->agents[slot] = na;
    c->live++;
    c->ahead_ok = 0; /* (the next frame takes its copies itself) */
    if (id) *id = na.id;
    return ON_SUCCESS;
}

on_status on_crowd_remove(on_crowd *c, uint32_t id)
{
    uint32_t slot;
    on_agent *a = on_crowd_find(c, id, &slot);
    if (!a) return ON_FAILURE | ON_INVALID;
    on_plan_forget(c, id);
    agent_free(a);
    c->ahead_ok = 0;
    c->gen[slot]++;
    c->freeslots[c->nfree++] = slot;
    c->live--;
    return ON_SUCCESS;
}

on_status on_crowd_set_goal(on_crowd *c, uint32_t id, const double goal[3])
{
    uint32_t slot;
    on_agent *a = on_crowd_find(c, id, &slot);
    if (!a || (goal && !finite_pos(goal))) return ON_FAILURE | ON_INVALID;
    on_plan_forget(c, id);
    a->npath = 0;
    a->seg = 0;
    a->dir_valid = 0;
    a->external = 0;
    a->plan_status = 0;
    on_rules_reset(a); /* a held or backing agent starts afresh (its old counters were for the old way) */
    if (!goal) {
        a->state = ON_CROWD_IDLE;
        a->goal = a->pos;
        on_crowd_touch(c, a);
        return ON_SUCCESS;
    }
    a->goal = v3_from(goal);
    on_plan_request(c, slot);
    on_crowd_touch(c, a);
    return ON_SUCCESS;
}

on_status on_crowd_set_path(on_crowd *c, uint32_t id, const double *pts, size_t n)
{
    on_agent *a = on_crowd_find(c, id, NULL);
    if (!a || !pts || n < 1 || n > ((size_t)-1) / (6 * sizeof(double))) return ON_FAILURE | ON_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!finite_pos(pts + 3 * i)) return ON_FAILURE | ON_INVALID;
    size_t need = n + 1; /* room for its own position first */
    if (need > a->path_cap) {
        double *p = realloc(a->path, need * 3 * sizeof *p);
        if (!p) return ON_FAILURE | ON_NO_MEMORY;
        a->path = p;
        a->path_cap = need;
    }
    on_plan_forget(c, id);
    size_t k = 0;
    if (n == 1) {
        v3_to(a->pos, a->path);
        k = 1;
    }
    memcpy(a->path + 3 * k, pts, n * 3 * sizeof *pts);
    a->npath = n + k;
    a->seg = 0;
    a->dir_valid = 0;
    a->external = 1;
    a->plan_status = ON_SUCCESS;
    on_rules_reset(a);
    on_status rs = ON_SUCCESS;
    if (on_follow_clear_path(c->t, &c->scratch, &a->path, &a->npath, &a->path_cap, a->radius) < 0)
        rs = ON_SUCCESS | ON_NO_MEMORY; /* (followed as given) */
    else {
        a->goal = v3_from(pts + 3 * (n - 1));
        a->state = ON_CROWD_MOVING;
    }
    on_crowd_touch(c, a);
    return rs;
}

typedef struct frame {
    on_crowd *c;
    double dt, rmax, vmax;
    uint64_t rev;
    on_avoid_params ap;
} frame;

/* Phase 1, in parallel: boundary, neighbours, path following (each agent writes only itself). */
static void phase_near(void *ctx, int w, uint32_t begin, uint32_t end)
{
    const frame *f = ctx;
    on_crowd *c = f->c;
    on_crowd_wstat *ws = &c->wstat[w];
    double scale = c->t->p.scale;
    for (uint32_t i = begin; i < end; i++) {
        on_agent *a = &c->agents[i];
        if (!a->id) continue;
        double look = on_agent_lookahead(a, f->dt), wall = a->max_speed * f->ap.tau_obst;
        double need = a->radius + (look > wall ? look : wall) + scale;
        on_v3 off = v3_sub(a->pos, a->bound_at);
        double moved = fmax(fabs(off.x), fmax(fabs(off.y), fabs(off.z)));
        if (!a->bound_valid || a->bound_rev != f->rev || moved > a->bound_reach - need) {
            ws->refreshes++;
            if (on_boundary_read(c->t, a, need * 1.25 + scale) < 0) ws->oom = 1;
        }
        double l2 = 2 * look, orca = (a->max_speed + f->vmax) * f->ap.tau;
        a->nnbr = on_proxgrid_nearest(&c->grid, c->agents, i, a->radius + f->rmax + (l2 > orca ? l2 : orca),
                                      c->p.max_neighbours, a->nbr);
        if (a->state == ON_CROWD_MOVING && !(a->yield > 0)) a->fpref = on_follow_pref(a, scale);
        a->pref = on_rules_pref(c, a, i);
    }
}

/* Phase 3, in parallel: the new velocities (each reads the old positions and velocities of all). */
static void phase_avoid(void *ctx, int w, uint32_t begin, uint32_t end)
{
    const frame *f = ctx;
    on_crowd *c = f->c;
    on_crowd_wstat *ws = &c->wstat[w];
    for (uint32_t i = begin; i < end; i++) {
        on_agent *a = &c->agents[i];
        if (!a->id) continue;
        if (!a->bound_valid) {
            /* no boundary (no memory): brake */
            double v = v3_len(a->vel), k = v > 0 ? 1 - a->max_accel * f->dt / v : 0;
            a->nvel = v3_scale(a->vel, k > 0 ? k : 0);
            continue;
        }
        on_avoid_select(&f->ap, c->agents, c->hot, i, c->t);
        ws->fallbacks += (uint64_t)a->fallback;
    }
}

/* The agent's hot copy (crowd.h: on_hot) as the frame finds it: each field stored only where it changed
 * (a line written is a line the other threads read again from this core: most agents keep their
 * preferred velocity, bit for bit, and the rest, frame after frame). */
static void hot_take(on_hot *h, const on_hot *o, on_agent *a)
{
    if (!a->id) {
        if (h->id) h->id = 0;
        return;
    }
    if (memcmp(&h->pos, &a->pos, sizeof a->pos) != 0) h->pos = a->pos;
    if (memcmp(&h->vel, &a->vel, sizeof a->vel) != 0) h->vel = a->vel;
    uint8_t st = (uint8_t)a->state;
    uint8_t fl = (uint8_t)((a->yield > 0 ? ON_HOT_YIELD : 0) | (a->yield_head_on ? ON_HOT_HEAD_ON : 0) |
                           (a->fallback && a->nwalls > 0 ? ON_HOT_FALLBACK : 0));
    uint16_t still = a->still < 0 ? 0 : a->still > UINT16_MAX ? UINT16_MAX : (uint16_t)a->still;
    if (h->radius != a->radius || h->id != a->id || h->state != st || h->flags != fl || h->still != still) {
        h->radius = a->radius;
        h->id = a->id;
        h->state = st;
        h->flags = fl;
        h->still = still;
    }
    if (memcmp(&h->pref, &a->pref, sizeof a->pref) != 0) h->pref = a->pref;
    /* the way's direction made again only when the segment or the path changed (else the last copy's:
     * o, the copy taken last, h itself but for the copies taken ahead: o the frame's, h the next) */
    if (a->state == ON_CROWD_MOVING && (!a->dir_valid || a->dir_seg != a->seg)) {
        on_v3 d = on_rules_path_dir(a, a->seg);
        if (memcmp(&h->dir, &d, sizeof d) != 0) h->dir = d;
        a->dir_valid = 1, a->dir_seg = a->seg;
    } else if (a->state == ON_CROWD_MOVING) {
        if (o != h && memcmp(&h->dir, &o->dir, sizeof o->dir) != 0) h->dir = o->dir;
    } else if (a->dir_valid || o != h) {
        if (h->dir.x != 0 || h->dir.y != 0 || h->dir.z != 0) h->dir = v3(0, 0, 0);
        a->dir_valid = 0;
    }
}

/* Agent a changed between frames (a setter, a search finished): its next hot copy taken again. */
static void on_crowd_touch(on_crowd *c, on_agent *a)
{
    if (!c->ahead) return; /* (the snapshot takes it) */
    on_hot *h = &c->hotn[a - c->agents];
    hot_take(h, h, a);
}

/* Phase 0, in parallel: the agents' hot copies (what the others' work reads of them this frame), the
 * grid's copies of their positions (proximity.c), and the bounds of the grid's cell over the thread's
 * agents (on_crowd_update takes the largest of the threads'); each thread over its own slots. */
static void phase_snapshot(void *ctx, int w, uint32_t begin, uint32_t end)
{
    const frame *f = ctx;
    on_crowd *c = f->c;
    on_crowd_wstat *ws = &c->wstat[w];
    double rmax = ws->rmax, vmax = ws->vmax, lmax = ws->lmax;
    for (uint32_t i = begin; i < end; i++) {
        on_agent *a = &c->agents[i];
        hot_take(&c->hot[i], &c->hot[i], a);
        if (!a->id) continue;
        rmax = a->radius > rmax ? a->radius : rmax;
        vmax = a->max_speed > vmax ? a->max_speed : vmax;
        double look = a->radius + 2 * on_agent_lookahead(a, f->dt);
        lmax = look > lmax ? look : lmax;
    }
    ws->rmax = rmax, ws->vmax = vmax, ws->lmax = lmax;
    /* the grid's copies of the slots' positions and ids, by the thread that owns them (proximity.c) */
    on_proxgrid_track(&c->grid, c->agents, begin, end, &ws->track);
}

static int arrived(const on_agent *a)
{
    return (a->state == ON_CROWD_MOVING || a->state == ON_CROWD_PLANNING) &&
           v3_len2(v3_sub(a->pos, a->goal)) <= a->arrive_dist * a->arrive_dist &&
           (a->state == ON_CROWD_PLANNING || a->seg + 2 >= a->npath);
}

/* Phase 4, in parallel: every agent moves (each writes only itself); one at its goal while its
 * search waits is counted, and its search forgotten after the phase (the planner's state is the
 * caller's). */
static void phase_move(void *ctx, int w, uint32_t begin, uint32_t end)
{
    const frame *f = ctx;
    on_crowd *c = f->c;
    for (uint32_t i = begin; i < end; i++) {
        on_agent *a = &c->agents[i];
        if (!a->id) continue;
        a->vel = a->nvel;
        a->pos = v3_add(a->pos, v3_scale(a->vel, f->dt));
        if (arrived(a)) {
            if (a->state == ON_CROWD_PLANNING) c->wstat[w].arrived_planning++;
            else a->state = ON_CROWD_ARRIVED;
        }
    }
}

/* Phases 1 to 3 of a piece together (near, avoid, moves): one job a frame instead of three, so one
 * hand-off between the threads instead of three, no thread idle at the phases' ends, and each
 * agent's record, its neighbour list and its boundary's planes still in the core's cache when it
 * avoids and moves. The data allow it: an agent's near and avoid read of the others only their hot
 * copies (taken in the snapshot, written by nothing until the next frame), the grid (built before)
 * and their goals (no phase writes one); its moves write only its own record. So the agents' work in
 * any order, one piece's three phases before the next piece's, gives the same frame, bit for bit, as
 * the three phases over all agents one after the other (the one-thread frame still runs them so). */
static void phase_frame(void *ctx, int w, uint32_t begin, uint32_t end)
{
    phase_near(ctx, w, begin, end);
    phase_avoid(ctx, w, begin, end);
    phase_move(ctx, w, begin, end);
}

/* The same, then the next frame's snapshot of the piece taken ahead (phase_snapshot's work, into the
 * second hot array and the grid's next copies): the records still in this core's cache, and the next
 * frame without its snapshot job and that job's hand-off. What changes an agent between frames takes its
 * copy again (on_crowd_touch); an agent added or removed, or another dt, and the next frame takes its
 * snapshot itself. */
static void phase_frame_ahead(void *ctx, int w, uint32_t begin, uint32_t end)
{
    const frame *f = ctx;
    on_crowd *c = f->c;
    on_crowd_wstat *ws = &c->wstat[w];
    phase_frame(ctx, w, begin, end);
    double rmax = ws->nrmax, vmax = ws->nvmax, lmax = ws->nlmax;
    for (uint32_t i = begin; i < end; i++) {
        on_agent *a = &c->agents[i];
        hot_take(&c->hotn[i], &c->hot[i], a);
        if (!a->id) continue;
        rmax = a->radius > rmax ? a->radius : rmax;
        vmax = a->max_speed > vmax ? a->max_speed : vmax;
        double look = a->radius + 2 * on_agent_lookahead(a, f->dt);
        lmax = look > lmax ? look : lmax;
    }
    ws->nrmax = rmax, ws->nvmax = vmax, ws->nlmax = lmax;
    on_proxgrid_track_next(&c->grid, c->agents, begin, end, &ws->ntrack);
}

/* agents a thread takes at a time: about eight chunks a thread (a boundary read costs as much as
 * dozens of agents' other work, so smaller chunks even the threads out), from 1 to 64 */
#ifndef CROWD_MAX_PIECE
#define CROWD_MAX_PIECE 64 /* (16 and 32: the same times on two threads, within their spread) */
#endif
static uint32_t chunk_of(const on_crowd *c)
{
    uint32_t k = c->used / (8u * (uint32_t)on_workers_count(c->workers));
    return k < 1 ? 1 : k > CROWD_MAX_PIECE ? CROWD_MAX_PIECE : k;
}

/* The snapshot and the moves (a few ns an agent) in parallel from this many slots: below it, the
 * threads' start and end of a phase cost more than the lines read from the other core (bench/crowd:
 * 100 agents 0.110 -> 0.122 ms on two threads in parallel; 1,000 0.861 -> 0.845; 5,000 4.61 -> 4.41) */
#ifndef CROWD_LIGHT_MIN
#define CROWD_LIGHT_MIN 512
#endif
static void run_light(on_crowd *c, on_work_fn fn, frame *f)
{
    if (c->used >= CROWD_LIGHT_MIN) on_workers_run(c->workers, c->used, chunk_of(c), fn, f);
    else if (c->used) fn(f, 0, 0, c->used);
}

/* The next frame's grid, built on a thread of the pool behind the frame (on_workers_behind) while the
 * caller's thread returns to the game: the copies taken ahead swapped in and the build made from them
 * with the cell of the bounds taken ahead (the next frame's, when nothing spoils them: the same dt, no
 * agent added or removed; else the next frame takes its snapshot and builds again over this one, the
 * farthest move already counted and none since, which leaves the candidate lists' reach conservative).
 * Nothing reads the grid between frames (on_crowd_stats_get syncs first). No memory: the copies
 * swapped back, as if not built (the next frame builds, and says so). */
static void build_behind(void *ctx, int w, uint32_t begin, uint32_t end)
{
    (void)w, (void)begin, (void)end;
    on_crowd *c = ctx;
    on_proxgrid_swap(&c->grid);
    if (on_proxgrid_build_tracked(&c->grid, c->behind_n, c->behind_cell, &c->pre_tr) < 0) {
        on_proxgrid_swap(&c->grid);
        c->built = 0;
        return;
    }
    c->built = 1;
}

on_status on_crowd_update(on_crowd *c, double dt)
{
    if (!(dt > 0 && dt <= 1)) return ON_FAILURE | ON_INVALID;
    on_status rs = ON_SUCCESS;
#ifdef ON_CROWD_PROFILE
    double t0 = prof_now(), t1, u0 = prof_cpu(), u1;
#endif
    on_workers_sync(c->workers); /* (the grid built behind the last frame) */
    int built = c->built;
    c->built = 0;
    /* the threads woken now are awake by the time the searches are done (or soon after) */
    if (c->used > chunk_of(c)) on_workers_wake(c->workers);
    c->nchanged = 0;
    if (on_plan_step(c) < 0) rs = ON_SUCCESS | ON_NO_MEMORY;
    for (uint32_t k = 0; k < c->nchanged; k++) on_crowd_touch(c, &c->agents[c->changed[k]]);
    PROF(0);
    /* the grid's cell: at least the widest neighbour range (phase_near's: an agent's radius, the
     * largest radius and the larger of twice its lookahead and (its top speed + the largest) tau),
     * bounded in the same pass as the snapshot (phase_snapshot, in parallel, each thread over its own
     * agents: their records stay in its core's cache, not read by the caller from the other's): the
     * largest radius plus the larger of the largest radius + twice lookahead and the largest radius +
     * twice the top speed tau. Any cell gives the same neighbours (proximity.c); this one is the widest
     * range itself when the agents are alike. */
    double tau = c->p.time_horizon;
    frame f = {c, dt, 0, 0, on_tree_revision(c->t), {dt, tau, c->p.time_horizon_obst}};
    int nw = on_workers_count(c->workers);
    for (int w = 0; w < nw; w++) {
        on_crowd_wstat *ws = &c->wstat[w];
        ws->refreshes = ws->fallbacks = 0, ws->oom = 0, ws->arrived_planning = 0;
        ws->rmax = ws->vmax = ws->lmax = 0;
        ws->track.step = 0, ws->track.live = 0, ws->track.fresh = ws->track.gone = 0;
    }
    if (on_proxgrid_reserve(&c->grid, c->used) < 0) return ON_FAILURE | ON_NO_MEMORY;
    on_proxtrack tr = {0, 0, 0, 0};
    double rmax = 0, vmax = 0, lmax = 0;
    /* the last frame's job took this frame's copies (and nothing since spoilt them): no snapshot */
    int ahead = c->ahead, ahead_ok = ahead && c->ahead_ok && c->ahead_dt == dt;
    c->ahead = 0;
    if (ahead) {
        on_hot *h = c->hot;
        c->hot = c->hotn, c->hotn = h; /* (the copies taken last: the snapshot below compares with these) */
    }
    if (ahead_ok) {
        if (!built) on_proxgrid_swap(&c->grid);
        tr = c->pre_tr;
        rmax = c->pre_rmax, vmax = c->pre_vmax, lmax = c->pre_lmax;
    } else {
        run_light(c, phase_snapshot, &f);
        for (int w = 0; w < nw; w++) {
            const on_crowd_wstat *ws = &c->wstat[w];
            rmax = ws->rmax > rmax ? ws->rmax : rmax;
            vmax = ws->vmax > vmax ? ws->vmax : vmax;
            lmax = ws->lmax > lmax ? ws->lmax : lmax;
            tr.step = ws->track.step > tr.step ? ws->track.step : tr.step;
            tr.live += ws->track.live;
            tr.fresh |= ws->track.fresh, tr.gone |= ws->track.gone;
        }
    }
    f.rmax = rmax, f.vmax = vmax;
    double orca = rmax + (vmax + vmax) * tau, cell = rmax + (lmax > orca ? lmax : orca);
    PROF(1);
    if (!(ahead_ok && built) && on_proxgrid_build_tracked(&c->grid, c->used, cell > 0 ? cell : 1, &tr) < 0)
        return ON_FAILURE | ON_NO_MEMORY;
    PROF(2);
    /* phases 1 to 3 in one job (phase_frame); where the snapshot is a job of the threads, the next
     * frame's taken ahead in it (phase_frame_ahead) */
    int take = c->workers && c->used >= CROWD_LIGHT_MIN;
    for (int w = 0; take && w < nw; w++) {
        on_crowd_wstat *ws = &c->wstat[w];
        ws->nrmax = ws->nvmax = ws->nlmax = 0;
        ws->ntrack.step = 0, ws->ntrack.live = 0, ws->ntrack.fresh = ws->ntrack.gone = 0;
    }
    on_workers_run(c->workers, c->used, chunk_of(c), take ? phase_frame_ahead : phase_frame, &f);
    if (take) {
        on_proxtrack nt = {0, 0, 0, 0};
        double nr = 0, nv = 0, nl = 0;
        for (int w = 0; w < nw; w++) {
            const on_crowd_wstat *ws = &c->wstat[w];
            nr = ws->nrmax > nr ? ws->nrmax : nr;
            nv = ws->nvmax > nv ? ws->nvmax : nv;
            nl = ws->nlmax > nl ? ws->nlmax : nl;
            nt.step = ws->ntrack.step > nt.step ? ws->ntrack.step : nt.step;
            nt.live += ws->ntrack.live;
            nt.fresh |= ws->ntrack.fresh, nt.gone |= ws->ntrack.gone;
        }
        c->pre_tr = nt, c->pre_rmax = nr, c->pre_vmax = nv, c->pre_lmax = nl;
        c->ahead = c->ahead_ok = 1, c->ahead_dt = dt;
        /* the next frame's grid built behind this one (the cell as the next frame finds it from these
         * bounds), by a thread of the pool while the caller returns */
        double norca = nr + (nv + nv) * tau, ncell = nr + (nl > norca ? nl : norca);
        c->behind_n = c->used, c->behind_cell = ncell > 0 ? ncell : 1;
        on_workers_behind(c->workers, build_behind, c);
    }
    PROF(3);
    uint32_t planning = 0;
    for (int w = 0; w < nw; w++) {
        c->st.boundary_refreshes += c->wstat[w].refreshes;
        c->st.fallbacks += c->wstat[w].fallbacks;
        planning += c->wstat[w].arrived_planning;
        if (c->wstat[w].oom) rs = ON_SUCCESS | ON_NO_MEMORY;
    }
    /* (rare) agents at their goal before their search: the search forgotten, here (the planner's
     * queue is the caller's); in any order (on_plan_forget only takes an id out) */
    for (uint32_t i = 0; planning && i < c->used; i++) {
        on_agent *a = &c->agents[i];
        if (!a->id || a->state != ON_CROWD_PLANNING || !arrived(a)) continue;
        on_plan_forget(c, a->id);
        a->state = ON_CROWD_ARRIVED;
        on_crowd_touch(c, a);
        planning--;
    }
    c->st.frames++;
    PROF(5);
    return rs;
}

on_status on_crowd_agent_get(const on_crowd *c, uint32_t id, on_crowd_agent_state *st)
{
    const on_agent *a = on_crowd_find(c, id, NULL);
    if (!a) return ON_FAILURE | ON_INVALID;
    memset(st, 0, sizeof *st);
    st->id = a->id;
    st->state = a->state;
    v3_to(a->pos, st->pos);
    v3_to(a->vel, st->vel);
    v3_to(a->pref, st->pref);
    v3_to(a->goal, st->goal);
    st->radius = a->radius;
    st->max_speed = a->max_speed;
    st->max_accel = a->max_accel;
    st->max_turn_rate = a->max_turn;
    st->arrive_dist = a->arrive_dist;
    st->neighbours = a->nnbr;
    st->walls = a->nwalls;
    st->fallback = a->fallback;
    st->plan_status = a->plan_status;
    st->path_points = a->npath;
    return ON_SUCCESS;
}

on_status on_crowd_states(const on_crowd *c, double *out, size_t cap, size_t *n)
{
    size_t k = 0;
    for (uint32_t i = 0; i < c->used; i++) {
        const on_agent *a = &c->agents[i];
        if (!a->id) continue;
        if (out && k < cap) {
            v3_to(a->pos, out + 6 * k);
            v3_to(a->vel, out + 6 * k + 3);
        }
        k++;
    }
    *n = k;
    return k > cap ? ON_FAILURE | ON_BUFFER_SMALL : ON_SUCCESS;
}

on_status on_crowd_ids(const on_crowd *c, uint32_t *ids, size_t cap, size_t *n)
{
    size_t k = 0;
    for (uint32_t i = 0; i < c->used; i++) {
        if (!c->agents[i].id) continue;
        if (ids && k < cap) ids[k] = c->agents[i].id;
        k++;
    }
    *n = k;
    return k > cap ? ON_FAILURE | ON_BUFFER_SMALL : ON_SUCCESS;
}

on_status on_crowd_neighbours(const on_crowd *c, uint32_t id, uint32_t *ids, size_t cap, size_t *n)
{
    const on_agent *a = on_crowd_find(c, id, NULL);
    if (!a) return ON_FAILURE | ON_INVALID;
    size_t k = 0;
    for (int i = 0; i < a->nnbr; i++) {
        const on_agent *o = &c->agents[a->nbr[i]];
        if (!o->id) continue; /* removed since the frame */
        if (ids && k < cap) ids[k] = o->id;
        k++;
    }
    *n = k;
    return k > cap ? ON_FAILURE | ON_BUFFER_SMALL : ON_SUCCESS;
}

on_status on_crowd_path(const on_crowd *c, uint32_t id, double *pts, size_t cap, size_t *n, size_t *seg)
{
    const on_agent *a = on_crowd_find(c, id, NULL);
    if (!a) return ON_FAILURE | ON_INVALID;
    if (pts && a->npath) memcpy(pts, a->path, 3 * (a->npath < cap ? a->npath : cap) * sizeof *pts);
    *n = a->npath;
    *seg = a->seg;
    return a->npath > cap ? ON_FAILURE | ON_BUFFER_SMALL : ON_SUCCESS;
}

void on_crowd_stats_get(const on_crowd *c, on_crowd_stats *st)
{
    on_workers_sync(c->workers); /* (the grid's sizes: built behind the last frame) */
    *st = c->st;
    st->agents = c->live;
    size_t b = sizeof *c + (size_t)c->p.max_agents *
                               (sizeof *c->agents + 2 * sizeof *c->hot + sizeof *c->gen + 3 * sizeof(uint32_t));
    for (uint32_t i = 0; i < c->used; i++)
        b += (c->agents[i].path_cap * 3 + c->agents[i].boxes_cap * 6) * sizeof(double);
    b += on_proxgrid_bytes(&c->grid) + (size_t)c->p.threads * sizeof *c->wstat;
    st->bytes = b;
}
