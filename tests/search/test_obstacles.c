/*
 * test_obstacles.c -- temporary obstacles (obstacles.c): adding then removing gives the same tree,
 * bit for bit (every tile's table slot for slot, the values of its used slots, its solid flag and its
 * encoded bytes), for
 * overlapping obstacles across tile borders removed in every order and on random scenes; removing
 * one of several leaves the tree as readers see it (values, solid flags, encodings; the slot order may
 * differ) as if only the others had been added, checked along the way on random scenes of 40 mixed
 * obstacles and on a voxel map's bounded tiles; ids found among hundreds; salts move, prepared graphs
 * stay valid, a running search sees the change.
 */
#include "octonav.h"
#include "minitest.h"
#include "boxes.h"
#include "obstacles.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TESTRNG_SEED 0x9E3779B97F4A7C15ull
#include "testrng.h"

/* A 3 x 1 x 2 tree of 16^3-leaf tiles (scale 0.5, radius `radius`) with `nbox` random boxes drawn
 * from `seed`. */
static on_tree *scene(uint64_t seed, int nbox, double radius)
{
    on_tree_params p = {{3, 1, 2}, 4, 0.5, {-3, 1, 2}, radius};
    on_tree *t = NULL;
    if (!on_ok(on_tree_create(&p, &t))) return NULL;
    rng_state = seed;
    for (int i = 0; i < nbox; i++) {
        double mn[3], mx[3];
        for (int k = 0; k < 3; k++) {
            double ext = (k == 0 ? 24 : k == 1 ? 8 : 16);
            mn[k] = p.origin[k] + rnd() * ext;
            mx[k] = mn[k] + rnd() * 3;
        }
        on_tree_add_box(t, mn, mx);
    }
    return t;
}

/* Every tile the same, bit for bit: table slots, counts, bounds, solid flag, encoded bytes. */
static int same_tree(const on_tree *x, const on_tree *y)
{
    if (x->ntiles != y->ntiles) return 0;
    uint8_t bx[1 << 15], by[1 << 15];
    for (uint32_t i = 0; i < x->ntiles; i++) {
        const on_table *a = &x->tiles[i].table, *b = &y->tiles[i].table;
        if (a->cap != b->cap || a->count != b->count || memcmp(a->lim, b->lim, sizeof a->lim) != 0 ||
            x->tiles[i].solid != y->tiles[i].solid)
            return 0;
        if (a->cap && memcmp(a->keys, b->keys, a->cap * sizeof *a->keys))
            return 0;
        for (uint32_t k = 0; k < a->cap; k++) /* (an empty slot's value is never written) */
            if (a->keys[k] != ON_CODE_NONE && a->vals[k] != b->vals[k])
                return 0;
        size_t lx, ly;
        if (!on_ok(on_tree_encode_tile(x, i, bx, sizeof bx, &lx)) || !on_ok(on_tree_encode_tile(y, i, by, sizeof by, &ly)) ||
            lx != ly || memcmp(bx, by, lx) != 0)
            return 0;
    }
    return 1;
}

/* Every tile the same as readers see it: solid flag, bounds, node count, every stored node's value
 * (on_table_get), encoded bytes. The slot order may differ (removing an obstacle while others stay
 * restores where its box was and blocks the others overlapping it again: obstacles.c). */
static int same_contents(const on_tree *x, const on_tree *y)
{
    if (x->ntiles != y->ntiles) return 0;
    uint8_t bx[1 << 15], by[1 << 15];
    for (uint32_t i = 0; i < x->ntiles; i++) {
        const on_table *a = &x->tiles[i].table, *b = &y->tiles[i].table;
        /* (a table with bounds may store a boundary node or read it unstored: the count may differ) */
        if ((!on_table_limited(a) && a->count != b->count) || memcmp(a->lim, b->lim, sizeof a->lim) != 0 ||
            x->tiles[i].solid != y->tiles[i].solid)
            return 0;
        for (int dir = 0; dir < 2; dir++) {
            const on_table *p = dir ? b : a, *q = dir ? a : b;
            for (uint32_t k = 0; k < p->cap; k++) {
                uint32_t key;
                uint8_t v;
                if (on_table_slot(p, k, &key, &v) && on_table_get(q, key) != (int)v) return 0;
            }
        }
        size_t lx, ly;
        if (!on_ok(on_tree_encode_tile(x, i, bx, sizeof bx, &lx)) || !on_ok(on_tree_encode_tile(y, i, by, sizeof by, &ly)) ||
            lx != ly || memcmp(bx, by, lx) != 0)
            return 0;
    }
    return 1;
}

