/*
 * lua_query.c -- the `octonav.query` userdata: path searches over a tree (search.c). q:corridor() and
 * q:visited([max]) read back what the last search used (search_corridor.c); q:trim() cuts its pool back.
 * A query keeps its tree userdata alive (user value 1) and the Lua heuristic of the running search
 * (user value 2). A tree closed under a query is detected before the core is called. Failures are
 * results (nil, info with a reason); misuse raises. A Lua heuristic that raises aborts the search
 * with its message and leaves the query reusable.
 */
#include "lua_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* lua_areas.c: the list of areas of opts.areas, and the tree's set_areas / areas methods (declared
 * here until lua_util.h lists them) */
on_area *on_lua_checkareas(lua_State *L, int idx, const char *what, size_t *n);
int on_lua_areas_open(lua_State *L);
/* lua_obstacles.c: the tree's add_obstacle / remove_obstacle / obstacles methods (the same) */
int on_lua_obstacles_open(lua_State *L);

#define QUERY_MT "octonav.query"
#define DEFAULT_MAX_NODES 262144

typedef struct lquery {
    on_lhandle h;         /* h.p: the on_query; h.busy: a search of this query is running */
    const on_tree *tree;  /* the tree it was made for, to detect a closed tree */
    lua_State *L;         /* set while the core runs, for the Lua heuristic */
    int fidx;             /* the heuristic function's stack index in L while the core runs */
    int herr;             /* the heuristic failed: 1 its error value is on top of L, 2 no stack space */
    int started;
    size_t max_nodes;
    size_t cap;           /* result buffer (world points) */
    double *buf;
} lquery;

static void query_destroy(on_lhandle *h)
{
    lquery *u = (lquery *)h;
    on_query_destroy(h->p);
    free(u->buf);
    u->buf = NULL;
    u->cap = 0;
}

static void query_describe(lua_State *L, on_lhandle *h)
{
    lquery *u = (lquery *)h;
    lua_pushfstring(L, "octonav.query: %s, %I nodes", h->busy ? "running" : u->started ? "sliced search started" : "idle",
                    (lua_Integer)u->max_nodes);
}

static const on_lclass query_class = {QUERY_MT, "query is running", query_destroy, query_describe};

/* The query for a call that runs, restarts or reads its search: refused while it runs (from its own
 * heuristic), since the core's search state is in use. */
static lquery *checkq_idle(lua_State *L, int idx, const char *fname)
{
    return (lquery *)on_lua_checkidle(L, idx, &query_class, fname);
}

/* 1 when the tree the query reads is still open. */
static int tree_alive(lua_State *L, int qidx, const lquery *u)
{
    lua_getiuservalue(L, qidx, 1);
    int ok = on_lua_testtree(L, -1) == u->tree;
    lua_pop(L, 1);
    return ok;
}

static const char *const new_opts[] = {"max_nodes", "auto_trim", NULL};

static int l_new(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    on_lua_checkopts(L, 2, "octonav.query.new", new_opts);
    lua_Integer maxn = on_lua_optinteger(L, 2, "max_nodes", DEFAULT_MAX_NODES);
    int auto_trim = on_lua_optboolean(L, 2, "auto_trim", 1); /* (false: the pool is cut by q:trim() only) */
    if (maxn < 2 || maxn > (1 << 30)) return luaL_error(L, "octonav.query.new: max_nodes must be 2..2^30");
    lquery *u = (lquery *)on_lua_newhandle(L, &query_class, sizeof *u, 2);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    on_tree *t = on_lua_checktree(L, 1); /* after the options and the allocation (lua_util.h, rule (a)) */
    on_query *q;
    on_status s = on_query_create(t, (size_t)maxn, &q);
    if (!on_ok(s)) return luaL_error(L, "octonav.query.new: %s", on_status_string(s));
    on_query_hold_trim(q, !auto_trim);
    u->h.p = q;
    u->tree = t;
    u->max_nodes = (size_t)maxn;
    return 1;
}

