/*
 * test_crowd_frame.c -- the crowd's frame (csrc/crowd/crowd.c, proximity.c): the proximity grid's k
 * nearest against a brute force over every agent (ties by slot, agents on cell borders and on one
 * point, buckets shared by several cells, ranges below the grid's); the frames the same bit for bit
 * on 1, 2 and 3 threads (a crowd pressing both ways through a door in a wall, agents removed and
 * added on the way); the threads option's range.
 */
#include "minitest.h"
#include "octonav.h"
#include "crowd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* the k nearest within range by brute force: (distance squared, slot) ascending */
static int brute(const on_agent *ag, uint32_t n, uint32_t self, double range, int k, uint32_t *out)
{
    int m = 0;
    double d[ON_CROWD_MAX_NEIGHBOURS];
    for (uint32_t j = 0; j < n; j++) {
        if (!ag[j].id || j == self) continue;
        double dx = ag[j].pos.x - ag[self].pos.x, dy = ag[j].pos.y - ag[self].pos.y, dz = ag[j].pos.z - ag[self].pos.z;
        double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 > range * range) continue;
        int q = m < k ? m++ : k;
        if (q == k && (d2 > d[k - 1] || (d2 == d[k - 1] && j > out[k - 1]))) continue;
        if (q == k) q = k - 1;
        while (q > 0 && (d[q - 1] > d2 || (d[q - 1] == d2 && out[q - 1] > j))) {
            d[q] = d[q - 1], out[q] = out[q - 1];
            q--;
        }
        d[q] = d2, out[q] = j;
    }
    return m;
}

/* n agents in a cube of side `side` (some removed, some on one point, some on cell borders): every
 * agent's k nearest for several ranges, the grid against the brute force */
static int compare(uint32_t n, double side, double grid_range, int *checked)
{
    on_agent *ag = calloc(n, sizeof *ag);
    for (uint32_t i = 0; i < n; i++) {
        ag[i].id = i % 7 == 3 ? 0 : i + 1; /* free slots among the live */
        double p[3] = {rnd() * side - side / 2, rnd() * side, rnd() * side};
        if (i % 11 == 0) p[0] = p[1] = p[2] = 1.0;               /* many on one point: ties by slot */
        if (i % 13 == 0) p[0] = floor(p[0] / grid_range) * grid_range; /* on a cell's border */
        if (i % 17 == 0) p[1] = -p[1];
        ag[i].pos = v3(p[0], p[1], p[2]);
    }
    on_proxgrid g;
    memset(&g, 0, sizeof g);
    int bad = 0;
    if (on_proxgrid_build(&g, ag, n, grid_range) < 0) bad++;
    double ranges[3] = {grid_range, grid_range * 0.55, grid_range * 0.01};
    int ks[3] = {1, 16, ON_CROWD_MAX_NEIGHBOURS};
    for (uint32_t i = 0; i < n && !bad; i++) {
        if (!ag[i].id) continue;
        for (int r = 0; r < 3; r++)
            for (int kk = 0; kk < 3; kk++) {
                uint32_t a[ON_CROWD_MAX_NEIGHBOURS], b[ON_CROWD_MAX_NEIGHBOURS];
                int ma = on_proxgrid_nearest(&g, ag, i, ranges[r], ks[kk], a);
                int mb = brute(ag, n, i, ranges[r], ks[kk], b);
                if (ma != mb || memcmp(a, b, (size_t)ma * sizeof *a) != 0) bad++;
                (*checked)++;
            }
    }
    on_proxgrid_free(&g);
    free(ag);
    return bad;
}

/* One frame's searches against the brute force: every live agent's k nearest within range, each
 * search bounded by the agent's last answer (a->nbr, a->nnbr), which it replaces. Counts, where given:
 * the searches that had a full last answer (hinted), those with a candidate list after them (listed),
 * all of them (checked). 1 at the first search that differs, else 0. */
static int searches_vs_brute(const on_proxgrid *g, on_agent *ag, uint32_t n, double range, int k, int *hinted,
                             int *listed, int *checked)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!ag[i].id) continue;
        uint32_t b[ON_CROWD_MAX_NEIGHBOURS];
        if (hinted) *hinted += ag[i].nnbr == k;
        int ma = on_proxgrid_nearest(g, ag, i, range, k, ag[i].nbr);
        int mb = brute(ag, n, i, range, k, b);
        if (ma != mb || memcmp(ag[i].nbr, b, (size_t)ma * sizeof *b) != 0) return 1;
        ag[i].nnbr = ma;
        if (listed) *listed += on_proxgrid_listed(g, i) >= 0;
        if (checked) (*checked)++;
    }
    return 0;
}

