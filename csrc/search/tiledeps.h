/*
 * tiledeps.h -- the tiles a search read and the tiles its result depends on, each with the salt it
 * had then (internal). A search that reads a tile changed since (re-baked, cleared, unloaded,
 * re-prepared) is stale; a result is valid while every tile it depends on keeps its salt. Few tiles
 * per search: a set is two arrays and a linear scan.
 */
#ifndef OCTONAV_TILEDEPS_H
#define OCTONAV_TILEDEPS_H

#include "octonav_search.h"
#include "tree.h"

#include <stddef.h>
#include <stdint.h>

typedef struct on_tileset {
    uint32_t *tile, *salt;
    size_t n, cap;
} on_tileset;

/* Room for cap tiles; -1 on allocation failure (free it with on_tileset_free). */
int on_tileset_init(on_tileset *s, size_t cap);
void on_tileset_free(on_tileset *s);
/* Index of tile in s, or -1. */
ptrdiff_t on_tileset_find(const on_tileset *s, uint32_t tile);
/* Add tile with salt unless present; -1 on allocation failure (s unchanged). */
int on_tileset_add(on_tileset *s, uint32_t tile, uint32_t salt);
/* Remember that a search read tile `tile` of t (with its salt now, unless already in); -1 on
 * allocation failure. */
int on_tileset_touch(on_tileset *s, const on_tree *t, uint32_t tile);
/* Did any tile of s change since it was added? */
int on_tileset_changed(const on_tileset *s, const on_tree *t);

/* A result's tiles into out: the corridor's tiles and every tile its final segments (nav-space
 * points pts[0 .. npts-1], possibly outside the corridor after smoothing) cross or touch, each once,
 * with the salt the search saw (from `touched`), or the salt now for a tile only smoothing read.
 * -1 on allocation failure. */
int on_tileset_of_path(on_tileset *out, const on_tileset *touched, const on_tree *t, on_lcache *lc,
                       const on_cell *corr, size_t ncorr, const double *pts, size_t npts);

#endif
