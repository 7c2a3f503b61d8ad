/*
 * voxmap.c -- Moving AI 3D voxel maps (.3dmap): read them, and bake them into a tree.
 *
 * Format: a header line "voxel W H D", then one line "x y z" per blocked voxel (0 <= x < W, ...).
 * Blank lines, spaces, tabs and CRLF are tolerated; anything else is an error. The file is read
 * whole and parsed by hand (no sscanf): the largest benchmark maps have over 200k lines.
 *
 * Baking (on_tree_from_voxmap): nothing is stored for the space between W x H x D and the tile grid:
 * each tile's table gets the map's extent inside it (on_table_limit, table.h), beyond which everything
 * reads as blocked, node for node as if a blocked margin box had been inserted, at no memory (that
 * margin used to cost 1.4-48x the voxels' own nodes: Simple 9,694 nodes for 512 voxels). Then the
 * voxels are sorted (LSD radix sort on the key (z*H + y)*W + x; duplicates dropped) and each run of
 * consecutive x at one (y, z) goes in as one box [x, x+k] x [y, y+1] x [z, z+1]; the box classifier
 * makes that exactly the run's leaves. On the Warframe maps that is about a fifth as many insertions
 * as one box per voxel (A1: 23.8k runs for 123k voxels), and about 1.7x faster overall than one
 * add_box per voxel in file order. The tables are compacted at the end.
 * A map keeps duplicate lines as they are (count counts lines); baking ignores the repeats.
 *
 * What a header may ask for is bounded before anything is allocated (on_voxmap_fit): the tile grid
 * (at most VOX_MAX_TILES tiles, ON_MAX_TILES_PER_AXIS a side). The bounds cost nothing, so a header
 * asking for a thin 65535 x 65535 x 1 map bakes 16,384 empty tables. (What visits every cube, as
 * export, the surface and tree:prepare do, still meets the boundary's cubes, as it would the margin's.)
 */
#include "tree.h"
#include "fileio.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VOX_MAX_DIM 65535
#define VOX_MAX_TILES (1u << 20)

/* ---- parsing ---------------------------------------------------------------------------------- */

typedef struct vox_parser {
    const char *s, *end; /* cursor; *end == '\0' */
    const char *path;
    const char *tok;     /* the last number parsed, for messages */
    int toklen;
    size_t line;
    char *err;
    size_t errlen;
} vox_parser;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static on_status vfail(vox_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    on_parse_error(p->err, p->errlen, p->path, p->line, fmt, ap);
    va_end(ap);
    return ON_FAILURE | ON_CORRUPT;
}

static inline int is_blank(char c) { return c == ' ' || c == '\t'; }

static inline void skip_blank(vox_parser *p)
{
    while (is_blank(*p->s)) p->s++;
}

/* At the end of a line (or of the file)? Consumes the line end and counts the line. */
static inline int end_line(vox_parser *p)
{
    const char *s = p->s;
    while (is_blank(*s) || *s == '\r') {
        if (*s == '\r' && s[1] != '\n') break; /* a lone CR is a line end of its own */
        s++;
    }
    if (s == p->end) {
        p->s = s;
        return 1;
    }
    if (*s == '\n' || *s == '\r') {
        if (*s == '\r' && s[1] == '\n') s++;
        p->s = s + 1;
        p->line++;
        return 1;
    }
    return 0;
}

/* A decimal integer with an optional minus sign; saturates well beyond any valid value.
 * Returns 0 when there are no digits. The number must end at a blank or a line end. */
static inline int parse_int(vox_parser *p, long *out)
{
    const char *s = p->s;
    int neg = *s == '-';
    if (neg) s++;
    if ((unsigned)(*s - '0') > 9) return 0;
    long v = 0;
    do {
        if (v < 100000000) v = v * 10 + (*s - '0');
        s++;
    } while ((unsigned)(*s - '0') <= 9);
    if (!(is_blank(*s) || *s == '\n' || *s == '\r' || s == p->end)) return 0;
    *out = neg ? -v : v;
    p->tok = p->s;
    p->toklen = (int)(s - p->s > 24 ? 24 : s - p->s);
    p->s = s;
    return 1;
}

static on_status parse_header(vox_parser *p, int dims[3])
{
    static const char *const names[3] = {"width", "height", "depth"};
    p->line = 1;
    skip_blank(p);
    if (strncmp(p->s, "voxel", 5) != 0 || !is_blank(p->s[5])) return vfail(p, "bad header (expected \"voxel W H D\")");
    p->s += 5;
    for (int i = 0; i < 3; i++) {
        long v;
        skip_blank(p);
        if (!parse_int(p, &v)) return vfail(p, "bad header (expected \"voxel W H D\")");
        if (v < 1 || v > VOX_MAX_DIM) return vfail(p, "%s %.*s out of range 1..%d", names[i], p->toklen, p->tok, VOX_MAX_DIM);
        dims[i] = (int)v;
    }
    if (!end_line(p)) return vfail(p, "bad header (expected \"voxel W H D\")");
    return ON_SUCCESS;
}

