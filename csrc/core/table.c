/*
 * table.c -- Robin Hood hash map from node code to blockFlag (see table.h), and the walk over the
 * cubes a tile's table describes (on_table_visit).
 */
#include "table.h"
#include "codes.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t home(uint32_t key, uint32_t cap) { return on_table_home(key, cap); }
static inline uint32_t dist(uint32_t slot, uint32_t h, uint32_t cap) { return on_table_dist(slot, h, cap); }

void on_table_init(on_table *t)
{
    memset(t, 0, sizeof *t);
}

void on_table_free(on_table *t)
{
    free(t->keys);
    free(t->vals);
    t->keys = NULL;
    t->vals = NULL;
    t->cap = t->count = 0;
}

void on_table_limit(on_table *t, const uint16_t lim[3])
{
    for (int j = 0; j < 3; j++) t->lim[j] = lim[j];
}

/* A boundary node (partly inside the bounds, partly beyond): the flags of its children wholly beyond.
 * -1 for any other node (wholly inside or wholly beyond, or a leaf). */
int on_table_outside(const on_table *t, uint32_t key)
{
    uint32_t L = on_code_layer(key);
    if (L == 0) return -1;
    uint32_t h = 1u << (L - 1), c[3] = {on_code_x(key), on_code_y(key), on_code_z(key)};
    static const unsigned upper[3] = {0xaau, 0xccu, 0xf0u}; /* children with bit j set */
    unsigned m = 0;
    int cut = 0;
    for (int j = 0; j < 3; j++) {
        uint32_t lim = t->lim[j];
        if (!lim) continue;
        if (c[j] >= lim) return -1;         /* wholly beyond */
        if (c[j] + 2 * h > lim) cut = 1;    /* the bound runs through it */
        if (c[j] + h >= lim) m |= upper[j]; /* its upper children are beyond */
    }
    return cut ? (int)m : -1;
}

uint8_t *on_table_find_store(on_table *t, uint32_t key)
{
    uint8_t *v = on_table_find(t, key);
    if (v || !on_table_limited(t) || on_table_outside(t, key) < 0) return v;
    if (on_table_insert(t, key, 0) != 0) return NULL;
    return on_table_find(t, key);
}

size_t on_table_bytes(const on_table *t)
{
    return (size_t)t->cap * (sizeof(uint32_t) + sizeof(uint8_t));
}

int on_table_slot(const on_table *t, uint32_t i, uint32_t *key, uint8_t *val)
{
    if (t->keys[i] == ON_CODE_NONE) return 0;
    *key = t->keys[i];
    *val = t->vals[i];
    return 1;
}

/* Insert into arrays known to have room; key absent. */
static void raw_insert(uint32_t *keys, uint8_t *vals, uint32_t cap, uint32_t key, uint8_t v)
{
    uint32_t i = home(key, cap), d = 0;
    for (;;) {
        uint32_t k = keys[i];
        if (k == ON_CODE_NONE) {
            keys[i] = key;
            vals[i] = v;
            return;
        }
        uint32_t kd = dist(i, home(k, cap), cap);
        if (kd < d) { /* rob the rich: the resident is closer to home than we are */
            uint8_t kv = vals[i];
            keys[i] = key;
            vals[i] = v;
            key = k;
            v = kv;
            d = kd;
        }
        if (++i == cap) i = 0;
        d++;
    }
}

static int rehash(on_table *t, uint32_t newcap)
{
    uint32_t *keys = malloc((size_t)newcap * sizeof *keys);
    uint8_t *vals = malloc(newcap ? newcap : 1);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    memset(keys, 0xff, (size_t)newcap * sizeof *keys);
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->keys[i] != ON_CODE_NONE) raw_insert(keys, vals, newcap, t->keys[i], t->vals[i]);
    free(t->keys);
    free(t->vals);
    t->keys = keys;
    t->vals = vals;
    t->cap = newcap;
    return 0;
}

static uint32_t cap_for(uint32_t n, double load)
{
    uint64_t c = (uint64_t)ceil((double)n / load);
    if (c < 1) c = 1;
    if (c > 0xfffffff0u) c = 0xfffffff0u;
    return (uint32_t)c;
}

int on_table_reserve(on_table *t, uint32_t n)
{
    if ((double)n <= (double)t->cap * ON_TABLE_MAX_LOAD && t->cap > 0) return 0;
    return rehash(t, cap_for(n, ON_TABLE_MAX_LOAD));
}

int on_table_compact(on_table *t, double load)
{
    if (load <= 0.1 || load > ON_TABLE_MAX_LOAD) load = ON_TABLE_MAX_LOAD;
    if (t->count == 0) {
        on_table_free(t);
        return 0;
    }
    uint32_t c = cap_for(t->count, load);
    if (c == t->cap) return 0;
    return rehash(t, c);
}

int on_table_insert(on_table *t, uint32_t key, uint8_t v)
{
    if ((double)(t->count + 1) > (double)t->cap * ON_TABLE_MAX_LOAD) {
        /* grow by half (not double) so a freshly grown table is not half empty */
        uint64_t want = (uint64_t)t->count + t->count / 2 + 16;
        if (want > 0xf0000000u) return -1;
        if (rehash(t, cap_for((uint32_t)want, ON_TABLE_MAX_LOAD)) != 0) return -1;
    }
    if (on_table_limited(t)) {
        int m = on_table_outside(t, key);
        if (m > 0) v |= (uint8_t)m;
    }
    raw_insert(t->keys, t->vals, t->cap, key, v);
    t->count++;
    return 0;
}

