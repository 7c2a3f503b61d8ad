/*
 * bench/query.c -- the query benchmark in C (issue 15): over each map, the same seeded sample of
 * scenarios as `bin/octonav bench` (300 by default, Fisher-Yates with bench.lua's generator, seed 1),
 * one query object (max_nodes 2^20) and the default options (or -P: the prepared tree and the
 * `boxes` preset, weight 1.2). Each scenario's fastest of P whole passes gives the time; the last
 * pass gives the paths, their length ratio to the scenario's optimum, and what each query did:
 * expansions, neighbour entries looked at, nodes reached, line-of-sight and turn checks (means per
 * query) and expansions per path cell (median, as bench.lua). Every segment of every path is
 * checked against the dense voxel walk (on_grid_visible: the exact rule); the turns are checked by
 * bench.lua's pure-Lua checker (write the paths with -w and compare them, or run `bin/octonav bench`).
 * Instructions per query (deterministic): `make bench-query-ir` runs -c (a warm-up pass, then one
 * counted pass, no timing) under callgrind, counting inside bench_find (on_query_find) only, and
 * divides by the queries. The default mode first builds the tiles' cell adjacencies (celladj.h; a
 * search would build them on its tiles' first use) and reports their cells, bytes (and against the
 * tree's) and build time.
 * -A turns the adjacencies off (the search walks the tree for every neighbour list: the same paths).
 * -L [N] (default 16) then builds N landmarks (landmarks.h: the search's heuristic) and adds their
 * bytes and build time to that table; -R never searches from the goal's end (q->no_reverse).
 * The last three columns split the time: each phase's median over the scenarios (each scenario's
 * fastest of the passes, phase by phase): init (locating the ends, the direct segment's walk, the
 * choice of direction), the search (on_query_update) and finalize (the corridor, refine, smoothing,
 * relaxation: on_query_finalize), as the timed passes call them one by one (what on_query_find does;
 * the count mode, -c, still calls on_query_find).
 * -W (a diagnostic of where the time goes, not the benchmark's figure) runs each scenario, before
 * timing it, once untimed and then three other scenarios of the sample: its data is then in the caches
 * but the branch predictors have learnt other queries; the difference from the plain run is about the
 * time its data takes to arrive from memory (README, "Queries in C").
 * -v prints, after each map's row, one line a scenario (to see what the slow queries share):
 * `v MAP K SCEN exp E cells C epc E/C us T los L nb N nodes V rev R esc X ratio Q straight S`: K the
 * sample's index, SCEN the scenario's number in the file (0-based), the last pass's expansions, path
 * cells (info.cells), their quotient, T the fastest of the passes (us), line-of-sight checks,
 * neighbour entries, nodes reached, R 1 when the search ran from the goal's end (q->reversed), X 1
 * when it escalated (q->o.weight is the escalation's after it), Q the length ratio, S the endpoints'
 * straight distance over the optimum (`v MAP K SCEN failed` when not solved).
 * -F N: the timed passes' finalize runs in slices of at most N line-of-sight and turn checks
 * (on_query_finalize_step, each slice running the finalize again from its start with the answers the
 * ones before got) before on_query_finalize reads the result: the paths (-w) must be the whole
 * finalize's, byte for byte; finalize us then counts every slice.
 * Usage: query [-n SCENARIOS] [-s SEED] [-p PASSES] [-w PATHS] [-P | -L [N] | -A] [-R] [-F N] [-v] [-W] [-c] [MAP ...]
 */
#include "octonav.h"
#include "scen.h"
#include "celladj.h" /* (internal: the cell adjacencies' build time and bytes) */
#include "query.h"   /* (internal: -R sets q->no_reverse) */

#include <math.h>
#include <string.h>

/* bench.lua's generator (xorshift64*), so both benchmarks draw the same sample. */
typedef struct lua_rng {
    uint64_t s;
} lua_rng;

static void lrng_init(lua_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull | 1; }