/* Describe a bad heuristic result for the error message: the number, or the type (and a short string). */
static const char *describe_value(lua_State *L, int idx)
{
    if (lua_type(L, idx) == LUA_TNUMBER) return luaL_tolstring(L, idx, NULL);
    if (lua_type(L, idx) == LUA_TSTRING) return lua_pushfstring(L, "string \"%s\"", lua_tostring(L, idx));
    return luaL_typename(L, idx);
}

/* Called protected by lua_heuristic: the Lua function and its 7 arguments are on the stack; leaves
 * the checked number. Any error in here (the function's, a bad result, memory) is caught by the pcall. */
static int call_heuristic(lua_State *L)
{
    lua_call(L, 7, 1);
    int isnum;
    double h = (double)lua_tonumberx(L, -1, &isnum);
    if (!isnum || !(h >= 0) || !isfinite(h))
        return luaL_error(L, "heuristic must return a finite number >= 0 (got %s)", describe_value(L, -1));
    return 1;
}

/* The core's heuristic callback: calls the Lua function at u->fidx with world coordinates. Nothing may
 * raise through the C search (it would be left half done): the call is protected, and a failure stops
 * the search (NaN) with the error value left on top of L for run() to raise once the core returned. */
static double lua_heuristic(void *ud, const double p[3], const double goal[3], double size)
{
    lquery *u = ud;
    lua_State *L = u->L;
    if (u->herr) return NAN;
    if (!lua_checkstack(L, 10)) {
        u->herr = 2;
        return NAN;
    }
    const on_tree_params *tp = on_tree_get_params(u->tree);
    lua_pushcfunction(L, call_heuristic);
    lua_pushvalue(L, u->fidx);
    for (int i = 0; i < 3; i++) lua_pushnumber(L, tp->origin[i] + p[i] * tp->scale);
    for (int i = 0; i < 3; i++) lua_pushnumber(L, tp->origin[i] + goal[i] * tp->scale);
    lua_pushnumber(L, size * tp->scale);
    if (lua_pcall(L, 8, 1, 0) != LUA_OK) {
        u->herr = 1;
        return NAN;
    }
    double h = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
    return h / tp->scale;
}

static const char *const find_opts[] = {"weight", "size_bias", "any_angle", "refine", "smooth",
                                        "max_expansions", "partial", "heuristic", "escalate", "direct",
                                        "relax", "points", "graph", "areas", "radius", NULL};

/* The search options of q:find other than the heuristic, from the table at idx (checked for unknown
 * names by the caller): shared with ps:submit (lua_pathserver.c). */
void on_lua_query_opts(lua_State *L, int idx, on_query_opts *o)
{
    on_query_opts_default(o);
    o->weight = on_lua_optnumber(L, idx, "weight", o->weight);
    if (o->weight < 0) luaL_error(L, "option 'weight' must be >= 0");
    o->size_bias = on_lua_optnumber(L, idx, "size_bias", 0.0);
    o->any_angle = on_lua_optboolean(L, idx, "any_angle", 0);
    o->refine = on_lua_optboolean(L, idx, "refine", 1);
    o->partial = on_lua_optboolean(L, idx, "partial", 0);
    o->direct = on_lua_optboolean(L, idx, "direct", o->direct);
    lua_Integer rx = on_lua_optinteger(L, idx, "relax", (lua_Integer)o->relax);
    if (rx < 0 || rx > 100) luaL_error(L, "option 'relax' must be an integer 0..100");
    o->relax = (int)rx;
    lua_Integer me = on_lua_optinteger(L, idx, "max_expansions", 0);
    if (me < 0) luaL_error(L, "option 'max_expansions' must be >= 0");
    o->max_expansions = (size_t)me;
    lua_Integer esc = on_lua_optinteger(L, idx, "escalate", (lua_Integer)o->escalate);
    if (esc < 0) luaL_error(L, "option 'escalate' must be >= 0");
    o->escalate = (size_t)esc;
    o->radius = on_lua_optnumber(L, idx, "radius", 0.0);
    if (!(o->radius >= 0) || !isfinite(o->radius)) luaL_error(L, "option 'radius' must be a finite number >= 0");
    /* (the strings in the order of the ON_SMOOTH_*, ON_POINTS_* and ON_GRAPH_* values) */
    static const char *const smooth[] = {"none", "greedy", "binary", NULL};
    static const char *const points[] = {"face", "centre", NULL};
    static const char *const graph[] = {"auto", "cells", "boxes", NULL};
    o->smooth = on_lua_optchoice(L, idx, "smooth", smooth, o->smooth, "\"none\", \"greedy\" or \"binary\"");
    o->points = on_lua_optchoice(L, idx, "points", points, o->points, "\"face\" or \"centre\"");
    o->graph = on_lua_optchoice(L, idx, "graph", graph, o->graph, "\"auto\", \"cells\" or \"boxes\"");
    if (o->graph == ON_GRAPH_BOXES && (o->any_angle || o->points != ON_POINTS_FACE))
        luaL_error(L, "option 'graph' = \"boxes\" needs face points without any_angle");
}

