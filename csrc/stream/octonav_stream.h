/*
 * octonav_stream.h -- the public C API of the stream room (csrc/stream/): the path server (path
 * requests answered on worker threads) and the streamer (tiles loaded around agents). Part of
 * octonav.h (include that); on the search's and the world's (octonav_search.h, octonav_world.h).
 */
#ifndef OCTONAV_STREAM_API_H
#define OCTONAV_STREAM_API_H

#include "octonav_search.h"
#include "octonav_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- path server (pathserver.c): path requests answered on worker threads over one shared tree ---- */
/*
 * A path server owns N worker threads, each with its own query object (on_query_create) over the
 * same tree. The caller submits requests (start, goal, options) and collects finished results in
 * on_pathserver_update, on its own thread, in the order they finished. While requests are queued or
 * running the tree is read by the workers and must not change: edit it only while the server is idle
 * (on_pathserver_busy() == 0) or paused (on_pathserver_pause waits for the running requests and holds
 * the queued ones until on_pathserver_resume). Searches only read the tree (each query keeps its own
 * lookup cache; prepared box graphs are built by on_tree_prepare, never lazily by a search), so any
 * number of workers may read it at once.
 */
typedef struct on_pathserver on_pathserver;

typedef struct on_pathserver_params {
    int workers;             /* 0..64 threads; 0 runs the requests inside on_pathserver_update */
    size_t max_nodes;        /* each worker's query size, 2..2^30 (0: the default 262144) */
    size_t max_queued;       /* requests waiting or unread at most (0: no limit); beyond it submit
                              * fails with ON_BUFFER_SMALL */
} on_pathserver_params;

/* A finished request: what on_query_find reported for it. Owned by the server, valid until the next
 * on_pathserver_update or on_pathserver_destroy. */
typedef struct on_path_result {
    uint64_t id;             /* as returned by on_pathserver_submit */
    on_status status;        /* on_query_find's status (ON_NO_MEMORY: the result could not be kept) */
    on_query_info info;
    const double *path;      /* npath world points, x,y,z each (NULL when npath is 0) */
    size_t npath;
    const uint32_t *tiles;   /* the tiles the path depends on and their salts (on_query_path_tiles) */
    const uint32_t *salts;
    size_t ntiles;
} on_path_result;

/* The tree must outlive the server. */
ON_API on_status on_pathserver_create(const on_tree *t, const on_pathserver_params *p, on_pathserver **out);
/* Stops the workers (a running request finishes first), drops queued requests and frees everything. */
ON_API void on_pathserver_destroy(on_pathserver *ps);
/* Queue a search from a to b (world points) with options o (NULL: on_query_opts_default). A C
 * heuristic in o is called on worker threads. *id (may be NULL) gets the request's number (from 1).
 * ON_INVALID for a non-finite point; ON_BUFFER_SMALL beyond max_queued; ON_NO_MEMORY. */
ON_API on_status on_pathserver_submit(on_pathserver *ps, const double a[3], const double b[3],
                                      const on_query_opts *o, uint64_t *id);
/* Hand back the requests finished since the last call (with 0 workers: run every queued request
 * first). wait != 0: block until every submitted request has finished (a paused server runs nothing:
 * ON_FAILURE|ON_INVALID). *res / *n: the results, valid until the next update. */
ON_API on_status on_pathserver_update(on_pathserver *ps, int wait, const on_path_result **res, size_t *n);
/* Requests submitted and not yet handed back by on_pathserver_update. */
ON_API size_t on_pathserver_pending(on_pathserver *ps);
/* Nonzero while workers may be reading the tree: requests queued (not paused) or running (with 0
 * workers the tree is read only inside on_pathserver_update: never busy between calls). */
ON_API int on_pathserver_busy(on_pathserver *ps);
/* Let the running requests finish and start no new ones: on return the tree may be edited. */
ON_API void on_pathserver_pause(on_pathserver *ps);
ON_API void on_pathserver_resume(on_pathserver *ps);

/* ---- streaming (the streamer object) ------------------------------------------------------------ */
/* Tiles of a tree come and go around agents. Files (DIR/tiles/I_J_K.tile, tile blobs) are read and
 * decoded on worker threads; on_streamer_update, on the caller's thread, installs finished tiles,
 * starts the loads now needed and unloads far tiles. A tile is wanted when the distance from an agent
 * to the tile's box is <= load_padding (closed: a tile exactly load_padding away loads, on every
 * side), or it is locked or forced; a loaded tile stays while that distance is <= unload_padding for
 * some agent (unload_padding > load_padding), or it is locked or forced. A tree takes one streamer at
 * a time (a second on_streamer_create answers ON_INVALID). Destroying the tree stops its streamer
 * first: the workers are joined, queued loads dropped, and every streamer call answers ON_INVALID
 * (tile_state -1, stats zero) until on_streamer_destroy. Nothing else may change the tree's tiles
 * while the streamer runs. */
