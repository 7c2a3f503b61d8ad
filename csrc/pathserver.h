/*
 * pathserver.h -- public C API: path requests answered on worker threads over one shared tree.
 *
 * A path server owns N worker threads, each with its own query object (on_query_create) over the
 * same tree. The caller submits requests (start, goal, options) and collects finished results in
 * on_pathserver_update, on its own thread, in the order they finished. While requests are queued or
 * running the tree is read by the workers and must not change: edit it only while the server is idle
 * (on_pathserver_busy() == 0) or paused (on_pathserver_pause waits for the running requests and holds
 * the queued ones until on_pathserver_resume). Searches only read the tree (each query keeps its own
 * lookup cache; prepared box graphs are built by on_tree_prepare, never lazily by a search), so any
 * number of workers may read it at once.
 */
#ifndef OCTONAV_PATHSERVER_H
#define OCTONAV_PATHSERVER_H

#include "octonav.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif
#endif
