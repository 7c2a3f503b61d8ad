/*
 * losmap.c -- building a tile's losmap from its node table (in slices: losmap_build.h; on_tree_los_step in
 * losmap_step.c), publishing it in the tile, freeing it
 * (the structure and its life: losmap.h).
 */
#include "losmap_build.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* losmap.h's spread coordinates, for v < 512 (bit pairs 0 .. 4): written out by the preprocessor. */
#define SPREAD(v) ((uint32_t)((v) & 3) | (uint32_t)((v) >> 2 & 3) << 6 | (uint32_t)((v) >> 4 & 3) << 12 | \
                   (uint32_t)((v) >> 6 & 3) << 18 | (uint32_t)((v) >> 8 & 3) << 24)
#define SPREAD4(v) SPREAD(v), SPREAD((v) + 1), SPREAD((v) + 2), SPREAD((v) + 3)
#define SPREAD16(v) SPREAD4(v), SPREAD4((v) + 4), SPREAD4((v) + 8), SPREAD4((v) + 12)
#define SPREAD64(v) SPREAD16(v), SPREAD16((v) + 16), SPREAD16((v) + 32), SPREAD16((v) + 48)
const uint32_t on_los_spread[ON_LOS_SPREAD_N] = {SPREAD64(0),   SPREAD64(64),  SPREAD64(128), SPREAD64(192),
                                                 SPREAD64(256), SPREAD64(320), SPREAD64(384), SPREAD64(448)};
#undef SPREAD64
#undef SPREAD16
#undef SPREAD4
#undef SPREAD

#define ST_FREE (-1)
#define ST_BLOCKED (-2)
#define VIRTUAL 0xfe /* the value of a cube above the root: its child 0 holds the tile, the rest is outside */


/* Grow the box around blocked leaves by the cube at (x, y, z) of side q, as far as it is in the map. */
static void blocked_box(builder *b, uint32_t x, uint32_t y, uint32_t z, uint32_t q)
{
    uint32_t p[3] = {x, y, z}, e[3];
    for (int j = 0; j < 3; j++) {
        if (p[j] >= b->reg[j]) return;
        e[j] = p[j] + q < b->reg[j] ? p[j] + q : b->reg[j];
    }
    for (int j = 0; j < 3; j++) {
        if ((int32_t)p[j] < b->lo[j]) b->lo[j] = (int32_t)p[j];
        if ((int32_t)e[j] > b->hi[j]) b->hi[j] = (int32_t)e[j];
    }
}

/* The octree's cube at `layer`, min corner (x, y, z), child ci of a cube whose value is pv: blocked,
 * free, or stored with its value. */
static int cube_state(const builder *b, uint32_t layer, uint32_t x, uint32_t y, uint32_t z, int pv, unsigned ci)
{
    if (pv & (1 << ci)) return ST_BLOCKED;
    if (layer > b->depth) return VIRTUAL;
    if (layer == b->depth && b->solid) return ST_BLOCKED;
    int v = on_table_get(b->tab, on_code_make(x, y, z, layer));
    return v < 0 ? ST_FREE : v;
}

/* Room for need elements: 0, or -1 out of memory (the array left as it was). Sized once at on_losbuild_begin,
 * so this only grows past a count that was wrong (a fallback: a new array, the old one copied). */
static int grow(uint32_t *grows, void **p, size_t *cap, size_t *map, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    ++*grows;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    size_t nm;
    void *q = on_losarr_alloc(nc, elem, &nm);
    if (!q) return -1;
    if (*p) memcpy(q, *p, *cap * elem);
    on_losarr_free(*p, *map);
    *p = q;
    *cap = nc;
    *map = nm;
    return 0;
}

/* The 64 children of the level-L cube at (x, y, z) whose octree state is s (a stored or virtual
 * value): their states, and the masks. */
