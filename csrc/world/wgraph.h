/*
 * wgraph.h -- the world graph's resident form (internal to wgraph.c, the linking, and route.c, the
 * planner; the API is route.h).
 *
 * Per grid tile one pointer; per tile with a graph one packed record (ctile): its portals but those
 * on the world's border (never linked; numbered in the order kept, components renumbered), (doubled
 * point coordinates on their face, face), the component table (a portal's component found there by
 * binary search), the weight matrices (16 bits) and the links it owns: those across its +x, +y, +z faces, each stored once for the pair
 * of portals (owner's, neighbour's) with the largest rectangle where they overlap. Small fields take
 * 1 byte when the tile is at most 128 leaves a side and has at most 255 portals, else 2 or 4.
 * What only linking needs (the rectangles of a face) is kept, outside the record, just for the
 * faces whose neighbour has no graph yet or could not be linked; links of a pair whose tile was
 * removed are kept as dormant, keyed by both graphs' CRCs, and restored when the same graphs meet.
 */
#ifndef OCTONAV_WGRAPH_H
#define OCTONAV_WGRAPH_H

#include "portals.h" /* the tile graphs it links; the API is octonav.h's "World graph" (route.h documents it) */

#include <math.h>
#include <string.h>

typedef struct ctile {
    uint32_t crc;          /* the tile graph's CRC (portals.h) */
    uint32_t id;           /* its blob's own CRC (the trailer): the identity the world layer compares */
    uint32_t np;
    uint16_t ncomp;
    uint16_t nlink[3];     /* links owned, across face 2k+1 */
    uint8_t w;             /* bytes of a small field: 1, 2 or 4 */
    int8_t wshift;         /* weights in units of 2^-wshift leaf */
    uint8_t unresolved;    /* face bits: a neighbour has a graph but no link could be made (route.h) */
    uint8_t depth_lb;      /* depth | log2(portal bound) << 4 */
    uint8_t d[];           /* portals np x (u2, v2: w bytes each; face: 1 byte); comp_first (ncomp + 1)
                            * x w (a portal's component is found there: portals are ordered by it);
                            * matrix offsets of components 1.. (ncomp - 1) x 4 (component 0's is 0);
                            * weights (the matrices' upper triangles, pairs in all) x 2; links (owner
                            * portal, neighbour portal, lo u, lo v, hi u - 1, hi v - 1) x w, each face's
                            * sorted by owner portal */
} ctile;

static inline uint32_t ct_rd(const uint8_t *p, int w)
{
    if (w == 1) return p[0];
    if (w == 2) return (uint32_t)p[0] | (uint32_t)p[1] << 8;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void ct_wr(uint8_t *p, int w, uint32_t v)
{
    for (int i = 0; i < w; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline size_t ct_portal_size(const ctile *c) { return 2 * (size_t)c->w + 1; }
static inline size_t ct_off_comp(const ctile *c) { return (size_t)c->np * ct_portal_size(c); }
static inline size_t ct_off_moff(const ctile *c) { return ct_off_comp(c) + ((size_t)c->ncomp + 1) * c->w; }
static inline size_t ct_off_w(const ctile *c) { return ct_off_moff(c) + (c->ncomp ? (size_t)c->ncomp - 1 : 0) * 4; }
static inline uint32_t ct_comp_first(const ctile *c, uint32_t k) { return ct_rd(c->d + ct_off_comp(c) + (size_t)k * c->w, c->w); }
/* Where component k's matrix starts, in weights. */
static inline uint32_t ct_moff(const ctile *c, uint32_t k)
{
    uint32_t mo = 0;
    if (k > 0) memcpy(&mo, c->d + ct_off_moff(c) + 4 * ((size_t)k - 1), 4);
    return mo;
}
/* Pairs of portals of one component: the weights stored. */
static inline uint32_t ct_npair(const ctile *c)
{
    if (c->ncomp == 0) return 0;
    uint32_t m = ct_comp_first(c, c->ncomp) - ct_comp_first(c, c->ncomp - 1u);
    return ct_moff(c, c->ncomp - 1u) + (uint32_t)((uint64_t)m * (m - 1) / 2);
}
static inline size_t ct_off_link(const ctile *c) { return ct_off_w(c) + (size_t)ct_npair(c) * 2; }
static inline size_t ct_link_size(const ctile *c) { return 6 * (size_t)c->w; }
static inline size_t ct_bytes(const ctile *c)
{
    return sizeof *c + ct_off_link(c) + ((size_t)c->nlink[0] + c->nlink[1] + c->nlink[2]) * ct_link_size(c);
}

static inline int ct_face(const ctile *c, uint32_t p) { return c->d[p * ct_portal_size(c) + 2 * (size_t)c->w]; }
/* The component of portal p: the last k with comp_first(k) <= p (binary search). */
static inline uint32_t ct_comp(const ctile *c, uint32_t p)
{
    uint32_t lo = 0, hi = c->ncomp; /* comp_first(lo) <= p < comp_first(hi) */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ct_comp_first(c, mid) <= p) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Tile-local point of portal p (leaves). */
static inline void ct_point(const ctile *c, uint32_t p, double out[3])
{
    const uint8_t *q = c->d + p * ct_portal_size(c);
    int f = q[2 * c->w], k = f >> 1;
    out[k] = (f & 1) ? (double)(1u << (c->depth_lb & 15)) : 0.0;
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
    uint32_t k = ct_comp(c, a);
    row->first = ct_comp_first(c, k);
    row->end = ct_comp_first(c, k + 1);
    row->m = row->end - row->first;
    row->a = a - row->first;
    row->w = c->d + ct_off_w(c) + 2 * (size_t)ct_moff(c, k);
    row->unit = ldexp(1.0, -c->wshift);
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
    size_t off = ct_off_link(c);
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
