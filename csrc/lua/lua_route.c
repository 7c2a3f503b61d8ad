/*
 * lua_route.c -- `octonav.core.route`: tile graphs (portals.c), the world graph and its planner
 * (route.c) for Lua.
 *
 *   route.build(tree, i, j, k [, opts]) -> blob | nil, reason     a loaded tile's graph, encoded
 *       opts: bound (portal size bound S, leaves; default by depth), stretch (>= 1, default 1: every
 *       pair of portals of a component keeps its weight; above 1 only a greedy stretch-spanner of each
 *       component's pairs does, the others get no edge: on_tgraph_opts), tag
 *   route.info(blob) -> { portals, edges, components, rects, depth, bound, tag, bytes, crc, wshift } | nil, reason
 *   route.portals(blob) -> { {x, y, z, face = F}, ... } (each portal's point, tile-local leaves) | nil, reason
 *   route.world(tree [, graph2]) -> graph (no tile yet; tile graphs held once with graph2's); graph:add_tile(i, j, k, blob | tree) -> true | nil, reason
 *   graph:remove_tile(i, j, k); graph:has_tile(i, j, k); graph:tile_id(i, j, k) -> the held graph's identity (the
 *       CRC-32 its blob ends with, = pack.blob_id of its file) | nil; graph:stats() -> { tiles, portals, edges, links,
 *       rects, faces, dormant, unresolved, bytes }; graph:planner([max_nodes]) -> planner (the graph's planners share
 *       one join scratch, route.h, and the box sets joins build, route_boxes.h); graph:joins_bytes([max_box_bytes])
 *       -> bytes of both, the sets' bytes, their count, their bound (set first when given)
 *   planner:start(tree, a, b) / planner:start_multi(tree, starts, goals [, opts]) -> "running" | "found"
 *   planner:join_limit(work [, ms]); planner:joining() -> bool, units (joins cut to fit, octonav_world.h); probes: lua_route_probe.c
 *   planner:step(budget) -> "running" | "found"; planner:result() -> route; planner:plan(tree, a, b) ->
 *       route (start and step to the end); planner:flat([into]) -> the route's flat form: its scalar
 *       fields, its steps from [1] 7 numbers each (tile, portal, to_tile, to_portal, x, y, z), .n of
 *       them; one table (`into` refilled, or a new one sized for it), none per step
 *   route = { cost, length, near = nil | "same_tile" | "neighbours", start, goal (1-based indices into
 *             the endpoint sets), expansions, join_boxes (boxes the endpoints' local searches settled),
 *             steps = { { tile, portal, to_tile, to_portal, point } } }
 * Tiles are (i, j, k) from 0 in calls and linear indices i + nx * (j + ny * k) in results (the pack's
 * numbering). Runtime failures return nil, reason ("loading", "unreachable", "start_outside",
 * "goal_blocked", "out_of_nodes", "graph_changed", "corrupt", "version", ...) and, for "loading", the
 * tile's linear index. A planner keeps its world graph alive; closing the graph makes it raise.
 */
#include "lua_route_probe.h" /* (lua_util.h, route.h) */
#include "route_boxes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WGRAPH_MT "octonav.route.graph"
#define PLANNER_MT "octonav.route.planner"

typedef struct lwgraph {
    on_lhandle h;          /* h.p: the on_wgraph */
    on_route_joins *joins; /* its planners' shared join scratch (route.h), made with the first planner */
    on_route_boxes *boxes; size_t box_limit; /* and their box sets (route_boxes.h): with it, at most box_limit bytes */
} lwgraph;

typedef struct lplanner {
    on_lhandle h; /* h.p: the on_route */
    const on_wgraph *w; struct lwgraph *g; /* its graph, and its handle (kept alive by the user value) */
    on_route_cross *buf; size_t cap;
    int started;
} lplanner;

/* The graph and its planners' join scratch and box sets (planners outliving a closed graph never start again:
 * checkp raises, and destroying one touches neither: planner_destroy reads boxes NULL). */
static void wgraph_destroy(on_lhandle *h)
{
    lwgraph *u = (lwgraph *)h;
    on_wgraph_destroy(h->p);
    on_route_joins_destroy(u->joins);
    on_route_boxes_destroy(u->boxes); u->boxes = NULL; /* (planners let held sets go while it stands) */
}

