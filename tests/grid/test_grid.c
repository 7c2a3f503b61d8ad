/*
 * test_grid.c -- the dense grid baseline (grid.c): storage, the .map reader, exact A* on hand-built
 * grids with known lengths, path validity (contiguous moves, no corner cutting, costs summing to the
 * length), agreement with an independent Dijkstra on random grids, generation stamps across repeated
 * searches and their wrap-around, line of sight; and, when ../shared/data/voxel is present, the
 * benchmark scenarios of Simple (all) and Complex (first 300) reproduce the optimal lengths.
 */
#include "octonav.h"
#include "grid.h"
#include "minitest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S2 1.41421356237309504880
#define S3 1.73205080756887729353
#define ST_FAIL(d) (ON_FAILURE | (d))

static int near(double a, double b) { return fabs(a - b) <= 1e-9; }

static on_grid *make(int w, int h, int d)
{
    on_grid *g = NULL;
    on_status st = on_grid_create(w, h, d, &g);
    CHECK(st == ON_SUCCESS && g != NULL);
    return g;
}

/* A path obeys the movement model: starts at s, ends at t, each step to a free neighbour whose whole
 * 2x2(x2) box is free, and the step costs add up to len. Returns 1 when valid. */
static int path_ok(const on_grid *g, const int32_t *p, size_t n, const int s[3], const int t[3], double len)
{
    if (n < 1) return 0;
    if (p[0] != s[0] || p[1] != s[1] || p[2] != s[2]) return 0;
    if (p[3 * (n - 1)] != t[0] || p[3 * (n - 1) + 1] != t[1] || p[3 * (n - 1) + 2] != t[2]) return 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        if (on_grid_blocked(g, p[3 * i], p[3 * i + 1], p[3 * i + 2])) return 0;
    for (size_t i = 1; i < n; i++) {
        const int32_t *a = p + 3 * (i - 1), *b = p + 3 * i;
        int moved = 0, lo[3], hi[3];
        for (int j = 0; j < 3; j++) {
            int dd = b[j] - a[j];
            if (dd < -1 || dd > 1) return 0;
            moved += dd != 0;
            lo[j] = a[j] < b[j] ? a[j] : b[j];
            hi[j] = a[j] < b[j] ? b[j] : a[j];
        }
        if (!moved) return 0;
        for (int z = lo[2]; z <= hi[2]; z++)
            for (int y = lo[1]; y <= hi[1]; y++)
                for (int x = lo[0]; x <= hi[0]; x++)
                    if (on_grid_blocked(g, x, y, z)) return 0;
        sum += moved == 1 ? 1.0 : moved == 2 ? S2 : S3;
    }
    return fabs(sum - len) <= 1e-9 * (1.0 + len);
}

/* Search and check the result against an expected length (< 0: expect failure status `fail`). */
static void expect(on_grid *g, int sx, int sy, int sz, int tx, int ty, int tz, double want, on_status fail)
{
    int s[3] = {sx, sy, sz}, t[3] = {tx, ty, tz};
    int32_t path[3 * 4096];
    size_t np = 99, ex = 99;
    double len = -1;
    on_status st = on_grid_find(g, s, t, &len, &ex, path, 4096, &np);
    if (want >= 0) {
        CHECK_EQ_INT(st, ON_SUCCESS);
        if (!near(len, want)) fprintf(stderr, "  (%d,%d,%d)->(%d,%d,%d): length %.12f, expected %.12f\n", sx, sy, sz, tx,
                                      ty, tz, len, want);
        CHECK(near(len, want));
        CHECK(np <= 4096 && path_ok(g, path, np, s, t, len));
    } else {
        CHECK_EQ_INT(st, fail);
        CHECK_EQ_INT(np, 0);
    }
}

/* ---- storage ------------------------------------------------------------------------------------ */

