/*
 * octonav.h -- the public C API of octonav: 3D navigation over a sparse octree.
 *
 * No Lua in here: a C program can bake, save, load and query trees with this header alone.
 * Spaces: world (the caller's doubles) and nav (leaf = 1 unit, tile (i,j,k) covers
 * [i*N, (i+1)*N) x ... with N = 2^depth); p_nav = (p_world - origin) / scale.
 * Status codes follow Detour: a high bit says success / failure / in progress, low bits give detail.
 */
#ifndef OCTONAV_H
#define OCTONAV_H

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

/* Prepare the search graph of one loaded tile (tile >= 0) or of every loaded tile (tile = -1): free
 * space merged into boxes joined across shared faces, which queries search instead of the cells
 * (opts.graph). Tiles whose graph is still valid are skipped; a change to a tile (any edit, a reload)
 * makes its graph invalid until prepared again, and searches through it go back to the cells.
 * *boxes (may be NULL) gets the number of boxes built. */
ON_API on_status on_tree_prepare(on_tree *t, int64_t tile, size_t *boxes);
/* A prepared tile's graph for tools and bindings: the box count (ON_FAILURE | ON_INVALID when the
 * tile has no valid graph), and box i in world space with its neighbours (indices of boxes of the
 * same tile sharing a face; the array is the tree's, valid until the tile changes). */
ON_API on_status on_tree_tile_box_count(const on_tree *t, uint32_t tile, uint32_t *n);
ON_API on_status on_tree_tile_box(const on_tree *t, uint32_t tile, uint32_t i, double min[3], double max[3],
                                  const uint32_t **nbrs, uint32_t *nnbrs);

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
typedef struct on_los_step_info {
    uint64_t work;   /* node-table reads this call made (the unit of `work`) */
    uint32_t built;  /* tiles whose masks it finished (published: line of sight reads them from now on) */
    uint32_t wanted; /* tiles a line of sight read without masks, still to be built */
    uint32_t left;   /* with all: loaded tiles without masks (the wanted ones included) */
    int partial;     /* a tile's build is under way (resumed by the next call) */
} on_los_step_info;
/* Build mask hierarchies for at most `work` node-table reads (0: no limit) and `seconds` of the
 * monotonic clock (0: no limit): the tiles lines of sight wanted first (lowest index first), then, with
 * all, every loaded tile without masks. A tile's build is resumable: it stops mid-tile and goes on at the
 * next call (a change to the tile abandons it); the losmap is published when whole and is the same,
 * byte for byte, as a one-piece build. One thread: the tree's writer (readers on other threads may run).
 * ON_FAILURE|ON_INVALID when the masks are off, ON_FAILURE|ON_NO_MEMORY when a build could not be
 * made. *info (may be NULL) gets what it did. */
ON_API on_status on_tree_los_step(on_tree *t, uint64_t work, double seconds, int all, on_los_step_info *info);
/* The search over the cells reads a tile's free cells and their face neighbours from the tile's cell
 * adjacency (celladj.h), built on the first search that enters the tile and dropped by every change to
 * it: about 32 bytes a free cell (10.7 MB on DC1; about 11 MB and 50-120 ms a 512^3 terrain tile, 20 times its bytes).
 * This builds every loaded tile's now (no first search pays for a build); *bytes (may be NULL) gets
 * their memory. ON_FAILURE|ON_NO_MEMORY when one could not be built (searches then walk that tile's
 * tree), ON_FAILURE|ON_INVALID when adjacencies are off. */
ON_API on_status on_tree_adjacency_prepare(const on_tree *t, size_t *bytes);
/* on = 1 (the default): as above. on = 0: every neighbour list is walked in the tree (the same paths,
 * for more instructions) and the adjacencies built are freed. An edit: never while another thread
 * reads the tree. */
ON_API void on_tree_set_adjacency(on_tree *t, int on);
/* Landmarks for the search's heuristic (ALT; landmarks.h): n landmark cells (1..64) picked by farthest
 * point, every free cell's graph distance to each (2n + 4 bytes a free cell, the cell adjacencies built
 * too), and the free space's connected components. A search over the plain cells then estimates
 * max(straight line, the landmarks' bound), and answers ON_UNREACHABLE at once for ends in different
 * components (when every tile was loaded at the build and no partial result is asked for). Any change
 * to any tile frees them (searches go back to the straight line); building again replaces them.
 * *bytes (may be NULL) gets their memory. ON_FAILURE|ON_INVALID for n out of range or adjacencies off,
 * ON_FAILURE|ON_NO_MEMORY (none kept). An edit: never while another thread reads the tree. */
