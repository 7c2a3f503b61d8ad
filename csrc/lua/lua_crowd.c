/*
 * lua_crowd.c -- the `octonav.crowd` userdata: agents that fly together (csrc/crowd/, octonav_crowd.h).
 *
 * c = core.crowd.new(tree, {max_agents = 1024, ...}); id = c:add({x, y, z}, {radius = 0.5, ...}) or
 * nil, reason; c:remove(id); c:set_goal(id, x, y, z) (no numbers: no goal); c:set_path(id, points);
 * c:update(dt); reads: c:agent(id [, t]) (a table, or t filled again), c:position(id) and
 * c:velocity(id) (three numbers), c:states([t]) (x, y, z, vx, vy, vz per agent, flat), c:ids([t]),
 * c:neighbours(id [, t]), c:path(id [, t]), c:stats(), #c. lua/octonav/crowd.lua is the documented face.
 * The crowd keeps its tree userdata alive (user value 1) and holds it (on_lhandle.held): closing the
 * tree raises "tree is in use by a crowd" while the crowd is open. The tree may change meanwhile: the
 * crowd reads its boundaries again and a search that met the change is made again.
 * Every function copies its arguments first and takes the crowd's pointer after (lua_util.h, rule (a));
 * results are built from values copied out of the crowd (no pin needed).
 */
#include "lua_util.h"
#include "octonav_crowd.h"

#include <math.h>
#include <string.h>

#define CROWD_MT "octonav.crowd"

typedef struct lcrowd {
    on_lhandle h;        /* h.p: the on_crowd */
    on_lhandle *tree_h;  /* the tree's handle (kept alive by user value 1) */
} lcrowd;

static void crowd_destroy(on_lhandle *h)
{
    on_crowd_destroy(h->p);
    h->p = NULL;
    ((lcrowd *)h)->tree_h->held--;
}

static void crowd_describe(lua_State *L, on_lhandle *h)
{
    on_crowd_stats st;
    on_crowd_stats_get(h->p, &st);
    lua_pushfstring(L, "octonav.crowd: %I agents, %I frames", (lua_Integer)st.agents, (lua_Integer)st.frames);
}

static const on_lclass crowd_class = {CROWD_MT, "crowd is in use", crowd_destroy, crowd_describe};

static on_crowd *checkcrowd(lua_State *L, int idx)
{
    return on_lua_checkhandle(L, idx, &crowd_class)->p;
}

static const char *const new_opts[] = {"max_agents", "max_neighbours", "time_horizon", "time_horizon_obst",
                                       "plan_budget", "max_nodes", "drift", "threads", NULL};

/* core.crowd.new(tree [, opts]) */
static int l_new(lua_State *L)
{
    const char *fn = "octonav.crowd.new";
    luaL_checkudata(L, 1, ON_TREE_MT);
    on_lua_checkopts(L, 2, fn, new_opts);
    on_crowd_params p;
    memset(&p, 0, sizeof p);
    p.max_agents = (uint32_t)on_lua_inrange(L, (double)on_lua_optinteger(L, 2, "max_agents", 1024), fn, "max_agents",
                                            1, 1048575);
    p.max_neighbours = (int)on_lua_inrange(L, (double)on_lua_optinteger(L, 2, "max_neighbours", 16), fn,
                                           "max_neighbours", 1, 32);
    p.time_horizon = on_lua_inrange(L, on_lua_optnumber(L, 2, "time_horizon", 1.5), fn, "time_horizon", 1e-3, 1e6);
    p.time_horizon_obst =
        on_lua_inrange(L, on_lua_optnumber(L, 2, "time_horizon_obst", 0.5), fn, "time_horizon_obst", 1e-3, 1e6);
    p.plan_budget = (size_t)on_lua_inrange(L, (double)on_lua_optinteger(L, 2, "plan_budget", 4000), fn, "plan_budget",
                                           1, 1e9);
    p.max_nodes = (size_t)on_lua_inrange(L, (double)on_lua_optinteger(L, 2, "max_nodes", 65536), fn, "max_nodes", 2,
                                         1 << 30);
    p.drift = on_lua_inrange(L, on_lua_optnumber(L, 2, "drift", 0), fn, "drift", 0, 1);
    p.threads = (int)on_lua_inrange(L, (double)on_lua_optinteger(L, 2, "threads", 1), fn, "threads", 1, 64);
    lcrowd *u = (lcrowd *)on_lua_newhandle(L, &crowd_class, sizeof *u, 1);
    on_tree *t = on_lua_checktree(L, 1); /* after the options and the allocation (rule (a)) */
    u->tree_h = on_lua_testhandle(L, 1, &on_lua_tree_class);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    on_status s = on_crowd_create(t, &p, (on_crowd **)&u->h.p);
    if (!on_ok(s)) return luaL_error(L, "%s: %s", fn, on_status_string(s));
    u->tree_h->held++; /* released by crowd_destroy, which runs only once h.p is set */
    u->tree_h->held_msg = "tree is in use by a crowd";
    return 1;
}

