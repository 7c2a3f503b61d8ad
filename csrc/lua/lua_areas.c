/*
 * lua_areas.c -- area costs in Lua (areas.c; octonav.h, "area costs"): the list of areas that
 * q:find / q:start take as opts.areas, and the tree's own areas, added to the tree class's methods by
 * on_lua_areas_open (called after on_lua_tree_open):
 *   tree:set_areas(list)  -> nothing (raises on a bad list; {} or nil clears)
 *   tree:areas()          -> list
 * An area is { min = {x, y, z}, max = {x, y, z}, cost = c } (c >= 1, default 1) or
 * { min = ..., max = ..., exclude = true } in world units.
 */
#include "lua_util.h"

#include <math.h>
#include <string.h>

/* (declared for lua_query.c there, until lua_util.h lists them) */
on_area *on_lua_checkareas(lua_State *L, int idx, const char *what, size_t *n);
int on_lua_areas_open(lua_State *L);

static const char *const area_fields[] = {"min", "max", "cost", "exclude", NULL};

/* Field `key` of the area table on top as a point; raises naming what[i].key. */
static void area_point(lua_State *L, const char *what, lua_Integer i, const char *key, double out[3])
{
    int t = lua_getfield(L, -1, key);
    int ok = t == LUA_TTABLE;
    for (int k = 0; ok && k < 3; k++) {
        int isnum = 0;
        lua_geti(L, -1, k + 1);
        out[k] = (double)lua_tonumberx(L, -1, &isnum);
        lua_pop(L, 1);
        ok = isnum && isfinite(out[k]);
    }
    if (!ok) luaL_error(L, "%s[%d].%s must be a point {x, y, z} of finite numbers", what, (int)i, key);
    lua_pop(L, 1);
}

/* The list of areas at idx (nil: none) as an array in a Lua buffer pushed on the stack (it lives as
 * long as the caller keeps it there); *n gets the count. Errors name `what` ("option 'areas'"). */
on_area *on_lua_checkareas(lua_State *L, int idx, const char *what, size_t *n)
{
    idx = lua_absindex(L, idx);
    *n = 0;
    if (lua_isnoneornil(L, idx)) return lua_newuserdatauv(L, sizeof(on_area), 0);
    if (lua_type(L, idx) != LUA_TTABLE) luaL_error(L, "%s must be a list of areas", what);
    lua_Integer len = luaL_len(L, idx);
    if (len < 0 || len > (1 << 20)) luaL_error(L, "%s must be a list of at most 2^20 areas", what);
    on_area *a = lua_newuserdatauv(L, (size_t)(len ? len : 1) * sizeof *a, 0);
    for (lua_Integer i = 1; i <= len; i++) {
        on_area *x = &a[i - 1];
        memset(x, 0, sizeof *x);
        if (lua_geti(L, idx, i) != LUA_TTABLE) luaL_error(L, "%s[%d] must be a table", what, (int)i);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            int known = 0;
            if (lua_type(L, -2) == LUA_TSTRING)
                for (const char *const *f = area_fields; *f; f++) known |= strcmp(*f, lua_tostring(L, -2)) == 0;
            if (!known) luaL_error(L, "%s[%d]: unknown field '%s'", what, (int)i, luaL_tolstring(L, -2, NULL));
            lua_pop(L, 1);
        }
        area_point(L, what, i, "min", x->min);
        area_point(L, what, i, "max", x->max);
        for (int k = 0; k < 3; k++)
            if (!(x->min[k] < x->max[k])) luaL_error(L, "%s[%d]: min must be below max on every axis", what, (int)i);
        int t = lua_getfield(L, -1, "exclude");
        if (t != LUA_TNIL && t != LUA_TBOOLEAN) luaL_error(L, "%s[%d].exclude must be a boolean", what, (int)i);
        x->exclude = lua_toboolean(L, -1);
        lua_pop(L, 1);
        t = lua_getfield(L, -1, "cost");
        if (t != LUA_TNIL && x->exclude) luaL_error(L, "%s[%d]: cost and exclude = true together", what, (int)i);
        int isnum = 1;
        x->cost = t == LUA_TNIL ? 1 : (double)lua_tonumberx(L, -1, &isnum);
        if (!isnum || !isfinite(x->cost) || x->cost < 1)
            luaL_error(L, "%s[%d].cost must be a finite number >= 1", what, (int)i);
        lua_pop(L, 2);
    }
    *n = (size_t)len;
    return a;
}

/* tree:set_areas(list) */
static int l_set_areas(lua_State *L)
{
    luaL_checkudata(L, 1, ON_TREE_MT);
    size_t n;
    on_area *a = on_lua_checkareas(L, 2, "set_areas: areas", &n);
    on_tree *t = on_lua_checktree_idle(L, 1, "set_areas"); /* after the list (lua_util.h, rule (a)) */
    on_status s = on_tree_set_areas(t, a, n);
    if (!on_ok(s)) return luaL_error(L, "set_areas: %s", on_status_string(s));
    return 0;
}

/* (pinned: the tables are built from the tree's own list, rule (b)) */
static int areas_body(lua_State *L, void *ctx)
{
    const on_tree *t = ctx;
    const on_area *a;
    size_t n = on_tree_areas(t, &a);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 3);
        on_lua_pushpoint(L, a[i].min);
        lua_setfield(L, -2, "min");
        on_lua_pushpoint(L, a[i].max);
        lua_setfield(L, -2, "max");
        if (a[i].exclude) lua_pushboolean(L, 1);
        else lua_pushnumber(L, a[i].cost);
        lua_setfield(L, -2, a[i].exclude ? "exclude" : "cost");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* tree:areas() -> list */
static int l_areas(lua_State *L)
{
    on_lhandle *h = on_lua_checkhandle(L, 1, &on_lua_tree_class);
    return on_lua_pinned(L, &h, 1, areas_body, h->p);
}

int on_lua_areas_open(lua_State *L)
{
    static const luaL_Reg methods[] = {{"set_areas", l_set_areas}, {"areas", l_areas}, {NULL, NULL}};
    on_lua_addmethods(L, ON_TREE_MT, methods);
    return 0;
}
