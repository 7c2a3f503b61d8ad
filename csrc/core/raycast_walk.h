/*
 * raycast_walk.h -- the walk along a segment that both line-of-sight walkers share (internal to
 * raycast.c, raycast_dense.c and raycast_turn.c; the rule is raycast.h's): the per-axis state (the
 * current voxel, the next plane crossing), the voxels around an event and the transition check
 * between them, and the sanity check of a segment's coordinates. Static functions, so that each
 * walker inlines them as it did when they were one file.
 */
#ifndef OCTONAV_RAYCAST_WALK_H
#define OCTONAV_RAYCAST_WALK_H

#include <math.h>
#include <stdint.h>

typedef struct walk {
    double a[3], d[3];
    int64_t idx[3];  /* moving axes: current voxel; on-plane axes: the lower of the two voxels */
    int step[3];     /* +1, -1, or 0 for an axis the segment does not move along */
    int two[3];      /* 1 when the segment lies on a lattice plane of this axis (d == 0, a integer) */
    double tnext[3]; /* next plane crossing of a moving axis, INFINITY otherwise */
} walk;

/* The one expression for "when does the segment cross plane k of axis j". */
static inline double tplane(const walk *w, int j, int64_t k)
{
    return ((double)k - w->a[j]) / w->d[j];
}

/* 0 <= x < n (n >= 0) in one unsigned comparison. */
static inline int in_range(int64_t x, int64_t n)
{
    return (uint64_t)x < (uint64_t)n;
}

/* floor and ceil of |x| < 2^53 as integers, without a libm call (every coordinate here is sane()). */
static inline int64_t ifloor(double x)
{
    int64_t k = (int64_t)x;
    return k - ((double)k > x);
}
static inline int64_t iceil(double x)
{
    int64_t k = (int64_t)x;
    return k + ((double)k < x);
}

/* The walk at the start. With tnext 0 a moving axis's tnext is left unset (the octree walk sets it by
 * sync_axis before any use, and spares the divisions when its fast steps settle the segment). */
static inline __attribute__((always_inline)) void walk_init(walk *w, const double a[3], const double b[3],
                                                           int tnext)
{
    for (int j = 0; j < 3; j++) {
        w->a[j] = a[j];
        w->d[j] = b[j] - a[j];
        w->two[j] = 0;
        if (w->d[j] > 0) {
            w->step[j] = 1;
            w->idx[j] = ifloor(a[j]);
            if (tnext) w->tnext[j] = tplane(w, j, w->idx[j] + 1);
        } else if (w->d[j] < 0) {
            w->step[j] = -1;
            w->idx[j] = iceil(a[j]) - 1;
            if (tnext) w->tnext[j] = tplane(w, j, w->idx[j]);
        } else {
            w->step[j] = 0;
            int64_t f = ifloor(a[j]);
            w->two[j] = ((double)f == a[j]);
            w->idx[j] = f - w->two[j];
            w->tnext[j] = INFINITY;
        }
    }
}

/* Voxels around a point of the walk, as up to 8 entries indexed by one bit per axis:
 * bit j clear = lo[j], set = lo[j] + 1 (only for axes with two choices). */
typedef struct around {
    int64_t lo[3];
    unsigned valid;  /* mask of the 8 entries that exist */
    unsigned before, after; /* entries in the open interval just before / just after the point */
} around;

static const unsigned low_half[3] = {0x55u, 0x33u, 0x0fu}; /* entries with bit j clear */

static __attribute__((unused)) unsigned mask_with_bit(int j, int set) { return set ? (~low_half[j] & 0xffu) : low_half[j]; }

/* The voxels around the event at which the axes in `cross` step. */
static __attribute__((unused)) void around_event(const walk *w, unsigned cross, around *r)
{
    unsigned valid = 0xff, before = 0xff, after = 0xff;
    for (int j = 0; j < 3; j++) {
        if (cross & (1u << j)) {
            int up = w->step[j] > 0;
            r->lo[j] = up ? w->idx[j] : w->idx[j] - 1;
            before &= mask_with_bit(j, !up);
            after &= mask_with_bit(j, up);
        } else {
            r->lo[j] = w->idx[j];
            if (!w->two[j]) valid &= low_half[j];
        }
    }
    r->valid = valid;
    r->before = before & valid;
    r->after = after & valid;
}

/* The voxels around the start point (the open interval just after t = 0). */
static __attribute__((unused)) void around_start(const walk *w, around *r)
{
    unsigned valid = 0xff;
    for (int j = 0; j < 3; j++) {
        r->lo[j] = w->idx[j];
        if (!w->two[j]) valid &= low_half[j];
    }
    r->valid = r->before = r->after = valid;
}

/* Entries of `after` reachable from free entries of `before` through face-sharing free entries. */
static __attribute__((unused)) unsigned reach_after(unsigned freem, unsigned before, unsigned after)
{
    unsigned reach = freem & before, prev;
    do {
        prev = reach;
        for (int j = 0; j < 3; j++) {
            unsigned sh = 1u << j;
            unsigned lo = low_half[j];
            reach |= (((reach & lo) << sh) | ((reach >> sh) & lo)) & freem;
        }
    } while (reach != prev);
    return reach & after & freem;
}

static inline unsigned lowest_axes(const walk *w, double *t)
{
    /* (tnext is never NaN: no libm call) */
    double m = w->tnext[1] < w->tnext[2] ? w->tnext[1] : w->tnext[2];
    if (w->tnext[0] < m) m = w->tnext[0];
    unsigned c = 0;
    for (int j = 0; j < 3; j++)
        if (w->tnext[j] == m) c |= 1u << j;
    *t = m;
    return c;
}

static __attribute__((unused)) void advance(walk *w, unsigned cross)
{
    for (int j = 0; j < 3; j++)
        if (cross & (1u << j)) {
            w->idx[j] += w->step[j];
            w->tnext[j] = tplane(w, j, w->step[j] > 0 ? w->idx[j] + 1 : w->idx[j]);
        }
}

/* Coordinates beyond this are treated as outside any map (and keep the int64 casts defined). */
#define COORD_LIMIT 4.0e15

static __attribute__((unused)) int sane(const double a[3], const double b[3])
{
    for (int j = 0; j < 3; j++)
        if (!(fabs(a[j]) < COORD_LIMIT) || !(fabs(b[j]) < COORD_LIMIT)) return 0;
    return 1;
}

#endif
