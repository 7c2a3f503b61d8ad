/*
 * test_voxmap.c -- .3dmap reading (values, tolerated layout, errors with line numbers) and
 * on_tree_from_voxmap (exactly the voxels and the margin beyond W x H x D are blocked).
 * ../shared/data/voxel/Simple.3dmap is checked leaf by leaf when present.
 */
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
        /* spot checks: a voxel and its face neighbours, and the margin */
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
        CHECK_EQ_INT(wrong_leaves(t, &m), 0); /* all blocked: voxels plus margin */
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

static void run(void)
{
    scratch_open("onav_vox");
    test_small();
    test_errors();
    test_simple_map();
    scratch_close();
}

TEST_MAIN("voxmap", run())
