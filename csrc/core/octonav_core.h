/*
 * octonav_core.h -- the public C API of the core room (csrc/core/): status codes, the tree, point
 * queries, files, OBJ meshes and voxel maps. Part of octonav.h (include that: it gathers every room's
 * public header).
 *
 * Spaces: world (the caller's doubles) and nav (leaf = 1 unit, tile (i,j,k) covers
 * [i*N, (i+1)*N) x ... with N = 2^depth); p_nav = (p_world - origin) / scale.
 * Status codes follow Detour: a high bit says success / failure / in progress, low bits give detail.
 */
#ifndef OCTONAV_CORE_API_H
#define OCTONAV_CORE_API_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define ON_API __attribute__((visibility("default")))
#else
#define ON_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ---------------------------------------------------------------------------------- */
typedef uint32_t on_status;

#define ON_FAILURE      (1u << 31)
#define ON_SUCCESS      (1u << 30)
#define ON_IN_PROGRESS  (1u << 29)
#define ON_DETAIL_MASK  0x0ffffffu

#define ON_NO_MEMORY    (1u << 0)  /* an allocation failed; the object is unchanged */
#define ON_INVALID      (1u << 1)  /* a parameter is out of range */
#define ON_IO           (1u << 2)  /* a file could not be opened, read or written */
#define ON_CORRUPT      (1u << 3)  /* data failed its magic, version, size, checksum or structure check */
#define ON_OUTSIDE      (1u << 4)  /* a point lies outside the tile grid */
#define ON_BLOCKED      (1u << 5)  /* a point lies in blocked space */
#define ON_UNREACHABLE  (1u << 6)
#define ON_OUT_OF_NODES (1u << 7)  /* search memory exhausted */
#define ON_BUDGET       (1u << 8)  /* expansion budget exhausted */
#define ON_STALE        (1u << 9)  /* the tree changed under a running search */
#define ON_PARTIAL      (1u << 10) /* result is a partial path */
#define ON_BUFFER_SMALL (1u << 11) /* caller's buffer too small; the needed size is reported */
#define ON_VERSION      (1u << 12) /* data written by an unsupported format version */
#define ON_LOADING      (1u << 13) /* a search reached a tile that is not loaded (streaming): it waits */
#define ON_MISPLACED    (1u << 14) /* an intact tile file of another tile (a swapped file) */
#define ON_UNPREPARED   (1u << 15) /* a search over the boxes (ON_GRAPH_BOXES) met a tile without a valid
                                    * prepared graph (on_tree_prepare); info.loading_tile names it */
#define ON_UNLOADED     (1u << 16) /* a point lies in a tile that is not loaded (streaming): neither free
                                    * nor blocked as far as the tree knows; the tile is named */

static inline int on_ok(on_status s) { return (s & ON_SUCCESS) != 0; }
static inline int on_failed(on_status s) { return (s & ON_FAILURE) != 0; }
static inline int on_in_progress(on_status s) { return (s & ON_IN_PROGRESS) != 0; }

/* A short English text for the first detail bit set ("out of memory", "corrupt data", ...). */
ON_API const char *on_status_string(on_status s);

/* ---- the tree -------------------------------------------------------------------------------- */
typedef struct on_tree on_tree;
typedef struct on_streamer on_streamer; /* (octonav_stream.h) */

#define ON_MAX_DEPTH 9
#define ON_MAX_TILES_PER_AXIS 4096
/* Bounds of a tree's numbers (on_tree_create refuses others): a leaf of ON_MIN_SCALE..ON_MAX_SCALE world
 * units, origin coordinates and radius within ON_MAX_COORD, so that nav-space coordinates (world / scale)
 * and world extents (tiles * leaves * scale) stay far below overflow (1e18 at most). */
#define ON_MIN_SCALE 1e-6
#define ON_MAX_SCALE 1e6
#define ON_MAX_COORD 1e12

typedef struct on_tree_params {
    int tiles[3];      /* tiles along x, y, z; each 1..ON_MAX_TILES_PER_AXIS, product < 2^31 */
    int depth;         /* 1..ON_MAX_DEPTH: a tile is 2^depth leaves a side */
    double scale;      /* a leaf's size in world units, ON_MIN_SCALE..ON_MAX_SCALE */
    double origin[3];  /* world position of the nav-space origin (|x| <= ON_MAX_COORD) */
    double radius;     /* agent clearance in world units (0..ON_MAX_COORD): inflates inserted geometry */
} on_tree_params;

