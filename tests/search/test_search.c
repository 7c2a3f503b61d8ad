/*
 * test_search.c -- the query's C API on hand-built scenes: searching the prepared boxes alone
 * (ON_GRAPH_BOXES, failing with ON_UNPREPARED and the tile when one is not prepared), and area costs
 * (a dear gap avoided by a longer way round, an excluded box never entered, cost 1 = no area, an
 * area inside one large free cell gone round), and the corridor of a direct result over prepared boxes.
 */
#include "minitest.h"
#include "octonav.h"

#include <math.h>
#include <string.h>

/* A row of `nt` tiles of 8^3 leaves (scale 1) along x, with a wall across x = 4..5 of tile 0 that
 * leaves a gap at y, z in [6, 8): a search is needed from one side of the wall to the other. */
static on_tree *wall_row(int nt)
{
    on_tree_params p = {{nt, 1, 1}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    double a[3] = {4, 0, 0}, b[3] = {5, 6, 8}, c[3] = {4, 6, 0}, d[3] = {5, 8, 6};
    on_tree_add_box(t, a, b);
    on_tree_add_box(t, c, d);
    return t;
}

static void boxes_only(void)
{
    on_tree *t = wall_row(3);
    CHECK(t != NULL);
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 4096, &q)));
    on_query_opts o;
    on_query_opts_default(&o);
    o.graph = ON_GRAPH_BOXES;
    o.direct = 0;
    double a[3] = {1.5, 1.5, 1.5}, b[3] = {20.5, 1.5, 1.5}, path[3 * 64];
    size_t n = 0;
    on_query_info info;

    /* nothing prepared: the start's tile is named */
    on_status s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    CHECK_EQ_INT(s, ON_FAILURE | ON_UNPREPARED);
    CHECK_EQ_INT(info.loading_tile, 0);
    CHECK_EQ_INT(n, 0);
    CHECK(strcmp(on_status_string(s), "tile not prepared (on_tree_prepare)") == 0);

    /* the start's tile only: the goal's tile */
    CHECK(on_ok(on_tree_prepare(t, 0, NULL)));
    s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    CHECK_EQ_INT(s, ON_FAILURE | ON_UNPREPARED);
    CHECK_EQ_INT(info.loading_tile, 2);

    /* both ends' tiles but not the one between: found when the search reaches it */
    CHECK(on_ok(on_tree_prepare(t, 2, NULL)));
    s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    CHECK_EQ_INT(s, ON_FAILURE | ON_UNPREPARED);
    CHECK_EQ_INT(info.loading_tile, 1);
    CHECK_EQ_INT(info.graph, ON_GRAPH_BOXES);
    /* AUTO goes back to the cells instead, and finds the way */
    o.graph = ON_GRAPH_AUTO;
    s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    CHECK_EQ_INT(s, ON_SUCCESS);
    CHECK_EQ_INT(info.graph, ON_GRAPH_CELLS);
    double cells_len = info.length;

    /* everything prepared: over the boxes, through the gap (longer than the straight 19 leaves) */
    CHECK(on_ok(on_tree_prepare(t, -1, NULL)));
    o.graph = ON_GRAPH_BOXES;
    s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    CHECK_EQ_INT(s, ON_SUCCESS);
    CHECK_EQ_INT(info.graph, ON_GRAPH_BOXES);
    CHECK(n >= 3 && info.length > 19 + 1e-9 && info.length < cells_len + 1.0);
    CHECK(memcmp(path, a, sizeof a) == 0 && memcmp(path + 3 * (n - 1), b, sizeof b) == 0);
    /* the sliced form agrees */
    CHECK_EQ_INT(on_query_init(q, a, b, &o), ON_IN_PROGRESS);
    while (on_query_update(q, 1, NULL) == ON_IN_PROGRESS) {}
    double len = info.length;
    CHECK_EQ_INT(on_query_finalize(q, path, 64, &n, &info), ON_SUCCESS);
    CHECK(info.length == len);

    /* an edit invalidates the edited tile's graph: named again */
    double e0[3] = {10, 0, 0}, e1[3] = {11, 1, 1};
    CHECK(on_ok(on_tree_add_box(t, e0, e1)));
    s = on_query_find(q, a, b, &o, path, 64, &n, &info);
    CHECK_EQ_INT(s, ON_FAILURE | ON_UNPREPARED);
    CHECK_EQ_INT(info.loading_tile, 1);

    /* boxes need face points without Lazy Theta*; values past the enum are refused */
    o.any_angle = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_FAILURE | ON_INVALID);
    o.any_angle = 0;
    o.points = ON_POINTS_CENTRE;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_FAILURE | ON_INVALID);
    o.points = ON_POINTS_FACE;
    o.graph = ON_GRAPH_BOXES + 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_FAILURE | ON_INVALID);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* A 16^3 tile with a wall x in [7, 9] closed but for two gaps through it along z: A at y in [2, 4]
 * (on the straight line between the ends used below) and B at y in [12, 14]. */
