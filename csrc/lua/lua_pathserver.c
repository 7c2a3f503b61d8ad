/*
 * lua_pathserver.c -- the `octonav.pathserver` userdata: path requests on worker threads (pathserver.c).
 *
 * ps = core.pathserver.new(tree, {workers = 2, max_nodes = 262144, max_queued = 0}); id = ps:submit(
 * start, goal, opts) with q:find's options (but no Lua heuristic: searches run off the Lua thread);
 * ps:update([wait]) -> { {id =, path =, info =}, ... } with path and info as q:find returns them.
 * The server keeps its tree userdata alive (user value 1) and, from submit until update has handed
 * every result back (or pause), holds the tree busy (on_lhandle.busy, as a running search does): tree
 * edits, close and a streamer's update raise then, so no worker ever reads a tree being changed.
 * From new until the server is closed (or collected) the tree is also held (on_lhandle.held): closing
 * it raises "tree is in use by a path server" even while the server is paused or idle, since a resume
 * or the next submit would search it.
 */
#include "lua_util.h"

#include <math.h>
#include <string.h>

#define PATHSERVER_MT "octonav.pathserver"
#define DEFAULT_MAX_NODES 262144

typedef struct lpathserver {
    on_lhandle h;          /* h.p: the on_pathserver */
    const on_tree *tree;
    on_lhandle *tree_h;    /* the tree's handle (kept alive by user value 1; finalized after us) */
    int pinned;            /* counted in the tree's busy */
    int paused;
} lpathserver;

/* Hold the tree busy while requests are out and the server is not paused; release it otherwise. */
static void sync_pin(lpathserver *u)
{
    int want = u->h.p && !u->paused && on_pathserver_pending(u->h.p) > 0;
    if (want == u->pinned) return;
    if (want) u->tree_h->busy++;
    else u->tree_h->busy--;
    u->pinned = want;
}

static void ps_destroy(on_lhandle *h)
{
    lpathserver *u = (lpathserver *)h;
    on_pathserver_destroy(h->p);
    h->p = NULL;
    sync_pin(u);
    u->tree_h->held--;
}

static void ps_describe(lua_State *L, on_lhandle *h)
{
    lua_pushfstring(L, "octonav.pathserver: %I pending%s", (lua_Integer)on_pathserver_pending(h->p),
                    ((lpathserver *)h)->paused ? ", paused" : "");
}

static const on_lclass ps_class = {PATHSERVER_MT, "pathserver is in use", ps_destroy, ps_describe};

static lpathserver *checkps(lua_State *L, int idx)
{
    return (lpathserver *)on_lua_checkhandle(L, idx, &ps_class);
}

static const char *const new_opts[] = {"workers", "max_nodes", "max_queued", NULL};

static int l_new(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    on_lua_checkopts(L, 2, "octonav.pathserver.new", new_opts);
    lua_Integer w = on_lua_optinteger(L, 2, "workers", 2);
    lua_Integer mn = on_lua_optinteger(L, 2, "max_nodes", DEFAULT_MAX_NODES);
    lua_Integer mq = on_lua_optinteger(L, 2, "max_queued", 0);
    if (w < 0 || w > 64) return luaL_error(L, "octonav.pathserver.new: option 'workers' must be 0..64");
    if (mn < 2 || mn > (1 << 30)) return luaL_error(L, "octonav.pathserver.new: option 'max_nodes' must be 2..2^30");
    if (mq < 0) return luaL_error(L, "octonav.pathserver.new: option 'max_queued' must be >= 0");
    lpathserver *u = (lpathserver *)on_lua_newhandle(L, &ps_class, sizeof *u, 1);
    on_tree *t = on_lua_checktree(L, 1); /* after the options and the allocation (lua_util.h, rule (a)) */
    u->tree = t;
    u->tree_h = on_lua_testhandle(L, 1, &on_lua_tree_class);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    on_pathserver_params p = {(int)w, (size_t)mn, (size_t)mq};
    on_status s = on_pathserver_create(t, &p, (on_pathserver **)&u->h.p);
    if (!on_ok(s)) return luaL_error(L, "octonav.pathserver.new: %s", on_status_string(s));
    u->tree_h->held++; /* released by ps_destroy, which runs only once h.p is set */
    u->tree_h->held_msg = "tree is in use by a path server";
    return 1;
}

static const char *const find_opts[] = {"weight", "size_bias", "any_angle", "refine", "smooth", "max_expansions",
                                        "partial", "escalate", "direct", "relax", "points", "graph", "radius", NULL};

/* q:find's options (lua_query.c) without the Lua heuristic, which cannot run on a worker thread. */
static void read_opts(lua_State *L, int idx, on_query_opts *o)
{
    if (lua_istable(L, idx) && lua_getfield(L, idx, "heuristic") != LUA_TNIL)
        luaL_error(L, "submit: option 'heuristic' is not supported (searches run on worker threads)");
    if (lua_istable(L, idx)) lua_pop(L, 1);
    on_lua_checkopts(L, idx, "submit", find_opts);
    on_lua_query_opts(L, idx, o);
}

