/*
 * octonav_crowd.h -- the crowd's public C API (included by octonav.h): agents that fly together.
 *
 * A crowd moves many agents through one tree's free space, one call a frame (on_crowd_update). Each
 * agent has a position, a velocity, a radius, a top speed, an acceleration limit, a turn-rate limit and
 * a goal. Every frame, for every agent, in this order (files of csrc/crowd/):
 *   plan.c       paths: a query on the crowd's tree, sliced under a budget of expansions a frame
 *                (an agent still waiting for its path holds, or drifts toward its goal); or a path
 *                the caller gives (on_crowd_set_path: a navigator's on a world, from the Lua layer)
 *   proximity.c  the neighbours: a spatial hash grid rebuilt every frame, the k nearest kept
 *   boundary.c   the local boundary: the blocked cubes of the tree within radius + lookahead, read
 *                from the octree (no per-radius tree needed), kept while the agent stays near
 *   follow.c     the preferred velocity: the path followed with corners rounded at a speed its turn
 *                and acceleration limits allow (never stopped at), slowing to arrive
 *   rules.c      the rules of the road: deadlock breaking between walls, keeping right, making room
 *   avoidance.c  the new velocity: ORCA in 3D (reciprocal half-spaces between agents, one-sided ones
 *                against the boundary) solved by lp.c's linear program, then made safe and reachable
 *                (acceleration, turn and speed limits; braking distance to walls and to neighbours)
 *   crowd.c      the agents, the frame (all new velocities from the old state, then all moves):
 *                deterministic for the same inputs; nothing global, every allocation checked.
 *   workers.c    the frame's threads (on_crowd_params.threads): its parallel phases split in chunks
 *                of agents, the same frames bit for bit whatever the count
 * Units: world units and seconds; a turn rate in radians a second.
 */
#ifndef OCTONAV_CROWD_H
#define OCTONAV_CROWD_H

#include "octonav_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct on_crowd on_crowd;

typedef struct on_crowd_params {
    uint32_t max_agents;     /* 1..1048575 (no default) */
    int max_neighbours;      /* agents each agent avoids, the nearest: 1..32 (0: 16) */
    double time_horizon;     /* seconds ORCA looks ahead for agents (0: 1.5) */
    double time_horizon_obst;/* seconds ORCA looks ahead for walls (0: 0.5) */
    size_t plan_budget;      /* search expansions a frame for the agents' paths (0: 4000) */
    size_t max_nodes;        /* the planning query's search memory (0: 65536 nodes) */
    double drift;            /* an agent waiting for its path moves straight toward its goal at this
                              * fraction of its top speed, 0..1 (0, the default: it holds) */
    int threads;             /* threads a frame runs on, the caller's counted: 1..64 (0: 1). The
                              * frames are the same bit for bit whatever the count */
} on_crowd_params;

typedef struct on_crowd_agent_params {
    double radius;           /* world units, > 0 */
    double max_speed;        /* world units a second, > 0 */
    double max_accel;        /* world units a second squared, > 0 */
    double max_turn_rate;    /* radians a second, > 0: the angle between two frames' velocities is at
                              * most max_turn_rate * dt while the speed before is at least
                              * max_accel * dt (slower than that an agent may stop in one frame: it
                              * has no heading to keep) */
    double arrive_dist;      /* arrived within this distance of the goal (0: the radius) */
} on_crowd_agent_params;

enum {
    ON_CROWD_IDLE = 0,       /* no goal: holds where it is (still avoids others) */
    ON_CROWD_PLANNING = 1,   /* its path is being searched for */
    ON_CROWD_MOVING = 2,     /* following its path */
    ON_CROWD_ARRIVED = 3,    /* within arrive_dist of its goal: holds there */
    ON_CROWD_FAILED = 4      /* no path (the goal outside, blocked or unreachable): holds */
};

