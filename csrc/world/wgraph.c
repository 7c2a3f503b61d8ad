/*
 * wgraph.c -- the world graph (see route.h, wgraph.h): tile graphs packed into their resident form,
 * linked to their face neighbours when both are present, faces kept only while a link may still need
 * them, links of a departed tile kept dormant for its return, the records held once in a pool that
 * graphs may share, and the statistics.
 */
#include "wgraph.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>

const on_tree_params *on_wgraph_params(const on_wgraph *w) { return &w->p; }
uint64_t on_wgraph_revision(const on_wgraph *w) { return w->revision; }
int on_wgraph_has_tile(const on_wgraph *w, uint32_t tile) { return tile < w->ntiles && w->tiles[tile] != NULL; }
int on_wgraph_tile_id(const on_wgraph *w, uint32_t tile, uint32_t *id)
{
    if (!on_wgraph_has_tile(w, tile)) return 0;
    *id = w->tiles[tile]->r->id;
    return 1;
}

/* Room for element n of the array *p of capacity *cap: doubling from 8 (on_grow's 256 kept 8 KB of
 * pending faces in every graph, 43 % of a dungeon agent's bytes, long after the last face went). -1
 * when out of memory (unchanged). */
static int grow1(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? 2 * *cap : 8;
    if (nc > SIZE_MAX / elem) return -1;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* After a removal (n left): the array freed when empty, halved when a quarter full (kept as it is when
 * that fails). */
static void shrink(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n == 0) {
        free(*p);
        *p = NULL;
        *cap = 0;
    } else if (*cap > 8 && n <= *cap / 4) {
        void *q = realloc(*p, *cap / 2 * elem);
        if (q) {
            *p = q;
            *cap /= 2;
        }
    }
}

/* Tile t's record of its own and its reference to its record, freed. */
static void tile_free(on_wgraph *w, uint32_t t)
{
    ctile *c = w->tiles[t];
    if (!c) return;
    on_wpool_release(w->pool, c->r);
    free(c);
    w->tiles[t] = NULL;
}

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
    if (!(w->pool = on_wpool_new(w))) {
        free(w->tiles);
        free(w);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    *out = w;
    return ON_SUCCESS;
}

static void face_drop(on_wgraph *w, size_t i)
{
    free(w->face[i].rect);
    free(w->face[i].portal);
    w->face[i] = w->face[--w->nface];
    shrink((void **)&w->face, &w->facecap, w->nface, sizeof *w->face);
}

static void dorm_drop(on_wgraph *w, size_t i)
{
    free(w->dorm[i].l);
    w->dorm[i] = w->dorm[--w->ndorm];
    shrink((void **)&w->dorm, &w->dormcap, w->ndorm, sizeof *w->dorm);
}

void on_wgraph_destroy(on_wgraph *w)
{
    if (!w) return;
    for (uint32_t i = 0; i < w->ntiles; i++) tile_free(w, i);
    on_wpool_leave(w);
    while (w->nface) face_drop(w, 0);
    while (w->ndorm) dorm_drop(w, 0);
    free(w->face);
    free(w->dorm);
    free(w->tiles);
    free(w);
}

uint32_t on_wgraph_neighbour(const on_wgraph *w, uint32_t t, int f)
{
    int c[3];
    wg_tile_ijk(w, t, c);
    c[f >> 1] += (f & 1) ? 1 : -1;
    for (int k = 0; k < 3; k++)
        if (c[k] < 0 || c[k] >= w->p.tiles[k]) return UINT32_MAX;
    return wg_tile_index(w, c);
}

/* ---- the resident record ----------------------------------------------------------------------- */

/* The portals of graph g for tile t kept: those on faces with a neighbour in the grid, map[old] = new
 * portal index (UINT32_MAX: dropped); returns how many. */
static uint32_t portal_map(const on_wgraph *wg, uint32_t t, const on_tgraph *g, uint32_t *map)
{
    uint32_t np = 0;
    for (uint32_t p = 0; p < g->nportal; p++)
        map[p] = on_wgraph_neighbour(wg, t, g->portal[p].face) == UINT32_MAX ? UINT32_MAX : np++;
    return np;
}

