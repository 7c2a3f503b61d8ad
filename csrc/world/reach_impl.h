/*
 * reach_impl.h -- what the two halves of the local searches share (internal to reach.c and
 * reach_run.c; reach.h is the interface): the heap entries' flags, how a search may stop, the
 * per-box cost and target map helpers, and the search itself.
 */
#ifndef OCTONAV_REACH_IMPL_H
#define OCTONAV_REACH_IMPL_H

#include <time.h>
#include "nodepool.h"
#include "reach.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define dist3 on_dist3
#define NO_ENTRY UINT32_MAX

/* Heap entries: a box's index, with LOWER when keyed by a lower bound of its heading (reach_run), or
 * a block's with PROXY (a lazy set's block not built yet). */
#define LOWER 0x40000000u
#define PROXY 0x80000000u

/* A lazy set's per-block list heads (phead, whead: an entry, or NO_ENTRY) are valid where their bit
 * (pvalid, wvalid: one bit a block, zeroed) is set, NO_ENTRY elsewhere: a fresh scratch (a planner's
 * first join, or one joining while another holds the shared scratch) writes the heads of the blocks it
 * lists, not 32,768 heads of a 512^3 tile at once (nor has them zeroed by calloc, which memsets memory
 * the heap reuses): 64 pages first touched, ~0.8 ms of page faults in one call on the seed's machine
 * at load 8 (12 us a fault). */
static inline uint32_t head_get(const uint32_t *h, const uint64_t *valid, uint32_t b)
{
    return valid[b >> 6] >> (b & 63) & 1u ? h[b] : NO_ENTRY;
}
static inline void head_set(uint32_t *h, uint64_t *valid, uint32_t b, uint32_t e)
{
    if (e == NO_ENTRY) {
        valid[b >> 6] &= ~((uint64_t)1 << (b & 63));
        return;
    }
    h[b] = e;
    valid[b >> 6] |= (uint64_t)1 << (b & 63);
}

/* The cost so far of box b in the last search (HUGE_VAL: not reached). */
static inline double gval(const on_reach *r, uint32_t b) { return r->seen[b] == r->cur ? r->g[b] : HUGE_VAL; }

/* The search's lazy set (see reach.h), or NULL. */
static inline on_boxlazy *lazy_of(const on_reach *r, const on_boxset *s)
{
    return r->lazy && s == &r->lazy->set ? r->lazy : NULL;
}

/* Map target t to box b (the box holds its point). */
static inline void add_entry(on_reach *r, uint32_t b, uint32_t t)
{
    if (r->tbn[t] == 8) return; /* (a point lies in at most 8 closed boxes of disjoint interiors) */
    uint32_t e = r->nent++;
    r->tbox[8 * (size_t)t + r->tbn[t]++] = b;
    r->tent_t[e] = t;
    r->tent_next[e] = r->tmark[b] == r->tcur ? r->thead[b] : NO_ENTRY;
    r->thead[b] = e;
    r->tmark[b] = r->tcur;
}

/* How a search from a point may stop early (reach_run; NULL: to exhaustion). */
typedef struct reach_stop {
    const uint32_t *group; /* per target its component (< npt) */
    uint32_t npt;
    const double *pts;     /* the targets' points */
    const double *to;      /* NULL, or a point to head for (A* by straight line to it) */
    double weight;         /* the straight line's weight in the keys (1: plain A*) */
    double slack, add;
    size_t budget;         /* > 0: stop this many settled boxes after the first target met */
    const uint32_t *order; /* with to: the targets by increasing hc */
    const double *hp;      /* with to: per target, the straight line from it to `to` */
    const double *hc;      /* with to: per target, |root - target| + hp: the line through it */
    const double *root;    /* the search's point */
} reach_stop;

/* reach_run.c: the search (its comment there) and the targets' order for a directed one. */
void on_reach_run(on_reach *r, const on_boxset *s, const uint32_t *roots, int nroot, const double p[3],
                  const reach_stop *d);
/* A search on_reach_run left suspended (r->suspended) goes on, d rebuilt from r->rs (reach.c). */
void on_reach_run_more(on_reach *r, const on_boxset *s, const reach_stop *d);
void on_reach_order_targets(on_reach *r, const double *pts, uint32_t npt, const double p[3]);
/* reach.c: block b of the search's lazy set built, its waiting targets mapped (its comment there). */

/* (the scratch's growth and a lazy set's block built mid-search: reach.c and reach_run.c both use them) */
/* realloc *p to n elements of size sz; 0, or -1 (unchanged) when out of memory */
static inline int regrow(void **p, size_t n, size_t sz)
{
    void *q = realloc(*p, n * sz);
    if (!q) return -1;
    *p = q;
    return 0;
}

