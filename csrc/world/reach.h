/*
 * reach.h -- local searches inside one tile's box set (internal): from a point, the length of a free
 * path to each of a list of target points (the tile's portal points), used by the tile graph build
 * (portals.c: the weights between portals) and by the route planner (route.c: joining a start or a
 * goal to the portals its own tile actually reaches, HPA*-style).
 *
 * Dijkstra over the box graph whose node point is where the path entered the box (the previous
 * point, or its parent's where the line from there crosses the shared face, clamped onto the next
 * face; a point on a box boundary starts in every box holding it), then each target's corridor of
 * boxes relaxed until the string is taut inside the corridor's boxes (never below the straight line;
 * measured on random tiles: mean 0.91 of the 26-connected cell path + 1 leaf, never above 1.35 x it
 * + 2 leaves: the corridor the Dijkstra picks is not always the shortest one).
 * (reach.c: the scratch, target maps and results; reach_run.c: the search; reach_impl.h: what they
 * share.)
 */
#ifndef OCTONAV_REACH_H
#define OCTONAV_REACH_H

#include "boxes.h"

/* Scratch for searches over a box set, reused between searches (grows, never shrinks). A search
 * touches only the boxes it reaches: per-box entries are valid when their stamp is the search's
 * (seen, done) or the target map's (tmark), so nothing is cleared per box between searches. */
typedef struct on_reach {
    size_t cap, heapcap;
    int heap_failed;       /* a heap push found no memory to grow: the last search is incomplete */
    uint32_t cur, tcur;    /* the last search's stamp, the target map's */
    double *g;             /* per box: cost so far, nav leaves (valid when seen[b] == cur) */
    double *pt;            /* per box: 3 doubles, where the path entered it */
    uint32_t *parent;      /* per box, UINT32_MAX for the root */
    uint32_t *seen, *done; /* per box: reached / settled by search `cur` */
    size_t zeroed;         /* the four stamp arrays (seen, done, tmark, hexact) are set below this box (the
                            * rest is malloc'd garbage: zeroed as boxes come, reach_impl.h stamps_upto) */
    uint32_t *heap_box;
    double *heap_key;
    uint32_t *tmark;       /* per box: holds targets of map `tcur`, listed from thead[b] */
    uint32_t *thead;
    uint32_t *tent_t, *tent_next; /* the (box, target) entries: target, next entry of that box */
    uint32_t nent;
    uint32_t *tbn;         /* per target: its boxes are tbox[8 t .. 8 t + tbn[t]) */
    uint32_t *tbox;
    /* a lazy set's targets in blocks not built yet: (block, target) entries listed from phead[block],
     * mapped when a search builds the block */
    uint32_t *phead, *pnext, *ptgt;
    size_t phcap;
    uint32_t npend;
    /* a lazy set's settled boxes waiting for a block beyond one of their block faces (reach_run):
     * listed in order from whead[block] to wtail[block]: box, the block's facing side */
    uint32_t *whead, *wtail, *wnext, *wbox;
    uint64_t *pvalid, *wvalid; /* phead's and whead's entries set (a bit a block; reach_impl.h head_get) */
    uint8_t *wside;
    size_t nwait, wcap;
    /* the blocks whose phead / whead the last map / search set (phcap each): only those are reset
     * before the next (a 512^3 tile of 16-leaf blocks has 32,768 blocks; a join touches tens) */
    uint32_t *ptouch, *wtouch;
    size_t nptouch, nwtouch;
    const double *tpts;    /* the targets' points of the last map */
    uint32_t *gneed;       /* per component: its target entries, UINT32_MAX once met */
    double *hkey;          /* per box: the heading part of its key (searches with a `to`), or a lower
                            * bound of it until hexact[b] == cur */
    uint32_t *hexact;      /* per box: stamp, hkey computed for its point by search `cur` */
    const on_boxset *hset; /* the running search's set (the heap's order of equal keys reads its boxes) */
    int eager_heading;     /* 1: every box keyed by its heading when pushed (tests compare the two) */
    size_t headings;       /* headings the last search computed */
    int hlazy;             /* the running search keys new boxes by a lower bound of their heading: 0 no,
                            * 1 the line to `to`, 2 the nearest face holding targets (reach.c; box
                            * indices below 2^30: the heap marks such entries with bit 30) */
    uint8_t hfaces;        /* with hlazy 2: the tile faces holding targets (bit f) */
    int nhin;              /* and the targets inside the tile, hin[0 .. nhin) */
    uint32_t hin[2];
    uint32_t *order;       /* the targets by hc */
    double *hp;            /* per target: that straight line */
    double *hc;            /* per target: the line from the search's point through it on to `to` */
    uint32_t *chain;       /* a corridor of boxes, goal to root */
    double *cpt;           /* its points: 3 doubles each, nbox + 2 */
    /* the corridor relaxation's scratch (reach.c: pulled_length), pullcap entries each: per link its
     * face (6 doubles) and its axes (pax: across it, and the two along it), per segment its length;
     * the links to look at in this pass and the next (pdirty: two bit sets of pullcap bits) */
    double *plink, *pseg;
    uint32_t *pax;
    uint64_t *pdirty;
    size_t pullcap;
    size_t tcap;
    size_t bytes;
    /* A lazy box set (boxes.h) that searches over &lazy->set build into: blocks are built as a search
     * reaches them (their boxes numbered on, the per-box arrays grown keeping their contents), the
     * targets in them mapped then. NULL (or a search over another set): nothing is built. */
    on_boxlazy *lazy;
    size_t pops;           /* boxes the last search settled (reach_run) */
    /* A search's work limit (resumable searches): a call (on_reach_points_group, on_reach_resume)
     * stops once it has spent `limit` work units (0: no limit; a heap entry popped is one unit, a lazy
     * block built REACH_BLOCK_UNITS) or the monotonic clock has passed `deadline` (seconds, 0: none),
     * after at least one unit: it returns ON_IN_PROGRESS and the search is `suspended`; on_reach_resume
     * goes on from there, and the search settles, reaches and costs exactly what one whole call does
     * (tests/world/test_reach_resume.c). `work` counts the units spent since the caller zeroed it. */
    /* A search that keeps a radius (a plan's joins with one, route_start.c): a box is entered only
     * along a segment that keeps rR leaves from blocked space in rtree (on_tree_visible_radius: from
     * where the path stands to where it enters; tile-local points + roff are nav space). rtree NULL:
     * none (the default; the tile graph build never sets it). */
    const struct on_tree *rtree;
    int64_t rR;
    double roff[3];
    size_t limit;
    double deadline;
    size_t work;
    /* (a probe, route.h's on_route_calls: the seconds in the search's loop and the longest gap between
     * two reads of the deadline's clock in it, added to by each call with a deadline; the caller zeroes) */
    double loop_s, unit_max;
    double setup_s;  /* (and the seconds in its set-up: reach_reserve, the targets mapped; the remakes of its
                      * per-box arrays there) */
    size_t remakes;
    int suspended;
    struct reach_resume {      /* a suspended search's state (reach_run.c) */
        size_t n, need, pops, met_at;
        double best;
        int met_any, has_stop, has_to, settled;
        double root[3], to[3];
        const uint32_t *group;
        const double *pts;
        uint32_t npt;
        double weight, slack, add;
        size_t budget;
    } rs;
} on_reach;

