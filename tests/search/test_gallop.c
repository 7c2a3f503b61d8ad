/*
 * test_gallop.c -- greedy smoothing's gallop (tighten.c): which waypoints it asks about and which it
 * keeps. It asks only about the waypoints where the path bends (and the last): on waypoints that all
 * bend (a zigzag along x) it jumps 6, 16, 36, ... waypoints past the kept one (GALLOP_FIRST_BENDS 5
 * bends past the next; clamped to the last), then bisects the gap where sight failed; on a straight
 * line (no bends) it asks about the last waypoint, and when that fails, bisects between the next and
 * the last. A sight that sees at most `reach` along x.
 */
#include "minitest.h"
#include "octonav.h"
#include "tighten.h"

typedef struct reach_sight {
    double reach;     /* visible when the two x differ by at most this */
    int calls;        /* visibility asked */
    double asked[64]; /* the far x of each question, in order */
} reach_sight;

static int vis_reach(void *ud, const double a[3], const double b[3])
{
    reach_sight *r = ud;
    if (r->calls < 64) r->asked[r->calls] = b[0];
    r->calls++;
    double d = b[0] - a[0];
    return d <= r->reach && -d <= r->reach;
}

static int turn_any(void *ud, const double a[3], const double x[3], const double b[3])
{
    (void)ud, (void)a, (void)x, (void)b;
    return 1;
}

/* Smooth the 30-point line (a zigzag of 0.5 in y when zig); the kept x into kept (n of them). */
static void smooth_line(reach_sight *r, double *kept, size_t *n, int zig)
{
    on_pathbuf p = {0};
    for (int i = 0; i < 30; i++) {
        double pt[3] = {i, zig ? 0.5 * (i & 1) : 0, 0};
        CHECK(on_pathbuf_push(&p, pt) == 0);
    }
    on_sight s = {vis_reach, turn_any, r, NULL, NULL, NULL};
    on_smooth(&p, &s, ON_SMOOTH_GREEDY);
    *n = p.n;
    for (size_t i = 0; i < p.n && i < 30; i++) kept[i] = p.p[3 * i];
    on_pathbuf_free(&p);
}

static void all_in_sight(void)
{
    reach_sight r = {100, 0, {0}};
    double kept[30];
    size_t n;
    smooth_line(&r, kept, &n, 0);
    CHECK_EQ_INT(n, 2);
    CHECK(kept[0] == 0 && kept[1] == 29);
    /* a straight line has no bends: one question, the last waypoint */
    CHECK_EQ_INT(r.calls, 1);
    CHECK(r.asked[0] == 29);
}

/* Did the questions go to these x, in this order? */
static int asked(const reach_sight *r, const double *want, int n)
{
    int same = r->calls == n;
    for (int i = 0; i < n && i < 64; i++) same &= r->asked[i] == want[i];
    return same;
}

static void sight_of_twelve(void)
{
    reach_sight r = {12, 0, {0}};
    double kept[30];
    size_t n;
    smooth_line(&r, kept, &n, 0);
    /* no bends: from 0: 29 no, then bisect (1, 29): 15 no, 8 yes, 11 yes, 13 no, 12 yes -> keeps 12;
     * from 12: 29 no, then bisect (13, 29): 21 yes, 25 no, 23 yes, 24 yes -> keeps 24; from 24: 29 yes */
    CHECK_EQ_INT(n, 4);
    CHECK(kept[0] == 0 && kept[1] == 12 && kept[2] == 24 && kept[3] == 29);
    CHECK_EQ_INT(r.calls, 12);
    double want[12] = {29, 15, 8, 11, 13, 12, 29, 21, 25, 23, 24, 29};
    CHECK(asked(&r, want, 12));
    /* every waypoint a bend (a zigzag): from 0 the bends 6 yes, 16 no, then bisect: 11 yes, 13 no, 12
     * yes -> keeps 12; from 12: 18 yes, 28 no, 23 yes, 25 no, 24 yes -> keeps 24; from 24: 29 yes (5
     * bends past 25 is the last) */
    r.calls = 0;
    smooth_line(&r, kept, &n, 1);
    CHECK_EQ_INT(n, 4);
    CHECK(kept[0] == 0 && kept[1] == 12 && kept[2] == 24 && kept[3] == 29);
    double want2[11] = {6, 16, 11, 13, 12, 18, 28, 23, 25, 24, 29};
    CHECK(asked(&r, want2, 11));
}

