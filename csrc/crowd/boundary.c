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
 * so a flat wall of many cubes is one half-space. After the boxes a read keeps their distances from
 * its centre (a summary in the same buffer), which let the half-spaces skip the boxes that cannot
 * lie within reach of the point asked, unread.
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

/* Node `code` of tile ti (stored, value v) with nav min corner lo and edge 2 half: its blocked children
 * that meet the cube, in child order (i = x | y << 1 | z << 2). The halves of each axis that meet the
 * cube are found once (from its lower half, k0, to k1), so only the children that meet it are
 * visited; a child's corner is its parent's plus half on the axes of its index (integers, exact in a
 * double: the same corners, tests and boxes as decoding each child's code). */
static void walk(bwalk *w, const on_table *tab, const double lo[3], uint32_t code, double half, int v)
{
    unsigned k0[3], k1[3];
    for (int k = 0; k < 3; k++) {
        double m = lo[k] + half;
        int low = lo[k] <= w->hi[k] && m >= w->lo[k], high = m <= w->hi[k] && m + half >= w->lo[k];
        if (!low && !high) return;
        k0[k] = low ? 0 : 1, k1[k] = high ? 1 : 0;
    }
    int leaves = on_code_layer(code) == 1;
    for (unsigned bz = k0[2]; bz <= k1[2]; bz++)
        for (unsigned by = k0[1]; by <= k1[1]; by++)
            for (unsigned bx = k0[0]; bx <= k1[0]; bx++) {
                if (w->oom) return;
                unsigned i = bx | by << 1 | bz << 2;
                double clo[3] = {bx ? lo[0] + half : lo[0], by ? lo[1] + half : lo[1], bz ? lo[2] + half : lo[2]};
                if (v & (1 << i)) {
                    double chi[3] = {clo[0] + half, clo[1] + half, clo[2] + half};
                    emit(w, clo, chi);
                    continue;
                }
                if (leaves) continue;
                uint32_t cc = on_code_child(code, i);
                int cv = on_table_get(tab, cc);
                if (cv >= 0) walk(w, tab, clo, cc, 0.5 * half, cv);
            }
}

/* The read's summary, after the last box when there is room: a box's 6 doubles (the distance from
 * the read's centre to the nearest box, the box count, which tells a summary from a stale box, and
 * the centre), then each box's distance from the centre. on_boundary_planes skips every box that
 * cannot lie within reach of p (its distance from the centre less the way from the centre to p) with
 * no read of the box, and all of them when the nearest cannot. */
static void summarise(on_agent *a, const double c[3])
{
    size_t need = a->nboxes + 1 + (a->nboxes + 5) / 6;
    if (a->boxes_cap < need) {
        double *b = realloc(a->boxes, need * 6 * sizeof *b);
        if (!b) return; /* (no room: no summary, every box read; a stale one cannot pass for it) */
        a->boxes = b;
        a->boxes_cap = need;
    }
    double *s = a->boxes + 6 * a->nboxes, *dc = s + 6;
    double near = INFINITY;
    for (size_t b = 0; b < a->nboxes; b++) {
        const double *bx = a->boxes + 6 * b;
        double d2 = 0;
        for (int i = 0; i < 3; i++) {
            double e = c[i] < bx[i] ? bx[i] - c[i] : c[i] > bx[3 + i] ? c[i] - bx[3 + i] : 0;
            d2 += e * e;
        }
        dc[b] = sqrt(d2);
        near = dc[b] < near ? dc[b] : near;
    }
    s[0] = near, s[1] = (double)a->nboxes, s[2] = c[0], s[3] = c[1], s[4] = c[2], s[5] = 0;
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
                    if (v >= 0) walk(&w, &tl->table, base, root, 0.5 * (double)on_code_size(root), v);
                }
    }
    if (w.oom) {
        a->nboxes = 0;
        return -1;
    }
    summarise(a, p);
    a->bound_at = a->pos;
    a->bound_reach = reach;
    a->bound_rev = on_tree_revision(t);
    a->bound_valid = 1;
    return 0;
}

/* Candidate order: nearer first, ties by box order (what an insertion sort by distance kept). */
static int cand_less(const double *cd, const uint32_t *ci, int i, int j)
{
    return cd[i] < cd[j] || (cd[i] == cd[j] && ci[i] < ci[j]);
}

/* Sift entry i down a max-heap of m in candidate order (top: the farthest, the last in box order). */
static void cand_sift(double *cd, uint32_t *ci, int m, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, t = i;
        if (l < m && cand_less(cd, ci, t, l)) t = l;
        if (r < m && cand_less(cd, ci, t, r)) t = r;
        if (t == i) return;
        double td = cd[i];
        uint32_t tc = ci[i];
        cd[i] = cd[t], ci[i] = ci[t];
        cd[t] = td, ci[t] = tc;
        i = t;
    }
}

