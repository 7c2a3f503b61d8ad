/*
 * grid.h -- the dense grid baseline's state and internal extras (the public face is octonav.h),
 * shared by grid.c (storage, voxel maps, line of sight), grid_map2d.c (Moving AI 2D maps) and
 * grid_search.c (the A* and its move tables). Memory accounting for the benchmarks, and a hook that
 * lets the tests force the search's generation stamp to wrap around.
 */
#ifndef OCTONAV_GRID_H
#define OCTONAV_GRID_H

#include "octonav_grid.h"

#include <stddef.h>
#include <stdint.h>

typedef struct heap_ent {
    double f;
    float g;                   /* tie-break only: among equal f prefer larger g */
    uint32_t cell;
} heap_ent;

struct on_grid {
    int w, h, d;
    uint32_t ncells;           /* < 2^32 */
    uint64_t *bits;            /* blocked cells, plus one padding word for 3-bit reads past the end */
    size_t nwords;

    /* search state, allocated on the first search */
    double *g;
    uint16_t *meta;            /* stamp << 6 | closed | direction */
    uint32_t gen;
    heap_ent *heap;
    size_t heap_cap;
    /* the last successful search, for on_grid_last_path */
    int last_ok;
    uint32_t last_s, last_t;
    int last_goal[3];

    /* move tables, direction k = (dx+1) + 3*(dy+1) + 9*(dz+1) (built by the first search) */
    int ndirs;
    uint8_t dirs[26];          /* the directions used: 26, or the 8 in-plane ones when d == 1 */
    uint32_t off[27];          /* cell index offset, modulo 2^32 */
    uint32_t req[27];          /* cells of the 3x3x3 neighbourhood (same bit numbering) that must be free */
    double cost[27];
    int64_t rowoff[9];         /* index offset of the row (dy, dz), i = (dy+1) + 3*(dz+1) */
};

static inline uint32_t on_grid_cell_index(const on_grid *g, int x, int y, int z)
{
    return (uint32_t)x + (uint32_t)g->w * ((uint32_t)y + (uint32_t)g->h * (uint32_t)z);
}

static inline int on_grid_inside(const on_grid *g, int x, int y, int z)
{
    return x >= 0 && y >= 0 && z >= 0 && x < g->w && y < g->h && z < g->d;
}

static inline int on_grid_bit(const uint64_t *bits, uint32_t i)
{
    return (int)((bits[i >> 6] >> (i & 63)) & 1u);
}

/* Bytes the grid holds now: the blocked bitset, the per-cell search arrays (once a search has run)
 * and the open list's heap. */
size_t on_grid_bytes(const on_grid *g);

/* Tests only: move the generation stamp on so that it wraps around (and the search words are
 * cleared) after `left` more searches. Ignored when the stamp is already closer to the wrap. */
void on_grid_debug_wrap_soon(on_grid *g, uint32_t left);

#endif