/* The search starts from the agent's last neighbours (a->nbr, a->nnbr) as a bound: over frames of
 * agents moving (some far, some removed, some slots given back), every search with the last frame's
 * list in place equals the brute force. */
static int compare_moving(uint32_t n, double side, double range, int k, int *checked, int *hinted)
{
    on_agent *ag = calloc(n, sizeof *ag);
    for (uint32_t i = 0; i < n; i++) {
        ag[i].id = i + 1;
        ag[i].pos = v3(rnd() * side, rnd() * side, rnd() * side);
    }
    on_proxgrid g;
    memset(&g, 0, sizeof g);
    int bad = 0;
    for (int f = 0; f < 12 && !bad; f++) {
        if (on_proxgrid_build(&g, ag, n, range) < 0) bad++;
        if (!bad) bad += searches_vs_brute(&g, ag, n, range, k, hinted, NULL, checked);
        for (uint32_t i = 0; i < n; i++) {
            double s = f % 4 == 3 ? side / 3 : 0.4; /* every fourth frame a long jump */
            ag[i].pos = v3_add(ag[i].pos, v3((rnd() - 0.5) * s, (rnd() - 0.5) * s, (rnd() - 0.5) * s));
            if ((i + (uint32_t)f) % 29 == 0) ag[i].id = ag[i].id ? 0 : i + 1; /* removed, or back */
        }
    }
    on_proxgrid_free(&g);
    free(ag);
    return bad;
}

/* Agents moving slowly (0.05 a frame along each axis at most): the searches read the candidate
 * lists (proximity.c) and equal the brute force; agents removed (frame 6) leave the lists standing, an
 * agent appearing (frame 12) drops every list, and they are made again. *listed: the searches made
 * with a list in place after them, summed. */
static int compare_lists(uint32_t n, double side, double range, int k, int *listed, int *none_after_new)
{
    on_agent *ag = calloc(n, sizeof *ag);
    for (uint32_t i = 0; i < n; i++) {
        ag[i].id = i % 50 == 7 ? 0 : i + 1;
        ag[i].pos = v3(rnd() * side, rnd() * side, rnd() * side);
    }
    on_proxgrid g;
    memset(&g, 0, sizeof g);
    int bad = 0;
    for (int f = 0; f < 20 && !bad; f++) {
        if (f == 6)
            for (uint32_t i = 0; i < n; i += 97) ag[i].id = 0;
        if (f == 12) ag[7].id = 100007; /* a new agent in a free slot */
        if (on_proxgrid_build(&g, ag, n, range) < 0) bad++;
        if (f == 12)
            for (uint32_t i = 0; i < n; i++) *none_after_new += on_proxgrid_listed(&g, i) < 0;
        if (!bad) bad += searches_vs_brute(&g, ag, n, range, k, NULL, listed, NULL);
        for (uint32_t i = 0; i < n; i++)
            ag[i].pos = v3_add(ag[i].pos, v3((rnd() - 0.5) * 0.1, (rnd() - 0.5) * 0.1, (rnd() - 0.5) * 0.1));
    }
    on_proxgrid_free(&g);
    free(ag);
    return bad;
}

/* Ties read from the lists (proximity.c's nearest_head): agents on a lattice of 2 leaves, each
 * moving 1/8 a frame along one axis (exact in binary: equal distances are equal) in one of three
 * groups (ties come and go as they pass), their k nearest from the lists, against the brute force
 * (ties by slot), 24 frames; every 9th agent removed at frame 4 (some in an answer's first k: the lists fall
 * back), back in its slot at frame 9 (every list dropped). *listed: searches with a list after them. */
static int compare_ties(int side, double range, int k, int *listed)
{
    uint32_t n = (uint32_t)(side * side * side);
    on_agent *ag = calloc(n, sizeof *ag);
    for (uint32_t i = 0; i < n; i++) {
        ag[i].id = i + 1;
        ag[i].pos = v3(2.0 * (i % side), 2.0 * (i / side % side), 2.0 * (i / side / side));
    }
    on_proxgrid g;
    memset(&g, 0, sizeof g);
    int bad = 0;
    for (int f = 0; f < 24 && !bad; f++) {
        for (uint32_t i = 0; i < n; i += 9) ag[i].id = f >= 4 && f < 9 ? 0 : i + 1;
        if (on_proxgrid_build(&g, ag, n, range) < 0) bad++;
        if (!bad) bad += searches_vs_brute(&g, ag, n, range, k, NULL, listed, NULL);
        for (uint32_t i = 0; i < n; i++) {
            double step = 1.0 / 8;
            if (i % 3 == 0) ag[i].pos.x += step;
            else if (i % 3 == 1) ag[i].pos.y -= step;
        }
    }
    on_proxgrid_free(&g);
    free(ag);
    return bad;
}

