/*
 * test_streamer.c -- the streamer against a reference of its documented rules (octonav.h: a tile loads
 * when the distance from an agent to the tile's box is <= load_padding, stays while <= unload_padding,
 * locks and pins keep it), computed here in exact integer arithmetic on positions of a half-unit
 * lattice (so tiles exactly a padding away on any side are decided without rounding), not with the
 * streamer's own code: agents random-walking, after every update the loaded set equals the rules';
 * a tile exactly load_padding away loads on all 6 sides; destroying the tree under a streamer with
 * queued loads stops it (no worker touches the freed tree); loaded tiles equal the baked ones; missing and corrupt files fail cleanly; memory returns
 * to the baseline when the agents leave; with `prepare`, every loaded tile carries the box set
 * on_tree_prepare builds for the same contents (boxes and neighbour lists equal); temporary obstacles
 * added and removed while tiles stream keep every loaded tile equal to a copy that never streams.
 * Runs with worker threads (and under TSan in make check-tsan).
 */
#include "octonav.h"
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
        on_tree_encode_tile_file(t, ti, NULL, 0, &len);
        uint8_t *b = malloc(len);
        on_tree_encode_tile_file(t, ti, b, len, &len);
        if (ti == 7) b[len / 2] ^= 0x55; /* corrupt */
        snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.tile", dir, c[0], c[1], c[2]);
        if (ti != 13) write_file(path, b, len); /* 13 is missing */
        free(b);
    }
    return t;
}

/* The oracle's rule, from the public parameters only: is the box of tile (i, j, k) within pad of p?
 * Everything in half units as integers (the tests keep origins, tile sizes, paddings and positions
 * on the half-unit lattice), so a distance exactly equal to the padding compares exactly. */
static long long half(double v) { return llround(v * 2); }

static long long dist2(const on_tree_params *tp, uint32_t tile, const double p[3])
{
    long long ijk[3] = {tile % (uint32_t)tp->tiles[0], (tile / (uint32_t)tp->tiles[0]) % (uint32_t)tp->tiles[1],
                        tile / ((uint32_t)tp->tiles[0] * (uint32_t)tp->tiles[1])};
    long long side = half(tp->scale) << tp->depth, d2 = 0;
    for (int k = 0; k < 3; k++) {
        long long lo = half(tp->origin[k]) + ijk[k] * side, hi = lo + side, v = half(p[k]);
        long long e = v < lo ? lo - v : v > hi ? v - hi : 0;
        d2 += e * e;
    }
    return d2;
}