#define ON_LANDMARKS_MAX 64
ON_API on_status on_tree_landmarks_prepare(on_tree *t, int n, size_t *bytes);
/* Their memory (0: none). */
ON_API size_t on_tree_landmarks_bytes(const on_tree *t);

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
/* The streamer bound to t (on_streamer_create), or NULL: a tree takes one at a time. */
ON_API struct on_streamer *on_tree_streamer(const on_tree *t);

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

/* ---- temporary obstacles (obstacles.c) ----------------------------------------------------------- */
/* A box blocked until removed (Detour's TileCache obstacles). Adding blocks the box as on_tree_add_box
 * does (inflated by the radius) and remembers, for each loaded tile the box overlaps, the tile's
 * contents before the first obstacle on it. Removing restores, in each of its tiles, what its box
 * reached to those contents and blocks the obstacles still in place that overlap it there again, in
 * the order they were added: the tree reads as if the removed obstacle had never been added (every
 * node's value, the encoded bytes), whatever the order of removal; a tile's last obstacle removed
 * gives back those contents bit for bit. Its cost is what the box touches (obstacles.c). Both bump the salts of the tiles they change (a running search fails stale, a
 * returned path turns invalid) and prepare again the tiles that had a valid prepared graph. A tile
 * changed by other means while covered (an edit, clear, reload or unload) keeps what it holds then:
 * its obstacles' blocks up to that change stay when they are removed. Ids start at 1 and are never
 * reused by a tree. */
ON_API on_status on_tree_add_obstacle(on_tree *t, const double min[3], const double max[3], uint32_t *id);
/* ON_FAILURE | ON_INVALID for an id not in place. */
ON_API on_status on_tree_remove_obstacle(on_tree *t, uint32_t id);
/* The obstacles in place, in the order added: up to cap ids and boxes (6 doubles each: world min, then
 * max; either may be NULL), *n the count; ON_FAILURE | ON_BUFFER_SMALL when *n > cap. */
ON_API on_status on_tree_obstacles(const on_tree *t, uint32_t *ids, double *boxes, size_t cap, size_t *n);

/* ---- area costs (areas.c) ------------------------------------------------------------------------ */
/* An area is an axis-aligned box of world space where travel costs more (cost >= 1, a multiplier of
 * length) or is forbidden (exclude). A point is in an area when it lies strictly inside its box (its
 * faces are outside: a path may run along them). The cost of a segment is the integral along it of
 * the largest multiplier of the areas holding each point (1 where none does): its length when it
 * enters no area; infinite when it enters an excluded one. A search uses the tree's areas and its
 * options' (on_query_opts.areas) together; areas of cost 1 change nothing and are dropped. The cost
 * enters g; the heuristic stays the straight-line distance (cost >= length: admissible). Every edge
 * of the search graph (a segment between node points) is costed this way, an edge entering an
 * excluded area is never taken, and an end inside one fails as blocked. The line-of-sight stages
 * (Lazy Theta*'s parents, the direct segment, smoothing, relaxation, refinement) take a shortcut only
 * when it is not dearer than what it replaces. With areas, ON_GRAPH_AUTO searches the free cells split
 * where an area's faces cross them (down to single leaves), so a search goes round an area even inside
 * one large free cell; over ON_GRAPH_BOXES a path inside one box is its straight segment. The search is
 * exact on its graph (A* over the node points with weight 1), not over all paths in space: smoothing
 * and relaxation then pull the path towards the continuous optimum without making it dearer. info.cost
 * is the result's cost in world units. */
typedef struct on_area {
    double min[3], max[3];   /* world units, min < max on every axis, finite */
    double cost;             /* multiplier >= 1, finite (not read when exclude is set) */
    int exclude;             /* nonzero: never entered (as if blocked) */
} on_area;
/* Replace the tree's areas with a copy of n areas (n = 0: none). ON_FAILURE | ON_INVALID (nothing
 * changed) when one is not valid; ON_NO_MEMORY. Searches already started keep the areas they read. */
ON_API on_status on_tree_set_areas(on_tree *t, const on_area *areas, size_t n);
/* The tree's areas (the tree's array, valid until the next set): their count. */
ON_API size_t on_tree_areas(const on_tree *t, const on_area **areas);
/* 1 when a is a valid area (finite min < max, cost finite >= 1 unless excluded). */
ON_API int on_area_valid(const on_area *a);

