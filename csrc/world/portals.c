/*
 * portals.c -- a tile's portal graph, the build (see portals.h): components, portals on the tile
 * faces, and the weight matrix of each component from free paths inside the tile (reach.h).
 *
 * Union-find over the box graph gives the components; each face's free area is painted into an
 * n x n map of component ids from the boxes touching the face, then cut greedily into rectangles
 * (a run along u, grown along v) inside each S x S square, grouped into portals by shared edges;
 * portals are then ordered by component (components without a portal dropped); from each portal's
 * point a search over the boxes measures the free path to the later portals of its component.
 */
#include "portals.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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


/* Portals ordered by component, the components renumbered densely in the order of their first
 * portal (those without one dropped): comp_first. -1 when out of memory. */
static int order_by_component(on_tgraph *g)
{
    uint32_t np = g->nportal, nc = 0, *newid = NULL, *cnt = NULL;
    on_portal *portal = malloc(((size_t)np + 1) * sizeof *portal);
    on_prect *rect = malloc(((size_t)g->nrect + 1) * sizeof *rect);
    uint32_t maxc = 0;
    for (uint32_t p = 0; p < np; p++)
        if (g->portal[p].comp > maxc) maxc = g->portal[p].comp;
    newid = malloc(((size_t)maxc + 1) * sizeof *newid);
    cnt = calloc((size_t)np + 2, sizeof *cnt);
    if (!portal || !rect || !newid || !cnt) goto fail;
    for (uint32_t c = 0; c <= maxc; c++) newid[c] = UINT32_MAX;
    for (uint32_t p = 0; p < np; p++) {
        uint32_t *id = &newid[g->portal[p].comp];
        if (*id == UINT32_MAX) *id = nc++;
        cnt[*id + 1]++;
    }
    for (uint32_t c = 0; c < nc; c++) cnt[c + 1] += cnt[c];
    g->comp_first = malloc(((size_t)nc + 1) * sizeof *g->comp_first);
    if (!g->comp_first) goto fail;
    memcpy(g->comp_first, cnt, ((size_t)nc + 1) * sizeof *cnt);
    for (uint32_t p = 0; p < np; p++) { /* stable: face and position order kept inside a component */
        on_portal q = g->portal[p];
        q.comp = newid[q.comp];
        portal[cnt[q.comp]++] = q;
    }
    uint32_t nr = 0;
    for (uint32_t p = 0; p < np; p++) {
        memcpy(rect + nr, g->rect + portal[p].rect, portal[p].nrect * sizeof *rect);
        portal[p].rect = nr;
        nr += portal[p].nrect;
    }
    free(g->portal);
    free(g->rect);
    g->portal = portal;
    g->rect = rect;
    g->ncomp = nc;
    free(newid);
    free(cnt);
    return 0;
fail:
    free(portal);
    free(rect);
    free(newid);
    free(cnt);
    return -1;
}

/* Distance from i over the kept edges of a component's matrix (m portals, W: its rounded weights,
 * 0 = dropped) to j; dist is scratch of m. A plain O(m^2) Dijkstra (m <= 128). */
static uint64_t kept_dist(const uint16_t *W, uint32_t m, uint32_t i, uint32_t j, uint64_t *dist, uint8_t *done)
{
#define W_AT(a, b) W[(size_t)(a) * (2 * (size_t)m - (a) - 1) / 2 + ((b) - (a) - 1)]
    for (uint32_t k = 0; k < m; k++) dist[k] = UINT64_MAX, done[k] = 0;
    dist[i] = 0;
    for (;;) {
        uint32_t c = UINT32_MAX;
        for (uint32_t k = 0; k < m; k++)
            if (!done[k] && dist[k] != UINT64_MAX && (c == UINT32_MAX || dist[k] < dist[c])) c = k;
        if (c == UINT32_MAX || c == j) break;
        done[c] = 1;
        for (uint32_t k = 0; k < m; k++) {
            if (k == c || done[k]) continue;
            uint16_t w = c < k ? W_AT(c, k) : W_AT(k, c);
            if (w && dist[c] + w < dist[k]) dist[k] = dist[c] + w;
        }
    }
    return dist[j];
#undef W_AT
}

