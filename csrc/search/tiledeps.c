/*
 * tiledeps.c -- the tiles a search read and a result depends on (see tiledeps.h).
 */
#include "tiledeps.h"
#include "raycast.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

int on_tileset_init(on_tileset *s, size_t cap)
{
    s->n = 0;
    s->cap = cap;
    s->tile = malloc(cap * sizeof *s->tile);
    s->salt = malloc(cap * sizeof *s->salt);
    return s->tile && s->salt ? 0 : -1;
}

void on_tileset_free(on_tileset *s)
{
    free(s->tile);
    free(s->salt);
    s->tile = s->salt = NULL;
    s->n = s->cap = 0;
}

ptrdiff_t on_tileset_find(const on_tileset *s, uint32_t tile)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->tile[i] == tile) return (ptrdiff_t)i;
    return -1;
}

int on_tileset_add(on_tileset *s, uint32_t tile, uint32_t salt)
{
    if (on_tileset_find(s, tile) >= 0) return 0;
    /* two arrays of one capacity: grown one after the other, the capacity updated once both are */
    size_t ct = s->cap, cs = s->cap;
    if (on_grow((void **)&s->tile, &ct, s->n + 1, sizeof *s->tile) ||
        on_grow((void **)&s->salt, &cs, s->n + 1, sizeof *s->salt))
        return -1;
    s->cap = ct;
    s->tile[s->n] = tile;
    s->salt[s->n++] = salt;
    return 0;
}

int on_tileset_touch(on_tileset *s, const on_tree *t, uint32_t tile)
{
    if (on_tileset_find(s, tile) >= 0) return 0; /* (no salt read for a tile already in) */
    return on_tileset_add(s, tile, on_tree_tile_salt(t, tile));
}

int on_tileset_changed(const on_tileset *s, const on_tree *t)
{
    for (size_t i = 0; i < s->n; i++)
        if (on_tree_tile_salt(t, s->tile[i]) != s->salt[i]) return 1;
    return 0;
}

typedef struct path_tiles {
    on_tileset *out;
    const on_tileset *touched;
    const on_tree *t;
    int failed;
} path_tiles;

/* Add a tile (once), with the salt the search saw, or the salt now for a tile only smoothing read. */
static void ptile_add(path_tiles *pt, uint32_t tile)
{
    if (on_tileset_find(pt->out, tile) >= 0) return;
    ptrdiff_t i = on_tileset_find(pt->touched, tile);
    uint32_t salt = i >= 0 ? pt->touched->salt[i] : on_tree_tile_salt(pt->t, tile);
    if (on_tileset_add(pt->out, tile, salt) != 0) pt->failed = 1;
}

static void ptile_sink(void *ud, on_cell c)
{
    path_tiles *pt = ud;
    if (pt->out->n > 0 && pt->out->tile[pt->out->n - 1] == c.tile) return;
    ptile_add(pt, c.tile);
}

/* The tile whose open box holds nav point p strictly (not on a tile face), or UINT32_MAX. (The floor by a
 * truncation: u is at least 0 and below the tiles' count there; floor() is a libm call in the search's
 * baseline build, three a point.) */
static uint32_t tile_inside(const on_tree *t, const double p[3])
{
    int ijk[3];
    for (int k = 0; k < 3; k++) {
        double u = p[k] / (double)t->n;
        if (!(u >= 0 && u < (double)t->p.tiles[k])) return UINT32_MAX;
        int f = (int)u;
        if ((double)f == u) return UINT32_MAX;
        ijk[k] = f;
    }
    return on_tile_index(t, ijk[0], ijk[1], ijk[2]);
}

/* A segment with both ends strictly inside one tile stays in it; any other is walked. */
int on_tileset_of_path(on_tileset *out, const on_tileset *touched, const on_tree *t, on_lcache *lc,
                       const on_cell *corr, size_t ncorr, const double *pts, size_t npts)
{
    path_tiles pt = {out, touched, t, 0};
    out->n = 0;
    for (size_t i = 0; i < ncorr; i++)
        if (i == 0 || corr[i].tile != corr[i - 1].tile) ptile_add(&pt, corr[i].tile); /* (runs of one tile: once) */
    for (size_t i = 1; i < npts && t->ntiles > 1; i++) {
        const double *a = pts + 3 * (i - 1), *b = pts + 3 * i;
        uint32_t ta = tile_inside(t, a);
        if (ta != UINT32_MAX && ta == tile_inside(t, b)) ptile_add(&pt, ta);
        else on_tree_walk_cells(t, lc, a, b, ptile_sink, &pt);
    }
    return pt.failed ? -1 : 0;
}