/* ---- search (the query object) ------------------------------------------------------------------ */
/* A query owns its search memory (growing by doubling with the cells its searches reach, up to
 * max_nodes: about 0.2 MB for a typical query whatever max_nodes) and reads one tree, which must
 * outlive it; many queries can share a tree. Once a query's searches have met their largest size, a
 * search allocates nothing.
 * Sliced like Detour: init, update(max_expansions) until it stops being ON_IN_PROGRESS, finalize. */
typedef struct on_query on_query;

enum { ON_SMOOTH_NONE = 0, ON_SMOOTH_GREEDY = 1, ON_SMOOTH_BINARY = 2 };
/* Where a search node's point is: the centre of the face its cell was entered through (default), or
 * the cell's centre (a fixed graph: weight 1 is then optimal on it; Lazy Theta* always uses centres). */
enum { ON_POINTS_FACE = 0, ON_POINTS_CENTRE = 1 };
/* What a search runs over. AUTO: the prepared boxes where it can (on_tree_prepare; face points
 * without Lazy Theta*; back to the cells when it meets a tile without a valid graph). CELLS: always
 * the cells. BOXES: only the prepared boxes (face points without Lazy Theta*, else ON_INVALID); the
 * search fails with ON_UNPREPARED (info.loading_tile: the tile) when an end's tile, or a tile it
 * reaches, has no valid graph, instead of going back to the cells. */
enum { ON_GRAPH_AUTO = 0, ON_GRAPH_CELLS = 1, ON_GRAPH_BOXES = 2 };

/* A heuristic standing in for the built-in one: nav-space point, goal and cell size in leaves.
 * Return NAN to abort the search (it then fails with ON_INVALID). */
typedef double (*on_heuristic_fn)(void *ud, const double p[3], const double goal[3], double size);

typedef struct on_query_opts {
    double weight;           /* f = g + weight*h - size_bias*size; default 1.39 (1 = optimal on the centre graph) */
    double size_bias;        /* default 0 (the seed's search: weight 2.5, size_bias 1) */
    int points;              /* ON_POINTS_*: default ON_POINTS_FACE */
    int any_angle;           /* Lazy Theta*: parents may be any visible ancestor (one check per expansion) */
    int refine;              /* pull the waypoints tight inside the corridor of cells (default on) */
    int smooth;              /* ON_SMOOTH_*: string pulling by line of sight after the search (default greedy) */
    size_t max_expansions;   /* 0 = no limit; a search that reaches it fails with ON_BUDGET */
    int partial;             /* on failure, return the path to the cell nearest the goal (ON_PARTIAL);
                              * nearest by its node's point (with face points: where the search
                              * entered it) */
    size_t escalate;         /* after this many expansions (default 1500; 0 = never) switch to
                              * escalate_weight and escalate_size_bias (2.5, 1: the seed's search) for
                              * the rest of the search: trap cases stop flooding */
    double escalate_weight, escalate_size_bias;
    int direct;              /* with smoothing on: when the goal is in sight of the start, return the
                              * straight segment without searching (default 1) */
    int relax;               /* with smoothing on: passes sliding each corner of the smoothed path
                              * along each axis towards the shortest position between its neighbours,
                              * while both segments stay in sight and the turns keep to the visibility
                              * rule; each pass finer than the last (default 1; 0 = off) */
    int graph;               /* ON_GRAPH_AUTO (default), ON_GRAPH_CELLS or ON_GRAPH_BOXES */
    on_heuristic_fn heuristic;
    void *heuristic_ud;
    const on_area *areas;    /* areas of this search on top of the tree's (read by init; default none) */
    size_t nareas;
} on_query_opts;

ON_API void on_query_opts_default(on_query_opts *o);

typedef struct on_query_info {
    double length;           /* world units, of the returned path */
    size_t expansions;       /* cells expanded */
    size_t cells;            /* cells in the corridor of the result */
    size_t visited;          /* cells reached (search nodes used) */
    double nearest[3];       /* with ON_BLOCKED: the nearest free point to the blocked endpoint */
    int which;               /* with ON_OUTSIDE / ON_BLOCKED / ON_UNLOADED: 0 start, 1 goal */
    uint32_t loading_tile;   /* with ON_LOADING: the tile the search waits for; with ON_UNPREPARED:
                              * the tile without a valid prepared graph; with ON_UNLOADED: the
                              * unloaded tile the endpoint `which` lies in */
    int graph;               /* what the search ran over: ON_GRAPH_BOXES or ON_GRAPH_CELLS (expansions,
                              * cells and visited count its nodes) */
    double cost;             /* world units: the returned path's cost under the areas (= length without) */
    size_t areas;            /* the areas the search used (the tree's and its own, but those of cost 1) */
    size_t neighbors;        /* neighbour entries the search looked at (edges scanned from expanded nodes) */
    size_t los;              /* line-of-sight checks the query made (search, direct, smoothing, relaxation) */
    size_t turns;            /* turn checks (the visibility rule at a corner) of smoothing and relaxation */
} on_query_info;

