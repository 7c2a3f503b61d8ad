/*
 * proximity.c -- the proximity grid: the agents' centres hashed into rows (a row: the agents whose y
 * and z fall in one square cell, along the whole x axis), sorted by bucket (a counting sort, rebuilt
 * every frame: no per-agent bookkeeping when agents move, no allocation once the arrays have grown to
 * the crowd) and by x within a bucket, and the k nearest agents within a range of one agent.
 *
 * A row's cross-section is the widest range searched. A search visits the rows nearest first along z
 * and y and stops along an axis as soon as a row's nearest point lies beyond the k-th nearest agent
 * found so far (or the range, or the last frame's k-th: on_proxgrid_nearest); in a row it reads only
 * the agents whose x lies within what the bound leaves after the row's distance, found by bisection.
 * (1,000 agents of bench/crowd.c: 3.3 k instructions a search against 4.5 k for cubic cells of the
 * range read whole; rows of a half, a third, a quarter of the range cost 0.3 k, 1.3 k, 2.6 k more in
 * rows visited than they save in agents read.) Each bucket
 * records the one row its items lie in (or that they lie in several): a bucket of the row searched is
 * read with no test but the distance, a bucket of another row is skipped whole. The k nearest are kept
 * by insertion into a sorted array of k. Ties in distance are broken by slot: the answer depends on
 * the agents alone, never on the order of a hash or of the rows visited.
 */
#include "crowd.h"

#include <stdlib.h>
#include <string.h>

#define PROX_ROWS_PER_RANGE 1.0 /* a row's cross-section edge: the widest range / this */
#define PROX_MAX_SPAN 64       /* rows along y or z a search may visit (a range beyond: clamped) */
#define PROX_CAND 64           /* a candidate list's slots */
#define PROX_SKIN 0.25      /* a list reaches this much beyond the bound it was made for (relative) */

/* An agent's candidate list: every live agent whose centre lay within r of its own when it was made
 * (at the grid's travel `at`, in the grid's epoch); cand[PROX_CAND * slot ..] holds their n slots. */
struct on_proxlist {
    double r, at;
    uint64_t epoch;
    int n;
};

static uint32_t bucket(int64_t y, int64_t z, uint32_t mask)
{
    uint64_t h = (uint64_t)y * 0xd8163841u ^ (uint64_t)z * 0xcb1ab31fu;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (uint32_t)h & mask;
}

/* A row's key: 16 bits of each coordinate. Two rows with the same key lie 2^16 rows apart on y or z,
 * far beyond any search's range, so an agent read through the other's key fails the distance test,
 * and a search never meets both (its rows lie within PROX_MAX_SPAN of each other). Never ON_PROX_MIXED. */
static uint32_t rowkey(int64_t y, int64_t z)
{
    return (uint32_t)((uint64_t)y & 0xffffu) | (uint32_t)((uint64_t)z & 0xffffu) << 16;
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
    free(g->tmp);
    free(g->tmprow);
    g->tmprow = NULL;
    free(g->last);
    free(g->last_id);
    free(g->nlast);
    free(g->nlast_id);
    g->nlast = NULL;
    g->nlast_id = NULL;
    free(g->cand);
    free(g->lists);
    free(g->order);
    g->order = NULL;
    g->norder = 0;
    g->last = NULL;
    g->last_id = NULL;
    g->cand = NULL;
    g->lists = NULL;
    g->cap_slots = 0;
    g->start = NULL;
    g->bkey = NULL;
    g->items = NULL;
    g->tmp = NULL;
    g->cap_buckets = g->cap_items = 0;
}

size_t on_proxgrid_bytes(const on_proxgrid *g)
{
    return g->cap_buckets * (sizeof *g->start + sizeof *g->bkey) +
           g->cap_items * (sizeof *g->items + sizeof *g->tmp + sizeof *g->tmprow) +
           g->cap_slots * (6 * sizeof *g->last + 2 * sizeof *g->last_id + PROX_CAND * sizeof *g->cand + sizeof *g->lists +
                          sizeof *g->order);
}

/* The live slots by x, then slot (g->order): each bucket filled in that order is sorted by x (ties
 * by slot) as it is filled, with no sort of its own. Kept from build to build: agents move little in a
 * frame, so an insertion sort of last build's order costs little more than one pass (1,000 agents of
 * bench/crowd.c: the builds' heap sorts of their buckets cost 24 M instructions in 160 frames); made
 * anew by a heap sort when an agent appeared or went. */
