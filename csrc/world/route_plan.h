/*
 * route_plan.h -- the route planner's state (internal to route.c, the search, and route_start.c, the
 * endpoints; the API is route.h).
 */
#ifndef OCTONAV_ROUTE_PLAN_H
#define OCTONAV_ROUTE_PLAN_H

#include "route.h"
#include "route_boxes.h"
#include "wgraph.h"

#define PORTAL_TILE 0xfffffffdu    /* a tile's header node: its portals' nodes follow it */
#define PORTAL_GOAL 0xfffffffeu    /* the goal pseudo node (tile 0) */
#define PORTAL_MISSING 0xffffffffu /* a missing tile (tile = which) */
#define NO_NODE 0xffffffffu

typedef struct rnode {
    uint32_t tile, portal;
    double g, f;
    uint32_t parent;       /* NO_NODE: joined from a start */
    uint32_t heap;         /* position in the heap, NO_NODE when not in it */
    uint32_t start, goal;  /* for nodes joined from a start: which; for the goal node: which goal */
    uint8_t closed, via_link, link_k;
    uint32_t link_owner, link_i; /* with via_link: the link it came through (owner tile, axis, index) */
} rnode;

typedef struct gjoin {
    uint32_t tile, portal, goal;
    double cost;           /* nav leaves: from the portal to the goal point, plus the goal's cost */
} gjoin;

/* (A planner given the world's shared cache, route_boxes.h, as every planner the Lua binding makes,
 * keeps none of these: the cache below is a lone planner's, the C API's default.)
 * The box sets of unprepared tiles the planner built for its endpoints, kept across plans (a tile's
 * blocks built once serve every later join there) while the tile's contents are the same: same tree,
 * tile, salt and table slots (the slots tell a tree freed and another made at its address apart). A
 * tile of at most 64 leaves a side is built whole (own); a bigger one block by block as joins reach
 * its blocks (lazy, boxes.h: a 512^3 tile costs ~60 ms whole; blocks of ROUTE_LAZY_BDEPTH, below). The least
 * recently used entry is replaced; lazy sets are cleared, not freed (reach.lazy may point at one). */
#define ROUTE_BOX_CACHE 4
/* The lazy sets' blocks: 2^ROUTE_LAZY_BDEPTH leaves a side (boxes.h, on_boxlazy_init_blocks). A join
 * builds every block it reaches whole, so the block's size is what a cold join pays for: 8x1x8 x 512^3
 * as loaded, 35 pairs, each planned once on a fresh planner (callgrind, on_route_start): 64-leaf
 * blocks (the eager build's boxes) 653 M instructions, p90 51.7 M, max 75.4 M a plan; 16-leaf blocks
 * 47.8 M, p90 3.5 M, max 5.0 M. Plan CPU p99 (each pair's first plan) with 32 / 16 / 8-leaf blocks:
 * 2.8 / 1.4 / 2.3 ms; route costs / the 64-leaf blocks' (= the prepared tree's) mean 1.005 / 1.008 /
 * 1.013, max 1.040 / 1.065 / 1.075. A set's block records (40 bytes a block: 1.3 MB for a 512^3 tile
 * of 16-leaf blocks, 10.5 MB of 8-leaf ones) are calloc'd, written only for blocks built.
 * tests/test_route_joins checks the blocks' boxes and the costs against the prepared joins'. */
#ifndef ROUTE_LAZY_BDEPTH
#define ROUTE_LAZY_BDEPTH 4
#endif
typedef struct boxcache {
    const on_tree *tree;
    const void *keys;
    uint32_t tile, salt;
    uint64_t used;         /* the planner's count of lookups when last used */
    on_boxset *own;
    on_boxlazy *lazy;
    uint64_t gen;          /* the planner's count of sets made when this one was (a join resumed checks it) */
    int valid;
} boxcache;

/* The endpoints' join scratch (route_start.c: the local searches' per-box arrays in reach, the
 * endpoint tile's portal points, components and costs), shared by the planners given one
 * (on_route_set_joins, route.h): a start borrows it (moved into the planner's own fields below,
 * where route_start.c reads them, and moved back when the start returns), so N planners hold one
 * copy, grown to the largest tile they joined in, instead of N. A fresh planner's first join in a
 * 512^3 tile spent ~6.5 ms growing and first touching its own (~15 MB of arrays). A start stopped at
 * its join limit keeps the one it borrowed until its joins end, then the planner keeps the smaller of
 * it and the shared one as its own (route_start.c, joins_home: not freed) and starts with its own while
 * the shared one is no larger: two planners that join in turns hold two copies, made once. */
