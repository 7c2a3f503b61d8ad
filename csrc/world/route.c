/*
 * route.c -- the sliced route planner over the world graph (see route.h for the rules, wgraph.h for
 * the graph's resident form), the search: A* over (tile, portal) nodes in a preallocated pool found
 * through an open-addressing map reset by a stamp; a binary heap with positions for decrease-key; two
 * kinds of pseudo node (the goal, a missing tile); the result with its crossings pulled taut. The
 * endpoints join in route_start.c.
 */
#include "route.h"
#include "route_plan.h"
#include "facepoint.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The heuristic's weight in the A* keys (f = g + ROUTE_WEIGHT x h, the bound in route.h): a node's
 * straight line to the goal undershoots its graph cost on terrain by the detours through the
 * portals' points, so the optimal search expands most of an ellipse around the straight route.
 * world:plan on prepared trees, weight 1 -> 1.1 / 1.2 / 1.5: 32x2x32 tiles of 32^3 (60 pairs)
 * expansions 38,152 -> 9,106 / 3,740 / 2,851, pulled length / weight 1's mean 0.999 / 1.001 / 1.006,
 * max 1.021 / 1.031 / 1.043; 8x1x8 x 512^3 (35 pairs) expansions 3,951 -> 831 / 610 / 513, mean 1.001 /
 * 1.002 / 1.007, max 1.007 / 1.038 / 1.051. The navigator's walks are the same (a leg of tile steps is
 * one query from its enter to its exit: walked/seamless unchanged on dungeon, house, t16, t32).
 * Session 27 (issue 31 goal 2, the tree as loaded, 8x1x8 x 512^3, 200 pairs, callgrind instructions a
 * plan p99 / worst, route cost / the full join's mean): seed 19 weight 1.2 -> 1.35 / 1.5: 5.93 / 6.02 ->
 * 5.06 / 5.84, 4.69 / 5.71 M, 1.017 -> 1.023 / 1.031; seed 23 4.38 / 6.66 -> 4.38 / 5.49, 4.38 / 5.18 M,
 * 1.017 -> 1.023 / 1.032 (goal: within 1.05 on average); 1.5 the default since, on_route_set_weight
 * per planner (1: the optimal search over the graph). */

void on_route_portal_global(const on_wgraph *w, uint32_t t, uint32_t p, double out[3])
{
    int c[3];
    wg_tile_ijk(w, t, c);
    ct_point(w->tiles[t], p, out);
    for (int k = 0; k < 3; k++) out[k] += (double)c[k] * w->n;
}

on_status on_route_create(const on_wgraph *w, size_t max_nodes, on_route **out)
{
    *out = NULL;
    if (!w) return ON_FAILURE | ON_INVALID;
    if (max_nodes == 0) max_nodes = 65536;
    if (max_nodes > (1u << 30)) return ON_FAILURE | ON_INVALID;
    on_route *r = calloc(1, sizeof *r);
    if (!r) return ON_FAILURE | ON_NO_MEMORY;
    r->w = w;
    r->limit = max_nodes;
    r->directed_boxes = ROUTE_DIRECTED_BOXES;
    r->directed_budget = ROUTE_DIRECTED_BUDGET;
    r->weight = ROUTE_WEIGHT;
    if (on_route_fit(r) != 0) { /* (the arrays sized to the graph: route_fit.c) */
        on_route_destroy(r);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    r->status = ON_FAILURE | ON_INVALID; /* no route started */
    *out = r;
    return ON_SUCCESS;
}

void on_route_destroy(on_route *r)
{
    if (!r) return;
    free(r->node);
    free(r->map);
    free(r->stamp);
    free(r->heap);
    free(r->gj);
    free(r->goalpt);
    free(r->startpt);
    free(r->goalcost);
    free(r->cost);
    free(r->pts);
    free(r->grp);
    free(r->jin);
    free(r->jinc);
    on_reach_free(&r->reach);
    for (int i = 0; i < ROUTE_BOX_CACHE; i++) {
        on_boxset_free(r->bc[i].own);
        if (r->bc[i].lazy) on_boxlazy_free(r->bc[i].lazy);
        free(r->bc[i].lazy);
    }
    free(r);
}

/* ---- join scratch, shared ---- */

on_status on_route_joins_create(on_route_joins **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? ON_SUCCESS : ON_FAILURE | ON_NO_MEMORY;
}

void on_route_joins_destroy(on_route_joins *j)
{
    if (!j) return;
    on_reach_free(&j->reach);
    free(j->cost);
    free(j->pts);
    free(j->grp);
    free(j);
}

size_t on_route_joins_bytes(const on_route_joins *j)
{
    if (!j) return 0;
    return sizeof *j + j->reach.bytes + j->costcap * sizeof *j->cost + j->ptscap * sizeof *j->pts +
           j->grpcap * sizeof *j->grp;
}

/* The planner's own join scratch freed (it holds none while it shares one). */
static void joins_free_own(on_route *r)
{
    on_reach_free(&r->reach);
    free(r->cost);
    free(r->pts);
    free(r->grp);
    r->cost = r->pts = NULL;
    r->grp = NULL;
    r->costcap = r->ptscap = r->grpcap = 0;
}

on_status on_route_set_weight(on_route *r, double weight)
{
    if (!r || !(weight >= 1 && weight <= ROUTE_WEIGHT_MAX)) return ON_FAILURE | ON_INVALID;
    if (weight == r->weight) return ON_SUCCESS;
    r->weight = weight;
    if (on_in_progress(r->status)) r->status = ON_FAILURE | ON_INVALID; /* (a search's keys have one weight) */
    return ON_SUCCESS;
}

double on_route_weight(const on_route *r) { return r ? r->weight : 0; }

void on_route_set_joins(on_route *r, on_route_joins *j)
{
    if (!r) return;
    joins_free_own(r);
    r->joins = j;
    r->joining = r->jown = r->jsusp = r->jpause = 0; /* (a join under way is dropped) */
    if (on_in_progress(r->status)) r->status = ON_FAILURE | ON_INVALID;
}

/* Exchange the join fields of r and j: a borrow moves j's into r (whose own are empty), the give
 * back moves them home, whatever the start grew. */
static void joins_swap(on_route *r, on_route_joins *j)
{
    on_reach rc = r->reach;
    r->reach = j->reach;
    j->reach = rc;
    double *c = r->cost, *p = r->pts;
    uint32_t *g = r->grp;
    size_t cc = r->costcap, pc = r->ptscap, gc = r->grpcap;
    r->cost = j->cost;
    r->pts = j->pts;
    r->grp = j->grp;
    r->costcap = j->costcap;
    r->ptscap = j->ptscap;
    r->grpcap = j->grpcap;
    j->cost = c;
    j->pts = p;
    j->grp = g;
    j->costcap = cc;
    j->ptscap = pc;
    j->grpcap = gc;
}

int on_route_borrow(on_route *r)
{
    if (!r->joins) return 0;
    if (r->joins->lent) return -1;
    joins_swap(r, r->joins);
    r->joins->lent = 1;
    return 0;
}

void on_route_giveback(on_route *r)
{
    if (!r->joins || !r->joins->lent) return;
    r->reach.lazy = NULL; /* (one of this planner's cached sets: never read by another) */
    joins_swap(r, r->joins);
    r->joins->lent = 0;
}

void on_route_take_home(on_route *r)
{
    if (!r->joins || r->joins->lent || r->joins->reach.bytes >= r->reach.bytes) return;
    joins_swap(r, r->joins);
    r->reach.lazy = NULL; /* (the shared one's: no start of r's under way) */
    r->reach.suspended = 0;
}

size_t on_route_bytes(const on_route *r)
{
    size_t b = sizeof *r + r->max_nodes * (sizeof(rnode) + sizeof(uint32_t)) + (r->mask + 1) * 2 * sizeof(uint32_t) +
               r->gjcap * sizeof(gjoin) + r->goalcap * 4 * sizeof(double) + r->startcap * 3 * sizeof(double) + r->costcap * sizeof(double) + r->ptscap * sizeof(double) + r->grpcap * sizeof(uint32_t) + r->reach.bytes +
               r->jincap * 4 * sizeof(double);
    for (int i = 0; i < ROUTE_BOX_CACHE; i++) {
        if (r->bc[i].own) b += r->bc[i].own->bytes;
        if (r->bc[i].lazy) b += r->bc[i].lazy->set.bytes;
    }
    return b;
}
/* ---- node map and heap ---- */

static void node_init(rnode *n, uint32_t tile, uint32_t portal)
{
    memset(n, 0, sizeof *n);
    n->tile = tile;
    n->portal = portal;
    n->g = HUGE_VAL;
    n->parent = NO_NODE;
    n->heap = NO_NODE;
}

/* The node keyed (tile, portal) in the map: a pseudo node, or a tile's header; created (count nodes
 * in a row, the first the keyed one) when absent and create is set. */
static uint32_t map_node(on_route *r, uint32_t tile, uint32_t portal, int create, uint32_t count)
{
    size_t h = on_mix64(((uint64_t)tile << 32) | portal) & r->mask;
    for (;;) {
        if (r->stamp[h] != r->cur_stamp) {
            if (!create || count > r->max_nodes - r->nnode) return NO_NODE;
            r->stamp[h] = r->cur_stamp;
            uint32_t i = r->nnode;
            r->nnode += count;
            r->map[h] = i;
            node_init(&r->node[i], tile, portal);
            return i;
        }
        uint32_t i = r->map[h];
        if (r->node[i].tile == tile && r->node[i].portal == portal) return i;
        h = (h + 1) & r->mask;
    }
}

/* A tile's portal nodes are one block (made when the tile is first reached: its header node, then
 * one node per portal), so an expansion reaches the other portals of its tile by index. */
uint32_t on_route_node(on_route *r, uint32_t tile, uint32_t portal, int create)
{
    if (portal >= PORTAL_TILE) return map_node(r, tile, portal, create, 1);
    const ctile *c = r->w->tiles[tile];
    if (!c || portal >= c->np) return NO_NODE;
    uint32_t b = map_node(r, tile, PORTAL_TILE, 0, 0);
    if (b == NO_NODE) {
        if (!create) return NO_NODE;
        b = map_node(r, tile, PORTAL_TILE, 1, c->np + 1);
        if (b == NO_NODE) return NO_NODE;
        r->node[b].closed = 1; /* the header is never searched */
        for (uint32_t q = 0; q < c->np; q++) node_init(&r->node[b + 1 + q], tile, q);
    }
    return b + 1 + portal;
}

static void heap_set(on_route *r, size_t pos, uint32_t i)
{
    r->heap[pos] = i;
    r->node[i].heap = (uint32_t)pos;
}

static void heap_up(on_route *r, size_t pos)
{
    uint32_t i = r->heap[pos];
    double f = r->node[i].f;
    while (pos > 0) {
        size_t p = (pos - 1) / 2;
        if (r->node[r->heap[p]].f <= f) break;
        heap_set(r, pos, r->heap[p]);
        pos = p;
    }
    heap_set(r, pos, i);
}

static uint32_t heap_pop(on_route *r)
{
    uint32_t top = r->heap[0];
    r->node[top].heap = NO_NODE;
    uint32_t last = r->heap[--r->nheap];
    if (r->nheap == 0) return top;
    size_t pos = 0;
    double f = r->node[last].f;
    for (;;) {
        size_t c = 2 * pos + 1;
        if (c >= r->nheap) break;
        if (c + 1 < r->nheap && r->node[r->heap[c + 1]].f < r->node[r->heap[c]].f) c++;
        if (r->node[r->heap[c]].f >= f) break;
        heap_set(r, pos, r->heap[c]);
        pos = c;
    }
    heap_set(r, pos, last);
    return top;
}

double on_route_heuristic(const on_route *r, const double x[3])
{
    double h = HUGE_VAL;
    for (size_t i = 0; i < r->ngoal; i++) {
        double d = on_dist3(x, r->goalpt + 3 * i) + r->goalcost[i];
        if (d < h) h = d;
    }
    return h;
}
/* on_route_relax for node i (made). */
static inline __attribute__((always_inline)) void relax_at(on_route *r, uint32_t i, double g, const double *x,
                                                          uint32_t parent, uint32_t start, const via *lk)
{
    rnode *n = &r->node[i];
    if (n->closed || g >= n->g) return;
    n->g = g;
    n->f = g + (x ? r->weight * on_route_heuristic(r, x) : 0); /* the heuristic only for a node that improves */
    n->parent = parent;
    n->start = start;
    n->via_link = lk != NULL;
    if (lk) {
        n->link_owner = lk->owner;
        n->link_i = lk->i;
        n->link_k = (uint8_t)lk->k;
    }
    if (n->heap == NO_NODE) {
        r->heap[r->nheap] = i;
        n->heap = (uint32_t)r->nheap++;
    }
    heap_up(r, n->heap);
}

int on_route_relax(on_route *r, uint32_t tile, uint32_t portal, double g, const double *x, uint32_t parent,
                   uint32_t start, const via *lk)
{
    uint32_t i = on_route_node(r, tile, portal, 1);
    if (i == NO_NODE) return -1;
    relax_at(r, i, g, x, parent, start, lk);
    return 0;
}
/* The cheapest goal join of (tile, portal), or NULL. */
static const gjoin *goal_join(const on_route *r, uint32_t tile, uint32_t portal)
{
    size_t lo = 0, hi = r->ngj;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const gjoin *j = &r->gj[mid];
        if (j->tile < tile || (j->tile == tile && j->portal < portal)) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->ngj && r->gj[lo].tile == tile && r->gj[lo].portal == portal ? &r->gj[lo] : NULL;
}
/* One entry of an expansion's row: the component's j-th portal (node blk + j, portal first + j) reached
 * at cost gq (relax_at's test first, before its point is made). */
static inline __attribute__((always_inline)) void relax_row(on_route *r, const ctile *tg, uint32_t blk, uint32_t j, uint32_t first, double gq,
                             const double base[3], uint32_t parent, uint32_t start)
{
    const rnode *nq = &r->node[blk + j];
    if (nq->closed || gq >= nq->g) return;
    double x[3];
    ct_point(tg, first + j, x);
    for (int k = 0; k < 3; k++) x[k] += base[k];
    relax_at(r, blk + j, gq, x, parent, start, NULL);
}

double on_route_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

on_status on_route_expand(on_route *r, size_t budget, size_t *done)
{
    size_t n = 0;
    if (done) *done = 0;
    if (!r) return ON_FAILURE | ON_INVALID;
    if (!on_in_progress(r->status)) return r->status;
    const on_wgraph *w = r->w;
    if (w->revision != r->revision) return r->status = ON_FAILURE | ON_STALE;
    /* (a step's time limit, on_route_set_join_limit's seconds: read before each expansion but the
     * first, so that a step passes its deadline by at most one expansion (an expansion relaxes a row
     * of its tile's weight matrix: up to hundreds of portals; read every 8, a step passed it by up to
     * 8 of them); the search goes on where it stopped, so the route is the same) */
    const double deadline = r->step_deadline;
    while (n < budget) {
        if (deadline > 0 && n > 0 && on_route_now() >= deadline) break;
        if (r->nheap == 0) {
            r->status = ON_FAILURE | ON_UNREACHABLE;
            break;
        }
        uint32_t i = heap_pop(r);
        rnode *nd = &r->node[i];
        nd->closed = 1;
        n++;
        if (nd->portal == PORTAL_GOAL) {
            r->goal_node = i;
            r->info.cost = nd->g * w->p.scale;
            r->status = ON_SUCCESS;
            break;
        }
        if (nd->portal == PORTAL_MISSING) {
            r->info.loading_tile = nd->tile;
            r->status = ON_FAILURE | ON_LOADING;
            break;
        }
        uint32_t t = nd->tile, p = nd->portal;
        double g = nd->g, x[3], px[3];
        const ctile *tg = w->tiles[t];
        /* the goal through this portal */
        const gjoin *gj = goal_join(r, t, p);
        if (gj) {
            uint32_t gn = on_route_node(r, 0, PORTAL_GOAL, 1);
            if (gn == NO_NODE) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
            double before = r->node[gn].g;
            if (on_route_relax(r, 0, PORTAL_GOAL, g + gj->cost, NULL, i, r->node[i].start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
            if (r->node[gn].g < before) r->node[gn].goal = gj->goal;
        }
        uint32_t start = r->node[i].start;
        /* the other portals of its component: one row of its weight matrix */
        int tc[3];
        wg_tile_ijk(w, t, tc);
        double base[3] = {(double)tc[0] * w->n, (double)tc[1] * w->n, (double)tc[2] * w->n};
        ct_row row;
        ct_row_of(tg, p, &row);
        /* the row read in two runs of the packed upper triangle (ct_row_weight's index, stepped): the
         * portals before p down its column (pair (j, a): the step from j to j + 1 is m - j - 2), those
         * after p along its row (contiguous); a node is looked at only for a nonzero weight */
        uint32_t blk = i - p + row.first; /* node of the component's j-th portal: blk + j */
        const uint8_t *wr = row.w;
        size_t at = row.a > 0 ? row.a - 1 : 0;
        for (uint32_t j = 0; j < row.a; at += row.m - j - 2, j++) {
            uint32_t wv = (uint32_t)wr[2 * at] | (uint32_t)wr[2 * at + 1] << 8;
            if (wv) relax_row(r, tg, blk, j, row.first, g + (double)wv * row.unit, base, i, start);
        }
        at = (size_t)row.a * (2 * (size_t)row.m - row.a - 1) / 2;
        for (uint32_t j = row.a + 1; j < row.m; j++, at++) {
            uint32_t wv = (uint32_t)wr[2 * at] | (uint32_t)wr[2 * at + 1] << 8;
            if (wv) relax_row(r, tg, blk, j, row.first, g + (double)wv * row.unit, base, i, start);
        }
        /* links into the neighbour, or a missing neighbour */
        int f = ct_face(tg, p), k = f >> 1, nw[3] = {tc[0], tc[1], tc[2]};
        nw[k] += (f & 1) ? 1 : -1;
        if (nw[k] < 0 || nw[k] >= w->p.tiles[k]) continue; /* the world's border */
        uint32_t nt = wg_tile_index(w, nw);
        ct_point(tg, p, px);
        for (int j = 0; j < 3; j++) px[j] += base[j];
        if (!w->tiles[nt] || (tg->unresolved & (1u << f))) {
            /* missing: the neighbour's graph, or (unresolved) the graph of the side whose face is gone */
            uint32_t need = w->tiles[nt] && !on_wgraph_face_kept(w, nt, f ^ 1) ? nt : !w->tiles[nt] ? nt : t;
            if (on_route_relax(r, need, PORTAL_MISSING, g, px, i, start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
            continue;
        }
        /* the owner's links of this face pair are sorted by the owner's portal: this one's by binary
         * search on the owner's side, a scan of one field on the other */
        via lk = {(f & 1) ? t : nt, 0, k};
        const ctile *oc = w->tiles[lk.owner];
        const ctile *nc = w->tiles[nt];
        const int *cw = (f & 1) ? tc : nw; /* the owner's grid position */
        uint32_t i0, i1;
        ct_links_of(oc, k, p, (f & 1) != 0, &i0, &i1);
        const uint8_t *lx = oc->d + ct_off_links(oc, k);
        size_t lsz = ct_link_size(oc), side = (f & 1) ? 0 : (size_t)oc->w;
        for (lk.i = i0; lk.i < i1; lk.i++) {
            if (ct_rd(lx + lk.i * lsz + side, oc->w) != p) continue;
            uint32_t la, lb, lo[2], hi[2];
            ct_link(oc, k, lk.i, &la, &lb, lo, hi);
            uint32_t q = (f & 1) ? lb : la;
            double c[3];
            int u = (k + 1) % 3, v = (k + 2) % 3;
            c[k] = (double)(cw[k] + 1) * w->n;
            c[u] = (double)cw[u] * w->n + 0.5 * (lo[0] + hi[0]);
            c[v] = (double)cw[v] * w->n + 0.5 * (lo[1] + hi[1]);
            ct_point(nc, q, x);
            for (int j = 0; j < 3; j++) x[j] += (double)nw[j] * w->n;
            if (on_route_relax(r, nt, q, g + on_dist3(px, c) + on_dist3(c, x), x, i, start, &lk)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                goto out;
            }
        }
    }
out:
    r->info.expansions += n;
    if (done) *done = n;
    return r->status;
}

/* The overlap rectangle of the link node nd came through, global nav space (degenerate across). */
static void link_rect(const on_wgraph *w, const rnode *nd, double lo[3], double hi[3])
{
    uint32_t a, b, l[2], h[2];
    int k = nd->link_k, u = (k + 1) % 3, v = (k + 2) % 3, c[3];
    ct_link(w->tiles[nd->link_owner], k, nd->link_i, &a, &b, l, h);
    wg_tile_ijk(w, nd->link_owner, c);
    lo[k] = hi[k] = (double)(c[k] + 1) * w->n;
    lo[u] = (double)c[u] * w->n + l[0];
    hi[u] = (double)c[u] * w->n + h[0];
    lo[v] = (double)c[v] * w->n + l[1];
    hi[v] = (double)c[v] * w->n + h[1];
}

/* Pulling a route's crossings taut (on_route_result): passes over the crossings, each moved to the
 * best point of its rectangle between its neighbours, until no crossing moved PULL_STILL leaves or
 * PULL_PASSES passes. Routes of at most PULL_MAX crossings keep their rectangles on the stack and skip a
 * crossing whose neighbours did not move since it was last placed (it would land where it is). */
#define PULL_PASSES 32
#define PULL_STILL 1e-6
#define PULL_MAX 128

/* The pulling of on_route_result for a route of cnt <= PULL_MAX crossings (steps[] hold the
 * rectangles' centres): rectangles read once; a crossing is placed again only when a neighbour moved
 * since (stamps), which gives the very points of the plain passes. */
static void pull_cached(const on_route *r, const rnode *gn, on_route_cross *steps, size_t cnt, const double *a,
                        const double *b)
{
    double rect[PULL_MAX][6];
    int axis[PULL_MAX];
    uint32_t changed[PULL_MAX], placed[PULL_MAX], clock = 1; /* when a crossing last moved / was placed */
    size_t k = cnt;
    for (uint32_t i = gn->parent; i != NO_NODE; i = r->node[i].parent) {
        const rnode *nd = &r->node[i];
        if (!nd->via_link) continue;
        k--;
        link_rect(r->w, nd, rect[k], rect[k] + 3);
        axis[k] = nd->link_k;
        changed[k] = 1;
        placed[k] = 0;
    }
    for (int pass = 0; pass < PULL_PASSES; pass++) {
        double moved = 0;
        for (k = cnt; k-- > 0;) {
            uint32_t last = placed[k];
            if (last && (k == 0 || changed[k - 1] < last) && (k + 1 == cnt || changed[k + 1] < last)) continue;
            double q[3];
            const double *pa = k > 0 ? steps[k - 1].point : a, *pc = k + 1 < cnt ? steps[k + 1].point : b;
            on_rect_best(pa, pc, rect[k], rect[k] + 3, axis[k], q);
            double d = on_dist3(q, steps[k].point);
            placed[k] = ++clock;
            if (d > 0) changed[k] = clock;
            if (d > moved) moved = d;
            memcpy(steps[k].point, q, sizeof q);
        }
        if (moved < PULL_STILL) break;
    }
}

on_status on_route_result(const on_route *r, on_route_cross *steps, size_t cap, size_t *n, on_route_info *info)
{
    *n = 0;
    if (!r) return ON_FAILURE | ON_INVALID;
    if (info) *info = r->info;
    if (!on_ok(r->status) || r->goal_node == NO_NODE) return r->status;
    if (r->w->revision != r->revision) return ON_FAILURE | ON_STALE; /* its links may be gone */
    const rnode *gn = &r->node[r->goal_node];
    if (info) {
        info->goal = gn->goal;
        info->start = gn->start;
    }
    size_t cnt = 0;
    for (uint32_t i = gn->parent; i != NO_NODE; i = r->node[i].parent) cnt += r->node[i].via_link;
    *n = cnt;
    if (cnt > cap || (cnt && !steps)) return ON_FAILURE | ON_BUFFER_SMALL;
    size_t k = cnt;
    const on_tree_params *p = &r->w->p;
    double lo[3], hi[3];
    for (uint32_t i = gn->parent; i != NO_NODE; i = r->node[i].parent) {
        const rnode *nd = &r->node[i];
        if (!nd->via_link) continue;
        on_route_cross *s = &steps[--k];
        const rnode *from = &r->node[nd->parent];
        s->tile = from->tile;
        s->portal = from->portal;
        s->to_tile = nd->tile;
        s->to_portal = nd->portal;
        link_rect(r->w, nd, lo, hi);
        for (int j = 0; j < 3; j++) s->point[j] = 0.5 * (lo[j] + hi[j]);
    }
    /* pull the crossings taut: each moved inside its link's overlap rectangle (where the crossing is
     * free on both sides) to the best point between its neighbours, in passes */
    const double *a = r->startpt + 3 * (size_t)gn->start, *b = r->goalpt + 3 * (size_t)gn->goal;
    if (cnt <= PULL_MAX) pull_cached(r, gn, steps, cnt, a, b);
    else
        for (int pass = 0; pass < PULL_PASSES; pass++) {
            double moved = 0;
            k = cnt;
            for (uint32_t i = gn->parent; i != NO_NODE; i = r->node[i].parent) {
                const rnode *nd = &r->node[i];
                if (!nd->via_link) continue;
                k--;
                double q[3];
                link_rect(r->w, nd, lo, hi);
                const double *pa = k > 0 ? steps[k - 1].point : a, *pc = k + 1 < cnt ? steps[k + 1].point : b;
                on_rect_best(pa, pc, lo, hi, nd->link_k, q);
                double d = on_dist3(q, steps[k].point);
                if (d > moved) moved = d;
                memcpy(steps[k].point, q, sizeof q);
            }
            if (moved < PULL_STILL) break;
        }
    double len = 0;
    for (size_t i = 0; i <= cnt; i++) len += on_dist3(i > 0 ? steps[i - 1].point : a, i < cnt ? steps[i].point : b);
    if (info) info->length = len * p->scale;
    for (size_t i = 0; i < cnt; i++)
        for (int j = 0; j < 3; j++) steps[i].point[j] = p->origin[j] + steps[i].point[j] * p->scale;
    return r->status;
}
