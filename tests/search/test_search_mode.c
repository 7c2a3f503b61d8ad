/*
 * test_search_mode.c -- what the search's loop reads once rather than at every expansion (search.c's
 * exp_mode: face points, the early end at a weight above 1, partial results, Lazy Theta*, areas, the
 * landmarks' numbers) is read again whenever it changes inside the loop: a search escalating from
 * weight 1 (A*'s rule: the goal ends the search when expanded) to 2.5 (the early end: when first
 * reached) gives, run in one call of on_query_update, the expansions, node count and path of the same
 * search stepped one expansion a call (each call reads the mode afresh); on random scenes of walls in
 * a 64^3 tile, many of whose searches escalate. Reading the mode once a call only (not again after
 * escalating) gives other expansions on most escalated searches.
 */
#include "graph_test.h"
#include "minitest.h"
#include "octonav.h"

#include <string.h>

#define CAP 4096

static double path_a[3 * CAP], path_b[3 * CAP];

static void escalation(void)
{
    uint64_t rs = 0x5EA4C4ull;
    int pairs = 0, escalated = 0, same = 0;
    for (int scene = 0; scene < 6; scene++) {
        on_tree *t = gt_tree(1, 1, 1, 6);
        CHECK(t != NULL);
        if (!t) return;
        for (int w = 0; w < 40; w++) { /* walls: thin plates across one axis */
            double lo[3], hi[3];
            int ax = (int)(gt_rnd(&rs) * 3);
            for (int k = 0; k < 3; k++) {
                lo[k] = (double)(int)(gt_rnd(&rs) * 48);
                hi[k] = lo[k] + 4 + (double)(int)(gt_rnd(&rs) * 28);
            }
            hi[ax] = lo[ax] + 1;
            gt_box(t, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
        }
        on_query *q1 = NULL, *q2 = NULL;
        CHECK(on_ok(on_query_create(t, 1 << 16, &q1)) && on_ok(on_query_create(t, 1 << 16, &q2)));
        on_query_opts o;
        on_query_opts_default(&o);
        o.weight = 1.0;
        o.escalate = 40;
        o.escalate_weight = 2.5;
        for (int k = 0; k < 40; k++) {
            double a[3], b[3];
            for (int j = 0; j < 3; j++) {
                a[j] = 0.5 + (double)(int)(gt_rnd(&rs) * 63);
                b[j] = 0.5 + (double)(int)(gt_rnd(&rs) * 63);
            }
            on_cell ca, cb;
            if (!on_ok(on_tree_locate(t, a, &ca)) || !on_ok(on_tree_locate(t, b, &cb))) continue;
            size_t na = 0, nb = 0;
            on_query_info ia, ib;
            on_status sa = on_query_find(q1, a, b, &o, path_a, CAP, &na, &ia);
            on_status sb = on_query_init(q2, a, b, &o);
            while (sb == ON_IN_PROGRESS) sb = on_query_update(q2, 1, NULL);
            sb = on_query_finalize(q2, path_b, CAP, &nb, &ib);
            pairs++;
            if (ia.expansions > o.escalate) escalated++;
            if (sa == sb && ia.expansions == ib.expansions && ia.visited == ib.visited && na == nb &&
                memcmp(path_a, path_b, 3 * na * sizeof *path_a) == 0)
                same++;
        }
        on_query_destroy(q1);
        on_query_destroy(q2);
        on_tree_destroy(t);
    }
    CHECK(pairs > 100);
    CHECK(escalated > 20);
    CHECK_EQ_INT(same, pairs);
    printf("search_mode: %d searches, %d escalated, %d the same stepped\n", pairs, escalated, same);
}

TEST_MAIN("search_mode", { escalation(); })