/* A free cell: a whole empty cube, the unit of navigation. */
typedef struct on_cell {
    uint32_t tile;     /* tile index: i + nx * (j + ny * k) */
    uint32_t code;     /* node code inside the tile: z<<22 | y<<13 | x<<4 | layer */
} on_cell;

typedef struct on_tree_stats {
    size_t tiles, tiles_loaded, nodes, slots;
    size_t bytes;          /* everything the tree holds: tables with their slack, tile records, the tree */
    size_t table_bytes;    /* the hash tables alone */
    double bytes_per_node; /* bytes / nodes (0 when there are no nodes) */
    double load_factor;    /* nodes / slots */
    size_t tiles_prepared; /* tiles with a valid prepared search graph (on_tree_prepare) */
    size_t boxes;          /* boxes in those graphs */
    size_t box_bytes;      /* their memory (not in bytes) */
    size_t los_tiles;      /* tiles whose line-of-sight mask hierarchy is built (on_tree_los_prepare) */
    size_t los_bytes;      /* their memory (not in bytes) */
    uint64_t los_dropped;  /* tiles' masks dropped to keep their budget so far (on_tree_set_los_budget) */
    size_t adj_tiles;      /* tiles whose cell adjacency is built (on_tree_adjacency_prepare) */
    size_t adj_bytes;      /* their memory (not in bytes) */
    size_t landmark_bytes; /* the search's landmark distances (on_tree_landmarks_prepare; not in bytes) */
} on_tree_stats;

ON_API on_status on_tree_create(const on_tree_params *p, on_tree **out);
ON_API void on_tree_destroy(on_tree *t);
ON_API const on_tree_params *on_tree_get_params(const on_tree *t);
ON_API void on_tree_stats_get(const on_tree *t, on_tree_stats *st);
/* Bumped by every change to the tree; a running search compares it to detect a change under it. */
ON_API uint64_t on_tree_revision(const on_tree *t);
/* Per tile salt: bumped whenever that tile is replaced, cleared or re-baked. */
ON_API uint32_t on_tree_tile_salt(const on_tree *t, uint32_t tile);
ON_API uint32_t on_tree_tile_count(const on_tree *t);
/* Tile (i, j, k) <-> linear tile index (i fastest, then j, then k); coordinates inside the grid. */
ON_API uint32_t on_tree_tile_index(const on_tree *t, const int ijk[3]);
ON_API void on_tree_tile_coords(const on_tree *t, uint32_t tile, int ijk[3]);
/* 1 when each tiles[i] is a tile of t whose salt is still salts[i]: what a result read is unchanged
 * (how a binding answers path:is_valid() for the tiles on_query_path_tiles gave). */
ON_API int on_tree_tiles_unchanged(const on_tree *t, const uint32_t *tiles, const uint32_t *salts, size_t n);
/* Is c (from on_tree_locate or on_tree_neighbors, possibly made up or stale) a free cell of t now?
 * ON_SUCCESS; ON_FAILURE | ON_INVALID when it cannot be a cell of t (no such tile, or its code's layer
 * exceeds the depth); ON_FAILURE | ON_STALE when the leaf at its corner is not that free cell. */
ON_API on_status on_tree_cell_check(const on_tree *t, on_cell c);
/* The highest load factor on_tree_compact accepts (0 there means the default). */
#define ON_MAX_LOAD_FACTOR 0.9
ON_API size_t on_tree_tile_nodes(const on_tree *t, uint32_t tile);

/* Insertion, in world space. Geometry outside the tile grid is ignored. */
ON_API on_status on_tree_add_box(on_tree *t, const double min[3], const double max[3]);
/* verts: 3*nverts doubles; tris: 3*ntris 0-based vertex indices. */
ON_API on_status on_tree_add_triangles(on_tree *t, const double *verts, size_t nverts,
                                       const uint32_t *tris, size_t ntris);

/* A heightfield: a regular grid of samples on the xz plane, solid from below the world up to the surface.
 * Sample (i, k) is at world x = origin[0] + i*cell, z = origin[2] + k*cell, y = origin[1] + heights[i + k*nx].
 * Each grid square is two triangles split along the (i,k)-(i+1,k+1) diagonal. */
