/*
 * graph_areas.c -- the search graph of free cells split at the faces of a search's areas (graph.h,
 * areas.h): a free cell that an area holds in part (on_areaset_splits) is replaced by its 8 children,
 * again and again down to single leaves, so that the nodes an area touches are (as far as the leaf
 * lattice allows) wholly inside or wholly outside it and a search can go round an area even inside
 * one large free cell. Nodes are cubes of the tree's tiles (tile, code), real free cells or cubes
 * inside one; neighbours across a face are found from the real cells on the other side (the tree's
 * face neighbours, or the same free cell) by descending their splits to the cubes that touch the
 * face. Only searches with areas use it; region, entry and the rest are the cells' own.
 * A search for an agent of radius R leaves (g->radius, issue 33) runs over it too: a cube not usable at
 * R (some leaf within R of it blocked: clearance.h) is split the same way, and a single leaf not usable
 * is no node at all, so every node is a cube whose points all lie at least R from blocked space. (The
 * nodes are the free cells' largest usable cubes, the same leaves as the cells of a tree baked with
 * blocked space grown by R, cut at this tree's cells.)
 */
#include "areas.h"
#include "clearance.h"
#include "graph.h"
#include "util.h"

#include <stdlib.h>

typedef struct cube {
    int64_t m[3], s; /* global min corner and edge, in leaves */
} cube;

static void cube_of(const on_tree *t, on_cell c, cube *q) { on_tree_cell_nav(t, c, q->m, &q->s); }

/* The answers of on_tree_cube_clear a search found, by cube (tile, code): a search asks about the same
 * cubes again and again (every neighbour list inside one large free cell descends its splits from the
 * top). Direct-mapped; an entry is valid for the search (memo_gen) that wrote it. Without it the box
 * tests were 60 % of a radius-1 query's instructions on DC1 (callgrind, 40 scenarios of bench/radius).
 * 2^14 entries (213 KB a radius query, allocated by its first radius search): the dungeon's 20 walks at
 * r 0.5 (bench/onetree.lua's pairs, one tree) take 1,841 M instructions with 2^12, 1,621 M with 2^14,
 * 1,560 M with 2^15, 1,534 M with 2^16 (callgrind, whole process). */
#define MEMO_BITS 14
struct on_clearmemo {
    uint64_t key[1 << MEMO_BITS];
    uint32_t gen[1 << MEMO_BITS];
    uint8_t clear[1 << MEMO_BITS];
};

static int cube_clear(on_graph *g, on_cell c, const cube *q)
{
    if (!g->memo) {
        g->memo = calloc(1, sizeof *g->memo); /* (none: every answer computed) */
        if (!g->memo) return on_tree_cube_clear(g->t, g->lc, q->m, q->s, g->radius);
    }
    uint64_t key = (uint64_t)c.tile << 32 | c.code;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - MEMO_BITS));
    struct on_clearmemo *m = g->memo;
    if (m->gen[i] == g->memo_gen && m->key[i] == key) return m->clear[i];
    int v = on_tree_cube_clear(g->t, g->lc, q->m, q->s, g->radius);
    m->key[i] = key;
    m->gen[i] = g->memo_gen;
    m->clear[i] = (uint8_t)v;
    return v;
}

/* 1 when cube q (node c) is split into its 8 children; 0 when it is a node; -1 when it is neither (a
 * leaf not usable at the radius). */
static int split(on_graph *g, on_cell c, const cube *q)
{
    double m[3] = {(double)q->m[0], (double)q->m[1], (double)q->m[2]};
    if (q->s > 1 && on_areaset_splits(g->areas, m, (double)q->s)) return 1;
    if (g->radius && !cube_clear(g, c, q)) return q->s > 1 ? 1 : -1;
    return 0;
}

static int push(on_graph *g, size_t *n, on_cell c)
{
    if (on_graph_nb_reserve(g, *n + 1) != 0) return -1;
    g->nb[(*n)++] = c;
    return 0;
}

/* The nodes of cell c's splits that touch the plane axis = plane from the side dir (+1: they start
 * at the plane; -1: they end there) over the rectangle lo..hi of the other two axes with positive
 * area, into g->nb. -1 on allocation failure. */
