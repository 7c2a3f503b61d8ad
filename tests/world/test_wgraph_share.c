/*
 * test_wgraph_share.c -- world graphs sharing their tile records (on_wgraph_share, wgraph.h): two trees
 * of one grid (B's wall grown by a leaf each way, as a larger agent radius's bake is) whose open tiles'
 * graphs are identical. Each graph alone holds one record per distinct tile graph (open tiles of one
 * border class are one); shared, the open tiles' records are held once for both graphs, the bytes are
 * counted by the first graph, and the routes are those of graphs alone (costs and crossings equal).
 * A record stays while any tile of any graph holds it (a tile removed from one graph leaves the other's
 * routes through it as they were) and is freed with its last; the first graph destroyed hands the count
 * to the next. A graph emptied holds the bytes of a new one (the pending faces' array freed).
 */
#include "octonav.h"
#include "route.h"
#include "wgraph.h"
#include "graph_test.h"
#include "minitest.h"

#include <string.h>

/* 4 x 1 x 3 tiles of 8 leaves; a wall in tile (1, 0, 1) with a door, grown by g leaves each way. */
static on_tree *scene(int g)
{
    on_tree *t = gt_tree(4, 1, 3, 3);
    gt_box(t, 10 - g, 0, 11 - g, 14 + g, 8, 13 + g); /* (x 8..16, z 8..16 is the tile) */
    return t;
}

static on_wgraph *graph_of(const on_tree *t, on_wgraph *with)
{
    on_wgraph *w = NULL;
    CHECK(on_ok(on_wgraph_create(on_tree_get_params(t), &w)));
    if (with) CHECK(on_ok(on_wgraph_share(w, with)));
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_tgraph *g = NULL;
        CHECK(on_ok(on_tgraph_build_tile(t, i, NULL, &g)));
        CHECK(on_ok(on_wgraph_add_tile(w, i, g)));
    }
    return w;
}

static on_wgraph_stats stats(const on_wgraph *w)
{
    on_wgraph_stats st;
    on_wgraph_stats_get(w, &st);
    return st;
}

static void add(on_wgraph *w, const on_tree *t, uint32_t tile)
{
    on_tgraph *g = NULL;
    CHECK(on_ok(on_tgraph_build_tile(t, tile, NULL, &g)));
    CHECK(on_ok(on_wgraph_add_tile(w, tile, g)));
}

/* The pairs planned: across the wall, along it, corner to corner. */
static const double PAIRS[][6] = {
    {4, 4, 4, 28, 4, 20},  {12, 4, 4, 12, 4, 20}, {2, 2, 2, 30, 6, 22},
    {30, 5, 3, 2, 3, 21},  {4, 4, 12, 28, 4, 12}, {20, 4, 2, 6, 4, 22}, {20, 4, 2, 20, 4, 22},
};
#define THROUGH6 6 /* the pair straight through tile 6, (2, 0, 1) */
#define NPAIRS (sizeof PAIRS / sizeof PAIRS[0])

typedef struct plan_out {
    on_status st;
    double cost;
    size_t n;
    on_route_cross c[16];
} plan_out;

static plan_out plan(const on_wgraph *w, const on_tree *t, size_t i)
{
    plan_out o;
    memset(&o, 0, sizeof o);
    on_route *r = NULL;
    CHECK(on_ok(on_route_create(w, 0, &r)));
    o.st = on_route_start(r, t, PAIRS[i], PAIRS[i] + 3);
    while (on_in_progress(o.st)) o.st = on_route_step(r, 1000, NULL);
    on_route_info info;
    memset(&info, 0, sizeof info);
    on_route_result(r, o.c, 16, &o.n, &info);
    o.cost = info.cost;
    on_route_destroy(r);
    return o;
}

/* The same answer: status, cost, crossings (tiles, portals, points), exactly. */
static int same_plan(const plan_out *a, const plan_out *b)
{
    if (a->st != b->st || a->cost != b->cost || a->n != b->n) return 0;
    for (size_t i = 0; i < a->n && i < 16; i++) {
        const on_route_cross *x = &a->c[i], *y = &b->c[i];
        if (x->tile != y->tile || x->portal != y->portal || x->to_tile != y->to_tile || x->to_portal != y->to_portal ||
            memcmp(x->point, y->point, sizeof x->point) != 0)
            return 0;
    }
    return 1;
}