static int all_prepared_valid(const on_tree *t)
{
    for (uint32_t i = 0; i < t->ntiles; i++)
        if (!on_tile_boxes(t, i)) return 0;
    return 1;
}

/* Three overlapping obstacles, two across tile borders, removed in each of the 6 orders. */
static void orders(double radius)
{
    double box[3][2][3] = {{{2, 3, 8}, {6, 5, 12}}, {{4, 1, 9}, {9.25, 4, 10}}, {{-1, 2, 3}, {0.3, 2.2, 4}}};
    int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int p = 0; p < 6; p++) {
        on_tree *t = scene(77, 30, radius), *ref = scene(77, 30, radius);
        on_tree_prepare(t, -1, NULL);
        CHECK(same_tree(t, ref));
        uint32_t salts[6], id[3];
        for (uint32_t i = 0; i < 6; i++) salts[i] = t->tiles[i].salt;
        for (int k = 0; k < 3; k++) {
            CHECK_EQ_INT(on_tree_add_obstacle(t, box[k][0], box[k][1], &id[k]), ON_SUCCESS);
            CHECK_EQ_INT(id[k], k + 1);
        }
        double inside[3] = {4, 4, 10};
        on_cell c;
        CHECK_EQ_INT(on_tree_locate(t, inside, &c), ON_FAILURE | ON_BLOCKED);
        CHECK(!same_tree(t, ref));
        CHECK(all_prepared_valid(t));
        int moved = 0;
        for (uint32_t i = 0; i < 6; i++) moved += t->tiles[i].salt != salts[i];
        CHECK(moved >= 3);
        size_t n;
        uint32_t ids[3];
        double bx[18];
        CHECK_EQ_INT(on_tree_obstacles(t, ids, bx, 3, &n), ON_SUCCESS);
        CHECK(n == 3 && ids[0] == 1 && ids[2] == 3 && memcmp(bx + 6, box[1], sizeof box[1]) == 0);
        CHECK_EQ_INT(on_tree_obstacles(t, ids, bx, 2, &n), ON_FAILURE | ON_BUFFER_SMALL);
        CHECK_EQ_INT(n, 3);
        for (int k = 0; k < 3; k++) {
            int r = perm[p][k];
            CHECK_EQ_INT(on_tree_remove_obstacle(t, id[r]), ON_SUCCESS);
            CHECK_EQ_INT(on_tree_remove_obstacle(t, id[r]), ON_FAILURE | ON_INVALID);
            /* the tree is the scene with the obstacles left added, in their order */
            on_tree *want = scene(77, 30, radius);
            for (int j = 0; j < 3; j++) {
                int left = 1;
                for (int m = 0; m <= k; m++) left &= perm[p][m] != j;
                if (left) on_tree_add_obstacle(want, box[j][0], box[j][1], NULL);
            }
            CHECK(same_contents(t, want));
            CHECK(all_prepared_valid(t));
            on_tree_destroy(want);
        }
        CHECK(same_tree(t, ref));
        CHECK_EQ_INT(on_tree_obstacles(t, NULL, NULL, 0, &n), ON_SUCCESS);
        CHECK_EQ_INT(n, 0);
        on_tree_destroy(t);
        on_tree_destroy(ref);
    }
}

