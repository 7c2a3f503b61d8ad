/*
 * nodepool.c -- the search's node pool, stamped node map and heap (see nodepool.h): all three grow
 * by doubling with the nodes a search uses, up to max_nodes.
 */
#include "nodepool.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The inline probe's bound (nodepool.h: fastmax), after the map in use or the node array changed. */
static void fast_limit(on_nodepool *p)
{
    size_t half = (p->mapmask + 1) / 2;
    p->fastmax = half < p->nodecap ? half : p->nodecap;
}

/* 64 - log2(cap) for a map of cap slots (a power of two). */
static unsigned map_shift(size_t cap)
{
    unsigned b = 0;
    while (((size_t)1 << b) < cap) b++;
    return 64u - b;
}

int on_pool_init(on_nodepool *p, size_t max_nodes)
{
    memset(p, 0, sizeof *p);
    size_t mapcap = 4;
    while (mapcap < 2 * max_nodes) mapcap <<= 1;
    p->max_nodes = max_nodes;
    p->bigmax = mapcap;
    p->smallmax = mapcap < ON_POOL_SMALL_MAP ? mapcap : ON_POOL_SMALL_MAP;
    p->nodecap = max_nodes < ON_POOL_FIRST_NODES ? max_nodes : ON_POOL_FIRST_NODES;
    size_t smallcap = p->smallmax < ON_POOL_FIRST_MAP ? p->smallmax : ON_POOL_FIRST_MAP;
    p->nodes = malloc(p->nodecap * sizeof *p->nodes);
    p->heap = malloc(p->nodecap * sizeof *p->heap);
    p->hf = malloc(p->nodecap * sizeof *p->hf);
    p->hpos = malloc(p->nodecap * sizeof *p->hpos);
    p->small = calloc(smallcap, sizeof *p->small); /* stamp 0: empty; searches count from 1 */
    p->smallmask = smallcap - 1;
    p->map = p->small;
    p->mapmask = p->smallmask;
    p->mapshift = map_shift(smallcap);
    fast_limit(p);
    return p->nodes && p->small && p->heap && p->hf && p->hpos ? 0 : -1;
}

void on_pool_free(on_nodepool *p)
{
    free(p->nodes);
    free(p->big);
    free(p->small);
    free(p->heap);
    free(p->hf);
    free(p->hpos);
    memset(p, 0, sizeof *p);
}

size_t on_pool_bytes(const on_nodepool *p)
{
    size_t slots = (p->small ? p->smallmask + 1 : 0) + (p->big ? p->bigmask + 1 : 0);
    return p->nodecap * (sizeof *p->nodes + sizeof *p->heap + sizeof *p->hf + sizeof *p->hpos) + slots * sizeof(on_mslot);
}

void on_pool_reset(on_nodepool *p)
{
    p->nnodes = 0;
    p->nheap = 0;
    p->map = p->small;
    p->mapmask = p->smallmask;
    p->mapshift = map_shift(p->smallmask + 1);
    fast_limit(p);
    if (++p->stamp == 0) { /* 2^32 searches: clear the stamps once and count again */
        if (p->big) memset(p->big, 0, (p->bigmask + 1) * sizeof *p->big);
        memset(p->small, 0, (p->smallmask + 1) * sizeof *p->small);
        p->stamp = 1;
    }
}

static void map_put(on_nodepool *p, uint64_t key, uint32_t idx)
{
    size_t i = on_pool_home(p, key);
    for (;;) {
        on_mslot *s = &p->map[i];
        if (s->stamp != p->stamp) {
            s->key = key;
            s->idx = idx;
            s->stamp = p->stamp;
            return;
        }
        i = (i + 1) & p->mapmask;
    }
}

/* The map in use is half full: double the small map (up to smallmax), else move to the big map,
 * made or doubled when it is not larger already (up to bigmax), and index every node of this search
 * in the new map. -1 on allocation failure (nothing changed). */
