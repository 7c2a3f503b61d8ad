/*
 * losmap_build.h -- a losmap's build in slices (losmap.c builds, losmap_step.c's on_tree_los_step drives
 * it within a step's work and deadline): the builder, its stack, and the build's calls. Internal to
 * the losmap files.
 */
#ifndef OCTONAV_LOSMAP_BUILD_H
#define OCTONAV_LOSMAP_BUILD_H

#include "losmap.h"

#include <stddef.h>
#include <stdint.h>

typedef struct builder {
    const on_table *tab;
    uint32_t depth;
    uint8_t solid;
    on_losnode *node;
    size_t nnode, capnode, mapnode; /* map*: bytes mapped (pages of its own, losarr_*), 0: malloc'd */
    uint64_t *brick;
    size_t nbrick, capbrick, mapbrick;
    uint32_t grows;          /* the arrays grown after build_begin (0: the count's bound held) */
    uint32_t reg[3];         /* the tile's part of the map */
    int32_t lo[3], hi[3];    /* the box around the blocked leaves in it */
} builder;

/* A node whose mixed children are being filled (build's stack): see enter (losmap.c). */
typedef struct frame {
    uint32_t L, x, y, z;
    int st[64];    /* the children's octree states */
    uint64_t rest; /* mixed children not filled yet */
    size_t at;     /* node[] (brick[] for L 2) index of the next of them */
} frame;

/* A build in progress: the builder and the stack of nodes whose mixed children are not all filled
 * (depth-first, each node's children in bit order: the layout a one-piece build gives). */
struct on_losbuild {
    builder b;
    uint32_t top;
    int n;        /* frames on the stack */
    int failed;   /* out of memory */
    frame stack[ON_LOS_LEVELS];
    /* the tile it builds and the salt it read (on_tree_los_step: a change of the tile abandons it) */
    uint32_t tile, salt;
    int idle; /* on_tree_los_step's between builds: no build, its arrays kept for the next (no faults) */
    /* on_tree_los_step's copy of a whole build's arrays out at their size (build_copy), in slices */
    int copying;
    on_losnode *cnode;
    uint64_t *cbrick;
    size_t cdone; /* bytes copied (node[]'s, then brick[]'s) */
};

/* A new build of the tile whose table is tab (NULL: out of memory). */
on_losbuild *on_losbuild_begin(const on_table *tab, uint8_t solid, uint32_t depth);
/* Start lb's build of a tile (lb new or idle: its arrays used again); -1: out of memory. */
int on_losbuild_init(on_losbuild *lb, const on_table *tab, uint8_t solid, uint32_t depth);
/* Fill until whole (1), *work reaches limit or the clock passes deadline (0); -1: out of memory. */
int on_losbuild_run(on_losbuild *lb, uint64_t *work, uint64_t limit, double deadline);
/* A whole build's arrays copied out at their size, in slices as on_losbuild_run. */
int on_losbuild_copy(on_losbuild *lb, uint64_t *work, uint64_t limit, double deadline);
/* The losmap of a whole build, after on_losbuild_copy (lb goes idle with its arrays). */
on_losmap *on_losbuild_finish(on_losbuild *lb);
void on_losbuild_free(on_losbuild *lb);
/* The losmap's tree hook added to t (0; -1: out of memory). */
int on_losmap_hook_add(on_tree *t);

#endif
