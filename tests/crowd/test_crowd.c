/*
 * test_crowd.c -- the crowd (csrc/crowd/): the linear program against hand-solved cases; agents that
 * meet head on, fly at a wall, take a 90-degree corner, plan round a wall under a budget; every frame
 * checked from outside the crowd's code (overlaps, distance to the blocked boxes added, acceleration
 * and turn per frame); two runs compared bit for bit; the add and id rules.
 */
#include "minitest.h"
#include "octonav.h"

/* octonav.h alone declares the crowd (it includes octonav_crowd.h): used here before crowd.h */
static int public_header_declares_crowd(void)
{
    on_crowd *c = NULL;
    on_crowd_params p = {.max_agents = 0};
    return on_crowd_create(NULL, &p, &c) == (ON_FAILURE | ON_INVALID) && c == NULL;
}

#include "crowd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static on_tree *open_tree(int depth)
{
    on_tree_params p = {{1, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    return t;
}

static on_crowd_agent_params agent(double r)
{
    on_crowd_agent_params ap = {r, 4.0, 8.0, 3.0, 0};
    return ap;
}

/* what a frame may do, measured from outside: per agent, the velocity before and after */
typedef struct limits {
    int accel, turn, speed;
} limits;

static void check_limits(const double *before, const double *after, size_t n, const on_crowd_agent_params *ap,
                         double dt, limits *bad)
{
    for (size_t i = 0; i < n; i++) {
        const double *v0 = before + 6 * i + 3, *v1 = after + 6 * i + 3;
        double dv = sqrt((v1[0] - v0[0]) * (v1[0] - v0[0]) + (v1[1] - v0[1]) * (v1[1] - v0[1]) +
                         (v1[2] - v0[2]) * (v1[2] - v0[2]));
        double s0 = sqrt(v0[0] * v0[0] + v0[1] * v0[1] + v0[2] * v0[2]);
        double s1 = sqrt(v1[0] * v1[0] + v1[1] * v1[1] + v1[2] * v1[2]);
        if (dv > ap->max_accel * dt * (1 + 1e-6)) bad->accel++;
        if (s1 > ap->max_speed * (1 + 1e-9)) bad->speed++;
        if (s0 >= ap->max_accel * dt && s1 > 1e-12) {
            double c = (v0[0] * v1[0] + v0[1] * v1[1] + v0[2] * v1[2]) / (s0 * s1);
            c = c > 1 ? 1 : c < -1 ? -1 : c;
            if (acos(c) > ap->max_turn_rate * dt * (1 + 1e-6)) bad->turn++;
        }
    }
}

static void test_lp(void)
{
    on_plane pl[3] = {{{0, 0, 0}, {0, 0, 0}}}, scratch[8];
    on_v3 r;
    /* the ball alone: the preferred point, or its projection on the sphere */
    CHECK_EQ_INT(on_lp3(pl, 0, v3(0, 0, 0), 2, v3(1, 0, 0), 0, &r), 0);
    CHECK(r.x == 1 && r.y == 0 && r.z == 0);
    on_lp3(pl, 0, v3(0, 0, 0), 2, v3(0, 4, 0), 0, &r);
    CHECK(fabs(r.y - 2) < 1e-12 && r.x == 0);
    /* x >= 0.5: the preferred (0, 1, 0) moves to (0.5, 1, 0) */
    pl[0].n = v3(1, 0, 0), pl[0].p = v3(0.5, 0, 0);
    CHECK_EQ_INT(on_lp3(pl, 1, v3(0, 0, 0), 2, v3(0, 1, 0), 0, &r), 1);
    CHECK(fabs(r.x - 0.5) < 1e-12 && fabs(r.y - 1) < 1e-12 && fabs(r.z) < 1e-12);
    /* and y >= 1.5 too: the preferred (0, 0, 0) goes to (0.5, 1.5, 0) */
    pl[1].n = v3(0, 1, 0), pl[1].p = v3(0, 1.5, 0);
    CHECK_EQ_INT(on_lp3(pl, 2, v3(0, 0, 0), 2, v3(0, 0, 0), 0, &r), 2);
    CHECK(fabs(r.x - 0.5) < 1e-12 && fabs(r.y - 1.5) < 1e-12 && fabs(r.z) < 1e-12);
    /* a ball about another centre */
    CHECK_EQ_INT(on_lp3(pl, 0, v3(3, 0, 0), 1, v3(0, 0, 0), 0, &r), 0);
    CHECK(fabs(r.x - 2) < 1e-12);
    /* x >= 1.5 and x <= 0.5 (hard, first): infeasible at plane 1; the fourth program keeps the hard one */
    pl[0].n = v3(-1, 0, 0), pl[0].p = v3(0.5, 0, 0);
    pl[1].n = v3(1, 0, 0), pl[1].p = v3(1.5, 0, 0);
    size_t f = on_lp3(pl, 2, v3(0, 0, 0), 2, v3(0, 0, 0), 0, &r);
    CHECK_EQ_INT(f, 1);
    on_lp4(pl, 2, 1, f, v3(0, 0, 0), 2, &r, scratch);
    CHECK(fabs(r.x - 0.5) < 1e-9);
    CHECK(on_brake_speed(0, 8, 0.1) == 0);
    /* u dt + u^2 / (2a) = s at the answer */
    double u = on_brake_speed(1.0, 8, 0.1);
    CHECK(fabs(u * 0.1 + u * u / 16 - 1.0) < 1e-12);
}

/* run frames, checking overlaps, wall distance (to the boxes given), limits; returns frames run */
typedef struct run {
    int overlaps, walls, frames_all_arrived;
    limits bad;
    double worst_wall;   /* the least (distance to a box - radius) seen */
} run;

static double box_dist(const double *b, const double p[3])
{
    double s = 0;
    for (int i = 0; i < 3; i++) {
        double d = p[i] < b[i] ? b[i] - p[i] : p[i] > b[3 + i] ? p[i] - b[3 + i] : 0;
        s += d * d;
    }
    return sqrt(s);
}

static void frames(on_crowd *c, const uint32_t *ids, size_t n, const double *radii, const double *boxes, size_t nboxes,
                   const on_crowd_agent_params *ap, double dt, int count, run *r)
{
    double *s0 = malloc(6 * n * sizeof *s0), *s1 = malloc(6 * n * sizeof *s1);
    size_t k;
    r->worst_wall = INFINITY;
    on_crowd_states(c, s0, n, &k);
    for (int f = 0; f < count; f++) {
        CHECK(on_ok(on_crowd_update(c, dt)));
        on_crowd_states(c, s1, n, &k);
        check_limits(s0, s1, n, ap, dt, &r->bad);
        for (size_t i = 0; i < n; i++) {
            for (size_t j = i + 1; j < n; j++) {
                double d = sqrt(pow(s1[6 * i] - s1[6 * j], 2) + pow(s1[6 * i + 1] - s1[6 * j + 1], 2) +
                                pow(s1[6 * i + 2] - s1[6 * j + 2], 2));
                double mn = radii[i] < radii[j] ? radii[i] : radii[j];
                if (d < radii[i] + radii[j] - 0.01 * mn) r->overlaps++;
            }
            for (size_t b = 0; b < nboxes; b++) {
                double d = box_dist(boxes + 6 * b, s1 + 6 * i) - radii[i];
                if (d < r->worst_wall) r->worst_wall = d;
                if (d < -0.01 * radii[i]) r->walls++;
            }
        }
        int all = 1;
        for (size_t i = 0; i < n; i++) {
            on_crowd_agent_state st;
            on_crowd_agent_get(c, ids[i], &st);
            if (st.state != ON_CROWD_ARRIVED) all = 0;
        }
        if (all && !r->frames_all_arrived) r->frames_all_arrived = f + 1;
        memcpy(s0, s1, 6 * n * sizeof *s0);
    }
    free(s0);
    free(s1);
}

static void test_head_on(void)
{
    on_tree *t = open_tree(5);
    on_crowd_params p = {.max_agents = 4};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = agent(1.0);
    double a[3] = {4, 16, 16}, b[3] = {28, 16, 16};
    uint32_t ids[2];
    CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[0])));
    CHECK(on_ok(on_crowd_add(c, b, &ap, &ids[1])));
    CHECK(on_ok(on_crowd_set_path(c, ids[0], b, 1)));
    CHECK(on_ok(on_crowd_set_path(c, ids[1], a, 1)));
    double radii[2] = {1, 1};
    run r = {0};
    frames(c, ids, 2, radii, NULL, 0, &ap, 1.0 / 30, 600, &r);
    CHECK_EQ_INT(r.overlaps, 0);
    CHECK_EQ_INT(r.bad.accel, 0);
    CHECK_EQ_INT(r.bad.turn, 0);
    CHECK_EQ_INT(r.bad.speed, 0);
    CHECK(r.frames_all_arrived > 0);
    printf("head on: all arrived at frame %d (straight: %.0f)\n", r.frames_all_arrived, 24 / 4.0 * 30);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

