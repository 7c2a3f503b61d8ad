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

/* Tests only: move the generation stamp on so that it wraps around (and the search words are
 * cleared) after `left` more searches. Ignored when the stamp is already closer to the wrap. */
void on_grid_debug_wrap_soon(on_grid *g, uint32_t left);

#endif
