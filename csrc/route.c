/*
 * route.c -- the sliced route planner over the world graph (see route.h for the rules, wgraph.h for
 * the graph's resident form).
 *
 * A* over (tile, portal) nodes in a preallocated pool found through an open-addressing map reset by
 * a stamp; a binary heap with positions for decrease-key; two kinds of pseudo node (the goal, a
 * missing tile). Endpoints join through a local search in their own tile (reach.h).
 */
#include "wgraph.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Global nav-space point of portal p of tile t. */
static void portal_global(const on_wgraph *w, uint32_t t, uint32_t p, double out[3])
{
    int c[3];
    wg_tile_ijk(w, t, c);
    ct_point(w->tiles[t], p, out);
    for (int k = 0; k < 3; k++) out[k] += (double)c[k] * w->n;
}

/* ---- the planner ------------------------------------------------------------------------------ */

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

typedef struct boxcache {
    uint32_t tile;
    on_boxset *own;        /* built here (NULL when the tree's prepared set was used) */
    const on_boxset *s;
} boxcache;

struct on_route {
    const on_wgraph *w;
    size_t max_nodes;
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
    size_t costcap, ptscap;
    on_reach reach;
    boxcache bc[2];
    uint64_t revision;
    on_status status;
    on_route_info info;
    uint32_t goal_node;
};

