/*
 * portals.c -- a tile's portal graph (see portals.h): components, portals on the tile faces, edges
 * weighted by free paths inside the tile, the binary form, and the local search from a point.
 *
 * Build: union-find over the box graph gives the components; each face's free area is painted into
 * an n x n map of component ids from the boxes touching the face, then cut greedily into rectangles
 * (a run along u, grown along v) inside each S x S square; from each portal's crossing point a
 * Dijkstra over the boxes measures the free path to the later portals of its component; dominated
 * edges are dropped (small components only: the test is cubic).
 */
#include "portals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_BYTES 32
#define CRC_BYTES 4

static const uint8_t MAGIC[4] = {'O', 'N', 'T', 'G'};

void on_tgraph_free(on_tgraph *g)
{
    if (!g) return;
    free(g->portal);
    free(g->rect);
    free(g->edge_off);
    free(g->edge_to);
    free(g->edge_w);
    free(g);
}

int on_tgraph_bound(int depth, int bound)
{
    int n = 1 << depth, s;
    if (bound <= 0) {
        s = n / 8;
        if (s < 16) s = 16;
        if (s > 64) s = 64;
    } else {
        s = 1;
        while (s * 2 <= bound) s *= 2;
    }
    return s > n ? n : s;
}

void on_portal_point(const on_tgraph *g, uint32_t p, double out[3])
{
    const on_portal *q = &g->portal[p];
    const on_prect *r = &g->rect[q->rect];
    int k = q->face >> 1, u = (k + 1) % 3, v = (k + 2) % 3;
    out[k] = (q->face & 1) ? (double)(1 << g->depth) : 0.0;
    out[u] = 0.5 * ((double)r->mn[0] + (double)r->mx[0]);
    out[v] = 0.5 * ((double)r->mn[1] + (double)r->mx[1]);
}

static double dist3(const double a[3], const double b[3])
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* ---- local search ------------------------------------------------------------------------------ */

void on_reach_free(on_reach *r)
{
    free(r->g);
    free(r->pt);
    free(r->parent);
    free(r->heap_box);
    free(r->heap_key);
    free(r->target_off);
    free(r->target);
    free(r->chain);
    free(r->cpt);
    memset(r, 0, sizeof *r);
}

/* Room for a search over nbox boxes with nadj neighbour entries and ntarget targets. */
static int reach_reserve(on_reach *r, size_t nbox, size_t nadj, size_t ntarget)
{
    if (nbox + 1 > r->cap) {
        size_t c = nbox + 1;
        double *g = realloc(r->g, c * sizeof *g);
        if (g) r->g = g;
        double *pt = realloc(r->pt, 3 * c * sizeof *pt);
        if (pt) r->pt = pt;
        uint32_t *par = realloc(r->parent, c * sizeof *par);
        if (par) r->parent = par;
        uint32_t *to = realloc(r->target_off, (c + 1) * sizeof *to);
        if (to) r->target_off = to;
        uint32_t *ch = realloc(r->chain, c * sizeof *ch);
        if (ch) r->chain = ch;
        double *cp = realloc(r->cpt, 3 * (c + 2) * sizeof *cp);
        if (cp) r->cpt = cp;
        if (!g || !pt || !par || !to || !ch || !cp) return -1;
        r->cap = c;
    }
    /* a box is pushed once per improvement: at most once per neighbour entry, plus the roots */
    if (nadj + 9 > r->heapcap) { /* (up to 8 roots) */
        size_t c = nadj + 9;
        uint32_t *hb = realloc(r->heap_box, c * sizeof *hb);
        if (hb) r->heap_box = hb;
        double *hk = realloc(r->heap_key, c * sizeof *hk);
        if (hk) r->heap_key = hk;
        if (!hb || !hk) return -1;
        r->heapcap = c;
    }
    if (ntarget + 1 > r->tcap) {
        uint32_t *t = realloc(r->target, (ntarget + 1) * sizeof *t);
        if (!t) return -1;
        r->target = t;
        r->tcap = ntarget + 1;
    }
    r->bytes = r->cap * (sizeof(double) * 4 + sizeof(uint32_t) * 3 + sizeof(double) * 3) +
               r->heapcap * (sizeof(uint32_t) + sizeof(double)) + r->tcap * sizeof(uint32_t);
    return 0;
}

static void heap_push(on_reach *r, size_t *n, uint32_t b, double key)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (r->heap_key[p] <= key) break;
        r->heap_key[i] = r->heap_key[p];
        r->heap_box[i] = r->heap_box[p];
        i = p;
    }
    r->heap_key[i] = key;
    r->heap_box[i] = b;
}

static uint32_t heap_pop(on_reach *r, size_t *n, double *key)
{
    uint32_t top = r->heap_box[0];
    *key = r->heap_key[0];
    size_t m = --(*n);
    double k = r->heap_key[m];
    uint32_t b = r->heap_box[m];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && r->heap_key[c + 1] < r->heap_key[c]) c++;
        if (r->heap_key[c] >= k) break;
        r->heap_key[i] = r->heap_key[c];
        r->heap_box[i] = r->heap_box[c];
        i = c;
    }
    if (m > 0) {
        r->heap_key[i] = k;
        r->heap_box[i] = b;
    }
    return top;
}

/* Where a path at point p (in or on box a) enters box c across their shared face: p clamped onto
 * the face. The segment p -> q lies in a (a box is convex). */
static void entry_point(const on_box *a, const on_box *c, const double p[3], double q[3])
{
    for (int j = 0; j < 3; j++) {
        double lo = a->mn[j] > c->mn[j] ? a->mn[j] : c->mn[j];
        double hi = a->mx[j] < c->mx[j] ? a->mx[j] : c->mx[j];
        q[j] = p[j] < lo ? lo : p[j] > hi ? hi : p[j];
    }
}

