/*
 * route_fit.c -- a route planner's node arrays sized to its world graph (on_route_fit, route_plan.h).
 *
 * A plan makes at most one node a (tile, portal) pair it reaches: a tile's header and its portals
 * (made together), a missing-tile node a tile, and the goal. The seed's world graph (64 tiles, 3,635
 * portals) needs 3,764 of them, where every planner held arrays for 65,536 (4.98 MB each, the map
 * and its stamps 1 MB of it, scattered writes that every plan touched): now 0.3 MB.
 */
#include "route_plan.h"

#include <stdlib.h>
#include <string.h>

/* The most nodes a plan over w as it is can make. */
static size_t graph_nodes(const on_wgraph *w)
{
    size_t n = 1 + (size_t)w->ntiles; /* the goal, a missing-tile node a tile */
    for (uint32_t t = 0; t < w->ntiles; t++)
        if (w->tiles[t]) n += (size_t)w->tiles[t]->np + 1;
    return n;
}

int on_route_fit(on_route *r)
{
    size_t want = graph_nodes(r->w);
    if (want > r->limit) want = r->limit;
    if (want < 2) want = 2;
    if (r->node && want <= r->max_nodes && 2 * want >= r->max_nodes) {
        r->fit_revision = r->w->revision + 1;
        return 0;
    }
    size_t m = 1;
    while (m < 2 * want) m *= 2;
    rnode *node = malloc(want * sizeof *node);
    uint32_t *map = malloc(m * sizeof *map), *stamp = calloc(m, sizeof *stamp), *heap = malloc(want * sizeof *heap);
    if (!node || !map || !stamp || !heap) {
        free(node);
        free(map);
        free(stamp);
        free(heap);
        return -1;
    }
    free(r->node);
    free(r->map);
    free(r->stamp);
    free(r->heap);
    r->node = node;
    r->map = map;
    r->stamp = stamp;
    r->heap = heap;
    r->mask = m - 1;
    r->max_nodes = want;
    r->nnode = 0;
    r->nheap = 0;
    r->cur_stamp = 1; /* (fresh stamps are 0: every slot empty) */
    r->fit_revision = r->w->revision + 1;
    return 0;
}
