/*
 * landmarks.c -- building a tree's landmark distances and components, freeing them, finding a cell's
 * number (the structure and its life: landmarks.h).
 */
#include "landmarks.h"
#include "celladj.h"
#include "raycast.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A Dijkstra heap entry (lazy deletion: a cell may be in it several times; stale entries are skipped). */
typedef struct hent {
    float k;
    uint32_t v;
} hent;

typedef struct lbuild {
    const on_tree *t;
    on_cellcsr **adj;       /* per tile, the list form (NULL: no free cell, or not loaded) */
    uint32_t *base;         /* per tile: its first cell's global number */
    uint32_t *tileof;       /* global number -> tile */
    uint32_t total;
    on_lcache *lc;
    on_cell *nb;            /* border faces' neighbours (on_tree_neighbors_face) */
    uint8_t *nbf;
    size_t nbcap;
    uint32_t *out;          /* a cell's neighbours: global numbers and the face of the cell each lies across */
    uint8_t *oface;
    size_t outcap;
    hent *heap;
    size_t nheap, heapcap;
    float *dist;
    uint32_t *par;          /* each cell's parent in the Dijkstra's tree (Theta*: any visible ancestor) */
    uint8_t *closed;        /* popped (its distance final) */
    float *cen;             /* each cell's centre (nav space; exact: halves of integers below 2^24) */
} lbuild;

/* Global cell u's corner in nav space (leaves) and size. */
static void corner(const lbuild *b, uint32_t u, double mn[3], double *size)
{
    uint32_t tile = b->tileof[u];
    on_cell cell = {tile, b->adj[tile]->code[u - b->base[tile]]};
    int64_t m[3], s;
    on_tree_cell_nav(b->t, cell, m, &s);
    for (int k = 0; k < 3; k++) mn[k] = (double)m[k];
    *size = (double)s;
}

static int push_out(lbuild *b, size_t *n, uint32_t v, unsigned face)
{
    size_t cap = b->outcap;
    if (on_grow((void **)&b->out, &cap, *n + 1, sizeof *b->out)) return -1;
    if (cap != b->outcap) {
        size_t fc = b->outcap;
        if (on_grow((void **)&b->oface, &fc, cap, sizeof *b->oface)) return -1;
        b->outcap = cap;
    }
    b->out[*n] = v;
    b->oface[*n] = (uint8_t)face;
    (*n)++;
    return 0;
}

/* Global cell u's face neighbours (its list; a border face's walked in the tree) into b->out, the face
 * of u each lies across into b->oface: their count, or -1 on allocation failure. */
static long neighbours(lbuild *b, uint32_t u)
{
    uint32_t tile = b->tileof[u], i = u - b->base[tile];
    const on_cellcsr *a = b->adj[tile];
    size_t n = 0;
    for (uint32_t j = a->off[i]; j < a->off[i + 1]; j++) {
        uint32_t en = a->ent[j], v = en & ON_ADJ_INDEX, f = en >> ON_ADJ_FACE_SHIFT;
        if (v != ON_ADJ_BORDER) {
            if (push_out(b, &n, b->base[tile] + v, f)) return -1;
            continue;
        }
        on_cell c = {tile, a->code[i]};
        size_t nf;
        on_status s;
        while ((s = on_tree_neighbors_face(b->t, b->lc, c, (int)f, b->nb, b->nbf, b->nbcap, &nf)) & ON_BUFFER_SMALL) {
            size_t cap = b->nbcap;
            if (on_grow((void **)&b->nb, &cap, nf > cap ? nf : 2 * cap + 16, sizeof *b->nb)) return -1;
            size_t fc = b->nbcap;
            if (on_grow((void **)&b->nbf, &fc, cap, sizeof *b->nbf)) return -1;
            b->nbcap = cap;
        }
        if (!on_ok(s)) continue; /* (nothing beyond) */
        for (size_t k = 0; k < nf; k++) {
            const on_cellcsr *o = b->nb[k].tile < b->t->ntiles ? b->adj[b->nb[k].tile] : NULL;
            uint32_t x = o ? on_cellcsr_find(o, b->nb[k].code) : ON_ADJ_NONE;
            if (x != ON_ADJ_NONE && push_out(b, &n, b->base[b->nb[k].tile] + x, f)) return -1;
        }
    }
    return (long)n;
}