typedef struct on_streamer on_streamer;

typedef struct on_streamer_params {
    double load_padding;     /* world units, >= 0 */
    double unload_padding;   /* world units, > load_padding */
    int workers;             /* 0..16 threads; 0 decodes inside on_streamer_update */
    size_t max_loaded;       /* 0 = no limit; see on_streamer_update for how it yields */
    int prepare;             /* 1: workers also build each tile's search graph (on_tree_prepare) */
    size_t max_publish;      /* finished loads an update installs (or frees, when no longer wanted) at
                              * most, the rest left for the next updates (0 = no limit; an update that
                              * waits installs all) */
    size_t max_unloads;      /* tiles an update unloads at most (padding and max_loaded's evictions; the
                              * rest stay loaded for the next updates; 0 = no limit; force_unload is
                              * not counted) */
    double publish_ms;       /* an update stops installing and unloading once they took this many ms of
                              * the caller's thread CPU time (the first install always happens; the
                              * rest is left for the next updates, counted in deferred; 0 = no time
                              * bound; an update that waits does it all) */
} on_streamer_params;

enum { ON_TILE_UNLOADED = 0, ON_TILE_QUEUED = 1, ON_TILE_LOADED = 2, ON_TILE_FAILED = 3 };
enum { ON_EVENT_LOADED = 1, ON_EVENT_UNLOADED = 2, ON_EVENT_FAILED = 3, ON_EVENT_TREE_LOADED = 4,
       ON_EVENT_TREE_FAILED = 5, ON_EVENT_GRAPH_FAILED = 6 };

typedef struct on_stream_event {
    uint32_t tile;           /* for the TREE events: the id given to on_streamer_load_tree */
    int kind;                /* ON_EVENT_* */
    on_status status;        /* for the FAILED events: why (ON_IO, ON_CORRUPT, ON_NO_MEMORY, ...) */
    on_tree *tree;           /* ON_EVENT_TREE_LOADED: the tree read; the caller owns it from then on */
    char err[256];           /* ON_EVENT_TREE_FAILED: "PATH: reason"; ON_EVENT_GRAPH_FAILED: the reason
                              * alone ("No such file or directory", "corrupt", ...) */
} on_stream_event;

typedef struct on_streamer_stats {
    size_t agents, loaded, queued, failed, locked;
    size_t waiting;          /* tiles within load_padding of an agent that max_loaded held back */
    size_t evicted;          /* tiles unloaded early to make room under max_loaded, since creation */
    size_t cancelled;        /* queued loads dropped before a worker took them (no rule wanted the
                              * tile any more), since creation */
    size_t deferred;         /* finished loads and unloads the last update left for the next ones
                              * (max_publish, max_unloads) */
    size_t reading;          /* queued loads no worker finished yet (waiting for one, or being read) */
    size_t decoded;          /* tiles decoded since creation */
    double decode_seconds;   /* worker time spent reading and decoding them */
    size_t tree_bytes;       /* the tree's resident bytes now (on_tree_stats) */
    size_t masks_built;      /* tiles installed with line-of-sight masks a worker built beside the decode */
    size_t adjacency_built;  /* tiles installed with a cell adjacency a worker built beside the decode (the
                              * tree's adjacencies on: on_tree_set_adjacency), since creation */
    size_t trims;            /* times a worker gave the allocator's free pages back (malloc_trim, glibc
                              * only: going idle after work, at most once a second), since creation */
    double trim_seconds;     /* the workers' time in them */
} on_streamer_stats;

/* Creating marks every tile of t unloaded (its contents freed). */
ON_API on_status on_streamer_create(on_tree *t, const char *dir, const on_streamer_params *p, on_streamer **out);
ON_API void on_streamer_destroy(on_streamer *s); /* stops and joins the workers; tiles stay as they are */
ON_API on_status on_streamer_add_agent(on_streamer *s, const double p[3], uint32_t *id);
ON_API on_status on_streamer_move_agent(on_streamer *s, uint32_t id, const double p[3]);
ON_API on_status on_streamer_remove_agent(on_streamer *s, uint32_t id);
/* 1 when a live agent's position lies in the box lo..hi (bounds included), else 0: a hole's rule
 * (lua/octonav/streamer.lua) asks it every update, one loop in C over the agents instead of Lua's. */
