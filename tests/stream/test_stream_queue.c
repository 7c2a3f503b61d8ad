/*
 * test_stream_queue.c -- the order in which the streamer's workers take queued loads, and the limits
 * of an update's own work (octonav_stream.h): with the workers held (on_streamer_hold, streamer.h) the
 * queue is read as it is: locked and forced tiles first, then nearest an agent first; a queued tile no
 * rule wants any more leaves the queue unread (stats.cancelled), a locked one stays; once released and
 * finished, an update without wait installs at most max_publish tiles (locked ones first) and unloads
 * at most max_unloads, the rest left for the next updates (stats.deferred), and an update that waits
 * does everything. Worker threads throughout (and under TSan in make check-tsan).
 * Caches (test_caches): a worker builds each tile's cell adjacency beside its decode, the install
 * publishes it (the same adjacency the caller would build: numbers, cells, nodes, bytes), or, with
 * loads queued behind the tile, after them from a copy of its table; an update's
 * installs and unloads stop at publish_ms of the caller's thread CPU time, the first always done.
 * An edit of a loaded tile drops its adjacency: the next updates build it again from a copy of the
 * tile's table, one tile an update (test_adjacency_after_edit).
 */
#include "octonav.h"
#include "minitest.h"
#include "celladj.h"
#include "streamer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NX 12 /* a row of 12 tiles of 8^3 leaves, 1 unit each, along x */

