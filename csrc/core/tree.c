/*
 * tree.c -- the sparse octree: tiles, insertion with immediate pruning, point location, face
 * neighbours across tiles, flood fill and statistics (see tree.h for the storage rules). What other
 * rooms keep on a tree (caches, obstacles, a streamer) is dropped through their hooks (on_tree_hook):
 * this file names none of them.
 */
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_COMPACT_LOAD 0.88

const char *on_status_string(on_status s)
{
    static const char *const names[] = {
        "out of memory", "invalid argument", "i/o error", "corrupt data", "outside the map",
        "blocked", "unreachable", "out of nodes", "budget exhausted", "tree changed during search",
        "partial result", "buffer too small", "unsupported version", "waiting for a tile to load",
        "tile file of another tile (a swapped file?)", "tile not prepared (on_tree_prepare)",
        "tile not loaded",
    };
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (s & (1u << i)) return names[i];
    if (s & ON_SUCCESS) return "success";
    if (s & ON_IN_PROGRESS) return "in progress";
    return "failure";
}

on_status on_tree_create(const on_tree_params *p, on_tree **out)
{
    *out = NULL;
    if (!p || p->depth < 1 || p->depth > ON_MAX_DEPTH) return ON_FAILURE | ON_INVALID;
    uint64_t nt = 1;
    for (int i = 0; i < 3; i++) {
        if (p->tiles[i] < 1 || p->tiles[i] > ON_MAX_TILES_PER_AXIS) return ON_FAILURE | ON_INVALID;
        nt *= (uint64_t)p->tiles[i];
        if (!(fabs(p->origin[i]) <= ON_MAX_COORD)) return ON_FAILURE | ON_INVALID;
    }
    if (nt >= (1u << 31)) return ON_FAILURE | ON_INVALID;
    if (!(p->scale >= ON_MIN_SCALE && p->scale <= ON_MAX_SCALE) || !(p->radius >= 0 && p->radius <= ON_MAX_COORD))
        return ON_FAILURE | ON_INVALID;
    on_tree *t = calloc(1, sizeof *t);
    if (!t) return ON_FAILURE | ON_NO_MEMORY;
    t->tiles = calloc((size_t)nt, sizeof *t->tiles);
    if (!t->tiles) {
        free(t);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    t->p = *p;
    t->n = 1 << p->depth;
    t->ntiles = (uint32_t)nt;
    t->inv_scale = 1.0 / p->scale;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_table_init(&t->tiles[i].table);
        t->tiles[i].loaded = 1;
        t->tiles[i].salt = 1;
        atomic_init(&t->tiles[i].los, NULL);
        atomic_init(&t->tiles[i].adj, NULL);
        atomic_init(&t->tiles[i].los_want, 0);
        atomic_init(&t->tiles[i].los_used, 0);
    }
    for (int i = 0; i < ON_TREE_HOOKS; i++) atomic_init(&t->hooks[i], NULL);
    *out = t;
    return ON_SUCCESS;
}

int on_tree_hook_add(const on_tree *t, const on_tree_hook *h)
{
    _Atomic(const on_tree_hook *) *slot = ((on_tree *)t)->hooks; /* (the slots are atomics: any thread) */
    for (int i = 0; i < ON_TREE_HOOKS; i++) {
        const on_tree_hook *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&slot[i], &none, h, memory_order_acq_rel, memory_order_acquire) ||
            none == h)
            return 0;
    }
    return -1;
}

/* The hook in slot i, or NULL past the last. */
static const on_tree_hook *hook(const on_tree *t, int i)
{
    return i < ON_TREE_HOOKS ? atomic_load_explicit(&((on_tree *)t)->hooks[i], memory_order_acquire) : NULL;
}

void on_tree_destroy(on_tree *t)
{
    if (!t) return;
    const on_tree_hook *h;
    for (int i = 0; (h = hook(t, i)); i++) /* (a streamer's workers may still read t) */
        if (h->stop) h->stop(t);
    for (int i = 0; (h = hook(t, i)); i++)
        if (h->drop) h->drop(t);
    for (uint32_t i = 0; i < t->ntiles; i++) on_table_free(&t->tiles[i].table);
    free(t->tiles);
    free(t->areas);
    free(t);
}

