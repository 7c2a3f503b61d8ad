/*
 * util.h -- small helpers shared by the C core (internal): scalar and 3-vector maths, one way to grow
 * an array, and the hash finalisers of the hash maps (node tables, the search's node map).
 * Everything here is static inline and touches no tree; nav <-> world conversion, which needs the
 * tree's parameters, is on_to_nav / on_to_world in tree.h.
 */
#ifndef OCTONAV_UTIL_H
#define OCTONAV_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline double on_minf(double a, double b) { return a < b ? a : b; }
static inline double on_maxf(double a, double b) { return a > b ? a : b; }
static inline double on_clampf(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

static inline double on_dist3(const double a[3], const double b[3])
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Make room for `need` elements of `elem` bytes in the array *p of capacity *cap (in elements):
 * doubles the capacity (from 256 when it is 0) until it holds them. 0 on success, -1 on allocation
 * failure (the array and *cap left as they were). */
static inline int on_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < need) {
        if (nc > ((size_t)-1 / 2) / (elem ? elem : 1)) return -1;
        nc *= 2;
    }
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

/* murmur3's 64-bit finaliser (tile << 32 | code keys of the search's node map). */
static inline uint64_t on_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
