/*
 * route_boxes.c -- the box sets planners build for their joins, one cache per world graph shared by
 * its planners (see route_boxes.h): a short list of entries, each pinned by the calls that read it,
 * dropped least recently used first (not while pinned) to keep the bytes under the bound.
 */
#include "route_boxes.h"
#include "route_plan.h"

#include <stdlib.h>
#include <string.h>

struct on_route_boxent {
    const on_tree *tree;
    const void *keys;      /* the tile's table slots when made (a tree freed and another at its address) */
    uint32_t tile, salt;
    int bdepth;            /* the lazy set's block side (log2), 0 for a set built whole */
    on_boxset *own;        /* a set built whole (tiles of at most 64 leaves a side), or */
    on_boxlazy *lazy;      /* a set built block by block */
    uint64_t gen, used;
    unsigned pins : 31;
    unsigned valid : 1;    /* 0: stale (its tile changed or was removed): never handed out again */
    unsigned holds;        /* planners whose join stands suspended over it (on_route_boxes_hold) */
};

struct on_route_boxes {
    on_route_boxent **e;
    size_t n, cap;
    size_t max_bytes;
    uint64_t uses, gens;
};

/* A lazy set's bytes, as on_boxlazy_block counts them (boxes.c), also before its first block. */
static size_t lazy_bytes(const on_boxlazy *z)
{
    size_t nblk = (size_t)z->set.nb * z->set.nb * z->set.nb;
    return sizeof *z + (size_t)z->set.nbox * (sizeof(on_box) + sizeof(uint32_t)) + z->nbface * sizeof(uint32_t) +
           nblk * (sizeof *z->blk + sizeof *z->slot) + nblk / 8;
}

static size_t ent_bytes(const on_route_boxent *x)
{
    return sizeof *x + sizeof x + (x->own ? x->own->bytes : 0) + (x->lazy ? lazy_bytes(x->lazy) : 0);
}

static void ent_free(on_route_boxent *x)
{
    on_boxset_free(x->own);
    if (x->lazy) on_boxlazy_free(x->lazy);
    free(x->lazy);
    free(x);
}

/* Remove entry i (freed). */
static void drop(on_route_boxes *c, size_t i)
{
    ent_free(c->e[i]);
    c->e[i] = c->e[--c->n];
}

size_t on_route_boxes_bytes(const on_route_boxes *c)
{
    if (!c) return 0;
    size_t b = sizeof *c + c->cap * sizeof *c->e;
    for (size_t i = 0; i < c->n; i++) b += ent_bytes(c->e[i]);
    return b;
}

size_t on_route_boxes_sets(const on_route_boxes *c) { return c ? c->n : 0; }
size_t on_route_boxes_limit(const on_route_boxes *c) { return c ? c->max_bytes : 0; }

/* Stale sets not pinned freed; then, while the sets' bytes plus `need` pass the bound, the least
 * recently used set not pinned: freed, or (keep, when it is a lazy set of keep's depth and block side)
 * taken out of the list and returned, cleared, for reuse (its block records already allocated). */
static on_route_boxent *trim(on_route_boxes *c, size_t need, int depth, int bdepth, int keep)
{
    for (size_t i = 0; i < c->n;)
        if (!c->e[i]->valid && !c->e[i]->pins && !c->e[i]->holds) drop(c, i);
        else i++;
    size_t total = 0;
    for (size_t i = 0; i < c->n; i++) total += ent_bytes(c->e[i]);
    while (total + need > c->max_bytes) {
        size_t v = c->n;
        for (size_t i = 0; i < c->n; i++)
            if (!c->e[i]->pins && !c->e[i]->holds && (v == c->n || c->e[i]->used < c->e[v]->used)) v = i;
        if (v == c->n) break; /* (every set pinned or held: over the bound until they are let go) */
        on_route_boxent *x = c->e[v];
        total -= ent_bytes(x);
        if (keep && x->lazy && x->lazy->bdepth == bdepth && x->lazy->depth == depth) {
            c->e[v] = c->e[--c->n];
            on_boxset_free(x->own);
            on_boxlazy_clear(x->lazy);
            return x;
        }
        drop(c, v);
    }
    return NULL;
}

on_status on_route_boxes_create(size_t max_bytes, on_route_boxes **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return ON_FAILURE | ON_NO_MEMORY;
    (*out)->max_bytes = max_bytes;
    return ON_SUCCESS;
}

void on_route_boxes_destroy(on_route_boxes *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) ent_free(c->e[i]);
    free(c->e);
    free(c);
}

void on_route_boxes_set_limit(on_route_boxes *c, size_t max_bytes)
{
    if (!c) return;
    c->max_bytes = max_bytes;
    (void)trim(c, 0, 0, 0, 0);
}

