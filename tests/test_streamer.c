/*
 * test_streamer.c -- the streamer against a reference of its rules: a world of tiles on disk, agents
 * random-walking, after every update the loaded set equals what load/unload paddings, locks and pins
 * require; loaded tiles equal the baked ones; missing and corrupt files fail cleanly; memory returns
 * to the baseline when the agents leave; with `prepare`, every loaded tile carries the box set
 * on_tree_prepare builds for the same contents (boxes and neighbour lists equal). Runs with worker
 * threads (and under TSan in make check-tsan).
 */
#include "boxes.h"
#include "minitest.h"
#include "tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TX 6
#define TZ 6
#define DEPTH 3

static uint64_t rs = 0x2545F4914F6CDD1Dull;
static double rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

static void write_file(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(b, 1, n, f);
    fclose(f);
}

static on_tree *make_world(const char *dir)
{
    on_tree_params p = {{TX, 1, TZ}, DEPTH, 2.0, {-10, 0, -10}, 0};
    on_tree *t;
    on_tree_create(&p, &t);
    for (int i = 0; i < 40; i++) {
        double mn[3] = {-10 + rnd() * 96, rnd() * 14, -10 + rnd() * 96};
        double mx[3] = {mn[0] + 1 + rnd() * 6, mn[1] + 1 + rnd() * 4, mn[2] + 1 + rnd() * 6};
        on_tree_add_box(t, mn, mx);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/tiles", dir);
    mkdir(path, 0700);
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        int c[3];
        on_tile_coords(t, ti, c);
        size_t len;
        on_tree_encode_tile(t, ti, NULL, 0, &len);
        uint8_t *b = malloc(len);
        on_tree_encode_tile(t, ti, b, len, &len);
        if (ti == 7) b[len / 2] ^= 0x55; /* corrupt */
        snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.tile", dir, c[0], c[1], c[2]);
        if (ti != 13) write_file(path, b, len); /* 13 is missing */
        free(b);
    }
    return t;
}

static double tile_distance(const on_tree *t, uint32_t tile, const double p[3])
{
    int ijk[3];
    on_tile_coords(t, tile, ijk);
    double size = (double)t->n * t->p.scale, d2 = 0;
    for (int k = 0; k < 3; k++) {
        double lo = t->p.origin[k] + ijk[k] * size, hi = lo + size;
        double e = p[k] < lo ? lo - p[k] : p[k] > hi ? p[k] - hi : 0;
        d2 += e * e;
    }
    return sqrt(d2);
}