static int heap_push(lbuild *b, float k, uint32_t v)
{
    if (on_grow((void **)&b->heap, &b->heapcap, b->nheap + 1, sizeof *b->heap)) return -1;
    size_t i = b->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (b->heap[p].k <= k) break;
        b->heap[i] = b->heap[p];
        i = p;
    }
    b->heap[i] = (hent){k, v};
    return 0;
}

static hent heap_pop(lbuild *b)
{
    hent top = b->heap[0], last = b->heap[--b->nheap];
    size_t i = 0, n = b->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && b->heap[c + 1].k < b->heap[c].k) c++;
        if (last.k <= b->heap[c].k) break;
        b->heap[i] = b->heap[c];
        i = c;
    }
    if (n) b->heap[i] = last;
    return top;
}

static inline void cell_centre(const lbuild *b, uint32_t u, double c[3])
{
    for (int k = 0; k < 3; k++) c[k] = (double)b->cen[3 * (size_t)u + (size_t)k];
}

/* Distances from global cell s into b->dist (INFINITY: not reached): a Dijkstra over the free cells'
 * centres whose parents may be any visible ancestor (Lazy Theta*: a neighbour v of the cell u popped is
 * reached from u's parent in a straight line, taken as clear; when v is popped in turn and that line
 * is blocked, v takes the best of its neighbours popped before as its parent instead). Lengths follow
 * the straight line through runs of small cells, where centre to centre steps measure a staircase (up
 * to 1.7 times as long). One line of sight a cell, of at most LM_REACH. 0, or -1 on allocation failure. */
/* The longest straight line from a parent the Dijkstra takes (leaves): line of sight over long lines
 * was 85% of BC1's build. Measured with 16 landmarks (bench/query -L 16): unbounded, DC1 / Complex /
 * BC1 mean ratios 0.9281 / 0.9236 / 0.9433 and builds of 6.3 / 1.3 / 48.7 s; 96: 0.9282 / 0.9238 /
 * 0.9436, 4.0 / 0.9 / 17.0 s; 16: 0.9301 / 0.9248 / 0.9455 (a staircase again). */
#define LM_REACH 96.0
static int dijkstra(lbuild *b, uint32_t s)
{
    for (uint32_t i = 0; i < b->total; i++) b->dist[i] = INFINITY;
    memset(b->closed, 0, b->total);
    b->nheap = 0;
    b->dist[s] = 0;
    b->par[s] = s;
    if (heap_push(b, 0, s)) return -1;
    while (b->nheap) {
        hent e = heap_pop(b);
        uint32_t u = e.v;
        if (b->closed[u] || e.k > b->dist[u]) continue; /* stale */
        long n = neighbours(b, u);
        if (n < 0) return -1;
        double cu[3], cp[3];
        cell_centre(b, u, cu);
        uint32_t p = b->par[u];
        if (p != u) {
            cell_centre(b, p, cp);
            if (!on_tree_visible_nav(b->t, b->lc, cp, cu)) { /* the best neighbour closed before */
                float best = INFINITY;
                for (long k = 0; k < n; k++) {
                    uint32_t w = b->out[k];
                    if (!b->closed[w]) continue;
                    double cw[3];
                    cell_centre(b, w, cw);
                    float d = b->dist[w] + (float)on_dist3(cw, cu);
                    if (d < best) {
                        best = d;
                        p = w;
                    }
                }
                b->par[u] = p; /* (a neighbour closed before exists: the one that reached u) */
                b->dist[u] = best;
            }
        }
        b->closed[u] = 1;
        float du = b->dist[u];
        /* u's children: from u's parent in a straight line (u's own when it is the source) */
        p = b->par[u];
        float dp = b->dist[p];
        if (p == u) memcpy(cp, cu, sizeof cp);
        else cell_centre(b, p, cp);
        for (long k = 0; k < n; k++) {
            uint32_t v = b->out[k];
            if (b->closed[v]) continue;
            double cv[3];
            cell_centre(b, v, cv);
            double lp = on_dist3(cp, cv);
            uint32_t pv = p;
            float d = dp + (float)lp;
            if (lp > LM_REACH) { /* (a line too long to check cheaply: from u) */
                pv = u;
                d = du + (float)on_dist3(cu, cv);
            }
            if (d < b->dist[v]) {
                b->dist[v] = d;
                b->par[v] = pv;
                if (heap_push(b, d, v)) return -1;
            }
        }
    }
    return 0;
}

