/*
 * test_pages.c -- the node pool's arena and the big tables' huge pages (nodepool.c, issue 31 goal 1,
 * streamed: a search's growth faulted ~400 pages of 4 KB inside a frame): a pool grown past 1,024 nodes
 * holds its small map and node arrays in one 2 MB-aligned mapping of 2 MB (counted whole by
 * on_pool_bytes), every node and the heap's order kept across the move into it; past 16,384 nodes the
 * arrays leave it for mappings of their own, 2 MB-aligned, kept aligned when grown again; the pool cut
 * after ON_POOL_TRIM_ARENA small searches gives the arena back; and the process's mappings come back
 * to what they were after a pool's whole life (every reservation's head and tail unmapped, each array
 * unmapped whole). Where the system has no MADV_HUGEPAGE there is no arena: the sizes of before.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* MADV_HUGEPAGE, as nodepool.c sees it */
#endif
#include "octonav.h"
#include "minitest.h"
#include "nodepool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__linux__) && defined(MAP_ANONYMOUS) && defined(MADV_HUGEPAGE)
#define ARENA 1
#else
#define ARENA 0
#endif

#define HUGE_PAGE ((size_t)2 << 20)
#define HDR 16 /* on_pages' header before each array */

static on_cell cell(uint32_t i) { return (on_cell){i % 7, i * 2654435761u}; }

static size_t pool_bytes(size_t nodes, size_t slots)
{
    return nodes * (sizeof(on_snode) + 4 + 8 + 4) + slots * sizeof(on_mslot);
}

/* A search of k nodes (cells from salt): each made at its index, then every one found again. */
static int search_of(on_nodepool *p, uint32_t k, uint32_t salt)
{
    int created, bad = 0;
    on_pool_reset(p);
    for (uint32_t i = 0; i < k; i++) {
        int32_t x = on_pool_get(p, cell(i * 3 + salt), &created);
        if (x != (int32_t)i || !created) bad++;
        else p->nodes[x].g = (double)i;
    }
    for (uint32_t i = 0; i < k; i++) {
        int32_t x = on_pool_get(p, cell(i * 3 + salt), &created);
        if (x != (int32_t)i || created || p->nodes[x].g != (double)i) bad++;
    }
    return bad;
}

static int aligned(const void *array) { return ((uintptr_t)array - HDR) % HUGE_PAGE == 0; }

/* Whether [a, a + n) is mapped, every page of it (msync: ENOMEM on an unmapped page). */
static int mapped(const void *a, size_t n)
{
#if defined(__unix__)
    return msync((void *)((uintptr_t)a & ~(uintptr_t)4095), n, MS_ASYNC) == 0;
#else
    (void)a;
    (void)n;
    return 1;
#endif
}

/* The process's mapped bytes (/proc/self/statm's first field, in pages); 0 where there is none. */
static size_t vm_size(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long pages = 0;
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
    return (size_t)pages * 4096;
}

/* Into the arena at 2,048 nodes' room (the 1,025th node), mid-search: every node found, the heap's order kept (nodes pushed as
 * made, f from a hash of the index, popped in order after the move). */