static void children(const builder *b, uint32_t L, uint32_t x, uint32_t y, uint32_t z, int s, int st[64],
                     uint64_t *any, uint64_t *full)
{
    uint32_t l1 = 2 * L - 1, h1 = 1u << l1, h2 = h1 >> 1;
    *any = *full = 0;
    for (unsigned ci = 0; ci < 8; ci++) {
        uint32_t x1 = x + ((ci & 1u) ? h1 : 0), y1 = y + ((ci & 2u) ? h1 : 0), z1 = z + ((ci & 4u) ? h1 : 0);
        int s1 = cube_state(b, l1, x1, y1, z1, s, ci);
        for (unsigned gi = 0; gi < 8; gi++) {
            unsigned cx = ((ci & 1u) << 1) | (gi & 1u), cy = (ci & 2u) | ((gi >> 1) & 1u),
                     cz = ((ci >> 1) & 2u) | ((gi >> 2) & 1u);
            unsigned c = cx | cy << 2 | cz << 4;
            int s2 = s1 < 0 ? s1
                            : cube_state(b, l1 - 1, x1 + ((gi & 1u) ? h2 : 0), y1 + ((gi & 2u) ? h2 : 0),
                                         z1 + ((gi & 4u) ? h2 : 0), s1, gi);
            st[c] = s2;
            if (s2 == ST_BLOCKED) {
                *any |= 1ull << c;
                *full |= 1ull << c;
            } else if (s2 != ST_FREE) {
                *any |= 1ull << c;
            }
        }
    }
}

/* A brick: the leaves of the layer-2 cube at (x, y, z) whose stored value is s. */
static uint64_t brick_of(const builder *b, uint32_t x, uint32_t y, uint32_t z, int s)
{
    uint64_t m = 0;
    for (unsigned ci = 0; ci < 8; ci++) {
        int s1 = cube_state(b, 1, x + ((ci & 1u) ? 2 : 0), y + ((ci & 2u) ? 2 : 0), z + ((ci & 4u) ? 2 : 0), s, ci);
        if (s1 == ST_FREE) continue;
        for (unsigned gi = 0; gi < 8; gi++) {
            if (s1 != ST_BLOCKED && !(s1 & (1 << gi))) continue;
            unsigned cx = ((ci & 1u) << 1) | (gi & 1u), cy = (ci & 2u) | ((gi >> 1) & 1u),
                     cz = ((ci >> 1) & 2u) | ((gi >> 2) & 1u);
            m |= 1ull << (cx | cy << 2 | cz << 4);
        }
    }
    return m;
}

/* Fill node[ni], the level-L cube at (x, y, z) with octree state s: its masks and the slots of its mixed
 * children (above level 2 nodes, at level 2 bricks), which *f (a frame for the caller's stack) then lists
 * to be filled in bit order (returns 1; 0: none). -1: out of memory. *work grows by the node table reads
 * it made (the unit of on_tree_los_step's budget); a level-2 node's bricks are filled one at a time by
 * on_losbuild_run (up to 8 reads each), so a step's budget and deadline are read between bricks too: a node
 * with 64 mixed bricks is ~580 reads (~40-150 us) that a step would otherwise run past its limit. */

static int enter(builder *b, frame *f, size_t ni, uint32_t L, uint32_t x, uint32_t y, uint32_t z, int s,
                 uint64_t *work)
{
    int st[64];
    uint64_t any, full;
    children(b, L, x, y, z, s, st, &any, &full);
    *work += 72;
    uint64_t mixed = any & ~full;
    size_t k = on_los_rank(mixed, 63) + (mixed >> 63);
    on_losnode *nd = &b->node[ni];
    nd->any = any;
    nd->mixed = mixed;
    uint32_t q = 1u << (2 * (L - 1));
    for (uint64_t fb = full; fb; fb &= fb - 1) {
        unsigned c = (unsigned)__builtin_ctzll(fb);
        blocked_box(b, x + (c & 3u) * q, y + ((c >> 2) & 3u) * q, z + ((c >> 4) & 3u) * q, q);
    }
    size_t at;
    if (L == 2) { /* (the bricks' slots now, their contents by fill_brick) */
        if (grow(&b->grows, (void **)&b->brick, &b->capbrick, &b->mapbrick, b->nbrick + k, sizeof *b->brick))
            return -1;
        at = b->nbrick;
        b->nbrick += k;
    } else {
        if (grow(&b->grows, (void **)&b->node, &b->capnode, &b->mapnode, b->nnode + k, sizeof *b->node))
            return -1;
        at = b->nnode;
        b->nnode += k;
    }
    b->node[ni].base = (uint32_t)at;
    if (!mixed) return 0;
    f->L = L, f->x = x, f->y = y, f->z = z;
    memcpy(f->st, st, sizeof st);
    f->rest = mixed;
    f->at = at;
    return 1;
}

