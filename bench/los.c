/*
 * bench/los.c -- octonav's line of sight alone, for profiling (callgrind) and quick timing: the
 * anchors benchmark's 4,000 segments per map (bench_segments), on_tree_visible over all of them,
 * fastest of P passes, and the count of answers that differ from the dense walk (on_grid_visible).
 * Instructions per segment: valgrind --tool=callgrind --toggle-collect=on_tree_visible
 *   build/bench/los -p 1 MAP   (then the total Ir / segments).
 * -l LOAD compacts the node tables at that load factor first (a lower load: fewer probes, more bytes).
 * Usage: los [-s SEGMENTS] [-p PASSES] [-l LOAD] [MAP ...]   (run from the project root)
 */
#include "octonav.h"
#include "scen.h"

#include <string.h>

int main(int argc, char **argv)
{
    size_t nseg = 4000;
    int passes = 5, nmaps = 0;
    double load = 0;
    const char *maps[32];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc) nseg = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-l") && i + 1 < argc) load = atof(argv[++i]);
        else if (nmaps < 32) maps[nmaps++] = argv[i];
    }
    if (!nmaps)
        for (; bench_maps[nmaps]; nmaps++) maps[nmaps] = bench_maps[nmaps];
    if (nseg < 1 || passes < 1) {
        fprintf(stderr, "usage: los [-s SEGMENTS] [-p PASSES] [-l LOAD] [MAP ...]\n");
        return 2;
    }
    printf("| map | segments | clear | us / segment | disagree | tree bytes | losmap bytes | losmap build ms |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    int bad = 0;
    for (int m = 0; m < nmaps; m++) {
        char spath[520];
        on_voxmap vm;
        if (bench_open_map(maps[m], &vm, spath, sizeof spath)) continue;
        on_tree *t = NULL;
        on_grid *g = NULL;
        if (!on_ok(on_tree_from_voxmap(&vm, 9, &t)) || !on_ok(on_grid_from_voxmap(&vm, &g))) return 1;
        if (load > 0 && !on_ok(on_tree_compact(t, load))) return 1;
        double tb = bench_now();
        size_t lbytes = 0;
        if (!on_ok(on_tree_los_prepare(t, &lbytes))) return 1;
        tb = bench_now() - tb;
        on_tree_stats tst;
        on_tree_stats_get(t, &tst);
        size_t ns;
        bench_scen *scen = bench_read_scen(spath, &ns);
        double *seg = malloc(nseg * 6 * sizeof *seg);
        char *got = malloc(nseg), *ref = malloc(nseg);
        if (!seg || !got || !ref) return 1;
        bench_segments(t, vm.w, vm.h, vm.d, scen, ns, nseg, seg);
        double best = 1e30;
        for (int p = 0; p < passes; p++) {
            double t0 = bench_now();
            for (size_t i = 0; i < nseg; i++) got[i] = (char)on_ok(on_tree_visible(t, seg + 6 * i, seg + 6 * i + 3));
            double dt = bench_now() - t0;
            if (dt < best) best = dt;
        }
        size_t clear = 0, dis = 0;
        for (size_t i = 0; i < nseg; i++) {
            ref[i] = (char)on_ok(on_grid_visible(g, seg + 6 * i, seg + 6 * i + 3));
            clear += (size_t)ref[i];
            dis += got[i] != ref[i];
        }
        printf("| %s | %zu | %zu | %.3f | %zu | %zu | %zu | %.2f |\n", maps[m], nseg, clear, best * 1e6 / (double)nseg, dis,
               tst.bytes, lbytes, tb * 1e3);
        fflush(stdout);
        bad |= dis != 0;
        free(seg);
        free(got);
        free(ref);
        free(scen);
        on_voxmap_free(&vm);
        on_grid_destroy(g);
        on_tree_destroy(t);
    }
    return bad;
}
