/*
 * tighten.c -- the path-tightening stages (see tighten.h): refine, simplify, smooth, relax.
 */
#include "tighten.h"
#include "octonav_search.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Refinement stops when no waypoint moved more than REFINE_TOL leaves in a sweep (smoothing and
 * relaxation follow, so a thousandth of a leaf is plenty), or after a budget of about REFINE_BUDGET
 * waypoint updates: REFINE_BUDGET / m sweeps over m faces, at least REFINE_MIN_SWEEPS and at most
 * REFINE_MAX_SWEEPS. Each sweep also lays the runs of free waypoints straight (fill_run). Measured
 * against 8 sweeps without it (with on_relax's axis order): on the 13 maps (corridors of about 50
 * faces, so 3 sweeps) mean length ratios within 0.0003 (9 of 13 lower), p99 ratios within 0.005 and
 * all <= 0.9963, DC1's refine about 69,000 -> 33,000 instructions a query; spec/06's wall with a hole
 * (6 faces, 16 sweeps) 0.0030 over the analytic length where 8 sweeps gave 0.0245 and 3 gave 0.036.
 * A budget of 100 and at least 2 sweeps (2026-11-27, with smoothing over the bends; before: 150 and
 * 3): corridors of 34 faces and more get 2 sweeps instead of 3 (refine on DC1 36,499 -> 24,767
 * instructions a query); finalize DC1 145,718 -> 136,949 instructions a query, A1 183,489 ->
 * 173,603; lines of sight a query DC1 30.3 -> 31.3 (the paths less tight before smoothing); mean
 * ratios of the 13 maps -0.00011 to +0.00014 (A1 0.92158 -> 0.92172), p99 ratios all <= 0.9963. */
#define REFINE_TOL 1e-3
#define REFINE_BUDGET 100
#define REFINE_MIN_SWEEPS 2
#define REFINE_MAX_SWEEPS 16
/* Greedy smoothing's first jump past the next waypoint, in the fallback over every waypoint (more than
 * SMOOTH_BENDS bends; over the bends: GALLOP_FIRST_BENDS): a refined path has dozens of waypoints and
 * smoothing keeps a few, so the short jumps it used to try first (2, 4 waypoints ahead) nearly
 * always passed (measured over the 13 maps: 9-13 % fewer lines of sight, mean length ratios within
 * 0.0002 of jumping 2 ahead first, p99 ratios the same). 15 instead of 7 (jumps 16, 46, ... instead
 * of 8, 22, ...): A1 407,680 -> 405,643 instructions a query, mean ratios of the 13 maps within
 * 0.0002 (-0.0002 to +0.0001), p99 ratios all <= 0.9951. */
#define GALLOP_FIRST 15
/* The same over the bends only (on_smooth): 6, 16, 36, ... bends past the kept waypoint. Measured
 * before the bisection below the first bend was added (it asks about 0.4 more a query), lines of sight
 * a query on DC1, A1, BC1: 29.7, 30.1, 37.8 at 5; 29.3, 30.6, 37.0 at 2; 30.1, 31.0, 38.7 at 3; 29.9,
 * 31.2, 38.8 at 8. */
#define GALLOP_FIRST_BENDS 5

int on_pathbuf_reserve(on_pathbuf *b, size_t n)
{
    if (n <= b->cap) return 0;
    if (n > ((size_t)-1 / 2) / (3 * sizeof *b->p)) return -1;
    size_t cap = b->cap * 3, need = n * 3; /* on_grow counts doubles */
    if (on_grow((void **)&b->p, &cap, need, sizeof *b->p)) return -1;
    b->cap = cap / 3;
    return 0;
}

int on_pathbuf_push(on_pathbuf *b, const double p[3])
{
    if (on_pathbuf_reserve(b, b->n + 1)) return -1;
    memcpy(b->p + 3 * b->n++, p, 3 * sizeof *p);
    return 0;
}

