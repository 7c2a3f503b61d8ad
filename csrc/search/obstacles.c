/*
 * obstacles.c -- temporary obstacles (octonav.h, "temporary obstacles"): boxes blocked until removed.
 *
 * The tree keeps, for every loaded tile an obstacle in place overlaps, a snapshot of the tile as it
 * was before the first of them (its node table copied slot for slot, and its solid flag), the number
 * of obstacles covering it and the salt the tile had after the last obstacle operation on it. A tile
 * whose salt moved on by other means (an edit, clear, reload or unload) is snapshotted again as it is
 * then, so what it holds is never lost. Tiles that had a valid prepared graph before a change are
 * prepared again after it.
 *
 * Removing an obstacle gives each of its tiles the contents it would have had were the obstacle never
 * added: what readers see (every node and value, the encoded bytes) is the same; the hash table's
 * slot order may differ, which nothing reads. It works where the box is (issue 30 item 11: rebuilding
 * the tile from the snapshot and inserting every obstacle left again made removal quadratic per tile,
 * 1.6 ms each with 2,000 obstacles on one tile). A tile's contents are a function of its blocked
 * leaves alone (tree.h's storage rule: a node is stored iff it is neither wholly free nor wholly
 * blocked) and an obstacle only adds blocked leaves, so the tile is the same whatever order its
 * obstacles came in. Removing one walks the nodes its box touches (restore): where the box covers a
 * node whole, the node's subtree becomes the snapshot's; where it covers part, the children are
 * restored one by one and the node is written again from them (stored, blocked in its parent, or
 * dropped as free). Then the obstacles left whose boxes overlap the removed one's are blocked again,
 * in the order added (the rest of the tile still has theirs). Obstacles are found by id with a
 * binary search (ids grow in the order added); a removed one is marked dead, the arrays compacted
 * when half of them are; the scan for overlapping boxes reads a compact float copy of them, rounded
 * outwards. An allocation failing half way rebuilds the tile the long way (snapshot, then every
 * obstacle covering it).
 *
 * An obstacle covers every tile its inflated box touches (on_tree_tile_range), loaded or not: a tile
 * the streamer installs is snapshotted as read from its file and the obstacles covering it are
 * blocked in it, in order: on the worker (on_obstacles_copy_over when the load is queued,
 * on_obstacles_apply_copy on the worker, on_obstacles_adopt at the install when they are still the
 * same) or at the install (on_obstacles_tile_loaded); on_obstacles_tile_unloaded drops an unloaded
 * tile's snapshot. So an obstacle survives its tiles streaming out and in, and removing it gives back
 * the bytes the file held.
 */
#include "obstacles.h"
#include "obstacles_records.h"
#include "boxes.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef on_obstacle obstacle; /* (the records' types: obstacles_records.h) */
typedef on_obstacle_snapshot snapshot;

/* ---- helpers ----------------------------------------------------------------------------------- */

/* The rule of on_tree_add_box (on_box_classify, geometry.c). */
static int classify(void *ud, const double m[3], double s)
{
    const obstacle *b = ud;
    return on_box_classify(b->lo, b->hi, m, s);
}

/* classify's rule inlined for the removal's walk (restore classifies every node it visits against
 * the removed box and each candidate): on_box_classify's, geometry.c, the same comparisons. */
static inline int box_hit(const obstacle *b, const double m[3], double s)
{
    int full = 1;
    for (int i = 0; i < 3; i++) {
        double cmin = m[i], cmax = m[i] + s, lo = b->lo[i], hi = b->hi[i];
        if (lo == hi) {
            if (lo < cmin || lo > cmax) return ON_MISS;
            full = 0;
        } else {
            if (!(lo < cmax && hi > cmin)) return ON_MISS;
            if (!(lo <= cmin && hi >= cmax)) full = 0;
        }
    }
    return full ? ON_FULL_HIT : ON_PARTIAL_HIT;
}

static snapshot *find_snap(struct on_obstacles *o, uint32_t tile)
{
    for (size_t i = 0; i < o->nsnap; i++)
        if (o->snap[i].tile == tile) return &o->snap[i];
    return NULL;
}

static void drop_snap(struct on_obstacles *o, snapshot *s)
{
    on_table_free(&s->table);
    *s = o->snap[--o->nsnap];
}

