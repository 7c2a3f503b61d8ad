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

#include "octonav_search.h"
#include "codes.h"
#include "table.h"
#include "tree.h"

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
/* The free leaves of a tile's contents (table and solid flag, tile depth) painted into o (allocated
 * for that depth; cleared first): what on_boxset_build_in builds its set from (on_boxset_from_bits),
 * for a caller that reads the bitmap before (the tile graph's coarse sets, tgraph_coarse.c). */
void on_boxbits_paint(const on_table *tab, uint8_t solid, int depth, on_boxbits *o);
/* on_boxset_build with a scratch bitmap of that depth (on_tree_prepare builds many tiles with one). */
on_status on_boxset_build_in(const on_table *tab, uint8_t solid, int depth, on_boxbits *o, on_boxset **out);

/* The box set of the free leaves painted in bitmap o (one bit a leaf, as on_boxbits says; o->n leaves a
 * side): the greedy boxes, adjacency and face lists of a tile of that side, no box crossing a block of
 * bsize leaves (a power of two; 0 or above 64: 64, as a tile's own set). Leaves o as it was. */
on_status on_boxset_from_bits(on_boxbits *o, int bsize, on_boxset **out);

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

/* ---- a box set built block by block, as searches ask (on_boxlazy) --------------------------------
 * A tile's box set that builds a block (64 leaves a side, or 8-32: on_boxlazy_init_blocks) only when
 * a search reaches it: a route's endpoint join in an unprepared 512^3 tile touches 5-70 of its 512
 * 64-leaf blocks, where the whole set costs ~60 ms. A 64-leaf block's boxes are the eager build's
 * boxes of that block, in the same order (the greedy merge never crosses a block); a smaller block's
 * are the same greedy merge inside it. They are numbered in the order blocks are built. A box's
 * neighbours inside its block are the boxes of that block sharing a face with it (on_box_touch: a scan
 * of the block's boxes when a search settles the box, where building every block's adjacency cost a
 * route's join about a tenth of its instructions and settles 1-3 boxes of most blocks it builds); the
 * neighbours across a block face are the boxes of the next block's facing list (bface) sharing a face
 * with it (on_box_overlap2). set.adj_off, set.adj, set.block_off, set.face and set.face_off are unused
 * (NULL). Not thread-safe: the owner (a route planner) builds into it. */
typedef struct on_boxblock {
    uint32_t first, n; /* its boxes: set.box[first .. first + n) (a built block's: on_boxlazy_built) */
    uint32_t fo[7];    /* the boxes touching block face f (0..5 as a tile's): bface[fo[f] .. fo[f+1]) */
} on_boxblock;

typedef struct on_boxlazy {
    on_boxset set;          /* the boxes built so far (nbox, box, adj_off, adj, bsize, nb, salt) */
    on_boxblock *blk;       /* nb^3 */
    uint32_t *bface;
    size_t nbface, bfcap, boxcap;
    uint32_t built;         /* blocks built */
    uint32_t *slot;         /* nb^3: block b's record is blk[slot[on_boxlazy_order(b)]] (valid when built) */
    uint64_t *bits_built;   /* nb^3 bits: block b built (blk and slot are malloc'd: the records are
                             * written in the order blocks are built, blk[0 .. built), so a set's
                             * records take the pages its blocks need, the same pages again after a
                             * clear; indexed by block, a join's blocks touched a page of records
                             * each, most of them the first time: page faults in a plan) */
    const on_table *tab;    /* the tile's contents: set by the owner before each use */
    uint8_t solid;
    int depth;
    int bdepth;             /* blocks of 1 << bdepth leaves a side */
    on_boxbits bits;        /* one block's bitmap */
    /* the last blocks' ways down from the tile's node (paint_block): pcode[l] a node of layer l and
     * pval[l] its table value in tab ptab (-1: not stored), for the pn layers depth, depth - 1, ...
     * (0 after a clear or another table); the next block reuses the layers its way shares */
    const on_table *ptab;
    uint32_t pcode[16];
    int16_t pval[16];
    int pn;
} on_boxlazy;

/* A lazy set for tiles of `depth` (>= 6: whole blocks) with nothing built; -1 when out of memory. */
int on_boxlazy_init(on_boxlazy *z, int depth);
/* The same with blocks of 2^bdepth leaves a side (3 <= bdepth <= 6, bdepth <= depth): bdepth 6 gives
 * the eager build's boxes; a smaller block gives more, smaller boxes (none crosses a block), and a
 * search builds only the blocks it reaches, so less of the tile (-1: bad sizes or out of memory). */
