/*
 * route_start.c -- the route planner's endpoints (see route.h): points to tiles, the tiles' boxes
 * (the tree's prepared sets, else built and cached: the world's planners share a cache, route_boxes.h), the local search from each start and
 * goal to the portals of its own tile (reach.h), the goal joins and the first nodes; near pairs.
 */
#include "route_plan.h"
#include "clearance.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The box set of a loaded tree tile: the tree's prepared one when valid (*lz NULL), else its join set
 * (a streamer worker's, tree.h), else the world's shared cache's (route_boxes.h) when the planner
 * has one, else the planner's cached one (route_plan.h, boxcache), made on a miss in the least
 * recently used entry. They hold the same boxes in the same order. */
static on_status tile_boxes(on_route *r, const on_tree *t, uint32_t tile, const on_boxset **out, on_boxlazy **lz,
                            uint64_t *gen)
{
    *lz = NULL;
    *gen = 0;
    *out = on_tile_boxes(t, tile);
    if (!*out) *out = on_tile_joins(t, tile);
    if (*out) return ON_SUCCESS;
    if (r->boxes) { /* the world's shared cache: the set pinned until the call ends (route_boxes.h) */
        on_route_boxent *x;
        uint64_t gens = on_route_boxes_gens(r->boxes);
        on_status st = on_route_boxes_get(r->boxes, t, tile, r->lazy_bdepth ? r->lazy_bdepth : ROUTE_LAZY_BDEPTH, &x,
                                          out, lz, gen);
        if (on_failed(st)) return st;
        if (*gen > gens) r->calls.sets++; /* (a set made: a miss) */
        on_route_boxes_unpin(r->boxes, r->bpin[0]); /* (the endpoint before the last: done with) */
        r->bpin[0] = r->bpin[1];
        r->bpin[1] = x;
        return ON_SUCCESS;
    }
    const on_tile *tt = &t->tiles[tile];
    boxcache *c = &r->bc[0];
    r->bc_uses++;
    for (int i = 0; i < ROUTE_BOX_CACHE; i++) {
        boxcache *x = &r->bc[i];
        if (x->valid && x->tree == t && x->tile == tile && x->salt == tt->salt && x->keys == (const void *)tt->table.keys) {
            c = x;
            goto hit;
        }
        if (x->used < c->used) c = x;
    }
    c->valid = 0;
    r->calls.sets++;
    on_boxset_free(c->own);
    c->own = NULL;
    int bd = r->lazy_bdepth ? r->lazy_bdepth : ROUTE_LAZY_BDEPTH;
    if (t->p.depth > 6) { /* more than 64 leaves a side: built block by block as joins reach them */
        if (c->lazy && (c->lazy->bdepth != bd || c->lazy->depth != (int)t->p.depth)) {
            on_boxlazy_free(c->lazy);
            free(c->lazy);
            c->lazy = NULL;
        }
        if (!c->lazy) {
            on_boxlazy *z = calloc(1, sizeof *z);
            if (!z || on_boxlazy_init_blocks(z, t->p.depth, bd)) {
                free(z);
                return ON_FAILURE | ON_NO_MEMORY;
            }
            c->lazy = z;
        }
        on_boxlazy_clear(c->lazy);
    } else {
        on_status st = on_boxset_build(&tt->table, tt->solid, t->p.depth, &c->own);
        if (on_failed(st)) return st;
    }
    c->tree = t;
    c->tile = tile;
    c->salt = tt->salt;
    c->keys = tt->table.keys;
    c->valid = 1;
    c->gen = ++r->bc_gen;
hit:
    c->used = r->bc_uses;
    *gen = c->gen;
    if (c->own) {
        *out = c->own;
        return ON_SUCCESS;
    }
    c->lazy->tab = &tt->table; /* (the same contents: same salt) */
    c->lazy->solid = tt->solid;
    *lz = c->lazy;
    *out = &c->lazy->set;
    return ON_SUCCESS;
}

static int gjoin_cmp(const void *x, const void *y)
{
    const gjoin *a = x, *b = y;
    if (a->tile != b->tile) return a->tile < b->tile ? -1 : 1;
    if (a->portal != b->portal) return a->portal < b->portal ? -1 : 1;
    return a->cost < b->cost ? -1 : a->cost > b->cost;
}
/* An endpoint in nav space: its tile, tile-local point, and that tile's boxes and graph. */
typedef struct endpoint {
    double nav[3], local[3];
    uint32_t tile;
    const on_boxset *s;
    on_boxlazy *lz;        /* s's lazy set (s == &lz->set), or NULL */
    uint64_t gen;          /* s's generation (tile_boxes; 0: the tree's) */
    const ctile *g;
} endpoint;

static on_status endpoint_of(on_route *r, const on_tree *t, const double p[3], int which, endpoint *e)
{
    const on_wgraph *w = r->w;
    int c[3];
    r->info.which = which;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(p[k])) return ON_FAILURE | ON_INVALID;
        e->nav[k] = (p[k] - w->p.origin[k]) / w->p.scale;
        double ti = floor(e->nav[k] / w->n);
        if (ti < 0 || ti >= w->p.tiles[k]) {
            if (e->nav[k] == (double)w->p.tiles[k] * w->n) ti = w->p.tiles[k] - 1; /* the far face */
            else return ON_FAILURE | ON_OUTSIDE;
        }
        c[k] = (int)ti;
        e->local[k] = e->nav[k] - ti * w->n;
    }
    e->tile = wg_tile_index(w, c);
    r->info.loading_tile = e->tile;
    e->g = w->tiles[e->tile];
    if (!e->g || !t->tiles[e->tile].loaded) return ON_FAILURE | ON_LOADING;
    on_status st = tile_boxes(r, t, e->tile, &e->s, &e->lz, &e->gen);
    if (on_failed(st)) return st;
    uint32_t in[8];
    int n = e->lz ? on_boxlazy_locate_all(e->lz, e->local, 1, in) : on_boxset_locate_all(e->s, e->local, in);
    if (n < 0) return ON_FAILURE | ON_NO_MEMORY;
    if (n == 0) return ON_FAILURE | ON_BLOCKED;
    return ON_SUCCESS;
}

