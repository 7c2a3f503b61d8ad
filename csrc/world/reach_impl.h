/*
 * reach_impl.h -- what the two halves of the local searches share (internal to reach.c and
 * reach_run.c; reach.h is the interface): the heap entries' flags, how a search may stop, the
 * per-box cost and target map helpers, and the search itself.
 */
#ifndef OCTONAV_REACH_IMPL_H
#define OCTONAV_REACH_IMPL_H

#include "reach.h"
#include "util.h"

#include <math.h>

#define dist3 on_dist3
#define NO_ENTRY UINT32_MAX

/* Heap entries: a box's index, with LOWER when keyed by a lower bound of its heading (reach_run), or
 * a block's with PROXY (a lazy set's block not built yet). */
#define LOWER 0x40000000u
#define PROXY 0x80000000u

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
void on_reach_order_targets(on_reach *r, const double *pts, uint32_t npt, const double p[3]);
/* reach.c: block b of the search's lazy set built, its waiting targets mapped (its comment there). */
int on_reach_lazy_block(on_reach *r, on_boxlazy *z, uint32_t b, const reach_stop *d, size_t *need);

#endif