static void test_create(void)
{
    on_grid *g = (on_grid *)1;
    CHECK_EQ_INT(on_grid_create(0, 1, 1, &g), ST_FAIL(ON_INVALID));
    CHECK(g == NULL);
    CHECK_EQ_INT(on_grid_create(1, -3, 1, &g), ST_FAIL(ON_INVALID));
    CHECK_EQ_INT(on_grid_create(1, 1, 0, &g), ST_FAIL(ON_INVALID));
    CHECK_EQ_INT(on_grid_create(65536, 65536, 1, &g), ST_FAIL(ON_INVALID)); /* exactly 2^32 cells */
    CHECK_EQ_INT(on_grid_create(2048, 2048, 2048, &g), ST_FAIL(ON_INVALID));
    CHECK_EQ_INT(on_grid_create(2, 2, 2, NULL), ST_FAIL(ON_INVALID));

    g = make(5, 4, 3);
    int dims[3] = {0, 0, 0};
    on_grid_dims(g, dims);
    CHECK(dims[0] == 5 && dims[1] == 4 && dims[2] == 3);
    int nb = 0;
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 5; x++) nb += on_grid_blocked(g, x, y, z);
    CHECK_EQ_INT(nb, 0);
    on_grid_set(g, 4, 3, 2, 1);
    on_grid_set(g, 0, 0, 0, 1);
    on_grid_set(g, 2, 1, 1, 1);
    on_grid_set(g, 2, 1, 1, 0);
    on_grid_set(g, 5, 0, 0, 1); /* outside: ignored */
    on_grid_set(g, -1, 0, 0, 1);
    CHECK(on_grid_blocked(g, 4, 3, 2));
    CHECK(on_grid_blocked(g, 0, 0, 0));
    CHECK(!on_grid_blocked(g, 2, 1, 1));
    CHECK(!on_grid_blocked(g, 3, 3, 2));
    CHECK(!on_grid_blocked(g, 0, 1, 0));
    CHECK(on_grid_blocked(g, 5, 0, 0));
    CHECK(on_grid_blocked(g, -1, 0, 0));
    CHECK(on_grid_blocked(g, 0, 4, 0));
    CHECK(on_grid_blocked(g, 0, 0, 3));
    CHECK(on_grid_blocked(g, 0, 0, -1));
    nb = 0;
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 5; x++) nb += on_grid_blocked(g, x, y, z);
    CHECK_EQ_INT(nb, 2);
    CHECK(on_grid_bytes(g) > 0);
    on_grid_destroy(g);
    on_grid_destroy(NULL);
}

static void test_from_voxmap(void)
{
    uint16_t xyz[] = {1, 2, 3, 0, 0, 0, 6, 4, 2};
    on_voxmap m = {7, 5, 4, 3, xyz};
    on_grid *g = NULL;
    CHECK_EQ_INT(on_grid_from_voxmap(&m, &g), ON_SUCCESS);
    int dims[3];
    on_grid_dims(g, dims);
    CHECK(dims[0] == 7 && dims[1] == 5 && dims[2] == 4);
    int nb = 0;
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 7; x++) nb += on_grid_blocked(g, x, y, z);
    CHECK_EQ_INT(nb, 3);
    CHECK(on_grid_blocked(g, 1, 2, 3) && on_grid_blocked(g, 0, 0, 0) && on_grid_blocked(g, 6, 4, 2));
    on_grid_destroy(g);

    on_voxmap empty = {3, 3, 3, 0, NULL};
    CHECK_EQ_INT(on_grid_from_voxmap(&empty, &g), ON_SUCCESS);
    CHECK(g && !on_grid_blocked(g, 1, 1, 1));
    on_grid_destroy(g);

    uint16_t bad[] = {1, 1, 1, 3, 0, 0};
    on_voxmap out = {3, 3, 3, 2, bad};
    g = (on_grid *)1;
    CHECK_EQ_INT(on_grid_from_voxmap(&out, &g), ST_FAIL(ON_INVALID));
    CHECK(g == NULL);
    on_voxmap nodims = {0, 3, 3, 0, NULL};
    CHECK_EQ_INT(on_grid_from_voxmap(&nodims, &g), ST_FAIL(ON_INVALID));
    on_voxmap noxyz = {3, 3, 3, 2, NULL};
    CHECK_EQ_INT(on_grid_from_voxmap(&noxyz, &g), ST_FAIL(ON_INVALID));
    CHECK_EQ_INT(on_grid_from_voxmap(NULL, &g), ST_FAIL(ON_INVALID));
}

/* ---- .map reader ---------------------------------------------------------------------------------- */

static int write_tmp(char *name, const char *text)
{
    strcpy(name, "/tmp/test_grid_XXXXXX");
    int fd = mkstemp(name);
    if (fd < 0) return 0;
    size_t n = strlen(text);
    int ok = write(fd, text, n) == (ssize_t)n;
    close(fd);
    return ok;
}

static on_status read_text(const char *text, on_grid **g, char *err, size_t errlen, char *name)
{
    if (!write_tmp(name, text)) {
        CHECK(!"cannot write a temporary file");
        return ON_FAILURE;
    }
    on_status st = on_grid_read_map2d(name, g, err, errlen);
    unlink(name);
    return st;
}

/* err is "NAME:LINE: ..." */
static int err_at(const char *err, const char *name, int line)
{
    char want[128];
    snprintf(want, sizeof want, "%s:%d: ", name, line);
    return strncmp(err, want, strlen(want)) == 0;
}