typedef struct wpair {
    uint16_t w;
    uint32_t i, j;
} wpair;

static int wpair_cmp(const void *x, const void *y)
{
    const wpair *a = x, *b = y;
    if (a->w != b->w) return a->w < b->w ? -1 : 1;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

/* The greedy t-spanner of one component's matrix (in place: dropped pairs set to 0). -1 no memory. */
static int spanner(uint16_t *W, uint32_t m, double stretch)
{
    size_t np = (size_t)m * (m - 1) / 2, k = 0;
    wpair *pr = malloc((np + 1) * sizeof *pr);
    uint16_t *keep = calloc(np + 1, sizeof *keep);
    uint64_t *dist = malloc(((size_t)m + 1) * sizeof *dist);
    uint8_t *done = malloc((size_t)m + 1);
    if (!pr || !keep || !dist || !done) {
        free(pr);
        free(keep);
        free(dist);
        free(done);
        return -1;
    }
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = i + 1; j < m; j++, k++) pr[k] = (wpair){W[k], i, j};
    qsort(pr, np, sizeof *pr, wpair_cmp);
    for (size_t q = 0; q < np; q++) {
        /* capped before the cast: a huge stretch gives a limit past 2^64 (a kept path is below 2^23, an
         * unconnected pair UINT64_MAX, above the cap) */
        double lim = floor((double)pr[q].w * stretch);
        uint64_t limit = lim < 4611686018427387904.0 ? (uint64_t)lim : UINT64_C(1) << 62;
        if (kept_dist(keep, m, pr[q].i, pr[q].j, dist, done) <= limit) continue;
        keep[(size_t)pr[q].i * (2 * (size_t)m - pr[q].i - 1) / 2 + (pr[q].j - pr[q].i - 1)] = pr[q].w;
    }
    memcpy(W, keep, np * sizeof *W);
    free(pr);
    free(keep);
    free(dist);
    free(done);
    return 0;
}

/* Tiles of 2^COARSE_MIN_DEPTH leaves and more search their weights over coarse box sets
 * (on_tgraph_coarse_set, no box crossing a block of 64 fine leaves, as the fine set's): first of
 * coarse leaves 2^COARSE_SHIFT fine leaves a side, from each portal whose point lies in it; the
 * portals outside it over the set of half that leaf, and so on down to 2 leaves; what is left (small
 * tiles, portals outside every coarse set, pairs no coarse search joins) over the fine boxes. */
#define COARSE_MIN_DEPTH 8
#define COARSE_SHIFT 3
#define COARSE_SHIFT_MIN 2

/* The coarse searches: len[pair] = the coarse path length (fine leaves) of the pairs a coarse search
 * joins (HUGE_VAL elsewhere); fine[p] = 1 for the portals no coarse search started from. cbits (NULL:
 * none) holds per shift the coarse leaves' bitmap when the caller had the fine one (on_tgraph_coarse_bits;
 * consumed here), else the set is counted from s's boxes: the same set either way. */
