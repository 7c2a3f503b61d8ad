/*
 * bench/crowd.c -- the crowd's frame time (make bench-crowd): N agents (100, 1,000, 5,000) of radius
 * 0.5 leaf in a cube of free space with random blocked boxes, at the same density (a cube of 64^3
 * leaves for 1,000), each flying a straight path to a random point and given a new one on arrival;
 * on_crowd_update timed for 600 frames after 60 of warm-up (dt = 1/30 s): p50, p99 and max per frame,
 * fastest of 3 passes; one thread on the thread's CPU clock, then 1 and 2 threads (the crowd's
 * `threads`) on the wall clock, side by side in the same pass. No searches run (paths are given: the
 * frame is the avoidance step: neighbours, boundaries, preferred velocities, ORCA and the moves). The
 * last column hashes every frame's positions and velocities: equal hashes, byte-identical runs (it
 * is the same for 1 and 2 threads). `crowd pair FRAMES N`: 1 and 2 threads frame by frame in one process
 * (pair_run). `crowd FRAMES N [THREADS [K]]`: N agents alone, one pass (callgrind),
 * K the crowd's max_neighbours (default 0: the crowd's own, 16); on the wall clock for THREADS > 1,
 * and for one thread too with CROWD_WALL=1 set (1 against 2 threads side by side); CROWD_PACE_MS=X sleeps
 * X ms before each frame (a game's pace: the pool idle between updates). With one count, the process's
 * CPU a frame is printed too (every thread's, the pacing's sleeps included: what the pool's threads spin),
 * and with CROWD_IDLE_MS=Y the process's CPU over Y ms asleep after the last frame (the crowd idle: the
 * game stopped updating).
 */
#include "octonav.h"
#ifdef ON_CROWD_PROFILE
#include "crowd.h" /* the frame's phases timed (make BUILD=build/prof CFLAGS=-DON_CROWD_PROFILE build/prof/bench/crowd) */
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* xorshift64: each scene's own stream (*rs) */
static double rnd(uint64_t *rs)
{
    *rs ^= *rs << 13;
    *rs ^= *rs >> 7;
    *rs ^= *rs << 17;
    return (double)(*rs >> 11) / 9007199254740992.0;
}

