/*
 * landmarks.h -- landmark distances for the search's heuristic (ALT, Goldberg and Harrelson; a
 * "differential heuristic") and an exact test of reachability (internal; built by
 * on_tree_landmarks_prepare, octonav.h).
 *
 * N landmark cells are picked by farthest point (from any cell of the largest connected component by
 * volume, each next landmark the free cell farthest by graph distance from those chosen); a Dijkstra
 * from each over the tree's free cells (face neighbours, across tile borders) gives every free cell its
 * distance to each landmark: between the cells' centres, a cell's parent any visible ancestor (Theta*),
 * so that lengths follow straight lines rather than the staircase of centre to centre steps. As
 * d(L, .) is (nearly) a shortest-path distance, |d(L, v) - d(L, goal)| is (nearly) no longer than the
 * way from v to the goal (the triangle inequality), and the search's heuristic may take the largest
 * over the landmarks where the straight line underestimates (behind a wall). Every free cell also gets
 * its connected component's number: two ends in different components
 * are unreachable without a search.
 *
 * Storage: per tile, arrays parallel to the tile's cell adjacency's numbering (celladj.h: the search
 * knows a cell's number from its adjacency list): N uint16 distances a cell (0..ON_LM_TOP steps of
 * `step` nav units, a 32,000th of twice the largest distance from a cell of the main component; ON_LM_INF for a cell no landmark reaches: another component) and a uint32 component.
 * 2N + 4 bytes a free cell. Life: the tree holds one set (t->landmarks), built on request by the
 * owner thread; any change to any tile (on_tree_touch) frees it, as distances change everywhere, and
 * bumps t->landmarks_gen (a sliced search holding them checks it at every update). Searches on other
 * threads read it while no writer runs (as every tree edit: never during a read).
 */
#ifndef OCTONAV_LANDMARKS_H
#define OCTONAV_LANDMARKS_H

#include "octonav_search.h"
#include "tree.h"

#include <stdint.h>

#define ON_LM_MAX ON_LANDMARKS_MAX /* landmarks at most (octonav.h) */
#define ON_LM_INF 0xffffu   /* not reached from the landmark */
#define ON_LM_TOP 32000     /* the largest distance in steps (15 bits: differences fit an int16, which
                             * the search's 8-lane compare reads) */

typedef struct on_landmarks {
    int n;                /* landmarks */
    uint32_t ntiles;
    uint32_t *ncell;      /* per tile: the numbers of its cell adjacency (celladj.h: its n at the build; 0: none, or not loaded) */
    uint16_t **d;         /* per tile: cell i's distance to landmark l at d[tile][i * n + l] */
    uint32_t **comp;      /* per tile: cell i's component */
    uint16_t *dall;       /* (the one block d's arrays lie in, tile by tile) */
    uint32_t *call;       /* (comp's) */
    double step;          /* nav units a distance step */
    uint32_t main_comp;   /* the component holding the landmarks */
    int complete;         /* every tile was loaded at the build: components are the search's reachability */
    on_cell where[ON_LM_MAX]; /* the landmarks' cells */
    size_t components;    /* connected components */
    size_t cells;         /* free cells */
    size_t bytes;         /* everything it holds */
} on_landmarks;

/* Free a tree's landmarks (the writer's side: on_tree_touch, on_tree_destroy, a new build); bumps
 * t->landmarks_gen. */
void on_tree_landmarks_drop(on_tree *t);

/* The number of cell `code` of tile `tile` in the landmarks' arrays, or UINT32_MAX (no free cell of
 * a tile they cover): for cells the search met without their number. */
uint32_t on_landmarks_find(const on_tree *t, const on_landmarks *lm, uint32_t tile, uint32_t code);

#endif