static int before(const double *last, uint32_t a, uint32_t b)
{
    double xa = last[3 * (size_t)a], xb = last[3 * (size_t)b];
    return xa < xb || (xa == xb && a < b);
}

static void sift(const double *last, uint32_t *o, uint32_t root, uint32_t n)
{
    uint32_t x = o[root];
    for (;;) {
        uint32_t c = 2 * root + 1;
        if (c >= n) break;
        if (c + 1 < n && before(last, o[c], o[c + 1])) c++;
        if (!before(last, x, o[c])) break;
        o[root] = o[c];
        root = c;
    }
    o[root] = x;
}

static void sort_order(on_proxgrid *g, uint32_t n, uint32_t live, int changed)
{
    const double *last = g->last;
    uint32_t *o = g->order;
    if (changed || g->norder != live) {
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (g->last_id[i]) o[k++] = i;
        g->norder = k;
        for (uint32_t i = k / 2; i-- > 0;) sift(last, o, i, k);
        for (uint32_t e = k; e-- > 1;) {
            uint32_t x = o[0];
            o[0] = o[e];
            o[e] = x;
            sift(last, o, 0, e);
        }
        return;
    }
    for (uint32_t i = 1; i < live; i++) {
        uint32_t x = o[i], q = i;
        while (q > 0 && before(last, x, o[q - 1])) {
            o[q] = o[q - 1];
            q--;
        }
        o[q] = x;
    }
}

int on_proxgrid_reserve(on_proxgrid *g, uint32_t n)
{
    if (n && g->cap_slots < n) {
        double *l = realloc(g->last, (size_t)n * 3 * sizeof *l);
        if (l) g->last = l;
        uint32_t *li = realloc(g->last_id, (size_t)n * sizeof *li);
        if (li) g->last_id = li;
        double *nl = realloc(g->nlast, (size_t)n * 3 * sizeof *nl);
        if (nl) g->nlast = nl;
        uint32_t *nli = realloc(g->nlast_id, (size_t)n * sizeof *nli);
        if (nli) g->nlast_id = nli;
        uint32_t *ca = realloc(g->cand, (size_t)n * PROX_CAND * sizeof *ca);
        if (ca) g->cand = ca;
        struct on_proxlist *ls = realloc(g->lists, (size_t)n * sizeof *ls);
        if (ls) g->lists = ls;
        uint32_t *od = realloc(g->order, (size_t)n * sizeof *od);
        if (od) g->order = od;
        if (!l || !li || !nl || !nli || !ca || !ls || !od) return -1;
        g->norder = 0; /* (made anew by the build) */
        for (size_t i = g->cap_slots; i < n; i++) {
            g->last_id[i] = 0;
            g->last[3 * i] = g->last[3 * i + 1] = g->last[3 * i + 2] = 0; /* (read by on_proxgrid_track's compare) */
            g->nlast_id[i] = 0;
            g->nlast[3 * i] = g->nlast[3 * i + 1] = g->nlast[3 * i + 2] = 0;
            g->lists[i].epoch = 0, g->lists[i].n = 0, g->lists[i].r = g->lists[i].at = 0;
        }
        g->cap_slots = n;
    }
    return 0;
}

/* How far the farthest moved since the last build; an agent new in its slot (or back) makes every
 * list older than it incomplete. Compared with the last build's copies (last, last_id), stored into
 * dl / did: the grid's own copies (on_proxgrid_track) or the next ones taken ahead (nlast, nlast_id:
 * on_proxgrid_track_next, where a free slot keeps its last position, as track leaves it). A copy is
 * stored only where it changed (a line written is one the other cores read again). */
static inline void track_into(on_proxgrid *g, const on_agent *agents, uint32_t begin, uint32_t end, on_proxtrack *tr,
                              double *dl, uint32_t *did)
{
    double step = tr->step;
    uint32_t live = 0;
    int fresh = 0, gone = 0;
    for (uint32_t i = begin; i < end; i++) {
        const on_agent *a = &agents[i];
        const double *l = g->last + 3 * (size_t)i;
        double *d = dl + 3 * (size_t)i;
        if (a->id && a->id == g->last_id[i]) {
            double dx = a->pos.x - l[0], dy = a->pos.y - l[1], dz = a->pos.z - l[2];
            double d2 = dx * dx + dy * dy + dz * dz;
            step = d2 > step ? d2 : step;
        } else if (a->id)
            fresh = 1;
        else if (g->last_id[i])
            gone = 1;
        if (did[i] != a->id) did[i] = a->id;
        if (a->id) {
            live++;
            if (memcmp(d, &a->pos, 3 * sizeof *d) != 0)
                d[0] = a->pos.x, d[1] = a->pos.y, d[2] = a->pos.z;
        } else if (d != l && memcmp(d, l, 3 * sizeof *d) != 0)
            d[0] = l[0], d[1] = l[1], d[2] = l[2];
    }
    tr->step = step;
    tr->live += live;
    tr->fresh |= fresh;
    tr->gone |= gone;
}