static int use_wall;
static double now(void)
{
    struct timespec ts;
    clock_gettime(use_wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void random_point(uint64_t *rs, double side, double p[3])
{
    for (int i = 0; i < 3; i++) p[i] = 2 + rnd(rs) * (side - 4);
}

/* FNV-1a over the bytes of every agent's position and velocity: two builds whose trajectories are
 * byte-identical print the same hash */
static uint64_t hash_states(uint64_t h, const double *s, size_t n)
{
    const unsigned char *b = (const unsigned char *)s;
    for (size_t i = 0; i < n * 6 * sizeof *s; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static int max_nbrs; /* the crowd's max_neighbours (0: its default) */
static double proc_cpu_frame, proc_cpu_idle; /* (the last run) the process's CPU ms a timed frame, and idle */

static double proc_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
    nanosleep(&ts, NULL);
}

/* one crowd on its scene: a cube of free space with random blocked boxes, n agents flying to random
 * points (the same scene for the same n, whatever the threads) */
typedef struct scene {
    on_tree *t;
    on_crowd *c;
    uint32_t *ids;
    double *states;
    int n, added;
    double side;
    uint64_t rs; /* the scene's random stream: its boxes, agents, then their goals */
} scene;

static void scene_free(scene *sc)
{
    free(sc->states);
    free(sc->ids);
    if (sc->c) on_crowd_destroy(sc->c);
    if (sc->t) on_tree_destroy(sc->t);
}

static int scene_make(scene *sc, int n, int threads)
{
    memset(sc, 0, sizeof *sc);
    double side = 64.0 * cbrt(n / 1000.0);
    on_tree_params tp = {{1, 1, 1}, 7, 1.0, {0, 0, 0}, 0};
    if (!on_ok(on_tree_create(&tp, &sc->t))) return -1;
    sc->rs = 0x9E3779B97F4A7C15ull;
    int boxes = (int)(40 * n / 1000.0) + 4;
    for (int i = 0; i < boxes; i++) {
        double lo[3], hi[3];
        random_point(&sc->rs, side, lo);
        for (int k = 0; k < 3; k++) hi[k] = lo[k] + 1 + rnd(&sc->rs) * 5;
        on_tree_add_box(sc->t, lo, hi);
    }
    double outer_lo[3] = {side, 0, 0}, outer_hi[3] = {128, 128, 128};
    on_tree_add_box(sc->t, outer_lo, outer_hi); /* the cube's walls: the rest of the tile is blocked */
    double o2l[3] = {0, side, 0}, o2h[3] = {side, 128, 128};
    on_tree_add_box(sc->t, o2l, o2h);
    double o3l[3] = {0, 0, side}, o3h[3] = {side, side, 128};
    on_tree_add_box(sc->t, o3l, o3h);
    on_crowd_params cp = {.max_agents = (uint32_t)n, .threads = threads, .max_neighbours = max_nbrs};
    if (!on_ok(on_crowd_create(sc->t, &cp, &sc->c))) return scene_free(sc), -1;
    on_crowd_agent_params ap = {0.5, 4, 8, 3.14159265358979, 0};
    sc->ids = malloc(n * sizeof *sc->ids);
    sc->states = malloc((size_t)n * 6 * sizeof *sc->states);
    if (!sc->ids || !sc->states) return scene_free(sc), -1;
    for (int tries = 0; sc->added < n && tries < 100 * n; tries++) {
        double p[3];
        random_point(&sc->rs, side, p);
        if (on_ok(on_crowd_add(sc->c, p, &ap, &sc->ids[sc->added]))) {
            double g[3];
            random_point(&sc->rs, side, g);
            on_crowd_set_path(sc->c, sc->ids[sc->added], g, 1);
            sc->added++;
        }
    }
    sc->n = n;
    sc->side = side;
    return 0;
}

/* after a frame: the states hashed, new goals for the arrived (outside the timing) */
static uint64_t scene_after(scene *sc, uint64_t h)
{
    size_t ns;
    on_crowd_states(sc->c, sc->states, (size_t)sc->n, &ns);
    h = hash_states(h, sc->states, ns);
    for (int i = 0; i < sc->added; i++) {
        on_crowd_agent_state st;
        on_crowd_agent_get(sc->c, sc->ids[i], &st);
        if (st.state == ON_CROWD_ARRIVED) {
            double g[3];
            random_point(&sc->rs, sc->side, g);
            on_crowd_set_path(sc->c, sc->ids[i], g, 1);
        }
    }
    return h;
}

/* p50, p99 and max (ms) of frames times in seconds (sorted in place) */
static void quantiles(double *t, int frames, double q[3])
{
    qsort(t, frames, sizeof *t, cmp);
    q[0] = t[frames / 2] * 1e3;
    q[1] = t[(int)(frames * 0.99)] * 1e3;
    q[2] = t[frames - 1] * 1e3;
}

static int run(int n, int threads, int frames, double *p50, double *p99, double *pmax, on_crowd_stats *out,
               uint64_t *hash)
{
    scene sc;
    if (scene_make(&sc, n, threads) < 0) return -1;
    on_crowd *c = sc.c;
    int added = sc.added;
    double *times = malloc(frames * sizeof *times);
    if (!times) return scene_free(&sc), -1;
    uint64_t h = 0xcbf29ce484222325ull;
    /* CROWD_PACE_MS=X: X ms asleep before each frame, as a game's frame leaves the crowd's pool idle
     * between updates (its threads then sleep and are woken by the next update) */
    const char *pace_env = getenv("CROWD_PACE_MS");
    double pace = pace_env ? atof(pace_env) : 0, pc0 = 0;
    for (int f = -60; f < frames; f++) {
        if (f == 0) pc0 = proc_cpu();
        if (pace > 0) sleep_ms(pace);
        double t0 = now();
        on_crowd_update(c, 1.0 / 30);
        double t1 = now();
        if (f >= 0) times[f] = t1 - t0;
        h = scene_after(&sc, h);
    }
    proc_cpu_frame = (proc_cpu() - pc0) / frames * 1e3;
    const char *idle_env = getenv("CROWD_IDLE_MS");
    if (idle_env && atof(idle_env) > 0) {
        double ic0 = proc_cpu();
        sleep_ms(atof(idle_env));
        proc_cpu_idle = (proc_cpu() - ic0) * 1e3;
    }
#ifdef ON_CROWD_PROFILE
    {
        /* the phases (ms a frame, the 60 warm-up frames included): the plan step, the snapshot, the
         * grid's build, the frame's job (near, avoid, moves), the rest; and per thread its busy time and when its
         * first / last piece began / ended after the job was posted */
        double nf = 60.0 + frames, *pr = c->prof;
        fprintf(stderr, "%d agents %d threads: plan %.4f snapshot %.4f build %.4f"
                        " frame (near, avoid, moves) %.4f rest %.4f ms (total %.4f)\n",
                n, threads, pr[0] / nf * 1e3, pr[1] / nf * 1e3, pr[2] / nf * 1e3, pr[3] / nf * 1e3,
                pr[5] / nf * 1e3, (pr[0] + pr[1] + pr[2] + pr[3] + pr[5]) / nf * 1e3);
        fprintf(stderr, "  caller CPU: plan %.4f snapshot %.4f build %.4f frame %.4f rest %.4f ms\n", c->profcpu[0] / nf * 1e3,
                c->profcpu[1] / nf * 1e3, c->profcpu[2] / nf * 1e3, c->profcpu[3] / nf * 1e3, c->profcpu[5] / nf * 1e3);
        on_workers_prof *wp = on_workers_profile(c->workers);
        /* the jobs in the order first run: from 512 agents (crowd.c's CROWD_LIGHT_MIN) the snapshot is a
         * job too (the first frame's), and the next frame's grid is built behind each frame */
        static const char *const heavy[] = {"frame", "-", "-", "-"},
                                 *const all[] = {"snapshot", "frame", "build (behind)", "-"};
        const char *const *names = n >= 512 ? all : heavy;
        for (int k = 0; wp && k < ON_WORKERS_PROF_FNS && names[k][0] != '-'; k++) {
            double cpu = 0;
            fprintf(stderr, "  %s: threads' CPU", names[k]);
            for (int w = 0; w < threads && w < 8; w++) {
                cpu += wp[w].cpu[k];
                fprintf(stderr, " %.4f", wp[w].cpu[k] / nf * 1e3);
            }
            fprintf(stderr, " (sum %.4f) ms;", cpu / nf * 1e3);
            for (int w = 0; w < threads && w < 8; w++) {
                double nj = (double)(wp[w].jobs[k] ? wp[w].jobs[k] : 1);
                fprintf(stderr, " thread %d first %.4f last %.4f (%llu jobs)", w, wp[w].first[k] / nj * 1e3,
                        wp[w].last[k] / nj * 1e3, (unsigned long long)wp[w].jobs[k]);
            }
            fprintf(stderr, "\n");
        }
        for (int w = 0; wp && w < threads && w < 8; w++)
            fprintf(stderr, "  thread %d: busy %.4f ms, %.1f pieces, %.1f slots\n", w, wp[w].busy / nf * 1e3,
                    wp[w].pieces / nf, wp[w].slots / nf);
        uint64_t wakes, asleep;
        on_workers_wakes(c->workers, &wakes, &asleep);
        if (wakes) fprintf(stderr, "  updates that woke the pool: %llu, found a thread asleep: %llu; moves off the caller's CPU: %u\n",
                           (unsigned long long)wakes, (unsigned long long)asleep, on_workers_moves(c->workers));
    }
#endif
    double q[3];
    quantiles(times, frames, q);
    *p50 = q[0], *p99 = q[1], *pmax = q[2];
    on_crowd_stats_get(c, out);
    out->agents = (uint32_t)added;
    *hash = h;
    free(times);
    scene_free(&sc);
    return 0;
}

/* One thread against two, frame by frame: two crowds on the same scene in one process, the one-thread
 * crowd's update then the two-thread crowd's, each after the pace's sleep, both on the wall clock. A
 * change of the host's state (another process, a virtual CPU moved between cores) falls on both legs
 * within milliseconds, where separate runs a second apart can differ by 20 %. Prints each leg's
 * p50 / p99 / max, the p50 ratio, and whether the two trajectories are the same bit for bit. */
static int pair_run(int n, int frames, double pace)
{
    scene sc[2];
    if (scene_make(&sc[0], n, 1) < 0) return -1;
    if (scene_make(&sc[1], n, 2) < 0) return scene_free(&sc[0]), -1;
    double *times = malloc(2 * (size_t)frames * sizeof *times);
    if (!times) return scene_free(&sc[0]), scene_free(&sc[1]), -1;
    uint64_t h[2] = {0xcbf29ce484222325ull, 0xcbf29ce484222325ull};
    use_wall = 1;
    for (int f = -60; f < frames; f++)
        for (int k = 0; k < 2; k++) {
            if (pace > 0) sleep_ms(pace);
            double t0 = now();
            on_crowd_update(sc[k].c, 1.0 / 30);
            double t1 = now();
            if (f >= 0) times[(size_t)k * frames + f] = t1 - t0;
            h[k] = scene_after(&sc[k], h[k]);
        }
    double q[2][3];
    for (int k = 0; k < 2; k++) quantiles(times + (size_t)k * frames, frames, q[k]);
    printf("pair: %d agents, %d frames, pace %g ms: 1 thread p50 %.3f p99 %.3f max %.3f, 2 threads p50 %.3f p99 %.3f"
           " max %.3f ms (wall clock), ratio %.3f, same hash %s\n",
           sc[0].added, frames, pace, q[0][0], q[0][1], q[0][2], q[1][0], q[1][1], q[1][2], q[0][0] / q[1][0],
           h[0] == h[1] ? "yes" : "NO");
    free(times);
    scene_free(&sc[0]);
    scene_free(&sc[1]);
    return h[0] == h[1] ? 0 : 1;
}

typedef struct best {
    double p50, p99, max;
    on_crowd_stats st;
    uint64_t hash;
} best;

static int measure(int n, int threads, int frames, int passes, best *b)
{
    b->p50 = b->p99 = b->max = INFINITY;
    for (int pass = 0; pass < passes; pass++) {
        double a, q, m;
        if (run(n, threads, frames, &a, &q, &m, &b->st, &b->hash) < 0) return -1;
        if (a < b->p50) b->p50 = a;
        if (q < b->p99) b->p99 = q;
        if (m < b->max) b->max = m;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "pair") == 0) { /* crowd pair FRAMES N: 1 and 2 threads frame by frame */
        const char *pace_env = getenv("CROWD_PACE_MS");
        int f = argc > 2 ? atoi(argv[2]) : 300, n = argc > 3 ? atoi(argv[3]) : 1000;
        return pair_run(n > 0 ? n : 1000, f > 0 ? f : 300, pace_env ? atof(pace_env) : 0) != 0;
    }
    int frames = argc > 1 ? atoi(argv[1]) : 600;
    int only = argc > 2 ? atoi(argv[2]) : 0; /* one count, one pass (for a profiler) */
    int only_threads = argc > 3 ? atoi(argv[3]) : 1;
    max_nbrs = argc > 4 ? atoi(argv[4]) : 0; /* an experiment: another neighbour cap */
    int counts[3] = {100, 1000, 5000};
    if (frames < 1) frames = 600;
    if (only) {
        best b;
        use_wall = only_threads > 1 || getenv("CROWD_WALL"); /* CROWD_WALL=1: one thread on the wall clock too */
        if (measure(only, only_threads, frames, 1, &b) < 0) return 1;
        printf("%d agents, %d threads, %d frames: p50 %.3f p99 %.3f max %.3f ms (%s clock), hash %016llx\n", only,
               only_threads, frames, b.p50, b.p99, b.max, use_wall ? "wall" : "thread CPU",
               (unsigned long long)b.hash);
        printf("process CPU %.3f ms a frame (every thread, the pace's sleeps included)", proc_cpu_frame);
        if (getenv("CROWD_IDLE_MS")) printf("; idle %s ms after the last frame: %.3f ms CPU", getenv("CROWD_IDLE_MS"),
                                            proc_cpu_idle);
        printf("\n");
        return 0;
    }
    printf("crowd frame (on_crowd_update, one thread, thread CPU clock, dt 1/30 s, %d frames, fastest of 3 passes)\n",
           frames);
    printf("| agents | p50 ms | p99 ms | max ms | boundary reads / agent-frame | fallbacks / agent-frame | trajectory hash |\n");
    printf("|---:|---:|---:|---:|---:|---:|---|\n");
    for (int k = 0; k < 3; k++) {
        best b;
        use_wall = 0;
        if (measure(counts[k], 1, frames, 3, &b) < 0) return 1;
        double af = (double)b.st.agents * (double)b.st.frames;
        printf("| %u | %.3f | %.3f | %.3f | %.4f | %.5f | %016llx |\n", b.st.agents, b.p50, b.p99, b.max,
               (double)b.st.boundary_refreshes / af, (double)b.st.fallbacks / af, (unsigned long long)b.hash);
        fflush(stdout);
    }
    printf("\ncrowd frame, threads (wall clock, fastest of 3 passes each, 1 and 2 threads alternating)\n");
    printf("| agents | 1 thread p50 / p99 / max ms | 2 threads p50 / p99 / max ms | p50 ratio | same hash |\n");
    printf("|---:|---|---|---:|---|\n");
    use_wall = 1;
    for (int k = 0; k < 3; k++) {
        best b1 = {INFINITY, INFINITY, INFINITY, {0}, 0}, b2 = b1;
        for (int pass = 0; pass < 3; pass++) {
            best x;
            if (measure(counts[k], 1, frames, 1, &x) < 0) return 1;
            if (x.p50 < b1.p50) b1.p50 = x.p50;
            if (x.p99 < b1.p99) b1.p99 = x.p99;
            if (x.max < b1.max) b1.max = x.max;
            b1.hash = x.hash;
            if (measure(counts[k], 2, frames, 1, &x) < 0) return 1;
            if (x.p50 < b2.p50) b2.p50 = x.p50;
            if (x.p99 < b2.p99) b2.p99 = x.p99;
            if (x.max < b2.max) b2.max = x.max;
            b2.hash = x.hash;
        }
        printf("| %d | %.3f / %.3f / %.3f | %.3f / %.3f / %.3f | %.2f | %s |\n", counts[k], b1.p50, b1.p99, b1.max,
               b2.p50, b2.p99, b2.max, b1.p50 / b2.p50, b1.hash == b2.hash ? "yes" : "NO");
        fflush(stdout);
    }
    return 0;
}
