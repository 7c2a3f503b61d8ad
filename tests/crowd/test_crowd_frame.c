/*
 * test_crowd_frame.c -- the crowd's frame (csrc/crowd/crowd.c, proximity.c): the proximity grid's k
 * nearest against a brute force over every agent (ties by slot, agents on cell borders and on one
 * point, buckets shared by several cells, ranges below the grid's); the frames the same bit for bit
 * on 1, 2 and 3 threads (a crowd pressing both ways through a door in a wall, agents removed and
 * added on the way; 600 agents among boxes, frames back to back and frames far apart); the threads'
 * pool (workers.c): every slot of every job run once, whatever the threads, the pieces and the
 * pauses between jobs; the agents' records on whole cache lines; the threads option's range; the
 * agents' hot copies as the snapshot took them, paths changed between frames; the next frame's copies taken
 * ahead (from 512 slots on two threads), agents changed between frames; the next frame's grid built behind
 * the frame on the pool, agents added and removed and dt changed between frames; updates paced as a game's
 * (the pool's threads awake by the time each is due, asleep when the game stops).
 */
#include "minitest.h"
#include "octonav.h"
#include "crowd.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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


/* the pool's job for test_workers: each slot of [begin, end) counted once (a slot run twice, or by
 * two threads at once, shows as a count of 2 or as a race under TSan), the worker index in range */
typedef struct count_job {
    unsigned char *hits;
    int nthreads;
    atomic_int bad_worker;
} count_job;

static void count_fn(void *ctx, int w, uint32_t begin, uint32_t end)
{
    count_job *j = ctx;
    if (w < 0 || w >= j->nthreads) atomic_store(&j->bad_worker, 1);
    for (uint32_t i = begin; i < end; i++) j->hits[i]++;
}

static void pause_ms(double ms)
{
    struct timespec ts = {0, (long)(ms * 1e6)};
    nanosleep(&ts, NULL);
}

/* Every slot of every job run exactly once on 1, 2, 3 and 8 threads: jobs of 0 to 5,000 slots, pieces
 * of 1 to 64, back to back (the threads watching for the next) and after pauses of 1 ms, beyond the
 * watch (the threads asleep, woken by the job or by on_workers_wake ahead of it). */
static void test_workers(void)
{
    int threads[4] = {1, 2, 3, 8};
    uint32_t sizes[8] = {0, 1, 2, 3, 17, 100, 1001, 5000};
    uint32_t chunks[3] = {1, 7, 64};
    unsigned char *hits = malloc(5000);
    int jobs = 0, wrong = 0;
    for (int ti = 0; ti < 4; ti++) {
        on_workers *p = NULL;
        CHECK_EQ_INT(on_workers_create(threads[ti], &p), 0);
        CHECK_EQ_INT(on_workers_count(p), threads[ti]);
        count_job j = {hits, threads[ti], 0};
        for (int round = 0; round < 3; round++)
            for (int si = 0; si < 8; si++)
                for (int ci = 0; ci < 3; ci++) {
                    if (round == 1 && ci == 0) pause_ms(1.0); /* asleep: woken by the job */
                    if (round == 2 && ci == 0) {
                        pause_ms(1.0);
                        on_workers_wake(p); /* woken ahead of the job */
                    }
                    memset(hits, 0, 5000);
                    on_workers_run(p, sizes[si], chunks[ci], count_fn, &j);
                    jobs++;
                    for (uint32_t i = 0; i < 5000; i++)
                        if (hits[i] != (i < sizes[si])) {
                            wrong++;
                            break;
                        }
                }
        CHECK_EQ_INT(atomic_load(&j.bad_worker), 0);
        on_workers_destroy(p);
    }
    CHECK_EQ_INT(wrong, 0);
    free(hits);
    printf("workers: %d jobs on 1, 2, 3 and 8 threads, every slot run once\n", jobs);
}

