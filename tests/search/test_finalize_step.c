/*
 * test_finalize_step.c -- a finished search's result built in slices (on_query_finalize_step,
 * search_path.c) is the whole finalize's, byte for byte: random scenes of boxes, each query found
 * once whole and again with its finalize in slices of 1, 2 and 7 checks, and with a stop that ends
 * every slice after its first check; with and without area costs (the refined path against the node
 * chain), any-angle too. Each slice makes exactly its limit of checks but the last, and the checks
 * add up to the whole finalize's line-of-sight and turn checks (each asked of the tree once). A box
 * added between slices (on the path's middle waypoint) makes the finalize start over: the result is
 * the whole finalize's after the box (without the start-over: 47 of 103 differ).
 */
#include "minitest.h"
#include "octonav.h"
#include "query.h" /* (internal: the checks made before the finalize, q->info) */

#include <stdio.h>
#include <string.h>

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffff;
}

static int stop_now(void *ud)
{
    (*(int *)ud)++;
    return 1;
}

typedef struct tally {
    int compared, sliced, differ, bad_count, bad_total;
} tally;

/* The query a -> b once whole, then with its finalize in slices (limit, or the stop when 0). */
static void compare(on_query *q, const double a[3], const double b[3], const on_query_opts *o, size_t limit,
                    tally *t)
{
    static double whole[3 * 1024], part[3 * 1024];
    size_t nw = 0, np = 0;
    on_query_info iw, ip;
    on_status sw = on_query_find(q, a, b, o, whole, 1024, &nw, &iw);
    if (!on_ok(sw) || iw.expansions == 0) return;
    on_status s = on_query_init(q, a, b, o);
    if (s == ON_IN_PROGRESS) s = on_query_update(q, (size_t)-1, NULL);
    if (!on_ok(s)) {
        t->differ++;
        return;
    }
    size_t before = q->info.los + q->info.turns, total = 0, checks, slices = 0;
    int stops = 0;
    on_status f;
    while ((f = on_query_finalize_step(q, limit, limit ? NULL : stop_now, &stops, &checks)) == ON_IN_PROGRESS) {
        slices++;
        total += checks;
        if (checks != (limit ? limit : 1)) t->bad_count++;
    }
    total += checks;
    if (f != ON_SUCCESS || !on_ok(on_query_finalize(q, part, 1024, &np, &ip))) {
        t->differ++;
        return;
    }
    /* a second step after the result is built: nothing to do */
    if (on_query_finalize_step(q, limit, NULL, NULL, &checks) != ON_SUCCESS || checks != 0) t->bad_count++;
    t->compared++;
    t->sliced += slices > 0;
    if (np != nw || memcmp(part, whole, 3 * nw * sizeof *whole) != 0 || ip.length != iw.length || ip.cost != iw.cost)
        t->differ++;
    if (total == 0 || before + total != iw.los + iw.turns || ip.los != iw.los || ip.turns != iw.turns) t->bad_total++;
    if (!limit && stops != (int)total) t->bad_count++;
}

static void sliced_is_whole(void)
{
    unsigned seed = 7;
    tally t = {0, 0, 0, 0, 0};
    for (int scene = 0; scene < 24; scene++) {
        on_tree_params p = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
        on_tree *tr = NULL;
        on_query *q = NULL;
        CHECK(on_ok(on_tree_create(&p, &tr)));
        int nb = 30 + (int)(lcg(&seed) * 60 / 65536);
        for (int i = 0; i < nb; i++) {
            double lo[3], hi[3];
            for (int k = 0; k < 3; k++) {
                lo[k] = lcg(&seed) * 30.0 / 65536;
                hi[k] = lo[k] + 1 + lcg(&seed) * 4.0 / 65536;
            }
            on_tree_add_box(tr, lo, hi);
        }
        CHECK(on_ok(on_query_create(tr, 1 << 16, &q)));
        on_query_opts o;
        on_query_opts_default(&o);
        on_area ar = {{8, 8, 8}, {20, 20, 20}, 3, 0};
        if (scene % 3 == 1) {
            o.areas = &ar;
            o.nareas = 1;
        }
        o.any_angle = scene % 3 == 2;
        for (int k = 0; k < 12; k++) {
            double a[3], b[3];
            for (int d = 0; d < 3; d++) {
                a[d] = lcg(&seed) * 32.0 / 65536;
                b[d] = lcg(&seed) * 32.0 / 65536;
            }
            static const size_t limits[4] = {1, 2, 7, 0};
            for (int l = 0; l < 4; l++) compare(q, a, b, &o, limits[l], &t);
        }
        on_query_destroy(q);
        on_tree_destroy(tr);
    }
    CHECK(t.compared > 400);
    CHECK(t.sliced > 300);
    CHECK_EQ_INT(t.differ, 0);
    CHECK_EQ_INT(t.bad_count, 0);
    CHECK_EQ_INT(t.bad_total, 0);
}