/* The next brick of level-2 frame f (it has one): its 64 leaves, and the box around blocked leaves. */
static void fill_brick(builder *b, frame *f, uint64_t *work)
{
    unsigned c = (unsigned)__builtin_ctzll(f->rest);
    f->rest &= f->rest - 1;
    uint32_t bx = f->x + (c & 3u) * 4, by = f->y + ((c >> 2) & 3u) * 4, bz = f->z + ((c >> 4) & 3u) * 4;
    uint64_t bm = brick_of(b, bx, by, bz, f->st[c]);
    b->brick[f->at++] = bm;
    *work += 8;
    for (; bm; bm &= bm - 1) {
        unsigned v = (unsigned)__builtin_ctzll(bm);
        blocked_box(b, bx + (v & 3u), by + ((v >> 2) & 3u), bz + ((v >> 4) & 3u), 1);
    }
}


static void copy_drop(on_losbuild *lb)
{
    free(lb->cnode);
    free(lb->cbrick);
    lb->cnode = NULL, lb->cbrick = NULL;
    lb->copying = 0;
    lb->cdone = 0;
}

void on_losbuild_free(on_losbuild *lb)
{
    if (!lb) return;
    copy_drop(lb);
    on_losarr_free(lb->b.node, lb->b.mapnode);
    on_losarr_free(lb->b.brick, lb->b.mapbrick);
    free(lb);
}

/* Start lb's build of a tile (a new lb, or an idle one whose arrays are used again); -1: out of memory
 * (lb's arrays freed, lb not). */
int on_losbuild_init(on_losbuild *lb, const on_table *tab, uint8_t solid, uint32_t depth)
{
    builder *b = &lb->b;
    copy_drop(lb);
    lb->n = lb->failed = lb->idle = 0;
    b->nnode = b->nbrick = 0;
    b->grows = 0;
    b->tab = tab;
    b->depth = depth;
    b->solid = solid;
    uint32_t side = 1u << depth;
    for (int j = 0; j < 3; j++) {
        b->reg[j] = tab->lim[j] ? tab->lim[j] : side;
        b->lo[j] = INT32_MAX;
        b->hi[j] = INT32_MIN;
    }
    uint32_t top = (depth + 1) / 2;
    if (top < 2) top = 2;
    lb->top = top;
    /* both arrays at their most now (every node but the top and every brick is a distinct stored cube:
     * nnode <= count + 1, nbrick <= count; losmap_arrays.c): no slice grows one (session 28: one realloc
     * of the node array took 7.9 ms of the game thread's CPU) */
    size_t cnt = tab->count;
    if (b->capnode < cnt + 1) {
        on_losarr_free(b->node, b->mapnode);
        b->node = on_losarr_alloc(cnt + 1, sizeof *b->node, &b->mapnode);
        b->capnode = b->node ? cnt + 1 : 0;
    }
    if (b->capbrick < (cnt ? cnt : 1)) {
        on_losarr_free(b->brick, b->mapbrick);
        b->brick = on_losarr_alloc(cnt ? cnt : 1, sizeof *b->brick, &b->mapbrick);
        b->capbrick = b->brick ? (cnt ? cnt : 1) : 0;
    }
    if (!b->node || !b->brick) {
        on_losarr_free(b->node, b->mapnode);
        on_losarr_free(b->brick, b->mapbrick);
        b->node = NULL, b->brick = NULL;
        b->capnode = b->capbrick = b->mapnode = b->mapbrick = 0;
        return -1;
    }
    b->nnode = 1;
    /* the top's octree state: the root itself, or a virtual cube above it */
    int s = 2 * top == b->depth ? cube_state(b, b->depth, 0, 0, 0, VIRTUAL, 0) : VIRTUAL;
    if (s == ST_FREE) {
        b->node[0].any = b->node[0].mixed = 0;
        b->node[0].base = 0;
    } else if (s == ST_BLOCKED) {
        b->node[0].any = ~0ull;
        b->node[0].mixed = 0;
        b->node[0].base = 0;
        blocked_box(b, 0, 0, 0, side);
    } else {
        uint64_t w = 0;
        int r = enter(b, &lb->stack[0], 0, top, 0, 0, 0, s, &w);
        if (r < 0) return -1;
        /* a top at level 2 (a tile of depth 4 or less): its bricks here, as the node's own (at most 64) */
        if (r == 1 && top == 2) {
            while (lb->stack[0].rest) fill_brick(b, &lb->stack[0], &w);
            r = 0;
        }
        lb->n = r;
    }
    return 0;
}