/* 600 agents of mixed radii among random boxes in a cube of 40 leaves, each flying to a random point
 * and to another on arrival, ten removed and ten added at frame 40: every frame's positions and
 * velocities into out (6 doubles a slot, 600 slots), frames back to back, or (pauses 1) with 1 ms
 * between some, beyond the threads' watch, or (pauses 2) paced as a game's, 3 ms before every frame;
 * wakes (if not NULL): the pool's on_workers_wakes at the end */
static void many_run(int threads, int frames, int pauses, double *out, uint64_t wakes[2])
{
    on_tree_params tp = {{1, 1, 1}, 6, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    uint64_t saved = rng;
    rng = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 24; i++) {
        double lo[3] = {4 + rnd() * 30, 4 + rnd() * 30, 4 + rnd() * 30};
        double hi[3] = {lo[0] + 1 + rnd() * 3, lo[1] + 1 + rnd() * 3, lo[2] + 1 + rnd() * 3};
        CHECK(on_ok(on_tree_add_box(t, lo, hi)));
    }
    double wl[3] = {40, 0, 0}, wh[3] = {64, 64, 64};
    CHECK(on_ok(on_tree_add_box(t, wl, wh)));
    on_crowd_params p = {.max_agents = 600, .threads = threads};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    CHECK(((uintptr_t)c->agents & (ON_AGENT_ALIGN - 1)) == 0); /* (crowd.h: records on whole lines) */
    uint32_t ids[600];
    int n = 0;
    for (int tries = 0; n < 600 && tries < 60000; tries++) {
        double a[3] = {1 + rnd() * 38, 1 + rnd() * 62, 1 + rnd() * 62}, g[3] = {1 + rnd() * 38, 1 + rnd() * 62, 1 + rnd() * 62};
        on_crowd_agent_params ap = {0.4 + 0.2 * (n % 3), 4.0, 8.0, 3.0, 0};
        if (!on_ok(on_crowd_add(c, a, &ap, &ids[n]))) continue;
        CHECK(on_ok(on_crowd_set_path(c, ids[n], g, 1)));
        n++;
    }
    CHECK_EQ_INT(n, 600);
    size_t k;
    for (int f = 0; f < frames; f++) {
        if (f == 40) {
            for (int i = 5; i < 600; i += 60) CHECK(on_ok(on_crowd_remove(c, ids[i])));
            for (int i = 5; i < 600; i += 60) {
                on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
                double a[3], g[3] = {20, 32, 32};
                int ok = 0;
                for (int tries = 0; !ok && tries < 1000; tries++) {
                    a[0] = 1 + rnd() * 38, a[1] = 1 + rnd() * 62, a[2] = 1 + rnd() * 62;
                    ok = on_ok(on_crowd_add(c, a, &ap, &ids[i]));
                }
                CHECK(ok);
                CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
            }
        }
        if (pauses == 1 && f % 7 == 3) pause_ms(1.0);
        if (pauses == 2) pause_ms(3.0);
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        memset(out + (size_t)f * 6 * 600, 0, 6 * 600 * sizeof *out);
        CHECK(on_ok(on_crowd_states(c, out + (size_t)f * 6 * 600, 600, &k)));
        for (int i = 0; i < 600; i++) {
            on_crowd_agent_state st;
            if (on_ok(on_crowd_agent_get(c, ids[i], &st)) && st.state == ON_CROWD_ARRIVED) {
                double g[3] = {1 + rnd() * 38, 1 + rnd() * 62, 1 + rnd() * 62};
                CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
            }
        }
    }
    rng = saved;
    if (wakes) on_workers_wakes(c->workers, &wakes[0], &wakes[1]);
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
    {
        /* 600 agents: 1 thread, then 2 and 3 back to back and with pauses between frames */
        enum { MF = 80 };
        size_t msz = (size_t)MF * 6 * 600 * sizeof(double);
        double *m1 = malloc(msz), *m2 = malloc(msz), *m2p = malloc(msz), *m3p = malloc(msz);
        many_run(1, MF, 0, m1, NULL);
        many_run(2, MF, 0, m2, NULL);
        many_run(2, MF, 1, m2p, NULL);
        many_run(3, MF, 1, m3p, NULL);
        CHECK(memcmp(m1, m2, msz) == 0);
        CHECK(memcmp(m1, m2p, msz) == 0);
        CHECK(memcmp(m1, m3p, msz) == 0);
        /* they moved, and apart from each other */
        double moved = 0;
        for (int i = 0; i < 600; i++) moved += fabs(m1[(size_t)(MF - 1) * 6 * 600 + 6 * i] - m1[6 * i]);
        printf("threads: 600 agents, %d frames equal on 1, 2 and 3 threads (pauses or none), mean |dx| %.2f\n", MF,
               moved / 600);
        CHECK(moved / 600 > 2);
        free(m1);
        free(m2);
        free(m2p);
        free(m3p);
    }
}

