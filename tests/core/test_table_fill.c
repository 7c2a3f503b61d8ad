/*
 * test_table_fill.c -- on_table_fill (table.c), a tile's decode placing its nodes in home order: the
 * table it makes answers every lookup as one built by on_table_insert does (every key with its value,
 * absent keys absent), also for keys whose home is at the end (placed past it, wrapped around), and
 * stays a valid Robin Hood table for removals and inserts after; into a table that is not empty or
 * has bounds it inserts one at a time.
 */
#include "octonav.h"
#include "codes.h"
#include "table.h"
#include "minitest.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_s = 12345;
static uint32_t rnd(void)
{
    rng_s = rng_s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_s >> 33);
}

/* A random valid-looking code (bit 31 clear, never ON_CODE_NONE) not in keys[0 .. n). */
static uint32_t fresh(const on_table *have)
{
    for (;;) {
        uint32_t k = rnd() & 0x7fffffffu;
        if (on_table_get(have, k) < 0) return k;
    }
}

/* Every key of keys[] found with its value in t and in the reference r, and `probes` absent keys in
 * neither; -> the number of disagreements. */
static int agree(const on_table *t, const on_table *r, const uint32_t *keys, const uint8_t *vals, uint32_t n,
                 int probes)
{
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) bad += on_table_get(t, keys[i]) != vals[i] || on_table_get(r, keys[i]) != vals[i];
    for (int i = 0; i < probes; i++) {
        uint32_t k = rnd() & 0x7fffffffu;
        bad += on_table_get(t, k) != on_table_get(r, k);
    }
    return bad;
}

/* Fill n random keys, compare with inserts, then remove every other key and insert as many new ones. */
static void check_fill(uint32_t n, int wrap)
{
    on_table t, r, cap_of;
    on_table_init(&t);
    on_table_init(&r);
    on_table_init(&cap_of);
    uint32_t *keys = malloc((n + 1) * sizeof *keys);
    uint8_t *vals = malloc(n + 1);
    CHECK(keys && vals);
    CHECK_EQ_INT(on_table_reserve(&cap_of, n), 0); /* the capacity on_table_fill will reserve */
    uint32_t cap = cap_of.cap, at_end = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = fresh(&r);
        /* wrap: up to 40 keys homed in the last 8 slots (they run past the end and wrap around) */
        while (wrap && i < 40 && cap > 8 && on_table_home(k, cap) < cap - 8) k = fresh(&r);
        if (cap > 8 && on_table_home(k, cap) >= cap - 8) at_end++;
        keys[i] = k;
        vals[i] = (uint8_t)(1 + rnd() % 254);
        CHECK_EQ_INT(on_table_insert(&r, k, vals[i]), 0);
    }
    CHECK_EQ_INT(on_table_fill(&t, keys, vals, n), 0);
    CHECK_EQ_INT((int)t.count, (int)n);
    CHECK(n == 0 || t.cap == cap);
    if (wrap && cap > 8) CHECK(at_end >= (n < 40 ? n : 40));
    CHECK_EQ_INT(agree(&t, &r, keys, vals, n, 2000), 0);
    /* removals (backward shift) and inserts keep both tables answering alike */
    for (uint32_t i = 0; i < n; i += 2) {
        CHECK_EQ_INT(on_table_remove(&t, keys[i]), 1);
        CHECK_EQ_INT(on_table_remove(&r, keys[i]), 1);
        vals[i] = 0; /* (absent now: get gives -1, compared below) */
    }
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        int want = i % 2 == 0 ? -1 : vals[i];
        bad += on_table_get(&t, keys[i]) != want;
    }
    CHECK_EQ_INT(bad, 0);
    for (uint32_t i = 0; i < n; i += 2) {
        keys[i] = fresh(&r);
        vals[i] = (uint8_t)(1 + rnd() % 254);
        CHECK_EQ_INT(on_table_insert(&r, keys[i], vals[i]), 0);
        CHECK_EQ_INT(on_table_insert(&t, keys[i], vals[i]), 0);
    }
    CHECK_EQ_INT((int)t.count, (int)r.count);
    CHECK_EQ_INT(agree(&t, &r, keys, vals, n, 2000), 0);
    on_table_free(&t);
    on_table_free(&r);
    on_table_free(&cap_of);
    free(keys);
    free(vals);
}

/* Into a table that holds keys already, or has bounds, the keys go in one at a time (both answer). */
static void test_not_empty(void)
{
    on_table t;
    on_table_init(&t);
    CHECK_EQ_INT(on_table_insert(&t, on_code_make(0, 0, 0, 9), 7), 0);
    uint32_t keys[3] = {on_code_make(0, 0, 0, 8), on_code_make(256, 0, 0, 8), on_code_make(0, 256, 0, 8)};
    uint8_t vals[3] = {1, 2, 3};
    CHECK_EQ_INT(on_table_fill(&t, keys, vals, 3), 0);
    CHECK_EQ_INT((int)t.count, 4);
    CHECK_EQ_INT(on_table_get(&t, on_code_make(0, 0, 0, 9)), 7);
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(on_table_get(&t, keys[i]), vals[i]);
    CHECK_EQ_INT(on_table_fill(&t, keys, vals, 0), 0);
    CHECK_EQ_INT((int)t.count, 4);
    on_table_free(&t);
}

static void run_all(void)
{
    uint32_t sizes[] = {0, 1, 2, 7, 100, 1000, 20000, 110000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        check_fill(sizes[i], 0);
        check_fill(sizes[i], 1);
    }
    test_not_empty();
}

TEST_MAIN("table_fill", run_all())
