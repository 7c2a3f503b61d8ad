/*
 * test_tighten.c -- the path-tightening stages (tighten.c) on hand-made corridors, without a search:
 * refine through chains of faces whose shortest paths are known in closed form, simplify's exact
 * repeats, smooth and relax against an analytic obstacle (one axis-aligned block).
 */
#include "minitest.h"
#include "tighten.h"
#include "octonav.h"

#include <math.h>
#include <string.h>

static double len(const on_pathbuf *p) { return on_pathbuf_length(p); }

static void face(double *f, double x0, double y0, double z0, double x1, double y1, double z1)
{
    f[0] = x0, f[1] = y0, f[2] = z0, f[3] = x1, f[4] = y1, f[5] = z1;
}

/* An open corridor: faces x = 1, 2, 3 spanning [0,4]^2; the straight line from (0,0.5,0.5) to
 * (4,3.5,3.5) crosses them all, so refine returns it (length sqrt(16 + 9 + 9)). */
static void refine_straight(void)
{
    double f[18];
    for (int i = 0; i < 3; i++) face(f + 6 * i, i + 1, 0, 0, i + 1, 4, 4);
    on_pathbuf p = {0};
    double a[3] = {0, 0.5, 0.5}, b[3] = {4, 3.5, 3.5};
    CHECK(on_refine(&p, f, 3, a, b) == 0);
    CHECK_EQ_INT(p.n, 5);
    CHECK(fabs(len(&p) - sqrt(34.0)) < 1e-9);
    for (size_t i = 1; i + 1 < p.n; i++) CHECK(fabs(p.p[3 * i] - (double)i) == 0); /* on its face */
    on_pathbuf_free(&p);
}

/* A bend: from (0.5,0.5,0.5) up through the face y = 1 of a 1x1 column, then along x through the face
 * x = 1 at height y in [1,2]: the corner is the edge point (1,1,z); shortest length from (0.5,0.5,0.5)
 * to (2.5,1.5,0.5) via the corner region: the straight line passes y = 1 at x = 1 exactly, so the
 * length is the straight distance sqrt(4 + 1). A second case forces a real corner. */
static void refine_corner(void)
{
    /* cells: A = [0,1]^3, B = [0,1]x[1,3]x[0,1], C = [1,3]x[2,3]x[0,1]; faces A|B: y = 1, x,z in
     * [0,1]; B|C: x = 1, y in [2,3], z in [0,1]. From (0.5,0.5,0.5) to (2.5,2.5,0.5): the path must
     * bend at the edge x = 1, y = 2: length = |(0.5,0.5)->(1,2)| + |(1,2)->(2.5,2.5)| in the xy plane. */
    double f[12];
    face(f, 0, 1, 0, 1, 1, 1);
    face(f + 6, 1, 2, 0, 1, 3, 1);
    on_pathbuf p = {0};
    double a[3] = {0.5, 0.5, 0.5}, b[3] = {2.5, 2.5, 0.5};
    CHECK(on_refine(&p, f, 2, a, b) == 0);
    CHECK_EQ_INT(p.n, 4);
    double want = sqrt(0.25 + 2.25) + sqrt(2.25 + 0.25);
    CHECK(fabs(len(&p) - want) < 1e-6);
    CHECK(fabs(p.p[3 * 2 + 0] - 1) == 0 && fabs(p.p[3 * 2 + 1] - 2) < 1e-3);
    /* no faces: the straight segment */
    CHECK(on_refine(&p, f, 0, a, b) == 0);
    CHECK_EQ_INT(p.n, 2);
    on_pathbuf_free(&p);
}

/* A long chain with one bend: faces x = 1 .. 40 spanning y, z in [0, 10], except x = 20, which only
 * opens y in [5, 10]. From (0, 0.5, 0.5) to (41, 0.5, 0.5) the shortest path bends at (20, 5, 0.5),
 * with every other waypoint on the two straight legs. 40 faces get 2 sweeps (the budget of about 100
 * waypoint updates): coordinate descent alone would creep along each leg by a fraction a sweep; the
 * runs laid straight between the held waypoints give the exact path. */
