/*
 * obstacles_records.h -- the temporary obstacles' records on a tree (internal to obstacles.c and
 * obstacles_stream.c): the obstacles in the order added, and the snapshot of each tile they cover.
 */
#ifndef OCTONAV_OBSTACLES_RECORDS_H
#define OCTONAV_OBSTACLES_RECORDS_H

#include "obstacles.h"

#include <stddef.h>
#include <stdint.h>

typedef struct on_obstacle_snapshot {
    uint32_t tile;
    uint32_t salt;     /* the tile's salt after the last obstacle operation on it */
    uint8_t solid;
    size_t nobs;       /* obstacles in place covering the tile */
    on_table table;    /* the contents before the first obstacle */
} on_obstacle_snapshot;

typedef struct on_obstacle {
    uint32_t id;
    int dead;                /* removed (the slot stays until the arrays are compacted) */
    double wmin[3], wmax[3]; /* as given (world) */
    double lo[3], hi[3];     /* nav space, inflated by the radius */
    int a[3], z[3];          /* the tiles it covers: a..z on each axis (on_tree_tile_range) */
    int any;                 /* 0 when wholly outside the grid (it covers no tile) */
} on_obstacle;

struct on_obstacles {
    on_obstacle *ob;      /* in the order added (ids ascending), dead ones included */
    size_t n, cap, ndead;
    float *fbox;       /* per slot i of ob: its box rounded outwards, fbox[k * fcap + i] for k = 0..5
                        * (lo x, y, z, then hi x, y, z: one array per bound, for the scan); a dead
                        * one's empty */
    size_t fcap;
    on_obstacle_snapshot *snap;
    size_t nsnap, snapcap;
    uint32_t next_id;
    uint64_t work;     /* removals' work so far: nodes restored and candidates tested, obstacles
                        * blocked again by a whole rebuild (on_obstacles_work; tests read it) */
};

/* Does live (not removed) obstacle i cover loaded tile `tile`? */
int on_obstacles_live_covers(const on_tree *t, const struct on_obstacles *o, size_t i, uint32_t tile);
/* The snapshot of tile `tile`, or NULL. */
on_obstacle_snapshot *on_obstacles_find_snap(struct on_obstacles *o, uint32_t tile);
/* on_tree_insert's classifier of an obstacle's box (ud: an on_obstacle). */
int on_obstacles_classify(void *ud, const double m[3], double s);

#endif