static void test_share(void)
{
    on_tree *ta = scene(0), *tb = scene(1);
    /* alone: one record per distinct tile graph: the 11 open tiles fall in 9 border classes, + the wall's */
    on_wgraph *a0 = graph_of(ta, NULL), *b0 = graph_of(tb, NULL);
    on_wgraph_stats sa0 = stats(a0), sb0 = stats(b0);
    CHECK_EQ_INT(sa0.tiles, 12);
    CHECK_EQ_INT(sa0.records, 10);
    CHECK_EQ_INT(sb0.records, 10);
    CHECK_EQ_INT(sa0.sharing, 1);
    CHECK(sa0.faces == 0 && sa0.dormant == 0 && sa0.unresolved == 0);
    /* shared: B's open tiles' records are A's */
    on_wgraph *a = graph_of(ta, NULL), *b = graph_of(tb, a);
    on_wgraph_stats sa = stats(a), sb = stats(b);
    CHECK(a->pool == b->pool && a->pool != b0->pool);
    CHECK_EQ_INT(sa.records, 11);
    CHECK_EQ_INT(sb.records, 11);
    CHECK(sa.sharing == 2 && sb.sharing == 2 && sa.record_bytes == sb.record_bytes);
    CHECK(sa.record_bytes < sa0.record_bytes + sb0.record_bytes);
    /* the first graph counts the records, the other only what is its own */
    CHECK_EQ_INT(sa.bytes, sa0.bytes - sa0.record_bytes + sa.record_bytes);
    CHECK_EQ_INT(sb.bytes, sb0.bytes - sb0.record_bytes);
    CHECK(sa.portals == sa0.portals && sa.edges == sa0.edges && sa.links == sa0.links);
    CHECK(sb.portals == sb0.portals && sb.edges == sb0.edges && sb.links == sb0.links);
    /* the routes of the graphs alone */
    plan_out pa[NPAIRS], pb[NPAIRS];
    int found = 0;
    for (size_t i = 0; i < NPAIRS; i++) {
        pa[i] = plan(a0, ta, i);
        pb[i] = plan(b0, tb, i);
        plan_out x = plan(a, ta, i), y = plan(b, tb, i);
        CHECK(same_plan(&pa[i], &x));
        CHECK(same_plan(&pb[i], &y));
        found += pb[i].st == ON_SUCCESS && pb[i].n > 0;
    }
    CHECK_EQ_INT(found, (int)NPAIRS);
    /* tile (2, 0, 1) (its border class its own) leaves A: B's routes through it stay as they were */
    uint32_t t6 = 2 + 4 * 1;
    CHECK(on_ok(on_wgraph_remove_tile(a, t6)));
    CHECK_EQ_INT(stats(a).records, 11); /* (B's tile holds it) */
    int through = 0;
    for (size_t i = 0; i < NPAIRS; i++) {
        plan_out y = plan(b, tb, i);
        CHECK(same_plan(&pb[i], &y));
        for (size_t s = 0; s < pb[i].n; s++) through += pb[i].c[s].to_tile == t6;
    }
    CHECK(through > 0);
    on_wgraph_stats sa1 = stats(a);
    CHECK_EQ_INT(sa1.tiles, 11);
    /* ... and B's too: the record goes with its last tile */
    CHECK(on_ok(on_wgraph_remove_tile(b, t6)));
    CHECK_EQ_INT(stats(a).records, 10);
    CHECK(stats(a).record_bytes < sa1.record_bytes);
    CHECK_EQ_INT(plan(b, tb, THROUGH6).st, ON_FAILURE | ON_LOADING);
    /* back in both (dormant links restored): the same records, routes, bytes */
    add(b, tb, t6);
    add(a, ta, t6);
    CHECK_EQ_INT(stats(a).records, 11);
    for (size_t i = 0; i < NPAIRS; i++) {
        plan_out x = plan(a, ta, i), y = plan(b, tb, i);
        CHECK(same_plan(&pa[i], &x));
        CHECK(same_plan(&pb[i], &y));
    }
    CHECK(stats(a).dormant == 0 && stats(a).links == sa.links && stats(b).links == sb.links);
    /* a tile replaced by another graph (B's wall tile into A): A's own record freed, B's shared */
    uint32_t wall = 1 + 4 * 1;
    add(a, tb, wall);
    CHECK_EQ_INT(stats(a).records, 10);
    add(a, ta, wall);
    CHECK_EQ_INT(stats(a).records, 11);
    /* misuse: a graph holding tiles shares nothing; sharing again is nothing */
    CHECK_EQ_INT(on_wgraph_share(b0, a), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_wgraph_share(NULL, a), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_wgraph_share(a, NULL), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_wgraph_share(b, a), ON_SUCCESS);
    CHECK_EQ_INT(on_wgraph_share(a, a), ON_SUCCESS);
    CHECK(b0->pool != a->pool && b->pool == a->pool);
    /* the first graph destroyed: the next counts the records, its routes as they were */
    on_wgraph_stats sb1 = stats(b);
    on_wgraph_destroy(a);
    on_wgraph_stats sb2 = stats(b);
    CHECK_EQ_INT(sb2.records, 10); /* (A's wall record went with A) */
    CHECK_EQ_INT(sb2.sharing, 1);
    CHECK_EQ_INT(sb2.bytes, sb1.bytes + sb2.record_bytes);
    CHECK_EQ_INT(sb2.bytes, sb0.bytes); /* as if alone from the start */
    for (size_t i = 0; i < NPAIRS; i++) {
        plan_out y = plan(b, tb, i);
        CHECK(same_plan(&pb[i], &y));
    }
    /* a third graph joins B's pool and leaves it (destroyed first) */
    on_wgraph *c = graph_of(ta, b);
    CHECK_EQ_INT(stats(b).records, 11);
    CHECK_EQ_INT(stats(c).bytes, sa0.bytes - sa0.record_bytes);
    on_wgraph_destroy(c);
    CHECK_EQ_INT(stats(b).records, 10);
    on_wgraph_destroy(b);
    on_wgraph_destroy(a0);
    on_wgraph_destroy(b0);
    on_tree_destroy(ta);
    on_tree_destroy(tb);
}