static void refine_long_chain(void)
{
    double f[6 * 40];
    for (int i = 0; i < 40; i++) face(f + 6 * i, i + 1, i + 1 == 20 ? 5 : 0, 0, i + 1, 10, 10);
    on_pathbuf p = {0};
    double a[3] = {0, 0.5, 0.5}, b[3] = {41, 0.5, 0.5}, bend[3] = {20, 5, 0.5};
    CHECK(on_refine(&p, f, 40, a, b) == 0);
    CHECK_EQ_INT(p.n, 42);
    double want = sqrt(400 + 4.5 * 4.5) + sqrt(441 + 4.5 * 4.5);
    CHECK(fabs(len(&p) - want) < 1e-9);
    for (int k = 0; k < 3; k++) CHECK(fabs(p.p[3 * 20 + k] - bend[k]) < 1e-9);
    for (size_t i = 1; i + 1 < p.n; i++) { /* each waypoint on its face, on the leg through it */
        double x = (double)i, y = x < 20 ? 0.5 + 4.5 * x / 20 : 5 - 4.5 * (x - 20) / 21;
        CHECK(p.p[3 * i] == x && fabs(p.p[3 * i + 1] - y) < 1e-9 && fabs(p.p[3 * i + 2] - 0.5) < 1e-9);
    }
    on_pathbuf_free(&p);
}