/* 1..n */
static size_t lrng_pick(lua_rng *r, size_t n)
{
    uint64_t s = r->s;
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    r->s = s;
    double x = (double)((s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
    return (size_t)floor(x * (double)n) + 1;
}

/* -v: what one scenario's query did (the last pass). */
typedef struct vrec {
    size_t exp, cells, los, nb, nodes;
    int ok, rev, esc;
    double ratio, straight, us;
} vrec;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* bench.lua's percentile: the ceil(n p)-th smallest (1-based); the median is the ((n + 1) / 2)-th. */
static double pct(double *xs, size_t n, double p)
{
    if (!n) return 0;
    qsort(xs, n, sizeof *xs, cmp_double);
    size_t i = (size_t)ceil((double)n * p);
    if (i < 1) i = 1;
    if (i > n) i = n;
    return xs[i - 1];
}

static double median(double *xs, size_t n)
{
    if (!n) return 0;
    qsort(xs, n, sizeof *xs, cmp_double);
    return xs[(n + 1) / 2 - 1];
}

/* The measured call: query_ir.sh counts instructions inside it only, so that -c's warm-up pass (which
 * builds what the tree builds on its first use, e.g. line of sight's per-tile masks) is not counted;
 * the counted pass then runs on a new query object (its lookup cache empty, as in the first pass). */
__attribute__((noinline)) static on_status bench_find(on_query *q, const bench_scen *s, const on_query_opts *o,
                                                       double *pbuf, size_t cap, size_t *np, on_query_info *info)
{
    return on_query_find(q, s->a, s->b, o, pbuf, cap, np, info);
}

/* The timed passes' call: on_query_find's three steps, each timed (ph: seconds in init, the search and
 * finalize). The benchmark's maps are loaded whole, so a search never waits for a tile. */
static size_t fin_slice; /* -F N (0: the finalize whole) */

static on_status timed_find(on_query *q, const bench_scen *s, const on_query_opts *o, double *pbuf, size_t cap,
                            size_t *np, on_query_info *info, double ph[3])
{
    double t0 = bench_now();
    on_status st = on_query_init(q, s->a, s->b, o);
    double t1 = bench_now();
    if (st == ON_IN_PROGRESS) st = on_query_update(q, (size_t)-1, NULL);
    double t2 = bench_now();
    if (st == (ON_IN_PROGRESS | ON_LOADING)) {
        fprintf(stderr, "query: a search waited for a tile (the benchmark loads every tile)\n");
        exit(1);
    }
    if (fin_slice) {
        on_status f;
        size_t checks;
        while ((f = on_query_finalize_step(q, fin_slice, NULL, NULL, &checks)) == ON_IN_PROGRESS)
            if (checks != fin_slice) {
                fprintf(stderr, "query: a finalize slice made %zu checks, not %zu\n", checks, fin_slice);
                exit(1);
            }
        if (!on_ok(f)) {
            fprintf(stderr, "query: a finalize in slices failed (status %d)\n", (int)f);
            exit(1);
        }
    }
    st = on_query_finalize(q, pbuf, cap, np, info);
    double t3 = bench_now();
    ph[0] = t1 - t0;
    ph[1] = t2 - t1;
    ph[2] = t3 - t2;
    return st;
}

int main(int argc, char **argv)
{
    size_t limit = 300;
    unsigned long long seed = 1;
    int passes = 5, no_adj = 0, prepared = 0, count_only = 0, nmaps = 0, nland = 0, no_reverse = 0, verbose = 0, warm = 0;
    const char *maps[32], *paths_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) limit = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc) paths_file = argv[++i];
        else if (!strcmp(argv[i], "-P")) prepared = 1;
        else if (!strcmp(argv[i], "-c")) count_only = 1;
        else if (!strcmp(argv[i], "-R")) no_reverse = 1;
        else if (!strcmp(argv[i], "-A")) no_adj = 1;
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "-W")) warm = 1;
        else if (!strcmp(argv[i], "-F") && i + 1 < argc) fin_slice = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-L")) /* (N optional: 16) */
            nland = i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' ? atoi(argv[++i]) : 16;
        else if (argv[i][0] != '-' && nmaps < 32) maps[nmaps++] = argv[i];
        else {
            nmaps = -1;
            break;
        }
    }
    if (nmaps < 0 || limit < 1 || passes < 1 || nland < 0 || nland > 64 || ((nland || prepared) && no_adj) || (nland && prepared) || (warm && count_only) || (fin_slice && count_only)) {
        fprintf(stderr, "usage: query [-n SCENARIOS] [-s SEED] [-p PASSES] [-w PATHS] [-P | -L [N] | -A] [-R] [-F N] [-v] [-W] [-c] [MAP ...]\n");
        return 2;
    }
    if (!nmaps)
        for (; bench_maps[nmaps]; nmaps++) maps[nmaps] = bench_maps[nmaps];
    if (count_only) passes = 1;
    char lm_preset[32];
    snprintf(lm_preset, sizeof lm_preset, "landmarks %d", nland);
    FILE *pf = paths_file ? fopen(paths_file, "w") : NULL;
    if (paths_file && !pf) {
        fprintf(stderr, "query: cannot write %s\n", paths_file);
        return 1;
    }
    printf("| map | preset | scenarios | solved | segments valid | mean ratio | p99 ratio | max ratio | median us | p99 us "
           "| expansions / path cell | expansions | neighbours | nodes | los checks | turn checks | init us | search us | finalize us |\n"
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    int bad = 0;
    char prep_rows[4096]; /* -P: the prepared graphs' table, printed after the queries' (else the adjacencies') */
    size_t prep_len = 0;
    prep_rows[0] = 0;
    for (int m = 0; m < nmaps; m++) {
        char spath[520];
        on_voxmap vm;
        if (bench_open_map(maps[m], &vm, spath, sizeof spath)) continue;
        on_tree *t = NULL;
        on_grid *grid = NULL;
        if (!on_ok(on_tree_from_voxmap(&vm, 9, &t)) || !on_ok(on_grid_from_voxmap(&vm, &grid))) return 1;
        on_voxmap_free(&vm);
        size_t nscen;
        bench_scen *scen = bench_read_scen(spath, &nscen);
        if (!scen || !nscen) return 1;
        size_t *order = malloc(nscen * sizeof *order);
        if (!order) return 1;
        for (size_t i = 0; i < nscen; i++) order[i] = i;
        size_t n = nscen;
        if (limit < nscen) { /* bench.lua: seeded Fisher-Yates, then the first `limit` */
            lua_rng r;
            lrng_init(&r, seed);
            for (size_t i = nscen; i >= 2; i--) {
                size_t j = lrng_pick(&r, i);
                size_t tmp = order[i - 1];
                order[i - 1] = order[j - 1];
                order[j - 1] = tmp;
            }
            n = limit;
        }
        double prep_ms = 0, lm_ms = 0;
        size_t boxes = 0, box_bytes = 0, lm_bytes = 0, tree_bytes = 0;
        on_query_opts o;
        on_query_opts_default(&o);
        if (prepared) {
            double t0 = bench_now();
            if (!on_ok(on_tree_prepare(t, -1, &boxes))) return 1;
            prep_ms = (bench_now() - t0) * 1e3;
            on_tree_stats st;
            on_tree_stats_get(t, &st);
            box_bytes = st.box_bytes;
            o.weight = 1.2; /* octonav.presets.boxes */
        } else if (no_adj) {
            on_tree_set_adjacency(t, 0);
        } else {
            double t0 = bench_now();
            if (!on_ok(on_tree_adjacency_prepare(t, &box_bytes))) return 1;
            prep_ms = (bench_now() - t0) * 1e3;
            for (uint32_t i = 0; i < on_tree_tile_count(t); i++) {
                const on_celladj *a = on_tile_celladj(t, i);
                boxes += a ? a->ncell : 0; /* (free cells: a->n also counts the numbers of layer-1 nodes' blocked leaves) */
            }
            on_tree_stats st;
            on_tree_stats_get(t, &st);
            tree_bytes = st.bytes;
            if (nland) {
                t0 = bench_now();
                if (!on_ok(on_tree_landmarks_prepare(t, nland, &lm_bytes))) return 1;
                lm_ms = (bench_now() - t0) * 1e3;
            }
        }
        on_query *q = NULL;
        if (!on_ok(on_query_create(t, (size_t)1 << 20, &q))) return 1;
        q->no_reverse = no_reverse;
        size_t cap = 1 << 16;
        double *pbuf = malloc(cap * 3 * sizeof *pbuf), *best = malloc(n * sizeof *best);
        double *ratio = malloc(n * sizeof *ratio), *epc = malloc(n * sizeof *epc);
        double *phase[3] = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), malloc(n * sizeof(double))};
        vrec *vr = verbose ? calloc(n, sizeof *vr) : NULL;
        if (!pbuf || !best || !ratio || !epc || !phase[0] || !phase[1] || !phase[2] || (verbose && !vr)) return 1;
        size_t solved = 0, valid = 0, nr = 0;
        double sum_exp = 0, sum_nb = 0, sum_vis = 0, sum_los = 0, sum_turn = 0;
        if (count_only) { /* the warm-up pass (see bench_find), then a new query as the timed passes have */
            for (size_t k = 0; k < n; k++) {
                size_t np;
                on_query_info info;
                on_query_find(q, scen[order[k]].a, scen[order[k]].b, &o, pbuf, cap, &np, &info);
            }
            on_query_destroy(q);
            if (!on_ok(on_query_create(t, (size_t)1 << 20, &q))) return 1;
            q->no_reverse = no_reverse;
        }
        for (int p = 0; p < passes; p++) {
            for (size_t k = 0; k < n; k++) {
                const bench_scen *s = &scen[order[k]];
                size_t np = 0;
                on_query_info info;
                double ph[3] = {0, 0, 0};
                for (size_t z = 0; warm && z < 4; z++) /* -W: this one, then three others (see the top) */
                    timed_find(q, &scen[order[(k + 37 * z) % n]], &o, pbuf, cap, &np, &info, ph);
                on_status st = count_only ? bench_find(q, s, &o, pbuf, cap, &np, &info)
                                          : timed_find(q, s, &o, pbuf, cap, &np, &info, ph);
                double dt = ph[0] + ph[1] + ph[2];
                if (p == 0 || dt < best[k]) best[k] = dt;
                for (int z = 0; z < 3; z++)
                    if (p == 0 || ph[z] < phase[z][k]) phase[z][k] = ph[z];
                if (p != passes - 1) continue;
                int ok = on_ok(st) && np >= 2;
                if (vr) {
                    double d[3] = {s->a[0] - s->b[0], s->a[1] - s->b[1], s->a[2] - s->b[2]};
                    vr[k] = (vrec){info.expansions, info.cells, info.los, info.neighbors, info.visited, ok, q->reversed,
                                   q->o.weight != q->o0.weight, info.length / s->optimal,
                                   sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) / s->optimal, 0};
                }
                if (pf) {
                    fprintf(pf, "%zu %s %.6f", order[k], ok ? "found" : "failed", ok ? info.length : 0.0);
                    for (size_t i = 0; ok && i < np; i++)
                        fprintf(pf, " %.6f %.6f %.6f", pbuf[3 * i], pbuf[3 * i + 1], pbuf[3 * i + 2]);
                    fputc('\n', pf);
                }
                if (!ok) continue;
                solved++;
                int segs_ok = 1;
                for (size_t i = 0; i + 1 < np && segs_ok; i++)
                    segs_ok = on_ok(on_grid_visible(grid, pbuf + 3 * i, pbuf + 3 * i + 3));
                valid += (size_t)segs_ok;
                ratio[nr] = info.length / s->optimal;
                epc[nr++] = (double)info.expansions / (double)(info.cells ? info.cells : 1);
                sum_exp += (double)info.expansions;
                sum_nb += (double)info.neighbors;
                sum_vis += (double)info.visited;
                sum_los += (double)info.los;
                sum_turn += (double)info.turns;
            }
        }
        double mean = 0;
        for (size_t i = 0; i < nr; i++) mean += ratio[i];
        mean = nr ? mean / (double)nr : 0;
        double p99r = pct(ratio, nr, 0.99), maxr = pct(ratio, nr, 1.0);
        double med_epc = median(epc, nr);
        for (size_t k = 0; k < n; k++) best[k] *= 1e6;
        for (size_t k = 0; vr && k < n; k++) vr[k].us = best[k]; /* (before median and pct sort best) */
        double dn = nr ? (double)nr : 1;
        char mus[32], pus[32], phs[3][32];
        if (count_only) {
            snprintf(mus, sizeof mus, "-");
            snprintf(pus, sizeof pus, "-");
            for (int z = 0; z < 3; z++) snprintf(phs[z], sizeof phs[z], "-");
        } else {
            double med = median(best, n), p99 = pct(best, n, 0.99);
            snprintf(mus, sizeof mus, "%.1f", med);
            snprintf(pus, sizeof pus, "%.1f", p99);
            for (int z = 0; z < 3; z++) {
                for (size_t k = 0; k < n; k++) phase[z][k] *= 1e6;
                snprintf(phs[z], sizeof phs[z], "%.1f", median(phase[z], n));
            }
        }
        printf("| %s | %s | %zu | %zu | %zu | %.4f | %.4f | %.4f | %s | %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n",
               maps[m], prepared ? "boxes (prepared)" : nland ? lm_preset : "default", n, solved, valid, mean, p99r, maxr, mus, pus,
               med_epc, sum_exp / dn, sum_nb / dn, sum_vis / dn, sum_los / dn, sum_turn / dn, phs[0], phs[1], phs[2]);
        {
            int w = prepared ? snprintf(prep_rows + prep_len, sizeof prep_rows - prep_len, "| %s | %zu | %zu | %.1f |\n",
                                        maps[m], boxes, box_bytes, prep_ms)
                    : nland ? snprintf(prep_rows + prep_len, sizeof prep_rows - prep_len,
                                       "| %s | %zu | %zu | %.1f | %.1f | %d | %zu | %.1f | %.1f |\n", maps[m], boxes,
                                       box_bytes, boxes ? (double)box_bytes / (double)boxes : 0.0, prep_ms, nland,
                                       lm_bytes, boxes ? (double)lm_bytes / (double)boxes : 0.0, lm_ms)
                            : snprintf(prep_rows + prep_len, sizeof prep_rows - prep_len,
                                       "| %s | %zu | %zu | %.1f | %zu | %.2f | %.1f |\n", maps[m], boxes, box_bytes,
                                       boxes ? (double)box_bytes / (double)boxes : 0.0, tree_bytes,
                                       tree_bytes ? (double)box_bytes / (double)tree_bytes : 0.0, prep_ms);
            if (w > 0 && (size_t)w < sizeof prep_rows - prep_len) prep_len += (size_t)w;
        }
        for (size_t k = 0; vr && k < n; k++) {
            const vrec *v = &vr[k];
            if (!v->ok) printf("v %s %zu %zu failed\n", maps[m], k, order[k]);
            else
                printf("v %s %zu %zu exp %zu cells %zu epc %.2f us %.1f los %zu nb %zu nodes %zu rev %d esc %d ratio %.4f "
                       "straight %.4f\n",
                       maps[m], k, order[k], v->exp, v->cells, (double)v->exp / (double)(v->cells ? v->cells : 1), v->us,
                       v->los, v->nb, v->nodes, v->rev, v->esc, v->ratio, v->straight);
        }
        free(vr);
        fflush(stdout);
        bad |= solved != n || valid != solved;
        on_query_destroy(q);
        free(pbuf);
        free(best);
        free(ratio);
        free(epc);
        for (int z = 0; z < 3; z++) free(phase[z]);
        free(order);
        free(scen);
        on_grid_destroy(grid);
        on_tree_destroy(t);
    }
    if (prepared && prep_len) printf("\n| map | boxes | box bytes | prepare ms |\n|---|---:|---:|---:|\n%s", prep_rows);
    else if (nland && prep_len)
        printf("\n| map | free cells | cell adjacency bytes | bytes / cell | build ms | landmarks | landmark bytes | bytes / "
               "cell | landmarks ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n%s",
               prep_rows);
    else if (prep_len)
        printf("\n| map | free cells | cell adjacency bytes | bytes / cell | tree bytes | adjacency / tree | build ms "
               "|\n|---|---:|---:|---:|---:|---:|---:|\n%s",
               prep_rows);
    if (pf) fclose(pf);
    return bad;
}
