/*
 * test_objfile.c -- on_tree_add_obj: counts, fan split, index forms, line endings, error messages,
 * and what a closed mesh blocks. Real meshes under ../shared/data/meshes are checked when present.
 */
#include "octonav.h"
#include "tree.h"
#include "minitest.h"
#include "scratch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *put(const char *name, const char *text) { return scratch_put(name, text, strlen(text)); }

static on_tree *make_tree(int tiles, int depth)
{
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = p.tiles[1] = p.tiles[2] = tiles;
    p.depth = depth;
    p.scale = 1;
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) {
        fprintf(stderr, "on_tree_create failed\n");
        exit(2);
    }
    return t;
}

/* Same leaf states everywhere (both trees have the same grid)? */
static int same_leaves(const on_tree *a, const on_tree *b)
{
    int64_t e = (int64_t)a->p.tiles[0] * a->n;
    for (int64_t z = 0; z < e; z++)
        for (int64_t y = 0; y < e; y++)
            for (int64_t x = 0; x < e; x++)
                if (on_tree_leaf_free(a, x, y, z, NULL) != on_tree_leaf_free(b, x, y, z, NULL)) return 0;
    return 1;
}

static size_t blocked_leaves(const on_tree *t)
{
    int64_t e = (int64_t)t->p.tiles[0] * t->n;
    size_t n = 0;
    for (int64_t z = 0; z < e; z++)
        for (int64_t y = 0; y < e; y++)
            for (int64_t x = 0; x < e; x++) n += !on_tree_leaf_free(t, x, y, z, NULL);
    return n;
}

/* Load text as an OBJ into a fresh 8x8x8 tree (1 tile, depth 3). */
static on_status load(const char *name, const char *text, on_tree **out, size_t *nv, size_t *nt, char *err)
{
    *out = make_tree(1, 3);
    return on_tree_add_obj(*out, put(name, text), nv, nt, err, 256);
}

/* An error's text must be exactly "PATH:LINE: reason". */
static int err_is(const char *err, const char *name, int line, const char *reason)
{
    char want[512];
    snprintf(want, sizeof want, "%s/%s:%d: %s", scratch_dir, name, line, reason);
    if (strcmp(err, want) == 0) return 1;
    fprintf(stderr, "  got  \"%s\"\n  want \"%s\"\n", err, want);
    return 0;
}

static const char *cube_obj =
    "# a cube from 2.5 to 5.5, six quads\n"
    "mtllib cube.mtl\n"
    "o cube\n"
    "v 2.5 2.5 2.5\n"
    "v 5.5 2.5 2.5\n"
    "v 5.5 5.5 2.5\n"
    "v 2.5 5.5 2.5\n"
    "v 2.5 2.5 5.5\n"
    "v 5.5 2.5 5.5\n"
    "v 5.5 5.5 5.5\n"
    "v 2.5 5.5 5.5 1.0\n"
    "vt 0 0\n"
    "vn 0 0 1\n"
    "g sides\n"
    "usemtl stone\n"
    "s off\n"
    "\n"
    "f 1 2 3 4\n"
    "f 5/1 6/1 7/1 8/1\n"
    "f 1//1 2//1 6//1 5//1\n"
    "   f 4/1/1 3/1/1 7/1/1 8/1/1   \n"
    "f -8 -5 -1 -4\n"
    "f\t2 3 7 6\n"
    "l 1 2\n"
    "p 3\n";

static void test_cube(void)
{
    on_tree *t;
    size_t nv = 99, nt = 99;
    char err[256];
    on_status s = load("cube.obj", cube_obj, &t, &nv, &nt, err);
    CHECK(on_ok(s));
    CHECK_EQ_INT(nv, 8);
    CHECK_EQ_INT(nt, 12);
    /* the faces lie inside leaves 2 and 5 of each axis: the shell of [2,5]^3 is blocked, the
     * inside {3,4}^3 and everything outside free */
    int wrong = 0;
    for (int z = 0; z < 8; z++)
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) {
                int in = x >= 2 && x <= 5 && y >= 2 && y <= 5 && z >= 2 && z <= 5;
                int inner = x >= 3 && x <= 4 && y >= 3 && y <= 4 && z >= 3 && z <= 4;
                int want_free = !in || inner;
                if (on_tree_leaf_free(t, x, y, z, NULL) != want_free) wrong++;
            }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(blocked_leaves(t), 64 - 8);
    double inside[3] = {4, 4, 4};
    CHECK(on_ok(on_tree_locate(t, inside, NULL)));

    /* the same cube as CRLF text, without a final line end */
    size_t len = strlen(cube_obj);
    char *crlf = malloc(2 * len + 1);
    size_t k = 0;
    for (size_t i = 0; i < len; i++) {
        if (cube_obj[i] == '\n') crlf[k++] = '\r';
        crlf[k++] = cube_obj[i];
    }
    crlf[k - 2] = '\0'; /* drop the last "\r\n" */
    on_tree *t2;
    s = load("cube_crlf.obj", crlf, &t2, &nv, &nt, err);
    CHECK(on_ok(s));
    CHECK_EQ_INT(nv, 8);
    CHECK_EQ_INT(nt, 12);
    CHECK(same_leaves(t, t2));
    free(crlf);
    on_tree_destroy(t);
    on_tree_destroy(t2);
}

