/*
 * nodepool.c -- the search's node pool, stamped node map and heap (see nodepool.h): all three grow
 * by doubling with the nodes a search uses, up to max_nodes; and the big tables' own pages
 * (on_pages_*, nodepool.h).
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* MAP_ANONYMOUS and mremap (on_pages_realloc) */
#endif
#include "nodepool.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(MAP_ANONYMOUS)
#define PAGES_MAP 1
#else
#define PAGES_MAP 0
#endif
/* mremap moves a mapping's pages without copying them (Linux), but MemorySanitizer and ThreadSanitizer
 * do not intercept it: the moved pages keep the shadow of whatever was mapped at their new address
 * before (CI's check-msan, session 31: a use of an uninitialised value reported at random in
 * test_reach_grow, its origin an old heap block at that address). Under those two, a mapping grows
 * by a new one and a copy, as on a system without mremap. */
#if defined(__linux__)
#define PAGES_MREMAP 1
#if defined(__has_feature)
#if __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#undef PAGES_MREMAP
#define PAGES_MREMAP 0
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#undef PAGES_MREMAP
#define PAGES_MREMAP 0
#endif
#else
#define PAGES_MREMAP 0
#endif

/* ---- big tables in pages of their own ---------------------------------------------------------- */

/* before each array: the bytes mapped (0: malloc'd) and the bytes asked (16 bytes: the array stays
 * aligned as malloc's) */
typedef struct pages_hdr {
    size_t map, size;
} pages_hdr;

void *on_pages_realloc(void *p, size_t bytes)
{
    pages_hdr *h = p ? (pages_hdr *)p - 1 : NULL;
    if (bytes > SIZE_MAX / 2) return NULL;
    size_t total = bytes + sizeof *h;
#if PAGES_MAP
    if (total >= ON_PAGES_MIN || (h && h->map)) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (total + pg - 1) / pg * pg;
        void *m;
        if (h && h->map == len) {
            h->size = bytes;
            return p;
        }
        if (h && h->map) {
#if PAGES_MREMAP
            m = mremap(h, h->map, len, MREMAP_MAYMOVE); /* (the pages moved, not copied) */
            if (m == MAP_FAILED) return NULL;
#else
            m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return NULL;
            memcpy((pages_hdr *)m + 1, p, h->size < bytes ? h->size : bytes);
            munmap(h, h->map);
#endif
        } else {
            m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return NULL;
            if (h) {
                memcpy((pages_hdr *)m + 1, p, h->size < bytes ? h->size : bytes);
                free(h);
            }
        }
        h = m;
        h->map = len;
        h->size = bytes;
        return h + 1;
    }
#endif
    pages_hdr *q = realloc(h, total);
    if (!q) return NULL;
    q->map = 0;
    q->size = bytes;
    return q + 1;
}

void *on_pages_calloc(size_t n, size_t elem)
{
    if (elem && n > (SIZE_MAX / 2) / elem) return NULL;
    void *p = on_pages_realloc(NULL, n * elem);
    if (p && !((pages_hdr *)p - 1)->map) memset(p, 0, n * elem); /* (a new mapping is zero pages) */
    return p;
}

void on_pages_free(void *p)
{
    if (!p) return;
    pages_hdr *h = (pages_hdr *)p - 1;
#if PAGES_MAP
    if (h->map) {
        munmap(h, h->map);
        return;
    }
#endif
    free(h);
}

int on_pages_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need) {
        if (nc > ((size_t)-1 / 4) / (elem ? elem : 1)) return -1;
        nc *= 2;
    }
    void *q = on_pages_realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* ---- the pool --------------------------------------------------------------------------------- */

/* The inline probe's bound (nodepool.h: fastmax), after the map in use or the node array changed. */
static void fast_limit(on_nodepool *p)
{
    size_t half = (p->mapmask + 1) / 2;
    p->fastmax = half < p->nodecap ? half : p->nodecap;
}

