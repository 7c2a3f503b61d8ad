/*
 * test_route_deadline.c -- no call of the route planner runs far past the deadline it was given
 * (issue 31, goal 1): a step whose deadline has already passed expands one portal and returns (it read
 * the clock every 8 expansions: 8 a call), and stepping on gives the route of one whole step (status,
 * cost, length, expansions, crossings); a local search over a lazy set that builds blocks as it goes
 * does not grow its per-box arrays mid-search (a realloc copy of them is the one unit whose cost grows
 * with the set: the pages it first touches, ~12 us each on a loaded machine), from an empty scratch or
 * a used one, and gives what it gave before.
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

static uint64_t rs = 0xDEAD11E31ull;
static double rnd(void) { return gt_rnd(&rs); }

static on_tree *random_world(int tx, int tz, int depth, int nbox, int maxside)
{
    return gt_random_world(tx, tz, depth, nbox, maxside, &rs);
}

typedef struct outcome {
    on_status st;
    on_route_info info;
    on_route_cross cr[64];
    size_t n, calls, most; /* step calls, the most portals one expanded */
} outcome;

/* A plan from p to p + 3 stepped with a budget of 4096 portals a call to its end. */
static void plan(on_route *r, const on_tree *t, const double *p, outcome *o)
{
    memset(o, 0, sizeof *o);
    on_status st = on_route_start_multi(r, t, p, NULL, 1, p + 3, NULL, 1);
    while (on_in_progress(st)) {
        size_t done = 0;
        st = on_route_step(r, 4096, &done);
        o->calls++;
        if (done > o->most) o->most = done;
    }
    o->st = st;
    on_route_result(r, o->cr, 64, &o->n, &o->info);
}

static int same(const outcome *a, const outcome *b)
{
    return gt_same_route(a->st, &a->info, a->cr, a->n, b->st, &b->info, b->cr, b->n);
}

