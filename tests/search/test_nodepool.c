/*
 * test_nodepool.c -- the search's node pool, stamped map and heap (nodepool.c): lookups across the
 * move from the small map to the big one, a full pool, stamps wrapping around after 2^32 searches,
 * the heap's order (against a sort) when f falls and rises, and memory that follows the search
 * (doubling up to max_nodes, node contents kept, nothing allocated again in steady state); the big
 * tables' own pages (on_pages_*): contents kept across a growth from malloc'd to mapped and within the
 * mapping, zeroed arrays either way; a pool cut back after much smaller searches (issue 31 goal 3).
 */
#include "octonav.h"
#include "minitest.h"
#include "nodepool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 16);
}

static on_cell cell(uint32_t i) { return (on_cell){i % 7, i * 2654435761u}; }

/* More nodes than the small map holds: every one found again at its index, in both maps. */
static void growth(void)
{
    on_nodepool p;
    size_t n = ON_POOL_SMALL_MAP; /* twice what the small map may hold */
    CHECK(on_pool_init(&p, n) == 0);
    on_pool_reset(&p);
    int created, bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t k = on_pool_get(&p, cell(i), &created);
        if (k != (int32_t)i || !created || p.nodes[k].parent != -1 || p.hpos[k] != -1) bad++;
        if (i == 100) CHECK(p.map == p.small);
    }
    CHECK(p.map == p.big);
    CHECK_EQ_INT(bad, 0);
    for (uint32_t i = 0; i < n; i++)
        if (on_pool_get(&p, cell(i), &created) != (int32_t)i || created) bad++;
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(on_pool_get(&p, cell((uint32_t)n), &created), -1); /* full */
    /* a new search: empty again, back in the small map */
    on_pool_reset(&p);
    CHECK(p.map == p.small);
    CHECK_EQ_INT(p.nnodes, 0);
    CHECK_EQ_INT(on_pool_get(&p, cell(5), &created), 0);
    CHECK(created);
    on_pool_free(&p);
}

/* The stamp wraps to 0: the maps are cleared once and stale slots stay empty. */
static void stamp_wrap(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, 64) == 0);
    p.stamp = UINT32_MAX - 1;
    on_pool_reset(&p); /* UINT32_MAX */
    int created;
    for (uint32_t i = 0; i < 20; i++) on_pool_get(&p, cell(i), &created);
    CHECK_EQ_INT(p.stamp, UINT32_MAX);
    on_pool_reset(&p); /* wraps: cleared, stamp 1 */
    CHECK_EQ_INT(p.stamp, 1);
    size_t live = 0;
    for (size_t i = 0; i <= p.smallmask; i++) live += p.small[i].stamp != 0;
    CHECK_EQ_INT(live, 0);
    CHECK_EQ_INT(on_pool_get(&p, cell(3), &created), 0);
    CHECK(created);
    on_pool_free(&p);
    /* the same with a big map in use */
    CHECK(on_pool_init(&p, 40000) == 0);
    on_pool_reset(&p);
    for (uint32_t i = 0; i < 20000; i++) on_pool_get(&p, cell(i), &created);
    CHECK(p.map == p.big);
    p.stamp = UINT32_MAX;
    on_pool_reset(&p);
    CHECK_EQ_INT(p.stamp, 1);
    live = 0;
    for (size_t i = 0; i <= p.bigmask; i++) live += p.big[i].stamp != 0;
    for (size_t i = 0; i <= p.smallmask; i++) live += p.small[i].stamp != 0;
    CHECK_EQ_INT(live, 0);
    p.stamp = 1;
    CHECK_EQ_INT(on_pool_get(&p, cell(3), &created), 0);
    CHECK(created);
    /* a slot stamped 1 by a search long ago would read as live now: the clearing prevents that */
    on_pool_reset(&p);
    CHECK_EQ_INT(p.stamp, 2);
    CHECK_EQ_INT(on_pool_get(&p, cell(3), &created), 0);
    CHECK(created);
    on_pool_free(&p);
}

/* Pops come out in (f ascending, g descending) order after random pushes and updates that move f
 * both ways; escalation's heapify after every f changed. */