static int map_enlarge(on_nodepool *p)
{
    size_t cap = p->mapmask + 1;
    on_mslot *m;
    if (p->map == p->small && cap < p->smallmax) {
        if (!(m = calloc(2 * cap, sizeof *m))) return -1;
        free(p->small);
        p->small = m;
        p->smallmask = 2 * cap - 1;
        p->map = m;
        p->mapmask = p->smallmask;
    } else {
        if (p->map == p->big && cap >= p->bigmax) return 0; /* the pool is full first */
        if (!p->big || p->bigmask + 1 <= cap) {
            size_t want = 2 * cap < p->bigmax ? 2 * cap : p->bigmax;
            if (!(m = calloc(want, sizeof *m))) return -1;
            free(p->big);
            p->big = m;
            p->bigmask = want - 1;
        }
        p->map = p->big;
        p->mapmask = p->bigmask;
    }
    p->mapshift = map_shift(p->mapmask + 1);
    fast_limit(p);
    for (size_t i = 0; i < p->nnodes; i++) map_put(p, on_pool_key(p->nodes[i].cell), (uint32_t)i);
    return 0;
}

/* Room for one more node: double the node array, the heap, hf and hpos (up to max_nodes). */
static int nodes_enlarge(on_nodepool *p)
{
    size_t cap = 2 * p->nodecap < p->max_nodes ? 2 * p->nodecap : p->max_nodes;
    on_snode *n = realloc(p->nodes, cap * sizeof *n);
    if (!n) return -1;
    p->nodes = n;
    uint32_t *h = realloc(p->heap, cap * sizeof *h);
    if (!h) return -1; /* (the larger arrays are kept; nodecap stays) */
    p->heap = h;
    double *hf = realloc(p->hf, cap * sizeof *hf);
    if (!hf) return -1;
    p->hf = hf;
    int32_t *hpos = realloc(p->hpos, cap * sizeof *hpos);
    if (!hpos) return -1;
    p->hpos = hpos;
    p->nodecap = cap;
    fast_limit(p);
    return 0;
}

int32_t on_pool_get_slow(on_nodepool *p, on_cell c, int *created)
{
    /* (every map stays at most half full: the big one can hold 2 * max_nodes slots) */
    if (2 * (p->nnodes + 1) > p->mapmask + 1 && map_enlarge(p) != 0) return -2;
    uint64_t key = on_pool_key(c);
    size_t i = on_pool_home(p, key);
    for (;;) {
        on_mslot *s = &p->map[i];
        if (s->stamp == p->stamp) {
            if (s->key == key) {
                *created = 0;
                return (int32_t)s->idx;
            }
        } else {
            if (p->nnodes >= p->max_nodes) return -1;
            if (p->nnodes == p->nodecap && nodes_enlarge(p) != 0) return -2;
            *created = 1;
            return on_pool_make(p, s, c, key);
        }
        i = (i + 1) & p->mapmask;
    }
}


static void heap_up(on_nodepool *p, size_t i)
{
    uint32_t v = p->heap[i];
    while (i > 0) {
        size_t par = (i - 1) / 2;
        if (!on_pool_less(p, v, p->heap[par])) break;
        p->heap[i] = p->heap[par];
        p->hpos[p->heap[i]] = (int32_t)i;
        i = par;
    }
    p->heap[i] = v;
    p->hpos[v] = (int32_t)i;
}

static void heap_down(on_nodepool *p, size_t i)
{
    uint32_t v = p->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= p->nheap) break;
        if (c + 1 < p->nheap && on_pool_less(p, p->heap[c + 1], p->heap[c])) c++;
        if (!on_pool_less(p, p->heap[c], v)) break;
        p->heap[i] = p->heap[c];
        p->hpos[p->heap[i]] = (int32_t)i;
        i = c;
    }
    p->heap[i] = v;
    p->hpos[v] = (int32_t)i;
}

/* f may rise as well as fall: with face points a better g can come through another face, whose
 * centre is farther from the goal; so an update sifts both ways. (A new node's push is inline:
 * on_pool_push_or_update.) hf takes the node's new f first. */
void on_pool_update(on_nodepool *p, uint32_t n)
{
    int32_t at = p->hpos[n];
    p->hf[n] = p->nodes[n].f;
    heap_up(p, (size_t)at);
    /* (a node that went up is less than both its new children, the entry it displaced and that one's
     * sibling, in the heap's strict order: the sift down would not move it) */
    if (p->hpos[n] == at) heap_down(p, (size_t)at);
}

/* Bottom-up (Floyd): O(n), once per escalation; hf takes every f first. */
void on_pool_heapify(on_nodepool *p)
{
    for (size_t i = 0; i < p->nheap; i++) p->hf[p->heap[i]] = p->nodes[p->heap[i]].f;
    for (size_t i = p->nheap / 2; i-- > 0;) heap_down(p, i);
}