static int covers(const on_tree *t, const obstacle *b, uint32_t tile)
{
    if (!b->any) return 0;
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    for (int k = 0; k < 3; k++)
        if (ijk[k] < b->a[k] || ijk[k] > b->z[k]) return 0;
    return 1;
}

/* Is the obstacle in slot i in place and covering the tile? */
static int live_covers(const on_tree *t, const struct on_obstacles *o, size_t i, uint32_t tile)
{
    return !o->ob[i].dead && covers(t, &o->ob[i], tile);
}

/* How many obstacles in place cover the tile. */
static size_t count_covering(const on_tree *t, const struct on_obstacles *o, uint32_t tile)
{
    size_t c = 0;
    for (size_t i = 0; i < o->n; i++) c += (size_t)live_covers(t, o, i, tile);
    return c;
}

/* Does an obstacle in place cover the tile? */
static int covered(const on_tree *t, const struct on_obstacles *o, uint32_t tile)
{
    for (size_t i = 0; i < o->n; i++)
        if (live_covers(t, o, i, tile)) return 1;
    return 0;
}

/* The slot of obstacle id (in place or dead), or o->n. */
static size_t find_slot(const struct on_obstacles *o, uint32_t id)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->ob[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < o->n && o->ob[lo].id == id ? lo : o->n;
}

/* The float copy of slot i's box, rounded outwards (a superset: it only finds candidates). */
static void set_fbox(struct on_obstacles *o, size_t i)
{
    const obstacle *b = &o->ob[i];
    for (int k = 0; k < 3; k++) {
        o->fbox[k * o->fcap + i] = nextafterf((float)b->lo[k], -INFINITY);
        o->fbox[(3 + k) * o->fcap + i] = nextafterf((float)b->hi[k], INFINITY);
    }
}

/* Room for n slots in fbox. -1 on allocation failure (fbox unchanged). */
static int fbox_reserve(struct on_obstacles *o, size_t n)
{
    if (n <= o->fcap) return 0;
    size_t cap = o->fcap ? o->fcap : 64;
    while (cap < n) cap *= 2;
    if (cap > SIZE_MAX / 6 / sizeof(float)) return -1;
    float *f = malloc(6 * cap * sizeof *f);
    if (!f) return -1;
    for (size_t k = 0; k < 6 && o->fcap; k++) memcpy(f + k * cap, o->fbox + k * o->fcap, o->n * sizeof *f);
    free(o->fbox);
    o->fbox = f;
    o->fcap = cap;
    return 0;
}

/* Slot i dead: its float box empty (overlaps nothing); the arrays compacted when half are dead. */
static void kill_slot(struct on_obstacles *o, size_t i)
{
    o->ob[i].dead = 1;
    for (int k = 0; k < 3; k++) {
        o->fbox[k * o->fcap + i] = INFINITY;
        o->fbox[(3 + k) * o->fcap + i] = -INFINITY;
    }
    if (++o->ndead < 64 || 2 * o->ndead < o->n) return;
    size_t m = 0;
    for (size_t j = 0; j < o->n; j++) {
        if (o->ob[j].dead) continue;
        o->ob[m] = o->ob[j];
        for (size_t k = 0; k < 6; k++) o->fbox[k * o->fcap + m] = o->fbox[k * o->fcap + j];
        m++;
    }
    o->n = m;
    o->ndead = 0;
}

/* The tile's snapshot, made now when it has none or when the tile changed by other means since the
 * last obstacle operation (then it holds what the tile holds now). NULL on allocation failure. */
static snapshot *snap_for(on_tree *t, struct on_obstacles *o, uint32_t tile)
{
    snapshot *s = find_snap(o, tile);
    on_tile *tl = &t->tiles[tile];
    if (s && s->salt == tl->salt) return s;
    on_table copy;
    if (on_table_copy(&tl->table, &copy) != 0) return NULL;
    if (!s) {
        if (on_grow((void **)&o->snap, &o->snapcap, o->nsnap + 1, sizeof *o->snap) != 0) {
            on_table_free(&copy);
            return NULL;
        }
        s = &o->snap[o->nsnap++];
        s->tile = tile;
        s->nobs = count_covering(t, o, tile);
    } else {
        on_table_free(&s->table);
    }
    s->table = copy;
    s->solid = tl->solid;
    s->salt = tl->salt;
    return s;
}