const on_tree_params *on_tree_get_params(const on_tree *t) { return &t->p; }
uint64_t on_tree_revision(const on_tree *t) { return t->revision; }
uint32_t on_tree_tile_count(const on_tree *t) { return t->ntiles; }

uint32_t on_tree_tile_salt(const on_tree *t, uint32_t tile)
{
    return tile < t->ntiles ? t->tiles[tile].salt : 0;
}

uint32_t on_tree_tile_index(const on_tree *t, const int ijk[3])
{
    return on_tile_index(t, ijk[0], ijk[1], ijk[2]);
}

void on_tree_tile_coords(const on_tree *t, uint32_t tile, int ijk[3])
{
    on_tile_coords(t, tile, ijk);
}

int on_tree_tiles_unchanged(const on_tree *t, const uint32_t *tiles, const uint32_t *salts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tiles[i] >= t->ntiles || t->tiles[tiles[i]].salt != salts[i]) return 0;
    return 1;
}

on_status on_tree_cell_check(const on_tree *t, on_cell c)
{
    if (c.tile >= t->ntiles || on_code_layer(c.code) > (uint32_t)t->p.depth) return ON_FAILURE | ON_INVALID;
    int64_t m[3], s;
    on_cell now;
    on_tree_cell_nav(t, c, m, &s);
    if (!on_tree_leaf_free(t, m[0], m[1], m[2], &now) || now.code != c.code || now.tile != c.tile)
        return ON_FAILURE | ON_STALE;
    return ON_SUCCESS;
}

size_t on_tree_tile_nodes(const on_tree *t, uint32_t tile)
{
    return tile < t->ntiles ? t->tiles[tile].table.count : 0;
}

void on_tree_touch(on_tree *t, uint32_t tile)
{
    t->revision++;
    t->tiles[tile].salt++;
    if (t->tiles[tile].salt == 0) t->tiles[tile].salt = 1; /* 0 means "no tile" to callers */
    const on_tree_hook *h;
    for (int i = 0; (h = hook(t, i)); i++) /* (caches built from the old contents go) */
        if (h->touched) h->touched(t, tile);
}

void on_tree_stats_get(const on_tree *t, on_tree_stats *st)
{
    memset(st, 0, sizeof *st);
    st->tiles = t->ntiles;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_tile *tl = &t->tiles[i];
        st->nodes += tl->table.count;
        st->slots += tl->table.cap;
        st->table_bytes += on_table_bytes(&tl->table);
        st->tiles_loaded += tl->loaded;
    }
    const on_tree_hook *h;
    for (int i = 0; (h = hook(t, i)); i++) /* (boxes, line-of-sight masks, cell adjacencies, landmarks) */
        if (h->stats) h->stats(t, st);
    st->bytes = st->table_bytes + (size_t)t->ntiles * sizeof(on_tile) + sizeof(on_tree);
    st->bytes_per_node = st->nodes ? (double)st->bytes / (double)st->nodes : 0;
    st->load_factor = st->slots ? (double)st->nodes / (double)st->slots : 0;
}

on_status on_tree_compact(on_tree *t, double load)
{
    if (load == 0) load = DEFAULT_COMPACT_LOAD;
    if (!(load > 0.1 && load <= ON_TABLE_MAX_LOAD)) return ON_FAILURE | ON_INVALID;
    for (uint32_t i = 0; i < t->ntiles; i++)
        if (on_table_compact(&t->tiles[i].table, load) != 0) return ON_FAILURE | ON_NO_MEMORY;
    return ON_SUCCESS;
}

/* ---- insertion ------------------------------------------------------------------------------- */

typedef struct ins_ctx {
    on_table *tab;
    on_classify_fn fn;
    void *ud;
    double base[3]; /* nav-space min corner of the tile */
} ins_ctx;

/* Free every stored descendant of a stored node (its blockFlag bits are left to the caller). */
static void drop_subtree(on_table *tab, uint32_t code)
{
    uint8_t *v = on_table_find(tab, code);
    if (!v) return;
    uint8_t bf = *v;
    on_table_remove(tab, code);
    if (on_code_layer(code) <= 1) return; /* children are leaves: never stored */
    for (unsigned i = 0; i < 8; i++)
        if (!(bf & (1u << i))) drop_subtree(tab, on_code_child(code, i));
}

