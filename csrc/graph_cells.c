/*
 * graph_cells.c -- the search graph of the tree's free cells (graph.h): nodes are free cells,
 * joined across shared faces; a node is entered at the centre of the face it shares with the node
 * before. The neighbours come from the tile's cell adjacency (celladj.h, built on the tile's first
 * search), whose border faces, and tiles without one, walk the tree (on_tree_neighbors_skip): the
 * same cells in the same order either way.
 */
#include "graph.h"
#include "util.h"

static void cells_region(on_graph *g, on_cell c, double mn[3], double mx[3], double *size)
{
    on_graph_cell_region(g, c, mn, mx, size);
}

static void cells_local(on_graph *g, on_cell c, uint32_t lo[3], uint32_t hi[3])
{
    (void)g;
    uint32_t s = 1u << on_code_layer(c.code);
    lo[0] = on_code_x(c.code);
    lo[1] = on_code_y(c.code);
    lo[2] = on_code_z(c.code);
    for (int k = 0; k < 3; k++) hi[k] = lo[k] + s;
}

const on_celladj *on_graph_cells_adj_slow(on_graph *g, uint32_t tile)
{
    g->adj = g->t->no_cell_adj ? NULL : on_tile_celladj(g->t, tile);
    g->adj_tile = tile;
    return g->adj;
}

/* Cell c (number i in adjacency a)'s neighbours from its list; a border face's from the tree. */
static on_status adj_neighbors(on_graph *g, const on_celladj *a, on_cell c, uint32_t i, size_t *count)
{
    uint32_t b = a->off[i], e = a->off[i + 1];
    if (e - b > g->nbcap && on_graph_nb_reserve(g, e - b) != 0) return ON_FAILURE | ON_NO_MEMORY;
    uint32_t skip = g->skip_face >= 0 ? (uint32_t)g->skip_face : 8u;
    size_t k = 0;
    for (uint32_t j = b; j < e; j++) {
        uint32_t en = a->ent[j], v = en & ON_ADJ_INDEX, f = en >> ON_ADJ_FACE_SHIFT;
        if (f == skip) continue;
        if (v != ON_ADJ_BORDER) { /* (room: at most one entry each, checked above or grown below) */
            g->nb[k].tile = c.tile;
            g->nb[k].code = a->code[v];
            g->nbface[k] = (uint8_t)f;
            g->nbix[k++] = v;
            continue;
        }
        for (;;) {
            size_t nf;
            on_status s = on_tree_neighbors_face(g->t, g->lc, c, (int)f, g->nb + k, g->nbface + k, g->nbcap - k, &nf);
            if (on_ok(s)) {
                for (size_t m = k; m < k + nf; m++) g->nbix[m] = ON_ADJ_NONE;
                k += nf;
                break;
            }
            if (!(s & ON_BUFFER_SMALL)) return s;
            if (on_graph_nb_reserve(g, k + nf + (e - j)) != 0) return ON_FAILURE | ON_NO_MEMORY;
        }
        if (g->nbcap - k < e - j && on_graph_nb_reserve(g, k + (e - j)) != 0) return ON_FAILURE | ON_NO_MEMORY;
    }
    *count = k;
    return ON_SUCCESS;
}

static on_status cells_neighbors(on_graph *g, on_cell c, size_t *count)
{
    const on_celladj *a = on_graph_cells_adj(g, c.tile);
    if (a) {
        uint32_t i = g->cur_ix;
        if (i >= a->n || a->code[i] != c.code) i = on_celladj_find(a, c.code);
        if (i != ON_ADJ_NONE) return adj_neighbors(g, a, c, i, count);
    }
    for (;;) {
        on_status s = on_tree_neighbors_skip(g->t, g->lc, c, g->skip_face, g->nb, g->nbface, g->nbcap, count);
        if (on_ok(s)) {
            for (size_t m = 0; m < *count; m++) g->nbix[m] = ON_ADJ_NONE;
            return ON_SUCCESS;
        }
        /* a rare large face: grow the buffer once and keep it */
        if (on_graph_nb_reserve(g, *count) != 0) return ON_FAILURE | ON_NO_MEMORY;
    }
}

static int cells_locate(on_graph *g, on_cell cell, const double p[3], on_cell *out)
{
    (void)g;
    (void)p;
    *out = cell;
    return 1;
}

/* The centre of the shared face. */
static void cells_entry(const double from[3], const double umn[3], const double umx[3], const double vmn[3],
                        const double vmx[3], const double goal[3], double out[3])
{
    (void)from;
    (void)goal;
    on_graph_face_centre(umn, umx, vmn, vmx, out);
}

const on_graph_ops on_graph_cells_ops = {cells_region, cells_local, cells_neighbors, cells_locate, cells_entry, 0};