/* Steps given a deadline already passed: one expansion a call, the whole step's route. */
static void test_step_deadline(void)
{
    on_tree *t = random_world(4, 4, 5, 260, 8); /* 4x1x4 tiles of 32 leaves: routes of many portals */
    int X = 128, Y = 32, Z = 128;
    on_wgraph *w = gt_world_of(t);
    on_route *whole = NULL, *late = NULL;
    CHECK(on_ok(on_route_create(w, 0, &whole)));
    CHECK(on_ok(on_route_create(w, 0, &late)));
    on_route_set_join_limit(late, 0, 1e-12); /* (passed before the step's first clock read) */
    int pairs = 0, found = 0, long_ones = 0;
    size_t most = 0, expansions = 0;
    while (pairs < 40) {
        double p[6];
        on_cell c;
        for (int k = 0; k < 6; k++) p[k] = floor(rnd() * (k % 3 == 1 ? Y : k % 3 == 0 ? X : Z)) + 0.5;
        if (!on_ok(on_tree_locate(t, p, &c)) || !on_ok(on_tree_locate(t, p + 3, &c))) continue;
        outcome ow, ol;
        plan(whole, t, p, &ow);
        plan(late, t, p, &ol);
        CHECK(same(&ol, &ow));
        CHECK(ol.most <= 1); /* main: 8 (the clock read every 8 expansions) */
        if (ol.most > most) most = ol.most;
        CHECK(ow.calls <= 2); /* (the whole one: its joins, then every portal in one step) */
        long_ones += ow.info.expansions > 8;
        expansions += ow.info.expansions;
        found += on_ok(ow.st);
        pairs++;
    }
    CHECK(found >= 20);
    CHECK(long_ones >= 10); /* (plans that a step of 8 expansions would not finish) */
    printf("steps past their deadline: 40 pairs on 4x1x4 tiles of 32 leaves, %d routes (%d of more than 8 "
           "expansions, %zu in all), the same as whole steps'; at most %zu expansion a call\n",
           found, long_ones, expansions, most);
    on_route_destroy(whole);
    on_route_destroy(late);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

/* A free tile-local point of tile (cx, cz) of t, n leaves a side. */
static void free_local(const on_tree *t, int cx, int cz, int n, double p[3])
{
    for (;;) {
        double q[3] = {cx * n + floor(rnd() * n) + 0.5, floor(rnd() * n) + 0.5, cz * n + floor(rnd() * n) + 0.5};
        on_cell c;
        if (!on_ok(on_tree_locate(t, q, &c))) continue;
        p[0] = q[0] - cx * n;
        p[1] = q[1];
        p[2] = q[2] - cz * n;
        return;
    }
}

/* Lazy searches of one unit a call: the per-box arrays (r.g, r.cap) are the ones the search started
 * with until it ends, the set's blocks built meanwhile; the costs those of a whole call over a fresh
 * scratch and set. */
static void test_lazy_no_growth(void)
{
    on_tree *t = random_world(2, 2, 7, 300, 24);
    int n = 128, searches = 0, built = 0;
    on_reach used; /* a scratch kept across searches (as a planner's) */
    memset(&used, 0, sizeof used);
    on_boxlazy zu;
    CHECK_EQ_INT(on_boxlazy_init_blocks(&zu, 7, 4), 0);
    for (uint32_t tile = 0; tile < 4; tile++) {
        int cx = (int)(tile % 2), cz = (int)(tile / 2);
        if (t->tiles[tile].solid) continue;
        on_boxlazy_clear(&zu);
        zu.tab = &t->tiles[tile].table;
        zu.solid = t->tiles[tile].solid;
        for (int k = 0; k < 8; k++) {
            double pts[3 * 12], p[3], to[3], cw[12], cc[12];
            uint32_t grp[12], npt = 12, rw = 0, rc = 0;
            for (uint32_t i = 0; i < npt; i++) {
                free_local(t, cx, cz, n, pts + 3 * i);
                grp[i] = i % 2;
            }
            free_local(t, cx, cz, n, p);
            for (int a = 0; a < 3; a++) to[a] = rnd() * 3 * n - n;
            /* whole, over a fresh set and scratch */
            on_boxlazy zw;
            CHECK_EQ_INT(on_boxlazy_init_blocks(&zw, 7, 4), 0);
            zw.tab = zu.tab;
            zw.solid = zu.solid;
            on_reach rw_;
            memset(&rw_, 0, sizeof rw_);
            rw_.lazy = &zw;
            on_status sw = on_reach_points_group(&rw_, &zw.set, pts, npt, p, grp, to, 1.5, 0, 8, 20, cw, &rw);
            /* one unit a call, over the kept set and scratch (fresh on the first search) */
            used.lazy = &zu;
            used.limit = 1;
            used.work = 0;
            uint32_t before = zu.built;
            on_status sc = on_reach_points_group(&used, &zu.set, pts, npt, p, grp, to, 1.5, 0, 8, 20, cc, &rc);
            const double *g0 = used.g;
            size_t cap0 = used.cap;
            CHECK(cap0 > zu.set.nbox);
            while (on_in_progress(sc)) {
                used.work = 0;
                sc = on_reach_resume(&used, &zu.set, cc, &rc);
                CHECK(used.g == g0 && used.cap == cap0); /* main: grown as blocks were built */
            }
            CHECK_EQ_INT(sc, sw);
            CHECK_EQ_INT(rc, rw);
            CHECK(memcmp(cc, cw, npt * sizeof *cc) == 0);
            built += (int)(zu.built - before);
            searches++;
            on_reach_free(&rw_);
            on_boxlazy_free(&zw);
        }
    }
    CHECK(searches >= 24);
    CHECK(built >= 100);
    printf("lazy searches of one unit a call: %d on 2x1x2 tiles of 128 leaves (16-leaf blocks, %d built by "
           "them), the same costs as whole calls, the per-box arrays never grown mid-search\n",
           searches, built);
    on_reach_free(&used);
    on_boxlazy_free(&zu);
    on_tree_destroy(t);
}

TEST_MAIN("route_deadline", {
    test_step_deadline();
    test_lazy_no_growth();
})
