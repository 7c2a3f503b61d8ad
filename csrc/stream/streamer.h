/*
 * streamer.h -- the streamer's state, shared by its three files (internal; the public API is in
 * octonav.h): streamer.c (create and destroy, agents, locks and pins, stats), streamer_worker.c (the
 * worker threads: reading and decoding tiles and tree files) and streamer_update.c (the rules an
 * update applies: loads needed, max_loaded, installs, unloads, events).
 *
 * Threads share only the job queue and the results list, under one mutex: a worker takes a tile
 * index, reads DIR/tiles/I_J_K.tile and decodes it into a fresh table (on_tile_decode, which touches
 * no tree), blocks in it the copy of the tree's obstacles over the tile made when the load was
 * queued (in a scratch tree of its own) and, with params.prepare, builds its box set
 * (on_boxset_build, which touches no tree either) and its line-of-sight masks (on_losmap_build, no tree
 * either: so no line of sight on the caller's thread pays for building them on first use), and with a
 * world graph set (on_streamer_set_graph)
 * reads and decodes the tile's graph file DIR/tiles/I_J_K.graph (on_tgraph_decode: no world graph
 * touched), then hands them back. Only on_streamer_update, on the caller's thread, changes the tree
 * and the world graph: it installs results still wanted (the tile, then its graph linked into the
 * world graph), frees the others, queues the loads now needed and unloads tiles no agent, lock or pin
 * keeps (their graphs dropped from the world graph). So a search or a route on the caller's thread
 * never sees a tile or a tile graph change under it, and a stale path is detected by the tile salts
 * that install and unload bump (a stale route by the world graph's revision).
 */
#ifndef OCTONAV_STREAMER_H
#define OCTONAV_STREAMER_H

#include "octonav_stream.h"
#include "boxes.h"
#include "obstacles.h"
#include "tree.h"

#include <pthread.h>

typedef struct result {
    struct result *next;
    uint32_t tile;
    on_status status;
    on_table table;
    uint8_t solid;
    on_boxset *boxes;  /* with params.prepare: the tile's box set, built beside the decode */
    double join_seconds; /* the worker's time building joins */
    on_boxset *joins;  /* with joins on (and not params.prepare): the same set, for the route planner's
                        * joins only (tile.joins, tree.h) */
    struct on_losmap *los; /* its line-of-sight masks (losmap.h), built beside the decode unless the
                            * tree's masks are off (on_tree_set_los_masks) or the tile is solid */
    struct on_celladj *adj; /* its cell adjacency (celladj.h), built beside the decode when the tree's
                             * adjacencies are on and the tile is not solid (a search on the caller's
                             * thread then never builds one) */
    on_table adjtab;    /* instead, when more loads were queued behind it: a copy of the table for a
                         * jjob (adj) that builds the adjacency and the masks after the loads;
                         * adj_later / los_later say which */
    int adj_later;
    int los_later;
    on_obstacle_copy *obs; /* the tree's obstacles over the tile when its load was queued (or NULL) */
    int applied;       /* 1: obs are blocked in table (and boxes built after), snap holds it as read */
    on_table snap;
    uint8_t snap_solid;
    int graph_read;    /* 1: the graph file was asked for (a world graph was set when the job was taken) */
    uint32_t tile_tag; /* the tile blob's identity (pack.blob_id): the tag its graph must carry */
    on_tgraph *graph;  /* its decoded graph, or NULL with gstatus / gerr saying why */
    on_status gstatus;
    char gerr[160];    /* the reason, without the path: "No such file or directory", "corrupt", ... */
} result;

/* A whole tree file to read on a worker (a world's hole, on_streamer_load_tree): queued, then done. */
typedef struct tjob {
    struct tjob *next;
    uint32_t id;
    on_tree *tree;      /* the result, NULL on failure */
    on_status status;
    char err[256];      /* on failure: "PATH: reason" */
    char path[];
} tjob;

/* A loaded tile's join set built again after its contents changed (an edit, an obstacle: any change
 * drops the set, tree.h): the caller's thread copies the tile's table, a worker builds the set from
 * the copy, and an update gives it to the tile when the tile's salt is still the copy's. The same job
 * with `adj` set builds a just installed tile's cell adjacency instead (a worker that had more loads
 * queued behind a tile hands the tile over without it, with a copy of its table: the tile is usable
 * sooner, the adjacency follows once no load is queued). */
typedef struct jjob {
    struct jjob *next;
    uint32_t tile, salt;
    on_table tab;
    uint8_t solid;
    uint8_t adj;        /* 1: a tile's builds after the loads (the cell adjacency, the masks), not the join set */
    uint8_t do_adj;     /* (adj) build the cell adjacency (into cadj) */
    uint8_t do_los;     /* (adj) build the line-of-sight masks (into lmap) */
    on_boxset *set;     /* the result, NULL when out of memory */
    struct on_celladj *cadj; /* (adj) the result, NULL when out of memory */
    struct on_losmap *lmap;  /* (do_los) the masks, NULL when out of memory */
    double seconds;     /* the worker's time building it */
    uint32_t copied;    /* (s->copying) slots of the tile's table copied into tab so far */
} jjob;