/* Is box bx wholly behind the plane through q facing n? */
static int box_behind(const double *bx, on_v3 q, on_v3 n)
{
    double s = 0;
    s += n.x * ((n.x > 0 ? bx[3] : bx[0]) - q.x);
    s += n.y * ((n.y > 0 ? bx[4] : bx[1]) - q.y);
    s += n.z * ((n.z > 0 ? bx[5] : bx[2]) - q.z);
    return s <= 1e-12;
}

int on_boundary_planes(const on_agent *a, on_v3 p, double within, on_v3 *q, on_v3 *n, double *d, int cap)
{
    /* The candidates within reach, the CAND nearest (ties in box order): gathered as they come, past
     * CAND in a max-heap that keeps the nearest. Then taken nearest first: each box makes a plane
     * unless it lies wholly behind the plane of a nearer box kept. A box is dropped from the
     * candidates as soon as a plane it lies behind is kept (the plane of a nearer box: the same boxes
     * dropped as when each box, in order, is tested against the planes kept before it), so the many
     * cubes of a wall behind its nearest plane are tested once and never ordered. */
    const double *dc = NULL;
    double moved = 0, lim = within;
    if (a->nboxes > 0 && a->boxes_cap >= a->nboxes + 1 + (a->nboxes + 5) / 6) {
        /* a box no nearer the read's centre than within plus the way from it to p (by a margin far
         * above rounding, so that its distance below would not have been within) is skipped unread */
        const double *s = a->boxes + 6 * a->nboxes;
        if (s[1] == (double)a->nboxes) {
            double ox = p.x - s[2], oy = p.y - s[3], oz = p.z - s[4];
            moved = sqrt(ox * ox + oy * oy + oz * oz);
            lim = within + 1e-9 * (within + 1 + fabs(s[2]) + fabs(s[3]) + fabs(s[4]));
            if (s[0] - moved > lim) return 0;
            dc = s + 6;
        }
    }
    int m = 0;
    enum { CAND = 4 * ON_CROWD_MAX_WALLS };
    double cd[CAND];
    uint32_t ci[CAND];
    double w2 = within * within;
    for (size_t b = 0; b < a->nboxes; b++) {
        if (dc && dc[b] - moved > lim) continue;
        const double *bx = a->boxes + 6 * b;
        /* (an axis alone farther than within: out, before the others are read) */
        double dx = p.x < bx[0] ? bx[0] - p.x : p.x > bx[3] ? p.x - bx[3] : 0;
        if (dx > within) continue;
        double dy = p.y < bx[1] ? bx[1] - p.y : p.y > bx[4] ? p.y - bx[4] : 0;
        if (dy > within) continue;
        double dz = p.z < bx[2] ? bx[2] - p.z : p.z > bx[5] ? p.z - bx[5] : 0;
        double dist2 = dx * dx + dy * dy + dz * dz;
        if (dist2 > w2) continue;
        if (m < CAND) {
            cd[m] = dist2, ci[m] = (uint32_t)b;
            if (++m == CAND)
                for (int i = CAND / 2 - 1; i >= 0; i--) cand_sift(cd, ci, CAND, i);
            continue;
        }
        if (dist2 >= cd[0]) continue; /* no nearer than the farthest kept (and later in box order) */
        cd[0] = dist2, ci[0] = (uint32_t)b;
        cand_sift(cd, ci, CAND, 0);
    }
    int out = 0;
    while (m > 0 && out < cap) {
        int c = 0;
        for (int i = 1; i < m; i++)
            if (cand_less(cd, ci, i, c)) c = i;
        const double *bx = a->boxes + 6 * ci[c];
        double dist = sqrt(cd[c]);
        m--;
        cd[c] = cd[m], ci[c] = ci[m]; /* (the order left does not matter: the nearest is looked for) */
        on_v3 nq = v3(p.x < bx[0] ? bx[0] : p.x > bx[3] ? bx[3] : p.x, p.y < bx[1] ? bx[1] : p.y > bx[4] ? bx[4] : p.y,
                      p.z < bx[2] ? bx[2] : p.z > bx[5] ? bx[5] : p.z);
        on_v3 nn;
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
        q[out] = nq, n[out] = nn, d[out] = dist;
        out++;
        /* the boxes wholly behind it: dropped */
        for (int i = 0; i < m; i++)
            if (box_behind(a->boxes + 6 * ci[i], nq, nn)) {
                m--;
                cd[i] = cd[m], ci[i] = ci[m];
                i--;
            }
    }
    return out;
}