struct on_route_joins {
    on_reach reach;
    double *cost, *pts;
    uint32_t *grp;
    size_t costcap, ptscap, grpcap;
    int lent;              /* a start holds it (a second borrower meanwhile is misuse: ON_INVALID) */
};

/* Size the node array, heap, map and stamps to what a plan over the graph as it is can make (a header
 * and its portals for each tile with a graph, one missing-tile node a tile, the goal), at most
 * r->limit: done at create and at each plan's reset when the graph changed (a plan stops as stale
 * when it changes under it). Nothing changes when they fit already (or are at most twice too big). 0,
 * or -1 when out of memory (the arrays are then the old ones, valid). route_fit.c. */
int on_route_fit(on_route *r);

struct on_route {
    const on_wgraph *w;
    size_t max_nodes;      /* nodes the arrays below hold now: the graph's own bound, at most limit (route_fit.c) */
    size_t limit;          /* the nodes asked for at create (on_route_create's max_nodes) */
    uint64_t fit_revision; /* the graph's revision the arrays were sized for (+1: 0 is never sized) */
    rnode *node;
    uint32_t nnode;
    uint32_t *map;         /* node index + 1, 0 empty; open addressing, mask */
    uint32_t *stamp, cur_stamp;
    size_t mask;
    uint32_t *heap;
    size_t nheap;
    gjoin *gj;
    size_t ngj, gjcap;
    double *goalpt;        /* 3 per goal, nav */
    double *startpt;       /* 3 per start, nav */
    size_t startcap;
    double *goalcost;
    size_t ngoal, goalcap;
    double *cost;          /* per portal scratch */
    double *pts;           /* 3 per portal scratch: an endpoint tile's portal points */
    uint32_t *grp;         /* per portal scratch: its component */
    size_t costcap, ptscap, grpcap;
    on_reach reach;
    boxcache bc[ROUTE_BOX_CACHE]; /* its own sets, when it shares no cache (boxes NULL) */
    uint64_t bc_uses;
    /* The cache of sets it shares with the other planners of its world (route_boxes.h; NULL: bc
     * above), and the sets the running call pinned there (the last two endpoints': unpinned when the
     * call returns, route_start.c). */
    on_route_boxes *boxes;
    on_route_boxent *bpin[2];
    on_route_boxent *bhold; /* the set its suspended join stands over, held between calls (route_boxes.h) */
    uint64_t revision;
    on_status status;
    on_route_info info;
    uint32_t goal_node;
    size_t directed_boxes; /* endpoint tiles of more boxes join by a directed search (route_start.c) */
    size_t directed_budget; /* its budget (reach.h): boxes settled after the first portal met, 0 = none */
    on_route_joins *joins; /* shared join scratch (NULL: reach, cost, pts, grp are the planner's own) */
    int lazy_bdepth;       /* block side (log2) of the lazy sets built here; 0: ROUTE_LAZY_BDEPTH */
    double weight;         /* the heuristic's weight in the keys (ROUTE_WEIGHT, route.c; 1: optimal A*) */
    uint64_t bc_gen;
    /* Resumable joins (route_start.c): with a limit (join_work units, reach.h, and / or join_seconds of
     * the monotonic clock, per call; 0: none) a start joins its endpoints until the limit and returns
     * ON_IN_PROGRESS with `joining` set; each on_route_step goes on (within the limit again) before it
     * expands portals. The endpoints are copied (jin: ns starts then ng goals, world points; jinc their
     * costs); the endpoint being joined is goal ji (jstage 0) or start ji (jstage 1), its local search
     * suspended in reach when jsusp (over the set jset of generation jgen: another set, the tile's
     * boxes rebuilt meanwhile, and it starts again). While joining, the planner holds the join scratch
     * it borrowed (jown: its fields are the scratch taken from `joins`, given home when the joins end). */
    size_t join_work;
    double join_seconds;
    double step_deadline;  /* a step's end by the monotonic clock (join_seconds from its start; 0: none):
                            * its portals' expansion stops there too (on_route_expand, every 8) */
    int joining, jown, jsusp, jstage, jnear;
    /* jpause: the joins stopped between two endpoints (the call's limit spent when one's search ended: the
     * next one's search, its set-up included -- the arrays reserved, the targets mapped, its first blocks
     * built --, begins in the next call; route_start.c joins_run) */
    int jpause;
    /* A plan's radius (nav leaves beyond the tree's, on_route_set_join_radius; 0: none): the joins of an
     * endpoint whose tile holds the other end keep it (reach.h rtree), so a start and a goal in one
     * tile join directly only by a way that keeps it; jplain: the endpoint being joined met nothing so
     * and joins as a point (route_start.c). */
    double join_radius;
    int jplain;
    const on_tree *jtree;
    double *jin, *jinc;
    size_t jincap, jns, jng, ji, jpushed;
    const on_boxset *jset;
    uint64_t jgen;
    on_route_calls calls;  /* the last start's or step's work (route.h, on_route_last_call) */
    uint32_t jbuilt;       /* jset's blocks built when its search stopped (a lazy set shared with other
                            * planners: one that built more meanwhile makes the search start again) */
};

