/*
 * test_route_joins.c -- planners sharing one join scratch (on_route_joins, route.h): on random worlds
 * of 3x1x3 tiles of 64 leaves (directed joins forced on, so the heading search runs too), two planners
 * given one scratch, started and stepped in turns, give the routes of a planner with its own (costs,
 * crossings, expansions, boxes the joins settled); the scratch is theirs, not the planners' (a
 * planner's bytes do not count it, and a second planner repeating a plan grows it no more); a start
 * while another holds the scratch fails ON_INVALID and leaves it untouched; a planner given NULL
 * plans with its own again.
 */
#include "route.h"
#include "route_plan.h"
#include "graph_test.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double rnd(void) { return gt_rnd(&rs); }

typedef struct outcome {
    on_status st;
    on_route_info info;
    on_route_cross cr[32];
    size_t n;
} outcome;

static void finish(on_route *r, on_status st, outcome *o)
{
    while (on_in_progress(st)) st = on_route_step(r, 3, NULL);
    o->st = st;
    o->n = 0;
    memset(&o->info, 0, sizeof o->info);
    on_route_result(r, o->cr, 32, &o->n, &o->info);
}

static int same(const outcome *a, const outcome *b)
{
    if (a->st != b->st || a->n != b->n || a->info.cost != b->info.cost || a->info.length != b->info.length ||
        a->info.expansions != b->info.expansions || a->info.join_boxes != b->info.join_boxes)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->cr[i].tile != b->cr[i].tile || a->cr[i].portal != b->cr[i].portal ||
            memcmp(a->cr[i].point, b->cr[i].point, sizeof a->cr[i].point) != 0)
            return 0;
    return 1;
}

static void test_shared(void)
{
    on_tree *t = gt_tree(3, 1, 3, 6);
    int X = 192, Y = 64, Z = 192;
    for (int i = 0; i < 160; i++) {
        double a[3] = {floor(rnd() * X), floor(rnd() * Y), floor(rnd() * Z)};
        gt_box(t, a[0], a[1], a[2], a[0] + 1 + floor(rnd() * 16), a[1] + 1 + floor(rnd() * 16), a[2] + 1 + floor(rnd() * 16));
    }
    on_wgraph *w = gt_world_of(t);
    on_route *p1 = NULL, *p2 = NULL, *alone = NULL;
    on_route_joins *j = NULL;
    CHECK(on_ok(on_route_create(w, 0, &p1)));
    CHECK(on_ok(on_route_create(w, 0, &p2)));
    CHECK(on_ok(on_route_create(w, 0, &alone)));
    CHECK(on_ok(on_route_joins_create(&j)));
    size_t empty = on_route_joins_bytes(j); /* (the struct only) */
    on_route_set_joins(p1, j);
    on_route_set_joins(p2, j);
    p1->directed_boxes = p2->directed_boxes = alone->directed_boxes = 0;
    size_t own1 = on_route_bytes(p1);
    int pairs = 0, found = 0;
    while (pairs < 30) {
        double p[9];
        on_cell c;
        for (int k = 0; k < 9; k++) p[k] = floor(rnd() * (k % 3 == 1 ? Y : X)) + 0.5;
        if (!on_ok(on_tree_locate(t, p, &c)) || !on_ok(on_tree_locate(t, p + 3, &c)) ||
            !on_ok(on_tree_locate(t, p + 6, &c)))
            continue;
        /* in turns: p2 starts (joins in the shared scratch) while p1's plan runs */
        outcome o1, o2, r1, r2;
        on_status s1 = on_route_start_multi(p1, t, p, NULL, 1, p + 3, NULL, 1);
        if (on_in_progress(s1)) s1 = on_route_step(p1, 1, NULL);
        on_status s2 = on_route_start_multi(p2, t, p + 3, NULL, 1, p + 6, NULL, 1);
        finish(p1, s1, &o1);
        finish(p2, s2, &o2);
        finish(alone, on_route_start_multi(alone, t, p, NULL, 1, p + 3, NULL, 1), &r1);
        finish(alone, on_route_start_multi(alone, t, p + 3, NULL, 1, p + 6, NULL, 1), &r2);
        CHECK(same(&o1, &r1));
        CHECK(same(&o2, &r2));
        found += on_ok(o1.st) + on_ok(o2.st);
        pairs++;
    }
    CHECK(found >= 30); /* most pairs have routes: not a comparison of failures */
    size_t jb = on_route_joins_bytes(j);
    CHECK(jb > empty);
    /* the planners hold none of it: their bytes grew by their own goal joins and endpoints only,
     * less than the lone planner's, which holds its own scratch */
    CHECK(on_route_bytes(p1) - own1 < on_route_bytes(alone) - own1);
    /* held by a start (as another thread's would): a start fails, nothing is touched */
    CHECK_EQ_INT(on_route_borrow(p1), 0);
    double a[3] = {10.5, 10.5, 10.5}, b[3] = {180.5, 10.5, 180.5};
    CHECK_EQ_INT(on_route_start_multi(p2, t, a, NULL, 1, b, NULL, 1), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_route_start(p2, t, a, b), ON_FAILURE | ON_INVALID);
    on_route_giveback(p1);
    CHECK_EQ_INT(on_route_joins_bytes(j), jb);
    /* its own again */
    on_route_set_joins(p2, NULL);
    outcome o, r;
    finish(p2, on_route_start_multi(p2, t, a, NULL, 1, b, NULL, 1), &o);
    finish(alone, on_route_start_multi(alone, t, a, NULL, 1, b, NULL, 1), &r);
    CHECK(same(&o, &r));
    CHECK_EQ_INT(on_route_joins_bytes(j), jb);
    printf("route joins: 30 pairs in turns on 3x1x3 tiles of 64 leaves, %d routes the same as a lone planner's; "
           "scratch %zu bytes shared\n",
           found, jb);
    on_route_destroy(p1);
    on_route_destroy(p2);
    on_route_destroy(alone);
    on_route_joins_destroy(j);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

TEST_MAIN("route_joins", { test_shared(); })
