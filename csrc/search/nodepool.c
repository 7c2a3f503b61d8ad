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

/* ---- big tables in pages of their own ---------------------------------------------------------- */

/* before each array: the bytes mapped (0: malloc'd; a multiple of the page, its lowest bit set when the
 * mapping is a huge one: pages_realloc; bit 1 when it is a pool's arena) and the bytes asked (16 bytes: the array stays aligned as malloc's) */
typedef struct pages_hdr {
    size_t map, size;
} pages_hdr;

/* A node pool's big arrays in huge pages (pages_realloc's `huge`): a mapping of PAGES_HUGE bytes or more
 * starts on a PAGES_HUGE boundary and is advised MADV_HUGEPAGE, so that where the system gives transparent huge
 * pages (Linux: `madvise` or `always`) each whole 2 MB of it faults in once, zeroed by the kernel, instead of
 * 512 faults of 4 KB: on this VM (a paravirtual guest, every fault a trap) a fresh 4 KB page costs 13-21 us,
 * 2 MB touched page by page 6.5 ms on average, 11 at worst, and 0.17 ms in one huge page (/work/scratch/s31/pf2.c,
 * 300 repetitions). Its pages past the last whole 2 MB are 4 KB ones (requests of 1-2 MB rounded up to one
 * huge page were tried: the queries' bytes grew by ~1 MB a large pool). Growing keeps the boundary: in
 * place when the addresses after it are free, else its pages moved (mremap, MREMAP_FIXED) to the start of a
 * new aligned mapping; shrinking is in place. Elsewhere (no MADV_HUGEPAGE) the flag is ignored. The pool's
 * arena (below) is one such mapping. */
#define PAGES_HUGE ((size_t)2 << 20)
#if PAGES_MAP && defined(MADV_HUGEPAGE) && defined(__linux__)
#define PAGES_THP 1
#else
#define PAGES_THP 0
#endif

static size_t pages_len(const pages_hdr *h) { return h->map & ~(size_t)3; }

#if PAGES_MAP
/* A fresh anonymous mapping of len bytes (a page multiple); huge: on a PAGES_HUGE boundary, advised
 * MADV_HUGEPAGE (a reservation PAGES_HUGE larger, its head and tail unmapped). NULL when out of memory. */
static void *pages_map(size_t len, int huge)
{
#if PAGES_THP
    if (huge) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE), span = len + PAGES_HUGE - pg;
        char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        char *a = (char *)(((uintptr_t)m + PAGES_HUGE - 1) & ~(uintptr_t)(PAGES_HUGE - 1));
        if (a > m) munmap(m, (size_t)(a - m));
        if (m + span > a + len) munmap(a + len, (size_t)(m + span - (a + len)));
        (void)madvise(a, len, MADV_HUGEPAGE); /* (refused: 4 KB pages, as without) */
        return a;
    }
#endif
    (void)huge;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}
#endif

/* on_pages_realloc, and the node pool's arrays in huge pages when `huge` (the mapping's flag kept across
 * reallocs: a huge array stays huge). */
static void *pages_realloc(void *p, size_t bytes, int huge)
{
    pages_hdr *h = p ? (pages_hdr *)p - 1 : NULL;
    if (bytes > SIZE_MAX / 2) return NULL;
    size_t total = bytes + sizeof *h;
#if PAGES_MAP
    if (total >= ON_PAGES_MIN || (h && h->map)) {
        size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (total + pg - 1) / pg * pg;
        void *m;
        huge = PAGES_THP && (huge || (h && (h->map & 1)));
        size_t flag = huge ? 1 : 0, old = h ? pages_len(h) : 0;
        if (h && h->map && old == len) {
            h->size = bytes;
            return p;
        }
        if (h && h->map) {
#if defined(__linux__)
            if (huge && len >= PAGES_HUGE && len > old) {
                /* (grown in place when it can be: the start stays on its boundary; else the pages moved to
                 * the start of a new aligned mapping, which mremap replaces there) */
                m = (uintptr_t)h % PAGES_HUGE == 0 ? mremap(h, old, len, 0) : MAP_FAILED;
                if (m == MAP_FAILED) {
                    char *a = pages_map(len, 1);
                    if (!a) return NULL;
                    m = mremap(h, old, old, MREMAP_MAYMOVE | MREMAP_FIXED, a);
                    if (m == MAP_FAILED) {
                        munmap(a, len);
                        return NULL;
                    }
                }
                (void)madvise(m, len, MADV_HUGEPAGE);
            } else {
                m = mremap(h, old, len, MREMAP_MAYMOVE); /* (the pages moved, not copied; a shrink is in place) */
                if (m == MAP_FAILED) return NULL;
            }
#else
            m = pages_map(len, huge);
            if (!m) return NULL;
            memcpy((pages_hdr *)m + 1, p, h->size < bytes ? h->size : bytes);
            munmap(h, old);
#endif
        } else {
            m = pages_map(len, huge && len >= PAGES_HUGE);
            if (!m) return NULL;
            if (h) {
                memcpy((pages_hdr *)m + 1, p, h->size < bytes ? h->size : bytes);
                free(h);
            }
        }
        h = m;
        h->map = len | flag;
        h->size = bytes;
        return h + 1;
    }
#endif
    (void)huge;
    pages_hdr *q = realloc(h, total);
    if (!q) return NULL;
    q->map = 0;
    q->size = bytes;
    return q + 1;
}