void on_route_boxes_unpin(on_route_boxes *c, on_route_boxent *e)
{
    if (!c || !e || !e->pins) return;
    if (--e->pins == 0) (void)trim(c, 0, 0, 0, 0);
}

void on_route_boxes_hold(on_route_boxes *c, on_route_boxent **held, on_route_boxent *const *pinned, int n, uint64_t gen)
{
    on_route_boxent *x = NULL;
    for (int i = 0; i < n && gen; i++)
        if (pinned[i] && pinned[i]->gen == gen) x = pinned[i];
    if (!c || *held == x) return;
    if (x) x->holds++;
    on_route_boxent *old = *held;
    *held = x;
    if (old && old->holds && --old->holds == 0 && !old->pins) (void)trim(c, 0, 0, 0, 0);
}

on_status on_route_boxes_get(on_route_boxes *c, const on_tree *t, uint32_t tile, int bdepth, on_route_boxent **e,
                             const on_boxset **out, on_boxlazy **lz, uint64_t *gen)
{
    *e = NULL;
    *out = NULL;
    *lz = NULL;
    *gen = 0;
    const on_tile *tt = &t->tiles[tile];
    int depth = (int)t->p.depth, lazy = depth > 6; /* (more than 64 leaves a side: block by block) */
    int bd = lazy ? bdepth : 0;
    c->uses++;
    on_route_boxent *x = NULL;
    for (size_t i = 0; i < c->n && !x; i++) {
        on_route_boxent *y = c->e[i];
        if (!y->valid || y->tree != t || y->tile != tile) continue;
        if (y->salt != tt->salt || y->keys != (const void *)tt->table.keys) y->valid = 0; /* (the tile changed) */
        else if (y->bdepth == bd) x = y;
    }
    if (x) {
        x->pins++;
        (void)trim(c, 0, 0, 0, 0); /* (the sets grew since: the others that no longer fit) */
    } else {
        size_t need = sizeof *x + sizeof x;
        if (lazy) { /* a fresh lazy set's block records */
            size_t nb = ((size_t)1 << depth) >> bd, nblk = nb * nb * nb;
            need += sizeof(on_boxlazy) + nblk * (sizeof(on_boxblock) + sizeof(uint32_t)) + nblk / 8;
        }
        x = trim(c, need, depth, bd, lazy);
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 8;
            on_route_boxent **a = realloc(c->e, cap * sizeof *a);
            if (!a) {
                if (x) ent_free(x);
                return ON_FAILURE | ON_NO_MEMORY;
            }
            c->e = a;
            c->cap = cap;
        }
        if (!x) {
            x = calloc(1, sizeof *x);
            if (!x) return ON_FAILURE | ON_NO_MEMORY;
            if (lazy) {
                x->lazy = calloc(1, sizeof *x->lazy);
                if (!x->lazy || on_boxlazy_init_blocks(x->lazy, depth, bd)) {
                    free(x->lazy);
                    free(x);
                    return ON_FAILURE | ON_NO_MEMORY;
                }
            }
        }
        x->own = NULL;
        if (!lazy) {
            on_status st = on_boxset_build(&tt->table, tt->solid, depth, &x->own);
            if (on_failed(st)) {
                ent_free(x);
                return st;
            }
        }
        x->tree = t;
        x->tile = tile;
        x->salt = tt->salt;
        x->keys = tt->table.keys;
        x->bdepth = bd;
        x->valid = 1;
        x->pins = 1;
        x->gen = ++c->gens;
        c->e[c->n++] = x;
    }
    x->used = c->uses;
    *e = x;
    *gen = x->gen;
    if (x->own) {
        *out = x->own;
        return ON_SUCCESS;
    }
    x->lazy->tab = &tt->table; /* (the same contents: same salt) */
    x->lazy->solid = tt->solid;
    *lz = x->lazy;
    *out = &x->lazy->set;
    return ON_SUCCESS;
}

uint64_t on_route_boxes_gens(const on_route_boxes *c) { return c ? c->gens : 0; }

void on_route_set_boxes(on_route *r, on_route_boxes *c)
{
    if (!r) return;
    on_route_boxes_hold(r->boxes, &r->bhold, NULL, 0, 0); /* (its suspended join's set let go) */
    for (int i = 0; i < 2; i++) {
        on_route_boxes_unpin(r->boxes, r->bpin[i]);
        r->bpin[i] = NULL;
    }
    for (int i = 0; i < ROUTE_BOX_CACHE; i++) { /* (its own sets: not read again while it shares) */
        on_boxset_free(r->bc[i].own);
        if (r->bc[i].lazy) on_boxlazy_free(r->bc[i].lazy);
        free(r->bc[i].lazy);
        memset(&r->bc[i], 0, sizeof r->bc[i]);
    }
    r->boxes = c;
    r->jsusp = 0; /* (a join under way starts its endpoint's search again, over the new cache's set) */
}
