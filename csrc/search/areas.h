/*
 * areas.h -- area costs inside the core (internal; the public face is octonav.h, "area costs"): a
 * search's areas in nav space and the cost of a segment through them.
 */
#ifndef OCTONAV_AREAS_H
#define OCTONAV_AREAS_H

#include "octonav_search.h"

#include <stddef.h>

/* An area in nav space; cost INFINITY: excluded. */
typedef struct on_navarea {
    double mn[3], mx[3];
    double cost;
} on_navarea;

/* A search's areas (the tree's and its options', those of cost 1 dropped) with the scratch the cost
 * of a segment needs: nothing is allocated per segment. */
typedef struct on_areaset {
    on_navarea *a;
    size_t n, cap;
    double *scratch;      /* 5 cap + 2 doubles */
} on_areaset;

/* Fill s with the tree's areas and n extra ones (valid: on_area_valid), in nav space. -1 on
 * allocation failure (s then holds none). */
int on_areaset_build(on_areaset *s, const on_tree *t, const on_area *extra, size_t n);
void on_areaset_free(on_areaset *s);
/* The cost of segment p -> q in nav units: its length weighted by the areas (octonav.h), INFINITY
 * when it enters an excluded area. Exactly on_dist3(p, q) when it enters none. */
double on_areaset_cost(const on_areaset *s, const double p[3], const double q[3]);
/* 1 when some area holds part of the open cube (min corner m, edge size) but not all of it: a search
 * graph node there would mix prices (graph_areas.c splits it). */
int on_areaset_splits(const on_areaset *s, const double m[3], double size);
/* 1 when nav point p lies inside an excluded area. */
int on_areaset_excluded(const on_areaset *s, const double p[3]);

#endif
