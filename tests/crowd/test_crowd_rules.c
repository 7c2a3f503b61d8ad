/*
 * test_crowd_rules.c -- the crowd's rules of the road (csrc/crowd/rules.c), read from the agent
 * records: an agent walking a path its own search found counts its progress from that path (a
 * free walk never looks held up); each agent decides from the frame's snapshot of its neighbours
 * (a neighbour's record changed during the frame changes nothing).
 */
#include "minitest.h"
#include "octonav.h"
#include "crowd.h"

#include <math.h>
#include <string.h>

static on_tree *open_tree(int depth)
{
    on_tree_params p = {{1, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    return t;
}

/* An agent sent by set_goal (its path searched for by the crowd) walks freely: its frames without
 * progress stay 0 all the way (before, its least distance left started at 0 and never shrank, so
 * after 20 frames every walking agent counted as held up, and the deadlock rules took any meeting
 * between walls for a deadlock at once). */
static void test_progress_of_a_planned_walk(void)
{
    on_tree *t = open_tree(5);
    on_crowd_params p = {.max_agents = 2};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {0.5, 4.0, 8.0, 3.0, 0};
    double a[3] = {3, 16, 16}, g[3] = {29, 16, 16};
    uint32_t id;
    CHECK(on_ok(on_crowd_add(c, a, &ap, &id)));
    CHECK(on_ok(on_crowd_set_goal(c, id, g)));
    int moving = 0, worst = 0;
    for (int f = 0; f < 150; f++) {
        CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
        const on_agent *ag = on_crowd_find(c, id, NULL);
        if (ag->state != ON_CROWD_MOVING) continue;
        moving++;
        /* a tenth of a leaf within a few frames, even from rest (8 leaves/s^2): never more than a few */
        if (ag->still > worst) worst = ag->still;
    }
    CHECK(moving > 100);
    CHECK(worst <= 6);
    if (worst > 6) fprintf(stderr, "frames without progress reached %d on a free walk\n", worst);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

/* Two agents meeting head on along x in a tunnel: the frame after the snapshot, the one heading -x
 * (without the way) backs out of the tunnel while the other is ahead within reach; changing the other's live
 * record (its backing-off counter, its preferred velocity) after the snapshot changes nothing of
 * what the first decides: the rules read the snapshot alone. */
static void test_snapshot_and_hold(void)
{
    on_tree *t = open_tree(6);
    /* a tunnel along x: y, z in [29, 35) open through a wall x in [24, 40) */
    double w[4][6] = {
        {24, 0, 0, 40, 29, 64}, {24, 35, 0, 40, 64, 64}, {24, 29, 0, 40, 35, 29}, {24, 29, 35, 40, 35, 64}};
    for (int i = 0; i < 4; i++) on_tree_add_box(t, w[i], w[i] + 3);
    on_crowd_params p = {.max_agents = 2};
    on_crowd *c = NULL;
    CHECK(on_ok(on_crowd_create(t, &p, &c)));
    on_crowd_agent_params ap = {1.0, 4.0, 8.0, 3.0, 0};
    double a[3] = {27, 32, 32}, b[3] = {35, 32, 32};
    uint32_t ia, ib;
    CHECK(on_ok(on_crowd_add(c, a, &ap, &ia)));
    CHECK(on_ok(on_crowd_add(c, b, &ap, &ib)));
    double pa[3] = {60, 32, 32}, pb[3] = {4, 32, 32};
    CHECK(on_ok(on_crowd_set_path(c, ia, pa, 1)));
    CHECK(on_ok(on_crowd_set_path(c, ib, pb, 1)));
    /* two frames: the first counts the walls near each (read by the rules from the frame before) */
    CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
    CHECK(on_ok(on_crowd_update(c, 1.0 / 30)));
    on_crowd_agent_state sa, sb;
    on_crowd_agent_get(c, ia, &sa);
    on_crowd_agent_get(c, ib, &sb);
    CHECK(sa.pref[0] > 3.9); /* +x has the way: it goes on */
    CHECK(sb.walls > 0);
    if (!(sb.pref[0] > 1.99)) fprintf(stderr, "b's pref %g %g %g\n", sb.pref[0], sb.pref[1], sb.pref[2]);
    /* -x backs out of the passage (+x) at half its top speed */
    CHECK(sb.pref[0] > 1.99 && sb.pref[0] < 2.01 && fabs(sb.pref[1]) < 0.01 && fabs(sb.pref[2]) < 0.01);
    /* the rules again for b, with a's live record changed: the same answer (a's snapshot is read) */
    uint32_t slot_a, slot_b;
    on_agent *ra = on_crowd_find(c, ia, &slot_a), *rb = on_crowd_find(c, ib, &slot_b);
    on_agent keep_b = *rb;
    on_v3 first = on_rules_pref(c, rb, slot_b);
    *rb = keep_b;
    ra->yield = 50;
    ra->pref = v3(-4, 0, 0);
    ra->still = 100;
    on_v3 again = on_rules_pref(c, rb, slot_b);
    CHECK(memcmp(&first, &again, sizeof first) == 0);
    on_crowd_destroy(c);
    on_tree_destroy(t);
}

TEST_MAIN("crowd_rules", {
    test_progress_of_a_planned_walk();
    test_snapshot_and_hold();
})