/* Nav point x in the frame of e's tile when it lies in that tile (out), else 0. */
static int local_in(const on_route *r, const endpoint *e, const double x[3], double out[3])
{
    int same = 1;
    for (int k = 0; k < 3; k++) {
        double ti = floor(x[k] / r->w->n);
        if (ti >= r->w->p.tiles[k]) ti = r->w->p.tiles[k] - 1; /* the far face */
        out[k] = x[k] - ti * r->w->n;
        same &= e->nav[k] - e->local[k] == ti * r->w->n;
    }
    return same;
}

/* Goal j's point in the frame of e's tile when the goal lies in that tile (gl), else 0. */
static int goal_local(const on_route *r, const endpoint *e, size_t j, double gl[3])
{
    return local_in(r, e, r->goalpt + 3 * j, gl);
}

/* Reach the portals of e's tile from e: r->cost; *reached. With goal (a tile-local point: a goal in
 * e's tile, joined directly afterwards by on_reach_cost_to) the search must also reach it: in a tile of
 * at most r->directed_boxes boxes the whole tile is searched; in a larger one it is an A* heading for
 * the goal, which is one more target (its own group) whose total is its cost: it stops soon after
 * the goal is met (or, the goal out of reach inside the tile, as below). Without goal it stops once
 * the portals of e's component are reached (the planner goes on from them through the tile graph's
 * edges), and in a tile of more than r->directed_boxes boxes heads for other (a world point: the
 * other end) and stops early (reach.h). */