static int has_stored_child(on_table *tab, uint32_t code)
{
    if (on_code_layer(code) <= 1) return 0;
    for (unsigned i = 0; i < 8; i++)
        if (on_table_find(tab, on_code_child(code, i))) return 1;
    return 0;
}

/* Insert into the subtree of a stored node. Returns 0, or -1 when an allocation failed (the tree
 * stays valid: everything inserted so far is pruned and flagged as usual). */
static int insert_rec(ins_ctx *c, uint32_t code)
{
    uint32_t cl = on_code_layer(code) - 1;
    double cs = (double)(1u << cl);
    /* this node's flags stay in a local: only this loop changes them (recursion and subtree drops
     * touch descendants, table moves keep the value under its key), so they are written back once */
    uint8_t bf = *on_table_find(c->tab, code);
    int rc = 0;
    for (unsigned i = 0; i < 8 && rc == 0; i++) {
        if (bf & (1u << i)) continue;
        uint32_t child = on_code_child(code, i);
        double mn[3] = {c->base[0] + on_code_x(child), c->base[1] + on_code_y(child), c->base[2] + on_code_z(child)};
        int hit = c->fn(c->ud, mn, cs);
        if (hit == ON_MISS) continue;
        if (hit == ON_FULL_HIT || cl == 0) {
            if (cl > 0) drop_subtree(c->tab, child);
            bf |= (uint8_t)(1u << i);
            continue;
        }
        if (!on_table_find(c->tab, child) && on_table_insert(c->tab, child, 0) != 0) {
            rc = -1;
            break;
        }
        rc = insert_rec(c, child);
        uint8_t cv = *on_table_find(c->tab, child);
        if (cv == 0xff) {
            on_table_remove(c->tab, child);
            bf |= (uint8_t)(1u << i);
        } else if (cv == 0 && !has_stored_child(c->tab, child)) {
            on_table_remove(c->tab, child); /* only reachable after a failed allocation below */
        }
    }
    *on_table_find(c->tab, code) = bf;
    return rc;
}

on_status on_tree_insert_tile(on_tree *t, uint32_t ti, on_classify_fn fn, void *ud)
{
    on_tile *tl = &t->tiles[ti];
    if (tl->solid || !tl->loaded) return ON_SUCCESS;
    int ijk[3];
    on_tile_coords(t, ti, ijk);
    ins_ctx c = {&tl->table, fn, ud, {(double)ijk[0] * t->n, (double)ijk[1] * t->n, (double)ijk[2] * t->n}};
    int hit = fn(ud, c.base, (double)t->n);
    if (hit == ON_MISS) return ON_SUCCESS;
    on_tree_touch(t, ti);
    uint32_t root = on_root_code(t);
    if (hit == ON_FULL_HIT) {
        on_table_free(&tl->table);
        tl->solid = 1;
        return ON_SUCCESS;
    }
    if (!on_table_find(&tl->table, root) && on_table_insert(&tl->table, root, 0) != 0)
        return ON_FAILURE | ON_NO_MEMORY;
    int rc = insert_rec(&c, root);
    uint8_t rv = *on_table_find(&tl->table, root);
    if (rv == 0xff) {
        on_table_free(&tl->table);
        tl->solid = 1;
    } else if (rv == 0 && !has_stored_child(&tl->table, root)) {
        on_table_remove(&tl->table, root);
    }
    return rc == 0 ? ON_SUCCESS : (ON_FAILURE | ON_NO_MEMORY);
}

static int clampi(double v, int lo, int hi)
{
    if (!(v >= lo)) return lo; /* NaN too */
    if (v > hi) return hi;
    return (int)v;
}

int on_tree_tile_range(const on_tree *t, const double lo[3], const double hi[3], int a[3], int b[3])
{
    int in = 1;
    for (int i = 0; i < 3; i++) {
        double ext = (double)t->p.tiles[i] * t->n;
        if (!(hi[i] >= 0) || !(lo[i] <= ext)) in = 0; /* wholly outside (or NaN) */
        /* geometry starting exactly on a tile border still touches the last leaves of the tile below */
        a[i] = clampi(ceil(lo[i] / t->n) - 1, 0, t->p.tiles[i] - 1);
        b[i] = clampi(floor(hi[i] / t->n), 0, t->p.tiles[i] - 1);
    }
    return in;
}

