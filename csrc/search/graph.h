/*
 * graph.h -- the graph a search runs over, behind one small interface (internal).
 *
 * A node is an on_cell: over the cells, a free cell of the tree (tile, code); over the boxes, a box
 * of a tile's prepared graph (tile, index into its box set, boxes.h). What the search asks of a
 * graph: a node's region (an axis-aligned box in nav space), its neighbours, the node holding a
 * point (locate), and the point where the search enters a node from a neighbour (entry). Each kind
 * is one table of operations (graph_cells.c, graph_boxes.c, graph_areas.c) chosen in one place,
 * on_graph_use; a new kind (the world's portal graph) is one more table.
 */
#ifndef OCTONAV_GRAPH_H
#define OCTONAV_GRAPH_H

#include "boxes.h"
#include "celladj.h"
#include "tiledeps.h"
#include "tree.h"

/* Status of a neighbour query over the boxes that met a tile without a valid box graph: the search
 * starts again over the cells. */
#define ON_FALLBACK (ON_IN_PROGRESS | ON_STALE)

typedef struct on_graph on_graph;

typedef struct on_graph_ops {
    /* Node c's region in nav space; *size: the cube's edge or the box's shortest side (the
     * heuristic's and the size bias's "size"). */
    void (*region)(on_graph *g, on_cell c, double mn[3], double mx[3], double *size);
    /* The same in its tile's own leaves (integers). */
    void (*local)(on_graph *g, on_cell c, uint32_t lo[3], uint32_t hi[3]);
    /* Node c's neighbours into g->nb (*count of them): ON_SUCCESS, ON_FALLBACK, or a failure. */
    on_status (*neighbors)(on_graph *g, on_cell c, size_t *count);
    /* The node holding nav point p, which lies in free tree cell `cell`; 0 when there is none. */
    int (*locate)(on_graph *g, on_cell cell, const double p[3], on_cell *out);
    /* Where a path from point `from` (in or on node u, region umn..umx) towards `goal` enters
     * neighbour v (region vmn..vmx): a point on the face they share. */
    void (*entry)(const double from[3], const double umn[3], const double umx[3], const double vmn[3],
                  const double vmx[3], const double goal[3], double out[3]);
    /* 1 when nodes index data a tile change frees (a result's corridor is then unusable once a tile
     * it read changed, and is reported stale instead of read). */
    int borrows_tiles;
} on_graph_ops;

struct on_graph {
    const on_tree *t;
    on_lcache *lc;              /* node-table lookups of recent expansions */
    on_tileset *touched;        /* the tiles the search read: neighbours in other tiles are added */
    int kind;                   /* ON_GRAPH_CELLS or ON_GRAPH_BOXES */
    const on_graph_ops *ops;
    on_cell *nb;                /* the last node's neighbours */
    uint32_t *nbix;             /* (cells) their numbers in their tile's cell adjacency (celladj.h), or
                                 * ON_ADJ_NONE (a neighbour in another tile, or no adjacency) */
    uint8_t *nbface;            /* (cells) the face of the asked cell each lies across (0..5) */
    size_t nbcap;               /* entries of nb, nbix and nbface */
    on_adjchain chain;          /* (cells) the ancestors of the cell last listed (celladj.h) */
    on_celladj_lister list_num, list_nn; /* (cells) on_celladj_list's bodies for this CPU, with numbers and
                                          * without */
    uint32_t adj_tile;          /* (cells) the tile whose adjacency was last read (UINT32_MAX: none) */
    const on_celladj *adj;      /* and that adjacency (NULL: the tile has none: walk the tree) */
    uint32_t org_tile;          /* the tile last asked for (UINT32_MAX: none), its corner and box set */
    double org[3];
    const on_boxset *org_set;
    uint32_t fallback_tile;     /* after ON_FALLBACK: the tile without a valid box graph */
    int skip_face;              /* (cells) a face whose neighbours the next neighbours call leaves out (-1:
                                 * none): the search's node came through it from a node that covers it */
    const struct on_areaset *areas; /* ON_GRAPH_AREA_CELLS: the areas that split cells */
    int64_t radius;             /* ON_GRAPH_AREA_CELLS: the agent's radius in leaves (0: a point); cubes not
                                 * usable at it (clearance.h) are split, leaves not usable are no nodes */
    struct on_clearmemo *memo;  /* (radius) the cubes' answers found so far (graph_areas.c; NULL: none yet) */
    uint32_t memo_gen;          /* bumped by every search start: answers of an older one are not read */
    on_cell *rnb;               /* (area cells) a free cell's own neighbours and their faces */
    uint8_t *rfaces;
    size_t rcap;
};

