/*
 * walk.h -- navigators walking their smoothed paths, many in one call (the C side of
 * lua/octonav/navgroup.lua's walk, csrc/lua/lua_walk.c): one slot a navigator, in dense arrays, holding
 * what octonav.smoother's update reads (its path's points, the target waypoint, the last failed line of
 * sight, the recheck distance) and what tells a navigator's update needs its Lua (the tree's revision
 * it last saw valid, the point whose nearness starts the next step's search).
 *
 * on_walk_advance is lua/octonav/smoother.lua's advance, number for number (the same comparisons and
 * the same floating-point operations in the same order): a slot walked here answers what the Lua
 * smoother would have answered at the same position with the same checks. Internal to the library.
 */
#ifndef OCTONAV_WALK_H
#define OCTONAV_WALK_H

#include "octonav_core.h"

#include <stddef.h>
#include <stdint.h>

/* A slot's smoother state (indices 1-based, as the Lua smoother's). */
typedef struct on_walk_state {
    uint32_t i;         /* the target waypoint */
    uint32_t fail_j;    /* the waypoint of the last failed line of sight, 0: none */
    double fail_pos[3]; /* where that check was made from (valid when fail_j > 0) */
    double fail_d;      /* recheck > 0: the distance to the target below which it is tried again */
} on_walk_state;

typedef struct on_walk_slot {
    double *pts;        /* 3 * n coordinates: the smoother's path */
    uint32_t n, cap;    /* points held, room for */
    on_walk_state st;
    double recheck;     /* the smoother's option (0 <= recheck < 1) */
    uint32_t budget;    /* its checks_per_frame */
    double end_d;       /* at the leg's last point: the walk goes on while farther than this from it */
    int has_pf;         /* the next step's search starts once the agent is within pf_d of pf */
    double pf[3], pf_d;
    int check_rev;      /* the update needs its Lua once the tree's revision is not rev */
    uint64_t rev;
    uint64_t checks;    /* lines of sight spent here since held */
    uint64_t updates;   /* updates made here since held */
    int held;
    /* parked (lua_walk.c's w:park): a navigator waiting to start its plan, its answer fixed until Lua
     * takes it back; none of the fields above is used then */
    int parked;
    uint32_t wid;       /* its world's number (w:walk's `open`) */
    double since;       /* the frame it waits since (w:walk reports the earliest) */
} on_walk_slot;

/* Ensure slot s can hold n points (realloc); ON_OK or ON_FAILURE | ON_NO_MEMORY. */
on_status on_walk_reserve(on_walk_slot *s, uint32_t n);

/* Would the smoother's update at pos spend a line of sight (given one)? */
int on_walk_wants_check(const on_walk_slot *s, const double pos[3]);

/* The smoother's update of slot s at pos with at most max_checks lines of sight on t: the new state in
 * *out (s is not changed), the checks spent returned. */
uint32_t on_walk_advance(const on_walk_slot *s, const on_tree *t, const double pos[3], uint32_t max_checks,
                         on_walk_state *out);

/* The distance between a and b as lua/octonav/util.lua's dist computes it. */
double on_walk_dist(const double a[3], const double b[3]);

#endif