typedef struct on_heightfield {
    double origin[3];
    double cell;
    int nx, nz;              /* samples along x and z, each >= 2 */
    const double *heights;   /* nx * nz values, finite */
} on_heightfield;
ON_API on_status on_tree_add_heightfield(on_tree *t, const on_heightfield *hf);

/* Block the free region face-connected to p. *blocked_cells gets the number of free cells blocked. */
ON_API on_status on_tree_fill(on_tree *t, const double p[3], size_t *blocked_cells);

/* Shrink every tile's table to the given load factor (0 = the default 0.88): run after a bake. */
ON_API on_status on_tree_compact(on_tree *t, double load);

/* Remove all geometry from one tile (it becomes one free cell). */
ON_API on_status on_tree_clear_tile(on_tree *t, uint32_t tile);

/* Point queries, world space. Returns ON_SUCCESS with *cell set when p is free,
 * ON_FAILURE|ON_BLOCKED when blocked, ON_FAILURE|ON_OUTSIDE when outside, ON_FAILURE|ON_UNLOADED when
 * p's tile is not loaded (cell->tile names it, cell->code is 0xffffffff: no cell). */
ON_API on_status on_tree_locate(const on_tree *t, const double p[3], on_cell *cell);

/* Geometry of a cell in world space: min corner and edge length. */
ON_API void on_tree_cell_bounds(const on_tree *t, on_cell c, double min[3], double *size);

/* Free cells sharing a face (of positive area) with c, across tile borders too.
 * Writes up to cap cells in out (and their face 0..5 = -x,+x,-y,+y,-z,+z in faces, which may be NULL);
 * *count gets the total. Returns ON_FAILURE|ON_BUFFER_SMALL when *count > cap (call again with more room). */
ON_API on_status on_tree_neighbors(const on_tree *t, on_cell c, on_cell *out, uint8_t *faces,
                                   size_t cap, size_t *count);

/* The free cells of a tile touching one of its faces (0..5 = -x,+x,-y,+y,-z,+z), same buffer rules
 * as on_tree_neighbors: the raw material of connect regions. */
ON_API on_status on_tree_face_cells(const on_tree *t, uint32_t tile, int face, on_cell *out, size_t cap,
                                    size_t *count);


/* Every leaf-level region of the tree as a list of cubes: each free cell and each blocked cube
 * (a flagged child, or a solid tile), in tile order then pre-order. fn returns nonzero to stop. */
typedef int (*on_cell_visit_fn)(void *ud, on_cell c, int blocked);
ON_API on_status on_tree_visit(const on_tree *t, on_cell_visit_fn fn, void *ud);

/* Write the blocked (what = 0) or free (what = 1) cubes as an OBJ of boxes, in world space.
 * *boxes (may be NULL) gets the number written. */
ON_API on_status on_tree_export_obj(const on_tree *t, const char *path, int what, size_t *boxes);
/* The same with the reason of a failure in err ("PATH: cannot write: No space left on device"). Both
 * exports are written beside path and renamed over it once complete (a failure leaves path as it
 * was). */
ON_API on_status on_tree_export_obj_msg(const on_tree *t, const char *path, int what, size_t *boxes, char *err,
                                        size_t errlen);

/* The boundary between free and blocked space as merged quads (a viewer's or debug draw's surface):
 * fn gets each quad's 4 corners in leaf units of the whole tile grid (world = origin + corner * scale),
 * counter-clockwise seen from the side its normal points to, and the normal 0..5 = -x,+x,-y,+y,-z,+z,
 * pointing out of blocked space (what = 0) or out of free space (what = 1). Unloaded tiles count as
 * blocked; the outer faces of the tile grid are not part of it. fn returns nonzero to stop. */
typedef int (*on_quad_fn)(void *ud, const int64_t corners[4][3], int normal);
ON_API on_status on_tree_surface(const on_tree *t, int what, on_quad_fn fn, void *ud);
/* That surface as an OBJ: shared vertices, six "vn" normals, one "f v//n" quad per merged face.
 * *faces and *verts (may be NULL) get the counts. */
ON_API on_status on_tree_export_surface_obj(const on_tree *t, const char *path, int what, size_t *faces,
                                           size_t *verts);
ON_API on_status on_tree_export_surface_obj_msg(const on_tree *t, const char *path, int what, size_t *faces,
                                               size_t *verts, char *err, size_t errlen);

