/*
 * bench/pathserver.c -- throughput of the path server against one thread, side by side in one run.
 *
 * For each Warframe map: N scenarios (a seeded sample, default 1,000) searched with the default
 * options by one query on the main thread, then by a path server with W workers (default 2: submit
 * all, update until all are back); P passes alternate the two (default 5) and the fastest of each is
 * kept, since the machine is shared. Both must report the same paths (found count and summed lengths
 * equal), or the program fails. CPU seconds (all threads) beside: on a machine other processes keep
 * busy, 2 workers cannot get 2 cores, and equal CPU seconds show the server itself costs nothing.
 * Usage: pathserver [-n QUERIES] [-p PASSES] [-w WORKERS] [MAP ...]   (run from the project root)
 */
#include "pathserver.h"
#include "scen.h"

#include <math.h>
#include <sys/resource.h>
#include <string.h>

#define MAX_NODES 262144

typedef struct tally {
    size_t found;
    double length;
} tally;

static void one_thread(on_query *q, const bench_scen *s, size_t n, tally *t)
{
    on_query_opts o;
    on_query_opts_default(&o);
    t->found = 0;
    t->length = 0;
    for (size_t i = 0; i < n; i++) {
        size_t np;
        on_query_info info;
        on_status st = on_query_find(q, s[i].a, s[i].b, &o, NULL, 0, &np, &info);
        if (np > 0 && ((st & ON_BUFFER_SMALL) || on_ok(st))) {
            t->found++;
            t->length += info.length;
        }
    }
}

/* The path server over the same requests (ids count on across passes: id - 1 mod n is the request);
 * lengths summed in request order so the sum compares exactly with one_thread's. */
static int served(on_pathserver *ps, const bench_scen *s, size_t n, double *len_by_id, tally *t)
{
    for (size_t i = 0; i < n; i++)
        if (!on_ok(on_pathserver_submit(ps, s[i].a, s[i].b, NULL, NULL))) return -1;
    size_t got = 0;
    t->found = 0;
    t->length = 0;
    while (got < n) {
        const on_path_result *r;
        size_t k;
        if (!on_ok(on_pathserver_update(ps, 1, &r, &k))) return -1;
        for (size_t i = 0; i < k; i++) {
            len_by_id[(r[i].id - 1) % n] = on_ok(r[i].status) ? r[i].info.length : -1;
        }
        got += k;
    }
    for (size_t i = 0; i < n; i++)
        if (len_by_id[i] >= 0) {
            t->found++;
            t->length += len_by_id[i];
        }
    return 0;
}

/* CPU seconds of the whole process (every thread), to tell a busy machine from overhead. */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    size_t nq = 1000;
    int passes = 5, workers = 2, nmaps = 0;
    const char *maps[32];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) nq = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-p") && i + 1 < argc) passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc) workers = atoi(argv[++i]);
        else if (nmaps < 32) maps[nmaps++] = argv[i];
    }
    if (!nmaps)
        for (; bench_maps[nmaps]; nmaps++) maps[nmaps] = bench_maps[nmaps];
    if (nq < 1 || passes < 1 || workers < 1) {
        fprintf(stderr, "usage: pathserver [-n QUERIES] [-p PASSES] [-w WORKERS] [MAP ...]\n");
        return 2;
    }
    printf("| map | queries | 1 thread s | %d workers s | speedup | queries/s (%d workers) | CPU s 1 thread / %d "
           "workers |\n", workers, workers, workers);
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    double tot1 = 0, totw = 0;
    int bad = 0;
    for (int m = 0; m < nmaps; m++) {
        char spath[520];
        on_voxmap vm;
        if (bench_open_map(maps[m], &vm, spath, sizeof spath)) continue;
        on_tree *t = NULL;
        on_status st = on_tree_from_voxmap(&vm, 9, &t);
        on_voxmap_free(&vm);
        size_t ns;
        bench_scen *all = bench_read_scen(spath, &ns);
        if (!on_ok(st) || !all || ns == 0) {
            fprintf(stderr, "%s: skipped (cannot load)\n", maps[m]);
            free(all);
            on_tree_destroy(t);
            continue;
        }
        unsigned long long rs = 0x243F6A8885A308D3ull;
        for (size_t i = ns; i > 1; i--) { /* seeded Fisher-Yates; the first n are the sample */
            size_t j = (size_t)(bench_rnd(&rs) * (double)i);
            bench_scen x = all[i - 1];
            all[i - 1] = all[j];
            all[j] = x;
        }
        size_t n = nq;
        bench_scen *s = malloc(n * sizeof *s);
        double *lens = malloc(n * sizeof *lens);
        for (size_t i = 0; i < n; i++) s[i] = all[i % ns]; /* maps with fewer scenarios repeat them */
        on_query *q = NULL;
        on_pathserver *ps = NULL;
        on_pathserver_params pp = {workers, MAX_NODES, 0};
        if (!s || !lens || !on_ok(on_query_create(t, MAX_NODES, &q)) || !on_ok(on_pathserver_create(t, &pp, &ps))) {
            fprintf(stderr, "%s: out of memory\n", maps[m]);
            return 1;
        }
        double best1 = 1e30, bestw = 1e30, cpu1 = 1e30, cpuw = 1e30;
        tally a, b;
        for (int p = 0; p < passes; p++) {
            double c0 = cpu_now(), t0 = bench_now();
            one_thread(q, s, n, &a);
            double c1 = cpu_now(), t1 = bench_now();
            if (served(ps, s, n, lens, &b) != 0) {
                fprintf(stderr, "%s: path server failed\n", maps[m]);
                return 1;
            }
            double c2 = cpu_now(), t2 = bench_now();
            if (c1 - c0 < cpu1) cpu1 = c1 - c0;
            if (c2 - c1 < cpuw) cpuw = c2 - c1;
            if (t1 - t0 < best1) best1 = t1 - t0;
            if (t2 - t1 < bestw) bestw = t2 - t1;
            if (a.found != b.found || fabs(a.length - b.length) > 1e-6 * a.length) {
                fprintf(stderr, "%s: results differ (%zu vs %zu found, length %.6f vs %.6f)\n", maps[m], a.found,
                        b.found, a.length, b.length);
                bad = 1;
            }
        }
        printf("| %s | %zu | %.4f | %.4f | %.2f | %.0f | %.3f / %.3f |\n", maps[m], n, best1, bestw, best1 / bestw,
               (double)n / bestw, cpu1, cpuw);
        fflush(stdout);
        tot1 += best1;
        totw += bestw;
        on_pathserver_destroy(ps);
        on_query_destroy(q);
        on_tree_destroy(t);
        free(lens);
        free(s);
        free(all);
    }
    if (totw > 0) printf("| all | | %.4f | %.4f | %.2f | | |\n", tot1, totw, tot1 / totw);
    return bad;
}
