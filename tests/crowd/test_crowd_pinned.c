/*
 * test_crowd_pinned.c -- the crowd's trajectories pinned bit for bit (issue 33's speed work on
 * proximity.c, avoidance.c, lp.c, boundary.c must leave every frame as it was): three scenes, each
 * run for its frames, every frame's positions and velocities hashed (FNV-1a over their bytes), the
 * hashes against those pinned last (session 25: rules.c's keep-right turn of 45 degrees for an agent
 * without progress for 10 frames in open space, over session 24's wedge after 9 frames and session
 * 23's ORCA of the nearest 8 neighbours, avoidance.c's AVOID_ORCA_NEIGHBOURS). (a) bench/crowd.c's
 * scene at 300 agents (random boxes, straight paths, new goals on arrival); (b) mixed radii (0.3 to 2 leaves),
 * speeds, accelerations and turn limits, goals through a field of boxes (turn pyramids, top-speed
 * planes, fallbacks: RVO's fourth program and braking); (c) 60 agents pressing both ways through a
 * 3 x 3 door. Each on 1 and 2 threads (the same hash). The random draws go one by one (an argument
 * list has no order in C: compilers differ). A change meant to alter the trajectories (the rules, the
 * avoidance) pins the new hashes here and says so in its commit.
 */
#include "minitest.h"
#include "octonav.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs;
static double rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

static void rnd_point(double lo, double side, double p[3])
{
    for (int i = 0; i < 3; i++) {
        double r = rnd();
        p[i] = lo + r * side;
    }
}

