/*
 * losmap.h -- a tile's occupancy as a hierarchy of 64-bit masks, for line of sight (raycast.c).
 *
 * The node table answers "which free cell holds this leaf" with a hash lookup per layer; the walk asks
 * that once or more for every cell it crosses. A losmap answers it with a few bit operations per two
 * layers: a node of level L covers 4^L leaves and holds two masks over its 4 x 4 x 4 children (any:
 * the child holds a blocked leaf; mixed: it holds a free leaf too, so any and not mixed is wholly
 * blocked) and the index of its first mixed child (the others follow in bit order, so child c is at
 * base + the mixed bits below c). A level-1 node is a brick: one 64-bit mask of its 4 x 4 x 4 leaves
 * (1 = blocked). The top node has level max(2, ceil(depth / 2)); where it covers more than the tile,
 * the rest reads as blocked.
 * Child c = x | y << 2 | z << 4 (x, y, z in 0..3). The free cell of a free leaf is the octree's, read
 * off the masks: the largest aligned empty cube holding the leaf (an empty child, or the empty 2 x 2 x
 * 2 group of children around it).
 *
 * Life: built from the node table (on_table_get, so a map's bounds read as blocked) the first time a
 * line of sight reads the tile, published in the tile with an atomic compare-and-swap (concurrent
 * readers on worker threads may race to build; one copy wins, the others are freed unused), and freed
 * by on_tree_touch, which every change to a tile's contents calls on the writer's thread (edits,
 * obstacles, tile installs and unloads, clear_tile): a losmap present is always the tile's contents.
 * on_tree_los_step also frees the least recently read tiles' losmaps to keep their bytes within the
 * tree's budget (on_tree_set_los_budget): each read stamps the tile with the tree's los_clock, which
 * every on_tree_los_step call advances.
 */
#ifndef OCTONAV_LOSMAP_H
#define OCTONAV_LOSMAP_H

#include "tree.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct on_losnode {
    uint64_t any, mixed; /* children holding a blocked leaf; those of them not wholly blocked */
    uint32_t base; /* index of the first mixed child (in node[] above level 2, in brick[] at level 2) */
} on_losnode;

typedef struct on_losmap {
    uint32_t top;      /* level of node[0] */
    uint32_t depth;    /* the tile's depth (the layer of a wholly free tile's cell) */
    uint32_t nnode, nbrick;
    on_losnode *node;  /* node[0] is the top */
    uint64_t *brick;
    size_t mapnode, mapbrick; /* node[] / brick[]: bytes mapped, 0: malloc'd (every published one) */
    uint32_t grows;    /* times its build grew node[] or brick[] after sizing them from the table's count
                        * (0: the bound nnode <= count + 1, nbrick <= count held; no build step realloc'd) */
    size_t bytes;      /* everything it holds */
    /* the region of the tile inside the map (tile-local leaves [0, reg)), and the box around every
     * blocked leaf in it ([lo, hi); empty when lo[0] >= hi[0]): a segment strictly inside the region
     * and clear of the box is clear */
    uint32_t reg[3];
    int32_t lo[3], hi[3];
    double dreg[3], dlo[3], dhi[3]; /* the same as doubles */
    /* the lowest node holding the whole region (level rlevel >= 2, through child 0 from the top) and
     * the nodes above it: a descent for a leaf below 4^rlevel on every axis starts there */
    uint32_t rlevel;
    uint32_t rpath[ON_MAX_DEPTH / 2 + 3]; /* rpath[L]: index in node[] of the level-L node, L >= rlevel */
    int box_small;     /* the box leaves most of the region out (worth a test before a walk) */
    int hwpop;         /* on_los_popcnt_ok() when built: the descents rank by the popcnt instruction */
} on_losmap;

#define ON_LOS_LEVELS ((ON_MAX_DEPTH + 1) / 2 + 2) /* room for levels 0 .. top (top >= 2) */

/* Start a descent for tile-local leaf (x, y, z) from the top: the level to start at, with chain[] set
 * from the top down to it (the region's node when the leaf is below it, else the top). */