static void test_counts_and_forms(void)
{
    on_tree *a, *b;
    size_t nv, nt;
    char err[256];
    /* triangle, quad, pentagon, hexagon: 1 + 2 + 3 + 4 triangles */
    CHECK(on_ok(load("poly.obj",
                     "v 1 1 1\nv 2 1 1\nv 2 2 1\nv 1 2 1\nv 0.5 1.5 1\nv 1.5 0.5 1\n"
                     "f 1 2 3\nf 1 2 3 4\nf 1 2 3 4 5\nf 6 2 3 4 5 1\n",
                     &a, &nv, &nt, err)));
    CHECK_EQ_INT(nv, 6);
    CHECK_EQ_INT(nt, 10);
    on_tree_destroy(a);

    /* the index forms and negative indices give the same triangles as plain indices */
    const char *verts = "v 0.5 0.5 0.5\nv 6.5 1.5 0.5\nv 3.5 7.5 2.5\nv 1.5 3.5 7.5\n";
    char txt[1024];
    snprintf(txt, sizeof txt, "%sf 1 2 3\nf 1 3 4\n", verts);
    CHECK(on_ok(load("plain.obj", txt, &a, &nv, &nt, err)));
    CHECK_EQ_INT(nt, 2);
    static const char *const forms[] = {
        "f 1/1 2/2 3/3\nf 1/4 3/5 4/6\n",
        "f 1//1 2//2 3//3\nf 1//4 3//5 4//6\n",
        "f 1/1/1 2/2/2 3/3/3\nf 1/4/1 3/5/1 4/6/1\n",
        "f -4 -3 -2\nf -4 -2 -1\n",
        "f -4/-1/-1 -3/-2/-2 -2/-3/-3\nf -4//-1 -2//-1 -1//-1\n",
        "f 1 2 3 4\n", /* the quad's fan is exactly (1 2 3) (1 3 4) */
    };
    for (unsigned i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        snprintf(txt, sizeof txt, "vt 0 0\nvn 0 1 0\n%s%s", verts, forms[i]);
        nt = 0;
        CHECK(on_ok(load("form.obj", txt, &b, &nv, &nt, err)));
        CHECK_EQ_INT(nv, 4);
        CHECK_EQ_INT(nt, 2);
        CHECK(same_leaves(a, b));
        on_tree_destroy(b);
    }
    /* the other diagonal blocks different leaves, so the comparison above means something */
    snprintf(txt, sizeof txt, "%sf 2 3 4\nf 2 4 1\n", verts);
    CHECK(on_ok(load("other.obj", txt, &b, &nv, &nt, err)));
    CHECK(!same_leaves(a, b));
    on_tree_destroy(b);
    on_tree_destroy(a);

    /* negative indices are relative to the vertices read so far */
    CHECK(on_ok(load("rel.obj", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf -3 -2 -1\nv 5 5 5\nv 6 5 5\nv 5 6 6\nf -3 -2 -1\n",
                     &a, &nv, &nt, err)));
    CHECK(on_ok(load("abs.obj", "v 1 1 1\nv 2 1 1\nv 1 2 1\nf 1 2 3\nv 5 5 5\nv 6 5 5\nv 5 6 6\nf 4 5 6\n",
                     &b, &nv, &nt, err)));
    CHECK_EQ_INT(nv, 6);
    CHECK_EQ_INT(nt, 2);
    CHECK(same_leaves(a, b));
    CHECK(!on_tree_leaf_free(a, 5, 5, 5, NULL));
    on_tree_destroy(a);
    on_tree_destroy(b);

    /* a fan matches on_tree_add_triangles with (v0, vi, vi+1) on a bent hexagon */
    double hv[] = {4.2, 4.1, 1.3, 7.1, 2.2, 3.4, 6.3, 6.8, 1.1, 3.3, 7.4, 5.9, 0.6, 5.1, 2.2, 1.7, 0.9, 6.6};
    uint32_t fan[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 5};
    CHECK(on_ok(load("hex.obj",
                     "v 4.2 4.1 1.3\nv 7.1 2.2 3.4\nv 6.3 6.8 1.1\nv 3.3 7.4 5.9\nv 0.6 5.1 2.2\nv 1.7 0.9 6.6\n"
                     "f 1 2 3 4 5 6\n",
                     &a, &nv, &nt, err)));
    CHECK_EQ_INT(nt, 4);
    b = make_tree(1, 3);
    CHECK(on_ok(on_tree_add_triangles(b, hv, 6, fan, 4)));
    CHECK(same_leaves(a, b));
    on_tree_destroy(a);
    on_tree_destroy(b);

    /* empty file, comments only: nothing inserted */
    CHECK(on_ok(load("empty.obj", "", &a, &nv, &nt, err)));
    CHECK_EQ_INT(nv, 0);
    CHECK_EQ_INT(nt, 0);
    CHECK_EQ_INT(blocked_leaves(a), 0);
    on_tree_destroy(a);

    /* a lone-CR file, scientific notation, a colour extension and a UTF-8 BOM */
    CHECK(on_ok(load("cr.obj", "\xef\xbb\xbfv 1e0 1 1 0.5 0.5 0.5\rv 2 +1 1\rv 1 2 .1e1\rf 1 2 3\r", &a, &nv, &nt, err)));
    CHECK_EQ_INT(nv, 3);
    CHECK_EQ_INT(nt, 1);
    on_tree_destroy(a);
}