static void write_pack(const char *dir, on_tree **out)
{
    on_tree_params p = {{NX, 1, 1}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    on_tree_create(&p, &t);
    for (int i = 0; i < NX; i++) {
        double mn[3] = {i * 8.0 + 2, 1, 1}, mx[3] = {i * 8.0 + 4, 3 + i % 4, 5};
        on_tree_add_box(t, mn, mx);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/tiles", dir);
    mkdir(path, 0700);
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        size_t len;
        on_tree_encode_tile_file(t, ti, NULL, 0, &len);
        uint8_t *b = malloc(len);
        if (!b) continue;
        on_tree_encode_tile_file(t, ti, b, len, &len);
        snprintf(path, sizeof path, "%s/tiles/%u_0_0.tile", dir, ti);
        FILE *f = fopen(path, "wb");
        if (f) {
            fwrite(b, 1, len, f);
            fclose(f);
        }
        free(b);
    }
    *out = t;
}

static void rm_pack(const char *dir)
{
    char path[512];
    for (int ti = 0; ti < NX; ti++) {
        snprintf(path, sizeof path, "%s/tiles/%d_0_0.tile", dir, ti);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/tiles", dir);
    rmdir(path);
    rmdir(dir);
}

/* Wait (at most ~5 s) until the workers finished every queued load (stats.decoded reaches n). */
static void wait_decoded(on_streamer *s, size_t n)
{
    for (int i = 0; i < 5000; i++) {
        on_streamer_stats st;
        on_streamer_stats_get(s, &st);
        if (st.decoded >= n) return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static size_t count_kind(const on_stream_event *ev, size_t n, int kind)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ev[i].kind == kind;
    return c;
}

/* A copy of orig with a one-worker streamer over dir (load_padding 20, unload_padding 40, max_publish
 * 2), its worker held so that the queue can be read before any tile is. */
static on_streamer *held(const char *dir, const on_tree *orig, on_tree **tree)
{
    on_tree_create(&orig->p, tree);
    on_streamer_params sp = {20.0, 40.0, 1, 0, 0, 2, 1, 0.0};
    on_streamer *s = NULL;
    CHECK(on_ok(on_streamer_create(*tree, dir, &sp, &s)));
    on_streamer_hold(s, 1);
    return s;
}

/* The streamer's queue after an update: n tiles, in want's order. */
static void check_queue(on_streamer *s, const uint32_t *want, size_t n)
{
    const on_stream_event *ev;
    size_t nev;
    CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
    uint32_t q[NX];
    size_t k = on_streamer_queue(s, q, NX);
    CHECK_EQ_INT(k, n);
    for (size_t i = 0; i < n && i < k; i++) CHECK_EQ_INT(q[i], want[i]);
}

static void test_order(const char *dir, const on_tree *orig)
{
    on_tree *t;
    /* load_padding 20: an agent at x = 4 wants tiles 0..3 (tile 3 starts at 24: 20 away) */
    on_streamer *s = held(dir, orig, &t);
    double a[3] = {4, 4, 4};
    uint32_t id;
    CHECK(on_ok(on_streamer_add_agent(s, a, &id)));
    CHECK(on_ok(on_streamer_lock(s, 9)));       /* what a navigator's goal waits for: far, yet early */
    CHECK(on_ok(on_streamer_force_load(s, 11))); /* pinned too */
    /* the tile the agent stands in first (what its navigator waits in), then the pinned ones (both
     * beyond every padding: as locked, by tile), then nearest first */
    uint32_t want[6] = {0, 9, 11, 1, 2, 3};
    check_queue(s, want, 6);
    const on_stream_event *ev;
    size_t nev;
    uint32_t q[NX];
    size_t n;
    /* the agent flies to x = 60 (tile 7): tiles 0..3 are no longer wanted (3 is 28 away, within
     * unload_padding, but a queued load goes by load_padding): they leave the queue unread */
    a[0] = 60;
    CHECK(on_ok(on_streamer_move_agent(s, id, a)));
    CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
    n = on_streamer_queue(s, q, NX);
    /* tiles 4..10 within 20 of x = 60: 7 (the agent's), 6 and 8 (4), 5 (12), 4 and 10 (20); 9 is pinned */
    uint32_t want2[8] = {7, 9, 11, 6, 8, 5, 4, 10};
    CHECK_EQ_INT(n, 8);
    for (size_t i = 0; i < 8 && i < n; i++) CHECK_EQ_INT(q[i], want2[i]);
    on_streamer_stats st;
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.cancelled, 4);
    CHECK_EQ_INT(st.queued, 8);
    for (uint32_t ti = 0; ti < 4; ti++) CHECK_EQ_INT(on_streamer_tile_state(s, ti), ON_TILE_UNLOADED);
    /* released: the 8 finish; an update installs 2 (max_publish), in line order: the agent's tile, then
     * the first pinned one */
    on_streamer_hold(s, 0);
    wait_decoded(s, 8);
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.decoded, 8); /* the cancelled four were never read */
    CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
    CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_LOADED), 2);
    CHECK_EQ_INT(on_streamer_tile_state(s, 7), ON_TILE_LOADED);
    CHECK_EQ_INT(on_streamer_tile_state(s, 9), ON_TILE_LOADED);
    CHECK_EQ_INT(on_streamer_tile_state(s, 11), ON_TILE_QUEUED);
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.deferred, 6);
    size_t updates = 1, loaded = 2;
    while (loaded < 8 && updates < 20) {
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        size_t k = count_kind(ev, nev, ON_EVENT_LOADED);
        CHECK(k <= 2);
        loaded += k;
        updates++;
    }
    CHECK_EQ_INT(loaded, 8);
    CHECK_EQ_INT(updates, 4); /* 2 + 2 + 2 + 2 */
    /* the agent leaves the grid: 6 tiles to unload, one an update (max_unloads 1); the pinned stay */
    a[0] = 500;
    CHECK(on_ok(on_streamer_move_agent(s, id, a)));
    for (int u = 0; u < 6; u++) {
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_UNLOADED), 1);
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.deferred, 5 - u);
    }
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.loaded, 2);
    /* an update that waits is not limited: back to x = 60, all five again in one update */
    a[0] = 60;
    CHECK(on_ok(on_streamer_move_agent(s, id, a)));
    CHECK(on_ok(on_streamer_update(s, 1, &ev, &nev)));
    CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_LOADED), 6); /* tiles 4..8 and 10 */
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

/* The line with several agents (issue 31, goal 1: a navigator's first move waits for its own tile):
 * the tiles agents stand in first, the most agents first; then a locked tile within the padding but
 * with no agent in it (a goal's tile); then the rest nearest first. Finished loads are installed in the
 * same order whatever order the worker read them in (max_publish 2 an update). */
