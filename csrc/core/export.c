/*
 * export.c -- the tree as an OBJ to look at in any 3D viewer, world space. Two forms:
 *  - surface (the default of tree:export_obj): the boundary of blocked (or free) space as merged quads
 *    (surface.c) on shared vertices, with one normal per axis direction: what a modeller shows well,
 *    a small fraction of the boxes' size;
 *  - boxes: each blocked or free cube as 8 vertices and 6 quads, one box per cell (tests and tools
 *    that want the cells themselves).
 * Both are written as save writes a tree (fileio.c's atomic writer): into a temporary beside the
 * target, renamed over it once complete, so a failure (a full disk) leaves the previous export in
 * place and the *_msg forms say why with the OS's reason ("PATH: cannot write: No space left on
 * device").
 */
#include "fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exp_ctx {
    const on_tree *t;
    FILE *f;
    int what;
    size_t boxes;
    int err;
    on_atomic_file *a;
} exp_ctx;

/* The first failed write's reason, kept for on_atomic_commit's message. */
static void write_failed(on_atomic_file *a)
{
    if (!a->en) a->en = errno ? errno : EIO;
}

static int emit_box(void *ud, on_cell c, int blocked)
{
    exp_ctx *x = ud;
    if (blocked != (x->what == 0)) return 0;
    double mn[3], s;
    on_tree_cell_bounds(x->t, c, mn, &s);
    for (int v = 0; v < 8; v++)
        if (fprintf(x->f, "v %.17g %.17g %.17g\n", mn[0] + ((v & 1) ? s : 0), mn[1] + ((v & 2) ? s : 0),
                    mn[2] + ((v & 4) ? s : 0)) < 0) {
            x->err = 1;
            write_failed(x->a);
        }
    static const int quads[6][4] = {{0, 2, 6, 4}, {1, 5, 7, 3}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 6, 7, 5}};
    size_t base = x->boxes * 8 + 1;
    for (int q = 0; q < 6; q++)
        if (fprintf(x->f, "f %zu %zu %zu %zu\n", base + quads[q][0], base + quads[q][1], base + quads[q][2],
                    base + quads[q][3]) < 0) {
            x->err = 1;
            write_failed(x->a);
        }
    x->boxes++;
    return x->err;
}

on_status on_tree_export_obj_msg(const on_tree *t, const char *path, int what, size_t *boxes, char *err,
                                 size_t errlen)
{
    if (boxes) *boxes = 0;
    if (err && errlen) err[0] = 0;
    if (what != 0 && what != 1) return ON_FAILURE | ON_INVALID;
    on_atomic_file a;
    on_status s = on_atomic_open(&a, path, err, errlen);
    if (!on_ok(s)) return s;
    exp_ctx x = {t, a.f, what, 0, 0, &a};
    errno = 0;
    if (fprintf(a.f, "# octonav %s cells\n", what ? "free" : "blocked") < 0) write_failed(&a);
    on_tree_visit(t, emit_box, &x);
    s = on_atomic_commit(&a, err, errlen);
    if (on_ok(s) && boxes) *boxes = x.boxes;
    return s;
}

on_status on_tree_export_obj(const on_tree *t, const char *path, int what, size_t *boxes)
{
    return on_tree_export_obj_msg(t, path, what, boxes, NULL, 0);
}

/* ---- surface OBJ --------------------------------------------------------------------------------- */

/* Vertices are shared through an open-addressing table keyed by their lattice coordinates, so a
 * corner where several quads meet is written once. */
typedef struct vtx_map {
    int64_t (*key)[3];
    uint32_t *id;      /* 0 = empty slot, else 1-based OBJ index */
    size_t cap, n;
} vtx_map;

typedef struct surf_ctx {
    FILE *f;
    on_atomic_file *a;
    const on_tree_params *p;
    vtx_map m;
    size_t faces;
    int err;           /* an on_status detail bit */
} surf_ctx;

static uint64_t hash3(const int64_t k[3])
{
    uint64_t h = (uint64_t)k[0] * 0x9E3779B97F4A7C15ull ^ (uint64_t)k[1] * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)k[2] * 0x165667B19E3779F9ull;
    h ^= h >> 31;
    return h * 0xD6E8FEB86659FD93ull;
}