#define LISTED_PINNED 16487 /* searches with a list after them (of 19,600; 12,768 before session 25's lists
                             * capped at the range instead of searching the grid beyond it) */
static void test_proximity(void)
{
    int checked = 0;
    CHECK_EQ_INT(compare(1000, 64, 13, &checked), 0);   /* the bench's density */
    CHECK_EQ_INT(compare(400, 2000, 3, &checked), 0);   /* sparse: most cells alone, buckets shared */
    CHECK_EQ_INT(compare(300, 8, 20, &checked), 0);     /* every agent in one cell or two */
    CHECK_EQ_INT(compare(3000, 40, 2.5, &checked), 0);  /* crowded: many agents a cell */
    CHECK(checked > 30000);
    printf("proximity: %d searches equal to the brute force\n", checked);
    int moved = 0, hinted = 0;
    CHECK_EQ_INT(compare_moving(1000, 64, 13, 16, &moved, &hinted), 0);
    CHECK_EQ_INT(compare_moving(500, 30, 6, ON_CROWD_MAX_NEIGHBOURS, &moved, &hinted), 0);
    CHECK_EQ_INT(compare_moving(200, 100, 10, 4, &moved, &hinted), 0); /* sparse: many short of k */
    CHECK(hinted > moved / 4);
    int listed = 0, none = 0;
    CHECK_EQ_INT(compare_lists(1000, 64, 13, 16, &listed, &none), 0);
    CHECK_EQ_INT(none, 1000); /* the new agent dropped every list */
    CHECK_EQ_INT(listed, LISTED_PINNED);
    printf("proximity: %d of the slow agents' searches from their candidate lists\n", listed);
    int tied = 0;
    CHECK_EQ_INT(compare_ties(10, 7, 16, &tied), 0);
    CHECK_EQ_INT(compare_ties(8, 5, ON_CROWD_MAX_NEIGHBOURS, &tied), 0);
    CHECK(tied > 8000);
    printf("proximity: lattice ties, %d searches with a list after them, equal to the brute force\n", tied);
    printf("proximity: %d searches of moving agents (%d from the last neighbours) equal to the brute force\n", moved,
           hinted);
}

/* 48 agents, half on each side of a wall at x 14..18 with a 5 x 5 door, each sent through the door to
 * the other side; after 150 frames four are removed and two added (free slots among the live): every
 * frame's positions and velocities into out (6 doubles an agent, 48 agents, frames), the stats into st */
static void door_run(int threads, int frames, double *out, on_crowd_stats *st)
{
    on_tree_params tp = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    double w1[3] = {14, 0, 0}, w2[3] = {18, 32, 13.5}, w3[3] = {14, 0, 18.5}, w4[3] = {18, 32, 32};
    double w5[3] = {14, 0, 13.5}, w6[3] = {18, 13.5, 18.5}, w7[3] = {14, 18.5, 13.5}, w8[3] = {18, 32, 18.5};
    CHECK(on_ok(on_tree_add_box(t, w1, w2)));
    CHECK(on_ok(on_tree_add_box(t, w3, w4)));
    CHECK(on_ok(on_tree_add_box(t, w5, w6)));
    CHECK(on_ok(on_tree_add_box(t, w7, w8)));
    on_crowd_params p = {.max_agents = 64, .threads = threads};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
    uint32_t ids[48];
    int n = 0;
    for (int i = 0; i < 48; i++) {
        int side = i % 2;
        double a[3] = {side ? 22.0 + (i / 2) % 4 * 2 : 10.0 - (i / 2) % 4 * 2, 10 + (i / 8) % 3 * 5, 8 + (i / 24) * 14};
        double path[6] = {16, 16, 16, side ? 5.0 : 27.0, a[1], a[2]};
        CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[n])));
        CHECK(on_ok(on_crowd_set_path(c, ids[n], path, 2)));
        n++;
    }
    size_t k;
    for (int f = 0; f < frames; f++) {
        if (f == 150) {
            for (int i = 3; i < 48; i += 12) CHECK(on_ok(on_crowd_remove(c, ids[i])));
            double a[3] = {2, 2, 2}, b[3] = {29, 29, 29}, g[3] = {29, 2, 29}, h[3] = {2, 29, 2};
            CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[3])));
            CHECK(on_ok(on_crowd_set_goal(c, ids[3], g)));
            CHECK(on_ok(on_crowd_add(c, b, &ap, &ids[15])));
            CHECK(on_ok(on_crowd_set_goal(c, ids[15], h)));
        }
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        memset(out + (size_t)f * 6 * 48, 0, 6 * 48 * sizeof *out);
        CHECK(on_ok(on_crowd_states(c, out + (size_t)f * 6 * 48, 48, &k)));
    }
    on_crowd_stats_get(c, st);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

