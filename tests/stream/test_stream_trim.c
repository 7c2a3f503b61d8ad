/*
 * test_stream_trim.c -- with workers, the streamer takes the allocator's trims off the freeing threads
 * (on_streamer_set_trim_on_free 0, the default, glibc): a free at the heap's top no longer gives its pages back
 * there (glibc's M_TRIM_THRESHOLD turned off for the process); the workers' idle malloc_trim does. With
 * a worker running on another CPU such a shrink waits for it (a TLB shootdown): the streamed crowd's
 * collector steps of 2-3 ms, each a few hundred objects freed (issue 31, session 34).
 * Seen through mallinfo2's heap size: 64 blocks of 64 KB (under glibc's mmap threshold: on the heap)
 * allocated and freed, last first, on this thread. With trim_on_free 1 (first: the setting sticks for
 * the process) the heap shrinks back at the frees; after a streamer with trim_on_free 0 made its
 * first update it keeps its size. No tile files: the workers are held, so none is read. glibc only, and not under a sanitizer
 * (whose runtime owns malloc).
 */
#include "octonav.h"
#include "minitest.h"
#include "streamer.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SEE_TRIMS 1
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#undef SEE_TRIMS
#define SEE_TRIMS 0
#endif
#endif
#else
#define SEE_TRIMS 0
#endif

#if SEE_TRIMS
#include <malloc.h>

#define NBLOCKS 64
#define BLOCK (64 * 1024)

/* The heap's size after NBLOCKS blocks were allocated and freed, last first (their pages touched). */
static size_t heap_after_frees(size_t *peak)
{
    char *b[NBLOCKS];
    for (int i = 0; i < NBLOCKS; i++) {
        b[i] = malloc(BLOCK);
        if (b[i]) b[i][0] = b[i][BLOCK - 1] = 1;
    }
    *peak = mallinfo2().arena;
    for (int i = NBLOCKS - 1; i >= 0; i--) free(b[i]);
    return mallinfo2().arena;
}
#endif

/* A streamer with one worker, held (no tile read), after its first update (which makes the setting). */
static on_streamer *held_streamer(on_tree *t, int trim_on_free)
{
    on_streamer_params sp = {16.0, 32.0, 1, 0, 0, 1, 1, 0.0};
    on_streamer *s = NULL;
    CHECK(on_ok(on_streamer_create(t, "/nonexistent-octonav-pack", &sp, &s)));
    if (!s) return NULL;
    on_streamer_hold(s, 1);
    on_streamer_set_trim_on_free(s, trim_on_free);
    const on_stream_event *ev;
    size_t nev;
    CHECK(on_ok(on_streamer_update(s, 0, &ev, &nev)));
    return s;
}

static void test_trims(void)
{
    on_tree_params tp = {{2, 1, 2}, 3, 1.0, {0, 0, 0}, 0};
    on_tree *t;
    CHECK(on_ok(on_tree_create(&tp, &t)));
#if SEE_TRIMS
    size_t peak, after;
    on_streamer *s = held_streamer(t, 1); /* the process's setting left as it is: glibc trims at a free */
    after = heap_after_frees(&peak);
    CHECK(peak >= after + NBLOCKS * (size_t)BLOCK / 2);
    on_streamer_destroy(s);
    s = held_streamer(t, 0); /* the workers trim: a free leaves the heap as it is */
    after = heap_after_frees(&peak);
    CHECK(after + BLOCK >= peak);
    CHECK(after >= NBLOCKS * (size_t)BLOCK);
    malloc_trim(0); /* (what a worker's idle trim does) */
    CHECK(mallinfo2().arena + NBLOCKS * (size_t)BLOCK / 2 <= after);
    on_streamer_destroy(s);
    s = held_streamer(t, 1); /* (once set, the setting stays the process's) */
    after = heap_after_frees(&peak);
    CHECK(after + BLOCK >= peak);
    on_streamer_destroy(s);
#else
    on_streamer_destroy(held_streamer(t, 0));
    printf("test_stream_trim: the heap's trims not seen (not glibc, or under a sanitizer)\n");
#endif
    on_tree_destroy(t);
}

TEST_MAIN("stream_trim", test_trims())
