/*
 * losmap.c -- building a tile's losmap from its node table, publishing it in the tile, freeing it
 * (the structure and its life: losmap.h).
 */
#include "losmap.h"

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

typedef struct builder {
    const on_table *tab;
    uint32_t depth;
    uint8_t solid;
    on_losnode *node;
    size_t nnode, capnode, mapnode; /* map*: bytes mapped (pages of its own, losarr_*), 0: malloc'd */
    uint64_t *brick;
    size_t nbrick, capbrick, mapbrick;
    uint32_t grows;          /* the arrays grown after build_begin (0: the count's bound held) */
    uint32_t reg[3];         /* the tile's part of the map */
    int32_t lo[3], hi[3];    /* the box around the blocked leaves in it */
} builder;

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

/* Room for need elements: 0, or -1 out of memory (the array left as it was). Sized once at build_begin,
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
 * build_run (up to 8 reads each), so a step's budget and deadline are read between bricks too: a node
 * with 64 mixed bricks is ~580 reads (~40-150 us) that a step would otherwise run past its limit. */
typedef struct frame {
    uint32_t L, x, y, z;
    int st[64];    /* the children's octree states */
    uint64_t rest; /* mixed children not filled yet */
    size_t at;     /* node[] (brick[] for L 2) index of the next of them */
} frame;

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

/* A build in progress: the builder and the stack of nodes whose mixed children are not all filled
 * (depth-first, each node's children in bit order: the layout a one-piece build gives). */
struct on_losbuild {
    builder b;
    uint32_t top;
    int n;        /* frames on the stack */
    int failed;   /* out of memory */
    frame stack[ON_LOS_LEVELS];
    /* the tile it builds and the salt it read (on_tree_los_step: a change of the tile abandons it) */
    uint32_t tile, salt;
};

static void build_free(on_losbuild *lb)
{
    if (!lb) return;
    on_losarr_free(lb->b.node, lb->b.mapnode);
    on_losarr_free(lb->b.brick, lb->b.mapbrick);
    free(lb);
}

static on_losbuild *build_begin(const on_table *tab, uint8_t solid, uint32_t depth)
{
    on_losbuild *lb = calloc(1, sizeof *lb);
    if (!lb) return NULL;
    builder *b = &lb->b;
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
    b->node = on_losarr_alloc(cnt + 1, sizeof *b->node, &b->mapnode);
    b->brick = on_losarr_alloc(cnt ? cnt : 1, sizeof *b->brick, &b->mapbrick);
    if (!b->node || !b->brick) {
        build_free(lb);
        return NULL;
    }
    b->capnode = cnt + 1;
    b->capbrick = cnt ? cnt : 1;
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
        if (r < 0) {
            build_free(lb);
            return NULL;
        }
        /* a top at level 2 (a tile of depth 4 or less): its bricks here, as the node's own (at most 64) */
        if (r == 1 && top == 2) {
            while (lb->stack[0].rest) fill_brick(b, &lb->stack[0], &w);
            r = 0;
        }
        lb->n = r;
    }
    return lb;
}

/* The clock is read once per BUILD_CLOCK_READS node table reads or more (~3-6 us of a build; a read of
 * the clock is ~20-25 ns). */
#define BUILD_CLOCK_READS 64

/* Fill nodes and bricks until the build is whole (1) or *work reaches limit (0; *work may pass it by one
 * node's reads, 72), or until the clock passes deadline (a CLOCK_MONOTONIC second; 0: none; read when
 * BUILD_CLOCK_READS reads were made since the last read, and before the first). -1: out of memory. */
static int build_run(on_losbuild *lb, uint64_t *work, uint64_t limit, double deadline)
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