/* The record of graph g for tile t (its portals through map, portal_map's); NULL when out of memory
 * or too large. */
static crec *rec_of(const on_wgraph *wg, uint32_t t, const on_tgraph *g, uint32_t *map)
{
    uint32_t n = 1u << g->depth, np = portal_map(wg, t, g, map), nc = 0, lastc = UINT32_MAX;
    uint64_t npair = 0, m = 0;
    for (uint32_t p = 0; p < g->nportal; p++) {
        if (map[p] == UINT32_MAX) continue;
        if (g->portal[p].comp != lastc) {
            npair += m * (m - 1) / 2;
            m = 0;
            nc++;
            lastc = g->portal[p].comp;
        }
        m++;
    }
    npair += m * (m - 1) / 2;
    if (nc > 65535 || npair > UINT32_MAX / 4) return NULL;
    crec h;
    memset(&h, 0, sizeof h);
    h.w = n <= 128 && np <= 255 ? 1 : np <= 65535 ? 2 : 4;
    h.id = g->blob_crc;
    h.np = np;
    h.ncomp = (uint16_t)nc;
    h.wshift = (int8_t)g->wshift;
    int lb = 0;
    while ((1 << lb) < g->bound) lb++;
    h.depth_lb = (uint8_t)(g->depth | lb << 4);
    size_t need = cr_off_w(&h) + 2 * (size_t)npair;
    if (need > UINT32_MAX) return NULL;
    crec *c = malloc(sizeof h + need);
    if (!c) return NULL;
    *c = h;
    int w = c->w;
    uint32_t k = 0, e = 0;
    lastc = UINT32_MAX;
    for (uint32_t p = 0; p < g->nportal; p++) {
        if (map[p] == UINT32_MAX) continue;
        const on_portal *q = &g->portal[p];
        const on_prect *r = &g->rect[q->rect];
        if (q->comp != lastc) { /* a new component: its first portal and where its weights start */
            if (lastc != UINT32_MAX) k++;
            lastc = q->comp;
            ct_wr(c->d + cr_off_comp(c) + (size_t)k * w, w, map[p]);
        }
        uint8_t *x = c->d + map[p] * cr_portal_size(c);
        ct_wr(x, w, (uint32_t)r->mn[0] + r->mx[0]);
        ct_wr(x + w, w, (uint32_t)r->mn[1] + r->mx[1]);
        x[2 * w] = q->face;
    }
    ct_wr(c->d + cr_off_comp(c) + (size_t)nc * w, w, np);
    for (k = 0; k < nc; k++) { /* where each component's weights start (component 0: at 0) */
        uint64_t mk = cr_comp_first(c, k + 1) - cr_comp_first(c, k);
        if (k > 0) memcpy(c->d + cr_off_moff(c) + 4 * ((size_t)k - 1), &e, 4);
        e += (uint32_t)(mk * (mk - 1) / 2);
    }
    e = 0;
    /* the weights, row by row of each component's upper triangle */
    for (uint32_t a = 0; a < g->nportal; a++) {
        if (map[a] == UINT32_MAX) continue;
        for (uint32_t b = a + 1; b < g->nportal && g->portal[b].comp == g->portal[a].comp; b++) {
            if (map[b] == UINT32_MAX) continue;
            ct_wr(c->d + cr_off_w(c) + 2 * (size_t)e++, 2, on_tgraph_weight(g, a, b));
        }
    }
    return c;
}

/* Links of tile t's face 2k+1 into recs (n of them); recs may be NULL when there are none. */
static wlinkrec *links_get(const ctile *c, int k)
{
    wlinkrec *l = malloc(((size_t)c->nlink[k] + 1) * sizeof *l);
    if (!l) return NULL;
    for (uint32_t i = 0; i < c->nlink[k]; i++) {
        uint32_t lo[2], hi[2];
        ct_link(c, k, i, &l[i].a, &l[i].b, lo, hi);
        for (int j = 0; j < 2; j++) {
            l[i].lo[j] = (uint16_t)lo[j];
            l[i].hi[j] = (uint16_t)hi[j];
        }
    }
    return l;
}