/* Line of sight between two world points (see README, "visibility rule").
 * visible: ON_SUCCESS when clear, ON_FAILURE|ON_BLOCKED otherwise.
 * raycast: ON_SUCCESS when clear; ON_FAILURE|ON_BLOCKED with *t_hit in [0,1] at the first blocked point. */
ON_API on_status on_tree_visible(const on_tree *t, const double a[3], const double b[3]);
ON_API on_status on_tree_raycast(const on_tree *t, const double a[3], const double b[3], double *t_hit);
/* Line of sight reads a tile through its mask hierarchy (losmap.h), built the first time a line of sight
 * reads the tile and dropped by every change to it. This builds every loaded tile's now (a first query
 * without the build's cost); *bytes (may be NULL) gets their memory. ON_FAILURE|ON_NO_MEMORY when one
 * could not be built (line of sight then reads that tile's node table). */
ON_API on_status on_tree_los_prepare(const on_tree *t, size_t *bytes);
/* on = 1 (the default): as above. on = 0: line of sight reads the node table only, the mask
 * hierarchies built are freed and on_tree_los_prepare fails with ON_INVALID (their memory, 0.8-2.3 times the tree's on the Warframe maps, against
 * about twice the instructions a segment). An edit: never while another thread reads the tree. */
ON_API void on_tree_set_los_masks(on_tree *t, int on);
/* Deferred masks, for a game's frame budget. on = 1: a line of sight never builds a tile's mask
 * hierarchy; through a tile without one it reads the node table (the same answers, about twice the
 * instructions a segment) and marks the tile wanted, and on_tree_los_step builds them in slices. on = 0
 * (the default): built whole by the first line of sight through the tile (about 10 ms a 512^3 tile). */
ON_API void on_tree_set_los_defer(on_tree *t, int on);
/* The grid's border for an agent's radius (searches with a radius, on_tree_visible_radius: clearance.h).
 * on = 0 (the default): outside the grid counts as blocked, so the border grows inwards by the radius.
 * on = 1: outside the grid counts as free, as in a tree baked for the radius (the bake grows geometry,
 * not the border): a world's tree (octonav.world). Never while another thread reads the tree. */
ON_API void on_tree_set_border_free(on_tree *t, int on);
/* The masks' bytes, kept by on_tree_los_step: when the tiles' masks hold more than the budget it drops
 * the masks of the tiles lines of sight read least recently (a tile's masks read again are wanted and
 * built again in slices, as after a change), and it builds a wanted tile's only when they would fit or
 * some tile's masks have not been read for ON_LOS_IDLE_STEPS calls (no tile's are dropped for
 * another's over and over: the tiles left out are read through their node tables, the same answers);
 * a tile whose masks alone pass the budget keeps none until it changes. bytes: ON_LOS_BUDGET_NONE (the
 * default: no limit), ON_LOS_BUDGET_TREE (ON_LOS_BUDGET_SHARE of the tree's bytes, on_tree_stats'
 * bytes, at each call: a world's tree, octonav.world.load) or a count of bytes. Masks built by the
 * first line of sight through a tile (masks not deferred) or installed by a streamer count from the
 * next on_tree_los_step. Drops free memory that lines of sight on other threads may read: with a
 * budget, on_tree_los_step runs only while no other thread reads the tree. An edit (never while
 * another thread reads the tree); it forgets which tiles passed the budget. on_tree_los_budget: the
 * budget now in bytes (ON_LOS_BUDGET_NONE: no limit). */
