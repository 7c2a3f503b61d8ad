/*
 * route.h -- the world graph (tiles' portal graphs linked across shared faces) and the sliced
 * Cell-level route planner over it (internal; the Lua binding is lua_route.c).
 *
 * World graph: tile graphs (portals.h) are added and removed at run time, Detour-style: when a tile's
 * graph is added, its portals are linked to those of each face neighbour whose graph is present (a
 * rectangle of one overlapping a rectangle of the other with positive area on the shared face: a
 * crossing exists there for sure); one link per pair of portals, stored once (by the tile on the
 * pair's negative side), its crossing point the centre of the largest rectangle overlap (ties by
 * position); its cost |portal point - crossing| + |crossing - other portal point|. Links need nothing
 * but the two graphs, so the Lua side may keep every tile's graph resident while the tiles stream.
 * Memory (wgraph.h): a tile's graph is kept packed (portal points, components, 16-bit weight
 * matrices, owned links); the rectangles of a face, needed only to link it, are kept only while the
 * neighbour across it has no graph. When a tile's graph is removed, the links of each of its linked
 * pairs are kept as dormant, keyed by the CRCs of both graphs: adding the same graph again restores
 * them. A graph different from the one a neighbour was linked with (a rebake) meets a neighbour
 * whose face rectangles were dropped: that face pair is "unresolved" (stats.unresolved) until the
 * neighbour's graph is added again or on_wgraph_resolve rebuilds the neighbour's portals from its
 * loaded tree tile (checked against the graph's portal CRC); the planner treats an unresolved pair
 * as a missing tile (ON_LOADING with the tile whose face rectangles are gone).
 * Planner (an on_route, reading one world graph that must outlive it): A* over portals, started at
 * the portals that a local search from each start point actually reaches inside its own tile
 * (Dijkstra over the tile's boxes, taken from the tree: HPA*-style insertion, never by straight line),
 * ended at those the same search from each goal point reaches. The heuristic (straight line to the
 * nearest goal plus its cost) is admissible, so the route is optimal over the graph. A component
 * closed inside terrain is never part of a route: only links and edges are followed. A face whose
 * neighbour tile has no graph is pushed as a "missing tile" node: popped before the goal, the search
 * fails with ON_LOADING and that tile (a route through it could be shorter); after, it is ignored.
 * Start and goal in one tile or in neighbouring tiles (one point each): the search stops at once with
 * success and info.near set, for the caller's direct query. Holes and doors are endpoint sets: start
 * and goal may each be several points with an extra cost (a door's outside point with the cost inside
 * the hole); closed doors are left out of the set. Costs are nav leaves inside, world units outside.
 * Memory is allocated by create and start; steps allocate nothing.
 * Quality (tests/test_route.c, random worlds of 8- and 16-leaf tiles against Dijkstra over all free
 * leaves, 26-connected without corner cutting): found iff reachable; the graph cost (through the
 * portals' points) is at most 2 x the optimum + 2 leaves (measured mean 1.19, max 1.94: the forced
 * detour through each portal's point), the polyline through the pulled crossings mean 0.93, max 1.36
 * of it (its straight segments are not checked: the caller's queries walk between crossings); the
 * same with one portal per face region (the default bound) as with the former 16-leaf squares.
 * Measured (tools/bench_route.lua, terrain.lua worlds, 200 random far pairs, fastest of 5 passes):
 * 16x2x16 and 32x2x32 tiles of 32^3 2 m leaves: graph memory 9.2% / 8.3% of the tree's bytes (56 /
 * 204 KB), blobs 134 B a tile, plan p50 0.08 / 0.21 ms, p99 0.38 / 0.61 ms; 8x1x8 tiles of 512^3
 * 1 m leaves: 0.7% of the tree (268 KB), blobs 11.8 KB a tile, but plan p50 0.4 s: an endpoint's
 * local search builds its tile's boxes (~86 ms for ~84k boxes when the tree is not prepared) and
 * runs a Dijkstra over all of them (~80 ms; p50 0.16 s with the tree prepared). A search directed
 * towards the other end (A* with an early stop, and a full retry when it finds nothing) halved p50
 * there but not p99; the join into big tiles needs a search bounded by more than direction.
 */