void on_pathbuf_free(on_pathbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

double on_pathbuf_length(const on_pathbuf *b)
{
    double len = 0;
    for (size_t i = 1; i < b->n; i++) len += on_dist3(b->p + 3 * (i - 1), b->p + 3 * i);
    return len;
}

/* A segment's price: its cost under the sight's areas, or its length. */
static inline double seg_cost(const on_sight *sg, const double a[3], const double b[3])
{
    return sg->cost ? sg->cost(sg->ud, a, b) : on_dist3(a, b);
}

/* With costs, a replacement may tie with what it replaces up to rounding. */
#define COST_TOL 1e-9

double on_pathbuf_cost(const on_pathbuf *b, const on_sight *sight)
{
    double c = 0;
    for (size_t i = 1; i < b->n; i++) c += seg_cost(sight, b->p + 3 * (i - 1), b->p + 3 * i);
    return c;
}

/* Are two waypoints within 1e-9 leaves of each other (refine's stacked waypoints)? */
static inline int coincide(const double a[3], const double b[3])
{
    double dx = a[0] - b[0];
    if (!(dx * dx < 1e-18)) return 0; /* (the usual answer; the sum below is no smaller) */
    double dy = a[1] - b[1], dz = a[2] - b[2];
    return dx * dx + dy * dy + dz * dz < 1e-18;
}

/* One coordinate of a refined waypoint: X[k] moved to the exact minimiser of |P - X| + |X - N| along
 * axis k (j1 < j2 the other two), clamped to [lo, hi]; returns how far it moved. The axes are
 * constants at each call (refine_waypoint), so the compiler keeps the coordinates in registers. */
static inline __attribute__((always_inline)) double refine_axis(double *X, const double *P, const double *N, int k,
                                                                int j1, int j2, double lo, double hi, int *clamped)
{
    double A = (P[j1] - X[j1]) * (P[j1] - X[j1]) + (P[j2] - X[j2]) * (P[j2] - X[j2]);
    double B = (N[j1] - X[j1]) * (N[j1] - X[j1]) + (N[j2] - X[j2]) * (N[j2] - X[j2]);
    double sa = sqrt(A), sb = sqrt(B);
    double u = sa + sb > 0 ? P[k] + (N[k] - P[k]) * sa / (sa + sb) : 0.5 * (P[k] + N[k]);
    *clamped |= u < lo || u > hi;
    u = on_clampf(u, lo, hi);
    double d = fabs(u - X[k]);
    X[k] = u;
    return d;
}

/* Both free coordinates of waypoint X on face [flo, fhi] (in axis order), given its neighbours P
 * and N; returns the largest move, and sets *clamped when a face edge held either coordinate. */
static double refine_waypoint(double *X, const double *P, const double *N, const double *flo, const double *fhi,
                              int *clamped)
{
    double d;
    if (flo[0] == fhi[0]) { /* a face across x: y, z free (in this order: the calls are sequenced) */
        d = refine_axis(X, P, N, 1, 0, 2, flo[1], fhi[1], clamped);
        return on_maxf(d, refine_axis(X, P, N, 2, 0, 1, flo[2], fhi[2], clamped));
    }
    d = refine_axis(X, P, N, 0, 1, 2, flo[0], fhi[0], clamped);
    if (flo[1] == fhi[1]) return on_maxf(d, refine_axis(X, P, N, 2, 0, 1, flo[2], fhi[2], clamped));
    d = on_maxf(d, refine_axis(X, P, N, 1, 0, 2, flo[1], fhi[1], clamped));
    if (flo[2] == fhi[2]) return d;
    /* (a face of positive extent on all three axes does not occur between two cells; refined all
     * the same, as before) */
    return on_maxf(d, refine_axis(X, P, N, 2, 0, 1, flo[2], fhi[2], clamped));
}

/* Waypoints r0..r1 (a run that no face edge held in this sweep, between the anchors L and R: held
 * waypoints or the ends) moved onto the straight line L -> R where it crosses each one's face plane,
 * clamped into the face. Coordinate descent alone moves such a run towards that line by a fraction
 * a sweep (a long chain creeps: on DC1, 71 of 300 refines had not met the tolerance after 100
 * sweeps); the line is where the run ends up when its anchors stay. A waypoint whose plane the line
 * does not cross between L and R stays where it is. */
/* (always_inline here and on axis_target, jump_seen, jump_turns, farthest, farthest_turning and
 * corner_sight_ok: as gcc's profile-guided build inlines them; see search.c, h31ir5) */
static inline __attribute__((always_inline)) void fill_run(double *x, const double *faces, size_t r0, size_t r1,
                                                           const double *L, const double *R)
{
    for (size_t i = r0; i <= r1; i++) {
        const double *lo = faces + 6 * i, *hi = lo + 3;
        int k = lo[0] == hi[0] ? 0 : lo[1] == hi[1] ? 1 : 2;
        if (lo[k] != hi[k] || R[k] == L[k]) continue;
        double s = (lo[k] - L[k]) / (R[k] - L[k]);
        if (!(s >= 0 && s <= 1)) continue;
        double *X = x + 3 * i;
        for (int j = 0; j < 3; j++)
            if (j != k) X[j] = on_clampf(L[j] + s * (R[j] - L[j]), lo[j], hi[j]);
    }
}

/* Shortest path through the chain of shared faces: waypoint i lies on the face between corridor cells
 * i and i+1. Coordinate descent over the two free coordinates of each face with the exact minimiser
 * of |P - x| + |x - N| along one coordinate (clamped, which is exact for a convex function of one
 * variable), sweeping forward and back until nothing moves more than REFINE_TOL or the sweeps of the
 * budget are done; within a sweep, each run of waypoints no face edge held is laid on the straight
 * line between the held ones around it (fill_run) as soon as the sweep has passed it. */
int on_refine(on_pathbuf *path, const double *faces, size_t m, const double start[3], const double end[3])
{
    path->n = 0;
    if (on_pathbuf_push(path, start)) return -1;
    if (m == 0) return on_pathbuf_push(path, end);
    if (on_pathbuf_reserve(path, m + 2)) return -1;
    double *x = path->p + 3; /* waypoints 1..m */
    for (size_t i = 0; i < m; i++) {
        const double *lo = faces + 6 * i, *hi = lo + 3;
        /* start from the straight line start -> end, clamped onto the face: in open space that is
         * already the answer, and elsewhere it leaves less to move than the face centres */
        double u = (double)(i + 1) / (double)(m + 1);
        for (int k = 0; k < 3; k++) x[3 * i + k] = on_clampf(start[k] + u * (end[k] - start[k]), lo[k], hi[k]);
    }
    double *e = path->p + 3 * (m + 1);
    memcpy(e, end, 3 * sizeof *end);
    size_t sweeps = REFINE_BUDGET / m;
    sweeps = sweeps < REFINE_MIN_SWEEPS ? REFINE_MIN_SWEEPS : sweeps > REFINE_MAX_SWEEPS ? REFINE_MAX_SWEEPS : sweeps;
    for (size_t sweep = 0; sweep < sweeps; sweep++) {
        double moved = 0;
        int back = (int)(sweep & 1);
        size_t run = 0; /* free waypoints just passed: before i going forward, after it going back */
        for (size_t s = 0; s < m; s++) {
            size_t i = back ? m - 1 - s : s;
            double *X = x + 3 * i;
            /* the nearest neighbours that do not coincide with X: waypoints stacked on one corner
             * would otherwise pin one another (the objective has a kink there) */
            size_t pi = i, ni = i;
            const double *P = start, *N = e;
            while (pi > 0 && coincide(x + 3 * (pi - 1), X)) pi--;
            if (pi > 0) P = x + 3 * (pi - 1);
            while (ni + 1 < m && coincide(x + 3 * (ni + 1), X)) ni++;
            if (ni + 1 < m) N = x + 3 * (ni + 1);
            int held = 0;
            moved = on_maxf(moved, refine_waypoint(X, P, N, faces + 6 * i, faces + 6 * i + 3, &held));
            if (!held) {
                run++;
            } else if (run) {
                if (back) fill_run(x, faces, i + 1, i + run, X, i + run + 1 < m ? x + 3 * (i + run + 1) : e);
                else fill_run(x, faces, i - run, i - 1, i - run > 0 ? x + 3 * (i - run - 1) : start, X);
                run = 0;
            }
        }
        if (run) { /* the run reaching the last waypoint of the sweep: to the end it faces */
            if (back) fill_run(x, faces, 0, run - 1, start, run < m ? x + 3 * run : e);
            else fill_run(x, faces, m - run, m - 1, m - run > 0 ? x + 3 * (m - run - 1) : start, e);
        }
        if (moved < REFINE_TOL) break;
    }
    path->n = m + 2;
    return 0;
}

/* Are a and b the same point (exactly)? */
static inline int same_point(const double a[3], const double b[3])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Drop exactly repeated waypoints (several faces meeting at one corner pull their waypoints onto it).
 * Only exact repeats: two waypoints 1e-14 apart may sit on opposite sides of a lattice plane, and the
 * segment after the one dropped would then start a rounding error inside a blocked voxel. Collinear
 * and nearly equal points stay; smoothing removes them with a line-of-sight check. */
void on_simplify(on_pathbuf *path, unsigned char *clear)
{
    size_t w = 1;
    for (size_t r = 1; r < path->n; r++) {
        const double *p = path->p + 3 * (w - 1), *c = path->p + 3 * r;
        if (same_point(p, c) && r + 1 < path->n) continue;
        if (w != r) {
            memmove(path->p + 3 * w, c, 3 * sizeof *c);
            if (clear) clear[w] = clear[r];
        }
        w++;
    }
    path->n = w;
}

/* Can smoothing go from kept waypoint i straight to waypoint c, as far as the segment goes? In sight
 * and, with costs, not dearer than the waypoints it skips. */
static inline __attribute__((always_inline)) int jump_seen(const on_pathbuf *path, const on_sight *sg, size_t i,
                                                           size_t c)
{
    const double *P = path->p;
    if (!sg->visible(sg->ud, P + 3 * i, P + 3 * c)) return 0;
    if (!sg->cost) return 1;
    double chain = 0;
    for (size_t k = i; k < c; k++) chain += sg->cost(sg->ud, P + 3 * k, P + 3 * (k + 1));
    return sg->cost(sg->ud, P + 3 * i, P + 3 * c) <= chain + COST_TOL;
}

/* And the turns: at i (from prev, the kept waypoint before it, NULL at the start) and at c (on to
 * c + 1, as the path before smoothing goes) keep to the visibility rule: a turn exactly on an edge
 * where blocked voxels meet could slip through the gap there. The turns of the path before smoothing
 * are sound (each waypoint lies on the face two consecutive cells share), so c = i + 1 always passes
 * once i did: smoothing never gets stuck. */
static inline __attribute__((always_inline)) int jump_turns(const on_pathbuf *path, const on_sight *sg,
                                                            const double *prev, size_t i, size_t c)
{
    const double *P = path->p;
    const unsigned char *clear = sg->clear;
    return (!prev || (clear && clear[i]) || sg->turn_ok(sg->ud, prev, P + 3 * i, P + 3 * c)) &&
           (c + 1 >= path->n || (clear && clear[c]) || sg->turn_ok(sg->ud, P + 3 * i, P + 3 * c, P + 3 * (c + 1)));
}

/* The farthest waypoint after i that jump_seen allows, and with turns, jump_turns too, among the
 * slots (ok, bad) (bad == ns: none known to fail) of ns slots, slot r holding waypoint w[r] (w NULL:
 * waypoint r). greedy: gallop forward (from ok, `first`, then twice as far each time, and the last
 * one) while allowed, then bisect between the last one allowed and the first one not; binary: bisect
 * over the whole rest. Returns the slot. */
static inline __attribute__((always_inline)) size_t farthest(const on_pathbuf *path, const on_sight *sg,
                                                             const double *prev, size_t i, const size_t *w,
                       size_t ns, size_t ok, size_t bad, int mode, int turns, size_t first)
{
#define WP(r) (w ? w[r] : (r))
    if (bad == ns) {
        if (mode == ON_SMOOTH_GREEDY) {
            for (size_t step = first; ok < ns - 1; step *= 2) {
                size_t c = ok + step < ns - 1 ? ok + step : ns - 1;
                if (!(jump_seen(path, sg, i, WP(c)) && (!turns || jump_turns(path, sg, prev, i, WP(c))))) {
                    bad = c;
                    break;
                }
                ok = c;
            }
        } else {
            bad = ns - 1;
            if (jump_seen(path, sg, i, WP(bad)) && (!turns || jump_turns(path, sg, prev, i, WP(bad)))) ok = bad;
        }
    }
    while (bad < ns && bad - ok > 1) {
        size_t mid = ok + (bad - ok) / 2;
        if (jump_seen(path, sg, i, WP(mid)) && (!turns || jump_turns(path, sg, prev, i, WP(mid)))) ok = mid;
        else bad = mid;
    }
    return ok;
#undef WP
}

/* farthest without the turns, then, when the turns at the slot it settles on fail, again below it with
 * the turns asked at every candidate (on_smooth's rule). Returns the slot. */
static inline __attribute__((always_inline)) size_t farthest_turning(const on_pathbuf *path, const on_sight *sg,
                                                                     const double *prev, size_t i,
                               const size_t *w, size_t ns, size_t ok, size_t bad, int mode, size_t first)
{
    size_t r = farthest(path, sg, prev, i, w, ns, ok, bad, mode, 0, first);
    if (r > ok && !jump_turns(path, sg, prev, i, w ? w[r] : r)) r = farthest(path, sg, prev, i, w, ns, ok, r, mode, 1, first);
    return r;
}

/* Does the path bend at x, from a on to b, by more than about 1e-6 radians? */
static inline int bends(const double *a, const double *x, const double *b)
{
    double u[3] = {x[0] - a[0], x[1] - a[1], x[2] - a[2]}, v[3] = {b[0] - x[0], b[1] - x[1], b[2] - x[2]};
    double cx = u[1] * v[2] - u[2] * v[1], cy = u[2] * v[0] - u[0] * v[2], cz = u[0] * v[1] - u[1] * v[0];
    double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    return cx * cx + cy * cy + cz * cz > 1e-12 * uu * vv;
}

/* String pulling by line of sight: from each kept waypoint, jump to the farthest one allowed (in sight,
 * and with costs not dearer, and its turns keep to the rule). greedy: O(log n) checks per kept
 * waypoint instead of scanning back from the end (O(n)), and as short with relaxation after it
 * (measured: mean length ratio within 0.001 on the benchmark maps, p99 within 0.003). binary: bisect
 * over the whole rest of the path. Both assume what they bisect is monotone. The turns are asked only
 * at the waypoint the sight search settles on (they have never failed there on the benchmark maps:
 * 14.2 turn checks a query on DC1 before, the same paths): when they fail, the search is redone below
 * it with the turns asked at every candidate.
 * greedy asks only about the waypoints where the path bends (and the last): a refined path runs
 * straight through most of its faces (DC1: 45 waypoints, 18 bends, a query), and a waypoint inside a
 * straight run is seldom a corner the result needs (when the farthest waypoint in sight lies inside a
 * run, the step settles on the bend before it: a corner or two more on long square waves; on the 13
 * maps mean ratios within +0.0002, c77b98b). The next waypoint is always allowed (the input's
 * segments and turns are sound), so each step may still settle on it. Up to SMOOTH_BENDS bends (a
 * longer path asks about every waypoint). */
#define SMOOTH_BENDS 512
void on_smooth(on_pathbuf *path, const on_sight *sg, int mode)
{
    if (path->n < 3) return;
    size_t w = 0, i = 0, n = path->n;
    size_t slot[SMOOTH_BENDS + 2], ns = 0, s0 = 1; /* slot 0: the next waypoint, filled in at each step */
    if (mode == ON_SMOOTH_GREEDY) {
        const double *P = path->p;
        slot[ns++] = 0;
        for (size_t j = 1, last = 0; j + 1 < n && ns <= SMOOTH_BENDS; j++)
            if (bends(P + 3 * last, P + 3 * j, P + 3 * (j + 1))) slot[ns++] = last = j;
        if (ns <= SMOOTH_BENDS) slot[ns++] = n - 1;
        else ns = 0;
    }
    while (i < n - 1) {
        /* the output so far is pts[0..w] (pts[w] == waypoint i); waypoints after i are untouched, and
         * pts[w - 1] stays as it is until this step is done */
        const double *prev = w > 0 ? path->p + 3 * (w - 1) : NULL;
        size_t ok;
        if (ns) { /* the slots from s0 - 1: the next waypoint, then the bends after it */
            while (s0 < ns && slot[s0] <= i + 1) s0++;
            size_t *sl = slot + s0 - 1, m = ns - s0 + 1;
            sl[0] = i + 1;
            size_t r = farthest_turning(path, sg, prev, i, sl, m, 0, m, mode, GALLOP_FIRST_BENDS);
            ok = sl[r];
            if (r == 0 && m > 1 && sl[1] > i + 2) /* no bend allowed: the farthest before the first */
                ok = farthest_turning(path, sg, prev, i, NULL, n, i + 1, sl[1], mode, 0);
        } else {
            ok = farthest_turning(path, sg, prev, i, NULL, n, i + 1, n, mode, GALLOP_FIRST);
        }
        memmove(path->p + 3 * ++w, path->p + 3 * ok, 3 * sizeof *path->p);
        i = ok;
    }
    path->n = w + 1;
}

/* May the path run pa -> A -> X -> B -> nb (pa, nb: the waypoints around, NULL at the ends)? Both
 * segments in sight, and the turns at A, X and B allowed by the rule (on_tree_turn_ok): a corner moved
 * onto a lattice edge could otherwise slip through a zero-width gap there. corner_ok asks the turn at
 * X first: a corner slid onto an obstacle's edge fails it often, and it costs less than a line of sight
 * (measured on DC1: 17,000 instructions a query fewer than with the segments first, the same answers;
 * the other orders tried cost more); corner_sight_ok is the rest, for a caller that asked that turn
 * itself (snap_to_edge picks its tries by it). *last_blocked (0: A -> X, 1: X -> B) is the segment found
 * blocked the last time, asked first: a slide's tries towards one target tend to fail on the same
 * segment (measured: 0.2-1.2 fewer lines of sight a query on the 13 maps, DC1 31.3 -> 30.6; the same
 * answers). */
static inline __attribute__((always_inline)) int corner_sight_ok(const on_sight *sg, const double *pa,
                                                                 const double A[3], const double X[3],
                           const double B[3], const double *nb, int *last_blocked)
{
    const double *s0 = A, *e0 = X, *s1 = X, *e1 = B;
    if (*last_blocked) s0 = X, e0 = B, s1 = A, e1 = X;
    if (!sg->visible(sg->ud, s0, e0)) return 0;
    if (!sg->visible(sg->ud, s1, e1)) {
        *last_blocked = !*last_blocked;
        return 0;
    }
    /* X exactly on A (or B): the corner is dropped in effect, and the path turns at A from pa on to B
     * (at B from A on to nb); asked as pa -> A -> X, that turn has a side of zero length, which the
     * rule lets pass (on_tree_turn_ok counts it as every side). A slide's target is exactly a
     * neighbour when the corner differs from it on the slide's axis alone (axis_target). */
    const double *on = same_point(X, A) ? B : X, *from = same_point(X, B) ? A : X;
    return (!pa || sg->turn_ok(sg->ud, pa, A, on)) && (!nb || sg->turn_ok(sg->ud, from, B, nb));
}

static int corner_ok(const on_sight *sg, const double *pa, const double A[3], const double X[3], const double B[3],
                     const double *nb, int *last_blocked)
{
    return sg->turn_ok(sg->ud, A, X, B) && corner_sight_ok(sg, pa, A, X, B, nb, last_blocked);
}

/* Move corner P (between A and B) from P towards C, as far as corner_ok holds (bisection, `steps`
 * halvings). Returns 1 when it moved, 0 when not, -1 when no point tried was allowed. */
static int slide(const on_sight *sg, const double *pa, const double A[3], double P[3], const double B[3], const double *nb,
                 const double C[3], int steps)
{
    double before = seg_cost(sg, A, P) + seg_cost(sg, P, B);
    double lo = 0, hi = 1, best[3];
    int last_blocked = 0;
    for (int it = 0; it <= steps; it++) {
        double mid = it == 0 ? 1 : 0.5 * (lo + hi), X[3];
        for (int k = 0; k < 3; k++) X[k] = P[k] + mid * (C[k] - P[k]);
        if (corner_ok(sg, pa, A, X, B, nb, &last_blocked) &&
            (!sg->cost || seg_cost(sg, A, X) + seg_cost(sg, X, B) <= before + COST_TOL)) { /* (costs: no dearer) */
            lo = mid;
            memcpy(best, X, sizeof best);
            if (it == 0) break; /* the whole move is free */
        } else {
            hi = mid;
        }
    }
    if (lo == 0) return -1;
    double after = seg_cost(sg, A, best) + seg_cost(sg, best, B);
    if (!(after < before)) return 0;
    memcpy(P, best, sizeof best);
    return 1;
}

/* Where corner P (between A and B) would go along axis k alone: C is P with coordinate k at the exact
 * minimiser of |A - X| + |X - B| (as in refine); returns that length. */
static inline __attribute__((always_inline)) double axis_target(const double A[3], const double P[3],
                                                                const double B[3], int k, double C[3])
{
    double SA = 0, SB = 0;
    for (int j = 0; j < 3; j++)
        if (j != k) {
            SA += (A[j] - P[j]) * (A[j] - P[j]);
            SB += (B[j] - P[j]) * (B[j] - P[j]);
        }
    double sa = sqrt(SA), sb = sqrt(SB);
    memcpy(C, P, 3 * sizeof *C);
    C[k] = sa + sb > 0 ? A[k] + (B[k] - A[k]) * sa / (sa + sb) : 0.5 * (A[k] + B[k]);
    return on_dist3(A, C) + on_dist3(C, B);
}

/* The lattice lines a snap tries at most (the shortest whose turn at the corner passes). */
#define SNAP_TRIES 2

/* Corner P (between A and B) onto an obstacle edge: the slides leave a corner near the edge it wraps
 * (a segment grazes the edge before the corner reaches it), and the obstacles are voxels, so that edge
 * is a lattice line. For each axis e, the lattice line along e nearest P (the other two coordinates
 * rounded), at the exact minimiser of |A - X| + |X - B| along e; those that could gain `thr` of the
 * two segments' length are tried shortest first, the turn at the corner (cheap) before the lines of
 * sight, at most SNAP_TRIES of them. Returns 1 when the corner moved. Measured (2026-11-27, one pass
 * without the second sweep below, bench/query -p 1): DB2's mean length ratio 0.93078 -> 0.93038, DC1
 * 0.92839 -> 0.92822, for 1.8 and 0.8 more lines of sight a query; one try: 0.93047; the 4 lines
 * around P along each axis, or the nearest lattice point as well: no better; the snap before the
 * slides: 0.93058. Rounding the slide's bisection onto lattice planes instead: longer paths. */
static int snap_to_edge(const on_sight *sg, const double *pa, const double A[3], double P[3], const double B[3],
                        const double *nb, double thr)
{
    double now = on_dist3(A, P) + on_dist3(P, B), cand[3][3], len[3];
    int nc = 0;
    for (int e = 0; e < 3; e++) {
        double T[3], X[3];
        for (int j = 0; j < 3; j++) T[j] = j == e ? P[j] : floor(P[j] + 0.5);
        if (same_point(T, P)) continue;
        double l = axis_target(A, T, B, e, X);
        if (!(now - l > thr * now)) continue;
        int b = nc++;
        for (; b > 0 && len[b - 1] > l; b--) { /* (kept in order of length) */
            memcpy(cand[b], cand[b - 1], sizeof cand[b]);
            len[b] = len[b - 1];
        }
        memcpy(cand[b], X, sizeof X);
        len[b] = l;
    }
    double before = sg->cost ? seg_cost(sg, A, P) + seg_cost(sg, P, B) : now;
    for (int c = 0, tries = 0; c < nc && tries < SNAP_TRIES; c++) {
        const double *X = cand[c];
        if (!sg->turn_ok(sg->ud, A, X, B)) continue;
        tries++;
        int last_blocked = 0;
        if (corner_sight_ok(sg, pa, A, X, B, nb, &last_blocked) &&
            (!sg->cost || seg_cost(sg, A, X) + seg_cost(sg, X, B) < before)) {
            memcpy(P, X, 3 * sizeof *P);
            return 1;
        }
    }
    return 0;
}

/* Up to RELAX_TRACK corners, relaxation remembers which to visit again and the axes found blocked;
 * corners further along are visited in each pass's first sweep only. A pass sweeps again while a
 * corner is to be visited again, at most RELAX_SWEEPS times. */
#define RELAX_TRACK 128
#define RELAX_SWEEPS 8

/* One visit of corner i: dropped when its neighbours see each other, else slid along each axis and
 * snapped onto an edge (snap_to_edge). Whether it can be dropped is not asked when skip_drop is set,
 * nor when dropping it could gain less than `thr` of its two segments' length unless it lies on the
 * straight line between its neighbours (to 1e-9): such a corner bends round the obstacle it touches,
 * so its neighbours seldom see each other (measured with the repeated sweeps of on_relax: lines of
 * sight a query DB2 41.9 -> 40.3, DC1 34.7 -> 33.3; finalize DC1 140,058 -> 135,676 instructions a
 * query, A1 170,356 -> 162,783; mean ratios +0.00000 to +0.00016, DB2 0.92984 -> 0.92990). An axis is not
 * slid along when skip_blocked is set and its slide at the last visit found no allowed point in the
 * same direction (blocked[k], NULL when not kept; updated). Returns -1 when dropped, 1 when it moved,
 * 0 when not. */
static int relax_corner(on_pathbuf *path, const on_sight *sg, size_t i, double thr, int steps, int skip_drop,
                        signed char *blocked, int skip_blocked)
{
    double *A = path->p + 3 * (i - 1), *P = path->p + 3 * i, *B = path->p + 3 * (i + 1);
    const double *pa = i >= 2 ? path->p + 3 * (i - 2) : NULL;
    const double *nb = i + 2 < path->n ? path->p + 3 * (i + 2) : NULL;
    double now = on_dist3(A, P) + on_dist3(P, B), bend = now - on_dist3(A, B);
    if (bend < thr * now && bend > 1e-9 * now) skip_drop = 1;
    if (!skip_drop && !(sg->known_blocked && sg->known_blocked(sg->ud, A, B)) && sg->visible(sg->ud, A, B) &&
        (!pa || sg->turn_ok(sg->ud, pa, A, B)) && (!nb || sg->turn_ok(sg->ud, A, B, nb)) &&
        (!sg->cost || seg_cost(sg, A, B) <= seg_cost(sg, A, P) + seg_cost(sg, P, B) + COST_TOL)) {
        /* the corner is not needed */
        memmove(P, B, 3 * sizeof *P * (path->n - i - 1));
        path->n--;
        return -1;
    }
    /* the axes in the order of what their moves could gain (measured: in axis order a slide
     * along y could take a corner off the edge a slide along z would have followed, Simple's
     * p99 ratio 1.0016 with the refine of 3 sweeps; 0.9797 in this order) */
    int order[3] = {0, 1, 2};
    double C[3][3], full[3]; /* (each axis's target, kept while the corner has not moved) */
    for (int k = 0; k < 3; k++) full[k] = axis_target(A, P, B, k, C[k]);
    for (int a = 1; a < 3; a++)
        for (int b = a; b > 0 && full[order[b]] < full[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    int moved = 0; /* (once the corner moved, each target is worked out again) */
    for (int o = 0; o < 3; o++) {
        int k = order[o];
        double f = full[k];
        if (moved) {
            f = axis_target(A, P, B, k, C[k]);
            now = on_dist3(A, P) + on_dist3(P, B);
        }
        /* pass 0 tries only moves that could gain 1.5 thousandths of the two segments'
         * length, with two halvings (measured: 35-40 checks a query instead of 59 for 1e-3
         * leaves and three, mean lengths within 0.0006; 1.5e-3 instead of 1e-3, with
         * GALLOP_FIRST 15: A1 407,680 -> 398,037 instructions a query, mean ratios of the
         * 13 maps -0.0003 to +0.0002, p99 ratios all <= 0.9963; 1.55e-3 and more lengthen
         * spec/06's wall with a hole past its bound); each later pass looks 4 times closer,
         * one halving finer, so more passes buy precision */
        if (!(now - f > thr * now)) continue;
        signed char dir = C[k][k] > P[k] ? 1 : -1;
        if (skip_blocked && blocked && blocked[k] == dir) continue;
        int r = slide(sg, pa, A, P, B, nb, C[k], steps);
        moved |= r > 0;
        if (blocked) blocked[k] = r < 0 ? dir : 0;
    }
    moved |= snap_to_edge(sg, pa, A, P, B, nb, thr);
    return moved;
}

/* Corner relaxation: after smoothing, each kept corner P (between A and B) lies where the corridor of
 * cells bent, on a cell face, which need not be where the obstacle is (the corridor may pass through
 * leaves at some distance from it). Each pass drops a corner whose neighbours see each other, then
 * slides it along each axis towards the exact 1D minimiser of |A - X| + |X - B| (as in refine), as
 * far as both its segments stay in sight and the turns at A, P and B keep to the rule (corner_ok), the
 * axis whose move could gain most first, and then onto the obstacle edge nearest it (snap_to_edge).
 * A corner's best place depends on its neighbours', and the next one moves after it: so each pass
 * sweeps the corners, then sweeps again over those whose neighbour moved (or was dropped) since their
 * visit, at the same precision and without the axes found blocked in that direction at their last
 * visit, until none is left (at most RELAX_SWEEPS sweeps). In the first sweep of the first pass, a
 * corner whose previous corner has not moved since smoothing is not asked whether it can be dropped
 * (smoothing found its neighbours out of sight, or did not ask under its monotone assumption; a later
 * sweep asks when a neighbour moved). `passes` passes, each finer than the one before.
 * Measured (2026-11-27, bench/query -p 1, 300 scenarios a map; make bench-query-ir): against one sweep
 * without the snap, DB2's mean length ratio 0.93078 -> 0.92990, BC1 0.94389 -> 0.94340, every map
 * lower (by 0.0001-0.0014); lines of sight a query DC1 31.3 -> 33.3, DB2 36.5 -> 40.3; finalize DC1
 * 122,232 -> 135,676 instructions a query, Complex 115,309 -> 135,168, A1 154,742 -> 162,783. Two
 * sweeps a pass (and every drop asked): DB2 0.92997, finalize DC1 137,300, A1 166,741. A second sweep
 * visiting every corner at a quarter of the threshold and one halving finer (what relax = 2 did): DB2
 * 0.92978 for 55.9 lines of sight a query (DC1 391,692 instructions a query in all); over the corners
 * whose neighbour moved, so: 0.93003 for 49.3. The skipped blocked axes: 1.7 fewer lines of sight on
 * DB2 for +0.00007; the skipped first drop checks 1.2 fewer for the same mean. */
void on_relax(on_pathbuf *path, const on_sight *sg, int passes)
{
    double thr = 1.5e-3;
    int steps = 2;
    unsigned char again[RELAX_TRACK];     /* visit corner i (again): in this sweep when not yet passed */
    signed char blocked[RELAX_TRACK][3]; /* per axis, the direction its last slide found blocked */
    for (int pass = 0; pass < passes && path->n >= 3; pass++, thr *= 0.25, steps += steps < 8) {
        memset(again, 0, sizeof again);
        memset(blocked, 0, sizeof blocked);
        int left = 1; /* corners to visit again */
        for (int sweep = 0; sweep < RELAX_SWEEPS && left; sweep++) {
            int prev_moved = 0; /* the corner before i moved or was dropped in this sweep */
            left = 0;
            for (size_t i = 1; i + 1 < path->n; i++) {
                int tracked = i < RELAX_TRACK;
                if (sweep > 0 && !(tracked && again[i])) {
                    prev_moved = 0;
                    continue;
                }
                if (tracked) again[i] = 0;
                int r = relax_corner(path, sg, i, thr, steps, pass == 0 && sweep == 0 && !prev_moved,
                                     tracked ? blocked[i] : NULL, sweep > 0);
                prev_moved = r != 0;
                if (r < 0) { /* dropped: the corners after it move down one */
                    if (tracked) {
                        memmove(again + i, again + i + 1, RELAX_TRACK - 1 - i);
                        memmove(blocked[i], blocked[i + 1], 3 * (RELAX_TRACK - 1 - i));
                        again[RELAX_TRACK - 1] = 0;
                        memset(blocked[RELAX_TRACK - 1], 0, 3);
                        again[i] = 1; /* (the corner after it, visited next, has a new neighbour) */
                    }
                    i--; /* (the loop's step: the corner after it) */
                }
                /* its neighbours: the one before in the next sweep, the one after in this one */
                size_t before = r < 0 ? i : i - 1;
                if (r != 0 && before >= 1 && before < RELAX_TRACK) again[before] = 1, left = 1;
                if (r > 0 && i + 1 < RELAX_TRACK) again[i + 1] = 1;
            }
        }
    }
}