static void wgraph_describe(lua_State *L, on_lhandle *h)
{
    on_wgraph_stats st;
    on_wgraph_stats_get(h->p, &st);
    lua_pushfstring(L, "octonav.route.graph: %I tiles, %I portals, %I edges, %I links, %I bytes", (lua_Integer)st.tiles,
                    (lua_Integer)st.portals, (lua_Integer)st.edges, (lua_Integer)st.links, (lua_Integer)st.bytes);
}

static void planner_destroy(on_lhandle *h)
{
    lplanner *u = (lplanner *)h;
    if (u->g && u->g->boxes) on_route_set_boxes(h->p, NULL); /* (the set its suspended join held let go) */
    on_route_destroy(h->p);
    free(u->buf);
    u->buf = NULL;
    u->cap = 0;
}

static void planner_describe(lua_State *L, on_lhandle *h)
{
    lplanner *u = (lplanner *)h;
    lua_pushfstring(L, "octonav.route.planner: %s, %I bytes", u->started ? "started" : "idle",
                    (lua_Integer)on_route_bytes(h->p));
}

static const on_lclass wgraph_class = {WGRAPH_MT, "graph is in use", wgraph_destroy, wgraph_describe};
static const on_lclass planner_class = {PLANNER_MT, "planner is in use", planner_destroy, planner_describe};

static const char *reason_of(on_status s, int which)
{
    if (s & ON_LOADING) return "loading";
    if (s & ON_OUTSIDE) return which ? "goal_outside" : "start_outside";
    if (s & ON_BLOCKED) return which ? "goal_blocked" : "start_blocked";
    if (s & ON_UNREACHABLE) return "unreachable";
    if (s & ON_OUT_OF_NODES) return "out_of_nodes";
    if (s & ON_STALE) return "graph_changed";
    if (s & ON_NO_MEMORY) return "out_of_memory";
    if (s & ON_VERSION) return "version";
    if (s & ON_CORRUPT) return "corrupt";
    return "invalid";
}

/* nil, the reason of failure st: 2 values. */
static int push_fail(lua_State *L, on_status st)
{
    lua_pushnil(L);
    lua_pushstring(L, reason_of(st, 0));
    return 2;
}

/* A tile (i, j, k) at arguments idx..idx+2, checked against the grid; its linear index. */
static uint32_t check_tile(lua_State *L, int idx, const on_tree_params *p)
{
    lua_Integer c[3];
    for (int k = 0; k < 3; k++) {
        c[k] = luaL_checkinteger(L, idx + k);
        if (c[k] < 0 || c[k] >= p->tiles[k])
            luaL_argerror(L, idx + k, lua_pushfstring(L, "tile %c index must be 0..%d", "ijk"[k], p->tiles[k] - 1));
    }
    return (uint32_t)c[0] + (uint32_t)p->tiles[0] * ((uint32_t)c[1] + (uint32_t)p->tiles[1] * (uint32_t)c[2]);
}

static void tgraph_opts(lua_State *L, int idx, on_tgraph_opts *o)
{
    static const char *const known[] = {"bound", "stretch", "tag", NULL};
    memset(o, 0, sizeof *o);
    if (lua_isnoneornil(L, idx)) return;
    luaL_checktype(L, idx, LUA_TTABLE);
    on_lua_checkopts(L, idx, "route.build", known);
    lua_Integer b = on_lua_optinteger(L, idx, "bound", 0);
    if (b < 0 || b > 512) luaL_error(L, "route.build: option 'bound' must be 0..512");
    double st = on_lua_optnumber(L, idx, "stretch", 1.0);
    if (!(st >= 1.0) || !isfinite(st)) luaL_error(L, "route.build: option 'stretch' must be a finite number >= 1");
    lua_Integer tag = on_lua_optinteger(L, idx, "tag", 0);
    if (tag < 0 || tag > 0xffffffffLL) luaL_error(L, "route.build: option 'tag' must be 0..2^32-1");
    o->bound = (int)b;
    o->stretch = st;
    o->tag = (uint32_t)tag;
}

/* Push the encoded graph g (freed here) as a string, or nil, reason. */
static int push_blob(lua_State *L, on_tgraph *g)
{
    size_t len = 0;
    on_tgraph_encode(g, NULL, 0, &len);
    luaL_Buffer b;
    uint8_t *p = (uint8_t *)luaL_buffinitsize(L, &b, len);
    on_status st = on_tgraph_encode(g, p, len, &len);
    on_tgraph_free(g);
    if (!on_ok(st)) return luaL_error(L, "route.build: %s", on_status_string(st));
    luaL_pushresultsize(&b, len);
    return 1;
}