static on_status endpoint_reach(on_route *r, const endpoint *e, const double *goal, const double other[3],
                                int keep, uint32_t *reached)
{
    uint32_t np = e->g->np;
    if (on_grow((void **)&r->cost, &r->costcap, (size_t)np + 1, sizeof *r->cost) ||
        on_grow((void **)&r->pts, &r->ptscap, 3 * (size_t)np + 3, sizeof *r->pts) ||
        on_grow((void **)&r->grp, &r->grpcap, (size_t)np + 1, sizeof *r->grp))
        return ON_FAILURE | ON_NO_MEMORY;
    for (uint32_t p = 0; p < np; p++) {
        ct_point(e->g, p, r->pts + 3 * (size_t)p);
        r->grp[p] = ct_comp(e->g, p);
    }
#ifdef ROUTE_FULL_JOIN /* (a reference build: every join searches its component whole; bench/plan.lua --ref) */
    int big = 0;
#else
    int big = e->s->nbox > r->directed_boxes || e->lz; /* (a lazy set's size is not known: a big tile's) */
#endif
    size_t budget = r->directed_budget;
    r->reach.lazy = e->lz;
    /* a plan's radius kept (keep: e's tile holds the other end): a way in the tile that does not keep
     * it is no way (route_plan.h join_radius) */
    r->reach.rtree = keep && r->join_radius > 0 && !r->jplain && !r->jnear ? r->jtree : NULL;
    r->reach.rR = (int64_t)ceil(r->join_radius);
    for (int k = 0; k < 3; k++) r->reach.roff[k] = e->nav[k] - e->local[k];
    /* a search suspended at the last call's limit goes on, over the same set (else it starts again) */
    uint32_t built = e->lz ? e->lz->built : 0; /* (another planner's join may build into a shared set) */
    int resume = r->jsusp && r->reach.suspended && r->jset == e->s && r->jgen == e->gen && r->jbuilt == built;
    r->calls.joins++;
    if (r->jsusp && !resume) r->calls.restarts++;
    r->jsusp = 0;
    r->jset = e->s;
    r->jgen = e->gen;
    on_status st;
    if (resume) {
        if (goal && big) memcpy(r->pts + 3 * (size_t)np, goal, 3 * sizeof *r->pts); /* (as below) */
        st = on_reach_resume(&r->reach, e->s, r->cost, reached);
    } else if (goal && !big) {
        st = on_reach_points(&r->reach, e->s, r->pts, np, e->local, r->cost, reached);
    } else if (!big) {
        st = on_reach_points_group(&r->reach, e->s, r->pts, np, e->local, r->grp, NULL, 1, 0, 0, 0, r->cost, reached);
    } else {
        double to[3];
        uint32_t nt = np;
        if (goal) { /* the goal as target np, alone in group np */
            memcpy(to, goal, sizeof to);
            memcpy(r->pts + 3 * (size_t)np, goal, sizeof to);
            r->grp[np] = np;
            nt = np + 1;
        } else {
            const on_tree_params *p = &r->w->p;
            for (int k = 0; k < 3; k++) to[k] = (other[k] - p->origin[k]) / p->scale - (e->nav[k] - e->local[k]);
        }
        st = on_reach_points_group(&r->reach, e->s, r->pts, nt, e->local, r->grp, to, ROUTE_DIRECTED_WEIGHT,
                                   ROUTE_DIRECTED_SLACK, ROUTE_DIRECTED_ADD * r->w->n, budget, r->cost, reached);
    }
    if (e->lz) r->calls.blocks += e->lz->built - built;
    if (on_in_progress(st)) {
        r->jsusp = 1;
        r->jbuilt = e->lz ? e->lz->built : 0;
        return st;
    }
    if (on_ok(st) && goal && big && r->cost[np] < HUGE_VAL) (*reached)--; /* the goal is no portal */
    return st;
}

/* Did e's last search (one that kept a radius) meet anything: a portal, or the other end at x (a
 * tile-local point, or NULL)? Else the endpoint joins as a point (jplain): a search that keeps the radius
 * from faces' clamped points can find no way where one exists. */
static int met_any(on_route *r, const endpoint *e, const double *x)
{
    for (uint32_t p = 0; p < e->g->np; p++)
        if (r->cost[p] < HUGE_VAL) return 1;
    return x && on_reach_cost_to(&r->reach, e->s, x) < HUGE_VAL;
}