on_losbuild *on_losbuild_begin(const on_table *tab, uint8_t solid, uint32_t depth)
{
    on_losbuild *lb = calloc(1, sizeof *lb);
    if (lb && on_losbuild_init(lb, tab, solid, depth) < 0) {
        on_losbuild_free(lb);
        return NULL;
    }
    return lb;
}

/* The clock is read once per BUILD_CLOCK_READS node table reads or more (~3-6 us of a build; a read of
 * the clock is ~20-25 ns). */
#define BUILD_CLOCK_READS 64

/* Fill nodes and bricks until the build is whole (1) or *work reaches limit (0; *work may pass it by one
 * node's reads, 72), or until the clock passes deadline (a CLOCK_MONOTONIC second; 0: none; read when
 * BUILD_CLOCK_READS reads were made since the last read, and before the first). -1: out of memory. */
int on_losbuild_run(on_losbuild *lb, uint64_t *work, uint64_t limit, double deadline)
{
    if (lb->failed) return -1;
    uint64_t next_clock = *work;
    while (lb->n > 0) {
        if (*work >= limit) return 0;
        if (deadline > 0 && *work >= next_clock) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            if ((double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec >= deadline) return 0;
            next_clock = *work + BUILD_CLOCK_READS;
        }
        frame *f = &lb->stack[lb->n - 1];
        if (!f->rest) {
            lb->n--;
            continue;
        }
        if (f->L == 2) {
            fill_brick(&lb->b, f, work);
            continue;
        }
        unsigned c = (unsigned)__builtin_ctzll(f->rest);
        f->rest &= f->rest - 1;
        uint32_t q = 1u << (2 * (f->L - 1));
        size_t ni = f->at++;
        int r = enter(&lb->b, &lb->stack[lb->n], ni, f->L - 1, f->x + (c & 3u) * q, f->y + ((c >> 2) & 3u) * q,
                      f->z + ((c >> 4) & 3u) * q, f->st[c], work);
        if (r < 0) {
            lb->failed = 1;
            return -1;
        }
        lb->n += r;
    }
    return 1;
}

/* COPY_CHUNK bytes of a whole build's arrays are copied between two reads of the clock: ~2-10 us, with
 * the target's first-touched pages. The copy is no node-table read: it counts no work (a step bounded by
 * work alone copies whole, as the finish did before; its deadline slices it). */
#define COPY_CHUNK ((size_t)16384)

/* Copy a whole build's arrays out at their size (malloc'd: where the allocator's free blocks are already
 * resident), COPY_CHUNK bytes at a time, until done (1), or *work is at limit or the clock passes
 * deadline (0), as on_losbuild_run; -1: out of memory. (A one-piece copy at the end of a 512^3 tile's build,
 * ~0.7 MB into fresh pages, took 0.5-1.2 ms of one step at load 8.) */
