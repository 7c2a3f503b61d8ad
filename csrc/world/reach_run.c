/*
 * reach_run.c -- the local search over a tile's boxes (reach.h; its scratch, target maps and results
 * are reach.c's): Dijkstra from a point, or with a `to` an A* heading there through the targets, over
 * a box set or a lazy one built block by block as the search reaches it. A directed search keys a box
 * it reaches by a lower bound of its heading and computes the heading when that entry comes out of
 * the heap (most reached boxes never do): the boxes settled and the costs are those of keying every
 * box by its heading (tests/world/test_heading.c).
 */
#include "reach_impl.h"
#include "clearance.h"

#include <string.h>
#include <time.h>

/* A directed search with a budget that met no target after this many settled boxes heads for the
 * nearest target instead of `to` (reach_run). 256 -> 128 (session 9; 35 pairs of 8x1x8 x 512^3,
 * world:plan's start_multi): boxes settled by the joins max 659 -> 496, p90 224 -> 194; route costs
 * / 256's mean 1.003, max 1.063; 96 and 64 settle more at the max (578, 632): the nearest portal
 * sought sooner from a point not yet out of its pocket. Session 21: 128 -> 48 (the seed's world, 8x1x8 x
 * 512^3 as loaded, 200 pairs of bench/plan.lua, callgrind: a plan's instructions p99 7.57 M -> 5.42 M,
 * p90 3.05 M -> 2.74 M; route costs / 128's mean 1.0087, max 1.21; 64: p99 6.09 M, mean 1.0033; 32:
 * p99 5.06 M but mean 1.034, max 1.33): the slowest plans' joins are such lost searches, 150-300
 * boxes settled over 16-leaf blocks built for them (2,000-3,400 boxes). */
#ifndef LOST_POPS
#define LOST_POPS 48
#endif

/* Of two entries of equal keys, does a come first? Blocks before boxes, blocks by index, boxes by
 * their least corner (z, y, x), never by index (a lazy set numbers its boxes in the order its blocks
 * were built): so entries of equal keys come out in one order whatever else the heap holds, and a
 * search keying boxes by lower bounds settles them as one keying them by their headings. */
static int tie_before(const on_reach *r, uint32_t a, uint32_t b)
{
    a &= ~LOWER;
    b &= ~LOWER;
    if ((a & PROXY) != (b & PROXY)) return (a & PROXY) != 0;
    if (a & PROXY) return a < b;
    const on_box *x = &r->hset->box[a], *y = &r->hset->box[b];
    for (int k = 2; k >= 0; k--)
        if (x->mn[k] != y->mn[k]) return x->mn[k] < y->mn[k];
    return 0;
}

/* The heap's order: by key, then tie_before. */
static inline int before(const on_reach *r, double ka, uint32_t a, double kb, uint32_t b)
{
    return ka < kb || (ka == kb && tie_before(r, a, b));
}

static void heap_push(on_reach *r, size_t *n, uint32_t b, double key)
{
    /* a box reopened by an any-angle shortcut (no done[] without a stop) is pushed again: more
     * entries than the neighbour count are possible, so the heap grows when full */
    if (*n == r->heapcap) {
        size_t c = 2 * r->heapcap + 16;
        uint32_t *hb = realloc(r->heap_box, c * sizeof *hb);
        if (hb) r->heap_box = hb;
        double *hk = hb ? realloc(r->heap_key, c * sizeof *hk) : NULL;
        if (hk) r->heap_key = hk;
        if (!hb || !hk) {
            r->heap_failed = 1;
            return;
        }
        r->heapcap = c;
    }
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(r, key, b, r->heap_key[p], r->heap_box[p])) break;
        r->heap_key[i] = r->heap_key[p];
        r->heap_box[i] = r->heap_box[p];
        i = p;
    }
    r->heap_key[i] = key;
    r->heap_box[i] = b;
}

/* Restore the heap order below position i of a heap of n entries. */
static void heap_down(on_reach *r, size_t n, size_t i)
{
    double k = r->heap_key[i];
    uint32_t b = r->heap_box[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(r, r->heap_key[c + 1], r->heap_box[c + 1], r->heap_key[c], r->heap_box[c])) c++;
        if (!before(r, r->heap_key[c], r->heap_box[c], k, b)) break;
        r->heap_key[i] = r->heap_key[c];
        r->heap_box[i] = r->heap_box[c];
        i = c;
    }
    r->heap_key[i] = k;
    r->heap_box[i] = b;
}