/* Every cell's component (breadth first, over a queue of its own); their count, or -1. */
static long label(lbuild *b, uint32_t *comp)
{
    for (uint32_t i = 0; i < b->total; i++) comp[i] = UINT32_MAX;
    uint32_t *queue = malloc((b->total ? b->total : 1) * sizeof *queue);
    if (!queue) return -1;
    long ncomp = 0;
    for (uint32_t s = 0; s < b->total; s++) {
        if (comp[s] != UINT32_MAX) continue;
        uint32_t c = (uint32_t)ncomp++, head = 0, tail = 0;
        comp[s] = c;
        queue[tail++] = s;
        while (head < tail) {
            long n = neighbours(b, queue[head++]);
            if (n < 0) {
                free(queue);
                return -1;
            }
            for (long k = 0; k < n; k++)
                if (comp[b->out[k]] == UINT32_MAX) {
                    comp[b->out[k]] = c;
                    queue[tail++] = b->out[k];
                }
        }
    }
    free(queue);
    return ncomp;
}

static void landmarks_free(on_landmarks *lm)
{
    if (!lm) return;
    free(lm->ncell);
    free(lm->dall);
    free(lm->call);
    free(lm->d);
    free(lm->comp);
    free(lm);
}

void on_tree_landmarks_drop(on_tree *t)
{
    landmarks_free(t->landmarks);
    t->landmarks = NULL;
    t->landmarks_gen++;
}

/* Move each cell's distances and component from its number in the list form (b->adj: the build's)
 * to its number in the tile's cell adjacency (celladj.h), whose numbers (a->n a tile) include those
 * of the layer-1 nodes' blocked leaves: those hold ON_LM_INF and no component. lm->ncell becomes each
 * tile's count of numbers; 0, or -1 on allocation failure. */
static int renumber(const on_tree *t, on_landmarks *lm, const lbuild *b, size_t *numbers)
{
    size_t total = 0, n = (size_t)lm->n;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_celladj *a = lm->ncell[i] ? on_tile_celladj_build(t, i) : NULL;
        if (lm->ncell[i] && !a) return -1;
        total += a ? a->n : 0;
    }
    size_t cells = total ? total : 1;
    uint16_t *d = malloc(cells * n * sizeof *d);
    uint32_t *c = malloc(cells * sizeof *c);
    if (!d || !c) {
        free(d);
        free(c);
        return -1;
    }
    for (size_t k = 0; k < cells * n; k++) d[k] = ON_LM_INF;
    for (size_t k = 0; k < cells; k++) c[k] = UINT32_MAX;
    size_t base = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_celladj *a = lm->ncell[i] ? on_tile_celladj_build(t, i) : NULL;
        for (uint32_t k = 0; a && k < lm->ncell[i]; k++) {
            size_t from = (size_t)b->base[i] + k, to = base + on_celladj_find(a, b->adj[i]->code[k]);
            memcpy(d + to * n, lm->dall + from * n, n * sizeof *d);
            c[to] = lm->call[from];
        }
        lm->d[i] = d + base * n;
        lm->comp[i] = c + base;
        lm->ncell[i] = a ? a->n : 0;
        base += a ? a->n : 0;
    }
    free(lm->dall);
    free(lm->call);
    lm->dall = d;
    lm->call = c;
    *numbers = total;
    return 0;
}