typedef struct on_crowd_agent_state {
    uint32_t id;
    int state;               /* ON_CROWD_* */
    double pos[3], vel[3], pref[3], goal[3];
    double radius, max_speed, max_accel, max_turn_rate, arrive_dist;
    int neighbours;          /* agents it avoided in the last frame */
    int walls;               /* boundary half-spaces it honoured in the last frame */
    int fallback;            /* 1 when the last frame's velocity was its full brake (no safe velocity
                              * met every constraint) */
    on_status plan_status;   /* the last search's status (0 before any) */
    size_t path_points;      /* points of its path (0: none) */
} on_crowd_agent_state;

typedef struct on_crowd_stats {
    uint32_t agents;
    uint64_t frames;
    uint64_t plans, plan_expansions;  /* searches finished, cells expanded, since creation */
    size_t waiting;                   /* agents waiting for a search (the running one included) */
    uint64_t boundary_refreshes;      /* local boundaries read from the tree, since creation */
    uint64_t fallbacks;               /* agent-frames that took the full brake, since creation */
    size_t bytes;
} on_crowd_stats;

/* A crowd over tree t (which must outlive it; agents plan on it and honour its blocked space). */
ON_API on_status on_crowd_create(const on_tree *t, const on_crowd_params *p, on_crowd **out);
ON_API void on_crowd_destroy(on_crowd *c);
/* Add an agent at world point pos: ON_INVALID (bad parameters), ON_BUFFER_SMALL (max_agents reached),
 * ON_OUTSIDE / ON_BLOCKED (pos outside the tile grid, or within ap->radius of blocked space or of
 * another agent), ON_NO_MEMORY. *id gets its id (never 0). */
ON_API on_status on_crowd_add(on_crowd *c, const double pos[3], const on_crowd_agent_params *ap, uint32_t *id);
/* ON_INVALID for an id not in the crowd. */
ON_API on_status on_crowd_remove(on_crowd *c, uint32_t id);
/* Send an agent to goal (world point): its path is searched for on the crowd's tree (queued, budgeted).
 * goal NULL: no goal (the agent stops). A new goal or path starts the agent afresh: not held, not
 * backing off, its progress counted from there. */
ON_API on_status on_crowd_set_goal(on_crowd *c, uint32_t id, const double goal[3]);
/* Give an agent its path (n >= 1 world points, copied; the last is its goal): followed from the point
 * nearest it on the first segment, no search made. */
ON_API on_status on_crowd_set_path(on_crowd *c, uint32_t id, const double *pts, size_t n);
/* One frame of dt seconds (0 < dt <= 1) for every agent. ON_NO_MEMORY when a boundary or a path
 * could not be stored (those agents hold this frame). */
ON_API on_status on_crowd_update(on_crowd *c, double dt);
ON_API on_status on_crowd_agent_get(const on_crowd *c, uint32_t id, on_crowd_agent_state *st);
/* Positions and velocities of every agent (6 doubles each: x, y, z, vx, vy, vz, in id order of
 * on_crowd_ids) into out (cap agents): *n gets the count; ON_BUFFER_SMALL when cap < *n. */
ON_API on_status on_crowd_states(const on_crowd *c, double *out, size_t cap, size_t *n);
/* The ids of the agents, in slot order (the order every frame visits them). Same buffer rule. */
ON_API on_status on_crowd_ids(const on_crowd *c, uint32_t *ids, size_t cap, size_t *n);
/* The agents id avoided in the last frame (for debug draw). Same buffer rule. */
ON_API on_status on_crowd_neighbours(const on_crowd *c, uint32_t id, uint32_t *ids, size_t cap, size_t *n);
/* The path the agent follows (for debug draw): 3 doubles a point into pts (cap points), *n gets the
 * count (0: none); *seg the index of the point its current leg starts from. Same buffer rule. */
ON_API on_status on_crowd_path(const on_crowd *c, uint32_t id, double *pts, size_t cap, size_t *n, size_t *seg);
ON_API void on_crowd_stats_get(const on_crowd *c, on_crowd_stats *st);

#ifdef __cplusplus
}
#endif
#endif
