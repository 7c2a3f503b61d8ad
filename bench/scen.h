/*
 * scen.h -- what the C benchmark programs share: a Moving AI .3dscen reader (start and goal at voxel
 * centres), a seeded generator, a monotonic clock and the data directory (../shared/data/voxel,
 * absent maps skipped). Header-only, C and C++ alike; each benchmark is one program.
 */
#ifndef OCTONAV_BENCH_SCEN_H
#define OCTONAV_BENCH_SCEN_H

#include "octonav.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_VOXEL_DIR "../shared/data/voxel"

static const char *const bench_maps[] = {"Simple", "Complex", "A1", "A2",  "A3",  "A4",  "BC1",
                                         "DA1",    "DB1",     "DB2", "DC1", "EB1", "EC1", NULL};

typedef struct bench_scen {
    double a[3], b[3];
    double optimal;
} bench_scen;

/* The scenarios of a .3dscen file (malloc'd, *n of them), or NULL when it cannot be read. */
static inline bench_scen *bench_read_scen(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char line[512];
    size_t cap = 1024, k = 0;
    bench_scen *s = (bench_scen *)malloc(cap * sizeof *s);
    int lineno = 0;
    while (s && fgets(line, sizeof line, f)) {
        if (++lineno <= 2) continue; /* "version 1", the map's name */
        int v[6];
        double opt;
        if (sscanf(line, "%d %d %d %d %d %d %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &opt) != 7) continue;
        if (k == cap) {
            bench_scen *m = (bench_scen *)realloc(s, 2 * cap * sizeof *s);
            if (!m) break;
            s = m;
            cap *= 2;
        }
        for (int i = 0; i < 3; i++) {
            s[k].a[i] = v[i] + 0.5;
            s[k].b[i] = v[3 + i] + 0.5;
        }
        s[k++].optimal = opt;
    }
    fclose(f);
    *n = k;
    return s;
}

/* xorshift64: the same sequence on every run */
/* Reads map `name` of BENCH_VOXEL_DIR into *vm and puts its scenario file's path in spath (cap bytes);
 * 0 on success, -1 with a "skipped" line on stderr when the map cannot be read. */
static inline int bench_open_map(const char *name, on_voxmap *vm, char *spath, size_t cap)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s.3dmap", BENCH_VOXEL_DIR, name);
    snprintf(spath, cap, "%s.3dscen", path);
    if (!on_ok(on_voxmap_read(path, vm, err, sizeof err))) {
        fprintf(stderr, "%s: skipped (%s)\n", name, err);
        return -1;
    }
    return 0;
}

static inline double bench_rnd(unsigned long long *st)
{
    *st ^= *st << 13;
    *st ^= *st >> 7;
    *st ^= *st << 17;
    return (double)(*st >> 11) / 9007199254740992.0;
}

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The line-of-sight benchmark's segments (6 doubles each: a then b): odd ones a random scenario's
 * start -> goal, even ones between random free points of the W x H x D map (free in tree t). The same
 * seed gives the same segments in every program. */
static inline void bench_segments(const on_tree *t, int W, int H, int D, const bench_scen *scen, size_t ns, size_t nseg,
                           double *out)
{
    unsigned long long rs = 0x6A09E667F3BCC909ull;
    for (size_t i = 0; i < nseg; i++) {
        double *a = out + 6 * i, *b = a + 3;
        if (i % 2 == 1 && ns > 0) {
            const bench_scen *s = &scen[(size_t)(bench_rnd(&rs) * (double)ns)];
            for (int k = 0; k < 3; k++) {
                a[k] = s->a[k];
                b[k] = s->b[k];
            }
            continue;
        }
        for (int e = 0; e < 2; e++) {
            double *p = e ? b : a;
            for (;;) {
                on_cell c;
                p[0] = bench_rnd(&rs) * W;
                p[1] = bench_rnd(&rs) * H;
                p[2] = bench_rnd(&rs) * D;
                if (on_ok(on_tree_locate(t, p, &c))) break;
            }
        }
    }
}

#endif
