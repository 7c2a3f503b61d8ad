/*
 * obstacles.c -- temporary obstacles (octonav.h, "temporary obstacles"): boxes blocked until removed.
 *
 * The tree keeps, for every loaded tile an obstacle in place overlaps, a snapshot of the tile as it
 * was before the first of them (its node table copied slot for slot, and its solid flag) and the salt
 * the tile had after the last obstacle operation on it. Removing an obstacle rebuilds each of its
 * tiles from the snapshot and inserts the obstacles still covering it again, in the order they were
 * added, into that tile alone: the same contents, byte for byte, as if the removed one had never been
 * added. A tile whose salt moved on by other means (an edit, clear, reload or unload) is snapshotted
 * again as it is then, so what it holds is never lost. Tiles that had a valid prepared graph before a
 * change are prepared again after it.
 *
 * An obstacle covers every tile its inflated box touches (on_tree_tile_range), loaded or not: a tile
 * the streamer installs is snapshotted as read from its file and the obstacles covering it are
 * blocked in it, in order: on the worker (on_obstacles_copy_over when the load is queued,
 * on_obstacles_apply_copy on the worker, on_obstacles_adopt at the install when they are still the
 * same) or at the install (on_obstacles_tile_loaded); on_obstacles_tile_unloaded drops an unloaded
 * tile's snapshot. So an obstacle survives its tiles streaming out and in, and removing it gives back
 * the bytes the file held.
 */
#include "tree.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct snapshot {
    uint32_t tile;
    uint32_t salt;     /* the tile's salt after the last obstacle operation on it */
    uint8_t solid;
    on_table table;    /* the contents before the first obstacle */
} snapshot;

typedef struct obstacle {
    uint32_t id;
    double wmin[3], wmax[3]; /* as given (world) */
    double lo[3], hi[3];     /* nav space, inflated by the radius */
    int a[3], z[3];          /* the tiles it covers: a..z on each axis (on_tree_tile_range) */
    int any;                 /* 0 when wholly outside the grid (it covers no tile) */
} obstacle;

struct on_obstacles {
    obstacle *ob;
    size_t n, cap;
    snapshot *snap;
    size_t nsnap, snapcap;
    uint32_t next_id;
};

/* ---- helpers ----------------------------------------------------------------------------------- */

/* The rule of on_tree_add_box (on_box_classify, geometry.c). */
static int classify(void *ud, const double m[3], double s)
{
    const obstacle *b = ud;
    return on_box_classify(b->lo, b->hi, m, s);
}

static snapshot *find_snap(struct on_obstacles *o, uint32_t tile)
{
    for (size_t i = 0; i < o->nsnap; i++)
        if (o->snap[i].tile == tile) return &o->snap[i];
    return NULL;
}

static void drop_snap(struct on_obstacles *o, snapshot *s)
{
    on_table_free(&s->table);
    *s = o->snap[--o->nsnap];
}

static int covers(const on_tree *t, const obstacle *b, uint32_t tile)
{
    if (!b->any) return 0;
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    for (int k = 0; k < 3; k++)
        if (ijk[k] < b->a[k] || ijk[k] > b->z[k]) return 0;
    return 1;
}

/* Does an obstacle in place cover the tile? */
static int covered(const on_tree *t, const struct on_obstacles *o, uint32_t tile)
{
    for (size_t i = 0; i < o->n; i++)
        if (covers(t, &o->ob[i], tile)) return 1;
    return 0;
}

/* The tile's snapshot, made now when it has none or when the tile changed by other means since the
 * last obstacle operation (then it holds what the tile holds now). NULL on allocation failure. */
static snapshot *snap_for(on_tree *t, struct on_obstacles *o, uint32_t tile)
{
    snapshot *s = find_snap(o, tile);
    on_tile *tl = &t->tiles[tile];
    if (s && s->salt == tl->salt) return s;
    on_table copy;
    if (on_table_copy(&tl->table, &copy) != 0) return NULL;
    if (!s) {
        if (on_grow((void **)&o->snap, &o->snapcap, o->nsnap + 1, sizeof *o->snap) != 0) {
            on_table_free(&copy);
            return NULL;
        }
        s = &o->snap[o->nsnap++];
        s->tile = tile;
    } else {
        on_table_free(&s->table);
    }
    s->table = copy;
    s->solid = tl->solid;
    s->salt = tl->salt;
    return s;
}

/* Tile `tile` rebuilt: its snapshot, then every obstacle in place covering it, in order; prepared
 * again when it was. -1 on allocation failure. */