/* The work units a lazy block built counts for (a 16-leaf block's build costs about as much as this
 * many boxes settled: measured, reach.c). */
#define REACH_BLOCK_UNITS 8

void on_reach_free(on_reach *r);

/* From tile-local point p (in a free box of s), the cost of a free path inside the tile to each of
 * the npt target points pts (3 doubles each; cost[i], HUGE_VAL where not reached). *reached gets the
 * number reached; ON_FAILURE|ON_BLOCKED when p is in no box, ON_FAILURE|ON_CORRUPT when a target is
 * in no box (targets and boxes of different contents), ON_NO_MEMORY. */
on_status on_reach_points(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, const double p[3],
                          double *cost, uint32_t *reached);

/* The same, stopped early: group[i] is target i's component (< npt; the tile graph's, from the union
 * of the box graph, so the point's component is the set of targets it can reach). The search stops
 * once every box holding a target of the point's component is settled. With `to` (a tile-local
 * point, may be outside the tile) it is an A* heading there through the targets (its estimate: weight
 * x the shortest straight line on to `to` by way of one target, never below the straight line to
 * `to`), stopped as well once no box left can lead to a total (cost + weight x straight line from a
 * target on to `to`) within (1 + slack) x the best met + add; only the targets in settled boxes are
 * reached then (their corridors relaxed in fewer passes): it
 * reaches at least one target of the component when any (the caller goes on through the tile
 * graph's edges), others are left HUGE_VAL. budget > 0 (with group): the search also stops once it
 * has settled `budget` boxes since it met its first target (the targets met by then are reached; it
 * never stops before one is met, so "reached at least one target of the component" holds); such a
 * search that met no target after 128 settled boxes (LOST_POPS) (its way towards `to` blocked) heads for the
 * nearest target from then on (its open boxes keyed again without the lines on to `to`). Costs found
 * are lengths of free paths. Boxes beyond are left unreached: on_reach_cost_to may not see them.
 * group NULL: on_reach_points. */
on_status on_reach_points_group(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, const double p[3],
                                const uint32_t *group, const double *to, double weight, double slack, double add,
                                size_t budget, double *cost, uint32_t *reached);

/* A search suspended at its limit (r->suspended: on_reach_points_group returned ON_IN_PROGRESS) goes on
 * over the same set s, with its limit (r->limit, r->deadline, r->work as the caller set them): the
 * same answers as on_reach_points_group's into cost and *reached, or ON_IN_PROGRESS again.
 * ON_FAILURE|ON_INVALID when no search is suspended. */
on_status on_reach_resume(on_reach *r, const on_boxset *s, double *cost, uint32_t *reached);

/* After on_reach_points over s: the cost of a free path from its point to point x in the same tile
 * (HUGE_VAL when x is in no box the search reached). */
double on_reach_cost_to(on_reach *r, const on_boxset *s, const double x[3]);

/* The build's passes: on_reach_map once for the npt targets pts, then per target `first` a search
 * from its point giving cost[i] (i > after; after UINT32_MAX: every i) for the targets it reaches
 * (HUGE_VAL elsewhere).
 * ON_FAILURE|ON_CORRUPT when a target is in no box (lenient: such targets are left out, never
 * reached; a search from one is ON_CORRUPT), ON_NO_MEMORY. */
on_status on_reach_map(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, int lenient);
on_status on_reach_from_target(on_reach *r, const on_boxset *s, const double *pts, uint32_t npt, uint32_t first,
                               uint32_t after, double *cost);

#endif
