/*
 * test_reach_resume.c -- joins cut to fit (reach.h's work limit, on_route_set_join_limit): a local
 * search stopped at its limit and resumed until done gives what one whole search gives, byte for
 * byte (the costs to every target, the targets reached, the boxes settled, the lazy set's blocks and
 * boxes built), on every tile of random worlds and at several limits; a planner whose starts and
 * steps join within a limit finds the routes of an unlimited one (status, cost, length, expansions,
 * boxes settled, crossings), on tiles of 128 leaves (lazy sets of 16-leaf blocks, directed joins)
 * and of 64 (sets built whole, the full search), two planners sharing one join scratch in turns as
 * well; no call spends more than its limit plus one unit's worth (a box and its neighbour blocks);
 * a deadline already passed still makes progress (one unit a call).
 */
#include "octonav.h"
#include "reach.h"
#include "route.h"
#include "route_plan.h"
#include "graph_test.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint64_t rs = 0x51ED2705A11CEull;
static double rnd(void) { return gt_rnd(&rs); }

/* The most one call may pass its limit by: the last unit, a box popped with the blocks beyond its
 * six faces built. */
#define OVERSHOOT (1 + 6 * REACH_BLOCK_UNITS)

static on_tree *random_world(int tx, int tz, int depth, int nbox, int maxside)
{
    return gt_random_world(tx, tz, depth, nbox, maxside, &rs);
}

/* A free tile-local point of tile (cx, cz) of t, n leaves a side. */
static void free_local(const on_tree *t, int cx, int cz, int n, double p[3])
{
    for (;;) {
        double w[3] = {cx * n + floor(rnd() * n) + 0.5, floor(rnd() * n) + 0.5, cz * n + floor(rnd() * n) + 0.5};
        on_cell c;
        if (!on_ok(on_tree_locate(t, w, &c))) continue;
        p[0] = w[0] - cx * n;
        p[1] = w[1];
        p[2] = w[2] - cz * n;
        return;
    }
}

typedef struct reach_out {
    on_status st;
    double cost[16];
    uint32_t reached;
    size_t pops, calls, worst;
    uint32_t nbox, built;
} reach_out;

/* One search from p over tile `tile`'s lazy set (fresh) to the npt targets, heading for `to`, in
 * calls of at most `limit` units (0: one whole call); the set's boxes copied to *boxes. */
static void reach_once(const on_tree *t, uint32_t tile, const double *pts, uint32_t npt, const uint32_t *grp,
                       const double p[3], const double to[3], size_t limit, reach_out *o, on_box **boxes)
{
    on_boxlazy z;
    CHECK_EQ_INT(on_boxlazy_init_blocks(&z, (int)t->p.depth, 4), 0);
    z.tab = &t->tiles[tile].table;
    z.solid = t->tiles[tile].solid;
    on_reach r;
    memset(&r, 0, sizeof r);
    r.lazy = &z;
    r.limit = limit;
    r.work = 0;
    memset(o, 0, sizeof *o);
    o->st = on_reach_points_group(&r, &z.set, pts, npt, p, grp, to, 1.5, 0, 8, 20, o->cost, &o->reached);
    o->calls = 1;
    o->worst = r.work;
    while (on_in_progress(o->st)) {
        CHECK(r.suspended);
        r.work = 0;
        o->st = on_reach_resume(&r, &z.set, o->cost, &o->reached);
        o->calls++;
        if (r.work > o->worst) o->worst = r.work;
    }
    CHECK(!r.suspended);
    o->pops = r.pops;
    o->nbox = z.set.nbox;
    o->built = z.built;
    *boxes = malloc(z.set.nbox * sizeof **boxes + 1);
    CHECK(*boxes != NULL);
    if (*boxes) memcpy(*boxes, z.set.box, z.set.nbox * sizeof **boxes);
    on_reach_free(&r);
    on_boxlazy_free(&z);
}

