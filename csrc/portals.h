/*
 * portals.h -- a tile's portal graph (internal): what the world graph (route.h) links and plans over.
 *
 * Built from ONE tile's contents (its box set, boxes.h; nothing from the neighbours), so the tile's
 * bake job can write it beside the tile (tiles/I_J_K.graph) and a streamer worker can decode it:
 *  - components: the tile's free space in face-connected components (union-find over its boxes);
 *  - portals: on each of the 6 tile faces, the face regions (free leaves whose face lies on the tile
 *    face, 2D-connected on the face) split along the lines of the face's S-grid (S = the portal bound,
 *    see on_tgraph_opts): a portal is a 2D-connected piece of a region inside one S x S square, kept
 *    as the rectangles of free leaves it is cut into (greedy: a run along u grown along v), and
 *    tagged with its component. Two portals of neighbouring tiles are joined when a rectangle of one
 *    overlaps a rectangle of the other with positive area: every leaf of that overlap is free on
 *    both sides, so a link is never made where no crossing exists, nor missed where one does;
 *  - the crossing point of a portal is the centre of its largest rectangle, on the tile face;
 *  - edges join portals of one component, weighted by the length of a real free path inside the tile
 *    between their crossing points (never below the straight line): Dijkstra over the box graph whose
 *    node point is where the path entered the box (the previous point, or its parent's where the line
 *    from there crosses the shared face, clamped onto the next face; a point on a box boundary starts
 *    in every box holding it),
 *    then the corridor's crossing points relaxed until the string is taut inside the corridor's boxes
 *    (measured on random tiles: mean 0.91 of the 26-connected cell path + 1 leaf, never above 1.35 x
 *    it + 2 leaves: the corridor the Dijkstra picks is not always the shortest one). Weights are
 *    stored in 1/16 leaf, rounded up. Of a component's complete graph only a greedy t-spanner is kept
 *    (pairs by increasing weight; an edge is dropped when the edges kept so far already join its ends
 *    within t x its weight): every pair of portals stays joined within t x its weight, and with t = 1
 *    (the default) shortest paths over the tile's edges are exactly those of the complete graph.
 * Coordinates are tile-local leaves (0..n, n = 2^depth). Face f = 0..5 = -x,+x,-y,+y,-z,+z; on face f
 * (axis k = f >> 1) the rectangle axes are u = (k + 1) % 3 and v = (k + 2) % 3.
 */
#ifndef OCTONAV_PORTALS_H
#define OCTONAV_PORTALS_H

#include "boxes.h"
#include "tree.h" /* on_tree, on_tile_boxes, on_crc32 (boxes.h no longer includes it) */

#define ON_TGRAPH_VERSION 1
#define ON_TGRAPH_UNIT 16.0 /* stored weights: 1/16 leaf */
#define ON_TGRAPH_STRETCH 1.0 /* default spanner factor: shortest paths over the tile's edges exact */

typedef struct on_prect {
    uint16_t mn[2], mx[2]; /* a rectangle of free leaves on a face along (u, v), half-open */
} on_prect;

typedef struct on_portal {
    uint8_t face;          /* 0..5 */
    uint32_t comp;         /* the tile's component it belongs to */
    uint32_t rect, nrect;  /* its rectangles: rect[rect .. rect + nrect), all in one S x S square of
                            * the face, the largest first: its centre is the portal's crossing point */
} on_portal;

typedef struct on_tgraph {
    int depth;             /* tile depth it was built for */
    int bound;             /* S: portals lie in one S x S square of their face */
    uint32_t tag;          /* the caller's (e.g. the CRC of the tile file it was built from); kept in the blob */
    uint32_t nportal, ncomp, nedge, nrect; /* nedge: undirected edges */
    on_portal *portal;
    on_prect *rect;
    uint32_t *edge_off;    /* nportal + 1: the edges of portal a are [edge_off[a], edge_off[a+1]) */
    uint32_t *edge_to;     /* 2 * nedge entries (both directions) */
    uint32_t *edge_w;      /* weights in 1/ON_TGRAPH_UNIT leaf */
    size_t bytes;          /* memory held */
} on_tgraph;