/* The build over the tree's loaded tiles (their adjacencies built here): NULL with *st set on failure. */
static on_landmarks *build(const on_tree *t, int n, on_status *st)
{
    lbuild b;
    memset(&b, 0, sizeof b);
    b.t = t;
    *st = ON_FAILURE | ON_NO_MEMORY;
    on_landmarks *lm = calloc(1, sizeof *lm);
    uint32_t *comp = NULL;
    double *count = NULL;
    float *mind = NULL;
    if (!lm) return NULL;
    lm->n = n;
    lm->ntiles = t->ntiles;
    lm->complete = 1;
    lm->ncell = calloc(t->ntiles, sizeof *lm->ncell);
    lm->d = calloc(t->ntiles, sizeof *lm->d);
    lm->comp = calloc(t->ntiles, sizeof *lm->comp);
    b.adj = calloc(t->ntiles, sizeof *b.adj);
    b.base = calloc(t->ntiles, sizeof *b.base);
    b.lc = malloc(sizeof *b.lc);
    if (!lm->ncell || !lm->d || !lm->comp || !b.adj || !b.base || !b.lc) goto fail;
    on_lcache_reset(b.lc, t);
    size_t total = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_tile *tl = &t->tiles[i];
        b.base[i] = (uint32_t)total;
        if (!tl->loaded) lm->complete = 0;
        if (!tl->loaded || tl->solid) continue;
        b.adj[i] = on_cellcsr_build(t, i);
        if (!b.adj[i] || !on_tile_celladj_build(t, i) || on_tile_celladj_build(t, i)->ncell != b.adj[i]->n) goto fail;
        lm->ncell[i] = b.adj[i]->n;
        total += b.adj[i]->n;
        if (total >= UINT32_MAX / 2) goto fail;
    }
    b.total = (uint32_t)total;
    lm->cells = total;
    size_t cells = total ? total : 1;
    lm->dall = malloc(cells * (size_t)n * sizeof *lm->dall);
    lm->call = malloc(cells * sizeof *lm->call);
    b.tileof = malloc(cells * sizeof *b.tileof);
    b.dist = malloc(cells * sizeof *b.dist);
    b.par = malloc(cells * sizeof *b.par);
    b.closed = malloc(cells);
    b.cen = malloc(3 * cells * sizeof *b.cen);
    mind = malloc(cells * sizeof *mind);
    if (!lm->dall || !lm->call || !b.tileof || !b.dist || !b.par || !b.closed || !b.cen || !mind) goto fail;
    comp = lm->call;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        lm->d[i] = lm->dall + (size_t)b.base[i] * (size_t)n;
        lm->comp[i] = lm->call + b.base[i];
        for (uint32_t k = 0; k < lm->ncell[i]; k++) b.tileof[b.base[i] + k] = i;
    }
    for (uint32_t i = 0; i < b.total; i++) {
        double mn[3], sz;
        corner(&b, i, mn, &sz);
        for (int k = 0; k < 3; k++) b.cen[3 * (size_t)i + (size_t)k] = (float)(mn[k] + 0.5 * sz);
    }
    long ncomp = label(&b, comp);
    if (ncomp < 0) goto fail;
    lm->components = (size_t)ncomp;
    lm->step = 1;
    if (total) {
        count = calloc((size_t)ncomp, sizeof *count); /* (each component's volume, in leaves) */
        if (!count) goto fail;
        for (uint32_t i = 0; i < b.total; i++) {
            double mn[3], sz;
            corner(&b, i, mn, &sz);
            count[comp[i]] += sz * sz * sz;
        }
        uint32_t main = 0;
        for (uint32_t c = 1; c < (uint32_t)ncomp; c++)
            if (count[c] > count[main]) main = c;
        lm->main_comp = main;
        uint32_t s = 0;
        while (comp[s] != main) s++;
        /* from any cell of the main component: the farthest is the first landmark, and no distance
         * from a landmark is more than twice the largest from s (the steps' range) */
        if (dijkstra(&b, s)) goto fail;
        float ecc = 0;
        uint32_t far = s;
        for (uint32_t i = 0; i < b.total; i++)
            if (b.dist[i] != INFINITY && b.dist[i] > ecc) {
                ecc = b.dist[i];
                far = i;
            }
        lm->step = ecc > 0 ? 2.0 * (double)ecc / (double)ON_LM_TOP : 1.0;
        for (uint32_t i = 0; i < b.total; i++) mind[i] = comp[i] == main ? INFINITY : -1.0f;
        for (int l = 0; l < n; l++) {
            if (l > 0) { /* the cell farthest from the landmarks chosen */
                float best = -1;
                for (uint32_t i = 0; i < b.total; i++)
                    if (mind[i] > best) {
                        best = mind[i];
                        far = i;
                    }
            }
            lm->where[l] = (on_cell){b.tileof[far], b.adj[b.tileof[far]]->code[far - b.base[b.tileof[far]]]};
            if (dijkstra(&b, far)) goto fail;
            for (uint32_t i = 0; i < b.total; i++) {
                float d = b.dist[i];
                uint16_t qd = ON_LM_INF;
                if (d != INFINITY) {
                    double x = floor((double)d / lm->step + 0.5);
                    qd = (uint16_t)(x < (double)ON_LM_TOP ? x : (double)ON_LM_TOP);
                    if (d < mind[i]) mind[i] = d;
                }
                lm->dall[(size_t)i * (size_t)n + (size_t)l] = qd;
            }
        }
    }
    /* the lists' numbers (Morton order) to the cell adjacency's, which the search's nodes keep */
    size_t numbers = 0;
    if (renumber(t, lm, &b, &numbers)) goto fail;
    lm->bytes = sizeof *lm + t->ntiles * (sizeof *lm->ncell + sizeof *lm->d + sizeof *lm->comp) +
                numbers * ((size_t)n * sizeof *lm->dall + sizeof *lm->call);
    *st = ON_SUCCESS;
    goto done;