int on_losbuild_copy(on_losbuild *lb, uint64_t *work, uint64_t limit, double deadline)
{
    builder *b = &lb->b;
    size_t nb = b->nnode * sizeof *b->node, bb = b->nbrick * sizeof *b->brick;
    if (!lb->copying) {
        lb->cnode = malloc(nb);
        lb->cbrick = bb ? malloc(bb) : NULL;
        if (!lb->cnode || (bb && !lb->cbrick)) {
            copy_drop(lb);
            return -1;
        }
        lb->copying = 1;
        lb->cdone = 0;
    }
    while (lb->cdone < nb + bb) {
        if (*work >= limit) return 0;
        if (deadline > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            if ((double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec >= deadline) return 0;
        }
        size_t at = lb->cdone, k = COPY_CHUNK;
        if (at < nb) {
            if (k > nb - at) k = nb - at;
            memcpy((char *)lb->cnode + at, (const char *)b->node + at, k);
        } else {
            if (k > nb + bb - at) k = nb + bb - at;
            memcpy((char *)lb->cbrick + (at - nb), (const char *)b->brick + (at - nb), k);
        }
        lb->cdone += k;
    }
    return 1;
}

/* The losmap of a whole build, after on_losbuild_copy: it takes the copies; lb goes idle with its
 * arrays, for a next build (on_tree_los_step: their pages then resident, no faults). NULL: out of memory
 * (lb as it was). */
on_losmap *on_losbuild_finish(on_losbuild *lb)
{
    on_losmap *m = malloc(sizeof *m);
    if (!m) return NULL;
    builder b = lb->b;
    uint32_t top = lb->top;
    lb->idle = 1;
    b.node = lb->cnode, b.brick = lb->cbrick;
    b.mapnode = b.mapbrick = 0;
    lb->cnode = NULL, lb->cbrick = NULL;
    copy_drop(lb);
    m->top = top;
    m->depth = b.depth;
    m->nnode = (uint32_t)b.nnode;
    m->nbrick = (uint32_t)b.nbrick;
    m->node = b.node;
    m->brick = b.brick;
    m->mapnode = b.mapnode;
    m->mapbrick = b.mapbrick;
    m->grows = b.grows;
    m->bytes = sizeof *m + b.nnode * sizeof *b.node + b.nbrick * sizeof *b.brick;
    for (int j = 0; j < 3; j++) {
        m->reg[j] = b.reg[j];
        m->lo[j] = b.lo[j] < b.hi[j] ? b.lo[j] : 0; /* (empty: lo = hi = 0) */
        m->hi[j] = b.lo[j] < b.hi[j] ? b.hi[j] : 0;
        m->dreg[j] = (double)m->reg[j];
        m->dlo[j] = (double)m->lo[j];
        m->dhi[j] = (double)m->hi[j];
    }
    double vbox = 1, vreg = 1;
    for (int j = 0; j < 3; j++) {
        vbox *= (double)(m->hi[j] - m->lo[j]);
        vreg *= (double)m->reg[j];
    }
    m->box_small = vbox < 0.25 * vreg;
    m->hwpop = on_los_popcnt_ok();
    /* the region's node: down child 0 while the region fits in it and it is mixed (has a node) */
    uint32_t L = top, at = 0, rmax = m->reg[0] > m->reg[1] ? m->reg[0] : m->reg[1];
    if (m->reg[2] > rmax) rmax = m->reg[2];
    m->rpath[top] = 0;
    while (L > 2 && rmax <= (1u << (2 * (L - 1))) && (m->node[at].mixed & 1u)) {
        at = m->node[at].base; /* (child 0: the first mixed child) */
        m->rpath[--L] = at;
    }
    m->rlevel = L;
    return m;
}

int on_los_popcnt_ok(void)
{
#if ON_LOS_HWPOP
    return __builtin_cpu_supports("popcnt") != 0;
#else
    return 0;
#endif
}

on_losmap *on_losmap_build(const on_table *tab, uint8_t solid, uint32_t depth)
{
    on_losbuild *lb = on_losbuild_begin(tab, solid, depth);
    if (!lb) return NULL;
    uint64_t work = 0;
    /* (copied out at their size, malloc'd, as on_tree_los_step's: every published losmap's arrays come
     * from the allocator, whose free blocks are reused; a mapping of its own freed on the game's thread,
     * a worker's tile unloaded or dropped by the budget, cost an munmap there) */
    on_losmap *m = NULL;
    if (on_losbuild_run(lb, &work, UINT64_MAX, 0) == 1 && on_losbuild_copy(lb, &work, UINT64_MAX, 0) == 1)
        m = on_losbuild_finish(lb);
    on_losbuild_free(lb);
    return m;
}

void on_losmap_free(on_losmap *m)
{
    if (!m) return;
    on_losarr_free(m->node, m->mapnode);
    on_losarr_free(m->brick, m->mapbrick);
    free(m);
}

/* The tree's hook (tree.h): a tile's masks go with its contents, all of them and a build in progress
 * with the tree; the stats count their bytes. Added before the first losmap or build is kept. */
static void hook_touched(on_tree *t, uint32_t tile)
{
    on_tile *tl = &t->tiles[tile];
    on_tile_losmap_drop(tl);
    unsigned char big = 2; /* (new contents: their masks may fit the budget) */
    atomic_compare_exchange_strong_explicit(&tl->los_want, &big, 0, memory_order_relaxed, memory_order_relaxed);
}
static void hook_drop(on_tree *t)
{
    for (uint32_t i = 0; i < t->ntiles; i++) on_tile_losmap_drop(&t->tiles[i]);
    on_tree_losbuild_drop(t);
}
static void hook_stats(const on_tree *t, on_tree_stats *st)
{
    st->los_bytes = on_tree_losmap_bytes(t, &st->los_tiles);
    st->los_dropped = t->los_dropped;
}
static const on_tree_hook losmap_hook = {NULL, hook_drop, hook_touched, hook_stats};

int on_losmap_hook_add(on_tree *t) { return on_tree_hook_add(t, &losmap_hook); }

const on_losmap *on_tile_losmap_slow(const on_tree *t, uint32_t tile)
{
    on_tile *tl = &t->tiles[tile]; /* (the pointer is the tile's cache: atomics only) */
    on_losmap *m = atomic_load_explicit(&tl->los, memory_order_acquire);
    if (m) return m;
    if (tl->solid || !tl->loaded || t->no_los_masks) return NULL;
    if (atomic_load_explicit(&tl->los_want, memory_order_relaxed) == 2) return NULL; /* (over the budget) */
    if (t->los_defer) { /* on_tree_los_step builds it: note that it is wanted (any reader's thread) */
        unsigned char none = 0;
        if (atomic_compare_exchange_strong_explicit(&tl->los_want, &none, 1, memory_order_relaxed,
                                                    memory_order_relaxed))
            atomic_fetch_add_explicit(&((on_tree *)t)->los_wanted, 1, memory_order_relaxed);
        return NULL;
    }
    if (on_tree_hook_add(t, &losmap_hook) != 0) return NULL;
    m = on_losmap_build(&tl->table, tl->solid, (uint32_t)t->p.depth);
    if (!m) return NULL;
    on_losmap *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&tl->los, &none, m, memory_order_acq_rel, memory_order_acquire)) {
        on_losmap_free(m); /* another reader published one first */
        return none;
    }
    atomic_store_explicit(&tl->los_used, atomic_load_explicit(&t->los_clock, memory_order_relaxed),
                          memory_order_relaxed);
    return m;
}

