/*
 * boundary.c -- the local boundary: the blocked space near an agent, read from the tree as it is.
 *
 * The tree is walked from each tile's root down through the nodes that meet the cube around the agent,
 * and every blocked cube met is kept as a box (a coarse blocked node is one box, however large); a tile
 * not loaded and the space beyond the tile grid count as blocked. An agent keeps its boxes while it
 * stays within a quarter of the read's reach of where they were read and the tree is unchanged, so
 * most frames read nothing. A tree that stored each free leaf's clearance could answer "no blocked
 * space within d" without the walk: this file is where it would speed the crowd up.
 * Each frame the boxes become half-spaces (on_boundary_planes): the plane through a box's point
 * nearest the agent, facing it; a box wholly behind a nearer box's plane adds nothing and is dropped,
 * so a flat wall of many cubes is one half-space.
 */
#include "crowd.h"
#include "tree.h"

#include <stdlib.h>
#include <string.h>

typedef struct bwalk {
    on_agent *a;
    double lo[3], hi[3];  /* the cube read, nav space */
    const on_tree *t;
    int oom;
} bwalk;

static void emit(bwalk *w, const double nlo[3], const double nhi[3])
{
    on_agent *a = w->a;
    if (a->nboxes == a->boxes_cap) {
        size_t nc = a->boxes_cap ? a->boxes_cap * 2 : 32;
        double *b = realloc(a->boxes, nc * 6 * sizeof *b);
        if (!b) {
            w->oom = 1;
            return;
        }
        a->boxes = b;
        a->boxes_cap = nc;
    }
    double *b = a->boxes + 6 * a->nboxes++;
    double s = w->t->p.scale;
    for (int i = 0; i < 3; i++) {
        b[i] = w->t->p.origin[i] + nlo[i] * s;
        b[3 + i] = w->t->p.origin[i] + nhi[i] * s;
    }
}

static int meets(const bwalk *w, const double lo[3], double size)
{
    for (int i = 0; i < 3; i++)
        if (lo[i] > w->hi[i] || lo[i] + size < w->lo[i]) return 0;
    return 1;
}

/* Node `code` of tile ti (stored, value v) at nav corner base: its blocked children that meet the cube. */
static void walk(bwalk *w, uint32_t ti, const double base[3], uint32_t code, int v)
{
    const on_table *tab = &w->t->tiles[ti].table;
    for (unsigned i = 0; i < 8 && !w->oom; i++) {
        uint32_t cc = on_code_child(code, i);
        double size = (double)on_code_size(cc);
        double lo[3] = {base[0] + on_code_x(cc), base[1] + on_code_y(cc), base[2] + on_code_z(cc)};
        if (!meets(w, lo, size)) continue;
        if (v & (1 << i)) {
            double hi[3] = {lo[0] + size, lo[1] + size, lo[2] + size};
            emit(w, lo, hi);
            continue;
        }
        if (on_code_layer(cc) == 0) continue;
        int cv = on_table_get(tab, cc);
        if (cv >= 0) walk(w, ti, base, cc, cv);
    }
}

int on_boundary_read(const on_tree *t, on_agent *a, double reach)
{
    bwalk w = {.a = a, .t = t};
    double p[3] = {a->pos.x, a->pos.y, a->pos.z}, np[3];
    on_to_nav(t, p, np);
    double nr = reach * t->inv_scale;
    for (int i = 0; i < 3; i++) w.lo[i] = np[i] - nr, w.hi[i] = np[i] + nr;
    a->nboxes = 0;
    a->bound_valid = 0;
    /* beyond the tile grid: a slab on each side the cube crosses */
    for (int ax = 0; ax < 3 && !w.oom; ax++) {
        double ext = (double)t->p.tiles[ax] * t->n;
        double lo[3], hi[3];
        memcpy(lo, w.lo, sizeof lo);
        memcpy(hi, w.hi, sizeof hi);
        if (w.lo[ax] < 0) {
            lo[ax] = w.lo[ax] - 1, hi[ax] = 0;
            emit(&w, lo, hi);
        }
        memcpy(lo, w.lo, sizeof lo);
        memcpy(hi, w.hi, sizeof hi);
        if (w.hi[ax] > ext) {
            lo[ax] = ext, hi[ax] = w.hi[ax] + 1;
            emit(&w, lo, hi);
        }
    }
    int ta[3], tb[3];
    if (on_tree_tile_range(t, w.lo, w.hi, ta, tb)) {
        for (int k = ta[2]; k <= tb[2] && !w.oom; k++)
            for (int j = ta[1]; j <= tb[1] && !w.oom; j++)
                for (int i = ta[0]; i <= tb[0] && !w.oom; i++) {
                    uint32_t ti = on_tile_index(t, i, j, k);
                    const on_tile *tl = &t->tiles[ti];
                    double base[3] = {(double)i * t->n, (double)j * t->n, (double)k * t->n};
                    if (!meets(&w, base, t->n)) continue;
                    if (!tl->loaded || tl->solid) {
                        double hi[3] = {base[0] + t->n, base[1] + t->n, base[2] + t->n};
                        emit(&w, base, hi);
                        continue;
                    }
                    uint32_t root = on_root_code(t);
                    int v = on_table_get(&tl->table, root);
                    if (v >= 0) walk(&w, ti, base, root, v);
                }
    }
    if (w.oom) {
        a->nboxes = 0;
        return -1;
    }
    a->bound_at = a->pos;
    a->bound_reach = reach;
    a->bound_rev = on_tree_revision(t);
    a->bound_valid = 1;
    return 0;
}