#ifndef OCTONAV_ROUTE_H
#define OCTONAV_ROUTE_H

#include "portals.h"

typedef struct on_wgraph on_wgraph;
typedef struct on_route on_route;

typedef struct on_wgraph_stats {
    size_t tiles;          /* tiles with a graph */
    size_t portals, edges, links; /* edges: pairs of portals of one component; links: once per pair */
    size_t rects, faces;   /* face rectangles kept for links to come, and their faces */
    size_t dormant;        /* links kept for tiles that left */
    size_t unresolved;     /* face pairs of present tiles that could not be linked (see above) */
    size_t bytes;          /* everything the world graph holds */
} on_wgraph_stats;

/* A world graph for the tile grid of p (tiles, depth, scale, origin). */
on_status on_wgraph_create(const on_tree_params *p, on_wgraph **out);
void on_wgraph_destroy(on_wgraph *w);
/* Give tile `tile` graph g (built for the grid's depth; the world takes it and frees it, also on
 * failure), replacing any present one, and link it to its present neighbours. ON_INVALID for a bad
 * tile or depth. */
on_status on_wgraph_add_tile(on_wgraph *w, uint32_t tile, on_tgraph *g);
/* Link the unresolved face pairs whose missing side has its tile loaded in t (same grid) and built
 * from the same contents (its portals' CRC); *resolved (may be NULL) gets how many. Cheap when there
 * are none. The Lua binding calls it before each start. */
on_status on_wgraph_resolve(on_wgraph *w, const on_tree *t, size_t *resolved);
/* Drop tile's graph and its links (ON_SUCCESS also when it had none). */
on_status on_wgraph_remove_tile(on_wgraph *w, uint32_t tile);
int on_wgraph_has_tile(const on_wgraph *w, uint32_t tile);
/* Bumped by every add and remove: a running route fails with ON_STALE when it changed. */
uint64_t on_wgraph_revision(const on_wgraph *w);
void on_wgraph_stats_get(const on_wgraph *w, on_wgraph_stats *st);
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
    uint32_t loading_tile;       /* with ON_LOADING: the tile whose graph (or, at an endpoint, tree tile) is missing */
    int which;                   /* with ON_OUTSIDE / ON_BLOCKED: 0 start, 1 goal */
} on_route_info;

/* max_nodes: search nodes (portals reached), 0 = 65536; ON_OUT_OF_NODES beyond. */
on_status on_route_create(const on_wgraph *w, size_t max_nodes, on_route **out);
void on_route_destroy(on_route *r);
/* Start a route between world points a and b. The tree supplies the endpoint tiles' boxes (their tiles
 * must be loaded: else ON_FAILURE|ON_LOADING with the tile); fails at once with ON_OUTSIDE, ON_BLOCKED,
 * ON_LOADING (an endpoint tile's graph is missing), ON_UNREACHABLE (an endpoint reaches no portal),
 * ON_NO_MEMORY; succeeds at once when near. Else ON_IN_PROGRESS: call on_route_step. */
on_status on_route_start(on_route *r, const on_tree *t, const double a[3], const double b[3]);
/* The same with endpoint sets: ns start points (3 doubles each) with extra costs (world units, may be
 * NULL: 0), ng goal points likewise. Never near; a start and a goal in one tile also join directly
 * (the local search's path between them). */
on_status on_route_start_multi(on_route *r, const on_tree *t, const double *starts, const double *start_cost,
                               size_t ns, const double *goals, const double *goal_cost, size_t ng);
/* Expand up to budget portals: ON_IN_PROGRESS, ON_SUCCESS (found), or ON_FAILURE with ON_UNREACHABLE,
 * ON_LOADING (info.loading_tile), ON_OUT_OF_NODES, ON_STALE (the world graph changed). */
on_status on_route_step(on_route *r, size_t budget, size_t *done);
/* The route's steps (cap too small: only *n, ON_BUFFER_SMALL) and info; returns the search status. */
on_status on_route_result(const on_route *r, on_route_cross *steps, size_t cap, size_t *n, on_route_info *info);
size_t on_route_bytes(const on_route *r);

#endif