static void test_wall(void)
{
    on_tree *t = open_tree(5);
    double lo[3] = {20, 0, 0}, hi[3] = {22, 32, 32};
    CHECK(on_ok(on_tree_add_box(t, lo, hi)));
    on_crowd_params p = {.max_agents = 4};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = agent(1.5);
    double a[3] = {4, 16, 16}, g[3] = {26, 16, 16};
    uint32_t id;
    CHECK(on_ok(on_crowd_add(c, a, &ap, &id)));
    /* a path straight through the wall: it must stop short of it */
    double path[6] = {4, 16, 16, 26, 16, 16};
    CHECK(on_ok(on_crowd_set_path(c, id, path, 2)));
    (void)g;
    double box[6] = {20, 0, 0, 22, 32, 32};
    double radii[1] = {1.5};
    run r = {0};
    frames(c, &id, 1, radii, box, 1, &ap, 1.0 / 60, 600, &r);
    CHECK_EQ_INT(r.walls, 0);
    CHECK(r.worst_wall >= 0);
    CHECK(r.worst_wall < 0.25); /* it got close: the wall, not the crowd's caution, stopped it */
    CHECK_EQ_INT(r.bad.accel + r.bad.turn + r.bad.speed, 0);
    on_crowd_agent_state st;
    on_crowd_agent_get(c, id, &st);
    printf("wall: stopped at x %.4f (the wall at 20, radius 1.5), closest gap %.2e\n", st.pos[0], r.worst_wall);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

static void test_add_rules(void)
{
    on_tree *t = open_tree(5);
    double lo[3] = {20, 0, 0}, hi[3] = {22, 32, 32};
    on_tree_add_box(t, lo, hi);
    on_crowd_params p = {.max_agents = 2};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = agent(1.0);
    uint32_t id = 0, id2 = 0;
    double in[3] = {21, 5, 5}, near[3] = {19.5, 5, 5}, out[3] = {-1, 5, 5}, ok[3] = {10, 10, 10};
    CHECK_EQ_INT(on_crowd_add(c, in, &ap, &id), ON_FAILURE | ON_BLOCKED);
    CHECK_EQ_INT(on_crowd_add(c, near, &ap, &id), ON_FAILURE | ON_BLOCKED); /* within its radius of the wall */
    CHECK_EQ_INT(on_crowd_add(c, out, &ap, &id), ON_FAILURE | ON_OUTSIDE);
    double edge[3] = {0.5, 10, 10}; /* within its radius of the grid's edge */
    CHECK_EQ_INT(on_crowd_add(c, edge, &ap, &id), ON_FAILURE | ON_BLOCKED);
    CHECK(on_ok(on_crowd_add(c, ok, &ap, &id)));
    double ok2[3] = {11.5, 10, 10};
    CHECK_EQ_INT(on_crowd_add(c, ok2, &ap, &id2), ON_FAILURE | ON_BLOCKED); /* overlaps the first */
    ok2[0] = 12.5;
    CHECK(on_ok(on_crowd_add(c, ok2, &ap, &id2)));
    double ok3[3] = {5, 5, 5};
    uint32_t id3;
    CHECK_EQ_INT(on_crowd_add(c, ok3, &ap, &id3), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK(on_ok(on_crowd_remove(c, id)));
    CHECK_EQ_INT(on_crowd_remove(c, id), ON_FAILURE | ON_INVALID);
    CHECK(on_ok(on_crowd_add(c, ok3, &ap, &id3)));
    CHECK(id3 != id); /* the slot is reused, the id is not */
    on_crowd_agent_state st;
    CHECK_EQ_INT(on_crowd_agent_get(c, id, &st), ON_FAILURE | ON_INVALID);
    CHECK(on_ok(on_crowd_agent_get(c, id3, &st)));
    CHECK(st.pos[0] == 5 && st.state == ON_CROWD_IDLE);
    on_crowd_agent_params bad = agent(0);
    CHECK_EQ_INT(on_crowd_add(c, ok3, &bad, &id3), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_crowd_update(c, 0), ON_FAILURE | ON_INVALID);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

/* a 90-degree corner at speed: the lateral error (distance to the path's polyline) at most 1 leaf */
static double seg_dist(const double *a, const double *b, const double *p)
{
    double d[3], w[3], l2 = 0, t = 0;
    for (int i = 0; i < 3; i++) d[i] = b[i] - a[i], w[i] = p[i] - a[i], l2 += d[i] * d[i], t += d[i] * w[i];
    t = l2 > 0 ? t / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double s = 0;
    for (int i = 0; i < 3; i++) s += pow(p[i] - (a[i] + t * d[i]), 2);
    return sqrt(s);
}

static void test_corner(void)
{
    on_tree *t = open_tree(6);
    on_crowd_params p = {.max_agents = 1};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {0.5, 6.0, 12.0, 4.0, 0};
    double path[9] = {8, 32, 32, 40, 32, 32, 40, 32, 60};
    uint32_t id;
    CHECK(on_ok(on_crowd_add(c, path, &ap, &id)));
    CHECK(on_ok(on_crowd_set_path(c, id, path, 3)));
    double worst = 0, top = 0;
    on_crowd_agent_state st;
    int f;
    for (f = 0; f < 2000; f++) {
        on_crowd_update(c, 1.0 / 60);
        on_crowd_agent_get(c, id, &st);
        double e = fmin(seg_dist(path, path + 3, st.pos), seg_dist(path + 3, path + 6, st.pos));
        worst = e > worst ? e : worst;
        double sp = sqrt(st.vel[0] * st.vel[0] + st.vel[1] * st.vel[1] + st.vel[2] * st.vel[2]);
        if (fabs(st.pos[0] - 40) < 1 && fabs(st.pos[2] - 32) < 1 && sp > top) top = sp;
        if (st.state == ON_CROWD_ARRIVED) break;
    }
    printf("corner: lateral error %.3f leaves, %.2f leaves/s at the corner, arrived at frame %d\n", worst, top, f);
    CHECK(worst <= 1.0);
    CHECK(top > 1.0); /* rounded at speed, not stopped at */
    CHECK_EQ_INT(st.state, ON_CROWD_ARRIVED);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

static void test_plan(void)
{
    on_tree *t = open_tree(5);
    double lo[3] = {14, 0, 0}, hi[3] = {16, 24, 32};
    on_tree_add_box(t, lo, hi);
    on_crowd_params p = {.max_agents = 8, .plan_budget = 5};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = agent(1.0);
    double a[3] = {4, 4, 16}, g[3] = {28, 4, 16};
    uint32_t id;
    CHECK(on_ok(on_crowd_add(c, a, &ap, &id)));
    CHECK(on_ok(on_crowd_set_goal(c, id, g)));
    on_crowd_agent_state st;
    on_crowd_agent_get(c, id, &st);
    CHECK_EQ_INT(st.state, ON_CROWD_PLANNING);
    on_crowd_update(c, 1.0 / 30);
    on_crowd_agent_get(c, id, &st);
    CHECK_EQ_INT(st.state, ON_CROWD_PLANNING); /* 5 expansions are not enough */
    CHECK(st.pos[0] == 4);                     /* it holds (drift 0) */
    double box[6] = {14, 0, 0, 16, 24, 32}, radii[1] = {1};
    run r = {0};
    frames(c, &id, 1, radii, box, 1, &ap, 1.0 / 30, 900, &r);
    on_crowd_agent_get(c, id, &st);
    CHECK_EQ_INT(st.state, ON_CROWD_ARRIVED);
    CHECK_EQ_INT(r.walls, 0);
    CHECK_EQ_INT(r.bad.accel + r.bad.turn + r.bad.speed, 0);
    on_crowd_stats cs;
    on_crowd_stats_get(c, &cs);
    CHECK_EQ_INT(cs.plans, 1);
    printf("plan: arrived at frame %d, %llu expansions, %llu boundary reads\n", r.frames_all_arrived,
           (unsigned long long)cs.plan_expansions, (unsigned long long)cs.boundary_refreshes);
    /* an unreachable goal (inside the wall) fails */
    double in[3] = {15, 4, 16};
    CHECK(on_ok(on_crowd_set_goal(c, id, in)));
    on_crowd_update(c, 1.0 / 30);
    on_crowd_agent_get(c, id, &st);
    CHECK_EQ_INT(st.state, ON_CROWD_FAILED);
    CHECK(st.plan_status & ON_BLOCKED);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

/* a ring of agents swapping across, run twice: the same bits */
static void ring(double *out, int n, int count)
{
    on_tree *t = open_tree(5);
    on_crowd_params p = {.max_agents = (uint32_t)n};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = agent(0.8);
    uint32_t *ids = malloc(n * sizeof *ids);
    double *radii = malloc(n * sizeof *radii);
    for (int i = 0; i < n; i++) {
        double th = 2 * 3.14159265358979323846 * i / n;
        double a[3] = {16 + 12 * cos(th), 16, 16 + 12 * sin(th)}, b[3] = {16 - 12 * cos(th), 16, 16 - 12 * sin(th)};
        CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[i])));
        CHECK(on_ok(on_crowd_set_path(c, ids[i], b, 1)));
        radii[i] = 0.8;
    }
    run r = {0};
    frames(c, ids, n, radii, NULL, 0, &ap, 1.0 / 30, count, &r);
    CHECK_EQ_INT(r.overlaps, 0);
    CHECK_EQ_INT(r.bad.accel + r.bad.turn + r.bad.speed, 0);
    size_t k;
    on_crowd_states(c, out, n, &k);
    printf("ring of %d: all arrived at frame %d (straight: %.0f)\n", n, r.frames_all_arrived, 24 / 4.0 * 30);
    free(ids);
    free(radii);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

static void test_deterministic(void)
{
    double a[6 * 24], b[6 * 24];
    ring(a, 24, 400);
    ring(b, 24, 400);
    CHECK(memcmp(a, b, sizeof a) == 0);
}

TEST_MAIN("crowd", {
    CHECK(public_header_declares_crowd());
    test_lp();
    test_add_rules();
    test_head_on();
    test_wall();
    test_corner();
    test_plan();
    test_deterministic();
})