int on_boundary_planes(const on_agent *a, on_v3 p, double within, on_v3 *q, on_v3 *n, double *d, int cap)
{
    /* candidates within reach, by distance (insertion into the cap nearest; ties keep box order) */
    int m = 0;
    enum { CAND = 4 * ON_CROWD_MAX_WALLS };
    double cd[CAND];
    uint32_t ci[CAND];
    for (size_t b = 0; b < a->nboxes; b++) {
        const double *bx = a->boxes + 6 * b;
        /* (an axis alone farther than within: out, before the others are read) */
        double dx = p.x < bx[0] ? bx[0] - p.x : p.x > bx[3] ? p.x - bx[3] : 0;
        if (dx > within) continue;
        double dy = p.y < bx[1] ? bx[1] - p.y : p.y > bx[4] ? p.y - bx[4] : 0;
        if (dy > within) continue;
        double dz = p.z < bx[2] ? bx[2] - p.z : p.z > bx[5] ? p.z - bx[5] : 0;
        double dist2 = dx * dx + dy * dy + dz * dz;
        if (dist2 > within * within) continue;
        if (m == CAND && dist2 >= cd[m - 1]) continue;
        int k = m < CAND ? m++ : m - 1;
        while (k > 0 && cd[k - 1] > dist2) {
            cd[k] = cd[k - 1], ci[k] = ci[k - 1];
            k--;
        }
        cd[k] = dist2, ci[k] = (uint32_t)b;
    }
    int out = 0;
    for (int c = 0; c < m && out < cap; c++) {
        const double *bx = a->boxes + 6 * ci[c];
        on_v3 nq = v3(p.x < bx[0] ? bx[0] : p.x > bx[3] ? bx[3] : p.x, p.y < bx[1] ? bx[1] : p.y > bx[4] ? bx[4] : p.y,
                      p.z < bx[2] ? bx[2] : p.z > bx[5] ? bx[5] : p.z);
        on_v3 nn;
        double dist = sqrt(cd[c]);
        if (dist > 0) nn = v3_scale(v3_sub(p, nq), 1.0 / dist);
        else {
            /* inside the box: out through the nearest face */
            double best = INFINITY;
            int ax = 0, side = 0;
            double pc[3] = {p.x, p.y, p.z};
            for (int i = 0; i < 3; i++) {
                if (pc[i] - bx[i] < best) best = pc[i] - bx[i], ax = i, side = 0;
                if (bx[3 + i] - pc[i] < best) best = bx[3 + i] - pc[i], ax = i, side = 1;
            }
            double e[3] = {0, 0, 0}, f[3] = {pc[0], pc[1], pc[2]};
            e[ax] = side ? 1 : -1;
            f[ax] = side ? bx[3 + ax] : bx[ax];
            nn = v3(e[0], e[1], e[2]);
            nq = v3(f[0], f[1], f[2]);
            dist = -best;
        }
        /* dropped when the box lies wholly behind a kept plane */
        int behind = 0;
        for (int k = 0; k < out && !behind; k++) {
            double s = 0;
            s += n[k].x * ((n[k].x > 0 ? bx[3] : bx[0]) - q[k].x);
            s += n[k].y * ((n[k].y > 0 ? bx[4] : bx[1]) - q[k].y);
            s += n[k].z * ((n[k].z > 0 ? bx[5] : bx[2]) - q[k].z);
            if (s <= 1e-12) behind = 1;
        }
        if (behind) continue;
        q[out] = nq, n[out] = nn, d[out] = dist;
        out++;
    }
    return out;
}
