/*
 * celladj.h -- a tile's free cells and their face neighbours inside the tile, computed once (internal).
 *
 * The search over the cells (graph_cells.c) asks for a cell's neighbours at every expansion; the tree's
 * neighbour walk (tree.c) answers with a dozen node-table lookups a cell. A cell adjacency answers with
 * one read of a list: the tile's free cells are numbered in the order on_table_visit meets them (depth
 * first, child order: Morton order of their corners), and cell i's neighbours are ent[off[i] ..
 * off[i + 1]), each the face it lies across (0..5 = -x,+x,-y,+y,-z,+z) and the neighbour's number, in
 * the order the neighbour walk gives them (face by face; across one face in Morton order, which is
 * number order). A face on the tile's border with a tile beyond holds one entry, ON_ADJ_BORDER: what
 * lies there depends on the other tile (it may be solid, unloaded, edited), so the search walks that
 * face in the tree. The numbers also index per-tile arrays (the search's node map).
 *
 * Life: as a losmap's (losmap.h). Built from the node table (on_table_get, so a map's bounds read as
 * blocked) on the first request, published in the tile with an atomic compare-and-swap (searches on
 * worker threads may race to build; one copy wins), freed by on_tree_touch, which every change to a
 * tile's contents calls on the writer's thread: an adjacency present is always the tile's contents.
 * Built by a simultaneous descent of each pair of touching siblings (every touching pair of free cells
 * once, no table lookup after the first walk over the nodes).
 */
#ifndef OCTONAV_CELLADJ_H
#define OCTONAV_CELLADJ_H

#include "tree.h"

#include <stdint.h>

#define ON_ADJ_FACE_SHIFT 29
#define ON_ADJ_INDEX ((1u << ON_ADJ_FACE_SHIFT) - 1u) /* an entry's neighbour number: ent & ON_ADJ_INDEX */
#define ON_ADJ_BORDER ON_ADJ_INDEX                    /* the number of a border face's entry */
#define ON_ADJ_NONE 0xffffffffu                       /* no cell (on_celladj_find) */

typedef struct on_celladj {
    uint32_t n;     /* free cells */
    uint32_t *code; /* cell i's node code */
    uint32_t *off;  /* n + 1 offsets into ent */
    uint32_t *ent;  /* face << ON_ADJ_FACE_SHIFT | neighbour number (or ON_ADJ_BORDER) */
    size_t bytes;   /* everything it holds */
} on_celladj;

/* The tile's adjacency, built now when it has none; NULL when it cannot be built (out of memory), the
 * tree's adjacencies are off (t->no_cell_adj) or the tile is solid or not loaded. Thread-safe for
 * readers while no writer runs. */
const on_celladj *on_tile_celladj(const on_tree *t, uint32_t tile);

/* Free a tile's adjacency (the writer's side: on_tree_touch and on_tree_destroy). */
void on_tile_celladj_drop(on_tile *tl);

/* Bytes held by the adjacencies built so far (and, when tiles is not NULL, how many tiles have one). */
size_t on_tree_celladj_bytes(const on_tree *t, size_t *tiles);

/* Building every loaded tile's now: on_tree_adjacency_prepare (octonav.h). */

/* The number of free cell `code` in a, or ON_ADJ_NONE when it is no free cell of the tile (binary
 * search over the Morton order: for cells the search met outside the lists, as its start). */
uint32_t on_celladj_find(const on_celladj *a, uint32_t code);

#endif
