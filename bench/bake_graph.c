/*
 * bench/bake_graph.c -- the bake's tile graphs alone, from a baked pack: each tile file of DIR/tiles is
 * decoded into a tree of the pack's grid, its graph built as the bake builds it (on_tgraph_build_tile,
 * the default bound and stretch, the tag of the pack's own graph file) and encoded, timed on the
 * thread's CPU clock, and compared byte for byte with the pack's tiles/I_J_K.graph. So a change to
 * the graph build is checked against a pack baked before it (identical bytes) and timed without the
 * geometry, and one tile's build can be profiled alone (callgrind: --toggle-collect=on_tgraph_build_tile).
 * Usage: bake_graph DIR [FIRST [COUNT [PASSES]]]   (tiles in the pack's order of index i + nx (j + ny k);
 * PASSES builds of each tile, the fastest kept). Prints per tile the seconds, portals, bytes and
 * "same" / "DIFFERENT", then the total; exit status 1 when any graph differs.
 */
#include "octonav.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    uint8_t *buf = NULL;
    char err[256];
    if (!on_ok(on_read_file_max(path, (size_t)1 << 30, &buf, len, err, sizeof err))) return NULL;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bake_graph DIR [FIRST [COUNT [PASSES]]]\n");
        return 2;
    }
    const char *dir = argv[1];
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bake_graph: %s: cannot open\n", path);
        return 2;
    }
    on_tree_params p;
    memset(&p, 0, sizeof p);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "scale %lf", &p.scale);
        sscanf(line, "depth %d", &p.depth);
        sscanf(line, "origin %lf %lf %lf", &p.origin[0], &p.origin[1], &p.origin[2]);
        sscanf(line, "tiles %d %d %d", &p.tiles[0], &p.tiles[1], &p.tiles[2]);
        sscanf(line, "radius %lf", &p.radius);
    }
    fclose(f);
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) {
        fprintf(stderr, "bake_graph: %s: no tree from its grid\n", path);
        return 2;
    }
    int ntile = p.tiles[0] * p.tiles[1] * p.tiles[2];
    int first = argc > 2 ? atoi(argv[2]) : 0, count = argc > 3 ? atoi(argv[3]) : ntile;
    int passes = argc > 4 ? atoi(argv[4]) : 1;
    if (passes < 1) passes = 1;
    double total = 0;
    int differ = 0, done = 0;
    printf("| tile | graph s | portals | bytes | pack |\n|---|---:|---:|---:|---|\n");
    for (int ti = first; ti < first + count && ti < ntile; ti++) {
        int ijk[3];
        on_tree_tile_coords(t, (uint32_t)ti, ijk);
        size_t tlen = 0, glen = 0;
        snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.tile", dir, ijk[0], ijk[1], ijk[2]);
        uint8_t *tb = slurp(path, &tlen);
        snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.graph", dir, ijk[0], ijk[1], ijk[2]);
        uint8_t *gb = slurp(path, &glen);
        on_tgraph *ref = NULL;
        if (!tb || !gb || !on_ok(on_tree_decode_tile_file(t, (uint32_t)ti, tb, tlen)) ||
            !on_ok(on_tgraph_decode(gb, glen, p.depth, &ref))) {
            fprintf(stderr, "bake_graph: tile %d,%d,%d: cannot read its files\n", ijk[0], ijk[1], ijk[2]);
            return 2;
        }
        on_tgraph_info ri;
        on_tgraph_get_info(ref, &ri);
        on_tgraph_opts o = {.bound = 0, .stretch = 1, .tag = ri.tag};
        double best = 0;
        on_tgraph *g = NULL;
        for (int pass = 0; pass < passes; pass++) {
            on_tgraph_free(g);
            g = NULL;
            double a = cpu();
            on_status st = on_tgraph_build_tile(t, (uint32_t)ti, &o, &g);
            double s = cpu() - a;
            if (!on_ok(st)) {
                fprintf(stderr, "bake_graph: tile %d: %s\n", ti, on_status_string(st));
                return 2;
            }
            if (pass == 0 || s < best) best = s;
        }
        size_t len = 0;
        on_tgraph_encode(g, NULL, 0, &len);
        uint8_t *mine = malloc(len + 1);
        if (!mine || !on_ok(on_tgraph_encode(g, mine, len, &len))) return 2;
        int same = len == glen && memcmp(mine, gb, len) == 0;
        differ += !same;
        on_tgraph_info gi;
        on_tgraph_get_info(g, &gi);
        printf("| %d,%d,%d | %.3f | %u | %zu | %s |\n", ijk[0], ijk[1], ijk[2], best, gi.portals, len,
               same ? "same" : "DIFFERENT");
        total += best;
        done++;
        free(mine);
        free(tb);
        free(gb);
        on_tgraph_free(g);
        on_tgraph_free(ref);
        on_tree_clear_tile(t, (uint32_t)ti); /* (the tree holds one tile at a time) */
    }
    printf("\n%d tiles: graphs %.3f s CPU (fastest of %d), %d differ from the pack's\n", done, total, passes, differ);
    on_tree_destroy(t);
    return differ ? 1 : 0;
}
