/*
 * wgraph.h -- the world graph's resident form (internal to wgraph.c, the linking, and route.c, the
 * planner; the API is route.h).
 *
 * Per grid tile one pointer; per tile with a graph one packed record (ctile): its portals but those
 * on the world's border (never linked; numbered in the order kept, components renumbered), (doubled
 * point coordinates on their face, face, component), the component table, the weight matrices
 * (16 bits) and the links it owns: those across its +x, +y, +z faces, each stored once for the pair
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
    uint32_t np, npair;
    uint16_t ncomp;
    uint16_t nlink[3];     /* links owned, across face 2k+1 */
    uint8_t w;             /* bytes of a small field: 1, 2 or 4 */
    int8_t wshift;         /* weights in units of 2^-wshift leaf */
    uint8_t unresolved;    /* face bits: a neighbour has a graph but no link could be made (route.h) */
    uint8_t depth_lb;      /* depth | log2(portal bound) << 4 */
    uint8_t d[];           /* portals np x (u2, v2, comp: w bytes each; face: 1 byte); comp_first
                            * (ncomp + 1) x w; matrix offsets ncomp x 4; weights npair x 2; links
                            * (owner portal, neighbour portal, lo u, lo v, hi u - 1, hi v - 1) x w */
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

static inline size_t ct_portal_size(const ctile *c) { return 3 * (size_t)c->w + 1; }
static inline size_t ct_off_comp(const ctile *c) { return (size_t)c->np * ct_portal_size(c); }
static inline size_t ct_off_moff(const ctile *c) { return ct_off_comp(c) + ((size_t)c->ncomp + 1) * c->w; }
static inline size_t ct_off_w(const ctile *c) { return ct_off_moff(c) + (size_t)c->ncomp * 4; }
static inline size_t ct_off_link(const ctile *c) { return ct_off_w(c) + (size_t)c->npair * 2; }
static inline size_t ct_link_size(const ctile *c) { return 6 * (size_t)c->w; }
static inline size_t ct_bytes(const ctile *c)
{
    return sizeof *c + ct_off_link(c) + ((size_t)c->nlink[0] + c->nlink[1] + c->nlink[2]) * ct_link_size(c);
}

static inline int ct_face(const ctile *c, uint32_t p) { return c->d[p * ct_portal_size(c) + 3 * (size_t)c->w]; }
static inline uint32_t ct_comp(const ctile *c, uint32_t p) { return ct_rd(c->d + p * ct_portal_size(c) + 2 * (size_t)c->w, c->w); }
static inline uint32_t ct_comp_first(const ctile *c, uint32_t k) { return ct_rd(c->d + ct_off_comp(c) + (size_t)k * c->w, c->w); }

/* Tile-local point of portal p (leaves). */
static inline void ct_point(const ctile *c, uint32_t p, double out[3])
{
    const uint8_t *q = c->d + p * ct_portal_size(c);
    int f = q[3 * c->w], k = f >> 1;
    out[k] = (f & 1) ? (double)(1u << (c->depth_lb & 15)) : 0.0;
    out[(k + 1) % 3] = 0.5 * ct_rd(q, c->w);
    out[(k + 2) % 3] = 0.5 * ct_rd(q + c->w, c->w);
}

/* The weight between portals a != b of one component, in leaves (0: no edge). */
static inline double ct_weight(const ctile *c, uint32_t a, uint32_t b)
{
    uint32_t k = ct_comp(c, a), f = ct_comp_first(c, k), m = ct_comp_first(c, k + 1) - f;
    uint32_t i = (a < b ? a : b) - f, j = (a < b ? b : a) - f, mo;
    memcpy(&mo, c->d + ct_off_moff(c) + 4 * (size_t)k, 4);
    const uint8_t *x = c->d + ct_off_w(c) + 2 * ((size_t)mo + (size_t)i * (2 * m - i - 1) / 2 + (j - i - 1));
    return ldexp((double)((uint32_t)x[0] | (uint32_t)x[1] << 8), -c->wshift);
}

/* Link i of face 2k+1 (owned): owner portal a, neighbour portal b, overlap [lo, hi) along (u, v). */
static inline void ct_link(const ctile *c, int k, uint32_t i, uint32_t *a, uint32_t *b, uint32_t lo[2], uint32_t hi[2])
{
    size_t off = ct_off_link(c);
    for (int j = 0; j < k; j++) off += (size_t)c->nlink[j] * ct_link_size(c);
    const uint8_t *x = c->d + off + (size_t)i * ct_link_size(c);
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

/* Are the rectangles of tile t's face f kept (for a link to come)? */
int on_wgraph_face_kept(const on_wgraph *w, uint32_t t, int f);

/* The tile across face f of tile t, or UINT32_MAX outside the grid. */
uint32_t on_wgraph_neighbour(const on_wgraph *w, uint32_t t, int f);

#endif