static uint32_t heap_pop(on_reach *r, size_t *n, double *key)
{
    uint32_t top = r->heap_box[0];
    *key = r->heap_key[0];
    size_t m = --(*n);
    double k = r->heap_key[m];
    uint32_t b = r->heap_box[m];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) break;
        if (c + 1 < m && before(r, r->heap_key[c + 1], r->heap_box[c + 1], r->heap_key[c], r->heap_box[c])) c++;
        if (!before(r, r->heap_key[c], r->heap_box[c], k, b)) break;
        r->heap_key[i] = r->heap_key[c];
        r->heap_box[i] = r->heap_box[c];
        i = c;
    }
    if (m > 0) {
        r->heap_key[i] = k;
        r->heap_box[i] = b;
    }
    return top;
}

/* Where a path at point p (in or on box a) enters box c across their shared face [lo, hi] (face_of):
 * p clamped onto the face. The segment p -> q lies in a (a box is convex). */
static inline __attribute__((always_inline)) void face_of(const on_box *a, const on_box *c, double lo[3], double hi[3])
{
    for (int j = 0; j < 3; j++) {
        lo[j] = a->mn[j] > c->mn[j] ? a->mn[j] : c->mn[j];
        hi[j] = a->mx[j] < c->mx[j] ? a->mx[j] : c->mx[j];
    }
}

static inline __attribute__((always_inline)) void entry_point(const double lo[3], const double hi[3], const double p[3], double q[3])
{
    for (int j = 0; j < 3; j++) q[j] = p[j] < lo[j] ? lo[j] : p[j] > hi[j] ? hi[j] : p[j];
}

/* The face a box's parent a and the box b share, for crosses_face: found once per box expanded (its
 * neighbours each ask). k: the axis across it (-1: none), plane: its coordinate there, lo, hi: its
 * extent along the other two axes. */
typedef struct pface {
    int k;
    double plane, lo[3], hi[3];
} pface;

static inline __attribute__((always_inline)) void pface_of(const on_box *a, const on_box *b, pface *f)
{
    f->k = -1;
    for (int k = 0; k < 3; k++) {
        if (a->mx[k] == b->mn[k]) f->plane = a->mx[k];
        else if (a->mn[k] == b->mx[k]) f->plane = a->mn[k];
        else continue;
        f->k = k;
        break;
    }
    for (int j = 0; j < 3; j++) {
        f->lo[j] = a->mn[j] > b->mn[j] ? a->mn[j] : b->mn[j];
        f->hi[j] = a->mx[j] < b->mx[j] ? a->mx[j] : b->mx[j];
    }
}

/* Does the segment p -> q (p in box a, q in box b, which share the face f) cross from a into b through
 * their shared face? */
static inline __attribute__((always_inline)) int crosses_face(const pface *f, const double p[3], const double q[3])
{
    int k = f->k;
    if (k < 0) return 0;
    if (q[k] == p[k]) return 0;
    double t = (f->plane - p[k]) / (q[k] - p[k]);
    if (t < 0 || t > 1) return 0;
    for (int j = 0; j < 3; j++) {
        if (j == k) continue;
        double v = p[j] + t * (q[j] - p[j]);
        if (v < f->lo[j] - 1e-9 || v > f->hi[j] + 1e-9) return 0;
    }
    return 1;
}

/* With `to`: hc[t] = |p - target t| + hp[t] and the targets in order of it (insertion sort: a tile's
 * portals), so heading can stop scanning at the first target whose hc, less how far the point is from
 * p, cannot beat the best so far (|q - t| >= |p - t| - |q - p|). */
void on_reach_order_targets(on_reach *r, const double *pts, uint32_t npt, const double p[3])
{
    for (uint32_t i = 0; i < npt; i++) {
        double h = dist3(pts + 3 * (size_t)i, p) + r->hp[i];
        uint32_t j = i;
        for (; j > 0 && r->hc[r->order[j - 1]] > h; j--) r->order[j] = r->order[j - 1];
        r->order[j] = i;
        r->hc[i] = h;
    }
}

