/*
 * pointquery.c -- questions about points that need no search: are two points connected through free
 * space (from the free space's connected components, computed once per revision of the tree), and a
 * random free point, uniform over the free volume (Detour's findRandomPoint), optionally inside a
 * sphere. Depends on the public API (octonav.h) only.
 *
 * Components: every free cell gets an index in a hash map keyed by (tile, code); a union-find over the
 * face adjacency (on_tree_neighbors) joins them. A point's component is its cell's root. The object
 * remembers the tree's revision and answers ON_STALE once the tree has changed, so a caller rebuilds
 * it rather than trusting old connectivity.
 */
#include "octonav_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct on_components {
    uint64_t revision;
    uint64_t *key;     /* tile << 32 | code, or UINT64_MAX for an empty slot */
    uint32_t *idx;     /* cell index of the slot */
    size_t cap;        /* slots, a power of two */
    uint32_t *parent;  /* union-find over cell indices; after build, each entry is its root */
    uint32_t ncells, ncomp;
    size_t bytes;
};

#define PQ_EMPTY UINT64_MAX

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t cell_key(on_cell c) { return (uint64_t)c.tile << 32 | c.code; }

static int64_t slot_of(const on_components *m, uint64_t k)
{
    size_t j = mix(k) & (m->cap - 1);
    while (m->key[j] != PQ_EMPTY) {
        if (m->key[j] == k) return (int64_t)j;
        j = (j + 1) & (m->cap - 1);
    }
    return -(int64_t)j - 1; /* where it would go */
}