static on_tree *two_gaps(void)
{
    on_tree_params p = {{1, 1, 1}, 4, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    double w[3][2][3] = {{{7, 0, 0}, {9, 2, 16}}, {{7, 4, 0}, {9, 12, 16}}, {{7, 14, 0}, {9, 16, 16}}};
    for (int i = 0; i < 3; i++) on_tree_add_box(t, w[i][0], w[i][1]);
    return t;
}

/* Does segment a -> b run strictly inside box lo..hi for a positive length? */
static int enters(const double a[3], const double b[3], const double lo[3], const double hi[3])
{
    double t0 = 0, t1 = 1;
    for (int k = 0; k < 3; k++) {
        double d = b[k] - a[k];
        if (d == 0) {
            if (!(a[k] > lo[k] && a[k] < hi[k])) return 0;
            continue;
        }
        double u = (lo[k] - a[k]) / d, v = (hi[k] - a[k]) / d;
        if (u > v) {
            double x = u;
            u = v;
            v = x;
        }
        if (u > t0) t0 = u;
        if (v < t1) t1 = v;
    }
    return t1 - t0 > 1e-9;
}

static double path_len(const double *p, size_t n)
{
    double len = 0;
    for (size_t i = 1; i < n; i++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++) d2 += (p[3 * i + k] - p[3 * i + k - 3]) * (p[3 * i + k] - p[3 * i + k - 3]);
        len += sqrt(d2);
    }
    return len;
}

