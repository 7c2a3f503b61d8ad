/*
 * proximity.c -- the proximity grid: the agents' centres hashed into cubic cells, sorted by bucket
 * (a counting sort, rebuilt every frame: no per-agent bookkeeping when agents move), and the k nearest
 * agents within a range of one agent, read from the buckets of the cells the range's box covers.
 * Buckets hold the slots in increasing order, and ties in distance are broken by slot: the answer
 * depends on the agents alone, never on the order of a hash.
 */
#include "crowd.h"

#include <stdlib.h>

static uint32_t bucket(int64_t x, int64_t y, int64_t z, uint32_t mask)
{
    uint64_t h = (uint64_t)x * 0x8da6b343u ^ (uint64_t)y * 0xd8163841u ^ (uint64_t)z * 0xcb1ab31fu;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (uint32_t)h & mask;
}

static int64_t cellof(double v, double cell) { return (int64_t)floor(v / cell); }

void on_proxgrid_free(on_proxgrid *g)
{
    free(g->start);
    free(g->items);
    g->start = NULL;
    g->items = NULL;
    g->cap_buckets = g->cap_items = 0;
}

int on_proxgrid_build(on_proxgrid *g, const on_agent *agents, uint32_t n, double cell)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < n; i++) live += agents[i].id != 0;
    uint32_t nb = 64;
    while (nb < 2 * live && nb < (1u << 30)) nb *= 2;
    if (g->cap_buckets < (size_t)nb + 1) {
        uint32_t *s = realloc(g->start, ((size_t)nb + 1) * sizeof *s);
        if (!s) return -1;
        g->start = s;
        g->cap_buckets = (size_t)nb + 1;
    }
    if (g->cap_items < (live ? live : 1)) {
        on_proxitem *it = realloc(g->items, (live ? live : 1) * sizeof *it);
        if (!it) return -1;
        g->items = it;
        g->cap_items = live ? live : 1;
    }
    g->nbuckets = nb;
    g->cell = cell;
    for (uint32_t b = 0; b <= nb; b++) g->start[b] = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!agents[i].id) continue;
        const on_agent *a = &agents[i];
        g->start[bucket(cellof(a->pos.x, cell), cellof(a->pos.y, cell), cellof(a->pos.z, cell), nb - 1) + 1]++;
    }
    for (uint32_t b = 0; b < nb; b++) g->start[b + 1] += g->start[b];
    /* place by a running cursor per bucket (start[b] advanced, then shifted back) */
    for (uint32_t i = 0; i < n; i++) {
        if (!agents[i].id) continue;
        const on_agent *a = &agents[i];
        on_proxitem it = {a->pos.x, a->pos.y, a->pos.z, cellof(a->pos.x, cell), cellof(a->pos.y, cell),
                          cellof(a->pos.z, cell), i};
        uint32_t b = bucket(it.cx, it.cy, it.cz, nb - 1);
        g->items[g->start[b]++] = it;
    }
    for (uint32_t b = nb; b > 0; b--) g->start[b] = g->start[b - 1];
    g->start[0] = 0;
    return 0;
}

int on_proxgrid_nearest(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, int k,
                        uint32_t *out)
{
    const on_agent *a = &agents[self];
    double dist[ON_CROWD_MAX_NEIGHBOURS];
    int m = 0;
    double r2 = range * range;
    int64_t lo[3] = {cellof(a->pos.x - range, g->cell), cellof(a->pos.y - range, g->cell),
                     cellof(a->pos.z - range, g->cell)};
    int64_t hi[3] = {cellof(a->pos.x + range, g->cell), cellof(a->pos.y + range, g->cell),
                     cellof(a->pos.z + range, g->cell)};
    uint32_t mask = g->nbuckets - 1;
    /* a range wider than the grid's buckets would visit a bucket twice: the caller's cell is the range */
    for (int64_t z = lo[2]; z <= hi[2]; z++)
        for (int64_t y = lo[1]; y <= hi[1]; y++)
            for (int64_t x = lo[0]; x <= hi[0]; x++) {
                uint32_t b = bucket(x, y, z, mask);
                for (uint32_t it = g->start[b]; it < g->start[b + 1]; it++) {
                    const on_proxitem *o = &g->items[it];
                    /* another cell hashed to this bucket: counted in its own cell only */
                    if (o->cx != x || o->cy != y || o->cz != z) continue;
                    uint32_t j = o->slot;
                    if (j == self) continue;
                    double dx = o->x - a->pos.x, dy = o->y - a->pos.y, dz = o->z - a->pos.z;
                    double d2 = dx * dx + dy * dy + dz * dz;
                    if (d2 > r2) continue;
                    if (m == k && (d2 > dist[m - 1] || (d2 == dist[m - 1] && j > out[m - 1]))) continue;
                    int q = m < k ? m++ : m - 1;
                    while (q > 0 && (dist[q - 1] > d2 || (dist[q - 1] == d2 && out[q - 1] > j))) {
                        dist[q] = dist[q - 1], out[q] = out[q - 1];
                        q--;
                    }
                    dist[q] = d2, out[q] = j;
                }
            }
    return m;
}
