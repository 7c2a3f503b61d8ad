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
 * ended at those the same search from each goal point reaches. The local search stops once every
 * portal of the endpoint's component is settled (the tile graph's components are those of the box
 * graph); in a tile of more than 4096 boxes it is an A* heading for the other end's first point
 * through the nearest portal (the straight line via one of the tile's portals, weighted 1.5), stopped
 * once no box left can beat the best total met by n/8 leaves or 20 boxes (ROUTE_DIRECTED_BUDGET) after it met its first
 * portal, and heading for the nearest portal instead once 128 boxes met none; a start and a goal in one such tile each head for the other and stop soon after meeting it
 * (the direct join). It reaches at least one portal of the component, and the planner goes on from
 * there by the tile graph's edges, so a route is still found iff one exists (route_plan.h). The heuristic (straight
 * line to the nearest goal plus its cost) is consistent; the keys weight it by ROUTE_WEIGHT (1.5, route.c;
 * 1.2 before session 27; on_route_set_weight) and a node once expanded is not expanded again, so the route's
 * cost over the graph is at most weight x the optimal one's (weighted A* with a consistent heuristic). A component
 * closed inside terrain is never part of a route: only links and edges are followed. A face whose
 * neighbour tile has no graph is pushed as a "missing tile" node: popped before the goal, the search
 * fails with ON_LOADING and that tile (a route through it could be shorter); after, it is ignored.
 * Start and goal in one tile or in neighbouring tiles (one point each): the search stops at once with
 * success and info.near set, for the caller's direct query. Holes and doors are endpoint sets: start
 * and goal may each be several points with an extra cost (a door's outside point with the cost inside
 * the hole); closed doors are left out of the set. Costs are nav leaves inside, world units outside.
 * Memory is allocated by create and start; steps allocate nothing.
 * Quality (tests/world/test_route.c, random worlds of 8- and 16-leaf tiles against Dijkstra over all free
 * leaves, 26-connected without corner cutting): found iff reachable; the optimal graph cost (through
 * the portals' points, weight 1) is at most 2 x the optimum + 2 leaves on the test's sample (measured
 * mean 1.19, max 1.94: the forced detour through each portal's point; a measured bound, not a proven
 * one: another draw of the same worlds reaches 2.27, and 2.35 with joins stopped one box after their
 * first portal), the weighted search's at most its weight x that (proven; measured at 1.2 mean 1.001, max 1.05), the
 * polyline through the pulled crossings mean 0.93, max 1.36
 * of it (its straight segments are not checked: the caller's queries walk between crossings); the
 * same with one portal per face region (the default bound) as with the former 16-leaf squares.
 * Pulled crossings (on_route_result): each crossing in turn moved to its rectangle's best point
 * between its neighbours (facepoint.h), up to 32 passes; a route of at most 128 crossings reads its
 * rectangles once and skips a crossing whose neighbours have not moved since it was placed.
 * Expansion: a tile's portals are one block of nodes (made when the first is reached), so the other
 * portals of an expanded one's component are reached by index, not through the node map; a portal's
 * links are found by binary search (a face's links are sorted by the owner's
 * portal) or one field's scan on the other side; a node's heuristic is computed only when its cost
 * improves. The endpoints' searches touch only the boxes they reach (stamps, reach.h).
 * Measured (tools/bench_route.lua, terrain.lua worlds, 200 random far pairs, fastest of 5 passes):
 * 16x2x16 and 32x2x32 tiles of 32^3 2 m leaves: graph memory 9.2% / 8.3% of the tree's bytes (56 /
 * 204 KB; with the Lua heap the world's open adds: 32x2x32 10.4% -> 8.3% since the graph ids live here
 * and the records dropped a portal's component byte, component 0's matrix offset and the pair
 * count), blobs 134 B a tile, plan p50 0.08 / 0.21 ms, p99 0.38 / 0.61 ms; 8x1x8 tiles of 512^3
 * 1 m leaves: 0.7% of the tree (268 KB), blobs 11.8 KB a tile. There a full local search settles
 * ~84k boxes (~25 ms an endpoint with the tree prepared: plan p50 52 ms, p99 70 ms, 35 pairs); the
 * directed join brought it to p50 0.7 ms, p90 4 ms, p99 10 ms, route costs mean 1.005, max 1.07 x
 * those of the full join; heading through the portals, the 200-box budget and collecting only the
 * settled portals: boxes settled by the joins p50 478 -> 32, p90 7.7k -> 0.35k; route costs mean
 * 1.002, max 1.027 x the directed join's before (35 pairs, world:plan's start_multi); heading for
 * the nearest portal after 256 boxes without one: max 4.2k -> 0.8k boxes (an endpoint whose way
 * towards the other end is blocked in its tile), costs mean 1.004, max 1.052 x main's. Unprepared, building a tile's boxes (~86 ms for ~84k) per endpoint still dominates. The
 * same checks as above with the directed join forced on every tile: mean 1.22 / 1.24, max 1.82 /
 * 1.74 (8- / 16-leaf tiles); with a budget of 1 box: mean 1.29, max 1.85 (16-leaf tiles).
 * Session 9 (issue 11's 1 ms): the heading estimate scans the portals in order of their line from
 * the search's point (|p - t| + line on), stopping at the first that cannot beat the best so far
 * less how far the box is from p (exact: same keys, same routes; its instructions 26 M -> 7.5 M over
 * 8 tail pairs of 3x1x3 x 512^3, callgrind), and the budget after the first portal is 20 boxes
 * (route_plan.h). 8x1x8 x 512^3 prepared, 35 pairs, fastest of 5, main and this side by side at
 * load 4: plan p99 1.8-2.1 -> 1.1-1.2 ms, p90 1.25-1.35 -> 0.69-0.72 ms.
 * Session 12 (the tree as loaded: no prepared or streamed join sets): an endpoint's tile joins over
 * the planner's lazy set of 16-leaf blocks (ROUTE_LAZY_BDEPTH, route_plan.h), built as the join
 * reaches them (a block of one free cube is one box without a bitmap; a set's reset and a join's
 * per-block lists touch only the blocks used, not all 32,768 of a 512^3 tile), where it built
 * 64-leaf blocks: a cold join in a terrain tile built ~23 of them (~2 on the surface, ~3 M
 * instructions each). Memory: at most ROUTE_BOX_CACHE sets a planner without a shared cache (the
 * planners of a world graph share one, route_boxes.h, within a byte bound), each its blocks' records
 * (1.3 MB for a 512^3 tile, malloc'd: read only where blocks were built) and the boxes built (tens
 * of KB a join); nothing a tile beyond them.
 * 8x1x8 x 512^3, 35 pairs, each planned once on a fresh world (callgrind, on_route_start): 653 M ->
 * 48 M instructions (max a plan 75 M -> 5.0 M); plan CPU p50 / p90 / p99, each pair's first plan,
 * fastest of 3 opens (bench_world.as_loaded, main and this side by side 3 times, load 4): 1.31-1.35 /
 * 5.4-5.7 / 8.3-10.4 -> 0.26-0.27 / 0.77-0.81 / 1.08-1.20 ms (the prepared tree's: 0.29 / 0.72 /
 * 1.05 ms, beside its 222 MB of boxes); the planner and join scratch after the 35 plans 6.5 -> 10.6
 * MB; route costs / the prepared tree's mean 1.008, max 1.065 (the boxes differ: none crosses a
 * 16-leaf block); walked / seamless 1.000, max 1.000, as on the prepared tree.
 */
