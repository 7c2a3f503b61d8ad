/*
 * tighten.h -- pulling a path tight (internal; the counterpart of Detour's findStraightPath and path
 * corridor optimisation). A path is a plain array of nav-space points; the stages run in order:
 *   on_refine    the shortest path through a corridor's chain of shared faces (no visibility needed:
 *                every segment stays inside one free region)
 *   on_simplify  exact repeats dropped
 *   on_smooth    waypoints removed by line of sight (string pulling)
 *   on_relax     the remaining corners slid towards the obstacle edges they wrap around, and onto them
 * Smoothing and relaxation ask an on_sight for lines of sight and allowed turns (the tree's, in a
 * search; anything in a test), so every stage runs without a search.
 */
#ifndef OCTONAV_TIGHTEN_H
#define OCTONAV_TIGHTEN_H

#include <stddef.h>

/* n points of 3 doubles at p (capacity cap points). */
typedef struct on_pathbuf {
    double *p;
    size_t n, cap;
} on_pathbuf;

/* Room for n points; -1 on allocation failure. */
int on_pathbuf_reserve(on_pathbuf *b, size_t n);
/* Append a point; -1 on allocation failure. */
int on_pathbuf_push(on_pathbuf *b, const double p[3]);
void on_pathbuf_free(on_pathbuf *b);
/* The sum of the segments' lengths. */
double on_pathbuf_length(const on_pathbuf *b);
/* The sum of the segments' costs under sight->cost (their lengths when it is NULL). */
typedef struct on_sight on_sight;
double on_pathbuf_cost(const on_pathbuf *b, const on_sight *sight);

/* What smoothing may assume: is b in sight of a; may a path turn at x (from a on to b)? cost (may be
 * NULL: a segment costs its length) prices a segment (area costs, areas.h): with it, smoothing and
 * relaxation take a shortcut or move a corner only when the path does not get dearer. */
struct on_sight {
    int (*visible)(void *ud, const double a[3], const double b[3]);
    int (*turn_ok)(void *ud, const double a[3], const double x[3], const double b[3]);
    void *ud;
    double (*cost)(void *ud, const double a[3], const double b[3]);
    /* May be NULL. For on_smooth: clear[i] nonzero when every voxel around waypoint i of the path it
     * is given is free (a waypoint strictly inside the face two free cells share), so that any turn
     * there keeps to the rule and turn_ok need not be asked. */
    const unsigned char *clear;
    /* May be NULL. For on_relax: 1 when a -> b is known to be out of sight (visible said so before),
     * 0 when not known. */
    int (*known_blocked)(void *ud, const double a[3], const double b[3]);
};

/* The path start -> end through m faces (faces[6 i .. 6 i + 5]: face i's min and max corner, equal
 * on the axis it is perpendicular to), with one waypoint on each face, into path (m + 2 points).
 * -1 on allocation failure. */
int on_refine(on_pathbuf *path, const double *faces, size_t m, const double start[3], const double end[3]);
/* clear (may be NULL): one flag per waypoint (on_sight's clear), dropped with its waypoint. */
void on_simplify(on_pathbuf *path, unsigned char *clear);
/* mode: ON_SMOOTH_GREEDY or ON_SMOOTH_BINARY (octonav.h). */
void on_smooth(on_pathbuf *path, const on_sight *sight, int mode);
void on_relax(on_pathbuf *path, const on_sight *sight, int passes);

#endif
