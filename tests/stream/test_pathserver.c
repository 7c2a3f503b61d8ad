/*
 * test_pathserver.c -- the path server against one query run on the caller's thread: every result
 * (status, points bit for bit, length, tiles and salts) equals on_query_find's for the same request,
 * with 2 workers and with none; ids, pending counts, the queue limit and bad input; pause holds the
 * queue so the tree can be edited, and requests run after the edit see the new tree. Runs under TSan
 * in make check-tsan.
 */
#include "octonav.h"
#include "minitest.h"
#include "pathserver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NREQ 240

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

/* 2x1x2 tiles of 16^3 leaves at scale 0.5 with random slabs and pillars. */
static on_tree *scene(void)
{
    on_tree_params p = {{2, 1, 2}, 4, 0.5, {-3, 1, 2}, 0.0};
    on_tree *t = NULL;
    CHECK(on_ok(on_tree_create(&p, &t)));
    for (int i = 0; i < 40; i++) {
        double mn[3], mx[3];
        for (int k = 0; k < 3; k++) {
            double ext = k == 1 ? 8.0 : 16.0;
            mn[k] = p.origin[k] + rnd() * ext;
            mx[k] = mn[k] + 0.3 + rnd() * (i % 2 ? 5.0 : 1.0);
        }
        CHECK(on_ok(on_tree_add_box(t, mn, mx)));
    }
    return t;
}

typedef struct req {
    double a[3], b[3];
    on_query_opts o;
} req;

typedef struct ref {
    on_status s;
    on_query_info info;
    double *path;
    size_t n;
    uint32_t tiles[64], salts[64];
    size_t nt;
} ref;

static void make_requests(req *r, int n)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            double ext = k == 1 ? 8.0 : 16.0, org = k == 0 ? -3 : k == 1 ? 1 : 2;
            /* a few points outside the grid */
            r[i].a[k] = org - 0.5 + rnd() * (ext + 1.0);
            r[i].b[k] = org - 0.5 + rnd() * (ext + 1.0);
        }
        on_query_opts_default(&r[i].o);
        if (i % 5 == 1) r[i].o.any_angle = 1;
        if (i % 7 == 2) r[i].o.smooth = ON_SMOOTH_NONE;
        if (i % 11 == 3) {
            r[i].o.max_expansions = 5;
            r[i].o.partial = 1;
        }
    }
}

static void reference(const on_tree *t, const req *r, ref *out, int n)
{
    on_query *q = NULL;
    CHECK(on_ok(on_query_create(t, 100000, &q)));
    for (int i = 0; i < n; i++) {
        size_t np = 0;
        on_status s = on_query_find(q, r[i].a, r[i].b, &r[i].o, NULL, 0, &np, &out[i].info);
        out[i].path = NULL;
        out[i].n = 0;
        out[i].nt = 0;
        if ((s & ON_BUFFER_SMALL) && np > 0) {
            out[i].path = malloc(np * 3 * sizeof(double));
            s = on_query_finalize(q, out[i].path, np, &np, &out[i].info);
            out[i].n = np;
            CHECK(on_ok(on_query_path_tiles(q, out[i].tiles, out[i].salts, 64, &out[i].nt)));
        }
        out[i].s = s;
    }
    on_query_destroy(q);
}

static void free_refs(ref *r, int n)
{
    for (int i = 0; i < n; i++) free(r[i].path);
}

/* 1 when a server result equals the reference bit for bit. */
static int same(const on_path_result *p, const ref *r)
{
    if (p->status != r->s || p->npath != r->n || p->ntiles != r->nt) return 0;
    if (memcmp(&p->info.length, &r->info.length, sizeof(double)) != 0) return 0;
    if (p->info.expansions != r->info.expansions || p->info.cells != r->info.cells) return 0;
    if (r->n && memcmp(p->path, r->path, r->n * 3 * sizeof(double)) != 0) return 0;
    if (r->nt && (memcmp(p->tiles, r->tiles, r->nt * 4) != 0 || memcmp(p->salts, r->salts, r->nt * 4) != 0)) return 0;
    return 1;
}

static void run_all(const on_tree *t, int workers, const req *r, const ref *want)
{
    on_pathserver_params pp = {workers, 50000, 0};
    on_pathserver *ps = NULL;
    CHECK(on_ok(on_pathserver_create(t, &pp, &ps)));
    if (!ps) return;
    uint64_t ids[NREQ];
    for (int i = 0; i < NREQ; i++) CHECK(on_ok(on_pathserver_submit(ps, r[i].a, r[i].b, &r[i].o, &ids[i])));
    CHECK_EQ_INT(ids[0], 1);
    CHECK_EQ_INT(ids[NREQ - 1], NREQ);
    CHECK_EQ_INT(on_pathserver_pending(ps), NREQ);
    int seen[NREQ] = {0}, got = 0, good = 0, found = 0, failed = 0;
    while (got < NREQ && !failed) { /* polls, then waits once half are in */
        const on_path_result *res;
        size_t n;
        failed = !on_ok(on_pathserver_update(ps, got > NREQ / 2, &res, &n));
        for (size_t i = 0; i < n; i++) {
            uint64_t k = res[i].id - 1;
            if (k >= NREQ || seen[k]) continue;
            seen[k] = 1;
            got++;
            good += same(&res[i], &want[k]);
            found += on_ok(res[i].status);
        }
    }
    CHECK(!failed);
    CHECK_EQ_INT(good, NREQ);
    CHECK(found > NREQ / 3); /* the scene is not trivial either way */
    CHECK(found < NREQ);
    CHECK_EQ_INT(on_pathserver_pending(ps), 0);
    CHECK_EQ_INT(on_pathserver_busy(ps), 0);
    on_pathserver_destroy(ps);
}