void on_proxgrid_track(on_proxgrid *g, const on_agent *agents, uint32_t begin, uint32_t end, on_proxtrack *tr)
{
    track_into(g, agents, begin, end, tr, g->last, g->last_id);
}

void on_proxgrid_track_next(on_proxgrid *g, const on_agent *agents, uint32_t begin, uint32_t end, on_proxtrack *tr)
{
    track_into(g, agents, begin, end, tr, g->nlast, g->nlast_id);
}

void on_proxgrid_swap(on_proxgrid *g)
{
    double *l = g->last;
    uint32_t *li = g->last_id;
    g->last = g->nlast, g->last_id = g->nlast_id;
    g->nlast = l, g->nlast_id = li;
}

int on_proxgrid_build(on_proxgrid *g, const on_agent *agents, uint32_t n, double range)
{
    if (on_proxgrid_reserve(g, n) < 0) return -1;
    on_proxtrack tr = {0, 0, 0, 0};
    on_proxgrid_track(g, agents, 0, n, &tr);
    return on_proxgrid_build_tracked(g, n, range, &tr);
}

int on_proxgrid_build_tracked(on_proxgrid *g, uint32_t n, double range, const on_proxtrack *tr)
{
    uint32_t live = tr->live;
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
        uint32_t *t = realloc(g->tmp, ni * sizeof *t);
        if (t) g->tmp = t;
        uint32_t *tr2 = realloc(g->tmprow, ni * sizeof *tr2);
        if (tr2) g->tmprow = tr2;
        if (!it || !t || !tr2) return -1;
        g->cap_items = ni;
    }
    g->travel += sqrt(tr->step);
    if (tr->fresh || !g->epoch) g->epoch++;
    if (n) sort_order(g, n, live, tr->fresh || tr->gone);
    double cell = range / PROX_ROWS_PER_RANGE;
    g->nbuckets = nb;
    g->cell = cell;
    uint32_t mask = nb - 1;
    /* a counting sort: each bucket's count in start[b] and its row key (the row its items share, or
     * ON_PROX_MIXED) as they are counted; start[b] then the end of bucket b, and the items placed from
     * the last down (start[b] moved back to the bucket's first item), so that each bucket holds its
     * items in g->order's order, sorted. (An empty bucket's key is never read: its start equals its
     * end.) No pass over the buckets but the sums: nb is twice the agents or more. */
    memset(g->start, 0, ((size_t)nb + 1) * sizeof *g->start);
    for (uint32_t k = 0; k < live; k++) {
        const double *l = g->last + 3 * (size_t)g->order[k]; /* (its position, copied above) */
        int64_t cy = cellof(l[1], cell), cz = cellof(l[2], cell);
        uint32_t b = bucket(cy, cz, mask), row = rowkey(cy, cz);
        g->tmp[k] = b;
        g->tmprow[k] = row;
        if (g->start[b]++ == 0) g->bkey[b] = row;
        else if (g->bkey[b] != row) g->bkey[b] = ON_PROX_MIXED;
    }
    for (uint32_t b = 1; b < nb; b++) g->start[b] += g->start[b - 1];
    g->start[nb] = live;
    for (uint32_t k = live; k-- > 0;) {
        uint32_t i = g->order[k];
        const double *l = g->last + 3 * (size_t)i;
        uint32_t at = --g->start[g->tmp[k]];
        on_proxitem it = {l[0], l[1], l[2], i, g->tmprow[k]};
        g->items[at] = it;
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

/* The search: the up to k nearest within range whose squared distance is at most bound. The rows
 * (y, z) within the bound, nearest first; in each, the items whose x lies within the bound left
 * after the row's distance (found by bisection: a bucket's items are sorted by x). */
static int nearest_within(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, double bound,
                          int k, uint32_t *out)
{
    const on_agent *a = &agents[self];
    const double px = a->pos.x, py = a->pos.y, pz = a->pos.z, cell = g->cell;
    const on_proxitem *items = g->items;
    double dist[ON_CROWD_MAX_NEIGHBOURS];
    int m = 0;
    /* bound: an agent farther than this cannot enter (the range or the hint, then the k-th) */
    int64_t cy[PROX_MAX_SPAN], cz[PROX_MAX_SPAN];
    double gy[PROX_MAX_SPAN], gz[PROX_MAX_SPAN];
    /* the rows within the bound's distance (a little more: rounding), never beyond the range's */
    double r = sqrt(bound) * (1 + 1e-9) + 1e-12 * cell;
    r = r < range ? r : range;
    int ny = axis_order(py, cell, cellof(py - r, cell), cellof(py + r, cell), cy, gy);
    int nz = axis_order(pz, cell, cellof(pz - r, cell), cellof(pz + r, cell), cz, gz);
    uint32_t mask = g->nbuckets - 1;
    double xslack = 1e-9 * cell + 1e-12 * fabs(px);
    for (int iz = 0; iz < nz && gz[iz] <= bound; iz++)
        for (int iy = 0; iy < ny && gz[iz] + gy[iy] <= bound; iy++) {
            uint32_t b = bucket(cy[iy], cz[iz], mask);
            uint32_t s = g->start[b], e = g->start[b + 1];
            if (s == e) continue;
            uint32_t key = rowkey(cy[iy], cz[iz]);
            int mixed = g->bkey[b] == ON_PROX_MIXED;
            if (!mixed && g->bkey[b] != key) continue; /* another row's bucket */
            /* |dx| <= sqrt(bound - gy - gz) for an agent of this row within the bound */
            double rest = bound - (gz[iz] + gy[iy]);
            double w = sqrt(rest > 0 ? rest : 0) * (1 + 1e-9) + xslack;
            double xlo = px - w, xhi = px + w;
            uint32_t lo = s, hi = e;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (items[mid].x < xlo) lo = mid + 1;
                else hi = mid;
            }
            for (uint32_t it = lo; it < e; it++) {
                const on_proxitem *o = &items[it];
                if (o->x > xhi) break;
                double dx = o->x - px, dy = o->y - py, dz = o->z - pz;
                double d2 = dx * dx + dy * dy + dz * dz;
                if (d2 > bound) continue;
                uint32_t j = o->slot;
                if (j == self || (mixed && o->row != key)) continue;
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

/* Every live agent (but self) within squared distance r2 of self (r2 within range's), into cand
 * unsorted: their count, or -1 when more than PROX_CAND. The rows as nearest_within reads them. */
static int gather(const on_proxgrid *g, uint32_t self, double range, double r2, uint32_t *cand)
{
    const double *me = g->last + 3 * (size_t)self;
    const double px = me[0], py = me[1], pz = me[2], cell = g->cell;
    const on_proxitem *items = g->items;
    int64_t cy[PROX_MAX_SPAN], cz[PROX_MAX_SPAN];
    double gy[PROX_MAX_SPAN], gz[PROX_MAX_SPAN];
    double r = sqrt(r2) * (1 + 1e-9) + 1e-12 * cell;
    r = r < range ? r : range;
    int ny = axis_order(py, cell, cellof(py - r, cell), cellof(py + r, cell), cy, gy);
    int nz = axis_order(pz, cell, cellof(pz - r, cell), cellof(pz + r, cell), cz, gz);
    uint32_t mask = g->nbuckets - 1;
    double xslack = 1e-9 * cell + 1e-12 * fabs(px);
    int m = 0;
    for (int iz = 0; iz < nz && gz[iz] <= r2; iz++)
        for (int iy = 0; iy < ny && gz[iz] + gy[iy] <= r2; iy++) {
            uint32_t b = bucket(cy[iy], cz[iz], mask);
            uint32_t s = g->start[b], e = g->start[b + 1];
            if (s == e) continue;
            uint32_t key = rowkey(cy[iy], cz[iz]);
            int mixed = g->bkey[b] == ON_PROX_MIXED;
            if (!mixed && g->bkey[b] != key) continue;
            double rest = r2 - (gz[iz] + gy[iy]);
            double w = sqrt(rest > 0 ? rest : 0) * (1 + 1e-9) + xslack;
            double xlo = px - w, xhi = px + w;
            uint32_t lo = s, hi = e;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (items[mid].x < xlo) lo = mid + 1;
                else hi = mid;
            }
            for (uint32_t it = lo; it < e; it++) {
                const on_proxitem *o = &items[it];
                if (o->x > xhi) break;
                double dx = o->x - px, dy = o->y - py, dz = o->z - pz;
                if (dx * dx + dy * dy + dz * dz > r2 || o->slot == self || (mixed && o->row != key)) continue;
                if (m == PROX_CAND) return -1;
                cand[m++] = o->slot;
            }
        }
    return m;
}

/* nearest_within's answer from self's candidate list: the same when the list holds every agent
 * within the bound. The list is left with the answer first, nearest first, so that the next frame's
 * scan meets the near ones first (few moves in the sorted insertion, a tight bound soon). */
static int nearest_listed(const on_proxgrid *g, uint32_t self, uint32_t *cand, int nc, double bound, int k,
                          uint32_t *out)
{
    const double *me = g->last + 3 * (size_t)self;
    const double px = me[0], py = me[1], pz = me[2];
    double dist[ON_CROWD_MAX_NEIGHBOURS];
    unsigned char at[ON_CROWD_MAX_NEIGHBOURS];
    int m = 0;
    for (int c = 0; c < nc; c++) {
        uint32_t j = cand[c];
        const double *o = g->last + 3 * (size_t)j;
        double dx = o[0] - px, dy = o[1] - py, dz = o[2] - pz;
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > bound || !g->last_id[j]) continue; /* (or removed since) */
        int q;
        if (m == k) {
            if (d2 == dist[m - 1] && j > out[m - 1]) continue;
            q = m - 1;
        } else
            q = m++;
        while (q > 0 && (dist[q - 1] > d2 || (dist[q - 1] == d2 && out[q - 1] > j))) {
            dist[q] = dist[q - 1], out[q] = out[q - 1], at[q] = at[q - 1];
            q--;
        }
        dist[q] = d2, out[q] = j, at[q] = (unsigned char)c;
        if (m == k) bound = dist[m - 1];
    }
    /* the answer first (in its order), then the rest as they were (as it mostly is already) */
    int same = 1;
    for (int i = 0; i < m && same; i++) same = at[i] == i;
    if (same) return m;
    unsigned char taken[PROX_CAND] = {0};
    uint32_t rest[PROX_CAND];
    for (int i = 0; i < m; i++) taken[at[i]] = 1;
    int nr = 0;
    for (int c = 0; c < nc; c++)
        if (!taken[c]) rest[nr++] = cand[c];
    for (int i = 0; i < m; i++) cand[i] = out[i];
    memcpy(cand + m, rest, (size_t)nr * sizeof *rest);
    return m;
}

/* Whether self's list holds every live agent within sqrt(bound) of it now: an agent left out lay at
 * least r away when the list was made, and since then each of the two moved at most the grid's
 * travel since (rounding: a margin far above it). */
static int list_covers(const on_proxgrid *g, uint32_t self, double bound)
{
    const struct on_proxlist *l = &g->lists[self];
    if (l->epoch != g->epoch || l->n < 0) return 0;
    const double *me = g->last + 3 * (size_t)self;
    double need = sqrt(bound) * (1 + 1e-7) + 1e-9 * g->cell + 1e-12 * (fabs(me[0]) + fabs(me[1]) + fabs(me[2]));
    double avail = l->r * (1 - 1e-7) - 2 * (g->travel - l->at) * (1 + 1e-7);
    return need < avail;
}

/* The k nearest within the bound (at most range squared): from self's list when it covers the bound
 * (made anew, reaching PROX_SKIN beyond it, when it does not), else from the grid. */
static int nearest_bound(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, double bound,
                         int k, uint32_t *out)
{
    uint32_t *cand = g->cand + (size_t)PROX_CAND * self;
    struct on_proxlist *l = &g->lists[self];
    if (!list_covers(g, self, bound)) {
        double rb = sqrt(bound) * (1 + PROX_SKIN);
        if (!(rb < range)) rb = range; /* (a list of every agent within the range) */
        l->n = gather(g, self, range, rb * rb, cand);
        l->r = rb;
        l->at = g->travel;
        l->epoch = g->epoch;
        if (!list_covers(g, self, bound)) return nearest_within(g, agents, self, range, bound, k, out);
    }
    return nearest_listed(g, self, cand, l->n, bound, k, out);
}

/* The k nearest from self's list as it stands (epoch current, at least k entries): its first k
 * entries (last frame's answer, nearest first, as the list was left) sorted again where they are now,
 * which bounds the k-th; when the list covers that bound (list_covers), the rest of the list is read
 * against it, an entry nearer than the k-th taking its place in the answer and the one it pushes out
 * taking the entry's place in the list (the list stays the same set, its first k the answer, nearest
 * first). The answer is the k nearest of the list, so the k nearest of all: nearest_within's, the
 * same ties. 0 when the list cannot answer: *head then the k-th's squared distance (every one of the
 * first k live: k live agents lie within it), else -1. No pass over the agents' records, no reordering
 * of the list after (measured: docs/benchmarks.md, session 25). */
static int nearest_head(const on_proxgrid *g, uint32_t self, double full, int k, uint32_t *out, double *head)
{
    uint32_t *cand = g->cand + (size_t)PROX_CAND * self;
    const struct on_proxlist *l = &g->lists[self];
    const double *me = g->last + 3 * (size_t)self;
    const double px = me[0], py = me[1], pz = me[2];
    double dist[ON_CROWD_MAX_NEIGHBOURS];
    *head = -1;
    for (int c = 0; c < k; c++) {
        uint32_t j = cand[c];
        if (!g->last_id[j]) return 0; /* removed since */
        const double *o = g->last + 3 * (size_t)j;
        double dx = o[0] - px, dy = o[1] - py, dz = o[2] - pz;
        double d2 = dx * dx + dy * dy + dz * dz;
        int q = c;
        while (q > 0 && (dist[q - 1] > d2 || (dist[q - 1] == d2 && out[q - 1] > j))) {
            dist[q] = dist[q - 1], out[q] = out[q - 1];
            q--;
        }
        dist[q] = d2, out[q] = j;
    }
    double bound = dist[k - 1];
    *head = bound;
    if (!(bound < full) || !list_covers(g, self, bound)) return 0;
    for (int c = k, n = l->n; c < n; c++) {
        uint32_t j = cand[c];
        const double *o = g->last + 3 * (size_t)j;
        double dx = o[0] - px, dy = o[1] - py, dz = o[2] - pz;
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > bound || !g->last_id[j]) continue;
        if (d2 == bound && j > out[k - 1]) continue;
        cand[c] = out[k - 1]; /* pushed out of the answer: into the rest of the list */
        int q = k - 1;
        while (q > 0 && (dist[q - 1] > d2 || (dist[q - 1] == d2 && out[q - 1] > j))) {
            dist[q] = dist[q - 1], out[q] = out[q - 1];
            q--;
        }
        dist[q] = d2, out[q] = j;
        bound = dist[k - 1];
    }
    memcpy(cand, out, (size_t)k * sizeof *cand);
    return k;
}