static on_status coarse_weights(on_tgraph *g, const on_boxset *s, on_boxbits *cbits, const double *pts, double *len,
                                uint8_t *fine)
{
    uint32_t np = g->nportal, in[8];
    double *cpts = malloc(((size_t)np * 3 + 3) * sizeof *cpts), *cost = malloc(((size_t)np + 1) * sizeof *cost);
    uint8_t *inside = malloc((size_t)np + 1);
    on_boxset *cs = NULL;
    on_reach r;
    memset(&r, 0, sizeof r);
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    if (!cpts || !cost || !inside) goto done;
    for (int shift = COARSE_SHIFT; shift >= COARSE_SHIFT_MIN; shift--) {
        uint32_t left = 0;
        for (uint32_t p = 0; p < np; p++) left += fine[p];
        if (!left) break;
        on_reach_free(&r); /* (another set: its scratch anew) */
        on_boxset_free(cs);
        cs = NULL;
        st = cbits && cbits[shift].w ? on_boxset_from_bits(&cbits[shift], 64 >> shift, &cs)
                                     : on_tgraph_coarse_set(s, g->depth, shift, 64 >> shift, &cs);
        if (on_failed(st)) goto done;
        if (cs->nbox == 0) continue; /* (no coarse leaf free: every portal outside) */
        double F = (double)(1 << shift);
        for (size_t i = 0; i < 3 * (size_t)np; i++) cpts[i] = pts[i] / F;
        for (uint32_t p = 0; p < np; p++) inside[p] = on_boxset_locate_all(cs, cpts + 3 * (size_t)p, in) > 0;
        st = on_reach_map(&r, cs, cpts, np, 1);
        if (on_failed(st)) goto done;
        for (uint32_t c = 0; c < g->ncomp; c++) {
            uint32_t f = g->comp_first[c], m = g->comp_first[c + 1] - f;
            double *L = len + g->comp_w[c];
            for (uint32_t i = 0; i < m; i++) {
                if (!fine[f + i] || !inside[f + i]) continue;
                /* (targets outside the coarse boxes are left out of the search, never reached; on the
                 * first set every portal inside starts one: only the later ones are wanted) */
                st = on_reach_from_target(&r, cs, cpts, np, f + i, shift == COARSE_SHIFT ? f + i : UINT32_MAX, cost);
                if (on_failed(st)) goto done;
                g->settled += r.pops;
                for (uint32_t j = 0; j < m; j++) {
                    if (j == i || !inside[f + j] || cost[f + j] == HUGE_VAL) continue;
                    double *x = &L[(size_t)(i < j ? i : j) * (2 * (size_t)m - (i < j ? i : j) - 1) / 2 +
                                   ((i < j ? j : i) - (i < j ? i : j) - 1)];
                    if (*x == HUGE_VAL) *x = cost[f + j] * F; /* (the first search to join the pair) */
                }
            }
            for (uint32_t i = 0; i < m; i++)
                if (inside[f + i]) fine[f + i] = 0;
        }
    }
    st = ON_SUCCESS;
done:
    free(cpts);
    free(cost);
    free(inside);
    on_reach_free(&r);
    on_boxset_free(cs);
    return st;
}

/* The weight matrices: free path lengths between the portals of each component, closed under the
 * triangle inequality (components of up to 512 portals), rounded up in one unit for the tile, then
 * thinned to a greedy spanner when stretch > 1. A pair's length is its coarse search's (large tiles,
 * coarse_weights) or else the fine search's from its first portal (or, when that one had none, from
 * its second). */