static const char *const add_opts[] = {"radius", "max_speed", "max_accel", "max_turn_rate", "arrive_dist", NULL};

/* c:add(pos [, opts]) -> id | nil, "outside" | "blocked" | "unloaded" | "full" */
static int l_add(lua_State *L)
{
    const char *fn = "add";
    luaL_checkudata(L, 1, CROWD_MT);
    double pos[3];
    on_lua_checkpoint(L, 2, "pos", pos);
    on_lua_checkopts(L, 3, fn, add_opts);
    on_crowd_agent_params ap;
    ap.radius = on_lua_inrange(L, on_lua_optnumber(L, 3, "radius", 0.5), fn, "radius", 1e-9, ON_MAX_COORD);
    ap.max_speed = on_lua_inrange(L, on_lua_optnumber(L, 3, "max_speed", 4), fn, "max_speed", 1e-9, ON_MAX_COORD);
    ap.max_accel = on_lua_inrange(L, on_lua_optnumber(L, 3, "max_accel", 8), fn, "max_accel", 1e-9, ON_MAX_COORD);
    ap.max_turn_rate =
        on_lua_inrange(L, on_lua_optnumber(L, 3, "max_turn_rate", 3.141592653589793), fn, "max_turn_rate", 1e-9, 1e6);
    ap.arrive_dist = on_lua_inrange(L, on_lua_optnumber(L, 3, "arrive_dist", 0), fn, "arrive_dist", 0, ON_MAX_COORD);
    on_crowd *c = checkcrowd(L, 1);
    uint32_t id;
    on_status s = on_crowd_add(c, pos, &ap, &id);
    if (on_ok(s)) {
        lua_pushinteger(L, id);
        return 1;
    }
    if (s & ON_NO_MEMORY) return luaL_error(L, "add: out of memory");
    lua_pushnil(L);
    lua_pushstring(L, (s & ON_OUTSIDE)     ? "outside"
                      : (s & ON_BLOCKED)   ? "blocked"
                      : (s & ON_UNLOADED)  ? "unloaded"
                      : (s & ON_BUFFER_SMALL) ? "full"
                                              : on_status_string(s));
    return 2;
}

static uint32_t checkid(lua_State *L, int idx, const char *fn)
{
    lua_Integer id = luaL_checkinteger(L, idx);
    if (id < 1 || id > 0xffffffff) luaL_error(L, "%s: no agent %I", fn, id);
    return (uint32_t)id;
}

static void noagent(lua_State *L, on_status s, const char *fn, uint32_t id)
{
    if (s & ON_NO_MEMORY) luaL_error(L, "%s: out of memory", fn);
    if (!on_ok(s)) luaL_error(L, "%s: no agent %I", fn, (lua_Integer)id);
}

/* c:remove(id) */
static int l_remove(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "remove");
    noagent(L, on_crowd_remove(checkcrowd(L, 1), id), "remove", id);
    return 0;
}

/* c:set_goal(id, x, y, z) or c:set_goal(id) (no goal) */
static int l_set_goal(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "set_goal");
    double g[3];
    int none = lua_isnoneornil(L, 3);
    if (!none) {
        const char *names[3] = {"x", "y", "z"};
        for (int i = 0; i < 3; i++) {
            g[i] = luaL_checknumber(L, 3 + i);
            if (!isfinite(g[i])) luaL_error(L, "set_goal: %s must be a finite number", names[i]);
        }
    }
    noagent(L, on_crowd_set_goal(checkcrowd(L, 1), id, none ? NULL : g), "set_goal", id);
    return 0;
}

/* c:set_path(id, points) */
static int l_set_path(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "set_path");
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 3);
    if (n < 1 || n > 1 << 24) return luaL_error(L, "set_path: points must hold 1 to 16777216 points");
    double *pts = lua_newuserdatauv(L, (size_t)n * 3 * sizeof *pts, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 3, i);
        on_lua_checkpoint_arg(L, -1, 3, "point", pts + 3 * (i - 1));
        lua_pop(L, 1);
    }
    noagent(L, on_crowd_set_path(checkcrowd(L, 1), id, pts, (size_t)n), "set_path", id);
    return 0;
}