/* Slots of a tile's table the caller's thread copies for a rebuild job in one update (without wait):
 * a 512^3 terrain tile's table (~111,000 slots, 550 KB) copied whole took 2.1-2.6 ms of the game's
 * thread in one update at load (its fresh pages faulted in), the frame's worst; in pieces of 16,384
 * slots (80 KB, 0.2-0.5 ms at load 12) it takes 7 updates. */
#define ON_STREAM_COPY_SLOTS 16384u

typedef struct agent {
    double p[3];
    int live;
} agent;

typedef struct tstate {
    uint8_t state;      /* ON_TILE_* */
    uint8_t forced;
    uint32_t locks;
    uint32_t cand;      /* 1 + its index in this update's candidate list, 0 when not in it */
    uint8_t rejoin;     /* a jjob for it is queued, in flight or done and not yet adopted */
    uint32_t readj;     /* its cell adjacency jobs (jjob.adj) queued, in flight or done, not yet handled */
} tstate;

/* A tile and its distance to the nearest agent (load candidates, eviction candidates), and how many
 * agents stand in it (distance 0). */
typedef struct cand {
    uint32_t tile;
    double d;
    uint32_t inside;
} cand;

/* A queued load or a finished one being ordered (streamer_update.c): tiles agents stand in first
 * (tier 0: what their navigators wait in), the most agents first; then the other locked or pinned
 * tiles (tier 1: a goal's tile, what a search waits for); then the rest (tier 2); each tier nearest an
 * agent first, then as it was queued (pos; a finished load: its tile index). */
typedef struct qent {
    uint32_t tile, pos;
    int tier;
    uint32_t inside;
    double d;
} qent;

struct on_streamer {
    on_tree *t;         /* NULL once the tree was destroyed (on_streamer_detach) */
    uint32_t ntiles;    /* the tree's tile grid, copied: workers never read the tree */
    int grid[3], depth;
    char *dir;
    on_streamer_params p;
    tstate *tiles;
    agent *agents;
    uint32_t nagents, agentcap;
    uint32_t *loaded;   /* indices of loaded tiles (unordered) */
    size_t nloaded;
    uint32_t *pinned;   /* tiles locked or forced (unordered): update() visits these, not every tile */
    size_t npinned;
    size_t nqueued, nfailed;
    cand *cands;        /* scratch: tiles within load_padding of one update, then the loads among them,
                         * nearest first (capacity 2 ntiles) */
    size_t ncands;      /* the update's candidates (their tiles' tstate.cand set until its end) */
    cand *evict;        /* scratch: loaded tiles no rule needs now, farthest first (capacity ntiles) */
    qent *qord;         /* scratch: the queued loads in their new order (capacity ntiles) */
    uint32_t *waiting;  /* tiles held back by max_loaded in the last update */
    size_t nwaiting, evicted;
    size_t cancelled;   /* queued loads dropped before a worker took them, since creation */
    size_t deferred;    /* finished loads and unloads the last update left for later (the limits) */
    on_wgraph *graph;    /* on_streamer_set_graph's (caller's thread only), or NULL */
    on_stream_event *ev; /* events of the last update */
    size_t nev, evcap;
    int evlost;          /* an event could not be stored (out of memory) */
    /* shared with the workers, under mu */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    uint32_t *jobs;     /* ring of queued tile indices, capacity ntiles */
    on_obstacle_copy **jobobs; /* per tile: the obstacles over it when its load was queued (the worker
                                * blocks them before building its boxes), or NULL */
    on_tree *scratch;   /* without workers: the tree on_obstacles_apply_copy works in (made when needed) */
    size_t jhead, jcount;
    result *results;
    tjob *tjobs, *tdone; /* tree files queued (LIFO, order does not matter), and read */
    jjob *jjobs, *jdone; /* join sets to build again (taken after every tile load), and built */
    jjob *copying;      /* (the caller's thread) rebuild jobs whose table copy is under way, a slice an
                         * update (ON_STREAM_COPY_SLOTS); pushed to jjobs once copied */
    size_t inflight;    /* jobs taken by workers, not yet in results */
    int stop;
    int paused;         /* on_streamer_hold: the workers take no new tile job */
    int graphs;         /* read tile graph files beside the tiles (a world graph is set) */
    int los;            /* build each tile's line-of-sight masks beside its decode: the tree's masks
                         * are on (copied from the tree by every update, read by the workers) */
    int adj;            /* build each tile's cell adjacency beside its decode: the tree's adjacencies are
                         * on (copied from the tree by every update, read by the workers) */
    size_t masks_built, adj_built; /* tiles installed with the masks / the adjacency a worker built */
    int trim_due;       /* a worker finished a job since the last trim (streamer_worker.c: idle_trim),
                         * or an update installed, adopted or unloaded something (freed_since) */
    int freed_since;    /* (the caller's thread) an update freed something: the next one sets trim_due */
    double trim_at;     /* on_streamer_now() at the last trim */
    size_t trims;
    int trim_on_free;   /* on_streamer_set_trim_on_free */
    int trim_set;       /* the first update made (or left) glibc's trim setting */
    double trim_seconds;
    size_t graph_max;   /* their size limit (0: none) */
    size_t decoded;
    double decode_seconds;
    double join_seconds; /* of decode_seconds, the part spent building join sets */
    int joins;          /* build each tile's route join set beside its decode (unless p.prepare), and
                         * again on a worker once a change of the loaded tile dropped it */
    size_t rejoined;    /* join sets built again and adopted since creation */
    pthread_t *threads;
    int nthreads;
};