#ifndef OCTONAV_ROUTE_H
#define OCTONAV_ROUTE_H

#include "portals.h"

/* The world graph and planner API (on_wgraph_*, on_route_*) is public: octonav.h, section "World graph". */

/* Join scratch shared by planners (route_plan.h): the endpoints' local-search arrays, which a start
 * needs only while it runs (steps and results never read them). Planners given the same one must not
 * start at the same time (one thread, or the caller's lock; a start that finds it held fails with
 * ON_INVALID); it must outlive their starts, not the planners. The Lua binding gives every planner
 * of a world graph the graph's own (lua_route.c). */
typedef struct on_route_joins on_route_joins;
on_status on_route_joins_create(on_route_joins **out);
void on_route_joins_destroy(on_route_joins *j);
size_t on_route_joins_bytes(const on_route_joins *j);
/* r's starts use j from now on (its own join scratch is freed); NULL: its own again (empty, grown by
 * its next start). */
void on_route_set_joins(on_route *r, on_route_joins *j);

/* What a planner's last call (a start, on_route_start*, or a step, on_route_step) did: a probe for the
 * frames' traces (bench/frames.lua --trace; the Lua binding's planner:last_call()). Zeroed by each call. */
typedef struct on_route_calls {
    size_t units;     /* join work units spent (info.join_work: boxes popped, lazy blocks built x 8) */
    size_t blocks;    /* lazy blocks its joins built */
    size_t sets;      /* tile box sets it made (a miss of the planner's or the world's cache) */
    size_t joins;     /* endpoint searches it ran: begun, resumed */
    size_t restarts;  /* suspended endpoint searches begun again (their set grew or changed meanwhile) */
    size_t expanded;  /* portals expanded */
    size_t nodes;     /* the search's nodes after it */
    double join_s;    /* seconds of the monotonic clock in its joins, and in its expansion */
    double expand_s;
    double loop_s;    /* with a time limit: the joins' seconds in their searches' loops (the rest: their set-up,
                       * the targets mapped, the corridors pulled, the nodes pushed), and the longest gap between
                       * two reads of the clock there (a box settled, with the blocks built for it) */
    double unit_max;
    double setup_s;   /* with a time limit: the searches' set-up (their arrays reserved, the targets mapped, the
                       * blocks holding their point built), and the remakes of the per-box arrays there */
    size_t remakes;
} on_route_calls;
void on_route_last_call(const on_route *r, on_route_calls *out);

/* The heuristic's weight in the world graph search's keys (f = g + weight x h; the default ROUTE_WEIGHT,
 * route.c): 1 is the optimal A* over the graph, w > 1 a route of cost at most w x that one's. Valid
 * 1 <= weight <= ROUTE_WEIGHT_MAX; another value is refused (ON_FAILURE | ON_INVALID, the weight unchanged).
 * A new weight ends a search under way (its status ON_FAILURE | ON_INVALID, as on_route_set_joins: a search's
 * keys have one weight); the same weight changes nothing. A planner's weight holds for its later starts. */
#ifndef ROUTE_WEIGHT
#define ROUTE_WEIGHT 1.5 /* (the default: route.c's measurements) */
#endif
#define ROUTE_WEIGHT_MAX 4.0
/* on_route_set_weight, on_route_weight: octonav_world.h (the public C API). */

#endif
