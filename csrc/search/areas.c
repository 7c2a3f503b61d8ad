/*
 * areas.c -- area costs (octonav.h, "area costs"; areas.h): the tree's list of areas, a search's
 * areas in nav space, and the exact cost of a segment through them: the segment is cut at every area
 * face it crosses, and each piece pays its length times the largest multiplier of the areas holding
 * it (pieces are decided by their midpoint, so a piece is wholly inside or outside each area).
 */
#include "areas.h"
#include "tree.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pieces shorter than this (nav units) are not counted as entering an area: a waypoint placed on an
 * area's face lies within rounding of it, on either side. */
#define AREA_EPS 1e-9

int on_area_valid(const on_area *a)
{
    if (!a) return 0;
    for (int k = 0; k < 3; k++)
        if (!isfinite(a->min[k]) || !isfinite(a->max[k]) || !(a->min[k] < a->max[k])) return 0;
    return a->exclude || (isfinite(a->cost) && a->cost >= 1);
}

on_status on_tree_set_areas(on_tree *t, const on_area *areas, size_t n)
{
    if (n && !areas) return ON_FAILURE | ON_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!on_area_valid(&areas[i])) return ON_FAILURE | ON_INVALID;
    on_area *copy = NULL;
    if (n) {
        if (n > ((size_t)-1) / sizeof *copy) return ON_FAILURE | ON_NO_MEMORY;
        copy = malloc(n * sizeof *copy);
        if (!copy) return ON_FAILURE | ON_NO_MEMORY;
        memcpy(copy, areas, n * sizeof *copy);
    }
    free(t->areas);
    t->areas = copy;
    t->nareas = n;
    return ON_SUCCESS;
}

size_t on_tree_areas(const on_tree *t, const on_area **areas)
{
    if (areas) *areas = t->areas;
    return t->nareas;
}

void on_areaset_free(on_areaset *s)
{
    free(s->a);
    free(s->scratch);
    memset(s, 0, sizeof *s);
}

static int add_area(on_areaset *s, const on_tree *t, const on_area *a)
{
    if (!a->exclude && a->cost == 1) return 0; /* changes nothing */
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        on_navarea *na = realloc(s->a, cap * sizeof *na);
        if (!na) return -1;
        s->a = na;
        double *sc = realloc(s->scratch, (5 * cap + 2) * sizeof *sc);
        if (!sc) return -1;
        s->scratch = sc;
        s->cap = cap;
    }
    on_navarea *o = &s->a[s->n++];
    on_to_nav(t, a->min, o->mn);
    on_to_nav(t, a->max, o->mx);
    o->cost = a->exclude ? INFINITY : a->cost;
    return 0;
}

int on_areaset_build(on_areaset *s, const on_tree *t, const on_area *extra, size_t n)
{
    s->n = 0;
    for (size_t i = 0; i < t->nareas; i++)
        if (add_area(s, t, &t->areas[i]) != 0) return s->n = 0, -1;
    for (size_t i = 0; i < n; i++)
        if (add_area(s, t, &extra[i]) != 0) return s->n = 0, -1;
    return 0;
}

/* The parameter range (t0, t1) of segment p + t d, t in [0, 1], strictly inside area a; 0 when the
 * segment does not enter it. */
static int clip(const on_navarea *a, const double p[3], const double d[3], double *t0, double *t1)
{
    double lo = 0, hi = 1;
    for (int k = 0; k < 3; k++) {
        if (d[k] == 0) {
            if (!(p[k] > a->mn[k] && p[k] < a->mx[k])) return 0;
            continue;
        }
        double u = (a->mn[k] - p[k]) / d[k], v = (a->mx[k] - p[k]) / d[k];
        if (u > v) {
            double w = u;
            u = v;
            v = w;
        }
        if (u > lo) lo = u;
        if (v < hi) hi = v;
        if (!(lo < hi)) return 0;
    }
    *t0 = lo;
    *t1 = hi;
    return 1;
}

double on_areaset_cost(const on_areaset *s, const double p[3], const double q[3])
{
    double len = on_dist3(p, q);
    if (s->n == 0 || len == 0) return len;
    double d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    double *hit = s->scratch, *bp = s->scratch + 3 * s->cap; /* hits: t0, t1, cost; breakpoints */
    size_t nh = 0, nb = 0;
    double eps = AREA_EPS / len;
    for (size_t i = 0; i < s->n; i++) {
        double t0, t1;
        if (!clip(&s->a[i], p, d, &t0, &t1) || t1 - t0 <= eps) continue;
        if (s->a[i].cost == INFINITY) return INFINITY;
        hit[3 * nh] = t0;
        hit[3 * nh + 1] = t1;
        hit[3 * nh + 2] = s->a[i].cost;
        nh++;
        bp[nb++] = t0;
        bp[nb++] = t1;
    }
    if (nh == 0) return len;
    bp[nb++] = 0;
    bp[nb++] = 1;
    for (size_t i = 1; i < nb; i++) /* insertion sort: a few breakpoints */
        for (size_t j = i; j > 0 && bp[j - 1] > bp[j]; j--) {
            double w = bp[j];
            bp[j] = bp[j - 1];
            bp[j - 1] = w;
        }
    double total = 0;
    for (size_t i = 0; i + 1 < nb; i++) {
        double u = bp[i], v = bp[i + 1];
        if (!(v > u)) continue;
        double mid = 0.5 * (u + v), m = 1;
        for (size_t h = 0; h < nh; h++)
            if (hit[3 * h] < mid && mid < hit[3 * h + 1] && hit[3 * h + 2] > m) m = hit[3 * h + 2];
        total += (v - u) * m;
    }
    return len * total;
}

int on_areaset_excluded(const on_areaset *s, const double p[3])
{
    for (size_t i = 0; i < s->n; i++) {
        const on_navarea *a = &s->a[i];
        if (a->cost == INFINITY && p[0] > a->mn[0] && p[0] < a->mx[0] && p[1] > a->mn[1] && p[1] < a->mx[1] &&
            p[2] > a->mn[2] && p[2] < a->mx[2])
            return 1;
    }
    return 0;
}

int on_areaset_splits(const on_areaset *s, const double m[3], double size)
{
    for (size_t i = 0; i < s->n; i++) {
        const on_navarea *a = &s->a[i];
        int meets = 1, holds = 1;
        for (int k = 0; k < 3 && meets; k++) {
            double lo = m[k], hi = m[k] + size;
            meets = a->mn[k] < hi && a->mx[k] > lo;
            holds &= a->mn[k] <= lo && a->mx[k] >= hi;
        }
        if (meets && !holds) return 1;
    }
    return 0;
}