#define ON_LOS_BUDGET_NONE ((size_t)-1)
#define ON_LOS_BUDGET_TREE ((size_t)-2)
#define ON_LOS_BUDGET_SHARE 0.125
#define ON_LOS_IDLE_STEPS 60u
ON_API void on_tree_set_los_budget(on_tree *t, size_t bytes);
ON_API size_t on_tree_los_budget(const on_tree *t);
typedef struct on_los_step_info {
    uint64_t work;   /* node-table reads this call made (the unit of `work`) */
    uint32_t built;  /* tiles whose masks it finished (published: line of sight reads them from now on) */
    uint32_t wanted; /* tiles a line of sight read without masks, still to be built */
    uint32_t left;   /* with all: loaded tiles without masks (the wanted ones included) */
    int partial;     /* a tile's build is under way (resumed by the next call) */
    uint32_t dropped; /* tiles whose masks it dropped to keep the budget (on_tree_set_los_budget) */
} on_los_step_info;
/* Build mask hierarchies for at most `work` node-table reads (0: no limit) and `seconds` of the
 * monotonic clock (0: no limit): the tiles lines of sight wanted first (lowest index first), then, with
 * all, every loaded tile without masks; within the masks' budget (on_tree_set_los_budget). A tile's build is resumable: it stops mid-tile and goes on at the
 * next call (a change to the tile abandons it); the losmap is published when whole and is the same,
 * byte for byte, as a one-piece build. One thread: the tree's writer (readers on other threads may run
 * only with no budget: ON_LOS_BUDGET_NONE).
 * ON_FAILURE|ON_INVALID when the masks are off, ON_FAILURE|ON_NO_MEMORY when a build could not be
 * made. *info (may be NULL) gets what it did. */
ON_API on_status on_tree_los_step(on_tree *t, uint64_t work, double seconds, int all, on_los_step_info *info);

/* Nearest free point to p within `radius` leaves (search of the leaf lattice); ON_FAILURE when none. */
ON_API on_status on_tree_nearest_free(const on_tree *t, const double p[3], double radius_leaves, double out[3]);

/* ---- point queries (pointquery.c) ------------------------------------------------------------- */
/* The free space's connected components (face adjacency across tiles), for reachability without a
 * search. Built for the tree as it is; once the tree changes, queries answer ON_STALE (build again). */
typedef struct on_components on_components;
ON_API on_status on_components_build(const on_tree *t, on_components **out);
ON_API void on_components_destroy(on_components *m);
ON_API void on_components_info(const on_components *m, size_t *components, size_t *cells, size_t *bytes);
/* ON_SUCCESS when a and b are free and connected; ON_FAILURE with ON_UNREACHABLE (both free, not
 * connected), ON_BLOCKED / ON_OUTSIDE (a point), or ON_STALE (the tree changed since the build). */
ON_API on_status on_components_reachable(const on_components *m, const on_tree *t, const double a[3],
                                         const double b[3]);
/* Up to count free points, each uniform over the free volume (inside the sphere when centre is not
 * NULL), drawn from the caller's xorshift state (any value; updated). out gets 3 * *written numbers.
 * ON_FAILURE|ON_UNREACHABLE when there is no free space there (or 64 draws in a row fell outside the
 * sphere); O(free cells) a call, then O(log cells) a point. */
ON_API on_status on_tree_random_free(const on_tree *t, uint64_t *state, const double centre[3], double radius,
                                     size_t count, double *out, size_t *written);

/* ---- files ----------------------------------------------------------------------------------- */
/* One tile as bytes. encode: *len gets the size; with buf NULL or cap too small only the size is
 * reported (ON_FAILURE|ON_BUFFER_SMALL). decode: replaces the tile; on failure the tile is unchanged. */
ON_API on_status on_tree_encode_tile(const on_tree *t, uint32_t tile, uint8_t *buf, size_t cap, size_t *len);
ON_API on_status on_tree_decode_tile(on_tree *t, uint32_t tile, const uint8_t *buf, size_t len);
/* One tile as a tile file (a pack's tiles/I_J_K.tile): a 16-byte header recording the tile's
 * position, then the blob; same buffer rules. A tile file decodes only at its own position
 * (ON_MISPLACED for a swapped file; ON_VERSION for a bare blob). */
ON_API on_status on_tree_encode_tile_file(const on_tree *t, uint32_t tile, uint8_t *buf, size_t cap, size_t *len);
ON_API on_status on_tree_decode_tile_file(on_tree *t, uint32_t tile, const uint8_t *buf, size_t len);
/* The whole tree. load returns a new tree in *out. */
ON_API on_status on_tree_save(const on_tree *t, const char *path);
ON_API on_status on_tree_load(const char *path, on_tree **out);
ON_API on_status on_tree_load_memory(const uint8_t *buf, size_t len, on_tree **out);
/* The same with a message in err (may be NULL): the OS's reason for an i/o failure ("PATH: cannot
 * write: No space left on device", "PATH: cannot read: not a regular file (a FIFO)"), else
 * "PATH: " and on_status_string. A save never leaves a partial file at path: it writes a uniquely
 * named temporary beside it and renames it over path (a character device is written in place). */