static void test_map2d(void)
{
    char name[64], err[256];
    on_grid *g = NULL;
    const char *ok = "type octile\r\nheight 4\r\nwidth 6\r\nmap\r\n"
                     "..@...\r\n"
                     ".T@.G.\r\n"
                     "..@.S.\r\n"
                     "......\r\n"
                     "\r\n";
    CHECK_EQ_INT(read_text(ok, &g, err, sizeof err, name), ON_SUCCESS);
    if (g) {
        int dims[3];
        on_grid_dims(g, dims);
        CHECK(dims[0] == 6 && dims[1] == 4 && dims[2] == 1);
        CHECK(on_grid_blocked(g, 2, 0, 0) && on_grid_blocked(g, 2, 1, 0) && on_grid_blocked(g, 2, 2, 0));
        CHECK(on_grid_blocked(g, 1, 1, 0)); /* 'T' */
        CHECK(!on_grid_blocked(g, 4, 1, 0) && !on_grid_blocked(g, 4, 2, 0) && !on_grid_blocked(g, 2, 3, 0));
        CHECK(on_grid_blocked(g, 0, 0, 1));
        /* (0,0) -> (5,0) passes the wall at (2,3), entered and left by face moves; T blocks the
         * diagonal (0,1)->(1,2): (0,0) (0,1) (0,2) (1,3) (2,3) (3,3) (4,2) (5,1) (5,0) */
        expect(g, 0, 0, 0, 5, 0, 0, 5 + 3 * S2, 0);
        on_grid_destroy(g);
    }
    g = NULL;
    CHECK_EQ_INT(read_text("type octile\nwidth 3\nheight 1\nmap\n.@.", &g, err, sizeof err, name), ON_SUCCESS);
    CHECK(g && on_grid_blocked(g, 1, 0, 0) && !on_grid_blocked(g, 2, 0, 0));
    if (g) expect(g, 0, 0, 0, 2, 0, 0, -1, ST_FAIL(ON_UNREACHABLE));
    on_grid_destroy(g);

    struct { const char *text; int line; } bad[] = {
        {"type octile\nheight 2\nwidth 3\nmap\n...\n..\n", 6},
        {"type octile\nheight 2\nwidth 3\nmap\n...\n....\n", 6},
        {"type octile\nheight 3\nwidth 3\nmap\n...\n...\n", 7},
        {"type octile\nheight 1\nwidth 3\nmap\n...\nxyz\n", 6},
        {"type octile\nheight 0\nwidth 3\nmap\n", 2},
        {"type octile\nheight 2\nwidth -3\nmap\n", 3},
        {"type octile\nheight 2x\nwidth 3\nmap\n", 2},
        {"type tile\nheight 1\nwidth 1\nmap\n.\n", 1},
        {"type octile\nheight 1\nmap\n.\n", 3},
        {"type octile\nheight 1\nwidth 1\n", 4},
        {"type octile\nheight 1\nwidth 1\ncolour red\nmap\n.\n", 4},
        {"", 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = (on_grid *)1;
        err[0] = '\0';
        on_status st = read_text(bad[i].text, &g, err, sizeof err, name);
        CHECK_EQ_INT(st, ST_FAIL(ON_CORRUPT));
        CHECK(g == NULL);
        if (!err_at(err, name, bad[i].line)) fprintf(stderr, "  bad map %zu: \"%s\" (expected line %d)\n", i, err, bad[i].line);
        CHECK(err_at(err, name, bad[i].line));
    }
    CHECK_EQ_INT(on_grid_read_map2d("/nonexistent/dir/x.map", &g, err, sizeof err), ST_FAIL(ON_IO));
    CHECK(strncmp(err, "/nonexistent/dir/x.map: ", 24) == 0);
    CHECK_EQ_INT(on_grid_read_map2d("/nonexistent/dir/x.map", &g, NULL, 0), ST_FAIL(ON_IO));
    CHECK_EQ_INT(on_grid_read_map2d(NULL, &g, err, sizeof err), ST_FAIL(ON_INVALID));
}

/* ---- A* on hand-built grids ------------------------------------------------------------------------ */

static void test_open(void)
{
    on_grid *g = make(9, 9, 9);
    expect(g, 0, 0, 0, 8, 8, 8, 8 * S3, 0);
    expect(g, 8, 8, 8, 0, 0, 0, 8 * S3, 0);
    expect(g, 0, 8, 0, 8, 0, 8, 8 * S3, 0);
    expect(g, 1, 2, 3, 7, 2, 5, 2 * S2 + 4, 0);
    expect(g, 0, 0, 0, 8, 3, 5, 3 * S3 + 2 * S2 + 3, 0);
    expect(g, 4, 4, 4, 4, 4, 5, 1, 0);
    on_grid_destroy(g);

    g = make(12, 7, 1);
    expect(g, 0, 0, 0, 6, 6, 0, 6 * S2, 0);
    expect(g, 0, 0, 0, 11, 2, 0, 2 * S2 + 9, 0);
    expect(g, 11, 6, 0, 0, 0, 0, 6 * S2 + 5, 0);
    on_grid_destroy(g);

    g = make(40, 1, 1); /* a 1-wide corridor */
    expect(g, 0, 0, 0, 39, 0, 0, 39, 0);
    on_grid_destroy(g);
    g = make(1, 1, 30);
    expect(g, 0, 0, 29, 0, 0, 0, 29, 0);
    on_grid_destroy(g);
}

static void test_wall_hole(void)
{
    /* 3D: the plane x = 3 blocked but for (3,3,3); the hole is entered and left by face moves */
    on_grid *g = make(7, 7, 7);
    for (int z = 0; z < 7; z++)
        for (int y = 0; y < 7; y++)
            if (y != 3 || z != 3) on_grid_set(g, 3, y, z, 1);
    expect(g, 0, 0, 0, 6, 0, 0, 2 * (2 * S3 + S2) + 2, 0);
    expect(g, 6, 6, 6, 0, 0, 0, 2 * (2 * S3 + S2) + 2, 0);
    expect(g, 0, 3, 3, 6, 3, 3, 6, 0);
    expect(g, 2, 3, 3, 2, 3, 4, 1, 0);
    on_grid_set(g, 3, 3, 3, 1);
    expect(g, 0, 0, 0, 6, 0, 0, -1, ST_FAIL(ON_UNREACHABLE));
    expect(g, 0, 0, 0, 2, 6, 6, 2 * S3 + 4 * S2, 0); /* the near side still works */
    on_grid_destroy(g);

    /* 2D: the column x = 3 blocked but for (3,6) */
    g = make(7, 7, 1);
    for (int y = 0; y < 6; y++) on_grid_set(g, 3, y, 0, 1);
    expect(g, 0, 0, 0, 6, 0, 0, 4 * S2 + 10, 0);
    on_grid_set(g, 3, 6, 0, 1);
    expect(g, 0, 0, 0, 6, 0, 0, -1, ST_FAIL(ON_UNREACHABLE));
    on_grid_destroy(g);
}

static void test_squeeze(void)
{
    /* 2D: (1,1) and (2,2) blocked; (1,2) -> (2,1) may not slip between them: 6 instead of sqrt2 */
    on_grid *g = make(4, 4, 1);
    on_grid_set(g, 1, 1, 0, 1);
    on_grid_set(g, 2, 2, 0, 1);
    expect(g, 1, 2, 0, 2, 1, 0, 6, 0);
    expect(g, 2, 1, 0, 1, 2, 0, 6, 0);
    /* (0,0) -> (3,3) goes round: (0,0) (1,0) (2,0) (3,1) (3,2) (3,3) */
    expect(g, 0, 0, 0, 3, 3, 0, 4 + S2, 0);
    on_grid_destroy(g);

    /* 2D corner: (0,0) walled in by (1,0) and (0,1): nothing reachable */
    g = make(2, 2, 1);
    on_grid_set(g, 1, 0, 0, 1);
    on_grid_set(g, 0, 1, 0, 1);
    expect(g, 0, 0, 0, 1, 1, 0, -1, ST_FAIL(ON_UNREACHABLE));
    on_grid_destroy(g);

    /* 3D: (1,0,0) and (0,1,0) blocked in a 2x2x2 grid: (0,0,0) -> (1,1,0) goes up, across, down */
    g = make(2, 2, 2);
    on_grid_set(g, 1, 0, 0, 1);
    on_grid_set(g, 0, 1, 0, 1);
    expect(g, 0, 0, 0, 1, 1, 0, 2 + S2, 0);
    /* the corner move (0,0,0) -> (1,1,1) is not allowed either (its box holds the blocked pair) */
    expect(g, 0, 0, 0, 1, 1, 1, 1 + S2, 0);
    on_grid_destroy(g);

    /* 3D corner move blocked by a single face-diagonal cell: (1,1,0) blocked only */
    g = make(2, 2, 2);
    on_grid_set(g, 1, 1, 0, 1);
    expect(g, 0, 0, 0, 1, 1, 1, 1 + S2, 0);
    on_grid_destroy(g);
    /* ... and by an axis neighbour alone */
    g = make(2, 2, 2);
    on_grid_set(g, 0, 0, 1, 1);
    expect(g, 0, 0, 0, 1, 1, 1, 1 + S2, 0);
    on_grid_destroy(g);
}

static void test_failures(void)
{
    on_grid *g = make(5, 5, 5);
    on_grid_set(g, 2, 2, 2, 1);
    int a[3] = {0, 0, 0}, b[3] = {4, 4, 0}, blk[3] = {2, 2, 2};
    int outs[][3] = {{-1, 0, 0}, {5, 0, 0}, {0, -1, 0}, {0, 5, 0}, {0, 0, -1}, {0, 0, 5}};
    double len = 7;
    size_t ex = 7, np = 7;
    int32_t path[3 * 16];
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_INT(on_grid_find(g, outs[i], b, &len, &ex, path, 16, &np), ST_FAIL(ON_OUTSIDE));
        CHECK_EQ_INT(on_grid_find(g, a, outs[i], &len, &ex, path, 16, &np), ST_FAIL(ON_OUTSIDE));
    }
    CHECK(np == 0 && ex == 0 && len == 0);
    CHECK_EQ_INT(on_grid_find(g, blk, b, &len, &ex, path, 16, &np), ST_FAIL(ON_BLOCKED));
    CHECK_EQ_INT(on_grid_find(g, a, blk, &len, &ex, path, 16, &np), ST_FAIL(ON_BLOCKED));
    CHECK_EQ_INT(on_grid_find(g, blk, outs[0], NULL, NULL, NULL, 0, NULL), ST_FAIL(ON_OUTSIDE));
    CHECK_EQ_INT(on_grid_find(NULL, a, b, &len, &ex, path, 16, &np), ST_FAIL(ON_INVALID));
    CHECK_EQ_INT(on_grid_find(g, NULL, b, &len, &ex, path, 16, &np), ST_FAIL(ON_INVALID));

    /* start == goal */
    int c[3] = {3, 1, 4};
    memset(path, 0xff, sizeof path);
    CHECK_EQ_INT(on_grid_find(g, c, c, &len, &ex, path, 16, &np), ON_SUCCESS);
    CHECK(len == 0 && ex == 0 && np == 1);
    CHECK(path[0] == 3 && path[1] == 1 && path[2] == 4 && path[3] == -1);
    CHECK_EQ_INT(on_grid_find(g, c, c, &len, NULL, NULL, 0, &np), ON_SUCCESS);
    CHECK(np == 1);
    CHECK_EQ_INT(on_grid_find(g, blk, blk, &len, &ex, path, 16, &np), ST_FAIL(ON_BLOCKED));

    /* outputs are optional */
    CHECK_EQ_INT(on_grid_find(g, a, b, NULL, NULL, NULL, 0, NULL), ON_SUCCESS);
    CHECK_EQ_INT(on_grid_find(g, a, b, &len, NULL, NULL, 99, &np), ON_SUCCESS); /* NULL path: cap ignored */
    CHECK(np == 5 && near(len, 4 * S2));
    on_grid_destroy(g);

    /* a path longer than cap: full count reported, the first cap cells written, nothing past them */
    g = make(10, 1, 1);
    int s[3] = {0, 0, 0}, t[3] = {9, 0, 0};
    memset(path, 0x7f, sizeof path);
    CHECK_EQ_INT(on_grid_find(g, s, t, &len, &ex, path, 3, &np), ON_SUCCESS);
    CHECK(np == 10 && near(len, 9));
    CHECK(path[0] == 0 && path[3] == 1 && path[6] == 2 && path[7] == 0 && path[8] == 0);
    CHECK(path[9] == 0x7f7f7f7f);
    CHECK_EQ_INT(on_grid_find(g, s, t, &len, &ex, path, 0, &np), ON_SUCCESS);
    CHECK(np == 10);
    /* expansions: the corridor expands every cell before the goal */
    CHECK_EQ_INT(ex, 9);

    /* the last path read again without searching, also after an edit */
    int32_t again[3 * 16];
    on_grid_set(g, 5, 0, 0, 1);
    CHECK_EQ_INT(on_grid_last_path(g, NULL, 0), 10);
    CHECK_EQ_INT(on_grid_last_path(g, again, 16), 10);
    int same = 1;
    for (int i = 0; i < 10; i++) same &= again[3 * i] == i && again[3 * i + 1] == 0 && again[3 * i + 2] == 0;
    CHECK(same);
    CHECK_EQ_INT(on_grid_find(g, s, t, &len, &ex, path, 16, &np), ST_FAIL(ON_UNREACHABLE));
    CHECK_EQ_INT(on_grid_last_path(g, again, 16), 0);
    int u[3] = {7, 0, 0};
    CHECK_EQ_INT(on_grid_find(g, u, u, &len, &ex, NULL, 0, &np), ON_SUCCESS);
    CHECK_EQ_INT(on_grid_last_path(g, again, 16), 1);
    CHECK(again[0] == 7 && again[1] == 0 && again[2] == 0);
    CHECK_EQ_INT(on_grid_find(g, t, u, &len, &ex, NULL, 0, &np), ON_SUCCESS);
    memset(again, 0x7f, sizeof again);
    CHECK_EQ_INT(on_grid_last_path(g, again, 1), 3);
    CHECK(again[0] == 9 && again[3] == 0x7f7f7f7f);
    CHECK_EQ_INT(on_grid_last_path(NULL, again, 16), 0);
    on_grid_destroy(g);
    g = make(3, 3, 3);
    CHECK_EQ_INT(on_grid_last_path(g, again, 16), 0); /* no search yet */
    on_grid_destroy(g);
}