/* Options table at idx -> core options. Leaves the heuristic (a function or nil: the caller sets
 * o->heuristic and stores it as the query's user value 2 once the query is taken) and the areas'
 * buffer (o->areas: keep it there until the search has started) on the stack. */
static void read_opts(lua_State *L, int idx, on_query_opts *o)
{
    on_lua_checkopts(L, idx, "find", find_opts);
    on_lua_query_opts(L, idx, o);
    if (lua_isnoneornil(L, idx)) lua_pushnil(L);
    else lua_getfield(L, idx, "heuristic");
    if (!lua_isnil(L, -1) && !lua_isfunction(L, -1)) luaL_error(L, "option 'heuristic' must be a function");
    if (lua_isnoneornil(L, idx)) lua_pushnil(L);
    else lua_getfield(L, idx, "areas");
    o->areas = on_lua_checkareas(L, -1, "option 'areas'", &o->nareas);
    lua_remove(L, -2);
}

const char *on_lua_query_reason(on_status s, int which)
{
    if (s & ON_LOADING) return "loading";
    if (s & ON_UNLOADED) return "unloaded"; /* an end in a tile not loaded (info.tile) */
    if (s & ON_OUTSIDE) return which ? "goal_outside" : "start_outside";
    if (s & ON_BLOCKED) return which ? "goal_blocked" : "start_blocked";
    if (s & ON_UNREACHABLE) return "unreachable";
    if (s & ON_OUT_OF_NODES) return "out_of_nodes";
    if (s & ON_BUDGET) return "budget";
    if (s & ON_STALE) return "tree_changed";
    if (s & ON_UNPREPARED) return "not_prepared";
    if (s & ON_NO_MEMORY) return "out_of_memory";
    return "invalid";
}

/* Push the record of what the finished search's result depends on (lua_path.c): the query's tree
 * (user value 1) and the tiles it read with their salts. */
static void push_record(lua_State *L, int qidx, lquery *u)
{
    size_t n = 0;
    on_query_path_tiles(u->h.p, NULL, NULL, 0, &n);
    /* a Lua buffer, not malloc: pushing the record may raise (memory) and must not leak it */
    uint32_t *tiles = lua_newuserdatauv(L, (n ? n : 1) * 2 * sizeof *tiles, 0);
    on_query_path_tiles(u->h.p, tiles, tiles + n, n, &n);
    lua_getiuservalue(L, qidx, 1);
    on_lua_result_record(L, -1, tiles, tiles + n, n);
    lua_replace(L, -3);
    lua_pop(L, 1);
}

/* Push tile index `tile` of the query's tree as {i, j, k}. */
static void push_tile(lua_State *L, const lquery *u, uint32_t tile)
{
    int ijk[3];
    on_tree_tile_coords(u->tree, tile, ijk);
    on_lua_pushint3(L, ijk);
}

/* The tile a search stopped at (ON_LOADING) waits for, as {i, j, k} (read before anything is pushed). */
static void loading_tile(const lquery *u, int ijk[3])
{
    on_query_info info;
    size_t np;
    on_query_finalize(u->h.p, NULL, 0, &np, &info);
    on_tree_tile_coords(u->tree, info.loading_tile, ijk);
}

/* A failed result made here (not by the core): nil, { status = "failed", reason = reason } with the
 * info metatable; the loading tile when the reason is "loading". */
