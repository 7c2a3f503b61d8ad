/*
 * objfile.c -- Wavefront OBJ meshes: read `v` and `f` statements and insert the triangles.
 *
 * The whole file is read into one buffer (so a line of any length is fine), split into lines in
 * place (LF, CRLF or a lone CR ends a line), and parsed with strtod (the "C" locale is assumed) and a
 * hand-written integer parser. Faces are fan-split (v0, vi, vi+1) as they are read; a vertex
 * reference is v, v/vt, v//vn or v/vt/vn, and an index is 1-based, or negative (relative: -1 is the
 * last vertex read so far). Every other statement (vt, vn, vp, o, g, s, usemtl, mtllib, l, p, ...)
 * and comments are ignored. Extra numbers after x y z on a `v` line (w, or the common r g b colour
 * extension) are checked to be numbers and otherwise ignored. The triangles are inserted with one
 * on_tree_add_triangles call once the whole file has parsed.
 */
#include "tree.h"
#include "fileio.h"
#include "util.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJ_MAX_EXTRA 4 /* numbers accepted after x y z: w, or r g b (and one spare) */

/* ---- growable arrays -------------------------------------------------------------------------- */

typedef struct dvec {
    double *v;
    size_t n, cap;
} dvec;

typedef struct uvec {
    uint32_t *v;
    size_t n, cap;
} uvec;

static int dvec_push3(dvec *a, const double x[3])
{
    if (on_grow((void **)&a->v, &a->cap, a->n + 3, sizeof *a->v)) return -1;
    a->v[a->n++] = x[0];
    a->v[a->n++] = x[1];
    a->v[a->n++] = x[2];
    return 0;
}

static int uvec_push3(uvec *a, uint32_t i0, uint32_t i1, uint32_t i2)
{
    if (on_grow((void **)&a->v, &a->cap, a->n + 3, sizeof *a->v)) return -1;
    a->v[a->n++] = i0;
    a->v[a->n++] = i1;
    a->v[a->n++] = i2;
    return 0;
}

/* ---- parsing ---------------------------------------------------------------------------------- */

typedef struct obj_parser {
    const char *path;
    size_t line;
    dvec verts;       /* 3 doubles a vertex */
    uvec tris;        /* 3 indices a triangle */
    char *err;
    size_t errlen;
} obj_parser;

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static const char *skip_ws(const char *s)
{
    while (is_ws(*s)) s++;
    return s;
}