void on_route_reset(on_route *r)
{
    if (r->fit_revision != r->w->revision + 1) (void)on_route_fit(r); /* (failing: the old arrays) */
    r->cur_stamp++;
    if (r->cur_stamp == 0) { /* wrapped: clear the stamps once */
        memset(r->stamp, 0, (r->mask + 1) * sizeof *r->stamp);
        r->cur_stamp = 1;
    }
    r->nnode = 0;
    r->nheap = 0;
    r->ngj = 0;
    r->ngoal = 0;
    memset(&r->info, 0, sizeof r->info);
    r->goal_node = NO_NODE;
    r->revision = r->w->revision;
}

/* Has the running call spent its limit (r->reach.limit units, r->reach.deadline; reach_run.c's test)?
 * Never before its first unit, so that every call goes on. */
static int joins_spent(const on_route *r)
{
    if (!r->reach.work) return 0;
    if (r->reach.limit && r->reach.work >= r->reach.limit) return 1;
    return r->reach.deadline > 0 && on_route_now() >= r->reach.deadline;
}

/* The joins from where they stand (r->jstage, r->ji: the endpoint being joined, its search resumed
 * when suspended), within the call's limit (r->reach.limit, deadline, work: joins_call): the status,
 * ON_IN_PROGRESS with r->joining when the limit stopped them (or when they are done: the planner's
 * search over the portals comes next). An endpoint's search is begun only while the call's limit is
 * not spent (joins_spent): one that ended past it leaves the next one's -- its set-up, which no unit
 * counts: the per-box arrays reserved, the portals mapped to their boxes, the blocks holding its point
 * built -- to the next call (r->jpause). Before, a call that ended one endpoint's search at its limit
 * began the next one's, set-up and all, past the limit, and stopped after it (spec/176: 12 of 935 calls
 * of one unit; a set-up took 1.5-1.9 ms thread CPU in the streamed frames when it remade the per-box
 * arrays, docs/benchmarks.md session 32). The joins are the same. */