/* The position of live agent id in *p (ON_FAILURE | ON_INVALID: no such agent). */
ON_API on_status on_streamer_agent_position(const on_streamer *s, uint32_t id, double p[3]);
ON_API int on_streamer_agents_in(const on_streamer *s, const double lo[3], const double hi[3]);
ON_API on_status on_streamer_lock(on_streamer *s, uint32_t tile);   /* counted; a locked tile loads and stays */
ON_API on_status on_streamer_unlock(on_streamer *s, uint32_t tile);
ON_API on_status on_streamer_force_load(on_streamer *s, uint32_t tile);   /* pinned until force_unload */
ON_API on_status on_streamer_force_unload(on_streamer *s, uint32_t tile); /* unpins; unloads now unless locked */
ON_API on_status on_streamer_retry(on_streamer *s, uint32_t tile);        /* a failed tile may load again */
ON_API int on_streamer_tile_state(const on_streamer *s, uint32_t tile);   /* ON_TILE_*, -1 for a bad tile */
/* Read a whole tree file (a world's hole: small trees the streamer does not manage) on a worker; a
 * later update reports it as ON_EVENT_TREE_LOADED / ON_EVENT_TREE_FAILED with `id` in .tile (with
 * wait, the update that waits). Non-regular files (a FIFO) fail at once (fileio.c), never block. */
ON_API on_status on_streamer_load_tree(on_streamer *s, uint32_t id, const char *path);
/* Tile graphs streamed with their tiles (w NULL: none, the default). With a world graph w of the same
 * grid (depth and tiles; else ON_INVALID), the worker that reads a tile also reads its graph file
 * (DIR/tiles/I_J_K.graph beside it, a regular file of at most max_bytes, 0 = no limit) and decodes
 * it (on_tgraph_decode at the tree's depth); the update that installs the tile adds the graph to w
 * (on_wgraph_add_tile), and every unload of a tile (update, eviction, force_unload) removes its graph
 * from w. A graph that cannot be read, decoded or added leaves its tile loaded without one and is an
 * ON_EVENT_GRAPH_FAILED event (after the tile's ON_EVENT_LOADED). Set it before the first update; w
 * must stay alive until it is unset or the streamer destroyed. */
struct on_wgraph; /* (the world graph, below) */
ON_API on_status on_streamer_set_graph(on_streamer *s, struct on_wgraph *w, size_t max_bytes);
/* Who gives the C allocator's free pages back (glibc). on = 0, the default: with workers, they do (at
 * most once a second, idle after work: stats.trims) and the first update turns glibc's own trim at a
 * free off for the process (mallopt M_TRIM_THRESHOLD, once; it also fixes glibc's mmap threshold where
 * it is): a free on the caller's thread no longer shrinks the heap there, which with a worker on
 * another CPU waits for it (the mappings flushed on every CPU the process runs on: 2-3 ms inside a
 * frame on a 2-vCPU VM). on = 1: the process's setting left as it is. Set it before the first update. */
ON_API void on_streamer_set_trim_on_free(on_streamer *s, int on);
/* The workers take queued loads in this order, made again by every update: tiles agents stand in
 * first, the most agents first (what their navigators wait in: a first move waits for the agent's
 * own tile alone), then the other tiles a lock or a pin keeps (a goal's tile, what a search waits
 * for), then the rest, each group nearest an agent first, then as queued; a queued load no rule wants
 * any more (no lock or pin, beyond load_padding of every agent) leaves the queue (the tile back to
 * unloaded, stats.cancelled) before a worker reads it for nothing. Without wait and with workers, an
 * update installs at most max_publish finished loads, in the same order (whatever order the workers
 * read them in), and unloads at most max_unloads tiles: the caller's thread's work per update is
 * bounded (without workers the update reads the tiles itself, and no limit applies). A loaded tile
 * whose cell adjacency or join set an edit dropped has its table copied for a worker's rebuild in
 * slices, 16,384 slots an update (all at once when waiting).
 * wait != 0: block until every load queued so far has finished and install it in this call.
 * max_loaded counts every loaded or queued tile. Locked and forced tiles always load (they may take
 * the count above the limit). Above the limit, and whenever a needed tile finds no room, a loaded
 * tile that only unload_padding keeps is unloaded (farthest first, an UNLOADED event). Tiles within
 * load_padding of an agent load nearest first while loaded + queued < max_loaded; the rest wait,
 * listed by on_streamer_waiting (and counted in stats.waiting) until an update finds room.
 * *ev / *nev: what changed, owned by the streamer, valid until the next update (ON_NO_MEMORY in the
 * status when an event could not be recorded). */
ON_API on_status on_streamer_update(on_streamer *s, int wait, const on_stream_event **ev, size_t *nev);
ON_API void on_streamer_stats_get(on_streamer *s, on_streamer_stats *st);
/* The tiles the last update held back because of max_loaded (owned by the streamer, valid until the
 * next update). */
ON_API void on_streamer_waiting(const on_streamer *s, const uint32_t **tiles, size_t *n);

/* The streamer bound to t (on_streamer_create), or NULL: a tree takes one at a time. */
ON_API struct on_streamer *on_tree_streamer(const on_tree *t);

#ifdef __cplusplus
}
#endif
#endif
