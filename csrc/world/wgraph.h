/*
 * wgraph.h -- the world graph's resident form (internal to wgraph.c, the linking, and route.c, the
 * planner; the API is route.h).
 *
 * Per grid tile one pointer; per tile with a graph a small record of its own (ctile: the links it
 * owns, those across its +x, +y, +z faces, each stored once for the pair of portals (owner's,
 * neighbour's) with the largest rectangle where they overlap; its unresolved faces) and a packed
 * record of the graph itself (crec: its portals but those on the world's border (never linked;
 * numbered in the order kept, components renumbered), (doubled point coordinates on their face,
 * face), the component table (a portal's component found there by binary search), the weight
 * matrices (16 bits)). A crec never changes once made, and identical ones are held once: every graph
 * has a pool of them (wpool), and graphs may share one (on_wgraph_share: a one-tree pack's agents),
 * so a tile graph that several tiles or several agents hold (open air: the same portals and weights
 * for every radius) is one record, freed when its last tile goes. Small fields take 1 byte when the
 * tile is at most 128 leaves a side and has at most 255 portals, else 2 or 4.
 * What only linking needs (the rectangles of a face) is kept, outside the record, just for the
 * faces whose neighbour has no graph yet or could not be linked; links of a pair whose tile was
 * removed are kept as dormant, keyed by both graphs' CRCs, and restored when the same graphs meet.
 * The graphs of one pool are changed (add, remove, share, destroy) on one thread at a time, and not
 * while a planner of any of them runs on another: the rule of one graph, over the pool.
 */
#ifndef OCTONAV_WGRAPH_H
#define OCTONAV_WGRAPH_H

#include "portals.h" /* the tile graphs it links; the API is octonav.h's "World graph" (route.h documents it) */
#include "wgraph_pool.h" /* the records, held once */

#include <math.h>
#include <string.h>

/* A tile of one graph: its record and what is its own, the links it owns and its unresolved faces. */
typedef struct ctile {
    const crec *r;
    uint32_t np;           /* r->np */
    uint32_t crc;          /* the tile graph's CRC (portals.h): what dormant links and on_wgraph_resolve match */
    uint16_t nlink[3];     /* links owned, across face 2k+1 */
    uint8_t w;             /* r->w */
    uint8_t unresolved;    /* face bits: a neighbour has a graph but no link could be made (route.h) */
    uint8_t d[];           /* links (owner portal, neighbour portal, lo u, lo v, hi u - 1, hi v - 1) x w,
                            * face 1's, then 3's, then 5's, each sorted by owner portal */
} ctile;

static inline size_t ct_link_size(const ctile *c) { return 6 * (size_t)c->w; }
static inline size_t ct_nlinks(const ctile *c) { return (size_t)c->nlink[0] + c->nlink[1] + c->nlink[2]; }
/* The tile's own bytes (its record's are the pool's). */
static inline size_t ct_bytes(const ctile *c) { return sizeof *c + ct_nlinks(c) * ct_link_size(c); }