static on_status joins_run(on_route *r)
{
    r->jpause = 0;
    const on_tree *t = r->jtree;
    size_t ns = r->jns, ng = r->jng;
    const double *starts = r->jin, *goals = r->jin + 3 * ns, *scost = r->jinc, *gcost = r->jinc + ns;
    double inv = 1.0 / r->w->p.scale;
    endpoint e;
    /* goals: their joins to their tile's portals */
    for (; r->jstage == 0 && r->ji < ng; r->ji++) {
        size_t i = r->ji;
        if (!r->jsusp && joins_spent(r)) {
            r->jpause = 1;
            return ON_IN_PROGRESS;
        }
        on_status st = endpoint_of(r, t, goals + 3 * i, 1, &e);
        if (on_failed(st)) return st;
        double gc = gcost[i] * inv;
        if (!(gc >= 0) || !isfinite(gc)) return ON_FAILURE | ON_INVALID;
        memcpy(r->goalpt + 3 * i, e.nav, sizeof e.nav);
        r->goalcost[i] = gc;
        r->ngoal = i + 1;
        if (r->jnear) {
            endpoint sa;
            st = endpoint_of(r, t, starts, 0, &sa);
            if (on_failed(st)) return st;
            int c1[3], c2[3], far = 0;
            wg_tile_ijk(r->w, sa.tile, c1);
            wg_tile_ijk(r->w, e.tile, c2);
            for (int k = 0; k < 3; k++) far |= abs(c1[k] - c2[k]) > 1;
            if (!far) {
                r->info.near = sa.tile == e.tile ? ON_ROUTE_SAME_TILE : ON_ROUTE_NEIGHBOURS;
                r->info.cost = on_dist3(sa.nav, e.nav) * r->w->p.scale;
                return ON_SUCCESS;
            }
        }
        /* a start in this tile: the goal's search heads for it and stops once it is met (its
         * portals are for routes that leave the tile; the start's own search joins it directly) */
        uint32_t reached;
        double sn[3], sl[3];
        for (int k = 0; k < 3; k++) sn[k] = (starts[k] - r->w->p.origin[k]) * inv;
        int same = local_in(r, &e, sn, sl);
        st = endpoint_reach(r, &e, same && e.s->nbox > r->directed_boxes ? sl : NULL, starts, same, &reached);
        if (on_ok(st) && r->reach.rtree && !met_any(r, &e, same ? sl : NULL)) { /* (jplain: as a point) */
            r->jplain = 1;
            st = endpoint_reach(r, &e, same && e.s->nbox > r->directed_boxes ? sl : NULL, starts, same, &reached);
        }
        if (on_in_progress(st)) return st;
        r->jplain = 0;
        if (on_failed(st)) return st;
        r->info.join_boxes += r->reach.pops;
        if (on_grow((void **)&r->gj, &r->gjcap, r->ngj + reached + 1, sizeof *r->gj)) return ON_FAILURE | ON_NO_MEMORY;
        for (uint32_t p = 0; p < e.g->np; p++)
            if (r->cost[p] < HUGE_VAL) r->gj[r->ngj++] = (gjoin){e.tile, p, (uint32_t)i, r->cost[p] + gc};
    }
    if (r->jstage == 0) {
        qsort(r->gj, r->ngj, sizeof *r->gj, gjoin_cmp);
        r->jstage = 1;
        r->ji = 0;
    }
    /* starts: push the portals each reaches (and a direct join to a goal in its tile) */
    for (; r->ji < ns; r->ji++) {
        size_t i = r->ji;
        if (!r->jsusp && joins_spent(r)) {
            r->jpause = 1;
            return ON_IN_PROGRESS;
        }
        on_status st = endpoint_of(r, t, starts + 3 * i, 0, &e);
        if (on_failed(st)) return st;
        memcpy(r->startpt + 3 * i, e.nav, sizeof e.nav);
        double sc = scost[i] * inv;
        if (!(sc >= 0) || !isfinite(sc)) return ON_FAILURE | ON_INVALID;
        uint32_t reached;
        double gl[3];
        size_t j0 = 0;
        while (j0 < ng && !goal_local(r, &e, j0, gl)) j0++;
        st = endpoint_reach(r, &e, j0 < ng ? gl : NULL, goals, j0 < ng, &reached);
        if (on_ok(st) && r->reach.rtree && !met_any(r, &e, j0 < ng ? gl : NULL)) { /* (as above) */
            r->jplain = 1;
            st = endpoint_reach(r, &e, j0 < ng ? gl : NULL, goals, j0 < ng, &reached);
        }
        if (on_in_progress(st)) return st;
        r->jplain = 0;
        if (on_failed(st)) return st;
        r->info.join_boxes += r->reach.pops;
        for (uint32_t p = 0; p < e.g->np; p++) {
            if (r->cost[p] == HUGE_VAL) continue;
            double x[3];
            on_route_portal_global(r->w, e.tile, p, x);
            if (on_route_relax(r, e.tile, p, sc + r->cost[p], x, NO_NODE, (uint32_t)i, NULL))
                return ON_FAILURE | ON_OUT_OF_NODES;
            r->jpushed++;
        }
        for (size_t j = j0; j < ng; j++) {
            if (!goal_local(r, &e, j, gl)) continue;
            double d = on_reach_cost_to(&r->reach, e.s, gl);
            if (d == HUGE_VAL) continue;
            uint32_t gn = on_route_node(r, 0, PORTAL_GOAL, 1);
            if (gn == NO_NODE) return ON_FAILURE | ON_OUT_OF_NODES;
            double before = r->node[gn].g;
            if (on_route_relax(r, 0, PORTAL_GOAL, sc + d + r->goalcost[j], NULL, NO_NODE, (uint32_t)i, NULL))
                return ON_FAILURE | ON_OUT_OF_NODES;
            if (r->node[gn].g < before) r->node[gn].goal = (uint32_t)j; /* only the goal that won names it */
            r->jpushed++;
        }
    }
    r->info.which = 0;
    if (!r->jpushed) return ON_FAILURE | ON_UNREACHABLE;
    if (r->ngj == 0 && on_route_node(r, 0, PORTAL_GOAL, 0) == NO_NODE) {
        r->info.which = 1;
        return ON_FAILURE | ON_UNREACHABLE;
    }
    return ON_IN_PROGRESS;
}

/* One call's joins (a start's, or a step's while joining): the limit set, joins_run, and r->joining
 * and the status kept; the shared sets the call pinned let go (route_boxes.h: a suspended join holds
 * none between calls). */