static int push_failure(lua_State *L, const lquery *u, const char *reason)
{
    int loading = strcmp(reason, "loading") == 0, ijk[3];
    if (loading) loading_tile(u, ijk);
    lua_pushnil(L);
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "failed");
    lua_setfield(L, -2, "status");
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "reason");
    if (loading) {
        on_lua_pushint3(L, ijk);
        lua_setfield(L, -2, "tile");
    }
    on_lua_setinfo(L);
    return 2;
}

/* Push path (or nil) and info for a finished search; returns 2. */
static int push_result(lua_State *L, int qidx, lquery *u)
{
    size_t n = 0;
    on_query_info info;
    on_status s = on_query_finalize(u->h.p, u->buf, u->cap, &n, &info);
    if ((s & ON_BUFFER_SMALL) && n > 0) {
        double *bigger = realloc(u->buf, n * 3 * sizeof *bigger);
        if (!bigger) return luaL_error(L, "query: out of memory");
        u->buf = bigger;
        u->cap = n;
        s = on_query_finalize(u->h.p, u->buf, u->cap, &n, &info);
    }
    if (s & ON_NO_MEMORY) return luaL_error(L, "query: out of memory");
    int has_path = n > 0 && (on_ok(s) || (s & ON_PARTIAL));
    int rec = 0;
    if (has_path) {
        push_record(L, qidx, u);
        rec = lua_gettop(L);
        lua_createtable(L, (int)n, 0);
        for (size_t i = 0; i < n; i++) {
            on_lua_pushpoint(L, u->buf + 3 * i);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        on_lua_result_attach(L, -1, rec);
        on_lua_setpath(L);
    } else {
        lua_pushnil(L);
    }
    lua_createtable(L, 0, 8);
    lua_pushstring(L, on_ok(s) ? "found" : (s & ON_PARTIAL) ? "partial" : "failed");
    lua_setfield(L, -2, "status");
    if (!on_ok(s)) {
        lua_pushstring(L, on_lua_query_reason(s, info.which));
        lua_setfield(L, -2, "reason");
    }
    if (has_path) {
        lua_pushnumber(L, info.length);
        lua_setfield(L, -2, "length");
        lua_pushinteger(L, (lua_Integer)info.cells);
        lua_setfield(L, -2, "cells");
        if (info.areas) { /* the cost under the areas, when there were any */
            lua_pushnumber(L, info.cost);
            lua_setfield(L, -2, "cost");
        }
    }
    lua_pushinteger(L, (lua_Integer)info.expansions);
    lua_setfield(L, -2, "expansions");
    lua_pushinteger(L, (lua_Integer)info.visited);
    lua_setfield(L, -2, "visited");
    if (info.graph) {
        lua_pushstring(L, info.graph == ON_GRAPH_BOXES ? "boxes" : "cells");
        lua_setfield(L, -2, "graph");
    }
    if ((s & ON_BLOCKED) && isfinite(info.nearest[0])) {
        on_lua_pushpoint(L, info.nearest);
        lua_setfield(L, -2, "nearest");
    }
    if (s & (ON_LOADING | ON_UNPREPARED | ON_UNLOADED)) { /* the tile it waits for, the one not prepared,
                                                          * or an end's unloaded one */
        push_tile(L, u, info.loading_tile);
        lua_setfield(L, -2, "tile");
    }
    if (rec) on_lua_result_attach(L, -1, rec);
    on_lua_setinfo(L);
    return 2;
}

/* Seconds on the monotonic clock core.clock reads (q:step_until's deadline is one of its readings). */
static double clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Up to budget expansions, one at a time, the clock read after each: it stops once the clock reads
 * deadline or later (after at least one expansion). An expansion's cost varies 50-fold with the
 * search (a box bordering thousands of small boxes), so no count of expansions fits a frame's time
 * left; this overshoots the deadline by one expansion at most. *done: the expansions made.
 * The node pool's growth (its map doubled and every node indexed again: 0.5-2.5 ms at 10,000-20,000
 * nodes) is paid at a call's start: a pool of GROW_FROM nodes or more within GROW_AHEAD of growing is
 * grown first, and a call whose expansions bring it that near stops there, so the next call grows it.
 * In the expansion that reached it, it ran past the deadline: 13 of 13 step_until calls that ended
 * over 0.25 ms past theirs in a streamed run of 1,000 navigators, by 0.45-2.56 ms (docs/benchmarks.md,
 * session 32). A smaller pool grows as it needs (a few hundredths of a ms; grown ahead, the pools of
 * searches ending soon after held more). */