/* The key's estimate at point q heading for d->to: weight x the shortest straight line to `to` through
 * one of the targets (never below the straight line to `to`, which it was before: a search pulled to
 * the targets on its way rather than only towards `to`). */
static double heading(on_reach *r, const reach_stop *d, const double q[3])
{
    r->headings++;
    double h = HUGE_VAL, R = dist3(q, d->root);
    for (uint32_t i = 0; i < d->npt; i++) {
        uint32_t t = d->order[i];
        if (d->hc[t] - R >= h) break; /* this one and the rest are no better */
        double rest = h - d->hp[t];
        if (rest <= 0) continue;
        const double *pt = d->pts + 3 * (size_t)t;
        double dx = q[0] - pt[0], dy = q[1] - pt[1], dz = q[2] - pt[2], d2 = dx * dx + dy * dy + dz * dz;
        if (d2 >= rest * rest) continue; /* no better: no square root (most targets, most calls) */
        double x = sqrt(d2) + d->hp[t];
        if (x < h) h = x;
    }
    if (h == HUGE_VAL) h = dist3(q, d->to);
    return d->weight * h;
}

/* A lower bound of heading(r, d, q) without its scan of the targets (reach_run keys a box by it until
 * the box is popped, when its heading is computed). r->hlazy 1: weight x the straight line to `to`
 * (the line through a target is never shorter); 2 (the search heads for the nearest target,
 * d->hp all 0): weight x the distance to the nearest tile face holding targets (r->hfaces), or to
 * a target inside the tile (r->hin) when nearer. Scaled down by 1e-12 so that rounding never puts it
 * above the heading. */
static inline double heading_lower(const on_reach *r, const on_boxset *s, const reach_stop *d, const double q[3])
{
    double lb;
    if (r->hlazy == 1) {
        lb = dist3(q, d->to);
    } else {
        double n = (double)s->bsize * s->nb;
        lb = HUGE_VAL;
        for (int f = 0; f < 6; f++) {
            if (!(r->hfaces >> f & 1)) continue;
            double v = (f & 1) ? n - q[f >> 1] : q[f >> 1];
            if (v < lb) lb = v;
        }
        for (int i = 0; i < r->nhin; i++) {
            double v = dist3(q, d->pts + 3 * (size_t)r->hin[i]);
            if (v < lb) lb = v;
        }
        if (lb < 0) lb = 0;
    }
    return d->weight * lb * (1 - 1e-12);
}

/* For r->hlazy 2: the tile faces holding targets and the targets inside the tile (at most 2: more,
 * and boxes are keyed by their heading at once: r->hlazy 0). */
static void lower_faces(on_reach *r, const on_boxset *s, const reach_stop *d)
{
    double n = (double)s->bsize * s->nb;
    r->hfaces = 0;
    r->nhin = 0;
    r->hlazy = 2;
    for (uint32_t t = 0; t < d->npt; t++) {
        const double *x = d->pts + 3 * (size_t)t;
        int on = 0;
        for (int k = 0; k < 3; k++) {
            if (x[k] == 0) on |= 1 << (2 * k);
            if (x[k] == n) on |= 1 << (2 * k + 1);
        }
        if (on) {
            r->hfaces |= (uint8_t)on;
        } else if (r->nhin < 2) {
            r->hin[r->nhin++] = t;
        } else {
            r->hlazy = 0;
            return;
        }
    }
}

/* Box c, a neighbour of box b (popped with cost key, at point pb, parent pa), reached from b: its
 * cost and entry point improved when this way is better (and pushed again). (Inlined always: called
 * from three loops, out of line it cost the prepared joins 2.5 M instructions over 35 plans.) */
/* With a radius (r->rtree): does the segment a -> b (tile-local) keep it (reach.h)? Out of line: the
 * searches without one only test r->rtree. */
static __attribute__((noinline)) int keeps_radius(const on_reach *r, const double a[3], const double b[3])
{
    double x[3], y[3];
    for (int k = 0; k < 3; k++) {
        x[k] = a[k] + r->roff[k];
        y[k] = b[k] + r->roff[k];
    }
    return on_tree_visible_radius(r->rtree, NULL, x, y, r->rR);
}