static void simplify_repeats(void)
{
    on_pathbuf p = {0};
    double pts[][3] = {{0, 0, 0}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {2, 0, 0}, {2, 0, 1e-14}, {3, 0, 0}, {3, 0, 0}};
    for (int i = 0; i < 8; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    on_simplify(&p, NULL);
    /* exact repeats gone, the near one stays, the end point is kept even when it repeats */
    CHECK_EQ_INT(p.n, 6);
    CHECK(p.p[3 * 5] == 3 && p.p[3 * 4] == 3 && p.p[3 * 3 + 2] == 1e-14);
    on_pathbuf_free(&p);
}

/* One blocked box [1,2] x [0,2] x [-10,10] (z is irrelevant): segments in sight when they miss it. */
typedef struct block {
    double lo[3], hi[3];
    int calls;
} block;

static int seg_hits_box(const double a[3], const double b[3], const double lo[3], const double hi[3])
{
    double t0 = 0, t1 = 1;
    for (int k = 0; k < 3; k++) {
        double d = b[k] - a[k];
        if (d == 0) {
            if (a[k] <= lo[k] || a[k] >= hi[k]) return 0; /* touching the faces is allowed */
            continue;
        }
        double u = (lo[k] - a[k]) / d, v = (hi[k] - a[k]) / d;
        if (u > v) {
            double w = u;
            u = v;
            v = w;
        }
        if (u > t0) t0 = u;
        if (v < t1) t1 = v;
        if (t0 >= t1) return 0;
    }
    return 1;
}

static int vis(void *ud, const double a[3], const double b[3])
{
    block *bl = ud;
    bl->calls++;
    return !seg_hits_box(a, b, bl->lo, bl->hi);
}

static int turn_any(void *ud, const double a[3], const double x[3], const double b[3])
{
    (void)ud, (void)a, (void)x, (void)b;
    return 1;
}

/* A zigzag below the block from (0,1,0) to (3,1,0): smoothing keeps one way round, every segment in
 * sight and shorter; relaxation never lengthens it and cannot beat the shortest path round the block
 * (via its corners (1,0) and (2,0): 2 sqrt 2 + 1). */
static void smooth_relax_block(int mode)
{
    block bl = {{1, 0, -10}, {2, 2, 10}, 0};
    on_sight s = {vis, turn_any, &bl, NULL, NULL, NULL};
    on_pathbuf p = {0};
    double pts[][3] = {{0, 1, 0}, {0.5, 0.2, 0}, {0.8, -0.5, 0}, {1.5, -0.6, 0}, {2.2, -0.5, 0}, {2.6, 0.2, 0}, {3, 1, 0}};
    for (int i = 0; i < 7; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    for (size_t i = 1; i < p.n; i++) CHECK(vis(&bl, p.p + 3 * (i - 1), p.p + 3 * i)); /* a valid input */
    double before = len(&p);
    on_smooth(&p, &s, mode);
    double smoothed = len(&p);
    CHECK(smoothed < before);
    CHECK(p.n >= 3); /* the block is in the way of the straight segment */
    for (size_t i = 1; i < p.n; i++) CHECK(vis(&bl, p.p + 3 * (i - 1), p.p + 3 * i));
    CHECK(p.p[0] == 0 && p.p[3 * (p.n - 1)] == 3);
    on_relax(&p, &s, 6);
    for (size_t i = 1; i < p.n; i++) CHECK(vis(&bl, p.p + 3 * (i - 1), p.p + 3 * i));
    double want = 2 * sqrt(2.0) + 1;
    CHECK(len(&p) <= smoothed);
    CHECK(len(&p) >= want - 1e-9); /* never shorter than the true shortest path round the block */
    on_pathbuf_free(&p);
}

static int turn_calls;
static int turn_count(void *ud, const double a[3], const double x[3], const double b[3])
{
    (void)ud, (void)a, (void)x, (void)b;
    turn_calls++;
    return 1;
}

/* on_sight's clear flags: simplify drops a flag with its waypoint; smoothing asks turn_ok only at
 * waypoints not flagged, and its path is the one it makes without flags. */
static void smooth_clear_flags(void)
{
    double pts[][3] = {{0, 1, 0}, {0.5, 0.2, 0}, {0.8, -0.5, 0}, {0.8, -0.5, 0}, {1.5, -0.6, 0}, {2.2, -0.5, 0},
                       {2.6, 0.2, 0}, {3, 1, 0}};
    unsigned char flags[8] = {0, 1, 0, 1, 1, 0, 1, 0};
    on_pathbuf p = {0}, r = {0};
    for (int i = 0; i < 8; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0 && on_pathbuf_push(&r, pts[i]) == 0);
    on_simplify(&p, flags);
    on_simplify(&r, NULL);
    CHECK_EQ_INT(p.n, 7); /* the repeat (index 3) went, and with it its flag */
    unsigned char want[7] = {0, 1, 0, 1, 0, 1, 0};
    CHECK(memcmp(flags, want, 7) == 0);
    block bl = {{1, 0, -10}, {2, 2, 10}, 0};
    on_sight plain = {vis, turn_count, &bl, NULL, NULL, NULL}, flagged = {vis, turn_count, &bl, NULL, flags, NULL};
    turn_calls = 0;
    on_smooth(&r, &plain, ON_SMOOTH_GREEDY);
    int calls_plain = turn_calls;
    turn_calls = 0;
    on_smooth(&p, &flagged, ON_SMOOTH_GREEDY);
    CHECK(turn_calls < calls_plain);
    CHECK_EQ_INT(p.n, r.n);
    CHECK(memcmp(p.p, r.p, 3 * p.n * sizeof *p.p) == 0);
    /* every interior waypoint flagged: no turn is asked at all */
    on_pathbuf_free(&p);
    for (int i = 0; i < 8; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    unsigned char all[8] = {0, 1, 1, 1, 1, 1, 1, 0};
    on_simplify(&p, all);
    flagged.clear = all;
    turn_calls = 0;
    on_smooth(&p, &flagged, ON_SMOOTH_GREEDY);
    CHECK_EQ_INT(turn_calls, 0);
    CHECK_EQ_INT(p.n, r.n);
    on_pathbuf_free(&p);
    on_pathbuf_free(&r);
}

/* In open space smoothing leaves the straight segment. */
static void smooth_open(void)
{
    block bl = {{10, 10, 10}, {11, 11, 11}, 0};
    on_sight s = {vis, turn_any, &bl, NULL, NULL, NULL};
    on_pathbuf p = {0};
    for (int i = 0; i <= 40; i++) {
        double q[3] = {i * 0.25, (i % 3) * 0.1, 0};
        CHECK(on_pathbuf_push(&p, q) == 0);
    }
    on_smooth(&p, &s, ON_SMOOTH_GREEDY);
    CHECK_EQ_INT(p.n, 2);
    CHECK(fabs(len(&p) - sqrt(100.0 + 0.01)) < 1e-12);
    on_pathbuf_free(&p);
}

/* A straight row of waypoints 0.25 apart in which a segment is in sight up to 2.5 long: smoothing
 * keeps every tenth. */
static int vis_short(void *ud, const double a[3], const double b[3])
{
    (void)ud;
    return b[0] - a[0] <= 2.5 + 1e-9;
}

/* Refuses every turn at x = 2.5 (waypoint 10 of the row), counting the turns asked. */
static int turn_not_at_2_5(void *ud, const double a[3], const double x[3], const double b[3])
{
    (void)ud, (void)a, (void)b;
    turn_calls++;
    return x[0] != 2.5;
}

static void push_row(on_pathbuf *p)
{
    p->n = 0;
    for (int i = 0; i <= 40; i++) {
        double q[3] = {i * 0.25, 0, 0};
        CHECK(on_pathbuf_push(p, q) == 0);
    }
}

/* Smoothing asks the turns only at the waypoint its search by sight settles on: at the kept
 * waypoints 10, 20 and 30, the turn on from each (to the next waypoint) and the turn through it (from
 * the kept one before): 6 in all. A turn refused there (at waypoint 10) makes it search again below
 * that waypoint with the turns asked at each candidate: it keeps waypoint 9 instead, and goes on from
 * there. */
static void smooth_turns_settled(void)
{
    on_sight s = {vis_short, turn_count, NULL, NULL, NULL, NULL};
    on_pathbuf p = {0};
    push_row(&p);
    turn_calls = 0;
    on_smooth(&p, &s, ON_SMOOTH_GREEDY);
    CHECK_EQ_INT(turn_calls, 6);
    double want[] = {0, 2.5, 5, 7.5, 10};
    CHECK_EQ_INT(p.n, 5);
    for (size_t i = 0; i < p.n && i < 5; i++) CHECK(p.p[3 * i] == want[i]);
    s.turn_ok = turn_not_at_2_5;
    push_row(&p);
    turn_calls = 0;
    on_smooth(&p, &s, ON_SMOOTH_GREEDY);
    double want2[] = {0, 2.25, 4.75, 7.25, 9.75, 10};
    CHECK_EQ_INT(p.n, 6);
    for (size_t i = 0; i < p.n && i < 6; i++) CHECK(p.p[3 * i] == want2[i]);
    /* the refused one at 10; the bisection below it asks the turn on at 5, 7, 8 and 9 (the start has no
     * turn before it); then 2 at each of 19, 29 and 39 */
    CHECK_EQ_INT(turn_calls, 11);
    on_pathbuf_free(&p);
}

/* Relaxation takes known_blocked's word: a corner whose neighbours it calls out of sight stays (its
 * line of sight is not asked) and only slides; without it, in open space the corner goes. */
static int ab_calls;
static int vis_count_ab(void *ud, const double a[3], const double b[3])
{
    ab_calls += a[0] == 0 && a[1] == 0 && b[0] == 10 && b[1] == 0;
    return vis(ud, a, b);
}

/* A turn at x keeps out of the block (as the tree's rule keeps out of blocked voxels): the path just
 * before and just after x (1e-6 of the way towards a and b) is not inside it. */
static int turn_block(void *ud, const double a[3], const double x[3], const double b[3])
{
    const block *bl = ud;
    for (int e = 0; e < 2; e++) {
        const double *to = e ? b : a;
        int inside = 1;
        for (int k = 0; k < 3; k++) {
            double v = x[k] + 1e-6 * (to[k] - x[k]);
            inside &= v > bl->lo[k] && v < bl->hi[k];
        }
        if (inside) return 0;
    }
    return 1;
}

/* Relaxation puts a corner exactly on the obstacle edge it wraps (snap_to_edge): round the block's
 * edge x = 1, y = 0 (along z) from (0, 1, 0) to (3, -1, 3), with the corner first at (1.2, -0.3, 0.5)
 * (both segments in sight). One pass leaves it at (1, 0, z) with z the exact minimiser along the edge,
 * 3 sqrt 2 / (sqrt 2 + sqrt 5) (the slides alone stop wherever a bisection's last try was allowed,
 * here (1.2977, -0.3, 1.4343)): the shortest path, sqrt(2 + z^2) + sqrt(5 + (3 - z)^2). */
static void relax_onto_edge(void)
{
    block bl = {{1, 0, -10}, {2, 2, 10}, 0};
    on_sight s = {vis, turn_block, &bl, NULL, NULL, NULL};
    on_pathbuf p = {0};
    double pts[][3] = {{0, 1, 0}, {1.2, -0.3, 0.5}, {3, -1, 3}};
    for (int i = 0; i < 3; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    for (size_t i = 1; i < p.n; i++) CHECK(vis(&bl, p.p + 3 * (i - 1), p.p + 3 * i));
    on_relax(&p, &s, 1);
    CHECK_EQ_INT(p.n, 3);
    double z = 3 * sqrt(2.0) / (sqrt(2.0) + sqrt(5.0));
    CHECK(p.p[3] == 1 && p.p[4] == 0 && fabs(p.p[5] - z) < 1e-12);
    CHECK(fabs(len(&p) - (sqrt(2 + z * z) + sqrt(5 + (3 - z) * (3 - z)))) < 1e-12);
    on_pathbuf_free(&p);
}

/* The corners' sweeps repeat while a neighbour moved after a corner's visit: round the block's edges
 * (1, 0) and (2, 0) (along z) from (0, 1, 0) to (3, 1, 3), the corners first at (1.2, -0.3, 0.5) and
 * (1.8, -0.3, 2.5). The shortest path unfolds into a straight line of horizontal length 2 sqrt 2 + 1
 * rising by 3. One pass leaves both corners on their edges and the length within the pass's threshold
 * (1.5e-3 of a corner's two segments) of it: 0.13 % over (a single sweep: 1.08 %, the first corner
 * placed for the second's old place). */
static void relax_sweeps_settle(void)
{
    block bl = {{1, 0, -10}, {2, 2, 10}, 0};
    on_sight s = {vis, turn_block, &bl, NULL, NULL, NULL};
    on_pathbuf p = {0};
    double pts[][3] = {{0, 1, 0}, {1.2, -0.3, 0.5}, {1.8, -0.3, 2.5}, {3, 1, 3}};
    for (int i = 0; i < 4; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    on_relax(&p, &s, 1);
    CHECK_EQ_INT(p.n, 4);
    CHECK(p.p[3] == 1 && p.p[4] == 0 && p.p[6] == 2 && p.p[7] == 0);
    double h = 2 * sqrt(2.0) + 1, best = sqrt(h * h + 9);
    CHECK(len(&p) >= best - 1e-12 && len(&p) < best * (1 + 1.5e-3));
    on_pathbuf_free(&p);
}

/* Three corners round three of a block's edges (the long way round, a local optimum relaxation
 * keeps), the last far off: its move reaches the first corner two sweeps later, so the sweeps must go
 * on until settled (RELAX_SWEEPS 2 or 3 fails this); each corner ends on its edge, the path within
 * 3e-3 of the unfolded length. */
static void relax_sweeps_three(void)
{
    block bl = {{1, 0, -10}, {2, 2, 10}, 0};
    on_sight s = {vis, turn_block, &bl, NULL, NULL, NULL};
    on_pathbuf p = {0};
    double pts[][3] = {{0, 1, 0}, {1, 0, 1}, {2, 0, 2}, {2.2, 2.3, -3}, {1.5, 3, 6}};
    for (int i = 0; i < 5; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    on_relax(&p, &s, 1);
    double h = sqrt(2.0) + 1 + 2 + sqrt(1.25), best = sqrt(h * h + 36);
    CHECK_EQ_INT(p.n, 5);
    CHECK(p.p[3] == 1 && p.p[4] == 0 && p.p[6] == 2 && p.p[7] == 0 && p.p[9] == 2 && p.p[10] == 2);
    /* settled: 0.22 % over (sweeps cut at 3: 1.49 %, at 2: 7.09 %, the last corner's move reaching
     * the first a sweep later each time) */
    CHECK(len(&p) >= best - 1e-12 && len(&p) < best * (1 + 3e-3));
    on_pathbuf_free(&p);
}

static int known_ab(void *ud, const double a[3], const double b[3])
{
    (void)ud;
    return a[0] == 0 && a[1] == 0 && a[2] == 0 && b[0] == 10 && b[1] == 0 && b[2] == 0;
}

static void relax_known_blocked(void)
{
    block bl = {{100, 100, -10}, {101, 101, 10}, 0};
    on_sight plain = {vis_count_ab, turn_any, &bl, NULL, NULL, NULL};
    on_sight known = {vis_count_ab, turn_any, &bl, NULL, NULL, known_ab};
    double pts[][3] = {{0, 0, 0}, {5, 5, 0}, {10, 0, 0}};
    on_pathbuf p = {0};
    for (int i = 0; i < 3; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    ab_calls = 0;
    on_relax(&p, &plain, 3);
    CHECK_EQ_INT(p.n, 2);
    CHECK_EQ_INT(ab_calls, 1);
    p.n = 0;
    for (int i = 0; i < 3; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    ab_calls = 0;
    on_relax(&p, &known, 3);
    CHECK_EQ_INT(p.n, 3);
    CHECK_EQ_INT(ab_calls, 0);
    CHECK(p.p[3] == 5 && p.p[4] == 0 && p.p[5] == 0); /* slid onto the straight line */
    on_pathbuf_free(&p);
}

/* Several blocks as above (at most 50), the lines of sight and turns asked counted. */
typedef struct scene {
    block box[50];
    int n, vis_calls, turn_calls;
} scene;

static int scene_vis(void *ud, const double a[3], const double b[3])
{
    scene *s = ud;
    s->vis_calls++;
    for (int i = 0; i < s->n; i++)
        if (seg_hits_box(a, b, s->box[i].lo, s->box[i].hi)) return 0;
    return 1;
}

static int scene_turn(void *ud, const double a[3], const double x[3], const double b[3])
{
    scene *s = ud;
    s->turn_calls++;
    for (int i = 0; i < s->n; i++)
        if (!turn_block(&s->box[i], a, x, b)) return 0;
    return 1;
}

/* The path (0,0,0) -> (5, y, 0) -> (10,0,0) relaxed by `passes` passes in scene s, counts reset. */
static void relax_bent(on_pathbuf *p, scene *s, double y, int passes)
{
    double pts[][3] = {{0, 0, 0}, {5, y, 0}, {10, 0, 0}};
    on_sight sg = {scene_vis, scene_turn, s, NULL, NULL, NULL};
    p->n = 0;
    for (int i = 0; i < 3; i++) CHECK(on_pathbuf_push(p, pts[i]) == 0);
    s->vis_calls = s->turn_calls = 0;
    on_relax(p, &sg, passes);
}

/* The bend rule (relax_corner): a corner whose bend (what dropping it would gain) is less than the
 * pass's threshold of its two segments' length (1.5e-3 in pass 0, a quarter of the pass before's in
 * each pass after) is left as it is: neither asked whether it can go nor slid nor snapped, not one
 * line of sight or turn asked. Corner (5, 0.1, 0) between (0,0,0) and (10,0,0): bend 1 - 5 /
 * sqrt(25.01) = 1.9994e-4 of its segments, below pass 0's 1.5e-3 and pass 1's 3.75e-4, above pass 2's
 * 9.375e-5. In open space (its neighbours see each other) one or two passes keep it where it is; the
 * third asks once and drops it. (5, 0.2, 0) (7.990e-4): kept by one pass, dropped by the second
 * (removing the rule drops the first in 2 passes). With a block [4.5, 5.5] x [-2, 0.05] (the corner
 * passes over it, the neighbours do not see each other), two passes ask nothing (without the rule:
 * one line of sight, from pass 1); the third asks whether it can go (blocked) and slides it down
 * along y towards (5, 0, 0) with 4 halvings: the turns at (5, 0) and (5, 0.05) lie in the block,
 * (5, 0.075), (5, 0.0625) and (5, 0.05625) are allowed (their two segments asked each): 7 lines of
 * sight, 5 turns; the snap's lattice line through (5, 0) gains less than that pass's threshold. */
static void relax_bend_rule(void)
{
    scene open = {.n = 0}, over = {.box = {{{4.5, -2, -10}, {5.5, 0.05, 10}, 0}}, .n = 1};
    on_pathbuf p = {0};
    for (int passes = 1; passes <= 2; passes++) {
        relax_bent(&p, &open, 0.1, passes);
        CHECK_EQ_INT(p.n, 3);
        CHECK(p.p[3] == 5 && p.p[4] == 0.1 && p.p[5] == 0);
        CHECK_EQ_INT(open.vis_calls, 0);
        CHECK_EQ_INT(open.turn_calls, 0);
        relax_bent(&p, &over, 0.1, passes);
        CHECK_EQ_INT(p.n, 3);
        CHECK(p.p[3] == 5 && p.p[4] == 0.1 && p.p[5] == 0);
        CHECK_EQ_INT(over.vis_calls, 0);
        CHECK_EQ_INT(over.turn_calls, 0);
    }
    relax_bent(&p, &open, 0.1, 3);
    CHECK_EQ_INT(p.n, 2);
    CHECK_EQ_INT(open.vis_calls, 1);
    CHECK_EQ_INT(open.turn_calls, 0);
    CHECK(len(&p) == 10);
    relax_bent(&p, &open, 0.2, 1);
    CHECK_EQ_INT(p.n, 3);
    CHECK(p.p[3] == 5 && p.p[4] == 0.2 && p.p[5] == 0);
    CHECK_EQ_INT(open.vis_calls, 0);
    relax_bent(&p, &open, 0.2, 2);
    CHECK_EQ_INT(p.n, 2);
    CHECK_EQ_INT(open.vis_calls, 1);
    relax_bent(&p, &over, 0.1, 3);
    CHECK_EQ_INT(p.n, 3);
    CHECK(p.p[3] == 5 && fabs(p.p[4] - 0.05625) < 1e-15 && p.p[5] == 0);
    CHECK_EQ_INT(over.vis_calls, 7);
    CHECK_EQ_INT(over.turn_calls, 5);
    CHECK(fabs(len(&p) - 2 * sqrt(25 + 0.05625 * 0.05625)) < 1e-12);
    on_pathbuf_free(&p);
}

/* The first sweep of the first pass does not ask whether a corner can go while the corner before it
 * has not moved in that sweep: (5, 5, 0) between (0,0,0) and (10,0,0) in open space (its bend well
 * above the threshold) is slid onto the straight line instead, to (5, 0, 0) (the turn there and its
 * two segments asked: 2 lines of sight, 1 turn), and one pass keeps it. A second pass asks (its bend,
 * 0, is below the threshold, but it lies on the straight line) and drops it: 1 line of sight more. */
static void relax_first_sweep(void)
{
    scene open = {.n = 0};
    on_pathbuf p = {0};
    double pts[][3] = {{0, 0, 0}, {5, 5, 0}, {10, 0, 0}};
    on_sight sg = {scene_vis, scene_turn, &open, NULL, NULL, NULL};
    for (int passes = 1; passes <= 2; passes++) {
        p.n = 0;
        for (int i = 0; i < 3; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
        open.vis_calls = open.turn_calls = 0;
        on_relax(&p, &sg, passes);
        CHECK_EQ_INT(p.n, 4 - passes);
        CHECK_EQ_INT(open.vis_calls, 1 + passes);
        CHECK_EQ_INT(open.turn_calls, 1);
        CHECK(passes == 2 || (p.p[3] == 5 && p.p[4] == 0 && p.p[5] == 0));
        CHECK(len(&p) == 10);
    }
    on_pathbuf_free(&p);
}

/* A slalom through 50 blocks: block j spans x in [3j+1, 3j+2], z in [-10, 10], and y in [-1, 10]
 * for even j (the path passes below), [-10, 1] for odd j (above). The shortest path from (0,0,0) to
 * (150,0,0) runs along each block's face y = -+1 from edge to edge and across each gap diagonally:
 * sqrt 2 at each end, 50 along the faces, 49 gaps of 2 sqrt 2: 50 + 100 sqrt 2. Relaxation is given
 * 150 corners, three a block (s = -+1): L_j on the near edge (3j+1, s, 0), M_j in the middle of the
 * face (3j+1.5, s, 0), R_j past the far edge in the face's plane (3j+2.3, s, 0). In the first sweep
 * L_j stays (past L_0 asked whether it can go, R_j-1 having moved: no; its slides blocked), M_j is
 * not asked (L_j did not move) and lies on the straight line L_j -> R_j (nothing to slide), R_j
 * slides onto its edge (3j+2, s, 0): every R_j, those past RELAX_TRACK corners too (the first sweep
 * visits every corner). R_j's move marks M_j to be visited again when M_j is among the first
 * RELAX_TRACK corners: M_j is corner 3j+2, so M_0 .. M_41 are (M_42 is corner 128), and the second
 * sweep drops them (on the straight line L_j -> R_j: asked despite the bend rule). M_42 .. M_49
 * stay, on the line (the length is the same): 152 - 42 = 110 waypoints. With L_0 off its edge, at
 * (0.7, -1.3, 0), L_0 moves (onto its edge) in the first sweep, so M_0 is asked at once and dropped:
 * every corner after it moves down one, M_42 from 128 to 127, where R_42's move marks it, and the
 * second sweep drops it too: 109 waypoints. (RELAX_TRACK 64 leaves 131 and 131, 256 leaves 102 and
 * 102; a first sweep skipping the untracked corners leaves R_42 .. R_49 off their edges; a drop not
 * clearing the flag of the corner moving into slot 127 leaves 102 with L_0 off its edge.) */
static void relax_many_corners(int l0_off)
{
    enum { NB = 50 };
    scene s = {.n = NB};
    on_pathbuf p = {0};
    double start[3] = {0, 0, 0}, end[3] = {3 * NB, 0, 0};
    CHECK(on_pathbuf_push(&p, start) == 0);
    for (int j = 0; j < NB; j++) {
        double sy = j % 2 ? 1 : -1;
        block b = {{3 * j + 1, j % 2 ? -10 : -1, -10}, {3 * j + 2, j % 2 ? 1 : 10, 10}, 0};
        s.box[j] = b;
        double L[3] = {3 * j + 1, sy, 0}, M[3] = {3 * j + 1.5, sy, 0}, R[3] = {3 * j + 2.3, sy, 0};
        if (j == 0 && l0_off) L[0] = 0.7, L[1] = -1.3;
        CHECK(on_pathbuf_push(&p, L) == 0 && on_pathbuf_push(&p, M) == 0 && on_pathbuf_push(&p, R) == 0);
    }
    CHECK(on_pathbuf_push(&p, end) == 0);
    CHECK_EQ_INT(p.n, 152);
    for (size_t i = 1; i < p.n; i++) CHECK(scene_vis(&s, p.p + 3 * (i - 1), p.p + 3 * i)); /* a valid input */
    on_sight sg = {scene_vis, scene_turn, &s, NULL, NULL, NULL};
    on_relax(&p, &sg, 1);
    int first_m = l0_off ? 43 : 42; /* the first M left (as many dropped) */
    CHECK_EQ_INT(p.n, 152 - first_m);
    int bad = 0;
    for (size_t i = 1; i < p.n; i++) bad += !scene_vis(&s, p.p + 3 * (i - 1), p.p + 3 * i);
    for (size_t i = 1; i + 1 < p.n; i++) bad += !scene_turn(&s, p.p + 3 * (i - 1), p.p + 3 * i, p.p + 3 * (i + 1));
    CHECK_EQ_INT(bad, 0);
    /* exactly the corners on the block edges, and the M left in place */
    size_t w = 1, wrong = 0;
    for (int j = 0; j < NB && w + 1 < p.n; j++) {
        double sy = j % 2 ? 1 : -1, want[3][3] = {{3 * j + 1, sy, 0}, {3 * j + 1.5, sy, 0}, {3 * j + 2, sy, 0}};
        for (int c = 0; c < 3 && w + 1 < p.n; c++) {
            if (c == 1 && j < first_m) continue;
            const double *q = p.p + 3 * w++;
            wrong += q[0] != want[c][0] || q[1] != want[c][1] || q[2] != want[c][2];
        }
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(w + 1, p.n);
    CHECK(p.p[3 * 85] == 127 && p.p[3 * 86] == (l0_off ? 128 : 127.5)); /* L_42, then M_42 or R_42 */
    CHECK(fabs(len(&p) - (NB + 2 * NB * sqrt(2.0))) < 1e-9);
    on_pathbuf_free(&p);
}

/* A zero-width gap at (5, 0, 0) between the block [2,5] x [0,2] (along z) and another diagonal to it
 * lets a path through only straight up: a turn there on in any other direction is refused; as in the
 * tree's rule (on_tree_turn_ok: a side of zero length counts as every side), a "turn" with a or b at
 * x itself passes. */
static int turn_gap(void *ud, const double a[3], const double x[3], const double b[3])
{
    (void)ud;
    if (!(x[0] == 5 && x[1] == 0 && x[2] == 0)) return 1;
    if ((a[0] == x[0] && a[1] == x[1] && a[2] == x[2]) || (b[0] == x[0] && b[1] == x[1] && b[2] == x[2])) return 1;
    return b[0] == 5 && b[2] == 0 && b[1] > 0;
}

/* A corner slid exactly onto its neighbour is dropped in effect, and the turn the path then makes at
 * that neighbour must keep to the rule. (0,0,0) -> L (5,0,0) -> M (5,3,0) -> (10,3,0) round the
 * block [2,5] x [0,2] and through the gap at L: M's slide along y aims exactly at L (M differs from L
 * on y alone); asked as (start, L, M) and (L, M, end) with M on L, the turns have a side of zero
 * length and pass, and L, then asked whether it can go, may not (the turn at (5,0,0) from the start
 * on to the end is refused): the path kept L twice and turned there the way the gap forbids. Asked
 * as the turn (start, L, end), the move is refused, and M slides down towards L and stops short of
 * it: the halvings of pass 0 allow (5, 1.5, 0) and (5, 0.75, 0); every turn keeps to the rule. */
static void relax_not_onto_neighbour(void)
{
    block bl = {{2, 0, -10}, {5, 2, 10}, 0};
    on_sight s = {vis, turn_gap, &bl, NULL, NULL, NULL};
    on_pathbuf p = {0};
    double pts[][3] = {{0, 0, 0}, {5, 0, 0}, {5, 3, 0}, {10, 3, 0}};
    for (int i = 0; i < 4; i++) CHECK(on_pathbuf_push(&p, pts[i]) == 0);
    for (size_t i = 1; i < p.n; i++) CHECK(vis(&bl, p.p + 3 * (i - 1), p.p + 3 * i)); /* a valid input */
    for (size_t i = 1; i + 1 < p.n; i++) CHECK(turn_gap(NULL, p.p + 3 * (i - 1), p.p + 3 * i, p.p + 3 * (i + 1)));
    on_relax(&p, &s, 1);
    CHECK_EQ_INT(p.n, 4);
    for (size_t i = 1; i < p.n; i++) CHECK(memcmp(p.p + 3 * (i - 1), p.p + 3 * i, 3 * sizeof *p.p) != 0); /* no repeats */
    for (size_t i = 1; i + 1 < p.n; i++) CHECK(turn_gap(NULL, p.p + 3 * (i - 1), p.p + 3 * i, p.p + 3 * (i + 1)));
    for (size_t i = 1; i < p.n; i++) CHECK(vis(&bl, p.p + 3 * (i - 1), p.p + 3 * i));
    CHECK(p.p[3] == 5 && p.p[4] == 0 && p.p[5] == 0);
    CHECK(p.p[6] == 5 && p.p[7] == 0.75 && p.p[8] == 0);
    on_pathbuf_free(&p);
}

TEST_MAIN("tighten", {
    refine_straight();
    refine_corner();
    refine_long_chain();
    simplify_repeats();
    smooth_relax_block(ON_SMOOTH_GREEDY);
    smooth_relax_block(ON_SMOOTH_BINARY);
    smooth_clear_flags();
    smooth_open();
    smooth_turns_settled();
    relax_known_blocked();
    relax_onto_edge();
    relax_sweeps_settle();
    relax_sweeps_three();
    relax_bend_rule();
    relax_first_sweep();
    relax_many_corners(0);
    relax_many_corners(1);
    relax_not_onto_neighbour();
})