on_status on_voxmap_read(const char *path, on_voxmap *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return ON_FAILURE | ON_INVALID;
    memset(out, 0, sizeof *out);
    if (!path) return ON_FAILURE | ON_INVALID;
    char *buf;
    size_t len;
    on_status rs = on_read_file(path, (uint8_t **)&buf, &len, err, errlen);
    if (!on_ok(rs)) return rs;
    rs = on_voxmap_parse(path, buf, len, out, err, errlen);
    free(buf);
    return rs;
}

on_status on_voxmap_parse(const char *path, const char *buf, size_t len, on_voxmap *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    memset(out, 0, sizeof *out);
    vox_parser p = {buf, buf + len, path, NULL, 0, 1, err, errlen};
    int dims[3];
    on_status st = parse_header(&p, dims);
    if (on_failed(st)) return st;
    /* Every voxel line takes at least 5 bytes plus a line end: a bound that needs no growing. */
    size_t cap = (size_t)(p.end - p.s) / 5 + 1;
    uint16_t *xyz = malloc(cap * 3 * sizeof *xyz);
    if (!xyz) {
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        return ON_FAILURE | ON_NO_MEMORY;
    }
    static const char axis[3] = {'x', 'y', 'z'};
    size_t count = 0;
    while (p.s < p.end) {
        skip_blank(&p);
        if (end_line(&p)) continue; /* blank line */
        uint16_t *c = xyz + 3 * count;
        for (int i = 0; i < 3; i++) {
            long v;
            if (i) skip_blank(&p);
            if (!parse_int(&p, &v)) {
                st = vfail(&p, "malformed line (expected \"x y z\")");
                goto fail;
            }
            if (v < 0 || v >= dims[i]) {
                st = vfail(&p, "%c %.*s out of range 0..%d", axis[i], p.toklen, p.tok, dims[i] - 1);
                goto fail;
            }
            c[i] = (uint16_t)v;
        }
        if (!end_line(&p)) {
            st = vfail(&p, "malformed line (expected \"x y z\")");
            goto fail;
        }
        count++;
    }
    if (count == 0) {
        free(xyz);
        xyz = NULL;
    } else if (count < cap) {
        uint16_t *tight = realloc(xyz, count * 3 * sizeof *xyz);
        if (tight) xyz = tight;
    }
    out->w = dims[0];
    out->h = dims[1];
    out->d = dims[2];
    out->count = count;
    out->xyz = xyz;
    return ON_SUCCESS;
fail:
    free(xyz);
    return st;
}

void on_voxmap_free(on_voxmap *m)
{
    if (!m) return;
    free(m->xyz);
    memset(m, 0, sizeof *m);
}

/* ---- baking ----------------------------------------------------------------------------------- */

/* LSD radix sort of n keys below 2^bits, 11 bits a pass, between a and tmp; returns the one
 * holding the sorted keys. */
#define RADIX_BITS 11
static uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, size_t n, int bits)
{
    size_t cnt[1u << RADIX_BITS];
    const uint64_t mask = (1u << RADIX_BITS) - 1;
    for (int shift = 0; shift < bits; shift += RADIX_BITS) {
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++) cnt[(a[i] >> shift) & mask]++;
        size_t sum = 0;
        for (size_t d = 0; d <= mask; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[cnt[(a[i] >> shift) & mask]++] = a[i];
        uint64_t *sw = a;
        a = tmp;
        tmp = sw;
    }
    return a;
}

static on_status add_box_i(on_tree *t, int64_t x0, int64_t y0, int64_t z0, int64_t x1, int64_t y1, int64_t z1)
{
    double lo[3] = {(double)x0, (double)y0, (double)z0}, hi[3] = {(double)x1, (double)y1, (double)z1};
    return on_tree_add_box(t, lo, hi);
}

static int bits_for(uint64_t v)
{
    int b = 0;
    while (b < 64 && (v >> b) != 0) b++;
    return b;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static on_status fit_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return ON_FAILURE | ON_INVALID;
}