/* The point q of the rectangle [lo, hi] (degenerate along axis k) minimising |a - q| + |q - c|:
 * where the segment a-c crosses the rectangle, else on one of its 4 edges, each a 1D problem with
 * a closed form (unfold the two points about the edge's line: s = (sa*rc + sc*ra) / (ra + rc), then
 * clamp, which is exact since the sum is convex along the line). */
void on_best_on_face(const double a[3], const double c[3], const double lo[3], const double hi[3], int k, double q[3])
{
    int i = (k + 1) % 3, j = (k + 2) % 3;
    if (c[k] != a[k]) {
        double t = (lo[k] - a[k]) / (c[k] - a[k]);
        if (t >= 0 && t <= 1) {
            double x = a[i] + t * (c[i] - a[i]), y = a[j] + t * (c[j] - a[j]);
            if (x >= lo[i] && x <= hi[i] && y >= lo[j] && y <= hi[j]) {
                q[k] = lo[k];
                q[i] = x;
                q[j] = y;
                return;
            }
        }
    }
    double best = HUGE_VAL;
    for (int e = 0; e < 4; e++) {
        int ax = e < 2 ? i : j, ox = e < 2 ? j : i; /* the edge runs along ax at ox = lo or hi */
        double fix = (e & 1) ? hi[ox] : lo[ox];
        double ra = hypot(a[ox] - fix, a[k] - lo[k]), rc = hypot(c[ox] - fix, c[k] - lo[k]);
        double sv = ra + rc > 1e-12 ? (a[ax] * rc + c[ax] * ra) / (ra + rc) : a[ax];
        if (sv < lo[ax]) sv = lo[ax];
        if (sv > hi[ax]) sv = hi[ax];
        double cand[3];
        cand[k] = lo[k];
        cand[ax] = sv;
        cand[ox] = fix;
        double d = dist3(a, cand) + dist3(cand, c);
        if (d < best) {
            best = d;
            memcpy(q, cand, sizeof cand);
        }
    }
}

/* The length of a free path from the search's root to point x held by box bt: the corridor of boxes
 * back to the root, with the points where the path crosses from one box to the next, each on the
 * face the two boxes share. The points are relaxed in passes (each moved to where the line between
 * its neighbours crosses its face's plane, clamped onto the face) until they stop moving: the string
 * pulled taut inside the corridor. A segment between two points on the faces of one box stays in
 * that box (convex), so the path stays free; the relaxation only ever shortens it. */
static double pulled_length(on_reach *r, const on_boxset *s, uint32_t bt, const double x[3])
{
    size_t m = 0;
    for (uint32_t b = bt; b != UINT32_MAX; b = r->parent[b]) r->chain[m++] = b;
    for (size_t i = 0; i < m / 2; i++) { /* root first */
        uint32_t t = r->chain[i];
        r->chain[i] = r->chain[m - 1 - i];
        r->chain[m - 1 - i] = t;
    }
    /* P[0] = root point, P[j] (1..m-1) = where the path enters chain[j], P[m] = x */
    double *P = r->cpt;
    for (size_t j = 0; j < m; j++) memcpy(P + 3 * j, r->pt + 3 * (size_t)r->chain[j], 3 * sizeof *P);
    memcpy(P + 3 * m, x, 3 * sizeof *P);
    for (int pass = 0; pass < 64 && m > 1; pass++) {
        double moved = 0;
        for (size_t j = 1; j < m; j++) {
            const on_box *a = &s->box[r->chain[j - 1]], *c = &s->box[r->chain[j]];
            double lo[3], hi[3], *q = P + 3 * j;
            const double *pa = q - 3, *pc = q + 3;
            int k = 0;
            for (int i = 0; i < 3; i++) {
                lo[i] = a->mn[i] > c->mn[i] ? a->mn[i] : c->mn[i];
                hi[i] = a->mx[i] < c->mx[i] ? a->mx[i] : c->mx[i];
                if (lo[i] == hi[i]) k = i; /* the axis across the shared face */
            }
            double nq[3];
            on_best_on_face(pa, pc, lo, hi, k, nq);
            /* keep the move only when it shortens the two segments (a clamped crossing may not) */
            if (dist3(pa, nq) + dist3(nq, pc) < dist3(pa, q) + dist3(q, pc) - 1e-12) {
                double d = dist3(q, nq);
                if (d > moved) moved = d;
                memcpy(q, nq, sizeof nq);
            }
        }
        if (moved < 1e-4) break;
    }
    double len = 0;
    for (size_t j = 0; j < m; j++) len += dist3(P + 3 * j, P + 3 * (j + 1));
    return len;
}

/* Does the segment p -> q (p in box a, q in box b, which share a face) cross from a into b through
 * their shared face? */
static int crosses_face(const on_box *a, const on_box *b, const double p[3], const double q[3])
{
    for (int k = 0; k < 3; k++) {
        double plane;
        if (a->mx[k] == b->mn[k]) plane = a->mx[k];
        else if (a->mn[k] == b->mx[k]) plane = a->mn[k];
        else continue;
        if (q[k] == p[k]) return 0;
        double t = (plane - p[k]) / (q[k] - p[k]);
        if (t < 0 || t > 1) return 0;
        for (int j = 0; j < 3; j++) {
            if (j == k) continue;
            double v = p[j] + t * (q[j] - p[j]);
            double lo = a->mn[j] > b->mn[j] ? a->mn[j] : b->mn[j], hi = a->mx[j] < b->mx[j] ? a->mx[j] : b->mx[j];
            if (v < lo - 1e-9 || v > hi + 1e-9) return 0;
        }
        return 1;
    }
    return 0;
}

/* Dijkstra over the boxes from point p, in each of the boxes roots[0..nroot): g and pt of every box
 * reached. */