ON_API on_status on_query_create(const on_tree *t, size_t max_nodes, on_query **out);
ON_API void on_query_destroy(on_query *q);
ON_API const on_tree *on_query_tree(const on_query *q);
/* Start a search between world points. Failures at once: ON_OUTSIDE, ON_BLOCKED, ON_UNLOADED (an
 * endpoint's tile is not loaded: info.loading_tile; a tile the search reaches later makes it wait,
 * ON_LOADING) (info via finalize). */
ON_API on_status on_query_init(on_query *q, const double a[3], const double b[3], const on_query_opts *o);
/* Expand up to max_iter cells. ON_IN_PROGRESS while running (with ON_LOADING while it waits for an
 * unloaded tile it reached: call again once the tile is in); ON_SUCCESS when found; ON_FAILURE with
 * ON_UNREACHABLE, ON_OUT_OF_NODES, ON_BUDGET, ON_STALE (a tile the search read changed or was
 * unloaded) or ON_INVALID (heuristic). Tiles loaded while it runs are welcome. */
ON_API on_status on_query_update(on_query *q, size_t max_iter, size_t *done);
/* The path (world points, x,y,z each) of a finished search: *npath gets the point count; with cap too
 * small only the count is reported (ON_BUFFER_SMALL). Returns the search's final status. */
ON_API on_status on_query_finalize(on_query *q, double *path, size_t cap, size_t *npath, on_query_info *info);
/* The tiles the result depends on: those of its corridor of cells and those its final (smoothed,
 * relaxed) segments pass through or touch where they cross a lattice edge, each with its salt when the
 * search or the smoothing read it (a path is stale once one of them changes: compare with
 * on_tree_tile_salt). Same buffer rules as on_tree_neighbors. */
ON_API on_status on_query_path_tiles(const on_query *q, uint32_t *tiles, uint32_t *salts, size_t cap, size_t *n);
/* What the search used, for debugging and drawing (search_corridor.c), as world-space boxes of 6
 * doubles (min x, y, z, then max x, y, z; free cells are cubes, prepared boxes need not be). The
 * buffers are the caller's: *n gets the count; up to cap entries are filled (boxes or expanded may be
 * NULL: the count alone); ON_FAILURE | ON_BUFFER_SMALL when cap < *n. Over prepared boxes, a tile the
 * search read that changed since makes them ON_FAILURE | ON_STALE (*n = 0), as for finalize.
 * The corridor of the result on_query_finalize built (whole or partial): the graph nodes the path was
 * made through, in order from the start's, info.cells of them; for a direct result (the goal in
 * sight), the tree cells the straight segment crosses. ON_FAILURE | ON_INVALID when there is no
 * result (no search finalized since the last init, or it failed without a partial path). */
ON_API on_status on_query_corridor(on_query *q, double *boxes, size_t cap, size_t *n);
/* The nodes the search reached (info.visited of them, as of the last update; a running search's so
 * far), in the order first reached; expanded[i] = 1 for those it expanded (the closed set:
 * info.expansions of them), 0 for those still open or never worth opening. A search that never ran
 * (a direct or one-cell result, or a failure at init) reached none. */
ON_API on_status on_query_visited(on_query *q, double *boxes, uint8_t *expanded, size_t cap, size_t *n);
/* init + update to the end + finalize (a search that would wait for a tile fails with ON_LOADING; an
 * endpoint in an unloaded tile, with ON_UNLOADED). */
ON_API on_status on_query_find(on_query *q, const double a[3], const double b[3], const on_query_opts *o,
                               double *path, size_t cap, size_t *npath, on_query_info *info);

/* Nearest free point to p within `radius` leaves (search of the leaf lattice); ON_FAILURE when none. */
ON_API on_status on_tree_nearest_free(const on_tree *t, const double p[3], double radius_leaves, double out[3]);