static on_status build_weights(on_tgraph *g, const on_boxset *s, on_boxbits *cbits, double stretch)
{
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    on_reach r;
    memset(&r, 0, sizeof r);
    uint32_t np = g->nportal;
    double *pts = malloc(((size_t)np * 3 + 3) * sizeof *pts), *cost = malloc(((size_t)np + 1) * sizeof *cost);
    double *len = NULL;
    uint8_t *fine = malloc((size_t)np + 1);
    g->comp_w = calloc((size_t)g->ncomp + 1, sizeof *g->comp_w);
    if (!pts || !cost || !fine || !g->comp_w) goto done;
    uint64_t ne = 0;
    for (uint32_t c = 0; c < g->ncomp; c++) {
        uint64_t m = g->comp_first[c + 1] - g->comp_first[c];
        ne += m * (m - 1) / 2;
        if (ne > UINT32_MAX / 2) {
            st = ON_FAILURE | ON_INVALID;
            goto done;
        }
        g->comp_w[c + 1] = (uint32_t)ne;
    }
    g->npair = (uint32_t)ne;
    len = malloc(((size_t)ne + 1) * sizeof *len);
    g->w = malloc(((size_t)ne + 1) * sizeof *g->w);
    if (!len || !g->w) goto done;
    for (uint64_t e = 0; e < ne; e++) len[e] = HUGE_VAL;
    for (uint32_t p = 0; p < np; p++) {
        on_portal_point(g, p, pts + 3 * (size_t)p);
        fine[p] = 1;
    }
    int coarse = g->depth >= COARSE_MIN_DEPTH && ne > 0;
    if (coarse) {
        st = coarse_weights(g, s, cbits, pts, len, fine);
        if (on_failed(st)) goto done;
    }
    if (ne > 0) {
        st = on_reach_map(&r, s, pts, np, 0);
        if (on_failed(st)) goto done;
    }
    double longest = 0;
    for (uint32_t c = 0; c < g->ncomp; c++) {
        uint32_t f = g->comp_first[c], m = g->comp_first[c + 1] - f;
        double *L = len + g->comp_w[c];
#define AT(i, j) L[(size_t)(i) * (2 * (size_t)m - (i) - 1) / 2 + ((j) - (i) - 1)]
        for (uint32_t i = 0; i < m; i++) {
            /* a fine search from i: i outside the coarse set, or a later pair of i (both in it) the
             * coarse one did not join; it sets i's later pairs still unset (all of them when i is
             * outside), and its earlier ones still unset (an earlier portal outside the coarse set
             * set them) */
            int need = fine[f + i] && (coarse || i + 1 < m);
            for (uint32_t j = i + 1; j < m && !need; j++) need = AT(i, j) == HUGE_VAL && !fine[f + j];
            if (!need) continue;
            st = on_reach_from_target(&r, s, pts, np, f + i, coarse ? UINT32_MAX : f + i, cost);
            if (on_failed(st)) goto done;
            g->settled += r.pops;
            for (uint32_t j = 0; j < m; j++) {
                if (j == i || (j < i && (!coarse || AT(j, i) != HUGE_VAL))) continue;
                if (cost[f + j] == HUGE_VAL) { /* one component: the boxes say connected */
                    st = ON_FAILURE | ON_CORRUPT;
                    goto done;
                }
                if (j < i) AT(j, i) = cost[f + j];
                else if (fine[f + i] || AT(i, j) == HUGE_VAL) AT(i, j) = cost[f + j];
            }
        }
        if (m <= 512) /* through another portal when shorter: still a free path */
            for (uint32_t k = 0; k < m; k++)
                for (uint32_t i = 0; i < m; i++) {
                    if (i == k) continue;
                    double ik = i < k ? AT(i, k) : AT(k, i);
                    for (uint32_t j = i + 1; j < m; j++)
                        if (j != k) {
                            double kj = k < j ? AT(k, j) : AT(j, k);
                            if (ik + kj < AT(i, j)) AT(i, j) = ik + kj;
                        }
                }
        for (uint32_t i = 0; i + 1 < m; i++)
            for (uint32_t j = i + 1; j < m; j++)
                if (AT(i, j) > longest) longest = AT(i, j);
#undef AT
    }
    int sh = ON_TGRAPH_WSHIFT;
    while (sh > ON_TGRAPH_WSHIFT_MIN && ceil(ldexp(longest, sh)) > 65535) sh--;
    if (ceil(ldexp(longest, sh)) > 65535) {
        st = ON_FAILURE | ON_INVALID;
        goto done;
    }
    g->wshift = sh;
    for (uint64_t e = 0; e < ne; e++) {
        double x = ceil(ldexp(len[e], sh));
        g->w[e] = (uint16_t)(x < 1 ? 1 : x);
    }
    if (stretch > 1)
        for (uint32_t c = 0; c < g->ncomp; c++) {
            uint32_t m = g->comp_first[c + 1] - g->comp_first[c];
            if (m > 2 && m <= 128 && spanner(g->w + g->comp_w[c], m, stretch)) goto done;
        }
    g->nedge = 0;
    for (uint64_t e = 0; e < ne; e++) g->nedge += g->w[e] != 0;
    st = ON_SUCCESS;
done:
    free(pts);
    free(cost);
    free(fine);
    free(len);
    on_reach_free(&r);
    return st;
}