/* 64 - log2(cap) for a map of cap slots (a power of two). */
static unsigned map_shift(size_t cap)
{
    /* (b, the least with 2^b >= cap, by a count of leading zeros: a loop of ~60 instructions a search before) */
    unsigned b = cap > 1 ? 64u - (unsigned)__builtin_clzll((unsigned long long)(cap - 1)) : 0u;
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
    p->nodes = on_pages_realloc(NULL, p->nodecap * sizeof *p->nodes);
    p->heap = on_pages_realloc(NULL, p->nodecap * sizeof *p->heap);
    p->hf = on_pages_realloc(NULL, p->nodecap * sizeof *p->hf);
    p->hpos = on_pages_realloc(NULL, p->nodecap * sizeof *p->hpos);
    p->small = on_pages_calloc(smallcap, sizeof *p->small); /* stamp 0: empty; searches count from 1 */
    p->smallmask = smallcap - 1;
    p->map = p->small;
    p->mapmask = p->smallmask;
    p->mapshift = map_shift(smallcap);
    fast_limit(p);
    return p->nodes && p->small && p->heap && p->hf && p->hpos ? 0 : -1;
}

void on_pool_free(on_nodepool *p)
{
    on_pages_free(p->nodes);
    on_pages_free(p->big);
    on_pages_free(p->small);
    on_pages_free(p->heap);
    on_pages_free(p->hf);
    on_pages_free(p->hpos);
    memset(p, 0, sizeof *p);
}

size_t on_pool_bytes(const on_nodepool *p)
{
    size_t slots = (p->small ? p->smallmask + 1 : 0) + (p->big ? p->bigmask + 1 : 0);
    return p->nodecap * (sizeof *p->nodes + sizeof *p->heap + sizeof *p->hf + sizeof *p->hpos) + slots * sizeof(on_mslot);
}

/* A pool grown by a bigger search than its last ones gives the room back: when it was reset
 * ON_POOL_TRIM_AFTER times in a row (8 to 16 searches) after searches that each used under an eighth of
 * the node array (the last of p->nnodes nodes; a query whose searches come in all sizes keeps its room:
 * cut after every such search and grown again, the query benchmark's A1 sample cost 4.5 % more
 * instructions a query), the arrays are cut to twice its nodes (at least
 * ON_POOL_KEEP_NODES), the big map freed and the small map cut to twice that (at least as it started):
 * one 16,000-node search no longer makes every later small search hold ~1.5 MB (issue 31 goal 3: 50
 * navigators' searches at once, streamed, held 15.6 MB). The pages go back to the system (on_pages_*).
 * A failure to shrink leaves that array larger (nodecap is the least of them). Held (on_pool_hold_trim),
 * the cut is noted (trim_keep: the most room any search since the last cut asked for) for on_pool_trim. */
static void pool_cut(on_nodepool *p, size_t keep)
{
    void *a;
    if ((a = on_pages_realloc(p->nodes, keep * sizeof *p->nodes))) p->nodes = a;
    if ((a = on_pages_realloc(p->heap, keep * sizeof *p->heap))) p->heap = a;
    if ((a = on_pages_realloc(p->hf, keep * sizeof *p->hf))) p->hf = a;
    if ((a = on_pages_realloc(p->hpos, keep * sizeof *p->hpos))) p->hpos = a;
    p->nodecap = keep;
    on_pages_free(p->big);
    p->big = NULL;
    p->bigmask = 0;
    size_t slots = ON_POOL_FIRST_MAP;
    while (slots < 2 * keep) slots <<= 1;
    if (slots < p->smallmask + 1 && (a = on_pages_calloc(slots, sizeof *p->small))) { /* (zero: empty) */
        on_pages_free(p->small);
        p->small = a;
        p->smallmask = slots - 1;
    }
}

/* The room a cut after the last search (p->nnodes) keeps: twice its nodes, a power of two from
 * ON_POOL_KEEP_NODES, at most max_nodes; nodecap when that search used an eighth of the node array or
 * more (no cut: it used the room). */
static size_t last_keep(const on_nodepool *p)
{
    size_t keep = ON_POOL_KEEP_NODES;
    while (keep < 2 * p->nnodes) keep <<= 1;
    if (keep > p->max_nodes) keep = p->max_nodes;
    return 8 * p->nnodes >= p->nodecap || keep >= p->nodecap ? p->nodecap : keep;
}

static void pool_trim(on_nodepool *p)
{
    size_t keep = last_keep(p);
    if (keep >= p->nodecap) {
        p->small_runs = 0;
        p->trim_keep = 0;
        return;
    }
    if (p->trim_keep && keep > p->trim_keep) p->trim_keep = (uint32_t)keep; /* (held: a bigger one since) */
    if (++p->small_runs < ON_POOL_TRIM_AFTER) return;
    p->small_runs = 0;
    if (p->trim_held) {
        if (keep > p->trim_keep) p->trim_keep = (uint32_t)keep;
        return;
    }
    pool_cut(p, keep);
}

