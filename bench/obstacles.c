/*
 * bench/obstacles.c -- the cost of one temporary obstacle (on_tree_add_obstacle / remove_obstacle) on
 * a single 64^3 tile and a single 512^3 tile, each cluttered with random boxes (a tile of a real bake
 * has thousands of nodes), with and without a prepared graph (prepared tiles are prepared again after
 * every change). Obstacles are 4^3-leaf boxes at random places; each pass adds K of them one by one,
 * then removes them in random order; the fastest of P passes is reported per add and per remove.
 * Second table: what obstacles add to a tile load by the streamer (the worker snapshots the tile and
 * blocks the obstacles covering it before building its box set; the install on the caller's thread
 * checks they are still the same and adopts the snapshot): a 64^3 and a 256^3 tile are
 * written to a temporary pack, then unloaded and loaded again by a streamer with one worker, with N
 * obstacles over the tile and N more over a tile never loaded; the caller's time in the update that
 * installs the tile (fastest of P passes of L loads, per load), the extra over no obstacle, and the
 * worker's time per load beside it.
 * Third table: many obstacles on one tile (issue 30 item 11: removal was quadratic per tile, each
 * removal rebuilding the tile and blocking every obstacle left again): N 4^3-leaf boxes added to one
 * cluttered 64^3 tile, then all removed, in the order added and in random order; the totals (one
 * pass each) and the time per removal.
 * Build and run (from the project root, after make):
 *   make bench-obstacles  (or build/bench/obstacles after it is built)
 *   build/bench/obstacles [-k K] [-p PASSES] [-loads] [-many]   (-loads, -many: that table only)
 */
#include "octonav.h"
#include "scen.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* k obstacles of 4^3 leaves at random places in a tile of n leaves a side (the benchmark's rng), ids[i]. */
static void add_random(on_tree *t, double n, int k, uint32_t *ids)
{
    for (int i = 0; i < k; i++) {
        double mn[3], mx[3];
        for (int a = 0; a < 3; a++) {
            mn[a] = rnd() * (n - 4);
            mx[a] = mn[a] + 4;
        }
        on_tree_add_obstacle(t, mn, mx, &ids[i]);
    }
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
        add_random(t, n, k, ids);
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

/* ---- many obstacles on one tile ------------------------------------------------------------------ */

static void run_many(int depth, int nbox, int count, int random_order)
{
    on_tree *t = cluttered(depth, nbox);
    uint32_t *ids = malloc((size_t)count * sizeof *ids);
    if (!t || !ids) {
        free(ids);
        on_tree_destroy(t);
        return;
    }
    double n = (double)(1 << depth);
    rng = 4711;
    double t0 = bench_now();
    add_random(t, n, count, ids);
    double t1 = bench_now();
    if (random_order)
        for (int i = count - 1; i > 0; i--) {
            int j = (int)(rnd() * (i + 1));
            uint32_t x = ids[i];
            ids[i] = ids[j];
            ids[j] = x;
        }
    for (int i = 0; i < count; i++) on_tree_remove_obstacle(t, ids[i]);
    double t2 = bench_now();
    printf("| %d^3 | %d | %s | %.3f | %.3f | %.1f |\n", 1 << depth, count, random_order ? "random" : "as added", t1 - t0,
           t2 - t1, (t2 - t1) / count * 1e6);
    free(ids);
    on_tree_destroy(t);
}

/* ---- tile loads with obstacles over them --------------------------------------------------------- */

/* The tile (0,0,0) of a 2 x 1 x 1 tree as DIR/tiles/0_0_0.tile (the other tile is never loaded). */
static int write_tile(const char *dir, const on_tree *t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tiles", dir);
    if (mkdir(path, 0700) != 0) return -1;
    size_t len;
    on_tree_encode_tile_file(t, 0, NULL, 0, &len);
    uint8_t *b = malloc(len);
    if (!b) return -1;
    on_tree_encode_tile_file(t, 0, b, len, &len);
    snprintf(path, sizeof path, "%s/tiles/0_0_0.tile", dir);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b, 1, len, f) == len;
    if (f) fclose(f);
    free(b);
    return ok ? 0 : -1;
}

static void rm_pack(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tiles/0_0_0.tile", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/tiles", dir);
    rmdir(path);
    rmdir(dir);
}

/* Seconds per load of tile 0 on the caller's thread (the on_streamer_update that installs it: with
 * obstacles over it, their snapshot, blocking and, with prepare, the box set built again), fastest of
 * `passes` runs of `loads` unload + load cycles, with nobs obstacles over tile 0 and nobs over tile 1
 * (never loaded); *decode: the worker's read and decode (and prepare) time per load, fastest too. */