void *on_pages_realloc(void *p, size_t bytes) { return pages_realloc(p, bytes, 0); }

/* on_pages_calloc, huge as pages_realloc's. */
static void *pages_calloc(size_t n, size_t elem, int huge)
{
    if (elem && n > (SIZE_MAX / 2) / elem) return NULL;
    void *p = pages_realloc(NULL, n * elem, huge);
    if (p && !((pages_hdr *)p - 1)->map) memset(p, 0, n * elem); /* (a new mapping is zero pages) */
    return p;
}

void *on_pages_calloc(size_t n, size_t elem) { return pages_calloc(n, elem, 0); }

void on_pages_free(void *p)
{
    if (!p) return;
    pages_hdr *h = (pages_hdr *)p - 1;
#if PAGES_MAP
    if (h->map) {
        munmap(h, pages_len(h));
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

/* ---- the pool's arena ------------------------------------------------------------------------ */

/* A pool that grows to ARENA_FROM nodes' room (or its small map to ARENA_FROM_MAP slots: at its 1,025th node and
 * its 4,097th) moves its arrays into one huge page of its own, its arena (PAGES_HUGE bytes, pages_map's huge
 * mapping): the small map first (at its header's end: the arena is the small map's mapping, bit 1 of its header),
 * then the node array, the heap, hf and hpos, each with room for ARENA_NODES nodes (the small map's most,
 * ON_POOL_SMALL_MAP slots, is 2 * ARENA_NODES). Growing within it moves nothing and maps nothing: a search that
 * grew a cut pool (1,024 nodes) to 12,000 nodes faulted 395 pages of 4 KB (the node array's doublings by
 * mremap, the small map made anew at each), 13-21 us each on this VM (2 MB page by page: 6.5 ms, 20 ms at load
 * 10), inside one or two of its steps; in the arena 13 (one of them the huge page: 0.17 ms, 0.4 at load 10,
 * /work/scratch/s31/pf2.c). Past ARENA_NODES the node arrays leave it for mappings of their own, and the small
 * map too (the big map has its own anyway). It is held whole (2 MB, on_pool_bytes) where the arrays it holds
 * took 0.2-1.8 MB, so the cut (pool_trim) gives it back after ON_POOL_TRIM_ARENA small searches in a row, not
 * ON_POOL_TRIM_AFTER (re-made in one fault). Measured in the streamed runs (docs/benchmarks.md, session 31,
 * h31huge): entered at 8,192 nodes instead, the ~150 faults before it stayed and the cuts came 4 times as
 * often (more faults than before, 100 / ms 2 15 -> 45-62 frames over); at 2,048 cut after 16, the queries held
 * 8.8 MB (3.5 before; with 1-2 MB arrays rounded up to a huge page). Without transparent huge pages (PAGES_THP
 * 0) there is no arena. */
#define ARENA_NODES ((size_t)ON_POOL_SMALL_MAP / 2)
#define ARENA_FROM ((size_t)2048)
#define ARENA_FROM_MAP ((size_t)8192)
#define ARENA_SMALL sizeof(pages_hdr)
#define ARENA_NODES_AT (ARENA_SMALL + (size_t)ON_POOL_SMALL_MAP * sizeof(on_mslot))
#define ARENA_HEAP_AT (ARENA_NODES_AT + ARENA_NODES * sizeof(on_snode))
#define ARENA_HF_AT (ARENA_HEAP_AT + ARENA_NODES * sizeof(uint32_t))
#define ARENA_HPOS_AT (ARENA_HF_AT + ARENA_NODES * sizeof(double))
#define ARENA_END (ARENA_HPOS_AT + ARENA_NODES * sizeof(int32_t))
_Static_assert(ARENA_END <= PAGES_HUGE, "a pool's arena holds its arrays");

/* The pool's arena (its first byte), or NULL when it has none. */
static char *pool_arena(const on_nodepool *p)
{
    if (!p->small) return NULL;
    pages_hdr *h = (pages_hdr *)p->small - 1;
    return h->map & 2 ? (char *)h : NULL;
}

static int in_arena(const on_nodepool *p, const void *x)
{
    const char *a = pool_arena(p), *c = x;
    return a && c >= a && c < a + PAGES_HUGE;
}

/* Move the pool's arrays (the node arrays unless past ARENA_NODES, the small map) into a new arena, their
 * contents kept; -1 when there is no memory or no arena here (nothing changed). */
static int arena_enter(on_nodepool *p)
{
#if PAGES_THP
    if (pool_arena(p) || p->smallmax > ON_POOL_SMALL_MAP) return -1;
    char *a = pages_map(PAGES_HUGE, 1);
    if (!a) return -1;
    pages_hdr *h = (pages_hdr *)a;
    h->map = PAGES_HUGE | 3;
    h->size = PAGES_HUGE - sizeof *h;
    on_mslot *sm = (on_mslot *)(a + ARENA_SMALL);
    memcpy(sm, p->small, (p->smallmask + 1) * sizeof *sm);
    if (p->map == p->small) p->map = sm;
    on_pages_free(p->small);
    p->small = sm;
    if (p->nodecap <= ARENA_NODES) {
        on_snode *n = (on_snode *)(a + ARENA_NODES_AT);
        uint32_t *hp = (uint32_t *)(a + ARENA_HEAP_AT);
        double *hf = (double *)(a + ARENA_HF_AT);
        int32_t *pos = (int32_t *)(a + ARENA_HPOS_AT);
        memcpy(n, p->nodes, p->nnodes * sizeof *n);
        memcpy(hp, p->heap, p->nheap * sizeof *hp);
        memcpy(hf, p->hf, p->nnodes * sizeof *hf);
        memcpy(pos, p->hpos, p->nnodes * sizeof *pos);
        on_pages_free(p->nodes);
        on_pages_free(p->heap);
        on_pages_free(p->hf);
        on_pages_free(p->hpos);
        p->nodes = n;
        p->heap = hp;
        p->hf = hf;
        p->hpos = pos;
    }
    return 0;
#else
    (void)p;
    return -1;
#endif
}

/* One of the pool's node arrays (old, its first `keep` entries of elem bytes kept) in room for cap entries:
 * out of the arena into a mapping or block of its own when it is in it (NULL when out of memory). */
static void *pool_array(on_nodepool *p, void *old, size_t keep, size_t cap, size_t elem)
{
    if (!in_arena(p, old)) return pages_realloc(old, cap * elem, 1);
    void *a = pages_realloc(NULL, cap * elem, 1);
    if (a) memcpy(a, old, keep * elem);
    return a;
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
    if (!in_arena(p, p->nodes)) { /* (the arena's arrays go with it, the small map's mapping) */
        on_pages_free(p->nodes);
        on_pages_free(p->heap);
        on_pages_free(p->hf);
        on_pages_free(p->hpos);
    }
    on_pages_free(p->big);
    on_pages_free(p->small);
    memset(p, 0, sizeof *p);
}

size_t on_pool_bytes(const on_nodepool *p)
{
    /* (an arena counts whole: its huge page is resident whole once touched) */
    if (pool_arena(p))
        return PAGES_HUGE + (p->big ? p->bigmask + 1 : 0) * sizeof(on_mslot) +
               (in_arena(p, p->nodes) ? 0 : p->nodecap * (sizeof *p->nodes + sizeof *p->heap + sizeof *p->hf + sizeof *p->hpos));
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
 * A failure to shrink leaves that array larger (nodecap is the least of them). */
static void pool_trim(on_nodepool *p)
{
    size_t keep = ON_POOL_KEEP_NODES;
    while (keep < 2 * p->nnodes) keep <<= 1;
    if (keep > p->max_nodes) keep = p->max_nodes;
    if (8 * p->nnodes >= p->nodecap || keep >= p->nodecap) {
        p->small_runs = 0;
        return;
    }
    if (++p->small_runs < (pool_arena(p) ? ON_POOL_TRIM_ARENA : ON_POOL_TRIM_AFTER)) return;
    p->small_runs = 0;
    void *a;
    /* (out of the arena, if they are in one: the search to come starts empty, nothing to keep) */
    if ((a = pool_array(p, p->nodes, 0, keep, sizeof *p->nodes))) p->nodes = a;
    if ((a = pool_array(p, p->heap, 0, keep, sizeof *p->heap))) p->heap = a;
    if ((a = pool_array(p, p->hf, 0, keep, sizeof *p->hf))) p->hf = a;
    if ((a = pool_array(p, p->hpos, 0, keep, sizeof *p->hpos))) p->hpos = a;
    p->nodecap = keep;
    on_pages_free(p->big);
    p->big = NULL;
    p->bigmask = 0;
    size_t slots = ON_POOL_FIRST_MAP;
    while (slots < 2 * keep) slots <<= 1;
    int arena = pool_arena(p) != NULL, held = in_arena(p, p->nodes) || in_arena(p, p->heap) || in_arena(p, p->hf) ||
                                                in_arena(p, p->hpos); /* (a failure above: the arena stays) */
    if ((slots < p->smallmask + 1 || (arena && !held)) && (a = on_pages_calloc(slots, sizeof *p->small))) { /* (zero: empty) */
        on_pages_free(p->small);
        p->small = a;
        p->smallmask = slots - 1;
    }
}

void on_pool_reset(on_nodepool *p)
{
    pool_trim(p);
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
        if (pool_arena(p) || (2 * cap >= ARENA_FROM_MAP && arena_enter(p) == 0)) {
            /* (in the arena, room for it there: its slots emptied by a new stamp for this search, the nodes indexed
             * again below with it, instead of cleared: a fresh mapping's zero pages cost no instruction, a memset of
             * the 2 * cap slots did, ~200 a query in bench-query-ir; after 2^32 stamps both maps cleared once) */
            if (++p->stamp == 0) {
                memset(p->small, 0, 2 * cap * sizeof *p->small);
                if (p->big) memset(p->big, 0, (p->bigmask + 1) * sizeof *p->big);
                p->stamp = 1;
            }
        } else {
            if (!(m = pages_calloc(2 * cap, sizeof *m, 1))) return -1;
            on_pages_free(p->small);
            p->small = m;
        }
        p->smallmask = 2 * cap - 1;
        p->map = p->small;
        p->mapmask = p->smallmask;
    } else {
        if (p->map == p->big && cap >= p->bigmax) return 0; /* the pool is full first */
        if (!p->big || p->bigmask + 1 <= cap) {
            size_t want = 2 * cap < p->bigmax ? 2 * cap : p->bigmax;
            if (!(m = pages_calloc(want, sizeof *m, 1))) return -1;
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
    if (cap >= ARENA_FROM && cap <= ARENA_NODES && !pool_arena(p)) (void)arena_enter(p); /* (else as before) */
    if (in_arena(p, p->nodes) && cap <= ARENA_NODES) { /* (room there already) */
        p->nodecap = cap;
        fast_limit(p);
        return 0;
    }
    size_t n0 = p->nnodes, h0 = p->nheap;
    on_snode *n = pool_array(p, p->nodes, n0, cap, sizeof *n);
    if (!n) return -1;
    uint32_t *h = pool_array(p, p->heap, h0, cap, sizeof *h);
    double *hf = h ? pool_array(p, p->hf, n0, cap, sizeof *hf) : NULL;
    int32_t *hpos = hf ? pool_array(p, p->hpos, n0, cap, sizeof *hpos) : NULL;
    if (in_arena(p, p->nodes)) { /* (out of the arena: all four or none) */
        if (!hpos) {
            on_pages_free(n);
            on_pages_free(h);
            on_pages_free(hf);
            return -1;
        }
        /* the small map leaves it too, for a mapping of its own (its pages untouched until a search uses it
         * again): the arena is not kept for it alone while the pool stays this large. This search is in the big
         * map by now (past ARENA_NODES nodes), so the small map holds no live slot; else it is copied. (No
         * memory: the arena stays, with the small map in it.) */
        size_t slots = p->smallmask + 1;
        on_mslot *sm = pages_calloc(slots, sizeof *sm, 1);
        if (sm) {
            if (p->map == p->small) {
                memcpy(sm, p->small, slots * sizeof *sm);
                p->map = sm;
            }
            on_pages_free(p->small);
            p->small = sm;
        }
    } else { /* (the larger arrays are kept; nodecap stays) */
        p->nodes = n;
        if (!h) return -1;
        p->heap = h;
        if (!hf) return -1;
        p->hf = hf;
        if (!hpos) return -1;
    }
    p->nodes = n;
    p->heap = h;
    p->hf = hf;
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
            if (p->nnodes == p->nodecap) {
                if (nodes_enlarge(p) != 0) return -2;
                i = on_pool_home(p, key); /* (the small map may have moved into the arena: the probe again) */
                continue;
            }
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