static int same_tile(const on_tree *a, const on_tree *b, uint32_t ti)
{
    size_t la, lb;
    on_tree_encode_tile(a, ti, NULL, 0, &la);
    on_tree_encode_tile(b, ti, NULL, 0, &lb);
    if (la != lb) return 0;
    uint8_t *x = malloc(la), *y = malloc(lb);
    on_tree_encode_tile(a, ti, x, la, &la);
    on_tree_encode_tile(b, ti, y, lb, &lb);
    int same = memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* Does loaded tile ti of t have a valid box set equal to orig's (prepared) one? */
static int same_boxes(const on_tree *orig, const on_tree *t, uint32_t ti)
{
    const on_boxset *a = on_tile_boxes(orig, ti), *b = on_tile_boxes(t, ti);
    if (!a || !b || a->nbox != b->nbox) return 0;
    if (memcmp(a->box, b->box, a->nbox * sizeof *a->box) != 0) return 0;
    if (memcmp(a->adj_off, b->adj_off, (a->nbox + 1) * sizeof *a->adj_off) != 0) return 0;
    return memcmp(a->adj, b->adj, a->adj_off[a->nbox] * sizeof *a->adj) == 0;
}

#define NAGENTS 16

static void test_walk(const char *dir, on_tree *orig, int workers, int prepare)
{
    on_tree *t;
    on_tree_create(&orig->p, &t);
    on_streamer_params sp = {6.0, 12.0, workers, 0, prepare};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    on_tree_stats base;
    on_tree_stats_get(t, &base);
    double pos[NAGENTS][3];
    uint32_t ids[NAGENTS];
    for (int a = 0; a < NAGENTS; a++) {
        pos[a][0] = -10 + rnd() * 96, pos[a][1] = rnd() * 16, pos[a][2] = -10 + rnd() * 96;
        CHECK(on_ok(on_streamer_add_agent(s, pos[a], &ids[a])));
    }
    uint8_t ref[TX * TZ] = {0};
    int mismatch = 0, content_bad = 0, failed_seen = 0, bad_failures = 0, boxes_bad = 0, boxes_checked = 0;
    const on_stream_event *ev;
    for (int frame = 0; frame < 400; frame++) {
        for (int a = 0; a < NAGENTS; a++) {
            for (int k = 0; k < 3; k += 2) {
                pos[a][k] += (rnd() - 0.5) * 6;
                if (pos[a][k] < -20) pos[a][k] = -20;
                if (pos[a][k] > 100) pos[a][k] = 100;
            }
            on_streamer_move_agent(s, ids[a], pos[a]);
        }
        if (frame == 100) on_streamer_lock(s, 0), on_streamer_force_load(s, 35);
        if (frame == 200) on_streamer_unlock(s, 0), on_streamer_force_unload(s, 35);
        size_t nev;
        on_streamer_update(s, 1, &ev, &nev);
        for (size_t e = 0; e < nev; e++)
            if (ev[e].kind == ON_EVENT_FAILED) {
                failed_seen++;
                if (ev[e].tile != 7 && ev[e].tile != 13) bad_failures++;
                if (ev[e].tile == 7 && !(ev[e].status & ON_CORRUPT)) bad_failures++;
                if (ev[e].tile == 13 && !(ev[e].status & ON_IO)) bad_failures++;
            }
        if (frame == 200) ref[35] = 0; /* force_unload dropped it at once */
        /* reference: keep what still has a reason to stay, add what must load */
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            int near_load = 0, near_keep = 0;
            for (int a = 0; a < NAGENTS; a++) {
                double d = tile_distance(t, ti, pos[a]);
                near_load |= d <= sp.load_padding;
                near_keep |= d <= sp.unload_padding;
            }
            int pinned = (frame >= 100 && frame < 200) && (ti == 0 || ti == 35);
            int want = near_load || pinned || (ref[ti] && near_keep);
            if (ti == 7 || ti == 13) want = 0; /* their files are bad: never loaded */
            ref[ti] = (uint8_t)want;
            int got = on_streamer_tile_state(s, ti) == ON_TILE_LOADED;
            if (got != want) mismatch++;
            if (got && frame % 50 == 0 && !same_tile(orig, t, ti)) content_bad++;
            if (got && frame % 50 == 0) {
                boxes_checked++;
                if (prepare ? !same_boxes(orig, t, ti) : on_tile_boxes(t, ti) != NULL) boxes_bad++;
            }
        }
    }
    CHECK_EQ_INT(mismatch, 0);
    CHECK_EQ_INT(content_bad, 0);
    CHECK_EQ_INT(boxes_bad, 0);
    CHECK(boxes_checked > 100);
    CHECK(failed_seen >= 1);
    CHECK_EQ_INT(bad_failures, 0);
    CHECK_EQ_INT(on_streamer_tile_state(s, 7), ON_TILE_FAILED);
    /* retry re-reads the (still corrupt) file and fails again, reported again */
    on_streamer_retry(s, 7);
    on_streamer_force_load(s, 7);
    size_t nev;
    on_streamer_update(s, 1, &ev, &nev);
    int refailed = 0;
    for (size_t e = 0; e < nev; e++) refailed += ev[e].tile == 7 && ev[e].kind == ON_EVENT_FAILED;
    CHECK_EQ_INT(refailed, 1);
    on_streamer_force_unload(s, 7);
    /* everyone leaves: memory back to the baseline */
    for (int a = 0; a < NAGENTS; a++) CHECK(on_ok(on_streamer_remove_agent(s, ids[a])));
    on_streamer_update(s, 1, &ev, &nev);
    on_streamer_stats st;
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.loaded, 0);
    CHECK_EQ_INT(st.agents, 0);
    CHECK_EQ_INT(st.tree_bytes, base.bytes);
    on_tree_stats ts;
    on_tree_stats_get(t, &ts);
    CHECK_EQ_INT(ts.tiles_prepared, 0); /* unloading dropped the graphs */
    CHECK_EQ_INT(ts.box_bytes, 0);
    CHECK(st.decoded > 0);
    /* misuse */
    CHECK((on_streamer_move_agent(s, 999, pos[0]) & ON_INVALID) != 0);
    CHECK((on_streamer_unlock(s, 3) & ON_INVALID) != 0);
    CHECK((on_streamer_lock(s, 9999) & ON_INVALID) != 0);
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

static void test_async(const char *dir, on_tree *orig)
{
    on_tree *t;
    on_tree_create(&orig->p, &t);
    on_streamer_params sp = {1.0, 2.0, 2, 0, 1};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    double p[3] = {30, 5, 30}; /* inside tile (2,0,2) = 14 (7 and 13 are the bad files) */
    uint32_t id;
    on_streamer_add_agent(s, p, &id);
    uint32_t tile = on_tile_index(t, 2, 0, 2);
    int loaded = 0;
    const on_stream_event *ev;
    for (int i = 0; i < 2000 && !loaded; i++) {
        size_t nev;
        on_streamer_update(s, 0, &ev, &nev);
        loaded = on_streamer_tile_state(s, tile) == ON_TILE_LOADED;
        if (!loaded) {
            struct timespec ts = {0, 500000};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(loaded);
    CHECK(same_tile(orig, t, tile));
    on_streamer_destroy(s); /* with loads possibly in flight elsewhere: joins cleanly */
    on_tree_destroy(t);
    /* bad parameters */
    on_streamer_params bad = {5.0, 5.0, 1, 0, 0};
    CHECK((on_streamer_create(orig, dir, &bad, &s) & ON_INVALID) != 0);
}

static void rm_dir(const char *dir, const on_tree *t)
{
    char path[512];
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        int c[3];
        on_tile_coords(t, ti, c);
        snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.tile", dir, c[0], c[1], c[2]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/tiles", dir);
    rmdir(path);
    rmdir(dir);
}

TEST_MAIN("streamer", {
    char dir[] = "/tmp/octonav-streamer-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    on_tree *orig = make_world(dir);
    CHECK(on_ok(on_tree_prepare(orig, -1, NULL)));
    test_walk(dir, orig, 2, 0);
    test_walk(dir, orig, 0, 0);
    test_walk(dir, orig, 2, 1);
    test_walk(dir, orig, 0, 1);
    test_async(dir, orig);
    rm_dir(dir, orig);
    on_tree_destroy(orig);
})