/* Tile `tile` rebuilt: its snapshot, then every obstacle in place covering it, in order; prepared
 * again when it was. -1 on allocation failure. */
static int rebuild(on_tree *t, struct on_obstacles *o, snapshot *s)
{
    uint32_t tile = s->tile;
    int prepared = on_tile_boxes(t, tile) != NULL;
    on_table copy;
    if (on_table_copy(&s->table, &copy) != 0) return -1;
    on_tree_install_tile(t, tile, &copy, s->solid);
    int rc = 0;
    for (size_t i = 0; i < o->n && rc == 0; i++)
        if (live_covers(t, o, i, tile)) {
            o->work++;
            if (on_failed(on_tree_insert_tile(t, tile, classify, &o->ob[i]))) rc = -1;
        }
    if (prepared && on_failed(on_tree_prepare(t, tile, NULL))) rc = -1;
    s->salt = t->tiles[tile].salt;
    return rc;
}

/* ---- removing one obstacle from a tile, where its box is (see the top of this file) ---------------- */

enum { ST_FREE, ST_BLOCKED, ST_MIXED };

typedef struct restore_ctx {
    on_table *cur;
    const on_table *snap;
    const obstacle *gone;
    const obstacle *ob;  /* the obstacles (o->ob): the candidates are slots of it */
    uint32_t *lists;     /* per level of the walk, room for ncand slots: the candidates touching a node */
    size_t ncand;
    double base[3]; /* nav-space min corner of the tile */
    int failed;     /* an allocation failed */
    uint64_t work;  /* nodes visited plus candidates tested */
} restore_ctx;

/* The state of child i (code `child`) of a node in state st with value v, as readers see it (its
 * value in *cv when stored). */
static int child_state(const on_table *tab, int st, int v, uint32_t child, unsigned i, int *cv)
{
    if (st != ST_MIXED) return st;
    if (v & (1 << i)) return ST_BLOCKED;
    if (on_code_layer(child) == 0) return ST_FREE; /* (leaves are never stored) */
    int x = on_table_get(tab, child);
    if (x < 0) return ST_FREE;
    *cv = x;
    return ST_MIXED;
}

/* Remove a node readers see stored (value v) and its stored descendants. */
static void drop_node(on_table *tab, uint32_t code, int v)
{
    on_table_remove(tab, code);
    if (on_code_layer(code) <= 1) return;
    for (unsigned i = 0; i < 8; i++) {
        if (v & (1 << i)) continue;
        uint32_t child = on_code_child(code, i);
        int cv = on_table_get(tab, child);
        if (cv >= 0) drop_node(tab, child, cv);
    }
}

/* Store the snapshot's node `code` (value v) and its stored descendants into cur (none of them there). */
static int copy_node(on_table *cur, const on_table *snap, uint32_t code, int v)
{
    if (on_table_insert(cur, code, (uint8_t)v) != 0) return -1;
    if (on_code_layer(code) <= 1) return 0;
    for (unsigned i = 0; i < 8; i++) {
        if (v & (1 << i)) continue;
        uint32_t child = on_code_child(code, i);
        int cv = on_table_get(snap, child);
        if (cv >= 0 && copy_node(cur, snap, child, cv) != 0) return -1;
    }
    return 0;
}

/* Node `code`, in state cs (value cv) in the tile and ss (sv) in the snapshot, restored where the
 * removed box reaches it: there the snapshot's leaves, blocked too where a candidate (an obstacle left
 * overlapping the box; cl[0..nc): those touching the node's parent) blocks them, as inserting the
 * obstacles left would; elsewhere the node as it is. Returns its new state (*nv: its value when
 * mixed); the table holds it accordingly (stored iff mixed). */