/* The portals of s (with_weights: and the matrices; cbits: coarse_weights'), sealed. */
static on_status build(const on_boxset *s, int depth, const on_tgraph_opts *o, int with_weights, on_boxbits *cbits,
                       on_tgraph **out)
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
    if (!g || !comp || !map || !acc.sq || !acc.grp || !sqcomp) goto done;
    g->depth = depth;
    g->bound = S;
    g->tag = o ? o->tag : 0;
    components(s, comp);
    for (int f = 0; f < 6; f++)
        if (face_portals(g, &acc, s, comp, n, S, f, map, sqcomp)) goto done;
    g->portal = acc.portal;
    g->rect = acc.rect;
    acc.portal = NULL;
    acc.rect = NULL;
    if (order_by_component(g)) goto done;
    if (with_weights) {
        st = build_weights(g, s, cbits, o && o->stretch > 1 ? o->stretch : 1.0);
        if (on_failed(st)) goto done;
    } else {
        g->comp_w = calloc((size_t)g->ncomp + 1, sizeof *g->comp_w);
        g->w = malloc(sizeof *g->w);
        if (!g->comp_w || !g->w) goto done;
    }
    st = on_tgraph_seal(g) ? ON_FAILURE | ON_NO_MEMORY : ON_SUCCESS;
done:
    free(comp);
    free(map);
    free(acc.sq);
    free(acc.grp);
    free(acc.portal);
    free(acc.rect);
    free(sqcomp);
    if (on_failed(st)) on_tgraph_free(g);
    else *out = g;
    return st;
}

on_status on_tgraph_build(const on_boxset *s, int depth, const on_tgraph_opts *o, on_tgraph **out)
{
    return build(s, depth, o, 1, NULL, out);
}

on_status on_tgraph_build_tile_portals(const on_tree *t, uint32_t tile, int bound, on_tgraph **out)
{
    *out = NULL;
    if (!t || tile >= t->ntiles) return ON_FAILURE | ON_INVALID;
    if (!t->tiles[tile].loaded) return ON_FAILURE | ON_LOADING;
    on_tgraph_opts o = {.bound = bound};
    const on_boxset *s = on_tile_boxes(t, tile);
    if (s) return build(s, t->p.depth, &o, 0, NULL, out);
    on_boxset *own;
    on_status st = on_boxset_build(&t->tiles[tile].table, t->tiles[tile].solid, t->p.depth, &own);
    if (on_failed(st)) return st;
    st = build(own, t->p.depth, &o, 0, NULL, out);
    on_boxset_free(own);
    return st;
}

/* A tile's contents: the fine leaves painted once, the coarse sets' bitmaps read off them (tiles that
 * search over coarse sets: from the bitmap in a few passes over its words, where counting each coarse
 * leaf's fine leaves box by box took a tenth of a 512^3 tile's graph), then the fine set built from it. */
on_status on_tgraph_build_table(const on_table *tab, uint8_t solid, int depth, const on_tgraph_opts *o,
                                on_tgraph **out)
{
    *out = NULL;
    if (depth < 1 || depth > ON_MAX_DEPTH) return ON_FAILURE | ON_INVALID;
    on_boxbits bits = {NULL, 0, 0}, cb[COARSE_SHIFT + 1];
    memset(cb, 0, sizeof cb);
    on_boxset *s = NULL;
    on_status st = ON_FAILURE | ON_NO_MEMORY;
    if (on_boxbits_alloc(&bits, depth)) goto done;
    on_boxbits_paint(tab, solid, depth, &bits);
    if (depth >= COARSE_MIN_DEPTH) {
        /* the least shift from the fine bits, each larger one from the one below it */
        for (int shift = COARSE_SHIFT_MIN; shift <= COARSE_SHIFT; shift++)
            if (on_tgraph_coarse_bits(shift == COARSE_SHIFT_MIN ? &bits : &cb[shift - 1],
                                      shift == COARSE_SHIFT_MIN ? shift : 1, &cb[shift]))
                goto done;
    }
    st = on_boxset_from_bits(&bits, 0, &s);
    if (on_failed(st)) goto done;
    on_boxbits_free(&bits);
    st = build(s, depth, o, 1, depth >= COARSE_MIN_DEPTH ? cb : NULL, out);
done:
    on_boxbits_free(&bits);
    for (int i = 0; i <= COARSE_SHIFT; i++) on_boxbits_free(&cb[i]);
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