/* (internal kind) the free cells split where an area's faces cross them, and for an agent's radius
 * where their clearance varies (graph_areas.c); reported as ON_GRAPH_CELLS */
#define ON_GRAPH_AREA_CELLS 3

extern const on_graph_ops on_graph_cells_ops, on_graph_boxes_ops, on_graph_area_cells_ops;

/* Set up over tree t with lookup cache lc, recording tiles read in touched; -1 on allocation failure
 * (free it with on_graph_free). The graph is the cells until on_graph_use says otherwise. */
int on_graph_init(on_graph *g, const on_tree *t, on_lcache *lc, on_tileset *touched);
void on_graph_free(on_graph *g);
/* Run over graph `kind` (ON_GRAPH_CELLS, ON_GRAPH_BOXES or ON_GRAPH_AREA_CELLS with g->areas set)
 * from now on. */
void on_graph_use(on_graph *g, int kind);
/* Room for n neighbours in g->nb, g->nbix and g->nbface; -1 on allocation failure. */
int on_graph_nb_reserve(on_graph *g, size_t n);
/* Refresh g's remembered tile corner and box set for `tile` (neighbours mostly share it: inline when
 * it is the same tile). */
void on_graph_tile_slow(on_graph *g, uint32_t tile);
static inline void on_graph_tile(on_graph *g, uint32_t tile)
{
    if (tile != g->org_tile) on_graph_tile_slow(g, tile);
}
/* Free cell c touches no face of its tile. */
static inline int on_graph_cell_inside(const on_graph *g, on_cell c)
{
    /* (x in 1 .. n - s - 1 for each axis: one unsigned comparison an axis; x + s <= n always) */
    uint32_t lim = (uint32_t)g->t->n - (1u << on_code_layer(c.code)) - 1u;
    return on_code_x(c.code) - 1u < lim && on_code_y(c.code) - 1u < lim && on_code_z(c.code) - 1u < lim;
}

/* A tile across a face of node c's region that exists but is not loaded (streaming), or -1. A free
 * cell inside its tile (most) is answered inline. */
int64_t on_graph_unloaded_beyond_slow(on_graph *g, on_cell c);
static inline int64_t on_graph_unloaded_beyond(on_graph *g, on_cell c)
{
    if (g->kind == ON_GRAPH_CELLS && on_graph_cell_inside(g, c)) return -1;
    return on_graph_unloaded_beyond_slow(g, c);
}

/* (cells) The cell adjacency of tile `tile` (NULL: none: walk the tree), remembered for the last tile
 * asked (a search reads a tile's only while the tile is unchanged, on_tileset_changed). */
const on_celladj *on_graph_cells_adj_slow(on_graph *g, uint32_t tile);
static inline const on_celladj *on_graph_cells_adj(on_graph *g, uint32_t tile)
{
    return tile == g->adj_tile ? g->adj : on_graph_cells_adj_slow(g, tile);
}

/* A free cell's region (ON_GRAPH_CELLS): its tile's corner plus its code's position, its size the
 * cube's edge (graph_cells.c's region; the search's loop calls it directly). */
static inline void on_graph_cell_region(on_graph *g, on_cell c, double mn[3], double mx[3], double *size)
{
    on_graph_tile(g, c.tile);
    double s = (double)(1u << on_code_layer(c.code));
    mn[0] = g->org[0] + (double)on_code_x(c.code);
    mn[1] = g->org[1] + (double)on_code_y(c.code);
    mn[2] = g->org[2] + (double)on_code_z(c.code);
    for (int k = 0; k < 3; k++) mx[k] = mn[k] + s;
    *size = s;
}

/* The centre of the face two touching regions share (graph_cells.c's entry point). */
static inline void on_graph_face_centre(const double umn[3], const double umx[3], const double vmn[3],
                                        const double vmx[3], double out[3])
{
    for (int j = 0; j < 3; j++) {
        double lo = vmn[j] > umn[j] ? vmn[j] : umn[j], hi = vmx[j] < umx[j] ? vmx[j] : umx[j];
        out[j] = 0.5 * (lo + hi);
    }
}

static inline void on_graph_region(on_graph *g, on_cell c, double mn[3], double mx[3], double *size)
{
    g->ops->region(g, c, mn, mx, size);
}
static inline on_status on_graph_neighbors(on_graph *g, on_cell c, size_t *count)
{
    return g->ops->neighbors(g, c, count);
}
static inline int on_graph_locate(on_graph *g, on_cell cell, const double p[3], on_cell *out)
{
    return g->ops->locate(g, cell, p, out);
}

#endif
