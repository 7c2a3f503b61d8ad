/*
 * route.c -- the world graph (tile graphs linked across shared faces) and the sliced route planner
 * over it (see route.h for the rules).
 *
 * Links: each tile slot keeps, per portal, the links to the portals of its face neighbours, rebuilt
 * for a tile and its 6 neighbours whenever one of them gains or loses its graph. Planner: A* over
 * (tile, portal) nodes in a preallocated pool found through an open-addressing map reset by a stamp;
 * a binary heap with positions for decrease-key; two kinds of pseudo node (the goal, a missing tile).
 */
#include "route.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct wlink {
    uint32_t tile, portal;
    float cost;            /* nav leaves */
    float pt[3];           /* crossing point, global nav space */
    float lo[3], hi[3];    /* the overlap rectangle it lies in (degenerate across the face) */
} wlink;

typedef struct wtile {
    on_tgraph *g;
    uint32_t *link_off;    /* nportal + 1 */
    wlink *link;
    size_t nlink;
} wtile;

struct on_wgraph {
    on_tree_params p;
    int n;
    uint32_t ntiles;
    uint64_t revision;
    wtile *tiles;
    size_t ngraphs;
};

const on_tree_params *on_wgraph_params(const on_wgraph *w) { return &w->p; }
uint64_t on_wgraph_revision(const on_wgraph *w) { return w->revision; }
const on_tgraph *on_wgraph_tile(const on_wgraph *w, uint32_t tile) { return tile < w->ntiles ? w->tiles[tile].g : NULL; }