/* A tile the search read changes between two slices: the answers logged before are dropped and the
 * finalize starts over, so the result is the one a whole finalize after the change gives (two equal
 * trees: one finalized in slices with a box added after the first, the other whole after the box). */
static void edit_between_slices(void)
{
    unsigned seed = 11;
    int compared = 0, differ = 0;
    static double p1[3 * 1024], p2[3 * 1024];
    for (int scene = 0; scene < 300; scene++) {
        on_tree_params p = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
        on_tree *t[2] = {NULL, NULL};
        on_query *q[2] = {NULL, NULL};
        double boxes[40][6], edit[6];
        for (int i = 0; i < 40; i++)
            for (int k = 0; k < 3; k++) {
                boxes[i][k] = lcg(&seed) * 30.0 / 65536;
                boxes[i][3 + k] = boxes[i][k] + 1 + lcg(&seed) * 4.0 / 65536;
            }
        for (int k = 0; k < 3; k++) {
            edit[k] = 8 + lcg(&seed) * 12.0 / 65536;
            edit[3 + k] = edit[k] + 2 + lcg(&seed) * 4.0 / 65536;
        }
        for (int j = 0; j < 2; j++) {
            CHECK(on_ok(on_tree_create(&p, &t[j])) && on_ok(on_query_create(t[j], 1 << 16, &q[j])));
            for (int i = 0; i < 40; i++) on_tree_add_box(t[j], boxes[i], boxes[i] + 3);
        }
        on_query_opts o;
        on_query_opts_default(&o);
        double a[3], b[3];
        for (int d = 0; d < 3; d++) {
            a[d] = lcg(&seed) * 32.0 / 65536;
            b[d] = lcg(&seed) * 32.0 / 65536;
        }
        /* the box: a cube of 1.5 leaves around a middle waypoint of the path before it */
        size_t nw = 0;
        if (on_query_find(q[0], a, b, &o, p1, 1024, &nw, NULL) != ON_SUCCESS || nw < 3) nw = 0;
        for (int k = 0; nw && k < 3; k++) {
            edit[k] = p1[3 * (nw / 2) + k] - 0.75;
            edit[3 + k] = edit[k] + 1.5;
        }
        int ok = nw > 0;
        for (int j = 0; j < 2 && ok; j++) {
            on_status s = on_query_init(q[j], a, b, &o);
            if (s == ON_IN_PROGRESS) s = on_query_update(q[j], (size_t)-1, NULL);
            ok = s == ON_SUCCESS && q[j]->info.expansions > 0;
        }
        size_t n1 = 0, n2 = 0, checks;
        on_status f0 = ON_SUCCESS;
        for (int k = 0; ok && k < 6 && (f0 = on_query_finalize_step(q[0], 1, NULL, NULL, &checks)) == ON_IN_PROGRESS; k++) {}
        if (ok && f0 == ON_IN_PROGRESS) {
            on_tree_add_box(t[0], edit, edit + 3);
            on_tree_add_box(t[1], edit, edit + 3);
            on_status f;
            while ((f = on_query_finalize_step(q[0], 3, NULL, NULL, &checks)) == ON_IN_PROGRESS) {}
            CHECK_EQ_INT(f, ON_SUCCESS);
            CHECK(on_ok(on_query_finalize(q[0], p1, 1024, &n1, NULL)) && on_ok(on_query_finalize(q[1], p2, 1024, &n2, NULL)));
            compared++;
            differ += n1 != n2 || memcmp(p1, p2, 3 * n1 * sizeof *p1) != 0;
        }
        for (int j = 0; j < 2; j++) {
            on_query_destroy(q[j]);
            on_tree_destroy(t[j]);
        }
    }
    printf("finalize_step: a box added between slices in %d results: %d differ from the whole finalize after it\n", compared, differ);
    CHECK(compared > 60);
    CHECK_EQ_INT(differ, 0);
}

/* Misuse: a search still running has nothing to finalize; no search: nothing to build. */
static void misuse(void)
{
    on_tree_params p = {{1, 1, 1}, 4, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    on_query *q = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)) && on_ok(on_query_create(t, 4096, &q)));
    double lo[3] = {7, 0, 0}, hi[3] = {9, 14, 16};
    on_tree_add_box(t, lo, hi);
    size_t checks = 99;
    CHECK_EQ_INT(on_query_finalize_step(q, 1, NULL, NULL, &checks), ON_SUCCESS); /* nothing started */
    CHECK_EQ_INT(checks, 0);
    on_query_opts o;
    on_query_opts_default(&o);
    double a[3] = {2, 8, 8}, b[3] = {14, 8, 8};
    CHECK_EQ_INT(on_query_init(q, a, b, &o), ON_IN_PROGRESS);
    CHECK_EQ_INT(on_query_update(q, 1, NULL), ON_IN_PROGRESS);
    CHECK_EQ_INT(on_query_finalize_step(q, 1, NULL, NULL, &checks), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(checks, 0);
    on_query_destroy(q);
    on_tree_destroy(t);
}

TEST_MAIN("finalize_step", {
    sliced_is_whole();
    edit_between_slices();
    misuse();
})
