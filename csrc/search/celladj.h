/*
 * celladj.h -- a tile's free cells and their face neighbours inside the tile (internal).
 *
 * The search over the cells (graph_cells.c, search.c) asks for a cell's neighbours at every expansion;
 * the tree's neighbour walk (tree.c) answers with a dozen hash lookups in the node table a cell. A tile's
 * cell adjacency answers them from a compact copy of the tile's tree shape above layer 1: the stored
 * nodes in breadth-first order (0: the root). Those above layer 1 come in groups of 8, a group holding
 * for each of its nodes a byte of the children that are stored nodes (`sub`) and a byte of those that
 * are blocked (`blk`), plus two counts: the number of the first child node of the group's first node
 * and the number of the group's first free cell. The layer-1 nodes (breadth first, the last; most of a
 * tree's nodes) hold nothing: their children are leaves, and which of them are blocked is the node's
 * own value in the tile's node table (on_table_get: one lookup in the tree's own table), so layer-1
 * node j's eight leaves are numbered `lbase + 8 j + slot`, free or not (a blocked leaf's number names
 * no cell: a per-tile array indexed by number has n entries, ncell of them cells). A child neither
 * stored nor blocked is a free cell. Children of a node are consecutive nodes (breadth-first order),
 * so child s of node i is node `grp.node + popcount(sub bits of the group below node i's slot s)`;
 * the free children of nodes above layer 1 are numbered the same way (breadth-first, then child
 * order), from 0 to lbase. 24 bytes for 8 stored nodes above layer 1, none at layer 1: about 0.18 of
 * the node table's bytes on 512^3 terrain tiles (table.h: 5 bytes a slot at a 0.9 load) and 0.3-1.0 on
 * the Warframe maps (a map's bounds cut their tiles: the nodes along the bounds read as stored without
 * a slot, and the adjacency holds those above layer 1). The form before also held the layer-1 nodes
 * (1.5 bytes each: 0.36 of the tree on terrain, 0.7-1.9 on the Warframe maps); the list form before
 * that, each free cell's code, list offset and entries (about 32 bytes a free cell: 20 times the
 * tree's bytes on terrain, 40-120 on the Warframe maps).
 *
 * A cell's neighbours (on_celladj_list): one descent from the root along the cell's code gives its
 * ancestors; each face's neighbour region descends from the faces' lowest common ancestor (one of
 * them), to a free cell at least as large, a blocked child, or (the region subdivided) its free
 * descendants on the face: the cells of the tree's neighbour walk, in its order (face by face; across
 * one face in Morton order). A face on the tile's border with a tile beyond gives one entry,
 * numbered ON_ADJ_BORDER: what lies there depends on the other tile (it may be solid, unloaded,
 * edited), so the caller walks that face in the tree (on_tree_neighbors_face).
 *
 * The numbers index per-tile arrays (the search's node map keeps them, landmarks.h's distances).
 *
 * Life: as a losmap's (losmap.h). Built from the node table (on_table_get, so a map's bounds read as
 * blocked) on the first request, or ahead of it by anyone (on_celladj_build: a pure function of the
 * tile's node table, so a streamer's worker may build it for a tile it loads), published in the tile
 * with an atomic compare-and-swap (on_tile_celladj_publish, which points it at the tile's table;
 * searches on worker threads may race to build; one copy wins), freed by on_tree_touch, which every change to a
 * tile's contents calls on the writer's thread: an adjacency present is always the tile's contents.
 * On a deferred tree (on_tree_set_los_defer, as a frame budget sets it) a search's request builds
 * nothing (on_tile_celladj returns NULL: the tree walk's same answers); the explicit builds
 * (on_tree_adjacency_prepare, the landmarks' build: on_tile_celladj_build) still do.
 *
 * The list form (on_cellcsr below: every free cell's list of neighbour numbers, in Morton order of the
 * cells) is still built, for a while, by the landmarks' build (landmarks.c), which reads every cell's
 * list many times over; it is never kept in a tile.
 */