/* ---- independent reference: Dijkstra over the same movement model, O(n^2) ---------------------------- */

static double ref_dijkstra(const on_grid *g, const int s[3], const int t[3])
{
    int dims[3];
    on_grid_dims(g, dims);
    int w = dims[0], h = dims[1], d = dims[2], n = w * h * d;
    double *dist = malloc((size_t)n * sizeof *dist);
    char *done = calloc((size_t)n, 1);
    if (!dist || !done) {
        free(dist);
        free(done);
        return -2;
    }
    for (int i = 0; i < n; i++) dist[i] = INFINITY;
    dist[s[0] + w * (s[1] + h * s[2])] = 0;
    int ti = t[0] + w * (t[1] + h * t[2]);
    for (;;) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && dist[i] < INFINITY && (best < 0 || dist[i] < dist[best])) best = i;
        if (best < 0 || best == ti) break;
        done[best] = 1;
        int x = best % w, y = best / w % h, z = best / (w * h);
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    if (!dx && !dy && !dz) continue;
                    int ok = 1;
                    for (int cz = 0; cz <= (dz != 0) && ok; cz++)
                        for (int cy = 0; cy <= (dy != 0) && ok; cy++)
                            for (int cx = 0; cx <= (dx != 0) && ok; cx++)
                                if (on_grid_blocked(g, x + cx * dx, y + cy * dy, z + cz * dz)) ok = 0;
                    if (!ok) continue;
                    int m = (dx != 0) + (dy != 0) + (dz != 0);
                    double nd = dist[best] + (m == 1 ? 1.0 : m == 2 ? S2 : S3);
                    int j = (x + dx) + w * ((y + dy) + h * (z + dz));
                    if (nd < dist[j]) dist[j] = nd;
                }
    }
    double r = dist[ti] < INFINITY ? dist[ti] : -1;
    free(dist);
    free(done);
    return r;
}

