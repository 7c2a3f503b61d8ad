/*
 * grid.c -- the dense grid baseline: a w x h x d bitset of blocked cells, an exact A* over it and a
 * line-of-sight test (on_walk_dense). It is what the octree search is measured against, so it is
 * meant to be fair and fast, not naive.
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
#include "octonav.h"
#include "grid.h"
#include "raycast.h"
#include "fileio.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

typedef struct heap_ent {
    double f;
    float g;                   /* tie-break only: among equal f prefer larger g */
    uint32_t cell;
} heap_ent;

struct on_grid {
    int w, h, d;
    uint32_t ncells;           /* < 2^32 */
    uint64_t *bits;            /* blocked cells, plus one padding word for 3-bit reads past the end */
    size_t nwords;

    /* search state, allocated on the first search */
    double *g;
    uint16_t *meta;            /* stamp << 6 | closed | direction */
    uint32_t gen;
    heap_ent *heap;
    size_t heap_cap, heap_peak;
    /* the last successful search, for on_grid_last_path */
    int last_ok;
    uint32_t last_s, last_t;
    int last_goal[3];

    /* move tables, direction k = (dx+1) + 3*(dy+1) + 9*(dz+1) */
    int ndirs;
    uint8_t dirs[26];          /* the directions used: 26, or the 8 in-plane ones when d == 1 */
    uint32_t off[27];          /* cell index offset, modulo 2^32 */
    uint32_t req[27];          /* cells of the 3x3x3 neighbourhood (same bit numbering) that must be free */
    double cost[27];
    int64_t rowoff[9];         /* index offset of the row (dy, dz), i = (dy+1) + 3*(dz+1) */
};

static const int8_t DX[27] = {-1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1};
static const int8_t DY[27] = {-1, -1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1};
static const int8_t DZ[27] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* ---- storage ----------------------------------------------------------------------------------- */

static inline uint32_t cell_index(const on_grid *g, int x, int y, int z)
{
    return (uint32_t)x + (uint32_t)g->w * ((uint32_t)y + (uint32_t)g->h * (uint32_t)z);
}

static inline int inside(const on_grid *g, int x, int y, int z)
{
    return x >= 0 && y >= 0 && z >= 0 && x < g->w && y < g->h && z < g->d;
}

static inline int bit_get(const uint64_t *bits, uint32_t i)
{
    return (int)((bits[i >> 6] >> (i & 63)) & 1u);
}

/* The 3 bits at positions pos .. pos+2 (the padding word makes the read past the last cell safe). */
static inline uint32_t bits3(const uint64_t *bits, uint64_t pos)
{
    uint64_t i = pos >> 6;
    unsigned s = (unsigned)(pos & 63);
    uint64_t v = bits[i] >> s;
    if (s > 61) v |= bits[i + 1] << (64 - s);
    return (uint32_t)(v & 7u);
}

static void build_tables(on_grid *g)
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