static int adjacent(on_graph *g, on_cell c, int axis, int64_t plane, int dir, const int64_t lo[2], const int64_t hi[2],
                    size_t *n)
{
    cube q;
    cube_of(g->t, c, &q);
    int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    if (!(q.m[a1] < hi[0] && q.m[a1] + q.s > lo[0] && q.m[a2] < hi[1] && q.m[a2] + q.s > lo[1])) return 0;
    int64_t b0 = q.m[axis], b1 = b0 + q.s;
    if (dir > 0 ? (b1 <= plane || b0 > plane) : (b0 >= plane || b1 < plane)) return 0;
    int touching = dir > 0 ? b0 == plane : b1 == plane;
    int sp = split(g, c, &q);
    if (sp < 0) return 0;
    if (touching && !sp) return push(g, n, c);
    if (!sp) return 0; /* (a node across the plane would hold the node asked about: not one) */
    for (unsigned i = 0; i < 8; i++)
        if (adjacent(g, (on_cell){c.tile, on_code_child(c.code, i)}, axis, plane, dir, lo, hi, n) != 0) return -1;
    return 0;
}

/* Room for n real neighbours and their faces; -1 on allocation failure. */
static int reserve_real(on_graph *g, size_t n)
{
    if (n <= g->rcap) return 0;
    size_t cap = n < 64 ? 64 : 2 * n;
    on_cell *a = realloc(g->rnb, cap * sizeof *a);
    if (!a) return -1;
    g->rnb = a;
    uint8_t *f = realloc(g->rfaces, cap);
    if (!f) return -1;
    g->rfaces = f;
    g->rcap = cap;
    return 0;
}

static on_status ac_neighbors(on_graph *g, on_cell c, size_t *count)
{
    const on_tree *t = g->t;
    cube x, f;
    cube_of(t, c, &x);
    on_cell fc; /* the free cell holding c */
    if (!on_tree_leaf_free_cached(t, g->lc, x.m[0], x.m[1], x.m[2], &fc)) return ON_FAILURE | ON_INVALID;
    cube_of(t, fc, &f);
    size_t nr;
    for (;;) { /* the free cell's own neighbours, with their faces */
        on_status s = on_tree_neighbors_cached(t, g->lc, fc, g->rnb, g->rfaces, g->rcap, &nr);
        if (on_ok(s)) break;
        if (reserve_real(g, nr) != 0) return ON_FAILURE | ON_NO_MEMORY;
    }
    size_t n = 0;
    for (int face = 0; face < 6; face++) {
        int axis = face >> 1, dir = (face & 1) ? 1 : -1, a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
        int64_t plane = dir > 0 ? x.m[axis] + x.s : x.m[axis];
        int64_t lo[2] = {x.m[a1], x.m[a2]}, hi[2] = {x.m[a1] + x.s, x.m[a2] + x.s};
        if (plane != (dir > 0 ? f.m[axis] + f.s : f.m[axis])) { /* inside its free cell */
            if (adjacent(g, fc, axis, plane, dir, lo, hi, &n) != 0) return ON_FAILURE | ON_NO_MEMORY;
            continue;
        }
        for (size_t i = 0; i < nr; i++)
            if (g->rfaces[i] == face && adjacent(g, g->rnb[i], axis, plane, dir, lo, hi, &n) != 0)
                return ON_FAILURE | ON_NO_MEMORY;
    }
    *count = n;
    return ON_SUCCESS;
}

/* The node holding p inside free cell `cell`: down its splits (0: none, p's leaf is not usable at the
 * radius). */
static int ac_locate(on_graph *g, on_cell cell, const double p[3], on_cell *out)
{
    cube q;
    cube_of(g->t, cell, &q);
    int sp;
    while ((sp = split(g, cell, &q)) > 0) {
        int64_t h = q.s / 2;
        unsigned i = 0;
        for (int k = 0; k < 3; k++)
            if (p[k] >= (double)(q.m[k] + h)) {
                i |= 1u << k;
                q.m[k] += h;
            }
        q.s = h;
        cell.code = on_code_child(cell.code, i);
    }
    *out = cell;
    return sp == 0;
}

static void ac_region(on_graph *g, on_cell c, double mn[3], double mx[3], double *size)
{
    on_graph_cells_ops.region(g, c, mn, mx, size);
}

static void ac_local(on_graph *g, on_cell c, uint32_t lo[3], uint32_t hi[3]) { on_graph_cells_ops.local(g, c, lo, hi); }

static void ac_entry(const double from[3], const double umn[3], const double umx[3], const double vmn[3],
                     const double vmx[3], const double goal[3], double out[3])
{
    on_graph_cells_ops.entry(from, umn, umx, vmn, vmx, goal, out);
}

const on_graph_ops on_graph_area_cells_ops = {ac_region, ac_local, ac_neighbors, ac_locate, ac_entry, 0};