static void test_long_lines(void)
{
    /* a 200k character comment, and one face of 5000 vertices on a long line */
    size_t nverts = 5000;
    size_t cap = 400000 + nverts * 64;
    char *txt = malloc(cap);
    size_t k = 0;
    txt[k++] = '#';
    for (int i = 0; i < 200000; i++) txt[k++] = 'x';
    txt[k++] = '\n';
    for (size_t i = 0; i < nverts; i++)
        k += (size_t)snprintf(txt + k, cap - k, "v %.6f %.6f 3.5\n", 4 + 3 * cos((double)i), 4 + 3 * sin((double)i));
    txt[k++] = 'f';
    for (size_t i = 0; i < nverts; i++) k += (size_t)snprintf(txt + k, cap - k, " %zu", i + 1);
    txt[k++] = '\n';
    txt[k] = '\0';
    on_tree *t;
    size_t nv, nt;
    char err[256];
    CHECK(on_ok(load("long.obj", txt, &t, &nv, &nt, err)));
    CHECK_EQ_INT(nv, nverts);
    CHECK_EQ_INT(nt, nverts - 2);
    on_tree_destroy(t);
    free(txt);
}

static void test_errors(void)
{
    on_tree *t;
    size_t nv = 7, nt = 7;
    char err[256];
    const char *v8 = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n";
    char txt[512];

    snprintf(txt, sizeof txt, "# eight\n%sf 1 2 12\n", v8);
    on_status s = load("badidx.obj", txt, &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "badidx.obj", 10, "bad vertex index 12 (8 vertices)"));
    CHECK_EQ_INT(nv, 0);
    CHECK_EQ_INT(nt, 0);
    CHECK_EQ_INT(on_tree_revision(t), 0); /* nothing inserted */
    on_tree_destroy(t);

    /* an index is checked against the vertices read so far */
    s = load("forward.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3\nv 1 1 0\n", &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "forward.obj", 3, "bad vertex index 3 (2 vertices)"));
    on_tree_destroy(t);

    snprintf(txt, sizeof txt, "%sf 1 2 3\r\nf -9 1 2\r\n", v8);
    s = load("badneg.obj", txt, &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "badneg.obj", 10, "bad vertex index -9 (8 vertices)"));
    on_tree_destroy(t);

    snprintf(txt, sizeof txt, "%sf 0/1/1 1 2\n", v8);
    s = load("zero.obj", txt, &t, &nv, &nt, err);
    CHECK(err_is(err, "zero.obj", 9, "bad vertex index 0 (8 vertices)"));
    on_tree_destroy(t);

    snprintf(txt, sizeof txt, "%s\n\nf 1 2\n", v8);
    s = load("short.obj", txt, &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "short.obj", 11, "face with fewer than 3 vertices"));
    on_tree_destroy(t);

    s = load("empty_face.obj", "v 0 0 0\nf\n", &t, &nv, &nt, err);
    CHECK(err_is(err, "empty_face.obj", 2, "face with fewer than 3 vertices"));
    on_tree_destroy(t);

    s = load("badnum.obj", "v 0 0 0\nv 1 0 x\n", &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "badnum.obj", 2, "bad number \"x\""));
    on_tree_destroy(t);

    s = load("badnum2.obj", "v 0 0 0\r\nv 1 0 1.5.2\r\n", &t, &nv, &nt, err);
    CHECK(err_is(err, "badnum2.obj", 2, "bad number \"1.5.2\""));
    on_tree_destroy(t);

    s = load("nan.obj", "v 0 0 0\nv 1 nan 0\n", &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "nan.obj", 2, "coordinate is not finite \"nan\""));
    on_tree_destroy(t);

    s = load("inf.obj", "v -inf 0 0\n", &t, &nv, &nt, err);
    CHECK(err_is(err, "inf.obj", 1, "coordinate is not finite \"-inf\""));
    on_tree_destroy(t);

    s = load("huge.obj", "v 1 1 1e999\n", &t, &nv, &nt, err);
    CHECK(err_is(err, "huge.obj", 1, "coordinate is not finite \"1e999\""));
    on_tree_destroy(t);

    s = load("twocoords.obj", "v 1 2\n", &t, &nv, &nt, err);
    CHECK(err_is(err, "twocoords.obj", 1, "vertex with fewer than 3 coordinates"));
    on_tree_destroy(t);

    s = load("badref.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3x\n", &t, &nv, &nt, err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "badref.obj", 4, "bad face vertex \"3x\""));
    on_tree_destroy(t);

    s = load("badref2.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3/a/1\n", &t, &nv, &nt, err);
    CHECK(err_is(err, "badref2.obj", 4, "bad face vertex \"3/a/1\""));
    on_tree_destroy(t);

    static const char nul[] = "v 0 0 0\nv 1 0\0 0\n";
    t = make_tree(1, 3);
    s = on_tree_add_obj(t, scratch_put("nul.obj", nul, sizeof nul - 1), NULL, NULL, err, sizeof err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK(err_is(err, "nul.obj", 2, "NUL byte in text"));
    on_tree_destroy(t);

    /* missing file and a directory */
    t = make_tree(1, 3);
    char missing[256];
    snprintf(missing, sizeof missing, "%s/no_such.obj", scratch_dir);
    nv = nt = 5;
    s = on_tree_add_obj(t, missing, &nv, &nt, err, sizeof err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_IO);
    CHECK(strncmp(err, missing, strlen(missing)) == 0);
    CHECK(strstr(err, "cannot read") != NULL);
    CHECK_EQ_INT(nv, 0);
    CHECK_EQ_INT(nt, 0);
    s = on_tree_add_obj(t, scratch_dir, NULL, NULL, err, sizeof err);
    CHECK_EQ_INT(s, ON_FAILURE | ON_IO);
    /* a tiny error buffer is filled without overflow, and NULL err is fine */
    char tiny[8];
    s = on_tree_add_obj(t, missing, NULL, NULL, tiny, sizeof tiny);
    CHECK_EQ_INT(s, ON_FAILURE | ON_IO);
    CHECK_EQ_INT(strlen(tiny), 7);
    s = on_tree_add_obj(t, put("e.obj", "f 1 2 3\n"), NULL, NULL, tiny, sizeof tiny);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    s = on_tree_add_obj(t, put("e2.obj", "f 1 2 3\n"), NULL, NULL, NULL, 0);
    CHECK_EQ_INT(s, ON_FAILURE | ON_CORRUPT);
    CHECK_EQ_INT(on_tree_add_obj(NULL, missing, NULL, NULL, NULL, 0), ON_FAILURE | ON_INVALID);
    on_tree_destroy(t);
}