fail:
    landmarks_free(lm);
    lm = NULL;
done:
    free(count);
    free(mind);
    for (uint32_t i = 0; b.adj && i < t->ntiles; i++) on_cellcsr_free(b.adj[i]);
    free(b.adj);
    free(b.base);
    free(b.tileof);
    free(b.lc);
    free(b.nb);
    free(b.nbf);
    free(b.out);
    free(b.oface);
    free(b.heap);
    free(b.dist);
    free(b.par);
    free(b.closed);
    free(b.cen);
    return lm;
}

/* The tree's hook (tree.h): the distances change with any tile (tree-wide), and go with the tree; the
 * stats count their bytes. */
static void hook_touched(on_tree *t, uint32_t tile)
{
    (void)tile;
    if (t->landmarks) on_tree_landmarks_drop(t);
}
static void hook_stats(const on_tree *t, on_tree_stats *st) { st->landmark_bytes = on_tree_landmarks_bytes(t); }
static const on_tree_hook landmarks_hook = {NULL, on_tree_landmarks_drop, hook_touched, hook_stats};

on_status on_tree_landmarks_prepare(on_tree *t, int n, size_t *bytes)
{
    if (bytes) *bytes = 0;
    if (!t || n < 1 || n > ON_LM_MAX || t->no_cell_adj) return ON_FAILURE | ON_INVALID;
    if (on_tree_hook_add(t, &landmarks_hook) != 0) return ON_FAILURE | ON_NO_MEMORY;
    on_tree_landmarks_drop(t);
    on_status st;
    on_landmarks *lm = build(t, n, &st);
    if (!lm) return st;
    t->landmarks = lm;
    if (bytes) *bytes = lm->bytes;
    return ON_SUCCESS;
}

size_t on_tree_landmarks_bytes(const on_tree *t) { return t->landmarks ? t->landmarks->bytes : 0; }

uint32_t on_landmarks_find(const on_tree *t, const on_landmarks *lm, uint32_t tile, uint32_t code)
{
    if (tile >= lm->ntiles || !lm->ncell[tile]) return UINT32_MAX;
    const on_celladj *a = on_tile_celladj(t, tile);
    uint32_t i = a ? on_celladj_find(a, code) : ON_ADJ_NONE;
    return i != ON_ADJ_NONE && i < lm->ncell[tile] ? i : UINT32_MAX;
}