static void test_order_agents(const char *dir, const on_tree *orig)
{
    on_tree *t;
    on_streamer *s = held(dir, orig, &t);
    double a[3] = {4, 4, 4}, b[3] = {44, 4, 4}, c[3] = {46, 2, 6};
    uint32_t id;
    CHECK(on_ok(on_streamer_add_agent(s, a, &id))); /* tile 0 */
    CHECK(on_ok(on_streamer_add_agent(s, b, &id))); /* tile 5, two agents */
    CHECK(on_ok(on_streamer_add_agent(s, c, &id)));
    CHECK(on_ok(on_streamer_lock(s, 3)));           /* 12 from x = 44, no agent in it */
    /* 5 (2 agents), 0 (1); 3 (locked); 6 (2 away), 1 and 4 (4, as queued: by tile), 7 (10), 2 (12),
     * 8 (16) */
    uint32_t want[9] = {5, 0, 3, 6, 1, 4, 7, 2, 8};
    check_queue(s, want, 9);
    const on_stream_event *ev;
    size_t nev;
    on_streamer_hold(s, 0);
    wait_decoded(s, 9);
    for (size_t u = 0; u < 3; u++) { /* 2 an update, in line order */
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_LOADED), 2);
        for (size_t i = 0; i < 2 && i < nev; i++) CHECK_EQ_INT(ev[i].tile, want[2 * u + i]);
    }
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

/* A copy of orig with a streamer over dir (workers 0 or 1) whose first update loaded all NX tiles. */
static on_streamer *load_all(const char *dir, const on_tree *orig, int workers, on_tree **tree)
{
    on_tree_create(&orig->p, tree);
    on_streamer_params sp = {0.0, 1.0, workers, 0, 0, 0, 0, 0.0};
    on_streamer *s = NULL;
    CHECK(on_ok(on_streamer_create(*tree, dir, &sp, &s)));
    for (uint32_t ti = 0; ti < NX; ti++) CHECK(on_ok(on_streamer_force_load(s, ti)));
    const on_stream_event *ev;
    size_t nev;
    CHECK(on_ok(on_streamer_update(s, 1, &ev, &nev)));
    CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_LOADED), NX);
    return s;
}

static void test_caches(const char *dir, const on_tree *orig)
{
    for (int workers = 0; workers <= 1; workers++) {
        on_tree *t;
        on_streamer *s = load_all(dir, orig, workers, &t);
        on_streamer_stats st;
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.adjacency_built, NX);
        CHECK_EQ_INT(st.masks_built, NX);
        for (uint32_t ti = 0; ti < NX; ti++) {
            const on_celladj *a = atomic_load(&t->tiles[ti].adj);
            CHECK(a != NULL);
            on_celladj *b = on_celladj_build(t, ti, &t->tiles[ti].table);
            CHECK(b != NULL);
            if (!a || !b) continue;
            CHECK(a->tab == &t->tiles[ti].table);
            CHECK_EQ_INT(a->n, b->n);
            CHECK_EQ_INT(a->ncell, b->ncell);
            CHECK_EQ_INT(a->nnode, b->nnode);
            CHECK_EQ_INT(a->bytes, b->bytes);
            CHECK_EQ_INT(a->border, b->border);
            on_celladj_free(b);
        }
        on_streamer_destroy(s);
        on_tree_destroy(t);
    }
    /* loads queued behind a tile: it comes without its adjacency (a copy of its table goes back to the
     * worker), which follows once no load is queued; the last tile read comes with it */
    {
        on_tree *t;
        on_tree_create(&orig->p, &t);
        on_streamer_params sp = {0.0, 1.0, 1, 0, 0, 0, 0, 0.0};
        on_streamer *s;
        CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
        for (uint32_t ti = 0; ti < NX; ti++) CHECK(on_ok(on_streamer_force_load(s, ti)));
        const on_stream_event *ev;
        size_t nev;
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        wait_decoded(s, NX);
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_LOADED), NX);
        on_streamer_stats st;
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.adjacency_built, 1);
        size_t with = 0;
        for (uint32_t ti = 0; ti < NX; ti++) with += atomic_load(&t->tiles[ti].adj) != NULL;
        CHECK_EQ_INT(with, 1);
        for (int i = 0; i < 5000 && st.adjacency_built < NX; i++) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
            on_streamer_stats_get(s, &st);
        }
        CHECK_EQ_INT(st.adjacency_built, NX);
        for (uint32_t ti = 0; ti < NX; ti++) {
            const on_celladj *a = atomic_load(&t->tiles[ti].adj);
            CHECK(a != NULL && a->tab == &t->tiles[ti].table);
        }
        on_streamer_destroy(s);
        on_tree_destroy(t);
    }
    /* publish_ms: no count limit, a bound nothing fits in: one install an update */
    on_tree *t;
    on_tree_create(&orig->p, &t);
    on_streamer_params sp = {0.0, 1.0, 1, 0, 0, 0, 0, 1e-9};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    for (uint32_t ti = 0; ti < NX; ti++) CHECK(on_ok(on_streamer_force_load(s, ti)));
    const on_stream_event *ev;
    size_t nev;
    CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
    wait_decoded(s, NX);
    on_streamer_stats st;
    for (int u = 1; u <= NX; u++) {
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        CHECK_EQ_INT(count_kind(ev, nev, ON_EVENT_LOADED), 1);
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.loaded, u);
        CHECK_EQ_INT(st.deferred, NX - u);
    }
    on_streamer_params bad = {0.0, 1.0, 1, 0, 0, 0, 0, -1.0};
    on_streamer *s2 = NULL;
    CHECK(!on_ok(on_streamer_create(t, dir, &bad, &s2)));
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

