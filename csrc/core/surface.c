/*
 * surface.c -- the boundary between free and blocked space as few, large quads: what a viewer or an
 * OBJ file shows of a tree, instead of every blocked cube with its hidden faces.
 *
 * The walk goes over the free cells: a face of a free cell is surface wherever no free cell lies across
 * it (blocked space, the edge of the world, or a tile not loaded). Free neighbours are aligned cubes,
 * so splitting the face into quarters until each piece is wholly covered or wholly uncovered is exact
 * and stops at the smallest neighbour. The pieces are then merged: first into runs along one axis of
 * their plane, then runs of equal extent along the other. Coordinates stay integers (leaf units of the
 * whole grid) until the quads are handed out, so merging and vertex sharing compare exactly. The outer
 * faces of the tile grid are left out (they would wall in the whole world).
 * Depends on the public API (octonav.h) and node codes only.
 */
#include "octonav_core.h"
#include "codes.h"

#include <stdlib.h>
#include <string.h>

typedef struct sq_quad {
    int64_t plane;        /* coordinate on the face's axis */
    int64_t u0, u1, v0, v1; /* extent on the two other axes (u = axis+1, v = axis+2, mod 3) */
    int face;             /* 0..5 = -x,+x,-y,+y,-z,+z: the side of the free cell it was found on */
} sq_quad;

typedef struct sq_buf {
    sq_quad *q;
    size_t n, cap;
} sq_buf;

typedef struct sq_ctx {
    const on_tree *t;
    const on_tree_params *p;
    sq_buf out;
    on_cell *nb;          /* neighbour scratch */
    uint8_t *nbf;
    size_t nbcap;
    int64_t (*rects)[4];  /* free neighbour squares on the current face: u0, v0, size */
    size_t nrect, rectcap;
    int err;              /* an on_status detail bit */
} sq_ctx;

static int push_quad(sq_buf *b, const sq_quad *q)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        sq_quad *nq = realloc(b->q, cap * sizeof *nq);
        if (!nq) return 0;
        b->q = nq;
        b->cap = cap;
    }
    b->q[b->n++] = *q;
    return 1;
}

/* A cell's min corner and edge in leaf units of the whole tile grid. */
static void cell_lattice(const on_tree_params *p, on_cell c, int64_t m[3], int64_t *s)
{
    int64_t n = (int64_t)1 << p->depth;
    uint32_t ti = c.tile;
    int64_t ijk[3] = {ti % (uint32_t)p->tiles[0], (ti / (uint32_t)p->tiles[0]) % (uint32_t)p->tiles[1],
                      ti / ((uint32_t)p->tiles[0] * (uint32_t)p->tiles[1])};
    m[0] = ijk[0] * n + on_code_x(c.code);
    m[1] = ijk[1] * n + on_code_y(c.code);
    m[2] = ijk[2] * n + on_code_z(c.code);
    *s = on_code_size(c.code);
}

/* Emit the parts of the square [u0, u0+s) x [v0, v0+s) that no free neighbour covers. */
static void split_face(sq_ctx *x, sq_quad *q, int64_t u0, int64_t v0, int64_t s)
{
    int touched = 0;
    for (size_t i = 0; i < x->nrect; i++) {
        const int64_t *r = x->rects[i];
        if (r[0] >= u0 + s || u0 >= r[0] + r[2] || r[1] >= v0 + s || v0 >= r[1] + r[2]) continue;
        if (r[0] <= u0 && r[1] <= v0 && r[0] + r[2] >= u0 + s && r[1] + r[2] >= v0 + s) return; /* covered */
        touched = 1;
    }
    if (s == 1 && touched) return; /* unreachable: an aligned neighbour touching a leaf square covers it */
    if (!touched) {
        q->u0 = u0;
        q->u1 = u0 + s;
        q->v0 = v0;
        q->v1 = v0 + s;
        if (!push_quad(&x->out, q)) x->err = ON_NO_MEMORY;
        return;
    }
    int64_t h = s / 2;
    split_face(x, q, u0, v0, h);
    split_face(x, q, u0 + h, v0, h);
    split_face(x, q, u0, v0 + h, h);
    split_face(x, q, u0 + h, v0 + h, h);
}