/* route.build(tree, i, j, k [, opts]) */
static int l_build(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    on_tgraph_opts o;
    tgraph_opts(L, 5, &o); /* before the tree is taken (lua_util.h, rule (a)) */
    on_tree *t = on_lua_checktree(L, 1);
    uint32_t tile = check_tile(L, 2, on_tree_get_params(t));
    on_tgraph *g = NULL;
    on_status st = on_tgraph_build_tile(t, tile, &o, &g);
    if (on_failed(st)) return push_fail(L, st);
    return push_blob(L, g);
}

/* route.info(blob) */
/* The tile graph in the blob at argument 1 (the caller frees it and makes no Lua allocation while it
 * holds it: an error there would leak it), or NULL with nil, reason pushed. */
static on_tgraph *decode_arg(lua_State *L, size_t *len)
{
    const char *s = luaL_checklstring(L, 1, len);
    on_tgraph *g = NULL;
    on_status st = on_tgraph_decode((const uint8_t *)s, *len, 0, &g);
    if (!on_failed(st)) return g;
    (void)push_fail(L, st);
    return NULL;
}

static int l_info(lua_State *L)
{
    size_t len;
    on_tgraph *g = decode_arg(L, &len);
    if (!g) return 2;
    on_tgraph_info gi;
    on_tgraph_get_info(g, &gi);
    on_tgraph_free(g);
    static const char *const keys[] = {"crc", "wshift", "portals", "edges", "components", "rects", "depth", "bound", "tag", "bytes", NULL};
    const lua_Integer v[] = {gi.crc, gi.wshift, gi.portals, gi.edges, gi.components, gi.rects, gi.depth, gi.bound, gi.tag, (lua_Integer)gi.bytes};
    lua_createtable(L, 0, 10);
    on_lua_setints(L, keys, v);
    return 1;
}

/* route.portals(blob) -> { {x, y, z, face = F}, ... } (tile-local leaves) | nil, reason: each portal's
 * point, for drawing (octonav.debug). */
