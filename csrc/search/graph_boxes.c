/*
 * graph_boxes.c -- the search graph of prepared boxes (graph.h, boxes.h): nodes are the boxes of
 * tiles' box sets (code: the box's index), joined by each tile's adjacency lists and, across tile
 * faces, by the facing boxes of the next tile; a box is entered where the line from the point before
 * to the goal (mirrored when both lie on one side of it) crosses the face they share, clamped onto it:
 * a rougher estimate than a cell's face centre but one that follows the goal through large boxes.
 */
#include "graph.h"
#include "util.h"

#include <math.h>

static void boxes_region(on_graph *g, on_cell c, double mn[3], double mx[3], double *size)
{
    on_graph_tile(g, c.tile);
    const on_box *b = &g->org_set->box[c.code];
    double s = INFINITY;
    for (int k = 0; k < 3; k++) {
        mn[k] = g->org[k] + b->mn[k];
        mx[k] = g->org[k] + b->mx[k];
        if (mx[k] - mn[k] < s) s = mx[k] - mn[k];
    }
    *size = s;
}

static void boxes_local(on_graph *g, on_cell c, uint32_t lo[3], uint32_t hi[3])
{
    const on_box *b = &on_tile_boxes(g->t, c.tile)->box[c.code];
    for (int k = 0; k < 3; k++) {
        lo[k] = b->mn[k];
        hi[k] = b->mx[k];
    }
}

/* Box c's tile's adjacency list, and across each tile face it touches the boxes of the next tile's
 * facing side that share a face with it (from the group of c's block). */
static on_status boxes_neighbors(on_graph *g, on_cell c, size_t *count)
{
    const on_tree *t = g->t;
    const on_boxset *s = on_tile_boxes(t, c.tile);
    if (!s) {
        g->fallback_tile = c.tile;
        return ON_FALLBACK;
    }
    const on_box *b = &s->box[c.code];
    uint32_t a0 = s->adj_off[c.code], a1 = s->adj_off[c.code + 1];
    size_t n = 0;
    if (on_graph_nb_reserve(g, a1 - a0) != 0) return ON_FAILURE | ON_NO_MEMORY;
    for (uint32_t i = a0; i < a1; i++) g->nb[n++] = (on_cell){c.tile, s->adj[i]};
    for (int face = 0; face < 6; face++) {
        int axis = face >> 1, dir = face & 1;
        if (dir ? b->mx[axis] != (uint32_t)t->n : b->mn[axis] != 0) continue;
        int64_t ti = on_tile_beyond(t, c.tile, face);
        if (ti < 0) continue;
        const on_boxset *o = on_tile_boxes(t, (uint32_t)ti);
        if (!o) {
            if (!t->tiles[ti].loaded) continue; /* (on_graph_unloaded_beyond made the search wait for it) */
            g->fallback_tile = (uint32_t)ti;
            return ON_FALLBACK;
        }
        if (on_tileset_touch(g->touched, t, (uint32_t)ti) != 0) return ON_FAILURE | ON_NO_MEMORY; /* its boxes are read */
        int f = face ^ 1; /* the facing side */
        uint32_t grp = on_boxset_face_group(o, f, b);
        for (uint32_t i = o->face_off[f][grp]; i < o->face_off[f][grp + 1]; i++) {
            uint32_t j = o->face[f][i];
            if (!on_box_overlap2(b, &o->box[j], axis)) continue;
            if (on_graph_nb_reserve(g, n + 1) != 0) return ON_FAILURE | ON_NO_MEMORY;
            g->nb[n++] = (on_cell){(uint32_t)ti, j};
        }
    }
    *count = n;
    return ON_SUCCESS;
}

/* The box of cell's tile holding p; 0 when the tile has no valid box set. */
static int boxes_locate(on_graph *g, on_cell cell, const double p[3], on_cell *out)
{
    on_graph_tile(g, cell.tile);
    if (!g->org_set) return 0;
    double local[3] = {p[0] - g->org[0], p[1] - g->org[1], p[2] - g->org[2]};
    int64_t i = on_boxset_locate(g->org_set, local);
    if (i < 0) return 0;
    out->tile = cell.tile;
    out->code = (uint32_t)i;
    return 1;
}

/* Where a path from `from` towards the goal enters the face u and v share: where the line from `from`
 * to the goal, mirrored in the face's plane when both lie on one side of it, crosses that plane,
 * clamped onto the face (the shortest string that touches the plane there). Before, a goal on from's
 * side (the path runs along a wall it has to wrap and comes back) gave the point of the face nearest
 * `from`: a string that doubles back, so boxes beside such a wall looked further than they were. The
 * exact best point of the face (facepoint.h's, bending round the face's edge when the crossing lies
 * beyond it) kept every p99 length ratio under 0.995 on 6 samples of 300, with the search rule of
 * README "Prepared graph", but made the -P medians 7-11 % higher than before, where this one with that
 * rule made them 0-6 % higher (a square root pair and a second division on the path of every neighbour). */
static void boxes_entry(const double from[3], const double umn[3], const double umx[3], const double vmn[3],
                        const double vmx[3], const double goal[3], double out[3])
{
    double lo[3], hi[3];
    int ax = 0;
    for (int k = 0; k < 3; k++) {
        lo[k] = on_maxf(umn[k], vmn[k]);
        hi[k] = on_minf(umx[k], vmx[k]);
        if (lo[k] == hi[k]) ax = k; /* the face's axis (the regions overlap on the other two) */
    }
    double da = fabs(from[ax] - lo[ax]), dc = fabs(goal[ax] - lo[ax]);
    double t = da + dc > 0 ? da / (da + dc) : 0;
    for (int k = 0; k < 3; k++) out[k] = on_clampf(from[k] + t * (goal[k] - from[k]), lo[k], hi[k]);
    out[ax] = lo[ax];
}

const on_graph_ops on_graph_boxes_ops = {boxes_region, boxes_local, boxes_neighbors, boxes_locate, boxes_entry, 1};