on_status on_wgraph_create(const on_tree_params *p, on_wgraph **out)
{
    *out = NULL;
    if (!p || p->depth < 1 || p->depth > ON_MAX_DEPTH || !(p->scale > 0) || !isfinite(p->scale)) return ON_FAILURE | ON_INVALID;
    uint64_t nt = 1;
    for (int k = 0; k < 3; k++) {
        if (p->tiles[k] < 1 || p->tiles[k] > ON_MAX_TILES_PER_AXIS || !isfinite(p->origin[k])) return ON_FAILURE | ON_INVALID;
        nt *= (uint64_t)p->tiles[k];
    }
    if (nt >= (1u << 31)) return ON_FAILURE | ON_INVALID;
    on_wgraph *w = calloc(1, sizeof *w);
    if (!w) return ON_FAILURE | ON_NO_MEMORY;
    w->tiles = calloc((size_t)nt, sizeof *w->tiles);
    if (!w->tiles) {
        free(w);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    w->p = *p;
    w->n = 1 << p->depth;
    w->ntiles = (uint32_t)nt;
    *out = w;
    return ON_SUCCESS;
}

static void clear_links(wtile *t)
{
    free(t->link_off);
    free(t->link);
    t->link_off = NULL;
    t->link = NULL;
    t->nlink = 0;
}

void on_wgraph_destroy(on_wgraph *w)
{
    if (!w) return;
    for (uint32_t i = 0; i < w->ntiles; i++) {
        on_tgraph_free(w->tiles[i].g);
        clear_links(&w->tiles[i]);
    }
    free(w->tiles);
    free(w);
}

static void tile_ijk(const on_wgraph *w, uint32_t t, int c[3])
{
    c[0] = (int)(t % (uint32_t)w->p.tiles[0]);
    c[1] = (int)((t / (uint32_t)w->p.tiles[0]) % (uint32_t)w->p.tiles[1]);
    c[2] = (int)(t / ((uint32_t)w->p.tiles[0] * (uint32_t)w->p.tiles[1]));
}

/* The tile across face f of tile t, or UINT32_MAX outside the grid. */
static uint32_t face_neighbour(const on_wgraph *w, uint32_t t, int f)
{
    int c[3];
    tile_ijk(w, t, c);
    c[f >> 1] += (f & 1) ? 1 : -1;
    for (int k = 0; k < 3; k++)
        if (c[k] < 0 || c[k] >= w->p.tiles[k]) return UINT32_MAX;
    return (uint32_t)c[0] + (uint32_t)w->p.tiles[0] * ((uint32_t)c[1] + (uint32_t)w->p.tiles[1] * (uint32_t)c[2]);
}

/* Global nav-space point of portal p of tile t. */
static void portal_global(const on_wgraph *w, uint32_t t, const on_tgraph *g, uint32_t p, double out[3])
{
    int c[3];
    tile_ijk(w, t, c);
    on_portal_point(g, p, out);
    for (int k = 0; k < 3; k++) out[k] += (double)c[k] * w->n;
}

/* The best overlap of portal pa (of graph ga) with portal pb (of gb, on the opposite face): the
 * largest rectangle intersection, ties to the smallest (v, u); its centre in (u, v) in c. 0: none. */
static int portal_overlap(const on_tgraph *ga, uint32_t pa, const on_tgraph *gb, uint32_t pb, double c[2], long ov[4])
{
    const on_portal *a = &ga->portal[pa], *b = &gb->portal[pb];
    long best = 0, bu = 0, bv = 0;
    for (uint32_t i = 0; i < a->nrect; i++)
        for (uint32_t j = 0; j < b->nrect; j++) {
            const on_prect *x = &ga->rect[a->rect + i], *y = &gb->rect[b->rect + j];
            long u0 = x->mn[0] > y->mn[0] ? x->mn[0] : y->mn[0], u1 = x->mx[0] < y->mx[0] ? x->mx[0] : y->mx[0];
            long v0 = x->mn[1] > y->mn[1] ? x->mn[1] : y->mn[1], v1 = x->mx[1] < y->mx[1] ? x->mx[1] : y->mx[1];
            if (u0 >= u1 || v0 >= v1) continue;
            long area = (u1 - u0) * (v1 - v0);
            if (area > best || (area == best && (v0 < bv || (v0 == bv && u0 < bu)))) {
                best = area;
                bu = u0;
                bv = v0;
                c[0] = 0.5 * (double)(u0 + u1);
                c[1] = 0.5 * (double)(v0 + v1);
                ov[0] = u0;
                ov[1] = v0;
                ov[2] = u1;
                ov[3] = v1;
            }
        }
    return best > 0;
}

/* Rebuild tile t's links to its present neighbours; -1 on allocation failure (t keeps no links). */
static int build_links(on_wgraph *w, uint32_t t)
{
    wtile *wt = &w->tiles[t];
    clear_links(wt);
    const on_tgraph *g = wt->g;
    if (!g) return 0;
    wt->link_off = calloc((size_t)g->nportal + 1, sizeof *wt->link_off);
    if (!wt->link_off) return -1;
    size_t cap = 0;
    int c[3];
    tile_ijk(w, t, c);
    for (int pass = 0; pass < 2; pass++) {
        size_t nl = 0;
        for (uint32_t p = 0; p < g->nportal; p++) {
            int f = g->portal[p].face;
            uint32_t nt = face_neighbour(w, t, f);
            const on_tgraph *h = nt == UINT32_MAX ? NULL : w->tiles[nt].g;
            if (h) {
                double pa[3], pb[3];
                portal_global(w, t, g, p, pa);
                for (uint32_t q = 0; q < h->nportal; q++) {
                    double uv[2];
                    long ov[4];
                    if (h->portal[q].face != (f ^ 1) || !portal_overlap(g, p, h, q, uv, ov)) continue;
                    if (pass == 1) {
                        int k = f >> 1, u = (k + 1) % 3, v = (k + 2) % 3;
                        double x[3];
                        x[k] = (double)(c[k] * w->n) + ((f & 1) ? w->n : 0);
                        x[u] = (double)(c[u] * w->n) + uv[0];
                        x[v] = (double)(c[v] * w->n) + uv[1];
                        portal_global(w, nt, h, q, pb);
                        wlink *l = &wt->link[nl];
                        l->tile = nt;
                        l->portal = q;
                        l->cost = (float)(on_dist3(pa, x) + on_dist3(x, pb));
                        for (int i = 0; i < 3; i++) l->pt[i] = l->lo[i] = l->hi[i] = (float)x[i];
                        l->lo[u] = (float)(c[u] * w->n + ov[0]);
                        l->hi[u] = (float)(c[u] * w->n + ov[2]);
                        l->lo[v] = (float)(c[v] * w->n + ov[1]);
                        l->hi[v] = (float)(c[v] * w->n + ov[3]);
                    }
                    nl++;
                }
            }
            if (pass == 1) wt->link_off[p + 1] = (uint32_t)nl;
        }
        if (pass == 0) {
            cap = nl;
            wt->link = malloc((cap + 1) * sizeof *wt->link);
            if (!wt->link) {
                clear_links(wt);
                return -1;
            }
        }
        wt->nlink = nl;
    }
    return 0;
}

/* Links of t and its 6 neighbours again. */
static on_status relink(on_wgraph *w, uint32_t t)
{
    on_status st = ON_SUCCESS;
    if (build_links(w, t)) st = ON_FAILURE | ON_NO_MEMORY;
    for (int f = 0; f < 6; f++) {
        uint32_t nt = face_neighbour(w, t, f);
        if (nt != UINT32_MAX && w->tiles[nt].g && build_links(w, nt)) st = ON_FAILURE | ON_NO_MEMORY;
    }
    return st;
}

on_status on_wgraph_add_tile(on_wgraph *w, uint32_t tile, on_tgraph *g)
{
    if (!w || !g || tile >= w->ntiles || g->depth != w->p.depth) {
        on_tgraph_free(g);
        return ON_FAILURE | ON_INVALID;
    }
    if (!w->tiles[tile].g) w->ngraphs++;
    on_tgraph_free(w->tiles[tile].g);
    w->tiles[tile].g = g;
    w->revision++;
    on_status st = relink(w, tile);
    if (on_failed(st)) on_wgraph_remove_tile(w, tile); /* no half-linked tile */
    return st;
}

on_status on_wgraph_remove_tile(on_wgraph *w, uint32_t tile)
{
    if (!w || tile >= w->ntiles) return ON_FAILURE | ON_INVALID;
    if (!w->tiles[tile].g) return ON_SUCCESS;
    on_tgraph_free(w->tiles[tile].g);
    w->tiles[tile].g = NULL;
    w->ngraphs--;
    w->revision++;
    return relink(w, tile);
}

void on_wgraph_stats_get(const on_wgraph *w, on_wgraph_stats *st)
{
    memset(st, 0, sizeof *st);
    st->bytes = sizeof *w + (size_t)w->ntiles * sizeof *w->tiles;
    for (uint32_t i = 0; i < w->ntiles; i++) {
        const wtile *t = &w->tiles[i];
        if (!t->g) continue;
        st->tiles++;
        st->portals += t->g->nportal;
        st->edges += t->g->nedge;
        st->rects += t->g->nrect;
        st->links += t->nlink;
        st->bytes += t->g->bytes + ((size_t)t->g->nportal + 1) * sizeof(uint32_t) + t->nlink * sizeof(wlink);
    }
    st->links /= 2;
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
    uint8_t closed, via_link;
    const wlink *link;     /* with via_link: the link it came through */
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
    size_t costcap;
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
    on_reach_free(&r->reach);
    for (int i = 0; i < 2; i++) on_boxset_free(r->bc[i].own);
    free(r);
}

size_t on_route_bytes(const on_route *r)
{
    size_t b = sizeof *r + r->max_nodes * (sizeof(rnode) + sizeof(uint32_t)) + (r->mask + 1) * 2 * sizeof(uint32_t) +
               r->gjcap * sizeof(gjoin) + r->goalcap * 4 * sizeof(double) + r->startcap * 3 * sizeof(double) + r->costcap * sizeof(double) + r->reach.bytes;
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

/* Reach node (tile, portal) with cost g from parent (NO_NODE: from start `start`); pt: the crossing
 * when through a link. h: the heuristic at the node's point. 0, or -1 when out of nodes. */
static int relax(on_route *r, uint32_t tile, uint32_t portal, double g, double h, uint32_t parent, uint32_t start,
                 const wlink *lk)
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
    n->link = lk;
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
    const on_tgraph *g;
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
    e->g = w->tiles[e->tile].g;
    if (!e->g || !t->tiles[e->tile].loaded) return ON_FAILURE | ON_LOADING;
    on_status st = tile_boxes(r, t, e->tile, &e->s);
    if (on_failed(st)) return st;
    if (on_boxset_locate(e->s, e->local) < 0) return ON_FAILURE | ON_BLOCKED;
    return ON_SUCCESS;
}

/* Reach the portals of e's tile from e: r->cost; *reached. */
static on_status endpoint_reach(on_route *r, const endpoint *e, uint32_t *reached)
{
    if (on_grow((void **)&r->cost, &r->costcap, (size_t)e->g->nportal + 1, sizeof *r->cost))
        return ON_FAILURE | ON_NO_MEMORY;
    return on_reach_portals(&r->reach, e->s, e->g, e->local, r->cost, reached);
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
            tile_ijk(r->w, sa.tile, c1);
            tile_ijk(r->w, e.tile, c2);
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
        for (uint32_t p = 0; p < e.g->nportal; p++)
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
        for (uint32_t p = 0; p < e.g->nportal; p++) {
            if (r->cost[p] == HUGE_VAL) continue;
            double x[3];
            portal_global(r->w, e.tile, e.g, p, x);
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
        double g = nd->g, x[3];
        const on_tgraph *tg = w->tiles[t].g;
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
            nd = &r->node[i];
        }
        /* edges inside the tile */
        for (uint32_t e = tg->edge_off[p]; e < tg->edge_off[p + 1]; e++) {
            uint32_t q = tg->edge_to[e];
            portal_global(w, t, tg, q, x);
            if (relax(r, t, q, g + tg->edge_w[e] / ON_TGRAPH_UNIT, heuristic(r, x), i, r->node[i].start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                goto out;
            }
        }
        /* links into the neighbour, or a missing neighbour */
        const wtile *wt = &w->tiles[t];
        for (uint32_t l = wt->link_off ? wt->link_off[p] : 0; wt->link_off && l < wt->link_off[p + 1]; l++) {
            const wlink *lk = &wt->link[l];
            portal_global(w, lk->tile, w->tiles[lk->tile].g, lk->portal, x);
            if (relax(r, lk->tile, lk->portal, g + lk->cost, heuristic(r, x), i, r->node[i].start, lk)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                goto out;
            }
        }
        uint32_t nt = face_neighbour(w, t, tg->portal[p].face);
        if (nt != UINT32_MAX && !w->tiles[nt].g) {
            portal_global(w, t, tg, p, x);
            if (relax(r, nt, PORTAL_MISSING, g, heuristic(r, x), i, r->node[i].start, NULL)) {
                r->status = ON_FAILURE | ON_OUT_OF_NODES;
                break;
            }
        }
    }
out:
    r->info.expansions += n;
    if (done) *done = n;
    return r->status;
}

on_status on_route_result(const on_route *r, on_route_cross *steps, size_t cap, size_t *n, on_route_info *info)
{
    *n = 0;
    if (!r) return ON_FAILURE | ON_INVALID;
    if (info) *info = r->info;
    if (!on_ok(r->status) || r->goal_node == NO_NODE) return r->status;
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
    for (uint32_t i = gn->parent; i != NO_NODE; i = r->node[i].parent) {
        const rnode *nd = &r->node[i];
        if (!nd->via_link) continue;
        on_route_cross *s = &steps[--k];
        const rnode *from = &r->node[nd->parent];
        s->tile = from->tile;
        s->portal = from->portal;
        s->to_tile = nd->tile;
        s->to_portal = nd->portal;
        for (int j = 0; j < 3; j++) s->point[j] = nd->link->pt[j];
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
            const wlink *lk = nd->link;
            double lo[3], hi[3], q[3];
            int axis = 0;
            for (int j = 0; j < 3; j++) {
                lo[j] = lk->lo[j];
                hi[j] = lk->hi[j];
                if (lo[j] == hi[j]) axis = j;
            }
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
