/*
 * test_landmarks.c -- the search's landmarks (landmarks.h, on_tree_landmarks_prepare): in an L-shaped
 * tunnel of unit cells across two tiles, the landmarks are its two ends (farthest point) and every
 * cell's distance to each equals a reference Dijkstra over the tree's neighbour walk (centre to centre)
 * to within a step; in a scene of random boxes over 2x1x2 tiles every distance lies between the
 * straight line and 1.05 times that reference (Lazy Theta*'s parents: no bound below it), shorter
 * than it in sum; an edit anywhere frees them (stats, t->landmarks, a sliced search
 * holding them goes on without); ends in two components fail ON_UNREACHABLE at init without a search
 * (not with partial results, not when a tile was unloaded at the build), as the search finds without
 * them; searches with landmarks find the tunnel's exact length and, on the random scene, valid paths
 * as often as without; argument checks.
 */
#include "graph_test.h"
#include "landmarks.h"
#include "minitest.h"
#include "octonav.h"
#include "celladj.h"
#include "query.h" /* (internal: q->lm, q->no_landmarks) */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CAP 4096

/* Two tiles of 8^3 along x; free only the tunnel x in [1, 15) at y = z = 1 and x = 14, y in [1, 7),
 * z = 1 (19 unit cells; the corner cell (14, 1, 1)). */
static on_tree *tunnel(void)
{
    on_tree *t = gt_tree(2, 1, 1, 3);
    if (!t) return NULL;
    gt_box(t, 0, 0, 0, 16, 8, 1);
    gt_box(t, 0, 0, 2, 16, 8, 8);
    gt_box(t, 0, 0, 1, 16, 1, 2);
    gt_box(t, 0, 7, 1, 16, 8, 2);
    gt_box(t, 0, 0, 1, 1, 8, 2);
    gt_box(t, 15, 0, 1, 16, 8, 2);
    gt_box(t, 1, 2, 1, 14, 7, 2);
    return t;
}

typedef struct cells {
    on_cell c[CAP];
    size_t n;
} cells;

static int collect(void *ud, on_cell c, int blocked)
{
    cells *k = ud;
    if (!blocked && k->n < CAP) k->c[k->n++] = c;
    return 0;
}

static void centre(const on_tree *t, on_cell c, double p[3])
{
    int64_t mn[3], s;
    on_tree_cell_nav(t, c, mn, &s);
    for (int k = 0; k < 3; k++) p[k] = (double)mn[k] + 0.5 * (double)s;
}

static size_t index_of(const cells *k, on_cell c)
{
    for (size_t i = 0; i < k->n; i++)
        if (k->c[i].tile == c.tile && k->c[i].code == c.code) return i;
    return (size_t)-1;
}

/* The reference: a Dijkstra (array scan) over the free cells from cell s, neighbours from the tree's
 * walk, each step centre to centre. */
static void ref_dijkstra(const on_tree *t, const cells *k, size_t s, double *d)
{
    static unsigned char done[CAP];
    static on_cell nb[1024];
    static uint8_t nf[1024];
    for (size_t i = 0; i < k->n; i++) {
        d[i] = INFINITY;
        done[i] = 0;
    }
    d[s] = 0;
    for (;;) {
        size_t u = (size_t)-1;
        for (size_t i = 0; i < k->n; i++)
            if (!done[i] && d[i] < INFINITY && (u == (size_t)-1 || d[i] < d[u])) u = i;
        if (u == (size_t)-1) break;
        done[u] = 1;
        size_t n = 0;
        if (!on_ok(on_tree_neighbors_cached(t, NULL, k->c[u], nb, nf, 1024, &n))) continue;
        double cu[3];
        centre(t, k->c[u], cu);
        for (size_t j = 0; j < n; j++) {
            size_t v = index_of(k, nb[j]);
            if (v == (size_t)-1) continue;
            double cv[3];
            centre(t, nb[j], cv);
            double e = d[u] + on_dist3(cu, cv);
            if (e < d[v]) d[v] = e;
        }
    }
}

