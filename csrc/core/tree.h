/*
 * tree.h -- the sparse octree inside octonav (internal; the public face is octonav.h).
 *
 * A tree is a grid of tiles; each tile owns one node table (table.h). A node is stored iff it is
 * subdivided; its value is blockFlag (bit i = child i fully blocked, not stored). A child neither
 * flagged nor stored is free space. A tile with no stored root is wholly free, or wholly blocked
 * when its `solid` flag is set. Insertion prunes at once: a node whose 8 children all become blocked
 * is removed and flagged in its parent. Everything here works in nav space (leaf = 1 unit).
 */
#ifndef OCTONAV_TREE_H
#define OCTONAV_TREE_H

#include "octonav_core.h"
#include "codes.h"
#include "table.h"

#include <stdarg.h>
#include <stdatomic.h>

/* What the rooms above keep on a tree and its tiles is theirs: the tree holds the pointers (their types
 * declared only) and drops them through the hooks they register (on_tree_hook below), never naming
 * their code. */
struct on_boxset;
struct on_losmap;
struct on_celladj;
struct on_landmarks;
struct on_losbuild;
struct on_obstacles;
#define ON_TREE_HOOKS 16 /* room for every kind of hook there is (on_tree_hook): 7 so far */
typedef struct on_tile {
    on_table table;
    struct on_boxset *boxes; /* the prepared search graph (boxes.h); valid only for the salt it records */
    struct on_boxset *joins; /* the route planner's join set (boxes.h: the same boxes as `boxes`, which the
                        * search does not read: queries keep walking the cells), built by a streamer
                        * worker beside the tile's decode; freed by every change of the tile */
    uint32_t salt;     /* bumped on every replacement of this tile's contents */
    uint8_t solid;     /* root not stored and wholly blocked */
    uint8_t loaded;    /* 1 for tiles in memory (always 1 until streaming unloads tiles) */
    _Atomic(struct on_losmap *) los; /* line of sight's mask hierarchy (losmap.h), built on first use */
    _Atomic(struct on_celladj *) adj; /* the free cells' neighbour lists (celladj.h), built on first use */
    atomic_uchar los_want; /* deferred masks: a line of sight read the tile without them (losmap.c); 2: its
                            * masks are bigger than the budget (on_tree_set_los_budget), none kept, or a
                            * streamer's worker is building them (streamer_worker.c: until adopted) */
    atomic_uint los_used;  /* the tree's los_clock when a line of sight last read the tile (losmap.c) */
} on_tile;

struct on_tree {
    on_tree_params p;
    int n;             /* leaves per tile side: 1 << depth */
    uint32_t ntiles;
    uint64_t revision;
    double inv_scale;
    on_tile *tiles;
    on_streamer *streamer; /* the streamer bound to this tree (streamer.c), or NULL */
    struct on_area *areas;      /* area costs every search uses (areas.c), nareas of them */
    size_t nareas;
    struct on_obstacles *obstacles; /* temporary obstacles and the tiles they cover (obstacles.c), or NULL */
    int no_los_masks;      /* on_tree_set_los_masks(t, 0): line of sight reads the node table only */
    int los_defer;         /* on_tree_set_los_defer(t, 1): masks built by on_tree_los_step only */
    atomic_size_t los_wanted;         /* tiles whose los_want is set */
    struct on_losbuild *losbuild;     /* on_tree_los_step's build in progress, or NULL */
    uint32_t los_cursor;              /* on_tree_los_step's scan over every tile (all), */
    uint64_t los_cursor_rev;          /* restarted when the tree's revision moves */
    size_t los_budget;                /* on_tree_set_los_budget's bytes when los_budget_set is 1 */
    int los_budget_set;               /* 0: no budget (the default); 2: ON_LOS_BUDGET_SHARE of the tree's */
    atomic_uint los_clock;            /* on_tree_los_step's calls (the masks' last-read stamps) */
    uint64_t los_dropped;             /* masks dropped to keep the budget */
    int no_cell_adj;       /* 1: the search over the cells walks the tree for every neighbour list instead
                            * of reading the tiles' cell adjacencies (celladj.h; tests compare the two) */
    int border_free;       /* on_tree_set_border_free(t, 1): clearance.c counts outside the grid as free */
    struct on_landmarks *landmarks; /* the search's landmark distances (landmarks.h), or NULL */
    uint64_t landmarks_gen;         /* bumped whenever they are freed (a sliced search checks it) */
    _Atomic(const struct on_tree_hook *) hooks[ON_TREE_HOOKS]; /* on_tree_hook_add's, in the order added */
};

/* A hook: what a room above keeps on a tree (a cache, obstacle records, a streamer), as the functions
 * the tree calls at its events; any may be NULL. on_tree_destroy calls every hook's stop (a streamer
 * joins its workers: nothing may read the tree afterwards), then every drop (free all it keeps on t);
 * on_tree_touch calls every touched (tile `tile`'s contents changed or it was unloaded: drop what was
 * built from them); on_tree_stats_get every stats (add what it keeps to *st). In the order added. */