#define GROW_AHEAD 512
#define GROW_FROM 2048
static int growth_near(const lquery *u)
{
    size_t nodes, room = on_query_room(u->h.p, &nodes);
    return room < GROW_AHEAD && nodes >= GROW_FROM;
}
static on_status update_until(lquery *u, size_t budget, double deadline, size_t *done)
{
    size_t total = 0;
    on_status s;
    if (growth_near(u)) (void)on_query_grow_ahead(u->h.p, GROW_AHEAD);
    do {
        size_t d = 0;
        s = on_query_update(u->h.p, 1, &d);
        total += d;
    } while (s == ON_IN_PROGRESS && !u->herr && total < budget && clock_now() < deadline && !growth_near(u));
    *done = total;
    return s;
}

/* Run the core with the heuristic function (user value 2) and re-raise its error. While the core runs,
 * the query and its tree are busy (a heuristic calling back cannot close, restart or change them) and
 * the tree is anchored on the stack (collectable only once the search returned). No Lua error can
 * cross the core (the heuristic is called protected), so the guards are always cleared.
 * Runs the query's search (starting it first when init) for budget expansions; with done, until the
 * clock reads deadline too (update_until), *done set to the expansions made. */
static on_status run(lua_State *L, int qidx, lquery *u, int init, const double *a, const double *b,
                     const on_query_opts *o, size_t budget, double deadline, size_t *done)
{
    lua_getiuservalue(L, qidx, 1);
    on_lhandle *th = on_lua_testhandle(L, -1, &on_lua_tree_class);
    if (!th) luaL_error(L, "query: its tree was closed");
    lua_getiuservalue(L, qidx, 2);
    int top = lua_gettop(L);
    u->L = L;
    u->fidx = top;
    u->herr = 0;
    u->h.busy = 1;
    th->busy++;
    on_status s = ON_IN_PROGRESS;
    if (init) s = on_query_init(u->h.p, a, b, o);
    if (s == ON_IN_PROGRESS) s = done ? update_until(u, budget, deadline, done) : on_query_update(u->h.p, budget, NULL);
    th->busy--;
    u->h.busy = 0;
    u->L = NULL;
    if (u->herr) {
        /* leave the query finished (failed) and raise the heuristic's error */
        lua_pushnil(L);
        lua_setiuservalue(L, qidx, 2);
        if (u->herr == 2) return (on_status)luaL_error(L, "heuristic: Lua stack overflow");
        return (on_status)lua_error(L);
    }
    lua_settop(L, top - 2);
    return s;
}

static const char *state_name(on_status s)
{
    if (s == ON_IN_PROGRESS) return "running";
    if (s == (ON_IN_PROGRESS | ON_LOADING)) return "loading";
    return on_ok(s) ? "found" : "failed";
}

typedef struct search_ctx {
    lquery *u;
    double a[3], b[3];
    on_query_opts o;
    int find; /* q:find (else q:start) */
} search_ctx;

/* (pinned, the query and its tree, from the search to the last result table: lua_util.h, rule (b)) */
static int search_body(lua_State *L, void *ctx)
{
    search_ctx *x = ctx;
    lquery *u = x->u;
    on_status s = run(L, 1, u, 1, x->a, x->b, &x->o, x->find ? (size_t)-1 : 0, 0, NULL);
    u->started = !x->find;
    if (!x->find) {
        lua_pushstring(L, state_name(s));
        return 1;
    }
    if (s == (ON_IN_PROGRESS | ON_LOADING)) return push_failure(L, u, "loading"); /* find cannot wait */
    return push_result(L, 1, u);
}

