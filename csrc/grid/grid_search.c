/*
 * grid_search.c -- the dense grid baseline's A* (see grid.h) and its move tables.
 *
 * Movement (the Moving AI voxel benchmarks' model): 26-connected, costs 1, sqrt2, sqrt3; no corner
 * cutting: a diagonal move needs every cell of the 2x2 (edge move) or 2x2x2 (corner move) box it
 * spans free. With d == 1 the same rule gives the 8-connected 2D octile grid (costs 1 and sqrt2,
 * diagonal only when both orthogonal neighbours are free). Heuristic: the voxel octile distance
 * (sqrt3-sqrt2)*dmin + (sqrt2-1)*dmid + dmax, admissible and consistent, so no cell is reopened.
 *
 * Search memory: per cell a double g and a 16-bit word (10-bit generation stamp | closed bit | parent
 * direction), allocated on the first search and reused: a new search bumps the generation instead of
 * clearing (the words are cleared only when the stamp wraps, every 1023 searches: a memset of 2 bytes
 * a cell). 10 bytes a cell, 891 MB on the biggest map (896 x 390 x 255), of which a search commits
 * only the pages it touches. The open list is a binary heap of 16-byte (f, g, cell) entries with lazy
 * deletion (a popped closed cell is skipped), ties broken towards larger g; it grows by doubling and is
 * kept between searches, so a search allocates nothing in steady state.
 *
 * on_grid_find's path: cells as x,y,z triples, start first. When the path has more than cap cells,
 * the search still returns ON_SUCCESS with *npath the full count and only the first cap cells (from
 * the start) written. *expansions counts the cells expanded (the goal, popped last, is not counted).
 */
#include "grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SQRT2 1.41421356237309504880
#define SQRT3 1.73205080756887729353

/* A cell's search word: stamp << 6 | closed << 5 | direction (0..26 the cell was reached by; 13 =
 * none, the start). Stamps are 10 bits; 0 means never touched. */
#define GEN_SHIFT 6
#define GEN_MAX 0x3ffu
#define META_CLOSED 0x20u
#define META_DIR 0x1fu
#define DIR_NONE 13

static const int8_t DX[27] = {-1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1};
static const int8_t DY[27] = {-1, -1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1};
static const int8_t DZ[27] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* The 3 bits at positions pos .. pos+2 (the padding word makes the read past the last cell safe). */
static inline uint32_t bits3(const uint64_t *bits, uint64_t pos)
{
    uint64_t i = pos >> 6;
    unsigned s = (unsigned)(pos & 63);
    uint64_t v = bits[i] >> s;
    if (s > 61) v |= bits[i + 1] << (64 - s);
    return (uint32_t)(v & 7u);
}

/* Fill the move tables of g (directions, offsets, costs, required free cells) for its dimensions: once,
 * at its first search (ndirs is 0 until then). */
static void build_moves(on_grid *g)
{
    int64_t w = g->w, wh = (int64_t)g->w * g->h;
    g->ndirs = 0;
    for (int k = 0; k < 27; k++) {
        int dx = DX[k], dy = DY[k], dz = DZ[k];
        int n = (dx != 0) + (dy != 0) + (dz != 0);
        g->off[k] = (uint32_t)(int64_t)(dx + dy * w + dz * wh);
        g->cost[k] = n == 3 ? SQRT3 : n == 2 ? SQRT2 : n == 1 ? 1.0 : 0.0;
        uint32_t req = 0;
        for (int az = 0; az <= (dz != 0); az++)
            for (int ay = 0; ay <= (dy != 0); ay++)
                for (int ax = 0; ax <= (dx != 0); ax++)
                    req |= 1u << ((ax * dx + 1) + 3 * (ay * dy + 1) + 9 * (az * dz + 1));
        g->req[k] = req;
        if (k != DIR_NONE && (g->d > 1 || dz == 0)) g->dirs[g->ndirs++] = (uint8_t)k;
    }
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++) g->rowoff[(dy + 1) + 3 * (dz + 1)] = dy * w + dz * wh;
}

static inline int ent_less(const heap_ent *a, const heap_ent *b)
{
    return a->f < b->f || (a->f == b->f && a->g > b->g);
}

static int heap_grow(on_grid *g)
{
    size_t cap = g->heap_cap ? g->heap_cap * 2 : 4096;
    if (cap > SIZE_MAX / sizeof(heap_ent)) return 0;
    heap_ent *h = realloc(g->heap, cap * sizeof *h);
    if (!h) return 0;
    g->heap = h;
    g->heap_cap = cap;
    return 1;
}