typedef struct on_tree_hook {
    void (*stop)(on_tree *t);
    void (*drop)(on_tree *t);
    void (*touched)(on_tree *t, uint32_t tile);
    void (*stats)(const on_tree *t, on_tree_stats *st);
} on_tree_hook;
/* Register h (a static object) on t before keeping anything on it; once is enough (adding it again
 * does nothing), and any thread may (a cache built by a search on a worker thread registers itself
 * there: the slots are filled by compare-and-swap). 0, or -1 when every slot is taken. */
int on_tree_hook_add(const on_tree *t, const on_tree_hook *h);

/* How a piece of geometry meets an axis-aligned cube (nav space, min corner and edge length). */
enum { ON_MISS = 0, ON_PARTIAL_HIT = 1, ON_FULL_HIT = 2 };
/* How the box [lo, hi] meets the cube at m of side s (ON_MISS, ON_PARTIAL_HIT, ON_FULL_HIT): the rule
 * of on_tree_add_box and of temporary obstacles (geometry.c). */
int on_box_classify(const double lo[3], const double hi[3], const double m[3], double s);
typedef int (*on_classify_fn)(void *ud, const double min[3], double size);

/* Insert geometry described by a classifier into every tile overlapping the nav-space box
 * [lo, hi] (the geometry's bounds). Leaves hit partially are blocked; nodes hit fully are blocked
 * whole and their subtrees freed. */
on_status on_tree_insert(on_tree *t, const double lo[3], const double hi[3], on_classify_fn fn, void *ud);
/* The same into one tile (a loaded tile that is not solid; others are left alone). */
on_status on_tree_insert_tile(on_tree *t, uint32_t tile, on_classify_fn fn, void *ud);
/* The tiles the nav-space box [lo, hi] touches under on_tree_insert's rule (a box starting exactly on
 * a tile border touches the last leaves of the tile below too): a[k]..b[k] on each axis, clamped to
 * the grid. 0 when the box lies wholly outside the grid or has a NaN bound (a and b then clamped all
 * the same), else 1. */
int on_tree_tile_range(const on_tree *t, const double lo[3], const double hi[3], int a[3], int b[3]);

/* A query-local, direct-mapped cache of node-table lookups: neighbouring cells share ancestors, so a
 * search finds most of its lookups here instead of probing the (large, uncached) tables. Valid for
 * one tree revision; on_tree_neighbors_cached resets it when the tree changed.
 * 2^ON_LCACHE_BITS entries of 10 bytes. 12 -> 10 bits (session 28; issue 31 goal 3): 40,968 -> 10,248
 * bytes a query, which every query holds (the streamed seed's 100 navigators held 38-50 queries); the
 * searches' lookups fit: make bench-query-ir DC1 / Complex / A1 402,486 / 417,984 / 414,560 at 12 bits,
 * 402,487 / 417,983 / 414,533 at 11, 402,483 / 417,986 / 414,563 at 10 instructions a query. */
#ifndef ON_LCACHE_BITS
#define ON_LCACHE_BITS 10
#endif
typedef struct on_lcache {
    uint64_t revision;
    uint64_t key[1 << ON_LCACHE_BITS];   /* tile << 32 | code */
    int16_t val[1 << ON_LCACHE_BITS];    /* blockFlag, or -1: not stored */
} on_lcache;
void on_lcache_reset(on_lcache *c, const on_tree *t);
/* Reset c (may be NULL) when the tree changed since it was filled. */
void on_lcache_check(on_lcache *c, const on_tree *t);
on_status on_tree_neighbors_cached(const on_tree *t, on_lcache *c, on_cell cell, on_cell *out, uint8_t *faces,
                                   size_t cap, size_t *count);
/* The same without the neighbours across face `skip` (0..5 = -x,+x,-y,+y,-z,+z; -1: none): a search
 * knows the node it came from, whose cell covers that face when it is no smaller. */
on_status on_tree_neighbors_skip(const on_tree *t, on_lcache *c, on_cell cell, int skip, on_cell *out, uint8_t *faces,
                                 size_t cap, size_t *count);
/* The neighbours across face `face` alone (0..5; none beyond the map's edge), in the same order: the
 * cell adjacency's answer for a face on a tile border (celladj.h). */
on_status on_tree_neighbors_face(const on_tree *t, on_lcache *c, on_cell cell, int face, on_cell *out, uint8_t *faces,
                                 size_t cap, size_t *count);

/* A node-table lookup through an optional cache c (may be NULL; the caller has run on_lcache_check):
 * the node's value, or -1 when it is not stored. Every user of a cache fills it through this. */
static inline int on_lcache_lookup(const on_tree *t, on_lcache *c, uint32_t tile, uint32_t code)
{
    if (!c) return on_table_get(&t->tiles[tile].table, code);
    uint64_t key = (uint64_t)tile << 32 | code;
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - ON_LCACHE_BITS));
    if (c->key[i] == key) return c->val[i];
    c->key[i] = key;
    c->val[i] = (int16_t)on_table_get(&t->tiles[tile].table, code);
    return c->val[i];
}

