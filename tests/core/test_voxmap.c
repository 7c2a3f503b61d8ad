/*
 * test_voxmap.c -- .3dmap reading (values, tolerated layout, errors with line numbers) and
 * on_tree_from_voxmap (exactly the voxels and the space beyond W x H x D are blocked; the map's bounds
 * read node for node as the blocked margin box they replace, with none of it stored, also after
 * blocking cells under a boundary node).
 * ../shared/data/voxel/Simple.3dmap is checked leaf by leaf when present.
 */
#include "octonav.h"
#include "tree.h"
#include "minitest.h"
#include "scratch.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *put(const char *name, const char *text) { return scratch_put(name, text, strlen(text)); }

static int err_is(const char *err, const char *name, int line, const char *reason)
{
    char want[512];
    snprintf(want, sizeof want, "%s/%s:%d: %s", scratch_dir, name, line, reason);
    if (strcmp(err, want) == 0) return 1;
    fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", err, want);
    return 0;
}

/* Every leaf of the tile grid: blocked exactly where the map has a voxel or lies outside W x H x D.
 * Returns the number of leaves in the wrong state. */
static size_t wrong_leaves(const on_tree *t, const on_voxmap *m)
{
    size_t w = (size_t)m->w, h = (size_t)m->h;
    unsigned char *vox = calloc(w * h * (size_t)m->d, 1);
    for (size_t i = 0; i < m->count; i++) {
        const uint16_t *c = m->xyz + 3 * i;
        vox[c[0] + w * (c[1] + h * c[2])] = 1;
    }
    int64_t ext[3];
    for (int a = 0; a < 3; a++) ext[a] = (int64_t)t->p.tiles[a] * t->n;
    size_t wrong = 0;
    for (int64_t z = 0; z < ext[2]; z++)
        for (int64_t y = 0; y < ext[1]; y++)
            for (int64_t x = 0; x < ext[0]; x++) {
                int inside = x < m->w && y < m->h && z < m->d;
                int want_free = inside && !vox[(size_t)x + w * ((size_t)y + h * (size_t)z)];
                if (on_tree_leaf_free(t, x, y, z, NULL) != want_free) wrong++;
            }
    free(vox);
    return wrong;
}