/* Updates paced as a game's (3 ms between frames, far beyond the threads' watch after a job): the frames
 * the same bit for bit on 1, 2 and 3 threads, every update a wake of the pool (how many found a thread
 * asleep is printed, not checked: a frame's time varies by more than the threads' watch under the
 * sanitizers). Then the pool alone, a small job every 2 ms: its thread sleeps between jobs until shortly
 * before the next is due and watches for it, so most wakes find it awake (no system call; without the
 * pace timed, 40 of 40 find it asleep); a pause of 50 ms (the game stopped: the thread asleep again once
 * the update it expected has not come); the pool destroyed while its thread sleeps until an update due. */
static void test_paced(void)
{
    enum { PF = 60 };
    size_t sz = (size_t)PF * 6 * 600 * sizeof(double);
    double *m1 = malloc(sz), *m2 = malloc(sz), *m3 = malloc(sz);
    uint64_t w2[2] = {0, 0}, w3[2] = {0, 0}, w1[2] = {7, 7};
    many_run(1, PF, 2, m1, w1);
    many_run(2, PF, 2, m2, w2);
    many_run(3, PF, 2, m3, w3);
    CHECK(memcmp(m1, m2, sz) == 0);
    CHECK(memcmp(m1, m3, sz) == 0);
    CHECK(w1[0] == 0 && w1[1] == 0); /* (one thread: no pool) */
    CHECK_EQ_INT((int)w2[0], PF);
    CHECK_EQ_INT((int)w3[0], PF);
    CHECK(w2[1] >= 4 && w2[1] <= PF); /* (the first four: no pace known before three gaps) */
    CHECK(w3[1] >= 4 && w3[1] <= PF);
    printf("paced: 600 agents, %d frames 3 ms apart equal on 1, 2 and 3 threads; updates that found a thread asleep: "
           "%llu of %llu on 2 threads, %llu of %llu on 3\n",
           PF, (unsigned long long)w2[1], (unsigned long long)w2[0], (unsigned long long)w3[1],
           (unsigned long long)w3[0]);
    free(m1);
    free(m2);
    free(m3);

    on_workers *p = NULL;
    CHECK_EQ_INT(on_workers_create(2, &p), 0);
    unsigned char hits[1000];
    count_job j = {hits, 2, 0};
    int wrong = 0;
    /* passes of 40 rounds (up to 3, until one finds the thread asleep in at most 30 of its wakes: on a
     * machine loaded enough that the thread does not run soon after its timer fires, a pass can miss;
     * 5-16 of 40 quiet, 11-27 under ASan with the machine loaded, 40 of 40 without the pace timed) */
    enum { ROUNDS = 40, PASSES = 3 };
    uint64_t calls = 0, asleep = 0, calls2, asleep2, best = ROUNDS + 1;
    int passes = 0;
    for (; passes < PASSES && best > ROUNDS * 3 / 4; passes++) {
        uint64_t c0, a0;
        on_workers_wakes(p, &c0, &a0);
        for (int round = 0; round < ROUNDS; round++) {
            pause_ms(2.0);
            on_workers_wake(p);
            memset(hits, 0, sizeof hits);
            on_workers_run(p, 1000, 16, count_fn, &j);
            for (int i = 0; i < 1000; i++) wrong += hits[i] != 1;
        }
        on_workers_wakes(p, &calls, &asleep);
        CHECK_EQ_INT((int)(calls - c0), ROUNDS);
        best = asleep - a0 < best ? asleep - a0 : best;
        printf("paced: a pool of 2 threads, a job every 2 ms: %llu of %d wakes found its thread asleep\n",
               (unsigned long long)(asleep - a0), ROUNDS);
    }
    /* (the first four find it asleep: no pace known before three gaps; a late timer or a slow round now
     * and then) */
    CHECK(best <= ROUNDS * 3 / 4);
    pause_ms(50.0); /* the game stopped: the thread asleep once the update it expects is past */
    on_workers_wake(p);
    on_workers_wakes(p, &calls2, &asleep2);
    CHECK_EQ_INT((int)calls2, passes * ROUNDS + 1);
    CHECK_EQ_INT((int)(asleep2 - asleep), 1);
    memset(hits, 0, sizeof hits);
    on_workers_run(p, 1000, 16, count_fn, &j);
    for (int i = 0; i < 1000; i++) wrong += hits[i] != 1;
    for (int round = 0; round < 4; round++) {
        pause_ms(2.0);
        on_workers_wake(p);
    }
    pause_ms(0.5); /* asleep until the next update due, ~1.5 ms on: destroyed meanwhile */
    on_workers_destroy(p);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(atomic_load(&j.bad_worker), 0);
}