/* Cell c's distance to landmark l (nav units; INFINITY: unreached or not covered). */
static double lm_dist(const on_tree *t, on_cell c, int l)
{
    const on_landmarks *lm = t->landmarks;
    uint32_t i = on_landmarks_find(t, lm, c.tile, c.code);
    if (i == UINT32_MAX) return NAN;
    uint16_t q = lm->d[c.tile][(size_t)i * (size_t)lm->n + (size_t)l];
    return q == ON_LM_INF ? INFINITY : q * lm->step;
}

static void tunnel_distances(void)
{
    on_tree *t = tunnel();
    CHECK(t != NULL);
    size_t bytes = 0;
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 3, &bytes), ON_SUCCESS);
    const on_landmarks *lm = t->landmarks;
    CHECK(lm != NULL);
    static cells k;
    k.n = 0;
    on_tree_visit(t, collect, &k);
    CHECK_EQ_INT(k.n, 19);
    CHECK_EQ_INT(lm->cells, 19);
    CHECK_EQ_INT(lm->components, 1);
    CHECK_EQ_INT(lm->complete, 1);
    /* 3 uint16 and a uint32 a number of the tiles' cell adjacencies (the 19 cells' and those of the
     * layer-1 nodes' blocked leaves: celladj.h), beside the fixed part */
    size_t numbers = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        const on_celladj *a = on_tile_celladj(t, i);
        numbers += a ? a->n : 0;
        if (a) CHECK_EQ_INT(lm->ncell[i], a->n);
    }
    CHECK(numbers >= 19);
    CHECK_EQ_INT(bytes, lm->bytes);
    CHECK_EQ_INT(bytes, sizeof *lm + 2 * (sizeof(uint32_t) + 2 * sizeof(void *)) + numbers * (3 * 2 + 4));
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    CHECK_EQ_INT(st.landmark_bytes, bytes);
    /* farthest point: from the first cell (1, 1, 1) the far end (14, 6, 1), then back to (1, 1, 1) */
    int64_t mn[3], s;
    on_tree_cell_nav(t, lm->where[0], mn, &s);
    CHECK(mn[0] == 14 && mn[1] == 6 && mn[2] == 1 && s == 1);
    on_tree_cell_nav(t, lm->where[1], mn, &s);
    CHECK(mn[0] == 1 && mn[1] == 1 && mn[2] == 1 && s == 1);
    static double ref[CAP];
    long bad = 0, exact = 0;
    for (int l = 0; l < 3; l++) {
        ref_dijkstra(t, &k, index_of(&k, lm->where[l]), ref);
        for (size_t i = 0; i < k.n; i++) {
            double d = lm_dist(t, k.c[i], l);
            bad += !(fabs(d - ref[i]) <= lm->step);
            on_tree_cell_nav(t, k.c[i], mn, &s);
            /* landmark 0 at the far end: along the arms, round the corner cell's centre */
            if (l == 0) exact += fabs(d - (mn[1] > 1 ? 6.0 - (double)mn[1] : 5.0 + 14.0 - (double)mn[0])) <= lm->step;
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(exact, 19);

    /* a search with them: the tunnel's taut length, A -> the inner corner (14, 2) -> B, as without */
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    double a[3] = {1.5, 1.5, 1.5}, b[3] = {14.5, 6.5, 1.5}, path[3 * CAP];
    size_t n = 0;
    on_query_info info, plain;
    double taut = sqrt(12.5 * 12.5 + 0.5 * 0.5) + sqrt(0.5 * 0.5 + 4.5 * 4.5);
    for (int w = 0; w < 2; w++) {
        q->no_landmarks = w;
        CHECK_EQ_INT(on_query_init(q, a, b, NULL), ON_IN_PROGRESS);
        CHECK_EQ_INT(q->lm != NULL, !w);
        CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, w ? &plain : &info), ON_SUCCESS);
        CHECK(fabs((w ? plain : info).length - taut) < 1e-9);
        for (size_t i = 0; i + 1 < n; i++) CHECK(on_ok(on_tree_visible(t, path + 3 * i, path + 3 * i + 3)));
    }
    CHECK(info.expansions <= plain.expansions);
    on_query_destroy(q);

    /* argument checks */
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 0, &bytes), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(bytes, 0);
    CHECK(t->landmarks != NULL); /* (a refused call leaves them) */
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 65, NULL), ON_FAILURE | ON_INVALID);
    on_tree_set_adjacency(t, 0);
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_FAILURE | ON_INVALID);
    on_tree_set_adjacency(t, 1);
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    CHECK_EQ_INT(t->landmarks->n, 4);
    on_tree_destroy(t);
}