static void test_reach_sliced(void)
{
    on_tree *t = random_world(2, 2, 7, 400, 24);
    int n = 128, searches = 0, cut = 0;
    size_t limits[] = {1, 5, 37};
    for (uint32_t tile = 0; tile < 4; tile++) {
        int cx = (int)(tile % 2), cz = (int)(tile / 2);
        if (t->tiles[tile].solid) continue;
        for (int k = 0; k < 6; k++) {
            double pts[3 * 16], p[3], to[3];
            uint32_t grp[16], npt = 6 + (uint32_t)(rnd() * 8);
            for (uint32_t i = 0; i < npt; i++) {
                free_local(t, cx, cz, n, pts + 3 * i);
                grp[i] = i % 3; /* three components, as a tile graph's */
            }
            free_local(t, cx, cz, n, p);
            for (int a = 0; a < 3; a++) to[a] = rnd() * 3 * n - n; /* may be outside the tile */
            reach_out whole, part;
            on_box *bw = NULL, *bp = NULL;
            reach_once(t, tile, pts, npt, grp, p, to, 0, &whole, &bw);
            CHECK_EQ_INT(whole.calls, 1);
            for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
                reach_once(t, tile, pts, npt, grp, p, to, limits[l], &part, &bp);
                CHECK_EQ_INT(part.st, whole.st);
                CHECK_EQ_INT(part.reached, whole.reached);
                CHECK(memcmp(part.cost, whole.cost, npt * sizeof *part.cost) == 0);
                CHECK_EQ_INT(part.pops, whole.pops);
                CHECK_EQ_INT(part.nbox, whole.nbox);
                CHECK_EQ_INT(part.built, whole.built);
                CHECK(bp && bw && memcmp(bp, bw, whole.nbox * sizeof *bp) == 0);
                CHECK(part.worst <= limits[l] + OVERSHOOT);
                cut += part.calls > 1;
                free(bp);
            }
            free(bw);
            searches++;
        }
    }
    CHECK(searches >= 18);
    CHECK(cut >= searches); /* (most searches were cut: the comparison is not of whole calls) */
    printf("reach resumed: %d searches on 2x2 tiles of 128 leaves (lazy 16-leaf blocks) at limits 1, 5, 37: "
           "costs, boxes settled and blocks built the same as one whole call; %d of them cut\n",
           searches, cut);
    on_tree_destroy(t);
}

typedef struct outcome {
    on_status st;
    on_route_info info;
    on_route_cross cr[32];
    size_t n, calls, worst;
} outcome;

static on_status plan_start(on_route *r, const on_tree *t, const double *p, outcome *o)
{
    memset(o, 0, sizeof *o);
    on_status st = on_route_start_multi(r, t, p, NULL, 1, p + 3, NULL, 1);
    on_route_info info;
    size_t n;
    on_route_result(r, NULL, 0, &n, &info);
    o->calls = 1;
    o->worst = info.join_work;
    return st;
}

/* Steps to the end (3 portals a step); each call's join work noted. */
static void finish(on_route *r, on_status st, outcome *o)
{
    on_route_info info;
    size_t n;
    while (on_in_progress(st)) {
        st = on_route_step(r, 3, NULL);
        on_route_result(r, NULL, 0, &n, &info);
        o->calls++;
        if (info.join_work > o->worst) o->worst = info.join_work;
    }
    o->st = st;
    o->n = 0;
    memset(&o->info, 0, sizeof o->info);
    on_route_result(r, o->cr, 32, &o->n, &o->info);
}

static int same(const outcome *a, const outcome *b)
{
    return gt_same_route(a->st, &a->info, a->cr, a->n, b->st, &b->info, b->cr, b->n);
}

/* Random pairs on t (X x Y x Z leaves): a planner limited to `limit` units a call (and one with a
 * deadline already passed) against an unlimited one; two limited planners sharing a scratch in turns. */