/* q:find and q:start: start and goal at 2 and 3 and the options at 4 read first (rule (a)), then the
 * query at 1 idle with its tree open; starts the search and runs it (to the end for find). */
static int begin_search(lua_State *L, const char *fname, int find)
{
    luaL_checkudata(L, 1, QUERY_MT);
    search_ctx x;
    on_lua_checkpoint(L, 2, "start", x.a);
    on_lua_checkpoint(L, 3, "goal", x.b);
    lua_settop(L, 4);
    read_opts(L, 4, &x.o); /* heuristic at 5, areas' buffer at 6 */
    lquery *u = checkq_idle(L, 1, fname);
    lua_getiuservalue(L, 1, 1);
    on_lhandle *hs[2] = {&u->h, on_lua_testhandle(L, -1, &on_lua_tree_class)};
    lua_pop(L, 1);
    if (!hs[1] || hs[1]->p != u->tree) luaL_error(L, "query: its tree was closed");
    if (lua_isfunction(L, 5)) {
        x.o.heuristic = lua_heuristic;
        x.o.heuristic_ud = u;
    }
    lua_pushvalue(L, 5);
    lua_setiuservalue(L, 1, 2);
    x.u = u;
    x.find = find;
    return on_lua_pinned(L, hs, 2, search_body, &x);
}

static int l_find(lua_State *L) { return begin_search(L, "find", 1); }
/* q:start(a, b, opts) -> "running" | "found" | "failed" */
static int l_start(lua_State *L) { return begin_search(L, "start", 0); }

/* q:step(max_expansions) -> "running" | "found" | "failed" */
static int l_step(lua_State *L)
{
    lquery *u = checkq_idle(L, 1, "step");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1) luaL_argerror(L, 2, "max_expansions must be >= 1");
    if (!u->started) return luaL_error(L, "query:step: no search started (call start first)");
    if (!tree_alive(L, 1, u)) { /* result() then reports the same reason */
        lua_pushliteral(L, "failed");
        lua_pushliteral(L, "tree_closed");
        return 2;
    }
    on_status s = run(L, 1, u, 0, NULL, NULL, NULL, (size_t)n, 0, NULL);
    int ijk[3], loading = s == (ON_IN_PROGRESS | ON_LOADING);
    if (loading) loading_tile(u, ijk); /* the tile it waits for (read before anything is pushed) */
    lua_pushstring(L, state_name(s));
    if (loading) {
        on_lua_pushint3(L, ijk);
        return 2;
    }
    return 1;
}

/* q:step_until(max_expansions, deadline) -> status, expanded [, tile]: q:step's work, stopped as
 * well once core.clock() reads deadline or later (checked after each expansion; at least one is
 * made): a frame budget's time left, whatever an expansion of this search costs. expanded: the
 * expansions this call made (a search that restarts over the cells counts its new ones). */
static int l_step_until(lua_State *L)
{
    lquery *u = checkq_idle(L, 1, "step_until");
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1) luaL_argerror(L, 2, "max_expansions must be >= 1");
    lua_Number deadline = luaL_checknumber(L, 3);
    if (deadline != deadline) luaL_argerror(L, 3, "deadline must be a number");
    if (!u->started) return luaL_error(L, "query:step_until: no search started (call start first)");
    if (!tree_alive(L, 1, u)) {
        lua_pushliteral(L, "failed");
        lua_pushinteger(L, 0);
        lua_pushliteral(L, "tree_closed");
        return 3;
    }
    size_t done = 0;
    on_status s = run(L, 1, u, 0, NULL, NULL, NULL, (size_t)n, (double)deadline, &done);
    int ijk[3], loading = s == (ON_IN_PROGRESS | ON_LOADING);
    if (loading) loading_tile(u, ijk);
    lua_pushstring(L, state_name(s));
    lua_pushinteger(L, (lua_Integer)done);
    if (loading) {
        on_lua_pushint3(L, ijk);
        return 3;
    }
    return 2;
}