/* A graph emptied holds the bytes of a new one: no pending faces' array, no records, no dormant links
 * (a tile alone has no neighbour to keep links for). Before, the faces' array kept its 256 slots. */
static void test_emptied(void)
{
    on_tree *t = scene(0);
    on_wgraph *w = NULL;
    CHECK(on_ok(on_wgraph_create(on_tree_get_params(t), &w)));
    on_wgraph_stats e = stats(w);
    add(w, t, 0);
    on_wgraph_stats one = stats(w);
    CHECK(one.faces == 2 && one.records == 1 && one.bytes > e.bytes); /* (+x and +z: the rest is the border) */
    CHECK(on_ok(on_wgraph_remove_tile(w, 0)));
    on_wgraph_stats z = stats(w);
    CHECK(z.faces == 0 && z.records == 0 && z.dormant == 0 && z.tiles == 0);
    CHECK_EQ_INT(z.bytes, e.bytes);
    on_wgraph_destroy(w);
    /* the whole scene, linked: no face left, the faces' array gone */
    w = graph_of(t, NULL);
    on_wgraph_stats all = stats(w);
    CHECK_EQ_INT(all.faces, 0);
    for (uint32_t i = 0; i < t->ntiles; i++) CHECK(on_ok(on_wgraph_remove_tile(w, i)));
    z = stats(w);
    CHECK(z.records == 0 && z.tiles == 0 && z.dormant > 0); /* (the links kept dormant for the tiles' return) */
    on_wgraph_destroy(w);
    on_tree_destroy(t);
}

TEST_MAIN("wgraph_share", {
    test_share();
    test_emptied();
})