static inline __attribute__((always_inline)) void relax(on_reach *r, const on_boxset *s, const reach_stop *d, uint32_t b, uint32_t c, uint32_t pa,
                         const pface *pf, const double *pb, double key, size_t *n)
{
    const uint32_t cur = r->cur;
    const double *to = d ? d->to : NULL;
    if (d && r->done[c] == cur) return; /* settled: never reopened */
    /* both ways below cost at least the cost of where they start (b's, or its parent's): when c's is
     * no higher, neither can improve it (nothing computed) */
    double gc = gval(r, c), lb = pa != UINT32_MAX && r->g[pa] < key ? r->g[pa] : key;
    if (gc <= lb) return;
    const on_box *a = &s->box[b];
    double q[3], lo[3], hi[3];
    face_of(a, &s->box[c], lo, hi);
    entry_point(lo, hi, pb, q);
    double ng = key + dist3(pb, q);
    const double *from = pb;
    if (pa != UINT32_MAX) {
        /* any-angle: straight from the parent's point when that line crosses into b through
         * their shared face (a cost estimate steering the corridor; the path is relaxed later) */
        const double *pp = r->pt + 3 * (size_t)pa;
        double q2[3];
        entry_point(lo, hi, pp, q2);
        double g2 = r->g[pa] + dist3(pp, q2);
        if (g2 < ng && crosses_face(pf, pp, q2)) {
            ng = g2;
            memcpy(q, q2, sizeof q);
            from = pp;
        }
    }
    if (ng < gc && r->rtree && !keeps_radius(r, from, q)) { /* a radius: the plain way, else none */
        if (from == pb) return;
        entry_point(lo, hi, pb, q);
        ng = key + dist3(pb, q);
        if (!(ng < gc) || !keeps_radius(r, pb, q)) return;
    }
    if (ng < gc) {
        r->seen[c] = cur;
        r->g[c] = ng;
        r->parent[c] = b;
        memcpy(r->pt + 3 * (size_t)c, q, sizeof q);
        if (to && r->hlazy) { /* keyed by a lower bound of its heading until popped (reach_run) */
            r->hkey[c] = heading_lower(r, s, d, q);
            r->hexact[c] = 0;
            heap_push(r, n, c | LOWER, ng + r->hkey[c]);
            return;
        }
        if (to) r->hkey[c] = heading(r, d, q);
        heap_push(r, n, c, to ? ng + r->hkey[c] : ng);
    }
}

/* Is a heap entry of box b keyed `key` (a search with a `to`) its last one? An older one (b reached
 * again since, by a shorter way) is skipped even when its key is the lower: b is settled at the key of
 * the way it holds (its cost and point), whether that key came from its heading or a lower bound. */
static inline int latest(const on_reach *r, uint32_t b, double key)
{
    return fabs(key - (r->g[b] + r->hkey[b])) <= 1e-9;
}

/* Distance from point p to the rectangle [lo, hi] (degenerate along one axis). */
static double dist_rect(const double p[3], const double lo[3], const double hi[3])
{
    double s = 0;
    for (int j = 0; j < 3; j++) {
        double v = p[j] < lo[j] ? lo[j] - p[j] : p[j] > hi[j] ? p[j] - hi[j] : 0;
        s += v * v;
    }
    return sqrt(s);
}

/* A lower bound of the key any box of block blk would get from waiting box x through x's face on the
 * block's facing side `side` (relax: the entry point q lies on that face, its cost is at least the
 * nearer of x's and its parent's point's distance to the face on top of their costs, and the heading
 * part at least weight x the least line from the face through a target), so a block is built no
 * earlier than a box of it could be settled. */
