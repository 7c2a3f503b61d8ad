/*
 * crowd.h -- the crowd's inside (csrc/crowd/): the agent record and what each file of the room
 * offers the others (the 3-vector helpers: crowd_vec.h). The public face is octonav_crowd.h.
 */
#ifndef OCTONAV_CROWD_INTERNAL_H
#define OCTONAV_CROWD_INTERNAL_H

#include "octonav_stream.h"
#include "octonav_crowd.h"
#include "crowd_vec.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* A half-space of velocities: v is allowed when n . (v - p) >= 0 (n a unit vector). */
typedef struct on_plane {
    on_v3 p, n;
} on_plane;

#define ON_CROWD_MAX_NEIGHBOURS 32
#define ON_CROWD_MAX_WALLS 32
/* the most half-spaces one program holds: walls, neighbours and the motion limits */
#define ON_CROWD_MAX_PLANES (ON_CROWD_MAX_WALLS + ON_CROWD_MAX_NEIGHBOURS + 8)

/* An agent's record. A frame's parallel phases (crowd.c) write their own agent's record alone and read
 * of the others only their on_hot copy (below) and their goal (rules.c: make_room), which no phase
 * writes: the goal's line holds nothing a phase writes (the agent's own part starts on a new line),
 * and the crowd's array of records starts on a line (ON_AGENT_ALIGN). */
#define ON_AGENT_ALIGN 64
#define ON_AGENT_PAD 20
typedef struct on_agent {
    /* written only outside the parallel phases (the moves, the plan step and the calls between
     * frames): its hot copy is taken from these */
    uint32_t id;               /* 0: a free slot */
    int state;                 /* ON_CROWD_* */
    on_v3 pos, vel;
    double radius;
    /* the path (world points), the segment followed (path[seg] -> path[seg + 1]) */
    double *path;
    size_t npath;
    on_v3 goal;
    double max_speed, max_accel, max_turn, arrive_dist;
    size_t path_cap;
    char pad0[48];             /* (to the next line) */
    /* from line 3: the agent's own, written by its own work in the phases */
    /* the local boundary: blocked boxes (6 doubles, world min then max) read around bound_at */
    double *boxes;
    size_t nboxes, boxes_cap;
    on_v3 bound_at;
    double bound_reach;        /* boxes within this distance of bound_at on each axis were read */
    uint64_t bound_rev;        /* the tree's revision they were read at */
    int bound_valid;
    /* the last frame's neighbours (slots) and wall count, for state reads and debug draw */
    int nnbr;
    uint32_t nbr[ON_CROWD_MAX_NEIGHBOURS];
    size_t seg;
    /* the frame's path following, done in its parallel phase (crowd.c): the preferred velocity along
     * the path (when it follows its path this frame) */
    on_v3 fpref;
    on_v3 pref;
    /* deadlock breaking (crowd.c): the distance left along its path, the least seen, frames since it
     * last shrank by a tenth of a leaf, and frames left backing off for an agent that has the way */
    double togo, togo_best;
    int still, yield;
    int hold;                  /* held back by an oncoming agent with the way (rules.c): waits out of the passage */
    int yield_head_on;         /* the backing off is for a head-on meeting (the agents behind follow) */
    on_v3 nvel;
    int nwalls, fallback;
    double turn_of, turn_k;    /* avoidance.c: the turn limit a frame (max_turn dt) its pyramid's slope was made for */
    int external;              /* the path was given (on_crowd_set_path): never searched for */
    int queued;                /* waiting in the plan queue (or being searched for) */
    on_status plan_status;
    int dir_valid;             /* its hot copy's dir is that of segment dir_seg of its path (crowd.c); 0 when the path changes */
    size_t dir_seg;
    char pad[ON_AGENT_PAD];    /* (the record a whole number of lines) */
} on_agent;
_Static_assert(offsetof(on_agent, goal) / ON_AGENT_ALIGN < offsetof(on_agent, boxes) / ON_AGENT_ALIGN &&
                   offsetof(on_agent, boxes) % ON_AGENT_ALIGN == 0 && sizeof(on_agent) % ON_AGENT_ALIGN == 0,
               "on_agent: the neighbours' lines first, whole lines");

