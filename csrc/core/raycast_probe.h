/*
 * raycast_probe.h -- the octree walk's view of the tree (internal to raycast.c): the free cell the walk
 * is in with its stored ancestors and its tile's losmap chain, and the questions the walk asks of the
 * leaves around it (probe_leaf and the free masks built from it; a start's descent through a sight
 * cache, start_cached). Kept apart from the walk's own steps
 * (raycast.c); static, so that the walk inlines them as before.
 */
#ifndef OCTONAV_RAYCAST_PROBE_H
#define OCTONAV_RAYCAST_PROBE_H

#include "losmap.h"
#include "raycast.h"
#include "raycast_walk.h"
#include "tree.h"

/* The walk's view of the tree. Moving from cell to cell, most leaves it asks about share ancestors
 * with the cell it is in: it keeps the values (blockFlags) of that cell's stored ancestors, so a
 * question about a leaf of the same tile starts from their lowest common ancestor with no lookup,
 * and only the levels below it cost a node-table lookup each. */
typedef struct tree_probe {
    const on_tree *t;
    on_lcache *lc;        /* lookup cache (may be NULL) */
    on_cell cur;          /* the free cell the walk is in */
    int64_t cmin[3], cs;  /* its nav-space box (cs = 0: no cell yet) */
    int64_t torg[3];      /* its tile's min corner, in leaves */
    uint8_t anc[ON_MAX_DEPTH + 2]; /* anc[l]: value of its stored ancestor at layer l (l > its layer) */
    /* the entries of the last free_mask_tree: free cell, and the ancestor values its probe read */
    on_cell cells[8];
    uint8_t vals[8][ON_MAX_DEPTH + 2];
    uint32_t top[8];      /* layers >= top[e] are shared with cur (top = depth + 1: another tile) */
    const on_losmap *lm;  /* the losmap of tile lmtile (NULL: none, the node table answers) */
    uint32_t lmtile;
    int chain_ok;         /* chain[] holds cur's nodes in lm (cur is in tile lmtile) */
    const on_losnode *chain[ON_LOS_LEVELS];
    /* probe_leaf's last descent, while chain[] still holds it (pok): tile-local leaf (px, py, pz) of
     * tile lmtile, chain[pstop ..] its nodes, pans its answer and pbrick its brick when pstop is 2 and
     * pbrick_ok. The voxels around an event lie close together: the next probe starts at the lowest
     * node it shares with the last one, or takes the last answer when both lie in one node's child that
     * answered (an empty or full child, or one brick). Any other descent into chain[] clears pok. */
    int pok, pans, pbrick_ok;
    uint32_t px, py, pz, pstop;
    uint64_t pbrick;
} tree_probe;

/* A node-table lookup through the cache when there is one (tree.h's, so every user fills the one
 * cache the same way). */
static inline int node_value(const on_tree *t, on_lcache *c, uint32_t tile, uint32_t code)
{
    return on_lcache_lookup(t, c, tile, code);
}

/* Is leaf (x, y, z) free? Then *c gets its free cell, vals[l] the values of the stored nodes read on
 * the way down (layers below *top), and *top the lowest layer it shares with the current cell. */