static void areas(void)
{
    on_tree *t = two_gaps();
    on_query *q = NULL;
    CHECK(t && on_ok(on_query_create(t, 4096, &q)));
    double a[3] = {2, 3, 8}, b[3] = {14, 3, 8}, path[3 * 64], p0[3 * 64];
    size_t n = 0, n0 = 0;
    on_query_info info;
    on_query_opts o;
    on_query_opts_default(&o);
    o.relax = 20;
    /* no area: straight through gap A */
    CHECK_EQ_INT(on_query_find(q, a, b, &o, p0, 64, &n0, &info), ON_SUCCESS);
    CHECK_EQ_INT(n0, 2);
    CHECK(info.length == 12 && info.cost == 12 && info.areas == 0);

    /* gap A at 10 times the cost: the way round through B, longer but cheaper; its corners are the
     * near edges of B, (7, 12) and (9, 12): length 2 sqrt(5^2 + 9^2) + 2, entering no area */
    on_area dear = {{6, 0, 0}, {10, 6, 16}, 10, 0};
    o.areas = &dear;
    o.nareas = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_SUCCESS);
    double round = 2 * sqrt(106.0) + 2;
    CHECK_EQ_INT(n, 4);
    CHECK(fabs(info.length - round) < 1e-9 && info.cost == info.length && info.areas == 1);
    CHECK(fabs(path[3] - 7) < 1e-9 && fabs(path[4] - 12) < 1e-9 && fabs(path[6] - 9) < 1e-9 && fabs(path[7] - 12) < 1e-9);
    for (size_t i = 1; i < n; i++) CHECK(!enters(path + 3 * i - 3, path + 3 * i, dear.min, dear.max));
    /* the same from the tree's areas, and under Lazy Theta* */
    CHECK(on_ok(on_tree_set_areas(t, &dear, 1)));
    const on_area *ta;
    CHECK_EQ_INT(on_tree_areas(t, &ta), 1);
    CHECK(ta[0].cost == 10 && ta != &dear);
    o.areas = NULL;
    o.nareas = 0;
    double p2[3 * 64];
    size_t n2 = 0;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, p2, 64, &n2, &info), ON_SUCCESS);
    CHECK(n2 == n && memcmp(p2, path, 3 * n * sizeof *path) == 0 && info.areas == 1);
    o.any_angle = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, p2, 64, &n2, &info), ON_SUCCESS);
    CHECK(info.length < 12 + 2 * 9 && info.cost == info.length);
    for (size_t i = 1; i < n2; i++) CHECK(!enters(p2 + 3 * i - 3, p2 + 3 * i, dear.min, dear.max));
    o.any_angle = 0;
    CHECK(on_ok(on_tree_set_areas(t, NULL, 0)));
    CHECK_EQ_INT(on_tree_areas(t, NULL), 0);

    /* at twice the cost, through A is cheaper: the straight segment, paying 4 leaves twice */
    dear.cost = 2;
    o.areas = &dear;
    o.nareas = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_SUCCESS);
    CHECK_EQ_INT(n, 2);
    CHECK(fabs(info.length - 12) < 1e-12 && fabs(info.cost - 16) < 1e-9);

    /* excluded: never entered (the way round); an end inside it fails as blocked */
    dear.exclude = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_SUCCESS);
    CHECK(fabs(info.length - round) < 1e-9 && info.cost == info.length);
    for (size_t i = 1; i < n; i++) CHECK(!enters(path + 3 * i - 3, path + 3 * i, dear.min, dear.max));
    double inside[3] = {8, 3, 8};
    CHECK_EQ_INT(on_query_find(q, inside, b, &o, path, 64, &n, &info), ON_FAILURE | ON_BLOCKED);
    CHECK_EQ_INT(info.which, 0);
    /* both gaps excluded: unreachable */
    on_area both[2] = {dear, {{6, 10, 0}, {10, 16, 16}, 1, 1}};
    o.areas = both;
    o.nareas = 2;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_FAILURE | ON_UNREACHABLE);

    /* cost 1 is no area: the same path, bit for bit */
    dear.exclude = 0;
    dear.cost = 1;
    o.areas = &dear;
    o.nareas = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_SUCCESS);
    CHECK(n == n0 && memcmp(path, p0, 3 * n * sizeof *path) == 0 && info.areas == 0);

    /* bad areas are refused */
    on_area bad[4] = {{{0, 0, 0}, {1, 1, 1}, 0.5, 0}, {{0, 0, 0}, {0, 1, 1}, 2, 0}, {{0, 0, 0}, {1, 1, 1}, NAN, 0},
                      {{0, 0, 0}, {1, INFINITY, 1}, 2, 1}};
    for (int i = 0; i < 4; i++) {
        o.areas = &bad[i];
        CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_FAILURE | ON_INVALID);
        CHECK_EQ_INT(on_tree_set_areas(t, &bad[i], 1), ON_FAILURE | ON_INVALID);
    }
    o.areas = NULL;
    o.nareas = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_FAILURE | ON_INVALID);
    CHECK(path_len(p0, n0) == 12);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* An area inside one large free cell: the cells are split at its faces, and the search goes round
 * it (over its top edge: optimum 2 sqrt(10^2 + 4^2) + 8), or through it when that is cheaper. */