/* An agent as the others' work reads it in a frame's parallel phases (rules.c, avoidance.c), in an
 * array of its own (c->hot, one a slot, on whole lines): copied from its record at the frame's start
 * by the thread that owns its slot (crowd.c's snapshot), each field stored only where it changed, and
 * written by nothing else until the next frame. So the phases read lines nobody writes that frame, a
 * thread writes only its own slots' lines, and another core reads an agent's two lines (before: its
 * record's first three and its path's points). Line 0: what the rules and the avoidance read of every
 * neighbour; line 1: what the rules read of the near ones. The rule state is the frame's start (the
 * snapshot), so every agent decides from the same one whatever the order and the threads. From 512 slots
 * on two threads or more the copies are taken ahead, at the end of the last frame's job into a second
 * array (c->hotn, swapped in at the frame's start), and again by what changes an agent between frames
 * (crowd.c). */
#define ON_HOT_YIELD 1u        /* backing off (yield > 0) */
#define ON_HOT_HEAD_ON 2u      /* ... from a head-on meeting (yield_head_on) */
#define ON_HOT_FALLBACK 4u     /* pinned against a wall by a neighbour (fallback and walls last frame) */
typedef struct on_hot {
    on_v3 pos;
    on_v3 vel;
    double radius;
    uint32_t id;               /* 0: a free slot */
    uint8_t state;             /* ON_CROWD_* */
    uint8_t flags;             /* ON_HOT_* */
    uint16_t still;            /* frames without progress (at most UINT16_MAX) */
    on_v3 pref;                /* the preferred velocity of the last frame */
    on_v3 dir;                 /* the direction of the segment followed (MOVING; else 0) */
    char pad[16];
} on_hot;
_Static_assert(sizeof(on_hot) == 2 * ON_AGENT_ALIGN && offsetof(on_hot, pref) == ON_AGENT_ALIGN,
               "on_hot: two lines, the neighbours' first");

/* proximity.c: a hash grid of the agents' centres, rebuilt every frame (no allocation once grown). */
typedef struct on_proxitem {
    double x, y, z;            /* the agent's centre, copied: a search reads these alone */
    uint32_t slot, row;        /* its slot, its row's key (y, z: proximity.c) */
} on_proxitem;
typedef struct on_proxgrid {
    double cell;               /* edge of a grid cell, world units */
    uint32_t *start;           /* counting sort of slots by bucket: bucket b holds items[start[b]..start[b+1]) */
    uint64_t *bkey;            /* per bucket: the row key its items share, or ON_PROX_MIXED */
    on_proxitem *items;
    uint32_t *tmp;             /* per live agent: its bucket (the build's scratch) */
    uint32_t *tmprow;          /* per live agent: its row's key (the build's scratch) */
    uint32_t nbuckets;         /* a power of two */
    size_t cap_buckets, cap_items;
    /* per slot (proximity.c's candidate lists): the position and id at the last build, each slot's
     * list of the agents near it when it was made (PROX_CAND slots each) and its record */
    double *last;              /* 3 a slot */
    uint32_t *last_id;
    double *nlast;             /* the next build's copies, taken ahead (on_proxgrid_track_next) */
    uint32_t *nlast_id;
    uint32_t *cand;
    struct on_proxlist *lists;
    uint32_t *order;           /* the live slots by (x, slot) at the last build (kept from build to build) */
    uint32_t norder;
    size_t cap_slots;
    double travel;             /* the sum over builds of the farthest one agent moved in it */
    uint64_t epoch;            /* grows when an agent appears (a list made before misses it) */
} on_proxgrid;
#define ON_PROX_MIXED UINT64_MAX
void on_proxgrid_free(on_proxgrid *g);
/* Rebuild over the n slots of agents that are live (id != 0), for searches of range up to `range`
 * (the cells' edge follows from it): 0, or -1 (no memory). The same as on_proxgrid_reserve, then
 * on_proxgrid_track over [0, n), then on_proxgrid_build_tracked. */
