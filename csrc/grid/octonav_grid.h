/*
 * octonav_grid.h -- the public C API of the grid room (csrc/grid/): the dense grid baseline. Part of
 * octonav.h (include that); on the core's (octonav_core.h).
 */
#ifndef OCTONAV_GRID_API_H
#define OCTONAV_GRID_API_H

#include "octonav_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- dense grid baseline ------------------------------------------------------------------------ */
/* The seeds' grid A*: 2D (d == 1: 8-connected, costs 1 and sqrt2) or 3D (26-connected, costs 1,
 * sqrt2, sqrt3); no corner cutting: a diagonal move needs every cell of the box it spans free. */
typedef struct on_grid on_grid;
ON_API on_status on_grid_create(int w, int h, int d, on_grid **out);
ON_API void on_grid_destroy(on_grid *g);
ON_API void on_grid_dims(const on_grid *g, int dims[3]);
ON_API void on_grid_set(on_grid *g, int x, int y, int z, int blocked);
ON_API int on_grid_blocked(const on_grid *g, int x, int y, int z); /* outside counts as blocked */
ON_API on_status on_grid_from_voxmap(const on_voxmap *m, on_grid **out);
/* A* between cell coordinates. On success *length is the path cost; path (may be NULL) gets up to
 * cap cells as x,y,z triples, start first, *npath the number of cells. Failures: ON_OUTSIDE,
 * ON_BLOCKED (start or goal), ON_UNREACHABLE, ON_NO_MEMORY. */
ON_API on_status on_grid_find(on_grid *g, const int start[3], const int goal[3], double *length,
                              size_t *expansions, int32_t *path, size_t cap, size_t *npath);
/* A Moving AI 2D map (.map: "type octile", "height H", "width W", "map", then H rows; '.', 'G' and
 * 'S' are passable, everything else blocked) as a grid with d == 1; row r is y = r. */
ON_API on_status on_grid_read_map2d(const char *path, on_grid **out, char *err, size_t errlen);
/* The same over text in memory: buf[len] must be '\0'; the text is changed in place (line ends). */
ON_API on_status on_grid_parse_map2d(const char *path, char *buf, size_t len, on_grid **out, char *err,
                                     size_t errlen);
/* Line of sight over the dense grid by a voxel walk, by the same rule as on_tree_visible. */
ON_API on_status on_grid_visible(const on_grid *g, const double a[3], const double b[3]);
/* The path of the last on_grid_find on this grid, read again without searching (the search's parent
 * directions are kept until the next search; editing cells does not touch them): up to cap cells
 * written as x,y,z triples, start first (path may be NULL), the full cell count returned. 0 when the
 * last search failed or there was none. A binding can search once with no buffer, then size one. */
ON_API size_t on_grid_last_path(const on_grid *g, int32_t *path, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