static void reach_run(on_reach *r, const on_boxset *s, const uint32_t *roots, int nroot, const double p[3])
{
    for (uint32_t i = 0; i < s->nbox; i++) r->g[i] = HUGE_VAL;
    size_t n = 0;
    for (int i = 0; i < nroot; i++) {
        r->g[roots[i]] = 0;
        r->parent[roots[i]] = UINT32_MAX;
        memcpy(r->pt + 3 * (size_t)roots[i], p, 3 * sizeof(double));
        heap_push(r, &n, roots[i], 0);
    }
    while (n > 0) {
        double key;
        uint32_t b = heap_pop(r, &n, &key);
        if (key > r->g[b]) continue; /* an older entry */
        const on_box *a = &s->box[b];
        const double *pb = r->pt + 3 * (size_t)b;
        uint32_t pa = r->parent[b];
        for (uint32_t e = s->adj_off[b]; e < s->adj_off[b + 1]; e++) {
            uint32_t c = s->adj[e];
            double q[3];
            entry_point(a, &s->box[c], pb, q);
            double ng = key + dist3(pb, q);
            if (pa != UINT32_MAX) {
                /* any-angle: straight from the parent's point when that line crosses into b through
                 * their shared face (a cost estimate steering the corridor; the path is relaxed later) */
                const double *pp = r->pt + 3 * (size_t)pa;
                double q2[3];
                entry_point(a, &s->box[c], pp, q2);
                double g2 = r->g[pa] + dist3(pp, q2);
                if (g2 < ng && crosses_face(&s->box[pa], a, pp, q2)) {
                    ng = g2;
                    memcpy(q, q2, sizeof q);
                }
            }
            if (ng < r->g[c]) {
                r->g[c] = ng;
                r->parent[c] = b;
                memcpy(r->pt + 3 * (size_t)c, q, sizeof q);
                heap_push(r, &n, c, ng);
            }
        }
    }
}

/* Every box of s holding point p (closed boxes: a point on a shared face or corner is in each of
 * them, at most 8 as box interiors are disjoint); returns the count. */
static int locate_all(const on_boxset *s, const double p[3], uint32_t out[8])
{
    int lo[3], hi[3], n = 0;
    for (int k = 0; k < 3; k++) {
        int b = (int)(p[k] / s->bsize);
        if (b >= s->nb) b = s->nb - 1;
        if (b < 0) b = 0;
        lo[k] = hi[k] = b;
        if (b > 0 && p[k] == (double)(b * s->bsize)) lo[k] = b - 1;
    }
    for (int bz = lo[2]; bz <= hi[2]; bz++)
        for (int by = lo[1]; by <= hi[1]; by++)
            for (int bx = lo[0]; bx <= hi[0]; bx++) {
                uint32_t b = (uint32_t)bx + (uint32_t)s->nb * ((uint32_t)by + (uint32_t)s->nb * (uint32_t)bz);
                for (uint32_t i = s->block_off[b]; i < s->block_off[b + 1] && n < 8; i++) {
                    const on_box *x = &s->box[i];
                    if (p[0] >= x->mn[0] && p[0] <= x->mx[0] && p[1] >= x->mn[1] && p[1] <= x->mx[1] &&
                        p[2] >= x->mn[2] && p[2] <= x->mx[2])
                        out[n++] = i;
                }
            }
    return n;
}

/* target_off / target: for each box, the portals whose crossing point it holds; -1 when a portal's
 * point is in no box (graph and boxes of different contents). */
static int map_targets(on_reach *r, const on_boxset *s, const on_tgraph *g)
{
    memset(r->target_off, 0, ((size_t)s->nbox + 2) * sizeof *r->target_off);
    uint32_t in[8];
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t p = 0; p < g->nportal; p++) {
            double x[3];
            on_portal_point(g, p, x);
            int n = locate_all(s, x, in);
            if (n == 0) return -1;
            for (int i = 0; i < n; i++) {
                if (pass == 0) r->target_off[in[i] + 2]++;
                else r->target[r->target_off[in[i] + 1]++] = p;
            }
        }
        if (pass == 0)
            for (uint32_t b = 0; b < s->nbox; b++) r->target_off[b + 2] += r->target_off[b + 1];
    }
    return 0;
}

on_status on_reach_portals(on_reach *r, const on_boxset *s, const on_tgraph *g, const double p[3], double *cost,
                           uint32_t *reached)
{
    *reached = 0;
    for (uint32_t i = 0; i < g->nportal; i++) cost[i] = HUGE_VAL;
    if (s->nbox == 0) return ON_FAILURE | ON_BLOCKED;
    if (reach_reserve(r, s->nbox, s->adj_off[s->nbox], (size_t)8 * g->nportal)) return ON_FAILURE | ON_NO_MEMORY;
    uint32_t roots[8];
    int nroot = locate_all(s, p, roots);
    if (nroot == 0) return ON_FAILURE | ON_BLOCKED;
    if (map_targets(r, s, g)) return ON_FAILURE | ON_CORRUPT; /* graph and boxes disagree */
    reach_run(r, s, roots, nroot, p);
    for (uint32_t b = 0; b < s->nbox; b++) {
        if (r->g[b] == HUGE_VAL) continue;
        for (uint32_t i = r->target_off[b]; i < r->target_off[b + 1]; i++) {
            uint32_t t = r->target[i];
            double x[3];
            on_portal_point(g, t, x);
            double c = pulled_length(r, s, b, x);
            if (cost[t] == HUGE_VAL) (*reached)++;
            if (c < cost[t]) cost[t] = c;
        }
    }
    return ON_SUCCESS;
}

double on_reach_cost_to(on_reach *r, const on_boxset *s, const double x[3])
{
    uint32_t in[8];
    int n = locate_all(s, x, in);
    double best = HUGE_VAL;
    for (int i = 0; i < n; i++)
        if (r->g[in[i]] != HUGE_VAL) {
            double c = pulled_length(r, s, in[i], x);
            if (c < best) best = c;
        }
    return best;
}