static __attribute__((unused)) int probe_leaf(tree_probe *p, int64_t x, int64_t y, int64_t z, on_cell *c, uint8_t *vals, uint32_t *top)
{
    const on_tree *t = p->t;
    int64_t n = t->n;
    uint32_t D = (uint32_t)t->p.depth;
    int64_t lx = x - p->torg[0], ly = y - p->torg[1], lz = z - p->torg[2];
    uint32_t ti, layer;
    int v, same = p->cs && in_range(lx, n) && in_range(ly, n) && in_range(lz, n);
    if (same) {
        ti = p->cur.tile;
    } else {
        if (!in_range(x, n * t->p.tiles[0]) || !in_range(y, n * t->p.tiles[1]) || !in_range(z, n * t->p.tiles[2]))
            return 0;
        int D2 = t->p.depth; /* (n = 2^depth: shifts, not divisions) */
        ti = on_tile_index(t, (int)(x >> D2), (int)(y >> D2), (int)(z >> D2));
        const on_tile *tl = &t->tiles[ti];
        if (tl->solid || !tl->loaded) return 0;
        lx = x & (n - 1);
        ly = y & (n - 1);
        lz = z & (n - 1);
    }
    if (ti != p->lmtile) {
        p->lmtile = ti;
        p->lm = on_tile_losmap(t, ti);
        p->pok = 0;
    }
    if (p->lm) { /* the tile's masks: a few bit operations, no lookup */
        const on_losmap *m = p->lm;
        uint32_t ux = (uint32_t)lx, uy = (uint32_t)ly, uz = (uint32_t)lz, L = 0;
        int l;
        if (p->pok) {
            uint32_t diff = (ux ^ p->px) | (uy ^ p->py) | (uz ^ p->pz);
            L = diff ? (31u - (uint32_t)__builtin_clz(diff)) / 2 + 1 : 0; /* the lowest node holding both */
        }
        if (p->pok && L < p->pstop) { /* in the child that answered the last probe */
            if (p->pstop == 2 && p->pbrick_ok) {
                unsigned bit = (ux & 3u) | (uy & 3u) << 2 | (uz & 3u) << 4;
                l = (p->pbrick >> bit) & 1u ? -1 : (p->pbrick & on_los_group(bit)) ? 0 : 1;
            } else {
                l = p->pans;
            }
        } else {
            uint64_t brick = ~0ull; /* (a brick read holds a free leaf: never all ones) */
            uint32_t L0 = p->pok ? (L > m->top ? m->top : L) : on_losmap_start(m, p->chain, ux, uy, uz);
            l = on_losmap_leaf_at(m, p->chain, L0, ux, uy, uz, &brick, &p->pstop);
            p->pans = l;
            p->pbrick = brick;
            p->pbrick_ok = brick != ~0ull;
            p->pok = 1;
        }
        p->px = ux, p->py = uy, p->pz = uz;
        if (l < 0) return 0;
        c->tile = ti;
        c->code = on_code_at((uint32_t)lx, (uint32_t)ly, (uint32_t)lz, (uint32_t)l);
        *top = 0; /* (no ancestor values to keep) */
        return 1;
    }
    /* no losmap (out of memory, masks off): the node table, through the lookup cache (checked against
     * the tree here, before its first read in the walk, rather than on every walk) */
    on_lcache_check(p->lc, t);
    uint32_t L = on_code_layer(p->cur.code);
    if (same && L < D) {
        /* same tile: start at the lowest common ancestor, whose value the walk holds */
        uint32_t diff = ((uint32_t)lx ^ on_code_x(p->cur.code)) | ((uint32_t)ly ^ on_code_y(p->cur.code)) |
                        ((uint32_t)lz ^ on_code_z(p->cur.code));
        layer = L + 1;
        while ((diff >> layer) != 0) layer++;
        *top = layer;
        v = p->anc[layer];
    } else {
        layer = D;
        *top = D + 1;
        v = node_value(t, p->lc, ti, on_root_code(t));
        if (v >= 0) vals[D] = (uint8_t)v;
    }
    uint32_t code = on_code_at((uint32_t)lx, (uint32_t)ly, (uint32_t)lz, layer);
    while (v >= 0) {
        layer--;
        unsigned ci = (((uint32_t)lx >> layer) & 1u) | ((((uint32_t)ly >> layer) & 1u) << 1) |
                      ((((uint32_t)lz >> layer) & 1u) << 2);
        if (v & (1 << ci)) return 0;
        code = on_code_at((uint32_t)lx, (uint32_t)ly, (uint32_t)lz, layer);
        if (layer == 0) break;
        v = node_value(t, p->lc, ti, code);
        if (v >= 0) vals[layer] = (uint8_t)v;
    }
    c->tile = ti;
    c->code = code;
    return 1;
}