static int visit_free(void *ud, on_cell c, int blocked)
{
    sq_ctx *x = ud;
    if (blocked) return 0;
    size_t count;
    for (;;) {
        on_status st = on_tree_neighbors(x->t, c, x->nb, x->nbf, x->nbcap, &count);
        if (on_ok(st)) break;
        if (!(st & ON_BUFFER_SMALL)) {
            x->err = ON_INVALID;
            return 1;
        }
        size_t cap = count + 64;
        on_cell *nb = realloc(x->nb, cap * sizeof *nb);
        if (nb) x->nb = nb;
        uint8_t *nbf = realloc(x->nbf, cap);
        if (nbf) x->nbf = nbf;
        if (!nb || !nbf) {
            x->err = ON_NO_MEMORY;
            return 1;
        }
        x->nbcap = cap;
    }
    int64_t m[3], s;
    cell_lattice(x->p, c, m, &s);
    for (int f = 0; f < 6; f++) {
        int k = f / 2, u = (k + 1) % 3, v = (k + 2) % 3;
        x->nrect = 0;
        for (size_t i = 0; i < count; i++) {
            if (x->nbf[i] != f) continue;
            if (x->nrect == x->rectcap) {
                size_t cap = x->rectcap ? 2 * x->rectcap : 64;
                int64_t(*r)[4] = realloc(x->rects, cap * sizeof *r);
                if (!r) {
                    x->err = ON_NO_MEMORY;
                    return 1;
                }
                x->rects = r;
                x->rectcap = cap;
            }
            int64_t nm[3], ns;
            cell_lattice(x->p, x->nb[i], nm, &ns);
            x->rects[x->nrect][0] = nm[u];
            x->rects[x->nrect][1] = nm[v];
            x->rects[x->nrect][2] = ns;
            x->nrect++;
        }
        sq_quad q = {.plane = m[k] + ((f & 1) ? s : 0), .face = f};
        /* the grid's own edge is not drawn: it would wall in the whole world */
        if (q.plane == 0 || q.plane == ((int64_t)x->p->tiles[k] << x->p->depth)) continue;
        split_face(x, &q, m[u], m[v], s);
        if (x->err) return 1;
    }
    return 0;
}

/* Sort keys for the two merging passes: runs along u (same plane, face and v extent), then along v. */
static int cmp_runs(const sq_quad *a, const sq_quad *b, int along_u)
{
    const int64_t ka[5] = {a->face, a->plane, along_u ? a->v0 : a->u0, along_u ? a->v1 : a->u1, along_u ? a->u0 : a->v0};
    const int64_t kb[5] = {b->face, b->plane, along_u ? b->v0 : b->u0, along_u ? b->v1 : b->u1, along_u ? b->u0 : b->v0};
    for (int i = 0; i < 5; i++)
        if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

static int cmp_u(const void *pa, const void *pb) { return cmp_runs(pa, pb, 1); }
static int cmp_v(const void *pa, const void *pb) { return cmp_runs(pa, pb, 0); }

static size_t merge_runs(sq_quad *q, size_t n, int along_u)
{
    qsort(q, n, sizeof *q, along_u ? cmp_u : cmp_v);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w > 0) {
            sq_quad *l = &q[w - 1];
            if (l->face == q[i].face && l->plane == q[i].plane) {
                if (along_u && l->v0 == q[i].v0 && l->v1 == q[i].v1 && l->u1 == q[i].u0) {
                    l->u1 = q[i].u1;
                    continue;
                }
                if (!along_u && l->u0 == q[i].u0 && l->u1 == q[i].u1 && l->v1 == q[i].v0) {
                    l->v1 = q[i].v1;
                    continue;
                }
            }
        }
        q[w++] = q[i];
    }
    return w;
}

on_status on_tree_surface(const on_tree *t, int what, on_quad_fn fn, void *ud)
{
    if (!t || !fn || (what != 0 && what != 1)) return ON_FAILURE | ON_INVALID;
    sq_ctx x;
    memset(&x, 0, sizeof x);
    x.t = t;
    x.p = on_tree_get_params(t);
    on_status st = on_tree_visit(t, visit_free, &x);
    if (!x.err && !on_ok(st)) x.err = ON_INVALID;
    if (!x.err) {
        /* alternate the two directions until neither merges any more (a few rounds) */
        for (size_t before = 0; before != x.out.n;) {
            before = x.out.n;
            x.out.n = merge_runs(x.out.q, x.out.n, 1);
            x.out.n = merge_runs(x.out.q, x.out.n, 0);
        }
        for (size_t i = 0; i < x.out.n; i++) {
            const sq_quad *q = &x.out.q[i];
            int k = q->face / 2, u = (k + 1) % 3, v = (k + 2) % 3;
            /* The free side is behind face f; blocked space's outward normal points back into the free
             * cell (the opposite side), free space's points across face f. */
            int normal = what == 0 ? (q->face ^ 1) : q->face;
            int64_t c[4][3];
            int64_t uv[4][2] = {{q->u0, q->v0}, {q->u1, q->v0}, {q->u1, q->v1}, {q->u0, q->v1}};
            for (int j = 0; j < 4; j++) {
                /* counter-clockwise seen from the normal's side: (u, v, +axis) is right-handed */
                int src = (normal & 1) ? j : 3 - j;
                c[j][k] = q->plane;
                c[j][u] = uv[src][0];
                c[j][v] = uv[src][1];
            }
            if (fn(ud, c, normal)) break;
        }
    }
    free(x.rects);
    free(x.nb);
    free(x.nbf);
    free(x.out.q);
    return x.err ? (ON_FAILURE | (on_status)x.err) : ON_SUCCESS;
}