/* ---- the build --------------------------------------------------------------------------------- */

static uint32_t uf_find(uint32_t *par, uint32_t x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

/* Component of each box (dense ids in order of their first box); returns the count. */
static uint32_t components(const on_boxset *s, uint32_t *comp)
{
    for (uint32_t i = 0; i < s->nbox; i++) comp[i] = i;
    for (uint32_t i = 0; i < s->nbox; i++)
        for (uint32_t e = s->adj_off[i]; e < s->adj_off[i + 1]; e++) {
            uint32_t a = uf_find(comp, i), b = uf_find(comp, s->adj[e]);
            if (a != b) comp[a < b ? b : a] = a < b ? a : b;
        }
    /* the root of each set is its smallest box (unions keep the smaller root), so a root is met
     * before the rest of its set: flatten first, then number the roots in order */
    for (uint32_t i = 0; i < s->nbox; i++) comp[i] = uf_find(comp, i);
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nbox; i++) comp[i] = comp[i] == i ? n++ : comp[comp[i]];
    return n;
}

/* A growing array of n elements of size elem at *p with capacity *cap: room for one more. */
static int room(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n + 1 <= *cap) return 0;
    size_t nc = *cap ? 2 * *cap : 64;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int rect_area_cmp(const void *x, const void *y)
{
    const on_prect *a = x, *b = y;
    int sa = (a->mx[0] - a->mn[0]) * (a->mx[1] - a->mn[1]), sb = (b->mx[0] - b->mn[0]) * (b->mx[1] - b->mn[1]);
    if (sa != sb) return sa > sb ? -1 : 1;
    if (a->mn[1] != b->mn[1]) return a->mn[1] < b->mn[1] ? -1 : 1;
    return a->mn[0] < b->mn[0] ? -1 : a->mn[0] > b->mn[0];
}

/* Do two rectangles of a face share an edge of positive length? */
static int rect_touch(const on_prect *a, const on_prect *b)
{
    for (int k = 0; k < 2; k++) {
        int o = 1 - k;
        if ((a->mx[k] == b->mn[k] || b->mx[k] == a->mn[k]) && a->mn[o] < b->mx[o] && b->mn[o] < a->mx[o]) return 1;
    }
    return 0;
}

typedef struct build_acc {
    on_portal *portal;
    size_t pcap;
    on_prect *rect;
    size_t rcap;
    on_prect *sq;      /* one square's rectangles */
    uint32_t *grp;     /* their union-find parents */
    size_t sqcap;
} build_acc;

/* The portals of one S x S square: its rectangles (acc->sq, nsq of them, component c each from map)
 * grouped by shared edges; each group one portal, its rectangles largest first. */
static int square_portals(on_tgraph *g, build_acc *acc, uint32_t nsq, const uint32_t *sqcomp, int f)
{
    for (uint32_t i = 0; i < nsq; i++) acc->grp[i] = i;
    for (uint32_t i = 0; i < nsq; i++)
        for (uint32_t j = i + 1; j < nsq; j++)
            if (rect_touch(&acc->sq[i], &acc->sq[j])) {
                uint32_t a = uf_find(acc->grp, i), b = uf_find(acc->grp, j);
                if (a != b) acc->grp[a < b ? b : a] = a < b ? a : b;
            }
    for (uint32_t i = 0; i < nsq; i++) acc->grp[i] = uf_find(acc->grp, i);
    for (uint32_t i = 0; i < nsq; i++) {
        if (acc->grp[i] != i) continue; /* i: the first rectangle of its group */
        if (room((void **)&acc->portal, &acc->pcap, g->nportal, sizeof *acc->portal)) return -1;
        on_portal *p = &acc->portal[g->nportal++];
        p->face = (uint8_t)f;
        p->comp = sqcomp[i];
        p->rect = g->nrect;
        p->nrect = 0;
        for (uint32_t j = i; j < nsq; j++) {
            if (acc->grp[j] != i) continue;
            if (room((void **)&acc->rect, &acc->rcap, g->nrect, sizeof *acc->rect)) return -1;
            acc->rect[g->nrect++] = acc->sq[j];
            p->nrect++;
        }
        qsort(acc->rect + p->rect, p->nrect, sizeof *acc->rect, rect_area_cmp);
    }
    return 0;
}

/* The portals of face f appended to acc: the face's free leaves as component ids + 1 in map (n x n,
 * row v) from the boxes touching the face, cut into rectangles inside each S x S square, grouped. */
static int face_portals(on_tgraph *g, build_acc *acc, const on_boxset *s, const uint32_t *comp, int n, int S, int f,
                        uint32_t *map, uint32_t *sqcomp)
{
    int k = f >> 1, u = (k + 1) % 3, v = (k + 2) % 3;
    memset(map, 0, (size_t)n * (size_t)n * sizeof *map);
    size_t ng = (size_t)s->nb * (size_t)s->nb;
    for (uint32_t i = s->face_off[f][0]; i < s->face_off[f][ng]; i++) {
        uint32_t b = s->face[f][i];
        const on_box *x = &s->box[b];
        for (int vv = x->mn[v]; vv < x->mx[v]; vv++)
            for (int uu = x->mn[u]; uu < x->mx[u]; uu++) map[(size_t)vv * (size_t)n + (size_t)uu] = comp[b] + 1;
    }
    for (int sv = 0; sv < n; sv += S)
        for (int su = 0; su < n; su += S) {
            uint32_t nsq = 0;
            for (int vv = sv; vv < sv + S; vv++)
                for (int uu = su; uu < su + S; uu++) {
                    uint32_t *row = map + (size_t)vv * (size_t)n;
                    if (!row[uu]) continue;
                    uint32_t c = row[uu] - 1;
                    int u1 = uu + 1, v1 = vv + 1;
                    while (u1 < su + S && row[u1]) u1++;
                    for (; v1 < sv + S; v1++) {
                        const uint32_t *r2 = map + (size_t)v1 * (size_t)n;
                        int full = 1;
                        for (int x = uu; x < u1 && full; x++) full = r2[x] != 0;
                        if (!full) break;
                    }
                    for (int y = vv; y < v1; y++)
                        for (int x = uu; x < u1; x++) map[(size_t)y * (size_t)n + (size_t)x] = 0;
                    acc->sq[nsq] = (on_prect){{(uint16_t)uu, (uint16_t)vv}, {(uint16_t)u1, (uint16_t)v1}};
                    sqcomp[nsq++] = c;
                }
            if (nsq && square_portals(g, acc, nsq, sqcomp, f)) return -1;
        }
    return 0;
}