static void test_real_mesh(const char *path, double ox, double oy, double oz, int tx, int ty, int tz,
                           size_t want_v, size_t want_t)
{
    FILE *f = fopen(path, "rb");
    if (!f) return; /* data not present: skip */
    fclose(f);
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.tiles[0] = tx;
    p.tiles[1] = ty;
    p.tiles[2] = tz;
    p.depth = 5;
    p.scale = 1;
    p.origin[0] = ox;
    p.origin[1] = oy;
    p.origin[2] = oz;
    on_tree *t;
    CHECK(on_ok(on_tree_create(&p, &t)));
    size_t nv = 0, nt = 0;
    char err[256] = "";
    on_status s = on_tree_add_obj(t, path, &nv, &nt, err, sizeof err);
    if (!on_ok(s)) fprintf(stderr, "%s\n", err);
    CHECK(on_ok(s));
    CHECK_EQ_INT(nv, want_v);
    CHECK_EQ_INT(nt, want_t);
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    CHECK(st.nodes > 0);
    on_tree_destroy(t);
}

static void run(void)
{
    scratch_open("onav_obj");
    test_cube();
    test_counts_and_forms();
    test_long_lines();
    test_errors();
    test_real_mesh("../shared/data/meshes/dungeon.obj", -30, -5, -95, 3, 2, 4, 5101, 10133);
    test_real_mesh("../shared/data/meshes/nav_test.obj", -30, -6, -48, 3, 1, 3, 884, 1612);
    scratch_close();
}

TEST_MAIN("objfile", run())