/* The query at 1 idle and its open tree's handle (or NULL when it was closed), for the pins. */
static lquery *checkq_tree(lua_State *L, const char *fname, on_lhandle *hs[2])
{
    lquery *u = checkq_idle(L, 1, fname);
    lua_getiuservalue(L, 1, 1);
    hs[0] = &u->h;
    hs[1] = on_lua_testhandle(L, -1, &on_lua_tree_class);
    lua_pop(L, 1);
    if (hs[1] && hs[1]->p != u->tree) hs[1] = NULL;
    return u;
}

static int result_body(lua_State *L, void *ctx) { return push_result(L, 1, ctx); }

/* q:result_step's stop: the clock reads the deadline (at ud) or later. */
static int past_deadline(void *ud) { return clock_now() >= *(const double *)ud; }

/* q:result_step(max_checks [, deadline]) -> "pending", checks | q:result()'s returns: the result of a
 * finished sliced search built in slices (on_query_finalize_step): at most max_checks (integer >= 0,
 * 0 = no limit) line-of-sight and turn checks this call, and none after core.clock() reads deadline
 * (checked after each; at least one is made); "pending" and the checks made until the result is
 * built, then the path and info q:result() gives (the same, byte for byte). */
static int l_result_step(lua_State *L)
{
    on_lhandle *hs[2];
    lquery *u = checkq_tree(L, "result_step", hs);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 0) luaL_argerror(L, 2, "max_checks must be >= 0");
    double deadline = (double)luaL_optnumber(L, 3, HUGE_VAL);
    if (deadline != deadline) luaL_argerror(L, 3, "deadline must be a number");
    if (!u->started) return luaL_error(L, "query:result_step: no search started");
    if (!hs[1]) return push_failure(L, u, "tree_closed");
    size_t checks = 0;
    on_status s = on_query_finalize_step(u->h.p, (size_t)n, isinf(deadline) ? NULL : past_deadline, &deadline, &checks);
    if (s == (ON_FAILURE | ON_INVALID))
        return luaL_error(L, "query:result_step: the search is still running (call step until it stops)");
    if (s == ON_IN_PROGRESS) {
        lua_pushliteral(L, "pending");
        lua_pushinteger(L, (lua_Integer)checks);
        return 2;
    }
    return on_lua_pinned(L, hs, 2, result_body, u);
}

/* q:result() -> path, info | nil, info (for a finished sliced search) */
static int l_result(lua_State *L)
{
    on_lhandle *hs[2];
    lquery *u = checkq_tree(L, "result", hs);
    if (!u->started) return luaL_error(L, "query:result: no search started");
    if (!hs[1]) return push_failure(L, u, "tree_closed");
    size_t n;
    on_query_info info;
    if (on_query_finalize(u->h.p, NULL, 0, &n, &info) & ON_IN_PROGRESS)
        return luaL_error(L, "query:result: the search is still running (call step until it stops)");
    return on_lua_pinned(L, hs, 2, result_body, u);
}

/* ---- what the search used (search_corridor.c) -------------------------------------------------- */

#define DEFAULT_MAX_VISITED 100000

/* Push the n world boxes at b (6 doubles each) as { { min = {x,y,z}, max = {x,y,z} [, expanded =
 * bool] }, ... } (expanded when ex is not NULL). */