/* Random boxes over 2x1x2 tiles of 16^3: each distance between the straight line and the reference
 * (centre to centre) Dijkstra; searches with and without landmarks. */
static void random_scene(void)
{
    on_tree *t = gt_tree(2, 1, 2, 4);
    CHECK(t != NULL);
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 40; i++) {
        /* drawn one by one (a call's arguments and an initializer list have no order in C); gcc's order */
        double lx = floor(gt_rnd(&r) * 32), ly = floor(gt_rnd(&r) * 16), lz = floor(gt_rnd(&r) * 32);
        double dz = floor(gt_rnd(&r) * 8), dy = floor(gt_rnd(&r) * 8), dx = floor(gt_rnd(&r) * 8);
        gt_box(t, lx, ly, lz, lx + 1 + dx, ly + 1 + dy, lz + 1 + dz);
    }
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    const on_landmarks *lm = t->landmarks;
    static cells k;
    k.n = 0;
    on_tree_visit(t, collect, &k);
    CHECK(k.n > 100 && k.n < CAP);
    CHECK_EQ_INT(lm->cells, k.n);
    static double ref[CAP];
    long below = 0, above = 0, reached = 0;
    double sum = 0, sum_ref = 0;
    for (int l = 0; l < 4; l++) {
        double cl[3];
        centre(t, lm->where[l], cl);
        ref_dijkstra(t, &k, index_of(&k, lm->where[l]), ref);
        for (size_t i = 0; i < k.n; i++) {
            double d = lm_dist(t, k.c[i], l), c[3];
            centre(t, k.c[i], c);
            if (ref[i] == INFINITY) {
                above += d != INFINITY;
                continue;
            }
            reached++;
            below += d < on_dist3(cl, c) - lm->step;
            above += d > 1.05 * ref[i] + lm->step;
            sum += d;
            sum_ref += ref[i];
        }
    }
    CHECK(reached > 0);
    CHECK_EQ_INT(below, 0);
    CHECK_EQ_INT(above, 0);
    CHECK(sum < 0.97 * sum_ref); /* (straight lines where the reference climbs stairs) */

    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    static double path[3 * CAP];
    int found[2] = {0, 0}, valid = 0, tried = 0;
    for (int i = 0; i < 200; i++) {
        double a[3], b[3];
        a[0] = gt_rnd(&r) * 32, a[1] = gt_rnd(&r) * 16, a[2] = gt_rnd(&r) * 32;
        b[0] = gt_rnd(&r) * 32, b[1] = gt_rnd(&r) * 16, b[2] = gt_rnd(&r) * 32;
        if (!on_ok(on_tree_visible(t, a, a)) || !on_ok(on_tree_visible(t, b, b))) continue;
        tried++;
        for (int w = 0; w < 2; w++) {
            q->no_landmarks = w;
            size_t n = 0;
            on_query_info info;
            if (!on_ok(on_query_find(q, a, b, NULL, path, CAP, &n, &info))) continue;
            found[w]++;
            int ok = n >= 2;
            for (size_t j = 0; ok && j + 1 < n; j++) ok = on_ok(on_tree_visible(t, path + 3 * j, path + 3 * j + 3));
            valid += ok;
        }
    }
    CHECK(tried > 50);
    CHECK_EQ_INT(found[0], found[1]);
    CHECK_EQ_INT(valid, found[0] + found[1]);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* Any edit frees them (a tile far from a running search too: it goes on with the straight line). */
