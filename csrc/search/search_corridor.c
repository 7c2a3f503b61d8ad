/*
 * search_corridor.c -- what a search used, read back for debugging and drawing (octonav.h, "search"):
 * the corridor of its result (the graph nodes the path was built through, in order) and the nodes it
 * reached (with those it expanded: the closed set), as world-space boxes in caller-owned buffers
 * (count, then fill, as Detour's getPath / getPathFromDijkstraSearch). Reads the query's state after
 * the search (query.h); the search itself is untouched.
 */
#include "query.h"

/* Node c's region (nav space) through `ops`, in world space at boxes[0..5]. */
static void world_box(on_query *q, const on_graph_ops *ops, on_cell c, double *box)
{
    double mn[3], mx[3], s;
    ops->region(&q->g, c, mn, mx, &s);
    on_to_world(q->t, mn, box);
    on_to_world(q->t, mx, box + 3);
}

/* 1 when the nodes index data a tile change since the search has freed (prepared boxes): then they
 * cannot be read, as finalize reports (ON_STALE). */
static int nodes_gone(const on_query *q)
{
    return q->g.ops->borrows_tiles && on_tileset_changed(&q->touched, q->t);
}

on_status on_query_corridor(on_query *q, double *boxes, size_t cap, size_t *n)
{
    *n = 0;
    if (q->path.n == 0) return ON_FAILURE | ON_INVALID; /* no result built (on_query_finalize) */
    if (nodes_gone(q)) return ON_FAILURE | ON_STALE;
    *n = q->ncorr;
    q->g.org_tile = UINT32_MAX; /* (the region cache: read each tile afresh) */
    for (size_t i = 0; boxes && i < q->ncorr && i < cap; i++) {
        /* a direct result's corridor (search.c's start): the start's graph node, the tree cells the
         * straight segment crosses, the goal's graph node (unless the walk met it already) */
        const on_graph_ops *ops = q->g.ops;
        if (q->direct && i > 0 && !(i == q->ncorr - 1 && same_cell(q->corr[i], q->goal_cell)))
            ops = &on_graph_cells_ops;
        world_box(q, ops, q->corr[i], boxes + 6 * i);
    }
    return cap < q->ncorr ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}

on_status on_query_visited(on_query *q, double *boxes, uint8_t *expanded, size_t cap, size_t *n)
{
    /* info.visited: the nodes of the last update (0 for a search that never ran: a direct or one-cell
     * result, or one that failed at init) */
    size_t cnt = q->info.visited < q->pool.nnodes ? q->info.visited : q->pool.nnodes;
    *n = 0;
    if (cnt && nodes_gone(q)) return ON_FAILURE | ON_STALE;
    *n = cnt;
    q->g.org_tile = UINT32_MAX;
    for (size_t i = 0; i < cnt && i < cap; i++) {
        if (boxes) world_box(q, q->g.ops, q->pool.nodes[i].cell, boxes + 6 * i);
        if (expanded) expanded[i] = q->pool.nodes[i].closed;
    }
    return cap < cnt ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}