static on_status joins_call(on_route *r)
{
    double t0 = on_route_now();
    r->reach.limit = r->join_work;
    r->reach.deadline = r->join_seconds > 0 ? t0 + r->join_seconds : 0;
    r->reach.work = 0;
    r->reach.loop_s = r->reach.unit_max = r->reach.setup_s = 0;
    r->reach.remakes = 0;
    on_status st = joins_run(r);
    /* (the suspended search's set held until the next call; else let go) */
    on_route_boxes_hold(r->boxes, &r->bhold, r->bpin, 2, on_in_progress(st) && r->jsusp ? r->jgen : 0);
    for (int i = 0; i < 2; i++) {
        on_route_boxes_unpin(r->boxes, r->bpin[i]);
        r->bpin[i] = NULL;
    }
    r->info.join_work = r->reach.work;
    r->joining = on_in_progress(st) && (r->jsusp || r->jpause);
    if (!r->joining) r->reach.suspended = 0;
    r->calls.units += r->reach.work;
    r->calls.join_s += on_route_now() - t0;
    r->calls.loop_s += r->reach.loop_s;
    r->calls.setup_s += r->reach.setup_s;
    r->calls.remakes += r->reach.remakes;
    if (r->reach.unit_max > r->calls.unit_max) r->calls.unit_max = r->reach.unit_max;
    return r->status = st;
}

/* Where the endpoint sets are checked, copied and joined; see route.h. near_ok: a single pair may stop
 * as near. */
static on_status start_sets(on_route *r, const on_tree *t, const double *starts, const double *scost, size_t ns,
                            const double *goals, const double *gcost, size_t ng, int near_ok)
{
    on_route_reset(r);
    on_route_boxes_hold(r->boxes, &r->bhold, NULL, 0, 0); /* (a join the last start left suspended) */
    r->joining = 0;
    r->jsusp = 0;
    r->jpause = 0;
    r->reach.suspended = 0;
    r->status = ON_FAILURE | ON_INVALID;
    if (!t || ns == 0 || ng == 0 || !starts || !goals) return r->status;
    const on_tree_params *tp = on_tree_get_params(t);
    for (int k = 0; k < 3; k++)
        if (tp->tiles[k] != r->w->p.tiles[k]) return r->status;
    if (tp->depth != r->w->p.depth) return r->status;
    if (ng > r->goalcap) { /* goal points and costs, sized together */
        double *a = realloc(r->goalpt, ng * 3 * sizeof *a);
        if (a) r->goalpt = a;
        double *b = realloc(r->goalcost, ng * sizeof *b);
        if (b) r->goalcost = b;
        if (!a || !b) return r->status = ON_FAILURE | ON_NO_MEMORY;
        r->goalcap = ng;
    }
    if (ns > r->startcap) {
        double *a = realloc(r->startpt, ns * 3 * sizeof *a);
        if (!a) return r->status = ON_FAILURE | ON_NO_MEMORY;
        r->startpt = a;
        r->startcap = ns;
    }
    if (ns + ng > r->jincap) { /* the endpoints as given, kept for the steps that go on joining */
        double *a = realloc(r->jin, (ns + ng) * 3 * sizeof *a);
        if (a) r->jin = a;
        double *b = realloc(r->jinc, (ns + ng) * sizeof *b);
        if (b) r->jinc = b;
        if (!a || !b) return r->status = ON_FAILURE | ON_NO_MEMORY;
        r->jincap = ns + ng;
    }
    memcpy(r->jin, starts, ns * 3 * sizeof *r->jin);
    memcpy(r->jin + 3 * ns, goals, ng * 3 * sizeof *r->jin);
    for (size_t i = 0; i < ns; i++) r->jinc[i] = scost ? scost[i] : 0;
    for (size_t i = 0; i < ng; i++) r->jinc[ns + i] = gcost ? gcost[i] : 0;
    r->jtree = t;
    r->jns = ns;
    r->jng = ng;
    r->jnear = near_ok;
    r->jplain = 0;
    r->jstage = 0;
    r->ji = 0;
    r->jpushed = 0;
    return joins_call(r);
}