int on_table_fill(on_table *t, const uint32_t *keys, const uint8_t *vals, uint32_t n)
{
    if (n == 0) return 0;
    if (t->count != 0 || on_table_limited(t)) { /* (not an empty unbounded table: one at a time) */
        for (uint32_t i = 0; i < n; i++)
            if (on_table_insert(t, keys[i], vals[i]) != 0) return -1;
        return 0;
    }
    if (on_table_reserve(t, n) != 0) return -1;
    uint32_t cap = t->cap;
    uint32_t *cnt = calloc((size_t)cap + 1, sizeof *cnt), *ord = malloc((size_t)n * sizeof *ord);
    if (!cnt || !ord) {
        free(cnt);
        free(ord);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) cnt[home(keys[i], cap) + 1]++;
    for (uint32_t h = 0; h < cap; h++) cnt[h + 1] += cnt[h];
    for (uint32_t i = 0; i < n; i++) ord[cnt[home(keys[i], cap)]++] = i; /* by home, stable */
    /* in home order each key goes to the first free slot at or after its home: every run of slots
     * holds its keys in home order (Robin Hood's order); the few past the end wrap around below */
    uint32_t pos = 0, over = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = ord[k], h = home(keys[i], cap), slot = h > pos ? h : pos;
        if (slot >= cap) {
            ord[over++] = i; /* (k >= over: ord[k] is read already) */
            continue;
        }
        t->keys[slot] = keys[i];
        t->vals[slot] = vals[i];
        pos = slot + 1;
    }
    for (uint32_t k = 0; k < over; k++) raw_insert(t->keys, t->vals, cap, keys[ord[k]], vals[ord[k]]);
    t->count = n;
    free(cnt);
    free(ord);
    return 0;
}

int on_table_remove(on_table *t, uint32_t key)
{
    uint32_t cap = t->cap;
    if (cap == 0) return 0;
    uint32_t i = home(key, cap), d = 0;
    for (;;) {
        uint32_t k = t->keys[i];
        if (k == key) break;
        if (k == ON_CODE_NONE || dist(i, home(k, cap), cap) < d) return 0;
        if (++i == cap) i = 0;
        d++;
    }
    /* backward-shift deletion keeps probe sequences intact without tombstones */
    for (;;) {
        uint32_t j = i + 1 == cap ? 0 : i + 1;
        uint32_t kj = t->keys[j];
        if (kj == ON_CODE_NONE || dist(j, home(kj, cap), cap) == 0) {
            t->keys[i] = ON_CODE_NONE;
            break;
        }
        t->keys[i] = kj;
        t->vals[i] = t->vals[j];
        i = j;
    }
    t->count--;
    return 1;
}

/* ---- visiting every cube ---------------------------------------------------------------------- */

static int visit_rec(const on_table *tab, uint32_t tile, uint32_t code, on_cell_visit_fn fn, void *ud)
{
    uint8_t bf = (uint8_t)on_table_get(tab, code);
    for (unsigned i = 0; i < 8; i++) {
        uint32_t child = on_code_child(code, i);
        on_cell c = {tile, child};
        if (bf & (1u << i)) {
            if (fn(ud, c, 1)) return 1;
        } else if (on_code_layer(child) > 0 && on_table_get(tab, child) >= 0) {
            if (visit_rec(tab, tile, child, fn, ud)) return 1;
        } else if (fn(ud, c, 0)) {
            return 1;
        }
    }
    return 0;
}

int on_table_visit(const on_table *tab, uint8_t solid, int depth, uint32_t ti, on_cell_visit_fn fn, void *ud)
{
    uint32_t root = on_code_make(0, 0, 0, (uint32_t)depth);
    on_cell c = {ti, root};
    if (solid) return fn(ud, c, 1) ? 1 : 0;
    if (on_table_get(tab, root) < 0) return fn(ud, c, 0) ? 1 : 0;
    return visit_rec(tab, ti, root, fn, ud);
}

/* dst: a table of src's shape whose slots are still to be filled (keys and vals allocated, not
 * written: on_table_free frees it all the same; a streamer's worker copies them in slices). 0, or -1
 * on allocation failure (dst then empty). */
int on_table_alloc_like(const on_table *src, on_table *dst)
{
    *dst = *src;
    dst->keys = NULL;
    dst->vals = NULL;
    if (src->cap == 0) return 0;
    dst->keys = malloc((size_t)src->cap * sizeof *dst->keys);
    dst->vals = malloc(src->cap);
    if (!dst->keys || !dst->vals) {
        free(dst->keys);
        free(dst->vals);
        on_table_init(dst);
        return -1;
    }
    return 0;
}

/* A copy of a table, slot for slot (the same bytes when encoded or compared). 0, or -1 on allocation
 * failure (dst then empty). */
int on_table_copy(const on_table *src, on_table *dst)
{
    if (on_table_alloc_like(src, dst) != 0) return -1;
    if (src->cap == 0) return 0;
    memcpy(dst->keys, src->keys, (size_t)src->cap * sizeof *dst->keys);
    memcpy(dst->vals, src->vals, src->cap);
    return 0;
}