on_status on_grid_create(int w, int h, int d, on_grid **out)
{
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (w < 1 || h < 1 || d < 1) return ON_FAILURE | ON_INVALID;
    uint64_t n = (uint64_t)w * (uint64_t)h * (uint64_t)d;
    if (n >= ((uint64_t)1 << 32)) return ON_FAILURE | ON_INVALID;
    on_grid *g = calloc(1, sizeof *g);
    if (!g) return ON_FAILURE | ON_NO_MEMORY;
    g->w = w;
    g->h = h;
    g->d = d;
    g->ncells = (uint32_t)n;
    g->nwords = (size_t)((n + 63) / 64) + 1;
    g->bits = calloc(g->nwords, sizeof *g->bits);
    if (!g->bits) {
        free(g);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    build_tables(g);
    *out = g;
    return ON_SUCCESS;
}

void on_grid_destroy(on_grid *g)
{
    if (!g) return;
    free(g->bits);
    free(g->g);
    free(g->meta);
    free(g->heap);
    free(g);
}

void on_grid_dims(const on_grid *g, int dims[3])
{
    if (!dims) return;
    dims[0] = g ? g->w : 0;
    dims[1] = g ? g->h : 0;
    dims[2] = g ? g->d : 0;
}

void on_grid_set(on_grid *g, int x, int y, int z, int blocked)
{
    if (!g || !inside(g, x, y, z)) return;
    uint32_t i = cell_index(g, x, y, z);
    uint64_t m = (uint64_t)1 << (i & 63);
    if (blocked) g->bits[i >> 6] |= m;
    else g->bits[i >> 6] &= ~m;
}

int on_grid_blocked(const on_grid *g, int x, int y, int z)
{
    if (!g || !inside(g, x, y, z)) return 1;
    return bit_get(g->bits, cell_index(g, x, y, z));
}

size_t on_grid_bytes(const on_grid *g)
{
    if (!g) return 0;
    size_t b = sizeof *g + g->nwords * sizeof *g->bits + g->heap_cap * sizeof *g->heap;
    if (g->g) b += (size_t)g->ncells * (sizeof *g->g + sizeof *g->meta);
    return b;
}

size_t on_grid_heap_peak(const on_grid *g)
{
    return g ? g->heap_peak : 0;
}

void on_grid_debug_wrap_soon(on_grid *g, uint32_t left)
{
    if (g && left <= GEN_MAX && GEN_MAX - left >= g->gen) g->gen = GEN_MAX - left;
}

on_status on_grid_from_voxmap(const on_voxmap *m, on_grid **out)
{
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (!m || (m->count && !m->xyz)) return ON_FAILURE | ON_INVALID;
    on_grid *g;
    on_status st = on_grid_create(m->w, m->h, m->d, &g);
    if (on_failed(st)) return st;
    for (size_t i = 0; i < m->count; i++) {
        int x = m->xyz[3 * i], y = m->xyz[3 * i + 1], z = m->xyz[3 * i + 2];
        if (!inside(g, x, y, z)) {
            on_grid_destroy(g);
            return ON_FAILURE | ON_INVALID;
        }
        on_grid_set(g, x, y, z, 1);
    }
    *out = g;
    return ON_SUCCESS;
}

/* ---- Moving AI 2D maps ----------------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static void map_error(char *err, size_t errlen, const char *path, long line, const char *fmt, ...)
{
    if (!err || !errlen) return;
    int k = snprintf(err, errlen, "%s:%ld: ", path, line);
    if (k < 0 || (size_t)k >= errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
    va_end(ap);
}

/* Strip the line ending; returns the remaining length. */
static size_t chomp(char *s, size_t n)
{
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
    return n;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

/* "key value" with a positive int value; 1 on success. */
static int header_int(const char *s, long *v)
{
    while (*s == ' ' || *s == '\t') s++;
    if (*s < '0' || *s > '9') return 0;
    errno = 0;
    char *end;
    long x = strtol(s, &end, 10);
    if (errno || x < 1 || x > 0x7fffffffL) return 0;
    while (*end == ' ' || *end == '\t') end++;
    if (*end) return 0;
    *v = x;
    return 1;
}

/* The next line of [*pos, end): NUL-terminated in place (getline's view of it, without the line end:
 * trailing CR and LF stripped), its length in *n. NULL at the end of the text. */
static char *next_line(char *buf, size_t len, size_t *pos, size_t *n)
{
    if (*pos >= len) return NULL;
    char *s = buf + *pos;
    char *nl = memchr(s, '\n', len - *pos);
    size_t k = nl ? (size_t)(nl - s) + 1 : len - *pos;
    *pos += k;
    if (nl) *nl = '\0';
    else s[k] = '\0'; /* the last line: buf[len] is the text's NUL */
    *n = chomp(s, nl ? k - 1 : k);
    return s;
}

/* The same without changing the text (the rows are read twice): the line's start, its length
 * without the line end in *n. */
static const char *next_row(const char *buf, size_t len, size_t *pos, size_t *n)
{
    if (*pos >= len) return NULL;
    const char *s = buf + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t k = nl ? (size_t)(nl - s) : len - *pos;
    *pos += nl ? k + 1 : k;
    while (k > 0 && (s[k - 1] == '\n' || s[k - 1] == '\r')) k--;
    *n = k;
    return s;
}

on_status on_grid_parse_map2d(const char *path, char *buf, size_t len, on_grid **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out || !buf || !path) {
        if (err && errlen) snprintf(err, errlen, "invalid argument");
        return ON_FAILURE | ON_INVALID;
    }
    *out = NULL;
    size_t pos = 0, n;
    char *line;
    long lineno = 0, width = 0, height = 0;
    int typed = 0;

    /* header: type, height, width (any order), then "map" */
    for (;;) {
        line = next_line(buf, len, &pos, &n);
        if (!line) {
            map_error(err, errlen, path, lineno + 1, "unexpected end of file before \"map\"");
            return ON_FAILURE | ON_CORRUPT;
        }
        lineno++;
        if (blank(line, n)) continue;
        if (strcmp(line, "map") == 0) break;
        if (strncmp(line, "type", 4) == 0 && (line[4] == ' ' || line[4] == '\t')) {
            const char *v = line + 4;
            while (*v == ' ' || *v == '\t') v++;
            size_t vn = strlen(v);
            while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
            if (vn != 6 || strncmp(v, "octile", 6) != 0) {
                map_error(err, errlen, path, lineno, "unsupported map type (want \"type octile\")");
                return ON_FAILURE | ON_CORRUPT;
            }
            typed = 1;
        } else if (strncmp(line, "height", 6) == 0 && (line[6] == ' ' || line[6] == '\t')) {
            if (!header_int(line + 6, &height)) {
                map_error(err, errlen, path, lineno, "bad height");
                return ON_FAILURE | ON_CORRUPT;
            }
        } else if (strncmp(line, "width", 5) == 0 && (line[5] == ' ' || line[5] == '\t')) {
            if (!header_int(line + 5, &width)) {
                map_error(err, errlen, path, lineno, "bad width");
                return ON_FAILURE | ON_CORRUPT;
            }
        } else {
            map_error(err, errlen, path, lineno, "unexpected header line");
            return ON_FAILURE | ON_CORRUPT;
        }
    }
    if (!typed || !width || !height) {
        map_error(err, errlen, path, lineno, "header lacks %s before \"map\"",
                  !typed ? "\"type octile\"" : !height ? "\"height\"" : "\"width\"");
        return ON_FAILURE | ON_CORRUPT;
    }
    if ((uint64_t)width * (uint64_t)height >= ((uint64_t)1 << 32)) {
        map_error(err, errlen, path, lineno, "map too large (%ld x %ld)", width, height);
        return ON_FAILURE | ON_INVALID;
    }
    /* Check the rows before the grid is allocated: it then costs at most what the file holds. */
    size_t rows_at = pos;
    long rows_line = lineno;
    const char *row;
    for (long r = 0; r < height; r++) {
        row = next_row(buf, len, &pos, &n);
        if (!row) {
            map_error(err, errlen, path, lineno + 1, "map ends after %ld of %ld rows", r, height);
            return ON_FAILURE | ON_CORRUPT;
        }
        lineno++;
        if (n != (size_t)width) {
            map_error(err, errlen, path, lineno, "row has %zu characters, expected %ld", n, width);
            return ON_FAILURE | ON_CORRUPT;
        }
    }
    /* only blank lines may follow */
    while ((row = next_row(buf, len, &pos, &n)) != NULL) {
        lineno++;
        if (!blank(row, n)) {
            map_error(err, errlen, path, lineno, "extra data after the %ld map rows", height);
            return ON_FAILURE | ON_CORRUPT;
        }
    }
    on_grid *g;
    on_status st = on_grid_create((int)width, (int)height, 1, &g);
    if (on_failed(st)) {
        if (st & ON_NO_MEMORY) map_error(err, errlen, path, rows_line, "out of memory");
        else map_error(err, errlen, path, rows_line, "map too large (%ld x %ld)", width, height);
        return st;
    }
    for (long r = 0; r < height; r++) { /* the rows again, checked: width characters each */
        row = next_row(buf, len, &rows_at, &n);
        for (long x = 0; x < width; x++) {
            char c = row[x];
            if (c != '.' && c != 'G' && c != 'S') on_grid_set(g, (int)x, (int)r, 0, 1);
        }
    }
    *out = g;
    return ON_SUCCESS;
}

on_status on_grid_read_map2d(const char *path, on_grid **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out || !path) {
        if (out) *out = NULL;
        if (err && errlen) snprintf(err, errlen, "invalid argument");
        return ON_FAILURE | ON_INVALID;
    }
    *out = NULL;
    uint8_t *buf;
    size_t len;
    on_status st = on_read_file(path, &buf, &len, err, errlen);
    if (!on_ok(st)) return st;
    st = on_grid_parse_map2d(path, (char *)buf, len, out, err, errlen);
    free(buf);
    return st;
}