int on_proxgrid_build(on_proxgrid *g, const on_agent *agents, uint32_t n, double range);
/* The build in three steps, so that the slots' positions are copied into the grid by the thread that
 * owns them (crowd.c's snapshot: the copies a thread reads most, its own agents', stay in its core's
 * cache; the caller's build reads 24 bytes a slot of the other's, not its record's line): room for n
 * slots (0, or -1: no memory); the slots [begin, end) copied, what the build needs of them summed into
 * *tr (zeroed by the caller before the first range; ranges of one build never overlap); the build from
 * the copies of all n slots (tr: the sum over the ranges that cover [0, n)). */
typedef struct on_proxtrack {
    double step;               /* the largest squared distance an agent moved since the last build */
    uint32_t live;             /* live agents */
    int fresh, gone;           /* an agent new in its slot; a slot emptied */
} on_proxtrack;
int on_proxgrid_reserve(on_proxgrid *g, uint32_t n);
void on_proxgrid_track(on_proxgrid *g, const on_agent *agents, uint32_t begin, uint32_t end, on_proxtrack *tr);
int on_proxgrid_build_tracked(on_proxgrid *g, uint32_t n, double range, const on_proxtrack *tr);
/* on_proxgrid_track taken ahead, during the frame whose build is g's: the slots [begin, end) compared
 * with the build's copies (read by that frame's searches, unchanged) and stored into the next copies;
 * on_proxgrid_swap (before the next build) makes them the grid's. */
void on_proxgrid_track_next(on_proxgrid *g, const on_agent *agents, uint32_t begin, uint32_t end, on_proxtrack *tr);
void on_proxgrid_swap(on_proxgrid *g);
/* The up to k live agents nearest to agent `self` whose centres lie within range of its centre
 * (itself excluded), nearest first (ties by slot), into out: their count. Reads the grid and the
 * agents' positions only (safe from several threads at once). */
int on_proxgrid_nearest(const on_proxgrid *g, const on_agent *agents, uint32_t self, double range, int k,
                        uint32_t *out);
/* The grid's bytes. */
size_t on_proxgrid_bytes(const on_proxgrid *g);
/* The agents on slot's candidate list (a search whose bound lies within the list's reach, less twice
 * the farthest any agent moved since it was made, reads them alone), or -1: none since the last agent
 * appeared (for tests). */
int on_proxgrid_listed(const on_proxgrid *g, uint32_t slot);

/* workers.c: the crowd's threads (a pool that runs fn over slots [begin, end) chunks; worker 0 is the
 * caller's thread). */
typedef struct on_workers on_workers;
typedef void (*on_work_fn)(void *ctx, int worker, uint32_t begin, uint32_t end);
/* n threads in all (n - 1 started): 0, or -1 (no memory or no thread; nothing left running). */
int on_workers_create(int n, on_workers **out);
void on_workers_destroy(on_workers *p);
/* fn over [0, n) in chunks of `chunk`, on every thread; returns when all are done (p NULL: the caller alone). */
void on_workers_run(on_workers *p, uint32_t n, uint32_t chunk, on_work_fn fn, void *ctx);
/* Wake the pool's sleeping threads ahead of the next on_workers_run (they watch for it a while); called
 * once an update, it also times the updates (threads that go to sleep between steady ones wake ahead
 * of the next by themselves). */
void on_workers_wake(on_workers *p);
/* (tests) on_workers_wake's calls so far, and those that found a thread of the pool asleep (a system call
 * to wake it): a steady pace finds them watching (NULL p: 0 and 0). */
void on_workers_wakes(on_workers *p, uint64_t *calls, uint64_t *asleep);
/* (tests, the bench) how many times on_workers_wake moved the pool's threads off its caller's CPU
 * (Linux; 0 elsewhere): once, then each time the caller's CPU changes */
unsigned on_workers_moves(on_workers *p);
/* fn(ctx, worker, 0, 1) once, on a thread of the pool, while the caller returns (p NULL or one thread:
 * on the caller's, now); on_workers_sync waits for it (or runs it on the caller's thread if no thread
 * began it). on_workers_run, on_workers_wake and on_workers_behind sync first. */