/* The graph's CSR edges (both directions) from an undirected list (a < b), sorted by a then b. */
static int set_edges(on_tgraph *g, const uint32_t *ea, const uint32_t *eb, const uint32_t *ew, uint32_t ne)
{
    g->nedge = ne;
    g->edge_off = calloc((size_t)g->nportal + 1, sizeof *g->edge_off);
    g->edge_to = malloc(((size_t)2 * ne + 1) * sizeof *g->edge_to);
    g->edge_w = malloc(((size_t)2 * ne + 1) * sizeof *g->edge_w);
    uint32_t *fill = calloc((size_t)g->nportal + 1, sizeof *fill);
    if (!g->edge_off || !g->edge_to || !g->edge_w || !fill) {
        free(fill);
        return -1;
    }
    for (uint32_t e = 0; e < ne; e++) {
        g->edge_off[ea[e] + 1]++;
        g->edge_off[eb[e] + 1]++;
    }
    for (uint32_t p = 0; p < g->nportal; p++) g->edge_off[p + 1] += g->edge_off[p];
    for (uint32_t e = 0; e < ne; e++) {
        uint32_t i = g->edge_off[ea[e]] + fill[ea[e]]++, j = g->edge_off[eb[e]] + fill[eb[e]]++;
        g->edge_to[i] = eb[e];
        g->edge_w[i] = ew[e];
        g->edge_to[j] = ea[e];
        g->edge_w[j] = ew[e];
    }
    free(fill);
    g->bytes = sizeof *g + (size_t)g->nportal * sizeof(on_portal) + ((size_t)g->nportal + 1) * sizeof(uint32_t) +
               (size_t)2 * ne * 2 * sizeof(uint32_t);
    return 0;
}

/* ---- the greedy spanner ------------------------------------------------------------------------ */

typedef struct pair {
    uint32_t w, i, j;
} pair;

static int pair_cmp(const void *x, const void *y)
{
    const pair *a = x, *b = y;
    if (a->w != b->w) return a->w < b->w ? -1 : 1;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* Distance from i to j over the kept edges (lists head/next/to/w), searched no further than limit
 * (a Dijkstra over at most m nodes; dist and the heap are scratch of m and 2E + 1 entries). */
static uint64_t kept_dist(uint32_t i, uint32_t j, uint64_t limit, uint32_t m, const uint32_t *head, const uint32_t *next,
                          const uint32_t *to, const uint32_t *w, uint64_t *dist, uint64_t *hk, uint32_t *hv)
{
    for (uint32_t k = 0; k < m; k++) dist[k] = UINT64_MAX;
    size_t n = 0;
    dist[i] = 0;
    hk[n] = 0;
    hv[n++] = i;
    while (n) {
        uint64_t key = hk[0];
        uint32_t b = hv[0];
        n--;
        size_t x = 0;
        for (;;) { /* sift the last entry down from the root */
            size_t c = 2 * x + 1;
            if (c >= n) break;
            if (c + 1 < n && hk[c + 1] < hk[c]) c++;
            if (hk[c] >= hk[n]) break;
            hk[x] = hk[c];
            hv[x] = hv[c];
            x = c;
        }
        hk[x] = hk[n];
        hv[x] = hv[n];
        if (key > dist[b]) continue;
        if (b == j || key > limit) return key;
        for (uint32_t e = head[b]; e != UINT32_MAX; e = next[e]) {
            uint64_t nd = key + w[e];
            if (nd >= dist[to[e]] || nd > limit) continue;
            dist[to[e]] = nd;
            size_t y = n++;
            while (y > 0 && hk[(y - 1) / 2] > nd) {
                hk[y] = hk[(y - 1) / 2];
                hv[y] = hv[(y - 1) / 2];
                y = (y - 1) / 2;
            }
            hk[y] = nd;
            hv[y] = to[e];
        }
    }
    return UINT64_MAX;
}

/* The greedy t-spanner of a component's complete graph (weights wm, m x m): pairs in increasing
 * weight, an edge kept (keep[i*m+j]) unless the edges kept so far already join its ends within
 * stretch x its weight. Every pair's distance over the kept edges is then at most stretch x its
 * weight, and with stretch 1 shortest paths are unchanged. -1 on allocation failure. */
static int spanner(const uint32_t *wm, uint32_t m, double stretch, uint8_t *keep)
{
    size_t np = (size_t)m * (m - 1) / 2, ne = 0;
    pair *pr = malloc(np * sizeof *pr);
    uint32_t *head = malloc((size_t)m * sizeof *head);
    uint32_t *next = malloc(2 * np * sizeof *next), *to = malloc(2 * np * sizeof *to), *w = malloc(2 * np * sizeof *w);
    uint64_t *dist = malloc((size_t)m * sizeof *dist), *hk = malloc((2 * np + 1) * sizeof *hk);
    uint32_t *hv = malloc((2 * np + 1) * sizeof *hv);
    int rc = -1;
    if (!pr || !head || !next || !to || !w || !dist || !hk || !hv) goto done;
    size_t k = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = i + 1; j < m; j++) pr[k++] = (pair){wm[(size_t)i * m + j], i, j};
    qsort(pr, np, sizeof *pr, pair_cmp);
    for (uint32_t i = 0; i < m; i++) head[i] = UINT32_MAX;
    for (size_t q = 0; q < np; q++) {
        uint64_t limit = (uint64_t)floor((double)pr[q].w * stretch);
        if (kept_dist(pr[q].i, pr[q].j, limit, m, head, next, to, w, dist, hk, hv) <= limit) continue;
        keep[(size_t)pr[q].i * m + pr[q].j] = 1;
        to[ne] = pr[q].j;
        w[ne] = pr[q].w;
        next[ne] = head[pr[q].i];
        head[pr[q].i] = (uint32_t)ne++;
        to[ne] = pr[q].i;
        w[ne] = pr[q].w;
        next[ne] = head[pr[q].j];
        head[pr[q].j] = (uint32_t)ne++;
    }
    rc = 0;
done:
    free(pr);
    free(head);
    free(next);
    free(to);
    free(w);
    free(dist);
    free(hk);
    free(hv);
    return rc;
}