static inline void reach_bytes(on_reach *r)
{
    r->bytes = r->cap * (sizeof(double) * 5 + sizeof(uint32_t) * 7 + sizeof(double) * 3) +
               r->heapcap * (sizeof(uint32_t) + sizeof(double)) + r->tcap * ((8 * 5 + 2) * sizeof(uint32_t) + 2 * sizeof(double)) +
               r->phcap * 5 * sizeof(uint32_t) + r->wcap * (3 * sizeof(uint32_t) + 1) +
               r->pullcap * (7 * sizeof(double) + sizeof(uint32_t)) + 2 * (r->pullcap / 64 + 1) * sizeof(uint64_t);
}

/* The stamps of boxes zeroed .. n - 1 zeroed (not seen, done or mapped): the arrays are malloc'd, not
 * calloc'd, and zeroed only as far as boxes exist (a lazy set's are numbered on as its blocks are
 * built), so a scratch made with room to spare touches no page of that room (calloc memsets memory the
 * heap reuses: a MB of it is ~250 page faults, ~3 ms on the seed's machine at load 8). */
/* The monotonic clock, seconds (the probes of reach.h's setup_s). */
static inline double reach_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void stamps_upto(on_reach *r, size_t n)
{
    if (n > r->cap) n = r->cap;
    if (n <= r->zeroed) return;
    uint32_t *st[] = {r->seen, r->done, r->tmark, r->hexact};
    for (int i = 0; i < 4; i++) memset(st[i] + r->zeroed, 0, (n - r->zeroed) * sizeof(uint32_t));
    r->zeroed = n;
}

/* *p, an array of on_pages_* (nodepool.h), to n elements of size sz, keeping its contents (a mapping
 * is moved, not copied); 0, or -1 (unchanged) when out of memory. (Not regrow: these arrays are not
 * malloc's, and realloc on one aborts; session 30 found it, tests/world/test_reach_grow.c.) */
static inline int pages_regrow(void **p, size_t n, size_t sz)
{
    if (sz && n > SIZE_MAX / 2 / sz) return -1;
    void *q = on_pages_realloc(*p, n * sz);
    if (!q) return -1;
    *p = q;
    return 0;
}

/* For a lazy set that has grown mid-search: room for nbox boxes, keeping what the search wrote (the
 * stamps of the new boxes are zeroed as they come: stamps_upto); -1 when out of memory. */
static inline int reach_grow_keep(on_reach *r, size_t nbox)
{
    if (nbox + 1 <= r->cap) return 0;
    size_t c = 2 * r->cap > nbox + 1 ? 2 * r->cap : nbox + 1;
    /* (each array grown alone: one that fails leaves the others larger than r->cap, harmless) */
    if (pages_regrow((void **)&r->g, c, sizeof *r->g) || pages_regrow((void **)&r->pt, 3 * c, sizeof *r->pt) ||
        pages_regrow((void **)&r->parent, c, sizeof *r->parent) || pages_regrow((void **)&r->hkey, c, sizeof *r->hkey) ||
        pages_regrow((void **)&r->thead, c, sizeof *r->thead) || pages_regrow((void **)&r->chain, c, sizeof *r->chain) ||
        pages_regrow((void **)&r->cpt, 3 * (c + 2), sizeof *r->cpt))
        return -1;
    uint32_t **st[] = {&r->seen, &r->done, &r->tmark, &r->hexact};
    for (int i = 0; i < 4; i++)
        if (pages_regrow((void **)st[i], c, sizeof(uint32_t))) return -1;
    r->cap = c;
    reach_bytes(r);
    return 0;
}

/* Block b of lazy set z built (when it was not): the per-box arrays grown to its boxes, the targets
 * waiting for it mapped, and with d the entries of components already met added to *need. -1 when
 * out of memory. */
static inline int on_reach_lazy_block(on_reach *r, on_boxlazy *z, uint32_t b, const reach_stop *d, size_t *need)
{
    if (on_boxlazy_built(z, b)) return 0;
    if (on_failed(on_boxlazy_block(z, b)) || reach_grow_keep(r, z->set.nbox)) return -1;
    stamps_upto(r, z->set.nbox);
    r->work += REACH_BLOCK_UNITS;
    for (uint32_t e = head_get(r->phead, r->pvalid, b); e != NO_ENTRY; e = r->pnext[e]) {
        uint32_t t = r->ptgt[e], in[8], e0 = r->nent;
        int n = 0;
        on_boxlazy_locate_in(z, b, r->tpts + 3 * (size_t)t, in, &n);
        for (int i = 0; i < n; i++) add_entry(r, in[i], t);
        if (!d) continue;
        /* the pending pair counted as one entry (reach_run) is replaced by the entries found */
        uint32_t *gn = &r->gneed[d->group[t]];
        size_t *cnt = *gn == UINT32_MAX ? need : NULL; /* its component met: in need, else in gneed */
        if (cnt) *cnt = *cnt - 1 + (r->nent - e0);
        else *gn = *gn - 1 + (r->nent - e0);
    }
    head_set(r->phead, r->pvalid, b, NO_ENTRY);
    return 0;
}

#endif
