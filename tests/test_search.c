/*
 * test_search.c -- the query's C API on hand-built scenes: searching the prepared boxes alone
 * (ON_GRAPH_BOXES, failing with ON_UNPREPARED and the tile when one is not prepared).
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

TEST_MAIN("search", {
    boxes_only();
})