/* Agents at their goal while their searches wait, in a crowd of 600 (from 512 slots the moves run in
 * parallel, crowd.c): each ARRIVED after one frame and out of the planner's queue, on 1 and 2 threads */
static void test_arrive_while_planning(void)
{
    for (int threads = 1; threads <= 2; threads++) {
        on_tree_params tp = {{1, 1, 1}, 6, 1.0, {0, 0, 0}, 0};
        on_tree *t = NULL;
        CHECK(on_ok(on_tree_create(&tp, &t)));
        on_crowd_params p = {.max_agents = 600, .threads = threads, .plan_budget = 1};
        on_crowd *c = NULL;
        CHECK(on_ok(on_crowd_create(t, &p, &c)));
        uint32_t ids[600];
        int n = 0;
        for (int i = 0; i < 600; i++) {
            double a[3] = {2 + 3 * (i % 20), 2 + 3 * ((i / 20) % 20), 2 + 3 * (i / 400)};
            on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
            if (on_ok(on_crowd_add(c, a, &ap, &ids[n]))) n++;
        }
        CHECK_EQ_INT(n, 600);
        for (int i = 0; i < 600; i += 30) {
            on_crowd_agent_state st;
            CHECK(on_ok(on_crowd_agent_get(c, ids[i], &st)));
            CHECK(on_ok(on_crowd_set_goal(c, ids[i], st.pos))); /* (already there) */
            CHECK(on_ok(on_crowd_agent_get(c, ids[i], &st)));
            CHECK_EQ_INT(st.state, ON_CROWD_PLANNING);
        }
        CHECK_EQ_INT((int)c->qcount, 20);
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        for (int i = 0; i < 600; i += 30) {
            on_crowd_agent_state st;
            CHECK(on_ok(on_crowd_agent_get(c, ids[i], &st)));
            CHECK_EQ_INT(st.state, ON_CROWD_ARRIVED);
        }
        CHECK_EQ_INT((int)c->qcount, 0);
        CHECK_EQ_INT((int)c->cur, 0);
        on_crowd_destroy(c);
        on_tree_destroy(t);
    }
    printf("arrivals: 20 agents at their goals while planning, ARRIVED and out of the queue on 1 and 2 threads\n");
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

/* The agents' hot copies (crowd.h: on_hot, what the phases read of the neighbours) as the frame's
 * snapshot took them: 40 agents in open space, 600 slots from 1 thread to 2 (the snapshot in parallel
 * from 512 slots); every few frames some are turned back along a path of as many points (the same
 * buffer, the same segment: only the points change), some stopped (no goal), some removed and others
 * added in their slots. After each frame, each slot's copy has its agent's id and radius, and a moving
 * one's way is its path's segment the snapshot saw, bit for bit: a path changed between frames is seen
 * (a copy kept by the segment alone would keep the old way). */
static int hot_run(int threads, uint32_t slots, int *moving_checked)
{
    on_tree_params tp = {{1, 1, 1}, 6, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    on_crowd_params p = {.max_agents = slots, .threads = threads};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
    uint32_t ids[40];
    int bad = 0;
    for (int i = 0; i < 40; i++) {
        double a[3] = {10 + (i % 5) * 8.0, 10 + (i / 5 % 4) * 8.0, 20 + (i / 20) * 16.0};
        double g[3] = {a[0] + 3, a[1] + 2, a[2] + 1};
        CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[i])));
        CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
    }
    for (int f = 0; f < 60; f++) {
        if (f % 7 == 3)
            for (int i = f % 3; i < 40; i += 3) {
                on_crowd_agent_state st;
                CHECK(on_ok(on_crowd_agent_get(c, ids[i], &st)));
                double g[3] = {st.pos[0] - 3 - (f % 4), st.pos[1] - 1, st.pos[2] + (i % 2 ? 2 : -2)};
                CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
            }
        if (f == 20) {
            CHECK(on_ok(on_crowd_set_goal(c, ids[5], NULL)));
            CHECK(on_ok(on_crowd_remove(c, ids[7])));
            double a[3] = {50, 50, 50}, g[3] = {45, 50, 52};
            CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[7])));
            CHECK(on_ok(on_crowd_set_path(c, ids[7], g, 1)));
        }
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        for (uint32_t i = 0; i < c->used; i++) {
            const on_agent *a = &c->agents[i];
            const on_hot *h = &c->hot[i];
            if (h->id != a->id || (a->id && h->radius != a->radius)) bad++;
            if (!a->id || h->state != ON_CROWD_MOVING) continue;
            on_v3 d = on_rules_path_dir(a, a->dir_seg);
            if (!a->dir_valid || memcmp(&d, &h->dir, sizeof d) != 0) bad++;
            (*moving_checked)++;
        }
    }
    on_crowd_destroy(c);
    on_tree_destroy(t);
    return bad;
}