static void arena_entry(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    on_pool_reset(&p);
    int created, bad = 0;
    for (uint32_t i = 0; i < 3000; i++) {
        int32_t x = on_pool_get(&p, cell(i), &created);
        if (x != (int32_t)i || !created) bad++;
        p.nodes[x].g = (double)i;
        p.nodes[x].f = (double)((i * 2654435761u) % 1000);
        on_pool_push_new(&p, (uint32_t)x);
        if (i == 1023) CHECK(!ARENA || !aligned(p.small)); /* (1,024 nodes' room: not yet) */
        if (i == 1024) CHECK(!ARENA || aligned(p.small));  /* (2,048: in it) */
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(p.nodecap, 4096);
    CHECK_EQ_INT(p.smallmask + 1, 8192);
#if ARENA
    /* one mapping of 2 MB on a 2 MB boundary: the small map at its start, the node arrays after it */
    CHECK(aligned(p.small));
    const char *a = (const char *)p.small - HDR;
    CHECK((const char *)p.nodes > a && (const char *)p.nodes < a + HUGE_PAGE);
    CHECK((const char *)p.hpos > (const char *)p.nodes && (const char *)p.hpos < a + HUGE_PAGE);
    CHECK_EQ_INT(on_pool_bytes(&p), HUGE_PAGE);
    CHECK(mapped(a, HUGE_PAGE));
#else
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(4096, 8192));
#endif
    for (uint32_t i = 0; i < 3000; i++)
        if (on_pool_get(&p, cell(i), &created) != (int32_t)i || created || p.nodes[i].g != (double)i) bad++;
    CHECK_EQ_INT(bad, 0);
    double last = -1;
    size_t n = 0;
    while (p.nheap > 0) {
        uint32_t x = on_pool_pop(&p);
        if (p.nodes[x].f < last) bad++;
        last = p.nodes[x].f;
        n++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(n, 3000);
    on_pool_free(&p);
}

/* Past 16,384 nodes the arrays leave the arena for mappings of their own (the arena unmapped), 2 MB-aligned
 * from 2 MB up, and stay aligned as they double; cut back, the pool goes into an arena again. */
static void arena_exit(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    CHECK_EQ_INT(search_of(&p, 10000, 1), 0);
    const char *a = (const char *)p.small - HDR;
    CHECK_EQ_INT(on_pool_bytes(&p), ARENA ? HUGE_PAGE : pool_bytes(16384, 32768));
    CHECK_EQ_INT(search_of(&p, 20000, 2), 0); /* (from an arena grown to 16,384 nodes, its map full) */
    CHECK_EQ_INT(p.nodecap, 32768);
    CHECK(p.big != NULL && p.bigmask + 1 == 65536);
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(32768, 32768 + 65536));
#if ARENA
    CHECK(!mapped(a, HUGE_PAGE)); /* (given back) */
    CHECK(aligned(p.nodes)); /* (2 MB and 4 KB: the big map, 1 MB, and hf, 256 KB, in 4 KB pages) */
    CHECK(!aligned(p.small));
    CHECK(mapped((const char *)p.nodes - HDR, 32768 * sizeof(on_snode) + HDR));
#endif
    CHECK_EQ_INT(search_of(&p, 40000, 3), 0);
    CHECK_EQ_INT(p.nodecap, 65536);
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(65536, 32768 + 131072));
#if ARENA
    CHECK(aligned(p.nodes) && aligned(p.big)); /* (doubled: still on the boundary; the big map now 2 MB) */
#endif
    /* 16 small searches cut it (no arena: ON_POOL_TRIM_AFTER), then 3,000 nodes: an arena again */
    for (uint32_t r = 0; r < ON_POOL_TRIM_AFTER + 1; r++) CHECK_EQ_INT(search_of(&p, 100, 10 + r), 0);
    CHECK_EQ_INT(p.nodecap, ON_POOL_KEEP_NODES);
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(1024, 2048));
    CHECK_EQ_INT(search_of(&p, 3000, 40), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), ARENA ? HUGE_PAGE : pool_bytes(4096, 8192));
    on_pool_free(&p);
}

/* An arena is cut after ON_POOL_TRIM_ARENA searches in a row under an eighth of its nodes, not before,
 * the count started again by a larger one; the arena unmapped. */