/* Weights between the portals of each component, dominated edges dropped, into g's edges. */
static on_status build_edges(on_tgraph *g, const on_boxset *s, double stretch)
{
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    on_reach r;
    memset(&r, 0, sizeof r);
    uint32_t np = g->nportal, *order = malloc(((size_t)np + 1) * sizeof *order);
    uint32_t *ea = NULL, *eb = NULL, *ew = NULL, *wm = NULL, *coff = NULL;
    uint8_t *keep = NULL;
    double *cost = malloc(((size_t)np + 1) * sizeof *cost);
    size_t ne = 0, ecap = 0;
    if (!order || !cost) goto done;
    if (reach_reserve(&r, s->nbox, s->adj_off[s->nbox], (size_t)8 * np)) goto done;
    if (map_targets(&r, s, g)) {
        st = ON_FAILURE | ON_CORRUPT;
        goto done;
    }
    /* portals in component order (stable): each component's portals are a run of order[] */
    coff = calloc((size_t)g->ncomp + 1, sizeof *coff);
    if (!coff) goto done;
    for (uint32_t p = 0; p < np; p++) coff[g->portal[p].comp + 1]++;
    for (uint32_t c = 0; c < g->ncomp; c++) coff[c + 1] += coff[c];
    for (uint32_t p = 0; p < np; p++) order[coff[g->portal[p].comp]++] = p;
    for (uint32_t c = g->ncomp; c > 0; c--) coff[c] = coff[c - 1];
    coff[0] = 0;
    for (uint32_t c = 0; c < g->ncomp; c++) {
        uint32_t lo = coff[c], m = coff[c + 1] - lo;
        if (m < 2) continue;
        free(wm);
        wm = malloc((size_t)m * m * sizeof *wm);
        if (!wm) goto done;
        for (uint32_t i = 0; i < m; i++) {
            uint32_t a = order[lo + i];
            double x[3];
            on_portal_point(g, a, x);
            uint32_t roots[8];
            int nroot = locate_all(s, x, roots);
            reach_run(&r, s, roots, nroot, x);
            for (uint32_t j = i + 1; j < m; j++) cost[order[lo + j]] = HUGE_VAL;
            for (uint32_t b = 0; b < s->nbox; b++) {
                if (r.g[b] == HUGE_VAL) continue;
                for (uint32_t t = r.target_off[b]; t < r.target_off[b + 1]; t++) {
                    uint32_t p = r.target[t];
                    if (p <= a) continue;
                    double y[3];
                    on_portal_point(g, p, y);
                    double len = pulled_length(&r, s, b, y);
                    if (len < cost[p]) cost[p] = len;
                }
            }
            for (uint32_t j = i + 1; j < m; j++) {
                uint32_t p = order[lo + j];
                double w = ceil(cost[p] * ON_TGRAPH_UNIT);
                uint32_t wi = w < 1 ? 1 : w > 4e9 ? 4000000000u : (uint32_t)w;
                wm[(size_t)i * m + j] = wm[(size_t)j * m + i] = wi;
            }
        }
        free(keep);
        keep = calloc((size_t)m * m, 1);
        if (!keep || spanner(wm, m, stretch, keep)) goto done;
        for (uint32_t i = 0; i < m; i++)
            for (uint32_t j = i + 1; j < m; j++) {
                if (!keep[(size_t)i * m + j]) continue;
                if (ne + 1 > ecap) {
                    size_t nc = ecap ? 2 * ecap : 256;
                    uint32_t *a2 = realloc(ea, nc * sizeof *a2);
                    if (a2) ea = a2;
                    uint32_t *b2 = realloc(eb, nc * sizeof *b2);
                    if (b2) eb = b2;
                    uint32_t *w2 = realloc(ew, nc * sizeof *w2);
                    if (w2) ew = w2;
                    if (!a2 || !b2 || !w2) goto done;
                    ecap = nc;
                }
                uint32_t a = order[lo + i], b = order[lo + j];
                ea[ne] = a < b ? a : b;
                eb[ne] = a < b ? b : a;
                ew[ne++] = wm[(size_t)i * m + j];
            }
    }
    if (set_edges(g, ea, eb, ew, (uint32_t)ne)) goto done;
    st = ON_SUCCESS;
done:
    free(coff);
    free(order);
    free(cost);
    free(ea);
    free(eb);
    free(ew);
    free(wm);
    free(keep);
    on_reach_free(&r);
    return st;
}