static double wait_key(const on_reach *r, const on_boxset *s, const reach_stop *d, uint32_t x, int side)
{
    const on_box *a = &s->box[x];
    double lo[3], hi[3];
    int k = side >> 1;
    for (int j = 0; j < 3; j++) {
        lo[j] = a->mn[j];
        hi[j] = a->mx[j];
    }
    lo[k] = hi[k] = side & 1 ? a->mn[k] : a->mx[k]; /* (the block's high side faces x's low face) */
    double g = r->g[x] + dist_rect(r->pt + 3 * (size_t)x, lo, hi);
    uint32_t pa = r->parent[x];
    if (pa != UINT32_MAX) {
        double g2 = r->g[pa] + dist_rect(r->pt + 3 * (size_t)pa, lo, hi);
        if (g2 < g) g = g2;
    }
    if (!d->to) return g - 1e-9;
    /* the targets in order of their line through the search's point (hc): a target whose line, less
     * the farthest the face lies from that point, is not below the best so far gives nothing better
     * (|x - t| >= |root - t| - |root - x|), nor do the rest (the exact least, fewer targets read) */
    double far2 = 0;
    for (int j = 0; j < 3; j++) {
        double u = fabs(d->root[j] - lo[j]), v = fabs(d->root[j] - hi[j]);
        far2 += u > v ? u * u : v * v;
    }
    double far = sqrt(far2), h = HUGE_VAL;
    for (uint32_t i = 0; i < d->npt; i++) {
        uint32_t t = d->order[i];
        if (d->hc[t] - far >= h + 1e-9) break;
        double v = dist_rect(d->pts + 3 * (size_t)t, lo, hi) + d->hp[t];
        if (v < h) h = v;
    }
    if (h == HUGE_VAL) h = dist_rect(d->to, lo, hi);
    return g + d->weight * h - 1e-9;
}

/* The least wait_key of block blk's waiting boxes. */
static double block_key(const on_reach *r, const on_boxset *s, const reach_stop *d, uint32_t blk)
{
    double k = HUGE_VAL;
    for (uint32_t w = head_get(r->whead, r->wvalid, blk); w != NO_ENTRY; w = r->wnext[w]) {
        double v = wait_key(r, s, d, r->wbox[w], r->wside[w]);
        if (v < k) k = v;
    }
    return k;
}

/* Dijkstra over the boxes from point p, in each of the boxes roots[0..nroot): g and pt of every box
 * reached. With d: the search stops once every box holding a target of a component it has met is
 * settled (a box's g and parent are final once popped); with d->to as well it is an A* towards that
 * point (keys g + weight x straight line on; weight > 1 is greedier: a box may settle above its best
 * cost, and a settled box is never reopened), stopped once the smallest key left is above
 * (1 + slack) x the best total met (a settled target's g + straight line to it + weight x the line
 * on) + add; and with d->budget, d->budget settled boxes after the first target met. Over a lazy set
 * a popped box's blocks across its block faces are built first (their boxes are its neighbours
 * there); the need count then knows only the targets of built blocks. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Has the running call spent its work limit (reach.h: r->limit units, r->deadline; never before its
 * first unit, so that every call goes on)? */
static inline int over_limit(on_reach *r, double *last)
{
    if (!r->work) return 0;
    if (r->limit && r->work >= r->limit) return 1;
    if (!(r->deadline > 0)) return 0;
    double now = now_s();
    if (now - *last > r->unit_max) r->unit_max = now - *last; /* (the probe: route.h's on_route_calls) */
    *last = now;
    return now >= r->deadline;
}

static void reach_loop(on_reach *r, const on_boxset *s, const reach_stop *d);