static int restore(restore_ctx *c, uint32_t code, int cs, int cv, int ss, int sv, const uint32_t *cl, size_t nc,
                   int level, int *nv)
{
    *nv = cv;
    c->work += 1 + nc;
    if (cs != ST_MIXED && cs == ss) return cs; /* wholly free, or blocked before any obstacle */
    uint32_t layer = on_code_layer(code);
    double size = (double)(1u << layer);
    double mn[3] = {c->base[0] + on_code_x(code), c->base[1] + on_code_y(code), c->base[2] + on_code_z(code)};
    int hit = box_hit(c->gone, mn, size);
    if (hit == ON_MISS) return cs;
    /* the candidates touching this node; one covering it whole blocks it whole */
    uint32_t *mine = c->lists + (size_t)level * c->ncand;
    size_t nm = 0;
    for (size_t k = 0; k < nc; k++) {
        int h = box_hit(&c->ob[cl[k]], mn, size);
        if (h == ON_FULL_HIT) {
            if (cs == ST_MIXED) drop_node(c->cur, code, cv);
            return ST_BLOCKED;
        }
        if (h != ON_MISS) mine[nm++] = cl[k];
    }
    if (hit == ON_FULL_HIT && nm == 0) { /* the snapshot's subtree */
        if (cs == ST_MIXED) drop_node(c->cur, code, cv);
        if (ss == ST_MIXED && copy_node(c->cur, c->snap, code, sv) != 0) c->failed = 1;
        *nv = sv;
        return ss;
    }
    unsigned bf = 0;
    int mixed = 0;
    for (unsigned i = 0; i < 8 && !c->failed; i++) {
        uint32_t child = on_code_child(code, i);
        int ccv = 0, scv = 0, r, rv;
        int ccs = child_state(c->cur, cs, cv, child, i, &ccv);
        int scs = child_state(c->snap, ss, sv, child, i, &scv);
        if (layer == 1) { /* a leaf: any hit blocks it (insert_rec's rule) */
            double lm[3] = {c->base[0] + on_code_x(child), c->base[1] + on_code_y(child), c->base[2] + on_code_z(child)};
            r = ccs;
            if (hit == ON_FULL_HIT || box_hit(c->gone, lm, 1.0) != ON_MISS) {
                r = scs;
                for (size_t k = 0; k < nm && r != ST_BLOCKED; k++)
                    if (box_hit(&c->ob[mine[k]], lm, 1.0) != ON_MISS) r = ST_BLOCKED;
            }
        } else {
            r = restore(c, child, ccs, ccv, scs, scv, mine, nm, level + 1, &rv);
        }
        if (r == ST_BLOCKED) bf |= 1u << i;
        else if (r == ST_MIXED) mixed = 1;
    }
    if (c->failed) return cs;
    if (bf == 0xff || (bf == 0 && !mixed)) {
        on_table_remove(c->cur, code);
        return bf ? ST_BLOCKED : ST_FREE;
    }
    uint8_t *p = on_table_find(c->cur, code);
    if (p) *p = (uint8_t)bf;
    else if (on_table_insert(c->cur, code, (uint8_t)bf) != 0) c->failed = 1;
    *nv = (int)bf;
    return ST_MIXED;
}

/* Marks in m[0..n) the slots from i0 whose float box overlaps [lo, hi] (closed); branch-free, so it
 * vectorizes. Returns how many. */
static size_t fbox_scan(const struct on_obstacles *o, size_t i0, size_t n, const float lo[3], const float hi[3],
                        uint8_t *m)
{
    const size_t c = o->fcap;
    const float *x0 = o->fbox + i0, *y0 = x0 + c, *z0 = y0 + c, *x1 = z0 + c, *y1 = x1 + c, *z1 = y1 + c;
    size_t hits = 0;
    for (size_t i = 0; i < n; i++) {
        m[i] = (uint8_t)((x0[i] <= hi[0]) & (x1[i] >= lo[0]) & (y0[i] <= hi[1]) & (y1[i] >= lo[1]) & (z0[i] <= hi[2]) &
                         (z1[i] >= lo[2]));
        hits += m[i];
    }
    return hits;
}


/* The tile of snapshot s without obstacle `gone` (dead already): where its box reached, the
 * snapshot's leaves and the blocks of the obstacles left overlapping it (restore); prepared again
 * when it was. -1 when an allocation failed (the tile is then to be rebuilt whole). */
