/*
 * lua_path.c -- the values a search returns to Lua: the path, an array of {x, y, z} points with the
 * `octonav.path` metatable (length, point_at, points, is_valid, __tostring), and its info table with
 * `octonav.info` (info.valid computed when read, a __tostring for REPLs and `assert(q:find(a, b))`).
 *
 * What a result depends on (its tree userdata and the salts of the tiles it read) is kept out of the
 * tables, in weak-keyed registry tables (results[path] = results[info] = record), so `pairs(info)`
 * and `ipairs(path)` show data only, and a result still keeps its tree alive. RESULTS_SHARDS of them,
 * a result's picked by its table's address: a weak table frees its dead keys' slots only when it is
 * rehashed, and one table for every result of a crowd held ~1,000 of them between the collector's
 * cycles, rehashed every few hundred results into a new 24-48 KB node array; that one allocation was
 * charged to the collector at once (Lua 5.4 paces its work by the bytes allocated: 28-55 thousand
 * units, a sweep of as many objects), a 3-5 ms step inside one navigator's update (issue 31). A shard
 * holds a sixty-fourth of them: its rehash allocates ~1 KB.
 */
#include "lua_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PATH_MT "octonav.path"
#define INFO_MT "octonav.info"
#define RESULTS_KEY "octonav.results"
#define RESULTS_SHARDS 64 /* (a power of two) */

/* Push the weak-keyed table of result records that holds the record of the table at idx (one of the
 * registry's RESULTS_SHARDS, made with the first). */
static void push_results(lua_State *L, int idx)
{
    uintptr_t a = (uintptr_t)lua_topointer(L, idx);
    a ^= a >> 12;
    unsigned k = (unsigned)((a >> 4) * 0x9E3779B1u) >> 26; /* (the address's bits above malloc's alignment) */
    if (!luaL_getsubtable(L, LUA_REGISTRYINDEX, RESULTS_KEY)) {
        lua_createtable(L, 0, 1); /* (the shards' metatable) */
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        for (int i = 1; i <= RESULTS_SHARDS; i++) {
            lua_newtable(L);
            lua_pushvalue(L, -2);
            lua_setmetatable(L, -2);
            lua_rawseti(L, -3, i);
        }
        lua_pop(L, 1);
    }
    lua_rawgeti(L, -1, (lua_Integer)(k & (RESULTS_SHARDS - 1)) + 1);
    lua_remove(L, -2);
}

void on_lua_result_record(lua_State *L, int treeidx, const uint32_t *tiles, const uint32_t *salts, size_t n)
{
    treeidx = lua_absindex(L, treeidx);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, treeidx);
    lua_setfield(L, -2, "tree");
    /* tiles then salts, as the core's on_tree_tiles_unchanged reads them; n = size / 8 */
    uint32_t *v = lua_newuserdatauv(L, 2 * n * sizeof *v, 0);
    if (n) {
        memcpy(v, tiles, n * sizeof *v);
        memcpy(v + n, salts, n * sizeof *v);
    }
    lua_setfield(L, -2, "tiles");
}

/* The record's tiles and salts (pushed: keep it on the stack while using them); *n tiles. */
static const uint32_t *record_tiles(lua_State *L, int rec, size_t *n)
{
    lua_getfield(L, rec, "tiles");
    *n = lua_rawlen(L, -1) / (2 * sizeof(uint32_t));
    return lua_touserdata(L, -1);
}

void on_lua_result_attach(lua_State *L, int idx, int recidx)
{
    idx = lua_absindex(L, idx);
    recidx = lua_absindex(L, recidx);
    push_results(L, idx);
    lua_pushvalue(L, idx);
    lua_pushvalue(L, recidx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

void on_lua_setpath(lua_State *L)
{
    luaL_setmetatable(L, PATH_MT);
}

void on_lua_setinfo(lua_State *L)
{
    luaL_setmetatable(L, INFO_MT);
}

/* Is the result table at idx still valid: its tree open and every tile's salt unchanged? Pushes the
 * answer, nil for a table with no record (a failed search's info). */
static void push_valid(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    push_results(L, idx);
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 2);
        lua_pushnil(L);
        return;
    }
    int rec = lua_gettop(L);
    lua_getfield(L, rec, "tree");
    const on_tree *t = on_lua_testtree(L, -1);
    int ok = t != NULL;
    size_t n;
    const uint32_t *tiles = record_tiles(L, rec, &n);
    if (ok) ok = on_tree_tiles_unchanged(t, tiles, tiles + n, n);
    lua_pop(L, 4);
    lua_pushboolean(L, ok);
}

