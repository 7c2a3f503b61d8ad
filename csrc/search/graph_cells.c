/*
 * graph_cells.c -- the search graph of the tree's free cells (graph.h): nodes are free cells,
 * joined across shared faces; a node is entered at the centre of the face it shares with the node
 * before. The neighbours come from the tile's cell adjacency (celladj.h, built on the tile's first
 * search); its border faces with a tile beyond, and tiles without one, walk the tree
 * (on_tree_neighbors_face, on_tree_neighbors_skip): the same cells in the same order either way.
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

/* The faces of cell c on its tile's border with a tile beyond (bit f: face f). */
static unsigned border_faces(const on_graph *g, const on_celladj *a, uint32_t code)
{
    uint32_t s = 1u << on_code_layer(code), n = (uint32_t)g->t->n;
    unsigned m = 0;
    for (unsigned axis = 0; axis < 3; axis++) {
        uint32_t p = (code >> (4 + 9 * axis)) & 511u;
        if (p == 0) m |= 1u << (2 * axis);
        if (p + s == n) m |= 1u << (2 * axis + 1);
    }
    return m & a->border;
}

/* Cell c's neighbours across the faces in walk from adjacency a into g's buffers at k on (a border
 * face's walked in the tree); the new count into *k. ON_FALLBACK when c is no free cell of a. */
static on_status adj_neighbors(on_graph *g, const on_celladj *a, on_cell c, unsigned walk, size_t *k)
{
    for (;;) {
        long m = on_celladj_list(a, &g->chain, c.tile, c.code, walk, g->nb + *k, g->nbix + *k, g->nbface + *k, g->nbcap - *k, NULL);
        if (m < 0) return ON_FALLBACK;
        if ((size_t)m <= g->nbcap - *k) {
            *k += (size_t)m;
            return ON_SUCCESS;
        }
        if (on_graph_nb_reserve(g, *k + (size_t)m) != 0) return ON_FAILURE | ON_NO_MEMORY;
    }
}

static on_status cells_neighbors(on_graph *g, on_cell c, size_t *count)
{
    const on_celladj *a = on_graph_cells_adj(g, c.tile);
    unsigned walk = g->skip_face >= 0 && g->skip_face < 6 ? 63u & ~(1u << g->skip_face) : 63u;
    if (a) {
        size_t k = 0;
        unsigned bf = border_faces(g, a, c.code) & walk;
        on_status s = ON_SUCCESS;
        if (!bf) s = adj_neighbors(g, a, c, walk, &k);
        else /* face by face: a border face's cells from the tree, in the faces' order */
            for (unsigned f = 0; f < 6 && s == ON_SUCCESS; f++) {
                if (!(walk & (1u << f))) continue;
                if (!(bf & (1u << f))) {
                    s = adj_neighbors(g, a, c, 1u << f, &k);
                    continue;
                }
                for (;;) {
                    size_t nf;
                    s = on_tree_neighbors_face(g->t, g->lc, c, (int)f, g->nb + k, g->nbface + k, g->nbcap - k, &nf);
                    if (on_ok(s)) {
                        for (size_t m = k; m < k + nf; m++) g->nbix[m] = ON_ADJ_NONE;
                        k += nf;
                        break;
                    }
                    if (!(s & ON_BUFFER_SMALL)) return s;
                    if (on_graph_nb_reserve(g, k + nf) != 0) return ON_FAILURE | ON_NO_MEMORY;
                }
            }
        if (s == ON_SUCCESS) {
            *count = k;
            return ON_SUCCESS;
        }
        if (s != ON_FALLBACK) return s;
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
