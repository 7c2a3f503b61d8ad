/*
 * radius.c -- one tree for every agent size (issue 33): on the Warframe maps (../shared/data/voxel), paths
 * for an agent of radius R leaves searched on the map's one tree (on_query_opts.radius) against paths for
 * a point on a tree baked for R alone (today's route: the map's blocked voxels grown by R, as the bake's
 * inflation grows geometry, and the map's border grown inwards by R, then on_tree_from_voxmap).
 *
 * Per map and radius: the scenarios both solve (and those only one solves: should be none), the length
 * ratio one tree / dedicated tree (mean and max), the least distance from the radius paths to blocked
 * space, checked independently of the tree: every path sampled every 1/16 leaf, each sample's Euclidean
 * distance to every blocked voxel of the map's dense grid within R + 1 leaves of it and to the map's
 * border (brute force over the voxels), and the samples closer than R (must be 0); the query time of
 * both (fastest of the passes), and the memory: the one tree's bytes (tree:stats) over the dedicated
 * tree's. Exits 1 when a sample lies closer than R or only one tree solves a scenario.
 * Usage: radius [-n scenarios a map (default 100)] [-r max radius (default 3)] [-p passes (default 3)]
 *               [-w search weight (default: the default options')] [-v: scenarios off by 1 %]
 *               [MAP ...]
 */
#include "octonav.h"
#include "scen.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dense {
    int w, h, d;
    unsigned char *b; /* 1 = blocked */
} dense;

static size_t at(const dense *g, int x, int y, int z) { return (size_t)x + (size_t)g->w * ((size_t)y + (size_t)g->h * z); }

static int dense_from(const on_voxmap *vm, dense *g)
{
    g->w = vm->w;
    g->h = vm->h;
    g->d = vm->d;
    g->b = calloc((size_t)g->w * g->h * g->d, 1);
    if (!g->b) return -1;
    for (size_t i = 0; i < vm->count; i++) g->b[at(g, vm->xyz[3 * i], vm->xyz[3 * i + 1], vm->xyz[3 * i + 2])] = 1;
    return 0;
}

/* The map of g's voxels grown by R (a cube of half-side R round each: Chebyshev distance <= R, one axis
 * at a time), its border grown inwards by R too: the map less its R outer layers on every side (the
 * tree's bounds block beyond them at no cost), shifted by -R (queries on it shift their ends alike). */
static int dilate(const dense *g, int R, int shift, on_voxmap *out)
{
    size_t n = (size_t)g->w * g->h * g->d;
    unsigned char *a = malloc(n), *b = malloc(n);
    if (!a || !b) return -1;
    memcpy(a, g->b, n);
    int dims[3] = {g->w, g->h, g->d};
    for (int axis = 0; axis < 3; axis++) {
        for (int z = 0; z < g->d; z++)
            for (int y = 0; y < g->h; y++)
                for (int x = 0; x < g->w; x++) {
                    int p[3] = {x, y, z}, v = 0;
                    if (p[axis] < R || p[axis] >= dims[axis] - R) v = 1;
                    for (int k = -R; k <= R && !v; k++) {
                        int q[3] = {x, y, z};
                        q[axis] += k;
                        if (q[axis] >= 0 && q[axis] < dims[axis]) v = a[at(g, q[0], q[1], q[2])];
                    }
                    b[at(g, x, y, z)] = (unsigned char)v;
                }
        unsigned char *tmp = a;
        a = b;
        b = tmp;
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += a[i];
    int c0 = shift ? R : 0; /* (the layers cut off) */
    out->w = g->w - 2 * c0;
    out->h = g->h - 2 * c0;
    out->d = g->d - 2 * c0;
    if (out->w < 1 || out->h < 1 || out->d < 1) return -1;
    count = 0;
    for (int z = c0; z < g->d - c0; z++)
        for (int y = c0; y < g->h - c0; y++)
            for (int x = c0; x < g->w - c0; x++) count += a[at(g, x, y, z)];
    out->count = count;
    out->xyz = malloc((count ? count : 1) * 3 * sizeof *out->xyz);
    if (!out->xyz) return -1;
    size_t k = 0;
    for (int z = c0; z < g->d - c0; z++)
        for (int y = c0; y < g->h - c0; y++)
            for (int x = c0; x < g->w - c0; x++)
                if (a[at(g, x, y, z)]) {
                    out->xyz[3 * k] = (uint16_t)(x - c0);
                    out->xyz[3 * k + 1] = (uint16_t)(y - c0);
                    out->xyz[3 * k + 2] = (uint16_t)(z - c0);
                    k++;
                }
    free(a);
    free(b);
    return 0;
}

/* Euclidean distance from p to blocked space (voxels within R + 1 of p, the map's border), capped at
 * R + 1: brute force over the dense grid. */
static double clearance_at(const dense *g, const double p[3], int R)
{
    double best = R + 1;
    int dims[3] = {g->w, g->h, g->d};
    for (int k = 0; k < 3; k++) {
        best = fmin(best, p[k]);
        best = fmin(best, dims[k] - p[k]);
    }
    int lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = (int)floor(p[k]) - R - 1;
        hi[k] = (int)floor(p[k]) + R + 1;
        if (lo[k] < 0) lo[k] = 0;
        if (hi[k] > dims[k] - 1) hi[k] = dims[k] - 1;
    }
    for (int z = lo[2]; z <= hi[2]; z++)
        for (int y = lo[1]; y <= hi[1]; y++)
            for (int x = lo[0]; x <= hi[0]; x++) {
                if (!g->b[at(g, x, y, z)]) continue;
                int v[3] = {x, y, z};
                double d2 = 0;
                for (int k = 0; k < 3; k++) {
                    double e = p[k] < v[k] ? v[k] - p[k] : p[k] > v[k] + 1 ? p[k] - (v[k] + 1) : 0;
                    d2 += e * e;
                }
                if (d2 < best * best) best = sqrt(d2);
            }
    return best;
}