/* ---- path server (pathserver.c): path requests answered on worker threads over one shared tree ---- */
/*
 * A path server owns N worker threads, each with its own query object (on_query_create) over the
 * same tree. The caller submits requests (start, goal, options) and collects finished results in
 * on_pathserver_update, on its own thread, in the order they finished. While requests are queued or
 * running the tree is read by the workers and must not change: edit it only while the server is idle
 * (on_pathserver_busy() == 0) or paused (on_pathserver_pause waits for the running requests and holds
 * the queued ones until on_pathserver_resume). Searches only read the tree (each query keeps its own
 * lookup cache; prepared box graphs are built by on_tree_prepare, never lazily by a search), so any
 * number of workers may read it at once.
 */
typedef struct on_pathserver on_pathserver;

typedef struct on_pathserver_params {
    int workers;             /* 0..64 threads; 0 runs the requests inside on_pathserver_update */
    size_t max_nodes;        /* each worker's query size, 2..2^30 (0: the default 262144) */
    size_t max_queued;       /* requests waiting or unread at most (0: no limit); beyond it submit
                              * fails with ON_BUFFER_SMALL */
} on_pathserver_params;

/* A finished request: what on_query_find reported for it. Owned by the server, valid until the next
 * on_pathserver_update or on_pathserver_destroy. */
typedef struct on_path_result {
    uint64_t id;             /* as returned by on_pathserver_submit */
    on_status status;        /* on_query_find's status (ON_NO_MEMORY: the result could not be kept) */
    on_query_info info;
    const double *path;      /* npath world points, x,y,z each (NULL when npath is 0) */
    size_t npath;
    const uint32_t *tiles;   /* the tiles the path depends on and their salts (on_query_path_tiles) */
    const uint32_t *salts;
    size_t ntiles;
} on_path_result;

/* The tree must outlive the server. */
ON_API on_status on_pathserver_create(const on_tree *t, const on_pathserver_params *p, on_pathserver **out);
/* Stops the workers (a running request finishes first), drops queued requests and frees everything. */
ON_API void on_pathserver_destroy(on_pathserver *ps);
/* Queue a search from a to b (world points) with options o (NULL: on_query_opts_default). A C
 * heuristic in o is called on worker threads. *id (may be NULL) gets the request's number (from 1).
 * ON_INVALID for a non-finite point; ON_BUFFER_SMALL beyond max_queued; ON_NO_MEMORY. */
ON_API on_status on_pathserver_submit(on_pathserver *ps, const double a[3], const double b[3],
                                      const on_query_opts *o, uint64_t *id);
/* Hand back the requests finished since the last call (with 0 workers: run every queued request
 * first). wait != 0: block until every submitted request has finished (a paused server runs nothing:
 * ON_FAILURE|ON_INVALID). *res / *n: the results, valid until the next update. */
ON_API on_status on_pathserver_update(on_pathserver *ps, int wait, const on_path_result **res, size_t *n);
/* Requests submitted and not yet handed back by on_pathserver_update. */
ON_API size_t on_pathserver_pending(on_pathserver *ps);
/* Nonzero while workers may be reading the tree: requests queued (not paused) or running (with 0
 * workers the tree is read only inside on_pathserver_update: never busy between calls). */
ON_API int on_pathserver_busy(on_pathserver *ps);
/* Let the running requests finish and start no new ones: on return the tree may be edited. */
ON_API void on_pathserver_pause(on_pathserver *ps);
ON_API void on_pathserver_resume(on_pathserver *ps);

/* ---- streaming (the streamer object) ------------------------------------------------------------ */
/* Tiles of a tree come and go around agents. Files (DIR/tiles/I_J_K.tile, tile blobs) are read and
 * decoded on worker threads; on_streamer_update, on the caller's thread, installs finished tiles,
 * starts the loads now needed and unloads far tiles. A tile is wanted when the distance from an agent
 * to the tile's box is <= load_padding (closed: a tile exactly load_padding away loads, on every
 * side), or it is locked or forced; a loaded tile stays while that distance is <= unload_padding for
 * some agent (unload_padding > load_padding), or it is locked or forced. A tree takes one streamer at
 * a time (a second on_streamer_create answers ON_INVALID). Destroying the tree stops its streamer
 * first: the workers are joined, queued loads dropped, and every streamer call answers ON_INVALID
 * (tile_state -1, stats zero) until on_streamer_destroy. Nothing else may change the tree's tiles
 * while the streamer runs. */
typedef struct on_streamer on_streamer;

typedef struct on_streamer_params {
    double load_padding;     /* world units, >= 0 */
    double unload_padding;   /* world units, > load_padding */
    int workers;             /* 0..16 threads; 0 decodes inside on_streamer_update */
    size_t max_loaded;       /* 0 = no limit; see on_streamer_update for how it yields */
    int prepare;             /* 1: workers also build each tile's search graph (on_tree_prepare) */
} on_streamer_params;

