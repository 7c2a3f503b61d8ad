/*
 * portals.h -- a tile's portal graph (internal): what the world graph (route.h) links and plans over.
 *
 * Built from ONE tile's contents (its box set, boxes.h; nothing from the neighbours), so the tile's
 * bake job can write it beside the tile (tiles/I_J_K.graph) and a streamer worker can decode it:
 *  - components: the tile's free space in face-connected components (union-find over its boxes);
 *    only those with a portal are kept (a pocket touching no tile face is never in a route), numbered
 *    densely in the order of their first portal;
 *  - portals: on each of the 6 tile faces, the face regions (free leaves whose face lies on the tile
 *    face, 2D-connected on the face), split only along the lines of the face's S-grid (S = the portal
 *    bound, see on_tgraph_bound: by default the whole face up to 64 leaves, so a region is one portal
 *    there; on larger tiles max(64, n / 4)): a portal is a 2D-connected piece of a region inside one
 *    S x S square, kept as the rectangles of free leaves it is cut into (greedy: a run along u grown
 *    along v), the largest first, and tagged with its component. Portals are ordered by component,
 *    then face, then position. Two portals of neighbouring tiles are joined when a rectangle of one
 *    overlaps a rectangle of the other with positive area: every leaf of that overlap is free on both
 *    sides, so a link is never made where no crossing exists, nor missed where one does;
 *  - the point of a portal is the centre of its largest rectangle, on the tile face;
 *  - weights: for every pair of portals of one component (a full matrix per component), the length
 *    of a real free path inside the tile between their points (reach.h: never below the straight
 *    line), closed under the triangle inequality through the other portals of the component (each
 *    still the length of a free path: the concatenation), rounded up into 16 bits in units of
 *    2^-wshift leaf (wshift 4 = 1/16 leaf unless a tile's longest weight needs a coarser unit).
 *    Tiles of 256 leaves and more search them over coarse box sets (on_tgraph_coarse_set: leaves of
 *    8, then 4 fine leaves, free only where all their fine leaves are; the portals in neither, and
 *    smaller tiles, over the fine boxes): on the seed's world (12 of its 512^3 tiles, 38,730 pairs)
 *    the weights / the fine searches' mean 0.998, 0.80 to 1.22, 68 % the same, for 1/15 of the work.
 * Coordinates are tile-local leaves (0..n, n = 2^depth). Face f = 0..5 = -x,+x,-y,+y,-z,+z; on face f
 * (axis k = f >> 1) the rectangle axes are u = (k + 1) % 3 and v = (k + 2) % 3.
 */
#ifndef OCTONAV_PORTALS_H
#define OCTONAV_PORTALS_H

#include "octonav_world.h"
#include "boxes.h"
#include "reach.h"
#include "tree.h" /* on_tree, on_tile_boxes, on_crc32 (boxes.h no longer includes it) */

#define ON_TGRAPH_VERSION 2
#define ON_TGRAPH_WSHIFT 4     /* finest weight unit: 1/16 leaf */
#define ON_TGRAPH_WSHIFT_MIN (-16)

typedef struct on_prect {
    uint16_t mn[2], mx[2]; /* a rectangle of free leaves on a face along (u, v), half-open */
} on_prect;

typedef struct on_portal {
    uint8_t face;          /* 0..5 */
    uint32_t comp;         /* the tile's component it belongs to */
    uint32_t rect, nrect;  /* its rectangles: rect[rect .. rect + nrect), all in one S x S square of
                            * the face, the largest first: its centre is the portal's point */
} on_portal;

struct on_tgraph { /* typedef in octonav.h */
    int depth;             /* tile depth it was built for */
    int bound;             /* S: portals lie in one S x S square of their face */
    int wshift;            /* weights are in units of 2^-wshift leaf (ON_TGRAPH_WSHIFT_MIN..ON_TGRAPH_WSHIFT) */
    uint32_t tag;          /* the caller's (e.g. the CRC of the tile file it was built from); kept in the blob */
    uint32_t nportal, ncomp, nrect;
    uint32_t npair;        /* pairs of portals of one component: the sum of m(m-1)/2 (the matrices' size) */
    uint32_t nedge;        /* the pairs with an edge (weight > 0; all of them unless built with a stretch) */
    on_portal *portal;     /* ordered by component */
    on_prect *rect;
    uint32_t *comp_first;  /* ncomp + 1: component c's portals are [comp_first[c], comp_first[c+1]) */
    uint32_t *comp_w;      /* ncomp + 1: its weights are w[comp_w[c] .. comp_w[c+1]) */
    uint16_t *w;           /* per component of m portals: the upper triangle of its matrix, row by row;
                            * 0 = no edge (dropped by the stretch) */
    uint32_t crc;          /* the portals' identity: CRC-32 of the encoded depth, bound and portals (not
                            * the tag, not the weights): links depend on nothing else (route.h) */
    uint32_t blob_crc;     /* the CRC-32 its encoding ends with (the blob's identity; set by decode and
                            * seal) */
    size_t bytes;          /* memory held */
    size_t settled;        /* boxes the build's searches settled, fine and coarse (not in the blob) */
};

