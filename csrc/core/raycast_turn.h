/*
 * raycast_turn.h -- reading a leaf for a turn's voxels off the tile's losmap (internal to raycast.c's
 * walk of a segment in a lattice plane and raycast_turn.c's turn check): on_turn_cache's probe.
 */
#ifndef OCTONAV_RAYCAST_TURN_H
#define OCTONAV_RAYCAST_TURN_H

#include "losmap.h"
#include "raycast.h"
#include "raycast_walk.h"
#include "tree.h"

/* What a turn's voxels were read off (raycast.h's on_turn_cache): the last tile and its losmap, and the
 * last aligned 4 x 4 x 4 block of leaves (key: its leaf coordinates >> 2) with its answer, which holds
 * for all its leaves (the block lies in one brick, or in one wholly free or wholly blocked child of a
 * node above). */
typedef on_turn_cache turn_probe;

/* Is leaf (x, y, z) free? Off the tile's losmap (a few bit operations, as the walk reads it, and the
 * voxels around a turn mostly share one block: one descent) rather than the node table (a lookup a
 * layer); the node table when the tile has none (out of memory, masks off). Inlined in turn_ok: most
 * calls are answered by the block kept, in a few instructions (measured on DC1: 45,000 calls, 9,000
 * descents). */
static inline __attribute__((always_inline)) int turn_leaf_free(const on_tree *t, on_lcache *lc, turn_probe *p,
                                                                int64_t x, int64_t y, int64_t z)
{
    /* the block kept first: it was read for a leaf inside the map, and the map's extent on each axis is a
     * multiple of 4 (a block is kept only from a losmap, depth >= 2), so the whole block is inside it */
    unsigned v = (unsigned)(x & 3) | (unsigned)(y & 3) << 2 | (unsigned)(z & 3) << 4;
    /* (the kept block and the last descent's tile expected: as gcc's profile-guided build decides, with
     * turn_ok's sanity test expected to pass, make bench-query-ir Complex -294; see search.c, h31ir5) */
    if (__builtin_expect(p->state && p->key[0] == x >> 2 && p->key[1] == y >> 2 && p->key[2] == z >> 2, 1))
        return p->state == 2 ? !((p->brick >> v) & 1u) : p->state > 0;
    int64_t n = t->n, rx = x - p->org[0], ry = y - p->org[1], rz = z - p->org[2];
    uint32_t lx, ly, lz;
    if (__builtin_expect(p->dok && in_range(rx, n) && in_range(ry, n) && in_range(rz, n), 1)) {
        /* in the tile of the last descent (read, its masks found, when that one was) */
        lx = (uint32_t)rx, ly = (uint32_t)ry, lz = (uint32_t)rz;
    } else {
        if (!in_range(x, n * t->p.tiles[0]) || !in_range(y, n * t->p.tiles[1]) || !in_range(z, n * t->p.tiles[2]))
            return 0;
        int D = t->p.depth;
        uint32_t ti = on_tile_index(t, (int)(x >> D), (int)(y >> D), (int)(z >> D));
        const on_tile *tl = &t->tiles[ti];
        if (tl->solid || !tl->loaded) return 0;
        if (ti != p->tile) {
            p->tile = ti;
            p->lm = on_tile_losmap(t, ti);
            p->dok = 0;
        }
        if (!p->lm || D < 2) {
            on_lcache_check(lc, t); /* (only the node table reads through the cache) */
            return on_tree_leaf_free_cached(t, lc, x, y, z, NULL);
        }
        lx = (uint32_t)(x & (n - 1)), ly = (uint32_t)(y & (n - 1)), lz = (uint32_t)(z & (n - 1));
        p->org[0] = x - lx, p->org[1] = y - ly, p->org[2] = z - lz;
    }
    uint64_t brick = ~0ull; /* (a brick read holds a free leaf: never all ones) */
    int l;
    /* from the lowest node holding this leaf and the last one read in the tile (chain[] holds the last
     * one's nodes from dstop up), not from the top: consecutive turns' voxels lie close together */
    uint32_t diff = (lx ^ p->dx) | (ly ^ p->dy) | (lz ^ p->dz);
    uint32_t L = diff ? (31u - (uint32_t)__builtin_clz(diff)) / 2 + 1 : 0;
    if (p->dok && L < p->dstop) {
        /* in the child that answered the last descent, wholly free or blocked (a brick's answer is the
         * block kept, at level 2: a leaf of the same brick shares its block) */
        l = p->dfree ? 0 : -1;
    } else {
        uint32_t L0;
        if (p->dok) L0 = L < 2 ? 2 : L > p->lm->top ? p->lm->top : L;
        else L0 = on_losmap_start(p->lm, p->chain, lx, ly, lz);
        l = on_losmap_leaf_at(p->lm, p->chain, L0, lx, ly, lz, &brick, &p->dstop);
        p->dok = 1;
        p->dfree = l >= 0;
    }
    p->dx = lx, p->dy = ly, p->dz = lz;
    p->key[0] = x >> 2;
    p->key[1] = y >> 2;
    p->key[2] = z >> 2;
    p->brick = brick;
    p->state = brick != ~0ull ? 2 : l >= 0 ? 1 : -1;
    return l >= 0;
}

#endif
