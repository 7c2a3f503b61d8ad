/*
 * test_route.c -- the world graph and the route planner (route.c) against Dijkstra over the whole
 * cell graph of small multi-tile worlds (free leaves, 6-connected for reachability, 26-connected
 * without corner cutting for the optimum): a route is found iff the goal is reachable, its cost is
 * never below the straight line and within the bound route.h documents of the optimum (the weighted
 * search's cost within its weight of the optimal search's over the same graph, that one within 2 x
 * the optimum + 2 leaves), every crossing lies on the shared face of its two tiles on leaves free on
 * both sides. Hand-made cases: a closed room
 * whose only exit is on the far side of its tile, a pocket in solid, near endpoints, a tile whose
 * graph is missing (loading), a world graph changed under a running route (stale), endpoint sets
 * (doors), out of nodes, tiles removed and added back (links rebuilt), bad arguments. Worlds of 128^3
 * tiles planned on the tree as loaded (endpoint tiles' boxes built block by block as the joins reach
 * them, kept across plans) and again once prepared: the same routes, the same costs.
 */
#include "octonav.h"
#include "route.h"
#include "route_plan.h"
#include "facepoint.h"
#include "graph_test.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x243F6A8885A308D3ull;
static double rnd(void) { return gt_rnd(&rs); }
#define new_tree gt_tree
#define box gt_box

/* Run a started route to its end in slices of `slice` expansions. */
static on_status run(on_route *r, on_status st, size_t slice)
{
    while (on_in_progress(st)) {
        size_t done = 0;
        st = on_route_step(r, slice, &done);
        if (on_in_progress(st) && done != slice) return ON_FAILURE; /* a slice stops only at its budget */
    }
    return st;
}

/* ---- reference: the whole cell graph ---------------------------------------------------------- */

/* Is crossing c of a route valid: on the face between its tiles, leaves on both sides free? */
static int crossing_ok(const on_tree *t, const gt_lattice *L, const on_route_cross *c)
{
    int a[3], b[3], n = t->n, axis = -1;
    on_tile_coords(t, c->tile, a);
    on_tile_coords(t, c->to_tile, b);
    for (int k = 0; k < 3; k++) {
        int d = b[k] - a[k];
        if (d == 0) continue;
        if (axis >= 0 || abs(d) != 1) return 0;
        axis = k;
    }
    if (axis < 0) return 0;
    double plane = (double)((a[axis] > b[axis] ? a[axis] : b[axis]) * n);
    if (fabs(c->point[axis] - plane) > 1e-9) return 0;
    /* some leaf touching the point on the face (up to 4 where it lies on lattice lines) is free on
     * both sides */
    int u = (axis + 1) % 3, v = (axis + 2) % 3;
    for (int du = -1; du <= 0; du++)
        for (int dv = -1; dv <= 0; dv++) {
            double pu = c->point[u], pv = c->point[v];
            if ((du && pu != floor(pu)) || (dv && pv != floor(pv))) continue;
            int l[3];
            l[u] = (int)floor(pu) + du;
            l[v] = (int)floor(pv) + dv;
            l[axis] = (int)plane - 1;
            int one = gt_lfree(L, l[0], l[1], l[2]);
            l[axis] = (int)plane;
            if (one && gt_lfree(L, l[0], l[1], l[2])) return 1;
        }
    return 0;
}

/* ---- random worlds ----------------------------------------------------------------------------- */

/* Random worlds of NX x NY x NZ tiles of 2^DEPTH leaves: boxes, some with a wall with one hole, some
 * with a sealed hollow shell across tile borders (goals inside it are unreachable from outside). */
