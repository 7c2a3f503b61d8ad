/*
 * test_crowd_behind_life.c -- the lifetime of a crowd whose next grid is built behind the frame on a
 * thread of its pool (csrc/crowd/crowd.c build_behind, workers.c on_workers_behind / on_workers_sync;
 * session 31's audit, h31hard): the crowd destroyed with that build in flight, begun or not (its pool
 * joined before anything the build reads is freed); every agent removed, the tree edited and agents
 * added and sent again while it is in flight, the frames after the same bit for bit as on one thread;
 * the stats read (they wait for it) in between. Run under ASan and TSan (make check, make check-tsan:
 * this test's crowd is made with `.threads = ` 2).
 */
#include "minitest.h"
#include "octonav.h"
#include "crowd.h"

#include <stdlib.h>
#include <string.h>

enum { N = 600 }; /* (the build behind the frame from 512 slots on two threads: crowd.c CROWD_LIGHT_MIN) */

/* An empty 128^3 tile, a crowd of room 700 on `threads`, N agents on a lattice 4 apart, each sent 30
 * leaves on and a little up and aside. */
static on_crowd *lattice(int threads, on_tree **t, uint32_t ids[N], on_crowd_agent_params *ap)
{
    on_tree_params tp = {{1, 1, 1}, 7, 1.0, {0, 0, 0}, 0};
    *t = NULL;
    CHECK(on_ok(on_tree_create(&tp, t)));
    on_crowd_params p = {.max_agents = 700, .threads = threads};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(*t, &p, &c)));
    *ap = (on_crowd_agent_params){0.5, 4.0, 8.0, 3.0, 0};
    for (int i = 0; i < N; i++) {
        double a[3] = {8 + (i % 10) * 4.0, 8 + (i / 10 % 10) * 4.0, 8 + (i / 100) * 4.0};
        double g[3] = {a[0] + 30, a[1] + 6, a[2] + 2};
        CHECK(on_ok(on_crowd_add(c, a, ap, &ids[i])));
        CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
    }
    return c;
}

/* Destroyed right after a frame that left its next grid to the pool: 1 to 4 frames, 8 rounds. */
static void test_destroy_in_flight(void)
{
    int posted = 0;
    for (int round = 0; round < 8; round++) {
        on_tree *t;
        on_crowd_agent_params ap;
        uint32_t ids[N];
        on_crowd *c = lattice(2, &t, ids, &ap);
        for (int f = 0; f <= round % 4; f++) CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        posted += c->ahead; /* (the job of the next grid posted by the last update) */
        on_crowd_destroy(c);
        on_tree_destroy(t);
    }
    CHECK_EQ_INT(posted, 8);
}

/* 12 frames; after frame 3 every agent removed, after frame 5 a box added to the tree and N agents
 * added elsewhere and sent, after frame 7 a third stopped; the stats read after frames 2 and 4. The
 * agents' states after each frame into out (6 a slot, 700 slots a frame; slots with no agent zero). */
static int churn_run(int threads, double *out, int *behind)
{
    on_tree *t;
    on_crowd_agent_params ap;
    uint32_t ids[N];
    on_crowd *c = lattice(threads, &t, ids, &ap);
    int bad = 0;
    for (int f = 0; f < 12; f++) {
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        *behind += c->ahead;
        if (f == 2 || f == 4) {
            on_crowd_stats st;
            on_crowd_stats_get(c, &st);
            if (st.agents != (f == 2 ? (uint32_t)N : 0)) bad++;
        }
        if (f == 3)
            for (int i = 0; i < N; i++) CHECK(on_ok(on_crowd_remove(c, ids[i])));
        if (f == 5) {
            double lo[3] = {100, 100, 100}, hi[3] = {110, 110, 110};
            CHECK(on_ok(on_tree_add_box(t, lo, hi)));
            for (int i = 0; i < N; i++) {
                double a[3] = {10 + (i % 10) * 4.0, 8 + (i / 10 % 10) * 4.0, 60 + (i / 100) * 4.0};
                double g[3] = {a[0] + 20, a[1] + 4, a[2] - 2};
                CHECK(on_ok(on_crowd_add(c, a, &ap, &ids[i])));
                CHECK(on_ok(on_crowd_set_path(c, ids[i], g, 1)));
            }
        }
        if (f == 7)
            for (int i = 0; i < N; i += 3) CHECK(on_ok(on_crowd_set_goal(c, ids[i], NULL)));
        double *row = out + (size_t)f * 6 * 700;
        memset(row, 0, 6 * 700 * sizeof *row);
        for (int i = 0; i < N; i++) {
            on_crowd_agent_state st;
            if (!on_ok(on_crowd_agent_get(c, ids[i], &st))) continue; /* (removed) */
            memcpy(row + 6 * i, st.pos, sizeof st.pos);
            memcpy(row + 6 * i + 3, st.vel, sizeof st.vel);
        }
    }
    on_crowd_destroy(c);
    on_tree_destroy(t);
    return bad;
}

static void test_churn_in_flight(void)
{
    size_t sz = (size_t)12 * 6 * 700 * sizeof(double);
    double *one = malloc(sz), *two = malloc(sz);
    CHECK(one && two);
    int behind1 = 0, behind2 = 0;
    CHECK_EQ_INT(churn_run(1, one, &behind1), 0);
    CHECK_EQ_INT(churn_run(2, two, &behind2), 0);
    CHECK_EQ_INT(behind1, 0);
    CHECK(behind2 >= 8); /* (every frame with 512 agents or more left the next grid to the pool) */
    CHECK(memcmp(one, two, sz) == 0);
    /* emptied after frame 3: frame 4's row all zero; moving at the end */
    int zero = 1;
    for (int k = 0; k < 6 * 700; k++) zero &= one[(size_t)4 * 6 * 700 + k] == 0;
    CHECK(zero);
    CHECK(one[(size_t)11 * 6 * 700 + 6 * 1] != one[(size_t)6 * 6 * 700 + 6 * 1]);
    free(one);
    free(two);
}

TEST_MAIN("crowd_behind_life", {
    test_destroy_in_flight();
    test_churn_in_flight();
})