static void test_small(void)
{
    /* CRLF, blank lines, extra blanks, a duplicate, a row of x across a tile border, no final EOL */
    const char *txt = "voxel 5 6 7\r\n"
                      "0 0 0\r\n"
                      "3 4 5\r\n"
                      "\r\n"
                      "  4 4 5 \r\n"
                      "2\t5 6\r\n"
                      "3 4 5\r\n"
                      "2 2 3\n"
                      "0 2 3\n"
                      "4 2 3\n"
                      "1 2 3\n"
                      "3 2 3\n"
                      "4 5 6";
    on_voxmap m;
    char err[256] = "";
    on_status s = on_voxmap_read(put("small.3dmap", txt), &m, err, sizeof err);
    CHECK(on_ok(s));
    CHECK_EQ_INT(m.w, 5);
    CHECK_EQ_INT(m.h, 6);
    CHECK_EQ_INT(m.d, 7);
    CHECK_EQ_INT(m.count, 11);
    static const uint16_t want[] = {0, 0, 0, 3, 4, 5, 4, 4, 5, 2, 5, 6, 3, 4, 5, 2, 2, 3,
                                    0, 2, 3, 4, 2, 3, 1, 2, 3, 3, 2, 3, 4, 5, 6};
    CHECK(m.xyz && memcmp(m.xyz, want, sizeof want) == 0);

    for (int depth = 1; depth <= 4; depth++) {
        on_tree *t = NULL;
        s = on_tree_from_voxmap(&m, depth, &t);
        CHECK(on_ok(s));
        if (!t) continue;
        int n = 1 << depth;
        const on_tree_params *p = on_tree_get_params(t);
        CHECK_EQ_INT(p->tiles[0], (5 + n - 1) / n);
        CHECK_EQ_INT(p->tiles[1], (6 + n - 1) / n);
        CHECK_EQ_INT(p->tiles[2], (7 + n - 1) / n);
        CHECK_EQ_INT(p->depth, depth);
        CHECK(p->scale == 1 && p->radius == 0 && p->origin[0] == 0 && p->origin[1] == 0 && p->origin[2] == 0);
        CHECK_EQ_INT(wrong_leaves(t, &m), 0);
        /* spot checks: a voxel and its face neighbours, and beyond the map */
        CHECK(!on_tree_leaf_free(t, 3, 4, 5, NULL));
        CHECK(on_tree_leaf_free(t, 2, 4, 5, NULL));
        CHECK(on_tree_leaf_free(t, 3, 3, 5, NULL));
        CHECK(on_tree_leaf_free(t, 3, 5, 5, NULL));
        CHECK(on_tree_leaf_free(t, 3, 4, 4, NULL));
        CHECK(on_tree_leaf_free(t, 3, 4, 6, NULL));
        CHECK(on_tree_leaf_free(t, 0, 1, 0, NULL));
        if (depth >= 2) {
            CHECK(!on_tree_leaf_free(t, 5, 0, 0, NULL));
            CHECK(!on_tree_leaf_free(t, 0, 6, 0, NULL));
            CHECK(!on_tree_leaf_free(t, 0, 0, 7, NULL));
        }
        /* the tables are already compacted: compacting again changes nothing */
        on_tree_stats st, st2;
        on_tree_stats_get(t, &st);
        CHECK(on_ok(on_tree_compact(t, 0)));
        on_tree_stats_get(t, &st2);
        CHECK_EQ_INT(st2.slots, st.slots);
        on_tree_destroy(t);
    }
    on_voxmap_free(&m);
    CHECK(m.xyz == NULL && m.count == 0);
    on_voxmap_free(&m); /* twice is fine */
    on_voxmap_free(NULL);

    /* a map with no voxels; a map that fills its grid exactly */
    s = on_voxmap_read(put("none.3dmap", "voxel 4 4 4\n"), &m, err, sizeof err);
    CHECK(on_ok(s));
    CHECK_EQ_INT(m.count, 0);
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_from_voxmap(&m, 2, &t)));
    if (t) {
        CHECK_EQ_INT(on_tree_tile_nodes(t, 0), 0);
        CHECK(on_tree_leaf_free(t, 3, 3, 3, NULL));
        on_tree_destroy(t);
    }
    CHECK_EQ_INT(on_tree_from_voxmap(&m, 0, &t), ON_FAILURE | ON_INVALID);
    CHECK(t == NULL);
    CHECK_EQ_INT(on_tree_from_voxmap(&m, 10, &t), ON_FAILURE | ON_INVALID);
    on_voxmap_free(&m);

    char full[4096];
    size_t k = (size_t)snprintf(full, sizeof full, "voxel 2 2 2\n");
    for (int i = 0; i < 8; i++) k += (size_t)snprintf(full + k, sizeof full - k, "%d %d %d\n", i & 1, i >> 1 & 1, i >> 2);
    CHECK(on_ok(on_voxmap_read(put("full.3dmap", full), &m, err, sizeof err)));
    CHECK(on_ok(on_tree_from_voxmap(&m, 1, &t)));
    if (t) {
        CHECK_EQ_INT(wrong_leaves(t, &m), 0);
        on_tree_destroy(t);
    }
    CHECK(on_ok(on_tree_from_voxmap(&m, 3, &t)));
    if (t) {
        CHECK_EQ_INT(wrong_leaves(t, &m), 0); /* all blocked: voxels and beyond the map */
        on_tree_destroy(t);
    }
    on_voxmap_free(&m);

    /* too many tiles for the tree */
    m.w = 65535;
    m.h = 1;
    m.d = 1;
    m.count = 0;
    m.xyz = NULL;
    CHECK(on_failed(on_tree_from_voxmap(&m, 1, &t)));
    /* a hand-built map with a coordinate out of range */
    uint16_t bad[3] = {4, 0, 0};
    m.w = 4;
    m.count = 1;
    m.xyz = bad;
    CHECK_EQ_INT(on_tree_from_voxmap(&m, 2, &t), ON_FAILURE | ON_INVALID);
}

