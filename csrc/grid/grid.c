/*
 * grid.c -- the dense grid baseline: a w x h x d bitset of blocked cells, an exact A* over it
 * (grid_search.c) and a line-of-sight test (on_walk_dense). It is what the octree search is measured
 * against, so it is meant to be fair and fast, not naive. This file: the grid's storage (create,
 * set, read, bytes), grids from voxel maps, and line of sight; 2D Moving AI maps are read in
 * grid_map2d.c.
 */
#include "grid.h"
#include "raycast.h"

#include <math.h>
#include <stdlib.h>

on_status on_grid_create(int w, int h, int d, on_grid **out)
{
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (w < 1 || h < 1 || d < 1) return ON_FAILURE | ON_INVALID;
    uint64_t n = (uint64_t)w * (uint64_t)h * (uint64_t)d;
    if (n >= ((uint64_t)1 << 32)) return ON_FAILURE | ON_INVALID;
    on_grid *g = calloc(1, sizeof *g);
    if (!g) return ON_FAILURE | ON_NO_MEMORY;
    g->w = w;
    g->h = h;
    g->d = d;
    g->ncells = (uint32_t)n;
    g->nwords = (size_t)((n + 63) / 64) + 1;
    g->bits = calloc(g->nwords, sizeof *g->bits);
    if (!g->bits) {
        free(g);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    *out = g; /* (the move tables: built by the first search, grid_search.c) */
    return ON_SUCCESS;
}

void on_grid_destroy(on_grid *g)
{
    if (!g) return;
    free(g->bits);
    free(g->g);
    free(g->meta);
    free(g->heap);
    free(g);
}

void on_grid_dims(const on_grid *g, int dims[3])
{
    if (!dims) return;
    dims[0] = g ? g->w : 0;
    dims[1] = g ? g->h : 0;
    dims[2] = g ? g->d : 0;
}

void on_grid_set(on_grid *g, int x, int y, int z, int blocked)
{
    if (!g || !on_grid_inside(g, x, y, z)) return;
    uint32_t i = on_grid_cell_index(g, x, y, z);
    uint64_t m = (uint64_t)1 << (i & 63);
    if (blocked) g->bits[i >> 6] |= m;
    else g->bits[i >> 6] &= ~m;
}

int on_grid_blocked(const on_grid *g, int x, int y, int z)
{
    if (!g || !on_grid_inside(g, x, y, z)) return 1;
    return on_grid_bit(g->bits, on_grid_cell_index(g, x, y, z));
}

size_t on_grid_bytes(const on_grid *g)
{
    if (!g) return 0;
    size_t b = sizeof *g + g->nwords * sizeof *g->bits + g->heap_cap * sizeof *g->heap;
    if (g->g) b += (size_t)g->ncells * (sizeof *g->g + sizeof *g->meta);
    return b;
}

on_status on_grid_from_voxmap(const on_voxmap *m, on_grid **out)
{
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (!m || (m->count && !m->xyz)) return ON_FAILURE | ON_INVALID;
    on_grid *g;
    on_status st = on_grid_create(m->w, m->h, m->d, &g);
    if (on_failed(st)) return st;
    for (size_t i = 0; i < m->count; i++) {
        int x = m->xyz[3 * i], y = m->xyz[3 * i + 1], z = m->xyz[3 * i + 2];
        if (!on_grid_inside(g, x, y, z)) {
            on_grid_destroy(g);
            return ON_FAILURE | ON_INVALID;
        }
        on_grid_set(g, x, y, z, 1);
    }
    *out = g;
    return ON_SUCCESS;
}

/* ---- line of sight --------------------------------------------------------------------------------- */

static int grid_voxel_free(const void *ud, int64_t x, int64_t y, int64_t z)
{
    const on_grid *g = ud;
    if (x < 0 || y < 0 || z < 0 || x >= g->w || y >= g->h || z >= g->d) return 0;
    return !on_grid_bit(g->bits, on_grid_cell_index(g, (int)x, (int)y, (int)z));
}

on_status on_grid_visible(const on_grid *g, const double a[3], const double b[3])
{
    if (!g || !a || !b) return ON_FAILURE | ON_INVALID;
    for (int i = 0; i < 3; i++)
        if (!isfinite(a[i]) || !isfinite(b[i])) return ON_FAILURE | ON_INVALID;
    return on_walk_dense(grid_voxel_free, g, a, b, NULL) ? ON_SUCCESS : ON_FAILURE | ON_BLOCKED;
}
