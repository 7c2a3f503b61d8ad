/*
 * lua_streamer.c -- the `octonav.streamer` userdata of the C core (streamer.c): tiles of a tree loaded
 * and unloaded around agents on worker threads. The Lua module octonav.streamer wraps it for worlds
 * and pack directories. The userdata keeps its tree alive (user value 1); closing the tree stops the
 * streamer first (on_tree_destroy joins its workers), after which every method raises "its tree was
 * closed" until s:close(). A tree takes one streamer at a time. The userdata is on the class helper of
 * lua_util.h (closed handle made before the streamer, shared close/gc/tostring). s:set_graph(graph)
 * streams tile graphs with the tiles into a world graph (octonav.core.route.world), kept alive as
 * user value 2; the calls that may link or drop a tile graph (update, force_unload) raise once that
 * graph was closed.
 */
#include "lua_util.h"
#include "streamer.h"

#include <stdlib.h>
#include <string.h>

typedef struct lstreamer {
    on_lhandle h;       /* h.p: the on_streamer, NULL once closed */
    const on_tree *tree;
    void *graph;        /* the on_wgraph given to set_graph (user value 2), or NULL */
} lstreamer;

/* The route binding's world graph class (lua_route.c): its userdata starts with an on_lhandle. */
#define WGRAPH_MT "octonav.route.graph"

static void streamer_destroy(on_lhandle *h)
{
    on_streamer_destroy(h->p);
}

static void streamer_describe(lua_State *L, on_lhandle *h)
{
    on_streamer_stats st;
    on_streamer_stats_get(h->p, &st);
    lua_pushfstring(L, "octonav.streamer: %d agents, %d tiles loaded, %d queued, %d failed", (int)st.agents,
                    (int)st.loaded, (int)st.queued, (int)st.failed);
}

static const on_lclass streamer_class = {"octonav.streamer", "streamer is in use", streamer_destroy,
                                         streamer_describe};

static lstreamer *checks(lua_State *L, int idx)
{
    lstreamer *u = (lstreamer *)on_lua_checkhandle(L, idx, &streamer_class);
    lua_getiuservalue(L, idx, 1);
    if (on_lua_testtree(L, -1) != u->tree) luaL_error(L, "octonav.streamer: its tree was closed");
    lua_pop(L, 1);
    return u;
}

/* Raise while a search reads the streamer's tree (a Lua heuristic calling back): loads and unloads
 * change the tree under it. */
static void check_tree_idle(lua_State *L, const char *fname)
{
    checks(L, 1);
    lua_getiuservalue(L, 1, 1);
    on_lua_checktree_idle(L, -1, fname);
    lua_pop(L, 1);
}

/* Raise (after unsetting it in C) when the world graph given to set_graph was closed since: the C
 * streamer must not link into or drop from a freed graph. */
static void check_graph(lua_State *L, lstreamer *u)
{
    if (!u->graph) return;
    lua_getiuservalue(L, 1, 2);
    on_lhandle *g = luaL_testudata(L, -1, WGRAPH_MT);
    lua_pop(L, 1);
    if (g && g->p == u->graph) return;
    on_streamer_set_graph(u->h.p, NULL, 0);
    u->graph = NULL;
    luaL_error(L, "octonav.streamer: its world graph was closed");
}

static const char *const new_opts[] = {"load_padding", "unload_padding", "workers", "max_loaded", "prepare", "joins",
                                       "max_publish", "max_unloads", "publish_ms", "trim_on_free", NULL};

/* The defaults of max_publish and max_unloads: an update installs four finished tiles and unloads one
 * tile at most. An install is 0.07-0.09 ms of the caller's thread for a 512^3 terrain tile (the C part
 * ~0.035 ms, its graph linked; the masks and adjacency come later from the worker; quiet, thread CPU,
 * the Lua side of streamer:update included), an unload ~0.15 ms. One worker decodes such a tile in ~6.5
 * ms, 2-3 a frame at 60 Hz: with one install a frame the cold start of the seed's world (64 tiles, every
 * one a start tile at 1,000 navigators) took 64 frames however fast the worker was, so the last
 * navigators moved after ~65 frames (issue 31 goal 1: 60); with four, the worker's pace decides
 * (docs/benchmarks.md, session 29 h31first) */