on_status on_voxmap_fit(const on_voxmap *m, int depth, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!m) return fit_fail(err, errlen, "no map");
    if (depth < 1 || depth > ON_MAX_DEPTH) return fit_fail(err, errlen, "depth %d out of range 1..%d", depth, ON_MAX_DEPTH);
    int dims[3] = {m->w, m->h, m->d};
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t tiles = 1, n = (uint64_t)1 << depth;
    for (int i = 0; i < 3; i++) {
        if (dims[i] < 1 || dims[i] > VOX_MAX_DIM)
            return fit_fail(err, errlen, "map size %d along %c out of range 1..%d", dims[i], axis[i], VOX_MAX_DIM);
        uint64_t ti = ((uint64_t)dims[i] + n - 1) / n;
        if (ti > ON_MAX_TILES_PER_AXIS)
            return fit_fail(err, errlen, "map too wide for depth %d: %d voxels along %c need %llu tiles (at most %d)",
                            depth, dims[i], axis[i], (unsigned long long)ti, ON_MAX_TILES_PER_AXIS);
        tiles *= ti;
    }
    if (tiles > VOX_MAX_TILES)
        return fit_fail(err, errlen, "map %d x %d x %d needs %llu tiles at depth %d (at most %u): use a larger depth",
                        dims[0], dims[1], dims[2], (unsigned long long)tiles, depth, VOX_MAX_TILES);
    return ON_SUCCESS;
}

on_status on_tree_from_voxmap(const on_voxmap *m, int depth, on_tree **out)
{
    if (!out) return ON_FAILURE | ON_INVALID;
    *out = NULL;
    if (!m || depth < 1 || depth > ON_MAX_DEPTH) return ON_FAILURE | ON_INVALID;
    int dims[3] = {m->w, m->h, m->d};
    on_status fit = on_voxmap_fit(m, depth, NULL, 0);
    if (on_failed(fit)) return fit;
    if (m->count && !m->xyz) return ON_FAILURE | ON_INVALID;
    for (size_t i = 0; i < m->count; i++)
        for (int a = 0; a < 3; a++)
            if (m->xyz[3 * i + a] >= dims[a]) return ON_FAILURE | ON_INVALID;

    int n = 1 << depth;
    on_tree_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 3; i++) p.tiles[i] = (dims[i] + n - 1) / n;
    p.depth = depth;
    p.scale = 1;
    on_tree *t;
    on_status st = on_tree_create(&p, &t);
    if (on_failed(st)) return st;

    /* The map's extent in each tile: beyond it, blocked (table.h), W x H x D stays the map. */
    int64_t W = dims[0], H = dims[1], D = dims[2];
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        int ijk[3];
        uint16_t lim[3];
        on_tile_coords(t, ti, ijk);
        for (int j = 0; j < 3; j++) {
            int rest = dims[j] - ijk[j] * n;
            lim[j] = (uint16_t)(rest >= n ? 0 : rest);
        }
        on_table_limit(&t->tiles[ti].table, lim);
    }

    if (m->count) {
        /* key = (z * H + y) * W + x: runs of x are adjacent, rows of one slab follow each other */
        size_t cnt = m->count;
        uint64_t *keys = cnt <= SIZE_MAX / 2 / sizeof *keys ? malloc(cnt * 2 * sizeof *keys) : NULL;
        if (!keys) {
            st = ON_FAILURE | ON_NO_MEMORY;
            goto fail;
        }
        for (size_t i = 0; i < cnt; i++) {
            const uint16_t *c = m->xyz + 3 * i;
            keys[i] = ((uint64_t)c[2] * (uint64_t)H + c[1]) * (uint64_t)W + c[0];
        }
        const uint64_t *sk = radix_sort(keys, keys + cnt, cnt, bits_for((uint64_t)W * (uint64_t)H * (uint64_t)D));
        size_t i = 0;
        while (i < cnt && on_ok(st)) {
            uint64_t k0 = sk[i];
            size_t j = i + 1;
            uint64_t x0 = k0 % (uint64_t)W, row = k0 / (uint64_t)W;
            int64_t len = 1;
            /* extend over duplicates and consecutive x in the same row */
            while (j < cnt && (sk[j] == k0 + (uint64_t)len - 1 || sk[j] == k0 + (uint64_t)len) &&
                   sk[j] / (uint64_t)W == row) {
                if (sk[j] == k0 + (uint64_t)len) len++;
                j++;
            }
            int64_t y = (int64_t)(row % (uint64_t)H), z = (int64_t)(row / (uint64_t)H);
            st = add_box_i(t, (int64_t)x0, y, z, (int64_t)x0 + len, y + 1, z + 1);
            i = j;
        }
        free(keys);
        if (on_failed(st)) goto fail;
    }
    st = on_tree_compact(t, 0);
    if (on_failed(st)) goto fail;
    *out = t;
    return ON_SUCCESS;
fail:
    on_tree_destroy(t);
    return st;
}
