/*
 * graph_use.c -- a search graph's life (init, free) and the one place a kind becomes its operations
 * (see graph.h): the kinds are graph_cells.c, graph_boxes.c and graph_areas.c, what they share graph.c.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

int on_graph_init(on_graph *g, const on_tree *t, on_lcache *lc, on_tileset *touched)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    g->lc = lc;
    g->touched = touched;
    g->list_num = on_celladj_lister_for(1);
    g->list_nn = on_celladj_lister_for(0);
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
    free(g->memo);
    g->memo = NULL;
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
