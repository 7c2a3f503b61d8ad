/*
 * octonav_search.h -- the public C API of the search room (csrc/search/): the prepared boxes, cell
 * adjacencies and landmarks a tree keeps for its searches, temporary obstacles, area costs and the
 * search (the query object). Part of octonav.h (include that); on the core's (octonav_core.h).
 */
#ifndef OCTONAV_SEARCH_API_H
#define OCTONAV_SEARCH_API_H

#include "octonav_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the tree's search-side tables: prepared boxes, cell adjacencies, landmarks ------------- */
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
    double radius;           /* the agent's radius, world units (default 0: a point). With r > 0 the path
                              * keeps R = ceil(r / scale) leaves from blocked space and the map's border
                              * (the tree baked with blocked space grown by r: geometry.c's inflation),
                              * over the free cells split where that varies (ON_GRAPH_AUTO: the cells;
                              * ON_GRAPH_BOXES: ON_INVALID), line of sight for the grown space, no
                              * direct check; an end nearer blocked space fails as ON_BLOCKED (issue 33) */
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
/* The bytes q holds between searches: its node pool, maps and open list (grown to its largest search
 * so far), caches and result buffers (query_mem.c). */
ON_API size_t on_query_bytes(const on_query *q);
/* The nodes q's search can still make before its node pool must grow (0: its next new node grows it;
 * SIZE_MAX: it is as large as max_nodes allows), *nodes (may be NULL) the nodes it holds now;
 * on_query_grow_ahead grows it now for `room` more nodes (the same doublings the search would make, its
 * nodes indexed again: ~1-2.5 ms at 16,000 nodes), so that a caller with a deadline pays the growth at a
 * call's start rather than in whichever expansion reaches it (q:step_until). ON_FAILURE | ON_NO_MEMORY on failure. */
ON_API size_t on_query_room(const on_query *q, size_t *nodes);
ON_API on_status on_query_grow_ahead(on_query *q, size_t room);
/* A query cuts its node pool back at a search's start after 16 searches in a row that used under an
 * eighth of it (its pages given back: a TLB shootdown of every CPU the process ran on, 0.2-3.75 ms here).
 * on_query_hold_trim(q, 1) leaves that cut to on_query_trim, which a caller with a frame to keep makes
 * when it has time: it ends q's search, if any, and returns the bytes given back (0 when no cut was
 * due, or when q's last search used the room again: then nothing changes and the cut is dropped). */
ON_API void on_query_hold_trim(on_query *q, int hold);
ON_API size_t on_query_trim(on_query *q);
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
/* The finalize of a finished search (the corridor, refine, smoothing, relaxation on_query_finalize
 * does) in slices: at most max_checks (0: no limit) line-of-sight and turn checks of the tree this
 * call, fewer when stop (may be NULL) returns nonzero after one (a clock); each call makes one at
 * least. ON_IN_PROGRESS until the result is built, then ON_SUCCESS (also when there is nothing to
 * build: on_query_finalize then reports the search's status); ON_FAILURE with ON_STALE or
 * ON_NO_MEMORY as on_query_finalize; ON_FAILURE | ON_INVALID while the search runs. *checks (may be NULL): the
 * checks this call made. The result is the whole finalize's, byte for byte (each slice runs the
 * finalize again from the start with the answers the slices before got, without reading the tree);
 * on_query_finalize reads it, or builds what is left at once. */
ON_API on_status on_query_finalize_step(on_query *q, size_t max_checks, int (*stop)(void *ud), void *ud, size_t *checks);
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


#ifdef __cplusplus
}
#endif
#endif