static void test_hot_copies(void)
{
    int moving = 0;
    CHECK_EQ_INT(hot_run(1, 64, &moving), 0);
    CHECK_EQ_INT(hot_run(2, 600, &moving), 0);
    CHECK(moving > 2000);
    printf("hot copies: %d moving agents' ways as their snapshot saw them, 1 and 2 threads\n", moving);
}

/* The next frame's copies taken ahead (crowd.c: from 512 slots on two threads or more, each piece of the
 * frame's job takes its agents' hot copies and the grid's for the next frame): 600 agents, and between
 * frames some stopped (no goal), some sent to a goal (searched for), some given a path, some turned back
 * along a path of as many points (the same segment: only the points change): the frames the same bit for
 * bit on 1 and 2 threads, the copies taken ahead used (no agent added or removed), and after every call
 * each changed agent's next copy is its record (state, the way of a moving one). Without the calls'
 * refresh (on_crowd_touch) an agent's stop or new way is seen a frame late on 2 threads. */
/* test_ahead's and test_behind's scene: an empty 128^3 tile, a crowd of room `room` on `threads`, 600
 * agents on a lattice 4 apart, each sent 30 leaves on (less (i % 7) x spread) and a little up and aside. */
static on_crowd *lattice_crowd(int threads, uint32_t room, double spread, on_tree **t, uint32_t ids[600],
                               on_crowd_agent_params *ap)
{
    on_tree_params tp = {{1, 1, 1}, 7, 1.0, {0, 0, 0}, 0};
    *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, t)));
    on_crowd_params p = {.max_agents = room, .threads = threads};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(*t, &p, &c)));
    *ap = (on_crowd_agent_params){0.5, 4.0, 8.0, 3.0, 0};
    for (int i = 0; i < 600; i++) {
        double a[3] = {8 + (i % 10) * 4.0, 8 + (i / 10 % 10) * 4.0, 8 + (i / 100) * 4.0};
        double g[3] = {a[0] + 30 - (i % 7) * spread, a[1] + 6, a[2] + 2};
        CHECK(on_ok(on_crowd_add(c, a, ap, &ids[i])));
        CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
    }
    return c;
}