static int l_portals(lua_State *L)
{
    /* every portal takes at least one byte of the blob: room for all of them, allocated by Lua before
     * the graph exists, so nothing that may raise runs while it does */
    size_t len;
    luaL_checklstring(L, 1, &len);
    double *pt = lua_newuserdatauv(L, (len + 1) * 4 * sizeof *pt, 0);
    on_tgraph *g = decode_arg(L, &len);
    if (!g) return 2;
    on_tgraph_info gi;
    on_tgraph_get_info(g, &gi);
    size_t n = gi.portals <= len ? gi.portals : len;
    for (uint32_t p = 0; p < n; p++) pt[4 * p + 3] = on_tgraph_portal_point(g, p, pt + 4 * p);
    on_tgraph_free(g);
    lua_createtable(L, (int)n, 0);
    for (size_t p = 0; p < n; p++) {
        lua_createtable(L, 3, 1);
        for (int k = 0; k < 3; k++) {
            lua_pushnumber(L, pt[4 * p + (size_t)k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_pushinteger(L, (lua_Integer)pt[4 * p + 3]);
        lua_setfield(L, -2, "face");
        lua_rawseti(L, -2, (lua_Integer)p + 1);
    }
    return 1;
}

/* route.world(tree [, graph2]) */
static int l_world(lua_State *L)
{
    const on_tree_params tp = *on_tree_get_params(on_lua_checktree(L, 1)); /* a copy: an allocation may run a finalizer */
    lua_settop(L, 2); /* (graph2 or nil at 2, the new graph at 3) */
    lwgraph *u = (lwgraph *)on_lua_newhandle(L, &wgraph_class, sizeof(lwgraph), 0);
    on_wgraph *w = NULL, *with = lua_isnil(L, 2) ? NULL : on_lua_checkhandle(L, 2, &wgraph_class)->p;
    on_status st = on_wgraph_create(&tp, &w);
    u->box_limit = ON_ROUTE_BOXES_BYTES;
    if ((u->h.p = w) != NULL && with) st = on_wgraph_share(w, with); /* (identical records held once) */
    if (!on_ok(st)) return luaL_error(L, "route.world: %s", on_status_string(st));
    return 1;
}

static on_wgraph *checkw(lua_State *L, int idx) { return on_lua_checkhandle(L, idx, &wgraph_class)->p; }

/* graph:add_tile(i, j, k, blob | tree) */
static int l_add_tile(lua_State *L)
{
    on_wgraph *w = checkw(L, 1);
    const on_tree_params *p = on_wgraph_params(w);
    uint32_t tile = check_tile(L, 2, p);
    on_tgraph *g = NULL;
    on_status st;
    if (lua_type(L, 5) == LUA_TSTRING) {
        size_t len;
        const char *s = lua_tolstring(L, 5, &len);
        st = on_tgraph_decode((const uint8_t *)s, len, p->depth, &g);
        if (st == (ON_FAILURE | ON_INVALID)) {
            lua_pushnil(L);
            lua_pushliteral(L, "depth"); /* built for tiles of another depth */
            return 2;
        }
    } else {
        on_tree *t = on_lua_testtree(L, 5);
        if (!t) return luaL_argerror(L, 5, "graph must be a tile graph string or an open tree");
        const on_tree_params *tp = on_tree_get_params(t);
        if (tp->depth != p->depth || memcmp(tp->tiles, p->tiles, sizeof tp->tiles) != 0)
            return luaL_argerror(L, 5, "tree has another tile grid than the graph");
        st = on_tgraph_build_tile(t, tile, NULL, &g);
    }
    if (on_failed(st)) return push_fail(L, st);
    st = on_wgraph_add_tile(w, tile, g);
    if (on_failed(st)) return luaL_error(L, "add_tile: %s", on_status_string(st));
    lua_pushboolean(L, 1);
    return 1;
}

/* The world graph and tile index (i, j, k) at 2..4 of graph:remove_tile / graph:has_tile. */
static on_wgraph *check_wtile(lua_State *L, uint32_t *tile)
{
    on_wgraph *w = checkw(L, 1);
    *tile = check_tile(L, 2, on_wgraph_params(w));
    return w;
}

static int l_remove_tile(lua_State *L)
{
    uint32_t tile;
    on_wgraph *w = check_wtile(L, &tile);
    on_status st = on_wgraph_remove_tile(w, tile);
    if (on_failed(st)) return luaL_error(L, "remove_tile: %s", on_status_string(st));
    lua_pushboolean(L, 1);
    return 1;
}

static int l_has_tile(lua_State *L)
{
    uint32_t tile;
    on_wgraph *w = check_wtile(L, &tile);
    lua_pushboolean(L, on_wgraph_has_tile(w, tile));
    return 1;
}

/* graph:tile_id(i, j, k) -> the held graph's identity (its blob's CRC-32) | nil */
static int l_tile_id(lua_State *L)
{
    uint32_t tile, id;
    on_wgraph *w = check_wtile(L, &tile);
    if (on_wgraph_tile_id(w, tile, &id)) lua_pushinteger(L, (lua_Integer)id);
    else lua_pushnil(L);
    return 1;
}

static int l_stats(lua_State *L)
{
    on_wgraph *w = checkw(L, 1);
    on_wgraph_stats st;
    on_wgraph_stats_get(w, &st);
    static const char *const keys[] = {"tiles", "faces", "dormant", "unresolved", "portals", "edges", "links", "rects", "bytes", NULL};
    const lua_Integer v[] = {(lua_Integer)st.tiles, (lua_Integer)st.faces, (lua_Integer)st.dormant,
                             (lua_Integer)st.unresolved, (lua_Integer)st.portals, (lua_Integer)st.edges,
                             (lua_Integer)st.links, (lua_Integer)st.rects, (lua_Integer)st.bytes};
    lua_createtable(L, 0, 9);
    on_lua_setints(L, keys, v);
    return 1;
}

/* graph:planner([max_nodes]): every planner of the graph shares the graph's join scratch (route.h). */
static int l_planner(lua_State *L)
{
    luaL_checkudata(L, 1, WGRAPH_MT);
    lua_Integer mx = luaL_optinteger(L, 2, 0);
    if (mx < 0 || mx > (1 << 30)) return luaL_argerror(L, 2, "max_nodes must be 0..2^30");
    lplanner *u = (lplanner *)on_lua_newhandle(L, &planner_class, sizeof(lplanner), 2);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1); /* keeps the graph alive */
    on_wgraph *w = checkw(L, 1); /* after the allocation (rule (a)) */
    lwgraph *g = (lwgraph *)lua_touserdata(L, 1);
    if ((!g->joins && on_failed(on_route_joins_create(&g->joins))) || (!g->boxes && on_failed(on_route_boxes_create(g->box_limit, &g->boxes))))
        return luaL_error(L, "planner: out of memory");
    on_route *r = NULL;
    on_status st = on_route_create(w, (size_t)mx, &r);
    if (!on_ok(st)) return luaL_error(L, "planner: %s", on_status_string(st));
    on_route_set_joins(r, g->joins);
    on_route_set_boxes(r, g->boxes);
    u->h.p = r;
    u->w = w, u->g = g;
    return 1;
}

/* graph:joins_bytes([max_box_bytes]) -> bytes of the join scratch and the box sets its planners share (0
 * before the first planner), the sets' bytes, their count, their bound (set first when given: the sets
 * not in use dropped until the rest fit, route_boxes.h) */
static int l_joins_bytes(lua_State *L)
{
    checkw(L, 1);
    lwgraph *g = (lwgraph *)lua_touserdata(L, 1);
    lua_Integer mx = luaL_optinteger(L, 2, (lua_Integer)g->box_limit);
    if (mx < 0) return luaL_argerror(L, 2, "max_box_bytes must be >= 0");
    on_route_boxes_set_limit(g->boxes, g->box_limit = (size_t)mx);
    size_t b = on_route_boxes_bytes(g->boxes), v[] = {on_route_joins_bytes(g->joins) + b, b, on_route_boxes_sets(g->boxes), (size_t)mx};
    for (int i = 0; i < 4; i++) lua_pushinteger(L, (lua_Integer)v[i]);
    return 4;
}

/* The planner at idx, raising when it or its graph was closed. */
static lplanner *checkp(lua_State *L, int idx)
{
    lplanner *u = (lplanner *)on_lua_checkhandle(L, idx, &planner_class);
    lua_getiuservalue(L, idx, 1);
    on_lhandle *g = on_lua_testhandle(L, -1, &wgraph_class);
    lua_pop(L, 1);
    if (!g || g->p != u->w) luaL_error(L, "planner: its world graph was closed");
    return u;
}

/* Push the outcome of a status: "running" / "found" (1 value) or nil, reason[, tile] (2 or 3). */
static int push_status(lua_State *L, lplanner *u, on_status st)
{
    if (on_in_progress(st) || on_ok(st)) {
        lua_pushstring(L, on_ok(st) ? "found" : "running");
        return 1;
    }
    on_route_info info;
    size_t n;
    on_route_result(u->h.p, NULL, 0, &n, &info);
    lua_pushnil(L);
    lua_pushstring(L, reason_of(st, info.which));
    if (!(st & ON_LOADING)) return 2;
    lua_pushinteger(L, info.loading_tile);
    return 3;
}

/* Link what a rebake left unresolved, from the tree's loaded tiles (route.h). */
static void resolve(lua_State *L, int pidx, const on_tree *t)
{
    lua_getiuservalue(L, pidx, 1);
    on_lhandle *g = on_lua_testhandle(L, -1, &wgraph_class);
    lua_pop(L, 1);
    if (g && g->p) on_wgraph_resolve(g->p, t, NULL); /* failures leave pairs unresolved: "loading" */
}

/* A start's tree (argument 2): its tile grid checked (raises), held for the joins' later steps; u started. */
static on_tree *start_tree(lua_State *L, lplanner *u)
{
    on_tree *t = on_lua_checktree(L, 2);
    const on_tree_params *tp = on_tree_get_params(t), *wp = on_wgraph_params(u->w);
    if (tp->depth != wp->depth || memcmp(tp->tiles, wp->tiles, sizeof tp->tiles) != 0)
        luaL_argerror(L, 2, "tree has another tile grid than the graph");
    u->started = 1;
    resolve(L, 1, t);
    lua_pushvalue(L, 2);
    lua_setiuservalue(L, 1, 2);
    return t;
}

static int l_start(lua_State *L)
{
    luaL_checkudata(L, 1, PLANNER_MT);
    luaL_checkudata(L, 2, ON_TREE_MT);
    double a[3], b[3];
    on_lua_checkpoint(L, 3, "start", a);
    on_lua_checkpoint(L, 4, "goal", b);
    lplanner *u = checkp(L, 1); /* after the points (rule (a)) */
    on_tree *t = start_tree(L, u);
    (void)on_route_set_weight(u->h.p, ROUTE_WEIGHT); /* (a pooled planner: start_multi's option undone) */
    return push_status(L, u, on_route_start(u->h.p, t, a, b));
}

/* A list of points at idx (argument argn) into a malloc'd array (3 doubles each); *n. Raises. */
static double *check_points(lua_State *L, int idx, const char *name, size_t *n)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_Integer len = luaL_len(L, idx);
    if (len < 1 || len > 4096) luaL_argerror(L, idx, lua_pushfstring(L, "%s must hold 1..4096 points", name));
    double *v = lua_newuserdatauv(L, (size_t)len * 3 * sizeof *v, 0); /* freed by the GC, even on error */
    for (lua_Integer i = 0; i < len; i++) {
        lua_geti(L, idx, i + 1);
        on_lua_checkpoint_arg(L, -1, idx, name, v + 3 * i);
        lua_pop(L, 1);
    }
    *n = (size_t)len;
    return v;
}

static double *check_costs(lua_State *L, int opts, const char *key, size_t n)
{
    lua_getfield(L, opts, key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    if (!lua_istable(L, -1) || luaL_len(L, -1) != (lua_Integer)n)
        luaL_error(L, "start_multi: option '%s' must be a list of one cost per point", key);
    double *c = lua_newuserdatauv(L, n * sizeof *c, 0);
    lua_insert(L, -2);
    for (size_t i = 0; i < n; i++) {
        lua_geti(L, -1, (lua_Integer)i + 1);
        int isnum;
        c[i] = lua_tonumberx(L, -1, &isnum);
        if (!isnum || !(c[i] >= 0) || !isfinite(c[i]))
            luaL_error(L, "start_multi: option '%s' must hold finite numbers >= 0", key);
        lua_pop(L, 1);
    }
    lua_pop(L, 1); /* the list; the userdata stays on the stack */
    return c;
}

/* planner:start_multi(tree, starts, goals [, { start_costs = {...}, goal_costs = {...}, radius = r, weight = w }]):
 * weight the world search's heuristic weight (1..ROUTE_WEIGHT_MAX, route.h; absent: ROUTE_WEIGHT, 1.5) */
static int l_start_multi(lua_State *L)
{
    static const char *const known[] = {"start_costs", "goal_costs", "radius", "weight", NULL};
    luaL_checkudata(L, 1, PLANNER_MT);
    luaL_checkudata(L, 2, ON_TREE_MT);
    lua_settop(L, 5); /* the point arrays below are pushed above the options: keep index 5 the options */
    size_t ns, ng;
    double *s = check_points(L, 3, "starts", &ns);
    double *g = check_points(L, 4, "goals", &ng);
    double *sc = NULL, *gc = NULL, radius = 0, weight = ROUTE_WEIGHT;
    if (!lua_isnoneornil(L, 5)) {
        luaL_checktype(L, 5, LUA_TTABLE);
        on_lua_checkopts(L, 5, "start_multi", known);
        sc = check_costs(L, 5, "start_costs", ns);
        gc = check_costs(L, 5, "goal_costs", ng);
        if (!((radius = on_lua_optnumber(L, 5, "radius", 0)) >= 0) || !isfinite(radius)) luaL_error(L, "start_multi: option 'radius' must be a finite number >= 0");
        weight = on_lua_inrange(L, on_lua_optnumber(L, 5, "weight", ROUTE_WEIGHT), "start_multi", "weight", 1, ROUTE_WEIGHT_MAX);
    }
    lplanner *u = checkp(L, 1); /* after the lists (rule (a)) */
    on_tree *t = start_tree(L, u);
    on_route_set_join_radius(u->h.p, radius / on_tree_get_params(t)->scale);
    (void)on_route_set_weight(u->h.p, weight); /* (in range: checked above) */
    return push_status(L, u, on_route_start_multi(u->h.p, t, s, sc, ns, g, gc, ng));
}

/* planner:join_limit(work [, ms]): each start and step joins for at most `work` units and `ms` (0: none;
 * a step's portals too: on_route_set_join_limit); planner:joining() -> whether its joins go on, the units */
static int l_join_limit(lua_State *L)
{
    lplanner *u = checkp(L, 1);
    lua_Integer work = luaL_checkinteger(L, 2);
    double ms = luaL_optnumber(L, 3, 0);
    if (work < 0) return luaL_argerror(L, 2, "work must be >= 0");
    if (!(ms >= 0) || !isfinite(ms)) return luaL_argerror(L, 3, "ms must be a finite number >= 0");
    on_route_set_join_limit(u->h.p, (size_t)work, ms * 1e-3);
    return 0;
}

static int l_joining(lua_State *L)
{
    lplanner *u = checkp(L, 1);
    on_route_info info;
    size_t n;
    on_route_result(u->h.p, NULL, 0, &n, &info);
    lua_pushboolean(L, on_route_joining(u->h.p));
    lua_pushinteger(L, (lua_Integer)info.join_work);
    return 2;
}

static int l_step(lua_State *L)
{
    lplanner *u = checkp(L, 1);
    lua_Integer budget = luaL_checkinteger(L, 2);
    if (budget < 1) return luaL_argerror(L, 2, "budget must be >= 1");
    if (!u->started) return luaL_error(L, "step: no route started");
    return push_status(L, u, on_route_step(u->h.p, (size_t)budget, NULL));
}

#define ROUTE_FLAT 7

/* The route's scalar fields into the table at idx, for both forms: cost, near ("same_tile",
 * "neighbours" or nil), length, start and goal (nil when near), expansions, join_boxes; the nil ones
 * cleared (a refilled flat table keeps nothing from its last route; a new table gets no entry). */
static void set_info(lua_State *L, int idx, const on_route_info *info)
{
    lua_pushnumber(L, info->cost);
    lua_setfield(L, idx, "cost");
    if (info->near) lua_pushstring(L, info->near == ON_ROUTE_SAME_TILE ? "same_tile" : "neighbours");
    else lua_pushnil(L);
    lua_setfield(L, idx, "near");
    static const char *const keys[] = {"length", "start", "goal"};
    for (int k = 0; k < 3; k++) {
        if (info->near) lua_pushnil(L);
        else if (k == 0) lua_pushnumber(L, info->length);
        else lua_pushinteger(L, (lua_Integer)(k == 1 ? info->start : info->goal) + 1);
        lua_setfield(L, idx, keys[k]);
    }
    lua_pushinteger(L, (lua_Integer)info->expansions);
    lua_setfield(L, idx, "expansions");
    lua_pushinteger(L, (lua_Integer)info->join_boxes);
    lua_setfield(L, idx, "join_boxes");
}

/* The crossings into table `into` (at idx): its scalar fields as the route table's, the crossings flat
 * from into[1] (ROUTE_FLAT numbers each: tile, portal, to_tile, to_portal, x, y, z), into.n = their
 * count, the entries past them cleared. Makes no table: a caller that keeps `into` plans without
 * garbage (the navigator's crowds, planner.lua). */
static void fill_flat(lua_State *L, int into, const lplanner *u, size_t n, const on_route_info *info, lua_Integer old)
{
    set_info(L, into, info);
    lua_pushinteger(L, (lua_Integer)n);
    lua_setfield(L, into, "n");
    lua_Integer at = 0;
    for (size_t i = 0; i < n; i++) {
        const on_route_cross *c = &u->buf[i];
        const lua_Integer v[4] = {c->tile, c->portal, c->to_tile, c->to_portal};
        for (int k = 0; k < ROUTE_FLAT; k++) { /* (the ids integers, the point's coordinates floats) */
            if (k < 4) lua_pushinteger(L, v[k]);
            else lua_pushnumber(L, c->point[k - 4]);
            lua_rawseti(L, into, ++at);
        }
    }
    for (lua_Integer i = at + 1; i <= old * ROUTE_FLAT; i++) {
        lua_pushnil(L);
        lua_rawseti(L, into, i);
    }
}

/* The route table, or its flat form (fill_flat) into the table at `into` > 0 or (into < 0) a new one. */
static int push_result(lua_State *L, lplanner *u, int into, lua_Integer old)
{
    size_t n = 0;
    on_route_info info;
    on_status st = on_route_result(u->h.p, u->buf, u->cap, &n, &info);
    if (st == (ON_FAILURE | ON_BUFFER_SMALL)) {
        on_route_cross *b = realloc(u->buf, n * sizeof *b);
        if (!b) return luaL_error(L, "result: out of memory");
        u->buf = b;
        u->cap = n;
        st = on_route_result(u->h.p, u->buf, u->cap, &n, &info);
    }
    if (!on_ok(st)) {
        if (on_in_progress(st)) return luaL_error(L, "result: the route is still running");
        return push_status(L, u, st);
    }
    if (into != 0) {
        if (into < 0) { /* a new table: the crossings' numbers in its array part, 8 fields */
            lua_createtable(L, (int)(n * ROUTE_FLAT), 8);
            into = lua_gettop(L);
        }
        fill_flat(L, into, u, n, &info, old);
        lua_pushvalue(L, into);
        return 1;
    }
    lua_createtable(L, 0, 7);
    set_info(L, lua_gettop(L), &info);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        const on_route_cross *c = &u->buf[i];
        lua_createtable(L, 0, 5);
        on_lua_setint(L, "tile", c->tile);
        on_lua_setint(L, "portal", c->portal);
        on_lua_setint(L, "to_tile", c->to_tile);
        on_lua_setint(L, "to_portal", c->to_portal);
        on_lua_pushpoint(L, c->point);
        lua_setfield(L, -2, "point");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "steps");
    return 1;
}

typedef struct result_ctx {
    lplanner *u;
    int into;
    lua_Integer old; /* into.n, read before the planner was taken (rule (a)) */
} result_ctx;

/* (pinned: the tables are built from the planner's crossings, rule (b); `into` may run metamethods) */
static int result_body(lua_State *L, void *ctx)
{
    const result_ctx *x = ctx;
    return push_result(L, x->u, x->into, x->old);
}

static int pinned_result(lua_State *L, lplanner *u, int into, lua_Integer old)
{
    result_ctx x = {u, into, old};
    on_lhandle *h = &u->h;
    return on_lua_pinned(L, &h, 1, result_body, &x);
}

static int l_result(lua_State *L)
{
    lplanner *u = checkp(L, 1);
    if (!u->started) return luaL_error(L, "result: no route started");
    return pinned_result(L, u, 0, 0);
}

/* planner:flat([into]): the result in its flat form (fill_flat), into `into` or a new table sized for it */
static int l_flat(lua_State *L)
{
    luaL_checkudata(L, 1, PLANNER_MT);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer old = 0;
    if (lua_istable(L, 2)) { /* the entries past the new route's are cleared up to into.n's */
        lua_getfield(L, 2, "n");
        old = lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lplanner *u = checkp(L, 1);
    if (!u->started) return luaL_error(L, "flat: no route started");
    return pinned_result(L, u, lua_istable(L, 2) ? 2 : -1, old);
}

/* planner:plan(tree, a, b): start, step to the end, result. */
static int l_plan(lua_State *L)
{
    int nret = l_start(L);
    if (nret > 1) return nret;
    lplanner *u = checkp(L, 1); /* (again: l_start's answer was pushed, which may run a finalizer) */
    on_status st;
    do st = on_route_step(u->h.p, 4096, NULL);
    while (on_in_progress(st));
    return pinned_result(L, u, 0, 0);
}

static int l_last_call(lua_State *L) { return on_lua_push_route_calls(L, checkp(L, 1)->h.p); }
static int l_bytes(lua_State *L)
{
    lplanner *u = checkp(L, 1);
    lua_pushinteger(L, (lua_Integer)on_route_bytes(u->h.p));
    return 1;
}

int on_lua_route_open(lua_State *L)
{
    static const luaL_Reg gmethods[] = {{"add_tile", l_add_tile}, {"remove_tile", l_remove_tile},
                                        {"has_tile", l_has_tile}, {"tile_id", l_tile_id}, {"stats", l_stats},
                                        {"planner", l_planner},   {"joins_bytes", l_joins_bytes}, {NULL, NULL}};
    static const luaL_Reg pmethods[] = {{"start", l_start}, {"start_multi", l_start_multi}, {"step", l_step},
                                        {"result", l_result}, {"flat", l_flat}, {"plan", l_plan}, {"bytes", l_bytes},
                                        {"join_limit", l_join_limit}, {"joining", l_joining}, {"last_call", l_last_call}, {NULL, NULL}};
    static const luaL_Reg funcs[] = {{"build", l_build}, {"info", l_info}, {"portals", l_portals}, {"world", l_world}, {"thread_faults", on_lua_thread_faults}, {NULL, NULL}};
    on_lua_newclass(L, &wgraph_class, gmethods);
    on_lua_newclass(L, &planner_class, pmethods);
    luaL_newlib(L, funcs);
    lua_setfield(L, -2, "route"); /* into the module table below it */
    return 0;
}