static int remove_from_tile(on_tree *t, struct on_obstacles *o, snapshot *s, const obstacle *gone)
{
    uint32_t tile = s->tile;
    on_tile *tl = &t->tiles[tile];
    int prepared = on_tile_boxes(t, tile) != NULL;
    /* the candidates: the obstacles left covering the tile whose boxes overlap the leaves the removed
     * box reached (classify's rule: those it overlaps; a flat box's plane reaches the leaves on both
     * sides of it), found by the float copies of their boxes */
    float lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        double a = floor(gone->lo[k]), b = ceil(gone->hi[k]);
        if (gone->lo[k] == gone->hi[k]) {
            a = ceil(gone->lo[k]) - 1;
            b = floor(gone->hi[k]) + 1;
        }
        lo[k] = nextafterf((float)a, -INFINITY);
        hi[k] = nextafterf((float)b, INFINITY);
    }
    size_t nc = 0, room = 0;
    uint32_t *cand = NULL;
    uint8_t m[256];
    for (size_t i0 = 0; i0 < o->n; i0 += sizeof m) {
        size_t cnt = o->n - i0 < sizeof m ? o->n - i0 : sizeof m;
        if (!fbox_scan(o, i0, cnt, lo, hi, m)) continue;
        for (size_t j = 0; j < cnt; j++) {
            if (!(j & 7) && j + 8 <= cnt) { /* (8 misses at a time) */
                uint64_t w;
                memcpy(&w, m + j, sizeof w);
                if (!w) {
                    j += 7;
                    continue;
                }
            }
            if (!m[j] || !live_covers(t, o, i0 + j, tile)) continue;
            if (on_grow((void **)&cand, &room, nc + 1, sizeof *cand) != 0) {
                free(cand);
                return -1;
            }
            cand[nc++] = (uint32_t)(i0 + j);
        }
    }
    /* room for a list per level of the walk (the root's is cand) */
    int depth = t->p.depth;
    uint32_t *lists = nc ? malloc((size_t)(depth + 1) * nc * sizeof *lists) : NULL;
    if (nc && !lists) {
        free(cand);
        return -1;
    }
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    restore_ctx c = {&tl->table, &s->table, gone, o->ob, lists, nc,
                     {(double)ijk[0] * t->n, (double)ijk[1] * t->n, (double)ijk[2] * t->n}, 0, 0};
    uint32_t root = on_root_code(t);
    int cv = 0, sv = 0, nv;
    int cs = tl->solid ? ST_BLOCKED : (cv = on_table_get(&tl->table, root)) >= 0 ? ST_MIXED : ST_FREE;
    int ss = s->solid ? ST_BLOCKED : (sv = on_table_get(&s->table, root)) >= 0 ? ST_MIXED : ST_FREE;
    int r = restore(&c, root, cs, cv, ss, sv, cand, nc, 0, &nv);
    o->work += c.work;
    free(lists);
    free(cand);
    on_tree_touch(t, tile);
    if (c.failed) return -1;
    if (r == ST_BLOCKED) {
        on_table_free(&tl->table);
        tl->solid = 1;
    } else {
        tl->solid = 0;
    }
    if (prepared && on_failed(on_tree_prepare(t, tile, NULL))) return -1;
    s->salt = tl->salt;
    return 0;
}

uint64_t on_obstacles_work(const on_tree *t) { return t->obstacles ? t->obstacles->work : 0; }

/* The tree's hook (tree.h): the records go with the tree. */
static void hook_drop(on_tree *t)
{
    struct on_obstacles *o = t->obstacles;
    if (!o) return;
    for (size_t i = 0; i < o->nsnap; i++) on_table_free(&o->snap[i].table);
    free(o->ob);
    free(o->fbox);
    free(o->snap);
    free(o);
    t->obstacles = NULL;
}
static const on_tree_hook obstacles_hook = {NULL, hook_drop, NULL, NULL};

/* ---- the API ----------------------------------------------------------------------------------- */

/* The loaded tiles obstacle b covers, into *out (malloc'd; NULL when none), *n of them. -1 on
 * allocation failure. */