/* c:update(dt) -> true | nil, "out of memory" (some agents held this frame) */
static int l_update(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    double dt = luaL_checknumber(L, 2);
    if (!(dt > 0 && dt <= 1)) return luaL_error(L, "update: dt must be a number in (0, 1]");
    on_status s = on_crowd_update(checkcrowd(L, 1), dt);
    if (s & ON_NO_MEMORY) {
        lua_pushnil(L);
        lua_pushliteral(L, "out of memory");
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const char *const state_names[] = {"idle", "planning", "moving", "arrived", "failed"};

static void setpoint(lua_State *L, int t, const char *k, const double p[3])
{
    on_lua_pushpoint(L, p);
    lua_setfield(L, t, k);
}

/* c:agent(id [, t]) -> t: id, state, pos, vel, pref, goal, radius, max_speed, max_accel, max_turn_rate,
 * arrive_dist, neighbours, walls, fallback, path_points (t given: its fields written again) */
static int l_agent(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "agent");
    lua_settop(L, 3);
    if (!lua_isnil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    on_crowd_agent_state st;
    noagent(L, on_crowd_agent_get(checkcrowd(L, 1), id, &st), "agent", id);
    if (lua_isnoneornil(L, 3)) lua_createtable(L, 0, 16);
    else lua_pushvalue(L, 3);
    int t = lua_gettop(L);
    on_lua_setint(L, "id", st.id);
    lua_pushstring(L, state_names[st.state]);
    lua_setfield(L, t, "state");
    setpoint(L, t, "pos", st.pos);
    setpoint(L, t, "vel", st.vel);
    setpoint(L, t, "pref", st.pref);
    setpoint(L, t, "goal", st.goal);
    on_lua_setnum(L, "radius", st.radius);
    on_lua_setnum(L, "max_speed", st.max_speed);
    on_lua_setnum(L, "max_accel", st.max_accel);
    on_lua_setnum(L, "max_turn_rate", st.max_turn_rate);
    on_lua_setnum(L, "arrive_dist", st.arrive_dist);
    on_lua_setint(L, "neighbours", st.neighbours);
    on_lua_setint(L, "walls", st.walls);
    lua_pushboolean(L, st.fallback);
    lua_setfield(L, t, "fallback");
    on_lua_setint(L, "path_points", (lua_Integer)st.path_points);
    return 1;
}

static int push3(lua_State *L, const double v[3])
{
    lua_pushnumber(L, v[0]);
    lua_pushnumber(L, v[1]);
    lua_pushnumber(L, v[2]);
    return 3;
}

/* c:position(id) -> x, y, z */
static int l_position(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "position");
    on_crowd_agent_state st;
    noagent(L, on_crowd_agent_get(checkcrowd(L, 1), id, &st), "position", id);
    return push3(L, st.pos);
}

/* c:velocity(id) -> vx, vy, vz */
static int l_velocity(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "velocity");
    on_crowd_agent_state st;
    noagent(L, on_crowd_agent_get(checkcrowd(L, 1), id, &st), "velocity", id);
    return push3(L, st.vel);
}

/* A table argument to fill (else a new one) at the top; its index. */
static int out_table(lua_State *L, int idx, const char *fn, int narr)
{
    if (lua_isnoneornil(L, idx)) lua_createtable(L, narr, 0);
    else {
        if (!lua_istable(L, idx)) luaL_error(L, "bad argument #%d to '%s' (table expected)", idx - 1, fn);
        lua_pushvalue(L, idx);
    }
    return lua_gettop(L);
}

