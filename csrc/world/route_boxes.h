/*
 * route_boxes.h -- the box sets that route planners build for their endpoints' joins in tiles the tree
 * has no prepared or streamed set for (route_start.c), kept in one cache that every planner of a world
 * graph shares (internal; the Lua binding, lua_route.c, gives each graph one), so that N planners hold
 * one copy of a tile's set instead of N (issue 31, goal 3: each planner kept up to ROUTE_BOX_CACHE
 * sets of ~1.3 MB of its own, so more planners at once cost their sets each).
 *
 * A set depends only on its tile (tree, tile, salt, table slots: the same key as route_plan.h's
 * per-planner boxcache) and on its blocks' side, never on a plan: a lazy set's blocks built by one
 * planner's join serve every later join there, whoever's. The cache holds at most max_bytes of sets
 * between calls (their bytes as on_boxset.bytes counts them: a lazy 512^3 set of 16-leaf blocks is
 * ~1.3 MB of block records plus the boxes built); the least recently used set not in use is dropped
 * (or its memory reused for the new one) when another must come in or a set grew.
 * References: a planner pins the sets it reads during one call (a start, or a step that goes on
 * joining: at most the two endpoints' it holds at once), and no pinned set is freed or reused: within
 * a call the bound may be passed by those (at most two sets, one planner calls at a time). Between
 * calls a planner holds at most one set: the one its join stands suspended over (on_route_boxes_hold,
 * let go when a call ends its join, at the latest at its next start, or when it is given another
 * cache or NULL), never dropped for the bound, so the bound may be passed by one set per planner
 * joining. A join suspended over a set that another planner built blocks into (the search's per-box
 * arrays and its pending targets are those of the set as it was), or whose tile changed, starts
 * again over the set as it is (route_start.c: generation and blocks built checked); nothing dangles.
 * A tile removed or replaced (its salt or table changed) leaves its set stale: never handed out
 * again, freed as soon as no call pins it and no planner holds it.
 * Not thread-safe: the planners sharing one cache run on one thread (or under the caller's lock), as
 * with their join scratch (route.h).
 */
#ifndef OCTONAV_ROUTE_BOXES_H
#define OCTONAV_ROUTE_BOXES_H

#include "route.h"

typedef struct on_route_boxes on_route_boxes;
typedef struct on_route_boxent on_route_boxent; /* one cached set (route_boxes.c) */

/* The default bound (bytes). 8 -> 4 MB (session 26): a lazy 512^3 set is ~1.3 MB counted, so 4 MB keeps
 * one plan's two endpoint sets and one more; bench/plan.lua on the seed's world (200 pairs, thread CPU
 * p50 / p99 ms, fastest of 3, two runs each, load 5): 8 MB 0.30-0.34 / 1.66-2.43, 4 MB 0.23-0.27 /
 * 1.43-1.65, 3 MB 0.24-0.25 / 1.30-1.44, 2 MB 0.61-0.63 / 1.71-1.72 (one set: each plan builds its
 * second), 1 MB 0.67 / 2.08; 1,000 navigators: resident growth -2.3 to -3.5 MB (docs/benchmarks.md). */
#ifndef ON_ROUTE_BOXES_BYTES
#define ON_ROUTE_BOXES_BYTES ((size_t)4 << 20)
#endif

/* A cache holding at most max_bytes of sets between calls, besides the held ones (0: none else kept
 * beyond a call). */
on_status on_route_boxes_create(size_t max_bytes, on_route_boxes **out);
/* Frees every set (the planners given it must not start or step again: give them NULL first, or
 * destroy them; a planner's destroy does not touch the cache, so one destroyed while its join stood
 * suspended leaves that set held until the cache goes: give it NULL before destroying it, as
 * lua_route.c does). */
void on_route_boxes_destroy(on_route_boxes *c);
/* A new bound: sets not in use dropped, least recently used first, until the rest fit. */
void on_route_boxes_set_limit(on_route_boxes *c, size_t max_bytes);
size_t on_route_boxes_limit(const on_route_boxes *c);
/* The cache's bytes (its sets and its own records) and its sets. */
size_t on_route_boxes_bytes(const on_route_boxes *c);
size_t on_route_boxes_sets(const on_route_boxes *c);
/* The sets it has made so far (each set made gets the next generation: a new set, a cache miss). */
uint64_t on_route_boxes_gens(const on_route_boxes *c);
/* r's joins take their sets from c from now on (its own cached sets are freed); NULL: its own again. */
void on_route_set_boxes(on_route *r, on_route_boxes *c);

/* ---- for route_start.c ---- */
/* The set of loaded tree tile `tile` (not prepared, no join set), found or made (lazy, blocks of
 * 2^bdepth leaves, for tiles of more than 64 leaves a side; else built whole): *e pinned (unpin it
 * when the call ends), *out the set, *lz its lazy set or NULL, *gen its generation (unique in c). */
on_status on_route_boxes_get(on_route_boxes *c, const on_tree *t, uint32_t tile, int bdepth, on_route_boxent **e,
                             const on_boxset **out, on_boxlazy **lz, uint64_t *gen);
/* Drop a pin (e may be NULL); a set no longer pinned that is stale or beyond the bound is freed. */
void on_route_boxes_unpin(on_route_boxes *c, on_route_boxent *e);
/* A planner's hold (*held: the set its suspended join stands over, or NULL) moved to the one of
 * pinned[0 .. n) of generation gen (none when gen is 0 or none is): a held set is not dropped for the
 * bound (nor freed when stale) until its planner lets it go, so a join suspended at its limit resumes
 * over the same set at its next step, whatever the bound (without the hold, a bound below the sets
 * of the planners joining at once dropped a suspended join's set between its calls and the join
 * started again at every step: no plan ended; 2 planners with a 2 MB bound on the seed's world: 0
 * arrivals in 1,500 frames). The set let go is freed when no longer pinned, held or within the bound. */
void on_route_boxes_hold(on_route_boxes *c, on_route_boxent **held, on_route_boxent *const *pinned, int n, uint64_t gen);

#endif