on_status on_tree_insert(on_tree *t, const double lo[3], const double hi[3], on_classify_fn fn, void *ud)
{
    int a[3], b[3];
    if (!on_tree_tile_range(t, lo, hi, a, b)) return ON_SUCCESS;
    for (int k = a[2]; k <= b[2]; k++)
        for (int j = a[1]; j <= b[1]; j++)
            for (int i = a[0]; i <= b[0]; i++) {
                on_status s = on_tree_insert_tile(t, on_tile_index(t, i, j, k), fn, ud);
                if (on_failed(s)) return s;
            }
    return ON_SUCCESS;
}

/* ---- lookups ------------------------------------------------------------------------------- */

void on_lcache_reset(on_lcache *c, const on_tree *t)
{
    c->revision = on_tree_revision(t);
    memset(c->key, 0xff, sizeof c->key); /* tile 0xffffffff does not exist */
}

void on_lcache_check(on_lcache *c, const on_tree *t)
{
    if (c && c->revision != on_tree_revision(t)) on_lcache_reset(c, t);
}

/* ---- point location -------------------------------------------------------------------------- */

/* Walk down from a stored node (at `layer`, value v >= 0; -1: not stored) to the leaf (lx, ly, lz) of
 * tile ti, through the lookup cache lc (may be NULL). */
static int descend(const on_tree *t, on_lcache *lc, uint32_t ti, uint32_t layer, uint32_t lx, uint32_t ly,
                   uint32_t lz, int v, on_cell *cell)
{
    uint32_t code = on_code_at(lx, ly, lz, layer);
    while (v >= 0) {
        layer--;
        unsigned ci = ((lx >> layer) & 1u) | (((ly >> layer) & 1u) << 1) | (((lz >> layer) & 1u) << 2);
        if (v & (1 << ci)) return 0;
        code = on_code_at(lx, ly, lz, layer);
        if (layer == 0) break;
        v = on_lcache_lookup(t, lc, ti, code);
    }
    if (cell) {
        cell->tile = ti;
        cell->code = code;
    }
    return 1;
}

int on_tree_leaf_free(const on_tree *t, int64_t x, int64_t y, int64_t z, on_cell *cell)
{
    return on_tree_leaf_free_cached(t, NULL, x, y, z, cell);
}

int on_tree_leaf_free_cached(const on_tree *t, on_lcache *lc, int64_t x, int64_t y, int64_t z, on_cell *cell)
{
    int64_t n = t->n;
    if (x < 0 || y < 0 || z < 0 || x >= n * t->p.tiles[0] || y >= n * t->p.tiles[1] || z >= n * t->p.tiles[2])
        return 0;
    uint32_t ti = on_tile_index(t, (int)(x / n), (int)(y / n), (int)(z / n));
    const on_tile *tl = &t->tiles[ti];
    if (tl->solid || !tl->loaded) return 0;
    uint32_t layer = (uint32_t)t->p.depth;
    return descend(t, lc, ti, layer, (uint32_t)(x % n), (uint32_t)(y % n), (uint32_t)(z % n),
                   on_lcache_lookup(t, lc, ti, on_root_code(t)), cell);
}

int on_tree_leaf_free_near(const on_tree *t, on_lcache *lc, on_cell near, int64_t x, int64_t y, int64_t z,
                           on_cell *cell)
{
    int64_t n = t->n;
    int ijk[3];
    on_tile_coords(t, near.tile, ijk);
    int64_t lx = x - (int64_t)ijk[0] * n, ly = y - (int64_t)ijk[1] * n, lz = z - (int64_t)ijk[2] * n;
    uint32_t L = on_code_layer(near.code);
    if (lx < 0 || ly < 0 || lz < 0 || lx >= n || ly >= n || lz >= n || L == (uint32_t)t->p.depth)
        return on_tree_leaf_free_cached(t, lc, x, y, z, cell);
    /* the lowest common ancestor of `near` and the leaf is stored: every strict ancestor of a free
     * cell is */
    uint32_t diff = ((uint32_t)lx ^ on_code_x(near.code)) | ((uint32_t)ly ^ on_code_y(near.code)) |
                    ((uint32_t)lz ^ on_code_z(near.code));
    uint32_t top = L;
    while ((diff >> top) != 0) top++;
    uint32_t layer = top > L + 1 ? top : L + 1; /* the lowest layer where both agree */
    if (layer > (uint32_t)t->p.depth) layer = (uint32_t)t->p.depth;
    int v = on_lcache_lookup(t, lc, near.tile, on_code_at((uint32_t)lx, (uint32_t)ly, (uint32_t)lz, layer));
    return descend(t, lc, near.tile, layer, (uint32_t)lx, (uint32_t)ly, (uint32_t)lz, v, cell);
}

