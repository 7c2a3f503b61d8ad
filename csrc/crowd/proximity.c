/*
 * proximity.c -- the proximity grid: the agents' centres hashed into cubic cells, sorted by bucket
 * (a counting sort, rebuilt every frame: no per-agent bookkeeping when agents move, no allocation once
 * the arrays have grown to the crowd), and the k nearest agents within a range of one agent.
 *
 * A cell's edge is the widest range searched, so a search covers 3 x 3 x 3 cells (cells of half or
 * two thirds of it cost more in cells visited than they save in agents read: 1,000 agents of
 * bench/crowd.c, 5.9 k instructions a search, 7.8 k with half, 6.2 k with two thirds). It visits
 * them nearest first along each axis and stops along an axis as soon as a cell's nearest point lies
 * beyond the k-th nearest agent found so far (or the range): once k are found, only the cells that can
 * still hold a nearer one are read. Each bucket records the one cell its items lie in (or that they
 * lie in several): a bucket of the cell searched is read with no test but the distance, a bucket of
 * another cell is skipped whole. The k nearest are kept by insertion into a sorted array of k.
 * Ties in distance are broken by slot: the answer depends on the agents alone, never on the order of
 * a hash or of the cells visited.
 */
#include "crowd.h"

#include <stdlib.h>

#define PROX_CELLS_PER_RANGE 1.0 /* a cell's edge: the widest range / this */
#define PROX_MAX_SPAN 64       /* cells along one axis a search may visit (a range beyond: clamped) */

static uint32_t bucket(int64_t x, int64_t y, int64_t z, uint32_t mask)
{
    uint64_t h = (uint64_t)x * 0x8da6b343u ^ (uint64_t)y * 0xd8163841u ^ (uint64_t)z * 0xcb1ab31fu;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (uint32_t)h & mask;
}

/* A cell's key: 21 bits of each coordinate. Two cells with the same key lie 2^21 cells apart on some
 * axis, far beyond any search's range, so an agent read through the other's key fails the distance
 * test, and a search never meets both (its cells lie within PROX_MAX_SPAN of each other). */
static uint64_t cellkey(int64_t x, int64_t y, int64_t z)
{
    const uint64_t m = (1u << 21) - 1;
    return ((uint64_t)x & m) | ((uint64_t)y & m) << 21 | ((uint64_t)z & m) << 42;
}

static int64_t cellof(double v, double cell)
{
    double c = floor(v / cell);
    /* (positions are finite and within the tree; a cell this many times smaller than them is not) */
    return c < -4e18 ? (int64_t)-4e18 : c > 4e18 ? (int64_t)4e18 : (int64_t)c;
}

void on_proxgrid_free(on_proxgrid *g)
{
    free(g->start);
    free(g->bkey);
    free(g->items);
    free(g->keys);
    free(g->tmp);
    g->start = NULL;
    g->bkey = NULL;
    g->items = NULL;
    g->keys = NULL;
    g->tmp = NULL;
    g->cap_buckets = g->cap_items = 0;
}

size_t on_proxgrid_bytes(const on_proxgrid *g)
{
    return g->cap_buckets * (sizeof *g->start + sizeof *g->bkey) +
           g->cap_items * (sizeof *g->items + sizeof *g->keys + sizeof *g->tmp);
}

int on_proxgrid_build(on_proxgrid *g, const on_agent *agents, uint32_t n, double range)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < n; i++) live += agents[i].id != 0;
    uint32_t nb = 64;
    while (nb < 2 * live && nb < (1u << 30)) nb *= 2;
    if (g->cap_buckets < (size_t)nb + 1) {
        uint32_t *s = realloc(g->start, ((size_t)nb + 1) * sizeof *s);
        if (s) g->start = s;
        uint64_t *k = realloc(g->bkey, ((size_t)nb + 1) * sizeof *k);
        if (k) g->bkey = k;
        if (!s || !k) return -1;
        g->cap_buckets = (size_t)nb + 1;
    }
    size_t ni = live ? live : 1;
    if (g->cap_items < ni) {
        on_proxitem *it = realloc(g->items, ni * sizeof *it);
        if (it) g->items = it;
        uint64_t *k = realloc(g->keys, ni * sizeof *k);
        if (k) g->keys = k;
        uint32_t *t = realloc(g->tmp, ni * sizeof *t);
        if (t) g->tmp = t;
        if (!it || !k || !t) return -1;
        g->cap_items = ni;
    }
    double cell = range / PROX_CELLS_PER_RANGE;
    g->nbuckets = nb;
    g->cell = cell;
    uint32_t mask = nb - 1;
    for (uint32_t b = 0; b <= nb; b++) g->start[b] = 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const on_agent *a = &agents[i];
        if (!a->id) continue;
        uint32_t b = bucket(cellof(a->pos.x, cell), cellof(a->pos.y, cell), cellof(a->pos.z, cell), mask);
        g->tmp[k++] = b;
        g->start[b + 1]++;
    }
    for (uint32_t b = 0; b < nb; b++) g->start[b + 1] += g->start[b];
    /* place by a running cursor per bucket (start[b] advanced, then shifted back); slots ascend in a bucket */
    k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const on_agent *a = &agents[i];
        if (!a->id) continue;
        uint32_t b = g->tmp[k++];
        uint32_t at = g->start[b]++;
        on_proxitem it = {a->pos.x, a->pos.y, a->pos.z, i, 0};
        g->items[at] = it;
        g->keys[at] = cellkey(cellof(a->pos.x, cell), cellof(a->pos.y, cell), cellof(a->pos.z, cell));
    }
    for (uint32_t b = nb; b > 0; b--) g->start[b] = g->start[b - 1];
    g->start[0] = 0;
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t s = g->start[b], e = g->start[b + 1];
        if (s == e) continue;
        uint64_t key = g->keys[s];
        for (uint32_t it = s + 1; it < e && key != ON_PROX_MIXED; it++)
            if (g->keys[it] != key) key = ON_PROX_MIXED;
        g->bkey[b] = key;
    }
    return 0;
}