int on_proxgrid_nearest(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, int k,
                        uint32_t *out)
{
    const on_agent *a = &agents[self];
    double full = range * range;
    /* A bound on the k-th nearest: k live agents lie within it, so the k nearest do too, and the
     * search starts with it instead of the range's (fewer cells read, fewer agents sorted in; the
     * answer is the same). From self's list when it holds k (nearest_head: its first k, last frame's
     * answer, where they are now; the answer itself when the list covers it), else from the last
     * frame's k neighbours where they are now. out may be a->nbr itself: read whole before the search
     * writes it. (Positions and ids read from the grid's copy: the agents' own, compact.) */
    double hint = -1;
    const struct on_proxlist *l = &g->lists[self];
    if (l->epoch == g->epoch && l->n >= k) {
        if (nearest_head(g, self, full, k, out, &hint) == k) return k;
    } else if (a->nnbr == k) {
        const double *me = g->last + 3 * (size_t)self;
        hint = 0;
        for (int i = 0; i < k; i++) {
            uint32_t j = a->nbr[i];
            if (j == self || !g->last_id[j]) {
                hint = -1;
                break;
            }
            const double *o = g->last + 3 * (size_t)j;
            double dx = o[0] - me[0], dy = o[1] - me[1], dz = o[2] - me[2];
            double d2 = dx * dx + dy * dy + dz * dz;
            hint = d2 > hint ? d2 : hint;
        }
    }
    if (hint >= 0 && hint < full) {
        int m = nearest_bound(g, agents, self, range, hint, k, out);
        if (m == k) return m; /* (else a rounding apart: the whole range) */
    }
    return nearest_within(g, agents, self, range, full, k, out);
}

int on_proxgrid_listed(const on_proxgrid *g, uint32_t slot)
{
    if (slot >= g->cap_slots || g->lists[slot].epoch != g->epoch) return -1;
    return g->lists[slot].n;
}