/* The least clearance along a path (sampled every 1/16 leaf, every waypoint) and the samples under R. */
static double path_clearance(const dense *g, const double *p, size_t np, int R, size_t *under)
{
    double least = INFINITY;
    for (size_t i = 0; i < np; i++) {
        const double *a = p + 3 * i, *b = i + 1 < np ? a + 3 : a;
        double len = sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
        size_t steps = (size_t)ceil(len * 16);
        for (size_t s = 0; s <= steps; s++) {
            double t = steps ? (double)s / (double)steps : 0, x[3];
            for (int k = 0; k < 3; k++) x[k] = a[k] + t * (b[k] - a[k]);
            double c = clearance_at(g, x, R);
            if (c < R - 1e-9) (*under)++;
            if (c < least) least = c;
        }
    }
    return least;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The q-quantile of the n sorted values v (nearest rank). */
static double quantile(const double *v, size_t n, double q)
{
    if (!n) return 0;
    size_t k = (size_t)ceil(q * (double)n);
    return v[k ? k - 1 : 0];
}

typedef struct res {
    on_status st;
    double length;
    size_t np;
} res;

int main(int argc, char **argv)
{
    size_t limit = 100;
    int rmax = 3, passes = 3;
    double weight = -1;
    int verbose = 0, shift = 0;
    const char *maps[32];
    int nmaps = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) limit = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) rmax = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc) weight = atof(argv[++i]);
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "-s")) shift = 1;
        else if (nmaps < 31) maps[nmaps++] = argv[i];
    }
    if (!nmaps)
        for (; bench_maps[nmaps]; nmaps++) maps[nmaps] = bench_maps[nmaps];
    if (rmax < 1 || passes < 1 || !limit) return 2;
    printf("| map | R | scenarios | both solved | one only | length ratio mean | p90 | p99 | max | least clearance | samples < R "
           "| one tree us | dedicated us | time ratio | bytes one tree | bytes dedicated | memory ratio |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int bad = 0;
    size_t cap = 1 << 16;
    double *pbuf = malloc(cap * 3 * sizeof *pbuf);
    if (!pbuf) return 1;
    for (int m = 0; m < nmaps; m++) {
        char spath[520];
        on_voxmap vm;
        if (bench_open_map(maps[m], &vm, spath, sizeof spath)) continue;
        dense g;
        on_tree *t = NULL;
        if (dense_from(&vm, &g) || !on_ok(on_tree_from_voxmap(&vm, 9, &t))) return 1;
        on_voxmap_free(&vm);
        on_tree_stats st;
        on_tree_stats_get(t, &st);
        size_t one_bytes = st.bytes;
        size_t nscen;
        bench_scen *scen = bench_read_scen(spath, &nscen);
        if (!scen || !nscen) return 1;
        size_t n = nscen < limit ? nscen : limit, stride = nscen / n;
        on_query *q = NULL;
        if (!on_ok(on_query_create(t, (size_t)1 << 22, &q))) return 1;
        res *r1 = malloc(n * sizeof *r1), *r2 = malloc(n * sizeof *r2);
        double *ratios = malloc(n * sizeof *ratios);
        if (!r1 || !r2 || !ratios) return 1;
        for (int R = 1; R <= rmax; R++) {
            on_voxmap dv;
            on_tree *td = NULL;
            if (dilate(&g, R, shift, &dv) || !on_ok(on_tree_from_voxmap(&dv, 9, &td))) return 1;
            on_voxmap_free(&dv);
            on_tree_stats_get(td, &st);
            size_t ded_bytes = st.bytes;
            if (!shift) { /* (the memory of the tree baked for R: its border grown by its bounds, at no cost) */
                on_tree *tc = NULL;
                if (dilate(&g, R, 1, &dv) || !on_ok(on_tree_from_voxmap(&dv, 9, &tc))) return 1;
                on_voxmap_free(&dv);
                on_tree_stats_get(tc, &st);
                ded_bytes = st.bytes;
                on_tree_destroy(tc);
            }
            on_query *qd = NULL;
            if (!on_ok(on_query_create(td, (size_t)1 << 22, &qd))) return 1;
            on_query_opts o1, o2;
            on_query_opts_default(&o1);
            o1.graph = ON_GRAPH_CELLS;
            if (weight >= 0) o1.weight = weight;
            o2 = o1;
            o1.radius = R;
            double best1 = INFINITY, best2 = INFINITY;
            size_t both = 0, one = 0, under = 0;
            double least = INFINITY, sum = 0, worst = 0;
            for (int pass = 0; pass < passes; pass++) {
                double s1 = 0, s2 = 0; /* (the queries alone: not the paths' check) */
                for (size_t i = 0; i < n; i++) {
                    on_query_info info;
                    size_t np = 0;
                    double t0 = bench_now();
                    r1[i].st = on_query_find(q, scen[i * stride].a, scen[i * stride].b, &o1, pbuf, cap, &np, &info);
                    s1 += bench_now() - t0;
                    r1[i].length = info.length;
                    r1[i].np = np;
                    if (pass == 0 && on_ok(r1[i].st)) {
                        double c = path_clearance(&g, pbuf, np < cap ? np : cap, R, &under);
                        if (c < least) least = c;
                    }
                }
                for (size_t i = 0; i < n; i++) {
                    on_query_info info;
                    size_t np = 0;
                    double a[3], b[3];
                    for (int k = 0; k < 3; k++) {
                        a[k] = scen[i * stride].a[k] - (shift ? R : 0);
                        b[k] = scen[i * stride].b[k] - (shift ? R : 0);
                    }
                    double t0 = bench_now();
                    r2[i].st = on_query_find(qd, a, b, &o2, pbuf, cap, &np, &info);
                    s2 += bench_now() - t0;
                    r2[i].length = info.length;
                }
                best1 = fmin(best1, s1);
                best2 = fmin(best2, s2);
            }
            for (size_t i = 0; i < n; i++) {
                int ok1 = on_ok(r1[i].st), ok2 = on_ok(r2[i].st);
                if (ok1 != ok2) {
                    one++;
                    fprintf(stderr, "%s R=%d scenario %zu: one tree %s, dedicated %s\n", maps[m], R, i * stride,
                            on_status_string(r1[i].st), on_status_string(r2[i].st));
                }
                if (!ok1 || !ok2) continue;
                both++;
                double ratio = r2[i].length > 0 ? r1[i].length / r2[i].length : 1;
                sum += ratio;
                ratios[both - 1] = ratio;
                if (verbose && fabs(ratio - 1) > 0.01)
                    fprintf(stderr, "%s R=%d scenario %zu: length %.4f, dedicated %.4f (ratio %.4f)\n", maps[m], R, i * stride,
                            r1[i].length, r2[i].length, ratio);
                if (ratio > worst) worst = ratio;
            }
            if (under || one) bad = 1;
            qsort(ratios, both, sizeof *ratios, cmp_double);
            printf("| %s | %d | %zu | %zu | %zu | %.4f | %.4f | %.4f | %.4f | %.3f | %zu | %.1f | %.1f | %.2f | %zu | %zu | %.3f |\n",
                   maps[m], R, n, both, one, both ? sum / (double)both : 0, quantile(ratios, both, 0.9),
                   quantile(ratios, both, 0.99), worst, least, under, best1 / (double)n * 1e6,
                   best2 / (double)n * 1e6, best1 / best2, one_bytes, ded_bytes, (double)one_bytes / (double)ded_bytes);
            fflush(stdout);
            on_query_destroy(qd);
            on_tree_destroy(td);
        }
        free(r1);
        free(r2);
        free(ratios);
        free(scen);
        free(g.b);
        on_query_destroy(q);
        on_tree_destroy(t);
    }
    free(pbuf);
    return bad;
}