#define DEFAULT_MAX_PUBLISH 4
#define DEFAULT_MAX_UNLOADS 1

/* core.streamer.new(tree, dir, { load_padding =, unload_padding =, workers = 1, max_loaded = 0,
 *                                prepare = false, joins = false, max_publish = 4, max_unloads = 1,
 *                                publish_ms = 0, trim_on_free = false }):
 * max_publish / max_unloads 0 = no limit, publish_ms 0 = no time bound (on_streamer_params); joins off by default: a 512^3 terrain tile's set
 * is ~6 times its tree and streams 4 times slower; on, a route planned over streamed tiles never builds
 * their boxes itself (docs/world.md, "Routes at scale") */
static int l_new(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    const char *dir = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    on_lua_checkopts(L, 3, "octonav.streamer.new", new_opts);
    on_streamer_params p;
    lua_getfield(L, 3, "load_padding");
    if (lua_isnil(L, -1)) return luaL_error(L, "octonav.streamer.new: option 'load_padding' is required");
    lua_pop(L, 1);
    lua_getfield(L, 3, "unload_padding");
    if (lua_isnil(L, -1)) return luaL_error(L, "octonav.streamer.new: option 'unload_padding' is required");
    lua_pop(L, 1);
    p.load_padding = on_lua_optnumber(L, 3, "load_padding", 0);
    p.unload_padding = on_lua_optnumber(L, 3, "unload_padding", 0);
    lua_Integer w = on_lua_optinteger(L, 3, "workers", 1), m = on_lua_optinteger(L, 3, "max_loaded", 0);
    if (p.load_padding < 0) return luaL_error(L, "octonav.streamer.new: load_padding must be >= 0");
    if (!(p.unload_padding > p.load_padding))
        return luaL_error(L, "octonav.streamer.new: unload_padding must be greater than load_padding");
    if (w < 0 || w > 16) return luaL_error(L, "octonav.streamer.new: workers must be 0..16");
    if (m < 0) return luaL_error(L, "octonav.streamer.new: max_loaded must be >= 0");
    lua_Integer mp = on_lua_optinteger(L, 3, "max_publish", DEFAULT_MAX_PUBLISH);
    lua_Integer mu = on_lua_optinteger(L, 3, "max_unloads", DEFAULT_MAX_UNLOADS);
    if (mp < 0) return luaL_error(L, "octonav.streamer.new: max_publish must be >= 0");
    if (mu < 0) return luaL_error(L, "octonav.streamer.new: max_unloads must be >= 0");
    p.publish_ms = on_lua_optnumber(L, 3, "publish_ms", 0);
    if (!(p.publish_ms >= 0)) return luaL_error(L, "octonav.streamer.new: publish_ms must be >= 0");
    p.max_publish = (size_t)mp;
    p.max_unloads = (size_t)mu;
    p.workers = (int)w;
    p.max_loaded = (size_t)m;
    p.prepare = on_lua_optboolean(L, 3, "prepare", 0);
    int trim_on_free = on_lua_optboolean(L, 3, "trim_on_free", 0);
    int joins = on_lua_optboolean(L, 3, "joins", 0);
    on_tree *t = on_lua_checktree_idle(L, 1, "octonav.streamer.new"); /* after the arguments (rule (a)) */
    if (on_tree_streamer(t)) return luaL_error(L, "octonav.streamer.new: tree is used by a streamer");
    lstreamer *u = (lstreamer *)on_lua_newhandle(L, &streamer_class, sizeof *u, 2);
    t = on_lua_checktree_idle(L, 1, "octonav.streamer.new"); /* (again: the allocation may run a finalizer) */
    if (on_tree_streamer(t)) return luaL_error(L, "octonav.streamer.new: tree is used by a streamer");
    on_streamer *s;
    on_status st = on_streamer_create(t, dir, &p, &s);
    if (!on_ok(st)) return luaL_error(L, "octonav.streamer.new: %s", on_status_string(st));
    on_streamer_set_joins(s, joins);
    on_streamer_set_trim_on_free(s, trim_on_free);
    u->h.p = s;
    u->tree = t;
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

/* The tile {i, j, k} at idx (read before the streamer is taken: rule (a)) checked against tree t. */
static uint32_t check_tile(lua_State *L, const on_tree *t, int idx, const int ijk[3])
{
    const int *n = on_tree_get_params(t)->tiles;
    for (int i = 0; i < 3; i++)
        if (ijk[i] < 0 || ijk[i] >= n[i])
            luaL_argerror(L, idx, lua_pushfstring(L, "tile: index %d out of range (0..%d)", i + 1, n[i] - 1));
    return on_tree_tile_index(t, ijk);
}

static void push_tile(lua_State *L, const on_tree *t, uint32_t tile)
{
    int ijk[3];
    on_tree_tile_coords(t, tile, ijk);
    on_lua_pushint3(L, ijk);
}

static int l_add_agent(lua_State *L)
{
    luaL_checkudata(L, 1, "octonav.streamer");
    double p[3];
    on_lua_checkpoint(L, 2, "position", p);
    lstreamer *u = checks(L, 1);
    uint32_t id;
    if (!on_ok(on_streamer_add_agent(u->h.p, p, &id))) return luaL_error(L, "add_agent: out of memory");
    lua_pushinteger(L, (lua_Integer)id + 1);
    return 1;
}

static uint32_t check_agent(lua_State *L, int idx)
{
    lua_Integer id = luaL_checkinteger(L, idx);
    if (id < 1 || id > 0xffffffffLL) luaL_argerror(L, idx, "agent id out of range");
    return (uint32_t)(id - 1);
}

static int l_move_agent(lua_State *L)
{
    luaL_checkudata(L, 1, "octonav.streamer");
    uint32_t id = check_agent(L, 2);
    double p[3];
    on_lua_checkpoint(L, 3, "position", p);
    lstreamer *u = checks(L, 1);
    if (!on_ok(on_streamer_move_agent(u->h.p, id, p))) luaL_argerror(L, 2, "no such agent");
    return 0;
}

static int l_remove_agent(lua_State *L)
{
    lstreamer *u = checks(L, 1);
    if (!on_ok(on_streamer_remove_agent(u->h.p, check_agent(L, 2)))) luaL_argerror(L, 2, "no such agent");
    return 0;
}

/* s:agent_position(id) -> {x, y, z} (a new table), or nil for no such agent. */
static int l_agent_position(lua_State *L)
{
    lstreamer *u = checks(L, 1);
    lua_Integer id = luaL_checkinteger(L, 2);
    double p[3];
    if (id < 1 || id > 0xffffffffLL || !on_ok(on_streamer_agent_position(u->h.p, (uint32_t)(id - 1), p))) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, 3, 0);
    for (int k = 0; k < 3; k++) {
        lua_pushnumber(L, p[k]);
        lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

/* s:agents_in(min, max) -> whether an agent's position lies in the box min..max (bounds included). */
static int l_agents_in(lua_State *L)
{
    luaL_checkudata(L, 1, "octonav.streamer");
    double lo[3], hi[3];
    on_lua_checkpoint(L, 2, "min", lo);
    on_lua_checkpoint(L, 3, "max", hi);
    lstreamer *u = checks(L, 1);
    lua_pushboolean(L, on_streamer_agents_in(u->h.p, lo, hi));
    return 1;
}

typedef on_status (*tile_op)(on_streamer *, uint32_t);

/* The streamer at 1 and its tile argument at 2 (read first), for tile_call, is_loaded and state. */
static lstreamer *checks_tile(lua_State *L, uint32_t *tile)
{
    int ijk[3];
    luaL_checkudata(L, 1, "octonav.streamer");
    on_lua_checkint3(L, 2, "tile", ijk);
    lstreamer *u = checks(L, 1);
    *tile = check_tile(L, u->tree, 2, ijk);
    return u;
}

static int tile_call(lua_State *L, tile_op op, const char *what)
{
    uint32_t tile;
    lstreamer *u = checks_tile(L, &tile);
    if (!on_ok(op(u->h.p, tile))) return luaL_error(L, "%s", what);
    return 0;
}

static int l_lock(lua_State *L) { return tile_call(L, on_streamer_lock, "lock: too many locks"); }
static int l_unlock(lua_State *L) { return tile_call(L, on_streamer_unlock, "unlock: the tile is not locked"); }
static int l_force_load(lua_State *L)
{
    uint32_t tile;
    lstreamer *u = checks_tile(L, &tile);
    check_tree_idle(L, "force_load");
    if (!on_ok(on_streamer_force_load(u->h.p, tile))) return luaL_error(L, "force_load failed");
    return 0;
}
static int l_force_unload(lua_State *L)
{
    uint32_t tile;
    lstreamer *u = checks_tile(L, &tile);
    check_tree_idle(L, "force_unload");
    check_graph(L, u);
    if (!on_ok(on_streamer_force_unload(u->h.p, tile))) return luaL_error(L, "force_unload failed");
    return 0;
}

/* s:set_graph(graph [, max_bytes]): tile graphs stream with their tiles into world graph `graph`
 * (octonav.core.route.world over the same tile grid): each tile's graph file (at most max_bytes,
 * default 0 = no limit) is read and decoded on the worker beside its tile, linked by the update that
 * installs the tile, dropped when the tile unloads; failures are update()'s graphs_failed. nil: none. */
static int l_set_graph(lua_State *L)
{
    lstreamer *u = checks(L, 1);
    on_lhandle *g = NULL;
    if (!lua_isnoneornil(L, 2)) {
        g = luaL_testudata(L, 2, WGRAPH_MT);
        if (!g) return luaL_argerror(L, 2, "world graph (octonav.core.route.world) or nil expected");
        if (!g->p) return luaL_argerror(L, 2, "the world graph is closed");
    }
    lua_Integer max = luaL_optinteger(L, 3, 0);
    if (max < 0) return luaL_argerror(L, 3, "max_bytes must be >= 0");
    if (!on_ok(on_streamer_set_graph(u->h.p, g ? g->p : NULL, (size_t)max)))
        return luaL_argerror(L, 2, "the world graph has another tile grid than the tree");
    u->graph = g ? g->p : NULL;
    lua_settop(L, 2);
    lua_setiuservalue(L, 1, 2);
    return 0;
}
static int l_retry(lua_State *L) { return tile_call(L, on_streamer_retry, "retry failed"); }

static int l_is_loaded(lua_State *L)
{
    uint32_t tile;
    lstreamer *u = checks_tile(L, &tile);
    lua_pushboolean(L, on_streamer_tile_state(u->h.p, tile) == ON_TILE_LOADED);
    return 1;
}

static int l_state(lua_State *L)
{
    uint32_t tile;
    lstreamer *u = checks_tile(L, &tile);
    static const char *const names[] = {"unloaded", "queued", "loaded", "failed"};
    lua_pushstring(L, names[on_streamer_tile_state(u->h.p, tile)]);
    return 1;
}

static const on_lua_reason_name fail_reasons[] = {{ON_IO, "missing or unreadable tile file"},
                                                  {ON_CORRUPT, "corrupt tile file"},
                                                  {ON_VERSION, "unsupported tile file version"},
                                                  {ON_NO_MEMORY, "out of memory"},
                                                  {0, NULL}};

/* s:update([wait]) -> { loaded = { {i,j,k}, ... }, unloaded = {...}, failed = { { tile = {i,j,k}, reason = "..." } },
 *                       graphs_failed = { { tile = {i,j,k}, reason = "No such file or directory" }, ... },
 *                       trees = ..., trees_failed = ... } */
typedef struct events_ctx {
    lstreamer *u;
    const on_stream_event *ev;
    size_t n;
} events_ctx;

/* The streamer at 1 and its tree's handle, for the pins. */
static lstreamer *checks_pins(lua_State *L, on_lhandle *hs[2])
{
    lstreamer *u = checks(L, 1);
    lua_getiuservalue(L, 1, 1);
    hs[0] = &u->h;
    hs[1] = on_lua_testhandle(L, -1, &on_lua_tree_class); /* (open: checks raised otherwise) */
    lua_pop(L, 1);
    return u;
}

/* (pinned, the streamer and its tree: the tables are built from the streamer's events, rule (b)) */
static int update_body(lua_State *L, void *ctx)
{
    const events_ctx *x = ctx;
    lstreamer *u = x->u;
    const on_stream_event *ev = x->ev;
    size_t n = x->n;
    lua_createtable(L, 0, 6);
    lua_newtable(L); /* trees: the trees read for s:load_tree, each { id =, tree = } (the caller owns them) */
    lua_newtable(L); /* trees_failed: { id =, reason = "PATH: reason" } */
    int nt = 0, ntf = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == ON_EVENT_TREE_LOADED) {
            lua_createtable(L, 0, 2);
            lua_pushinteger(L, (lua_Integer)ev[i].tile);
            lua_setfield(L, -2, "id");
            on_lhandle *h = on_lua_newhandle(L, &on_lua_tree_class, sizeof *h, 0);
            h->p = ev[i].tree;
            lua_setfield(L, -2, "tree");
            lua_rawseti(L, -3, ++nt);
        } else if (ev[i].kind == ON_EVENT_TREE_FAILED) {
            lua_createtable(L, 0, 2);
            lua_pushinteger(L, (lua_Integer)ev[i].tile);
            lua_setfield(L, -2, "id");
            lua_pushstring(L, ev[i].err[0] ? ev[i].err : on_status_string(ev[i].status));
            lua_setfield(L, -2, "reason");
            lua_rawseti(L, -2, ++ntf);
        }
    }
    lua_setfield(L, -3, "trees_failed");
    lua_setfield(L, -2, "trees");
    lua_newtable(L); /* graphs_failed: tiles loaded without their graph */
    int ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind != ON_EVENT_GRAPH_FAILED) continue;
        lua_createtable(L, 0, 2);
        push_tile(L, u->tree, ev[i].tile);
        lua_setfield(L, -2, "tile");
        lua_pushstring(L, ev[i].err);
        lua_setfield(L, -2, "reason");
        lua_rawseti(L, -2, ++ng);
    }
    lua_setfield(L, -2, "graphs_failed");
    lua_newtable(L);
    lua_newtable(L);
    lua_newtable(L);
    int nl = 0, nu = 0, nf = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == ON_EVENT_TREE_LOADED || ev[i].kind == ON_EVENT_TREE_FAILED ||
            ev[i].kind == ON_EVENT_GRAPH_FAILED) {
            continue;
        } else if (ev[i].kind == ON_EVENT_LOADED) {
            push_tile(L, u->tree, ev[i].tile);
            lua_rawseti(L, -4, ++nl);
        } else if (ev[i].kind == ON_EVENT_UNLOADED) {
            push_tile(L, u->tree, ev[i].tile);
            lua_rawseti(L, -3, ++nu);
        } else {
            lua_createtable(L, 0, 2);
            push_tile(L, u->tree, ev[i].tile);
            lua_setfield(L, -2, "tile");
            lua_pushstring(L, on_lua_reason(ev[i].status, fail_reasons));
            lua_setfield(L, -2, "reason");
            lua_rawseti(L, -2, ++nf);
        }
    }
    lua_setfield(L, -4, "failed");
    lua_setfield(L, -3, "unloaded");
    lua_setfield(L, -2, "loaded");
    return 1;
}

