/*
 * graph_test.h -- helpers shared by the tile graph and world graph tests (test_portals.c,
 * test_route.c, test_route_joins.c, test_reach_resume.c, test_route_deadline.c): a seeded xorshift,
 * trees of n tiles, boxes, a world graph of every tile's graph, the closed room whose only exit is a
 * corridor to the far side of its tile, a sealed shell, random boxes, point distance, two route results compared;
 * the reference: every free leaf of a tree as a lattice and a 26-connected Dijkstra over it without
 * corner cutting.
 */
#ifndef OCTONAV_GRAPH_TEST_H
#define OCTONAV_GRAPH_TEST_H

#include "octonav.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64: uniform in [0, 1), state *s (never 0). */
static inline double gt_rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A tree of nx x ny x nz tiles of 2^depth leaves, scale 1 at the origin. */
static inline on_tree *gt_tree(int nx, int ny, int nz, int depth)
{
    on_tree_params p = {{nx, ny, nz}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    on_tree_create(&p, &t);
    return t;
}

static inline void gt_box(on_tree *t, double x0, double y0, double z0, double x1, double y1, double z1)
{
    double a[3] = {x0, y0, z0}, b[3] = {x1, y1, z1};
    on_tree_add_box(t, a, b);
}

/* A tree of tx x 1 x tz tiles of 2^depth leaves with nbox random boxes of sides 1..maxside, drawn
 * from the xorshift state *s (test_reach_resume.c, test_route_deadline.c). */
static inline on_tree *gt_random_world(int tx, int tz, int depth, int nbox, int maxside, uint64_t *s)
{
    on_tree *t = gt_tree(tx, 1, tz, depth);
    int n = 1 << depth, X = tx * n, Y = n, Z = tz * n;
    for (int i = 0; i < nbox; i++) {
        double a[3] = {floor(gt_rnd(s) * X), floor(gt_rnd(s) * Y), floor(gt_rnd(s) * Z)};
        gt_box(t, a[0], a[1], a[2], a[0] + 1 + floor(gt_rnd(s) * maxside), a[1] + 1 + floor(gt_rnd(s) * maxside),
               a[2] + 1 + floor(gt_rnd(s) * maxside));
    }
    return t;
}

/* A world graph with every tile's graph (a tile whose graph fails to build is left out). */
static inline on_wgraph *gt_world_of(const on_tree *t)
{
    on_wgraph *w = NULL;
    on_wgraph_create(on_tree_get_params(t), &w);
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_tgraph *g = NULL;
        if (on_ok(on_tgraph_build_tile(t, i, NULL, &g))) on_wgraph_add_tile(w, i, g);
    }
    return w;
}

/* In the first 16-leaf tile: room [1,7)^3 in walls [0,8)^3, its only hole at y, z in [3,5) on +x, a
 * walled corridor from there to x = 16 (the tile's far face). */
static inline void gt_closed_room(on_tree *t)
{
    gt_box(t, 0, 0, 0, 1, 8, 8);
    gt_box(t, 0, 0, 0, 8, 1, 8);
    gt_box(t, 0, 7, 0, 8, 8, 8);
    gt_box(t, 0, 0, 0, 8, 8, 1);
    gt_box(t, 0, 0, 7, 8, 8, 8);
    gt_box(t, 7, 0, 0, 8, 3, 8);
    gt_box(t, 7, 5, 0, 8, 8, 8);
    gt_box(t, 7, 3, 0, 8, 5, 3);
    gt_box(t, 7, 3, 5, 8, 5, 8);
    gt_box(t, 8, 2, 2, 16, 3, 6);
    gt_box(t, 8, 5, 2, 16, 6, 6);
    gt_box(t, 8, 2, 2, 16, 6, 3);
    gt_box(t, 8, 2, 5, 16, 6, 6);
}

/* A sealed hollow shell: the pocket [x0, x1) x [y0, y1) x [z0, z1) inside walls one leaf thick. */
static inline void gt_shell(on_tree *t, double x0, double y0, double z0, double x1, double y1, double z1)
{
    gt_box(t, x0 - 1, y0 - 1, z0 - 1, x1 + 1, y0, z1 + 1);
    gt_box(t, x0 - 1, y1, z0 - 1, x1 + 1, y1 + 1, z1 + 1);
    gt_box(t, x0 - 1, y0 - 1, z0 - 1, x0, y1 + 1, z1 + 1);
    gt_box(t, x1, y0 - 1, z0 - 1, x1 + 1, y1 + 1, z1 + 1);
    gt_box(t, x0 - 1, y0 - 1, z0 - 1, x1 + 1, y1 + 1, z0);
    gt_box(t, x0 - 1, y0 - 1, z1, x1 + 1, y1 + 1, z1 + 1);
}

static inline double gt_dist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* ---- reference: the whole cell graph ---------------------------------------------------------- */

typedef struct gt_lattice {
    int d[3];
    uint8_t *free;
} gt_lattice;

static inline gt_lattice gt_lattice_of(const on_tree *t)
{
    gt_lattice L;
    for (int k = 0; k < 3; k++) L.d[k] = t->p.tiles[k] << t->p.depth;
    size_t N = (size_t)L.d[0] * L.d[1] * L.d[2];
    L.free = malloc(N);
    for (int z = 0; z < L.d[2]; z++)
        for (int y = 0; y < L.d[1]; y++)
            for (int x = 0; x < L.d[0]; x++)
                L.free[x + (size_t)L.d[0] * (y + (size_t)L.d[1] * z)] = (uint8_t)on_tree_leaf_free(t, x, y, z, NULL);
    return L;
}

