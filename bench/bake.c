/*
 * bench/bake.c -- bake throughput in C: the seed-scale heightfield (4096 x 4096 samples at 1 m leaves,
 * 8 x 1 x 8 tiles of 512^3) and the four meshes of ../shared/data/meshes (at the scales of the Lua
 * bench, tiles of 64^3 leaves over the mesh's bounds). For each: CPU seconds of the insertion
 * (clock()), nodes, nodes and triangles a second, and an FNV-1a hash of the saved tree file, so a
 * change to the insertion can be checked to leave every tree bit-identical.
 * Usage: bake [-m] [-n SAMPLES]   (-m: meshes only; run from the project root)
 */
#include "octonav.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MESH_DIR "../shared/data/meshes"

static double cpu(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* FNV-1a over the file the tree saves to, and its size. */
static unsigned long long tree_hash(const on_tree *t, long *size)
{
    char path[] = "/tmp/octonav-bake-XXXXXX";
    int fd = mkstemp(path);
    unsigned long long h = 1469598103934665603ull;
    *size = -1;
    if (fd < 0) return 0;
    close(fd);
    if (on_ok(on_tree_save(t, path))) {
        FILE *f = fopen(path, "rb");
        int c;
        *size = 0;
        while (f && (c = getc(f)) != EOF) {
            h = (h ^ (unsigned char)c) * 1099511628211ull;
            (*size)++;
        }
        if (f) fclose(f);
    }
    unlink(path);
    return h;
}

static void report(const char *name, const on_tree *t, double secs, double tris)
{
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    long size;
    unsigned long long h = tree_hash(t, &size);
    printf("| %s | %.0f | %.3f | %zu | %.0f | %.0f | %ld | %016llx |\n", name, tris, secs, st.nodes,
           (double)st.nodes / secs, tris / secs, size, h);
    fflush(stdout);
}

static double height(int i, int k)
{
    double x = i, z = k;
    return 150.0 + 90.0 * sin(x / 97.0) * cos(z / 131.0) + 40.0 * sin((x + z) / 53.0) +
           20.0 * cos(x / 23.0) * sin(z / 29.0);
}

static int heightfield(int ns)
{
    on_tree_params p = {{8, 1, 8}, 9, 1.0, {0, 0, 0}, 0.0};
    on_tree *t;
    if (!on_ok(on_tree_create(&p, &t))) return 1;
    double *h = malloc((size_t)ns * (size_t)ns * sizeof *h);
    if (!h) return 1;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < ns; i++) h[i + (size_t)k * (size_t)ns] = height(i, k);
    on_heightfield hf = {{0, 0, 0}, 1.0, ns, ns, h};
    double c0 = cpu();
    on_status s = on_tree_add_heightfield(t, &hf);
    double c1 = cpu();
    if (!on_ok(s)) return 1;
    char name[64];
    snprintf(name, sizeof name, "heightfield %dx%d", ns, ns);
    report(name, t, c1 - c0, 2.0 * (ns - 1) * (double)(ns - 1));
    free(h);
    on_tree_destroy(t);
    return 0;
}

static void mesh(const char *name, double scale)
{
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/%s.obj", MESH_DIR, name);
    double *v;
    uint32_t *tri;
    size_t nv, nt;
    if (!on_ok(on_obj_read(path, &v, &nv, &tri, &nt, err, sizeof err))) {
        fprintf(stderr, "%s: skipped (%s)\n", name, err);
        return;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < nv; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fmin(lo[a], v[3 * i + a]);
            hi[a] = fmax(hi[a], v[3 * i + a]);
        }
    on_tree_params p;
    memset(&p, 0, sizeof p);
    p.depth = 6;
    p.scale = scale;
    for (int a = 0; a < 3; a++) {
        p.origin[a] = lo[a] - 1;
        double ext = hi[a] + (a == 1 ? 4 : 1) - p.origin[a];
        p.tiles[a] = (int)ceil(ext / (64 * scale));
    }
    on_tree *t;
    if (!on_ok(on_tree_create(&p, &t))) return;
    double c0 = cpu();
    on_status s = on_tree_add_triangles(t, v, nv, tri, nt);
    double c1 = cpu();
    if (on_ok(s)) report(name, t, c1 - c0, (double)nt);
    on_tree_destroy(t);
    free(v);
    free(tri);
}

int main(int argc, char **argv)
{
    int meshes_only = 0, ns = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m")) meshes_only = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) ns = atoi(argv[++i]);
    }
    if (ns < 2 || ns > 4097) {
        fprintf(stderr, "usage: bake [-m] [-n SAMPLES (2..4097)]\n");
        return 2;
    }
    printf("| geometry | triangles | CPU s | nodes | nodes/s | triangles/s | file bytes | FNV-1a of the file |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
    if (!meshes_only && heightfield(ns) != 0) return 1;
    static const struct { const char *name; double scale; } m[] = {
        {"dungeon", 0.5}, {"nav_test", 0.5}, {"house", 0.125}, {"undulating", 0.5}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) mesh(m[i].name, m[i].scale);
    return 0;
}
