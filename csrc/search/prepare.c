/*
 * prepare.c -- the box sets on the tree's side: building a box set (boxes.h) for each loaded tile
 * (on_tree_prepare), giving a tile a box set or a route planner's join set built elsewhere (a streamer
 * worker's), and the tree's hook that frees them (an unloaded tile's, every join set of a changed
 * tile, all with the tree). A tile's set is valid while its salt is the one the set records
 * (on_tile_boxes, boxes.h). Also the public read access to a tile's boxes in world space
 * (on_tree_tile_box_count, on_tree_tile_box).
 */
#include "boxes.h"

static void hook_touched(on_tree *t, uint32_t tile)
{
    on_tile *tl = &t->tiles[tile];
    if (!tl->loaded) { /* (a changed tile's box set is stale by its salt, an unloaded tile's freed) */
        on_boxset_free(tl->boxes);
        tl->boxes = NULL;
    }
    on_boxset_free(tl->joins); /* (the planner builds the blocks its joins reach instead) */
    tl->joins = NULL;
}
static void hook_drop(on_tree *t)
{
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_boxset_free(t->tiles[i].boxes);
        on_boxset_free(t->tiles[i].joins);
    }
}
static void hook_stats(const on_tree *t, on_tree_stats *st)
{
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_boxset *bs = on_tile_boxes(t, i);
        if (bs) {
            st->tiles_prepared++;
            st->boxes += bs->nbox;
            st->box_bytes += bs->bytes;
        }
    }
}
static const on_tree_hook boxes_hook = {NULL, hook_drop, hook_touched, hook_stats};

void on_tree_adopt_boxes(on_tree *t, uint32_t tile, on_boxset *s)
{
    if (on_tree_hook_add(t, &boxes_hook) != 0) { /* (the tile keeps none: searches use the cells) */
        on_boxset_free(s);
        s = NULL;
    } else {
        s->salt = t->tiles[tile].salt;
    }
    on_boxset_free(t->tiles[tile].boxes);
    t->tiles[tile].boxes = s;
}

void on_tree_adopt_joins(on_tree *t, uint32_t tile, on_boxset *s)
{
    if (on_tree_hook_add(t, &boxes_hook) != 0) { /* (the planner builds the blocks its joins reach) */
        on_boxset_free(s);
        s = NULL;
    } else {
        s->salt = t->tiles[tile].salt;
    }
    on_boxset_free(t->tiles[tile].joins);
    t->tiles[tile].joins = s;
}

size_t on_tree_joins_bytes(const on_tree *t, size_t *tiles)
{
    size_t bytes = 0, n = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_boxset *s = on_tile_joins(t, i);
        if (!s) continue;
        n++;
        bytes += s->bytes;
    }
    if (tiles) *tiles = n;
    return bytes;
}

/* One bitmap scratch for every tile built (allocated at the first tile that needs a set). */
on_status on_tree_prepare(on_tree *t, int64_t tile, size_t *boxes)
{
    if (boxes) *boxes = 0;
    if (!t || tile < -1 || tile >= (int64_t)t->ntiles) return ON_FAILURE | ON_INVALID;
    on_boxbits o = {NULL, 0, 0};
    uint32_t lo = tile < 0 ? 0 : (uint32_t)tile, hi = tile < 0 ? t->ntiles : (uint32_t)tile + 1;
    on_status st = ON_SUCCESS;
    for (uint32_t ti = lo; ti < hi; ti++) {
        if (!t->tiles[ti].loaded || on_tile_boxes(t, ti)) continue;
        if (!o.w && on_boxbits_alloc(&o, t->p.depth)) return ON_FAILURE | ON_NO_MEMORY;
        on_boxset *s;
        st = on_boxset_build_in(&t->tiles[ti].table, t->tiles[ti].solid, t->p.depth, &o, &s);
        if (on_failed(st)) break; /* the tile keeps no graph (its old one is stale): searches use cells */
        if (boxes) *boxes += s->nbox;
        on_tree_adopt_boxes(t, ti, s);
    }
    on_boxbits_free(&o);
    return st;
}

on_status on_tree_tile_box_count(const on_tree *t, uint32_t tile, uint32_t *n)
{
    *n = 0;
    const on_boxset *s = tile < t->ntiles ? on_tile_boxes(t, tile) : NULL;
    if (!s) return ON_FAILURE | ON_INVALID;
    *n = s->nbox;
    return ON_SUCCESS;
}

on_status on_tree_tile_box(const on_tree *t, uint32_t tile, uint32_t i, double min[3], double max[3],
                           const uint32_t **nbrs, uint32_t *nnbrs)
{
    const on_boxset *s = tile < t->ntiles ? on_tile_boxes(t, tile) : NULL;
    if (!s || i >= s->nbox) return ON_FAILURE | ON_INVALID;
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    for (int k = 0; k < 3; k++) {
        double org = (double)ijk[k] * t->n;
        min[k] = t->p.origin[k] + (org + s->box[i].mn[k]) * t->p.scale;
        max[k] = t->p.origin[k] + (org + s->box[i].mx[k]) * t->p.scale;
    }
    *nbrs = s->adj + s->adj_off[i];
    *nnbrs = s->adj_off[i + 1] - s->adj_off[i];
    return ON_SUCCESS;
}