static inline int gt_lfree(const gt_lattice *L, int x, int y, int z)
{
    if (x < 0 || y < 0 || z < 0 || x >= L->d[0] || y >= L->d[1] || z >= L->d[2]) return 0;
    return L->free[x + (size_t)L->d[0] * (y + (size_t)L->d[1] * z)];
}

/* 26-connected Dijkstra (a move's spanned box all free) from leaf s; dist per leaf (HUGE_VAL unreached).
 * 26-connected without corner cutting reaches exactly what 6-connected does. With goal (a leaf), it
 * stops when the goal's distance is final (other entries are then upper bounds) and returns it; the
 * moves are relaxed in the same order either way, so dist[goal] is the same to the bit. Each move's box
 * is a list of index offsets made once (the move's target last), checked after one range test of the
 * target: test_route's pairs spent 94 % of its time here with a bounds test per leaf of every box. */
static inline double gt_dijkstra_to(const gt_lattice *L, const int s[3], const int *goal, double *dist)
{
    const int d0 = L->d[0], d1 = L->d[1], d2 = L->d[2];
    const ptrdiff_t sy = d0, sz = (ptrdiff_t)d0 * d1;
    struct {
        int dx, dy, dz, n;
        double len;
        ptrdiff_t off[7];
    } mv[26];
    int m = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (!dx && !dy && !dz) continue;
                mv[m].dx = dx, mv[m].dy = dy, mv[m].dz = dz, mv[m].n = 0;
                mv[m].len = sqrt((double)(dx * dx + dy * dy + dz * dz));
                for (int z = 0; z <= abs(dz); z++)
                    for (int y = 0; y <= abs(dy); y++)
                        for (int x = 0; x <= abs(dx); x++)
                            if (x || y || z)
                                mv[m].off[mv[m].n++] = (dx < 0 ? -x : x) + sy * (dy < 0 ? -y : y) + sz * (dz < 0 ? -z : z);
                m++;
            }
    size_t N = (size_t)d0 * d1 * d2, cap = N * 27 + 1, hn = 0;
    for (size_t i = 0; i < N; i++) dist[i] = HUGE_VAL;
    double *hk = malloc(cap * sizeof *hk);
    size_t *hv = malloc(cap * sizeof *hv);
    size_t si = s[0] + (size_t)d0 * (s[1] + (size_t)d1 * s[2]);
    size_t gi = goal ? goal[0] + (size_t)d0 * (goal[1] + (size_t)d1 * goal[2]) : (size_t)-1;
    dist[si] = 0;
    hk[0] = 0;
    hv[0] = si;
    hn = 1;
    while (hn) {
        double key = hk[0];
        size_t b = hv[0];
        hn--;
        size_t i = 0;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= hn) break;
            if (c + 1 < hn && hk[c + 1] < hk[c]) c++;
            if (hk[c] >= hk[hn]) break;
            hk[i] = hk[c];
            hv[i] = hv[c];
            i = c;
        }
        hk[i] = hk[hn];
        hv[i] = hv[hn];
        if (key > dist[b]) continue;
        if (b == gi) break;
        int bx = (int)(b % d0), by = (int)((b / d0) % d1), bz = (int)(b / ((size_t)d0 * d1));
        const uint8_t *f = L->free + b;
        for (int k = 0; k < 26; k++) {
            int x = bx + mv[k].dx, y = by + mv[k].dy, z = bz + mv[k].dz;
            if (x < 0 || y < 0 || z < 0 || x >= d0 || y >= d1 || z >= d2) continue;
            int ok = 1;
            for (int e = 0; e < mv[k].n && ok; e++) ok = f[mv[k].off[e]];
            if (!ok) continue;
            size_t j = (size_t)((ptrdiff_t)b + mv[k].off[mv[k].n - 1]);
            double nd = key + mv[k].len;
            if (nd >= dist[j]) continue;
            dist[j] = nd;
            size_t y2 = hn++;
            while (y2 > 0 && hk[(y2 - 1) / 2] > nd) {
                hk[y2] = hk[(y2 - 1) / 2];
                hv[y2] = hv[(y2 - 1) / 2];
                y2 = (y2 - 1) / 2;
            }
            hk[y2] = nd;
            hv[y2] = j;
        }
    }
    free(hk);
    free(hv);
    return gi != (size_t)-1 ? dist[gi] : 0;
}

static inline void gt_dijkstra(const gt_lattice *L, const int s[3], double *dist) { gt_dijkstra_to(L, s, NULL, dist); }

/* Two planners' results the same, bit for bit: status, cost, length, expansions, join boxes and the
 * n crossings (tile, portal, point) of each (test_route_joins.c, test_reach_resume.c,
 * test_route_deadline.c: a whole call against the same work in slices). */
static inline int gt_same_route(on_status sa, const on_route_info *ia, const on_route_cross *ca, size_t na,
                                on_status sb, const on_route_info *ib, const on_route_cross *cb, size_t nb)
{
    if (sa != sb || na != nb || ia->cost != ib->cost || ia->length != ib->length ||
        ia->expansions != ib->expansions || ia->join_boxes != ib->join_boxes)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (ca[i].tile != cb[i].tile || ca[i].portal != cb[i].portal ||
            memcmp(ca[i].point, cb[i].point, sizeof ca[i].point) != 0)
            return 0;
    return 1;
}

#endif