static int within(const on_tree_params *tp, uint32_t tile, const double p[3], double pad)
{
    return dist2(tp, tile, p) <= half(pad) * half(pad);
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

/* With cap = max_loaded > 0 the loaded set is not the uncapped one; the rules' invariants are checked
 * instead: pinned tiles loaded, every loaded tile pinned or within unload_padding, the loaded count
 * never grows above max(cap, its last count) but by pinned loads (pinned tiles load whatever the cap
 * says; the tiles loaded meanwhile stay while needed), the waiting list exactly the tiles within load_padding not loaded, and
 * tiles wait only while the cap is full of tiles the rules need (nothing left to evict). */
static void test_walk(const char *dir, on_tree *orig, int workers, int prepare, size_t cap)
{
    on_tree *t;
    on_tree_create(&orig->p, &t);
    on_streamer_params sp = {6.0, 12.0, workers, cap, prepare, 0, 0, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    on_tree_stats base;
    on_tree_stats_get(t, &base);
    double pos[NAGENTS][3];
    uint32_t ids[NAGENTS];
    for (int a = 0; a < NAGENTS; a++) {
        /* on the half-unit lattice: boxes exactly a padding away happen often */
        pos[a][0] = -10 + floor(rnd() * 192) / 2, pos[a][1] = floor(rnd() * 32) / 2;
        pos[a][2] = -10 + floor(rnd() * 192) / 2;
        CHECK(on_ok(on_streamer_add_agent(s, pos[a], &ids[a])));
    }
    uint8_t ref[TX * TZ] = {0};
    int exact = 0; /* (tile, agent) pairs exactly load_padding apart: the walk must meet many */
    int waited = 0; /* capped: frames with tiles waiting */
    size_t prev_loaded = 0;
    int mismatch = 0, content_bad = 0, failed_seen = 0, bad_failures = 0, boxes_bad = 0, boxes_checked = 0;
    const on_stream_event *ev;
    for (int frame = 0; frame < 400; frame++) {
        for (int a = 0; a < NAGENTS; a++) {
            for (int k = 0; k < 3; k += 2) {
                pos[a][k] += floor(rnd() * 13 - 6) / 2; /* -3 .. 3 in half units */
                if (pos[a][k] < -20) pos[a][k] = -20;
                if (pos[a][k] > 100) pos[a][k] = 100;
            }
            on_streamer_move_agent(s, ids[a], pos[a]);
        }
        if (frame == 100) on_streamer_lock(s, 0), on_streamer_force_load(s, 35);
        if (frame == 200) on_streamer_unlock(s, 0), on_streamer_force_unload(s, 35);
        size_t nev;
        on_streamer_update(s, 1, &ev, &nev);
        int failed_now = 0;
        size_t pinned_loads = 0;
        for (size_t e = 0; e < nev; e++)
            if (ev[e].kind == ON_EVENT_LOADED) {
                pinned_loads += (frame >= 100 && frame < 200) && (ev[e].tile == 0 || ev[e].tile == 35);
            } else if (ev[e].kind == ON_EVENT_FAILED) {
                failed_now++;
                failed_seen++;
                if (ev[e].tile != 7 && ev[e].tile != 13) bad_failures++;
                if (ev[e].tile == 7 && !(ev[e].status & ON_CORRUPT)) bad_failures++;
                if (ev[e].tile == 13 && !(ev[e].status & ON_IO)) bad_failures++;
            }
        if (frame == 200) ref[35] = 0; /* force_unload dropped it at once */
        /* reference: keep what still has a reason to stay, add what must load */
        size_t nloaded = 0;
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            int near_load = 0, near_keep = 0;
            for (int a = 0; a < NAGENTS; a++) {
                near_load |= within(&orig->p, ti, pos[a], sp.load_padding);
                exact += dist2(&orig->p, ti, pos[a]) == half(sp.load_padding) * half(sp.load_padding);
                near_keep |= within(&orig->p, ti, pos[a], sp.unload_padding);
            }
            int pinned = (frame >= 100 && frame < 200) && (ti == 0 || ti == 35);
            int want = near_load || pinned || (ref[ti] && near_keep);
            if (ti == 7 || ti == 13) want = 0; /* their files are bad: never loaded */
            ref[ti] = (uint8_t)want;
            int got = on_streamer_tile_state(s, ti) == ON_TILE_LOADED;
            if (cap) {
                ref[ti] = (uint8_t)got; /* the capped rules keep no reference set */
                int bad = ti == 7 || ti == 13;
                if (pinned && !bad && !got) mismatch++;
                if (got && !pinned && !near_keep) mismatch++;
                if (got && bad) mismatch++;
                int listed = 0;
                const uint32_t *wt;
                size_t nw;
                on_streamer_waiting(s, &wt, &nw);
                for (size_t w = 0; w < nw; w++) listed += wt[w] == ti;
                if (!bad && listed != (near_load && !got)) mismatch++; /* bad files may wait or fail */
                if (nw && got && !pinned && !near_load) mismatch++; /* waiting: nothing left to evict */
                nloaded += got;
            } else if (got != want) {
                mismatch++;
            }
            if (got && frame % 50 == 0 && !same_tile(orig, t, ti)) content_bad++;
            if (got && frame % 50 == 0) {
                boxes_checked++;
                if (prepare ? !same_boxes(orig, t, ti) : on_tile_boxes(t, ti) != NULL) boxes_bad++;
            }
        }
        if (cap) {
            const uint32_t *wt;
            size_t nw;
            on_streamer_waiting(s, &wt, &nw);
            on_streamer_stats st;
            on_streamer_stats_get(s, &st);
            if (nloaded > (prev_loaded > cap ? prev_loaded : cap) + pinned_loads || st.loaded != nloaded || st.waiting != nw) mismatch++;
            /* tiles wait only at the limit (a bad file queued in this update held a slot, then failed) */
            if (nw && nloaded + (size_t)failed_now < cap) mismatch++;
            waited += nw > 0;
            prev_loaded = nloaded;
        }
    }
    CHECK_EQ_INT(mismatch, 0);
    CHECK(exact > 100);
    if (cap) {
        on_streamer_stats st;
        on_streamer_stats_get(s, &st);
        CHECK(st.evicted > 0);
        CHECK(waited > 100);
    }
    CHECK_EQ_INT(content_bad, 0);
    CHECK_EQ_INT(boxes_bad, 0);
    CHECK(boxes_checked > (cap ? 50 : 100));
    CHECK(failed_seen >= 1 || cap);
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
    on_streamer_params sp = {1.0, 2.0, 2, 0, 1, 0, 0, 0.0};
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
    on_streamer_params bad = {5.0, 5.0, 1, 0, 0, 0, 0, 0.0};
    CHECK((on_streamer_create(orig, dir, &bad, &s) & ON_INVALID) != 0);
}

/* Write every tile of t as DIR/tiles/I_J_K.tile. */
static void write_pack(const char *dir, const on_tree *t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tiles", dir);
    mkdir(path, 0700);
    for (uint32_t ti = 0; ti < t->ntiles; ti++) {
        int c[3];
        on_tile_coords(t, ti, c);
        size_t len;
        on_tree_encode_tile_file(t, ti, NULL, 0, &len);
        uint8_t *b = malloc(len);
        if (!b) continue;
        on_tree_encode_tile_file(t, ti, b, len, &len);
        snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.tile", dir, c[0], c[1], c[2]);
        write_file(path, b, len);
        free(b);
    }
}

/* 3 x 3 x 3 tiles of side 8, an agent at the centre of the middle one: load_padding 4 reaches the 6
 * face neighbours exactly (distance 4 = the padding: loaded on every side), not the edge or corner
 * ones (sqrt(32), sqrt(48)); 3.5 reaches only its own tile. */
static void test_six_sides(const char *dir, int workers)
{
    on_tree_params tp = {{3, 3, 3}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    const double box_lo[3] = {1, 1, 1}, box_hi[3] = {2, 2, 2};
    on_tree_add_box(t, box_lo, box_hi);
    write_pack(dir, t);
    for (int round = 0; round < 2; round++) {
        double pad = round == 0 ? 4.0 : 3.5;
        on_streamer_params sp = {pad, 8.0, workers, 0, 0, 0, 0, 0.0};
        on_streamer *s;
        CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
        const double c[3] = {12, 12, 12};
        uint32_t id;
        CHECK(on_ok(on_streamer_add_agent(s, c, &id)));
        const on_stream_event *ev;
        size_t nev;
        on_streamer_update(s, 1, &ev, &nev);
        int loaded = 0, sides = 0;
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            int ijk[3];
            on_tile_coords(t, ti, ijk);
            int off = abs(ijk[0] - 1) + abs(ijk[1] - 1) + abs(ijk[2] - 1);
            int got = on_streamer_tile_state(s, ti) == ON_TILE_LOADED;
            loaded += got;
            if (off == 1) sides += got;
            CHECK_EQ_INT(got, off == 0 || (off == 1 && round == 0));
            CHECK_EQ_INT(got, within(&tp, ti, c, pad)); /* the oracle agrees */
        }
        CHECK_EQ_INT(loaded, round == 0 ? 7 : 1);
        CHECK_EQ_INT(sides, round == 0 ? 6 : 0);
        on_streamer_destroy(s);
    }
    on_tree_destroy(t);
}

/* max_loaded below what one agent needs (the 3 x 3 x 3 pack of test_six_sides, load_padding 4: 7
 * tiles wanted, max_loaded 3): its own tile loads first, then the nearest, the rest are listed as
 * waiting (never a silent wait); a locked tile loads above the limit; moving away, tiles only
 * unload_padding keeps make room for the new ones. */
static void test_cap_lock(const char *dir, int workers)
{
    on_tree_params tp = {{3, 3, 3}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    on_streamer_params sp = {4.0, 30.0, workers, 3, 0, 0, 0, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    const double c[3] = {12, 12, 12};
    uint32_t id;
    CHECK(on_ok(on_streamer_add_agent(s, c, &id)));
    const on_stream_event *ev;
    size_t nev, nw;
    const uint32_t *wt;
    on_streamer_update(s, 1, &ev, &nev);
    on_streamer_stats st;
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.loaded, 3);
    CHECK_EQ_INT(st.waiting, 4);
    uint32_t centre = on_tile_index(t, 1, 1, 1);
    CHECK_EQ_INT(on_streamer_tile_state(s, centre), ON_TILE_LOADED);
    on_streamer_waiting(s, &wt, &nw);
    CHECK_EQ_INT(nw, 4);
    for (size_t i = 0; i < nw; i++) {
        CHECK(within(&tp, wt[i], c, 4.0));
        CHECK_EQ_INT(on_streamer_tile_state(s, wt[i]), ON_TILE_UNLOADED);
    }
    /* a lock wins over the limit */
    uint32_t corner = on_tile_index(t, 0, 0, 0);
    CHECK(on_ok(on_streamer_lock(s, corner)));
    on_streamer_update(s, 1, &ev, &nev);
    CHECK_EQ_INT(on_streamer_tile_state(s, corner), ON_TILE_LOADED);
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.loaded, 4);
    CHECK_EQ_INT(st.waiting, 4);
    CHECK_EQ_INT(st.locked, 1);
    /* to the far corner: the tiles behind (beyond load_padding, within unload_padding) make room */
    const double far[3] = {20, 20, 20};
    CHECK(on_ok(on_streamer_move_agent(s, id, far)));
    on_streamer_update(s, 1, &ev, &nev);
    on_streamer_stats_get(s, &st);
    uint32_t own = on_tile_index(t, 2, 2, 2);
    CHECK_EQ_INT(on_streamer_tile_state(s, own), ON_TILE_LOADED);
    CHECK_EQ_INT(on_streamer_tile_state(s, corner), ON_TILE_LOADED); /* still locked */
    CHECK_EQ_INT(st.loaded, 3);
    CHECK_EQ_INT(st.waiting, 2); /* (2,2,2) wants itself and 3 face neighbours: 2 fit beside the lock */
    CHECK_EQ_INT(st.evicted, 3);  /* the three tiles around the centre */
    for (uint32_t ti = 0; ti < t->ntiles; ti++)
        if (on_streamer_tile_state(s, ti) == ON_TILE_LOADED) CHECK(ti == corner || within(&tp, ti, far, 4.0));
    /* the lock released: room for one more */
    CHECK(on_ok(on_streamer_unlock(s, corner)));
    on_streamer_update(s, 1, &ev, &nev);
    on_streamer_stats_get(s, &st);
    CHECK_EQ_INT(st.loaded, 3);
    CHECK_EQ_INT(st.waiting, 1);
    CHECK_EQ_INT(on_streamer_tile_state(s, corner), ON_TILE_UNLOADED);
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

/* Whole tree files (a world's holes) read on the workers: the tree arrives as an event with its id
 * and equals the saved one; a FIFO fails at once with the reader's reason (never blocks a worker or
 * destroy); a destroy with tree loads still queued frees them. */
static void test_load_tree(const char *dir, const on_tree *orig, int workers)
{
    char path[512], fifo[512];
    snprintf(path, sizeof path, "%s/hole.tree", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo.tree", dir);
    CHECK(on_ok(on_tree_save(orig, path)));
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    on_tree *t;
    CHECK(on_ok(on_tree_create(&orig->p, &t)));
    on_streamer_params sp = {1.0, 2.0, workers, 0, 0, 0, 0, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    CHECK(on_ok(on_streamer_load_tree(s, 41, path)));
    CHECK(on_ok(on_streamer_load_tree(s, 42, fifo)));
    const on_stream_event *ev;
    size_t nev;
    CHECK(on_ok(on_streamer_update(s, 1, &ev, &nev)));
    int got = 0, failed = 0;
    for (size_t e = 0; e < nev; e++) {
        if (ev[e].kind == ON_EVENT_TREE_LOADED && ev[e].tile == 41) {
            got++;
            for (uint32_t ti = 0; ti < orig->ntiles; ti++) CHECK(same_tile(orig, ev[e].tree, ti));
            on_tree_destroy(ev[e].tree);
        }
        if (ev[e].kind == ON_EVENT_TREE_FAILED && ev[e].tile == 42) {
            failed++;
            CHECK(strstr(ev[e].err, "not a regular file") != NULL);
        }
    }
    CHECK_EQ_INT(got, 1);
    CHECK_EQ_INT(failed, 1);
    /* queued and never collected: destroy frees them */
    CHECK(on_ok(on_streamer_load_tree(s, 43, path)));
    CHECK(on_ok(on_streamer_load_tree(s, 44, fifo)));
    on_streamer_destroy(s);
    on_tree_destroy(t);
    unlink(path);
    unlink(fifo);
}

/* Destroying a tree while its streamer has loads queued (one worker, 36 tiles asked for at once)
 * stops the streamer first: no worker reads the freed tree (ASan/TSan in make check), and the
 * streamer answers ON_INVALID until it is destroyed. A tree takes one streamer at a time. */
static void test_tree_destroyed(const char *dir, const on_tree *orig)
{
    for (int round = 0; round < 20; round++) {
        on_tree *t;
        CHECK(on_ok(on_tree_create(&orig->p, &t)));
        on_streamer_params sp = {200.0, 400.0, 1, 0, round & 1, 0, 0, 0.0};
        on_streamer *s, *second;
        CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
        CHECK((on_streamer_create(t, dir, &sp, &second) & ON_INVALID) != 0);
        const double p[3] = {40, 5, 40};
        uint32_t id;
        CHECK(on_ok(on_streamer_add_agent(s, p, &id)));
        const on_stream_event *ev;
        size_t nev;
        CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
        on_streamer_stats st;
        on_streamer_stats_get(s, &st);
        if (round == 0) CHECK(st.queued > 20);
        on_tree_destroy(t);
        CHECK((on_streamer_update(s, 0, &ev, &nev) & ON_INVALID) != 0);
        CHECK_EQ_INT(nev, 0);
        CHECK_EQ_INT(on_streamer_tile_state(s, 0), -1);
        CHECK((on_streamer_lock(s, 0) & ON_INVALID) != 0);
        CHECK((on_streamer_move_agent(s, id, p) & ON_INVALID) != 0);
        on_streamer_stats_get(s, &st);
        CHECK_EQ_INT(st.queued + st.loaded + st.agents, 0);
        on_streamer_destroy(s);
    }
    /* after a streamer is destroyed, the tree takes another */
    on_tree *t;
    CHECK(on_ok(on_tree_create(&orig->p, &t)));
    on_streamer_params sp = {1.0, 2.0, 1, 0, 0, 0, 0, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    on_streamer_destroy(s);
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

/* A copy of every tile of src in a new tree of the same parameters. */
static on_tree *clone_tree(const on_tree *src)
{
    on_tree *t;
    if (!on_ok(on_tree_create(&src->p, &t))) return NULL;
    for (uint32_t ti = 0; ti < src->ntiles; ti++) {
        size_t len;
        on_tree_encode_tile(src, ti, NULL, 0, &len);
        uint8_t *b = malloc(len);
        if (!b) continue;
        on_tree_encode_tile(src, ti, b, len, &len);
        CHECK(on_ok(on_tree_decode_tile(t, ti, b, len)));
        free(b);
    }
    return t;
}

/* Temporary obstacles outlive their tiles' unloads: agents walk (tiles stream in and out) while
 * obstacles are added and removed at random on the streamed tree and, by the same calls, on a copy
 * of the baked tree that never streams (workers block a tile's obstacles before its boxes are built;
 * updates that do not wait let obstacles change between a load's queueing and its install). After every update each loaded tile holds exactly the bytes
 * of the copy's tile (the file's contents with the obstacles in place over it, in order) and, with
 * prepare, the box set the copy's (prepared) tile has; once every obstacle is gone the loaded tiles
 * hold the baked bytes again. */
static void test_obstacles(const char *dir, on_tree *orig, int workers, int prepare)
{
    on_tree *ref = clone_tree(orig), *t;
    CHECK(ref != NULL);
    if (!ref) return;
    if (prepare) CHECK(on_ok(on_tree_prepare(ref, -1, NULL)));
    on_tree_create(&orig->p, &t);
    on_streamer_params sp = {6.0, 12.0, workers, 0, prepare, 0, 0, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    enum { NA = 4, MAXOB = 66 };
    double pos[NA][3];
    uint32_t aid[NA], ids[MAXOB];
    int nob = 0, added = 0, reloaded = 0, bad = 0, bad_boxes = 0, checked = 0;
    for (int a = 0; a < NA; a++) {
        pos[a][0] = -10 + rnd() * 96, pos[a][1] = rnd() * 16, pos[a][2] = -10 + rnd() * 96;
        CHECK(on_ok(on_streamer_add_agent(s, pos[a], &aid[a])));
    }
    uint8_t seen[TX * TZ] = {0}; /* 1: loaded once, 2: loaded again after an unload */
    const on_stream_event *ev;
    size_t nev;
    for (int frame = 0; frame < 300; frame++) {
        for (int a = 0; a < NA; a++) {
            for (int k = 0; k < 3; k += 2) {
                pos[a][k] += rnd() * 8 - 4;
                if (pos[a][k] < -20) pos[a][k] = -20;
                if (pos[a][k] > 100) pos[a][k] = 100;
            }
            on_streamer_move_agent(s, aid[a], pos[a]);
        }
        double r = rnd();
        if (r < 0.3 && nob < MAXOB - 2) {
            double mn[3] = {-10 + rnd() * 96, rnd() * 14, -10 + rnd() * 96};
            double mx[3] = {mn[0] + 1 + rnd() * 8, mn[1] + 1 + rnd() * 4, mn[2] + 1 + rnd() * 8};
            uint32_t a, b;
            CHECK(on_ok(on_tree_add_obstacle(t, mn, mx, &a)));
            CHECK(on_ok(on_tree_add_obstacle(ref, mn, mx, &b)));
            CHECK_EQ_INT((int)a, (int)b);
            ids[nob++] = a;
            added++;
        } else if (r < 0.5 && nob > 0) {
            int i = (int)(rnd() * nob);
            CHECK(on_ok(on_tree_remove_obstacle(t, ids[i])));
            CHECK(on_ok(on_tree_remove_obstacle(ref, ids[i])));
            ids[i] = ids[--nob];
        }
        /* with workers, every other update does not wait: loads queued then are installed later, some
         * after obstacles changed (the install then blocks them, not the worker) */
        on_streamer_update(s, workers == 0 || frame % 2 == 0, &ev, &nev);
        for (size_t e = 0; e < nev; e++)
            if (ev[e].kind == ON_EVENT_LOADED) {
                if (seen[ev[e].tile] == 1) seen[ev[e].tile] = 2, reloaded++;
                else if (!seen[ev[e].tile]) seen[ev[e].tile] = 1;
            }
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            if (on_streamer_tile_state(s, ti) != ON_TILE_LOADED) continue;
            checked++;
            bad += !same_tile(ref, t, ti);
            if (prepare) bad_boxes += !same_boxes(ref, t, ti);
        }
    }
    /* a load queued with an obstacle over its tile, then a second one added there before the install:
     * the worker blocked the first alone, the install starts again from the tile as read */
    if (workers > 0) {
        uint32_t x = on_tile_index(t, 2, 0, 2); /* world x and z 22..38 */
        for (int a = 0; a < NA; a++) {
            const double far[3] = {90, 0, 90};
            on_streamer_move_agent(s, aid[a], far);
        }
        on_streamer_update(s, 1, &ev, &nev);
        CHECK(on_streamer_tile_state(s, x) == ON_TILE_UNLOADED);
        const double boxes[2][6] = {{24, 2, 24, 27, 9, 28}, {30, 0, 26, 36, 5, 30}};
        for (int b = 0; b < 2; b++) {
            uint32_t a, c;
            CHECK(on_ok(on_tree_add_obstacle(t, boxes[b], boxes[b] + 3, &a)));
            CHECK(on_ok(on_tree_add_obstacle(ref, boxes[b], boxes[b] + 3, &c)));
            CHECK_EQ_INT((int)a, (int)c);
            ids[nob++] = a;
            if (b == 0) {
                on_streamer_force_load(s, x);
                on_streamer_update(s, 0, &ev, &nev); /* queued: the worker gets the first obstacle */
            }
        }
        on_streamer_update(s, 1, &ev, &nev);
        CHECK(on_streamer_tile_state(s, x) == ON_TILE_LOADED);
        CHECK(same_tile(ref, t, x));
        if (prepare) CHECK(same_boxes(ref, t, x));
        CHECK(!same_tile(orig, t, x));
        /* removing the first gives back the file's tile with the second */
        CHECK(on_ok(on_tree_remove_obstacle(t, ids[nob - 2])));
        CHECK(on_ok(on_tree_remove_obstacle(ref, ids[nob - 2])));
        ids[nob - 2] = ids[nob - 1];
        nob--;
        CHECK(same_tile(ref, t, x));
        if (prepare) CHECK(same_boxes(ref, t, x));
        on_streamer_force_unload(s, x);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(bad_boxes, 0);
    CHECK(added >= 50);
    CHECK(reloaded >= 5); /* tiles came back after an unload */
    CHECK(checked > 1000);
    while (nob > 0) CHECK(on_ok(on_tree_remove_obstacle(t, ids[--nob])));
    on_streamer_update(s, 1, &ev, &nev);
    int loaded = 0;
    for (uint32_t ti = 0; ti < t->ntiles; ti++)
        if (on_streamer_tile_state(s, ti) == ON_TILE_LOADED) {
            loaded++;
            CHECK(same_tile(orig, t, ti));
            if (prepare) CHECK(same_boxes(orig, t, ti));
        }
    CHECK(loaded > 0);
    on_streamer_destroy(s);
    on_tree_destroy(t);
    on_tree_destroy(ref);
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

/* Tile graphs streamed with their tiles (on_streamer_set_graph): every tile gets its graph file,
 * built from orig, tagged with its tile file's blob identity (as a bake tags it) and encoded, but
 * five: GRAPH_MISSING has none, GRAPH_CORRUPT a byte flipped, GRAPH_FIFO is a FIFO, GRAPH_ZERO a
 * symlink to /dev/zero and GRAPH_OTHER_BAKE a good graph tagged for another version of its tile.
 * Agents walk; after every update the world graph holds exactly the loaded tiles with a good file, each with its file's identity (the
 * CRC-32 it ends with), and each loaded tile with a bad one has one ON_EVENT_GRAPH_FAILED event with
 * the reader's or decoder's reason, beside its ON_EVENT_LOADED, in the update that installed it. */
#define GRAPH_MISSING 20
#define GRAPH_CORRUPT 21
#define GRAPH_FIFO 22
#define GRAPH_ZERO 23
#define GRAPH_OTHER_BAKE 27 /* (force-loaded for the first half of the walk) */

static const char *graph_failure(uint32_t ti)
{
    switch (ti) {
    case GRAPH_MISSING: return "No such file or directory";
    case GRAPH_CORRUPT: return "corrupt";
    case GRAPH_FIFO: return "not a regular file (a FIFO)";
    case GRAPH_ZERO: return "not a regular file (a character device)";
    case GRAPH_OTHER_BAKE: return "built from another version of its tile (bake the tile again)";
    default: return NULL;
    }
}

static void graph_path(char *path, size_t len, const char *dir, const on_tree *t, uint32_t ti)
{
    int c[3];
    on_tile_coords(t, ti, c);
    snprintf(path, len, "%s/tiles/%d_%d_%d.graph", dir, c[0], c[1], c[2]);
}

/* The tag tile ti's graph must carry: the CRC-32 of its tile file's blob but the blob's own CRC-32
 * (pack.graph_tag); 0 for a tile without a readable file (it never loads). */
static uint32_t tile_tag(const char *dir, const on_tree *t, uint32_t ti)
{
    char path[512];
    int c[3];
    on_tile_coords(t, ti, c);
    snprintf(path, sizeof path, "%s/tiles/%d_%d_%d.tile", dir, c[0], c[1], c[2]);
    uint8_t *b;
    size_t len;
    if (!on_ok(on_read_file_max(path, 1 << 24, &b, &len, NULL, 0))) return 0;
    uint32_t tag = len >= 20 ? on_crc32(0, b + 16, len - 20) : 0;
    free(b);
    return tag;
}

/* Write orig's tile graphs beside its tiles (the five bad ones as described); ids[ti]: the identity of
 * each good file. */
static void write_graphs(const char *dir, const on_tree *orig, uint32_t *ids)
{
    char path[512];
    for (uint32_t ti = 0; ti < orig->ntiles; ti++) {
        graph_path(path, sizeof path, dir, orig, ti);
        unlink(path);
        if (ti == GRAPH_MISSING) continue;
        if (ti == GRAPH_FIFO) {
            CHECK(mkfifo(path, 0600) == 0);
            continue;
        }
        if (ti == GRAPH_ZERO) {
            CHECK(symlink("/dev/zero", path) == 0);
            continue;
        }
        on_tgraph_opts o = {0, 0, tile_tag(dir, orig, ti)};
        if (ti == GRAPH_OTHER_BAKE) o.tag ^= 0x5a5a; /* what another bake of the tile would give */
        on_tgraph *g;
        CHECK(on_ok(on_tgraph_build_tile(orig, ti, &o, &g)));
        size_t len;
        on_tgraph_encode(g, NULL, 0, &len);
        uint8_t *b = malloc(len);
        CHECK(b != NULL);
        if (b && on_ok(on_tgraph_encode(g, b, len, &len))) {
            ids[ti] = (uint32_t)b[len - 4] | (uint32_t)b[len - 3] << 8 | (uint32_t)b[len - 2] << 16 |
                      (uint32_t)b[len - 1] << 24;
            if (ti == GRAPH_CORRUPT) b[len / 2] ^= 0x21;
            write_file(path, b, len);
        }
        free(b);
        on_tgraph_free(g);
    }
}

static void test_graphs(const char *dir, on_tree *orig, int workers)
{
    uint32_t ids[TX * TZ] = {0};
    write_graphs(dir, orig, ids);
    on_tree *t;
    on_tree_create(&orig->p, &t);
    on_streamer_params sp = {6.0, 12.0, workers, 0, 0, 0, 0, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, dir, &sp, &s)));
    on_wgraph *w, *other;
    CHECK(on_ok(on_wgraph_create(&t->p, &w)));
    on_tree_params op = t->p;
    op.depth = DEPTH + 1;
    CHECK(on_ok(on_wgraph_create(&op, &other)));
    CHECK(on_streamer_set_graph(s, other, 0) == (ON_FAILURE | ON_INVALID)); /* another grid */
    on_wgraph_destroy(other);
    CHECK(on_ok(on_streamer_set_graph(s, w, 1 << 20)));
    double pos[4][3];
    uint32_t aid[4];
    for (int a = 0; a < 4; a++) {
        pos[a][0] = -10 + rnd() * 96;
        pos[a][1] = rnd() * 16;
        pos[a][2] = -10 + rnd() * 96;
        on_streamer_add_agent(s, pos[a], &aid[a]);
    }
    int bad_ok = 1, ids_ok = 1, unlinked = 1;
    size_t linked = 0, unloads = 0, fails = 0;
    uint8_t failed_seen[TX * TZ] = {0};
    CHECK(on_ok(on_streamer_force_load(s, GRAPH_OTHER_BAKE)));
    for (int frame = 0; frame < 150; frame++) {
        if (frame == 75) CHECK(on_ok(on_streamer_force_unload(s, GRAPH_OTHER_BAKE)));
        for (int a = 0; a < 4; a++) {
            for (int k = 0; k < 3; k += 2) pos[a][k] = fmin(86, fmax(-10, pos[a][k] + (rnd() - 0.5) * 8));
            on_streamer_move_agent(s, aid[a], pos[a]);
        }
        const on_stream_event *ev;
        size_t nev;
        CHECK(on_ok(on_streamer_update(s, frame % 2, &ev, &nev)));
        for (size_t i = 0; i < nev; i++) {
            if (ev[i].kind == ON_EVENT_UNLOADED) unloads++;
            if (ev[i].kind != ON_EVENT_GRAPH_FAILED) continue;
            fails++;
            const char *want = graph_failure(ev[i].tile);
            int with_load = 0;
            for (size_t j = 0; j < i; j++) with_load |= ev[j].kind == ON_EVENT_LOADED && ev[j].tile == ev[i].tile;
            if (!want || strcmp(want, ev[i].err) != 0 || !with_load) {
                bad_ok = 0;
                fprintf(stderr, "tile %u: graph failed '%s' (load event %d)\n", ev[i].tile, ev[i].err, with_load);
            }
            if (want) failed_seen[ev[i].tile] = 1;
        }
        for (uint32_t ti = 0; ti < t->ntiles; ti++) {
            int loaded = on_streamer_tile_state(s, ti) == ON_TILE_LOADED;
            uint32_t id = 0;
            int has = on_wgraph_tile_id(w, ti, &id);
            if (loaded && !graph_failure(ti)) {
                ids_ok &= has && id == ids[ti];
                linked += has;
            } else {
                unlinked &= !has;
            }
        }
    }
    CHECK(bad_ok);
    CHECK(ids_ok);
    CHECK(unlinked);
    CHECK(linked > 300 && unloads >= 10); /* the walk streamed */
    int bad_loaded = 0;
    for (uint32_t ti = GRAPH_MISSING; ti <= GRAPH_ZERO; ti++) bad_loaded += failed_seen[ti];
    CHECK(bad_loaded >= 2 && fails >= (size_t)bad_loaded);
    CHECK(failed_seen[GRAPH_OTHER_BAKE]); /* the tag check did refuse it */
    on_streamer_destroy(s);
    on_wgraph_destroy(w);
    on_tree_destroy(t);
    char path[512];
    for (uint32_t ti = 0; ti < orig->ntiles; ti++) {
        graph_path(path, sizeof path, dir, orig, ti);
        unlink(path);
    }
}

static int run(void)
{
    char dir[] = "/tmp/octonav-streamer-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    on_tree *orig = make_world(dir);
    CHECK(on_ok(on_tree_prepare(orig, -1, NULL)));
    test_walk(dir, orig, 2, 0, 0);
    test_walk(dir, orig, 0, 0, 0);
    test_walk(dir, orig, 2, 1, 0);
    test_walk(dir, orig, 0, 1, 0);
    test_walk(dir, orig, 2, 0, 12);
    test_walk(dir, orig, 0, 0, 12);
    test_async(dir, orig);
    test_tree_destroyed(dir, orig);
    test_load_tree(dir, orig, 0);
    test_load_tree(dir, orig, 2);
    test_obstacles(dir, orig, 0, 0);
    test_obstacles(dir, orig, 2, 0);
    test_obstacles(dir, orig, 2, 1);
    test_graphs(dir, orig, 0);
    test_graphs(dir, orig, 2);
    rm_dir(dir, orig);
    char dir3[] = "/tmp/octonav-streamer3-XXXXXX";
    if (!mkdtemp(dir3)) return 1;
    test_six_sides(dir3, 0);
    test_six_sides(dir3, 2);
    test_cap_lock(dir3, 0);
    test_cap_lock(dir3, 2);
    on_tree_params p3 = {{3, 3, 3}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t3;
    on_tree_create(&p3, &t3);
    rm_dir(dir3, t3);
    on_tree_destroy(t3);
    on_tree_destroy(orig);
    return 0;
}

TEST_MAIN("streamer", {
    if (run()) return 1;
})