static size_t token_len(const char *s)
{
    size_t n = 0;
    while (s[n] && !is_ws(s[n])) n++;
    return n;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static on_status fail_at(obj_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    on_parse_error(p->err, p->errlen, p->path, p->line, fmt, ap);
    va_end(ap);
    return ON_FAILURE | ON_CORRUPT;
}

static on_status fail_nomem(obj_parser *p)
{
    if (p->err && p->errlen) snprintf(p->err, p->errlen, "%s:%zu: out of memory", p->path, p->line);
    return ON_FAILURE | ON_NO_MEMORY;
}

/* A token shown in a message: at most 32 characters. */
#define TOK_FMT "\"%.*s\"%s"
#define TOK_ARGS(s, n) (int)((n) > 32 ? 32 : (n)), (s), ((n) > 32 ? "..." : "")

/* `v x y z [w]`: s points past the keyword. */
static on_status parse_vertex(obj_parser *p, const char *s)
{
    double c[3];
    int n = 0;
    for (;;) {
        s = skip_ws(s);
        if (!*s) break;
        char *e;
        double v = strtod(s, &e);
        if (e == s || (*e && !is_ws(*e))) {
            size_t tl = token_len(s);
            return fail_at(p, "bad number " TOK_FMT, TOK_ARGS(s, tl));
        }
        if (n < 3) {
            if (!isfinite(v)) {
                size_t tl = token_len(s);
                return fail_at(p, "coordinate is not finite " TOK_FMT, TOK_ARGS(s, tl));
            }
            c[n] = v;
        } else if (n >= 3 + OBJ_MAX_EXTRA) {
            return fail_at(p, "too many numbers on a v line");
        }
        n++;
        s = e;
    }
    if (n < 3) return fail_at(p, "vertex with fewer than 3 coordinates");
    if (p->verts.n / 3 >= UINT32_MAX) return fail_at(p, "too many vertices");
    if (dvec_push3(&p->verts, c) != 0) return fail_nomem(p);
    return ON_SUCCESS;
}

/* An optional-sign integer; returns the end or NULL when there are no digits. Saturates at
 * +-(INT64_MAX/10) magnitude, which no valid index reaches. */
static const char *parse_int(const char *s, long long *out)
{
    int neg = 0;
    if (*s == '-' || *s == '+') neg = *s++ == '-';
    if (!is_digit(*s)) return NULL;
    long long v = 0;
    while (is_digit(*s)) {
        if (v < LLONG_MAX / 100) v = v * 10 + (*s - '0');
        s++;
    }
    *out = neg ? -v : v;
    return s;
}

/* `f a b c ...`: s points past the keyword. */
static on_status parse_face(obj_parser *p, const char *s)
{
    size_t nv = p->verts.n / 3;
    uint32_t first = 0, prev = 0;
    size_t k = 0;
    for (;;) {
        s = skip_ws(s);
        if (!*s) break;
        const char *tok = s;
        long long idx, dummy;
        const char *e = parse_int(s, &idx);
        int ok = e != NULL;
        if (ok && *e == '/') { /* v/vt, v//vn, v/vt/vn (empty fields tolerated) */
            e++;
            if (*e != '/' && *e && !is_ws(*e)) {
                e = parse_int(e, &dummy);
                ok = e != NULL;
            }
            if (ok && *e == '/') {
                e++;
                if (*e && !is_ws(*e)) {
                    e = parse_int(e, &dummy);
                    ok = e != NULL;
                }
            }
        }
        if (!ok || (*e && !is_ws(*e))) {
            size_t tl = token_len(tok);
            return fail_at(p, "bad face vertex " TOK_FMT, TOK_ARGS(tok, tl));
        }
        long long r = idx > 0 ? idx - 1 : (long long)nv + idx;
        if (idx == 0 || r < 0 || (unsigned long long)r >= (unsigned long long)nv) {
            size_t il = 0;
            while (tok[il] && tok[il] != '/' && !is_ws(tok[il])) il++;
            return fail_at(p, "bad vertex index %.*s (%zu vertices)", (int)(il > 24 ? 24 : il), tok, nv);
        }
        uint32_t cur = (uint32_t)r;
        if (k == 0) first = cur;
        else if (k >= 2) {
            if (uvec_push3(&p->tris, first, prev, cur) != 0) return fail_nomem(p);
        }
        prev = cur;
        k++;
        s = e;
    }
    if (k < 3) return fail_at(p, "face with fewer than 3 vertices");
    return ON_SUCCESS;
}

static on_status parse_line(obj_parser *p, const char *s)
{
    s = skip_ws(s);
    size_t kl = token_len(s);
    if (kl == 1 && s[0] == 'v') return parse_vertex(p, s + 1);
    if (kl == 1 && s[0] == 'f') return parse_face(p, s + 1);
    return ON_SUCCESS; /* comments, blank lines and every other statement */
}

static on_status parse_buffer(obj_parser *p, char *buf, size_t len)
{
    char *s = buf, *end = buf + len;
    if (len >= 3 && (unsigned char)s[0] == 0xef && (unsigned char)s[1] == 0xbb && (unsigned char)s[2] == 0xbf)
        s += 3; /* UTF-8 byte order mark */
    p->line = 0;
    while (s < end) {
        p->line++;
        char *e = s;
        while (e < end && *e != '\n' && *e != '\r') {
            if (*e == '\0') return fail_at(p, "NUL byte in text");
            e++;
        }
        char c = *e; /* '\n', '\r', or the terminating NUL at end */
        *e = '\0';
        on_status st = parse_line(p, s);
        if (on_failed(st)) return st;
        s = e + 1;
        if (c == '\r' && s < end && *s == '\n') s++;
    }
    return ON_SUCCESS;
}

on_status on_obj_read(const char *path, double **verts, size_t *nverts, uint32_t **tris, size_t *ntris, char *err,
                      size_t errlen)
{
    *verts = NULL;
    *tris = NULL;
    *nverts = *ntris = 0;
    if (err && errlen) err[0] = '\0';
    char *buf;
    size_t len;
    on_status rs = on_read_file(path, (uint8_t **)&buf, &len, err, errlen);
    if (!on_ok(rs)) return rs;
    rs = on_obj_parse(path, buf, len, verts, nverts, tris, ntris, err, errlen);
    free(buf);
    return rs;
}

on_status on_obj_parse(const char *path, char *buf, size_t len, double **verts, size_t *nverts, uint32_t **tris,
                       size_t *ntris, char *err, size_t errlen)
{
    *verts = NULL;
    *tris = NULL;
    *nverts = *ntris = 0;
    if (err && errlen) err[0] = '\0';
    obj_parser p;
    memset(&p, 0, sizeof p);
    p.path = path;
    p.err = err;
    p.errlen = errlen;
    on_status st = parse_buffer(&p, buf, len);
    if (!on_ok(st)) {
        free(p.verts.v);
        free(p.tris.v);
        return st;
    }
    *verts = p.verts.v;
    *tris = p.tris.v;
    *nverts = p.verts.n / 3;
    *ntris = p.tris.n / 3;
    return ON_SUCCESS;
}

on_status on_tree_add_obj(on_tree *t, const char *path, size_t *nverts, size_t *ntris, char *err, size_t errlen)
{
    if (nverts) *nverts = 0;
    if (ntris) *ntris = 0;
    if (err && errlen) err[0] = '\0';
    if (!t || !path) {
        if (err && errlen) snprintf(err, errlen, "invalid argument");
        return ON_FAILURE | ON_INVALID;
    }
    double *v;
    uint32_t *tr;
    size_t nv, nt;
    on_status st = on_obj_read(path, &v, &nv, &tr, &nt, err, errlen);
    if (!on_ok(st)) return st;
    st = on_tree_add_triangles(t, v, nv, tr, nt);
    if (on_failed(st)) {
        if (err && errlen) snprintf(err, errlen, "%s: inserting triangles: %s", path, on_status_string(st));
    } else {
        if (nverts) *nverts = nv;
        if (ntris) *ntris = nt;
    }
    free(v);
    free(tr);
    return st;
}
