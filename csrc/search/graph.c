/*
 * graph.c -- what every kind of search graph shares (see graph.h): the neighbour buffer, the
 * remembered tile corner and cell adjacency, and waiting for unloaded tiles. The graph's life and the
 * choice of its kind are graph_use.c's, the kinds graph_cells.c, graph_boxes.c and graph_areas.c.
 */
#include "graph.h"
#include "util.h"

int on_graph_nb_reserve(on_graph *g, size_t n)
{
    if (n <= g->nbcap) return 0;
    size_t cap = g->nbcap, cap2 = g->nbcap, cap3 = g->nbcap;
    /* (all grow alike; a failure leaves nbcap as it was, an array perhaps larger than it says) */
    if (on_grow((void **)&g->nb, &cap, n, sizeof *g->nb) || on_grow((void **)&g->nbix, &cap2, n, sizeof *g->nbix) ||
        on_grow((void **)&g->nbface, &cap3, n, 1))
        return -1;
    g->nbcap = cap < cap2 ? (cap < cap3 ? cap : cap3) : (cap2 < cap3 ? cap2 : cap3);
    return 0;
}

/* on_tile_coords divides: remembered for the last tile asked. */
void on_graph_tile_slow(on_graph *g, uint32_t tile)
{
    int ijk[3];
    on_tile_coords(g->t, tile, ijk);
    for (int i = 0; i < 3; i++) g->org[i] = (double)((int64_t)ijk[i] * g->t->n);
    g->org_set = on_tile_boxes(g->t, tile);
    g->org_tile = tile;
}

int64_t on_graph_unloaded_beyond_slow(on_graph *g, on_cell c)
{
    const on_tree *t = g->t;
    uint32_t lo[3], hi[3];
    g->ops->local(g, c, lo, hi);
    for (int face = 0; face < 6; face++) {
        int axis = face >> 1, dir = face & 1;
        if (dir ? hi[axis] != (uint32_t)t->n : lo[axis] != 0) continue; /* not on the tile border */
        int64_t ti = on_tile_beyond(t, c.tile, face);
        if (ti >= 0 && !t->tiles[ti].loaded) return ti;
    }
    return -1;
}

const on_celladj *on_graph_cells_adj_slow(on_graph *g, uint32_t tile)
{
    g->adj = g->t->no_cell_adj ? NULL : on_tile_celladj(g->t, tile);
    g->adj_tile = tile;
    g->chain.code = ON_CODE_NONE; /* (another adjacency, or this one read again after edits) */
    return g->adj;
}