/* Random scenes and obstacles, removed in random order: back to the scene bit for bit. */
static void random_rounds(void)
{
    for (int round = 0; round < 40; round++) {
        uint64_t seed = 1000 + (uint64_t)round;
        on_tree *t = scene(seed, 20 + round, round % 3 ? 0 : 0.3), *ref = scene(seed, 20 + round, round % 3 ? 0 : 0.3);
        if (round % 2) on_tree_prepare(t, -1, NULL);
        rng_state = seed * 7 + 1;
        uint32_t id[12];
        int n = 1 + (int)(rnd() * 12);
        for (int k = 0; k < n; k++) {
            double mn[3], mx[3];
            for (int j = 0; j < 3; j++) {
                mn[j] = t->p.origin[j] + rnd() * 20 - 2;
                mx[j] = mn[j] + rnd() * (k % 4 ? 3 : 12);
            }
            CHECK_EQ_INT(on_tree_add_obstacle(t, mn, mx, &id[k]), ON_SUCCESS);
        }
        for (int left = n; left > 0; left--) {
            int k = (int)(rnd() * left);
            CHECK_EQ_INT(on_tree_remove_obstacle(t, id[k]), ON_SUCCESS);
            id[k] = id[left - 1];
        }
        CHECK(same_tree(t, ref));
        if (round % 2) CHECK(all_prepared_valid(t));
        on_tree_destroy(t);
        on_tree_destroy(ref);
    }
}

/* A running search reads the change; a tile edited by other means keeps what it holds. */
static void running_and_edits(void)
{
    on_tree *t = scene(5, 0, 0);
    on_query *q;
    CHECK(on_ok(on_query_create(t, 1 << 14, &q)));
    on_query_opts o;
    on_query_opts_default(&o);
    o.direct = 0;
    o.weight = 1; /* (the goal's node is next to the start's: A*'s rule leaves the search running after one step) */
    double a[3] = {-2.5, 2, 3}, b[3] = {8.5, 4, 9};
    CHECK_EQ_INT(on_query_init(q, a, b, &o), ON_IN_PROGRESS);
    CHECK_EQ_INT(on_query_update(q, 1, NULL), ON_IN_PROGRESS);
    double mn[3] = {-3, 1, 2}, mx[3] = {-2, 2, 2.5};
    uint32_t id;
    CHECK_EQ_INT(on_tree_add_obstacle(t, mn, mx, &id), ON_SUCCESS);
    CHECK_EQ_INT(on_query_update(q, 100, NULL), ON_FAILURE | ON_STALE);
    /* an edit of the covered tile by other means: removing leaves the tile as it was edited */
    double e0[3] = {0, 3, 3}, e1[3] = {0.5, 3.5, 3.5};
    CHECK(on_ok(on_tree_add_box(t, e0, e1)));
    on_tree *want = scene(5, 0, 0);
    on_tree_add_box(want, mn, mx);
    on_tree_add_box(want, e0, e1);
    CHECK_EQ_INT(on_tree_remove_obstacle(t, id), ON_SUCCESS);
    CHECK(same_tree(t, want));
    /* bad boxes and ids */
    double bad[3] = {0, NAN, 0};
    CHECK_EQ_INT(on_tree_add_obstacle(t, bad, mx, &id), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_tree_add_obstacle(t, mx, mn, &id), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_tree_remove_obstacle(t, 99), ON_FAILURE | ON_INVALID);
    /* wholly outside the map: an obstacle that blocks nothing */
    double far0[3] = {100, 100, 100}, far1[3] = {101, 101, 101};
    CHECK_EQ_INT(on_tree_add_obstacle(t, far0, far1, &id), ON_SUCCESS);
    CHECK_EQ_INT(on_tree_remove_obstacle(t, id), ON_SUCCESS);
    CHECK(same_tree(t, want));
    on_tree_destroy(want);
    on_query_destroy(q);
    on_tree_destroy(t);
}

/* Removing one obstacle of many works where its box is (obstacles.c, issue 30 item 11): after every
 * removal, in random order, each tile reads as a tree made from the scene with only the obstacles
 * left added (in order), for random scenes with overlapping obstacles of every size: small, across
 * tiles, covering a whole tile (the tile turns solid and back), flat (a box of zero thickness blocks
 * the leaves on both sides of its plane), with a radius or without, prepared or not; then a tree from
 * a voxel map whose size is no multiple of the tile (tables with bounds, table.h). */
