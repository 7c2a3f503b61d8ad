/*
 * lua_points.c -- the tree's point queries (pointquery.c and the tree's nearest free point), added to
 * the tree class's methods by on_lua_points_open (called after on_lua_tree_open):
 *   tree:reachable(a, b)                      -> true | false, "unreachable" | nil, reason
 *   tree:random_free([seed | rng] [, opts])   -> point, state | points, state | nil, reason
 *   tree:nearest_free(p [, max_distance])     -> point | nil, reason
 * The free space's components are built on the first reachable() and kept beside the tree (a weak
 * table keyed by the tree userdata) until the tree changes (its revision), then built again.
 */
#include "lua_util.h"

#include <math.h>
#include <string.h>

static void components_destroy(on_lhandle *h) { on_components_destroy(h->p); }

static void components_describe(lua_State *L, on_lhandle *h)
{
    size_t comps, cells, bytes;
    on_components_info(h->p, &comps, &cells, &bytes);
    lua_pushfstring(L, "octonav.components: %d components over %d free cells, %d bytes", (int)comps, (int)cells,
                    (int)bytes);
}

static const on_lclass components_class = {"octonav.components", "components in use", components_destroy,
                                           components_describe};

/* The registry's weak-keyed cache: tree userdata -> components userdata. */
static const char *const CACHE = "octonav.components.cache";

static on_components *components_for(lua_State *L, int tidx, on_tree *t, int rebuild)
{
    tidx = lua_absindex(L, tidx);
    if (luaL_getsubtable(L, LUA_REGISTRYINDEX, CACHE) == 0) {
        lua_newtable(L);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
    }
    lua_pushvalue(L, tidx);
    lua_rawget(L, -2);
    on_lhandle *h = on_lua_testhandle(L, -1, &components_class);
    if (h && !rebuild) {
        on_components *m = h->p;
        lua_pop(L, 2);
        return m;
    }
    lua_pop(L, 1);
    h = on_lua_newhandle(L, &components_class, sizeof *h, 0);
    on_components *m;
    on_status s = on_components_build(t, &m);
    if (!on_ok(s)) luaL_error(L, "reachable: %s", on_status_string(s));
    h->p = m;
    lua_pushvalue(L, tidx);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    lua_pop(L, 2);
    return m;
}

/* tree:reachable(a, b) -> true | false, "unreachable" | nil, "a: blocked" (or outside): from the free
 * space's components, no search. */
typedef struct reach_ctx {
    on_tree *t;
    double a[3], b[3];
} reach_ctx;