/* info.valid, computed when read */
static int l_info_index(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "valid") == 0) {
        push_valid(L, 1);
        return 1;
    }
    return 0;
}

/* A string field of the table at idx read raw (a user may have changed it), or NULL. The string
 * stays alive after the pop: the table references it. */
static const char *rawstring(lua_State *L, int idx, const char *k)
{
    lua_pushstring(L, k);
    lua_rawget(L, idx);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    return s;
}

static int rawnumber(lua_State *L, int idx, const char *k, double *out)
{
    lua_pushstring(L, k);
    lua_rawget(L, idx);
    int ok = lua_type(L, -1) == LUA_TNUMBER;
    *out = ok ? (double)lua_tonumber(L, -1) : 0;
    lua_pop(L, 1);
    return ok;
}

/* "octonav.query: found, length 41.2311, 120 expansions" / "octonav.query: failed (unreachable), 3
 * expansions": what `assert(q:find(a, b))` shows in the standalone interpreter. */
static int l_info_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    char buf[320];
    size_t n = 0;
    const char *status = rawstring(L, 1, "status"), *reason = rawstring(L, 1, "reason");
    n += (size_t)snprintf(buf, sizeof buf, "octonav.query: %.40s", status ? status : "?");
    if (reason) n += (size_t)snprintf(buf + n, sizeof buf - n, " (%.60s", reason);
    lua_pushliteral(L, "tile");
    if (reason && lua_rawget(L, 1) == LUA_TTABLE) {
        lua_Integer ijk[3];
        for (int k = 0; k < 3; k++) {
            lua_rawgeti(L, -1, k + 1);
            ijk[k] = lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
        n += (size_t)snprintf(buf + n, sizeof buf - n, ", tile {%lld, %lld, %lld}", (long long)ijk[0],
                              (long long)ijk[1], (long long)ijk[2]);
    }
    lua_pop(L, 1);
    if (reason) n += (size_t)snprintf(buf + n, sizeof buf - n, ")");
    double v;
    if (rawnumber(L, 1, "length", &v)) n += (size_t)snprintf(buf + n, sizeof buf - n, ", length %.6g", v);
    if (rawnumber(L, 1, "expansions", &v)) snprintf(buf + n, sizeof buf - n, ", %.15g expansions", v);
    lua_pushstring(L, buf);
    return 1;
}

/* Point i (1-based) of the path at idx into out; raises when it is not a point of 3 numbers. */
static void get_point(lua_State *L, int idx, lua_Integer i, double out[3])
{
    if (lua_rawgeti(L, idx, i) != LUA_TTABLE) luaL_error(L, "path[%I] is not a point {x, y, z}", i);
    for (int k = 0; k < 3; k++) {
        int isnum;
        lua_rawgeti(L, -1, k + 1);
        out[k] = (double)lua_tonumberx(L, -1, &isnum);
        lua_pop(L, 1);
        if (!isnum) luaL_error(L, "path[%I] is not a point {x, y, z}", i);
    }
    lua_pop(L, 1);
}

