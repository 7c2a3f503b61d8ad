/*
 * test_pages.c -- the big tables' own pages (on_pages_*, nodepool.c) and a node pool cut back after a
 * much smaller search (on_pool_reset, issue 31 goal 3): contents kept across a growth from malloc'd to
 * mapped and within the mapping, zeroed arrays either way, and the pool's room after each search.
 */
#include "octonav.h"
#include "minitest.h"
#include "nodepool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

static on_cell cell(uint32_t i) { return (on_cell){i % 7, i * 2654435761u}; }

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

TEST_MAIN("pages", {
    pages();
    trimmed();
})