static void random_worlds(int NX, int NY, int NZ, int DEPTH, int seeds, int directed, double *mean_out, double *max_out)
{
    int found = 0, unreach = 0, bad_found = 0, bad_cost = 0, bad_cross = 0, bad_line = 0, pairs = 0, near = 0;
    int bad_weight = 0, cheaper = 0;
    double worst = 0, sum = 0, worst_add = 0, lsum = 0, lworst = 0, xsum = 0, xworst = 0, wsum = 0, wworst = 0;
    int tn = 1 << DEPTH, X = NX * tn, Y = NY * tn, Z = NZ * tn;
    for (int seed = 0; seed < seeds; seed++) {
        on_tree *t = new_tree(NX, NY, NZ, DEPTH);
        int nb = (20 + 8 * seed) * X * Z / 1024;
        for (int i = 0; i < nb; i++) {
            double a[3] = {floor(rnd() * X), floor(rnd() * Y), floor(rnd() * Z)};
            double s = (seed % 2 ? 8 : 4) * tn / 8;
            box(t, a[0], a[1], a[2], a[0] + 1 + floor(rnd() * s), a[1] + 1 + floor(rnd() * s), a[2] + 1 + floor(rnd() * s));
        }
        if (seed % 3 == 2) /* a wall across the world with one hole */
            for (int z = 0; z < Z; z++)
                if (z < Z / 2 - 3 || z > Z / 2 - 2) box(t, X / 2 - 1, 0, z, X / 2 + 1, Y, z + 1);
        int shell = seed % 2 == 0;
        double c0 = tn - 3, c1 = tn + 3; /* the pocket [c0, c1)^3 around the corner of 8 tiles */
        if (shell) gt_shell(t, c0, c0, c0, c1, c1, c1);
        gt_lattice L = gt_lattice_of(t);
        on_wgraph *w = gt_world_of(t);
        on_route *r = NULL, *rx = NULL; /* rx: the same planner with weight 1 (the optimal search) */
        CHECK(on_ok(on_route_create(w, 0, &r)));
        CHECK(on_ok(on_route_create(w, 0, &rx)));
        CHECK(r->weight > 1); /* (else the comparison below checks nothing) */
        CHECK_EQ_INT(on_route_set_weight(rx, 1), ON_SUCCESS);
        for (on_route *x = r; x; x = x == r ? rx : NULL) {
            if (directed) x->directed_boxes = 0; /* every endpoint joins by the directed search */
            if (directed == 2) x->directed_budget = 1; /* ... stopped one box after its first portal */
        }
        size_t N = (size_t)L.d[0] * L.d[1] * L.d[2];
        double *dist = malloc(N * sizeof *dist);
        for (int q = 0; q < 24; q++) {
            int s[3], g[3];
            do {
                s[0] = (int)(rnd() * X), s[1] = (int)(rnd() * Y), s[2] = (int)(rnd() * Z);
            } while (!gt_lfree(&L, s[0], s[1], s[2]));
            int inside = shell && q % 4 == 0, tries = 0;
            do {
                if (inside)
                    for (int k = 0; k < 3; k++) g[k] = (int)c0 + (int)(rnd() * (c1 - c0));
                else
                    g[0] = (int)(rnd() * X), g[1] = (int)(rnd() * Y), g[2] = (int)(rnd() * Z);
            } while (!gt_lfree(&L, g[0], g[1], g[2]) && ++tries < 1000);
            if (tries >= 1000) continue;
            double a[3] = {s[0] + 0.5, s[1] + 0.5, s[2] + 0.5}, b[3] = {g[0] + 0.5, g[1] + 0.5, g[2] + 0.5};
            double opt = gt_dijkstra_to(&L, s, g, dist);
            on_status st = run(r, on_route_start(r, t, a, b), 1 + q % 5);
            on_route_info info;
            size_t n = 0;
            on_route_cross cr[256];
            on_route_result(r, cr, 256, &n, &info);
            if (on_ok(st) && info.near) {
                near++;
                continue;
            }
            pairs++;
            if (opt == HUGE_VAL) {
                if (st != (ON_FAILURE | ON_UNREACHABLE)) bad_found++;
                else unreach++;
                continue;
            }
            if (!on_ok(st)) {
                bad_found++;
                continue;
            }
            found++;
            double line = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
            if (info.cost < line - 1e-6) bad_line++;
            double ratio = info.cost / opt;
            sum += ratio;
            if (ratio > worst) worst = ratio;
            if (info.cost - opt > worst_add) worst_add = info.cost - opt;
            /* the bound route.h documents: the optimal search over the graph within 2 x the optimum
             * + 2 leaves, the weighted one within its weight of that */
            on_route_info ix;
            size_t nx = 0;
            bad_found += !on_ok(run(rx, on_route_start(rx, t, a, b), 7));
            on_route_result(rx, NULL, 0, &nx, &ix);
            if (ix.cost > 2.0 * opt + 2) bad_cost++;
            if (info.cost > r->weight * ix.cost + 1e-9) bad_weight++;
            cheaper += info.cost < ix.cost - 1e-9; /* never: ix is optimal over the graph */
            xsum += ix.cost / opt;
            if (ix.cost / opt > xworst) xworst = ix.cost / opt;
            wsum += info.cost / ix.cost;
            if (info.cost / ix.cost > wworst) wworst = info.cost / ix.cost;
            if (info.length < line - 1e-6 || info.length > info.cost + 1e-6) bad_line++;
            lsum += info.length / opt;
            if (info.length / opt > lworst) lworst = info.length / opt;
            for (size_t i = 0; i < n; i++) bad_cross += !crossing_ok(t, &L, &cr[i]);
            if (n > 0) { /* the crossings chain from the start's tile to the goal's */
                on_cell cs, cg;
                on_tree_locate(t, a, &cs);
                on_tree_locate(t, b, &cg);
                bad_cross += cr[0].tile != cs.tile || cr[n - 1].to_tile != cg.tile;
                for (size_t i = 1; i < n; i++) bad_cross += cr[i].tile != cr[i - 1].to_tile;
            }
        }
        free(dist);
        free(L.free);
        on_route_destroy(r);
        on_route_destroy(rx);
        on_wgraph_destroy(w);
        on_tree_destroy(t);
    }
    printf("route %dx%dx%d tiles of %d leaves%s: %d pairs (%d near skipped): %d found, %d unreachable; cost / optimum: mean %.3f max %.3f, "
           "max excess %.2f leaves (weight 1: mean %.3f max %.3f; weighted / weight 1: mean %.4f max %.4f); crossings pulled: mean %.3f max %.3f\n",
           NX, NY, NZ, tn, directed == 2 ? " (directed joins, budget 1)" : directed ? " (directed joins)" : "", pairs, near, found, unreach, found ? sum / found : 0, worst, worst_add,
           found ? xsum / found : 0, xworst, found ? wsum / found : 0, wworst, found ? lsum / found : 0, lworst);
    CHECK_EQ_INT(bad_found, 0);
    CHECK_EQ_INT(bad_line, 0);
    CHECK_EQ_INT(bad_cost, 0);
    CHECK_EQ_INT(bad_weight, 0);
    CHECK_EQ_INT(cheaper, 0);
    CHECK_EQ_INT(bad_cross, 0);
    CHECK(found > 40);
    CHECK(unreach > 0);
    *mean_out = found ? sum / found : 0;
    *max_out = worst;
}