static inline uint32_t on_losmap_start(const on_losmap *m, const on_losnode **chain, uint32_t x, uint32_t y,
                                       uint32_t z)
{
    uint32_t L = m->top;
    chain[L] = m->node;
    if (((x | y | z) >> (2 * m->rlevel)) == 0)
        while (L > m->rlevel) {
            L--;
            chain[L] = &m->node[m->rpath[L]];
        }
    return L;
}

/* The tile's losmap, built now when it has none; NULL when it cannot be built (out of memory), the
 * tree's masks are off (on_tree_set_los_masks) or the tile is solid or not loaded (the walk reads those as blocked without it). Thread-safe for readers
 * while no writer runs. The published one's load inline (a walk asks at its start), the build out of
 * line (on_tile_losmap_slow). */
const on_losmap *on_tile_losmap_slow(const on_tree *t, uint32_t tile);
static inline const on_losmap *on_tile_losmap(const on_tree *t, uint32_t tile)
{
    on_tile *tl = &((on_tree *)t)->tiles[tile]; /* (its atomics only) */
    const on_losmap *m = atomic_load_explicit(&tl->los, memory_order_acquire);
    if (!m) return on_tile_losmap_slow(t, tile);
    /* read now: the budget drops the least recently read tiles' masks (on_tree_set_los_budget) */
    unsigned c = atomic_load_explicit(&((on_tree *)t)->los_clock, memory_order_relaxed);
    if (atomic_load_explicit(&tl->los_used, memory_order_relaxed) != c)
        atomic_store_explicit(&tl->los_used, c, memory_order_relaxed);
    return m;
}

/* A build in progress (on_tree_los_step); freed with the tree (on_tree_losbuild_drop). */
typedef struct on_losbuild on_losbuild;
void on_tree_losbuild_drop(on_tree *t);

/* Free a tile's losmap (the writer's side: on_tree_touch and on_tree_destroy, through the hook). */
void on_tile_losmap_drop(on_tile *tl);

/* A losmap built from a tile's node table `tab` (solid: the tile's solid flag) at `depth`, touching no
 * tree: any thread (the streamer's workers build one beside a tile's decode). NULL when out of memory. */
on_losmap *on_losmap_build(const on_table *tab, uint8_t solid, uint32_t depth);
void on_losmap_free(on_losmap *m);
/* A build's node and brick arrays (losmap_arrays.c): n elements of elem bytes (n >= 1), an array of 64 KB
 * or more an anonymous mapping of its own (*map: the bytes mapped; 0: malloc'd); NULL when out of
 * memory. on_losarr_free takes the map on_losarr_alloc left. */
void *on_losarr_alloc(size_t n, size_t elem, size_t *map);
void on_losarr_free(void *p, size_t map);

/* Give tile `tile` m, built from the contents it holds now (replacing and freeing any losmap it had):
 * the writer's side, right after the install of those contents (the next change drops it,
 * on_tree_touch). */
void on_tree_losmap_adopt(on_tree *t, uint32_t tile, on_losmap *m);

/* Bytes held by the losmaps built so far (and, when tiles is not NULL, how many tiles have one). */
size_t on_tree_losmap_bytes(const on_tree *t, size_t *tiles);

/* Rank of bit c among the set bits of m below it: a software count unless the build itself targets
 * popcnt (__POPCNT__); on_los_rank_hw uses the instruction where the CPU has it (chosen at run time). */