/* c:states([t]) -> t, n: t[6i-5 .. 6i] = x, y, z, vx, vy, vz of the i-th agent (the order of c:ids()) */
static int l_states(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    lua_settop(L, 2);
    if (!lua_isnil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    size_t n, cap;
    double *buf;
    on_crowd_states(checkcrowd(L, 1), NULL, 0, &n);
    /* again after the allocation (rule (a)), into a buffer as large as the crowd is then: a finalizer
     * the allocation ran may have added agents (the copy then counts more than the buffer holds) */
    do {
        cap = n;
        lua_settop(L, 2);
        buf = lua_newuserdatauv(L, (cap ? cap : 1) * 6 * sizeof *buf, 0);
    } while (on_crowd_states(checkcrowd(L, 1), buf, cap, &n) & ON_BUFFER_SMALL);
    int t = out_table(L, 2, "states", (int)(6 * n));
    for (size_t i = 0; i < 6 * n; i++) {
        lua_pushnumber(L, buf[i]);
        lua_rawseti(L, t, (lua_Integer)i + 1);
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 2;
}

/* the n agent ids in buf returned as t, n: t the table at index ti (or a new one; out_table) */
static int push_ids(lua_State *L, int ti, const char *fname, const uint32_t *buf, size_t n)
{
    int t = out_table(L, ti, fname, (int)n);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, buf[i]);
        lua_rawseti(L, t, (lua_Integer)i + 1);
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 2;
}

/* c:ids([t]) -> t, n */
static int l_ids(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    lua_settop(L, 2);
    if (!lua_isnil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    size_t n, cap;
    uint32_t *buf;
    on_crowd_ids(checkcrowd(L, 1), NULL, 0, &n);
    /* again after the allocation, into a buffer as large as the crowd is then (see l_states) */
    do {
        cap = n;
        lua_settop(L, 2);
        buf = lua_newuserdatauv(L, (cap ? cap : 1) * sizeof *buf, 0);
    } while (on_crowd_ids(checkcrowd(L, 1), buf, cap, &n) & ON_BUFFER_SMALL);
    return push_ids(L, 2, "ids", buf, n);
}

/* c:neighbours(id [, t]) -> t, n: the agents id avoided in the last frame */
static int l_neighbours(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "neighbours");
    lua_settop(L, 3);
    if (!lua_isnil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    uint32_t buf[64];
    size_t n;
    noagent(L, on_crowd_neighbours(checkcrowd(L, 1), id, buf, 64, &n), "neighbours", id);
    return push_ids(L, 3, "neighbours", buf, n);
}

/* c:path(id [, t]) -> t, n, seg: the path it follows, {x, y, z} points (none: n = 0); its current leg
 * runs from t[seg] to t[seg + 1] (for debug draw) */
static int l_path(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    uint32_t id = checkid(L, 2, "path");
    lua_settop(L, 3);
    if (!lua_isnil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    size_t n, seg;
    on_status s = on_crowd_path(checkcrowd(L, 1), id, NULL, 0, &n, &seg);
    if (!(s & ON_BUFFER_SMALL)) noagent(L, s, "path", id);
    double *buf = lua_newuserdatauv(L, (n ? n : 1) * 3 * sizeof *buf, 0);
    size_t cap = n;
    on_crowd_path(checkcrowd(L, 1), id, buf, cap, &n, &seg); /* again after the allocation (rule (a)) */
    if (n > cap) n = cap;
    int t = out_table(L, 3, "path", (int)n);
    for (size_t i = 0; i < n; i++) {
        on_lua_pushpoint(L, buf + 3 * i);
        lua_rawseti(L, t, (lua_Integer)i + 1);
    }
    lua_pushinteger(L, (lua_Integer)n);
    lua_pushinteger(L, (lua_Integer)seg + 1);
    return 3;
}

/* c:stats() -> {agents, frames, plans, plan_expansions, waiting, boundary_refreshes, fallbacks, bytes} */
static int l_stats(lua_State *L)
{
    luaL_checkudata(L, 1, CROWD_MT);
    on_crowd_stats st;
    on_crowd_stats_get(checkcrowd(L, 1), &st);
    lua_createtable(L, 0, 8);
    static const char *const keys[] = {"agents", "frames", "plans", "plan_expansions", "waiting",
                                       "boundary_refreshes", "fallbacks", "bytes", NULL};
    const lua_Integer v[] = {st.agents, (lua_Integer)st.frames, (lua_Integer)st.plans,
                             (lua_Integer)st.plan_expansions, (lua_Integer)st.waiting,
                             (lua_Integer)st.boundary_refreshes, (lua_Integer)st.fallbacks, (lua_Integer)st.bytes};
    on_lua_setints(L, keys, v);
    return 1;
}

static int l_len(lua_State *L)
{
    on_crowd_stats st;
    on_crowd_stats_get(checkcrowd(L, 1), &st);
    lua_pushinteger(L, st.agents);
    return 1;
}

static const luaL_Reg methods[] = {{"add", l_add},         {"remove", l_remove},     {"set_goal", l_set_goal},
                                   {"set_path", l_set_path}, {"update", l_update},   {"agent", l_agent},
                                   {"position", l_position}, {"velocity", l_velocity}, {"states", l_states},
                                   {"ids", l_ids},         {"neighbours", l_neighbours}, {"stats", l_stats},
                                   {"path", l_path},
                                   {NULL, NULL}};
static const luaL_Reg funcs[] = {{"new", l_new}, {NULL, NULL}};

int on_lua_crowd_open(lua_State *L)
{
    on_lua_newclass(L, &crowd_class, methods);
    luaL_getmetatable(L, CROWD_MT);
    lua_pushcfunction(L, l_len);
    lua_setfield(L, -2, "__len");
    lua_pop(L, 1);
    luaL_newlib(L, funcs);
    return 1;
}