void on_reach_run(on_reach *r, const on_boxset *s, const uint32_t *roots, int nroot, const double p[3],
                      const reach_stop *d)
{
    if (++r->cur == 0) { /* wrapped: clear the stamps once */
        memset(r->seen, 0, r->cap * sizeof *r->seen);
        memset(r->done, 0, r->cap * sizeof *r->done);
        memset(r->hexact, 0, r->cap * sizeof *r->hexact);
        r->cur = 1;
    }
    const uint32_t cur = r->cur;
    on_boxlazy *z = lazy_of(r, s);
    size_t need = 0; /* target entries of the met components in boxes not yet settled */
    const double *to = d ? d->to : NULL;
    r->suspended = 0;
    r->hlazy = !r->eager_heading;
    r->hset = s;
    r->headings = 0;
    if (d) {
        for (uint32_t i = 0; i < d->npt; i++) r->gneed[i] = 0;
        for (uint32_t i = 0; i < r->nent; i++) r->gneed[d->group[r->tent_t[i]]]++;
        /* a lazy set's (block, target) pairs not mapped yet count as one entry each, so the search
         * does not stop while a block not built holds a target of a component it has met */
        for (uint32_t i = 0; i < r->npend; i++) r->gneed[d->group[r->ptgt[i]]]++;
    }
    size_t n = 0;
    for (int i = 0; i < nroot; i++) {
        r->seen[roots[i]] = cur;
        r->g[roots[i]] = 0;
        if (to) r->hkey[roots[i]] = heading(r, d, p);
        r->parent[roots[i]] = UINT32_MAX;
        memcpy(r->pt + 3 * (size_t)roots[i], p, 3 * sizeof(double));
        heap_push(r, &n, roots[i], to ? r->hkey[roots[i]] : 0);
    }
    if (z) {
        size_t nblk = (size_t)s->nb * (size_t)s->nb * (size_t)s->nb;
        if (r->nwtouch > r->phcap) { /* (the list overflowed: every block) */
            memset(r->wvalid, 0, (nblk + 63) / 64 * sizeof *r->wvalid); /* (NO_ENTRY each: head_get) */
        } else {
            for (size_t i = 0; i < r->nwtouch; i++) head_set(r->whead, r->wvalid, r->wtouch[i], NO_ENTRY);
        }
        r->nwtouch = 0;
        r->nwait = 0;
    }
    r->rs.n = n;
    r->rs.need = need;
    r->rs.best = HUGE_VAL;
    r->rs.pops = r->rs.met_at = 0;
    r->rs.met_any = 0;
    reach_loop(r, s, d);
}

void on_reach_run_more(on_reach *r, const on_boxset *s, const reach_stop *d)
{
    r->suspended = 0;
    reach_loop(r, s, d);
}

/* The search's loop (on_reach_run's comment), from the state in r->rs: stops at the work limit with
 * r->suspended set and its state saved there, to go on where it stopped (on_reach_run_more). */
static void reach_loop_run(on_reach *r, const on_boxset *s, const reach_stop *d);
static void reach_loop(on_reach *r, const on_boxset *s, const reach_stop *d)
{
    double t0 = r->deadline > 0 ? now_s() : 0;
    reach_loop_run(r, s, d);
    if (r->deadline > 0) r->loop_s += now_s() - t0;
}