static void heap_order(void)
{
    on_nodepool p;
    size_t n = 2000;
    CHECK(on_pool_init(&p, n) == 0);
    on_pool_reset(&p);
    int created;
    for (uint32_t i = 0; i < n; i++) {
        int32_t k = on_pool_get(&p, cell(i), &created);
        p.nodes[k].f = (double)(rnd() % 500);
        p.nodes[k].g = (double)(rnd() % 50);
        on_pool_push_or_update(&p, (uint32_t)k);
    }
    for (int r = 0; r < 3000; r++) { /* f rises and falls in place */
        uint32_t k = rnd() % (uint32_t)n;
        p.nodes[k].f += (double)((int)(rnd() % 201) - 100);
        on_pool_push_or_update(&p, k);
    }
    int bad = 0;
    double lf = -INFINITY, lg = INFINITY;
    for (size_t i = 0; i < n / 2; i++) {
        uint32_t k = on_pool_pop(&p);
        const on_snode *x = &p.nodes[k];
        if (x->f < lf || (x->f == lf && x->g > lg) || p.hpos[k] != -1) bad++;
        lf = x->f;
        lg = x->g;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(p.nheap, n - n / 2);
    /* every f changed (escalation): rebuilt bottom-up, then popped in order */
    for (size_t i = 0; i < p.nheap; i++) p.nodes[p.heap[i]].f = (double)(rnd() % 1000);
    on_pool_heapify(&p);
    for (size_t i = 0; i < p.nheap; i++)
        if (p.hpos[p.heap[i]] != (int32_t)i) bad++;
    lf = -INFINITY;
    lg = INFINITY;
    while (p.nheap > 0) {
        const on_snode *x = &p.nodes[on_pool_pop(&p)];
        if (x->f < lf || (x->f == lf && x->g > lg)) bad++;
        lf = x->f;
        lg = x->g;
    }
    CHECK_EQ_INT(bad, 0);
    on_pool_free(&p);
}

/* A search of k nodes in p (a new search), each node's g set to its index; returns the number of
 * nodes not found again at their index with their g. */
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

static void follows_search(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    /* a query at 2^20 nodes starts with 256 nodes and 512 slots, not ~100 bytes per max_node */
    CHECK_EQ_INT(p.nodecap, ON_POOL_FIRST_NODES);
    CHECK_EQ_INT(p.smallmask + 1, ON_POOL_FIRST_MAP);
    CHECK(p.big == NULL);
    CHECK_EQ_INT(on_pool_bytes(&p), 256 * (sizeof(on_snode) + 4 + 8 + 4) + 512 * sizeof(on_mslot));
    /* 1,000 nodes: doubled to 1,024 nodes and 2,048 slots (at most half full) */
    CHECK_EQ_INT(search_of(&p, 1000, 0), 0);
    CHECK_EQ_INT(p.nodecap, 1024);
    CHECK_EQ_INT(p.smallmask + 1, 2048);
    CHECK(p.big == NULL);
    /* steady state: searches up to that size allocate nothing */
    const on_snode *nodes = p.nodes;
    const on_mslot *small = p.small;
    size_t bytes = on_pool_bytes(&p);
    for (uint32_t r = 1; r <= 5; r++) CHECK_EQ_INT(search_of(&p, 1000 - 100 * r, r), 0);
    CHECK(p.nodes == nodes && p.small == small && on_pool_bytes(&p) == bytes);
    /* 40,000 nodes: through the small map's largest size (32,768 slots) into the big map, made at
     * 65,536 slots and doubled to 131,072; the nodes to 65,536 */
    CHECK_EQ_INT(search_of(&p, 40000, 7), 0);
    CHECK_EQ_INT(p.smallmask + 1, ON_POOL_SMALL_MAP);
    CHECK(p.map == p.big);
    CHECK_EQ_INT(p.bigmask + 1, 131072);
    CHECK_EQ_INT(p.nodecap, 65536);
    /* and again, smaller and as large: the same memory, the big map reused */
    const on_mslot *big = p.big;
    nodes = p.nodes;
    CHECK_EQ_INT(search_of(&p, 20000, 1), 0);
    CHECK(p.map == p.big);
    CHECK_EQ_INT(search_of(&p, 40000, 2), 0);
    CHECK(p.big == big && p.nodes == nodes);
    on_pool_free(&p);

    /* the node array never passes max_nodes; the pool is full at max_nodes */
    CHECK(on_pool_init(&p, 300) == 0);
    CHECK_EQ_INT(search_of(&p, 300, 0), 0);
    CHECK_EQ_INT(p.nodecap, 300);
    int created;
    CHECK_EQ_INT(on_pool_get(&p, cell(100000), &created), -1);
    CHECK(p.bigmask + 1 <= 1024);
    on_pool_free(&p);
}

static void pages(void)
{
    on_pages_free(NULL); /* (nothing) */
    /* 1 KB (malloc'd) -> 1 MB (its own mapping) -> 3 MB (moved with it) -> 200 KB: contents kept */
    uint32_t *a = on_pages_realloc(NULL, 1024);
    CHECK(a != NULL);
    for (uint32_t i = 0; i < 256; i++) a[i] = i * 7u;
    a = on_pages_realloc(a, (size_t)1 << 20);
    CHECK(a != NULL);
    int bad = 0;
    for (uint32_t i = 0; i < 256; i++) bad += a[i] != i * 7u;
    for (uint32_t i = 256; i < (1u << 18); i++) a[i] = i ^ 0x5a5a5a5au;
    a = on_pages_realloc(a, (size_t)3 << 20);
    CHECK(a != NULL);
    for (uint32_t i = 0; i < 256; i++) bad += a[i] != i * 7u;
    for (uint32_t i = 256; i < (1u << 18); i++) bad += a[i] != (i ^ 0x5a5a5a5au);
    a = on_pages_realloc(a, 200 * 1024);
    CHECK(a != NULL);
    for (uint32_t i = 256; i < 50 * 1024; i++) bad += a[i] != (i ^ 0x5a5a5a5au);
    CHECK_EQ_INT(bad, 0);
    on_pages_free(a);
    /* zeroed below and above ON_PAGES_MIN (a reused heap block holds old bytes: malloc'd ones cleared) */
    char *junk = malloc(4096);
    CHECK(junk != NULL);
    memset(junk, 0xff, 4096);
    free(junk);
    unsigned char *z = on_pages_calloc(1000, 4), *zb = on_pages_calloc(ON_PAGES_MIN, 2);
    CHECK(z != NULL && zb != NULL);
    for (size_t i = 0; i < 4000; i++) bad += z[i] != 0;
    for (size_t i = 0; i < 2 * ON_PAGES_MIN; i++) bad += zb[i] != 0;
    CHECK_EQ_INT(bad, 0);
    on_pages_free(z);
    on_pages_free(zb);
    /* too much: NULL, the array left as it was */
    uint8_t *c = on_pages_realloc(NULL, 16);
    CHECK(c != NULL);
    c[0] = 42;
    CHECK(on_pages_realloc(c, SIZE_MAX - 8) == NULL);
    CHECK_EQ_INT(c[0], 42);
    size_t cap = 0;
    void *g = NULL;
    CHECK_EQ_INT(on_pages_grow(&g, &cap, SIZE_MAX / 2, 8), -1);
    CHECK(g == NULL && cap == 0);
    CHECK_EQ_INT(on_pages_grow(&g, &cap, 300, 8), 0);
    CHECK_EQ_INT(cap, 512);
    on_pages_free(g);
    on_pages_free(c);
}

static size_t pool_bytes(size_t nodes, size_t slots)
{
    return nodes * (sizeof(on_snode) + 4 + 8 + 4) + slots * sizeof(on_mslot);
}

static void trimmed(void)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    /* 40,000 nodes: 65,536 nodes, the small map at 32,768 slots and the big one at 131,072 */
    CHECK_EQ_INT(search_of(&p, 40000, 1), 0);
    size_t big = pool_bytes(65536, 32768 + 131072);
    CHECK_EQ_INT(on_pool_bytes(&p), big);
    /* searches under an eighth of it (8,192 nodes): the room kept for ON_POOL_TRIM_AFTER (16) of them in
     * a row (one reset each here), the count started again by one over an eighth */
    for (uint32_t r = 0; r < 12; r++) CHECK_EQ_INT(search_of(&p, 100, 2 + r), 0);
    CHECK_EQ_INT(search_of(&p, 9000, 14), 0);
    for (uint32_t r = 0; r < 16; r++) CHECK_EQ_INT(search_of(&p, 100 + r, 20 + r), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), big);
    CHECK(p.big != NULL);
    /* the 17th search's start reads the 16th small one (115 nodes): cut to ON_POOL_KEEP_NODES (1,024) nodes,
     * the big map freed, the small map at 2,048 slots */
    CHECK_EQ_INT(search_of(&p, 50, 40), 0);
    CHECK_EQ_INT(p.nodecap, ON_POOL_KEEP_NODES);
    CHECK(p.big == NULL);
    CHECK_EQ_INT(p.smallmask + 1, 2 * ON_POOL_KEEP_NODES);
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(1024, 2048));
    /* grown again by doubling, through the big map, as a new pool's: every node found */
    CHECK_EQ_INT(search_of(&p, 40000, 41), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), big);
    /* cut to twice the last search's nodes: 16 searches of 3,000 after it: 8,192 nodes (a power of two
     * from 1,024), 16,384 slots */
    for (uint32_t r = 0; r < 17; r++) CHECK_EQ_INT(search_of(&p, 3000, 50 + r), 0);
    CHECK_EQ_INT(p.nodecap, 8192);
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(8192, 16384));
    on_pool_free(&p);
    /* a pool at its first size is never cut (nor one at max_nodes below ON_POOL_KEEP_NODES) */
    CHECK(on_pool_init(&p, 300) == 0);
    CHECK_EQ_INT(search_of(&p, 300, 0), 0);
    for (uint32_t r = 0; r < 20; r++) CHECK_EQ_INT(search_of(&p, 3, 1 + r), 0);
    CHECK_EQ_INT(p.nodecap, 300);
    CHECK_EQ_INT(search_of(&p, 300, 30), 0);
    on_pool_free(&p);
}