typedef struct on_tgraph_opts {
    int bound;             /* S, the portal size bound in leaves: 0 = default: clamp(n / 8, 16, 64), at
                            * most n; else 1..n (rounded down to a power of two) */
    double stretch;        /* edges kept: the greedy spanner's factor t >= 1 (0 = ON_TGRAPH_STRETCH) */
    uint32_t tag;          /* stored as is */
} on_tgraph_opts;

/* The portal bound S a build with opts->bound (0 = default) uses for tiles of the given depth. */
int on_tgraph_bound(int depth, int bound);

/* The graph of the tile whose box set is s (tiles of depth `depth`). */
on_status on_tgraph_build(const on_boxset *s, int depth, const on_tgraph_opts *o, on_tgraph **out);
/* The same from a tile's contents (a decoded table and its solid flag: a bake job or a worker). */
on_status on_tgraph_build_table(const on_table *tab, uint8_t solid, int depth, const on_tgraph_opts *o,
                                on_tgraph **out);
/* The same for a loaded tile of a tree (its prepared boxes when valid, else built here). */
on_status on_tgraph_build_tile(const on_tree *t, uint32_t tile, const on_tgraph_opts *o, on_tgraph **out);
void on_tgraph_free(on_tgraph *g);

/* The crossing point of portal p, tile-local leaves. */
void on_portal_point(const on_tgraph *g, uint32_t p, double out[3]);

/* Binary form (little-endian): "ONTG", u16 version, u8 depth, u8 log2(S), u32 tag, u32 portals,
 * components, edges, payload bytes, rectangles; the payload: per portal its face (a byte), component,
 * rectangle count - 1 and rectangles (u, v, width - 1, height - 1), then per portal a its edges to
 * portals b > a (count, then b - previous - 1 and weight), all as LEB128 varints; a CRC-32 of it all.
 * encode: *len gets the size; with buf NULL or cap too small only the size is reported
 * (ON_FAILURE|ON_BUFFER_SMALL). decode: anything malformed (magic, size, checksum, a field out of
 * range, an edge across components or below the straight line) -> ON_FAILURE|ON_CORRUPT, another
 * version -> ON_FAILURE|ON_VERSION, another depth than expected_depth -> ON_FAILURE|ON_INVALID;
 * never reads outside [buf, buf + len). */
on_status on_tgraph_encode(const on_tgraph *g, uint8_t *buf, size_t cap, size_t *len);
on_status on_tgraph_decode(const uint8_t *buf, size_t len, int expected_depth, on_tgraph **out);

/* ---- local search (shared by the build and the planner's start/goal insertion) ---------------- */
/* Scratch for searches over a box set, reused between searches (grows, never shrinks). */
typedef struct on_reach {
    size_t cap, heapcap;
    double *g;             /* per box: cost so far, nav leaves */
    double *pt;            /* per box: 3 doubles, where the path entered it */
    uint32_t *parent;      /* per box, UINT32_MAX for the root */
    uint32_t *heap_box;
    double *heap_key;
    uint32_t *target_off;  /* per box + 1: the portals whose crossing point it holds are */
    uint32_t *target;      /* target[target_off[b] .. target_off[b+1]) */
    uint32_t *chain;       /* a corridor of boxes, goal to root */
    double *cpt;           /* its points: 3 doubles each, nbox + 2 */
    size_t tcap;
    size_t bytes;
} on_reach;

void on_reach_free(on_reach *r);

/* From tile-local point p (in a free box of s), the cost of a free path inside the tile to each
 * portal of g (cost[p], HUGE_VAL where not reached): Dijkstra over the box graph, each reached portal's
 * path pulled tight in its corridor. *reached gets the number of portals reached; ON_FAILURE|ON_BLOCKED
 * when p is in no box, ON_NO_MEMORY. g must describe the same contents as s. */
on_status on_reach_portals(on_reach *r, const on_boxset *s, const on_tgraph *g, const double p[3], double *cost,
                           uint32_t *reached);

/* After on_reach_portals over s: the cost of a free path from its point to point x in the same tile
 * (HUGE_VAL when x is in no box the search reached). */
double on_reach_cost_to(on_reach *r, const on_boxset *s, const double x[3]);

/* The point q of the rectangle [lo, hi] (degenerate along axis k) minimising |a - q| + |q - c|. */
void on_best_on_face(const double a[3], const double c[3], const double lo[3], const double hi[3], int k, double q[3]);

#endif