void on_workers_behind(on_workers *p, on_work_fn fn, void *ctx);
void on_workers_sync(on_workers *p);
int on_workers_count(const on_workers *p);
#ifdef ON_CROWD_PROFILE
/* (bench only) per thread: seconds busy in pieces, pieces, slots; per job function (ON_WORKERS_PROF_FNS,
 * in the order first run: a frame's phases in order): the thread's CPU in the job, the sum of the first
 * piece's start and the last piece's end after the job was posted, jobs joined */
#define ON_WORKERS_PROF_FNS 4
typedef struct on_workers_prof {
    double busy, first[ON_WORKERS_PROF_FNS], last[ON_WORKERS_PROF_FNS], cpu[ON_WORKERS_PROF_FNS];
    uint64_t pieces, slots, jobs[ON_WORKERS_PROF_FNS];
} on_workers_prof;
on_workers_prof *on_workers_profile(on_workers *p);
#endif

/* what one thread counts during a frame's phase (summed after it); whole lines each (the array
 * line-aligned: crowd.c) */
typedef struct on_crowd_wstat {
    _Alignas(ON_AGENT_ALIGN) uint64_t refreshes;
    uint64_t fallbacks;
    double rmax, vmax, lmax; /* the snapshot's bounds over the thread's agents (crowd.c) */
    on_proxtrack track;      /* the snapshot's copies into the grid over the thread's slots (crowd.c) */
    double nrmax, nvmax, nlmax; /* the same taken ahead for the next frame (crowd.c: phase_frame) */
    on_proxtrack ntrack;
    uint32_t arrived_planning; /* agents its moves found at their goal while planning (crowd.c) */
    int oom;
} on_crowd_wstat;
_Static_assert(sizeof(on_crowd_wstat) % ON_AGENT_ALIGN == 0, "on_crowd_wstat: whole lines");

/* the crowd (crowd.c) */
struct on_crowd {
    const on_tree *t;
    on_crowd_params p;
    on_agent *agents;          /* p.max_agents slots; slots [0, used) have been handed out */
    on_hot *hot;               /* p.max_agents: the agents as the frame's phases read each other (taken in the snapshot) */
    on_hot *hotn;              /* p.max_agents: the next frame's, taken ahead at the end of the frame's job (crowd.c) */
    int ahead;                 /* the frame's job took the next frame's copies (hotn, the grid's next, pre_*) */
    int ahead_ok;              /* ... and nothing since spoils them (no agent added or removed) */
    double ahead_dt;           /* the dt they were taken for (the bounds' lookahead) */
    double pre_rmax, pre_vmax, pre_lmax;
    on_proxtrack pre_tr;
    int built;                 /* the grid for the next frame built behind the frame (crowd.c: build_behind) */
    uint32_t behind_n;         /* ... over these slots, */
    double behind_cell;        /* ... with this cell */
    uint16_t *gen;             /* each slot's generation (the high bits of its ids) */
    uint32_t used, live;
    uint32_t *freeslots;       /* slots given back, reused last in first out */
    uint32_t nfree;
    on_proxgrid grid;
    on_workers *workers;       /* p.threads > 1 */
    on_crowd_wstat *wstat;     /* one a thread */
    /* plan.c: agents waiting for a path (ids, in the order asked), the one being searched for */
    on_query *q;
    uint32_t *queue;
    uint32_t qhead, qcount;
    uint32_t cur;              /* the id being searched for, 0: none */
    uint32_t *changed;         /* the slots whose records the plan step changed (crowd.c takes their copies again) */
    uint32_t nchanged;
    double cur_radius;         /* the radius its search keeps from blocked space (0: a point's) */
    on_agent scratch;          /* boxes read around a path's corners (on_follow_clear_path) */
    on_crowd_stats st;
#ifdef ON_CROWD_PROFILE
    double prof[8], profcpu[8]; /* (bench only) seconds (wall, the caller's CPU) summed over frames: plan, snapshot, build, frame (near, avoid, moves), -, rest */
#endif
};

/* plan.c: the paths' searches. */
/* Queue agent a (slot `slot`) for a search to its goal (a search running for it is dropped first). */
void on_plan_request(on_crowd *c, uint32_t slot);
/* Forget any search for the agent of id (removed, or given a path). */
void on_plan_forget(on_crowd *c, uint32_t id);
/* Run the searches for up to the frame's budget of expansions: 0, or -1 (a path could not be stored).
 * The agents it changed (a path taken, a search failed) are noted in c->changed (at most once each). */