/* Turn the route join sets on or off for the loads queued from now on (off when created): with it
 * on (and params.prepare off) a worker also builds the box set of each tile it decodes and the install
 * gives it to the tile as its join set (tile.joins, tree.h), which the route planner's joins read
 * instead of building the tile's blocks themselves; any change of the tile drops it. */
void on_streamer_set_joins(on_streamer *s, int on);
/* The route join sets the workers built (on_streamer_set_joins): tiles holding a valid one now, their
 * bytes, the worker seconds spent building them since creation (beside decodes and rebuilds), and the
 * sets built again after a change and adopted. Caller's thread. */
void on_streamer_join_stats(on_streamer *s, size_t *tiles, size_t *bytes, double *seconds, size_t *rebuilt);

/* Hold (on != 0) or release the workers: while held they take no new tile load (a load in flight
 * finishes); an update that waits releases them first. The queue's order and its cancellations can
 * then be read as they are (on_streamer_queue): for tests. */
void on_streamer_hold(on_streamer *s, int on);
void on_streamer_trim_setting(on_streamer *s); /* (streamer_worker.c: made by the first update) */
/* The queued loads no worker took yet, in the order the workers will take them (into tiles, at most
 * cap; returns how many are queued). */
size_t on_streamer_queue(on_streamer *s, uint32_t *tiles, size_t cap);

/* streamer_worker.c */
/* Queue a rebuild of the join set of every loaded tile that lost it (joins on, params.prepare off;
 * one job a tile at a time), and of the cell adjacency of a loaded tile that has none and none coming
 * (the tree's adjacencies on, the tile not solid: an edit dropped it; one tile an update: its table's
 * copy is the caller's thread's work); without workers they are built here. With workers and without
 * wait the tables are copied in slices, ON_STREAM_COPY_SLOTS slots an update over the jobs in s->copying,
 * each job queued once its copy is whole (a job whose tile changed or left meanwhile is dropped, and the
 * tile found again by a later update); with wait the copies are made whole here. The caller holds no
 * lock. */
void on_streamer_queue_rejoins(on_streamer *s, int wait);
/* Give the tiles the join sets built (list: jdone taken under mu) whose tile is unchanged since its
 * copy; free the others. */
void on_streamer_adopt_rejoins(on_streamer *s, jjob *list);
/* Free a list of join jobs. */
void on_streamer_free_jjobs(jjob *list);
/* Queue the given jobs for the workers (the caller holds no lock). */
void on_streamer_push_jjobs(on_streamer *s, jjob *list);
/* Seconds on a monotonic clock (decode time in the stats). */
double on_streamer_now(void);
/* Seconds of the calling thread's CPU time (an update's publish_ms bound). */
double on_streamer_thread_now(void);
/* The worker thread's loop (arg: the streamer). */
void *on_streamer_worker(void *arg);
/* Queue a tile's load (the caller holds mu and checked max_loaded); without workers it loads here.
 * Either way the obstacles covering the tile then are blocked in it by the load (result.applied). */
void on_streamer_queue_load(on_streamer *s, uint32_t tile);
/* Trees read since the last update, as events; without workers the queued ones are read here. */
void on_streamer_report_trees(on_streamer *s, tjob *done);

/* The reason of a failed tile graph decode or link, named as the Lua route binding names it
 * (graph:add_tile): "corrupt", "version", "depth" (built for another depth), "out_of_memory". */
const char *on_streamer_graph_reason(on_status st);

/* Free a result (its tables, boxes, obstacle copy and graph). */
void on_streamer_free_result(result *r);

/* streamer_update.c */
/* Unload a loaded tile from the tree and the loaded list. */
void on_streamer_do_unload(on_streamer *s, uint32_t tile);
/* Record an event of this update (sets evlost when out of memory). */
void on_streamer_emit(on_streamer *s, uint32_t tile, int kind, on_status st);

/* A tile kept by a lock or force_load. */
static inline int on_streamer_is_pinned(const tstate *ts) { return ts->locks != 0 || ts->forced; }

#endif