static void test_errors(void)
{
    on_voxmap m;
    char err[256];
    static const struct {
        const char *name, *text;
        int line;
        const char *reason;
    } cases[] = {
        {"h1.3dmap", "voxels 5 6 7\n", 1, "bad header (expected \"voxel W H D\")"},
        {"h2.3dmap", "voxel 5 6\n1 1 1\n", 1, "bad header (expected \"voxel W H D\")"},
        {"h3.3dmap", "voxel 5 6 7 8\n", 1, "bad header (expected \"voxel W H D\")"},
        {"h4.3dmap", "", 1, "bad header (expected \"voxel W H D\")"},
        {"h5.3dmap", "voxel 0 6 7\n", 1, "width 0 out of range 1..65535"},
        {"h6.3dmap", "voxel 5 65536 7\n", 1, "height 65536 out of range 1..65535"},
        {"h7.3dmap", "voxel 5 6 -7\n", 1, "depth -7 out of range 1..65535"},
        {"h8.3dmap", "voxel 5x 6 7\n", 1, "bad header (expected \"voxel W H D\")"},
        {"r1.3dmap", "voxel 5 6 7\n1 2 3\n5 0 0\n", 3, "x 5 out of range 0..4"},
        {"r2.3dmap", "voxel 5 6 7\r\n1 2 3\r\n\r\n0 6 0\r\n", 4, "y 6 out of range 0..5"},
        {"r3.3dmap", "voxel 5 6 7\n0 0 99999999999\n", 2, "z 99999999999 out of range 0..6"},
        {"r4.3dmap", "voxel 5 6 7\n1 -2 3\n", 2, "y -2 out of range 0..5"},
        {"m1.3dmap", "voxel 5 6 7\n1 2\n", 2, "malformed line (expected \"x y z\")"},
        {"m2.3dmap", "voxel 5 6 7\n1 2 3 4\n", 2, "malformed line (expected \"x y z\")"},
        {"m3.3dmap", "voxel 5 6 7\n1 2 x\n", 2, "malformed line (expected \"x y z\")"},
        {"m4.3dmap", "voxel 5 6 7\n1 2 3\n# comment\n", 3, "malformed line (expected \"x y z\")"},
        {"m5.3dmap", "voxel 5 6 7\n1 2 3.0\n", 2, "malformed line (expected \"x y z\")"},
        {"m6.3dmap", "voxel 5 6 7\n1,2,3\n", 2, "malformed line (expected \"x y z\")"},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m.count = 99;
        on_status s = on_voxmap_read(put(cases[i].name, cases[i].text), &m, err, sizeof err);
        CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
        CHECK(err_is(err, cases[i].name, cases[i].line, cases[i].reason));
        CHECK(m.xyz == NULL && m.count == 0);
    }
    char missing[256];
    snprintf(missing, sizeof missing, "%s/missing.3dmap", scratch_dir);
    on_status s = on_voxmap_read(missing, &m, err, sizeof err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_IO);
    CHECK(strncmp(err, missing, strlen(missing)) == 0);
    CHECK(strstr(err, "cannot read") != NULL);
    CHECK_EQ_INT(on_voxmap_read(scratch_dir, &m, NULL, 0), ON_FAILURE | ON_IO);
    CHECK_EQ_INT(on_voxmap_read(missing, NULL, err, sizeof err), ON_FAILURE | ON_INVALID);
    /* the largest dimensions parse */
    CHECK(on_ok(on_voxmap_read(put("big.3dmap", "voxel 65535 65535 65535\n65534 0 65534\n"), &m, err, sizeof err)));
    CHECK_EQ_INT(m.count, 1);
    CHECK(m.xyz && m.xyz[0] == 65534 && m.xyz[2] == 65534);
    on_voxmap_free(&m);
}

static void test_simple_map(void)
{
    const char *path = "../shared/data/voxel/Simple.3dmap";
    if (access(path, R_OK) != 0) return; /* data not present: skip */
    on_voxmap m;
    char err[256] = "";
    on_status s = on_voxmap_read(path, &m, err, sizeof err);
    if (!on_ok(s)) fprintf(stderr, "%s\n", err);
    CHECK(on_ok(s));
    CHECK_EQ_INT(m.w, 105);
    CHECK_EQ_INT(m.h, 132);
    CHECK_EQ_INT(m.d, 105);
    CHECK_EQ_INT(m.count, 512);
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_from_voxmap(&m, 4, &t)));
    if (t) {
        size_t blocked = 0;
        for (size_t i = 0; i < m.count; i++) {
            const uint16_t *c = m.xyz + 3 * i;
            blocked += !on_tree_leaf_free(t, c[0], c[1], c[2], NULL);
        }
        CHECK_EQ_INT(blocked, m.count);
        CHECK_EQ_INT(wrong_leaves(t, &m), 0);
        /* the comparison sees a single voxel: hide the last one and exactly one leaf is wrong */
        m.count--;
        CHECK_EQ_INT(wrong_leaves(t, &m), 1);
        m.count++;
        on_tree_stats st, st2;
        on_tree_stats_get(t, &st);
        CHECK(on_ok(on_tree_compact(t, 0)));
        on_tree_stats_get(t, &st2);
        CHECK_EQ_INT(st2.slots, st.slots);
        on_tree_destroy(t);
    }
    on_voxmap_free(&m);
}

