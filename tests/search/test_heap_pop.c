/*
 * test_heap_pop.c -- the open list's pop (nodepool.c) takes the root's hole down to a leaf and sifts
 * the last entry up from there. That must leave exactly the heap a sift down of the last entry from
 * the root leaves, entry for entry, or a search's ties of equal f and g would pop in another order and
 * paths would change. Checked against that sift down, written out here, after every pop of heaps
 * full of ties (f and g from a few values), with updates that move f both ways between pops. Pushes
 * likewise against the plain sift up (a push below the top goes to the root without comparisons).
 */
#define TESTRNG_SEED 0x5EEDF00Dull
#include "octonav.h"
#include "minitest.h"
#include "nodepool.h"
#include "testrng.h"

#include <stdlib.h>
#include <string.h>

static int less(const on_nodepool *p, uint32_t a, uint32_t b)
{
    const on_snode *x = &p->nodes[a], *y = &p->nodes[b];
    return x->f < y->f || (x->f == y->f && x->g > y->g);
}

/* The plain pop: the last entry to the root, sifted down (ties: the left child; stop when the
 * smaller child is not less). On a copy of the heap's order. */
static void ref_pop(const on_nodepool *p, uint32_t *h, size_t *n)
{
    uint32_t v = h[--*n];
    if (*n == 0) return;
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && less(p, h[c + 1], h[c])) c++;
        if (!less(p, h[c], v)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

/* The plain push: node k appended and sifted up (ties: up only past a smaller g), on a copy. */
static void ref_push(const on_nodepool *p, uint32_t *h, size_t *n, uint32_t k)
{
    size_t i = (*n)++;
    while (i > 0 && less(p, k, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = k;
}

/* Pushes, a third of them below the top (on_pool_push_new's way to the root without comparisons),
 * a sixth at the top's f exactly (which must climb by the tie rule, not take the shortcut: a <= there
 * fails this), among ties of f and g: the same heap as the plain push, entry for entry, with every
 * position. */
static void pushes(size_t n, int fvals, int gvals)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, n) == 0);
    on_pool_reset(&p);
    uint32_t *ref = malloc(n * sizeof *ref);
    CHECK(ref != NULL);
    if (!ref) return;
    size_t rn = 0;
    int created, bad_heap = 0, bad_pos = 0, below = 0, at_top = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t k = on_pool_get(&p, (on_cell){0, i}, &created);
        double top = p.nheap ? p.nodes[p.heap[0]].f : 0;
        int r = rndi(6);
        p.nodes[k].f = r < 2 ? top - (double)rndi(3) - 0.5 : r == 2 && p.nheap ? top : (double)rndi(fvals);
        p.nodes[k].g = (double)rndi(gvals);
        below += p.nheap && p.nodes[k].f < top;
        at_top += p.nheap && p.nodes[k].f == top;
        ref_push(&p, ref, &rn, (uint32_t)k);
        if (i % 2) on_pool_push_f(&p, (uint32_t)k, p.nodes[k].f); /* (search.c's adjacency loop's) */
        else on_pool_push_or_update(&p, (uint32_t)k);
        bad_heap += rn != p.nheap || memcmp(ref, p.heap, rn * sizeof *ref) != 0;
        for (size_t j = 0; j < p.nheap; j++) bad_pos += p.hpos[p.heap[j]] != (int32_t)j;
    }
    CHECK(below > (int)n / 4);
    CHECK(at_top > (int)n / 10);
    CHECK_EQ_INT(bad_heap, 0);
    CHECK_EQ_INT(bad_pos, 0);
    free(ref);
    on_pool_free(&p);
}

static void run(size_t n, int fvals, int gvals)
{
    on_nodepool p;
    CHECK(on_pool_init(&p, n) == 0);
    on_pool_reset(&p);
    int created;
    for (uint32_t i = 0; i < n; i++) {
        int32_t k = on_pool_get(&p, (on_cell){0, i}, &created);
        p.nodes[k].f = (double)rndi(fvals);
        p.nodes[k].g = (double)rndi(gvals);
        on_pool_push_or_update(&p, (uint32_t)k);
    }
    uint32_t *ref = malloc(n * sizeof *ref);
    CHECK(ref != NULL);
    if (!ref) return;
    int bad_top = 0, bad_heap = 0, bad_pos = 0;
    while (p.nheap > 0) {
        for (int r = 0; r < 3 && p.nheap > 1; r++) { /* an update between pops, up or down */
            uint32_t k = p.heap[(size_t)rndi((int)p.nheap)];
            p.nodes[k].f += (double)(rndi(5) - 2);
            on_pool_push_or_update(&p, k);
        }
        size_t rn = p.nheap;
        memcpy(ref, p.heap, rn * sizeof *ref);
        uint32_t want = ref[0];
        ref_pop(&p, ref, &rn);
        uint32_t got = on_pool_pop(&p);
        bad_top += got != want || p.hpos[got] != -1;
        bad_heap += rn != p.nheap || memcmp(ref, p.heap, rn * sizeof *ref) != 0;
        for (size_t i = 0; i < p.nheap; i++) bad_pos += p.hpos[p.heap[i]] != (int32_t)i;
    }
    CHECK_EQ_INT(bad_top, 0);
    CHECK_EQ_INT(bad_heap, 0);
    CHECK_EQ_INT(bad_pos, 0);
    free(ref);
    on_pool_free(&p);
}

TEST_MAIN("heap_pop", {
    run(1, 1, 1);
    run(2, 1, 1);
    run(7, 2, 2);
    run(1000, 3, 2); /* nearly all ties */
    run(3000, 40, 5);
    run(3000, 100000, 1000);
    pushes(2000, 4, 3);
    pushes(2000, 1000, 100);
})
