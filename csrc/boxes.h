/*
 * boxes.h -- the prepared search graph: a tile's free space merged into boxes (internal).
 *
 * An octree cell is aligned to powers of two, so free space next to an obstacle that is not splits
 * into many small cells, and a search through it expands them one by one. on_tree_prepare merges
 * each tile's free leaves greedily into axis-aligned boxes (none crossing a 64-leaf block, so a row
 * of a block is one machine word) and joins boxes that share a face of positive area: 6 to 25 times
 * fewer nodes than free cells on the Warframe maps, and a neighbour list read from an array instead
 * of lookups in the node tables. A tile's box set is valid while the tile's salt is the one it was
 * built for; the search (search.c, graph_boxes.c) uses boxes only where every tile it reads has a
 * valid set. This file knows tables and node codes only: the tree holds a box set per tile and
 * builds them (on_tree_prepare, prepare.c), a streamer worker builds them beside a decode.
 */
#ifndef OCTONAV_BOXES_H
#define OCTONAV_BOXES_H

#include "octonav.h"
#include "codes.h"
#include "table.h"

typedef struct on_box {
    uint16_t mn[3], mx[3]; /* tile-local leaves, half-open [mn, mx) */
} on_box;

typedef struct on_boxset {
    uint32_t salt;          /* the tile's salt it was built from */
    uint32_t nbox;
    on_box *box;
    uint32_t *adj_off;      /* nbox + 1: neighbours of box i inside the tile: adj[adj_off[i] .. adj_off[i+1]) */
    uint32_t *adj;
    int bsize, nb;          /* block side in leaves; blocks per tile side */
    uint32_t *block_off;    /* nb^3 + 1: boxes of block b are [block_off[b], block_off[b+1]) */
    /* per tile face f (0..5 = -x,+x,-y,+y,-z,+z): the boxes touching it, grouped by the block of the
     * face they lie in (nb^2 groups): face[f][face_off[f][g] .. face_off[f][g+1]) */
    uint32_t *face[6];
    uint32_t *face_off[6];
    size_t bytes;
} on_boxset;

void on_boxset_free(on_boxset *s);

/* The bitmap a build paints a tile's free leaves into (one bit a leaf, rows along x: row (z, y) at
 * w + (z * n + y) * nw), reusable for every tile of one depth. */
typedef struct on_boxbits {
    uint64_t *w;
    int n, nw;
} on_boxbits;
/* For tiles of depth `depth`; -1 when out of memory. */
int on_boxbits_alloc(on_boxbits *o, int depth);
void on_boxbits_free(on_boxbits *o);
/* on_boxset_build with a scratch bitmap of that depth (on_tree_prepare builds many tiles with one). */
on_status on_boxset_build_in(const on_table *tab, uint8_t solid, int depth, on_boxbits *o, on_boxset **out);

/* A box set for a tile's contents not (yet) in a tree (a decoded table and its solid flag, tiles of
 * depth `depth`): what a streamer worker builds beside the tile it decoded. Touches no tree. */
on_status on_boxset_build(const on_table *tab, uint8_t solid, int depth, on_boxset **out);

/* The box of s holding tile-local point p (closed boxes), or -1. */
int64_t on_boxset_locate(const on_boxset *s, const double p[3]);
/* Every box of s holding point p (closed boxes: a point on a shared face or corner is in each of
 * them, at most 8 as box interiors are disjoint); returns the count. */
int on_boxset_locate_all(const on_boxset *s, const double p[3], uint32_t out[8]);
/* The same, faster for a point on the tile's boundary (a portal's): only the boxes touching that face
 * in the point's block column(s) are looked at (s->face: tens of boxes where a block holds thousands). */
int on_boxset_locate_on_face(const on_boxset *s, const double p[3], uint32_t out[8]);

/* Do boxes a and c (of one tile, or of two tiles side by side along axis k) share a face of positive
 * area across axis k? Only the other two axes need checking. */
static inline int on_box_overlap2(const on_box *a, const on_box *c, int k)
{
    for (int j = 0; j < 3; j++)
        if (j != k && !(a->mn[j] < c->mx[j] && c->mn[j] < a->mx[j])) return 0;
    return 1;
}

/* The block-column group (0..nb^2-1) of face f that box b lies in. */
static inline uint32_t on_boxset_face_group(const on_boxset *s, int face, const on_box *b)
{
    int axis = face >> 1, u = (axis + 1) % 3, v = (axis + 2) % 3;
    return (uint32_t)(b->mn[u] / s->bsize) + (uint32_t)s->nb * (uint32_t)(b->mn[v] / s->bsize);
}

#endif
