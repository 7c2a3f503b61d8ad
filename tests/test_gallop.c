/*
 * test_gallop.c -- greedy smoothing's gallop (tighten.c): which waypoints it asks about and which it
 * keeps, on 30 waypoints along the x axis (x = 0 .. 29) with a sight that sees at most `reach`
 * along x. The gallop jumps 16, 46, 106, ... waypoints past the kept one (clamped to the last), then
 * bisects the gap where sight failed.
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

/* Smooth the 30-point line with sight `reach`; the kept x into kept (n of them). */
static void smooth_line(reach_sight *r, double *kept, size_t *n)
{
    on_pathbuf p = {0};
    for (int i = 0; i < 30; i++) {
        double pt[3] = {i, 0, 0};
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
    smooth_line(&r, kept, &n);
    CHECK_EQ_INT(n, 2);
    CHECK(kept[0] == 0 && kept[1] == 29);
    /* 16, then the last (29): two questions (a gallop from 2 asked 2, 4, 8, 16, 29) */
    CHECK_EQ_INT(r.calls, 2);
    CHECK(r.asked[0] == 16 && r.asked[1] == 29);
}

static void sight_of_twelve(void)
{
    reach_sight r = {12, 0, {0}};
    double kept[30];
    size_t n;
    smooth_line(&r, kept, &n);
    /* from 0: 16 no, then bisect (1, 16): 8 yes, 12 yes, 14 no, 13 no -> keeps 12;
     * from 12: 28 no, then bisect (13, 28): 20 yes, 24 yes, 26 no, 25 no -> keeps 24; from 24: 29 yes */
    CHECK_EQ_INT(n, 4);
    CHECK(kept[0] == 0 && kept[1] == 12 && kept[2] == 24 && kept[3] == 29);
    CHECK_EQ_INT(r.calls, 11);
    double want[11] = {16, 8, 12, 14, 13, 28, 20, 24, 26, 25, 29};
    int same = 1;
    for (int i = 0; i < 11; i++) same &= r.asked[i] == want[i];
    CHECK(same);
}

TEST_MAIN("gallop", {
    all_in_sight();
    sight_of_twelve();
})