static uint32_t lcg(uint32_t *st)
{
    *st = *st * 1664525u + 1013904223u;
    return *st >> 8;
}

static void test_random(void)
{
    uint32_t rs = 12345;
    int bad = 0, reached = 0, runs = 0;
    for (int round = 0; round < 60; round++) {
        int d = round % 3 == 0 ? 1 : 2 + (int)(lcg(&rs) % 5);
        int w = 3 + (int)(lcg(&rs) % 9), h = 3 + (int)(lcg(&rs) % 9);
        int dens = 10 + (int)(lcg(&rs) % 35);
        on_grid *g = make(w, h, d);
        if (!g) return;
        for (int z = 0; z < d; z++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++)
                    if ((int)(lcg(&rs) % 100) < dens) on_grid_set(g, x, y, z, 1);
        for (int q = 0; q < 8; q++) {
            int s[3] = {(int)(lcg(&rs) % (uint32_t)w), (int)(lcg(&rs) % (uint32_t)h), (int)(lcg(&rs) % (uint32_t)d)};
            int t[3] = {(int)(lcg(&rs) % (uint32_t)w), (int)(lcg(&rs) % (uint32_t)h), (int)(lcg(&rs) % (uint32_t)d)};
            on_grid_set(g, s[0], s[1], s[2], 0);
            on_grid_set(g, t[0], t[1], t[2], 0);
            double want = ref_dijkstra(g, s, t), len = -1;
            int32_t path[3 * 1024];
            size_t np = 0;
            on_status st = on_grid_find(g, s, t, &len, NULL, path, 1024, &np);
            runs++;
            if (want >= 0) {
                reached++;
                if (st != ON_SUCCESS || !near(len, want) || np > 1024 || !path_ok(g, path, np, s, t, len)) bad++;
            } else if (st != ST_FAIL(ON_UNREACHABLE)) {
                bad++;
            }
        }
        on_grid_destroy(g);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(reached > runs / 3 && reached < runs); /* the sample holds both outcomes */
}

/* ---- repeated searches: generation stamps ------------------------------------------------------------ */

static void test_repeat(void)
{
    on_grid *g = make(20, 15, 6);
    uint32_t rs = 777;
    for (int i = 0; i < 400; i++) on_grid_set(g, (int)(lcg(&rs) % 20), (int)(lcg(&rs) % 15), (int)(lcg(&rs) % 6), 1);
    enum { Q = 40 };
    int qs[Q][6];
    double len1[Q];
    size_t ex1[Q];
    on_status st1[Q];
    for (int i = 0; i < Q; i++) {
        qs[i][0] = (int)(lcg(&rs) % 20); qs[i][1] = (int)(lcg(&rs) % 15); qs[i][2] = (int)(lcg(&rs) % 6);
        qs[i][3] = (int)(lcg(&rs) % 20); qs[i][4] = (int)(lcg(&rs) % 15); qs[i][5] = (int)(lcg(&rs) % 6);
        on_grid_set(g, qs[i][0], qs[i][1], qs[i][2], 0);
        on_grid_set(g, qs[i][3], qs[i][4], qs[i][5], 0);
    }
    for (int i = 0; i < Q; i++) {
        len1[i] = -1;
        ex1[i] = 0;
        st1[i] = on_grid_find(g, qs[i], qs[i] + 3, &len1[i], &ex1[i], NULL, 0, NULL);
    }
    int nsucc = 0;
    for (int i = 0; i < Q; i++) nsucc += st1[i] == ON_SUCCESS;
    CHECK(nsucc > Q / 2);
    /* again, in reverse order, then across the 24-bit stamp wrap-around */
    int diff = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) on_grid_debug_wrap_soon(g, 5);
        for (int j = 0; j < Q; j++) {
            int i = pass == 0 ? Q - 1 - j : j;
            double len = -1;
            size_t ex = 0;
            on_status st = on_grid_find(g, qs[i], qs[i] + 3, &len, &ex, NULL, 0, NULL);
            if (st != st1[i] || len != len1[i] || ex != ex1[i]) diff++;
        }
    }
    CHECK_EQ_INT(diff, 0);
    /* editing the grid between searches */
    on_grid *o = make(6, 6, 6);
    int a[3] = {0, 0, 0}, b[3] = {5, 0, 0};
    double len;
    CHECK_EQ_INT(on_grid_find(o, a, b, &len, NULL, NULL, 0, NULL), ON_SUCCESS);
    CHECK(near(len, 5));
    on_grid_set(o, 2, 0, 0, 1);
    CHECK_EQ_INT(on_grid_find(o, a, b, &len, NULL, NULL, 0, NULL), ON_SUCCESS);
    CHECK(near(len, 3 + 2 * S2));
    on_grid_set(o, 2, 0, 0, 0);
    CHECK_EQ_INT(on_grid_find(o, a, b, &len, NULL, NULL, 0, NULL), ON_SUCCESS);
    CHECK(near(len, 5));
    on_grid_destroy(o);
    on_grid_destroy(g);
}