static void test_random_worlds(void)
{
    double mean, mx;
    random_worlds(4, 2, 4, 3, 12, 0, &mean, &mx);
    random_worlds(3, 2, 3, 4, 6, 0, &mean, &mx);
    /* the directed joins of big tiles (route_plan.h), forced on these small ones: the same checks */
    random_worlds(4, 2, 4, 3, 12, 1, &mean, &mx);
    random_worlds(3, 2, 3, 4, 6, 1, &mean, &mx);
    /* and with the smallest budget (a join that keeps only the first portals it meets) */
    random_worlds(3, 2, 3, 4, 6, 2, &mean, &mx);
}

/* ---- hand-made cases ------------------------------------------------------------------------------ */

static on_status plan(on_route *r, const on_tree *t, double ax, double ay, double az, double bx, double by, double bz)
{
    double a[3] = {ax, ay, az}, b[3] = {bx, by, bz};
    return run(r, on_route_start(r, t, a, b), 3);
}

/* on_route_set_weight (route.h): the values it takes and refuses, refused during a search; a weight
 * 1 gives the cheapest route on a known world, the others within their weight of it. */
static void test_weight(void)
{
    on_tree *t = new_tree(4, 1, 1, 4);
    gt_closed_room(t);
    on_wgraph *w = gt_world_of(t);
    on_route *r = NULL;
    CHECK(on_ok(on_route_create(w, 0, &r)));
    double w0 = on_route_weight(r);
    CHECK(w0 > 1 && w0 <= ROUTE_WEIGHT_MAX);
    const double bad[] = {0.999, 0, -1, ROUTE_WEIGHT_MAX + 0.001, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(on_route_set_weight(r, bad[i]), ON_FAILURE | ON_INVALID);
        CHECK(on_route_weight(r) == w0);
    }
    CHECK_EQ_INT(on_route_set_weight(NULL, 1), ON_FAILURE | ON_INVALID);
    CHECK(on_route_weight(NULL) == 0);
    CHECK_EQ_INT(on_route_set_weight(r, ROUTE_WEIGHT_MAX), ON_SUCCESS);
    CHECK(on_route_weight(r) == ROUTE_WEIGHT_MAX);
    /* during a search: the same weight changes nothing; another ends the search (ON_INVALID) */
    double a[3] = {1.5, 4, 4}, b[3] = {60, 8, 8};
    on_status st = on_route_start(r, t, a, b);
    CHECK(on_in_progress(st));
    CHECK_EQ_INT(on_route_set_weight(r, ROUTE_WEIGHT_MAX), ON_SUCCESS);
    CHECK_EQ_INT(run(r, st, 1), ON_SUCCESS);
    st = on_route_start(r, t, a, b);
    CHECK(on_in_progress(st));
    CHECK_EQ_INT(on_route_set_weight(r, 1), ON_SUCCESS);
    CHECK(on_route_weight(r) == 1);
    size_t done = 0;
    CHECK_EQ_INT(on_route_step(r, 100, &done), ON_FAILURE | ON_INVALID);
    /* weight 1: the optimal search; the default and the largest: never cheaper, within their weight */
    on_route_info i1, iw;
    on_route_cross cr[16];
    size_t n = 0;
    const double ws[] = {1, w0, ROUTE_WEIGHT_MAX};
    double c1 = 0;
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(on_route_set_weight(r, ws[k]), ON_SUCCESS);
        CHECK_EQ_INT(plan(r, t, 1.5, 4, 4, 60, 8, 8), ON_SUCCESS);
        CHECK_EQ_INT(on_route_result(r, cr, 16, &n, k ? &iw : &i1), ON_SUCCESS);
        if (k == 0) c1 = i1.cost;
        else CHECK(iw.cost >= c1 - 1e-9 && iw.cost <= ws[k] * c1 + 1e-9);
    }
    on_route_destroy(r);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

