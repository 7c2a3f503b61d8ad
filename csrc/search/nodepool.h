/*
 * nodepool.h -- a search's node pool, node map and open list (internal; the counterpart of Detour's
 * dtNodePool / dtNodeQueue). Knows nothing of trees or graphs: a node is keyed by an on_cell (a
 * tile and a code, whatever the graph means by them) and carries g, f, a point and a parent.
 *
 * Memory follows the search: the node array, the heap (with hf and hpos) and the maps start small (ON_POOL_FIRST_NODES
 * nodes, ON_POOL_FIRST_MAP slots) and double when a search needs more, up to max_nodes nodes (maps at
 * most half full); they never shrink, so once a query's searches have met their largest size a search
 * allocates nothing. The maps need no clearing: a slot is live only when stamped with this search's
 * number, so a new search costs nothing and a probe never reads the (cold) node array to tell live
 * slots from stale ones; after 2^32 searches the stamps are cleared once. Most searches stay in the
 * small map (at most ON_POOL_SMALL_MAP slots), which fits in cache; one that outgrows it moves to
 * the big map once (made or doubled as needed). Growing moves the node array: a pointer into it is
 * valid until the next on_pool_get.
 */
#ifndef OCTONAV_NODEPOOL_H
#define OCTONAV_NODEPOOL_H

#include "octonav_search.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define ON_POOL_SMALL_MAP 32768 /* slots: 512 KB at most, for searches of up to 16384 nodes */
#define ON_POOL_FIRST_NODES 256 /* nodes (and heap entries) a pool starts with */
#define ON_POOL_FIRST_MAP 512   /* slots the small map starts with */
#define ON_POOL_KEEP_NODES 1024 /* nodes a pool keeps room for after a search much smaller than its room
                                 * (on_pool_reset) */
#ifndef ON_POOL_TRIM_AFTER
#define ON_POOL_TRIM_AFTER 16   /* such resets in a row before it is cut (a search resets the pool at its
                                 * start, again when it runs from the goal's end or turns round; < 2^16) */
#endif
_Static_assert(ON_POOL_TRIM_AFTER > 0 && ON_POOL_TRIM_AFTER < 65536, "ON_POOL_TRIM_AFTER: 1..65535");

typedef struct on_snode {
    on_cell cell;
    double g, f;
    double pos[3];   /* the node's point, where the search entered it (set with g) */
    int32_t parent;
    uint8_t closed;
    uint8_t covered;  /* (the search's adjacency loop) bit f: face f of the node's cell is covered whole by one
                      * expanded (closed) node's cell, so its one neighbour there is closed */
    int8_t pface;    /* the graph's face of the node's cell its parent covers whole (-1: none, or unknown) */
    uint32_t aux;    /* the graph's own number for the node's cell (UINT32_MAX when new: unknown) */
} on_snode;

typedef struct on_mslot {
    uint64_t key;
    uint32_t idx;
    uint32_t stamp;
} on_mslot;

typedef struct on_nodepool {
    on_snode *nodes;
    size_t nnodes, max_nodes;
    size_t nodecap;       /* entries of nodes and heap (<= max_nodes) */
    on_mslot *map;        /* the map in use: small or big */
    size_t mapmask;
    unsigned mapshift;    /* 64 - log2(slots of the map in use): a key's home is its Fibonacci hash's top bits */
    size_t fastmax;       /* on_pool_get's inline probe while nnodes is below: the map in use stays at
                           * most half full and the node array has room (min(slots / 2, nodecap)) */
    on_mslot *small, *big; /* big: NULL until a search outgrows the small map */
    size_t smallmask, bigmask;
    size_t smallmax, bigmax; /* the slots each may grow to (bigmax: 2 * max_nodes, a power of two) */
    uint32_t stamp;       /* this search's number (slots of other numbers are empty) */
    uint32_t *heap;       /* the open list: node indices, a binary heap */
    double *hf;           /* hf[n]: node n's f while it is in the heap (see on_pool_push_new) */
    int32_t *hpos;        /* hpos[n]: node n's position in the heap, -1 when not in it (unset for a node
                           * on_pool_make_bare made that was never pushed: the search ended on it) */
    size_t nheap;
    uint32_t trim_keep;   /* (held) the nodes a due cut keeps room for (0: none due; <= max_nodes <= 2^30) */
    uint16_t small_runs;  /* resets in a row after a search that used under an eighth of the node array
                           * (on_pool_reset) */
    uint16_t trim_held;   /* on_pool_reset leaves a due cut to on_pool_trim (on_pool_hold_trim) */
} on_nodepool;