static int map_grow(vtx_map *m)
{
    size_t cap = m->cap ? 2 * m->cap : 4096;
    int64_t(*key)[3] = malloc(cap * sizeof *key);
    uint32_t *id = calloc(cap, sizeof *id);
    if (!key || !id) {
        free(key);
        free(id);
        return 0;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->id[i]) continue;
        size_t j = hash3(m->key[i]) & (cap - 1);
        while (id[j]) j = (j + 1) & (cap - 1);
        memcpy(key[j], m->key[i], sizeof key[j]);
        id[j] = m->id[i];
    }
    free(m->key);
    free(m->id);
    m->key = key;
    m->id = id;
    m->cap = cap;
    return 1;
}

/* The OBJ index of lattice point k, writing its "v" line the first time; 0 on failure. */
static uint32_t vertex(surf_ctx *x, const int64_t k[3])
{
    vtx_map *m = &x->m;
    if (4 * (m->n + 1) > 3 * m->cap && !map_grow(m)) {
        x->err = ON_NO_MEMORY;
        return 0;
    }
    size_t j = hash3(k) & (m->cap - 1);
    while (m->id[j]) {
        if (!memcmp(m->key[j], k, sizeof m->key[j])) return m->id[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (m->n >= 0xfffffffeu) {
        x->err = ON_NO_MEMORY;
        return 0;
    }
    memcpy(m->key[j], k, sizeof m->key[j]);
    m->id[j] = (uint32_t)++m->n;
    if (fprintf(x->f, "v %.17g %.17g %.17g\n", x->p->origin[0] + (double)k[0] * x->p->scale,
                x->p->origin[1] + (double)k[1] * x->p->scale, x->p->origin[2] + (double)k[2] * x->p->scale) < 0) {
        x->err = ON_IO;
        write_failed(x->a);
    }
    return m->id[j];
}

static int emit_quad(void *ud, const int64_t c[4][3], int normal)
{
    surf_ctx *x = ud;
    uint32_t id[4];
    for (int j = 0; j < 4; j++)
        if (!(id[j] = vertex(x, c[j]))) return 1;
    if (fprintf(x->f, "f %u//%d %u//%d %u//%d %u//%d\n", id[0], normal + 1, id[1], normal + 1, id[2], normal + 1,
                id[3], normal + 1) < 0) {
        x->err = ON_IO;
        write_failed(x->a);
    }
    x->faces++;
    return x->err != 0;
}

on_status on_tree_export_surface_obj_msg(const on_tree *t, const char *path, int what, size_t *faces, size_t *verts,
                                         char *err, size_t errlen)
{
    if (faces) *faces = 0;
    if (verts) *verts = 0;
    if (err && errlen) err[0] = 0;
    if (what != 0 && what != 1) return ON_FAILURE | ON_INVALID;
    on_atomic_file a;
    on_status s = on_atomic_open(&a, path, err, errlen);
    if (!on_ok(s)) return s;
    surf_ctx x;
    memset(&x, 0, sizeof x);
    x.f = a.f;
    x.a = &a;
    x.p = on_tree_get_params(t);
    errno = 0;
    if (fprintf(a.f, "# octonav %s surface\nvn -1 0 0\nvn 1 0 0\nvn 0 -1 0\nvn 0 1 0\nvn 0 0 -1\nvn 0 0 1\n",
                what ? "free" : "blocked") < 0)
        write_failed(&a);
    on_status st = on_tree_surface(t, what, emit_quad, &x);
    free(x.m.key);
    free(x.m.id);
    if (!x.err && !on_ok(st)) x.err = (int)(st & ~(on_status)ON_FAILURE);
    if (x.err && x.err != ON_IO) { /* out of memory or the surface's own failure: not a write's */
        on_atomic_abort(&a);
        if (err && errlen) snprintf(err, errlen, "%s: %s", path, on_status_string(ON_FAILURE | (on_status)x.err));
        return ON_FAILURE | (on_status)x.err;
    }
    s = on_atomic_commit(&a, err, errlen);
    if (!on_ok(s)) return s;
    if (faces) *faces = x.faces;
    if (verts) *verts = x.m.n;
    return ON_SUCCESS;
}

on_status on_tree_export_surface_obj(const on_tree *t, const char *path, int what, size_t *faces, size_t *verts)
{
    return on_tree_export_surface_obj_msg(t, path, what, faces, verts, NULL, 0);
}