/* The cells lo..hi along one axis, nearest to coordinate v first, with the squared distance from v to
 * each (made a little smaller: a lower bound whatever the rounding of v / cell): their count. */
static int axis_order(double v, double cell, int64_t lo, int64_t hi, int64_t *c, double *g2)
{
    if (hi - lo >= PROX_MAX_SPAN) {
        int64_t mid = cellof(v, cell);
        lo = lo > mid - PROX_MAX_SPAN / 2 + 1 ? lo : mid - PROX_MAX_SPAN / 2 + 1;
        hi = lo + PROX_MAX_SPAN - 1;
    }
    int n = 0;
    double slack = 1e-9 * cell + 1e-12 * fabs(v);
    for (int64_t x = lo; x <= hi; x++) {
        double a = (double)x * cell - v, b = v - (double)(x + 1) * cell;
        double gap = a > b ? a : b;
        gap -= slack;
        gap = gap > 0 ? gap * gap : 0;
        int q = n++;
        while (q > 0 && g2[q - 1] > gap) {
            g2[q] = g2[q - 1], c[q] = c[q - 1];
            q--;
        }
        g2[q] = gap, c[q] = x;
    }
    return n;
}

/* The search: the up to k nearest within range whose squared distance is at most bound. */
static int nearest_within(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, double bound,
                          int k, uint32_t *out)
{
    const on_agent *a = &agents[self];
    const double px = a->pos.x, py = a->pos.y, pz = a->pos.z, cell = g->cell;
    double dist[ON_CROWD_MAX_NEIGHBOURS];
    int m = 0;
    /* bound: an agent farther than this cannot enter (the range or the hint, then the k-th) */
    int64_t cx[PROX_MAX_SPAN], cy[PROX_MAX_SPAN], cz[PROX_MAX_SPAN];
    double gx[PROX_MAX_SPAN], gy[PROX_MAX_SPAN], gz[PROX_MAX_SPAN];
    /* the cells within the bound's distance (a little more: rounding), never beyond the range's */
    double r = sqrt(bound) * (1 + 1e-9) + 1e-12 * cell;
    r = r < range ? r : range;
    int nx = axis_order(px, cell, cellof(px - r, cell), cellof(px + r, cell), cx, gx);
    int ny = axis_order(py, cell, cellof(py - r, cell), cellof(py + r, cell), cy, gy);
    int nz = axis_order(pz, cell, cellof(pz - r, cell), cellof(pz + r, cell), cz, gz);
    uint32_t mask = g->nbuckets - 1;
    for (int iz = 0; iz < nz && gz[iz] <= bound; iz++)
        for (int iy = 0; iy < ny && gz[iz] + gy[iy] <= bound; iy++)
            for (int ix = 0; ix < nx && gz[iz] + gy[iy] + gx[ix] <= bound; ix++) {
                uint32_t b = bucket(cx[ix], cy[iy], cz[iz], mask);
                uint32_t s = g->start[b], e = g->start[b + 1];
                if (s == e) continue;
                uint64_t key = cellkey(cx[ix], cy[iy], cz[iz]);
                int mixed = g->bkey[b] == ON_PROX_MIXED;
                if (!mixed && g->bkey[b] != key) continue; /* another cell's bucket */
                for (uint32_t it = s; it < e; it++) {
                    const on_proxitem *o = &g->items[it];
                    double dx = o->x - px, dy = o->y - py, dz = o->z - pz;
                    double d2 = dx * dx + dy * dy + dz * dz;
                    if (d2 > bound) continue;
                    uint32_t j = o->slot;
                    if (j == self || (mixed && g->keys[it] != key)) continue;
                    int q;
                    if (m == k) {
                        if (d2 == dist[m - 1] && j > out[m - 1]) continue;
                        q = m - 1;
                    } else
                        q = m++;
                    while (q > 0 && (dist[q - 1] > d2 || (dist[q - 1] == d2 && out[q - 1] > j))) {
                        dist[q] = dist[q - 1], out[q] = out[q - 1];
                        q--;
                    }
                    dist[q] = d2, out[q] = j;
                    if (m == k) bound = dist[m - 1];
                }
            }
    return m;
}

int on_proxgrid_nearest(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, int k,
                        uint32_t *out)
{
    const on_agent *a = &agents[self];
    double full = range * range;
    /* The last frame's k neighbours, where they are now: k live agents lie within the farthest of
     * them, so the k nearest do too, and the search starts with that bound instead of the range's
     * (fewer cells read, fewer agents sorted in; the answer is the same). out may be a->nbr itself:
     * read whole before the search writes it. */
    if (a->nnbr == k) {
        double hint = 0;
        int ok = 1;
        for (int i = 0; i < k; i++) {
            uint32_t j = a->nbr[i];
            const on_agent *o = &agents[j];
            if (j == self || !o->id) {
                ok = 0;
                break;
            }
            double dx = o->pos.x - a->pos.x, dy = o->pos.y - a->pos.y, dz = o->pos.z - a->pos.z;
            double d2 = dx * dx + dy * dy + dz * dz;
            hint = d2 > hint ? d2 : hint;
        }
        if (ok && hint < full) {
            int m = nearest_within(g, agents, self, range, hint, k, out);
            if (m == k) return m; /* (else a rounding apart: the whole range) */
        }
    }
    return nearest_within(g, agents, self, range, full, k, out);
}