/* Held (on_pool_hold_trim), the start leaves the cut due and on_pool_trim makes it: the same cut, the
 * pool emptied and used again as a new one; nothing when none is due; a due cut dropped when the last
 * search (not yet seen by a reset) used the room again; and kept to its size when it was bigger. */
static void held_trim(void)
{
    on_nodepool p;
    int emptied = 7;
    CHECK(on_pool_init(&p, (size_t)1 << 20) == 0);
    on_pool_hold_trim(&p, 1);
    CHECK_EQ_INT(search_of(&p, 40000, 1), 0);
    size_t big = pool_bytes(65536, 32768 + 131072);
    CHECK_EQ_INT(on_pool_trim(&p, &emptied), 0); /* (none due) */
    CHECK_EQ_INT(emptied, 0);
    for (uint32_t r = 0; r < 17; r++) CHECK_EQ_INT(search_of(&p, 100 + r, 2 + r), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), big); /* held: the room kept */
    CHECK(p.big != NULL);
    CHECK_EQ_INT(on_pool_trim(&p, &emptied), big - pool_bytes(1024, 2048));
    CHECK_EQ_INT(emptied, 1);
    CHECK_EQ_INT(p.nodecap, ON_POOL_KEEP_NODES);
    CHECK(p.big == NULL);
    CHECK_EQ_INT(p.nnodes, 0);
    CHECK_EQ_INT(on_pool_trim(&p, &emptied), 0);
    CHECK_EQ_INT(emptied, 0);
    CHECK_EQ_INT(search_of(&p, 40000, 41), 0); /* grown again, every node found */
    CHECK_EQ_INT(on_pool_bytes(&p), big);
    /* due, then a big search before the trim: dropped */
    for (uint32_t r = 0; r < 17; r++) CHECK_EQ_INT(search_of(&p, 100, 50 + r), 0);
    CHECK_EQ_INT(search_of(&p, 30000, 70), 0);
    CHECK_EQ_INT(on_pool_trim(&p, &emptied), 0);
    CHECK_EQ_INT(emptied, 0);
    CHECK_EQ_INT(on_pool_bytes(&p), big);
    /* due at 1,024 nodes, then a search of 3,000: the cut keeps 8,192 */
    for (uint32_t r = 0; r < 17; r++) CHECK_EQ_INT(search_of(&p, 100, 80 + r), 0);
    CHECK_EQ_INT(search_of(&p, 3000, 99), 0);
    CHECK_EQ_INT(on_pool_trim(&p, &emptied), big - pool_bytes(8192, 16384));
    CHECK_EQ_INT(p.nodecap, 8192);
    /* let go, the start cuts again by itself */
    on_pool_hold_trim(&p, 0);
    CHECK_EQ_INT(search_of(&p, 40000, 100), 0);
    for (uint32_t r = 0; r < 17; r++) CHECK_EQ_INT(search_of(&p, 100 + r, 110 + r), 0);
    CHECK_EQ_INT(on_pool_bytes(&p), pool_bytes(1024, 2048));
    on_pool_free(&p);
}

TEST_MAIN("nodepool", {
    growth();
    stamp_wrap();
    heap_order();
    follows_search();
    pages();
    trimmed();
    held_trim();
})