typedef on_tree *(*scene_fn)(uint64_t seed, int round);

static on_tree *scene_boxes(uint64_t seed, int round)
{
    return scene(seed, 10 + round, round % 3 == 1 ? 0.3 : 0);
}

static on_tree *scene_voxels(uint64_t seed, int round)
{
    (void)round;
    on_voxmap m = {21, 11, 27, 0, NULL};
    uint16_t xyz[3 * 400];
    rng_state = seed;
    for (int i = 0; i < 400; i++) {
        xyz[3 * i] = (uint16_t)(rnd() * m.w);
        xyz[3 * i + 1] = (uint16_t)(rnd() * m.h);
        xyz[3 * i + 2] = (uint16_t)(rnd() * m.d);
    }
    m.count = 400;
    m.xyz = xyz;
    on_tree *t = NULL;
    if (!on_ok(on_tree_from_voxmap(&m, 4, &t))) return NULL;
    return t;
}

static void random_box(const on_tree *t, int k, double mn[3], double mx[3])
{
    double ext[3];
    for (int j = 0; j < 3; j++) ext[j] = t->p.tiles[j] * (1 << t->p.depth) * t->p.scale;
    for (int j = 0; j < 3; j++) {
        mn[j] = t->p.origin[j] + rnd() * ext[j] - 1;
        double size = k % 7 == 0 ? 9 + rnd() * 10 : k % 5 == 0 ? 0 : rnd() * (k % 3 ? 2 : 5);
        if (k % 11 == 3) { /* on leaf borders */
            mn[j] = t->p.origin[j] + floor(rnd() * ext[j]);
            size = floor(size) + 1;
        }
        mx[j] = mn[j] + size;
    }
}

static void removals_one_by_one(scene_fn make, int rounds)
{
    for (int round = 0; round < rounds; round++) {
        uint64_t seed = 5000 + (uint64_t)round;
        on_tree *t = make(seed, round);
        CHECK(t != NULL);
        if (!t) return;
        int prep = round % 2;
        if (prep) on_tree_prepare(t, -1, NULL);
        rng_state = seed * 13 + 5;
        enum { N = 40 };
        double box[N][2][3];
        uint32_t id[N];
        int order[N], left[N];
        for (int k = 0; k < N; k++) {
            random_box(t, k, box[k][0], box[k][1]);
            CHECK_EQ_INT(on_tree_add_obstacle(t, box[k][0], box[k][1], &id[k]), ON_SUCCESS);
            order[k] = k;
            left[k] = 1;
        }
        for (int k = N - 1; k > 0; k--) { /* a random order */
            int j = (int)(rnd() * (k + 1)), tmp = order[k];
            order[k] = order[j];
            order[j] = tmp;
        }
        for (int r = 0; r < N; r++) {
            int k = order[r];
            CHECK_EQ_INT(on_tree_remove_obstacle(t, id[k]), ON_SUCCESS);
            left[k] = 0;
            if (r % 4 != 3 && r != N - 1) continue; /* (a reference tree every 4 removals) */
            on_tree *want = make(seed, round);
            for (int j = 0; j < N; j++)
                if (left[j]) on_tree_add_obstacle(want, box[j][0], box[j][1], NULL);
            CHECK(same_contents(t, want));
            if (prep) CHECK(all_prepared_valid(t));
            size_t n;
            on_tree_obstacles(t, NULL, NULL, 0, &n);
            CHECK_EQ_INT((int)n, N - r - 1);
            on_tree_destroy(want);
        }
        /* every obstacle gone: the scene, slot for slot */
        on_tree *ref = make(seed, round);
        CHECK(same_tree(t, ref));
        on_tree_destroy(ref);
        on_tree_destroy(t);
    }
}

/* Ids are found among many (a binary search over slots, dead ones compacted away): 300 obstacles,
 * every other one removed, the list in order, removed ids refused, the rest removed from the last. */