static void arena_trim(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    CHECK_EQ_INT(search_of(&p, 12000, 1), 0);
    const char *a = (const char *)p.small - HDR;
    size_t held = on_pool_bytes(&p);
    CHECK_EQ_INT(held, ARENA ? HUGE_PAGE : pool_bytes(16384, 32768));
    /* the start of search r + 1 reads search r: cut at the start of the (ON_POOL_TRIM_ARENA + 1)th */
    for (uint32_t r = 0; r < ON_POOL_TRIM_ARENA - 1; r++) CHECK_EQ_INT(search_of(&p, 100, 2 + r), 0);
    CHECK_EQ_INT(search_of(&p, 5000, 9), 0); /* (over an eighth: the count starts again) */
    for (uint32_t r = 0; r < ON_POOL_TRIM_ARENA; r++) CHECK_EQ_INT(search_of(&p, 100, 20 + r), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), held);
    CHECK_EQ_INT(search_of(&p, 100, 30), 0);
#if ARENA
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(1024, 2048));
    CHECK(!mapped(a, HUGE_PAGE));
#else
    (void)a;
    CHECK_EQ_INT(p.nodecap, ON_POOL_KEEP_NODES);
#endif
    on_pool_free(&p);
}

/* The small map doubled in the arena is emptied by a new stamp (not cleared): stale slots of this search and
 * earlier ones stay empty, also when that stamp wraps round to 0 (both maps cleared once, counting from 1). */
static void arena_stamps(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    CHECK_EQ_INT(search_of(&p, 3000, 1), 0); /* (in the arena, its small map at 8,192 slots) */
    uint32_t s0 = p.stamp;
    CHECK_EQ_INT(search_of(&p, 6000, 2), 0); /* (doubled to 16,384 slots: one stamp more) */
    CHECK_EQ_INT(p.smallmask + 1, 16384);
    CHECK_EQ_INT(p.stamp, s0 + (ARENA ? 2 : 1));
    CHECK_EQ_INT(search_of(&p, 3000, 3), 0); /* (the slots of the two before, under older stamps) */
    p.stamp = UINT32_MAX - 1;               /* the next search's stamp UINT32_MAX, its doubling's 0 */
    CHECK_EQ_INT(search_of(&p, 12000, 4), 0);
    CHECK_EQ_INT(p.stamp, ARENA ? 1 : UINT32_MAX);
    CHECK_EQ_INT(p.smallmask + 1, 32768);
    CHECK_EQ_INT(search_of(&p, 12000, 5), 0);
    CHECK_EQ_INT(search_of(&p, 100, 6), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), ARENA ? HUGE_PAGE : pool_bytes(16384, 32768));
    on_pool_free(&p);
}

/* A pool's whole life (malloc'd, into the arena, out of it past 16,384 nodes, doubled, cut, into an arena
 * again, freed) leaves the process's mapped bytes as they were: every reservation's head and tail
 * unmapped, every mapping unmapped whole (a first round before, for the allocator's own). */
static void life(void)
{
    size_t before = 0;
    for (int round = 0; round < 3; round++) {
        if (round == 1) before = vm_size();
        on_nodepool p;
        CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
        CHECK_EQ_INT(search_of(&p, 3000, 1), 0);
        CHECK_EQ_INT(search_of(&p, 20000, 2), 0);
        CHECK_EQ_INT(search_of(&p, 70000, 3), 0);
        for (uint32_t r = 0; r < ON_POOL_TRIM_AFTER + 1; r++) CHECK_EQ_INT(search_of(&p, 100, 10 + r), 0);
        CHECK_EQ_INT(search_of(&p, 9000, 40), 0);
        on_pool_free(&p);
        if (round == 2) CHECK_EQ_INT(vm_size(), before);
    }
    /* on_pages' own arrays (no arena, no huge pages asked): through a mapping and back, unmapped whole */
    before = vm_size();
    void *q = on_pages_realloc(NULL, 3u << 20);
    CHECK(q != NULL);
    memset(q, 7, 3u << 20);
    q = on_pages_realloc(q, 5u << 20);
    CHECK(q != NULL && ((unsigned char *)q)[(3u << 20) - 1] == 7);
    on_pages_free(q);
    CHECK_EQ_INT(vm_size(), before);
}

TEST_MAIN("pages", {
    arena_entry();
    arena_exit();
    arena_trim();
    arena_stamps();
    life();
})