enum { ON_TILE_UNLOADED = 0, ON_TILE_QUEUED = 1, ON_TILE_LOADED = 2, ON_TILE_FAILED = 3 };
enum { ON_EVENT_LOADED = 1, ON_EVENT_UNLOADED = 2, ON_EVENT_FAILED = 3, ON_EVENT_TREE_LOADED = 4,
       ON_EVENT_TREE_FAILED = 5, ON_EVENT_GRAPH_FAILED = 6 };

typedef struct on_stream_event {
    uint32_t tile;           /* for the TREE events: the id given to on_streamer_load_tree */
    int kind;                /* ON_EVENT_* */
    on_status status;        /* for the FAILED events: why (ON_IO, ON_CORRUPT, ON_NO_MEMORY, ...) */
    on_tree *tree;           /* ON_EVENT_TREE_LOADED: the tree read; the caller owns it from then on */
    char err[256];           /* ON_EVENT_TREE_FAILED: "PATH: reason"; ON_EVENT_GRAPH_FAILED: the reason
                              * alone ("No such file or directory", "corrupt", ...) */
} on_stream_event;

typedef struct on_streamer_stats {
    size_t agents, loaded, queued, failed, locked;
    size_t waiting;          /* tiles within load_padding of an agent that max_loaded held back */
    size_t evicted;          /* tiles unloaded early to make room under max_loaded, since creation */
    size_t decoded;          /* tiles decoded since creation */
    double decode_seconds;   /* worker time spent reading and decoding them */
    size_t tree_bytes;       /* the tree's resident bytes now (on_tree_stats) */
} on_streamer_stats;

/* Creating marks every tile of t unloaded (its contents freed). */
ON_API on_status on_streamer_create(on_tree *t, const char *dir, const on_streamer_params *p, on_streamer **out);
ON_API void on_streamer_destroy(on_streamer *s); /* stops and joins the workers; tiles stay as they are */
ON_API on_status on_streamer_add_agent(on_streamer *s, const double p[3], uint32_t *id);
ON_API on_status on_streamer_move_agent(on_streamer *s, uint32_t id, const double p[3]);
ON_API on_status on_streamer_remove_agent(on_streamer *s, uint32_t id);
ON_API on_status on_streamer_lock(on_streamer *s, uint32_t tile);   /* counted; a locked tile loads and stays */
ON_API on_status on_streamer_unlock(on_streamer *s, uint32_t tile);
ON_API on_status on_streamer_force_load(on_streamer *s, uint32_t tile);   /* pinned until force_unload */
ON_API on_status on_streamer_force_unload(on_streamer *s, uint32_t tile); /* unpins; unloads now unless locked */
ON_API on_status on_streamer_retry(on_streamer *s, uint32_t tile);        /* a failed tile may load again */
ON_API int on_streamer_tile_state(const on_streamer *s, uint32_t tile);   /* ON_TILE_*, -1 for a bad tile */
/* Read a whole tree file (a world's hole: small trees the streamer does not manage) on a worker; a
 * later update reports it as ON_EVENT_TREE_LOADED / ON_EVENT_TREE_FAILED with `id` in .tile (with
 * wait, the update that waits). Non-regular files (a FIFO) fail at once (fileio.c), never block. */
ON_API on_status on_streamer_load_tree(on_streamer *s, uint32_t id, const char *path);
/* Tile graphs streamed with their tiles (w NULL: none, the default). With a world graph w of the same
 * grid (depth and tiles; else ON_INVALID), the worker that reads a tile also reads its graph file
 * (DIR/tiles/I_J_K.graph beside it, a regular file of at most max_bytes, 0 = no limit) and decodes
 * it (on_tgraph_decode at the tree's depth); the update that installs the tile adds the graph to w
 * (on_wgraph_add_tile), and every unload of a tile (update, eviction, force_unload) removes its graph
 * from w. A graph that cannot be read, decoded or added leaves its tile loaded without one and is an
 * ON_EVENT_GRAPH_FAILED event (after the tile's ON_EVENT_LOADED). Set it before the first update; w
 * must stay alive until it is unset or the streamer destroyed. */
