/*
 * losmap_arrays.c -- a losmap build's node and brick arrays (losmap.h, on_losarr_*): sized once, 64 KB or
 * more in an anonymous mapping of their own (reserved, faulted in as written).
 */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#endif
#include "losmap.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(MAP_ANONYMOUS)
#define LOS_MAP 1
#else
#define LOS_MAP 0
#endif

/* The build's node and brick arrays (issue 31 goal 1, streamed frames): sized once at build_begin from
 * the node table's count (every node but the top and every brick is a distinct stored cube: nnode <=
 * count + 1, nbrick <= count), so that no on_tree_los_step slice grows one (session 28: one realloc of
 * the node array to 256 KB took 7.9 ms of the game thread's CPU). An array of LOSARR_PAGES bytes or more
 * is its own anonymous mapping: reserved, not touched (a page is faulted in when the build first
 * writes it, ~1 us, spread over the slices; on_tree_los_step keeps them for its next build); a finished
 * build is copied out at its size (malloc'd, on_losbuild_copy); a smaller one is malloc'd. Without mmap
 * every one is malloc'd. */
#define LOSARR_PAGES ((size_t)64 * 1024)

#if LOS_MAP
static size_t page_round(size_t bytes)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + pg - 1) / pg * pg;
}
#endif

/* n elements of elem bytes (n >= 1); *map: the bytes mapped, or 0 (malloc'd). NULL: out of memory. */
void *on_losarr_alloc(size_t n, size_t elem, size_t *map)
{
    *map = 0;
    if (n > SIZE_MAX / 2 / elem) return NULL;
    size_t bytes = n * elem;
#if LOS_MAP
    if (bytes >= LOSARR_PAGES) {
        size_t len = page_round(bytes);
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            *map = len;
            return m;
        }
        return NULL;
    }
#endif
    return malloc(bytes);
}

void on_losarr_free(void *p, size_t map)
{
    if (!p) return;
#if LOS_MAP
    if (map) {
        munmap(p, map);
        return;
    }
#endif
    (void)map;
    free(p);
}