on_status on_tree_locate(const on_tree *t, const double p[3], on_cell *cell)
{
    double n[3];
    on_to_nav(t, p, n);
    int64_t q[3];
    for (int i = 0; i < 3; i++) {
        if (isnan(n[i])) return ON_FAILURE | ON_INVALID;
        if (n[i] < 0 || n[i] >= (double)t->p.tiles[i] * t->n) return ON_FAILURE | ON_OUTSIDE;
        q[i] = (int64_t)floor(n[i]);
    }
    int64_t side = t->n;
    uint32_t ti = on_tile_index(t, (int)(q[0] / side), (int)(q[1] / side), (int)(q[2] / side));
    if (!t->tiles[ti].loaded) { /* not known to be blocked: say which tile it waits for */
        if (cell) {
            cell->tile = ti;
            cell->code = ON_CODE_NONE;
        }
        return ON_FAILURE | ON_UNLOADED;
    }
    on_cell c;
    if (!on_tree_leaf_free(t, q[0], q[1], q[2], &c)) return ON_FAILURE | ON_BLOCKED;
    if (cell) *cell = c;
    return ON_SUCCESS;
}

void on_tree_cell_nav(const on_tree *t, on_cell c, int64_t min[3], int64_t *size)
{
    int ijk[3];
    on_tile_coords(t, c.tile, ijk);
    min[0] = (int64_t)ijk[0] * t->n + on_code_x(c.code);
    min[1] = (int64_t)ijk[1] * t->n + on_code_y(c.code);
    min[2] = (int64_t)ijk[2] * t->n + on_code_z(c.code);
    if (size) *size = (int64_t)1 << on_code_layer(c.code);
}

void on_tree_cell_bounds(const on_tree *t, on_cell c, double min[3], double *size)
{
    int64_t m[3], s;
    on_tree_cell_nav(t, c, m, &s);
    for (int i = 0; i < 3; i++) min[i] = t->p.origin[i] + (double)m[i] * t->p.scale;
    if (size) *size = (double)s * t->p.scale;
}

/* ---- neighbours ------------------------------------------------------------------------------ */

typedef struct nb_out {
    on_cell *out;
    uint8_t *faces;
    size_t cap, count;
} nb_out;

static inline void nb_emit(nb_out *o, uint32_t tile, uint32_t code, int face)
{
    if (o->count < o->cap) {
        o->out[o->count].tile = tile;
        o->out[o->count].code = code;
        if (o->faces) o->faces[o->count] = (uint8_t)face;
    }
    o->count++;
}

/* A lookup that missed the cache: read the table and remember it (out of line: the neighbour walk's
 * lookups mostly hit). */
static __attribute__((noinline)) int nb_miss(const on_tree *t, on_lcache *lc, size_t i, uint64_t key)
{
    lc->key[i] = key;
    lc->val[i] = (int16_t)on_table_get(&t->tiles[key >> 32].table, (uint32_t)key);
    return lc->val[i];
}

/* on_lcache_lookup with its hit inline (key: tile << 32 | code); the neighbour walk makes about a
 * dozen lookups an expansion, and the call around the hit cost more than the hit. */
static inline __attribute__((always_inline)) int nb_lookup(const on_tree *t, on_lcache *lc, uint64_t key)
{
    if (!lc) return on_table_get(&t->tiles[key >> 32].table, (uint32_t)key);
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - ON_LCACHE_BITS));
    if (lc->key[i] == key) return lc->val[i];
    return nb_miss(t, lc, i, key);
}

/* Emit the free descendants of stored node `code` (value bf) of tile key `tk` (tile << 32) that touch
 * its side `hi` of `axis`, in child order. */