/* Empty the pool for a new search: no nodes, the small map in use, a new stamp. */
static void pool_empty(on_nodepool *p)
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

void on_pool_hold_trim(on_nodepool *p, int hold)
{
    p->trim_held = (uint16_t)(hold != 0);
}

size_t on_pool_trim(on_nodepool *p, int *emptied)
{
    size_t keep = p->trim_keep, last = last_keep(p); /* (the last search, not yet seen by a reset) */
    *emptied = 0;
    if (!keep) return 0;
    p->trim_keep = 0;
    if (last > keep) keep = last;
    if (keep >= p->nodecap) return 0;
    size_t before = on_pool_bytes(p);
    *emptied = 1;
    pool_cut(p, keep);
    pool_empty(p);
    return before - on_pool_bytes(p);
}

void on_pool_reset(on_nodepool *p)
{
    pool_trim(p);
    pool_empty(p);
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
        if (!(m = on_pages_calloc(2 * cap, sizeof *m))) return -1;
        on_pages_free(p->small);
        p->small = m;
        p->smallmask = 2 * cap - 1;
        p->map = m;
        p->mapmask = p->smallmask;
    } else {
        if (p->map == p->big && cap >= p->bigmax) return 0; /* the pool is full first */
        if (!p->big || p->bigmask + 1 <= cap) {
            size_t want = 2 * cap < p->bigmax ? 2 * cap : p->bigmax;
            if (!(m = on_pages_calloc(want, sizeof *m))) return -1;
            on_pages_free(p->big);
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
    on_snode *n = on_pages_realloc(p->nodes, cap * sizeof *n);
    if (!n) return -1;
    p->nodes = n;
    uint32_t *h = on_pages_realloc(p->heap, cap * sizeof *h);
    if (!h) return -1; /* (the larger arrays are kept; nodecap stays) */
    p->heap = h;
    double *hf = on_pages_realloc(p->hf, cap * sizeof *hf);
    if (!hf) return -1;
    p->hf = hf;
    int32_t *hpos = on_pages_realloc(p->hpos, cap * sizeof *hpos);
    if (!hpos) return -1;
    p->hpos = hpos;
    p->nodecap = cap;
    fast_limit(p);
    return 0;
}

int on_pool_grow_ahead(on_nodepool *p, size_t room)
{
    size_t want = p->nnodes + room < p->max_nodes ? p->nnodes + room : p->max_nodes;
    while (2 * want > p->mapmask + 1 && !(p->map == p->big && p->mapmask + 1 >= p->bigmax))
        if (map_enlarge(p) != 0) return -1;
    while (want > p->nodecap && p->nodecap < p->max_nodes)
        if (nodes_enlarge(p) != 0) return -1;
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
    /* the climb (a sift up) with n's f in a register and the arrays in locals (as on_pool_push_f's), the same
     * order (on_pool_less: lower f, on ties the larger g) */
    uint32_t *h = p->heap;
    int32_t *hpos = p->hpos;
    const on_snode *nodes = p->nodes;
    double f = nodes[n].f;
    p->hf[n] = f;
    const double *hf = p->hf;
    size_t at = (size_t)hpos[n], i = at;
    while (i > 0) {
        size_t par = (i - 1) / 2;
        uint32_t m = h[par];
        double y = hf[m];
        if (!(f < y || (f == y && nodes[n].g > nodes[m].g))) break;
        h[i] = m;
        hpos[m] = (int32_t)i;
        i = par;
    }
    if (i != at) {
        h[i] = n;
        hpos[n] = (int32_t)i;
        return;
    }
    /* (a node that went up is less than both its new children, the entry it displaced and that one's
     * sibling, in the heap's strict order: the sift down would not move it) */
    heap_down(p, at);
}

/* Bottom-up (Floyd): O(n), once per escalation; hf takes every f first. */
void on_pool_heapify(on_nodepool *p)
{
    for (size_t i = 0; i < p->nheap; i++) p->hf[p->heap[i]] = p->nodes[p->heap[i]].f;
    for (size_t i = p->nheap / 2; i-- > 0;) heap_down(p, i);
}