/* The losmap of a whole build (its arrays move into it; lb is freed either way); NULL: out of memory. */
static on_losmap *build_finish(on_losbuild *lb)
{
    on_losmap *m = malloc(sizeof *m);
    if (!m) {
        build_free(lb);
        return NULL;
    }
    builder b = lb->b;
    uint32_t top = lb->top;
    free(lb);
    /* give back the slack (a mapping's untouched tail unmapped, no copy) */
    b.node = on_losarr_trim(b.node, &b.mapnode, b.nnode, sizeof *b.node);
    if (b.nbrick) {
        b.brick = on_losarr_trim(b.brick, &b.mapbrick, b.nbrick, sizeof *b.brick);
    } else {
        on_losarr_free(b.brick, b.mapbrick);
        b.brick = NULL;
        b.mapbrick = 0;
    }
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
    on_losbuild *lb = build_begin(tab, solid, depth);
    if (!lb) return NULL;
    uint64_t work = 0;
    if (build_run(lb, &work, UINT64_MAX, 0) < 0) {
        build_free(lb);
        return NULL;
    }
    return build_finish(lb);
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

/* Deferred builds (on_tree_los_step). */

void on_tree_losbuild_drop(on_tree *t)
{
    build_free(t->losbuild);
    t->losbuild = NULL;
}

void on_tree_set_los_defer(on_tree *t, int on) { t->los_defer = on != 0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int tile_needs(const on_tree *t, uint32_t i)
{
    on_tile *tl = &((on_tree *)t)->tiles[i];
    return tl->loaded && !tl->solid && !atomic_load_explicit(&tl->los, memory_order_acquire) &&
           atomic_load_explicit(&tl->los_want, memory_order_relaxed) != 2;
}

static void unwant(on_tree *t, uint32_t i)
{
    unsigned char one = 1;
    if (atomic_compare_exchange_strong_explicit(&t->tiles[i].los_want, &one, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_fetch_sub_explicit(&t->los_wanted, 1, memory_order_relaxed);
}

/* The masks' budget (on_tree_set_los_budget). */

void on_tree_set_los_budget(on_tree *t, size_t bytes)
{
    t->los_budget_set = bytes == ON_LOS_BUDGET_NONE ? 0 : bytes == ON_LOS_BUDGET_TREE ? 2 : 1;
    t->los_budget = bytes;
    for (uint32_t i = 0; i < t->ntiles; i++) { /* (forget which tiles passed the old one) */
        unsigned char big = 2;
        atomic_compare_exchange_strong_explicit(&t->tiles[i].los_want, &big, 0, memory_order_relaxed,
                                                memory_order_relaxed);
    }
}

size_t on_tree_los_budget(const on_tree *t)
{
    if (t->los_budget_set != 2) return t->los_budget_set ? t->los_budget : ON_LOS_BUDGET_NONE;
    size_t b = sizeof *t + (size_t)t->ntiles * sizeof *t->tiles; /* (on_tree_stats' bytes) */
    for (uint32_t i = 0; i < t->ntiles; i++) b += on_table_bytes(&t->tiles[i].table);
    return (size_t)(ON_LOS_BUDGET_SHARE * (double)b);
}

/* The masks' bytes now (*keep_age: the most steps since a tile's masks were read, any tile but keep);
 * *old: a tile whose were read least recently, other than keep (UINT32_MAX: none). */
static size_t masks_now(const on_tree *t, uint32_t keep, unsigned clock, uint32_t *old, unsigned *age, size_t *k)
{
    size_t total = 0;
    *old = UINT32_MAX;
    *age = 0;
    *k = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_tile *tl = &((on_tree *)t)->tiles[i];
        const on_losmap *m = atomic_load_explicit(&tl->los, memory_order_acquire);
        if (!m) continue;
        total += m->bytes;
        ++*k;
        if (i == keep) continue;
        unsigned a = clock - atomic_load_explicit(&tl->los_used, memory_order_relaxed);
        if (*old == UINT32_MAX || a > *age) *old = i, *age = a;
    }
    return total;
}

/* Drop the least recently read tiles' masks (never keep's) until they fit budget. */
static void fit_budget(on_tree *t, size_t budget, uint32_t keep, unsigned clock, on_los_step_info *info)
{
    for (;;) {
        uint32_t old;
        unsigned age;
        size_t k;
        if (masks_now(t, keep, clock, &old, &age, &k) <= budget || old == UINT32_MAX) return;
        on_tile_losmap_drop(&t->tiles[old]);
        t->los_dropped++;
        info->dropped++;
    }
}

/* May a wanted tile's masks be built: they would fit (as big as the average kept), or some tile's have
 * not been read for ON_LOS_IDLE_STEPS calls (they make room)? */
static int may_build(const on_tree *t, size_t budget, unsigned clock)
{
    if (budget == ON_LOS_BUDGET_NONE) return 1;
    uint32_t old;
    unsigned age;
    size_t k, total = masks_now(t, UINT32_MAX, clock, &old, &age, &k);
    return (k == 0 || total + total / k <= budget) || age >= ON_LOS_IDLE_STEPS;
}

/* The next tile to build: a wanted one (lowest index), else with all the next by the scan's cursor. */
static int next_tile(on_tree *t, int all, uint32_t *out)
{
    if (atomic_load_explicit(&t->los_wanted, memory_order_relaxed) > 0)
        for (uint32_t i = 0; i < t->ntiles; i++) {
            if (!atomic_load_explicit(&t->tiles[i].los_want, memory_order_relaxed)) continue;
            if (tile_needs(t, i)) {
                *out = i;
                return 1;
            }
            unwant(t, i); /* (built since, unloaded or solid: nothing to build) */
        }
    if (!all) return 0;
    if (t->los_cursor_rev != t->revision) { /* a change may have dropped masks behind the cursor */
        t->los_cursor = 0;
        t->los_cursor_rev = t->revision;
    }
    for (; t->los_cursor < t->ntiles; t->los_cursor++)
        if (tile_needs(t, t->los_cursor)) {
            *out = t->los_cursor;
            return 1;
        }
    return 0;
}

on_status on_tree_los_step(on_tree *t, uint64_t work, double seconds, int all, on_los_step_info *info)
{
    on_los_step_info z = {0, 0, 0, 0, 0, 0};
    if (!info) info = &z;
    *info = z;
    if (t->no_los_masks) return ON_FAILURE | ON_INVALID;
    on_status st = ON_SUCCESS;
    uint64_t limit = work ? work : UINT64_MAX, used = 0;
    double deadline = seconds > 0 ? now_s() + seconds : 0;
    unsigned clock = atomic_load_explicit(&t->los_clock, memory_order_relaxed) + 1u;
    atomic_store_explicit(&t->los_clock, clock, memory_order_relaxed);
    size_t budget = on_tree_los_budget(t);
    if (budget != ON_LOS_BUDGET_NONE) fit_budget(t, budget, UINT32_MAX, clock, info); /* (a lower budget, masks
                                                                                  * built by reads or installed) */
    for (;;) {
        on_losbuild *lb = t->losbuild;
        if (lb && (lb->tile >= t->ntiles || !tile_needs(t, lb->tile) || t->tiles[lb->tile].salt != lb->salt)) {
            on_tree_losbuild_drop(t); /* the tile changed, was unloaded or has masks now */
            lb = NULL;
        }
        if (!lb) {
            uint32_t i;
            if (used >= limit || (deadline > 0 && now_s() >= deadline) || !may_build(t, budget, clock) ||
                !next_tile(t, all, &i))
                break;
            const on_tile *tl = &t->tiles[i];
            lb = on_tree_hook_add(t, &losmap_hook) == 0
                     ? build_begin(&tl->table, tl->solid, (uint32_t)t->p.depth)
                     : NULL;
            if (!lb) {
                st = ON_FAILURE | ON_NO_MEMORY;
                break;
            }
            lb->tile = i;
            lb->salt = tl->salt;
            t->losbuild = lb;
            used += 8;
        }
        int r = build_run(lb, &used, limit, deadline);
        if (r < 0) {
            on_tree_losbuild_drop(t);
            st = ON_FAILURE | ON_NO_MEMORY;
            break;
        }
        if (r == 0) break;
        uint32_t i = lb->tile;
        t->losbuild = NULL;
        on_losmap *m = build_finish(lb);
        if (!m) {
            st = ON_FAILURE | ON_NO_MEMORY;
            break;
        }
        unwant(t, i);
        if (budget != ON_LOS_BUDGET_NONE && m->bytes > budget) { /* never kept: read by the node table */
            on_losmap_free(m);
            atomic_store_explicit(&t->tiles[i].los_want, 2, memory_order_relaxed);
            continue;
        }
        on_losmap *none = NULL;
        atomic_store_explicit(&t->tiles[i].los_used, clock, memory_order_relaxed);
        if (!atomic_compare_exchange_strong_explicit(&t->tiles[i].los, &none, m, memory_order_acq_rel,
                                                     memory_order_acquire))
            on_losmap_free(m); /* (a reader built one meanwhile: masks not deferred any more) */
        info->built++;
        if (budget != ON_LOS_BUDGET_NONE) fit_budget(t, budget, i, clock, info);
    }
    info->work = used;
    info->wanted = (uint32_t)atomic_load_explicit(&t->los_wanted, memory_order_relaxed);
    info->partial = t->losbuild != NULL;
    if (all)
        for (uint32_t i = 0; i < t->ntiles; i++) info->left += (uint32_t)tile_needs(t, i);
    return st;
}