void on_tile_losmap_drop(on_tile *tl)
{
    on_losmap_free(atomic_exchange_explicit(&tl->los, NULL, memory_order_acq_rel));
}

void on_tree_losmap_adopt(on_tree *t, uint32_t tile, on_losmap *m)
{
    if (on_tree_hook_add(t, &losmap_hook) != 0) {
        on_losmap_free(m); /* (built again when read) */
        m = NULL;
    }
    atomic_store_explicit(&t->tiles[tile].los_used, atomic_load_explicit(&t->los_clock, memory_order_relaxed),
                          memory_order_relaxed);
    on_losmap_free(atomic_exchange_explicit(&t->tiles[tile].los, m, memory_order_acq_rel));
}

size_t on_tree_losmap_bytes(const on_tree *t, size_t *tiles)
{
    size_t n = 0, k = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_losmap *m = atomic_load_explicit(&t->tiles[i].los, memory_order_acquire);
        if (m) {
            n += m->bytes;
            k++;
        }
    }
    if (tiles) *tiles = k;
    return n;
}

void on_tree_set_los_masks(on_tree *t, int on)
{
    t->no_los_masks = !on;
    t->los_cursor = 0; /* (on_tree_los_step's scan: every tile may need masks again) */
    if (on) return;
    on_tree_losbuild_drop(t);
    for (uint32_t i = 0; i < t->ntiles; i++) on_tile_losmap_drop(&t->tiles[i]);
}

on_status on_tree_los_prepare(const on_tree *t, size_t *bytes)
{
    on_status st = ON_SUCCESS;
    if (bytes) *bytes = 0;
    if (t->no_los_masks) return ON_FAILURE | ON_INVALID;
    for (uint32_t i = 0; i < t->ntiles; i++)
        if (t->tiles[i].loaded && !t->tiles[i].solid && !on_tile_losmap(t, i)) st = ON_FAILURE | ON_NO_MEMORY;
    if (bytes) *bytes = on_tree_losmap_bytes(t, NULL);
    return st;
}

void on_tree_losbuild_drop(on_tree *t)
{
    on_losbuild_free(t->losbuild);
    t->losbuild = NULL;
}