/* ---- line of sight -------------------------------------------------------------------------------------- */

static void test_visible(void)
{
    on_grid *g = make(8, 6, 5);
    double a[3] = {0.5, 0.5, 0.5}, b[3] = {7.5, 5.5, 4.5};
    CHECK_EQ_INT(on_grid_visible(g, a, b), ON_SUCCESS);
    on_grid_set(g, 4, 3, 2, 1);
    double c[3] = {0.5, 3.5, 2.5}, e[3] = {7.5, 3.5, 2.5};
    CHECK_EQ_INT(on_grid_visible(g, c, e), ST_FAIL(ON_BLOCKED));
    CHECK_EQ_INT(on_grid_visible(g, e, c), ST_FAIL(ON_BLOCKED));
    double f[3] = {0.5, 2.5, 2.5}, h[3] = {7.5, 2.5, 2.5};
    CHECK_EQ_INT(on_grid_visible(g, f, h), ON_SUCCESS);
    double out1[3] = {-0.5, 0.5, 0.5}, out2[3] = {3.5, 0.5, 5.5};
    CHECK_EQ_INT(on_grid_visible(g, out1, a), ST_FAIL(ON_BLOCKED));
    CHECK_EQ_INT(on_grid_visible(g, a, out2), ST_FAIL(ON_BLOCKED));
    CHECK_EQ_INT(on_grid_visible(g, a, a), ON_SUCCESS);
    double nan3[3] = {NAN, 0.5, 0.5};
    CHECK_EQ_INT(on_grid_visible(g, nan3, a), ST_FAIL(ON_INVALID));
    CHECK_EQ_INT(on_grid_visible(NULL, a, a), ST_FAIL(ON_INVALID));
    on_grid_destroy(g);

    /* 2D: one layer, z in [0,1) */
    g = make(6, 6, 1);
    double p[3] = {0.5, 0.5, 0.5}, q[3] = {5.5, 3.5, 0.5}, up[3] = {5.5, 3.5, 1.5};
    CHECK_EQ_INT(on_grid_visible(g, p, q), ON_SUCCESS);
    CHECK_EQ_INT(on_grid_visible(g, p, up), ST_FAIL(ON_BLOCKED));
    /* zero-width gap: (1,0) and (0,1) blocked, the segment (0.5,0.5)-(1.5,1.5) crosses their shared corner */
    on_grid_set(g, 1, 0, 0, 1);
    on_grid_set(g, 0, 1, 0, 1);
    double r0[3] = {0.5, 0.5, 0.5}, r1[3] = {1.5, 1.5, 0.5};
    CHECK_EQ_INT(on_grid_visible(g, r0, r1), ST_FAIL(ON_BLOCKED));
    /* sliding along the blocked cell's face x = 2 is allowed */
    double s0[3] = {2.0, 0.2, 0.5}, s1[3] = {2.0, 0.8, 0.5};
    CHECK_EQ_INT(on_grid_visible(g, s0, s1), ON_SUCCESS);
    on_grid_destroy(g);
}

