/*
 * test_stream_alloc.c -- an update of the streamer allocates nothing on the caller's thread while it
 * orders a long queue of loads (issue 31, goal 1: the game thread's frame). glibc's qsort takes a merge
 * buffer from malloc once its array passes 1 KB (43 queued loads, 64 load candidates), and such a
 * malloc first consolidates the allocator's fast bins, where Lua's collector frees its small objects:
 * 0.25-0.7 ms of the caller's thread in one update on the seed's world. The update sorts in place now.
 *
 * Counted by interposing malloc, calloc, realloc (and free) for this test's process (glibc's own calls, qsort's
 * among them, go through them too): while `counting` is set on a thread, its allocations are counted.
 * Under ASan, TSan or MSan, whose runtimes own malloc, the count is skipped (the order checks still run).
 * An 8 x 1 x 8 grid of 8^3-leaf tiles, no tile files: the workers are held, so none is ever read.
 */
#include "octonav.h"
#include "minitest.h"
#include "streamer.h"

#include <math.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define COUNT_ALLOCS 0
#endif
#endif
#ifndef COUNT_ALLOCS
#define COUNT_ALLOCS 1
#endif

static _Thread_local int counting;
static _Thread_local size_t allocs;

#if COUNT_ALLOCS
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

/* libc's allocator under counters: exported (the build hides symbols, and only an exported malloc
 * replaces libc's), defined through a macro (these are no unit of tools/include_graph.lua) */
#define COUNTED(type, name, params, call)                                                            \
    __attribute__((visibility("default"))) type(name) params                                       \
    {                                                                                                \
        allocs += counting;                                                                          \
        return call;                                                                                 \
    }
COUNTED(void *, malloc, (size_t n), __libc_malloc(n));
COUNTED(void *, calloc, (size_t n, size_t size), __libc_calloc(n, size));
COUNTED(void *, realloc, (void *p, size_t n), __libc_realloc(p, n));
__attribute__((visibility("default"))) void(free)(void *p) { __libc_free(p); } /* (the same allocator) */
#endif

/* One update, its allocations on this thread counted. */
static size_t counted_update(on_streamer *s)
{
    const on_stream_event *ev;
    size_t nev;
    allocs = 0;
    counting = 1;
    on_status st = on_streamer_update(s, 0, &ev, &nev);
    counting = 0;
    CHECK(on_ok(st));
    CHECK_EQ_INT(nev, 0);
    return allocs;
}

/* Distance from p to tile ti's box (8 units a side, the grid at the origin). */
static double dist_to(const on_tree *t, uint32_t ti, const double p[3])
{
    int ijk[3];
    on_tree_tile_coords(t, ti, ijk);
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        double lo = ijk[k] * 8.0, hi = lo + 8, e = p[k] < lo ? lo - p[k] : p[k] > hi ? p[k] - hi : 0;
        d2 += e * e;
    }
    return sqrt(d2);
}

/* The queue as the workers will take it: nearest the agent first (by_tile: ties by tile, the order of
 * loads queued in one update; else ties stay in their queue order). */
static void check_queue(on_streamer *s, const on_tree *t, const double p[3], size_t want, int by_tile)
{
    uint32_t q[64];
    size_t n = on_streamer_queue(s, q, 64);
    CHECK_EQ_INT(n, want);
    int sorted = 1;
    for (size_t i = 1; i < n && i < 64; i++) {
        double a = dist_to(t, q[i - 1], p), b = dist_to(t, q[i], p);
        if (a > b || (by_tile && a == b && q[i - 1] > q[i])) sorted = 0;
    }
    CHECK(sorted);
}

static void test_long_queue(void)
{
    on_tree_params tp = {{8, 1, 8}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&tp, &t)));
    /* every tile within load_padding 100 of the agent: 64 loads queued and ordered */
    on_streamer_params sp = {100.0, 200.0, 1, 0, 0, 1, 1, 0.0};
    on_streamer *s;
    CHECK(on_ok(on_streamer_create(t, "/nonexistent-octonav-pack", &sp, &s)));
    on_streamer_hold(s, 1);
    double p[3] = {27, 4, 21};
    uint32_t id;
    CHECK(on_ok(on_streamer_add_agent(s, p, &id)));
    size_t first = counted_update(s); /* 64 loads queued: the candidates and the queue sorted */
    check_queue(s, t, p, 64, 1);
    p[0] = 45;
    p[2] = 38;
    CHECK(on_ok(on_streamer_move_agent(s, id, p)));
    size_t second = counted_update(s); /* the 64 queued loads ordered again */
    check_queue(s, t, p, 64, 0);
    if (COUNT_ALLOCS) {
        CHECK_EQ_INT(first, 0);
        CHECK_EQ_INT(second, 0);
    } else {
        printf("test_stream_alloc: allocations not counted under a sanitizer\n");
    }
    on_streamer_destroy(s);
    on_tree_destroy(t);
}

TEST_MAIN("stream_alloc", test_long_queue())