/* An endpoint whose tile has more than ROUTE_DIRECTED_BOXES boxes joins by the directed local search
 * (reach.h: A* towards the other end's first point through the nearest portal, its straight line
 * weighted ROUTE_DIRECTED_WEIGHT, stopped once no box left can beat the best total met by more than x
 * (1 + ROUTE_DIRECTED_SLACK) + ROUTE_DIRECTED_ADD x n leaves, or ROUTE_DIRECTED_BUDGET boxes after
 * its first portal): the full search of a 512^3 terrain tile settles ~84k boxes (~25 ms). Budget 0 /
 * 200 / 500 (35 pairs, costs / those before the budget): mean 1.001 / 1.002 / 1.001, max 1.027 each;
 * boxes settled p90 4332 / 353 / 653. Weight 1 / 1.5 / 2 on 8x1x8 x 512^3 (35 pairs, prepared): plan p99 42 / 10 / 8 ms, route
 * cost / the full join's mean 0.999 / 1.005 / 1.011, max 1.014 / 1.073 / 1.106. It reaches at least one portal of the endpoint's
 * component, and the planner follows the tile graph's edges from there, so a route is still found iff
 * one exists; its cost may pass through a portal the full join would not have used. Session 9: budget
 * 200 -> 20 (35 pairs on 8x1x8 x 512^3, world:plan's start_multi: the budget was what stopped almost
 * every join, 200 boxes after a portal met at box 1-30; boxes settled p90 571 -> 224, max 839 -> 659;
 * route costs / budget 200's mean 1.0005, max 1.011; budget 5: 1.009 / 1.075, 1: 1.017 / 1.106). */
#ifndef ROUTE_DIRECTED_BOXES
#define ROUTE_DIRECTED_BOXES 4096
#endif
#ifndef ROUTE_DIRECTED_WEIGHT
#define ROUTE_DIRECTED_WEIGHT 1.5
#endif
#ifndef ROUTE_DIRECTED_SLACK
#define ROUTE_DIRECTED_SLACK 0
#endif
#ifndef ROUTE_DIRECTED_ADD
#define ROUTE_DIRECTED_ADD 0.125
#endif
#ifndef ROUTE_DIRECTED_BUDGET
#define ROUTE_DIRECTED_BUDGET 20
#endif

typedef struct via { /* the link a node is reached through */
    uint32_t owner, i;
    int k;
} via;

/* Global nav-space point of portal p of tile t. */
void on_route_portal_global(const on_wgraph *w, uint32_t t, uint32_t p, double out[3]);
/* The node of (tile, portal): found, or (create) made; NO_NODE when out of nodes or absent. A tile's
 * portals are made together, one block after a header node, when the first of them is. */
uint32_t on_route_node(on_route *r, uint32_t tile, uint32_t portal, int create);
/* Reach node (tile, portal) with cost g from parent (NO_NODE: from start `start`); lk: the link
 * when through one. x: the node's nav point (its heuristic, computed only when g improves the node),
 * NULL for a heuristic of 0. 0, or -1 when out of nodes. */
int on_route_relax(on_route *r, uint32_t tile, uint32_t portal, double g, const double *x, uint32_t parent,
                   uint32_t start, const via *lk);
/* Straight line from nav point x to the nearest goal plus its cost: never above the cost left. */
double on_route_heuristic(const on_route *r, const double x[3]);
/* Forget the last search: stamps, counts, info, cached boxes. */
void on_route_reset(on_route *r);
/* Around a start (on_route_start*): move the shared join scratch into r's fields, and back. borrow
 * returns 0, or -1 when another start holds it (the start must then fail with ON_INVALID). */
int on_route_borrow(on_route *r);
void on_route_giveback(on_route *r);
/* The join scratch a planner took while joining (route_start.c, jown) given home: the shared one keeps
 * the larger of the two (its bytes), the planner the other as its own, not freed (freeing a 512^3 tile's
 * arrays took 0.8-1.3 ms of one step, and the next start grew and first touched them again). Nothing
 * while the shared one is lent. */
void on_route_take_home(on_route *r);
/* on_route_step's search over the portals (route.c; on_route_step, route_start.c, goes on joining
 * first while a start's joins are not done). */
on_status on_route_expand(on_route *r, size_t budget, size_t *done);
/* The monotonic clock, seconds (the joins' and the steps' limits). */
double on_route_now(void);

#endif