struct on_wgraph; /* (the world graph, below) */
ON_API on_status on_streamer_set_graph(on_streamer *s, struct on_wgraph *w, size_t max_bytes);
/* wait != 0: block until every load queued so far has finished and install it in this call.
 * max_loaded counts every loaded or queued tile. Locked and forced tiles always load (they may take
 * the count above the limit). Above the limit, and whenever a needed tile finds no room, a loaded
 * tile that only unload_padding keeps is unloaded (farthest first, an UNLOADED event). Tiles within
 * load_padding of an agent load nearest first while loaded + queued < max_loaded; the rest wait,
 * listed by on_streamer_waiting (and counted in stats.waiting) until an update finds room.
 * *ev / *nev: what changed, owned by the streamer, valid until the next update (ON_NO_MEMORY in the
 * status when an event could not be recorded). */
ON_API on_status on_streamer_update(on_streamer *s, int wait, const on_stream_event **ev, size_t *nev);
ON_API void on_streamer_stats_get(on_streamer *s, on_streamer_stats *st);
/* The tiles the last update held back because of max_loaded (owned by the streamer, valid until the
 * next update). */
ON_API void on_streamer_waiting(const on_streamer *s, const uint32_t **tiles, size_t *n);

/* ---- World graph (route.h, portals.h): tile portal graphs, the world graph, the route planner ------ */
typedef struct on_tgraph on_tgraph; /* one tile's portal graph */
typedef struct on_wgraph on_wgraph; /* tiles' graphs linked across their shared faces */
typedef struct on_route on_route;   /* the sliced Cell-level planner over a world graph */

typedef struct on_tgraph_opts {
    int bound;             /* S, the portal size bound in leaves: 0 = default (on_tgraph_bound); else
                            * 1..n (rounded down to a power of two) */
    double stretch;        /* t >= 1 (0 = 1): of a component's pairs, only a greedy t-spanner keeps its
                            * weight (pairs by increasing weight; dropped (0) when the edges kept so far
                            * join its ends within t x its weight; components of up to 128 portals):
                            * t = 1 keeps every pair */
    uint32_t tag;          /* stored as is */
} on_tgraph_opts;

/* What a tile graph holds (route.info). */
typedef struct on_tgraph_info {
    int depth, bound, wshift;
    uint32_t tag, crc, portals, edges, components, rects;
    size_t bytes;
} on_tgraph_info;

/* The graph of a loaded tile of a tree (its prepared boxes when valid, else built here). */
ON_API on_status on_tgraph_build_tile(const on_tree *t, uint32_t tile, const on_tgraph_opts *o, on_tgraph **out);
ON_API void on_tgraph_free(on_tgraph *g);
ON_API void on_tgraph_get_info(const on_tgraph *g, on_tgraph_info *out);
/* Portal p's point (0 <= p < info.portals): the centre of its largest rectangle on its face, in the
 * tile's leaves (0..2^depth on each axis); its face (0..5: -x, +x, -y, +y, -z, +z) is returned. */
ON_API int on_tgraph_portal_point(const on_tgraph *g, uint32_t p, double out[3]);
/* The blob (portals.h gives the format): encode reports the size in *len (buf NULL or cap too small:
 * ON_FAILURE|ON_BUFFER_SMALL); decode refuses anything malformed (ON_CORRUPT), another version
 * (ON_VERSION), another depth than expected_depth (ON_INVALID; 0 accepts any). */
ON_API on_status on_tgraph_encode(const on_tgraph *g, uint8_t *buf, size_t cap, size_t *len);
ON_API on_status on_tgraph_decode(const uint8_t *buf, size_t len, int expected_depth, on_tgraph **out);

typedef struct on_wgraph_stats {
    size_t tiles;          /* tiles with a graph */
    size_t portals, edges, links; /* edges: pairs of portals of one component; links: once per pair */
    size_t rects, faces;   /* face rectangles kept for links to come, and their faces */
    size_t dormant;        /* links kept for tiles that left */
    size_t unresolved;     /* face pairs of present tiles that could not be linked (see above) */
    size_t bytes;          /* everything the world graph holds */
} on_wgraph_stats;

/* A world graph for the tile grid of p (tiles, depth, scale, origin). */
ON_API on_status on_wgraph_create(const on_tree_params *p, on_wgraph **out);
ON_API void on_wgraph_destroy(on_wgraph *w);
/* Give tile `tile` graph g (built for the grid's depth; the world takes it and frees it, also on
 * failure), replacing any present one, and link it to its present neighbours. ON_INVALID for a bad
 * tile or depth. */
ON_API on_status on_wgraph_add_tile(on_wgraph *w, uint32_t tile, on_tgraph *g);
/* Link the unresolved face pairs whose missing side has its tile loaded in t (same grid) and built
 * from the same contents (its portals' CRC); *resolved (may be NULL) gets how many. Cheap when there
 * are none. The Lua binding calls it before each start. */