/* ---- benchmark scenarios (opt-in: skipped when the data is absent) ---------------------------------------- */

#define VOXDIR "../shared/data/voxel/"

static void run_scen(const char *map, int limit)
{
    char path[256], err[256];
    snprintf(path, sizeof path, VOXDIR "%s", map);
    on_voxmap vm;
    on_status st = on_voxmap_read(path, &vm, err, sizeof err);
    CHECK_EQ_INT(st, ON_SUCCESS);
    if (on_failed(st)) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    on_grid *g = NULL;
    st = on_grid_from_voxmap(&vm, &g);
    on_voxmap_free(&vm);
    CHECK_EQ_INT(st, ON_SUCCESS);
    if (on_failed(st)) return;
    snprintf(path, sizeof path, VOXDIR "%s.3dscen", map);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) {
        on_grid_destroy(g);
        return;
    }
    char line[512];
    int ln = 0, n = 0, bad = 0, badpath = 0;
    size_t cap = 1 << 16;
    int32_t *cells = malloc(cap * 3 * sizeof *cells);
    CHECK(cells != NULL);
    while (cells && fgets(line, sizeof line, f) && (limit <= 0 || n < limit)) {
        ln++;
        if (ln == 1) {
            CHECK(strncmp(line, "version 1", 9) == 0);
            continue;
        }
        if (ln == 2) continue; /* the map's name */
        int s[3], t[3];
        double opt, ratio;
        if (sscanf(line, "%d %d %d %d %d %d %lf %lf", &s[0], &s[1], &s[2], &t[0], &t[1], &t[2], &opt, &ratio) != 8) {
            if (line[0] != '\n' && line[0] != '\r') bad++;
            continue;
        }
        double len = -1;
        size_t np = 0;
        st = on_grid_find(g, s, t, &len, NULL, cells, cap, &np);
        n++;
        if (st != ON_SUCCESS || fabs(len - opt) > 1e-6) {
            if (bad < 5)
                fprintf(stderr, "  %s line %d: status %#x length %.8f, optimal %.8f\n", map, ln, (unsigned)st, len, opt);
            bad++;
        } else if (np > cap || !path_ok(g, cells, np, s, t, len)) {
            badpath++;
        }
    }
    free(cells);
    fclose(f);
    on_grid_destroy(g);
    CHECK(n > 0 && (limit <= 0 || n == limit));
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(badpath, 0);
}

static void test_data(void)
{
    if (access(VOXDIR "Simple.3dmap", R_OK) != 0) return;
    run_scen("Simple.3dmap", 0);
    run_scen("Complex.3dmap", 300);
}

TEST_MAIN("grid", {
    test_create();
    test_from_voxmap();
    test_map2d();
    test_open();
    test_wall_hole();
    test_squeeze();
    test_failures();
    test_random();
    test_repeat();
    test_visible();
    test_data();
})
