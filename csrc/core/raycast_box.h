/*
 * raycast_box.h -- line of sight's test without a walk (raycast.c's, internal): a segment inside one
 * tile's part of the map that passes clear of the box around the tile's blocked leaves. Included by
 * raycast.c after FAST_MARGIN.
 */
#ifndef OCTONAV_RAYCAST_BOX_H
#define OCTONAV_RAYCAST_BOX_H

#include "losmap.h"
#include "tree.h"

#include <stdatomic.h>

/* A segment inside one tile's part of the map (each end more than FAST_MARGIN inside it) that passes
 * more than FAST_MARGIN from the box around the tile's blocked leaves touches only free voxels: clear
 * by the rule, without a walk. m: the masks of the tile at o (its origin, leaves) where a lies. 1 when
 * that shows the segment clear (0: walk it). */
static inline __attribute__((always_inline)) int clear_in_box(const on_losmap *m, const double o[3], const double a[3],
                                                              const double b[3])
{
    int none = m->lo[0] >= m->hi[0]; /* nothing blocked in the tile's part of the map */
    double la[3], lb[3];
    for (int j = 0; j < 3; j++) { /* the region first: each end more than the margin inside it */
        double r = m->dreg[j] - FAST_MARGIN;
        la[j] = a[j] - o[j], lb[j] = b[j] - o[j];
        if (!(la[j] > FAST_MARGIN && lb[j] > FAST_MARGIN && la[j] < r && lb[j] < r)) return 0;
    }
    if (none) return 1;
    double t0 = 0, t1 = 1;
    for (int j = 0; j < 3; j++) {
        /* the part of the segment within the box (grown by the margin) along axis j; a reciprocal's
         * rounding moves the ends by far less than the margin. The part only shrinks from axis to axis:
         * once empty, the segment passes clear of the box. */
        double lo = m->dlo[j] - FAST_MARGIN - la[j], hi = m->dhi[j] + FAST_MARGIN - la[j], d = lb[j] - la[j];
        if (d == 0) {
            if (lo > 0 || hi < 0) return 1; /* never within the box */
            continue;
        }
        double inv = 1.0 / d, u = lo * inv, v = hi * inv;
        if (d < 0) {
            double w = u;
            u = v;
            v = w;
        }
        if (u > t0) t0 = u;
        if (v < t1) t1 = v;
        if (t0 > t1) return 1;
    }
    return 0;
}

/* clear_in_box for a segment from a, a's tile found here. */
static int clear_by_box(const on_tree *t, const double a[3], const double b[3])
{
    int D = t->p.depth;
    int64_t ti3[3];
    for (int j = 0; j < 3; j++) { /* a's tile (b's too, when the region test below passes) */
        if (!(a[j] > 0)) return 0;
        ti3[j] = (int64_t)a[j] >> D;
        if (ti3[j] >= t->p.tiles[j]) return 0;
    }
    const on_tile *tl = &t->tiles[on_tile_index(t, (int)ti3[0], (int)ti3[1], (int)ti3[2])];
    if (tl->solid || !tl->loaded) return 0;
    const on_losmap *m = atomic_load_explicit(&tl->los, memory_order_acquire); /* (built by the walk) */
    if (!m || !m->box_small) return 0;
    const double o[3] = {(double)(ti3[0] << D), (double)(ti3[1] << D), (double)(ti3[2] << D)};
    return clear_in_box(m, o, a, b);
}

#endif
