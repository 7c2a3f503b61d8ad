/*
 * grid.h -- internal extras of the dense grid baseline (grid.c); the public face is octonav.h.
 * Memory accounting for the benchmarks, the last search's path without searching again, and a hook
 * that lets the tests force the search's generation stamp to wrap around.
 */
#ifndef OCTONAV_GRID_H
#define OCTONAV_GRID_H

#include "octonav.h"

/* Bytes the grid holds now: the blocked bitset, the per-cell search arrays (once a search has run)
 * and the open list's heap. */
size_t on_grid_bytes(const on_grid *g);

/* The largest open-list size any search on this grid has reached (entries, stale ones included). */
size_t on_grid_heap_peak(const on_grid *g);

/* The path of the last on_grid_find on this grid, read again without searching (the search's parent
 * directions are kept until the next search; editing cells does not touch them): up to cap cells
 * written as x,y,z triples, start first (path may be NULL), the full cell count returned. 0 when the
 * last search failed or there was none. A binding can search once with no buffer, then size one. */
size_t on_grid_last_path(const on_grid *g, int32_t *path, size_t cap);

/* Tests only: move the generation stamp on so that it wraps around (and the search words are
 * cleared) after `left` more searches. Ignored when the stamp is already closer to the wrap. */
void on_grid_debug_wrap_soon(on_grid *g, uint32_t left);

#endif