on_status on_tgraph_build(const on_boxset *s, int depth, const on_tgraph_opts *o, on_tgraph **out)
{
    *out = NULL;
    if (!s || depth < 1 || depth > ON_MAX_DEPTH) return ON_FAILURE | ON_INVALID;
    int n = 1 << depth, S = on_tgraph_bound(depth, o ? o->bound : 0);
    on_tgraph *g = calloc(1, sizeof *g);
    uint32_t *comp = malloc(((size_t)s->nbox + 1) * sizeof *comp);
    uint32_t *map = malloc((size_t)n * (size_t)n * sizeof *map);
    build_acc acc = {NULL, 0, NULL, 0, NULL, NULL, (size_t)S * (size_t)S};
    acc.sq = malloc(acc.sqcap * sizeof *acc.sq); /* a square holds at most S^2 rectangles */
    acc.grp = malloc(acc.sqcap * sizeof *acc.grp);
    uint32_t *sqcomp = malloc(acc.sqcap * sizeof *sqcomp);
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    if (!g || !comp || !map || !acc.sq || !acc.grp || !sqcomp) goto fail;
    g->depth = depth;
    g->bound = S;
    g->tag = o ? o->tag : 0;
    g->ncomp = components(s, comp);
    for (int f = 0; f < 6; f++)
        if (face_portals(g, &acc, s, comp, n, S, f, map, sqcomp)) goto fail;
    g->portal = acc.portal;
    g->rect = acc.rect;
    acc.portal = NULL;
    acc.rect = NULL;
    if (!g->portal) g->portal = malloc(sizeof *g->portal);
    if (!g->rect) g->rect = malloc(sizeof *g->rect);
    if (!g->portal || !g->rect) goto fail;
    st = build_edges(g, s, o && o->stretch > 0 ? o->stretch : ON_TGRAPH_STRETCH);
    if (on_failed(st)) goto fail;
    g->bytes += (size_t)g->nrect * sizeof(on_prect);
    free(comp);
    free(map);
    free(acc.sq);
    free(acc.grp);
    free(sqcomp);
    *out = g;
    return ON_SUCCESS;
fail:
    free(comp);
    free(map);
    free(acc.sq);
    free(acc.grp);
    free(acc.portal);
    free(acc.rect);
    free(sqcomp);
    on_tgraph_free(g);
    return st;
}

on_status on_tgraph_build_table(const on_table *tab, uint8_t solid, int depth, const on_tgraph_opts *o,
                                on_tgraph **out)
{
    *out = NULL;
    if (depth < 1 || depth > ON_MAX_DEPTH) return ON_FAILURE | ON_INVALID;
    on_boxset *s;
    on_status st = on_boxset_build(tab, solid, depth, &s);
    if (on_failed(st)) return st;
    st = on_tgraph_build(s, depth, o, out);
    on_boxset_free(s);
    return st;
}

on_status on_tgraph_build_tile(const on_tree *t, uint32_t tile, const on_tgraph_opts *o, on_tgraph **out)
{
    *out = NULL;
    if (!t || tile >= t->ntiles) return ON_FAILURE | ON_INVALID;
    if (!t->tiles[tile].loaded) return ON_FAILURE | ON_LOADING;
    const on_boxset *s = on_tile_boxes(t, tile);
    if (s) return on_tgraph_build(s, t->p.depth, o, out);
    return on_tgraph_build_table(&t->tiles[tile].table, t->tiles[tile].solid, t->p.depth, o, out);
}

/* ---- binary form ------------------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Append varint v at *pos when it fits under cap (the size is counted either way). */
static void put_var(uint8_t *buf, size_t cap, size_t *pos, uint32_t v)
{
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b |= 0x80;
        if (buf && *pos < cap) buf[*pos] = b;
        (*pos)++;
    } while (v);
}

/* Read a varint from [*p, end): at most 5 bytes, no overlong or over-32-bit forms; -1 when bad. */
static int get_var(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 5; i++) {
        if (*p >= end) return -1;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (x > 0xffffffffu || (i > 0 && b == 0)) return -1;
            *v = (uint32_t)x;
            return 0;
        }
    }
    return -1;
}

static int log2i(int s)
{
    int l = 0;
    while ((1 << l) < s) l++;
    return l;
}

on_status on_tgraph_encode(const on_tgraph *g, uint8_t *buf, size_t cap, size_t *len)
{
    *len = 0;
    if (!g) return ON_FAILURE | ON_INVALID;
    size_t pos = HEADER_BYTES;
    uint8_t *w = cap >= HEADER_BYTES ? buf : NULL;
    for (uint32_t p = 0; p < g->nportal; p++) {
        const on_portal *q = &g->portal[p];
        if (w && pos < cap) w[pos] = q->face;
        pos++;
        put_var(w, cap, &pos, q->comp);
        put_var(w, cap, &pos, q->nrect - 1);
        for (uint32_t i = 0; i < q->nrect; i++) {
            const on_prect *r = &g->rect[q->rect + i];
            put_var(w, cap, &pos, r->mn[0]);
            put_var(w, cap, &pos, r->mn[1]);
            put_var(w, cap, &pos, (uint32_t)(r->mx[0] - r->mn[0] - 1));
            put_var(w, cap, &pos, (uint32_t)(r->mx[1] - r->mn[1] - 1));
        }
    }
    for (uint32_t a = 0; a < g->nportal; a++) {
        uint32_t cnt = 0;
        for (uint32_t e = g->edge_off[a]; e < g->edge_off[a + 1]; e++) cnt += g->edge_to[e] > a;
        put_var(w, cap, &pos, cnt);
        uint32_t prev = a;
        for (uint32_t e = g->edge_off[a]; e < g->edge_off[a + 1]; e++) {
            if (g->edge_to[e] <= a) continue;
            put_var(w, cap, &pos, g->edge_to[e] - prev - 1);
            put_var(w, cap, &pos, g->edge_w[e]);
            prev = g->edge_to[e];
        }
    }
    size_t total = pos + CRC_BYTES;
    *len = total;
    if (!buf || cap < total) return ON_FAILURE | ON_BUFFER_SMALL;
    memcpy(buf, MAGIC, 4);
    buf[4] = ON_TGRAPH_VERSION & 0xff;
    buf[5] = ON_TGRAPH_VERSION >> 8;
    buf[6] = (uint8_t)g->depth;
    buf[7] = (uint8_t)log2i(g->bound);
    put32(buf + 8, g->tag);
    put32(buf + 12, g->nportal);
    put32(buf + 16, g->ncomp);
    put32(buf + 20, g->nedge);
    put32(buf + 24, (uint32_t)(pos - HEADER_BYTES));
    put32(buf + 28, g->nrect);
    put32(buf + pos, on_crc32(0, buf, pos));
    return ON_SUCCESS;
}