/* s:update([wait [, none]]): none, a table, is what an update with no event answers (no table made:
 * streamer.lua's update allocates nothing in a frame with nothing to report, issue 31) */
static int l_update(lua_State *L)
{
    if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    on_lhandle *hs[2];
    lstreamer *u = checks_pins(L, hs);
    check_tree_idle(L, "update");
    check_graph(L, u);
    int wait = lua_toboolean(L, 2);
    events_ctx x = {u, NULL, 0};
    if (on_streamer_update(u->h.p, wait, &x.ev, &x.n) & ON_NO_MEMORY) return luaL_error(L, "update: out of memory");
    if (x.n == 0 && lua_istable(L, 3)) {
        lua_settop(L, 3);
        return 1;
    }
    return on_lua_pinned(L, hs, 2, update_body, &x);
}

static int l_stats(lua_State *L)
{
    lstreamer *u = checks(L, 1);
    on_streamer_stats st;
    on_streamer_stats_get(u->h.p, &st);
    size_t jt, jb, jr;
    double js;
    on_streamer_join_stats(u->h.p, &jt, &jb, &js, &jr); /* (before the first allocation) */
    static const char *const keys[] = {"agents", "loaded", "queued", "failed", "locked", "waiting", "evicted",
                                       "decoded", "cancelled", "deferred", "reading", NULL};
    const lua_Integer v[] = {(lua_Integer)st.agents,  (lua_Integer)st.loaded,    (lua_Integer)st.queued,
                             (lua_Integer)st.failed,  (lua_Integer)st.locked,    (lua_Integer)st.waiting,
                             (lua_Integer)st.evicted, (lua_Integer)st.decoded,   (lua_Integer)st.cancelled,
                             (lua_Integer)st.deferred, (lua_Integer)st.reading};
    lua_createtable(L, 0, 20);
    on_lua_setints(L, keys, v);
    on_lua_setnum(L, "decode_seconds", st.decode_seconds);
    on_lua_setint(L, "masks_built", (lua_Integer)st.masks_built);
    on_lua_setint(L, "trims", (lua_Integer)st.trims);
    on_lua_setnum(L, "trim_seconds", st.trim_seconds);
    on_lua_setint(L, "adjacency_built", (lua_Integer)st.adjacency_built);
    on_lua_setint(L, "tree_bytes", (lua_Integer)st.tree_bytes);
    on_lua_setint(L, "join_tiles", (lua_Integer)jt);
    on_lua_setint(L, "join_bytes", (lua_Integer)jb);
    on_lua_setnum(L, "join_seconds", js);
    on_lua_setint(L, "joins_rebuilt", (lua_Integer)jr);
    return 1;
}

