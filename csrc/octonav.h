/*
 * octonav.h -- the public C API of octonav: 3D navigation over a sparse octree.
 *
 * No Lua in here: a C program can bake, save, load and query trees with this header alone. It gathers
 * the public header of each room (csrc/README.md), installed beside it by `make install`:
 *   octonav_core.h    status codes, the tree, point queries, files, OBJ meshes, voxel maps
 *   octonav_search.h  prepared boxes, cell adjacencies, landmarks, temporary obstacles, area costs,
 *                     the search (the query object)
 *   octonav_world.h   tile portal graphs, the world graph, the route planner
 *   octonav_stream.h  the path server and the streamer
 *   octonav_grid.h    the dense grid baseline
 *   octonav_crowd.h   the crowd: agents that fly together (issue 33)
 * Inside the library a room includes its own public header (and those below it), never this one.
 */
#ifndef OCTONAV_H
#define OCTONAV_H

#include "octonav_core.h"
#include "octonav_search.h"
#include "octonav_world.h"
#include "octonav_stream.h"
#include "octonav_grid.h"
#include "octonav_crowd.h"

#endif