static int loaded_tiles(const on_tree *t, const obstacle *b, uint32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!b->any) return 0;
    size_t nt = 1;
    for (int i = 0; i < 3; i++) nt *= (size_t)(b->z[i] - b->a[i] + 1);
    uint32_t *tl = malloc(nt * sizeof *tl);
    if (!tl) return -1;
    for (int k = b->a[2]; k <= b->z[2]; k++)
        for (int j = b->a[1]; j <= b->z[1]; j++)
            for (int i = b->a[0]; i <= b->z[0]; i++) {
                uint32_t ti = on_tile_index(t, i, j, k);
                if (t->tiles[ti].loaded) tl[(*n)++] = ti;
            }
    *out = tl;
    return 0;
}

on_status on_tree_add_obstacle(on_tree *t, const double min[3], const double max[3], uint32_t *id)
{
    if (id) *id = 0;
    obstacle b;
    memset(&b, 0, sizeof b);
    double r = t->p.radius * t->inv_scale;
    for (int i = 0; i < 3; i++)
        if (!isfinite(min[i]) || !isfinite(max[i]) || min[i] > max[i]) return ON_FAILURE | ON_INVALID;
    memcpy(b.wmin, min, sizeof b.wmin);
    memcpy(b.wmax, max, sizeof b.wmax);
    on_to_nav(t, min, b.lo);
    on_to_nav(t, max, b.hi);
    for (int i = 0; i < 3; i++) {
        b.lo[i] -= r;
        b.hi[i] += r;
    }
    /* the tiles it covers (on_tree_insert's rule: a box starting on a tile border touches the tile
     * below, where it blocks nothing) */
    b.any = on_tree_tile_range(t, b.lo, b.hi, b.a, b.z);
    if (!t->obstacles &&
        (on_tree_hook_add(t, &obstacles_hook) != 0 || !(t->obstacles = calloc(1, sizeof *t->obstacles))))
        return ON_FAILURE | ON_NO_MEMORY;
    struct on_obstacles *o = t->obstacles;
    if (o->next_id == UINT32_MAX) return ON_FAILURE | ON_INVALID;
    uint32_t *tiles;
    size_t ntiles;
    if (loaded_tiles(t, &b, &tiles, &ntiles) != 0 ||
        on_grow((void **)&o->ob, &o->cap, o->n + 1, sizeof *o->ob) != 0 ||
        fbox_reserve(o, o->n + 1) != 0) {
        free(tiles);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    /* snapshots first: nothing changes unless all of them could be made */
    for (size_t i = 0; i < ntiles; i++)
        if (!snap_for(t, o, tiles[i])) {
            free(tiles);
            return ON_FAILURE | ON_NO_MEMORY;
        }
    b.id = ++o->next_id;
    o->ob[o->n++] = b;
    set_fbox(o, o->n - 1);
    const obstacle *ob = &o->ob[o->n - 1];
    on_status st = ON_SUCCESS;
    for (size_t i = 0; i < ntiles; i++) {
        uint32_t ti = tiles[i];
        snapshot *s = find_snap(o, ti);
        s->nobs++;
        int prepared = on_tile_boxes(t, ti) != NULL;
        if (on_failed(on_tree_insert_tile(t, ti, classify, (void *)ob)) ||
            (prepared && t->tiles[ti].salt != s->salt && on_failed(on_tree_prepare(t, ti, NULL))))
            st = ON_FAILURE | ON_NO_MEMORY;
        s->salt = t->tiles[ti].salt;
    }
    if (on_failed(st)) { /* undo: the obstacle out, its tiles rebuilt without it */
        o->n--;
        for (size_t i = 0; i < ntiles; i++) {
            snapshot *s = find_snap(o, tiles[i]);
            s->nobs--;
            rebuild(t, o, s);
        }
        free(tiles);
        return st;
    }
    free(tiles);
    if (id) *id = ob->id;
    return ON_SUCCESS;
}

on_status on_tree_remove_obstacle(on_tree *t, uint32_t id)
{
    struct on_obstacles *o = t->obstacles;
    size_t k = o ? find_slot(o, id) : 0;
    if (!o || k == o->n || o->ob[k].dead) return ON_FAILURE | ON_INVALID;
    obstacle gone = o->ob[k];
    kill_slot(o, k);
    on_status st = ON_SUCCESS;
    for (int kz = gone.a[2]; gone.any && kz <= gone.z[2]; kz++)
        for (int j = gone.a[1]; j <= gone.z[1]; j++)
            for (int i = gone.a[0]; i <= gone.z[0]; i++) {
                uint32_t ti = on_tile_index(t, i, j, kz);
                if (!t->tiles[ti].loaded) { /* it comes back as its file holds it, with the obstacles left */
                    snapshot *s = find_snap(o, ti);
                    if (s) drop_snap(o, s);
                    continue;
                }
                snapshot *s = find_snap(o, ti);
                if (s) s->nobs--;
                if (!s || s->salt != t->tiles[ti].salt) {
                    /* changed by other means since: a fresh snapshot keeps what it holds, this
                     * obstacle's blocks too (nothing to restore) */
                    if (!(s = snap_for(t, o, ti))) st = ON_FAILURE | ON_NO_MEMORY;
                } else if (s->nobs == 0) {
                    /* the last obstacle over it: the snapshot back as it is, slot for slot */
                    int prepared = on_tile_boxes(t, ti) != NULL;
                    on_tree_install_tile(t, ti, &s->table, s->solid);
                    if (prepared && on_failed(on_tree_prepare(t, ti, NULL))) st = ON_FAILURE | ON_NO_MEMORY;
                } else {
                    /* (an allocation failed half way: the whole tile rebuilt the long way) */
                    if (remove_from_tile(t, o, s, &gone) != 0 && rebuild(t, o, s) != 0) st = ON_FAILURE | ON_NO_MEMORY;
                }
                if (s && s->nobs == 0) drop_snap(o, s);
            }
    return st;
}

/* ---- tiles streamed in and out ------------------------------------------------------------------ */

on_status on_obstacles_tile_loaded(on_tree *t, uint32_t tile)
{
    struct on_obstacles *o = t->obstacles;
    if (!o) return ON_SUCCESS;
    snapshot *s = find_snap(o, tile);
    if (!covered(t, o, tile)) {
        if (s) drop_snap(o, s);
        return ON_SUCCESS;
    }
    /* the tile as its file holds it (its salt moved on at the install: a fresh snapshot) */
    if (!(s = snap_for(t, o, tile))) return ON_FAILURE | ON_NO_MEMORY;
    int prepared = on_tile_boxes(t, tile) != NULL;
    on_status st = ON_SUCCESS;
    for (size_t i = 0; i < o->n && !on_failed(st); i++)
        if (live_covers(t, o, i, tile) && on_failed(on_tree_insert_tile(t, tile, classify, &o->ob[i])))
            st = ON_FAILURE | ON_NO_MEMORY;
    if (!on_failed(st) && prepared && t->tiles[tile].salt != s->salt && on_failed(on_tree_prepare(t, tile, NULL)))
        st = ON_FAILURE | ON_NO_MEMORY;
    s->salt = t->tiles[tile].salt;
    return st;
}

void on_obstacles_tile_unloaded(on_tree *t, uint32_t tile)
{
    snapshot *s = t->obstacles ? find_snap(t->obstacles, tile) : NULL;
    if (s) drop_snap(t->obstacles, s);
}

on_status on_tree_obstacles(const on_tree *t, uint32_t *ids, double *boxes, size_t cap, size_t *n)
{
    const struct on_obstacles *o = t->obstacles;
    size_t cnt = o ? o->n - o->ndead : 0;
    for (size_t i = 0, j = 0; o && i < o->n && j < cap; i++) {
        if (o->ob[i].dead) continue;
        if (ids) ids[j] = o->ob[i].id;
        if (boxes) {
            memcpy(boxes + 6 * j, o->ob[i].wmin, 3 * sizeof *boxes);
            memcpy(boxes + 6 * j + 3, o->ob[i].wmax, 3 * sizeof *boxes);
        }
        j++;
    }
    *n = cnt;
    return cnt > cap ? (ON_FAILURE | ON_BUFFER_SMALL) : ON_SUCCESS;
}

/* For obstacles_stream.c (obstacles_records.h). */
int on_obstacles_live_covers(const on_tree *t, const struct on_obstacles *o, size_t i, uint32_t tile)
{
    return live_covers(t, o, i, tile);
}
on_obstacle_snapshot *on_obstacles_find_snap(struct on_obstacles *o, uint32_t tile) { return find_snap(o, tile); }
int on_obstacles_classify(void *ud, const double m[3], double s) { return classify(ud, m, s); }