/* A loaded tile's adjacency dropped by an edit is built again from a copy of its table (on a worker,
 * or in the update without workers) and given to the tile if unchanged: one tile an update. */
static void test_adjacency_after_edit(const char *dir, const on_tree *orig)
{
    for (int workers = 0; workers <= 1; workers++) {
        on_tree *t;
        on_streamer *s = load_all(dir, orig, workers, &t);
        const on_stream_event *ev;
        size_t nev;
        on_streamer_stats st;
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.adjacency_built, NX);
        /* edits in tiles 5 and 7 (x 40-48, 56-64) drop their adjacencies */
        double a0[3] = {45, 1, 1}, a1[3] = {47, 6, 6}, b0[3] = {57, 2, 2}, b1[3] = {58, 7, 7};
        CHECK(on_ok(on_tree_add_box(t, a0, a1)));
        CHECK(on_ok(on_tree_add_box(t, b0, b1)));
        CHECK(atomic_load(&t->tiles[5].adj) == NULL);
        CHECK(atomic_load(&t->tiles[7].adj) == NULL);
        CHECK(on_ok(on_streamer_update(s, 1, &ev, &nev))); /* one of them */
        size_t with = (atomic_load(&t->tiles[5].adj) != NULL) + (atomic_load(&t->tiles[7].adj) != NULL);
        CHECK_EQ_INT(with, 1);
        CHECK(on_ok(on_streamer_update(s, 1, &ev, &nev))); /* the other */
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.adjacency_built, NX + 2);
        for (uint32_t ti = 5; ti <= 7; ti += 2) {
            const on_celladj *a = atomic_load(&t->tiles[ti].adj);
            on_celladj *b = on_celladj_build(t, ti, &t->tiles[ti].table);
            CHECK(a != NULL && b != NULL);
            if (a && b) { /* the adjacency the caller would build of the tile as edited */
                CHECK(a->tab == &t->tiles[ti].table);
                CHECK_EQ_INT(a->n, b->n);
                CHECK_EQ_INT(a->ncell, b->ncell);
                CHECK_EQ_INT(a->nnode, b->nnode);
                CHECK_EQ_INT(a->bytes, b->bytes);
            }
            on_celladj_free(b);
        }
        /* nothing more to build: the updates queue no job */
        CHECK(on_ok(on_streamer_update(s, 1, &ev, &nev)));
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.adjacency_built, NX + 2);
        on_streamer_destroy(s);
        on_tree_destroy(t);
    }
}

static int run(void)
{
    char dir[] = "/tmp/octonav-stream-queue-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    on_tree *orig;
    write_pack(dir, &orig);
    test_order(dir, orig);
    test_order_agents(dir, orig);
    test_caches(dir, orig);
    test_adjacency_after_edit(dir, orig);
    rm_pack(dir);
    on_tree_destroy(orig);
    return 0;
}

TEST_MAIN("stream_queue", {
    if (run()) return 1;
})
