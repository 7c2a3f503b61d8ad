/*
 * graph.c -- what every kind of search graph shares (see graph.h): the choice of kind, the
 * neighbour buffer, the remembered tile corner, and waiting for unloaded tiles.
 */
#include "graph.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int on_graph_init(on_graph *g, const on_tree *t, on_lcache *lc, on_tileset *touched)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->lc = lc;
    g->touched = touched;
    on_graph_use(g, ON_GRAPH_CELLS);
    g->nbcap = 256;
    g->nb = malloc(g->nbcap * sizeof *g->nb);
    g->nbix = malloc(g->nbcap * sizeof *g->nbix);
    g->nbface = malloc(g->nbcap);
    return g->nb && g->nbix && g->nbface ? 0 : -1;
}

void on_graph_free(on_graph *g)
{
    free(g->nb);
    free(g->nbix);
    free(g->nbface);
    free(g->rnb);
    free(g->rfaces);
    g->nb = g->rnb = NULL;
    g->nbix = NULL;
    g->nbface = NULL;
    g->rfaces = NULL;
    g->nbcap = g->rcap = 0;
}

/* The one place a kind becomes its operations. */
void on_graph_use(on_graph *g, int kind)
{
    g->kind = kind == ON_GRAPH_BOXES ? ON_GRAPH_BOXES : kind == ON_GRAPH_AREA_CELLS ? kind : ON_GRAPH_CELLS;
    g->ops = g->kind == ON_GRAPH_BOXES        ? &on_graph_boxes_ops
             : g->kind == ON_GRAPH_AREA_CELLS ? &on_graph_area_cells_ops
                                              : &on_graph_cells_ops;
    g->org_tile = UINT32_MAX;
    g->skip_face = -1;
    g->chain.code = ON_CODE_NONE;
    g->adj_tile = UINT32_MAX;
    g->adj = NULL;
}

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