static void route_sliced(on_tree *t, int X, int Y, int Z, size_t limit, const char *what)
{
    on_wgraph *w = gt_world_of(t);
    on_route *whole = NULL, *cut = NULL, *late = NULL, *s1 = NULL, *s2 = NULL;
    on_route_joins *j = NULL;
    CHECK(on_ok(on_route_create(w, 0, &whole)));
    CHECK(on_ok(on_route_create(w, 0, &cut)));
    CHECK(on_ok(on_route_create(w, 0, &late)));
    CHECK(on_ok(on_route_create(w, 0, &s1)));
    CHECK(on_ok(on_route_create(w, 0, &s2)));
    CHECK(on_ok(on_route_joins_create(&j)));
    on_route_set_joins(s1, j);
    on_route_set_joins(s2, j);
    on_route_set_join_limit(cut, limit, 0);
    on_route_set_join_limit(late, 0, 1e-12); /* (a deadline passed after the first unit) */
    on_route_set_join_limit(s1, limit, 0);
    on_route_set_join_limit(s2, limit, 0);
    int pairs = 0, found = 0, sliced = 0, shared = 0;
    size_t worst = 0;
    while (pairs < 24) {
        double p[6], q[6];
        on_cell c;
        for (int k = 0; k < 6; k++) p[k] = floor(rnd() * (k % 3 == 1 ? Y : k % 3 == 0 ? X : Z)) + 0.5;
        for (int k = 0; k < 6; k++) q[k] = floor(rnd() * (k % 3 == 1 ? Y : k % 3 == 0 ? X : Z)) + 0.5;
        if (!on_ok(on_tree_locate(t, p, &c)) || !on_ok(on_tree_locate(t, p + 3, &c)) ||
            !on_ok(on_tree_locate(t, q, &c)) || !on_ok(on_tree_locate(t, q + 3, &c)))
            continue;
        outcome ow, oc, ol, o1, o2, ow2;
        finish(whole, plan_start(whole, t, p, &ow), &ow);
        finish(cut, plan_start(cut, t, p, &oc), &oc);
        finish(late, plan_start(late, t, p, &ol), &ol);
        CHECK(same(&oc, &ow));
        CHECK(same(&ol, &ow));
        CHECK(oc.worst <= limit + OVERSHOOT);
        if (oc.worst > worst) worst = oc.worst;
        sliced += on_route_joining(cut) == 0 && oc.calls > ow.calls;
        /* in turns: s1 stopped at its limit while s2 starts over the shared scratch */
        on_status a = plan_start(s1, t, p, &o1);
        shared += on_route_joining(s1);
        on_status b = plan_start(s2, t, q, &o2);
        while (on_in_progress(a) || on_in_progress(b)) {
            if (on_in_progress(a)) a = on_route_step(s1, 3, NULL);
            if (on_in_progress(b)) b = on_route_step(s2, 3, NULL);
        }
        finish(s1, a, &o1);
        finish(s2, b, &o2);
        finish(whole, plan_start(whole, t, q, &ow2), &ow2);
        CHECK(same(&o1, &ow));
        CHECK(same(&o2, &ow2));
        found += on_ok(ow.st);
        pairs++;
    }
    CHECK(found >= 12);
    CHECK(sliced >= 12); /* most plans took more calls when cut */
    CHECK(shared >= 12);
    printf("route joins cut to %zu units (%s): 24 pairs, %d routes, the same as whole joins' (and with a passed "
           "deadline, and two planners sharing a scratch in turns: %d with one stopped meanwhile); %d plans took "
           "more calls; a call's join work at most %zu\n",
           limit, what, found, shared, sliced, worst);
    on_route_destroy(whole);
    on_route_destroy(cut);
    on_route_destroy(late);
    on_route_destroy(s1);
    on_route_destroy(s2);
    on_route_joins_destroy(j);
    on_wgraph_destroy(w);
}

static void test_route_sliced(void)
{
    on_tree *t = random_world(2, 2, 7, 300, 24); /* lazy sets, directed joins */
    route_sliced(t, 256, 128, 256, 4, "2x1x2 tiles of 128 leaves, lazy blocks");
    on_tree_destroy(t);
    t = random_world(3, 3, 6, 160, 16); /* sets built whole, the full search */
    route_sliced(t, 192, 64, 192, 3, "3x1x3 tiles of 64 leaves, whole sets");
    on_tree_destroy(t);
}

TEST_MAIN("reach_resume", {
    test_reach_sliced();
    test_route_sliced();
})