static void reach_loop_run(on_reach *r, const on_boxset *s, const reach_stop *d)
{
    const uint32_t cur = r->cur;
    on_boxlazy *z = lazy_of(r, s);
    const double *to = d ? d->to : NULL;
    size_t n = r->rs.n, need = r->rs.need, pops = r->rs.pops, met_at = r->rs.met_at;
    double best = r->rs.best;
    int met_any = r->rs.met_any;
    double last = r->deadline > 0 ? now_s() : 0;
    while (n > 0) {
        if (over_limit(r, &last)) {
            r->rs.n = n;
            r->rs.need = need;
            r->rs.pops = pops;
            r->rs.met_at = met_at;
            r->rs.best = best;
            r->rs.met_any = met_any;
            r->suspended = 1;
            r->pops = pops;
            return;
        }
        r->work++;
        double key;
        uint32_t b = heap_pop(r, &n, &key);
        if (b & PROXY) {
            /* a block its waiting boxes may enter: built now, each waiting box's neighbours there
             * relaxed in the order the boxes were settled (as if expanded then) */
            uint32_t blk = b & ~PROXY;
            if (on_boxlazy_built(z, blk)) continue; /* built already */
            if (key > best * (1 + d->slack) + d->add) break;
            if (met_any && d->budget && pops - met_at >= d->budget) break;
            if (on_reach_lazy_block(r, z, blk, d, &need)) {
                r->heap_failed = 1;
                break;
            }
            const on_boxblock *kb = on_boxlazy_rec(z, blk);
            for (uint32_t w = head_get(r->whead, r->wvalid, blk); w != NO_ENTRY; w = r->wnext[w]) {
                uint32_t x = r->wbox[w], xp = r->parent[x];
                int side = r->wside[w];
                pface xf = {.k = -1};
                if (xp != UINT32_MAX) pface_of(&s->box[xp], &s->box[x], &xf);
                for (uint32_t j = kb->fo[side]; j < kb->fo[side + 1]; j++)
                    if (on_box_overlap2(&s->box[x], &s->box[z->bface[j]], side >> 1))
                        relax(r, s, d, x, z->bface[j], xp, &xf, r->pt + 3 * (size_t)x, r->g[x], &n);
            }
            head_set(r->whead, r->wvalid, blk, NO_ENTRY);
            continue;
        }
        if (b & LOWER) {
            /* keyed by a lower bound: its heading now (its key can only grow), pushed again */
            b &= ~LOWER;
            if (r->done[b] == cur || r->hexact[b] == cur || !latest(r, b, key)) continue;
            r->hkey[b] = heading(r, d, r->pt + 3 * (size_t)b);
            r->hexact[b] = cur;
            heap_push(r, &n, b, r->g[b] + r->hkey[b]);
            continue;
        }
        const double *pb = r->pt + 3 * (size_t)b;
        if (to ? !latest(r, b, key) : key > r->g[b]) continue; /* an older entry */
        if (to && r->done[b] == cur) continue; /* settled and expanded (an entry of equal key) */
        if (!d) pops++;
        if (d && r->done[b] != cur) {
            if (key > best * (1 + d->slack) + d->add) break;
            if (met_any && d->budget && pops - met_at >= d->budget) break;
            r->done[b] = cur;
            pops++;
            int met = 0;
            if (r->tmark[b] == r->tcur)
                for (uint32_t e = r->thead[b]; e != NO_ENTRY; e = r->tent_next[e]) {
                    uint32_t t = r->tent_t[e], *gn = &r->gneed[d->group[t]];
                    if (*gn != UINT32_MAX) { /* first met: all its entries are needed */
                        need += *gn;
                        *gn = UINT32_MAX;
                    }
                    need--;
                    met = 1;
                    if (to) {
                        const double *tp = d->pts + 3 * (size_t)t;
                        double f = r->g[b] + dist3(pb, tp) + d->weight * d->hp[t];
                        if (f < best) best = f;
                    }
                }
            if (met && !met_any) {
                met_any = 1;
                met_at = pops;
            }
            if (to && !met_any && d->budget && pops == LOST_POPS) {
                /* no portal yet: the way towards `to` is blocked; head for the nearest portal
                 * instead (the targets' lines on to `to` dropped), the open boxes keyed again */
                for (uint32_t i = 0; i < d->npt; i++) r->hp[i] = 0;
                on_reach_order_targets(r, d->pts, d->npt, d->root);
                if (r->hlazy) lower_faces(r, s, d); /* (the line to `to` bounds the new heading no more) */
                size_t m = 0;
                for (size_t i = 0; i < n; i++) {
                    uint32_t c = r->heap_box[i];
                    if (c & PROXY) { /* a block waited for: its bound again */
                        if (on_boxlazy_built(z, c & ~PROXY)) continue;
                        r->heap_box[m] = c;
                        r->heap_key[m++] = block_key(r, s, d, c & ~PROXY);
                        continue;
                    }
                    c &= ~LOWER;
                    if (!latest(r, c, r->heap_key[i]) || r->done[c] == cur) continue;
                    if (r->hlazy) { /* keyed by the new lower bound until popped */
                        r->hkey[c] = heading_lower(r, s, d, r->pt + 3 * (size_t)c);
                        r->hexact[c] = 0;
                        r->heap_box[m] = c | LOWER;
                    } else {
                        r->hkey[c] = heading(r, d, r->pt + 3 * (size_t)c);
                        r->heap_box[m] = c;
                    }
                    r->heap_key[m++] = r->g[c] + r->hkey[c];
                }
                n = m;
                for (size_t i = n / 2; i-- > 0;) heap_down(r, n, i);
                r->hkey[b] = heading(r, d, pb);
                r->hexact[b] = cur;
            }
            if (met && need == 0) break;
        }
        key = r->g[b];
        uint32_t pa = r->parent[b];
        /* a lazy set: the blocks beyond b's block faces; a block not built yet is waited for (b
         * listed, the block pushed keyed by a lower bound of its boxes' keys: built when popped,
         * if ever), a built one gives its facing boxes now */
        uint32_t xb[6];
        int xk[6], nx = 0;
        if (z) {
            const on_box *a = &s->box[b];
            int B = s->bsize, N = B * s->nb;
            for (int k = 0; k < 3; k++)
                for (int dir = 0; dir < 2; dir++) {
                    int edge = dir ? a->mx[k] : a->mn[k];
                    if (edge % B || edge == 0 || edge == N) continue; /* inside its block, or the tile's face */
                    int c[3] = {a->mn[0] / B, a->mn[1] / B, a->mn[2] / B};
                    c[k] = dir ? edge / B : edge / B - 1;
                    uint32_t blk = (uint32_t)c[0] + (uint32_t)s->nb * ((uint32_t)c[1] + (uint32_t)s->nb * (uint32_t)c[2]);
                    int side = 2 * k + !dir; /* the facing side of that block */
                    if (on_boxlazy_built(z, blk) || !d) {
                        if (!d && on_reach_lazy_block(r, z, blk, d, &need)) { /* (a search without a stop: no waits) */
                            r->heap_failed = 1;
                            r->pops = pops;
                            return;
                        }
                        a = &s->box[b];
                        xb[nx] = blk;
                        xk[nx++] = side;
                        continue;
                    }
                    size_t w = r->nwait;
                    size_t wc = r->wcap, wc2 = r->wcap, wc3 = r->wcap;
                    if (on_grow((void **)&r->wnext, &wc, w + 1, sizeof *r->wnext) ||
                        on_grow((void **)&r->wbox, &wc2, w + 1, sizeof *r->wbox) ||
                        on_grow((void **)&r->wside, &wc3, w + 1, sizeof *r->wside)) {
                        r->heap_failed = 1;
                        r->pops = pops;
                        return;
                    }
                    r->wcap = wc;
                    r->nwait++;
                    r->wnext[w] = NO_ENTRY;
                    r->wbox[w] = b;
                    r->wside[w] = (uint8_t)side;
                    if (head_get(r->whead, r->wvalid, blk) == NO_ENTRY) {
                        head_set(r->whead, r->wvalid, blk, (uint32_t)w);
                        if (r->nwtouch < r->phcap) r->wtouch[r->nwtouch] = blk;
                        r->nwtouch++;
                    }
                    else r->wnext[r->wtail[blk]] = (uint32_t)w;
                    r->wtail[blk] = (uint32_t)w;
                    heap_push(r, &n, PROXY | blk, wait_key(r, s, d, b, side));
                }
            pb = r->pt + 3 * (size_t)b;
        }
        pface pf = {.k = -1};
        if (pa != UINT32_MAX) pface_of(&s->box[pa], &s->box[b], &pf);
        if (z) {
            /* a lazy set: the boxes of b's block that share a face with it (boxes.h), scanned in the
             * order the block's greedy merge made them, by their least z: none past b's far z touches it */
            const on_boxblock *kb = on_boxlazy_rec(z, on_boxlazy_block_of(z, b));
            const on_box *a = &s->box[b];
            for (uint32_t c = kb->first, e = kb->first + kb->n; c < e && s->box[c].mn[2] <= a->mx[2]; c++) {
                const on_box *x = &s->box[c];
                if (x->mn[0] > a->mx[0] || x->mx[0] < a->mn[0] || x->mx[2] < a->mn[2]) continue; /* apart */
                if (c != b && on_box_touch(a, x)) relax(r, s, d, b, c, pa, &pf, pb, key, &n);
            }
        } else {
            for (uint32_t e = s->adj_off[b]; e < s->adj_off[b + 1]; e++) relax(r, s, d, b, s->adj[e], pa, &pf, pb, key, &n);
        }
        for (int i = 0; i < nx; i++) {
            const on_boxblock *kb = on_boxlazy_rec(z, xb[i]);
            int k = xk[i] >> 1;
            for (uint32_t j = kb->fo[xk[i]]; j < kb->fo[xk[i] + 1]; j++)
                if (on_box_overlap2(&s->box[b], &s->box[z->bface[j]], k)) relax(r, s, d, b, z->bface[j], pa, &pf, pb, key, &n);
        }
    }
    r->pops = pops;
}
