/*
 * graph_cells.c -- the search graph of the tree's free cells (graph.h): nodes are free cells,
 * joined across shared faces (on_tree_neighbors); a node is entered at the centre of the face it
 * shares with the node before.
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

static on_status cells_neighbors(on_graph *g, on_cell c, size_t *count)
{
    for (;;) {
        on_status s = on_tree_neighbors_skip(g->t, g->lc, c, g->skip_face, g->nb, g->nbcap, count);
        if (on_ok(s)) return ON_SUCCESS;
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
