/*
 * raycast_dense.c -- line of sight by the rule in raycast.h over a voxel callback: the dense walk, one
 * voxel at a time (the reference the octree walk is tested against, and the grid baseline's).
 */
#include "raycast.h"
#include "raycast_walk.h"

static unsigned free_mask_fn(on_voxel_free_fn fn, const void *ud, const around *r)
{
    unsigned m = 0;
    for (unsigned e = 0; e < 8; e++)
        if ((r->valid & (1u << e)) &&
            fn(ud, r->lo[0] + (e & 1u), r->lo[1] + ((e >> 1) & 1u), r->lo[2] + ((e >> 2) & 1u)))
            m |= 1u << e;
    return m;
}

int on_walk_dense(on_voxel_free_fn fn, const void *ud, const double a[3], const double b[3], double *t_hit)
{
    if (t_hit) *t_hit = 0;
    if (!sane(a, b)) return 0;
    walk w;
    walk_init(&w, a, b, 1);
    around r;
    around_start(&w, &r);
    if (!free_mask_fn(fn, ud, &r)) return 0;
    int plane = w.two[0] | w.two[1] | w.two[2];
    for (;;) {
        double t;
        unsigned cross = lowest_axes(&w, &t);
        if (!(t < 1.0)) return 1;
        if (!plane && (cross == 1u || cross == 2u || cross == 4u)) {
            /* one plane crossed, off any lattice plane: only the voxel entered matters */
            int j = cross == 1u ? 0 : cross == 2u ? 1 : 2;
            int64_t v[3] = {w.idx[0], w.idx[1], w.idx[2]};
            v[j] += w.step[j];
            if (!fn(ud, v[0], v[1], v[2])) {
                if (t_hit) *t_hit = t;
                return 0;
            }
            advance(&w, cross);
            continue;
        }
        around_event(&w, cross, &r);
        if (!reach_after(free_mask_fn(fn, ud, &r), r.before, r.after)) {
            if (t_hit) *t_hit = t;
            return 0;
        }
        advance(&w, cross);
    }
}