/* One frame of dt, the 600 agents' states into frame f's row of out. */
static void lattice_frame(on_crowd *c, double dt, double *out, int f)
{
    size_t k;
    CHECK(on_ok(on_crowd_update(c, dt)));
    CHECK(on_ok(on_crowd_states(c, out + (size_t)f * 6 * 600, 600, &k)));
    CHECK_EQ_INT((int)k, 600);
}

static int ahead_run(int threads, int frames, double *out, int *ahead_frames, int *checked)
{
    on_tree *t;
    on_crowd_agent_params ap;
    uint32_t ids[600];
    int bad = 0;
    on_crowd *c = lattice_crowd(threads, 600, 0, &t, ids, &ap);
    for (int f = 0; f < frames; f++) {
        for (int i = f % 9; i < 600; i += 9) {
            on_crowd_agent_state st;
            CHECK(on_ok(on_crowd_agent_get(c, ids[i], &st)));
            int what = (i / 9 + f) % 4;
            if (what == 0) CHECK(on_ok(on_crowd_set_goal(c, ids[i], NULL)));
            else if (what == 1) {
                double g[3] = {st.pos[0] + 5, st.pos[1] - 3, st.pos[2] + 1};
                CHECK(on_ok(on_crowd_set_goal(c, ids[i], g)));
            } else {
                double g[3] = {st.pos[0] - 4 - (f % 3), st.pos[1] + (what == 2 ? 2 : -2), st.pos[2]};
                CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
            }
            if (c->ahead) {
                /* its next copy is its record as it is now */
                const on_agent *a = &c->agents[(ids[i] & 0xfffffu) - 1];
                const on_hot *h = &c->hotn[(ids[i] & 0xfffffu) - 1];
                if (h->id != a->id || h->state != (uint8_t)a->state || memcmp(&h->pos, &a->pos, sizeof a->pos) != 0)
                    bad++;
                if (a->state == ON_CROWD_MOVING) {
                    on_v3 d = on_rules_path_dir(a, a->seg);
                    if (memcmp(&d, &h->dir, sizeof d) != 0) bad++;
                }
                (*checked)++;
            }
        }
        *ahead_frames += c->ahead && c->ahead_ok;
        lattice_frame(c, 1.0 / 30, out, f);
    }
    on_crowd_destroy(c);
    on_tree_destroy(t);
    return bad;
}

static void test_ahead(void)
{
    enum { AF = 60 };
    size_t sz = (size_t)AF * 6 * 600 * sizeof(double);
    double *one = malloc(sz), *two = malloc(sz);
    int ahead1 = 0, ahead2 = 0, checked = 0;
    CHECK_EQ_INT(ahead_run(1, AF, one, &ahead1, &checked), 0);
    CHECK_EQ_INT(ahead_run(2, AF, two, &ahead2, &checked), 0);
    CHECK_EQ_INT(ahead1, 0);
    CHECK_EQ_INT(ahead2, AF - 1); /* (every frame but the first used the copies taken ahead) */
    CHECK(checked > 3000);
    CHECK(memcmp(one, two, sz) == 0);
    double moved = 0;
    for (int i = 0; i < 600; i++) moved += fabs(one[(size_t)(AF - 1) * 6 * 600 + 6 * i] - one[6 * i]);
    printf("ahead: 600 agents changed between frames, %d frames equal on 1 and 2 threads (%d with the copies taken "
           "ahead), %d next copies checked, mean |dx| %.2f\n",
           AF, ahead2, checked, moved / 600);
    CHECK(moved / 600 > 0.5);
    free(one);
    free(two);
}

/* The next frame's grid built behind the frame (crowd.c: build_behind, on a thread of the pool while
 * the caller returns; from 512 slots on two threads): 600 agents, and between frames now and then an
 * agent removed and another added (the next frame takes its snapshot and builds again over the grid
 * built behind), a frame of another dt (the same), the crowd's stats read (which wait for the build).
 * The frames the same bit for bit on 1 and 2 threads; on 2, the grid built behind used in most frames,
 * and each one, once done, the grid a build from the agents' positions makes with the cell it was
 * given (the buckets' starts, the items in order: positions, slots, rows). */