static void many_ids(void)
{
    on_tree *t = scene(9, 5, 0), *ref = scene(9, 5, 0);
    enum { N = 300 };
    uint32_t id[N];
    rng_state = 99;
    for (int k = 0; k < N; k++) {
        double mn[3], mx[3];
        random_box(t, 1, mn, mx);
        CHECK_EQ_INT(on_tree_add_obstacle(t, mn, mx, &id[k]), ON_SUCCESS);
        CHECK_EQ_INT((int)id[k], k + 1);
    }
    for (int k = 0; k < N; k += 2) CHECK_EQ_INT(on_tree_remove_obstacle(t, id[k]), ON_SUCCESS);
    for (int k = 0; k < N; k += 2) CHECK_EQ_INT(on_tree_remove_obstacle(t, id[k]), ON_FAILURE | ON_INVALID);
    uint32_t ids[N];
    size_t n;
    CHECK_EQ_INT(on_tree_obstacles(t, ids, NULL, N, &n), ON_SUCCESS);
    CHECK_EQ_INT((int)n, N / 2);
    int inorder = 1;
    for (size_t k = 0; k < n; k++) inorder &= ids[k] == (uint32_t)(2 * k + 2);
    CHECK(inorder);
    CHECK_EQ_INT(on_tree_obstacles(t, ids, NULL, 3, &n), ON_FAILURE | ON_BUFFER_SMALL);
    CHECK(n == N / 2 && ids[2] == 6);
    for (int k = N - 1; k > 0; k -= 2) CHECK_EQ_INT(on_tree_remove_obstacle(t, id[k]), ON_SUCCESS);
    CHECK_EQ_INT(on_tree_obstacles(t, NULL, NULL, 0, &n), ON_SUCCESS);
    CHECK_EQ_INT((int)n, 0);
    CHECK(same_tree(t, ref));
    on_tree_destroy(t);
    on_tree_destroy(ref);
}

/* Removal works where the removed box is (obstacles.c; on_obstacles_work counts its nodes and the
 * candidate boxes it tests): removing the same 30 obstacles from one 64^3 tile costs about the same
 * with 30 or with 3,000 obstacles on it, not a rebuild's re-blocking of every obstacle left (2,970 or
 * more a removal with 3,000); the old rule was quadratic in the obstacles on the tile. */
static void removal_work(void)
{
    uint64_t per[2];
    for (int dense = 0; dense < 2; dense++) {
        on_tree_params p = {{1, 1, 1}, 6, 1.0, {0, 0, 0}, 0};
        on_tree *t = NULL;
        CHECK(on_ok(on_tree_create(&p, &t)));
        double wall[2][3] = {{10, 0, 10}, {12, 64, 50}};
        on_tree_add_box(t, wall[0], wall[1]);
        rng_state = 4242;
        int n = dense ? 3000 : 30;
        uint32_t *id = malloc((size_t)n * sizeof *id);
        for (int k = 0; k < n; k++) {
            double mn[3], mx[3];
            for (int j = 0; j < 3; j++) {
                mn[j] = rnd() * 60;
                mx[j] = mn[j] + 4;
            }
            CHECK_EQ_INT(on_tree_add_obstacle(t, mn, mx, &id[k]), ON_SUCCESS);
        }
        uint64_t w0 = on_obstacles_work(t);
        for (int k = 0; k < 30; k++) CHECK_EQ_INT(on_tree_remove_obstacle(t, id[k]), ON_SUCCESS);
        per[dense] = (on_obstacles_work(t) - w0) / 30;
        free(id);
        on_tree_destroy(t);
    }
    printf("obstacle removal work: %llu a removal among 30, %llu among 3,000\n", (unsigned long long)per[0],
           (unsigned long long)per[1]);
    CHECK(per[0] > 0);
    CHECK(per[1] < 2970);
    CHECK(per[1] < 20 * per[0]);
}

TEST_MAIN("obstacles", {
    removal_work();
    removals_one_by_one(scene_boxes, 24);
    removals_one_by_one(scene_voxels, 6);
    many_ids();
    orders(0);
    orders(0.25);
    random_rounds();
    running_and_edits();
})
