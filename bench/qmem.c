/*
 * bench/qmem.c -- what a query object costs in memory: Q queries (default 100, a game's navigators)
 * at max_nodes M (default 65,536, the navigator's default) over one map's tree, each then running
 * S scenario searches (default 10, default options): resident bytes per query (the process's
 * resident set from /proc/self/statm, after the searches, minus before the queries; the tree is built
 * before) and address space per query, beside the searches' median and largest node counts.
 * Build and run: make bench-qmem
 * Usage: qmem [-q QUERIES] [-m MAX_NODES] [-s SEARCHES] [MAP ...]   (run from the project root)
 */
#include "octonav.h"
#include "scen.h"

#include <string.h>
#include <unistd.h>

/* Resident and total (address space) bytes of this process. */
static void mem_now(size_t *resident, size_t *total)
{
    *resident = *total = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return;
    unsigned long size = 0, res = 0;
    if (fscanf(f, "%lu %lu", &size, &res) == 2) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        *resident = res * page;
        *total = size * page;
    }
    fclose(f);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t nq = 100, max_nodes = 65536, ns_per = 10;
    int nmaps = 0;
    const char *maps[32];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q") && i + 1 < argc) nq = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-m") && i + 1 < argc) max_nodes = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) ns_per = (size_t)atol(argv[++i]);
        else if (nmaps < 32) maps[nmaps++] = argv[i];
    }
    if (!nmaps)
        for (; bench_maps[nmaps]; nmaps++) maps[nmaps] = bench_maps[nmaps];
    if (nq < 1 || max_nodes < 2 || ns_per < 1) {
        fprintf(stderr, "usage: qmem [-q QUERIES] [-m MAX_NODES] [-s SEARCHES] [MAP ...]\n");
        return 2;
    }
    printf("| map | queries | max_nodes | resident bytes / query | address space / query | nodes median / max |\n"
           "|---|---:|---:|---:|---:|---:|\n");
    for (int m = 0; m < nmaps; m++) {
        char spath[520];
        on_voxmap vm;
        if (bench_open_map(maps[m], &vm, spath, sizeof spath)) continue;
        on_tree *t = NULL;
        if (!on_ok(on_tree_from_voxmap(&vm, 9, &t))) return 1;
        on_voxmap_free(&vm);
        size_t nscen;
        bench_scen *scen = bench_read_scen(spath, &nscen);
        on_query **qs = calloc(nq, sizeof *qs);
        size_t *used = malloc(nq * ns_per * sizeof *used), nused = 0;
        double *pbuf = malloc(4096 * 3 * sizeof *pbuf);
        if (!scen || !nscen || !qs || !used || !pbuf) return 1;
        size_t r0, v0, r1, v1;
        mem_now(&r0, &v0);
        for (size_t i = 0; i < nq; i++)
            if (!on_ok(on_query_create(t, max_nodes, &qs[i]))) return 1;
        on_query_opts o;
        on_query_opts_default(&o);
        unsigned long long rs = 0x243F6A8885A308D3ull;
        for (size_t i = 0; i < nq; i++)
            for (size_t k = 0; k < ns_per; k++) {
                const bench_scen *s = &scen[(size_t)(bench_rnd(&rs) * (double)nscen)];
                size_t np;
                on_query_info info;
                on_query_find(qs[i], s->a, s->b, &o, pbuf, 4096, &np, &info);
                used[nused++] = info.visited;
            }
        mem_now(&r1, &v1);
        qsort(used, nused, sizeof *used, cmp_size);
        printf("| %s | %zu | %zu | %.0f | %.0f | %zu / %zu |\n", maps[m], nq, max_nodes,
               ((double)r1 - (double)r0) / (double)nq, ((double)v1 - (double)v0) / (double)nq, used[nused / 2],
               used[nused - 1]);
        fflush(stdout);
        for (size_t i = 0; i < nq; i++) on_query_destroy(qs[i]);
        free(qs);
        free(used);
        free(pbuf);
        free(scen);
        on_tree_destroy(t);
    }
    return 0;
}