static inline uint32_t on_los_rank(uint64_t m, unsigned c)
{
    uint64_t x = m & ((1ull << c) - 1u);
#if defined(__POPCNT__)
    return (uint32_t)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* On x86-64 built without popcnt (the default), the instruction is used where the CPU has it, chosen
 * at run time: a losmap records what the CPU it was built on offers (on_los_popcnt_ok, hwpop), and
 * the descents branch on that (the same branch every time) to one popcnt instead of the dozen
 * instructions above (measured with callgrind: about 8,000 instructions of a DC1 query). Elsewhere
 * hwpop is 0 and the portable rank is used. */
#if defined(__x86_64__) && !defined(__POPCNT__) && (defined(__GNUC__) || defined(__clang__))
#define ON_LOS_HWPOP 1
#else
#define ON_LOS_HWPOP 0
#endif

/* Does this CPU have popcnt (and this build use it through on_los_rank_hw)? */
int on_los_popcnt_ok(void);

/* on_los_rank, by the popcnt instruction when hw (a losmap's hwpop) is set. */
static inline __attribute__((always_inline)) uint32_t on_los_rank_hw(int hw, uint64_t m, unsigned c)
{
#if ON_LOS_HWPOP
    if (hw) {
        uint64_t x = m & ((1ull << c) - 1u), r;
        __asm__("popcnt %1, %0" : "=r"(r) : "r"(x) : "cc");
        return (uint32_t)r;
    }
#else
    (void)hw;
#endif
    return on_los_rank(m, c);
}

/* Tile-local leaf coordinate v (< 2^ON_MAX_DEPTH) with its bit pairs spread 6 bits apart (pair k, bits
 * 2k and 2k + 1, at bits 6k and 6k + 1): on_los_spread[x] | on_los_spread[y] << 2 | on_los_spread[z] << 4
 * holds leaf (x, y, z)'s child number in its level-L node at bits 6 (L - 1) .. 6 (L - 1) + 5, every
 * level's at once (a descent reads each with a shift and a mask; measured with callgrind: about 15
 * instructions fewer a descent on A1, whose descents take 2.7 levels). */
#define ON_LOS_SPREAD_N 512
extern const uint32_t on_los_spread[ON_LOS_SPREAD_N];
_Static_assert((1 << ON_MAX_DEPTH) <= ON_LOS_SPREAD_N, "on_los_spread covers a tile's leaf coordinates");

/* The 2 x 2 x 2 group of children (or leaves of a brick) around child c. */
static inline uint64_t on_los_group(unsigned c) { return 0x330033ull << (c & 42u); }

/* Tile-local leaf (x, y, z) (inside the tile): the layer of its free cell, or -1 when blocked. The
 * descent starts at chain[L], a node of level L (2 <= L <= top) holding the leaf (chain[top] is
 * node[0]), and writes the nodes it passes below into chain[L - 1 ..] (so a next leaf starts at the
 * lowest node the two share). When the answer comes from a brick and `brick` is not NULL, *brick gets the
 * brick's mask (a next leaf in the same brick is read off it), and *stop (may be NULL) the level of the
 * node that answered (chain[*stop ..] then holds the leaf's nodes; 2 with *brick set: its brick). x, y and
 * z are below 2^depth (on_los_spread's bound). Inlined
 * everywhere: the walk's loop keeps its floating-point state in registers across it. */
static inline __attribute__((always_inline)) int on_losmap_leaf_at(const on_losmap *m, const on_losnode **chain,
                                                                   uint32_t L, uint32_t x, uint32_t y, uint32_t z,
                                                                   uint64_t *brick, uint32_t *stop)
{
    const on_losnode *nd = chain[L];
    if (stop) *stop = L;
    if (!nd->any) return (int)m->depth; /* (only the top of a wholly free tile) */
    /* every level's child number at once (on_los_spread): a level's is a shift and a mask */
    uint32_t cn = on_los_spread[x] | on_los_spread[y] << 2 | on_los_spread[z] << 4;
    for (;; L--) {
        unsigned c = (cn >> (6 * (L - 1))) & 63u;
        uint64_t bit = 1ull << c;
        if (stop) *stop = L;
        if (!(nd->any & bit)) return (nd->any & on_los_group(c)) ? (int)(2 * (L - 1)) : (int)(2 * (L - 1)) + 1;
        if (!(nd->mixed & bit)) return -1;
        uint32_t i = nd->base + on_los_rank_hw(m->hwpop, nd->mixed, c);
        if (L == 2) {
            uint64_t b = m->brick[i];
            if (brick) *brick = b;
            unsigned v = cn & 63u;
            if (b & (1ull << v)) return -1;
            return (b & on_los_group(v)) ? 0 : 1;
        }
        nd = &m->node[i];
        chain[L - 1] = nd;
    }
}

/* on_losmap_leaf_at without the level it stopped at. */
static inline __attribute__((always_inline)) int on_losmap_leaf_from(const on_losmap *m, const on_losnode **chain,
                                                                     uint32_t L, uint32_t x, uint32_t y, uint32_t z,
                                                                     uint64_t *brick)
{
    return on_losmap_leaf_at(m, chain, L, x, y, z, brick, NULL);
}

#endif