static uint64_t hash_states(uint64_t h, const double *s, size_t n)
{
    const unsigned char *b = (const unsigned char *)s;
    for (size_t i = 0; i < n * 6 * sizeof *s; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

typedef struct scene {
    on_tree *t;
    on_crowd *c;
    uint32_t ids[400];
    int n;
    double side;
} scene;

/* every frame's states hashed; agents arrived get a new random goal (kind 0 and 1) */
static uint64_t run_frames(scene *s, int frames, int regoal, on_crowd_stats *st)
{
    uint64_t h = 0xcbf29ce484222325ull;
    double *states = malloc((size_t)s->n * 6 * sizeof *states);
    CHECK(states != NULL);
    if (!states) return 0;
    for (int f = 0; f < frames; f++) {
        CHECK(on_ok(on_crowd_update(s->c, 1.0 / 30)));
        size_t ns = 0;
        on_crowd_states(s->c, states, (size_t)s->n, &ns);
        h = hash_states(h, states, ns);
        for (int i = 0; regoal && i < s->n; i++) {
            on_crowd_agent_state as;
            on_crowd_agent_get(s->c, s->ids[i], &as);
            if (as.state == ON_CROWD_ARRIVED) {
                double g[3];
                rnd_point(2, s->side - 4, g);
                on_crowd_set_path(s->c, s->ids[i], g, 1);
            }
        }
    }
    on_crowd_stats_get(s->c, st);
    free(states);
    return h;
}

static void scene_free(scene *s)
{
    on_crowd_destroy(s->c);
    on_tree_destroy(s->t);
}

/* s->t: a tree of 2^depth leaves a side, the generator seeded with seed, `boxes` random boxes (corners
 * drawn in [edge, side - 2 edge], sizes 1 + [0, size) a side) and everything beyond s->side blocked. */
static void boxed_tree(scene *s, int depth, uint64_t seed, int boxes, double edge, double size)
{
    on_tree_params tp = {{1, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    CHECK(on_ok(on_tree_create(&tp, &s->t)));
    rs = seed;
    for (int i = 0; i < boxes; i++) {
        double lo[3], hi[3];
        rnd_point(edge, s->side - 2 * edge, lo);
        for (int k = 0; k < 3; k++) {
            double r = rnd();
            hi[k] = lo[k] + 1 + r * size;
        }
        on_tree_add_box(s->t, lo, hi);
    }
    double w = (double)(1u << depth);
    double l1[3] = {s->side, 0, 0}, h1[3] = {w, w, w}, l2[3] = {0, s->side, 0}, h2[3] = {s->side, w, w};
    double l3[3] = {0, 0, s->side}, h3[3] = {s->side, s->side, w};
    on_tree_add_box(s->t, l1, h1);
    on_tree_add_box(s->t, l2, h2);
    on_tree_add_box(s->t, l3, h3);
}

/* (a) bench/crowd.c's scene, n agents in a cube of the given side (its density: 64 * cbrt(n / 1000)) */
static uint64_t bench_scene(int n, double side, int threads, int frames, on_crowd_stats *st)
{
    scene s = {0};
    s.side = side; /* (not cbrt here: a compiler folding it at build time may round otherwise than libm) */
    boxed_tree(&s, 7, 0x9E3779B97F4A7C15ull, (int)(40 * n / 1000.0) + 4, 2, 5);
    on_crowd_params cp = {.max_agents = (uint32_t)n, .threads = threads};
    CHECK(on_ok(on_crowd_create(s.t, &cp, &s.c)));
    on_crowd_agent_params ap = {0.5, 4, 8, 3.14159265358979, 0};
    for (int tries = 0; s.n < n && tries < 100 * n; tries++) {
        double p[3], g[3];
        rnd_point(2, s.side - 4, p);
        if (on_ok(on_crowd_add(s.c, p, &ap, &s.ids[s.n]))) {
            rnd_point(2, s.side - 4, g);
            on_crowd_set_path(s.c, s.ids[s.n], g, 1);
            s.n++;
        }
    }
    uint64_t h = run_frames(&s, frames, 1, st);
    scene_free(&s);
    return h;
}

/* (b) mixed agents among boxes */
static uint64_t mixed_scene(int threads, int frames, on_crowd_stats *st)
{
    scene s = {0};
    s.side = 40;
    boxed_tree(&s, 6, 0x2545F4914F6CDD1Dull, 14, 6, 4);
    on_crowd_params cp = {.max_agents = 200, .threads = threads, .max_neighbours = 10};
    CHECK(on_ok(on_crowd_create(s.t, &cp, &s.c)));
    for (int tries = 0; s.n < 150 && tries < 20000; tries++) {
        double p[3], g[3], r[4];
        rnd_point(3, s.side - 6, p);
        for (int k = 0; k < 4; k++) r[k] = rnd();
        on_crowd_agent_params ap = {0.3 + 1.7 * r[0] * r[0], 2 + 4 * r[1], 3 + 9 * r[2], 0.8 + 3 * r[3], 0};
        if (on_ok(on_crowd_add(s.c, p, &ap, &s.ids[s.n]))) {
            rnd_point(2, s.side - 4, g);
            on_crowd_set_path(s.c, s.ids[s.n], g, 1);
            s.n++;
        }
    }
    uint64_t h = run_frames(&s, frames, 1, st);
    scene_free(&s);
    return h;
}

/* (c) 60 agents both ways through a 3 x 3 door in a wall at x 14..16 */
static uint64_t door_scene(int threads, int frames, on_crowd_stats *st)
{
    scene s = {0};
    s.side = 32;
    on_tree_params tp = {{1, 1, 1}, 5, 1.0, {0, 0, 0}, 0};
    CHECK(on_ok(on_tree_create(&tp, &s.t)));
    double w1[3] = {14, 0, 0}, w2[3] = {16, 32, 14.5}, w3[3] = {14, 0, 17.5}, w4[3] = {16, 32, 32};
    double w5[3] = {14, 0, 14.5}, w6[3] = {16, 14.5, 17.5}, w7[3] = {14, 17.5, 14.5}, w8[3] = {16, 32, 17.5};
    on_tree_add_box(s.t, w1, w2);
    on_tree_add_box(s.t, w3, w4);
    on_tree_add_box(s.t, w5, w6);
    on_tree_add_box(s.t, w7, w8);
    on_crowd_params cp = {.max_agents = 64, .threads = threads};
    CHECK(on_ok(on_crowd_create(s.t, &cp, &s.c)));
    on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
    for (int i = 0; i < 60; i++) {
        int side = i % 2;
        double a[3] = {side ? 20.0 + (i / 2) % 5 * 2 : 10.0 - (i / 2) % 5 * 2, 10 + (i / 10) % 3 * 5,
                       8 + (i / 30) * 14};
        double path[6] = {15, 16, 16, side ? 5.0 : 27.0, a[1], a[2]};
        CHECK(on_ok(on_crowd_add(s.c, a, &ap, &s.ids[s.n])));
        CHECK(on_ok(on_crowd_set_path(s.c, s.ids[s.n], path, 2)));
        s.n++;
    }
    uint64_t h = run_frames(&s, frames, 0, st);
    scene_free(&s);
    return h;
}

static void check_hash(const char *what, uint64_t got, uint64_t want)
{
    CHECK(got == want);
    if (got != want) fprintf(stderr, "%s: hash %016llx, pinned %016llx\n", what, (unsigned long long)got,
                             (unsigned long long)want);
}

static void test_pinned(void)
{
    on_crowd_stats st1, st2;
    uint64_t a1 = bench_scene(300, 43.0, 1, 240, &st1), a2 = bench_scene(300, 43.0, 2, 240, &st2);
    check_hash("bench scene 300 agents", a1, 0xa90277ec055a8099ull);
    CHECK(a1 == a2);
    printf("bench scene: %016llx, %llu boundary reads, %llu fallbacks\n", (unsigned long long)a1,
           (unsigned long long)st1.boundary_refreshes, (unsigned long long)st1.fallbacks);
    uint64_t b1 = mixed_scene(1, 300, &st1), b2 = mixed_scene(2, 300, &st2);
    check_hash("mixed scene", b1, 0xc4ac3b406a47377dull);
    CHECK(b1 == b2);
    CHECK(st1.fallbacks > 0); /* the fourth program and the braking are run */
    printf("mixed scene: %016llx, %llu fallbacks\n", (unsigned long long)b1, (unsigned long long)st1.fallbacks);
    uint64_t c1 = door_scene(1, 300, &st1), c2 = door_scene(2, 300, &st2);
    check_hash("door scene", c1, 0x7851d859b8ff557cull);
    CHECK(c1 == c2);
    printf("door scene: %016llx, %llu fallbacks\n", (unsigned long long)c1, (unsigned long long)st1.fallbacks);
}

TEST_MAIN("crowd_pinned", test_pinned())
