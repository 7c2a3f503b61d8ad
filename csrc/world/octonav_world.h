/*
 * octonav_world.h -- the public C API of the world room (csrc/world/): tile portal graphs, the world
 * graph and the sliced route planner. Part of octonav.h (include that); on the search's
 * (octonav_search.h).
 */
#ifndef OCTONAV_WORLD_API_H
#define OCTONAV_WORLD_API_H

#include "octonav_search.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    size_t bytes;          /* everything the world graph holds; the tile records it shares with other
                            * graphs (on_wgraph_share) are counted by the first of them only */
    size_t records;        /* distinct tile records (portals and weights) of the graphs sharing them:
                            * one for all the tiles whose graphs are identical */
    size_t record_bytes;   /* their bytes (with the table that finds them) */
    size_t sharing;        /* graphs sharing them (1: this one alone) */
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
/* Graph w (holding no tile: else ON_INVALID) holds its tile records with `with` and the graphs sharing
 * with it: a tile graph identical to one any of them holds (open air: the same file for every agent
 * radius of a one-tree pack) is one record, freed when its last tile, in any graph, goes. Routes do not
 * change. The graphs sharing are changed (add, remove, destroy) on one thread at a time. */
ON_API on_status on_wgraph_share(on_wgraph *w, on_wgraph *with);
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
    size_t join_work;            /* work units (boxes popped, lazy blocks built x 8) the last start or step
                                  * spent joining (on_route_set_join_limit) */
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
/* Joins cut to fit: each start, and each step while the joins are not done, spends at most `work`
 * units (a box settled or a heap entry popped is one, a block of an unprepared tile built 8; 0: no
 * limit; one unit's worth may pass it: a box whose neighbour blocks are built with it) and `seconds`
 * of the monotonic clock (0: none; read after each unit) on the endpoints' local searches; a start
 * stopped so answers ON_IN_PROGRESS with on_route_joining true, and each on_route_step goes on joining
 * (within the limit again) before it expands portals: the joins, and so the route, are those of one
 * whole start, exactly (tests/world/test_reach_resume.c). `seconds` bounds a step's portals too: its
 * expansion stops once `seconds` have passed since the step began (read before each portal but the first,
 * joins included), answering ON_IN_PROGRESS with *done below its budget; the search goes on from there,
 * so the route is the same. A planner holds its join scratch while its joins are under way (a shared
 * one, route.h: another start meanwhile grows a scratch of its own). */
ON_API void on_route_set_join_limit(on_route *r, size_t work, double seconds);
ON_API int on_route_joining(const on_route *r);
/* A plan's radius: `leaves` (nav units, beyond what the tree keeps; 0, the default: none) for the
 * on_route_start_multi calls that follow (on_route_start keeps none). A start and a goal in one tile then join directly only by a way inside the tile that keeps
 * it (the local searches of both ends enter a box only along a segment that keeps it: the sphere's line
 * of sight), else through portals; an end whose search so meets nothing joins as a point (as without). */
ON_API void on_route_set_join_radius(on_route *r, double leaves);
/* The world search's heuristic weight (1 <= w <= 4; default 1.5) for the starts that follow: 1 gives the
 * cheapest route over the world graph, a larger w a faster search whose route costs at most w times that.
 * Another value is refused (ON_FAILURE | ON_INVALID, the weight unchanged); a new weight ends a search
 * under way. on_route_weight reads it (0 for NULL). */
ON_API on_status on_route_set_weight(on_route *r, double weight);
ON_API double on_route_weight(const on_route *r);
/* The route's steps (cap too small: only *n, ON_BUFFER_SMALL) and info; returns the search status. */
ON_API on_status on_route_result(const on_route *r, on_route_cross *steps, size_t cap, size_t *n, on_route_info *info);
ON_API size_t on_route_bytes(const on_route *r);

#ifdef __cplusplus
}
#endif
#endif