/* (pinned: components_for allocates, rule (b)) */
static int reachable_body(lua_State *L, void *ctx)
{
    const reach_ctx *x = ctx;
    on_tree *t = x->t;
    const double *a = x->a, *b = x->b;
    on_components *m = components_for(L, 1, t, 0);
    on_status s = on_components_reachable(m, t, a, b);
    if (s & ON_STALE) {
        m = components_for(L, 1, t, 1);
        s = on_components_reachable(m, t, a, b);
    }
    if (on_ok(s)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    if (s & ON_UNREACHABLE) {
        lua_pushboolean(L, 0);
        lua_pushliteral(L, "unreachable");
        return 2;
    }
    /* which end: locate a again (cheap) */
    on_cell c;
    int a_bad = !on_ok(on_tree_locate(t, a, &c));
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", a_bad ? "a" : "b", on_lua_reason(s, on_lua_place_reasons));
    return 2;
}

static int l_reachable(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    reach_ctx x;
    on_lua_checkpoint(L, 2, "a", x.a);
    on_lua_checkpoint(L, 3, "b", x.b);
    lua_settop(L, 1); /* (the body reads the tree at 1) */
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    x.t = h->p;
    return on_lua_pinned(L, &h, 1, reachable_body, &x);
}

static const char *const random_opts[] = {"center", "radius", "count", NULL};

/* tree:random_free([seed | rng] [, { center = p, radius = r, count = n }]) -> point, state (count
 * absent) or { points }, state | nil, reason. seed: an integer (the same seed gives the same points;
 * pass the returned state on for the next ones); rng: a function returning numbers in [0, 1), called
 * once for a seed; absent: seed 0. */
typedef struct random_ctx {
    on_tree *t;
    uint64_t state;
    double centre[3], radius;
    int has_centre;
    lua_Integer count;
} random_ctx;

/* (pinned: the points' buffer and the tables are made while the tree is used, rule (b)) */
static int random_free_body(lua_State *L, void *ctx)
{
    random_ctx *x = ctx;
    lua_Integer count = x->count;
    size_t want = count ? (size_t)count : 1;
    double *out = lua_newuserdatauv(L, want * 3 * sizeof *out, 0);
    size_t got = 0;
    on_status s = on_tree_random_free(x->t, &x->state, x->has_centre ? x->centre : NULL, x->radius, want, out, &got);
    if (!on_ok(s)) {
        if (s & ON_NO_MEMORY) return luaL_error(L, "random_free: out of memory");
        lua_pushnil(L);
        lua_pushstring(L, (s & ON_UNREACHABLE) ? "no free space" : on_status_string(s));
        return 2;
    }
    if (count == 0) {
        on_lua_pushpoint(L, out);
    } else {
        lua_createtable(L, (int)got, 0);
        for (size_t i = 0; i < got; i++) {
            on_lua_pushpoint(L, out + 3 * i);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    }
#if LUA_VERSION_NUM < 503
    /* before 5.3 a number is a double: the state's low 53 bits, which pass back unchanged (the next
     * points then follow from them, not from the whole 64-bit state as on 5.3+; issue 34) */
    lua_pushinteger(L, (lua_Integer)(x->state & ((UINT64_C(1) << 53) - 1)));
#else
    lua_pushinteger(L, (lua_Integer)x->state);
#endif
    return 2;
}

static int l_random_free(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    random_ctx x = {NULL, 0, {0, 0, 0}, 0, 0, 0};
    if (lua_isinteger(L, 2)) {
        x.state = (uint64_t)lua_tointeger(L, 2);
    } else if (lua_isfunction(L, 2)) {
        lua_pushvalue(L, 2);
        lua_call(L, 0, 1);
        int ok;
        lua_Number r = lua_tonumberx(L, -1, &ok);
        if (!ok || !(r >= 0 && r < 1)) luaL_argerror(L, 2, "rng must return a number in [0, 1)");
        x.state = (uint64_t)(r * 9007199254740992.0);
        lua_pop(L, 1);
    } else if (!lua_isnoneornil(L, 2)) {
        luaL_argerror(L, 2, "integer seed or rng function expected");
    }
    on_lua_checkopts(L, 3, "random_free", random_opts);
    if (!lua_isnoneornil(L, 3) && lua_getfield(L, 3, "center") != LUA_TNIL) {
        on_lua_checkpoint_arg(L, -1, 3, "center", x.centre);
        x.has_centre = 1;
    }
    if (!lua_isnoneornil(L, 3)) lua_settop(L, 3);
    x.radius = on_lua_optnumber(L, 3, "radius", 0);
    if (x.has_centre && !(x.radius > 0 && isfinite(x.radius)))
        return luaL_error(L, "random_free: option 'radius' must be a positive number with 'center'");
    if (!x.has_centre && x.radius != 0) return luaL_error(L, "random_free: option 'radius' needs 'center'");
    x.count = on_lua_optinteger(L, 3, "count", 0);
    if (x.count < 0 || x.count > 1000000) return luaL_error(L, "random_free: option 'count' must be 0..1000000");
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class); /* after the arguments (rule (a)) */
    x.t = h->p;
    return on_lua_pinned(L, &h, 1, random_free_body, &x);
}

/* tree:nearest_free(p [, max_distance]) -> point | nil, reason: p itself when free, else the nearest
 * free point found within max_distance (world units; default 64 leaves). */
static int l_nearest_free(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    double p[3], out[3];
    on_lua_checkpoint(L, 2, "p", p);
    int given = !lua_isnoneornil(L, 3);
    double d = given ? luaL_checknumber(L, 3) : 0;
    on_tree *t = on_lua_checktree(L, 1);
    double scale = on_tree_get_params(t)->scale;
    if (!given) d = 64 * scale;
    if (!(d >= 0) || !isfinite(d)) luaL_argerror(L, 3, "max_distance must be a finite number >= 0");
    on_cell c;
    if (on_ok(on_tree_locate(t, p, &c))) {
        lua_settop(L, 2);
        return 1; /* free already: p itself */
    }
    on_status s = on_tree_nearest_free(t, p, ceil(d / scale), out);
    /* the lattice search looks in a cube of that many leaves: its corners lie farther than d */
    double dd = sqrt((out[0] - p[0]) * (out[0] - p[0]) + (out[1] - p[1]) * (out[1] - p[1]) +
                     (out[2] - p[2]) * (out[2] - p[2]));
    if (on_ok(s) && dd > d) s = ON_FAILURE | ON_UNREACHABLE;
    if (!on_ok(s)) {
        lua_pushnil(L);
        lua_pushstring(L, (s & ON_OUTSIDE) ? "outside" : "no free point within max_distance");
        return 2;
    }
    on_lua_pushpoint(L, out);
    return 1;
}

int on_lua_points_open(lua_State *L)
{
    static const luaL_Reg none[] = {{NULL, NULL}};
    static const luaL_Reg methods[] = {
        {"reachable", l_reachable}, {"random_free", l_random_free}, {"nearest_free", l_nearest_free}, {NULL, NULL}};
    on_lua_newclass(L, &components_class, none);
    on_lua_addmethods(L, ON_TREE_MT, methods);
    return 0;
}