/* Make c (found by probe_leaf with vals and top) the current cell. */
static __attribute__((unused)) void enter_cell(tree_probe *p, on_cell c, const uint8_t *vals, uint32_t top)
{
    uint32_t L = on_code_layer(c.code);
    for (uint32_t l = L + 1; l < top; l++) p->anc[l] = vals[l];
    if (!p->cs || c.tile != p->cur.tile) {
        int ijk[3];
        on_tile_coords(p->t, c.tile, ijk);
        for (int j = 0; j < 3; j++) p->torg[j] = (int64_t)ijk[j] * p->t->n;
    }
    p->cur = c;
    p->cmin[0] = p->torg[0] + on_code_x(c.code);
    p->cmin[1] = p->torg[1] + on_code_y(c.code);
    p->cmin[2] = p->torg[2] + on_code_z(c.code);
    p->cs = (int64_t)1 << L;
}

static __attribute__((unused)) unsigned free_mask_tree(tree_probe *p, const around *r)
{
    unsigned m = 0;
    /* (the valid entries only, and the cell's box by one unsigned compare an axis: cs = 0 before the
     * first cell holds nothing) */
    const int64_t r0 = r->lo[0] - p->cmin[0], r1 = r->lo[1] - p->cmin[1], r2 = r->lo[2] - p->cmin[2], cs = p->cs;
    for (unsigned todo = r->valid; todo; todo &= todo - 1) {
        unsigned e = (unsigned)__builtin_ctz(todo);
        int64_t v[3] = {r->lo[0] + (e & 1u), r->lo[1] + ((e >> 1) & 1u), r->lo[2] + ((e >> 2) & 1u)};
        if (in_range(r0 + (e & 1u), cs) && in_range(r1 + ((e >> 1) & 1u), cs) && in_range(r2 + ((e >> 2) & 1u), cs)) {
            p->cells[e] = p->cur; /* inside the cell we are walking through: free, no lookup */
            p->top[e] = 0;        /* (entering it changes nothing) */
            m |= 1u << e;
        } else if (probe_leaf(p, v[0], v[1], v[2], &p->cells[e], p->vals[e], &p->top[e])) {
            m |= 1u << e;
        }
    }
    return m;
}

/* Of the free entries in `m`, the one in the largest cell: the walk then jumps furthest. */
static __attribute__((unused)) unsigned pick_largest(const tree_probe *p, unsigned m)
{
    unsigned best = 0, bl = 0;
    for (unsigned e = 0; e < 8; e++)
        if (m & (1u << e)) {
            unsigned l = on_code_layer(p->cells[e].code) + 1;
            if (l > bl) {
                bl = l;
                best = e;
            }
        }
    return best;
}

/* start_cell's descent through a sight cache sc (see on_sight_cache): the layer of tile-local leaf (lx,
 * ly, lz)'s (global x, y, z) free cell or -1, with p->chain holding its nodes from the level it stopped
 * at up to the top, as a descent from the top leaves them. The same voxel as the last start: the last
 * answer and nodes; in the same tile: the descent from the lowest node the two voxels share (at least
 * the one that answered last: the nodes below it are not kept). */
static inline __attribute__((always_inline)) int start_cached(on_sight_cache *sc, tree_probe *p, const on_losmap *lm,
                                                              int64_t x, int64_t y, int64_t z, uint32_t lx,
                                                              uint32_t ly, uint32_t lz)
{
    const on_losnode **ch = sc->chain;
    if (sc->lm == lm) {
        if (sc->x != x || sc->y != y || sc->z != z) {
            uint32_t diff = (uint32_t)((x ^ sc->x) | (y ^ sc->y) | (z ^ sc->z)); /* (one tile: the bits below its depth) */
            uint32_t L = (31u - (uint32_t)__builtin_clz(diff)) / 2 + 1; /* (diff != 0: another voxel, same tile) */
            if (L < sc->stop) L = sc->stop;
            if (L < 2) L = 2;
            if (L > lm->top) L = lm->top;
            sc->l = on_losmap_leaf_at(lm, ch, L, lx, ly, lz, NULL, &sc->stop);
            sc->x = x, sc->y = y, sc->z = z;
        }
    } else {
        uint32_t L0 = on_losmap_start(lm, ch, lx, ly, lz);
        sc->l = on_losmap_leaf_at(lm, ch, L0, lx, ly, lz, NULL, &sc->stop);
        sc->lm = lm;
        sc->x = x, sc->y = y, sc->z = z;
    }
    for (uint32_t k = sc->stop; k <= lm->top; k++) p->chain[k] = ch[k];
    return sc->l;
}

#endif