/* ps:submit(start, goal [, opts]) -> id | nil, "queue_full" */
static int l_submit(lua_State *L)
{
    luaL_checkudata(L, 1, PATHSERVER_MT);
    double a[3], b[3];
    on_lua_checkpoint(L, 2, "start", a);
    on_lua_checkpoint(L, 3, "goal", b);
    on_query_opts o;
    read_opts(L, 4, &o);
    lpathserver *u = checkps(L, 1); /* after the arguments (rule (a)) */
    uint64_t id;
    on_status s = on_pathserver_submit(u->h.p, a, b, &o, &id);
    if (s & ON_NO_MEMORY) return luaL_error(L, "submit: out of memory");
    if (s & ON_BUFFER_SMALL) {
        lua_pushnil(L);
        lua_pushliteral(L, "queue_full");
        return 2;
    }
    sync_pin(u);
    lua_pushinteger(L, (lua_Integer)id);
    return 1;
}

/* One result as {id =, path =, info =}, path and info as q:find returns them (the result's record of
 * its tree and tiles attached as lua_query.c does). */
static void push_result(lua_State *L, int tree_idx, const on_tree *t, const on_path_result *r)
{
    on_status s = r->status;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)r->id);
    lua_setfield(L, -2, "id");
    int has_path = r->npath > 0, rec = 0;
    if (has_path) {
        on_lua_result_record(L, tree_idx, r->tiles, r->salts, r->ntiles);
        rec = lua_gettop(L);
        lua_createtable(L, (int)r->npath, 0);
        for (size_t i = 0; i < r->npath; i++) {
            on_lua_pushpoint(L, r->path + 3 * i);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        on_lua_result_attach(L, -1, rec);
        on_lua_setpath(L);
        lua_setfield(L, -3, "path");
    }
    lua_createtable(L, 0, 8);
    lua_pushstring(L, on_ok(s) ? "found" : (s & ON_PARTIAL) ? "partial" : "failed");
    lua_setfield(L, -2, "status");
    if (!on_ok(s)) {
        lua_pushstring(L, on_lua_query_reason(s, r->info.which));
        lua_setfield(L, -2, "reason");
    }
    if (has_path) {
        on_lua_setnum(L, "length", r->info.length);
        on_lua_setint(L, "cells", (lua_Integer)r->info.cells);
    }
    on_lua_setint(L, "expansions", (lua_Integer)r->info.expansions);
    on_lua_setint(L, "visited", (lua_Integer)r->info.visited);
    if (r->info.graph) {
        lua_pushstring(L, r->info.graph == ON_GRAPH_BOXES ? "boxes" : "cells");
        lua_setfield(L, -2, "graph");
    }
    if ((s & ON_BLOCKED) && isfinite(r->info.nearest[0])) {
        on_lua_pushpoint(L, r->info.nearest);
        lua_setfield(L, -2, "nearest");
    }
    if (s & (ON_LOADING | ON_UNLOADED)) { /* the tile waited for, or an end's unloaded tile */
        int ijk[3];
        on_tree_tile_coords(t, r->info.loading_tile, ijk);
        on_lua_pushint3(L, ijk);
        lua_setfield(L, -2, "tile");
    }
    if (rec) on_lua_result_attach(L, -1, rec);
    on_lua_setinfo(L);
    lua_setfield(L, -2 - (rec ? 1 : 0), "info");
    if (rec) lua_pop(L, 1);
}

typedef struct update_ctx {
    lpathserver *u;
    const on_path_result *r;
    size_t n;
} update_ctx;

/* (pinned: the tables are built from the server's results, rule (b); its tree is held by it) */
static int update_body(lua_State *L, void *ctx)
{
    const update_ctx *x = ctx;
    lpathserver *u = x->u;
    const on_path_result *r = x->r;
    size_t n = x->n;
    lua_getiuservalue(L, 1, 1);
    int tree_idx = lua_gettop(L);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        luaL_checkstack(L, 8, "update: too many results");
        push_result(L, tree_idx, u->tree, &r[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* ps:update([wait]) -> array of results finished since the last call, in the order they finished
 * (wait = true: every submitted request is in it). */
static int l_update(lua_State *L)
{
    lpathserver *u = checkps(L, 1);
    int wait = lua_toboolean(L, 2);
    update_ctx x = {u, NULL, 0};
    on_status s = on_pathserver_update(u->h.p, wait, &x.r, &x.n);
    if (s & ON_NO_MEMORY) return luaL_error(L, "update: out of memory");
    if (s & ON_INVALID) return luaL_error(L, "update: waiting on a paused path server would never end (resume it first)");
    sync_pin(u);
    on_lhandle *h = &u->h;
    return on_lua_pinned(L, &h, 1, update_body, &x);
}

/* ps:pending() -> requests submitted and not yet handed back */
static int l_pending(lua_State *L)
{
    lpathserver *u = checkps(L, 1);
    lua_pushinteger(L, (lua_Integer)on_pathserver_pending(u->h.p));
    return 1;
}

/* ps:pause(): running requests finish, queued ones wait; the tree may be edited until resume. */
static int l_pause(lua_State *L)
{
    lpathserver *u = checkps(L, 1);
    on_pathserver_pause(u->h.p);
    u->paused = 1;
    sync_pin(u);
    return 0;
}

static int l_resume(lua_State *L)
{
    lpathserver *u = checkps(L, 1);
    u->paused = 0;
    on_pathserver_resume(u->h.p);
    sync_pin(u);
    return 0;
}

static const luaL_Reg methods[] = {{"submit", l_submit}, {"update", l_update}, {"pending", l_pending},
                                   {"pause", l_pause},   {"resume", l_resume}, {NULL, NULL}};
static const luaL_Reg funcs[] = {{"new", l_new}, {NULL, NULL}};

int on_lua_pathserver_open(lua_State *L)
{
    on_lua_newclass(L, &ps_class, methods);
    luaL_newlib(L, funcs);
    return 1;
}