static uint32_t find(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

typedef struct count_ctx {
    size_t n;
} count_ctx;

static int count_free(void *ud, on_cell c, int blocked)
{
    (void)c;
    if (!blocked) ((count_ctx *)ud)->n++;
    return 0;
}

typedef struct fill_ctx {
    on_components *m;
    uint32_t next;
} fill_ctx;

static int index_free(void *ud, on_cell c, int blocked)
{
    fill_ctx *x = ud;
    if (blocked) return 0;
    int64_t s = slot_of(x->m, cell_key(c));
    size_t j = (size_t)(-s - 1);
    x->m->key[j] = cell_key(c);
    x->m->idx[j] = x->next++;
    return 0;
}

typedef struct join_ctx {
    const on_tree *t;
    on_components *m;
    on_cell *nb;
    size_t cap;
    on_status err;
} join_ctx;

static int join_free(void *ud, on_cell c, int blocked)
{
    join_ctx *x = ud;
    if (blocked) return 0;
    size_t count;
    for (;;) {
        on_status st = on_tree_neighbors(x->t, c, x->nb, NULL, x->cap, &count);
        if (on_ok(st)) break;
        if (!(st & ON_BUFFER_SMALL)) {
            x->err = st;
            return 1;
        }
        on_cell *nb = realloc(x->nb, (count + 64) * sizeof *nb);
        if (!nb) {
            x->err = ON_FAILURE | ON_NO_MEMORY;
            return 1;
        }
        x->nb = nb;
        x->cap = count + 64;
    }
    uint32_t a = find(x->m->parent, x->m->idx[slot_of(x->m, cell_key(c))]);
    for (size_t i = 0; i < count; i++) {
        int64_t s = slot_of(x->m, cell_key(x->nb[i]));
        if (s < 0) continue; /* cannot happen: every free cell is indexed */
        uint32_t b = find(x->m->parent, x->m->idx[s]);
        if (a == b) continue;
        if (a < b) x->m->parent[b] = a;
        else x->m->parent[a] = b, a = b;
    }
    return 0;
}

void on_components_destroy(on_components *m)
{
    if (!m) return;
    free(m->key);
    free(m->idx);
    free(m->parent);
    free(m);
}

on_status on_components_build(const on_tree *t, on_components **out)
{
    *out = NULL;
    count_ctx cn = {0};
    on_tree_visit(t, count_free, &cn);
    if (cn.n >= UINT32_MAX / 2) return ON_FAILURE | ON_NO_MEMORY;
    on_components *m = calloc(1, sizeof *m);
    if (!m) return ON_FAILURE | ON_NO_MEMORY;
    m->cap = 16;
    while (m->cap < 2 * cn.n + 16) m->cap *= 2;
    m->key = malloc(m->cap * sizeof *m->key);
    m->idx = malloc(m->cap * sizeof *m->idx);
    m->parent = malloc((cn.n + 1) * sizeof *m->parent);
    if (!m->key || !m->idx || !m->parent) {
        on_components_destroy(m);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    memset(m->key, 0xff, m->cap * sizeof *m->key);
    fill_ctx f = {m, 0};
    on_tree_visit(t, index_free, &f);
    m->ncells = f.next;
    for (uint32_t i = 0; i < m->ncells; i++) m->parent[i] = i;
    join_ctx j = {t, m, NULL, 0, ON_SUCCESS};
    on_tree_visit(t, join_free, &j);
    free(j.nb);
    if (on_failed(j.err)) {
        on_components_destroy(m);
        return j.err;
    }
    for (uint32_t i = 0; i < m->ncells; i++) {
        m->parent[i] = find(m->parent, i);
        if (m->parent[i] == i) m->ncomp++;
    }
    m->revision = on_tree_revision(t);
    m->bytes = sizeof *m + m->cap * (sizeof *m->key + sizeof *m->idx) + (cn.n + 1) * sizeof *m->parent;
    *out = m;
    return ON_SUCCESS;
}

void on_components_info(const on_components *m, size_t *components, size_t *cells, size_t *bytes)
{
    if (components) *components = m->ncomp;
    if (cells) *cells = m->ncells;
    if (bytes) *bytes = m->bytes;
}

/* The component of a free point: ON_SUCCESS and *comp, or why not. */
static on_status component_of(const on_components *m, const on_tree *t, const double p[3], uint32_t *comp)
{
    on_cell c;
    on_status st = on_tree_locate(t, p, &c);
    if (!on_ok(st)) return st;
    int64_t s = slot_of(m, cell_key(c));
    if (s < 0) return ON_FAILURE | ON_STALE;
    *comp = m->parent[m->idx[s]];
    return ON_SUCCESS;
}

on_status on_components_reachable(const on_components *m, const on_tree *t, const double a[3], const double b[3])
{
    if (on_tree_revision(t) != m->revision) return ON_FAILURE | ON_STALE;
    uint32_t ca, cb;
    on_status st = component_of(m, t, a, &ca);
    if (!on_ok(st)) return st;
    st = component_of(m, t, b, &cb);
    if (!on_ok(st)) return st;
    return ca == cb ? ON_SUCCESS : (ON_FAILURE | ON_UNREACHABLE);
}

/* ---- random free points ---------------------------------------------------------------------------- */

/* xorshift64*: a caller-owned state, so results are reproducible from a seed and no state is global. */
static double next_unit(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

typedef struct pick_ctx {
    const on_tree *t;
    double lo[3], hi[3]; /* the region sampled: the sphere's bounding box, or everything */
    int bounded;
    double *box;         /* per free cell inside the region: lo[3], hi[3], cumulative volume */
    size_t n, cap;
    on_status err;
} pick_ctx;

/* The cell's part inside the region, and its volume (0 when outside). */
static double clip(const pick_ctx *x, on_cell c, double lo[3], double hi[3])
{
    double s;
    on_tree_cell_bounds(x->t, c, lo, &s);
    double v = 1;
    for (int a = 0; a < 3; a++) {
        hi[a] = lo[a] + s;
        if (x->bounded) {
            if (lo[a] < x->lo[a]) lo[a] = x->lo[a];
            if (hi[a] > x->hi[a]) hi[a] = x->hi[a];
        }
        if (hi[a] <= lo[a]) return 0;
        v *= hi[a] - lo[a];
    }
    return v;
}

static int collect_cell(void *ud, on_cell c, int blocked)
{
    pick_ctx *x = ud;
    if (blocked) return 0;
    double lo[3], hi[3];
    double v = clip(x, c, lo, hi);
    if (v <= 0) return 0;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 256;
        double *b = realloc(x->box, cap * 7 * sizeof *b);
        if (!b) {
            x->err = ON_FAILURE | ON_NO_MEMORY;
            return 1;
        }
        x->box = b;
        x->cap = cap;
    }
    double *b = x->box + 7 * x->n;
    memcpy(b, lo, sizeof lo);
    memcpy(b + 3, hi, sizeof hi);
    b[6] = (x->n ? x->box[7 * (x->n - 1) + 6] : 0) + v;
    x->n++;
    return 0;
}

on_status on_tree_random_free(const on_tree *t, uint64_t *state, const double centre[3], double radius, size_t count,
                              double *out, size_t *written)
{
    if (written) *written = 0;
    pick_ctx x;
    memset(&x, 0, sizeof x);
    x.t = t;
    if (centre) {
        if (!(radius > 0) || !isfinite(radius)) return ON_FAILURE | ON_INVALID;
        for (int a = 0; a < 3; a++) {
            if (!isfinite(centre[a])) return ON_FAILURE | ON_INVALID;
            x.lo[a] = centre[a] - radius;
            x.hi[a] = centre[a] + radius;
        }
        x.bounded = 1;
    }
    on_tree_visit(t, collect_cell, &x);
    if (on_failed(x.err)) {
        free(x.box);
        return x.err;
    }
    double total = x.n ? x.box[7 * (x.n - 1) + 6] : 0;
    size_t got = 0;
    /* Uniform over the free space inside the box (a cell by its clipped volume, then a point in it),
     * kept when inside the sphere: the sphere fills pi/6 of its box, so a point needs about two draws
     * unless the free space in the box lies mostly in its corners; 64 misses in a row end the call
     * with what it has. */
    for (int misses = 0; total > 0 && got < count && misses < 64;) {
        double r = next_unit(state) * total;
        size_t lo = 0, hi = x.n - 1;
        while (lo < hi) { /* first cell whose cumulative volume exceeds r */
            size_t mid = (lo + hi) / 2;
            if (x.box[7 * mid + 6] > r) hi = mid;
            else lo = mid + 1;
        }
        const double *b = x.box + 7 * lo;
        double p[3], d2 = 0;
        for (int a = 0; a < 3; a++) {
            p[a] = b[a] + next_unit(state) * (b[3 + a] - b[a]);
            if (centre) d2 += (p[a] - centre[a]) * (p[a] - centre[a]);
        }
        if (centre && d2 > radius * radius) {
            misses++;
            continue;
        }
        memcpy(out + 3 * got, p, sizeof p);
        got++;
        misses = 0;
    }
    free(x.box);
    if (written) *written = got;
    return got ? ON_SUCCESS : (ON_FAILURE | ON_UNREACHABLE);
}
