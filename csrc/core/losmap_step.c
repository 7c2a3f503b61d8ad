/*
 * losmap_step.c -- deferred losmap builds (on_tree_los_step): the tiles wanted first, each built in
 * slices of a step's work and deadline (losmap_build.h), the masks' byte budget kept by dropping the
 * least recently read tiles' losmaps.
 */
#include "losmap_build.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Deferred builds (on_tree_los_step). */

void on_tree_set_los_defer(on_tree *t, int on) { t->los_defer = on != 0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int tile_needs(const on_tree *t, uint32_t i)
{
    on_tile *tl = &((on_tree *)t)->tiles[i];
    return tl->loaded && !tl->solid && !atomic_load_explicit(&tl->los, memory_order_acquire) &&
           atomic_load_explicit(&tl->los_want, memory_order_relaxed) != 2;
}

static void unwant(on_tree *t, uint32_t i)
{
    unsigned char one = 1;
    if (atomic_compare_exchange_strong_explicit(&t->tiles[i].los_want, &one, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_fetch_sub_explicit(&t->los_wanted, 1, memory_order_relaxed);
}

/* The masks' budget (on_tree_set_los_budget). */

void on_tree_set_los_budget(on_tree *t, size_t bytes)
{
    t->los_budget_set = bytes == ON_LOS_BUDGET_NONE ? 0 : bytes == ON_LOS_BUDGET_TREE ? 2 : 1;
    t->los_budget = bytes;
    for (uint32_t i = 0; i < t->ntiles; i++) { /* (forget which tiles passed the old one) */
        unsigned char big = 2;
        atomic_compare_exchange_strong_explicit(&t->tiles[i].los_want, &big, 0, memory_order_relaxed,
                                                memory_order_relaxed);
    }
}

size_t on_tree_los_budget(const on_tree *t)
{
    if (t->los_budget_set != 2) return t->los_budget_set ? t->los_budget : ON_LOS_BUDGET_NONE;
    size_t b = sizeof *t + (size_t)t->ntiles * sizeof *t->tiles; /* (on_tree_stats' bytes) */
    for (uint32_t i = 0; i < t->ntiles; i++) b += on_table_bytes(&t->tiles[i].table);
    return (size_t)(ON_LOS_BUDGET_SHARE * (double)b);
}

/* The masks' bytes now (*keep_age: the most steps since a tile's masks were read, any tile but keep);
 * *old: a tile whose were read least recently, other than keep (UINT32_MAX: none). */
static size_t masks_now(const on_tree *t, uint32_t keep, unsigned clock, uint32_t *old, unsigned *age, size_t *k)
{
    size_t total = 0;
    *old = UINT32_MAX;
    *age = 0;
    *k = 0;
    for (uint32_t i = 0; i < t->ntiles; i++) {
        on_tile *tl = &((on_tree *)t)->tiles[i];
        const on_losmap *m = atomic_load_explicit(&tl->los, memory_order_acquire);
        if (!m) continue;
        total += m->bytes;
        ++*k;
        if (i == keep) continue;
        unsigned a = clock - atomic_load_explicit(&tl->los_used, memory_order_relaxed);
        if (*old == UINT32_MAX || a > *age) *old = i, *age = a;
    }
    return total;
}

/* Drop the least recently read tiles' masks (never keep's) until they fit budget. */
static void fit_budget(on_tree *t, size_t budget, uint32_t keep, unsigned clock, on_los_step_info *info)
{
    for (;;) {
        uint32_t old;
        unsigned age;
        size_t k;
        if (masks_now(t, keep, clock, &old, &age, &k) <= budget || old == UINT32_MAX) return;
        on_tile_losmap_drop(&t->tiles[old]);
        t->los_dropped++;
        info->dropped++;
    }
}

/* May a wanted tile's masks be built: they would fit (as big as the average kept), or some tile's have
 * not been read for ON_LOS_IDLE_STEPS calls (they make room)? */
static int may_build(const on_tree *t, size_t budget, unsigned clock)
{
    if (budget == ON_LOS_BUDGET_NONE) return 1;
    uint32_t old;
    unsigned age;
    size_t k, total = masks_now(t, UINT32_MAX, clock, &old, &age, &k);
    return (k == 0 || total + total / k <= budget) || age >= ON_LOS_IDLE_STEPS;
}

/* The next tile to build: a wanted one (lowest index), else with all the next by the scan's cursor. */
static int next_tile(on_tree *t, int all, uint32_t *out)
{
    if (atomic_load_explicit(&t->los_wanted, memory_order_relaxed) > 0)
        for (uint32_t i = 0; i < t->ntiles; i++) {
            if (!atomic_load_explicit(&t->tiles[i].los_want, memory_order_relaxed)) continue;
            if (tile_needs(t, i)) {
                *out = i;
                return 1;
            }
            unwant(t, i); /* (built since, unloaded or solid: nothing to build) */
        }
    if (!all) return 0;
    if (t->los_cursor_rev != t->revision) { /* a change may have dropped masks behind the cursor */
        t->los_cursor = 0;
        t->los_cursor_rev = t->revision;
    }
    for (; t->los_cursor < t->ntiles; t->los_cursor++)
        if (tile_needs(t, t->los_cursor)) {
            *out = t->los_cursor;
            return 1;
        }
    return 0;
}

on_status on_tree_los_step(on_tree *t, uint64_t work, double seconds, int all, on_los_step_info *info)
{
    on_los_step_info z = {0, 0, 0, 0, 0, 0};
    if (!info) info = &z;
    *info = z;
    if (t->no_los_masks) return ON_FAILURE | ON_INVALID;
    on_status st = ON_SUCCESS;
    uint64_t limit = work ? work : UINT64_MAX, used = 0;
    double deadline = seconds > 0 ? now_s() + seconds : 0;
    unsigned clock = atomic_load_explicit(&t->los_clock, memory_order_relaxed) + 1u;
    atomic_store_explicit(&t->los_clock, clock, memory_order_relaxed);
    size_t budget = on_tree_los_budget(t);
    if (budget != ON_LOS_BUDGET_NONE) fit_budget(t, budget, UINT32_MAX, clock, info); /* (a lower budget, masks
                                                                                  * built by reads or installed) */
    for (;;) {
        on_losbuild *lb = t->losbuild;
        if (lb && !lb->idle &&
            (lb->tile >= t->ntiles || !tile_needs(t, lb->tile) || t->tiles[lb->tile].salt != lb->salt))
            lb->idle = 1; /* the tile changed, was unloaded or has masks now: abandoned (its arrays kept) */
        if (!lb || lb->idle) {
            uint32_t i;
            if (used >= limit || (deadline > 0 && now_s() >= deadline) || !may_build(t, budget, clock) ||
                !next_tile(t, all, &i))
                break;
            const on_tile *tl = &t->tiles[i];
            int ok = on_losmap_hook_add(t) == 0;
            if (ok && !lb) {
                lb = calloc(1, sizeof *lb);
                ok = lb != NULL;
                if (ok) t->losbuild = lb;
            }
            if (ok) ok = on_losbuild_init(lb, &tl->table, tl->solid, (uint32_t)t->p.depth) == 0;
            if (!ok) {
                on_tree_losbuild_drop(t);
                st = ON_FAILURE | ON_NO_MEMORY;
                break;
            }
            lb->tile = i;
            lb->salt = tl->salt;
            used += 8;
        }
        int r = on_losbuild_run(lb, &used, limit, deadline);
        if (r < 0) {
            on_tree_losbuild_drop(t);
            st = ON_FAILURE | ON_NO_MEMORY;
            break;
        }
        if (r == 0) break;
        r = on_losbuild_copy(lb, &used, limit, deadline); /* (whole: copied out in slices too) */
        if (r < 0) {
            on_tree_losbuild_drop(t);
            st = ON_FAILURE | ON_NO_MEMORY;
            break;
        }
        if (r == 0) break;
        uint32_t i = lb->tile;
        on_losmap *m = on_losbuild_finish(lb); /* (lb idle now, its arrays kept for the next tile) */
        if (!m) {
            on_tree_losbuild_drop(t);
            st = ON_FAILURE | ON_NO_MEMORY;
            break;
        }
        unwant(t, i);
        if (budget != ON_LOS_BUDGET_NONE && m->bytes > budget) { /* never kept: read by the node table */
            on_losmap_free(m);
            atomic_store_explicit(&t->tiles[i].los_want, 2, memory_order_relaxed);
            continue;
        }
        on_losmap *none = NULL;
        atomic_store_explicit(&t->tiles[i].los_used, clock, memory_order_relaxed);
        if (!atomic_compare_exchange_strong_explicit(&t->tiles[i].los, &none, m, memory_order_acq_rel,
                                                     memory_order_acquire))
            on_losmap_free(m); /* (a reader built one meanwhile: masks not deferred any more) */
        info->built++;
        if (budget != ON_LOS_BUDGET_NONE) fit_budget(t, budget, i, clock, info);
    }
    info->work = used;
    info->wanted = (uint32_t)atomic_load_explicit(&t->los_wanted, memory_order_relaxed);
    info->partial = t->losbuild && !t->losbuild->idle;
    if (all)
        for (uint32_t i = 0; i < t->ntiles; i++) info->left += (uint32_t)tile_needs(t, i);
    return st;
}