static void push_boxes(lua_State *L, const double *b, const uint8_t *ex, size_t n)
{
    lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, ex ? 3 : 2);
        on_lua_pushpoint(L, b + 6 * i);
        lua_setfield(L, -2, "min");
        on_lua_pushpoint(L, b + 6 * i + 3);
        lua_setfield(L, -2, "max");
        if (ex) {
            lua_pushboolean(L, ex[i]);
            lua_setfield(L, -2, "expanded");
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* nil, reason for what on_query_corridor / on_query_visited refused */
static int push_refusal(lua_State *L, on_status s)
{
    lua_pushnil(L);
    lua_pushstring(L, (s & ON_STALE) ? "tree_changed" : "no_result");
    return 2;
}

/* (pinned: the buffer is allocated while the query is used, rule (b)) */
static int corridor_body(lua_State *L, void *ctx)
{
    lquery *u = ctx;
    size_t n = 0;
    on_status s = on_query_corridor(u->h.p, NULL, 0, &n);
    if (on_failed(s) && !(s & ON_BUFFER_SMALL)) return push_refusal(L, s);
    /* a Lua buffer: pushing the list may raise (memory) and must not leak it */
    double *b = lua_newuserdatauv(L, (n ? n : 1) * 6 * sizeof *b, 0);
    on_query_corridor(u->h.p, b, n, &n);
    push_boxes(L, b, NULL, n);
    return 1;
}

/* q:corridor() -> { { min = {x,y,z}, max = {x,y,z} }, ... } | nil, reason: the last result's corridor */
static int l_corridor(lua_State *L)
{
    on_lhandle *hs[2];
    lquery *u = checkq_tree(L, "corridor", hs);
    if (!hs[1]) return luaL_error(L, "query: its tree was closed");
    return on_lua_pinned(L, hs, 2, corridor_body, u);
}

/* q:visited([max]) -> { { min = {x,y,z}, max = {x,y,z}, expanded = bool }, ... }, total | nil, reason:
 * the first max (default 100,000) nodes the last search reached, and how many it reached */
typedef struct visited_ctx {
    lquery *u;
    lua_Integer maxn;
} visited_ctx;

/* (pinned: the buffers are allocated while the query is used, rule (b)) */
static int visited_body(lua_State *L, void *ctx)
{
    const visited_ctx *x = ctx;
    lquery *u = x->u;
    lua_Integer maxn = x->maxn;
    size_t n = 0;
    on_status s = on_query_visited(u->h.p, NULL, NULL, 0, &n);
    if (on_failed(s) && !(s & ON_BUFFER_SMALL)) return push_refusal(L, s);
    size_t total = n, cap = (lua_Unsigned)maxn < n ? (size_t)maxn : n;
    double *b = lua_newuserdatauv(L, (cap ? cap : 1) * 6 * sizeof *b, 0);
    uint8_t *ex = lua_newuserdatauv(L, cap ? cap : 1, 0);
    on_query_visited(u->h.p, b, ex, cap, &n);
    push_boxes(L, b, ex, cap);
    lua_pushinteger(L, (lua_Integer)total);
    return 2;
}

static int l_visited(lua_State *L)
{
    luaL_checkudata(L, 1, QUERY_MT);
    visited_ctx x = {NULL, luaL_optinteger(L, 2, DEFAULT_MAX_VISITED)};
    if (x.maxn < 0) luaL_argerror(L, 2, "max must be >= 0");
    on_lhandle *hs[2];
    x.u = checkq_tree(L, "visited", hs);
    if (!hs[1]) return luaL_error(L, "query: its tree was closed");
    return on_lua_pinned(L, hs, 2, visited_body, &x);
}

/* q:bytes() -> the bytes the query holds (its node pool, node maps and open list, caches and result
 * buffers, C side), what it keeps between searches */
static int l_bytes(lua_State *L)
{
    lquery *u = (lquery *)on_lua_checkhandle(L, 1, &query_class);
    lua_pushinteger(L, (lua_Integer)(on_query_bytes(u->h.p) + u->cap * 3 * sizeof *u->buf));
    return 1;
}

/* q:trim(): the pool's cut, when due, made now (its search ended) -> the bytes given back */
static int l_trim(lua_State *L)
{
    lquery *u = checkq_idle(L, 1, "query:trim");
    size_t b = on_query_trim(u->h.p);
    u->started = u->started && !b;
    lua_pushinteger(L, (lua_Integer)b);
    return 1;
}

static const luaL_Reg methods[] = {
    {"bytes", l_bytes}, {"trim", l_trim}, {"find", l_find}, {"start", l_start}, {"step", l_step}, {"step_until", l_step_until}, {"result", l_result}, {"result_step", l_result_step},
    {"corridor", l_corridor}, {"visited", l_visited}, {NULL, NULL},
};
static const luaL_Reg funcs[] = {{"new", l_new}, {NULL, NULL}};

int on_lua_query_open(lua_State *L)
{
    on_lua_path_open(L);
    on_lua_areas_open(L);
    on_lua_obstacles_open(L);
    on_lua_newclass(L, &query_class, methods);
    luaL_newlib(L, funcs);
    return 1;
}