/* 25 pairs of agents five leaves apart, each sent to the other's place: each keeps right of the other
 * from its preferred velocity, read as this frame left it for a neighbour visited before and as the
 * last frame left it for one after (threads that decided these in parallel would race here) */
static void pairs_run(int threads, int frames, double *out)
{
    on_tree_params tp = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    on_crowd_params p = {.max_agents = 50, .threads = threads};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {1.0, 4.0, 8.0, 3.0, 0};
    for (int i = 0; i < 25; i++) {
        double y = 4 + 6 * (i % 5), z = 4 + 6 * (i / 5);
        double a[3] = {13.5, y, z}, b[3] = {18.5, y, z};
        uint32_t ia, ib;
        CHECK(on_ok(on_crowd_add(c, a, &ap, &ia)));
        CHECK(on_ok(on_crowd_add(c, b, &ap, &ib)));
        CHECK(on_ok(on_crowd_set_path(c, ia, b, 1)));
        CHECK(on_ok(on_crowd_set_path(c, ib, a, 1)));
    }
    size_t k;
    for (int f = 0; f < frames; f++) {
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        CHECK(on_ok(on_crowd_states(c, out + (size_t)f * 6 * 50, 50, &k)));
    }
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

static void test_threads_same_frames(void)
{
    {
        enum { PF = 60 };
        size_t psz = (size_t)PF * 6 * 50 * sizeof(double);
        double *p1 = malloc(psz), *p2 = malloc(psz), *p3 = malloc(psz), *p8 = malloc(psz);
        pairs_run(1, PF, p1);
        pairs_run(2, PF, p2);
        pairs_run(3, PF, p3);
        pairs_run(8, PF, p8);
        CHECK(memcmp(p1, p2, psz) == 0);
        CHECK(memcmp(p1, p3, psz) == 0);
        CHECK(memcmp(p1, p8, psz) == 0);
        free(p1);
        free(p2);
        free(p3);
        free(p8);
    }
    enum { FRAMES = 400 };
    size_t sz = (size_t)FRAMES * 6 * 48 * sizeof(double);
    double *one = malloc(sz), *two = malloc(sz), *three = malloc(sz), *eight = malloc(sz);
    on_crowd_stats s1, s2, s3, s8;
    door_run(1, FRAMES, one, &s1);
    door_run(2, FRAMES, two, &s2);
    door_run(3, FRAMES, three, &s3);
    door_run(8, FRAMES, eight, &s8);
    CHECK(memcmp(one, two, sz) == 0);
    CHECK(memcmp(one, three, sz) == 0);
    CHECK(memcmp(one, eight, sz) == 0);
    CHECK_EQ_INT(s8.boundary_refreshes, s1.boundary_refreshes);
    CHECK_EQ_INT(s2.boundary_refreshes, s1.boundary_refreshes);
    CHECK_EQ_INT(s3.boundary_refreshes, s1.boundary_refreshes);
    CHECK_EQ_INT(s2.fallbacks, s1.fallbacks);
    CHECK_EQ_INT(s2.plans, s1.plans);
    /* it moved: agents crossed the wall's plane (the frames are not trivially equal) */
    int crossed = 0;
    for (int i = 0; i < 48; i++) {
        double x0 = one[6 * i], x1 = one[(size_t)(FRAMES - 1) * 6 * 48 + 6 * i];
        if ((x0 - 16) * (x1 - 16) < 0) crossed++;
    }
    printf("threads: %d frames equal on 1, 2, 3 and 8 threads; %d agents crossed the door, %llu boundary reads, "
           "%llu fallbacks\n",
           FRAMES, crossed, (unsigned long long)s1.boundary_refreshes, (unsigned long long)s1.fallbacks);
    CHECK(crossed >= 10);
    free(one);
    free(two);
    free(three);
    free(eight);
}

static void test_threads_option(void)
{
    on_tree_params tp = {{1, 1, 1}, 4, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    int bad[3] = {-1, 65, 1000};
    for (int i = 0; i < 3; i++) {
        on_crowd_params p = {.max_agents = 4, .threads = bad[i]};
        on_crowd *c = (on_crowd *)&p;
        CHECK_EQ_INT(on_crowd_create(t, &p, &c), ON_FAILURE | ON_INVALID);
        CHECK(c == NULL);
    }
    int good[3] = {0, 1, 64};
    for (int i = 0; i < 3; i++) {
        on_crowd_params p = {.max_agents = 4, .threads = good[i]};
        on_crowd *c = NULL;
        CHECK(on_ok(on_crowd_create(t, &p, &c)));
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30))); /* no agents: nothing to split */
        on_crowd_destroy(c);
    }
    on_tree_destroy(t);
}

TEST_MAIN("crowd_frame", {
    test_proximity();
    test_threads_option();
    test_threads_same_frames();
})