static double load_time(const char *dir, int depth, int prepare, int nobs, int loads, int passes, double *decode)
{
    on_tree_params p = {{2, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return -1;
    on_streamer_params sp = {0, 1, 1, 0, prepare};
    on_streamer *s = NULL;
    if (!on_ok(on_streamer_create(t, dir, &sp, &s))) {
        on_tree_destroy(t);
        return -1;
    }
    double n = (double)(1 << depth), best = 1e30;
    *decode = 1e30;
    rng = 4242;
    for (int i = 0; i < 2 * nobs; i++) {
        double mn[3], mx[3];
        for (int a = 0; a < 3; a++) {
            mn[a] = rnd() * (n - 4) + (a == 0 && i >= nobs ? n : 0);
            mx[a] = mn[a] + 4;
        }
        uint32_t id;
        on_tree_add_obstacle(t, mn, mx, &id);
    }
    const on_stream_event *ev;
    size_t nev;
    for (int pass = 0; pass < passes; pass++) {
        double sum = 0;
        on_streamer_stats st0, st1;
        on_streamer_stats_get(s, &st0);
        for (int l = 0; l < loads; l++) {
            on_streamer_force_load(s, 0);
            for (;;) {
                double t0 = bench_now();
                on_streamer_update(s, 0, &ev, &nev);
                double dt = bench_now() - t0;
                if (on_streamer_tile_state(s, 0) == ON_TILE_LOADED) {
                    sum += dt;
                    break;
                }
                struct timespec ts = {0, 20000};
                nanosleep(&ts, NULL);
            }
            on_streamer_force_unload(s, 0);
            on_streamer_update(s, 0, &ev, &nev);
        }
        on_streamer_stats_get(s, &st1);
        if (sum / loads < best) best = sum / loads;
        double dec = (st1.decode_seconds - st0.decode_seconds) / loads;
        if (dec < *decode) *decode = dec;
    }
    on_streamer_destroy(s);
    on_tree_destroy(t);
    return best;
}

static void run_loads(int depth, int nbox, int loads, int passes)
{
    char dir[] = "/tmp/octonav-bench-obstacles-XXXXXX";
    if (!mkdtemp(dir)) return;
    on_tree_params p = {{2, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *src = cluttered(depth, nbox); /* (one tile: copied into tile 0 of a 2 x 1 x 1 tree) */
    on_tree *t = NULL;
    if (src && on_ok(on_tree_create(&p, &t))) {
        size_t len;
        on_tree_encode_tile(src, 0, NULL, 0, &len);
        uint8_t *b = malloc(len);
        if (b) {
            on_tree_encode_tile(src, 0, b, len, &len);
            on_tree_decode_tile(t, 0, b, len);
            free(b);
        }
    }
    if (t && write_tile(dir, t) == 0) {
        static const int counts[] = {0, 1, 16, 256};
        size_t nodes = on_tree_tile_nodes(t, 0);
        for (int prepare = 0; prepare < 2; prepare++) {
            double dec, base = load_time(dir, depth, prepare, 0, loads, passes, &dec);
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                double dt = c == 0 ? base : load_time(dir, depth, prepare, counts[c], loads, passes, &dec);
                printf("| %d^3 | %zu | %s | %d | %.0f | %.1f | %+.1f |\n", 1 << depth, nodes, prepare ? "yes" : "no",
                       counts[c], dec * 1e6, dt * 1e6, (dt - base) * 1e6);
            }
        }
    }
    on_tree_destroy(t);
    on_tree_destroy(src);
    rm_pack(dir);
}

int main(int argc, char **argv)
{
    int k = 32, passes = 5, loads_only = 0, many_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-loads")) loads_only = 1;
        else if (!strcmp(argv[i], "-many")) many_only = 1;
        else if (!strcmp(argv[i], "-k") && i + 1 < argc) k = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
    }
    if (k < 1 || passes < 1) {
        fprintf(stderr, "usage: obstacles [-k K] [-p PASSES] [-loads] [-many]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (many_only) loads_only = 1;
    for (int prepared = 0; prepared < 2 && !loads_only; prepared++) {
        if (prepared == 0) {
            printf("| tile | nodes | table bytes | prepared | obstacles | us / add | us / remove |\n");
            printf("|---|---:|---:|---|---:|---:|---:|\n");
        }
        run(6, 200, prepared, k, passes);
        run(9, 4000, prepared, k, passes);
    }
    if (!loads_only || many_only) {
        printf("\n| tile | obstacles on it | removed | s to add them | s to remove them | us / remove |\n");
        printf("|---|---:|---|---:|---:|---:|\n");
        static const int many[] = {2000, 10000};
        for (size_t c = 0; c < sizeof many / sizeof *many; c++)
            for (int r = 0; r < 2; r++) run_many(6, 200, many[c], r);
    }
    if (many_only) return 0;
    printf("\n| tile | nodes | prepared | obstacles over it (and as many elsewhere) | worker us / load (read, "
           "decode, prepare) | caller us / load (install) | extra caller us |\n");
    printf("|---|---:|---|---:|---:|---:|---:|\n");
    run_loads(6, 200, 200, passes);
    run_loads(8, 1000, 20, passes);
    return 0;
}