/* A pool for up to max_nodes nodes (>= 2), starting small; -1 on allocation failure (free it with
 * on_pool_free). */
int on_pool_init(on_nodepool *p, size_t max_nodes);
void on_pool_free(on_nodepool *p);
/* Empty the pool and the heap for a new search (a new stamp); a pool reset ON_POOL_TRIM_AFTER times in
 * a row after searches that each used under an eighth of its nodes is cut to twice the last one's
 * first (at least ON_POOL_KEEP_NODES). */
void on_pool_reset(on_nodepool *p);
/* Held (hold 1), on_pool_reset only notes a cut that is due, and on_pool_trim makes it: giving pages back
 * to the system costs the caller a TLB shootdown of every CPU the process ran on (0.2-0.4 ms for a
 * 1 MB pool on this machine's VM, up to 3.75 ms with the process's other thread on the other vCPU), so
 * a caller with a frame to keep chooses when. */
void on_pool_hold_trim(on_nodepool *p, int hold);
/* Make a cut noted as due (held): the pool emptied (its last search's nodes gone: *emptied 1) and cut
 * as on_pool_reset would have; the bytes given back. Nothing (0, *emptied 0) when none is due, or when
 * the last search, not yet seen by a reset, used the room again (the cut is then dropped). */
size_t on_pool_trim(on_nodepool *p, int *emptied);
/* The nodes a search can still make before the map or the node array must grow (0 when due; SIZE_MAX
 * when both are as large as they get: max_nodes nodes). */
static inline size_t on_pool_room(const on_nodepool *p)
{
    if (p->nodecap >= p->max_nodes && 2 * p->max_nodes <= p->mapmask + 1) return SIZE_MAX;
    return p->fastmax > p->nnodes ? p->fastmax - p->nnodes : 0;
}
/* Grow the map and the node array now for `room` more nodes (up to max_nodes), as the search's own
 * growth would (the same doublings, every node of the search indexed again): a caller with a deadline
 * pays it where it chooses, not in whichever expansion reaches the limit. 0, or -1 on allocation
 * failure (what grew stays grown). */
int on_pool_grow_ahead(on_nodepool *p, size_t room);
/* Index of the node for cell c, creating it when new (*created = 1; g = f = inf, no parent, open,
 * not in the heap, pface -1, covered 0, aux UINT32_MAX). -1 when the pool is full (max_nodes); -2 when growing it failed (no memory; the
 * pool is unchanged). */
int32_t on_pool_get_slow(on_nodepool *p, on_cell c, int *created);
/* (the probe inline, and a new node made at the empty slot it ends on: a search asks for every
 * neighbour entry; a map or node array to enlarge, or a full pool, is on_pool_get_slow's) */
static inline uint64_t on_pool_key(on_cell c) { return (uint64_t)c.tile << 32 | c.code; }
static inline size_t on_pool_home(const on_nodepool *p, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> p->mapshift);
}
/* Make node nnodes for cell c (key `key`) at empty slot s (there is room for it). */
static inline int32_t on_pool_make(on_nodepool *p, on_mslot *s, on_cell c, uint64_t key)
{
    on_snode *n = &p->nodes[p->nnodes];
    n->cell = c;
    n->g = INFINITY;
    n->f = INFINITY;
    n->parent = -1;
    p->hpos[p->nnodes] = -1;
    n->closed = 0;
    n->pface = -1;
    n->covered = 0;
    n->aux = UINT32_MAX;
    s->key = key;
    s->idx = (uint32_t)p->nnodes;
    s->stamp = p->stamp;
    return (int32_t)p->nnodes++;
}
/* on_pool_probe once the caller made sure of the room (nnodes below fastmax for every node it may make
 * before its next check): -1 or 1 as on_pool_probe. */
static inline int on_pool_probe_room(const on_nodepool *p, on_cell c, on_mslot **slot)
{
    uint64_t key = on_pool_key(c);
    for (size_t i = on_pool_home(p, key);; i = (i + 1) & p->mapmask) {
        on_mslot *s = &p->map[i];
        *slot = s;
        if (s->stamp != p->stamp) return -1;
        if (s->key == key) return 1;
    }
}
/* (the search's loop over a cell's adjacency list) The inline probe alone, when it applies (else 0:
 * the map or the node array is due to grow, use on_pool_get): 1 and *slot the slot of cell c's node
 * (its index: (*slot)->idx), or -1 and *slot the empty slot c's node belongs at (on_pool_make_bare
 * makes it there). */
