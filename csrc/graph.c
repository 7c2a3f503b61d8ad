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
    return g->nb && g->nbix ? 0 : -1;
}

void on_graph_free(on_graph *g)
{
    free(g->nb);
    free(g->nbix);
    free(g->rnb);
    free(g->rfaces);
    g->nb = g->rnb = NULL;
    g->nbix = NULL;
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
    g->cur_ix = ON_ADJ_NONE;
    g->adj_tile = UINT32_MAX;
    g->adj = NULL;
}

int on_graph_nb_reserve(on_graph *g, size_t n)
{
    if (n <= g->nbcap) return 0;
    size_t cap = g->nbcap, cap2 = g->nbcap;
    /* (both grow alike; a failure leaves nbcap as it was, nb perhaps larger than it says) */
    if (on_grow((void **)&g->nb, &cap, n, sizeof *g->nb) || on_grow((void **)&g->nbix, &cap2, n, sizeof *g->nbix))
        return -1;
    g->nbcap = cap < cap2 ? cap : cap2;
    return 0;
}

/* on_tile_coords divides: remembered for the last tile asked. */
void on_graph_tile(on_graph *g, uint32_t tile)
{
    if (tile == g->org_tile) return;
    int ijk[3];
    on_tile_coords(g->t, tile, ijk);
    for (int i = 0; i < 3; i++) g->org[i] = (double)((int64_t)ijk[i] * g->t->n);
    g->org_set = on_tile_boxes(g->t, tile);
    g->org_tile = tile;
}

int64_t on_graph_unloaded_beyond(on_graph *g, on_cell c)
{
    const on_tree *t = g->t;
    uint32_t lo[3], hi[3];
    if (g->kind == ON_GRAPH_CELLS) { /* (most cells are inside their tile: no call for them) */
        uint32_t s = 1u << on_code_layer(c.code), x = on_code_x(c.code), y = on_code_y(c.code), z = on_code_z(c.code);
        uint32_t n = (uint32_t)t->n;
        if (x && y && z && x + s != n && y + s != n && z + s != n) return -1;
    }
    g->ops->local(g, c, lo, hi);
    for (int face = 0; face < 6; face++) {
        int axis = face >> 1, dir = face & 1;
        if (dir ? hi[axis] != (uint32_t)t->n : lo[axis] != 0) continue; /* not on the tile border */
        int64_t ti = on_tile_beyond(t, c.tile, face);
        if (ti >= 0 && !t->tiles[ti].loaded) return ti;
    }
    return -1;
}