int on_boxlazy_init_blocks(on_boxlazy *z, int depth, int bdepth);
void on_boxlazy_free(on_boxlazy *z);
/* Forget every block built (the tile's contents changed, or another tile's set is wanted). */
void on_boxlazy_clear(on_boxlazy *z);
/* Build block b (index bx + nb * (by + nb * bz)) from z->tab unless built; ON_NO_MEMORY. */
on_status on_boxlazy_block(on_boxlazy *z, uint32_t b);
/* Is block b of z built? */
static inline int on_boxlazy_built(const on_boxlazy *z, uint32_t b) { return (int)(z->bits_built[b >> 6] >> (b & 63) & 1u); }
/* Do boxes a and c (of disjoint interiors) share a face of positive area? (Along the first axis where
 * they meet, the other two must overlap.) */
static inline int on_box_touch(const on_box *a, const on_box *c)
{
    for (int k = 0; k < 3; k++)
        if (a->mx[k] == c->mn[k] || a->mn[k] == c->mx[k]) return on_box_overlap2(a, c, k);
    return 0;
}
/* Block b's entry in z->slot: its coordinates' bits interleaved (Morton order), so the blocks of a
 * join, neighbours, share pages of the map (by index, each z layer of blocks was a page of its own:
 * a join's first blocks in a set touched a page each). nb is a power of two, at most 1024. */
static inline uint32_t on_boxlazy_spread3(uint32_t x)
{
    x &= 0x3ffu;
    x = (x | x << 16) & 0x030000ffu;
    x = (x | x << 8) & 0x0300f00fu;
    x = (x | x << 4) & 0x030c30c3u;
    return (x | x << 2) & 0x09249249u;
}
static inline uint32_t on_boxlazy_order(const on_boxlazy *z, uint32_t b)
{
    int lg = z->depth - z->bdepth;
    uint32_t m = (1u << lg) - 1u;
    return on_boxlazy_spread3(b & m) | on_boxlazy_spread3(b >> lg & m) << 1 | on_boxlazy_spread3(b >> 2 * lg) << 2;
}
/* Built block b's record. */
static inline on_boxblock *on_boxlazy_rec(const on_boxlazy *z, uint32_t b) { return &z->blk[z->slot[on_boxlazy_order(z, b)]]; }
/* The block holding box i. */
static inline uint32_t on_boxlazy_block_of(const on_boxlazy *z, uint32_t i)
{
    const on_box *x = &z->set.box[i];
    uint32_t B = (uint32_t)z->set.bsize, nb = (uint32_t)z->set.nb;
    return x->mn[0] / B + nb * (x->mn[1] / B + nb * (x->mn[2] / B));
}
/* The blocks holding tile-local point p (closed: up to 8 on block boundaries); returns the count. */
int on_boxlazy_blocks_at(const on_boxlazy *z, const double p[3], uint32_t out[8]);
/* The boxes of built block b holding p (closed boxes), appended to out[*n ..] (at most 8 in all). */
void on_boxlazy_locate_in(const on_boxlazy *z, uint32_t b, const double p[3], uint32_t out[8], int *n);
/* Every box holding p, as on_boxset_locate_all; with build, the blocks holding p are built first
 * (-1 when out of memory), else only built blocks are looked at. */
int on_boxlazy_locate_all(on_boxlazy *z, const double p[3], int build, uint32_t out[8]);

/* The block-column group (0..nb^2-1) of face f that box b lies in. */
static inline uint32_t on_boxset_face_group(const on_boxset *s, int face, const on_box *b)
{
    int axis = face >> 1, u = (axis + 1) % 3, v = (axis + 2) % 3;
    return (uint32_t)(b->mn[u] / s->bsize) + (uint32_t)s->nb * (uint32_t)(b->mn[v] / s->bsize);
}

/* ---- a tile's sets on the tree (tile.boxes, tile.joins; prepare.c) ---------------------------- */

/* The valid box set of a tile, or NULL (none built, or built for other contents). */
static inline const on_boxset *on_tile_boxes(const on_tree *t, uint32_t tile)
{
    const on_boxset *s = t->tiles[tile].boxes;
    return s && s->salt == t->tiles[tile].salt && t->tiles[tile].loaded ? s : NULL;
}

/* Give tile `tile` the box set s (built from the contents it holds now), replacing any old one. */
void on_tree_adopt_boxes(on_tree *t, uint32_t tile, on_boxset *s);

/* The route planner's join set of a tile (tile.joins), or NULL: none, or the tile changed since. */
static inline const on_boxset *on_tile_joins(const on_tree *t, uint32_t tile)
{
    const on_boxset *s = t->tiles[tile].joins;
    return s && s->salt == t->tiles[tile].salt && t->tiles[tile].loaded ? s : NULL;
}
/* Give tile `tile` the join set s (built from the contents it holds now), replacing any old one; the
 * next change of the tile (on_tree_touch) frees it. Caller's thread only. */
void on_tree_adopt_joins(on_tree *t, uint32_t tile, on_boxset *s);
/* Tiles holding a valid join set, and their bytes. */
size_t on_tree_joins_bytes(const on_tree *t, size_t *tiles);

#endif