static void nb_collect(const on_tree *t, on_lcache *lc, uint64_t tk, uint32_t code, int bf, int axis, int hi,
                       int face, nb_out *o)
{
    uint32_t cl = on_code_layer(code) - 1;
    for (unsigned i = 0; i < 8; i++) {
        if ((int)((i >> axis) & 1u) != hi || (bf & (1 << i))) continue;
        uint32_t child = on_code_child(code, i);
        int cv = cl > 0 ? nb_lookup(t, lc, tk | child) : -1;
        if (cv >= 0)
            nb_collect(t, lc, tk, child, cv, axis, hi, face, o);
        else
            nb_emit(o, (uint32_t)(tk >> 32), child, face);
    }
}

on_status on_tree_neighbors(const on_tree *t, on_cell c, on_cell *out, uint8_t *faces, size_t cap, size_t *count)
{
    return on_tree_neighbors_cached(t, NULL, c, out, faces, cap, count);
}

/* Per face: the neighbour region of c's size across it; walk down from the lowest common ancestor
 * (stored, since c is free below it; across a tile border, the other tile's root) to the first free
 * cell or blocked child on the way, or at c's layer collect the region's free descendants on the
 * face. A node's code at a layer is the leaf code with the low bits of each coordinate cleared. */
static on_status neighbors(const on_tree *t, on_lcache *lc, on_cell c, unsigned walk, on_cell *out, uint8_t *faces,
                           size_t cap, size_t *count);

on_status on_tree_neighbors_cached(const on_tree *t, on_lcache *lc, on_cell c, on_cell *out, uint8_t *faces,
                                   size_t cap, size_t *count)
{
    return neighbors(t, lc, c, 63u, out, faces, cap, count);
}

on_status on_tree_neighbors_skip(const on_tree *t, on_lcache *lc, on_cell c, int skip, on_cell *out, uint8_t *faces,
                                 size_t cap, size_t *count)
{
    return neighbors(t, lc, c, skip >= 0 && skip < 6 ? 63u & ~(1u << skip) : 63u, out, faces, cap, count);
}

on_status on_tree_neighbors_face(const on_tree *t, on_lcache *lc, on_cell c, int face, on_cell *out, uint8_t *faces,
                                 size_t cap, size_t *count)
{
    if (face < 0 || face > 5) return ON_FAILURE | ON_INVALID;
    return neighbors(t, lc, c, 1u << face, out, faces, cap, count);
}

/* (walk: bit f set for each face f to walk) */
static on_status neighbors(const on_tree *t, on_lcache *lc, on_cell c, unsigned walk, on_cell *out, uint8_t *faces,
                           size_t cap, size_t *count)
{
    nb_out o = {out, faces, cap, 0};
    if (c.tile >= t->ntiles) return ON_FAILURE | ON_INVALID;
    on_lcache_check(lc, t);
    uint32_t L = on_code_layer(c.code), s = 1u << L, n = (uint32_t)t->n, depth = (uint32_t)t->p.depth;
    uint32_t loc[3] = {on_code_x(c.code), on_code_y(c.code), on_code_z(c.code)};
    uint32_t leaf = c.code & ~15u; /* c's min corner as a layer-0 code */
    int ijk[3] = {-1, 0, 0};
    for (int face = 0; face < 6; face++) {
        if (!(walk & (1u << face))) continue;
        int axis = face >> 1, dir = face & 1;
        uint32_t p = loc[axis], np, layer;
        uint32_t ti = c.tile;
        if (dir ? p + s < n : p >= s) {
            np = dir ? p + s : p - s;
            layer = (uint32_t)(32 - __builtin_clz(p ^ np)); /* the LCA's layer: the first where both agree */
        } else { /* across the tile border: from the other tile's root */
            if (ijk[0] < 0) on_tile_coords(t, c.tile, ijk);
            int nt = ijk[axis] + (dir ? 1 : -1);
            if (nt < 0 || nt >= t->p.tiles[axis]) continue;
            ijk[axis] = nt;
            ti = on_tile_index(t, ijk[0], ijk[1], ijk[2]);
            ijk[axis] = nt + (dir ? -1 : 1);
            const on_tile *tl = &t->tiles[ti];
            if (tl->solid || !tl->loaded) continue;
            np = dir ? 0 : n - s;
            layer = depth;
        }
        uint32_t nleaf = on_code_with_axis(leaf, axis, np);
        uint64_t tk = (uint64_t)ti << 32;
        uint32_t node = on_code_at_packed(nleaf, layer);
        int v = nb_lookup(t, lc, tk | node);
        if (v < 0) { /* only the root can be missing here: the whole tile is one free cell */
            nb_emit(&o, ti, node, face);
            continue;
        }
        uint32_t x = on_code_x(nleaf), y = on_code_y(nleaf), z = on_code_z(nleaf);
        for (;;) {
            if (layer == L) { /* the same-size region is subdivided: its free descendants on the face */
                nb_collect(t, lc, tk, node, v, axis, !dir, face, &o);
                break;
            }
            layer--;
            unsigned ci = ((x >> layer) & 1u) | (((y >> layer) & 1u) << 1) | (((z >> layer) & 1u) << 2);
            if (v & (1 << ci)) break; /* blocked */
            node = on_code_at_packed(nleaf, layer);
            if (layer == 0 || (v = nb_lookup(t, lc, tk | node)) < 0) {
                nb_emit(&o, ti, node, face); /* a free cell at least as large as c */
                break;
            }
        }
    }
    *count = o.count;
    return o.count > cap ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}