static int rebuild(on_tree *t, struct on_obstacles *o, snapshot *s)
{
    uint32_t tile = s->tile;
    int prepared = on_tile_boxes(t, tile) != NULL;
    on_table copy;
    if (on_table_copy(&s->table, &copy) != 0) return -1;
    on_tree_install_tile(t, tile, &copy, s->solid);
    int rc = 0;
    for (size_t i = 0; i < o->n && rc == 0; i++)
        if (covers(t, &o->ob[i], tile) && on_failed(on_tree_insert_tile(t, tile, classify, &o->ob[i]))) rc = -1;
    if (prepared && on_failed(on_tree_prepare(t, tile, NULL))) rc = -1;
    s->salt = t->tiles[tile].salt;
    return rc;
}

void on_obstacles_free(struct on_obstacles *o)
{
    if (!o) return;
    for (size_t i = 0; i < o->nsnap; i++) on_table_free(&o->snap[i].table);
    free(o->ob);
    free(o->snap);
    free(o);
}

/* ---- the API ----------------------------------------------------------------------------------- */

/* The loaded tiles obstacle b covers, into *out (malloc'd; NULL when none), *n of them. -1 on
 * allocation failure. */
static int loaded_tiles(const on_tree *t, const obstacle *b, uint32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!b->any) return 0;
    size_t nt = 1;
    for (int i = 0; i < 3; i++) nt *= (size_t)(b->z[i] - b->a[i] + 1);
    uint32_t *tl = malloc(nt * sizeof *tl);
    if (!tl) return -1;
    for (int k = b->a[2]; k <= b->z[2]; k++)
        for (int j = b->a[1]; j <= b->z[1]; j++)
            for (int i = b->a[0]; i <= b->z[0]; i++) {
                uint32_t ti = on_tile_index(t, i, j, k);
                if (t->tiles[ti].loaded) tl[(*n)++] = ti;
            }
    *out = tl;
    return 0;
}

