/*
 * testrng.h -- the C tests' random numbers: xorshift64, rnd() in [0, 1) and rndi(n) in 0 .. n-1.
 * A test file defines TESTRNG_SEED before including it, so each file's random scenes are its own and
 * the same on every run.
 */
#ifndef OCTONAV_TESTRNG_H
#define OCTONAV_TESTRNG_H

#include <stdint.h>

#ifndef TESTRNG_SEED
#error "define TESTRNG_SEED before including testrng.h"
#endif

static uint64_t rng_state = TESTRNG_SEED;

static inline double rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static inline int rndi(int n) { return (int)(rnd() * n); }

#endif
