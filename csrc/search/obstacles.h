/*
 * obstacles.h -- temporary obstacles on the tree's side (internal; the public calls are in octonav.h,
 * "temporary obstacles"): what the streamer asks of them across tile loads, and a work count for tests.
 * obstacles.c keeps its records on the tree (tree.obstacles), freed with it through its hook; a tile
 * that came prepared is prepared again after an obstacle changes it (boxes.h).
 */
#ifndef OCTONAV_OBSTACLES_H
#define OCTONAV_OBSTACLES_H

#include "table.h"
#include "octonav_search.h"
#include "tree.h"

#include <stdint.h>

/* The work obstacle removals did so far (nodes restored and candidate boxes tested where a removed box
 * reached, plus obstacles blocked again by a whole-tile rebuild): a count, for tests. */
uint64_t on_obstacles_work(const on_tree *t);
/* For the streamer: the tree's temporary obstacles across tile loads. A tile just installed gets the
 * obstacles covering it blocked, in the order added, after a snapshot of it as read (what removing them
 * gives back), and is prepared again when it came prepared; ON_FAILURE | ON_NO_MEMORY when that could
 * not be done whole (the tile must not stay loaded then). An unloaded tile's snapshot goes. */
on_status on_obstacles_tile_loaded(on_tree *t, uint32_t tile);
void on_obstacles_tile_unloaded(on_tree *t, uint32_t tile);
/* The same work done on a streamer worker, off the caller's thread: on the caller's thread, when a
 * load is queued, a copy of the obstacles covering the tile (NULL: none, or no memory: the install
 * then applies them); on the worker, on_obstacles_apply_copy blocks them in the decoded table (tab,
 * solid) through `scratch` (a tree of the same grid and depth owned by the worker, whose tile `tile`
 * it leaves empty) after copying it into *snap; 0, or -1 with tab and solid as they came. At the
 * install, on_obstacles_adopt takes *snap as the tile's snapshot when the obstacles covering the tile
 * are still those of the copy, in order (1; ON_NO_MEMORY: -1), and leaves it otherwise (0: install
 * the snapshot's table instead and apply them with on_obstacles_tile_loaded). */
typedef struct on_obstacle_copy on_obstacle_copy;
on_obstacle_copy *on_obstacles_copy_over(const on_tree *t, uint32_t tile);
void on_obstacles_copy_free(on_obstacle_copy *c);
int on_obstacles_apply_copy(on_tree *scratch, uint32_t tile, const on_obstacle_copy *c, on_table *tab, uint8_t *solid,
                            on_table *snap);
int on_obstacles_adopt(on_tree *t, uint32_t tile, const on_obstacle_copy *c, on_table *snap, uint8_t snap_solid);

#endif