static inline int ct_face(const ctile *c, uint32_t p) { return c->r->d[p * cr_portal_size(c->r) + 2 * (size_t)c->w]; }
/* The component of portal p: the last k with comp_first(k) <= p (binary search). */
static inline uint32_t ct_comp(const ctile *c, uint32_t p)
{
    const crec *r = c->r;
    uint32_t lo = 0, hi = r->ncomp; /* comp_first(lo) <= p < comp_first(hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cr_comp_first(r, mid) <= p) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Tile-local point of portal p (leaves). */
static inline void ct_point(const ctile *c, uint32_t p, double out[3])
{
    const crec *r = c->r;
    const uint8_t *q = r->d + p * cr_portal_size(r);
    int f = q[2 * c->w], k = f >> 1;
    out[k] = (f & 1) ? (double)(1u << (r->depth_lb & 15)) : 0.0;
    out[(k + 1) % 3] = 0.5 * ct_rd(q, c->w);
    out[(k + 2) % 3] = 0.5 * ct_rd(q + c->w, c->w);
}

/* Row a of its component's weight matrix, for a run of ct_row_weight(&row, b) over the portals b
 * of the component (row.first .. row.end): what one expansion of the planner reads. */
typedef struct ct_row {
    uint32_t first, end, m, a;
    const uint8_t *w;      /* the component's matrix */
    double unit;           /* a weight unit in leaves: 2^-wshift */
} ct_row;
static inline void ct_row_of(const ctile *c, uint32_t a, ct_row *row)
{
    const crec *r = c->r;
    uint32_t k = ct_comp(c, a);
    row->first = cr_comp_first(r, k);
    row->end = cr_comp_first(r, k + 1);
    row->m = row->end - row->first;
    row->a = a - row->first;
    row->w = r->d + cr_off_w(r) + 2 * (size_t)cr_moff(r, k);
    row->unit = ldexp(1.0, -r->wshift);
}
static inline double ct_row_weight(const ct_row *row, uint32_t b)
{
    uint32_t i = row->a, j = b - row->first;
    if (i > j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    const uint8_t *x = row->w + 2 * ((size_t)i * (2 * row->m - i - 1) / 2 + (j - i - 1));
    return (double)((uint32_t)x[0] | (uint32_t)x[1] << 8) * row->unit; /* exact: a power of two */
}

/* Where the links of face 2k+1 (owned) start in c->d. */
static inline size_t ct_off_links(const ctile *c, int k)
{
    size_t off = 0;
    for (int j = 0; j < k; j++) off += (size_t)c->nlink[j] * ct_link_size(c);
    return off;
}

/* The links of face 2k+1 (owned, sorted by owner portal) to look at for portal p: owner (p is the
 * owner's portal) the run of links whose owner portal is p, found by binary search; else (p is the
 * neighbour's) all of them, [*i0, *i1). */
static inline void ct_links_of(const ctile *c, int k, uint32_t p, int owner, uint32_t *i0, uint32_t *i1)
{
    *i0 = 0;
    *i1 = c->nlink[k];
    if (!owner) return;
    const uint8_t *x = c->d + ct_off_links(c, k);
    size_t sz = ct_link_size(c);
    uint32_t lo = 0, hi = c->nlink[k];
    while (lo < hi) { /* first link with owner portal >= p */
        uint32_t mid = lo + (hi - lo) / 2;
        if (ct_rd(x + mid * sz, c->w) < p) lo = mid + 1;
        else hi = mid;
    }
    *i0 = lo;
    hi = c->nlink[k];
    uint32_t e = lo;
    while (e < hi && ct_rd(x + e * sz, c->w) == p) e++;
    *i1 = e;
}

/* Link i of face 2k+1 (owned): owner portal a, neighbour portal b, overlap [lo, hi) along (u, v). */
static inline void ct_link(const ctile *c, int k, uint32_t i, uint32_t *a, uint32_t *b, uint32_t lo[2], uint32_t hi[2])
{
    const uint8_t *x = c->d + ct_off_links(c, k) + (size_t)i * ct_link_size(c);
    int w = c->w;
    *a = ct_rd(x, w);
    *b = ct_rd(x + w, w);
    lo[0] = ct_rd(x + 2 * w, w);
    lo[1] = ct_rd(x + 3 * w, w);
    hi[0] = ct_rd(x + 4 * w, w) + 1;
    hi[1] = ct_rd(x + 5 * w, w) + 1;
}

typedef struct wlinkrec { /* a link in plain form: linking and dormant pairs */
    uint32_t a, b;
    uint16_t lo[2], hi[2];
} wlinkrec;

typedef struct wface {     /* a face's rectangles kept for a link to come */
    uint32_t tile;
    uint8_t face;
    uint32_t n;
    on_prect *rect;
    uint32_t *portal;      /* of each rectangle */
} wface;

typedef struct wdormant {  /* the links of a pair whose tile left */
    uint32_t owner;        /* the tile on the negative side */
    uint8_t k;             /* axis */
    uint32_t crc_owner, crc_other;
    uint32_t n;
    wlinkrec *l;
} wdormant;

struct on_wgraph {
    on_tree_params p;
    wpool *pool;
    int n;
    uint32_t ntiles;
    uint64_t revision;
    ctile **tiles;
    size_t ngraphs;
    wface *face;           /* pending faces */
    size_t nface, facecap;
    int maybe_unresolved;  /* some unresolved bit may be set */
    wdormant *dorm;
    size_t ndorm, dormcap;
};

static inline void wg_tile_ijk(const on_wgraph *w, uint32_t t, int c[3])
{
    c[0] = (int)(t % (uint32_t)w->p.tiles[0]);
    c[1] = (int)((t / (uint32_t)w->p.tiles[0]) % (uint32_t)w->p.tiles[1]);
    c[2] = (int)(t / ((uint32_t)w->p.tiles[0] * (uint32_t)w->p.tiles[1]));
}

/* The linear index of tile c (the pack's numbering: i + nx * (j + ny * k)). */
static inline uint32_t wg_tile_index(const on_wgraph *w, const int c[3])
{
    return (uint32_t)c[0] + (uint32_t)w->p.tiles[0] * ((uint32_t)c[1] + (uint32_t)w->p.tiles[1] * (uint32_t)c[2]);
}

/* Are the rectangles of tile t's face f kept (for a link to come)? */
int on_wgraph_face_kept(const on_wgraph *w, uint32_t t, int f);

/* The tile across face f of tile t, or UINT32_MAX outside the grid. */
uint32_t on_wgraph_neighbour(const on_wgraph *w, uint32_t t, int f);

#endif