ON_API on_status on_wgraph_resolve(on_wgraph *w, const on_tree *t, size_t *resolved);
/* Drop tile's graph and its links (ON_SUCCESS also when it had none). */
ON_API on_status on_wgraph_remove_tile(on_wgraph *w, uint32_t tile);
ON_API int on_wgraph_has_tile(const on_wgraph *w, uint32_t tile);
/* The identity of the graph the tile holds (the CRC-32 its blob ends with: what pack.blob_id gives for
 * the file), 1; 0 when the tile holds none. */
ON_API int on_wgraph_tile_id(const on_wgraph *w, uint32_t tile, uint32_t *id);
/* Bumped by every add and remove: a running route fails with ON_STALE when it changed. */
ON_API uint64_t on_wgraph_revision(const on_wgraph *w);
ON_API void on_wgraph_stats_get(const on_wgraph *w, on_wgraph_stats *st);
const on_tree_params *on_wgraph_params(const on_wgraph *w);

/* ---- planning -------------------------------------------------------------------------------- */
enum { ON_ROUTE_FAR = 0, ON_ROUTE_SAME_TILE = 1, ON_ROUTE_NEIGHBOURS = 2 };

/* One crossing of a route from a tile into the next, in order. */
typedef struct on_route_step {
    uint32_t tile, portal;       /* the tile left and its portal */
    uint32_t to_tile, to_portal; /* the tile entered and its portal */
    double point[3];             /* where it crosses, world space: on the shared face, inside the rectangle
                                  * where both portals overlap (free on both sides), pulled towards the
                                  * straight line between its neighbours */
} on_route_cross;

typedef struct on_route_info {
    int near;                    /* ON_ROUTE_*: SAME_TILE / NEIGHBOURS: no steps, run one direct query */
    double cost;                 /* world units: the graph's cost start -> portals -> goal (with endpoint
                                  * costs): the length of a free path through the portals' points */
    double length;               /* world units: the polyline start -> crossings -> goal (without endpoint
                                  * costs), crossings pulled taut; a straight segment need not be free */
    size_t start, goal;          /* which start point and goal point the route joins */
    size_t expansions;           /* portals expanded */
    size_t join_boxes;           /* boxes the endpoints' local searches settled (their work) */
    uint32_t loading_tile;       /* with ON_LOADING: the tile whose graph (or, at an endpoint, tree tile) is missing */
    int which;                   /* with ON_OUTSIDE / ON_BLOCKED: 0 start, 1 goal */
} on_route_info;

/* max_nodes: search nodes (every portal of each tile reached, plus one a tile: a tile's nodes are
 * made together), 0 = 65536; ON_OUT_OF_NODES beyond. */
ON_API on_status on_route_create(const on_wgraph *w, size_t max_nodes, on_route **out);
ON_API void on_route_destroy(on_route *r);
/* Start a route between world points a and b. The tree supplies the endpoint tiles' boxes (their tiles
 * must be loaded: else ON_FAILURE|ON_LOADING with the tile); fails at once with ON_OUTSIDE, ON_BLOCKED,
 * ON_LOADING (an endpoint tile's graph is missing), ON_UNREACHABLE (an endpoint reaches no portal),
 * ON_NO_MEMORY; succeeds at once when near. Else ON_IN_PROGRESS: call on_route_step. */
ON_API on_status on_route_start(on_route *r, const on_tree *t, const double a[3], const double b[3]);
/* The same with endpoint sets: ns start points (3 doubles each) with extra costs (world units, may be
 * NULL: 0), ng goal points likewise. Never near; a start and a goal in one tile also join directly
 * (the local search's path between them). */
ON_API on_status on_route_start_multi(on_route *r, const on_tree *t, const double *starts, const double *start_cost,
                               size_t ns, const double *goals, const double *goal_cost, size_t ng);
/* Expand up to budget portals: ON_IN_PROGRESS, ON_SUCCESS (found), or ON_FAILURE with ON_UNREACHABLE,
 * ON_LOADING (info.loading_tile), ON_OUT_OF_NODES, ON_STALE (the world graph changed). */
ON_API on_status on_route_step(on_route *r, size_t budget, size_t *done);
/* The route's steps (cap too small: only *n, ON_BUFFER_SMALL) and info; returns the search status. */
ON_API on_status on_route_result(const on_route *r, on_route_cross *steps, size_t cap, size_t *n, on_route_info *info);
ON_API size_t on_route_bytes(const on_route *r);

#ifdef __cplusplus
}
#endif
#endif