static inline int on_pool_probe(const on_nodepool *p, on_cell c, on_mslot **slot)
{
    if (p->nnodes >= p->fastmax) return 0;
    return on_pool_probe_room(p, c, slot);
}
/* Make node nnodes for cell c at the empty slot on_pool_probe found, with its graph number `aux`, open,
 * its g, f, point, parent, pface, covered and heap position unset: the caller sets them all before anything
 * reads them (a new node is always reached: on_pool_make's defaults would be overwritten at once),
 * the position by pushing it (on_pool_push_f) unless the search ends there. */
static inline int32_t on_pool_make_bare(on_nodepool *p, on_mslot *s, on_cell c, uint32_t aux)
{
    on_snode *n = &p->nodes[p->nnodes];
    n->cell = c;
    n->closed = 0;
    n->aux = aux;
    s->key = on_pool_key(c);
    s->idx = (uint32_t)p->nnodes;
    s->stamp = p->stamp;
    return (int32_t)p->nnodes++;
}
static inline int32_t on_pool_get(on_nodepool *p, on_cell c, int *created)
{
    if (p->nnodes < p->fastmax) { /* (fastmax <= nodecap <= max_nodes) */
        uint64_t key = on_pool_key(c);
        for (size_t i = on_pool_home(p, key);; i = (i + 1) & p->mapmask) {
            on_mslot *s = &p->map[i];
            if (s->stamp != p->stamp) {
                *created = 1;
                return on_pool_make(p, s, c, key);
            }
            if (s->key == key) {
                *created = 0;
                return (int32_t)s->idx;
            }
        }
    }
    return on_pool_get_slow(p, c, created);
}
/* Restore the heap's order around node n, in the heap, after its f changed (up or down). */
void on_pool_update(on_nodepool *p, uint32_t n);
/* The heap's sifts read and write two small arrays indexed by node instead of the 64-byte nodes: hf,
 * a copy of each node's f made when it enters the heap or its f changes (on_pool_push_new,
 * on_pool_update, on_pool_heapify, through which every change of an f in the heap goes), and hpos, its
 * position. A level then costs a compare through hf and a store to hpos, each one instruction with no
 * address arithmetic; a node (its g) is read only on a tie of f. The heap itself, its order and so
 * every pop are the same as when the sifts read the nodes. Measured with callgrind (make
 * bench-query-ir): DC1 375,823 -> 372,266 instructions a query, A1 420,893 -> 416,923; with hpos
 * alone (f read from the nodes) 384,535 and 429,074, worse. Keys moved with the entries (f and g
 * beside each index) were worse too (408,394 on DC1, from 390,754): a move then copies 16 bytes and
 * the position store needs the node's address.
 * on_pool_push_f: insert node n, in no heap, into the heap (on_pool_push_or_update's push), f its f
 * (nodes[n].f, just set by the caller: passed in, the push reads no node but on a tie of f; search.c's
 * adjacency loop, 490 instructions a query on DC1, 770 on A1). A node of lower f than the top's goes
 * to the root without comparisons (every entry on its way has an f no lower than the top's, so the
 * climb would pass them all): one push in five on DC1, 6.4 levels each. Measured with callgrind (make
 * bench-query-ir, instructions a query): DC1 330,004 -> 328,218, Complex 330,312 -> 329,008, A1
 * 362,677 -> 360,795. */
static inline void on_pool_push_f(on_nodepool *p, uint32_t n, double f)
{
    uint32_t *h = p->heap;
    const on_snode *nodes = p->nodes;
    double *hf = p->hf;
    int32_t *hpos = p->hpos;
    hf[n] = f;
    size_t i = p->nheap++;
    if (i > 0 && f < hf[h[0]]) { /* (below the top: to the root, each entry on the way a level down) */
        for (; i > 0; i = (i - 1) / 2) {
            uint32_t m = h[(i - 1) / 2];
            h[i] = m;
            hpos[m] = (int32_t)i;
        }
        h[0] = n;
        hpos[n] = 0;
        return;
    }
    while (i > 0) { /* (on ties of f the larger g goes first: nodepool.c's heap order) */
        size_t par = (i - 1) / 2;
        uint32_t m = h[par];
        double y = hf[m];
        if (!(f < y || (__builtin_expect(f == y, 0) && nodes[n].g > nodes[m].g))) break;
        h[i] = m;
        hpos[m] = (int32_t)i;
        i = par;
    }
    h[i] = n;
    hpos[n] = (int32_t)i;
}
/* The same, f read from the node. */
static inline void on_pool_push_new(on_nodepool *p, uint32_t n) { on_pool_push_f(p, n, p->nodes[n].f); }
/* Insert node n into the heap, or restore the order around it after its f changed (up or down). A
 * new node's sift up is inline: a search pushes every node it reaches, and with weight above 1 the
 * newest, nearest the goal, mostly climb a few levels. */