/* Replace the links of tile t's face 2k+1 by l[0..n); -1 when out of memory (unchanged). */
static int links_set(on_wgraph *w, uint32_t t, int k, const wlinkrec *l, uint32_t n)
{
    ctile *c = w->tiles[t];
    if (n > 65535) return -1;
    wlinkrec *keep[3] = {NULL, NULL, NULL};
    uint32_t cnt[3];
    for (int j = 0; j < 3; j++) {
        cnt[j] = j == k ? n : c->nlink[j];
        if (j != k && !(keep[j] = links_get(c, j))) goto fail;
    }
    size_t need = sizeof *c + ((size_t)cnt[0] + cnt[1] + cnt[2]) * ct_link_size(c);
    ctile *nc = realloc(c, need);
    if (!nc) goto fail;
    c = w->tiles[t] = nc;
    uint8_t *x = c->d;
    int wd = c->w;
    for (int j = 0; j < 3; j++) {
        const wlinkrec *src = j == k ? l : keep[j];
        c->nlink[j] = (uint16_t)cnt[j];
        for (uint32_t i = 0; i < cnt[j]; i++, x += ct_link_size(c)) {
            ct_wr(x, wd, src[i].a);
            ct_wr(x + wd, wd, src[i].b);
            ct_wr(x + 2 * wd, wd, src[i].lo[0]);
            ct_wr(x + 3 * wd, wd, src[i].lo[1]);
            ct_wr(x + 4 * wd, wd, src[i].hi[0] - 1u);
            ct_wr(x + 5 * wd, wd, src[i].hi[1] - 1u);
        }
    }
    for (int j = 0; j < 3; j++) free(keep[j]);
    return 0;
fail:
    for (int j = 0; j < 3; j++) free(keep[j]);
    return -1;
}

/* ---- faces and links --------------------------------------------------------------------------- */

static long face_find(const on_wgraph *w, uint32_t t, int f)
{
    for (size_t i = 0; i < w->nface; i++)
        if (w->face[i].tile == t && w->face[i].face == f) return (long)i;
    return -1;
}

int on_wgraph_face_kept(const on_wgraph *w, uint32_t t, int f) { return face_find(w, t, f) >= 0; }

static long dorm_find(const on_wgraph *w, uint32_t owner, int k)
{
    for (size_t i = 0; i < w->ndorm; i++)
        if (w->dorm[i].owner == owner && w->dorm[i].k == k) return (long)i;
    return -1;
}

/* Face f of graph g as a wface (tile t, portals through map); -1 when out of memory. */
static int face_of(const on_tgraph *g, const uint32_t *map, uint32_t t, int f, wface *out)
{
    uint32_t n = 0;
    for (uint32_t p = 0; p < g->nportal; p++)
        if (g->portal[p].face == f) n += g->portal[p].nrect;
    out->tile = t;
    out->face = (uint8_t)f;
    out->n = n;
    out->rect = malloc(((size_t)n + 1) * sizeof *out->rect);
    out->portal = malloc(((size_t)n + 1) * sizeof *out->portal);
    if (!out->rect || !out->portal) {
        free(out->rect);
        free(out->portal);
        return -1;
    }
    n = 0;
    for (uint32_t p = 0; p < g->nportal; p++)
        if (g->portal[p].face == f)
            for (uint32_t i = 0; i < g->portal[p].nrect; i++) {
                out->rect[n] = g->rect[g->portal[p].rect + i];
                out->portal[n++] = map[p];
            }
    return 0;
}

static int face_keep(on_wgraph *w, const on_tgraph *g, const uint32_t *map, uint32_t t, int f)
{
    if (grow1((void **)&w->face, &w->facecap, w->nface, sizeof *w->face)) return -1;
    if (face_of(g, map, t, f, &w->face[w->nface])) return -1;
    w->nface++;
    return 0;
}