on_status on_tree_face_cells(const on_tree *t, uint32_t tile, int face, on_cell *out, size_t cap, size_t *count)
{
    nb_out o = {out, NULL, cap, 0};
    *count = 0;
    if (tile >= t->ntiles || face < 0 || face > 5) return ON_FAILURE | ON_INVALID;
    const on_tile *tl = &t->tiles[tile];
    if (tl->solid || !tl->loaded) return ON_SUCCESS;
    uint32_t root = on_root_code(t);
    int v = on_lcache_lookup(t, NULL, tile, root);
    if (v < 0) nb_emit(&o, tile, root, face);
    else nb_collect(t, NULL, tile, root, v, face >> 1, face & 1, face, &o);
    *count = o.count;
    return o.count > cap ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}

/* ---- visiting every cube --------------------------------------------------------------------- */

int on_tree_visit_tile(const on_tree *t, uint32_t ti, on_cell_visit_fn fn, void *ud)
{
    const on_tile *tl = &t->tiles[ti];
    if (!tl->loaded) return 0;
    return on_table_visit(&tl->table, tl->solid, t->p.depth, ti, fn, ud);
}

on_status on_tree_visit(const on_tree *t, on_cell_visit_fn fn, void *ud)
{
    for (uint32_t ti = 0; ti < t->ntiles; ti++)
        if (on_tree_visit_tile(t, ti, fn, ud)) break;
    return ON_SUCCESS;
}

/* ---- blocking cells, fill, clear ------------------------------------------------------------- */

on_status on_tree_block_cell(on_tree *t, on_cell c)
{
    on_tile *tl = &t->tiles[c.tile];
    on_tree_touch(t, c.tile);
    uint32_t code = c.code;
    for (;;) {
        if (on_code_layer(code) == (uint32_t)t->p.depth) {
            on_table_free(&tl->table);
            tl->solid = 1;
            return ON_SUCCESS;
        }
        drop_subtree(&tl->table, code);
        uint32_t parent = on_code_parent(code);
        uint8_t *v = on_table_find_store(&tl->table, parent);
        if (!v) return ON_FAILURE | ON_INVALID;
        *v |= (uint8_t)(1u << on_code_child_index(code));
        if (*v != 0xff) return ON_SUCCESS;
        code = parent;
    }
}

void on_tree_install_tile(on_tree *t, uint32_t tile, on_table *tab, uint8_t solid)
{
    on_tile *tl = &t->tiles[tile];
    on_table_free(&tl->table);
    tl->table = *tab;
    on_table_init(tab);
    tl->solid = solid;
    tl->loaded = 1;
    on_tree_touch(t, tile);
}

void on_tree_unload_tile(on_tree *t, uint32_t tile)
{
    on_tile *tl = &t->tiles[tile];
    on_table_free(&tl->table);
    tl->solid = 0;
    tl->loaded = 0;
    on_tree_touch(t, tile); /* (the box sets' hook frees an unloaded tile's) */
}

on_status on_tree_clear_tile(on_tree *t, uint32_t tile)
{
    if (tile >= t->ntiles) return ON_FAILURE | ON_INVALID;
    on_table_free(&t->tiles[tile].table);
    t->tiles[tile].solid = 0;
    on_tree_touch(t, tile);
    return ON_SUCCESS;
}