static double seg_len(const double a[3], const double b[3])
{
    double dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* path:length() -> the sum of its segments' lengths (the same sum, in the same order, as info.length) */
static int l_path_length(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    double len = 0, a[3], b[3];
    if (n > 0) get_point(L, 1, 1, a);
    for (lua_Integer i = 2; i <= n; i++) {
        get_point(L, 1, i, b);
        len += seg_len(a, b);
        memcpy(a, b, sizeof a);
    }
    lua_pushnumber(L, len);
    return 1;
}

/* path:point_at(d) -> point, i: the point at distance d along the path (d clamped to [0, length]) and
 * the index of the last path point at or before it. A vertex reached exactly is returned exactly: the
 * walk moves on to the next segment at a segment's end, where t = 0. */
static int l_path_point_at(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    double d = luaL_checknumber(L, 2);
    if (isnan(d)) luaL_argerror(L, 2, "distance must not be NaN");
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    if (n < 1) luaL_argerror(L, 1, "the path has no points");
    double a[3], b[3], acc = 0;
    get_point(L, 1, 1, a);
    lua_Integer at = 1;
    for (lua_Integer i = 2; i <= n && d > acc; i++) {
        get_point(L, 1, i, b);
        double l = seg_len(a, b);
        if (d < acc + l) {
            double t = (d - acc) / l;
            for (int k = 0; k < 3; k++) a[k] += t * (b[k] - a[k]);
            break;
        }
        acc += l;
        memcpy(a, b, sizeof a);
        at = i;
    }
    on_lua_pushpoint(L, a);
    lua_pushinteger(L, at);
    return 2;
}

/* The iterator of path:points(): state = the path, control = index; yields i, point, distance along
 * the path to it (the distance is carried in upvalue 1, so a loop is linear, not quadratic). */
static int points_next(lua_State *L)
{
    lua_Integer i = luaL_checkinteger(L, 2) + 1;
    if (i > (lua_Integer)lua_rawlen(L, 1)) return 0;
    double p[3];
    get_point(L, 1, i, p);
    double d = 0;
    if (i > 1) {
        double q[3];
        get_point(L, 1, i - 1, q);
        d = lua_tonumber(L, lua_upvalueindex(1)) + seg_len(q, p);
    }
    lua_pushnumber(L, d);
    lua_replace(L, lua_upvalueindex(1));
    lua_pushinteger(L, i);
    lua_rawgeti(L, 1, i);
    lua_pushnumber(L, d);
    return 3;
}

/* for i, p, d in path:points() do ... end: every point with its distance from the start. */
static int l_path_points(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushnumber(L, 0);
    lua_pushcclosure(L, points_next, 1);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

/* path:tiles() -> the linear indices of the tiles the path depends on (the tiles its search read;
 * a streamer keeps them loaded while an agent follows the path); {} for a path not made by a search. */
static int l_path_tiles(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    push_results(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, 1);
    if (lua_rawget(L, -3) != LUA_TTABLE) {
        lua_pop(L, 1);
        return 1;
    }
    size_t n;
    const uint32_t *tiles = record_tiles(L, lua_gettop(L), &n);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, tiles[i]);
        lua_rawseti(L, -4, (lua_Integer)i + 1);
    }
    lua_pop(L, 2);
    return 1;
}

/* path:is_valid() */
static int l_path_is_valid(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    push_valid(L, 1);
    lua_pushboolean(L, lua_toboolean(L, -1));
    return 1;
}

/* "octonav.path: 12 points, length 41.2" */
static int l_path_tostring(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    lua_pushcfunction(L, l_path_length);
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) { /* a point was changed into something else */
        lua_pushfstring(L, "octonav.path: %I points", n);
        return 1;
    }
    char buf[96];
    snprintf(buf, sizeof buf, "octonav.path: %lld points, length %.6g", (long long)n, (double)lua_tonumber(L, -1));
    lua_pushstring(L, buf);
    return 1;
}

int on_lua_path_open(lua_State *L)
{
    static const luaL_Reg path_methods[] = {{"length", l_path_length},     {"point_at", l_path_point_at},
                                            {"points", l_path_points},     {"is_valid", l_path_is_valid},
                                            {"tiles", l_path_tiles},
                                            {NULL, NULL}};
    static const luaL_Reg path_meta[] = {{"__tostring", l_path_tostring}, {NULL, NULL}};
    static const luaL_Reg info_meta[] = {{"__index", l_info_index}, {"__tostring", l_info_tostring}, {NULL, NULL}};
    luaL_newmetatable(L, PATH_MT);
    luaL_setfuncs(L, path_meta, 0);
    luaL_newlib(L, path_methods);
    lua_setfield(L, -2, "__index");
    luaL_newmetatable(L, INFO_MT);
    luaL_setfuncs(L, info_meta, 0);
    lua_pop(L, 2);
    return 0;
}