/* The tree a blocked margin box up to the tile grid makes (what on_tree_from_voxmap built before the
 * bounds), one box per voxel. */
static on_tree *margin_tree(const on_voxmap *m, int depth)
{
    int n = 1 << depth;
    on_tree_params p;
    memset(&p, 0, sizeof p);
    int dims[3] = {m->w, m->h, m->d};
    for (int i = 0; i < 3; i++) p.tiles[i] = (dims[i] + n - 1) / n;
    p.depth = depth;
    p.scale = 1;
    on_tree *t;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    double E[3] = {(double)p.tiles[0] * n, (double)p.tiles[1] * n, (double)p.tiles[2] * n};
    double W = m->w, H = m->h, D = m->d;
    const double lo[3][3] = {{W, 0, 0}, {0, H, 0}, {0, 0, D}}, hi[3][3] = {{E[0], E[1], E[2]}, {W, E[1], E[2]}, {W, H, E[2]}};
    for (int a = 0; a < 3; a++)
        if (lo[a][a] < E[a]) on_tree_add_box(t, lo[a], hi[a]);
    for (size_t i = 0; i < m->count; i++) {
        const uint16_t *c = m->xyz + 3 * i;
        double a[3] = {c[0], c[1], c[2]}, b[3] = {c[0] + 1.0, c[1] + 1.0, c[2] + 1.0};
        on_tree_add_box(t, a, b);
    }
    on_tree_compact(t, 0);
    return t;
}

/* Every tile's encoding (pre-order of what readers see, boundary nodes as stored) is the same in a
 * and b; returns the number of tiles that differ. */
static size_t tiles_differ(const on_tree *a, const on_tree *b)
{
    size_t bad = 0, cap = 1 << 22;
    uint8_t *ba = malloc(cap), *bb = malloc(cap);
    for (uint32_t ti = 0; ti < on_tree_tile_count(a); ti++) {
        size_t la = 0, lb = 0;
        on_status sa = on_tree_encode_tile(a, ti, ba, cap, &la), sb = on_tree_encode_tile(b, ti, bb, cap, &lb);
        bad += !on_ok(sa) || !on_ok(sb) || la != lb || memcmp(ba, bb, la) != 0;
    }
    free(ba);
    free(bb);
    return bad;
}

typedef struct visit_log {
    uint64_t h;
    size_t n;
} visit_log;

static int log_cell(void *ud, on_cell c, int blocked)
{
    visit_log *v = ud;
    v->h = (v->h ^ ((uint64_t)c.tile << 33 | (uint64_t)c.code << 1 | (uint64_t)blocked)) * 0x100000001b3ull;
    v->n++;
    return 0;
}

/* The first free cell (in visit order) whose parent is a boundary node: a stored-or-not node the
 * margin tree stores and the bounded tree does not. */
typedef struct find_under {
    const on_tree *t;
    on_cell found;
    int ok;
} find_under;

static int under_boundary(void *ud, on_cell c, int blocked)
{
    find_under *f = ud;
    if (blocked || on_code_layer(c.code) >= (uint32_t)f->t->p.depth) return 0;
    uint32_t parent = on_code_parent(c.code);
    const on_table *tab = &f->t->tiles[c.tile].table;
    if (on_table_find(tab, parent) || on_table_get(tab, parent) < 0) return 0;
    f->found = c;
    f->ok = 1;
    return 1;
}