/* on_tgraph_opts is public (octonav.h). */

/* The portal bound S a build with opts->bound (0 = default) uses for tiles of the given depth:
 * default n up to 64 leaves (a face region is one portal), max(64, n / 4) above. */
int on_tgraph_bound(int depth, int bound);

/* The graph of the tile whose box set is s (tiles of depth `depth`). */
on_status on_tgraph_build(const on_boxset *s, int depth, const on_tgraph_opts *o, on_tgraph **out);
/* The same from a tile's contents (a decoded table and its solid flag: a bake job or a worker). */
on_status on_tgraph_build_table(const on_table *tab, uint8_t solid, int depth, const on_tgraph_opts *o,
                                on_tgraph **out);
/* on_tgraph_build_tile, on_tgraph_free, on_tgraph_encode and on_tgraph_decode are public (octonav.h). */

/* The point of portal p, tile-local leaves. */
void on_portal_point(const on_tgraph *g, uint32_t p, double out[3]);

/* The stored weight between portals a != b of one component (units of 2^-wshift leaf; 0: no edge). */
static inline uint32_t on_tgraph_weight(const on_tgraph *g, uint32_t a, uint32_t b)
{
    uint32_t c = g->portal[a].comp, f = g->comp_first[c], m = g->comp_first[c + 1] - f;
    uint32_t i = (a < b ? a : b) - f, j = (a < b ? b : a) - f;
    return g->w[g->comp_w[c] + i * (2 * m - i - 1) / 2 + (j - i - 1)];
}

/* Binary form (little-endian): "ONTG", u16 version, u8 depth, u8 log2(S), u32 tag; then LEB128
 * varints: portals, components, rectangles; per portal its face (a byte), component - the previous
 * portal's (0 or 1), rectangle count - 1 and rectangles (u, v, width - 1, height - 1); a byte
 * wshift + 16; per component of m portals its m(m-1)/2 weights (0 = no edge, 1..65535); a CRC-32 of
 * it all.
 * encode: *len gets the size; with buf NULL or cap too small only the size is reported
 * (ON_FAILURE|ON_BUFFER_SMALL). decode: anything malformed (magic, size, checksum, a field out of
 * range, an overlong varint, a weight below the straight line) -> ON_FAILURE|ON_CORRUPT, another
 * version -> ON_FAILURE|ON_VERSION, another depth than expected_depth -> ON_FAILURE|ON_INVALID;
 * never reads outside [buf, buf + len); a blob it accepts encodes back to the same bytes. */

/* Sets g->crc (and g->bytes) from its encoding: the build's last step; -1 when out of memory. */
int on_tgraph_seal(on_tgraph *g);

/* Only the portals (components, rectangles, crc; no weights: npair = nedge = 0) of a loaded tile of a
 * tree with portal bound `bound` (as on_tgraph_opts): what linking needs, cheaply (route.h). */
on_status on_tgraph_build_tile_portals(const on_tree *t, uint32_t tile, int bound, on_tgraph **out);

/* The coarse box set of fine set s (a tile of `depth`): coarse leaves of 2^shift fine leaves a side
 * (shift 1..3), free only where every fine leaf under them is (tgraph_coarse.c). Coordinates are coarse
 * leaves (x 2^shift: fine). ON_INVALID for a bad shift, ON_NO_MEMORY. */
on_status on_tgraph_coarse_set(const on_boxset *s, int depth, int shift, int bsize, on_boxset **out);

/* The same coarse leaves from the fine leaves' bitmap (on_boxbits_paint; a tile's free leaves, its
 * fine set's boxes exactly): out (allocated here, on_boxbits_free) gets bit (x, y, z) set when every
 * fine leaf of coarse leaf (x, y, z) is set in fine; on_boxset_from_bits(out, bsize) then gives the set
 * on_tgraph_coarse_set gives (tests/world/test_tgraph_coarse.c), from about a twentieth of its work on
 * a 512^3 tile. A coarse bitmap of a coarse bitmap (shifts adding up) is the one of the sum. -1 for a
 * bad shift (1..3, fine->n a multiple of 2^(shift + 1)) or out of memory. */
int on_tgraph_coarse_bits(const on_boxbits *fine, int shift, on_boxbits *out);

/* g->bytes from its counts. */
void on_tgraph_count_bytes(on_tgraph *g);

#endif