/* ---- A* ------------------------------------------------------------------------------------------- */

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
    g->last_ok = 0;
    if (!path) cap = 0;
    if (!inside(g, start[0], start[1], start[2]) || !inside(g, goal[0], goal[1], goal[2]))
        return ON_FAILURE | ON_OUTSIDE;
    uint32_t s = cell_index(g, start[0], start[1], start[2]);
    uint32_t t = cell_index(g, goal[0], goal[1], goal[2]);
    if (bit_get(g->bits, s) || bit_get(g->bits, t)) return ON_FAILURE | ON_BLOCKED;
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
                    if (hn > g->heap_peak) g->heap_peak = hn;
                    if (expansions) *expansions = nexp;
                    return ON_FAILURE | ON_NO_MEMORY;
                }
                hp = g->heap;
            }
            heap_sift_up(hp, hn++, (heap_ent){f, (float)ng, n});
        }
        if (hn > g->heap_peak) g->heap_peak = hn;
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

/* ---- line of sight --------------------------------------------------------------------------------- */

static int grid_voxel_free(const void *ud, int64_t x, int64_t y, int64_t z)
{
    const on_grid *g = ud;
    if (x < 0 || y < 0 || z < 0 || x >= g->w || y >= g->h || z >= g->d) return 0;
    return !bit_get(g->bits, cell_index(g, (int)x, (int)y, (int)z));
}

on_status on_grid_visible(const on_grid *g, const double a[3], const double b[3])
{
    if (!g || !a || !b) return ON_FAILURE | ON_INVALID;
    for (int i = 0; i < 3; i++)
        if (!isfinite(a[i]) || !isfinite(b[i])) return ON_FAILURE | ON_INVALID;
    return on_walk_dense(grid_voxel_free, g, a, b, NULL) ? ON_SUCCESS : ON_FAILURE | ON_BLOCKED;
}