/* s:load_tree(id, path): read a whole tree file (a world's hole) on a worker; a later update lists
 * it in `trees` ({ id =, tree = }) or `trees_failed` ({ id =, reason = }). */
static int l_load_tree(lua_State *L)
{
    luaL_checkudata(L, 1, "octonav.streamer");
    lua_Integer id = luaL_checkinteger(L, 2);
    const char *path = luaL_checkstring(L, 3);
    if (id < 0 || id > 0xffffffffLL) luaL_argerror(L, 2, "id out of range");
    lstreamer *u = checks(L, 1);
    if (!on_ok(on_streamer_load_tree(u->h.p, (uint32_t)id, path))) return luaL_error(L, "load_tree: out of memory");
    return 0;
}

/* s:waiting() -> { { tile = {i,j,k}, reason = "max_loaded" }, ... }: the tiles an agent's load padding
 * asks for that the last update held back (nearest first). */
/* (pinned, as update_body) */
static int waiting_body(lua_State *L, void *ctx)
{
    const lstreamer *u = ctx;
    const uint32_t *tiles;
    size_t n;
    on_streamer_waiting(u->h.p, &tiles, &n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 2);
        push_tile(L, u->tree, tiles[i]);
        lua_setfield(L, -2, "tile");
        lua_pushliteral(L, "max_loaded");
        lua_setfield(L, -2, "reason");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int l_waiting(lua_State *L)
{
    on_lhandle *hs[2];
    lstreamer *u = checks_pins(L, hs);
    return on_lua_pinned(L, hs, 2, waiting_body, u);
}

static const luaL_Reg methods[] = {
    {"add_agent", l_add_agent}, {"move_agent", l_move_agent}, {"remove_agent", l_remove_agent},
    {"agents_in", l_agents_in}, {"agent_position", l_agent_position},
    {"lock", l_lock}, {"unlock", l_unlock}, {"force_load", l_force_load}, {"force_unload", l_force_unload},
    {"retry", l_retry}, {"is_loaded", l_is_loaded}, {"state", l_state}, {"update", l_update},
    {"stats", l_stats}, {"waiting", l_waiting}, {"load_tree", l_load_tree}, {"set_graph", l_set_graph},
    {NULL, NULL},
};
static const luaL_Reg funcs[] = {{"new", l_new}, {NULL, NULL}};

int on_lua_streamer_open(lua_State *L)
{
    on_lua_newclass(L, &streamer_class, methods);
    luaL_newlib(L, funcs);
    return 1;
}