/* A start that stops at its limit keeps the join scratch it borrowed (its fields; jown) until its
 * joins end: the shared one gets the planner's (empty) own meanwhile, for other planners' starts. */
static void start_end(on_route *r)
{
    if (r->joining && r->joins && r->joins->lent) {
        r->jown = 1;
        r->reach.lazy = NULL; /* (set again by each join) */
        r->joins->lent = 0;
        return;
    }
    on_route_giveback(r);
}

/* The scratch a planner took while joining (jown) given home when its joins end. */
static void joins_home(on_route *r)
{
    if (!r->jown) return;
    r->jown = 0;
    r->reach.lazy = NULL;
    r->reach.suspended = 0;
    on_route_take_home(r); /* (the larger shared, the other kept: route_plan.h) */
}

/* Around a start: the shared join scratch borrowed when it is larger than the planner's own (kept by
 * joins_home), else the planner's own used: a planner holds at most one of its own, and one is made
 * only when both are empty. 0, or -1 when another start holds the shared one (misuse: ON_INVALID). */
static int borrow(on_route *r)
{
    if (!r->joins) return 0;
    if (r->joins->lent) return -1;
    if (r->reach.bytes > 0 && r->joins->reach.bytes <= r->reach.bytes) return 0;
    return on_route_borrow(r);
}

on_status on_route_start(on_route *r, const on_tree *t, const double a[3], const double b[3])
{
    if (!r || !a || !b) return ON_FAILURE | ON_INVALID;
    memset(&r->calls, 0, sizeof r->calls);
    joins_home(r); /* (a join under way is dropped) */
    if (borrow(r)) return r->status = ON_FAILURE | ON_INVALID; /* (route_plan.h) */
    on_status st = start_sets(r, t, a, NULL, 1, b, NULL, 1, 1);
    start_end(r);
    r->calls.nodes = r->nnode;
    return st;
}

on_status on_route_start_multi(on_route *r, const on_tree *t, const double *starts, const double *start_cost,
                               size_t ns, const double *goals, const double *goal_cost, size_t ng)
{
    if (!r) return ON_FAILURE | ON_INVALID;
    memset(&r->calls, 0, sizeof r->calls);
    joins_home(r);
    if (borrow(r)) return r->status = ON_FAILURE | ON_INVALID;
    on_status st = start_sets(r, t, starts, start_cost, ns, goals, goal_cost, ng, 0);
    start_end(r);
    r->calls.nodes = r->nnode;
    return st;
}

on_status on_route_step(on_route *r, size_t budget, size_t *done)
{
    if (done) *done = 0;
    if (!r) return ON_FAILURE | ON_INVALID;
    memset(&r->calls, 0, sizeof r->calls);
    r->step_deadline = r->join_seconds > 0 ? on_route_now() + r->join_seconds : 0;
    if (r->joining) { /* a start stopped at its join limit: its joins go on first */
        if (r->w->revision != r->revision) {
            r->joining = 0;
            joins_home(r);
            return r->status = ON_FAILURE | ON_STALE;
        }
        on_status st = joins_call(r);
        if (!r->joining) joins_home(r);
        r->calls.nodes = r->nnode;
        if (r->joining || !on_in_progress(st)) return st;
    }
    double t0 = on_route_now();
    size_t n = 0;
    on_status st = on_route_expand(r, budget, &n);
    if (done) *done = n;
    r->calls.expanded = n;
    r->calls.nodes = r->nnode;
    r->calls.expand_s = on_route_now() - t0;
    return st;
}

void on_route_last_call(const on_route *r, on_route_calls *out)
{
    if (r) *out = r->calls;
    else memset(out, 0, sizeof *out);
}

void on_route_set_join_limit(on_route *r, size_t work, double seconds)
{
    if (!r) return;
    r->join_work = work;
    r->join_seconds = seconds > 0 && isfinite(seconds) ? seconds : 0;
}

int on_route_joining(const on_route *r) { return r && r->joining; }

void on_route_set_join_radius(on_route *r, double leaves)
{
    if (!r) return;
    r->join_radius = leaves > 0 && leaves <= ON_MAX_RADIUS_LEAVES ? leaves : 0;
}
