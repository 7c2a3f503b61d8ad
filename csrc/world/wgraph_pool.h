/*
 * wgraph_pool.h -- the world graph's tile records (crec: a tile graph's portals, components and weights
 * in their resident form, never changed once made) and the pool that holds each distinct one once for
 * the graphs sharing it (wgraph.h; on_wgraph_share). Internal to wgraph.c and wgraph_pool.c; the
 * planner reads records through wgraph.h's accessors.
 */
#ifndef OCTONAV_WGRAPH_POOL_H
#define OCTONAV_WGRAPH_POOL_H

#include "octonav_world.h" /* on_wgraph */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A tile graph's resident record: what the planner reads of it (portals, components, weights),
 * never changed once made; shared, by content, between the tiles of every graph of one pool (wpool). */
typedef struct crec {
    uint32_t refs;         /* tiles holding it (all graphs of the pool) */
    uint32_t id;           /* its blob's own CRC (the trailer): the identity the world layer compares */
    uint32_t np;
    uint16_t ncomp;
    uint8_t w;             /* bytes of a small field: 1, 2 or 4 */
    int8_t wshift;         /* weights in units of 2^-wshift leaf */
    uint8_t depth_lb;      /* depth | log2(portal bound) << 4 */
    uint8_t d[];           /* portals np x (u2, v2: w bytes each; face: 1 byte); comp_first (ncomp + 1)
                            * x w (a portal's component is found there: portals are ordered by it);
                            * matrix offsets of components 1.. (ncomp - 1) x 4 (component 0's is 0);
                            * weights (the matrices' upper triangles, pairs in all) x 2 */
} crec;

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

static inline size_t cr_portal_size(const crec *r) { return 2 * (size_t)r->w + 1; }
static inline size_t cr_off_comp(const crec *r) { return (size_t)r->np * cr_portal_size(r); }
static inline size_t cr_off_moff(const crec *r) { return cr_off_comp(r) + ((size_t)r->ncomp + 1) * r->w; }
static inline size_t cr_off_w(const crec *r) { return cr_off_moff(r) + (r->ncomp ? (size_t)r->ncomp - 1 : 0) * 4; }
static inline uint32_t cr_comp_first(const crec *r, uint32_t k) { return ct_rd(r->d + cr_off_comp(r) + (size_t)k * r->w, r->w); }
/* Where component k's matrix starts, in weights. */
static inline uint32_t cr_moff(const crec *r, uint32_t k)
{
    uint32_t mo = 0;
    if (k > 0) memcpy(&mo, r->d + cr_off_moff(r) + 4 * ((size_t)k - 1), 4);
    return mo;
}
/* Pairs of portals of one component: the weights stored. */
static inline uint32_t cr_npair(const crec *r)
{
    if (r->ncomp == 0) return 0;
    uint32_t m = cr_comp_first(r, r->ncomp) - cr_comp_first(r, r->ncomp - 1u);
    return cr_moff(r, r->ncomp - 1u) + (uint32_t)((uint64_t)m * (m - 1) / 2);
}
static inline size_t cr_size(const crec *r) { return cr_off_w(r) + 2 * (size_t)cr_npair(r); } /* of d */
static inline size_t cr_bytes(const crec *r) { return sizeof *r + cr_size(r); }

typedef struct wpool {     /* the records of the graphs sharing them */
    on_wgraph **member;    /* those graphs in the order they joined: member[0]'s stats count the pool */
    size_t nmember, membercap;
    crec **rec;            /* the records, sorted (rec_cmp: their contents) */
    size_t nrec, reccap;
    size_t rec_bytes;      /* the records' bytes (cr_bytes) */
} wpool;

/* A pool with w its only member; NULL when out of memory. */
wpool *on_wpool_new(on_wgraph *w);
/* w (holding no record) leaves its pool, freed with its last member. */
void on_wpool_leave(on_wgraph *w);
/* The pool's bytes: its records, its tables. */
size_t on_wpool_bytes(const wpool *p);
/* The pool's record equal to r (r freed) or r itself, put in the pool; one more reference either way.
 * NULL when out of memory (r freed). */
const crec *on_wpool_intern(wpool *p, crec *r);
/* One reference to r less: freed with its last. */
void on_wpool_release(wpool *p, const crec *r);

#endif