/* Pause: the running requests finish, the queued ones wait; the tree is edited; after resume the
 * rest see the edit. Each result equals the reference of the tree it ran on. */
static void pause_edit(on_tree *t, const req *r, const ref *before)
{
    on_pathserver_params pp = {2, 50000, 0};
    on_pathserver *ps = NULL;
    CHECK(on_ok(on_pathserver_create(t, &pp, &ps)));
    if (!ps) return;
    for (int i = 0; i < NREQ; i++) CHECK(on_ok(on_pathserver_submit(ps, r[i].a, r[i].b, &r[i].o, NULL)));
    on_pathserver_pause(ps);
    CHECK_EQ_INT(on_pathserver_busy(ps), 0);
    const on_path_result *res;
    size_t n, early = 0;
    int good = 0;
    CHECK(on_ok(on_pathserver_update(ps, 0, &res, &n)));
    for (size_t i = 0; i < n; i++) good += res[i].id >= 1 && res[i].id <= NREQ && same(&res[i], &before[res[i].id - 1]);
    early = n;
    CHECK_EQ_INT(good, early);
    /* waiting for a paused queue would never end */
    if (early < NREQ) CHECK_EQ_INT(on_pathserver_update(ps, 1, &res, &n), ON_FAILURE | ON_INVALID);
    double mn[3] = {-3, 1, 2}, mx[3] = {5, 9, 6};
    CHECK(on_ok(on_tree_add_box(t, mn, mx)));
    ref *after = calloc(NREQ, sizeof *after);
    reference(t, r, after, NREQ);
    on_pathserver_resume(ps);
    CHECK(on_ok(on_pathserver_update(ps, 1, &res, &n)));
    CHECK_EQ_INT(n + early, NREQ);
    good = 0;
    for (size_t i = 0; i < n; i++) good += res[i].id >= 1 && res[i].id <= NREQ && same(&res[i], &after[res[i].id - 1]);
    CHECK_EQ_INT(good, n);
    free_refs(after, NREQ);
    free(after);
    on_pathserver_destroy(ps);
}

static void bad_input(const on_tree *t)
{
    on_pathserver *ps = NULL;
    on_pathserver_params pp = {-1, 0, 0};
    CHECK_EQ_INT(on_pathserver_create(t, &pp, &ps), ON_FAILURE | ON_INVALID);
    CHECK(ps == NULL);
    pp.workers = 65;
    CHECK_EQ_INT(on_pathserver_create(t, &pp, &ps), ON_FAILURE | ON_INVALID);
    pp.workers = 1;
    pp.max_nodes = 1;
    CHECK_EQ_INT(on_pathserver_create(t, &pp, &ps), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(on_pathserver_create(NULL, &pp, &ps), ON_FAILURE | ON_INVALID);
    pp.max_nodes = 1000;
    pp.max_queued = 3;
    CHECK(on_ok(on_pathserver_create(t, &pp, &ps)));
    if (!ps) return;
    double a[3] = {0, 2, 3}, b[3] = {4, 3, 9}, bad[3] = {0, NAN, 3};
    uint64_t id = 99;
    CHECK_EQ_INT(on_pathserver_submit(ps, bad, b, NULL, &id), ON_FAILURE | ON_INVALID);
    CHECK_EQ_INT(id, 0);
    CHECK_EQ_INT(on_pathserver_submit(ps, a, b, NULL, NULL), ON_SUCCESS);
    CHECK_EQ_INT(on_pathserver_submit(ps, a, b, NULL, NULL), ON_SUCCESS);
    CHECK_EQ_INT(on_pathserver_submit(ps, a, b, NULL, &id), ON_SUCCESS);
    CHECK_EQ_INT(id, 3);
    /* unread results count against the limit too */
    CHECK_EQ_INT(on_pathserver_submit(ps, a, b, NULL, &id), ON_FAILURE | ON_BUFFER_SMALL);
    const on_path_result *res;
    size_t n;
    CHECK(on_ok(on_pathserver_update(ps, 1, &res, &n)));
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(on_pathserver_submit(ps, a, b, NULL, &id), ON_SUCCESS);
    CHECK_EQ_INT(id, 4);
    on_pathserver_destroy(ps); /* with a request queued or running: joins, frees */
    /* destroy with many queued and a paused server */
    pp.max_queued = 0;
    CHECK(on_ok(on_pathserver_create(t, &pp, &ps)));
    if (!ps) return;
    on_pathserver_pause(ps);
    for (int i = 0; i < 20; i++) on_pathserver_submit(ps, a, b, NULL, NULL);
    CHECK_EQ_INT(on_pathserver_pending(ps), 20);
    on_pathserver_destroy(ps);
}

TEST_MAIN("pathserver", {
    on_tree *t = scene();
    req *r = calloc(NREQ, sizeof *r);
    ref *want = calloc(NREQ, sizeof *want);
    make_requests(r, NREQ);
    reference(t, r, want, NREQ);
    run_all(t, 2, r, want);
    run_all(t, 0, r, want);
    run_all(t, 1, r, want);
    pause_edit(t, r, want);
    bad_input(t);
    free_refs(want, NREQ);
    free(want);
    free(r);
    on_tree_destroy(t);
})