static void edit_invalidates(void)
{
    on_tree *t = gt_tree(2, 1, 1, 4);
    CHECK(t != NULL);
    gt_box(t, 6, 0, 0, 7, 12, 16);
    size_t bytes = 0;
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 8, &bytes), ON_SUCCESS);
    CHECK(bytes > 0);
    CHECK_EQ_INT(on_tree_landmarks_bytes(t), bytes);
    uint64_t gen = t->landmarks_gen;
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    double a[3] = {2.5, 2.5, 8.5}, b[3] = {10.5, 2.5, 8.5}, path[3 * CAP];
    CHECK_EQ_INT(on_query_init(q, a, b, NULL), ON_IN_PROGRESS);
    CHECK(q->lm != NULL);
    CHECK_EQ_INT(on_query_update(q, 1, NULL), ON_IN_PROGRESS);
    CHECK(q->lm != NULL);
    gt_box(t, 28, 10, 10, 29, 11, 11); /* (tile 1: the search read tile 0 only) */
    CHECK(t->landmarks == NULL);
    CHECK(t->landmarks_gen != gen);
    CHECK_EQ_INT(on_tree_landmarks_bytes(t), 0);
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    CHECK_EQ_INT(st.landmark_bytes, 0);
    on_status s = on_query_update(q, (size_t)-1, NULL);
    CHECK(q->lm == NULL);
    CHECK_EQ_INT(s, ON_SUCCESS);
    size_t n = 0;
    on_query_info info;
    CHECK_EQ_INT(on_query_finalize(q, path, CAP, &n, &info), ON_SUCCESS);
    CHECK(n >= 2);
    /* built again: used again; clearing a tile and an obstacle free them too */
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 8, NULL), ON_SUCCESS);
    CHECK_EQ_INT(on_query_init(q, a, b, NULL), ON_IN_PROGRESS);
    CHECK(q->lm != NULL);
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, &info), ON_SUCCESS);
    CHECK_EQ_INT(on_tree_clear_tile(t, 1), ON_SUCCESS);
    CHECK(t->landmarks == NULL);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* Two components: unreachable at init, as the search finds it without them. */
static void components(void)
{
    on_tree *t = gt_tree(2, 1, 1, 4);
    CHECK(t != NULL);
    gt_box(t, 20, 0, 0, 21, 16, 16); /* a wall across tile 1 */
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    CHECK_EQ_INT(t->landmarks->components, 2);
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    double a[3] = {2.5, 8.5, 8.5}, b[3] = {28.5, 8.5, 8.5}, path[3 * CAP];
    size_t n = 0;
    on_query_info info;
    CHECK_EQ_INT(on_query_init(q, a, b, NULL), ON_FAILURE | ON_UNREACHABLE);
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, &info), ON_FAILURE | ON_UNREACHABLE);
    CHECK_EQ_INT(info.expansions, 0);
    CHECK_EQ_INT(on_query_find(q, b, a, NULL, path, CAP, &n, &info), ON_FAILURE | ON_UNREACHABLE);
    CHECK_EQ_INT(info.expansions, 0);
    q->no_landmarks = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, &info), ON_FAILURE | ON_UNREACHABLE);
    CHECK(info.expansions > 0);
    q->no_landmarks = 0;
    /* the goal's component holds no landmark (all 4 in the larger one): the search reads none */
    gt_box(t, 24, 0, 0, 25, 14, 16);
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    double c[3] = {22.5, 2.5, 8.5};
    CHECK_EQ_INT(on_query_init(q, c, b, NULL), ON_IN_PROGRESS);
    CHECK(q->lm == NULL);
    CHECK_EQ_INT(on_query_find(q, c, b, NULL, path, CAP, &n, &info), ON_SUCCESS);
    /* partial results: the search runs (its result is the nearest point) */
    on_query_opts o;
    on_query_opts_default(&o);
    o.partial = 1;
    CHECK_EQ_INT(on_query_init(q, a, b, &o), ON_IN_PROGRESS);
    on_query_find(q, a, b, &o, path, CAP, &n, &info);
    CHECK(info.expansions > 0);
    on_query_destroy(q);
    on_tree_destroy(t);

    /* a tile unloaded at the build: its cells might join the two sides of a wall across tile 0 */
    t = gt_tree(2, 1, 1, 4);
    CHECK(t != NULL);
    gt_box(t, 0, 0, 8, 16, 16, 9);
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    CHECK_EQ_INT(t->landmarks->components, 1); /* (joined through tile 1) */
    on_tree_unload_tile(t, 1);
    CHECK(t->landmarks == NULL);
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    CHECK_EQ_INT(t->landmarks->components, 2);
    CHECK_EQ_INT(t->landmarks->complete, 0);
    double d[3] = {2.5, 8.5, 2.5}, e[3] = {2.5, 8.5, 12.5};
    CHECK_EQ_INT(on_query_init(q, d, e, NULL), ON_IN_PROGRESS);
    CHECK_EQ_INT(on_query_find(q, d, e, NULL, path, CAP, &n, &info), ON_FAILURE | ON_LOADING);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* A component no landmark reaches, searched (a tile unloaded at the build may join it to theirs): its
 * cells have no distances (ON_LM_INF), and the search over them pulls towards the goal as without
 * landmarks. Read as distances they gave every such cell one large bound: 1719 expansions in order of
 * g against 71 (session-13 review). */