/* One bend, at waypoint 14 (along x to it, then along y): the waypoints inside the two straight legs
 * are never asked about. A sight that sees along one leg only (or from the bend): from 0, the last
 * (29) no, then the bend (14) yes; from 14, the last yes. */
static int vis_legs(void *ud, const double a[3], const double b[3])
{
    reach_sight *r = ud;
    if (r->calls < 64) r->asked[r->calls] = b[0] + b[1];
    r->calls++;
    return a[1] == b[1] || a[0] == b[0];
}

static void one_bend(void)
{
    on_pathbuf p = {0};
    for (int i = 0; i < 30; i++) {
        double pt[3] = {i < 14 ? i : 14, i < 14 ? 0 : i - 14, 0};
        CHECK(on_pathbuf_push(&p, pt) == 0);
    }
    reach_sight r = {0, 0, {0}};
    on_sight s = {vis_legs, turn_any, &r, NULL, NULL, NULL};
    on_smooth(&p, &s, ON_SMOOTH_GREEDY);
    CHECK_EQ_INT(p.n, 3);
    CHECK(p.p[3] == 14 && p.p[4] == 0 && p.p[6] == 14 && p.p[7] == 15);
    double want[3] = {29, 14, 29};
    CHECK(asked(&r, want, 3));
    on_pathbuf_free(&p);
}

/* Turns allowed only after a straight leg of at most 12 along x (the last waypoint has none to ask):
 * the sight search settles beyond, and the search is redone below with the turns asked at every
 * candidate (tighten.c, on_smooth). */
static int turn_twelve(void *ud, const double a[3], const double x[3], const double b[3])
{
    (void)b;
    ++*(int *)ud;
    return x[0] - a[0] <= 12;
}

static int vis_twenty(void *ud, const double a[3], const double b[3])
{
    (void)ud;
    double d = b[0] - a[0];
    return d <= 20 && -d <= 20;
}

/* A zigzag of npts waypoints smoothed under vis_twenty and turn_twelve; the kept x into kept (up to
 * cap), their count into *n, the turns asked into *turns. */
static void smooth_turning(size_t npts, double *kept, size_t cap, size_t *n, int *turns)
{
    on_pathbuf p = {0};
    for (size_t i = 0; i < npts; i++) {
        double pt[3] = {(double)i, 0.5 * (double)(i & 1), 0};
        CHECK(on_pathbuf_push(&p, pt) == 0);
    }
    *turns = 0;
    on_sight s = {vis_twenty, turn_twelve, turns, NULL, NULL, NULL};
    on_smooth(&p, &s, ON_SMOOTH_GREEDY);
    *n = p.n;
    for (size_t i = 0; i < p.n && i < cap; i++) kept[i] = p.p[3 * i];
    on_pathbuf_free(&p);
}

/* Over the bends (30 waypoints, every one a bend): from 0 the farthest in sight is 20, whose turn
 * fails; redone with turns, 12; from 12 the last (17 away, no turn to ask). Over every waypoint (600,
 * more than SMOOTH_BENDS bends): every 12th up to 576, then 588 (599 is 23 from 576, out of sight), then 599. */
static void turns_redo(void)
{
    double kept[64];
    size_t n;
    int turns;
    smooth_turning(30, kept, 64, &n, &turns);
    CHECK_EQ_INT(n, 3);
    CHECK(kept[0] == 0 && kept[1] == 12 && kept[2] == 29);
    CHECK(turns > 0);
    smooth_turning(600, kept, 64, &n, &turns);
    CHECK_EQ_INT(n, 51);
    int every12 = 1;
    for (size_t i = 0; i < 49 && i < n; i++) every12 &= kept[i] == 12.0 * (double)i;
    CHECK(every12);
    CHECK(n == 51 && kept[49] == 588 && kept[50] == 599);
}

TEST_MAIN("gallop", {
    all_in_sight();
    sight_of_twelve();
    one_bend();
    turns_redo();
})
