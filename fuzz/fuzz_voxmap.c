/*
 * fuzz_voxmap.c -- libFuzzer target: .3dmap text (on_voxmap_parse), then on_voxmap_fit at the depth the
 * first byte picks, and a bake (on_tree_from_voxmap) of accepted maps of at most FUZZ_MAX_TILES tiles
 * (the map's bounds cost nothing since maps have no margin nodes, so any size up to that bakes
 * quickly). Properties: no crash, no over-read, a message for every refusal; after the bake every
 * voxel is blocked, and each face neighbour of a voxel (and the map's far corner) is free when it is
 * inside the map and not a voxel, blocked when it is outside the map but inside the tile grid.
 */
#include "octonav.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_TILES 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t key(const on_voxmap *m, int64_t x, int64_t y, int64_t z)
{
    return ((uint64_t)z * (uint64_t)m->h + (uint64_t)y) * (uint64_t)m->w + (uint64_t)x;
}

/* The cell at integer corner (x, y, z): blocked when it is a voxel or lies outside the map (inside the
 * tile grid: ext), free otherwise. */
static void probe(const on_tree *t, const on_voxmap *m, const uint64_t *keys, const int64_t ext[3], int64_t x,
                  int64_t y, int64_t z)
{
    if (x < 0 || y < 0 || z < 0 || x >= ext[0] || y >= ext[1] || z >= ext[2]) return;
    int inside = x < m->w && y < m->h && z < m->d;
    uint64_t k = inside ? key(m, x, y, z) : 0;
    int voxel = inside && m->count && bsearch(&k, keys, m->count, sizeof k, cmp_u64) != NULL;
    double p[3] = {(double)x + 0.5, (double)y + 0.5, (double)z + 0.5};
    on_cell c;
    on_status s = on_tree_locate(t, p, &c);
    if (inside && !voxel) {
        if (s != ON_SUCCESS) abort();
    } else if (s != (ON_FAILURE | ON_BLOCKED)) {
        abort();
    }
}

static void bake(const on_voxmap *m, int depth)
{
    int64_t n = (int64_t)1 << depth;
    int64_t ext[3] = {(m->w + n - 1) / n * n, (m->h + n - 1) / n * n, (m->d + n - 1) / n * n};
    if ((ext[0] / n) * (ext[1] / n) * (ext[2] / n) > FUZZ_MAX_TILES) return;
    on_tree *t;
    if (!on_ok(on_tree_from_voxmap(m, depth, &t))) abort();
    uint64_t *keys = malloc((m->count + 1) * sizeof *keys);
    if (!keys) abort();
    for (size_t i = 0; i < m->count; i++) keys[i] = key(m, m->xyz[3 * i], m->xyz[3 * i + 1], m->xyz[3 * i + 2]);
    qsort(keys, m->count, sizeof *keys, cmp_u64);
    static const int d6[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
    for (size_t i = 0; i < m->count; i++) {
        int64_t x = m->xyz[3 * i], y = m->xyz[3 * i + 1], z = m->xyz[3 * i + 2];
        probe(t, m, keys, ext, x, y, z);
        for (int f = 0; f < 6; f++) probe(t, m, keys, ext, x + d6[f][0], y + d6[f][1], z + d6[f][2]);
    }
    probe(t, m, keys, ext, m->w - 1, m->h - 1, m->d - 1);
    probe(t, m, keys, ext, m->w, m->h - 1, m->d - 1);
    probe(t, m, keys, ext, m->w - 1, m->h, m->d - 1);
    probe(t, m, keys, ext, m->w - 1, m->h - 1, m->d);
    probe(t, m, keys, ext, ext[0] - 1, ext[1] - 1, ext[2] - 1);
    free(keys);
    on_tree_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int depth = 1 + data[0] % ON_MAX_DEPTH;
    data++;
    size--;
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    on_voxmap m;
    char err[256];
    on_status s = on_voxmap_parse("fuzz.3dmap", text, size, &m, err, sizeof err);
    free(text);
    if (!on_ok(s)) {
        if (m.xyz || !err[0]) abort();
        return 0;
    }
    for (size_t i = 0; i < m.count; i++)
        if (m.xyz[3 * i] >= m.w || m.xyz[3 * i + 1] >= m.h || m.xyz[3 * i + 2] >= m.d) abort();
    s = on_voxmap_fit(&m, depth, err, sizeof err);
    if (on_failed(s) && !err[0]) abort();
    if (on_ok(s)) bake(&m, depth);
    on_voxmap_free(&m);
    return 0;
}
