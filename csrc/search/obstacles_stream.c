/*
 * obstacles_stream.c -- temporary obstacles across a streamer's tile loads, the worker's part (see
 * obstacles.h): a copy of the obstacles covering a tile taken on the caller's thread when its load is
 * queued, applied to the decoded tile on the worker, and adopted as the tile's snapshot at the install
 * when the obstacles covering it are still those of the copy.
 */
#include "obstacles_records.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct on_obstacle_copy {
    size_t n;
    uint32_t *id;      /* the obstacles covering the tile, in the order added */
    double *box;       /* their inflated nav-space boxes: lo[3], hi[3] each */
};

void on_obstacles_copy_free(on_obstacle_copy *c)
{
    if (!c) return;
    free(c->id);
    free(c->box);
    free(c);
}

on_obstacle_copy *on_obstacles_copy_over(const on_tree *t, uint32_t tile)
{
    const struct on_obstacles *o = t->obstacles;
    size_t n = 0;
    for (size_t i = 0; o && i < o->n; i++) n += (size_t)on_obstacles_live_covers(t, o, i, tile);
    if (!n) return NULL;
    on_obstacle_copy *c = calloc(1, sizeof *c);
    if (c) {
        c->id = malloc(n * sizeof *c->id);
        c->box = malloc(6 * n * sizeof *c->box);
    }
    if (!c || !c->id || !c->box) {
        on_obstacles_copy_free(c);
        return NULL;
    }
    for (size_t i = 0; i < o->n; i++)
        if (on_obstacles_live_covers(t, o, i, tile)) {
            c->id[c->n] = o->ob[i].id;
            memcpy(c->box + 6 * c->n, o->ob[i].lo, sizeof o->ob[i].lo);
            memcpy(c->box + 6 * c->n + 3, o->ob[i].hi, sizeof o->ob[i].hi);
            c->n++;
        }
    return c;
}

int on_obstacles_apply_copy(on_tree *scratch, uint32_t tile, const on_obstacle_copy *c, on_table *tab, uint8_t *solid,
                            on_table *snap)
{
    if (on_table_copy(tab, snap) != 0) return -1;
    uint8_t solid0 = *solid;
    on_tree_install_tile(scratch, tile, tab, *solid); /* (takes the table) */
    int rc = 0;
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        on_obstacle b;
        memset(&b, 0, sizeof b);
        memcpy(b.lo, c->box + 6 * i, sizeof b.lo);
        memcpy(b.hi, c->box + 6 * i + 3, sizeof b.hi);
        if (on_failed(on_tree_insert_tile(scratch, tile, on_obstacles_classify, &b))) rc = -1;
    }
    on_tile *tl = &scratch->tiles[tile];
    if (rc == 0) {
        *tab = tl->table;
        *solid = tl->solid;
    } else { /* as it came: the snapshot's table */
        on_table_free(&tl->table);
        *tab = *snap;
        on_table_init(snap);
        *solid = solid0;
    }
    on_table_init(&tl->table);
    tl->solid = 0;
    return rc;
}

int on_obstacles_adopt(on_tree *t, uint32_t tile, const on_obstacle_copy *c, on_table *snap, uint8_t snap_solid)
{
    struct on_obstacles *o = t->obstacles;
    size_t k = 0;
    for (size_t i = 0; o && i < o->n; i++)
        if (on_obstacles_live_covers(t, o, i, tile) && (k >= c->n || c->id[k++] != o->ob[i].id)) return 0;
    if (!o || k != c->n) return 0;
    on_obstacle_snapshot *s = on_obstacles_find_snap(o, tile);
    if (!s) {
        if (on_grow((void **)&o->snap, &o->snapcap, o->nsnap + 1, sizeof *o->snap) != 0) return -1;
        s = &o->snap[o->nsnap++];
        s->tile = tile;
    } else {
        on_table_free(&s->table);
    }
    s->table = *snap;
    on_table_init(snap);
    s->nobs = k;
    s->solid = snap_solid;
    s->salt = t->tiles[tile].salt;
    return 1;
}