on_status on_tgraph_decode(const uint8_t *buf, size_t len, int expected_depth, on_tgraph **out)
{
    *out = NULL;
    const on_status bad = ON_FAILURE | ON_CORRUPT;
    if (!buf || len < HEADER_BYTES + CRC_BYTES || memcmp(buf, MAGIC, 4) != 0) return bad;
    unsigned ver = (unsigned)buf[4] | (unsigned)buf[5] << 8;
    if (ver != ON_TGRAPH_VERSION) return ON_FAILURE | ON_VERSION;
    size_t payload = get32(buf + 24);
    if (payload != len - HEADER_BYTES - CRC_BYTES) return bad;
    if (on_crc32(0, buf, len - CRC_BYTES) != get32(buf + len - CRC_BYTES)) return bad;
    int depth = buf[6], lb = buf[7];
    if (depth < 1 || depth > ON_MAX_DEPTH || lb > depth) return bad;
    if (expected_depth > 0 && depth != expected_depth) return ON_FAILURE | ON_INVALID;
    uint32_t np = get32(buf + 12), ncomp = get32(buf + 16), ne = get32(buf + 20), nr = get32(buf + 28);
    /* counts bounded by the bytes that must hold them: no allocation a header alone can inflate */
    if ((uint64_t)np * 3 + (uint64_t)nr * 4 > payload || (uint64_t)ne * 2 > payload || nr < np ||
        ncomp > (1u << (3 * depth)) || (np > 0 && ncomp == 0))
        return bad;
    on_tgraph *g = calloc(1, sizeof *g);
    uint32_t *ea = malloc(((size_t)ne + 1) * sizeof *ea), *eb = malloc(((size_t)ne + 1) * sizeof *eb);
    uint32_t *ew = malloc(((size_t)ne + 1) * sizeof *ew);
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    if (!g || !ea || !eb || !ew) goto fail;
    g->depth = depth;
    g->bound = 1 << lb;
    g->tag = get32(buf + 8);
    g->nportal = np;
    g->ncomp = ncomp;
    g->portal = malloc(((size_t)np + 1) * sizeof *g->portal);
    g->rect = malloc(((size_t)nr + 1) * sizeof *g->rect);
    if (!g->portal || !g->rect) goto fail;
    st = bad;
    const uint8_t *p = buf + HEADER_BYTES, *end = buf + len - CRC_BYTES;
    uint32_t n = 1u << depth, S = (uint32_t)g->bound;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t c, m;
        if (p >= end) goto fail;
        uint8_t f = *p++;
        if (f > 5 || get_var(&p, end, &c) || get_var(&p, end, &m) || c >= ncomp || m >= nr - g->nrect) goto fail;
        on_portal *q = &g->portal[i];
        q->face = f;
        q->comp = c;
        q->rect = g->nrect;
        q->nrect = m + 1;
        for (uint32_t j = 0; j <= m; j++) {
            uint32_t u0, v0, du, dv;
            if (get_var(&p, end, &u0) || get_var(&p, end, &v0) || get_var(&p, end, &du) || get_var(&p, end, &dv))
                goto fail;
            /* inside the tile face, inside the S-square of the portal's first rectangle */
            if (u0 >= n || v0 >= n || du >= S || dv >= S || u0 + du >= n || v0 + dv >= n ||
                u0 / S != (u0 + du) / S || v0 / S != (v0 + dv) / S)
                goto fail;
            if (j > 0 && (u0 / S != g->rect[q->rect].mn[0] / S || v0 / S != g->rect[q->rect].mn[1] / S)) goto fail;
            g->rect[g->nrect++] = (on_prect){{(uint16_t)u0, (uint16_t)v0}, {(uint16_t)(u0 + du + 1), (uint16_t)(v0 + dv + 1)}};
        }
    }
    if (g->nrect != nr) goto fail;
    uint32_t k = 0;
    for (uint32_t a = 0; a < np; a++) {
        uint32_t cnt, prev = a;
        if (get_var(&p, end, &cnt) || cnt > ne - k) goto fail;
        for (uint32_t j = 0; j < cnt; j++) {
            uint32_t d, w;
            if (get_var(&p, end, &d) || get_var(&p, end, &w)) goto fail;
            uint64_t b = (uint64_t)prev + d + 1;
            if (b >= np || g->portal[b].comp != g->portal[a].comp || w == 0) goto fail;
            double x[3], y[3];
            on_portal_point(g, a, x);
            on_portal_point(g, (uint32_t)b, y);
            if ((double)w < floor(dist3(x, y) * ON_TGRAPH_UNIT)) goto fail; /* shorter than the straight line */
            ea[k] = a;
            eb[k] = (uint32_t)b;
            ew[k++] = w;
            prev = (uint32_t)b;
        }
    }
    if (k != ne || p != end) goto fail;
    st = ON_FAILURE | ON_NO_MEMORY;
    if (set_edges(g, ea, eb, ew, ne)) goto fail;
    g->bytes += (size_t)nr * sizeof(on_prect);
    free(ea);
    free(eb);
    free(ew);
    *out = g;
    return ON_SUCCESS;
fail:
    free(ea);
    free(eb);
    free(ew);
    on_tgraph_free(g);
    return st;
}