int on_plan_step(on_crowd *c);
/* The agent of id, or NULL. */
on_agent *on_crowd_find(const on_crowd *c, uint32_t id, uint32_t *slot);

/* boundary.c: the blocked space near an agent, read from the tree. */
/* Read the blocked boxes (tree cubes, unloaded tiles and the space beyond the tile grid) meeting the
 * cube of half-edge reach around a->pos into a->boxes: 0, or -1 (no memory: a->bound_valid stays 0). */
int on_boundary_read(const on_tree *t, on_agent *a, double reach);
/* The half-spaces of the agent's boundary as seen from position p: for each box that is not already
 * behind a nearer box's plane, the plane through its point nearest p, facing p; nearest first, at most
 * cap (of those within `within` of p). d[i] gets the distance from p to the box (negative inside). */
int on_boundary_planes(const on_agent *a, on_v3 p, double within, on_v3 *q, on_v3 *n, double *d, int cap);

/* lp.c: the linear program of ORCA in 3D. Find the velocity closest to `opt` inside the ball
 * (centre c, radius r) meeting planes[0..n): returns n on success, else the index of the plane
 * where it failed (*result then the best point for the planes before it). */
size_t on_lp3(const on_plane *planes, size_t n, on_v3 c, double r, on_v3 opt, int direction_opt, on_v3 *result);
/* When that fails at plane `fail`: the velocity minimising the largest violation of planes
 * [first_soft, n) while meeting planes [0, first_soft) (RVO's fourth program), from *result. */
void on_lp4(const on_plane *planes, size_t n, size_t first_soft, size_t fail, on_v3 c, double r, on_v3 *result,
            on_plane *scratch);

/* follow.c: the preferred velocity of an agent following its path (scale: the tree's leaf edge). */
on_v3 on_follow_pref(on_agent *a, double scale);
/* Backing off: half its top speed toward the point its diameter (at least a leaf) back along its path. */
on_v3 on_follow_retreat(const on_agent *a, double scale);
/* A path moved out to distance r from blocked space: a path planned on the tree passes at distance 0
 * from the blocked corners it turns round, which an agent of radius r cannot follow. Its corners and
 * points every min(r, 1 leaf) along it are pushed out of the boxes read around them (through scratch's
 * box buffer) along their nearest point's normal, or along every face of free space they lie on; the
 * points that moved are kept (with the corners, which stay where a push would leave free space), the
 * ends stay. *pts (capacity *cap points, *n of them) is replaced. 0, or -1 (no memory: unchanged). */
int on_follow_clear_path(const on_tree *t, on_agent *scratch, double **pts, size_t *n, size_t *cap, double r);

/* rules.c: the preferred velocity of the agent in slot `slot` this frame (a->pref's next value), from its
 * path following (a->fpref), its neighbours (a->nbr: their hot copies, c->hot) and its deadlock state
 * (updated here). */
on_v3 on_rules_pref(const on_crowd *c, on_agent *a, uint32_t slot);
/* The direction of segment seg of an agent's path (0 when it has no segment): what the others read of
 * its way (on_hot's dir, taken in the snapshot). */
on_v3 on_rules_path_dir(const on_agent *o, size_t seg);
/* A new goal or path: progress is measured from here, nothing held, nobody yielded to (still, yield,
 * hold and the rest of the deadlock state cleared). */
void on_rules_reset(on_agent *a);

/* avoidance.c: the new velocity of agent `self` (a->nvel), from the old state of every agent (its
 * neighbours' hot copies). */
typedef struct on_avoid_params {
    double dt, tau, tau_obst;
} on_avoid_params;
void on_avoid_select(const on_avoid_params *pp, on_agent *agents, const on_hot *hot, uint32_t self, const on_tree *t);
/* The largest speed towards a wall (or a neighbour's half of the gap) at distance s, from which full
 * braking at accel stops within s: u dt + u^2 / (2 accel) <= s. */
double on_brake_speed(double s, double accel, double dt);
/* The distance an agent at top speed covers before it can stop: what its boundary must cover. */
double on_agent_lookahead(const on_agent *a, double dt);

#endif