static void check_bounds_match(const on_voxmap *m, int depth)
{
    on_tree *t = NULL, *r = margin_tree(m, depth);
    CHECK(on_ok(on_tree_from_voxmap(m, depth, &t)));
    CHECK(r != NULL);
    if (!t || !r) goto done;
    CHECK_EQ_INT(tiles_differ(t, r), 0);
    visit_log vt = {0xcbf29ce484222325ull, 0}, vr = vt;
    on_tree_visit(t, log_cell, &vt);
    on_tree_visit(r, log_cell, &vr);
    CHECK(vt.h == vr.h && vt.n == vr.n);
    on_tree_stats st, sr;
    on_tree_stats_get(t, &st);
    on_tree_stats_get(r, &sr);
    CHECK(st.nodes <= sr.nodes);
    /* blocking a free cell under a boundary node stores that node first, with its outside flags */
    find_under f = {t, {0, 0}, 0};
    on_tree_visit(t, under_boundary, &f);
    if (f.ok) {
        CHECK(on_ok(on_tree_block_cell(t, f.found)));
        CHECK(on_ok(on_tree_block_cell(r, f.found)));
        CHECK_EQ_INT(tiles_differ(t, r), 0);
    }
done:
    on_tree_destroy(t);
    on_tree_destroy(r);
}

static void test_bounds(void)
{
    /* seeded random maps of several shapes, sparse and dense, at every depth that fits */
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    static const int shapes[][3] = {{5, 6, 7}, {17, 3, 9}, {1, 1, 1}, {33, 20, 2}, {8, 8, 8}, {9, 16, 31}};
    size_t checked = 0, under = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int dense = 0; dense < 2; dense++) {
            on_voxmap m;
            memset(&m, 0, sizeof m);
            m.w = shapes[si][0];
            m.h = shapes[si][1];
            m.d = shapes[si][2];
            size_t cells = (size_t)m.w * (size_t)m.h * (size_t)m.d;
            uint16_t *xyz = malloc(cells * 3 * sizeof *xyz);
            for (int z = 0; z < m.d; z++)
                for (int y = 0; y < m.h; y++)
                    for (int x = 0; x < m.w; x++) {
                        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                        if ((rng >> 40) % 100 < (dense ? 70u : 15u)) {
                            uint16_t *c = xyz + 3 * m.count++;
                            c[0] = (uint16_t)x;
                            c[1] = (uint16_t)y;
                            c[2] = (uint16_t)z;
                        }
                    }
            m.xyz = xyz;
            for (int depth = 1; depth <= 6; depth++) {
                check_bounds_match(&m, depth);
                on_tree *t = NULL;
                if (on_ok(on_tree_from_voxmap(&m, depth, &t))) {
                    CHECK_EQ_INT(wrong_leaves(t, &m), 0);
                    find_under f = {t, {0, 0}, 0};
                    on_tree_visit(t, under_boundary, &f);
                    under += (size_t)f.ok;
                }
                on_tree_destroy(t);
                checked++;
            }
            free(xyz);
        }
    CHECK_EQ_INT(checked, 72);
    CHECK(under > 20); /* blocking under a boundary node was exercised */

    /* a thin map asking for 65535 x 65535 x 1: 16,384 tiles, no node */
    on_voxmap m;
    memset(&m, 0, sizeof m);
    m.w = 65535;
    m.h = 65535;
    m.d = 1;
    on_tree *t = NULL;
    CHECK(on_ok(on_voxmap_fit(&m, 9, NULL, 0)));
    CHECK(on_ok(on_tree_from_voxmap(&m, 9, &t)));
    if (t) {
        on_tree_stats st;
        on_tree_stats_get(t, &st);
        CHECK_EQ_INT(st.nodes, 0);
        CHECK_EQ_INT(st.tiles, 128 * 128);
        CHECK(on_tree_leaf_free(t, 65534, 65534, 0, NULL));
        CHECK(!on_tree_leaf_free(t, 65535, 0, 0, NULL));
        CHECK(!on_tree_leaf_free(t, 0, 65535, 0, NULL));
        CHECK(!on_tree_leaf_free(t, 100, 100, 1, NULL));
        double a[3] = {10.5, 10.5, 0.5}, b[3] = {60000.5, 20000.5, 0.5}, c[3] = {10.5, 10.5, 1.5};
        CHECK(on_ok(on_tree_visible(t, a, b)));
        CHECK(!on_ok(on_tree_visible(t, a, c)));
        on_tree_destroy(t);
    }
}

static void run(void)
{
    scratch_open("onav_vox");
    test_small();
    test_errors();
    test_simple_map();
    test_bounds();
    scratch_close();
}

TEST_MAIN("voxmap", run())
