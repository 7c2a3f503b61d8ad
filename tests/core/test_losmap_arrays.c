/*
 * test_losmap_arrays.c -- a losmap build's node and brick arrays are sized once, at its start, from the
 * tile's node-table count (losmap.c: nnode <= count + 1, nbrick <= count), so that no build step grows
 * one (issue 31 goal 1, streamed: session 28 caught one on_tree_los_step slice spending 7.9 ms of the
 * game thread in a realloc of the node array): builds in steps of a few reads and one-piece builds, on
 * scenes whose tiles hold from a few to tens of thousands of nodes, grow neither array (grows == 0),
 * keep the bound, and are copied out at their size when whole (on_tree_los_step keeps its arrays for
 * the next tile); the sliced masks are the one-piece build's, array for array.
 */
#include "octonav.h"
#include "losmap.h"
#include "minitest.h"
#include "tree.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TESTRNG_SEED 0x9E3779B97F4A7C15ull
#include "testrng.h"

/* tx x 1 x 1 tiles of depth `depth`, nboxes random boxes of side up to maxside leaves */
static on_tree *scene(int depth, int tx, int nboxes, int maxside)
{
    on_tree_params p = {{tx, 1, 1}, depth, 1.0, {0, 0, 0}, 0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    if (!t) return NULL;
    int n = 1 << depth, dim[3] = {tx * n, n, n};
    for (int i = 0; i < nboxes; i++) {
        double mn[3], mx[3];
        for (int j = 0; j < 3; j++) {
            int lo = rndi(dim[j]), hi = lo + 1 + rndi(maxside);
            mn[j] = lo;
            mx[j] = hi > dim[j] ? dim[j] : hi;
        }
        CHECK(on_ok(on_tree_add_box(t, mn, mx)));
    }
    return t;
}

static size_t pages(size_t bytes)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + pg - 1) / pg * pg;
}

/* A finished losmap of a tile whose table holds count nodes: no array grown, the bound kept, its arrays
 * malloc'd at their size; returns the failures. */
static int arrays_bad(const on_losmap *m, uint32_t count)
{
    if (!m) return 1;
    int bad = 0;
    bad += m->grows != 0;
    bad += m->nnode > count + 1;
    bad += m->nbrick > count;
    if (m->mapnode) bad += m->mapnode != pages(m->nnode * sizeof *m->node);
    if (m->mapbrick) bad += m->mapbrick != pages(m->nbrick * sizeof *m->brick);
    bad += m->bytes != sizeof *m + m->nnode * sizeof *m->node + m->nbrick * sizeof *m->brick;
    return bad;
}

static int same_arrays(const on_losmap *a, const on_losmap *b)
{
    if (!a || !b || a->nnode != b->nnode || a->nbrick != b->nbrick || a->top != b->top) return 0;
    for (uint32_t i = 0; i < a->nnode; i++)
        if (a->node[i].any != b->node[i].any || a->node[i].mixed != b->node[i].mixed ||
            a->node[i].base != b->node[i].base)
            return 0;
    return !a->nbrick || !memcmp(a->brick, b->brick, a->nbrick * sizeof *a->brick);
}

static void test_steps_grow_nothing(void)
{
    static const int sc[][4] = {
        /* depth, tiles, boxes, side */
        {4, 2, 6, 5},   {5, 3, 30, 6}, {6, 2, 200, 5}, {7, 2, 600, 7},
        {8, 1, 1500, 9}, {9, 1, 2500, 12}, {7, 1, 0, 1}, {6, 1, 1, 64},
    };
    int big = 0;
    for (size_t s = 0; s < sizeof sc / sizeof sc[0]; s++) {
        on_tree *t = scene(sc[s][0], sc[s][1], sc[s][2], sc[s][3]);
        if (!t) continue;
        on_tree_set_los_defer(t, 1);
        on_los_step_info info;
        long calls = 0;
        do {
            CHECK(on_ok(on_tree_los_step(t, 50, 0, 1, &info)));
            calls++;
        } while (info.left > 0 && calls < 1000000);
        CHECK(info.left == 0);
        for (uint32_t i = 0; i < t->ntiles; i++) {
            const on_tile *tl = &t->tiles[i];
            if (tl->solid) continue;
            const on_losmap *m = atomic_load(&tl->los);
            CHECK_EQ_INT(arrays_bad(m, tl->table.count), 0);
            on_losmap *one = on_losmap_build(&tl->table, tl->solid, (uint32_t)t->p.depth);
            CHECK_EQ_INT(arrays_bad(one, tl->table.count), 0);
            CHECK(same_arrays(m, one));
            if (m && m->nnode > 2000) big++;
            on_losmap_free(one);
        }
        on_tree_destroy(t);
    }
    /* the scenes reach a node array past 2,000 nodes (a 64 KB reserve or more: mapped),
     * where main's build (64 nodes, doubled) grew it 5 times or more */
    CHECK(big > 0);
}

TEST_MAIN("losmap_arrays", { test_steps_grow_nothing(); })