static inline void heap_sift_up(heap_ent *hp, size_t i, heap_ent e)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ent_less(&e, &hp[p])) break;
        hp[i] = hp[p];
        i = p;
    }
    hp[i] = e;
}

/* Remove the top; *n is the size before, decremented. */
static inline heap_ent heap_pop(heap_ent *hp, size_t *n)
{
    heap_ent top = hp[0];
    size_t m = --*n;
    if (m == 0) return top;
    heap_ent last = hp[m];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < m) {
        c += c + 1 < m && ent_less(&hp[c + 1], &hp[c]);
        if (!ent_less(&hp[c], &last)) break;
        hp[i] = hp[c];
        i = c;
    }
    hp[i] = last;
    return top;
}

static inline double octile(int ax, int ay, int az)
{
    int lo = ax, mid = ay, hi = az, t;
    if (lo > mid) { t = lo; lo = mid; mid = t; }
    if (mid > hi) { t = mid; mid = hi; hi = t; }
    if (lo > mid) { t = lo; lo = mid; mid = t; }
    return (SQRT3 - SQRT2) * lo + (SQRT2 - 1.0) * mid + (double)hi;
}

static inline int iabs(int v) { return v < 0 ? -v : v; }

static on_status ensure_search(on_grid *g)
{
    if (g->g) return ON_SUCCESS;
    size_t n = g->ncells;
    if (n > SIZE_MAX / sizeof(double)) return ON_FAILURE | ON_NO_MEMORY;
    uint16_t *meta = calloc(n, sizeof *meta);
    if (!meta) return ON_FAILURE | ON_NO_MEMORY;
    double *gv = malloc(n * sizeof *gv);
    if (!gv) {
        free(meta);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    if (!g->heap && !heap_grow(g)) {
        free(meta);
        free(gv);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    g->g = gv;
    g->meta = meta;
    g->gen = 0;
    return ON_SUCCESS;
}

/* Free cells of the 3x3x3 neighbourhood of (x,y,z) (index c) as bits (dx+1) + 3*(dy+1) + 9*(dz+1);
 * outside cells count as blocked. */
static inline uint32_t neighbourhood(const on_grid *g, uint32_t c, int x, int y, int z)
{
    uint32_t xmask = 7u;
    if (x == 0) xmask &= ~1u;
    if (x == g->w - 1) xmask &= ~4u;
    uint32_t fr = 0;
    for (int dz = -1; dz <= 1; dz++) {
        int zz = z + dz;
        if (zz < 0 || zz >= g->d) continue;
        for (int dy = -1; dy <= 1; dy++) {
            int yy = y + dy;
            if (yy < 0 || yy >= g->h) continue;
            int r = (dy + 1) + 3 * (dz + 1);
            uint64_t pos = (uint64_t)((int64_t)c + g->rowoff[r]);
            uint32_t b = x > 0 ? bits3(g->bits, pos - 1) : bits3(g->bits, pos) << 1;
            fr |= (~b & xmask) << (3 * r);
        }
    }
    return fr;
}

/* Walk the last search's parent directions back from its goal: the cell count, and up to cap cells
 * written start first. */
static size_t write_path(const on_grid *g, int32_t *path, size_t cap)
{
    const uint32_t s = g->last_s, t = g->last_t;
    size_t count = 1;
    for (uint32_t c = t; c != s; count++) c -= g->off[g->meta[c] & META_DIR];
    if (cap == 0) return count;
    int x = g->last_goal[0], y = g->last_goal[1], z = g->last_goal[2];
    uint32_t c = t;
    for (size_t i = count; i-- > 0;) {
        if (i < cap) {
            path[3 * i] = x;
            path[3 * i + 1] = y;
            path[3 * i + 2] = z;
        }
        if (c == s) break;
        int k = (int)(g->meta[c] & META_DIR);
        c -= g->off[k];
        x -= DX[k];
        y -= DY[k];
        z -= DZ[k];
    }
    return count;
}

on_status on_grid_find(on_grid *g, const int start[3], const int goal[3], double *length,
                       size_t *expansions, int32_t *path, size_t cap, size_t *npath)
{
    if (length) *length = 0.0;
    if (expansions) *expansions = 0;
    if (npath) *npath = 0;
    if (!g || !start || !goal) return ON_FAILURE | ON_INVALID;
    if (!g->ndirs) build_moves(g);
    g->last_ok = 0;
    if (!path) cap = 0;
    if (!on_grid_inside(g, start[0], start[1], start[2]) || !on_grid_inside(g, goal[0], goal[1], goal[2]))
        return ON_FAILURE | ON_OUTSIDE;
    uint32_t s = on_grid_cell_index(g, start[0], start[1], start[2]);
    uint32_t t = on_grid_cell_index(g, goal[0], goal[1], goal[2]);
    if (on_grid_bit(g->bits, s) || on_grid_bit(g->bits, t)) return ON_FAILURE | ON_BLOCKED;
    if (s == t) {
        g->last_ok = 1;
        g->last_s = g->last_t = s;
        memcpy(g->last_goal, goal, sizeof g->last_goal);
        size_t count = write_path(g, path, cap);
        if (npath) *npath = count;
        return ON_SUCCESS;
    }
    on_status st = ensure_search(g);
    if (on_failed(st)) return st;
    if (g->gen >= GEN_MAX) {
        memset(g->meta, 0, (size_t)g->ncells * sizeof *g->meta);
        g->gen = 0;
    }
    const uint32_t gen = ++g->gen;
    const uint32_t stamp = gen << GEN_SHIFT;
    const int gx = goal[0], gy = goal[1], gz = goal[2];
    const int w = g->w;
    double *gval = g->g;
    uint16_t *meta = g->meta;
    heap_ent *hp = g->heap;
    size_t hn = 0, nexp = 0;
    const int ndirs = g->ndirs;

    gval[s] = 0.0;
    meta[s] = (uint16_t)(stamp | DIR_NONE);
    hp[hn++] = (heap_ent){octile(iabs(start[0] - gx), iabs(start[1] - gy), iabs(start[2] - gz)), 0.0f, s};

    int found = 0;
    while (hn > 0) {
        heap_ent e = heap_pop(hp, &hn);
        uint32_t c = e.cell;
        uint32_t mc = meta[c];
        if (mc & META_CLOSED) continue; /* stale entry */
        meta[c] = (uint16_t)(mc | META_CLOSED);
        if (c == t) {
            found = 1;
            break;
        }
        nexp++;
        uint32_t q = c / (uint32_t)w;
        int x = (int)(c - q * (uint32_t)w);
        int y = (int)(q % (uint32_t)g->h);
        int z = (int)(q / (uint32_t)g->h);
        uint32_t fr = neighbourhood(g, c, x, y, z);
        double gc = gval[c];
        for (int i = 0; i < ndirs; i++) {
            int k = g->dirs[i];
            uint32_t rq = g->req[k];
            if ((fr & rq) != rq) continue;
            uint32_t n = c + g->off[k];
            double ng = gc + g->cost[k];
            uint32_t m = meta[n];
            if ((m >> GEN_SHIFT) == gen) {
                if (m & META_CLOSED) continue;
                if (ng >= gval[n]) continue;
            }
            gval[n] = ng;
            meta[n] = (uint16_t)(stamp | (uint32_t)k);
            double f = ng + octile(iabs(x + DX[k] - gx), iabs(y + DY[k] - gy), iabs(z + DZ[k] - gz));
            if (hn == g->heap_cap) {
                if (!heap_grow(g)) {
                    if (expansions) *expansions = nexp;
                    return ON_FAILURE | ON_NO_MEMORY;
                }
                hp = g->heap;
            }
            heap_sift_up(hp, hn++, (heap_ent){f, (float)ng, n});
        }
    }
    if (expansions) *expansions = nexp;
    if (!found) return ON_FAILURE | ON_UNREACHABLE;

    if (length) *length = gval[t];
    g->last_ok = 1;
    g->last_s = s;
    g->last_t = t;
    memcpy(g->last_goal, goal, sizeof g->last_goal);
    size_t count = write_path(g, path, cap);
    if (npath) *npath = count;
    return ON_SUCCESS;
}

size_t on_grid_last_path(const on_grid *g, int32_t *path, size_t cap)
{
    if (!g || !g->last_ok) return 0;
    return write_path(g, path, path ? cap : 0);
}

void on_grid_debug_wrap_soon(on_grid *g, uint32_t left)
{
    if (g && left <= GEN_MAX && GEN_MAX - left >= g->gen) g->gen = GEN_MAX - left;
}
