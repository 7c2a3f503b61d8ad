/*
 * bench/obstacles.c -- the cost of one temporary obstacle (on_tree_add_obstacle / remove_obstacle) on
 * a single 64^3 tile and a single 512^3 tile, each cluttered with random boxes (a tile of a real bake
 * has thousands of nodes), with and without a prepared graph (prepared tiles are prepared again after
 * every change). Obstacles are 4^3-leaf boxes at random places; each pass adds K of them one by one,
 * then removes them in random order; the fastest of P passes is reported per add and per remove.
 * Build and run (from the project root, after make):
 *   make bench-obstacles  (or build/bench/obstacles after it is built)
 *   build/bench/obstacles [-k K] [-p PASSES]
 */
#include "octonav.h"
#include "scen.h"

#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static on_tree *cluttered(int depth, int nbox)
{
    on_tree_params p = {{1, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    double n = (double)(1 << depth);
    rng = 12345;
    for (int i = 0; i < nbox; i++) {
        double mn[3], mx[3];
        for (int k = 0; k < 3; k++) {
            mn[k] = rnd() * n;
            mx[k] = mn[k] + 0.5 + rnd() * n / 16;
        }
        on_tree_add_box(t, mn, mx);
    }
    on_tree_compact(t, 0);
    return t;
}

static void run(int depth, int nbox, int prepared, int k, int passes)
{
    on_tree *t = cluttered(depth, nbox);
    if (!t) return;
    if (prepared) on_tree_prepare(t, -1, NULL);
    on_tree_stats st;
    on_tree_stats_get(t, &st);
    double n = (double)(1 << depth), best_add = 1e30, best_rm = 1e30;
    uint32_t *ids = malloc((size_t)k * sizeof *ids);
    for (int pass = 0; pass < passes && ids; pass++) {
        rng = 777 + (uint64_t)pass;
        double t0 = bench_now();
        for (int i = 0; i < k; i++) {
            double mn[3], mx[3];
            for (int a = 0; a < 3; a++) {
                mn[a] = rnd() * (n - 4);
                mx[a] = mn[a] + 4;
            }
            on_tree_add_obstacle(t, mn, mx, &ids[i]);
        }
        double t1 = bench_now();
        for (int left = k; left > 0; left--) {
            int i = (int)(rnd() * left);
            on_tree_remove_obstacle(t, ids[i]);
            ids[i] = ids[left - 1];
        }
        double t2 = bench_now();
        if ((t1 - t0) / k < best_add) best_add = (t1 - t0) / k;
        if ((t2 - t1) / k < best_rm) best_rm = (t2 - t1) / k;
    }
    printf("| %d^3 | %zu | %zu | %s | %d | %.1f | %.1f |\n", 1 << depth, st.nodes, st.table_bytes,
           prepared ? "yes" : "no", k, best_add * 1e6, best_rm * 1e6);
    free(ids);
    on_tree_destroy(t);
}

int main(int argc, char **argv)
{
    int k = 32, passes = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc) k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
    }
    if (k < 1 || passes < 1) {
        fprintf(stderr, "usage: obstacles [-k K] [-p PASSES]\n");
        return 2;
    }
    printf("| tile | nodes | table bytes | prepared | obstacles | us / add | us / remove |\n");
    printf("|---|---:|---:|---|---:|---:|---:|\n");
    for (int prepared = 0; prepared < 2; prepared++) {
        run(6, 200, prepared, k, passes);
        run(9, 4000, prepared, k, passes);
    }
    return 0;
}