/* Tile index helpers. */
static inline uint32_t on_tile_index(const on_tree *t, int i, int j, int k)
{
    return (uint32_t)i + (uint32_t)t->p.tiles[0] * ((uint32_t)j + (uint32_t)t->p.tiles[1] * (uint32_t)k);
}
static inline void on_tile_coords(const on_tree *t, uint32_t tile, int ijk[3])
{
    ijk[0] = (int)(tile % (uint32_t)t->p.tiles[0]);
    ijk[1] = (int)((tile / (uint32_t)t->p.tiles[0]) % (uint32_t)t->p.tiles[1]);
    ijk[2] = (int)(tile / ((uint32_t)t->p.tiles[0] * (uint32_t)t->p.tiles[1]));
}
/* The tile across face `face` (0..5 = -x,+x,-y,+y,-z,+z) of tile `tile`, or -1 at the edge of the map. */
static inline int64_t on_tile_beyond(const on_tree *t, uint32_t tile, int face)
{
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    int axis = face >> 1;
    ijk[axis] += (face & 1) ? 1 : -1;
    if (ijk[axis] < 0 || ijk[axis] >= t->p.tiles[axis]) return -1;
    return on_tile_index(t, ijk[0], ijk[1], ijk[2]);
}
static inline uint32_t on_root_code(const on_tree *t) { return on_code_make(0, 0, 0, (uint32_t)t->p.depth); }

/* Leaf-lattice state of a global leaf coordinate: 1 free, 0 blocked (outside counts as blocked).
 * When free and cell is not NULL, the free cell containing it. */
int on_tree_leaf_free(const on_tree *t, int64_t x, int64_t y, int64_t z, on_cell *cell);

/* The same through a lookup cache (lc may be NULL; the caller has run on_lcache_check). */
int on_tree_leaf_free_cached(const on_tree *t, on_lcache *lc, int64_t x, int64_t y, int64_t z, on_cell *cell);

/* The same, starting from the lowest common ancestor with a known free cell `near` (fewer lookups
 * when the leaf is close to it, as in a walk). */
int on_tree_leaf_free_near(const on_tree *t, on_lcache *lc, on_cell near, int64_t x, int64_t y, int64_t z,
                           on_cell *cell);

/* Global nav-space min corner of a cell, in leaves. */
void on_tree_cell_nav(const on_tree *t, on_cell c, int64_t min[3], int64_t *size);

/* on_tree_visit over one loaded tile (returns 1 when fn stopped it). */
int on_tree_visit_tile(const on_tree *t, uint32_t tile, on_cell_visit_fn fn, void *ud);

/* (over a tile's contents not in a tree: on_table_visit, table.h) */

/* (a tile's box sets, tile.boxes and tile.joins: on_tile_boxes and on_tile_joins, boxes.h) */

/* Block one free cell (set its bit in the parent, prune upward). */
on_status on_tree_block_cell(on_tree *t, on_cell c);

/* Decode a tile blob into a fresh table without touching any tree (thread-safe: workers use it).
 * On failure *out is empty. */
on_status on_tile_decode(int depth, const uint8_t *buf, size_t len, on_table *out, uint8_t *solid);
/* The same for a tile file, which must record the position ijk (else ON_MISPLACED); and the largest
 * tile file of a depth (the limit it is read with). */
on_status on_tile_file_decode(int depth, const int ijk[3], const uint8_t *buf, size_t len, on_table *out,
                              uint8_t *solid);
size_t on_tile_file_max_bytes(int depth);
/* The identity of a tile file's blob (pack.blob_id, the tag its graph carries): the CRC-32 the blob
 * ends with, which on_tile_file_decode has checked; 0 for a file too short to hold one. */
uint32_t on_tile_file_tag(const uint8_t *buf, size_t len);
/* Install a decoded table as a tile's contents (takes the table; *tab is left empty), or unload a
 * tile (its memory freed, loaded = 0). Both bump the salt. Caller's thread only. */
void on_tree_install_tile(on_tree *t, uint32_t tile, on_table *tab, uint8_t solid);
void on_tree_unload_tile(on_tree *t, uint32_t tile);
#include "fileio.h" /* on_crc32, on_read_file, on_parse_error */

/* Mark a change: bumps the revision and the tile's salt, and calls the hooks' touched. */
void on_tree_touch(on_tree *t, uint32_t tile);

/* World <-> nav conversion. */
static inline void on_to_nav(const on_tree *t, const double w[3], double n[3])
{
    for (int i = 0; i < 3; i++) n[i] = (w[i] - t->p.origin[i]) * t->inv_scale;
}
static inline void on_to_world(const on_tree *t, const double n[3], double w[3])
{
    for (int i = 0; i < 3; i++) w[i] = t->p.origin[i] + n[i] * t->p.scale;
}

#endif