static void uncovered_component(void)
{
    on_tree *t = gt_tree(4, 1, 1, 5);
    CHECK(t != NULL);
    gt_box(t, 0, 0, 16, 96, 32, 17); /* a wall across tiles 0-2; the two sides meet in tile 3 */
    on_tree_unload_tile(t, 3);
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 16, NULL), ON_SUCCESS);
    CHECK_EQ_INT(t->landmarks->components, 2);
    CHECK_EQ_INT(t->landmarks->complete, 0);
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    q->no_reverse = 1; /* (one direction both times: without landmarks a search stalled in front of the
                        * wall turns round, search.c's stalled; the landmarks' bound is the goal's) */
    double a[3] = {2.5, 16.5, 20.5}, b[3] = {90.5, 16.5, 2.5}, path[3 * CAP];
    size_t n = 0;
    on_query_info with, without;
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, &with), ON_FAILURE | ON_LOADING);
    q->no_landmarks = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, &without), ON_FAILURE | ON_LOADING);
    CHECK(without.expansions > 0);
    CHECK_EQ_INT(with.expansions, without.expansions);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* A cell whose neighbours outgrow the query's lists (256 entries at first) while landmarks are read:
 * the 32^3 free cell in front of a checkerboard wall lists 512 unit cells across its face. The lists'
 * numbers were written through a pointer kept from before they grew (into freed memory: ASan's
 * heap-use-after-free in celladj.c's emit under `make check`; A4 with 16 landmarks aborted in glibc's
 * malloc). The same path as without landmarks. */
static void wide_face(void)
{
    on_tree *t = gt_tree(1, 1, 1, 6);
    CHECK(t != NULL);
    for (int y = 0; y < 64; y++)
        for (int z = 0; z < 64; z++)
            if ((y + z) & 1) gt_box(t, 32, y, z, 33, y + 1, z + 1);
    CHECK_EQ_INT(on_tree_landmarks_prepare(t, 4, NULL), ON_SUCCESS);
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    q->no_reverse = 1;
    double a[3] = {16.25, 16.5, 16.75}, b[3] = {48.5, 20.25, 13.5}, path[3 * CAP], alone[3 * CAP];
    size_t n = 0, m = 0;
    on_query_info with, without;
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, path, CAP, &n, &with), ON_SUCCESS);
    CHECK(q->g.nbcap >= 512); /* (the lists grew during the search) */
    q->no_landmarks = 1;
    CHECK_EQ_INT(on_query_find(q, a, b, NULL, alone, CAP, &m, &without), ON_SUCCESS);
    CHECK_EQ_INT((long)n, (long)m);
    CHECK(n == m && memcmp(path, alone, 3 * n * sizeof *path) == 0);
    CHECK(fabs(with.length - without.length) < 1e-12);
    on_query_destroy(q);
    on_tree_destroy(t);
}

TEST_MAIN("landmarks", {
    wide_face();
    tunnel_distances();
    random_scene();
    edit_invalidates();
    components();
    uncovered_component();
})
