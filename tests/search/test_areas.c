/*
 * test_areas.c -- the graph of cells split at area faces (graph_areas.c) on random scenes across
 * tiles: every free leaf lies in the node locate gives for it, no node is held in part by an area, and
 * a node's neighbours are exactly the nodes owning the free leaves across its faces (so the relation
 * is symmetric and every face of positive area is found); and searches with random areas give paths whose segments are in sight, never enter an
 * excluded area, and cost what info.cost says.
 */
#include "octonav.h"
#include "minitest.h"
#include "areas.h"
#include "graph.h"
#include "raycast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TESTRNG_SEED 0x853c49e6748fea9bull
#include "testrng.h"

#define NX 32
#define NY 16
#define NZ 16

static on_tree *random_tree(void)
{
    on_tree_params p = {{2, 1, 1}, 4, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    for (int i = 0; i < 12; i++) {
        double mn[3] = {rnd() * NX, rnd() * NY, rnd() * NZ}, mx[3];
        for (int k = 0; k < 3; k++) mx[k] = mn[k] + 1 + rnd() * 4;
        on_tree_add_box(t, mn, mx);
    }
    return t;
}

static void random_areas(on_area *a, int n, int allow_exclude)
{
    for (int i = 0; i < n; i++) {
        double ext[3] = {NX, NY, NZ};
        for (int k = 0; k < 3; k++) {
            a[i].min[k] = rnd() * ext[k] - 1;
            a[i].max[k] = a[i].min[k] + 0.5 + rnd() * 9;
        }
        a[i].cost = 1 + rnd() * 9;
        a[i].exclude = allow_exclude && rnd() < 0.3;
    }
}

/* Flood the split graph from the node holding a free leaf; check each node and its neighbours. */
static void graph_check(on_tree *t, const on_area *a, int na)
{
    on_lcache *lc = malloc(sizeof *lc);
    on_tileset ts;
    on_graph g;
    on_areaset as = {0};
    CHECK(lc && on_tileset_init(&ts, 8) == 0 && on_graph_init(&g, t, lc, &ts) == 0);
    on_lcache_reset(lc, t);
    CHECK(on_areaset_build(&as, t, a, (size_t)na) == 0);
    g.areas = &as;
    on_graph_use(&g, ON_GRAPH_AREA_CELLS);
    /* leaf coverage: each free leaf's node (by locate) */
    static int owner[NX][NY][NZ];
    on_cell *nodes = malloc(NX * NY * NZ * sizeof *nodes);
    size_t nn = 0;
    memset(owner, 0xff, sizeof owner);
    int bad_cover = 0, bad_split = 0, bad_face = 0;
    for (int x = 0; x < NX; x++)
        for (int y = 0; y < NY; y++)
            for (int z = 0; z < NZ; z++) {
                on_cell c, nd;
                if (!on_tree_leaf_free(t, x, y, z, &c)) continue;
                double p[3] = {x + 0.5, y + 0.5, z + 0.5};
                on_graph_locate(&g, c, p, &nd);
                int64_t m[3], s;
                on_tree_cell_nav(t, nd, m, &s);
                if (x < m[0] || x >= m[0] + s || y < m[1] || y >= m[1] + s || z < m[2] || z >= m[2] + s) bad_cover++;
                size_t k = 0;
                while (k < nn && (nodes[k].tile != nd.tile || nodes[k].code != nd.code)) k++;
                if (k == nn) {
                    nodes[nn++] = nd;
                    double mn[3] = {(double)m[0], (double)m[1], (double)m[2]};
                    if (s > 1 && on_areaset_splits(&as, mn, (double)s)) bad_split++;
                }
                owner[x][y][z] = (int)k;
            }
    /* neighbours: exactly the nodes sharing a face of positive area (from the leaf owners), symmetric */
    for (size_t k = 0; k < nn; k++) {
        size_t cnt;
        CHECK_EQ_INT(on_graph_neighbors(&g, nodes[k], &cnt), ON_SUCCESS);
        int64_t m[3], s;
        on_tree_cell_nav(t, nodes[k], m, &s);
        /* expected: owners of the free leaves just outside each face */
        size_t want = 0;
        static unsigned char seen[NX * NY * NZ];
        memset(seen, 0, nn);
        for (int f = 0; f < 6; f++) {
            int ax = f >> 1, a1 = (ax + 1) % 3, a2 = (ax + 2) % 3;
            int64_t l[3];
            l[ax] = (f & 1) ? m[ax] + s : m[ax] - 1;
            for (int64_t u = m[a1]; u < m[a1] + s; u++)
                for (int64_t v = m[a2]; v < m[a2] + s; v++) {
                    l[a1] = u;
                    l[a2] = v;
                    if (l[0] < 0 || l[1] < 0 || l[2] < 0 || l[0] >= NX || l[1] >= NY || l[2] >= NZ) continue;
                    int o = owner[l[0]][l[1]][l[2]];
                    if (o >= 0 && !seen[o]) {
                        seen[o] = 1;
                        want++;
                    }
                }
        }
        if (cnt != want) bad_face++;
        for (size_t i = 0; i < cnt; i++) {
            size_t j = 0;
            while (j < nn && (nodes[j].tile != g.nb[i].tile || nodes[j].code != g.nb[i].code)) j++;
            if (j == nn || !seen[j]) bad_face++;
        }
    }
    CHECK_EQ_INT(bad_cover, 0);
    CHECK_EQ_INT(bad_split, 0);
    CHECK_EQ_INT(bad_face, 0);
    free(nodes);
    on_areaset_free(&as);
    on_graph_free(&g);
    on_tileset_free(&ts);
    free(lc);
}

static int seg_enters(const double a[3], const double b[3], const on_area *ar)
{
    double t0 = 0, t1 = 1;
    for (int k = 0; k < 3; k++) {
        double d = b[k] - a[k];
        if (d == 0) {
            if (!(a[k] > ar->min[k] && a[k] < ar->max[k])) return 0;
            continue;
        }
        double u = (ar->min[k] - a[k]) / d, v = (ar->max[k] - a[k]) / d;
        if (u > v) {
            double w = u;
            u = v;
            v = w;
        }
        if (u > t0) t0 = u;
        if (v < t1) t1 = v;
    }
    return (t1 - t0) * sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2])) >
           1e-7;
}