static void areas_in_open_space(void)
{
    on_tree_params p = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    on_query *q = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)) && on_ok(on_query_create(t, 1 << 16, &q)));
    on_query_opts o;
    on_query_opts_default(&o);
    o.relax = 20;
    on_area ar = {{12, 12, 12}, {20, 20, 20}, 10, 0};
    o.areas = &ar;
    o.nareas = 1;
    double a[3] = {2, 16, 16}, b[3] = {30, 16, 16}, path[3 * 64], best = 2 * sqrt(116.0) + 8;
    size_t n;
    on_query_info info;
    for (int any = 0; any < 2; any++)
        for (int ex = 0; ex < 2; ex++) {
            ar.exclude = ex;
            o.any_angle = any;
            CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_SUCCESS);
            CHECK_EQ_INT(info.graph, ON_GRAPH_CELLS);
            CHECK(info.cost == info.length && info.length >= best - 1e-9 && info.length < best + 0.005);
            for (size_t i = 1; i < n; i++) CHECK(!enters(path + 3 * i - 3, path + 3 * i, ar.min, ar.max));
        }
    /* at 1.1 times the cost the straight line is cheaper: 20 + 8 * 1.1 */
    ar.exclude = 0;
    ar.cost = 1.1;
    o.any_angle = 0;
    CHECK_EQ_INT(on_query_find(q, a, b, &o, path, 64, &n, &info), ON_SUCCESS);
    CHECK_EQ_INT(n, 2);
    CHECK(fabs(info.cost - 28.8) < 1e-9 && info.length == 28);
    /* an end inside the area: the node holding it is inside too, and the path leaves it straight */
    ar.cost = 10;
    double in[3] = {16, 16, 16};
    CHECK_EQ_INT(on_query_find(q, in, b, &o, path, 64, &n, &info), ON_SUCCESS);
    CHECK(fabs(info.cost - (4 * 10 + 10)) < 1e-9);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* A direct result over prepared boxes (the goal in sight, no search): its corridor is the start's box,
 * the cells the walk crossed, then the goal's box. The walk's de-duplication once compared box numbers
 * with cell codes and, where they matched, dropped the goal's box (6 of 30,342 direct results on 300
 * such scenes). Checked here: the last box of a -> b is the first box of b -> a. */
static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffff;
}

static void direct_corridor_over_boxes(void)
{
    unsigned seed = 1;
    int direct = 0, mismatched = 0;
    static double path[3 * 256], box[6 * 4096], back[6 * 4096];
    for (int scene = 0; scene < 100; scene++) {
        on_tree_params p = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
        on_tree *t = NULL;
        on_query *q = NULL;
        CHECK(on_ok(on_tree_create(&p, &t)));
        int nb = 20 + (int)(lcg(&seed) * 60 / 65536);
        for (int i = 0; i < nb; i++) {
            double a[3], b[3];
            for (int k = 0; k < 3; k++) {
                a[k] = lcg(&seed) * 30.0 / 65536;
                b[k] = a[k] + 1 + lcg(&seed) * 3.0 / 65536;
            }
            on_tree_add_box(t, a, b);
        }
        CHECK(on_ok(on_tree_prepare(t, -1, NULL)) && on_ok(on_query_create(t, 65536, &q)));
        on_query_opts o;
        on_query_opts_default(&o);
        for (int k = 0; k < 200; k++) {
            double a[3], b[3];
            size_t np, n, nb2;
            on_query_info info, info2;
            for (int d = 0; d < 3; d++) {
                a[d] = lcg(&seed) * 32.0 / 65536;
                b[d] = lcg(&seed) * 32.0 / 65536;
            }
            if (on_query_find(q, a, b, &o, path, 256, &np, &info) != ON_SUCCESS || info.expansions != 0 ||
                !on_ok(on_query_corridor(q, box, 4096, &n)) || n < 2)
                continue;
            CHECK_EQ_INT(n, info.cells);
            if (on_query_find(q, b, a, &o, path, 256, &np, &info2) != ON_SUCCESS || info2.expansions != 0 ||
                !on_ok(on_query_corridor(q, back, 4096, &nb2)))
                continue;
            direct++;
            if (memcmp(box + 6 * (n - 1), back, 6 * sizeof *box) != 0) mismatched++;
        }
        on_query_destroy(q);
        on_tree_destroy(t);
    }
    CHECK(direct > 5000);
    CHECK_EQ_INT(mismatched, 0);
}

TEST_MAIN("search", {
    boxes_only();
    areas();
    areas_in_open_space();
    direct_corridor_over_boxes();
})