#ifndef OCTONAV_CELLADJ_H
#define OCTONAV_CELLADJ_H

#include "octonav_search.h"
#include "table.h"
#include "tree.h"

#include <stdint.h>

#define ON_ADJ_FACE_SHIFT 29
#define ON_ADJ_INDEX ((1u << ON_ADJ_FACE_SHIFT) - 1u) /* an entry's neighbour number: ent & ON_ADJ_INDEX */
#define ON_ADJ_BORDER ON_ADJ_INDEX                    /* the number of a border face's entry */
#define ON_ADJ_NONE 0xffffffffu                       /* no cell (on_celladj_find) */

typedef struct on_adjgrp {
    uint64_t sub;  /* byte k: node 8 g + k's children that are stored nodes (bit i: child i) */
    uint64_t blk;  /* byte k: its blocked children */
    uint32_t node; /* the number of the first child node of node 8 g (stored or not) */
    uint32_t cell; /* the number of node 8 g's first free cell */
} on_adjgrp;

typedef struct on_celladj {
    uint32_t n;      /* numbers (those of free cells, and of layer-1 nodes' blocked leaves) */
    uint32_t ncell;  /* free cells */
    uint32_t nnode;  /* stored nodes (0: the tile is one free cell, number 0) */
    uint32_t root;   /* the root's code */
    uint32_t nup;    /* stored nodes above layer 1 (breadth first, those at layer 1 come last) */
    uint8_t border;  /* the tile's faces with a tile beyond (bit f: face f = -x,+x,-y,+y,-z,+z) */
    uint32_t lbase;  /* the number of layer-1 node nup + j's leaf s: lbase + 8 j + s */
    on_adjgrp *grp;  /* (nup + 7) / 8 groups of the nodes above layer 1 */
    const on_table *tab; /* the node table it reads the layer-1 nodes' blocked leaves from (the tile's
                          * once published) */
    size_t bytes;    /* everything it holds */
} on_celladj;

/* The tile's adjacency, built now when it has none; NULL when it cannot be built (out of memory), the
 * tree's adjacencies are off (t->no_cell_adj) or the tile is solid or not loaded, and (on_tile_celladj
 * only) when the tree is deferred (t->los_defer) and the tile has none yet. Thread-safe for readers
 * while no writer runs. */
const on_celladj *on_tile_celladj(const on_tree *t, uint32_t tile);
const on_celladj *on_tile_celladj_build(const on_tree *t, uint32_t tile);

/* Tile `tile`'s adjacency built from node table tab (the tile's, or one holding the same contents:
 * a pure function of the table, the tree's depth and the tile's place, so any thread may build it
 * while no writer changes tab); NULL when out of memory. Free it with on_celladj_free unless it is
 * published. */
on_celladj *on_celladj_build(const on_tree *t, uint32_t tile, const on_table *tab);
void on_celladj_free(on_celladj *a);
/* Publish a built adjacency in its tile, whose table must hold the contents it was built from: the
 * adjacency the tile has then (a, or one another thread published first: a is then freed), or NULL
 * (a freed) when the tile is solid or not loaded or the tree's adjacencies are off. */
const on_celladj *on_tile_celladj_publish(const on_tree *t, uint32_t tile, on_celladj *a);

/* Free a tile's adjacency (the writer's side: on_tree_touch and on_tree_destroy). */
void on_tile_celladj_drop(on_tile *tl);

/* Bytes held by the adjacencies built so far (and, when tiles is not NULL, how many tiles have one). */
size_t on_tree_celladj_bytes(const on_tree *t, size_t *tiles);

/* Building every loaded tile's now: on_tree_adjacency_prepare (octonav.h). */

/* The number of free cell `code` in a, or ON_ADJ_NONE when it is no free cell of the tile. */
uint32_t on_celladj_find(const on_celladj *a, uint32_t code);

/* The ancestors of the cell last listed (a caller's, e.g. a search's: consecutive cells share most of
 * theirs). Valid for one adjacency: reset (code = ON_CODE_NONE) whenever the caller reads another
 * adjacency pointer, or the same pointer again after an edit could have freed it. */