static inline void on_pool_push_or_update(on_nodepool *p, uint32_t n)
{
    if (p->hpos[n] >= 0) {
        on_pool_update(p, n);
        return;
    }
    on_pool_push_new(p, n);
}
/* Heap order: lower f first; on ties, larger g (deeper nodes) first (a and b in the heap: f from hf). */
/* (ties of f expected rare, here and in on_pool_push_f's climb: as gcc's profile-guided build decides, make
 * bench-query-ir -0.8 k a query on Complex; see search.c, h31ir5) */
static inline int on_pool_less(const on_nodepool *p, uint32_t a, uint32_t b)
{
    double x = p->hf[a], y = p->hf[b];
    return x < y || (__builtin_expect(x == y, 0) && p->nodes[a].g > p->nodes[b].g);
}
/* Remove and return the node of lowest f (ties: the larger g), the heap's top, removed bottom-up: the hole left at the root goes down the path of smaller children
 * to a leaf, and the last entry sifts up from there. That is the heap a sift down of the last entry from the root makes (the
 * entry ends below the path's entries it is not less than, on either way; the path is the same), with
 * one comparison a level instead of two, as the last entry mostly belongs near the bottom. Inline: the
 * search pops once an expansion. The heap must not be empty. */
static inline uint32_t on_pool_pop(on_nodepool *p)
{
    uint32_t top = p->heap[0];
    p->hpos[top] = -1;
    size_t n = --p->nheap;
    if (n == 0) return top;
    uint32_t v = p->heap[n], *h = p->heap;
    size_t i = 0, c;
    while ((c = 2 * i + 2) < n) { /* (two children: c - 1 and c) */
        if (!on_pool_less(p, h[c], h[c - 1])) c--;
        h[i] = h[c];
        p->hpos[h[i]] = (int32_t)i;
        i = c;
    }
    if (c == n) { /* (an only child, c - 1, the last entry) */
        h[i] = h[c - 1];
        p->hpos[h[i]] = (int32_t)i;
        i = c - 1;
    }
    while (i > 0) {
        size_t par = (i - 1) / 2;
        if (on_pool_less(p, h[par], v)) break;
        h[i] = h[par];
        p->hpos[h[i]] = (int32_t)i;
        i = par;
    }
    h[i] = v;
    p->hpos[v] = (int32_t)i;
    return top;
}

/* Rebuild the heap's order after every node's f changed. */
void on_pool_heapify(on_nodepool *p);
/* Bytes the pool holds now (nodes, heap, hf, hpos and maps). */
size_t on_pool_bytes(const on_nodepool *p);

/* Big tables in pages of their own (issue 31 goal 3): an array of ON_PAGES_MIN bytes or more is given
 * its own anonymous mapping, so that freeing it gives its pages back to the system (munmap) and its
 * untouched pages are never resident; a smaller one is malloc'd. The library's long-lived tables (node
 * pools, lazy box sets' rooms and block records) use it instead of leaving glibc's dynamic mmap
 * threshold to place them: once a mapped block of n bytes is freed, glibc serves blocks below n from
 * its heap, where a freed table stays resident as a hole between long-lived blocks (session 26: 8 MB
 * of the heap free at the end of the seed's run). The host's allocator settings are left alone
 * (no mallopt). An array from on_pages_realloc / on_pages_calloc / on_pages_grow goes back with
 * on_pages_free only (a 16-byte header before it says which it is); NULL when out of memory (the
 * array left as it was). Without mmap (not a POSIX system) every one is malloc'd. */
#define ON_PAGES_MIN ((size_t)128 * 1024)
void *on_pages_realloc(void *p, size_t bytes);
void *on_pages_calloc(size_t n, size_t elem); /* (zeroed) */
void on_pages_free(void *p);
/* on_grow's doubling (from 256 elements) on an on_pages array: 0, or -1 on allocation failure. */
int on_pages_grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