ON_API on_status on_tree_save_msg(const on_tree *t, const char *path, char *err, size_t errlen);
ON_API on_status on_tree_load_msg(const char *path, on_tree **out, char *err, size_t errlen);

/* ---- for bindings and tools: whole files, a tree's streamer (fileio.c, streamer.c) ---------------- */
/* A whole regular file into a malloc'd, NUL-terminated buffer (the caller frees it). Anything else (a
 * FIFO, a device such as /dev/zero, a directory) is refused without reading and without blocking, and
 * a file larger than max bytes (0: no limit but the address space) is refused before anything is
 * allocated. err (may be NULL) gets "PATH: cannot read: REASON", "PATH: not a regular file (a FIFO)",
 * "PATH: N bytes, more than the M a well-formed file can hold" or "PATH: out of memory". */
ON_API on_status on_read_file_max(const char *path, size_t max, uint8_t **out, size_t *len, char *err, size_t errlen);
/* Write len bytes to path so that readers see the old contents or the new, never a mix: a uniquely
 * named temporary beside path, synced, then renamed over it (a character device such as /dev/null is
 * written in place; a directory or FIFO is refused). err gets "PATH: cannot write: REASON". */
ON_API on_status on_write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* ---- OBJ meshes -------------------------------------------------------------------------------- */
/* Read a Wavefront OBJ (v and f lines; polygons fan-split; v, v/vt, v//vn, v/vt/vn; negative
 * indices; CRLF; other lines ignored) and insert its triangles. *nverts / *ntris (may be NULL) get
 * the counts. On failure err (may be NULL) gets a message such as "mesh.obj:12: bad vertex index". */
ON_API on_status on_tree_add_obj(on_tree *t, const char *path, size_t *nverts, size_t *ntris,
                                 char *err, size_t errlen);
/* The same reader without a tree: malloc'd arrays (3*nverts doubles, 3*ntris 0-based indices) that
 * the caller frees; on failure both are NULL. */
/* zlib's CRC-32, chainable (start from 0): the checksum of every octonav file (tilefile.c). */
ON_API uint32_t on_crc32(uint32_t crc, const uint8_t *p, size_t n);
ON_API on_status on_obj_read(const char *path, double **verts, size_t *nverts, uint32_t **tris, size_t *ntris,
                             char *err, size_t errlen);
/* The same over text in memory: buf[len] must be '\0'; the text is changed in place (line ends). */
ON_API on_status on_obj_parse(const char *path, char *buf, size_t len, double **verts, size_t *nverts,
                              uint32_t **tris, size_t *ntris, char *err, size_t errlen);

/* ---- Moving AI voxel maps (.3dmap) ------------------------------------------------------------ */
typedef struct on_voxmap {
    int w, h, d;           /* from the header line "voxel W H D" */
    size_t count;          /* blocked voxels */
    uint16_t *xyz;         /* 3*count coordinates */
} on_voxmap;
/* Parse a .3dmap. On failure err gets "path:line: reason". */
ON_API on_status on_voxmap_read(const char *path, on_voxmap *out, char *err, size_t errlen);
/* The same over text in memory (buf[len] must be '\0'; path only names it in messages). */
ON_API on_status on_voxmap_parse(const char *path, const char *buf, size_t len, on_voxmap *out, char *err,
                                 size_t errlen);
ON_API void on_voxmap_free(on_voxmap *m);
/* A tree (scale 1, origin 0, radius 0) of the given tile depth where voxel (x,y,z) is the box
 * [x,x+1]x[y,y+1]x[z,z+1] and everything inside the tile grid but outside W x H x D is blocked (by
 * the map's bounds, which cost no nodes). */
ON_API on_status on_tree_from_voxmap(const on_voxmap *m, int depth, on_tree **out);
/* Whether on_tree_from_voxmap can bake m at depth at a cost bounded by what a real map needs: the
 * tile grid (at most 2^20 tiles, ON_MAX_TILES_PER_AXIS a side). ON_FAILURE | ON_INVALID with the reason
 * in err (may be NULL) otherwise, e.g. "map too wide for depth 1: 9000 voxels along x need 4500 tiles
 * (at most 4096)". on_tree_from_voxmap refuses what this refuses. */
ON_API on_status on_voxmap_fit(const on_voxmap *m, int depth, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