on_status on_route_create(const on_wgraph *w, size_t max_nodes, on_route **out)
{
    *out = NULL;
    if (!w) return ON_FAILURE | ON_INVALID;
    if (max_nodes == 0) max_nodes = 65536;
    if (max_nodes > (1u << 30)) return ON_FAILURE | ON_INVALID;
    on_route *r = calloc(1, sizeof *r);
    if (!r) return ON_FAILURE | ON_NO_MEMORY;
    r->w = w;
    r->max_nodes = max_nodes;
    size_t m = 1;
    while (m < 2 * max_nodes) m *= 2;
    r->mask = m - 1;
    r->node = malloc(max_nodes * sizeof *r->node);
    r->map = malloc(m * sizeof *r->map);
    r->stamp = calloc(m, sizeof *r->stamp);
    r->heap = malloc(max_nodes * sizeof *r->heap);
    if (!r->node || !r->map || !r->stamp || !r->heap) {
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
    on_reach_free(&r->reach);
    for (int i = 0; i < 2; i++) on_boxset_free(r->bc[i].own);
    free(r);
}

size_t on_route_bytes(const on_route *r)
{
    size_t b = sizeof *r + r->max_nodes * (sizeof(rnode) + sizeof(uint32_t)) + (r->mask + 1) * 2 * sizeof(uint32_t) +
               r->gjcap * sizeof(gjoin) + r->goalcap * 4 * sizeof(double) + r->startcap * 3 * sizeof(double) + r->costcap * sizeof(double) + r->ptscap * sizeof(double) + r->reach.bytes;
    for (int i = 0; i < 2; i++)
        if (r->bc[i].own) b += r->bc[i].own->bytes;
    return b;
}

/* The box set of a loaded tree tile: the tree's prepared one when valid, else one built here, kept
 * until the next start (a start needs at most its endpoints' tiles; bc holds the last two built, and
 * a set in use is never the one evicted: hits move to the front). */
static on_status tile_boxes(on_route *r, const on_tree *t, uint32_t tile, const on_boxset **out)
{
    *out = on_tile_boxes(t, tile);
    if (*out) return ON_SUCCESS;
    for (int i = 0; i < 2; i++)
        if (r->bc[i].own && r->bc[i].tile == tile) {
            boxcache hit = r->bc[i];
            r->bc[i] = r->bc[0];
            r->bc[0] = hit;
            *out = hit.s;
            return ON_SUCCESS;
        }
    boxcache *c = &r->bc[1];
    on_boxset_free(c->own);
    c->own = NULL;
    on_status st = on_boxset_build(&t->tiles[tile].table, t->tiles[tile].solid, t->p.depth, &c->own);
    if (on_failed(st)) return st;
    c->tile = tile;
    c->s = c->own;
    boxcache tmp = r->bc[0]; /* most recent first */
    r->bc[0] = r->bc[1];
    r->bc[1] = tmp;
    *out = r->bc[0].s;
    return ON_SUCCESS;
}

static void boxes_clear(on_route *r)
{
    for (int i = 0; i < 2; i++) {
        on_boxset_free(r->bc[i].own);
        r->bc[i].own = NULL;
        r->bc[i].s = NULL;
    }
}

/* ---- node map and heap ---- */

static uint32_t node_find(on_route *r, uint32_t tile, uint32_t portal, int create)
{
    size_t h = on_mix64(((uint64_t)tile << 32) | portal) & r->mask;
    for (;;) {
        if (r->stamp[h] != r->cur_stamp) {
            if (!create || r->nnode >= r->max_nodes) return NO_NODE;
            r->stamp[h] = r->cur_stamp;
            uint32_t i = r->nnode++;
            r->map[h] = i;
            rnode *n = &r->node[i];
            memset(n, 0, sizeof *n);
            n->tile = tile;
            n->portal = portal;
            n->g = HUGE_VAL;
            n->parent = NO_NODE;
            n->heap = NO_NODE;
            return i;
        }
        uint32_t i = r->map[h];
        if (r->node[i].tile == tile && r->node[i].portal == portal) return i;
        h = (h + 1) & r->mask;
    }
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

/* Straight line from nav point x to the nearest goal plus its cost: never above the cost left. */
static double heuristic(const on_route *r, const double x[3])
{
    double h = HUGE_VAL;
    for (size_t i = 0; i < r->ngoal; i++) {
        double d = on_dist3(x, r->goalpt + 3 * i) + r->goalcost[i];
        if (d < h) h = d;
    }
    return h;
}

typedef struct via {
    uint32_t owner, i;
    int k;
} via;

/* Reach node (tile, portal) with cost g from parent (NO_NODE: from start `start`); lk: the link
 * when through one. h: the heuristic at the node's point. 0, or -1 when out of nodes. */
static int relax(on_route *r, uint32_t tile, uint32_t portal, double g, double h, uint32_t parent, uint32_t start,
                 const via *lk)
{
    uint32_t i = node_find(r, tile, portal, 1);
    if (i == NO_NODE) return -1;
    rnode *n = &r->node[i];
    if (n->closed || g >= n->g) return 0;
    n->g = g;
    n->f = g + h;
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
    return 0;
}

static int gjoin_cmp(const void *x, const void *y)
{
    const gjoin *a = x, *b = y;
    if (a->tile != b->tile) return a->tile < b->tile ? -1 : 1;
    if (a->portal != b->portal) return a->portal < b->portal ? -1 : 1;
    return a->cost < b->cost ? -1 : a->cost > b->cost;
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

/* An endpoint in nav space: its tile, tile-local point, and that tile's boxes and graph. */
typedef struct endpoint {
    double nav[3], local[3];
    uint32_t tile;
    const on_boxset *s;
    const ctile *g;
} endpoint;

static on_status endpoint_of(on_route *r, const on_tree *t, const double p[3], int which, endpoint *e)
{
    const on_wgraph *w = r->w;
    int c[3];
    r->info.which = which;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(p[k])) return ON_FAILURE | ON_INVALID;
        e->nav[k] = (p[k] - w->p.origin[k]) / w->p.scale;
        double ti = floor(e->nav[k] / w->n);
        if (ti < 0 || ti >= w->p.tiles[k]) {
            if (e->nav[k] == (double)w->p.tiles[k] * w->n) ti = w->p.tiles[k] - 1; /* the far face */
            else return ON_FAILURE | ON_OUTSIDE;
        }
        c[k] = (int)ti;
        e->local[k] = e->nav[k] - ti * w->n;
    }
    e->tile = (uint32_t)c[0] + (uint32_t)w->p.tiles[0] * ((uint32_t)c[1] + (uint32_t)w->p.tiles[1] * (uint32_t)c[2]);
    r->info.loading_tile = e->tile;
    e->g = w->tiles[e->tile];
    if (!e->g || !t->tiles[e->tile].loaded) return ON_FAILURE | ON_LOADING;
    on_status st = tile_boxes(r, t, e->tile, &e->s);
    if (on_failed(st)) return st;
    if (on_boxset_locate(e->s, e->local) < 0) return ON_FAILURE | ON_BLOCKED;
    return ON_SUCCESS;
}

/* Reach the portals of e's tile from e: r->cost; *reached. */
static on_status endpoint_reach(on_route *r, const endpoint *e, uint32_t *reached)
{
    if (on_grow((void **)&r->cost, &r->costcap, (size_t)e->g->np + 1, sizeof *r->cost) ||
        on_grow((void **)&r->pts, &r->ptscap, 3 * (size_t)e->g->np + 3, sizeof *r->pts))
        return ON_FAILURE | ON_NO_MEMORY;
    for (uint32_t p = 0; p < e->g->np; p++) ct_point(e->g, p, r->pts + 3 * (size_t)p);
    return on_reach_points(&r->reach, e->s, r->pts, e->g->np, e->local, r->cost, reached);
}

static void route_reset(on_route *r)
{
    boxes_clear(r);
    r->cur_stamp++;
    if (r->cur_stamp == 0) { /* wrapped: clear the stamps once */
        memset(r->stamp, 0, (r->mask + 1) * sizeof *r->stamp);
        r->cur_stamp = 1;
    }
    r->nnode = 0;
    r->nheap = 0;
    r->ngj = 0;
    r->ngoal = 0;
    memset(&r->info, 0, sizeof r->info);
    r->goal_node = NO_NODE;
    r->revision = r->w->revision;
}

/* Where the endpoint sets are checked and joined; see route.h. near_ok: a single pair may stop as near. */
static on_status start_sets(on_route *r, const on_tree *t, const double *starts, const double *scost, size_t ns,
                            const double *goals, const double *gcost, size_t ng, int near_ok)
{
    route_reset(r);
    r->status = ON_FAILURE | ON_INVALID;
    if (!t || ns == 0 || ng == 0 || !starts || !goals) return r->status;
    const on_tree_params *tp = on_tree_get_params(t);
    for (int k = 0; k < 3; k++)
        if (tp->tiles[k] != r->w->p.tiles[k]) return r->status;
    if (tp->depth != r->w->p.depth) return r->status;
    double inv = 1.0 / r->w->p.scale;
    if (ng > r->goalcap) { /* goal points and costs, sized together */
        double *a = realloc(r->goalpt, ng * 3 * sizeof *a);
        if (a) r->goalpt = a;
        double *b = realloc(r->goalcost, ng * sizeof *b);
        if (b) r->goalcost = b;
        if (!a || !b) return r->status = ON_FAILURE | ON_NO_MEMORY;
        r->goalcap = ng;
    }
    if (ns > r->startcap) {
        double *a = realloc(r->startpt, ns * 3 * sizeof *a);
        if (!a) return r->status = ON_FAILURE | ON_NO_MEMORY;
        r->startpt = a;
        r->startcap = ns;
    }
    endpoint e;
    /* goals: their joins to their tile's portals */
    for (size_t i = 0; i < ng; i++) {
        on_status st = endpoint_of(r, t, goals + 3 * i, 1, &e);
        if (on_failed(st)) return r->status = st;
        double gc = gcost ? gcost[i] * inv : 0;
        if (!(gc >= 0) || !isfinite(gc)) return r->status = ON_FAILURE | ON_INVALID;
        memcpy(r->goalpt + 3 * i, e.nav, sizeof e.nav);
        r->goalcost[i] = gc;
        r->ngoal = i + 1;
        if (near_ok) {
            endpoint sa;
            st = endpoint_of(r, t, starts, 0, &sa);
            if (on_failed(st)) return r->status = st;
            int c1[3], c2[3], far = 0;
            wg_tile_ijk(r->w, sa.tile, c1);
            wg_tile_ijk(r->w, e.tile, c2);
            for (int k = 0; k < 3; k++) far |= abs(c1[k] - c2[k]) > 1;
            if (!far) {
                r->info.near = sa.tile == e.tile ? ON_ROUTE_SAME_TILE : ON_ROUTE_NEIGHBOURS;
                r->info.cost = on_dist3(sa.nav, e.nav) * r->w->p.scale;
                return r->status = ON_SUCCESS;
            }
        }
        uint32_t reached;
        st = endpoint_reach(r, &e, &reached);
        if (on_failed(st)) return r->status = st;
        if (on_grow((void **)&r->gj, &r->gjcap, r->ngj + reached + 1, sizeof *r->gj))
            return r->status = ON_FAILURE | ON_NO_MEMORY;
        for (uint32_t p = 0; p < e.g->np; p++)
            if (r->cost[p] < HUGE_VAL) r->gj[r->ngj++] = (gjoin){e.tile, p, (uint32_t)i, r->cost[p] + gc};
    }
    qsort(r->gj, r->ngj, sizeof *r->gj, gjoin_cmp);
    /* starts: push the portals each reaches (and a direct join to a goal in its tile) */
    size_t pushed = 0;
    for (size_t i = 0; i < ns; i++) {
        on_status st = endpoint_of(r, t, starts + 3 * i, 0, &e);
        if (on_failed(st)) return r->status = st;
        memcpy(r->startpt + 3 * i, e.nav, sizeof e.nav);
        double sc = scost ? scost[i] * inv : 0;
        if (!(sc >= 0) || !isfinite(sc)) return r->status = ON_FAILURE | ON_INVALID;
        uint32_t reached;
        st = endpoint_reach(r, &e, &reached);
        if (on_failed(st)) return r->status = st;
        for (uint32_t p = 0; p < e.g->np; p++) {
            if (r->cost[p] == HUGE_VAL) continue;
            double x[3];
            portal_global(r->w, e.tile, p, x);
            if (relax(r, e.tile, p, sc + r->cost[p], heuristic(r, x), NO_NODE, (uint32_t)i, NULL))
                return r->status = ON_FAILURE | ON_OUT_OF_NODES;
            pushed++;
        }
        for (size_t j = 0; j < ng; j++) {
            double gl[3];
            int same = 1;
            for (int k = 0; k < 3; k++) {
                double ti = floor(r->goalpt[3 * j + k] / r->w->n);
                if (ti >= r->w->p.tiles[k]) ti = r->w->p.tiles[k] - 1;
                gl[k] = r->goalpt[3 * j + k] - ti * r->w->n;
                same &= e.nav[k] - e.local[k] == ti * r->w->n;
            }
            if (!same) continue;
            double d = on_reach_cost_to(&r->reach, e.s, gl);
            if (d == HUGE_VAL) continue;
            uint32_t gn = node_find(r, 0, PORTAL_GOAL, 1);
            if (gn == NO_NODE) return r->status = ON_FAILURE | ON_OUT_OF_NODES;
            if (relax(r, 0, PORTAL_GOAL, sc + d + r->goalcost[j], 0, NO_NODE, (uint32_t)i, NULL))
                return r->status = ON_FAILURE | ON_OUT_OF_NODES;
            r->node[gn].goal = (uint32_t)j;
            pushed++;
        }
    }
    r->info.which = 0;
    if (!pushed) {
        r->info.which = 0;
        return r->status = ON_FAILURE | ON_UNREACHABLE;
    }
    if (r->ngj == 0 && node_find(r, 0, PORTAL_GOAL, 0) == NO_NODE) {
        r->info.which = 1;
        return r->status = ON_FAILURE | ON_UNREACHABLE;
    }
    return r->status = ON_IN_PROGRESS;
}

on_status on_route_start(on_route *r, const on_tree *t, const double a[3], const double b[3])
{
    if (!r || !a || !b) return ON_FAILURE | ON_INVALID;
    return start_sets(r, t, a, NULL, 1, b, NULL, 1, 1);
}

on_status on_route_start_multi(on_route *r, const on_tree *t, const double *starts, const double *start_cost,
                               size_t ns, const double *goals, const double *goal_cost, size_t ng)
{
    if (!r) return ON_FAILURE | ON_INVALID;
    return start_sets(r, t, starts, start_cost, ns, goals, goal_cost, ng, 0);
}

on_status on_route_step(on_route *r, size_t budget, size_t *done)
{
    size_t n = 0;
    if (done) *done = 0;
    if (!r) return ON_FAILURE | ON_INVALID;
    if (!on_in_progress(r->status)) return r->status;
    const on_wgraph *w = r->w;
    if (w->revision != r->revision) return r->status = ON_FAILURE | ON_STALE;
    while (n < budget) {
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
            uint32_t gn = node_find(r, 0, PORTAL_GOAL, 1);
            if (gn == NO_NODE) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
            double before = r->node[gn].g;
            if (relax(r, 0, PORTAL_GOAL, g + gj->cost, 0, i, r->node[i].start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
            if (r->node[gn].g < before) r->node[gn].goal = gj->goal;
        }
        uint32_t start = r->node[i].start;
        /* the other portals of its component */
        uint32_t comp = ct_comp(tg, p), q1 = ct_comp_first(tg, comp + 1);
        for (uint32_t q = ct_comp_first(tg, comp); q < q1; q++) {
            double wq;
            if (q == p || (wq = ct_weight(tg, p, q)) == 0) continue;
            portal_global(w, t, q, x);
            if (relax(r, t, q, g + wq, heuristic(r, x), i, start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                goto out;
            }
        }
        /* links into the neighbour, or a missing neighbour */
        int f = ct_face(tg, p), k = f >> 1;
        uint32_t nt = on_wgraph_neighbour(w, t, f);
        if (nt == UINT32_MAX) continue;
        portal_global(w, t, p, px);
        if (!w->tiles[nt] || (tg->unresolved & (1u << f))) {
            /* missing: the neighbour's graph, or (unresolved) the graph of the side whose face is gone */
            uint32_t need = w->tiles[nt] && !on_wgraph_face_kept(w, nt, f ^ 1) ? nt : !w->tiles[nt] ? nt : t;
            if (relax(r, need, PORTAL_MISSING, g, heuristic(r, px), i, start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
            continue;
        }
        via lk = {(f & 1) ? t : nt, 0, k};
        const ctile *oc = w->tiles[lk.owner];
        int cw[3];
        wg_tile_ijk(w, lk.owner, cw);
        for (lk.i = 0; lk.i < oc->nlink[k]; lk.i++) {
            uint32_t la, lb, lo[2], hi[2];
            ct_link(oc, k, lk.i, &la, &lb, lo, hi);
            if ((f & 1) ? la != p : lb != p) continue;
            uint32_t q = (f & 1) ? lb : la;
            double c[3];
            int u = (k + 1) % 3, v = (k + 2) % 3;
            c[k] = (double)(cw[k] + 1) * w->n;
            c[u] = (double)cw[u] * w->n + 0.5 * (lo[0] + hi[0]);
            c[v] = (double)cw[v] * w->n + 0.5 * (lo[1] + hi[1]);
            portal_global(w, nt, q, x);
            if (relax(r, nt, q, g + on_dist3(px, c) + on_dist3(c, x), heuristic(r, x), i, start, &lk)) {
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
    for (int pass = 0; pass < 32 && cnt > 0; pass++) {
        double moved = 0;
        k = cnt;
        for (uint32_t i = gn->parent; i != NO_NODE; i = r->node[i].parent) {
            const rnode *nd = &r->node[i];
            if (!nd->via_link) continue;
            k--;
            double q[3];
            int axis = nd->link_k;
            link_rect(r->w, nd, lo, hi);
            const double *pa = k > 0 ? steps[k - 1].point : a, *pc = k + 1 < cnt ? steps[k + 1].point : b;
            on_best_on_face(pa, pc, lo, hi, axis, q);
            double d = on_dist3(q, steps[k].point);
            if (d > moved) moved = d;
            memcpy(steps[k].point, q, sizeof q);
        }
        if (moved < 1e-6) break;
    }
    double len = 0;
    for (size_t i = 0; i <= cnt; i++) len += on_dist3(i > 0 ? steps[i - 1].point : a, i < cnt ? steps[i].point : b);
    if (info) info->length = len * p->scale;
    for (size_t i = 0; i < cnt; i++)
        for (int j = 0; j < 3; j++) steps[i].point[j] = p->origin[j] + steps[i].point[j] * p->scale;
    return r->status;
}