static void searches(on_tree *t, const on_area *a, int na)
{
    on_query *q;
    CHECK(on_ok(on_query_create(t, 1 << 16, &q)));
    on_query_opts o;
    on_query_opts_default(&o);
    o.areas = a;
    o.nareas = (size_t)na;
    on_areaset as = {0};
    CHECK(on_areaset_build(&as, t, a, (size_t)na) == 0);
    int found = 0, bad = 0;
    for (int i = 0; i < 30; i++) {
        double s[3] = {rnd() * NX, rnd() * NY, rnd() * NZ}, e[3] = {rnd() * NX, rnd() * NY, rnd() * NZ}, path[3 * 512];
        size_t n;
        on_query_info info;
        o.any_angle = i % 3 == 0;
        on_status st = on_query_find(q, s, e, &o, path, 512, &n, &info);
        if (!on_ok(st)) continue;
        found++;
        double cost = 0;
        for (size_t k = 1; k < n; k++) {
            if (!on_ok(on_tree_visible(t, path + 3 * k - 3, path + 3 * k))) bad++;
            for (int j = 0; j < na; j++)
                if (a[j].exclude && seg_enters(path + 3 * k - 3, path + 3 * k, &a[j])) bad++;
            cost += on_areaset_cost(&as, path + 3 * k - 3, path + 3 * k);
        }
        if (!(fabs(cost - info.cost) <= 1e-9 * (1 + cost)) || info.cost < info.length - 1e-9) bad++;
    }
    CHECK(found > 0);
    CHECK_EQ_INT(bad, 0);
    on_areaset_free(&as);
    on_query_destroy(q);
}

TEST_MAIN("areas", {
    for (int round = 0; round < 12; round++) {
        on_tree *t = random_tree();
        on_area a[6];
        int na = 1 + (int)(rnd() * 6);
        random_areas(a, na, round % 2);
        graph_check(t, a, na);
        searches(t, a, na);
        on_tree_destroy(t);
    }
})