on_status on_tree_add_obstacle(on_tree *t, const double min[3], const double max[3], uint32_t *id)
{
    if (id) *id = 0;
    obstacle b;
    memset(&b, 0, sizeof b);
    double r = t->p.radius * t->inv_scale;
    for (int i = 0; i < 3; i++)
        if (!isfinite(min[i]) || !isfinite(max[i]) || min[i] > max[i]) return ON_FAILURE | ON_INVALID;
    memcpy(b.wmin, min, sizeof b.wmin);
    memcpy(b.wmax, max, sizeof b.wmax);
    on_to_nav(t, min, b.lo);
    on_to_nav(t, max, b.hi);
    for (int i = 0; i < 3; i++) {
        b.lo[i] -= r;
        b.hi[i] += r;
    }
    /* the tiles it covers (on_tree_insert's rule: a box starting on a tile border touches the tile
     * below, where it blocks nothing) */
    b.any = on_tree_tile_range(t, b.lo, b.hi, b.a, b.z);
    if (!t->obstacles && !(t->obstacles = calloc(1, sizeof *t->obstacles))) return ON_FAILURE | ON_NO_MEMORY;
    struct on_obstacles *o = t->obstacles;
    if (o->next_id == UINT32_MAX) return ON_FAILURE | ON_INVALID;
    uint32_t *tiles;
    size_t ntiles;
    if (loaded_tiles(t, &b, &tiles, &ntiles) != 0 ||
        on_grow((void **)&o->ob, &o->cap, o->n + 1, sizeof *o->ob) != 0) {
        free(tiles);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    /* snapshots first: nothing changes unless all of them could be made */
    for (size_t i = 0; i < ntiles; i++)
        if (!snap_for(t, o, tiles[i])) {
            free(tiles);
            return ON_FAILURE | ON_NO_MEMORY;
        }
    b.id = ++o->next_id;
    o->ob[o->n++] = b;
    const obstacle *ob = &o->ob[o->n - 1];
    on_status st = ON_SUCCESS;
    for (size_t i = 0; i < ntiles; i++) {
        uint32_t ti = tiles[i];
        snapshot *s = find_snap(o, ti);
        int prepared = on_tile_boxes(t, ti) != NULL;
        if (on_failed(on_tree_insert_tile(t, ti, classify, (void *)ob)) ||
            (prepared && t->tiles[ti].salt != s->salt && on_failed(on_tree_prepare(t, ti, NULL))))
            st = ON_FAILURE | ON_NO_MEMORY;
        s->salt = t->tiles[ti].salt;
    }
    if (on_failed(st)) { /* undo: the obstacle out, its tiles rebuilt without it */
        o->n--;
        for (size_t i = 0; i < ntiles; i++) rebuild(t, o, find_snap(o, tiles[i]));
        free(tiles);
        return st;
    }
    free(tiles);
    if (id) *id = ob->id;
    return ON_SUCCESS;
}

on_status on_tree_remove_obstacle(on_tree *t, uint32_t id)
{
    struct on_obstacles *o = t->obstacles;
    size_t k = 0;
    while (o && k < o->n && o->ob[k].id != id) k++;
    if (!o || k == o->n) return ON_FAILURE | ON_INVALID;
    obstacle gone = o->ob[k];
    memmove(o->ob + k, o->ob + k + 1, (o->n - k - 1) * sizeof *o->ob);
    o->n--;
    on_status st = ON_SUCCESS;
    for (int kz = gone.a[2]; gone.any && kz <= gone.z[2]; kz++)
        for (int j = gone.a[1]; j <= gone.z[1]; j++)
            for (int i = gone.a[0]; i <= gone.z[0]; i++) {
                uint32_t ti = on_tile_index(t, i, j, kz);
                if (!t->tiles[ti].loaded) { /* it comes back as its file holds it, with the obstacles left */
                    snapshot *s = find_snap(o, ti);
                    if (s) drop_snap(o, s);
                    continue;
                }
                /* (changed by other means since: a fresh snapshot keeps what it holds, this obstacle too) */
                snapshot *s = snap_for(t, o, ti);
                if (!s || rebuild(t, o, s) != 0) st = ON_FAILURE | ON_NO_MEMORY;
                if (s && !covered(t, o, ti)) drop_snap(o, s);
            }
    return st;
}

/* ---- tiles streamed in and out ------------------------------------------------------------------ */

on_status on_obstacles_tile_loaded(on_tree *t, uint32_t tile)
{
    struct on_obstacles *o = t->obstacles;
    if (!o) return ON_SUCCESS;
    snapshot *s = find_snap(o, tile);
    if (!covered(t, o, tile)) {
        if (s) drop_snap(o, s);
        return ON_SUCCESS;
    }
    /* the tile as its file holds it (its salt moved on at the install: a fresh snapshot) */
    if (!(s = snap_for(t, o, tile))) return ON_FAILURE | ON_NO_MEMORY;
    int prepared = on_tile_boxes(t, tile) != NULL;
    on_status st = ON_SUCCESS;
    for (size_t i = 0; i < o->n && !on_failed(st); i++)
        if (covers(t, &o->ob[i], tile) && on_failed(on_tree_insert_tile(t, tile, classify, &o->ob[i])))
            st = ON_FAILURE | ON_NO_MEMORY;
    if (!on_failed(st) && prepared && t->tiles[tile].salt != s->salt && on_failed(on_tree_prepare(t, tile, NULL)))
        st = ON_FAILURE | ON_NO_MEMORY;
    s->salt = t->tiles[tile].salt;
    return st;
}

void on_obstacles_tile_unloaded(on_tree *t, uint32_t tile)
{
    snapshot *s = t->obstacles ? find_snap(t->obstacles, tile) : NULL;
    if (s) drop_snap(t->obstacles, s);
}

on_status on_tree_obstacles(const on_tree *t, uint32_t *ids, double *boxes, size_t cap, size_t *n)
{
    const struct on_obstacles *o = t->obstacles;
    size_t cnt = o ? o->n : 0;
    for (size_t i = 0; i < cnt && i < cap; i++) {
        if (ids) ids[i] = o->ob[i].id;
        if (boxes) {
            memcpy(boxes + 6 * i, o->ob[i].wmin, 3 * sizeof *boxes);
            memcpy(boxes + 6 * i + 3, o->ob[i].wmax, 3 * sizeof *boxes);
        }
    }
    *n = cnt;
    return cnt > cap ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}

/* ---- the same on a streamer's worker ------------------------------------------------------------- */

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
    for (size_t i = 0; o && i < o->n; i++) n += (size_t)covers(t, &o->ob[i], tile);
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
        if (covers(t, &o->ob[i], tile)) {
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
        obstacle b;
        memset(&b, 0, sizeof b);
        memcpy(b.lo, c->box + 6 * i, sizeof b.lo);
        memcpy(b.hi, c->box + 6 * i + 3, sizeof b.hi);
        if (on_failed(on_tree_insert_tile(scratch, tile, classify, &b))) rc = -1;
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
        if (covers(t, &o->ob[i], tile) && (k >= c->n || c->id[k++] != o->ob[i].id)) return 0;
    if (!o || k != c->n) return 0;
    snapshot *s = find_snap(o, tile);
    if (!s) {
        if (on_grow((void **)&o->snap, &o->snapcap, o->nsnap + 1, sizeof *o->snap) != 0) return -1;
        s = &o->snap[o->nsnap++];
        s->tile = tile;
    } else {
        on_table_free(&s->table);
    }
    s->table = *snap;
    on_table_init(snap);
    s->solid = snap_solid;
    s->salt = t->tiles[tile].salt;
    return 1;
}