typedef struct on_adjchain {
    const on_celladj *a;
    uint32_t code, lo; /* the cell (ON_CODE_NONE: none); anc[lo .. root's layer] hold its ancestors */
    uint32_t anc[16];  /* stored node numbers by layer */
    uint32_t l1code[64]; /* layer-1 nodes' values read from the node table, direct mapped by the code's */
    uint8_t l1val[64];   /* Fibonacci hash (ON_CODE_NONE: empty; emptied whenever the chain starts over) */
} on_adjchain;

/* Free cell `code`'s neighbours across the faces in `walk` (bit f: face f), in the tree's neighbour
 * walk's order: out[k] = {tile, the neighbour's code}, ix[k] its number, face[k] the face of `code` it
 * lies across (ix may be NULL: no numbers, and none counted); a border face with a tile beyond gives one
 * entry {tile, code}, ix ON_ADJ_BORDER. The
 * count (entries past cap are counted, not written: call again with room), or -1 when `code` is no
 * free cell of the tile. `self` (may be NULL): code's own number. `ch` (may be NULL): the caller's
 * chain, read and updated. */
long on_celladj_list(const on_celladj *a, on_adjchain *ch, uint32_t tile, uint32_t code, unsigned walk, on_cell *out,
                     uint32_t *ix, uint8_t *face, size_t cap, uint32_t *self);

/* on_celladj_list's body for this CPU (isaclone.h), with numbers (`numbers`: ix given) or without (ix
 * NULL): a caller listing many cells (the search) calls it directly, without on_celladj_list's choice
 * at each call (about 19 instructions). Its entries' tiles are left unset (out[k].code alone; every
 * entry but a border face's, ON_ADJ_BORDER, which the search never lists, is a cell of `tile`): the
 * caller knows them. `code` must be well formed (a cell's code as the tree or a list gives it: no bits
 * below its layer), which on_celladj_list checks; `ch` must not be NULL and `self` must be NULL (the
 * search's call: the body's tests of them fold away). */
typedef long (*on_celladj_lister)(const on_celladj *a, on_adjchain *ch, uint32_t tile, uint32_t code, unsigned walk,
                                  on_cell *out, uint32_t *ix, uint8_t *face, size_t cap, uint32_t *self);
on_celladj_lister on_celladj_lister_for(int numbers);

/* The same, on x86 compiled for the baseline instructions alone when bits is 0 (the clone for popcnt
 * and BMI, isaclone.h, when bits is 1 and the CPU has them: on_celladj_list's choice); for the tests. */
long on_celladj_list_isa(int bits, const on_celladj *a, on_adjchain *ch, uint32_t tile, uint32_t code, unsigned walk,
                         on_cell *out, uint32_t *ix, uint8_t *face, size_t cap, uint32_t *self);

/* Every free cell's code by number (codes: a->n entries, ON_CODE_NONE for a number that is no cell);
 * 0, or -1 on allocation failure. */
int on_celladj_codes(const on_celladj *a, uint32_t *codes);

/* ---- the list form (landmarks.c's build) ---------------------------------------------------------- */

typedef struct on_cellcsr {
    uint32_t n;     /* free cells (Morton order: as on_table_visit meets them) */
    uint32_t *code; /* cell i's node code */
    uint32_t *off;  /* n + 1 offsets into ent */
    uint32_t *ent;  /* face << ON_ADJ_FACE_SHIFT | neighbour number (or ON_ADJ_BORDER) */
    size_t bytes;
} on_cellcsr;

/* Tile `tile`'s list form (NULL: out of memory, or the tile solid or not loaded); free with
 * on_cellcsr_free. */
on_cellcsr *on_cellcsr_build(const on_tree *t, uint32_t tile);
void on_cellcsr_free(on_cellcsr *a);
/* The number of free cell `code` in a (binary search), or ON_ADJ_NONE. */
uint32_t on_cellcsr_find(const on_cellcsr *a, uint32_t code);

#endif