static int grid_same(const on_proxgrid *g, const on_crowd *c)
{
    on_proxgrid h;
    memset(&h, 0, sizeof h);
    int bad = 0;
    if (on_proxgrid_build(&h, c->agents, c->behind_n, c->behind_cell) < 0) return 1;
    if (h.nbuckets != g->nbuckets || h.cell != g->cell) bad++;
    else {
        if (memcmp(h.start, g->start, ((size_t)h.nbuckets + 1) * sizeof *h.start) != 0) bad++;
        if (memcmp(h.items, g->items, (size_t)h.start[h.nbuckets] * sizeof *h.items) != 0) bad++;
    }
    on_proxgrid_free(&h);
    return bad;
}

static int behind_run(int threads, int frames, double *out, int *built_frames, int *grids, int *stats_bytes)
{
    on_tree *t;
    on_crowd_agent_params ap;
    uint32_t ids[600];
    int bad = 0;
    on_crowd *c = lattice_crowd(threads, 610, 9, &t, ids, &ap);
    for (int f = 0; f < frames; f++) {
        if (f % 7 == 3) {
            /* one removed, one added where it stood (its slot reused: a new id) */
            int i = (f * 37) % 600;
            on_crowd_agent_state st;
            CHECK(on_ok(on_crowd_agent_get(c, ids[i], &st)));
            CHECK(on_ok(on_crowd_remove(c, ids[i])));
            CHECK(on_ok(on_crowd_add(c, st.pos, &ap, &ids[i])));
            double g[3] = {st.pos[0] - 10, st.pos[1] + 3, st.pos[2]};
            CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
        }
        if (f % 5 == 1) {
            on_crowd_stats st;
            on_crowd_stats_get(c, &st);
            *stats_bytes += st.bytes > 0;
        }
        if (threads > 1 && c->ahead) {
            on_workers_sync(c->workers);
            if (c->built) {
                (*built_frames)++;
                bad += grid_same(&c->grid, c);
                (*grids)++;
            }
        }
        lattice_frame(c, f % 11 == 6 ? 1.0 / 20 : 1.0 / 30, out, f);
    }
    on_crowd_destroy(c);
    on_tree_destroy(t);
    return bad;
}

static void test_behind(void)
{
    enum { BF = 60 };
    size_t sz = (size_t)BF * 6 * 600 * sizeof(double);
    double *one = malloc(sz), *two = malloc(sz);
    int built1 = 0, built2 = 0, grids = 0, stats1 = 0, stats2 = 0;
    CHECK_EQ_INT(behind_run(1, BF, one, &built1, &grids, &stats1), 0);
    CHECK_EQ_INT(behind_run(2, BF, two, &built2, &grids, &stats2), 0);
    CHECK_EQ_INT(built1, 0);
    CHECK(built2 >= BF / 2);
    CHECK_EQ_INT(grids, built2);
    CHECK_EQ_INT(stats1, 12);
    CHECK_EQ_INT(stats2, 12);
    CHECK(memcmp(one, two, sz) == 0);
    double moved = 0;
    for (int i = 0; i < 600; i++) moved += fabs(one[(size_t)(BF - 1) * 6 * 600 + 6 * i] - one[6 * i]);
    printf("behind: 600 agents, %d frames equal on 1 and 2 threads (agents removed and added, dt changed between "
           "frames); %d grids built behind, each the build of the agents' positions; mean |dx| %.2f\n",
           BF, built2, moved / 600);
    CHECK(moved / 600 > 0.5);
    free(one);
    free(two);
}

TEST_MAIN("crowd_frame", {
    test_hot_copies();
    test_ahead();
    test_behind();
    test_proximity();
    test_threads_option();
    test_workers();
    test_threads_same_frames();
    test_paced();
    test_arrive_while_planning();
})
