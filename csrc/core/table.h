/*
 * table.h -- one tile's node table: an open-addressing hash map from node code to blockFlag.
 *
 * Robin Hood linear probing over two parallel arrays (4-byte keys, 1-byte values), so a slot costs
 * 5 bytes and the table runs full up to a 0.9 load factor; the capacity need not be a power of two
 * (the hash is mapped onto it by a multiply-shift), so a table built for a known node count (a file
 * being loaded, a bake being compacted) wastes little. Deletion shifts back, no tombstones.
 *
 * A map's bounds (on_table_limit): a table may know that its tile holds map only below lim[j] leaves
 * along axis j (a voxel map whose size is not a multiple of the tile). Beyond is blocked, and costs no
 * node: a node partly inside and partly outside (a "boundary node") reads as stored with its wholly
 * outside children flagged even when no slot holds it, and the value of a boundary node that is
 * stored has those flags too (on_table_insert adds them). So readers (on_table_get) see the tree a
 * blocked margin box would have built, node for node, with none of the margin stored.
 */
#ifndef OCTONAV_TABLE_H
#define OCTONAV_TABLE_H

#include "octonav_core.h"

#include <stddef.h>
#include <stdint.h>

typedef struct on_table {
    uint32_t *keys;   /* ON_CODE_NONE marks an empty slot */
    uint8_t *vals;
    uint32_t cap;     /* slots */
    uint32_t count;   /* stored nodes */
    uint16_t lim[3];  /* the map's extent in this tile per axis, in leaves (0: the whole tile) */
} on_table;

#define ON_TABLE_MAX_LOAD ON_MAX_LOAD_FACTOR /* (octonav.h: what compact accepts) */

void on_table_init(on_table *t);
/* Free the slots (the table is empty after; its bounds stay). */
void on_table_free(on_table *t);
/* A copy of a table, slot for slot (the same bytes when encoded or compared). 0, or -1 on allocation
 * failure (dst then empty). */
int on_table_copy(const on_table *src, on_table *dst);
/* A table of src's shape, its slots allocated and not yet written (filled by the caller, e.g. in slices). */
int on_table_alloc_like(const on_table *src, on_table *dst);
/* Set the bounds (lim[j] in 1..tile size, or 0 for none along j); on an empty table only. */
void on_table_limit(on_table *t, const uint16_t lim[3]);
static inline int on_table_limited(const on_table *t) { return (t->lim[0] | t->lim[1] | t->lim[2]) != 0; }
/* Make room for n entries at most ON_TABLE_MAX_LOAD full; 0 on success, -1 on allocation failure
 * (the table is left as it was). */
int on_table_reserve(on_table *t, uint32_t n);
/* Shrink (or grow) to the smallest capacity that holds count entries at the target load. */
int on_table_compact(on_table *t, double load);
/* A key's home slot: a multiplicative (Fibonacci) hash mapped onto [0, cap) without a modulo
 * (Lemire's multiply-shift); and how far slot lies past home h. */
static inline uint32_t on_table_home(uint32_t key, uint32_t cap)
{
    return (uint32_t)(((uint64_t)(uint32_t)(key * 0x9E3779B1u) * cap) >> 32);
}
static inline uint32_t on_table_dist(uint32_t slot, uint32_t h, uint32_t cap)
{
    return slot >= h ? slot - h : slot + cap - h;
}

/* Pointer to the value of a stored key, or NULL. Valid until the next insert or remove. For writers:
 * a boundary node no slot holds is not found (on_table_get reads it). (Inline: line of sight and
 * every search step look nodes up.) */
static inline uint8_t *on_table_find(const on_table *t, uint32_t key)
{
    uint32_t cap = t->cap;
    if (cap == 0) return NULL;
    uint32_t i = on_table_home(key, cap), d = 0;
    /* The first slots by key alone: most keys lie within a few slots of home (mean 4-5 at a 0.88
     * load), and an empty slot ends every search (linear probing). Then Robin Hood's early end: a
     * resident nearer its home than we are from ours means the key is absent. */
    for (; d < 4; d++) {
        uint32_t k = t->keys[i];
        if (k == key) return &t->vals[i];
        if (k == 0xffffffffu) return NULL;
        if (++i == cap) i = 0;
    }
    for (;;) {
        uint32_t k = t->keys[i];
        if (k == key) return &t->vals[i];
        /* (an empty slot's key, ON_CODE_NONE, is farther from no home than 0: checked apart) */
        if (k == 0xffffffffu || on_table_dist(i, on_table_home(k, cap), cap) < d) return NULL;
        if (++i == cap) i = 0;
        d++;
    }
}
/* A boundary node's outside flags (table.h's header), or -1 when key is no boundary node. */
int on_table_outside(const on_table *t, uint32_t key);
/* What readers see: the value of key, stored or a boundary node's, or -1 (not stored). A miss looks
 * for a bound through the node (lim in (min, min + size) along an axis) before on_table_outside. */
static inline int on_table_get(const on_table *t, uint32_t key)
{
    const uint8_t *v = on_table_find(t, key);
    if (v) return *v;
    if (!on_table_limited(t)) return -1;
    uint32_t s = 1u << (key & 15u), x = (key >> 4) & 511u, y = (key >> 13) & 511u, z = (key >> 22) & 511u;
    if ((uint32_t)(t->lim[0] - x - 1) < s - 1 || (uint32_t)(t->lim[1] - y - 1) < s - 1 ||
        (uint32_t)(t->lim[2] - z - 1) < s - 1)
        return on_table_outside(t, key);
    return -1;
}
/* For a writer changing a node readers see: the stored value, after storing a boundary node that no
 * slot held yet; NULL when the node is neither (or on allocation failure). */
uint8_t *on_table_find_store(on_table *t, uint32_t key);
/* Insert key (must not be present) with value v (plus a boundary node's outside flags); -1 on
 * allocation failure (table unchanged). */
int on_table_insert(on_table *t, uint32_t key, uint8_t v);
/* Insert n distinct absent keys at once (a tile being decoded): into an empty unbounded table they
 * are placed in home order, slot after slot (no displacement, memory walked in order), else one at a
 * time. 0, or -1 when out of memory. */
int on_table_fill(on_table *t, const uint32_t *keys, const uint8_t *vals, uint32_t n);
/* Remove key if present; returns 1 when removed. */
int on_table_remove(on_table *t, uint32_t key);
/* Key and value of slot i (for walking every entry): returns 0 for an empty slot. */
int on_table_slot(const on_table *t, uint32_t i, uint32_t *key, uint8_t *val);
size_t on_table_bytes(const on_table *t);

/* Visit the cubes of one tile's contents held in a table (as on_table_get reads it) (tree.h's storage rule: a stored node is
 * subdivided, its value flags its fully blocked children) and its solid flag, for a tile of the given
 * depth: fn(ud, cell, blocked) for every free cell and blocked cube, cells reporting tile ti; returns
 * 1 when fn stopped it. Reads nothing else, so a streamer worker may call it (on_tree_visit_tile
 * calls it for a tile of a tree). */
int on_table_visit(const on_table *tab, uint8_t solid, int depth, uint32_t ti, on_cell_visit_fn fn, void *ud);

#endif