static void test_cases(void)
{
    on_tree *t = new_tree(4, 1, 1, 4); /* x in [0, 64), 16 leaves a tile */
    gt_closed_room(t); /* tile 0: the room, its exit a corridor to x = 16 */
    gt_shell(t, 20, 5, 5, 26, 11, 11); /* tile 1: a pocket in a sealed shell */
    on_wgraph *w = gt_world_of(t);
    on_route *r = NULL;
    CHECK(on_ok(on_route_create(w, 0, &r)));
    on_route_info info;
    on_route_cross cr[16];
    size_t n = 0;
    /* the room: its only way out is the corridor to the far (+x) side of its tile, although the -x
     * face's portals are nearer by straight line (and the world's -x face has nothing beyond) */
    CHECK_EQ_INT(plan(r, t, 1.5, 4, 4, 60, 8, 8), ON_SUCCESS);
    CHECK_EQ_INT(on_route_result(r, cr, 16, &n, &info), ON_SUCCESS);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(info.near, ON_ROUTE_FAR);
    if (n == 3) {
        CHECK(cr[0].tile == 0 && cr[0].to_tile == 1 && cr[1].to_tile == 2 && cr[2].to_tile == 3);
        CHECK(cr[0].point[0] == 16 && cr[0].point[1] >= 3 && cr[0].point[1] <= 5 && cr[0].point[2] >= 3 &&
              cr[0].point[2] <= 5);
    }
    /* the corridor and the room force 14.5 leaves straight along y = z = 4 before anything else */
    CHECK(info.cost >= 14.5 + sqrt(44 * 44 + 16 + 16) - 1e-9);
    CHECK(info.length <= info.cost + 1e-9);
    CHECK(info.expansions > 0);
    /* the pocket: unreachable from outside, both ways; never in a route */
    CHECK_EQ_INT(plan(r, t, 23, 8, 8, 60, 8, 8), ON_FAILURE | ON_UNREACHABLE);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.which, 0);
    CHECK_EQ_INT(plan(r, t, 60, 8, 8, 23, 8, 8), ON_FAILURE | ON_UNREACHABLE);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.which, 1);
    /* near: one tile, neighbouring tiles */
    CHECK_EQ_INT(plan(r, t, 10, 10, 10, 12, 12, 12), ON_SUCCESS);
    CHECK_EQ_INT(on_route_result(r, cr, 16, &n, &info), ON_SUCCESS);
    CHECK(info.near == ON_ROUTE_SAME_TILE && n == 0);
    CHECK_EQ_INT(plan(r, t, 10, 10, 10, 30, 12, 12), ON_SUCCESS);
    on_route_result(r, cr, 16, &n, &info);
    CHECK(info.near == ON_ROUTE_NEIGHBOURS && n == 0);
    /* endpoints outside, blocked */
    CHECK_EQ_INT(plan(r, t, -1, 8, 8, 60, 8, 8), ON_FAILURE | ON_OUTSIDE);
    CHECK_EQ_INT(plan(r, t, 60, 8, 8, 0.5, 4, 4), ON_FAILURE | ON_BLOCKED);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.which, 1);
    /* a missing tile graph on the way: loading, with the tile; back: found again (links remade) */
    CHECK(on_ok(on_wgraph_remove_tile(w, 2)));
    CHECK_EQ_INT(plan(r, t, 1.5, 4, 4, 60, 8, 8), ON_FAILURE | ON_LOADING);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.loading_tile, 2);
    CHECK_EQ_INT(plan(r, t, 60, 8, 8, 35, 8, 8), ON_FAILURE | ON_LOADING); /* an endpoint's own tile */
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.loading_tile, 2);
    on_tgraph *g = NULL;
    CHECK(on_ok(on_tgraph_build_tile(t, 2, NULL, &g)));
    CHECK(on_ok(on_wgraph_add_tile(w, 2, g)));
    CHECK_EQ_INT(plan(r, t, 1.5, 4, 4, 60, 8, 8), ON_SUCCESS);
    /* the world graph changed under a running route */
    double a[3] = {1.5, 4, 4}, b[3] = {60, 8, 8};
    CHECK_EQ_INT(on_route_start(r, t, a, b), ON_IN_PROGRESS);
    CHECK(on_ok(on_tgraph_build_tile(t, 1, NULL, &g)));
    CHECK(on_ok(on_wgraph_add_tile(w, 1, g)));
    CHECK_EQ_INT(on_route_step(r, 100, NULL), ON_FAILURE | ON_STALE);
    /* endpoint sets (a hole's doors): the cheaper goal with its cost wins */
    double starts[3] = {1.5, 4, 4}, goals[6] = {60, 8, 8, 50, 8, 8}, gc[2] = {0, 100};
    CHECK_EQ_INT(run(r, on_route_start_multi(r, t, starts, NULL, 1, goals, gc, 2), 2), ON_SUCCESS);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.goal, 0);
    gc[0] = 100;
    gc[1] = 0;
    CHECK_EQ_INT(run(r, on_route_start_multi(r, t, starts, NULL, 1, goals, gc, 2), 2), ON_SUCCESS);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.goal, 1);
    /* ... and a start and a goal in one tile join directly */
    double s2[3] = {10, 10, 10}, g2[3] = {12, 10, 10};
    CHECK_EQ_INT(run(r, on_route_start_multi(r, t, s2, NULL, 1, g2, NULL, 1), 2), ON_SUCCESS);
    CHECK_EQ_INT(on_route_result(r, cr, 16, &n, &info), ON_SUCCESS);
    CHECK(n == 0 && fabs(info.cost - 2) < 1e-9);
    /* a result buffer too small */
    CHECK_EQ_INT(plan(r, t, 1.5, 4, 4, 60, 8, 8), ON_SUCCESS);
    CHECK_EQ_INT(on_route_result(r, cr, 1, &n, &info), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK_EQ_INT(n, 3);
    /* out of nodes */
    on_route *small = NULL;
    CHECK(on_ok(on_route_create(w, 2, &small)));
    CHECK_EQ_INT(plan(small, t, 1.5, 4, 4, 60, 8, 8), ON_FAILURE | ON_OUT_OF_NODES);
    on_route_destroy(small);
    /* a tree tile not loaded at an endpoint */
    on_tree_unload_tile(t, 3);
    CHECK_EQ_INT(plan(r, t, 1.5, 4, 4, 60, 8, 8), ON_FAILURE | ON_LOADING);
    on_route_result(r, cr, 16, &n, &info);
    CHECK_EQ_INT(info.loading_tile, 3);
    /* stats */
    on_wgraph_stats st;
    on_wgraph_stats_get(w, &st);
    CHECK_EQ_INT(st.tiles, 4);
    CHECK(st.portals > 4 && st.links >= 3 && st.bytes > 0);
    CHECK(on_route_bytes(r) > 0);
    /* bad arguments */
    CHECK_EQ_INT(on_wgraph_add_tile(w, 99, NULL), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_wgraph_remove_tile(w, 4), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_route_step(NULL, 1, NULL), ON_FAILURE | ON_INVALID);
    on_route_destroy(r);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

/* ---- tiles coming and going: faces kept until linked, dormant links, unresolved pairs ------------- */
static void test_streaming(void)
{
    on_tree *t = new_tree(4, 1, 1, 3); /* x in [0, 32), 8 leaves a tile */
    box(t, 10, 0, 0, 12, 6, 8);        /* a wall in tile 1 with a gap above it */
    on_wgraph *w = NULL;
    CHECK(on_ok(on_wgraph_create(on_tree_get_params(t), &w)));
    on_tgraph *g[4];
    uint32_t crc[4];
    for (uint32_t i = 0; i < 4; i++) {
        CHECK(on_ok(on_tgraph_build_tile(t, i, NULL, &g[i])));
        crc[i] = g[i]->crc;
    }
    on_wgraph_stats st;
    CHECK(on_ok(on_wgraph_add_tile(w, 0, g[0])));
    CHECK(on_ok(on_wgraph_add_tile(w, 2, g[2])));
    on_wgraph_stats_get(w, &st);
    CHECK(st.faces == 3 && st.links == 0 && st.rects >= 3); /* 0: +x; 2: -x, +x (the rest is the world's border) */
    CHECK(on_ok(on_wgraph_add_tile(w, 1, g[1])));
    CHECK(on_ok(on_wgraph_add_tile(w, 3, g[3])));
    on_wgraph_stats_get(w, &st);
    CHECK(st.faces == 0 && st.rects == 0 && st.dormant == 0 && st.unresolved == 0 && st.links >= 3);
    size_t links = st.links, bytes = st.bytes;
    on_route *r = NULL;
    CHECK(on_ok(on_route_create(w, 0, &r)));
    on_route_info info;
    on_route_cross cr[8];
    size_t n = 0;
    CHECK_EQ_INT(plan(r, t, 2, 2, 4, 30, 2, 4), ON_SUCCESS);
    on_route_result(r, cr, 8, &n, &info);
    double cost = info.cost;
    CHECK(n == 3 && cost > 28);
    /* tile 1 leaves: its links kept dormant; back with the same graph: restored, same route */
    CHECK(on_ok(on_wgraph_remove_tile(w, 1)));
    on_wgraph_stats_get(w, &st);
    CHECK(st.dormant >= 2 && st.faces == 0 && st.links == links - st.dormant);
    CHECK_EQ_INT(plan(r, t, 2, 2, 4, 30, 2, 4), ON_FAILURE | ON_LOADING);
    on_route_result(r, cr, 8, &n, &info);
    CHECK_EQ_INT(info.loading_tile, 1);
    CHECK(on_ok(on_tgraph_build_tile(t, 1, NULL, &g[1])));
    CHECK_EQ_INT(g[1]->crc, crc[1]);
    CHECK(on_ok(on_wgraph_add_tile(w, 1, g[1])));
    on_wgraph_stats_get(w, &st);
    CHECK(st.dormant == 0 && st.links == links && st.bytes >= bytes && st.unresolved == 0);
    CHECK_EQ_INT(plan(r, t, 2, 2, 4, 30, 2, 4), ON_SUCCESS);
    on_route_result(r, cr, 8, &n, &info);
    CHECK(n == 3 && info.cost == cost);
    /* a rebake inside tile 1, away from its faces: other weights, the same portals (CRC): restored */
    CHECK(on_ok(on_wgraph_remove_tile(w, 1)));
    box(t, 13, 3, 3, 14, 4, 4);
    CHECK(on_ok(on_tgraph_build_tile(t, 1, NULL, &g[1])));
    CHECK_EQ_INT(g[1]->crc, crc[1]);
    CHECK(on_ok(on_wgraph_add_tile(w, 1, g[1])));
    on_wgraph_stats_get(w, &st);
    CHECK(st.unresolved == 0 && st.dormant == 0 && st.links == links);
    /* a rebake of tile 1 touching both its x faces (other portals): its neighbours' faces were dropped
     * when linked, so both pairs are unresolved; the planner asks for the neighbour's graph; re-adding
     * it links exactly */
    CHECK(on_ok(on_wgraph_remove_tile(w, 1)));
    box(t, 8, 0, 0, 9, 2, 8);
    box(t, 15, 0, 0, 16, 2, 8);
    CHECK(on_ok(on_tgraph_build_tile(t, 1, NULL, &g[1])));
    CHECK(g[1]->crc != crc[1]);
    CHECK(on_ok(on_wgraph_add_tile(w, 1, g[1])));
    on_wgraph_stats_get(w, &st);
    CHECK(st.unresolved == 2 && st.faces == 2 && st.dormant == 0);
    CHECK_EQ_INT(plan(r, t, 2, 2, 4, 30, 2, 4), ON_FAILURE | ON_LOADING);
    on_route_result(r, cr, 8, &n, &info);
    CHECK_EQ_INT(info.loading_tile, 0); /* tile 0's +x face is the one gone */
    CHECK(on_ok(on_tgraph_build_tile(t, 0, NULL, &g[0])));
    CHECK(on_ok(on_wgraph_add_tile(w, 0, g[0])));
    CHECK_EQ_INT(plan(r, t, 2, 2, 4, 30, 2, 4), ON_FAILURE | ON_LOADING);
    on_route_result(r, cr, 8, &n, &info);
    CHECK_EQ_INT(info.loading_tile, 2);
    /* ... or from the tree: tile 2's portals rebuilt from its loaded tile (same contents, same CRC) */
    size_t resolved = 0, tl = 0;
    on_tree_encode_tile(t, 2, NULL, 0, &tl);
    uint8_t *tb = malloc(tl);
    CHECK(on_ok(on_tree_encode_tile(t, 2, tb, tl, &tl)));
    on_tree_unload_tile(t, 2);
    CHECK(on_ok(on_wgraph_resolve(w, t, &resolved)));
    CHECK_EQ_INT(resolved, 0); /* not loaded: later */
    CHECK(on_ok(on_tree_decode_tile(t, 2, tb, tl)));
    free(tb);
    CHECK(on_ok(on_wgraph_resolve(w, t, &resolved)));
    CHECK_EQ_INT(resolved, 1);
    on_wgraph_stats_get(w, &st);
    CHECK(st.unresolved == 0 && st.faces == 0 && st.links >= 3);
    CHECK_EQ_INT(plan(r, t, 2, 2, 4, 30, 2, 4), ON_SUCCESS);
    on_route_result(r, cr, 8, &n, &info);
    CHECK(n == 3 && info.cost >= cost);
    for (size_t i = 0; i < n; i++) CHECK(cr[i].point[1] >= 2); /* over the new sills */
    /* a result read after the graph changed is refused */
    CHECK(on_ok(on_wgraph_remove_tile(w, 3)));
    CHECK_EQ_INT(on_route_result(r, cr, 8, &n, &info), ON_FAILURE | ON_STALE);
    on_route_destroy(r);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

/* ---- unprepared big tiles: lazily built boxes ------------------------------------------------------ */

/* 2x1x2 tiles of 128 leaves (8 blocks each), seeded boxes and a wall with one hole: 40 pairs planned
 * on the tree as loaded (the planner's lazy sets: route_plan.h) and on the tree prepared (the tree's
 * sets): found for the same pairs, the same costs, the same crossings; the lazy sets built only part
 * of their tiles' blocks and kept them (a plan again between the same points builds none). */
static void test_lazy_boxes(void)
{
    on_tree *t = new_tree(2, 1, 2, 7);
    int X = 256, Y = 128, Z = 256;
    for (int i = 0; i < 300; i++) {
        double a[3] = {floor(rnd() * X), floor(rnd() * Y), floor(rnd() * Z)};
        box(t, a[0], a[1], a[2], a[0] + 1 + floor(rnd() * 24), a[1] + 1 + floor(rnd() * 24), a[2] + 1 + floor(rnd() * 24));
    }
    for (int z = 0; z < Z; z++)
        if (z < 60 || z > 64) box(t, 127, 0, z, 129, Y, z + 1);
    on_wgraph *w = gt_world_of(t);
    on_route *lazy = NULL, *prep = NULL;
    CHECK(on_ok(on_route_create(w, 0, &lazy)));
    CHECK(on_ok(on_route_create(w, 0, &prep)));
    prep->directed_boxes = 0; /* a lazy set's size is unknown: its joins are the directed ones (route_start.c) */
    lazy->lazy_bdepth = 6;    /* the eager build's 64-leaf blocks (the default's smaller: test_route_joins) */
    double pts[40][6];
    on_status st1[40];
    double cost1[40];
    size_t ncr1[40];
    on_route_cross cr1[40][64];
    int n = 0, found = 0, partial = 0;
    while (n < 40) {
        on_cell c;
        double *p = pts[n];
        for (int k = 0; k < 6; k++) p[k] = floor(rnd() * (k % 3 == 1 ? Y : X)) + 0.5;
        if (!on_ok(on_tree_locate(t, p, &c)) || !on_ok(on_tree_locate(t, p + 3, &c))) continue; /* both free */
        /* (start_multi: every tile here neighbours every other, on_route_start would answer near) */
        st1[n] = run(lazy, on_route_start_multi(lazy, t, p, NULL, 1, p + 3, NULL, 1), 7);
        on_route_info info;
        CHECK(on_ok(on_route_result(lazy, cr1[n], 64, &ncr1[n], &info)) == on_ok(st1[n]));
        cost1[n] = info.cost;
        for (int i = 0; i < ROUTE_BOX_CACHE; i++)
            partial += lazy->bc[i].valid && lazy->bc[i].lazy && lazy->bc[i].lazy->built < 8;
        n++;
    }
    CHECK(partial > 0);
    /* the same pair again: its tiles' blocks are kept */
    uint32_t built = 0, again = 0;
    for (int i = 0; i < ROUTE_BOX_CACHE; i++) built += lazy->bc[i].valid ? lazy->bc[i].lazy->built : 0;
    CHECK_EQ_INT(run(lazy, on_route_start_multi(lazy, t, pts[39], NULL, 1, pts[39] + 3, NULL, 1), 7), st1[39]);
    for (int i = 0; i < ROUTE_BOX_CACHE; i++) again += lazy->bc[i].valid ? lazy->bc[i].lazy->built : 0;
    CHECK_EQ_INT(again, built);
    CHECK(on_ok(on_tree_prepare(t, -1, NULL)));
    for (int i = 0; i < n; i++) {
        on_status st = run(prep, on_route_start_multi(prep, t, pts[i], NULL, 1, pts[i] + 3, NULL, 1), 7);
        CHECK_EQ_INT(st, st1[i]);
        if (!on_ok(st)) continue;
        found++;
        on_route_info info;
        on_route_cross cr[64];
        size_t nc = 0;
        on_route_result(prep, cr, 64, &nc, &info);
        CHECK(fabs(info.cost - cost1[i]) < 1e-9);
        CHECK_EQ_INT(nc, ncr1[i]);
        for (size_t j = 0; j < nc && j < ncr1[i]; j++) CHECK(cr[j].tile == cr1[i][j].tile && cr[j].portal == cr1[i][j].portal);
    }
    printf("route 2x1x2 tiles of 128 leaves, unprepared (lazy boxes) against prepared: %d pairs, %d found, same costs\n", n, found);
    CHECK(found > 20);
    on_route_destroy(lazy);
    on_route_destroy(prep);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

/* on_rect_best (facepoint.h, the route's pulled crossings) against a 65 x 65 sampling of random face
 * rectangles and against the best point of their edges (on_rect_edges, every edge tried): inside the
 * rectangle, never longer than either (1e-9), points on both sides of the plane, on one side, and on
 * the plane. */
static double through(const double a[3], const double q[3], const double c[3]) { return on_dist3(a, q) + on_dist3(q, c); }

static void test_rect_best(void)
{
    uint64_t seed = 0x13198A2E03707344ull; /* its own: the random worlds' sample stays the same */
    int bad_in = 0, bad_grid = 0, bad_face = 0, better = 0, n = 4000;
    for (int it = 0; it < n; it++) {
        int k = it % 3, i = (k + 1) % 3, j = (k + 2) % 3, side = it % 4; /* 0, 1: across; 2: one side; 3: a on it */
        double lo[3], hi[3], a[3], c[3], q[3], f[3] = { 0, 0, 0 }; /* (gcc cannot see on_rect_edges set it) */
        lo[k] = hi[k] = floor(gt_rnd(&seed) * 8);
        for (int m = 0; m < 2; m++) {
            int ax = m ? j : i;
            lo[ax] = floor(gt_rnd(&seed) * 8);
            hi[ax] = lo[ax] + 1 + floor(gt_rnd(&seed) * 6);
        }
        for (int ax = 0; ax < 3; ax++) {
            a[ax] = gt_rnd(&seed) * 16 - 4;
            c[ax] = gt_rnd(&seed) * 16 - 4;
        }
        a[k] = lo[k] - 0.01 - gt_rnd(&seed) * 6;
        c[k] = side == 2 ? lo[k] - gt_rnd(&seed) * 6 : lo[k] + 0.01 + gt_rnd(&seed) * 6;
        if (side == 3) a[k] = lo[k];
        on_rect_best(a, c, lo, hi, k, q);
        on_rect_edges(a, c, lo, hi, k, i, 15, f);
        for (int ax = 0; ax < 3; ax++) bad_in += q[ax] < lo[ax] - 1e-12 || q[ax] > hi[ax] + 1e-12;
        double d = through(a, q, c), best = HUGE_VAL;
        for (int u = 0; u <= 64; u++)
            for (int v = 0; v <= 64; v++) {
                double g[3];
                g[k] = lo[k];
                g[i] = lo[i] + (hi[i] - lo[i]) * u / 64;
                g[j] = lo[j] + (hi[j] - lo[j]) * v / 64;
                double e = through(a, g, c);
                if (e < best) best = e;
            }
        bad_grid += d > best + 1e-9;
        bad_face += d > through(a, f, c) + 1e-9;
        better += d < through(a, f, c) - 1e-9;
    }
    printf("on_rect_best: %d rectangles, %d shorter than the best edge point (inside the rectangle)\n", n, better);
    CHECK_EQ_INT(bad_in, 0);
    CHECK_EQ_INT(bad_grid, 0);
    CHECK_EQ_INT(bad_face, 0);
}

TEST_MAIN("route", {
    test_rect_best();
    test_cases();
    test_weight();
    test_streaming();
    test_random_worlds();
    test_lazy_boxes();
})