static int link_cmp(const void *x, const void *y)
{
    const wlinkrec *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The links between face A (the owner's, across +k) and face B (the neighbour's, across -k): per
 * pair of portals whose rectangles overlap with positive area, the largest overlap (ties to the
 * smallest (v, u)). *out (malloc'd, n in *nl); -1 when out of memory. */
static int links_make(const wface *A, const wface *B, wlinkrec **out, uint32_t *nl)
{
    wlinkrec *l = NULL;
    size_t n = 0, cap = 0;
    for (uint32_t i = 0; i < A->n; i++)
        for (uint32_t j = 0; j < B->n; j++) {
            const on_prect *x = &A->rect[i], *y = &B->rect[j];
            uint32_t u0 = x->mn[0] > y->mn[0] ? x->mn[0] : y->mn[0], u1 = x->mx[0] < y->mx[0] ? x->mx[0] : y->mx[0];
            uint32_t v0 = x->mn[1] > y->mn[1] ? x->mn[1] : y->mn[1], v1 = x->mx[1] < y->mx[1] ? x->mx[1] : y->mx[1];
            if (u0 >= u1 || v0 >= v1) continue;
            uint64_t area = (uint64_t)(u1 - u0) * (v1 - v0);
            size_t e = 0;
            while (e < n && !(l[e].a == A->portal[i] && l[e].b == B->portal[j])) e++;
            if (e == n) {
                if (on_grow((void **)&l, &cap, n + 1, sizeof *l)) {
                    free(l);
                    return -1;
                }
                l[n++] = (wlinkrec){A->portal[i], B->portal[j], {(uint16_t)u0, (uint16_t)v0}, {(uint16_t)u1, (uint16_t)v1}};
                continue;
            }
            uint64_t old = (uint64_t)(l[e].hi[0] - l[e].lo[0]) * (uint64_t)(l[e].hi[1] - l[e].lo[1]);
            if (area > old || (area == old && (v0 < l[e].lo[1] || (v0 == l[e].lo[1] && u0 < l[e].lo[0]))))
                l[e] = (wlinkrec){A->portal[i], B->portal[j], {(uint16_t)u0, (uint16_t)v0}, {(uint16_t)u1, (uint16_t)v1}};
        }
    if (n > 1) qsort(l, n, sizeof *l, link_cmp); /* by owner portal: ct_links_of */
    *out = l;
    *nl = (uint32_t)n;
    return 0;
}

/* Link face f of tile x (graph g, its portals through map) with the kept face py of its neighbour y
 * across it: the owner's links of the pair replaced, y's face dropped, both sides' unresolved bits
 * cleared. -1 when out of memory (the links unchanged). */
static int link_with_kept(on_wgraph *w, uint32_t x, const on_tgraph *g, const uint32_t *map, int f, uint32_t y,
                          long py)
{
    wface mine;
    if (face_of(g, map, x, f, &mine)) return -1;
    wlinkrec *l = NULL;
    uint32_t nl = 0;
    int rc = (f & 1) ? links_make(&mine, &w->face[py], &l, &nl) : links_make(&w->face[py], &mine, &l, &nl);
    free(mine.rect);
    free(mine.portal);
    if (rc == 0) rc = links_set(w, (f & 1) ? x : y, f >> 1, l, nl);
    free(l);
    if (rc) return -1;
    face_drop(w, (size_t)py);
    w->tiles[x]->unresolved &= (uint8_t)~(1u << f);
    w->tiles[y]->unresolved &= (uint8_t)~(1u << (f ^ 1));
    return 0;
}

/* Link face f of the new tile x (graph g) with its present neighbour y; see route.h. -1 no memory. */
static int link_face(on_wgraph *w, uint32_t x, const on_tgraph *g, const uint32_t *map, int f, uint32_t y)
{
    int k = f >> 1;
    uint32_t owner = (f & 1) ? x : y, other = (f & 1) ? y : x;
    long d = dorm_find(w, owner, k), py = face_find(w, y, f ^ 1);
    if (d >= 0 && w->dorm[d].crc_owner == w->tiles[owner]->crc && w->dorm[d].crc_other == w->tiles[other]->crc) {
        if (links_set(w, owner, k, w->dorm[d].l, w->dorm[d].n)) return -1;
        dorm_drop(w, (size_t)d);
        if (py >= 0) face_drop(w, (size_t)py);
        w->tiles[y]->unresolved &= (uint8_t)~(1u << (f ^ 1));
        return 0;
    }
    if (d >= 0) dorm_drop(w, (size_t)d);
    if (py < 0) { /* the neighbour's face is gone: no exact link; kept until it is added again */
        w->maybe_unresolved = 1;
        w->tiles[x]->unresolved |= (uint8_t)(1u << f);
        w->tiles[y]->unresolved |= (uint8_t)(1u << (f ^ 1));
        return face_keep(w, g, map, x, f);
    }
    return link_with_kept(w, x, g, map, f, y, py);
}

on_status on_wgraph_add_tile(on_wgraph *w, uint32_t tile, on_tgraph *g)
{
    if (!w || !g || tile >= w->ntiles || g->depth != w->p.depth) {
        on_tgraph_free(g);
        return ON_FAILURE | ON_INVALID;
    }
    on_wgraph_remove_tile(w, tile);
    uint32_t *map = malloc(((size_t)g->nportal + 1) * sizeof *map);
    crec *r = map ? rec_of(w, tile, g, map) : NULL;
    ctile *c = r ? calloc(1, sizeof *c) : NULL;
    if (c && !(c->r = on_wpool_intern(w->pool, r))) { /* (the pool's equal record if it holds one) */
        free(c);
        c = NULL;
        r = NULL;
    }
    if (!c) {
        free(r);
        free(map);
        on_tgraph_free(g);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    c->np = c->r->np;
    c->w = c->r->w;
    c->crc = g->crc;
    w->tiles[tile] = c;
    w->ngraphs++;
    w->revision++;
    for (int f = 0; f < 6; f++) {
        uint32_t y = on_wgraph_neighbour(w, tile, f);
        if (y == UINT32_MAX) continue; /* the world's border: nothing ever links there */
        int rc = w->tiles[y] ? link_face(w, tile, g, map, f, y) : face_keep(w, g, map, tile, f);
        if (rc) {
            free(map);
            on_tgraph_free(g);
            on_wgraph_remove_tile(w, tile); /* no half-linked tile */
            return ON_FAILURE | ON_NO_MEMORY;
        }
    }
    free(map);
    on_tgraph_free(g);
    return ON_SUCCESS;
}

on_status on_wgraph_remove_tile(on_wgraph *w, uint32_t tile)
{
    if (!w || tile >= w->ntiles) return ON_FAILURE | ON_INVALID;
    ctile *c = w->tiles[tile];
    if (!c) return ON_SUCCESS;
    on_status st = ON_SUCCESS;
    for (int f = 0; f < 6; f++) {
        long i = face_find(w, tile, f);
        if (i >= 0) face_drop(w, (size_t)i);
        uint32_t y = on_wgraph_neighbour(w, tile, f);
        if (y == UINT32_MAX || !w->tiles[y]) continue;
        if (w->tiles[tile]->unresolved & (1u << f)) { /* never linked: no links to keep */
            w->tiles[y]->unresolved &= (uint8_t)~(1u << (f ^ 1));
            continue;
        }
        int k = f >> 1;
        uint32_t owner = (f & 1) ? tile : y, other = (f & 1) ? y : tile;
        long d = dorm_find(w, owner, k);
        if (d >= 0) dorm_drop(w, (size_t)d);
        wlinkrec *l = links_get(w->tiles[owner], k);
        if (!l || grow1((void **)&w->dorm, &w->dormcap, w->ndorm, sizeof *w->dorm)) {
            free(l); /* the pair's links are lost: a new graph there is unresolved until re-added */
            st = ON_FAILURE | ON_NO_MEMORY;
        } else {
            w->dorm[w->ndorm++] = (wdormant){owner, (uint8_t)k, w->tiles[owner]->crc, w->tiles[other]->crc,
                                             w->tiles[owner]->nlink[k], l};
        }
        if (owner == y && links_set(w, y, k, NULL, 0)) st = ON_FAILURE | ON_NO_MEMORY;
    }
    tile_free(w, tile);
    w->ngraphs--;
    w->revision++;
    return st;
}

void on_wgraph_stats_get(const on_wgraph *w, on_wgraph_stats *st)
{
    memset(st, 0, sizeof *st);
    st->bytes = sizeof *w + (size_t)w->ntiles * sizeof *w->tiles + w->facecap * sizeof *w->face +
                w->dormcap * sizeof *w->dorm;
    for (uint32_t i = 0; i < w->ntiles; i++) {
        const ctile *c = w->tiles[i];
        if (!c) continue;
        st->tiles++;
        st->portals += c->np;
        const crec *r = c->r;
        for (uint32_t e = 0, npair = cr_npair(r); e < npair; e++) /* the pairs with an edge */
            st->edges += r->d[cr_off_w(r) + 2 * (size_t)e] || r->d[cr_off_w(r) + 2 * (size_t)e + 1];
        st->links += ct_nlinks(c);
        st->unresolved += (size_t)__builtin_popcount(c->unresolved);
        st->bytes += ct_bytes(c);
    }
    st->unresolved /= 2;
    for (size_t i = 0; i < w->nface; i++) {
        st->rects += w->face[i].n;
        st->bytes += (size_t)w->face[i].n * (sizeof(on_prect) + sizeof(uint32_t));
    }
    st->faces = w->nface;
    for (size_t i = 0; i < w->ndorm; i++) {
        st->dormant += w->dorm[i].n;
        st->bytes += (size_t)w->dorm[i].n * sizeof(wlinkrec);
    }
    st->records = w->pool->nrec;
    st->record_bytes = on_wpool_bytes(w->pool);
    st->sharing = w->pool->nmember;
    if (w->pool->member[0] == w) st->bytes += st->record_bytes; /* (the pool's first graph counts it) */
}

/* Resolve the unresolved faces of tile x whose own rectangles are gone, from its tree tile. */
static on_status resolve_tile(on_wgraph *w, const on_tree *t, uint32_t x, size_t *done)
{
    ctile *c = w->tiles[x];
    on_tgraph *g = NULL;
    uint32_t *map = NULL;
    on_status st = ON_SUCCESS;
    for (int f = 0; f < 6; f++) {
        if (!(w->tiles[x]->unresolved & (1u << f)) || on_wgraph_face_kept(w, x, f)) continue;
        uint32_t y = on_wgraph_neighbour(w, x, f);
        long py = face_find(w, y, f ^ 1);
        if (y == UINT32_MAX || !w->tiles[y] || py < 0) continue;
        if (!g) {
            if (x >= t->ntiles || !t->tiles[x].loaded) return ON_SUCCESS; /* later */
            st = on_tgraph_build_tile_portals(t, x, 1 << (c->r->depth_lb >> 4), &g);
            if (on_failed(st)) return st;
            if (g->crc != c->crc) { /* the tree's tile is not what this graph was built from */
                on_tgraph_free(g);
                return ON_SUCCESS;
            }
            map = malloc(((size_t)g->nportal + 1) * sizeof *map);
            if (!map) {
                st = ON_FAILURE | ON_NO_MEMORY;
                break;
            }
            portal_map(w, x, g, map);
        }
        if (link_with_kept(w, x, g, map, f, y, py)) {
            st = ON_FAILURE | ON_NO_MEMORY;
            break;
        }
        (*done)++;
    }
    free(map);
    on_tgraph_free(g);
    return st;
}

on_status on_wgraph_resolve(on_wgraph *w, const on_tree *t, size_t *resolved)
{
    size_t done = 0, left = 0;
    if (resolved) *resolved = 0;
    if (!w || !w->maybe_unresolved) return ON_SUCCESS;
    if (!t || t->p.depth != w->p.depth || memcmp(t->p.tiles, w->p.tiles, sizeof t->p.tiles) != 0)
        return ON_FAILURE | ON_INVALID;
    for (uint32_t x = 0; x < w->ntiles; x++) {
        if (!w->tiles[x] || !w->tiles[x]->unresolved) continue;
        on_status st = resolve_tile(w, t, x, &done);
        if (on_failed(st)) return st;
        left += w->tiles[x]->unresolved != 0;
    }
    w->maybe_unresolved = left > 0;
    if (done) w->revision++;
    if (resolved) *resolved = done;
    return ON_SUCCESS;
}
